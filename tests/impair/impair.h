/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * impair: a netem-like impairment of the tests' own (this kernel has no
 * sch_netem): a tc ingress program on the two ports of the middle
 * namespace's bridge drops, duplicates and reorders a chosen fraction of
 * the RoCEv2 frames between two xhca hosts. Shared by impair.bpf.c and the
 * loader, xhca-impair.
 */
#ifndef XHCA_TESTS_IMPAIR_H
#define XHCA_TESTS_IMPAIR_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* A held frame is at most this long (path MTU 2048 makes 2112-byte frames). */
#define IMPAIR_HOLD_MAX 4352 /* a RoCE frame at path MTU 4096 */

/* Per direction (0: port a's ingress to port b, 1: b to a), per CPU. */
struct impair_stats {
	__u64 seen;		/* RoCEv2 frames that came in */
	__u64 passed;		/* sent on (the duplicates and released frames too) */
	__u64 dropped;		/* dropped by chance */
	__u64 duplicated;	/* sent twice */
	__u64 held;		/* kept back to go out after the next frame */
	__u64 reordered;	/* held frames sent after a later one */
	__u64 errors;		/* a helper failed: the frame is lost */
};
_Static_assert(sizeof(struct impair_stats) == 56, "impair_stats layout");

/* The frame one direction holds back on one CPU; len 0 = none. */
struct impair_hold {
	__u32 len;
	__be16 proto;		/* its ethertype: only swapped with a frame of the same */
	__u16 pad;
	__u8 data[IMPAIR_HOLD_MAX];
};
_Static_assert(sizeof(struct impair_hold) == 8 + IMPAIR_HOLD_MAX, "impair_hold layout");

#endif
