/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 packet builder. The extension headers come from xhca_opinfo_tbl (the
 * same table xhca_rx parses with), so builder and parser cannot disagree on
 * which headers an opcode carries.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <xhca/pkt.h>
#include <xhca/wire.h>

#define ETH_HDR_LEN 14
#define VLAN_LEN 4
#define IPV4_LEN 20
#define IPV6_LEN 40
#define IPV6_EXT_LEN 8
#define UDP_LEN 8
#define BTH_LEN 12
#define FETH_LEN 4
#define UINT24_MAX 0xffffffu

/* Sizes of each part of the frame, in wire order. */
struct pkt_layout {
	size_t l2;	/* Ethernet + VLAN tags */
	size_t l3;	/* IP header incl. options / extension header */
	size_t hdrs;	/* BTH + extension headers */
	size_t pad;
	size_t udp_len;	/* the true UDP length, before udp_len_delta */
	size_t total;
	uint16_t flags;	/* xhca_opinfo flags of the opcode; 0 if unknown */
};

static int pkt_layout(const struct xhca_pkt_spec *s, struct pkt_layout *lo)
{
	const struct xhca_opinfo *oi = &xhca_opinfo_tbl[s->opcode];
	long ulen;

	if (s->nvlan < 0 || s->nvlan > 2 || s->pad < -1 || s->pad > 3 || s->tver > 15 ||
	    s->dqpn > UINT24_MAX || s->psn > UINT24_MAX || s->deth_sqp > UINT24_MAX ||
	    s->aeth_msn > UINT24_MAX || s->payload_len > XHCA_PKT_MAX)
		return -EINVAL;
	if (s->ipv6) {
		if (s->ip_opt_len != 0 || s->flow_label > 0xfffff)
			return -EINVAL;
	} else if (s->ip_opt_len < 0 || s->ip_opt_len > 40 || s->ip_opt_len % 4 ||
		   s->ipv6_nexthdr || s->ipv6_hbh) {
		return -EINVAL;
	}

	lo->flags = (oi->flags & XHCA_O_KNOWN) ? oi->flags : 0;
	lo->l2 = ETH_HDR_LEN + (size_t)s->nvlan * VLAN_LEN;
	if (s->ipv6)
		lo->l3 = IPV6_LEN + (s->ipv6_hbh ? IPV6_EXT_LEN : 0) +
			 (s->ipv6_nexthdr ? IPV6_EXT_LEN : 0);
	else
		lo->l3 = IPV4_LEN + (size_t)s->ip_opt_len;
	/* Unknown opcodes get a bare BTH: tests send them to check that they are
	 * dropped before any length arithmetic depends on the opcode. */
	lo->hdrs = lo->flags ? oi->hdr_len : BTH_LEN;
	/* A forced PadCnt also appends that many pad bytes, so the wire stays
	 * self-consistent: the receiver sees payload_len bytes of payload and
	 * the PadCnt under test. */
	lo->pad = s->pad >= 0 ? (size_t)s->pad : (size_t)(-s->payload_len & 3);
	lo->udp_len = UDP_LEN + lo->hdrs + s->payload_len + lo->pad + XHCA_ICRC_LEN;
	lo->total = lo->l2 + lo->l3 + lo->udp_len;
	ulen = (long)lo->udp_len + s->udp_len_delta;
	if (lo->total > XHCA_PKT_MAX || ulen < 0 || ulen > 0xffff)
		return -EINVAL;
	return 0;
}

int xhca_pkt_len(const struct xhca_pkt_spec *s)
{
	struct pkt_layout lo;
	int err;

	err = pkt_layout(s, &lo);
	return err ? err : (int)lo.total;
}

void xhca_pkt_spec_init(struct xhca_pkt_spec *s, uint8_t opcode)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	memset(s, 0, sizeof(*s));
	memcpy(s->smac, (uint8_t[6]){ 0x02, 0, 0, 0, 0, 0x01 }, 6);
	memcpy(s->dmac, (uint8_t[6]){ 0x02, 0, 0, 0, 0, 0x02 }, 6);
	memcpy(s->src_ip, v4mapped, sizeof(v4mapped));
	memcpy(s->dst_ip, v4mapped, sizeof(v4mapped));
	memcpy(s->src_ip + 12, (uint8_t[4]){ 10, 0, 0, 1 }, 4);
	memcpy(s->dst_ip + 12, (uint8_t[4]){ 10, 0, 0, 2 }, 4);
	s->ttl = 64;
	s->sport = 0xc000;
	s->dport = XHCA_ROCE_UDP_PORT;
	s->opcode = opcode;
	s->pad = -1;
	s->pkey = 0xffff;
}

