/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The address translation manager (US 9,336,158's embedded processor side)
 * and the protection domains.
 *
 * A memory region is a range of one host memory allocation. When the pages
 * it spans are adjacent in host memory, it is pre-translated once, at
 * registration: its xhca_mr entry gets the host memory offset of its first
 * byte (the patent's address register) and the PRETRANSLATED flag, and
 * xhca_rx places WRITEs into it itself. Otherwise the entry stays
 * untranslated and xhcad places those WRITEs, walking the allocation's page
 * list (the slow path, receive.c).
 *
 * Invalidation (deregistration, re-registration, freeing the memory): the
 * entry loses its VALID and PRETRANSLATED bits and gets a new generation, in
 * one seqcount write section; then mr_barrier() waits until no xhca_rx run
 * that may have read the old entry is still running (an update of an array
 * of maps waits for an RCU grace period, and an XDP run is one RCU read
 * section); only then may the pages be freed or reused. The translation
 * record is this table: every region, its allocation and its offset in it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <xhca/qpctx.h>
#include "log.h"
#include "xhcad_memory.h"

static __u32 idx_of(__u32 rkey)
{
	return rkey >> 8;
}

int mr_init(struct xhcad *d)
{
	LIBBPF_OPTS(bpf_map_create_opts, o);
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info);

	if (bpf_obj_get_info_by_fd(d->m.mr, &info, &ilen))
		return -errno;
	if (d->mr.max && d->mr.max != info.max_entries)
		pr_warn("the pinned %s holds %u memory regions: --max-mrs %u ignored\n",
			XHCA_MAP_MR, info.max_entries - 1, d->mr.max - 1);
	d->mr.max = info.max_entries;
	d->mr.key_seed = (__u32)now_ns();
	d->mr.map = mmap(NULL, (size_t)d->mr.max * sizeof(struct xhca_mr_ctx), PROT_READ | PROT_WRITE,
		      MAP_SHARED, d->m.mr, 0);
	if (d->mr.map == MAP_FAILED) {
		d->mr.map = NULL;
		return -errno;
	}
	d->mr.e = calloc(d->mr.max, sizeof(*d->mr.e));
	d->mr.free = calloc(d->mr.max, sizeof(*d->mr.free));
	if (!d->mr.e || !d->mr.free)
		return -ENOMEM;
	/* The free indexes (the lowest on top; index 0 never: an R_Key of 0
	 * names nothing) are stacked by mr_sweep(), after the restore. */

	d->mr.barrier_inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xhca_barrier_in", 4, 4, 1, NULL);
	if (d->mr.barrier_inner < 0)
		return -errno;
	o.inner_map_fd = d->mr.barrier_inner;
	d->mr.barrier_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, XHCA_MAP_BARRIER, 4, 4, 1, &o);
	if (d->mr.barrier_fd < 0)
		return -errno;

	for (__u32 i = 1; i < d->mr.max; i++)
		d->mr.e[i].e = d->mr.map[i]; /* keys and generations move on from there */
	return 0;
}

void mr_restore(struct xhcad *d, __u32 i, __u32 rkey, __u32 owner, __u32 alloc, int own_alloc,
		__u64 off)
{
	struct xhca_mr_ctx e;
	struct hm_alloc *a = hm_find(d, alloc);

	if (!i || i >= d->mr.max || idx_of(rkey) != i || d->mr.e[i].rkey)
		return;
	e = d->mr.map[i]; /* xhcad is its only writer */
	if ((e.seq & 1) || !e.valid || e.key != (rkey & 0xff) || e.owner != owner || e.alloc != alloc || !a ||
	    a->owner != owner || !hm_range(a, off, e.length))
		return; /* changed after the state was saved: mr_sweep() invalidates it */
	d->mr.e[i].e = e;
	d->mr.e[i].rkey = rkey;
	d->mr.e[i].owner = owner;
	d->mr.e[i].alloc = alloc;
	d->mr.e[i].off = off;
	d->mr.e[i].own_alloc = own_alloc;
	d->mr.in_use++;
}

