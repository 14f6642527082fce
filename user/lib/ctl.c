/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Control socket client (and the descriptor passing xhcad shares with it):
 * every message is a struct xhca_ctl_hdr and hdr.len payload bytes, over a
 * stream socket. xhcad reads and writes them without waiting
 * (user/xhcad/ctl_server.c); a client waits, as here.
 *
 * xhca_ctl_recv_fd() return values, for callers that must tell them apart:
 *   -ECONNRESET  the peer closed the connection between messages (normal
 *                hang-up of a client, or the daemon went away)
 *   -EPROTO      the peer closed in the middle of a message
 *   -EBADMSG     the header does not start with XHCA_CTL_MAGIC
 *   -EMSGSIZE    the payload is larger than XHCA_CTL_MAX_PAYLOAD
 *   -EAGAIN      a receive timeout (SO_RCVTIMEO) expired
 * After any error the stream is out of step: close the connection.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>
#include <net/if.h>
#include <xhca/ctl.h>

/* The kernel's rule for interface names (dev_valid_name()): the socket path
 * is built from the name, so a name with '/' must never reach it. */
static int ifname_check(const char *ifname)
{
	size_t len, i;

	if (!ifname)
		return -EINVAL;
	len = strlen(ifname);
	if (!len || !strcmp(ifname, ".") || !strcmp(ifname, ".."))
		return -EINVAL;
	if (len >= IFNAMSIZ)
		return -ENAMETOOLONG;
	for (i = 0; i < len; i++)
		if (ifname[i] == '/' || ifname[i] == ':' || ifname[i] == ' ' ||
		    ifname[i] == '\t' || ifname[i] == '\n')
			return -EINVAL;
	return 0;
}

/* A connect() interrupted by a signal keeps going in the kernel; calling it
 * again would fail with EALREADY. Wait for it and read its result instead. */
static int connect_finish(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	socklen_t len = sizeof(int);
	int soerr = 0;

	for (;;) {
		int n = poll(&pfd, 1, -1);

		if (n > 0)
			break;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len))
		return -errno;
	return -soerr;
}

int xhca_ctl_connect(const char *ifname)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = -1, err;

	err = ifname_check(ifname);
	if (err)
		return err;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s.sock", XHCA_RUN_DIR, ifname);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = errno == EINTR ? connect_finish(fd) : -errno;
		if (err)
			goto out;
	}
	return fd;
out:
	close(fd);
	return err;
}

void xhca_ctl_put_fd(struct msghdr *msg, union xhca_fd_cmsg *cm, int fd)
{
	struct cmsghdr *c;

	memset(cm, 0, sizeof(*cm));
	msg->msg_control = cm->buf;
	msg->msg_controllen = CMSG_SPACE(sizeof(int));
	c = CMSG_FIRSTHDR(msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
}

void xhca_ctl_take_fd(struct msghdr *msg, int *fdp)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int fd;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		/* more than one (the room takes two): none is taken, all closed */
		for (size_t i = 0; n != 1 && i < n; i++) {
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			close(fd);
		}
		if (n != 1)
			continue;
		if (*fdp >= 0)
			close(*fdp);
		memcpy(fdp, CMSG_DATA(c), sizeof(int));
	}
}

/* Writes every byte of iov[0..cnt), resuming after short writes and signals.
 * MSG_NOSIGNAL: a peer that hung up must cost an -EPIPE, not the process.
 * pass_fd >= 0 rides on the first byte as SCM_RIGHTS. */
static int send_all(int fd, struct iovec *iov, int cnt, int pass_fd)
{
	union xhca_fd_cmsg cm;
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = cnt };

	if (pass_fd >= 0)
		xhca_ctl_put_fd(&msg, &cm, pass_fd);
	while (msg.msg_iovlen) {
		ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		/* the descriptor went with the first bytes */
		msg.msg_control = NULL;
		msg.msg_controllen = 0;
		while (n > 0 && msg.msg_iovlen) {
			size_t take = (size_t)n < msg.msg_iov->iov_len ? (size_t)n
								      : msg.msg_iov->iov_len;

			msg.msg_iov->iov_base = (char *)msg.msg_iov->iov_base + take;
			msg.msg_iov->iov_len -= take;
			n -= take;
			if (!msg.msg_iov->iov_len) {
				msg.msg_iov++;
				msg.msg_iovlen--;
			}
		}
	}
	return 0;
}

/* A request: op and buf, pass_fd >= 0 along as SCM_RIGHTS. */
static int send_request(int fd, __u32 op, const void *buf, __u32 len, int pass_fd)
{
	struct xhca_ctl_hdr h = { .magic = XHCA_CTL_MAGIC, .op = (__u16)op,
				  .version = XHCA_CTL_VERSION, .len = len };
	struct iovec iov[2] = {
		{ .iov_base = &h, .iov_len = sizeof(h) },
		{ .iov_base = (void *)buf, .iov_len = len },
	};

	if (len > XHCA_CTL_MAX_PAYLOAD)
		return -EMSGSIZE;
	if (len && !buf)
		return -EINVAL;
	/* Header and payload in one call: the peer usually gets the whole
	 * message in one read, and no other writer can slip in between. */
	return send_all(fd, iov, len ? 2 : 1, pass_fd);
}

