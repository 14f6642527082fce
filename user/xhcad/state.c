/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What xhcad keeps across a restart beside the pinned maps: sessions,
 * protection domains, host memory allocations, the translation record of
 * the memory regions, CQs, which QP delivers where, and the multicast
 * groups' members and ports. The maps hold the data (host memory, MR
 * contexts, QP contexts, groups); this holds who owns it.
 *
 * It is written to XHCA_RUN_DIR/IFNAME.state (a tmpfs, as the pins live no
 * longer than the boot) after every request that changed it, replacing the
 * file in one rename, and read when xhcad starts on maps an earlier xhcad
 * left (--keep, or a crash). A session whose process is still alive (same
 * pid, same start time) keeps everything: the application's regions stay
 * registered and pre-translated, placement goes on even while no xhcad
 * runs, and libxhca resumes the session when it next talks to xhcad
 * (XHCA_CTL_HELLO with resume). The rest goes as if its session had ended.
 *
 * The file may be one request behind the maps after a crash: what the maps
 * hold and the file does not know (a region registered just before) is
 * invalidated; what the file holds and the maps no longer do (a region
 * deregistered just before) is dropped. The file names the maps it goes
 * with (their ids): a file left from other maps is ignored.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include "log.h"
#include "xhcad_verbs.h"

#define STATE_MAGIC 0x58484341u /* "XHCA" */
#define STATE_VERSION 5

struct st_hdr {
	__u32 magic, version, abi;
	__u32 hostmem_id, mr_id;	/* the maps this goes with */
	__u32 nsess, npd, nalloc, nmr, ncq, nqp, nmc;
	__u32 alloc_seq, next_pd, next_session, next_cq, key_seed;
};

struct st_sess {
	__u32 id, pid;
	__u64 start;
	char name[32];
};

struct st_pd {
	__u32 id, owner, users, pad;
};

struct st_alloc {
	__u32 id, owner, npages, contiguous;
	__u64 len;
	/* __u32 pages[npages] follow */
};

struct st_mr {
	__u32 index, rkey, owner, alloc, own_alloc, pad;
	__u64 off;
};

struct st_cq {
	__u32 id, owner, depth, alloc, flags, pad;
};

struct st_qp {
	__u32 lidx, gen, gqpn, owner, cq, rq_alloc, rq_depth, pd, cli_bufs, cli_buf_size;
	/* the send queue (sq_alloc 0: none); its PSN is in the QP context */
	__u32 sq_alloc, sq_depth, send_cq;
	__u8 timeout, retry_cnt, rnr_retry, max_rd_atomic;
};

static void state_path(const struct xhcad *d, char *p, size_t n)
{
	snprintf(p, n, XHCA_RUN_DIR "/%s.state", d->ifname);
}

static __u32 map_id(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/* ---- writing -------------------------------------------------------------- */

struct wbuf {
	__u8 *p;
	size_t len, cap;
	int err;
};

static void put(struct wbuf *w, const void *src, size_t n)
{
	if (w->err)
		return;
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 65536;
		__u8 *p;

		while (cap < w->len + n)
			cap *= 2;
		p = realloc(w->p, cap);
		if (!p) {
			w->err = -ENOMEM;
			return;
		}
		w->p = p;
		w->cap = cap;
	}
	memcpy(w->p + w->len, src, n);
	w->len += n;
}

/* The multicast groups (struct mcast_rec each); returns how many. */
static __u32 save_mcast(const struct xhcad *d, struct wbuf *w)
{
	struct mcast_rec *r = malloc(sizeof(*r));
	__u32 n = 0;

	if (!r) {
		w->err = -ENOMEM;
		return 0;
	}
	for (__u32 i = 0; i < XHCA_MCAST_GROUPS; i++) {
		if (mcast_save(d, i, r))
			continue;
		put(w, r, sizeof(*r));
		n++;
	}
	free(r);
	return n;
}

