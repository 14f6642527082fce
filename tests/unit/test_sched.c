/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The flow queue scheduler on synthetic queues: weighted shares while
 * backlogged (DRR bound), work conservation, no head-of-line blocking past a
 * blocked queue under DRR and the blocking FIFO baseline, order of arrival in
 * FIFO, credit lost when a queue empties or blocks.
 */
#include <stdio.h>
#include <string.h>
#include "../../user/xhcad/sched.h"
#include "tests.h"

#define NQ 8
#define QUANTUM 4096

struct simq {
	__u64 left;	/* frames waiting; ~0 = always backlogged */
	__u32 size;	/* bytes per frame */
	int blocked;
	__u64 next_t;	/* arrival time of the head frame */
	__u64 step_t;	/* between arrivals */
	__u64 served, bytes;
};

struct sim {
	struct simq q[NQ];
};

static __u32 sim_head(void *ctx, __u32 q, __u64 *t)
{
	struct simq *s = &((struct sim *)ctx)->q[q];

	*t = s->next_t;
	return s->left ? s->size : 0;
}

static int sim_ready(void *ctx, __u32 q)
{
	return !((struct sim *)ctx)->q[q].blocked;
}

static const struct sched_ops ops = { sim_head, sim_ready };

/* Serves up to n frames; returns how many were served. */
static int run(struct sched *s, struct sim *m, int n)
{
	int done = 0;

	for (; done < n; done++) {
		int q = sched_next(s, &ops, m);
		struct simq *sq;

		if (q < 0)
			break;
		sq = &m->q[q];
		sched_charge(s, (__u32)q, sq->size);
		sq->served++;
		sq->bytes += sq->size;
		if (sq->left != ~0ull)
			sq->left--;
		sq->next_t += sq->step_t;
	}
	return done;
}

static void result(int ok, const char *name, const char *why)
{
	if (ok)
		unit_check(1, "%s", name);
	else
		unit_check(0, "%s (%s)", name, why);
}

static void weighted_shares(void)
{
	static const __u32 w[4] = { 3, 1, 2, 5 }, size[4] = { 1024, 256, 4096, 1500 };
	struct sched s;
	struct sim m = {};
	char why[200] = "";
	__u64 total = 0;
	int ok = 1;

	sched_init(&s, FQ_SCHED_DRR, 4, QUANTUM);
	for (int q = 0; q < 4; q++) {
		s.weight[q] = w[q];
		m.q[q].left = ~0ull;
		m.q[q].size = size[q];
	}
	run(&s, &m, 200000);
	for (int q = 0; q < 4; q++)
		total += m.q[q].bytes;
	for (int q = 0; q < 4; q++) {
		double want = (double)w[q] / 11.0, got = (double)m.q[q].bytes / (double)total;

		if (got < want * 0.99 || got > want * 1.01) {
			ok = 0;
			snprintf(why, sizeof(why), "queue %d weight %u: share %.4f, want %.4f", q, w[q],
				 got, want);
		}
	}
	result(ok, "DRR weights 3:1:2:5 with mixed frame sizes: byte shares within 1%", why);
}

static void work_conserving(void)
{
	struct sched s;
	struct sim m = {};
	char why[100] = "";
	int n;

	sched_init(&s, FQ_SCHED_DRR, NQ, QUANTUM);
	s.weight[5] = 1;
	s.weight[2] = 100;
	m.q[5].left = ~0ull;
	m.q[5].size = 700;
	n = run(&s, &m, 10000);
	snprintf(why, sizeof(why), "served %d of 10000", n);
	result(n == 10000 && m.q[5].served == 10000,
	       "DRR: a lone backlogged queue of weight 1 gets every turn", why);
}

