/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhcad's one thread: it waits on the control socket and its clients, the
 * flow queues' AF_XDP sockets and the doorbells of full CQs, then serves what
 * is ready. A flow queue that cannot move (blocked on a CQ, or the bus model
 * out of tokens) leaves the poll set, so the loop sleeps instead of spinning
 * on a ring it may not drain.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "ctl_server.h"
#include "log.h"
#include "xhcad.h"

#define MAX_CLIENTS 64
#define BUDGET 256		/* frames between two looks at the control socket */
#define HOUSEKEEP_NS 100000000ull

volatile sig_atomic_t xhcad_stop; /* a signal: the loop ends (main.c) */

struct pollset {
	struct pollfd *p;
	int n, cap;
};

static int ps_add(struct pollset *ps, int fd)
{
	if (ps->n == ps->cap) {
		int cap = ps->cap ? ps->cap * 2 : 64;
		struct pollfd *p = realloc(ps->p, (size_t)cap * sizeof(*p));

		if (!p)
			return -1;
		ps->p = p;
		ps->cap = cap;
	}
	ps->p[ps->n].fd = fd;
	ps->p[ps->n].events = POLLIN;
	ps->p[ps->n].revents = 0;
	return ps->n++;
}

static void client_gone(struct xhcad *d, struct client *cl, int *ncl, int i)
{
	if (cl[i].session)
		session_close(d, cl[i].session);
	close(cl[i].fd);
	cl[i] = cl[--*ncl];
}

