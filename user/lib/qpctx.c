/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * QP context writes under the seqcount (the write side of ctx_view() in
 * bpf/xhca.bpf.c), as Linux's write_seqcount_begin/end: seq odd, then the
 * fields, then seq even, with release ordering between the steps.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <xhca/qpctx.h>

#define CFG_START offsetof(struct xhca_qp_ctx, gen)
#define CFG_END offsetof(struct xhca_qp_ctx, rx_psn)
#define TAIL_START offsetof(struct xhca_qp_ctx, pad2)

static size_t map_len(__u32 n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return ((size_t)n * sizeof(struct xhca_qp_ctx) + page - 1) / page * page;
}

struct xhca_qp_ctx *xhca_qpctx_map(int fd, __u32 n)
{
	void *m = mmap(NULL, map_len(n), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return m == MAP_FAILED ? NULL : m;
}

void xhca_qpctx_unmap(struct xhca_qp_ctx *m, __u32 n)
{
	if (m)
		munmap(m, map_len(n));
}

void xhca_qpctx_load(const struct xhca_qp_ctx *slot, struct xhca_qp_ctx *out)
{
	memcpy(out, slot, sizeof(*out));
	out->rx_psn = __atomic_load_n(&slot->rx_psn, __ATOMIC_RELAXED);
}

void xhca_qpctx_store(struct xhca_qp_ctx *slot, const struct xhca_qp_ctx *c, int set_rx)
{
	/* Odd already means a writer died mid-section: this write ends it. */
	__u32 seq = __atomic_load_n(&slot->seq, __ATOMIC_RELAXED) | 1;

	__atomic_store_n(&slot->seq, seq, __ATOMIC_RELAXED);
	/* seq odd is visible before any field changes */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy((char *)slot + CFG_START, (const char *)c + CFG_START, CFG_END - CFG_START);
	memcpy((char *)slot + TAIL_START, (const char *)c + TAIL_START,
	       sizeof(*c) - TAIL_START);
	if (set_rx)
		__atomic_store_n(&slot->rx_psn, c->rx_psn, __ATOMIC_RELAXED);
	/* every field is visible before seq is even again */
	__atomic_store_n(&slot->seq, seq + 1, __ATOMIC_RELEASE);
}

int xhca_qpctx_torn(const struct xhca_qp_ctx *slot)
{
	return __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE) & 1;
}
