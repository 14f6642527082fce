/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The control socket: one listening AF_UNIX stream socket per interface.
 * Requests are served one at a time by the daemon's single thread (loop.c):
 * xhcad is the only writer of the maps, and serving in order keeps every
 * request atomic with respect to the others and to the data path.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <xhca/cm.h>
#include "ctl_server.h"
#include "log.h"
#include "xhcad_control.h"

int ctl_listen(struct xhcad *d)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, err;

	if (mkdir(XHCA_RUN_DIR, 0755) && errno != EEXIST)
		return -errno;
	if (strlen(d->sock_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, d->sock_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A socket file nobody answers on is left from a crash: take it over. */
	if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		pr_warn("another xhcad already serves %s (%s); stop it first\n", d->ifname,
			d->sock_path);
		return -EADDRINUSE;
	}
	unlink(d->sock_path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16)) {
		err = -errno;
		close(fd);
		pr_warn("cannot listen on %s: %s\n", d->sock_path, strerror(-err));
		return err;
	}
	/* root's alone, or its group's too (xhcad --group): who may connect */
	if ((d->ctl_group && (chown(d->sock_path, (uid_t)-1, (gid_t)d->ctl_gid) ||
			      chmod(d->sock_path, 0660))) ||
	    (!d->ctl_group && chmod(d->sock_path, 0600))) {
		err = -errno;
		close(fd);
		unlink(d->sock_path);
		pr_warn("cannot set who may use %s: %s\n", d->sock_path, strerror(-err));
		return err;
	}
	return fd;
}

void fill_status(struct xhcad *d, struct xhca_status *s)
{
	struct engine tot;

	round_totals(d, &tot);
	memset(s, 0, sizeof(*s));
	snprintf(s->ifname, sizeof(s->ifname), "%s", d->ifname);
	snprintf(s->pin_dir, sizeof(s->pin_dir), "%s", d->pin_dir);
	snprintf(s->mode, sizeof(s->mode), "%s", d->native ? "native" : "skb");
	snprintf(s->attached_by, sizeof(s->attached_by), "%s", d->adopt ? "adopted" : "xhcad");
	s->ifindex = d->ifindex;
	s->prog_id = d->prog_id;
	s->max_qps = d->max_qps;
	s->qps_in_use = d->qps_in_use;
	s->abi_version = XHCA_ABI_VERSION;
	s->pid = getpid();
	s->uptime_ms = now_ms() - d->start_ms;
	s->next_qpn = d->next_qpn;
	s->keep = d->keep;
	s->repaired = d->repaired;
	s->sessions = d->app.nsessions;
	s->nflowq = d->nflowq;
	s->nrxq = xsk_nrxq(d);
	snprintf(s->sched, sizeof(s->sched), "%s", sched_mode_name(d->eng[0].sched.mode));
	snprintf(s->xsk_mode, sizeof(s->xsk_mode), "%s", xsk_zerocopy(d) ? "zerocopy" : "copy");
	snprintf(s->kernel, sizeof(s->kernel), "%s", d->kernel);
	s->kern_lacks = d->kern_lacks;
	s->kern_forced = d->kern_forced;
	s->bus_rate = d->bus.rate;
	s->hostmem_bytes = d->hm.bytes;
	s->hostmem_used = d->hm.used;
	s->hostmem_blocks = hm_blocks_made(d);
	s->session_blocks = d->hm.session_blocks;
	s->hostmem_refused = d->hm.refused;
	s->lim_qps = d->app.lim_qps;
	s->lim_cqs = d->app.lim_cqs;
	s->lim_mrs = d->app.lim_mrs;
	s->lim_clients = d->app.lim_clients;
	s->refused_clients = d->app.refused_clients;
	s->stalled_clients = d->app.stalled_clients;
	s->ring_faults = tot.ring_faults;
	s->cq_overruns = tot.cq_overruns;
	s->cq_stall_ms = d->cq_stall_ns / 1000000;
	s->max_mrs = d->mr.max - 1;
	s->mrs_in_use = d->mr.in_use;
	s->fragment = (__u32)d->hm.fragment;
	s->canary = (__u32)d->hm.canary;
	hm_canary_scan(d);
	s->canary_violations = d->hm.canary_violations;
	s->barriers = d->mr.barriers;
	s->mw = d->mr.mw;
	s->naks = tot.naks;
	s->resp = tot.resp;
	s->req = tot.req;
	xsk_tx_stats(d, &s->tx_frames, &s->tx_full);
	s->tx_frames += tot.req.gso_frames + tot.resp.gso_frames; /* (sent through gso.c) */
	s->poll_us = d->poll_ns / 1000;
	s->sleeps = tot.sleeps;
	s->polled = tot.polled;
	s->handbacks = tot.handbacks;
	s->engines = d->neng;
	s->xdp_ack = d->recv_fast ? (__u32)d->xdp_ack : 0;
	s->steer = d->steer == STEER_ON && d->gso; /* (--gso off since: nothing steered) */
	s->tx_queues = d->steer_txq;
	s->rx_own = tot.rx_own;
	s->rx_other = tot.rx_other;
	s->lo = d->lo.stats;
	s->lo.held = xsk_lo_held(d);
	mcast_status(d, s);
	cm_status(d, s);
	xsk_account(d, s);
}

/* One request being served: what came, and what goes back. A handler
 * returns 0 with the reply in out (malloc'd, freed once sent) or -errno
 * with err saying why, for the user ("qp create: ...; do this"). */
struct ctl_req {
	struct xhcad *d;
	struct client *c;
	const void *in;		/* the request's payload (its size checked) */
	__u32 in_len;
	int in_fd;		/* a descriptor that came with it, -1: none; a
				 * handler that keeps it sets -1 */
	char err[XHCA_ERRMSG_LEN];
	void *out;
	__u32 out_len;
	int out_fd;		/* a descriptor to send along, -1: none */
	int out_fd_close;	/* ... closed once sent (it was made for the client) */
};

