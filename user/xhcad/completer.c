/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The completer: what an HCA does with the responses to its requests (as
 * rxe_comp.c). On RC a request is done when the responder acknowledges it
 * (an ACK at or after its last PSN, a READ's last response, the ATOMIC's
 * response):
 *  - a response (or NAK) at a PSN acknowledges everything before it;
 *  - a sequence NAK, or no response within the QP's timeout, sends again
 *    from the PSN still unacknowledged (go-back-N, the requester's next
 *    turn), retry_cnt times; an RNR NAK does the same after its timer,
 *    rnr_retry times (7: no end);
 *  - the other NAKs complete the request in error, and with the QP in the
 *    error state everything after it completes flushed.
 * Completions are written in posting order: a request done before an older
 * one waits for it. The window (cwnd) halves at each loss and grows by one
 * per window acknowledged; an ACK's credit count bounds the requester's
 * messages that take a receive buffer. request.c, above, says the whole.
 */
#include <errno.h>
#include <xhca/wire.h>
#include "log.h"
#include "sq_int.h"

/* IBA table 45: the RNR NAK's timer code, in units of 10 us (0: 655.36 ms). */
static const __u32 rnr_tbl[32] = {
	65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512,
	768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
};

static __u64 rnr_ns(__u8 code)
{
	return (__u64)rnr_tbl[code & 31] * 10000ull;
}

/* An ACK's credit count (a response's AETH, not a NAK's): from the
 * messages acknowledged through it. */
static void credits_from(struct sq_state *s, __u8 syn)
{
	s->credits_on = syn != XHCA_AETH_ACK_NO_CREDIT;
	s->rq_limit = s->rq_acked + xhca_credit_count(syn);
}

/* Whether an RC request started and is not acknowledged yet. */
static int outstanding(const struct sq_state *s)
{
	return s->acked != s->fetched && ent(s, s->acked)->started &&
	       !ent(s, s->acked)->done;
}

void sq_fail(struct xhcad *d, struct qp_host *qh, struct sq_ent *e, __u8 status, __u8 syndrome)
{
	e->done = 1;
	e->status = status;
	e->syndrome = syndrome;
	eng()->req.errors++;
	qp_set_error(d, lidx_of(d, qh), qh->gen);
	/* its completion (and those before it) first, then the flushed ones,
	 * as rxe's completer: the application polls the error before the
	 * receives the error flushes */
	sq_retire(d, qh->sq, now_ns());
	qp_host_to_error(d, qh); /* the receive queue flushed, and this one */
}

int sq_sge_io(struct xhcad *d, __u32 owner, const struct xhca_swqe *w, __u64 off, void *buf,
	      __u32 n, int to_sge)
{
	__u8 *b = buf;

	for (int i = 0; i < w->nsge && n; i++) {
		struct hm_alloc *a;
		__u64 k;

		if (off >= w->sge[i].len) {
			off -= w->sge[i].len;
			continue;
		}
		k = w->sge[i].len - off;
		if (k > n)
			k = n;
		/* checked when the request was taken; the application may
		 * have freed the buffer since, and its id (a slot and 15 bits
		 * of sequence) may be another's by now */
		a = hm_find(d, w->sge[i].alloc);
		if (!a || a->owner != owner || !hm_range(a, w->sge[i].off + off, k))
			return -EFAULT;
		if (to_sge)
			hm_write(d, a, w->sge[i].off + off, b, k);
		else
			hm_read(d, a, w->sge[i].off + off, b, k);
		b += k;
		n -= (__u32)k;
		off = 0;
	}
	return 0;
}

/* The oldest PSN not acknowledged moves on to una: the window grows by one
 * for each window's worth acknowledged. */
static void una_to(const struct xhcad *d, struct sq_state *s, __u32 una)
{
	int k = xhca_psn_diff(una, s->una_psn);
	__u32 most = sq_window(sq_mtu(d, s));

	if (k <= 0)
		return;
	s->una_psn = una & XHCA_PSN_MASK;
	s->cwnd_acc += (__u32)k;
	while (s->cwnd < most && s->cwnd_acc >= s->cwnd) {
		s->cwnd_acc -= s->cwnd;
		s->cwnd++;
	}
}