void mr_sweep(struct xhcad *d)
{
	int stale = 0;

	d->mr.nfree = 0;
	for (__u32 i = d->mr.max - 1; i >= 1; i--) {
		struct xhca_mr_ctx e = d->mr.map[i];

		if (d->mr.e[i].rkey)
			continue;
		d->mr.free[d->mr.nfree++] = i;
		if (!e.valid && !(e.seq & 1))
			continue;
		/* Registered by an earlier xhcad for a session that is gone,
		 * or after its state was saved: none may stay usable. */
		e.valid = 0;
		e.flags = 0;
		e.gen++;
		xhca_mr_store(&d->mr.map[i], &e);
		d->mr.e[i].e = e;
		stale++;
	}
	if (stale) {
		mr_barrier(d);
		pr_info("invalidated %d memory regions of an earlier xhcad\n", stale);
	}
	if (d->mr.in_use)
		pr_info("kept %u memory regions of live sessions\n", d->mr.in_use);
}

void mr_fini(struct xhcad *d)
{
	if (d->mr.map)
		munmap(d->mr.map, (size_t)d->mr.max * sizeof(struct xhca_mr_ctx));
	d->mr.map = NULL;
	free(d->mr.e);
	d->mr.e = NULL;
	free(d->mr.free);
	d->mr.free = NULL;
	if (d->mr.barrier_fd >= 0)
		close(d->mr.barrier_fd);
	if (d->mr.barrier_inner >= 0)
		close(d->mr.barrier_inner);
	d->mr.barrier_fd = d->mr.barrier_inner = -1;
	while (d->mr.pds) {
		struct pd_rt *p = d->mr.pds;

		d->mr.pds = p->next;
		free(p);
	}
}

void mr_barrier(struct xhcad *d)
{
	__u32 k = 0;

	/* The kernel waits for an RCU grace period on every update of an
	 * array of maps (maybe_wait_bpf_programs): every XDP run that began
	 * before has ended when this returns. */
	if (bpf_map_update_elem(d->mr.barrier_fd, &k, &d->mr.barrier_inner, 0)) {
		pr_warn("barrier: %s; waiting a second instead\n", strerror(errno));
		sleep(1);
	}
	/* READs and ATOMICs handed to the proxy name host memory they were
	 * resolved to before: it must have executed them. */
	proxy_sync(d);
	d->mr.barriers++;
}

struct mr_rt *mr_find(struct xhcad *d, __u32 rkey)
{
	__u32 i = idx_of(rkey);

	if (!i || i >= d->mr.max || d->mr.e[i].rkey != rkey)
		return NULL;
	return &d->mr.e[i];
}

/* A new key byte for index i, never the one it had (RXE's rxe_get_next_key). */
static __u8 next_key(struct xhcad *d, __u32 i)
{
	__u8 old = d->mr.e[i].e.key;

	d->mr.key_seed = d->mr.key_seed * 1103515245u + 12345u;
	return (__u8)(old + 1 + (d->mr.key_seed >> 16) % 255);
}

/* What a registration (or re-registration: what) asks for, checked: its
 * access, length and PD; 0 or -errno with err saying why. */
static int attr_ok(struct xhcad *d, __u32 owner, const struct xhca_mr_attr *a, const char *what,
		   char *err, size_t errlen)
{
	if (a->access & ~XHCA_ACCESS_ALL)
		return errf(err, errlen, -EINVAL, "%s: unknown access flags 0x%x; use local-write, "
			    "remote-write, remote-read, remote-atomic, mw-bind", what,
			    a->access & ~XHCA_ACCESS_ALL);
	if ((a->access & (XHCA_ACCESS_REMOTE_WRITE | XHCA_ACCESS_REMOTE_ATOMIC)) &&
	    !(a->access & XHCA_ACCESS_LOCAL_WRITE))
		return errf(err, errlen, -EINVAL, "%s: remote write and atomic access need local "
			    "write too (as ibv_reg_mr)", what);
	if (!a->len)
		return errf(err, errlen, -EINVAL, "%s: length 0; a region has at least one byte",
			    what);
	if (!pd_usable(d, owner, a->pd))
		return errf(err, errlen, -ENOENT, "%s: no protection domain %u in this session; "
			    "allocate one first", what, a->pd);
	return 0;
}