typedef int (*ctl_fn)(struct ctl_req *r);

/* The reply: a copy of len bytes at p. */
static int reply(struct ctl_req *r, const void *p, __u32 len)
{
	r->out = malloc(len ? len : 1);
	if (!r->out)
		return errf(r->err, sizeof(r->err), -ENOMEM, "out of memory");
	memcpy(r->out, p, len);
	r->out_len = len;
	return 0;
}

/* An array the handler made (malloc'd): the reply, as it is. */
static int reply_array(struct ctl_req *r, void *v, __u32 n, size_t esize, int rc)
{
	if (rc) {
		free(v);
		return rc;
	}
	r->out = v;
	r->out_len = n * (__u32)esize;
	return 0;
}

static __u32 in_u32(const struct ctl_req *r)
{
	__u32 v = 0;

	if (r->in_len >= sizeof(v))
		memcpy(&v, r->in, sizeof(v));
	return v;
}

/* ---- status, QPs, statistics ---------------------------------------------- */

static int op_status(struct ctl_req *r)
{
	struct xhca_status s;

	fill_status(r->d, &s);
	return reply(r, &s, sizeof(s));
}

static int op_qp_create(struct ctl_req *r)
{
	struct xhca_qp_attr a;
	int rc;

	memcpy(&a, r->in, sizeof(a));
	rc = qp_create(r->d, &a, r->c->session, r->err, sizeof(r->err));
	return rc ? rc : reply(r, &a, sizeof(a));
}

static int op_qp_modify(struct ctl_req *r)
{
	struct xhca_qp_attr a;
	int rc;

	memcpy(&a, r->in, sizeof(a));
	rc = qp_modify(r->d, &a, r->c->session, r->err, sizeof(r->err));
	return rc ? rc : reply(r, &a, sizeof(a));
}

static int op_qp_destroy(struct ctl_req *r)
{
	return qp_destroy(r->d, in_u32(r), r->c->session, r->err, sizeof(r->err));
}

static int op_qp_show(struct ctl_req *r)
{
	struct xhca_qp_info *qi = NULL;
	__u32 n = 0;

	int rc = qp_show(r->d, in_u32(r), r->c->session, &qi, &n, r->err, sizeof(r->err));

	return reply_array(r, qi, n, sizeof(*qi), rc);
}

static int op_stats(struct ctl_req *r)
{
	struct xhca_stats_reply *out = calloc(1, sizeof(*out));
	struct xhca_stats_req rq = {};
	int rc;

	if (!out)
		return errf(r->err, sizeof(r->err), -ENOMEM, "stats: out of memory");
	if (r->in_len)
		memcpy(&rq, r->in, sizeof(rq));
	if ((rq.flags & XHCA_STATS_F_RESET) && r->c->session) {
		free(out);
		return errf(r->err, sizeof(r->err), -EPERM, "stats --reset: the counters are "
			    "xhcad's (every session's): only root resets them");
	}
	rc = stats_get(r->d, &rq, r->c->session, out, r->err, sizeof(r->err));
	return reply_array(r, out, 1, sizeof(*out), rc);
}

/* ---- sessions --------------------------------------------------------------- */

/* HELLO: the connection becomes an application session (or resumes one of
 * an earlier xhcad). Its host memory comes block by block (BLOCK). */
static int op_hello(struct ctl_req *r)
{
	struct xhca_hello_reply out = { .page_size = XHCA_PAGE_SIZE };
	struct xhcad *d = r->d;
	struct xhca_hello hello;
	struct session *s;
	struct ucred cr;
	socklen_t crlen = sizeof(cr);

	memcpy(&hello, r->in, sizeof(hello));
	if (hello.version != XHCA_SESSION_VERSION)
		return errf(r->err, sizeof(r->err), -EPROTO, "hello: session version %u, xhcad "
			    "speaks %u; use the libxhca of this xhcad", hello.version,
			    XHCA_SESSION_VERSION);
	if (r->c->session)
		return errf(r->err, sizeof(r->err), -EALREADY,
			    "hello: this connection is a session already");
	if (getsockopt(r->c->fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) || cr.pid <= 0)
		return errf(r->err, sizeof(r->err), -EPERM, "hello: cannot tell who is calling");
	if (hello.resume) {
		s = session_find(d, hello.resume);
		if (!s || s->fd >= 0 || s->pid != (__u32)cr.pid ||
		    proc_start_time(s->pid) != s->start)
			return errf(r->err, sizeof(r->err), -ESRCH, "hello: session %u cannot be "
				    "resumed: it ended, or it is another process's", hello.resume);
		s->fd = r->c->fd;
		close(s->pidfd);
		s->pidfd = -1;
		pr_info("session %u: %s (pid %u) resumed\n", s->id, s->name, s->pid);
	} else {
		s = session_new(d, r->c->fd, &hello, (__u32)cr.pid);
		if (!s)
			return errf(r->err, sizeof(r->err), -ENOMEM, "hello: out of memory");
	}
	r->c->session = s->id;
	out.session = s->id;
	out.hostmem_bytes = d->hm.bytes;
	out.block_pages = XHCA_BLOCK_PAGES;
	out.session_blocks = d->hm.session_blocks;
	out.max_mtu = xsk_max_path_mtu(d);
	return reply(r, &out, sizeof(out));
}

/* BLOCK: the map of a block of the session's host memory; another's (or
 * none) is refused, whatever it holds. */
static int op_block(struct ctl_req *r)
{
	struct xhca_block_info out = { .block = in_u32(r), .pages = XHCA_BLOCK_PAGES };
	int fd = hm_block_fd(r->d, out.block, r->c->session);

	if (fd < 0)
		return errf(r->err, sizeof(r->err), -EPERM, "block %u: not a block of this "
			    "session's host memory", out.block);
	r->out_fd = fd;
	return reply(r, &out, sizeof(out));
}

