/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhcad's round layer: one round of the data path. A file of this layer
 * includes this header; it declares the layers below too, never those above
 * (docs/design.md: xhcad in layers).
 */
#ifndef XHCAD_ROUND_H
#define XHCAD_ROUND_H

#include "xhcad_mech.h"

/* round.c: one round of the data path */
/* Every engine's counters added up (the control thread's, the engines
 * stopped); the host reasons' zeroed (xhca stats --reset). */
void round_totals(const struct xhcad *d, struct engine *sum);
void round_totals_reset(struct xhcad *d);
/* One round of up to budget frames; *work: whether anything was done
 * (frames, requests, the proxy's, copies); *wait_ns: how long the bus
 * model wants to wait before more (0: none). Returns the frames taken
 * from the flow queues. */
int round_run(struct xhcad *d, int budget, __u64 *wait_ns, int *work);
/* Whether a round would find work now (rings only, no system call). */
int round_ready(struct xhcad *d);
/* Busy polling (--poll-us) after work, the main loop's and an engine's:
 * round_ready until work comes (1) or the clock passes until, or a signal
 * ends xhcad (0), the CPU yielded at the first look that finds nothing
 * (engine handbacks) and every 16 looks after (on a machine with fewer
 * cores than busy threads the application waited for must run). There too
 * side, when given, looks at what round_ready does not: > 0 work came,
 * < 0 stop polling. */
int round_busy_poll(struct xhcad *d, __u64 until, int (*side)(struct xhcad *d));
/* Whether frames another thread handed over (xsk_handed_to) wait in the
 * queues round_ready looks at. An engine going to sleep says so, then
 * looks here: a frame handed over before it said so is taken, and one
 * after finds it said and wakes it. */
int round_handed(struct xhcad *d);

#endif
