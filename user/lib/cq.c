/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libxhca's completion queues (xhca_int.h): created by xhcad, their rings
 * in host memory polled here, waited on through an eventfd.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include "xhca_int.h"

struct xhca_cq *xhca_cq_create(struct xhca_ctx *ctx, unsigned int depth)
{
	return xhca_cq_create_ex(ctx, depth, 0);
}

struct xhca_cq *xhca_cq_create_ex(struct xhca_ctx *ctx, unsigned int depth, unsigned int flags)
{
	struct xhca_cq_attr a = { .depth = depth, .flags = flags };
	struct xhca_cq *cq;
	int err, dbfd = -1;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	cq->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (cq->efd < 0) {
		err = -errno;
		goto fail;
	}
	err = xl_call(ctx, XHCA_CTL_CQ_CREATE, &a, sizeof(a), cq->efd, &a, sizeof(a), &dbfd);
	if (err)
		goto fail;
	cq->ring = dbfd < 0 ? NULL : xl_map_ring(ctx, a.ring_off, a.ring_len);
	if (!cq->ring) {
		err = xl_fail(ctx, -EPROTO, "cq create: cannot map the ring");
		xl_call(ctx, XHCA_CTL_CQ_DESTROY, &a.cq, sizeof(a.cq), -1, NULL, 0, NULL);
		goto fail;
	}
	cq->ring_len = pages_of(a.ring_len);
	cq->ctx = ctx;
	cq->id = a.cq;
	cq->depth = a.depth;
	cq->e = (struct xhca_cqe *)(cq->ring + 1);
	cq->dbfd = dbfd;
	cq->next = ctx->cqs;
	ctx->cqs = cq;
	return cq;
fail:
	if (cq->efd >= 0)
		close(cq->efd);
	if (dbfd >= 0)
		close(dbfd);
	free(cq);
	errno = -err;
	return NULL;
}

int xhca_cq_resize(struct xhca_cq *cq, unsigned int depth)
{
	struct xhca_cq_attr a = { .cq = cq->id, .depth = depth };
	struct xhca_ring_ctl *ring;
	int err;

	err = xl_call(cq->ctx, XHCA_CTL_CQ_RESIZE, &a, sizeof(a), -1, &a, sizeof(a), NULL);
	if (err)
		return err;
	/* xhcad writes the new ring from now on; the old one is freed */
	ring = xl_map_ring(cq->ctx, a.ring_off, a.ring_len);
	if (!ring)
		return xl_fail(cq->ctx, -EPROTO, "cq resize: cannot map the new ring");
	sys_munmap(cq->ring, cq->ring_len);
	cq->ring = ring;
	cq->ring_len = pages_of(a.ring_len);
	cq->depth = a.depth;
	cq->e = (struct xhca_cqe *)(ring + 1);
	return 0;
}

int xhca_cq_destroy(struct xhca_cq *cq)
{
	struct xhca_ctx *ctx = cq->ctx;
	struct xhca_cq **pp;
	int err;

	err = xl_call(ctx, XHCA_CTL_CQ_DESTROY, &cq->id, sizeof(cq->id), -1, NULL, 0, NULL);
	if (err)
		return err;
	for (pp = &ctx->cqs; *pp; pp = &(*pp)->next) {
		if (*pp == cq) {
			*pp = cq->next;
			break;
		}
	}
	close(cq->efd);
	close(cq->dbfd);
	sys_munmap(cq->ring, cq->ring_len);
	free(cq);
	return 0;
}

/*
 * A program that spins on its CQ (perftest, MPI, xhca-rc's bench) holds a
 * CPU that xhcad, which makes the completions, may be waiting for: on a
 * host with fewer free cores than busy threads, xhcad woken next to the
 * spinning program runs only once the scheduler preempts it, milliseconds
 * later. So every POLL_YIELD empty polls of a CQ in a row the program gives
 * its CPU away for a moment (sched_yield: it goes on at once when nothing
 * else waits). XHCA_POLL_YIELD=N sets N (0: never); read once.
 *
 * And once at the first empty poll after a post that found its send queue
 * idle (post.c: the session's handover): a program waiting for the answer
 * to what it just sent has nothing to do until xhcad has sent it, and an
 * xhcad that shares its CPU would otherwise wait out the POLL_YIELD polls
 * (ib_send_lat on 2 CPUs: 0.5-0.6 us of a 3.4-4 us trip, docs/bench.md). A
 * stream of posts keeps its queue busy and yields no more than before.
 */
#define POLL_YIELD 64

static unsigned int poll_yield(void)
{
	static unsigned int every = ~0u;

	if (every == ~0u) {
		const char *e = getenv("XHCA_POLL_YIELD");

		every = e && *e ? (unsigned int)strtoul(e, NULL, 10) : POLL_YIELD;
	}
	return every;
}

/* Whether a post found its send queue idle since the last such yield. */
static int handover(struct xhca_ctx *c)
{
	return __atomic_load_n(&c->handover, __ATOMIC_RELAXED) &&
	       __atomic_exchange_n(&c->handover, 0, __ATOMIC_RELAXED);
}