/* Reads exactly len bytes. Returns 0, -ECONNRESET on EOF before the first
 * byte when at_boundary, -EPROTO on EOF anywhere else, or -errno. With fdp,
 * a descriptor that came as SCM_RIGHTS lands there (the caller closes it). */
static int recv_all(int fd, void *buf, size_t len, int at_boundary, int *fdp)
{
	union xhca_fd_cmsg cm;
	size_t got = 0;

	while (got < len) {
		struct iovec iov = { .iov_base = (char *)buf + got, .iov_len = len - got };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n;

		if (fdp) {
			/* room for one descriptor: more than one the kernel drops */
			msg.msg_control = cm.buf;
			msg.msg_controllen = CMSG_SPACE(sizeof(int));
		}
		n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
		if (fdp && n > 0)
			xhca_ctl_take_fd(&msg, fdp);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			/* SO_RCVTIMEO reports EAGAIN or EWOULDBLOCK */
			return errno == EWOULDBLOCK ? -EAGAIN : -errno;
		}
		if (!n)
			return at_boundary && !got ? -ECONNRESET : -EPROTO;
		got += n;
	}
	return 0;
}

int xhca_ctl_recv_fd(int fd, struct xhca_ctl_hdr *hdr, void **buf, int *fdp)
{
	void *p = NULL;
	int err;

	if (buf)
		*buf = NULL;
	if (fdp)
		*fdp = -1;
	err = recv_all(fd, hdr, sizeof(*hdr), 1, fdp);
	if (err)
		goto out;
	if (hdr->magic != XHCA_CTL_MAGIC) {
		err = -EBADMSG;
		goto out;
	}
	if (hdr->len > XHCA_CTL_MAX_PAYLOAD) {
		err = -EMSGSIZE;
		goto out;
	}
	if (hdr->len) {
		/* One spare NUL byte: an error message that arrives without
		 * its terminator is still a C string. */
		p = malloc(hdr->len + 1);
		if (!p) {
			err = -ENOMEM;
			goto out;
		}
		err = recv_all(fd, p, hdr->len, 0, fdp);
		if (err)
			goto out;
		((char *)p)[hdr->len] = '\0';
	}
	if (buf) {
		*buf = p;
		p = NULL;
	}
out:
	free(p);
	if (err && fdp && *fdp >= 0) {
		close(*fdp);
		*fdp = -1;
	}
	return err;
}

int xhca_ctl_call(int fd, __u32 op, const void *req, __u32 req_len, void **resp,
		  __u32 *resp_len, char *errmsg, size_t errlen)
{
	return xhca_ctl_call_fd(fd, op, req, req_len, -1, resp, resp_len, NULL, errmsg, errlen);
}

int xhca_ctl_call_fd(int fd, __u32 op, const void *req, __u32 req_len, int send_fd,
		     void **resp, __u32 *resp_len, int *recv_fd, char *errmsg, size_t errlen)
{
	struct xhca_ctl_hdr h;
	void *p = NULL;
	int err;

	if (resp)
		*resp = NULL;
	if (resp_len)
		*resp_len = 0;
	if (recv_fd)
		*recv_fd = -1;
	if (errmsg && errlen)
		errmsg[0] = '\0';
	err = send_request(fd, op, req, req_len, send_fd);
	if (err)
		goto out;
	err = xhca_ctl_recv_fd(fd, &h, &p, recv_fd);
	if (err)
		goto out;
	if (h.op != op) {
		err = -EPROTO;
		goto out;
	}
	if (h.version != XHCA_CTL_VERSION && !h.err) {
		err = -EPROTO;
		if (errmsg && errlen)
			snprintf(errmsg, errlen, "xhcad speaks control protocol %u, this client %u: "
				 "use the xhca tools and library of xhcad's release", h.version,
				 XHCA_CTL_VERSION);
		goto out;
	}
	if (h.err) {
		/* Errors are -errno; a positive or absurd value is still an
		 * error, and must not be mistaken for success or a length. */
		err = h.err < 0 && h.err > -4096 ? h.err : -EPROTO;
		if (errmsg && errlen)
			snprintf(errmsg, errlen, "%s", p && *(char *)p ? (char *)p : strerror(-err));
		goto out;
	}
	if (resp) {
		*resp = p;
		p = NULL;
	}
	if (resp_len)
		*resp_len = h.len;
out:
	free(p);
	if (err && recv_fd && *recv_fd >= 0) {
		close(*recv_fd);
		*recv_fd = -1;
	}
	return err;
}
