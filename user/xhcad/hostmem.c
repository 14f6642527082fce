/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Host memory: the xhca_hostmem map (an mmapable array of 4 KiB pages),
 * mapped by xhcad and by every application session. xhcad hands out runs of
 * contiguous pages, first fit, each owned by a session (or by xhcad, owner
 * 0) and zeroed before it is handed out: no application sees what another
 * left behind. A page map (owner + 1 per page, 0 = free) lets delivery check
 * that a posted buffer lies in its own session's pages.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include "log.h"
#include "xhcad.h"

struct hm_block {
	__u64 off;		/* bytes, page-aligned */
	__u64 len;		/* bytes, whole pages */
	__u32 owner;
	struct hm_block *next;	/* sorted by off */
};

int hostmem_init(struct xhcad *d)
{
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info);
	void *m;

	if (bpf_obj_get_info_by_fd(d->m.hostmem, &info, &ilen))
		return -errno;
	d->hostmem_pages = info.max_entries;
	d->hostmem_bytes = (__u64)info.max_entries * XHCA_PAGE_SIZE;
	m = mmap(NULL, d->hostmem_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, d->m.hostmem, 0);
	if (m == MAP_FAILED) {
		pr_warn("cannot map host memory (%llu bytes): %s\n",
			(unsigned long long)d->hostmem_bytes, strerror(errno));
		return -errno;
	}
	d->hostmem = m;
	d->page_owner = calloc(d->hostmem_pages, sizeof(*d->page_owner));
	return d->page_owner ? 0 : -ENOMEM;
}

static void mark(struct xhcad *d, __u64 off, __u64 len, __u32 v)
{
	for (__u64 p = off / XHCA_PAGE_SIZE; p < (off + len) / XHCA_PAGE_SIZE; p++)
		d->page_owner[p] = v;
}

void hostmem_fini(struct xhcad *d)
{
	while (d->blocks) {
		struct hm_block *b = d->blocks;

		d->blocks = b->next;
		free(b);
	}
	if (d->hostmem)
		munmap(d->hostmem, d->hostmem_bytes);
	d->hostmem = NULL;
	free(d->page_owner);
	d->page_owner = NULL;
	d->hostmem_used = 0;
}

int hm_alloc(struct xhcad *d, __u64 len, __u32 owner, __u64 *off)
{
	struct hm_block **pp = &d->blocks, *b;
	__u64 at = 0;

	if (!len || len > d->hostmem_bytes)
		return -EINVAL;
	len = (len + XHCA_PAGE_SIZE - 1) / XHCA_PAGE_SIZE * XHCA_PAGE_SIZE;
	for (; *pp; pp = &(*pp)->next) {
		if ((*pp)->off - at >= len)
			break;
		at = (*pp)->off + (*pp)->len;
	}
	if (at + len > d->hostmem_bytes)
		return -ENOMEM;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->off = at;
	b->len = len;
	b->owner = owner;
	b->next = *pp;
	*pp = b;
	memset(d->hostmem + at, 0, len);
	mark(d, at, len, owner + 1);
	d->hostmem_used += len;
	*off = at;
	return 0;
}

int hm_free(struct xhcad *d, __u64 off, __u32 owner)
{
	struct hm_block **pp, *b;

	for (pp = &d->blocks; *pp; pp = &(*pp)->next) {
		b = *pp;
		if (b->off != off)
			continue;
		if (b->owner != owner)
			return -EPERM;
		*pp = b->next;
		mark(d, b->off, b->len, 0);
		d->hostmem_used -= b->len;
		free(b);
		return 0;
	}
	return -ENOENT;
}

void hm_free_owner(struct xhcad *d, __u32 owner)
{
	struct hm_block **pp = &d->blocks, *b;

	while (*pp) {
		b = *pp;
		if (b->owner != owner) {
			pp = &b->next;
			continue;
		}
		*pp = b->next;
		mark(d, b->off, b->len, 0);
		d->hostmem_used -= b->len;
		free(b);
	}
}

int hm_range_ok(const struct xhcad *d, __u64 off, __u64 len)
{
	return off <= d->hostmem_bytes && len <= d->hostmem_bytes - off;
}

int hm_owned(const struct xhcad *d, __u64 off, __u64 len, __u32 owner)
{
	if (!len || !hm_range_ok(d, off, len))
		return 0;
	for (__u64 p = off / XHCA_PAGE_SIZE; p <= (off + len - 1) / XHCA_PAGE_SIZE; p++)
		if (d->page_owner[p] != owner + 1)
			return 0;
	return 1;
}
