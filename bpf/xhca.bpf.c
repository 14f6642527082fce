/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca_rx: the receive pipeline of the xhca host channel adapter.
 *
 * Parses Ethernet [VLAN x2] IPv4|IPv6 UDP:4791 BTH and the extension headers
 * the opcode implies, translates the global destination QPN to a local QP
 * context through the QP CAM (US 7,212,547) and runs the inbound header checks
 * in the order RXE uses. Everything that is not RoCEv2 gets XDP_PASS untouched.
 * Every packet increments exactly one reason counter.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <xhca/abi.h>
#include <xhca/wire.h>
#include "parse.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* QP CAM. Key: global QPN (24 bits). Value: local index and generation.
 * Written by xhcad (insert BPF_NOEXIST on create, delete on destroy), read by
 * xhca_rx. max_entries = number of local QPs, set at load (default 4096). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XHCA_MAX_QPS_DEFAULT);
	__type(key, __u32);
	__type(value, struct xhca_cam_val);
} xhca_qp_cam SEC(".maps");

/* Local QP contexts. Key: local index. Mmapable: xhcad writes the
 * configuration through its mapping under the seqcount, xhca_rx reads it
 * and compare-and-swaps rx_psn (the rules are at struct xhca_qp_ctx). Sized
 * like the CAM. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XHCA_MAX_QPS_DEFAULT);
	__type(key, __u32);
	__type(value, struct xhca_qp_ctx);
} xhca_qp_ctx SEC(".maps");

/* Reason counters. Key: enum xhca_reason. Per-CPU, written by xhca_rx, read
 * and reset by xhcad. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XHCA_R_MAX);
	__type(key, __u32);
	__type(value, struct xhca_counter);
} xhca_stats SEC(".maps");

/* Per-QP accepted/dropped counters. Key: local index. Per-CPU, written by
 * xhca_rx, read and zeroed (on create) by xhcad. Sized like the CAM. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XHCA_MAX_QPS_DEFAULT);
	__type(key, __u32);
	__type(value, struct xhca_qp_counter);
} xhca_qp_stats SEC(".maps");

/* P_Key table. Key: P_Key index. Written by xhcad (index 0 is 0xffff), read
 * by xhca_rx for QP1, which accepts any P_Key of the table. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XHCA_PKEY_TBL_LEN);
	__type(key, __u32);
	__type(value, struct xhca_pkey);
} xhca_pkeys SEC(".maps");

/* Flow queue sockets. Key: rx_queue_index * XHCA_FLOWQ_MAX + flow queue.
 * Written by xhcad (one AF_XDP socket per RX queue and flow queue), read by
 * xhca_rx. An empty slot means no socket: drop_no_socket. */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, XHCA_RXQ_MAX * XHCA_FLOWQ_MAX);
	__type(key, __u32);
	__type(value, __u32);
} xhca_xsks SEC(".maps");

/* Flow queue backlog and gate. Key: flow queue. Mmapable: xhca_rx adds to
 * enq and flips the gate, xhcad writes deq and the watermarks (the rules
 * are at struct xhca_flowq). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XHCA_FLOWQ_MAX);
	__type(key, __u32);
	__type(value, struct xhca_flowq);
} xhca_flowq SEC(".maps");

/* Per flow queue counters. Key: flow queue. Per-CPU, written by xhca_rx,
 * read by xhcad. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XHCA_FLOWQ_MAX);
	__type(key, __u32);
	__type(value, struct xhca_flowq_counter);
} xhca_fq_stats SEC(".maps");

/* Host memory: 4 KiB pages, mmapable. Key: page number. xhcad carves
 * receive buffers, queues and memory regions out of it; applications map it
 * read-write. Sized at load (default 64 MiB). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XHCA_HOSTMEM_PAGES_DEFAULT);
	__type(key, __u32);
	__type(value, __u8[XHCA_PAGE_SIZE]);
} xhca_hostmem SEC(".maps");

/* What the parser learnt about a RoCEv2 packet. */
struct roce_pkt {
	__u8 saddr[16] __attribute__((aligned(8))); /* v4-mapped for IPv4 */
	__u8 daddr[16];
	__u32 qpn;
	__u32 psn;
	__u32 qkey;	/* DETH, UD only */
	__u32 dma_len;	/* RETH, READ requests only */
	__u16 pkey;
	__u16 op_flags;
	__u16 payload_off; /* from the start of the frame */
	__u16 payload_len;
	__u8 opcode;
	__u8 mflags;	/* XHCA_MF_* for the metadata */
};

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

