/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What xhcad reports over the control protocol (ctl.h, which includes
 * this): the kernel features it probed, what became of the frames it took
 * (the host reasons), a QP's counters, and xhca status's whole reply.
 * xhca status, xhca stats and xhca qp show print them (tools/xhca/);
 * docs/reasons.md and docs/cli.md say what each means to a user.
 */
#ifndef XHCA_STATUS_H
#define XHCA_STATUS_H

#include <linux/types.h>
#include <xhca/abi.h>
#include <xhca/attr.h>

/*
 * What xhca uses of the kernel where it is optional, each with a slower path
 * that is still correct: X(name, JSON key, what, since, what its lack
 * costs). xhcad
 * probes them at start (kfeat.c), says in one line what it lacks, and
 * xhca status shows it.
 */
#define XHCA_KFEATS(X)                                                                   \
	X(KFUNC_COPY, "kfunc_copy", "bpf_dynptr_copy", "Linux 6.15",                                   \
	  "xhca_rx places only the WRITEs whose packets start at a multiple of 1 KiB "    \
	  "in a page (path MTU 1024 or more), xhcad the others (xlate_nocopy)")          \
	X(XSK_SG, "xsk_multibuf", "AF_XDP multi-buffer", "Linux 6.6",                                     \
	  "a frame must fit one UMEM frame: path MTU 2048 at most")                      \
	X(TRAMPOLINE, "trampoline", "BPF trampolines", "Linux 5.5, where the JIT has them", \
	  "libxdp's dispatcher cannot run: xhca_rx is the interface's only XDP program")
#define XHCA_KF_ENUM(n, k, w, s, c) XHCA_KF_##n##_BIT,
enum { XHCA_KFEATS(XHCA_KF_ENUM) XHCA_KF_NR };
#undef XHCA_KF_ENUM
#define XHCA_KF(n) (1u << XHCA_KF_##n##_BIT)

/* What xhcad delivered for a QP (summed), beside xhca_rx's counters. */
struct xhca_qp_host {
	__u64 frames;		/* taken from its flow queue */
	__u64 completions;	/* receive completions written */
	__u64 rnr;		/* messages dropped: no receive buffer posted */
	__u64 errors;		/* length errors, bad buffers, out-of-sequence messages */
};

struct xhca_qp_info {
	struct xhca_qp_attr attr;
	__u32 gen;
	__u32 pad0;
	struct xhca_qp_counter cnt; /* summed over CPUs */
	struct xhca_qp_host host;
};
_Static_assert(sizeof(struct xhca_qp_info) == 208, "xhca_qp_info size");

#define XHCA_STATS_F_RESET (1u << 0) /* zero the counters after reading */
#define XHCA_STATS_F_QP (1u << 1)    /* also return the counters of qpn */

struct xhca_stats_req {
	__u32 flags;
	__u32 qpn;
};

/*
 * What became of every frame xhcad took from a flow queue: each ends in
 * exactly one of these (the daemon's half of the reason counters).
 */
