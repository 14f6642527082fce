/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Queue pairs, address handles, multicast: ibv_create_qp makes a libxhca QP
 * with a send and a receive queue in shared memory; ibv_modify_qp checks the
 * man page's state rules (required and allowed attributes of each
 * transition, as the kernel's ib_modify_qp_is_ok) and gives xhcad the
 * attributes in one modify; posting writes the rings directly. A RoCE
 * address is a GID: the remote GID is the peer's IP address, the source GID
 * index one of the interface's addresses (device.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <xhca/pkt.h>
#include <xhca/wire.h>
#include "xverbs.h"

static struct xv_qp *xqp(struct ibv_qp *qp)
{
	return (struct xv_qp *)qp;
}

static uint8_t xtype(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? XHCA_QPT_RC : t == IBV_QPT_UC ? XHCA_QPT_UC : XHCA_QPT_UD;
}

/* The port's active MTU as a shift (UD QPs: their packets' limit). */
static uint8_t port_mtu_shift(struct xv_context *c)
{
	return (uint8_t)(xv_port_mtu(c) + 7);
}

#define XV_QP_CREATE_FLAGS IBV_QP_CREATE_BLOCK_SELF_MCAST_LB
#define XV_SEND_OPS (IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
		     IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
		     IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
		     IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_SEND_WITH_INV | \
		     IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_ATOMIC_WRITE)

static int check_init_attr(struct xv_context *c, const struct ibv_qp_init_attr_ex *a)
{
	if (a->qp_type != IBV_QPT_RC && a->qp_type != IBV_QPT_UC && a->qp_type != IBV_QPT_UD) {
		xv_log(c, "create qp: type %d: only RC, UC and UD", a->qp_type);
		return EOPNOTSUPP;
	}
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || !a->pd || !a->send_cq || !a->recv_cq)
		return EINVAL;
	if (a->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS |
				       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		return EOPNOTSUPP;
	if ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    (a->create_flags & ~(uint32_t)XV_QP_CREATE_FLAGS))
		return EOPNOTSUPP;
	if ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (a->send_ops_flags & ~(uint64_t)XV_SEND_OPS))
		return EOPNOTSUPP;
	if (a->cap.max_send_wr > XHCA_RING_DEPTH_MAX / 2 ||
	    a->cap.max_recv_wr > XHCA_RING_DEPTH_MAX / 2 || a->cap.max_send_sge > XV_MAX_SGE ||
	    a->cap.max_recv_sge > XV_MAX_SGE || a->cap.max_inline_data > XV_MAX_INLINE) {
		xv_log(c, "create qp: capabilities over the device's (ibv_devinfo -v)");
		return EINVAL;
	}
	if (a->srq && a->qp_type == IBV_QPT_UC)
		return EINVAL;
	return 0;
}

struct ibv_qp *xv_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a)
{
	struct xv_context *c = xv_ctx(ctx);
	struct xhca_qp_init_attr xa = { .flowq = -1 };
	struct xv_qp *q;
	int err = check_init_attr(c, a);

