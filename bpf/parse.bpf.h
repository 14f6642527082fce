/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Header cursor parsing for xhca_rx and xhca_rep: Ethernet, up to two VLAN
 * tags (802.1Q, 802.1ad), IPv4 (options via IHL) or IPv6, UDP (parse_l2_l3),
 * then the BTH and the extension headers its opcode implies (parse). Every
 * read is bounds-checked against data_end first.
 */
#ifndef XHCA_PARSE_BPF_H
#define XHCA_PARSE_BPF_H

#include "common.bpf.h"

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88A8
#define IPPROTO_UDP_ 17
#define IP_MF 0x2000
#define IP_OFFSET 0x1fff

struct hdr_cursor {
	void *pos;
};

struct vlan_hdr_ {
	__be16 tci;
	__be16 proto;
};

static __always_inline int is_vlan(__u16 proto)
{
	return proto == ETH_P_8021Q || proto == ETH_P_8021AD;
}

/* IPv6 next-header values that are extension headers (RFC 8200 and the
 * IANA list): the packet may still be RoCEv2, but we do not walk them. */
static __always_inline int is_ipv6_ext(__u8 nh)
{
	switch (nh) {
	case 0: case 43: case 44: case 50: case 51: case 60: case 135: case 139: case 140:
	case 253: case 254:
		return 1;
	}
	return 0;
}

/* Writes an IPv4 address as v4-mapped IPv6 (::ffff:a.b.c.d). */
static __always_inline void v4_mapped(__u8 *dst, __be32 a)
{
	__u32 *d = (__u32 *)dst;

	d[0] = 0;
	d[1] = 0;
	d[2] = bpf_htonl(0xffff);
	d[3] = a;
}

static __always_inline int is_v4_mapped(const __u8 *a)
{
	const __u32 *w = (const __u32 *)a;

	return w[0] == 0 && w[1] == 0 && w[2] == bpf_htonl(0xffff);
}

static __always_inline void copy16(__u8 *dst, const __u8 *src)
{
	__u32 *d = (__u32 *)dst;
	const __u32 *s = (const __u32 *)src;

	d[0] = s[0];
	d[1] = s[1];
	d[2] = s[2];
	d[3] = s[3];
}

/* The IPv4 header checksum, as the kernel's ip_rcv_core checks it, options
 * included (hlen bytes). The fixed 20 bytes the caller checked against end
 * are summed as five 32-bit words without a test each (RFC 1071: the ones'
 * complement sum folds the same from any word size); options, rare, word by
 * word against end (bpf_csum_diff takes no variable-length packet range). */
