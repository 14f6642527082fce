/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Host memory: 4 KiB pages, the machine memory of this HCA (the patent's
 * MPA space), in blocks of XHCA_BLOCK_PAGES. Each block is an mmapable
 * array map of its own, held by one owner (a session, or xhcad: 0), in the
 * xhca_hostmem array of maps where xhca_rx finds it; a session is handed
 * the descriptors of its own blocks only (XHCA_CTL_BLOCK), so no
 * application can map another's memory. A session's blocks are made as it
 * needs them, up to --session-mb, and go with it; a new block is zeroed by
 * the kernel. xhcad maps every block at its place in one reservation
 * (base), so a host memory offset is a pointer for it.
 *
 * xhcad hands the pages out in allocations: what an application sees as
 * one virtually contiguous buffer (libxhca maps the allocation's pages side
 * by side), backed by a run of adjacent pages, or by pages scattered over
 * host memory (--fragment, or XHCA_ALLOC_SCATTER), as a guest's buffer may
 * be scattered over machine pages. Memory regions are pre-translated only
 * when their pages are adjacent (mr.c). An allocation's pages are all in
 * its owner's blocks.
 *
 * Every allocation is zeroed before it is handed out. With --canary, freed
 * pages are filled with a pattern that is checked when they are handed out
 * again: a byte that changed meanwhile was written after its memory was
 * given back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include "log.h"
#include "xhcad_memory.h"

#define CANARY_WORD 0xdeadc0defee1deadull
#define BLOCK_BYTES ((__u64)XHCA_BLOCK_PAGES * XHCA_PAGE_SIZE)

static __u8 *block_at(const struct xhcad *d, __u32 b)
{
	return d->hm.base + (__u64)b * BLOCK_BYTES;
}

static int map_block(struct xhcad *d, __u32 b, int fd)
{
	return mmap(block_at(d, b), BLOCK_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
		    0) == MAP_FAILED ? -errno : 0;
}

static void unmap_block(struct xhcad *d, __u32 b)
{
	mmap(block_at(d, b), BLOCK_BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED |
	     MAP_NORESERVE, -1, 0);
}

/* The blocks a pinned map holds (a restart): mapped, no owner yet. */
static int blocks_found(struct xhcad *d)
{
	for (__u32 b = 0; b < d->hm.nblocks; b++) {
		__u32 id;
		int fd, err;

		if (bpf_map_lookup_elem(d->m.hostmem, &b, &id))
			continue;
		fd = bpf_map_get_fd_by_id(id);
		if (fd < 0)
			return -errno;
		err = map_block(d, b, fd);
		if (err) {
			close(fd);
			return err;
		}
		d->hm.blocks[b] = (struct hm_block){ .fd = fd, .owner = HM_NOBODY };
	}
	return 0;
}

int hostmem_init(struct xhcad *d)
{
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info);
	void *m;

	if (bpf_obj_get_info_by_fd(d->m.hostmem, &info, &ilen))
		return -errno;
	d->hm.nblocks = info.max_entries;
	d->hm.pages = info.max_entries * XHCA_BLOCK_PAGES;
	d->hm.bytes = (__u64)d->hm.pages * XHCA_PAGE_SIZE;
	if (!d->hm.session_blocks || d->hm.session_blocks > d->hm.nblocks)
		d->hm.session_blocks = d->hm.nblocks;
	m = mmap(NULL, d->hm.bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED) {
		pr_warn("cannot reserve %llu bytes for host memory: %s\n",
			(unsigned long long)d->hm.bytes, strerror(errno));
		return -errno;
	}
	d->hm.base = m;
	d->hm.page_ref = calloc(d->hm.pages, sizeof(*d->hm.page_ref));
	d->hm.allocs = calloc(HM_SLOTS, sizeof(*d->hm.allocs));
	d->hm.blocks = calloc(d->hm.nblocks, sizeof(*d->hm.blocks));
	if (!d->hm.page_ref || !d->hm.allocs || !d->hm.blocks)
		return -ENOMEM;
	for (__u32 b = 0; b < d->hm.nblocks; b++)
		d->hm.blocks[b] = (struct hm_block){ .fd = -1, .owner = HM_NOBODY };
	return blocks_found(d);
}

