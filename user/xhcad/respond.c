/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The responder's half that needs a processor: RDMA READ and ATOMIC requests
 * xhca_rx checked (R_Key, key, PD, access, bounds, alignment) execute here,
 * and their responses, and the NAKs of requests xhca_rx refused, leave
 * through the AF_XDP TX ring (xsk_tx), built whole by the packet builder:
 * Ethernet and IP swapped from the request (or the QP's addresses and the
 * neighbour table, for a NAK), the QP's remote QPN and P_Key, the request's
 * PSN (a READ's responses take one PSN each), the AETH with the MSN xhca_rx
 * counted, the ICRC. The delivery loop kicks the TX ring once per round.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_ether.h>
#include <xhca/pkt.h>
#include <xhca/wire.h>
#include "log.h"
#include "xhcad.h"

#define AETH_ACK 0x1f		/* ACK, no credit count (RXE's AETH_ACK_UNLIMITED) */
#define AETH_NAK_INVALID 0x61	/* NAK: invalid request */
#define AETH_NAK_ACCESS 0x62	/* NAK: remote access error */

static __u32 be32(const __u8 *p)
{
	return (__u32)p[0] << 24 | (__u32)p[1] << 16 | (__u32)p[2] << 8 | p[3];
}

static __u64 be64(const __u8 *p)
{
	return (__u64)be32(p) << 32 | be32(p + 4);
}

/* The response's frame around what the request came in: addresses and
 * tags swapped, the QP's remote QPN and P_Key. Returns the BTH offset. */
static int reply_spec(const __u8 *fr, __u32 len, const struct xhca_qp_ctx *c,
		      struct xhca_pkt_spec *s, __u8 opcode)
{
	__u32 o = 12;
	__u16 type;

	xhca_pkt_spec_init(s, opcode);
	memcpy(s->dmac, fr + 6, 6);
	memcpy(s->smac, fr, 6);
	type = (__u16)(fr[o] << 8 | fr[o + 1]);
	while ((type == ETH_P_8021Q || type == ETH_P_8021AD) && s->nvlan < 2) {
		s->vlan_tpid[s->nvlan] = type;
		s->vlan_tci[s->nvlan++] = (__u16)(fr[o + 2] << 8 | fr[o + 3]);
		o += 4;
		type = (__u16)(fr[o] << 8 | fr[o + 1]);
	}
	o += 2;
	if (type == ETH_P_IP && o + 20 <= len) {
		s->src_ip[10] = s->src_ip[11] = s->dst_ip[10] = s->dst_ip[11] = 0xff;
		memcpy(s->src_ip + 12, fr + o + 16, 4);
		memcpy(s->dst_ip + 12, fr + o + 12, 4);
		o += (fr[o] & 0xf) * 4u;
	} else if (type == ETH_P_IPV6 && o + 40 <= len) {
		s->ipv6 = 1;
		memcpy(s->src_ip, fr + o + 24, 16);
		memcpy(s->dst_ip, fr + o + 8, 16);
		o += 40;
	} else {
		return -EINVAL;
	}
	if (o + 8 + sizeof(struct xhca_bth) > len)
		return -EINVAL;
	s->sport = (__u16)(fr[o] << 8 | fr[o + 1]); /* the flow's own entropy, back */
	s->dqpn = c->dest_qpn;
	s->pkey = c->pkey;
	return (int)(o + 8);
}

static int send_spec(struct xhcad *d, const struct xhca_pkt_spec *s)
{
	static __u8 f[XHCA_PKT_MAX];
	int len = xhca_pkt_build(s, f, sizeof(f));

	if (len < 0)
		return len;
	return xsk_tx(d, f, (__u32)len);
}

/* A NAK with that syndrome at s's PSN; counted when it left. */
static void send_nak(struct xhcad *d, struct xhca_pkt_spec *s, __u8 syndrome)
{
	s->opcode = XHCA_OPC_RC | XHCA_OP_ACK;
	s->aeth_syndrome = syndrome;
	if (!send_spec(d, s))
		d->naks++;
}

/* The 8 bytes an ATOMIC works on, in host memory, or NULL. */
static __u64 *atomic_target(struct xhcad *d, const struct mr_rt *mr, __u64 va)
{
	struct hm_alloc *a = hm_find(d, mr->alloc);
	__u64 off;

	if (!a || va < mr->e.iova || va - mr->e.iova > mr->e.length - 8 || mr->e.length < 8)
		return NULL;
	off = hm_base(a, mr->off + (va - mr->e.iova));
	return off % 8 ? NULL : (__u64 *)(d->hostmem + off);
}

int respond(struct xhcad *d, struct qp_host *qh, const struct xhca_rx_meta *m, const __u8 *fr,
	    __u32 len)
{
	const struct xhca_qp_ctx *c = &d->ctxm[m->lidx];
	__u8 op = m->opcode & 0x1f;
	struct xhca_pkt_spec s;
	const __u8 *bth;
	struct mr_rt *mr;
	int o, err = 0;

	o = reply_spec(fr, len, c, &s, XHCA_OPC_RC | XHCA_OP_ACK);
	if (o < 0 || !(m->flags & XHCA_MF_MSN) ||
	    (__u32)o + xhca_opinfo_tbl[m->opcode].hdr_len > len)
		return XHCA_H_BAD_META;
	bth = fr + o;
	s.aeth_msn = m->msg_len & XHCA_PSN_MASK;
	if (op == XHCA_OP_READ_REQ) {
		__u64 va = be64(bth + 12);
		__u32 rkey = be32(bth + 20), dlen = be32(bth + 24), mtu = 1u << c->mtu_shift;
		__u32 n = dlen ? (dlen + mtu - 1) / mtu : 1;
		static __u8 data[4096];
		struct hm_alloc *a;

		mr = dlen ? mr_find(d, rkey) : NULL;
		a = mr ? hm_find(d, mr->alloc) : NULL;
		if (dlen && (!a || !mr->e.valid || va < mr->e.iova || dlen > mr->e.length ||
			     va - mr->e.iova > mr->e.length - dlen)) {
			/* deregistered since xhca_rx checked it */
			s.psn = m->psn;
			send_nak(d, &s, AETH_NAK_ACCESS);
			qh->cnt.errors++;
			return XHCA_H_RESP_FAIL;
		}
		for (__u32 i = 0; i < n && !err; i++) {
			__u32 k = dlen - i * mtu < mtu ? dlen - i * mtu : mtu;

			s.opcode = XHCA_OPC_RC | (n == 1 ? XHCA_OP_READ_RESP_ONLY
						  : !i ? XHCA_OP_READ_RESP_FIRST
						  : i == n - 1 ? XHCA_OP_READ_RESP_LAST
							       : XHCA_OP_READ_RESP_MIDDLE);
			s.psn = (m->psn + i) & XHCA_PSN_MASK;
			s.aeth_syndrome = AETH_ACK;
			if (dlen)
				hm_read(d, a, mr->off + (va - mr->e.iova) + (__u64)i * mtu, data, k);
			s.payload = data;
			s.payload_len = dlen ? k : 0;
			s.pad = -1;
			err = send_spec(d, &s);
		}
		return err ? XHCA_H_RESP_FAIL : XHCA_H_RESPONDED;
	}
	if (op == XHCA_OP_CMP_SWAP || op == XHCA_OP_FETCH_ADD) {
		__u64 va = be64(bth + 12), arg = be64(bth + 24), cmp = be64(bth + 32), orig;
		__u64 *p;

		mr = mr_find(d, be32(bth + 20));
		p = mr && mr->e.valid ? atomic_target(d, mr, va) : NULL;
		s.psn = m->psn;
		if (!p) {
			send_nak(d, &s, mr && mr->e.valid ? AETH_NAK_INVALID : AETH_NAK_ACCESS);
			qh->cnt.errors++;
			return XHCA_H_RESP_FAIL;
		}
		/* atomic against each other and against xhca_rx's placement,
		 * which stores aligned words whole */
		if (op == XHCA_OP_FETCH_ADD) {
			orig = __atomic_fetch_add(p, arg, __ATOMIC_SEQ_CST);
		} else {
			orig = cmp;
			__atomic_compare_exchange_n(p, &orig, arg, 0, __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST);
		}
		s.opcode = XHCA_OPC_RC | XHCA_OP_ATOMIC_ACK;
		s.aeth_syndrome = AETH_ACK;
		s.atomic_orig = orig;
		err = send_spec(d, &s);
		return err ? XHCA_H_RESP_FAIL : XHCA_H_RESPONDED;
	}
	return XHCA_H_UNSUPPORTED;
}

/* The NAK of a request xhca_rx refused (it moved the QP to the error
 * state): back the way the request came (the event carries its Ethernet
 * addresses), to the QP's remote address. */
void respond_nak(struct xhcad *d, const struct xhca_event *e)
{
	const struct xhca_qp_ctx *c = &d->ctxm[e->lidx];
	struct xhca_pkt_spec s;

	if (c->type != XHCA_QPT_RC)
		return;
	xhca_pkt_spec_init(&s, XHCA_OPC_RC | XHCA_OP_ACK);
	s.ipv6 = !!(c->flags & XHCA_QPF_IPV6);
	memcpy(s.src_ip, c->local_ip, 16);
	memcpy(s.dst_ip, c->remote_ip, 16);
	memcpy(s.smac, e->dmac, 6);
	memcpy(s.dmac, e->smac, 6);
	s.dqpn = c->dest_qpn;
	s.pkey = c->pkey;
	s.psn = e->psn;
	s.aeth_msn = __atomic_load_n(&c->msn, __ATOMIC_RELAXED) & XHCA_PSN_MASK;
	send_nak(d, &s, e->reason >= XHCA_R_DROP_MR_RKEY && e->reason <= XHCA_R_DROP_MR_BOUNDS
				? AETH_NAK_ACCESS
				: AETH_NAK_INVALID);
	xsk_tx_kick(d); /* not from a delivery round: now */
}
