/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-verbstest local: memory windows (local_mw says what of them).
 */
#include "verbstest.h"

/* IBV_WR_BIND_MW of type 2 window mw (its R_Key was key) to 2048 bytes at
 * addr of mr, remote write, through qp: the new R_Key, the completion in *wc. */
static uint32_t bind2(struct ibv_qp *qp, struct ibv_cq *c, struct ibv_mw *mw, uint32_t key,
		      struct ibv_mr *mr, uint64_t addr, struct ibv_wc *wc)
{
	struct ibv_send_wr w = { .wr_id = 81, .opcode = IBV_WR_BIND_MW };

	w.bind_mw.mw = mw;
	w.bind_mw.rkey = ibv_inc_rkey(key);
	w.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = mr, .addr = addr, .length = 2048,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
	*wc = post_wait(qp, c, &w);
	return w.bind_mw.rkey;
}

/* A SEND with Invalidate of key from qp to its peer: whether both complete
 * and the receive says WITH_INV with the key. */
static int send_inv(struct ibv_qp *qp, struct ibv_qp *peer, struct ibv_cq *c, struct ibv_mr *smr,
		    uint32_t key)
{
	struct ibv_send_wr w = { .wr_id = 84, .opcode = IBV_WR_SEND_WITH_INV, .invalidate_rkey = key };
	struct ibv_wc a, b;

	post_recv(peer, (uint8_t *)smr->addr + 2048, 64, smr->lkey, 85);
	a = post_wait(qp, c, &w);
	b = wait_wc(c, 3000);
	if (a.opcode == IBV_WC_RECV) {
		struct ibv_wc t = a;

		a = b;
		b = t;
	}
	return a.status == IBV_WC_SUCCESS && a.wr_id == 84 && b.status == IBV_WC_SUCCESS &&
	       b.wr_id == 85 && (b.wc_flags & IBV_WC_WITH_INV) && b.invalidated_rkey == key;
}

/* Memory windows (ibv_alloc_mw, ibv_bind_mw, IBV_WR_BIND_MW, LOCAL_INV,
 * SEND with Invalidate) between loopback QPs of this device: a WRITE
 * through a window lands in its part of the region and nowhere else, only
 * while it is bound, a type 2 window's only through the QP that bound it;
 * what the rules refuse completes MW_BIND_ERR. */
/* The memory windows' test: a region with IBV_ACCESS_MW_BIND (8 KiB), the
 * window's place in it, a region without, a window of each type. */
struct mwt {
	uint8_t *buf;
	struct ibv_cq *c;
	struct ibv_mr *smr, *mr, *plain;
	struct ibv_mw *w1, *w2;
	uint64_t win;
	uint32_t key;		/* the type 2 window's R_Key, last */
};

/* type 1: ibv_bind_mw, a WRITE through it, outside it, unbound */
static void mw_type1(struct mwt *e)
{
	struct ibv_qp *qa, *qb;
	struct ibv_wc wc;
	uint32_t k;
	int n;

	loop_pair(pd, e->c, &qa, &qb);
	k = e->w1->rkey;
	{
		struct ibv_mw_bind b = { .wr_id = 71, .send_flags = IBV_SEND_SIGNALED,
					 .bind_info = { .mr = e->mr, .addr = e->win, .length = 1024,
							.mw_access_flags = IBV_ACCESS_REMOTE_WRITE } };

		n = ibv_bind_mw(qa, e->w1, &b);
		check(!n && e->w1->rkey != k && (e->w1->rkey >> 8) == (k >> 8),
		      "bind_mw of the type 1 window: a new key byte (0x%x -> 0x%x)", k, e->w1->rkey);
	}
	wc = wait_wc(e->c, 3000);
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW && wc.wr_id == 71,
	      "... its completion: BIND_MW, success");
	check(write_lo(qb, e->c, e->smr, e->win + 1024 - 64, e->w1->rkey, 0x61) ==
	      IBV_WC_SUCCESS && e->buf[2048 - 1] == 0x61 && !e->buf[2048],
	      "a WRITE through the window lands at its end");
	check(write_lo(qb, e->c, e->smr, e->win - 64, e->w1->rkey, 0x62) == IBV_WC_REM_ACCESS_ERR &&
	      !e->buf[1023], "a WRITE before the window: REM_ACCESS_ERR, nothing written");
	unpair(qa, qb);
	loop_pair(pd, e->c, &qa, &qb);
	check(write_lo(qb, e->c, e->smr, e->win, k, 0x63) == IBV_WC_REM_ACCESS_ERR &&
	      !e->buf[1024], "a WRITE with the window's R_Key of before the bind: REM_ACCESS_ERR");
	unpair(qa, qb);
	loop_pair(pd, e->c, &qa, &qb);
	errno = 0;
	check(ibv_dereg_mr(e->mr) == EBUSY, "dereg_mr of the region a window is bound to: EBUSY");
	{
		struct ibv_mw_bind b = { .wr_id = 72, .send_flags = IBV_SEND_SIGNALED,
					 .bind_info = { .mr = e->mr, .addr = e->win, .length = 0 } };

		check(!ibv_bind_mw(qa, e->w1, &b) && wait_wc(e->c, 3000).status == IBV_WC_SUCCESS,
		      "bind_mw of length 0: the type 1 window unbound");
	}
	check(write_lo(qb, e->c, e->smr, e->win, e->w1->rkey, 0x64) == IBV_WC_REM_ACCESS_ERR &&
	      !e->buf[1024], "a WRITE through it then: REM_ACCESS_ERR");
	unpair(qa, qb);

}

