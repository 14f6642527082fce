/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhcad control protocol, spoken over the stream socket /run/xhca/<ifname>.sock.
 * Each message is a struct xhca_ctl_hdr followed by hdr.len bytes. A reply
 * has the request's op; err is 0 or -errno, and on error the payload is a
 * NUL-terminated message for the user ("qp create: ...; do this").
 * The local QP index never appears here: clients see global QPNs only.
 *
 * Two kinds of clients: short-lived ones (the xhca CLI), whose QPs belong to
 * xhcad and stay; and application sessions (libxhca), which begin with
 * XHCA_CTL_HELLO and own every QP, CQ and buffer they create: when the
 * connection closes, for any reason, xhcad frees them all. File descriptors
 * (the host memory map, eventfds) travel as SCM_RIGHTS with the message.
 */
#ifndef XHCA_CTL_H
#define XHCA_CTL_H

#include <stddef.h>
#include <linux/types.h>
#include <xhca/abi.h>
#include <xhca/attr.h>
#include <xhca/ring.h>

#define XHCA_RUN_DIR "/run/xhca"
#define XHCA_PIN_ROOT "/sys/fs/bpf/xhca"
#define XHCA_CONF_DIR "/etc/xhca"	/* xhcad's settings: IFNAME.conf */
#define XHCA_CTL_MAGIC 0x58484341u /* "XHCA" */
#define XHCA_CTL_MAX_PAYLOAD (16u << 20)
#define XHCA_ERRMSG_LEN 256

