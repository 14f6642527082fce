/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Packet builder and ICRC: byte-exact against the vectors in
 * research/icrc_vectors.py, header placement for every header kind, and the
 * error paths. No BPF needed; runs anywhere.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <xhca/pkt.h>
#include <xhca/wire.h>
#include "tests.h"

#define WHY_LEN 160
#define ETH 14
#define BTH_V4 (ETH + 20 + 8)	/* BTH offset in an untagged IPv4 frame */

static uint8_t frame[XHCA_PKT_MAX];

static uint32_t be(const uint8_t *p, int n)
{
	uint32_t v = 0;

	while (n--)
		v = v << 8 | *p++;
	return v;
}

static uint64_t be64(const uint8_t *p)
{
	return (uint64_t)be(p, 4) << 32 | be(p + 4, 4);
}

static int unhex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = 0;
	unsigned int b;

	while (hex[0] && hex[1] && n < max && sscanf(hex, "%2x", &b) == 1) {
		out[n++] = (uint8_t)b;
		hex += 2;
	}
	return (int)n;
}

static int ip_csum_ok(const uint8_t *ip, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i < len; i += 2)
		sum += be(ip + i, 2);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/* Builds s into frame[]; fails the case on an error. */
#define BUILD(s, lenvar)                                                         \
	do {                                                                     \
		lenvar = xhca_pkt_build(s, frame, sizeof(frame));                \
		CHECK(lenvar > 0, "build: %d", lenvar);                          \
		CHECK(xhca_pkt_len(s) == lenvar, "pkt_len %d != build %d",       \
		      xhca_pkt_len(s), lenvar);                                  \
	} while (0)

/* ---- ICRC vectors (research/icrc_vectors.py output, IP packet hex) ---- */

struct vec {
	const char *name;
	const char *hex;
};

static const struct vec vecs[] = {
	{ "V1", "45000030123440004011a535c0a80101c0a80102c0de12b7001c00000400ffff00000011"
		"80000000616263643ffbf7c2" },
	{ "V1b", "45b80030123440000311e17dc0a80101c0a80102c0de12b7001c00000400ffffc0000011"
		 "80000000616263643ffbf7c2" },
	{ "V2", "45000030123440004011a535c0a80101c0a80102c0de12b7001c00000410ffff00000011"
		"8000000578797a00ddb3c8a2" },
	{ "V3", "4500003c123440004011a529c0a80101c0a80102c0de12b7002800006400ffff00000012"
		"00000007111111110000001301010101010101013f2a9cb0" },
	{ "V4", "45000030123440004011a535c0a80101c0a80102c0de12b7001c00001100ffff00000011"
		"000000001f0000013ff809be" },
	{ "V5", "60000000001c1140fe800000000000000000000000000001fe80000000000000000000000000"
		"0002c0de12b7001c00000400ffff0000001180000000616263643b788143" },
	{ "V5b", "6a012345001c1101fe800000000000000000000000000001fe8000000000000000000000000"
		 "00002c0de12b7001c00000400ffff0000001180000000616263643b788143" },
};

static void vec_spec(struct xhca_pkt_spec *s, const char *name)
{
	xhca_pkt_spec_init(s, XHCA_OPC_RC | XHCA_OP_SEND_ONLY);
	xhca_ip_parse("192.168.1.1", s->src_ip);
	xhca_ip_parse("192.168.1.2", s->dst_ip);
	s->ip_id = 0x1234;
	s->sport = 0xc0de;
	s->dqpn = 0x11;
	s->ackreq = 1;
	s->payload = "abcd";
	s->payload_len = 4;
	if (!strcmp(name, "V1b")) {
		s->tos = 0xb8;
		s->ttl = 3;
		s->fecn = s->becn = 1;
	} else if (!strcmp(name, "V2")) {
		s->psn = 5;
		s->payload = "xyz";
		s->payload_len = 3;
	} else if (!strcmp(name, "V3")) {
		s->opcode = XHCA_OPC_UD | XHCA_OP_SEND_ONLY;
		s->dqpn = 0x12;
		s->psn = 7;
		s->ackreq = 0;
		s->deth_qkey = 0x11111111;
		s->deth_sqp = 0x13;
		s->payload = "\x01\x01\x01\x01\x01\x01\x01\x01";
		s->payload_len = 8;
	} else if (!strcmp(name, "V4")) {
		s->opcode = XHCA_OPC_RC | XHCA_OP_ACK;
		s->ackreq = 0;
		s->aeth_syndrome = 0x1f;
		s->aeth_msn = 1;
		s->payload_len = 0;
	} else if (!strncmp(name, "V5", 2)) {
		s->ipv6 = 1;
		xhca_ip_parse("fe80::1", s->src_ip);
		xhca_ip_parse("fe80::2", s->dst_ip);
		if (!strcmp(name, "V5b")) {
			s->tos = 0xa0;
			s->flow_label = 0x12345;
			s->ttl = 1;
		}
	}
}

