/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-rctest more [4k]: what the matrix of ops does not cover: scatter
 * lists, unsignaled requests, SEND with invalidate, a bad request in the
 * raw ring, a full send CQ, a UD SEND to a multicast group (4k: and one of
 * 4096 bytes at path MTU 4096).
 */
#include "rctest.h"

/* more 4k: the multicast part sends 4096 bytes at path MTU 4096 too */
int mcast_4k;

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

void scen_more(struct side *a, struct side *b)
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
