/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca_rx: the receive pipeline of the xhca host channel adapter.
 *
 * Parses Ethernet [VLAN x2] IPv4|IPv6 UDP:4791 BTH and the extension headers
 * the opcode implies, translates the global destination QPN to a local QP
 * context through the QP CAM (US 7,212,547) and runs the inbound header checks
 * in the order RXE uses. Everything that is not RoCEv2 gets XDP_PASS untouched.
 * Every packet increments exactly one reason counter.
 *
 * For QPs that deliver to the host (action host), RDMA requests are checked
 * against the memory region their R_Key names. A WRITE into a pre-translated
 * region is placed in host memory here (US 9,336,158); one into another region
 * goes to xhcad's translation manager. SENDs, READs, ATOMICs and the
 * completion of a WRITE with immediate go to the QP's flow queue (AF_XDP,
 * US 8,155,135).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <xhca/abi.h>
#include <xhca/wire.h>
#include "parse.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* kfuncs (bpf_dynptr_copy: kernel 6.15 and later): copy packet bytes into
 * host memory, bounds checked at run time. Weak: on an older kernel libbpf
 * resolves them to 0, the verifier drops the calls as dead code, and a WRITE
 * that needs them goes to xhcad (can_copy). Only bpf_dynptr_copy's address
 * is ever taken: kernels before 6.4 refuse the address of a kfunc they
 * have, and bpf_dynptr_from_xdp is older than bpf_dynptr_copy. */
extern int bpf_dynptr_from_xdp(struct xdp_md *x, __u64 flags,
			       struct bpf_dynptr *ptr__uninit) __ksym __weak;
extern int bpf_dynptr_copy(struct bpf_dynptr *dst_ptr, __u32 dst_off, struct bpf_dynptr *src_ptr,
			   __u32 src_off, __u32 size) __ksym __weak;

#ifndef bpf_ksym_exists /* libbpf 1.2's bpf_helpers.h; Debian 12 has 1.1 */
#define bpf_ksym_exists(sym) (!!(sym))
#endif

/* Set by xhcad (--no-kfuncs): xhca_rx behaves as on a kernel without the
 * kfuncs, so the fallback is tested on any kernel (the unit tests flip it). */
volatile __u8 xhca_no_kfuncs;

/* Whether place() may copy a piece that is not at a multiple of 1 KiB in
 * its page: without the kfunc, a constant for the verifier, which drops the
 * path it rules out. */
static __always_inline int can_copy(void)
{
	return !xhca_no_kfuncs && bpf_ksym_exists(bpf_dynptr_copy);
}

/* Whether 1 <= n <= max, tested so that the verifier learns both bounds of
 * n itself (a helper's size): each bound on its own, n hidden from clang
 * before each (it would drop a check it can prove, or test n - 1 in another
 * register, which tells the verifier nothing of n); the lower one signed
 * (from "!= 0" Linux 6.1's verifier learns nothing). */
#define size_in(n, max)                                                  \
	({                                                               \
		int ok_;                                                 \
		asm volatile("" : "+r"(n));                              \
		ok_ = (n) <= (max);                                      \
		if (ok_) {                                               \
			asm volatile("" : "+r"(n));                      \
			ok_ = (int)(n) >= 1;                             \
		}                                                        \
		ok_;                                                     \
	})

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
	__uint(max_entries, XHCA_RXQ_MAX * XHCA_FLOWQ_MAX + 1); /* + the replication port's */
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

/* A block of host memory: XHCA_BLOCK_PAGES pages of 4 KiB, mmapable, one
 * owner's (a session's, or xhcad's own): the application maps only its own
 * blocks. xhcad creates them. */
struct hm_block {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XHCA_BLOCK_PAGES);
	__type(key, __u32);
	__type(value, __u8[XHCA_PAGE_SIZE]);
};

/* Host memory: its blocks. Key: block number (page >> XHCA_BLOCK_SHIFT);
 * an empty slot is memory no one holds. Sized at load (default 256 MiB). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, XHCA_HOSTMEM_PAGES_DEFAULT / XHCA_BLOCK_PAGES);
	__type(key, __u32);
	__array(values, struct hm_block);
} xhca_hostmem SEC(".maps");


/* Memory regions. Key: MR index (rkey >> 8; 0 is never used). Mmapable:
 * xhcad writes an entry through its mapping under the seqcount (struct
 * xhca_mr), xhca_rx reads it. Sized at load (default 4096). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XHCA_MR_MAX_DEFAULT);
	__type(key, __u32);
	__type(value, struct xhca_mr_ctx);
} xhca_mr SEC(".maps");

/* Events for xhcad (struct xhca_event): a QP that went to the error state.
 * Written by xhca_rx, read by xhcad. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} xhca_events SEC(".maps");

/* Proxy QP filters. Key: local index. Written by xhcad (whole values),
 * read by xhca_rx at the first packet of a proxy QP's message. Sized like
 * the CAM. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XHCA_MAX_QPS_DEFAULT);
	__type(key, __u32);
	__type(value, struct xhca_pfilter_set);
} xhca_pfilt SEC(".maps");

/* Proxy counters (one entry). Per-CPU, written by xhca_rx. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xhca_proxy_counter);
} xhca_px_stats SEC(".maps");

/* Completion records for xhcad's proxy (struct xhca_proxy_rec): WRITEs of
 * QPs on proxy CQs that xhca_rx placed whole. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} xhca_proxy_rb SEC(".maps");

/* Multicast groups. Key: MGID. Written by xhcad (whole values), read by
 * xhca_rx. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XHCA_MCAST_GROUPS);
	__type(key, struct xhca_mgid);
	__type(value, struct xhca_mcast_grp);
} xhca_mcast SEC(".maps");

/* Per group counters. Key: group index. Per-CPU, written by xhca_rx. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XHCA_MCAST_GROUPS);
	__type(key, __u32);
	__type(value, struct xhca_mcast_counter);
} xhca_mc_stats SEC(".maps");

/* The function ports of each group. Key: group index. Value: a DEVMAP_HASH
 * of the ports' ifindexes (and the replication port's while the group also
 * has QP members), made by xhcad; xhca_rx broadcasts to it. */
struct mc_ports {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, XHCA_MCAST_DEVS + 1);
	__type(key, __u32);
	__type(value, __u32); /* ifindex */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, XHCA_MCAST_GROUPS);
	__type(key, __u32);
	__array(values, struct mc_ports);
} xhca_mc_devs SEC(".maps");

