/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libxhca's sessions (xhca_int.h): one on xhcad's control socket for each
 * xhca_open, a request at a time on it, taken again when xhcad restarted;
 * xhca_close frees all of it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include "xhca_int.h"

#define CTL_TIMEOUT_S 10
#define RESUME_WAIT_MS 10000	/* how long a restarting xhcad may take to come back */

extern char *program_invocation_short_name;

static void set_timeouts(int fd)
{
	struct timeval tv = { .tv_sec = CTL_TIMEOUT_S };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/*
 * xhcad went away (a restart with --keep, or a crash): wait for it to come
 * back and take the session again. Everything of the session is where it
 * was (host memory, regions, CQs, QPs); only the CQs' eventfds need to be
 * sent again. Returns 0, or -errno with the reason in ctx->err.
 */
int xl_resume(struct xhca_ctx *ctx)
{
	struct xhca_hello h = { .version = XHCA_SESSION_VERSION, .pid = (__u32)getpid(),
				.resume = ctx->session };
	__u64 until = now_ms() + RESUME_WAIT_MS;
	void *rp = NULL;
	__u32 got = 0;
	int fd, err;

	for (;;) {
		fd = xhca_ctl_connect(ctx->ifname);
		if (fd >= 0 || (fd != -ENOENT && fd != -ECONNREFUSED) || now_ms() >= until)
			break;
		usleep(50000);
	}
	if (fd < 0) {
		snprintf(ctx->err, sizeof(ctx->err), "xhcad for %s went away and did not come "
			 "back: %s", ctx->ifname, strerror(-fd));
		return fd;
	}
	set_timeouts(fd);
	snprintf(h.name, sizeof(h.name), "%s", program_invocation_short_name);
	/* (the blocks are the same maps: the pinned xhca_hostmem kept them) */
	err = xhca_ctl_call_fd(fd, XHCA_CTL_HELLO, &h, sizeof(h), -1, &rp, &got, NULL, ctx->err,
			       sizeof(ctx->err));
	free(rp);
	if (err) {
		close(fd);
		return err;
	}
	close(ctx->fd);
	ctx->fd = fd;
	for (struct xhca_cq *cq = ctx->cqs; cq; cq = cq->next) {
		err = xhca_ctl_call_fd(fd, XHCA_CTL_CQ_REBIND, &cq->id, sizeof(cq->id), cq->efd, NULL,
				       NULL, NULL, ctx->err, sizeof(ctx->err));
		if (err)
			return err;
	}
	if (ctx->sq_dbfd >= 0)
		return xhca_ctl_call_fd(fd, XHCA_CTL_SQ_DOORBELL, NULL, 0, ctx->sq_dbfd, NULL, NULL,
					NULL, ctx->err, sizeof(ctx->err));
	return 0;
}

/* One request on the session; on failure the message is kept for
 * xhca_errmsg(). A session whose xhcad restarted is resumed first. */
int xl_call(struct xhca_ctx *ctx, __u32 op, const void *req, __u32 len, int send_fd,
	    void *resp, __u32 resp_len, int *recv_fd)
{
	void *r = NULL;
	__u32 got = 0;
	int err;

	pthread_mutex_lock(&ctx->call_lock);
	err = xhca_ctl_call_fd(ctx->fd, op, req, len, send_fd, resp ? &r : NULL, &got, recv_fd,
			       ctx->err, sizeof(ctx->err));
	if (conn_lost(err) && ctx->session && !xl_resume(ctx))
		err = xhca_ctl_call_fd(ctx->fd, op, req, len, send_fd, resp ? &r : NULL, &got,
				       recv_fd, ctx->err, sizeof(ctx->err));
	pthread_mutex_unlock(&ctx->call_lock);
	if (!err && resp && got < resp_len) {
		snprintf(ctx->err, sizeof(ctx->err), "reply of %u bytes, expected %u: libxhca and "
			 "xhcad versions differ", got, resp_len);
		err = -EPROTO;
	}
	if (!err && resp)
		memcpy(resp, r, resp_len);
	else if (err && !ctx->err[0])
		snprintf(ctx->err, sizeof(ctx->err), "xhcad: %s", strerror(-err));
	free(r);
	if (err && recv_fd && *recv_fd >= 0) {
		close(*recv_fd);
		*recv_fd = -1;
	}
	return err;
}

int xhca_session_call(struct xhca_ctx *ctx, __u32 op, const void *req, __u32 len, int send_fd,
		      void *resp, __u32 resp_len, int *recv_fd)
{
	return xl_call(ctx, op, req, len, send_fd, resp, resp_len, recv_fd);
}

int xl_fail(struct xhca_ctx *ctx, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->err, sizeof(ctx->err), fmt, ap);
	va_end(ap);
	return err;
}

int xhca_max_path_mtu(const struct xhca_ctx *ctx)
{
	return (int)ctx->max_mtu;
}

/* Why the calling thread's last xhca_open failed (xhca_errmsg(NULL)). */
static __thread char open_err[XHCA_ERRMSG_LEN];

