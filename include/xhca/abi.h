/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The map ABI shared by xhca_rx (BPF) and userspace: reasons, QP CAM entries,
 * QP contexts, counters. Every struct here is a map key or value: fixed-width
 * fields, explicit padding, a size check on each.
 */
#ifndef XHCA_ABI_H
#define XHCA_ABI_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/* Bumped whenever a pinned map's key, value or sizing changes: xhcad refuses
 * to reuse pinned maps of another ABI and says so. */
#define XHCA_ABI_VERSION 9

#define XHCA_MAX_QPS_DEFAULT 4096
#define XHCA_MAX_QPS_LIMIT 65536
#define XHCA_PKEY_TBL_LEN 16

/* Flow queues (US 8,155,135's virtual queues): AF_XDP sockets, one per RX
 * queue and flow queue, keyed in xhca_xsks by rxq * XHCA_FLOWQ_MAX + flowq. */
#define XHCA_FLOWQ_MAX 64
#define XHCA_FLOWQ_DEFAULT 8
/* The replication queue (US 8,937,949's multicast information FIFO): the
 * last flow queue key, sockets on every RX queue, drained by xhcad's
 * replication engine. Its backlog (enq - deq) counts multicast packets not
 * yet fully replicated; its high watermark is the multicast threshold. */
#define XHCA_FLOWQ_MCAST (XHCA_FLOWQ_MAX - 1)
/* The proxy queue (US 9,069,633): messages of proxy QPs that a filter
 * offloads, sockets on every RX queue, drained by xhcad's proxy. Its high
 * watermark is the load limit: past it xhca_rx stops offloading (the
 * patent's "no offload mode") until the backlog falls to the low one. */
#define XHCA_FLOWQ_PROXY (XHCA_FLOWQ_MAX - 2)
#define XHCA_RXQ_MAX 64

/* --steer: the mark of xhcad's GSO sockets (one per engine and TX queue,
 * the queue in the low bits), which xhca_steer (tc egress) turns into the
 * frame's TX queue. The filter's place on the interface's clsact egress
 * hook: its handle and priority. */
#define XHCA_STEER_MARK 0x58484300u	/* "XHC" */
#define XHCA_STEER_QMASK 0xffu
#define XHCA_STEER_HANDLE 0x5848u
#define XHCA_STEER_PRIO 0x5848u

/* Memory regions: xhca_mr, indexed by rkey >> 8 (index 0 is never used). */
#define XHCA_MR_MAX_DEFAULT 4096
#define XHCA_MR_MAX_LIMIT 65536

/* Multicast groups (xhca_mcast, keyed by MGID). */
#define XHCA_MCAST_GROUPS 4096
#define XHCA_MCAST_MEMBERS 256	/* QPs per group */
#define XHCA_MCAST_DEVS 64	/* function ports per group */
/* The replication port: a veth pair xhcad makes when a group has both QP
 * members and function ports. xhca_rx's broadcast to the ports also sends a
 * copy into it; xhca_rep on its peer hands that copy to the replication
 * queue through the socket at this key of xhca_xsks. */
#define XHCA_XSK_REP_KEY (XHCA_RXQ_MAX * XHCA_FLOWQ_MAX)

/* Access flags of an MR, numbered as ibv_access_flags. */
#define XHCA_ACCESS_LOCAL_WRITE (1u << 0)
#define XHCA_ACCESS_REMOTE_WRITE (1u << 1)
#define XHCA_ACCESS_REMOTE_READ (1u << 2)
#define XHCA_ACCESS_REMOTE_ATOMIC (1u << 3)
#define XHCA_ACCESS_MW_BIND (1u << 4)	/* memory windows may be bound to the region */
#define XHCA_ACCESS_ALL 0x1fu

/* Host memory: 4 KiB pages in blocks of XHCA_BLOCK_PAGES, each block an
 * mmapable array map of its own that one owner (a session, or xhcad) holds;
 * xhca_hostmem, an array of maps, holds the blocks. Page p of host memory is
 * page p % XHCA_BLOCK_PAGES of block p / XHCA_BLOCK_PAGES. */
#define XHCA_PAGE_SIZE 4096
#define XHCA_BLOCK_SHIFT 10
#define XHCA_BLOCK_PAGES (1u << XHCA_BLOCK_SHIFT) /* 4 MiB */
#define XHCA_HOSTMEM_PAGES_DEFAULT 65536 /* 256 MiB: UCX takes some 40 MiB a process */

#define XHCA_QPN_MASK 0x00ffffffu
#define XHCA_QPN_SMI 0u
#define XHCA_QPN_GSI 1u
#define XHCA_QPN_MCAST 0x00ffffffu
#define XHCA_GSI_QKEY 0x80010000u
#define XHCA_PKEY_DEFAULT 0xffffu

/*
 * Reason counters. Each packet xhca_rx sees increments exactly one of these.
 * X(name, short name for stats output, explanation)
 */