static void no_hol_drr(void)
{
	struct sched s;
	struct sim m = {};
	char why[120] = "";

	sched_init(&s, FQ_SCHED_DRR, NQ, QUANTUM);
	for (int q = 0; q < 2; q++) {
		m.q[q].left = ~0ull;
		m.q[q].size = 1024;
		m.q[q].step_t = 2;
	}
	m.q[0].next_t = 0; /* queue 0 holds the oldest frame */
	m.q[1].next_t = 1;
	m.q[0].blocked = 1;
	run(&s, &m, 5000);
	snprintf(why, sizeof(why), "blocked queue served %llu, other %llu",
		 (unsigned long long)m.q[0].served, (unsigned long long)m.q[1].served);
	result(m.q[0].served == 0 && m.q[1].served == 5000,
	       "DRR: a blocked queue holds the oldest frame, the other is served", why);
	/* unblocked, it comes back without a burst: its credit was reset */
	m.q[0].blocked = 0;
	memset(&m.q[0].served, 0, sizeof(__u64));
	m.q[1].served = 0;
	run(&s, &m, 1000);
	snprintf(why, sizeof(why), "after unblock %llu vs %llu", (unsigned long long)m.q[0].served,
		 (unsigned long long)m.q[1].served);
	result(m.q[0].served >= 496 && m.q[0].served <= 504,
	       "DRR: an unblocked queue shares equally at once, no saved-up credit", why);
}

static void hol_fifo(void)
{
	struct sched s;
	struct sim m = {};
	char why[120] = "";
	int n;

	sched_init(&s, FQ_SCHED_FIFO, NQ, QUANTUM);
	for (int q = 0; q < 3; q++) {
		m.q[q].left = 1000;
		m.q[q].size = 512;
		m.q[q].next_t = (__u64)q;
		m.q[q].step_t = 3;
	}
	/* arrival order is q0 q1 q2 q0 q1 q2 ...: FIFO serves exactly that */
	n = run(&s, &m, 3000);
	snprintf(why, sizeof(why), "served %d, %llu/%llu/%llu", n,
		 (unsigned long long)m.q[0].served, (unsigned long long)m.q[1].served,
		 (unsigned long long)m.q[2].served);
	result(n == 3000 && m.q[0].left == 0 && m.q[2].left == 0,
	       "FIFO: frames leave in arrival order across queues", why);
	{
		struct sched f;
		struct sim b = {};
		int order_ok = 1;
		__u64 last = 0;

		sched_init(&f, FQ_SCHED_FIFO, NQ, QUANTUM);
		for (int q = 0; q < 3; q++) {
			b.q[q].left = 100;
			b.q[q].size = 100;
			b.q[q].next_t = (__u64)(7 * q + 1);
			b.q[q].step_t = (__u64)(5 + q);
		}
		for (int i = 0; i < 300; i++) {
			int q = sched_next(&f, &ops, &b);
			__u64 t;

			if (q < 0)
				break;
			sim_head(&b, (__u32)q, &t);
			if (t < last)
				order_ok = 0;
			last = t;
			b.q[q].left--;
			b.q[q].next_t += b.q[q].step_t;
		}
		result(order_ok, "FIFO: interleaved arrivals leave oldest first", "order broken");
	}
	memset(&m, 0, sizeof(m));
	for (int q = 0; q < 2; q++) {
		m.q[q].left = ~0ull;
		m.q[q].size = 1024;
		m.q[q].step_t = 2;
	}
	m.q[1].next_t = 1;
	m.q[0].blocked = 1;
	n = run(&s, &m, 100);
	snprintf(why, sizeof(why), "served %d", n);
	result(n == 0, "FIFO: a blocked oldest frame stops every queue (head-of-line)", why);
}

static void empty_and_single(void)
{
	struct sched s;
	struct sim m = {};

	sched_init(&s, FQ_SCHED_DRR, NQ, QUANTUM);
	result(sched_next(&s, &ops, &m) < 0, "DRR: nothing to serve is -1", "served something");
	m.q[7].left = 3;
	m.q[7].size = QUANTUM;
	result(run(&s, &m, 10) == 3 && m.q[7].left == 0,
	       "DRR: frames of exactly one quantum are served one per turn", "not drained");
}

static const struct unit_case cases[] = {
	UNIT_RUN("weighted_shares", weighted_shares),
	UNIT_RUN("work_conserving", work_conserving),
	UNIT_RUN("no_hol_drr", no_hol_drr),
	UNIT_RUN("hol_fifo", hol_fifo),
	UNIT_RUN("empty_and_single", empty_and_single),
};

UNIT_FILE(sched, NULL, NULL, cases);
