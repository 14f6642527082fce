/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The requester: what an HCA's send engine does, and with the completer
 * (completer.c, below it) the rules of both. Applications
 * post send requests into a send queue ring in host memory (ring.h); xhcad
 * copies each one when it takes it, builds its packets through the QP's
 * context (path MTU, addresses, P_Key, the next PSN) with the packet
 * builder, and puts them on the AF_XDP TX ring. On UC and UD a request is
 * done when its last packet left; on RC when the responder acknowledges it
 * (an ACK at or after its last PSN, a READ's last response, the ATOMIC's
 * response), as RXE's completer does:
 *  - a response (or NAK) at a PSN acknowledges everything before it;
 *  - a sequence NAK, or no response within the QP's timeout, sends again
 *    from the PSN still unacknowledged (go-back-N), retry_cnt times; an RNR
 *    NAK does the same after its timer, rnr_retry times (7: no end);
 *  - the other NAKs complete the request in error, and with the QP in the
 *    error state everything after it completes flushed.
 * Completions are written in posting order: a request done before an older
 * one waits for it. At most cwnd PSNs are unacknowledged (RC): the window
 * starts at its largest (sq_window: SQ_WINDOW packets, SQ_WINDOW_BYTES of
 * payload), halves at each loss (a sequence NAK, a lost READ response, a
 * timeout; CWND_MIN at least) and grows by one per window acknowledged, so
 * go-back-N sends again about one window per loss. Inside a message the
 * window holds too, the packet at its edge asking for an ACK
 * (IBA: the responder acknowledges it); when the timer goes off there
 * instead and no ACK ever came inside a message, the responder
 * acknowledges only whole messages and messages are sent whole from then
 * on (and always without a timer: timeout 0). End-to-end credits (IBA
 * 9.7.7.2.5): the count in the responder's last ACK bounds the messages
 * that take a receive buffer (SEND, WRITE with immediate), one alone when
 * it is used up (the probe whose ACK brings a new count); 31 lifts it, as
 * RXE always sends. READ and ATOMIC
 * requests on the wire are max_rd_atomic at most; a READ asks for RD_CHUNK
 * response packets per request (a long one is several requests) and
 * RD_WINDOW at most at once, so that its responses fit the flow queue they
 * arrive on (not the window: one chunk at a time, each tail loss waiting
 * for the timer, measured slower than resending more).
 */
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <xhca/pkt.h>
#include <xhca/wire.h>
#include "log.h"
#include "sq_int.h"

#define RD_WINDOW 256		/* READ response PSNs asked for and not yet received */
#define TX_BATCH 32		/* a kick every so many frames: the kernel sends while more are built */
#define NEIGH_RETRY_NS 10000000ull /* no neighbour entry: look again in 10 ms */

/* Whether a request is executed here, sending nothing: a memory window's
 * bind or invalidation. */
static int is_local(__u8 op)
{
	return op == XHCA_WR_BIND_MW || op == XHCA_WR_LOCAL_INV;
}

/* End-to-end credits (IBA 9.7.7.2.5): a message that takes a receive
 * buffer starts only within the responder's last count, or alone, when
 * none of its kind is unacknowledged (the ACK it gets brings a new count).
 * Holding the message costs nothing; sending it into no buffer costs an
 * RNR NAK, the RNR timer and everything after it sent again. */
static int credit_wait(struct xhcad *d, struct sq_state *s, const struct sq_ent *e)
{
	if (!s->credits_on || !takes_rq(e->w.opcode) || s->rq_sent == s->rq_acked ||
	    (int)(s->rq_sent - s->rq_limit) < 0) {
		s->credit_held = 0;
		return 0;
	}
	if (!s->credit_held)
		eng()->req.credit_waits++;
	s->credit_held = 1;
	return 1;
}

/* ---- the queue -------------------------------------------------------------- */

int sq_attach(struct xhcad *d, struct qp_host *qh, struct hm_alloc *alloc, __u32 depth,
	      struct cq *cq)
{
	struct sq_state *s = calloc(1, sizeof(*s));

	if (s)
		s->ent = calloc(depth, sizeof(*s->ent));
	if (!s || !s->ent) {
		free(s);
		return -ENOMEM;
	}
	s->ring = hm_contig_ptr(d, alloc);
	s->e = (struct xhca_swqe *)(s->ring + 1);
	s->ring->depth = depth;
	s->alloc = alloc->id;
	alloc->ring = 1;
	s->depth = depth;
	s->cq = cq;
	cq->nqps++;
	s->cons = s->acked = s->next = s->fetched = s->ring->cons;
	s->timeout = XHCA_TIMEOUT_DEFAULT;
	s->retry_cnt = s->retry_left = XHCA_RETRY_CNT_DEFAULT;
	s->rnr_retry = s->rnr_left = XHCA_RNR_RETRY_DEFAULT;
	s->max_rd_atomic = XHCA_MAX_RD_ATOMIC_DEFAULT;
	s->cwnd = SQ_WINDOW;
	s->qh = qh;
	s->next_sq = qp_eng(d, qh)->sq.list;
	qp_eng(d, qh)->sq.list = s;
	qh->sq = s;
	sq_note(d, s, s->cons);
	return 0;
}

void sq_fini(struct xhcad *d)
{
	for (__u32 k = 0; k < d->neng; k++) {
		struct requester *rq = &d->eng[k].sq;

		while (rq->list) {
			struct sq_state *s = rq->list;

			rq->list = s->next_sq;
			s->qh->sq = NULL;
			free(s->ent);
			free(s);
		}
	}
}