static uint8_t *put8(uint8_t *p, uint8_t v)
{
	*p = v;
	return p + 1;
}

static uint8_t *put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
	return p + 2;
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	p = put16(p, v >> 16);
	return put16(p, v & 0xffff);
}

static uint8_t *put64(uint8_t *p, uint64_t v)
{
	p = put32(p, v >> 32);
	return put32(p, v & 0xffffffffu);
}

uint16_t xhca_ipv4_csum(const uint8_t *h, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i < len; i += 2)
		sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* An 8-byte IPv6 extension header of the given type. Hop-by-hop and
 * destination options must hold valid options: one PadN fills the 6 bytes.
 * Other types (routing, fragment) get zeros, which parse as "no segments
 * left" / "atomic fragment". */
static uint8_t *put_ipv6_ext(uint8_t *p, uint8_t type, uint8_t next)
{
	memset(p, 0, IPV6_EXT_LEN);
	p[0] = next;
	if (type == 0 || type == 60) {
		p[2] = 1;
		p[3] = 4;
	}
	return p + IPV6_EXT_LEN;
}

static uint8_t *put_ip(uint8_t *p, const struct xhca_pkt_spec *s, const struct pkt_layout *lo)
{
	uint8_t proto = s->ip_proto ? s->ip_proto : 17;
	uint8_t *ip = p;

	if (s->ipv6) {
		uint8_t after_hbh = s->ipv6_nexthdr ? s->ipv6_nexthdr : proto;

		p = put32(p, 6u << 28 | (uint32_t)s->tos << 20 | s->flow_label);
		p = put16(p, (uint16_t)(lo->l3 - IPV6_LEN + lo->udp_len));
		p = put8(p, s->ipv6_hbh ? 0 : after_hbh);
		p = put8(p, s->ttl ? s->ttl : 64);
		memcpy(p, s->src_ip, 16);
		memcpy(p + 16, s->dst_ip, 16);
		p += 32;
		if (s->ipv6_hbh)
			p = put_ipv6_ext(p, 0, after_hbh);
		if (s->ipv6_nexthdr)
			p = put_ipv6_ext(p, s->ipv6_nexthdr, proto);
		return p;
	}

	p = put8(p, 0x40 | (uint8_t)(lo->l3 / 4));
	p = put8(p, s->tos);
	p = put16(p, (uint16_t)(lo->l3 + lo->udp_len));
	p = put16(p, s->ip_id);
	p = put16(p, s->frag_off ? s->frag_off : 0x4000);
	p = put8(p, s->ttl ? s->ttl : 64);
	p = put8(p, proto);
	p = put16(p, 0);
	memcpy(p, s->src_ip + 12, 4);
	memcpy(p + 4, s->dst_ip + 12, 4);
	p += 8;
	memset(p, 0x01, (size_t)s->ip_opt_len);	/* NOP options */
	p += s->ip_opt_len;
	put16(ip + 10, xhca_ipv4_csum(ip, lo->l3));
	return p;
}

/* BTH and the extension headers the opcode carries, in wire order. */
static uint8_t *put_transport(uint8_t *p, const struct xhca_pkt_spec *s,
			      const struct pkt_layout *lo)
{
	uint16_t f = lo->flags;
	uint16_t pkey = s->pkey || s->pkey_zero ? s->pkey : 0xffff;

	p = put8(p, s->opcode);
	p = put8(p, (s->se ? XHCA_BTH_SE : 0) | (s->mig ? XHCA_BTH_MIG : 0) |
		    (uint8_t)(lo->pad << XHCA_BTH_PAD_SHIFT) | s->tver);
	p = put16(p, pkey);
	p = put32(p, (s->fecn ? XHCA_BTH_FECN : 0) | (s->becn ? XHCA_BTH_BECN : 0) | s->dqpn);
	p = put32(p, (s->ackreq ? XHCA_BTH_ACKREQ : 0) | s->psn);

	if (f & XHCA_H_DETH) {
		p = put32(p, s->deth_qkey);
		p = put32(p, s->deth_sqp);
	}
	if (f & XHCA_H_FETH)
		p = put32(p, s->feth);	/* SEL and PLT sit in the low byte */
	if (f & XHCA_H_RETH) {
		p = put64(p, s->reth_va);
		p = put32(p, s->reth_rkey);
		p = put32(p, s->reth_len);
	}
	if (f & XHCA_H_ATMETH) {
		p = put64(p, s->atomic_va);
		p = put32(p, s->atomic_rkey);
		p = put64(p, s->atomic_swap);
		p = put64(p, s->atomic_cmp);
	}
	if (f & XHCA_H_AETH)
		p = put32(p, (uint32_t)s->aeth_syndrome << 24 | s->aeth_msn);
	if (f & XHCA_H_ATMACK)
		p = put64(p, s->atomic_orig);
	if (f & XHCA_H_IMM)
		p = put32(p, s->imm);
	if (f & XHCA_H_IETH)
		p = put32(p, s->ieth_rkey);
	if (f & XHCA_H_CNP) {
		memset(p, 0, XHCA_CNP_RSVD_LEN);
		p += XHCA_CNP_RSVD_LEN;
	}
	return p;
}

