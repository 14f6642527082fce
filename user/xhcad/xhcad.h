/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhcad internals: the device (program, maps, pins), the QP table, host
 * memory, the flow queues (AF_XDP sockets and their scheduler), delivery
 * into applications' receive queues and completion queues, and sessions.
 * One thread runs all of it (loop.c), nothing here takes a lock, except the
 * proxy (proxy.c): a thread of its own that talks to this one through two
 * single-producer queues, and is the only writer of proxy CQs.
 */
#ifndef XHCAD_H
#define XHCAD_H

#include <limits.h>
#include <signal.h>
#include <sched.h>
#include <stdint.h>
#include <linux/types.h>
#include <xhca/abi.h>
#include <xhca/ctl.h>
#include <xhca/pkt.h>
#include <xhca/ring.h>
#include "sched.h"

/* Big-endian fields of a frame. */
static inline __u32 be32(const __u8 *p)
{
	return (__u32)p[0] << 24 | (__u32)p[1] << 16 | (__u32)p[2] << 8 | p[3];
}

static inline __u64 be64(const __u8 *p)
{
	return (__u64)be32(p) << 32 | be32(p + 4);
}

struct xhca;

#define XSK_FRAME_SIZE 4096 /* UMEM frames, one page each */

/* File descriptors of the maps xhcad uses; from the skeleton when xhcad
 * loads the object, from the attached program when it adopts one. */
struct xhca_maps {
	int cam;
	int ctx;
	int stats;
	int qp_stats;
	int pkeys;
	int xsks;
	int flowq;
	int fq_stats;
	int hostmem;
	int mr;
	int events;
	int mcast;
	int mc_stats;
	int mc_devs;
	int pfilt;
	int px_stats;
	int proxy_rb;
	int dstate; /* daemon state: QPN cursor (userspace only) */
};

/* xhca_dstate value: what xhcad must remember across restarts. */
struct xhca_dstate {
	__u32 next_qpn;
	__u32 pad;
};

/* Completions a proxy CQ may have on their way (promised, not yet
 * consumed), whatever its depth: half the proxy's reorder window per QP
 * (reorder.h), so that a full CQ holds the flow queues back before the
 * window can overflow. */
#define PROXY_CQ_INFLIGHT 4096

/* A completion queue, in host memory (ring.h). */
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
	__u32 spilled;		/* completions of engines waiting for room (atomic) */
	int proxy;		/* XHCA_CQF_PROXY: the proxy thread writes it */
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
	__u32 cwnd;		/* RC: packets (PSNs) unacknowledged at most, AIMD */
	__u32 cwnd_acc;		/* PSNs acknowledged towards the next increase */
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
	__u64 hold_until;	/* sending waits (an RNR NAK's timer, a neighbour) */
	__u8 dmac[6];		/* RC/UC: the remote's, from the neighbour table */
	int dmac_ok;
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

/* A host memory allocation: what an application sees as one buffer. */
struct hm_alloc {
	__u32 id;		/* sequence << 16 | slot */
	__u32 owner;		/* session, 0 = xhcad */
	__u32 npages;
	int contiguous;		/* pages[i] == pages[0] + i */
	int ring;		/* a CQ's, SRQ's or QP's ring: its owner cannot free it
				 * (it goes with the queue) */
	__u64 len;		/* bytes asked for */
	__u32 *pages;		/* host memory pages, in the order the application sees them */
};
#define HM_SLOTS 65536

/* A memory region as the translation manager keeps it (mr.c). */
struct mr_rt {
	__u32 rkey;		/* 0: this index is free */
	__u32 owner;
	__u32 alloc;		/* the allocation it lies in */
	int own_alloc;		/* xhcad allocated it for this region (the CLI's) */
	__u64 off;		/* where in it */
	struct xhca_mr_ctx e;	/* what xhca_rx sees */
	__u8 mw_type;		/* a memory window (1 or 2); 0: a region */
	__u32 mw_mr;		/* a bound window: its region's index */
	__u32 nmw;		/* a region: the windows bound to it */
};

/* A protection domain. */
struct pd_rt {
	__u32 id;
	__u32 owner;
	__u32 users;		/* QPs and MRs in it */
	struct pd_rt *next;
};

/* A block of host memory (hostmem.c): its map, its owner. */
#define HM_NOBODY 0xffffffffu	/* a block not there (or not claimed yet) */
struct hm_block {
	int fd;			/* its map, mapped at its place; -1: not there */
	__u32 owner;		/* session, 0 = xhcad; HM_NOBODY */
};

/* host memory (hostmem.c) */
struct hostmem {
	__u8 *base;		/* every block at its place; PROT_NONE between */
	__u64 bytes;
	__u32 pages;		/* from --hostmem-mb, or the pinned map */
	__u32 nblocks;
	struct hm_block *blocks; /* NULL: plain memory, every page there (the unit tests) */
	__u32 session_blocks;	/* --session-mb: the most blocks one session holds */
	__u64 refused;		/* allocations refused for a session's limit */
	__u64 used;
	__u16 *page_ref;	/* allocations holding each page (0: free); more than
				 * one after XHCA_ALLOC_JOIN */
	struct hm_alloc **allocs; /* by slot */
	__u32 alloc_seq;
	int fragment;		/* --fragment: scatter every allocation */
	int canary;		/* --canary: check freed pages are not written */
	__u64 canary_violations;
};

/* memory regions and protection domains (mr.c) */
struct mr_table {
	int wlock;		/* memory windows bound by send queues: one at a time */
	struct xhca_mr_ctx *map;	/* the xhca_mr map, mapped */
	struct mr_rt *e;	/* by index */
	__u32 max;
	__u32 *free;		/* free indexes, a stack */
	__u32 nfree;
	__u32 in_use;
	int barrier_fd;		/* an array of maps: updating it waits for an RCU grace period */
	int barrier_inner;
	__u64 barriers;
	struct pd_rt *pds;
	__u32 next_pd;
	__u32 key_seed;
	struct xhca_mw_stats mw;	/* memory windows */
};

/* the bus model (--bus-rate, round.c) */
struct bus_model {
	__u64 rate;		/* bytes/s, 0: unlimited (each engine's bucket) */
};

/* the requester (request.c) */
struct requester {
	struct sq_state *list;	/* QPs with a send queue */
	int more;		/* sq_run stopped with work left */
	int kick;		/* responses came: sq_run again, at the round's end */
	__u64 deadline;		/* its next timer (ns), 0: none */
	int poll;		/* a send queue is looked at every SQ_POLL_NS (sq_arm) */
};

/* the interface as frames need it (net.c) */
struct net_cache {
	__u8 mac[6];		/* the interface's (requests' source) */
	__u64 mac_ms;
};

/* this namespace's addresses, and frames to them (loopback.c) */
#define LO_ADDRS 64
#define LO_IFS 32
#define LO_BUF 16384		/* a test run's output: the block and a frame */
#define LO_PEERS 16		/* other xhcads of this namespace sending frames here */
#define LO_SNDBUF (8 << 20)	/* bytes a connection to one may hold */
struct lo_addr {
	__u8 ip[16];		/* IPv4 v4-mapped */
	int ifindex;
};
struct lo_if {
	int ifindex;
	char name[16];
	__u8 mac[6];
};
struct loopback {
	struct lo_addr addr[LO_ADDRS];
	int naddr;
	struct lo_if ifs[LO_IFS];
	int nif;
	int addr_ok;		/* read once at least */
	int watching;		/* nl_fd is open: read again when it says so */
	__u64 addr_ms;		/* without rtnetlink: when last read */
	int nl_fd;		/* rtnetlink: addresses and links changed */
	int listen_fd;		/* other xhcads of this namespace connect here */
	int in[LO_PEERS];	/* ... their connections: frames for us */
	int nin, next_in;
	struct lo_out {
		int ifindex;
		int fd;		/* -1: none */
	} out[LO_IFS];		/* our connections to them */
	char sock_path[108];
	__u8 *buf;		/* a test run's output */
	struct xhca_lo_stats stats;
};
enum lo_dest {
	LO_WIRE,		/* another host's */
	LO_SELF,		/* this interface's address */
	LO_PEER,		/* another interface's of this namespace */
	LO_MCAST,		/* a group with members here: the wire and a copy here */
};

