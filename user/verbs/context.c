/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Contexts: ibv_open_device opens a libxhca session on the device's
 * interface and fills the context's operations, which the static inline
 * verbs of <infiniband/verbs.h> call through (ibv_poll_cq, ibv_post_send,
 * ibv_query_port, ibv_create_cq_ex, ...). The top of the library's layers:
 * it names the functions of every other file.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <xhca/ctl.h>
#include "xverbs.h"

#define WATCH_MS 20

/* What a QP's error (ring.h's XHCA_QPE_*) is to the application. */
static enum ibv_event_type qp_event(uint32_t err)
{
	return err == XHCA_QPE_ACCESS ? IBV_EVENT_QP_ACCESS_ERR
	       : err == XHCA_QPE_FATAL ? IBV_EVENT_QP_FATAL : IBV_EVENT_QP_REQ_ERR;
}

/*
 * A real HCA tells the application, on the context's async fd, of what it
 * learns with no work request to complete: a request it received that
 * moved a QP to the error state (xhcad marks the QP's send ring), the port
 * going down or up. This thread looks every WATCH_MS.
 */
static void *watch(void *arg)
{
	struct xv_context *c = arg;
	struct pollfd p = { .fd = c->watch_stop, .events = POLLIN };

	while (poll(&p, 1, WATCH_MS) == 0 || (p.revents == 0)) {
		struct ibv_async_event ev = {};
		int up = xv_link_up(c);

		if (up != c->port_up) {
			c->port_up = up;
			ev.event_type = up ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR;
			ev.element.port_num = 1;
			xv_async_post(c, &ev);
		}
		pthread_mutex_lock(&c->lock);
		for (struct xv_qp *q = c->qps; q; q = q->next) {
			uint32_t err = __atomic_load_n(&xhca_qp_sq(q->x)->qp_err, __ATOMIC_ACQUIRE);

			if (err && !q->err_seen) {
				ev.event_type = qp_event(err);
				ev.element.qp = &q->ex.qp_base;
				xv_async_post(c, &ev);
			}
			q->err_seen = err;
		}
		for (struct xv_cq *q = c->cqs; q; q = q->next) {
			if (q->overrun_seen || !xhca_cq_overrun(q->x))
				continue;
			q->overrun_seen = 1;
			ev.event_type = IBV_EVENT_CQ_ERR;
			ev.element.cq = ibv_cq_ex_to_cq(&q->ex);
			xv_async_post(c, &ev);
		}
		pthread_mutex_unlock(&c->lock);
	}
	return NULL;
}

/* librdmacm's requests (struct xv_cm_hook): on the session, as the verbs'
 * own, under the lock that keeps its control socket's messages apart. */
static int cm_call(struct ibv_context *ctx, uint32_t op, const void *req, uint32_t len,
		   void *resp, uint32_t resp_len, int *recv_fd, char *err, size_t errlen)
{
	struct xv_context *c = xv_ctx(ctx);
	int rc;

	pthread_mutex_lock(&c->lock);
	rc = xhca_session_call(c->x, op, req, len, -1, resp, resp_len, recv_fd);
	if (rc && err && errlen)
		snprintf(err, errlen, "%s", xhca_errmsg(c->x));
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* cmd_fd: programs take it for a descriptor (pyverbs dup()s it to try
 * ibv_import_device, which xhca does not have: EOPNOTSUPP). The device file
 * of the device view (/dev/null there), else /dev/null: nothing is ever
 * read or written on it. */
static int cmd_fd_open(const struct ibv_device *device)
{
	char path[sizeof("/dev/infiniband/") + IBV_SYSFS_NAME_MAX];
	int fd;

	snprintf(path, sizeof(path), "/dev/infiniband/%s", device->dev_name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	return fd >= 0 ? fd : open("/dev/null", O_RDWR | O_CLOEXEC);
}

XV_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct xv_context *c = calloc(1, sizeof(*c));
	struct ibv_context *ctx;

	if (!c)
		return NULL;
	c->dev = (struct xv_device *)device;
	c->x = xhca_open(c->dev->ifname);
	if (!c->x) {
		int e = errno;

		xv_log(NULL, "open %s: no xhcad session on %s: %s", device->name, c->dev->ifname,
		       xhca_errmsg(NULL));
		free(c);
		errno = e == ENOENT || e == ECONNREFUSED ? ENODEV : e;
		return NULL;
	}
	ctx = &c->vctx.context;
	ctx->device = device;
	ctx->cmd_fd = cmd_fd_open(device);
	ctx->async_fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (ctx->async_fd < 0) {
		int e = errno;

		if (ctx->cmd_fd >= 0)
			close(ctx->cmd_fd);
		xhca_close(c->x);
		free(c);
		errno = e;
		return NULL;
	}
	ctx->num_comp_vectors = 1;
	pthread_mutex_init(&ctx->mutex, NULL);
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	ctx->ops.poll_cq = xv_poll_cq;
	ctx->ops.req_notify_cq = xv_req_notify_cq;
	ctx->ops.post_send = xv_post_send;
	ctx->ops.post_recv = xv_post_recv;
	ctx->ops.post_srq_recv = xv_post_srq_recv;
	ctx->ops.alloc_mw = xv_alloc_mw;
	ctx->ops.dealloc_mw = xv_dealloc_mw;
	ctx->ops.bind_mw = xv_bind_mw;
	c->vctx.sz = sizeof(c->vctx);
	c->vctx.query_port = xv_query_port_ex;
	c->vctx.query_device_ex = xv_query_device_ex;
	c->vctx.create_cq_ex = xv_create_cq_ex;
	c->vctx.create_qp_ex = xv_create_qp_ex;
	c->vctx.create_srq_ex = xv_create_srq_ex;
	c->cm.magic = XV_CM_MAGIC;
	c->cm.call = cm_call;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->async_lock, NULL);
	c->port_up = xv_link_up(c);
	c->watch_stop = eventfd(0, EFD_CLOEXEC);
	if (c->watch_stop < 0 || pthread_create(&c->watcher, NULL, watch, c)) {
		int e = c->watch_stop < 0 ? errno : EAGAIN;

		if (c->watch_stop >= 0)
			close(c->watch_stop);
		close(ctx->async_fd);
		if (ctx->cmd_fd >= 0)
			close(ctx->cmd_fd);
		xhca_close(c->x);
		free(c);
		errno = e;
		return NULL;
	}
	return ctx;
}
XV_V11(ibv_open_device);

XV_EXPORT int ibv_close_device(struct ibv_context *ctx)
{
	struct xv_context *c = xv_ctx(ctx);
	__u64 one = 1;

	if (write(c->watch_stop, &one, sizeof(one)) == sizeof(one))
		pthread_join(c->watcher, NULL);
	close(c->watch_stop);
	/* the application's pages get their own memory back before the session
	 * (and with it the host memory under them) goes */
	xv_mem_close(c);
	xhca_close(c->x);
	close(ctx->async_fd);
	if (ctx->cmd_fd >= 0)
		close(ctx->cmd_fd);
	while (c->async_head) {
		struct xv_async *a = c->async_head;

		c->async_head = a->next;
		free(a);
	}
	free(c->mrs);
	free(c);
	return 0;
}
XV_V11(ibv_close_device);

