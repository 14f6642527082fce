/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The engines after the first (xhcad --engines N): a thread each that runs
 * the rounds of its flow queues (f % N == its id), so its QPs' frames,
 * send queues, retransmissions and completions, on its own TX socket and
 * its share of the UMEM (xsk.c). Engine 0 is the main thread (loop.c),
 * which does everything else too: the control socket, the doorbells, the
 * CM, the proxy's service, multicast, housekeeping.
 *
 * The main thread changes nothing an engine reads while it runs: an
 * engine holds its run lock for each turn of its loop (a round, busy
 * polling, its poll set made) and lets it go only to sleep; the main
 * thread takes every engine's (engines_stop) around anything but its own
 * rounds, and wakes those that sleep when it lets them go (engines_go:
 * their poll sets may have changed, a doorbell may have rung for them).
 * An engine that finds the main thread waiting steps aside until it is
 * done, so a busy engine cannot starve it.
 *
 * An engine sleeps on its flow queues' sockets (an epoll set; a blocked
 * queue's muted) and its wake eventfd, until its next send queue timer.
 * The doorbells (send queues, full CQs) are the main thread's to read: it
 * wakes the engines.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include "log.h"
#include "xhcad_control.h"

#define BUDGET 256

struct engine_thread {
	struct xhcad *d;
	struct engine *e;
	pthread_t tid;
	pthread_mutex_t run;		/* held while it runs (see above) */
	int epfd;			/* its flow queues' sockets */
	unsigned char fq_on[XHCA_FLOWQ_MAX]; /* 0: not registered, 1: muted, 2: on */
	int started;
};

/* The main thread's wish to have the engines stopped, and where a stepped
 * aside engine waits for it to end. */
static int stop_req, quit;
static pthread_mutex_t stop_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stop_c = PTHREAD_COND_INITIALIZER;

int engine_fq_epoll(const struct xhcad *d, int epfd, unsigned char *state, __u32 f, int on)
{
	int fds[XHCA_RXQ_MAX], k = xsk_fds(d, f, fds, XHCA_RXQ_MAX), op;

	op = *state ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
	for (int j = 0; j < k; j++) {
		struct epoll_event ev = { .events = on ? EPOLLIN : 0, .data.u32 = f };

		if (epoll_ctl(epfd, op, fds[j], &ev))
			return -errno;
	}
	*state = (unsigned char)(on ? 2 : 1); /* 1: registered, muted */
	return 0;
}

static int fq_epoll(struct engine_thread *t, __u32 f, int on)
{
	return engine_fq_epoll(t->d, t->epfd, &t->fq_on[f], f, on);
}

/* Its blocked flow queues' sockets muted, the others heard. */
static void fq_mute(struct engine_thread *t)
{
	struct xhcad *d = t->d;

	for (__u32 f = t->e->id; f < d->nflowq; f += d->neng)
		if ((t->fq_on[f] == 2) != !d->fq[f].blocked && fq_epoll(t, f, !d->fq[f].blocked))
			pr_warn("flow queue %u: epoll: %s\n", f, strerror(errno));
}

/* Its flow queues blocked on a CQ with room again go on (the safety net
 * behind the doorbell, which the main thread serves). */
static void recheck_blocked(struct engine_thread *t)
{
	struct xhcad *d = t->d;

	for (__u32 f = t->e->id; f < d->nflowq; f += d->neng) {
		struct cq *cq = d->fq[f].blocked_on;

		if (d->fq[f].blocked && cq && cq_used(cq) < cq_room(cq)) {
			d->fq[f].blocked = 0;
			d->fq[f].blocked_on = NULL;
		}
	}
}

