/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Flow queues (AF_XDP sockets, US 8,155,135): admission, before the PSN
 * commits a packet (flowq_admit), and the redirect with the metadata block
 * (flowq_send).
 */
#ifndef XHCA_FLOWQ_BPF_H
#define XHCA_FLOWQ_BPF_H

#include "common.bpf.h"
#include "maps.bpf.h"

/*
 * Admission to a flow queue, before the PSN commits the packet: it needs a
 * socket on this RX queue, a flow queue under its high watermark (with
 * hysteresis down to the low one), and room for the metadata block. The
 * flow queue's drop counters move with the packet's final reason
 * (count_flowq): a refusal here need not be the packet's verdict (a WRITE
 * placed here goes on without its ACK; a later check may drop it).
 */
static __always_inline int flowq_admit(struct xdp_md *ctx, __u8 flowq, struct verdict *vd)
{
	__u32 fq = flowq & (XHCA_FLOWQ_MAX - 1);
	/* (the key on the stack: Linux 6.1 takes no other memory for one) */
	__u32 key = ctx->rx_queue_index * XHCA_FLOWQ_MAX + fq;
	struct xhca_flowq *q;
	__u64 backlog;

	vd->fq_tried = 1;
	vd->fq_drop = (__u8)fq;
	vd->key = key;
	if (ctx->rx_queue_index >= XHCA_RXQ_MAX || !bpf_map_lookup_elem(&xhca_xsks, &key))
		return XHCA_R_DROP_NO_SOCKET;
	q = bpf_map_lookup_elem(&xhca_flowq, &fq);
	if (!q)
		return XHCA_R_DROP_NO_SOCKET;
	backlog = READ_ONCE64(q->enq) - READ_ONCE64(q->deq);
	if (q->gate ? backlog > q->low : (q->high && backlog >= q->high)) {
		if (!q->gate) {
			q->gate = 1;
			__sync_fetch_and_add(&q->gate_closes, 1);
		}
		return XHCA_R_DROP_FLOWQ_GATE;
	}
	if (q->gate)
		q->gate = 0;
	if (meta_clear(ctx) || bpf_xdp_adjust_meta(ctx, -(int)sizeof(struct xhca_rx_meta)))
		return XHCA_R_DROP_META;
	return -1;
}

/* Writes the metadata block and redirects to the flow queue's socket. */
static __always_inline int flowq_send(struct xdp_md *ctx, const struct roce_pkt *p,
				      const struct verdict *vd, int reason, __u64 bytes,
				      __u64 rx_ns)
{
	void *data = (void *)(long)ctx->data;
	struct xhca_rx_meta *m = (void *)(long)ctx->data_meta;
	__u32 fq = vd->flowq & (XHCA_FLOWQ_MAX - 1);
	struct xhca_flowq_counter *fc;
	struct xhca_flowq *q;

	if ((void *)(m + 1) > data)
		return XHCA_R_DROP_META;
	m->rx_ns = rx_ns;
	m->gqpn = p->qpn;
	m->lidx = (__u16)vd->lidx;
	m->csn = (__u16)vd->csn;
	m->gen = vd->gen;
	m->psn = p->psn;
	if ((vd->mflags & (XHCA_MF_PLACED | XHCA_MF_MSN)) || reason == XHCA_R_DUP_TO_FLOWQ ||
	    reason == XHCA_R_SEQ_NAK_TO_FLOWQ) {
		m->msg_len = vd->msg_len;
	} else {
		m->payload_off = p->payload_off;
		m->payload_len = p->payload_len;
	}
	m->opcode = p->opcode;
	m->flags = p->mflags | vd->mflags;
	m->flowq = (__u8)fq;
	/* (xlate_nocopy is counted apart; xhcad takes it as to_xlate) */
	m->reason = (__u8)(reason == XHCA_R_XLATE_NOCOPY ? XHCA_R_TO_XLATE : reason);
	/* counted once the redirect is set up: a frame that goes nowhere
	 * must not grow the backlog xhcad drains */
	if (bpf_redirect_map(&xhca_xsks, vd->key, XDP_DROP) != XDP_REDIRECT)
		return XHCA_R_DROP_NO_SOCKET;
	q = bpf_map_lookup_elem(&xhca_flowq, &fq);
	if (q)
		__sync_fetch_and_add(&q->enq, 1);
	fc = bpf_map_lookup_elem(&xhca_fq_stats, &fq);
	if (fc) {
		fc->packets++;
		fc->bytes += bytes;
	}
	return reason;
}

#endif /* XHCA_FLOWQ_BPF_H */
