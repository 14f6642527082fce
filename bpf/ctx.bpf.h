/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A QP's context and a memory region as xhca_rx reads them: copied out
 * under their seqcounts (ctx_view, mr_view; the write side is
 * user/lib/qpctx.c), the R_Key checks (mr_check), and the small facts of
 * the configuration (addresses, P_Keys, the path MTU).
 */
#ifndef XHCA_CTX_BPF_H
#define XHCA_CTX_BPF_H

#include "common.bpf.h"
#include "maps.bpf.h"
#include "parse.bpf.h"

static __always_inline int ip_eq(const __u8 *a, const __u8 *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;

	return x[0] == y[0] && x[1] == y[1];
}

/* QP1 accepts any P_Key in the table. */
static __always_inline int pkey_in_table(__u16 pkey)
{
	for (__u32 i = 0; i < XHCA_PKEY_TBL_LEN; i++) {
		__u32 k = i;
		struct xhca_pkey *e = bpf_map_lookup_elem(&xhca_pkeys, &k);

		if (e && xhca_pkey_match(pkey, e->pkey))
			return 1;
	}
	return 0;
}

static __always_inline __u32 mtu_of(__u8 mtu_shift)
{
	return mtu_shift >= 8 && mtu_shift <= 12 ? 1u << mtu_shift : 1024;
}

/* Response packets an RDMA READ request will get: its PSN cost. */
static __always_inline __u32 read_npkts(__u32 len, __u8 mtu_shift)
{
	__u32 shift = mtu_shift >= 8 && mtu_shift <= 12 ? mtu_shift : 10;
	__u64 n = ((__u64)len + (1u << shift) - 1) >> shift;

	return n ? (__u32)n : 1;
}

/* Copies the configuration of c into v, consistently. Returns 0, or -1 if a
 * write section overlapped every try. */
static __always_inline int ctx_view(struct xhca_qp_ctx *c, struct qp_view *v)
{
	for (int i = 0; i < CTX_TRIES; i++) {
		__u32 seq = seq_read(&c->seq);

		if (seq & 1)
			continue;
		load_barrier();
		v->gen = c->gen;
		v->gqpn = c->gqpn;
		v->valid = c->valid;
		v->type = c->type;
		v->state = c->state;
		v->action = c->action;
		v->mtu_shift = c->mtu_shift;
		v->flowq = c->flowq;
		v->flags = c->flags;
		v->access = c->access;
		v->pkey = c->pkey;
		v->qkey = c->qkey;
		v->pd = c->pd;
		v->ack_every = c->ack_every;
		copy16(v->local_ip, c->local_ip);
		copy16(v->remote_ip, c->remote_ip);
		load_barrier();
		if (seq_read(&c->seq) == seq)
			return 0;
	}
	return -1;
}

/* Copies MR idx into m under its seqcount. Returns 0 for a valid region,
 * or a reason. */
static __always_inline int mr_view(__u32 idx, struct mr_view *m)
{
	struct xhca_mr_ctx *e;

	if (!idx)
		return XHCA_R_DROP_MR_RKEY;
	e = bpf_map_lookup_elem(&xhca_mr, &idx);
	if (!e)
		return XHCA_R_DROP_MR_RKEY;
	for (int i = 0; i < CTX_TRIES; i++) {
		__u32 seq = seq_read(&e->seq);

		if (seq & 1)
			continue;
		load_barrier();
		m->iova = e->iova;
		m->length = e->length;
		m->base = e->base;
		m->gen = e->gen;
		m->access = e->access;
		m->pd = e->pd;
		m->valid = e->valid;
		m->key = e->key;
		m->flags = e->flags;
		m->qpn = e->qpn;
		m->owner = e->owner;
		m->alloc = e->alloc;
		m->aoff = e->aoff;
		load_barrier();
		if (seq_read(&e->seq) == seq)
			return m->valid ? 0 : XHCA_R_DROP_MR_RKEY;
	}
	return XHCA_R_DROP_QP_BUSY;
}

/* The R_Key checks of RXE's check_rkey and lookup_mr: the key byte, the
 * PD, every access bit needed, and the bounds of the whole message,
 * overflow-safe. Returns 0 or the reason. */
static __always_inline int mr_check(const struct roce_pkt *p, const struct qp_view *v,
				    __u32 need, struct mr_view *m)
{
	int r = mr_view(p->rkey >> 8, m);

	if (r)
		return r;
	if (m->key != (p->rkey & 0xff))
		return XHCA_R_DROP_MR_KEY;
	if (m->pd != v->pd)
		return XHCA_R_DROP_MR_PD;
	if ((m->access & need) != need)
		return XHCA_R_DROP_MR_ACCESS;
	if ((m->flags & XHCA_MRF_MW_QP) && m->qpn != v->gqpn)
		return XHCA_R_DROP_MW_QP;
	if (p->va < m->iova || (__u64)p->dma_len > m->length ||
	    p->va - m->iova > m->length - p->dma_len)
		return XHCA_R_DROP_MR_BOUNDS;
	return 0;
}

#endif /* XHCA_CTX_BPF_H */