static void alloc_free(struct hm_alloc *a)
{
	free(a->pages);
	free(a);
}

void hostmem_fini(struct xhcad *d)
{
	for (__u32 i = 0; d->hm.allocs && i < HM_SLOTS; i++)
		if (d->hm.allocs[i])
			alloc_free(d->hm.allocs[i]);
	free(d->hm.allocs);
	d->hm.allocs = NULL;
	free(d->hm.page_ref);
	d->hm.page_ref = NULL;
	/* the blocks stay in the pinned map (a restart keeps them) */
	for (__u32 b = 0; d->hm.blocks && b < d->hm.nblocks; b++)
		if (d->hm.blocks[b].fd >= 0)
			close(d->hm.blocks[b].fd);
	free(d->hm.blocks);
	d->hm.blocks = NULL;
	if (d->hm.base)
		munmap(d->hm.base, d->hm.bytes);
	d->hm.base = NULL;
	d->hm.used = 0;
}

static int there(const struct xhcad *d, __u32 p)
{
	return !d->hm.blocks || d->hm.blocks[p >> XHCA_BLOCK_SHIFT].fd >= 0;
}

static int used(const struct xhcad *d, __u32 p)
{
	return d->hm.page_ref[p] != 0;
}

/* Whether page p is free and in a block of owner's. */
static int usable(const struct xhcad *d, __u32 p, __u32 owner)
{
	return !used(d, p) && (!d->hm.blocks || d->hm.blocks[p >> XHCA_BLOCK_SHIFT].owner == owner);
}

/* One more (v) or one less allocation holds page p; returns how many do. */
static __u32 set_used(struct xhcad *d, __u32 p, int v)
{
	if (v)
		d->hm.page_ref[p]++;
	else if (d->hm.page_ref[p])
		d->hm.page_ref[p]--;
	return d->hm.page_ref[p];
}

static void canary_page(struct xhcad *d, __u32 p)
{
	__u64 *w = (__u64 *)(d->hm.base + (__u64)p * XHCA_PAGE_SIZE);

	for (__u32 k = 0; k < XHCA_PAGE_SIZE / 8; k++)
		w[k] = CANARY_WORD;
}

void hm_canary_fill(struct xhcad *d)
{
	for (__u32 p = 0; d->hm.canary && p < d->hm.pages; p++)
		if (there(d, p) && !used(d, p))
			canary_page(d, p);
}

/* A new block b for owner: made, mapped, in xhca_hostmem. */
static int block_add(struct xhcad *d, __u32 b, __u32 owner)
{
	int fd = hostmem_block_new(), err;

	if (fd < 0)
		return fd;
	err = map_block(d, b, fd);
	if (!err && bpf_map_update_elem(d->m.hostmem, &b, &fd, BPF_ANY))
		err = -errno;
	if (err) {
		unmap_block(d, b);
		close(fd);
		pr_warn("host memory: cannot add block %u: %s\n", b, strerror(-err));
		return err;
	}
	d->hm.blocks[b] = (struct hm_block){ .fd = fd, .owner = owner };
	for (__u32 p = b * XHCA_BLOCK_PAGES; d->hm.canary && p < (b + 1) * XHCA_BLOCK_PAGES; p++)
		canary_page(d, p);
	return 0;
}

/* Block b goes: out of xhca_hostmem (xhca_rx finds it no more), unmapped.
 * An application that mapped it keeps its pages: no one else gets them. */
static void block_drop(struct xhcad *d, __u32 b)
{
	bpf_map_delete_elem(d->m.hostmem, &b);
	unmap_block(d, b);
	close(d->hm.blocks[b].fd);
	d->hm.blocks[b] = (struct hm_block){ .fd = -1, .owner = HM_NOBODY };
}

__u32 hm_blocks_of(const struct xhcad *d, __u32 owner)
{
	__u32 n = 0;

	for (__u32 b = 0; d->hm.blocks && b < d->hm.nblocks; b++)
		n += d->hm.blocks[b].fd >= 0 && d->hm.blocks[b].owner == owner;
	return n;
}

__u32 hm_blocks_made(const struct xhcad *d)
{
	__u32 n = 0;

	for (__u32 b = 0; d->hm.blocks && b < d->hm.nblocks; b++)
		n += d->hm.blocks[b].fd >= 0;
	return n;
}