/* What the parser learnt about a RoCEv2 packet. */
struct roce_pkt {
	__u8 saddr[16] __attribute__((aligned(8))); /* v4-mapped for IPv4 */
	__u8 daddr[16];
	__u64 va;	/* RETH or AtomicETH */
	__u32 rkey;
	__u32 dma_len;	/* RETH; 8 for an atomic */
	__u32 qpn;
	__u32 psn;
	__u32 qkey;	/* DETH, UD only */
	__u32 sqpn;	/* DETH source QP, UD only */
	__u32 ip_end;	/* where the IP packet ends, from the start of the frame */
	__u16 pkey;
	__u16 op_flags;
	__u16 payload_off; /* from the start of the frame */
	__u16 payload_len;
	__u8 opcode;
	__u8 mflags;	/* XHCA_MF_* for the metadata */
	__u8 pad;	/* BTH PadCnt */
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
#define WRITE_ONCE32(x, v) (*(volatile __u32 *)&(x) = (v))
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
	__u32 pd;
	__u16 pkey;
	__u8 valid;
	__u8 type;
	__u8 state;
	__u8 action;
	__u8 mtu_shift;
	__u8 flowq;
	__u8 flags;	/* XHCA_QPF_* */
	__u8 access;	/* XHCA_ACCESS_REMOTE_*, XHCA_QP_ACCESS_SET */
	__u16 ack_every;
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

/* A memory region as xhca_rx checks it. */
struct mr_view {
	__u64 iova;
	__u64 length;
	__u64 base;
	__u32 gen;
	__u32 access;
	__u32 pd;
	__u32 qpn;
	__u8 valid;
	__u8 key;
	__u8 flags;
};

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

/* What the checks decided, for what xhca_rx does next. */
struct verdict {
	__u64 place;	/* host memory offset of the payload (PLACED*) */
	__u32 lidx;
	__u32 gen;
	__u32 key;	/* xhca_xsks key, once admitted */
	__u32 msg_len;	/* a WRITE placed here: the whole message's length; or the MSN */
	__u8 flowq;
	__u8 mflags;	/* XHCA_MF_* to add */
	__u8 admitted;	/* flowq_admit() said yes */
	__u8 fq_tried;	/* flowq_admit() ran: fq_drop's counters take its refusal */
	__u8 fq_drop;
	__u8 pretx;	/* a WRITE into a pre-translated region (or of no bytes) */
	__u8 nocopy;	/* ... that xhca_rx cannot place on this kernel (placeable) */
	__u8 offload;	/* the message goes to the proxy (decided at its first packet) */
	__u32 csn;	/* XHCA_MF_CSN: the message's completion sequence number */
	__u8 ack_due;	/* RC: xhcad acknowledges this packet (AckReq, or coalescing) */
	__u32 first_psn; /* a WRITE placed here: the PSN of its FIRST */
	__u8 qp_hit;	/* the context matched: the per-QP counters apply */
	int pre;	/* what the R_Key check of a FIRST/ONLY/READ/ATOMIC found */
	struct mr_view mr; /* ... and that region */
};

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
	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(struct xhca_rx_meta)))
		return XHCA_R_DROP_META;
	return -1;
}


/* ---- the proxy QP (US 9,069,633) ------------------------------------------ */

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

/* Writes the metadata block and redirects to the flow queue's socket. */
static __always_inline int flowq_send(struct xdp_md *ctx, const struct roce_pkt *p,
				      const struct verdict *vd, int reason, __u64 bytes)
{
	void *data = (void *)(long)ctx->data;
	struct xhca_rx_meta *m = (void *)(long)ctx->data_meta;
	__u32 fq = vd->flowq & (XHCA_FLOWQ_MAX - 1);
	struct xhca_flowq_counter *fc;
	struct xhca_flowq *q;

	if ((void *)(m + 1) > data)
		return XHCA_R_DROP_META;
	m->rx_ns = bpf_ktime_get_ns();
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

/* bpf_xdp_load_bytes into host memory page mem at the constant k: the
 * verifier proves mem + k + chunk inside the page. */
static __always_inline int load_at(struct xdp_md *ctx, __u32 from, void *mem, __u32 k,
				   __u32 chunk)
{
	if (!size_in(chunk, XHCA_PAGE_SIZE - k))
		return -1;
	return bpf_xdp_load_bytes(ctx, from, mem + k, chunk);
}

/* Copies the payload into host memory at off, where a pre-translated region
 * is contiguous. A packet carries at most one MTU (4096 bytes): two pages at
 * most. A piece at a multiple of 1 KiB in its page (a path MTU's packets
 * into a page-aligned buffer, the usual case) is one bpf_xdp_load_bytes at
 * a constant offset, whose bounds the verifier proves; a piece elsewhere a
 * bpf_dynptr_copy, which checks them at run time and costs some 40 ns more
 * (docs/bench.md). Returns 0, or a reason if host memory is not there. */
static __always_inline int place(struct xdp_md *ctx, const struct roce_pkt *p, __u64 off)
{
	struct bpf_dynptr pkt, page;
	__u32 left = p->payload_len, from = p->payload_off;
	int have_pkt = 0;

	for (int i = 0; i < 2 && left; i++) {
		__u32 pg = (__u32)(off >> 12), in = (__u32)(off & (XHCA_PAGE_SIZE - 1));
		__u32 blk = pg >> XHCA_BLOCK_SHIFT, chunk = XHCA_PAGE_SIZE - in;
		void *block = bpf_map_lookup_elem(&xhca_hostmem, &blk), *mem;
		int r;

		if (!block)
			return XHCA_R_DROP_MR_BOUNDS;
		pg &= XHCA_BLOCK_PAGES - 1;
		mem = bpf_map_lookup_elem(block, &pg);
		if (chunk > left)
			chunk = left;
		if (!mem)
			return XHCA_R_DROP_MR_BOUNDS;
		switch (in) {
		case 0: r = load_at(ctx, from, mem, 0, chunk); break;
		case 1024: r = load_at(ctx, from, mem, 1024, chunk); break;
		case 2048: r = load_at(ctx, from, mem, 2048, chunk); break;
		case 3072: r = load_at(ctx, from, mem, 3072, chunk); break;
		default:
			if (!can_copy()) /* (ruled out at the WRITE's start) */
				return XHCA_R_DROP_MR_BOUNDS;
			if (!have_pkt && bpf_dynptr_from_xdp(ctx, 0, &pkt))
				return XHCA_R_DROP_MR_BOUNDS;
			have_pkt = 1;
			r = bpf_dynptr_from_mem(mem, XHCA_PAGE_SIZE, 0, &page) ?:
			    bpf_dynptr_copy(&page, in, &pkt, from, chunk);
		}
		if (r)
			return XHCA_R_DROP_MR_BOUNDS;
		off += chunk;
		from += chunk;
		left -= chunk;
	}
	return left ? XHCA_R_DROP_MR_BOUNDS : 0;
}

/* Whether place() can write every packet of a WRITE into a pre-translated
 * region (m, its FIRST or ONLY p) on this kernel: any, with bpf_dynptr_copy;
 * without, a message whose packets all start at a multiple of 1 KiB in their
 * pages (a path MTU of 1024 or more, the message at such an offset). */
static __always_inline int placeable(const struct mr_view *m, const struct roce_pkt *p, __u32 mtu)
{
	return can_copy() || (!((m->base + (p->va - m->iova)) & 1023) && mtu >= 1024);
}

/* Tells xhcad that the QP went to the error state. */
static __always_inline void qp_error_event(struct xdp_md *ctx, const struct verdict *vd,
					   const struct roce_pkt *p, int reason)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct xhca_event *e;

	if (data + 12 > end)
		return;
	e = bpf_ringbuf_reserve(&xhca_events, sizeof(*e), 0);
	if (!e)
		return;
	__builtin_memcpy(e->dmac, data, 6);
	__builtin_memcpy(e->smac, data + 6, 6);
	e->type = XHCA_EV_QP_ERR;
	e->lidx = vd->lidx;
	e->gen = vd->gen;
	e->gqpn = p->qpn;
	e->psn = p->psn;
	e->reason = (__u32)reason;
	bpf_ringbuf_submit(e, 0);
}

