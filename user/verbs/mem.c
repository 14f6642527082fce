/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Protection domains and memory regions. ibv_reg_mr takes any memory of
 * the application: the pages under the region become xhca host memory in
 * place (xhca_adopt: same addresses, same bytes), so a remote WRITE or
 * ATOMIC lands where the application reads, with no verb call; a region
 * whose pages are adjacent in host memory is pre-translated and xhca_rx
 * places WRITEs into it itself. Regions that share pages share that host
 * memory (an area, counted); when the last region of an area goes, its pages
 * become the application's private memory again, with their bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "xverbs.h"

struct xv_area {
	uint8_t *base;
	size_t len;
	unsigned int refs;		/* regions in it (and in the areas it took in) */
	struct xv_area *next;		/* the context's, or its taker's taken list */
	struct xv_area *merged;		/* taken in by this one: counts go there */
	struct xv_area *taken;		/* the areas it took in */
};

XV_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *ctx)
{
	struct xv_context *c = xv_ctx(ctx);
	struct xv_pd *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	pthread_mutex_lock(&c->lock);
	p->x = xhca_pd_alloc(c->x);
	pthread_mutex_unlock(&c->lock);
	if (!p->x) {
		int e = errno;

		xv_log(c, "alloc pd: %s", strerror(e));
		free(p);
		errno = e;
		return NULL;
	}
	p->pd.context = ctx;
	p->pd.handle = xhca_pd_id(p->x);
	return &p->pd;
}
XV_V11(ibv_alloc_pd);

XV_EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct xv_context *c = xv_ctx(pd->context);
	struct xv_pd *p = (struct xv_pd *)pd;
	int err;

	pthread_mutex_lock(&c->lock);
	err = xhca_pd_dealloc(p->x);
	pthread_mutex_unlock(&c->lock);
	if (err) {
		xv_log(c, "dealloc pd %u", pd->handle);
		return xv_errno(err); /* EBUSY: QPs, MRs or AHs are in it */
	}
	free(p);
	return 0;
}
XV_V11(ibv_dealloc_pd);

/* The area holding [addr, addr + len): one that has it, or a new one,
 * which takes in the areas it overlaps (libxhca joins their host memory:
 * their regions keep their pages); NULL and errno when it cannot be
 * adopted. */
static struct xv_area *area_get(struct xv_context *c, void *addr, size_t len)
{
	uint8_t *lo = addr, *hi = lo + len;
	struct xv_area *a, **pp;

	for (a = c->areas; a; a = a->next)
		if (lo >= a->base && hi <= a->base + a->len) {
			a->refs++;
			return a;
		}
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->base = xhca_adopt(c->x, addr, len);
	if (!a->base) {
		int e = errno;

		xv_log(c, "reg mr: %zu bytes at %p", len, addr);
		free(a);
		errno = e;
		return NULL;
	}
	a->len = (size_t)((((uintptr_t)addr + len + XHCA_PAGE_SIZE - 1) &
			   ~(uintptr_t)(XHCA_PAGE_SIZE - 1)) - (uintptr_t)a->base);
	a->refs = 1;
	/* the areas it took in (as libxhca: all it reaches, growing): their
	 * regions count for it now */
	for (int grew = 1; grew;) {
		grew = 0;
		for (pp = &c->areas; *pp;) {
			struct xv_area *o = *pp;

			if (o->base >= a->base + a->len || o->base + o->len <= a->base) {
				pp = &o->next;
				continue;
			}
			if (o->base + o->len > a->base + a->len)
				a->len = (size_t)(o->base + o->len - a->base);
			a->refs += o->refs;
			o->merged = a;
			*pp = o->next;
			o->next = a->taken;
			a->taken = o;
			grew = 1;
		}
	}
	a->next = c->areas;
	c->areas = a;
	return a;
}

static void area_free(struct xv_area *a)
{
	while (a->taken) {
		struct xv_area *o = a->taken;

		a->taken = o->next;
		area_free(o);
	}
	free(a);
}

