/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhcad's verbs layer: the QP verbs, the QP table rebuilt at start, QPs
 * shown and counted, what a restart keeps, an application's end. A file of
 * this layer includes this header; it declares the layers below too, never
 * those above (docs/design.md: xhcad in layers).
 */
#ifndef XHCAD_VERBS_H
#define XHCAD_VERBS_H

#include "xhcad_round.h"

/* qp.c: the QP verbs (its insides shared with qp_restore.c and qp_show.c
 * in qp_int.h) */
int qp_create(struct xhcad *d, struct xhca_qp_attr *a, __u32 owner, char *err, size_t errlen);
/* QP1, the GSI QP, as the connection manager's: xhcad's own, UD, RTS,
 * delivering to xhcad (made unless an earlier xhcad's is there). */
int qp_gsi_ensure(struct xhcad *d);
int qp_modify(struct xhcad *d, struct xhca_qp_attr *a, __u32 owner, char *err, size_t errlen);
int qp_destroy(struct xhcad *d, __u32 qpn, __u32 owner, char *err, size_t errlen);
/* eng0: one of engine 0's (a QP it must run) */
__u32 qp_default_flowq(const struct xhcad *d, __u32 qpn, int eng0);

/* qp_restore.c: the QP table rebuilt at start */
int qp_reconcile(struct xhcad *d);
/* At start: a kept QP that engine 0 must run (QP1, a proxy CQ's) on a flow
 * queue of another engine (an earlier xhcad ran other --engines) moves to
 * one of engine 0's. */
void qp_engines_fix(struct xhcad *d);

/* qp_show.c: QPs shown, the counters */
/* The views take the caller: a session (owner) sees its own objects only,
 * xhcad's own client (0) all of them. */
int qp_show(struct xhcad *d, __u32 qpn, __u32 owner, struct xhca_qp_info **out, __u32 *n,
	    char *err, size_t errlen);
int stats_get(struct xhcad *d, const struct xhca_stats_req *rq, __u32 owner,
	      struct xhca_stats_reply *out, char *err, size_t errlen);

/* state.c: what a restart keeps */
int state_save(struct xhcad *d);
void state_remove(struct xhcad *d);
int state_restore(struct xhcad *d, int maps_reused);

/* client.c: an application's end */
/* Everything the session owned goes: QPs first (their CQs and rings are
 * in use until then), then CQs, then the rest of its host memory. */
void session_close(struct xhcad *d, __u32 id);

#endif
