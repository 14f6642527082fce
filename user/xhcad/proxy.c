/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The proxy (US 9,069,633): the patent's proxy CPU is a thread of xhcad.
 *
 * xhca_rx offloads the messages of proxy QPs that a filter matches to the
 * proxy queue (flow queue XHCA_FLOWQ_PROXY). The main thread takes them
 * from its sockets (the UMEM's rings are the main thread's) and hands them
 * over: a SEND's frames copied, a READ or ATOMIC with its region resolved
 * to host memory (resp_resolve). The proxy executes them: READ RESPONSEs
 * and ATOMIC ACKs built here and sent by the main thread on the AF_XDP TX
 * ring, SENDs given to their handler (the lock service, locksvc.c). A
 * handler may decline: the message goes back to the main thread, which
 * places it through the normal path, with its CSN.
 *
 * Every completion of a proxy CQ comes through here, in CSN order per QP
 * (reorder.c): from the normal path (main thread records, and xhca_rx's
 * records of WRITEs it placed itself, on the xhca_proxy_rb ring buffer)
 * and from the proxy's own work (a handler's result; READ and ATOMIC leave
 * a no-op). The proxy is the only writer of a proxy CQ. A gap older than
 * --proxy-timeout-ms is completed with an error and the QP goes to the
 * error state.
 *
 * The two threads share nothing but two single-producer single-consumer
 * queues (main to proxy, proxy to main), a few counters, and the CQ rings
 * (the proxy writes, the main thread reads the consumer index and promises
 * completions in cq->claimed). The proxy queue's backlog (the load limit's
 * measure) falls when the proxy has finished a request, not when the main
 * thread took it.
 */
#include <errno.h>
#include <stddef.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dlfcn.h>
#include <sys/eventfd.h>
#include <bpf/bpf.h>
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

static void qp_del(struct proxy *p, __u32 lidx)
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
			qp_del(p, x->lidx);
			break;
		case PX_SYNC:
			__atomic_store_n(&p->sync_done, x->seq, __ATOMIC_RELEASE);
			break;
		}
		msg_free(x);
	}
}

/* xhca_rx's records: WRITEs it placed whole, of QPs on proxy CQs. */
static int on_record(void *ctx, void *data, size_t len)
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

static void *px_thread(void *arg)
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

/* ---- the main thread's side -------------------------------------------------- */

int proxy_init(struct xhcad *d)
{
	struct proxy *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	d->px = p;
	p->d = d;
	p->in_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	p->out_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	p->in.v = calloc(PX_QUEUE, sizeof(void *));
	p->out.v = calloc(PX_QUEUE, sizeof(void *));
	p->qp = calloc(d->max_qps, sizeof(*p->qp));
	p->act = calloc(d->max_qps, sizeof(*p->act));
	if (p->in_efd < 0 || p->out_efd < 0 || !p->in.v || !p->out.v || !p->qp || !p->act)
		return -ENOMEM;
	locksvc_init(&p->ls);
	strcpy(p->h[XHCA_PXH_NONE].name, "none");
	strcpy(p->h[XHCA_PXH_LOCK].name, "lock");
	return 0;
}

int proxy_handler_load(struct xhcad *d, const char *spec)
{
	struct proxy *p = d->px;
	char path[PATH_MAX], *colon;
	const struct xhca_px_handler_ops *ops;
	struct px_handler *h = NULL;
	void *dl;
	int id;

	for (id = XHCA_PXH_LOCK + 1; id < XHCA_PXH_MAX; id++) {
		if (!p->h[id].ops) {
			h = &p->h[id];
			break;
		}
	}
	if (!h) {
		pr_warn("--proxy-handler %s: %d handlers at most\n", spec,
			XHCA_PXH_MAX - XHCA_PXH_LOCK - 1);
		return -ENOSPC;
	}
	snprintf(path, sizeof(path), "%s", spec);
	colon = strchr(path, ':');
	if (colon)
		*colon++ = 0;
	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		pr_warn("--proxy-handler %s: %s\n", path, dlerror());
		return -ENOENT;
	}
	ops = dlsym(dl, "xhca_px_handler");
	if (!ops || ops->abi != XHCA_PX_HANDLER_ABI || !ops->handle || !ops->name ||
	    !ops->name[0] || strlen(ops->name) >= XHCA_PX_NAME_MAX ||
	    strspn(ops->name, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(ops->name)) {
		pr_warn("--proxy-handler %s: no xhca_px_handler of ABI %d with a name of [a-z0-9-] "
			"in it (include/xhca/proxy_handler.h)\n", path, XHCA_PX_HANDLER_ABI);
		dlclose(dl);
		return -EINVAL;
	}
	for (int k = 0; k < XHCA_PXH_MAX; k++) {
		if (!strcmp(p->h[k].name, ops->name)) {
			pr_warn("--proxy-handler %s: a handler named %s is there already\n", path,
				ops->name);
			dlclose(dl);
			return -EEXIST;
		}
	}
	errno = 0;
	h->state = ops->init ? ops->init(colon) : NULL;
	if (ops->init && !h->state && errno) {
		pr_warn("--proxy-handler %s: its init refused: %s\n", path, strerror(errno));
		dlclose(dl);
		return -errno;
	}
	h->ops = ops;
	h->dl = dl;
	snprintf(h->name, sizeof(h->name), "%s", ops->name);
	pr_info("proxy handler %s (id %d) from %s\n", h->name, id, path);
	return 0;
}