#define XHCA_REASONS(X)                                                                  \
	X(PASS_NOT_ROCE, "pass_not_roce", "not RoCEv2: given to the kernel untouched")      \
	X(PASS_TRUNCATED, "pass_truncated",                                                 \
	  "frame ends before the UDP header: cannot tell, given to the kernel")             \
	X(PASS_VLAN_DEPTH, "pass_vlan_depth", "more than two VLAN tags: given to the kernel") \
	X(PASS_IPV6_EXT, "pass_ipv6_ext", "IPv6 extension headers: given to the kernel")    \
	X(PASS_IP_FRAG, "pass_ip_frag", "non-first IPv4 UDP fragment: given to the kernel") \
	X(DROP_IP_FRAG, "drop_ip_frag", "first fragment of a fragmented RoCEv2 datagram")  \
	X(DROP_TRUNCATED, "drop_truncated",                                                 \
	  "frame shorter than its IP packet or UDP length, or than the BTH")               \
	X(DROP_IP_LENGTH, "drop_ip_length",                                                 \
	  "IPv4 total length or IPv6 payload length shorter than the UDP datagram")        \
	X(DROP_IP_CSUM, "drop_ip_csum", "IPv4 header checksum is wrong")                   \
	X(DROP_UNKNOWN_OPCODE, "drop_unknown_opcode", "BTH opcode is not a known RoCE opcode") \
	X(DROP_BAD_LENGTH, "drop_bad_length",                                               \
	  "UDP length too short for the opcode's headers, pad and ICRC")                   \
	X(DROP_BAD_TVER, "drop_bad_tver", "BTH transport header version is not 0")         \
	X(DROP_QP0, "drop_qp0", "destination QP 0 (SMI) is not supported on RoCE")         \
	X(DROP_MCAST_ADDR, "drop_mcast_addr",                                               \
	  "destination QP 0xFFFFFF to a unicast IP address")                               \
	X(DROP_MCAST_OPCODE, "drop_mcast_opcode", "multicast packet that is not a UD SEND ONLY") \
	X(DROP_MCAST_GROUP, "drop_mcast_group", "no multicast group for the destination (MGID)") \
	X(DROP_MCAST_EMPTY, "drop_mcast_empty", "the multicast group has no members")      \
	X(DROP_MCAST_PKEY, "drop_mcast_pkey", "P_Key does not match the multicast group's") \
	X(DROP_MCAST_THRESHOLD, "drop_mcast_threshold",                                     \
	  "too many multicast packets waiting for replication: early drop, unicast flows on") \
	X(TO_MCAST_PORTS, "to_mcast_ports",                                                 \
	  "multicast frame over a page for several ports (the kernel cannot copy it): to xhcad, which sends each port and QP its copy") \
	X(DROP_CAM_MISS, "drop_cam_miss", "destination QPN not in the QP CAM (quiet drop)") \
	X(DROP_STALE, "drop_stale", "CAM entry generation does not match the QP context")  \
	X(DROP_QP_BUSY, "drop_qp_busy",                                                     \
	  "QP context being rewritten by xhcad, or its PSN contended, through every retry") \
	X(DROP_OPCODE_TYPE, "drop_opcode_type", "opcode class does not match the QP type")  \
	X(DROP_QP_STATE, "drop_qp_state", "QP state does not allow this packet")           \
	X(DROP_ADDR, "drop_addr", "IP addresses do not match the RC/UC QP")                \
	X(DROP_PKEY, "drop_pkey", "P_Key does not match the QP's partition")               \
	X(DROP_QKEY, "drop_qkey", "UD Q_Key does not match the QP")                        \
	X(DROP_UD_MTU, "drop_ud_mtu", "UD payload longer than the QP's path MTU")          \
	X(DROP_PSN_DUP, "drop_psn_dup",                                                     \
	  "RC request PSN before the expected PSN, of a QP whose action is not host")       \
	X(DROP_PSN_OOS, "drop_psn_oos",                                                     \
	  "RC request PSN after the expected PSN (gap): its sequence NAK sent already, or the QP's action is not host") \
	X(DUP_TO_FLOWQ, "dup_to_flowq",                                                     \
	  "RC duplicate request: to xhcad, acknowledged again or answered from saved state") \
	X(SEQ_NAK_TO_FLOWQ, "seq_nak_to_flowq",                                             \
	  "RC request after a PSN gap, the gap's first: to xhcad for the sequence NAK")     \
	X(DROP_UC_GAP, "drop_uc_gap", "UC packet of a message broken by a PSN gap")        \
	X(DROP_NO_SOCKET, "drop_no_socket",                                                 \
	  "no AF_XDP socket on the QP's flow queue for this RX queue (xhcad not serving)")  \
	X(DROP_FLOWQ_GATE, "drop_flowq_gate",                                               \
	  "the QP's flow queue is over its high watermark: early drop (backpressure)")      \
	X(DROP_META, "drop_meta", "no room for the metadata block in front of the frame")  \
	X(DROP_MR_RKEY, "drop_mr_rkey", "R_Key names no valid memory region")              \
	X(DROP_MR_KEY, "drop_mr_key",                                                       \
	  "R_Key's key byte is not the MR's (stale or forged R_Key)")                      \
	X(DROP_MR_PD, "drop_mr_pd", "MR is in another protection domain than the QP")      \
	X(DROP_MR_ACCESS, "drop_mr_access", "MR does not allow this remote access")        \
	X(DROP_MW_QP, "drop_mw_qp",                                                         \
	  "R_Key names a type 2 memory window bound to another QP")                        \
	X(DROP_MR_BOUNDS, "drop_mr_bounds", "access outside the MR (the whole message checked)") \
	X(DROP_WRITE_LEN, "drop_write_len",                                                 \
	  "RDMA packet length does not fit its message (ONLY = DMA length, FIRST/MIDDLE = MTU)") \
	X(DROP_WRITE_SEQ, "drop_write_seq",                                                 \
	  "RDMA WRITE MIDDLE/LAST without a WRITE in progress, its MR changed, or a WRITE cut off") \
	X(DROP_SEND_SEQ, "drop_send_seq",                                                   \
	  "SEND MIDDLE/LAST without a SEND in progress, or an RC SEND cut off by another message") \
	X(DROP_ATOMIC_ALIGN, "drop_atomic_align", "ATOMIC address not 8-byte aligned")     \
	X(DROP_QP_ACCESS, "drop_qp_access",                                                 \
	  "RDMA or ATOMIC request the QP's remote access flags do not allow")              \
	X(CNP, "cnp", "congestion notification: counted for the QP and consumed")          \
	X(ACCEPT_PASS, "accept_pass", "accepted; QP action pass: given to the kernel")     \
	X(ACCEPT_DROP, "accept_drop", "accepted; QP action drop: consumed")                \
	X(TO_FLOWQ, "to_flowq", "accepted; QP action host: redirected to its flow queue")  \
	X(PLACED, "placed", "RDMA WRITE payload placed in host memory by xhca_rx (pre-translated MR)") \
	X(PLACED_TO_FLOWQ, "placed_to_flowq",                                               \
	  "placed by xhca_rx; WRITE with immediate: on to its flow queue for the completion") \
	X(PLACED_ACK, "placed_ack",                                                         \
	  "placed by xhca_rx (a WRITE's packet, or an RC SEND: --recv-fast); its ACK is due: on to its flow queue for xhcad to send it") \
	X(RECV_PLACED, "recv_placed",                                                       \
	  "SEND placed into its receive buffer and completed by xhca_rx (--recv-fast)")     \
	X(TO_XLATE, "to_xlate",                                                             \
	  "RDMA WRITE to an MR that is not pre-translated: placed by xhcad (flow queue)")  \
	X(XLATE_NOCOPY, "xlate_nocopy",                                                     \
	  "first packet of a WRITE to a pre-translated MR that xhca_rx cannot place on this " \
	  "kernel (no bpf_dynptr_copy: Linux < 6.15; the message not at a multiple of 1 KiB " \
	  "in a page, or a path MTU under 1 KiB): placed by xhcad, as to_xlate")            \
	X(TO_MCAST, "to_mcast",                                                             \
	  "multicast: stored once, redirected to the replication queue")                  \
	X(TO_MCAST_DEVS, "to_mcast_devs",                                                   \
	  "multicast: a copy to each function port of the group (and its QPs' through the replication port)") \
	X(TO_PROXY, "to_proxy", "proxy QP, a filter matched: offloaded to the proxy queue")   \
	X(DROP_PROXY_NOCQ, "drop_proxy_nocq", "proxy QP whose CQ is not a proxy CQ: discarded") \
	X(RECV_ACKED, "recv_acked",                                                         \
	  "RC SEND placed and completed by xhca_rx (--recv-fast), its ACK built and sent back by xhca_rx (--xdp-ack)") \
	X(PLACED_ACKED, "placed_acked",                                                     \
	  "RDMA WRITE packet placed by xhca_rx (pre-translated MR), its ACK built and sent back by xhca_rx (--xdp-ack)")