int hm_block_fd(const struct xhcad *d, __u32 b, __u32 owner)
{
	if (!d->hm.blocks || b >= d->hm.nblocks || d->hm.blocks[b].owner != owner)
		return -1;
	return d->hm.blocks[b].fd;
}

void hm_settle(struct xhcad *d)
{
	for (__u32 b = 0; d->hm.blocks && b < d->hm.nblocks; b++)
		if (d->hm.blocks[b].fd >= 0 && d->hm.blocks[b].owner == HM_NOBODY)
			block_drop(d, b);
}

/* owner gets k more blocks, adjacent ones if adjacent: -EDQUOT past its
 * limit (a session's), -ENOMEM when host memory has not so many. */
static int grow(struct xhcad *d, __u32 owner, __u32 k, int adjacent)
{
	__u32 got = 0, run = 0, first = 0;

	if (!d->hm.blocks || !k)
		return -ENOMEM;
	if (owner && hm_blocks_of(d, owner) + k > d->hm.session_blocks)
		return -EDQUOT;
	for (__u32 b = 0; b < d->hm.nblocks && got < k; b++) {
		if (d->hm.blocks[b].fd >= 0) {
			run = 0;
			continue;
		}
		if (!adjacent) {
			if (block_add(d, b, owner))
				return -ENOMEM;
			got++;
		} else if (++run == k) {
			first = b + 1 - k;
			break;
		}
	}
	if (!adjacent)
		return got == k ? 0 : -ENOMEM;
	if (run < k)
		return -ENOMEM;
	for (__u32 b = first; b < first + k; b++) {
		if (block_add(d, b, owner)) {
			while (b-- > first)
				block_drop(d, b);
			return -ENOMEM;
		}
	}
	return 0;
}

/* A run of n free pages of owner's, first fit. */
static int find_run(const struct xhcad *d, __u32 owner, __u32 n, __u32 *first)
{
	__u32 run = 0;

	for (__u32 p = 0; p < d->hm.pages; p++) {
		run = usable(d, p, owner) ? run + 1 : 0;
		if (run == n) {
			*first = p + 1 - n;
			return 0;
		}
	}
	return -ENOMEM;
}

/* n free pages of owner's of which no two in a row are adjacent, as far
 * as free memory allows: every other free page first, then what is left. */
static int find_scattered(struct xhcad *d, __u32 owner, __u32 n, __u32 *pages)
{
	__u32 got = 0;

	for (__u32 p = 0; p < d->hm.pages && got < n; p++) {
		if (!usable(d, p, owner) || (got && pages[got - 1] + 1 == p))
			continue;
		pages[got++] = p;
		set_used(d, p, 1);
	}
	for (__u32 p = 0; p < d->hm.pages && got < n; p++) {
		if (usable(d, p, owner)) {
			pages[got++] = p;
			set_used(d, p, 1);
		}
	}
	/* claim_page() marks them again */
	for (__u32 i = 0; i < got; i++)
		set_used(d, pages[i], 0);
	return got == n ? 0 : -ENOMEM;
}

static __u32 free_pages_of(const struct xhcad *d, __u32 owner)
{
	__u32 n = 0;

	for (__u32 p = 0; p < d->hm.pages; p++)
		n += usable(d, p, owner);
	return n;
}

static __u32 blocks_for(__u32 pages)
{
	return (pages + XHCA_BLOCK_PAGES - 1) / XHCA_BLOCK_PAGES;
}

/* n pages of owner's (pages[]), a run or scattered, its blocks grown
 * when what it holds has not so many: 0, -ENOMEM or -EDQUOT. */
static int find_pages(struct xhcad *d, __u32 owner, __u32 n, int scatter, __u32 *pages)
{
	__u32 first, have;
	int err;

	if (scatter) {
		have = free_pages_of(d, owner);
		if (have < n && (err = grow(d, owner, blocks_for(n - have), 0)))
			return err;
		return find_scattered(d, owner, n, pages);
	}
	if (find_run(d, owner, n, &first)) {
		err = grow(d, owner, blocks_for(n), 1);
		if (err || (err = find_run(d, owner, n, &first)))
			return err;
	}
	for (__u32 i = 0; i < n; i++)
		pages[i] = first + i;
	return 0;
}

