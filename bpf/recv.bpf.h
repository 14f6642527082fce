/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * SENDs placed by xhca_rx (xhcad --recv-fast): a one-packet RC or UC SEND
 * the sequence accepted, or a UD SEND (its 40-byte GRH first), goes into
 * the buffer at the head of its QP's receive queue, and its completion
 * into the receive CQ, here, when
 * everything it needs is at hand (xhca_rx_recv); else it goes on to xhcad
 * as before. The rules the two sides keep are at struct xhca_rfast.
 */
#ifndef XHCA_RECV_BPF_H
#define XHCA_RECV_BPF_H

#include <xhca/ring.h>
#include "common.bpf.h"
#include "maps.bpf.h"
#include "ctx.bpf.h"
#include "place.bpf.h"
#include "psn.bpf.h"
#include "ack.bpf.h"

/* size bytes of host memory at offset off, 8-byte aligned (the atomics
 * on rings want it, and the verifier sees it from the mask) inside one
 * page: NULL where that memory is not there, unaligned or crosses a page.
 * The page offset is bounded right before it is added: Linux 6.1's
 * verifier loses a bound checked on a register already spilled. */
static __always_inline void *hm_at(__u64 off, __u32 size)
{
	__u32 pg = (__u32)(off >> 12), blk = pg >> XHCA_BLOCK_SHIFT, in;
	void *block, *mem;

	if (off & 7)
		return NULL;
	block = bpf_map_lookup_elem(&xhca_hostmem, &blk);
	if (!block)
		return NULL;
	pg &= XHCA_BLOCK_PAGES - 1;
	mem = bpf_map_lookup_elem(block, &pg);
	if (!mem)
		return NULL;
	in = (__u32)(off & (XHCA_PAGE_SIZE - 8));
	if (in > XHCA_PAGE_SIZE - size)
		return NULL;
	return mem + in;
}

/* Counts a request of a QP served here in its entry (struct xhca_rfast):
 * in pend a SEND or a packet with an immediate, which xhca_rx may place
 * here (vd->pend); in owe an RC request of a QP whose ACKs xhca_rx sends
 * (vd->owe). Returns the entry it was counted in, or NULL. */
static __always_inline struct xhca_rfast *recv_count(const struct roce_pkt *p, __u32 lidx,
						     __u32 gen, struct verdict *vd)
{
	struct xhca_rfast *rf;
	int recv = is_send_op(p->opcode & 0x1f) || (p->op_flags & XHCA_H_IMM);

	/* (owe is RC's alone: a UC WRITE looks at no entry) */
	if (!(p->op_flags & XHCA_O_REQ) || (!recv && (p->opcode >> 5) != XHCA_QPT_RC))
		return NULL;
	rf = bpf_map_lookup_elem(&xhca_rfast, &lidx);
	if (!rf || READ_ONCE32(rf->gen) != gen)
		return NULL;
	if ((p->opcode >> 5) == XHCA_QPT_RC && (READ_ONCE32(rf->flags) & XHCA_RFF_XDP_ACK)) {
		__sync_fetch_and_add(&rf->owe, 1);
		vd->owe = 1;
	}
	if (recv) {
		__sync_fetch_and_add(&rf->pend, 1);
		vd->pend = 1;
	}
	return vd->pend || vd->owe ? rf : NULL;
}

/* A SEND ONLY (with or without immediate) of RC, UC or UD. */
static __always_inline int recv_only(const struct roce_pkt *p)
{
	__u8 op = p->opcode & 0x1f, cls = p->opcode >> 5;

	return (cls == XHCA_QPT_RC || cls == XHCA_QPT_UC || cls == XHCA_QPT_UD) &&
	       (op == XHCA_OP_SEND_ONLY || op == XHCA_OP_SEND_ONLY_IMM);
}

#define RECV_GRH_LEN 40

/* A UD SEND's GRH, as xhcad writes it (RXE's rdma_network_hdr): the IPv6
 * header, or 20 zero bytes and the IPv4 header (without options: else
 * xhcad's). 0, or -1. */
static __always_inline int recv_grh(struct xdp_md *ctx, const struct roce_pkt *p,
				    __u8 grh[RECV_GRH_LEN])
{
	__u8 v;

	if (bpf_xdp_load_bytes(ctx, p->l3_off, &v, 1))
		return -1;
	if (p->mflags & XHCA_MF_IPV6)
		return (v >> 4) == 6 ? bpf_xdp_load_bytes(ctx, p->l3_off, grh, 40) : -1;
	__builtin_memset(grh, 0, 20);
	return v == 0x45 ? bpf_xdp_load_bytes(ctx, p->l3_off, grh + 20, 20) : -1;
}

