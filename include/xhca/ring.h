/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Rings in host memory shared by xhcad and applications (through libxhca):
 * a receive queue and a send queue per QP (the application posts, xhcad
 * consumes) and a completion queue (xhcad produces, the application polls).
 * Neither side makes a system call per entry:
 *  - producer: write the entry, then store prod with release order;
 *  - consumer: load prod with acquire order, read, store cons with release.
 * Two flags let a side sleep without missing the other's progress; each is
 * set, then the ring checked again, with full fences on both sides:
 *  - armed (CQ): the application is about to sleep on its eventfd; xhcad
 *    signals it after producing, then clears the flag;
 *  - armed (SQ): xhcad has taken every entry and sleeps; the application
 *    rings its session's send doorbell (an eventfd) after producing, once;
 *  - waiting (CQ): xhcad found the CQ full and stopped the QP's flow queue
 *    (or its send completions); the application rings the doorbell eventfd
 *    after consuming.
 * A send queue's cons moves when its entry completes (the slot is free
 * again), not when xhcad reads it: xhcad copies an entry when it takes it.
 */
#ifndef XHCA_RING_H
#define XHCA_RING_H

#ifndef __bpf__
#include <linux/types.h>
#endif

struct xhca_ring_ctl {
	__u32 prod;		/* written by the producer */
	__u32 pad0[15];
	__u32 cons;		/* written by the consumer */
	/* SQ, written by xhcad (the consumer) and read by libxhca: what a
	 * program needs to send a request itself (a direct send,
	 * docs/design.md), valid while d_psn has XHCA_DIRECT_OK. libxhca reads
	 * them only when every request it posted completed (cons == prod):
	 * d_psn is stored before cons. xhcad clears d_psn before it changes
	 * the others and sets it after. */
	__u32 d_psn;		/* XHCA_DIRECT_OK | the next request's PSN; 0: none */
	__u32 d_dqpn;		/* the destination QP */
	__u32 d_saddr;		/* IPv4 addresses, network order */
	__u32 d_daddr;
	__u16 d_pkey;
	__u16 d_sport;		/* the UDP source port (the flow's entropy) */
	__u8 d_mtu_shift;	/* the path MTU */
	__u8 d_pad[3];
	__u32 d_ifindex;	/* the interface: the packet leaves by it */
	__u32 pad1[8];
	__u32 depth;		/* entries, a power of 2; fixed at creation */
	__u32 armed;		/* CQ: the application sleeps on its eventfd;
				 * SQ: xhcad sleeps, wants the send doorbell */
	__u32 waiting;		/* CQ: xhcad waits for room */
	__u32 dead;		/* the QP or CQ was destroyed (by xhcad or the CLI) */
	__u64 stalls;		/* CQ: times xhcad found it full */
	__u32 qp_err;		/* SQ: why the responder moved the QP to the error
				 * state (XHCA_QPE_*), for the application's async
				 * event; 0 until then. CQ: XHCA_CQ_OVERRUN once
				 * xhcad gave up on it */
	__u8 pad2[36];
};
_Static_assert(sizeof(struct xhca_ring_ctl) == 192, "xhca_ring_ctl size");

/* What a request the QP received did to move it to the error state: a
 * remote access it does not allow (verbs' IBV_EVENT_QP_ACCESS_ERR), or an
 * invalid request (IBV_EVENT_QP_REQ_ERR). */
#define XHCA_QPE_ACCESS 1
#define XHCA_QPE_REQ 2
/* ... or the application's own queue: indexes xhcad cannot take (a producer
 * index past the ring's room or behind what xhcad took), verbs'
 * IBV_EVENT_QP_FATAL */
#define XHCA_QPE_FATAL 3
/* A CQ that stayed full with completions waiting for it longer than
 * xhcad's --cq-stall-ms: it takes no more, its QPs are in the error state
 * (XHCA_QPE_FATAL), verbs' IBV_EVENT_CQ_ERR. */
#define XHCA_CQ_OVERRUN 4

/* Pieces of a scatter list, of a send request or a receive (UCX's
 * rc_verbs asks for 5, ud_verbs 6; RXE has 32, mlx5 30). */
#define XHCA_SGE_MAX 16

/* A receive work request (xhca_post_recv): a buffer in one of the
 * session's host memory allocations, or (nsge > 1) a scatter list of
 * nsge pieces, struct xhca_rsge one after the other at (alloc, off), len
 * their sum: a message fills them in turn. */
