/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libxhca's application interface (include/xhca/xhca.h): a session on
 * xhcad's control socket for the slow operations, shared memory for the fast
 * ones. Posting a receive and polling a completion are a few loads and
 * stores on rings in host memory (include/xhca/ring.h).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <xhca/xhca.h>

#define CTL_TIMEOUT_S 10

struct xhca_cq {
	struct xhca_ctx *ctx;
	__u32 id;
	__u32 depth;
	struct xhca_ring_ctl *ring;
	struct xhca_cqe *e;
	int efd;		/* xhcad signals it when armed */
	int dbfd;		/* we ring it when xhcad waits for room */
	struct xhca_cq *next;
};

struct xhca_qp {
	struct xhca_ctx *ctx;
	__u32 qpn;
	__u32 depth;
	__u64 rq_off;
	struct xhca_ring_ctl *rq;
	struct xhca_rwqe *rqe;
	struct xhca_qp *next;
};

struct xhca_ctx {
	int fd;
	__u32 session;
	__u8 *hostmem;
	size_t hostmem_len;
	struct xhca_cq *cqs;
	struct xhca_qp *qps;
	char err[XHCA_ERRMSG_LEN];
};

extern char *program_invocation_short_name;

/* One request on the session; on failure the message is kept for
 * xhca_errmsg(). */