static __always_inline int is_write_op(__u8 op)
{
	return op >= XHCA_OP_WRITE_FIRST && op <= XHCA_OP_WRITE_ONLY_IMM;
}

static __always_inline int is_send_op(__u8 op)
{
	return op <= XHCA_OP_SEND_ONLY_IMM || op == XHCA_OP_SEND_LAST_INV ||
	       op == XHCA_OP_SEND_ONLY_INV;
}

/* A SEND's MIDDLE or LAST (host QPs: the others keep no message state). */
static __always_inline int send_cont(const struct roce_pkt *p, int host, int start)
{
	return host && !start && is_send_op(p->opcode & 0x1f);
}

/* RXE's length rules for a WRITE packet: one that ends the message carries
 * exactly what is left; any other carries one MTU, unpadded, and leaves
 * something for the last. */
static __always_inline int write_len_ok(const struct roce_pkt *p, __u64 left, __u32 mtu)
{
	if (p->op_flags & XHCA_O_END)
		return p->payload_len == left && p->payload_len <= mtu;
	return p->payload_len == mtu && !p->pad && left > mtu;
}

/* The error an RC QP cannot go on after (RXE's class A and C errors): its
 * receive state says so at once, xhcad hears of it and moves the QP to
 * ERR. UC just drops the rest of the message. */
static __always_inline __u32 failed_state(__u32 cur, int rc)
{
	return rc ? (cur & ~XHCA_RXPSN_BUSY) | XHCA_RXPSN_ERR
		  : (cur | XHCA_RXPSN_UC_DROP) &
			    ~(XHCA_RXPSN_BUSY | XHCA_RXPSN_WRITE | XHCA_RXPSN_PRETX);
}

/* Return values of the request helpers below, other than a reason: go on
 * with the packet, or read the receive state again (it changed under us). */
#define RQ_GO (-1)
#define RQ_RETRY (-2)

/* The PSN against the receive state cur (ePSN and flags): RQ_GO with
 * *base the state the packet starts from, a reason, or RQ_RETRY. RC: a
 * duplicate, and the first packet after a gap, go to xhcad in line behind
 * what came before, so its re-ACK or sequence NAK never overtakes a request
 * still on its way; the rest of the gap is silent. UC: a gap breaks the
 * message in progress; the next FIRST/ONLY starts clean at any PSN. */
static __always_inline int rq_psn(struct xhca_qp_ctx *c, const struct roce_pkt *p,
				  struct verdict *vd, __u32 cur, int rc, int host, int start,
				  __u32 *base)
{
	__u32 epsn = cur & XHCA_RXPSN_MASK;

	*base = cur;
	if (rc) {
		int d = xhca_psn_cmp(p->psn, epsn);

		if (d == 0)
			return RQ_GO;
		if (!host)
			return d < 0 ? XHCA_R_DROP_PSN_DUP : XHCA_R_DROP_PSN_OOS;
		if (d > 0 && (cur & XHCA_RXPSN_NAKED))
			return XHCA_R_DROP_PSN_OOS;
		/* what xhcad may acknowledge again: all before the ePSN (it
		 * rewinds to a packet, never before one acknowledged) */
		vd->msg_len = epsn;
		vd->csn = READ_ONCE32(c->msn);
		vd->mflags |= XHCA_MF_CSN;
		if (d < 0)
			return XHCA_R_DUP_TO_FLOWQ;
		if (__sync_val_compare_and_swap(&c->rx_psn, cur, cur | XHCA_RXPSN_NAKED) != cur)
			return RQ_RETRY;
		return XHCA_R_SEQ_NAK_TO_FLOWQ;
	}
	if (!(cur & XHCA_RXPSN_UC_DROP) && p->psn == epsn)
		return RQ_GO;
	if (!start) {
		__u32 next = failed_state(cur, 0);

		if (next == cur || __sync_val_compare_and_swap(&c->rx_psn, cur, next) == cur)
			return XHCA_R_DROP_UC_GAP;
		return RQ_RETRY;
	}
	*base &= ~(XHCA_RXPSN_UC_DROP | XHCA_RXPSN_WRITE | XHCA_RXPSN_PRETX | XHCA_RXPSN_PROXY |
		   XHCA_RXPSN_SEND);
	return RQ_GO;
}

/* The opcode sequence and what the first packet's checks found: 0 or the
 * reason. A WRITE's or SEND's MIDDLE/LAST need its FIRST; a new RC message
 * may not cut one short (IBA 9.7.5.1.2, RXE's check_op_seq: missing
 * FIRST/LAST); on UC a new FIRST/ONLY abandons the message in progress. */
