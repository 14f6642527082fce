/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhcad's one thread: it waits on the control socket and its clients, the
 * flow queues' AF_XDP sockets and the doorbells of full CQs, then serves what
 * is ready. A flow queue that cannot move (blocked on a CQ, or the bus model
 * out of tokens) leaves the poll set, so the loop sleeps instead of spinning
 * on a ring it may not drain.
 */
#include <errno.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "ctl_server.h"
#include "log.h"
#include "xhcad_control.h"

#define MAX_CLIENTS 256
#define BUDGET 256		/* frames between two looks at the control socket */
#define HOUSEKEEP_NS 100000000ull


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
	ctl_client_free(&cl[i]);
	cl[i] = cl[--*ncl];
}

/* Whether a user may connect once more (--user-clients; root always). */
static int user_room(const struct xhcad *d, const struct client *cl, int ncl, __u32 uid)
{
	__u32 n = 0;

	for (int i = 0; i < ncl; i++)
		n += cl[i].uid == uid;
	return !uid || !d->app.lim_clients || n < d->app.lim_clients;
}

static void accept_client(struct xhcad *d, int lfd, struct client *cl, int *ncl)
{
	/* (non-blocking: a client that stalls mid-message holds up no one;
	 * it is dropped after CTL_STALL_NS) */
	int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	struct ucred cr = { .uid = (uid_t)-1 };
	socklen_t crlen = sizeof(cr);

	if (cfd < 0)
		return;
	if (*ncl >= MAX_CLIENTS) {
		pr_warn("too many control clients; closing one\n");
		close(cfd);
		return;
	}
	getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen);
	if (!user_room(d, cl, *ncl, cr.uid)) {
		d->app.refused_clients++;
		if (d->app.refused_clients == 1 || !(d->app.refused_clients % 1000))
			pr_warn("user %u has %u control connections (--user-clients): refused\n",
				cr.uid, d->app.lim_clients);
		close(cfd);
		return;
	}
	/* who connected: root has the CLI's rights; anyone else the socket's
	 * permissions let in (xhcad --group) may make a session of its own */
	ctl_client_init(&cl[*ncl], cfd, cr.uid, cr.uid == 0 || cr.uid == geteuid());
	(*ncl)++;
}

/* The safety net behind the doorbells: a blocked flow queue whose CQ has
 * room again is let go even if no doorbell came. */
static void recheck_blocked(struct xhcad *d)
{
	for (struct cq *cq = d->app.cqs; cq; cq = cq->next) {
		if (!cq->waiting)
			continue;
		if (cq_used(cq) < cq_room(cq))
			flowq_unblock(d, cq);
	}
}

/* xhca_events: what xhca_rx tells xhcad (a QP went to the error state; it
 * wrote a completion for an application that sleeps: serve_ctl's
 * cq_notify signals it). */
static int on_event(void *ctx, void *data, size_t len)
{
	struct xhca_event e;

	if (len < sizeof(e))
		return 0;
	memcpy(&e, data, sizeof(e));
	if (e.type == XHCA_EV_CQ_WAKE)
		cq_wake_slot(ctx, e.lidx);
	else
		resp_qp_error_event(ctx, &e);
	return 0;
}

/* The loop's state between two waits: its clients, and what the poll set
 * holds this time (the doorbells, orphans and CQs polled, where each group
 * starts in it). */
struct loop {
	struct xhcad *d;
	int lfd;
	struct ring_buffer *ev;
	struct client cl[MAX_CLIENTS];
	int ncl;
	struct pollset ps;
	int first_client, first_cq, first_orphan, first_db;
	int first_data;		/* from here on: the data path's (no engine stopped for it) */
	int lo_first, lo_n;	/* where loopback.c's are in it */
	int dbs[MAX_CLIENTS]; /* a doorbell comes with a client: a session's */
	int ndb;
	struct session *orphans[64];
	int norphan;
	struct cq *cqs[256];
	int ncq;
	__u64 wait_ns, next_hk;
	int more, stalled;
	__u64 last_work;	/* when a round last did something */
	/* The flow queues' sockets (XHCA_RXQ_MAX per flow queue: up to a few
	 * dozen) in an epoll set of their own, one descriptor in the poll
	 * set: ppoll's cost grows with every descriptor it is given, and these
	 * never change while the loop runs. A blocked flow queue's are muted
	 * (events 0) until it is let go. */
	int xepfd;
	unsigned char fq_on[XHCA_FLOWQ_MAX];
	unsigned int quiet_polls; /* rounds since the last ppoll (busy polling) */
};