/* The session's allocation a names, holding the region; NULL with err. */
static struct hm_alloc *region_alloc(struct xhcad *d, __u32 owner, const struct xhca_mr_attr *a,
				     const char *what, int *rc, char *err, size_t errlen)
{
	struct hm_alloc *al = hm_find(d, a->alloc);

	if (!al || al->owner != owner) {
		*rc = errf(err, errlen, -EFAULT, "%s: the region is not in this session's host "
			   "memory (allocation %u); allocate it with xhca_alloc", what, a->alloc);
		return NULL;
	}
	if (!hm_range(al, a->off, a->len)) {
		*rc = errf(err, errlen, -EFAULT, "%s: %llu bytes at %llu run past the end of their "
			   "allocation (%llu bytes)", what, (unsigned long long)a->len,
			   (unsigned long long)a->off, (unsigned long long)al->len);
		return NULL;
	}
	return al;
}

/* The entry of a region (key and generation aside): pre-translated when
 * its pages are adjacent in host memory. a->flags, npages say what it is. */
static void fill_entry(struct xhcad *d, struct hm_alloc *al, __u32 owner,
		       struct xhca_mr_attr *a, struct xhca_mr_ctx *e)
{
	__u32 first = (__u32)(a->off / XHCA_PAGE_SIZE);
	__u32 last = (__u32)((a->off + a->len - 1) / XHCA_PAGE_SIZE);
	int pretx = 1;

	for (__u32 p = first + 1; p <= last; p++)
		if (al->pages[p] != al->pages[first] + (p - first))
			pretx = 0;
	e->valid = 1;
	e->flags = pretx ? XHCA_MRF_PRETRANSLATED : 0;
	e->access = a->access;
	e->pd = a->pd;
	e->owner = owner;
	e->iova = a->iova;
	e->length = a->len;
	e->base = pretx ? hm_base(al, a->off) : 0;
	e->alloc = al->id;
	e->aoff = a->off;
	a->flags = e->flags;
	a->npages = last - first + 1;
}

/* Whether a session holds its limit of regions and windows (--session-mrs). */
static int at_limit(const struct xhcad *d, __u32 owner)
{
	__u32 n = 0;

	if (!owner || !d->app.lim_mrs)
		return 0;
	for (__u32 i = 1; i < d->mr.max && n < d->app.lim_mrs; i++)
		n += d->mr.e[i].rkey && d->mr.e[i].owner == owner;
	return n >= d->app.lim_mrs;
}

int mr_reg(struct xhcad *d, __u32 owner, struct xhca_mr_attr *a, char *err, size_t errlen)
{
	struct hm_alloc *al;
	struct xhca_mr_ctx e = {};
	__u32 i, own_alloc = 0;
	int rc = attr_ok(d, owner, a, "mr reg", err, errlen);

	if (rc)
		return rc;
	if (!d->mr.nfree)
		return errf(err, errlen, -ENOSPC, "mr reg: all %u memory regions are in use; "
			    "deregister some or start xhcad with a larger --max-mrs", d->mr.max - 1);
	if (at_limit(d, owner))
		return errf(err, errlen, -ENOMEM, "mr reg: this session has %u memory regions and "
			    "windows, its limit (xhcad --session-mrs); deregister some first",
			    d->app.lim_mrs);
	if (!owner) {
		/* xhcad's own region (the CLI's): xhcad provides the memory. */
		al = hm_alloc(d, a->len, 0, a->flags & (XHCA_ALLOC_SCATTER | XHCA_ALLOC_CONTIG));
		if (!al)
			return errf(err, errlen, -errno, "mr reg: no %llu bytes of host memory: %s",
				    (unsigned long long)a->len, strerror(errno));
		a->alloc = al->id;
		a->off = 0;
		own_alloc = 1;
	} else {
		al = region_alloc(d, owner, a, "mr reg", &rc, err, errlen);
		if (!al)
			return rc;
	}
	i = d->mr.free[--d->mr.nfree];
	fill_entry(d, al, owner, a, &e);
	e.gen = d->mr.e[i].e.gen + 1;
	e.key = next_key(d, i);
	/* Loaded and marked in one section: the bit is never seen without
	 * its address (the patent's P5 and P6). */
	xhca_mr_store(&d->mr.map[i], &e);
	d->mr.e[i].rkey = i << 8 | e.key;
	d->mr.e[i].owner = owner;
	d->mr.e[i].alloc = al->id;
	d->mr.e[i].off = a->off;
	d->mr.e[i].own_alloc = own_alloc;
	d->mr.e[i].e = e;
	d->mr.in_use++;
	pd_ref(d, a->pd, 1);
	a->rkey = d->mr.e[i].rkey;
	pr_debug("registered MR 0x%08x: %llu bytes at iova 0x%llx, %s\n", a->rkey,
		 (unsigned long long)a->len, (unsigned long long)a->iova,
		 e.flags ? "pre-translated" : "fragmented");
	return 0;
}