static int run_vec(const struct vec *v, char *why)
{
	struct xhca_pkt_spec s;
	uint8_t want[256];
	int n, len;

	vec_spec(&s, v->name);
	n = unhex(v->hex, want, sizeof(want));
	BUILD(&s, len);
	CHECK(len == ETH + n, "frame length %d, want %d", len, ETH + n);
	for (int i = 0; i < n; i++)
		CHECK(frame[ETH + i] == want[i], "IP byte %d: 0x%02x, want 0x%02x", i,
		      frame[ETH + i], want[i]);
	CHECK(xhca_icrc_check_frame(frame, (size_t)len) == 0, "icrc_check_frame rejects it");
	return 0;
}

/* ---- header placement ---- */

static int case_write_only_imm(char *why)
{
	struct xhca_pkt_spec s;
	const uint8_t *b = frame + BTH_V4;
	int len;

	xhca_pkt_spec_init(&s, XHCA_OPC_RC | XHCA_OP_WRITE_ONLY_IMM);
	s.reth_va = 0x1122334455667788ull;
	s.reth_rkey = 0xaabbccdd;
	s.reth_len = 8;
	s.imm = 0xdeadbeef;
	s.payload_len = 8;
	BUILD(&s, len);
	CHECK(len == BTH_V4 + 32 + 8 + 4, "length %d", len);
	CHECK(b[0] == 0x0b, "opcode 0x%02x", b[0]);
	CHECK(be64(b + 12) == 0x1122334455667788ull, "RETH VA at 12");
	CHECK(be(b + 20, 4) == 0xaabbccdd && be(b + 24, 4) == 8, "RETH rkey/len at 20/24");
	CHECK(be(b + 28, 4) == 0xdeadbeef, "ImmDt at 28: 0x%08x", be(b + 28, 4));
	CHECK(b[32] == 0 && b[39] == 7, "pattern payload at 32");
	return 0;
}

static int case_ud_send_only_imm(char *why)
{
	struct xhca_pkt_spec s;
	const uint8_t *b = frame + BTH_V4;
	int len;

	xhca_pkt_spec_init(&s, XHCA_OPC_UD | XHCA_OP_SEND_ONLY_IMM);
	s.deth_qkey = 0x80010000;
	s.deth_sqp = 0xabcdef;
	s.imm = 0x01020304;
	s.payload_len = 4;
	BUILD(&s, len);
	CHECK(len == BTH_V4 + 24 + 4 + 4, "length %d", len);
	CHECK(be(b + 12, 4) == 0x80010000, "DETH Q_Key at 12");
	CHECK(be(b + 16, 4) == 0xabcdef, "DETH SrcQP at 16: 0x%08x", be(b + 16, 4));
	CHECK(be(b + 20, 4) == 0x01020304, "ImmDt at 20");
	return 0;
}

static int case_atomiceth(char *why)
{
	struct xhca_pkt_spec s;
	const uint8_t *b = frame + BTH_V4;
	int len;

	xhca_pkt_spec_init(&s, XHCA_OPC_RC | XHCA_OP_CMP_SWAP);
	s.atomic_va = 0x1000;
	s.atomic_rkey = 0x42;
	s.atomic_swap = 0x0102030405060708ull;
	s.atomic_cmp = 0x1112131415161718ull;
	BUILD(&s, len);
	CHECK(len == BTH_V4 + 40 + 4, "length %d", len);
	CHECK(be64(b + 12) == 0x1000 && be(b + 20, 4) == 0x42, "VA/R_Key at 12/20");
	CHECK(be64(b + 24) == 0x0102030405060708ull, "Swap at 24");
	CHECK(be64(b + 32) == 0x1112131415161718ull, "Compare at 32");
	return 0;
}

static int case_atomic_ack(char *why)
{
	struct xhca_pkt_spec s;
	const uint8_t *b = frame + BTH_V4;
	int len;

	xhca_pkt_spec_init(&s, XHCA_OPC_RC | XHCA_OP_ATOMIC_ACK);
	s.aeth_syndrome = 0x1f;
	s.aeth_msn = 0x123456;
	s.atomic_orig = 0xcafef00d12345678ull;
	BUILD(&s, len);
	CHECK(len == BTH_V4 + 24 + 4, "length %d", len);
	CHECK(be(b + 12, 4) == 0x1f123456, "AETH at 12: 0x%08x", be(b + 12, 4));
	CHECK(be64(b + 16) == 0xcafef00d12345678ull, "AtomicAckETH at 16");
	return 0;
}

static int case_ieth(char *why)
{
	struct xhca_pkt_spec s;
	const uint8_t *b = frame + BTH_V4;
	int len;

	xhca_pkt_spec_init(&s, XHCA_OPC_RC | XHCA_OP_SEND_ONLY_INV);
	s.ieth_rkey = 0x7788;
	s.payload_len = 16;
	BUILD(&s, len);
	CHECK(len == BTH_V4 + 16 + 16 + 4, "length %d", len);
	CHECK(be(b + 12, 4) == 0x7788, "IETH at 12");
	CHECK(b[16] == 0 && b[31] == 15, "payload at 16");
	return 0;
}