/* Forward progress: the retry counts start again, and the timer. */
static void progress(struct sq_state *s, __u64 now)
{
	s->gap_set = 0;
	s->retry_left = s->retry_cnt;
	s->rnr_left = s->rnr_retry;
	s->deadline = outstanding(s) && tmo_ns(s) ? now + tmo_ns(s) : 0;
}

/* The index of the started request that holds psn (0 with it in *idx). */
static int holding(const struct sq_state *s, __u32 psn, __u32 *idx)
{
	for (__u32 i = s->acked; i != s->fetched && ent(s, i)->started; i++) {
		const struct sq_ent *e = ent(s, i);

		if (xhca_psn_diff(psn, e->psn) >= 0 && xhca_psn_diff(psn, e->psn + e->npkts) < 0) {
			*idx = i;
			return 0;
		}
	}
	return -ENOENT;
}

/* Sends again from psn: the request holding it, and every one after it
 * that was sent. */
static void go_back(struct sq_state *s, __u32 psn)
{
	struct sq_ent *e;
	__u32 i;

	if (holding(s, psn, &i))
		return;
	e = ent(s, i);
	s->next = i;
	e->sent = (psn - e->psn) & XHCA_PSN_MASK;
	if (e->w.opcode == XHCA_WR_RDMA_READ)
		e->sent /= RD_CHUNK;
	else if (is_rdat(e->w.opcode))
		e->sent = 0;
	for (i++; i != s->fetched && ent(s, i)->started; i++)
		ent(s, i)->sent = 0;
}

static int retry(struct xhcad *d, struct sq_state *s, struct sq_ent *e, __u32 psn);

/* A loss, or a run that did not leave: the window in force halved. */
static void halve(struct xhcad *d, struct sq_state *s)
{
	__u32 half = sq_cwnd(s, sq_mtu(d, s)) / 2;

	s->cwnd = half > CWND_MIN ? half : CWND_MIN;
	s->cwnd_acc = 0;
}

/* Everything up to and including psn is acknowledged (an ACK, or before a
 * NAK or a response). A READ or ATOMIC an ACK (explicit) passes lost its
 * response: sent again. Returns 1 when that happened. */
static int ack_through(struct xhcad *d, struct sq_state *s, __u32 psn, int explicit, __u64 now)
{
	int moved = 0, lost = 0;
	__u32 mtu = sq_mtu(d, s), una = (psn + 1) & XHCA_PSN_MASK;

	while (s->acked != s->fetched && ent(s, s->acked)->started) {
		struct sq_ent *e = ent(s, s->acked);

		if (e->done) {
			s->acked++;
			continue;
		}
		if (is_rdat(e->w.opcode)) {
			__u32 want = (e->psn + e->rd_off / mtu) & XHCA_PSN_MASK;

			if (explicit && xhca_psn_diff(psn, e->psn) >= 0) {
				retry(d, s, e, want);
				lost = 1;
			}
			/* nothing acknowledges a response not received */
			if (xhca_psn_diff(una, want) > 0)
				una = want;
			break;
		}
		if (xhca_psn_diff(psn, e->psn + e->npkts - 1) < 0) {
			if (explicit && xhca_psn_diff(psn, e->psn) >= 0)
				s->mid_acked = 1;
			break;
		}
		e->done = 1;
		e->status = XHCA_WC_SUCCESS;
		s->rq_acked += takes_rq(e->w.opcode);
		s->acked++;
		moved = 1;
	}
	if (xhca_psn_diff(una, s->una_psn) > 0 && xhca_psn_diff(una, s->psn) <= 0 && !lost) {
		una_to(d, s, una);
		moved = 1;
	}
	if ((int)(s->next - s->acked) < 0)
		s->next = s->acked;
	if (moved)
		progress(s, now);
	return lost;
}

/* The request an RC response at psn is for: the oldest not done. */
static struct sq_ent *oldest(struct sq_state *s)
{
	if (s->acked == s->fetched || !ent(s, s->acked)->started)
		return NULL;
	return ent(s, s->acked);
}

