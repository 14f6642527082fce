/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The lock service the proxy runs for offloaded SENDs: grant, refuse,
 * release, waiters granted in turn or refused at their deadline, LOCKALL
 * all-or-decline with what it took undone, and requests it does not
 * understand declined with nothing changed.
 */
#include <stdio.h>
#include <string.h>
#include "../../user/xhcad/locksvc.h"
#include "tests.h"

static struct locksvc S;

static void result(int ok, const char *name)
{
	unit_check(ok, "%s", name);
}

struct done_log {
	unsigned int n;
	__u64 cookie[8];
	enum lock_result r[8];
};

static void on_done(void *arg, __u64 cookie, enum lock_result r)
{
	struct done_log *l = arg;

	if (l->n < 8) {
		l->cookie[l->n] = cookie;
		l->r[l->n++] = r;
	}
}

static enum lock_result req(const char *text, __u64 cookie, __u64 now, struct done_log *l)
{
	return locksvc_handle(&S, (const __u8 *)text, (__u32)strlen(text), cookie, now, on_done, l);
}

static const __u64 MS = 1000000;

static void owner(void)
{
	struct done_log l = {};

	locksvc_init(&S);
	result(req("LOCK row7 alice", 1, 0, &l) == LOCK_GRANTED &&
		       !strcmp(locksvc_owner(&S, "row7"), "alice"),
	       "a free lock is granted");
	result(req("LOCK row7 alice", 2, 0, &l) == LOCK_GRANTED, "again to its owner");
	result(req("LOCK row7 bob", 3, 0, &l) == LOCK_REFUSED &&
		       !strcmp(locksvc_owner(&S, "row7"), "alice"),
	       "held by another, no wait: refused, the owner kept");
	result(req("UNLOCK row7 bob", 4, 0, &l) == LOCK_REFUSED &&
		       !strcmp(locksvc_owner(&S, "row7"), "alice"),
	       "only the owner releases");
}

/* waiters: granted in turn on release, refused at their deadline */
static void waiters(void)
{
	struct done_log l = {};

	locksvc_init(&S);
	if (req("LOCK row7 alice", 1, 0, &l) != LOCK_GRANTED ||
	    req("LOCK row7 bob", 3, 0, &l) != LOCK_REFUSED) {
		result(0, "row7 alice's, bob refused (before the waiters)");
		return;
	}
	result(req("LOCK row7 bob 50", 10, 0, &l) == LOCK_WAITING &&
		       req("LOCK row7 carol 10", 11, 0, &l) == LOCK_WAITING && l.n == 0,
	       "held, with a wait: the outcome comes later");
	result(req("LOCK row7 erin 50", 0x500, 0, &l) == LOCK_WAITING &&
		       locksvc_cancel(&S, 0x500, 0xf00) == 1 && locksvc_cancel(&S, 0x500, 0xf00) == 0 &&
		       locksvc_cancel(&S, 3, ~0ull) == 0 && l.n == 0,
	       "a cancelled waiter is forgotten, with no outcome (the others wait on: below)");
	locksvc_tick(&S, 10 * MS - 1, on_done, &l);
	result(l.n == 0, "nobody times out before the deadline");
	locksvc_tick(&S, 10 * MS, on_done, &l);
	result(l.n == 1 && l.cookie[0] == 11 && l.r[0] == LOCK_REFUSED,
	       "carol refused at her deadline");
	result(req("UNLOCK row7 alice", 12, 11 * MS, &l) == LOCK_RELEASED && l.n == 2 &&
		       l.cookie[1] == 10 && l.r[1] == LOCK_GRANTED &&
		       !strcmp(locksvc_owner(&S, "row7"), "bob"),
	       "release: the first waiter, bob, gets it");
	locksvc_tick(&S, 100 * MS, on_done, &l);
	result(l.n == 2, "a granted waiter does not time out");
}

/* LOCKALL: all, or decline with what it took given back */
static void lockall(void)
{
	struct done_log l = {};

	locksvc_init(&S);
	result(req("LOCKALL a,b,c dave", 20, 0, &l) == LOCK_GRANTED &&
		       !strcmp(locksvc_owner(&S, "c"), "dave"),
	       "LOCKALL of free locks: all granted");
	result(req("LOCK y erin", 21, 0, &l) == LOCK_GRANTED &&
		       req("LOCKALL x,y,z frank", 22, 0, &l) == LOCK_DECLINED &&
		       !locksvc_owner(&S, "x")[0] && !locksvc_owner(&S, "z")[0] &&
		       !strcmp(locksvc_owner(&S, "y"), "erin") && S.undone == 1,
	       "LOCKALL meeting a held lock: declined, x given back, y still erin's");
}

/* what it does not understand: declined, nothing changed (row7 bob's) */
static void malformed(void)
{
	const char *bad[] = { "", "LOCK", "LOCK a", "LOCK a b c d", "LOCK a b -1",
			      "LOCK a b 5x", "UNLOCK", "FOO a b", "LOCK \x01 b",
			      "LOCK aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa b" };
	struct done_log l = {};
	int ok = 1;

	locksvc_init(&S);
	if (req("LOCK row7 bob", 1, 0, &l) != LOCK_GRANTED) {
		result(0, "a free lock is granted (before the malformed requests)");
		return;
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok &= req(bad[i], 30, 0, &l) == LOCK_DECLINED;
	result(ok && !strcmp(locksvc_owner(&S, "row7"), "bob") &&
		       !locksvc_owner(&S, "a b")[0] && l.n == 0,
	       "malformed requests declined, nothing changed");
}

static const struct unit_case cases[] = {
	UNIT_RUN("owner", owner),
	UNIT_RUN("waiters", waiters),
	UNIT_RUN("lockall", lockall),
	UNIT_RUN("malformed", malformed),
};

UNIT_FILE(locksvc, NULL, NULL, cases);