/* The session's send doorbell: an eventfd it rings after posting. */
static int op_sq_doorbell(struct ctl_req *r)
{
	struct session *s = session_find(r->d, r->c->session);

	if (!s || r->in_fd < 0)
		return errf(r->err, sizeof(r->err), -EINVAL,
			    "sq doorbell: send an eventfd along");
	if (s->sq_dbfd >= 0)
		close(s->sq_dbfd);
	s->sq_dbfd = r->in_fd; /* the session keeps it */
	r->in_fd = -1;
	return 0;
}

/* ---- host memory, PDs, memory regions ---------------------------------------- */

/* An allocation's reply: its header, then its pages as runs. */
static int reply_alloc(struct ctl_req *r, const struct hm_alloc *al)
{
	struct xhca_alloc a = { .id = al->id, .len = (__u64)al->npages * XHCA_PAGE_SIZE,
				.npages = al->npages };
	struct xhca_alloc_run *runs;
	size_t sz;
	__u8 *msg;

	for (__u32 i = 0; i < al->npages; i++)
		if (!i || al->pages[i] != al->pages[i - 1] + 1)
			a.nruns++;
	sz = sizeof(a) + (size_t)a.nruns * sizeof(*runs);
	msg = calloc(1, sz);
	if (!msg)
		return errf(r->err, sizeof(r->err), -ENOMEM, "alloc: out of memory");
	runs = (struct xhca_alloc_run *)(msg + sizeof(a));
	for (__u32 i = 0, k = 0; i < al->npages; i++) {
		if (i && al->pages[i] == al->pages[i - 1] + 1) {
			runs[k - 1].count++;
			continue;
		}
		runs[k].page = al->pages[i];
		runs[k++].count = 1;
	}
	a.flags = al->contiguous ? XHCA_ALLOC_CONTIG : 0;
	memcpy(msg, &a, sizeof(a));
	r->out = msg;
	r->out_len = (__u32)sz;
	return 0;
}

/* A session at its host memory limit: ENOMEM, saying which. */
static int alloc_quota(struct ctl_req *r, __u64 len)
{
	return errf(r->err, sizeof(r->err), -ENOMEM, "alloc: %llu bytes more would take this "
		    "session past its host memory limit (%u MiB, xhcad --session-mb); free "
		    "buffers", (unsigned long long)len,
		    r->d->hm.session_blocks * (XHCA_BLOCK_PAGES * XHCA_PAGE_SIZE >> 20));
}

/* ALLOC: a new allocation of the session, or (XHCA_ALLOC_JOIN, its list
 * after the request) one holding the pages of earlier ones too. */
static int op_alloc(struct ctl_req *r)
{
	const struct xhca_alloc_join *join =
		(const void *)((const __u8 *)r->in + sizeof(struct xhca_alloc));
	struct xhcad *d = r->d;
	struct xhca_alloc a;
	struct hm_alloc *al;

	memcpy(&a, r->in, sizeof(a));
	if (a.flags == XHCA_ALLOC_JOIN) {
		if (!a.nruns || r->in_len != sizeof(a) + (__u64)a.nruns * sizeof(*join))
			return errf(r->err, sizeof(r->err), -EINVAL,
				    "alloc: a join names its allocations after the request");
		al = hm_alloc_join(d, a.len, r->c->session, join, a.nruns);
		if (!al && errno == EDQUOT)
			return alloc_quota(r, a.len);
		if (!al)
			return errf(r->err, sizeof(r->err), -errno, "alloc: join of %u allocations "
				    "in %llu bytes: %s", a.nruns, (unsigned long long)a.len,
				    strerror(errno));
		return reply_alloc(r, al);
	}
	if (r->in_len != sizeof(a))
		return errf(r->err, sizeof(r->err), -EINVAL, "bad request size");
	if (a.flags & ~(XHCA_ALLOC_SCATTER | XHCA_ALLOC_CONTIG) ||
	    (a.flags & XHCA_ALLOC_SCATTER && a.flags & XHCA_ALLOC_CONTIG))
		return errf(r->err, sizeof(r->err), -EINVAL, "alloc: bad flags 0x%x: give scatter "
			    "or contig, not both", a.flags);
	if (!a.len)
		return errf(r->err, sizeof(r->err), -EINVAL, "alloc: length 0");
	al = hm_alloc(d, a.len, r->c->session, a.flags);
	if (!al && errno == EDQUOT)
		return alloc_quota(r, a.len);
	if (!al)
		return errf(r->err, sizeof(r->err), -ENOMEM, "alloc: no %llu bytes free in host "
			    "memory (%llu of %llu in use); free buffers or start xhcad with a "
			    "larger --hostmem-mb", (unsigned long long)a.len,
			    (unsigned long long)d->hm.used, (unsigned long long)d->hm.bytes);
	return reply_alloc(r, al);
}

static int op_free(struct ctl_req *r)
{
	__u32 id = in_u32(r);
	const struct hm_alloc *a = hm_find(r->d, id);
	int rc;

	if (a && a->owner == r->c->session && a->ring)
		return errf(r->err, sizeof(r->err), -EBUSY, "free: buffer %u is the ring of a "
			    "queue of this session: it goes when the queue is destroyed", id);
	rc = mem_free(r->d, id, r->c->session);

	return rc ? errf(r->err, sizeof(r->err), rc, "free: no buffer %u in this session", id)
		  : 0;
}

static int op_pd_alloc(struct ctl_req *r)
{
	__u32 id;
	int rc = pd_alloc(r->d, r->c->session, &id);

	return rc ? errf(r->err, sizeof(r->err), rc, "pd alloc: out of memory")
		  : reply(r, &id, sizeof(id));
}

