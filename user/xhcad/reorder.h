/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The proxy's completion reorderer (US 9,069,633, C7-C8), one per QP on a
 * proxy CQ: every message of the QP has a completion sequence number (CSN,
 * assigned by xhca_rx at its first packet, 16 bits in the metadata), and
 * whoever finishes it, the proxy or the normal path, hands its record here.
 * Records are released strictly in CSN order: a later message's completion
 * waits behind an earlier one that takes longer. A record is a completion
 * to write (a normal one, or the no-op the proxy makes of a request it
 * handled) or a skip (a message that ends with no completion). A gap, the
 * next CSN missing while later ones wait, that lasts longer than the
 * timeout is the caller's to complete with an error (ro_gap_expired, then
 * ro_fill_gap).
 *
 * Pure logic, no locks: the proxy thread owns its reorderers.
 */
#ifndef XHCAD_REORDER_H
#define XHCAD_REORDER_H

#include <linux/types.h>
#include <xhca/ring.h>

#define RO_WINDOW 8192	/* records a QP may have waiting; a power of 2, < 32768 */

enum ro_kind {
	RO_EMPTY = 0,
	RO_CQE,		/* write this completion */
	RO_SKIP,	/* the message ends with no completion: nothing to write */
};

struct ro_slot {
	__u8 kind;	/* enum ro_kind */
	struct xhca_cqe cqe;
};

struct reorder {
	__u16 next;		/* the CSN released next */
	__u32 waiting;		/* records held behind it */
	__u64 gap_since;	/* when the head became a gap with records behind (0: none) */
	struct ro_slot *slot;	/* [RO_WINDOW], by CSN % RO_WINDOW */
	__u64 released, skipped, late, gaps;
};

/* Returns 0 or -ENOMEM. The first CSN expected is first. */
int ro_init(struct reorder *r, __u16 first);
void ro_fini(struct reorder *r);

/*
 * The record of csn (kind RO_CQE with its completion, or RO_SKIP). Returns
 * 0; -EALREADY for a CSN released already (a late record, counted); -ERANGE
 * beyond the window; -EEXIST for a CSN that has its record. Nothing changes
 * on an error.
 */
int ro_put(struct reorder *r, __u16 csn, enum ro_kind kind, const struct xhca_cqe *c,
	   __u64 now);

/*
 * Releases the records that are in order: emit() for each completion (not
 * for skips). emit returns 0, or nonzero when it cannot take one now (a full
 * CQ): the release stops there and resumes on the next call. Returns the
 * number of records released.
 */
typedef int (*ro_emit_fn)(void *arg, __u16 csn, const struct xhca_cqe *c);
unsigned int ro_release(struct reorder *r, ro_emit_fn emit, void *arg, __u64 now);

/* Has the head been a gap, records waiting behind it, for timeout_ns? */
int ro_gap_expired(const struct reorder *r, __u64 now, __u64 timeout_ns);

/* Fills the gap at the head: with c (RO_CQE, an error completion, written
 * in its place by the next release) or with a skip (RO_SKIP: the message
 * was lost). Counted in gaps. */
void ro_fill_gap(struct reorder *r, enum ro_kind kind, const struct xhca_cqe *c);
/* Completions (RO_CQE records) waiting in it. */
unsigned int ro_cqes(const struct reorder *r);
/* The head is a gap (nothing for the next CSN yet). */
int ro_head_empty(const struct reorder *r);

#endif /* XHCAD_REORDER_H */
