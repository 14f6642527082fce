/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The main thread's side of the proxy's mailbox (proxy_int.h): what the
 * layers above tell the proxy thread (proxy_thread.c). A QP joins or leaves
 * a proxy CQ, the normal path records the end of a message (a completion or
 * none) and a flushed buffer's completion, a sync waits until the proxy is
 * done with everything given to it so far (memory may go). Low in xhcad's
 * layers: it needs no table of xhcad's, only the mailbox, so memory regions,
 * CQs and the receive path below the proxy's own work can use it.
 */
#include <stdio.h>
#include "proxy_int.h"

/* (one producer at a time: the main thread, or an engine's sync) */
int px_in_push(struct proxy *p, struct px_msg *x)
{
	int r;

	spin_lock(&p->in_lock);
	r = spsc_push(&p->in, x);
	spin_unlock(&p->in_lock);
	if (r) {
		p->lost_main++;
		msg_free(x);
		return -ENOBUFS;
	}
	p->woke = 1;
	return 0;
}

/* A message the proxy must get (a QP added or gone, a sync): waits for
 * room rather than lose it. */
static void px_in_push_wait(struct proxy *p, struct px_msg *x)
{
	for (;;) {
		int r;

		spin_lock(&p->in_lock);
		r = spsc_push(&p->in, x);
		spin_unlock(&p->in_lock);
		if (!r)
			break;
		wake(p->in_efd);
		usleep(50);
	}
	p->woke = 1;
}

void px_in_wake(struct proxy *p)
{
	if (p->woke) {
		p->woke = 0;
		wake(p->in_efd);
	}
}

void proxy_kick(struct xhcad *d)
{
	if (d->px)
		px_in_wake(d->px);
}

void proxy_qp_add(struct xhcad *d, __u32 lidx, __u16 first)
{
	struct qp_host *qh = &d->qh[lidx];
	struct px_msg *x = msg_new(PX_QP_ADD, 0);

	if (!x)
		return;
	x->lidx = lidx;
	x->gen = qh->gen;
	x->gqpn = qh->gqpn;
	x->qtype = qh->type;
	x->cq = qh->cq;
	x->csn = first;
	px_in_push_wait(d->px, x);
	qh->px.on = 1;
	px_in_wake(d->px);
}

void proxy_qp_del(struct xhcad *d, __u32 lidx)
{
	struct px_msg *x;

	if (!d->qh[lidx].px.on)
		return;
	d->qh[lidx].px.on = 0;
	x = msg_new(PX_QP_DEL, 0);
	if (!x) {
		pr_warn("proxy: out of memory: QP %u stays with the proxy\n", lidx);
		return;
	}
	x->lidx = lidx;
	px_in_push_wait(d->px, x);
	/* its CQ may go next: the proxy must be done with it */
	proxy_sync(d);
}

void proxy_record(struct xhcad *d, struct qp_host *qh, __u16 csn, const struct xhca_cqe *c)
{
	struct px_msg *x;

	if (!qh->px.on)
		return;
	x = msg_new(PX_REC, 0);
	if (!x)
		return;
	x->lidx = (__u32)(qh - d->qh);
	x->gen = qh->gen;
	x->cq = qh->cq;
	x->csn = csn;
	x->kind = c ? RO_CQE : RO_SKIP;
	if (c) {
		x->cqe = *c;
		claim(qh->cq, 1);
	}
	if (px_in_push(d->px, x) && c)
		claim(qh->cq, -1);
}

void proxy_flush_cqe(struct xhcad *d, struct qp_host *qh, const struct xhca_cqe *c)
{
	struct px_msg *x = qh->px.on ? msg_new(PX_FLUSH, 0) : NULL;

	if (!x)
		return;
	x->lidx = (__u32)(qh - d->qh);
	x->gen = qh->gen;
	x->cq = qh->cq;
	x->cqe = *c;
	claim(qh->cq, 1);
	if (px_in_push(d->px, x))
		claim(qh->cq, -1);
}

void proxy_sync(struct xhcad *d)
{
	struct proxy *p = d->px;
	struct px_msg *x;
	__u64 seq, until;

	if (!p || !p->started)
		return;
	x = msg_new(PX_SYNC, 0);
	if (!x)
		return;
	seq = x->seq = ++p->sync_seq;
	px_in_push_wait(p, x);
	px_in_wake(p);
	/* no going on without it: what it has may point at memory about to go */
	until = now_ns() + PX_SYNC_WAIT_NS;
	while (__atomic_load_n(&p->sync_done, __ATOMIC_ACQUIRE) < seq) {
		if (now_ns() > until) {
			pr_warn("proxy: no answer for 2 s (a handler stuck?); still waiting\n");
			until = now_ns() + PX_SYNC_WAIT_NS;
		}
		usleep(20);
	}
}
