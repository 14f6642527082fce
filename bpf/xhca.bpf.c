/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca_rx: the receive pipeline of the xhca host channel adapter.
 *
 * Parses Ethernet [VLAN x2] IPv4|IPv6 UDP:4791 BTH and the extension headers
 * the opcode implies, translates the global destination QPN to a local QP
 * context through the QP CAM (US 7,212,547) and runs the inbound header checks
 * in the order RXE uses. Everything that is not RoCEv2 gets XDP_PASS untouched.
 * Every packet increments exactly one reason counter.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <xhca/abi.h>
#include <xhca/wire.h>
#include "parse.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* QP CAM. Key: global QPN (24 bits). Value: local index and generation.
 * Written by xhcad (insert BPF_NOEXIST on create, delete on destroy), read by
 * xhca_rx. max_entries = number of local QPs, set at load (default 4096). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XHCA_MAX_QPS_DEFAULT);
	__type(key, __u32);
	__type(value, struct xhca_cam_val);
} xhca_qp_cam SEC(".maps");

/* Local QP contexts. Key: local index. Written whole by xhcad with BPF_F_LOCK;
 * xhca_rx reads it and advances epsn under the lock. Sized like the CAM. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XHCA_MAX_QPS_DEFAULT);
	__type(key, __u32);
	__type(value, struct xhca_qp_ctx);
} xhca_qp_ctx SEC(".maps");

/* Reason counters. Key: enum xhca_reason. Per-CPU, written by xhca_rx, read
 * and reset by xhcad. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XHCA_R_MAX);
	__type(key, __u32);
	__type(value, struct xhca_counter);
} xhca_stats SEC(".maps");

/* Per-QP accepted/dropped counters. Key: local index. Per-CPU, written by
 * xhca_rx, read and zeroed (on create) by xhcad. Sized like the CAM. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XHCA_MAX_QPS_DEFAULT);
	__type(key, __u32);
	__type(value, struct xhca_qp_counter);
} xhca_qp_stats SEC(".maps");

/* P_Key table. Key: P_Key index. Written by xhcad (index 0 is 0xffff), read
 * by xhca_rx for QP1, which accepts any P_Key of the table. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XHCA_PKEY_TBL_LEN);
	__type(key, __u32);
	__type(value, struct xhca_pkey);
} xhca_pkeys SEC(".maps");

/* What the parser learnt about a RoCEv2 packet. */
struct roce_pkt {
	__u8 saddr[16] __attribute__((aligned(8))); /* v4-mapped for IPv4 */
	__u8 daddr[16];
	__u32 qpn;
	__u32 psn;
	__u32 qkey;	/* DETH, UD only */
	__u32 dma_len;	/* RETH, READ requests only */
	__u16 pkey;
	__u16 op_flags;
	__u8 opcode;
};

static __always_inline int ip_eq(const __u8 *a, const __u8 *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;

	return x[0] == y[0] && x[1] == y[1];
}

/* QP1 accepts any P_Key in the table (checked before the context lock is
 * taken: map lookups are helper calls, not allowed under a spin lock). */
static __always_inline int pkey_in_table(__u16 pkey)
{
	for (__u32 i = 0; i < XHCA_PKEY_TBL_LEN; i++) {
		__u32 k = i;
		struct xhca_pkey *e = bpf_map_lookup_elem(&xhca_pkeys, &k);

		if (e && xhca_pkey_match(pkey, e->pkey))
			return 1;
	}
	return 0;
}

/* Response packets an RDMA READ request will get: its PSN cost. */
static __always_inline __u32 read_npkts(__u32 len, __u8 mtu_shift)
{
	__u64 n;

	if (mtu_shift < 8 || mtu_shift > 12)
		mtu_shift = 10;
	n = ((__u64)len + (1u << mtu_shift) - 1) >> mtu_shift;
	return n ? (__u32)n : 1;
}