void sq_move(struct xhcad *d, struct qp_host *qh, __u32 flowq)
{
	struct sq_state *s = qh->sq, **pp;

	if (s) {
		for (pp = &qp_eng(d, qh)->sq.list; *pp; pp = &(*pp)->next_sq) {
			if (*pp == s) {
				*pp = s->next_sq;
				break;
			}
		}
	}
	qh->flowq = (__u8)flowq;
	if (s) {
		s->next_sq = qp_eng(d, qh)->sq.list;
		qp_eng(d, qh)->sq.list = s;
	}
}

void sq_detach(struct xhcad *d, struct qp_host *qh)
{
	struct sq_state *s = qh->sq, **pp;
	struct hm_alloc *a;

	if (!s)
		return;
	for (pp = &qp_eng(d, qh)->sq.list; *pp; pp = &(*pp)->next_sq) {
		if (*pp == s) {
			*pp = s->next_sq;
			break;
		}
	}
	__atomic_store_n(&s->ring->dead, 1, __ATOMIC_RELEASE);
	s->cq->nqps--;
	flowq_unblock(d, s->cq);
	/* (no queue uses the ring now: its owner may free it) */
	a = hm_find(d, s->alloc);
	if (a)
		a->ring = 0;
	free(s->ent);
	free(s);
	qh->sq = NULL;
}

/* The requester's place in the QP context, where a restarted xhcad finds
 * it (sq_restore): the next PSN, the requests of the ring started. */
void sq_note(struct xhcad *d, const struct sq_state *s, __u32 started)
{
	struct xhca_qp_ctx *c = &d->ctxm[lidx_of(d, s->qh)];

	__atomic_store_n(&c->sq_psn, s->psn, __ATOMIC_RELAXED);
	__atomic_store_n(&c->sq_started, started, __ATOMIC_RELAXED);
}

void sq_set_psn(struct xhcad *d, struct sq_state *s, __u32 psn)
{
	s->psn = s->una_psn = s->hi_psn = psn & XHCA_PSN_MASK;
	s->ackreq_psn = (psn - 1) & XHCA_PSN_MASK; /* as if the PSN before had asked */
	sq_note(d, s, s->next);
}

/*
 * Direct sends (docs/design.md): a program whose send queue is idle sends
 * a one-packet SEND or WRITE with immediate itself (xhcad takes a plain
 * WRITE too: which it sends is libxhca's choice), through a UDP socket of
 * its own, and
 * posts the request marked XHCA_SEND_DIRECT with the PSN it used, which
 * xhcad then takes as sent (direct_take). What the program needs is in the
 * ring (ring.h's d_*): the path here, whenever a modify may have changed
 * it, and the next PSN before each consumer index (sq_retire). Only where
 * the program's packet is the one xhcad would send: RC or UC in RTS, an
 * IPv4 path to another host (a packet for an address of this one goes
 * through xhcad: loopback.c), --direct on.
 */
void sq_direct(struct xhcad *d, struct qp_host *qh)
{
	struct sq_state *s = qh->sq;
	const struct xhca_qp_ctx *c;
	struct xhca_ring_ctl *r;
	__u8 mac[6];

	if (!s)
		return;
	c = &d->ctxm[lidx_of(d, qh)];
	r = s->ring;
	__atomic_store_n(&r->d_psn, 0, __ATOMIC_RELEASE);
	s->direct = d->direct && (qh->type == XHCA_QPT_RC || qh->type == XHCA_QPT_UC) &&
		    c->state == XHCA_QPS_RTS && !s->error && !s->broken &&
		    xhca_ip_is_v4(c->local_ip) && xhca_ip_is_v4(c->remote_ip) &&
		    lo_local_mac(d, c->remote_ip, mac) != 0;
	if (!s->direct)
		return;
	memcpy(&r->d_saddr, c->local_ip + 12, 4);
	memcpy(&r->d_daddr, c->remote_ip + 12, 4);
	r->d_dqpn = c->dest_qpn;
	r->d_pkey = c->pkey;
	r->d_sport = (__u16)(0xc000 | (qh->gqpn & 0x3fff)); /* (spec_address's) */
	r->d_mtu_shift = c->mtu_shift;
	r->d_ifindex = (__u32)d->ifindex;
	__atomic_store_n(&r->d_psn, XHCA_DIRECT_OK | s->psn, __ATOMIC_RELEASE);
}

/* Request e, marked XHCA_SEND_DIRECT, starts at e->psn: taken as sent when
 * the program's packet is what xhcad would send now (one packet of a SEND
 * or WRITE, at this PSN, the path published, nothing before it waiting for
 * an ACK); else xhcad sends it as any other, and the program's packet, if
 * it left, is a stray to the responder (a duplicate, or out of sequence). */
static void direct_take(struct sq_state *s, struct sq_ent *e, int rc)
{
	__u8 op = e->w.opcode;

	e->direct = s->direct && e->npkts == 1 && e->w.psn == e->psn &&
		    (op == XHCA_WR_SEND || op == XHCA_WR_SEND_WITH_IMM ||
		     op == XHCA_WR_RDMA_WRITE || op == XHCA_WR_RDMA_WRITE_WITH_IMM) &&
		    (!rc || s->una_psn == e->psn);
	if (e->direct)
		eng()->req.direct++;
	else
		eng()->req.direct_refused++;
}

/*
 * A send queue again after xhcad restarted (state.c): its ring and
 * attributes from the state file, its PSN from the QP context. Requests an
 * earlier xhcad started and did not complete may or may not have been
 * executed by the remote: nothing can tell, and sending them again with new
 * PSNs could execute them twice. As when an HCA's firmware is reset, the
 * QP goes to the error state and they complete flushed, in order; a send
 * queue with nothing in flight goes on where it was.
 */