static void rdat_done(const struct xhcad *d, struct sq_state *s, struct sq_ent *e, __u32 psn,
		      __u64 now)
{
	e->done = 1;
	e->status = XHCA_WC_SUCCESS;
	s->acked++;
	una_to(d, s, psn + 1);
	if ((int)(s->next - s->acked) < 0)
		s->next = s->acked;
	progress(s, now);
}

/* A retry: counted against retry_cnt; none left fails the request. A
 * retry for a lost response is asked once: the rest of the old response
 * stream, still arriving out of order, asks nothing more. */
static int retry(struct xhcad *d, struct sq_state *s, struct sq_ent *e, __u32 psn)
{
	if (s->gap_set && s->gap_psn == psn)
		return 0;
	if (!s->retry_left) {
		sq_fail(d, s->qh, e, XHCA_WC_RETRY_EXC_ERR, 0);
		return -1;
	}
	s->retry_left--;
	halve(d, s);
	s->gap_set = 1;
	s->gap_psn = psn;
	go_back(s, psn);
	return 0;
}

void sq_refused(struct xhcad *d, struct sq_state *s, __u32 psn, __u64 now)
{
	__u64 wait = REFUSED_NS << (s->refusals < 6 ? s->refusals : 6);

	halve(d, s);
	go_back(s, psn);
	if (wait > REFUSED_MAX_NS)
		wait = REFUSED_MAX_NS;
	if (s->hold_until < now + wait)
		s->hold_until = now + wait;
	s->refusals++;
}

static int on_nak(struct xhcad *d, struct sq_state *s, __u32 psn, __u8 syn, __u64 now)
{
	__u32 mtu = sq_mtu(d, s), from = psn;
	struct sq_ent *e, *t;
	__u32 i;

	ack_through(d, s, psn - 1, 0, now);
	e = oldest(s);
	t = holding(s, psn, &i) ? NULL : ent(s, i);
	if (!e || !t) {
		eng()->req.stale++;
		return XHCA_H_RESP_STALE;
	}
	/* a READ or ATOMIC before it lost its response: from there */
	if (e != t && is_rdat(e->w.opcode))
		from = e->psn + e->rd_off / mtu;
	if (XHCA_AETH_KIND(syn) == XHCA_AETH_RNR) {
		eng()->req.rnr_naks++;
		if (!s->rnr_left) {
			sq_fail(d, s->qh, e, XHCA_WC_RNR_RETRY_EXC_ERR, syn);
			return XHCA_H_RESP_NAK;
		}
		if (s->rnr_retry != 7)
			s->rnr_left--;
		s->hold_until = now + rnr_ns(syn & 0x1f);
		s->deadline = 0;
		go_back(s, from);
		return XHCA_H_RESP_NAK;
	}
	switch (syn) {
	case XHCA_AETH_NAK_SEQ:
		eng()->req.seq_naks++;
		retry(d, s, e, from);
		break;
	case XHCA_AETH_NAK_INVALID:
		sq_fail(d, s->qh, t, XHCA_WC_REM_INV_REQ_ERR, syn);
		break;
	case XHCA_AETH_NAK_ACCESS:
		sq_fail(d, s->qh, t, XHCA_WC_REM_ACCESS_ERR, syn);
		break;
	case XHCA_AETH_NAK_REMOTE_OP:
		sq_fail(d, s->qh, t, XHCA_WC_REM_OP_ERR, syn);
		break;
	default:
		sq_fail(d, s->qh, t, XHCA_WC_BAD_RESP_ERR, syn);
		break;
	}
	return XHCA_H_RESP_NAK;
}

/*
 * The completer, as a state machine (as rxe_comp.c): a response frame of an
 * RC QP's requests goes from CS_CHECK_QP through the states its opcode and
 * PSN lead to, each a function returning the next, until CS_DONE with its
 * host reason.
 */
