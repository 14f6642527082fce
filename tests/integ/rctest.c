/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-rctest: two xhca hosts talking through libxhca only. One process
 * opens a session with each xhcad (their control sockets are files, seen
 * from any network namespace), connects a QP pair across the veth and runs
 * a scenario, checking every byte on both sides. Prints "ok - NAME" /
 * "not ok - NAME" lines (tests/run.sh counts them); exits 1 on a failure.
 *
 *   xhca-rctest IF_A IP_A IF_B IP_B SCENARIO [ARGS]
 *     ops TYPE MTU SIZE...   every operation TYPE (rc, uc, ud) carries, at
 *                            path MTU MTU, for each message SIZE, both ways
 *     errors                 NAKs and error completions on RC: remote access
 *                            and invalid request, RNR with and without a
 *                            later buffer, retry exhaustion, flush
 *     post                   xhca_post_send's refusals
 *     more [4k]              scatter lists, unsignaled requests, SEND with
 *                            invalidate, a bad request in the raw ring, a
 *                            full send CQ, a UD SEND to a multicast group
 *                            (4k: and one of 4096 bytes at path MTU 4096)
 *     paths                  FENCE, SOLICITED and max_rd_atomic (the
 *                            test checks its captures), BAD_RESP_ERR (the
 *                            test injects the NAK), a READ's buffer freed
 *                            before its response; pauses for the test
 *     restart                every RC operation both ways, xhcad on A
 *                            restarted (--keep) by the test in between; a
 *                            request in flight across a restart: flushed
 *     stress N SIZE MTU      N (1-250) rounds of SEND, WRITE, READ of SIZE
 *                            bytes and FETCH_ADD, posted at once from both
 *                            sides (run under loss and reordering): every
 *                            byte right, each ATOMIC executed once
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <xhca/pkt.h>
#include <xhca/xhca.h>
#include "check.h"

#define QKEY 0x11223344u
#define WAIT_MS 30000


struct side {
	const char *ifname;
	__u8 ip[16];
	int v6;
	struct xhca_ctx *ctx;
	struct xhca_pd *pd;
	struct xhca_cq *scq, *rcq;
	struct xhca_qp *qp;
	__u8 *buf;
	size_t len;		/* two halves: [0, half) and [half, len) */
	size_t half;
	struct xhca_mr *mr;
	__u8 type;
};

static int die(const struct side *s, const char *what)
{
	fprintf(stderr, "%s on %s: %s (%s)\n", what, s->ifname, strerror(errno),
		s->ctx ? xhca_errmsg(s->ctx) : "");
	exit(2);
}

static void side_open(struct side *s, __u8 type, size_t half)
{
	s->type = type;
	if (!s->ctx)
		s->ctx = xhca_open(s->ifname);
	if (!s->ctx)
		die(s, "open");
	if (!s->pd)
		s->pd = xhca_pd_alloc(s->ctx);
	if (!s->scq)
		s->scq = xhca_cq_create(s->ctx, 4096);
	if (!s->rcq)
		s->rcq = xhca_cq_create(s->ctx, 4096);
	if (!s->pd || !s->scq || !s->rcq)
		die(s, "pd/cq");
	if (!s->buf || s->half < half) {
		if (s->mr)
			xhca_mr_dereg(s->mr);
		if (s->buf)
			xhca_free(s->ctx, s->buf);
		s->half = half;
		s->len = 2 * half;
		s->buf = xhca_alloc(s->ctx, s->len);
		s->mr = s->buf ? xhca_mr_reg(s->pd, s->buf, s->len, XHCA_ACCESS_ALL) : NULL;
		if (!s->mr)
			die(s, "buffer");
	}
	{
		struct xhca_qp_init_attr ia = {
			.type = type, .qkey = QKEY, .flowq = -1, .recv_cq = s->rcq, .rq_depth = 1024,
			.pd = s->pd, .send_cq = s->scq, .sq_depth = 1024,
		};

		if (s->qp)
			xhca_qp_destroy(s->qp);
		s->qp = xhca_qp_create(s->ctx, &ia);
		if (!s->qp)
			die(s, "qp create");
	}
}

static int modify(struct side *s, __u32 mask, struct xhca_qp_attr *a)
{
	a->mask = mask;
	return xhca_qp_modify(s->qp, a);
}

/* a and b's QPs to RTS, each other's remote, at path MTU mtu. */
static void connect_pair(struct side *a, struct side *b, __u32 mtu)
{
	struct side *sd[2] = { a, b };

	for (int i = 0; i < 2; i++) {
		struct side *s = sd[i], *o = sd[1 - i];
		struct xhca_qp_attr at = { .state = XHCA_QPS_INIT };
		__u8 shift = 8;

		while ((1u << shift) < mtu)
			shift++;
		if (modify(s, XHCA_QPA_STATE, &at))
			die(s, "init");
		memset(&at, 0, sizeof(at));
		at.state = XHCA_QPS_RTR;
		at.mtu_shift = shift;
		at.epsn = 0x100 * (i + 1);
		__u32 m = XHCA_QPA_STATE | XHCA_QPA_MTU | XHCA_QPA_EPSN;
		if (s->type != XHCA_QPT_UD) {
			memcpy(at.local_ip, s->ip, 16);
			memcpy(at.remote_ip, o->ip, 16);
			at.flags = s->v6 ? XHCA_QPF_IPV6 : 0;
			at.dest_qpn = xhca_qp_num(o->qp);
			m |= XHCA_QPA_LOCAL_IP | XHCA_QPA_REMOTE_IP | XHCA_QPA_DEST_QPN;
		}
		if (modify(s, m, &at))
			die(s, "rtr");
	}
	for (int i = 0; i < 2; i++) {
		struct xhca_qp_attr at = { .state = XHCA_QPS_RTS, .sq_psn = 0x100 * (2 - i) };

		if (modify(sd[i], XHCA_QPA_STATE | XHCA_QPA_SQ_PSN, &at))
			die(sd[i], "rts");
	}
}

static void fill(__u8 *p, size_t n, __u32 seed)
{
	for (size_t k = 0; k < n; k++)
		p[k] = xhca_msg_pattern(seed, k);
}

static size_t first_bad(const __u8 *p, size_t n, __u32 seed)
{
	for (size_t k = 0; k < n; k++)
		if (p[k] != xhca_msg_pattern(seed, k))
			return k;
	return n;
}

/* One completion from cq within WAIT_MS; 0, or -1 with none. */
static int wait_wc(struct xhca_cq *cq, struct xhca_wc *wc)
{
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = xhca_poll_cq(cq, wc, 1);

		if (n == 1)
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 > WAIT_MS)
			return -1;
		xhca_cq_wait(cq, 100);
	}
}

