/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhcad's state, as rxe_verbs.h is rxe's: struct xhcad (the device, the
 * QP table, the flow queues, a member per layer), the engines, and the
 * objects applications make (xhcad_objs.h). Who may write what, and
 * under which lock, is in docs/design.md ("Engines"). The functions are
 * declared by layer: xhcad_util.h, xhcad_device.h and so on up to
 * xhcad_control.h, each including the one below.
 */
#ifndef XHCAD_TYPES_H
#define XHCAD_TYPES_H

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

struct xhca;
struct steer;

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
	int rfast;
	int cqx;
	int dstate; /* daemon state: QPN cursor (userspace only) */
};

/* xhca_dstate value: what xhcad must remember across restarts. */
struct xhca_dstate {
	__u32 next_qpn;
	__u32 pad;
};

#include "xhcad_objs.h"

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

/* the proxy's settings (main.c, proxy.c, proxy_thread.c) */
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
	struct xhca_cqx *cqx;	/* xhca_cqx, mapped (by slot) */
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
	/* frames of QPs xhca_rx places SENDs for (--recv-fast) the round
	 * took: their pend goes down once their completions are written */
	struct xhca_rfast **rf_done;
	__u32 nrf_done;
	struct xhca_rfast *rf_held; /* the one whose lock this engine holds now */
	/* QPs whose frames counted in owe (--xdp-ack) the round took:
	 * their owe goes down once the round's answers are sent */
	__u32 *owe_qps;
	__u32 nowe_qps;
	int in_round;		/* in round_run: completions are staged (cq_write) */
	/* its counters, summed for `xhca status` and `xhca stats` */
	struct xhca_counter host[XHCA_H_MAX];
	__u64 naks;
	__u64 ring_faults;	/* QPs failed for their queues' garbage indexes */
	__u64 cq_overruns;
	struct xhca_resp_stats resp;
	struct xhca_req_stats req;
	__u64 sleeps, polled;	/* its loop's: waits that could sleep, busy polls that found work */
	__u64 handbacks;	/* busy polls that yielded the CPU as soon as a round's
				 * work was done (round_busy_poll) */
	/* frames it took from its own RX queues' sockets (queue q is engine
	 * q % neng's) and from the others' (--steer: steer.c) */
	__u64 rx_own, rx_other;
	int wake_fd;		/* an eventfd: written to wake it when it sleeps */
	struct gso *gso;	/* its packet sockets and run of request frames (gso.c) */
	int sleeping;		/* it sleeps, or is about to (atomic) */
	int blocked_new;	/* a flow queue of its blocked on a CQ this round */
};

extern __thread struct engine *eng_self;

/* struct xhcad's xdp_ack */
#define XDP_ACK_OFF 0
#define XDP_ACK_ON 1
#define XDP_ACK_DROPPED 2 /* on, until the interface dropped frames sent by XDP_TX */
#define XDP_ACK_AUTO 3	  /* the option's default: on or off by the interface, at start */
/* struct xhcad's steer */
#define STEER_OFF 0
#define STEER_ON 1
#define STEER_AUTO 2	/* the option's default: on for a veth, at start */
struct xhcad {
	char ifname[16];
	int ifindex;
	int native;		/* XDP mode: 1 native (driver), 0 skb (generic) */
	int mode_set;		/* --mode given: no skb mode where the driver refuses native */
	int adopt;
	int keep;
	int maps_reused;	/* the maps were pinned by an earlier xhcad */
	int icrc_first;		/* --icrc first: no byte placed before its ICRC checked */
	int gso;		/* --gso: RC/UC request packets as UDP GSO sends (gso.c) */
	int direct;		/* --direct: programs may send requests themselves (request.c) */
	int recv_fast;		/* --recv-fast: xhca_rx places one-packet SENDs (recv.bpf.h) */
	int xdp_ack;		/* --xdp-ack: ... and sends their ACKs (XDP_ACK_*) */
	__u64 xdp_tx_errs;	/* the interface's XDP_TX errors when last looked at */
	int steer;		/* --steer: GSO runs to the peer engine's queue (STEER_*; steer.c) */
	int steer_auto;		/* ... resolved from auto (main.c) */
	__u32 steer_txq;	/* the interface's TX queues */
	struct steer *steer_skel; /* xhca_steer, while on */
	int steer_qdisc;	/* the clsact qdisc is ours: removed at exit */
	int steer_attached;	/* xhca_steer is on the egress hook */
	struct xhca_rfast *rfm;	/* xhca_rfast, mapped (by local index) */
	__u64 poll_ns;		/* --poll-us: busy poll this long after work (0: sleep at once) */
	struct cm_state_all *cm; /* cm.c (cm_int.h) */
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

	struct proxy *px;	/* the proxy thread (proxy_thread.c, proxy.c, pxq.c) */

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

#endif