struct xhca_rwqe {
	__u64 wr_id;
	__u64 off;		/* in the allocation */
	__u32 len;
	__u32 alloc;		/* the allocation's id */
	__u32 nsge;		/* 0 or 1: the buffer itself; up to XHCA_SGE_MAX: a list */
	__u32 lkey;		/* the buffer's region (0: none): checked when it is used */
};
_Static_assert(sizeof(struct xhca_rwqe) == 32, "xhca_rwqe size");

struct xhca_rsge {
	__u64 off;
	__u32 len;
	__u32 alloc;
	__u32 lkey;		/* as xhca_rwqe's */
	__u32 pad;
};
_Static_assert(sizeof(struct xhca_rsge) == 24, "xhca_rsge size");

/* Bytes of a ring's scatter list table: a list of max_sge pieces per
 * entry, the entry's slot in the ring its index (libxhca's, read by xhcad,
 * which takes each list's place from its entry). */
#define XHCA_RSGL_BYTES(depth, max_sge) ((__u64)(depth) * (max_sge) * sizeof(struct xhca_rsge))

/* Send work requests, numbered as ibv_wr_opcode. */
enum xhca_wr_opcode {
	XHCA_WR_RDMA_WRITE = 0,
	XHCA_WR_RDMA_WRITE_WITH_IMM = 1,
	XHCA_WR_SEND = 2,
	XHCA_WR_SEND_WITH_IMM = 3,
	XHCA_WR_RDMA_READ = 4,
	XHCA_WR_ATOMIC_CMP_AND_SWP = 5,
	XHCA_WR_ATOMIC_FETCH_AND_ADD = 6,
	XHCA_WR_LOCAL_INV = 7,		/* imm: the R_Key of a type 2 window to unbind */
	XHCA_WR_BIND_MW = 8,		/* rkey: the window's new R_Key; imm: the region's
					 * L_Key; remote_va, compare_add: the window's
					 * address and length in it; swap: its access */
	XHCA_WR_SEND_WITH_INV = 9,
	XHCA_WR_ATOMIC_WRITE = 15,	/* RC: compare_add's 8 bytes (as in memory) stored
					 * whole at remote_va, 8-byte aligned (IBA 1.5) */
};

/* send_flags, as ibv_send_flags. */
#define XHCA_SEND_FENCE (1u << 0)	/* wait for every READ/ATOMIC before it */
#define XHCA_SEND_SIGNALED (1u << 1)	/* a completion on success (errors always have one) */
#define XHCA_SEND_SOLICITED (1u << 2)	/* the BTH solicited event bit */
/* libxhca's own (never the application's): the program sent the request's
 * one packet itself at PSN psn (a direct send); xhcad takes it as sent when
 * it is what xhcad would have sent then, else sends it as any other */
#define XHCA_SEND_DIRECT (1u << 7)

#define XHCA_DIRECT_OK (1u << 31)	/* xhca_ring_ctl's d_psn */

/*
 * A send work request (xhca_post_send), as libxhca writes it: the
 * scatter list names the session's host memory allocations, as receive
 * entries do. opcode is enum xhca_wr_opcode (xhca.h), flags XHCA_SEND_*.
 */
struct xhca_swqe {
	__u64 wr_id;
	__u8 opcode;
	__u8 flags;
	__u8 nsge;
	__u8 pad0;
	__u32 imm;		/* ImmDt (network order, as verbs) or the R_Key to invalidate */
	__u64 remote_va;	/* RDMA and ATOMIC */
	__u32 rkey;
	__u32 len;		/* the scatter list's bytes */
	__u64 compare_add;	/* ATOMIC: FETCH_ADD's addend, CMP_SWAP's compare */
	__u64 swap;
	__u8 dest_ip[16];	/* UD: the address handle (IPv4 v4-mapped) */
	__u32 dest_qpn;
	__u32 dest_qkey;
	struct {
		__u64 off;	/* in the allocation */
		__u32 len;
		__u32 alloc;
	} sge[XHCA_SGE_MAX];
	__u32 psn;		/* XHCA_SEND_DIRECT: the PSN it left with */
	__u32 pad1;
};
_Static_assert(sizeof(struct xhca_swqe) == 336, "xhca_swqe size");