enum comp_state {
	CS_CHECK_QP,		/* an RC QP with a send queue, not in error */
	CS_ACK,			/* an ACKNOWLEDGE: an ACK, */
	CS_NAK,			/* ... or a NAK (RNR, sequence, class C) */
	CS_CHECK_PSN,		/* a READ response or ATOMIC ACK: inside the window */
	CS_ATOMIC,		/* the ATOMIC ACK of the oldest request */
	CS_READ,		/* a READ response packet, in order */
	CS_STALE,		/* for nothing outstanding */
	CS_DONE,
};

struct comp_run {
	struct xhcad *d;
	struct qp_host *qh;
	struct sq_state *s;
	const struct pkt_info *pi;
	__u32 psn, aeth;
	__u64 now;
	struct sq_ent *e;	/* the oldest request (READ, ATOMIC) */
	int r;
};

static enum comp_state cs_check_qp(struct comp_run *x)
{
	x->s = x->qh->sq;
	if (!x->s || x->qh->type != XHCA_QPT_RC || x->s->error)
		return CS_STALE;
	eng()->sq.kick = 1; /* completions to write, room in the windows */
	if (x->pi->oi->flags & XHCA_H_AETH)
		x->aeth = be32(x->pi->bth + 12);
	if (x->pi->op == XHCA_OP_ACK)
		return XHCA_AETH_KIND((__u8)(x->aeth >> 24)) ? CS_NAK : CS_ACK;
	return CS_CHECK_PSN;
}

/* Inside what was sent and not yet acknowledged. */
static int in_window(const struct sq_state *s, __u32 psn)
{
	return xhca_psn_diff(psn, s->una_psn) >= 0 && xhca_psn_diff(psn, s->psn) < 0;
}

/* An ACK of the last PSN acknowledged again (a duplicate, or the
 * responder's credit update after its application posted buffers) whose
 * count lets more messages go than the last one did. */
static int credits_raise(const struct sq_state *s, __u32 psn, __u8 syn)
{
	if (psn != ((s->una_psn - 1) & XHCA_PSN_MASK) || !s->credits_on)
		return 0;
	return syn == XHCA_AETH_ACK_NO_CREDIT ||
	       (int)(s->rq_acked + xhca_credit_count(syn) - s->rq_limit) > 0;
}

static enum comp_state cs_ack(struct comp_run *x)
{
	if (credits_raise(x->s, x->psn, (__u8)(x->aeth >> 24))) {
		eng()->req.credit_updates++;
		x->r = XHCA_H_RESP_ACK; /* sq_response takes its count */
		return CS_DONE;
	}
	if (!in_window(x->s, x->psn))
		return CS_STALE;
	ack_through(x->d, x->s, x->psn, 1, x->now);
	x->r = XHCA_H_RESP_ACK;
	return CS_DONE;
}

static enum comp_state cs_nak(struct comp_run *x)
{
	x->r = on_nak(x->d, x->s, x->psn, (__u8)(x->aeth >> 24), x->now);
	return CS_DONE;
}

static enum comp_state cs_check_psn(struct comp_run *x)
{
	/* READ responses and the ATOMIC ACK answer the oldest request */
	if (!in_window(x->s, x->psn))
		return CS_STALE;
	ack_through(x->d, x->s, x->psn - 1, 0, x->now);
	x->e = oldest(x->s);
	if (x->pi->op == XHCA_OP_ATOMIC_ACK)
		return CS_ATOMIC;
	if (xhca_op_read_resp(x->pi->op))
		return CS_READ;
	return CS_STALE;
}

static enum comp_state cs_atomic(struct comp_run *x)
{
	struct sq_ent *e = x->e;
	__u64 orig;

	if (!e || e->psn != x->psn || (e->w.opcode != XHCA_WR_ATOMIC_CMP_AND_SWP &&
				       e->w.opcode != XHCA_WR_ATOMIC_FETCH_AND_ADD))
		return CS_STALE;
	orig = (__u64)be32(x->pi->bth + 16) << 32 | be32(x->pi->bth + 20);
	x->s->rd_out--;
	x->r = XHCA_H_RESP_ACK;
	if (sq_sge_io(x->d, x->qh->owner, &e->w, 0, &orig, 8, 1)) /* host order, as verbs */
		sq_fail(x->d, x->qh, e, XHCA_WC_LOC_PROT_ERR, 0);
	else
		rdat_done(x->d, x->s, e, x->psn, x->now);
	return CS_DONE;
}

