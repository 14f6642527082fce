/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Completion queues and completion channels. A CQ is a libxhca CQ: a ring
 * in shared memory that xhcad writes and ibv_poll_cq reads, no system call
 * per completion. A completion channel is an epoll descriptor holding the
 * eventfds of its CQs, so its fd works with poll/epoll as a real channel's
 * does; ibv_req_notify_cq arms the CQ's eventfd (xhca_cq_arm).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include "xverbs.h"

static struct xv_cq *xcq(struct ibv_cq *cq)
{
	return (struct xv_cq *)cq;
}

XV_EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *ctx)
{
	struct ibv_comp_channel *ch = calloc(1, sizeof(*ch));

	if (!ch)
		return NULL;
	ch->context = ctx;
	ch->fd = epoll_create1(EPOLL_CLOEXEC);
	if (ch->fd < 0) {
		int e = errno;

		free(ch);
		errno = e;
		return NULL;
	}
	return ch;
}

XV_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *ch)
{
	if (__atomic_load_n(&ch->refcnt, __ATOMIC_ACQUIRE)) {
		errno = EBUSY;
		return EBUSY; /* CQs still use it */
	}
	close(ch->fd);
	free(ch);
	return 0;
}

/* XHCA_VERBS_PROXY=1 (xhca exec --proxy): every CQ is a proxy CQ for its
 * receive completions (US 9,069,633: the CLI can then make the program's
 * QPs proxy QPs and give them filters) and an ordinary one beside it for
 * its send completions, which a proxy CQ does not take. */
static int proxy_mode(void)
{
	const char *v = getenv("XHCA_VERBS_PROXY");

	return v && *v && strcmp(v, "0");
}

static void cq_free(struct xv_context *c, struct xv_cq *q)
{
	pthread_mutex_lock(&c->lock);
	if (q->x)
		xhca_cq_destroy(q->x);
	if (q->xs)
		xhca_cq_destroy(q->xs);
	pthread_mutex_unlock(&c->lock);
	free(q);
}

/* ts: the application reads completions' times (ibv_create_cq_ex with
 * IBV_WC_EX_WITH_COMPLETION_TIMESTAMP); else xhca_rx writes none
 * (XHCA_CQF_NO_TS). */
static struct xv_cq *cq_new(struct ibv_context *ctx, int cqe, void *cq_context,
			    struct ibv_comp_channel *ch, int ts)
{
	unsigned int nts = ts ? 0 : XHCA_CQF_NO_TS;
	struct xv_context *c = xv_ctx(ctx);
	uint32_t depth = xv_pow2((uint32_t)cqe);
	struct xv_cq *q;
	int e;

	if (cqe < 1 || (uint32_t)cqe > XHCA_CQ_DEPTH_MAX) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	pthread_mutex_lock(&c->lock);
	if (proxy_mode()) {
		q->x = xhca_cq_create_ex(c->x, depth, XHCA_CQF_PROXY | nts);
		q->xs = q->x ? xhca_cq_create_ex(c->x, depth, nts) : NULL;
	} else {
		q->x = xhca_cq_create_ex(c->x, depth, nts);
	}
	pthread_mutex_unlock(&c->lock);
	if (!q->x || (proxy_mode() && !q->xs)) {
		e = errno;
		xv_log(c, "create cq of %d", cqe);
		goto fail;
	}
	if (ch) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = q };

		if (epoll_ctl(ch->fd, EPOLL_CTL_ADD, xhca_cq_fd(q->x), &ev) ||
		    (q->xs && epoll_ctl(ch->fd, EPOLL_CTL_ADD, xhca_cq_fd(q->xs), &ev))) {
			e = errno;
			goto fail;
		}
		__atomic_add_fetch(&ch->refcnt, 1, __ATOMIC_ACQ_REL);
	}
	q->ex.context = ctx;
	q->ex.channel = ch;
	q->ex.cq_context = cq_context;
	q->ex.cqe = (int)depth;
	pthread_mutex_init(&q->ex.mutex, NULL);
	pthread_cond_init(&q->ex.cond, NULL);
	pthread_spin_init(&q->lock, PTHREAD_PROCESS_PRIVATE);
	xv_cq_ex_init(q);
	pthread_mutex_lock(&c->lock);
	q->next = c->cqs;
	c->cqs = q;
	pthread_mutex_unlock(&c->lock);
	return q;