	if (err) {
		errno = err;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	xa.type = xtype(a->qp_type);
	xa.pd = ((struct xv_pd *)a->pd)->x;
	xa.recv_cq = ((struct xv_cq *)a->recv_cq)->x;
	xa.send_cq = ((struct xv_cq *)a->send_cq)->xs ? ((struct xv_cq *)a->send_cq)->xs
						       : ((struct xv_cq *)a->send_cq)->x;
	xa.rq_depth = xv_pow2(a->cap.max_recv_wr ? a->cap.max_recv_wr : 1);
	xa.srq = a->srq ? ((struct xv_srq *)a->srq)->x : NULL;
	xa.rq_sge = a->cap.max_recv_sge;
	xa.sq_depth = xv_pow2(a->cap.max_send_wr ? a->cap.max_send_wr : 1);
	if ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    (a->create_flags & IBV_QP_CREATE_BLOCK_SELF_MCAST_LB))
		xa.create_flags |= XHCA_QP_CREATE_BLOCK_SELF_MCAST_LB;
	pthread_mutex_lock(&c->lock);
	q->x = xhca_qp_create(c->x, &xa);
	if (!q->x) {
		err = errno;
		xv_log(c, "create qp");
		goto fail;
	}
	if (a->cap.max_inline_data) {
		q->inl_slot = (a->cap.max_inline_data + 63) & ~63u;
		q->inl = xhca_alloc(c->x, (size_t)q->inl_slot * xa.sq_depth);
		if (!q->inl) {
			err = errno;
			goto fail;
		}
	}
	q->next = c->qps;
	c->qps = q;
	pthread_mutex_unlock(&c->lock);
	q->cap.max_send_wr = xa.sq_depth;
	q->cap.max_recv_wr = a->srq ? 0 : xa.rq_depth;
	q->cap.max_send_sge = a->cap.max_send_sge;
	q->cap.max_recv_sge = a->srq ? 0 : a->cap.max_recv_sge;
	q->cap.max_inline_data = q->inl_slot;
	a->cap = q->cap;
	q->sq_sig_all = a->sq_sig_all;
	q->ex.qp_base.context = ctx;
	q->ex.qp_base.qp_context = a->qp_context;
	q->ex.qp_base.pd = a->pd;
	q->ex.qp_base.send_cq = a->send_cq;
	q->ex.qp_base.recv_cq = a->recv_cq;
	q->ex.qp_base.srq = a->srq;
	q->ex.qp_base.qp_num = xhca_qp_num(q->x);
	q->ex.qp_base.handle = q->ex.qp_base.qp_num;
	q->ex.qp_base.state = IBV_QPS_RESET;
	q->ex.qp_base.qp_type = a->qp_type;
	pthread_mutex_init(&q->ex.qp_base.mutex, NULL);
	pthread_cond_init(&q->ex.qp_base.cond, NULL);
	pthread_spin_init(&q->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&q->rq_lock, PTHREAD_PROCESS_PRIVATE);
	q->attr.qp_state = IBV_QPS_RESET;
	q->attr.cap = q->cap;
	q->attr.port_num = 1;
	if (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		xv_wr_init(q);
	return &q->ex.qp_base;
fail:
	if (q->x)
		xhca_qp_destroy(q->x);
	pthread_mutex_unlock(&c->lock);
	free(q);
	errno = err;
	return NULL;
}

XV_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
	struct ibv_qp_init_attr_ex ex = {};
	struct ibv_qp *qp;

	memcpy(&ex, a, sizeof(*a));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	qp = xv_create_qp_ex(pd->context, &ex);
	if (qp)
		a->cap = ex.cap;
	return qp;
}
XV_V11(ibv_create_qp);

XV_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct xv_qp *q = xqp(qp);

	/* only QPs made with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS have the wr_* API */
	return q->ex.wr_start ? &q->ex : NULL;
}

XV_EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct xv_context *c = xv_ctx(qp->context);
	struct xv_qp *q = xqp(qp);
	int err;

	pthread_mutex_lock(&c->lock);
	err = xhca_qp_destroy(q->x);
	if (!err && q->inl)
		xhca_free(c->x, q->inl);
	if (!err)
		for (struct xv_qp **pp = &c->qps; *pp; pp = &(*pp)->next)
			if (*pp == q) {
				*pp = q->next;
				break;
			}
	pthread_mutex_unlock(&c->lock);
	if (err) {
		xv_log(c, "destroy qp 0x%06x", qp->qp_num);
		return xv_errno(err);
	}
	free(q->wrb);
	free(q);
	return 0;
}
XV_V11(ibv_destroy_qp);

/* ---- modify: the state rules of the man page --------------------------- */

enum { T_UD, T_UC, T_RC };

struct rule {
	int ok;
	int req[3], opt[3];	/* by T_UD, T_UC, T_RC */
};

#define PKP (IBV_QP_PKEY_INDEX | IBV_QP_PORT)

