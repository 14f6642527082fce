/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-gen: frame building: frame k of a run and packet i of a message, by
 * the libxhca packet builder, and the offsets in a built frame that the
 * xhca_gen program rewrites.
 */
#include <errno.h>
#include <string.h>
#include <linux/if_ether.h>
#include <xhca/wire.h>
#include "gen.h"

int frame_offsets(const uint8_t *f, size_t len, struct frame_offs *fo)
{
	size_t off = 12, udp;
	uint16_t type, ulen;

	type = (uint16_t)(f[off] << 8 | f[off + 1]);
	while (type == ETH_P_8021Q || type == ETH_P_8021AD) {
		off += 4;
		type = (uint16_t)(f[off] << 8 | f[off + 1]);
	}
	off += 2;
	if (type == ETH_P_IP && f[off + 9] == 17)
		udp = off + (size_t)(f[off] & 0x0f) * 4;
	else if (type == ETH_P_IPV6 && f[off + 6] == 17)
		udp = off + 40;
	else
		return -EINVAL;
	ulen = (uint16_t)(f[udp + 4] << 8 | f[udp + 5]);
	if (udp + ulen > len || ulen < 8 + sizeof(struct xhca_bth) + XHCA_ICRC_LEN)
		return -EINVAL;
	fo->psn = (uint32_t)(udp + 8 + 8);
	fo->icrc = (uint32_t)(udp + ulen - XHCA_ICRC_LEN);
	fo->csum = (f[udp + 6] || f[udp + 7]) ? (uint32_t)(udp + 6) : 0;
	fo->payload = (uint32_t)(udp + 8 + xhca_opinfo_tbl[f[udp + 8]].hdr_len);
	return 0;
}

/* Whether frames differ: then xhca_gen rewrites PSN (VA) and ICRC per frame. */
int psn_varies(const struct gen_opts *o)
{
	return (o->psn_step || o->va_span) && (o->duration > 0 || o->count > 1);
}

uint64_t va_of(const struct gen_opts *o, uint64_t k)
{
	if (!o->va_span)
		return o->spec.reth_va;
	return o->spec.reth_va + (uint32_t)((k * o->va_step) % o->va_span);
}

uint32_t psn_of(const struct gen_opts *o, uint64_t k)
{
	return (uint32_t)(o->psn + k * o->psn_step) & PSN_MASK;
}

int build_va(const struct gen_opts *o, uint32_t psn, uint64_t va, uint8_t *buf)
{
	struct xhca_pkt_spec s = o->spec;

	s.psn = psn;
	s.reth_va = va;
	return xhca_pkt_build(&s, buf, XHCA_PKT_MAX);
}

int build(const struct gen_opts *o, uint32_t psn, uint8_t *buf)
{
	return build_va(o, psn, o->spec.reth_va, buf);
}

/* Frame number k as xhca_gen makes it. */
int build_k(const struct gen_opts *o, uint64_t k, uint8_t *buf)
{
	return build_va(o, psn_of(o, k), va_of(o, k), buf);
}

uint32_t icrc_word(const uint8_t *frame, const struct frame_offs *fo)
{
	uint32_t v;

	memcpy(&v, frame + fo->icrc, sizeof(v));
	return v;
}

/* Builds packet i of message m (PSN psn) into frame. */
int msg_build(const struct gen_opts *o, const uint8_t *msg, uint64_t i, uint64_t n,
	      uint32_t psn, uint8_t *frame)
{
	struct xhca_pkt_spec s = o->spec;
	uint64_t off = i * o->mtu;

	s.opcode = xhca_msg_opcode(o->spec.opcode, i, n);
	s.psn = psn;
	s.payload = msg + off;
	s.payload_len = (uint32_t)(o->msg_len - off < o->mtu ? o->msg_len - off : o->mtu);
	s.reth_len = (uint32_t)o->msg_len;
	s.pad = -1;
	return xhca_pkt_build(&s, frame, XHCA_PKT_MAX);
}