static enum comp_state cs_read(struct comp_run *x)
{
	const struct xhca_rx_meta *m = x->pi->m;
	__u32 mtu = 1u << x->d->ctxm[m->lidx].mtu_shift, plen = m->payload_len, exp;
	__u8 op = x->pi->op;
	int end = op == XHCA_OP_READ_RESP_LAST || op == XHCA_OP_READ_RESP_ONLY;
	struct sq_state *s = x->s;
	struct sq_ent *e = x->e;
	__u64 chunk_end;

	if (e && e->w.opcode == XHCA_WR_ATOMIC_WRITE) {
		/* its answer: a READ RESPONSE ONLY of no bytes (IBA 1.5) */
		if (op != XHCA_OP_READ_RESP_ONLY || plen || x->psn != e->psn)
			return CS_STALE;
		s->rd_out--;
		x->r = XHCA_H_RESP_ACK;
		rdat_done(x->d, s, e, x->psn, x->now);
		return CS_DONE;
	}
	if (!e || e->w.opcode != XHCA_WR_RDMA_READ)
		return CS_STALE;
	exp = (e->psn + e->rd_off / mtu) & XHCA_PSN_MASK;
	if (x->psn != exp) {
		/* a response lost before this one: the rest again */
		if (xhca_psn_diff(x->psn, exp) > 0)
			retry(x->d, s, e, exp);
		return CS_STALE;
	}
	/* the request this response answers ends at its chunk's end */
	chunk_end = ((__u64)(e->rd_off / mtu) / RD_CHUNK + 1) * RD_CHUNK * mtu;
	if (chunk_end > e->w.len)
		chunk_end = e->w.len;
	if (plen > chunk_end - e->rd_off || (!end && plen != mtu) ||
	    (end && e->rd_off + plen != chunk_end) || (!end && e->rd_off + plen >= chunk_end)) {
		sq_fail(x->d, x->qh, e, XHCA_WC_BAD_RESP_ERR, 0);
		x->r = XHCA_H_RESP_NAK;
		return CS_DONE;
	}
	x->r = XHCA_H_RESP_READ;
	if (plen && sq_sge_io(x->d, x->qh->owner, &e->w, e->rd_off,
			   (void *)(x->pi->fr + m->payload_off), plen, 1)) {
		sq_fail(x->d, x->qh, e, XHCA_WC_LOC_PROT_ERR, 0);
		return CS_DONE;
	}
	e->rd_off += plen;
	if (end)
		s->rd_out--;
	if (end && e->rd_off == e->w.len) {
		rdat_done(x->d, s, e, x->psn, x->now);
	} else {
		una_to(x->d, s, x->psn + 1);
		progress(s, x->now);
	}
	return CS_DONE;
}

static enum comp_state cs_stale(struct comp_run *x)
{
	eng()->req.stale++;
	x->r = XHCA_H_RESP_STALE;
	return CS_DONE;
}

/* One state's work; the next state (a switch: direct calls, per response). */
static enum comp_state comp_step(struct comp_run *x, enum comp_state st)
{
	switch (st) {
	case CS_CHECK_QP: return cs_check_qp(x);
	case CS_ACK: return cs_ack(x);
	case CS_NAK: return cs_nak(x);
	case CS_CHECK_PSN: return cs_check_psn(x);
	case CS_ATOMIC: return cs_atomic(x);
	case CS_READ: return cs_read(x);
	case CS_STALE: return cs_stale(x);
	default: return CS_DONE;
	}
}