static __always_inline int rq_seq(const struct roce_pkt *p, __u32 base, int rc, int host,
				  int start, int write, int cont, int pre, __u32 mtu)
{
	if (cont && !(base & XHCA_RXPSN_WRITE))
		return XHCA_R_DROP_WRITE_SEQ;
	if (rc && !cont && (base & XHCA_RXPSN_WRITE))
		return XHCA_R_DROP_WRITE_SEQ;
	if ((base & XHCA_RXPSN_SEND) ? rc && !send_cont(p, host, start) : send_cont(p, host, start))
		return XHCA_R_DROP_SEND_SEQ;
	if (start && pre)
		return pre;
	if (write && start && !write_len_ok(p, p->dma_len, mtu))
		return XHCA_R_DROP_WRITE_LEN;
	return 0;
}

/* A WRITE that owns the cursor (BUSY set in cur's place): where its bytes
 * go, the cursor moved on, the receive state next released. RQ_GO, or the
 * reason (the QP to the error state). */
static __always_inline int rq_write_cursor(struct xdp_md *ctx, struct xhca_qp_ctx *c,
					   const struct roce_pkt *p, struct verdict *vd,
					   __u32 cur, __u32 next, int rc, int start, int end,
					   __u32 mtu)
{
	struct mr_view *m = &vd->mr; /* start's region, or the WRITE's */
	__u64 va = p->va, left = p->dma_len;
	int r;

	if (start) {
		c->wc_mr = p->rkey >> 8;
		c->wc_gen = m->gen;
		c->wc_len = p->dma_len;
		c->wc_psn = p->psn;
	} else {
		va = c->wc_va;
		left = c->wc_left;
		r = mr_view(c->wc_mr, m);
		if (!r && m->gen != c->wc_gen)
			r = XHCA_R_DROP_WRITE_SEQ; /* its MR changed meanwhile */
		if (!r && !write_len_ok(p, left, mtu))
			r = XHCA_R_DROP_WRITE_LEN;
		if (r) {
			__sync_lock_test_and_set(&c->rx_psn, failed_state(cur, rc));
			if (rc)
				qp_error_event(ctx, vd, p, r);
			return r;
		}
	}
	vd->place = m->base + (va - m->iova);
	vd->msg_len = c->wc_len;
	vd->first_psn = c->wc_psn;
	c->wc_va = va + p->payload_len;
	c->wc_left = left - p->payload_len;
	if (!end)
		next |= XHCA_RXPSN_WRITE | (vd->pretx ? XHCA_RXPSN_PRETX : 0);
	/* An atomic exchange releases the cursor: a full barrier, its stores
	 * are seen before the new word. */
	__sync_lock_test_and_set(&c->rx_psn, next);
	return RQ_GO;
}

/* One try of xhca_rx_request (below): its result, or RQ_RETRY when another
 * CPU moved the receive state meanwhile. A global function of its own: Linux
 * 6.1's verifier, which prunes less than later ones, would walk all
 * CTX_TRIES of it on every path of xhca_rx_request, past its million
 * instructions. */
__noinline int xhca_rx_try(struct xdp_md *ctx, struct xhca_qp_ctx *c, const struct qp_view *v,
			   const struct roce_pkt *p, struct verdict *vd)
{
	int rc, host, start, end, write, cont, off, pre, err, r;
	__u32 cur, epsn, base, next, mtu;
	struct mr_view *m0;
	__u16 f;

	if (!c || !v || !p || !vd)
		return XHCA_R_DROP_QP_BUSY;
	m0 = &vd->mr;
	pre = vd->pre;
	f = p->op_flags;
	rc = v->type == XHCA_QPT_RC;
	host = v->action == XHCA_ACT_HOST;
	start = !!(f & XHCA_O_START);
	end = !!(f & XHCA_O_END);
	write = host && is_write_op(p->opcode & 0x1f);
	cont = write && !start; /* WRITE MIDDLE or LAST */
	mtu = mtu_of(v->mtu_shift);
	cur = READ_ONCE32(c->rx_psn);
	epsn = cur & XHCA_RXPSN_MASK;
	if (cur & XHCA_RXPSN_BUSY)
		return RQ_RETRY;
	if (cur & XHCA_RXPSN_ERR)
		return XHCA_R_DROP_QP_STATE;
	r = rq_psn(c, p, vd, cur, rc, host, start, &base);
	if (r != RQ_GO)
		return r; /* (RQ_RETRY too) */
	err = rq_seq(p, base, rc, host, start, write, cont, pre, mtu);
	if (err) {
		if (__sync_val_compare_and_swap(&c->rx_psn, cur, failed_state(cur, rc)) != cur)
			return RQ_RETRY;
		if (rc)
			qp_error_event(ctx, vd, p, err);
		return err;
	}
	/* To xhcad: everything but a WRITE into a pre-translated region
	 * that needs no completion. */
	if (write && start) {
		vd->pretx = !p->dma_len || ((m0->flags & XHCA_MRF_PRETRANSLATED) &&
					    !(v->flags & XHCA_QPF_ICRC_FIRST));
		vd->nocopy = p->dma_len && vd->pretx && !placeable(m0, p, mtu);
		vd->pretx = vd->pretx && !vd->nocopy;
	} else if (write) {
		vd->pretx = !!(base & XHCA_RXPSN_PRETX);
	}
	/* An offloaded message's later packets follow its first (never
	 * a WRITE: the proxy executes no WRITEs). Arithmetic, not
	 * branches: fewer paths for the verifier. */
	off = start ? vd->offload : (base & XHCA_RXPSN_PROXY) >> 26;
	vd->flowq = (__u8)(off ? XHCA_FLOWQ_PROXY : v->flowq);
	if (host && !vd->admitted &&
	    (!write || !vd->pretx || (end && (f & XHCA_H_IMM)) || vd->ack_due)) {
		r = flowq_admit(ctx, vd->flowq, vd);
		if (r >= 0 && (!write || !vd->pretx || (end && (f & XHCA_H_IMM))))
			return r;
		/* a WRITE placed here only for its ACK: placed
		 * anyway, the ACK is the next one due */
		vd->admitted = r < 0;
		vd->ack_due = vd->ack_due && r < 0;
	}
	vd->offload = (__u8)off;
	next = (base & ~(XHCA_RXPSN_MASK | XHCA_RXPSN_WRITE | XHCA_RXPSN_PRETX |
			 XHCA_RXPSN_PROXY | XHCA_RXPSN_NAKED | XHCA_RXPSN_SEND)) |
	       ((__u32)(off & !end) << 26) |
	       ((__u32)(host && !end && is_send_op(p->opcode & 0x1f)) << 24) |
	       ((rc ? epsn + ((f & XHCA_O_READ) ? read_npkts(p->dma_len, v->mtu_shift) : 1)
		    : p->psn + 1) & XHCA_RXPSN_MASK);
	if (!write)
		return __sync_val_compare_and_swap(&c->rx_psn, cur, next) == cur ? -1 : RQ_RETRY;
	/* A WRITE: own the cursor while it moves. */
	if (__sync_val_compare_and_swap(&c->rx_psn, cur, cur | XHCA_RXPSN_BUSY) != cur)
		return RQ_RETRY;
	return rq_write_cursor(ctx, c, p, vd, cur, next, rc, start, end, mtu);
}