static int op_pd_dealloc(struct ctl_req *r)
{
	return pd_dealloc(r->d, r->c->session, in_u32(r), r->err, sizeof(r->err));
}

static int op_mr_reg(struct ctl_req *r)
{
	struct xhca_mr_attr a;
	int rc;

	memcpy(&a, r->in, sizeof(a));
	rc = mr_reg(r->d, r->c->session, &a, r->err, sizeof(r->err));
	return rc ? rc : reply(r, &a, sizeof(a));
}

static int op_mr_rereg(struct ctl_req *r)
{
	struct xhca_mr_attr a;
	int rc;

	memcpy(&a, r->in, sizeof(a));
	rc = mr_rereg(r->d, r->c->session, &a, r->err, sizeof(r->err));
	return rc ? rc : reply(r, &a, sizeof(a));
}

static int op_mw_alloc(struct ctl_req *r)
{
	struct xhca_mw_req a;
	int rc;

	memcpy(&a, r->in, sizeof(a));
	rc = mw_alloc(r->d, r->c->session, &a, r->err, sizeof(r->err));
	return rc ? rc : reply(r, &a, sizeof(a));
}

static int op_mw_dealloc(struct ctl_req *r)
{
	return mw_dealloc(r->d, r->c->session, in_u32(r), r->err, sizeof(r->err));
}

static int op_mr_dereg(struct ctl_req *r)
{
	return mr_dereg(r->d, r->c->session, in_u32(r), r->err, sizeof(r->err));
}

static int op_mr_show(struct ctl_req *r)
{
	struct xhca_mr_info *mi = NULL;
	__u32 n = 0;
	int rc = mr_show(r->d, r->c->session, &mi, &n);

	if (rc)
		errf(r->err, sizeof(r->err), rc, "mr show: out of memory");
	return reply_array(r, mi, n, sizeof(*mi), rc);
}

static int op_mr_read(struct ctl_req *r)
{
	struct xhca_mr_io io;
	void *out = NULL;
	int rc;

	memcpy(&io, r->in, sizeof(io));
	rc = mr_read(r->d, r->c->session, &io, &out, r->err, sizeof(r->err));
	return reply_array(r, out, io.len, 1, rc);
}

/* ---- CQs and SRQs ----------------------------------------------------------- */

static int op_cq_create(struct ctl_req *r)
{
	struct xhca_cq_attr a;
	int rc, app = !!r->c->session;

	memcpy(&a, r->in, sizeof(a));
	rc = cq_create(r->d, r->c->session, &a, app ? r->in_fd : -1, r->err, sizeof(r->err));
	if (rc)
		return rc;
	if (app) {
		r->in_fd = -1; /* the CQ keeps it */
		/* the doorbell: for an application (the CLI's CQs are xhcad's own) */
		r->out_fd = cq_find(r->d, a.cq)->dbfd;
	}
	return reply(r, &a, sizeof(a));
}

static int op_cq_resize(struct ctl_req *r)
{
	struct xhca_cq_attr a;
	struct cq *cq;
	int rc;

	memcpy(&a, r->in, sizeof(a));
	cq = cq_find(r->d, a.cq);
	rc = cq_resize(r->d, r->c->session, &a, cq ? sq_in_flight(r->d, cq) : 0, r->err,
		       sizeof(r->err));
	return rc ? rc : reply(r, &a, sizeof(a));
}

static int op_cq_destroy(struct ctl_req *r)
{
	return cq_destroy(r->d, in_u32(r), r->c->session, r->err, sizeof(r->err));
}

/* A resumed session's CQ: its application's eventfd again. */
static int op_cq_rebind(struct ctl_req *r)
{
	int rc = cq_rebind(r->d, in_u32(r), r->c->session, r->in_fd, r->err, sizeof(r->err));

	if (!rc)
		r->in_fd = -1; /* the CQ keeps it */
	return rc;
}

static int op_cq_poll(struct ctl_req *r)
{
	struct xhca_cq_entry *v = NULL;
	struct xhca_cq_poll p;
	__u32 n = 0;
	int rc;

	memcpy(&p, r->in, sizeof(p));
	rc = cq_poll(r->d, &p, &v, &n, r->err, sizeof(r->err));
	return reply_array(r, v, n, sizeof(*v), rc);
}

static int op_cq_show(struct ctl_req *r)
{
	struct xhca_cq_info *v = NULL;
	__u32 n = 0;
	int rc = cq_show(r->d, r->c->session, &v, &n);

	if (rc)
		errf(r->err, sizeof(r->err), rc, "cq show: out of memory");
	return reply_array(r, v, n, sizeof(*v), rc);
}

static int op_srq_create(struct ctl_req *r)
{
	struct xhca_srq_attr a;
	int rc;

	memcpy(&a, r->in, sizeof(a));
	rc = srq_create(r->d, r->c->session, &a, r->err, sizeof(r->err));
	return rc ? rc : reply(r, &a, sizeof(a));
}

static int op_srq_destroy(struct ctl_req *r)
{
	return srq_destroy(r->d, in_u32(r), r->c->session, r->err, sizeof(r->err));
}

/* ---- flow queues ------------------------------------------------------------- */

static int op_flowq_set(struct ctl_req *r)
{
	struct xhca_flowq_set s;
	struct xhca_flowq_info fi;
	int rc;

	memcpy(&s, r->in, sizeof(s));
	rc = flowq_set(r->d, &s, r->err, sizeof(r->err));
	if (rc)
		return rc;
	flowq_info(r->d, s.flowq, &fi);
	return reply(r, &fi, sizeof(fi));
}

static int op_flowq_show(struct ctl_req *r)
{
	struct xhca_flowq_info fi[XHCA_FLOWQ_MAX];

	for (__u32 f = 0; f < r->d->nflowq; f++)
		flowq_info(r->d, f, &fi[f]);
	return reply(r, fi, r->d->nflowq * (__u32)sizeof(fi[0]));
}