/* Completion status and opcodes, numbered as in ibv_wc_status/ibv_wc_opcode. */
enum xhca_wc_status {
	XHCA_WC_SUCCESS = 0,
	XHCA_WC_LOC_LEN_ERR = 1,
	XHCA_WC_LOC_QP_OP_ERR = 2,	/* a send request the QP cannot carry */
	XHCA_WC_LOC_PROT_ERR = 4,
	XHCA_WC_WR_FLUSH_ERR = 5,
	XHCA_WC_MW_BIND_ERR = 6,	/* a memory window bind the rules refuse */
	XHCA_WC_BAD_RESP_ERR = 7,	/* a response the request did not ask for */
	XHCA_WC_REM_INV_REQ_ERR = 9,	/* NAK: invalid request */
	XHCA_WC_REM_ACCESS_ERR = 10,	/* NAK: remote access error */
	XHCA_WC_REM_OP_ERR = 11,	/* NAK: remote operational error */
	XHCA_WC_RETRY_EXC_ERR = 12,	/* no acknowledgement after every retry */
	XHCA_WC_RNR_RETRY_EXC_ERR = 13,	/* RNR NAKs after every RNR retry */
	XHCA_WC_RESP_TIMEOUT_ERR = 20,	/* proxy CQ: a message's completion never came */
};

enum xhca_wc_opcode {
	/* send completions (the QP's send CQ) */
	XHCA_WC_SEND = 0,
	XHCA_WC_RDMA_WRITE = 1,
	XHCA_WC_RDMA_READ = 2,
	XHCA_WC_COMP_SWAP = 3,
	XHCA_WC_FETCH_ADD = 4,
	XHCA_WC_BIND_MW = 5,
	XHCA_WC_LOCAL_INV = 6,
	XHCA_WC_ATOMIC_WRITE = 9,
	/* receive completions */
	XHCA_WC_RECV = 128,
	XHCA_WC_RECV_RDMA_WITH_IMM = 129,
	/* proxy CQs only (US 9,069,633): */
	XHCA_WC_RECV_RDMA_WRITE = 256,	/* an RDMA WRITE landed (byte_len), in order */
	XHCA_WC_PROXY = 257,		/* the proxy handled a SEND: imm_data its result */
};

/* XHCA_WC_PROXY: imm_data (host order), the lock service's answer. */
enum xhca_px_result {
	XHCA_PXR_GRANTED = 1,
	XHCA_PXR_REFUSED = 2,
	XHCA_PXR_RELEASED = 3,
};

#define XHCA_WC_GRH (1u << 0)		/* the buffer starts with a 40-byte GRH */
#define XHCA_WC_WITH_IMM (1u << 1)	/* imm_data is valid */
#define XHCA_WC_WITH_INV (1u << 3)	/* imm_data is the invalidated R_Key */

/* A completion (struct xhca_wc in the API). */
struct xhca_cqe {
	__u64 wr_id;
	__u32 status;		/* enum xhca_wc_status */
	__u32 opcode;		/* enum xhca_wc_opcode */
	__u32 byte_len;		/* bytes placed, the GRH included (a send
				 * completion: the request's bytes) */
	__u32 imm_data;		/* network byte order, as verbs; or the invalidated R_Key */
	__u32 qp_num;		/* the receiving QP (a send completion: the sending one) */
	__u32 src_qp;		/* UD: the sender's QPN */
	__u32 wc_flags;		/* XHCA_WC_* */
	__u16 pkey_index;
	__u8 sl;		/* UD: XHCA_SL_*, the frame's network header */
	__u8 pad0;
	__u32 vendor_err;	/* enum xhca_host_reason of a receive error; of a send
				 * error, the NAK's AETH syndrome (0: none) */
	__u32 pad1;
	__u64 rx_ns;		/* when xhca_rx took the last packet (CLOCK_MONOTONIC); a
				 * send completion, a flushed receive: when xhcad
				 * completed it (verbs' completion timestamp) */
	__u64 pad2;
};
_Static_assert(sizeof(struct xhca_cqe) == 64, "xhca_cqe size");

/* A UD receive's sl (RoCE has no SL): the frame's network header, as the
 * RoCEv2 annex has a CQE say it (mlx5's values). */
#define XHCA_SL_ROCE_V2 0x8	/* a UDP header */
#define XHCA_SL_IPV6 0x1
#define XHCA_SL_IPV4 0x2

#define XHCA_RING_DEPTH_MAX 65536
/* A CQ's, as mlx5 has it (libfabric's RDM endpoints ask for 2^18 entries
 * by default): a ring of 2^22 entries takes 256 MiB of host memory */
#define XHCA_CQ_DEPTH_MAX (1u << 22)

/* Bytes of host memory a ring of depth entries of size esize takes. */
static inline __u64 xhca_ring_bytes(__u32 depth, __u32 esize)
{
	return sizeof(struct xhca_ring_ctl) + (__u64)depth * esize;
}

#endif /* XHCA_RING_H */
