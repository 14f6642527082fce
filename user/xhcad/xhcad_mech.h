/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhcad's mech layer: the mechanisms: multicast, the proxy, its filters,
 * the CLI's receive side. A file of this layer includes this header; it
 * declares the layers below too, never those above (docs/design.md: xhcad
 * in layers).
 */
#ifndef XHCAD_MECH_H
#define XHCAD_MECH_H

#include "xhcad_transport.h"

/* proxy_thread.c: the proxy thread (US 9,069,633; what proxy.c calls of it
 * is in proxy_int.h) */

/* proxy.c: the main thread's service of the proxy thread (its mailbox:
 * pxq.c) */
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

#endif
