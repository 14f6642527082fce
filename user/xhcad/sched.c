/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The flow queue scheduler: see sched.h. */
#include <string.h>
#include "sched.h"

void sched_init(struct sched *s, enum sched_mode mode, __u32 nq, __u32 quantum)
{
	memset(s, 0, sizeof(*s));
	s->mode = mode;
	s->nq = nq > XHCA_FLOWQ_MAX ? XHCA_FLOWQ_MAX : nq;
	s->quantum = quantum;
	s->fresh = 1;
	for (__u32 q = 0; q < XHCA_FLOWQ_MAX; q++)
		s->weight[q] = 1;
}

const char *sched_mode_name(enum sched_mode m)
{
	return m == FQ_SCHED_FIFO ? "fifo" : "drr";
}

static int fifo_next(const struct sched *s, const struct sched_ops *ops, void *ctx)
{
	__u64 best_t = 0, t;
	int best = -1;

	for (__u32 q = 0; q < s->nq; q++) {
		if (!ops->head(ctx, q, &t))
			continue;
		if (best < 0 || t < best_t) {
			best = (int)q;
			best_t = t;
		}
	}
	/* The oldest frame goes first or nothing does. */
	return best >= 0 && ops->ready(ctx, (__u32)best) ? best : -1;
}

static void drr_advance(struct sched *s)
{
	s->cur = (s->cur + 1) % s->nq;
	s->fresh = 1;
}

static int drr_next(struct sched *s, const struct sched_ops *ops, void *ctx)
{
	/* One full round: with quantum >= any frame, a queue that is visited
	 * with a frame and is ready gets served on this visit. */
	for (__u32 tries = 0; tries <= s->nq; tries++) {
		__u32 q = s->cur;
		__u64 t;
		__u32 head = ops->head(ctx, q, &t);

		if (!head || !ops->ready(ctx, q)) {
			s->deficit[q] = 0;
			drr_advance(s);
			continue;
		}
		if (s->fresh) {
			s->deficit[q] += (__s64)s->quantum * s->weight[q];
			s->fresh = 0;
		}
		if ((__s64)head <= s->deficit[q])
			return (int)q;
		drr_advance(s);
	}
	return -1;
}

int sched_next(struct sched *s, const struct sched_ops *ops, void *ctx)
{
	if (!s->nq)
		return -1;
	return s->mode == FQ_SCHED_FIFO ? fifo_next(s, ops, ctx) : drr_next(s, ops, ctx);
}

void sched_charge(struct sched *s, __u32 q, __u32 bytes)
{
	if (q < s->nq && s->mode == FQ_SCHED_DRR)
		s->deficit[q] -= bytes;
}
