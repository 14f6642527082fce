/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca_rx under BPF_PROG_TEST_RUN: a table of {packet, QP, expected reason},
 * with a case for every reason of the enum (checked at the end), and
 * sequences that need state: PSN wrap at 2^24, UC gaps, READ PSN cost,
 * destroy and re-create with stale generations, truncation at every byte of
 * the headers, and every one of the 256 opcodes.
 *
 * Every run checks what every packet must satisfy: exactly one reason counter
 * moved, by one packet and the frame's bytes; the verdict is the reason's;
 * the frame came out unchanged; the per-QP counters moved only for packets
 * that reached a valid QP context.
 *
 * The test writes the maps itself, as xhcad would: it is the program under
 * test here, not the daemon.
 */
#include "rx.h"

/* ---- the table ----------------------------------------------------------- */

/* The IPv4 header checksum of ip, set again after an edit. */
void ip4_csum_fix(__u8 *ip)
{
	__u32 sum = 0, hlen = (ip[0] & 15u) * 4;

	ip[10] = ip[11] = 0;
	for (__u32 i = 0; i < hlen; i += 2)
		sum += (__u32)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = ~sum & 0xffff;
	ip[10] = (__u8)(sum >> 8);
	ip[11] = (__u8)sum;
}

/* Frame edits the builder has no field for. */
enum raw_edit {
	RAW_NONE,
	RAW_THREE_VLANS,	/* a third tag inside two */
	RAW_IHL4,		/* IPv4 IHL below 5 */
	RAW_PAD_NO_ROOM,	/* PadCnt 3 without the pad bytes */
	RAW_ETH_ONLY,		/* 14 bytes: an IPv4 ethertype and nothing else */
	RAW_ETH_PAD,		/* Ethernet padding after the UDP datagram, up to 60 bytes */
	RAW_IP_CSUM,		/* IPv4 header checksum off by one */
	RAW_IP_OPT,		/* IPv4: the last byte of the options changed, not the checksum */
	RAW_IP_OPT_FF,		/* IPv4: the last option word ff ff ff fe, the checksum fixed */
	RAW_IP_SHORT,		/* IPv4 total length 4 short of the UDP datagram (checksum right) */
	RAW_IP_LONG,		/* IPv4 total length 4 past the frame (checksum right) */
	RAW_IP6_SHORT,		/* IPv6 payload length 4 short of the UDP datagram */
};

struct rx_case {
	const char *name;
	__u8 opcode;
	__u32 qpn;
	int reason;
	__u32 psn;		/* 0 = EPSN0 */
	__u16 pkey;		/* 0 = 0xffff */
	__u32 qkey;		/* 0 = UD_QKEY */
	int v6, nvlan, ip_opt_len, tver, ipv6_hbh, pkey_zero;
	int empty;		/* no payload, even for opcodes that carry one */
	__u8 ip_proto, ipv6_nexthdr;
	__u16 ethertype, dport, frag_off;
	int udp_len_delta;
	__u32 reth_len, payload_len;
	const char *src; /* source address instead of the QP's remote one */
	enum raw_edit raw;
	__s64 want_epsn; /* the QP's expected PSN after, when non-zero */
};

#define R(x) XHCA_R_##x