int proxy_handler_known(const struct xhcad *d, __u8 id)
{
	return id < XHCA_PXH_MAX && d->px && d->px->h[id].name[0];
}

int proxy_start(struct xhcad *d)
{
	struct proxy *p = d->px;
	int err;

	p->rb = ring_buffer__new(d->m.proxy_rb, on_record, p, NULL);
	if (!p->rb)
		return -errno;
	err = pthread_create(&p->th, NULL, px_thread, p);
	if (err)
		return -err;
	pthread_setname_np(p->th, "xhcad-proxy");
	p->started = 1;
	return 0;
}

void proxy_fini(struct xhcad *d)
{
	struct proxy *p = d->px;
	struct px_msg *x;

	if (!p)
		return;
	if (p->started) {
		__atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
		wake(p->in_efd);
		pthread_join(p->th, NULL);
	}
	ring_buffer__free(p->rb);
	while (p->in.v && (x = spsc_pop(&p->in)))
		msg_free(x);
	while (p->out.v && (x = spsc_pop(&p->out)))
		msg_free(x);
	for (__u32 l = 0; p->qp && l < d->max_qps; l++)
		qp_del(p, l);
	while (p->replay) {
		x = p->replay;
		p->replay = x->qnext;
		msg_free(x);
	}
	for (int k = XHCA_PXH_LOCK + 1; k < XHCA_PXH_MAX; k++) {
		if (!p->h[k].ops)
			continue;
		if (p->h[k].ops->fini)
			p->h[k].ops->fini(p->h[k].state);
		dlclose(p->h[k].dl);
	}
	if (p->in_efd >= 0)
		close(p->in_efd);
	if (p->out_efd >= 0)
		close(p->out_efd);
	free(p->in.v);
	free(p->out.v);
	free(p->qp);
	free(p->act);
	free(p);
	d->px = NULL;
}

static void deq_add(struct xhcad *d, __u64 n)
{
	struct xhca_flowq *q = &d->fqm[XHCA_FLOWQ_PROXY];

	__atomic_store_n(&q->deq, q->deq + n, __ATOMIC_RELEASE);
}

int proxy_taking(const struct xhcad *d)
{
	const struct proxy *p = d->px;

	return p && p->started && !p->paused &&
	       __atomic_load_n(&p->handed, __ATOMIC_RELAXED) < PX_FRAMES_MAX;
}

