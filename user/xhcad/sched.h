/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The flow queue scheduler (US 8,155,135's arbiter over virtual queues), as
 * a pure function of what the caller reports about its queues, so that it
 * can be tested without a network:
 *  - drr:  deficit round robin (Shreedhar and Varghese). Each visit adds
 *          quantum * weight bytes of credit; a queue is served while its
 *          head frame fits in its credit. An empty or blocked queue loses
 *          its credit, so it cannot burst when it comes back. A blocked
 *          queue is skipped: the others go on (no head-of-line blocking).
 *  - fifo: strictly the oldest head frame of all queues, the baseline. A
 *          blocked oldest frame stops every queue (head-of-line blocking).
 */
#ifndef XHCAD_SCHED_H
#define XHCAD_SCHED_H

#include <linux/types.h>
#include <xhca/abi.h>

enum sched_mode { FQ_SCHED_DRR, FQ_SCHED_FIFO };

struct sched_ops {
	/* Bytes of the head frame of queue q, 0 when q is empty; *t is its
	 * arrival time (FIFO order). */
	__u32 (*head)(void *ctx, __u32 q, __u64 *t);
	/* Whether the head frame of q can be processed now. */
	int (*ready)(void *ctx, __u32 q);
};

struct sched {
	enum sched_mode mode;
	__u32 nq;
	__u32 quantum;		/* bytes per weight unit per round, >= the largest frame */
	__u32 cur;		/* DRR: the queue whose turn it is */
	int fresh;		/* DRR: cur has not had its credit for this turn */
	__u32 weight[XHCA_FLOWQ_MAX];
	__s64 deficit[XHCA_FLOWQ_MAX];
};

void sched_init(struct sched *s, enum sched_mode mode, __u32 nq, __u32 quantum);
/* The queue to take the next frame from, or -1 when none can be served. */
int sched_next(struct sched *s, const struct sched_ops *ops, void *ctx);
/* A frame of that many bytes was taken from q. */
void sched_charge(struct sched *s, __u32 q, __u32 bytes);
const char *sched_mode_name(enum sched_mode m);

#endif /* XHCAD_SCHED_H */
