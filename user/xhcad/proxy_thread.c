/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The proxy thread (US 9,069,633; proxy.c says how the proxy works): its
 * loop (px_thread), the messages of its mailbox taken (a SEND's frames
 * joined and given to its handler, a READ or ATOMIC executed, the normal
 * path's records), xhca_rx's records from the ring buffer, every
 * completion of a proxy CQ put in CSN order and written, gaps timed out,
 * what goes back to the main thread queued. Below proxy.c, the main
 * thread's side, which starts and stops it (proxy_int.h: what they share).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <xhca/proxy_handler.h>
#include <xhca/wire.h>
#include "proxy_int.h"
#include "xhcad_mech.h"

/* ---- the proxy thread -------------------------------------------------------- */

static struct pxqp *px_qp(struct proxy *p, __u32 lidx, __u32 gen)
{
	struct pxqp *q;

	if (lidx >= p->d->max_qps)
		return NULL;
	q = &p->qp[lidx];
	return q->active && q->gen == gen ? q : NULL;
}

static void out_push(struct proxy *p, struct px_msg *x)
{
	if (spsc_push(&p->out, x)) {
		CNT(p, lost);
		msg_free(x);
		return;
	}
	p->out_woke = 1;
}

/* A completion with no place in the sequence (a flushed buffer), written
 * once nothing waits in it. */
static void flush_add(struct pxqp *q, struct px_msg *x)
{
	x->next = NULL;
	if (q->flush_last)
		q->flush_last->next = x;
	else
		q->flush = x;
	q->flush_last = x;
}

static void expire_head(struct proxy *p, struct pxqp *q, __u64 now, int overflow);
static __u64 cookie_of(__u32 lidx, __u32 gen, __u16 csn);
static int emit(void *arg, __u16 csn, const struct xhca_cqe *c);
static void csn_keep(struct proxy *p, const struct pxqp *q);

/* A record into q's reorderer; a completion that will not be written
 * gives its claim back. A record beyond the window (RO_WINDOW messages
 * wait behind a gap) gives up on the gap first, as its timeout would. */
static void put(struct proxy *p, struct pxqp *q, __u16 csn, enum ro_kind kind,
		const struct xhca_cqe *c)
{
	__u64 now = now_ns();
	int rc = ro_put(&q->ro, csn, kind, c, now);

	for (int tries = 0; rc == -ERANGE && tries < RO_WINDOW && ro_head_empty(&q->ro); tries++) {
		expire_head(p, q, now, 1);
		ro_release(&q->ro, emit, q, now);
		csn_keep(p, q);
		rc = ro_put(&q->ro, csn, kind, c, now);
	}
	if (!rc)
		return;
	if (rc == -EALREADY)
		CNT(p, late);
	else
		CNT(p, lost);
	if (kind == RO_CQE && (c->opcode == XHCA_WC_RECV || c->opcode == XHCA_WC_RECV_RDMA_WITH_IMM) &&
	    (rc == -EALREADY || rc == -ERANGE)) {
		/* it took a receive buffer: the application gets the buffer back,
		 * as flushed, after the sequence (its place was given up) */
		struct px_msg *x = msg_new(PX_FLUSH, 0);

		if (x) {
			x->cqe = *c;
			x->cqe.status = XHCA_WC_WR_FLUSH_ERR;
			flush_add(q, x);
			return;
		}
	}
	if (kind == RO_CQE)
		claim(q->cq, -1);
}

/* The CQ's next slot, if it has one. */
static int emit(void *arg, __u16 csn, const struct xhca_cqe *c)
{
	struct pxqp *q = arg;
	struct cq *cq = q->cq;
	__u32 cons = __atomic_load_n(&cq->ring->cons, __ATOMIC_ACQUIRE);

	(void)csn;
	if (cq->prod - cons >= cq->depth)
		return 1;
	cq->e[cq->prod & (cq->depth - 1)] = *c;
	__atomic_store_n(&cq->ring->prod, ++cq->prod, __ATOMIC_RELEASE);
	q->dirty = 1;
	return 0;
}

/* Where the QP's completions stand, kept in its context for an xhcad that
 * takes over the maps (the proxy thread is its one writer). */
static void csn_keep(struct proxy *p, const struct pxqp *q)
{
	__atomic_store_n(&p->d->ctxm[q - p->qp].px_csn, q->ro.next, __ATOMIC_RELAXED);
}

/* In order, what can go; then the flushed buffers, once nothing waits. */
static void release(struct proxy *p, struct pxqp *q, __u64 now)
{
	__u64 before = q->ro.released, skipped = q->ro.skipped;

	ro_release(&q->ro, emit, q, now);
	csn_keep(p, q);
	__atomic_fetch_add(&p->st.released, q->ro.released - before, __ATOMIC_RELAXED);
	__atomic_fetch_add(&p->st.skipped, q->ro.skipped - skipped, __ATOMIC_RELAXED);
	while (q->flush && !q->ro.waiting) {
		struct px_msg *x = q->flush;

		if (emit(q, 0, &x->cqe))
			break;
		q->flush = x->next;
		if (!q->flush)
			q->flush_last = NULL;
		x->next = NULL;
		msg_free(x);
		CNT(p, released);
	}
}

/* The application hears of what was written, when it sleeps on the CQ. */
static void notify(struct pxqp *q)
{
	struct cq *cq = q->cq;
	__u64 one = 1;

	if (!q->dirty)
		return;
	q->dirty = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST); /* ring.h: the application may be going to sleep */
	if (cq->efd >= 0 && __atomic_load_n(&cq->ring->armed, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(&cq->ring->armed, 0, __ATOMIC_SEQ_CST) &&
	    write(cq->efd, &one, sizeof(one)) < 0)
		pr_debug("proxy: cq %u eventfd: %s\n", cq->id, strerror(errno));
}

static void qp_drop_msg(struct pxqp *q)
{
	msg_free(q->first);
	q->first = q->last = NULL;
	q->in_msg = 0;
	q->nbytes = 0;
}

static void qp_add(struct proxy *p, struct px_msg *x)
{
	struct pxqp *q = &p->qp[x->lidx];

	if (q->active)
		return;
	if (ro_init(&q->ro, x->csn)) {
		pr_warn("proxy: no memory for the reorderer of QP 0x%06x\n", x->gqpn);
		return;
	}
	csn_keep(p, q);
	q->active = 1;
	q->gen = x->gen;
	q->gqpn = x->gqpn;
	q->type = x->qtype;
	q->cq = x->cq;
	p->act[p->nact++] = x->lidx;
}

void px_qp_del(struct proxy *p, __u32 lidx)
{
	struct pxqp *q = &p->qp[lidx];

	unsigned int n = 0;

	if (!q->active)
		return;
	qp_drop_msg(q);
	/* what it had promised its CQ will not be written: the claims go back */
	for (struct px_msg *x = q->flush; x; x = x->next)
		n++;
	claim(q->cq, -(int)(n + ro_cqes(&q->ro)));
	msg_free(q->flush);
	ro_fini(&q->ro);
	/* and no lock is given to a request of a QP that is gone */
	locksvc_cancel(&p->ls, cookie_of(lidx, q->gen, 0), ~0xffffull);
	memset(q, 0, sizeof(*q));
	for (__u32 i = 0; i < p->nact; i++) {
		if (p->act[i] == lidx) {
			p->act[i] = p->act[--p->nact];
			break;
		}
	}
}

/* The lock service's cookie: which QP and message a late answer is for. */
static __u64 cookie_of(__u32 lidx, __u32 gen, __u16 csn)
{
	return (__u64)lidx << 48 | (__u64)gen << 16 | csn;
}

static void result_cqe(struct proxy *p, struct pxqp *q, __u16 csn, __u32 result, __u32 bytes,
		       __u64 rx_ns)
{
	struct xhca_cqe c = {
		.status = XHCA_WC_SUCCESS, .opcode = XHCA_WC_PROXY, .byte_len = bytes,
		.imm_data = result, .qp_num = q->gqpn, .rx_ns = rx_ns,
	};

	claim(q->cq, 1);
	put(p, q, csn, RO_CQE, &c);
}

static void lock_done(void *arg, __u64 cookie, enum lock_result r)
{
	struct proxy *p = arg;
	struct pxqp *q = px_qp(p, (__u32)(cookie >> 48), (__u32)(cookie >> 16));

	if (r == LOCK_GRANTED)
		CNT(p, lock_granted);
	else if (r == LOCK_REFUSED)
		CNT(p, lock_refused);
	if (q)
		result_cqe(p, q, (__u16)cookie, (__u32)r, 0, now_ns());
}

/* Gives a declined message back to the normal path, whole, with its CSN. */
static void decline(struct proxy *p, struct pxqp *q, __u32 lidx)
{
	struct px_msg *x = msg_new(PX_REPLAY, 0);

	CNT(p, declined);
	if (!x) {
		qp_drop_msg(q);
		CNT(p, lost);
		return;
	}
	x->lidx = lidx;
	x->gen = q->gen;
	x->next = q->first;
	q->first = q->last = NULL;
	q->in_msg = 0;
	q->nbytes = 0;
	out_push(p, x);
}

/* The whole SEND (its packets joined) to its handler: the lock service, or
 * an application's (--proxy-handler). Returns the handler's result, 0 for a
 * decline (also when there is no handler, or the message is too long), or
 * LOCK_WAITING's 0 with *waiting set. */
static __u32 run_handler(struct proxy *p, struct pxqp *q, __u32 lidx, int *waiting)
{
	__u8 hid = q->first->handler;
	struct xhca_px_request rq = { .qpn = q->gqpn, .rx_ns = q->last->m.rx_ns };
	enum lock_result r;
	__u8 *buf;
	__u32 res;

	*waiting = 0;
	if (hid >= XHCA_PXH_MAX || (hid != XHCA_PXH_LOCK && !p->h[hid].ops) ||
	    q->nbytes > PX_MSG_MAX)
		return XHCA_PX_DECLINE;
	buf = malloc(q->nbytes ? q->nbytes : 1);
	if (!buf)
		return XHCA_PX_DECLINE;
	for (struct px_msg *x = q->first; x; x = x->next) {
		memcpy(buf + rq.len, x->data + x->m.payload_off, x->m.payload_len);
		rq.len += x->m.payload_len;
	}
	rq.msg = buf;
	if (hid != XHCA_PXH_LOCK) {
		res = p->h[hid].ops->handle(p->h[hid].state, &rq);
		if (res != XHCA_PX_DECLINE)
			CNT(p, handled);
		free(buf);
		return res;
	}
	r = locksvc_handle(&p->ls, buf, rq.len, cookie_of(lidx, q->gen, q->csn), now_ns(),
			   lock_done, p);
	free(buf);
	if (r == LOCK_GRANTED)
		CNT(p, lock_granted);
	else if (r == LOCK_REFUSED)
		CNT(p, lock_refused);
	else if (r == LOCK_RELEASED)
		CNT(p, lock_released);
	*waiting = r == LOCK_WAITING;
	return r == LOCK_DECLINED || r == LOCK_WAITING ? XHCA_PX_DECLINE : (__u32)r;
}

static int tx_out(void *arg, const struct xhca_pkt_spec *s);

static void handle_send(struct proxy *p, struct pxqp *q, __u32 lidx)
{
	int waiting;
	__u32 res;

	CNT(p, sends);
	res = run_handler(p, q, lidx, &waiting);
	if (res == XHCA_PX_DECLINE && !waiting) {
		decline(p, q, lidx);
		return;
	}
	/* a result now, or later (lock_done()): later messages wait behind */
	if (!waiting)
		result_cqe(p, q, q->csn, res, q->nbytes, q->last->m.rx_ns);
	/* taken: an RC requester gets its ACK (no credit count: no receive
	 * buffer was used) */
	if (q->type == XHCA_QPT_RC && (q->last->m.flags & XHCA_MF_ACKREQ) &&
	    !resp_aeth(&p->d->ctxm[lidx], q->last->data, q->last->len, q->last->m.psn,
		       resp_msn(&p->d->ctxm[lidx], q->csn) + 1, 0x1f, tx_out, p))
		CNT(p, acks);
	qp_drop_msg(q);
}

static void take_frame(struct proxy *p, struct px_msg *x)
{
	const struct xhca_opinfo *oi = &xhca_opinfo_tbl[x->m.opcode];
	struct pxqp *q = px_qp(p, x->lidx, x->gen);

	CNT(p, frames);
	if (!q) {
		msg_free(x);
		return;
	}
	if (oi->flags & XHCA_O_START) {
		if (q->in_msg) {
			/* its end never came: nothing of it happened */
			qp_drop_msg(q);
			CNT(p, lost);
		}
		q->in_msg = 1;
		q->csn = x->csn;
	} else if (!q->in_msg || q->csn != x->csn) {
		CNT(p, lost); /* the rest of a message whose start did not come */
		msg_free(x);
		return;
	}
	x->next = NULL;
	if (q->last)
		q->last->next = x;
	else
		q->first = x;
	q->last = x;
	q->nbytes += x->m.payload_len;
	if (oi->flags & XHCA_O_END)
		handle_send(p, q, x->lidx);
}

/* A response frame, built in the message to the main thread, which sends
 * it (the UMEM is the main thread's). */
static int tx_out(void *arg, const struct xhca_pkt_spec *s)
{
	struct proxy *p = arg;
	int len = xhca_pkt_len(s);
	struct px_msg *x = len > 0 ? msg_new(PX_TX, (__u32)len) : NULL;

	if (!x)
		return len < 0 ? len : -ENOMEM;
	if (xhca_pkt_build(s, x->data, (size_t)len) != len) {
		msg_free(x);
		return -EINVAL;
	}
	if (p->tagging && p->tagging->job.op != XHCA_OP_READ_REQ) {
		/* an ATOMIC's result: the main thread keeps it for duplicates */
		x->lidx = p->tagging->lidx;
		x->gen = p->tagging->gen;
		x->job.op = p->tagging->job.op;
		x->job.psn = p->tagging->job.psn;
		x->job.s.atomic_orig = p->tagging->job.s.atomic_orig;
	}
	out_push(p, x);
	CNT(p, tx_frames);
	return 0;
}

static void take_job(struct proxy *p, struct px_msg *x)
{
	struct pxqp *q = px_qp(p, x->lidx, x->gen);

	CNT(p, frames);
	p->tagging = x;
	if (resp_execute(p->d->hm.base, &x->job, tx_out, p))
		CNT(p, lost);
	p->tagging = NULL;
	if (x->job.op == XHCA_OP_READ_REQ)
		CNT(p, reads);
	else
		CNT(p, atomics);
	if (q)
		put(p, q, x->csn, RO_SKIP, NULL); /* a no-op in the sequence */
	msg_free(x);
}

static void inbox(struct proxy *p)
{
	struct px_msg *x;

	while ((x = spsc_pop(&p->in))) {
		struct pxqp *q;

		switch (x->type) {
		case PX_FRAME:
		case PX_JOB:
			__atomic_fetch_sub(&p->handed, 1, __ATOMIC_RELAXED);
			if (x->type == PX_FRAME)
				take_frame(p, x);
			else
				take_job(p, x);
			__atomic_fetch_add(&p->done, 1, __ATOMIC_RELEASE);
			p->out_woke = 1; /* the main thread moves the backlog */
			continue;
		case PX_REC:
			q = px_qp(p, x->lidx, x->gen);
			if (q && x->kind == RO_SKIP && q->in_msg && q->csn == x->csn) {
				/* the SEND it assembles ended here (a bad frame):
				 * nothing of it happens, the rest of it is dropped */
				qp_drop_msg(q);
				CNT(p, lost);
			}
			if (q)
				put(p, q, x->csn, (enum ro_kind)x->kind, &x->cqe);
			else if (x->kind == RO_CQE)
				claim(x->cq, -1);
			break;
		case PX_FLUSH:
			q = px_qp(p, x->lidx, x->gen);
			if (q) {
				flush_add(q, x);
				continue;
			}
			claim(x->cq, -1); /* (its QP never made it here) */
			break;
		case PX_QP_ADD:
			qp_add(p, x);
			break;
		case PX_QP_DEL:
			px_qp_del(p, x->lidx);
			break;
		case PX_SYNC:
			__atomic_store_n(&p->sync_done, x->seq, __ATOMIC_RELEASE);
			break;
		}
		msg_free(x);
	}
}

/* xhca_rx's records: WRITEs it placed whole, of QPs on proxy CQs. */
int px_on_record(void *ctx, void *data, size_t len)
{
	struct proxy *p = ctx;
	struct xhca_proxy_rec r;
	struct pxqp *q;

	if (len < sizeof(r))
		return 0;
	memcpy(&r, data, sizeof(r));
	q = px_qp(p, r.lidx, r.gen);
	if (q) {
		struct xhca_cqe c = {
			.status = XHCA_WC_SUCCESS, .opcode = XHCA_WC_RECV_RDMA_WRITE,
			.byte_len = r.len, .qp_num = r.gqpn, .rx_ns = r.rx_ns,
		};

		claim(q->cq, 1);
		put(p, q, (__u16)r.csn, RO_CQE, &c);
	}
	return 0;
}

/*
 * The head's message will not complete: its gap timed out, or (overflow) the
 * window is full behind it. One the proxy still has (a lock request waiting)
 * and any message of an RC QP complete with an error and the QP goes to the
 * error state. A UD or UC message the proxy never got was lost on the way
 * to xhcad (a socket's ring overflowed: the kernel counts it) and leaves a
 * skip, as an unreliable transport loses a message.
 */
static void expire_head(struct proxy *p, struct pxqp *q, __u64 now, int overflow)
{
	__u32 lidx = (__u32)(q - p->qp);
	struct xhca_cqe c = {
		.status = XHCA_WC_RESP_TIMEOUT_ERR, .opcode = XHCA_WC_RECV, .qp_num = q->gqpn,
		.rx_ns = now,
	};
	struct px_msg *x;

	__u64 ck = cookie_of(lidx, q->gen, q->ro.next);
	int waited = locksvc_cancel(&p->ls, ck, ~0ull) > 0; /* its answer is not wanted now */

	if (q->failed || (q->type != XHCA_QPT_RC && !waited)) {
		/* (in the error state already: its one error completion is out) */
		ro_fill_gap(&q->ro, RO_SKIP, NULL);
		CNT(p, lost);
		return;
	}
	q->failed = 1;
	pr_info("proxy: QP 0x%06x: no completion for sequence number %u %s: error\n", q->gqpn,
		q->ro.next, overflow ? "with the reorder window full" : "in time");
	claim(q->cq, 1);
	ro_fill_gap(&q->ro, RO_CQE, &c);
	CNT(p, gaps);
	x = msg_new(PX_QP_ERR, 0);
	if (x) {
		x->lidx = lidx;
		x->gen = q->gen;
		out_push(p, x);
	}
}

/* Gaps too old. */
static void gaps(struct proxy *p, struct pxqp *q, __u64 now)
{
	if (ro_gap_expired(&q->ro, now, p->d->pxc.timeout_ns))
		expire_head(p, q, now, 0);
}

void *px_thread(void *arg)
{
	struct proxy *p = arg;
	struct pollfd pfd[2] = {
		{ .fd = p->in_efd, .events = POLLIN },
		{ .fd = ring_buffer__epoll_fd(p->rb), .events = POLLIN },
	};

	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		int busy = 0;
		__u64 now, v;

		/* a short tick while something waits on time: gaps, lock waiters,
		 * completions held by a full CQ */
		for (__u32 i = 0; i < p->nact && !busy; i++)
			busy = p->qp[p->act[i]].ro.waiting || p->qp[p->act[i]].flush;
		poll(pfd, 2, busy ? 1 : 20);
		if ((pfd[0].revents & POLLIN) && read(p->in_efd, &v, sizeof(v)) < 0)
			v = 0;
		inbox(p);
		ring_buffer__consume(p->rb);
		now = now_ns();
		locksvc_tick(&p->ls, now, lock_done, p);
		for (__u32 i = 0; i < p->nact; i++) {
			__u32 l = p->act[i];
			struct pxqp *q = &p->qp[l];

			release(p, q, now);
			gaps(p, q, now);
			release(p, q, now);
			notify(q);
		}
		if (p->out_woke) {
			p->out_woke = 0;
			wake(p->out_efd);
		}
	}
	return NULL;
}