enum xhca_ctl_op {
	XHCA_CTL_STATUS = 1,	/* -> struct xhca_status */
	XHCA_CTL_QP_CREATE,	/* struct xhca_qp_attr -> struct xhca_qp_attr */
	XHCA_CTL_QP_MODIFY,	/* struct xhca_qp_attr (mask) -> struct xhca_qp_attr */
	XHCA_CTL_QP_DESTROY,	/* __u32 qpn -> nothing */
	XHCA_CTL_QP_SHOW,	/* __u32 qpn (0 = all) -> struct xhca_qp_info[] */
	XHCA_CTL_STATS,		/* struct xhca_stats_req -> struct xhca_stats_reply */
	XHCA_CTL_HELLO,		/* struct xhca_hello -> struct xhca_hello_reply */
	XHCA_CTL_ALLOC,		/* struct xhca_alloc -> struct xhca_alloc (session) */
	XHCA_CTL_FREE,		/* struct xhca_alloc (off) -> nothing (session) */
	XHCA_CTL_CQ_CREATE,	/* struct xhca_cq_attr + eventfd -> struct xhca_cq_attr + doorbell fd */
	XHCA_CTL_CQ_DESTROY,	/* __u32 cq -> nothing (session) */
	XHCA_CTL_FLOWQ_SET,	/* struct xhca_flowq_set -> struct xhca_flowq_info */
	XHCA_CTL_FLOWQ_SHOW,	/* nothing -> struct xhca_flowq_info[] */
	XHCA_CTL_PD_ALLOC,	/* nothing -> __u32 pd (session) */
	XHCA_CTL_PD_DEALLOC,	/* __u32 pd -> nothing (session) */
	XHCA_CTL_MR_REG,	/* struct xhca_mr_attr -> struct xhca_mr_attr */
	XHCA_CTL_MR_DEREG,	/* __u32 rkey -> nothing */
	XHCA_CTL_MR_SHOW,	/* nothing -> struct xhca_mr_info[] */
	XHCA_CTL_MR_READ,	/* struct xhca_mr_io -> the bytes */
	XHCA_CTL_CQ_REBIND,	/* __u32 cq + eventfd -> nothing (a resumed session) */
	XHCA_CTL_MCAST_CREATE,	/* struct xhca_mcast_req -> struct xhca_mcast_info */
	XHCA_CTL_MCAST_DESTROY,	/* struct xhca_mcast_req -> nothing */
	XHCA_CTL_MCAST_ATTACH,	/* struct xhca_mcast_req -> nothing */
	XHCA_CTL_MCAST_DETACH,	/* struct xhca_mcast_req -> nothing */
	XHCA_CTL_MCAST_SHOW,	/* nothing -> struct xhca_mcast_info[] */
	XHCA_CTL_FILTER_ADD,	/* struct xhca_filter -> struct xhca_filter (f.id) */
	XHCA_CTL_FILTER_DEL,	/* __u32 id -> nothing */
	XHCA_CTL_FILTER_SHOW,	/* __u32 qpn (0 = all) -> struct xhca_filter[] */
	XHCA_CTL_PROXY_SHOW,	/* nothing -> struct xhca_proxy_info */
	XHCA_CTL_PROXY_SET,	/* struct xhca_proxy_set -> struct xhca_proxy_info */
	XHCA_CTL_CQ_POLL,	/* struct xhca_cq_poll -> struct xhca_cq_entry[] (the CLI's CQs) */
	XHCA_CTL_CQ_SHOW,	/* nothing -> struct xhca_cq_info[] */
	XHCA_CTL_SQ_DOORBELL,	/* eventfd -> nothing (session): its send doorbell */
	XHCA_CTL_SRQ_CREATE,	/* struct xhca_srq_attr -> struct xhca_srq_attr (session) */
	XHCA_CTL_SRQ_DESTROY,	/* __u32 srq -> nothing (session) */
	/* the connection manager (cm.h; all of them a session's) */
	XHCA_CTL_CM_CHANNEL,	/* nothing -> __u32 chan + its socket */
	XHCA_CTL_CM_CHANNEL_DESTROY, /* __u32 chan -> nothing (-EBUSY while ids use it) */
	XHCA_CTL_CM_ID,		/* struct xhca_cm_id -> struct xhca_cm_id */
	XHCA_CTL_CM_MIGRATE,	/* struct xhca_cm_migrate -> nothing */
	XHCA_CTL_CM_LISTEN,	/* struct xhca_cm_listen -> nothing */
	XHCA_CTL_CM_CONNECT,	/* struct xhca_cm_conn -> nothing (REQ, SIDR_REQ) */
	XHCA_CTL_CM_ACCEPT,	/* struct xhca_cm_conn -> nothing (REP, SIDR_REP) */
	XHCA_CTL_CM_REJECT,	/* struct xhca_cm_reject -> nothing */
	XHCA_CTL_CM_ESTABLISH,	/* __u32 id -> nothing (the RTU) */
	XHCA_CTL_CM_DISCONNECT,	/* __u32 id -> nothing (DREQ, or the DREP owed) */
	XHCA_CTL_CM_DESTROY,	/* __u32 id -> nothing */
	XHCA_CTL_CM_NOTIFY,	/* struct xhca_cm_notify -> nothing */
	XHCA_CTL_CQ_RESIZE,	/* struct xhca_cq_attr (cq, depth) -> struct xhca_cq_attr (session) */
	XHCA_CTL_MR_REREG,	/* struct xhca_mr_attr (rkey: the region; the rest new) -> the same */
	XHCA_CTL_MW_ALLOC,	/* struct xhca_mw_req (pd, type) -> struct xhca_mw_req (rkey) */
	XHCA_CTL_MW_DEALLOC,	/* __u32 rkey -> nothing */
	XHCA_CTL_BLOCK,		/* __u32 block -> struct xhca_block_info + its fd (session) */
};

/* The control protocol's version: in every message's header. xhcad serves
 * only its own and answers another with -EPROTO and a message, in the
 * client's version; a client refuses a reply of another. (0: the clients
 * from before versions, whose op was 32 bits.) */
#define XHCA_CTL_VERSION 1

struct xhca_ctl_hdr {
	__u32 magic;
	__u16 op;
	__u16 version;
	__u32 len;
	__s32 err;
};


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

/* Application sessions (libxhca). */
#define XHCA_SESSION_VERSION 9 /* 7: XHCA_SGE_MAX 16; 8: receive lkeys; 9: blocks */

/* HELLO opens a session; with resume, it takes back the session of that id
 * that an earlier xhcad left (a restart): only the same process may (its
 * pid, from SO_PEERCRED, and its start time). Its CQs then want their
 * eventfds again (CQ_REBIND). */
struct xhca_hello {
	__u32 version;		/* XHCA_SESSION_VERSION */
	__u32 pid;
	char name[32];		/* for xhca status: the application's name */
	__u32 resume;		/* 0: a new session */
	__u32 pad;
};

