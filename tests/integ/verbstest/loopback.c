/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-verbstest local: the checks between QPs of this device (loopback):
 * multicast, ibv_resize_cq, ibv_rereg_mr, a receive's lkey, ATOMIC WRITE.
 * xhca-verbstest nopeer: an address of this host that no xhcad serves.
 */
#include "verbstest.h"

/* Multicast on one device (loopback): a member on the sending device gets
 * its copy, the sending QP too, unless it asked not to
 * (IBV_QP_CREATE_BLOCK_SELF_MCAST_LB); nothing for a QP not attached. */
static uint8_t mc_sl; /* the last one's sl */

static int mc_got(struct ibv_cq *c, uint32_t qpn, uint8_t *buf, uint8_t v)
{
	struct ibv_wc wc = wait_wc(c, 1000);

	mc_sl = wc.sl;
	return wc.status == IBV_WC_SUCCESS && wc.qp_num == qpn && wc.byte_len == 40 + 64 &&
	       (wc.wc_flags & IBV_WC_GRH) && buf[40] == v && buf[40 + 63] == v;
}

void local_mcast_loopback(void)
{
	static uint8_t buf[4][4096];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_cq *c[3] = { ibv_create_cq(ctx, 8, NULL, NULL, 0),
				ibv_create_cq(ctx, 8, NULL, NULL, 0),
				ibv_create_cq(ctx, 8, NULL, NULL, 0) };
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = c[2], .recv_cq = c[2], .qp_type = IBV_QPT_UD, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *a = ud_qp(c[0], 0x4321), *b = ud_qp(c[1], 0x4321);
	struct ibv_qp *blk = ibv_create_qp_ex(ctx, &ia);
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x4321 };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = mgid, .sgid_index = GIDX, .hop_limit = 8 } };
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);
	struct ibv_sge g = { .addr = (uintptr_t)buf[3], .length = 64, .lkey = mr ? mr->lkey : 0 };
	struct ibv_send_wr w = { .sg_list = &g, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	int ok;

	if (!mr || !ah || !blk || ibv_modify_qp(blk, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
						    IBV_QP_PORT | IBV_QP_QKEY))
		die("mcast loopback");
	at.qp_state = IBV_QPS_RTR;
	ibv_modify_qp(blk, &at, IBV_QP_STATE);
	at.qp_state = IBV_QPS_RTS;
	at.sq_psn = 1;
	ibv_modify_qp(blk, &at, IBV_QP_STATE | IBV_QP_SQ_PSN);
	check(!ibv_attach_mcast(a, &mgid, 0) && !ibv_attach_mcast(blk, &mgid, 0),
	      "loopback: two QPs of this device join 239.1.1.9 (one blocks its own)");
	for (int i = 0; i < 3; i++) {
		struct ibv_qp *q = i == 0 ? a : i == 1 ? b : blk;

		post_recv(q, buf[i], 4096, mr->lkey, (uint64_t)i);
	}
	w.wr.ud.ah = ah;
	w.wr.ud.remote_qpn = 0xffffff;
	w.wr.ud.remote_qkey = 0x4321;
	/* from a member that blocks nothing: a copy for itself and blk */
	memset(buf[3], 0x5a, 64);
	ok = !ibv_post_send(a, &w, &bad) && wait_wc(c[0], 2000).opcode == IBV_WC_SEND;
	check(ok && mc_got(c[0], a->qp_num, buf[0], 0x5a),
	      "loopback: the sending QP, a member, gets its own message");
	check(mc_sl == 0xa, "a UD receive's sl: the frame's network header, RoCEv2 over IPv4 "
	      "(0xa, as mlx5; UCX reads it), got 0x%x", mc_sl);
	check(mc_got(c[2], blk->qp_num, buf[2], 0x5a), "loopback: the other member of this "
	      "device gets it");
	check((int)wait_wc(c[1], 300).status < 0, "loopback: a QP not attached gets nothing");
	/* from the member that blocks its own: a's copy only */
	post_recv(a, buf[0], 4096, mr->lkey, 0);
	post_recv(blk, buf[2], 4096, mr->lkey, 2);
	memset(buf[3], 0xa5, 64);
	ok = !ibv_post_send(blk, &w, &bad);
	check(ok && mc_got(c[0], a->qp_num, buf[0], 0xa5), "loopback: a message of the QP "
	      "that blocks its own reaches the other member");
	while (ok && ibv_poll_cq(c[2], 1, &(struct ibv_wc){}) == 0)
		usleep(1000); /* its send completion */
	check((int)wait_wc(c[2], 300).status < 0, "loopback: ... and not the QP itself "
	      "(IBV_QP_CREATE_BLOCK_SELF_MCAST_LB)");
	ibv_detach_mcast(a, &mgid, 0);
	ibv_detach_mcast(blk, &mgid, 0);
	ibv_destroy_ah(ah);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_destroy_qp(blk);
	for (int i = 0; i < 3; i++)
		ibv_destroy_cq(c[i]);
	ibv_dereg_mr(mr);
}

