/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Packets to the multicast QPN (US 8,937,949): the group's checks, then one
 * copy to the replication queue or the kernel's broadcast to the group's
 * function ports. xhca_rep (xhca.bpf.c) is the replication port's side.
 */
#ifndef XHCA_MCAST_BPF_H
#define XHCA_MCAST_BPF_H

#include "common.bpf.h"
#include "maps.bpf.h"
#include "parse.bpf.h"
#include "flowq.bpf.h"

static __always_inline int ip_is_mcast(const __u8 *a)
{
	return is_v4_mapped(a) ? (a[12] & 0xf0) == 0xe0 : a[0] == 0xff;
}

/*
 * A packet to the multicast QPN (US 8,937,949): what is common to the whole
 * group is checked here, then one copy, with the group in its metadata,
 * goes to the replication queue; xhcad's replication engine finds the
 * members and hands each a descriptor of the same frame.
 */
static __always_inline int mcast(struct xdp_md *ctx, const struct roce_pkt *p, __u64 bytes,
				 __u32 *gidx, struct verdict *vd)
{
	struct xhca_mcast_counter *mc;
	struct xhca_mcast_grp *g;
	__u32 idx;
	int r, reason = XHCA_R_TO_MCAST;

	if (!ip_is_mcast(p->daddr))
		return XHCA_R_DROP_MCAST_ADDR;
	if (p->opcode != (XHCA_OPC_UD | XHCA_OP_SEND_ONLY) &&
	    p->opcode != (XHCA_OPC_UD | XHCA_OP_SEND_ONLY_IMM))
		return XHCA_R_DROP_MCAST_OPCODE;
	g = bpf_map_lookup_elem(&xhca_mcast, p->daddr);
	if (!g)
		return XHCA_R_DROP_MCAST_GROUP;
	idx = g->index;
	*gidx = idx;
	mc = bpf_map_lookup_elem(&xhca_mc_stats, &idx);
	if (!mc)
		return XHCA_R_DROP_MCAST_GROUP;
	if (!g->nmembers && !g->ndevs) {
		mc->empty_drops++;
		return XHCA_R_DROP_MCAST_EMPTY;
	}
	if (!xhca_pkey_match(p->pkey, g->pkey)) {
		mc->pkey_drops++;
		return XHCA_R_DROP_MCAST_PKEY;
	}
	/* Second level: a copy to every function port, in the kernel; the QP
	 * members' through the replication port. The broadcast copies the
	 * frame for every port but the last (xdpf_clone), which a frame of
	 * several buffers cannot be (it would reach no port, uncounted): such
	 * a frame goes to the replication queue, stored once, and xhcad sends
	 * each port and QP its copy. (One port: no copy.) */
	if (g->ndevs && g->ndevs + (g->nmembers ? 1 : 0) > 1 &&
	    bytes > (__u64)(ctx->data_end - ctx->data)) {
		reason = XHCA_R_TO_MCAST_PORTS;
	} else if (g->ndevs) {
		void *ports = bpf_map_lookup_elem(&xhca_mc_devs, &idx);

		if (!ports)
			return XHCA_R_DROP_MCAST_GROUP;
		if (bpf_redirect_map(ports, 0, BPF_F_BROADCAST | BPF_F_EXCLUDE_INGRESS) !=
		    XDP_REDIRECT)
			return XHCA_R_DROP_NO_SOCKET;
		mc->dev_packets++;
		return XHCA_R_TO_MCAST_DEVS;
	}
	r = flowq_admit(ctx, XHCA_FLOWQ_MCAST, vd);
	if (r == XHCA_R_DROP_FLOWQ_GATE) {
		mc->threshold_drops++;
		return XHCA_R_DROP_MCAST_THRESHOLD;
	}
	if (r >= 0)
		return r;
	vd->lidx = idx;
	vd->gen = g->gen;
	vd->flowq = XHCA_FLOWQ_MCAST;
	r = flowq_send(ctx, p, vd, reason, bytes, bpf_ktime_get_ns());
	if (r == reason) {
		mc->packets++;
		mc->bytes += bytes;
	}
	return r;
}

#endif /* XHCA_MCAST_BPF_H */
