/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libxhca's queue pairs and shared receive queues (xhca_int.h): created by
 * xhcad, their rings mapped here; multicast, packet filters.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include "xhca_int.h"

/* ---- queue pairs -------------------------------------------------------------- */

/* A table of scatter lists for a ring of depth entries (max_sge > 1). */
static int rq_sgl(struct xhca_ctx *ctx, struct rq_ring *r, unsigned int max_sge)
{
	struct buf *b;

	r->max_sge = max_sge ? max_sge : 1;
	if (r->max_sge <= 1)
		return 0;
	if (r->max_sge > XHCA_SGE_MAX)
		return xl_fail(ctx, -EINVAL, "receive scatter lists of %u pieces: at most %d",
			       max_sge, XHCA_SGE_MAX);
	r->sgl = xhca_alloc_ex(ctx, XHCA_RSGL_BYTES(r->depth, r->max_sge), XHCA_ALLOC_CONTIG);
	if (!r->sgl)
		return -errno;
	b = xl_buf_find(ctx, r->sgl, 1);
	r->sgl_alloc = b->id;
	return 0;
}

/* The rings xhcad made for the QP (a), mapped, and the table of its
 * receive scatter lists; 0, or -errno with nothing left mapped. */
static int qp_map(struct xhca_ctx *ctx, struct xhca_qp *qp, const struct xhca_qp_attr *a,
		  unsigned int rq_sge)
{
	int err = 0;

	qp->type = a->type;
	qp->ctx = ctx;
	qp->qpn = a->qpn;
	qp->rq_len = pages_of(xhca_ring_bytes(a->rq_depth, sizeof(struct xhca_rwqe)));
	if (!a->srq) {
		qp->rq.ctl = xl_map_ring(ctx, a->rq_off, qp->rq_len);
		if (!qp->rq.ctl)
			return xl_fail(ctx, -EPROTO, "qp create: cannot map the receive queue");
		qp->rq.depth = a->rq_depth;
		qp->rq.own_alloc = a->rq_alloc;
		qp->rq.e = (struct xhca_rwqe *)(qp->rq.ctl + 1);
	}
	if (a->send_cq) {
		qp->sq_len = pages_of(xhca_ring_bytes(a->sq_depth, sizeof(struct xhca_swqe)));
		qp->sq = xl_map_ring(ctx, a->sq_off, qp->sq_len);
		if (!qp->sq) {
			err = xl_fail(ctx, -EPROTO, "qp create: cannot map the send queue");
			goto out;
		}
		qp->sq_depth = a->sq_depth;
		qp->sq_alloc = a->sq_alloc;
		qp->sqe = (struct xhca_swqe *)(qp->sq + 1);
	}
	if (qp->rq.ctl)
		err = rq_sgl(ctx, &qp->rq, rq_sge);
out:
	if (err) {
		if (qp->rq.ctl)
			sys_munmap(qp->rq.ctl, qp->rq_len);
		if (qp->sq)
			sys_munmap(qp->sq, qp->sq_len);
	}
	return err;
}

struct xhca_qp *xhca_qp_create(struct xhca_ctx *ctx, const struct xhca_qp_init_attr *attr)
{
	struct xhca_qp_attr a = {};
	struct xhca_qp *qp;
	int err;