int mr_rereg(struct xhcad *d, __u32 owner, struct xhca_mr_attr *a, char *err, size_t errlen)
{
	struct mr_rt *m = mr_find(d, a->rkey);
	struct xhca_mr_ctx e;
	struct hm_alloc *al;
	int rc;

	if (!m || m->owner != owner || m->mw_type)
		return errf(err, errlen, -ENOENT, "mr rereg: no memory region with R_Key 0x%08x in "
			    "this session", a->rkey);
	if (m->nmw)
		return errf(err, errlen, -EBUSY, "mr rereg: %u memory windows are bound to region "
			    "0x%08x; invalidate or deallocate them first", m->nmw, a->rkey);
	if (m->own_alloc)
		return errf(err, errlen, -EINVAL, "mr rereg: R_Key 0x%08x is a region of xhcad's "
			    "own memory; deregister it and register another", a->rkey);
	rc = attr_ok(d, owner, a, "mr rereg", err, errlen);
	if (rc)
		return rc;
	al = region_alloc(d, owner, a, "mr rereg", &rc, err, errlen);
	if (!al)
		return rc;
	/* The same key, a new generation: the new translation, PD and access
	 * in one section; after the barrier no xhca_rx run still uses the
	 * old ones, so the caller may give the old pages back. */
	e = m->e;
	fill_entry(d, al, owner, a, &e);
	e.gen++;
	xhca_mr_store(&d->mr.map[idx_of(a->rkey)], &e);
	mr_barrier(d);
	pd_ref(d, m->e.pd, -1);
	pd_ref(d, a->pd, 1);
	m->e = e;
	m->alloc = al->id;
	m->off = a->off;
	pr_debug("re-registered MR 0x%08x: %llu bytes at iova 0x%llx, pd %u, access 0x%x\n",
		 a->rkey, (unsigned long long)a->len, (unsigned long long)a->iova, a->pd,
		 a->access);
	return 0;
}

/* Unmarks region i (the barrier is the caller's). */
static void invalidate(struct xhcad *d, __u32 i)
{
	struct xhca_mr_ctx e = d->mr.e[i].e;

	e.valid = 0;
	e.flags = 0;
	e.gen++;
	xhca_mr_store(&d->mr.map[i], &e);
	d->mr.e[i].e = e;
}

/* After the barrier: the index and what it held go back. */
static void release(struct xhcad *d, __u32 i)
{
	int own = d->mr.e[i].own_alloc;

	/* Gone from the table before its memory goes: mem_free() drops the
	 * regions on the allocation, and this one is not among them any more. */
	pd_ref(d, d->mr.e[i].e.pd, -1);
	if (d->mr.e[i].mw_type)
		d->mr.mw.in_use--;
	d->mr.e[i].rkey = 0;
	d->mr.e[i].own_alloc = 0;
	d->mr.e[i].mw_type = 0;
	d->mr.e[i].mw_mr = 0;
	d->mr.e[i].nmw = 0;
	d->mr.free[d->mr.nfree++] = i;
	d->mr.in_use--;
	if (own)
		mem_free(d, d->mr.e[i].alloc, 0);
}