static void area_put(struct xv_context *c, struct xv_area *a)
{
	struct xv_area **pp;

	while (a->merged)
		a = a->merged;
	if (--a->refs)
		return;
	for (pp = &c->areas; *pp; pp = &(*pp)->next)
		if (*pp == a) {
			*pp = a->next;
			break;
		}
	if (xhca_unadopt(c->x, a->base))
		xv_log(c, "dereg mr: giving %p back", (void *)a->base);
	area_free(a);
}

/* Every area back to private memory (the context closes with regions
 * still registered). */
void xv_mem_close(struct xv_context *c)
{
	while (c->areas) {
		struct xv_area *a = c->areas;

		c->areas = a->next;
		area_free(a);
	}
	/* xhca_close gives the adopted pages back */
}

struct xv_mr *xv_mr_of(struct xv_context *c, uint32_t lkey)
{
	uint32_t i = lkey >> 8;
	struct xv_mr *m = i < c->nmrs ? c->mrs[i] : NULL;

	return m && m->mr.lkey == lkey ? m : NULL;
}

static int mr_index(struct xv_context *c, struct xv_mr *m)
{
	uint32_t i = m->mr.lkey >> 8;

	if (i >= c->nmrs) {
		uint32_t n = xv_pow2(i + 1);
		struct xv_mr **t = realloc(c->mrs, n * sizeof(*t));

		if (!t)
			return -ENOMEM;
		memset(t + c->nmrs, 0, (n - c->nmrs) * sizeof(*t));
		c->mrs = t;
		c->nmrs = n;
	}
	c->mrs[i] = m;
	return 0;
}

#define XV_ACCESS_KNOWN (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
			 IBV_ACCESS_MW_BIND | IBV_ACCESS_RELAXED_ORDERING)