static const struct rx_case cases[] = {
	/* not RoCEv2: given to the kernel untouched */
	{ "ARP ethertype", RC_SEND, QPN(L_RC), R(PASS_NOT_ROCE), .ethertype = 0x0806 },
	{ "IPv4 TCP", RC_SEND, QPN(L_RC), R(PASS_NOT_ROCE), .ip_proto = 6 },
	{ "UDP to port 4792", RC_SEND, QPN(L_RC), R(PASS_NOT_ROCE), .dport = 4792 },
	{ "IPv6 ICMPv6", RC_SEND, QPN(L_RC6), R(PASS_NOT_ROCE), .v6 = 1, .ip_proto = 58 },
	{ "IPv4 IHL 4", RC_SEND, QPN(L_RC), R(PASS_NOT_ROCE), .raw = RAW_IHL4 },
	{ "Ethernet header only", RC_SEND, QPN(L_RC), R(PASS_TRUNCATED), .raw = RAW_ETH_ONLY },
	{ "three VLAN tags", RC_SEND, QPN(L_RC), R(PASS_VLAN_DEPTH), .nvlan = 2,
	  .raw = RAW_THREE_VLANS },
	{ "IPv6 hop-by-hop header", RC_SEND, QPN(L_RC6), R(PASS_IPV6_EXT), .v6 = 1, .ipv6_hbh = 1 },
	{ "IPv6 routing header", RC_SEND, QPN(L_RC6), R(PASS_IPV6_EXT), .v6 = 1,
	  .ipv6_nexthdr = 43 },
	{ "IPv4 non-first fragment", RC_SEND, QPN(L_RC), R(PASS_IP_FRAG), .frag_off = 0x0010 },
	{ "IPv4 first fragment (MF)", RC_SEND, QPN(L_RC), R(DROP_IP_FRAG), .frag_off = 0x2000 },
	/* malformed RoCEv2 */
	{ "UDP length beyond the frame", RC_SEND, QPN(L_RC), R(DROP_TRUNCATED),
	  .udp_len_delta = 8 },
	{ "IPv4 header checksum wrong", RC_SEND, QPN(L_RC), R(DROP_IP_CSUM), .raw = RAW_IP_CSUM },
	{ "IPv4 checksum wrong, with options", RC_SEND, QPN(L_RC), R(DROP_IP_CSUM),
	  .ip_opt_len = 40, .raw = RAW_IP_CSUM },
	{ "IPv4 option byte changed, checksum not", RC_SEND, QPN(L_RC), R(DROP_IP_CSUM),
	  .ip_opt_len = 40, .raw = RAW_IP_OPT },
	{ "IPv4 last option word ff ff ff fe, checksum right (every word summed, carries)", RC_SEND,
	  QPN(L_RC), R(ACCEPT_DROP), .ip_opt_len = 40, .raw = RAW_IP_OPT_FF },
	{ "IPv4 total length short of the UDP datagram", RC_SEND, QPN(L_RC), R(DROP_IP_LENGTH),
	  .raw = RAW_IP_SHORT },
	{ "IPv4 total length past the frame", RC_SEND, QPN(L_RC), R(DROP_TRUNCATED),
	  .raw = RAW_IP_LONG },
	{ "IPv6 payload length short of the UDP datagram", RC_SEND, QPN(L_RC6),
	  R(DROP_IP_LENGTH), .v6 = 1, .raw = RAW_IP6_SHORT },
	{ "UD payload over the path MTU (1024)", UD_SEND, QPN(L_UD), R(DROP_UD_MTU),
	  .payload_len = 1025 },
	{ "UD payload of the path MTU", UD_SEND, QPN(L_UD), R(ACCEPT_DROP), .payload_len = 1024 },
	{ "reserved RC opcode 0x18", 0x18, QPN(L_RC), R(DROP_UNKNOWN_OPCODE) },
	{ "reserved RC opcode 0x15", 0x15, QPN(L_RC), R(DROP_UNKNOWN_OPCODE) },
	{ "RD opcode 0x44", 0x44, QPN(L_RC), R(DROP_UNKNOWN_OPCODE) },
	{ "XRC opcode 0xa4", 0xa4, QPN(L_RC), R(DROP_UNKNOWN_OPCODE) },
	{ "opcode 0xff to QPN 0xffffff", 0xff, XHCA_QPN_MCAST, R(DROP_UNKNOWN_OPCODE) },
	{ "opcode 0x80", 0x80, QPN(L_RC), R(DROP_UNKNOWN_OPCODE) },
	{ "UDP length short of the RETH", XHCA_OPC_RC | XHCA_OP_WRITE_ONLY, QPN(L_RC),
	  R(DROP_BAD_LENGTH), .udp_len_delta = -1, .empty = 1 },
	{ "UDP length short of the ICRC", RC_SEND, QPN(L_RC), R(DROP_BAD_LENGTH),
	  .udp_len_delta = -1, .empty = 1 },
	{ "PadCnt 3 without pad bytes", RC_SEND, QPN(L_RC), R(DROP_BAD_LENGTH),
	  .raw = RAW_PAD_NO_ROOM, .empty = 1 },
	{ "PadCnt 3 with a 13-byte payload", RC_SEND, QPN(L_RC), R(ACCEPT_DROP),
	  .raw = RAW_PAD_NO_ROOM },
	{ "TVer 1", RC_SEND, QPN(L_RC), R(DROP_BAD_TVER), .tver = 1 },
	{ "TVer 15", UD_SEND, QPN(L_UD), R(DROP_BAD_TVER), .tver = 15 },
	/* QPN checks */
	{ "destination QP 0", RC_SEND, 0, R(DROP_QP0) },
	{ "destination QP 0xffffff to a unicast address", UD_SEND, XHCA_QPN_MCAST,
	  R(DROP_MCAST_ADDR) },
	{ "unknown QPN", RC_SEND, 0xabcdef, R(DROP_CAM_MISS) },
	{ "CNP to an unknown QPN", XHCA_OP_CNP, 0xabcdef, R(DROP_CAM_MISS) },
	{ "CAM generation != context generation", RC_SEND, QPN(L_STALE), R(DROP_STALE) },
	{ "CAM points at an invalid context", RC_SEND, QPN(L_INVALID), R(DROP_STALE) },
	/* opcode class vs QP type */
	{ "UD SEND to an RC QP", UD_SEND, QPN(L_RC), R(DROP_OPCODE_TYPE) },
	{ "UC SEND to an RC QP", UC_SEND, QPN(L_RC), R(DROP_OPCODE_TYPE) },
	{ "RC SEND to a UD QP", RC_SEND, QPN(L_UD), R(DROP_OPCODE_TYPE) },
	{ "RC SEND to a UC QP", RC_SEND, QPN(L_UC), R(DROP_OPCODE_TYPE) },
	/* state */
	{ "SEND to an RC QP in RESET", RC_SEND, QPN(L_RC_RESET), R(DROP_QP_STATE) },
	{ "SEND to an RC QP in INIT", RC_SEND, QPN(L_RC_INIT), R(DROP_QP_STATE) },
	{ "SEND to an RC QP in ERR", RC_SEND, QPN(L_RC_ERR), R(DROP_QP_STATE) },
	{ "ACK to an RC QP in RTR", XHCA_OPC_RC | XHCA_OP_ACK, QPN(L_RC), R(DROP_QP_STATE) },
	{ "READ response to an RC QP in RTR", XHCA_OPC_RC | XHCA_OP_READ_RESP_ONLY, QPN(L_RC),
	  R(DROP_QP_STATE) },
	{ "ACK to an RC QP in RTS", XHCA_OPC_RC | XHCA_OP_ACK, QPN(L_RC_RTS), R(ACCEPT_DROP),
	  .want_epsn = EPSN0 },
	{ "ATOMIC ACK to an RC QP in RTS", XHCA_OPC_RC | XHCA_OP_ATOMIC_ACK, QPN(L_RC_RTS),
	  R(ACCEPT_DROP) },
	{ "READ response to an RC QP in RTS", XHCA_OPC_RC | XHCA_OP_READ_RESP_FIRST,
	  QPN(L_RC_RTS), R(ACCEPT_DROP) },
	{ "SEND to an RC QP in RTS", RC_SEND, QPN(L_RC_RTS), R(ACCEPT_DROP) },
	{ "SEND to an RC QP in SQD", RC_SEND, QPN(L_RC_SQD), R(ACCEPT_DROP) },
	/* addresses */
	{ "RC from another source address", RC_SEND, QPN(L_RC), R(DROP_ADDR), .src = "10.0.0.9" },
	{ "IPv6 SEND to an IPv4 QP", RC_SEND, QPN(L_RC), R(DROP_ADDR), .v6 = 1 },
	{ "IPv4 SEND to an IPv6 QP", RC_SEND, QPN(L_RC6), R(DROP_ADDR) },
	{ "UC from another source address", UC_SEND, QPN(L_UC), R(DROP_ADDR), .src = "10.0.0.9" },
	{ "UD from any source address", UD_SEND, QPN(L_UD), R(ACCEPT_DROP), .src = "10.0.0.9" },
	/* P_Key: same partition, not 0, at least one full member */
	{ "limited P_Key to a full-member QP", RC_SEND, QPN(L_RC), R(ACCEPT_DROP),
	  .pkey = 0x7fff },
	{ "full P_Key to a limited QP", RC_SEND, QPN(L_RC_LIM), R(ACCEPT_DROP), .pkey = 0x8123 },
	{ "limited P_Key to a limited QP", RC_SEND, QPN(L_RC_LIM), R(DROP_PKEY), .pkey = 0x0123 },
	{ "limited P_Key to a limited UD QP", UD_SEND, QPN(L_UD_LIM), R(DROP_PKEY),
	  .pkey = 0x0123 },
	{ "another partition", RC_SEND, QPN(L_RC), R(DROP_PKEY), .pkey = 0x8001 },
	{ "P_Key 0", RC_SEND, QPN(L_RC), R(DROP_PKEY), .pkey_zero = 1 },
	{ "P_Key 0x8000 (partition 0)", RC_SEND, QPN(L_RC_LIM), R(DROP_PKEY), .pkey = 0x8000 },
	{ "QP1: P_Key in the table (index 1, full 0x8123)", UD_SEND, XHCA_QPN_GSI,
	  R(ACCEPT_DROP), .pkey = 0x0123, .qkey = XHCA_GSI_QKEY },
	{ "QP1: P_Key not in the table", UD_SEND, XHCA_QPN_GSI, R(DROP_PKEY), .pkey = 0x8456,
	  .qkey = XHCA_GSI_QKEY },
	/* Q_Key */
	{ "UD wrong Q_Key", UD_SEND, QPN(L_UD), R(DROP_QKEY), .qkey = 0x22222222 },
	{ "QP1 with a Q_Key other than 0x80010000", UD_SEND, XHCA_QPN_GSI, R(DROP_QKEY) },
	{ "UD SEND with immediate", XHCA_OPC_UD | XHCA_OP_SEND_ONLY_IMM, QPN(L_UD),
	  R(ACCEPT_DROP) },
	/* RC PSN */
	{ "RC SEND at the expected PSN", RC_SEND, QPN(L_RC), R(ACCEPT_DROP),
	  .want_epsn = EPSN0 + 1 },
	{ "RC duplicate (ePSN - 1)", RC_SEND, QPN(L_RC), R(DROP_PSN_DUP), .psn = EPSN0 - 1,
	  .want_epsn = EPSN0 },
	{ "RC duplicate from before the 2^24 wrap", RC_SEND, QPN(L_RC), R(DROP_PSN_DUP),
	  .psn = 0xf00000, .want_epsn = EPSN0 },
	{ "RC PSN gap (ePSN + 1)", RC_SEND, QPN(L_RC), R(DROP_PSN_OOS), .psn = EPSN0 + 1,
	  .want_epsn = EPSN0 },
	{ "RC PSN far ahead", RC_SEND, QPN(L_RC), R(DROP_PSN_OOS), .psn = EPSN0 + 0x7fff00,
	  .want_epsn = EPSN0 },
	{ "RC WRITE ONLY with immediate", XHCA_OPC_RC | XHCA_OP_WRITE_ONLY_IMM, QPN(L_RC),
	  R(ACCEPT_DROP), .reth_len = 64, .payload_len = 64, .want_epsn = EPSN0 + 1 },
	{ "RC WRITE FIRST", XHCA_OPC_RC | XHCA_OP_WRITE_FIRST, QPN(L_RC), R(ACCEPT_DROP),
	  .reth_len = 4096, .payload_len = 1024, .want_epsn = EPSN0 + 1 },
	{ "RC READ request of 8 KiB at MTU 1024 costs 8 PSNs", XHCA_OPC_RC | XHCA_OP_READ_REQ,
	  QPN(L_RC), R(ACCEPT_DROP), .reth_len = 8192, .want_epsn = EPSN0 + 8 },
	{ "RC READ request of 8193 B costs 9 PSNs", XHCA_OPC_RC | XHCA_OP_READ_REQ, QPN(L_RC),
	  R(ACCEPT_DROP), .reth_len = 8193, .want_epsn = EPSN0 + 9 },
	{ "RC READ request of 0 B costs 1 PSN", XHCA_OPC_RC | XHCA_OP_READ_REQ, QPN(L_RC),
	  R(ACCEPT_DROP), .reth_len = 0, .want_epsn = EPSN0 + 1 },
	{ "RC READ request of 4 GiB - 1 B", XHCA_OPC_RC | XHCA_OP_READ_REQ, QPN(L_RC),
	  R(ACCEPT_DROP), .reth_len = 0xffffffff, .want_epsn = (EPSN0 + 0x400000) & 0xffffff },
	{ "RC CMP_SWAP", XHCA_OPC_RC | XHCA_OP_CMP_SWAP, QPN(L_RC), R(ACCEPT_DROP) },
	{ "RC FETCH_ADD", XHCA_OPC_RC | XHCA_OP_FETCH_ADD, QPN(L_RC), R(ACCEPT_DROP) },
	{ "RC SEND ONLY with invalidate", XHCA_OPC_RC | XHCA_OP_SEND_ONLY_INV, QPN(L_RC),
	  R(ACCEPT_DROP) },
	{ "RC duplicate on a QP in SQD", RC_SEND, QPN(L_RC_SQD), R(DROP_PSN_DUP),
	  .psn = EPSN0 - 5 },
	/* UC and UD: no duplicate check */
	{ "UC SEND ONLY at another PSN starts a message", UC_SEND, QPN(L_UC), R(ACCEPT_DROP),
	  .psn = 0x123, .want_epsn = 0x124 },
	{ "UC SEND MIDDLE after a gap", XHCA_OPC_UC | XHCA_OP_SEND_MIDDLE, QPN(L_UC),
	  R(DROP_UC_GAP), .psn = EPSN0 + 2, .want_epsn = EPSN0 },
	{ "UD SEND at any PSN", UD_SEND, QPN(L_UD), R(ACCEPT_DROP), .psn = 0x777 },
	/* action */
	{ "RC SEND to a QP with action pass", RC_SEND, QPN(L_RC_PASS), R(ACCEPT_PASS) },
	{ "action host, no socket on the flow queue: refused before the PSN", RC_SEND,
	  QPN(L_RC_HOST), R(DROP_NO_SOCKET), .want_epsn = EPSN0 },
	/* congestion notification */
	{ "CNP to an RC QP", XHCA_OP_CNP, QPN(L_RC), R(CNP), .want_epsn = EPSN0 },
	{ "CNP to a UD QP", XHCA_OP_CNP, QPN(L_UD), R(CNP) },
	/* encapsulations */
	{ "802.1Q tag", RC_SEND, QPN(L_RC), R(ACCEPT_DROP), .nvlan = 1 },
	{ "802.1ad + 802.1Q tags", RC_SEND, QPN(L_RC), R(ACCEPT_DROP), .nvlan = 2 },
	{ "IPv4 with 40 bytes of options", RC_SEND, QPN(L_RC), R(ACCEPT_DROP), .ip_opt_len = 40 },
	{ "QinQ and IPv4 options", XHCA_OPC_RC | XHCA_OP_WRITE_ONLY, QPN(L_RC), R(ACCEPT_DROP),
	  .nvlan = 2, .ip_opt_len = 12, .reth_len = 100, .payload_len = 100 },
	{ "IPv6 RC SEND", RC_SEND, QPN(L_RC6), R(ACCEPT_DROP), .v6 = 1 },
	{ "IPv6 UD SEND with a VLAN tag", UD_SEND, QPN(L_UD), R(ACCEPT_DROP), .v6 = 1,
	  .nvlan = 1 },
	{ "empty SEND padded to 60 bytes by Ethernet", RC_SEND, QPN(L_RC), R(ACCEPT_DROP),
	  .raw = RAW_ETH_PAD, .want_epsn = EPSN0 + 1 },
};