enum xhca_reason {
#define XHCA_REASON_ENUM(name, str, desc) XHCA_R_##name,
	XHCA_REASONS(XHCA_REASON_ENUM)
#undef XHCA_REASON_ENUM
	XHCA_R_MAX
};

/* QP types: the value is the BTH opcode class (opcode >> 5) the QP accepts. */
enum xhca_qp_type {
	XHCA_QPT_RC = 0,
	XHCA_QPT_UC = 1,
	XHCA_QPT_UD = 3,
};

/* QP states, numbered as in ibv_qp_state. */
enum xhca_qp_state {
	XHCA_QPS_RESET = 0,
	XHCA_QPS_INIT = 1,
	XHCA_QPS_RTR = 2,
	XHCA_QPS_RTS = 3,
	XHCA_QPS_SQD = 4,
	XHCA_QPS_SQE = 5,
	XHCA_QPS_ERR = 6,
};

/* What xhca_rx does with a packet that passed every check. */
enum xhca_qp_action {
	XHCA_ACT_PASS = 0,	/* XDP_PASS: the kernel's stack gets it */
	XHCA_ACT_DROP = 1,	/* consumed and counted */
	XHCA_ACT_HOST = 2,	/* to the QP's flow queue: xhcad delivers it to the host */
};

#define XHCA_QP_ACCESS_SET (1u << 7)