/* One frame of the proxy queue: to the proxy, or its host reason here. */
static int hand_over(struct xhcad *d, const struct xhca_rx_meta *m, const __u8 *fr, __u32 len)
{
	const struct xhca_opinfo *oi = &xhca_opinfo_tbl[m->opcode];
	struct proxy *p = d->px;
	__u8 op = m->opcode & 0x1f;
	struct pkt_info pi;
	struct qp_host *qh;
	struct px_msg *x;
	int r;

	if (m->flowq != XHCA_FLOWQ_PROXY || m->reason != XHCA_R_TO_PROXY ||
	    !(m->flags & XHCA_MF_CSN) || !(oi->flags & XHCA_O_KNOWN) || m->lidx >= d->max_qps)
		return XHCA_H_BAD_META;
	qh = &d->qh[m->lidx];
	if (!qh->valid || qh->gen != m->gen || qh->gqpn != m->gqpn || !qh->px.on)
		return XHCA_H_STALE;
	/* taken before a rewind: it comes again, under the same CSN */
	if (qh->type == XHCA_QPT_RC && qh->resp.rewound && m->rx_ns <= qh->resp.rw_ns)
		return XHCA_H_STALE;
	qh->cnt.frames++;
	/* nothing is executed before its ICRC checked out: the message goes
	 * (the proxy drops what it has of it, its CSN skipped); an RC one is
	 * received again, under a new CSN (xhca_rx rewound: a proxy QP's
	 * count goes on) */
	if (xhca_icrc_check_frame(fr, len)) {
		proxy_record(d, qh, m->csn, NULL);
		if (qh->type == XHCA_QPT_RC)
			return resp_bad_icrc(d, qh, m);
		eng()->resp.bad_icrc++;
		return XHCA_H_BAD_ICRC;
	}
	if (xhca_op_responded(op)) {
		x = msg_new(PX_JOB, 0);
		if (!x)
			return XHCA_H_RESP_FAIL;
		pkt_parse(&pi, m, fr, len);
		r = resp_resolve(d, qh, &pi, &x->job);
		if (r) {
			/* refused here (NAK sent): no completion either way */
			msg_free(x);
			proxy_record(d, qh, m->csn, NULL);
			return r;
		}
	} else if (op <= XHCA_OP_SEND_ONLY_IMM || op == XHCA_OP_SEND_LAST_INV ||
		   op == XHCA_OP_SEND_ONLY_INV) {
		if ((__u32)m->payload_off + m->payload_len > len)
			return XHCA_H_BAD_META;
		x = msg_new(PX_FRAME, len);
		if (!x)
			return XHCA_H_UNSUPPORTED;
		memcpy(x->data, fr, len);
		x->m = *m;
		x->handler = qh->px.handler;
	} else {
		return XHCA_H_UNSUPPORTED;
	}
	x->lidx = m->lidx;
	x->gen = m->gen;
	x->csn = m->csn;
	__atomic_fetch_add(&p->handed, 1, __ATOMIC_RELAXED);
	if (px_in_push(p, x)) {
		__atomic_fetch_sub(&p->handed, 1, __ATOMIC_RELAXED);
		return XHCA_H_UNSUPPORTED;
	}
	return XHCA_H_TO_PROXY;
}

int proxy_drain(struct xhcad *d, int budget)
{
	struct proxy *p = d->px;
	int n = 0;

	while (n < budget && proxy_taking(d)) {
		const struct xhca_rx_meta *mp;
		struct xhca_rx_meta m;
		const __u8 *fr;
		__u32 len;
		int r;

		if (!xsk_head(d, XHCA_FLOWQ_PROXY, &mp, &fr, &len))
			break;
		m = *mp;
		xsk_take(d, XHCA_FLOWQ_PROXY);
		r = hand_over(d, &m, fr, len);
		eng()->host[r].packets++;
		eng()->host[r].bytes += len;
		if (r != XHCA_H_TO_PROXY)
			deq_add(d, 1); /* done with here: out of the proxy's backlog */
		xsk_done(d);
		d->fq[XHCA_FLOWQ_PROXY].frames++;
		n++;
	}
	px_in_wake(p);
	return n;
}

int proxy_fd(const struct xhcad *d)
{
	return d->px ? d->px->out_efd : -1;
}

