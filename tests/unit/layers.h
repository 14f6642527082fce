/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the tests of xhcad's layers without a network share (test_resp.c,
 * test_req.c, test_recv.c): xhcad's AF_XDP layer (user/xhcad/xsk.c, xsk_io.c) as the
 * layers above it see it (the frames they send are kept here, in order),
 * host memory in plain memory, a CQ's next completion, the metadata xhca_rx
 * writes for a frame.
 */
#ifndef XHCA_TESTS_LAYERS_H
#define XHCA_TESTS_LAYERS_H

#include <linux/types.h>
#include <xhca/pkt.h>
#include "../../user/xhcad/xhcad.h"

#define FX_MAX 16
extern __u8 fx_frame[FX_MAX][XHCA_PKT_MAX];
extern __u32 fx_len[FX_MAX];
extern int fx_n;	/* frames sent since fx_reset (the first FX_MAX kept) */
extern int fx_tx_full;	/* set: the TX ring is full, xsk_tx_alloc() and xsk_tx() fail (EAGAIN) */
extern int fx_zerocopy;	/* set: the AF_XDP sockets are zero-copy (xsk_zerocopy()) */

void fx_reset(void);

/* Host memory of pages pages as hostmem_init leaves it, in plain memory. */
int fx_hostmem(struct xhcad *d, __u32 pages);
/* The completion at cq's consumer index, taken: 0, or -1 when there is none. */
int fx_take_cqe(struct cq *cq, struct xhca_cqe *c);
/* The payload's place in m, as xhca_rx writes it for frame fr (plen bytes
 * of payload after its headers). */
void fx_meta_payload(struct xhca_rx_meta *m, const __u8 *fr, __u32 len, __u32 plen);

#endif /* XHCA_TESTS_LAYERS_H */