static const struct rule rules[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_RESET] = { 1 },
		[IBV_QPS_INIT] = { 1, { PKP | IBV_QP_QKEY, PKP | IBV_QP_ACCESS_FLAGS,
					PKP | IBV_QP_ACCESS_FLAGS } },
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_INIT] = { 1, {}, { PKP | IBV_QP_QKEY, PKP | IBV_QP_ACCESS_FLAGS,
					    PKP | IBV_QP_ACCESS_FLAGS } },
		[IBV_QPS_RTR] = { 1,
			{ 0, IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN,
			  IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER },
			{ IBV_QP_PKEY_INDEX | IBV_QP_QKEY,
			  IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
			  IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX } },
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RTS] = { 1,
			{ IBV_QP_SQ_PSN, IBV_QP_SQ_PSN,
			  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC },
			{ IBV_QP_CUR_STATE | IBV_QP_QKEY,
			  IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
			  IBV_QP_PATH_MIG_STATE,
			  IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
			  IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE } },
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RTS] = { 1, {},
			{ IBV_QP_CUR_STATE | IBV_QP_QKEY,
			  IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH |
			  IBV_QP_PATH_MIG_STATE,
			  IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH |
			  IBV_QP_PATH_MIG_STATE | IBV_QP_MIN_RNR_TIMER } },
		[IBV_QPS_SQD] = { 1 },
	},
	[IBV_QPS_SQD] = {
		[IBV_QPS_RTS] = { 1, {}, { IBV_QP_CUR_STATE | IBV_QP_QKEY,
					   IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS,
					   IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS |
					   IBV_QP_MIN_RNR_TIMER } },
		[IBV_QPS_SQD] = { 1, {}, { IBV_QP_PKEY_INDEX | IBV_QP_QKEY,
					   IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX,
					   IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX |
					   IBV_QP_MIN_RNR_TIMER | IBV_QP_TIMEOUT |
					   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					   IBV_QP_MAX_QP_RD_ATOMIC |
					   IBV_QP_MAX_DEST_RD_ATOMIC } },
	},
	[IBV_QPS_SQE] = {
		[IBV_QPS_RTS] = { 1, {}, { IBV_QP_CUR_STATE | IBV_QP_QKEY,
					   IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS, 0 } },
	},
	[IBV_QPS_ERR] = {},
};

/* 0 when going from cur to next with mask is allowed (any state may go to
 * RESET or ERR with nothing else). */
static int transition_ok(enum ibv_qp_state cur, enum ibv_qp_state next, enum ibv_qp_type type,
			 int mask)
{
	int t = type == IBV_QPT_UD ? T_UD : type == IBV_QPT_UC ? T_UC : T_RC;
	const struct rule *r;

	if (cur > IBV_QPS_ERR || next > IBV_QPS_ERR)
		return 0;
	if (next == IBV_QPS_RESET || next == IBV_QPS_ERR)
		return !(mask & ~IBV_QP_STATE & ~IBV_QP_CUR_STATE) || cur == next;
	r = &rules[cur][next];
	if (!r->ok)
		return 0;
	mask &= ~IBV_QP_STATE;
	if ((mask & r->req[t]) != r->req[t])
		return 0;
	return !(mask & ~(r->req[t] | r->opt[t]));
}

/* The RoCE address of ah: remote IP from the GID, local one from the
 * source GID index; 0 or errno. */
static int av_to_ips(struct xv_context *c, const struct ibv_ah_attr *ah, uint8_t remote[16],
		     uint8_t local[16])
{
	if (!ah->is_global || (ah->port_num && ah->port_num != 1)) {
		xv_log(c, "modify qp: a RoCE address needs a GRH (is_global, the peer's GID)");
		return EINVAL;
	}
	memcpy(remote, ah->grh.dgid.raw, 16);
	if (xv_gid_ip(c, ah->grh.sgid_index, local)) {
		xv_log(c, "modify qp: source GID index %u is not in the GID table",
		       ah->grh.sgid_index);
		return EINVAL;
	}
	if (xhca_ip_is_v4(local) != xhca_ip_is_v4(remote)) {
		xv_log(c, "modify qp: source GID %u and the destination GID are of two address "
		       "families", ah->grh.sgid_index);
		return EINVAL;
	}
	return 0;
}