	if (!attr->recv_cq || attr->recv_cq->ctx != ctx) {
		snprintf(ctx->err, sizeof(ctx->err), "qp create: recv_cq must be a CQ of this "
			 "session");
		errno = EINVAL;
		return NULL;
	}
	a.type = attr->type;
	a.qpn = attr->qpn;
	a.pkey = attr->pkey;
	a.qkey = attr->qkey;
	if (attr->flowq >= 0) {
		if (attr->flowq >= XHCA_FLOWQ_MAX) {
			snprintf(ctx->err, sizeof(ctx->err), "qp create: flow queue %d is out of "
				 "range (0..%d)", attr->flowq, XHCA_FLOWQ_MAX - 1);
			errno = EINVAL;
			return NULL;
		}
		a.flowq = (__u8)attr->flowq;
		a.mask |= XHCA_QPA_FLOWQ;
	}
	a.cq = attr->recv_cq->id;
	a.rq_depth = attr->srq ? 0 : attr->rq_depth;
	if (attr->srq) {
		if (attr->srq->ctx != ctx) {
			xl_fail(ctx, -EINVAL, "qp create: srq must be a shared receive queue of this "
				"session");
			errno = EINVAL;
			return NULL;
		}
		a.srq = attr->srq->id;
	}
	if (attr->send_cq) {
		if (attr->send_cq->ctx != ctx) {
			xl_fail(ctx, -EINVAL, "qp create: send_cq must be a CQ of this session");
			errno = EINVAL;
			return NULL;
		}
		if (ctx->sq_dbfd < 0) {
			/* one send doorbell for the session's send queues */
			int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

			if (fd < 0)
				return NULL;
			err = xl_call(ctx, XHCA_CTL_SQ_DOORBELL, NULL, 0, fd, NULL, 0, NULL);
			if (err) {
				close(fd);
				errno = -err;
				return NULL;
			}
			ctx->sq_dbfd = fd;
		}
		a.send_cq = attr->send_cq->id;
		a.sq_depth = attr->sq_depth;
	}
	if (attr->create_flags & XHCA_QP_CREATE_BLOCK_SELF_MCAST_LB)
		a.flags |= XHCA_QPF_BLOCK_MC_LOOPBACK;
	if (attr->create_flags & XHCA_QP_CREATE_PROXY)
		a.flags |= XHCA_QPF_PROXY;
	if (attr->pd && attr->pd->ctx != ctx) {
		xl_fail(ctx, -EINVAL, "qp create: pd must be a protection domain of this session");
		errno = EINVAL;
		return NULL;
	}
	if (!attr->pd && !ctx->dflt_pd) {
		ctx->dflt_pd = xhca_pd_alloc(ctx);
		if (!ctx->dflt_pd)
			return NULL;
	}
	a.pd = (attr->pd ? attr->pd : ctx->dflt_pd)->id;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	err = xl_call(ctx, XHCA_CTL_QP_CREATE, &a, sizeof(a), -1, &a, sizeof(a), NULL);
	if (err) {
		free(qp);
		errno = -err;
		return NULL;
	}
	err = qp_map(ctx, qp, &a, attr->rq_sge);
	if (err) {
		xl_call(ctx, XHCA_CTL_QP_DESTROY, &a.qpn, sizeof(a.qpn), -1, NULL, 0, NULL);
		free(qp);
		errno = -err;
		return NULL;
	}
	qp->next = ctx->qps;
	ctx->qps = qp;
	return qp;
}

static int mcast_call(struct xhca_qp *qp, __u32 op, const uint8_t mgid[16])
{
	struct xhca_mcast_req r = { .qpn = qp->qpn, .flags = XHCA_MCF_CREATE };

	memcpy(r.mgid.gid, mgid, 16);
	return xl_call(qp->ctx, op, &r, sizeof(r), -1, NULL, 0, NULL);
}

int xhca_mcast_attach(struct xhca_qp *qp, const uint8_t mgid[16])
{
	return mcast_call(qp, XHCA_CTL_MCAST_ATTACH, mgid);
}

int xhca_mcast_detach(struct xhca_qp *qp, const uint8_t mgid[16])
{
	return mcast_call(qp, XHCA_CTL_MCAST_DETACH, mgid);
}

struct xhca_ring_ctl *xhca_qp_rq(struct xhca_qp *qp)
{
	return qp->rq.ctl;
}

uint32_t xhca_qp_num(const struct xhca_qp *qp)
{
	return qp->qpn;
}

int xhca_qp_modify(struct xhca_qp *qp, struct xhca_qp_attr *attr)
{
	attr->qpn = qp->qpn;
	return xl_call(qp->ctx, XHCA_CTL_QP_MODIFY, attr, sizeof(*attr), -1, attr, sizeof(*attr),
		       NULL);
}

int xhca_qp_set_proxy(struct xhca_qp *qp, int on)
{
	struct xhca_qp_attr a = { .mask = XHCA_QPA_PROXY, .flags = on ? XHCA_QPF_PROXY : 0 };

	return xhca_qp_modify(qp, &a);
}

int xhca_filter_add(struct xhca_qp *qp, struct xhca_pfilter *f)
{
	struct xhca_filter r = { .qpn = qp->qpn, .f = *f };
	int err;

	err = xl_call(qp->ctx, XHCA_CTL_FILTER_ADD, &r, sizeof(r), -1, &r, sizeof(r), NULL);
	if (err)
		return err;
	f->id = r.f.id;
	return (int)r.f.id;
}

