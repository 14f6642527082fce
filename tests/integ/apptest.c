/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-apptest: what the integration tests need an application to do that a
 * well-behaved one (xhca-recv) never does. Each mode prints JSON lines; the
 * shell test drives it through stdin ("go" lines) and reads its output.
 *
 *   badbuf IF   post_recv outside host memory (refused by libxhca); raw
 *               receive entries pointing past host memory and into another
 *               session's pages (error completions from xhcad)
 *   dead IF     wait for "go" (the CLI destroyed the QP), then post_recv
 *               and destroy the handle
 *   hold IF     create a UD QP with a small CQ, never poll, wait for "go",
 *               then poll everything that arrived (a full CQ must stall the
 *               flow queue, not lose completions)
 *   crash IF    allocate, create a QP, print ready and wait to be killed
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xhca/xhca.h>

#define QKEY 0x5151

static struct xhca_qp *ud_qp(struct xhca_ctx *ctx, struct xhca_cq *cq, unsigned int depth,
			     int flowq)
{
	struct xhca_qp_init_attr ia = {
		.type = XHCA_QPT_UD, .qkey = QKEY, .flowq = flowq, .recv_cq = cq, .rq_depth = depth,
	};
	struct xhca_qp_attr a = { .mask = XHCA_QPA_STATE, .state = XHCA_QPS_INIT };
	struct xhca_qp *qp = xhca_qp_create(ctx, &ia);

	if (!qp || xhca_qp_modify(qp, &a))
		return NULL;
	/* the reply overwrote a with the QP as it is now */
	a.mask = XHCA_QPA_STATE;
	a.state = XHCA_QPS_RTR;
	return xhca_qp_modify(qp, &a) ? NULL : qp;
}

static int wait_go(void)
{
	char line[64];

	return fgets(line, sizeof(line), stdin) && !strncmp(line, "go", 2) ? 0 : -1;
}

/* Polls until n completions or timeout_ms without one. */
static int drain(struct xhca_cq *cq, struct xhca_wc *wc, int n, int timeout_ms)
{
	int got = 0;

	while (got < n) {
		int k = xhca_poll_cq(cq, wc + got, n - got);

		if (k < 0)
			return k;
		if (k) {
			got += k;
			continue;
		}
		if (xhca_cq_wait(cq, timeout_ms) <= 0)
			break;
	}
	return got;
}

static int mode_badbuf(const char *ifname)
{
	struct xhca_ctx *ctx = xhca_open(ifname), *other = xhca_open(ifname);
	struct xhca_wc wc[4];
	struct xhca_cq *cq;
	struct xhca_qp *qp;
	struct xhca_rwqe *rqe;
	struct xhca_ring_ctl *rq;
	uint32_t their_id, our_id;
	__u8 *theirs, *ours;
	char stack_buf[64];
	int r_stack, r_null, r_past, n;

	if (!ctx || !other)
		return 1;
	theirs = xhca_alloc(other, 4096);
	ours = xhca_alloc(ctx, 4096);
	cq = xhca_cq_create(ctx, 16);
	qp = cq ? ud_qp(ctx, cq, 16, -1) : NULL;
	if (!theirs || !ours || !qp || xhca_mem_lookup(other, theirs, 1, &their_id, NULL, NULL) ||
	    xhca_mem_lookup(ctx, ours, 1, &our_id, NULL, NULL)) {
		fprintf(stderr, "apptest: %s\n", xhca_errmsg(ctx));
		return 1;
	}
	/* libxhca refuses what it can see is wrong */
	r_stack = xhca_post_recv(qp, 1, stack_buf, sizeof(stack_buf));
	r_null = xhca_post_recv(qp, 2, ours, 0);
	r_past = xhca_post_recv(qp, 3, ours + 100, 4096);
	printf("{\"stack\": %d, \"zero_len\": %d, \"past_end\": %d}\n", r_stack, r_null, r_past);
	/* an application that writes the ring itself: xhcad checks again */
	rq = xhca_qp_rq(qp);
	rqe = (struct xhca_rwqe *)(rq + 1);
	rqe[0] = (struct xhca_rwqe){ .wr_id = 10, .alloc = 0x12345, .off = 0, .len = 4096 };
	rqe[1] = (struct xhca_rwqe){ .wr_id = 11, .alloc = their_id, .off = 0, .len = 4096 };
	rqe[2] = (struct xhca_rwqe){ .wr_id = 12, .alloc = our_id, .off = 100, .len = 4096 };
	rqe[3] = (struct xhca_rwqe){ .wr_id = 13, .alloc = our_id, .off = 0, .len = 4096 };
	__atomic_store_n(&rq->prod, rq->prod + 4, __ATOMIC_RELEASE);
	printf("{\"ready\": true, \"qpn\": %u}\n", xhca_qp_num(qp));
	fflush(stdout);
	n = drain(cq, wc, 4, 5000);
	for (int i = 0; i < n; i++)
		printf("{\"wr_id\": %llu, \"status\": %u, \"vendor_err\": %u, \"byte_len\": %u}\n",
		       (unsigned long long)wc[i].wr_id, wc[i].status, wc[i].vendor_err,
		       wc[i].byte_len);
	/* their page was not written */
	printf("{\"theirs_untouched\": %s}\n",
	       theirs[0] == 0 && !memcmp(theirs, theirs + 1, 4095) ? "true" : "false");
	xhca_close(other);
	xhca_close(ctx);
	return 0;
}