static void ps_add_xsks(struct pollset *ps, const struct xhcad *d, __u32 f)
{
	int fds[XHCA_RXQ_MAX], k = xsk_fds(d, f, fds, XHCA_RXQ_MAX);

	for (int j = 0; j < k; j++)
		ps_add(ps, fds[j]);
}

/* The flow queues' sockets in lp->xepfd: each flow queue's registered
 * once, for reading while it is not blocked. */
static int fq_epoll(struct loop *lp, __u32 f, int on)
{
	return engine_fq_epoll(lp->d, lp->xepfd, &lp->fq_on[f], f, on);
}

static void fq_mute(struct loop *lp)
{
	struct xhcad *d = lp->d;

	for (__u32 f = 0; f < d->nflowq; f += d->neng) /* (engine 0's) */
		if ((lp->fq_on[f] == 2) != !d->fq[f].blocked && fq_epoll(lp, f, !d->fq[f].blocked))
			pr_warn("flow queue %u: epoll: %s\n", f, strerror(errno));
}

/* Loopback's: the addresses changed; frames from another xhcad of this
 * host (while there is room for them). */
static void lo_set(struct loop *lp)
{
	int fds[2 + LO_PEERS], n = lo_fds(lp->d, fds, 2 + LO_PEERS, xsk_lo_room(lp->d));

	lp->lo_first = lp->ps.n;
	lp->lo_n = n;
	for (int i = 0; i < n; i++)
		ps_add(&lp->ps, fds[i]);
}

static int lo_readable(const struct loop *lp)
{
	for (int i = 0; i < lp->lo_n; i++)
		if (lp->ps.p[lp->lo_first + i].revents)
			return 1;
	return 0;
}

/* What to wait for: the listener, the event ring, the proxy, the clients,
 * the doorbells of full CQs, the orphans' processes, the send doorbells,
 * and the sockets only when reading them can lead somewhere. */
static void poll_set(struct loop *lp)
{
	struct xhcad *d = lp->d;
	struct pollset *ps = &lp->ps;

	ps->n = 0;
	ps_add(ps, lp->lfd);
	ps_add(ps, ring_buffer__epoll_fd(lp->ev));
	ps_add(ps, proxy_fd(d)); /* what the proxy sends back: round_run serves it */
	lo_set(lp);
	lp->first_client = ps->n;
	for (int i = 0; i < lp->ncl; i++) {
		int k = ps_add(ps, lp->cl[i].fd);

		/* a reply half sent: room for the rest, no new request */
		if (k >= 0 && ctl_wants_out(&lp->cl[i]))
			ps->p[k].events = POLLOUT;
	}
	lp->first_cq = ps->n;
	lp->ncq = 0;
	for (struct cq *cq = d->app.cqs; cq && lp->ncq < 256; cq = cq->next) {
		if (!cq->waiting)
			continue;
		lp->cqs[lp->ncq++] = cq;
		ps_add(ps, cq->dbfd);
	}
	/* Sessions of an earlier xhcad: they end with their process. */
	lp->first_orphan = ps->n;
	lp->norphan = 0;
	for (struct session *s = d->app.sessions; s && lp->norphan < 64; s = s->next) {
		if (s->fd >= 0)
			continue;
		lp->orphans[lp->norphan++] = s;
		ps_add(ps, s->pidfd);
	}
	fq_mute(lp);
	lp->first_data = ps->n;
	ps_add(ps, d->eng[0].wake_fd); /* (another engine's: a CQ to hear) */
	/* The sessions' send doorbells (rung when an engine is armed): the
	 * data path's, so no engine is stopped for them. */
	lp->first_db = ps->n;
	lp->ndb = 0;
	for (struct session *s = d->app.sessions; s && lp->ndb < MAX_CLIENTS; s = s->next) {
		if (s->sq_dbfd < 0)
			continue;
		lp->dbs[lp->ndb++] = s->sq_dbfd;
		ps_add(ps, s->sq_dbfd);
	}
	if (!lp->wait_ns && !lp->stalled)
		ps_add(ps, lp->xepfd);
	if (proxy_taking(d))
		ps_add_xsks(ps, d, XHCA_FLOWQ_PROXY);
	if (!mcast_pending(d)) /* the replication queue, unless a packet waits for credit */
		ps_add_xsks(ps, d, XHCA_FLOWQ_MCAST);
}

