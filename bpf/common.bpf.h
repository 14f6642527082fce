/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the parts of xhca_rx (xhca.bpf.c) share: size_in, the seqcount read
 * side, and the state of one packet: what the parser learnt (roce_pkt), the
 * views of its QP context and memory region (qp_view, mr_view), what the
 * checks decided (verdict), all held in the per-CPU xhca_scratch.
 */
#ifndef XHCA_COMMON_BPF_H
#define XHCA_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <xhca/abi.h>
#include <xhca/wire.h>

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
#define READ_ONCE16(x) (*(volatile __u16 *)&(x))
#define READ_ONCE32(x) (*(volatile __u32 *)&(x))
#define WRITE_ONCE32(x, v) (*(volatile __u32 *)&(x) = (v))
#define READ_ONCE64(x) (*(volatile __u64 *)&(x))

/* Takes away metadata the frame came with: a frame another program sent
 * with XDP_TX into a veth keeps its block at the peer (at most 32 bytes, in
 * steps of 4). 0, or -1 if some is left. */
static __always_inline int meta_clear(struct xdp_md *ctx)
{
	for (int i = 0; i < 8; i++) {
		if ((void *)(long)ctx->data_meta >= (void *)(long)ctx->data)
			return 0;
		if (bpf_xdp_adjust_meta(ctx, 4))
			return -1;
	}
	return (void *)(long)ctx->data_meta >= (void *)(long)ctx->data ? 0 : -1;
}

/* Retries of a context read that met a writer, and of a PSN update that
 * lost a race: a writer's section is a few stores, so more means xhcad was
 * preempted inside one. */
#define CTX_TRIES 4

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
	__u16 l3_off;	/* where the IP header starts */
	__u16 pkey;
	__u16 op_flags;
	__u16 payload_off; /* from the start of the frame */
	__u16 payload_len;
	__u8 opcode;
	__u8 mflags;	/* XHCA_MF_* for the metadata */
	__u8 pad;	/* BTH PadCnt */
};

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

/* A memory region as xhca_rx checks it. */
struct mr_view {
	__u64 iova;
	__u64 length;
	__u64 base;
	__u64 aoff;	/* a receive buffer's checks (recv.bpf.h): where iova is in */
	__u32 alloc;	/* ... this allocation, */
	__u32 owner;	/* ... of this session */
	__u32 gen;
	__u32 access;
	__u32 pd;
	__u32 qpn;
	__u8 valid;
	__u8 key;
	__u8 flags;
};

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
	__u8 pend;	/* counted in its QP's xhca_rfast pend (recv_count) */
	__u8 owe;	/* ... and in its owe */
	int pre;	/* what the R_Key check of a FIRST/ONLY/READ/ATOMIC found */
	__u32 rw_gen;	/* an RC request: c->rw_gen as the sequence read it, | 1 << 16 */
	struct mr_view mr; /* ... and that region */
};

/* xhca_rx's packet and verdict, the value of xhca_scratch (maps.bpf.h). */
struct rx_scratch {
	struct roce_pkt p;
	struct verdict vd;
};

#endif /* XHCA_COMMON_BPF_H */
