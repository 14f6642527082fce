/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Event channels. xhcad's channels are per session, and so per device
 * (an xhcad serves one interface), while an rdma_cm channel comes before
 * any device and may carry ids of several. So an rdma_cm channel's fd is an
 * epoll set; the first id on a device that needs the channel asks that
 * device's xhcad for its channel (XHCA_CTL_CM_CHANNEL), whose socket
 * (SOCK_SEQPACKET, one struct xhca_cm_event a record, in the order they
 * happened for its ids) joins the set. The application polls the fd,
 * makes it non-blocking, or blocks in rdma_get_cm_event, as with
 * rdma-core's; events of one id come in order, events of ids on two
 * devices in the order the two sockets are read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <xhca/ctl.h>
#include "xcm.h"

XCM_EXPORT struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct xcm_channel *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->ch.fd = epoll_create1(EPOLL_CLOEXEC);
	if (c->ch.fd < 0) {
		int e = errno;

		free(c);
		errno = e;
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	return &c->ch;
}

/*
 * (rdma-core's: the ids on it destroyed first; xhcad refuses otherwise and
 * its channel stays until the session ends.) A thread of the application
 * may still wait in rdma_get_cm_event (rping's does, and exits on an
 * error): the sockets leave the set before xhcad closes its ends, so that
 * it goes on waiting, as on rdma-core's closed fd, and never reads a close.
 */
XCM_EXPORT void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct xcm_channel *c = xcm_chan(channel);

	if (!c)
		return;
	for (struct xcm_leg *l = c->legs; l; l = l->next)
		epoll_ctl(c->ch.fd, EPOLL_CTL_DEL, l->fd, NULL);
	while (c->legs) {
		struct xcm_leg *l = c->legs;

		c->legs = l->next;
		xcm_call(l->dev, XHCA_CTL_CM_CHANNEL_DESTROY, &l->xchan, sizeof(l->xchan),
			 NULL, 0, NULL);
		close(l->fd);
		free(l);
	}
	close(c->ch.fd);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static int leg_new(struct xcm_channel *c, struct xcm_dev *d, struct xcm_leg **out)
{
	struct xcm_leg *l = calloc(1, sizeof(*l));
	struct epoll_event ev = { .events = EPOLLIN };
	int rc;

	if (!l)
		return -ENOMEM;
	l->dev = d;
	rc = xcm_call(d, XHCA_CTL_CM_CHANNEL, NULL, 0, &l->xchan, sizeof(l->xchan), &l->fd);
	if (!rc && l->fd < 0)
		rc = -EPROTO; /* no socket came with the answer */
	if (rc)
		goto fail;
	ev.data.ptr = l;
	if (epoll_ctl(c->ch.fd, EPOLL_CTL_ADD, l->fd, &ev)) {
		rc = -errno;
		xcm_call(d, XHCA_CTL_CM_CHANNEL_DESTROY, &l->xchan, sizeof(l->xchan), NULL, 0,
			 NULL);
		close(l->fd);
		goto fail;
	}
	*out = l;
	return 0;
fail:
	free(l);
	return rc;
}

/* xhcad's channel for c on d (made on first need): 0 or -errno. */
int xcm_leg_get(struct xcm_channel *c, struct xcm_dev *d, uint32_t *xchan)
{
	struct xcm_leg *l;
	int rc = 0;

	pthread_mutex_lock(&c->lock);
	for (l = c->legs; l && l->dev != d; l = l->next)
		;
	if (!l) {
		rc = leg_new(c, d, &l);
		if (!rc) {
			l->next = c->legs;
			c->legs = l;
		}
	}
	if (!rc)
		*xchan = l->xchan;
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/*
 * The next record on c, and the device it came from: 0, -EAGAIN (the
 * application made the fd non-blocking and nothing is there), -EINTR (a
 * signal: rdma-core's read returns it too), -EIO (an xhcad went away: its
 * socket is out of the set, its ids will hear nothing more).
 */
int xcm_chan_read(struct xcm_channel *c, struct xhca_cm_event *x, struct xcm_dev **dev)
{
	int nonblock = fcntl(c->ch.fd, F_GETFL) & O_NONBLOCK;

	for (;;) {
		struct epoll_event ev;
		struct xcm_leg *l;
		ssize_t r;
		int n = epoll_wait(c->ch.fd, &ev, 1, nonblock ? 0 : -1);

		if (n < 0)
			return -errno;
		if (!n)
			return -EAGAIN;
		l = ev.data.ptr;
		r = recv(l->fd, x, sizeof(*x), MSG_DONTWAIT);
		if (r == (ssize_t)sizeof(*x)) {
			*dev = l->dev;
			return 0;
		}
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue; /* another thread took it */
		if (r > 0) {
			xcm_log("%s: an event of %zd bytes, not %zu: xhcad and this library differ",
				l->dev->dev->name, r, sizeof(*x));
			continue;
		}
		xcm_log("%s: xhcad closed the event channel (it stopped?)", l->dev->dev->name);
		epoll_ctl(c->ch.fd, EPOLL_CTL_DEL, l->fd, NULL);
		return -EIO;
	}
}
