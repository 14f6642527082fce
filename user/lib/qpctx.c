/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * QP context and MR writes under the seqcount (the write side of ctx_view()
 * and mr_view() in bpf/ctx.bpf.h), as Linux's write_seqcount_begin/end: seq
 * odd, then the fields, then seq even, with release ordering between.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <xhca/qpctx.h>

/* The configuration: [gen, rx_psn), pd, and the tail from ack_every up to
 * px_csn. The receive state (rx_psn and the WRITE cursor) is xhca_rx's;
 * px_csn the proxy thread's, which stores it alone. */
#define CFG_START offsetof(struct xhca_qp_ctx, gen)
#define CFG_END offsetof(struct xhca_qp_ctx, rx_psn)
#define RX_START offsetof(struct xhca_qp_ctx, wc_mr)
#define RX_END offsetof(struct xhca_qp_ctx, ack_every)
#define TAIL_START offsetof(struct xhca_qp_ctx, ack_every)
#define TAIL_END offsetof(struct xhca_qp_ctx, px_csn)

_Static_assert(offsetof(struct xhca_qp_ctx, pd) == CFG_END + 4, "pd follows rx_psn");
_Static_assert(offsetof(struct xhca_qp_ctx, wc_mr) == CFG_END + 8, "the cursor follows pd");

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

/* Opens a write section: seq odd, visible before any field changes. An odd
 * seq already means a writer died mid-section: this write ends it. */
static __u32 section_begin(__u32 *seqp)
{
	__u32 seq = __atomic_load_n(seqp, __ATOMIC_RELAXED) | 1;

	__atomic_store_n(seqp, seq, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	return seq;
}

/* Closes it: every field is visible before seq is even again. */
static void section_end(__u32 *seqp, __u32 seq)
{
	__atomic_store_n(seqp, seq + 1, __ATOMIC_RELEASE);
}

void xhca_qpctx_store(struct xhca_qp_ctx *slot, const struct xhca_qp_ctx *c, int set_rx)
{
	__u32 seq = section_begin(&slot->seq);

	memcpy((char *)slot + CFG_START, (const char *)c + CFG_START, CFG_END - CFG_START);
	slot->pd = c->pd;
	memcpy((char *)slot + TAIL_START, (const char *)c + TAIL_START, TAIL_END - TAIL_START);
	if (set_rx) {
		/* Nothing else is in flight for a QP being reset: the cursor
		 * goes with the word. */
		memcpy((char *)slot + RX_START, (const char *)c + RX_START, RX_END - RX_START);
		__atomic_store_n(&slot->rx_psn, c->rx_psn, __ATOMIC_RELAXED);
	}
	section_end(&slot->seq, seq);
}

int xhca_qpctx_torn(const struct xhca_qp_ctx *slot)
{
	return __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE) & 1;
}

void xhca_mr_store(struct xhca_mr_ctx *slot, const struct xhca_mr_ctx *m)
{
	__u32 seq = section_begin(&slot->seq);

	memcpy((char *)slot + sizeof(slot->seq), (const char *)m + sizeof(m->seq),
	       sizeof(*m) - sizeof(m->seq));
	section_end(&slot->seq, seq);
}
