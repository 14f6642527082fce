/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The objects applications make, as xhcad keeps them: CQs and SRQs, a
 * QP's parts by role (its send queue, receive side, responder, place in
 * the proxy's sequence), the flow queues as xhcad runs them, sessions.
 * Part of xhcad_types.h, which includes it.
 */
#ifndef XHCAD_OBJS_H
#define XHCAD_OBJS_H

#include <linux/types.h>
#include <xhca/abi.h>
#include <xhca/ring.h>

/* Completions a proxy CQ may have on their way (promised, not yet
 * consumed), whatever its depth: half the proxy's reorder window per QP
 * (reorder.h), so that a full CQ holds the flow queues back before the
 * window can overflow. */
#define PROXY_CQ_INFLIGHT 4096

/* A shared receive queue: one ring of receive entries for several QPs of
 * a session (verbs' SRQ). */
struct srq {
	__u32 id;
	__u32 owner;		/* session */
	__u32 depth;
	__u32 alloc;		/* the ring's host memory */
	__u32 nqps;		/* QPs taking buffers from it */
	struct xhca_ring_ctl *ring;
	struct xhca_rwqe *e;
	__u32 cons;		/* xhcad's consumer index (the ring's is a copy) */
	int lock;		/* QPs of several engines take from it (spin_lock) */
	struct srq *next;
};

/* A completion queue, in host memory (ring.h). */
struct cq {
	__u32 id;
	__u32 owner;		/* session */
	__u32 depth;
	__u32 nqps;		/* receive and send queues whose completions go here */
	struct xhca_ring_ctl *ring;
	struct xhca_cqe *e;
	__u32 alloc;		/* its host memory */
	int efd;		/* the application's eventfd: signalled when armed */
	int dbfd;		/* doorbell: the application says there is room */
	int waiting;		/* xhcad waits for room (flow queues blocked on it) */
	int dirty;		/* completions since the last notification */
	__u32 cons_cache;	/* the application's consumer index, as last read
				 * (written under the lock, read without it) */
	__u32 prod;		/* the producer index (written under the lock, read
				 * without it: cq_room_or_wait; a proxy CQ's, the
				 * proxy thread's): the ring's is a copy for the
				 * application, never read back */
	__u64 full_since;	/* waiting: since when (ns) */
	int overrun;		/* xhcad gave up on it (XHCA_CQ_OVERRUN): no more
				 * completions are written */
	int lock;		/* QPs of several engines write it (spin_lock) */
	struct xhca_cqx *x;	/* its entry in xhca_cqx when xhca_rx writes it too
				 * (--recv-fast): the lock and prod are there */
	__u32 spilled;		/* completions of engines waiting for room (atomic) */
	int proxy;		/* XHCA_CQF_PROXY: the proxy thread writes it */
	__u32 flags;		/* as made: XHCA_CQF_* */
	__u32 claimed;		/* proxy CQ: completions promised to it (atomic, both
				 * threads): written or on their way, prod at most */
	struct cq *next;
};

/* A READ or ATOMIC the responder answered, kept so that a duplicate is
 * answered again, never executed twice (RXE's resp_res; as many as an
 * RC QP's max_dest_rd_atomic). */
#define RESP_RES XHCA_MAX_RD_ATOMIC
struct resp_res {
	__u8 op;	/* XHCA_OP_READ_REQ, _CMP_SWAP, _FETCH_ADD; 0: empty */
	__u8 done;	/* ATOMIC: executed, orig is what it returned */
	__u32 psn;	/* the request's; a READ's responses take npkts PSNs from it */
	__u32 npkts;
	__u32 msn;	/* the AETH's */
	__u32 rkey;
	__u32 len;
	__u64 va;
	__u64 orig;
};

/* The requester (request.c): a send request xhcad took from a send queue,
 * copied, and where it is. */
struct sq_ent {
	struct xhca_swqe w;
	__u32 psn;		/* its first PSN (started) */
	__u32 npkts;		/* PSNs it takes (a READ: one per response packet) */
	__u32 sent;		/* sent in this pass: packets (a READ: requests of
				 * RD_CHUNK responses each; an ATOMIC: 0 or 1) */
	__u32 rd_off;		/* READ: response bytes placed, in order */
	__u32 subs_hi;		/* READ/ATOMIC: requests on the wire at least once (a
				 * READ asks for RD_CHUNK response packets each) */
	__u8 started;		/* its PSNs assigned (it is being sent) */
	__u8 edge;		/* a packet at the window's edge asked for an ACK */
	__u8 done;		/* acknowledged (UC, UD: sent), failed or flushed */
	__u8 status;		/* enum xhca_wc_status when done */
	__u8 syndrome;		/* the NAK's, of an error */
	__u8 direct;		/* the program sent its one packet (direct_take) */
};

