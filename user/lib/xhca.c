/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libxhca's application interface (include/xhca/xhca.h): a session on
 * xhcad's control socket for the slow operations, shared memory for the fast
 * ones. Posting a receive and polling a completion are a few loads and
 * stores on rings in host memory (include/xhca/ring.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <net/if.h>
#include <time.h>
#include <xhca/xhca.h>
#include <xhca/ctl.h>

#define CTL_TIMEOUT_S 10
#define RESUME_WAIT_MS 10000	/* how long a restarting xhcad may take to come back */

/*
 * The library's own mappings (host memory, and moving an application's
 * pages under a region and back) are made with the system calls
 * themselves, not libc's wrappers: a program may hook those (UCX's memory
 * hooks patch mmap, munmap and mremap to hear of the program's unmaps),
 * and would take a region's pages going into host memory, contents kept,
 * for the program unmapping them: UCX's registration cache then
 * deregistered the region it had just registered, its receive buffers
 * left on private pages that no frame reaches.
 */
static void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	long r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);

	return r < 0 && r > -4096 ? MAP_FAILED : (void *)r;
}

static int sys_munmap(void *addr, size_t len)
{
	return (int)syscall(SYS_munmap, addr, len);
}

static void *sys_mremap(void *old, size_t old_len, size_t len, int flags, void *new_addr)
{
	long r = syscall(SYS_mremap, old, old_len, len, flags, new_addr);

	return r < 0 && r > -4096 ? MAP_FAILED : (void *)r;
}

struct xhca_cq {
	struct xhca_ctx *ctx;
	__u32 id;
	__u32 depth;
	size_t ring_len;
	struct xhca_ring_ctl *ring;
	struct xhca_cqe *e;
	int efd;		/* xhcad signals it when armed */
	int dbfd;		/* we ring it when xhcad waits for room */
	unsigned int empty;	/* polls in a row that found nothing */
	struct xhca_cq *next;
};

/* A ring that takes receive entries: a QP's or an SRQ's, with its table
 * of scatter lists (ring.h's XHCA_RSGL_BYTES) when it takes lists. */
struct rq_ring {
	struct xhca_ring_ctl *ctl;
	struct xhca_rwqe *e;
	__u32 depth;
	__u32 own_alloc;	/* the ring's allocation: an empty entry names it */
	struct xhca_rsge *sgl;	/* NULL: one piece an entry */
	__u32 sgl_alloc;
	__u32 max_sge;
};

static int rq_sgl(struct xhca_ctx *ctx, struct rq_ring *r, unsigned int max_sge);

struct xhca_qp {
	struct xhca_ctx *ctx;
	__u32 qpn;
	struct rq_ring rq;	/* ctl NULL: the QP takes an SRQ's buffers */
	size_t rq_len;
	__u8 type;
	__u32 sq_depth;
	__u32 sq_alloc;
	size_t sq_len;
	struct xhca_ring_ctl *sq;	/* NULL: no send queue */
	struct xhca_swqe *sqe;
	struct xhca_qp *next;
};

struct xhca_srq {
	struct xhca_ctx *ctx;
	__u32 id;
	struct rq_ring rq;
	size_t len;
};

struct xhca_pd {
	struct xhca_ctx *ctx;
	__u32 id;
	struct xhca_pd *next;
};

struct xhca_mr {
	struct xhca_pd *pd;
	__u32 rkey;
	__u32 flags;
	void *addr;
	size_t len;
	struct xhca_mr *next;
};

/* An allocation as the application sees it: its pages mapped side by
 * side, wherever they are in host memory. */
struct buf {
	__u8 *va;
	size_t len;		/* whole pages */
	__u32 id;
	__u8 contiguous;
	__u8 adopted;		/* under the application's own pages (xhca_adopt) */
	__u32 parent;		/* joined: the allocation that holds its pages now */
};

struct xhca_ctx {
	char ifname[IF_NAMESIZE];
	int fd;
	pthread_mutex_t call_lock;	/* one request at a time on fd: threads share a session */
	/* host memory: the session's blocks, each a map of its own
	 * (XHCA_CTL_BLOCK), fetched as its allocations come to them */
	int *bfd;		/* by block; -1: not fetched */
	__u32 nblocks;
	pthread_mutex_t block_lock;
	__u32 session;
	__u32 max_mtu;		/* the largest path MTU xhcad carries */
	struct buf *bufs;	/* sorted by va */
	__u32 nbufs, cap;
	/* adopted buffers another one joined (xhca_adopt): out of the table,
	 * their allocations kept for their regions until the joiner goes */
	struct buf *joined;
	__u32 njoined;
	__u32 last;		/* the last one looked up */
	struct xhca_cq *cqs;
	struct xhca_qp *qps;
	struct xhca_pd *pds;
	struct xhca_pd *dflt_pd; /* for QPs created without one */
	struct xhca_mr *mrs;
	int sq_dbfd;		/* the send doorbell: rung when xhcad sleeps (ring.h) */
	char err[XHCA_ERRMSG_LEN];
	struct xhca_ctx *next_session;	/* sessions with adopted memory (fork) */
	int in_sessions;
};

extern char *program_invocation_short_name;

struct buf;
static void unadopt_pages(struct buf *b);

static int conn_lost(int err)
{
	return err == -ECONNRESET || err == -EPIPE || err == -ENOTCONN;
}

static __u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000;
}

static void set_timeouts(int fd)
{
	struct timeval tv = { .tv_sec = CTL_TIMEOUT_S };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/*
 * xhcad went away (a restart with --keep, or a crash): wait for it to come
 * back and take the session again. Everything of the session is where it
 * was (host memory, regions, CQs, QPs); only the CQs' eventfds need to be
 * sent again. Returns 0, or -errno with the reason in ctx->err.
 */
static int resume(struct xhca_ctx *ctx)
{
	struct xhca_hello h = { .version = XHCA_SESSION_VERSION, .pid = (__u32)getpid(),
				.resume = ctx->session };
	__u64 until = now_ms() + RESUME_WAIT_MS;
	void *rp = NULL;
	__u32 got = 0;
	int fd, err;

	for (;;) {
		fd = xhca_ctl_connect(ctx->ifname);
		if (fd >= 0 || (fd != -ENOENT && fd != -ECONNREFUSED) || now_ms() >= until)
			break;
		usleep(50000);
	}
	if (fd < 0) {
		snprintf(ctx->err, sizeof(ctx->err), "xhcad for %s went away and did not come "
			 "back: %s", ctx->ifname, strerror(-fd));
		return fd;
	}
	set_timeouts(fd);
	snprintf(h.name, sizeof(h.name), "%s", program_invocation_short_name);
	/* (the blocks are the same maps: the pinned xhca_hostmem kept them) */
	err = xhca_ctl_call_fd(fd, XHCA_CTL_HELLO, &h, sizeof(h), -1, &rp, &got, NULL, ctx->err,
			       sizeof(ctx->err));
	free(rp);
	if (err) {
		close(fd);
		return err;
	}
	close(ctx->fd);
	ctx->fd = fd;
	for (struct xhca_cq *cq = ctx->cqs; cq; cq = cq->next) {
		err = xhca_ctl_call_fd(fd, XHCA_CTL_CQ_REBIND, &cq->id, sizeof(cq->id), cq->efd, NULL,
				       NULL, NULL, ctx->err, sizeof(ctx->err));
		if (err)
			return err;
	}
	if (ctx->sq_dbfd >= 0)
		return xhca_ctl_call_fd(fd, XHCA_CTL_SQ_DOORBELL, NULL, 0, ctx->sq_dbfd, NULL, NULL,
					NULL, ctx->err, sizeof(ctx->err));
	return 0;
}

/* One request on the session; on failure the message is kept for
 * xhca_errmsg(). A session whose xhcad restarted is resumed first. */
static int call(struct xhca_ctx *ctx, __u32 op, const void *req, __u32 len, int send_fd,
		void *resp, __u32 resp_len, int *recv_fd)
{
	void *r = NULL;
	__u32 got = 0;
	int err;

	pthread_mutex_lock(&ctx->call_lock);
	err = xhca_ctl_call_fd(ctx->fd, op, req, len, send_fd, resp ? &r : NULL, &got, recv_fd,
			       ctx->err, sizeof(ctx->err));
	if (conn_lost(err) && ctx->session && !resume(ctx))
		err = xhca_ctl_call_fd(ctx->fd, op, req, len, send_fd, resp ? &r : NULL, &got,
				       recv_fd, ctx->err, sizeof(ctx->err));
	pthread_mutex_unlock(&ctx->call_lock);
	if (!err && resp && got < resp_len) {
		snprintf(ctx->err, sizeof(ctx->err), "reply of %u bytes, expected %u: libxhca and "
			 "xhcad versions differ", got, resp_len);
		err = -EPROTO;
	}
	if (!err && resp)
		memcpy(resp, r, resp_len);
	else if (err && !ctx->err[0])
		snprintf(ctx->err, sizeof(ctx->err), "xhcad: %s", strerror(-err));
	free(r);
	if (err && recv_fd && *recv_fd >= 0) {
		close(*recv_fd);
		*recv_fd = -1;
	}
	return err;
}

int xhca_session_call(struct xhca_ctx *ctx, __u32 op, const void *req, __u32 len, int send_fd,
		      void *resp, __u32 resp_len, int *recv_fd)
{
	return call(ctx, op, req, len, send_fd, resp, resp_len, recv_fd);
}

static int fail(struct xhca_ctx *ctx, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct xhca_ctx *ctx, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->err, sizeof(ctx->err), fmt, ap);
	va_end(ap);
	return err;
}