static int mode_dead(const char *ifname)
{
	struct xhca_ctx *ctx = xhca_open(ifname);
	struct xhca_cq *cq;
	struct xhca_qp *qp;
	__u8 *buf;
	int r_post, r_destroy, r_cq;

	if (!ctx)
		return 1;
	buf = xhca_alloc(ctx, 4096);
	cq = xhca_cq_create(ctx, 16);
	qp = cq ? ud_qp(ctx, cq, 16, -1) : NULL;
	if (!buf || !qp)
		return 1;
	printf("{\"ready\": true, \"qpn\": %u}\n", xhca_qp_num(qp));
	fflush(stdout);
	if (wait_go())
		return 1;
	r_post = xhca_post_recv(qp, 1, buf, 4096);
	r_destroy = xhca_qp_destroy(qp);
	r_cq = xhca_cq_destroy(cq);
	printf("{\"post\": %d, \"destroy\": %d, \"cq_destroy\": %d}\n", r_post, r_destroy, r_cq);
	xhca_close(ctx);
	return 0;
}

static int mode_hold(const char *ifname, int flowq)
{
	static struct xhca_wc wc[256];
	struct xhca_ctx *ctx = xhca_open(ifname);
	struct xhca_cq *cq;
	struct xhca_qp *qp;
	__u8 *bufs;
	int n;

	if (!ctx)
		return 1;
	bufs = xhca_alloc(ctx, 64 * 2048);
	cq = xhca_cq_create(ctx, 4);
	qp = cq ? ud_qp(ctx, cq, 64, flowq) : NULL;
	if (!bufs || !qp)
		return 1;
	for (int i = 0; i < 64; i++)
		if (xhca_post_recv(qp, (uint64_t)i, bufs + i * 2048, 2048))
			return 1;
	printf("{\"ready\": true, \"qpn\": %u}\n", xhca_qp_num(qp));
	fflush(stdout);
	if (wait_go())
		return 1;
	n = drain(cq, wc, 256, 1000);
	printf("{\"received\": %d, \"stalls\": %llu, \"ok\": %s}\n", n,
	       (unsigned long long)xhca_cq_stalls(cq), n > 0 && wc[0].status == 0 ? "true" : "false");
	xhca_close(ctx);
	return 0;
}

static int mode_crash(const char *ifname, int flowq)
{
	struct xhca_ctx *ctx = xhca_open(ifname);
	struct xhca_cq *cq;
	struct xhca_qp *qp;
	__u8 *bufs;

	if (!ctx)
		return 1;
	bufs = xhca_alloc(ctx, 1 << 20);
	cq = xhca_cq_create(ctx, 4);
	qp = cq ? ud_qp(ctx, cq, 64, flowq) : NULL;
	if (!bufs || !qp)
		return 1;
	for (int i = 0; i < 64; i++)
		xhca_post_recv(qp, (uint64_t)i, bufs + i * 4096, 4096);
	printf("{\"ready\": true, \"qpn\": %u}\n", xhca_qp_num(qp));
	fflush(stdout);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	int flowq = argc > 3 ? atoi(argv[3]) : -1;

	if (argc < 3) {
		fprintf(stderr, "usage: xhca-apptest badbuf|dead|hold|crash IFNAME [FLOWQ]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "badbuf"))
		return mode_badbuf(argv[2]);
	if (!strcmp(argv[1], "dead"))
		return mode_dead(argv[2]);
	if (!strcmp(argv[1], "hold"))
		return mode_hold(argv[2], flowq);
	if (!strcmp(argv[1], "crash"))
		return mode_crash(argv[2], flowq);
	fprintf(stderr, "xhca-apptest: unknown mode %s\n", argv[1]);
	return 2;
}
