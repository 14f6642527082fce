/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An RC or UC request against the QP's receive state (rx_psn and the WRITE
 * cursor): the PSN, the opcode sequence, a WRITE's cursor, the commit by
 * compare-and-swap (xhca_rx_try), retried (xhca_rx_request); the QP's
 * error event for xhcad.
 */
#ifndef XHCA_PSN_BPF_H
#define XHCA_PSN_BPF_H

#include "common.bpf.h"
#include "maps.bpf.h"
#include "ctx.bpf.h"
#include "flowq.bpf.h"
#include "place.bpf.h"

/* Tells xhcad that the QP went to the error state. */
static __always_inline void qp_error_event(struct xdp_md *ctx, const struct verdict *vd,
					   const struct roce_pkt *p, int reason)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct xhca_event *e;

	if (data + 12 > end)
		return;
	e = bpf_ringbuf_reserve(&xhca_events, sizeof(*e), 0);
	if (!e)
		return;
	__builtin_memcpy(e->dmac, data, 6);
	__builtin_memcpy(e->smac, data + 6, 6);
	e->type = XHCA_EV_QP_ERR;
	e->lidx = vd->lidx;
	e->gen = vd->gen;
	e->gqpn = p->qpn;
	e->psn = p->psn;
	e->reason = (__u32)reason;
	bpf_ringbuf_submit(e, 0);
}

static __always_inline int is_write_op(__u8 op)
{
	return op >= XHCA_OP_WRITE_FIRST && op <= XHCA_OP_WRITE_ONLY_IMM;
}

static __always_inline int is_send_op(__u8 op)
{
	return op <= XHCA_OP_SEND_ONLY_IMM || op == XHCA_OP_SEND_LAST_INV ||
	       op == XHCA_OP_SEND_ONLY_INV;
}

/* A SEND's MIDDLE or LAST (host QPs: the others keep no message state). */
static __always_inline int send_cont(const struct roce_pkt *p, int host, int start)
{
	return host && !start && is_send_op(p->opcode & 0x1f);
}

/* RXE's length rules for a WRITE packet: one that ends the message carries
 * exactly what is left; any other carries one MTU, unpadded, and leaves
 * something for the last. */
static __always_inline int write_len_ok(const struct roce_pkt *p, __u64 left, __u32 mtu)
{
	if (p->op_flags & XHCA_O_END)
		return p->payload_len == left && p->payload_len <= mtu;
	return p->payload_len == mtu && !p->pad && left > mtu;
}

/* The error an RC QP cannot go on after (RXE's class A and C errors): its
 * receive state says so at once, xhcad hears of it and moves the QP to
 * ERR. UC just drops the rest of the message. */
static __always_inline __u32 failed_state(__u32 cur, int rc)
{
	return rc ? (cur & ~XHCA_RXPSN_BUSY) | XHCA_RXPSN_ERR
		  : (cur | XHCA_RXPSN_UC_DROP) &
			    ~(XHCA_RXPSN_BUSY | XHCA_RXPSN_WRITE | XHCA_RXPSN_PRETX);
}

/* Return values of the request helpers below, other than a reason: go on
 * with the packet, or read the receive state again (it changed under us). */
#define RQ_GO (-1)
#define RQ_RETRY (-2)

/* The PSN against the receive state cur (ePSN and flags): RQ_GO with
 * *base the state the packet starts from, a reason, or RQ_RETRY. RC: a
 * duplicate, and the first packet after a gap, go to xhcad in line behind
 * what came before, so its re-ACK or sequence NAK never overtakes a request
 * still on its way; the rest of the gap is silent. UC: a gap breaks the
 * message in progress; the next FIRST/ONLY starts clean at any PSN. */
static __always_inline int rq_psn(struct xhca_qp_ctx *c, const struct roce_pkt *p,
				  struct verdict *vd, __u32 cur, int rc, int host, int start,
				  __u32 *base)
{
	__u32 epsn = cur & XHCA_RXPSN_MASK;

	*base = cur;
	if (rc) {
		int d = xhca_psn_cmp(p->psn, epsn);

		if (d == 0)
			return RQ_GO;
		if (!host)
			return d < 0 ? XHCA_R_DROP_PSN_DUP : XHCA_R_DROP_PSN_OOS;
		if (d > 0 && (cur & XHCA_RXPSN_NAKED))
			return XHCA_R_DROP_PSN_OOS;
		/* what xhcad may acknowledge again: all before the ePSN (it
		 * rewinds to a packet, never before one acknowledged) */
		vd->msg_len = epsn;
		vd->csn = READ_ONCE32(c->msn);
		vd->mflags |= XHCA_MF_CSN;
		if (d < 0)
			return XHCA_R_DUP_TO_FLOWQ;
		if (__sync_val_compare_and_swap(&c->rx_psn, cur, cur | XHCA_RXPSN_NAKED) != cur)
			return RQ_RETRY;
		return XHCA_R_SEQ_NAK_TO_FLOWQ;
	}
	if (!(cur & XHCA_RXPSN_UC_DROP) && p->psn == epsn)
		return RQ_GO;
	if (!start) {
		__u32 next = failed_state(cur, 0);

		if (next == cur || __sync_val_compare_and_swap(&c->rx_psn, cur, next) == cur)
			return XHCA_R_DROP_UC_GAP;
		return RQ_RETRY;
	}
	*base &= ~(XHCA_RXPSN_UC_DROP | XHCA_RXPSN_WRITE | XHCA_RXPSN_PRETX | XHCA_RXPSN_PROXY |
		   XHCA_RXPSN_SEND);
	return RQ_GO;
}