/*
 * An RC or UC request against the QP's receive state (rx_psn and the WRITE
 * cursor): the PSN first (a duplicate is a duplicate whatever else is wrong
 * with it), the message sequence, the checks that needed both, admission to
 * the flow queue, then the commit. pre: what the R_Key check of a
 * FIRST/ONLY/READ/ATOMIC found (0: fine); m0: that region. Returns -1 when
 * the packet is accepted (vd says where it goes), or the reason.
 */
__noinline int xhca_rx_request(struct xdp_md *ctx, struct xhca_qp_ctx *c, const struct qp_view *v,
			       const struct roce_pkt *p, struct verdict *vd)
{
	for (int i = 0; i < CTX_TRIES; i++) {
		int r = xhca_rx_try(ctx, c, v, p, vd);

		if (r != RQ_RETRY)
			return r;
	}
	return XHCA_R_DROP_QP_BUSY;
}

/* The packet's headers against the QP's context, in RXE's order: a reason,
 * or RQ_GO with *v the context's view. */
static __always_inline int check_headers(struct xhca_qp_ctx *c, const struct roce_pkt *p,
					 struct verdict *vd, struct qp_view *v)
{
	__u16 f = p->op_flags;

	if (ctx_view(c, v))
		return XHCA_R_DROP_QP_BUSY;
	if (!v->valid || v->gqpn != p->qpn || v->gen != vd->gen)
		return XHCA_R_DROP_STALE;
	vd->qp_hit = 1;
	vd->gen = v->gen;
	vd->flowq = v->flowq;
	if (f & XHCA_H_CNP)
		return XHCA_R_CNP;
	if ((p->opcode >> 5) != v->type)
		return XHCA_R_DROP_OPCODE_TYPE;
	if (v->state == XHCA_QPS_RESET || v->state == XHCA_QPS_INIT || v->state >= XHCA_QPS_ERR ||
	    ((f & XHCA_O_RESP) && v->state == XHCA_QPS_RTR))
		return XHCA_R_DROP_QP_STATE;
	if (v->type != XHCA_QPT_UD &&
	    (!ip_eq(p->daddr, v->local_ip) || !ip_eq(p->saddr, v->remote_ip)))
		return XHCA_R_DROP_ADDR;
	if (p->qpn == XHCA_QPN_GSI ? !pkey_in_table(p->pkey) : !xhca_pkey_match(p->pkey, v->pkey))
		return XHCA_R_DROP_PKEY;
	if (v->type == XHCA_QPT_UD &&
	    p->qkey != (p->qpn == XHCA_QPN_GSI ? XHCA_GSI_QKEY : v->qkey))
		return XHCA_R_DROP_QKEY;
	/* A UD message is one packet, at most the path MTU (the port's: the
	 * verbs library sets it), as on a real HCA and RXE. */
	if (v->type == XHCA_QPT_UD && p->payload_len > mtu_of(v->mtu_shift))
		return XHCA_R_DROP_UD_MTU;
	return RQ_GO;
}

/* A request xhcad answers with a response of its own (wire.h): READ,
 * ATOMIC, ATOMIC WRITE. */
static __always_inline int responded(const struct roce_pkt *p)
{
	return (p->op_flags & (XHCA_O_READ | XHCA_H_ATMETH)) ||
	       p->opcode == (XHCA_OPC_RC | XHCA_OP_ATOMIC_WRITE);
}

/* RDMA requests of a host QP: the region their R_Key names (into m). A
 * zero length READ or WRITE checks no key (IBA C9-88, as RXE). 0, or the
 * reason the request fails with. */
static __always_inline int check_region(const struct roce_pkt *p, const struct qp_view *v,
					struct mr_view *m)
{
	__u16 f = p->op_flags;
	int pre = 0;

	if (v->action != XHCA_ACT_HOST || !(f & XHCA_O_REQ) || !(f & XHCA_O_START))
		return 0;
	/* the QP's own remote access first, zero lengths too (RXE's
	 * check_op_valid): a responder that allows none is answered so */
	if ((v->access & XHCA_QP_ACCESS_SET) && (f & (XHCA_H_ATMETH | XHCA_H_RETH)) &&
	    !(v->access & ((f & XHCA_H_ATMETH) ? XHCA_ACCESS_REMOTE_ATOMIC :
			   (f & XHCA_O_READ) ? XHCA_ACCESS_REMOTE_READ : XHCA_ACCESS_REMOTE_WRITE)))
		return XHCA_R_DROP_QP_ACCESS;
	if (p->opcode == (XHCA_OPC_RC | XHCA_OP_ATOMIC_WRITE)) {
		/* IBA 1.5: 8 bytes, stored whole at an aligned address (the
		 * QP's and the region's remote write) */
		if (p->dma_len != 8 || p->payload_len != 8)
			pre = XHCA_R_DROP_WRITE_LEN;
		else
			pre = mr_check(p, v, XHCA_ACCESS_REMOTE_WRITE, m);
		if (!pre && (p->va & 7))
			pre = XHCA_R_DROP_ATOMIC_ALIGN;
	} else if (f & XHCA_H_ATMETH) {
		pre = mr_check(p, v, XHCA_ACCESS_REMOTE_ATOMIC, m);
		if (!pre && (p->va & 7))
			pre = XHCA_R_DROP_ATOMIC_ALIGN;
	} else if ((f & XHCA_H_RETH) && p->dma_len) {
		if (p->dma_len > 0x80000000u)
			pre = XHCA_R_DROP_WRITE_LEN;
		else
			pre = mr_check(p, v, (f & XHCA_O_READ) ? XHCA_ACCESS_REMOTE_READ
							       : XHCA_ACCESS_REMOTE_WRITE, m);
	}
	return pre;
}

/* UD, and responses: no sequence to keep here; the action, or the flow
 * queue (the proxy's for an offloaded message). */
