/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The control socket: one listening AF_UNIX stream socket per interface.
 * Requests are served one at a time by the daemon's single thread (loop.c):
 * xhcad is the only writer of the maps, and serving in order keeps every
 * request atomic with respect to the others and to the data path.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "ctl_server.h"
#include "log.h"
#include "xhcad.h"

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
	chmod(d->sock_path, 0600);
	return fd;
}

static int reply_err(int fd, __u32 op, int rc, const char *msg)
{
	return xhca_ctl_send(fd, op, rc, msg, strlen(msg) + 1);
}

void fill_status(struct xhcad *d, struct xhca_status *s)
{
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
	s->sessions = d->nsessions;
	s->nflowq = d->nflowq;
	s->nrxq = xsk_nrxq(d);
	snprintf(s->sched, sizeof(s->sched), "%s", sched_mode_name(d->sched.mode));
	snprintf(s->xsk_mode, sizeof(s->xsk_mode), "%s", xsk_zerocopy(d) ? "zerocopy" : "copy");
	s->bus_rate = d->bus_rate;
	s->hostmem_bytes = d->hostmem_bytes;
	s->hostmem_used = d->hostmem_used;
	s->max_mrs = d->max_mrs - 1;
	s->mrs_in_use = d->mrs_in_use;
	s->fragment = (__u32)d->fragment;
	s->canary = (__u32)d->canary;
	hm_canary_scan(d);
	s->canary_violations = d->canary_violations;
	s->barriers = d->barriers;
	s->naks = d->naks;
	s->resp = d->resp;
	s->req = d->req;
	xsk_tx_stats(d, &s->tx_frames, &s->tx_full);
	mcast_status(d, s);
	xsk_account(d, s);
}

/* An allocation's reply: its header, then its pages as runs. */
static int send_alloc(int fd, __u32 op, const struct hm_alloc *al)
{
	struct xhca_alloc a = { .id = al->id, .len = (__u64)al->npages * XHCA_PAGE_SIZE,
				.npages = al->npages };
	struct xhca_alloc_run *runs;
	size_t sz;
	__u8 *msg;
	int rc;

	for (__u32 i = 0; i < al->npages; i++)
		if (!i || al->pages[i] != al->pages[i - 1] + 1)
			a.nruns++;
	sz = sizeof(a) + (size_t)a.nruns * sizeof(*runs);
	msg = calloc(1, sz);
	if (!msg)
		return reply_err(fd, op, -ENOMEM, "alloc: out of memory");
	runs = (struct xhca_alloc_run *)(msg + sizeof(a));
	for (__u32 i = 0, r = 0; i < al->npages; i++) {
		if (i && al->pages[i] == al->pages[i - 1] + 1) {
			runs[r - 1].count++;
			continue;
		}
		runs[r].page = al->pages[i];
		runs[r++].count = 1;
	}
	a.flags = al->contiguous ? XHCA_ALLOC_CONTIG : 0;
	memcpy(msg, &a, sizeof(a));
	rc = xhca_ctl_send(fd, op, 0, msg, (__u32)sz);
	free(msg);
	return rc;
}

/* Requests only an application session may make. */
static int need_session(struct client *c, __u32 op, const char *what)
{
	char msg[128];

	if (c->session)
		return 0;
	snprintf(msg, sizeof(msg), "%s: only an application session (libxhca, after HELLO) may "
		 "do this", what);
	reply_err(c->fd, op, -EPERM, msg);
	return 1;
}

/* Serves one request. Returns 0, or -errno when the connection is done. */
/* ALLOC: a new allocation of the session, or (XHCA_ALLOC_JOIN, its list
 * after the request) one holding the pages of earlier ones too. */
