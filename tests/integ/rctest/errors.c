/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-rctest errors: NAKs and error completions on RC: remote access and
 * invalid request, RNR with and without a later buffer, retry exhaustion,
 * flush. xhca-rctest post: xhca_post_send's refusals.
 */
#include "rctest.h"

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

void scen_errors(struct side *a, struct side *b)
{
	err_remote_access(a, b);
	err_unaligned_atomic(a, b);
	err_rnr_no_retry(a, b);
	err_rnr_then_buffer(a, b);
	err_rnr_timer_0(a, b);
	err_retry_exhausted(a, b);
	err_flush(a, b);
}

void scen_post(struct side *a, struct side *b)
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
