/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Completion queues and shared receive queues: rings in host memory
 * (ring.h) that xhcad writes and applications read. A CQ is made, restored
 * after a restart, given its application's eventfd again, shown and freed
 * here; completions go in with cq_put (or, from the receive path, straight
 * into the ring: receive.c), and cq_notify wakes the applications that sleep
 * on them once per round. A proxy CQ is written by the proxy thread only
 * (proxy_thread.c): here its completions on their way are counted
 * (claimed).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include "log.h"
#include "xhcad_queues.h"

/* the flags a CQ is made with (attr.h) */
#define CQ_FLAGS (XHCA_CQF_PROXY | XHCA_CQF_NO_TS)

/* What the CQ has been given: written, or (a proxy CQ) promised to the
 * proxy, which writes it in order. */
static __u32 cq_given(const struct cq *cq)
{
	if (cq->proxy)
		return __atomic_load_n(&cq->claimed, __ATOMIC_RELAXED);
	/* (xhca_rx writes too, under the shared lock: its index is the one) */
	return cq->x ? __atomic_load_n(&cq->x->prod, __ATOMIC_RELAXED) : cq->prod;
}

/* The CQ's lock: its xhca_cqx entry's where xhca_rx writes it too (the
 * producer index taken from there; write_locked keeps both), else its
 * own. Leaving, xhca_rx is told whether completions wait for room. */
static void cq_lock(struct cq *cq)
{
	if (!cq->x) {
		spin_lock(&cq->lock);
		return;
	}
	spin_lock((int *)&cq->x->lock);
	cq->prod = cq->x->prod;
}

static void cq_unlock(struct cq *cq)
{
	if (!cq->x) {
		spin_unlock(&cq->lock);
		return;
	}
	cq->x->spilled = __atomic_load_n(&cq->spilled, __ATOMIC_RELAXED);
	spin_unlock((int *)&cq->x->lock);
}

__u32 cq_used(struct cq *cq)
{
	return cq_given(cq) - __atomic_load_n(&cq->ring->cons, __ATOMIC_ACQUIRE);
}

__u32 cq_room(const struct cq *cq)
{
	return cq->proxy && cq->depth > PROXY_CQ_INFLIGHT ? PROXY_CQ_INFLIGHT : cq->depth;
}

/* Full, by what the application had consumed when last looked at: the
 * consumer index is read again only when the cached one says full (it
 * lives in a cache line the application writes). */
static int cq_full(struct cq *cq)
{
	__u32 cons;

	if (cq_given(cq) - cq->cons_cache < cq_room(cq))
		return 0;
	cons = __atomic_load_n(&cq->ring->cons, __ATOMIC_ACQUIRE);
	__atomic_store_n(&cq->cons_cache, cons, __ATOMIC_RELAXED); /* (room_cached) */
	return cq_given(cq) - cons >= cq_room(cq);
}

/* Whether cq has room for a completion. If not, the application is told
 * to ring the CQ's doorbell when it makes some, and looked at again, as it
 * may have made room between the two (ring.h); cq then waits for it. A CQ
 * with completions of an engine waiting for it (cq_write) has none. */
static int room_or_wait(struct cq *cq)
{
	if (cq->overrun || (!cq_full(cq) && !__atomic_load_n(&cq->spilled, __ATOMIC_RELAXED)))
		return 1; /* (an overrun CQ takes nothing: cq_put drops it) */
	__atomic_store_n(&cq->ring->waiting, 1, __ATOMIC_SEQ_CST);
	if (!cq_full(cq) && !__atomic_load_n(&cq->spilled, __ATOMIC_RELAXED)) {
		__atomic_store_n(&cq->ring->waiting, 0, __ATOMIC_RELAXED);
		return 1;
	}
	if (!cq->waiting) {
		cq->ring->stalls++;
		cq->full_since = now_ns();
	}
	cq->waiting = 1;
	return 0;
}

/* Room by what was cached, without the lock: the common case, and a cache
 * line every engine that completes into cq only reads. The running
 * engine's staged completions count as written (all of them: whichever
 * CQ they are for). Room another engine takes before this one writes is
 * what cq_write's spill is for. */
static int room_cached(struct cq *cq)
{
	__u32 given = cq_given(cq);

	return !__atomic_load_n(&cq->spilled, __ATOMIC_RELAXED) &&
	       given + eng()->nstage - __atomic_load_n(&cq->cons_cache, __ATOMIC_RELAXED) <
		       cq_room(cq);
}