/* ---- multicast ----------------------------------------------------------------- */

static void mcast_req(const struct ctl_req *r, struct xhca_mcast_req *m)
{
	memcpy(m, r->in, sizeof(*m));
	m->dev[sizeof(m->dev) - 1] = 0;
}

static int op_mcast_create(struct ctl_req *r)
{
	struct xhca_mcast_info mi;
	struct xhca_mcast_req m;
	int rc;

	mcast_req(r, &m);
	rc = mcast_create(r->d, &m, &mi, r->err, sizeof(r->err));
	return rc ? rc : reply(r, &mi, sizeof(mi));
}

static int op_mcast_destroy(struct ctl_req *r)
{
	struct xhca_mcast_req m;

	mcast_req(r, &m);
	return mcast_destroy(r->d, &m, r->err, sizeof(r->err));
}

static int op_mcast_attach(struct ctl_req *r)
{
	struct xhca_mcast_req m;

	mcast_req(r, &m);
	return mcast_attach(r->d, &m, r->c->session, r->err, sizeof(r->err));
}

static int op_mcast_detach(struct ctl_req *r)
{
	struct xhca_mcast_req m;

	mcast_req(r, &m);
	return mcast_detach(r->d, &m, r->c->session, r->err, sizeof(r->err));
}

static int op_mcast_show(struct ctl_req *r)
{
	struct xhca_mcast_info *mi = NULL;
	__u32 n = 0;
	int rc = mcast_show(r->d, &mi, &n);

	if (rc)
		errf(r->err, sizeof(r->err), rc, "mcast show: out of memory");
	return reply_array(r, mi, n, sizeof(*mi), rc);
}

/* ---- the proxy QP: filters, the proxy ------------------------------------------ */

static int op_filter_add(struct ctl_req *r)
{
	struct xhca_filter f;
	int rc;

	memcpy(&f, r->in, sizeof(f));
	rc = filter_add(r->d, &f, r->c->session, r->err, sizeof(r->err));
	return rc ? rc : reply(r, &f, sizeof(f));
}

static int op_filter_del(struct ctl_req *r)
{
	return filter_del(r->d, in_u32(r), r->c->session, r->err, sizeof(r->err));
}

static int op_filter_show(struct ctl_req *r)
{
	struct xhca_filter *v = NULL;
	__u32 n = 0;
	int rc = filter_show(r->d, in_u32(r), r->c->session, &v, &n, r->err, sizeof(r->err));

	return reply_array(r, v, n, sizeof(*v), rc);
}

static int op_proxy_show(struct ctl_req *r)
{
	struct xhca_proxy_info pi;

	proxy_info(r->d, &pi);
	return reply(r, &pi, sizeof(pi));
}

static int op_proxy_set(struct ctl_req *r)
{
	struct xhca_proxy_set s;

	memcpy(&s, r->in, sizeof(s));
	if (s.paused > 1 || s.pad)
		return errf(r->err, sizeof(r->err), -EINVAL, "proxy set: paused is 0 or 1");
	proxy_set(r->d, &s);
	return op_proxy_show(r);
}

/* ---- the connection manager (cm.h) --------------------------------------------- */

static int op_cm_channel(struct ctl_req *r)
{
	__u32 chan;
	int rc = cm_channel(r->d, r->c->session, &chan, &r->out_fd);

	if (rc)
		return errf(r->err, sizeof(r->err), rc, "cm channel: %s", strerror(-rc));
	r->out_fd_close = 1;
	return reply(r, &chan, sizeof(chan));
}

static int op_cm_channel_destroy(struct ctl_req *r)
{
	return cm_channel_destroy(r->d, r->c->session, in_u32(r), r->err, sizeof(r->err));
}

static int op_cm_id(struct ctl_req *r)
{
	struct xhca_cm_id a;
	int rc;

	memcpy(&a, r->in, sizeof(a));
	rc = cm_id_create(r->d, r->c->session, &a, r->err, sizeof(r->err));
	return rc ? rc : reply(r, &a, sizeof(a));
}

/* The requests that take a struct and answer nothing, by op. */
static int op_cm(struct ctl_req *r, __u32 op)
{
	struct xhcad *d = r->d;
	__u32 s = r->c->session;
	char *e = r->err;
	size_t n = sizeof(r->err);
	union {
		struct xhca_cm_migrate mig;
		struct xhca_cm_listen lis;
		struct xhca_cm_conn conn;
		struct xhca_cm_reject rej;
		struct xhca_cm_notify nfy;
	} u;

	memcpy(&u, r->in, r->in_len < sizeof(u) ? r->in_len : sizeof(u));
	switch (op) {
	case XHCA_CTL_CM_MIGRATE: return cm_migrate(d, s, &u.mig, e, n);
	case XHCA_CTL_CM_LISTEN: return cm_listen(d, s, &u.lis, e, n);
	case XHCA_CTL_CM_CONNECT: return cm_connect(d, s, &u.conn, e, n);
	case XHCA_CTL_CM_ACCEPT: return cm_accept(d, s, &u.conn, e, n);
	case XHCA_CTL_CM_REJECT: return cm_reject(d, s, &u.rej, e, n);
	case XHCA_CTL_CM_NOTIFY: return cm_notify(d, s, &u.nfy, e, n);
	case XHCA_CTL_CM_ESTABLISH: return cm_establish(d, s, in_u32(r), e, n);
	case XHCA_CTL_CM_DISCONNECT: return cm_disconnect(d, s, in_u32(r), e, n);
	case XHCA_CTL_CM_DESTROY: return cm_destroy(d, s, in_u32(r), e, n);
	default: return -EOPNOTSUPP;
	}
}