/* Response packets an RDMA READ request will get: its PSN cost. */
static __always_inline __u32 read_npkts(__u32 len, __u8 mtu_shift)
{
	__u64 n;

	if (mtu_shift < 8 || mtu_shift > 12)
		mtu_shift = 10;
	n = ((__u64)len + (1u << mtu_shift) - 1) >> mtu_shift;
	return n ? (__u32)n : 1;
}

/*
 * The seqcount read side. x86 keeps loads in program order (TSO), so
 * stopping the compiler is enough; elsewhere a fully ordered atomic read of
 * seq orders the copies between the two reads.
 */
#if defined(__TARGET_ARCH_x86)
#define seq_read(p) (*(volatile __u32 *)(p))
#define load_barrier() asm volatile("" ::: "memory")
#else
#define seq_read(p) __sync_fetch_and_add((p), 0)
#define load_barrier() do { } while (0)
#endif
#define READ_ONCE32(x) (*(volatile __u32 *)&(x))
#define READ_ONCE64(x) (*(volatile __u64 *)&(x))

/* Retries of a context read that met a writer, and of a PSN update that
 * lost a race: a writer's section is a few stores, so more means xhcad was
 * preempted inside one. */
#define CTX_TRIES 4

/* The configuration xhca_rx checks, copied out of the context. */
struct qp_view {
	__u8 local_ip[16] __attribute__((aligned(8)));
	__u8 remote_ip[16];
	__u32 gen;
	__u32 gqpn;
	__u32 qkey;
	__u16 pkey;
	__u8 valid;
	__u8 type;
	__u8 state;
	__u8 action;
	__u8 mtu_shift;
	__u8 flowq;
};

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
		v->pkey = c->pkey;
		v->qkey = c->qkey;
		copy16(v->local_ip, c->local_ip);
		copy16(v->remote_ip, c->remote_ip);
		load_barrier();
		if (seq_read(&c->seq) == seq)
			return 0;
	}
	return -1;
}

/* RC request: in sequence advances the expected PSN by cost (1, or a READ's
 * response count); before it is a duplicate, after it a gap. Another CPU may
 * accept a packet of the same QP meanwhile: a lost compare-and-swap looks
 * again at what it wrote. */
static __always_inline int rc_psn(struct xhca_qp_ctx *c, __u32 psn, __u32 cost)
{
	for (int i = 0; i < CTX_TRIES; i++) {
		__u32 cur = READ_ONCE32(c->rx_psn);
		__u32 e = cur & XHCA_RXPSN_MASK;
		int d = xhca_psn_cmp(psn, e);

		if (d < 0)
			return XHCA_R_DROP_PSN_DUP;
		if (d > 0)
			return XHCA_R_DROP_PSN_OOS;
		if (__sync_val_compare_and_swap(&c->rx_psn, cur,
						(cur & ~XHCA_RXPSN_MASK) |
							((e + cost) & XHCA_RXPSN_MASK)) == cur)
			return -1;
	}
	return XHCA_R_DROP_QP_BUSY;
}

/* UC: no duplicates, but a gap breaks the message in progress: drop its
 * packets until the next FIRST/ONLY, which starts clean at any PSN. */
static __always_inline int uc_psn(struct xhca_qp_ctx *c, __u32 psn, int start)
{
	for (int i = 0; i < CTX_TRIES; i++) {
		__u32 cur = READ_ONCE32(c->rx_psn), next;
		int broken = (cur & XHCA_RXPSN_UC_DROP) || psn != (cur & XHCA_RXPSN_MASK);
		int r = -1;

		if (broken && !start) {
			next = cur | XHCA_RXPSN_UC_DROP;
			r = XHCA_R_DROP_UC_GAP;
			if (next == cur)
				return r;
		} else {
			next = (psn + 1) & XHCA_RXPSN_MASK;
		}
		if (__sync_val_compare_and_swap(&c->rx_psn, cur, next) == cur)
			return r;
	}
	return XHCA_R_DROP_QP_BUSY;
}