static size_t pages_of(__u64 len)
{
	return (size_t)((len + XHCA_PAGE_SIZE - 1) / XHCA_PAGE_SIZE) * XHCA_PAGE_SIZE;
}

/* The map of block b of the session's host memory (its descriptor kept),
 * or -1 with errno. */
static int block_fd(struct xhca_ctx *ctx, __u32 b)
{
	struct xhca_block_info bi;
	int fd = -1, err = 0;

	if (b >= ctx->nblocks) {
		errno = EPROTO;
		return -1;
	}
	pthread_mutex_lock(&ctx->block_lock);
	if (ctx->bfd[b] < 0) {
		err = call(ctx, XHCA_CTL_BLOCK, &b, sizeof(b), -1, &bi, sizeof(bi), &fd);
		if (!err && (fd < 0 || bi.block != b || bi.pages != XHCA_BLOCK_PAGES))
			err = -EPROTO;
		if (!err)
			ctx->bfd[b] = fd;
		else if (fd >= 0)
			close(fd);
	}
	fd = ctx->bfd[b];
	pthread_mutex_unlock(&ctx->block_lock);
	if (err)
		errno = -err;
	return err ? -1 : fd;
}

/* Host memory pages [page, page + count) at va (reserved), block by block. */
static int map_host(struct xhca_ctx *ctx, __u8 *va, __u64 page, __u64 count)
{
	while (count) {
		__u64 in = page % XHCA_BLOCK_PAGES, n = XHCA_BLOCK_PAGES - in;
		int fd = page / XHCA_BLOCK_PAGES < ctx->nblocks ? block_fd(ctx, (__u32)(page /
							XHCA_BLOCK_PAGES)) : -1;

		if (n > count)
			n = count;
		if (fd < 0 || sys_mmap(va, n * XHCA_PAGE_SIZE, PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_FIXED, fd, (off_t)(in * XHCA_PAGE_SIZE)) == MAP_FAILED)
			return -1;
		va += n * XHCA_PAGE_SIZE;
		page += n;
		count -= n;
	}
	return 0;
}

