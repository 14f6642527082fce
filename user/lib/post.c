/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Posting (xhca_int.h): receive entries onto a QP's or an SRQ's ring,
 * send requests onto a QP's send queue, its doorbell rung when xhcad
 * sleeps (include/xhca/ring.h).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "xhca_int.h"

int xhca_post_recv(struct xhca_qp *qp, uint64_t wr_id, void *addr, uint32_t len)
{
	return xhca_post_recv_ex(qp, wr_id, addr, len, 0);
}

/* One receive entry onto a ring: the pieces of sg (n of them; none: an
 * empty buffer with XHCA_RECV_EMPTY), or one xhcad fails
 * (XHCA_RECV_LOC_PROT_ERR). */
static int rq_post(struct xhca_ctx *ctx, struct rq_ring *r, uint64_t wr_id,
		   const struct xhca_sge *sg, int n, unsigned int flags)
{
	__u32 prod = r->ctl->prod, cons;
	struct xhca_rsge piece[XHCA_SGE_MAX];
	struct xhca_rwqe *w;
	__u64 total = 0;

	if (__atomic_load_n(&r->ctl->dead, __ATOMIC_ACQUIRE))
		return -ESHUTDOWN;
	if (n < 0 || n > (int)(r->sgl ? r->max_sge : 1) || (!n && !(flags & XHCA_RECV_EMPTY)))
		return -EINVAL;
	for (int i = 0; i < n && !(flags & XHCA_RECV_LOC_PROT_ERR); i++) {
		struct buf *b = sg[i].length ? xl_buf_find(ctx, (void *)(uintptr_t)sg[i].addr,
							    sg[i].length) : NULL;

		if (!b)
			return -EFAULT;
		piece[i] = (struct xhca_rsge){ .off = (__u64)((__u8 *)(uintptr_t)sg[i].addr - b->va),
					       .len = sg[i].length, .alloc = b->id,
					       .lkey = sg[i].lkey };
		total += sg[i].length;
	}
	if (total > 0xffffffffull)
		return -EINVAL;
	cons = r->cons_cache;
	if (prod - cons >= r->depth) {
		cons = r->cons_cache = __atomic_load_n(&r->ctl->cons, __ATOMIC_ACQUIRE);
		if (prod - cons >= r->depth)
			return -ENOMEM;
	}
	w = &r->e[prod & (r->depth - 1)];
	memset(w, 0, sizeof(*w));
	w->wr_id = wr_id;
	if (flags & XHCA_RECV_LOC_PROT_ERR) {
		/* alloc 0 names no allocation: xhcad fails the entry */
	} else if (!n) {
		w->alloc = r->own_alloc; /* no byte of it is written */
	} else if (n == 1) {
		w->off = piece[0].off;
		w->len = piece[0].len;
		w->alloc = piece[0].alloc;
		w->lkey = piece[0].lkey;
	} else {
		/* the list in the entry's slot of the table, read by xhcad when
		 * a message wants the entry (it is ours until then) */
		__u32 slot = prod & (r->depth - 1);

		memcpy(r->sgl + (size_t)slot * r->max_sge, piece, (size_t)n * sizeof(piece[0]));
		w->off = (__u64)slot * r->max_sge * sizeof(piece[0]);
		w->alloc = r->sgl_alloc;
		w->len = (__u32)total;
		w->nsge = (__u32)n;
	}
	__atomic_store_n(&r->ctl->prod, prod + 1, __ATOMIC_RELEASE);
	return 0;
}

int xhca_post_recv_sg(struct xhca_qp *qp, uint64_t wr_id, const struct xhca_sge *sg, int n,
		      unsigned int flags)
{
	if (!qp->rq.ctl)
		return -EINVAL; /* its receives go to its SRQ */
	return rq_post(qp->ctx, &qp->rq, wr_id, sg, n, flags);
}