/* 0, or the errno of a region's access flags (*access without the hints) */
static int access_err(struct xv_context *c, unsigned int *access)
{
	*access &= ~(unsigned int)IBV_ACCESS_OPTIONAL_RANGE; /* hints: relaxed ordering */
	if (*access & ~XV_ACCESS_KNOWN) {
		/* zero-based, on-demand paging, hugetlb */
		xv_log(c, "reg mr: access flags 0x%x are not supported", *access & ~XV_ACCESS_KNOWN);
		return EOPNOTSUPP;
	}
	if ((*access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(*access & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL; /* the man page's rule */
	return 0;
}

static struct ibv_mr *reg_mr(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova,
			     unsigned int access)
{
	struct xv_context *c = xv_ctx(pd->context);
	struct xv_mr *m;
	int e;

	e = access_err(c, &access);
	if (!e && (!len || (uintptr_t)addr + len < (uintptr_t)addr))
		e = EINVAL;
	if (e) {
		errno = e;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	pthread_mutex_lock(&c->lock);
	m->area = area_get(c, addr, len);
	if (!m->area)
		goto fail;
	m->x = xhca_mr_reg_iova(((struct xv_pd *)pd)->x, addr, len, iova,
				access & XHCA_ACCESS_ALL);
	if (!m->x) {
		xv_log(c, "reg mr: %zu bytes at %p", len, addr);
		goto fail;
	}
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = len;
	m->mr.lkey = m->mr.rkey = xhca_mr_rkey(m->x);
	m->mr.handle = m->mr.lkey;
	m->access = access;
	m->iova = iova;
	if (mr_index(c, m)) {
		errno = ENOMEM;
		goto fail;
	}
	pthread_mutex_unlock(&c->lock);
	return &m->mr;
fail:
	e = errno;
	if (m->x)
		xhca_mr_dereg(m->x);
	if (m->area)
		area_put(c, m->area);
	pthread_mutex_unlock(&c->lock);
	free(m);
	errno = e;
	return NULL;
}

/* ---- the lkey checks of posting ------------------------------------------- */

/* The lkey check a real HCA makes when it reads the scatter list. */
int xv_sge_ok(struct xv_context *c, struct ibv_pd *pd, const struct ibv_sge *g,
		  unsigned int need)
{
	struct xv_mr *m = xv_mr_of(c, g->lkey);
	uint64_t a;

	if (!m || m->mr.pd != pd || (m->access & need) != need)
		return 0;
	a = (uint64_t)(uintptr_t)m->mr.addr;
	return g->addr >= a && g->length <= m->mr.length && g->addr - a <= m->mr.length - g->length;
}

/* A receive request's scatter list for libxhca (zero-length pieces
 * left out); *flags XHCA_RECV_* for no piece or a failed lkey check (the
 * entry then completes with LOC_PROT_ERR when used, as on hardware). */
static int recv_sges(struct xv_context *c, struct ibv_pd *pd, const struct ibv_recv_wr *wr,
		     uint32_t max_sge, struct xhca_sge *sg, int *n, unsigned int *flags)
{
	*flags = 0;
	*n = 0;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge)
		return EINVAL;
	for (int i = 0; i < wr->num_sge; i++) {
		const struct ibv_sge *g = &wr->sg_list[i];

		if (!g->length)
			continue;
		if (!xv_sge_ok(c, pd, g, IBV_ACCESS_LOCAL_WRITE))
			*flags |= XHCA_RECV_LOC_PROT_ERR;
		sg[*n] = (struct xhca_sge){ .addr = g->addr, .length = g->length, .lkey = g->lkey };
		(*n)++;
	}
	if (!*n)
		*flags |= XHCA_RECV_EMPTY;
	return 0;
}

/* Each request of a receive chain as one entry through post (onto a QP's
 * ring or an SRQ's); 0, or errno with *bad the first request not posted. */
int xv_post_recv_chain(struct xv_context *c, struct ibv_pd *pd, struct ibv_recv_wr *wr,
		       uint32_t max_sge, xv_post_one_fn post, void *ring, struct ibv_recv_wr **bad)
{
	int err = 0;

	for (; wr; wr = wr->next) {
		struct xhca_sge sg[XV_MAX_SGE];
		unsigned int flags;
		int n;

		err = recv_sges(c, pd, wr, max_sge, sg, &n, &flags);
		if (!err) {
			err = -post(ring, wr->wr_id, sg, n, flags);
			if (err == ESHUTDOWN || err == EFAULT)
				err = EINVAL;
		}
		if (err) {
			*bad = wr;
			errno = err;
			break;
		}
	}
	return err;
}

/* verbs.h makes these macros (to pass whether access is a constant) */
#undef ibv_reg_mr
#undef ibv_reg_mr_iova
XV_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return reg_mr(pd, addr, length, (uint64_t)(uintptr_t)addr, (unsigned int)access);
}
XV_V11(ibv_reg_mr);

XV_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
					 uint64_t iova, int access)
{
	return reg_mr(pd, addr, length, iova, (unsigned int)access);
}

XV_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
					  uint64_t iova, unsigned int access)
{
	return reg_mr(pd, addr, length, iova, access);
}

XV_EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
	struct xv_context *c = xv_ctx(mr->context);
	struct xv_mr *m = (struct xv_mr *)mr;
	int err;

	pthread_mutex_lock(&c->lock);
	/* returns once no WRITE can reach the region any more */
	err = xhca_mr_dereg(m->x);
	if (!err) {
		c->mrs[mr->lkey >> 8] = NULL;
		area_put(c, m->area);
	}
	pthread_mutex_unlock(&c->lock);
	if (err) {
		xv_log(c, "dereg mr 0x%x", mr->lkey);
		return xv_errno(err);
	}
	free(m);
	return 0;
}
XV_V11(ibv_dereg_mr);

/* The same region (its keys kept) with what flags change: its pages
 * (the remote side's address is the new one), its PD, its access. On
 * failure it is as it was: IBV_REREG_MR_ERR_INPUT for bad arguments,
 * IBV_REREG_MR_ERR_CMD when xhcad refused, errno saying why. */