static int call(struct xhca_ctx *ctx, __u32 op, const void *req, __u32 len, int send_fd,
		void *resp, __u32 resp_len, int *recv_fd)
{
	void *r = NULL;
	__u32 got = 0;
	int err;

	err = xhca_ctl_call_fd(ctx->fd, op, req, len, send_fd, resp ? &r : NULL, &got, recv_fd,
			       ctx->err, sizeof(ctx->err));
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

static int in_hostmem(const struct xhca_ctx *ctx, const void *p, size_t len)
{
	const __u8 *b = p;

	return b >= ctx->hostmem && len <= ctx->hostmem_len &&
	       (size_t)(b - ctx->hostmem) <= ctx->hostmem_len - len;
}

struct xhca_ctx *xhca_open(const char *ifname)
{
	struct timeval tv = { .tv_sec = CTL_TIMEOUT_S };
	struct xhca_hello h = { .version = XHCA_SESSION_VERSION, .pid = (__u32)getpid() };
	struct xhca_hello_reply r;
	struct xhca_ctx *ctx;
	int memfd = -1, err;
	void *m;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return NULL;
	ctx->fd = xhca_ctl_connect(ifname);
	if (ctx->fd < 0) {
		err = ctx->fd;
		goto fail;
	}
	setsockopt(ctx->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(ctx->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	snprintf(h.name, sizeof(h.name), "%s", program_invocation_short_name);
	err = call(ctx, XHCA_CTL_HELLO, &h, sizeof(h), -1, &r, sizeof(r), &memfd);
	if (err)
		goto fail;
	if (memfd < 0) {
		err = -EPROTO;
		goto fail;
	}
	m = mmap(NULL, r.hostmem_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	close(memfd);
	if (m == MAP_FAILED) {
		err = -errno;
		goto fail;
	}
	ctx->hostmem = m;
	ctx->hostmem_len = r.hostmem_bytes;
	ctx->session = r.session;
	return ctx;
fail:
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
	/* xhcad frees everything of the session when the socket closes. */
	close(ctx->fd);
	while (ctx->cqs) {
		struct xhca_cq *cq = ctx->cqs;

		ctx->cqs = cq->next;
		close(cq->efd);
		close(cq->dbfd);
		free(cq);
	}
	while (ctx->qps) {
		struct xhca_qp *qp = ctx->qps;

		ctx->qps = qp->next;
		free(qp);
	}
	munmap(ctx->hostmem, ctx->hostmem_len);
	free(ctx);
}

const char *xhca_errmsg(const struct xhca_ctx *ctx)
{
	return ctx && ctx->err[0] ? ctx->err : "no error";
}

void *xhca_hostmem(const struct xhca_ctx *ctx, size_t *len)
{
	if (len)
		*len = ctx->hostmem_len;
	return ctx->hostmem;
}

void *xhca_alloc(struct xhca_ctx *ctx, size_t len)
{
	struct xhca_alloc a = { .len = len };
	int err;

	if (!len) {
		errno = EINVAL;
		return NULL;
	}
	err = call(ctx, XHCA_CTL_ALLOC, &a, sizeof(a), -1, &a, sizeof(a), NULL);
	if (err) {
		errno = -err;
		return NULL;
	}
	return ctx->hostmem + a.off;
}

int xhca_free(struct xhca_ctx *ctx, void *buf)
{
	struct xhca_alloc a = {};

	if (!in_hostmem(ctx, buf, 1)) {
		snprintf(ctx->err, sizeof(ctx->err), "free: %p is not in host memory", buf);
		return -EFAULT;
	}
	a.off = (__u64)((__u8 *)buf - ctx->hostmem);
	return call(ctx, XHCA_CTL_FREE, &a, sizeof(a), -1, NULL, 0, NULL);
}

/* ---- completion queues ----------------------------------------------------- */

struct xhca_cq *xhca_cq_create(struct xhca_ctx *ctx, unsigned int depth)
{
	struct xhca_cq_attr a = { .depth = depth };
	struct xhca_cq *cq;
	int err, dbfd = -1;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	cq->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (cq->efd < 0) {
		err = -errno;
		goto fail;
	}
	err = call(ctx, XHCA_CTL_CQ_CREATE, &a, sizeof(a), cq->efd, &a, sizeof(a), &dbfd);
	if (err)
		goto fail;
	if (dbfd < 0 || !in_hostmem(ctx, ctx->hostmem + a.ring_off, a.ring_len)) {
		err = -EPROTO;
		goto fail;
	}
	cq->ctx = ctx;
	cq->id = a.cq;
	cq->depth = a.depth;
	cq->ring = (struct xhca_ring_ctl *)(ctx->hostmem + a.ring_off);
	cq->e = (struct xhca_cqe *)(cq->ring + 1);
	cq->dbfd = dbfd;
	cq->next = ctx->cqs;
	ctx->cqs = cq;
	return cq;
fail:
	if (cq->efd >= 0)
		close(cq->efd);
	if (dbfd >= 0)
		close(dbfd);
	free(cq);
	errno = -err;
	return NULL;
}

int xhca_cq_destroy(struct xhca_cq *cq)
{
	struct xhca_ctx *ctx = cq->ctx;
	struct xhca_cq **pp;
	int err;

	err = call(ctx, XHCA_CTL_CQ_DESTROY, &cq->id, sizeof(cq->id), -1, NULL, 0, NULL);
	if (err)
		return err;
	for (pp = &ctx->cqs; *pp; pp = &(*pp)->next) {
		if (*pp == cq) {
			*pp = cq->next;
			break;
		}
	}
	close(cq->efd);
	close(cq->dbfd);
	free(cq);
	return 0;
}

int xhca_poll_cq(struct xhca_cq *cq, struct xhca_wc *wc, int n)
{
	__u32 cons = cq->ring->cons;
	__u32 prod = __atomic_load_n(&cq->ring->prod, __ATOMIC_ACQUIRE);
	int k = 0;

	while (k < n && cons != prod)
		wc[k++] = cq->e[cons++ & (cq->depth - 1)];
	if (!k)
		return 0;
	__atomic_store_n(&cq->ring->cons, cons, __ATOMIC_RELEASE);
	/* xhcad may be waiting for exactly this room (ring.h). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&cq->ring->waiting, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(&cq->ring->waiting, 0, __ATOMIC_SEQ_CST)) {
		__u64 one = 1;

		if (write(cq->dbfd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			return -errno;
	}
	return k;
}

static int cq_ready(const struct xhca_cq *cq)
{
	return __atomic_load_n(&cq->ring->prod, __ATOMIC_ACQUIRE) != cq->ring->cons;
}

int xhca_cq_fd(const struct xhca_cq *cq)
{
	return cq->efd;
}

int xhca_cq_arm(struct xhca_cq *cq)
{
	__atomic_store_n(&cq->ring->armed, 1, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return cq_ready(cq);
}

int xhca_cq_wait(struct xhca_cq *cq, int timeout_ms)
{
	struct pollfd p = { .fd = cq->efd, .events = POLLIN };
	__u64 v;
	int n;

	if (cq_ready(cq) || xhca_cq_arm(cq))
		return 1;
	if (__atomic_load_n(&cq->ring->dead, __ATOMIC_ACQUIRE))
		return -ESHUTDOWN;
	do {
		n = poll(&p, 1, timeout_ms);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n > 0 && read(cq->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	return cq_ready(cq);
}

uint64_t xhca_cq_stalls(const struct xhca_cq *cq)
{
	return cq->ring->stalls;
}

/* ---- queue pairs -------------------------------------------------------------- */

struct xhca_qp *xhca_qp_create(struct xhca_ctx *ctx, const struct xhca_qp_init_attr *attr)
{
	struct xhca_qp_attr a = {};
	struct xhca_qp *qp;
	int err;

	if (!attr->recv_cq || attr->recv_cq->ctx != ctx) {
		snprintf(ctx->err, sizeof(ctx->err), "qp create: recv_cq must be a CQ of this "
			 "session");
		errno = EINVAL;
		return NULL;
	}
	a.type = attr->type;
	a.qpn = attr->qpn;
	a.pkey = attr->pkey;
	a.qkey = attr->qkey;
	if (attr->flowq >= 0) {
		if (attr->flowq >= XHCA_FLOWQ_MAX) {
			snprintf(ctx->err, sizeof(ctx->err), "qp create: flow queue %d is out of "
				 "range (0..%d)", attr->flowq, XHCA_FLOWQ_MAX - 1);
			errno = EINVAL;
			return NULL;
		}
		a.flowq = (__u8)attr->flowq;
		a.mask |= XHCA_QPA_FLOWQ;
	}
	a.cq = attr->recv_cq->id;
	a.rq_depth = attr->rq_depth;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	err = call(ctx, XHCA_CTL_QP_CREATE, &a, sizeof(a), -1, &a, sizeof(a), NULL);
	if (!err && !in_hostmem(ctx, ctx->hostmem + a.rq_off,
				xhca_ring_bytes(a.rq_depth, sizeof(struct xhca_rwqe))))
		err = -EPROTO;
	if (err) {
		free(qp);
		errno = -err;
		return NULL;
	}
	qp->ctx = ctx;
	qp->qpn = a.qpn;
	qp->depth = a.rq_depth;
	qp->rq_off = a.rq_off;
	qp->rq = (struct xhca_ring_ctl *)(ctx->hostmem + a.rq_off);
	qp->rqe = (struct xhca_rwqe *)(qp->rq + 1);
	qp->next = ctx->qps;
	ctx->qps = qp;
	return qp;
}

uint32_t xhca_qp_num(const struct xhca_qp *qp)
{
	return qp->qpn;
}

int xhca_qp_modify(struct xhca_qp *qp, struct xhca_qp_attr *attr)
{
	attr->qpn = qp->qpn;
	return call(qp->ctx, XHCA_CTL_QP_MODIFY, attr, sizeof(*attr), -1, attr, sizeof(*attr),
		    NULL);
}

int xhca_qp_query(struct xhca_qp *qp, struct xhca_qp_attr *attr)
{
	struct xhca_qp_info qi;
	int err;

	err = call(qp->ctx, XHCA_CTL_QP_SHOW, &qp->qpn, sizeof(qp->qpn), -1, &qi, sizeof(qi),
		   NULL);
	if (!err)
		*attr = qi.attr;
	return err;
}

int xhca_qp_destroy(struct xhca_qp *qp)
{
	struct xhca_ctx *ctx = qp->ctx;
	struct xhca_qp **pp;
	int err;

	err = call(ctx, XHCA_CTL_QP_DESTROY, &qp->qpn, sizeof(qp->qpn), -1, NULL, 0, NULL);
	if (err == -ENOENT && __atomic_load_n(&qp->rq->dead, __ATOMIC_ACQUIRE)) {
		/* Destroyed by someone else: its ring is still ours to free. */
		struct xhca_alloc a = { .off = qp->rq_off };

		err = call(ctx, XHCA_CTL_FREE, &a, sizeof(a), -1, NULL, 0, NULL);
	}
	if (err)
		return err;
	for (pp = &ctx->qps; *pp; pp = &(*pp)->next) {
		if (*pp == qp) {
			*pp = qp->next;
			break;
		}
	}
	free(qp);
	return 0;
}

int xhca_post_recv(struct xhca_qp *qp, uint64_t wr_id, void *addr, uint32_t len)
{
	struct xhca_ctx *ctx = qp->ctx;
	__u32 prod = qp->rq->prod, cons;
	struct xhca_rwqe *w;

	if (__atomic_load_n(&qp->rq->dead, __ATOMIC_ACQUIRE))
		return -ESHUTDOWN;
	if (!len || !in_hostmem(ctx, addr, len))
		return -EFAULT;
	cons = __atomic_load_n(&qp->rq->cons, __ATOMIC_ACQUIRE);
	if (prod - cons >= qp->depth)
		return -ENOMEM;
	w = &qp->rqe[prod & (qp->depth - 1)];
	w->wr_id = wr_id;
	w->addr = (__u64)((__u8 *)addr - ctx->hostmem);
	w->len = len;
	__atomic_store_n(&qp->rq->prod, prod + 1, __ATOMIC_RELEASE);
	return 0;
}