/* The receive entry w (a copy) names a buffer the SEND fits, in a
 * pre-translated region of the QP's session and protection domain that
 * allows local writes, where place() can put it: its host memory offset in
 * *host, or -1. */
static __always_inline int recv_buffer(const struct xhca_rwqe *w, const struct roce_pkt *p,
				       const struct xhca_rfast *rf, __u32 pd, __u32 grh,
				       struct mr_view *m, __u64 *host)
{
	if (w->nsge > 1 || !w->lkey || grh + p->payload_len > w->len)
		return -1;
	if (mr_view(w->lkey >> 8, m) || m->key != (w->lkey & 0xff) ||
	    (m->flags & (XHCA_MRF_MW | XHCA_MRF_MW_QP)) || !(m->flags & XHCA_MRF_PRETRANSLATED) ||
	    m->pd != pd || m->owner != rf->owner || !(m->access & XHCA_ACCESS_LOCAL_WRITE) ||
	    m->alloc != w->alloc)
		return -1;
	if (w->off < m->aoff || (__u64)w->len > m->length || w->off - m->aoff > m->length - w->len)
		return -1;
	*host = m->base + (w->off - m->aoff);
	/* (the GRH: 8-byte aligned in one page, hm_at's) */
	if (grh && ((*host & 7) || (*host & (XHCA_PAGE_SIZE - 1)) > XHCA_PAGE_SIZE - grh))
		return -1;
	/* (without the kfunc place() copies only at 1 KiB offsets) */
	return p->payload_len && !can_copy() && ((*host + grh) & 1023) ? -1 : 0;
}

/* The application sleeps on the CQ of slot k: xhcad is told to signal it
 * (XHCA_EV_CQ_WAKE through xhca_events). */
static __always_inline void recv_wake(__u32 k)
{
	struct xhca_event *ev = bpf_ringbuf_reserve(&xhca_events, sizeof(*ev), 0);

	if (!ev)
		return;
	__builtin_memset(ev, 0, sizeof(*ev));
	ev->type = XHCA_EV_CQ_WAKE;
	ev->lidx = k;
	bpf_ringbuf_submit(ev, 0);
}

/* The application's indexes are read only when xhca_rx's copies of them
 * run out: their cache lines are written by the application, on another
 * CPU, as it posts and polls. */

/* Whether the CQ (its xhca_cqx cx, its ring's control cq) has room for a
 * completion at producer index prod. */
static __always_inline int cq_room(struct xhca_cqx *cx, struct xhca_ring_ctl *cq, __u32 prod,
				   __u32 depth)
{
	__u32 cons;

	if (prod - cx->cons < depth)
		return 1;
	cons = READ_ONCE32(cq->cons);
	if (prod - cons >= depth)
		return 0;
	cx->cons = cons;
	return 1;
}

/* Whether rf's receive queue (its ring's control rq) holds an entry at
 * consumer index cons: 0 when none, or when the producer index is garbage
 * (more than depth ahead, or behind). */
static __always_inline int rq_any(struct xhca_rfast *rf, struct xhca_ring_ctl *rq, __u32 cons,
				  __u32 depth)
{
	__u32 prod = rf->rq_prod;

	if (prod - cons - 1 < depth)
		return 1; /* (entries the index last read named, not taken yet) */
	prod = READ_ONCE32(rq->prod);
	if (prod == cons || prod - cons > depth)
		return 0;
	rf->rq_prod = prod;
	return 1;
}

/* The receive entry cons of rq (rf's) taken, and its completion (wr_id)
 * into the CQ of slot k, whose lock the caller holds: 0, or -1 when the
 * CQ has no room (or is not there) and nothing was taken. The payload goes
 * first (place; a UD SEND's GRH before it, grh when ud), then the receive queue's
 * index (the entry is free before the completion says so, as xhcad has
 * it), then the completion, then the CQ's producer index. */