/* xhcad's doorbell for room in the CQ: 0, or -errno, and owed (the next
 * poll or clean rings it first). */
static int cq_ring_db(struct xhca_cq *cq)
{
	__u64 one = 1;

	if (write(cq->dbfd, &one, sizeof(one)) < 0 && errno != EAGAIN) {
		cq->db_owed = 1;
		return -errno;
	}
	cq->db_owed = 0;
	return 0;
}

/* The consumer index moves to cons; xhcad may be waiting for exactly this
 * room (ring.h): its doorbell. The completions taken are the caller's
 * whatever the doorbell does: one that could not be rung is owed, and the
 * next call's error (cq_owed). */
static void cq_consumed(struct xhca_cq *cq, __u32 cons)
{
	__atomic_store_n(&cq->ring->cons, cons, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (cq->db_owed || (__atomic_load_n(&cq->ring->waiting, __ATOMIC_RELAXED) &&
			    __atomic_exchange_n(&cq->ring->waiting, 0, __ATOMIC_SEQ_CST)))
		cq_ring_db(cq);
}

/* A doorbell owed rung before anything is taken: 0, or its -errno. */
static int cq_owed(struct xhca_cq *cq)
{
	return cq->db_owed ? cq_ring_db(cq) : 0;
}

int xhca_poll_cq(struct xhca_cq *cq, struct xhca_wc *wc, int n)
{
	__u32 cons = cq->ring->cons;
	__u32 prod = __atomic_load_n(&cq->ring->prod, __ATOMIC_ACQUIRE);
	unsigned int every;
	int k = 0, r = cq_owed(cq);

	if (r)
		return r;
	while (k < n && cons != prod)
		wc[k++] = cq->e[cons++ & (cq->depth - 1)];
	if (!k) {
		every = poll_yield();
		if (n > 0 && every && (!(++cq->empty % every) || handover(cq->ctx)))
			sched_yield();
		return 0;
	}
	cq->empty = 0;
	cq_consumed(cq, cons);
	return k;
}

int xhca_cq_clean(struct xhca_cq *cq, uint32_t qpn)
{
	__u32 cons = cq->ring->cons;
	__u32 prod = __atomic_load_n(&cq->ring->prod, __ATOMIC_ACQUIRE), gone = 0;
	int r = cq_owed(cq);

	if (r)
		return r;
	/* newest first, the ones kept moved up over the ones taken out;
	 * xhcad writes past prod only, so nothing here moves under it */
	for (__u32 i = prod; i-- != cons;) {
		const struct xhca_cqe *c = &cq->e[i & (cq->depth - 1)];

		if (c->qp_num == qpn)
			gone++;
		else if (gone)
			cq->e[(i + gone) & (cq->depth - 1)] = *c;
	}
	if (!gone)
		return 0;
	cq_consumed(cq, cons + gone);
	return (int)gone;
}

static int cq_ready(const struct xhca_cq *cq)
{
	return __atomic_load_n(&cq->ring->prod, __ATOMIC_ACQUIRE) != cq->ring->cons;
}

int xhca_cq_fd(const struct xhca_cq *cq)
{
	return cq->efd;
}

int xhca_cq_arm(struct xhca_cq *cq)
{
	__atomic_store_n(&cq->ring->armed, 1, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return cq_ready(cq);
}

int xhca_cq_wait(struct xhca_cq *cq, int timeout_ms)
{
	struct pollfd p[2] = { { .fd = cq->efd, .events = POLLIN },
			       { .fd = cq->ctx->fd, .events = POLLIN } };
	__u64 until = now_ms() + (__u64)(timeout_ms < 0 ? 0 : timeout_ms);
	__u64 v;
	int n;

	for (;;) {
		int left = timeout_ms < 0 ? -1 : (int)(until > now_ms() ? until - now_ms() : 0);

		if (cq_ready(cq) || xhca_cq_arm(cq))
			return 1;
		if (__atomic_load_n(&cq->ring->dead, __ATOMIC_ACQUIRE))
			return -ESHUTDOWN;
		p[1].fd = cq->ctx->fd;
		n = poll(p, 2, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return cq_ready(cq);
		if (p[0].revents && read(cq->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			return -errno;
		if (p[1].revents) {
			/* xhcad never speaks first: this is its end (a restart) */
			int err = xl_resume(cq->ctx);

			if (err)
				return err;
		}
		/* a doorbell rung for completions taken meanwhile (polled
		 * before this wait) leaves nothing to take: wait on, for the
		 * rest of the time, not report a timeout that was not one */
		if (p[0].revents && cq_ready(cq))
			return 1;
	}
}

uint64_t xhca_cq_stalls(const struct xhca_cq *cq)
{
	return cq->ring->stalls;
}

int xhca_cq_overrun(const struct xhca_cq *cq)
{
	return __atomic_load_n(&cq->ring->qp_err, __ATOMIC_ACQUIRE) == XHCA_CQ_OVERRUN;
}