int xhca_post_recv_ex(struct xhca_qp *qp, uint64_t wr_id, void *addr, uint32_t len,
		      unsigned int flags)
{
	struct xhca_sge g = { .addr = (uint64_t)(uintptr_t)addr, .length = len };

	return xhca_post_recv_sg(qp, wr_id, &g, len || !(flags & XHCA_RECV_EMPTY) ? 1 : 0, flags);
}

int xhca_post_srq_recv_sg(struct xhca_srq *q, uint64_t wr_id, const struct xhca_sge *sg, int n,
			  unsigned int flags)
{
	return rq_post(q->ctx, &q->rq, wr_id, sg, n, flags);
}

/* Whether the QP type can send op (IBA 9.8: UD sends only; UC no READ,
 * ATOMIC or SEND with invalidate; memory windows on RC and UC). */
static int op_allowed(__u8 type, enum xhca_wr_opcode op)
{
	switch (op) {
	case XHCA_WR_SEND:
	case XHCA_WR_SEND_WITH_IMM:
		return 1;
	case XHCA_WR_RDMA_WRITE:
	case XHCA_WR_RDMA_WRITE_WITH_IMM:
	case XHCA_WR_BIND_MW:
	case XHCA_WR_LOCAL_INV:
		return type != XHCA_QPT_UD;
	case XHCA_WR_RDMA_READ:
	case XHCA_WR_ATOMIC_CMP_AND_SWP:
	case XHCA_WR_ATOMIC_FETCH_AND_ADD:
	case XHCA_WR_SEND_WITH_INV:
	case XHCA_WR_ATOMIC_WRITE:
		return type == XHCA_QPT_RC;
	}
	return 0;
}

/* What the request's opcode carries beside its scatter list (total bytes):
 * the remote region, the ATOMIC operands, a memory window's bind. */
static int swqe_target(const struct xhca_send_wr *wr, struct xhca_swqe *w, __u64 total)
{
	switch (wr->opcode) {
	case XHCA_WR_ATOMIC_WRITE:
		if (w->nsge) /* the word is in the request */
			return -EINVAL;
		w->remote_va = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->len = 8;
		break;
	case XHCA_WR_RDMA_WRITE:
	case XHCA_WR_RDMA_WRITE_WITH_IMM:
	case XHCA_WR_RDMA_READ:
		w->remote_va = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
		break;
	case XHCA_WR_ATOMIC_CMP_AND_SWP:
	case XHCA_WR_ATOMIC_FETCH_AND_ADD:
		if (total != 8) /* the original value lands there */
			return -EINVAL;
		w->remote_va = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->swap = wr->wr.atomic.swap;
		break;
	case XHCA_WR_BIND_MW:
		if (w->nsge)
			return -EINVAL;
		w->rkey = wr->wr.bind.mw_rkey;
		w->imm = wr->wr.bind.mr_lkey;
		w->remote_va = wr->wr.bind.addr;
		w->compare_add = wr->wr.bind.length;
		w->swap = wr->wr.bind.access;
		break;
	case XHCA_WR_LOCAL_INV:
		if (w->nsge)
			return -EINVAL;
		break;
	default:
		break;
	}
	return 0;
}