static __always_inline int recv_complete(struct xdp_md *ctx, const struct roce_pkt *p,
					 struct xhca_rfast *rf, struct xhca_ring_ctl *rq,
					 __u32 cons, struct xhca_cqx *cx, __u32 k, __u64 host,
					 __u64 wr_id, __u32 qpn, const __u8 *grh, __u32 ud)
{
	struct xhca_ring_ctl *cq;
	struct xhca_cqe *e;
	__u32 depth = cx->depth, prod = cx->prod, imm = 0, flags = 0, glen = 0;
	__u8 sl = 0;

	if (!READ_ONCE32(cx->gen) || cx->spilled || !depth || (depth & (depth - 1)))
		return -1;
	cq = hm_at(cx->ring, sizeof(*cq));
	if (!cq || !cq_room(cx, cq, prod, depth))
		return -1;
	e = hm_at(cx->ring + sizeof(*cq) + (__u64)(prod & (depth - 1)) * sizeof(*e), sizeof(*e));
	if (!e)
		return -1;
	if ((p->opcode & 0x1f) == XHCA_OP_SEND_ONLY_IMM) {
		if (p->payload_off < 4 || bpf_xdp_load_bytes(ctx, p->payload_off - 4, &imm, 4))
			return -1;
		flags = XHCA_WC_WITH_IMM;
	}
	if (ud) {
		void *at = hm_at(host, RECV_GRH_LEN);

		if (!at)
			return -1;
		__builtin_memcpy(at, grh, RECV_GRH_LEN);
		glen = RECV_GRH_LEN;
		flags |= XHCA_WC_GRH;
		/* RoCEv2's network header in the SL, as xhcad (receive.c) */
		sl = XHCA_SL_ROCE_V2 | ((p->mflags & XHCA_MF_IPV6) ? XHCA_SL_IPV6 : XHCA_SL_IPV4);
	}
	if (p->payload_len && place(ctx, p, host + glen))
		return -1;
	rf->rq_cons = cons + 1;
	/* (a plain store: cq->prod's exchange below orders it first) */
	WRITE_ONCE32(rq->cons, cons + 1);
	e->wr_id = wr_id;
	e->status = XHCA_WC_SUCCESS;
	e->opcode = XHCA_WC_RECV;
	e->byte_len = glen + p->payload_len;
	e->imm_data = imm;
	e->qp_num = qpn;
	e->src_qp = ud ? p->sqpn : 0;
	e->wc_flags = flags;
	e->pkey_index = 0;
	e->sl = sl;
	e->pad0 = 0;
	e->vendor_err = 0;
	e->pad1 = 0;
	/* (a clock read costs some 30 ns: only for a CQ whose application
	 * reads the time) */
	e->rx_ns = (cx->flags & XHCA_CQXF_NO_TS) ? 0 : bpf_ktime_get_ns();
	e->pad2 = 0;
	cx->prod = prod + 1;
	/* an atomic exchange: a full barrier, the entry is there before
	 * the index says so; then the application's sleep (ring.h) */
	__sync_lock_test_and_set(&cq->prod, prod + 1);
	if (READ_ONCE32(cq->armed))
		recv_wake(k);
	return 0;
}

/* The ACK due for a packet xhca_rx placed (XHCA_R_PLACED_ACK: an RC SEND
 * it completed, send; else a WRITE's), built here and sent back
 * (--xdp-ack) when xhcad lets it (XHCA_RFF_XDP_ACK) and nothing else of
 * the QP's is on its way through xhcad (owe is this packet's alone), with
 * the credits of the receive queue: a SEND's never with a count of 0
 * (xhcad sends that one, and the credit update after the application's
 * next posts), a WRITE's whatever the count (a requester whose messages
 * are all acknowledged sends its next SEND anyway). Returns
 * XHCA_R_RECV_ACKED or XHCA_R_PLACED_ACKED; XHCA_R_RECV_PLACED or
 * XHCA_R_PLACED when the frame was lost on the way (the requester
 * retries, its duplicate is acknowledged again); or XHCA_R_PLACED_ACK,
 * the frame as it was: on to xhcad for its ACK. */
static __always_inline int ack_here(struct xdp_md *ctx, struct xhca_qp_ctx *c,
				    const struct roce_pkt *p, const struct verdict *vd,
				    struct xhca_rfast *rf, int send)
{
	struct xhca_ring_ctl *rq;
	__u32 posted;
	int r;