static void open_failed(const struct xhca_ctx *ctx, const char *ifname, int err, int connected)
{
	if (connected && ctx->err[0])
		snprintf(open_err, sizeof(open_err), "open: %.240s", ctx->err);
	else if (!connected)
		snprintf(open_err, sizeof(open_err),
			 "open: no xhcad answers on %s (%s/%s.sock: %s); is it running (xhcad %s)?",
			 ifname, XHCA_RUN_DIR, ifname, strerror(-err), ifname);
	else if (err == -EPROTO)
		snprintf(open_err, sizeof(open_err),
			 "open: xhcad on %s has another host memory layout; libxhca and xhcad of "
			 "one release are needed", ifname);
	else
		snprintf(open_err, sizeof(open_err), "open: %s", strerror(-err));
}

struct xhca_ctx *xhca_open(const char *ifname)
{
	struct xhca_hello h = { .version = XHCA_SESSION_VERSION, .pid = (__u32)getpid() };
	struct xhca_hello_reply r;
	struct xhca_ctx *ctx;
	int err;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return NULL;
	ctx->sq_dbfd = -1;
	pthread_mutex_init(&ctx->call_lock, NULL);
	pthread_mutex_init(&ctx->block_lock, NULL);
	snprintf(ctx->ifname, sizeof(ctx->ifname), "%s", ifname);
	ctx->fd = xhca_ctl_connect(ifname);
	if (ctx->fd < 0) {
		err = ctx->fd;
		goto fail;
	}
	set_timeouts(ctx->fd);
	snprintf(h.name, sizeof(h.name), "%s", program_invocation_short_name);
	err = xl_call(ctx, XHCA_CTL_HELLO, &h, sizeof(h), -1, &r, sizeof(r), NULL);
	if (err)
		goto fail;
	ctx->nblocks = (__u32)(r.hostmem_bytes / XHCA_PAGE_SIZE / XHCA_BLOCK_PAGES);
	ctx->max_mtu = r.max_mtu;
	if (r.block_pages != XHCA_BLOCK_PAGES || r.page_size != XHCA_PAGE_SIZE || !ctx->nblocks) {
		err = -EPROTO;
		goto fail;
	}
	ctx->bfd = malloc(ctx->nblocks * sizeof(*ctx->bfd));
	if (!ctx->bfd) {
		err = -ENOMEM;
		goto fail;
	}
	for (__u32 b = 0; b < ctx->nblocks; b++)
		ctx->bfd[b] = -1;
	ctx->session = r.session;
	open_err[0] = '\0';
	return ctx;
fail:
	open_failed(ctx, ifname, err, ctx->fd >= 0);
	if (ctx->fd >= 0)
		close(ctx->fd);
	free(ctx);
	errno = -err;
	return NULL;
}

void xhca_close(struct xhca_ctx *ctx)
{
	if (!ctx)
		return;
	pthread_mutex_lock(&xl_sessions_lock);
	for (struct xhca_ctx **pp = &xl_sessions; *pp; pp = &(*pp)->next_session)
		if (*pp == ctx) {
			*pp = ctx->next_session;
			break;
		}
	pthread_mutex_unlock(&xl_sessions_lock);
	for (__u32 i = 0; i < ctx->nbufs; i++) {
		/* before the session ends (xhcad frees its host memory):
		 * the application's own pages get their bytes back, not a hole */
		if (ctx->bufs[i].adopted)
			xl_unadopt_pages(&ctx->bufs[i]);
		else
			sys_munmap(ctx->bufs[i].va, ctx->bufs[i].len);
	}
	/* xhcad frees everything of the session when the socket closes. */
	close(ctx->fd);
	while (ctx->cqs) {
		struct xhca_cq *cq = ctx->cqs;

		ctx->cqs = cq->next;
		close(cq->efd);
		close(cq->dbfd);
		sys_munmap(cq->ring, cq->ring_len);
		free(cq);
	}
	while (ctx->qps) {
		struct xhca_qp *qp = ctx->qps;

		ctx->qps = qp->next;
		if (qp->rq.ctl)
			sys_munmap(qp->rq.ctl, qp->rq_len);
		if (qp->sq)
			sys_munmap(qp->sq, qp->sq_len);
		free(qp);
	}
	while (ctx->srqs) {
		struct xhca_srq *q = ctx->srqs;

		ctx->srqs = q->next;
		sys_munmap(q->rq.ctl, q->len);
		free(q);
	}
	if (ctx->sq_dbfd >= 0)
		close(ctx->sq_dbfd);
	while (ctx->mrs) {
		struct xhca_mr *mr = ctx->mrs;

		ctx->mrs = mr->next;
		free(mr);
	}
	while (ctx->pds) {
		struct xhca_pd *pd = ctx->pds;

		ctx->pds = pd->next;
		free(pd);
	}
	free(ctx->bufs);
	free(ctx->joined);
	for (__u32 b = 0; b < ctx->nblocks; b++)
		if (ctx->bfd[b] >= 0)
			close(ctx->bfd[b]);
	free(ctx->bfd);
	free(ctx);
}

const char *xhca_errmsg(const struct xhca_ctx *ctx)
{
	if (!ctx)
		return open_err[0] ? open_err : "no error";
	return ctx->err[0] ? ctx->err : "no error";
}
