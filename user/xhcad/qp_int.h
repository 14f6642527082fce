/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the QP verbs (qp.c) share with the two files above them, the table
 * rebuilt at start (qp_restore.c) and the QPs shown and counted
 * (qp_show.c), and with no other file.
 */
#ifndef XHCAD_QP_INT_H
#define XHCAD_QP_INT_H

#include "xhcad_verbs.h"

/* qp.c */
int qp_engine0_only(__u32 qpn, const struct cq *cq);
/* A slot's context invalid, its generation bumped. */
void qp_invalidate_slot(struct xhcad *d, __u32 lidx, struct xhca_qp_ctx *c);
/* A per-CPU map's entry key zeroed (values of vsize bytes). */
int qp_percpu_zero(struct xhcad *d, int fd, __u32 key, size_t vsize);
/* A QP's attributes from its context, then what only xhcad knows of it. */
void qp_attr_from_ctx(const struct xhca_qp_ctx *c, struct xhca_qp_attr *a);
void qp_attr_from_host(const struct xhcad *d, const struct qp_host *qh,
		       struct xhca_qp_attr *a);

#endif /* XHCAD_QP_INT_H */