static __always_inline int unsequenced(struct xdp_md *ctx, struct xhca_qp_ctx *c,
				       const struct roce_pkt *p, struct verdict *vd,
				       const struct qp_view *v, int proxy_cq)
{
	int r;

	if (v->action != XHCA_ACT_HOST)
		return v->action == XHCA_ACT_DROP ? XHCA_R_ACCEPT_DROP : XHCA_R_ACCEPT_PASS;
	r = flowq_admit(ctx, vd->offload ? XHCA_FLOWQ_PROXY : v->flowq, vd);
	if (r >= 0)
		return r;
	if (vd->offload)
		vd->flowq = XHCA_FLOWQ_PROXY;
	if (proxy_cq && (p->op_flags & XHCA_O_REQ)) {
		vd->csn = __sync_fetch_and_add(&c->msn, 1);
		vd->mflags |= XHCA_MF_CSN;
	}
	return vd->offload ? XHCA_R_TO_PROXY : XHCA_R_TO_FLOWQ;
}

/* A request the sequence accepted: the ACK count, the MSN and CSN, then
 * what it becomes (the action, the flow queue, the proxy, or placed here). */
static __always_inline int accepted(struct xdp_md *ctx, struct xhca_qp_ctx *c,
				    const struct roce_pkt *p, struct verdict *vd,
				    const struct qp_view *v, int proxy_cq)
{
	__u16 f = p->op_flags;
	__u8 op = p->opcode & 0x1f;
	int r;

	if (v->type == XHCA_QPT_RC && v->action == XHCA_ACT_HOST) {
		if (vd->ack_due || responded(p)) {
			WRITE_ONCE32(c->unacked, 0);
			vd->mflags |= vd->ack_due ? XHCA_MF_ACKREQ : 0;
		} else {
			__sync_fetch_and_add(&c->unacked, 1);
		}
	}
	if ((f & XHCA_O_END) && (v->type == XHCA_QPT_RC || proxy_cq)) {
		/* a request message accepted whole: the responder's MSN; a READ
		 * or ATOMIC (WRITE) carries it to xhcad for its response. On a proxy CQ
		 * the count before it is the message's CSN. */
		__u32 was = __sync_fetch_and_add(&c->msn, 1);

		vd->csn = was;
		if (v->type == XHCA_QPT_RC && responded(p)) {
			vd->msg_len = (was + 1) & XHCA_PSN_MASK;
			vd->mflags |= XHCA_MF_MSN;
		}
	} else if (proxy_cq || v->type == XHCA_QPT_RC) {
		vd->csn = READ_ONCE32(c->msn);
	}
	/* RC: the MSN (low 16 bits) for xhcad's ACK, and where to go back
	 * to should the message have to be received again */
	if (proxy_cq || v->type == XHCA_QPT_RC)
		vd->mflags |= XHCA_MF_CSN;
	if (v->action != XHCA_ACT_HOST)
		return v->action == XHCA_ACT_DROP ? XHCA_R_ACCEPT_DROP : XHCA_R_ACCEPT_PASS;
	if (vd->offload)
		return XHCA_R_TO_PROXY;
	if (!is_write_op(op))
		return XHCA_R_TO_FLOWQ;
	if (!vd->pretx)
		return vd->nocopy ? XHCA_R_XLATE_NOCOPY : XHCA_R_TO_XLATE;
	r = place(ctx, p, vd->place);
	if (r)
		return r;
	if ((f & XHCA_O_END) && (f & XHCA_H_IMM)) {
		vd->mflags |= XHCA_MF_PLACED;
		return XHCA_R_PLACED_TO_FLOWQ;
	}
	if ((f & XHCA_O_END) && proxy_cq)
		xhca_px_record(vd->lidx, vd->gen, p->qpn, vd->csn, vd->msg_len);
	if (vd->ack_due) {
		/* xhcad acknowledges it (msg_len: where its WRITE began) */
		vd->mflags |= XHCA_MF_PLACED;
		vd->msg_len = vd->first_psn;
		return XHCA_R_PLACED_ACK;
	}
	return XHCA_R_PLACED;
}

/*
 * The header checks against the QP context in RXE's order, then what the
 * packet asks for. Returns the reason; vd->qp_hit says the context matched, so
 * the per-QP counters apply. For TO_FLOWQ, PLACED_TO_FLOWQ and TO_XLATE the
 * caller redirects (vd says where); for PLACED* the payload is in host
 * memory already.
 */
__noinline int xhca_check_qp(struct xdp_md *ctx, struct xhca_qp_ctx *c, const struct roce_pkt *p,
			     struct verdict *vd)
{
	struct qp_view v;
	int r, pre, proxy_cq;
	__u16 f;

	if (!c || !p || !vd) /* a global function, as xhca_rx_request */
		return XHCA_R_DROP_STALE;
	f = p->op_flags;
	r = check_headers(c, p, vd, &v);
	if (r != RQ_GO)
		return r;
	proxy_cq = !!(v.flags & XHCA_QPF_PROXY_CQ);
	if ((v.flags & XHCA_QPF_PROXY) && (f & XHCA_O_REQ)) {
		/* a proxy QP's completions must go through the proxy */
		if (!proxy_cq)
			return XHCA_R_DROP_PROXY_NOCQ;
		if (v.action == XHCA_ACT_HOST && (f & XHCA_O_START))
			vd->offload = (__u8)proxy_decide(ctx, vd->lidx, v.gen, p);
	}
	pre = check_region(p, &v, &vd->mr);
	if (v.type == XHCA_QPT_UD || !(f & XHCA_O_REQ))
		return unsequenced(ctx, c, p, vd, &v, proxy_cq);
	/* An RC request's ACK is due at AckReq, and at least every ack_every
	 * packets; a READ or ATOMIC is answered anyway. Decided before the
	 * commit: a WRITE placed here then goes on to xhcad for it. */
	if (v.type == XHCA_QPT_RC && v.action == XHCA_ACT_HOST && !responded(p))
		vd->ack_due = (p->mflags & XHCA_MF_ACKREQ) ||
			      (v.ack_every && READ_ONCE32(c->unacked) + 1 >= v.ack_every);
	vd->pre = pre;
	r = xhca_rx_request(ctx, c, &v, p, vd);
	if (r == XHCA_R_DUP_TO_FLOWQ || r == XHCA_R_SEQ_NAK_TO_FLOWQ) {
		int a = flowq_admit(ctx, v.flowq, vd);

		if (a < 0)
			return r; /* vd->flowq is the QP's */
		if (r == XHCA_R_SEQ_NAK_TO_FLOWQ) /* no NAK went: the next one tries */
			__sync_fetch_and_and(&c->rx_psn, ~XHCA_RXPSN_NAKED);
		return a;
	}
	if (r >= 0)
		return r;
	return accepted(ctx, c, p, vd, &v, proxy_cq);
}

