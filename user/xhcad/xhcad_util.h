/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhcad's util layer, the lowest: clocks, errors, the running engine, small
 * helpers every layer uses. A file of this layer includes this header; it
 * declares the layers below too, never those above (docs/design.md: xhcad
 * in layers).
 */
#ifndef XHCAD_UTIL_H
#define XHCAD_UTIL_H

#include <signal.h>
#include "xhcad_types.h"

/* Big-endian fields of a frame. */
static inline __u32 be32(const __u8 *p)
{
	return (__u32)p[0] << 24 | (__u32)p[1] << 16 | (__u32)p[2] << 8 | p[3];
}

static inline __u64 be64(const __u8 *p)
{
	return (__u64)be32(p) << 32 | be32(p + 4);
}

/* The running thread's engine. */
static inline struct engine *eng(void)
{
	return eng_self;
}

/* The engine that owns flow queue f (the replication and proxy queues:
 * engine 0), and so its QPs. */
static inline __u32 fq_engine(const struct xhcad *d, __u32 f)
{
	return f < d->nflowq && d->neng > 1 ? f % d->neng : 0;
}

static inline struct engine *qp_eng(struct xhcad *d, const struct qp_host *qh)
{
	return &d->eng[fq_engine(d, qh->flowq)];
}

/* A lock held for a few instructions by threads that never sleep under
 * it (a CQ's, an SRQ's): zero is unlocked. A waiter yields its CPU after
 * a while: with more busy threads than CPUs the holder may be the one
 * waiting for it. */
static inline void spin_lock(int *l)
{
	for (unsigned int n = 1; __atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE); n++)
		while (__atomic_load_n(l, __ATOMIC_RELAXED)) {
			__builtin_ia32_pause();
			if (!(n++ & 63))
				sched_yield();
		}
}

static inline void spin_unlock(int *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/* One bit per index (QP slots, host memory pages). */
static inline int bm_test(const uint64_t *bm, __u32 i)
{
	return (bm[i / 64] >> (i % 64)) & 1;
}

static inline void bm_set(uint64_t *bm, __u32 i, int v)
{
	if (v)
		bm[i / 64] |= 1ull << (i % 64);
	else
		bm[i / 64] &= ~(1ull << (i % 64));
}

/* util.c: the lowest layer */
/* An error for the control reply: the message into err, rc back. */
int errf(char *err, size_t len, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
__u64 now_ms(void);
/* Wakes engine e if it sleeps (always: even if not), through its eventfd. */
void engine_wake(struct engine *e, int always);
__u64 now_ns(void);	/* CLOCK_MONOTONIC, as xhca_rx's timestamps */
/* The start time of a process (field 22 of /proc/PID/stat), 0 if gone. */
__u64 proc_start_time(__u32 pid);
/* A signal's number once one came: the loops end (main.c sets it). */
extern volatile sig_atomic_t xhcad_stop;

#endif