/* The opcode sequence and what the first packet's checks found: 0 or the
 * reason. A WRITE's or SEND's MIDDLE/LAST need its FIRST; a new RC message
 * may not cut one short (IBA 9.7.5.1.2, RXE's check_op_seq: missing
 * FIRST/LAST); on UC a new FIRST/ONLY abandons the message in progress. */
static __always_inline int rq_seq(const struct roce_pkt *p, __u32 base, int rc, int host,
				  int start, int write, int cont, int pre, __u32 mtu)
{
	if (cont && !(base & XHCA_RXPSN_WRITE))
		return XHCA_R_DROP_WRITE_SEQ;
	if (rc && !cont && (base & XHCA_RXPSN_WRITE))
		return XHCA_R_DROP_WRITE_SEQ;
	if ((base & XHCA_RXPSN_SEND) ? rc && !send_cont(p, host, start) : send_cont(p, host, start))
		return XHCA_R_DROP_SEND_SEQ;
	if (start && pre)
		return pre;
	if (write && start && !write_len_ok(p, p->dma_len, mtu))
		return XHCA_R_DROP_WRITE_LEN;
	return 0;
}

/* A WRITE that owns the cursor (BUSY set in cur's place): where its bytes
 * go, the cursor moved on, the receive state next released. RQ_GO, or the
 * reason (the QP to the error state). */
static __always_inline int rq_write_cursor(struct xdp_md *ctx, struct xhca_qp_ctx *c,
					   const struct roce_pkt *p, struct verdict *vd,
					   __u32 cur, __u32 next, int rc, int start, int end,
					   __u32 mtu)
{
	struct mr_view *m = &vd->mr; /* start's region, or the WRITE's */
	__u64 va = p->va, left = p->dma_len;
	int r;

	if (start) {
		c->wc_mr = p->rkey >> 8;
		c->wc_gen = m->gen;
		c->wc_len = p->dma_len;
		c->wc_psn = p->psn;
	} else {
		va = c->wc_va;
		left = c->wc_left;
		r = mr_view(c->wc_mr, m);
		if (!r && m->gen != c->wc_gen)
			r = XHCA_R_DROP_WRITE_SEQ; /* its MR changed meanwhile */
		if (!r && !write_len_ok(p, left, mtu))
			r = XHCA_R_DROP_WRITE_LEN;
		if (r) {
			__sync_lock_test_and_set(&c->rx_psn, failed_state(cur, rc));
			if (rc)
				qp_error_event(ctx, vd, p, r);
			return r;
		}
	}
	vd->place = m->base + (va - m->iova);
	vd->msg_len = c->wc_len;
	vd->first_psn = c->wc_psn;
	c->wc_va = va + p->payload_len;
	c->wc_left = left - p->payload_len;
	if (!end)
		next |= XHCA_RXPSN_WRITE | (vd->pretx ? XHCA_RXPSN_PRETX : 0);
	/* An atomic exchange releases the cursor: a full barrier, its stores
	 * are seen before the new word. */
	__sync_lock_test_and_set(&c->rx_psn, next);
	return RQ_GO;
}

/* One try of xhca_rx_request (below): its result, or RQ_RETRY when another
 * CPU moved the receive state meanwhile. A global function of its own: Linux
 * 6.1's verifier, which prunes less than later ones, would walk all
 * CTX_TRIES of it on every path of xhca_rx_request, past its million
 * instructions. */