static int build_case(const struct rx_case *c, __u8 *f, __u32 *lenp, char *why)
{
	struct xhca_pkt_spec s;
	int len;

	xhca_pkt_spec_init(&s, c->opcode);
	s.dqpn = c->qpn;
	s.psn = c->psn ? c->psn : EPSN0;
	if (c->pkey)
		s.pkey = c->pkey;
	s.pkey_zero = c->pkey_zero;
	if (c->pkey_zero)
		s.pkey = 0;
	s.deth_qkey = c->qkey ? c->qkey : UD_QKEY;
	s.deth_sqp = 0x42;
	s.ipv6 = c->v6;
	addr(s.src_ip, c->v6, 0);
	addr(s.dst_ip, c->v6, 1);
	if (c->src)
		xhca_ip_parse(c->src, s.src_ip);
	s.nvlan = c->nvlan;
	s.vlan_tci[0] = 100;
	s.vlan_tci[1] = 200;
	s.ip_opt_len = c->ip_opt_len;
	s.tver = (__u8)c->tver;
	s.ipv6_hbh = c->ipv6_hbh;
	s.ip_proto = c->ip_proto;
	s.ipv6_nexthdr = c->ipv6_nexthdr;
	s.ethertype = c->ethertype;
	s.dport = c->dport;
	s.frag_off = c->frag_off;
	s.udp_len_delta = c->udp_len_delta;
	s.reth_len = c->reth_len;
	if (xhca_opinfo_tbl[c->opcode].flags & XHCA_O_PAYLOAD)
		s.payload_len = c->payload_len ? c->payload_len : 16;
	if (c->empty || c->raw == RAW_ETH_PAD)
		s.payload_len = 0;
	len = xhca_pkt_build(&s, f, XHCA_PKT_MAX);
	if (len < 0) {
		snprintf(why, WHY_LEN, "build: %s", strerror(-len));
		return -1;
	}
	switch (c->raw) {
	case RAW_NONE:
		break;
	case RAW_THREE_VLANS:
		memmove(f + 20, f + 16, (size_t)len - 16);
		f[16] = 0x81;
		f[17] = 0x00;
		f[18] = 0x01;
		f[19] = 0x2c;
		len += 4;
		break;
	case RAW_IHL4:
		f[14] = 0x44;
		break;
	case RAW_PAD_NO_ROOM:
		f[14 + 20 + 8 + 1] |= 3 << XHCA_BTH_PAD_SHIFT;
		break;
	case RAW_ETH_ONLY:
		len = 14;
		break;
	case RAW_IP_CSUM:
		f[14 + 10] ^= 1;
		break;
	case RAW_IP_OPT:
		f[14 + 20 + c->ip_opt_len - 1] ^= 0x10;
		break;
	case RAW_IP_OPT_FF:
		/* not ff ff ff ff: that one adds nothing to a ones' complement sum */
		memcpy(f + 14 + 20 + c->ip_opt_len - 4, "\xff\xff\xff\xfe", 4);
		ip4_csum_fix(f + 14);
		break;
	case RAW_IP_SHORT:
	case RAW_IP_LONG: {
		__u16 tl = (__u16)((f[16] << 8 | f[17]) + (c->raw == RAW_IP_LONG ? 4 : -4));

		f[16] = (__u8)(tl >> 8);
		f[17] = (__u8)tl;
		ip4_csum_fix(f + 14);
		break;
	}
	case RAW_IP6_SHORT: {
		__u16 pl = (__u16)((f[18] << 8 | f[19]) - 4);

		f[18] = (__u8)(pl >> 8);
		f[19] = (__u8)pl;
		break;
	}
	case RAW_ETH_PAD:
		if (len >= 60) {
			snprintf(why, WHY_LEN, "frame of %d bytes needs no padding", len);
			return -1;
		}
		memset(f + len, 0, (size_t)(60 - len));
		len = 60;
		break;
	}
	*lenp = (__u32)len;
	return 0;
}

