/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the responder's READ and ATOMIC execution and its acknowledgements
 * take once they are resolved: the response frames built from the request
 * and the QP's context, the READ's bytes from host memory, the ATOMIC on its
 * word. Pure: no table of xhcad's is read, so either thread (the main loop's
 * responder, respond.c, or the proxy's, proxy_thread.c) runs it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_ether.h>
#include <xhca/pkt.h>
#include <xhca/wire.h>
#include "xhcad_device.h"

/* The response's frame around what the request came in: addresses and
 * tags swapped, the QP's remote QPN and P_Key. Returns the BTH offset. */
int resp_reply_spec(const __u8 *fr, __u32 len, const struct xhca_qp_ctx *c,
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

int resp_send_spec(const struct xhca_pkt_spec *s, resp_tx_fn tx, void *arg)
{
	return tx(arg, s);
}

int resp_tx_umem(void *arg, const struct xhca_pkt_spec *s)
{
	struct xhcad *d = arg;
	int len;
	void *f;

	gso_flush(d, NULL); /* (READ responses before it, of the QP perhaps) */
	len = xhca_pkt_len(s);
	f = len > 0 ? xsk_tx_alloc(d, (__u32)len) : NULL;
	if (!f)
		return len < 0 ? len : -errno;
	len = xhca_pkt_build(s, f, (size_t)len);
	if (len < 0) {
		xsk_tx_abort(d);
		return len;
	}
	return xsk_tx_submit(d, (__u32)len);
}

/* s into the engine's GSO run, after what waits on the TX ring (an ACK of
 * the QP's, say, queued before it): 0, -errno, or 1 where no run takes it. */
static int tx_run(struct xhcad *d, const struct xhca_pkt_spec *s)
{
	struct xhca_pkt_spec g = *s;

	if (xsk_tx_pending(d))
		xsk_tx_kick(d);
	return gso_put(d, &g, NULL);
}

int resp_tx_wire(void *arg, const struct xhca_pkt_spec *s)
{
	struct xhcad *d = arg;
	int r;

	if (d->gso && (xhca_op_read_resp(s->opcode & 0x1f) || d->steer == STEER_ON) &&
	    (r = tx_run(d, s)) <= 0)
		return r;
	return resp_tx_umem(d, s);
}

void resp_job_free(struct resp_job *j)
{
	free(j->span);
	j->span = NULL;
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
			s->aeth_syndrome = XHCA_AETH_ACK_NO_CREDIT;
			/* the packet's bytes, from the spans in order: in
			 * place where they are in one */
			s->payload = data;
			if (j->dlen && j->span[sp].len - sp_off >= k) {
				s->payload = hostmem + j->span[sp].hoff + sp_off;
				sp_off += k;
				if (sp_off == j->span[sp].len) {
					sp++;
					sp_off = 0;
				}
			}
			for (__u32 got = 0; j->dlen && s->payload == data && got < k;) {
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
			s->payload_len = j->dlen ? k : 0;
			s->pad = -1;
			err = resp_send_spec(s, tx, arg);
		}
		return err;
	}
	if (j->op == XHCA_OP_CMP_SWAP || j->op == XHCA_OP_FETCH_ADD ||
	    j->op == XHCA_OP_ATOMIC_WRITE) {
		__u64 orig = 0;

		/* atomic against each other, from either thread, and against
		 * xhca_rx's placement, which stores aligned words whole */
		if (j->op == XHCA_OP_FETCH_ADD) {
			orig = __atomic_fetch_add(j->word, j->arg, __ATOMIC_SEQ_CST);
		} else if (j->op == XHCA_OP_CMP_SWAP) {
			orig = j->cmp;
			__atomic_compare_exchange_n(j->word, &orig, j->arg, 0, __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST);
		} else {
			__atomic_store_n(j->word, j->arg, __ATOMIC_SEQ_CST);
		}
		resp_done_spec(j, orig);
		return resp_send_spec(s, tx, arg);
	}
	return -EINVAL;
}

void resp_done_spec(struct resp_job *j, __u64 orig)
{
	struct xhca_pkt_spec *s = &j->s;

	s->aeth_syndrome = XHCA_AETH_ACK_NO_CREDIT;
	if (j->op == XHCA_OP_ATOMIC_WRITE) {
		s->opcode = XHCA_OPC_RC | XHCA_OP_READ_RESP_ONLY;
		s->payload = NULL;
		s->payload_len = 0;
		s->pad = -1;
		return;
	}
	s->opcode = XHCA_OPC_RC | XHCA_OP_ATOMIC_ACK;
	s->atomic_orig = orig;
}

__u32 resp_msn(const struct xhca_qp_ctx *c, __u16 low)
{
	__u32 now = __atomic_load_n(&c->msn, __ATOMIC_RELAXED);

	return (now - (__u16)(now - low)) & XHCA_PSN_MASK;
}

int resp_ack_spec(const struct xhca_qp_ctx *c, const __u8 *fr, __u32 len, __u32 psn, __u32 msn,
		  __u8 syndrome, struct xhca_pkt_spec *s)
{
	if (resp_reply_spec(fr, len, c, s, XHCA_OPC_RC | XHCA_OP_ACK) < 0)
		return -EINVAL;
	s->psn = psn & XHCA_PSN_MASK;
	s->aeth_msn = msn & XHCA_PSN_MASK;
	s->aeth_syndrome = syndrome;
	return 0;
}

int resp_aeth(const struct xhca_qp_ctx *c, const __u8 *fr, __u32 len, __u32 psn, __u32 msn,
	      __u8 syndrome, resp_tx_fn tx, void *arg)
{
	struct xhca_pkt_spec s;
	int err = resp_ack_spec(c, fr, len, psn, msn, syndrome, &s);

	return err ? err : resp_send_spec(&s, tx, arg);
}