__noinline int xhca_rx_try(struct xdp_md *ctx, struct xhca_qp_ctx *c, const struct qp_view *v,
			   const struct roce_pkt *p, struct verdict *vd)
{
	int rc, host, start, end, write, cont, off, pre, err, r;
	__u32 cur, epsn, base, next, mtu;
	struct mr_view *m0;
	__u16 f;

	if (!c || !v || !p || !vd)
		return XHCA_R_DROP_QP_BUSY;
	m0 = &vd->mr;
	pre = vd->pre;
	f = p->op_flags;
	rc = v->type == XHCA_QPT_RC;
	host = v->action == XHCA_ACT_HOST;
	start = !!(f & XHCA_O_START);
	end = !!(f & XHCA_O_END);
	write = host && is_write_op(p->opcode & 0x1f);
	cont = write && !start; /* WRITE MIDDLE or LAST */
	mtu = mtu_of(v->mtu_shift);
	/* RC, before the state it commits against: the rewinds it passed
	 * (deliver's rx_time) */
	if (rc)
		vd->rw_gen = READ_ONCE16(c->rw_gen) | 1u << 16;
	cur = READ_ONCE32(c->rx_psn);
	epsn = cur & XHCA_RXPSN_MASK;
	if (cur & XHCA_RXPSN_BUSY)
		return RQ_RETRY;
	if (cur & XHCA_RXPSN_ERR)
		return XHCA_R_DROP_QP_STATE;
	r = rq_psn(c, p, vd, cur, rc, host, start, &base);
	if (r != RQ_GO)
		return r; /* (RQ_RETRY too) */
	err = rq_seq(p, base, rc, host, start, write, cont, pre, mtu);
	if (err) {
		if (__sync_val_compare_and_swap(&c->rx_psn, cur, failed_state(cur, rc)) != cur)
			return RQ_RETRY;
		if (rc)
			qp_error_event(ctx, vd, p, err);
		return err;
	}
	/* To xhcad: everything but a WRITE into a pre-translated region
	 * that needs no completion. */
	if (write && start) {
		vd->pretx = !p->dma_len || ((m0->flags & XHCA_MRF_PRETRANSLATED) &&
					    !(v->flags & XHCA_QPF_ICRC_FIRST));
		vd->nocopy = p->dma_len && vd->pretx && !placeable(m0, p, mtu);
		vd->pretx = vd->pretx && !vd->nocopy;
	} else if (write) {
		vd->pretx = !!(base & XHCA_RXPSN_PRETX);
	}
	/* An offloaded message's later packets follow its first (never
	 * a WRITE: the proxy executes no WRITEs). Arithmetic, not
	 * branches: fewer paths for the verifier. */
	off = start ? vd->offload : (base & XHCA_RXPSN_PROXY) >> 26;
	vd->flowq = (__u8)(off ? XHCA_FLOWQ_PROXY : v->flowq);
	if (host && !vd->admitted &&
	    (!write || !vd->pretx || (end && (f & XHCA_H_IMM)) || vd->ack_due)) {
		r = flowq_admit(ctx, vd->flowq, vd);
		if (r >= 0 && (!write || !vd->pretx || (end && (f & XHCA_H_IMM))))
			return r;
		/* a WRITE placed here only for its ACK: placed
		 * anyway, the ACK is the next one due */
		vd->admitted = r < 0;
		vd->ack_due = vd->ack_due && r < 0;
	}
	vd->offload = (__u8)off;
	next = (base & ~(XHCA_RXPSN_MASK | XHCA_RXPSN_WRITE | XHCA_RXPSN_PRETX |
			 XHCA_RXPSN_PROXY | XHCA_RXPSN_NAKED | XHCA_RXPSN_SEND)) |
	       ((__u32)(off & !end) << 26) |
	       ((__u32)(host && !end && is_send_op(p->opcode & 0x1f)) << 24) |
	       ((rc ? epsn + ((f & XHCA_O_READ) ? read_npkts(p->dma_len, v->mtu_shift) : 1)
		    : p->psn + 1) & XHCA_RXPSN_MASK);
	if (!write)
		return __sync_val_compare_and_swap(&c->rx_psn, cur, next) == cur ? -1 : RQ_RETRY;
	/* A WRITE: own the cursor while it moves. */
	if (__sync_val_compare_and_swap(&c->rx_psn, cur, cur | XHCA_RXPSN_BUSY) != cur)
		return RQ_RETRY;
	return rq_write_cursor(ctx, c, p, vd, cur, next, rc, start, end, mtu);
}

/*
 * An RC or UC request against the QP's receive state (rx_psn and the WRITE
 * cursor): the PSN first (a duplicate is a duplicate whatever else is wrong
 * with it), the message sequence, the checks that needed both, admission to
 * the flow queue, then the commit. pre: what the R_Key check of a
 * FIRST/ONLY/READ/ATOMIC found (0: fine); m0: that region. Returns -1 when
 * the packet is accepted (vd says where it goes), or the reason.
 */
__noinline int xhca_rx_request(struct xdp_md *ctx, struct xhca_qp_ctx *c, const struct qp_view *v,
			       const struct roce_pkt *p, struct verdict *vd)
{
	for (int i = 0; i < CTX_TRIES; i++) {
		int r = xhca_rx_try(ctx, c, v, p, vd);

		if (r != RQ_RETRY)
			return r;
	}
	return XHCA_R_DROP_QP_BUSY;
}

#endif /* XHCA_PSN_BPF_H */