#define XHCA_HOST_REASONS(X)                                                              \
	X(PLACED, "placed", "payload copied into a posted receive buffer")                 \
	X(RNR, "rnr", "no receive buffer posted: the message is dropped (RC: RNR NAK, rewound)") \
	X(LEN_ERR, "len_err",                                                               \
	  "message longer than its receive buffer: error completion (RC: NAK 0x61, QP to error)") \
	X(BAD_BUF, "bad_buf",                                                               \
	  "the posted buffer is not in the session's host memory: error completion (RC: NAK 0x63, QP to error)") \
	X(SEQ_ERR, "seq_err",                                                               \
	  "packet out of sequence in a multi-packet message: dropped (RC: rewound, received again)") \
	X(STALE, "stale", "the QP was destroyed or re-created after xhca_rx took the packet") \
	X(UNSUPPORTED, "unsupported", "opcode not delivered to the host by this version")  \
	X(BAD_META, "bad_meta", "the metadata block in front of the frame is not valid")      \
	X(XLATE_PLACED, "xlate_placed",                                                     \
	  "RDMA WRITE payload placed by the translation manager, page by page")            \
	X(IMM_DONE, "imm_done", "WRITE with immediate placed by xhca_rx: its completion")  \
	X(XLATE_ERR, "xlate_err",                                                           \
	  "the region went away between xhca_rx and the translation manager: dropped (RC: NAK 0x62, QP to error)") \
	X(RESPONDED, "responded", "READ or ATOMIC executed, its response sent")             \
	X(RESP_FAIL, "resp_fail",                                                           \
	  "READ or ATOMIC not answered: its region went away after xhca_rx checked it (NAKed), or no memory") \
	X(TO_PROXY, "to_proxy", "offloaded: handed to the proxy thread")                      \
	X(ACKED, "acked", "placed by xhca_rx; its ACK sent")                                \
	X(DUP, "dup", "RC duplicate request: acknowledged again, or its saved response sent") \
	X(SEQ_NAK, "seq_nak", "RC request after a PSN gap: sequence NAK sent")              \
	X(REWOUND, "rewound",                                                               \
	  "RC: dropped while the QP waits for a PSN again (after an RNR NAK, a lost or bad frame)") \
	X(BAD_ICRC, "bad_icrc", "the frame's ICRC does not match: dropped")                  \
	X(QP_ERR, "qp_err", "the QP went to the error state after xhca_rx took the frame: dropped") \
	X(RESP_ACK, "resp_ack", "requester: an ACK or ATOMIC response of requests it sent")   \
	X(RESP_READ, "resp_read", "requester: READ response data, placed in the request's buffers") \
	X(RESP_NAK, "resp_nak", "requester: a NAK (sequence: sent again; RNR: after its timer; else an error)") \
	X(RESP_STALE, "resp_stale",                                                         \
	  "requester: a response for nothing outstanding (a duplicate, or out of order): ignored") \
	X(CM, "cm", "a MAD to QP1: taken by xhcad's connection manager")

enum xhca_host_reason {
#define XHCA_HOST_REASON_ENUM(name, str, desc) XHCA_H_##name,
	XHCA_HOST_REASONS(XHCA_HOST_REASON_ENUM)
#undef XHCA_HOST_REASON_ENUM
	XHCA_H_MAX
};

struct xhca_stats_reply {
	__u32 nr_reasons;	/* XHCA_R_MAX of the daemon */
	__u32 qpn;		/* 0 unless XHCA_STATS_F_QP */
	struct xhca_qp_counter qp;
	struct xhca_counter reason[XHCA_R_MAX];
	__u32 nr_host;		/* XHCA_H_MAX of the daemon */
	__u32 pad0;
	struct xhca_counter host[XHCA_H_MAX];
};