/* Maps a contiguous piece of host memory (a ring). */
static void *map_ring(struct xhca_ctx *ctx, __u64 off, __u64 len)
{
	size_t n = pages_of(len);
	__u8 *m;

	if (off % XHCA_PAGE_SIZE || !len) {
		errno = EPROTO;
		return NULL;
	}
	m = sys_mmap(NULL, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	if (map_host(ctx, m, off / XHCA_PAGE_SIZE, n / XHCA_PAGE_SIZE)) {
		int e = errno;

		sys_munmap(m, n);
		errno = e;
		return NULL;
	}
	return m;
}

/* The allocation holding [p, p + len), or NULL. */
static struct buf *buf_find(struct xhca_ctx *ctx, const void *p, size_t len)
{
	const __u8 *b = p;
	__u32 lo = 0, hi = ctx->nbufs;
	struct buf *f;

	if (ctx->last < ctx->nbufs) {
		f = &ctx->bufs[ctx->last];
		if (b >= f->va && b - f->va < (ptrdiff_t)f->len && len <= f->len - (size_t)(b - f->va))
			return f;
	}
	while (lo < hi) {
		__u32 mid = (lo + hi) / 2;

		f = &ctx->bufs[mid];
		if (b < f->va) {
			hi = mid;
		} else if (b - f->va >= (ptrdiff_t)f->len) {
			lo = mid + 1;
		} else {
			if (len > f->len - (size_t)(b - f->va))
				return NULL;
			ctx->last = mid;
			return f;
		}
	}
	return NULL;
}

/* Every session, for the fork handler: a child gets private copies. */
static struct xhca_ctx *sessions;
static pthread_mutex_t sessions_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

/* The buffer table changes under sessions_lock: a fork's child reads it. */
static int buf_add(struct xhca_ctx *ctx, const struct buf *nb)
{
	int err = 0;

	pthread_mutex_lock(&sessions_lock);
	if (ctx->nbufs == ctx->cap) {
		__u32 cap = ctx->cap ? ctx->cap * 2 : 16;
		struct buf *b = realloc(ctx->bufs, cap * sizeof(*b));

		if (!b) {
			err = -ENOMEM;
			goto out;
		}
		ctx->bufs = b;
		ctx->cap = cap;
	}
	__u32 i;

	for (i = ctx->nbufs; i > 0 && ctx->bufs[i - 1].va > nb->va; i--)
		ctx->bufs[i] = ctx->bufs[i - 1];
	ctx->bufs[i] = *nb;
	ctx->nbufs++;
	if (nb->adopted && !ctx->in_sessions) {
		ctx->next_session = sessions;
		sessions = ctx;
		ctx->in_sessions = 1;
	}
out:
	pthread_mutex_unlock(&sessions_lock);
	return err;
}

static void buf_del(struct xhca_ctx *ctx, struct buf *b)
{
	__u32 i = (__u32)(b - ctx->bufs);

	pthread_mutex_lock(&sessions_lock);
	memmove(b, b + 1, (ctx->nbufs - i - 1) * sizeof(*b));
	ctx->nbufs--;
	ctx->last = 0;
	pthread_mutex_unlock(&sessions_lock);
}

int xhca_max_path_mtu(const struct xhca_ctx *ctx)
{
	return (int)ctx->max_mtu;
}

struct xhca_ctx *xhca_open(const char *ifname)
{
	struct xhca_hello h = { .version = XHCA_SESSION_VERSION, .pid = (__u32)getpid() };
	struct xhca_hello_reply r;
	struct xhca_ctx *ctx;
	int err;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return NULL;
	ctx->sq_dbfd = -1;
	pthread_mutex_init(&ctx->call_lock, NULL);
	pthread_mutex_init(&ctx->block_lock, NULL);
	snprintf(ctx->ifname, sizeof(ctx->ifname), "%s", ifname);
	ctx->fd = xhca_ctl_connect(ifname);
	if (ctx->fd < 0) {
		err = ctx->fd;
		goto fail;
	}
	set_timeouts(ctx->fd);
	snprintf(h.name, sizeof(h.name), "%s", program_invocation_short_name);
	err = call(ctx, XHCA_CTL_HELLO, &h, sizeof(h), -1, &r, sizeof(r), NULL);
	if (err)
		goto fail;
	ctx->nblocks = (__u32)(r.hostmem_bytes / XHCA_PAGE_SIZE / XHCA_BLOCK_PAGES);
	ctx->max_mtu = r.max_mtu;
	if (r.block_pages != XHCA_BLOCK_PAGES || r.page_size != XHCA_PAGE_SIZE || !ctx->nblocks) {
		err = -EPROTO;
		goto fail;
	}
	ctx->bfd = malloc(ctx->nblocks * sizeof(*ctx->bfd));
	if (!ctx->bfd) {
		err = -ENOMEM;
		goto fail;
	}
	for (__u32 b = 0; b < ctx->nblocks; b++)
		ctx->bfd[b] = -1;
	ctx->session = r.session;
	return ctx;
fail:
	if (ctx->fd >= 0)
		close(ctx->fd);
	free(ctx);
	errno = -err;
	return NULL;
}

void xhca_close(struct xhca_ctx *ctx)
{
	if (!ctx)
		return;
	pthread_mutex_lock(&sessions_lock);
	for (struct xhca_ctx **pp = &sessions; *pp; pp = &(*pp)->next_session)
		if (*pp == ctx) {
			*pp = ctx->next_session;
			break;
		}
	pthread_mutex_unlock(&sessions_lock);
	for (__u32 i = 0; i < ctx->nbufs; i++) {
		/* before the session ends (xhcad frees its host memory):
		 * the application's own pages get their bytes back, not a hole */
		if (ctx->bufs[i].adopted)
			unadopt_pages(&ctx->bufs[i]);
		else
			sys_munmap(ctx->bufs[i].va, ctx->bufs[i].len);
	}
	/* xhcad frees everything of the session when the socket closes. */
	close(ctx->fd);
	while (ctx->cqs) {
		struct xhca_cq *cq = ctx->cqs;

		ctx->cqs = cq->next;
		close(cq->efd);
		close(cq->dbfd);
		sys_munmap(cq->ring, cq->ring_len);
		free(cq);
	}
	while (ctx->qps) {
		struct xhca_qp *qp = ctx->qps;

		ctx->qps = qp->next;
		if (qp->rq.ctl)
			sys_munmap(qp->rq.ctl, qp->rq_len);
		if (qp->sq)
			sys_munmap(qp->sq, qp->sq_len);
		free(qp);
	}
	if (ctx->sq_dbfd >= 0)
		close(ctx->sq_dbfd);
	while (ctx->mrs) {
		struct xhca_mr *mr = ctx->mrs;

		ctx->mrs = mr->next;
		free(mr);
	}
	while (ctx->pds) {
		struct xhca_pd *pd = ctx->pds;

		ctx->pds = pd->next;
		free(pd);
	}
	free(ctx->bufs);
	free(ctx->joined);
	for (__u32 b = 0; b < ctx->nblocks; b++)
		if (ctx->bfd[b] >= 0)
			close(ctx->bfd[b]);
	free(ctx->bfd);
	free(ctx);
}

const char *xhca_errmsg(const struct xhca_ctx *ctx)
{
	return ctx && ctx->err[0] ? ctx->err : "no error";
}

/* ALLOC: the reply (malloc'd, free it) with the allocation in *a and its
 * runs of pages after it. */
/* ALLOC (with njoin earlier allocations to hold, XHCA_ALLOC_JOIN): the
 * reply (malloc'd, free it) with the allocation in *a and its runs of
 * pages after it. */
static int alloc_join_call(struct xhca_ctx *ctx, size_t len, unsigned int flags,
			   const struct xhca_alloc_join *join, __u32 njoin, struct xhca_alloc *a,
			   void **reply)
{
	size_t qlen = sizeof(*a) + (size_t)njoin * sizeof(*join);
	__u8 *q = malloc(qlen);
	void *r = NULL;
	__u32 got = 0;
	int err;

	*a = (struct xhca_alloc){ .len = len, .flags = njoin ? XHCA_ALLOC_JOIN : flags,
				  .nruns = njoin };
	*reply = NULL;
	if (!q)
		return -ENOMEM;
	memcpy(q, a, sizeof(*a));
	if (njoin)
		memcpy(q + sizeof(*a), join, (size_t)njoin * sizeof(*join));
	if (!len) {
		free(q);
		return fail(ctx, -EINVAL, "alloc: length 0");
	}
	err = xhca_ctl_call_fd(ctx->fd, XHCA_CTL_ALLOC, q, (__u32)qlen, -1, &r, &got, NULL, ctx->err,
			       sizeof(ctx->err));
	if (conn_lost(err) && !resume(ctx))
		err = xhca_ctl_call_fd(ctx->fd, XHCA_CTL_ALLOC, q, (__u32)qlen, -1, &r, &got, NULL,
				       ctx->err, sizeof(ctx->err));
	free(q);
	if (err)
		return err;
	memcpy(a, r, got < sizeof(*a) ? got : sizeof(*a));
	*reply = r;
	if (got < sizeof(*a) || got != sizeof(*a) + (size_t)a->nruns * sizeof(struct xhca_alloc_run) ||
	    a->len != (__u64)a->npages * XHCA_PAGE_SIZE) {
		a->id = 0;
		return fail(ctx, -EPROTO, "alloc: bad reply: libxhca and xhcad versions differ");
	}
	return 0;
}

static int alloc_call(struct xhca_ctx *ctx, size_t len, unsigned int flags, struct xhca_alloc *a,
		      void **reply)
{
	return alloc_join_call(ctx, len, flags, NULL, 0, a, reply);
}

/* Maps each run of an allocation's pages side by side at va (reserved). */
static int map_runs(struct xhca_ctx *ctx, __u8 *va, const struct xhca_alloc *a,
		    const struct xhca_alloc_run *runs)
{
	size_t pos = 0;

	for (__u32 i = 0; i < a->nruns; i++) {
		size_t n = (size_t)runs[i].count * XHCA_PAGE_SIZE;

		if (pos + n > a->len || map_host(ctx, va + pos, runs[i].page, runs[i].count))
			return fail(ctx, -EPROTO, "alloc: cannot map host memory page %u",
				    runs[i].page);
		pos += n;
	}
	return 0;
}

static void alloc_undo(struct xhca_ctx *ctx, __u32 id)
{
	if (id)
		xhca_ctl_call_fd(ctx->fd, XHCA_CTL_FREE, &id, sizeof(id), -1, NULL, NULL, NULL,
				 NULL, 0);
}

void *xhca_alloc_ex(struct xhca_ctx *ctx, size_t len, unsigned int flags)
{
	struct xhca_alloc a;
	struct buf nb = {};
	__u8 *va = MAP_FAILED;
	void *r = NULL;
	int err;

	err = alloc_call(ctx, len, flags, &a, &r);
	if (err)
		goto out;
	/* A place for all of it, then each run of pages in its place. */
	va = sys_mmap(NULL, a.len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (va == MAP_FAILED) {
		err = fail(ctx, -errno, "alloc: no address space for %llu bytes",
			   (unsigned long long)a.len);
		goto out;
	}
	err = map_runs(ctx, va, &a, (const struct xhca_alloc_run *)((const __u8 *)r + sizeof(a)));
	if (err)
		goto out;
	nb.va = va;
	nb.len = a.len;
	nb.id = a.id;
	nb.contiguous = a.nruns == 1;
	err = buf_add(ctx, &nb);
out:
	free(r);
	if (err) {
		if (va != MAP_FAILED)
			sys_munmap(va, a.len);
		alloc_undo(ctx, a.id);
		errno = -err;
		return NULL;
	}
	return va;
}

void *xhca_alloc(struct xhca_ctx *ctx, size_t len)
{
	return xhca_alloc_ex(ctx, len, 0);
}

int xhca_free(struct xhca_ctx *ctx, void *addr)
{
	struct buf *b = buf_find(ctx, addr, 1);
	int err;

	if (!b || b->va != addr || b->adopted)
		return fail(ctx, -EFAULT, "free: %p is not the start of a buffer of xhca_alloc",
			    addr);
	err = call(ctx, XHCA_CTL_FREE, &b->id, sizeof(b->id), -1, NULL, 0, NULL);
	if (err)
		return err;
	sys_munmap(b->va, b->len);
	buf_del(ctx, b);
	return 0;
}

/* ---- host memory under the application's own pages ---------------------- */


/*
 * How [base, base + n) is mapped now, from /proc/self/maps: 0 when it is
 * private memory (heap, stack, malloc, mmap MAP_PRIVATE, a program's data
 * and bss) with no hole, readable, its protection in *prot; with
 * want_hostmem, when it is all host memory mapped from xhcad's map.
 * -EFAULT: a hole or unreadable; -EOPNOTSUPP: other memory (shared, whose
 * writes others must see; hugetlb; the kernel's vdso and vvar).
 */
static int maps_check(uintptr_t base, size_t n, int want_hostmem, int *prot)
{
	FILE *f = fopen("/proc/self/maps", "re");
	uintptr_t at = base, end = base + n;
	char line[512];
	int rc = -EFAULT;

	if (!f)
		return -errno;
	*prot = PROT_READ | PROT_WRITE;
	while (at < end && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, inode;
		char perms[8], path[256] = "";

		if (sscanf(line, "%lx-%lx %7s %*s %*s %lu %255[^\n]", &lo, &hi, perms, &inode,
			   path) < 4)
			continue;
		if (hi <= at)
			continue;
		if (lo > at)
			break; /* a hole */
		if (!want_hostmem && perms[0] != 'r')
			break; /* -EFAULT */
		if (want_hostmem ? !strstr(path, "bpf-map")
				 : (perms[3] != 'p' || strstr(path, "huge") ||
				    (path[0] == '[' && strcmp(path, "[heap]") &&
				     strncmp(path, "[stack", 6)))) {
			rc = -EOPNOTSUPP;
			break;
		}
		if (perms[1] != 'w')
			*prot &= ~PROT_WRITE;
		if (perms[2] == 'x')
			*prot |= PROT_EXEC;
		at = hi;
	}
	fclose(f);
	return at >= end ? 0 : rc;
}

/* Private anonymous pages with the bytes of [va, va + n) in place of what
 * is there (one atomic replacement). */
/*
 * Pages are copied, then the copy mapped in their place: whatever is
 * written there in between is lost. The calling thread's own stack may be
 * among them (a buffer on the stack: its page holds the frames of this very
 * call), so the copy and the swap run on another thread, which starts them
 * only once this one sleeps in the kernel (its futex wait, every signal
 * blocked): from then on nothing writes its stack until it is woken.
 */
struct swap {
	__u8 *va;		/* the application's pages */
	size_t n;
	__u8 *tmp;		/* adopt: host memory mapped at tmp, in runs */
	const struct xhca_alloc_run *runs;
	__u32 nruns;
	size_t done;		/* bytes swapped */
	int err;
};

/* [va, va + n) to private anonymous pages holding its bytes. A page of
 * host memory the application discarded (madvise MADV_DONTNEED, as
 * allocators do with memory freed: glibc shrinking a thread's arena) has
 * lost its mapping, and host memory has no fault handler to give it back:
 * a read there is SIGBUS. So the bytes are read by the kernel
 * (process_vm_readv fails instead), page by page where a read of all of
 * them failed, and a discarded page comes back as the zero page it would
 * have been. */
static void *swap_private(void *arg)
{
	struct swap *s = arg;
	void *tmp = sys_mmap(NULL, s->n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct iovec l = { tmp, s->n }, r = { s->va, s->n };

	s->err = 0;
	if (tmp == MAP_FAILED) {
		s->err = -errno;
		return NULL;
	}
	/* (whole pages, beyond the application's buffers: copied by the
	 * kernel, which no sanitizer of the program's takes for an overflow
	 * of its malloc'd buffer) */
	if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != (ssize_t)s->n)
		for (size_t o = 0; o < s->n; o += XHCA_PAGE_SIZE) {
			l = (struct iovec){ (__u8 *)tmp + o, XHCA_PAGE_SIZE };
			r = (struct iovec){ s->va + o, XHCA_PAGE_SIZE };
			if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != XHCA_PAGE_SIZE)
				memset(l.iov_base, 0, XHCA_PAGE_SIZE);
		}
	if (sys_mremap(tmp, s->n, s->n, MREMAP_MAYMOVE | MREMAP_FIXED, s->va) == MAP_FAILED) {
		s->err = -errno;
		sys_munmap(tmp, s->n);
	}
	return NULL;
}

/* The host memory at tmp gets the bytes of [va, va + n) (a read that would
 * fault fails instead), then each run of it moves over the application's
 * pages in one step. */
static void *swap_adopt(void *arg)
{
	struct swap *s = arg;
	struct iovec l = { s->tmp, s->n }, r = { s->va, s->n };

	s->err = 0;
	s->done = 0;
	if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != (ssize_t)s->n) {
		s->err = -EFAULT;
		return NULL;
	}
	for (__u32 i = 0; i < s->nruns; i++) {
		size_t rl = (size_t)s->runs[i].count * XHCA_PAGE_SIZE;

		if (sys_mremap(s->tmp + s->done, rl, rl, MREMAP_MAYMOVE | MREMAP_FIXED,
			   s->va + s->done) == MAP_FAILED) {
			s->err = -errno;
			return NULL;
		}
		s->done += rl;
	}
	return NULL;
}