int state_save(struct xhcad *d)
{
	struct st_hdr h = {
		.magic = STATE_MAGIC, .version = STATE_VERSION, .abi = XHCA_ABI_VERSION,
		.hostmem_id = map_id(d->m.hostmem), .mr_id = map_id(d->m.mr),
		.alloc_seq = d->hm.alloc_seq, .next_pd = d->mr.next_pd, .next_session = d->app.next_session,
		.next_cq = d->app.next_cq, .key_seed = d->mr.key_seed,
	};
	struct wbuf w = {};
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	int fd, err = 0;

	d->state_dirty = 0;
	put(&w, &h, sizeof(h));
	for (struct session *s = d->app.sessions; s; s = s->next) {
		struct st_sess e = { .id = s->id, .pid = s->pid, .start = s->start };

		memcpy(e.name, s->name, sizeof(e.name));
		put(&w, &e, sizeof(e));
		h.nsess++;
	}
	for (struct pd_rt *p = d->mr.pds; p; p = p->next) {
		struct st_pd e = { .id = p->id, .owner = p->owner, .users = p->users };

		put(&w, &e, sizeof(e));
		h.npd++;
	}
	for (__u32 i = 1; i < HM_SLOTS; i++) {
		const struct hm_alloc *a = d->hm.allocs[i];
		struct st_alloc e;

		if (!a)
			continue;
		e = (struct st_alloc){ .id = a->id, .owner = a->owner, .npages = a->npages,
				       .contiguous = (__u32)a->contiguous, .len = a->len };
		put(&w, &e, sizeof(e));
		put(&w, a->pages, (size_t)a->npages * sizeof(*a->pages));
		h.nalloc++;
	}
	for (__u32 i = 1; i < d->mr.max; i++) {
		const struct mr_rt *m = &d->mr.e[i];
		struct st_mr e;

		if (!m->rkey || m->mw_type)
			continue; /* (memory windows do not outlive xhcad) */
		e = (struct st_mr){ .index = i, .rkey = m->rkey, .owner = m->owner,
				    .alloc = m->alloc, .own_alloc = (__u32)m->own_alloc, .off = m->off };
		put(&w, &e, sizeof(e));
		h.nmr++;
	}
	for (struct cq *c = d->app.cqs; c; c = c->next) {
		struct st_cq e = { .id = c->id, .owner = c->owner, .depth = c->depth,
				   .alloc = c->alloc, .flags = c->flags };

		put(&w, &e, sizeof(e));
		h.ncq++;
	}
	for (__u32 l = 0; l < d->max_qps; l++) {
		const struct qp_host *q = &d->qh[l];
		struct st_qp e;

		if (!q->valid || (!q->owner && !q->pd && !q->cq))
			continue;
		e = (struct st_qp){ .lidx = l, .gen = q->gen, .gqpn = q->gqpn, .owner = q->owner,
				    .cq = q->cq ? q->cq->id : 0, .rq_alloc = q->rcv.rq ? q->rcv.rq_alloc : 0,
				    .rq_depth = q->rcv.rq_depth, .pd = q->pd, .cli_bufs = q->rcv.cli_bufs,
				    .cli_buf_size = q->rcv.cli_buf_size };
		if (q->sq) {
			e.sq_alloc = q->sq->alloc;
			e.sq_depth = q->sq->depth;
			e.send_cq = q->sq->cq->id;
			e.timeout = q->sq->timeout;
			e.retry_cnt = q->sq->retry_cnt;
			e.rnr_retry = q->sq->rnr_retry;
			e.max_rd_atomic = q->sq->max_rd_atomic;
		}
		put(&w, &e, sizeof(e));
		h.nqp++;
	}
	h.nmc = save_mcast(d, &w);
	if (w.err) {
		free(w.p);
		return w.err;
	}
	memcpy(w.p, &h, sizeof(h));
	state_path(d, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, w.p, w.len) != (ssize_t)w.len)
		err = -errno;
	if (fd >= 0 && close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		pr_warn("cannot save %s: %s; a restart will not keep the sessions\n", path,
			strerror(-err));
	}
	free(w.p);
	return err;
}

void state_remove(struct xhcad *d)
{
	char path[PATH_MAX];

	state_path(d, path, sizeof(path));
	unlink(path);
}

/* ---- reading ----------------------------------------------------------------- */

struct rbuf {
	const __u8 *p;
	size_t len, off;
};

static const void *take(struct rbuf *r, size_t n)
{
	const void *p;

	if (r->len - r->off < n)
		return NULL;
	p = r->p + r->off;
	r->off += n;
	return p;
}

/* A record of the file copied out: after a pages array with an odd count
 * the records are only 4-byte aligned in the buffer. Returns dst or NULL. */
static const void *take_copy(struct rbuf *r, void *dst, size_t n)
{
	const void *p = take(r, n);

	return p ? memcpy(dst, p, n) : NULL;
}

static int read_file(const char *path, __u8 **out, size_t *len)
{
	struct stat st;
	__u8 *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_size <= 0 || st.st_size > (1 << 30)) {
		close(fd);
		return -EINVAL;
	}
	p = malloc((size_t)st.st_size);
	if (!p || read(fd, p, (size_t)st.st_size) != st.st_size) {
		free(p);
		close(fd);
		return -EIO;
	}
	close(fd);
	*out = p;
	*len = (size_t)st.st_size;
	return 0;
}