static int case_flush(char *why)
{
	struct xhca_pkt_spec s;
	const uint8_t *b = frame + BTH_V4;
	int len;

	xhca_pkt_spec_init(&s, XHCA_OPC_RC | XHCA_OP_FLUSH);
	s.feth = 0x11;	/* SEL 1, PLT 1 */
	s.reth_va = 0x2000;
	s.reth_rkey = 0x99;
	s.reth_len = 64;
	BUILD(&s, len);
	CHECK(len == BTH_V4 + 32 + 4, "length %d", len);
	CHECK(be(b + 12, 4) == 0x11, "FETH at 12: 0x%08x", be(b + 12, 4));
	CHECK(xhca_reth_off(xhca_opinfo_tbl[XHCA_OP_FLUSH].flags) == 16, "xhca_reth_off");
	CHECK(be64(b + 16) == 0x2000 && be(b + 24, 4) == 0x99 && be(b + 28, 4) == 64,
	      "RETH at 16");
	return 0;
}

static int case_cnp(char *why)
{
	struct xhca_pkt_spec s;
	const uint8_t *b = frame + BTH_V4;
	int len;

	xhca_pkt_spec_init(&s, XHCA_OP_CNP);
	s.becn = 1;
	s.dqpn = 0x33;
	BUILD(&s, len);
	CHECK(len == BTH_V4 + 12 + 16 + 4, "length %d", len);
	CHECK(b[0] == 0x81 && (b[1] & XHCA_BTH_PAD_MASK) == 0, "BTH opcode/pad");
	for (int i = 12; i < 28; i++)
		CHECK(b[i] == 0, "reserved byte %d not zero", i);
	CHECK(xhca_icrc_check_frame(frame, (size_t)len) == 0, "ICRC");
	return 0;
}

/* Every opcode the table knows: the payload starts at hdr_len, the frame has
 * the expected length and a valid ICRC. Unknown opcodes get a bare BTH. */
static int case_all_opcodes(char *why)
{
	struct xhca_pkt_spec s;
	int len;

	for (int op = 0; op < 256; op++) {
		const struct xhca_opinfo *oi = &xhca_opinfo_tbl[op];
		int hl = (oi->flags & XHCA_O_KNOWN) ? oi->hdr_len : 12;

		xhca_pkt_spec_init(&s, (uint8_t)op);
		s.payload_len = 5;
		BUILD(&s, len);
		CHECK(len == BTH_V4 + hl + 5 + 3 + 4, "opcode 0x%02x: length %d", op, len);
		CHECK(frame[BTH_V4 + hl] == 0 && frame[BTH_V4 + hl + 4] == 4,
		      "opcode 0x%02x: payload not at %d", op, hl);
		CHECK(xhca_icrc_check_frame(frame, (size_t)len) == 0, "opcode 0x%02x: ICRC", op);
	}
	return 0;
}

/* ---- L2/L3 variants ---- */

static int case_vlan(char *why)
{
	struct xhca_pkt_spec s;
	int len;

	xhca_pkt_spec_init(&s, XHCA_OPC_RC | XHCA_OP_SEND_ONLY);
	s.nvlan = 1;
	s.vlan_tci[0] = 0x2064;
	s.payload_len = 4;
	BUILD(&s, len);
	CHECK(len == BTH_V4 + 4 + 12 + 4 + 4, "length %d", len);
	CHECK(be(frame + 12, 2) == 0x8100 && be(frame + 14, 2) == 0x2064, "tag");
	CHECK(be(frame + 16, 2) == 0x0800 && frame[18] == 0x45, "ethertype/IP after the tag");
	CHECK(xhca_icrc_check_frame(frame, (size_t)len) == 0, "ICRC");
	return 0;
}

static int case_qinq(char *why)
{
	struct xhca_pkt_spec s;
	int len;

	xhca_pkt_spec_init(&s, XHCA_OPC_RC | XHCA_OP_SEND_ONLY);
	s.nvlan = 2;
	s.vlan_tci[0] = 100;
	s.vlan_tci[1] = 200;
	s.ipv6 = 1;
	xhca_ip_parse("fd00::1", s.src_ip);
	xhca_ip_parse("fd00::2", s.dst_ip);
	BUILD(&s, len);
	CHECK(be(frame + 12, 2) == 0x88a8 && be(frame + 14, 2) == 100, "outer tag");
	CHECK(be(frame + 16, 2) == 0x8100 && be(frame + 18, 2) == 200, "inner tag");
	CHECK(be(frame + 20, 2) == 0x86dd && (frame[22] >> 4) == 6, "ethertype/IPv6");
	CHECK(xhca_icrc_check_frame(frame, (size_t)len) == 0, "ICRC");

	s.vlan_tpid[0] = 0x9100;
	s.vlan_tpid[1] = 0x88a8;
	BUILD(&s, len);
	CHECK(be(frame + 12, 2) == 0x9100 && be(frame + 16, 2) == 0x88a8, "explicit TPIDs");
	return 0;
}

