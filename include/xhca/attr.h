/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What an application and xhcad say to each other about objects, shared by
 * the application interface (xhca.h) and the control protocol (the
 * project's private ctl.h): a QP's attributes and which of them a modify
 * sets, their defaults and limits, and the flags of allocations, CQs and
 * proxy handlers.
 */
#ifndef XHCA_ATTR_H
#define XHCA_ATTR_H

#include <linux/types.h>
#include <xhca/abi.h>

/* Which fields of struct xhca_qp_attr a modify sets. */
#define XHCA_QPA_STATE (1u << 0)
#define XHCA_QPA_EPSN (1u << 1)
#define XHCA_QPA_REMOTE_IP (1u << 2)
#define XHCA_QPA_LOCAL_IP (1u << 3)
#define XHCA_QPA_MTU (1u << 4)
#define XHCA_QPA_ACTION (1u << 5)
#define XHCA_QPA_QKEY (1u << 6)
#define XHCA_QPA_PKEY (1u << 7)
#define XHCA_QPA_DEST_QPN (1u << 8)
#define XHCA_QPA_FLOWQ (1u << 9)	/* create: flowq given (else a hash of the QPN) */
#define XHCA_QPA_PROXY (1u << 10)	/* modify: proxy on or off, by flags & XHCA_QPF_PROXY */
#define XHCA_QPA_ACK_EVERY (1u << 11)	/* RC responder: ack_every */
#define XHCA_QPA_RNR_TIMER (1u << 12)	/* RC responder: rnr_timer */
#define XHCA_QPA_SQ_PSN (1u << 13)	/* requester: the next PSN sent */
#define XHCA_QPA_TIMEOUT (1u << 14)	/* RC requester: timeout */
#define XHCA_QPA_RETRY_CNT (1u << 15)	/* RC requester: retry_cnt */
#define XHCA_QPA_RNR_RETRY (1u << 16)	/* RC requester: rnr_retry */
#define XHCA_QPA_MAX_RD_ATOMIC (1u << 17) /* RC requester: max_rd_atomic */
#define XHCA_QPA_ACCESS (1u << 18)	/* RC/UC responder: the remote access it allows,
					 * access (XHCA_ACCESS_REMOTE_*); never set: any */

/* An RC QP's defaults: an ACK at least every 16 request packets; RNR NAKs
 * ask for 1.28 ms (timer code 14, IBA table 45). */
#define XHCA_ACK_EVERY_DEFAULT 16
#define XHCA_RNR_TIMER_DEFAULT 14
/* An RC requester's defaults: a response within 4.096 us * 2^14 = 67 ms,
 * 7 retries (of a timeout or a sequence NAK), RNR NAKs retried without
 * end (7), up to 16 READ/ATOMIC outstanding (what the responder keeps). */
#define XHCA_TIMEOUT_DEFAULT 14
#define XHCA_RETRY_CNT_DEFAULT 7
#define XHCA_RNR_RETRY_DEFAULT 7
#define XHCA_MAX_RD_ATOMIC_DEFAULT 16
/* READ/ATOMIC requests a QP may have outstanding, and a responder keeps for
 * their duplicates: RXE's 128 (perftest sets max_rd_atomic to the peer's
 * max_qp_rd_atom, so a smaller limit refuses RXE as a peer). */
#define XHCA_MAX_RD_ATOMIC 128

struct xhca_qp_attr {
	__u32 mask;		/* XHCA_QPA_*: modify, and FLOWQ on create */
	__u32 qpn;		/* create: 0 = allocate */
	__u8 type;		/* enum xhca_qp_type */
	__u8 state;		/* enum xhca_qp_state */
	__u8 action;		/* enum xhca_qp_action; a session's QPs are always host */
	__u8 mtu_shift;		/* 8..12 (256..4096) */
	__u16 pkey;		/* create: 0 = 0xffff */
	__u8 flags;		/* XHCA_QPF_IPV6; XHCA_QPF_PROXY (create, modify);
				 * reply: XHCA_QPF_PROXY_CQ when its CQ is a proxy CQ */
	__u8 flowq;
	__u32 qkey;
	__u32 epsn;
	__u32 dest_qpn;
	__u8 local_ip[16];
	__u8 remote_ip[16];
	__u32 cq;		/* create: the CQ of receive completions (the CLI: one of
				 * its own, and xhcad posts the receive buffers) */
	__u32 rq_depth;		/* create (with cq): receive queue slots, a power of 2 */
	__u64 rq_off;		/* reply: the receive queue ring, in host memory */
	__u32 owner;		/* reply: session id, 0 = xhcad's own */
	__u32 pd;		/* create: protection domain (0: xhcad's, the CLI's) */
	__u32 rq_alloc;		/* reply: the receive queue's host memory allocation */
	__u32 buf_size;		/* create (CLI, with cq): bytes of each receive buffer
				 * xhcad posts for the QP (0: 4096) */
	__u16 ack_every;	/* RC responder: an ACK at least every N request
				 * packets, besides AckReq (0: only at AckReq) */
	__u8 rnr_timer;		/* RC responder: the RNR NAK's timer code, 0..31 */
	__u8 access;		/* XHCA_QPA_ACCESS: XHCA_ACCESS_REMOTE_* (verbs'
				 * qp_access_flags); reply: with XHCA_QP_ACCESS_SET once set */
	/* the requester (send side) */
	__u32 sq_psn;		/* the PSN of the next new packet */
	__u8 timeout;		/* RC: 4.096 us * 2^timeout without a response
				 * is a retry (1..31; 0: never) */
	__u8 retry_cnt;		/* RC: retries after a timeout or sequence NAK, 0..7 */
	__u8 rnr_retry;		/* RC: retries after an RNR NAK, 0..7 (7: no end) */
	__u8 max_rd_atomic;	/* RC: READ/ATOMIC outstanding at once, 1..128 */
	__u32 send_cq;		/* create: the CQ of send completions (0: no send queue) */
	__u32 sq_depth;		/* create (with send_cq): send queue slots, a power of 2 */
	__u32 sq_alloc;		/* reply: its host memory allocation */
	__u64 sq_off;		/* reply: the send queue ring, in host memory */
	__u32 srq;		/* create (session, with cq): take receive buffers from
				 * this shared receive queue, not a ring of its own
				 * (rq_depth 0; the reply's rq_off and rq_alloc 0) */
	__u32 pad1;
};
_Static_assert(sizeof(struct xhca_qp_attr) == 136, "xhca_qp_attr size");

/* Allocations (xhca_alloc_ex). */
#define XHCA_ALLOC_SCATTER (1u << 0) /* pages apart from each other, as fragmented memory */
#define XHCA_ALLOC_CONTIG (1u << 1)  /* adjacent pages even under xhcad --fragment */
/* The new allocation holds the pages of earlier ones of the session at
 * the places the control request says (ctl.h's struct xhca_alloc_join), the
 * rest new: both hold those pages (libxhca grows host memory under the
 * application's pages this way, the earlier regions on their pages). */
#define XHCA_ALLOC_JOIN (1u << 2)

/* A proxy CQ (US 9,069,633): every completion of its QPs, from the normal
 * path or the proxy, is released by the proxy thread in message order. A
 * proxy QP must use one. */
#define XHCA_CQF_PROXY (1u << 0)
/* The application reads no completion's time: the completions xhca_rx
 * writes itself (xhcad --recv-fast) carry rx_ns 0, sparing a clock read
 * each (verbs: a CQ made without IBV_WC_EX_WITH_COMPLETION_TIMESTAMP).
 * xhcad's own completions keep theirs. */
#define XHCA_CQF_NO_TS (1u << 1)

/* What a proxy QP's filter does with a SEND it is given (struct
 * xhca_pfilter's handler); READ and ATOMIC the proxy executes itself. */
#define XHCA_PXH_NONE 0		/* no handler: SENDs are declined, to the normal path */
#define XHCA_PXH_LOCK 1		/* the lock service (LOCK/UNLOCK/LOCKALL requests) */
#define XHCA_PXH_MAX 8		/* 2.. : handlers loaded by xhcad --proxy-handler, in order */

#endif /* XHCA_ATTR_H */