/* A session of the file whose process lives on: it waits for libxhca to
 * resume it, and ends when the process does (its pidfd). */
static struct session *sess_restore(struct xhcad *d, const struct st_sess *e)
{
	struct session *s;
	int pfd;

	if (!e->id || !e->pid || proc_start_time(e->pid) != e->start)
		return NULL;
	pfd = (int)syscall(SYS_pidfd_open, (pid_t)e->pid, 0);
	if (pfd < 0)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s) {
		close(pfd);
		return NULL;
	}
	s->id = e->id;
	s->fd = -1;
	s->pidfd = pfd;
	s->sq_dbfd = -1;
	s->pid = e->pid;
	s->start = e->start;
	memcpy(s->name, e->name, sizeof(s->name));
	s->name[sizeof(s->name) - 1] = 0;
	s->next = d->app.sessions;
	d->app.sessions = s;
	d->app.nsessions++;
	return s;
}

static int owner_alive(const struct xhcad *d, __u32 owner)
{
	if (!owner)
		return 1;
	for (const struct session *s = d->app.sessions; s; s = s->next)
		if (s->id == owner)
			return 1;
	return 0;
}

/* The protection domains of sessions that live on. */
static int restore_pds(struct xhcad *d, struct rbuf *r, __u32 n)
{
	for (__u32 i = 0; i < n; i++) {
		struct st_pd e_;
		const struct st_pd *e = take_copy(r, &e_, sizeof(e_));
		struct pd_rt *p;

		if (!e)
			return -EINVAL;
		if (!owner_alive(d, e->owner))
			continue;
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		p->id = e->id;
		p->owner = e->owner;
		p->next = d->mr.pds;
		d->mr.pds = p;
	}
	return 0;
}

/* Host memory allocations, memory regions and CQs of sessions that live on. */
static int restore_memory(struct xhcad *d, struct rbuf *r, const struct st_hdr *h)
{
	for (__u32 i = 0; i < h->nalloc; i++) {
		struct st_alloc e_;
		const struct st_alloc *e = take_copy(r, &e_, sizeof(e_));
		const __u32 *pages = e ? take(r, (size_t)e->npages * sizeof(*pages)) : NULL;

		if (!e || !pages)
			return -EINVAL;
		if (owner_alive(d, e->owner) && hm_restore(d, e->id, e->owner, e->len, pages,
							     e->npages))
			pr_warn("state: allocation %u does not fit host memory: dropped\n", e->id);
	}
	for (__u32 i = 0; i < h->nmr; i++) {
		struct st_mr e_;
		const struct st_mr *e = take_copy(r, &e_, sizeof(e_));

		if (!e)
			return -EINVAL;
		if (owner_alive(d, e->owner))
			mr_restore(d, e->index, e->rkey, e->owner, e->alloc, e->own_alloc, e->off);
	}
	for (__u32 i = 0; i < h->ncq; i++) {
		struct st_cq e_;
		const struct st_cq *e = take_copy(r, &e_, sizeof(e_));

		if (!e)
			return -EINVAL;
		if (owner_alive(d, e->owner))
			cq_restore(d, e->id, e->owner, e->depth, e->alloc, e->flags);
	}
	return 0;
}

/* One QP's host side again: qp_reconcile() made it xhcad's; it goes back to
 * its session with its queues, or, its session gone, is destroyed. */
static void restore_qp(struct xhcad *d, const struct st_qp *e, __u32 *dropped_qps)
{
	struct qp_host *q = &d->qh[e->lidx];
	__u8 type = q->type, flowq = q->flowq;

	if (!owner_alive(d, e->owner)) {
		char err[XHCA_ERRMSG_LEN];

		if (!qp_destroy(d, e->gqpn, 0, err, sizeof(err)))
			(*dropped_qps)++;
		return;
	}
	sq_detach(d, q);
	qp_host_detach(d, e->lidx);
	qp_host_attach(d, e->lidx, e->gen, e->gqpn, type, flowq, e->owner,
		       e->cq ? cq_find(d, e->cq) : NULL, hm_find(d, e->rq_alloc),
		       e->rq_depth, NULL /* SRQs are not kept (yet): no delivery */);
	q->pd = e->pd;
	/* the completions from where the proxy had released them: messages
	 * xhca_rx numbered while no xhcad ran (WRITEs it placed) come next */
	if (q->cq && q->cq->proxy)
		proxy_qp_add(d, e->lidx, __atomic_load_n(&d->ctxm[e->lidx].px_csn,
							 __ATOMIC_RELAXED));
	if (e->sq_alloc) {
		const __u8 at[4] = { e->timeout, e->retry_cnt, e->rnr_retry, e->max_rd_atomic };
		struct hm_alloc *sa = hm_find(d, e->sq_alloc);
		struct cq *scq = cq_find(d, e->send_cq);

		if (!sa || !scq || sq_restore(d, q, sa, e->sq_depth, scq, at) < 0)
			pr_warn("state: qp 0x%06x: its send queue could not be restored\n",
				e->gqpn);
	}
	if (!e->owner && hm_find(d, e->cli_bufs)) {
		q->rcv.cli_bufs = e->cli_bufs;
		q->rcv.cli_buf_size = e->cli_buf_size;
	}
	pd_ref(d, e->pd, 1);
	/* --recv-fast again: the maps' entries of the earlier xhcad went, the
	 * ring's indexes are where xhca_rx left them (qp_host_attach) */
	recv_fast_on(d, q, e->lidx);
}