/* Whether free page p still holds the canary; a page that does not is
 * reported, counted and filled again (each write counts once). */
static int canary_check(struct xhcad *d, __u32 p)
{
	__u64 *w = (__u64 *)(d->hm.base + (__u64)p * XHCA_PAGE_SIZE);

	for (__u32 i = 0; i < XHCA_PAGE_SIZE / 8; i++) {
		if (w[i] == CANARY_WORD)
			continue;
		d->hm.canary_violations++;
		pr_warn("canary: page %u byte %u changed after it was freed\n", p, i * 8);
		for (__u32 k = 0; k < XHCA_PAGE_SIZE / 8; k++)
			w[k] = CANARY_WORD;
		return 0;
	}
	return 1;
}

void hm_canary_scan(struct xhcad *d)
{
	for (__u32 p = 0; d->hm.canary && p < d->hm.pages; p++)
		if (there(d, p) && !used(d, p))
			canary_check(d, p);
}

/* Checks the canary of a free page about to be handed out, then zeroes it. */
static void claim_page(struct xhcad *d, __u32 p)
{
	if (d->hm.canary)
		canary_check(d, p);
	memset(d->hm.base + (__u64)p * XHCA_PAGE_SIZE, 0, XHCA_PAGE_SIZE);
	set_used(d, p, 1);
	d->hm.used += XHCA_PAGE_SIZE;
}

static struct hm_alloc *alloc_new(__u32 n)
{
	struct hm_alloc *a = calloc(1, sizeof(*a));

	if (a)
		a->pages = calloc(n, sizeof(*a->pages));
	if (!a || !a->pages) {
		free(a);
		errno = ENOMEM;
		return NULL;
	}
	return a;
}

/* a (its pages found) gets a slot, an id, its owner: in the table. */
static struct hm_alloc *alloc_enter(struct xhcad *d, struct hm_alloc *a, __u32 slot, __u64 len,
				    __u32 n, __u32 owner)
{
	a->id = (++d->hm.alloc_seq << 16 & 0x7fff0000u) | slot;
	a->owner = owner;
	a->npages = n;
	a->len = len;
	a->contiguous = 1;
	for (__u32 i = 1; i < n; i++)
		if (a->pages[i] != a->pages[0] + i)
			a->contiguous = 0;
	d->hm.allocs[slot] = a;
	return a;
}

static int free_slot(struct xhcad *d, __u32 *slot)
{
	for (*slot = 1; *slot < HM_SLOTS && d->hm.allocs[*slot]; (*slot)++)
		;
	return *slot < HM_SLOTS ? 0 : -ENOSPC;
}

struct hm_alloc *hm_alloc(struct xhcad *d, __u64 len, __u32 owner, __u32 flags)
{
	struct hm_alloc *a;
	__u32 n, slot;
	int err;

	if (!len || len > d->hm.bytes) {
		errno = EINVAL;
		return NULL;
	}
	n = (__u32)((len + XHCA_PAGE_SIZE - 1) / XHCA_PAGE_SIZE);
	if (free_slot(d, &slot)) {
		errno = ENOSPC;
		return NULL;
	}
	a = alloc_new(n);
	if (!a)
		return NULL;
	err = find_pages(d, owner, n, (flags & XHCA_ALLOC_SCATTER) ||
				 (d->hm.fragment && !(flags & XHCA_ALLOC_CONTIG)), a->pages);
	if (err) {
		alloc_free(a);
		if (err == -EDQUOT)
			d->hm.refused++;
		errno = -err;
		return NULL;
	}
	for (__u32 i = 0; i < n; i++)
		claim_page(d, a->pages[i]);
	return alloc_enter(d, a, slot, len, n, owner);
}

/*
 * An allocation of len bytes whose pages at join[i].page on are those of
 * allocation join[i].id (the same pages: both hold them, a byte written
 * through one is read through the other), the rest new: memory regions of
 * the old allocations keep their pages while a region of the new one spans
 * them all (libxhca: host memory under the application's pages, grown).
 */