/* ibv_resize_cq: a CQ of 4 holding three flushed receives grows to 16
 * (they stay, in order, and more than 4 fit), shrinks to 1 once empty;
 * sizes that cannot take what it holds, or what signaled sends posted
 * will put there, are refused with EINVAL and change nothing. */
void local_cq_resize(void)
{
	static uint8_t buf[256];
	struct ibv_cq *c = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp *qp = ud_qp(c, 0x77), *q2 = ud_qp(c, 0x77), *q3 = ud_qp(c, 0x77);
	struct ibv_qp *sq = ud_qp(c, 0x77);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .sgid_index = GIDX, .hop_limit = 8 } };
	struct ibv_sge g = { .addr = (uintptr_t)buf, .length = 16 };
	struct ibv_send_wr w = { .sg_list = &g, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_ah *ah;
	struct ibv_wc wc[16];
	int n, ok = 1;

	if (!mr || ibv_query_gid(ctx, 1, GIDX, &aa.grh.dgid) || !(ah = ibv_create_ah(pd, &aa)))
		die("cq resize setup");
	g.lkey = mr->lkey;
	for (int i = 0; i < 3; i++)
		post_recv(qp, buf, sizeof(buf), mr->lkey, (uint64_t)(100 + i));
	ibv_modify_qp(qp, &a, IBV_QP_STATE);
	usleep(200000);
	check(ibv_resize_cq(c, 2) == EINVAL && c->cqe == 4,
	      "resize_cq to 2 of a CQ holding 3 completions: EINVAL, its size kept");
	check(ibv_resize_cq(c, 0) == EINVAL && ibv_resize_cq(c, -1) == EINVAL &&
	      ibv_resize_cq(c, 1 << 30) == EINVAL && c->cqe == 4,
	      "resize_cq to 0, -1, past the largest CQ: EINVAL");
	n = ibv_resize_cq(c, 10);
	check(!n && c->cqe >= 10, "resize_cq from 4 to 10 (cqe %d)", c->cqe);
	check(ibv_poll_cq(c, 1, wc) == 1 && wc[0].wr_id == 100 &&
	      wc[0].status == IBV_WC_WR_FLUSH_ERR, "the first completion polled after it");
	for (int i = 0; i < 8; i++)
		post_recv(q2, buf, sizeof(buf), mr->lkey, (uint64_t)(200 + i));
	ibv_modify_qp(q2, &a, IBV_QP_STATE);
	usleep(200000);
	n = ibv_poll_cq(c, 16, wc);
	for (int i = 0; i < n; i++)
		ok &= wc[i].wr_id == (uint64_t)(i < 2 ? 101 + i : 200 + i - 2);
	check(n == 10 && ok, "the two left and 8 more, 10 in a CQ that held 4, in order (%d)", n);
	n = ibv_resize_cq(c, 1);
	check(!n && c->cqe >= 1 && c->cqe < 10, "resize_cq of the empty CQ down to 1 (cqe %d)",
	      c->cqe);
	post_recv(q3, buf, sizeof(buf), mr->lkey, 300);
	ibv_modify_qp(q3, &a, IBV_QP_STATE);
	check(wait_wc(c, 1000).wr_id == 300, "a completion through the shrunk CQ");
	/* three signaled sends posted to the CQ of 1: their completions
	 * count, written or not */
	check(!ibv_resize_cq(c, 4), "resize_cq to 4");
	w.wr.ud.ah = ah;
	w.wr.ud.remote_qpn = sq->qp_num;
	w.wr.ud.remote_qkey = 0x77;
	for (int i = 0; i < 3; i++)
		ok &= !ibv_post_send(sq, &w, &bad);
	check(ok && ibv_resize_cq(c, 2) == EINVAL, "resize_cq to 2 right after posting 3 "
	      "signaled sends: EINVAL");
	n = 0;
	for (int i = 0; i < 3; i++)
		n += wait_wc(c, 1000).status == IBV_WC_SUCCESS;
	check(n == 3, "... and their 3 completions come (%d)", n);
	ibv_destroy_ah(ah);
	check(!ibv_destroy_qp(qp) && !ibv_destroy_qp(q2) && !ibv_destroy_qp(q3) &&
	      !ibv_destroy_qp(sq) && !ibv_destroy_cq(c) && !ibv_dereg_mr(mr),
	      "destroy the QPs and the resized CQ");
}

