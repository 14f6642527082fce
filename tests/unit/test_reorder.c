/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The proxy's completion reorderer: completions leave in CSN order whatever
 * order their records come in (the patent's lock example among them),
 * skips leave nothing, a full CQ holds the head without losing its place,
 * the 16-bit CSN wraps, bad records (late, duplicate, beyond the window)
 * change nothing, and a gap that outlasts the timeout is filled.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "../../user/xhcad/reorder.h"
#include "tests.h"

static void result(int ok, const char *name, const char *why)
{
	if (ok)
		unit_check(1, "%s", name);
	else
		unit_check(0, "%s (%s)", name, why);
}

/* What emit() received: the CSNs and wr_ids, in order. */
struct out {
	unsigned int n, room; /* room: how many more emit() takes (~0u: any) */
	__u16 csn[64];
	__u64 wr_id[64];
};

static int emit(void *arg, __u16 csn, const struct xhca_cqe *c)
{
	struct out *o = arg;

	if (!o->room || o->n == 64)
		return -ENOSPC;
	if (o->room != ~0u)
		o->room--;
	o->csn[o->n] = csn;
	o->wr_id[o->n++] = c->wr_id;
	return 0;
}

static int put(struct reorder *r, __u16 csn, enum ro_kind k, __u64 now)
{
	struct xhca_cqe c = { .wr_id = 1000u + csn };

	return ro_put(r, csn, k, &c, now);
}

static const char *seq(const struct out *o)
{
	static char b[512];
	size_t l = 0;

	b[0] = 0;
	for (unsigned int i = 0; i < o->n && l < sizeof(b) - 8; i++)
		l += (size_t)snprintf(b + l, sizeof(b) - l, "%s%u", i ? "," : "", o->csn[i]);
	return b;
}

static void check_seq(const char *name, const struct out *o, const char *want)
{
	char why[600];

	snprintf(why, sizeof(why), "released %s, want %s", seq(o), want);
	result(!strcmp(seq(o), want), name, why);
}

static void in_and_out_of_order(void)
{
	struct reorder r;
	struct out o = { .room = ~0u };

	ro_init(&r, 0);
	put(&r, 0, RO_CQE, 1);
	put(&r, 1, RO_CQE, 1);
	ro_release(&r, emit, &o, 1);
	put(&r, 4, RO_CQE, 2);
	put(&r, 3, RO_CQE, 2);
	ro_release(&r, emit, &o, 2);
	check_seq("in order at once; 3 and 4 wait for 2", &o, "0,1");
	put(&r, 2, RO_CQE, 3);
	ro_release(&r, emit, &o, 3);
	check_seq("2 comes: 2, 3, 4 leave in order", &o, "0,1,2,3,4");
	result(o.wr_id[3] == 1003 && r.waiting == 0 && r.released == 5,
	       "each completion is its own, nothing left waiting", "wr_id or counters");
	ro_fini(&r);
}

/* The patent's example: a lock request offloaded (CSN 7), then a write on the
 * normal path (CSN 8) that finishes first; its completion waits for the
 * lock's (a no-op) and leaves after it. */
static void lock_then_write(void)
{
	struct reorder r;
	struct out o = { .room = ~0u };
	struct xhca_cqe noop = { .wr_id = 7, .opcode = 0xff };

	ro_init(&r, 7);
	put(&r, 8, RO_CQE, 10);
	ro_release(&r, emit, &o, 11);
	result(o.n == 0 && r.waiting == 1, "the write's completion waits for the lock's",
	       "released early");
	ro_put(&r, 7, RO_CQE, &noop, 20);
	ro_release(&r, emit, &o, 21);
	check_seq("the lock's no-op, then the write's", &o, "7,8");
	ro_fini(&r);
}

static void skips_and_full_cq(void)
{
	struct reorder r;
	struct out o = { .room = 2 };

	ro_init(&r, 0);
	for (__u16 c = 0; c < 6; c++)
		put(&r, c, c == 1 || c == 4 ? RO_SKIP : RO_CQE, 1);
	ro_release(&r, emit, &o, 1);
	check_seq("skips leave nothing; a full CQ stops the release at its head", &o, "0,2");
	o.room = ~0u;
	ro_release(&r, emit, &o, 2);
	check_seq("room again: the rest, in order", &o, "0,2,3,5");
	result(r.skipped == 2 && r.released == 4 && r.waiting == 0, "skips counted apart",
	       "counters");
	ro_fini(&r);
}

static void wrap(void)
{
	struct reorder r;
	struct out o = { .room = ~0u };

	ro_init(&r, 65534);
	put(&r, 0, RO_CQE, 1);
	put(&r, 65535, RO_CQE, 1);
	put(&r, 1, RO_CQE, 1);
	ro_release(&r, emit, &o, 1);
	result(o.n == 0, "across the wrap: nothing before 65534", "released early");
	put(&r, 65534, RO_CQE, 1);
	ro_release(&r, emit, &o, 1);
	check_seq("65534, 65535, 0, 1", &o, "65534,65535,0,1");
	ro_fini(&r);
}

static void bad_records(void)
{
	struct reorder r;
	struct out o = { .room = ~0u };
	int e1, e2, e3;

	ro_init(&r, 100);
	put(&r, 100, RO_CQE, 1);
	ro_release(&r, emit, &o, 1);
	put(&r, 102, RO_CQE, 1);
	e1 = put(&r, 100, RO_CQE, 1);			/* released already */
	e2 = put(&r, 102, RO_SKIP, 1);			/* has its record */
	e3 = put(&r, (__u16)(101 + RO_WINDOW), RO_CQE, 1); /* beyond the window */
	result(e1 == -EALREADY && e2 == -EEXIST && e3 == -ERANGE && r.late == 1 &&
		       r.waiting == 1,
	       "late, duplicate and out-of-window records refused, nothing changed",
	       "errors or counters");
	put(&r, 101, RO_CQE, 2);
	ro_release(&r, emit, &o, 2);
	check_seq("the kept record still leaves, as a completion", &o, "100,101,102");
	ro_fini(&r);
}

static void gap_timeout(void)
{
	const __u64 T = 1000000;
	struct reorder r;
	struct out o = { .room = ~0u };
	struct xhca_cqe err = { .wr_id = 55, .status = XHCA_WC_WR_FLUSH_ERR };
	int before, at;

	ro_init(&r, 0);
	result(!ro_gap_expired(&r, 10 * T, T), "no gap while nothing waits", "expired");
	put(&r, 1, RO_CQE, 5 * T);
	put(&r, 2, RO_CQE, 5 * T + 10);
	before = ro_gap_expired(&r, 6 * T - 1, T);
	at = ro_gap_expired(&r, 6 * T, T);
	result(!before && at, "a gap expires after the timeout, from when records waited",
	       "timing");
	ro_fill_gap(&r, RO_CQE, &err);
	ro_release(&r, emit, &o, 6 * T);
	check_seq("the gap's error completion first, then the rest", &o, "0,1,2");
	result(o.wr_id[0] == 55 && r.gaps == 1 && !ro_gap_expired(&r, 100 * T, T),
	       "the error completion fills the gap, counted", "wr_id or counter");
	/* progress restarts the clock */
	put(&r, 4, RO_CQE, 7 * T);
	put(&r, 3, RO_CQE, 8 * T);
	put(&r, 6, RO_CQE, 8 * T);
	ro_release(&r, emit, &o, 8 * T);
	result(!ro_gap_expired(&r, 9 * T - 1, T) && ro_gap_expired(&r, 9 * T, T),
	       "progress restarts the gap clock", "timing");
	/* a lost message: the gap filled with a skip, nothing written in its place */
	result(ro_head_empty(&r), "the head is a gap", "head");
	ro_fill_gap(&r, RO_SKIP, NULL);
	ro_release(&r, emit, &o, 9 * T);
	check_seq("a skip in the gap: the rest follows, nothing for it", &o, "0,1,2,3,4,6");
	result(r.gaps == 2 && r.next == 7 && !r.waiting,
	       "the skip is counted as a gap, the head moved past it", "counters");
	ro_fini(&r);
}

/* What a QP that goes leaves behind: the completions it held, counted. */
static void pending_cqes(void)
{
	struct reorder r;

	ro_init(&r, 0);
	put(&r, 1, RO_CQE, 1);
	put(&r, 2, RO_SKIP, 1);
	put(&r, 3, RO_CQE, 1);
	result(ro_cqes(&r) == 2 && r.waiting == 3, "the completions waiting are counted, not skips",
	       "count");
	ro_fini(&r);
}

static const struct unit_case cases[] = {
	UNIT_RUN("pending_cqes", pending_cqes),
	UNIT_RUN("in_and_out_of_order", in_and_out_of_order),
	UNIT_RUN("lock_then_write", lock_then_write),
	UNIT_RUN("skips_and_full_cq", skips_and_full_cq),
	UNIT_RUN("wrap", wrap),
	UNIT_RUN("bad_records", bad_records),
	UNIT_RUN("gap_timeout", gap_timeout),
};

UNIT_FILE(reorder, NULL, NULL, cases);