int sq_restore(struct xhcad *d, struct qp_host *qh, struct hm_alloc *alloc, __u32 depth,
	       struct cq *cq, const __u8 attrs[4])
{
	const struct xhca_qp_ctx *c = &d->ctxm[lidx_of(d, qh)];
	__u32 psn = c->sq_psn, started = c->sq_started;
	struct sq_state *s;
	int r = sq_attach(d, qh, alloc, depth, cq);

	if (r)
		return r;
	s = qh->sq;
	s->timeout = attrs[0];
	s->retry_cnt = s->retry_left = attrs[1];
	s->rnr_retry = s->rnr_left = attrs[2];
	s->max_rd_atomic = attrs[3];
	sq_set_psn(d, s, psn);
	sq_note(d, s, started);
	sq_direct(d, qh);
	if ((int)(started - s->cons) > 0 && qh->type == XHCA_QPT_RC) {
		pr_warn("qp 0x%06x: %u send requests were in flight when xhcad stopped: the QP "
			"goes to the error state, they complete flushed\n", qh->gqpn,
			started - s->cons);
		qp_set_error(d, lidx_of(d, qh), qh->gen);
		qp_host_to_error(d, qh);
		return 1;
	}
	return 0;
}

void sq_reset(struct xhcad *d, struct qp_host *qh)
{
	struct sq_state *s = qh->sq;
	__u32 prod;

	if (!s)
		return;
	/* verbs: a reset empties the queue without completions */
	prod = __atomic_load_n(&s->ring->prod, __ATOMIC_ACQUIRE);
	s->cons = s->acked = s->next = s->fetched = prod;
	__atomic_store_n(&s->ring->cons, prod, __ATOMIC_RELEASE);
	s->rd_out = 0;
	s->error = 0;
	s->broken = 0;
	__atomic_store_n(&s->ring->qp_err, 0, __ATOMIC_RELEASE);
	s->deadline = s->hold_until = 0;
	s->refusals = 0;
	s->retry_left = s->retry_cnt;
	s->rnr_left = s->rnr_retry;
	s->una_psn = s->hi_psn = s->psn;
	s->dmac_ok = 0;
	s->cwnd = SQ_WINDOW;
	s->cwnd_acc = 0;
	s->mid_acked = s->whole_only = 0; /* maybe another responder next */
	s->gso_no = s->ud_dst_set = 0;
	s->rq_sent = s->rq_acked = s->rq_limit = 0;
	s->credits_on = s->credit_held = 0;
	sq_note(d, s, prod);
}

/* What a request copied from the ring may not carry: a completion status
 * (0: good). */
static __u8 swqe_check(struct xhcad *d, const struct qp_host *qh, const struct xhca_qp_ctx *c,
		       const struct xhca_swqe *w)
{
	__u64 sum = 0;

	switch (w->opcode) {
	case XHCA_WR_SEND:
	case XHCA_WR_SEND_WITH_IMM:
		break;
	case XHCA_WR_RDMA_WRITE:
	case XHCA_WR_RDMA_WRITE_WITH_IMM:
		if (qh->type == XHCA_QPT_UD)
			return XHCA_WC_LOC_QP_OP_ERR;
		break;
	case XHCA_WR_RDMA_READ:
	case XHCA_WR_ATOMIC_CMP_AND_SWP:
	case XHCA_WR_ATOMIC_FETCH_AND_ADD:
	case XHCA_WR_SEND_WITH_INV:
		if (qh->type != XHCA_QPT_RC)
			return XHCA_WC_LOC_QP_OP_ERR;
		break;
	case XHCA_WR_ATOMIC_WRITE:
		/* (its word in the request: no scatter list) */
		if (qh->type != XHCA_QPT_RC || w->nsge)
			return XHCA_WC_LOC_QP_OP_ERR;
		return w->len == 8 ? 0 : XHCA_WC_LOC_LEN_ERR;
	case XHCA_WR_BIND_MW:
	case XHCA_WR_LOCAL_INV:
		/* (RC and UC; no data) */
		return qh->type == XHCA_QPT_UD || w->nsge || w->len ? XHCA_WC_LOC_QP_OP_ERR : 0;
	default:
		return XHCA_WC_LOC_QP_OP_ERR;
	}
	if (w->nsge > XHCA_SGE_MAX)
		return XHCA_WC_LOC_PROT_ERR;
	for (int i = 0; i < w->nsge; i++) {
		struct hm_alloc *a = hm_find(d, w->sge[i].alloc);

		if (!a || a->owner != qh->owner || !hm_range(a, w->sge[i].off, w->sge[i].len))
			return XHCA_WC_LOC_PROT_ERR;
		sum += w->sge[i].len;
	}
	if (sum != w->len || sum > 0x80000000ull)
		return XHCA_WC_LOC_LEN_ERR;
	if ((w->opcode == XHCA_WR_ATOMIC_CMP_AND_SWP || w->opcode == XHCA_WR_ATOMIC_FETCH_AND_ADD) &&
	    w->len != 8)
		return XHCA_WC_LOC_LEN_ERR;
	if (qh->type == XHCA_QPT_UD && w->len > (1u << c->mtu_shift))
		return XHCA_WC_LOC_LEN_ERR; /* one packet */
	return 0;
}

/* n bytes of w's scatter list from off where they are one run of host
 * memory (one piece, its pages adjacent there): the packet takes them in
 * place. NULL: copy them (sge_io). */