static void accept_client(int lfd, struct client *cl, int *ncl)
{
	int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	/* A client that stalls mid-message must not stall the daemon: it gets
	 * a second, then is dropped. */
	struct timeval tv = { .tv_sec = 1 };

	if (cfd < 0)
		return;
	if (*ncl >= MAX_CLIENTS) {
		pr_warn("too many control clients; closing one\n");
		close(cfd);
		return;
	}
	setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(cfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	cl[*ncl].fd = cfd;
	cl[*ncl].session = 0;
	(*ncl)++;
}

/* Whether a flow queue waits for an application (its head needs a CQ
 * slot). */
static int any_blocked(const struct xhcad *d)
{
	for (__u32 f = 0; f < d->nflowq; f++)
		if (d->fq[f].blocked)
			return 1;
	return 0;
}

/* The safety net behind the doorbells: a blocked flow queue whose CQ has
 * room again is let go even if no doorbell came. */
static void recheck_blocked(struct xhcad *d)
{
	for (struct cq *cq = d->cqs; cq; cq = cq->next) {
		if (!cq->waiting)
			continue;
		if (cq_used(cq) < cq_room(cq))
			flowq_unblock(d, cq);
	}
}

/* xhca_events: what xhca_rx tells xhcad (a QP went to the error state). */
static int on_event(void *ctx, void *data, size_t len)
{
	struct xhca_event e;

	if (len < sizeof(e))
		return 0;
	memcpy(&e, data, sizeof(e));
	resp_qp_error_event(ctx, &e);
	return 0;
}

int xhcad_run(struct xhcad *d, int lfd)
{
	struct client cl[MAX_CLIENTS];
	struct pollset ps = {};
	__u64 wait_ns = 0, next_hk = now_ns() + HOUSEKEEP_NS;
	int ncl = 0, more = 0, stalled = 0, err = 0, evfd;
	struct ring_buffer *ev;

	ev = ring_buffer__new(d->m.events, on_event, d, NULL);
	if (!ev)
		return -errno;
	evfd = ring_buffer__epoll_fd(ev);
	/* Events from before this xhcad (a restart) */
	ring_buffer__consume(ev);

	while (!xhcad_stop) {
		int first_client, first_cq, first_orphan, first_db, norphan = 0, ncq = 0, ndb = 0, n,
		    i;
		int dbs[MAX_CLIENTS]; /* a doorbell comes with a client: a session's */
		struct session *orphans[64];
		struct cq *cqs[256];
		struct timespec ts;
		__u64 now;

		ps.n = 0;
		ps_add(&ps, lfd);
		ps_add(&ps, evfd);
		ps_add(&ps, proxy_fd(d)); /* what the proxy sends back: round_run serves it */
		first_client = ps.n;
		for (i = 0; i < ncl; i++)
			ps_add(&ps, cl[i].fd);
		first_cq = ps.n;
		for (struct cq *cq = d->cqs; cq && ncq < 256; cq = cq->next) {
			if (!cq->waiting)
				continue;
			cqs[ncq++] = cq;
			ps_add(&ps, cq->dbfd);
		}
		/* Sessions of an earlier xhcad: they end with their process. */
		first_orphan = ps.n;
		for (struct session *s = d->sessions; s && norphan < 64; s = s->next) {
			if (s->fd >= 0)
				continue;
			orphans[norphan++] = s;
			ps_add(&ps, s->pidfd);
		}
		/* The sessions' send doorbells (rung when xhcad is armed). */
		first_db = ps.n;
		for (struct session *s = d->sessions; s && ndb < MAX_CLIENTS; s = s->next) {
			if (s->sq_dbfd < 0)
				continue;
			dbs[ndb++] = s->sq_dbfd;
			ps_add(&ps, s->sq_dbfd);
		}
		/* Sockets only when reading them can lead somewhere. */
		if (!wait_ns && !stalled) {
			for (__u32 f = 0; f < d->nflowq; f++) {
				int fds[XHCA_RXQ_MAX], k;

				if (d->fq[f].blocked)
					continue;
				k = xsk_fds(d, f, fds, XHCA_RXQ_MAX);
				for (int j = 0; j < k; j++)
					ps_add(&ps, fds[j]);
			}
		}
		if (proxy_taking(d)) {
			int fds[XHCA_RXQ_MAX], k = xsk_fds(d, XHCA_FLOWQ_PROXY, fds, XHCA_RXQ_MAX);

			for (int j = 0; j < k; j++)
				ps_add(&ps, fds[j]);
		}
		if (!mcast_pending(d)) {
			/* the replication queue, unless a packet waits for credit */
			int fds[XHCA_RXQ_MAX], k = xsk_fds(d, XHCA_FLOWQ_MCAST, fds, XHCA_RXQ_MAX);

			for (int j = 0; j < k; j++)
				ps_add(&ps, fds[j]);
		}
		/* Going to sleep: the send queues want their doorbells. */
		if (!more && d->sqs && sq_arm(d))
			more = 1;
		now = now_ns();
		if (more) {
			ts = (struct timespec){ 0, 0 };
		} else {
			__u64 t = next_hk > now ? next_hk - now : 0;

			if (wait_ns && wait_ns < t)
				t = wait_ns;
			if (d->sq_deadline) {
				__u64 w = d->sq_deadline > now ? d->sq_deadline - now : 0;

				if (w < t)
					t = w;
			}
			if (d->sq_poll && t > SQ_POLL_NS)
				t = SQ_POLL_NS;
			ts.tv_sec = (time_t)(t / 1000000000ull);
			ts.tv_nsec = (long)(t % 1000000000ull);
		}
		n = ppoll(ps.p, (nfds_t)ps.n, &ts, NULL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (ps.p[0].revents & POLLIN)
			accept_client(lfd, cl, &ncl);
		if (ps.p[1].revents & POLLIN)
			ring_buffer__consume(ev);
		if (ps.p[2].revents & POLLIN)
			proxy_ack(d); /* round_run serves what it announced */
		/* (before the clients: one may end a session and its doorbell) */
		for (i = 0; i < ndb; i++) {
			__u64 v;

			if ((ps.p[first_db + i].revents & POLLIN) &&
			    read(dbs[i], &v, sizeof(v)) < 0 && errno != EAGAIN)
				pr_debug("send doorbell: %s\n", strerror(errno));
		}
		/* Backwards: a client that goes is replaced by the last one. */
		for (i = first_cq - first_client - 1; i >= 0; i--) {
			if (!ps.p[first_client + i].revents)
				continue;
			if (ctl_serve_one(d, &cl[i]))
				client_gone(d, cl, &ncl, i);
		}
		for (i = 0; i < ncq; i++) {
			__u64 v;

			if (!(ps.p[first_cq + i].revents & POLLIN))
				continue;
			if (read(cqs[i]->dbfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				pr_debug("cq %u doorbell: %s\n", cqs[i]->id, strerror(errno));
			/* The CQ may be gone: a client above may have closed it. */
			for (struct cq *cq = d->cqs; cq; cq = cq->next)
				if (cq == cqs[i])
					flowq_unblock(d, cq);
		}
		for (i = 0; i < norphan; i++) {
			if (!ps.p[first_orphan + i].revents)
				continue;
			pr_info("session %u: its process %u ended while it waited to be resumed\n",
				orphans[i]->id, orphans[i]->pid);
			session_close(d, orphans[i]->id);
			/* the list changed: the rest waits for the next round */
			break;
		}
		if (d->nflush)
			qp_flush_run(d);
		if (d->state_dirty)
			state_save(d);
		n = round_run(d, BUDGET, &wait_ns);
		more = n == BUDGET || mcast_pending(d) || d->sq_more;
		/* FIFO: an oldest frame that cannot move stops everything; wait
		 * for its doorbell rather than spin on readable sockets. (Only a
		 * blocked queue stops FIFO: frames counted in flight but not yet
		 * in a ring must not put the loop to sleep.) */
		stalled = d->sched.mode == FQ_SCHED_FIFO && !n && !wait_ns && any_blocked(d);
		if (now_ns() >= next_hk) {
			xsk_sync_drops(d);
			recheck_blocked(d);
			next_hk = now_ns() + HOUSEKEEP_NS;
		}
	}
	if (d->keep) {
		/* Everything stays for the next xhcad: the sessions too, for
		 * their applications to resume. */
		for (int i = 0; i < ncl; i++) {
			struct session *s = session_find(d, cl[i].session);

			if (s)
				s->fd = -1;
			close(cl[i].fd);
		}
		state_save(d);
	} else {
		for (int i = ncl - 1; i >= 0; i--)
			client_gone(d, cl, &ncl, i);
	}
	ring_buffer__free(ev);
	free(ps.p);
	return err;
}
