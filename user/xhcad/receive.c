/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The receive side of a QP on the host: its receive queue (its own ring or
 * an SRQ's) and the messages placed into it. A SEND's payload goes into the
 * QP's next posted receive buffer; FIRST, MIDDLE and LAST are reassembled
 * into one buffer; the LAST (or ONLY) writes the completion. UD buffers
 * start with the 40-byte GRH, as verbs and RXE do. A WRITE xhca_rx left to
 * xhcad (a scattered region) is placed here too. A QP in the error state
 * has its posted buffers completed with WR_FLUSH_ERR, as far as its CQ has
 * room. Which frame comes here is dispatch.c's choice; completions of a
 * proxy CQ go to the proxy (pxq.c), which writes them in order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <bpf/bpf.h>
#include <xhca/pkt.h>
#include <xhca/wire.h>
#include "log.h"
#include "xhcad_transport.h"

#define GRH_LEN 40
#define BTH_LEN ((__u32)sizeof(struct xhca_bth))

struct qp_host *qp_host_of(struct xhcad *d, const struct xhca_rx_meta *m)
{
	struct qp_host *qh;

	if (m->lidx >= d->max_qps)
		return NULL;
	qh = &d->qh[m->lidx];
	return qh->valid && qh->gen == m->gen && qh->gqpn == m->gqpn ? qh : NULL;
}

/* ---- receive queue and completion queue -------------------------------- */

/* xhcad's consumer index of the QP's receive queue (its SRQ's; the one it
 * shares with xhca_rx, --recv-fast). */
static __u32 *rq_cons(struct qp_host *qh)
{
	if (qh->rcv.srq)
		return &qh->rcv.srq->cons;
	return qh->rcv.rf ? &qh->rcv.rf->rq_cons : &qh->rcv.rq_cons;
}

__u32 recv_cons(const struct qp_host *qh)
{
	if (qh->rcv.srq)
		return qh->rcv.srq->cons;
	return qh->rcv.rf ? __atomic_load_n(&qh->rcv.rf->rq_cons, __ATOMIC_RELAXED)
			  : qh->rcv.rq_cons;
}

/* The receive queue's head entry, copied: 0 when it has none. A producer
 * index the ring cannot hold (more than its depth ahead of xhcad's consumer
 * index, or behind it) is garbage from the application: the ring is taken
 * as empty and marked broken (rq_broken, the QP goes to error). */
static int rq_head(struct qp_host *qh, struct xhca_rwqe *w)
{
	__u32 cons, prod;

	if (!qh->rcv.rq || qh->rcv.rq_broken)
		return 0;
	cons = *rq_cons(qh);
	prod = qh->rcv.rq_prod_cache;
	/* (xhca_rx may have taken entries past the cached index) */
	if ((__s32)(prod - cons) <= 0 || qh->rcv.srq) {
		/* read the application's index only when the cached one is used up */
		prod = qh->rcv.rq_prod_cache = __atomic_load_n(&qh->rcv.rq->prod, __ATOMIC_ACQUIRE);
		if (prod == cons)
			return 0;
		if (prod - cons > qh->rcv.rq_depth) {
			qh->rcv.rq_broken = 1;
			return 0;
		}
	}
	*w = qh->rcv.rqe[cons & (qh->rcv.rq_depth - 1)];
	return 1;
}

/* A queue of the QP's held garbage indexes (rq_broken, an SQ's broken): the
 * QP goes to the error state, its application gets IBV_EVENT_QP_FATAL, its
 * buffers are flushed as far as they can be; no other QP notices. */
static int qp_fatal(struct xhcad *d, struct qp_host *qh)
{
	if (qp_set_error(d, (__u32)(qh - d->qh), qh->gen))
		return -1; /* in error already */
	if (qh->sq)
		__atomic_store_n(&qh->sq->ring->qp_err, XHCA_QPE_FATAL, __ATOMIC_RELEASE);
	qp_host_to_error(d, qh);
	return 0;
}

void qp_ring_fatal(struct xhcad *d, struct qp_host *qh, const char *which)
{
	if (qp_fatal(d, qh))
		return;
	eng()->ring_faults++;
	pr_info("QP 0x%06x: error state (its %s queue's producer index is garbage)\n", qh->gqpn,
		which);
}

/* CQs full for longer than --cq-stall-ms while frames wait for them (their
 * application stopped polling): overrun, as an HCA's CQ that overflows,
 * but only after that long. The CQ takes no more completions, its
 * application gets IBV_EVENT_CQ_ERR, its QPs go to the error state: the
 * flow queues it held (other sessions' QPs share them) go on. */
void qp_cq_overruns(struct xhcad *d)
{
	__u64 now = now_ns();

	for (struct cq *cq = d->app.cqs; d->cq_stall_ns && cq; cq = cq->next) {
		if (cq->overrun || cq->proxy || !cq->waiting || now - cq->full_since < d->cq_stall_ns ||
		    cq_used(cq) < cq_room(cq))
			continue;
		cq->overrun = 1;
		eng()->cq_overruns++;
		__atomic_store_n(&cq->ring->qp_err, XHCA_CQ_OVERRUN, __ATOMIC_RELEASE);
		pr_info("CQ %u: overrun (full for %llu ms with completions waiting); its QPs go to "
			"the error state\n", cq->id, (unsigned long long)((now - cq->full_since) / 1000000));
		for (__u32 l = 0; l < d->max_qps; l++) {
			struct qp_host *qh = &d->qh[l];

			if (qh->valid && (qh->cq == cq || (qh->sq && qh->sq->cq == cq)))
				qp_fatal(d, qh);
		}
		flowq_unblock(d, cq);
	}
}

/* ---- SENDs xhca_rx places (--recv-fast: struct xhca_rfast's rules) ----- */

/* Whether xhca_rx is to send the ACKs of the QP's SENDs and WRITEs it
 * places (--xdp-ack on, or auto resolved on): an RC QP over IPv4 (ack.bpf.h
 * builds no other). */
static int xdp_ack_wanted(const struct xhcad *d, const struct xhca_qp_ctx *c)
{
	return d->xdp_ack == XDP_ACK_ON && c->type == XHCA_QPT_RC && !(c->flags & XHCA_QPF_IPV6);
}

void recv_fast_on(struct xhcad *d, struct qp_host *qh, __u32 lidx)
{
	const struct xhca_qp_ctx *c = &d->ctxm[lidx];
	const struct hm_alloc *a;
	struct xhca_rfast *rf;
	__u32 slot;

	if (!d->recv_fast || !d->rfm || qh->rcv.rf || !qh->valid ||
	    (c->state != XHCA_QPS_RTR && c->state != XHCA_QPS_RTS) || !qh->rcv.rq || qh->rcv.srq ||
	    qh->rcv.rq_broken || qh->gqpn == XHCA_QPN_GSI || !qh->cq ||
	    qh->cq->proxy || c->action != XHCA_ACT_HOST ||
	    (c->flags & (XHCA_QPF_PROXY | XHCA_QPF_PROXY_CQ | XHCA_QPF_ICRC_FIRST)))
		return;
	slot = cq_slot(d, qh->cq);
	a = hm_find(d, qh->rcv.rq_alloc);
	if (slot >= XHCA_CQX_MAX || !a || !a->contiguous)
		return;
	rf = &d->rfm[lidx];
	spin_lock((int *)&rf->lock);
	rf->pend = 0;
	rf->rq_depth = qh->rcv.rq_depth;
	rf->rq_ring = hm_base(a, 0);
	rf->rq_cons = qh->rcv.rq_cons;
	rf->rq_prod = rf->rq_cons; /* (none known: xhca_rx reads the ring's) */
	rf->cq = slot;
	rf->owner = qh->owner;
	rf->placed = 0;
	rf->owe = 0;
	rf->flags = xdp_ack_wanted(d, c) ? XHCA_RFF_XDP_ACK : 0;
	rf->gen = qh->gen;
	qh->rcv.rf = rf;
	spin_unlock((int *)&rf->lock);
}

void recv_fast_off(struct qp_host *qh)
{
	struct xhca_rfast *rf = qh->rcv.rf;
	int mine;

	if (!rf)
		return;
	/* (from inside the frame this engine holds it for: a NAK's error) */
	mine = eng()->rf_held == rf;
	if (!mine)
		spin_lock((int *)&rf->lock);
	qh->rcv.rq_cons = rf->rq_cons;
	qh->cnt.completions += rf->placed; /* (xhca_rx's, counted on) */
	rf->placed = 0;
	rf->gen = 0;
	qh->rcv.rf = NULL;
	if (!mine)
		spin_unlock((int *)&rf->lock);
}

/* Whether xhca_rx counted the frame in its QP's pend (recv.bpf.h's
 * recv_count): a request, a SEND or with an immediate, but for a SEND it
 * placed itself and sends on for its ACK, and a multicast copy (xhcad's
 * replication made it; xhca_rx counted it for no member). */
static int fast_counted(const struct xhca_rx_meta *m, const struct pkt_info *pi)
{
	const struct xhca_opinfo *oi = pi->oi;

	if (!oi || !(oi->flags & XHCA_O_REQ) || !(recv_is_send(pi->op) || (oi->flags & XHCA_H_IMM)) ||
	    (m->flags & XHCA_MF_MCAST))
		return 0;
	return !(m->reason == XHCA_R_PLACED_ACK && recv_is_send(pi->op));
}

struct xhca_rfast *recv_fast_hold(struct xhcad *d, const struct xhca_rx_meta *m,
				  const struct pkt_info *pi)
{
	struct qp_host *qh = qp_host_of(d, m);
	struct xhca_rfast *rf = qh ? qh->rcv.rf : NULL;

	if (!rf || rf->gen != m->gen || !fast_counted(m, pi))
		return NULL;
	spin_lock((int *)&rf->lock);
	eng()->rf_held = rf;
	return rf;
}

#define RF_DONE_MAX 256

/* n frames' counts taken back from pend or owe, never below 0:
 * recv_fast_on set them to 0 while frames counted before were still on
 * their way (the QP off and on again meanwhile), and below 0 they would
 * keep xhca_rx from placing (from acknowledging) for the QP's life. */
static void count_down(__u32 *v, __u32 n)
{
	__u32 x = __atomic_load_n(v, __ATOMIC_RELAXED);

	while (x && !__atomic_compare_exchange_n(v, &x, x > n ? x - n : 0, 0, __ATOMIC_RELEASE,
						 __ATOMIC_RELAXED))
		;
}

static void pend_down(struct xhca_rfast *rf)
{
	count_down(&rf->pend, 1);
}

void recv_fast_release(struct xhca_rfast *rf)
{
	struct engine *e = eng();

	if (!rf)
		return;
	e->rf_held = NULL;
	spin_unlock((int *)&rf->lock);
	/* its completion is staged: pend goes down once it is written */
	if (e->in_round && (e->rf_done || (e->rf_done = calloc(RF_DONE_MAX, sizeof(rf))))) {
		if (e->nrf_done == RF_DONE_MAX)
			recv_fast_done();
		e->rf_done[e->nrf_done++] = rf;
		return;
	}
	cq_flush();
	pend_down(rf);
}

void recv_fast_done(void)
{
	struct engine *e = eng();

	if (!e->nrf_done)
		return;
	cq_flush();
	for (__u32 i = 0; i < e->nrf_done; i++)
		pend_down(e->rf_done[i]);
	e->nrf_done = 0;
}

void recv_owe_note(struct xhcad *d, const struct xhca_rx_meta *m)
{
	struct qp_host *qh = qp_host_of(d, m);
	struct xhca_rfast *rf = qh ? qh->rcv.rf : NULL;
	struct engine *e = eng();

	if (!rf || rf->gen != m->gen || !(rf->flags & XHCA_RFF_XDP_ACK) ||
	    (m->opcode >> 5) != XHCA_QPT_RC || !(xhca_opinfo_tbl[m->opcode].flags & XHCA_O_REQ) ||
	    (m->flags & XHCA_MF_MCAST))
		return;
	/* (without the list the count stays up: xhcad sends the QP's ACKs) */
	if (!e->owe_qps && !(e->owe_qps = calloc(d->max_qps, sizeof(*e->owe_qps))))
		return;
	if (!qh->rcv.owe_taken++)
		e->owe_qps[e->nowe_qps++] = m->lidx;
}

void recv_owe_done(struct xhcad *d)
{
	struct engine *e = eng();

	for (__u32 i = 0; i < e->nowe_qps; i++) {
		struct qp_host *qh = &d->qh[e->owe_qps[i]];

		if (qh->rcv.rf)
			count_down(&qh->rcv.rf->owe, qh->rcv.owe_taken);
		qh->rcv.owe_taken = 0;
	}
	e->nowe_qps = 0;
}

void recv_xdp_ack_off(struct xhcad *d)
{
	for (__u32 l = 0; l < d->max_qps; l++)
		if (d->qh[l].rcv.rf)
			__atomic_and_fetch(&d->qh[l].rcv.rf->flags, ~XHCA_RFF_XDP_ACK,
					   __ATOMIC_RELAXED);
}

/* RESET: a broken receive queue starts over, empty. */
void recv_reset(struct qp_host *qh)
{
	qh->rcv.held = 0; /* (verbs: what a reset QP had posted goes) */
	if (!qh->rcv.rq_broken)
		return;
	qh->rcv.rq_broken = 0;
	if (!qh->rcv.srq) {
		qh->rcv.rq_cons = qh->rcv.rq_prod_cache = __atomic_load_n(&qh->rcv.rq->prod,
									 __ATOMIC_ACQUIRE);
		__atomic_store_n(&qh->rcv.rq->cons, qh->rcv.rq_cons, __ATOMIC_RELEASE);
	}
}

static void rq_pop(struct qp_host *qh)
{
	__atomic_store_n(&qh->rcv.rq->cons, ++*rq_cons(qh), __ATOMIC_RELEASE);
}

/* The receive queue's head entry for a message that starts: an SRQ's
 * leaves the shared ring at once, under its lock (QPs of other engines
 * take from it too), and is the QP's (held) until its message ends. */
static int rq_take(struct qp_host *qh, struct xhca_rwqe *w)
{
	struct srq *q = qh->rcv.srq;
	int r;

	if (!q)
		return rq_head(qh, w);
	spin_lock(&q->lock);
	r = rq_head(qh, w);
	if (r) {
		rq_pop(qh);
		qh->rcv.held = 1;
	}
	spin_unlock(&q->lock);
	return r;
}

/* Writes a completion for the RQ head and consumes it. The ready check left
 * a slot. The application hears of it at the end of the batch (cq_notify).
 * A proxy CQ's goes to the proxy, which writes it in its message's turn
 * (a flushed buffer's, with no message, after the sequence). */
static void complete_rq(struct xhcad *d, struct qp_host *qh, const struct xhca_cqe *c, int flush)
{
	struct cq *cq = qh->cq;

	/* The receive entry is free before the completion says so: an
	 * application that reposts at once must find the room. (An SRQ's
	 * left the ring when its message began.) */
	if (qh->rcv.held)
		qh->rcv.held = 0;
	else
		rq_pop(qh);
	if (cq->proxy) {
		if (flush) {
			proxy_flush_cqe(d, qh, c);
		} else {
			proxy_record(d, qh, qh->px.csn, c);
			qh->px.recorded = 1;
		}
		qh->cnt.completions++;
		return;
	}
	if (cq->overrun)
		return; /* (its QP is in error: this is a flush) */
	cq_write(cq, c);
	qh->cnt.completions++;
}

static void complete(struct xhcad *d, struct qp_host *qh, const struct xhca_cqe *c)
{
	complete_rq(d, qh, c, 0);
}

static void complete_err(struct xhcad *d, struct qp_host *qh, __u32 status, int reason,
			 const struct xhca_rx_meta *m)
{
	struct xhca_cqe c = {
		.wr_id = qh->rcv.wqe.wr_id, .status = status, .opcode = XHCA_WC_RECV,
		.qp_num = qh->gqpn, .vendor_err = (__u32)reason, .rx_ns = m->rx_ns,
	};

	complete(d, qh, &c);
	qh->cnt.errors++;
}

/* The IP header of the frame, in GRH form (RXE's rdma_network_hdr). */
static int make_grh(const __u8 *fr, __u32 len, __u8 grh[GRH_LEN])
{
	__u32 off = 12;
	__u16 type = (__u16)(fr[off] << 8 | fr[off + 1]);

	for (int i = 0; i < 2 && (type == ETH_P_8021Q || type == ETH_P_8021AD); i++) {
		off += 4;
		type = (__u16)(fr[off] << 8 | fr[off + 1]);
	}
	off += 2;
	memset(grh, 0, GRH_LEN);
	if (type == ETH_P_IP && off + 20 <= len) {
		memcpy(grh + 20, fr + off, 20);
		return 0;
	}
	if (type == ETH_P_IPV6 && off + 40 <= len) {
		memcpy(grh, fr + off, 40);
		return 0;
	}
	return -EINVAL;
}

int recv_is_send(__u8 op)
{
	return op <= XHCA_OP_SEND_ONLY_IMM || op == XHCA_OP_SEND_LAST_INV ||
	       op == XHCA_OP_SEND_ONLY_INV;
}

void pkt_parse(struct pkt_info *pi, const struct xhca_rx_meta *m, const __u8 *fr, __u32 len)
{
	__u32 hdr = xhca_opinfo_tbl[m->opcode].hdr_len, off;

	pi->oi = &xhca_opinfo_tbl[m->opcode];
	pi->m = m;
	pi->fr = fr;
	pi->len = len;
	pi->op = m->opcode & 0x1f;
	pi->bth = NULL;
	if (!(m->flags & (XHCA_MF_PLACED | XHCA_MF_MSN)) && m->reason != XHCA_R_DUP_TO_FLOWQ &&
	    m->reason != XHCA_R_SEQ_NAK_TO_FLOWQ) {
		/* payload_off and payload_len (xhca_rx_meta's union) */
		if (m->payload_off >= hdr && (__u32)m->payload_off + m->payload_len <= len)
			pi->bth = fr + m->payload_off - hdr;
	} else if (!recv_bth_offset(fr, len, &off) && off + hdr <= len) {
		pi->bth = fr + off;
	}
}

/* Where the BTH starts: after Ethernet, VLAN tags, IP and UDP (xhca_rx
 * passed IPv6 extension headers to the kernel, so none are here). */
int recv_bth_offset(const __u8 *fr, __u32 len, __u32 *off)
{
	__u32 o = 12;
	__u16 type = (__u16)(fr[o] << 8 | fr[o + 1]);

	for (int i = 0; i < 2 && (type == ETH_P_8021Q || type == ETH_P_8021AD); i++) {
		o += 4;
		type = (__u16)(fr[o] << 8 | fr[o + 1]);
	}
	o += 2;
	if (type == ETH_P_IP && o + 20 <= len)
		o += (fr[o] & 0xf) * 4u;
	else if (type == ETH_P_IPV6 && o + 40 <= len)
		o += 40;
	else
		return -EINVAL;
	o += 8; /* UDP */
	if (o + BTH_LEN > len)
		return -EINVAL;
	*off = o;
	return 0;
}

/* Whether region m holds the same host memory as [off, off + len) of
 * allocation a: a region of another allocation, which a later one joined
 * (the verbs library's overlapping regions), looked for page by page. */
static int region_holds(struct xhcad *d, const struct mr_rt *m, const struct hm_alloc *a,
			__u64 off, __u32 len)
{
	const struct hm_alloc *ma = hm_find(d, m->alloc);
	__u64 first = hm_base(a, off);
	__u64 j = (first + XHCA_PAGE_SIZE - (m->off % XHCA_PAGE_SIZE)) % XHCA_PAGE_SIZE;

	for (; ma && j + len <= m->e.length; j += XHCA_PAGE_SIZE) {
		__u64 k;

		if (hm_base(ma, m->off + j) != first)
			continue;
		for (k = XHCA_PAGE_SIZE - first % XHCA_PAGE_SIZE; k < len; k += XHCA_PAGE_SIZE)
			if (hm_base(ma, m->off + j + k) != hm_base(a, off + k))
				break;
		if (k >= len)
			return 1;
	}
	return 0;
}

/* The lkey check of a receive's piece when a message takes it, as on an
 * HCA (the region may have been deregistered or re-registered since it
 * was posted): a region of the session, of the QP's PD (an SRQ's pieces:
 * any of the session's), allowing local write, holding the piece. A piece
 * posted without a key (libxhca's own callers) is not checked. */
static int lkey_holds(struct xhcad *d, const struct qp_host *qh, const struct xhca_rsge *g,
		      const struct hm_alloc *a)
{
	struct mr_rt *m = g->lkey ? mr_find(d, g->lkey) : NULL;

	if (!g->lkey)
		return 1;
	if (!m || !m->e.valid || m->mw_type || m->owner != qh->owner ||
	    (!qh->rcv.srq && m->e.pd != qh->pd) || !(m->e.access & XHCA_ACCESS_LOCAL_WRITE))
		return 0;
	if (m->alloc != g->alloc)
		return region_holds(d, m, a, g->off, g->len);
	return g->off >= m->off && g->len <= m->e.length && g->off - m->off <= m->e.length - g->len;
}

/* The pieces of the receive entry a message goes into (qh->rcv.wqe): its
 * buffer, or the scatter list it names (ring.h), each checked; wqe.len
 * becomes their sum. 0, or -EFAULT: an allocation that is not the
 * session's, a piece outside its allocation. */
static int rq_load(struct xhcad *d, struct qp_host *qh)
{
	const struct xhca_rwqe *w = &qh->rcv.wqe;
	__u64 total = 0;

	if (w->nsge <= 1) {
		qh->rcv.seg[0] = (struct xhca_rsge){ .off = w->off, .len = w->len, .alloc = w->alloc,
						      .lkey = w->lkey };
		qh->rcv.nseg = 1;
	} else {
		const struct hm_alloc *l = hm_find(d, w->alloc);

		if (w->nsge > XHCA_SGE_MAX || !l || l->owner != qh->owner ||
		    !hm_range(l, w->off, w->nsge * sizeof(struct xhca_rsge)))
			return -EFAULT;
		hm_read(d, l, w->off, qh->rcv.seg, w->nsge * sizeof(struct xhca_rsge));
		qh->rcv.nseg = w->nsge;
	}
	for (__u32 i = 0; i < qh->rcv.nseg; i++) {
		const struct hm_alloc *a = hm_find(d, qh->rcv.seg[i].alloc);

		if (!a || a->owner != qh->owner || !hm_range(a, qh->rcv.seg[i].off, qh->rcv.seg[i].len) ||
		    !lkey_holds(d, qh, &qh->rcv.seg[i], a))
			return -EFAULT;
		total += qh->rcv.seg[i].len;
	}
	if (total > 0xffffffffull)
		return -EFAULT;
	qh->rcv.wqe.len = (__u32)total;
	return 0;
}

/* n bytes at byte off of the message's buffer, across its pieces. -EFAULT
 * when an allocation went away meanwhile (the application freed it). */
static int rq_write(struct xhcad *d, const struct qp_host *qh, __u64 off, const void *src,
		    __u64 n)
{
	const __u8 *s = src;

	for (__u32 i = 0; i < qh->rcv.nseg && n; i++) {
		const struct xhca_rsge *g = &qh->rcv.seg[i];
		const struct hm_alloc *a;
		__u64 k;

		if (off >= g->len) {
			off -= g->len;
			continue;
		}
		k = n < g->len - off ? n : g->len - off;
		a = hm_find(d, g->alloc);
		if (!a || a->owner != qh->owner || !hm_range(a, g->off + off, k))
			return -EFAULT;
		hm_write(d, a, g->off + off, s, k);
		s += k;
		n -= k;
		off = 0;
	}
	return n ? -EFAULT : 0;
}

/* Ends the message in progress with an error; the rest of it, if any, is
 * dropped under the same reason. */
int recv_msg_fail(struct qp_host *qh, int end, int reason)
{
	qh->rcv.in_msg = MSG_NONE;
	qh->rcv.discard = end ? 0 : reason;
	return reason;
}

/* A MIDDLE or LAST: -1 when it goes on the message of this kind in
 * progress, else its reason (the rest of a broken message, or no message). */
static int msg_continues(struct qp_host *qh, int kind, int end)
{
	if (qh->rcv.discard) {
		int r = qh->rcv.discard;

		if (end)
			qh->rcv.discard = 0;
		return r;
	}
	if (qh->rcv.in_msg != kind) {
		qh->cnt.errors++;
		return recv_msg_fail(qh, end, XHCA_H_SEQ_ERR);
	}
	return -1;
}

/* A message's first packet: its buffer (the receive queue's head, or the
 * SRQ entry the QP holds), and a UD one's GRH in front. -1, or the reason
 * it fails. */
static int send_begin(struct xhcad *d, struct qp_host *qh, const struct pkt_info *pi, int end)
{
	const struct xhca_rx_meta *m = pi->m;

	if (qh->rcv.in_msg) /* the last message never ended */
		qh->cnt.errors++;
	qh->rcv.in_msg = MSG_NONE;
	qh->rcv.discard = 0;
	if (qh->rcv.held)
		; /* the SRQ's entry an abandoned message took: this one's */
	else if (!rq_take(qh, &qh->rcv.wqe)) {
		if (qh->rcv.rq_broken) {
			qp_ring_fatal(d, qh, "receive");
			return recv_msg_fail(qh, end, XHCA_H_BAD_BUF);
		}
		qh->cnt.rnr++;
		return recv_msg_fail(qh, end, XHCA_H_RNR);
	} else if (rq_load(d, qh)) {
		/* (an SRQ's entry is off its ring already: another QP's
		 * message starting meanwhile takes the next) */
		complete_err(d, qh, XHCA_WC_LOC_PROT_ERR, XHCA_H_BAD_BUF, m);
		return recv_msg_fail(qh, end, XHCA_H_BAD_BUF);
	}
	qh->rcv.msg_off = 0;
	qh->rcv.in_msg = MSG_SEND;
	if (qh->type == XHCA_QPT_UD) {
		__u8 grh[GRH_LEN];

		if (qh->rcv.wqe.len < GRH_LEN || make_grh(pi->fr, pi->len, grh)) {
			complete_err(d, qh, XHCA_WC_LOC_LEN_ERR, XHCA_H_LEN_ERR, m);
			return recv_msg_fail(qh, end, XHCA_H_LEN_ERR);
		}
		if (rq_write(d, qh, 0, grh, GRH_LEN)) {
			complete_err(d, qh, XHCA_WC_LOC_PROT_ERR, XHCA_H_BAD_BUF, m);
			return recv_msg_fail(qh, end, XHCA_H_BAD_BUF);
		}
		qh->rcv.msg_off = GRH_LEN;
	}
	return -1;
}

/* A SEND (any of its packets) into the QP's receive buffer. */
int recv_send(struct xhcad *d, __u32 f, struct qp_host *qh, const struct pkt_info *pi)
{
	const struct xhca_rx_meta *m = pi->m;
	const struct xhca_opinfo *oi = pi->oi;
	const __u8 *payload = pi->fr + m->payload_off;
	__u32 plen = m->payload_len;
	int start = !!(oi->flags & XHCA_O_START), end = !!(oi->flags & XHCA_O_END);

	if (start) {
		int r = send_begin(d, qh, pi, end);

		if (r >= 0)
			return r;
	} else {
		int r = msg_continues(qh, MSG_SEND, end);

		if (r >= 0)
			return r;
	}

	if (plen > qh->rcv.wqe.len - qh->rcv.msg_off) {
		complete_err(d, qh, XHCA_WC_LOC_LEN_ERR, XHCA_H_LEN_ERR, m);
		return recv_msg_fail(qh, end, XHCA_H_LEN_ERR);
	}
	if (rq_write(d, qh, qh->rcv.msg_off, payload, plen)) {
		complete_err(d, qh, XHCA_WC_LOC_PROT_ERR, XHCA_H_BAD_BUF, m);
		return recv_msg_fail(qh, end, XHCA_H_BAD_BUF);
	}
	qh->rcv.msg_off += plen;
	d->fq[f].bytes += plen;

	if (end) {
		struct xhca_cqe c = {
			.wr_id = qh->rcv.wqe.wr_id, .status = XHCA_WC_SUCCESS, .opcode = XHCA_WC_RECV,
			.byte_len = qh->rcv.msg_off, .qp_num = qh->gqpn, .rx_ns = m->rx_ns,
		};

		if (oi->flags & XHCA_H_IMM) {
			memcpy(&c.imm_data, payload - 4, 4); /* network order, as verbs */
			c.wc_flags |= XHCA_WC_WITH_IMM;
		} else if (oi->flags & XHCA_H_IETH) {
			c.imm_data = be32(payload - 4);
			c.wc_flags |= XHCA_WC_WITH_INV;
			/* a type 2 window bound through this QP is unbound; a
			 * key that names none is counted, the message delivered */
			if (mw_invalidate(d, qh->owner, qh->pd, qh->gqpn, c.imm_data, 1))
				d->mr.mw.inv_unknown++;
		}
		if (qh->type == XHCA_QPT_UD) {
			const __u8 *deth = payload - oi->hdr_len + BTH_LEN;

			c.src_qp = be32(deth + 4) & XHCA_QPN_MASK;
			c.wc_flags |= XHCA_WC_GRH;
			/* RoCE has no SL: a RoCEv2 HCA gives the frame's network
			 * header in it (IBA A17.4.5.1; bit 3 a UDP header, bits
			 * 2:0 IPv4 2 or IPv6 1, as mlx5 does), which tells where
			 * in the GRH the destination is (UCX checks it there) */
			c.sl = XHCA_SL_ROCE_V2 | ((m->flags & XHCA_MF_IPV6) ? XHCA_SL_IPV6 : XHCA_SL_IPV4);
		}
		complete(d, qh, &c);
		qh->rcv.in_msg = MSG_NONE;
	}
	return XHCA_H_PLACED;
}

/* The completion of a WRITE with immediate: it takes a receive buffer (and
 * writes nothing into it), as verbs say. */
int recv_write_imm(struct xhcad *d, struct qp_host *qh, const struct xhca_rx_meta *m,
			__u32 imm, __u32 byte_len, int reason)
{
	struct xhca_cqe c = {
		.status = XHCA_WC_SUCCESS, .opcode = XHCA_WC_RECV_RDMA_WITH_IMM,
		.byte_len = byte_len, .imm_data = imm, .wc_flags = XHCA_WC_WITH_IMM,
		.qp_num = qh->gqpn, .rx_ns = m->rx_ns,
	};

	if (!qh->rcv.held && !rq_take(qh, &qh->rcv.wqe)) {
		if (qh->rcv.rq_broken) {
			qp_ring_fatal(d, qh, "receive");
			return XHCA_H_BAD_BUF;
		}
		qh->cnt.rnr++;
		return XHCA_H_RNR;
	}
	c.wr_id = qh->rcv.wqe.wr_id;
	complete(d, qh, &c);
	return reason;
}

/* A WRITE into a region that is not pre-translated: the translation
 * manager's side. xhca_rx checked the R_Key, the bounds and the sequence;
 * the region may have been deregistered since, which is looked at again on
 * every packet. The payload goes page by page (hm_write). */
int recv_write(struct xhcad *d, __u32 f, struct qp_host *qh, const struct pkt_info *pi)
{
	const struct xhca_rx_meta *m = pi->m;
	const struct xhca_opinfo *oi = pi->oi;
	const __u8 *payload = pi->fr + m->payload_off, *bth = pi->bth;
	__u32 plen = m->payload_len;
	int start = !!(oi->flags & XHCA_O_START), end = !!(oi->flags & XHCA_O_END);
	struct mr_rt *mr;

	if (start) {
		const __u8 *reth = bth + BTH_LEN;
		__u64 va = be64(reth);
		__u32 dlen = be32(reth + 12);

		if (qh->rcv.in_msg)
			qh->cnt.errors++;
		qh->rcv.in_msg = MSG_NONE;
		qh->rcv.discard = 0;
		mr = mr_find(d, be32(reth + 8));
		if (!mr || !mr->e.valid || va < mr->e.iova || dlen > mr->e.length ||
		    va - mr->e.iova > mr->e.length - dlen) {
			qh->cnt.errors++;
			return recv_msg_fail(qh, end, XHCA_H_XLATE_ERR);
		}
		qh->rcv.wr_rkey = mr->rkey;
		qh->rcv.wr_off = va - mr->e.iova;
		qh->rcv.wr_left = dlen;
		qh->rcv.wr_len = dlen;
		qh->rcv.in_msg = MSG_WRITE;
	} else {
		int r = msg_continues(qh, MSG_WRITE, end);

		if (r >= 0)
			return r;
	}
	mr = mr_find(d, qh->rcv.wr_rkey);
	if (!mr || !mr->e.valid || plen > qh->rcv.wr_left) {
		qh->cnt.errors++;
		return recv_msg_fail(qh, end, XHCA_H_XLATE_ERR);
	}
	hm_write(d, hm_find(d, mr->alloc), mr->off + qh->rcv.wr_off, payload, plen);
	qh->rcv.wr_off += plen;
	qh->rcv.wr_left -= plen;
	d->fq[f].bytes += plen;
	if (!end)
		return XHCA_H_XLATE_PLACED;
	qh->rcv.in_msg = MSG_NONE;
	if (oi->flags & XHCA_H_IMM) {
		__u32 imm;

		memcpy(&imm, payload - 4, 4);
		return recv_write_imm(d, qh, m, imm, qh->rcv.wr_len, XHCA_H_XLATE_PLACED);
	}
	if (qh->px.on) {
		/* a proxy CQ sees every WRITE land, in order (as xhca_rx's
		 * records of the WRITEs it places) */
		struct xhca_cqe c = {
			.status = XHCA_WC_SUCCESS, .opcode = XHCA_WC_RECV_RDMA_WRITE,
			.byte_len = qh->rcv.wr_len, .qp_num = qh->gqpn, .rx_ns = m->rx_ns,
		};

		proxy_record(d, qh, qh->px.csn, &c);
		qh->px.recorded = 1;
	}
	return XHCA_H_XLATE_PLACED;
}


/* ---- the CLI's receive side ---------------------------------------------- */

/* ---- the bus model ---------------------------------------------------- */

/* ---- flow queue configuration and view ----------------------------------- */

/* ---- QP host state -------------------------------------------------------- */

void qp_host_attach(struct xhcad *d, __u32 lidx, __u32 gen, __u32 gqpn, __u8 type, __u8 flowq,
		    __u32 owner, struct cq *cq, struct hm_alloc *rq, __u32 rq_depth,
		    struct srq *srq)
{
	struct qp_host *qh = &d->qh[lidx];

	memset(qh, 0, sizeof(*qh));
	qh->valid = 1;
	qh->gen = gen;
	qh->gqpn = gqpn;
	qh->type = type;
	qh->flowq = flowq;
	qh->owner = owner;
	qh->cq = cq;
	if (cq && srq) {
		cq->nqps++;
		srq->nqps++;
		qh->rcv.srq = srq;
		qh->rcv.rq_depth = srq->depth;
		qh->rcv.rq = srq->ring;
		qh->rcv.rqe = srq->e;
	} else if (cq && rq) {
		cq->nqps++;
		qh->rcv.rq_alloc = rq->id;
		rq->ring = 1;
		qh->rcv.rq_depth = rq_depth;
		qh->rcv.rq = hm_contig_ptr(d, rq);
		qh->rcv.rqe = (struct xhca_rwqe *)(qh->rcv.rq + 1);
		qh->rcv.rq->depth = rq_depth;
		/* (a ring kept across a restart: its index taken once) */
		qh->rcv.rq_cons = qh->rcv.rq_prod_cache = qh->rcv.rq->cons;
	} else {
		qh->cq = NULL;
	}
	if (flowq < d->nflowq)
		d->fq[flowq].nqps++;
}

void qp_host_detach(struct xhcad *d, __u32 lidx)
{
	struct qp_host *qh = &d->qh[lidx];

	if (!qh->valid)
		return;
	recv_fast_off(qh);
	proxy_qp_del(d, lidx);
	if (qh->cq) {
		qh->cq->nqps--;
		/* Its flow queue may wait on this CQ for the QP's frames, which
		 * are stale now: look again. */
		flowq_unblock(d, qh->cq);
	}
	if (qh->rcv.srq) {
		qh->rcv.srq->nqps--; /* the ring lives on for its other QPs */
	} else if (qh->rcv.rq) {
		struct hm_alloc *a = hm_find(d, qh->rcv.rq_alloc);

		__atomic_store_n(&qh->rcv.rq->dead, 1, __ATOMIC_RELEASE);
		if (a)
			a->ring = 0; /* (no queue uses it now: its owner may free it) */
	}
	qh->rcv.srq = NULL;
	if (qh->flowq < d->nflowq)
		d->fq[qh->flowq].nqps--;
	if (qh->rcv.flush)
		qp_eng(d, qh)->nflush--;
	qh->rcv.flush = 0;
	qh->valid = 0;
	qh->cq = NULL;
	qh->rcv.rq = NULL;
}

/* Completes every posted receive buffer of the QP with WR_FLUSH_ERR, as
 * far as its CQ has room; returns 1 when some are left. */
static int flush_rq(struct xhcad *d, struct qp_host *qh)
{
	struct xhca_rwqe w;

	while (rq_head(qh, &w)) {
		struct xhca_cqe c = {
			.wr_id = w.wr_id, .status = XHCA_WC_WR_FLUSH_ERR, .opcode = XHCA_WC_RECV,
			.qp_num = qh->gqpn, .rx_ns = now_ns(),
		};

		if (!cq_room_or_wait(qh->cq))
			return 1; /* the doorbell tells when there is room */
		complete_rq(d, qh, &c, 1);
	}
	return 0;
}

void qp_flush_run(struct xhcad *d)
{
	/* (the running engine's QPs: another's are its own to flush) */
	for (__u32 l = 0; eng()->nflush && l < d->max_qps; l++) {
		struct qp_host *qh = &d->qh[l];

		if (!qh->valid || !qh->rcv.flush || qp_eng(d, qh) != eng() || flush_rq(d, qh))
			continue;
		qh->rcv.flush = 0;
		eng()->nflush--;
	}
	cq_notify(d);
	proxy_kick(d);
}

void qp_host_to_error(struct xhcad *d, struct qp_host *qh)
{
	recv_fast_off(qh); /* (its buffers are xhcad's alone to flush) */
	qh->rcv.in_msg = MSG_NONE;
	qh->rcv.discard = 0;
	/* the SRQ entry it took for a message is its own: flushed */
	if (qh->rcv.held && qh->cq && cq_room_or_wait(qh->cq)) {
		struct xhca_cqe c = { .wr_id = qh->rcv.wqe.wr_id, .status = XHCA_WC_WR_FLUSH_ERR,
				      .opcode = XHCA_WC_RECV, .qp_num = qh->gqpn, .rx_ns = now_ns() };

		complete_rq(d, qh, &c, 1);
	}
	qh->rcv.held = 0;
	/* an SRQ's buffers are its other QPs' too: they stay (verbs) */
	if (qh->rcv.rq && !qh->rcv.srq && !qh->rcv.flush) {
		qh->rcv.flush = 1;
		qp_eng(d, qh)->nflush++;
	}
	if (qh->sq) /* and its send requests, flushed by sq_run */
		sq_mark_error(qh->sq);
	qp_flush_run(d);
}