/* QP context flags, written by xhcad. */
#define XHCA_QPF_IPV6 (1u << 1) /* addresses are IPv6, not v4-mapped IPv4 */
#define XHCA_QPF_BLOCK_MC_LOOPBACK (1u << 2) /* no copy of its own multicast sends (xhcad) */
#define XHCA_QPF_PROXY (1u << 3)	/* a proxy QP: its filters may offload messages */
#define XHCA_QPF_PROXY_CQ (1u << 4)	/* its CQ is a proxy CQ: every message gets a CSN */
/* xhcad --icrc first: xhca_rx places none of this QP's WRITEs itself; they
 * go to xhcad, which checks the ICRC before it places a byte */
#define XHCA_QPF_ICRC_FIRST (1u << 5)

/*
 * xhca_qp_ctx.rx_psn: the receive state xhca_rx updates per packet, with
 * compare-and-swap. BUSY makes it a lock for the few packets that also
 * change the WRITE cursor (wc_*): whoever set it owns them until it stores
 * the new word. ERR: the QP hit an error that the spec makes fatal for it
 * (RC: a remote access error, an invalid request); its packets are dropped
 * as drop_qp_state until xhcad resets it.
 */
#define XHCA_RXPSN_MASK 0x00ffffffu	/* expected PSN */
#define XHCA_RXPSN_SEND (1u << 24)	/* a multi-packet SEND is in progress */
#define XHCA_RXPSN_NAKED (1u << 25)	/* RC: the gap's sequence NAK went out: silent until ePSN */
#define XHCA_RXPSN_PROXY (1u << 26)	/* the message in progress is offloaded */
#define XHCA_RXPSN_PRETX (1u << 27)	/* the WRITE in progress has a pre-translated MR */
#define XHCA_RXPSN_ERR (1u << 28)
#define XHCA_RXPSN_WRITE (1u << 29)	/* a multi-packet RDMA WRITE is in progress */
#define XHCA_RXPSN_BUSY (1u << 30)
#define XHCA_RXPSN_UC_DROP (1u << 31)	/* UC: the message in progress lost a packet */

/*
 * xhca_qp_cam value (key: __u32 global QPN). Points at a qp_ctx slot; gen must
 * equal the slot's gen, or the entry is stale.
 */
struct xhca_cam_val {
	__u32 lidx;
	__u32 gen;
};
_Static_assert(sizeof(struct xhca_cam_val) == 8, "xhca_cam_val size");

/*
 * xhca_qp_ctx value (key: __u32 local index): the patent's local QP context.
 * The map is mmapable and has no lock; two rules keep a packet from ever
 * seeing a half-written context:
 *  - The configuration (seq .. remote_ip) is written only by xhcad, through
 *    its mapping, inside a seqcount write section: seq is odd while it
 *    writes. xhca_rx copies what it checks between two reads of an even,
 *    unchanged seq, or retries (user/lib/qpctx.c, bpf/ctx.bpf.h).
 *  - The receive state (rx_psn) is changed by xhca_rx with compare-and-swap
 *    and by xhcad with atomic stores; it sits in its own cache line, so the
 *    per-packet writes do not evict the configuration from other CPUs.
 * IP addresses are 16 bytes, IPv4 as v4-mapped (::ffff:a.b.c.d).
 */