/* What off_stack's thread runs, and the futex the caller sleeps on. */
struct off_job {
	void *(*fn)(void *);
	struct swap *s;
	pid_t caller;		/* its thread id */
	int state;		/* 0 running, 1 done */
};

/* Whether thread tid sleeps in futex(addr, FUTEX_WAIT...): the syscall it
 * is blocked in, from /proc (-1: cannot be told). */
static int asleep_on(pid_t tid, const void *addr)
{
	char path[64], line[256];
	unsigned long nr, a0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	line[n] = 0;
	if (sscanf(line, "%lu %lx", &nr, &a0) != 2)
		return 0; /* "running" */
	return nr == SYS_futex && a0 == (unsigned long)(uintptr_t)addr;
}

static void *off_job_run(void *arg)
{
	struct off_job *j = arg;
	int k = 0, r;

	/* (without /proc: a while, which the caller's few instructions to
	 * its sleep never take) */
	while ((r = asleep_on(j->caller, &j->state)) == 0 && k++ < 200000)
		sched_yield();
	if (r < 0)
		usleep(20000);
	j->fn(j->s);
	__atomic_store_n(&j->state, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &j->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	return NULL;
}

static int off_stack(void *(*fn)(void *), struct swap *s)
{
	struct off_job *j = calloc(1, sizeof(*j));
	sigset_t all, old;
	pthread_t t;

	if (!j) {
		fn(s); /* as well as it goes */
		return s->err;
	}
	*j = (struct off_job){ .fn = fn, .s = s, .caller = (pid_t)syscall(SYS_gettid) };
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&t, NULL, off_job_run, j)) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		free(j);
		fn(s); /* no thread to be had: here, as well as it goes */
		return s->err;
	}
	while (!__atomic_load_n(&j->state, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &j->state, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	pthread_join(t, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	free(j);
	return s->err;
}

static int to_private(__u8 *va, size_t n)
{
	struct swap s = { .va = va, .n = n };

	return off_stack(swap_private, &s);
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&sessions_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&sessions_lock);
}

/* The child of a fork gets its own copy of adopted memory, as a kernel
 * with copy-on-fork of pinned pages gives it (the parent keeps the host
 * memory, and remote WRITEs land only there). */
static void fork_child(void)
{
	for (struct xhca_ctx *c = sessions; c; c = c->next_session)
		for (__u32 i = 0; i < c->nbufs; i++)
			if (c->bufs[i].adopted)
				to_private(c->bufs[i].va, c->bufs[i].len);
	pthread_mutex_unlock(&sessions_lock);
}

static void fork_init(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* The host memory pages [g0, g1) of an allocation (pages: one a page)
 * over the application's pages at va + g0 pages, with their bytes. */
static int adopt_gap(struct xhca_ctx *ctx, __u8 *va, const __u32 *pages, __u32 g0, __u32 g1)
{
	size_t n = (size_t)(g1 - g0) * XHCA_PAGE_SIZE;
	struct xhca_alloc_run *runs = calloc(g1 - g0, sizeof(*runs));
	__u8 *tmp = sys_mmap(NULL, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct swap sw;
	__u32 nruns = 0;
	int err = 0;

	if (!runs || tmp == MAP_FAILED) {
		err = fail(ctx, -ENOMEM, "adopt: no memory or address space for %zu bytes", n);
		goto out;
	}
	/* (a run in one block: one mapping for mremap to move) */
	for (__u32 p = g0; p < g1; p++) {
		if (nruns && runs[nruns - 1].page + runs[nruns - 1].count == pages[p] &&
		    pages[p] % XHCA_BLOCK_PAGES)
			runs[nruns - 1].count++;
		else
			runs[nruns++] = (struct xhca_alloc_run){ .page = pages[p], .count = 1 };
	}
	for (__u32 i = 0, pos = 0; i < nruns; pos += runs[i++].count)
		if (map_host(ctx, tmp + (size_t)pos * XHCA_PAGE_SIZE, runs[i].page, runs[i].count)) {
			err = fail(ctx, -EPROTO, "adopt: cannot map host memory page %u",
				   runs[i].page);
			goto out;
		}
	sw = (struct swap){ .va = va + (size_t)g0 * XHCA_PAGE_SIZE, .n = n, .tmp = tmp,
			    .runs = runs, .nruns = nruns };
	err = off_stack(swap_adopt, &sw);
	if (err) {
		fail(ctx, err, err == -EFAULT ? "adopt: cannot read %zu bytes at %p"
			       : "adopt: cannot map host memory over %zu bytes at %p", n, sw.va);
		if (sw.done)
			to_private(sw.va, sw.done);
	}
out:
	if (tmp != MAP_FAILED)
		sys_munmap(tmp, n);
	free(runs);
	return err;
}

/* The next run of pages [*p, *q) not taken, from *p on; 0 when none is left. */
static int next_gap(const __u8 *taken, __u32 n, __u32 *p, __u32 *q)
{
	while (*p < n && taken[*p])
		(*p)++;
	for (*q = *p; *q < n && !taken[*q]; (*q)++)
		;
	return *p < n;
}

/* Host memory (pages: one a page) over every run of the application's
 * pages at va that no adopted buffer has yet, each keeping its protection;
 * on a failure what was swapped goes back, with its bytes. */
static int adopt_gaps(struct xhca_ctx *ctx, __u8 *va, const __u32 *pages, const __u8 *taken,
		      __u32 npages)
{
	int err = 0, prot;

	for (__u32 p = 0, q; !err && next_gap(taken, npages, &p, &q); p = q) {
		__u8 *at = va + (size_t)p * XHCA_PAGE_SIZE;
		size_t n = (size_t)(q - p) * XHCA_PAGE_SIZE;

		err = maps_check((uintptr_t)at, n, 0, &prot);
		if (!err)
			err = adopt_gap(ctx, va, pages, p, q);
		if (!err && prot != (PROT_READ | PROT_WRITE) && mprotect(at, n, prot))
			err = fail(ctx, -errno, "adopt: cannot give %p its protection back", at);
		if (err)
			for (__u32 g = 0; g < p; g++)
				if (!taken[g])
					to_private(va + (size_t)g * XHCA_PAGE_SIZE, XHCA_PAGE_SIZE);
	}
	return err;
}

/* The adopted buffers that [*lo, *hi) overlaps, the range grown to take
 * them whole (and what that overlaps in turn): their indexes in join, how
 * many; -EEXIST when it meets a buffer of xhca_alloc. */
static int adopt_union(struct xhca_ctx *ctx, uintptr_t *lo, uintptr_t *hi, __u32 *idx, __u32 *n)
{
	int grew = 1;

	*n = 0;
	while (grew) {
		grew = 0;
		for (__u32 i = 0; i < ctx->nbufs; i++) {
			const struct buf *b = &ctx->bufs[i];
			uintptr_t bl = (uintptr_t)b->va, bh = bl + b->len;
			__u32 k;

			if (bh <= *lo || bl >= *hi)
				continue;
			if (!b->adopted)
				return -EEXIST;
			for (k = 0; k < *n && idx[k] != i; k++)
				;
			if (k == *n)
				idx[(*n)++] = i;
			if (bl < *lo || bh > *hi) {
				*lo = bl < *lo ? bl : *lo;
				*hi = bh > *hi ? bh : *hi;
				grew = 1;
			}
		}
	}
	return 0;
}

/* The new allocation a over [lo, hi) becomes the buffer there; the ones
 * it joined (their indexes in idx) leave the table, lookups finding the new
 * one (the same pages), but live on for their regions until it goes. */
static int adopt_commit(struct xhca_ctx *ctx, uintptr_t lo, uintptr_t hi,
			const struct xhca_alloc *a, __u32 *idx, __u32 njoin)
{
	struct buf nb = { .va = (__u8 *)lo, .len = hi - lo, .id = a->id,
			  .contiguous = a->nruns == 1, .adopted = 1 };
	struct buf *j = realloc(ctx->joined, (ctx->njoined + njoin) * sizeof(*j) + 1);

	if (!j)
		return -ENOMEM;
	ctx->joined = j;
	/* highest index first: each removal leaves the lower ones in place */
	for (__u32 k = 0; k < njoin; k++)
		for (__u32 m = k + 1; m < njoin; m++)
			if (idx[m] > idx[k]) {
				__u32 t = idx[k];

				idx[k] = idx[m];
				idx[m] = t;
			}
	for (__u32 k = 0; k < njoin; k++) {
		struct buf *b = &ctx->bufs[idx[k]];

		for (__u32 h = 0; h < ctx->njoined; h++)
			if (ctx->joined[h].parent == b->id)
				ctx->joined[h].parent = a->id;
		ctx->joined[ctx->njoined] = *b;
		ctx->joined[ctx->njoined++].parent = a->id;
		buf_del(ctx, b);
	}
	return buf_add(ctx, &nb);
}

void *xhca_adopt(struct xhca_ctx *ctx, void *addr, size_t len)
{
	uintptr_t lo = (uintptr_t)addr & ~(uintptr_t)(XHCA_PAGE_SIZE - 1), hi;
	struct xhca_alloc_join *join = NULL;
	__u32 *idx = NULL, *pages = NULL, njoin = 0, npages;
	struct xhca_alloc a = {};
	__u8 *taken = NULL;
	void *r = NULL;
	int err, prot;

	pthread_once(&fork_once, fork_init);
	if (!len || (uintptr_t)addr + len < (uintptr_t)addr) {
		err = fail(ctx, -EINVAL, "adopt: %zu bytes at %p: no such range", len, addr);
		goto out;
	}
	hi = lo + pages_of((uintptr_t)addr + len - lo);
	idx = calloc(ctx->nbufs + 1, sizeof(*idx));
	join = calloc(ctx->nbufs + 1, sizeof(*join));
	if (!idx || !join) {
		err = -ENOMEM;
		goto out;
	}
	err = adopt_union(ctx, &lo, &hi, idx, &njoin);
	if (err) {
		fail(ctx, err, "adopt: %zu bytes at %p overlap a buffer of xhca_alloc", len, addr);
		goto out;
	}
	npages = (__u32)((hi - lo) / XHCA_PAGE_SIZE);
	taken = calloc(npages, 1);
	pages = calloc(npages, sizeof(*pages));
	if (!taken || !pages) {
		err = -ENOMEM;
		goto out;
	}
	for (__u32 k = 0; k < njoin; k++) {
		const struct buf *b = &ctx->bufs[idx[k]];
		__u32 at = (__u32)(((uintptr_t)b->va - lo) / XHCA_PAGE_SIZE);

		join[k] = (struct xhca_alloc_join){ .id = b->id, .page = at };
		memset(taken + at, 1, b->len / XHCA_PAGE_SIZE);
	}
	/* the pages no buffer has yet must be the application's private memory */
	for (__u32 p = 0, q; next_gap(taken, npages, &p, &q); p = q) {
		err = maps_check(lo + (uintptr_t)p * XHCA_PAGE_SIZE, (size_t)(q - p) * XHCA_PAGE_SIZE,
				 0, &prot);
		if (err) {
			fail(ctx, err, err == -EFAULT ? "adopt: %zu bytes at %p are not all mapped "
				       "and readable" : "adopt: %zu bytes at %p are not private memory "
				       "(a shared or hugetlb mapping): register a buffer of malloc, "
				       "posix_memalign or mmap(MAP_PRIVATE | MAP_ANONYMOUS)", len, addr);
			goto out;
		}
	}
	err = alloc_join_call(ctx, hi - lo, 0, join, njoin, &a, &r);
	if (err)
		goto out;
	{
		const struct xhca_alloc_run *runs = (const void *)((const __u8 *)r + sizeof(a));

		for (__u32 i = 0, p = 0; i < a.nruns; i++)
			for (__u32 c = 0; c < runs[i].count && p < npages; c++)
				pages[p++] = runs[i].page + c;
	}
	err = adopt_gaps(ctx, (__u8 *)lo, pages, taken, npages);
	if (!err)
		err = adopt_commit(ctx, lo, hi, &a, idx, njoin);
out:
	free(r);
	free(idx);
	free(join);
	free(taken);
	free(pages);
	if (err) {
		alloc_undo(ctx, a.id);
		errno = -err;
		return NULL;
	}
	return (void *)lo;
}

/* The adopted buffer at b goes back to private memory with its bytes, if
 * the application still has host memory there (it may have unmapped it). */
static void unadopt_pages(struct buf *b)
{
	int prot;

	if (!maps_check((uintptr_t)b->va, b->len, 1, &prot))
		to_private(b->va, b->len);
}

int xhca_unadopt(struct xhca_ctx *ctx, void *base)
{
	struct buf *b = buf_find(ctx, base, 1);
	int err;

	if (!b || b->va != base || !b->adopted)
		return fail(ctx, -EFAULT, "unadopt: %p is not the start of adopted memory", base);
	unadopt_pages(b);
	err = call(ctx, XHCA_CTL_FREE, &b->id, sizeof(b->id), -1, NULL, 0, NULL);
	/* and the allocations it joined, whose pages it held too */
	for (__u32 h = 0; h < ctx->njoined;) {
		if (ctx->joined[h].parent != b->id) {
			h++;
			continue;
		}
		if (!err)
			err = call(ctx, XHCA_CTL_FREE, &ctx->joined[h].id, sizeof(ctx->joined[h].id),
				   -1, NULL, 0, NULL);
		ctx->joined[h] = ctx->joined[--ctx->njoined];
	}
	buf_del(ctx, b);
	return err;
}

int xhca_mem_lookup(struct xhca_ctx *ctx, const void *addr, size_t len, uint32_t *alloc,
		    uint64_t *off, int *contiguous)
{
	struct buf *b = buf_find(ctx, addr, len);

	if (!b)
		return -EFAULT;
	if (alloc)
		*alloc = b->id;
	if (off)
		*off = (uint64_t)((const __u8 *)addr - b->va);
	if (contiguous)
		*contiguous = (int)b->contiguous;
	return 0;
}

/* ---- protection domains and memory regions ----------------------------------- */

struct xhca_pd *xhca_pd_alloc(struct xhca_ctx *ctx)
{
	struct xhca_pd *pd = calloc(1, sizeof(*pd));
	int err;

	if (!pd)
		return NULL;
	err = call(ctx, XHCA_CTL_PD_ALLOC, NULL, 0, -1, &pd->id, sizeof(pd->id), NULL);
	if (err) {
		free(pd);
		errno = -err;
		return NULL;
	}
	pd->ctx = ctx;
	pd->next = ctx->pds;
	ctx->pds = pd;
	return pd;
}

int xhca_pd_dealloc(struct xhca_pd *pd)
{
	struct xhca_ctx *ctx = pd->ctx;
	struct xhca_pd **pp;
	int err;

	err = call(ctx, XHCA_CTL_PD_DEALLOC, &pd->id, sizeof(pd->id), -1, NULL, 0, NULL);
	if (err)
		return err;
	for (pp = &ctx->pds; *pp; pp = &(*pp)->next) {
		if (*pp == pd) {
			*pp = pd->next;
			break;
		}
	}
	if (ctx->dflt_pd == pd)
		ctx->dflt_pd = NULL;
	free(pd);
	return 0;
}

uint32_t xhca_pd_id(const struct xhca_pd *pd)
{
	return pd->id;
}

struct xhca_mr *xhca_mr_reg(struct xhca_pd *pd, void *addr, size_t len, unsigned int access)
{
	return xhca_mr_reg_iova(pd, addr, len, (uint64_t)(uintptr_t)addr, access);
}

/* The request that registers len bytes at addr of pd's session; 0, or
 * -errno with the message kept. */
static int mr_attr(struct xhca_pd *pd, void *addr, size_t len, uint64_t iova,
		   unsigned int access, const char *what, struct xhca_mr_attr *a)
{
	struct xhca_ctx *ctx = pd->ctx;
	struct buf *b;

	*a = (struct xhca_mr_attr){ .pd = pd->id, .len = len, .access = access, .iova = iova };
	if (!len)
		return fail(ctx, -EINVAL, "%s: length 0; a region has at least one byte", what);
	b = buf_find(ctx, addr, len);
	if (!b)
		return fail(ctx, -EFAULT, "%s: %zu bytes at %p are not inside one buffer of "
			    "xhca_alloc", what, len, addr);
	a->alloc = b->id;
	a->off = (__u64)((__u8 *)addr - b->va);
	return 0;
}

struct xhca_mr *xhca_mr_reg_iova(struct xhca_pd *pd, void *addr, size_t len, uint64_t iova,
				 unsigned int access)
{
	struct xhca_ctx *ctx = pd->ctx;
	struct xhca_mr_attr a;
	struct xhca_mr *mr;
	int err = mr_attr(pd, addr, len, iova, access, "mr reg", &a);

	if (err) {
		errno = -err;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;
	err = call(ctx, XHCA_CTL_MR_REG, &a, sizeof(a), -1, &a, sizeof(a), NULL);
	if (err) {
		free(mr);
		errno = -err;
		return NULL;
	}
	mr->pd = pd;
	mr->rkey = a.rkey;
	mr->flags = a.flags;
	mr->addr = addr;
	mr->len = len;
	mr->next = ctx->mrs;
	ctx->mrs = mr;
	return mr;
}

int xhca_mr_rereg(struct xhca_mr *mr, struct xhca_pd *pd, void *addr, size_t len, uint64_t iova,
		  unsigned int access)
{
	struct xhca_mr_attr a;
	int err;

	if (pd->ctx != mr->pd->ctx)
		return fail(mr->pd->ctx, -EINVAL, "mr rereg: the PD is of another session");
	err = mr_attr(pd, addr, len, iova, access, "mr rereg", &a);
	if (err)
		return err;
	a.rkey = mr->rkey;
	err = call(pd->ctx, XHCA_CTL_MR_REREG, &a, sizeof(a), -1, &a, sizeof(a), NULL);
	if (err)
		return err;
	mr->pd = pd;
	mr->flags = a.flags;
	mr->addr = addr;
	mr->len = len;
	return 0;
}

int xhca_mr_dereg(struct xhca_mr *mr)
{
	struct xhca_ctx *ctx = mr->pd->ctx;
	struct xhca_mr **pp;
	int err;

	err = call(ctx, XHCA_CTL_MR_DEREG, &mr->rkey, sizeof(mr->rkey), -1, NULL, 0, NULL);
	if (err)
		return err;
	for (pp = &ctx->mrs; *pp; pp = &(*pp)->next) {
		if (*pp == mr) {
			*pp = mr->next;
			break;
		}
	}
	free(mr);
	return 0;
}

int xhca_mw_alloc(struct xhca_pd *pd, unsigned int type, uint32_t *rkey)
{
	struct xhca_mw_req r = { .pd = pd->id, .type = type };
	int err = call(pd->ctx, XHCA_CTL_MW_ALLOC, &r, sizeof(r), -1, &r, sizeof(r), NULL);

	if (!err)
		*rkey = r.rkey;
	return err;
}

int xhca_mw_dealloc(struct xhca_pd *pd, uint32_t rkey)
{
	return call(pd->ctx, XHCA_CTL_MW_DEALLOC, &rkey, sizeof(rkey), -1, NULL, 0, NULL);
}

uint32_t xhca_mr_rkey(const struct xhca_mr *mr)
{
	return mr->rkey;
}

int xhca_mr_pretranslated(const struct xhca_mr *mr)
{
	return !!(mr->flags & XHCA_MRF_PRETRANSLATED);
}

/* ---- completion queues ----------------------------------------------------- */

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
	err = call(ctx, XHCA_CTL_CQ_CREATE, &a, sizeof(a), cq->efd, &a, sizeof(a), &dbfd);
	if (err)
		goto fail;
	cq->ring = dbfd < 0 ? NULL : map_ring(ctx, a.ring_off, a.ring_len);
	if (!cq->ring) {
		err = fail(ctx, -EPROTO, "cq create: cannot map the ring");
		call(ctx, XHCA_CTL_CQ_DESTROY, &a.cq, sizeof(a.cq), -1, NULL, 0, NULL);
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

	err = call(cq->ctx, XHCA_CTL_CQ_RESIZE, &a, sizeof(a), -1, &a, sizeof(a), NULL);
	if (err)
		return err;
	/* xhcad writes the new ring from now on; the old one is freed */
	ring = map_ring(cq->ctx, a.ring_off, a.ring_len);
	if (!ring)
		return fail(cq->ctx, -EPROTO, "cq resize: cannot map the new ring");
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

	err = call(ctx, XHCA_CTL_CQ_DESTROY, &cq->id, sizeof(cq->id), -1, NULL, 0, NULL);
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

/* The consumer index moves to cons; xhcad may be waiting for exactly
 * this room (ring.h): its doorbell. 0 or -errno. */
static int cq_consumed(struct xhca_cq *cq, __u32 cons)
{
	__atomic_store_n(&cq->ring->cons, cons, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&cq->ring->waiting, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(&cq->ring->waiting, 0, __ATOMIC_SEQ_CST)) {
		__u64 one = 1;

		if (write(cq->dbfd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			return -errno;
	}
	return 0;
}

int xhca_poll_cq(struct xhca_cq *cq, struct xhca_wc *wc, int n)
{
	__u32 cons = cq->ring->cons;
	__u32 prod = __atomic_load_n(&cq->ring->prod, __ATOMIC_ACQUIRE);
	unsigned int every;
	int k = 0;

	while (k < n && cons != prod)
		wc[k++] = cq->e[cons++ & (cq->depth - 1)];
	if (!k) {
		every = poll_yield();
		if (n > 0 && every && !(++cq->empty % every))
			sched_yield();
		return 0;
	}
	cq->empty = 0;
	return cq_consumed(cq, cons) ?: k;
}

int xhca_cq_clean(struct xhca_cq *cq, uint32_t qpn)
{
	__u32 cons = cq->ring->cons;
	__u32 prod = __atomic_load_n(&cq->ring->prod, __ATOMIC_ACQUIRE), gone = 0;

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
	return cq_consumed(cq, cons + gone) ?: (int)gone;
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
			int err = resume(cq->ctx);

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

/* ---- queue pairs -------------------------------------------------------------- */

/* The rings xhcad made for the QP (a), mapped, and the table of its
 * receive scatter lists; 0, or -errno with nothing left mapped. */
static int qp_map(struct xhca_ctx *ctx, struct xhca_qp *qp, const struct xhca_qp_attr *a,
		  unsigned int rq_sge)
{
	int err = 0;

	qp->type = a->type;
	qp->ctx = ctx;
	qp->qpn = a->qpn;
	qp->rq_len = pages_of(xhca_ring_bytes(a->rq_depth, sizeof(struct xhca_rwqe)));
	if (!a->srq) {
		qp->rq.ctl = map_ring(ctx, a->rq_off, qp->rq_len);
		if (!qp->rq.ctl)
			return fail(ctx, -EPROTO, "qp create: cannot map the receive queue");
		qp->rq.depth = a->rq_depth;
		qp->rq.own_alloc = a->rq_alloc;
		qp->rq.e = (struct xhca_rwqe *)(qp->rq.ctl + 1);
	}
	if (a->send_cq) {
		qp->sq_len = pages_of(xhca_ring_bytes(a->sq_depth, sizeof(struct xhca_swqe)));
		qp->sq = map_ring(ctx, a->sq_off, qp->sq_len);
		if (!qp->sq) {
			err = fail(ctx, -EPROTO, "qp create: cannot map the send queue");
			goto out;
		}
		qp->sq_depth = a->sq_depth;
		qp->sq_alloc = a->sq_alloc;
		qp->sqe = (struct xhca_swqe *)(qp->sq + 1);
	}
	if (qp->rq.ctl)
		err = rq_sgl(ctx, &qp->rq, rq_sge);
out:
	if (err) {
		if (qp->rq.ctl)
			sys_munmap(qp->rq.ctl, qp->rq_len);
		if (qp->sq)
			sys_munmap(qp->sq, qp->sq_len);
	}
	return err;
}

struct xhca_qp *xhca_qp_create(struct xhca_ctx *ctx, const struct xhca_qp_init_attr *attr)
{
	struct xhca_qp_attr a = {};
	struct xhca_qp *qp;
	int err;

	if (!attr->recv_cq || attr->recv_cq->ctx != ctx) {
		snprintf(ctx->err, sizeof(ctx->err), "qp create: recv_cq must be a CQ of this "
			 "session");
		errno = EINVAL;
		return NULL;
	}
	a.type = attr->type;
	a.qpn = attr->qpn;
	a.pkey = attr->pkey;
	a.qkey = attr->qkey;
	if (attr->flowq >= 0) {
		if (attr->flowq >= XHCA_FLOWQ_MAX) {
			snprintf(ctx->err, sizeof(ctx->err), "qp create: flow queue %d is out of "
				 "range (0..%d)", attr->flowq, XHCA_FLOWQ_MAX - 1);
			errno = EINVAL;
			return NULL;
		}
		a.flowq = (__u8)attr->flowq;
		a.mask |= XHCA_QPA_FLOWQ;
	}
	a.cq = attr->recv_cq->id;
	a.rq_depth = attr->srq ? 0 : attr->rq_depth;
	if (attr->srq) {
		if (attr->srq->ctx != ctx) {
			fail(ctx, -EINVAL, "qp create: srq must be a shared receive queue of this "
			     "session");
			errno = EINVAL;
			return NULL;
		}
		a.srq = attr->srq->id;
	}
	if (attr->send_cq) {
		if (attr->send_cq->ctx != ctx) {
			fail(ctx, -EINVAL, "qp create: send_cq must be a CQ of this session");
			errno = EINVAL;
			return NULL;
		}
		if (ctx->sq_dbfd < 0) {
			/* one send doorbell for the session's send queues */
			int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

			if (fd < 0)
				return NULL;
			err = call(ctx, XHCA_CTL_SQ_DOORBELL, NULL, 0, fd, NULL, 0, NULL);
			if (err) {
				close(fd);
				errno = -err;
				return NULL;
			}
			ctx->sq_dbfd = fd;
		}
		a.send_cq = attr->send_cq->id;
		a.sq_depth = attr->sq_depth;
	}
	if (attr->create_flags & XHCA_QP_CREATE_BLOCK_SELF_MCAST_LB)
		a.flags |= XHCA_QPF_BLOCK_MC_LOOPBACK;
	if (attr->create_flags & XHCA_QP_CREATE_PROXY)
		a.flags |= XHCA_QPF_PROXY;
	if (attr->pd && attr->pd->ctx != ctx) {
		fail(ctx, -EINVAL, "qp create: pd must be a protection domain of this session");
		errno = EINVAL;
		return NULL;
	}
	if (!attr->pd && !ctx->dflt_pd) {
		ctx->dflt_pd = xhca_pd_alloc(ctx);
		if (!ctx->dflt_pd)
			return NULL;
	}
	a.pd = (attr->pd ? attr->pd : ctx->dflt_pd)->id;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	err = call(ctx, XHCA_CTL_QP_CREATE, &a, sizeof(a), -1, &a, sizeof(a), NULL);
	if (err) {
		free(qp);
		errno = -err;
		return NULL;
	}
	err = qp_map(ctx, qp, &a, attr->rq_sge);
	if (err) {
		call(ctx, XHCA_CTL_QP_DESTROY, &a.qpn, sizeof(a.qpn), -1, NULL, 0, NULL);
		free(qp);
		errno = -err;
		return NULL;
	}
	qp->next = ctx->qps;
	ctx->qps = qp;
	return qp;
}

static int mcast_call(struct xhca_qp *qp, __u32 op, const uint8_t mgid[16])
{
	struct xhca_mcast_req r = { .qpn = qp->qpn, .flags = XHCA_MCF_CREATE };

	memcpy(r.mgid.gid, mgid, 16);
	return call(qp->ctx, op, &r, sizeof(r), -1, NULL, 0, NULL);
}

int xhca_mcast_attach(struct xhca_qp *qp, const uint8_t mgid[16])
{
	return mcast_call(qp, XHCA_CTL_MCAST_ATTACH, mgid);
}

int xhca_mcast_detach(struct xhca_qp *qp, const uint8_t mgid[16])
{
	return mcast_call(qp, XHCA_CTL_MCAST_DETACH, mgid);
}

struct xhca_ring_ctl *xhca_qp_rq(struct xhca_qp *qp)
{
	return qp->rq.ctl;
}

uint32_t xhca_qp_num(const struct xhca_qp *qp)
{
	return qp->qpn;
}

int xhca_qp_modify(struct xhca_qp *qp, struct xhca_qp_attr *attr)
{
	attr->qpn = qp->qpn;
	return call(qp->ctx, XHCA_CTL_QP_MODIFY, attr, sizeof(*attr), -1, attr, sizeof(*attr),
		    NULL);
}

int xhca_qp_set_proxy(struct xhca_qp *qp, int on)
{
	struct xhca_qp_attr a = { .mask = XHCA_QPA_PROXY, .flags = on ? XHCA_QPF_PROXY : 0 };

	return xhca_qp_modify(qp, &a);
}

int xhca_filter_add(struct xhca_qp *qp, struct xhca_pfilter *f)
{
	struct xhca_filter r = { .qpn = qp->qpn, .f = *f };
	int err;

	err = call(qp->ctx, XHCA_CTL_FILTER_ADD, &r, sizeof(r), -1, &r, sizeof(r), NULL);
	if (err)
		return err;
	f->id = r.f.id;
	return (int)r.f.id;
}

int xhca_filter_del(struct xhca_ctx *ctx, uint32_t id)
{
	return call(ctx, XHCA_CTL_FILTER_DEL, &id, sizeof(id), -1, NULL, 0, NULL);
}

int xhca_qp_query(struct xhca_qp *qp, struct xhca_qp_attr *attr)
{
	struct xhca_qp_info qi;
	int err;

	err = call(qp->ctx, XHCA_CTL_QP_SHOW, &qp->qpn, sizeof(qp->qpn), -1, &qi, sizeof(qi),
		   NULL);
	if (!err)
		*attr = qi.attr;
	return err;
}

int xhca_qp_destroy(struct xhca_qp *qp)
{
	struct xhca_ctx *ctx = qp->ctx;
	struct xhca_qp **pp;
	int err;

	err = call(ctx, XHCA_CTL_QP_DESTROY, &qp->qpn, sizeof(qp->qpn), -1, NULL, 0, NULL);
	if (err == -ENOENT && qp->rq.ctl && __atomic_load_n(&qp->rq.ctl->dead, __ATOMIC_ACQUIRE)) {
		/* Destroyed by someone else: its rings are still ours to free. */
		err = call(ctx, XHCA_CTL_FREE, &qp->rq.own_alloc, sizeof(qp->rq.own_alloc), -1, NULL, 0,
			   NULL);
		if (!err && qp->sq)
			err = call(ctx, XHCA_CTL_FREE, &qp->sq_alloc, sizeof(qp->sq_alloc), -1, NULL,
				   0, NULL);
	}
	if (err)
		return err;
	if (qp->rq.ctl)
		sys_munmap(qp->rq.ctl, qp->rq_len);
	if (qp->rq.sgl)
		xhca_free(ctx, qp->rq.sgl);
	if (qp->sq)
		sys_munmap(qp->sq, qp->sq_len);
	for (pp = &ctx->qps; *pp; pp = &(*pp)->next) {
		if (*pp == qp) {
			*pp = qp->next;
			break;
		}
	}
	free(qp);
	return 0;
}

int xhca_post_recv(struct xhca_qp *qp, uint64_t wr_id, void *addr, uint32_t len)
{
	return xhca_post_recv_ex(qp, wr_id, addr, len, 0);
}


/* One receive entry onto a ring: the pieces of sg (n of them; none: an
 * empty buffer with XHCA_RECV_EMPTY), or one xhcad fails
 * (XHCA_RECV_LOC_PROT_ERR). */
static int rq_post(struct xhca_ctx *ctx, const struct rq_ring *r, uint64_t wr_id,
		   const struct xhca_sge *sg, int n, unsigned int flags)
{
	__u32 prod = r->ctl->prod, cons;
	struct xhca_rsge piece[XHCA_SGE_MAX];
	struct xhca_rwqe *w;
	__u64 total = 0;

	if (__atomic_load_n(&r->ctl->dead, __ATOMIC_ACQUIRE))
		return -ESHUTDOWN;
	if (n < 0 || n > (int)(r->sgl ? r->max_sge : 1) || (!n && !(flags & XHCA_RECV_EMPTY)))
		return -EINVAL;
	for (int i = 0; i < n && !(flags & XHCA_RECV_LOC_PROT_ERR); i++) {
		struct buf *b = sg[i].length ? buf_find(ctx, (void *)(uintptr_t)sg[i].addr,
							 sg[i].length) : NULL;

		if (!b)
			return -EFAULT;
		piece[i] = (struct xhca_rsge){ .off = (__u64)((__u8 *)(uintptr_t)sg[i].addr - b->va),
					       .len = sg[i].length, .alloc = b->id,
					       .lkey = sg[i].lkey };
		total += sg[i].length;
	}
	if (total > 0xffffffffull)
		return -EINVAL;
	cons = __atomic_load_n(&r->ctl->cons, __ATOMIC_ACQUIRE);
	if (prod - cons >= r->depth)
		return -ENOMEM;
	w = &r->e[prod & (r->depth - 1)];
	memset(w, 0, sizeof(*w));
	w->wr_id = wr_id;
	if (flags & XHCA_RECV_LOC_PROT_ERR) {
		/* alloc 0 names no allocation: xhcad fails the entry */
	} else if (!n) {
		w->alloc = r->own_alloc; /* no byte of it is written */
	} else if (n == 1) {
		w->off = piece[0].off;
		w->len = piece[0].len;
		w->alloc = piece[0].alloc;
		w->lkey = piece[0].lkey;
	} else {
		/* the list in the entry's slot of the table, read by xhcad when
		 * a message wants the entry (it is ours until then) */
		__u32 slot = prod & (r->depth - 1);

		memcpy(r->sgl + (size_t)slot * r->max_sge, piece, (size_t)n * sizeof(piece[0]));
		w->off = (__u64)slot * r->max_sge * sizeof(piece[0]);
		w->alloc = r->sgl_alloc;
		w->len = (__u32)total;
		w->nsge = (__u32)n;
	}
	__atomic_store_n(&r->ctl->prod, prod + 1, __ATOMIC_RELEASE);
	return 0;
}

int xhca_post_recv_sg(struct xhca_qp *qp, uint64_t wr_id, const struct xhca_sge *sg, int n,
		      unsigned int flags)
{
	if (!qp->rq.ctl)
		return -EINVAL; /* its receives go to its SRQ */
	return rq_post(qp->ctx, &qp->rq, wr_id, sg, n, flags);
}

int xhca_post_recv_ex(struct xhca_qp *qp, uint64_t wr_id, void *addr, uint32_t len,
		      unsigned int flags)
{
	struct xhca_sge g = { .addr = (uint64_t)(uintptr_t)addr, .length = len };

	return xhca_post_recv_sg(qp, wr_id, &g, len || !(flags & XHCA_RECV_EMPTY) ? 1 : 0, flags);
}

/* A table of scatter lists for a ring of depth entries (max_sge > 1). */
static int rq_sgl(struct xhca_ctx *ctx, struct rq_ring *r, unsigned int max_sge)
{
	struct buf *b;

	r->max_sge = max_sge ? max_sge : 1;
	if (r->max_sge <= 1)
		return 0;
	if (r->max_sge > XHCA_SGE_MAX)
		return fail(ctx, -EINVAL, "receive scatter lists of %u pieces: at most %d",
			    max_sge, XHCA_SGE_MAX);
	r->sgl = xhca_alloc_ex(ctx, XHCA_RSGL_BYTES(r->depth, r->max_sge), XHCA_ALLOC_CONTIG);
	if (!r->sgl)
		return -errno;
	b = buf_find(ctx, r->sgl, 1);
	r->sgl_alloc = b->id;
	return 0;
}

/* ---- shared receive queues ------------------------------------------------------ */

struct xhca_srq *xhca_srq_create(struct xhca_ctx *ctx, unsigned int depth, unsigned int max_sge)
{
	struct xhca_srq_attr a = { .depth = depth };
	struct xhca_srq *q = calloc(1, sizeof(*q));
	int err;

	if (!q)
		return NULL;
	err = call(ctx, XHCA_CTL_SRQ_CREATE, &a, sizeof(a), -1, &a, sizeof(a), NULL);
	if (err) {
		free(q);
		errno = -err;
		return NULL;
	}
	q->len = pages_of(xhca_ring_bytes(a.depth, sizeof(struct xhca_rwqe)));
	q->rq.ctl = map_ring(ctx, a.ring_off, q->len);
	if (!q->rq.ctl) {
		err = fail(ctx, -EPROTO, "srq create: cannot map the ring");
		call(ctx, XHCA_CTL_SRQ_DESTROY, &a.srq, sizeof(a.srq), -1, NULL, 0, NULL);
		free(q);
		errno = -err;
		return NULL;
	}
	q->ctx = ctx;
	q->id = a.srq;
	q->rq.depth = a.depth;
	q->rq.own_alloc = a.alloc;
	q->rq.e = (struct xhca_rwqe *)(q->rq.ctl + 1);
	err = rq_sgl(ctx, &q->rq, max_sge);
	if (err) {
		xhca_srq_destroy(q);
		errno = -err;
		return NULL;
	}
	return q;
}

int xhca_srq_destroy(struct xhca_srq *q)
{
	int err = call(q->ctx, XHCA_CTL_SRQ_DESTROY, &q->id, sizeof(q->id), -1, NULL, 0, NULL);

	if (err)
		return err;
	sys_munmap(q->rq.ctl, q->len);
	if (q->rq.sgl)
		xhca_free(q->ctx, q->rq.sgl);
	free(q);
	return 0;
}

int xhca_post_srq_recv_sg(struct xhca_srq *q, uint64_t wr_id, const struct xhca_sge *sg, int n,
			  unsigned int flags)
{
	return rq_post(q->ctx, &q->rq, wr_id, sg, n, flags);
}

struct xhca_ring_ctl *xhca_srq_ring(struct xhca_srq *q)
{
	return q->rq.ctl;
}

struct xhca_ring_ctl *xhca_qp_sq(struct xhca_qp *qp)
{
	return qp->sq;
}

/* Whether the QP type can send op (IBA 9.8: UD sends only; UC no READ,
 * ATOMIC or SEND with invalidate; memory windows on RC and UC). */
static int op_allowed(__u8 type, enum xhca_wr_opcode op)
{
	switch (op) {
	case XHCA_WR_SEND:
	case XHCA_WR_SEND_WITH_IMM:
		return 1;
	case XHCA_WR_RDMA_WRITE:
	case XHCA_WR_RDMA_WRITE_WITH_IMM:
	case XHCA_WR_BIND_MW:
	case XHCA_WR_LOCAL_INV:
		return type != XHCA_QPT_UD;
	case XHCA_WR_RDMA_READ:
	case XHCA_WR_ATOMIC_CMP_AND_SWP:
	case XHCA_WR_ATOMIC_FETCH_AND_ADD:
	case XHCA_WR_SEND_WITH_INV:
	case XHCA_WR_ATOMIC_WRITE:
		return type == XHCA_QPT_RC;
	}
	return 0;
}

/* What the request's opcode carries beside its scatter list (total bytes):
 * the remote region, the ATOMIC operands, a memory window's bind. */
static int swqe_target(const struct xhca_send_wr *wr, struct xhca_swqe *w, __u64 total)
{
	switch (wr->opcode) {
	case XHCA_WR_ATOMIC_WRITE:
		if (w->nsge) /* the word is in the request */
			return -EINVAL;
		w->remote_va = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->len = 8;
		break;
	case XHCA_WR_RDMA_WRITE:
	case XHCA_WR_RDMA_WRITE_WITH_IMM:
	case XHCA_WR_RDMA_READ:
		w->remote_va = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
		break;
	case XHCA_WR_ATOMIC_CMP_AND_SWP:
	case XHCA_WR_ATOMIC_FETCH_AND_ADD:
		if (total != 8) /* the original value lands there */
			return -EINVAL;
		w->remote_va = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->swap = wr->wr.atomic.swap;
		break;
	case XHCA_WR_BIND_MW:
		if (w->nsge)
			return -EINVAL;
		w->rkey = wr->wr.bind.mw_rkey;
		w->imm = wr->wr.bind.mr_lkey;
		w->remote_va = wr->wr.bind.addr;
		w->compare_add = wr->wr.bind.length;
		w->swap = wr->wr.bind.access;
		break;
	case XHCA_WR_LOCAL_INV:
		if (w->nsge)
			return -EINVAL;
		break;
	default:
		break;
	}
	return 0;
}

/* One request into slot w; 0 or -errno. */
static int swqe_fill(struct xhca_qp *qp, const struct xhca_send_wr *wr, struct xhca_swqe *w)
{
	__u64 total = 0;
	int err;

	if (!op_allowed(qp->type, wr->opcode) || wr->num_sge < 0 || wr->num_sge > XHCA_SGE_MAX)
		return -EINVAL;
	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->opcode = (__u8)wr->opcode;
	w->flags = (__u8)(wr->send_flags & (XHCA_SEND_FENCE | XHCA_SEND_SIGNALED |
					    XHCA_SEND_SOLICITED));
	if (wr->send_flags & XHCA_SEND_LOC_PROT_ERR) {
		/* an SGE in allocation 0, which is none: xhcad completes the
		 * request with LOC_PROT_ERR in its turn */
		w->nsge = 1;
		return 0;
	}
	for (int i = 0; i < wr->num_sge; i++) {
		const struct xhca_sge *g = &wr->sg_list[i];
		struct buf *b;

		if (!g->length)
			continue;
		b = buf_find(qp->ctx, (const void *)(uintptr_t)g->addr, g->length);
		if (!b)
			return -EFAULT;
		w->sge[w->nsge].off = (__u64)((__u8 *)(uintptr_t)g->addr - b->va);
		w->sge[w->nsge].len = g->length;
		w->sge[w->nsge++].alloc = b->id;
		total += g->length;
	}
	if (total > 0x80000000ull)
		return -EINVAL;
	w->len = (__u32)total;
	w->imm = wr->imm_data;
	err = swqe_target(wr, w, total);
	if (err)
		return err;
	if (qp->type == XHCA_QPT_UD) {
		memcpy(w->dest_ip, wr->wr.ud.dest_ip, 16);
		w->dest_qpn = wr->wr.ud.remote_qpn & XHCA_QPN_MASK;
		w->dest_qkey = wr->wr.ud.remote_qkey;
	}
	return 0;
}

int xhca_post_send(struct xhca_qp *qp, struct xhca_send_wr *wr, struct xhca_send_wr **bad_wr)
{
	__u32 prod, cons;
	int err = 0;

	if (bad_wr)
		*bad_wr = NULL;
	if (!qp->sq) {
		err = -EINVAL; /* created without a send CQ */
		goto out;
	}
	if (__atomic_load_n(&qp->sq->dead, __ATOMIC_ACQUIRE)) {
		err = -ESHUTDOWN;
		goto out;
	}
	prod = qp->sq->prod;
	cons = __atomic_load_n(&qp->sq->cons, __ATOMIC_ACQUIRE);
	for (; wr; wr = wr->next) {
		if (prod - cons >= qp->sq_depth) {
			err = -ENOMEM;
			break;
		}
		err = swqe_fill(qp, wr, &qp->sqe[prod & (qp->sq_depth - 1)]);
		if (err)
			break;
		prod++;
	}
	if (prod != qp->sq->prod) {
		__atomic_store_n(&qp->sq->prod, prod, __ATOMIC_RELEASE);
		/* xhcad may be going to sleep (ring.h) */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (__atomic_load_n(&qp->sq->armed, __ATOMIC_RELAXED) &&
		    __atomic_exchange_n(&qp->sq->armed, 0, __ATOMIC_SEQ_CST)) {
			__u64 one = 1;

			if (write(qp->ctx->sq_dbfd, &one, sizeof(one)) < 0 && errno != EAGAIN &&
			    !err)
				err = -errno;
		}
	}
out:
	if (err && bad_wr)
		*bad_wr = wr;
	return err;
}
