/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* xhca exec's device view (view.c). */
#ifndef XHCA_TOOLS_VIEW_H
#define XHCA_TOOLS_VIEW_H

/* Moves this process into a mount namespace of its own (and, not root, a
 * user namespace) with /dev/infiniband and /sys/class/infiniband of the
 * devices devs (interface names, in the device list's order). 0, or -1
 * with why said (then the process may be in a namespace with part of
 * the view: nobody else sees it). */
int view_enter(const char *const *devs, int ndev, char *why, size_t whylen);

#endif