/* Steps aside while the main thread has the engines stopped. */
static void wait_go(void)
{
	if (!__atomic_load_n(&stop_req, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&stop_m);
	while (__atomic_load_n(&stop_req, __ATOMIC_ACQUIRE))
		pthread_cond_wait(&stop_c, &stop_m);
	pthread_mutex_unlock(&stop_m);
}

/* Busy polling's look aside: the main thread wants the engines stopped. */
static int stop_wanted(struct xhcad *d)
{
	(void)d;
	return -__atomic_load_n(&stop_req, __ATOMIC_RELAXED);
}

/* One turn, its run lock held: the round and what follows it; how long
 * it may sleep then (0: go on at once). */
static __u64 turn(struct engine_thread *t, __u64 *last_work)
{
	struct xhcad *d = t->d;
	struct engine *e = t->e;
	__u64 wait_ns = 0, now, sleep_ns;
	int n, work, more;

	if (e->nflush)
		qp_flush_run(d);
	more = cq_spill_run(d);
	recheck_blocked(t);
	n = round_run(d, BUDGET, &wait_ns, &work);
	now = now_ns();
	if (e->blocked_new) {
		/* the main thread hears the CQ's doorbell: its poll set */
		e->blocked_new = 0;
		engine_wake(&d->eng[0], 0);
	}
	if (work)
		*last_work = now;
	more |= n == BUDGET || e->sq.more || (xsk_lo_held(d) && round_ready(d));
	if (!more && d->poll_ns && now - *last_work < d->poll_ns && !wait_ns &&
	    round_busy_poll(d, *last_work + d->poll_ns, stop_wanted)) {
		e->polled++;
		more = 1;
	}
	if (more)
		return 0;
	/* Going to sleep: the send queues want their doorbells. Sleeping is
	 * said first: a doorbell rung after the arming below finds it said,
	 * and the main thread wakes this engine (a post before it, the
	 * arming's look at the rings sees); so with frames another thread
	 * hands over (round_handed). */
	__atomic_store_n(&e->sleeping, 1, __ATOMIC_SEQ_CST);
	if (round_handed(d) || (e->sq.list && sq_arm(d))) {
		__atomic_store_n(&e->sleeping, 0, __ATOMIC_SEQ_CST);
		return 0;
	}
	sleep_ns = 1000000000ull;
	if (wait_ns && wait_ns < sleep_ns)
		sleep_ns = wait_ns;
	if (e->sq.deadline) {
		__u64 w = e->sq.deadline > now ? e->sq.deadline - now : 0;

		if (w < sleep_ns)
			sleep_ns = w;
	}
	if (e->sq.poll && sleep_ns > SQ_POLL_NS)
		sleep_ns = SQ_POLL_NS;
	if (flowq_any_blocked(d, e->id) && sleep_ns > 100000000ull)
		sleep_ns = 100000000ull; /* (the recheck above) */
	fq_mute(t);
	return sleep_ns;
}

static void *engine_main(void *arg)
{
	struct engine_thread *t = arg;
	__u64 last_work = now_ns();
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL); /* (signals are the main thread's) */
	eng_self = t->e;
	while (!__atomic_load_n(&quit, __ATOMIC_ACQUIRE)) {
		struct pollfd p[2] = { { .fd = t->epfd, .events = POLLIN },
				       { .fd = t->e->wake_fd, .events = POLLIN } };
		struct timespec ts;
		__u64 sleep_ns, v;

		wait_go();
		pthread_mutex_lock(&t->run);
		sleep_ns = turn(t, &last_work); /* (sleeping said if it armed) */
		if (!sleep_ns)
			__atomic_store_n(&t->e->sleeping, 0, __ATOMIC_SEQ_CST);
		pthread_mutex_unlock(&t->run);
		if (!sleep_ns)
			continue;
		t->e->sleeps++;
		ts.tv_sec = (time_t)(sleep_ns / 1000000000ull);
		ts.tv_nsec = (long)(sleep_ns % 1000000000ull);
		if (ppoll(p, 2, &ts, NULL) < 0 && errno != EINTR)
			pr_warn("engine %u: ppoll: %s\n", t->e->id, strerror(errno));
		__atomic_store_n(&t->e->sleeping, 0, __ATOMIC_SEQ_CST);
		if (p[1].revents && read(t->e->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			pr_debug("engine %u: wake: %s\n", t->e->id, strerror(errno));
	}
	return NULL;
}

static struct engine_thread *threads[XHCA_ENGINES_MAX];

int engines_start(struct xhcad *d)
{
	char name[16];
	int err0 = steer_start(d); /* (before the engines' GSO sockets) */

	if (err0)
		return err0;
	for (__u32 k = 0; k < d->neng; k++) {
		d->eng[k].wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (d->eng[k].wake_fd < 0)
			return -errno;
		gso_start(d, &d->eng[k]);
	}
	for (__u32 k = 1; k < d->neng; k++) {
		struct engine_thread *t = calloc(1, sizeof(*t));
		int err = 0;

		if (!t)
			return -ENOMEM;
		threads[k] = t;
		t->d = d;
		t->e = &d->eng[k];
		pthread_mutex_init(&t->run, NULL);
		t->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (t->epfd < 0)
			return -errno;
		for (__u32 f = k; !err && f < d->nflowq; f += d->neng)
			err = fq_epoll(t, f, 1);
		if (err)
			return err;
		err = pthread_create(&t->tid, NULL, engine_main, t);
		if (err)
			return -err;
		t->started = 1;
		snprintf(name, sizeof(name), "xhcad-e%u", (__u8)k); /* (ps -L, top -H, perf) */
		pthread_setname_np(t->tid, name);
	}
	if (d->neng > 1)
		pr_info("%u engines: engine k runs flow queues k, k+%u, ...\n", d->neng, d->neng);
	return 0;
}

void engines_stop(struct xhcad *d)
{
	if (d->neng < 2 || d->stopped++)
		return; /* (nested: the outermost one lets them go) */
	__atomic_store_n(&stop_req, 1, __ATOMIC_RELEASE);
	for (__u32 k = 1; k < d->neng; k++)
		if (threads[k] && threads[k]->started)
			pthread_mutex_lock(&threads[k]->run);
}

void engines_go(struct xhcad *d)
{
	if (d->neng < 2 || --d->stopped)
		return;
	for (__u32 k = 1; k < d->neng; k++)
		if (threads[k] && threads[k]->started)
			pthread_mutex_unlock(&threads[k]->run);
	pthread_mutex_lock(&stop_m);
	__atomic_store_n(&stop_req, 0, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&stop_c);
	pthread_mutex_unlock(&stop_m);
	/* (what woke the main thread may be theirs: a doorbell, room in a
	 * CQ, a QP made; a sleeping one looks again) */
	for (__u32 k = 1; k < d->neng; k++)
		engine_wake(&d->eng[k], 0);
}

void engines_end(struct xhcad *d)
{
	__atomic_store_n(&quit, 1, __ATOMIC_RELEASE);
	for (__u32 k = 1; k < XHCA_ENGINES_MAX; k++) {
		struct engine_thread *t = threads[k];

		if (!t)
			continue;
		if (t->started) {
			engine_wake(&d->eng[k], 1);
			pthread_join(t->tid, NULL);
		}
		if (t->epfd >= 0)
			close(t->epfd);
		free(t);
		threads[k] = NULL;
	}
	for (__u32 k = 0; k < d->neng; k++) {
		if (d->eng[k].wake_fd > 0)
			close(d->eng[k].wake_fd);
		d->eng[k].wake_fd = -1;
		gso_close(&d->eng[k].gso);
	}
	steer_stop(d);
}