static int post(struct side *s, enum xhca_wr_opcode op, __u64 wr_id, void *addr, __u32 len,
		__u64 raddr, __u32 rkey, __u32 imm, unsigned int flags)
{
	struct xhca_sge g = { .addr = (uintptr_t)addr, .length = len };
	struct xhca_send_wr wr = {
		.wr_id = wr_id, .sg_list = &g, .num_sge = 1, .opcode = op,
		.send_flags = flags, .imm_data = imm,
	};

	if (op == XHCA_WR_ATOMIC_CMP_AND_SWP || op == XHCA_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return xhca_post_send(s->qp, &wr, NULL);
}

/* The sender's completion of wr_id: status and opcode as expected. */
static void expect_send_wc(struct side *s, __u64 wr_id, __u32 status, __u32 opcode,
			   const char *what)
{
	struct xhca_wc wc;
	int r = wait_wc(s->scq, &wc);

	check(!r && wc.wr_id == wr_id && wc.status == status && wc.opcode == opcode,
	      "%s: send completion (got %s wr_id %llu status %u opcode %u vendor 0x%x)", what,
	      r ? "none" : "one", (unsigned long long)wc.wr_id, wc.status, wc.opcode,
	      wc.vendor_err);
}

/* ---- ops ------------------------------------------------------------------ */

static void op_send(struct side *tx, struct side *rx, size_t n, int imm, __u32 seed)
{
	const char *tn = tx->type == XHCA_QPT_RC ? "rc" : tx->type == XHCA_QPT_UC ? "uc" : "ud";
	__u32 grh = tx->type == XHCA_QPT_UD ? 40 : 0;
	__u8 *dst = rx->buf + rx->half;
	struct xhca_wc wc;
	char what[96];
	int r;

	snprintf(what, sizeof(what), "%s SEND%s %zu B %s->%s", tn, imm ? " imm" : "", n,
		 tx->ifname, rx->ifname);
	memset(dst, 0, n + grh);
	fill(tx->buf, n, seed);
	xhca_post_recv(rx->qp, 7, dst, (__u32)(n + grh));
	if (tx->type == XHCA_QPT_UD) {
		struct xhca_sge g = { .addr = (uintptr_t)tx->buf, .length = (__u32)n };
		struct xhca_send_wr wr = {
			.wr_id = 1, .sg_list = &g, .num_sge = 1,
			.opcode = imm ? XHCA_WR_SEND_WITH_IMM : XHCA_WR_SEND,
			.send_flags = XHCA_SEND_SIGNALED, .imm_data = htonl(seed),
		};

		memcpy(wr.wr.ud.dest_ip, rx->ip, 16);
		wr.wr.ud.remote_qpn = xhca_qp_num(rx->qp);
		wr.wr.ud.remote_qkey = QKEY;
		r = xhca_post_send(tx->qp, &wr, NULL);
	} else {
		r = post(tx, imm ? XHCA_WR_SEND_WITH_IMM : XHCA_WR_SEND, 1, tx->buf, (__u32)n, 0, 0,
			 htonl(seed), XHCA_SEND_SIGNALED);
	}
	if (r) {
		check(0, "%s: post_send: %s", what, strerror(-r));
		return;
	}
	expect_send_wc(tx, 1, XHCA_WC_SUCCESS, XHCA_WC_SEND, what);
	r = wait_wc(rx->rcq, &wc);
	check(!r && wc.status == XHCA_WC_SUCCESS && wc.byte_len == n + grh &&
	      wc.opcode == XHCA_WC_RECV && (!imm || (wc.imm_data == htonl(seed) &&
						      (wc.wc_flags & XHCA_WC_WITH_IMM))),
	      "%s: receive completion (status %u len %u)", what, r ? 99 : wc.status,
	      r ? 0 : wc.byte_len);
	check(!r && first_bad(dst + grh, n, seed) == n, "%s: every byte (first bad at %zu)", what,
	      first_bad(dst + grh, n, seed));
	if (grh && tx->v6) /* the GRH's source: the address xhcad sent from */
		check(!r && !memcmp(dst + 8, tx->ip, 16), "%s: the GRH names the sender's address",
		      what);
}

static void op_write(struct side *tx, struct side *rx, size_t n, int imm, __u32 seed)
{
	const char *tn = tx->type == XHCA_QPT_RC ? "rc" : "uc";
	__u8 *dst = rx->buf + rx->half;
	struct xhca_wc wc;
	char what[96];
	int r;

	snprintf(what, sizeof(what), "%s WRITE%s %zu B %s->%s", tn, imm ? " imm" : "", n,
		 tx->ifname, rx->ifname);
	memset(dst, 0, n + 1);
	fill(tx->buf, n, seed);
	if (imm)
		xhca_post_recv(rx->qp, 8, rx->buf, 1);
	r = post(tx, imm ? XHCA_WR_RDMA_WRITE_WITH_IMM : XHCA_WR_RDMA_WRITE, 2, tx->buf, (__u32)n,
		 (uintptr_t)dst, xhca_mr_rkey(rx->mr), htonl(seed), XHCA_SEND_SIGNALED);
	if (r) {
		check(0, "%s: post_send: %s", what, strerror(-r));
		return;
	}
	expect_send_wc(tx, 2, XHCA_WC_SUCCESS, XHCA_WC_RDMA_WRITE, what);
	if (imm) {
		r = wait_wc(rx->rcq, &wc);
		check(!r && wc.status == XHCA_WC_SUCCESS && wc.opcode == XHCA_WC_RECV_RDMA_WITH_IMM &&
		      wc.imm_data == htonl(seed) && wc.byte_len == n,
		      "%s: the immediate's completion", what);
	} else if (tx->type == XHCA_QPT_UC) {
		/* UC: done when sent; the bytes may still be on the way */
		usleep(n > 65536 ? 300000 : 50000);
	}
	check(first_bad(dst, n, seed) == n && dst[n] == 0, "%s: every byte (first bad at %zu)",
	      what, first_bad(dst, n, seed));
}

static void op_read(struct side *tx, struct side *rx, size_t n, __u32 seed)
{
	__u8 *dst = tx->buf + tx->half;
	char what[96];
	int r;

	snprintf(what, sizeof(what), "rc READ %zu B %s<-%s", n, tx->ifname, rx->ifname);
	fill(rx->buf, n, seed);
	memset(dst, 0, n + 1);
	r = post(tx, XHCA_WR_RDMA_READ, 3, dst, (__u32)n, (uintptr_t)rx->buf, xhca_mr_rkey(rx->mr),
		 0, XHCA_SEND_SIGNALED);
	if (r) {
		check(0, "%s: post_send: %s", what, strerror(-r));
		return;
	}
	expect_send_wc(tx, 3, XHCA_WC_SUCCESS, XHCA_WC_RDMA_READ, what);
	check(first_bad(dst, n, seed) == n && dst[n] == 0, "%s: every byte (first bad at %zu)",
	      what, first_bad(dst, n, seed));
}

static void op_atomics(struct side *tx, struct side *rx)
{
	__u64 *word = (__u64 *)(rx->buf + ((rx->len - 64) & ~(size_t)7));
	__u64 *res = (__u64 *)(tx->buf + ((tx->len - 64) & ~(size_t)7));
	__u64 va = (uintptr_t)word;
	__u32 rkey = xhca_mr_rkey(rx->mr);
	struct xhca_sge g = { .addr = (uintptr_t)res, .length = 8 };
	struct xhca_send_wr wr = {
		.wr_id = 4, .sg_list = &g, .num_sge = 1, .send_flags = XHCA_SEND_SIGNALED,
	};

	*word = 1000;
	*res = 0;
	wr.opcode = XHCA_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.remote_addr = va;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = 23;
	check(!xhca_post_send(tx->qp, &wr, NULL), "FETCH_ADD posted");
	expect_send_wc(tx, 4, XHCA_WC_SUCCESS, XHCA_WC_FETCH_ADD, "FETCH_ADD");
	check(*res == 1000 && *word == 1023, "FETCH_ADD: original 1000 back (%llu), word 1023 (%llu)",
	      (unsigned long long)*res, (unsigned long long)*word);
	wr.opcode = XHCA_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = 1023;
	wr.wr.atomic.swap = 0x1122334455667788ull;
	check(!xhca_post_send(tx->qp, &wr, NULL), "CMP_SWAP posted");
	expect_send_wc(tx, 4, XHCA_WC_SUCCESS, XHCA_WC_COMP_SWAP, "CMP_SWAP that matches");
	check(*res == 1023 && *word == 0x1122334455667788ull, "CMP_SWAP: swapped, original back");
	wr.wr.atomic.compare_add = 5;
	wr.wr.atomic.swap = 6;
	check(!xhca_post_send(tx->qp, &wr, NULL), "CMP_SWAP posted");
	expect_send_wc(tx, 4, XHCA_WC_SUCCESS, XHCA_WC_COMP_SWAP, "CMP_SWAP that does not match");
	check(*res == 0x1122334455667788ull && *word == 0x1122334455667788ull,
	      "CMP_SWAP: not swapped, original back");
}

static void scen_ops(struct side *a, struct side *b, int argc, char **argv)
{
	__u8 type = !strcmp(argv[0], "rc") ? XHCA_QPT_RC : !strcmp(argv[0], "uc") ? XHCA_QPT_UC
										: XHCA_QPT_UD;
	__u32 mtu = (__u32)atoi(argv[1]);
	size_t max = 64;

	if (strcmp(argv[0], "rc") && strcmp(argv[0], "uc") && strcmp(argv[0], "ud")) {
		fprintf(stderr, "xhca-rctest ops: type %s: rc, uc or ud\n", argv[0]);
		exit(2);
	}

	for (int i = 2; i < argc; i++)
		if ((size_t)atol(argv[i]) > max)
			max = (size_t)atol(argv[i]);
	side_open(a, type, max + 4096);
	side_open(b, type, max + 4096);
	connect_pair(a, b, mtu);
	for (int i = 2; i < argc; i++) {
		size_t n = (size_t)atol(argv[i]);
		__u32 seed = (__u32)(i * 7 + n);

		op_send(a, b, n, 0, seed);
		op_send(b, a, n, 1, seed + 1);
		if (type == XHCA_QPT_UD)
			continue;
		op_write(a, b, n, 0, seed + 2);
		op_write(b, a, n, 1, seed + 3);
		if (type != XHCA_QPT_RC)
			continue;
		op_read(a, b, n, seed + 4);
		op_read(b, a, n, seed + 5);
	}
	if (type == XHCA_QPT_RC) {
		op_atomics(a, b);
		op_atomics(b, a);
	}
}

/* ---- stress ----------------------------------------------------------------- */

/*
 * Each side posts n rounds at once, without waiting: a SEND, a WRITE and a
 * READ of size bytes and a FETCH_ADD of 1 on a counter in the other side's
 * memory. Both sides at the same time, so requests, responses and ACKs of
 * both directions share the link (and its impairment). Every completion in
 * posting order, every byte where it belongs; the counters end at n and the
 * FETCH_ADDs returned 0 ... n-1 in order: each ATOMIC executed once.
 */
struct stress_map {
	size_t size, n;
	__u8 *src, *wdst, *sdst, *rdst;
	__u64 *res, *counter;
};

static void stress_map(struct side *s, size_t n, size_t size, struct stress_map *m)
{
	m->size = size;
	m->n = n;
	m->src = s->buf;			/* my data: sent, written, read by the peer */
	m->res = (__u64 *)(s->buf + ((n * size + 7) & ~(size_t)7)); /* FETCH_ADD results */
	m->wdst = s->buf + s->half;		/* the peer's WRITEs */
	m->sdst = m->wdst + n * size;		/* the peer's SENDs */
	m->rdst = m->sdst + n * size;		/* my READs of the peer's data */
	m->counter = (__u64 *)(s->buf + ((s->len - 64) & ~(size_t)7));
}

static int stress_post(struct side *s, const struct stress_map *m, __u32 seed)
{
	for (size_t i = 0; i < m->n; i++) {
		if (xhca_post_recv(s->qp, 100 + i, m->sdst + i * m->size, (__u32)m->size))
			return -1;
		fill(m->src + i * m->size, m->size, seed + (__u32)i);
		m->res[i] = ~0ull;
	}
	*m->counter = 0;
	return 0;
}

static int stress_send(struct side *s, const struct stress_map *m, const struct stress_map *pm,
		       __u32 rkey, size_t i)
{
	__u64 id = (__u64)i * 4;
	size_t off = i * m->size;
	__u32 n = (__u32)m->size;
	int r;

	r = post(s, XHCA_WR_SEND, id, m->src + off, n, 0, 0, 0, XHCA_SEND_SIGNALED);
	if (!r)
		r = post(s, XHCA_WR_RDMA_WRITE, id + 1, m->src + off, n, (uintptr_t)(pm->wdst + off),
			 rkey, 0, XHCA_SEND_SIGNALED);
	if (!r)
		r = post(s, XHCA_WR_RDMA_READ, id + 2, m->rdst + off, n, (uintptr_t)(pm->src + off),
			 rkey, 0, XHCA_SEND_SIGNALED);
	if (!r) {
		struct xhca_sge g = { .addr = (uintptr_t)&m->res[i], .length = 8 };
		struct xhca_send_wr wr = {
			.wr_id = id + 3, .sg_list = &g, .num_sge = 1, .send_flags = XHCA_SEND_SIGNALED,
			.opcode = XHCA_WR_ATOMIC_FETCH_AND_ADD,
		};

		wr.wr.atomic.remote_addr = (uintptr_t)pm->counter;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
		r = xhca_post_send(s->qp, &wr, NULL);
	}
	return r;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void scen_stress(struct side *a, struct side *b, size_t n, size_t size, __u32 mtu)
{
	static const __u32 wc_op[4] = { XHCA_WC_SEND, XHCA_WC_RDMA_WRITE, XHCA_WC_RDMA_READ,
					XHCA_WC_FETCH_ADD };
	struct side *sd[2] = { a, b };
	struct stress_map m[2];
	size_t got[2] = { 0, 0 }, rgot[2] = { 0, 0 }, order_bad[2] = { 0, 0 };
	size_t sbad[2] = { 0, 0 }, rbad[2] = { 0, 0 };
	size_t half = 3 * n * size + 8 * n + 4096;
	double t0;

	side_open(a, XHCA_QPT_RC, half);
	side_open(b, XHCA_QPT_RC, half);
	connect_pair(a, b, mtu);
	for (int k = 0; k < 2; k++)
		stress_map(sd[k], n, size, &m[k]);
	for (int k = 0; k < 2; k++)
		if (stress_post(sd[k], &m[k], 5000 * (k + 1)))
			die(sd[k], "post_recv");
	/* interleaved: both directions busy from the start */
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 2; k++)
			if (stress_send(sd[k], &m[k], &m[1 - k], xhca_mr_rkey(sd[1 - k]->mr), i))
				die(sd[k], "post_send");
	t0 = now_s();
	while ((got[0] < 4 * n || got[1] < 4 * n || rgot[0] < n || rgot[1] < n) &&
	       now_s() - t0 < WAIT_MS / 1000.0 * 2) {
		int idle = 1;

		for (int k = 0; k < 2; k++) {
			struct xhca_wc wc[64];
			int c = xhca_poll_cq(sd[k]->scq, wc, 64);

			for (int j = 0; j < c; j++, got[k]++) {
				idle = 0;
				if (wc[j].wr_id != got[k] || wc[j].status != XHCA_WC_SUCCESS ||
				    wc[j].opcode != wc_op[got[k] % 4]) {
					if (!order_bad[k]++)
						fprintf(stderr, "%s: completion %zu: wr_id %llu status %u opcode %u\n",
							sd[k]->ifname, got[k], (unsigned long long)wc[j].wr_id,
							wc[j].status, wc[j].opcode);
				}
			}
			c = xhca_poll_cq(sd[k]->rcq, wc, 64);
			for (int j = 0; j < c; j++, rgot[k]++) {
				idle = 0;
				if (wc[j].wr_id != 100 + rgot[k] || wc[j].status != XHCA_WC_SUCCESS ||
				    wc[j].byte_len != size)
					order_bad[k]++;
			}
		}
		if (idle)
			usleep(200);
	}
	for (int k = 0; k < 2; k++) {
		struct side *s = sd[k], *p = sd[1 - k];
		const struct stress_map *me = &m[k], *pm = &m[1 - k];
		size_t res_bad = 0, wbad = 0;

		check(got[k] == 4 * n && rgot[k] == n && !order_bad[k],
		      "stress %zu x %zu B from %s: %zu of %zu send and %zu of %zu receive completions, "
		      "all successful and in posting order (%zu not)", n, size, s->ifname, got[k],
		      4 * n, rgot[k], n, order_bad[k]);
		for (size_t i = 0; i < n; i++) {
			size_t off = i * size;
			__u32 pseed = 5000 * (2 - k) + (__u32)i;

			sbad[k] += first_bad(me->sdst + off, size, pseed) != size;
			wbad += first_bad(me->wdst + off, size, pseed) != size;
			rbad[k] += first_bad(me->rdst + off, size, pseed) != size;
			res_bad += me->res[i] != i;
		}
		check(!sbad[k] && !wbad && !rbad[k],
		      "stress: every byte on %s: the SENDs and WRITEs from %s, its READs of %s "
		      "(%zu, %zu, %zu messages wrong)", s->ifname, p->ifname, p->ifname, sbad[k], wbad,
		      rbad[k]);
		check(*pm->counter == n && !res_bad,
		      "stress: %s's FETCH_ADDs on %s's counter: it is %llu (%zu), they returned 0..%zu "
		      "in order (%zu did not): each executed once", s->ifname, p->ifname,
		      (unsigned long long)*pm->counter, n, n - 1, res_bad);
	}
}

/* ---- errors -------------------------------------------------------------- */

static void set_attr(struct side *s, __u32 mask, __u8 timeout, __u8 retry, __u8 rnr)
{
	struct xhca_qp_attr at = { .timeout = timeout, .retry_cnt = retry, .rnr_retry = rnr };

	if (modify(s, mask, &at))
		die(s, "modify");
}

static int qp_state(struct side *s)
{
	struct xhca_qp_attr at;

	return xhca_qp_query(s->qp, &at) ? -1 : at.state;
}

/* The next n send completions: wr_ids 100.. in order, all with status. */
static void expect_flushed(struct side *s, int n, __u64 first_id, const char *what)
{
	int good = 0;

	for (int i = 0; i < n; i++) {
		struct xhca_wc wc;

		if (!wait_wc(s->scq, &wc) && wc.wr_id == first_id + (__u64)i &&
		    wc.status == XHCA_WC_WR_FLUSH_ERR)
			good++;
	}
	check(good == n, "%s: %d of %d later requests flushed, in order", what, good, n);
}

/* A remote access error: a WRITE with an R_Key one key byte off. */
static void err_remote_access(struct side *a, struct side *b)
{
	__u8 *src = NULL;

	side_open(a, XHCA_QPT_RC, 65536);
	side_open(b, XHCA_QPT_RC, 65536);
	connect_pair(a, b, 1024);
	src = a->buf;
	post(a, XHCA_WR_RDMA_WRITE, 1, src, 100, (uintptr_t)b->buf, xhca_mr_rkey(b->mr) ^ 1, 0, 0);
	for (int i = 0; i < 3; i++)
		post(a, XHCA_WR_SEND, 100 + (__u64)i, src, 10, 0, 0, 0, XHCA_SEND_SIGNALED);
	{
		struct xhca_wc wc;
		int r = wait_wc(a->scq, &wc);

		check(!r && wc.wr_id == 1 && wc.status == XHCA_WC_REM_ACCESS_ERR &&
		      wc.vendor_err == 0x62 && wc.opcode == XHCA_WC_RDMA_WRITE,
		      "bad R_Key: an unsignaled WRITE completes with REM_ACCESS_ERR, NAK 0x62 "
		      "(status %u, vendor 0x%x)", r ? 99 : wc.status, r ? 0 : wc.vendor_err);
	}
	expect_flushed(a, 3, 100, "bad R_Key");
	check(qp_state(a) == XHCA_QPS_ERR, "bad R_Key: the requester's QP is in the error state");
	check(qp_state(b) == XHCA_QPS_ERR, "bad R_Key: the responder's QP is in the error state");
	check(xhca_post_send(a->qp, &(struct xhca_send_wr){ .wr_id = 200,
		.opcode = XHCA_WR_SEND, .send_flags = XHCA_SEND_SIGNALED }, NULL) == 0,
	      "post_send on a QP in error is taken");
	expect_flushed(a, 1, 200, "posted in the error state");
}

/* An invalid request: an ATOMIC at an address not 8-byte aligned. */
static void err_unaligned_atomic(struct side *a, struct side *b)
{
	side_open(a, XHCA_QPT_RC, 65536);
	side_open(b, XHCA_QPT_RC, 65536);
	connect_pair(a, b, 1024);
	post(a, XHCA_WR_ATOMIC_FETCH_AND_ADD, 2, a->buf, 8, (uintptr_t)b->buf + 4,
	     xhca_mr_rkey(b->mr), 0, XHCA_SEND_SIGNALED);
	{
		struct xhca_wc wc;
		int r = wait_wc(a->scq, &wc);

		check(!r && wc.wr_id == 2 && wc.status == XHCA_WC_REM_INV_REQ_ERR &&
		      wc.vendor_err == 0x61, "misaligned ATOMIC: REM_INV_REQ_ERR, NAK 0x61");
	}
}

/* RNR: no receive buffer, no RNR retry. */
static void err_rnr_no_retry(struct side *a, struct side *b)
{
	side_open(a, XHCA_QPT_RC, 65536);
	side_open(b, XHCA_QPT_RC, 65536);
	connect_pair(a, b, 1024);
	set_attr(a, XHCA_QPA_RNR_RETRY, 0, 0, 0);
	post(a, XHCA_WR_SEND, 3, a->buf, 100, 0, 0, 0, XHCA_SEND_SIGNALED);
	{
		struct xhca_wc wc;
		int r = wait_wc(a->scq, &wc);

		check(!r && wc.wr_id == 3 && wc.status == XHCA_WC_RNR_RETRY_EXC_ERR &&
		      wc.vendor_err == (0x20 | XHCA_RNR_TIMER_DEFAULT),
		      "no buffer, rnr_retry 0: RNR_RETRY_EXC_ERR, the RNR NAK's syndrome 0x%x",
		      r ? 0 : wc.vendor_err);
	}
}

/* RNR, then a buffer posted: retried after the NAK's timer, delivered. */
static void err_rnr_then_buffer(struct side *a, struct side *b)
{
	side_open(a, XHCA_QPT_RC, 65536);
	side_open(b, XHCA_QPT_RC, 65536);
	connect_pair(a, b, 1024);
	fill(a->buf, 3000, 77);
	post(a, XHCA_WR_SEND, 4, a->buf, 3000, 0, 0, 0, XHCA_SEND_SIGNALED);
	usleep(20000);
	memset(b->buf + b->half, 0, 3000);
	xhca_post_recv(b->qp, 9, b->buf + b->half, 3000);
	{
		struct xhca_wc wc;
		int r = wait_wc(a->scq, &wc), r2;

		check(!r && wc.wr_id == 4 && wc.status == XHCA_WC_SUCCESS,
		      "RNR then a buffer: the SEND completes (status %u)", r ? 99 : wc.status);
		r2 = wait_wc(b->rcq, &wc);
		check(!r2 && wc.byte_len == 3000 && first_bad(b->buf + b->half, 3000, 77) == 3000,
		      "RNR then a buffer: every byte delivered once");
		check(xhca_poll_cq(b->rcq, &wc, 1) == 0, "RNR then a buffer: no second delivery");
	}
}

/* RNR timer code 0 is the longest, 655.36 ms (IBA table 45): the
 * requester waits that long, not a tenth or ten times it. */
static void err_rnr_timer_0(struct side *a, struct side *b)
{
	side_open(a, XHCA_QPT_RC, 65536);
	side_open(b, XHCA_QPT_RC, 65536);
	connect_pair(a, b, 1024);
	{
		struct xhca_qp_attr at = { .rnr_timer = 0 };
		struct timespec t0, t1;
		struct xhca_wc wc;
		long long ms;
		int r;

		if (modify(b, XHCA_QPA_RNR_TIMER, &at))
			die(b, "rnr_timer");
		clock_gettime(CLOCK_MONOTONIC, &t0);
		post(a, XHCA_WR_SEND, 5, a->buf, 100, 0, 0, 0, XHCA_SEND_SIGNALED);
		usleep(50000);
		xhca_post_recv(b->qp, 10, b->buf + b->half, 100);
		r = wait_wc(a->scq, &wc);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		check(!r && wc.status == XHCA_WC_SUCCESS && ms >= 600 && ms < 2000,
		      "RNR timer code 0: retried after 655 ms (completed after %lld ms)", ms);
		wait_wc(b->rcq, &wc);
	}
}

/* Retry exhaustion: the responder's QP is gone. */
static void err_retry_exhausted(struct side *a, struct side *b)
{
	side_open(a, XHCA_QPT_RC, 65536);
	side_open(b, XHCA_QPT_RC, 65536);
	connect_pair(a, b, 1024);
	set_attr(a, XHCA_QPA_TIMEOUT | XHCA_QPA_RETRY_CNT, 10, 2, 0);
	xhca_qp_destroy(b->qp);
	b->qp = NULL;
	post(a, XHCA_WR_SEND, 5, a->buf, 100, 0, 0, 0, 0);
	post(a, XHCA_WR_RDMA_READ, 6, a->buf, 100, 0x1000, 0x100, 0, XHCA_SEND_SIGNALED);
	{
		struct xhca_wc wc;
		int r = wait_wc(a->scq, &wc);

		check(!r && wc.wr_id == 5 && wc.status == XHCA_WC_RETRY_EXC_ERR,
		      "no responder: RETRY_EXC_ERR after the retries (status %u)",
		      r ? 99 : wc.status);
	}
	expect_flushed(a, 1, 6, "no responder");
}

/* Flush: requests posted before RTS, the QP moved to the error state. */
static void err_flush(struct side *a, struct side *b)
{
	side_open(a, XHCA_QPT_RC, 65536);
	for (int i = 0; i < 5; i++)
		post(a, XHCA_WR_SEND, 300 + (__u64)i, a->buf, 10, 0, 0, 0, 0);
	{
		struct xhca_qp_attr at = { .state = XHCA_QPS_ERR };

		modify(a, XHCA_QPA_STATE, &at);
	}
	expect_flushed(a, 5, 300, "QP to error");
}

static void scen_errors(struct side *a, struct side *b)
{
	err_remote_access(a, b);
	err_unaligned_atomic(a, b);
	err_rnr_no_retry(a, b);
	err_rnr_then_buffer(a, b);
	err_rnr_timer_0(a, b);
	err_retry_exhausted(a, b);
	err_flush(a, b);
}

static void scen_post(struct side *a, struct side *b)
{
	struct xhca_sge g = { .addr = 0, .length = 8 }, many[XHCA_SGE_MAX + 1];
	struct xhca_send_wr wr = { .wr_id = 1, .sg_list = &g, .num_sge = 1 }, *bad = NULL;
	char stack[16];
	int r;

	side_open(a, XHCA_QPT_UD, 4096);
	g.addr = (uintptr_t)a->buf;
	wr.opcode = XHCA_WR_RDMA_WRITE;
	r = xhca_post_send(a->qp, &wr, &bad);
	check(r == -EINVAL && bad == &wr, "UD WRITE refused: -EINVAL, bad_wr set (%d)", r);
	wr.opcode = XHCA_WR_SEND;
	g.addr = (uintptr_t)stack;
	check(xhca_post_send(a->qp, &wr, &bad) == -EFAULT, "an SGE outside host memory: -EFAULT");
	for (int i = 0; i <= XHCA_SGE_MAX; i++)
		many[i] = (struct xhca_sge){ .addr = (uintptr_t)a->buf, .length = 1 };
	wr.sg_list = many;
	wr.num_sge = XHCA_SGE_MAX + 1;
	check(xhca_post_send(a->qp, &wr, &bad) == -EINVAL, "too many SGEs: -EINVAL");
	side_open(a, XHCA_QPT_RC, 4096);
	g.addr = (uintptr_t)a->buf;
	g.length = 4;
	wr.sg_list = &g;
	wr.num_sge = 1;
	wr.opcode = XHCA_WR_ATOMIC_FETCH_AND_ADD;
	check(xhca_post_send(a->qp, &wr, &bad) == -EINVAL, "an ATOMIC without 8 bytes: -EINVAL");
	/* a full send queue (the QP is not in RTS: nothing leaves) */
	{
		struct xhca_send_wr chain[1025];

		for (int i = 0; i < 1025; i++) {
			chain[i] = (struct xhca_send_wr){ .wr_id = (__u64)i, .opcode = XHCA_WR_SEND,
							   .next = i < 1024 ? &chain[i + 1] : NULL };
		}
		r = xhca_post_send(a->qp, chain, &bad);
		check(r == -ENOMEM && bad == &chain[1024],
		      "a chain of 1025 on a queue of 1024: -ENOMEM at the last (%d)", r);
	}
	/* a QP without a send queue */
	{
		struct xhca_qp_init_attr ia = { .type = XHCA_QPT_RC, .flowq = -1, .recv_cq = a->rcq,
						.rq_depth = 4, .pd = a->pd };
		struct xhca_qp *q = xhca_qp_create(a->ctx, &ia);
		struct xhca_qp_attr at = { .mask = XHCA_QPA_TIMEOUT, .timeout = 3 };

		wr.opcode = XHCA_WR_SEND;
		wr.next = NULL;
		check(q && xhca_post_send(q, &wr, &bad) == -EINVAL, "no send queue: -EINVAL");
		check(q && xhca_qp_modify(q, &at) == -EINVAL &&
		      strstr(xhca_errmsg(a->ctx), "no send queue"),
		      "no send queue: its timeout refused, and the message says why");
		ia.send_cq = a->scq;
		ia.sq_depth = 3;
		check(!xhca_qp_create(a->ctx, &ia) && strstr(xhca_errmsg(a->ctx), "power of 2"),
		      "send queue depth 3 refused (%s)", xhca_errmsg(a->ctx));
		if (q)
			xhca_qp_destroy(q);
	}
	{
		struct xhca_qp_attr at = { .timeout = 32 };

		check(modify(a, XHCA_QPA_TIMEOUT, &at) == -ERANGE, "timeout 32 refused");
		at.retry_cnt = 8;
		check(modify(a, XHCA_QPA_RETRY_CNT, &at) == -ERANGE, "retry count 8 refused");
		at.max_rd_atomic = 0;
		check(modify(a, XHCA_QPA_MAX_RD_ATOMIC, &at) == -ERANGE, "max_rd_atomic 0 refused");
		at.mtu_shift = 12;
		check(modify(a, XHCA_QPA_MTU, &at) == -EINVAL &&
		      strstr(xhca_errmsg(a->ctx), "does not fit"),
		      "path MTU 4096 over the link's refused (%s)", xhca_errmsg(a->ctx));
	}
	(void)b;
}

/* ---- what the matrix does not cover ------------------------------------------ */

/* more 4k: the multicast part sends 4096 bytes at path MTU 4096 too */
static int mcast_4k;

/* Scatter lists: a SEND gathered from three pieces, a READ into three. */
static void more_scatter(struct side *a, struct side *b)
{
	struct xhca_wc wc;
	int r;

	struct xhca_sge g[3] = {
		{ .addr = (uintptr_t)a->buf + 100, .length = 1000 },
		{ .addr = (uintptr_t)a->buf + 5000, .length = 1 },
		{ .addr = (uintptr_t)a->buf + 9000, .length = 2000 },
	};
	struct xhca_send_wr wr = { .wr_id = 10, .sg_list = g, .num_sge = 3,
				   .opcode = XHCA_WR_SEND, .send_flags = XHCA_SEND_SIGNALED };
	__u8 *dst = b->buf + b->half, want[3001];

	fill(want, 3001, 41);
	memcpy(a->buf + 100, want, 1000);
	a->buf[5000] = want[1000];
	memcpy(a->buf + 9000, want + 1001, 2000);
	xhca_post_recv(b->qp, 11, dst, 4000);
	check(!xhca_post_send(a->qp, &wr, NULL), "3-SGE SEND posted");
	expect_send_wc(a, 10, XHCA_WC_SUCCESS, XHCA_WC_SEND, "3-SGE SEND");
	r = wait_wc(b->rcq, &wc);
	check(!r && wc.byte_len == 3001 && !memcmp(dst, want, 3001),
	      "3-SGE SEND: the pieces arrive as one message, in order");

	fill(b->buf, 3001, 42);
	fill(want, 3001, 42);
	memset(a->buf, 0, 12000);
	wr.wr_id = 12;
	wr.opcode = XHCA_WR_RDMA_READ;
	wr.wr.rdma.remote_addr = (uintptr_t)b->buf;
	wr.wr.rdma.rkey = xhca_mr_rkey(b->mr);
	check(!xhca_post_send(a->qp, &wr, NULL), "3-SGE READ posted");
	expect_send_wc(a, 12, XHCA_WC_SUCCESS, XHCA_WC_RDMA_READ, "3-SGE READ");
	check(!memcmp(a->buf + 100, want, 1000) && a->buf[5000] == want[1000] &&
	      !memcmp(a->buf + 9000, want + 1001, 2000) && a->buf[99] == 0 &&
	      a->buf[1100] == 0 && a->buf[5001] == 0 && a->buf[11000] == 0,
	      "3-SGE READ: scattered into the three pieces, nothing around them");
}

/* Unsignaled successes leave no completion; the ring slots come back. */
static void more_unsignaled(struct side *a, struct side *b)
{
	struct xhca_wc wc;
	int r;

	int recvd = 0;

	for (int i = 0; i < 1100; i++) { /* more than the queue's 1024 slots */
		xhca_post_recv(b->qp, 20, b->buf + b->half, 64);
		r = post(a, XHCA_WR_SEND, 20 + (__u64)i, a->buf, 64, 0, 0, 0,
			 i == 1099 ? XHCA_SEND_SIGNALED : 0);
		if (r == -ENOMEM) { /* full: the slots come back as they complete */
			usleep(1000);
			i--;
			continue;
		}
		while (xhca_poll_cq(b->rcq, &wc, 1) == 1)
			recvd++;
	}
	expect_send_wc(a, 20 + 1099, XHCA_WC_SUCCESS, XHCA_WC_SEND,
		       "1099 unsignaled SENDs, then a signaled one: its completion only");
	check(xhca_poll_cq(a->scq, &wc, 1) == 0, "unsignaled: no other send completion");
	while (recvd < 1100 && !wait_wc(b->rcq, &wc))
		recvd++;
	check(recvd == 1100, "unsignaled: all 1100 delivered (%d)", recvd);
}

/* A request written into the ring past libxhca's checks (a buffer of
 * another allocation id): xhcad completes it LOC_PROT_ERR, QP to error. */
static void more_forged_wqe(struct side *a, struct side *b)
{
	struct xhca_wc wc;
	int r;

	struct xhca_ring_ctl *sq = xhca_qp_sq(a->qp);
	struct xhca_swqe *e = (struct xhca_swqe *)(sq + 1);
	__u32 p = sq->prod;

	memset(&e[p & (sq->depth - 1)], 0, sizeof(*e));
	e[p & (sq->depth - 1)].wr_id = 40;
	e[p & (sq->depth - 1)].opcode = XHCA_WR_SEND;
	e[p & (sq->depth - 1)].nsge = 1;
	e[p & (sq->depth - 1)].len = 8;
	e[p & (sq->depth - 1)].sge[0].alloc = 0xfffe;
	e[p & (sq->depth - 1)].sge[0].len = 8;
	__atomic_store_n(&sq->prod, p + 1, __ATOMIC_RELEASE);
	post(a, XHCA_WR_SEND, 41, a->buf, 8, 0, 0, 0, 0);
	r = wait_wc(a->scq, &wc);
	check(!r && wc.wr_id == 40 && wc.status == XHCA_WC_LOC_PROT_ERR,
	      "a raw request naming no buffer of the session: LOC_PROT_ERR (status %u)",
	      r ? 99 : wc.status);
	expect_flushed(a, 1, 41, "after LOC_PROT_ERR");
	check(qp_state(a) == XHCA_QPS_ERR, "after LOC_PROT_ERR: the QP is in error");
}

/* A send CQ of 2 slots and 6 signaled requests: held, none lost. */
static void more_small_send_cq(struct side *a, struct side *b)
{
	struct xhca_wc wc;

	struct xhca_cq *small = xhca_cq_create(a->ctx, 2);
	struct xhca_qp_init_attr ia = {
		.type = XHCA_QPT_RC, .flowq = -1, .recv_cq = a->rcq, .rq_depth = 16,
		.pd = a->pd, .send_cq = small, .sq_depth = 16,
	};
	int got = 0, inorder = 1;

	xhca_qp_destroy(a->qp);
	a->qp = xhca_qp_create(a->ctx, &ia);
	side_open(b, XHCA_QPT_RC, 65536);
	if (!small || !a->qp)
		die(a, "small cq");
	connect_pair(a, b, 1024);
	for (int i = 0; i < 6; i++) {
		xhca_post_recv(b->qp, 50, b->buf + b->half, 64);
		post(a, XHCA_WR_SEND, 50 + (__u64)i, a->buf, 64, 0, 0, 0, XHCA_SEND_SIGNALED);
	}
	usleep(200000);
	while (got < 6 && xhca_cq_wait(small, 2000) > 0) {
		while (xhca_poll_cq(small, &wc, 1) == 1) {
			inorder &= wc.wr_id == 50 + (__u64)got && wc.status == 0;
			got++;
		}
	}
	check(got == 6 && inorder, "send CQ of 2: all 6 completions, in order (%d)", got);
	check(xhca_cq_stalls(small) > 0, "send CQ of 2: xhcad waited for room (%llu stalls)",
	      (unsigned long long)xhca_cq_stalls(small));
	xhca_qp_destroy(a->qp);
	a->qp = NULL;
	xhca_cq_destroy(small);
}

/* UD to a multicast group: every member QP on the other host gets it. */
static void more_ud_mcast(struct side *a, struct side *b)
{
	struct xhca_wc wc;
	int r;

	static const __u8 mgid[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
				       239, 1, 2, 3 };
	struct xhca_sge g = { .addr = (uintptr_t)a->buf, .length = 300 };
	struct xhca_send_wr wr = { .wr_id = 60, .sg_list = &g, .num_sge = 1,
				   .opcode = XHCA_WR_SEND, .send_flags = XHCA_SEND_SIGNALED };

	side_open(a, XHCA_QPT_UD, 65536);
	side_open(b, XHCA_QPT_UD, 65536);
	connect_pair(a, b, 1024);
	while (xhca_poll_cq(b->rcq, &wc, 1) == 1) /* the 6 SENDs above */
		;
	check(!xhca_mcast_attach(b->qp, mgid), "multicast: B's UD QP joins 239.1.2.3");
	fill(a->buf, 300, 61);
	memset(b->buf + b->half, 0, 400);
	xhca_post_recv(b->qp, 61, b->buf + b->half, 400);
	memcpy(wr.wr.ud.dest_ip, mgid, 16);
	wr.wr.ud.remote_qpn = 0xffffff;
	wr.wr.ud.remote_qkey = QKEY;
	check(!xhca_post_send(a->qp, &wr, NULL), "multicast: UD SEND to the group posted");
	expect_send_wc(a, 60, XHCA_WC_SUCCESS, XHCA_WC_SEND, "multicast SEND");
	r = wait_wc(b->rcq, &wc);
	check(!r && wc.byte_len == 340 && wc.src_qp == xhca_qp_num(a->qp) &&
	      first_bad(b->buf + b->half + 40, 300, 61) == 300 &&
	      !memcmp(b->buf + b->half + 36, mgid + 12, 4),
	      "multicast: the member got the message, its GRH naming the group (%s, "
	      "len %u, src_qp 0x%x, first bad %zu)", r ? "none" : "one", wc.byte_len,
	      wc.src_qp, first_bad(b->buf + b->half + 40, 300, 61));

	/* 4096 bytes at path MTU 4096: a frame of two descriptors,
	 * made one in a jumbo slot that the replication engine holds
	 * by reference (the link's MTU must allow it: rc.sh's does) */
	if (mcast_4k) {
		struct xhca_qp_attr at = { .mtu_shift = 12 };

		check(!modify(a, XHCA_QPA_MTU, &at) && !modify(b, XHCA_QPA_MTU, &at),
		      "multicast: both UD QPs to path MTU 4096");
		g.length = 4096;
		fill(a->buf, 4096, 62);
		memset(b->buf + b->half, 0, 4200);
		xhca_post_recv(b->qp, 62, b->buf + b->half, 4200);
		wr.wr_id = 63;
		check(!xhca_post_send(a->qp, &wr, NULL), "multicast: 4096 B UD SEND posted");
		expect_send_wc(a, 63, XHCA_WC_SUCCESS, XHCA_WC_SEND, "multicast SEND 4096 B");
		r = wait_wc(b->rcq, &wc);
		check(!r && wc.byte_len == 4136 &&
		      first_bad(b->buf + b->half + 40, 4096, 62) == 4096,
		      "multicast: the member got all 4096 bytes (%s, len %u, first bad %zu)",
		      r ? "none" : "one", wc.byte_len,
		      first_bad(b->buf + b->half + 40, 4096, 62));
	}
}

static void scen_more(struct side *a, struct side *b)
{
	struct xhca_wc wc;
	int r;

	side_open(a, XHCA_QPT_RC, 65536);
	side_open(b, XHCA_QPT_RC, 65536);
	connect_pair(a, b, 1024);

	more_scatter(a, b);

	more_unsignaled(a, b);

	/* SEND with invalidate: the receiver sees the R_Key it names. */
	xhca_post_recv(b->qp, 30, b->buf + b->half, 64);
	r = post(a, XHCA_WR_SEND_WITH_INV, 30, a->buf, 8, 0, 0, 0x12345678, XHCA_SEND_SIGNALED);
	expect_send_wc(a, 30, XHCA_WC_SUCCESS, XHCA_WC_SEND, "SEND with invalidate");
	r = wait_wc(b->rcq, &wc);
	check(!r && (wc.wc_flags & XHCA_WC_WITH_INV) && wc.imm_data == 0x12345678,
	      "SEND with invalidate: the receiver's completion names R_Key 0x12345678 (0x%x)",
	      r ? 0 : wc.imm_data);

	more_forged_wqe(a, b);

	more_small_send_cq(a, b);

	more_ud_mcast(a, b);
}


/* ---- paths: FENCE, SOLICITED, max_rd_atomic, a bad response ------------------ */

/* Waits for the test's go (a line on stdin) after saying what it waits for. */
static void pause_for(const char *what)
{
	char line[64];

	printf("# pause: %s\n", what);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		exit(2);
}

/* A 128 KiB READ and a 64-byte SEND (with flags) posted in one call, so
 * that xhcad finds both at once (two posts race a slow program: the SEND
 * could come when the READ's responses were in); the READ spans fewer PSNs
 * than the requester's window, which lets a SEND without FENCE go at once.
 * When the READ completed on a, when the SEND arrived at b (both
 * CLOCK_MONOTONIC). */
static void read_then_send(struct side *a, struct side *b, unsigned int flags, __u64 *t_read,
			   __u64 *t_recv)
{
	const size_t n = 128u << 10;
	struct xhca_sge gr = { .addr = (uintptr_t)(a->buf + a->half), .length = (__u32)n };
	struct xhca_sge gs = { .addr = (uintptr_t)a->buf, .length = 64 };
	struct xhca_send_wr send = { .wr_id = 81, .sg_list = &gs, .num_sge = 1,
				     .opcode = XHCA_WR_SEND,
				     .send_flags = XHCA_SEND_SIGNALED | flags };
	struct xhca_send_wr rd = { .wr_id = 80, .sg_list = &gr, .num_sge = 1,
				   .opcode = XHCA_WR_RDMA_READ, .send_flags = XHCA_SEND_SIGNALED,
				   .next = &send };
	struct xhca_wc wc;
	int ok;

	fill(b->buf, n, 77);
	xhca_post_recv(b->qp, 5, b->buf + b->half, 64);
	rd.wr.rdma.remote_addr = (uintptr_t)b->buf;
	rd.wr.rdma.rkey = xhca_mr_rkey(b->mr);
	if (xhca_post_send(a->qp, &rd, NULL))
		die(a, "post READ and SEND");
	ok = !wait_wc(a->scq, &wc) && wc.wr_id == 80 && !wc.status;
	*t_read = wc.rx_ns;
	ok = ok && !wait_wc(a->scq, &wc) && wc.wr_id == 81 && !wc.status;
	ok = ok && !wait_wc(b->rcq, &wc) && !wc.status;
	*t_recv = wc.rx_ns;
	check(ok && first_bad(a->buf + a->half, n, 77) == n,
	      "READ then SEND%s: both complete, the READ's data right", flags ? " with FENCE" : "");
}

static void reads(struct side *a, struct side *b, int n, size_t size, const char *what)
{
	int good = 0;

	fill(b->buf, (size_t)n * size, 88);
	memset(a->buf + a->half, 0, (size_t)n * size);
	for (int i = 0; i < n; i++)
		post(a, XHCA_WR_RDMA_READ, 200 + (__u64)i, a->buf + a->half + i * size, (__u32)size,
		     (uintptr_t)(b->buf + i * size), xhca_mr_rkey(b->mr), 0, XHCA_SEND_SIGNALED);
	for (int i = 0; i < n; i++) {
		struct xhca_wc wc;

		good += !wait_wc(a->scq, &wc) && wc.wr_id == 200 + (__u64)i && !wc.status;
	}
	check(good == n && first_bad(a->buf + a->half, (size_t)n * size, 88) == (size_t)n * size,
	      "%s: %d READs of %zu B complete, in order, every byte right", what, good, size);
}

static void scen_paths(struct side *a, struct side *b)
{
	struct xhca_qp_attr at = {};
	__u64 tr, tv;
	struct xhca_wc wc;
	int r;

	side_open(a, XHCA_QPT_RC, (4u << 20) + 4096);
	side_open(b, XHCA_QPT_RC, (4u << 20) + 4096);
	connect_pair(a, b, 1024);

	/* FENCE: the SEND waits for the READ before it; without, it goes.
	 * Where the SEND request is on the wire against the READ's responses
	 * is the shell's check (a capture: that order is the requester's
	 * doing alone; when b completes the SEND against when a completes
	 * the READ is a race between two hosts). Here: with FENCE, b can
	 * only see the SEND after a completed the READ (cause and effect).
	 * The READ's requests on the wire at once (max_rd_atomic 128):
	 * without FENCE the SEND follows them at once. */
	at.max_rd_atomic = XHCA_MAX_RD_ATOMIC;
	if (modify(a, XHCA_QPA_MAX_RD_ATOMIC, &at))
		die(a, "max_rd_atomic");
	pause_for("capture READ then SEND, without and with FENCE");
	read_then_send(a, b, 0, &tr, &tv);
	printf("# without FENCE: the SEND arrived %lld us after the READ completed\n",
	       ((long long)tv - (long long)tr) / 1000);
	read_then_send(a, b, XHCA_SEND_FENCE, &tr, &tv);
	check(tv > tr, "with FENCE the SEND is sent after the READ completed (%lld us after)",
	      ((long long)tv - (long long)tr) / 1000);

	/* SOLICITED: the shell counts the SE bits of the capture */
	pause_for("capture the SOLICITED SENDs and max_rd_atomic 1");
	for (int i = 0; i < 3; i++) {
		xhca_post_recv(b->qp, 6, b->buf + b->half, 64);
		post(a, XHCA_WR_SEND, 90 + (__u64)i, a->buf, 64, 0, 0, 0,
		     XHCA_SEND_SIGNALED | (i == 1 ? XHCA_SEND_SOLICITED : 0));
		r = wait_wc(a->scq, &wc) || wait_wc(b->rcq, &wc);
		check(!r, "SEND %d of 3%s delivered", i + 1, i == 1 ? " (SOLICITED)" : "");
	}
	/* max_rd_atomic 1: one READ request on the wire at a time */
	at.max_rd_atomic = 1;
	if (modify(a, XHCA_QPA_MAX_RD_ATOMIC, &at))
		die(a, "max_rd_atomic");
	reads(a, b, 4, 256 << 10, "max_rd_atomic 1");
	pause_for("a second capture: max_rd_atomic 16");
	at.max_rd_atomic = 16;
	if (modify(a, XHCA_QPA_MAX_RD_ATOMIC, &at))
		die(a, "max_rd_atomic");
	reads(a, b, 4, 256 << 10, "max_rd_atomic 16");

	/* A NAK with a code RC does not know (0x64, invalid RD request):
	 * BAD_RESP_ERR, the NAK's syndrome in vendor_err, the rest flushed */
	set_attr(a, XHCA_QPA_TIMEOUT, 21, 0, 0);
	pause_for("cut the link");
	if (xhca_qp_query(a->qp, &at))
		die(a, "query");
	post(a, XHCA_WR_SEND, 95, a->buf, 100, 0, 0, 0, XHCA_SEND_SIGNALED);
	post(a, XHCA_WR_SEND, 96, a->buf, 100, 0, 0, 0, XHCA_SEND_SIGNALED);
	printf("# inject qpn 0x%06x psn %u\n", xhca_qp_num(a->qp), at.sq_psn);
	pause_for("inject the NAK");
	r = wait_wc(a->scq, &wc);
	check(!r && wc.wr_id == 95 && wc.status == XHCA_WC_BAD_RESP_ERR && wc.vendor_err == 0x64,
	      "a NAK 0x64: BAD_RESP_ERR with vendor_err 0x64 (wr_id %llu status %u vendor 0x%x)",
	      (unsigned long long)wc.wr_id, wc.status, wc.vendor_err);
	expect_flushed(a, 1, 96, "after BAD_RESP_ERR");
	check(qp_state(a) == XHCA_QPS_ERR, "after BAD_RESP_ERR the QP is in the error state");

	/* A READ's buffer freed while the READ waits for its response (the
	 * link still cut): when the response comes, LOC_PROT_ERR, nothing
	 * written anywhere, xhcad goes on. */
	side_open(a, XHCA_QPT_RC, (4u << 20) + 4096);
	side_open(b, XHCA_QPT_RC, (4u << 20) + 4096);
	connect_pair(a, b, 1024);
	set_attr(a, XHCA_QPA_TIMEOUT, 14, 0, 0);
	{
		__u8 *small = xhca_alloc(a->ctx, 4096);

		if (!small)
			die(a, "alloc");
		post(a, XHCA_WR_RDMA_READ, 97, small, 64, (uintptr_t)b->buf, xhca_mr_rkey(b->mr), 0,
		     XHCA_SEND_SIGNALED);
		usleep(20000);
		check(!xhca_free(a->ctx, small), "a READ's buffer freed while the READ is on its way");
	}
	pause_for("mend the link");
	r = wait_wc(a->scq, &wc);
	check(!r && wc.wr_id == 97 && wc.status == XHCA_WC_LOC_PROT_ERR,
	      "the READ's response for a freed buffer: LOC_PROT_ERR (wr_id %llu status %u)",
	      (unsigned long long)wc.wr_id, wc.status);
	check(xhca_qp_query(a->qp, &at) == 0 && at.state == XHCA_QPS_ERR,
	      "xhcad goes on; the QP is in the error state");
}

/* ---- restart ---------------------------------------------------------------- */

static void restart_ops(struct side *a, struct side *b, __u32 seed)
{
	op_send(a, b, 5000, 0, seed);
	op_send(b, a, 3000, 1, seed + 1);
	op_write(a, b, 70000, 0, seed + 2);
	op_write(b, a, 70000, 1, seed + 3);
	op_read(a, b, 100000, seed + 4);
	op_read(b, a, 9000, seed + 5);
	op_atomics(a, b);
	op_atomics(b, a);
}

/*
 * xhcad on a's side restarts (--keep) between the steps: an idle send
 * queue goes on where it was (its PSN from the QP context), in both
 * directions; a request in flight across the restart (the link cut by the
 * test meanwhile) completes flushed, the QP in the error state.
 */
static void scen_restart(struct side *a, struct side *b)
{
	struct xhca_wc wc;

	side_open(a, XHCA_QPT_RC, 200000);
	side_open(b, XHCA_QPT_RC, 200000);
	connect_pair(a, b, 1024);
	restart_ops(a, b, 900);
	pause_for("restart xhcad on A");
	restart_ops(a, b, 950);
	set_attr(a, XHCA_QPA_TIMEOUT, 21, 0, 0); /* 8.6 s: still in flight at the restart */
	pause_for("cut the link");
	xhca_post_recv(b->qp, 7, b->buf + b->half, 4096);
	check(!post(a, XHCA_WR_SEND, 77, a->buf, 4000, 0, 0, 0, XHCA_SEND_SIGNALED),
	      "restart: a SEND posted into a cut link");
	post(a, XHCA_WR_SEND, 78, a->buf, 100, 0, 0, 0, XHCA_SEND_SIGNALED);
	usleep(300000);
	check(xhca_poll_cq(a->scq, &wc, 1) == 0, "restart: the SEND is in flight, not completed");
	pause_for("restart xhcad on A and mend the link");
	check(!wait_wc(a->scq, &wc) && wc.wr_id == 77 && wc.status == XHCA_WC_WR_FLUSH_ERR,
	      "restart: the SEND in flight across the restart completes flushed (wr_id %llu status %u)",
	      (unsigned long long)wc.wr_id, wc.status);
	check(!wait_wc(a->scq, &wc) && wc.wr_id == 78 && wc.status == XHCA_WC_WR_FLUSH_ERR,
	      "restart: the one behind it too, in order (wr_id %llu status %u)",
	      (unsigned long long)wc.wr_id, wc.status);
	check(qp_state(a) == XHCA_QPS_ERR, "restart: the QP in the error state (%d)", qp_state(a));
}

/*
 * End-to-end credits (IBA 9.7.7.2.5): B's receive queue holds 2 buffers and
 * A's 2 SENDs take them, so their ACK gives A no credit and B's xhcad
 * watches the QP. B posts CR_MORE more and asks its xhcad something (a QP
 * query: posting a receive rings no doorbell, the request wakes it), whose
 * round sends the last ACK again with the new count; then A's CR_MORE
 * SENDs all arrive, every byte right. The test reads the counters of the
 * update (responder.credit_acks on B, requester.credit_updates on A).
 */
#define CR_MORE 300

static void scen_credits(struct side *a, struct side *b)
{
	struct xhca_wc wc;
	int sent = 0, got = 0, bad = 0;

	side_open(a, XHCA_QPT_RC, 65536);
	side_open(b, XHCA_QPT_RC, 65536);
	connect_pair(a, b, 1024);
	for (__u64 i = 0; i < 2 + CR_MORE; i++)
		fill(a->buf + i * 64, 64, (__u32)i);
	for (__u64 i = 0; i < 2; i++) {
		xhca_post_recv(b->qp, i, b->buf + b->half + i * 64, 64);
		post(a, XHCA_WR_SEND, i, a->buf + i * 64, 64, 0, 0, 0, XHCA_SEND_SIGNALED);
	}
	for (int i = 0; i < 2; i++) {
		sent += !wait_wc(a->scq, &wc) && wc.status == XHCA_WC_SUCCESS;
		got += !wait_wc(b->rcq, &wc) && wc.status == XHCA_WC_SUCCESS;
	}
	check(sent == 2 && got == 2, "credits: 2 SENDs into B's 2 buffers (%d sent, %d received)",
	      sent, got);
	for (__u64 i = 2; i < 2 + CR_MORE; i++)
		xhca_post_recv(b->qp, i, b->buf + b->half + i * 64, 64);
	check(qp_state(b) == XHCA_QPS_RTS, "credits: %d more posted, B's xhcad asked for its QP",
	      CR_MORE);
	usleep(200000); /* the update on its way to A's xhcad */
	sent = got = 0;
	for (__u64 i = 2; i < 2 + CR_MORE; i++)
		post(a, XHCA_WR_SEND, i, a->buf + i * 64, 64, 0, 0, 0, XHCA_SEND_SIGNALED);
	for (int i = 0; i < CR_MORE; i++) {
		sent += !wait_wc(a->scq, &wc) && wc.status == XHCA_WC_SUCCESS;
		if (wait_wc(b->rcq, &wc) || wc.status != XHCA_WC_SUCCESS)
			continue;
		got++;
		bad += first_bad(b->buf + b->half + wc.wr_id * 64, 64, (__u32)wc.wr_id) != 64;
	}
	check(sent == CR_MORE && got == CR_MORE && !bad,
	      "credits: A's %d SENDs then, all received, every byte right (%d sent, %d received, "
	      "%d wrong)", CR_MORE, sent, got, bad);
}

int main(int argc, char **argv)
{
	struct side a = {}, b = {};

	if (argc < 6) {
		fprintf(stderr, "usage: xhca-rctest IF_A IP_A IF_B IP_B SCENARIO [ARGS]\n");
		return 2;
	}
	a.ifname = argv[1];
	b.ifname = argv[3];
	a.v6 = xhca_ip_parse(argv[2], a.ip) == 6;
	b.v6 = xhca_ip_parse(argv[4], b.ip) == 6;
	if (!strcmp(argv[5], "ops") && argc >= 9)
		scen_ops(&a, &b, argc - 6, argv + 6);
	else if (!strcmp(argv[5], "errors"))
		scen_errors(&a, &b);
	else if (!strcmp(argv[5], "post"))
		scen_post(&a, &b);
	else if (!strcmp(argv[5], "more") && (argc == 6 || !strcmp(argv[6], "4k"))) {
		mcast_4k = argc > 6;
		scen_more(&a, &b);
	}
	else if (!strcmp(argv[5], "restart"))
		scen_restart(&a, &b);
	else if (!strcmp(argv[5], "paths"))
		scen_paths(&a, &b);
	else if (!strcmp(argv[5], "credits"))
		scen_credits(&a, &b);
	else if (!strcmp(argv[5], "stress") && argc >= 9 && atol(argv[6]) > 0 &&
		 atol(argv[6]) <= 250 && atol(argv[7]) > 0)
		scen_stress(&a, &b, (size_t)atol(argv[6]), (size_t)atol(argv[7]),
			    (__u32)atoi(argv[8]));
	else {
		fprintf(stderr, "xhca-rctest: unknown scenario %s\n", argv[5]);
		return 2;
	}
	xhca_close(a.ctx);
	xhca_close(b.ctx);
	return fails ? 1 : 0;
}