fail:
	cq_free(c, q);
	errno = e;
	return NULL;
}

XV_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
				       struct ibv_comp_channel *channel, int comp_vector)
{
	struct xv_cq *q;

	if (comp_vector < 0 || comp_vector >= ctx->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	q = cq_new(ctx, cqe, cq_context, channel, 0); /* (struct ibv_wc has no time) */
	return q ? ibv_cq_ex_to_cq(&q->ex) : NULL;
}
XV_V11(ibv_create_cq);

/* A new ring in host memory, the completions not polled yet moved there
 * (xhca_cq_resize). Too small for them: EINVAL, as rxe. A proxy mode CQ
 * keeps its size (the proxy thread writes its ring). */
XV_EXPORT int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	struct xv_context *c = xv_ctx(cq->context);
	struct xv_cq *q = xcq(cq);
	uint32_t depth;
	int err;

	if (cqe < 1 || (uint32_t)cqe > XHCA_CQ_DEPTH_MAX)
		return EINVAL;
	if (q->xs)
		return EOPNOTSUPP;
	depth = xv_pow2((uint32_t)cqe);
	pthread_spin_lock(&q->lock);
	pthread_mutex_lock(&c->lock);
	err = depth == (uint32_t)q->ex.cqe ? 0 : xhca_cq_resize(q->x, depth);
	pthread_mutex_unlock(&c->lock);
	if (!err)
		q->ex.cqe = (int)depth;
	pthread_spin_unlock(&q->lock);
	if (err) {
		xv_log(c, "resize cq to %d", cqe);
		return xv_errno(err);
	}
	return 0;
}
XV_V11(ibv_resize_cq);

/* A QP reset: its completions not polled yet leave the CQ (as mlx5's
 * provider cleans its CQs; RXE's flushes would come later, if at all), so
 * a QP brought up again does not poll what its error left. */
void xv_cq_clean(struct ibv_cq *cq, uint32_t qpn)
{
	struct xv_cq *q = xcq(cq);

	pthread_spin_lock(&q->lock);
	xhca_cq_clean(q->x, qpn);
	if (q->xs)
		xhca_cq_clean(q->xs, qpn);
	pthread_spin_unlock(&q->lock);
}

XV_EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct xv_context *c = xv_ctx(cq->context);
	struct xv_cq *q = xcq(cq);
	int err;

	pthread_mutex_lock(&c->lock);
	err = xhca_cq_destroy(q->x);
	if (!err && q->xs)
		err = xhca_cq_destroy(q->xs);
	for (struct xv_cq **pp = &c->cqs; !err && *pp; pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	pthread_mutex_unlock(&c->lock);
	if (err) {
		xv_log(c, "destroy cq");
		return xv_errno(err); /* EBUSY: QPs still use it */
	}
	if (cq->channel)
		__atomic_sub_fetch(&cq->channel->refcnt, 1, __ATOMIC_ACQ_REL);
	/* as libibverbs: wait until every event handed out is acknowledged */
	pthread_mutex_lock(&cq->mutex);
	while (cq->comp_events_completed != q->events)
		pthread_cond_wait(&cq->cond, &cq->mutex);
	pthread_mutex_unlock(&cq->mutex);
	free(q);
	return 0;
}
XV_V11(ibv_destroy_cq);

