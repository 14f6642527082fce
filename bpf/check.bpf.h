/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A packet against its QP (xhca_check_qp): the header checks in RXE's
 * order, the proxy's decision, the R_Key check of the region, the request
 * sequence (psn.bpf.h), then what an accepted packet becomes: the action,
 * the flow queue, the proxy, or placed here (place.bpf.h).
 */
#ifndef XHCA_CHECK_BPF_H
#define XHCA_CHECK_BPF_H

#include "common.bpf.h"
#include "maps.bpf.h"
#include "ctx.bpf.h"
#include "flowq.bpf.h"
#include "proxy.bpf.h"
#include "place.bpf.h"
#include "psn.bpf.h"

/* The packet's headers against the QP's context, in RXE's order: a reason,
 * or RQ_GO with *v the context's view. */
static __always_inline int check_headers(struct xhca_qp_ctx *c, const struct roce_pkt *p,
					 struct verdict *vd, struct qp_view *v)
{
	__u16 f = p->op_flags;

	if (ctx_view(c, v))
		return XHCA_R_DROP_QP_BUSY;
	if (!v->valid || v->gqpn != p->qpn || v->gen != vd->gen)
		return XHCA_R_DROP_STALE;
	vd->qp_hit = 1;
	vd->gen = v->gen;
	vd->flowq = v->flowq;
	if (f & XHCA_H_CNP)
		return XHCA_R_CNP;
	if ((p->opcode >> 5) != v->type)
		return XHCA_R_DROP_OPCODE_TYPE;
	if (v->state == XHCA_QPS_RESET || v->state == XHCA_QPS_INIT || v->state >= XHCA_QPS_ERR ||
	    ((f & XHCA_O_RESP) && v->state == XHCA_QPS_RTR))
		return XHCA_R_DROP_QP_STATE;
	if (v->type != XHCA_QPT_UD &&
	    (!ip_eq(p->daddr, v->local_ip) || !ip_eq(p->saddr, v->remote_ip)))
		return XHCA_R_DROP_ADDR;
	if (p->qpn == XHCA_QPN_GSI ? !pkey_in_table(p->pkey) : !xhca_pkey_match(p->pkey, v->pkey))
		return XHCA_R_DROP_PKEY;
	if (v->type == XHCA_QPT_UD &&
	    p->qkey != (p->qpn == XHCA_QPN_GSI ? XHCA_GSI_QKEY : v->qkey))
		return XHCA_R_DROP_QKEY;
	/* A UD message is one packet, at most the path MTU (the port's: the
	 * verbs library sets it), as on a real HCA and RXE. */
	if (v->type == XHCA_QPT_UD && p->payload_len > mtu_of(v->mtu_shift))
		return XHCA_R_DROP_UD_MTU;
	return RQ_GO;
}

/* A request xhcad answers with a response of its own (wire.h): READ,
 * ATOMIC, ATOMIC WRITE. */
static __always_inline int responded(const struct roce_pkt *p)
{
	return (p->op_flags & (XHCA_O_READ | XHCA_H_ATMETH)) ||
	       p->opcode == (XHCA_OPC_RC | XHCA_OP_ATOMIC_WRITE);
}

/* RDMA requests of a host QP: the region their R_Key names (into m). A
 * zero length READ or WRITE checks no key (IBA C9-88, as RXE). 0, or the
 * reason the request fails with. */
static __always_inline int check_region(const struct roce_pkt *p, const struct qp_view *v,
					struct mr_view *m)
{
	__u16 f = p->op_flags;
	int pre = 0;

