/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * impair: tc ingress on the two bridge ports of the tests' middle namespace
 * (tests/lib.sh topo_setup_mid). Each RoCEv2 frame (UDP port 4791) coming in
 * on one port goes straight out of the other (bpf_redirect), or:
 *   drop       by chance, drop_ppm in a million;
 *   duplicate  by chance, sent twice (bpf_clone_redirect, then redirect);
 *   reorder    by chance, held back: the frame's bytes go to a per-CPU map
 *              slot and the skb is dropped; the next frame of the same
 *              direction is sent first (a clone), then rewritten with the
 *              held bytes and sent after it. A held frame waits for the
 *              next frame, however long that takes (a retransmission, at
 *              worst): late, as a real network can be.
 * Everything else (ARP, neighbour discovery) goes through the bridge.
 *
 * It sits in the middle because it cannot sit at either end: a host's XDP
 * program runs before tc ingress, and AF_XDP transmission skips tc egress.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "impair.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define TC_ACT_OK 0
#define TC_ACT_SHOT 2
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define ROCE_PORT 4791

/* Set by the loader before load. */
const volatile __u32 ifindex_a, ifindex_b;
const volatile __u32 drop_ppm, dup_ppm, reorder_ppm;

/* key: direction (0 a->b, 1 b->a); value: what the program did. Written
 * here, read by the loader (summed over CPUs). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct impair_stats);
} stats SEC(".maps");

/* key: direction; value: the frame held back on this CPU. Per CPU so that
 * two CPUs never write one slot; only this program uses it. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct impair_hold);
} hold SEC(".maps");

static __always_inline int chance(__u32 ppm)
{
	return ppm && bpf_get_prandom_u32() % 1000000 < ppm;
}

/* The frame's ethertype if it is RoCEv2 over IPv4 or IPv6, else 0. */
static __always_inline __be16 roce_proto(struct __sk_buff *skb)
{
	void *data, *end;
	struct ethhdr *eth;
	struct udphdr *udp;

	bpf_skb_pull_data(skb, sizeof(*eth) + sizeof(struct ipv6hdr) + sizeof(*udp));
	data = (void *)(long)skb->data;
	end = (void *)(long)skb->data_end;
	eth = data;
	if ((void *)(eth + 1) > end)
		return 0;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > end || ip->ihl != 5 || ip->protocol != IPPROTO_UDP)
			return 0;
		udp = (void *)(ip + 1);
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end || ip6->nexthdr != IPPROTO_UDP)
			return 0;
		udp = (void *)(ip6 + 1);
	} else {
		return 0;
	}
	if ((void *)(udp + 1) > end || udp->dest != bpf_htons(ROCE_PORT))
		return 0;
	return eth->h_proto;
}

SEC("tc")
int impair(struct __sk_buff *skb)
{
	__u32 dir = skb->ifindex == ifindex_a ? 0 : 1;
	__u32 peer = dir ? ifindex_a : ifindex_b;
	struct impair_stats *st;
	struct impair_hold *h;
	__u32 len = skb->len;
	__be16 proto;

	if (skb->ifindex != ifindex_a && skb->ifindex != ifindex_b)
		return TC_ACT_OK;
	proto = roce_proto(skb);
	if (!proto)
		return TC_ACT_OK;
	st = bpf_map_lookup_elem(&stats, &dir);
	h = bpf_map_lookup_elem(&hold, &dir);
	if (!st || !h)
		return TC_ACT_OK;
	st->seen++;
	if (chance(drop_ppm)) {
		st->dropped++;
		return TC_ACT_SHOT;
	}
	if (h->len && h->proto == proto) {
		__u32 hl = h->len;

		/* This frame first, then the held one in its place. */
		h->len = 0;
		if (bpf_clone_redirect(skb, peer, 0)) {
			st->errors++;
			return TC_ACT_SHOT;
		}
		st->passed++;
		if (hl > IMPAIR_HOLD_MAX || hl < 14 ||
		    bpf_skb_change_tail(skb, hl, 0) ||
		    bpf_skb_store_bytes(skb, 0, h->data, hl, 0)) {
			st->errors++;
			return TC_ACT_SHOT;
		}
		st->reordered++;
		st->passed++;
		return bpf_redirect(peer, 0);
	}
	if (!h->len && len >= 14 && len <= IMPAIR_HOLD_MAX && chance(reorder_ppm)) {
		if (bpf_skb_load_bytes(skb, 0, h->data, len)) {
			st->errors++;
			return TC_ACT_SHOT;
		}
		h->len = len;
		h->proto = proto;
		st->held++;
		return TC_ACT_SHOT;
	}
	if (chance(dup_ppm)) {
		if (bpf_clone_redirect(skb, peer, 0))
			st->errors++;
		else
			st->duplicated++, st->passed++;
	}
	st->passed++;
	return bpf_redirect(peer, 0);
}