struct xhca_qp_ctx {
	__u32 seq;	/* seqcount: odd while xhcad rewrites the configuration */
	__u32 gen;
	__u32 gqpn;
	__u8 valid;
	__u8 type;	/* enum xhca_qp_type */
	__u8 state;	/* enum xhca_qp_state */
	__u8 action;	/* enum xhca_qp_action */
	__u8 pkey_index; /* into xhca_pkeys */
	__u8 mtu_shift;	/* log2 of the path MTU, 8..12 */
	__u8 flags;	/* XHCA_QPF_* */
	__u8 flowq;	/* flow queue of action host, < XHCA_FLOWQ_MAX */
	/* xhca_pkeys[pkey_index], copied so the check needs no second lookup */
	__u16 pkey;
	/* the remote access an RDMA or ATOMIC request to this QP needs in it
	 * (XHCA_ACCESS_REMOTE_*, verbs' qp_access_flags) once XHCA_QP_ACCESS_SET
	 * is there; without (libxhca's and the CLI's QPs), any */
	__u8 access;
	__u8 pad1;
	__u32 qkey;
	__u32 dest_qpn; /* remote QPN (RC/UC) */
	__u8 local_ip[16];
	__u8 remote_ip[16];
	/* offset 64: receive state */
	__u32 rx_psn;	/* XHCA_RXPSN_* */
	__u32 pd;	/* configuration (xhcad): the QP's protection domain */
	/* The WRITE in progress (valid while XHCA_RXPSN_WRITE): its MR and the
	 * MR's generation when it started, the next VA, the bytes to come.
	 * Changed only by the owner of XHCA_RXPSN_BUSY. */
	__u32 wc_mr;
	__u32 wc_gen;
	__u64 wc_va;
	__u64 wc_left;
	__u32 wc_len;	/* the whole message (DMA length of its FIRST) */
	__u32 wc_psn;	/* ... and the PSN of its FIRST */
	/* Request messages accepted whole: an RC QP's MSN (24 bits in the
	 * AETH); on a proxy CQ, the completion sequence number (CSN) of the
	 * message in progress, whatever the QP type. */
	__u32 msn;
	/* RC request packets xhca_rx accepted since it last marked one for
	 * an ACK (receive state, like msn) */
	__u32 unacked;
	/* configuration (xhcad): an RC QP's ACK is due at AckReq and at least
	 * every ack_every request packets (0: only at AckReq); the RNR NAK's
	 * timer code (IBA table 45, 5 bits) */
	__u16 ack_every;
	__u8 rnr_timer;
	__u8 pad2;
	/* The requester (xhcad, written as it starts each request, read when
	 * a new xhcad takes over the maps): the next new PSN, and how many
	 * requests of the send queue's ring were started (a ring index). */
	__u32 sq_psn;
	__u32 sq_started;
	/* The proxy (xhcad's proxy thread, the one writer, as it releases a
	 * proxy CQ's completions; read when a new xhcad takes over the
	 * maps): the CSN of this QP's next completion in order. */
	__u16 px_csn;
	/* The responder's rewinds (respond.c's rx_rewound: one more each,
	 * after it stores rx_psn). xhca_rx reads it before rx_psn and again
	 * as it redirects the request: a frame committed against the state
	 * before a rewind and redirected after it is stale, whatever its time. */
	__u16 rw_gen;
};
_Static_assert(sizeof(struct xhca_qp_ctx) == 128, "xhca_qp_ctx size");
_Static_assert(__builtin_offsetof(struct xhca_qp_ctx, rx_psn) == 64, "rx_psn cache line");

/*
 * xhca_mr value (key: MR index, rkey >> 8): a memory region, the patent's
 * address register with its MMU context. Written by xhcad through its
 * mapping under the seqcount (seq odd while it writes), as the QP contexts.
 * PRETRANSLATED (the patent's bit) says base is where iova sits in host
 * memory and the whole region is contiguous there: xhca_rx places WRITEs
 * itself. Without it xhcad's translation manager walks the pages. gen
 * changes on every registration and invalidation.
 */
struct xhca_mr_ctx {
	__u32 seq;
	__u32 gen;
	__u8 valid;
	__u8 key;	/* the rkey's low byte, new on every registration */
	__u8 flags;	/* XHCA_MRF_* */
	__u8 pad0;
	__u32 access;	/* XHCA_ACCESS_* */
	__u32 pd;
	__u32 owner;	/* session (xhcad's bookkeeping) */
	__u64 iova;	/* the region as the remote side addresses it */
	__u64 length;
	__u64 base;	/* PRETRANSLATED: byte offset of iova in host memory */
	__u32 alloc;	/* the host memory allocation it lies in (xhcad's) */
	__u32 qpn;	/* XHCA_MRF_MW_QP: the only QP that may use it */
	__u64 aoff;	/* where iova sits in that allocation (a receive
			 * buffer names its allocation and offset) */
};
_Static_assert(sizeof(struct xhca_mr_ctx) == 64, "xhca_mr_ctx size");

#define XHCA_MRF_PRETRANSLATED (1u << 0)
#define XHCA_MRF_MW (1u << 1)		/* a memory window (bound: valid) */
#define XHCA_MRF_MW_QP (1u << 2)	/* a type 2 window, bound to QP qpn */

/* xhca_events (ring buffer): what xhca_rx tells xhcad, now. */
struct xhca_event {
	__u32 type;	/* XHCA_EV_* */
	__u32 lidx;
	__u32 gen;
	__u32 gqpn;
	__u32 psn;
	__u32 reason;	/* enum xhca_reason that caused it */
	__u8 dmac[6];	/* the offending frame's Ethernet addresses: the NAK */
	__u8 smac[6];	/* goes back the way the request came */
};
_Static_assert(sizeof(struct xhca_event) == 36, "xhca_event size");

#define XHCA_EV_QP_ERR 1 /* the QP went to the error state (XHCA_RXPSN_ERR) */
/* xhca_rx wrote a completion into a CQ whose application sleeps on it
 * (armed): xhcad signals its eventfd. lidx: the CQ's slot in xhca_cqx. */
#define XHCA_EV_CQ_WAKE 2