void proxy_ack(struct xhcad *d)
{
	__u64 v;

	if (d->px && read(d->px->out_efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		pr_debug("proxy: eventfd: %s\n", strerror(errno));
}

/* A declined message through the normal path, once its QP is between
 * messages (a message being placed keeps the receive buffer it took). */
static int replay(struct xhcad *d, struct px_msg *r)
{
	struct qp_host *qh = &d->qh[r->lidx];
	int saved_valid, saved_open, saved_rec, saved_discard;
	__u32 saved_psn;
	__u16 saved_csn;

	if (!qh->valid || qh->gen != r->gen)
		return 1; /* gone: nothing to place */
	if (qh->rcv.in_msg)
		return 0;
	/* a message from the past: the sequence the normal path follows
	 * stays where it was */
	saved_valid = qh->rcv.psn_valid;
	saved_psn = qh->rcv.next_psn;
	saved_open = qh->px.open;
	saved_rec = qh->px.recorded;
	saved_csn = qh->px.csn;
	saved_discard = qh->rcv.discard;
	qh->px.open = 0;
	for (struct px_msg *x = r->next; x; x = x->next) {
		struct xhca_rx_meta m = x->m;
		int k;

		m.reason = XHCA_R_TO_FLOWQ;
		m.flowq = qh->flowq;
		qh->rcv.psn_valid = 0;
		k = deliver_frame(d, m.flowq, &m, x->data, x->len);
		eng()->host[k].packets++;
		eng()->host[k].bytes += x->len;
		CNT(d->px, replayed);
	}
	qh->rcv.psn_valid = saved_valid;
	qh->rcv.next_psn = saved_psn;
	qh->px.open = saved_open;
	qh->px.recorded = saved_rec;
	qh->px.csn = saved_csn;
	qh->rcv.discard = saved_discard;
	return 1;
}

int proxy_serve(struct xhcad *d)
{
	struct proxy *p = d->px;
	struct px_msg *x, **pp;
	__u64 done;
	int n = 0;

	if (!p || !p->started)
		return 0;
	while ((x = spsc_pop(&p->out))) {
		n++;
		switch (x->type) {
		case PX_TX:
			xsk_tx(d, x->data, x->len);
			if (x->job.op)
				resp_atomic_done(d, x->lidx, x->gen, x->job.psn,
						 x->job.s.atomic_orig);
			break;
		case PX_REPLAY:
			/* queued in order, each with its frames on next */
			x->qnext = NULL;
			if (p->replay_last)
				p->replay_last->qnext = x;
			else
				p->replay = x;
			p->replay_last = x;
			continue;
		case PX_QP_ERR: {
			struct qp_host *qh = &d->qh[x->lidx];

			if (qh->valid && qh->gen == x->gen && !qp_set_error(d, x->lidx, x->gen))
				qp_host_to_error(d, qh);
			break;
		}
		}
		msg_free(x);
	}
	/* declined messages, oldest first, each when its QP is free */
	p->replay_last = NULL;
	for (pp = &p->replay; *pp;) {
		struct px_msg *r = *pp;

		if (!replay(d, r)) {
			p->replay_last = r;
			pp = &r->qnext;
			continue;
		}
		*pp = r->qnext;
		n++;
		msg_free(r);
	}
	/* what the proxy finished leaves the proxy queue's backlog */
	done = __atomic_load_n(&p->done, __ATOMIC_ACQUIRE);
	if (done != p->done_seen) {
		deq_add(d, done - p->done_seen);
		p->done_seen = done;
	}
	if (n)
		xsk_tx_kick(d);
	return n;
}

void proxy_info(struct xhcad *d, struct xhca_proxy_info *pi)
{
	struct proxy *p = d->px;
	struct xhca_proxy_counter v[d->ncpus > 0 ? d->ncpus : 1];
	const struct xhca_flowq *q = &d->fqm[XHCA_FLOWQ_PROXY];
	__u32 zero = 0;

	memset(pi, 0, sizeof(*pi));
	if (!p)
		return;
	/* the proxy's own counters, each read whole */
	{
		const __u64 *src = &p->st.frames;
		__u64 *dst = &pi->frames;
		size_t n = (size_t)(&p->st.acks - &p->st.frames) + 1;

		for (size_t i = 0; i < n; i++)
			dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	}
	pi->lost += p->lost_main;
	pi->lock_undone = p->ls.undone; /* (read racy: a count for people) */
	pi->paused = (__u32)p->paused;
	for (int k = 0; k < XHCA_PXH_MAX; k++)
		memcpy(pi->handlers[k], p->h[k].name, sizeof(pi->handlers[k]));
	for (__u32 l = 0; l < d->max_qps; l++)
		pi->qps += (__u32)d->qh[l].px.on;
	pi->limit_high = q->high;
	pi->limit_low = q->low;
	pi->backlog = xsk_backlog(d, XHCA_FLOWQ_PROXY);
	/* xhca_rx opens the gate at the next message once the backlog is
	 * down to low: what it will do, not the flag it last left */
	pi->gate = __atomic_load_n(&q->gate, __ATOMIC_RELAXED) && pi->backlog > q->low;
	pi->gate_closes = __atomic_load_n(&q->gate_closes, __ATOMIC_RELAXED);
	pi->timeout_ms = (__u32)(d->pxc.timeout_ns / 1000000);
	pi->filters = d->flt.n;
	if (!bpf_map_lookup_elem(d->m.px_stats, &zero, v)) {
		for (int i = 0; i < d->ncpus; i++) {
			pi->offloaded += v[i].offloaded;
			pi->normal += v[i].normal;
			pi->no_offload += v[i].no_offload;
			pi->records += v[i].records;
			pi->record_fail += v[i].record_fail;
		}
	}
}

int proxy_set(struct xhcad *d, const struct xhca_proxy_set *r)
{
	if (!d->px)
		return -ENODEV;
	d->px->paused = !!r->paused;
	return 0;
}
