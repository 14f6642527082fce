/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The lock service, the patent's worked example of an offloaded request
 * (US 9,069,633, §1.6): a SEND whose payload asks for a named lock is
 * handled by the proxy, which grants or refuses it without the
 * application; the application sees a no-op completion in the request's
 * place. One request per SEND, ASCII:
 *
 *   LOCK <name> <owner> [wait-ms]   grant if free (or the owner's already);
 *                                   else wait up to wait-ms for it, or refuse
 *   UNLOCK <name> <owner>           release; the first waiter gets it
 *   LOCKALL <n1,n2,...> <owner>     all of them, or decline: the ones taken
 *                                   are given back (undone) and the request
 *                                   goes through the normal path, to the
 *                                   application ("too complicated")
 *
 * Anything else is declined too. Pure logic, owned by the proxy thread.
 */
#ifndef XHCAD_LOCKSVC_H
#define XHCAD_LOCKSVC_H

#include <linux/types.h>

#define LOCKSVC_MAX 256		/* named locks */
#define LOCKSVC_NAME 32		/* bytes of a name or owner, with the NUL */
#define LOCKSVC_WAITERS 16	/* per lock */

enum lock_result {
	LOCK_WAITING = 0,	/* no outcome yet: done() reports it later */
	LOCK_GRANTED = 1,
	LOCK_REFUSED = 2,
	LOCK_RELEASED = 3,
	LOCK_DECLINED = 4,	/* to the normal path; nothing of it is left done */
};

struct lock_waiter {
	__u64 cookie;		/* the caller's, given back to done() */
	__u64 deadline_ns;
	char owner[LOCKSVC_NAME];
};

struct lock_ent {
	char name[LOCKSVC_NAME];	/* "" : a free slot */
	char owner[LOCKSVC_NAME];	/* "" : not held */
	unsigned int nwait;
	struct lock_waiter wait[LOCKSVC_WAITERS];
};

struct locksvc {
	struct lock_ent e[LOCKSVC_MAX];
	__u64 granted, refused, released, declined, undone;
};

/* An outcome decided after the request: a waiter granted or timed out. */
typedef void (*lock_done_fn)(void *arg, __u64 cookie, enum lock_result r);

void locksvc_init(struct locksvc *s);
/* Handles one request; returns its outcome, or LOCK_WAITING (then done()
 * reports it, from a later handle or tick). done() may also be called for
 * other requests' waiters (an UNLOCK grants the next one). */
enum lock_result locksvc_handle(struct locksvc *s, const __u8 *msg, __u32 len, __u64 cookie,
				__u64 now_ns, lock_done_fn done, void *arg);
/* Refuses the waiters whose time is up. */
void locksvc_tick(struct locksvc *s, __u64 now_ns, lock_done_fn done, void *arg);
/* Forgets the waiting requests whose cookie has these bits (cookie & mask ==
 * value & mask): their outcome is no longer wanted. Returns how many. */
unsigned int locksvc_cancel(struct locksvc *s, __u64 value, __u64 mask);
/* Who holds name ("" for nobody), for tests and `xhca proxy locks`. */
const char *locksvc_owner(const struct locksvc *s, const char *name);

#endif /* XHCAD_LOCKSVC_H */