struct xhca_hello_reply {
	__u32 session;		/* id, > 0 */
	__u32 page_size;	/* XHCA_PAGE_SIZE */
	__u64 hostmem_bytes;	/* all host memory: its page numbers are below this / page_size */
	__u32 block_pages;	/* XHCA_BLOCK_PAGES */
	__u32 session_blocks;	/* the most blocks this session may hold (--session-mb) */
	__u32 max_mtu;		/* the largest path MTU xhcad carries (xsk.c: 2048 without
				 * AF_XDP multi-buffer) */
	__u32 pad;
};

/* BLOCK: __u32 block -> this reply and the block's map (an mmapable array
 * of block_pages pages: host memory page block * block_pages + i at
 * offset i * page_size). Only a block of the session's own: a block that
 * holds one of its allocations. */
struct xhca_block_info {
	__u32 block;
	__u32 pages;
};

/* ALLOC: len and flags in; out the allocation's id, its length in whole
 * pages and its pages, as runs of adjacent ones (struct xhca_alloc_run
 * follow), for libxhca to map side by side. FREE: id. */
struct xhca_alloc {
	__u32 id;
	__u32 flags;		/* XHCA_ALLOC_* */
	__u64 len;
	__u32 npages;
	__u32 nruns;
};

struct xhca_alloc_run {
	__u32 page;		/* first host memory page */
	__u32 count;
};

/* With XHCA_ALLOC_JOIN (attr.h), nruns of these after the request: where
 * the earlier allocations' pages go in the new one. */
struct xhca_alloc_join {
	__u32 id;		/* an allocation of the session */
	__u32 page;		/* where its first page goes in the new one */
};

/* CQ_CREATE: depth in (a power of 2); the rest out. The eventfd the
 * application sends is signalled when it has armed the CQ (user/lib/cq.c);
 * the doorbell eventfd xhcad sends back is for the application to tell it
 * that a full CQ has room again. */
struct xhca_cq_attr {
	__u32 cq;		/* id */
	__u32 depth;
	__u64 ring_off;		/* struct xhca_cq_ring, in host memory */
	__u64 ring_len;
	__u32 flags;		/* XHCA_CQF_* */
	__u32 pad;
};

/* SRQ_CREATE: a shared receive queue (verbs' SRQ): one ring of receive
 * entries (struct xhca_rwqe) that the QPs created on it take buffers from,
 * a message the next buffer whatever QP it came to. depth in (a power of 2);
 * the rest out. Entries posted there are not flushed when one of its QPs
 * goes to the error state. */
struct xhca_srq_attr {
	__u32 srq;		/* id */
	__u32 depth;
	__u64 ring_off;		/* struct xhca_ring_ctl + entries, in host memory */
	__u32 alloc;		/* the ring's allocation */
	__u32 pad;
};


/* The CLI's CQs (CQ_CREATE with no session: xhcad owns them, and posts the
 * receive buffers of the CLI's QPs on them). CQ_POLL takes up to max
 * completions out of one, each with up to dump bytes of its buffer, and
 * posts the buffers again. */
#define XHCA_CQ_DUMP_MAX 64
struct xhca_cq_poll {
	__u32 cq;
	__u32 max;
	__u32 dump;		/* bytes of each received message, up to XHCA_CQ_DUMP_MAX */
	__u32 pad;
};

struct xhca_cq_entry {
	struct xhca_cqe c;
	__u32 data_len;
	__u32 pad;
	__u8 data[XHCA_CQ_DUMP_MAX];
};

struct xhca_cq_info {
	__u32 cq;
	__u32 owner;		/* session, 0: the CLI's */
	__u32 depth;
	__u32 flags;		/* XHCA_CQF_* */
	__u32 used;		/* completions not yet consumed (or on their way) */
	__u32 nqps;
	__u64 stalls;		/* times it was full and held a flow queue back */
};

/* Memory regions. MR_REG: pd, alloc and off (the region's place in the
 * allocation), len, access and iova in; rkey (= lkey), flags out. A session
 * registers memory of its own allocations; the CLI (xhcad's own MRs) gives
 * only len, access and flags: xhcad allocates the memory. */
