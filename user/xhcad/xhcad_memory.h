/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhcad's memory layer: host memory and memory regions. A file of this
 * layer includes this header; it declares the layers below too, never those
 * above (docs/design.md: xhcad in layers).
 */
#ifndef XHCAD_MEMORY_H
#define XHCAD_MEMORY_H

#include "xhcad_device.h"

/* hostmem.c */
int hostmem_init(struct xhcad *d);
void hostmem_fini(struct xhcad *d);
/* A new zeroed allocation (flags XHCA_ALLOC_*), or NULL with errno. */
struct hm_alloc *hm_alloc(struct xhcad *d, __u64 len, __u32 owner, __u32 flags);
struct hm_alloc *hm_alloc_join(struct xhcad *d, __u64 len, __u32 owner,
			       const struct xhca_alloc_join *join, __u32 njoin);
struct hm_alloc *hm_find(const struct xhcad *d, __u32 id);
/* The allocation's pages free; no memory region may be on it any more
 * (mem_free, mr.c, drops them first). */
int hm_free(struct xhcad *d, __u32 id, __u32 owner);
void hm_free_owner(struct xhcad *d, __u32 owner);
/* --canary: checks every free page (xhca status calls it). */
void hm_canary_scan(struct xhcad *d);
/* [off, off + len) is inside allocation a (a may be NULL: no). */
int hm_range(const struct hm_alloc *a, __u64 off, __u64 len);
void hm_write(struct xhcad *d, const struct hm_alloc *a, __u64 off, const void *src, __u64 n);
void hm_read(const struct xhcad *d, const struct hm_alloc *a, __u64 off, void *dst, __u64 n);
/* The allocation's memory when it is contiguous, else NULL. */
void *hm_contig_ptr(const struct xhcad *d, const struct hm_alloc *a);
/* Bytes [off, off + n) of a, where they are adjacent in host memory (to be
 * read in place); NULL where they cross into a page elsewhere. */
const void *hm_span(const struct xhcad *d, const struct hm_alloc *a, __u64 off, __u64 n);
/* Host memory offset of byte off of the allocation. */
__u64 hm_base(const struct hm_alloc *a, __u64 off);
/* An allocation of an earlier xhcad (state.c), its pages as they are. */
int hm_restore(struct xhcad *d, __u32 id, __u32 owner, __u64 len, const __u32 *pages,
	       __u32 npages);
/* --canary: the pattern into every free page (at start, after the restore). */
void hm_canary_fill(struct xhcad *d);
/* After the restore: the blocks of the pinned map that no kept allocation
 * holds go. */
void hm_settle(struct xhcad *d);
/* The descriptor of block b if owner holds it, else -1. */
int hm_block_fd(const struct xhcad *d, __u32 b, __u32 owner);
__u32 hm_blocks_of(const struct xhcad *d, __u32 owner);
__u32 hm_blocks_made(const struct xhcad *d);

/* mr.c: the translation manager */
int mr_init(struct xhcad *d);
/* A region of an earlier xhcad, if the map still holds it as it was. */
void mr_restore(struct xhcad *d, __u32 index, __u32 rkey, __u32 owner, __u32 alloc, int own_alloc,
		__u64 off);
/* After the restore: every other region in the map is invalidated. */
void mr_sweep(struct xhcad *d);
void mr_fini(struct xhcad *d);
int mr_reg(struct xhcad *d, __u32 owner, struct xhca_mr_attr *a, char *err, size_t errlen);
/* Region a->rkey with the translation, PD and access a gives (key kept,
 * the old ones unusable when it returns). */
int mr_rereg(struct xhcad *d, __u32 owner, struct xhca_mr_attr *a, char *err, size_t errlen);
int mr_dereg(struct xhcad *d, __u32 owner, __u32 rkey, char *err, size_t errlen);
/* Invalidates every region on allocation id (before it is freed). */
void mr_drop_alloc(struct xhcad *d, __u32 id);
void mr_drop_owner(struct xhcad *d, __u32 owner);
/* An allocation freed, with the regions on it first (what every layer above
 * this one uses to free host memory); every allocation of owner. */
int mem_free(struct xhcad *d, __u32 id, __u32 owner);
void mem_free_owner(struct xhcad *d, __u32 owner);
int mr_show(struct xhcad *d, __u32 owner, struct xhca_mr_info **out, __u32 *n);
/* Memory windows: entries of the same table. A bind or invalidation is a
 * send queue request of a QP of owner in PD pd (request.c executes it in
 * its turn; receive.c a SEND with Invalidate): the completion status. */
int mw_alloc(struct xhcad *d, __u32 owner, struct xhca_mw_req *r, char *err, size_t errlen);
int mw_dealloc(struct xhcad *d, __u32 owner, __u32 rkey, char *err, size_t errlen);
struct mw_bind {
	__u32 rkey;		/* the window's R_Key after the bind */
	__u32 lkey;		/* the region (0: none, with len 0) */
	__u64 addr, len;	/* the window: the region's addresses */
	__u32 access;		/* XHCA_ACCESS_REMOTE_* */
};
__u8 mw_bind(struct xhcad *d, __u32 owner, __u32 pd, __u32 qpn, const struct mw_bind *b);
/* A type 2 window bound through QP qpn (remote: by the peer's SEND with
 * Invalidate; local: a LOCAL_INV) unbound; 0 or -errno when rkey names no
 * such window. */
int mw_invalidate(struct xhcad *d, __u32 owner, __u32 pd, __u32 qpn, __u32 rkey, int remote);
/* io->len bytes of the region at io->off, in a buffer for the caller to free. */
int mr_read(struct xhcad *d, __u32 owner, struct xhca_mr_io *io, void **out, char *err,
	    size_t errlen);
struct mr_rt *mr_find(struct xhcad *d, __u32 rkey);
/* Waits until no xhca_rx run still uses what it read before the call. */
void mr_barrier(struct xhcad *d);
int pd_alloc(struct xhcad *d, __u32 owner, __u32 *id);
int pd_dealloc(struct xhcad *d, __u32 owner, __u32 id, char *err, size_t errlen);
/* Whether owner may use PD id (0, xhcad's, is the CLI's). */
int pd_usable(struct xhcad *d, __u32 owner, __u32 id);
void pd_ref(struct xhcad *d, __u32 id, int delta);
void pd_drop_owner(struct xhcad *d, __u32 owner);

#endif