static int case_ipv6_ext(char *why)
{
	static const uint8_t types[] = { 0, 60, 43 };
	struct xhca_pkt_spec s;
	int len;

	for (size_t i = 0; i < sizeof(types); i++) {
		const uint8_t *ip = frame + ETH, *udp = ip + 48;

		xhca_pkt_spec_init(&s, XHCA_OPC_RC | XHCA_OP_SEND_ONLY);
		s.ipv6 = 1;
		/* ipv6_nexthdr 0 means "none": hop-by-hop has its own flag. */
		s.ipv6_hbh = types[i] == 0;
		s.ipv6_nexthdr = types[i];
		xhca_ip_parse("fd00::1", s.src_ip);
		xhca_ip_parse("fd00::2", s.dst_ip);
		s.payload_len = 8;
		BUILD(&s, len);
		CHECK(len == ETH + 48 + 8 + 12 + 8 + 4, "type %u: length %d", types[i], len);
		CHECK(ip[6] == types[i] && ip[40] == 17 && ip[41] == 0, "type %u: chain",
		      types[i]);
		CHECK(types[i] == 43 || (ip[42] == 1 && ip[43] == 4), "type %u: PadN option",
		      types[i]);
		CHECK(be(ip + 4, 2) == 8 + 8 + 12 + 8 + 4, "type %u: payload length", types[i]);
		CHECK(be(udp + 2, 2) == 4791 && be(udp + 4, 2) == 8 + 12 + 8 + 4,
		      "type %u: UDP header at 48", types[i]);
		CHECK(xhca_icrc_check_frame(frame, (size_t)len) == 0, "type %u: ICRC", types[i]);
	}

	/* Hop-by-hop first, then destination options. */
	s.ipv6_hbh = 1;
	s.ipv6_nexthdr = 60;
	BUILD(&s, len);
	CHECK(len == ETH + 56 + 8 + 12 + 8 + 4, "HBH + dest opts: length %d", len);
	CHECK(frame[ETH + 6] == 0 && frame[ETH + 40] == 60 && frame[ETH + 48] == 17,
	      "HBH + dest opts: chain");
	CHECK(xhca_icrc_check_frame(frame, (size_t)len) == 0, "HBH + dest opts: ICRC");
	return 0;
}

static int case_ipv4_options(char *why)
{
	struct xhca_pkt_spec s;
	const uint8_t *ip = frame + ETH;
	int len;

	xhca_pkt_spec_init(&s, XHCA_OPC_RC | XHCA_OP_SEND_ONLY);
	s.ip_opt_len = 8;
	s.payload_len = 4;
	BUILD(&s, len);
	CHECK(len == BTH_V4 + 8 + 12 + 4 + 4, "length %d", len);
	CHECK(ip[0] == 0x47, "IHL byte 0x%02x", ip[0]);
	CHECK(be(ip + 2, 2) == (uint32_t)(len - ETH), "total length");
	CHECK(ip_csum_ok(ip, 28), "header checksum over the options");
	for (int i = 20; i < 28; i++)
		CHECK(ip[i] == 0x01, "option byte %d not NOP", i);
	CHECK(be(ip + 28 + 2, 2) == 4791, "UDP after the options");
	CHECK(xhca_icrc_check_frame(frame, (size_t)len) == 0, "ICRC");
	return 0;
}

static int case_ipv4_fields(char *why)
{
	struct xhca_pkt_spec s;
	const uint8_t *ip = frame + ETH, *b = frame + BTH_V4;
	int len;

	xhca_pkt_spec_init(&s, XHCA_OPC_UC | XHCA_OP_SEND_ONLY);
	s.pkey = 0;	/* means the default */
	s.dport = 0;
	s.sport = 0;
	s.ttl = 0;
	s.psn = 0xffffff;
	s.dqpn = 0xffffff;
	s.se = s.mig = 1;
	s.tver = 1;
	BUILD(&s, len);
	CHECK(ip_csum_ok(ip, 20), "header checksum");
	CHECK(be(ip + 6, 2) == 0x4000 && ip[8] == 64 && ip[9] == 17, "DF/TTL/proto");
	CHECK(be(ip + 20, 2) == 0xc000 && be(ip + 22, 2) == 4791 && be(ip + 26, 2) == 0,
	      "UDP ports/checksum");
	CHECK(b[1] == 0xc1 && be(b + 2, 2) == 0xffff, "BTH flags 0x%02x / P_Key", b[1]);
	CHECK(be(b + 4, 4) == 0xffffff && be(b + 8, 4) == 0xffffff, "QPN/PSN");

	s.pkey_zero = 1;
	s.udp_len_delta = -3;
	BUILD(&s, len);
	CHECK(be(b + 2, 2) == 0, "pkey_zero");
	CHECK(be(ip + 24, 2) == (uint32_t)(len - ETH - 20 - 3), "udp_len_delta");
	CHECK(be(ip + 2, 2) == (uint32_t)(len - ETH), "IP length unaffected by udp_len_delta");
	return 0;
}