int cq_room_or_wait(struct cq *cq)
{
	int r;

	if (room_cached(cq))
		return 1;
	if (eng()->nstage)
		cq_flush(); /* (then the CQ as it is) */
	cq_lock(cq);
	r = room_or_wait(cq);
	cq_unlock(cq);
	return r;
}

/* The entry written, under the CQ's lock, if there is room. */
static int write_locked(struct cq *cq, const struct xhca_cqe *c)
{
	if (cq->overrun)
		return 0;
	if (cq_full(cq))
		return -ENOSPC;
	cq->e[cq->prod & (cq->depth - 1)] = *c;
	__atomic_store_n(&cq->prod, cq->prod + 1, __ATOMIC_RELAXED); /* (room_cached) */
	if (cq->x)
		__atomic_store_n(&cq->x->prod, cq->prod, __ATOMIC_RELAXED);
	__atomic_store_n(&cq->ring->prod, cq->prod, __ATOMIC_RELEASE);
	__atomic_store_n(&cq->dirty, 1, __ATOMIC_RELAXED);
	return 0;
}

int cq_put(struct xhcad *d, struct cq *cq, const struct xhca_cqe *c)
{
	int r = -ENOSPC;

	if (eng()->nstage)
		cq_flush(); /* (the running engine's completions stay in order) */
	cq_lock(cq);
	if (room_or_wait(cq))
		r = write_locked(cq, c);
	cq_unlock(cq);
	return r;
}

struct cq_spill {
	struct cq *cq;
	struct xhca_cqe c;
};

#define SPILL_MAX 1024

static int spill(struct cq *cq, const struct xhca_cqe *c)
{
	struct engine *e = eng();

	if (!e->spill)
		e->spill = calloc(SPILL_MAX, sizeof(*e->spill));
	if (!e->spill || e->nspill == SPILL_MAX)
		return -ENOMEM;
	e->spill[e->nspill++] = (struct cq_spill){ cq, *c };
	__atomic_fetch_add(&cq->spilled, 1, __ATOMIC_RELAXED);
	return 0;
}

/* Whether the running engine has completions for cq waiting already. */
static int spilled_here(const struct cq *cq)
{
	const struct engine *e = eng();

	for (__u32 i = 0; i < e->nspill; i++)
		if (e->spill[i].cq == cq)
			return 1;
	return 0;
}

/* A completion written under cq's lock, or spilled. */
static void write_or_spill(struct cq *cq, const struct xhca_cqe *c)
{
	int r;

	r = (__atomic_load_n(&cq->spilled, __ATOMIC_RELAXED) && spilled_here(cq)) ? -ENOSPC
										 : write_locked(cq, c);
	if (r && spill(cq, c))
		pr_warn("cq %u: a completion lost: %u waiting for room already\n", cq->id,
			SPILL_MAX);
}

#define STAGE_MAX 128

void cq_write(struct cq *cq, const struct xhca_cqe *c)
{
	struct engine *e = eng();

	/* outside a round (nothing staged then), or no memory: now */
	if (!e->in_round || (!e->stage && !(e->stage = calloc(STAGE_MAX, sizeof(*e->stage))))) {
		cq_lock(cq);
		write_or_spill(cq, c);
		cq_unlock(cq);
		return;
	}
	if (e->nstage == STAGE_MAX)
		cq_flush();
	e->stage[e->nstage++] = (struct cq_spill){ cq, *c };
}

void cq_flush(void)
{
	struct engine *e = eng();

	for (__u32 i = 0; i < e->nstage;) {
		struct cq *cq = e->stage[i].cq;

		/* one lock for each run of the same CQ's (their order kept) */
		cq_lock(cq);
		for (; i < e->nstage && e->stage[i].cq == cq; i++)
			write_or_spill(cq, &e->stage[i].c);
		cq_unlock(cq);
	}
	e->nstage = 0;
}