static __always_inline int ip_is_mcast(const __u8 *a)
{
	return is_v4_mapped(a) ? (a[12] & 0xf0) == 0xe0 : a[0] == 0xff;
}

/*
 * A packet to the multicast QPN (US 8,937,949): what is common to the whole
 * group is checked here, then one copy, with the group in its metadata,
 * goes to the replication queue; xhcad's replication engine finds the
 * members and hands each a descriptor of the same frame.
 */
static __always_inline int mcast(struct xdp_md *ctx, const struct roce_pkt *p, __u64 bytes,
				 __u32 *gidx, struct verdict *vd)
{
	struct xhca_mcast_counter *mc;
	struct xhca_mcast_grp *g;
	__u32 idx;
	int r, reason = XHCA_R_TO_MCAST;

	if (!ip_is_mcast(p->daddr))
		return XHCA_R_DROP_MCAST_ADDR;
	if (p->opcode != (XHCA_OPC_UD | XHCA_OP_SEND_ONLY) &&
	    p->opcode != (XHCA_OPC_UD | XHCA_OP_SEND_ONLY_IMM))
		return XHCA_R_DROP_MCAST_OPCODE;
	g = bpf_map_lookup_elem(&xhca_mcast, p->daddr);
	if (!g)
		return XHCA_R_DROP_MCAST_GROUP;
	idx = g->index;
	*gidx = idx;
	mc = bpf_map_lookup_elem(&xhca_mc_stats, &idx);
	if (!mc)
		return XHCA_R_DROP_MCAST_GROUP;
	if (!g->nmembers && !g->ndevs) {
		mc->empty_drops++;
		return XHCA_R_DROP_MCAST_EMPTY;
	}
	if (!xhca_pkey_match(p->pkey, g->pkey)) {
		mc->pkey_drops++;
		return XHCA_R_DROP_MCAST_PKEY;
	}
	/* Second level: a copy to every function port, in the kernel; the QP
	 * members' through the replication port. The broadcast copies the
	 * frame for every port but the last (xdpf_clone), which a frame of
	 * several buffers cannot be (it would reach no port, uncounted): such
	 * a frame goes to the replication queue, stored once, and xhcad sends
	 * each port and QP its copy. (One port: no copy.) */
	if (g->ndevs && g->ndevs + (g->nmembers ? 1 : 0) > 1 &&
	    bytes > (__u64)(ctx->data_end - ctx->data)) {
		reason = XHCA_R_TO_MCAST_PORTS;
	} else if (g->ndevs) {
		void *ports = bpf_map_lookup_elem(&xhca_mc_devs, &idx);

		if (!ports)
			return XHCA_R_DROP_MCAST_GROUP;
		if (bpf_redirect_map(ports, 0, BPF_F_BROADCAST | BPF_F_EXCLUDE_INGRESS) !=
		    XDP_REDIRECT)
			return XHCA_R_DROP_NO_SOCKET;
		mc->dev_packets++;
		return XHCA_R_TO_MCAST_DEVS;
	}
	r = flowq_admit(ctx, XHCA_FLOWQ_MCAST, vd);
	if (r == XHCA_R_DROP_FLOWQ_GATE) {
		mc->threshold_drops++;
		return XHCA_R_DROP_MCAST_THRESHOLD;
	}
	if (r >= 0)
		return r;
	vd->lidx = idx;
	vd->gen = g->gen;
	vd->flowq = XHCA_FLOWQ_MCAST;
	r = flowq_send(ctx, p, vd, reason, bytes);
	if (r == reason) {
		mc->packets++;
		mc->bytes += bytes;
	}
	return r;
}

/* Parses the packet (len bytes, fragments included) up to the BTH and its
 * extension headers. Returns a reason when the verdict is already known, or
 * -1 to go on to the CAM. */
static __always_inline int parse(struct xdp_md *ctx, __u64 len, struct roce_pkt *p)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct hdr_cursor cur = { .pos = data };
	const struct xhca_opinfo *oi;
	struct xhca_bth *bth;
	struct udphdr *udp;
	__u32 avail, paylen, udp_off;
	__u8 pad;
	int r;

	r = parse_l2_l3(&cur, end, p->saddr, p->daddr, &udp, &p->ip_end);
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
	/* The headers are in the linear part (checked against end); a large
	 * frame's payload and ICRC may go on in fragments (xdp.frags). */
	udp_off = (__u32)((void *)udp - data);
	avail = (__u32)len - udp_off;
	paylen = bpf_ntohs(udp->len);
	/* Ethernet may pad short frames: the IP packet's length says where
	 * it ends, and its UDP datagram must fit in it. */
	if (p->ip_end > (__u32)len || paylen > avail)
		return XHCA_R_DROP_TRUNCATED;
	if (udp_off + paylen > p->ip_end)
		return XHCA_R_DROP_IP_LENGTH;
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
		p->sqpn = bpf_ntohl(deth->sqp) & XHCA_QPN_MASK;
	}
	if (oi->flags & XHCA_H_RETH) {
		__u32 roff = xhca_reth_off(oi->flags);
		struct xhca_reth *reth;

		/* masked where clang cannot drop it: from its OR of the two
		 * headers' lengths Linux 6.1's verifier learns no bound */
		asm volatile("" : "+r"(roff));
		reth = (void *)bth + (roff & 31);

		if ((void *)(reth + 1) > end)
			return XHCA_R_DROP_TRUNCATED;
		p->va = bpf_be64_to_cpu(reth->va);
		p->rkey = bpf_ntohl(reth->rkey);
		p->dma_len = bpf_ntohl(reth->len);
	} else if (oi->flags & XHCA_H_ATMETH) {
		struct xhca_atmeth *a = (void *)bth + 12;

		if ((void *)(a + 1) > end)
			return XHCA_R_DROP_TRUNCATED;
		p->va = bpf_be64_to_cpu(a->va);
		p->rkey = bpf_ntohl(a->rkey);
		p->dma_len = 8;
	}
	p->pad = pad;
	return -1;
}

/* Reasons that count as accepted for the QP. */
static __always_inline int is_accept(__u32 r)
{
	return r == XHCA_R_ACCEPT_PASS || r == XHCA_R_ACCEPT_DROP || r == XHCA_R_CNP ||
	       r == XHCA_R_TO_FLOWQ || r == XHCA_R_PLACED || r == XHCA_R_PLACED_TO_FLOWQ ||
	       r == XHCA_R_TO_XLATE || r == XHCA_R_XLATE_NOCOPY || r == XHCA_R_TO_PROXY ||
	       r == XHCA_R_PLACED_ACK;
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
	if (is_accept(reason)) {
		q->accepted++;
		q->accepted_bytes += bytes;
	} else {
		q->dropped++;
		q->dropped_bytes += bytes;
	}
}