XV_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **cq_context)
{
	int nonblock = fcntl(ch->fd, F_GETFL) & O_NONBLOCK;

	for (;;) {
		struct epoll_event ev;
		struct xv_cq *q;
		__u64 v;
		int got, n = epoll_wait(ch->fd, &ev, 1, nonblock ? 0 : -1);

		if (n < 0)
			return -1;
		if (!n) {
			errno = EAGAIN;
			return -1;
		}
		q = ev.data.ptr;
		/* both eventfds of a proxy mode CQ: one event for the CQ */
		got = read(xhca_cq_fd(q->x), &v, sizeof(v)) == sizeof(v);
		if (q->xs)
			got |= read(xhca_cq_fd(q->xs), &v, sizeof(v)) == sizeof(v);
		if (!got)
			continue; /* taken by another thread meanwhile */
		pthread_mutex_lock(&q->ex.mutex);
		q->events++;
		pthread_mutex_unlock(&q->ex.mutex);
		*cq = ibv_cq_ex_to_cq(&q->ex);
		*cq_context = q->ex.cq_context;
		return 0;
	}
}
XV_V11(ibv_get_cq_event);

XV_EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_broadcast(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}
XV_V11(ibv_ack_cq_events);

int xv_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	struct xv_cq *q = xcq(cq);

	/* Solicited-only is treated as every completion: more events than
	 * asked for, which the verbs allow (an event means "poll"). */
	for (int i = 0; i < 2; i++) {
		struct xhca_cq *x = i ? q->xs : q->x;
		__u64 one = 1;

		/* completions are there already: as a real HCA, which raises
		 * the event when the CQ holds entries beyond the consumer, the
		 * channel hears of them now */
		if (x && xhca_cq_arm(x) == 1 && write(xhca_cq_fd(x), &one, sizeof(one)) < 0 &&
		    errno != EAGAIN)
			return errno;
	}
	return 0;
}

static void to_wc(const struct xhca_wc *x, struct ibv_wc *w)
{
	w->wr_id = x->wr_id;
	w->status = (enum ibv_wc_status)x->status;
	w->opcode = (enum ibv_wc_opcode)x->opcode;
	w->vendor_err = x->vendor_err;
	w->byte_len = x->byte_len;
	w->imm_data = x->imm_data;	/* or invalidated_rkey */
	w->qp_num = x->qp_num;
	w->src_qp = x->src_qp;
	w->wc_flags = x->wc_flags & (IBV_WC_GRH | IBV_WC_WITH_IMM | IBV_WC_WITH_INV);
	w->pkey_index = x->pkey_index;
	w->slid = 0;
	w->sl = x->sl;
	w->dlid_path_bits = 0;
}

/* Up to n completions: the CQ's, then (proxy mode) its send part's. */
static int poll_both(struct xv_cq *q, struct xhca_wc *x, int n)
{
	int k = xhca_poll_cq(q->x, x, n), k2;

	if (k < 0 || k == n || !q->xs)
		return k;
	k2 = xhca_poll_cq(q->xs, x + k, n - k);
	return k2 < 0 ? (k ? k : k2) : k + k2;
}

int xv_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct xv_cq *q = xcq(cq);
	struct xhca_wc x[16];
	int got = 0;

	if (n < 0)
		return -1;
	pthread_spin_lock(&q->lock);
	while (got < n) {
		int want = n - got < 16 ? n - got : 16;
		int k = poll_both(q, x, want);

		if (k <= 0) {
			if (k < 0 && !got)
				got = -1;
			break;
		}
		for (int i = 0; i < k; i++)
			to_wc(&x[i], &wc[got + i]);
		got += k;
		if (k < want)
			break;
	}
	pthread_spin_unlock(&q->lock);
	if (got > 0 && __atomic_load_n(&xv_ctx(cq->context)->srq_armed, __ATOMIC_RELAXED))
		xv_srq_check(xv_ctx(cq->context));
	return got;
}

/* ---- the extended CQ (ibv_create_cq_ex, ibv_start_poll ...) -------------- */

#define XV_WC_EX_FLAGS (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM | \
			IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | \
			IBV_WC_EX_WITH_DLID_PATH_BITS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)

static struct xv_cq *xcq_ex(struct ibv_cq_ex *cq)
{
	return (struct xv_cq *)cq;
}

static const struct xhca_wc *cur(struct ibv_cq_ex *cq)
{
	struct xv_cq *q = xcq_ex(cq);

	return &q->batch[q->cur];
}

