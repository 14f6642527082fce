/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca: command line client of xhcad's control socket, in the style of ip and
 * bpftool. Every value is checked here before a request is sent, so a typo
 * never reaches the daemon; what only the daemon can know (a QPN that exists,
 * a full table, a state transition) comes back as its own message.
 *
 * Exit codes: 0 ok, 1 the request failed, 2 bad usage (nothing was sent).
 */
#include "cli.h"

/* The top level: objects, and the commands that are one of their own. */
static const struct cmd top_cmds[] = {
	{ .name = "status", .fn = do_status, .summary = "the daemon, its program and maps",
	  .text = status_text },
	{ .name = "qp", .sub = qp_cmds, .summary = "queue pairs", .text = qp_text },
	{ .name = "stats", .fn = do_stats, .summary = "reason counters of xhca_rx and xhcad",
	  .text = stats_text, .opts = stats_opts },
	{ .name = "flowq", .sub = flowq_cmds, .summary = "flow queues", .text = flowq_text },
	{ .name = "mr", .sub = mr_cmds, .summary = "memory regions", .text = mr_text },
	{ .name = "mcast", .sub = mcast_cmds, .summary = "multicast groups", .text = mcast_text },
	{ .name = "cq", .sub = cq_cmds, .summary = "completion queues", .text = cq_text },
	{ .name = "filter", .sub = filter_cmds, .summary = "proxy QP filters",
	  .text = filter_text },
	{ .name = "proxy", .sub = proxy_cmds, .summary = "the proxy thread", .text = proxy_text },
	{ .name = "exec", .fn = do_exec, .args = "[--] PROGRAM [ARGS...]",
	  .summary = "run a libibverbs program on xhca", .text = exec_text, .opts = exec_opts,
	  .flags = CMD_OPTS_FIRST | CMD_ANY_IF },
	{ 0 },
};

/* xhca itself: its options are the global ones, up to the command. */
static const struct cmd top = {
	.sub = top_cmds,
	.text = "Client of xhcad, the daemon of the xhca software RoCEv2 HCA.\n"
		"Numbers are decimal or 0x hex. Exit codes: 0 ok, 1 failed, 2 bad usage.",
	.opts = global_opts,
	.flags = CMD_OPTS_FIRST | CMD_NO_DEFAULT,
};

static int is_help(const char *s)
{
	return !strcmp(s, "-h") || !strcmp(s, "--help") || !strcmp(s, "help");
}

/* An object's command named by argv[0] (*named: 1), or, none named, its
 * default (*named: 0); NULL after saying what is wrong. path: the object's
 * words, NULL at the top. */
static const struct cmd *select_cmd(const char *path, const struct cmd *obj, int argc,
				    char **argv, int *named)
{
	const struct cmd *c;
	char names[256];

	*named = argc && argv[0][0] != '-';
	/* A group without a subcommand (or with only options) runs its first
	 * entry, as "ip link" does. */
	if (!*named && !(obj->flags & CMD_NO_DEFAULT))
		return obj->sub;
	c = *named ? cmd_find(obj->sub, argv[0]) : NULL;
	if (c)
		return c;
	cmd_names(obj->sub, names, sizeof(names));
	if (*named)
		usage_err(path, "unknown command '%s'; use %s (see xhca %s%s--help)", argv[0],
			  names, path ? path : "", path ? " " : "");
	else
		usage_err(path, "no command given; use %s (see xhca %s%s--help)", names,
			  path ? path : "", path ? " " : "");
	return NULL;
}

static int dispatch(const char *path, const struct cmd *obj, int argc, char **argv)
{
	const struct cmd *c;
	char sub[64];
	int i, named;

	if (argc && is_help(argv[0])) {
		cmd_help(stdout, path, obj);
		return EXIT_OK;
	}
	c = select_cmd(path, obj, argc, argv, &named);
	if (!c)
		return EXIT_USAGE;
	argc -= named;
	argv += named;
	snprintf(sub, sizeof(sub), "%s%s%s", path ? path : "", path ? " " : "", c->name);
	if (c->sub)
		return dispatch(sub, c, argc, argv);
	/* --help anywhere wins over everything else, as in ip and bpftool. */
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			cmd_help(stdout, sub, c);
			return EXIT_OK;
		}
	}
	return c->fn(&(struct call){ .op = sub, .cmd = c }, argc, argv);
}

/* The global options before the command: -h answers at once. */
#define HELP_SHOWN (-1)
static int top_opt(void *ctx, int id, const char *name, const char *arg)
{
	if (id != 'h')
		return global_opt(ctx, id, name, arg);
	cmd_help(stdout, NULL, &top);
	return HELP_SHOWN;
}

int main(int argc, char **argv)
{
	char **words = calloc(argc > 1 ? argc : 1, sizeof(*words));
	int n = 0, rc;

	xhca_log_init("xhca", XHCA_LOG_WARN);
	if (!words) {
		pr_warn("out of memory\n");
		return EXIT_FAIL;
	}
	rc = parse_args(&(struct call){ .cmd = &top }, argc - 1, argv + 1, top_opt, NULL, words,
			argc, &n);
	if (!rc) {
		xhca_log_init("xhca", verbose);
		rc = dispatch(NULL, &top, n, words);
	}
	free(words);
	return rc == HELP_SHOWN ? EXIT_OK : rc;
}