static int op_cm_migrate(struct ctl_req *r) { return op_cm(r, XHCA_CTL_CM_MIGRATE); }
static int op_cm_listen(struct ctl_req *r) { return op_cm(r, XHCA_CTL_CM_LISTEN); }
static int op_cm_connect(struct ctl_req *r) { return op_cm(r, XHCA_CTL_CM_CONNECT); }
static int op_cm_accept(struct ctl_req *r) { return op_cm(r, XHCA_CTL_CM_ACCEPT); }
static int op_cm_reject(struct ctl_req *r) { return op_cm(r, XHCA_CTL_CM_REJECT); }
static int op_cm_notify(struct ctl_req *r) { return op_cm(r, XHCA_CTL_CM_NOTIFY); }
static int op_cm_establish(struct ctl_req *r) { return op_cm(r, XHCA_CTL_CM_ESTABLISH); }
static int op_cm_disconnect(struct ctl_req *r) { return op_cm(r, XHCA_CTL_CM_DISCONNECT); }
static int op_cm_destroy(struct ctl_req *r) { return op_cm(r, XHCA_CTL_CM_DESTROY); }

/* ---- the table ------------------------------------------------------------------ */

/* Who may make a request: by default root's client (the CLI: every object)
 * and application sessions (each on its own objects only); flags narrow or
 * widen that. Anyone else the socket lets in may only say hello and ask the
 * status. */
enum {
	CTL_SESSION = 1 << 0,	/* an application session's only (after HELLO) */
	CTL_RO = 1 << 1,	/* changes nothing a restart keeps (state.c) */
	CTL_OPT = 1 << 2,	/* the payload is optional: size bytes or none */
	CTL_MIN = 1 << 3,	/* size bytes at least: the handler checks the rest */
	CTL_ADMIN = 1 << 4,	/* root's client only: it changes what every session shares */
	CTL_ANYONE = 1 << 5,	/* anyone connected */
};

/* Every request xhcad serves: its handler, its payload's size (exactly,
 * unless a flag says otherwise) and who may make it. */
static const struct ctl_op {
	const char *name;
	ctl_fn fn;
	__u32 size;
	__u32 flags;
} ops[] = {
	[XHCA_CTL_STATUS] = { "status", op_status, 0, CTL_RO | CTL_ANYONE },
	[XHCA_CTL_QP_CREATE] = { "qp create", op_qp_create, sizeof(struct xhca_qp_attr), 0 },
	[XHCA_CTL_QP_MODIFY] = { "qp modify", op_qp_modify, sizeof(struct xhca_qp_attr), 0 },
	[XHCA_CTL_QP_DESTROY] = { "qp destroy", op_qp_destroy, sizeof(__u32), 0 },
	[XHCA_CTL_QP_SHOW] = { "qp show", op_qp_show, sizeof(__u32), CTL_RO | CTL_OPT },
	[XHCA_CTL_STATS] = { "stats", op_stats, sizeof(struct xhca_stats_req), CTL_RO | CTL_OPT },
	[XHCA_CTL_HELLO] = { "hello", op_hello, sizeof(struct xhca_hello), CTL_ANYONE },
	[XHCA_CTL_ALLOC] = { "alloc", op_alloc, sizeof(struct xhca_alloc), CTL_SESSION | CTL_MIN },
	[XHCA_CTL_FREE] = { "free", op_free, sizeof(__u32), CTL_SESSION },
	[XHCA_CTL_BLOCK] = { "block", op_block, sizeof(__u32), CTL_SESSION },
	[XHCA_CTL_CQ_CREATE] = { "cq create", op_cq_create, sizeof(struct xhca_cq_attr), 0 },
	[XHCA_CTL_CQ_DESTROY] = { "cq destroy", op_cq_destroy, sizeof(__u32), 0 },
	[XHCA_CTL_FLOWQ_SET] = { "flowq set", op_flowq_set, sizeof(struct xhca_flowq_set),
				 CTL_ADMIN },
	[XHCA_CTL_FLOWQ_SHOW] = { "flowq show", op_flowq_show, 0, CTL_RO },
	[XHCA_CTL_PD_ALLOC] = { "pd alloc", op_pd_alloc, 0, CTL_SESSION },
	[XHCA_CTL_PD_DEALLOC] = { "pd dealloc", op_pd_dealloc, sizeof(__u32), CTL_SESSION },
	[XHCA_CTL_MR_REG] = { "mr reg", op_mr_reg, sizeof(struct xhca_mr_attr), 0 },
	[XHCA_CTL_MR_DEREG] = { "mr dereg", op_mr_dereg, sizeof(__u32), 0 },
	[XHCA_CTL_MR_SHOW] = { "mr show", op_mr_show, 0, CTL_RO },
	[XHCA_CTL_MR_READ] = { "mr read", op_mr_read, sizeof(struct xhca_mr_io), CTL_RO },
	[XHCA_CTL_CQ_REBIND] = { "cq rebind", op_cq_rebind, sizeof(__u32), CTL_SESSION },
	[XHCA_CTL_MCAST_CREATE] = { "mcast create", op_mcast_create,
				    sizeof(struct xhca_mcast_req), CTL_ADMIN },
	[XHCA_CTL_MCAST_DESTROY] = { "mcast destroy", op_mcast_destroy,
				     sizeof(struct xhca_mcast_req), CTL_ADMIN },
	[XHCA_CTL_MCAST_ATTACH] = { "mcast attach", op_mcast_attach,
				    sizeof(struct xhca_mcast_req), 0 },
	[XHCA_CTL_MCAST_DETACH] = { "mcast detach", op_mcast_detach,
				    sizeof(struct xhca_mcast_req), 0 },
	[XHCA_CTL_MCAST_SHOW] = { "mcast show", op_mcast_show, 0, CTL_RO },
	[XHCA_CTL_FILTER_ADD] = { "filter add", op_filter_add, sizeof(struct xhca_filter), 0 },
	[XHCA_CTL_FILTER_DEL] = { "filter del", op_filter_del, sizeof(__u32), 0 },
	[XHCA_CTL_FILTER_SHOW] = { "filter show", op_filter_show, sizeof(__u32), CTL_RO },
	[XHCA_CTL_PROXY_SHOW] = { "proxy show", op_proxy_show, 0, CTL_RO },
	[XHCA_CTL_PROXY_SET] = { "proxy set", op_proxy_set, sizeof(struct xhca_proxy_set),
				 CTL_ADMIN },
	/* the CLI's CQs, which xhcad owns (an application polls its rings) */
	[XHCA_CTL_CQ_POLL] = { "cq poll", op_cq_poll, sizeof(struct xhca_cq_poll), CTL_ADMIN },
	[XHCA_CTL_CQ_SHOW] = { "cq show", op_cq_show, 0, CTL_RO },
	[XHCA_CTL_SQ_DOORBELL] = { "sq doorbell", op_sq_doorbell, 0, CTL_SESSION },
	[XHCA_CTL_SRQ_CREATE] = { "srq create", op_srq_create, sizeof(struct xhca_srq_attr), 0 },
	[XHCA_CTL_SRQ_DESTROY] = { "srq destroy", op_srq_destroy, sizeof(__u32), 0 },
	/* the connection manager: CTL_RO, nothing of it is kept over a restart */
#define CM_OP(name, fn, size) { name, fn, size, CTL_SESSION | CTL_RO }
	[XHCA_CTL_CM_CHANNEL] = CM_OP("cm channel", op_cm_channel, 0),
	[XHCA_CTL_CM_CHANNEL_DESTROY] = CM_OP("cm channel destroy", op_cm_channel_destroy,
					      sizeof(__u32)),
	[XHCA_CTL_CM_ID] = CM_OP("cm id", op_cm_id, sizeof(struct xhca_cm_id)),
	[XHCA_CTL_CM_MIGRATE] = CM_OP("cm migrate", op_cm_migrate, sizeof(struct xhca_cm_migrate)),
	[XHCA_CTL_CM_LISTEN] = CM_OP("cm listen", op_cm_listen, sizeof(struct xhca_cm_listen)),
	[XHCA_CTL_CM_CONNECT] = CM_OP("cm connect", op_cm_connect, sizeof(struct xhca_cm_conn)),
	[XHCA_CTL_CM_ACCEPT] = CM_OP("cm accept", op_cm_accept, sizeof(struct xhca_cm_conn)),
	[XHCA_CTL_CM_REJECT] = CM_OP("cm reject", op_cm_reject, sizeof(struct xhca_cm_reject)),
	[XHCA_CTL_CM_ESTABLISH] = CM_OP("cm establish", op_cm_establish, sizeof(__u32)),
	[XHCA_CTL_CM_DISCONNECT] = CM_OP("cm disconnect", op_cm_disconnect, sizeof(__u32)),
	[XHCA_CTL_CM_DESTROY] = CM_OP("cm destroy", op_cm_destroy, sizeof(__u32)),
	[XHCA_CTL_CM_NOTIFY] = CM_OP("cm notify", op_cm_notify, sizeof(struct xhca_cm_notify)),
#undef CM_OP
	[XHCA_CTL_CQ_RESIZE] = { "cq resize", op_cq_resize, sizeof(struct xhca_cq_attr),
				 CTL_SESSION },
	[XHCA_CTL_MR_REREG] = { "mr rereg", op_mr_rereg, sizeof(struct xhca_mr_attr), CTL_SESSION },
	[XHCA_CTL_MW_ALLOC] = { "mw alloc", op_mw_alloc, sizeof(struct xhca_mw_req), CTL_SESSION },
	[XHCA_CTL_MW_DEALLOC] = { "mw dealloc", op_mw_dealloc, sizeof(__u32), CTL_SESSION },
};