static int to_xhca_attr(struct xv_context *c, struct xv_qp *q, const struct ibv_qp_attr *a,
			int mask, struct xhca_qp_attr *x)
{
	int err;

	memset(x, 0, sizeof(*x));
	if (mask & IBV_QP_STATE) {
		x->mask |= XHCA_QPA_STATE;
		x->state = (uint8_t)a->qp_state;
		if (a->qp_state == IBV_QPS_INIT && q->ex.qp_base.qp_type == IBV_QPT_UD) {
			x->mask |= XHCA_QPA_MTU; /* UD: the port's MTU bounds a message */
			x->mtu_shift = port_mtu_shift(c);
		}
	}
	if ((mask & IBV_QP_PORT) && a->port_num != 1)
		return EINVAL;
	if (mask & IBV_QP_PKEY_INDEX) {
		if (a->pkey_index != 0)
			return EINVAL; /* one P_Key: the default */
		x->mask |= XHCA_QPA_PKEY;
		x->pkey = XHCA_PKEY_DEFAULT;
	}
	if (mask & IBV_QP_QKEY) {
		x->mask |= XHCA_QPA_QKEY;
		x->qkey = a->qkey;
	}
	/* the remote access the QP allows its peer (UD: no RDMA to allow) */
	if ((mask & IBV_QP_ACCESS_FLAGS) && q->ex.qp_base.qp_type != IBV_QPT_UD) {
		x->mask |= XHCA_QPA_ACCESS;
		x->access = (uint8_t)(a->qp_access_flags & (IBV_ACCESS_REMOTE_WRITE |
							    IBV_ACCESS_REMOTE_READ |
							    IBV_ACCESS_REMOTE_ATOMIC));
	}
	if (mask & IBV_QP_AV) {
		err = av_to_ips(c, &a->ah_attr, x->remote_ip, x->local_ip);
		if (err)
			return err;
		x->mask |= XHCA_QPA_REMOTE_IP | XHCA_QPA_LOCAL_IP;
		if (!xhca_ip_is_v4(x->remote_ip))
			x->flags |= XHCA_QPF_IPV6;
	}
	if (mask & IBV_QP_PATH_MTU) {
		if (a->path_mtu < IBV_MTU_256 || a->path_mtu > IBV_MTU_4096)
			return EINVAL;
		x->mask |= XHCA_QPA_MTU;
		x->mtu_shift = (uint8_t)(a->path_mtu + 7);
	}
	if (mask & IBV_QP_DEST_QPN) {
		x->mask |= XHCA_QPA_DEST_QPN;
		x->dest_qpn = a->dest_qp_num;
	}
	if (mask & IBV_QP_RQ_PSN) {
		x->mask |= XHCA_QPA_EPSN;
		x->epsn = a->rq_psn & XHCA_PSN_MASK;
	}
	if (mask & IBV_QP_SQ_PSN) {
		x->mask |= XHCA_QPA_SQ_PSN;
		x->sq_psn = a->sq_psn & XHCA_PSN_MASK;
	}
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > XV_MAX_RD_ATOM)
		return EINVAL;
	if (mask & IBV_QP_MIN_RNR_TIMER) {
		x->mask |= XHCA_QPA_RNR_TIMER;
		x->rnr_timer = a->min_rnr_timer;
	}
	if (mask & IBV_QP_TIMEOUT) {
		x->mask |= XHCA_QPA_TIMEOUT;
		x->timeout = a->timeout;
	}
	if (mask & IBV_QP_RETRY_CNT) {
		x->mask |= XHCA_QPA_RETRY_CNT;
		x->retry_cnt = a->retry_cnt;
	}
	if (mask & IBV_QP_RNR_RETRY) {
		x->mask |= XHCA_QPA_RNR_RETRY;
		x->rnr_retry = a->rnr_retry;
	}
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC) {
		if (a->max_rd_atomic > XV_MAX_RD_ATOM)
			return EINVAL;
		x->mask |= XHCA_QPA_MAX_RD_ATOMIC;
		/* 0 (no READ outstanding) is as one at a time here */
		x->max_rd_atomic = a->max_rd_atomic ? a->max_rd_atomic : 1;
	}
	return 0;
}

static void keep_attr(struct xv_qp *q, const struct ibv_qp_attr *a, int mask)
{
	struct ibv_qp_attr *k = &q->attr;

#define KEEP(bit, f) do { if (mask & (bit)) k->f = a->f; } while (0)
	KEEP(IBV_QP_STATE, qp_state);
	KEEP(IBV_QP_PKEY_INDEX, pkey_index);
	KEEP(IBV_QP_PORT, port_num);
	KEEP(IBV_QP_QKEY, qkey);
	KEEP(IBV_QP_ACCESS_FLAGS, qp_access_flags);
	KEEP(IBV_QP_AV, ah_attr);
	KEEP(IBV_QP_PATH_MTU, path_mtu);
	KEEP(IBV_QP_DEST_QPN, dest_qp_num);
	KEEP(IBV_QP_RQ_PSN, rq_psn);
	KEEP(IBV_QP_SQ_PSN, sq_psn);
	KEEP(IBV_QP_MAX_DEST_RD_ATOMIC, max_dest_rd_atomic);
	KEEP(IBV_QP_MIN_RNR_TIMER, min_rnr_timer);
	KEEP(IBV_QP_TIMEOUT, timeout);
	KEEP(IBV_QP_RETRY_CNT, retry_cnt);
	KEEP(IBV_QP_RNR_RETRY, rnr_retry);
	KEEP(IBV_QP_MAX_QP_RD_ATOMIC, max_rd_atomic);
#undef KEEP
}

