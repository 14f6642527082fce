/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The proxy QP (US 9,069,633): the filters that offload a message at its
 * first packet (xhca_pf_eval, proxy_decide), and the records of WRITEs
 * placed whole for the proxy's reorderer (xhca_px_record). xhcad's side is
 * user/xhcad/filter.c, proxy.c and proxy_thread.c (the records read).
 */
#ifndef XHCA_PROXY_BPF_H
#define XHCA_PROXY_BPF_H

#include "common.bpf.h"
#include "maps.bpf.h"

/* What the proxy can execute, by opcode: XHCA_PF_OP_*, 0 for the rest. */
static __always_inline __u8 pf_op_class(__u8 opcode)
{
	__u8 op = opcode & 0x1f;

	if (op <= XHCA_OP_SEND_ONLY_IMM || op == XHCA_OP_SEND_LAST_INV ||
	    op == XHCA_OP_SEND_ONLY_INV)
		return XHCA_PF_OP_SEND;
	if (op == XHCA_OP_READ_REQ)
		return XHCA_PF_OP_READ;
	if (op == XHCA_OP_CMP_SWAP)
		return XHCA_PF_OP_CMP_SWAP;
	if (op == XHCA_OP_FETCH_ADD)
		return XHCA_PF_OP_FETCH_ADD;
	return 0;
}

/* The size a filter compares: the whole message's where its first packet
 * says it (RETH DMA length, 8 for an ATOMIC, an ONLY's payload). A
 * multi-packet SEND's is not known at its FIRST: above any threshold. */
static __always_inline __u32 pf_msg_size(const struct roce_pkt *p)
{
	if (p->op_flags & XHCA_H_ATMETH)
		return 8;
	if (p->op_flags & XHCA_H_RETH)
		return p->dma_len;
	if (p->op_flags & XHCA_O_END)
		return p->payload_len;
	return 0xffffffffu;
}

/* The TCAM entry: the first match_len payload bytes against value, bits set
 * in mask ignored. A payload shorter than match_len does not match. */
static __always_inline int pf_payload_match(struct xdp_md *ctx, const struct roce_pkt *p,
					    const struct xhca_pfilter *f)
{
	__u32 n = f->match_len;
	__u8 b[XHCA_PFILT_MATCH_MAX];

	if (!size_in(n, XHCA_PFILT_MATCH_MAX) || p->payload_len < n ||
	    bpf_xdp_load_bytes(ctx, p->payload_off, b, n))
		return 0;
	/* no call inside the loop: Linux 6.1's verifier refuses a loop
	 * whose back edge lands on one */
#pragma clang loop unroll(disable)
	for (int i = 0; i < XHCA_PFILT_MATCH_MAX; i++) {
		if (i >= (int)n)
			break;
		if ((b[i] ^ f->value[i]) & ~f->mask[i])
			return 0;
	}
	return 1;
}

static __always_inline int pf_match(struct xdp_md *ctx, const struct xhca_pfilter *f,
				    const struct roce_pkt *p, __u8 cls, __u32 size)
{
	__u16 o = p->op_flags;

	if (!f->id || !(f->ops & cls))
		return 0;
	if ((f->flags & XHCA_PF_SIZE_BELOW) && size >= f->size)
		return 0;
	if ((f->flags & XHCA_PF_SIZE_ABOVE) && size < f->size)
		return 0;
	if ((f->flags & XHCA_PF_SINGLE) && !(o & XHCA_O_END))
		return 0;
	if ((f->flags & (XHCA_PF_RKEY | XHCA_PF_VA)) && !(o & (XHCA_H_RETH | XHCA_H_ATMETH)))
		return 0;
	if ((f->flags & XHCA_PF_RKEY) && p->rkey != f->rkey)
		return 0;
	if ((f->flags & XHCA_PF_VA) &&
	    (p->va < f->va_lo || p->va >= f->va_hi || size > f->va_hi - p->va))
		return 0;
	if ((f->flags & XHCA_PF_SQPN) && (!(o & XHCA_H_DETH) || p->sqpn != f->sqpn))
		return 0;
	if ((f->flags & XHCA_PF_MATCH) &&
	    pf_payload_match(ctx, p, f) == !!(f->flags & XHCA_PF_INVERT))
		return 0;
	return 1;
}

/* Does one of the QP's filters match the message? A global function: the
 * verifier checks it once, not on every path of xhca_rx. */
__noinline int xhca_pf_eval(struct xdp_md *ctx, const struct xhca_pfilter_set *fs,
			    const struct roce_pkt *p)
{
	__u32 size;
	__u8 cls;

	if (!p || !fs)
		return 0;
	cls = pf_op_class(p->opcode);
	if (!cls)
		return 0;
	size = pf_msg_size(p);
	/* unrolled: Linux 6.1's verifier refuses the loop clang makes, which
	 * enters its header by a plain instruction's fall-through */
#pragma unroll
	for (int i = 0; i < XHCA_PFILT_PER_QP; i++)
		if (pf_match(ctx, &fs->f[i], p, cls, size))
			return 1;
	return 0;
}

/*
 * At the first packet of a proxy QP's message: does a filter offload it?
 * Yes when one of the QP's filters matches, unless the load limit holds it
 * back: the proxy queue's gate is closed ("no offload mode", until the
 * proxy catches up to the low watermark). Counted.
 */
static __always_inline int proxy_decide(struct xdp_md *ctx, __u32 lidx, __u32 gen,
					const struct roce_pkt *p)
{
	__u32 zero = 0, fq = XHCA_FLOWQ_PROXY;
	struct xhca_proxy_counter *pc = bpf_map_lookup_elem(&xhca_px_stats, &zero);
	struct xhca_flowq *q = bpf_map_lookup_elem(&xhca_flowq, &fq);
	struct xhca_pfilter_set *fs = bpf_map_lookup_elem(&xhca_pfilt, &lidx);
	__u64 backlog;

	if (!pc || !q)
		return 0;
	if (!fs || fs->gen != gen || !xhca_pf_eval(ctx, fs, p)) {
		pc->normal++;
		return 0;
	}
	backlog = READ_ONCE64(q->enq) - READ_ONCE64(q->deq);
	if (q->gate ? backlog > q->low : (q->high && backlog >= q->high)) {
		/* no offload mode, from high down to low, as a flow queue's gate */
		if (!q->gate) {
			q->gate = 1;
			__sync_fetch_and_add(&q->gate_closes, 1);
		}
		pc->no_offload++;
		return 0;
	}
	if (q->gate)
		q->gate = 0;
	pc->offloaded++;
	return 1;
}

/* A WRITE xhca_rx placed whole, of a QP on a proxy CQ: its record for the
 * reorderer, which releases the completions of that CQ in order. */
__noinline int xhca_px_record(__u32 lidx, __u32 gen, __u32 qpn, __u32 csn, __u32 len)
{
	__u32 zero = 0;
	struct xhca_proxy_counter *pc = bpf_map_lookup_elem(&xhca_px_stats, &zero);
	struct xhca_proxy_rec *r;

	if (!pc)
		return 0;
	r = bpf_ringbuf_reserve(&xhca_proxy_rb, sizeof(*r), 0);
	if (!r) {
		pc->record_fail++;
		return 0;
	}
	r->lidx = lidx;
	r->gen = gen;
	r->gqpn = qpn;
	r->csn = csn;
	r->len = len;
	r->pad = 0;
	r->rx_ns = bpf_ktime_get_ns();
	bpf_ringbuf_submit(r, 0);
	pc->records++;
	return 0;
}

#endif /* XHCA_PROXY_BPF_H */