static int serve_alloc(struct xhcad *d, const struct client *c, int fd,
		       const struct xhca_ctl_hdr *h, const void *buf)
{
	const struct xhca_alloc_join *join =
		(const void *)((const __u8 *)buf + sizeof(struct xhca_alloc));
	char err[XHCA_ERRMSG_LEN];
	struct xhca_alloc a;
	struct hm_alloc *al;

	if (h->len < sizeof(a))
		return reply_err(fd, h->op, -EINVAL, "bad request size");
	memcpy(&a, buf, sizeof(a));
	if (a.flags == XHCA_ALLOC_JOIN) {
		if (!a.nruns || h->len != sizeof(a) + (__u64)a.nruns * sizeof(*join))
			return reply_err(fd, h->op, -EINVAL,
					 "alloc: a join names its allocations after the request");
		al = hm_alloc_join(d, a.len, c->session, join, a.nruns);
		if (!al) {
			snprintf(err, sizeof(err), "alloc: join of %u allocations in %llu bytes: %s",
				 a.nruns, (unsigned long long)a.len, strerror(errno));
			return reply_err(fd, h->op, -errno, err);
		}
		return send_alloc(fd, h->op, al);
	}
	if (h->len != sizeof(a))
		return reply_err(fd, h->op, -EINVAL, "bad request size");
	if (a.flags & ~(XHCA_ALLOC_SCATTER | XHCA_ALLOC_CONTIG) ||
	    (a.flags & XHCA_ALLOC_SCATTER && a.flags & XHCA_ALLOC_CONTIG)) {
		snprintf(err, sizeof(err), "alloc: bad flags 0x%x: give scatter or contig, not both",
			 a.flags);
		return reply_err(fd, h->op, -EINVAL, err);
	}
	al = a.len ? hm_alloc(d, a.len, c->session, a.flags) : NULL;
	if (!al) {
		snprintf(err, sizeof(err), a.len ? "alloc: no %llu bytes free in host memory (%llu of "
			 "%llu in use); free buffers or start xhcad with a larger --hostmem-mb"
			 : "alloc: length 0", (unsigned long long)a.len,
			 (unsigned long long)d->hostmem_used, (unsigned long long)d->hostmem_bytes);
		return reply_err(fd, h->op, a.len ? -ENOMEM : -EINVAL, err);
	}
	return send_alloc(fd, h->op, al);
}

