/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The extended post API (ibv_wr_start ... ibv_wr_complete, man
 * ibv_wr_post): a QP created with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS gets these
 * function pointers in its struct ibv_qp_ex. Each ibv_wr_<opcode> begins a
 * request with the qp_ex's wr_id and wr_flags of the moment, the setters
 * fill it in (inline data is copied then), and ibv_wr_complete posts them
 * all through ibv_post_send's path, or none: a request the setters found
 * wrong, or more requests than the send queue has room for, fail the whole
 * batch (ibv_wr_complete's errno) with nothing posted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "xverbs.h"

struct xv_wrb {
	struct ibv_send_wr wr;
	struct ibv_sge sge[XV_MAX_SGE];
	uint8_t inl[XV_MAX_INLINE];
	uint8_t own_data;	/* sge[0] is inl (the batch may move: wr_complete) */
};

static struct xv_qp *xq(struct ibv_qp_ex *qp)
{
	return (struct xv_qp *)qp;
}

static struct xv_wrb *cur(struct xv_qp *q)
{
	return q->wr_n ? &q->wrb[q->wr_n - 1] : NULL;
}

static void wr_start(struct ibv_qp_ex *qp)
{
	struct xv_qp *q = xq(qp);

	q->wr_n = 0;
	q->wr_err = 0;
}

/* A new request of opcode op; NULL (and the batch failed) when no room. */
static struct xv_wrb *begin(struct ibv_qp_ex *qp, enum ibv_wr_opcode op)
{
	struct xv_qp *q = xq(qp);
	struct xv_wrb *b;

	if (q->wr_n == q->wr_cap) {
		uint32_t cap = q->wr_cap ? q->wr_cap * 2 : 8;
		struct xv_wrb *n = realloc(q->wrb, cap * sizeof(*n));

		if (!n) {
			q->wr_err = ENOMEM;
			return NULL;
		}
		q->wrb = n;
		q->wr_cap = cap;
	}
	b = &q->wrb[q->wr_n++];
	memset(&b->wr, 0, sizeof(b->wr));
	b->own_data = 0;
	b->wr.wr_id = qp->wr_id;
	b->wr.send_flags = qp->wr_flags;
	b->wr.opcode = op;
	b->wr.sg_list = b->sge;
	return b;
}

static void wr_send(struct ibv_qp_ex *qp)
{
	begin(qp, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *qp, __be32 imm)
{
	struct xv_wrb *b = begin(qp, IBV_WR_SEND_WITH_IMM);

	if (b)
		b->wr.imm_data = imm;
}

static void wr_send_inv(struct ibv_qp_ex *qp, uint32_t rkey)
{
	struct xv_wrb *b = begin(qp, IBV_WR_SEND_WITH_INV);

	if (b)
		b->wr.invalidate_rkey = rkey;
}

static void rdma(struct ibv_qp_ex *qp, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr,
		 __be32 imm)
{
	struct xv_wrb *b = begin(qp, op);

	if (!b)
		return;
	b->wr.wr.rdma.rkey = rkey;
	b->wr.wr.rdma.remote_addr = addr;
	b->wr.imm_data = imm;
}

static void wr_rdma_write(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t addr)
{
	rdma(qp, IBV_WR_RDMA_WRITE, rkey, addr, 0);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t addr, __be32 imm)
{
	rdma(qp, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr, imm);
}

static void wr_rdma_read(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t addr)
{
	rdma(qp, IBV_WR_RDMA_READ, rkey, addr, 0);
}

static void atomic(struct ibv_qp_ex *qp, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr,
		   uint64_t compare_add, uint64_t swap)
{
	struct xv_wrb *b = begin(qp, op);

	if (!b)
		return;
	b->wr.wr.atomic.rkey = rkey;
	b->wr.wr.atomic.remote_addr = addr;
	b->wr.wr.atomic.compare_add = compare_add;
	b->wr.wr.atomic.swap = swap;
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t addr, uint64_t compare,
			      uint64_t swap)
{
	atomic(qp, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr, compare, swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t addr, uint64_t add)
{
	atomic(qp, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add, 0);
}

static void wr_bind_mw(struct ibv_qp_ex *qp, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *info)
{
	struct xv_wrb *b = begin(qp, IBV_WR_BIND_MW);

	if (!b)
		return;
	b->wr.bind_mw.mw = mw;
	b->wr.bind_mw.rkey = rkey;
	b->wr.bind_mw.bind_info = *info;
}

static void wr_local_inv(struct ibv_qp_ex *qp, uint32_t rkey)
{
	struct xv_wrb *b = begin(qp, IBV_WR_LOCAL_INV);

	if (b)
		b->wr.invalidate_rkey = rkey;
}

/* Its 8 bytes copied now, into the request's own staging, its scatter list
 * (read when posted: qp.c). */
static void wr_atomic_write(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t addr,
			    const void *atomic_wr)
{
	struct xv_wrb *b = begin(qp, IBV_WR_ATOMIC_WRITE);

	if (!b)
		return;
	b->wr.wr.rdma.rkey = rkey;
	b->wr.wr.rdma.remote_addr = addr;
	memcpy(b->inl, atomic_wr, 8);
	b->sge[0] = (struct ibv_sge){ .addr = (uintptr_t)b->inl, .length = 8 };
	b->wr.num_sge = 1;
	b->own_data = 1;
}

static void wr_set_sge_list(struct ibv_qp_ex *qp, size_t n, const struct ibv_sge *l)
{
	struct xv_qp *q = xq(qp);
	struct xv_wrb *b = cur(q);

	if (!b || n > XV_MAX_SGE) {
		q->wr_err = EINVAL;
		return;
	}
	memcpy(b->sge, l, n * sizeof(*l));
	b->own_data = 0;
	b->wr.num_sge = (int)n;
	b->wr.sg_list = b->sge;
	b->wr.send_flags &= ~(unsigned int)IBV_SEND_INLINE;
}

static void wr_set_sge(struct ibv_qp_ex *qp, uint32_t lkey, uint64_t addr, uint32_t len)
{
	struct ibv_sge g = { .addr = addr, .length = len, .lkey = lkey };

	wr_set_sge_list(qp, 1, &g);
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qp, size_t n, const struct ibv_data_buf *l)
{
	struct xv_qp *q = xq(qp);
	struct xv_wrb *b = cur(q);
	size_t total = 0;

	if (!b) {
		q->wr_err = EINVAL;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (l[i].length > q->cap.max_inline_data - total) {
			q->wr_err = EINVAL;
			return;
		}
		memcpy(b->inl + total, l[i].addr, l[i].length);
		total += l[i].length;
	}
	b->sge[0] = (struct ibv_sge){ .addr = (uintptr_t)b->inl, .length = (uint32_t)total };
	b->wr.sg_list = b->sge;
	b->wr.num_sge = 1;
	b->wr.send_flags |= IBV_SEND_INLINE;
	b->own_data = 1;
}

static void wr_set_inline_data(struct ibv_qp_ex *qp, void *addr, size_t len)
{
	struct ibv_data_buf d = { .addr = addr, .length = len };

	wr_set_inline_data_list(qp, 1, &d);
}

static void wr_set_ud_addr(struct ibv_qp_ex *qp, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	struct xv_qp *q = xq(qp);
	struct xv_wrb *b = cur(q);

	if (!b) {
		q->wr_err = EINVAL;
		return;
	}
	b->wr.wr.ud.ah = ah;
	b->wr.wr.ud.remote_qpn = qpn;
	b->wr.wr.ud.remote_qkey = qkey;
}

static int wr_complete(struct ibv_qp_ex *qp)
{
	struct xv_qp *q = xq(qp);
	struct ibv_send_wr *bad;
	int err = q->wr_err;

	if (!err && q->wr_n) {
		struct xhca_ring_ctl *r = xhca_qp_sq(q->x);

		/* room for all of them, or none is posted */
		if (q->wr_n > q->cap.max_send_wr - (r->prod - __atomic_load_n(&r->cons,
									     __ATOMIC_ACQUIRE)))
			err = ENOMEM;
	}
	if (!err && q->wr_n) {
		/* (the batch grew by realloc: its lists where they are now) */
		for (uint32_t i = 0; i < q->wr_n; i++) {
			q->wrb[i].wr.sg_list = q->wrb[i].sge;
			if (q->wrb[i].own_data)
				q->wrb[i].sge[0].addr = (uintptr_t)q->wrb[i].inl;
		}
		for (uint32_t i = 0; i + 1 < q->wr_n; i++)
			q->wrb[i].wr.next = &q->wrb[i + 1].wr;
		q->wrb[q->wr_n - 1].wr.next = NULL;
		/* through the context's post_send (qp.c's), which this file is below */
		err = qp->qp_base.context->ops.post_send(&qp->qp_base, &q->wrb[0].wr, &bad);
	}
	q->wr_n = 0;
	q->wr_err = 0;
	return err;
}

static void wr_abort(struct ibv_qp_ex *qp)
{
	xq(qp)->wr_n = 0;
	xq(qp)->wr_err = 0;
}

void xv_wr_init(struct xv_qp *q)
{
	struct ibv_qp_ex *x = &q->ex;

	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	x->wr_send = wr_send;
	x->wr_send_imm = wr_send_imm;
	x->wr_send_inv = wr_send_inv;
	x->wr_rdma_write = wr_rdma_write;
	x->wr_rdma_write_imm = wr_rdma_write_imm;
	x->wr_rdma_read = wr_rdma_read;
	x->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = wr_atomic_fetch_add;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	x->wr_set_ud_addr = wr_set_ud_addr;
	x->wr_bind_mw = wr_bind_mw;
	x->wr_local_inv = wr_local_inv;
	x->wr_atomic_write = wr_atomic_write;
	/* XRC, TSO, flush: none here (NULL) */
}
