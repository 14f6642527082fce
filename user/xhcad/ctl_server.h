/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A control connection, as the main loop keeps it. */
#ifndef XHCAD_CTL_SERVER_H
#define XHCAD_CTL_SERVER_H

#include <linux/types.h>
#include <xhca/ctl.h>

struct xhcad;

/* A client that leaves a message half sent, or half read, this long is
 * dropped: the socket does not block, so it holds up no one meanwhile. */
#define CTL_STALL_NS 1000000000ull

struct client {
	int fd;		/* non-blocking */
	__u32 session;	/* 0: not an application session (the CLI) */
	int admin;	/* the peer is root (or xhcad's own user): the CLI's rights */
	__u32 uid;	/* the peer's */
	/* the request coming in, piece by piece */
	struct xhca_ctl_hdr hdr;
	__u8 *in;	/* its payload (hdr.len + 1 bytes) */
	__u32 got;	/* bytes of header and payload so far */
	int in_fd;	/* a descriptor that came with it, -1: none */
	/* the reply going out, when the socket took part of it */
	__u8 *out;	/* header and payload */
	__u32 out_len, out_sent;
	int out_fd;	/* to go with its first byte (a copy, closed once sent) */
	__u64 since;	/* when the message half in or half out began (ns), 0 */
};

void ctl_client_init(struct client *c, int fd, __u32 uid, int admin);
void ctl_client_free(struct client *c);
/* Reads what came (serving a whole request), or sends what is left of a
 * reply. 0, or -errno when the connection is done. */
int ctl_serve_one(struct xhcad *d, struct client *c);
int ctl_wants_out(const struct client *c);
int ctl_stalled(const struct client *c, __u64 now);

#endif /* XHCAD_CTL_SERVER_H */