/* The header checks against the QP context, under its lock. Returns the
 * reason; *qp_hit says the context matched, so the per-QP counters apply. */
static __always_inline int check_qp(struct xhca_qp_ctx *c, const struct xhca_cam_val *cv,
				    const struct roce_pkt *p, int pkey_any, int *qp_hit)
{
	__u16 f = p->op_flags;
	int r, d;

	bpf_spin_lock(&c->lock);
	if (!c->valid || c->gqpn != p->qpn || c->gen != cv->gen) {
		r = XHCA_R_DROP_STALE;
		goto out;
	}
	*qp_hit = 1;
	if (f & XHCA_H_CNP) {
		r = XHCA_R_CNP;
		goto out;
	}
	if ((p->opcode >> 5) != c->type) {
		r = XHCA_R_DROP_OPCODE_TYPE;
		goto out;
	}
	if (c->state == XHCA_QPS_RESET || c->state == XHCA_QPS_INIT ||
	    c->state == XHCA_QPS_ERR || c->state > XHCA_QPS_ERR ||
	    ((f & XHCA_O_RESP) && c->state == XHCA_QPS_RTR)) {
		r = XHCA_R_DROP_QP_STATE;
		goto out;
	}
	if (c->type != XHCA_QPT_UD && (!ip_eq(p->daddr, c->local_ip) || !ip_eq(p->saddr, c->remote_ip))) {
		r = XHCA_R_DROP_ADDR;
		goto out;
	}
	if (p->qpn == XHCA_QPN_GSI ? !pkey_any : !xhca_pkey_match(p->pkey, c->pkey)) {
		r = XHCA_R_DROP_PKEY;
		goto out;
	}
	if (c->type == XHCA_QPT_UD &&
	    p->qkey != (p->qpn == XHCA_QPN_GSI ? XHCA_GSI_QKEY : c->qkey)) {
		r = XHCA_R_DROP_QKEY;
		goto out;
	}
	if (c->type == XHCA_QPT_RC && (f & XHCA_O_REQ)) {
		d = xhca_psn_cmp(p->psn, c->epsn);
		if (d < 0) {
			r = XHCA_R_DROP_PSN_DUP;
			goto out;
		}
		if (d > 0) {
			r = XHCA_R_DROP_PSN_OOS;
			goto out;
		}
		c->epsn = (c->epsn + ((f & XHCA_O_READ) ? read_npkts(p->dma_len, c->mtu_shift) : 1)) &
			  XHCA_PSN_MASK;
	} else if (c->type == XHCA_QPT_UC) {
		/* A gap breaks the message: drop until the next FIRST/ONLY. */
		if ((c->flags & XHCA_QPF_UC_DROP_MSG) || xhca_psn_cmp(p->psn, c->epsn)) {
			if (!(f & XHCA_O_START)) {
				c->flags |= XHCA_QPF_UC_DROP_MSG;
				r = XHCA_R_DROP_UC_GAP;
				goto out;
			}
			c->flags &= ~XHCA_QPF_UC_DROP_MSG;
		}
		c->epsn = (p->psn + 1) & XHCA_PSN_MASK;
	}
	r = c->action == XHCA_ACT_DROP ? XHCA_R_ACCEPT_DROP : XHCA_R_ACCEPT_PASS;
out:
	bpf_spin_unlock(&c->lock);
	return r;
}

/* Parses the packet up to the BTH and its extension headers. Returns a
 * reason when the verdict is already known, or -1 to go on to the CAM. */