/* How long to sleep: not at all with work left, else until the next timer
 * (housekeeping, the bus model, the send queues' retransmissions). */
static struct timespec sleep_time(struct loop *lp)
{
	struct xhcad *d = lp->d;
	__u64 now = now_ns(), t;

	/* Going to sleep: the send queues want their doorbells. */
	if (!lp->more && eng()->sq.list && sq_arm(d))
		lp->more = 1;
	if (lp->more)
		return (struct timespec){ 0, 0 };
	t = lp->next_hk > now ? lp->next_hk - now : 0;
	if (lp->wait_ns && lp->wait_ns < t)
		t = lp->wait_ns;
	if (d->cm) {
		__u64 c = cm_deadline(d);

		if (c && (c > now ? c - now : 0) < t)
			t = c > now ? c - now : 0;
	}
	if (eng()->sq.deadline) {
		__u64 w = eng()->sq.deadline > now ? eng()->sq.deadline - now : 0;

		if (w < t)
			t = w;
	}
	if (eng()->sq.poll && t > SQ_POLL_NS)
		t = SQ_POLL_NS;
	return (struct timespec){ (time_t)(t / 1000000000ull), (long)(t % 1000000000ull) };
}

static short revents(const struct loop *lp, int i)
{
	return lp->ps.p[i].revents;
}

/* Clients that left a message half sent or half read too long. */
static void drop_stalled(struct loop *lp)
{
	__u64 now = now_ns();

	for (int i = lp->ncl - 1; i >= 0; i--) {
		if (!ctl_stalled(&lp->cl[i], now))
			continue;
		pr_info("control client of user %u: a message half %s for a second: dropped\n",
			lp->cl[i].uid, ctl_wants_out(&lp->cl[i]) ? "read by it" : "sent");
		lp->d->app.stalled_clients++;
		client_gone(lp->d, lp->cl, &lp->ncl, i);
	}
}

/* What woke the loop: new clients, events, the proxy, doorbells, requests,
 * CQs with room again, orphans whose process ended. */