static int case_pad(char *why)
{
	struct xhca_pkt_spec s;
	int len;

	for (uint32_t want = 0; want < 4; want++) {
		xhca_pkt_spec_init(&s, XHCA_OPC_RC | XHCA_OP_SEND_ONLY);
		s.payload_len = 4 + ((4 - want) & 3);	/* 4, 7, 6, 5 */
		memset(frame, 0xee, sizeof(frame));
		BUILD(&s, len);
		CHECK((uint32_t)((frame[BTH_V4 + 1] & XHCA_BTH_PAD_MASK) >> 4) == want,
		      "payload %u: PadCnt %u", s.payload_len, frame[BTH_V4 + 1] >> 4 & 3);
		CHECK(len == BTH_V4 + 12 + (int)(s.payload_len + want) + 4, "payload %u: length",
		      s.payload_len);
		for (uint32_t i = 0; i < want; i++)
			CHECK(frame[BTH_V4 + 12 + s.payload_len + i] == 0, "pad byte not zero");
	}
	/* Forced PadCnt: that many pad bytes follow the payload. */
	xhca_pkt_spec_init(&s, XHCA_OPC_RC | XHCA_OP_SEND_ONLY);
	s.payload_len = 8;
	s.pad = 3;
	BUILD(&s, len);
	CHECK((frame[BTH_V4 + 1] & XHCA_BTH_PAD_MASK) == 0x30, "forced PadCnt");
	CHECK(len == BTH_V4 + 12 + 8 + 3 + 4, "forced pad: length %d", len);
	CHECK(xhca_icrc_check_frame(frame, (size_t)len) == 0, "forced pad: ICRC");
	return 0;
}

/* ---- names, parsing ---- */

/* A message's opcodes from its ONLY opcode, with or without class bits. */
static int case_msg_opcode(char *why)
{
	static const struct {
		uint8_t only;
		uint64_t i, n;
		uint8_t want;
	} t[] = {
		{ XHCA_OP_SEND_ONLY, 0, 1, XHCA_OP_SEND_ONLY },
		{ XHCA_OP_SEND_ONLY_IMM, 0, 3, XHCA_OP_SEND_FIRST },
		{ XHCA_OP_SEND_ONLY_IMM, 1, 3, XHCA_OP_SEND_MIDDLE },
		{ XHCA_OP_SEND_ONLY_IMM, 2, 3, XHCA_OP_SEND_LAST_IMM },
		{ XHCA_OP_SEND_ONLY_INV, 1, 2, XHCA_OP_SEND_LAST_INV },
		{ XHCA_OP_SEND_ONLY, 1, 2, XHCA_OP_SEND_LAST },
		{ XHCA_OP_WRITE_ONLY, 0, 2, XHCA_OP_WRITE_FIRST },
		{ XHCA_OP_WRITE_ONLY, 1, 2, XHCA_OP_WRITE_LAST },
		{ XHCA_OP_WRITE_ONLY_IMM, 1, 3, XHCA_OP_WRITE_MIDDLE },
		{ XHCA_OP_WRITE_ONLY_IMM, 2, 3, XHCA_OP_WRITE_LAST_IMM },
		{ XHCA_OPC_UC | XHCA_OP_WRITE_ONLY_IMM, 0, 2, XHCA_OPC_UC | XHCA_OP_WRITE_FIRST },
		{ XHCA_OPC_UD | XHCA_OP_SEND_ONLY, 0, 1, XHCA_OPC_UD | XHCA_OP_SEND_ONLY },
	};

	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		uint8_t got = xhca_msg_opcode(t[k].only, t[k].i, t[k].n);

		if (got != t[k].want)
			return snprintf(why, WHY_LEN, "0x%02x packet %llu of %llu: 0x%02x, want 0x%02x",
					t[k].only, (unsigned long long)t[k].i,
					(unsigned long long)t[k].n, got, t[k].want), -1;
	}
	return 0;
}

