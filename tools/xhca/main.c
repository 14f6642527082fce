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

#define USAGE_TOP                                                                          \
	"Usage: xhca [-j|--json] [-v] -i|--interface IFNAME COMMAND ...\n"                  \
	"Client of xhcad, the daemon of the xhca software RoCEv2 HCA.\n"                    \
	"Commands:\n"                                                                       \
	"  status                        the daemon, its program and maps\n"               \
	"  qp create|modify|destroy|show queue pairs (see xhca qp --help)\n"               \
	"  stats [--qp QPN] [--reset]    reason counters of xhca_rx and xhcad\n"           \
	"  flowq show|set                flow queues (see xhca flowq --help)\n"            \
	"  mr reg|dereg|show|read        memory regions (see xhca mr --help)\n"            \
	"  mcast create|destroy|attach|detach|show   multicast groups (xhca mcast --help)\n" \
	"  cq create|destroy|poll|show   completion queues (see xhca cq --help)\n"        \
	"  filter add|del|show           proxy QP filters (see xhca filter --help)\n"      \
	"  proxy show|pause|resume       the proxy thread (see xhca proxy --help)\n"       \
	"  exec [--] PROGRAM [ARGS...]   run a libibverbs program on xhca (xhca exec --help)\n" \
	"Options:\n"                                                                        \
	"  -i, --interface IFNAME        the interface xhcad serves\n"                     \
	"  -j, --json                    one JSON object on stdout\n"                      \
	"  -v, --verbose                 more detail (more columns; twice: protocol trace)\n" \
	"  -h, --help                    this text (also after any command)\n"            \
	"Numbers are decimal or 0x hex. Exit codes: 0 ok, 1 failed, 2 bad usage.\n"


static const struct cmd top_cmds[] = {
	{ "status", do_status, NULL, status_usage },
	{ "qp", NULL, qp_cmds, qp_usage },
	{ "stats", do_stats, NULL, stats_usage },
	{ "flowq", NULL, flowq_cmds, flowq_usage },
	{ "mr", NULL, mr_cmds, mr_usage },
	{ "mcast", NULL, mcast_cmds, mcast_usage },
	{ "cq", NULL, cq_cmds, cq_usage },
	{ "filter", NULL, filter_cmds, filter_usage },
	{ "proxy", NULL, proxy_cmds, proxy_usage },
	{ "exec", do_exec, NULL, exec_usage },
	{ NULL, NULL, NULL, NULL },
};

static int is_help(const char *s)
{
	return !strcmp(s, "-h") || !strcmp(s, "--help") || !strcmp(s, "help");
}

/* path: the words that led here ("qp"), for messages. A group without a
 * subcommand (or with only options) runs its first entry, as "ip link" does. */
static int dispatch(const char *path, const char *usage, const struct cmd *cmds, int argc,
		    char **argv)
{
	const struct cmd *c = NULL;
	char sub[64];
	int i;

	if (argc && is_help(argv[0])) {
		fputs(usage, stdout);
		return EXIT_OK;
	}
	if (!argc || argv[0][0] == '-') {
		if (!path)
			return usage_err(NULL, "no command given; use status, qp, stats, flowq, mr, "
					 "mcast, cq, filter, proxy or exec (see xhca --help)");
		c = &cmds[0];
	} else {
		for (c = cmds; c->name; c++)
			if (!strcmp(c->name, argv[0]))
				break;
		if (!c->name) {
			if (!path)
				return usage_err(NULL, "unknown command '%s'; use status, qp, stats, "
						 "flowq, mr, mcast, cq, filter, proxy or exec (see xhca "
						 "--help)",
						 argv[0]);
			if (!strcmp(path, "flowq"))
				return usage_err(path, "unknown command '%s'; use show or set (see xhca "
						 "flowq --help)", argv[0]);
			if (!strcmp(path, "mr"))
				return usage_err(path, "unknown command '%s'; use reg, dereg, show or "
						 "read (see xhca mr --help)", argv[0]);
			if (!strcmp(path, "mcast"))
				return usage_err(path, "unknown command '%s'; use create, destroy, "
						 "attach, detach or show (see xhca mcast --help)",
						 argv[0]);
			if (!strcmp(path, "cq"))
				return usage_err(path, "unknown command '%s'; use create, destroy, poll "
						 "or show (see xhca cq --help)", argv[0]);
			if (!strcmp(path, "filter"))
				return usage_err(path, "unknown command '%s'; use add, del or show "
						 "(see xhca filter --help)", argv[0]);
			if (!strcmp(path, "proxy"))
				return usage_err(path, "unknown command '%s'; use show, pause or resume "
						 "(see xhca proxy --help)", argv[0]);
			return usage_err(path, "unknown command '%s'; use create, modify, destroy or "
					 "show (see xhca %s --help)", argv[0], path);
		}
		argc--;
		argv++;
	}
	snprintf(sub, sizeof(sub), "%s%s%s", path ? path : "", path ? " " : "", c->name);
	if (c->sub)
		return dispatch(sub, c->usage, c->sub, argc, argv);
	/* --help anywhere wins over everything else, as in ip and bpftool. */
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(c->usage, stdout);
			return EXIT_OK;
		}
	}
	return c->fn(argc, argv);
}

static int set_ifname(const char *s)
{
	if (!*s)
		return usage_err(NULL, "-i needs an interface name; see ip link");
	if (strlen(s) >= IFNAMSIZ)
		return usage_err(NULL, "interface name '%s' is longer than %d characters; use the "
				 "name shown by ip link", s, IFNAMSIZ - 1);
	if (strpbrk(s, "/: \t\n") || !strcmp(s, ".") || !strcmp(s, ".."))
		return usage_err(NULL, "'%s' is not a valid interface name; use the name shown by "
				 "ip link", s);
	ifname = s;
	return 0;
}

int main(int argc, char **argv)
{
	int i, rc;

	xhca_log_init("xhca", XHCA_LOG_WARN);
	/* Global options, up to the first word that is not one. */
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
			json = 1;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			verbose++;
		} else if (!strcmp(a, "-vv")) {
			verbose += 2;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(USAGE_TOP, stdout);
			return EXIT_OK;
		} else if (!strcmp(a, "-i") || !strcmp(a, "--interface")) {
			if (i + 1 >= argc)
				return usage_err(NULL, "%s needs an interface name; e.g. xhca -i eth0 "
						 "status", a);
			rc = set_ifname(argv[++i]);
			if (rc)
				return rc;
		} else if (!strncmp(a, "--interface=", 12)) {
			rc = set_ifname(a + 12);
			if (rc)
				return rc;
		} else if (!strncmp(a, "-i", 2)) {
			rc = set_ifname(a + 2);
			if (rc)
				return rc;
		} else if (a[0] == '-' && a[1]) {
			return usage_err(NULL, "unknown option '%s'; see xhca --help", a);
		} else {
			break;
		}
	}
	xhca_log_init("xhca", verbose);
	return dispatch(NULL, USAGE_TOP, top_cmds, argc - i, argv + i);
}
