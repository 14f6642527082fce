/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A control connection, as the main loop keeps it. */
#ifndef XHCAD_CTL_SERVER_H
#define XHCAD_CTL_SERVER_H

#include <linux/types.h>

struct xhcad;

struct client {
	int fd;
	__u32 session;	/* 0: not an application session (the CLI) */
	int admin;	/* the peer is root (or xhcad's own user): the CLI's rights */
	__u32 uid;	/* the peer's */
};

int ctl_serve_one(struct xhcad *d, struct client *c);

#endif /* XHCAD_CTL_SERVER_H */