int xhca_pkt_build(const struct xhca_pkt_spec *s, void *buf, size_t buflen)
{
	struct pkt_layout lo;
	uint8_t *p = buf, *l3;
	uint16_t ethertype;
	uint32_t icrc;
	int err;

	err = pkt_layout(s, &lo);
	if (err)
		return err;
	if (buflen < lo.total)
		return -ENOSPC;

	memcpy(p, s->dmac, 6);
	memcpy(p + 6, s->smac, 6);
	p += 12;
	for (int i = 0; i < s->nvlan; i++) {
		uint16_t tpid = s->vlan_tpid[i];

		if (!tpid)
			tpid = (s->nvlan == 2 && i == 0) ? 0x88a8 : 0x8100;
		p = put16(p, tpid);
		p = put16(p, s->vlan_tci[i]);
	}
	ethertype = s->ethertype ? s->ethertype : s->ipv6 ? 0x86dd : 0x0800;
	p = put16(p, ethertype);

	l3 = p;
	p = put_ip(p, s, &lo);

	p = put16(p, s->sport ? s->sport : 0xc000);
	p = put16(p, s->dport ? s->dport : XHCA_ROCE_UDP_PORT);
	p = put16(p, (uint16_t)((long)lo.udp_len + s->udp_len_delta));
	p = put16(p, 0);	/* no UDP checksum, as RXE sends */

	p = put_transport(p, s, &lo);
	if (s->payload) {
		memcpy(p, s->payload, s->payload_len);
	} else {
		for (uint32_t i = 0; i < s->payload_len; i++)
			p[i] = (uint8_t)i;
	}
	if (s->psn_stamp && s->payload_len >= 4)
		put32(p, s->psn);
	p += s->payload_len;
	memset(p, 0, lo.pad);
	p += lo.pad;

	icrc = xhca_icrc(l3, (size_t)(p - l3), s->ipv6);
	if (s->bad_icrc)
		icrc = ~icrc;
	/* Little-endian on the wire: RXE stores the CRC as a native u32. */
	p[0] = icrc & 0xff;
	p[1] = (icrc >> 8) & 0xff;
	p[2] = (icrc >> 16) & 0xff;
	p[3] = icrc >> 24;
	return (int)lo.total;
}

/* Operation names (opcode bits 4..0), shared by RC, UC and UD. */
static const char *const op_names[32] = {
	[XHCA_OP_SEND_FIRST] = "SEND_FIRST",
	[XHCA_OP_SEND_MIDDLE] = "SEND_MIDDLE",
	[XHCA_OP_SEND_LAST] = "SEND_LAST",
	[XHCA_OP_SEND_LAST_IMM] = "SEND_LAST_IMM",
	[XHCA_OP_SEND_ONLY] = "SEND_ONLY",
	[XHCA_OP_SEND_ONLY_IMM] = "SEND_ONLY_IMM",
	[XHCA_OP_WRITE_FIRST] = "WRITE_FIRST",
	[XHCA_OP_WRITE_MIDDLE] = "WRITE_MIDDLE",
	[XHCA_OP_WRITE_LAST] = "WRITE_LAST",
	[XHCA_OP_WRITE_LAST_IMM] = "WRITE_LAST_IMM",
	[XHCA_OP_WRITE_ONLY] = "WRITE_ONLY",
	[XHCA_OP_WRITE_ONLY_IMM] = "WRITE_ONLY_IMM",
	[XHCA_OP_READ_REQ] = "READ_REQ",
	[XHCA_OP_READ_RESP_FIRST] = "READ_RESP_FIRST",
	[XHCA_OP_READ_RESP_MIDDLE] = "READ_RESP_MIDDLE",
	[XHCA_OP_READ_RESP_LAST] = "READ_RESP_LAST",
	[XHCA_OP_READ_RESP_ONLY] = "READ_RESP_ONLY",
	[XHCA_OP_ACK] = "ACK",
	[XHCA_OP_ATOMIC_ACK] = "ATOMIC_ACK",
	[XHCA_OP_CMP_SWAP] = "CMP_SWAP",
	[XHCA_OP_FETCH_ADD] = "FETCH_ADD",
	[XHCA_OP_SEND_LAST_INV] = "SEND_LAST_INV",
	[XHCA_OP_SEND_ONLY_INV] = "SEND_ONLY_INV",
	[XHCA_OP_FLUSH] = "FLUSH",
	[XHCA_OP_ATOMIC_WRITE] = "ATOMIC_WRITE",
};