XV_EXPORT int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
			   size_t length, int access)
{
	struct xv_context *c = xv_ctx(mr->context);
	struct xv_mr *m = (struct xv_mr *)mr;
	unsigned int acc = flags & IBV_REREG_MR_CHANGE_ACCESS ? (unsigned int)access : m->access;
	int move = flags & IBV_REREG_MR_CHANGE_TRANSLATION;
	struct ibv_pd *npd = flags & IBV_REREG_MR_CHANGE_PD ? pd : mr->pd;
	struct xv_area *area = NULL;
	int err;

	/* libibverbs' own checks */
	if ((flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) || (move && (!addr || !length)) ||
	    (access && !(flags & IBV_REREG_MR_CHANGE_ACCESS)) || !npd ||
	    npd->context != mr->context ||
	    (move && (uintptr_t)addr + length < (uintptr_t)addr)) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	err = access_err(c, &acc);
	if (err) {
		errno = err;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (!flags)
		return 0;
	if (!move) {
		addr = mr->addr;
		length = mr->length;
	}
	pthread_mutex_lock(&c->lock);
	if (move) {
		area = area_get(c, addr, length);
		if (!area) {
			err = errno;
			goto out;
		}
	}
	err = -xhca_mr_rereg(m->x, ((struct xv_pd *)npd)->x, addr, length,
			     move ? (uint64_t)(uintptr_t)addr : m->iova, acc & XHCA_ACCESS_ALL);
	if (err) {
		xv_log(c, "rereg mr 0x%x", mr->lkey);
		if (area)
			area_put(c, area);
		goto out;
	}
	if (move) {
		area_put(c, m->area); /* no WRITE reaches the old pages any more */
		m->area = area;
		m->iova = (uint64_t)(uintptr_t)addr;
	}
	mr->pd = npd;
	mr->addr = addr;
	mr->length = length;
	m->access = acc;
out:
	pthread_mutex_unlock(&c->lock);
	if (err) {
		errno = err;
		return IBV_REREG_MR_ERR_CMD;
	}
	return 0;
}

/* ---- memory windows (ibv_alloc_mw, ibv_bind_mw: the context's ops) -------- */

struct ibv_mw *xv_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct xv_context *c = xv_ctx(pd->context);
	struct ibv_mw *mw;
	uint32_t rkey;
	int err;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	pthread_mutex_lock(&c->lock);
	err = xhca_mw_alloc(((struct xv_pd *)pd)->x, (unsigned int)type, &rkey);
	pthread_mutex_unlock(&c->lock);
	if (err) {
		xv_log(c, "alloc mw of type %d", type);
		free(mw);
		xv_errno(err);
		return NULL;
	}
	mw->context = pd->context;
	mw->pd = pd;
	mw->rkey = rkey;
	mw->handle = rkey >> 8;
	mw->type = type;
	return mw;
}

int xv_dealloc_mw(struct ibv_mw *mw)
{
	struct xv_context *c = xv_ctx(mw->context);
	int err;

	pthread_mutex_lock(&c->lock);
	err = xhca_mw_dealloc(((struct xv_pd *)mw->pd)->x, mw->handle << 8);
	pthread_mutex_unlock(&c->lock);
	if (err) {
		xv_log(c, "dealloc mw 0x%x", mw->rkey);
		return xv_errno(err);
	}
	free(mw);
	return 0;
}

/* A type 1 window's bind (ibv_bind_mw): a send request of the QP with the
 * window's next R_Key, which the window has from now on (as rxe: a failed
 * bind's completion tells the application to go back). */
int xv_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *b)
{
	struct ibv_send_wr wr = {
		.wr_id = b->wr_id, .opcode = IBV_WR_BIND_MW, .send_flags = b->send_flags,
		.bind_mw = { .mw = mw, .rkey = ibv_inc_rkey(mw->rkey), .bind_info = b->bind_info },
	}, *bad;
	int err = qp->context->ops.post_send(qp, &wr, &bad);

	if (!err)
		mw->rkey = wr.bind_mw.rkey;
	return err;
}

XV_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
					   uint64_t iova, int fd, int access)
{
	errno = EOPNOTSUPP; /* no device memory behind a software HCA */
	return NULL;
}

XV_EXPORT int ibv_fork_init(void)
{
	/* Nothing to set up: a forked child always gets private copies of the
	 * registered pages (libxhca's fork handler). */
	return 0;
}

XV_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

XV_EXPORT int ibv_dontfork_range(void *base, size_t size)
{
	return 0;
}

XV_EXPORT int ibv_dofork_range(void *base, size_t size)
{
	return 0;
}
