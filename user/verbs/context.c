/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Contexts: ibv_open_device opens a libxhca session on the device's
 * interface and fills the context's operations, which the static inline
 * verbs of <infiniband/verbs.h> call through (ibv_poll_cq, ibv_post_send,
 * ibv_query_port, ibv_create_cq_ex, ...). The top of the library's layers:
 * it names the functions of every other file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include "xverbs.h"

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
		       strerror(e));
		free(c);
		errno = e == ENOENT || e == ECONNREFUSED ? ENODEV : e;
		return NULL;
	}
	ctx = &c->vctx.context;
	ctx->device = device;
	ctx->cmd_fd = -1;
	ctx->async_fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (ctx->async_fd < 0) {
		int e = errno;

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
	c->vctx.sz = sizeof(c->vctx);
	c->vctx.query_port = xv_query_port_ex;
	c->vctx.query_device_ex = xv_query_device_ex;
	c->vctx.create_cq_ex = xv_create_cq_ex;
	c->vctx.create_qp_ex = xv_create_qp_ex;
	c->vctx.create_srq_ex = xv_create_srq_ex;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->async_lock, NULL);
	pthread_mutex_lock(&xv_contexts_lock);
	c->next = xv_contexts;
	xv_contexts = c;
	pthread_mutex_unlock(&xv_contexts_lock);
	return ctx;
}
XV_V11(ibv_open_device);

XV_EXPORT int ibv_close_device(struct ibv_context *ctx)
{
	struct xv_context *c = xv_ctx(ctx), **pp;

	pthread_mutex_lock(&xv_contexts_lock);
	for (pp = &xv_contexts; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	pthread_mutex_unlock(&xv_contexts_lock);
	/* the application's pages get their own memory back before the session
	 * (and with it the host memory under them) goes */
	xv_mem_close(c);
	xhca_close(c->x);
	close(ctx->async_fd);
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