/* ibv_rereg_mr's bad arguments: IBV_REREG_MR_ERR_INPUT, EINVAL, and the
 * region (b1, key) as it was: a loopback WRITE from qa still lands. */
static void rereg_bad_args(struct ibv_mr *mr, struct ibv_qp *qa, struct ibv_cq *c,
			   struct ibv_mr *smr, uint8_t *b1, uint32_t key)
{
	int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

	errno = 0;
	check(ibv_rereg_mr(mr, 1 << 3, NULL, NULL, 0, 0) == IBV_REREG_MR_ERR_INPUT &&
	      errno == EINVAL, "rereg_mr with an unknown flag: ERR_INPUT, EINVAL");
	errno = 0;
	check(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, NULL, 64, 0) ==
	      IBV_REREG_MR_ERR_INPUT && errno == EINVAL, "rereg_mr to address NULL: EINVAL");
	errno = 0;
	check(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0, rw) ==
	      IBV_REREG_MR_ERR_INPUT && errno == EINVAL, "rereg_mr with access flags but no "
	      "CHANGE_ACCESS: EINVAL");
	errno = 0;
	check(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0, 0) ==
	      IBV_REREG_MR_ERR_INPUT && errno == EINVAL, "rereg_mr to PD NULL: EINVAL");
	errno = 0;
	check(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_REMOTE_WRITE) == IBV_REREG_MR_ERR_INPUT && errno == EINVAL,
	      "rereg_mr to remote write without local write: EINVAL");
	check(mr->rkey == key && mr->addr == b1 && mr->pd == pd &&
	      write_lo(qa, c, smr, (uintptr_t)b1, key, 0x12) == IBV_WC_SUCCESS && b1[0] == 0x12,
	      "... and the region is as it was");
}

/* ibv_rereg_mr: the region's translation, PD and access change, its keys
 * stay; a peer's WRITE (a loopback QP of this device) follows: into the
 * new pages, not the old; refused while the region is of another PD or
 * lacks remote write. Bad arguments: IBV_REREG_MR_ERR_INPUT, EINVAL, and
 * the region as it was. */
