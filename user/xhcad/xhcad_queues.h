/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhcad's queues layer: flow queues, CQs and SRQs, sessions, addresses and
 * neighbours. A file of this layer includes this header; it declares the
 * layers below too, never those above (docs/design.md: xhcad in layers).
 */
#ifndef XHCAD_QUEUES_H
#define XHCAD_QUEUES_H

#include "xhcad_qps.h"

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
/* xhca_cqx mapped, an earlier xhcad's entries cleared (--recv-fast: CQs
 * xhca_rx writes too get an entry each as they are made or restored). */
int cqx_init(struct xhcad *d);
/* cq's slot in xhca_cqx, XHCA_CQX_MAX when xhca_rx does not write it. */
__u32 cq_slot(const struct xhcad *d, const struct cq *cq);
/* xhca_rx wrote into the CQ of slot while its application slept
 * (XHCA_EV_CQ_WAKE): cq_notify signals it. */
void cq_wake_slot(struct xhcad *d, __u32 slot);
/* Housekeeping: CQs xhca_rx writes whose application sleeps with
 * completions it has not taken (a wake-up event lost, xhca_events full):
 * cq_notify signals them. */
void cq_wake_missed(struct xhcad *d);

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
/* The frames sent by XDP_TX the interface dropped so far (its ethtool
 * counters named *xdp_tx_err*: veth's when the peer has no NAPI); 0, or -1
 * when it has no statistics. */
int net_xdp_tx_errors(const char *ifname, __u64 *errs);
/* The interface's driver (ethtool's: "veth", "virtio_net", "mlx5_core") in
 * drv; 0, or -1 when the interface names none. */
int net_driver(const char *ifname, char *drv, size_t len);

#endif
