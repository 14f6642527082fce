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

/* Builds the frame of s and hands it to tx. */
static int send_spec(const struct xhca_pkt_spec *s, resp_tx_fn tx, void *arg)
{
	__u8 f[XHCA_PKT_MAX];
	int len = xhca_pkt_build(s, f, sizeof(f));

	if (len < 0)
		return len;
	return tx(arg, f, (__u32)len);
}

static int tx_xsk(void *arg, const void *frame, __u32 len)
{
	return xsk_tx(arg, frame, len);
}

/* A NAK with that syndrome at s's PSN; counted when it left. */
static void send_nak(struct xhcad *d, struct xhca_pkt_spec *s, __u8 syndrome)
{
	s->opcode = XHCA_OPC_RC | XHCA_OP_ACK;
	s->aeth_syndrome = syndrome;
	if (!send_spec(s, tx_xsk, d))
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

/* Where a READ's bytes are in host memory, page by page, in order. */
static int read_spans(struct xhcad *d, const struct hm_alloc *a, __u64 off, __u32 len,
		      struct resp_job *j)
{
	__u32 n = (__u32)(((off % XHCA_PAGE_SIZE) + len + XHCA_PAGE_SIZE - 1) / XHCA_PAGE_SIZE);

	j->span = calloc(n ? n : 1, sizeof(*j->span));
	if (!j->span)
		return -ENOMEM;
	j->nspan = 0;
	while (len) {
		__u32 k = XHCA_PAGE_SIZE - (__u32)(off % XHCA_PAGE_SIZE);

		if (k > len)
			k = len;
		j->span[j->nspan].hoff = hm_base(a, off);
		j->span[j->nspan++].len = k;
		off += k;
		len -= k;
	}
	return 0;
}

void resp_job_free(struct resp_job *j)
{
	free(j->span);
	j->span = NULL;
}

int resp_resolve(struct xhcad *d, struct qp_host *qh, const struct xhca_rx_meta *m,
		 const __u8 *fr, __u32 len, struct resp_job *j)
{
	const struct xhca_qp_ctx *c = &d->ctxm[m->lidx];
	struct xhca_pkt_spec *s = &j->s;
	const __u8 *bth;
	struct mr_rt *mr;
	int o;

	memset(j, 0, sizeof(*j));
	o = reply_spec(fr, len, c, s, XHCA_OPC_RC | XHCA_OP_ACK);
	if (o < 0 || !(m->flags & XHCA_MF_MSN) ||
	    (__u32)o + xhca_opinfo_tbl[m->opcode].hdr_len > len)
		return XHCA_H_BAD_META;
	bth = fr + o;
	j->op = m->opcode & 0x1f;
	j->psn = m->psn;
	s->aeth_msn = m->msg_len & XHCA_PSN_MASK;
	s->psn = m->psn;
	if (j->op == XHCA_OP_READ_REQ) {
		__u64 va = be64(bth + 12);
		__u32 rkey = be32(bth + 20);
		struct hm_alloc *a;

		j->dlen = be32(bth + 24);
		j->mtu = 1u << c->mtu_shift;
		if (!j->dlen)
			return 0;
		mr = mr_find(d, rkey);
		a = mr ? hm_find(d, mr->alloc) : NULL;
		if (!a || !mr->e.valid || va < mr->e.iova || j->dlen > mr->e.length ||
		    va - mr->e.iova > mr->e.length - j->dlen) {
			/* deregistered since xhca_rx checked it */
			send_nak(d, s, AETH_NAK_ACCESS);
			qh->cnt.errors++;
			return XHCA_H_RESP_FAIL;
		}
		if (read_spans(d, a, mr->off + (va - mr->e.iova), j->dlen, j))
			return XHCA_H_RESP_FAIL;
		return 0;
	}
	if (j->op == XHCA_OP_CMP_SWAP || j->op == XHCA_OP_FETCH_ADD) {
		__u64 va = be64(bth + 12);

		j->arg = be64(bth + 24);
		j->cmp = be64(bth + 32);
		mr = mr_find(d, be32(bth + 20));
		j->word = mr && mr->e.valid ? atomic_target(d, mr, va) : NULL;
		if (!j->word) {
			send_nak(d, s, mr && mr->e.valid ? AETH_NAK_INVALID : AETH_NAK_ACCESS);
			qh->cnt.errors++;
			return XHCA_H_RESP_FAIL;
		}
		return 0;
	}
	return XHCA_H_UNSUPPORTED;
}

int resp_execute(const __u8 *hostmem, struct resp_job *j, resp_tx_fn tx, void *arg)
{
	struct xhca_pkt_spec *s = &j->s;
	int err = 0;

	if (j->op == XHCA_OP_READ_REQ) {
		__u32 n = j->dlen ? (j->dlen + j->mtu - 1) / j->mtu : 1, sp = 0, sp_off = 0;
		__u8 data[4096];

		for (__u32 i = 0; i < n && !err; i++) {
			__u32 k = j->dlen - i * j->mtu < j->mtu ? j->dlen - i * j->mtu : j->mtu;

			s->opcode = XHCA_OPC_RC | (n == 1 ? XHCA_OP_READ_RESP_ONLY
						   : !i ? XHCA_OP_READ_RESP_FIRST
						   : i == n - 1 ? XHCA_OP_READ_RESP_LAST
								: XHCA_OP_READ_RESP_MIDDLE);
			s->psn = (j->psn + i) & XHCA_PSN_MASK;
			s->aeth_syndrome = AETH_ACK;
			/* the packet's bytes, from the spans in order */
			for (__u32 got = 0; j->dlen && got < k;) {
				__u32 take = j->span[sp].len - sp_off;

				if (take > k - got)
					take = k - got;
				memcpy(data + got, hostmem + j->span[sp].hoff + sp_off, take);
				got += take;
				sp_off += take;
				if (sp_off == j->span[sp].len) {
					sp++;
					sp_off = 0;
				}
			}
			s->payload = data;
			s->payload_len = j->dlen ? k : 0;
			s->pad = -1;
			err = send_spec(s, tx, arg);
		}
		return err;
	}
	if (j->op == XHCA_OP_CMP_SWAP || j->op == XHCA_OP_FETCH_ADD) {
		__u64 orig;

		/* atomic against each other, from either thread, and against
		 * xhca_rx's placement, which stores aligned words whole */
		if (j->op == XHCA_OP_FETCH_ADD) {
			orig = __atomic_fetch_add(j->word, j->arg, __ATOMIC_SEQ_CST);
		} else {
			orig = j->cmp;
			__atomic_compare_exchange_n(j->word, &orig, j->arg, 0, __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST);
		}
		s->opcode = XHCA_OPC_RC | XHCA_OP_ATOMIC_ACK;
		s->aeth_syndrome = AETH_ACK;
		s->atomic_orig = orig;
		return send_spec(s, tx, arg);
	}
	return -EINVAL;
}

int respond(struct xhcad *d, struct qp_host *qh, const struct xhca_rx_meta *m, const __u8 *fr,
	    __u32 len)
{
	struct resp_job j;
	int r = resp_resolve(d, qh, m, fr, len, &j);

	if (r)
		return r;
	r = resp_execute(d->hostmem, &j, tx_xsk, d);
	resp_job_free(&j);
	return r ? XHCA_H_RESP_FAIL : XHCA_H_RESPONDED;
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