/* Whether the request may be served: 0, or -errno with r->err saying why. */
static int admit(struct ctl_req *r, const struct xhca_ctl_hdr *h, const struct ctl_op **opp)
{
	const struct ctl_op *op = h->op < sizeof(ops) / sizeof(ops[0]) ? &ops[h->op] : NULL;

	if (h->version != XHCA_CTL_VERSION)
		return errf(r->err, sizeof(r->err), -EPROTO, "this client speaks control protocol "
			    "%u, xhcad %u: use the xhca tools and library of xhcad's release",
			    h->version, XHCA_CTL_VERSION);
	if (!op || !op->fn)
		return errf(r->err, sizeof(r->err), -EOPNOTSUPP,
			    "unknown request %u: xhca and xhcad versions differ", h->op);
	if (op->flags & CTL_OPT ? h->len && h->len != op->size
	    : op->flags & CTL_MIN ? h->len < op->size : h->len != op->size)
		return errf(r->err, sizeof(r->err), -EINVAL, "%s: bad request size %u (%s%u)",
			    op->name, h->len, op->flags & CTL_MIN ? "at least " : "", op->size);
	if ((op->flags & CTL_SESSION) && !r->c->session)
		return errf(r->err, sizeof(r->err), -EPERM, "%s: only an application session "
			    "(libxhca, after HELLO) may do this", op->name);
	if ((op->flags & CTL_ADMIN) && (r->c->session || !r->c->admin))
		return errf(r->err, sizeof(r->err), -EPERM, "%s: it changes what every "
			    "application shares: only root's xhca may do this", op->name);
	if (!(op->flags & CTL_ANYONE) && !r->c->session && !r->c->admin)
		return errf(r->err, sizeof(r->err), -EPERM, "%s: only root, or an application "
			    "session (libxhca), may do this; run xhca as root", op->name);
	*opp = op;
	return 0;
}

void ctl_client_init(struct client *c, int fd, __u32 uid, int admin)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->uid = uid;
	c->admin = admin;
	c->in_fd = c->out_fd = -1;
}

