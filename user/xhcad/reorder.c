/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The completion reorderer (reorder.h): a window of RO_WINDOW slots indexed
 * by CSN, released from the head while the head has its record. CSNs are
 * 16-bit serial numbers: distance is taken modulo 2^16, so the window
 * slides across the wrap.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "reorder.h"

int ro_init(struct reorder *r, __u16 first)
{
	memset(r, 0, sizeof(*r));
	r->slot = calloc(RO_WINDOW, sizeof(*r->slot));
	if (!r->slot)
		return -ENOMEM;
	r->next = first;
	return 0;
}

void ro_fini(struct reorder *r)
{
	free(r->slot);
	r->slot = NULL;
}

/* Distance from the head, as a signed 16-bit serial number. */
static int ro_dist(const struct reorder *r, __u16 csn)
{
	return (__s16)(__u16)(csn - r->next);
}

int ro_put(struct reorder *r, __u16 csn, enum ro_kind kind, const struct xhca_cqe *c,
	   __u64 now)
{
	int dist = ro_dist(r, csn);
	struct ro_slot *s;

	if (dist < 0) {
		r->late++;
		return -EALREADY;
	}
	if (dist >= RO_WINDOW)
		return -ERANGE;
	s = &r->slot[csn & (RO_WINDOW - 1)];
	if (s->kind != RO_EMPTY)
		return -EEXIST;
	s->kind = (__u8)kind;
	if (kind == RO_CQE)
		s->cqe = *c;
	r->waiting++;
	if (dist > 0 && !r->gap_since)
		r->gap_since = now ? now : 1; /* something waits behind an empty head */
	return 0;
}

unsigned int ro_release(struct reorder *r, ro_emit_fn emit, void *arg, __u64 now)
{
	unsigned int n = 0;

	for (;;) {
		struct ro_slot *s = &r->slot[r->next & (RO_WINDOW - 1)];

		if (s->kind == RO_EMPTY)
			break;
		if (s->kind == RO_CQE && emit(arg, r->next, &s->cqe))
			return n; /* no room: the head stays, in order */
		if (s->kind == RO_SKIP)
			r->skipped++;
		else
			r->released++;
		s->kind = RO_EMPTY;
		r->next++;
		r->waiting--;
		n++;
	}
	/* The gap clock runs from the last progress, while records wait. */
	if (n || !r->waiting)
		r->gap_since = r->waiting ? (now ? now : 1) : 0;
	return n;
}

int ro_gap_expired(const struct reorder *r, __u64 now, __u64 timeout_ns)
{
	return r->waiting && r->gap_since && r->slot[r->next & (RO_WINDOW - 1)].kind == RO_EMPTY &&
	       now - r->gap_since >= timeout_ns;
}

void ro_fill_gap(struct reorder *r, enum ro_kind kind, const struct xhca_cqe *c)
{
	struct ro_slot *s = &r->slot[r->next & (RO_WINDOW - 1)];

	if (s->kind != RO_EMPTY)
		return;
	s->kind = (__u8)kind;
	if (kind == RO_CQE)
		s->cqe = *c;
	r->waiting++;
	r->gaps++;
}

unsigned int ro_cqes(const struct reorder *r)
{
	unsigned int n = 0;

	for (unsigned int i = 0; r->waiting && i < RO_WINDOW; i++)
		n += r->slot[i].kind == RO_CQE;
	return n;
}

int ro_head_empty(const struct reorder *r)
{
	return r->slot[r->next & (RO_WINDOW - 1)].kind == RO_EMPTY;
}