XV_EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	struct xv_context *c = xv_ctx(qp->context);
	struct xv_qp *q = xqp(qp);
	enum ibv_qp_state cur = q->attr.qp_state;
	enum ibv_qp_state next = (mask & IBV_QP_STATE) ? a->qp_state : cur;
	struct xhca_qp_attr x;
	int err;

	if ((mask & IBV_QP_CUR_STATE) && a->cur_qp_state != cur)
		cur = a->cur_qp_state; /* the application knows better (an error) */
	if (!transition_ok(cur, next, qp->qp_type, mask)) {
		xv_log(c, "modify qp 0x%06x: %d -> %d with attribute mask 0x%x is not allowed "
		       "(man ibv_modify_qp)", qp->qp_num, cur, next, mask);
		return xv_errno(EINVAL);
	}
	err = to_xhca_attr(c, q, a, mask, &x);
	if (err)
		return xv_errno(err);
	pthread_mutex_lock(&c->lock);
	err = x.mask ? xhca_qp_modify(q->x, &x) : 0;
	pthread_mutex_unlock(&c->lock);
	if (err) {
		xv_log(c, "modify qp 0x%06x", qp->qp_num);
		return xv_errno(err);
	}
	keep_attr(q, a, mask);
	if (next == IBV_QPS_RESET) {
		/* back to the attributes of a new QP, nothing of it in its CQs */
		struct ibv_qp_cap cap = q->attr.cap;

		xv_cq_clean(qp->recv_cq, qp->qp_num);
		if (qp->send_cq != qp->recv_cq)
			xv_cq_clean(qp->send_cq, qp->qp_num);

		memset(&q->attr, 0, sizeof(q->attr));
		q->attr.cap = cap;
		q->attr.port_num = 1;
	}
	q->attr.qp_state = next;
	qp->state = next;
	if (next == IBV_QPS_ERR && cur != IBV_QPS_ERR && qp->srq) {
		/* no more of the SRQ's buffers will complete on this QP */
		struct ibv_async_event ev = { .event_type = IBV_EVENT_QP_LAST_WQE_REACHED,
					      .element.qp = qp };

		xv_async_post(c, &ev);
	}
	return 0;
}
XV_V11(ibv_modify_qp);

XV_EXPORT int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
			   struct ibv_qp_init_attr *init)
{
	struct xv_context *c = xv_ctx(qp->context);
	struct xv_qp *q = xqp(qp);
	struct xhca_qp_attr x;
	int err;

	pthread_mutex_lock(&c->lock);
	err = xhca_qp_query(q->x, &x);
	pthread_mutex_unlock(&c->lock);
	if (err)
		return xv_errno(err);
	/* the state may have moved on (an error) */
	q->attr.qp_state = (enum ibv_qp_state)x.state;
	qp->state = q->attr.qp_state;
	*a = q->attr;
	a->cur_qp_state = a->qp_state;
	a->cap = q->cap;
	a->sq_draining = 0;
	if (x.state >= XHCA_QPS_RTR)
		a->rq_psn = x.epsn;
	if (init) {
		memset(init, 0, sizeof(*init));
		init->qp_context = qp->qp_context;
		init->send_cq = qp->send_cq;
		init->recv_cq = qp->recv_cq;
		init->srq = qp->srq;
		init->cap = q->cap;
		init->qp_type = qp->qp_type;
		init->sq_sig_all = q->sq_sig_all;
	}
	return 0;
}
XV_V11(ibv_query_qp);

XV_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	/* xhca_rx places a WRITE's packets in PSN order and xhcad completes
	 * in order: data is in memory, in order, when its completion is */
	return 0;
}

/* ---- posting ------------------------------------------------------------------ */

/* The access a request's scatter list needs (0: none), or -1 for an
 * opcode xhca does not send (TSO, XRC). */
static int sge_access(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_ACCESS_LOCAL_WRITE; /* the response lands in the list */
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_BIND_MW:
	case IBV_WR_LOCAL_INV:
	case IBV_WR_ATOMIC_WRITE:
		return 0;
	default:
		return -1;
	}
}

/* wr's scatter list into sg: inline data copied into the staging slot of
 * the send queue entry it will take, or the SGEs, each checked against its
 * lkey (a failed check is the request's LOC_PROT_ERR completion). */
