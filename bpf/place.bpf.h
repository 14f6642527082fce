/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * WRITE placement (US 9,336,158): the payload of a WRITE into a
 * pre-translated region copied into host memory here (place), by
 * bpf_xdp_load_bytes at a constant offset or the bpf_dynptr_copy kfunc
 * where the kernel has it (can_copy), and whether a WRITE can be (placeable).
 */
#ifndef XHCA_PLACE_BPF_H
#define XHCA_PLACE_BPF_H

#include "common.bpf.h"
#include "maps.bpf.h"

/* kfuncs (bpf_dynptr_copy: kernel 6.15 and later): copy packet bytes into
 * host memory, bounds checked at run time. Weak: on an older kernel libbpf
 * resolves them to 0, the verifier drops the calls as dead code, and a WRITE
 * that needs them goes to xhcad (can_copy). Only bpf_dynptr_copy's address
 * is ever taken: kernels before 6.4 refuse the address of a kfunc they
 * have, and bpf_dynptr_from_xdp is older than bpf_dynptr_copy. */
extern int bpf_dynptr_from_xdp(struct xdp_md *x, __u64 flags,
			       struct bpf_dynptr *ptr__uninit) __ksym __weak;
extern int bpf_dynptr_copy(struct bpf_dynptr *dst_ptr, __u32 dst_off, struct bpf_dynptr *src_ptr,
			   __u32 src_off, __u32 size) __ksym __weak;

#ifndef bpf_ksym_exists /* libbpf 1.2's bpf_helpers.h; Debian 12 has 1.1 */
#define bpf_ksym_exists(sym) (!!(sym))
#endif

/* Set by xhcad (--no-kfuncs): xhca_rx behaves as on a kernel without the
 * kfuncs, so the fallback is tested on any kernel (the unit tests flip it). */
volatile __u8 xhca_no_kfuncs;

/* Whether place() may copy a piece that is not at a multiple of 1 KiB in
 * its page: without the kfunc, a constant for the verifier, which drops the
 * path it rules out. */
static __always_inline int can_copy(void)
{
	return !xhca_no_kfuncs && bpf_ksym_exists(bpf_dynptr_copy);
}

/* bpf_xdp_load_bytes into host memory page mem at the constant k: the
 * verifier proves mem + k + chunk inside the page. */
static __always_inline int load_at(struct xdp_md *ctx, __u32 from, void *mem, __u32 k,
				   __u32 chunk)
{
	if (!size_in(chunk, XHCA_PAGE_SIZE - k))
		return -1;
	return bpf_xdp_load_bytes(ctx, from, mem + k, chunk);
}

/* Copies the payload into host memory at off, where a pre-translated region
 * is contiguous. A packet carries at most one MTU (4096 bytes): two pages at
 * most. A piece at a multiple of 1 KiB in its page (a path MTU's packets
 * into a page-aligned buffer, the usual case) is one bpf_xdp_load_bytes at
 * a constant offset, whose bounds the verifier proves; a piece elsewhere a
 * bpf_dynptr_copy, which checks them at run time and costs some 40 ns more
 * (docs/bench.md). Returns 0, or a reason if host memory is not there. */
static __always_inline int place(struct xdp_md *ctx, const struct roce_pkt *p, __u64 off)
{
	struct bpf_dynptr pkt, page;
	__u32 left = p->payload_len, from = p->payload_off;
	int have_pkt = 0;

	for (int i = 0; i < 2 && left; i++) {
		__u32 pg = (__u32)(off >> 12), in = (__u32)(off & (XHCA_PAGE_SIZE - 1));
		__u32 blk = pg >> XHCA_BLOCK_SHIFT, chunk = XHCA_PAGE_SIZE - in;
		void *block = bpf_map_lookup_elem(&xhca_hostmem, &blk), *mem;
		int r;

		if (!block)
			return XHCA_R_DROP_MR_BOUNDS;
		pg &= XHCA_BLOCK_PAGES - 1;
		mem = bpf_map_lookup_elem(block, &pg);
		if (chunk > left)
			chunk = left;
		if (!mem)
			return XHCA_R_DROP_MR_BOUNDS;
		switch (in) {
		case 0: r = load_at(ctx, from, mem, 0, chunk); break;
		case 1024: r = load_at(ctx, from, mem, 1024, chunk); break;
		case 2048: r = load_at(ctx, from, mem, 2048, chunk); break;
		case 3072: r = load_at(ctx, from, mem, 3072, chunk); break;
		default:
			if (!can_copy()) /* (ruled out at the WRITE's start) */
				return XHCA_R_DROP_MR_BOUNDS;
			if (!have_pkt && bpf_dynptr_from_xdp(ctx, 0, &pkt))
				return XHCA_R_DROP_MR_BOUNDS;
			have_pkt = 1;
			r = bpf_dynptr_from_mem(mem, XHCA_PAGE_SIZE, 0, &page) ?:
			    bpf_dynptr_copy(&page, in, &pkt, from, chunk);
		}
		if (r)
			return XHCA_R_DROP_MR_BOUNDS;
		off += chunk;
		from += chunk;
		left -= chunk;
	}
	return left ? XHCA_R_DROP_MR_BOUNDS : 0;
}

/* Whether place() can write every packet of a WRITE into a pre-translated
 * region (m, its FIRST or ONLY p) on this kernel: any, with bpf_dynptr_copy;
 * without, a message whose packets all start at a multiple of 1 KiB in their
 * pages (a path MTU of 1024 or more, the message at such an offset). */
static __always_inline int placeable(const struct mr_view *m, const struct roce_pkt *p, __u32 mtu)
{
	return can_copy() || (!((m->base + (p->va - m->iova)) & 1023) && mtu >= 1024);
}

#endif /* XHCA_PLACE_BPF_H */