static void in_reset(struct client *c)
{
	free(c->in);
	c->in = NULL;
	c->got = 0;
	if (c->in_fd >= 0)
		close(c->in_fd);
	c->in_fd = -1;
}

static void out_reset(struct client *c)
{
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_sent = 0;
	if (c->out_fd >= 0)
		close(c->out_fd);
	c->out_fd = -1;
}

void ctl_client_free(struct client *c)
{
	in_reset(c);
	out_reset(c);
	close(c->fd);
	c->fd = -1;
}

int ctl_wants_out(const struct client *c)
{
	return c->out != NULL;
}

int ctl_stalled(const struct client *c, __u64 now)
{
	return c->since && now - c->since > CTL_STALL_NS;
}

/* What the socket has of the request, without waiting: 1 once it is whole,
 * 0 for more to come, -errno when the connection is done (a header that is
 * not ours, a payload over the limit: no message boundary can be found). */
static int read_some(struct client *c)
{
	union xhca_fd_cmsg cm;
	const __u32 hl = sizeof(c->hdr);

	for (;;) {
		int in_hdr = c->got < hl;
		struct iovec iov = {
			.iov_base = in_hdr ? (__u8 *)&c->hdr + c->got : c->in + (c->got - hl),
			.iov_len = in_hdr ? hl - c->got : hl + c->hdr.len - c->got,
		};
		/* (room for one descriptor: more than one the kernel drops) */
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.buf,
				      .msg_controllen = CMSG_SPACE(sizeof(int)) };
		ssize_t n;

		if (!in_hdr && c->got == hl + c->hdr.len)
			return 1;
		n = recvmsg(c->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		xhca_ctl_take_fd(&msg, &c->in_fd);
		if (!n)
			return -ECONNRESET;
		c->got += (__u32)n;
		if (!in_hdr || c->got < hl)
			continue;
		if (c->hdr.magic != XHCA_CTL_MAGIC)
			return -EBADMSG;
		if (c->hdr.len > XHCA_CTL_MAX_PAYLOAD)
			return -EMSGSIZE;
		/* (one spare NUL: a string that came without one is one) */
		c->in = calloc(1, c->hdr.len + 1);
		if (!c->in)
			return -ENOMEM;
	}
}

/* Sends what is left of the reply, without waiting: 0 (all sent, or the
 * rest waits for room), -errno when the connection is done. */
static int send_some(struct client *c)
{
	union xhca_fd_cmsg cm;

	while (c->out_sent < c->out_len) {
		struct iovec iov = { c->out + c->out_sent, c->out_len - c->out_sent };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n;

		if (c->out_fd >= 0)
			xhca_ctl_put_fd(&msg, &cm, c->out_fd);
		n = sendmsg(c->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		if (c->out_fd >= 0) { /* it went with the first bytes */
			close(c->out_fd);
			c->out_fd = -1;
		}
		c->out_sent += (__u32)n;
	}
	out_reset(c);
	return 0;
}

/* The reply to a request, queued and sent as far as the socket takes it:
 * header and payload, and a copy of fd with the first byte. */
static int reply_queue(struct client *c, __u16 op, __u16 version, __s32 err, const void *buf,
		       __u32 len, int fd)
{
	struct xhca_ctl_hdr h = { .magic = XHCA_CTL_MAGIC, .op = op, .version = version,
				  .len = len, .err = err };

	c->out = malloc(sizeof(h) + len);
	if (!c->out)
		return -ENOMEM;
	memcpy(c->out, &h, sizeof(h));
	if (len)
		memcpy(c->out + sizeof(h), buf, len);
	c->out_len = sizeof(h) + len;
	c->out_sent = 0;
	c->out_fd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1;
	if (fd >= 0 && c->out_fd < 0) {
		out_reset(c);
		return -errno;
	}
	return send_some(c);
}

/* Serves the request read whole. Returns 0, or -errno when the connection
 * is done. */
static int serve(struct xhcad *d, struct client *c)
{
	struct ctl_req r = { .d = d, .c = c, .in = c->in, .in_len = c->hdr.len,
			     .in_fd = c->in_fd, .out_fd = -1 };
	const struct ctl_op *op = NULL;
	struct xhca_ctl_hdr h = c->hdr;
	int rc;

	c->in_fd = -1; /* the request's now: a handler may keep it */
	rc = admit(&r, &h, &op);
	if (!rc)
		rc = op->fn(&r);
	if (rc) {
		const char *msg = r.err[0] ? r.err : strerror(-rc);

		/* in the client's own version: one of another can read it */
		rc = reply_queue(c, h.op, h.version, rc, msg, (__u32)strlen(msg) + 1, -1);
	} else {
		rc = reply_queue(c, h.op, h.version, 0, r.out, r.out_len, r.out_fd);
	}
	if (r.out_fd_close && r.out_fd >= 0)
		close(r.out_fd);
	/* What a restart must know may have changed (state.c): saved by the loop. */
	if (op && !(op->flags & CTL_RO))
		d->state_dirty = 1;
	if (r.in_fd >= 0)
		close(r.in_fd);
	free(r.out);
	in_reset(c);
	return rc;
}

/* Reads what came, serving a whole request; or (a reply half sent) sends
 * the rest, reading nothing until it is out. Nothing here waits: a
 * message left half sent or half read past CTL_STALL_NS drops the
 * client (ctl_stalled, the loop's housekeeping). */
int ctl_serve_one(struct xhcad *d, struct client *c)
{
	int rc;

	if (c->out) {
		rc = send_some(c);
	} else {
		rc = read_some(c);
		if (rc > 0)
			rc = serve(d, c);
	}
	if (!rc)
		c->since = c->got || c->out ? (c->since ? c->since : now_ns()) : 0;
	return rc;
}