	if (v->action != XHCA_ACT_HOST || !(f & XHCA_O_REQ) || !(f & XHCA_O_START))
		return 0;
	/* the QP's own remote access first, zero lengths too (RXE's
	 * check_op_valid): a responder that allows none is answered so */
	if ((v->access & XHCA_QP_ACCESS_SET) && (f & (XHCA_H_ATMETH | XHCA_H_RETH)) &&
	    !(v->access & ((f & XHCA_H_ATMETH) ? XHCA_ACCESS_REMOTE_ATOMIC :
			   (f & XHCA_O_READ) ? XHCA_ACCESS_REMOTE_READ : XHCA_ACCESS_REMOTE_WRITE)))
		return XHCA_R_DROP_QP_ACCESS;
	if (p->opcode == (XHCA_OPC_RC | XHCA_OP_ATOMIC_WRITE)) {
		/* IBA 1.5: 8 bytes, stored whole at an aligned address (the
		 * QP's and the region's remote write) */
		if (p->dma_len != 8 || p->payload_len != 8)
			pre = XHCA_R_DROP_WRITE_LEN;
		else
			pre = mr_check(p, v, XHCA_ACCESS_REMOTE_WRITE, m);
		if (!pre && (p->va & 7))
			pre = XHCA_R_DROP_ATOMIC_ALIGN;
	} else if (f & XHCA_H_ATMETH) {
		pre = mr_check(p, v, XHCA_ACCESS_REMOTE_ATOMIC, m);
		if (!pre && (p->va & 7))
			pre = XHCA_R_DROP_ATOMIC_ALIGN;
	} else if ((f & XHCA_H_RETH) && p->dma_len) {
		if (p->dma_len > 0x80000000u)
			pre = XHCA_R_DROP_WRITE_LEN;
		else
			pre = mr_check(p, v, (f & XHCA_O_READ) ? XHCA_ACCESS_REMOTE_READ
							       : XHCA_ACCESS_REMOTE_WRITE, m);
	}
	return pre;
}

/* UD, and responses: no sequence to keep here; the action, or the flow
 * queue (the proxy's for an offloaded message). */
static __always_inline int unsequenced(struct xdp_md *ctx, struct xhca_qp_ctx *c,
				       const struct roce_pkt *p, struct verdict *vd,
				       const struct qp_view *v, int proxy_cq)
{
	int r;

	if (v->action != XHCA_ACT_HOST)
		return v->action == XHCA_ACT_DROP ? XHCA_R_ACCEPT_DROP : XHCA_R_ACCEPT_PASS;
	r = flowq_admit(ctx, vd->offload ? XHCA_FLOWQ_PROXY : v->flowq, vd);
	if (r >= 0)
		return r;
	if (vd->offload)
		vd->flowq = XHCA_FLOWQ_PROXY;
	if (proxy_cq && (p->op_flags & XHCA_O_REQ)) {
		vd->csn = __sync_fetch_and_add(&c->msn, 1);
		vd->mflags |= XHCA_MF_CSN;
	}
	return vd->offload ? XHCA_R_TO_PROXY : XHCA_R_TO_FLOWQ;
}

/* A request the sequence accepted: the ACK count, the MSN and CSN, then
 * what it becomes (the action, the flow queue, the proxy, or placed here). */
static __always_inline int accepted(struct xdp_md *ctx, struct xhca_qp_ctx *c,
				    const struct roce_pkt *p, struct verdict *vd,
				    const struct qp_view *v, int proxy_cq)
{
	__u16 f = p->op_flags;
	__u8 op = p->opcode & 0x1f;
	int r;

	if (v->type == XHCA_QPT_RC && v->action == XHCA_ACT_HOST) {
		if (vd->ack_due || responded(p)) {
			WRITE_ONCE32(c->unacked, 0);
			vd->mflags |= vd->ack_due ? XHCA_MF_ACKREQ : 0;
		} else {
			__sync_fetch_and_add(&c->unacked, 1);
		}
	}
	if ((f & XHCA_O_END) && (v->type == XHCA_QPT_RC || proxy_cq)) {
		/* a request message accepted whole: the responder's MSN; a READ
		 * or ATOMIC (WRITE) carries it to xhcad for its response. On a proxy CQ
		 * the count before it is the message's CSN. */
		__u32 was = __sync_fetch_and_add(&c->msn, 1);

		vd->csn = was;
		if (v->type == XHCA_QPT_RC && responded(p)) {
			vd->msg_len = (was + 1) & XHCA_PSN_MASK;
			vd->mflags |= XHCA_MF_MSN;
		}
	} else if (proxy_cq || v->type == XHCA_QPT_RC) {
		vd->csn = READ_ONCE32(c->msn);
	}
	/* RC: the MSN (low 16 bits) for xhcad's ACK, and where to go back
	 * to should the message have to be received again */
	if (proxy_cq || v->type == XHCA_QPT_RC)
		vd->mflags |= XHCA_MF_CSN;
	if (v->action != XHCA_ACT_HOST)
		return v->action == XHCA_ACT_DROP ? XHCA_R_ACCEPT_DROP : XHCA_R_ACCEPT_PASS;
	if (vd->offload)
		return XHCA_R_TO_PROXY;
	if (!is_write_op(op))
		return XHCA_R_TO_FLOWQ;
	if (!vd->pretx)
		return vd->nocopy ? XHCA_R_XLATE_NOCOPY : XHCA_R_TO_XLATE;
	r = place(ctx, p, vd->place);
	if (r)
		return r;
	if ((f & XHCA_O_END) && (f & XHCA_H_IMM)) {
		vd->mflags |= XHCA_MF_PLACED;
		return XHCA_R_PLACED_TO_FLOWQ;
	}
	if ((f & XHCA_O_END) && proxy_cq)
		xhca_px_record(vd->lidx, vd->gen, p->qpn, vd->csn, vd->msg_len);
	if (vd->ack_due) {
		/* xhcad acknowledges it (msg_len: where its WRITE began) */
		vd->mflags |= XHCA_MF_PLACED;
		vd->msg_len = vd->first_psn;
		return XHCA_R_PLACED_ACK;
	}
	return XHCA_R_PLACED;
}