static int send_sges(struct xv_context *c, struct xv_qp *q, const struct ibv_send_wr *wr,
		     uint32_t slot, unsigned int need, struct xhca_send_wr *x, struct xhca_sge *sg)
{
	uint64_t total = 0;

	for (int i = 0; i < wr->num_sge; i++)
		total += wr->sg_list[i].length;
	if ((wr->send_flags & IBV_SEND_INLINE) && !need) {
		uint8_t *p = q->inl + (size_t)slot * q->inl_slot;

		if (total > q->cap.max_inline_data)
			return EINVAL;
		sg[0].addr = (uint64_t)(uintptr_t)p;
		sg[0].length = (uint32_t)total;
		x->num_sge = total ? 1 : 0;
		for (int i = 0; i < wr->num_sge; i++) {
			memcpy(p, (void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
			p += wr->sg_list[i].length;
		}
		return 0;
	}
	for (int i = 0; i < wr->num_sge; i++) {
		if (!wr->sg_list[i].length)
			continue;
		if (!xv_sge_ok(c, q->ex.qp_base.pd, &wr->sg_list[i], need))
			x->send_flags |= XHCA_SEND_LOC_PROT_ERR;
		sg[x->num_sge].addr = wr->sg_list[i].addr;
		sg[x->num_sge++].length = wr->sg_list[i].length;
	}
	return 0;
}

/* A memory window's bind: a window of this context (the R_Key its index
 * with a key byte of the application's choosing), part of a region of the
 * QP's context (xhcad checks the rest in the request's turn: MW_BIND_ERR). */
static int bind_target(const struct xv_qp *q, const struct ibv_send_wr *wr,
		       struct xhca_send_wr *x)
{
	const struct ibv_mw *mw = wr->bind_mw.mw;
	const struct ibv_mw_bind_info *bi = &wr->bind_mw.bind_info;

	if (wr->num_sge || !mw || mw->context != q->ex.qp_base.context ||
	    (wr->bind_mw.rkey >> 8) != mw->handle ||
	    (bi->mr && bi->mr->context != mw->context) || (!bi->mr && bi->length))
		return EINVAL;
	x->wr.bind.mw_rkey = wr->bind_mw.rkey;
	x->wr.bind.mr_lkey = bi->mr ? bi->mr->lkey : 0;
	x->wr.bind.addr = bi->addr;
	x->wr.bind.length = bi->length;
	x->wr.bind.access = bi->mw_access_flags & ~(unsigned int)IBV_ACCESS_LOCAL_WRITE;
	return 0;
}

/* An ATOMIC WRITE (RC): its 8 bytes, from its scatter list, read now (as
 * inline data: the request carries them); where they go, as an RDMA's. */
static int atomic_write_target(const struct ibv_send_wr *wr, struct xhca_send_wr *x)
{
	uint8_t word[8];
	uint32_t got = 0;

	for (int i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length > 8 - got)
			return EINVAL;
		memcpy(word + got, (void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
		got += wr->sg_list[i].length;
	}
	if (got != 8)
		return EINVAL;
	x->num_sge = 0;
	x->wr.atomic.remote_addr = wr->wr.rdma.remote_addr;
	x->wr.atomic.rkey = wr->wr.rdma.rkey;
	memcpy(&x->wr.atomic.compare_add, word, 8);
	return 0;
}

/* Where wr goes: the remote region of an RDMA or ATOMIC, a UD address. */
static int send_target(const struct xv_qp *q, const struct ibv_send_wr *wr,
		       struct xhca_send_wr *x)
{
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		x->wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		x->wr.rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		x->wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		x->wr.atomic.rkey = wr->wr.atomic.rkey;
		x->wr.atomic.compare_add = wr->wr.atomic.compare_add;
		x->wr.atomic.swap = wr->wr.atomic.swap;
		break;
	case IBV_WR_BIND_MW:
		return bind_target(q, wr, x);
	default:
		break;
	}
	if (q->ex.qp_base.qp_type == IBV_QPT_UD) {
		const struct xv_ah *ah = (const struct xv_ah *)wr->wr.ud.ah;

		if (!ah)
			return EINVAL;
		memcpy(x->wr.ud.dest_ip, ah->ip, 16);
		x->wr.ud.remote_qpn = wr->wr.ud.remote_qpn;
		/* IBA 10.2.5: a Q_Key with the high bit set means the QP's own */
		x->wr.ud.remote_qkey = (wr->wr.ud.remote_qkey & 0x80000000u) ? q->attr.qkey
									   : wr->wr.ud.remote_qkey;
	}
	return 0;
}

/* wr as a libxhca request in x (its scatter list in sg); 0 or errno. Slot:
 * the send queue entry it will take (its inline staging). */
static int send_wr(struct xv_context *c, struct xv_qp *q, const struct ibv_send_wr *wr,
		   uint32_t slot, struct xhca_send_wr *x, struct xhca_sge *sg)
{
	int need = sge_access(wr->opcode), err;

	memset(x, 0, sizeof(*x));
	if (need < 0 || wr->num_sge < 0 || wr->num_sge > (int)q->cap.max_send_sge)
		return EINVAL;
	x->wr_id = wr->wr_id;
	x->opcode = (enum xhca_wr_opcode)wr->opcode;
	x->send_flags = wr->send_flags & (IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	if (q->sq_sig_all)
		x->send_flags |= XHCA_SEND_SIGNALED;
	x->imm_data = wr->opcode == IBV_WR_SEND_WITH_INV || wr->opcode == IBV_WR_LOCAL_INV ?
		      wr->invalidate_rkey : wr->imm_data;
	x->sg_list = sg;
	if (wr->opcode == IBV_WR_ATOMIC_WRITE) /* (libxhca: RC only) */
		return atomic_write_target(wr, x);
	err = send_sges(c, q, wr, slot, (unsigned int)need, x, sg);
	return err ? err : send_target(q, wr, x);
}

#define POST_BATCH 16

int xv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct xv_context *c = xv_ctx(qp->context);
	struct xv_qp *q = xqp(qp);
	struct xhca_send_wr x[POST_BATCH];
	struct xhca_sge sg[POST_BATCH][XV_MAX_SGE];
	const struct ibv_send_wr *orig[POST_BATCH];
	struct xhca_ring_ctl *ring;
	int err = 0;

	if (q->attr.qp_state < IBV_QPS_RTS) {
		/* as RXE: a QP sends from RTS on (in ERR, requests complete flushed) */
		*bad = wr;
		return xv_errno(EINVAL);
	}
	pthread_spin_lock(&q->sq_lock);
	ring = xhca_qp_sq(q->x);
	while (wr && !err) {
		uint32_t prod = ring->prod, cons = __atomic_load_n(&ring->cons, __ATOMIC_ACQUIRE);
		struct xhca_send_wr *xbad = NULL;
		int n = 0;

		for (; wr && n < POST_BATCH; wr = wr->next, n++) {
			if (prod + (uint32_t)n - cons >= q->cap.max_send_wr) {
				err = ENOMEM;
				break;
			}
			err = send_wr(c, q, wr, (prod + (uint32_t)n) & (q->cap.max_send_wr - 1),
				      &x[n], sg[n]);
			if (err)
				break;
			orig[n] = wr;
			x[n].next = NULL;
			if (n)
				x[n - 1].next = &x[n];
		}
		if (n) {
			int rc = xhca_post_send(q->x, x, &xbad);

			if (rc) {
				err = -rc == ESHUTDOWN ? EINVAL : -rc;
				wr = (struct ibv_send_wr *)orig[xbad ? xbad - x : 0];
			}
		}
	}
	pthread_spin_unlock(&q->sq_lock);
	if (err) {
		*bad = wr;
		errno = err;
	}
	return err;
}

static int qp_post_one(void *ring, uint64_t wr_id, const struct xhca_sge *sg, int n,
		       unsigned int flags)
{
	return xhca_post_recv_sg(ring, wr_id, sg, n, flags);
}

/* Whether the QP is in the error state: moved there by the application,
 * or by xhcad for a request it received (the send ring's mark). */
static int in_error(struct xv_qp *q)
{
	const struct xhca_ring_ctl *r = xhca_qp_sq(q->x);

	return q->attr.qp_state == IBV_QPS_ERR || (r && __atomic_load_n(&r->qp_err, __ATOMIC_RELAXED));
}

int xv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct xv_qp *q = xqp(qp);
	int err;

	if (qp->srq || q->attr.qp_state == IBV_QPS_RESET) {
		/* its receives go to the SRQ; a QP in RESET takes none (RXE) */
		*bad = wr;
		return xv_errno(EINVAL);
	}
	pthread_spin_lock(&q->rq_lock);
	err = xv_post_recv_chain(xv_ctx(qp->context), qp->pd, wr,
				 q->cap.max_recv_sge ? q->cap.max_recv_sge : 1, qp_post_one, q->x, bad);
	pthread_spin_unlock(&q->rq_lock);
	if (!err && in_error(q)) {
		/* receives posted to a QP in the error state complete flushed,
		 * as on an HCA: xhcad flushes what its queue holds when told
		 * the state again */
		struct xv_context *c = xv_ctx(qp->context);
		struct xhca_qp_attr x = { .mask = XHCA_QPA_STATE, .state = XHCA_QPS_ERR };

		pthread_mutex_lock(&c->lock);
		if (xhca_qp_modify(q->x, &x))
			xv_log(c, "post recv: flushing qp 0x%06x", qp->qp_num);
		pthread_mutex_unlock(&c->lock);
	}
	return err;
}

/* ---- address handles ------------------------------------------------------ */

XV_EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct xv_context *c = xv_ctx(pd->context);
	uint8_t local[16];
	struct xv_ah *ah;
	int err = av_to_ips(c, attr, (uint8_t[16]){}, local);

	if (err) {
		errno = err;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	ah->ah.context = pd->context;
	ah->ah.pd = pd;
	ah->attr = *attr;
	memcpy(ah->ip, attr->grh.dgid.raw, 16);
	return &ah->ah;
}
XV_V11(ibv_create_ah);

XV_EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
	free(ah);
	return 0;
}
XV_V11(ibv_destroy_ah);