static const void *sge_span(struct xhcad *d, __u32 owner, const struct xhca_swqe *w, __u64 off,
			    __u32 n)
{
	for (int i = 0; i < w->nsge; i++) {
		struct hm_alloc *a;

		if (off >= w->sge[i].len) {
			off -= w->sge[i].len;
			continue;
		}
		if (w->sge[i].len - off < n)
			return NULL;
		a = hm_find(d, w->sge[i].alloc);
		return a && a->owner == owner && hm_range(a, w->sge[i].off + off, n)
			       ? hm_span(d, a, w->sge[i].off + off, n)
			       : NULL;
	}
	return NULL;
}

/* The application's producer index, read once: 0 when the ring can hold
 * it (from what xhcad took up to the ring's room past its oldest entry),
 * -1 when it is garbage. */
static int sq_prod(const struct sq_state *s, __u32 *prod)
{
	*prod = __atomic_load_n(&s->ring->prod, __ATOMIC_ACQUIRE);
	return *prod - s->cons > s->depth || *prod - s->cons < s->fetched - s->cons ? -1 : 0;
}

/* Whether the send queue has requests xhcad has not taken. */
static int sq_pending(const struct sq_state *s)
{
	__u32 prod;

	return !s->broken && !sq_prod(s, &prod) && prod != s->fetched;
}

/* Takes what the application posted: copied, checked. A producer index the
 * ring cannot hold breaks the queue: nothing more is taken (no garbage
 * request), the QP goes to error (qp_ring_fatal). */
static void sq_fetch(struct xhcad *d, struct sq_state *s, const struct xhca_qp_ctx *c)
{
	__u32 prod;

	if (s->broken)
		return;
	if (sq_prod(s, &prod)) {
		s->broken = 1;
		qp_ring_fatal(d, s->qh, "send");
		return;
	}
	while (s->fetched != prod) {
		struct sq_ent *e = ent(s, s->fetched);

		memset(e, 0, sizeof(*e));
		e->w = s->e[s->fetched & (s->depth - 1)];
		e->status = swqe_check(d, s->qh, c, &e->w);
		s->fetched++;
		eng()->req.wqes++;
	}
}

/* ---- packets out ------------------------------------------------------------ */

/* The opcode (no class) of packet i of n of a request of WR opcode wr. */
static __u8 send_op(__u8 wr, int n, __u32 i)
{
	switch (wr) {
	case XHCA_WR_RDMA_READ:
		return XHCA_OP_READ_REQ;
	case XHCA_WR_ATOMIC_CMP_AND_SWP:
		return XHCA_OP_CMP_SWAP;
	case XHCA_WR_ATOMIC_FETCH_AND_ADD:
		return XHCA_OP_FETCH_ADD;
	case XHCA_WR_ATOMIC_WRITE:
		return XHCA_OP_ATOMIC_WRITE;
	case XHCA_WR_SEND_WITH_IMM:
		return xhca_msg_opcode(XHCA_OP_SEND_ONLY_IMM, i, (__u64)n);
	case XHCA_WR_SEND_WITH_INV:
		return xhca_msg_opcode(XHCA_OP_SEND_ONLY_INV, i, (__u64)n);
	case XHCA_WR_RDMA_WRITE:
		return xhca_msg_opcode(XHCA_OP_WRITE_ONLY, i, (__u64)n);
	case XHCA_WR_RDMA_WRITE_WITH_IMM:
		return xhca_msg_opcode(XHCA_OP_WRITE_ONLY_IMM, i, (__u64)n);
	}
	return xhca_msg_opcode(XHCA_OP_SEND_ONLY, i, (__u64)n);
}

/* A packet's addresses: UD's from the request, RC's and UC's from the QP
 * (the destination's MAC looked up once). */
static int spec_address(struct xhcad *d, struct sq_state *s, const struct xhca_qp_ctx *c,
			const struct xhca_swqe *w, struct xhca_pkt_spec *p)
{
	const struct qp_host *qh = s->qh;

	memcpy(p->smac, d->net.mac, 6);
	p->pkey = c->pkey;
	p->sport = (__u16)(0xc000 | (qh->gqpn & 0x3fff)); /* the flow's entropy */
	if (qh->type == XHCA_QPT_UD) {
		if (net_dest_mac(d, w->dest_ip, p->dmac))
			return -EHOSTUNREACH;
		memcpy(p->dst_ip, w->dest_ip, 16);
		if (net_ud_source(d, w->dest_ip, p->src_ip))
			return -EADDRNOTAVAIL;
		p->dqpn = w->dest_qpn;
		/* verbs: a Q_Key with its high bit set means the QP's own */
		p->deth_qkey = (w->dest_qkey & 0x80000000u) ? c->qkey : w->dest_qkey;
		p->deth_sqp = qh->gqpn;
	} else {
		if (!s->dmac_ok) {
			if (net_dest_mac(d, c->remote_ip, s->dmac))
				return -EHOSTUNREACH;
			s->dmac_ok = 1;
		}
		memcpy(p->dmac, s->dmac, 6);
		memcpy(p->src_ip, c->local_ip, 16);
		memcpy(p->dst_ip, c->remote_ip, 16);
		p->dqpn = c->dest_qpn;
	}
	p->ipv6 = !xhca_ip_is_v4(p->dst_ip);
	return 0;
}

/* READ request i of e asks for response packets [first, end): from what
 * arrived already, on a retry. */