/* A send queue no doorbell can wake xhcad for is looked at this often. */
#define SQ_POLL_NS 1000000ull

struct sq_state {
	struct xhca_ring_ctl *ring;	/* in host memory (ring.h) */
	struct xhca_swqe *e;
	__u32 alloc, depth;
	struct cq *cq;
	struct sq_ent *ent;		/* by index & (depth - 1) */
	/* indexes, oldest first: retired (ring cons) <= acked <= next <= fetched */
	__u32 cons;		/* the oldest whose completion is not written */
	__u32 acked;		/* the oldest not done */
	__u32 next;		/* the next to send (go-back-N moves it back) */
	__u32 fetched;		/* taken from the ring */
	__u32 psn;		/* the next new PSN */
	__u32 una_psn;		/* the oldest PSN not acknowledged (RC) */
	__u32 hi_psn;		/* after the last PSN ever sent (RC: a retransmission is before it) */
	__u32 rd_out;		/* READ/ATOMIC requests on the wire (a READ of several
				 * chunks: each), answered not yet whole */
	__u8 timeout, retry_cnt, rnr_retry, max_rd_atomic;	/* the QP's attributes */
	__u8 retry_left, rnr_left;
	__u32 cwnd;		/* RC: packets (PSNs) unacknowledged at most, AIMD; in
				 * force under the path MTU's largest (sq_cwnd) */
	__u32 cwnd_acc;		/* PSNs acknowledged towards the next increase */
	__u32 ackreq_psn;	/* RC: the last PSN sent with AckReq (ackreq_due) */
	int gso_no;		/* its packets go through the TX ring, not gso.c */
	int ud_dst_set;		/* UD: ud_dst is where its packets went so far (gso.c's
				 * runs while it sends to one address: packet_out) */
	__u8 ud_dst[16];
	/* end-to-end credits (RC, IBA 9.7.7.2): messages that take a receive
	 * buffer (SEND, WRITE with immediate) started and acknowledged; while
	 * the responder gives a count, rq_sent stays within rq_limit, or one
	 * at a time when none is left */
	__u32 rq_sent, rq_acked, rq_limit;
	int credits_on;		/* the last ACK gave a count (not 31: no limit) */
	int credit_held;	/* a message waits for credits (counted once) */
	int mid_acked;		/* an ACK inside a message came: the window holds there */
	int whole_only;		/* the responder acknowledges whole messages only:
				 * messages are sent whole (sq_timeout) */
	int gap_set;		/* a lost response was asked for again at gap_psn: */
	__u32 gap_psn;		/* ... later ones of the old stream do not retry again */
	int error;		/* the QP is in error: everything left is flushed */
	int broken;		/* its ring's producer index is garbage: nothing more is
				 * taken from it until a reset */
	__u64 deadline;		/* retransmission timer (ns), 0: off */
	__u64 hold_until;	/* sending waits (an RNR NAK's timer, a neighbour,
				 * a back-off after a refused run) */
	__u32 refusals;		/* runs the interface dropped in a row (sq_refused) */
	__u8 dmac[6];		/* RC/UC: the remote's, from the neighbour table */
	int dmac_ok;
	int direct;		/* its path is in the ring for direct sends (sq_direct) */
	struct qp_host *qh;
	struct sq_state *next_sq;
};

/* The QP went to the error state: what the send queue holds is flushed by
 * the next sq_run, no timer runs (request.c's state; the receive side marks
 * it, as the QP's error reaches it first). */
static inline void sq_mark_error(struct sq_state *s)
{
	s->error = 1;
	s->deadline = 0;
	s->direct = 0; /* (no direct send from here on) */
	__atomic_store_n(&s->ring->d_psn, 0, __ATOMIC_RELEASE);
}

/* A QP's receive side (receive.c): its receive queue and the message being
 * placed into it. */