XV_EXPORT int ibv_init_ah_from_wc(struct ibv_context *ctx, uint8_t port, struct ibv_wc *wc,
				  struct ibv_grh *grh, struct ibv_ah_attr *ah)
{
	struct xv_context *c = xv_ctx(ctx);
	const uint8_t *g = (const uint8_t *)grh;
	uint8_t sgid[16] = {}, dgid[16] = {};
	struct xv_gid t[XV_MAX_GID];
	int n;

	if (!(wc->wc_flags & IBV_WC_GRH)) {
		errno = EINVAL;
		return -1;
	}
	memset(ah, 0, sizeof(*ah));
	if ((g[20] >> 4) == 4) {
		/* RoCEv2 over IPv4: the IPv4 header in the GRH's last 20 bytes */
		sgid[10] = sgid[11] = dgid[10] = dgid[11] = 0xff;
		memcpy(&sgid[12], g + 20 + 12, 4);
		memcpy(&dgid[12], g + 20 + 16, 4);
		ah->grh.hop_limit = g[20 + 8];
		ah->grh.traffic_class = g[20 + 1];
	} else {
		memcpy(sgid, grh->sgid.raw, 16);
		memcpy(dgid, grh->dgid.raw, 16);
		ah->grh.hop_limit = grh->hop_limit;
		ah->grh.traffic_class = (uint8_t)((ntohl(grh->version_tclass_flow) >> 20) & 0xff);
		ah->grh.flow_label = ntohl(grh->version_tclass_flow) & 0xfffff;
	}
	memcpy(ah->grh.dgid.raw, sgid, 16);
	n = xv_gid_table(c, t, XV_MAX_GID);
	for (int i = 0; i < n; i++)
		if (!memcmp(t[i].gid.raw, dgid, 16))
			ah->grh.sgid_index = (uint8_t)i;
	ah->is_global = 1;
	ah->grh.hop_limit = 0xff;
	ah->port_num = port;
	ah->sl = wc->sl;
	return 0;
}