static void spec_read(const struct sq_ent *e, __u32 i, __u32 mtu, struct xhca_pkt_spec *p)
{
	const struct xhca_swqe *w = &e->w;
	__u32 first = i * RD_CHUNK, end = first + RD_CHUNK;
	__u64 last_byte;

	if (first < e->rd_off / mtu)
		first = e->rd_off / mtu;
	if (end > e->npkts)
		end = e->npkts;
	last_byte = (__u64)end * mtu < w->len ? (__u64)end * mtu : w->len;
	p->psn = (e->psn + first) & XHCA_PSN_MASK;
	p->reth_va = w->remote_va + (__u64)first * mtu;
	p->reth_rkey = w->rkey;
	p->reth_len = (__u32)(last_byte - (__u64)first * mtu);
}

/* RC packet i of e left at psn: a retransmission when before the highest
 * PSN sent, which it may move on (a READ request: past its responses). */
static void note_sent(struct xhcad *d, struct sq_state *s, const struct sq_ent *e, __u32 i,
		      __u8 op, __u32 psn)
{
	__u32 end = psn + 1;

	if (op == XHCA_OP_READ_REQ)
		end = e->psn + (i * RD_CHUNK + RD_CHUNK < e->npkts ? i * RD_CHUNK + RD_CHUNK
								  : e->npkts);
	if (xhca_psn_diff(psn, s->hi_psn) < 0)
		eng()->req.retransmits++;
	if (xhca_psn_diff(end, s->hi_psn) > 0)
		s->hi_psn = end & XHCA_PSN_MASK;
}

/* Whether the last packet of e, at psn, asks for an ACK (RC). RXE asks at
 * the end of every message, and its responder acknowledges each one. Here a
 * message asks only when something waits for the answer: its completion
 * (signaled), the queue's tail (nothing fetched after it: the last ACK comes
 * without the timer), the responder's credits used up (the ACK brings a new
 * count), or ACKREQ_EVERY PSNs after the last that asked, half the queue's
 * depth if that is less (the window, at least CWND_MIN, never fills without
 * one, and the application's unsignaled requests retire before its queue
 * is full; behind it, on a retry, every message asks). READs and ATOMICs are
 * answered anyway. Fewer ACKs are fewer frames for both ends: 64-byte SENDs
 * between two xhcads, one ACK per 85 SENDs instead of per 3 (docs/bench.md). */
static int ackreq_due(const struct sq_state *s, const struct sq_ent *e, __u32 psn)
{
	int since = xhca_psn_diff(psn, s->ackreq_psn);
	int every = s->depth / 2 < ACKREQ_EVERY ? (int)s->depth / 2 : ACKREQ_EVERY;

	if (is_rdat(e->w.opcode) || (e->w.flags & XHCA_SEND_SIGNALED) || s->next + 1 == s->fetched)
		return 1;
	if (s->credits_on && takes_rq(e->w.opcode) && (int)(s->rq_sent - s->rq_limit) >= 0)
		return 1;
	return since >= every || since <= 0;
}

/* Whether UD QP s sends p elsewhere than before: a run breaks at each
 * change of address, and one send a packet costs more than the TX ring's
 * batches. Such a QP (UCX's, a peer each message) keeps to the TX ring. */
static int ud_spread(struct sq_state *s, const struct xhca_pkt_spec *p)
{
	if (s->qh->type != XHCA_QPT_UD)
		return 0;
	if (!s->ud_dst_set) {
		memcpy(s->ud_dst, p->dst_ip, sizeof(s->ud_dst));
		s->ud_dst_set = 1;
	}
	return memcmp(s->ud_dst, p->dst_ip, sizeof(s->ud_dst)) != 0;
}

/* Packet p of s built and sent: into the engine's GSO run (gso.c), or
 * built where the kernel takes it from, a UMEM frame on the TX ring. A QP
 * keeps to one of them, so its packets stay in order: one the run takes
 * none of (for this host, tagged), and a UD QP that sends to a second
 * address, keep to the TX ring until a reset. */
static int packet_out(struct xhcad *d, struct sq_state *s, struct xhca_pkt_spec *p)
{
	__u32 psn0;
	int len, r;
	void *f;

	if (d->gso && !s->gso_no && ud_spread(s, p)) {
		gso_flush(d, NULL); /* (its packets in the run go first) */
		s->gso_no = 1;
	}
	if (d->gso && !s->gso_no) {
		r = gso_put(d, p, s->qh->type == XHCA_QPT_RC ? &psn0 : NULL);
		if (r == -ENOBUFS) {
			sq_refused(d, s, psn0, now_ns()); /* (the run was this QP's: sq_run) */
			return -EAGAIN;
		}
		if (r <= 0)
			return r;
		s->gso_no = 1;
	}
	len = xhca_pkt_len(p);
	f = len > 0 ? xsk_tx_alloc(d, (__u32)len) : NULL;
	if (!f)
		return len < 0 ? len : -errno;
	len = xhca_pkt_build(p, f, (size_t)len);
	r = len < 0 ? len : xsk_tx_submit(d, (__u32)len);
	if (len < 0)
		xsk_tx_abort(d);
	return r;
}

/* Packet i of request e: built and on the TX ring. -EAGAIN: the ring is
 * full; -EHOSTUNREACH: no neighbour yet; else a request the packet
 * builder refuses. */
static int sq_packet(struct xhcad *d, struct sq_state *s, const struct xhca_qp_ctx *c,
		     struct sq_ent *e, __u32 i, int ackreq)
{
	struct qp_host *qh = s->qh;
	const struct xhca_swqe *w = &e->w;
	__u32 mtu = 1u << c->mtu_shift, off = 0, plen = 0;
	__u8 op = send_op(w->opcode, (int)e->npkts, i), buf[4096];
	struct xhca_pkt_spec p;
	int last, r;