static void run_table(void)
{
	static __u8 f[XHCA_PKT_MAX + 8];
	char why[WHY_LEN];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rx_case *c = &cases[i];
		__u32 len, lidx = lidx_of(c->qpn);
		struct xhca_qp_ctx ctx;
		int ok = 0;

		why[0] = 0;
		if (qps_reset()) {
			snprintf(why, WHY_LEN, "write QPs: %s", strerror(errno));
		} else if (!build_case(c, f, &len, why) && run(f, len, c->reason, lidx, why) >= 0) {
			ok = 1;
			if (c->want_epsn && lidx) {
				if (ctx_get(lidx, &ctx)) {
					ok = 0;
					snprintf(why, WHY_LEN, "read context");
				} else if (ctx.rx_psn != (__u32)c->want_epsn) {
					ok = 0;
					snprintf(why, WHY_LEN, "ePSN 0x%06x after, want 0x%06x",
						 ctx.rx_psn, (__u32)c->want_epsn);
				}
			}
		}
		if (ok)
			result(1, "%s: %s", c->name, rname[c->reason]);
		else
			result(0, "%s: %s (%s)", c->name, rname[c->reason], why);
	}
}

/* ---- the file ------------------------------------------------------------- */

/* xhca_rx loaded with TQ QPs, the flow queue socket on lo; as root only. */
static int setup(char *why)
{
	if (geteuid() != 0) {
		snprintf(why, UNIT_WHY_LEN, "BPF_PROG_TEST_RUN of xhca_rx needs root");
		return 1;
	}
	libbpf_set_print(quiet);
	if (env_open(why)) {
		char e[WHY_LEN];

		snprintf(e, sizeof(e), "%s", why);
		snprintf(why, UNIT_WHY_LEN, "load xhca_rx with %d QPs (%.200s)", TQ, e);
		return -1;
	}
	result(1, "load xhca_rx with %d QPs", TQ);
	if (xsk_on_lo(why))
		result(0, "an AF_XDP socket for flow queue %d (%s)", FQ_SOCK, why);
	return 0;
}

