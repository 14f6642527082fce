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
#include <xhca/status.h>

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