	if (!rf || !vd->owe || READ_ONCE32(rf->owe) != 1 ||
	    !(READ_ONCE32(rf->flags) & XHCA_RFF_XDP_ACK))
		return XHCA_R_PLACED_ACK;
	rq = hm_at(rf->rq_ring, sizeof(*rq));
	if (!rq)
		return XHCA_R_PLACED_ACK;
	/* (read without rf's lock: a count for the requester, at worst
	 * one entry behind, as xhcad's own ACKs' are) */
	posted = READ_ONCE32(rq->prod) - READ_ONCE32(rf->rq_cons);
	if (posted > rf->rq_depth || (!posted && send))
		return XHCA_R_PLACED_ACK;
	r = ack_build(ctx, p, c, vd->csn + !!(p->op_flags & XHCA_O_END),
		      ack_credit_code(posted));
	if (r == ACK_UNTOUCHED)
		return XHCA_R_PLACED_ACK;
	if (send)
		return r ? XHCA_R_RECV_PLACED : XHCA_R_RECV_ACKED;
	return r ? XHCA_R_PLACED : XHCA_R_PLACED_ACKED;
}

/*
 * A SEND ONLY the sequence accepted for the QP's flow queue (vd says so,
 * admitted): placed and completed here when its QP is served here, nothing
 * of the QP's is on its way through xhcad (pend is this packet's alone),
 * its receive queue has an entry whose buffer takes it and its CQ has
 * room. Returns XHCA_R_RECV_PLACED, XHCA_R_PLACED_ACK (RC, its ACK due:
 * xhcad sends it; should the QP go first, xhcad acknowledges what xhca_rx
 * accepted as it goes, resp_final_ack), or XHCA_R_TO_FLOWQ (xhcad places
 * it, as without --recv-fast). Locks are only tried: never a wait in XDP.
 */
__noinline int xhca_rx_recv(struct xdp_md *ctx, struct xhca_qp_ctx *c, const struct roce_pkt *p,
			    struct verdict *vd)
{
	struct xhca_rfast *rf;
	struct xhca_cqx *cx;
	struct xhca_ring_ctl *rq;
	struct xhca_rwqe *we, w;
	struct mr_view m;
	__u32 lidx, k, depth, cons, ud;
	__u8 grh[RECV_GRH_LEN];
	__u64 host = 0;
	int r = XHCA_R_TO_FLOWQ;

	if (!c || !p || !vd)
		return XHCA_R_TO_FLOWQ;
	lidx = vd->lidx;
	rf = bpf_map_lookup_elem(&xhca_rfast, &lidx);
	if (!rf || READ_ONCE32(rf->gen) != vd->gen ||
	    __sync_val_compare_and_swap(&rf->lock, 0, XHCA_RFL_RX) != 0)
		return XHCA_R_TO_FLOWQ;
	depth = rf->rq_depth;
	cons = rf->rq_cons;
	if (READ_ONCE32(rf->pend) != 1 || READ_ONCE32(rf->gen) != vd->gen || !depth ||
	    (depth & (depth - 1)))
		goto out;
	rq = hm_at(rf->rq_ring, sizeof(*rq));
	if (!rq)
		goto out;
	if (!rq_any(rf, rq, cons, depth))
		goto out; /* none (xhcad: RNR), or garbage (xhcad: the QP fails) */
	we = hm_at(rf->rq_ring + sizeof(*rq) + (__u64)(cons & (depth - 1)) * sizeof(w), sizeof(w));
	if (!we)
		goto out;
	__builtin_memcpy(&w, we, sizeof(w)); /* (the application's memory: read once) */
	ud = (p->opcode >> 5) == XHCA_QPT_UD;
	if (recv_buffer(&w, p, rf, READ_ONCE32(c->pd), ud ? RECV_GRH_LEN : 0, &m, &host) ||
	    (ud && recv_grh(ctx, p, grh)))
		goto out;
	k = rf->cq;
	cx = bpf_map_lookup_elem(&xhca_cqx, &k);
	if (!cx || __sync_val_compare_and_swap(&cx->lock, 0, XHCA_RFL_RX) != 0)
		goto out;
	if (!recv_complete(ctx, p, rf, rq, cons, cx, k, host, w.wr_id, READ_ONCE32(c->gqpn),
			   grh, ud)) {
		rf->placed++;
		r = XHCA_R_RECV_PLACED;
	}
	__sync_lock_test_and_set(&cx->lock, 0);
	if (r == XHCA_R_RECV_PLACED && vd->ack_due) {
		/* on to xhcad for its ACK (as a WRITE placed here: msg_len the
		 * PSN of the message's first packet, its own), or sent here
		 * (ack_here) */
		vd->mflags |= XHCA_MF_PLACED;
		vd->msg_len = p->psn;
		r = XHCA_R_PLACED_ACK;
	}
out:
	__sync_lock_test_and_set(&rf->lock, 0);
	return r;
}

#endif /* XHCA_RECV_BPF_H */
