/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca_rx: the receive pipeline of the xhca host channel adapter.
 *
 * Parses Ethernet [VLAN x2] IPv4|IPv6 UDP:4791 BTH and the extension headers
 * the opcode implies, translates the global destination QPN to a local QP
 * context through the QP CAM (US 7,212,547) and runs the inbound header checks
 * in the order RXE uses. Everything that is not RoCEv2 gets XDP_PASS untouched.
 * Every packet increments exactly one reason counter.
 *
 * For QPs that deliver to the host (action host), RDMA requests are checked
 * against the memory region their R_Key names. A WRITE into a pre-translated
 * region is placed in host memory here (US 9,336,158); one into another region
 * goes to xhcad's translation manager. A one-packet SEND is placed into its
 * receive buffer and completed here where xhcad lets it (--recv-fast); other
 * SENDs, READs, ATOMICs and the completion of a WRITE with immediate go to
 * the QP's flow queue (AF_XDP, US 8,155,135).
 *
 * One compile unit, its parts in headers by role: common.bpf.h (the
 * packet's state, shared helpers), maps.bpf.h (every map), parse.bpf.h
 * (Ethernet to the BTH's extension headers), ctx.bpf.h (QP context and MR
 * views, R_Key checks), flowq.bpf.h (flow queue admission, redirect),
 * proxy.bpf.h (proxy filters), place.bpf.h (WRITE placement), psn.bpf.h
 * (the request sequence), check.bpf.h (a packet against its QP),
 * mcast.bpf.h (multicast), ack.bpf.h (an ACK made of a request frame:
 * --xdp-ack), recv.bpf.h (SENDs placed here: --recv-fast).
 * They are included in this order, each after what it uses: the order of
 * the global functions in the object. Here: the counters, and the
 * programs xhca_rx and xhca_rep.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <xhca/abi.h>
#include <xhca/wire.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "common.bpf.h"
#include "maps.bpf.h"
#include "parse.bpf.h"
#include "ctx.bpf.h"
#include "flowq.bpf.h"
#include "proxy.bpf.h"
#include "place.bpf.h"
#include "psn.bpf.h"
#include "check.bpf.h"
#include "mcast.bpf.h"
#include "ack.bpf.h"
#include "recv.bpf.h"

/* Reasons that count as accepted for the QP. */
static __always_inline int is_accept(__u32 r)
{
	return r == XHCA_R_ACCEPT_PASS || r == XHCA_R_ACCEPT_DROP || r == XHCA_R_CNP ||
	       r == XHCA_R_TO_FLOWQ || r == XHCA_R_PLACED || r == XHCA_R_PLACED_TO_FLOWQ ||
	       r == XHCA_R_TO_XLATE || r == XHCA_R_XLATE_NOCOPY || r == XHCA_R_TO_PROXY ||
	       r == XHCA_R_PLACED_ACK || r == XHCA_R_RECV_PLACED || r == XHCA_R_RECV_ACKED ||
	       r == XHCA_R_PLACED_ACKED;
}

/* Whether xhca_rx redirects a packet of this reason. */
static __always_inline int is_redirect(__u32 r)
{
	return r == XHCA_R_TO_FLOWQ || r == XHCA_R_PLACED_TO_FLOWQ || r == XHCA_R_TO_XLATE ||
	       r == XHCA_R_XLATE_NOCOPY || r == XHCA_R_TO_PROXY || r == XHCA_R_PLACED_ACK ||
	       r == XHCA_R_DUP_TO_FLOWQ || r == XHCA_R_SEQ_NAK_TO_FLOWQ;
}

/* When a redirected frame came: now; but 1, before any rewind's time, for
 * an RC request committed before a rewind xhcad made since (rw_gen moved):
 * stale (rs_check_rewind). The clock first: a rewind after the look at
 * rw_gen notes a later time. (Frames xhca_rx places read no clock.) */
static __always_inline __u64 rx_time(const struct xhca_qp_ctx *c, const struct verdict *vd)
{
	__u64 t = bpf_ktime_get_ns();

	if (c && vd->rw_gen && READ_ONCE16(c->rw_gen) != (__u16)vd->rw_gen)
		return 1;
	return t;
}

/* What the checks' verdict r becomes: a SEND placed here where it can be
 * (--recv-fast), the ACK of a packet placed here sent here where it can
 * be (--xdp-ack), the redirect into the flow queue; pend and owe (rf:
 * where the packet was counted) taken back for what xhcad will not see. */
static __always_inline int deliver(struct xdp_md *ctx, struct xhca_qp_ctx *c,
				   const struct roce_pkt *p, struct verdict *vd,
				   struct xhca_rfast *rf, int r, __u64 bytes)
{
	int fast = 0;

	if (r == XHCA_R_TO_FLOWQ && rf && vd->pend && recv_only(p)) {
		r = xhca_rx_recv(ctx, c, p, vd);
		fast = r != XHCA_R_TO_FLOWQ;
	}
	if (r == XHCA_R_PLACED_ACK) /* (a SEND placed here when fast) */
		r = ack_here(ctx, c, p, vd, rf, fast);
	if (is_redirect(r))
		r = flowq_send(ctx, p, vd, r, bytes, rx_time(c, vd));
	if (rf && vd->pend && (fast || !is_redirect(r)))
		__sync_fetch_and_sub(&rf->pend, 1);
	if (rf && vd->owe && !is_redirect(r))
		__sync_fetch_and_sub(&rf->owe, 1);
	return r;
}

static __always_inline void count(__u32 reason, __u64 bytes, __u32 lidx, int qp_hit)
{
	struct xhca_counter *c = bpf_map_lookup_elem(&xhca_stats, &reason);
	struct xhca_qp_counter *q;

	if (c) {
		c->packets++;
		c->bytes += bytes;
	}
	if (!qp_hit)
		return;
	q = bpf_map_lookup_elem(&xhca_qp_stats, &lidx);
	if (!q)
		return;
	if (is_accept(reason)) {
		q->accepted++;
		q->accepted_bytes += bytes;
	} else {
		q->dropped++;
		q->dropped_bytes += bytes;
	}
}

/* A flow queue's drop counters, by the packet's final reason: each refused
 * packet once, under the flow queue that refused it (the redirected ones
 * flowq_send counted). */
static __always_inline void count_flowq(__u32 reason, const struct verdict *vd)
{
	__u32 fq = vd->fq_drop & (XHCA_FLOWQ_MAX - 1);
	struct xhca_flowq_counter *fc;

	if (!vd->fq_tried || (reason != XHCA_R_DROP_FLOWQ_GATE &&
			      reason != XHCA_R_DROP_MCAST_THRESHOLD &&
			      reason != XHCA_R_DROP_NO_SOCKET))
		return;
	fc = bpf_map_lookup_elem(&xhca_fq_stats, &fq);
	if (!fc)
		return;
	if (reason == XHCA_R_DROP_NO_SOCKET)
		fc->nosock_drops++;
	else
		fc->gate_drops++;
}

SEC("xdp.frags")
int xhca_rx(struct xdp_md *ctx)
{
	__u64 bytes = bpf_xdp_get_buff_len(ctx);
	struct rx_scratch *sc;
	struct roce_pkt *p;
	struct verdict *vd;
	struct xhca_cam_val *cv;
	struct xhca_qp_ctx *c;
	struct xhca_rfast *rf = NULL;
	int qp_hit = 0;
	__u32 lidx = 0;
	__u32 zero = 0;
	int r;

	sc = bpf_map_lookup_elem(&xhca_scratch, &zero);
	if (!sc)
		return XDP_PASS; /* cannot happen: the map has its one entry */
	__builtin_memset(sc, 0, sizeof(*sc));
	p = &sc->p;
	vd = &sc->vd;
	r = parse(ctx, bytes, p);
	if (r >= 0)
		goto out;
	if (p->qpn == XHCA_QPN_SMI) {
		r = XHCA_R_DROP_QP0;
		goto out;
	}
	if (p->qpn == XHCA_QPN_MCAST) {
		__u32 gidx = 0;

		r = mcast(ctx, p, bytes, &gidx, vd);
		goto out;
	}
	cv = bpf_map_lookup_elem(&xhca_qp_cam, &p->qpn);
	if (!cv) {
		r = XHCA_R_DROP_CAM_MISS;
		goto out;
	}
	lidx = cv->lidx;
	c = bpf_map_lookup_elem(&xhca_qp_ctx, &lidx);
	if (!c) {
		r = XHCA_R_DROP_STALE;
		goto out;
	}
	vd->lidx = lidx;
	vd->gen = cv->gen; /* what the CAM entry says: the context must agree */
	/* (counted before the sequence commits it: see struct xhca_rfast) */
	rf = recv_count(p, lidx, cv->gen, vd);
	r = xhca_check_qp(ctx, c, p, vd);
	qp_hit = vd->qp_hit;
	r = deliver(ctx, c, p, vd, rf, r, bytes);
out:
	count(r, bytes, lidx, qp_hit);
	count_flowq(r, vd);
	switch (r) {
	case XHCA_R_PASS_NOT_ROCE:
	case XHCA_R_PASS_TRUNCATED:
	case XHCA_R_PASS_VLAN_DEPTH:
	case XHCA_R_PASS_IPV6_EXT:
	case XHCA_R_PASS_IP_FRAG:
	case XHCA_R_ACCEPT_PASS:
		return XDP_PASS;
	case XHCA_R_TO_FLOWQ:
	case XHCA_R_PLACED_TO_FLOWQ:
	case XHCA_R_TO_XLATE:
	case XHCA_R_XLATE_NOCOPY:
	case XHCA_R_TO_PROXY:
	case XHCA_R_PLACED_ACK:
	case XHCA_R_DUP_TO_FLOWQ:
	case XHCA_R_SEQ_NAK_TO_FLOWQ:
	case XHCA_R_TO_MCAST:
	case XHCA_R_TO_MCAST_DEVS:
	case XHCA_R_TO_MCAST_PORTS:
		return XDP_REDIRECT;
	case XHCA_R_RECV_ACKED:
	case XHCA_R_PLACED_ACKED:
		return XDP_TX;
	default:
		return XDP_DROP;
	}
}

/*
 * xhca_rep: the replication port's receive side (on the peer of the veth
 * xhcad makes for groups with function ports and QP members). The copy
 * xhca_rx broadcast into it goes to the replication queue, through its own
 * socket, as xhca_rx sends the packets of groups without ports: the same
 * threshold, the same metadata. Counted per group, not in xhca_stats (the
 * packet has its reason there already, to_mcast_devs).
 */
SEC("xdp.frags")
int xhca_rep(struct xdp_md *ctx)
{
	__u64 bytes = bpf_xdp_get_buff_len(ctx);
	struct xhca_mcast_counter *mc;
	struct xhca_mcast_grp *g;
	struct xhca_flowq *q;
	struct verdict vd = {};
	struct roce_pkt p = {};
	__u32 idx, fq = XHCA_FLOWQ_MCAST;
	__u64 backlog;

	if (parse(ctx, bytes, &p) >= 0 || p.qpn != XHCA_QPN_MCAST)
		return XDP_DROP;
	g = bpf_map_lookup_elem(&xhca_mcast, p.daddr);
	if (!g || !g->nmembers)
		return XDP_DROP;
	idx = g->index;
	mc = bpf_map_lookup_elem(&xhca_mc_stats, &idx);
	q = bpf_map_lookup_elem(&xhca_flowq, &fq);
	if (!mc || !q)
		return XDP_DROP;
	backlog = READ_ONCE64(q->enq) - READ_ONCE64(q->deq);
	if (q->high && backlog >= q->high) {
		mc->threshold_drops++;
		return XDP_DROP;
	}
	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(struct xhca_rx_meta)))
		return XDP_DROP;
	vd.key = XHCA_XSK_REP_KEY;
	vd.lidx = idx;
	vd.gen = g->gen;
	vd.flowq = XHCA_FLOWQ_MCAST;
	if (flowq_send(ctx, &p, &vd, XHCA_R_TO_MCAST, bytes, bpf_ktime_get_ns()) != XHCA_R_TO_MCAST)
		return XDP_DROP;
	mc->packets++;
	mc->bytes += bytes;
	return XDP_REDIRECT;
}
