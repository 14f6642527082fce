/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhcad's control layer: the control socket, the engines' threads, the main
 * loop, start and stop. A file of this layer includes this header; it
 * declares the layers below too, never those above (docs/design.md: xhcad
 * in layers).
 */
#ifndef XHCAD_CONTROL_H
#define XHCAD_CONTROL_H

#include "xhcad_verbs.h"

/* ctl_server.c, loop.c */
int ctl_listen(struct xhcad *d);

/* engine.c: the engines after the first, threads of their own */
int engines_start(struct xhcad *d);
/* Every engine stopped between two rounds (nested: counted), then let go
 * again, those that sleep woken: around anything the main thread does but
 * its own rounds. */
void engines_stop(struct xhcad *d);
void engines_go(struct xhcad *d);
void engines_end(struct xhcad *d);
/* Flow queue f's sockets in the epoll set epfd, heard (on) or muted;
 * *state: 0 not in it yet, then 1 muted, 2 heard. */
int engine_fq_epoll(const struct xhcad *d, int epfd, unsigned char *state, __u32 f, int on);

int xhcad_run(struct xhcad *d, int lfd);
void fill_status(struct xhcad *d, struct xhca_status *s);

#endif
