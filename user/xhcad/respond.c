/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The responder's half that needs a processor: RDMA READ and ATOMIC requests
 * xhca_rx checked (R_Key, key, PD, access, bounds, alignment) execute here,
 * and their responses, and the NAKs of requests xhca_rx refused, leave
 * through the AF_XDP TX ring (xsk_tx; READ responses in GSO runs with
 * --gso, with --steer the rest too: resp_tx_wire), built whole by the
 * packet builder:
 * Ethernet and IP swapped from the request (or the QP's addresses and the
 * neighbour table, for a NAK), the QP's remote QPN and P_Key, the request's
 * PSN (a READ's responses take one PSN each), the AETH with the MSN xhca_rx
 * counted, the ICRC. The delivery loop kicks the TX ring once per round.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_ether.h>
#include <xhca/pkt.h>
#include <xhca/wire.h>
#include "log.h"
#include "xhcad_transport.h"


/* What an ACKNOWLEDGE that left was (an RNR NAK is a NAK too). */
static void count_aeth(struct xhcad *d, __u8 syndrome)
{
	if (!XHCA_AETH_KIND(syndrome)) {
		eng()->resp.acks++;
		return;
	}
	eng()->naks++;
	if (XHCA_AETH_KIND(syndrome) == XHCA_AETH_RNR)
		eng()->resp.rnr_naks++;
	else if (syndrome == XHCA_AETH_NAK_SEQ)
		eng()->resp.seq_naks++;
}

static void ack_flush(struct xhcad *d, struct qp_host *qh);

/* An ACKNOWLEDGE with that AETH syndrome at s's PSN and MSN, counted. */
static void send_aeth(struct xhcad *d, struct xhca_pkt_spec *s, __u8 syndrome)
{
	s->opcode = XHCA_OPC_RC | XHCA_OP_ACK;
	s->aeth_syndrome = syndrome;
	if (!resp_send_spec(s, resp_tx_wire, d))
		count_aeth(d, syndrome);
}

/* The 8 bytes an ATOMIC works on, in host memory, or NULL. */
static __u64 *atomic_target(struct xhcad *d, const struct mr_rt *mr, __u64 va)
{
	struct hm_alloc *a = hm_find(d, mr->alloc);
	__u64 off;

	if (!a || va < mr->e.iova || va - mr->e.iova > mr->e.length - 8 || mr->e.length < 8)
		return NULL;
	off = hm_base(a, mr->off + (va - mr->e.iova));
	return off % 8 ? NULL : (__u64 *)(d->hm.base + off);
}

/* Where a READ's bytes are in host memory, page by page, in order. */
static int read_spans(struct xhcad *d, const struct hm_alloc *a, __u64 off, __u32 len,
		      struct resp_job *j)
{
	__u32 n = (__u32)(((off % XHCA_PAGE_SIZE) + len + XHCA_PAGE_SIZE - 1) / XHCA_PAGE_SIZE);

	j->span = calloc(n ? n : 1, sizeof(*j->span));
	if (!j->span)
		return -ENOMEM;
	j->nspan = 0;
	while (len) {
		__u32 k = XHCA_PAGE_SIZE - (__u32)(off % XHCA_PAGE_SIZE);

		if (k > len)
			k = len;
		j->span[j->nspan].hoff = hm_base(a, off);
		j->span[j->nspan++].len = k;
		off += k;
		len -= k;
	}
	return 0;
}

/* A READ's bytes: dlen at va of the region rkey names (0 with the spans
 * filled), -ENOENT if the region does not hold them now, -ENOMEM. */
static int read_job(struct xhcad *d, __u32 rkey, __u64 va, __u32 dlen, struct resp_job *j)
{
	struct mr_rt *mr;
	struct hm_alloc *a;

	j->dlen = dlen;
	if (!dlen)
		return 0;
	mr = mr_find(d, rkey);
	a = mr ? hm_find(d, mr->alloc) : NULL;
	if (!a || !mr->e.valid || va < mr->e.iova || dlen > mr->e.length ||
	    va - mr->e.iova > mr->e.length - dlen)
		return -ENOENT;
	return read_spans(d, a, mr->off + (va - mr->e.iova), dlen, j);
}

/* Keeps what a READ or ATOMIC was, for its duplicates (the oldest goes). */
static void res_add(struct qp_host *qh, const struct resp_job *j, __u32 rkey, __u64 va)
{
	struct resp_res *r = &qh->resp.res[qh->resp.res_next++ % RESP_RES];

	memset(r, 0, sizeof(*r));
	r->op = j->op;
	r->psn = j->psn;
	r->npkts = j->op == XHCA_OP_READ_REQ && j->dlen ? (j->dlen + j->mtu - 1) / j->mtu : 1;
	r->msn = j->s.aeth_msn;
	r->rkey = rkey;
	r->va = va;
	r->len = j->op == XHCA_OP_READ_REQ ? j->dlen : 8;
}

void resp_atomic_done(struct xhcad *d, __u32 lidx, __u32 gen, __u32 psn, __u64 orig)
{
	struct qp_host *qh = lidx < d->max_qps ? &d->qh[lidx] : NULL;

	if (!qh || !qh->valid || qh->gen != gen)
		return;
	for (int i = 0; i < RESP_RES; i++) {
		struct resp_res *r = &qh->resp.res[i];

		if (r->op != XHCA_OP_READ_REQ && xhca_op_responded(r->op) && r->psn == psn) {
			r->orig = orig;
			r->done = 1;
		}
	}
}

int resp_resolve(struct xhcad *d, struct qp_host *qh, const struct pkt_info *pi,
		 struct resp_job *j)
{
	const struct xhca_rx_meta *m = pi->m;
	const struct xhca_qp_ctx *c = &d->ctxm[m->lidx];
	struct xhca_pkt_spec *s = &j->s;
	const __u8 *bth = pi->bth;
	struct mr_rt *mr;
	int r;

	ack_flush(d, qh); /* its NAK or response after the ACKs owed before it */
	memset(j, 0, sizeof(*j));
	if (!bth || !(m->flags & XHCA_MF_MSN) ||
	    resp_reply_spec(pi->fr, pi->len, c, s, XHCA_OPC_RC | XHCA_OP_ACK) < 0)
		return XHCA_H_BAD_META;
	j->op = pi->op;
	j->psn = m->psn;
	s->aeth_msn = m->msg_len & XHCA_PSN_MASK;
	s->psn = m->psn;
	if (j->op == XHCA_OP_READ_REQ) {
		j->mtu = 1u << c->mtu_shift;
		r = read_job(d, be32(bth + 20), be64(bth + 12), be32(bth + 24), j);
		if (r == -ENOMEM)
			return XHCA_H_RESP_FAIL;
		if (r) {
			/* deregistered since xhca_rx checked it */
			send_aeth(d, s, XHCA_AETH_NAK_ACCESS);
			qh->cnt.errors++;
			return XHCA_H_RESP_FAIL;
		}
		res_add(qh, j, be32(bth + 20), be64(bth + 12));
		return 0;
	}
	if (j->op == XHCA_OP_CMP_SWAP || j->op == XHCA_OP_FETCH_ADD ||
	    j->op == XHCA_OP_ATOMIC_WRITE) {
		__u64 va = be64(bth + 12);

		if (j->op == XHCA_OP_ATOMIC_WRITE) {
			/* IBA 1.5: RETH, then the 8 bytes, stored whole (xhca_rx
			 * checked the key, the length and the alignment) */
			if (bth + 28 + 8 > pi->fr + pi->len)
				return XHCA_H_BAD_META;
			memcpy(&j->arg, bth + 28, 8); /* (BTH, RETH) */
		} else {
			j->arg = be64(bth + 24);
			j->cmp = be64(bth + 32);
		}
		mr = mr_find(d, be32(bth + 20));
		j->word = mr && mr->e.valid ? atomic_target(d, mr, va) : NULL;
		if (!j->word) {
			send_aeth(d, s, mr && mr->e.valid ? XHCA_AETH_NAK_INVALID : XHCA_AETH_NAK_ACCESS);
			qh->cnt.errors++;
			return XHCA_H_RESP_FAIL;
		}
		res_add(qh, j, be32(bth + 20), va);
		return 0;
	}
	return XHCA_H_UNSUPPORTED;
}

int respond(struct xhcad *d, struct qp_host *qh, const struct pkt_info *pi)
{
	const struct xhca_rx_meta *m = pi->m;
	struct resp_job j;
	int r = resp_resolve(d, qh, pi, &j);

	if (r)
		return r;
	ack_flush(d, qh); /* the responses after what came before them */
	r = resp_execute(d->hm.base, &j, resp_tx_wire, d);
	if (j.op != XHCA_OP_READ_REQ) /* executed, even if its response did not leave */
		resp_atomic_done(d, m->lidx, m->gen, j.psn, j.s.atomic_orig);
	resp_job_free(&j);
	return r ? XHCA_H_RESP_FAIL : XHCA_H_RESPONDED;
}

/* The NAK of a request xhca_rx refused (it moved the QP to the error
 * state): back the way the request came (the event carries its Ethernet
 * addresses), to the QP's remote address. */
static void respond_nak(struct xhcad *d, const struct xhca_event *e)
{
	const struct xhca_qp_ctx *c = &d->ctxm[e->lidx];
	struct xhca_pkt_spec s;

	if (c->type != XHCA_QPT_RC)
		return;
	ack_flush(d, &d->qh[e->lidx]);
	xhca_pkt_spec_init(&s, XHCA_OPC_RC | XHCA_OP_ACK);
	s.ipv6 = !!(c->flags & XHCA_QPF_IPV6);
	memcpy(s.src_ip, c->local_ip, 16);
	memcpy(s.dst_ip, c->remote_ip, 16);
	memcpy(s.smac, e->dmac, 6);
	memcpy(s.dmac, e->smac, 6);
	s.dqpn = c->dest_qpn;
	s.pkey = c->pkey;
	s.psn = e->psn;
	s.aeth_msn = __atomic_load_n(&c->msn, __ATOMIC_RELAXED) & XHCA_PSN_MASK;
	send_aeth(d, &s, e->reason >= XHCA_R_DROP_MR_RKEY && e->reason <= XHCA_R_DROP_MR_BOUNDS
				? XHCA_AETH_NAK_ACCESS
				: XHCA_AETH_NAK_INVALID);
	gso_flush(d, NULL); /* not from a delivery round: now */
	xsk_tx_kick(d);
}

/* ---- the RC responder's acknowledgements ---------------------------------- */

/* The AETH credit code of an ACK whose receive queue index was cons: the
 * buffers posted since (IBA 9.7.7.2.5; what messages after the ACK took
 * counts against the requester's allowance too). None with no receive
 * queue, and none with a shared one: an SRQ's buffers are every QP's, no
 * QP's to promise (IBA 10.2.9.1). */
static __u8 credit_code_at(const struct qp_host *qh, __u32 cons)
{
	if (!qh->rcv.rq || qh->rcv.srq)
		return XHCA_AETH_ACK_NO_CREDIT;
	return xhca_credit_code(__atomic_load_n(&qh->rcv.rq->prod, __ATOMIC_ACQUIRE) - cons);
}

/* ... of an ACK made now. */
static __u8 credit_code(const struct qp_host *qh)
{
	return credit_code_at(qh, recv_cons(qh));
}

static __u32 msn_full(const struct xhcad *d, __u32 lidx, __u16 low)
{
	return resp_msn(&d->ctxm[lidx], low);
}

/* --recv-fast: the ACK of all xhca_rx accepted, now, for an RC QP that
 * goes (destroyed, reset, in error) after xhca_rx placed SENDs of its: the
 * ACK of one whose completion its application saw may still wait in the
 * flow queue (placed_ack), and an HCA acknowledges a message before its
 * application can see it. From the context: it has the addresses. */
void resp_final_ack(struct xhcad *d, struct qp_host *qh, __u32 lidx)
{
	const struct xhca_qp_ctx *c = &d->ctxm[lidx];
	__u32 word = __atomic_load_n(&c->rx_psn, __ATOMIC_ACQUIRE);
	struct xhca_pkt_spec s;

	if (!qh->rcv.rf || !__atomic_load_n(&qh->rcv.rf->placed, __ATOMIC_RELAXED) ||
	    c->type != XHCA_QPT_RC || (word & XHCA_RXPSN_ERR))
		return;
	ack_flush(d, qh);
	xhca_pkt_spec_init(&s, XHCA_OPC_RC | XHCA_OP_ACK);
	s.ipv6 = !!(c->flags & XHCA_QPF_IPV6);
	memcpy(s.src_ip, c->local_ip, 16);
	memcpy(s.dst_ip, c->remote_ip, 16);
	memcpy(s.smac, d->net.mac, 6);
	if (net_dest_mac(d, c->remote_ip, s.dmac))
		return;
	s.sport = (__u16)(0xc000 | (qh->gqpn & 0x3fff));
	s.dqpn = c->dest_qpn;
	s.pkey = c->pkey;
	s.psn = ((word & XHCA_RXPSN_MASK) - 1) & XHCA_PSN_MASK;
	s.aeth_msn = __atomic_load_n(&c->msn, __ATOMIC_RELAXED) & XHCA_PSN_MASK;
	send_aeth(d, &s, credit_code(qh));
	gso_flush(d, NULL); /* not from a delivery round: now */
	xsk_tx_kick(d);
}

/* ---- credit updates ------------------------------------------------------------ */

/* How far the QP's last ACK lets the requester go, in receive queue
 * entries. */
static __u32 adv_limit(const struct qp_resp *r)
{
	return r->ack_cons + xhca_credit_count(r->ack.aeth_syndrome);
}

static void unwatch(struct xhcad *d, __u32 i);

/* An ACK with a count went: watch the QP while the count is under half its
 * ring (the application reposting may let the requester go further). */
static void credit_sent(struct xhcad *d, struct qp_host *qh)
{
	struct qp_resp *r = &qh->resp;
	__u8 syn = r->ack.aeth_syndrome;
	__u32 count = xhca_credit_count(syn);

	if (XHCA_AETH_KIND(syn) || syn == XHCA_AETH_ACK_NO_CREDIT)
		return; /* (no count: no receive queue of its own) */
	if (count * 2 > qh->rcv.rq_depth) {
		if (r->credit_slot)
			unwatch(d, r->credit_slot - 1);
		return;
	}
	if (r->credit_slot || !eng()->credit_qps || eng()->ncredit_qps >= d->max_qps)
		return;
	eng()->credit_qps[eng()->ncredit_qps++] = (__u32)(qh - d->qh);
	r->credit_slot = eng()->ncredit_qps;
}

/* A watched QP whose last ACK, sent again now, would let the requester go
 * a quarter of the ring further (*code its count); not while the QP waits
 * for a PSN again or has an ACK to send anyway. */
static int credit_due(const struct qp_host *qh, __u8 *code)
{
	const struct qp_resp *r = &qh->resp;
	__u32 step = qh->rcv.rq_depth / 4 ? qh->rcv.rq_depth / 4 : 1;

	if (r->rewound || r->err_psn_set || r->ack_pending)
		return 0;
	*code = credit_code_at(qh, r->ack_cons);
	return (int)(r->ack_cons + xhca_credit_count(*code) - adv_limit(r)) >= (int)step;
}

/* The entry at slot i of the watch list still names its QP (one created
 * at the index since starts unwatched), and the QP still receives (not in
 * the error state; a reset forgets the entry). */
static struct qp_host *watched(struct xhcad *d, __u32 i)
{
	__u32 l = eng()->credit_qps[i];
	struct qp_host *qh = &d->qh[l];

	if (!qh->valid || qh->resp.credit_slot != i + 1 ||
	    __atomic_load_n(&d->ctxm[l].state, __ATOMIC_RELAXED) == XHCA_QPS_ERR)
		return NULL;
	return qh;
}

int resp_credit_due(struct xhcad *d)
{
	__u8 code;

	for (__u32 i = 0; i < eng()->ncredit_qps; i++) {
		struct qp_host *qh = watched(d, i);

		if (!qh || credit_due(qh, &code))
			return 1; /* a stale entry: resp_credits_run drops it */
	}
	return 0;
}

static void unwatch(struct xhcad *d, __u32 i)
{
	struct qp_host *qh = watched(d, i);
	__u32 last = --eng()->ncredit_qps;

	if (qh)
		qh->resp.credit_slot = 0;
	if (i == last)
		return;
	eng()->credit_qps[i] = eng()->credit_qps[last];
	qh = &d->qh[eng()->credit_qps[i]];
	if (qh->resp.credit_slot == last + 1)
		qh->resp.credit_slot = i + 1;
}

int resp_credits_run(struct xhcad *d)
{
	int sent = 0;

	for (__u32 i = 0; i < eng()->ncredit_qps;) {
		struct qp_host *qh = watched(d, i);
		struct xhca_pkt_spec a;
		__u8 code;

		if (!qh) {
			unwatch(d, i);
			continue;
		}
		if (!credit_due(qh, &code)) {
			i++;
			continue;
		}
		/* the last ACK again (its PSN and MSN): only the count is new,
		 * and the last ACK's once it went */
		a = qh->resp.ack;
		a.aeth_syndrome = code;
		if (resp_tx_wire(d, &a)) {
			i++;
			continue;
		}
		qh->resp.ack.aeth_syndrome = code;
		count_aeth(d, code);
		eng()->resp.credit_acks++;
		sent++;
		if (xhca_credit_count(code) * 2 > qh->rcv.rq_depth)
			unwatch(d, i);
		else
			i++;
	}
	return sent;
}

/* The ACK qh owes, now: before anything else leaves for the QP, so the
 * requester sees its responses in PSN order. Its count is taken here, as
 * the receive queue is at the round's end. */
static void ack_flush(struct xhcad *d, struct qp_host *qh)
{
	struct xhca_pkt_spec *a = &qh->resp.ack;

	if (!qh->resp.ack_pending)
		return;
	qh->resp.ack_pending = 0;
	a->aeth_syndrome = credit_code_at(qh, qh->resp.ack_cons);
	if (!resp_tx_wire(d, a)) {
		count_aeth(d, a->aeth_syndrome);
		credit_sent(d, qh);
	}
}

void resp_flush_acks(struct xhcad *d)
{
	for (__u32 i = 0; i < eng()->nack_qps; i++) {
		struct qp_host *qh = &d->qh[eng()->ack_qps[i]];

		if (qh->valid)
			ack_flush(d, qh);
		qh->resp.ack_pending = 0;
	}
	eng()->nack_qps = 0;
}

int resp_init(struct xhcad *d)
{
	/* (every engine's: how many run is known once the RX queues are) */
	for (__u32 k = 0; k < XHCA_ENGINES_MAX; k++) {
		struct engine *e = &d->eng[k];

		e->ack_qps = calloc(d->max_qps, sizeof(*e->ack_qps));
		e->credit_qps = calloc(d->max_qps, sizeof(*e->credit_qps));
		if (!e->ack_qps || !e->credit_qps) {
			resp_fini(d);
			return -ENOMEM;
		}
	}
	return 0;
}

void resp_fini(struct xhcad *d)
{
	for (__u32 k = 0; k < XHCA_ENGINES_MAX; k++) {
		struct engine *e = &d->eng[k];

		free(e->ack_qps);
		free(e->credit_qps);
		e->ack_qps = e->credit_qps = NULL;
		e->nack_qps = e->ncredit_qps = 0;
	}
}

/* s is the QP's last ACK now (a credit update repeats it); its count was
 * taken from the receive queue as it is. */
static void ack_record(struct qp_host *qh, const struct xhca_pkt_spec *s)
{
	qh->resp.ack = *s;
	qh->resp.ack_cons = recv_cons(qh);
}

/* An ACK or NAK back the way the frame came, now. */
static void reply_aeth(struct xhcad *d, const struct xhca_rx_meta *m, const __u8 *fr, __u32 len,
		       __u32 psn, __u32 msn, __u8 syndrome)
{
	struct qp_host *qh = &d->qh[m->lidx];
	struct xhca_pkt_spec s;

	ack_flush(d, qh);
	if (resp_ack_spec(&d->ctxm[m->lidx], fr, len, psn, msn, syndrome, &s) ||
	    resp_tx_wire(d, &s))
		return;
	count_aeth(d, syndrome);
	if (!XHCA_AETH_KIND(syndrome)) {
		ack_record(qh, &s);
		credit_sent(d, qh);
	}
}

/* An ACK that AckReq asked for, owed until the round's end (or until
 * something else leaves for the QP): the round's later ones replace it;
 * ack_flush gives it its credit count. */
static void owe_ack(struct xhcad *d, struct qp_host *qh, const struct pkt_info *pi, __u32 psn,
		    __u32 msn)
{
	const struct xhca_rx_meta *m = pi->m;
	struct xhca_pkt_spec s;

	if (!eng()->ack_qps || resp_ack_spec(&d->ctxm[m->lidx], pi->fr, pi->len, psn, msn, 0, &s)) {
		reply_aeth(d, m, pi->fr, pi->len, psn, msn, credit_code(qh));
		return;
	}
	ack_record(qh, &s);
	if (!qh->resp.ack_pending)
		eng()->ack_qps[eng()->nack_qps++] = m->lidx;
	qh->resp.ack_pending = 1;
}

/* Takes the QP's receive state from xhca_rx, as its WRITE cursor is taken
 * (BUSY), so no packet is accepted half-way: *cur is the word as it was.
 * -1 with the QP in the error state (nothing to rewind). */
static int rx_take(struct xhca_qp_ctx *c, __u32 *cur)
{
	for (;;) {
		*cur = __atomic_load_n(&c->rx_psn, __ATOMIC_ACQUIRE);
		if (*cur & XHCA_RXPSN_ERR)
			return -1;
		if (!(*cur & XHCA_RXPSN_BUSY) &&
		    __atomic_compare_exchange_n(&c->rx_psn, cur, *cur | XHCA_RXPSN_BUSY, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return 0;
	}
}

/*
 * Gives the receive state back as word (xhca_rx expects psn again) with the
 * MSN msn (not on a proxy CQ, where the MSN is also the CSN sequence, which
 * never goes back): the requester sends psn again. Until its packet comes
 * back, what is still in line behind is dropped (rewound). keep: xhcad
 * stays in the message in progress, expecting psn next; else it starts
 * over.
 */
static void rx_rewound(struct xhcad *d, struct qp_host *qh, struct xhca_qp_ctx *c, __u32 word,
		       __u32 psn, __u32 msn, int keep)
{
	if (!qh->px.on)
		__atomic_store_n(&c->msn, msn, __ATOMIC_RELAXED);
	__atomic_store_n(&c->unacked, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->rx_psn, word, __ATOMIC_RELEASE);
	/* (after the store: xhca_rx reads it before rx_psn; see rx_time) */
	__atomic_fetch_add(&c->rw_gen, 1, __ATOMIC_SEQ_CST);
	qh->resp.rewound = 1;
	qh->resp.rw_psn = psn & XHCA_PSN_MASK;
	qh->resp.rw_msn = msn & XHCA_PSN_MASK;
	qh->resp.rw_ns = now_ns(); /* bpf_ktime_get_ns()'s clock, read after the store */
	qh->rcv.discard = 0;
	qh->rcv.psn_valid = keep;
	qh->rcv.next_psn = psn & XHCA_PSN_MASK;
	if (!keep) {
		qh->rcv.in_msg = MSG_NONE;
		qh->rcv.end_psn = psn & XHCA_PSN_MASK; /* (a message starts there) */
	}
	eng()->resp.rewinds++;
}

/* xhca_rx expects psn again, as at a message's start (no WRITE cursor),
 * or, keep, inside the SEND xhcad is in; keep as rx_rewound; quiet: XHCA_RXPSN_NAKED (the NAK already sent
 * covers the gap until psn comes again) or 0. */
static void rewind_to(struct xhcad *d, struct qp_host *qh, __u32 lidx, __u32 psn, __u32 msn,
		      int keep, __u32 quiet)
{
	struct xhca_qp_ctx *c = &d->ctxm[lidx];
	__u32 cur;

	if (rx_take(c, &cur))
		return;
	rx_rewound(d, qh, c,
		   (cur & ~(XHCA_RXPSN_MASK | XHCA_RXPSN_WRITE | XHCA_RXPSN_PRETX |
			    XHCA_RXPSN_PROXY | XHCA_RXPSN_NAKED | XHCA_RXPSN_UC_DROP |
			    XHCA_RXPSN_SEND)) |
			   (keep ? XHCA_RXPSN_SEND : 0) | quiet | (psn & XHCA_PSN_MASK),
		   psn, msn, keep);
}

/*
 * Inside a WRITE, packet psn (not its FIRST) lost or bad after xhca_rx took
 * it, or its LAST without a receive buffer for its immediate: xhca_rx
 * expects that packet again, its WRITE cursor put back to where it was
 * before it (every packet of a WRITE but its LAST is one MTU), the MSN to
 * before the WRITE. Packets before it may have been acknowledged
 * (resp_after), so the WRITE is not received again from its FIRST. A WRITE
 * xhca_rx placed (pretx) is its alone; one xhcad places goes on in xhcad
 * too (MSG_WRITE, its place as it was before the packet: the caller's).
 * Only while the cursor is still this WRITE's; returns -ESTALE otherwise.
 * quiet as rewind_to.
 */
static int rewind_write(struct xhcad *d, struct qp_host *qh, const struct xhca_rx_meta *m,
			__u32 first, __u32 psn, __u32 msn, int pretx, __u32 quiet)
{
	struct xhca_qp_ctx *c = &d->ctxm[m->lidx];
	__u64 off = (__u64)((psn - first) & XHCA_PSN_MASK) << c->mtu_shift;
	__u32 cur;

	if (rx_take(c, &cur))
		return 0;
	if (c->wc_psn != first || !off || off >= c->wc_len || c->wc_len - c->wc_left < off) {
		__atomic_store_n(&c->rx_psn, cur, __ATOMIC_RELEASE); /* as it was */
		return -ESTALE;
	}
	c->wc_va -= c->wc_len - c->wc_left - off;
	c->wc_left = c->wc_len - off;
	if (!pretx)
		qh->rcv.in_msg = MSG_WRITE;
	rx_rewound(d, qh, c,
		   (cur & ~(XHCA_RXPSN_MASK | XHCA_RXPSN_PROXY | XHCA_RXPSN_NAKED |
			    XHCA_RXPSN_UC_DROP | XHCA_RXPSN_PRETX | XHCA_RXPSN_SEND)) |
			   XHCA_RXPSN_WRITE | (pretx ? XHCA_RXPSN_PRETX : 0) | quiet |
			   (psn & XHCA_PSN_MASK),
		   psn, msn, !pretx);
	return 0;
}

/*
 * xhcad is inside a message (a SEND, or a WRITE it places) and a packet of
 * it is missing: lost after xhca_rx took it, bad, or the frame that shows
 * the gap is already of a later message. xhca_rx expects that packet
 * again, with the MSN before the message; xhcad keeps its place in the
 * message (the SEND's buffer and bytes, the WRITE's place and xhca_rx's
 * cursor, rewind_write). Not on a proxy QP. Returns 0 with the PSN and MSN.
 */
static int rewind_in_msg(struct xhcad *d, struct qp_host *qh, const struct xhca_rx_meta *m,
			 __u32 *psn, __u32 *msn, __u32 quiet)
{
	__u32 next = qh->rcv.next_psn, m0 = msn_full(d, m->lidx, qh->resp.msg_csn);

	if (qh->px.on || !qh->rcv.psn_valid || !qh->rcv.in_msg || next == qh->resp.msg_psn)
		return -1;
	if (qh->rcv.in_msg == MSG_SEND)
		rewind_to(d, qh, m->lidx, next, m0, 1, quiet);
	else if (rewind_write(d, qh, m, qh->resp.msg_psn, next, m0, 0, quiet))
		return -1;
	*psn = next;
	*msn = m0;
	return 0;
}

/*
 * Makes xhca_rx expect again what this frame shows missing, with the MSN
 * before its message (any frame's csn is that: xhca_rx counts a message at
 * its end): inside a message xhcad is placing, the packet missing
 * (rewind_in_msg); the LAST with immediate of a WRITE whose immediate found
 * no buffer; a packet of a WRITE xhca_rx placed; else the frame's message
 * from its first PSN (a START, a proxy QP's message, which no ACK covers
 * before it ends). Acknowledgements may cover what came before a packet, so
 * a rewind never goes before one. Returns that PSN and MSN. quiet as
 * rewind_to: after an RNR NAK, IBA 9.7.5.2.8 lets the responder send no
 * other NAK until the packet it names comes again.
 */
static void rewind_msg(struct xhcad *d, struct qp_host *qh, const struct xhca_rx_meta *m,
		       __u32 *psn, __u32 *msn, __u32 quiet)
{
	const struct xhca_opinfo *oi = &xhca_opinfo_tbl[m->opcode];
	__u32 mtu = 1u << d->ctxm[m->lidx].mtu_shift;

	if (!rewind_in_msg(d, qh, m, psn, msn, quiet))
		return;
	*msn = msn_full(d, m->lidx, m->csn);
	if (!(oi->flags & XHCA_O_START) && !qh->px.on && m->reason == XHCA_R_TO_XLATE &&
	    qh->rcv.in_msg == MSG_NONE && (oi->flags & XHCA_O_END) && (oi->flags & XHCA_H_IMM) &&
	    qh->rcv.wr_off >= m->payload_len) {
		/* the LAST of a WRITE xhcad placed, its immediate without a
		 * receive buffer: that LAST again, its bytes placed once more */
		__u32 woff = qh->rcv.wr_off - m->payload_len, wleft = qh->rcv.wr_left + m->payload_len;

		if (m->psn != qh->resp.msg_psn &&
		    !rewind_write(d, qh, m, qh->resp.msg_psn, m->psn, *msn, 0, quiet)) {
			qh->rcv.wr_off = woff;
			qh->rcv.wr_left = wleft;
			*psn = m->psn;
			return;
		}
	}
	if (!(oi->flags & XHCA_O_START) &&
	    (m->reason == XHCA_R_PLACED_ACK || m->reason == XHCA_R_PLACED_TO_FLOWQ)) {
		__u32 first = m->reason == XHCA_R_PLACED_ACK
				      ? m->msg_len
				      : m->psn - (m->msg_len ? (m->msg_len + mtu - 1) / mtu - 1 : 0);

		if (!rewind_write(d, qh, m, first & XHCA_PSN_MASK, m->psn, *msn, 1, quiet)) {
			*psn = m->psn;
			return;
		}
	}
	if (oi->flags & XHCA_O_START)
		*psn = m->psn;
	else if (m->reason == XHCA_R_PLACED_ACK) /* xhca_rx says where its WRITE began */
		*psn = m->msg_len;
	else if (m->reason == XHCA_R_PLACED_TO_FLOWQ) /* its FIRST placed by xhca_rx */
		*psn = m->psn - (m->msg_len ? (m->msg_len + mtu - 1) / mtu - 1 : 0);
	else if (!qh->px.on && qh->rcv.psn_valid && !qh->rcv.in_msg &&
		 xhca_psn_diff(qh->rcv.end_psn, qh->resp.msg_psn) > 0)
		/* between messages: the one at msg_psn ended (and may be
		 * acknowledged); this frame's FIRST, lost, follows the last
		 * message's end */
		*psn = qh->rcv.end_psn;
	else
		*psn = qh->resp.msg_psn;
	rewind_to(d, qh, m->lidx, *psn, *msn, 0, quiet);
}

/* The saved response of a duplicate READ or ATOMIC, sent again. */
static int resend_saved(struct xhcad *d, struct qp_host *qh, const struct xhca_rx_meta *m,
		  const __u8 *fr, __u32 len, int o)
{
	const __u8 *bth = fr + o;
	__u8 op = m->opcode & 0x1f;
	struct resp_res *r = NULL;
	struct resp_job j;
	int err;

	ack_flush(d, qh);
	for (int i = 0; i < RESP_RES && !r; i++) {
		struct resp_res *x = &qh->resp.res[i];

		if (x->op == op && (op == XHCA_OP_READ_REQ
					    ? xhca_psn_cmp(m->psn, x->psn) >= 0 &&
						      xhca_psn_cmp(m->psn, x->psn + x->npkts) < 0
					    : m->psn == x->psn))
			r = x;
	}
	memset(&j, 0, sizeof(j));
	if (!r || resp_reply_spec(fr, len, &d->ctxm[m->lidx], &j.s, XHCA_OPC_RC | XHCA_OP_ACK) < 0 ||
	    (__u32)o + xhca_opinfo_tbl[m->opcode].hdr_len > len)
		goto unknown;
	j.op = op;
	j.psn = m->psn;
	j.s.aeth_msn = r->msn;
	j.s.psn = m->psn;
	if (op == XHCA_OP_READ_REQ) {
		/* RXE: the new request must lie within the old one (it may
		 * ask for the rest only), same R_Key */
		__u64 va = be64(bth + 12);
		__u32 rkey = be32(bth + 20), dlen = be32(bth + 24);

		if (rkey != r->rkey || va < r->va || dlen > r->len || va - r->va > r->len - dlen)
			goto unknown;
		j.mtu = 1u << d->ctxm[m->lidx].mtu_shift;
		if (read_job(d, rkey, va, dlen, &j))
			goto unknown;
	} else {
		if (!r->done)
			goto unknown; /* the proxy has not executed it yet: the next one */
		/* the answer again, never the store or the ATOMIC again */
		resp_done_spec(&j, r->orig);
		err = resp_send_spec(&j.s, resp_tx_wire, d);
		eng()->resp.replays += !err;
		return XHCA_H_DUP;
	}
	err = resp_execute(d->hm.base, &j, resp_tx_wire, d);
	resp_job_free(&j);
	eng()->resp.replays += !err;
	return XHCA_H_DUP;
unknown:
	resp_job_free(&j);
	eng()->resp.dup_unknown++;
	return XHCA_H_DUP;
}

/* A duplicate's or a gap's frame (m->msg_len: xhca_rx's ePSN) while xhcad
 * is inside a message and short of that: a packet of it never came through
 * (lost after xhca_rx took it). Acknowledging the ePSN would cover it. */
static int behind(const struct qp_host *qh, const struct xhca_rx_meta *m)
{
	return !qh->px.on && qh->rcv.in_msg && qh->rcv.psn_valid && xhca_psn_cmp(m->msg_len, qh->rcv.next_psn) > 0;
}

/* The class C error xhca_rx or the responder found at psn: frames in line
 * before it are still placed, none from it on. */
static void resp_error_at(struct qp_host *qh, __u32 psn)
{
	qh->resp.err_psn_set = 1;
	qh->resp.err_psn = psn & XHCA_PSN_MASK;
}

/*
 * The RC responder around the placement of a frame, as a state machine (as
 * rxe_resp.c's): one function per state, each returning the next. Before
 * the placement (resp_before) it runs from RS_CHECK_ERROR until RS_EXECUTE
 * (the frame is placed: dispatch.c) or RS_DONE (answered here: a duplicate,
 * a gap, a frame dropped); after it (resp_after) from the state the
 * placement's result names until RS_DONE.
 */
enum resp_state {
	RS_CHECK_ERROR,		/* a class C error before it: nothing from its PSN on */
	RS_CHECK_REWIND,	/* a rewind over, or this frame stale behind it */
	RS_DUPLICATE,		/* answered again, never executed twice */
	RS_SEQ_NAK,		/* the first frame after a gap */
	RS_START,		/* a message starts: where a rewind goes back to */
	RS_EXECUTE,		/* placed or executed by the caller */
	RS_ACKNOWLEDGE,		/* placed: an ACK if it asked for one */
	RS_RNR,			/* no receive buffer: RNR NAK, received again later */
	RS_REWIND,		/* a frame of the message went missing here */
	RS_NAK_ERROR,		/* class C: NAK, the QP to the error state */
	RS_DONE,
};

/* One frame's way through the responder. */
struct resp_run {
	struct xhcad *d;
	struct qp_host *qh;
	const struct pkt_info *pi;
	int r;			/* the host reason it ends with */
	__u8 nak;		/* RS_NAK_ERROR: the AETH syndrome */
};

static enum resp_state rs_check_error(struct resp_run *x)
{
	const struct xhca_rx_meta *m = x->pi->m;
	struct qp_host *qh = x->qh;

	/* after a class C error nothing from its PSN on is placed; what
	 * came before it still is (its NAK acknowledges that) */
	if (qh->resp.err_psn_set ? xhca_psn_cmp(m->psn, qh->resp.err_psn) >= 0
				 : x->d->ctxm[m->lidx].state == XHCA_QPS_ERR) {
		x->r = XHCA_H_QP_ERR;
		return RS_DONE;
	}
	return RS_CHECK_REWIND;
}

static enum resp_state rs_check_rewind(struct resp_run *x)
{
	const struct xhca_rx_meta *m = x->pi->m;
	struct qp_host *qh = x->qh;

	/* A frame xhca_rx took after a rewind is current: whether it is the
	 * retry or comes after it (the retry placed by xhca_rx, or
	 * offloaded), the rewind is over. Older ones are stale, but a
	 * duplicate is still answered. */
	if (qh->resp.rewound && m->rx_ns > qh->resp.rw_ns)
		qh->resp.rewound = 0;
	if (m->reason == XHCA_R_DUP_TO_FLOWQ)
		return RS_DUPLICATE;
	if (qh->resp.rewound) {
		x->r = XHCA_H_REWOUND; /* in line behind the frame that made it */
		return RS_DONE;
	}
	if (m->reason == XHCA_R_SEQ_NAK_TO_FLOWQ)
		return RS_SEQ_NAK;
	return RS_START;
}

static enum resp_state rs_duplicate(struct resp_run *x)
{
	const struct pkt_info *pi = x->pi;
	const struct xhca_rx_meta *m = pi->m;
	struct qp_host *qh = x->qh;
	struct xhcad *d = x->d;
	__u32 p, n;

	eng()->resp.dups++;
	x->r = XHCA_H_DUP;
	if (xhca_op_responded(pi->op)) {
		x->r = resend_saved(d, qh, m, pi->fr, pi->len, (int)(pi->bth - pi->fr));
		return RS_DONE;
	}
	/* a SEND or WRITE: acknowledged again up to xhca_rx's ePSN
	 * (everything before it came through this queue already), or the
	 * start of the message xhcad is in on a proxy QP, or where it
	 * rewound to */
	if (!qh->resp.rewound && behind(qh, m) && !rewind_in_msg(d, qh, m, &p, &n, 0)) {
		reply_aeth(d, m, pi->fr, pi->len, p - 1, n, credit_code(qh));
		return RS_DONE;
	}
	if (qh->resp.rewound)
		reply_aeth(d, m, pi->fr, pi->len, qh->resp.rw_psn - 1, qh->resp.rw_msn,
			   credit_code(qh));
	else
		reply_aeth(d, m, pi->fr, pi->len,
			   (qh->rcv.in_msg && qh->px.on ? qh->resp.msg_psn : m->msg_len) - 1,
			   msn_full(d, m->lidx, m->csn), credit_code(qh));
	return RS_DONE;
}

static enum resp_state rs_seq_nak(struct resp_run *x)
{
	const struct xhca_rx_meta *m = x->pi->m;
	__u32 p = m->msg_len, n = msn_full(x->d, m->lidx, m->csn);

	/* a NAK acknowledges what is before its PSN */
	if (behind(x->qh, m))
		rewind_in_msg(x->d, x->qh, m, &p, &n, 0);
	reply_aeth(x->d, m, x->pi->fr, x->pi->len, p, n, XHCA_AETH_NAK_SEQ);
	x->r = XHCA_H_SEQ_NAK;
	return RS_DONE;
}

static enum resp_state rs_start(struct resp_run *x)
{
	const struct xhca_rx_meta *m = x->pi->m;

	if (x->pi->oi->flags & XHCA_O_START) {
		x->qh->resp.msg_psn = m->psn;
		x->qh->resp.msg_csn = m->csn;
	}
	return RS_EXECUTE;
}

static enum resp_state rs_acknowledge(struct resp_run *x)
{
	const struct pkt_info *pi = x->pi;
	const struct xhca_rx_meta *m = pi->m;
	int end = !!(pi->oi->flags & XHCA_O_END);
	__u32 psn;

	/* the packet itself: rewinds inside a message go to the packet
	 * missing (rewind_msg), never before one acknowledged; on a proxy QP
	 * (offloaded messages) only what came before the message */
	if (!(m->flags & XHCA_MF_ACKREQ))
		return RS_DONE;
	if (end || x->r == XHCA_H_ACKED || !x->qh->px.on)
		psn = m->psn;
	else
		psn = x->qh->resp.msg_psn - 1;
	owe_ack(x->d, x->qh, pi, psn, msn_full(x->d, m->lidx, m->csn) + end);
	return RS_DONE;
}

static enum resp_state rs_rnr(struct resp_run *x)
{
	const struct xhca_rx_meta *m = x->pi->m;
	__u32 psn, msn;

	/* the packet that wanted a receive buffer (a SEND's FIRST, a WRITE's
	 * LAST with immediate) is received again after the RNR timer; the
	 * NAK names it, and no sequence NAK follows for what comes behind it
	 * (xhca_rx drops it, quiet) until it does: a requester would spend
	 * its retry_cnt on what is only an RNR condition */
	rewind_msg(x->d, x->qh, m, &psn, &msn, XHCA_RXPSN_NAKED);
	reply_aeth(x->d, m, x->pi->fr, x->pi->len, psn, msn,
		   XHCA_AETH_RNR | (x->d->ctxm[m->lidx].rnr_timer & 0x1f));
	return RS_DONE;
}

static enum resp_state rs_rewind(struct resp_run *x)
{
	__u32 psn, msn;

	/* a frame of the message was lost between xhca_rx and here: received
	 * again (the requester times out, or NAKs see the gap) */
	rewind_msg(x->d, x->qh, x->pi->m, &psn, &msn, 0);
	return RS_DONE;
}

static enum resp_state rs_nak_error(struct resp_run *x)
{
	const struct xhca_rx_meta *m = x->pi->m;
	struct xhcad *d = x->d;

	/* class C errors: NAK at the request's PSN, the QP to the error state */
	reply_aeth(d, m, x->pi->fr, x->pi->len, m->psn, msn_full(d, m->lidx, m->csn), x->nak);
	resp_error_at(x->qh, m->psn);
	if (!qp_set_error(d, m->lidx, m->gen)) {
		__atomic_fetch_or(&d->ctxm[m->lidx].rx_psn, XHCA_RXPSN_ERR, __ATOMIC_ACQ_REL);
		qp_host_to_error(d, x->qh);
	}
	return RS_DONE;
}

/* One state's work; the next state. A switch, not a table of pointers: the
 * calls are direct (this runs for every RC request frame). */
static enum resp_state resp_step(struct resp_run *x, enum resp_state st)
{
	switch (st) {
	case RS_CHECK_ERROR: return rs_check_error(x);
	case RS_CHECK_REWIND: return rs_check_rewind(x);
	case RS_DUPLICATE: return rs_duplicate(x);
	case RS_SEQ_NAK: return rs_seq_nak(x);
	case RS_START: return rs_start(x);
	case RS_ACKNOWLEDGE: return rs_acknowledge(x);
	case RS_RNR: return rs_rnr(x);
	case RS_REWIND: return rs_rewind(x);
	case RS_NAK_ERROR: return rs_nak_error(x);
	default: return RS_DONE;
	}
}

/* Runs the machine from st until the frame is to be executed (-1) or done
 * (its host reason). */
static int resp_run(struct resp_run *x, enum resp_state st)
{
	while (st != RS_DONE && st != RS_EXECUTE)
		st = resp_step(x, st);
	return st == RS_EXECUTE ? -1 : x->r;
}

int resp_before(struct xhcad *d, struct qp_host *qh, const struct pkt_info *pi)
{
	struct resp_run x = { .d = d, .qh = qh, .pi = pi };

	return resp_run(&x, RS_CHECK_ERROR);
}

/* The state the placement's result leads to. */
static enum resp_state after_state(struct resp_run *x)
{
	switch (x->r) {
	case XHCA_H_PLACED:
	case XHCA_H_XLATE_PLACED:
	case XHCA_H_IMM_DONE:
	case XHCA_H_ACKED:
		return RS_ACKNOWLEDGE;
	case XHCA_H_RNR:
		return RS_RNR;
	case XHCA_H_SEQ_ERR:
		return RS_REWIND;
	case XHCA_H_LEN_ERR:
		x->nak = XHCA_AETH_NAK_INVALID;
		return RS_NAK_ERROR;
	case XHCA_H_BAD_BUF:
		x->nak = XHCA_AETH_NAK_REMOTE_OP;
		return RS_NAK_ERROR;
	case XHCA_H_XLATE_ERR:
		x->nak = XHCA_AETH_NAK_ACCESS;
		return RS_NAK_ERROR;
	default:
		return RS_DONE;
	}
}

int resp_after(struct xhcad *d, struct qp_host *qh, const struct pkt_info *pi, int r)
{
	struct resp_run x = { .d = d, .qh = qh, .pi = pi, .r = r };

	return resp_run(&x, after_state(&x));
}

int resp_bad_icrc(struct xhcad *d, struct qp_host *qh, const struct xhca_rx_meta *m)
{
	__u32 psn, msn;

	eng()->resp.bad_icrc++;
	if (qh->type != XHCA_QPT_RC || m->reason == XHCA_R_DUP_TO_FLOWQ ||
	    m->reason == XHCA_R_SEQ_NAK_TO_FLOWQ || (qh->resp.rewound && m->rx_ns <= qh->resp.rw_ns))
		return XHCA_H_BAD_ICRC; /* nothing moved for it, or stale anyway */
	/* xhca_rx took it: the PSN moved on; the requester must send it
	 * again, and will (timeout), if xhca_rx expects it */
	rewind_msg(d, qh, m, &psn, &msn, 0);
	return XHCA_H_BAD_ICRC;
}

void resp_reset(struct qp_host *qh)
{
	qh->resp.rewound = 0;
	qh->resp.err_psn_set = 0;
	qh->resp.msg_psn = 0;
	memset(qh->resp.res, 0, sizeof(qh->resp.res));
	qh->resp.res_next = 0;
	qh->resp.credit_slot = 0; /* its last ACK was of the old sequence */
}

#define REASON_STR(name, str, desc) str,
static const char *const reason_names[] = { XHCA_REASONS(REASON_STR) };

/* xhca_rx put the QP in the error state (its event): the context says so
 * too, the requester gets its NAK, the application its async event, and its
 * posted receive buffers complete with WR_FLUSH_ERR. */
void resp_qp_error_event(struct xhcad *d, const struct xhca_event *e)
{
	struct qp_host *qh;

	if (e->type != XHCA_EV_QP_ERR || e->lidx >= d->max_qps)
		return;
	qh = &d->qh[e->lidx];
	if (!qh->valid || qh->gen != e->gen || qh->gqpn != e->gqpn)
		return; /* destroyed or re-created since */
	if (qp_set_error(d, e->lidx, e->gen))
		return;
	resp_error_at(qh, e->psn);
	if (qh->sq) /* the application's async event (ring.h) */
		__atomic_store_n(&qh->sq->ring->qp_err,
				 e->reason >= XHCA_R_DROP_MR_RKEY && e->reason <= XHCA_R_DROP_MR_BOUNDS
					 ? XHCA_QPE_ACCESS : XHCA_QPE_REQ, __ATOMIC_RELEASE);
	pr_info("QP 0x%06x: error state (%s at PSN 0x%06x)\n", qh->gqpn,
		e->reason < XHCA_R_MAX ? reason_names[e->reason] : "?", e->psn);
	respond_nak(d, e);
	qp_host_to_error(d, qh);
}