/*
 * The header checks against the QP context in RXE's order, then what the
 * packet asks for. Returns the reason; vd->qp_hit says the context matched, so
 * the per-QP counters apply. For TO_FLOWQ, PLACED_TO_FLOWQ and TO_XLATE the
 * caller redirects (vd says where); for PLACED* the payload is in host
 * memory already.
 */
__noinline int xhca_check_qp(struct xdp_md *ctx, struct xhca_qp_ctx *c, const struct roce_pkt *p,
			     struct verdict *vd)
{
	struct qp_view v;
	int r, pre, proxy_cq;
	__u16 f;

	if (!c || !p || !vd) /* a global function, as xhca_rx_request */
		return XHCA_R_DROP_STALE;
	f = p->op_flags;
	r = check_headers(c, p, vd, &v);
	if (r != RQ_GO)
		return r;
	proxy_cq = !!(v.flags & XHCA_QPF_PROXY_CQ);
	if ((v.flags & XHCA_QPF_PROXY) && (f & XHCA_O_REQ)) {
		/* a proxy QP's completions must go through the proxy */
		if (!proxy_cq)
			return XHCA_R_DROP_PROXY_NOCQ;
		if (v.action == XHCA_ACT_HOST && (f & XHCA_O_START))
			vd->offload = (__u8)proxy_decide(ctx, vd->lidx, v.gen, p);
	}
	pre = check_region(p, &v, &vd->mr);
	if (v.type == XHCA_QPT_UD || !(f & XHCA_O_REQ))
		return unsequenced(ctx, c, p, vd, &v, proxy_cq);
	/* An RC request's ACK is due at AckReq, and at least every ack_every
	 * packets; a READ or ATOMIC is answered anyway. Decided before the
	 * commit: a WRITE placed here then goes on to xhcad for it. */
	if (v.type == XHCA_QPT_RC && v.action == XHCA_ACT_HOST && !responded(p))
		vd->ack_due = (p->mflags & XHCA_MF_ACKREQ) ||
			      (v.ack_every && READ_ONCE32(c->unacked) + 1 >= v.ack_every);
	vd->pre = pre;
	r = xhca_rx_request(ctx, c, &v, p, vd);
	if (r == XHCA_R_DUP_TO_FLOWQ || r == XHCA_R_SEQ_NAK_TO_FLOWQ) {
		int a = flowq_admit(ctx, v.flowq, vd);

		if (a < 0)
			return r; /* vd->flowq is the QP's */
		if (r == XHCA_R_SEQ_NAK_TO_FLOWQ) /* no NAK went: the next one tries */
			__sync_fetch_and_and(&c->rx_psn, ~XHCA_RXPSN_NAKED);
		return a;
	}
	if (r >= 0)
		return r;
	return accepted(ctx, c, p, vd, &v, proxy_cq);
}

#endif /* XHCA_CHECK_BPF_H */