static __always_inline int parse(struct xdp_md *ctx, struct roce_pkt *p)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct hdr_cursor cur = { .pos = data };
	const struct xhca_opinfo *oi;
	struct xhca_bth *bth;
	struct udphdr *udp;
	__u32 avail, paylen;
	__u8 pad;
	int r;

	r = parse_l2_l3(&cur, end, p->saddr, p->daddr, &udp);
	if (r >= 0)
		return r;

	bth = (void *)(udp + 1);
	if ((void *)(bth + 1) > end)
		return XHCA_R_DROP_TRUNCATED;
	p->opcode = bth->opcode;
	/* Known opcode first, before any length arithmetic (RXE CVE-2026-46133). */
	oi = &xhca_opinfo_tbl[p->opcode];
	if (!(oi->flags & XHCA_O_KNOWN))
		return XHCA_R_DROP_UNKNOWN_OPCODE;
	p->op_flags = oi->flags;
	avail = (__u32)(end - (void *)udp);
	paylen = bpf_ntohs(udp->len);
	/* Ethernet may pad short frames: the UDP length is the packet's extent. */
	if (paylen > avail)
		return XHCA_R_DROP_TRUNCATED;
	pad = (bth->flags & XHCA_BTH_PAD_MASK) >> XHCA_BTH_PAD_SHIFT;
	if (paylen < sizeof(*udp) + oi->hdr_len + pad + XHCA_ICRC_LEN)
		return XHCA_R_DROP_BAD_LENGTH;
	if (bth->flags & XHCA_BTH_TVER_MASK)
		return XHCA_R_DROP_BAD_TVER;

	p->pkey = bpf_ntohs(bth->pkey);
	p->qpn = bpf_ntohl(bth->qpn) & XHCA_QPN_MASK;
	p->psn = bpf_ntohl(bth->apsn) & XHCA_PSN_MASK;
	if (oi->flags & XHCA_H_DETH) {
		struct xhca_deth *deth = (void *)bth + xhca_deth_off();

		if ((void *)(deth + 1) > end)
			return XHCA_R_DROP_TRUNCATED;
		p->qkey = bpf_ntohl(deth->qkey);
	}
	if (oi->flags & XHCA_O_READ) {
		struct xhca_reth *reth = (void *)bth + xhca_reth_off(oi->flags);

		if ((void *)(reth + 1) > end)
			return XHCA_R_DROP_TRUNCATED;
		p->dma_len = bpf_ntohl(reth->len);
	}
	return -1;
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
	if (reason == XHCA_R_ACCEPT_PASS || reason == XHCA_R_ACCEPT_DROP || reason == XHCA_R_CNP) {
		q->accepted++;
		q->accepted_bytes += bytes;
	} else {
		q->dropped++;
		q->dropped_bytes += bytes;
	}
}

SEC("xdp")
int xhca_rx(struct xdp_md *ctx)
{
	__u64 bytes = ctx->data_end - ctx->data;
	struct roce_pkt p = {};
	struct xhca_cam_val *cv;
	struct xhca_qp_ctx *c;
	int qp_hit = 0, pkey_any = 0;
	__u32 lidx = 0;
	int r;

	r = parse(ctx, &p);
	if (r >= 0)
		goto out;
	if (p.qpn == XHCA_QPN_SMI) {
		r = XHCA_R_DROP_QP0;
		goto out;
	}
	if (p.qpn == XHCA_QPN_MCAST) {
		r = XHCA_R_DROP_MCAST;
		goto out;
	}
	cv = bpf_map_lookup_elem(&xhca_qp_cam, &p.qpn);
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
	if (p.qpn == XHCA_QPN_GSI)
		pkey_any = pkey_in_table(p.pkey);
	r = check_qp(c, cv, &p, pkey_any, &qp_hit);
out:
	count(r, bytes, lidx, qp_hit);
	switch (r) {
	case XHCA_R_PASS_NOT_ROCE:
	case XHCA_R_PASS_TRUNCATED:
	case XHCA_R_PASS_VLAN_DEPTH:
	case XHCA_R_PASS_IPV6_EXT:
	case XHCA_R_PASS_IP_FRAG:
	case XHCA_R_ACCEPT_PASS:
		return XDP_PASS;
	default:
		return XDP_DROP;
	}
}
