/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhcad's AF_XDP layer (user/xhcad/xsk.c) as the layers above it see it when
 * they are tested without a network (test_resp.c, test_req.c): the frames
 * they send are kept here, in order; and those tests' result lines.
 */
#ifndef XHCA_TESTS_FAKE_XSK_H
#define XHCA_TESTS_FAKE_XSK_H

#include <linux/types.h>
#include <xhca/pkt.h>

#define FX_MAX 16
extern __u8 fx_frame[FX_MAX][XHCA_PKT_MAX];
extern __u32 fx_len[FX_MAX];
extern int fx_n;	/* frames sent since fx_reset (the first FX_MAX kept) */

void fx_reset(void);

/* A result line of the tests of xhcad's layers: "ok - WHO: ..." or
 * "not ok - WHO: ..."; returns 1 when it failed. */
int fx_check(const char *who, int ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif /* XHCA_TESTS_FAKE_XSK_H */
