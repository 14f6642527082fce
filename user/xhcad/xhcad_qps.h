/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhcad's qps layer: the QP table every layer reads. A file of this layer
 * includes this header; it declares the layers below too, never those above
 * (docs/design.md: xhcad in layers).
 */
#ifndef XHCAD_QPS_H
#define XHCAD_QPS_H

#include "xhcad_memory.h"

/* qptab.c: the QP table as every layer reads it */
#define QPN_FIRST 2u		/* 0 (SMI) and 1 (GSI) are never allocated */
#define QPN_LAST 0xfffffeu	/* 0xffffff is multicast */
int qp_table_init(struct xhcad *d);
void qp_table_free(struct xhcad *d);
/* The QP of qpn, if owner may act on it (the CLI, 0, on any). */
int qp_find(struct xhcad *d, const char *op, __u32 qpn, __u32 owner, __u32 *lidx,
	    struct xhca_qp_ctx *c, char *err, size_t errlen);
/* The QP at lidx (if still of generation gen) to the error state. */
int qp_set_error(struct xhcad *d, __u32 lidx, __u32 gen);
int qp_ctx_read(struct xhcad *d, __u32 lidx, struct xhca_qp_ctx *c);
/* set_rx: also the receive state (create, reset, a new ePSN); otherwise
 * xhca_rx keeps advancing it undisturbed. */
void qp_ctx_write(struct xhcad *d, __u32 lidx, const struct xhca_qp_ctx *c, int set_rx);
int qp_cam_lookup(struct xhcad *d, __u32 qpn, struct xhca_cam_val *v);

#endif
