/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The control socket: one listening AF_UNIX stream socket per interface,
 * requests served one at a time (xhcad is the only writer of the maps, and
 * serving in order keeps every request atomic with respect to the others).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include "log.h"
#include "xhcad.h"

#define MAX_CLIENTS 64

int ctl_listen(struct xhcad *d)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, err;

	if (mkdir(XHCA_RUN_DIR, 0755) && errno != EEXIST)
		return -errno;
	if (strlen(d->sock_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, d->sock_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A socket file nobody answers on is left from a crash: take it over. */
	if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		pr_warn("another xhcad already serves %s (%s); stop it first\n", d->ifname,
			d->sock_path);
		return -EADDRINUSE;
	}
	unlink(d->sock_path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16)) {
		err = -errno;
		close(fd);
		pr_warn("cannot listen on %s: %s\n", d->sock_path, strerror(-err));
		return err;
	}
	chmod(d->sock_path, 0600);
	return fd;
}

static int reply_err(int fd, __u32 op, int rc, const char *msg)
{
	return xhca_ctl_send(fd, op, rc, msg, strlen(msg) + 1);
}

static void fill_status(struct xhcad *d, struct xhca_status *s)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->ifname, sizeof(s->ifname), "%s", d->ifname);
	snprintf(s->pin_dir, sizeof(s->pin_dir), "%s", d->pin_dir);
	snprintf(s->mode, sizeof(s->mode), "%s", d->native ? "native" : "skb");
	snprintf(s->attached_by, sizeof(s->attached_by), "%s", d->adopt ? "adopted" : "xhcad");
	s->ifindex = d->ifindex;
	s->prog_id = d->prog_id;
	s->max_qps = d->max_qps;
	s->qps_in_use = d->qps_in_use;
	s->abi_version = XHCA_ABI_VERSION;
	s->pid = getpid();
	s->uptime_ms = now_ms() - d->start_ms;
	s->next_qpn = d->next_qpn;
	s->keep = d->keep;
	s->repaired = d->repaired;
}

/* Serves one request. Returns 0, or -errno when the connection is done. */
static int serve_one(struct xhcad *d, int fd)
{
	char err[XHCA_ERRMSG_LEN] = "";
	struct xhca_ctl_hdr h;
	void *buf = NULL;
	int rc;

	rc = xhca_ctl_recv(fd, &h, &buf);
	if (rc)
		return rc;
	switch (h.op) {
	case XHCA_CTL_STATUS: {
		struct xhca_status s;

		fill_status(d, &s);
		rc = xhca_ctl_send(fd, h.op, 0, &s, sizeof(s));
		break;
	}
	case XHCA_CTL_QP_CREATE:
	case XHCA_CTL_QP_MODIFY: {
		struct xhca_qp_attr a;

		if (h.len != sizeof(a)) {
			rc = reply_err(fd, h.op, -EINVAL, "bad request size");
			break;
		}
		memcpy(&a, buf, sizeof(a));
		rc = h.op == XHCA_CTL_QP_CREATE ? qp_create(d, &a, err, sizeof(err))
						: qp_modify(d, &a, err, sizeof(err));
		rc = rc ? reply_err(fd, h.op, rc, err) : xhca_ctl_send(fd, h.op, 0, &a, sizeof(a));
		break;
	}
	case XHCA_CTL_QP_DESTROY: {
		__u32 qpn;

		if (h.len != sizeof(qpn)) {
			rc = reply_err(fd, h.op, -EINVAL, "bad request size");
			break;
		}
		memcpy(&qpn, buf, sizeof(qpn));
		rc = qp_destroy(d, qpn, err, sizeof(err));
		rc = rc ? reply_err(fd, h.op, rc, err) : xhca_ctl_send(fd, h.op, 0, NULL, 0);
		break;
	}
	case XHCA_CTL_QP_SHOW: {
		struct xhca_qp_info *qi = NULL;
		__u32 qpn = 0, n = 0;

		if (h.len == sizeof(qpn))
			memcpy(&qpn, buf, sizeof(qpn));
		rc = qp_show(d, qpn, &qi, &n, err, sizeof(err));
		rc = rc ? reply_err(fd, h.op, rc, err[0] ? err : strerror(-rc))
			: xhca_ctl_send(fd, h.op, 0, qi, n * sizeof(*qi));
		free(qi);
		break;
	}
	case XHCA_CTL_STATS: {
		struct xhca_stats_reply *r = calloc(1, sizeof(*r));
		struct xhca_stats_req rq = {};

		if (!r) {
			rc = reply_err(fd, h.op, -ENOMEM, "out of memory");
			break;
		}
		if (h.len == sizeof(rq))
			memcpy(&rq, buf, sizeof(rq));
		rc = stats_get(d, &rq, r, err, sizeof(err));
		rc = rc ? reply_err(fd, h.op, rc, err[0] ? err : strerror(-rc))
			: xhca_ctl_send(fd, h.op, 0, r, sizeof(*r));
		free(r);
		break;
	}
	default:
		snprintf(err, sizeof(err), "unknown request %u: xhca and xhcad versions differ", h.op);
		rc = reply_err(fd, h.op, -EOPNOTSUPP, err);
	}
	free(buf);
	return rc;
}

/* Runs until a termination signal arrives (reported by returning 0). */
int ctl_serve(struct xhcad *d, int lfd)
{
	extern volatile sig_atomic_t xhcad_stop;
	struct pollfd pfd[MAX_CLIENTS + 1];
	int n = 1, i;

	pfd[0].fd = lfd;
	pfd[0].events = POLLIN;
	while (!xhcad_stop) {
		if (poll(pfd, n, 1000) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (i = n - 1; i >= 1; i--) {
			if (!pfd[i].revents)
				continue;
			/* A client that hung up or sent garbage is dropped alone. */
			if (serve_one(d, pfd[i].fd)) {
				close(pfd[i].fd);
				pfd[i] = pfd[--n];
			}
		}
		if (pfd[0].revents & POLLIN) {
			int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

			if (cfd >= 0 && n <= MAX_CLIENTS) {
				/* A client that stalls mid-message must not stall
				 * the daemon: it gets a second, then is dropped. */
				struct timeval tv = { .tv_sec = 1 };

				setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
				setsockopt(cfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
				pfd[n].fd = cfd;
				pfd[n].events = POLLIN;
				pfd[n].revents = 0;
				n++;
			} else if (cfd >= 0) {
				pr_warn("too many control clients; closing one\n");
				close(cfd);
			}
		}
	}
	for (i = 1; i < n; i++)
		close(pfd[i].fd);
	return 0;
}