/* A flow queue's drop counters, by the packet's final reason: each refused
 * packet once, under the flow queue that refused it (the redirected ones
 * flowq_send counted). */
static __always_inline void count_flowq(__u32 reason, const struct verdict *vd)
{
	__u32 fq = vd->fq_drop & (XHCA_FLOWQ_MAX - 1);
	struct xhca_flowq_counter *fc;

	if (!vd->fq_tried || (reason != XHCA_R_DROP_FLOWQ_GATE &&
			      reason != XHCA_R_DROP_MCAST_THRESHOLD &&
			      reason != XHCA_R_DROP_NO_SOCKET))
		return;
	fc = bpf_map_lookup_elem(&xhca_fq_stats, &fq);
	if (!fc)
		return;
	if (reason == XHCA_R_DROP_NO_SOCKET)
		fc->nosock_drops++;
	else
		fc->gate_drops++;
}

/* xhca_rx's packet and verdict: per CPU, not on the stack, which the
 * global functions it calls need (512 bytes for the whole chain). Not
 * pinned: each loaded program has its own. */
struct rx_scratch {
	struct roce_pkt p;
	struct verdict vd;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rx_scratch);
} xhca_scratch SEC(".maps");

SEC("xdp.frags")
int xhca_rx(struct xdp_md *ctx)
{
	__u64 bytes = bpf_xdp_get_buff_len(ctx);
	struct rx_scratch *sc;
	struct roce_pkt *p;
	struct verdict *vd;
	struct xhca_cam_val *cv;
	struct xhca_qp_ctx *c;
	int qp_hit = 0;
	__u32 lidx = 0;
	__u32 zero = 0;
	int r;

	sc = bpf_map_lookup_elem(&xhca_scratch, &zero);
	if (!sc)
		return XDP_PASS; /* cannot happen: the map has its one entry */
	__builtin_memset(sc, 0, sizeof(*sc));
	p = &sc->p;
	vd = &sc->vd;
	r = parse(ctx, bytes, p);
	if (r >= 0)
		goto out;
	if (p->qpn == XHCA_QPN_SMI) {
		r = XHCA_R_DROP_QP0;
		goto out;
	}
	if (p->qpn == XHCA_QPN_MCAST) {
		__u32 gidx = 0;

		r = mcast(ctx, p, bytes, &gidx, vd);
		goto out;
	}
	cv = bpf_map_lookup_elem(&xhca_qp_cam, &p->qpn);
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
	vd->lidx = lidx;
	vd->gen = cv->gen; /* what the CAM entry says: the context must agree */
	r = xhca_check_qp(ctx, c, p, vd);
	qp_hit = vd->qp_hit;
	if (r == XHCA_R_TO_FLOWQ || r == XHCA_R_PLACED_TO_FLOWQ || r == XHCA_R_TO_XLATE ||
	    r == XHCA_R_XLATE_NOCOPY ||
	    r == XHCA_R_TO_PROXY || r == XHCA_R_PLACED_ACK || r == XHCA_R_DUP_TO_FLOWQ ||
	    r == XHCA_R_SEQ_NAK_TO_FLOWQ)
		r = flowq_send(ctx, p, vd, r, bytes);
out:
	count(r, bytes, lidx, qp_hit);
	count_flowq(r, vd);
	switch (r) {
	case XHCA_R_PASS_NOT_ROCE:
	case XHCA_R_PASS_TRUNCATED:
	case XHCA_R_PASS_VLAN_DEPTH:
	case XHCA_R_PASS_IPV6_EXT:
	case XHCA_R_PASS_IP_FRAG:
	case XHCA_R_ACCEPT_PASS:
		return XDP_PASS;
	case XHCA_R_TO_FLOWQ:
	case XHCA_R_PLACED_TO_FLOWQ:
	case XHCA_R_TO_XLATE:
	case XHCA_R_XLATE_NOCOPY:
	case XHCA_R_TO_PROXY:
	case XHCA_R_PLACED_ACK:
	case XHCA_R_DUP_TO_FLOWQ:
	case XHCA_R_SEQ_NAK_TO_FLOWQ:
	case XHCA_R_TO_MCAST:
	case XHCA_R_TO_MCAST_DEVS:
	case XHCA_R_TO_MCAST_PORTS:
		return XDP_REDIRECT;
	default:
		return XDP_DROP;
	}
}

/*
 * xhca_rep: the replication port's receive side (on the peer of the veth
 * xhcad makes for groups with function ports and QP members). The copy
 * xhca_rx broadcast into it goes to the replication queue, through its own
 * socket, as xhca_rx sends the packets of groups without ports: the same
 * threshold, the same metadata. Counted per group, not in xhca_stats (the
 * packet has its reason there already, to_mcast_devs).
 */
SEC("xdp.frags")
int xhca_rep(struct xdp_md *ctx)
{
	__u64 bytes = bpf_xdp_get_buff_len(ctx);
	struct xhca_mcast_counter *mc;
	struct xhca_mcast_grp *g;
	struct xhca_flowq *q;
	struct verdict vd = {};
	struct roce_pkt p = {};
	__u32 idx, fq = XHCA_FLOWQ_MCAST;
	__u64 backlog;

	if (parse(ctx, bytes, &p) >= 0 || p.qpn != XHCA_QPN_MCAST)
		return XDP_DROP;
	g = bpf_map_lookup_elem(&xhca_mcast, p.daddr);
	if (!g || !g->nmembers)
		return XDP_DROP;
	idx = g->index;
	mc = bpf_map_lookup_elem(&xhca_mc_stats, &idx);
	q = bpf_map_lookup_elem(&xhca_flowq, &fq);
	if (!mc || !q)
		return XDP_DROP;
	backlog = READ_ONCE64(q->enq) - READ_ONCE64(q->deq);
	if (q->high && backlog >= q->high) {
		mc->threshold_drops++;
		return XDP_DROP;
	}
	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(struct xhca_rx_meta)))
		return XDP_DROP;
	vd.key = XHCA_XSK_REP_KEY;
	vd.lidx = idx;
	vd.gen = g->gen;
	vd.flowq = XHCA_FLOWQ_MCAST;
	if (flowq_send(ctx, &p, &vd, XHCA_R_TO_MCAST, bytes) != XHCA_R_TO_MCAST)
		return XDP_DROP;
	mc->packets++;
	mc->bytes += bytes;
	return XDP_REDIRECT;
}