struct hm_alloc *hm_alloc_join(struct xhcad *d, __u64 len, __u32 owner,
			       const struct xhca_alloc_join *join, __u32 njoin)
{
	__u32 n = (__u32)((len + XHCA_PAGE_SIZE - 1) / XHCA_PAGE_SIZE), slot;
	struct hm_alloc *a;
	int err = -ENOMEM;
	__u8 *taken;

	if (!len || len > d->hm.bytes || free_slot(d, &slot)) {
		errno = !len || len > d->hm.bytes ? EINVAL : ENOSPC;
		return NULL;
	}
	a = alloc_new(n);
	taken = calloc(n, 1);
	if (!a || !taken)
		goto nomem;
	for (__u32 j = 0; j < njoin; j++) {
		const struct hm_alloc *o = hm_find(d, join[j].id);

		if (!o || o->owner != owner || join[j].page > n || o->npages > n - join[j].page)
			goto inval;
		for (__u32 i = 0; i < o->npages; i++) {
			if (taken[join[j].page + i])
				goto inval;
			taken[join[j].page + i] = 1;
			a->pages[join[j].page + i] = o->pages[i];
		}
	}
	/* the new pages, a run for each gap where one is free */
	for (__u32 i = 0; i < n;) {
		__u32 k = i, first;

		if (taken[i]) {
			i++;
			continue;
		}
		while (k < n && !taken[k])
			k++;
		if (!find_run(d, owner, k - i, &first)) {
			for (__u32 p = i; p < k; p++)
				a->pages[p] = first + (p - i);
		} else if ((err = find_pages(d, owner, k - i, 0, a->pages + i)) &&
			   (err = find_pages(d, owner, k - i, 1, a->pages + i))) {
			for (__u32 p = 0; p < i; p++) /* the gaps before, claimed */
				if (!taken[p] && !set_used(d, a->pages[p], 0))
					d->hm.used -= XHCA_PAGE_SIZE;
			goto nomem;
		}
		for (__u32 p = i; p < k; p++)
			claim_page(d, a->pages[p]);
		i = k;
	}
	for (__u32 i = 0; i < n; i++)
		if (taken[i])
			set_used(d, a->pages[i], 1);
	free(taken);
	return alloc_enter(d, a, slot, len, n, owner);
inval:
	free(taken);
	alloc_free(a);
	errno = EINVAL;
	return NULL;
nomem:
	free(taken);
	if (a)
		alloc_free(a);
	if (err == -EDQUOT)
		d->hm.refused++;
	errno = -err;
	return NULL;
}

struct hm_alloc *hm_find(const struct xhcad *d, __u32 id)
{
	struct hm_alloc *a = d->hm.allocs ? d->hm.allocs[id & (HM_SLOTS - 1)] : NULL;

	return a && a->id == id ? a : NULL;
}

static void release(struct xhcad *d, struct hm_alloc *a)
{
	for (__u32 i = 0; i < a->npages; i++) {
		__u64 *w = (__u64 *)(d->hm.base + (__u64)a->pages[i] * XHCA_PAGE_SIZE);

		if (set_used(d, a->pages[i], 0))
			continue; /* another allocation holds it still */
		if (d->hm.canary)
			for (__u32 k = 0; k < XHCA_PAGE_SIZE / 8; k++)
				w[k] = CANARY_WORD;
		d->hm.used -= XHCA_PAGE_SIZE;
	}
	d->hm.allocs[a->id & (HM_SLOTS - 1)] = NULL;
	alloc_free(a);
}

/* The allocation goes, its pages free. The memory regions on it must be
 * gone first (mem_free in mr.c does both): no WRITE may land in pages once
 * they are free. */
int hm_free(struct xhcad *d, __u32 id, __u32 owner)
{
	struct hm_alloc *a = hm_find(d, id);

	if (!a)
		return -ENOENT;
	if (a->owner != owner)
		return -EPERM;
	release(d, a);
	return 0;
}

/* Every allocation of owner goes; a session's blocks with them. */
void hm_free_owner(struct xhcad *d, __u32 owner)
{
	for (__u32 i = 1; i < HM_SLOTS; i++)
		if (d->hm.allocs[i] && d->hm.allocs[i]->owner == owner)
			release(d, d->hm.allocs[i]);
	for (__u32 b = 0; owner && d->hm.blocks && b < d->hm.nblocks; b++)
		if (d->hm.blocks[b].fd >= 0 && d->hm.blocks[b].owner == owner)
			block_drop(d, b);
}