/* the proxy's settings (main.c, proxy.c) */
struct proxy_cfg {
	__u32 high, low;	/* the load limit, requests */
	__u64 timeout_ns;	/* a sequence gap older than this is an error */
	const char *specs[XHCA_PXH_MAX];	/* --proxy-handler, loaded at start */
	int nspecs;
};

/* the proxy QP's filters (filter.c) */
struct filters {
	struct xhca_pfilter_set *set;	/* xhca_pfilt, as written (by local index) */
	__u32 next;
	__u32 n;
};

/* applications (session.c, cq.c) */
struct apps {
	struct session *sessions;
	__u32 nsessions;
	__u32 next_session;
	struct cq *cqs;
	__u32 next_cq;
	struct srq *srqs;
	__u32 next_srq;
	/* per session limits (--session-qps, -cqs, -mrs; 0: the device's) */
	__u32 lim_qps, lim_cqs, lim_mrs;
	__u32 lim_clients;	/* --user-clients: connections of one user (not root) */
	__u64 refused_clients;	/* connections refused for it */
	__u64 stalled_clients;	/* dropped for a message left half sent or read */
};

/*
 * An engine: a thread of the data path (the main thread is engine 0). It
 * owns the flow queues f with f % neng == its id (the replication and proxy
 * queues are engine 0's), so the QPs on them, their send queues, timers and
 * completions. Everything a round changes is its engine's or a QP's of that
 * engine, but for the objects QPs of several engines share (CQs, SRQs:
 * their own locks). The main thread does everything else (the control
 * socket, the CM, the proxy's service, multicast) with the other engines
 * stopped between two rounds (engines_stop). eng() is the running
 * thread's.
 */
#define XHCA_ENGINES_MAX 16
struct engine {
	__u32 id;
	struct requester sq;	/* its QPs' send queues (request.c) */
	struct sched sched;	/* its flow queues' scheduler */
	double tokens;		/* the bus model's bucket (d->bus.rate each) */
	__u64 tokens_ns;
	__u32 *ack_qps;		/* local indexes of the QPs owing an ACK this round */
	__u32 nack_qps;
	__u32 *credit_qps;	/* ... of the QPs whose last ACK gave few credits */
	__u32 ncredit_qps;
	__u32 nflush;		/* its QPs with buffers to flush */
	struct cq_spill *spill;	/* completions that found their CQ full (cq.c) */
	__u32 nspill;
	struct cq_spill *stage;	/* the round's completions, written at its end */
	__u32 nstage;
	int in_round;		/* in round_run: completions are staged (cq_write) */
	/* its counters, summed for `xhca status` and `xhca stats` */
	struct xhca_counter host[XHCA_H_MAX];
	__u64 naks;
	__u64 ring_faults;	/* QPs failed for their queues' garbage indexes */
	__u64 cq_overruns;
	struct xhca_resp_stats resp;
	struct xhca_req_stats req;
	__u64 sleeps, polled;	/* its loop's: waits that could sleep, busy polls that found work */
	int wake_fd;		/* an eventfd: written to wake it when it sleeps */
	int sleeping;		/* it sleeps, or is about to (atomic) */
	int blocked_new;	/* a flow queue of its blocked on a CQ this round */
};

extern __thread struct engine *eng_self;
/* The running thread's engine. */
static inline struct engine *eng(void)
{
	return eng_self;
}

struct xhcad {
	char ifname[16];
	int ifindex;
	int native;		/* XDP mode: 1 native (driver), 0 skb (generic) */
	int mode_set;		/* --mode given: no skb mode where the driver refuses native */
	int adopt;
	int keep;
	int maps_reused;	/* the maps were pinned by an earlier xhcad */
	int icrc_first;		/* --icrc first: no byte placed before its ICRC checked */
	__u64 poll_ns;		/* --poll-us: busy poll this long after work (0: sleep at once) */
	struct cm_state_all *cm; /* cm.c */
	int ctl_group;		/* --group: the control socket is its members' too */
	int no_cm;		/* --no-cm: no connection manager, QP1 left to the CLI */
	int no_kfuncs;		/* --no-kfuncs: xhca_rx loaded as if the kernel had none */
	char kernel[65];	/* the running kernel's release */
	__u32 kern_lacks;	/* XHCA_KF_* it lacks (main.c, kfeat.c) */
	__u32 kern_forced;	/* ... of them for --no-kfuncs */
	int cm_qp1;		/* QP1 is the connection manager's: nobody else changes it */
	__u32 ctl_gid;
	int state_dirty;	/* state.c: something to save */
	__u32 max_qps;
	char pin_dir[256];
	char sock_path[108];	/* sun_path */
	char view_dir[128];	/* the device view (ibview.c); "": none */
	__u64 view_writes;

	struct xhca *skel;	/* NULL when adopted */
	int prog_fd;
	__u32 prog_id;
	int attached;		/* we attached it (or adopted it): detach on exit */
	struct xhca_maps m;
	int ncpus;

	/* QP table (rebuilt from the maps at start) */
	uint64_t *bitmap;	/* local index in use */
	struct xhca_qp_ctx *ctxm; /* the xhca_qp_ctx map, mapped (user/lib/qpctx.c) */
	__u32 qps_in_use;
	__u32 next_qpn;		/* allocator cursor: moves forward, wraps */
	__u32 repaired;
	__u64 start_ms;
	struct qp_host *qh;	/* per local index */

	/* flow queues (xsk.c, flowq.c, round.c) */
	__u32 nflowq;
	__u32 umem_frames;
	int jumbo_slots;	/* --jumbo-slots; -1: umem_frames / 16 */
	__u32 ring_size;	/* RX, fill and completion ring entries */
	__u32 mcast_credits;	/* injected copies a flow queue may hold */
	__u32 mcast_threshold;	/* multicast packets waiting for replication, 0: no limit */
	struct mcast_state *mc;	/* mcast.c */
	struct xhca_flowq *fqm;	/* the xhca_flowq map, mapped */
	struct flowq_rt fq[XHCA_FLOWQ_MAX];
	struct xsk_state *xs;
	__u64 cq_stall_ns;	/* --cq-stall-ms: a CQ full that long overruns (0: never) */

	struct proxy *px;	/* the proxy thread (proxy.c, pxq.c) */

	/* the state of the other layers, each its own */
	struct hostmem hm;
	struct mr_table mr;
	struct bus_model bus;
	struct engine eng[XHCA_ENGINES_MAX];
	__u32 neng;		/* --engines */
	int stopped;		/* the main thread has the other engines stopped (engine.c) */
	struct net_cache net;
	struct loopback lo;
	struct proxy_cfg pxc;
	struct filters flt;
	struct apps app;
};

/* The engine that owns flow queue f (the replication and proxy queues:
 * engine 0), and so its QPs. */