/* type 2: IBV_WR_BIND_MW, only its QP may use it, LOCAL_INV, SEND with
 * Invalidate */
static void mw_type2(struct mwt *e)
{
	struct ibv_qp *qa, *qb, *qc, *qd;
	struct ibv_wc wc;
	uint32_t k;

	loop_pair(pd, e->c, &qa, &qb);
	loop_pair(pd, e->c, &qc, &qd);
	k = bind2(qa, e->c, e->w2, e->w2->rkey, e->mr, e->win, &wc);
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW && wc.wr_id == 81,
	      "IBV_WR_BIND_MW of the type 2 window through QP A");
	check(write_lo(qb, e->c, e->smr, e->win, k, 0x71) == IBV_WC_SUCCESS &&
	      e->buf[1024 + 63] == 0x71,
	      "a WRITE to QP A through it lands");
	check(write_lo(qc, e->c, e->smr, e->win + 64, k, 0x72) == IBV_WC_REM_ACCESS_ERR &&
	      !e->buf[1024 + 64], "a WRITE to another QP (D) through it: REM_ACCESS_ERR "
	      "(drop_mw_qp), nothing written");
	unpair(qc, qd);
	loop_pair(pd, e->c, &qc, &qd);
	check(send_inv(qc, qd, e->c, e->smr, k), "SEND with Invalidate of it to QP D: delivered, "
	      "the key "
	      "in the completion");
	check(write_lo(qb, e->c, e->smr, e->win + 128, k, 0x73) == IBV_WC_SUCCESS &&
	      e->buf[1024 + 128] == 0x73, "... and the window, not bound through D, still takes "
	      "A's WRITEs");
	unpair(qc, qd);
	{
		struct ibv_send_wr w = { .wr_id = 82, .opcode = IBV_WR_LOCAL_INV,
					 .invalidate_rkey = k };

		wc = post_wait(qa, e->c, &w);
	}
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_LOCAL_INV,
	      "LOCAL_INV of the type 2 window on QP A");
	check(write_lo(qb, e->c, e->smr, e->win + 192, k, 0x74) == IBV_WC_REM_ACCESS_ERR &&
	      !e->buf[1024 + 192], "a WRITE through it then: REM_ACCESS_ERR");
	unpair(qa, qb);
	/* the peer's SEND with Invalidate */
	loop_pair(pd, e->c, &qa, &qb);
	k = bind2(qa, e->c, e->w2, k, e->mr, e->win, &wc);
	check(wc.status == IBV_WC_SUCCESS, "the type 2 window bound again, through a new QP A");
	check(send_inv(qb, qa, e->c, e->smr, k), "B's SEND with Invalidate of it to A: delivered, "
	      "the key "
	      "in the completion");
	check(write_lo(qb, e->c, e->smr, e->win + 256, k, 0x75) == IBV_WC_REM_ACCESS_ERR &&
	      !e->buf[1024 + 256], "... and the window unbound: a WRITE through it: REM_ACCESS_ERR");
	unpair(qa, qb);
	loop_pair(pd, e->c, &qa, &qb);
	k = bind2(qa, e->c, e->w2, k, e->mr, e->win, &wc);
	check(wc.status == IBV_WC_SUCCESS, "bound once more");
	bind2(qa, e->c, e->w2, k, e->mr, e->win, &wc);
	check(wc.status == IBV_WC_MW_BIND_ERR && qp_state(qa) == IBV_QPS_ERR,
	      "binding it again while bound: MW_BIND_ERR, the QP in error");
	unpair(qa, qb);

	e->key = k;
}