	if (e->direct) {
		/* the program sent it (direct_take), asking for an ACK (RC) */
		e->direct = 0;
		if (qh->type == XHCA_QPT_RC) {
			s->ackreq_psn = e->psn;
			note_sent(d, s, e, i, op, e->psn);
		}
		return 0;
	}
	xhca_pkt_spec_init(&p, (__u8)(qh->type << 5) | op);
	r = spec_address(d, s, c, w, &p);
	if (r)
		return r;
	last = op != XHCA_OP_SEND_FIRST && op != XHCA_OP_SEND_MIDDLE &&
	       op != XHCA_OP_WRITE_FIRST && op != XHCA_OP_WRITE_MIDDLE;
	if (op == XHCA_OP_READ_REQ) {
		spec_read(e, i, mtu, &p);
	} else if (op == XHCA_OP_ATOMIC_WRITE) {
		p.psn = e->psn;
		p.payload = (const __u8 *)&w->compare_add;
		p.payload_len = 8;
		p.reth_va = w->remote_va;
		p.reth_rkey = w->rkey;
		p.reth_len = 8;
	} else if (op == XHCA_OP_CMP_SWAP || op == XHCA_OP_FETCH_ADD) {
		p.psn = e->psn;
		p.atomic_va = w->remote_va;
		p.atomic_rkey = w->rkey;
		p.atomic_swap = op == XHCA_OP_CMP_SWAP ? w->swap : w->compare_add;
		p.atomic_cmp = op == XHCA_OP_CMP_SWAP ? w->compare_add : 0;
	} else {
		p.psn = (e->psn + i) & XHCA_PSN_MASK;
		off = i * mtu;
		plen = w->len - off < mtu ? w->len - off : mtu;
		/* one copy: from host memory into the frame, where it can */
		p.payload = plen ? sge_span(d, qh->owner, w, off, plen) : buf;
		if (!p.payload && sq_sge_io(d, qh->owner, w, off, buf, plen, 0))
			return -EFAULT;
		if (!p.payload)
			p.payload = buf;
		p.payload_len = plen;
		p.reth_va = w->remote_va;
		p.reth_rkey = w->rkey;
		p.reth_len = w->len;
		p.imm = ntohl(w->imm);
		p.ieth_rkey = w->imm;
		if (last && (w->flags & XHCA_SEND_SOLICITED) &&
		    w->opcode != XHCA_WR_RDMA_WRITE)
			p.se = 1;
	}
	p.ackreq = qh->type == XHCA_QPT_RC && (ackreq || (last && ackreq_due(s, e, p.psn)));
	r = packet_out(d, s, &p);
	if (r)
		return r;
	if (p.ackreq) {
		s->ackreq_psn = p.psn;
		eng()->req.ackreqs++;
	}
	if (qh->type == XHCA_QPT_RC)
		note_sent(d, s, e, i, op, p.psn);
	eng()->req.packets++;
	eng()->req.bytes += plen;
	return 0;
}

/* PSNs a request takes: one per packet (a READ: per response packet). */
static __u32 npkts_of(const struct sq_ent *e, __u32 mtu)
{
	if (e->w.opcode == XHCA_WR_ATOMIC_CMP_AND_SWP || e->w.opcode == XHCA_WR_ATOMIC_FETCH_AND_ADD)
		return 1;
	return e->w.len ? (e->w.len + mtu - 1) / mtu : 1;
}

/* Whether the next packet of e may go now (RC: the window inside a
 * message, the READ/ATOMIC limits): 1 yes (*edge: it asks for an ACK), 0
 * not now, -1 look again (a READ's chunks that responses filled meanwhile
 * were skipped). */
static int may_send(const struct sq_state *s, struct sq_ent *e, __u32 mtu, int rc, int *edge)
{
	__u32 end;

	*edge = 0;
	if (rc && !is_rdat(e->w.opcode) && !s->whole_only && tmo_ns(s)) {
		/* the window inside a message; the packet before its edge
		 * asks for an ACK */
		int ahead = xhca_psn_diff(e->psn + e->sent, s->una_psn);

		int cwnd = (int)sq_cwnd(s, mtu);

		if (ahead >= cwnd)
			return 0;
		*edge = ahead + 1 >= cwnd && e->sent + 1 < e->npkts;
	}
	if (!rc || !is_rdat(e->w.opcode))
		return 1;
	/* READ/ATOMIC requests outstanding, and READ responses asked for, are
	 * limited. After a go-back, responses of the earlier requests may have
	 * filled chunks meanwhile: never ask for one that is complete. */
	if (e->w.opcode == XHCA_WR_RDMA_READ && e->sent < e->rd_off / mtu / RD_CHUNK) {
		e->sent = e->rd_off / mtu / RD_CHUNK;
		return -1;
	}
	end = e->sent * RD_CHUNK + RD_CHUNK;
	if (e->sent >= e->subs_hi && s->rd_out >= s->max_rd_atomic)
		return 0;
	if (end > e->npkts)
		end = e->npkts;
	if (e->w.opcode == XHCA_WR_RDMA_READ &&
	    xhca_psn_diff(e->psn + end, s->una_psn) > RD_WINDOW &&
	    xhca_psn_diff(e->psn + e->sent * RD_CHUNK, s->una_psn) > 0)
		return 0;
	return 1;
}

/* A packet of e could not be built or queued (r): the queue waits for a
 * neighbour or for TX room, or the request fails. */