/*
 * Admission to a flow queue, before the PSN commits the packet: it needs a
 * socket on this RX queue, a flow queue under its high watermark (with
 * hysteresis down to the low one), and room for the metadata block.
 */
static __always_inline int flowq_admit(struct xdp_md *ctx, __u8 flowq, __u32 *key)
{
	__u32 fq = flowq & (XHCA_FLOWQ_MAX - 1);
	struct xhca_flowq_counter *fc = bpf_map_lookup_elem(&xhca_fq_stats, &fq);
	struct xhca_flowq *q;
	__u64 backlog;

	*key = ctx->rx_queue_index * XHCA_FLOWQ_MAX + fq;
	if (ctx->rx_queue_index >= XHCA_RXQ_MAX || !bpf_map_lookup_elem(&xhca_xsks, key)) {
		if (fc)
			fc->nosock_drops++;
		return XHCA_R_DROP_NO_SOCKET;
	}
	q = bpf_map_lookup_elem(&xhca_flowq, &fq);
	if (!q)
		return XHCA_R_DROP_NO_SOCKET;
	backlog = READ_ONCE64(q->enq) - READ_ONCE64(q->deq);
	if (q->gate ? backlog > q->low : (q->high && backlog >= q->high)) {
		if (!q->gate) {
			q->gate = 1;
			__sync_fetch_and_add(&q->gate_closes, 1);
		}
		if (fc)
			fc->gate_drops++;
		return XHCA_R_DROP_FLOWQ_GATE;
	}
	if (q->gate)
		q->gate = 0;
	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(struct xhca_rx_meta)))
		return XHCA_R_DROP_META;
	return -1;
}

/* Writes the metadata block and redirects to the flow queue's socket. */
static __always_inline int flowq_send(struct xdp_md *ctx, const struct roce_pkt *p, __u32 lidx,
				      __u32 gen, __u8 flowq, __u32 key, __u64 bytes)
{
	void *data = (void *)(long)ctx->data;
	struct xhca_rx_meta *m = (void *)(long)ctx->data_meta;
	__u32 fq = flowq & (XHCA_FLOWQ_MAX - 1);
	struct xhca_flowq_counter *fc;
	struct xhca_flowq *q;

	if ((void *)(m + 1) > data)
		return XHCA_R_DROP_META;
	m->rx_ns = bpf_ktime_get_ns();
	m->gqpn = p->qpn;
	m->lidx = lidx;
	m->gen = gen;
	m->psn = p->psn;
	m->payload_off = p->payload_off;
	m->payload_len = p->payload_len;
	m->opcode = p->opcode;
	m->flags = p->mflags;
	m->flowq = (__u8)fq;
	m->reason = XHCA_R_TO_FLOWQ;
	q = bpf_map_lookup_elem(&xhca_flowq, &fq);
	if (q)
		__sync_fetch_and_add(&q->enq, 1);
	fc = bpf_map_lookup_elem(&xhca_fq_stats, &fq);
	if (fc) {
		fc->packets++;
		fc->bytes += bytes;
	}
	return bpf_redirect_map(&xhca_xsks, key, XDP_DROP) == XDP_REDIRECT ? XHCA_R_TO_FLOWQ
									 : XHCA_R_DROP_NO_SOCKET;
}

/* The header checks against the QP context, in RXE's order. Returns the
 * reason; *qp_hit says the context matched, so the per-QP counters apply. */