int sq_response(struct xhcad *d, struct qp_host *qh, const struct pkt_info *pi)
{
	struct comp_run x = { .d = d, .qh = qh, .pi = pi, .psn = pi->m->psn, .now = now_ns() };
	enum comp_state st = CS_CHECK_QP;

	while (st != CS_DONE)
		st = comp_step(&x, st);
	/* an ACK, or a READ response or ATOMIC ACK with an AETH, taken: its
	 * credit count (a NAK's or a stale one's says nothing) */
	if ((x.r == XHCA_H_RESP_ACK || x.r == XHCA_H_RESP_READ) && (pi->oi->flags & XHCA_H_AETH) &&
	    !XHCA_AETH_KIND((__u8)(x.aeth >> 24)))
		credits_from(x.s, (__u8)(x.aeth >> 24));
	return x.r;
}

/* ---- completions, timers, the round ------------------------------------------- */

static __u32 wc_opcode(__u8 wr)
{
	switch (wr) {
	case XHCA_WR_RDMA_WRITE:
	case XHCA_WR_RDMA_WRITE_WITH_IMM:
		return XHCA_WC_RDMA_WRITE;
	case XHCA_WR_RDMA_READ:
		return XHCA_WC_RDMA_READ;
	case XHCA_WR_ATOMIC_CMP_AND_SWP:
		return XHCA_WC_COMP_SWAP;
	case XHCA_WR_ATOMIC_FETCH_AND_ADD:
		return XHCA_WC_FETCH_ADD;
	case XHCA_WR_BIND_MW:
		return XHCA_WC_BIND_MW;
	case XHCA_WR_LOCAL_INV:
		return XHCA_WC_LOCAL_INV;
	case XHCA_WR_ATOMIC_WRITE:
		return XHCA_WC_ATOMIC_WRITE;
	}
	return XHCA_WC_SEND;
}

int sq_retire(struct xhcad *d, struct sq_state *s, __u64 now)
{
	int n = 0;

	while (s->cons != s->fetched) {
		struct sq_ent *e = ent(s, s->cons);

		if (!e->done) {
			if (!s->error)
				break;
			e->done = 1;
			e->status = XHCA_WC_WR_FLUSH_ERR;
		}
		struct xhca_cqe c = {
			.wr_id = e->w.wr_id, .status = e->status, .opcode = wc_opcode(e->w.opcode),
			.byte_len = e->w.len, .qp_num = s->qh->gqpn, .vendor_err = e->syndrome,
			.rx_ns = now,
		};
		int signaled = e->status || (e->w.flags & XHCA_SEND_SIGNALED);

		if (signaled && !cq_room_or_wait(s->cq))
			break;
		/* The slot is free before the completion says so: an application
		 * that posts again as soon as it polls one (perftest keeps exactly
		 * the queue's depth outstanding) must find room (verbs). */
		s->cons++;
		/* (the next PSN first: the program reads it once the queue is
		 * idle, request.c's sq_direct) */
		if (s->direct)
			__atomic_store_n(&s->ring->d_psn, XHCA_DIRECT_OK | s->psn,
					 __ATOMIC_RELAXED);
		__atomic_store_n(&s->ring->cons, s->cons, __ATOMIC_RELEASE);
		if (signaled && !cq_put(d, s->cq, &c))
			eng()->req.completions++;
		n++;
	}
	if ((int)(s->acked - s->cons) < 0)
		s->acked = s->cons;
	if ((int)(s->next - s->acked) < 0)
		s->next = s->acked;
	return n;
}

void sq_timeout(struct xhcad *d, struct sq_state *s)
{
	struct sq_ent *e = oldest(s);

	s->deadline = 0;
	if (!e || e->done)
		return;
	eng()->req.timeouts++;
	/* held at the window's edge inside a message, its AckReq packet
	 * answered by nothing that moves the window, from a responder that
	 * never acknowledged inside a message: it acknowledges whole
	 * messages only (IBA wants the packet itself acknowledged), and
	 * messages go whole from now on */
	if (s->next != s->fetched && !s->mid_acked) {
		struct sq_ent *b = ent(s, s->next);

		if (b->started && b->edge && !is_rdat(b->w.opcode))
			s->whole_only = 1;
	}
	s->dmac_ok = 0;
	s->gap_set = 0; /* the request asked again may be what was lost */
	retry(d, s, e, s->una_psn);
}