static inline __u32 fq_engine(const struct xhcad *d, __u32 f)
{
	return f < d->nflowq && d->neng > 1 ? f % d->neng : 0;
}

static inline struct engine *qp_eng(struct xhcad *d, const struct qp_host *qh)
{
	return &d->eng[fq_engine(d, qh->flowq)];
}

/* A lock held for a few instructions by threads that never sleep under
 * it (a CQ's, an SRQ's): zero is unlocked. A waiter yields its CPU after
 * a while: with more busy threads than CPUs the holder may be the one
 * waiting for it. */
static inline void spin_lock(int *l)
{
	for (unsigned int n = 1; __atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE); n++)
		while (__atomic_load_n(l, __ATOMIC_RELAXED)) {
			__builtin_ia32_pause();
			if (!(n++ & 63))
				sched_yield();
		}
}

static inline void spin_unlock(int *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/* One bit per index (QP slots, host memory pages). */
static inline int bm_test(const uint64_t *bm, __u32 i)
{
	return (bm[i / 64] >> (i % 64)) & 1;
}

static inline void bm_set(uint64_t *bm, __u32 i, int v)
{
	if (v)
		bm[i / 64] |= 1ull << (i % 64);
	else
		bm[i / 64] &= ~(1ull << (i % 64));
}

/* util.c: the lowest layer */
/* An error for the control reply: the message into err, rc back. */
int errf(char *err, size_t len, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
__u64 now_ms(void);
/* Wakes engine e if it sleeps (always: even if not), through its eventfd. */
void engine_wake(struct engine *e, int always);
__u64 now_ns(void);	/* CLOCK_MONOTONIC, as xhca_rx's timestamps */
/* The start time of a process (field 22 of /proc/PID/stat), 0 if gone. */
__u64 proc_start_time(__u32 pid);

/* loader.c */
int xhcad_load(struct xhcad *d);
int xhcad_adopt(struct xhcad *d);
int hostmem_block_new(void);	/* a block's map: its descriptor, or -errno */
int hostmem_map_new(__u32 pages); /* xhca_hostmem, empty */
void xhcad_unload(struct xhcad *d);
/* xhcad --unload: what it did */
struct unload_done {
	__u32 prog_id;		/* the xhca_rx detached (0: none was attached) */
	const char *mode;	/* its XDP mode */
	int behind_dispatcher;	/* it was a component of libxdp's dispatcher */
	int pins;		/* pins removed */
	int dir_gone;		/* and the pin directory */
};
/* What a --keep left for d->ifname taken down: xhca_rx detached if it is
 * the one on the maps pinned in d->pin_dir, then those pins. 0: done (u
 * says what); -ENOENT: nothing pinned there; -EBUSY: another program is
 * attached, or the maps are in use elsewhere (said why; nothing changed). */
int xhcad_unload_kept(struct xhcad *d, struct unload_done *u);

/* qptab.c: the QP table as every layer reads it */
#define QPN_FIRST 2u		/* 0 (SMI) and 1 (GSI) are never allocated */
#define QPN_LAST 0xfffffeu	/* 0xffffff is multicast */
int qp_table_init(struct xhcad *d);
void qp_table_free(struct xhcad *d);
/* The QP of qpn, if owner may act on it (the CLI, 0, on any). */
int qp_find(struct xhcad *d, const char *op, __u32 qpn, __u32 owner, __u32 *lidx,
	    struct xhca_qp_ctx *c, char *err, size_t errlen);
/* The QP at lidx (if still of generation gen) to the error state. */
int qp_set_error(struct xhcad *d, __u32 lidx, __u32 gen);
int qp_ctx_read(struct xhcad *d, __u32 lidx, struct xhca_qp_ctx *c);
/* set_rx: also the receive state (create, reset, a new ePSN); otherwise
 * xhca_rx keeps advancing it undisturbed. */
void qp_ctx_write(struct xhcad *d, __u32 lidx, const struct xhca_qp_ctx *c, int set_rx);
int qp_cam_lookup(struct xhcad *d, __u32 qpn, struct xhca_cam_val *v);

/* qp.c: the QP verbs */
int qp_reconcile(struct xhcad *d);
/* At start: a kept QP that engine 0 must run (QP1, a proxy CQ's) on a flow
 * queue of another engine (an earlier xhcad ran other --engines) moves to
 * one of engine 0's. */
void qp_engines_fix(struct xhcad *d);
int qp_create(struct xhcad *d, struct xhca_qp_attr *a, __u32 owner, char *err, size_t errlen);
/* QP1, the GSI QP, as the connection manager's: xhcad's own, UD, RTS,
 * delivering to xhcad (made unless an earlier xhcad's is there). */
int qp_gsi_ensure(struct xhcad *d);
int qp_modify(struct xhcad *d, struct xhca_qp_attr *a, __u32 owner, char *err, size_t errlen);
int qp_destroy(struct xhcad *d, __u32 qpn, __u32 owner, char *err, size_t errlen);
/* The views take the caller: a session (owner) sees its own objects only,
 * xhcad's own client (0) all of them. */
int qp_show(struct xhcad *d, __u32 qpn, __u32 owner, struct xhca_qp_info **out, __u32 *n,
	    char *err, size_t errlen);
int stats_get(struct xhcad *d, const struct xhca_stats_req *rq, __u32 owner,
	      struct xhca_stats_reply *out, char *err, size_t errlen);
/* eng0: one of engine 0's (a QP it must run) */
__u32 qp_default_flowq(const struct xhcad *d, __u32 qpn, int eng0);

/* pxq.c: the proxy's mailbox, as the layers above tell the proxy thread
 * (no-ops while there is no proxy) */
/* A QP on a proxy CQ: its reorderer, from the CSN xhca_rx counts now. */
/* The QP (on a proxy CQ) to the proxy: its completions in order from CSN
 * first (a new QP: the count xhca_rx keeps; a QP a restart kept: where the
 * proxy had released up to, px_csn). */
void proxy_qp_add(struct xhcad *d, __u32 lidx, __u16 first);
void proxy_qp_del(struct xhcad *d, __u32 lidx);
/* The normal path's end of a message of a QP on a proxy CQ: its
 * completion, or (c NULL) none. A flushed buffer's completion (no CSN)
 * goes after the sequence. */
void proxy_record(struct xhcad *d, struct qp_host *qh, __u16 csn, const struct xhca_cqe *c);
void proxy_flush_cqe(struct xhcad *d, struct qp_host *qh, const struct xhca_cqe *c);
/* Wakes the proxy for what was handed to it since the last kick (once per
 * round, as cq_notify). */
void proxy_kick(struct xhcad *d);
/* Returns once the proxy is done with every request given to it so far
 * (the host memory a READ or ATOMIC named may go). */
void proxy_sync(struct xhcad *d);

/* hostmem.c */
int hostmem_init(struct xhcad *d);
void hostmem_fini(struct xhcad *d);
/* A new zeroed allocation (flags XHCA_ALLOC_*), or NULL with errno. */
struct hm_alloc *hm_alloc(struct xhcad *d, __u64 len, __u32 owner, __u32 flags);
struct hm_alloc *hm_alloc_join(struct xhcad *d, __u64 len, __u32 owner,
			       const struct xhca_alloc_join *join, __u32 njoin);
struct hm_alloc *hm_find(const struct xhcad *d, __u32 id);
/* The allocation's pages free; no memory region may be on it any more
 * (mem_free, mr.c, drops them first). */
int hm_free(struct xhcad *d, __u32 id, __u32 owner);
void hm_free_owner(struct xhcad *d, __u32 owner);
/* --canary: checks every free page (xhca status calls it). */
void hm_canary_scan(struct xhcad *d);
/* [off, off + len) is inside allocation a (a may be NULL: no). */
int hm_range(const struct hm_alloc *a, __u64 off, __u64 len);
void hm_write(struct xhcad *d, const struct hm_alloc *a, __u64 off, const void *src, __u64 n);
void hm_read(const struct xhcad *d, const struct hm_alloc *a, __u64 off, void *dst, __u64 n);
/* The allocation's memory when it is contiguous, else NULL. */
void *hm_contig_ptr(const struct xhcad *d, const struct hm_alloc *a);
/* Bytes [off, off + n) of a, where they are adjacent in host memory (to be
 * read in place); NULL where they cross into a page elsewhere. */
const void *hm_span(const struct xhcad *d, const struct hm_alloc *a, __u64 off, __u64 n);
/* Host memory offset of byte off of the allocation. */
__u64 hm_base(const struct hm_alloc *a, __u64 off);
/* An allocation of an earlier xhcad (state.c), its pages as they are. */
int hm_restore(struct xhcad *d, __u32 id, __u32 owner, __u64 len, const __u32 *pages,
	       __u32 npages);
/* --canary: the pattern into every free page (at start, after the restore). */
void hm_canary_fill(struct xhcad *d);
/* After the restore: the blocks of the pinned map that no kept allocation
 * holds go. */
void hm_settle(struct xhcad *d);
/* The descriptor of block b if owner holds it, else -1. */
int hm_block_fd(const struct xhcad *d, __u32 b, __u32 owner);
__u32 hm_blocks_of(const struct xhcad *d, __u32 owner);
__u32 hm_blocks_made(const struct xhcad *d);

/* mr.c: the translation manager */
int mr_init(struct xhcad *d);
/* A region of an earlier xhcad, if the map still holds it as it was. */
void mr_restore(struct xhcad *d, __u32 index, __u32 rkey, __u32 owner, __u32 alloc, int own_alloc,
		__u64 off);
/* After the restore: every other region in the map is invalidated. */
void mr_sweep(struct xhcad *d);
void mr_fini(struct xhcad *d);
int mr_reg(struct xhcad *d, __u32 owner, struct xhca_mr_attr *a, char *err, size_t errlen);
/* Region a->rkey with the translation, PD and access a gives (key kept,
 * the old ones unusable when it returns). */
int mr_rereg(struct xhcad *d, __u32 owner, struct xhca_mr_attr *a, char *err, size_t errlen);
int mr_dereg(struct xhcad *d, __u32 owner, __u32 rkey, char *err, size_t errlen);
/* Invalidates every region on allocation id (before it is freed). */
void mr_drop_alloc(struct xhcad *d, __u32 id);
void mr_drop_owner(struct xhcad *d, __u32 owner);
/* An allocation freed, with the regions on it first (what every layer above
 * this one uses to free host memory); every allocation of owner. */
int mem_free(struct xhcad *d, __u32 id, __u32 owner);
void mem_free_owner(struct xhcad *d, __u32 owner);
int mr_show(struct xhcad *d, __u32 owner, struct xhca_mr_info **out, __u32 *n);
/* Memory windows: entries of the same table. A bind or invalidation is a
 * send queue request of a QP of owner in PD pd (request.c executes it in
 * its turn; receive.c a SEND with Invalidate): the completion status. */
int mw_alloc(struct xhcad *d, __u32 owner, struct xhca_mw_req *r, char *err, size_t errlen);
int mw_dealloc(struct xhcad *d, __u32 owner, __u32 rkey, char *err, size_t errlen);
struct mw_bind {
	__u32 rkey;		/* the window's R_Key after the bind */
	__u32 lkey;		/* the region (0: none, with len 0) */
	__u64 addr, len;	/* the window: the region's addresses */
	__u32 access;		/* XHCA_ACCESS_REMOTE_* */
};
__u8 mw_bind(struct xhcad *d, __u32 owner, __u32 pd, __u32 qpn, const struct mw_bind *b);
/* A type 2 window bound through QP qpn (remote: by the peer's SEND with
 * Invalidate; local: a LOCAL_INV) unbound; 0 or -errno when rkey names no
 * such window. */
int mw_invalidate(struct xhcad *d, __u32 owner, __u32 pd, __u32 qpn, __u32 rkey, int remote);
/* io->len bytes of the region at io->off, in a buffer for the caller to free. */
int mr_read(struct xhcad *d, __u32 owner, struct xhca_mr_io *io, void **out, char *err,
	    size_t errlen);
struct mr_rt *mr_find(struct xhcad *d, __u32 rkey);
/* Waits until no xhca_rx run still uses what it read before the call. */
void mr_barrier(struct xhcad *d);
int pd_alloc(struct xhcad *d, __u32 owner, __u32 *id);
int pd_dealloc(struct xhcad *d, __u32 owner, __u32 id, char *err, size_t errlen);
/* Whether owner may use PD id (0, xhcad's, is the CLI's). */
int pd_usable(struct xhcad *d, __u32 owner, __u32 id);
void pd_ref(struct xhcad *d, __u32 id, int delta);
void pd_drop_owner(struct xhcad *d, __u32 owner);

/* loopback.c: this namespace's addresses; frames to them (xsk.c asks) */
int lo_init(struct xhcad *d);
void lo_fini(struct xhcad *d);
/* What the loop polls (at most max): rtnetlink, the socket other xhcads of
 * this host connect to (lo_service when one is readable) and, with frames,
 * their connections (xsk_lo_recv). */
int lo_fds(const struct xhcad *d, int *fds, int max, int frames);
/* 1 when the addresses or links changed (the device view is out of date). */
int lo_service(struct xhcad *d);
int lo_refresh(struct xhcad *d);
/* Where a frame goes; LO_PEER: *ifindex is the interface's. */
enum lo_dest lo_dest(struct xhcad *d, const void *frame, __u32 len, int *ifindex);
/* xhca_rx on the frame as if ifindex had received it: the XDP verdict
 * (XDP_REDIRECT: m is the block it wrote), or -errno. */
int lo_run(struct xhcad *d, const void *frame, __u32 len, struct xhca_rx_meta *m);
/* The frame to the xhcad of ifindex: 0 (sent, or lost: counted), -EAGAIN. */
int lo_forward(struct xhcad *d, int ifindex, const void *frame, __u32 len);
/* A frame from another xhcad of this namespace: its length, 0 when none
 * waits. */
int lo_recv(struct xhcad *d, void *buf, __u32 cap);
/* The addresses of interface ifindex (at most max), v4-mapped. */
int lo_if_addrs(struct xhcad *d, int ifindex, __u8 (*out)[16], int max);
/* The MAC of the interface of this namespace that has ip; -ENOENT. */
int lo_local_mac(struct xhcad *d, const __u8 ip[16], __u8 mac[6]);

/* ibview.c: the device as sysfs would show it, for xhca exec */
/* Writes (again) every file of d->view_dir from the interface now. */
int ibview_update(struct xhcad *d);
void ibview_remove(struct xhcad *d);

/* xsk.c: the UMEM, the flow queue sockets and their rings, the free
 * stacks: set up, torn down, accounted */
/* How many engines run (d->neng): --engines, or (0) one per CPU; at most
 * one per RX queue of the interface (an engine sends on a queue of its
 * own) and per flow queue. */
void xsk_engines(struct xhcad *d);
int xsk_init(struct xhcad *d);
void xsk_fini(struct xhcad *d);
int xsk_nrxq(const struct xhcad *d);
int xsk_zerocopy(const struct xhcad *d);
int xsk_multibuf(const struct xhcad *d); /* AF_XDP frames of several descriptors (Linux 6.6) */
__u32 xsk_max_path_mtu(const struct xhcad *d); /* 4096, or 2048 without multi-buffer */
void xsk_refill(struct xhcad *d);
/* Frames lost by the kernel after xhca_rx redirected them, since the last
 * call, per flow queue: added to deq so backlog and gate stay true. */
void xsk_sync_drops(struct xhcad *d);
void xsk_account(const struct xhcad *d, struct xhca_status *s);
__u32 xsk_backlog(const struct xhcad *d, __u32 f);
/* The replication port's socket (queue 0 of ifindex), on the UMEM, into
 * xhca_xsks at XHCA_XSK_REP_KEY, drained as the replication queue. */
int xsk_rep_open(struct xhcad *d, int ifindex);
void xsk_rep_close(struct xhcad *d);

/* xsk_io.c: the AF_XDP data path: frames received, taken, sent, looped,
 * injected (its insides and xsk.c's: xsk_int.h) */
/* Poll set: the RX socket fds of flow queue f. */
int xsk_fds(const struct xhcad *d, __u32 f, int *fds, int max);
/* The head frame of flow queue f (oldest over its RX queues): its metadata,
 * data and length, or 0 when f is empty. */
int xsk_head(struct xhcad *d, __u32 f, const struct xhca_rx_meta **meta, const __u8 **data,
	     __u32 *len);
/* Takes the head frame of f out of its ring; xsk_done() gives it back.
 * The ring slots and the flow queue's deq are released by xsk_flush(), once
 * per batch. */
void xsk_take(struct xhcad *d, __u32 f);
void xsk_done(struct xhcad *d);
void xsk_flush(struct xhcad *d);
/* Whether the frame being processed is a multicast copy, and of which group. */
int xsk_taken_copy(const struct xhcad *d, __u32 *group);
/* A frame waits in one of flow queue f's sockets (the rings looked at, no
 * system call). */
int xsk_rx_ready(const struct xhcad *d, __u32 f);
/* The replication queue's head frame, taken and held with one reference
 * (the stored payload's); 0 when it is empty. */
int xsk_mcast_take(struct xhcad *d, const struct xhca_rx_meta **meta, const __u8 **data,
		   __u32 *len, __u64 *addr);
/* A reference more to the multicast frame at addr (returns the count), or
 * one less: at zero it goes back to the free stack, once. */
__u32 xsk_frame_get(struct xhcad *d, __u64 addr);
void xsk_frame_put(struct xhcad *d, __u64 addr);
/* A copy of the frame at addr into flow queue f, with its own metadata;
 * -ENOBUFS when f has no credit left. */
int xsk_inject(struct xhcad *d, __u32 f, const struct xhca_rx_meta *m, __u64 addr, __u32 len,
	       __u32 group);
__u32 xsk_injected(const struct xhcad *d, __u32 f);
/* Sends a frame out of RX queue 0's socket (copied into a UMEM frame);
 * xsk_tx_kick() hands what was queued to the kernel. */
int xsk_tx(struct xhcad *d, const void *frame, __u32 len);
/* A frame built in place, not copied: xsk_tx_alloc() gives room for len
 * bytes in the UMEM (a jumbo slot over one frame) with its TX ring entries
 * held, NULL with errno EAGAIN (nothing free after a kick) or EMSGSIZE;
 * xsk_tx_submit() queues what was built there (len: its length, at most
 * the room asked for), xsk_tx_abort() gives the room back. One at a time. */
void *xsk_tx_alloc(struct xhcad *d, __u32 len);
int xsk_tx_submit(struct xhcad *d, __u32 len);
void xsk_tx_abort(struct xhcad *d);
void xsk_tx_kick(struct xhcad *d);
/* Frames from other xhcads of this namespace (loopback.c), up to max, into
 * their flow queues; whether there is room for one; looped frames held. */
int xsk_lo_recv(struct xhcad *d, int max);
int xsk_lo_room(const struct xhcad *d);
__u32 xsk_lo_held(const struct xhcad *d);
/* The frame at addr was looped back, not received from the wire. */
int xsk_frame_looped(const struct xhcad *d, __u64 addr);
void xsk_tx_stats(const struct xhcad *d, __u64 *frames, __u64 *full);

/* flowq.c: the flow queues' state (blocked on a CQ, weight, view) */
#define TOKEN_BURST_MIN (64u << 10)	/* the bus model's bucket, at least */
void flowq_init(struct xhcad *d);
/* The flow queues waiting for room in cq (NULL: all) go on. */
/* Whether a flow queue of engine's waits for an application (its head
 * needs a CQ slot). */
int flowq_any_blocked(const struct xhcad *d, __u32 engine);
void flowq_unblock(struct xhcad *d, struct cq *cq);
void flowq_info(const struct xhcad *d, __u32 f, struct xhca_flowq_info *fi);
int flowq_set(struct xhcad *d, const struct xhca_flowq_set *r, char *err, size_t errlen);

/* cq.c: completion queues and shared receive queues */
struct cq *cq_find(struct xhcad *d, __u32 id);
struct srq *srq_find(struct xhcad *d, __u32 id);
int srq_create(struct xhcad *d, __u32 owner, struct xhca_srq_attr *a, char *err, size_t errlen);
int srq_destroy(struct xhcad *d, __u32 id, __u32 owner, char *err, size_t errlen);
int cq_create(struct xhcad *d, __u32 owner, struct xhca_cq_attr *a, int efd, char *err,
	      size_t errlen);
int cq_destroy(struct xhcad *d, __u32 id, __u32 owner, char *err, size_t errlen);
/* The CQ's ring of a->depth entries now (its completions moved there, its
 * counters kept); a->ring_off, ring_len say where. It must take what it
 * holds and pending more: the completions of signaled requests posted to
 * it (sq_in_flight). */
int cq_resize(struct xhcad *d, __u32 owner, struct xhca_cq_attr *a, __u32 pending, char *err,
	      size_t errlen);
int cq_show(struct xhcad *d, __u32 owner, struct xhca_cq_info **out, __u32 *n);
/* A CQ of an earlier xhcad (state.c). */
int cq_restore(struct xhcad *d, __u32 id, __u32 owner, __u32 depth, __u32 alloc,
	       __u32 flags);
/* A resumed session's CQ gets its application's eventfd again. */
int cq_rebind(struct xhcad *d, __u32 id, __u32 owner, int efd, char *err, size_t errlen);
/* Every CQ and SRQ of owner (a session that ended); returns the CQs freed. */
__u32 cq_free_owner(struct xhcad *d, __u32 owner);
/* At exit: the memory of every CQ and SRQ, their rings left as they are. */
void cq_fini(struct xhcad *d);
/* Completions used in cq, or on their way to it; how many it may have. */
__u32 cq_used(struct cq *cq);
__u32 cq_room(const struct cq *cq);
/* Whether cq has room for a completion; if not, the CQ waits for the
 * application's doorbell (ring.h). */
int cq_room_or_wait(struct cq *cq);
/* Writes a completion into a CQ that is not a proxy CQ; -ENOSPC when
 * full (its waiting flag set: the doorbell tells when there is room). */
int cq_put(struct xhcad *d, struct cq *cq, const struct xhca_cqe *c);
/* A completion into cq, whose room its caller saw (cq_room_or_wait):
 * inside a round, staged by the running engine and written at the round's
 * end (cq_flush, one lock per CQ); outside one (a control request), now;
 * when another engine took that room meanwhile, at its next round
 * (cq_spill_run), in order. */
void cq_write(struct cq *cq, const struct xhca_cqe *c);
/* The running engine's staged completions written (cq_notify does it). */
void cq_flush(void);
/* The running engine's completions that found their CQ full: written
 * while there is room. Whether any is left. */
int cq_spill_run(struct xhcad *d);
/* Writes the round's staged completions, then wakes the applications whose
 * CQs got completions and that sleep on them (once per round). */
void cq_notify(struct xhcad *d);

/* session.c: the list of application sessions */
struct session *session_new(struct xhcad *d, int fd, const struct xhca_hello *h, __u32 pid);
/* A session, or one of an earlier xhcad that waits for its process (state.c). */
struct session *session_find(struct xhcad *d, __u32 id);
/* At exit: the memory of every session. */
void session_fini(struct xhcad *d);

/* net.c: the interface's addresses and MAC, destinations' MACs */
/* The interface's addresses (IPv4 v4-mapped), looked up again every
 * second at most; how many. */
int if_addrs(struct xhcad *d, const __u8 (**out)[16]);
/* Whether ip is one of the interface's own addresses. */
int net_is_local(struct xhcad *d, const __u8 ip[16]);
/* A UD send's source for dst: the interface's first address of its family
 * and scope. */
int net_ud_source(struct xhcad *d, const __u8 dst[16], __u8 src[16]);
/* The interface's MAC into d->mac (once). */
int net_local_mac(struct xhcad *d);
/* The MAC of ip (multicast: from the address; else the neighbour table,
 * asked to resolve it when it does not know: -EHOSTUNREACH meanwhile). */
int net_dest_mac(struct xhcad *d, const __u8 ip[16], __u8 mac[6]);

/* receive.c: a QP's receive side on the host, SEND and WRITE placement */
/* A frame of a flow queue as every stage after the dispatch reads it,
 * beside the metadata xhca_rx wrote: its headers found once (pkt_parse). */
struct pkt_info {
	const struct xhca_rx_meta *m;
	const __u8 *fr;
	__u32 len;
	const struct xhca_opinfo *oi;	/* its opcode's */
	__u8 op;			/* the opcode's low 5 bits */
	const __u8 *bth;		/* NULL: the metadata and the frame disagree */
};
/* Fills pi for the frame fr of len bytes and its metadata m. Where the
 * metadata carries the payload's place (xhca_rx parsed the headers), the
 * BTH is found from it; the other frames (placed WRITEs, duplicates, gaps,
 * READ and ATOMIC requests) are parsed here. */
void pkt_parse(struct pkt_info *pi, const struct xhca_rx_meta *m, const __u8 *fr, __u32 len);
/* rq: the QP's own receive ring (rq_depth entries), or srq's ring. */
void qp_host_attach(struct xhcad *d, __u32 lidx, __u32 gen, __u32 gqpn, __u8 type, __u8 flowq,
		    __u32 owner, struct cq *cq, struct hm_alloc *rq, __u32 rq_depth,
		    struct srq *srq);
/* Its send queue goes first (sq_detach). */
void qp_host_detach(struct xhcad *d, __u32 lidx);
/* The QP of a frame's metadata, if it is still the one xhca_rx saw. */
struct qp_host *qp_host_of(struct xhcad *d, const struct xhca_rx_meta *m);
/* The host side of a QP that went to the error state: the message in
 * progress is dropped, its posted receive buffers complete with
 * WR_FLUSH_ERR (as far as its CQ has room now; the rest later), its send
 * requests are flushed by the next sq_run. */
void qp_host_to_error(struct xhcad *d, struct qp_host *qh);
__u32 recv_cons(const struct qp_host *qh); /* xhcad's consumer index of its receive queue */
void recv_reset(struct qp_host *qh);
void qp_ring_fatal(struct xhcad *d, struct qp_host *qh, const char *which);
void qp_cq_overruns(struct xhcad *d);
/* Flushes what the CQs have room for now. */
void qp_flush_run(struct xhcad *d);
/* The placement of one frame (dispatch.c chose it; host reasons back): a
 * SEND into the next receive buffer, a WRITE xhca_rx left to xhcad, a
 * WRITE with immediate xhca_rx placed (its completion). */
int recv_send(struct xhcad *d, __u32 f, struct qp_host *qh, const struct pkt_info *pi);
int recv_write(struct xhcad *d, __u32 f, struct qp_host *qh, const struct pkt_info *pi);
int recv_write_imm(struct xhcad *d, struct qp_host *qh, const struct xhca_rx_meta *m, __u32 imm,
		   __u32 len, int reason);
/* A broken message: the rest of it is dropped by reason (end: it ended). */
int recv_msg_fail(struct qp_host *qh, int end, int reason);
int recv_is_send(__u8 op);
/* Where the BTH starts in the frame. */
int recv_bth_offset(const __u8 *fr, __u32 len, __u32 *off);

/* resp_exec.c: READ and ATOMIC executed, acknowledgements built (pure:
 * either thread) */
/* Sends the frame of spec s: each thread builds it where it sends it from
 * (the main thread in the UMEM, the proxy in its message to it). */
typedef int (*resp_tx_fn)(void *arg, const struct xhca_pkt_spec *s);
/* A READ or ATOMIC with its region resolved: what executing it takes,
 * with no look at xhcad's tables (the proxy thread executes these). */
struct resp_job {
	struct xhca_pkt_spec s;	/* the response's frame (addresses, QPN, MSN) */
	__u8 op;
	__u32 psn, mtu, dlen;
	__u64 arg, cmp;		/* ATOMIC operands; ATOMIC WRITE: the word, as it came */
	__u64 *word;		/* ATOMIC: the host word */
	struct { __u64 hoff; __u32 len; } *span; /* READ: its bytes in host memory, in order */
	__u32 nspan;
};
/* Executes j: READ RESPONSE packets, or the ATOMIC (WRITE) and its answer,
 * to tx. */
int resp_execute(const __u8 *hostmem, struct resp_job *j, resp_tx_fn tx, void *arg);
/* j->s becomes the answer of an ATOMIC executed (orig: the word before),
 * or of an ATOMIC WRITE (a READ RESPONSE ONLY of no bytes). */
void resp_done_spec(struct resp_job *j, __u64 orig);
void resp_job_free(struct resp_job *j);
/* The response's frame around the request fr: addresses and tags swapped,
 * the QP's remote QPN and P_Key; returns the BTH offset. */
int resp_reply_spec(const __u8 *fr, __u32 len, const struct xhca_qp_ctx *c,
		    struct xhca_pkt_spec *s, __u8 opcode);
/* Hands the frame of s to tx. */
int resp_send_spec(const struct xhca_pkt_spec *s, resp_tx_fn tx, void *arg);
/* Builds the frame of s in the UMEM and queues it (xsk_tx_alloc): the
 * main thread's resp_tx_fn (arg: xhcad). */
int resp_tx_umem(void *arg, const struct xhca_pkt_spec *s);
/* The 24-bit MSN of c whose low 16 bits xhca_rx put in a frame's metadata
 * (csn): its count now is at or after it. */
__u32 resp_msn(const struct xhca_qp_ctx *c, __u16 low);
/* An ACKNOWLEDGE (syndrome: AETH, ACK with credits, RNR or NAK) at psn
 * with msn, back the way the request frame fr came: its spec in *s (0, or
 * -EINVAL for a frame it cannot answer); resp_aeth sends it through tx
 * (either thread). */
int resp_ack_spec(const struct xhca_qp_ctx *c, const __u8 *fr, __u32 len, __u32 psn, __u32 msn,
		  __u8 syndrome, struct xhca_pkt_spec *s);
int resp_aeth(const struct xhca_qp_ctx *c, const __u8 *fr, __u32 len, __u32 psn, __u32 msn,
	      __u8 syndrome, resp_tx_fn tx, void *arg);

/* respond.c: the RC responder: READ and ATOMIC resolved, duplicates, gaps,
 * rewinds, ACKs and NAKs */
/* 0 with j filled (free it with resp_job_free), or the host reason: a
 * region gone since xhca_rx looked (NAK sent), bad metadata. */
int resp_resolve(struct xhcad *d, struct qp_host *qh, const struct pkt_info *pi,
		 struct resp_job *j);
int respond(struct xhcad *d, struct qp_host *qh, const struct pkt_info *pi);
/* An ATOMIC executed (by the proxy, too): its result kept for duplicates. */
void resp_atomic_done(struct xhcad *d, __u32 lidx, __u32 gen, __u32 psn, __u64 orig);
/* The RC responder around the placement of a frame: resp_before answers
 * duplicates and gaps and drops what a rewind made stale (a host reason),
 * or returns -1 to place the frame; resp_after sends its ACK, or the RNR
 * or error NAK of the placement's reason r (returned). resp_bad_icrc: the
 * frame's ICRC was wrong (an RC QP is rewound to receive it again). */
int resp_before(struct xhcad *d, struct qp_host *qh, const struct pkt_info *pi);
int resp_after(struct xhcad *d, struct qp_host *qh, const struct pkt_info *pi, int r);
int resp_bad_icrc(struct xhcad *d, struct qp_host *qh, const struct xhca_rx_meta *m);
/* A QP's sequence starts over (reset, a new ePSN): no rewind, error or
 * saved response of the old one applies. */
void resp_reset(struct qp_host *qh);
/* xhca_rx put the QP in the error state (its event): the context says so
 * too, the requester gets its NAK, the application its async event, and its
 * posted receive buffers complete with WR_FLUSH_ERR. */
void resp_qp_error_event(struct xhcad *d, const struct xhca_event *e);
/* The round's end: every QP's ACK it owes leaves, one per QP (ACKs that
 * AckReq asked for in the round coalesced into the last: nothing waits
 * longer than the round, whose frames leave at its end anyway). */
void resp_flush_acks(struct xhcad *d);
/* Credit updates (IBA 9.7.7.2.5): a QP whose last ACK let its requester
 * send few more messages, and whose application has posted receive
 * buffers since, gets that ACK again with the new count. resp_credit_due:
 * whether one is due (no system call: busy polling asks); resp_credits_run
 * sends them, returns how many. */
int resp_credit_due(struct xhcad *d);
int resp_credits_run(struct xhcad *d);
int resp_init(struct xhcad *d);
void resp_fini(struct xhcad *d);

/* completer.c: the completer (responses in, retries, completions; its
 * insides shared with request.c in sq_int.h) */
/* A response frame (ACK, NAK, READ response, ATOMIC ACK) of an RC QP's
 * requests: its host reason. */
int sq_response(struct xhcad *d, struct qp_host *qh, const struct pkt_info *pi);

/* request.c: the requester (send queues, requests taken, packets out) */
/* The send queue of a QP being created: its ring in alloc (sq_depth
 * slots), completions to cq. */
int sq_attach(struct xhcad *d, struct qp_host *qh, struct hm_alloc *alloc, __u32 depth,
	      struct cq *cq);
/* The QP to flow queue flowq, its send queue to that queue's engine (at
 * start, before any frame: qp_engines_fix). */
void sq_move(struct xhcad *d, struct qp_host *qh, __u32 flowq);
void sq_detach(struct xhcad *d, struct qp_host *qh);
/* At exit: every send queue's memory, its ring left as it is. */
void sq_fini(struct xhcad *d);
/* The QP was reset: the queue starts over, nothing completes (verbs). */
void sq_reset(struct xhcad *d, struct qp_host *qh);
/* The PSN of the next new request (XHCA_QPA_SQ_PSN, a restart). */
void sq_set_psn(struct xhcad *d, struct sq_state *s, __u32 psn);
/* The next PSN and the requests started, into the QP context (restarts). */
void sq_note(struct xhcad *d, const struct sq_state *s, __u32 started);
/* A send queue again after a restart (state.c); attrs: timeout, retry_cnt,
 * rnr_retry, max_rd_atomic. 1 when requests were in flight: flushed. */
int sq_restore(struct xhcad *d, struct qp_host *qh, struct hm_alloc *alloc, __u32 depth,
	       struct cq *cq, const __u8 attrs[4]);
/* Sends what the send queues have, within budget packets; retransmits on
 * timers; writes completions. Returns the packets sent and completions
 * written; *more when it had
 * to stop with work left; *deadline the next timer (ns, 0: none). */
int sq_run(struct xhcad *d, int budget, int *more, __u64 *deadline);
/* Sleep: every send queue drained arms its doorbell; returns 1 if one got
 * entries meanwhile (do not sleep). */
int sq_arm(struct xhcad *d);
/* A send queue has requests not taken yet, or a timer is due (rings only). */
int sq_ready(const struct xhcad *d);
/* Signaled requests posted on send queues completing to cq, their
 * completions not written yet. */
__u32 sq_in_flight(const struct xhcad *d, const struct cq *cq);

/* cm.c: the connection manager (QP1's MADs, the rdma_cm library's requests;
 * include/priv/xhca/cm.h) */
struct cm_state_all;
struct xhca_cm_id;
struct xhca_cm_listen;
struct xhca_cm_conn;
struct xhca_cm_reject;
struct xhca_cm_notify;
struct xhca_cm_migrate;
int cm_init(struct xhcad *d);
void cm_fini(struct xhcad *d);
/* A frame of QP1 (its pkt_info): a CM message; its host reason. */
int cm_recv(struct xhcad *d, const struct pkt_info *pi);
int cm_channel(struct xhcad *d, __u32 session, __u32 *chan, int *fd);
int cm_channel_destroy(struct xhcad *d, __u32 session, __u32 chan, char *err, size_t errlen);
int cm_id_create(struct xhcad *d, __u32 session, struct xhca_cm_id *a, char *err, size_t errlen);
int cm_migrate(struct xhcad *d, __u32 session, const struct xhca_cm_migrate *a, char *err,
	       size_t errlen);
int cm_listen(struct xhcad *d, __u32 session, const struct xhca_cm_listen *a, char *err,
	      size_t errlen);
int cm_connect(struct xhcad *d, __u32 session, const struct xhca_cm_conn *k, char *err,
	       size_t errlen);
int cm_accept(struct xhcad *d, __u32 session, const struct xhca_cm_conn *k, char *err,
	      size_t errlen);
int cm_reject(struct xhcad *d, __u32 session, const struct xhca_cm_reject *r, char *err,
	      size_t errlen);
int cm_establish(struct xhcad *d, __u32 session, __u32 id, char *err, size_t errlen);
int cm_disconnect(struct xhcad *d, __u32 session, __u32 id, char *err, size_t errlen);
int cm_destroy(struct xhcad *d, __u32 session, __u32 id, char *err, size_t errlen);
int cm_notify(struct xhcad *d, __u32 session, const struct xhca_cm_notify *n, char *err,
	      size_t errlen);
/* A session ended: its ids go (their peers told), its channels close. */
void cm_session_gone(struct xhcad *d, __u32 session);
/* Messages sent again, gone time waits: due now; the next one's time (0: none). */
void cm_timers(struct xhcad *d);
__u64 cm_deadline(const struct xhcad *d);
void cm_status(const struct xhcad *d, struct xhca_status *s);

/* dispatch.c: where a frame of a flow queue goes */
/* Places one frame (the proxy's declined messages come back here);
 * returns its host reason. */
int deliver_frame(struct xhcad *d, __u32 f, const struct xhca_rx_meta *m, const __u8 *fr,
		  __u32 len);

/* proxy.c: the proxy thread (US 9,069,633), and the main thread's service
 * of it (its mailbox: pxq.c) */
int proxy_init(struct xhcad *d);	/* its queues: before any QP is attached */
int proxy_start(struct xhcad *d);	/* the thread and its ring buffer */
/* An application's handler (include/xhca/proxy_handler.h): FILE.so[:ARG]. */
int proxy_handler_load(struct xhcad *d, const char *spec);
/* Whether handler id exists (none, lock, or one loaded). */
int proxy_handler_known(const struct xhcad *d, __u8 id);
void proxy_fini(struct xhcad *d);
/* Up to budget frames of the proxy queue to the proxy; how many. */
int proxy_drain(struct xhcad *d, int budget);
/* Whether the proxy queue's sockets are worth polling (not paused, room). */
int proxy_taking(const struct xhcad *d);
/* What the proxy sent back: responses, declined messages, QPs to error;
 * how much there was. */
int proxy_serve(struct xhcad *d);
int proxy_fd(const struct xhcad *d);	/* readable: proxy_serve() has work; */
void proxy_ack(struct xhcad *d);	/* ... then this clears it (one syscall) */
void proxy_info(struct xhcad *d, struct xhca_proxy_info *pi);
int proxy_set(struct xhcad *d, const struct xhca_proxy_set *r);

/* filter.c: proxy QP filters (xhca_pfilt) */
int filter_init(struct xhcad *d);
void filter_fini(struct xhcad *d);
int filter_add(struct xhcad *d, struct xhca_filter *r, __u32 owner, char *err, size_t errlen);
int filter_del(struct xhcad *d, __u32 id, __u32 owner, char *err, size_t errlen);
int filter_show(struct xhcad *d, __u32 qpn, __u32 owner, struct xhca_filter **out, __u32 *n,
		char *err, size_t errlen);
void filter_clear(struct xhcad *d, __u32 lidx);
/* The handler of the QP's SEND filters (XHCA_PXH_*). */
__u8 filter_handler(const struct xhcad *d, __u32 lidx);

/* cli.c: the CLI's receive side */
/* Posts buffer i of a CLI QP; takes completions out of a CLI CQ, with the
 * start of each message, posting the buffers again. */
void cli_post(struct xhcad *d, struct qp_host *qh, __u32 i);
int cq_poll(struct xhcad *d, const struct xhca_cq_poll *r, struct xhca_cq_entry **out, __u32 *n,
	    char *err, size_t errlen);

/* round.c: one round of the data path */
/* Serves up to budget frames; returns how many were taken. *wait_ns tells
 * how long the bus model wants to wait before more (0: none). */
/* One round; *work: whether anything was done (frames, requests, the
 * proxy's, copies). Returns the frames taken from the flow queues. */
/* Every engine's counters added up (the control thread's, the engines
 * stopped); the host reasons' zeroed (xhca stats --reset). */
void round_totals(const struct xhcad *d, struct engine *sum);
void round_totals_reset(struct xhcad *d);
int round_run(struct xhcad *d, int budget, __u64 *wait_ns, int *work);
/* Whether a round would find work now (rings only, no system call): the
 * loop's busy poll. */
int round_ready(struct xhcad *d);

/* mcast.c: multicast groups and the replication engine */
struct mcast_state;
int mcast_init(struct xhcad *d);
/* Once the sockets are up: the groups of an earlier xhcad that no record
 * brought back leave the maps; the replication port for the rest. */
void mcast_start(struct xhcad *d);
void mcast_fini(struct xhcad *d);
/* What a restart keeps of a group (state.c writes the record, then gives
 * it back to an xhcad that takes over the maps). */
#define MCAST_REC_COUNTERS 11
struct mcast_rec {
	struct xhca_mgid mgid;
	__u32 index, gen, gen_seq;
	__u16 pkey, flags;
	__u32 nmembers, ndevs;
	__u64 cnt[MCAST_REC_COUNTERS];
	struct { __u32 lidx, gen, gqpn; } m[XHCA_MCAST_MEMBERS];
	__u32 devs[XHCA_MCAST_DEVS];	/* ifindexes */
};
/* The record of group slot i: 0, or -ENOENT for an empty slot. */
int mcast_save(const struct xhcad *d, __u32 i, struct mcast_rec *r);
/* The group again, if the maps still hold it (same index and generation):
 * the members whose QPs came back, the ports still there. 0 or -errno. */
int mcast_restore(struct xhcad *d, const struct mcast_rec *r);
int mcast_create(struct xhcad *d, const struct xhca_mcast_req *r, struct xhca_mcast_info *out,
		 char *err, size_t errlen);
int mcast_destroy(struct xhcad *d, const struct xhca_mcast_req *r, char *err, size_t errlen);
int mcast_attach(struct xhcad *d, const struct xhca_mcast_req *r, __u32 owner, char *err,
		 size_t errlen);
int mcast_detach(struct xhcad *d, const struct xhca_mcast_req *r, __u32 owner, char *err,
		 size_t errlen);
/* A QP goes: out of every group (and an automatic group with it, if last). */
void mcast_qp_gone(struct xhcad *d, __u32 lidx);
void mcast_info(struct xhcad *d, __u32 index, struct xhca_mcast_info *mi);
int mcast_show(struct xhcad *d, struct xhca_mcast_info **out, __u32 *n);
void mcast_status(const struct xhcad *d, struct xhca_status *s);
/* Replicates up to budget packets of the replication queue; returns how many
 * it took from it (their ring slots want releasing). */
int mcast_run(struct xhcad *d, int budget);
/* A packet is half replicated (waiting for credit). */
int mcast_pending(const struct xhcad *d);
/* What became of a copy of group's (a host reason). */
void mcast_delivered(struct xhcad *d, __u32 group, int reason);

/* state.c: what a restart keeps */
int state_save(struct xhcad *d);
void state_remove(struct xhcad *d);
int state_restore(struct xhcad *d, int maps_reused);

/* client.c: an application's end */
/* Everything the session owned goes: QPs first (their CQs and rings are
 * in use until then), then CQs, then the rest of its host memory. */
void session_close(struct xhcad *d, __u32 id);

/* ctl_server.c, loop.c */
int ctl_listen(struct xhcad *d);
/* engine.c: the engines after the first, threads of their own */
int engines_start(struct xhcad *d);
/* Every engine stopped between two rounds (nested: counted), then let go
 * again, those that sleep woken: around anything the main thread does but
 * its own rounds. */
void engines_stop(struct xhcad *d);
void engines_go(struct xhcad *d);
void engines_end(struct xhcad *d);
/* Flow queue f's sockets in the epoll set epfd, heard (on) or muted;
 * *state: 0 not in it yet, then 1 muted, 2 heard. */
int engine_fq_epoll(const struct xhcad *d, int epfd, unsigned char *state, __u32 f, int on);

int xhcad_run(struct xhcad *d, int lfd);
void fill_status(struct xhcad *d, struct xhca_status *s);
extern volatile sig_atomic_t xhcad_stop;	/* loop.c: a signal ends the loop */

#endif /* XHCAD_H */
