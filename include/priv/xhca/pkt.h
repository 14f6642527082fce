/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 packet builder (user/lib/pkt.c): Ethernet, up to two VLAN tags,
 * IPv4 (with options) or IPv6, UDP, BTH, the extension headers the opcode
 * implies, payload, pad and ICRC. Used by the tests, xhca-gen and the bench.
 */
#ifndef XHCA_PKT_H
#define XHCA_PKT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/types.h>

#define XHCA_PKT_MAX 9216

struct xhca_pkt_spec {
	/* Ethernet */
	uint8_t dmac[6];
	uint8_t smac[6];
	int nvlan;		/* 0, 1 or 2 tags */
	uint16_t vlan_tpid[2];	/* outer first; 0 = 0x88a8 outer of two, 0x8100 otherwise */
	uint16_t vlan_tci[2];
	uint16_t ethertype;	/* 0 = IPv4 or IPv6 from .ipv6 */
	/* IP */
	int ipv6;
	uint8_t src_ip[16];	/* IPv4 v4-mapped (::ffff:a.b.c.d), as xhca_ip_parse */
	uint8_t dst_ip[16];
	uint8_t tos;		/* IPv4 TOS / IPv6 traffic class */
	uint8_t ttl;		/* IPv4 TTL / IPv6 hop limit; 0 = 64 */
	uint32_t flow_label;
	uint16_t ip_id;
	uint16_t frag_off;	/* IPv4 flags+offset field, host order; 0 = DF */
	int ip_opt_len;		/* IPv4 options (NOPs), multiple of 4, <= 40 */
	uint8_t ip_proto;	/* 0 = UDP */
	uint8_t ipv6_nexthdr;	/* 0 = UDP; else an extension header is inserted */
	/* UDP */
	uint16_t sport;		/* 0 = 0xc000 */
	uint16_t dport;		/* 0 = 4791 */
	int udp_len_delta;	/* added to the correct UDP length (malformed frames) */
	/* BTH */
	uint8_t opcode;
	uint8_t se, mig, tver;
	int pad;		/* -1 = from the payload length; else forced PadCnt */
	uint16_t pkey;		/* 0 = 0xffff */
	int pkey_zero;		/* send P_Key 0 (as pkey 0 means default) */
	uint32_t dqpn;
	uint8_t fecn, becn, ackreq;
	uint32_t psn;
	/* extension headers: used when the opcode carries them */
	uint64_t reth_va;
	uint32_t reth_rkey, reth_len;
	uint32_t deth_qkey, deth_sqp;
	uint8_t aeth_syndrome;
	uint32_t aeth_msn;
	uint64_t atomic_va, atomic_swap, atomic_cmp;
	uint32_t atomic_rkey;
	uint64_t atomic_orig;
	uint32_t imm;		/* ImmDt, host order (sent big-endian) */
	uint32_t ieth_rkey;
	uint8_t feth;
	/* payload */
	const void *payload;	/* NULL = pattern bytes */
	uint32_t payload_len;
	int bad_icrc;		/* flip the ICRC (for negative tests) */
	/* Added after the first version: */
	int ipv6_hbh;		/* insert a hop-by-hop header (type 0, which
				 * ipv6_nexthdr cannot ask for), before the
				 * ipv6_nexthdr one if that is set too */
	int psn_stamp;		/* the first 4 payload bytes are the PSN,
				 * big-endian (receivers check order with it) */
};

/* Byte k of a test message with seed: never periodic in 256, so a byte
 * placed one off, or a page off, shows (xhca-gen --msg-len, the tests). */
static inline uint8_t xhca_msg_pattern(uint32_t seed, uint64_t k)
{
	return (uint8_t)(seed * 0x9e + k + (k >> 8) * 3 + (k >> 16) * 5);
}

/* Defaults: MACs 02:00:00:00:00:0{1,2}, 10.0.0.1 -> 10.0.0.2, P_Key 0xffff,
 * sport 0xc000, pad from the payload. */
void xhca_pkt_spec_init(struct xhca_pkt_spec *s, uint8_t opcode);

/* Builds the frame into buf. Returns its length, or -EINVAL (bad spec) or
 * -ENOSPC (buf too small). */
int xhca_pkt_build(const struct xhca_pkt_spec *s, void *buf, size_t buflen);