static __always_inline int check_qp(struct xdp_md *ctx, struct xhca_qp_ctx *c,
				    const struct xhca_cam_val *cv, const struct roce_pkt *p,
				    int *qp_hit, struct qp_view *vout, __u32 *key)
{
	__u16 f = p->op_flags;
	struct qp_view v;
	int r;

	if (ctx_view(c, &v))
		return XHCA_R_DROP_QP_BUSY;
	if (!v.valid || v.gqpn != p->qpn || v.gen != cv->gen)
		return XHCA_R_DROP_STALE;
	*qp_hit = 1;
	if (f & XHCA_H_CNP)
		return XHCA_R_CNP;
	if ((p->opcode >> 5) != v.type)
		return XHCA_R_DROP_OPCODE_TYPE;
	if (v.state == XHCA_QPS_RESET || v.state == XHCA_QPS_INIT || v.state >= XHCA_QPS_ERR ||
	    ((f & XHCA_O_RESP) && v.state == XHCA_QPS_RTR))
		return XHCA_R_DROP_QP_STATE;
	if (v.type != XHCA_QPT_UD &&
	    (!ip_eq(p->daddr, v.local_ip) || !ip_eq(p->saddr, v.remote_ip)))
		return XHCA_R_DROP_ADDR;
	if (p->qpn == XHCA_QPN_GSI ? !pkey_in_table(p->pkey) : !xhca_pkey_match(p->pkey, v.pkey))
		return XHCA_R_DROP_PKEY;
	if (v.type == XHCA_QPT_UD &&
	    p->qkey != (p->qpn == XHCA_QPN_GSI ? XHCA_GSI_QKEY : v.qkey))
		return XHCA_R_DROP_QKEY;
	/* A flow queue that cannot take the packet refuses it now: after the
	 * PSN update nothing may. */
	if (v.action == XHCA_ACT_HOST) {
		r = flowq_admit(ctx, v.flowq, key);
		if (r >= 0)
			return r;
	}
	/* Last: the PSN update is the only write. */
	*vout = v;
	if (v.type == XHCA_QPT_RC && (f & XHCA_O_REQ)) {
		r = rc_psn(c, p->psn, (f & XHCA_O_READ) ? read_npkts(p->dma_len, v.mtu_shift) : 1);
		if (r >= 0)
			return r;
	} else if (v.type == XHCA_QPT_UC) {
		r = uc_psn(c, p->psn, !!(f & XHCA_O_START));
		if (r >= 0)
			return r;
	}
	if (v.action == XHCA_ACT_HOST)
		return XHCA_R_TO_FLOWQ;
	return v.action == XHCA_ACT_DROP ? XHCA_R_ACCEPT_DROP : XHCA_R_ACCEPT_PASS;
}

/* Parses the packet up to the BTH and its extension headers. Returns a
 * reason when the verdict is already known, or -1 to go on to the CAM. */
static __always_inline int parse(struct xdp_md *ctx, struct roce_pkt *p)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct hdr_cursor cur = { .pos = data };
	const struct xhca_opinfo *oi;
	struct xhca_bth *bth;
	struct udphdr *udp;
	__u32 avail, paylen;
	__u8 pad;
	int r;

	r = parse_l2_l3(&cur, end, p->saddr, p->daddr, &udp);
	if (r >= 0)
		return r;

	bth = (void *)(udp + 1);
	if ((void *)(bth + 1) > end)
		return XHCA_R_DROP_TRUNCATED;
	p->opcode = bth->opcode;
	/* Known opcode first, before any length arithmetic (RXE CVE-2026-46133). */
	oi = &xhca_opinfo_tbl[p->opcode];
	if (!(oi->flags & XHCA_O_KNOWN))
		return XHCA_R_DROP_UNKNOWN_OPCODE;
	p->op_flags = oi->flags;
	avail = (__u32)(end - (void *)udp);
	paylen = bpf_ntohs(udp->len);
	/* Ethernet may pad short frames: the UDP length is the packet's extent. */
	if (paylen > avail)
		return XHCA_R_DROP_TRUNCATED;
	pad = (bth->flags & XHCA_BTH_PAD_MASK) >> XHCA_BTH_PAD_SHIFT;
	if (paylen < sizeof(*udp) + oi->hdr_len + pad + XHCA_ICRC_LEN)
		return XHCA_R_DROP_BAD_LENGTH;
	if (bth->flags & XHCA_BTH_TVER_MASK)
		return XHCA_R_DROP_BAD_TVER;

	p->pkey = bpf_ntohs(bth->pkey);
	p->qpn = bpf_ntohl(bth->qpn) & XHCA_QPN_MASK;
	p->psn = bpf_ntohl(bth->apsn) & XHCA_PSN_MASK;
	p->payload_off = (__u16)((void *)bth - data + oi->hdr_len);
	p->payload_len = (__u16)(paylen - sizeof(*udp) - oi->hdr_len - pad - XHCA_ICRC_LEN);
	p->mflags = ((bth->flags & XHCA_BTH_SE) ? XHCA_MF_SE : 0) |
		    ((bth->apsn & bpf_htonl(XHCA_BTH_ACKREQ)) ? XHCA_MF_ACKREQ : 0) |
		    ((bth->qpn & bpf_htonl(XHCA_BTH_FECN)) ? XHCA_MF_ECN : 0) |
		    (is_v4_mapped(p->daddr) ? 0 : XHCA_MF_IPV6);
	if (oi->flags & XHCA_H_DETH) {
		struct xhca_deth *deth = (void *)bth + xhca_deth_off();

		if ((void *)(deth + 1) > end)
			return XHCA_R_DROP_TRUNCATED;
		p->qkey = bpf_ntohl(deth->qkey);
	}
	if (oi->flags & XHCA_O_READ) {
		struct xhca_reth *reth = (void *)bth + xhca_reth_off(oi->flags);

		if ((void *)(reth + 1) > end)
			return XHCA_R_DROP_TRUNCATED;
		p->dma_len = bpf_ntohl(reth->len);
	}
	return -1;
}