int mr_dereg(struct xhcad *d, __u32 owner, __u32 rkey, char *err, size_t errlen)
{
	struct mr_rt *m = mr_find(d, rkey);

	if (!m)
		return errf(err, errlen, -ENOENT, "mr dereg: no memory region with R_Key 0x%08x; list "
			    "them with: xhca -i %s mr show", rkey, d->ifname);
	if (owner && m->owner != owner)
		return errf(err, errlen, -EPERM, "mr dereg: R_Key 0x%08x belongs to another session",
			    rkey);
	if (m->mw_type)
		return errf(err, errlen, -EINVAL, "mr dereg: R_Key 0x%08x is a memory window; "
			    "deallocate it instead", rkey);
	if (m->nmw)
		return errf(err, errlen, -EBUSY, "mr dereg: %u memory windows are bound to region "
			    "0x%08x; invalidate or deallocate them first", m->nmw, rkey);
	invalidate(d, idx_of(rkey));
	mr_barrier(d);
	release(d, idx_of(rkey));
	return 0;
}

static void mw_unbind(struct xhcad *d, __u32 i);

/* Every entry on allocation v (by_alloc) or of session v goes; a window
 * bound on the allocation is only unbound (its owner still holds it). */
static void drop_where(struct xhcad *d, int by_alloc, __u32 v)
{
	__u32 n = 0;

	for (__u32 i = 1; i < d->mr.max; i++) {
		struct mr_rt *m = &d->mr.e[i];

		if (!m->rkey || (by_alloc ? m->alloc : m->owner) != v)
			continue;
		if (by_alloc && m->mw_type)
			mw_unbind(d, i);
		else
			invalidate(d, i);
		n++;
	}
	if (!n)
		return;
	mr_barrier(d);
	for (__u32 i = 1; i < d->mr.max; i++)
		if (d->mr.e[i].rkey && (by_alloc ? d->mr.e[i].alloc : d->mr.e[i].owner) == v &&
		    !d->mr.e[i].e.valid)
			release(d, i);
}

void mr_drop_alloc(struct xhcad *d, __u32 id)
{
	drop_where(d, 1, id);
}

void mr_drop_owner(struct xhcad *d, __u32 owner)
{
	drop_where(d, 0, owner);
}

int mr_read(struct xhcad *d, __u32 owner, struct xhca_mr_io *io, void **out, char *err,
	    size_t errlen)
{
	struct mr_rt *m = mr_find(d, io->rkey);
	void *b;

	if (!m)
		return errf(err, errlen, -ENOENT, "mr read: no memory region with R_Key 0x%08x",
			    io->rkey);
	if (owner && m->owner != owner)
		return errf(err, errlen, -EPERM, "mr read: R_Key 0x%08x belongs to another session",
			    io->rkey);
	if (io->len > XHCA_MR_READ_MAX)
		return errf(err, errlen, -EINVAL, "mr read: at most %u bytes at a time",
			    XHCA_MR_READ_MAX);
	if (io->off > m->e.length || io->len > m->e.length - io->off)
		return errf(err, errlen, -ERANGE, "mr read: %u bytes at %llu run past the end of "
			    "the region (%llu bytes)", io->len, (unsigned long long)io->off,
			    (unsigned long long)m->e.length);
	b = malloc(io->len ? io->len : 1);
	if (!b)
		return errf(err, errlen, -ENOMEM, "mr read: out of memory");
	hm_read(d, hm_find(d, m->alloc), m->off + io->off, b, io->len);
	*out = b;
	return 0;
}