static void serve_ctl(struct loop *lp)
{
	struct xhcad *d = lp->d;
	__u64 v;

	if (revents(lp, 0) & POLLIN)
		accept_client(d, lp->lfd, lp->cl, &lp->ncl);
	if (revents(lp, 1) & POLLIN) {
		ring_buffer__consume(lp->ev);
		cq_notify(d);
	}
	if (revents(lp, 2) & POLLIN)
		proxy_ack(d); /* round_run serves what it announced */
	if (lo_readable(lp)) {
		if (lo_service(d))
			ibview_update(d); /* an address or the link changed */
		xsk_lo_recv(d, BUDGET);
	}
	/* Backwards: a client that goes is replaced by the last one. */
	for (int i = lp->first_cq - lp->first_client - 1; i >= 0; i--)
		if (revents(lp, lp->first_client + i) && ctl_serve_one(d, &lp->cl[i]))
			client_gone(d, lp->cl, &lp->ncl, i);
	for (int i = 0; i < lp->ncq; i++) {
		if (!(revents(lp, lp->first_cq + i) & POLLIN))
			continue;
		if (read(lp->cqs[i]->dbfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			pr_debug("cq %u doorbell: %s\n", lp->cqs[i]->id, strerror(errno));
		/* The CQ may be gone: a client above may have closed it. */
		for (struct cq *cq = d->app.cqs; cq; cq = cq->next)
			if (cq == lp->cqs[i])
				flowq_unblock(d, cq);
	}
	for (int i = 0; i < lp->norphan; i++) {
		if (!revents(lp, lp->first_orphan + i))
			continue;
		pr_info("session %u: its process %u ended while it waited to be resumed\n",
			lp->orphans[i]->id, lp->orphans[i]->pid);
		session_close(d, lp->orphans[i]->id);
		break; /* the list changed: the rest waits for the next round */
	}
}

/* The send doorbells that rang (before the clients are served: one may end
 * a session and its doorbell). A session's QPs may be any engine's: the
 * sleeping ones look at their send queues; this thread's round does next. */
static void send_doorbells(struct loop *lp)
{
	struct xhcad *d = lp->d;
	int rang = 0;
	__u64 v;

	for (int i = 0; i < lp->ndb; i++) {
		if (!(revents(lp, lp->first_db + i) & POLLIN))
			continue;
		rang = 1;
		if (read(lp->dbs[i], &v, sizeof(v)) < 0 && errno != EAGAIN)
			pr_debug("send doorbell: %s\n", strerror(errno));
	}
	for (__u32 k = 1; rang && k < d->neng; k++)
		engine_wake(&d->eng[k], 0);
}

/* What woke the loop; the other engines stopped while it is served, if it
 * is more than the data path's. */
static void serve_ready(struct loop *lp)
{
	int ctl = 0;
	__u64 v;

	for (int i = 0; i < lp->first_data && !ctl; i++)
		ctl = !!revents(lp, i);
	if (revents(lp, lp->first_data) &&
	    read(lp->d->eng[0].wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		pr_debug("wake: %s\n", strerror(errno));
	send_doorbells(lp);
	if (!ctl)
		return;
	engines_stop(lp->d);
	serve_ctl(lp);
	engines_go(lp->d);
}

/* --xdp-ack: frames xhca_rx sends back with XDP_TX the interface dropped
 * (a veth whose peer has no NAPI: no XDP program, GRO off) are ACKs lost;
 * from then on xhcad sends every ACK. The lost ones come back as the
 * requester's retries, acknowledged again. */
static void xdp_ack_watch(struct xhcad *d)
{
	__u64 errs;

	if (d->xdp_ack != XDP_ACK_ON || net_xdp_tx_errors(d->ifname, &errs) ||
	    errs <= d->xdp_tx_errs)
		return;
	d->xdp_ack = XDP_ACK_DROPPED;
	recv_xdp_ack_off(d);
	pr_info("%s dropped %llu frames sent back by XDP_TX (a veth whose peer has no XDP "
		"program and GRO off?): xhcad sends every ACK from now on\n", d->ifname,
		(unsigned long long)(errs - d->xdp_tx_errs));
}

/* The data path's turn, then housekeeping when it is due. */
static void run_round(struct loop *lp)
{
	struct xhcad *d = lp->d;
	int n, work, spilled;

	if (eng()->nflush)
		qp_flush_run(d);
	if (d->state_dirty) {
		engines_stop(d);
		state_save(d);
		engines_go(d);
	}
	spilled = cq_spill_run(d);
	n = round_run(d, BUDGET, &lp->wait_ns, &work);
	if (work)
		lp->last_work = now_ns();
	/* (looped frames are in no socket the poll set would see) */
	lp->more = spilled || n == BUDGET || mcast_pending(d) || eng()->sq.more ||
		   (xsk_lo_held(d) && round_ready(d));
	/* FIFO: an oldest frame that cannot move stops everything; wait for
	 * its doorbell rather than spin on readable sockets. (Only a blocked
	 * queue stops FIFO: frames counted in flight but not yet in a ring
	 * must not put the loop to sleep.) */
	lp->stalled = eng()->sched.mode == FQ_SCHED_FIFO && !n && !lp->wait_ns && flowq_any_blocked(d, 0);
	if (d->cm) {
		__u64 c = cm_deadline(d);

		if (c && c <= now_ns()) {
			engines_stop(d);
			cm_timers(d);
			engines_go(d);
		}
	}
	if (now_ns() >= lp->next_hk) {
		engines_stop(d);
		xsk_sync_drops(d);
		qp_cq_overruns(d);
		recheck_blocked(d);
		drop_stalled(lp);
		xdp_ack_watch(d);
		cq_wake_missed(d);
		cq_notify(d);
		engines_go(d);
		lp->next_hk = now_ns() + HOUSEKEEP_NS;
	}
}

/* The loop ends: with --keep everything stays for the next xhcad, the
 * sessions too, for their applications to resume; else the clients go. */
static void loop_end(struct loop *lp)
{
	struct xhcad *d = lp->d;

	engines_end(d); /* (from here on one thread) */
	if (d->keep) {
		for (int i = 0; i < lp->ncl; i++) {
			struct session *s = session_find(d, lp->cl[i].session);

			if (s)
				s->fd = -1;
			ctl_client_free(&lp->cl[i]);
		}
		state_save(d);
	} else {
		for (int i = lp->ncl - 1; i >= 0; i--)
			client_gone(d, lp->cl, &lp->ncl, i);
	}
	ring_buffer__free(lp->ev);
	close(lp->xepfd);
	free(lp->ps.p);
}

/* Busy polling's look aside in the main loop: frames from another device
 * of this host (in a socket) are work too. */
static int lo_frames(struct xhcad *d)
{
	return d->lo.nin && xsk_lo_recv(d, BUDGET);
}

/*
 * Busy polling (xhcad --poll-us): for poll_ns after a round did work the
 * loop looks at the rings itself (round_busy_poll: no system call) instead
 * of sleeping in ppoll. A request or frame that comes meanwhile costs no
 * wakeup, and the send queues stay unarmed, so the application rings no
 * doorbell either; idle, the loop spins poll_ns after each burst and then
 * sleeps. Returns 1 when work came.
 */
static int busy_poll(struct loop *lp)
{
	return round_busy_poll(lp->d, lp->last_work + lp->d->poll_ns, lo_frames);
}

/* Whether the loop skips ppoll this time: busy polling found work, and the
 * control socket, the proxy and the doorbells were looked at not long ago. */
static int skip_ppoll(struct loop *lp)
{
	struct xhcad *d = lp->d;

	if (!d->poll_ns || lp->stalled || lp->wait_ns)
		return 0;
	if (!lp->more && (now_ns() - lp->last_work >= d->poll_ns || !busy_poll(lp)))
		return 0;
	eng()->polled += !lp->more;
	if (++lp->quiet_polls >= 16) {
		lp->quiet_polls = 0;
		return 0;
	}
	lp->more = 1;
	return 1;
}

int xhcad_run(struct xhcad *d, int lfd)
{
	struct loop *lp = calloc(1, sizeof(*lp));
	int err = 0;

	if (!lp)
		return -ENOMEM;
	lp->d = d;
	lp->lfd = lfd;
	lp->next_hk = now_ns() + HOUSEKEEP_NS;
	net_xdp_tx_errors(d->ifname, &d->xdp_tx_errs); /* (xdp_ack_watch's start) */
	lp->ev = ring_buffer__new(d->m.events, on_event, d, NULL);
	lp->xepfd = epoll_create1(EPOLL_CLOEXEC);
	for (__u32 f = 0; lp->xepfd >= 0 && !err && f < d->nflowq; f += d->neng)
		err = fq_epoll(lp, f, 1);
	if (!err && (err = engines_start(d)))
		pr_warn("cannot start the engines: %s\n", strerror(-err));
	if (!lp->ev || lp->xepfd < 0 || err) {
		err = err ?: -errno;
		ring_buffer__free(lp->ev);
		if (lp->xepfd >= 0)
			close(lp->xepfd);
		free(lp);
		return err;
	}
	ring_buffer__consume(lp->ev); /* events from before this xhcad (a restart) */
	while (!xhcad_stop) {
		struct timespec ts;

		if (skip_ppoll(lp)) {
			if (d->lo.nin)
				xsk_lo_recv(d, BUDGET);
			run_round(lp);
			continue;
		}
		poll_set(lp);
		ts = sleep_time(lp);
		eng()->sleeps += ts.tv_sec || ts.tv_nsec;
		__atomic_store_n(&eng()->sleeping, 1, __ATOMIC_SEQ_CST);
		if (round_handed(d)) /* (handed over before it said so: engine.c) */
			ts = (struct timespec){ 0, 0 };
		if (ppoll(lp->ps.p, (nfds_t)lp->ps.n, &ts, NULL) < 0) {
			__atomic_store_n(&eng()->sleeping, 0, __ATOMIC_SEQ_CST);
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		__atomic_store_n(&eng()->sleeping, 0, __ATOMIC_SEQ_CST);
		serve_ready(lp);
		run_round(lp);
	}
	loop_end(lp);
	free(lp);
	return err;
}