int cq_spill_run(struct xhcad *d)
{
	struct engine *e = eng();
	__u32 kept = 0;

	for (__u32 i = 0; i < e->nspill; i++) {
		struct cq_spill *sp = &e->spill[i];
		int r = -ENOSPC;

		cq_lock(sp->cq);
		/* (in order: nothing of a CQ passes an earlier one of it) */
		for (__u32 j = 0; j < kept; j++)
			if (e->spill[j].cq == sp->cq)
				goto keep;
		r = write_locked(sp->cq, &sp->c);
keep:
		if (!r)
			__atomic_fetch_sub(&sp->cq->spilled, 1, __ATOMIC_RELAXED);
		cq_unlock(sp->cq);
		if (r)
			e->spill[kept++] = *sp;
	}
	e->nspill = kept;
	return kept > 0;
}

/* Signals every CQ that got completions and whose application sleeps on
 * it: once per batch, not per completion (one fence, one write at most). */
void cq_notify(struct xhcad *d)
{
	cq_flush();
	/* The application may be going to sleep: see ring.h. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (struct cq *cq = d->app.cqs; cq; cq = cq->next) {
		__u64 one = 1;

		if (!__atomic_load_n(&cq->dirty, __ATOMIC_RELAXED) ||
		    !__atomic_exchange_n(&cq->dirty, 0, __ATOMIC_RELAXED))
			continue;
		/* (no eventfd: a session waiting to be resumed; it looks
		 * at the ring itself when it comes back) */
		if (cq->efd >= 0 && __atomic_load_n(&cq->ring->armed, __ATOMIC_RELAXED) &&
		    __atomic_exchange_n(&cq->ring->armed, 0, __ATOMIC_SEQ_CST) &&
		    write(cq->efd, &one, sizeof(one)) < 0)
			pr_debug("cq %u: eventfd: %s\n", cq->id, strerror(errno));
	}
}

/* ---- CQs xhca_rx writes too (--recv-fast): their xhca_cqx entries ------- */

int cqx_init(struct xhcad *d)
{
	void *m = mmap(NULL, XHCA_CQX_MAX * sizeof(struct xhca_cqx), PROT_READ | PROT_WRITE,
		       MAP_SHARED, d->m.cqx, 0);

	if (m == MAP_FAILED)
		return -errno;
	d->app.cqx = m;
	/* an earlier xhcad's entries go (the CQs it kept are attached again
	 * as they are restored); xhca_rx may be in one: its lock */
	for (__u32 i = 0; i < XHCA_CQX_MAX; i++) {
		struct xhca_cqx *x = &d->app.cqx[i];

		if (!__atomic_load_n(&x->gen, __ATOMIC_RELAXED))
			continue;
		spin_lock((int *)&x->lock);
		x->gen = 0;
		spin_unlock((int *)&x->lock);
	}
	return 0;
}

/* cq's entry, when xhca_rx may write its completions (--recv-fast): a free
 * slot (prefer, if it is free: the one its QPs name) taken, filled and
 * marked in use under its lock. Without one (all XHCA_CQX_MAX taken) its
 * QPs' SENDs go through xhcad. */
static void cqx_attach(struct xhcad *d, struct cq *cq, __u32 prefer)
{
	const struct hm_alloc *a = hm_find(d, cq->alloc);

	if (!d->recv_fast || cq->proxy || cq->overrun || !d->app.cqx || !a || !a->contiguous)
		return;
	for (__u32 n = 0; n <= XHCA_CQX_MAX; n++) {
		__u32 i = n ? n - 1 : prefer;
		struct xhca_cqx *x;

		if (i >= XHCA_CQX_MAX)
			continue;
		x = &d->app.cqx[i];

		if (__atomic_load_n(&x->gen, __ATOMIC_RELAXED))
			continue;
		spin_lock((int *)&x->lock);
		x->prod = cq->prod;
		x->depth = cq->depth;
		x->cons = x->prod - x->depth; /* (no room known: xhca_rx reads the ring's) */
		x->flags = (cq->flags & XHCA_CQF_NO_TS) ? XHCA_CQXF_NO_TS : 0;
		x->ring = hm_base(a, 0);
		x->spilled = __atomic_load_n(&cq->spilled, __ATOMIC_RELAXED);
		x->gen = cq->id ? cq->id : 1;
		cq->x = x;
		spin_unlock((int *)&x->lock);
		return;
	}
}

/* xhca_rx writes no more of cq's completions: its index is xhcad's again.
 * Returns the slot it had (XHCA_CQX_MAX: none). */