int mr_show(struct xhcad *d, __u32 owner, struct xhca_mr_info **out, __u32 *n)
{
	struct xhca_mr_info *mi = calloc(d->mr.in_use ? d->mr.in_use : 1, sizeof(*mi));
	__u32 k = 0;

	if (!mi)
		return -ENOMEM;
	for (__u32 i = 1; i < d->mr.max && k < d->mr.in_use; i++) {
		const struct mr_rt *m = &d->mr.e[i];
		struct hm_alloc *al;

		if (!m->rkey || (owner && m->owner != owner))
			continue; /* a session sees its own regions only */
		al = hm_find(d, m->alloc);
		mi[k].attr.pd = m->e.pd;
		mi[k].attr.alloc = m->alloc;
		mi[k].attr.off = m->off;
		mi[k].attr.len = m->e.length;
		mi[k].attr.iova = m->e.iova;
		mi[k].attr.access = m->e.access;
		mi[k].attr.flags = m->e.flags;
		mi[k].attr.rkey = m->rkey;
		mi[k].attr.npages = al ? (__u32)((m->off + m->e.length - 1) / XHCA_PAGE_SIZE -
						 m->off / XHCA_PAGE_SIZE + 1) : 0;
		mi[k].owner = m->owner;
		mi[k].gen = m->e.gen;
		k++;
	}
	*out = mi;
	*n = k;
	return 0;
}

/* ---- memory windows ------------------------------------------------------- */

/*
 * A memory window is an entry of the same table, with an index of its own.
 * Bound, it holds the part of its region it was bound to (the region's
 * allocation, offset and pre-translation), the window's access and PD and,
 * type 2, the QP it was bound through (xhca_rx lets no other QP use it:
 * XHCA_MRF_MW_QP); so xhca_rx and xhcad's own placement and READs use it as
 * they use a region. Unbound, it is not valid: an R_Key naming it fails as
 * a stale one. A bind gives it the key byte of its new R_Key. The region
 * counts the windows bound to it, and cannot go or be re-registered under
 * them.
 */

int mw_alloc(struct xhcad *d, __u32 owner, struct xhca_mw_req *r, char *err, size_t errlen)
{
	struct xhca_mr_ctx e = {};
	__u32 i;

	if (r->type != 1 && r->type != 2)
		return errf(err, errlen, -EINVAL, "mw alloc: type %u; memory windows are of type 1 "
			    "or 2", r->type);
	if (!pd_usable(d, owner, r->pd))
		return errf(err, errlen, -ENOENT, "mw alloc: no protection domain %u in this "
			    "session", r->pd);
	if (!d->mr.nfree)
		return errf(err, errlen, -ENOSPC, "mw alloc: all %u memory regions and windows are "
			    "in use; start xhcad with a larger --max-mrs", d->mr.max - 1);
	if (at_limit(d, owner))
		return errf(err, errlen, -ENOMEM, "mw alloc: this session has %u memory regions "
			    "and windows, its limit (xhcad --session-mrs); deallocate some first",
			    d->app.lim_mrs);
	i = d->mr.free[--d->mr.nfree];
	e.gen = d->mr.e[i].e.gen + 1;
	e.key = next_key(d, i);
	e.flags = XHCA_MRF_MW;
	e.pd = r->pd;
	e.owner = owner;
	xhca_mr_store(&d->mr.map[i], &e);
	d->mr.e[i] = (struct mr_rt){ .rkey = i << 8 | e.key, .owner = owner,
				     .mw_type = (__u8)r->type, .e = e };
	d->mr.in_use++;
	d->mr.mw.in_use++;
	pd_ref(d, r->pd, 1);
	r->rkey = d->mr.e[i].rkey;
	return 0;
}

/* The window at index i, not valid (the barrier is the caller's); its
 * region one window fewer. */
static void mw_unbind(struct xhcad *d, __u32 i)
{
	struct mr_rt *w = &d->mr.e[i];
	struct xhca_mr_ctx e = w->e;

	if (w->mw_mr && d->mr.e[w->mw_mr].nmw)
		d->mr.e[w->mw_mr].nmw--;
	w->mw_mr = 0;
	w->alloc = 0;
	w->off = 0;
	e.valid = 0;
	e.flags = XHCA_MRF_MW;
	e.access = 0;
	e.iova = e.length = e.base = e.aoff = 0;
	e.alloc = e.qpn = 0;
	e.gen++;
	xhca_mr_store(&d->mr.map[i], &e);
	w->e = e;
}

/* The session's window with index i, or NULL. */
static struct mr_rt *mw_at(struct xhcad *d, __u32 owner, __u32 i)
{
	struct mr_rt *w = i && i < d->mr.max ? &d->mr.e[i] : NULL;

	return w && w->rkey && w->mw_type && w->owner == owner ? w : NULL;
}