void local_rereg(void)
{
	uint8_t *b1 = aligned_alloc(4096, 4096), *b2 = aligned_alloc(4096, 8192);
	static uint8_t src[4096];
	struct ibv_cq *c = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_mr *mr, *smr = ibv_reg_mr(pd, src, sizeof(src), IBV_ACCESS_LOCAL_WRITE);
	int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_qp *qa, *qb;
	uint32_t key;

	if (!b1 || !b2 || !c || !pd2 || !smr)
		die("rereg setup");
	memset(b1, 0, 4096);
	memset(b2, 0, 8192);
	mr = ibv_reg_mr(pd, b1, 4096, rw);
	if (!mr)
		die("rereg: reg_mr");
	key = mr->rkey;
	loop_pair(pd, c, &qa, &qb);
	check(write_lo(qa, c, smr, (uintptr_t)b1, key, 0x11) == IBV_WC_SUCCESS && b1[63] == 0x11,
	      "rereg: a loopback WRITE into the region");
	rereg_bad_args(mr, qa, c, smr, b1, key);
	/* its pages */
	check(!ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, b2 + 4096, 4096, 0) &&
	      mr->lkey == key && mr->rkey == key && mr->addr == b2 + 4096 && mr->length == 4096,
	      "rereg_mr to other pages: keys kept, address and length new");
	check(write_lo(qa, c, smr, (uintptr_t)(b2 + 4096), key, 0x21) == IBV_WC_SUCCESS &&
	      b2[4096 + 63] == 0x21 && b1[0] == 0x12 && !b2[0],
	      "a WRITE to the new address lands in the new pages, nothing in the old");
	check(write_lo(qa, c, smr, (uintptr_t)b1, key, 0x22) == IBV_WC_REM_ACCESS_ERR &&
	      b1[0] == 0x12, "a WRITE to the old address: REM_ACCESS_ERR, the old pages untouched");
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	/* its access */
	loop_pair(pd, c, &qa, &qb);
	check(!ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_LOCAL_WRITE),
	      "rereg_mr to local write only");
	check(write_lo(qa, c, smr, (uintptr_t)(b2 + 4096), key, 0x31) == IBV_WC_REM_ACCESS_ERR &&
	      b2[4096] == 0x21, "a WRITE then: REM_ACCESS_ERR, nothing written");
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	/* its PD (with its access back) */
	loop_pair(pd, c, &qa, &qb);
	check(!ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS, pd2, NULL, 0,
			    rw) && mr->pd == pd2, "rereg_mr to another PD, remote write again");
	errno = 0;
	check(ibv_dealloc_pd(pd2) == EBUSY, "that PD cannot go while the region is in it");
	check(write_lo(qa, c, smr, (uintptr_t)(b2 + 4096), key, 0x41) == IBV_WC_REM_ACCESS_ERR &&
	      b2[4096] == 0x21, "a WRITE from a QP of the first PD: REM_ACCESS_ERR");
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	loop_pair(pd, c, &qa, &qb);
	check(!ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd, NULL, 0, 0) &&
	      write_lo(qa, c, smr, (uintptr_t)(b2 + 4096), key, 0x51) == IBV_WC_SUCCESS &&
	      b2[4096 + 10] == 0x51, "rereg_mr back to the first PD: the WRITE lands");
	check(!ibv_dealloc_pd(pd2), "and the other PD can go");
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	check(!ibv_dereg_mr(mr) && !ibv_dereg_mr(smr) && !ibv_destroy_cq(c),
	      "dereg the re-registered region");
	free(b1);
	free(b2);
}

/* A receive's lkey is checked when a message takes it, as on an HCA: its
 * region deregistered since it was posted (the pages kept by another), or
 * moved to another PD, the receive completes LOC_PROT_ERR and the sender
 * REM_OP_ERR. A reset QP leaves nothing of its own in its CQ; another
 * QP's completions there stay. */