/*
 * SENDs placed by xhca_rx (--recv-fast): a one-packet SEND into the QP's
 * receive buffer and its completion into the receive CQ, without xhcad.
 * xhcad owns both maps (they are mmap'ed by xhcad alone, never by an
 * application): it fills an entry, then sets gen; xhca_rx uses one whose
 * gen is its QP's (xhca_rfast) or not 0 (xhca_cqx).
 *
 * xhca_rfast (key: the QP's local index). The QP's receive queue is taken
 * by whoever holds lock: xhca_rx tries once (XHCA_RFL_RX) and leaves the
 * packet to xhcad when it cannot; xhcad (XHCA_RFL_XHCAD) waits for it.
 * pend orders the two: xhca_rx adds one for each SEND or immediate packet
 * of the QP as it starts on it and takes it back unless the packet went to
 * the flow queue; xhcad takes back each such frame once it is done with it
 * (its completion written). xhca_rx places a SEND only when pend is its
 * own one: nothing before it is still on its way through xhcad.
 *
 * With XHCA_RFF_XDP_ACK (xhcad --xdp-ack, an RC QP) xhca_rx also sends the
 * ACK due for a SEND or WRITE packet it placed itself (XDP_TX), when owe
 * is its own one:
 * owe counts every RC request packet of the QP as pend counts SENDs (added
 * as xhca_rx starts on it, taken back unless it went to the flow queue),
 * and xhcad takes each such frame back once the round that took it has
 * sent what it answered (recv_owe_done): an ACK of xhca_rx's never passes
 * xhcad's READ response, ATOMIC ACK or NAK for an earlier PSN.
 */
struct xhca_rfast {
	__u32 gen;	/* the QP context's generation; 0: not served here */
	__u32 lock;	/* XHCA_RFL_* */
	__u32 pend;
	__u32 rq_depth;	/* a power of 2 */
	__u64 rq_ring;	/* host memory offset of the receive queue's xhca_ring_ctl,
			 * its xhca_rwqe entries after it (contiguous) */
	__u32 rq_cons;	/* receive entries taken (both sides'): the consumer
			 * index xhcad copies into the ring for the application */
	__u32 cq;	/* the receive CQ's slot in xhca_cqx */
	__u32 owner;	/* the session: a buffer's region must be its */
	__u32 placed;	/* SENDs xhca_rx placed (statistics) */
	__u32 rq_prod;	/* xhca_rx's: the ring's producer index as it last read
			 * it; the ring's is read again only when the entries
			 * this one names are used up (its cache line is the
			 * application's) */
	__u32 owe;	/* XHCA_RFF_XDP_ACK: RC requests on their way through xhcad */
	__u32 flags;	/* XHCA_RFF_*, set with gen */
	__u8 pad[12];
};
_Static_assert(sizeof(struct xhca_rfast) == 64, "xhca_rfast size");

#define XHCA_RFL_RX 1
#define XHCA_RFL_XHCAD 2

/* xhca_rx sends the ACKs of the SENDs and WRITEs it places (XDP_TX),
 * counting owe */
#define XHCA_RFF_XDP_ACK 1

/* xhca_cqx (key: a CQ's slot): the CQ's producer side, shared by xhcad's
 * engines and xhca_rx under lock (XHCA_RFL_*, as above). prod is the
 * producer index (the ring's is the application's copy, never read back);
 * spilled: completions of xhcad's waiting for room, which no later one may
 * pass. */
struct xhca_cqx {
	__u32 gen;	/* not 0: the slot is a CQ's */
	__u32 lock;
	__u32 prod;
	__u32 depth;	/* a power of 2 */
	__u64 ring;	/* host memory offset of its xhca_ring_ctl, the
			 * xhca_cqe entries after it (contiguous) */
	__u32 spilled;
	__u32 cons;	/* xhca_rx's: the ring's consumer index as it last read
			 * it; the ring's is read again only when this one
			 * leaves no room */
	__u32 flags;	/* XHCA_CQXF_* */
	__u8 pad[28];
};
/* the CQ was made with XHCA_CQF_NO_TS: rx_ns 0, no clock read */
#define XHCA_CQXF_NO_TS 1
_Static_assert(sizeof(struct xhca_cqx) == 64, "xhca_cqx size");
#define XHCA_CQX_MAX 4096

/*
 * xhca_mcast (key: struct xhca_mgid): a multicast group. Written by xhcad
 * (the value is replaced whole), read by xhca_rx, which checks what is
 * common to the group (it exists, has members, the P_Key) and hands one
 * copy to the replication queue with index and gen in its metadata; xhcad
 * finds the members. gen changes when a group is re-created under the same
 * index: frames of the old one are not replicated to the new one.
 */
struct xhca_mgid {
	__u8 gid[16];	/* IPv6, IPv4 v4-mapped (::ffff:a.b.c.d) */
};
_Static_assert(sizeof(struct xhca_mgid) == 16, "xhca_mgid size");

struct xhca_mcast_grp {
	__u32 index;	/* < XHCA_MCAST_GROUPS: xhca_mc_stats, xhca_mc_devs */
	__u32 gen;
	__u32 nmembers;	/* QPs */
	__u32 ndevs;	/* function ports */
	__u16 pkey;
	__u16 flags;
	__u32 pad;
};
_Static_assert(sizeof(struct xhca_mcast_grp) == 24, "xhca_mcast_grp size");

/* xhca_mc_stats value (per-CPU, key: group index): xhca_rx's side. */
struct xhca_mcast_counter {
	__u64 packets;		/* to the replication queue */
	__u64 bytes;
	__u64 dev_packets;	/* sent to the function ports */
	__u64 threshold_drops;
	__u64 pkey_drops;
	__u64 empty_drops;
};
_Static_assert(sizeof(struct xhca_mcast_counter) == 48, "xhca_mcast_counter size");