static void teardown(void)
{
	recv_maps_off();
	if (E.ctxm)
		xhca_qpctx_unmap(E.ctxm, TQ);
	E.ctxm = NULL;
	xhca__destroy(E.skel);
	E.skel = NULL;
	if (xsk_fd >= 0)
		close(xsk_fd);
	xsk_fd = -1;
}

/* The reasons the cases before it produced: every one of the enum, when
 * they all ran (alone, a case cannot tell). */
static void every_reason(void)
{
	char list[512] = "";
	int missing = 0;

	if (!unit_after_all()) {
		unit_skip("every reason of the enum has a case: only after every case of rx (-t 'rx/*')");
		return;
	}
	for (int r = 0; r < XHCA_R_MAX; r++) {
		if (E.hit[r])
			continue;
		missing++;
		snprintf(list + strlen(list), sizeof(list) - strlen(list), " %s", rname[r]);
	}
	if (missing)
		result(0, "every reason of the enum has a case (missing:%s)", list);
	else
		result(1, "every reason of the enum has a case (%d reasons)", XHCA_R_MAX);
}

static const struct unit_case rx_cases[] = {
	UNIT_RUN("table", run_table),
	UNIT_CHECK("seq_psn_wrap", seq_psn_wrap, "RC PSN across 2^24, READ cost across the wrap"),
	UNIT_CHECK("seq_multi_packet", seq_multi_packet,
		   "RC and UC multi-packet SEND and WRITE messages"),
	UNIT_CHECK("seq_uc_gap", seq_uc_gap,
		   "UC gap drops the rest of the message, next message resyncs"),
	UNIT_CHECK("seq_destroy_recreate", seq_destroy_recreate,
		   "destroy and re-create: CAM miss, stale generation, slot reuse"),
	UNIT_CHECK("seq_truncation", seq_truncation, "truncated at every byte of the headers"),
	UNIT_CHECK("seq_all_opcodes", seq_all_opcodes,
		   "all 256 opcodes: unknown dropped, known checked for length"),
	UNIT_CHECK("seq_sizing", seq_sizing, "QP maps sized at load time"),
	UNIT_CHECK("seq_torn_context", seq_torn_context,
		   "torn context (writer died mid-section): busy until rewritten"),
	UNIT_CHECK("seq_concurrent_writer", seq_concurrent_writer,
		   "configuration rewritten on another CPU: no packet sees a mix"),
	UNIT_CHECK("seq_concurrent_psn", seq_concurrent_psn,
		   "same PSNs from two CPUs: each accepted exactly once"),
	UNIT_CHECK("seq_flowq_meta", seq_flowq_meta,
		   "flow queue: metadata block in front, redirect to the socket"),
	UNIT_CHECK("seq_flowq_gate", seq_flowq_gate,
		   "flow queue: gate closes at high, opens at low, PSN untouched"),
	UNIT_CHECK("seq_flowq_no_meta_room", seq_flowq_no_meta_room,
		   "flow queue: no room for the metadata block"),
	UNIT_CHECK("seq_flowq_late_drop", seq_flowq_late_drop,
		   "flow queue: a WRITE LAST decided after its flow queue was asked, counted once"),
	UNIT_CHECK("seq_write_placed", seq_write_placed,
		   "WRITE into a pre-translated MR: placed exactly, across pages, multi-packet"),
	UNIT_CHECK("seq_write_placed_4k", seq_write_placed_4k,
		   "WRITE of 4 KiB: in XDP fragments, page-aligned and not; at every 1 KiB of a page"),
	UNIT_CHECK("seq_write_slow", seq_write_slow,
		   "WRITE into a fragmented MR: to the translation manager, nothing written"),
	UNIT_CHECK("seq_write_nocopy", seq_write_nocopy,
		   "WRITE without bpf_dynptr_copy: placed at 1 KiB offsets, else whole to xhcad"),
	UNIT_CHECK("seq_write_icrc_first", seq_write_icrc_first,
		   "WRITE of a QP under --icrc first: to xhcad, nothing placed here"),
	UNIT_CHECK("seq_write_errors", seq_write_errors,
		   "every R_Key and length failure: own reason, nothing written, RC QP to error"),
	UNIT_CHECK("seq_write_invalidated", seq_write_invalidated,
		   "MR deregistered mid-WRITE: the rest lands nowhere"),
	UNIT_CHECK("seq_write_no_block", seq_write_no_block,
		   "a region in a block of host memory that is not there: dropped, nothing written"),
	UNIT_CHECK("seq_recv_placed", seq_recv_placed,
		   "SEND ONLY placed by xhca_rx (--recv-fast): buffer, completion, indexes, ACK, wake"),
	UNIT_CHECK("seq_recv_ud", seq_recv_ud,
		   "UD SEND placed by xhca_rx: the GRH (IPv4, IPv6), the completion; else to xhcad"),
	UNIT_CHECK("seq_recv_fallback", seq_recv_fallback,
		   "SEND ONLY lacking any of what xhca_rx needs: to xhcad, nothing taken or written"),
	UNIT_CHECK("seq_recv_pend", seq_recv_pend,
		   "what xhca_rx counts in pend for xhcad to take back, and what it does not"),
	UNIT_CHECK("seq_recv_cached", seq_recv_cached,
		   "xhca_rx reads the application's RQ and CQ indexes only when its copies run out"),
	UNIT_CHECK("seq_recv_no_ts", seq_recv_no_ts,
		   "a CQ made with XHCA_CQF_NO_TS: xhca_rx writes its completion with time 0"),
	UNIT_CHECK("seq_recv_xdp_ack", seq_recv_xdp_ack,
		   "an RC SEND or WRITE placed by xhca_rx, its ACK due: the ACK made and sent back there"),
	UNIT_CHECK("seq_recv_xdp_ack_frames", seq_recv_xdp_ack_frames,
		   "ACKs made by xhca_rx keep VLAN tags; IPv4 options, frags, IPv6 leave it to xhcad"),
	UNIT_CHECK("seq_op_sequence", seq_op_sequence,
		   "opcode sequence: a SEND or WRITE in progress takes only its own MIDDLE/LAST"),
	UNIT_CHECK("seq_read_atomic", seq_read_atomic,
		   "READ and ATOMIC checked, then to the flow queue"),
	UNIT_CHECK("seq_ack_nak", seq_ack_nak,
		   "responder: duplicates, one sequence NAK per gap, ACKs due"),
	UNIT_CHECK("seq_proxy", seq_proxy, "proxy QP: filters, CSNs, load limit, WRITE records"),
	UNIT_CHECK("seq_mcast", seq_mcast,
		   "multicast: group checks, one copy to the replication queue, threshold"),
	UNIT_RUN("fuzz", rx_fuzz),
	UNIT_RUN("every_reason", every_reason),
};

UNIT_FILE(rx, setup, teardown, rx_cases);