/* what the rules refuse */
static void mw_refused(struct mwt *e)
{
	struct ibv_qp *qa, *qb;
	struct ibv_wc wc;
	uint32_t k = e->key;

	loop_pair(pd, e->c, &qa, &qb);
	{
		/* (the type 2 window free again first: bound, a bind fails anyway) */
		struct ibv_send_wr w = { .wr_id = 90, .opcode = IBV_WR_LOCAL_INV, .invalidate_rkey = k };

		check(post_wait(qa, e->c, &w).status == IBV_WC_SUCCESS, "LOCAL_INV of the type 2 "
		      "window through another QP of its PD");
	}
	{
		struct ibv_send_wr w = { .wr_id = 91, .opcode = IBV_WR_BIND_MW };

		w.bind_mw.mw = e->w2;
		w.bind_mw.rkey = ibv_inc_rkey(k);
		w.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = e->plain,
			.addr = (uintptr_t)e->buf, .length = 64,
			.mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
		wc = post_wait(qa, e->c, &w);
		check(wc.status == IBV_WC_MW_BIND_ERR && qp_state(qa) == IBV_QPS_ERR,
		      "a bind to a region without IBV_ACCESS_MW_BIND: MW_BIND_ERR, the QP in error");
	}
	unpair(qa, qb);
	loop_pair(pd, e->c, &qa, &qb);
	{
		struct ibv_send_wr w = { .wr_id = 92, .opcode = IBV_WR_BIND_MW };

		w.bind_mw.mw = e->w2;
		w.bind_mw.rkey = ibv_inc_rkey(k);
		w.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = e->mr, .addr = e->win + 4096,
			.length = 4096, .mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
		check(post_wait(qa, e->c, &w).status == IBV_WC_MW_BIND_ERR,
		      "a window past the end of its region: MW_BIND_ERR");
	}
	unpair(qa, qb);
	{
		struct ibv_qp *ud = ud_qp(e->c, 0x99);
		struct ibv_send_wr w = { .wr_id = 93, .opcode = IBV_WR_BIND_MW }, *bad;

		w.bind_mw.mw = e->w2;
		w.bind_mw.rkey = ibv_inc_rkey(k);
		w.bind_mw.bind_info = (struct ibv_mw_bind_info){ .mr = e->mr, .addr = e->win,
			.length = 64, .mw_access_flags = IBV_ACCESS_REMOTE_WRITE };
		check(ibv_post_send(ud, &w, &bad) == EINVAL, "IBV_WR_BIND_MW on a UD QP: EINVAL");
		ibv_destroy_qp(ud);
	}
}

void local_mw(void)
{
	static uint8_t src[4096];
	struct mwt t = { .buf = aligned_alloc(4096, 8192), .c = ibv_create_cq(ctx, 16, NULL, NULL, 0),
			 .smr = ibv_reg_mr(pd, src, sizeof(src), IBV_ACCESS_LOCAL_WRITE) };
	struct ibv_device_attr da;
	int n;

	if (!t.buf || !t.c || !t.smr)
		die("mw setup");
	memset(t.buf, 0, 8192);
	memset(&da, 0, sizeof(da));
	n = ibv_query_device(ctx, &da);
	check(!n && (da.device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
	      (da.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) && da.max_mw > 0,
	      "query_device: memory windows of type 1 and 2B, max_mw %d", da.max_mw);
	t.mr = ibv_reg_mr(pd, t.buf, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	t.plain = ibv_reg_mr(pd, t.buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	t.w1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	t.w2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	check(t.mr && t.plain && t.w1 && t.w2 && t.w1->type == IBV_MW_TYPE_1 && t.w2->rkey &&
	      t.w2->rkey != t.w1->rkey, "reg_mr with IBV_ACCESS_MW_BIND; alloc_mw of type 1 and 2");
	if (!t.mr || !t.plain || !t.w1 || !t.w2)
		die("mw setup");
	errno = 0;
	check(!ibv_alloc_mw(pd, (enum ibv_mw_type)3) && errno == EINVAL, "alloc_mw of type 3: EINVAL");
	t.win = (uintptr_t)t.buf + 1024;
	mw_type1(&t);
	mw_type2(&t);
	mw_refused(&t);
	errno = 0;
	check(ibv_dealloc_pd(pd) == EBUSY, "dealloc_pd with windows in it: EBUSY");
	check(!ibv_dealloc_mw(t.w1) && !ibv_dealloc_mw(t.w2) && !ibv_dereg_mr(t.mr) &&
	      !ibv_dereg_mr(t.plain) && !ibv_dereg_mr(t.smr) && !ibv_destroy_cq(t.c),
	      "dealloc_mw, then the region goes");
	free(t.buf);
}