int xhca_filter_del(struct xhca_ctx *ctx, uint32_t id)
{
	return xl_call(ctx, XHCA_CTL_FILTER_DEL, &id, sizeof(id), -1, NULL, 0, NULL);
}

int xhca_qp_query(struct xhca_qp *qp, struct xhca_qp_attr *attr)
{
	struct xhca_qp_info qi;
	int err;

	err = xl_call(qp->ctx, XHCA_CTL_QP_SHOW, &qp->qpn, sizeof(qp->qpn), -1, &qi, sizeof(qi),
		      NULL);
	if (!err)
		*attr = qi.attr;
	return err;
}

int xhca_qp_destroy(struct xhca_qp *qp)
{
	struct xhca_ctx *ctx = qp->ctx;
	struct xhca_qp **pp;
	int err;

	err = xl_call(ctx, XHCA_CTL_QP_DESTROY, &qp->qpn, sizeof(qp->qpn), -1, NULL, 0, NULL);
	if (err == -ENOENT && qp->rq.ctl && __atomic_load_n(&qp->rq.ctl->dead, __ATOMIC_ACQUIRE)) {
		/* Destroyed by someone else: its rings are still ours to free. */
		err = xl_call(ctx, XHCA_CTL_FREE, &qp->rq.own_alloc, sizeof(qp->rq.own_alloc), -1, NULL, 0,
			      NULL);
		if (!err && qp->sq)
			err = xl_call(ctx, XHCA_CTL_FREE, &qp->sq_alloc, sizeof(qp->sq_alloc), -1, NULL,
				      0, NULL);
	}
	if (err)
		return err;
	if (qp->rq.ctl)
		sys_munmap(qp->rq.ctl, qp->rq_len);
	if (qp->rq.sgl)
		xhca_free(ctx, qp->rq.sgl);
	if (qp->sq)
		sys_munmap(qp->sq, qp->sq_len);
	xl_direct_close(qp);
	for (pp = &ctx->qps; *pp; pp = &(*pp)->next) {
		if (*pp == qp) {
			*pp = qp->next;
			break;
		}
	}
	free(qp);
	return 0;
}

/* ---- shared receive queues ------------------------------------------------------ */

struct xhca_srq *xhca_srq_create(struct xhca_ctx *ctx, unsigned int depth, unsigned int max_sge)
{
	struct xhca_srq_attr a = { .depth = depth };
	struct xhca_srq *q = calloc(1, sizeof(*q));
	int err;

	if (!q)
		return NULL;
	err = xl_call(ctx, XHCA_CTL_SRQ_CREATE, &a, sizeof(a), -1, &a, sizeof(a), NULL);
	if (err) {
		free(q);
		errno = -err;
		return NULL;
	}
	q->len = pages_of(xhca_ring_bytes(a.depth, sizeof(struct xhca_rwqe)));
	q->rq.ctl = xl_map_ring(ctx, a.ring_off, q->len);
	if (!q->rq.ctl) {
		err = xl_fail(ctx, -EPROTO, "srq create: cannot map the ring");
		xl_call(ctx, XHCA_CTL_SRQ_DESTROY, &a.srq, sizeof(a.srq), -1, NULL, 0, NULL);
		free(q);
		errno = -err;
		return NULL;
	}
	q->ctx = ctx;
	q->id = a.srq;
	q->rq.depth = a.depth;
	q->rq.own_alloc = a.alloc;
	q->rq.e = (struct xhca_rwqe *)(q->rq.ctl + 1);
	q->next = ctx->srqs;
	ctx->srqs = q;
	err = rq_sgl(ctx, &q->rq, max_sge);
	if (err) {
		xhca_srq_destroy(q);
		errno = -err;
		return NULL;
	}
	return q;
}

int xhca_srq_destroy(struct xhca_srq *q)
{
	int err = xl_call(q->ctx, XHCA_CTL_SRQ_DESTROY, &q->id, sizeof(q->id), -1, NULL, 0, NULL);

	if (err)
		return err;
	for (struct xhca_srq **pp = &q->ctx->srqs; *pp; pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	sys_munmap(q->rq.ctl, q->len);
	if (q->rq.sgl)
		xhca_free(q->ctx, q->rq.sgl);
	free(q);
	return 0;
}

struct xhca_ring_ctl *xhca_srq_ring(struct xhca_srq *q)
{
	return q->rq.ctl;
}

struct xhca_ring_ctl *xhca_qp_sq(struct xhca_qp *qp)
{
	return qp->sq;
}