int mw_dealloc(struct xhcad *d, __u32 owner, __u32 rkey, char *err, size_t errlen)
{
	struct mr_rt *w = mw_at(d, owner, idx_of(rkey));

	if (!w)
		return errf(err, errlen, -ENOENT, "mw dealloc: no memory window 0x%08x in this "
			    "session", rkey);
	if (w->e.valid) {
		mw_unbind(d, idx_of(rkey));
		mr_barrier(d);
	}
	release(d, idx_of(rkey));
	return 0;
}

/* What a bind of window w to part of region m asks for, checked as RXE's
 * rxe_check_bind_mw: 0, or why not (for the log). */
static const char *bind_refused(const struct mr_rt *w, const struct mr_rt *m, __u32 owner,
				__u32 pd, const struct mw_bind *b)
{
	if (w->e.pd != pd)
		return "the window is of another PD than the QP";
	if (w->mw_type == 2 && w->e.valid)
		return "a type 2 window is bound already: invalidate it first";
	if (b->access & ~(XHCA_ACCESS_REMOTE_WRITE | XHCA_ACCESS_REMOTE_READ |
			  XHCA_ACCESS_REMOTE_ATOMIC))
		return "access flags other than remote write, read, atomic";
	if (!b->len)
		return NULL;
	if (!m || m->mw_type || m->owner != owner || !m->e.valid)
		return "the L_Key names no region of this session";
	if (m->e.pd != pd)
		return "the region is of another PD";
	if (!(m->e.access & XHCA_ACCESS_MW_BIND))
		return "the region was registered without IBV_ACCESS_MW_BIND";
	if ((b->access & (XHCA_ACCESS_REMOTE_WRITE | XHCA_ACCESS_REMOTE_ATOMIC)) &&
	    !(m->e.access & XHCA_ACCESS_LOCAL_WRITE))
		return "remote write or atomic access on a region without local write";
	if (b->addr < m->e.iova || b->len > m->e.length || b->addr - m->e.iova > m->e.length - b->len)
		return "the window is not inside the region";
	return NULL;
}

static __u8 bind_locked(struct xhcad *d, __u32 owner, __u32 pd, __u32 qpn,
			const struct mw_bind *b)
{
	__u32 i = idx_of(b->rkey);
	struct mr_rt *w = mw_at(d, owner, i);
	struct mr_rt *m = b->len ? mr_find(d, b->lkey) : NULL;
	const char *why = w ? bind_refused(w, m, owner, pd, b) : "no such window in this session";
	struct xhca_mr_ctx e;
	int was;

	if (why) {
		pr_debug("qp 0x%06x: bind of memory window 0x%08x refused: %s\n", qpn, b->rkey, why);
		d->mr.mw.bind_errors++;
		return XHCA_WC_MW_BIND_ERR;
	}
	was = w->e.valid;
	mw_unbind(d, i);
	e = w->e;
	e.key = (__u8)b->rkey;
	if (b->len) {
		__u64 off = b->addr - m->e.iova;

		e.valid = 1;
		e.flags = (__u8)(XHCA_MRF_MW | (m->e.flags & XHCA_MRF_PRETRANSLATED) |
				 (w->mw_type == 2 ? XHCA_MRF_MW_QP : 0));
		e.access = b->access;
		e.iova = b->addr;
		e.length = b->len;
		e.base = (m->e.flags & XHCA_MRF_PRETRANSLATED) ? m->e.base + off : 0;
		e.alloc = m->e.alloc;
		e.aoff = m->off + off;
		e.qpn = w->mw_type == 2 ? qpn : 0;
		w->alloc = m->alloc;
		w->off = m->off + off;
		w->mw_mr = idx_of(m->rkey);
		m->nmw++;
	}
	/* loaded and marked in one section, as a region */
	xhca_mr_store(&d->mr.map[i], &e);
	w->e = e;
	w->rkey = b->rkey;
	d->mr.mw.binds++;
	if (was)
		mr_barrier(d); /* the old binding is used by nobody now */
	return 0;
}