struct qp_recv {
	struct xhca_ring_ctl *rq; /* receive queue ring, NULL with no CQ */
	struct xhca_rwqe *rqe;
	__u32 rq_alloc;		/* the receive queue's allocation (0: an SRQ's) */
	__u32 rq_depth;
	__u32 rq_prod_cache;	/* the application's producer index, as last read
				 * (of its own ring only: an SRQ's moves under it) */
	__u32 rq_cons;		/* xhcad's consumer index of its own ring (the ring's
				 * copy is for the application: never read back) */
	int rq_broken;		/* the ring's producer index was garbage */
	struct xhca_rfast *rf;	/* xhca_rx places SENDs too (--recv-fast): the
				 * consumer index is rf's */
	__u32 owe_taken;	/* frames counted in rf's owe the round took */
	struct srq *srq;	/* the ring is this SRQ's, shared */
	/* the message being received */
	int in_msg;		/* MSG_*: a FIRST was placed; MIDDLE/LAST go on */
	int discard;		/* dropping the rest of a broken message, by this reason */
	__u32 msg_off;		/* bytes placed so far */
	struct xhca_rwqe wqe;	/* its buffer (the RQ head, consumed at the end; an
				 * SRQ's is taken off the ring at the start: held) */
	int held;		/* wqe is an SRQ's entry this QP took, not completed */
	struct xhca_rsge seg[XHCA_SGE_MAX]; /* ... its pieces (rq_load) */
	__u32 nseg;
	__u32 wr_rkey;		/* MSG_WRITE: the region, */
	__u64 wr_off;		/* where the next byte goes in it, */
	__u64 wr_left;		/* and how many are still to come */
	__u32 wr_len;		/* the whole WRITE */
	int flush;		/* in the error state with receive buffers to flush */
	int psn_valid;
	__u32 next_psn;		/* RC/UC: what the next frame should carry */
	__u32 end_psn;		/* RC: the PSN after the last message that ended
				 * here (psn_valid): where the next one starts */
	/* a CLI QP with a CQ: the buffers xhcad posts for it (xhca cq poll
	 * posts them again) */
	__u32 cli_bufs;		/* their allocation, 0: none */
	__u32 cli_buf_size;
};

/* The RC responder's (respond.c): the PSN the message in progress started
 * at, for a rewind; a rewind in force (frames dropped until the retry of
 * rw_psn comes); a class C error; the READ and ATOMIC responses kept for
 * duplicates. */
struct qp_resp {
	__u32 msg_psn;
	__u16 msg_csn;		/* the message in progress: the MSN before it (low 16 bits) */
	int rewound;
	__u32 rw_psn, rw_msn;
	__u64 rw_ns;		/* when: frames xhca_rx stamped later are current */
	int err_psn_set;	/* a class C error at err_psn: frames from it on dropped */
	__u32 err_psn;
	struct resp_res res[RESP_RES];
	__u32 res_next;
	/* the ACK this round owes (resp_flush_acks sends it at its end): a
	 * later one of the round takes its place and covers it */
	int ack_pending;
	struct xhca_pkt_spec ack;
	/* end-to-end credits (IBA 9.7.7.2.5): the receive queue's cons when
	 * the ACK above was made (its count lets the requester go that far
	 * and its count further); credit_slot: 1 + its place in
	 * d->credit_qps (0: not watched), watched while the count left less
	 * than half the ring, for an unsolicited ACK when buffers are posted */
	__u32 ack_cons;
	__u32 credit_slot;
};

/* On a proxy CQ (pxq.c, proxy.c, dispatch.c): the message whose frames come
 * now, by its CSN. */
struct qp_proxy {
	int on;			/* it has a reorderer in the proxy */
	int open;		/* a message of csn is being placed */
	int recorded;		/* ... and its completion went to the proxy */
	__u16 csn;
	__u8 handler;		/* XHCA_PXH_* of its SEND filters */
};

/* What xhcad keeps per local QP beside its context, by role, as rxe_qp:
 * where its messages go, its receive side, its responder, its requester
 * and its place in the proxy. */
struct qp_host {
	int valid;
	__u32 gen;		/* of the context this belongs to */
	__u32 gqpn;
	__u32 owner;		/* session, 0 = xhcad's own */
	__u32 pd;
	__u8 type;
	__u8 flowq;
	struct cq *cq;		/* NULL: nowhere to deliver (CLI QPs): RNR */
	struct xhca_qp_host cnt;
	struct qp_recv rcv;
	struct qp_resp resp;
	struct qp_proxy px;
	struct sq_state *sq;	/* the requester: NULL without a send queue */
};

enum { MSG_NONE, MSG_SEND, MSG_WRITE };

/* One AF_XDP socket: an RX queue's share of a flow queue. */
struct fq_sock;
struct xsk_state;

/* A flow queue as xhcad runs it. */
struct flowq_rt {
	struct fq_sock **socks;	/* one per RX queue (the replication queue: and the port's) */
	__u32 nsocks;
	int blocked;		/* waiting for room in blocked_on */
	struct cq *blocked_on;
	__u64 frames, bytes;	/* taken, payload bytes delivered */
	__u64 kernel_drops;
	__u32 nqps;
};

struct session {
	__u32 id;
	int fd;			/* its control connection; -1: waits to be resumed */
	int pidfd;		/* while it waits: readable when the process ends */
	__u32 pid;
	__u64 start;		/* the process's start time (a pid may be reused) */
	int sq_dbfd;		/* its send doorbell (XHCA_CTL_SQ_DOORBELL), -1: none */
	char name[32];
	struct session *next;
};

#endif