static void packet_failed(struct xhcad *d, struct sq_state *s, struct sq_ent *e, int r,
			  __u64 now, int *more)
{
	if (r == -EHOSTUNREACH || r == -EADDRNOTAVAIL) {
		s->hold_until = now + NEIGH_RETRY_NS;
		return;
	}
	if (r == -EAGAIN) {
		*more = 1;
		return;
	}
	/* its buffer freed meanwhile; a frame the UMEM cannot hold (path MTU
	 * 4096) */
	pr_debug("qp 0x%06x: request packet: %s\n", s->qh->gqpn, strerror(-r));
	sq_fail(d, s->qh, e, r == -EFAULT ? XHCA_WC_LOC_PROT_ERR : XHCA_WC_LOC_QP_OP_ERR, 0);
}

/* The next request e starts, its PSNs assigned; -EAGAIN: it waits (RC: a
 * FENCE behind READs/ATOMICs, the window full, the responder's credits). */
static int sq_start(struct xhcad *d, struct sq_state *s, struct sq_ent *e, __u32 mtu, int rc)
{
	if (rc && (e->w.flags & XHCA_SEND_FENCE) && s->rd_out)
		return -EAGAIN;
	if (rc && xhca_psn_diff(s->psn, s->una_psn) >= (int)sq_cwnd(s, mtu))
		return -EAGAIN;
	if (rc && credit_wait(d, s, e))
		return -EAGAIN;
	s->rq_sent += rc && takes_rq(e->w.opcode);
	e->npkts = npkts_of(e, mtu);
	e->psn = s->psn;
	if (e->w.flags & XHCA_SEND_DIRECT)
		direct_take(s, e, rc);
	s->psn = (s->psn + e->npkts) & XHCA_PSN_MASK;
	e->started = 1;
	sq_note(d, s, s->next + 1);
	return 0;
}

/* The memory window's bind or invalidation at s->next, executed in its
 * turn (no PSN): done, completed after what is before it; -1 when it
 * failed (the QP in error). */
static int sq_local(struct xhcad *d, struct sq_state *s, struct sq_ent *e)
{
	struct qp_host *qh = s->qh;
	struct mw_bind b = {
		.rkey = e->w.rkey, .lkey = e->w.imm, .addr = e->w.remote_va,
		.len = e->w.compare_add, .access = (__u32)e->w.swap,
	};
	__u8 st;

	if (e->w.opcode == XHCA_WR_LOCAL_INV)
		st = mw_invalidate(d, qh->owner, qh->pd, qh->gqpn, e->w.imm, 0) ?
		     XHCA_WC_LOC_QP_OP_ERR : XHCA_WC_SUCCESS;
	else
		st = mw_bind(d, qh->owner, qh->pd, qh->gqpn, &b);
	if (st) {
		sq_fail(d, qh, e, st, 0);
		return -1;
	}
	e->started = e->done = 1;
	if (s->acked == s->next)
		s->acked++;
	s->next++;
	return 0;
}

/* Sends what it may of s's requests, up to budget packets. */
static int sq_send(struct xhcad *d, struct sq_state *s, const struct xhca_qp_ctx *c, int budget,
		   __u64 now, int *more)
{
	struct qp_host *qh = s->qh;
	__u32 mtu = 1u << c->mtu_shift;
	int n = 0, rc = qh->type == XHCA_QPT_RC;

	if (c->state != XHCA_QPS_RTS || s->error || now < s->hold_until)
		return 0;
	while (n < budget && s->next != s->fetched) {
		struct sq_ent *e = ent(s, s->next);
		__u32 want;

		if (e->done) { /* acknowledged while going back */
			s->next++;
			continue;
		}
		if (e->status) {
			sq_fail(d, qh, e, e->status, 0);
			break;
		}
		if (is_local(e->w.opcode)) {
			if (sq_local(d, s, e))
				break;
			continue;
		}
		if (!e->started && sq_start(d, s, e, mtu, rc))
			break;
		want = e->w.opcode == XHCA_WR_RDMA_READ ? (e->npkts + RD_CHUNK - 1) / RD_CHUNK
			: is_rdat(e->w.opcode) ? 1 : e->npkts;
		while (e->sent < want && n < budget) {
			int r, ok, edge;

			ok = may_send(s, e, mtu, rc, &edge);
			if (ok < 0)
				continue;
			if (!ok)
				break;
			r = sq_packet(d, s, c, e, e->sent, edge);
			if (r) {
				packet_failed(d, s, e, r, now, more);
				return n;
			}
			if (is_rdat(e->w.opcode) && e->sent >= e->subs_hi) {
				e->subs_hi = e->sent + 1;
				s->rd_out++;
			}
			e->sent++;
			e->edge |= edge;
			if (++n % TX_BATCH == 0)
				xsk_tx_kick(d);
		}
		if (e->sent < want)
			break;
		if (rc) {
			if (tmo_ns(s))
				s->deadline = now + tmo_ns(s);
		} else {
			e->done = 1; /* UC, UD: done when sent */
			if (s->acked == s->next)
				s->acked++;
		}
		s->next++;
	}
	/* the timer runs while anything sent waits for an answer: a retry
	 * asking for part of a READ is sent before the READ is whole */
	if (rc && n && !s->deadline && tmo_ns(s))
		s->deadline = now + tmo_ns(s);
	if (n >= budget)
		*more = 1;
	return n;
}