static __always_inline int ip4_csum_ok(const struct iphdr *iph, __u32 hlen, void *end)
{
	const __u32 *w = (const __u32 *)iph;
	__u64 sum = (__u64)w[0] + w[1] + w[2] + w[3] + w[4];

	for (int i = 5; i < 15; i++) { /* IHL 15: 60 bytes; a bounded loop */
		if ((__u32)i * 4 >= hlen || (void *)(w + i + 1) > end)
			break;
		sum += w[i];
	}
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/*
 * Parses up to and including a UDP header with destination port 4791.
 * Returns -1 and sets *udpp for a RoCEv2 datagram, or the reason otherwise.
 */
static __always_inline int parse_l2_l3(struct hdr_cursor *cur, void *end, __u8 *saddr,
				       __u8 *daddr, struct udphdr **udpp, __u32 *ip_end)
{
	struct ethhdr *eth = cur->pos;
	struct iphdr *iph = NULL;
	struct udphdr *udp;
	__u32 hlen = 0;
	__u16 proto;
	int frag_first = 0;

	if ((void *)(eth + 1) > end)
		return XHCA_R_PASS_TRUNCATED;
	cur->pos = eth + 1;
	proto = bpf_ntohs(eth->h_proto);

#pragma unroll
	for (int i = 0; i < 2; i++) {
		struct vlan_hdr_ *vh = cur->pos;

		if (!is_vlan(proto))
			break;
		if ((void *)(vh + 1) > end)
			return XHCA_R_PASS_TRUNCATED;
		proto = bpf_ntohs(vh->proto);
		cur->pos = vh + 1;
	}
	if (is_vlan(proto))
		return XHCA_R_PASS_VLAN_DEPTH;

	if (proto == ETH_P_IP) {
		__u16 frag;

		iph = cur->pos;
		if ((void *)(iph + 1) > end)
			return XHCA_R_PASS_TRUNCATED;
		if (iph->version != 4 || iph->ihl < 5 || iph->protocol != IPPROTO_UDP_)
			return XHCA_R_PASS_NOT_ROCE;
		hlen = iph->ihl * 4;
		*ip_end = (__u32)(cur->pos - (void *)eth) + bpf_ntohs(iph->tot_len);
		frag = bpf_ntohs(iph->frag_off);
		/* A later fragment has no UDP header: the port is unknown. */
		if (frag & IP_OFFSET)
			return XHCA_R_PASS_IP_FRAG;
		frag_first = !!(frag & IP_MF);
		v4_mapped(saddr, iph->saddr);
		v4_mapped(daddr, iph->daddr);
		udp = cur->pos + hlen;
	} else if (proto == ETH_P_IPV6) {
		struct ipv6hdr *ip6 = cur->pos;

		if ((void *)(ip6 + 1) > end)
			return XHCA_R_PASS_TRUNCATED;
		if (ip6->nexthdr != IPPROTO_UDP_)
			return is_ipv6_ext(ip6->nexthdr) ? XHCA_R_PASS_IPV6_EXT : XHCA_R_PASS_NOT_ROCE;
		copy16(saddr, (const __u8 *)&ip6->saddr);
		copy16(daddr, (const __u8 *)&ip6->daddr);
		udp = (void *)(ip6 + 1);
		*ip_end = (__u32)((void *)udp - (void *)eth) + bpf_ntohs(ip6->payload_len);
	} else {
		return XHCA_R_PASS_NOT_ROCE;
	}

	if ((void *)(udp + 1) > end)
		return XHCA_R_PASS_TRUNCATED;
	if (udp->dest != bpf_htons(XHCA_ROCE_UDP_PORT))
		return XHCA_R_PASS_NOT_ROCE;
	/* RoCE has no use for IP fragments; RXE would see a reassembled one,
	 * a NIC never does. */
	if (frag_first)
		return XHCA_R_DROP_IP_FRAG;
	if (iph && !ip4_csum_ok(iph, hlen, end))
		return XHCA_R_DROP_IP_CSUM;
	*udpp = udp;
	return -1;
}

/* Parses the packet (len bytes, fragments included) up to the BTH and its
 * extension headers. Returns a reason when the verdict is already known, or
 * -1 to go on to the CAM. */
static __always_inline int parse(struct xdp_md *ctx, __u64 len, struct roce_pkt *p)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct hdr_cursor cur = { .pos = data };
	const struct xhca_opinfo *oi;
	struct xhca_bth *bth;
	struct udphdr *udp;
	__u32 avail, paylen, udp_off;
	__u8 pad;
	int r;

	r = parse_l2_l3(&cur, end, p->saddr, p->daddr, &udp, &p->ip_end);
	if (r >= 0)
		return r;
	p->l3_off = (__u16)(cur.pos - data); /* (parse_l2_l3 leaves it there) */

	bth = (void *)(udp + 1);
	if ((void *)(bth + 1) > end)
		return XHCA_R_DROP_TRUNCATED;
	p->opcode = bth->opcode;
	/* Known opcode first, before any length arithmetic (RXE CVE-2026-46133). */
	oi = &xhca_opinfo_tbl[p->opcode];
	if (!(oi->flags & XHCA_O_KNOWN))
		return XHCA_R_DROP_UNKNOWN_OPCODE;
	p->op_flags = oi->flags;
	/* The headers are in the linear part (checked against end); a large
	 * frame's payload and ICRC may go on in fragments (xdp.frags). */
	udp_off = (__u32)((void *)udp - data);
	avail = (__u32)len - udp_off;
	paylen = bpf_ntohs(udp->len);
	/* Ethernet may pad short frames: the IP packet's length says where
	 * it ends, and its UDP datagram must fit in it. */
	if (p->ip_end > (__u32)len || paylen > avail)
		return XHCA_R_DROP_TRUNCATED;
	if (udp_off + paylen > p->ip_end)
		return XHCA_R_DROP_IP_LENGTH;
	pad = (bth->flags & XHCA_BTH_PAD_MASK) >> XHCA_BTH_PAD_SHIFT;
	if (paylen < sizeof(*udp) + oi->hdr_len + pad + XHCA_ICRC_LEN)
		return XHCA_R_DROP_BAD_LENGTH;
	if (bth->flags & XHCA_BTH_TVER_MASK)
		return XHCA_R_DROP_BAD_TVER;

	p->pkey = bpf_ntohs(bth->pkey);
	p->qpn = bpf_ntohl(bth->qpn) & XHCA_QPN_MASK;
	p->psn = bpf_ntohl(bth->apsn) & XHCA_PSN_MASK;
	p->payload_off = (__u16)((void *)bth - data + oi->hdr_len);
	p->payload_len = (__u16)(paylen - sizeof(*udp) - oi->hdr_len - pad - XHCA_ICRC_LEN);
	p->mflags = ((bth->flags & XHCA_BTH_SE) ? XHCA_MF_SE : 0) |
		    ((bth->apsn & bpf_htonl(XHCA_BTH_ACKREQ)) ? XHCA_MF_ACKREQ : 0) |
		    ((bth->qpn & bpf_htonl(XHCA_BTH_FECN)) ? XHCA_MF_ECN : 0) |
		    (is_v4_mapped(p->daddr) ? 0 : XHCA_MF_IPV6);
	if (oi->flags & XHCA_H_DETH) {
		struct xhca_deth *deth = (void *)bth + xhca_deth_off();

		if ((void *)(deth + 1) > end)
			return XHCA_R_DROP_TRUNCATED;
		p->qkey = bpf_ntohl(deth->qkey);
		p->sqpn = bpf_ntohl(deth->sqp) & XHCA_QPN_MASK;
	}
	if (oi->flags & XHCA_H_RETH) {
		__u32 roff = xhca_reth_off(oi->flags);
		struct xhca_reth *reth;

		/* masked where clang cannot drop it: from its OR of the two
		 * headers' lengths Linux 6.1's verifier learns no bound */
		asm volatile("" : "+r"(roff));
		reth = (void *)bth + (roff & 31);

		if ((void *)(reth + 1) > end)
			return XHCA_R_DROP_TRUNCATED;
		p->va = bpf_be64_to_cpu(reth->va);
		p->rkey = bpf_ntohl(reth->rkey);
		p->dma_len = bpf_ntohl(reth->len);
	} else if (oi->flags & XHCA_H_ATMETH) {
		struct xhca_atmeth *a = (void *)bth + 12;

		if ((void *)(a + 1) > end)
			return XHCA_R_DROP_TRUNCATED;
		p->va = bpf_be64_to_cpu(a->va);
		p->rkey = bpf_ntohl(a->rkey);
		p->dma_len = 8;
	}
	p->pad = pad;
	return -1;
}

#endif /* XHCA_PARSE_BPF_H */