/* "RC_SEND_ONLY" etc. for every opcode the table knows; built once so that
 * xhca_opcode_name() can hand out pointers to static storage. */
static char opcode_names[256][24];
static pthread_once_t opcode_names_once = PTHREAD_ONCE_INIT;

static void opcode_names_init(void)
{
	static const char *const class_names[8] = { "RC", "UC", "RD", "UD", "CNP" };

	for (int op = 0; op < 256; op++) {
		const char *cls = class_names[op >> 5], *name = op_names[op & 0x1f];

		if (!(xhca_opinfo_tbl[op].flags & XHCA_O_KNOWN))
			continue;
		if (op == XHCA_OP_CNP)
			snprintf(opcode_names[op], sizeof(opcode_names[op]), "CNP");
		else if (cls && name)
			snprintf(opcode_names[op], sizeof(opcode_names[op]), "%s_%s", cls, name);
	}
}

uint8_t xhca_msg_opcode(uint8_t only, uint64_t i, uint64_t n)
{
	uint8_t cls = only & 0xe0, op = only & 0x1f;
	int write = op == XHCA_OP_WRITE_ONLY || op == XHCA_OP_WRITE_ONLY_IMM;
	int imm = op == XHCA_OP_WRITE_ONLY_IMM || op == XHCA_OP_SEND_ONLY_IMM;
	int inv = op == XHCA_OP_SEND_ONLY_INV;

	if (n == 1)
		return only;
	if (!i)
		return cls | (write ? XHCA_OP_WRITE_FIRST : XHCA_OP_SEND_FIRST);
	if (i < n - 1)
		return cls | (write ? XHCA_OP_WRITE_MIDDLE : XHCA_OP_SEND_MIDDLE);
	if (write)
		return cls | (imm ? XHCA_OP_WRITE_LAST_IMM : XHCA_OP_WRITE_LAST);
	return cls | (imm ? XHCA_OP_SEND_LAST_IMM : inv ? XHCA_OP_SEND_LAST_INV : XHCA_OP_SEND_LAST);
}

const char *xhca_opcode_name(uint8_t opcode)
{
	pthread_once(&opcode_names_once, opcode_names_init);
	return opcode_names[opcode][0] ? opcode_names[opcode] : "UNKNOWN";
}

/* Names compare case-insensitively with '-' and '_' equal, so that the CLI
 * spelling "rc-send-only" matches "RC_SEND_ONLY". */
static int opname_eq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char ca = *a == '-' ? '_' : (char)toupper((unsigned char)*a);
		char cb = *b == '-' ? '_' : (char)toupper((unsigned char)*b);

		if (ca != cb)
			return 0;
	}
	return *a == *b;
}

int xhca_opcode_parse(const char *s, uint8_t *opcode)
{
	unsigned long v;
	char *end;

	if (!s || !*s)
		return -EINVAL;
	if (isdigit((unsigned char)*s)) {
		errno = 0;
		v = strtoul(s, &end, 0);
		if (errno || *end || v > 0xff)
			return -EINVAL;
		*opcode = (uint8_t)v;
		return 0;
	}
	pthread_once(&opcode_names_once, opcode_names_init);
	for (int op = 0; op < 256; op++) {
		if (opcode_names[op][0] && opname_eq(s, opcode_names[op])) {
			*opcode = (uint8_t)op;
			return 0;
		}
	}
	return -EINVAL;
}

int xhca_ip_parse(const char *s, uint8_t out[16])
{
	uint8_t v4[4];

	if (!s)
		return -EINVAL;
	if (inet_pton(AF_INET, s, v4) == 1) {
		memset(out, 0, 10);
		out[10] = out[11] = 0xff;
		memcpy(out + 12, v4, 4);
		return 4;
	}
	if (inet_pton(AF_INET6, s, out) == 1)
		return 6;
	return -EINVAL;
}

const char *xhca_ip_str(const uint8_t ip[16], char *buf, size_t len)
{
	const char *r;

	if (xhca_ip_is_v4(ip))
		r = inet_ntop(AF_INET, ip + 12, buf, (socklen_t)len);
	else
		r = inet_ntop(AF_INET6, ip, buf, (socklen_t)len);
	if (!r && len)
		buf[0] = '\0';	/* buf too small: print nothing rather than garbage */
	return buf;
}