void sq_catch_up(struct xhcad *d, struct qp_host *qh)
{
	struct sq_state *s = qh->sq;
	const struct xhca_qp_ctx *c;
	struct sq_ent *e;
	__u64 now;
	__u32 psn0;
	int more = 0;

	if (!s || !s->direct || !sq_pending(s))
		return;
	c = &d->ctxm[lidx_of(d, qh)];
	sq_fetch(d, s, c);
	e = ent(s, s->next);
	if (s->next == s->fetched || e->started || !(e->w.flags & XHCA_SEND_DIRECT))
		return;
	now = now_ns();
	gso_flush(d, NULL); /* (the run may be another QP's) */
	sq_send(d, s, c, 1, now, &more);
	if (gso_flush(d, s->qh->type == XHCA_QPT_RC ? &psn0 : NULL) &&
	    s->qh->type == XHCA_QPT_RC)
		sq_refused(d, s, psn0, now); /* (refused: sent by xhcad, not taken) */
}

/* The engine's send queues from s on, then those before it (prev the one
 * before s, tail the last): the queues the budget left out go first in the
 * next run, so no queue waits behind others that always have more. */
static void rotate_to(struct sq_state *s, struct sq_state *prev, struct sq_state *tail)
{
	struct engine *e = eng();

	prev->next_sq = NULL;
	tail->next_sq = e->sq.list;
	e->sq.list = s;
}

/* (On the main thread, its engine stopped: the frames go on the main
 * thread's TX ring or GSO run. A sender that posts unsignaled datagrams and
 * destroys its QP at once, as mckey -s does, loses none. RC's requests are
 * left: what they were for needs the responses the QP will not be there
 * to take.) */
void sq_drain(struct xhcad *d, struct qp_host *qh)
{
	struct sq_state *s = qh->sq;
	const struct xhca_qp_ctx *c;
	int more = 0;

	if (!s || qh->type == XHCA_QPT_RC)
		return;
	c = &d->ctxm[lidx_of(d, qh)];
	sq_fetch(d, s, c);
	if (s->next == s->fetched)
		return;
	sq_send(d, s, c, (int)s->depth, now_ns(), &more);
	gso_flush(d, NULL);
	xsk_tx_kick(d);
}

int sq_run(struct xhcad *d, int budget, int *more, __u64 *deadline)
{
	struct sq_state *prev = NULL, *left = NULL, *left_prev = NULL;
	__u64 now = now_ns();
	int n = 0;

	*more = 0;
	*deadline = 0;
	if (eng()->sq.list && net_local_mac(d))
		return 0;
	/* Each QP's turn starts with the run empty (READ responses may be in
	 * it) and ends with its own run sent, or sent again later. */
	gso_flush(d, NULL);
	for (struct sq_state *s = eng()->sq.list; s; prev = s, s = s->next_sq) {
		const struct xhca_qp_ctx *c = &d->ctxm[lidx_of(d, s->qh)];
		int rc = s->qh->type == XHCA_QPT_RC;
		__u32 psn0;

		sq_fetch(d, s, c);
		if (s->deadline && now >= s->deadline)
			sq_timeout(d, s);
		if (n < budget) {
			int sent = sq_send(d, s, c, budget - n, now, more);

			n += sent;
			if (gso_flush(d, rc ? &psn0 : NULL) && rc)
				sq_refused(d, s, psn0, now); /* (its hold_until: the deadline below) */
			else if (sent && s->hold_until <= now)
				s->refusals = 0;
		} else if (s->next != s->fetched) {
			*more = 1;
			if (!left) {
				left = s;
				left_prev = prev;
			}
		}
		n += sq_retire(d, s, now);
		if (s->deadline && (!*deadline || s->deadline < *deadline))
			*deadline = s->deadline;
		if (s->hold_until > now && s->next != s->fetched &&
		    (!*deadline || s->hold_until < *deadline))
			*deadline = s->hold_until;
	}
	if (left && left_prev)
		rotate_to(left, left_prev, prev);
	return n;
}

__u32 sq_in_flight(const struct xhcad *d, const struct cq *cq)
{
	__u32 n = 0;

	/* (the control thread's, the engines stopped: a CQ's QPs may be on
	 * any of them) */
	for (__u32 k = 0; k < d->neng; k++) {
		for (const struct sq_state *s = d->eng[k].sq.list; s; s = s->next_sq) {
			__u32 prod;

			if (s->cq != cq || sq_prod(s, &prod))
				continue;
			for (__u32 i = s->cons; i != prod; i++)
				n += !!(s->e[i & (s->depth - 1)].flags & XHCA_SEND_SIGNALED);
		}
	}
	return n;
}

int sq_ready(const struct xhcad *d)
{
	if (eng()->sq.deadline && now_ns() >= eng()->sq.deadline)
		return 1;
	for (const struct sq_state *s = eng()->sq.list; s; s = s->next_sq)
		if (sq_pending(s))
			return 1;
	return 0;
}

int sq_arm(struct xhcad *d)
{
	int again = 0;

	eng()->sq.poll = 0;
	for (struct sq_state *s = eng()->sq.list; s; s = s->next_sq) {
		struct session *se = s->qh->owner ? session_find(d, s->qh->owner) : NULL;

		/* A session kept across a restart has not sent this xhcad its
		 * doorbell yet (it does when it resumes): its rings are looked
		 * at every SQ_POLL_NS meanwhile, never armed (its library would
		 * ring the old xhcad's doorbell). */
		if (se && se->sq_dbfd < 0) {
			__atomic_store_n(&s->ring->armed, 0, __ATOMIC_SEQ_CST);
			eng()->sq.poll = 1;
			continue;
		}
		if (__atomic_load_n(&s->ring->armed, __ATOMIC_RELAXED))
			continue;
		__atomic_store_n(&s->ring->armed, 1, __ATOMIC_SEQ_CST);
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (struct sq_state *s = eng()->sq.list; s; s = s->next_sq)
		if (sq_pending(s))
			again = 1;
	return again;
}