struct xhca_status {
	char ifname[16];
	char pin_dir[256];
	char mode[8];		/* "native" or "skb" */
	char attached_by[16];	/* "xhcad", "adopted" */
	__u32 ifindex;
	__u32 prog_id;
	__u32 max_qps;
	__u32 qps_in_use;
	__u32 abi_version;
	__u32 pid;
	__u64 uptime_ms;
	__u32 next_qpn;		/* allocator cursor */
	__u32 keep;		/* 1: program stays attached on SIGTERM */
	__u32 repaired;		/* broken entries removed at start */
	__u32 sessions;		/* application sessions connected */
	/* host interface */
	__u32 nflowq;		/* flow queues */
	__u32 nrxq;		/* RX queues with sockets */
	char sched[8];		/* "drr" or "fifo" */
	char xsk_mode[16];	/* "copy" or "zerocopy" */
	/* the running kernel: what it lacks of what xhca uses (XHCA_KF_*
	 * bits), and which of those --no-kfuncs made it lack */
	char kernel[65];	/* its release (uname -r) */
	__u32 kern_lacks;
	__u32 kern_forced;
	__u64 bus_rate;		/* bytes/s, 0 = unlimited */
	__u64 hostmem_bytes;
	__u64 hostmem_used;
	__u32 hostmem_blocks;	/* blocks made (sessions' and xhcad's) */
	__u32 session_blocks;	/* --session-mb, in blocks */
	__u64 hostmem_refused;	/* allocations refused for a session's limit */
	__u32 lim_qps, lim_cqs, lim_mrs; /* per session (0: none) */
	__u32 lim_clients;	/* control connections of one user */
	__u64 refused_clients;
	__u64 stalled_clients;	/* dropped: a message left half sent or half read */
	__u64 ring_faults;	/* QPs failed for garbage in their queues' indexes */
	__u64 cq_overruns;	/* CQs full past --cq-stall-ms */
	__u64 cq_stall_ms;
	/* UMEM frames: every one is in exactly one of these */
	__u32 umem_frames;
	__u32 frames_free;	/* xhcad's free list */
	__u32 frames_fill;	/* in fill rings */
	__u32 frames_kernel;	/* taken from a fill ring, not yet in an RX ring */
	__u32 frames_rx;	/* in RX rings, waiting for xhcad */
	__u32 frames_held;	/* taken by xhcad, being processed */
	/* frames of several descriptors (over one UMEM frame) made one */
	__u32 jumbo_slots;	/* two frames each, after umem_frames */
	__u32 jumbo_free;
	__u64 jumbo_frames;	/* received in several descriptors, made one */
	__u64 jumbo_drops;	/* dropped: no slot free, or the frame over one */
	/* memory regions */
	__u32 max_mrs;
	__u32 mrs_in_use;
	__u32 fragment;		/* --fragment */
	__u32 canary;		/* --canary */
	__u64 canary_violations;
	__u64 barriers;		/* invalidations waited for */
	__u64 naks;		/* NAKs sent (the TX ring full: in tx_full) */
	__u64 tx_frames;	/* frames sent: on the AF_XDP TX ring, and through gso.c */
	__u64 tx_full;		/* not: the ring or the UMEM was full */
	/* multicast */
	__u32 mcast_groups;
	__u32 mcast_threshold;	/* 0: none */
	__u32 mcast_credits;	/* per flow queue */
	__u32 mcast_waiting;	/* multicast frames not yet fully replicated */
	__u64 mcast_max_refs;	/* the largest reference count a frame reached */
	__u64 mcast_credit_stalls;
	__u64 mcast_replicated;
	__u64 mcast_stale;	/* frames of a group destroyed meanwhile */
	/* the RC responder (respond.c) */
	struct xhca_resp_stats {
		__u64 acks;	/* ACKs sent (AckReq, coalescing, duplicates, credit updates) */
		__u64 seq_naks;	/* PSN sequence error NAKs, one per gap */
		__u64 rnr_naks;	/* no receive buffer posted */
		__u64 dups;	/* duplicate requests answered (re-ACK or saved response) */
		__u64 replays;	/* ... of them READ or ATOMIC responses sent again */
		__u64 dup_unknown; /* duplicate READ/ATOMIC with no saved state: dropped */
		__u64 rewinds;	/* xhca_rx made to expect a PSN again (RNR, a lost frame, bad ICRC) */
		__u64 bad_icrc;	/* frames whose ICRC did not match: dropped */
		__u64 credit_acks; /* unsolicited ACKs: more receive buffers posted */
		__u64 gso_frames; /* READ response packets sent in --gso runs (gso.c) */
	} resp;
	/* the requester (request.c) */
	struct xhca_req_stats {
		__u64 wqes;	/* send requests taken from send queues */
		__u64 packets;	/* request packets sent (retransmissions too) */
		__u64 bytes;	/* their payload bytes */
		__u64 completions; /* send completions written */
		__u64 retransmits; /* packets sent again */
		__u64 timeouts;	/* retries after no response came in time */
		__u64 seq_naks;	/* sequence NAKs received: sent again from their PSN */
		__u64 rnr_naks;	/* RNR NAKs received: sent again after their timer */
		__u64 errors;	/* requests completed in error (flushes not counted) */
		__u64 stale;	/* responses for nothing outstanding */
		__u64 no_neigh;	/* sends held back: no neighbour entry for the destination */
		__u64 credit_waits; /* messages held back: the responder's credits were used up */
		__u64 credit_updates; /* the last ACK again, with a count that let more go */
		__u64 ackreqs;	/* request packets that asked for an ACK (AckReq) */
		/* --gso (gso.c): sends of runs through the packet socket (with
		 * the responder's), the request frames in them; runs the kernel
		 * refused, sent frame by frame through the TX ring; frames not
		 * sent at all then; runs (with the responder's) the interface's
		 * qdisc or device dropped, lost as on the wire */
		__u64 gso_sends, gso_frames, gso_fallbacks, gso_lost, gso_drops;
		/* --direct: requests programs sent themselves, taken as sent;
		 * those marked so that were not what xhcad would have sent
		 * then, sent by xhcad (request.c's direct_take) */
		__u64 direct, direct_refused;
	} req;
	/* the connection manager (cm.c) */
	__u32 cm_ids;		/* its ids: listeners, connections */
	__u32 cm_listening;
	__u32 cm_established;
	__u32 no_cm;		/* --no-cm: QP1 left to the application */
	__u64 cm_sent, cm_received, cm_resent, cm_timeouts, cm_rejects, cm_dropped;
	/* the loop (loop.c) */
	__u64 poll_us;		/* --poll-us */
	__u64 sleeps;		/* waits in ppoll that could sleep */
	__u64 polled;		/* busy polls that found work: no wakeup needed */
	__u64 handbacks;	/* busy polls that yielded the CPU at once, the work done */
	__u32 engines;		/* --engines: data path threads */
	__u32 xdp_ack;		/* --xdp-ack: 0 off, 1 on, 2 off since the interface
				 * dropped frames sent by XDP_TX */
	__u32 steer;		/* --steer: 0 off, 1 on (steer.c) */
	__u32 tx_queues;	/* the interface's TX queues */
	__u64 rx_own;		/* frames the engines took from their own RX queues */
	__u64 rx_other;		/* ... from another engine's */
	/* loopback (loopback.c, xsk.c): frames to this host's own addresses */
	struct xhca_lo_stats {
		__u64 self;	/* to this interface's addresses: through xhca_rx here */
		__u64 mcast;	/* copies of multicast frames sent, for members here */
		__u64 peer_sent; /* to another interface's xhcad on this host */
		__u64 peer_received; /* from one */
		__u64 peer_unreachable; /* lost: no xhcad serves that interface */
		__u64 peer_full; /* held back: its socket was full */
		__u64 peer_refused; /* from a process that is not root: dropped */
		__u64 peer_too_long; /* over a frame: dropped */
		__u64 runs;	/* test runs of xhca_rx */
		__u64 errors;	/* ... that failed: the frame lost */
		__u64 to_flowq;	/* redirected by xhca_rx: into their flow queue */
		__u64 consumed;	/* ended in xhca_rx: placed, or dropped (its reasons) */
		__u64 passed;	/* not RoCE to xhca_rx: dropped */
		__u64 no_room;	/* held back: no UMEM frame for it */
		__u64 held;	/* in flow queues now */
		__u64 addr_reads; /* the host's addresses read */
		__u64 mcast_wire; /* multicast frames with no member here: the wire's only */
	} lo;
	/* memory windows (mr.c) */
	struct xhca_mw_stats {
		__u64 in_use;	/* allocated now */
		__u64 binds;	/* bound (or, zero length, unbound) */
		__u64 bind_errors; /* binds refused: MW_BIND_ERR */
		__u64 invalidations; /* type 2 windows invalidated (LOCAL_INV, SEND with Invalidate) */
		__u64 inv_unknown; /* SEND with Invalidate naming no window bound through its QP */
	} mw;
};

#endif /* XHCA_STATUS_H */