struct xhca_mr_attr {
	__u32 pd;
	__u32 alloc;
	__u64 off;
	__u64 len;
	__u64 iova;
	__u32 access;		/* XHCA_ACCESS_* */
	__u32 flags;		/* in: XHCA_ALLOC_* for xhcad's own; out: XHCA_MRF_* */
	__u32 rkey;
	__u32 npages;		/* out: host pages it spans */
};

/* A memory window of type 1 or 2 (its R_Key's index is its own). */
struct xhca_mw_req {
	__u32 pd;
	__u32 type;
	__u32 rkey;		/* out */
	__u32 pad;
};

struct xhca_mr_info {
	struct xhca_mr_attr attr;
	__u32 owner;
	__u32 gen;
};

/* MR_READ: bytes of a region (a session: of its own; the CLI: of any). */
#define XHCA_MR_READ_MAX (8u << 20)
struct xhca_mr_io {
	__u32 rkey;
	__u32 len;
	__u64 off;
};

/* Multicast groups (US 8,937,949). A group is its MGID, an IPv6 multicast
 * address (IPv4 ones v4-mapped). Members are UD QPs, or function ports
 * (dev: a network interface xhca_rx copies the packet to). */
struct xhca_mcast_req {
	struct xhca_mgid mgid;
	__u32 qpn;		/* attach/detach: a QP, or */
	char dev[16];		/* a function port (its name) */
	__u16 pkey;		/* create: the group's partition, 0 = 0xffff */
	__u16 flags;		/* XHCA_MCF_* */
};

#define XHCA_MCF_CREATE (1u << 0) /* attach: create the group if there is none, as verbs do */
#define XHCA_MCF_AUTO (1u << 1)	  /* (info) created by an attach: goes with its last member */

struct xhca_mcast_info {
	struct xhca_mgid mgid;
	__u32 index;
	__u32 gen;
	__u16 pkey;
	__u16 flags;
	__u32 nmembers;
	__u32 ndevs;
	__u32 pad;
	/* xhca_rx's counters (dev_packets: frames that went to the function
	 * ports, by xhca_rx's broadcast or, for frames of several buffers, by
	 * xhcad's sends) */
	__u64 packets, bytes, dev_packets, threshold_drops, pkey_drops, empty_drops;
	/* xhcad's: packets replicated, copies delivered into receive buffers,
	 * members skipped, copies that found no buffer or an error (or a
	 * port copy xhcad could not send) */
	__u64 replicated, copies;
	__u64 skip_state, skip_qkey, skip_pkey, skip_loopback, skip_stale;
	__u64 rnr, errors;
	__u32 qpns[XHCA_MCAST_MEMBERS];
	char devs[XHCA_MCAST_DEVS][16];	/* the function ports' names, where xhcad runs */
};

/*
 * Proxy QP filters (FILTER_ADD/DEL/SHOW): f is what xhca_rx evaluates
 * (abi.h, struct xhca_pfilter; f.id is xhcad's, given in the reply); the
 * QP must be a proxy QP. f.handler names what the proxy does with a SEND
 * it is given (XHCA_PXH_*); READ and ATOMIC it executes itself.
 */
struct xhca_filter {
	__u32 qpn;
	__u32 pad;
	struct xhca_pfilter f;
};


/* PROXY_SET: pause stops the proxy taking requests (they wait in the
 * proxy queue, whose backlog then closes the load limit's gate); resume. */
struct xhca_proxy_set {
	__u32 paused;
	__u32 pad;
};

struct xhca_proxy_info {
	__u32 paused;
	__u32 qps;		/* QPs on proxy CQs (a reorderer each) */
	__u32 limit_high;	/* the load limit: backlog that stops offloading, */
	__u32 limit_low;	/* ... and where it starts again */
	__u32 gate;		/* 1: no offload mode */
	__u32 backlog;		/* requests given to the proxy, not finished */
	__u32 timeout_ms;	/* a gap older than this completes with an error */
	__u32 filters;
	/* xhca_rx's */
	__u64 offloaded, normal, no_offload, records, record_fail, gate_closes;
	/* the proxy thread's */
	__u64 frames;		/* offloaded frames it took */
	__u64 reads, atomics;	/* executed, their responses sent */
	__u64 sends;		/* SEND messages given to a handler */
	__u64 declined;		/* ... that it gave back: to the normal path */
	__u64 replayed;		/* frames of declined messages the normal path placed */
	__u64 lock_granted, lock_refused, lock_released, lock_undone;
	__u64 handled;		/* SENDs an application's handler took (--proxy-handler) */
	__u64 released;		/* completions written, in order */
	__u64 skipped;		/* messages with no completion (no-ops in the sequence) */
	__u64 late;		/* records for a sequence number released already */
	__u64 gaps;		/* gaps that timed out: error completion, QP to error */
	__u64 lost;		/* records lost: the window or a queue was full */
	__u64 tx_frames;	/* responses it built */
	__u64 acks;		/* ... of them ACKs of RC SENDs its handlers took */
	/* the handlers, by id (XHCA_PXH_*): "" where there is none */
	char handlers[XHCA_PXH_MAX][16];
};

