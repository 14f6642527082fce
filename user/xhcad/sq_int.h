/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The send queues' insides, shared by the requester (request.c: the queue,
 * requests taken, packets out) and the completer below it (completer.c:
 * responses in, retries, completions) and by no other file.
 */
#ifndef XHCAD_SQ_INT_H
#define XHCAD_SQ_INT_H

#include <xhca/wire.h>
#include "xhcad_transport.h"

#define SQ_WINDOW 512		/* the window (cwnd) at its largest, packets: a flow
				 * queue's default gate (--watermarks 512,128), which
				 * one QP's requests then never close by themselves */
#define SQ_WINDOW_BYTES (1u << 20) /* and at most 1 MiB of payload: 256 packets
				 * at path MTU 4096, 512 at 1024 */
#define RD_CHUNK 64		/* response packets a READ request asks for at most */
#define CWND_MIN 64		/* the window after losses, at least */
#define ACKREQ_EVERY 32		/* PSNs sent without AckReq at most (below CWND_MIN) */
#define REFUSED_NS 100000ull	/* a QP whose run the interface dropped waits this
				 * long before it sends again, twice as long after each
				 * refusal in a row, up to REFUSED_MAX_NS: the queue
				 * drains meanwhile (sq_refused) */
#define REFUSED_MAX_NS 1000000ull

static inline struct sq_ent *ent(const struct sq_state *s, __u32 i)
{
	return &s->ent[i & (s->depth - 1)];
}

/* The window at its largest for a path MTU: a slow responder's ACKs (its
 * xhcad on a busy CPU) stall the requester less, at small MTUs too
 * (docs/bench-history.md). */
static inline __u32 sq_window(__u32 mtu)
{
	return mtu && SQ_WINDOW_BYTES / mtu < SQ_WINDOW ? SQ_WINDOW_BYTES / mtu : SQ_WINDOW;
}

/* The window in force: cwnd, at most the path MTU's largest (cwnd starts
 * at SQ_WINDOW, so a QP's window follows its path MTU until a loss). */
static inline __u32 sq_cwnd(const struct sq_state *s, __u32 mtu)
{
	__u32 w = sq_window(mtu);

	return s->cwnd < w ? s->cwnd : w;
}

static inline int is_rdat(__u8 op)
{
	return op == XHCA_WR_RDMA_READ || op == XHCA_WR_ATOMIC_CMP_AND_SWP ||
	       op == XHCA_WR_ATOMIC_FETCH_AND_ADD || op == XHCA_WR_ATOMIC_WRITE;
}

/* Whether a request takes a receive buffer at the responder. */
static inline int takes_rq(__u8 op)
{
	return op == XHCA_WR_SEND || op == XHCA_WR_SEND_WITH_IMM || op == XHCA_WR_SEND_WITH_INV ||
	       op == XHCA_WR_RDMA_WRITE_WITH_IMM;
}

static inline __u64 tmo_ns(const struct sq_state *s)
{
	/* IBA 9.7.6.1.3: 4.096 us * 2^timeout; 0 waits for ever */
	return s->timeout ? 4096ull << s->timeout : 0;
}

static inline __u32 lidx_of(const struct xhcad *d, const struct qp_host *qh)
{
	return (__u32)(qh - d->qh);
}

/* The QP's path MTU, bytes. */
static inline __u32 sq_mtu(const struct xhcad *d, const struct sq_state *s)
{
	return 1u << d->ctxm[lidx_of(d, s->qh)].mtu_shift;
}

/* completer.c */
/* The request e failed: it completes with status, the QP goes to the
 * error state and what follows it is flushed. */
void sq_fail(struct xhcad *d, struct qp_host *qh, struct sq_ent *e, __u8 status, __u8 syndrome);
/* Copies n bytes at byte off of the request's scatter list to (or, to_sge,
 * from) buf. */
int sq_sge_io(struct xhcad *d, __u32 owner, const struct xhca_swqe *w, __u64 off, void *buf,
	      __u32 n, int to_sge);
/* Writes the completions of what is done, oldest first (in the error
 * state: everything, flushed); frees the ring slots. */
int sq_retire(struct xhcad *d, struct sq_state *s, __u64 now);
/* The retransmission timer went off: again from the oldest PSN not
 * acknowledged (the neighbour looked up again too). */
void sq_timeout(struct xhcad *d, struct sq_state *s);
/* The QP's packets from psn on did not leave at now: the interface's
 * qdisc or device queue was full. Sent again from psn once the QP's back-off
 * is over (REFUSED_NS, doubled for each refusal in a row), the window
 * halved; no retry counted, nothing was lost on the wire. */
void sq_refused(struct xhcad *d, struct sq_state *s, __u32 psn, __u64 now);

#endif