XV_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
					       struct ibv_grh *grh, uint8_t port)
{
	struct ibv_ah_attr a;

	if (ibv_init_ah_from_wc(pd->context, port, wc, grh, &a))
		return NULL;
	return ibv_create_ah(pd, &a);
}

XV_EXPORT int ibv_resolve_eth_l2_from_gid(struct ibv_context *ctx, struct ibv_ah_attr *attr,
					  uint8_t eth_mac[6], uint16_t *vid)
{
	/* xhcad resolves neighbours itself, when it sends */
	return EOPNOTSUPP;
}

/* ---- multicast -------------------------------------------------------------- */

XV_EXPORT int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	struct xv_context *c = xv_ctx(qp->context);
	int err;

	if (qp->qp_type != IBV_QPT_UD)
		return xv_errno(EINVAL);
	pthread_mutex_lock(&c->lock);
	err = xhca_mcast_attach(xqp(qp)->x, gid->raw);
	pthread_mutex_unlock(&c->lock);
	if (err)
		xv_log(c, "attach mcast");
	return err ? xv_errno(err) : 0;
}
XV_V11(ibv_attach_mcast);

XV_EXPORT int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	struct xv_context *c = xv_ctx(qp->context);
	int err;

	pthread_mutex_lock(&c->lock);
	err = xhca_mcast_detach(xqp(qp)->x, gid->raw);
	pthread_mutex_unlock(&c->lock);
	return err ? xv_errno(err) : 0;
}
XV_V11(ibv_detach_mcast);