static __always_inline void count(__u32 reason, __u64 bytes, __u32 lidx, int qp_hit)
{
	struct xhca_counter *c = bpf_map_lookup_elem(&xhca_stats, &reason);
	struct xhca_qp_counter *q;

	if (c) {
		c->packets++;
		c->bytes += bytes;
	}
	if (!qp_hit)
		return;
	q = bpf_map_lookup_elem(&xhca_qp_stats, &lidx);
	if (!q)
		return;
	if (reason == XHCA_R_ACCEPT_PASS || reason == XHCA_R_ACCEPT_DROP || reason == XHCA_R_CNP ||
	    reason == XHCA_R_TO_FLOWQ) {
		q->accepted++;
		q->accepted_bytes += bytes;
	} else {
		q->dropped++;
		q->dropped_bytes += bytes;
	}
}

SEC("xdp")
int xhca_rx(struct xdp_md *ctx)
{
	__u64 bytes = ctx->data_end - ctx->data;
	struct roce_pkt p = {};
	struct qp_view v = {};
	struct xhca_cam_val *cv;
	struct xhca_qp_ctx *c;
	int qp_hit = 0;
	__u32 lidx = 0, key = 0;
	int r;

	r = parse(ctx, &p);
	if (r >= 0)
		goto out;
	if (p.qpn == XHCA_QPN_SMI) {
		r = XHCA_R_DROP_QP0;
		goto out;
	}
	if (p.qpn == XHCA_QPN_MCAST) {
		r = XHCA_R_DROP_MCAST;
		goto out;
	}
	cv = bpf_map_lookup_elem(&xhca_qp_cam, &p.qpn);
	if (!cv) {
		r = XHCA_R_DROP_CAM_MISS;
		goto out;
	}
	lidx = cv->lidx;
	c = bpf_map_lookup_elem(&xhca_qp_ctx, &lidx);
	if (!c) {
		r = XHCA_R_DROP_STALE;
		goto out;
	}
	r = check_qp(ctx, c, cv, &p, &qp_hit, &v, &key);
	if (r == XHCA_R_TO_FLOWQ)
		r = flowq_send(ctx, &p, lidx, v.gen, v.flowq, key, bytes);
out:
	count(r, bytes, lidx, qp_hit);
	switch (r) {
	case XHCA_R_PASS_NOT_ROCE:
	case XHCA_R_PASS_TRUNCATED:
	case XHCA_R_PASS_VLAN_DEPTH:
	case XHCA_R_PASS_IPV6_EXT:
	case XHCA_R_PASS_IP_FRAG:
	case XHCA_R_ACCEPT_PASS:
		return XDP_PASS;
	case XHCA_R_TO_FLOWQ:
		return XDP_REDIRECT;
	default:
		return XDP_DROP;
	}
}
