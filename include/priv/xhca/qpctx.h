/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The userspace side of the QP context rules (struct xhca_qp_ctx in abi.h),
 * and of the MR entries' (struct xhca_mr_ctx):
 * xhcad maps the xhca_qp_ctx array and writes a context's configuration
 * inside a seqcount write section, so xhca_rx, which reads without a lock,
 * never acts on a half-written one. One writer at a time per map: xhcad
 * (or a test that stands in for it).
 */
#ifndef XHCA_QPCTX_H
#define XHCA_QPCTX_H

#include <linux/types.h>
#include <xhca/abi.h>

/* Maps the n slots of the xhca_qp_ctx map fd read-write. Returns the
 * mapping, or NULL with errno set. */
struct xhca_qp_ctx *xhca_qpctx_map(int fd, __u32 n);
void xhca_qpctx_unmap(struct xhca_qp_ctx *m, __u32 n);

/* Copies slot into out; rx_psn, which xhca_rx changes at any time, is read
 * atomically. */
void xhca_qpctx_load(const struct xhca_qp_ctx *slot, struct xhca_qp_ctx *out);

/* Writes the configuration of c (everything but seq, rx_psn and px_csn) into slot,
 * inside a write section; with set_rx, rx_psn too, inside the same section.
 * Without it, rx_psn keeps whatever xhca_rx made of it. */
void xhca_qpctx_store(struct xhca_qp_ctx *slot, const struct xhca_qp_ctx *c, int set_rx);

/* Whether a writer died inside a write section (seq left odd): xhca_rx
 * then drops every packet of the slot as drop_qp_busy. */
int xhca_qpctx_torn(const struct xhca_qp_ctx *slot);

/* Writes MR entry m (everything but seq) into slot, in one write section. */
void xhca_mr_store(struct xhca_mr_ctx *slot, const struct xhca_mr_ctx *m);

#endif /* XHCA_QPCTX_H */