static void set_current(struct xv_cq *q)
{
	q->ex.wr_id = q->batch[q->cur].wr_id;
	q->ex.status = (enum ibv_wc_status)q->batch[q->cur].status;
}

static int fill(struct xv_cq *q)
{
	int k = poll_both(q, q->batch, 16);

	if (k <= 0)
		return k < 0 ? EIO : ENOENT;
	q->nbatch = k;
	q->cur = 0;
	set_current(q);
	return 0;
}

static int start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	struct xv_cq *q = xcq_ex(cq);
	int err;

	if (attr && attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&q->lock);
	err = fill(q); /* an empty poll may yield the CPU (libxhca's xhca_poll_cq) */
	if (err)
		pthread_spin_unlock(&q->lock); /* ENOENT: no end_poll follows */
	return err;
}

static int next_poll(struct ibv_cq_ex *cq)
{
	struct xv_cq *q = xcq_ex(cq);

	if (++q->cur < q->nbatch) {
		set_current(q);
		return 0;
	}
	return fill(q);
}

static void end_poll(struct ibv_cq_ex *cq)
{
	pthread_spin_unlock(&xcq_ex(cq)->lock);
}

static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *cq)
{
	return (enum ibv_wc_opcode)cur(cq)->opcode;
}

static uint32_t read_vendor_err(struct ibv_cq_ex *cq)
{
	return cur(cq)->vendor_err;
}

static uint32_t read_byte_len(struct ibv_cq_ex *cq)
{
	return cur(cq)->byte_len;
}

static __be32 read_imm_data(struct ibv_cq_ex *cq)
{
	return cur(cq)->imm_data;
}

static uint32_t read_qp_num(struct ibv_cq_ex *cq)
{
	return cur(cq)->qp_num;
}

static uint32_t read_src_qp(struct ibv_cq_ex *cq)
{
	return cur(cq)->src_qp;
}

static unsigned int read_wc_flags(struct ibv_cq_ex *cq)
{
	return cur(cq)->wc_flags & (IBV_WC_GRH | IBV_WC_WITH_IMM | IBV_WC_WITH_INV);
}

static uint32_t read_slid(struct ibv_cq_ex *cq)
{
	return 0;
}

static uint8_t read_sl(struct ibv_cq_ex *cq)
{
	return cur(cq)->sl;
}

static uint8_t read_dlid_path_bits(struct ibv_cq_ex *cq)
{
	return 0;
}

/* The completion's time in the device's clock: nanoseconds of
 * CLOCK_MONOTONIC (ibv_query_rt_values reports the same clock). */
static uint64_t read_completion_ts(struct ibv_cq_ex *cq)
{
	return cur(cq)->rx_ns;
}

void xv_cq_ex_init(struct xv_cq *q)
{
	q->ex.start_poll = start_poll;
	q->ex.next_poll = next_poll;
	q->ex.end_poll = end_poll;
	q->ex.read_opcode = read_opcode;
	q->ex.read_vendor_err = read_vendor_err;
	q->ex.read_byte_len = read_byte_len;
	q->ex.read_imm_data = read_imm_data;
	q->ex.read_qp_num = read_qp_num;
	q->ex.read_src_qp = read_src_qp;
	q->ex.read_wc_flags = read_wc_flags;
	q->ex.read_slid = read_slid;
	q->ex.read_sl = read_sl;
	q->ex.read_dlid_path_bits = read_dlid_path_bits;
	q->ex.read_completion_ts = read_completion_ts;
}

struct ibv_cq_ex *xv_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *a)
{
	struct xv_cq *q;

	if (a->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD) ||
	    (a->wc_flags & ~(uint64_t)XV_WC_EX_FLAGS) ||
	    ((a->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (a->flags & ~(uint32_t)(IBV_CREATE_CQ_ATTR_SINGLE_THREADED |
				     IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN)))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (a->comp_vector >= (uint32_t)ctx->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	q = cq_new(ctx, (int)a->cqe, a->cq_context, a->channel,
		   !!(a->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP));
	if (!q)
		return NULL;
	q->wc_flags = (uint32_t)a->wc_flags;
	return &q->ex;
}