void local_recv_lkey(void)
{
	static uint8_t rb[4096], sb[4096];
	struct ibv_cq *c = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_mr *m1 = ibv_reg_mr(pd, rb, sizeof(rb), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *m2 = ibv_reg_mr(pd, rb, sizeof(rb), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *smr = ibv_reg_mr(pd, sb, sizeof(sb), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_qp *qa, *qb, *ud;
	struct ibv_wc w[4];
	int n, ok = 1;

	if (!c || !pd2 || !m1 || !m2 || !smr)
		die("recv lkey setup");
	/* deregistered after the post */
	loop_pair(pd, c, &qa, &qb);
	post_recv(qb, rb, 64, m1->lkey, 41);
	check(!ibv_dereg_mr(m1), "dereg the receive's region (another keeps its pages)");
	check(post(qa, IBV_WR_SEND, sb, 64, smr->lkey, 0, 0, 42) == 0, "a SEND to it");
	n = 0;
	for (int i = 0; i < 2; i++) {
		w[i] = wait_wc(c, 3000);
		n += (w[i].wr_id == 41 && w[i].status == IBV_WC_LOC_PROT_ERR) ||
		     (w[i].wr_id == 42 && w[i].status == IBV_WC_REM_OP_ERR);
	}
	check(n == 2, "the receive: LOC_PROT_ERR, the SEND: REM_OP_ERR (%d/2)", n);
	unpair(qa, qb);
	while (ibv_poll_cq(c, 4, w) > 0)
		; /* (their flushes) */
	/* moved to another PD after the post */
	loop_pair(pd, c, &qa, &qb);
	post_recv(qb, rb, 64, m2->lkey, 43);
	check(!ibv_rereg_mr(m2, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0),
	      "rereg the receive's region to another PD");
	post(qa, IBV_WR_SEND, sb, 64, smr->lkey, 0, 0, 44);
	n = 0;
	for (int i = 0; i < 2; i++) {
		w[i] = wait_wc(c, 3000);
		n += (w[i].wr_id == 43 && w[i].status == IBV_WC_LOC_PROT_ERR) ||
		     (w[i].wr_id == 44 && w[i].status == IBV_WC_REM_OP_ERR);
	}
	check(n == 2, "the receive: LOC_PROT_ERR, the SEND: REM_OP_ERR (%d/2)", n);
	/* the pair's flushes in the CQ, a UD QP's after them */
	ud = ud_qp(c, 0x5);
	post_recv(qb, rb, 64, m2->lkey, 45);
	post_recv(qa, sb, 64, smr->lkey, 46);
	post_recv(ud, sb, 64, smr->lkey, 47);
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

		ibv_modify_qp(ud, &a, IBV_QP_STATE);
		usleep(200000);
		a.qp_state = IBV_QPS_RESET;
		check(!ibv_modify_qp(qa, &a, IBV_QP_STATE) && !ibv_modify_qp(qb, &a, IBV_QP_STATE),
		      "both QPs of the pair to RESET");
	}
	n = ibv_poll_cq(c, 4, w);
	for (int i = 0; i < n; i++)
		ok &= w[i].qp_num == ud->qp_num;
	check(n == 1 && ok && w[0].wr_id == 47, "the CQ holds the UD QP's flushed receive only "
	      "(%d completions)", n);
	post_recv(ud, sb, 64, smr->lkey, 48);
	check(wait_wc(c, 2000).wr_id == 48, "a receive posted to the QP in the error state: "
	      "it completes flushed (as on an HCA)");
	ibv_destroy_qp(ud);
	unpair(qa, qb);
	check(!ibv_dereg_mr(m2) && !ibv_dereg_mr(smr) && !ibv_dealloc_pd(pd2) && !ibv_destroy_cq(c),
	      "clean up");
}

/* ATOMIC WRITE (IBA 1.5, RC): 8 bytes stored whole at an aligned address
 * of a region with remote write, through ibv_wr_atomic_write and
 * ibv_post_send's IBV_WR_ATOMIC_WRITE (its 8 bytes from the scatter list,
 * read when posted); misaligned: REM_INV_REQ_ERR, a region without remote
 * write: REM_ACCESS_ERR, nothing stored; not 8 bytes, or on UD: EINVAL. */
void local_atomic_write(void)
{
	static uint64_t dst[8] __attribute__((aligned(64)));
	static uint64_t src[2];
	struct ibv_cq *c = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_mr *dmr = ibv_reg_mr(pd, dst, sizeof(dst),
					IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	struct ibv_mr *ro = ibv_reg_mr(pd, dst, sizeof(dst),
				       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	struct ibv_mr *smr = ibv_reg_mr(pd, src, sizeof(src), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = c, .recv_cq = c, .qp_type = IBV_QPT_RC, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE | IBV_QP_EX_WITH_RDMA_WRITE,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2, .max_recv_sge = 1 },
	};
	struct ibv_qp *qa = ibv_create_qp_ex(ctx, &ia), *qb = new_qp(IBV_QPT_RC, pd, c), *ud;
	struct ibv_qp_ex *x = qa ? ibv_qp_to_qp_ex(qa) : NULL;
	const uint8_t word[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct ibv_sge g = { .addr = (uintptr_t)src, .length = 8 };
	struct ibv_send_wr w = { .wr_id = 61, .opcode = IBV_WR_ATOMIC_WRITE, .sg_list = &g,
				 .num_sge = 1 }, *bad;
	struct peer pa = {}, pb = {};
	struct ibv_wc wc;

	if (!c || !dmr || !ro || !smr || !x || !qb)
		die("atomic write setup");
	g.lkey = smr->lkey;
	me(qa, &pa);
	me(qb, &pb);
	if (to_rts(qa, &pb, 12, 3, 3) || to_rts(qb, &pa, 12, 3, 3))
		die("atomic write: to RTS");
	ibv_wr_start(x);
	x->wr_id = 60;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x, dmr->rkey, (uintptr_t)&dst[1], word);
	check(!ibv_wr_complete(x), "ibv_wr_atomic_write posted");
	wc = wait_wc(c, 3000);
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_ATOMIC_WRITE && wc.wr_id == 60 &&
	      !memcmp(&dst[1], word, 8) && !dst[0] && !dst[2], "... completes ATOMIC_WRITE: "
	      "the 8 bytes there, as they were, nothing beside them");
	src[0] = 0x1122334455667788ull;
	w.wr.rdma.remote_addr = (uintptr_t)&dst[1];
	w.wr.rdma.rkey = dmr->rkey;
	wc = post_wait(qa, c, &w);
	src[0] = 0; /* (read when posted: what the completion stored is the old value) */
	check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_ATOMIC_WRITE &&
	      dst[3] == 0 && dst[1] == 0x1122334455667788ull,
	      "ibv_post_send IBV_WR_ATOMIC_WRITE: its scatter list's 8 bytes stored (%d)", wc.status);
	g.length = 4;
	w.wr.rdma.remote_addr = (uintptr_t)&dst[2];
	w.wr.rdma.rkey = dmr->rkey;
	check(ibv_post_send(qa, &w, &bad) == EINVAL, "IBV_WR_ATOMIC_WRITE of 4 bytes: EINVAL");
	g.length = 8;
	w.wr.rdma.remote_addr = (uintptr_t)&dst[4] + 4;
	src[0] = ~0ull;
	wc = post_wait(qa, c, &w);
	check(wc.status == IBV_WC_REM_INV_REQ_ERR && !dst[4] && !dst[5],
	      "to an address not 8-byte aligned: REM_INV_REQ_ERR, nothing stored");
	unpair(qa, qb);
	loop_pair(pd, c, &qa, &qb);
	w.wr.rdma.remote_addr = (uintptr_t)&dst[6];
	w.wr.rdma.rkey = ro->rkey;
	wc = post_wait(qa, c, &w);
	check(wc.status == IBV_WC_REM_ACCESS_ERR && !dst[6], "to a region without remote write: "
	      "REM_ACCESS_ERR, nothing stored");
	unpair(qa, qb);
	ud = ud_qp(c, 0x3);
	check(ibv_post_send(ud, &w, &bad) == EINVAL, "IBV_WR_ATOMIC_WRITE on a UD QP: EINVAL");
	ibv_destroy_qp(ud);
	check(!ibv_dereg_mr(dmr) && !ibv_dereg_mr(ro) && !ibv_dereg_mr(smr) && !ibv_destroy_cq(c),
	      "clean up");
}

/* A local address no xhcad serves (loopback.sh): frames to it are lost,
 * counted in xhcad's status, and the requests fail as with a dead peer. */
void nopeer(const char *ip)
{
	static uint8_t buf[256];
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_qp *rc = new_qp(IBV_QPT_RC, pd, cq), *ud = ud_qp(cq, 0x99);
	struct peer r = { .qpn = 0x123, .psn = 0x100 };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .sgid_index = GIDX, .hop_limit = 8 } };
	struct ibv_ah *ah;
	struct ibv_sge g = { .addr = (uintptr_t)buf, .length = 64, .lkey = mr ? mr->lkey : 0 };
	struct ibv_send_wr w = { .wr_id = 2, .sg_list = &g, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;

	r.gid.raw[10] = r.gid.raw[11] = 0xff;
	if (!mr || !rc || inet_pton(AF_INET, ip, &r.gid.raw[12]) != 1)
		die("nopeer");
	aa.grh.dgid = r.gid;
	ah = ibv_create_ah(pd, &aa);
	check(!to_rts(rc, &r, 8, 1, 7), "an RC QP to QPN 0x123 at %s", ip);
	check(!post(rc, IBV_WR_SEND, buf, 64, mr->lkey, 0, 0, 1) &&
	      wait_wc(cq, 8000).status == IBV_WC_RETRY_EXC_ERR,
	      "its SEND: RETRY_EXC_ERR (timeout 8, retry 1), as with a dead peer");
	w.wr.ud.ah = ah;
	w.wr.ud.remote_qpn = 0x123;
	w.wr.ud.remote_qkey = 0x99;
	check(ah && !ibv_post_send(ud, &w, &bad) && wait_wc(cq, 2000).status == IBV_WC_SUCCESS,
	      "a UD SEND to it: sent (lost, as on a wire)");
	if (ah)
		ibv_destroy_ah(ah);
	ibv_destroy_qp(rc);
	ibv_destroy_qp(ud);
	ibv_dereg_mr(mr);
}