/* xhca_stats value (per-CPU, key: enum xhca_reason). */
struct xhca_counter {
	__u64 packets;
	__u64 bytes;
};
_Static_assert(sizeof(struct xhca_counter) == 16, "xhca_counter size");

/* xhca_qp_stats value (per-CPU, key: local index). */
struct xhca_qp_counter {
	__u64 accepted;
	__u64 accepted_bytes;
	__u64 dropped;
	__u64 dropped_bytes;
};
_Static_assert(sizeof(struct xhca_qp_counter) == 32, "xhca_qp_counter size");

/* xhca_pkeys value (key: P_Key index). 0 is an empty slot (never matches). */
struct xhca_pkey {
	__u16 pkey;
	__u16 pad;
};
_Static_assert(sizeof(struct xhca_pkey) == 4, "xhca_pkey size");

/*
 * xhca_flowq value (key: flow queue). Mmapable: xhcad writes its half
 * through a mapping. Backlog = enq - deq: frames redirected and not yet taken
 * by xhcad. xhca_rx closes the gate (drops the flow queue's new packets, as
 * drop_flowq_gate) when the backlog reaches high, and opens it again when it
 * falls to low; other flow queues are untouched. Each half in its own cache
 * line: one is written per packet, the other per frame xhcad takes.
 */
struct xhca_flowq {
	/* written by xhca_rx */
	__u64 enq;	/* frames redirected to this flow queue (atomic add) */
	__u64 gate_closes;
	__u32 gate;	/* 1: closed */
	__u32 pad0;
	__u8 pad1[40];
	/* written by xhcad */
	__u64 deq;	/* frames taken from its rings, and lost by the kernel after the redirect */
	__u32 high;	/* watermarks in frames; high 0: gate never closes */
	__u32 low;
	__u8 pad2[48];
};
_Static_assert(sizeof(struct xhca_flowq) == 128, "xhca_flowq size");

/* xhca_flowq_stats value (per-CPU, key: flow queue). */
struct xhca_flowq_counter {
	__u64 packets;	/* redirected */
	__u64 bytes;
	__u64 gate_drops;
	__u64 nosock_drops;
};
_Static_assert(sizeof(struct xhca_flowq_counter) == 32, "xhca_flowq_counter size");

/*
 * The metadata block xhca_rx writes in front of every frame it redirects to a
 * flow queue (bpf_xdp_adjust_meta; AF_XDP copies it along, so it sits just
 * before the frame in the UMEM). 32 bytes, the kernel's limit.
 */
struct xhca_rx_meta {
	__u64 rx_ns;	/* bpf_ktime_get_ns() when xhca_rx redirected the packet; 1 for an
			 * RC request committed before a rewind (xhca_qp_ctx.rw_gen) */
	__u32 gqpn;
	__u16 lidx;	/* < XHCA_MAX_QPS_LIMIT */
	__u16 csn;	/* XHCA_MF_CSN: the message's CSN (low 16 bits of msn) */
	__u32 gen;	/* of the QP context, checked again by xhcad */
	__u32 psn;
	union {
		struct {
			__u16 payload_off; /* from the start of the frame */
			__u16 payload_len; /* without pad and ICRC */
		};
		/* XHCA_MF_PLACED: the WRITE's length (placed_ack: the PSN of its
		 * FIRST); XHCA_MF_MSN: the MSN; dup_to_flowq: the PSN before
		 * which xhcad may acknowledge again; seq_nak_to_flowq: ePSN */
		__u32 msg_len;
	};
	__u8 opcode;
	__u8 flags;	/* XHCA_MF_* */
	__u8 flowq;
	__u8 reason;	/* enum xhca_reason: why it is here (XHCA_R_TO_FLOWQ) */
};
_Static_assert(sizeof(struct xhca_rx_meta) == 32, "xhca_rx_meta size");