/* One request into slot w; 0 or -errno. */
static int swqe_fill(struct xhca_qp *qp, const struct xhca_send_wr *wr, struct xhca_swqe *w)
{
	__u64 total = 0;
	int err;

	if (!op_allowed(qp->type, wr->opcode) || wr->num_sge < 0 || wr->num_sge > XHCA_SGE_MAX)
		return -EINVAL;
	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->opcode = (__u8)wr->opcode;
	w->flags = (__u8)(wr->send_flags & (XHCA_SEND_FENCE | XHCA_SEND_SIGNALED |
					    XHCA_SEND_SOLICITED));
	if (wr->send_flags & XHCA_SEND_LOC_PROT_ERR) {
		/* an SGE in allocation 0, which is none: xhcad completes the
		 * request with LOC_PROT_ERR in its turn */
		w->nsge = 1;
		return 0;
	}
	for (int i = 0; i < wr->num_sge; i++) {
		const struct xhca_sge *g = &wr->sg_list[i];
		struct buf *b;

		if (!g->length)
			continue;
		b = xl_buf_find(qp->ctx, (const void *)(uintptr_t)g->addr, g->length);
		if (!b)
			return -EFAULT;
		w->sge[w->nsge].off = (__u64)((__u8 *)(uintptr_t)g->addr - b->va);
		w->sge[w->nsge].len = g->length;
		w->sge[w->nsge++].alloc = b->id;
		total += g->length;
	}
	if (total > 0x80000000ull)
		return -EINVAL;
	w->len = (__u32)total;
	w->imm = wr->imm_data;
	err = swqe_target(wr, w, total);
	if (err)
		return err;
	if (qp->type == XHCA_QPT_UD) {
		memcpy(w->dest_ip, wr->wr.ud.dest_ip, 16);
		w->dest_qpn = wr->wr.ud.remote_qpn & XHCA_QPN_MASK;
		w->dest_qkey = wr->wr.ud.remote_qkey;
	}
	return 0;
}

int xhca_post_send(struct xhca_qp *qp, struct xhca_send_wr *wr, struct xhca_send_wr **bad_wr)
{
	__u32 prod, cons, was;
	struct xl_direct *dr = NULL, dbuf;
	struct xhca_send_wr *first = wr;
	int err = 0;

	if (bad_wr)
		*bad_wr = NULL;
	if (!qp->sq) {
		err = -EINVAL; /* created without a send CQ */
		goto out;
	}
	if (__atomic_load_n(&qp->sq->dead, __ATOMIC_ACQUIRE)) {
		err = -ESHUTDOWN;
		goto out;
	}
	prod = was = qp->sq->prod;
	cons = qp->sq_cons_cache;
	for (; wr; wr = wr->next) {
		if (prod - cons >= qp->sq_depth &&
		    prod - (cons = qp->sq_cons_cache = __atomic_load_n(&qp->sq->cons,
								       __ATOMIC_ACQUIRE)) >=
			    qp->sq_depth) {
			err = -ENOMEM;
			break;
		}
		err = swqe_fill(qp, wr, &qp->sqe[prod & (qp->sq_depth - 1)]);
		if (err)
			break;
		prod++;
	}
	if (prod != was) {
		/* nothing of the queue's outstanding before these: a program
		 * that waits for each message's answer (ib_send_lat, a
		 * ping-pong, an RPC), not a stream; one request alone leaves
		 * from here where it can (direct.c), and the next empty CQ
		 * poll hands the CPU over (cq.c) */
		int idle = was == (qp->sq_cons_cache = __atomic_load_n(&qp->sq->cons,
									__ATOMIC_ACQUIRE));

		if (idle && prod == was + 1 && !err && !xl_direct_build(qp, first,
				&qp->sqe[was & (qp->sq_depth - 1)], &dbuf))
			dr = &dbuf;
		__atomic_store_n(&qp->sq->prod, prod, __ATOMIC_RELEASE);
		if (dr)
			xl_direct_send(qp, &qp->sqe[was & (qp->sq_depth - 1)], dr);
		if (idle)
			__atomic_store_n(&qp->ctx->handover, 1, __ATOMIC_RELAXED);
		/* xhcad may be going to sleep (ring.h) */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (__atomic_load_n(&qp->sq->armed, __ATOMIC_RELAXED) &&
		    __atomic_exchange_n(&qp->sq->armed, 0, __ATOMIC_SEQ_CST)) {
			__u64 one = 1;

			if (write(qp->ctx->sq_dbfd, &one, sizeof(one)) < 0 && errno != EAGAIN &&
			    !err)
				err = -errno;
		}
	}
out:
	if (err && bad_wr)
		*bad_wr = wr;
	return err;
}