int ctl_serve_one(struct xhcad *d, struct client *c)
{
	char err[XHCA_ERRMSG_LEN] = "";
	struct xhca_ctl_hdr h;
	void *buf = NULL;
	int rc, fd = c->fd, in_fd = -1;

	rc = xhca_ctl_recv_fd(fd, &h, &buf, &in_fd);
	if (rc)
		return rc;
#define WANT(type) \
	if (h.len != sizeof(type)) { rc = reply_err(fd, h.op, -EINVAL, "bad request size"); break; }
	switch (h.op) {
	case XHCA_CTL_STATUS: {
		struct xhca_status s;

		fill_status(d, &s);
		rc = xhca_ctl_send(fd, h.op, 0, &s, sizeof(s));
		break;
	}
	case XHCA_CTL_QP_CREATE:
	case XHCA_CTL_QP_MODIFY: {
		struct xhca_qp_attr a;

		WANT(a);
		memcpy(&a, buf, sizeof(a));
		rc = h.op == XHCA_CTL_QP_CREATE ? qp_create(d, &a, c->session, err, sizeof(err))
						: qp_modify(d, &a, c->session, err, sizeof(err));
		rc = rc ? reply_err(fd, h.op, rc, err) : xhca_ctl_send(fd, h.op, 0, &a, sizeof(a));
		break;
	}
	case XHCA_CTL_QP_DESTROY: {
		__u32 qpn;

		WANT(qpn);
		memcpy(&qpn, buf, sizeof(qpn));
		rc = qp_destroy(d, qpn, c->session, err, sizeof(err));
		rc = rc ? reply_err(fd, h.op, rc, err) : xhca_ctl_send(fd, h.op, 0, NULL, 0);
		break;
	}
	case XHCA_CTL_QP_SHOW: {
		struct xhca_qp_info *qi = NULL;
		__u32 qpn = 0, n = 0;

		if (h.len == sizeof(qpn))
			memcpy(&qpn, buf, sizeof(qpn));
		rc = qp_show(d, qpn, &qi, &n, err, sizeof(err));
		rc = rc ? reply_err(fd, h.op, rc, err[0] ? err : strerror(-rc))
			: xhca_ctl_send(fd, h.op, 0, qi, n * sizeof(*qi));
		free(qi);
		break;
	}
	case XHCA_CTL_STATS: {
		struct xhca_stats_reply *r = calloc(1, sizeof(*r));
		struct xhca_stats_req rq = {};

		if (!r) {
			rc = reply_err(fd, h.op, -ENOMEM, "out of memory");
			break;
		}
		if (h.len == sizeof(rq))
			memcpy(&rq, buf, sizeof(rq));
		rc = stats_get(d, &rq, r, err, sizeof(err));
		rc = rc ? reply_err(fd, h.op, rc, err[0] ? err : strerror(-rc))
			: xhca_ctl_send(fd, h.op, 0, r, sizeof(*r));
		free(r);
		break;
	}
	case XHCA_CTL_HELLO: {
		struct xhca_hello_reply r = { .page_size = XHCA_PAGE_SIZE };
		struct xhca_hello hello;
		struct session *s;

		WANT(hello);
		memcpy(&hello, buf, sizeof(hello));
		if (hello.version != XHCA_SESSION_VERSION) {
			snprintf(err, sizeof(err), "hello: session version %u, xhcad speaks %u; use "
				 "the libxhca of this xhcad", hello.version, XHCA_SESSION_VERSION);
			rc = reply_err(fd, h.op, -EPROTO, err);
			break;
		}
		if (c->session) {
			rc = reply_err(fd, h.op, -EALREADY, "hello: this connection is a session "
				       "already");
			break;
		}
		{
			struct ucred cr;
			socklen_t crlen = sizeof(cr);

			if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) || cr.pid <= 0) {
				rc = reply_err(fd, h.op, -EPERM, "hello: cannot tell who is calling");
				break;
			}
			if (hello.resume) {
				s = session_find(d, hello.resume);
				if (!s || s->fd >= 0 || s->pid != (__u32)cr.pid ||
				    proc_start_time(s->pid) != s->start) {
					snprintf(err, sizeof(err), "hello: session %u cannot be resumed: "
						 "it ended, or it is another process's", hello.resume);
					rc = reply_err(fd, h.op, -ESRCH, err);
					break;
				}
				s->fd = fd;
				close(s->pidfd);
				s->pidfd = -1;
				pr_info("session %u: %s (pid %u) resumed\n", s->id, s->name, s->pid);
			} else {
				s = session_new(d, fd, &hello, (__u32)cr.pid);
			}
		}
		if (!s) {
			rc = reply_err(fd, h.op, -ENOMEM, "hello: out of memory");
			break;
		}
		c->session = s->id;
		r.session = s->id;
		r.hostmem_bytes = d->hostmem_bytes;
		rc = xhca_ctl_send_fd(fd, h.op, 0, &r, sizeof(r), d->m.hostmem);
		break;
	}
	case XHCA_CTL_MCAST_CREATE:
	case XHCA_CTL_MCAST_DESTROY:
	case XHCA_CTL_MCAST_ATTACH:
	case XHCA_CTL_MCAST_DETACH: {
		struct xhca_mcast_req r;
		struct xhca_mcast_info *mi = NULL;

		WANT(r);
		memcpy(&r, buf, sizeof(r));
		r.dev[sizeof(r.dev) - 1] = 0;
		if (h.op == XHCA_CTL_MCAST_CREATE) {
			mi = calloc(1, sizeof(*mi));
			rc = mi ? mcast_create(d, &r, mi, err, sizeof(err)) : -ENOMEM;
		} else if ((h.op == XHCA_CTL_MCAST_DESTROY) && c->session) {
			rc = errf(err, sizeof(err), -EPERM, "mcast destroy: groups are the CLI's to "
				  "destroy; detach the session's QPs instead");
		} else {
			rc = h.op == XHCA_CTL_MCAST_DESTROY ? mcast_destroy(d, &r, err, sizeof(err))
			     : h.op == XHCA_CTL_MCAST_ATTACH
				     ? mcast_attach(d, &r, c->session, err, sizeof(err))
				     : mcast_detach(d, &r, c->session, err, sizeof(err));
		}
		rc = rc ? reply_err(fd, h.op, rc, err[0] ? err : strerror(-rc))
			: xhca_ctl_send(fd, h.op, 0, mi, mi ? sizeof(*mi) : 0);
		free(mi);
		break;
	}
	case XHCA_CTL_MCAST_SHOW: {
		struct xhca_mcast_info *mi = NULL;
		__u32 n = 0;

		rc = mcast_show(d, &mi, &n);
		rc = rc ? reply_err(fd, h.op, rc, "mcast show: out of memory")
			: xhca_ctl_send(fd, h.op, 0, mi, n * sizeof(*mi));
		free(mi);
		break;
	}
	case XHCA_CTL_FILTER_ADD: {
		struct xhca_filter r;

		WANT(r);
		memcpy(&r, buf, sizeof(r));
		rc = filter_add(d, &r, c->session, err, sizeof(err));
		rc = rc ? reply_err(fd, h.op, rc, err) : xhca_ctl_send(fd, h.op, 0, &r, sizeof(r));
		break;
	}
	case XHCA_CTL_FILTER_DEL: {
		__u32 id;

		WANT(id);
		memcpy(&id, buf, sizeof(id));
		rc = filter_del(d, id, c->session, err, sizeof(err));
		rc = rc ? reply_err(fd, h.op, rc, err) : xhca_ctl_send(fd, h.op, 0, NULL, 0);
		break;
	}
	case XHCA_CTL_FILTER_SHOW: {
		struct xhca_filter *v = NULL;
		__u32 qpn, n = 0;

		WANT(qpn);
		memcpy(&qpn, buf, sizeof(qpn));
		rc = filter_show(d, qpn, &v, &n, err, sizeof(err));
		rc = rc ? reply_err(fd, h.op, rc, err) : xhca_ctl_send(fd, h.op, 0, v, n * sizeof(*v));
		free(v);
		break;
	}
	case XHCA_CTL_PROXY_SET: {
		struct xhca_proxy_set r;
		struct xhca_proxy_info pi;

		WANT(r);
		memcpy(&r, buf, sizeof(r));
		if (r.paused > 1 || r.pad) {
			rc = reply_err(fd, h.op, -EINVAL, "proxy set: paused is 0 or 1");
			break;
		}
		proxy_set(d, &r);
		proxy_info(d, &pi);
		rc = xhca_ctl_send(fd, h.op, 0, &pi, sizeof(pi));
		break;
	}
	case XHCA_CTL_PROXY_SHOW: {
		struct xhca_proxy_info pi;

		proxy_info(d, &pi);
		rc = xhca_ctl_send(fd, h.op, 0, &pi, sizeof(pi));
		break;
	}
	case XHCA_CTL_SQ_DOORBELL: {
		struct session *s = c->session ? session_find(d, c->session) : NULL;

		if (need_session(c, h.op, "sq doorbell"))
			break;
		if (!s || in_fd < 0) {
			rc = reply_err(fd, h.op, -EINVAL, "sq doorbell: send an eventfd along");
			break;
		}
		if (s->sq_dbfd >= 0)
			close(s->sq_dbfd);
		s->sq_dbfd = in_fd; /* the session keeps it */
		in_fd = -1;
		rc = xhca_ctl_send(fd, h.op, 0, NULL, 0);
		break;
	}
	case XHCA_CTL_CQ_REBIND: {
		__u32 id;

		WANT(id);
		if (need_session(c, h.op, "cq rebind"))
			break;
		memcpy(&id, buf, sizeof(id));
		rc = cq_rebind(d, id, c->session, in_fd, err, sizeof(err));
		if (!rc)
			in_fd = -1; /* the CQ keeps it */
		rc = rc ? reply_err(fd, h.op, rc, err) : xhca_ctl_send(fd, h.op, 0, NULL, 0);
		break;
	}
	case XHCA_CTL_ALLOC:
		if (!need_session(c, h.op, "alloc"))
			rc = serve_alloc(d, c, fd, &h, buf);
		break;
	case XHCA_CTL_FREE: {
		__u32 id;

		WANT(id);
		if (need_session(c, h.op, "free"))
			break;
		memcpy(&id, buf, sizeof(id));
		rc = mem_free(d, id, c->session);
		if (rc) {
			snprintf(err, sizeof(err), "free: no buffer %u in this session", id);
			rc = reply_err(fd, h.op, rc, err);
			break;
		}
		rc = xhca_ctl_send(fd, h.op, 0, NULL, 0);
		break;
	}
	case XHCA_CTL_PD_ALLOC: {
		__u32 id;

		if (need_session(c, h.op, "pd alloc"))
			break;
		rc = pd_alloc(d, c->session, &id);
		rc = rc ? reply_err(fd, h.op, rc, "pd alloc: out of memory")
			: xhca_ctl_send(fd, h.op, 0, &id, sizeof(id));
		break;
	}
	case XHCA_CTL_PD_DEALLOC: {
		__u32 id;

		WANT(id);
		if (need_session(c, h.op, "pd dealloc"))
			break;
		memcpy(&id, buf, sizeof(id));
		rc = pd_dealloc(d, c->session, id, err, sizeof(err));
		rc = rc ? reply_err(fd, h.op, rc, err) : xhca_ctl_send(fd, h.op, 0, NULL, 0);
		break;
	}
	case XHCA_CTL_MR_REG: {
		struct xhca_mr_attr a;

		WANT(a);
		memcpy(&a, buf, sizeof(a));
		rc = mr_reg(d, c->session, &a, err, sizeof(err));
		rc = rc ? reply_err(fd, h.op, rc, err) : xhca_ctl_send(fd, h.op, 0, &a, sizeof(a));
		break;
	}
	case XHCA_CTL_MR_DEREG: {
		__u32 rkey;

		WANT(rkey);
		memcpy(&rkey, buf, sizeof(rkey));
		rc = mr_dereg(d, c->session, rkey, err, sizeof(err));
		rc = rc ? reply_err(fd, h.op, rc, err) : xhca_ctl_send(fd, h.op, 0, NULL, 0);
		break;
	}
	case XHCA_CTL_MR_SHOW: {
		struct xhca_mr_info *mi = NULL;
		__u32 n = 0;

		rc = mr_show(d, &mi, &n);
		rc = rc ? reply_err(fd, h.op, rc, "mr show: out of memory")
			: xhca_ctl_send(fd, h.op, 0, mi, n * sizeof(*mi));
		free(mi);
		break;
	}
	case XHCA_CTL_MR_READ: {
		struct xhca_mr_io io;
		void *out = NULL;

		WANT(io);
		memcpy(&io, buf, sizeof(io));
		rc = mr_read(d, c->session, &io, &out, err, sizeof(err));
		rc = rc ? reply_err(fd, h.op, rc, err) : xhca_ctl_send(fd, h.op, 0, out, io.len);
		free(out);
		break;
	}
	case XHCA_CTL_CQ_CREATE: {
		struct xhca_cq_attr a;
		struct cq *cq;

		WANT(a);
		memcpy(&a, buf, sizeof(a));
		rc = cq_create(d, c->session, &a, c->session ? in_fd : -1, err, sizeof(err));
		if (rc) {
			rc = reply_err(fd, h.op, rc, err);
			break;
		}
		if (c->session)
			in_fd = -1; /* the CQ keeps it */
		cq = cq_find(d, a.cq);
		/* the doorbell: for an application (the CLI's CQs are xhcad's own) */
		rc = xhca_ctl_send_fd(fd, h.op, 0, &a, sizeof(a), c->session ? cq->dbfd : -1);
		break;
	}
	case XHCA_CTL_CQ_POLL: {
		struct xhca_cq_entry *v = NULL;
		struct xhca_cq_poll r;
		__u32 n = 0;

		WANT(r);
		memcpy(&r, buf, sizeof(r));
		rc = cq_poll(d, &r, &v, &n, err, sizeof(err));
		rc = rc ? reply_err(fd, h.op, rc, err) : xhca_ctl_send(fd, h.op, 0, v, n * sizeof(*v));
		free(v);
		break;
	}
	case XHCA_CTL_CQ_SHOW: {
		struct xhca_cq_info *v = NULL;
		__u32 n = 0;

		rc = cq_show(d, &v, &n);
		rc = rc ? reply_err(fd, h.op, rc, "cq show: out of memory")
			: xhca_ctl_send(fd, h.op, 0, v, n * sizeof(*v));
		free(v);
		break;
	}
	case XHCA_CTL_SRQ_CREATE: {
		struct xhca_srq_attr a;

		WANT(a);
		memcpy(&a, buf, sizeof(a));
		rc = srq_create(d, c->session, &a, err, sizeof(err));
		rc = rc ? reply_err(fd, h.op, rc, err) : xhca_ctl_send(fd, h.op, 0, &a, sizeof(a));
		break;
	}
	case XHCA_CTL_SRQ_DESTROY: {
		__u32 id;

		WANT(id);
		memcpy(&id, buf, sizeof(id));
		rc = srq_destroy(d, id, c->session, err, sizeof(err));
		rc = rc ? reply_err(fd, h.op, rc, err) : xhca_ctl_send(fd, h.op, 0, NULL, 0);
		break;
	}
	case XHCA_CTL_CQ_DESTROY: {
		__u32 id;

		WANT(id);
		memcpy(&id, buf, sizeof(id));
		rc = cq_destroy(d, id, c->session, err, sizeof(err));
		rc = rc ? reply_err(fd, h.op, rc, err) : xhca_ctl_send(fd, h.op, 0, NULL, 0);
		break;
	}
	case XHCA_CTL_FLOWQ_SET: {
		struct xhca_flowq_set r;
		struct xhca_flowq_info fi;

		WANT(r);
		memcpy(&r, buf, sizeof(r));
		rc = flowq_set(d, &r, err, sizeof(err));
		if (rc) {
			rc = reply_err(fd, h.op, rc, err);
			break;
		}
		flowq_info(d, r.flowq, &fi);
		rc = xhca_ctl_send(fd, h.op, 0, &fi, sizeof(fi));
		break;
	}
	case XHCA_CTL_FLOWQ_SHOW: {
		struct xhca_flowq_info fi[XHCA_FLOWQ_MAX];

		for (__u32 f = 0; f < d->nflowq; f++)
			flowq_info(d, f, &fi[f]);
		rc = xhca_ctl_send(fd, h.op, 0, fi, d->nflowq * sizeof(fi[0]));
		break;
	}
	default:
		snprintf(err, sizeof(err), "unknown request %u: xhca and xhcad versions differ", h.op);
		rc = reply_err(fd, h.op, -EOPNOTSUPP, err);
	}
#undef WANT
	/* What a restart must know changed (state.c): saved by the loop. */
	switch (h.op) {
	case XHCA_CTL_STATUS:
	case XHCA_CTL_QP_SHOW:
	case XHCA_CTL_STATS:
	case XHCA_CTL_FLOWQ_SHOW:
	case XHCA_CTL_MR_SHOW:
	case XHCA_CTL_MR_READ:
	case XHCA_CTL_MCAST_SHOW:
	case XHCA_CTL_FILTER_SHOW:
	case XHCA_CTL_PROXY_SHOW:
	case XHCA_CTL_CQ_SHOW:
		break;
	default:
		d->state_dirty = 1;
	}
	if (in_fd >= 0)
		close(in_fd);
	free(buf);
	return rc;
}