#define XHCA_MF_SE (1u << 0)	 /* BTH solicited event */
#define XHCA_MF_ACKREQ (1u << 1) /* BTH AckReq */
#define XHCA_MF_IPV6 (1u << 2)
#define XHCA_MF_ECN (1u << 3)	 /* BTH FECN */
#define XHCA_MF_PLACED (1u << 4) /* xhca_rx placed the payload; xhcad completes it */
#define XHCA_MF_MCAST (1u << 5)	 /* a multicast copy xhcad injected (never from xhca_rx) */
#define XHCA_MF_MSN (1u << 6)	 /* READ/ATOMIC: msg_len is the MSN for the response's AETH */
#define XHCA_MF_CSN (1u << 7)	 /* csn is valid: the QP's CQ is a proxy CQ (the CSN), or
				  * it is RC (the MSN before the frame's message) */

/*
 * Proxy QP filters (US 9,069,633), xhca_pfilt (key: the QP's local index):
 * up to XHCA_PFILT_PER_QP per QP, written whole by xhcad (gen names the QP
 * context they belong to), read by xhca_rx at the first packet of each
 * message of a proxy QP. A message is offloaded when any active filter
 * matches: every criterion a filter sets must hold.
 */
#define XHCA_PFILT_PER_QP 4
#define XHCA_PFILT_MATCH_MAX 16	/* payload bytes a value/mask covers */

/* Which requests (ops): what the proxy can execute. */
#define XHCA_PF_OP_SEND (1u << 0)	/* SEND, SEND with immediate (to a handler) */
#define XHCA_PF_OP_READ (1u << 1)	/* RDMA READ request */
#define XHCA_PF_OP_CMP_SWAP (1u << 2)
#define XHCA_PF_OP_FETCH_ADD (1u << 3)

/* flags: the criteria in use. */
#define XHCA_PF_SIZE_BELOW (1u << 0)	/* message size < size */
#define XHCA_PF_SIZE_ABOVE (1u << 1)	/* message size >= size */
#define XHCA_PF_SINGLE (1u << 2)	/* single-packet messages only */
#define XHCA_PF_RKEY (1u << 3)		/* the RETH/AtomicETH R_Key is rkey */
#define XHCA_PF_VA (1u << 4)		/* [va, va + size) within [va_lo, va_hi) */
#define XHCA_PF_SQPN (1u << 5)		/* UD: the DETH source QPN is sqpn */
#define XHCA_PF_MATCH (1u << 6)		/* value/mask over the first match_len bytes */
#define XHCA_PF_INVERT (1u << 7)	/* ... and offload when it does NOT match */

struct xhca_pfilter {
	__u32 id;	/* xhcad's filter id; 0: an empty slot */
	__u8 ops;	/* XHCA_PF_OP_* */
	__u8 flags;	/* XHCA_PF_* */
	__u8 match_len;	/* 1..XHCA_PFILT_MATCH_MAX */
	__u8 handler;	/* what the proxy does with an offloaded SEND (xhcad's) */
	__u32 size;	/* the size threshold, bytes */
	__u32 rkey;
	__u32 sqpn;
	__u32 pad;
	__u64 va_lo;
	__u64 va_hi;	/* exclusive */
	__u8 value[XHCA_PFILT_MATCH_MAX];
	__u8 mask[XHCA_PFILT_MATCH_MAX]; /* a set bit is ignored (the patent's TCAM) */
};
_Static_assert(sizeof(struct xhca_pfilter) == 72, "xhca_pfilter size");

struct xhca_pfilter_set {
	__u32 gen;	/* the QP context's generation */
	__u32 pad;
	struct xhca_pfilter f[XHCA_PFILT_PER_QP];
};

/* Per-CPU proxy counters (xhca_proxy_stats, one entry), written by xhca_rx. */
struct xhca_proxy_counter {
	__u64 offloaded;	/* messages sent to the proxy queue */
	__u64 normal;		/* messages of proxy QPs no filter matched */
	__u64 no_offload;	/* matched, but the load limit held them back */
	__u64 records;		/* completion records of XDP-placed WRITEs */
	__u64 record_fail;	/* the ring buffer was full: the reorderer sees a gap */
};

/*
 * A completion record (xhca_proxy_rb, a ring buffer, to xhcad's proxy): an
 * RDMA WRITE xhca_rx placed whole, of a QP on a proxy CQ: its CSN took no
 * path through xhcad's flow queues.
 */
struct xhca_proxy_rec {
	__u32 lidx;
	__u32 gen;
	__u32 gqpn;
	__u32 csn;
	__u32 len;	/* the WRITE's length */
	__u32 pad;
	__u64 rx_ns;
};
_Static_assert(sizeof(struct xhca_proxy_rec) == 32, "xhca_proxy_rec size");

/* Map names (≤ 15 characters), as pinned under /sys/fs/bpf/xhca/<ifname>/. */
#define XHCA_MAP_CAM "xhca_qp_cam"
#define XHCA_MAP_CTX "xhca_qp_ctx"
#define XHCA_MAP_STATS "xhca_stats"
#define XHCA_MAP_QP_STATS "xhca_qp_stats"
#define XHCA_MAP_PKEYS "xhca_pkeys"
#define XHCA_MAP_XSKS "xhca_xsks"
#define XHCA_MAP_FLOWQ "xhca_flowq"
#define XHCA_MAP_FLOWQ_STATS "xhca_fq_stats"
#define XHCA_MAP_HOSTMEM "xhca_hostmem"
#define XHCA_MAP_MR "xhca_mr"
#define XHCA_MAP_EVENTS "xhca_events"
#define XHCA_MAP_BARRIER "xhca_barrier"
#define XHCA_MAP_MCAST "xhca_mcast"
#define XHCA_MAP_MC_STATS "xhca_mc_stats"
#define XHCA_MAP_MC_DEVS "xhca_mc_devs"
#define XHCA_MAP_PFILT "xhca_pfilt"
#define XHCA_MAP_PROXY_STATS "xhca_px_stats"
#define XHCA_MAP_PROXY_RB "xhca_proxy_rb"
#define XHCA_MAP_RFAST "xhca_rfast"
#define XHCA_MAP_CQX "xhca_cqx"

#endif /* XHCA_ABI_H */