/* Flow queues. */
#define XHCA_WEIGHT_MAX 1000

struct xhca_flowq_set {
	__u32 flowq;
	__u32 weight;		/* 1..XHCA_WEIGHT_MAX */
};

struct xhca_flowq_info {
	__u32 flowq;
	__u32 weight;
	__u32 high;		/* backpressure watermarks, frames */
	__u32 low;
	__u32 gate;		/* 1: closed, xhca_rx drops early */
	__u32 backlog;		/* frames waiting (enq - deq) */
	__u32 blocked;		/* 1: xhcad waits for the application (full CQ) */
	__u32 nqps;		/* QPs assigned to it */
	__u64 enq;		/* frames redirected by xhca_rx */
	__u64 deq;		/* frames taken by xhcad (or lost in the kernel) */
	__u64 gate_closes;
	__u64 gate_drops;	/* packets dropped early */
	__u64 nosock_drops;
	__u64 bytes;		/* payload bytes delivered */
	__u64 frames;		/* frames xhcad processed */
	__u64 kernel_drops;	/* lost after the redirect: socket ring full, no fill */
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
	__u64 tx_frames;	/* responses and NAKs put on the AF_XDP TX ring */
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
	__u32 engines;		/* --engines: data path threads */
	__u32 pad_engines;
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

/* A request on an application session of libxhca (the rdma_cm library's,
 * and the tests'): the session's own connection, one request at a time,
 * resumed if xhcad restarted; resp gets exactly resp_len bytes. 0 or
 * -errno, xhca_errmsg(ctx) saying why. */
struct xhca_ctx;
int xhca_session_call(struct xhca_ctx *ctx, __u32 op, const void *req, __u32 len, int send_fd,
		      void *resp, __u32 resp_len, int *recv_fd);

/* libxhca control client (user/lib/ctl.c). */
int xhca_ctl_connect(const char *ifname);	/* fd or -errno */
/* As xhca_ctl_call, with a file descriptor sent along (send_fd >= 0) and one
 * received (*recv_fd: -1 when none came). */
int xhca_ctl_call_fd(int fd, __u32 op, const void *req, __u32 req_len, int send_fd,
		     void **resp, __u32 *resp_len, int *recv_fd, char *errmsg, size_t errlen);
/* Sends op with req, waits for the reply. On success returns 0 and, when
 * resp is not NULL, a malloc'd payload in *resp (free it) and its length.
 * On a daemon error returns its -errno and copies its message to errmsg. */
int xhca_ctl_call(int fd, __u32 op, const void *req, __u32 req_len, void **resp,
		  __u32 *resp_len, char *errmsg, size_t errlen);
/* One message, waiting for all of it (the tests' raw clients); a
 * descriptor that came with it lands in *fdp (else -1). */
int xhca_ctl_recv_fd(int fd, struct xhca_ctl_hdr *hdr, void **buf, int *fdp);
/* A message's room for one descriptor (SCM_RIGHTS): msg carries fd, with
 * cm as its control buffer; or (take) the descriptor a message received
 * came with lands in *fdp, one there before closed. For xhcad's sockets,
 * which it reads and writes without waiting, as for the calls above. */
struct msghdr;
union xhca_fd_cmsg {
	char buf[64];		/* CMSG_SPACE(sizeof(int)), and then some */
	__u64 align;
};
void xhca_ctl_put_fd(struct msghdr *msg, union xhca_fd_cmsg *cm, int fd);
void xhca_ctl_take_fd(struct msghdr *msg, int *fdp);

#endif /* XHCA_CTL_H */