/* The multicast groups the maps still hold, with the members whose QPs came
 * back (after the QPs). */
static int restore_mcast(struct xhcad *d, struct rbuf *r, __u32 n)
{
	struct mcast_rec *e = malloc(sizeof(*e));
	__u32 kept = 0;
	int err = 0;

	if (!e)
		return -ENOMEM;
	for (__u32 i = 0; i < n && !err; i++) {
		if (!take_copy(r, e, sizeof(*e)))
			err = -EINVAL;
		else if (!mcast_restore(d, e))
			kept++;
	}
	free(e);
	if (kept)
		pr_info("state: %u multicast groups kept\n", kept);
	return err;
}

static int restore(struct xhcad *d, struct rbuf *r, __u32 *dropped_qps)
{
	struct st_hdr h_;
	const struct st_hdr *h = take_copy(r, &h_, sizeof(h_));
	__u32 i, kept = 0, gone = 0;
	int err;

	if (!h || h->magic != STATE_MAGIC || h->version != STATE_VERSION ||
	    h->abi != XHCA_ABI_VERSION)
		return -EINVAL;
	if (h->hostmem_id != map_id(d->m.hostmem) || h->mr_id != map_id(d->m.mr))
		return -ESTALE;
	d->hm.alloc_seq = h->alloc_seq;
	d->mr.next_pd = h->next_pd;
	d->app.next_session = h->next_session;
	d->app.next_cq = h->next_cq;
	d->mr.key_seed = h->key_seed;
	for (i = 0; i < h->nsess; i++) {
		struct st_sess e_;
		const struct st_sess *e = take_copy(r, &e_, sizeof(e_));

		if (!e)
			return -EINVAL;
		if (sess_restore(d, e))
			kept++;
		else
			gone++;
	}
	err = restore_pds(d, r, h->npd);
	err = err ?: restore_memory(d, r, h);
	if (err)
		return err;
	for (i = 0; i < h->nqp; i++) {
		struct st_qp e_;
		const struct st_qp *e = take_copy(r, &e_, sizeof(e_));
		const struct qp_host *q;

		if (!e)
			return -EINVAL;
		if (e->lidx >= d->max_qps)
			continue;
		q = &d->qh[e->lidx];
		if (!q->valid || q->gen != e->gen || q->gqpn != e->gqpn)
			continue; /* the QP table moved on after the file was written */
		restore_qp(d, e, dropped_qps);
	}
	err = restore_mcast(d, r, h->nmc);
	if (err)
		return err;
	/* Reference counts again from what came back. */
	for (__u32 k = 1; k < d->mr.max; k++)
		if (d->mr.e[k].rkey)
			pd_ref(d, d->mr.e[k].e.pd, 1);
	if (kept || gone)
		pr_info("state: %u sessions alive, to be resumed; %u ended while xhcad was down\n",
			kept, gone);
	return 0;
}

int state_restore(struct xhcad *d, int maps_reused)
{
	char path[PATH_MAX];
	struct rbuf r = {};
	__u32 dropped = 0;
	__u8 *buf = NULL;
	int err;

	state_path(d, path, sizeof(path));
	if (!maps_reused) {
		unlink(path);
		return 0;
	}
	err = read_file(path, &buf, &r.len);
	if (err == -ENOENT)
		return 0;
	if (!err) {
		r.p = buf;
		err = restore(d, &r, &dropped);
	}
	free(buf);
	if (err == -ESTALE)
		pr_info("state: %s belongs to other maps: ignored\n", path);
	else if (err)
		pr_warn("state: %s is unreadable (%s): sessions not kept\n", path, strerror(-err));
	if (dropped)
		pr_info("state: destroyed %u QPs of sessions that ended\n", dropped);
	return 0;
}
