/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-rctest: two xhca hosts talking through libxhca only. One process
 * opens a session with each xhcad (their control sockets are files, seen
 * from any network namespace), connects a QP pair across the veth and runs
 * a case, checking every byte on both sides. Prints "ok - NAME" /
 * "not ok - NAME" lines (tests/run.sh counts them); exits 1 on a failure,
 * 2 for bad usage.
 *
 *   xhca-rctest CASE IF_A IP_A IF_B IP_B [ARGS]
 *   xhca-rctest --list      the cases (cases[] below), their ARGS, what each does
 *
 * Each case's file says more of what it does (rctest.h: which file).
 */
#define CHECK_MAIN
#include "rctest.h"

/* Each case: its ARGS (argc, argv: those after IP_B) checked, then the
 * case run on the two sides; -1 for ARGS it does not take. */
static int do_ops(struct side *a, struct side *b, int argc, char **argv)
{
	if (argc < 3)
		return -1;
	scen_ops(a, b, argc, argv);
	return 0;
}

static int do_ud2(struct side *a, struct side *b, int argc, char **argv)
{
	__u8 ip[16];

	if (argc != 2 || xhca_ip_parse(argv[0], ip) < 0 || atoi(argv[1]) <= 0)
		return -1;
	scen_ud2(a, b, argv[0], atoi(argv[1]));
	return 0;
}

static int do_errors(struct side *a, struct side *b, int argc, char **argv)
{
	scen_errors(a, b);
	return 0;
}

static int do_post(struct side *a, struct side *b, int argc, char **argv)
{
	scen_post(a, b);
	return 0;
}

static int do_more(struct side *a, struct side *b, int argc, char **argv)
{
	if (argc > 0 && strcmp(argv[0], "4k"))
		return -1;
	mcast_4k = argc > 0;
	scen_more(a, b);
	return 0;
}

static int do_paths(struct side *a, struct side *b, int argc, char **argv)
{
	scen_paths(a, b);
	return 0;
}

static int do_restart(struct side *a, struct side *b, int argc, char **argv)
{
	scen_restart(a, b);
	return 0;
}

static int do_stress(struct side *a, struct side *b, int argc, char **argv)
{
	if (argc < 3 || atol(argv[0]) <= 0 || atol(argv[0]) > 250 || atol(argv[1]) <= 0)
		return -1;
	scen_stress(a, b, (size_t)atol(argv[0]), (size_t)atol(argv[1]), (__u32)atoi(argv[2]));
	return 0;
}

static int do_credits(struct side *a, struct side *b, int argc, char **argv)
{
	scen_credits(a, b);
	return 0;
}

static int do_probe(struct side *a, struct side *b, int argc, char **argv)
{
	scen_credit_probe(a, b);
	return 0;
}

static const struct rct_case {
	const char *name;
	int (*fn)(struct side *a, struct side *b, int argc, char **argv);
	const char *args;	/* what it takes after IP_B */
	const char *desc;
} cases[] = {
	{ "ops", do_ops, "TYPE MTU SIZE...",
	  "every operation TYPE (rc, uc, ud) carries, at path MTU MTU, for each SIZE, both ways" },
	{ "ud2", do_ud2, "IP2 N",
	  "a UD QP's N SENDs to B at IP_B, N to B's IP2, N to IP_B again, in one list" },
	{ "errors", do_errors, "",
	  "NAKs and error completions on RC: access, invalid request, RNR, retries, flush" },
	{ "post", do_post, "", "xhca_post_send's refusals" },
	{ "more", do_more, "[4k]",
	  "scatter lists, unsignaled, SEND with invalidate, a raw bad request, a full send CQ, "
	  "UD multicast (4k: 4096 B at path MTU 4096 too)" },
	{ "paths", do_paths, "",
	  "FENCE, SOLICITED, max_rd_atomic, BAD_RESP_ERR, a READ's buffer freed; pauses for "
	  "the test (a line on stdin each)" },
	{ "restart", do_restart, "",
	  "every RC operation both ways across restarts of xhcad on A by the test (pauses); "
	  "a request in flight then: flushed" },
	{ "stress", do_stress, "N SIZE MTU",
	  "N (1-250) rounds of SEND, WRITE, READ of SIZE B and FETCH_ADD from both sides at once" },
	{ "credits", do_credits, "",
	  "end-to-end credits: B's receive buffers used up, more posted, A's SENDs all arrive" },
	{ "probe", do_probe, "",
	  "no credit left: of 3 SENDs in one list the first goes alone, the others after its ACK" },
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

static void list(void)
{
	for (size_t i = 0; i < NCASES; i++) {
		char head[32];

		snprintf(head, sizeof(head), "%s %s", cases[i].name, cases[i].args);
		printf("%-22s %s\n", head, cases[i].desc);
	}
}

int main(int argc, char **argv)
{
	const struct rct_case *c = NULL;
	struct side a = {}, b = {};

	if (argc == 2 && !strcmp(argv[1], "--list")) {
		list();
		return 0;
	}
	if (argc < 6) {
		fprintf(stderr, "usage: xhca-rctest CASE IF_A IP_A IF_B IP_B [ARGS]\n"
				"       xhca-rctest --list (the cases)\n");
		return 2;
	}
	for (size_t i = 0; i < NCASES && !c; i++)
		if (!strcmp(argv[1], cases[i].name))
			c = &cases[i];
	if (!c) {
		fprintf(stderr, "xhca-rctest: unknown case %s (xhca-rctest --list: the cases)\n",
			argv[1]);
		return 2;
	}
	a.ifname = argv[2];
	b.ifname = argv[4];
	a.v6 = xhca_ip_parse(argv[3], a.ip) == 6;
	b.v6 = xhca_ip_parse(argv[5], b.ip) == 6;
	if (c->fn(&a, &b, argc - 6, argv + 6)) {
		fprintf(stderr, "usage: xhca-rctest %s IF_A IP_A IF_B IP_B %s\n", c->name, c->args);
		return 2;
	}
	xhca_close(a.ctx);
	xhca_close(b.ctx);
	return fails ? 1 : 0;
}