/* Where byte off of allocation a is in host memory. */
static __u64 hm_off(const struct hm_alloc *a, __u64 off)
{
	return (__u64)a->pages[off / XHCA_PAGE_SIZE] * XHCA_PAGE_SIZE + off % XHCA_PAGE_SIZE;
}

int hm_range(const struct hm_alloc *a, __u64 off, __u64 len)
{
	return a && off <= a->len && len <= a->len - off;
}

void hm_write(struct xhcad *d, const struct hm_alloc *a, __u64 off, const void *src, __u64 n)
{
	const __u8 *s = src;

	if (a->contiguous) {
		memcpy(d->hm.base + hm_off(a, 0) + off, s, n);
		return;
	}
	while (n) {
		__u64 chunk = XHCA_PAGE_SIZE - off % XHCA_PAGE_SIZE;

		if (chunk > n)
			chunk = n;
		memcpy(d->hm.base + hm_off(a, off), s, chunk);
		s += chunk;
		off += chunk;
		n -= chunk;
	}
}

void hm_read(const struct xhcad *d, const struct hm_alloc *a, __u64 off, void *dst, __u64 n)
{
	__u8 *t = dst;

	while (n) {
		__u64 chunk = XHCA_PAGE_SIZE - off % XHCA_PAGE_SIZE;

		if (chunk > n)
			chunk = n;
		memcpy(t, d->hm.base + hm_off(a, off), chunk);
		t += chunk;
		off += chunk;
		n -= chunk;
	}
}

const void *hm_span(const struct xhcad *d, const struct hm_alloc *a, __u64 off, __u64 n)
{
	if (!n || (!a->contiguous && hm_off(a, off + n - 1) != hm_off(a, off) + n - 1))
		return NULL;
	return d->hm.base + hm_off(a, off);
}

void *hm_contig_ptr(const struct xhcad *d, const struct hm_alloc *a)
{
	return a->contiguous ? d->hm.base + hm_off(a, 0) : NULL;
}

__u64 hm_base(const struct hm_alloc *a, __u64 off)
{
	return hm_off(a, off);
}

int hm_restore(struct xhcad *d, __u32 id, __u32 owner, __u64 len, const __u32 *pages,
	       __u32 npages)
{
	__u32 slot = id & (HM_SLOTS - 1);
	struct hm_alloc *a;

	if (!slot || d->hm.allocs[slot] || !npages ||
	    len > (__u64)npages * XHCA_PAGE_SIZE || len <= (__u64)(npages - 1) * XHCA_PAGE_SIZE)
		return -EINVAL;
	for (__u32 i = 0; i < npages; i++) {
		const struct hm_block *b;

		if (pages[i] >= d->hm.pages)
			return -EINVAL;
		b = d->hm.blocks ? &d->hm.blocks[pages[i] >> XHCA_BLOCK_SHIFT] : NULL;
		if (b && (b->fd < 0 || (b->owner != HM_NOBODY && b->owner != owner)))
			return -EINVAL; /* not there, or another's */
	}
	for (__u32 i = 0; d->hm.blocks && i < npages; i++)
		d->hm.blocks[pages[i] >> XHCA_BLOCK_SHIFT].owner = owner;
	a = calloc(1, sizeof(*a));
	if (a)
		a->pages = malloc((size_t)npages * sizeof(*a->pages));
	if (!a || !a->pages) {
		free(a);
		return -ENOMEM;
	}
	memcpy(a->pages, pages, (size_t)npages * sizeof(*pages));
	a->id = id;
	a->owner = owner;
	a->npages = npages;
	a->len = len;
	a->contiguous = 1;
	for (__u32 i = 0; i < npages; i++) {
		/* (a page two allocations share comes twice: XHCA_ALLOC_JOIN) */
		if (set_used(d, pages[i], 1) == 1)
			d->hm.used += XHCA_PAGE_SIZE;
		if (i && pages[i] != pages[0] + i)
			a->contiguous = 0;
	}
	d->hm.allocs[slot] = a;
	return 0;
}
