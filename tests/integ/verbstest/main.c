/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-verbstest: a libibverbs program of the tests' own, built against
 * Debian's libibverbs and run on xhca by `xhca exec` (tests/integ/verbs.sh),
 * for what the Debian programs do not show: every error status and bad
 * argument of the verbs man pages, and the memory semantics of ibv_reg_mr.
 *
 *   xhca-verbstest CASE [ARGS]
 *   xhca-verbstest --list     the cases (cases[] below), their ARGS, what each does
 *
 * Each check prints "ok - ..." or "not ok - ..."; the exit status is the
 * number of failed checks (capped at 100), 2 for bad usage.
 */
#define CHECK_MAIN
#include "verbstest.h"

/* Resources, then nothing until killed: xhcad must free them all. */
static __attribute__((noreturn)) void hold(void)
{
	static uint8_t buf[1 << 16];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_qp *qp = new_qp(IBV_QPT_RC, pd, cq);

	if (!mr || !qp)
		die("hold");
	printf("holding\n");
	fflush(stdout);
	for (;;) {
		struct ibv_async_event ev;

		if (ibv_get_async_event(ctx, &ev))
			pause();
		printf("async event: %s\n", ibv_event_type_str(ev.event_type));
		fflush(stdout);
		ibv_ack_async_event(&ev);
	}
}

/* Each case, the device open; argv: its ARGS, as many as it takes. */
static void do_local(char **argv)
{
	local_memory();
	local_mr_errors();
	local_fork();
	local_channel();
	local_cq_ex();
	local_cq_ts();
	local_cq_resize();
	local_rereg();
	local_mw();
	local_recv_lkey();
	local_atomic_write();
	local_gids_srq();
	local_threads();
	local_qp_errors();
	local_mcast_loopback();
}

static void do_server(char **argv)
{
	server();
}

static void do_client(char **argv)
{
	client(argv[0]);
}

static void do_hold(char **argv)
{
	hold();
}

static void do_nopeer(char **argv)
{
	nopeer(argv[0]);
}

static void do_view(char **argv)
{
	view();
}

static const struct vt_case {
	const char *name;
	void (*fn)(char **argv);
	int nargs;		/* how many ARGS it takes */
	const char *args;
	const char *desc;
} cases[] = {
	{ "local", do_local, 0, "",
	  "checks needing no peer: memory, bad arguments, state rules, QPs of this device" },
	{ "server", do_server, 0, "", "waits for a client on TCP 18600, its side of the cases" },
	{ "client", do_client, 1, "SERVER_IP", "runs the two-sided cases with the server" },
	{ "hold", do_hold, 0, "", "a QP, an MR and a CQ, then sleeps (kill it)" },
	{ "nopeer", do_nopeer, 1, "IP",
	  "an RC SEND and a UD SEND to IP, an address of this host no xhcad serves (loopback.sh)" },
	{ "view", do_view, 0, "", "the device view's files against the verbs (devview.sh)" },
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

static void list(void)
{
	for (size_t i = 0; i < NCASES; i++) {
		char head[32];

		snprintf(head, sizeof(head), "%s %s", cases[i].name, cases[i].args);
		printf("%-18s %s\n", head, cases[i].desc);
	}
}

int main(int argc, char **argv)
{
	const struct vt_case *c = NULL;

	if (argc == 2 && !strcmp(argv[1], "--list")) {
		list();
		return 0;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: xhca-verbstest CASE [ARGS]\n"
				"       xhca-verbstest --list (the cases)\n");
		return 2;
	}
	for (size_t i = 0; i < NCASES && !c; i++)
		if (!strcmp(argv[1], cases[i].name))
			c = &cases[i];
	if (!c) {
		fprintf(stderr, "xhca-verbstest: unknown case %s (xhca-verbstest --list: the cases)\n",
			argv[1]);
		return 2;
	}
	if (argc - 2 < c->nargs) {
		fprintf(stderr, "usage: xhca-verbstest %s %s\n", c->name, c->args);
		return 2;
	}
	open_dev();
	c->fn(argv + 2);
	return fails > 100 ? 100 : fails;
}