static int invalidate_locked(struct xhcad *d, __u32 owner, __u32 pd, __u32 qpn, __u32 rkey,
			     int remote)
{
	struct mr_rt *w = mw_at(d, owner, idx_of(rkey));

	/* a type 1 window is unbound by a bind of length 0 only (o10-37.2.26) */
	if (!w || w->rkey != rkey || !w->e.valid || w->mw_type != 2 || w->e.pd != pd ||
	    (remote && w->e.qpn != qpn))
		return -ENOENT;
	mw_unbind(d, idx_of(rkey));
	mr_barrier(d);
	d->mr.mw.invalidations++;
	return 0;
}

/* (send queues of several engines bind and invalidate windows: one at a
 * time) */
__u8 mw_bind(struct xhcad *d, __u32 owner, __u32 pd, __u32 qpn, const struct mw_bind *b)
{
	__u8 st;

	spin_lock(&d->mr.wlock);
	st = bind_locked(d, owner, pd, qpn, b);
	spin_unlock(&d->mr.wlock);
	return st;
}

int mw_invalidate(struct xhcad *d, __u32 owner, __u32 pd, __u32 qpn, __u32 rkey, int remote)
{
	int r;

	spin_lock(&d->mr.wlock);
	r = invalidate_locked(d, owner, pd, qpn, rkey, remote);
	spin_unlock(&d->mr.wlock);
	return r;
}

/* ---- protection domains ---------------------------------------------------- */

static struct pd_rt *pd_find(struct xhcad *d, __u32 id)
{
	for (struct pd_rt *p = d->mr.pds; p; p = p->next)
		if (p->id == id)
			return p;
	return NULL;
}

int pd_alloc(struct xhcad *d, __u32 owner, __u32 *id)
{
	struct pd_rt *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->id = ++d->mr.next_pd;
	p->owner = owner;
	p->next = d->mr.pds;
	d->mr.pds = p;
	*id = p->id;
	return 0;
}

int pd_dealloc(struct xhcad *d, __u32 owner, __u32 id, char *err, size_t errlen)
{
	struct pd_rt **pp, *p = pd_find(d, id);

	if (!p || p->owner != owner)
		return errf(err, errlen, -ENOENT, "pd dealloc: no protection domain %u in this session",
			    id);
	if (p->users)
		return errf(err, errlen, -EBUSY, "pd dealloc: protection domain %u still has %u QPs "
			    "and memory regions; destroy them first", id, p->users);
	for (pp = &d->mr.pds; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	free(p);
	return 0;
}

int pd_usable(struct xhcad *d, __u32 owner, __u32 id)
{
	struct pd_rt *p;

	if (!id)
		return !owner; /* PD 0 is xhcad's: the CLI's QPs and regions */
	p = pd_find(d, id);
	return p && p->owner == owner;
}

void pd_ref(struct xhcad *d, __u32 id, int delta)
{
	struct pd_rt *p = id ? pd_find(d, id) : NULL;

	if (p)
		p->users += (__u32)delta;
}

void pd_drop_owner(struct xhcad *d, __u32 owner)
{
	struct pd_rt **pp = &d->mr.pds;

	while (*pp) {
		struct pd_rt *p = *pp;

		if (p->owner != owner) {
			pp = &p->next;
			continue;
		}
		*pp = p->next;
		free(p);
	}
}

/* An allocation goes: the memory regions on it first, with the barrier
 * (no WRITE may land in its pages once they are free), then its pages. */
int mem_free(struct xhcad *d, __u32 id, __u32 owner)
{
	struct hm_alloc *a = hm_find(d, id);

	if (!a)
		return -ENOENT;
	if (a->owner != owner)
		return -EPERM;
	mr_drop_alloc(d, id);
	return hm_free(d, id, owner);
}

/* Every allocation of owner, the same way; a session's blocks go too. */
void mem_free_owner(struct xhcad *d, __u32 owner)
{
	for (__u32 i = 1; i < HM_SLOTS; i++)
		if (d->hm.allocs[i] && d->hm.allocs[i]->owner == owner)
			mr_drop_alloc(d, d->hm.allocs[i]->id);
	hm_free_owner(d, owner);
}