static int case_opcode_names(char *why)
{
	static const struct {
		const char *s;
		int op;
	} parses[] = {
		{ "rc-send-only", 0x04 }, { "RC_SEND_ONLY", 0x04 }, { "0x04", 0x04 },
		{ "4", 0x04 }, { "ud-send-only-imm", 0x65 }, { "cnp", 0x81 },
		{ "uc-write-only", 0x2a }, { "255", 0xff }, { "0x100", -EINVAL },
		{ "rc-send", -EINVAL }, { "", -EINVAL }, { "4x", -EINVAL },
		{ "UNKNOWN", -EINVAL },
	};
	int named = 0;
	uint8_t op;

	for (int i = 0; i < 256; i++) {
		const char *n = xhca_opcode_name((uint8_t)i);
		int known = !!(xhca_opinfo_tbl[i].flags & XHCA_O_KNOWN);

		CHECK(known == !!strcmp(n, "UNKNOWN"), "opcode 0x%02x: name %s", i, n);
		if (!known)
			continue;
		named++;
		CHECK(xhca_opcode_parse(n, &op) == 0 && op == i, "round trip of %s", n);
	}
	CHECK(named == 40, "%d named opcodes, want 40", named);
	CHECK(!strcmp(xhca_opcode_name(0x0b), "RC_WRITE_ONLY_IMM"), "name of 0x0b");
	for (size_t i = 0; i < sizeof(parses) / sizeof(parses[0]); i++) {
		int r = xhca_opcode_parse(parses[i].s, &op);

		if (parses[i].op < 0)
			CHECK(r == parses[i].op, "parse \"%s\": %d", parses[i].s, r);
		else
			CHECK(r == 0 && op == parses[i].op, "parse \"%s\": %d, 0x%02x",
			      parses[i].s, r, op);
	}
	return 0;
}

static int case_ip_parse(char *why)
{
	static const uint8_t v4[16] = { [10] = 0xff, [11] = 0xff, 10, 1, 2, 3 };
	uint8_t a[16];
	char buf[64];

	CHECK(xhca_ip_parse("10.1.2.3", a) == 4 && !memcmp(a, v4, 16), "v4 mapped");
	CHECK(!strcmp(xhca_ip_str(a, buf, sizeof(buf)), "10.1.2.3"), "v4 str %s", buf);
	CHECK(xhca_ip_parse("fe80::1", a) == 6 && a[0] == 0xfe && a[15] == 1, "v6");
	CHECK(!strcmp(xhca_ip_str(a, buf, sizeof(buf)), "fe80::1"), "v6 str %s", buf);
	CHECK(xhca_ip_parse("10.1.2", a) == -EINVAL, "bad v4");
	CHECK(xhca_ip_parse("fe80:::1", a) == -EINVAL, "bad v6");
	return 0;
}

/* ---- error paths ---- */

