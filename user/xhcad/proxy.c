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
 *
 * This file is the main thread's side: the proxy set up, started and
 * stopped, its handlers loaded, the proxy queue's frames handed over, what
 * the proxy sends back served (responses sent, declined messages replayed,
 * QPs to error), its counters. The proxy thread itself is proxy_thread.c,
 * below it; the mailbox to it is pxq.c (proxy_int.h: what the three share).
 */
#include <errno.h>
#include <stddef.h>
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

	p->rb = ring_buffer__new(d->m.proxy_rb, px_on_record, p, NULL);
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
		px_qp_del(p, l);
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