static __u32 cqx_detach(struct xhcad *d, struct cq *cq)
{
	struct xhca_cqx *x = cq->x;

	if (!x)
		return XHCA_CQX_MAX;
	spin_lock((int *)&x->lock);
	cq->prod = x->prod;
	x->gen = 0;
	cq->x = NULL;
	spin_unlock((int *)&x->lock);
	return (__u32)(x - d->app.cqx);
}

__u32 cq_slot(const struct xhcad *d, const struct cq *cq)
{
	return cq->x ? (__u32)(cq->x - d->app.cqx) : XHCA_CQX_MAX;
}

void cq_wake_slot(struct xhcad *d, __u32 slot)
{
	for (struct cq *cq = d->app.cqs; slot < XHCA_CQX_MAX && cq; cq = cq->next)
		if (cq->x == &d->app.cqx[slot])
			__atomic_store_n(&cq->dirty, 1, __ATOMIC_RELAXED);
}

void cq_wake_missed(struct xhcad *d)
{
	for (struct cq *cq = d->app.cqs; cq; cq = cq->next)
		if (cq->x && cq->efd >= 0 && __atomic_load_n(&cq->ring->armed, __ATOMIC_RELAXED) &&
		    __atomic_load_n(&cq->ring->prod, __ATOMIC_ACQUIRE) !=
			    __atomic_load_n(&cq->ring->cons, __ATOMIC_RELAXED))
			__atomic_store_n(&cq->dirty, 1, __ATOMIC_RELAXED);
}