static int case_bad_spec(char *why)
{
	struct xhca_pkt_spec s;
	int r;

#define BAD(field_change)                                                          \
	do {                                                                       \
		xhca_pkt_spec_init(&s, XHCA_OPC_RC | XHCA_OP_SEND_ONLY);           \
		field_change;                                                      \
		r = xhca_pkt_build(&s, frame, sizeof(frame));                      \
		CHECK(r == -EINVAL, "%s: build %d", #field_change, r);            \
		CHECK(xhca_pkt_len(&s) == -EINVAL, "%s: pkt_len", #field_change); \
	} while (0)

	BAD(s.nvlan = 3);
	BAD(s.nvlan = -1);
	BAD(s.pad = 4);
	BAD(s.pad = -2);
	BAD(s.tver = 16);
	BAD(s.dqpn = 0x1000000);
	BAD(s.psn = 0x1000000);
	BAD(s.ip_opt_len = 6);
	BAD(s.ip_opt_len = 44);
	BAD((s.ipv6 = 1, s.ip_opt_len = 4));
	BAD(s.ipv6_nexthdr = 60);
	BAD(s.ipv6_hbh = 1);
	BAD((s.ipv6 = 1, s.flow_label = 0x100000));
	BAD(s.payload_len = XHCA_PKT_MAX);
	BAD(s.udp_len_delta = -100);
#undef BAD
	return 0;
}

static int case_small_buffer(char *why)
{
	struct xhca_pkt_spec s;
	int len, r;

	xhca_pkt_spec_init(&s, XHCA_OPC_RC | XHCA_OP_SEND_ONLY);
	s.payload_len = 100;
	len = xhca_pkt_len(&s);
	CHECK(len == BTH_V4 + 12 + 100 + 4, "pkt_len %d", len);
	r = xhca_pkt_build(&s, frame, (size_t)len - 1);
	CHECK(r == -ENOSPC, "one byte short: %d", r);
	r = xhca_pkt_build(&s, frame, (size_t)len);
	CHECK(r == len, "exact size: %d", r);
	return 0;
}

static int case_icrc_check(char *why)
{
	struct xhca_pkt_spec s;
	int len, r;

	xhca_pkt_spec_init(&s, XHCA_OPC_RC | XHCA_OP_SEND_ONLY);
	s.payload_len = 3;
	BUILD(&s, len);
	CHECK(xhca_icrc_check_frame(frame, (size_t)len) == 0, "good frame");

	/* Ethernet pads short frames to 60 bytes: the IP length rules. */
	memset(frame + len, 0, 8);
	CHECK(xhca_icrc_check_frame(frame, (size_t)len + 8) == 0, "frame with trailer");

	/* Variant fields are masked out of the ICRC. */
	frame[ETH + 8] ^= 0x20;				/* TTL */
	frame[BTH_V4 + 4] |= 0xc0;			/* FECN, BECN */
	CHECK(xhca_icrc_check_frame(frame, (size_t)len) == 0, "variant fields changed");

	for (int off = ETH + 4; off < len; off++) {
		if (off == ETH + 8 || off == ETH + 10 || off == ETH + 11 || off == ETH + 26 ||
		    off == ETH + 27 || off == BTH_V4 + 4)
			continue;	/* TTL, checksums and BTH byte 4 are masked */
		frame[off] ^= 0x01;
		r = xhca_icrc_check_frame(frame, (size_t)len);
		frame[off] ^= 0x01;
		CHECK(r == -EBADMSG || (r == -EINVAL && off < BTH_V4), "bit flip at %d: %d",
		      off, r);
	}

	s.bad_icrc = 1;
	BUILD(&s, len);
	CHECK(xhca_icrc_check_frame(frame, (size_t)len) == -EBADMSG, "bad_icrc");
	s.bad_icrc = 0;
	s.dport = 4792;
	BUILD(&s, len);
	CHECK(xhca_icrc_check_frame(frame, (size_t)len) == -EINVAL, "not RoCEv2");
	CHECK(xhca_icrc_check_frame(frame, 30) == -EINVAL, "truncated");
	return 0;
}

/* The userspace parser and builder with hostile input: mutated and random
 * frames into xhca_icrc_check_frame (each in a heap buffer of exactly its
 * length: a read past it is a sanitizer report), random specs into
 * xhca_pkt_build with a buffer of random size (a write past it is one too),
 * random strings into the address and opcode parsers. Only the documented
 * results may come back. */
static uint64_t fz = 0x9e3779b97f4a7c15ull;

static uint32_t fz_next(uint32_t n)
{
	fz ^= fz << 13;
	fz ^= fz >> 7;
	fz ^= fz << 17;
	return n ? (uint32_t)(fz % n) : 0;
}

static int case_fuzz(char *why)
{
	static const char alphabet[] = "0123456789abcdefABCDEF.:x-_%/ rcudsendonlywrite";
	uint8_t ip[16];
	char str[48], back[64];

	for (int i = 0; i < 200000; i++) {
		struct xhca_pkt_spec s;
		size_t cap = fz_next(XHCA_PKT_MAX + 64);
		uint8_t *buf = malloc(cap ? cap : 1), op;
		int len, r;

		if (!buf)
			return snprintf(why, WHY_LEN, "malloc"), -1;
		xhca_pkt_spec_init(&s, (uint8_t)fz_next(256));
		s.payload_len = fz_next(4) ? fz_next(5000) : (uint32_t)fz;
		s.nvlan = (int)fz_next(4) - 1;
		s.ipv6 = (int)fz_next(2);
		s.ip_opt_len = (int)fz_next(48) - 4;
		s.ipv6_nexthdr = fz_next(4) ? 0 : (uint8_t)fz_next(256);
		s.udp_len_delta = (int)fz_next(200) - 100;
		s.pad = (int)fz_next(6) - 1;
		len = xhca_pkt_build(&s, buf, cap);
		if (len > (int)cap || (len < 0 && len != -EINVAL && len != -ENOSPC)) {
			free(buf);
			return snprintf(why, WHY_LEN, "build: %d into %zu bytes", len, cap), -1;
		}
		if (len > 0) {
			/* then mutated, into the parser at exactly its length */
			for (uint32_t k = fz_next(5); k; k--)
				buf[fz_next((uint32_t)len)] ^= (uint8_t)(1u << fz_next(8));
			if (fz_next(4) == 0)
				len = (int)fz_next((uint32_t)len + 1);
			r = xhca_icrc_check_frame(buf, (size_t)len);
			if (r != 0 && r != -EBADMSG && r != -EINVAL) {
				free(buf);
				return snprintf(why, WHY_LEN, "icrc_check_frame: %d", r), -1;
			}
		}
		free(buf);
		/* strings */
		for (size_t k = 0, n = fz_next(sizeof(str)); k <= n; k++)
			str[k] = k == n ? 0 : alphabet[fz_next(sizeof(alphabet) - 1)];
		r = xhca_ip_parse(str, ip);
		if (r != 4 && r != 6 && r != -EINVAL)
			return snprintf(why, WHY_LEN, "ip_parse(%s): %d", str, r), -1;
		if (r > 0 && (!xhca_ip_str(ip, back, sizeof(back)) || xhca_ip_parse(back, ip) != r))
			return snprintf(why, WHY_LEN, "ip_parse(%s) does not print back", str), -1;
		r = xhca_opcode_parse(str, &op);
		if (r != 0 && r != -EINVAL)
			return snprintf(why, WHY_LEN, "opcode_parse(%s): %d", str, r), -1;
	}
	return 0;
}

/* The ICRC's CRC-32 against zlib's, by each implementation this CPU has:
 * every length from 0 to 600 and random ones to 9000 at random offsets
 * (the 256-, 128- and 64-byte folds, the 16-byte ones, the tails) and
 * random starting values. */
static void crc32_impls(void)
{
	static const char *const names[] = { "sliced by 8", "PCLMULQDQ", "VPCLMULQDQ on 256 bits",
					     "VPCLMULQDQ on 512 bits" };
	static uint8_t b[9100];
	unsigned int seed = 7;
	int best = xhca_crc32_impl(-1);

	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)rand_r(&seed);
	for (int impl = XHCA_CRC_SLICE8; impl <= XHCA_CRC_CLMUL512; impl++) {
		int bad = 0, t;

		if (impl > best) {
			unit_skip("CRC-32 %s: this CPU has not got it", names[impl]);
			continue;
		}
		xhca_crc32_impl(impl);
		for (t = 0; t < 20000 && !bad; t++) {
			size_t n = t < 600 ? (size_t)t : (size_t)rand_r(&seed) % 9000;
			size_t off = (size_t)rand_r(&seed) % 64;
			uLong start = t & 1 ? (uLong)rand_r(&seed) : 0;
			uint32_t got = xhca_crc32((uint32_t)start, b + off, n);

			bad = got != (uint32_t)crc32(start, b + off, (uInt)n);
			if (bad)
				unit_check(0, "CRC-32 %s: %zu bytes at offset %zu from 0x%08lx: "
					   "0x%08x, not zlib's", names[impl], n, off, start, got);
		}
		if (!bad)
			unit_check(1, "CRC-32 %s: zlib's for %d runs of 0 to 9000 bytes", names[impl], t);
	}
	unit_check(xhca_crc32_impl(-1) == best, "CRC-32: back to the best this CPU has (%d)", best);
}

static void icrc_vectors(void)
{
	char why[WHY_LEN];

	for (size_t i = 0; i < sizeof(vecs) / sizeof(vecs[0]); i++) {
		why[0] = '\0';
		if (run_vec(&vecs[i], why))
			unit_check(0, "ICRC vector %s (%s)", vecs[i].name, why);
		else
			unit_check(1, "ICRC vector %s", vecs[i].name);
	}
}

static const struct unit_case cases[] = {
	UNIT_RUN("icrc_vectors", icrc_vectors),
	UNIT_CHECK("write_only_imm", case_write_only_imm,
		   "RC WRITE_ONLY_IMM: RETH at 12, ImmDt at 28"),
	UNIT_CHECK("ud_send_only_imm", case_ud_send_only_imm,
		   "UD SEND_ONLY_IMM: DETH at 12, ImmDt at 20"),
	UNIT_CHECK("atomiceth", case_atomiceth, "CMP_SWAP: AtomicETH at 12"),
	UNIT_CHECK("atomic_ack", case_atomic_ack, "ATOMIC_ACK: AETH at 12, AtomicAckETH at 16"),
	UNIT_CHECK("ieth", case_ieth, "SEND_ONLY_INV: IETH at 12"),
	UNIT_CHECK("flush", case_flush, "FLUSH: FETH at 12, RETH at 16"),
	UNIT_CHECK("cnp", case_cnp, "CNP: BTH + 16 reserved bytes"),
	UNIT_CHECK("all_opcodes", case_all_opcodes, "every opcode: headers, length, ICRC"),
	UNIT_CHECK("vlan", case_vlan, "VLAN tag"),
	UNIT_CHECK("qinq", case_qinq, "QinQ tags, IPv6"),
	UNIT_CHECK("ipv6_ext", case_ipv6_ext, "IPv6 extension headers"),
	UNIT_CHECK("ipv4_options", case_ipv4_options, "IPv4 options"),
	UNIT_CHECK("ipv4_fields", case_ipv4_fields, "IPv4/UDP/BTH fields and defaults"),
	UNIT_CHECK("pad", case_pad, "pad counts 0..3 and forced pad"),
	UNIT_CHECK("opcode_names", case_opcode_names, "opcode names and parsing"),
	UNIT_CHECK("msg_opcode", case_msg_opcode,
		   "a message's FIRST/MIDDLE/LAST from its ONLY opcode"),
	UNIT_CHECK("ip_parse", case_ip_parse, "IP address parse/print"),
	UNIT_CHECK("bad_spec", case_bad_spec, "bad spec is -EINVAL"),
	UNIT_CHECK("small_buffer", case_small_buffer, "small buffer is -ENOSPC"),
	UNIT_CHECK("icrc_check", case_icrc_check, "icrc_check_frame good, variant, bit flips"),
	UNIT_RUN("crc32", crc32_impls),
	UNIT_CHECK("fuzz", case_fuzz,
		   "fuzz: 200000 random specs, mutated frames and strings: only documented results"),
};

UNIT_FILE(pkt, NULL, NULL, cases);