/* Frame length of the spec without building it, or -EINVAL. */
int xhca_pkt_len(const struct xhca_pkt_spec *s);
/* The IPv4 header checksum of h (len bytes, its checksum field 0). */
uint16_t xhca_ipv4_csum(const uint8_t *h, size_t len);

/* ICRC of a RoCEv2 packet: l3 points at the IP header, len runs to the end of
 * the pad (ICRC excluded). Returns the value to store little-endian on the
 * wire (as RXE and scapy do). */
uint32_t xhca_icrc(const void *l3, size_t len, int ipv6);
/* CRC-32 as zlib's crc32() (pre- and post-inverted): what the ICRC is made
 * of, by the widest carry-less multiplication the CPU has. */
uint32_t xhca_crc32(uint32_t crc, const void *p, size_t n);
/* Its implementations, each using the ones before it for shorter runs:
 * sliced by 8, PCLMULQDQ on 128 bits, VPCLMULQDQ on 256 (AVX2) and on 512
 * (AVX-512). xhca_crc32_impl(i): from now on, every thread's CRC by i, or
 * the best this CPU has under it (-1: the best; -2: no change); returns the
 * one in use. For tests and measurements. */
enum { XHCA_CRC_SLICE8, XHCA_CRC_CLMUL128, XHCA_CRC_CLMUL256, XHCA_CRC_CLMUL512 };
int xhca_crc32_impl(int impl);
/* (Added note) With IPv4 options or IPv6 extension headers the value is
 * RXE's: it covers the 8 bytes after the 20/40-byte base header in place of
 * the UDP header (see user/lib/icrc.c); scapy covers the options instead. */

/* Checks the ICRC of a whole Ethernet frame: 0 good, -EBADMSG bad, -EINVAL
 * not a RoCEv2 frame. */
int xhca_icrc_check_frame(const void *frame, size_t len);

/* Looks ip (16 bytes, IPv4 v4-mapped) up in the neighbour table (ARP or
 * NDP) of ifindex: the kernel is asked for that entry alone (user/lib/
 * neigh.c, libnl-route). Returns 0 with the MAC of an entry REACHABLE,
 * STALE, DELAY, PROBE, PERMANENT or NOARP; -ENOENT without a usable entry
 * (none, INCOMPLETE, FAILED; the caller makes the kernel resolve it and
 * looks again); another -errno when netlink fails. Thread-safe. */
int xhca_neigh_lookup(int ifindex, const uint8_t ip[16], int ipv6, uint8_t mac[6]);
/* The same from a dump of the whole table (what xhca_neigh_lookup falls
 * back to on a kernel before 5.0, which cannot get one entry): for the
 * tests. */
int xhca_neigh_lookup_dump(int ifindex, const uint8_t ip[16], int ipv6, uint8_t mac[6]);

/* The opcode of packet i of n of a SEND or WRITE message whose ONLY opcode
 * (with or without its class bits) is only: FIRST, MIDDLE, LAST (with the
 * ONLY's immediate or invalidate), or only itself when n is 1. */
uint8_t xhca_msg_opcode(uint8_t only, uint64_t i, uint64_t n);

/* Opcode names ("RC_SEND_ONLY") and parsing ("rc-send-only", "0x04", "4"). */
const char *xhca_opcode_name(uint8_t opcode);
int xhca_opcode_parse(const char *s, uint8_t *opcode);

/* "10.0.0.1" or "fe80::1" into 16 bytes (IPv4: v4-mapped ::ffff:a.b.c.d).
 * Returns 4 or 6, or -EINVAL. */
int xhca_ip_parse(const char *s, uint8_t out[16]);
/* Whether a 16-byte address is IPv4 (v4-mapped, ::ffff:a.b.c.d). */
static inline int xhca_ip_is_v4(const uint8_t ip[16])
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(ip, v4mapped, sizeof(v4mapped));
}

/* Whether it is a multicast address (224/4, ff00::/8). */
static inline int xhca_ip_is_mcast(const uint8_t ip[16])
{
	return xhca_ip_is_v4(ip) ? (ip[12] & 0xf0) == 0xe0 : ip[0] == 0xff;
}

/* Prints a 16-byte address (v4-mapped as dotted quad). */
const char *xhca_ip_str(const uint8_t ip[16], char *buf, size_t len);

#endif /* XHCA_PKT_H */