struct cq *cq_find(struct xhcad *d, __u32 id)
{
	for (struct cq *c = d->app.cqs; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

int cq_create(struct xhcad *d, __u32 owner, struct xhca_cq_attr *a, int efd, char *err,
	      size_t errlen)
{
	struct hm_alloc *al;
	struct cq *cq;
	__u64 len;
	int rc;

	if (!owner)
		efd = -1; /* the CLI's: nobody sleeps on it (xhca cq poll) */
	if (!a->depth || a->depth > XHCA_CQ_DEPTH_MAX || (a->depth & (a->depth - 1))) {
		snprintf(err, errlen, "cq create: depth %u is not a power of 2 in 1..%u", a->depth,
			 XHCA_CQ_DEPTH_MAX);
		return -EINVAL;
	}
	if (efd < 0 && owner) {
		snprintf(err, errlen, "cq create: no eventfd came with the request");
		return -EINVAL;
	}
	if (a->flags & ~CQ_FLAGS) {
		snprintf(err, errlen, "cq create: unknown flags 0x%x; XHCA_CQF_PROXY and "
			 "XHCA_CQF_NO_TS are the ones", a->flags & ~CQ_FLAGS);
		return -EINVAL;
	}
	if (owner && d->app.lim_cqs) {
		__u32 n = 0;

		for (struct cq *c = d->app.cqs; c; c = c->next)
			n += c->owner == owner;
		if (n >= d->app.lim_cqs)
			return errf(err, errlen, -ENOMEM, "cq create: this session has %u CQs, its "
				    "limit (xhcad --session-cqs); destroy one first", n);
	}
	len = xhca_ring_bytes(a->depth, sizeof(struct xhca_cqe));
	/* Rings are contiguous: the application maps them in one piece. */
	al = hm_alloc(d, len, owner, XHCA_ALLOC_CONTIG);
	if (!al) {
		snprintf(err, errlen, "cq create: no room for %llu bytes in host memory (%llu of "
			 "%llu in use); free buffers or start xhcad with a larger --hostmem-mb",
			 (unsigned long long)len, (unsigned long long)d->hm.used,
			 (unsigned long long)d->hm.bytes);
		return -ENOMEM;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		mem_free(d, al->id, owner);
		return -ENOMEM;
	}
	cq->dbfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (cq->dbfd < 0) {
		rc = -errno;
		mem_free(d, al->id, owner);
		free(cq);
		return rc;
	}
	cq->id = ++d->app.next_cq;
	cq->owner = owner;
	cq->depth = a->depth;
	cq->alloc = al->id;
	cq->ring = hm_contig_ptr(d, al);
	al->ring = 1;
	cq->e = (struct xhca_cqe *)(cq->ring + 1);
	cq->ring->depth = a->depth;
	cq->proxy = !!(a->flags & XHCA_CQF_PROXY);
	cq->flags = a->flags;
	cq->prod = cq->claimed = 0; /* (a new ring: zeroed) */
	cq->efd = efd;
	cq->next = d->app.cqs;
	d->app.cqs = cq;
	cqx_attach(d, cq, XHCA_CQX_MAX);
	a->cq = cq->id;
	a->ring_off = hm_base(al, 0);
	a->ring_len = len;
	return 0;
}

/* The list l of *n completions without cq's. */
static void list_forget(struct cq_spill *l, __u32 *n, const struct cq *cq)
{
	__u32 kept = 0;

	for (__u32 i = 0; i < *n; i++)
		if (l[i].cq != cq)
			l[kept++] = l[i];
	*n = kept;
}

/* A CQ that goes: no engine's completions wait for it any more, spilled
 * or staged (the engines stopped: the control thread's). */
static void spill_forget(struct xhcad *d, const struct cq *cq)
{
	for (__u32 k = 0; k < d->neng; k++) {
		list_forget(d->eng[k].spill, &d->eng[k].nspill, cq);
		list_forget(d->eng[k].stage, &d->eng[k].nstage, cq);
	}
}

static void cq_free(struct xhcad *d, struct cq *cq)
{
	struct cq **pp;

	cqx_detach(d, cq);
	spill_forget(d, cq);
	flowq_unblock(d, cq);
	for (pp = &d->app.cqs; *pp; pp = &(*pp)->next) {
		if (*pp == cq) {
			*pp = cq->next;
			break;
		}
	}
	__atomic_store_n(&cq->ring->dead, 1, __ATOMIC_RELEASE);
	mem_free(d, cq->alloc, cq->owner);
	if (cq->efd >= 0)
		close(cq->efd);
	close(cq->dbfd);
	free(cq);
}

struct srq *srq_find(struct xhcad *d, __u32 id)
{
	for (struct srq *q = d->app.srqs; q; q = q->next)
		if (q->id == id)
			return q;
	return NULL;
}

int srq_create(struct xhcad *d, __u32 owner, struct xhca_srq_attr *a, char *err, size_t errlen)
{
	struct hm_alloc *al;
	struct srq *q;
	__u64 len;

	if (!owner)
		return errf(err, errlen, -EINVAL, "srq create: shared receive queues are an "
			    "application's (libxhca), not the CLI's");
	if (!a->depth || a->depth > XHCA_RING_DEPTH_MAX || (a->depth & (a->depth - 1)))
		return errf(err, errlen, -EINVAL, "srq create: depth %u is not a power of 2 in "
			    "1..%u", a->depth, XHCA_RING_DEPTH_MAX);
	len = xhca_ring_bytes(a->depth, sizeof(struct xhca_rwqe));
	al = hm_alloc(d, len, owner, XHCA_ALLOC_CONTIG);
	if (!al)
		return errf(err, errlen, -ENOMEM, "srq create: no room for %llu bytes in host "
			    "memory; free buffers or start xhcad with a larger --hostmem-mb",
			    (unsigned long long)len);
	q = calloc(1, sizeof(*q));
	if (!q) {
		mem_free(d, al->id, owner);
		return -ENOMEM;
	}
	q->id = ++d->app.next_srq;
	q->owner = owner;
	q->depth = a->depth;
	q->alloc = al->id;
	q->ring = hm_contig_ptr(d, al);
	al->ring = 1;
	q->e = (struct xhca_rwqe *)(q->ring + 1);
	q->ring->depth = a->depth;
	q->next = d->app.srqs;
	d->app.srqs = q;
	a->srq = q->id;
	a->alloc = al->id;
	a->ring_off = hm_base(al, 0);
	return 0;
}

static void srq_free(struct xhcad *d, struct srq *q)
{
	struct srq **pp;

	for (pp = &d->app.srqs; *pp; pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	__atomic_store_n(&q->ring->dead, 1, __ATOMIC_RELEASE);
	mem_free(d, q->alloc, q->owner);
	free(q);
}

int srq_destroy(struct xhcad *d, __u32 id, __u32 owner, char *err, size_t errlen)
{
	struct srq *q = srq_find(d, id);

	if (!q || q->owner != owner)
		return errf(err, errlen, -ENOENT, "srq destroy: no shared receive queue %u in "
			    "this session", id);
	if (q->nqps)
		return errf(err, errlen, -EBUSY, "srq destroy: SRQ %u still feeds %u QPs; "
			    "destroy them first", id, q->nqps);
	srq_free(d, q);
	return 0;
}

int cq_restore(struct xhcad *d, __u32 id, __u32 owner, __u32 depth, __u32 alloc, __u32 flags)
{
	struct hm_alloc *al = hm_find(d, alloc);
	struct cq *cq;

	if (!al || al->owner != owner || !al->contiguous || !depth || (depth & (depth - 1)) ||
	    al->len < xhca_ring_bytes(depth, sizeof(struct xhca_cqe)))
		return -EINVAL;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -ENOMEM;
	cq->dbfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (cq->dbfd < 0) {
		free(cq);
		return -errno;
	}
	cq->id = id;
	cq->owner = owner;
	cq->depth = depth;
	cq->alloc = alloc;
	cq->ring = hm_contig_ptr(d, al);
	al->ring = 1;
	cq->e = (struct xhca_cqe *)(cq->ring + 1);
	cq->efd = -1; /* until the application resumes and sends it again */
	cq->cons_cache = cq->ring->cons;
	cq->proxy = !!(flags & XHCA_CQF_PROXY);
	cq->flags = flags & CQ_FLAGS;
	/* what an earlier proxy had not written is gone; the ring's index is
	 * taken once, as it was (the application's own ring) */
	cq->prod = cq->claimed = cq->ring->prod;
	cq->next = d->app.cqs;
	d->app.cqs = cq;
	cqx_attach(d, cq, XHCA_CQX_MAX);
	return 0;
}

int cq_rebind(struct xhcad *d, __u32 id, __u32 owner, int efd, char *err, size_t errlen)
{
	struct cq *cq = cq_find(d, id);

	if (!cq || cq->owner != owner) {
		snprintf(err, errlen, "cq rebind: no CQ %u in this session", id);
		return -ENOENT;
	}
	if (efd < 0) {
		snprintf(err, errlen, "cq rebind: no eventfd came with the request");
		return -EINVAL;
	}
	{
		int old = cq->efd;

		cq->efd = efd;
		/* the proxy writes a proxy CQ's: it must be done with the old
		 * one before it is closed (and its number reused) */
		if (cq->proxy)
			proxy_sync(d);
		if (old >= 0)
			close(old);
	}
	return 0;
}

int cq_resize(struct xhcad *d, __u32 owner, struct xhca_cq_attr *a, __u32 pending, char *err,
	      size_t errlen)
{
	struct cq *cq = cq_find(d, a->cq);
	struct xhca_ring_ctl *old;
	struct hm_alloc *al;
	__u32 prod, cons, used, omask, nmask, oalloc, slot;
	__u64 len;

	if (!cq || cq->owner != owner || !owner)
		return errf(err, errlen, -ENOENT, "cq resize: no CQ %u in this session", a->cq);
	if (cq->proxy)
		return errf(err, errlen, -EOPNOTSUPP, "cq resize: CQ %u is a proxy CQ, which the "
			    "proxy thread writes: it keeps its size", a->cq);
	if (!a->depth || a->depth > XHCA_CQ_DEPTH_MAX || (a->depth & (a->depth - 1)))
		return errf(err, errlen, -EINVAL, "cq resize: depth %u is not a power of 2 in "
			    "1..%u", a->depth, XHCA_CQ_DEPTH_MAX);
	slot = cqx_detach(d, cq); /* (attached again, on its new ring or as it was) */
	prod = cq->prod;
	cons = __atomic_load_n(&cq->ring->cons, __ATOMIC_ACQUIRE);
	used = prod - cons;
	if (used > cq->depth)
		used = cq->depth; /* (a consumer index the application broke) */
	/* (a request posted is as good as completed to the application:
	 * its completion counts; receives to come wait for room, as in any
	 * full CQ) */
	if (a->depth < used + pending) {
		cqx_attach(d, cq, slot);
		return errf(err, errlen, -EINVAL, "cq resize: CQ %u holds %u completions and %u "
			    "more are on their way; %u entries cannot take them", a->cq, used,
			    pending, a->depth);
	}
	len = xhca_ring_bytes(a->depth, sizeof(struct xhca_cqe));
	al = hm_alloc(d, len, owner, XHCA_ALLOC_CONTIG);
	if (!al) {
		cqx_attach(d, cq, slot);
		return errf(err, errlen, -ENOMEM, "cq resize: no room for %llu bytes in host "
			    "memory", (unsigned long long)len);
	}
	/* the completions where the same indexes fall in the new ring, the
	 * counters as they were: the application goes on from its consumer
	 * index */
	old = cq->ring;
	omask = cq->depth - 1;
	nmask = a->depth - 1;
	oalloc = cq->alloc;
	cq->ring = hm_contig_ptr(d, al);
	al->ring = 1;
	memcpy(cq->ring, old, sizeof(*old));
	cq->ring->depth = a->depth;
	cq->e = (struct xhca_cqe *)(cq->ring + 1);
	for (__u32 i = cons; i != cons + used; i++)
		cq->e[i & nmask] = ((const struct xhca_cqe *)(old + 1))[i & omask];
	cq->depth = a->depth;
	cq->alloc = al->id;
	mem_free(d, oalloc, owner);
	cqx_attach(d, cq, slot);
	flowq_unblock(d, cq); /* (room, perhaps, for what waited) */
	a->ring_off = hm_base(al, 0);
	a->ring_len = len;
	return 0;
}

int cq_destroy(struct xhcad *d, __u32 id, __u32 owner, char *err, size_t errlen)
{
	struct cq *cq = cq_find(d, id);

	if (!cq || cq->owner != owner) {
		snprintf(err, errlen, owner ? "cq destroy: no CQ %u in this session"
					    : "cq destroy: no CQ %u of the CLI's; list them with: xhca "
					      "cq show", id);
		return -ENOENT;
	}
	if (cq->nqps) {
		snprintf(err, errlen, "cq destroy: CQ %u still takes the completions of %u queues "
			 "of QPs; destroy the QPs first", id, cq->nqps);
		return -EBUSY;
	}
	cq_free(d, cq);
	return 0;
}

int cq_show(struct xhcad *d, __u32 owner, struct xhca_cq_info **out, __u32 *n)
{
	__u32 k = 0, cnt = 0;
	struct xhca_cq_info *v;

	for (struct cq *cq = d->app.cqs; cq; cq = cq->next)
		cnt++;
	v = calloc(cnt ? cnt : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (struct cq *cq = d->app.cqs; cq; cq = cq->next) {
		if (owner && cq->owner != owner)
			continue; /* a session sees its own CQs only */
		v[k].cq = cq->id;
		v[k].owner = cq->owner;
		v[k].depth = cq->depth;
		v[k].flags = cq->flags;
		v[k].used = cq_used(cq);
		v[k].nqps = cq->nqps;
		v[k++].stalls = cq->ring->stalls;
	}
	*out = v;
	*n = k;
	return 0;
}

/* Every CQ and SRQ of a session that ended (its QPs are gone already). */
__u32 cq_free_owner(struct xhcad *d, __u32 owner)
{
	__u32 n = 0;

	for (struct cq *c = d->app.cqs, *next; c; c = next) {
		next = c->next;
		if (c->owner == owner) {
			cq_free(d, c);
			n++;
		}
	}
	for (struct srq *q = d->app.srqs, *next; q; q = next) {
		next = q->next;
		if (q->owner == owner)
			srq_free(d, q);
	}
	return n;
}

/* At exit: the memory of every CQ and SRQ, their rings left as they are
 * (gone with the process, or kept with --keep for the next xhcad), and
 * the engines' lists of staged and spilled completions (and of the frames
 * whose completions were staged, receive.c's). */
void cq_fini(struct xhcad *d)
{
	for (__u32 k = 0; k < XHCA_ENGINES_MAX; k++) {
		struct engine *e = &d->eng[k];

		free(e->stage); /* (empty: a round writes what it staged) */
		free(e->spill);
		free(e->rf_done); /* (receive.c's: empty at a round's end too) */
		free(e->owe_qps);
		e->stage = e->spill = NULL;
		e->rf_done = NULL;
		e->owe_qps = NULL;
		e->nstage = e->nspill = e->nrf_done = e->nowe_qps = 0;
	}
	while (d->app.cqs) {
		struct cq *cq = d->app.cqs;

		d->app.cqs = cq->next;
		if (cq->efd >= 0)
			close(cq->efd);
		close(cq->dbfd);
		free(cq);
	}
	while (d->app.srqs) {
		struct srq *q = d->app.srqs;

		d->app.srqs = q->next;
		free(q);
	}
}
