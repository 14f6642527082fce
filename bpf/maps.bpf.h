/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Every map of xhca_rx and xhca_rep, each declared once, with who writes
 * and reads it; the value types are in include/xhca/abi.h. xhcad reaches
 * them by these names (the skeleton, the pins under /sys/fs/bpf/xhca).
 */
#ifndef XHCA_MAPS_BPF_H
#define XHCA_MAPS_BPF_H

#include "common.bpf.h"

/* QP CAM. Key: global QPN (24 bits). Value: local index and generation.
 * Written by xhcad (insert BPF_NOEXIST on create, delete on destroy), read by
 * xhca_rx. max_entries = number of local QPs, set at load (default 4096). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XHCA_MAX_QPS_DEFAULT);
	__type(key, __u32);
	__type(value, struct xhca_cam_val);
} xhca_qp_cam SEC(".maps");

/* Local QP contexts. Key: local index. Mmapable: xhcad writes the
 * configuration through its mapping under the seqcount, xhca_rx reads it
 * and compare-and-swaps rx_psn (the rules are at struct xhca_qp_ctx). Sized
 * like the CAM. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XHCA_MAX_QPS_DEFAULT);
	__type(key, __u32);
	__type(value, struct xhca_qp_ctx);
} xhca_qp_ctx SEC(".maps");

/* Reason counters. Key: enum xhca_reason. Per-CPU, written by xhca_rx, read
 * and reset by xhcad. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XHCA_R_MAX);
	__type(key, __u32);
	__type(value, struct xhca_counter);
} xhca_stats SEC(".maps");

/* Per-QP accepted/dropped counters. Key: local index. Per-CPU, written by
 * xhca_rx, read and zeroed (on create) by xhcad. Sized like the CAM. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XHCA_MAX_QPS_DEFAULT);
	__type(key, __u32);
	__type(value, struct xhca_qp_counter);
} xhca_qp_stats SEC(".maps");

/* P_Key table. Key: P_Key index. Written by xhcad (index 0 is 0xffff), read
 * by xhca_rx for QP1, which accepts any P_Key of the table. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XHCA_PKEY_TBL_LEN);
	__type(key, __u32);
	__type(value, struct xhca_pkey);
} xhca_pkeys SEC(".maps");

/* Flow queue sockets. Key: rx_queue_index * XHCA_FLOWQ_MAX + flow queue.
 * Written by xhcad (one AF_XDP socket per RX queue and flow queue), read by
 * xhca_rx. An empty slot means no socket: drop_no_socket. */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, XHCA_RXQ_MAX * XHCA_FLOWQ_MAX + 1); /* + the replication port's */
	__type(key, __u32);
	__type(value, __u32);
} xhca_xsks SEC(".maps");

/* Flow queue backlog and gate. Key: flow queue. Mmapable: xhca_rx adds to
 * enq and flips the gate, xhcad writes deq and the watermarks (the rules
 * are at struct xhca_flowq). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XHCA_FLOWQ_MAX);
	__type(key, __u32);
	__type(value, struct xhca_flowq);
} xhca_flowq SEC(".maps");

/* Per flow queue counters. Key: flow queue. Per-CPU, written by xhca_rx,
 * read by xhcad. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XHCA_FLOWQ_MAX);
	__type(key, __u32);
	__type(value, struct xhca_flowq_counter);
} xhca_fq_stats SEC(".maps");

/* A block of host memory: XHCA_BLOCK_PAGES pages of 4 KiB, mmapable, one
 * owner's (a session's, or xhcad's own): the application maps only its own
 * blocks. xhcad creates them. */
struct hm_block {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XHCA_BLOCK_PAGES);
	__type(key, __u32);
	__type(value, __u8[XHCA_PAGE_SIZE]);
};

/* Host memory: its blocks. Key: block number (page >> XHCA_BLOCK_SHIFT);
 * an empty slot is memory no one holds. Sized at load (default 256 MiB). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, XHCA_HOSTMEM_PAGES_DEFAULT / XHCA_BLOCK_PAGES);
	__type(key, __u32);
	__array(values, struct hm_block);
} xhca_hostmem SEC(".maps");


/* Memory regions. Key: MR index (rkey >> 8; 0 is never used). Mmapable:
 * xhcad writes an entry through its mapping under the seqcount (struct
 * xhca_mr), xhca_rx reads it. Sized at load (default 4096). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XHCA_MR_MAX_DEFAULT);
	__type(key, __u32);
	__type(value, struct xhca_mr_ctx);
} xhca_mr SEC(".maps");

/* Events for xhcad (struct xhca_event): a QP that went to the error state.
 * Written by xhca_rx, read by xhcad. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} xhca_events SEC(".maps");

/* Proxy QP filters. Key: local index. Written by xhcad (whole values),
 * read by xhca_rx at the first packet of a proxy QP's message. Sized like
 * the CAM. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XHCA_MAX_QPS_DEFAULT);
	__type(key, __u32);
	__type(value, struct xhca_pfilter_set);
} xhca_pfilt SEC(".maps");

/* Proxy counters (one entry). Per-CPU, written by xhca_rx. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xhca_proxy_counter);
} xhca_px_stats SEC(".maps");

/* Completion records for xhcad's proxy (struct xhca_proxy_rec): WRITEs of
 * QPs on proxy CQs that xhca_rx placed whole. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} xhca_proxy_rb SEC(".maps");

/* Multicast groups. Key: MGID. Written by xhcad (whole values), read by
 * xhca_rx. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XHCA_MCAST_GROUPS);
	__type(key, struct xhca_mgid);
	__type(value, struct xhca_mcast_grp);
} xhca_mcast SEC(".maps");

/* Per group counters. Key: group index. Per-CPU, written by xhca_rx. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XHCA_MCAST_GROUPS);
	__type(key, __u32);
	__type(value, struct xhca_mcast_counter);
} xhca_mc_stats SEC(".maps");

/* The function ports of each group. Key: group index. Value: a DEVMAP_HASH
 * of the ports' ifindexes (and the replication port's while the group also
 * has QP members), made by xhcad; xhca_rx broadcasts to it. */
struct mc_ports {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, XHCA_MCAST_DEVS + 1);
	__type(key, __u32);
	__type(value, __u32); /* ifindex */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, XHCA_MCAST_GROUPS);
	__type(key, __u32);
	__array(values, struct mc_ports);
} xhca_mc_devs SEC(".maps");

/* SENDs placed by xhca_rx (struct xhca_rfast: the rules are there). Key:
 * local index. Mmapable by xhcad alone: it fills an entry and sets gen,
 * xhca_rx takes the QP's receive queue under its lock. Sized like the CAM. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XHCA_MAX_QPS_DEFAULT);
	__type(key, __u32);
	__type(value, struct xhca_rfast);
} xhca_rfast SEC(".maps");

/* The CQs' producer sides (struct xhca_cqx). Key: a CQ's slot. Mmapable by
 * xhcad alone; written under each entry's lock by xhcad's engines and by
 * xhca_rx. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, XHCA_CQX_MAX);
	__type(key, __u32);
	__type(value, struct xhca_cqx);
} xhca_cqx SEC(".maps");

/* xhca_rx's packet and verdict (struct rx_scratch): per CPU, not on the
 * stack, which the global functions it calls need (512 bytes for the whole
 * chain). Not pinned: each loaded program has its own. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rx_scratch);
} xhca_scratch SEC(".maps");

#endif /* XHCA_MAPS_BPF_H */
