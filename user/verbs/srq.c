/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared receive queues: a libxhca SRQ, one ring of receive entries that
 * the QPs created on it take buffers from (xhcad's srq). Its limit event is
 * raised where completions are polled (cq.c) and where the limit is armed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "xverbs.h"

/* ---- shared receive queues ------------------------------------------------ */

static struct xv_srq *xsrq(struct ibv_srq *srq)
{
	return (struct xv_srq *)srq;
}

static uint32_t srq_posted(struct xv_srq *q)
{
	struct xhca_ring_ctl *r = xhca_srq_ring(q->x);

	return __atomic_load_n(&r->prod, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(&r->cons, __ATOMIC_ACQUIRE);
}

/* An armed SRQ whose posted buffers fell below its limit raises
 * IBV_EVENT_SRQ_LIMIT_REACHED, once (ibv_modify_srq arms it again). Run
 * where completions are polled and where the limit is armed. */
void xv_srq_check(struct xv_context *c)
{
	pthread_mutex_lock(&c->lock);
	for (struct xv_srq *q = c->srqs; q; q = q->next) {
		struct ibv_async_event ev = { .event_type = IBV_EVENT_SRQ_LIMIT_REACHED };

		if (!q->limit || srq_posted(q) >= q->limit)
			continue;
		q->limit = 0;
		c->srq_armed--;
		ev.element.srq = &q->srq;
		xv_async_post(c, &ev);
	}
	pthread_mutex_unlock(&c->lock);
}

struct ibv_srq *xv_create_srq_ex(struct ibv_context *ctx, struct ibv_srq_init_attr_ex *a)
{
	struct xv_context *c = xv_ctx(ctx);
	struct xv_srq *q;
	uint32_t depth;

	if ((a->comp_mask & ~(uint32_t)(IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE)) ||
	    ((a->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && a->srq_type != IBV_SRQT_BASIC)) {
		errno = EOPNOTSUPP; /* XRC and tag matching SRQs */
		return NULL;
	}
	if (!(a->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !a->pd || !a->attr.max_wr ||
	    a->attr.max_wr > XHCA_RING_DEPTH_MAX / 2 || a->attr.max_sge > XV_MAX_SGE ||
	    a->attr.srq_limit > a->attr.max_wr) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	depth = xv_pow2(a->attr.max_wr);
	pthread_mutex_lock(&c->lock);
	q->max_sge = a->attr.max_sge ? a->attr.max_sge : 1;
	q->x = xhca_srq_create(c->x, depth, q->max_sge);
	if (!q->x) {
		int e = errno;

		pthread_mutex_unlock(&c->lock);
		xv_log(c, "create srq of %u", a->attr.max_wr);
		free(q);
		errno = e;
		return NULL;
	}
	q->depth = depth;
	q->srq.context = ctx;
	q->srq.srq_context = a->srq_context;
	q->srq.pd = a->pd;
	pthread_mutex_init(&q->srq.mutex, NULL);
	pthread_cond_init(&q->srq.cond, NULL);
	pthread_spin_init(&q->lock, PTHREAD_PROCESS_PRIVATE);
	q->next = c->srqs;
	c->srqs = q;
	pthread_mutex_unlock(&c->lock);
	a->attr.max_wr = depth;
	a->attr.max_sge = q->max_sge;
	return &q->srq;
}

XV_EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *a)
{
	struct ibv_srq_init_attr_ex ex = {
		.srq_context = a->srq_context, .attr = a->attr,
		.comp_mask = IBV_SRQ_INIT_ATTR_PD, .pd = pd,
	};
	struct ibv_srq *srq = xv_create_srq_ex(pd->context, &ex);

	if (srq)
		a->attr = ex.attr;
	return srq;
}
XV_V11(ibv_create_srq);

XV_EXPORT int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *a, int mask)
{
	struct xv_context *c = xv_ctx(srq->context);
	struct xv_srq *q = xsrq(srq);

	if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return xv_errno(EINVAL);
	if (mask & IBV_SRQ_MAX_WR)
		return xv_errno(EINVAL); /* its ring is fixed in host memory: no resizing */
	if (mask & IBV_SRQ_LIMIT) {
		if (a->srq_limit > q->depth)
			return xv_errno(EINVAL);
		pthread_mutex_lock(&c->lock);
		c->srq_armed += (a->srq_limit != 0) - (q->limit != 0);
		q->limit = a->srq_limit;
		pthread_mutex_unlock(&c->lock);
		xv_srq_check(c); /* already below it: the event now */
	}
	return 0;
}
XV_V11(ibv_modify_srq);

XV_EXPORT int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *a)
{
	struct xv_srq *q = xsrq(srq);

	a->max_wr = q->depth;
	a->max_sge = q->max_sge;
	a->srq_limit = q->limit;
	return 0;
}
XV_V11(ibv_query_srq);

XV_EXPORT int ibv_destroy_srq(struct ibv_srq *srq)
{
	struct xv_context *c = xv_ctx(srq->context);
	struct xv_srq *q = xsrq(srq), **pp;
	int err;

	pthread_mutex_lock(&c->lock);
	err = xhca_srq_destroy(q->x);
	if (!err) {
		for (pp = &c->srqs; *pp; pp = &(*pp)->next)
			if (*pp == q) {
				*pp = q->next;
				break;
			}
		if (q->limit)
			c->srq_armed--;
	}
	pthread_mutex_unlock(&c->lock);
	if (err) {
		xv_log(c, "destroy srq");
		return xv_errno(-err); /* EBUSY: QPs still use it */
	}
	free(q);
	return 0;
}
XV_V11(ibv_destroy_srq);

static int srq_post_one(void *ring, uint64_t wr_id, const struct xhca_sge *sg, int n,
			unsigned int flags)
{
	return xhca_post_srq_recv_sg(ring, wr_id, sg, n, flags);
}

int xv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct xv_srq *q = xsrq(srq);
	int err;

	pthread_spin_lock(&q->lock);
	err = xv_post_recv_chain(xv_ctx(srq->context), srq->pd, wr, q->max_sge, srq_post_one, q->x,
				 bad);
	pthread_spin_unlock(&q->lock);
	return err;
}
