/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libxhca's host memory (xhca_int.h): the session's blocks mapped, the
 * allocations of xhca_alloc in their table, protection domains and memory
 * regions over them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "xhca_int.h"

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
		err = xl_call(ctx, XHCA_CTL_BLOCK, &b, sizeof(b), -1, &bi, sizeof(bi), &fd);
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
int xl_map_host(struct xhca_ctx *ctx, __u8 *va, __u64 page, __u64 count)
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
void *xl_map_ring(struct xhca_ctx *ctx, __u64 off, __u64 len)
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
	if (xl_map_host(ctx, m, off / XHCA_PAGE_SIZE, n / XHCA_PAGE_SIZE)) {
		int e = errno;

		sys_munmap(m, n);
		errno = e;
		return NULL;
	}
	return m;
}

/* The allocation holding [p, p + len), or NULL. */
struct buf *xl_buf_find(struct xhca_ctx *ctx, const void *p, size_t len)
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
struct xhca_ctx *xl_sessions;
pthread_mutex_t xl_sessions_lock = PTHREAD_MUTEX_INITIALIZER;

/* The buffer table changes under xl_sessions_lock: a fork's child reads it. */
int xl_buf_add(struct xhca_ctx *ctx, const struct buf *nb)
{
	int err = 0;

	pthread_mutex_lock(&xl_sessions_lock);
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
		ctx->next_session = xl_sessions;
		xl_sessions = ctx;
		ctx->in_sessions = 1;
	}
out:
	pthread_mutex_unlock(&xl_sessions_lock);
	return err;
}

void xl_buf_del(struct xhca_ctx *ctx, struct buf *b)
{
	__u32 i = (__u32)(b - ctx->bufs);

	pthread_mutex_lock(&xl_sessions_lock);
	memmove(b, b + 1, (ctx->nbufs - i - 1) * sizeof(*b));
	ctx->nbufs--;
	ctx->last = 0;
	pthread_mutex_unlock(&xl_sessions_lock);
}

/* ALLOC (with njoin earlier allocations to hold, XHCA_ALLOC_JOIN): the
 * reply (malloc'd, free it) with the allocation in *a and its runs of
 * pages after it. */
int xl_alloc_join_call(struct xhca_ctx *ctx, size_t len, unsigned int flags,
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
		return xl_fail(ctx, -EINVAL, "alloc: length 0");
	}
	err = xhca_ctl_call_fd(ctx->fd, XHCA_CTL_ALLOC, q, (__u32)qlen, -1, &r, &got, NULL, ctx->err,
			       sizeof(ctx->err));
	if (conn_lost(err) && !xl_resume(ctx))
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
		return xl_fail(ctx, -EPROTO, "alloc: bad reply: libxhca and xhcad versions differ");
	}
	return 0;
}

static int alloc_call(struct xhca_ctx *ctx, size_t len, unsigned int flags, struct xhca_alloc *a,
		      void **reply)
{
	return xl_alloc_join_call(ctx, len, flags, NULL, 0, a, reply);
}

/* Maps each run of an allocation's pages side by side at va (reserved). */
static int map_runs(struct xhca_ctx *ctx, __u8 *va, const struct xhca_alloc *a,
		    const struct xhca_alloc_run *runs)
{
	size_t pos = 0;

	for (__u32 i = 0; i < a->nruns; i++) {
		size_t n = (size_t)runs[i].count * XHCA_PAGE_SIZE;

		if (pos + n > a->len || xl_map_host(ctx, va + pos, runs[i].page, runs[i].count))
			return xl_fail(ctx, -EPROTO, "alloc: cannot map host memory page %u",
				       runs[i].page);
		pos += n;
	}
	return 0;
}

void xl_alloc_undo(struct xhca_ctx *ctx, __u32 id)
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
		err = xl_fail(ctx, -errno, "alloc: no address space for %llu bytes",
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
	err = xl_buf_add(ctx, &nb);
out:
	free(r);
	if (err) {
		if (va != MAP_FAILED)
			sys_munmap(va, a.len);
		xl_alloc_undo(ctx, a.id);
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
	struct buf *b = xl_buf_find(ctx, addr, 1);
	int err;

	if (!b || b->va != addr || b->adopted)
		return xl_fail(ctx, -EFAULT, "free: %p is not the start of a buffer of xhca_alloc",
			       addr);
	err = xl_call(ctx, XHCA_CTL_FREE, &b->id, sizeof(b->id), -1, NULL, 0, NULL);
	if (err)
		return err;
	sys_munmap(b->va, b->len);
	xl_buf_del(ctx, b);
	return 0;
}

int xhca_mem_lookup(struct xhca_ctx *ctx, const void *addr, size_t len, uint32_t *alloc,
		    uint64_t *off, int *contiguous)
{
	struct buf *b = xl_buf_find(ctx, addr, len);

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
	err = xl_call(ctx, XHCA_CTL_PD_ALLOC, NULL, 0, -1, &pd->id, sizeof(pd->id), NULL);
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

	err = xl_call(ctx, XHCA_CTL_PD_DEALLOC, &pd->id, sizeof(pd->id), -1, NULL, 0, NULL);
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
		return xl_fail(ctx, -EINVAL, "%s: length 0; a region has at least one byte", what);
	b = xl_buf_find(ctx, addr, len);
	if (!b)
		return xl_fail(ctx, -EFAULT, "%s: %zu bytes at %p are not inside one buffer of "
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
	err = xl_call(ctx, XHCA_CTL_MR_REG, &a, sizeof(a), -1, &a, sizeof(a), NULL);
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
		return xl_fail(mr->pd->ctx, -EINVAL, "mr rereg: the PD is of another session");
	err = mr_attr(pd, addr, len, iova, access, "mr rereg", &a);
	if (err)
		return err;
	a.rkey = mr->rkey;
	err = xl_call(pd->ctx, XHCA_CTL_MR_REREG, &a, sizeof(a), -1, &a, sizeof(a), NULL);
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

	err = xl_call(ctx, XHCA_CTL_MR_DEREG, &mr->rkey, sizeof(mr->rkey), -1, NULL, 0, NULL);
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
	int err = xl_call(pd->ctx, XHCA_CTL_MW_ALLOC, &r, sizeof(r), -1, &r, sizeof(r), NULL);

	if (!err)
		*rkey = r.rkey;
	return err;
}

int xhca_mw_dealloc(struct xhca_pd *pd, uint32_t rkey)
{
	return xl_call(pd->ctx, XHCA_CTL_MW_DEALLOC, &rkey, sizeof(rkey), -1, NULL, 0, NULL);
}

uint32_t xhca_mr_rkey(const struct xhca_mr *mr)
{
	return mr->rkey;
}

int xhca_mr_pretranslated(const struct xhca_mr *mr)
{
	return !!(mr->flags & XHCA_MRF_PRETRANSLATED);
}
