/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The flow queues as xhcad runs them (US 2008/0123541): a queue whose head
 * frame's CQ (the one it writes a completion to: round.c's frame_cq) is
 * full is blocked until that CQ's application makes room (the
 * others go on: no head-of-line blocking); its weight for the scheduler
 * (sched.c); the view of one queue for `xhca flowq show`. The frames
 * themselves come from the AF_XDP sockets (xsk.c) and are served by the
 * round (round.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include "xhcad_queues.h"


/* (an engine's own flow queues, unless the main thread has every engine
 * stopped: then all of them) */
void flowq_unblock(struct xhcad *d, struct cq *cq)
{
	int all = d->neng < 2 || d->stopped, left = 0;

	for (__u32 f = 0; f < d->nflowq; f++) {
		if (!d->fq[f].blocked || (cq && d->fq[f].blocked_on != cq))
			continue;
		if (!all && fq_engine(d, f) != eng()->id) {
			left = 1;
			continue;
		}
		d->fq[f].blocked = 0;
		d->fq[f].blocked_on = NULL;
	}
	if (cq && !left)
		cq->waiting = 0;
}

int flowq_any_blocked(const struct xhcad *d, __u32 engine)
{
	for (__u32 f = engine; f < d->nflowq; f += d->neng)
		if (d->fq[f].blocked)
			return 1;
	return 0;
}

void flowq_init(struct xhcad *d)
{
	for (__u32 f = 0; f < XHCA_FLOWQ_MAX; f++) {
		d->fq[f].blocked = 0;
		d->fq[f].blocked_on = NULL;
	}
	for (__u32 k = 0; k < XHCA_ENGINES_MAX; k++) {
		d->eng[k].tokens = TOKEN_BURST_MIN;
		d->eng[k].tokens_ns = now_ns();
	}
}

void flowq_info(const struct xhcad *d, __u32 f, struct xhca_flowq_info *fi)
{
	const struct xhca_flowq *q = &d->fqm[f];
	struct xhca_flowq_counter v[d->ncpus > 0 ? d->ncpus : 1];

	memset(fi, 0, sizeof(*fi));
	fi->flowq = f;
	fi->weight = d->eng[fq_engine(d, f)].sched.weight[f];
	fi->high = q->high;
	fi->low = q->low;
	fi->gate = __atomic_load_n(&q->gate, __ATOMIC_RELAXED);
	fi->backlog = xsk_backlog(d, f);
	fi->blocked = d->fq[f].blocked;
	fi->nqps = d->fq[f].nqps;
	fi->enq = __atomic_load_n(&q->enq, __ATOMIC_RELAXED);
	fi->deq = q->deq;
	fi->gate_closes = __atomic_load_n(&q->gate_closes, __ATOMIC_RELAXED);
	fi->bytes = d->fq[f].bytes;
	fi->frames = d->fq[f].frames;
	fi->kernel_drops = d->fq[f].kernel_drops;
	if (!bpf_map_lookup_elem(d->m.fq_stats, &f, v)) {
		for (int i = 0; i < d->ncpus; i++) {
			fi->gate_drops += v[i].gate_drops;
			fi->nosock_drops += v[i].nosock_drops;
		}
	}
}

int flowq_set(struct xhcad *d, const struct xhca_flowq_set *r, char *err, size_t errlen)
{
	if (r->flowq >= d->nflowq) {
		snprintf(err, errlen, "flowq set: flow queue %u does not exist; xhcad has %u (0..%u)",
			 r->flowq, d->nflowq, d->nflowq - 1);
		return -ENOENT;
	}
	if (!r->weight || r->weight > XHCA_WEIGHT_MAX) {
		snprintf(err, errlen, "flowq set: weight %u is out of range; use 1..%u", r->weight,
			 XHCA_WEIGHT_MAX);
		return -EINVAL;
	}
	d->eng[fq_engine(d, r->flowq)].sched.weight[r->flowq] = r->weight;
	return 0;
}
