/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The QP verbs: create, modify, destroy (the table rebuilt at a restart is
 * qp_restore.c's, a QP shown and the counters qp_show.c's: both above this
 * file, with what they use of it in qp_int.h). The local index allocator
 * (bitmap), the global QPN allocator (a
 * cursor that only moves forward and wraps, so a destroyed QPN is reused
 * last, US 7,212,547), and the ordered writes that keep xhca_rx from ever
 * seeing a half-made QP:
 *   create:  context (valid, new generation) in one seqcount write section
 *            (user/lib/qpctx.c), then CAM insert;
 *   destroy: CAM delete, then context invalid with the generation bumped.
 * A packet that looked up the CAM before a destroy meets a generation or
 * valid mismatch and is dropped as stale; the slot is reusable at once.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xhca/qpctx.h>
#include <xhca/wire.h>
#include "log.h"
#include "qp_int.h"


static const char *const type_names[] = {
	[XHCA_QPT_RC] = "rc", [XHCA_QPT_UC] = "uc", [2] = "?", [XHCA_QPT_UD] = "ud",
};
static const char *const state_names[] = { "reset", "init", "rtr", "rts", "sqd", "sqe", "err" };

static int alloc_lidx(struct xhcad *d, __u32 *lidx)
{
	__u32 w, words = (d->max_qps + 63) / 64;

	for (w = 0; w < words; w++) {
		__u32 i;

		if (d->bitmap[w] == ~0ull)
			continue;
		i = w * 64 + __builtin_ctzll(~d->bitmap[w]);
		if (i >= d->max_qps)
			break;
		*lidx = i;
		return 0;
	}
	return -ENOSPC;
}

int qp_percpu_zero(struct xhcad *d, int fd, __u32 key, size_t vsize)
{
	size_t sz = ((vsize + 7) & ~7ul) * d->ncpus;
	void *z = calloc(1, sz);
	int err = 0;

	if (!z)
		return -ENOMEM;
	if (bpf_map_update_elem(fd, &key, z, 0))
		err = -errno;
	free(z);
	return err;
}

static int save_cursor(struct xhcad *d)
{
	struct xhca_dstate s = { .next_qpn = d->next_qpn };
	__u32 k = 0;

	return bpf_map_update_elem(d->m.dstate, &k, &s, 0) ? -errno : 0;
}

/* Next free QPN at or after the cursor; the cursor then moves past it. */
static int alloc_qpn(struct xhcad *d, __u32 *qpn)
{
	struct xhca_cam_val v;
	__u32 n = d->next_qpn, tries;

	for (tries = 0; tries <= QPN_LAST - QPN_FIRST; tries++) {
		if (n < QPN_FIRST || n > QPN_LAST)
			n = QPN_FIRST;
		if (qp_cam_lookup(d, n, &v) == -ENOENT) {
			*qpn = n;
			d->next_qpn = n + 1 > QPN_LAST ? QPN_FIRST : n + 1;
			return save_cursor(d);
		}
		n++;
	}
	return -ENOSPC;
}

/* Index of pkey in the P_Key table, adding it when there is room. */
static int pkey_index(struct xhcad *d, __u16 pkey, __u8 *idx)
{
	int free_slot = -1;
	__u32 i;

	for (i = 0; i < XHCA_PKEY_TBL_LEN; i++) {
		struct xhca_pkey e;

		if (bpf_map_lookup_elem(d->m.pkeys, &i, &e))
			return -errno;
		if (e.pkey == pkey) {
			*idx = i;
			return 0;
		}
		if (!e.pkey && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0)
		return -ENOSPC;
	{
		struct xhca_pkey e = { .pkey = pkey };
		__u32 k = free_slot;

		if (bpf_map_update_elem(d->m.pkeys, &k, &e, 0))
			return -errno;
	}
	*idx = free_slot;
	return 0;
}

static int ip_set(const __u8 *ip)
{
	static const __u8 zero[16];

	return memcmp(ip, zero, 16) != 0;
}

static int valid_transition(int from, int to)
{
	if (to == XHCA_QPS_RESET || to == XHCA_QPS_ERR)
		return 1;
	switch (from) {
	case XHCA_QPS_RESET: return to == XHCA_QPS_INIT;
	case XHCA_QPS_INIT: return to == XHCA_QPS_INIT || to == XHCA_QPS_RTR;
	case XHCA_QPS_RTR: return to == XHCA_QPS_RTS;
	case XHCA_QPS_RTS: return to == XHCA_QPS_RTS || to == XHCA_QPS_SQD;
	case XHCA_QPS_SQD: return to == XHCA_QPS_RTS || to == XHCA_QPS_SQD;
	case XHCA_QPS_SQE: return to == XHCA_QPS_RTS;
	}
	return 0;
}

void qp_attr_from_ctx(const struct xhca_qp_ctx *c, struct xhca_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qpn = c->gqpn;
	a->type = c->type;
	a->state = c->state;
	a->action = c->action;
	a->mtu_shift = c->mtu_shift;
	a->pkey = c->pkey;
	a->flags = c->flags & (XHCA_QPF_IPV6 | XHCA_QPF_BLOCK_MC_LOOPBACK | XHCA_QPF_PROXY |
			       XHCA_QPF_PROXY_CQ | XHCA_QPF_ICRC_FIRST);
	a->qkey = c->qkey;
	a->epsn = c->rx_psn & XHCA_RXPSN_MASK;
	a->dest_qpn = c->dest_qpn;
	a->flowq = c->flowq;
	memcpy(a->local_ip, c->local_ip, 16);
	memcpy(a->remote_ip, c->remote_ip, 16);
	a->ack_every = c->ack_every;
	a->rnr_timer = c->rnr_timer;
	a->access = c->access;
}

/* What only xhcad knows of a QP: its owner, CQ and receive queue. */
void qp_attr_from_host(const struct xhcad *d, const struct qp_host *qh,
		       struct xhca_qp_attr *a)
{
	if (!qh->valid)
		return;
	a->owner = qh->owner;
	a->cq = qh->cq ? qh->cq->id : 0;
	a->rq_depth = qh->rcv.rq_depth;
	a->rq_alloc = qh->rcv.rq_alloc;
	a->rq_off = qh->rcv.rq && !qh->rcv.srq ? hm_base(hm_find(d, qh->rcv.rq_alloc), 0) : 0;
	a->srq = qh->rcv.srq ? qh->rcv.srq->id : 0;
	a->pd = qh->pd;
	if (qh->sq) {
		const struct sq_state *s = qh->sq;

		a->send_cq = s->cq->id;
		a->sq_depth = s->depth;
		a->sq_alloc = s->alloc;
		a->sq_off = hm_base(hm_find(d, s->alloc), 0);
		a->sq_psn = s->psn;
		a->timeout = s->timeout;
		a->retry_cnt = s->retry_cnt;
		a->rnr_retry = s->rnr_retry;
		a->max_rd_atomic = s->max_rd_atomic;
	}
}

/* A QP that engine 0 must run: QP1 (the connection manager's) or one whose
 * completions go to the proxy (its mailbox and reorderer are engine 0's). */
int qp_engine0_only(__u32 qpn, const struct cq *cq)
{
	return qpn == XHCA_QPN_GSI || (cq && cq->proxy);
}

__u32 qp_default_flowq(const struct xhcad *d, __u32 qpn, int eng0)
{
	/* With --steer the engine that reads the RX queue the QPN hashes to,
	 * where a steering peer sends its frames (steer.c), else the flow
	 * queues' (as many as there are queues: evenly); engine 0 when the QP
	 * must be its. Of that engine's flow queues (f % neng == e) the one
	 * the hash's low bits choose: neighbouring QPNs land on different
	 * ones */
	__u32 nq = d->steer == STEER_ON && xsk_nrxq(d) > 0 ? (__u32)xsk_nrxq(d) : d->neng;
	__u64 x = (__u64)steer_hash(qpn) * nq;
	__u32 e = eng0 ? 0 : (__u32)(x >> 32) % d->neng;
	/* (e < neng <= nflowq: xsk_engines) */
	__u32 n = (d->nflowq - e + d->neng - 1) / d->neng;

	return e + (__u32)(((__u64)(__u32)x * n) >> 32) * d->neng;
}

void qp_invalidate_slot(struct xhcad *d, __u32 lidx, struct xhca_qp_ctx *c)
{
	c->valid = 0;
	c->state = XHCA_QPS_RESET;
	c->gen++;
	c->rx_psn = 0;
	qp_ctx_write(d, lidx, c, 1);
}

/* What a QP being created takes: its queues, and the rings and buffers
 * made for it. */
struct qp_new {
	struct cq *cq, *scq;	/* receive and send completions */
	struct srq *srq;
	struct hm_alloc *rq, *bufs, *sq; /* its receive ring, the CLI's buffers, its send ring */
	__u32 buf_size;
};

/* The attributes a QP is created with, alone. */
static int create_check_attr(struct xhcad *d, const struct xhca_qp_attr *a, __u16 pkey,
			     char *err, size_t errlen)
{
	__u32 qpn = a->qpn;

	if (a->type != XHCA_QPT_RC && a->type != XHCA_QPT_UC && a->type != XHCA_QPT_UD)
		return errf(err, errlen, -EINVAL, "qp create: unknown QP type %u; use rc, uc or ud",
			    a->type);
	if (qpn > XHCA_QPN_MASK)
		return errf(err, errlen, -ERANGE,
			    "qp create: QPN 0x%x is out of range (24 bits); use 2..0xfffffe", qpn);
	if (qpn == XHCA_QPN_MCAST)
		return errf(err, errlen, -EINVAL,
			    "qp create: QPN 0xffffff is the multicast QPN; use 2..0xfffffe");
	if (qpn == XHCA_QPN_GSI && a->type != XHCA_QPT_UD)
		return errf(err, errlen, -EINVAL,
			    "qp create: QPN 1 is the GSI QP and must be --type ud");
	if ((pkey & 0x7fff) == 0)
		return errf(err, errlen, -EINVAL,
			    "qp create: P_Key 0x%04x is invalid (partition 0); use e.g. 0xffff", pkey);
	if ((a->mask & XHCA_QPA_FLOWQ) && a->flowq >= d->nflowq)
		return errf(err, errlen, -EINVAL,
			    "qp create: flow queue %u does not exist; xhcad has %u (0..%u)", a->flowq,
			    d->nflowq, d->nflowq - 1);
	return 0;
}

/* Its receive side: an SRQ, or a CQ and a receive queue of its own. */
static int create_check_recv(struct xhcad *d, const struct xhca_qp_attr *a, __u32 owner,
			     struct qp_new *n, char *err, size_t errlen)
{
	if (a->srq) {
		n->srq = srq_find(d, a->srq);
		if (!owner || !n->srq || n->srq->owner != owner)
			return errf(err, errlen, -ENOENT,
				    "qp create: no shared receive queue %u in this session", a->srq);
		if (a->type == XHCA_QPT_UC)
			return errf(err, errlen, -EINVAL,
				    "qp create: a UC QP cannot take a shared receive queue (verbs)");
	}
	if (!owner && !a->cq)
		return 0;
	n->cq = cq_find(d, a->cq);
	if (!n->cq || n->cq->owner != owner)
		return errf(err, errlen, -ENOENT,
			    owner ? "qp create: no CQ %u in this session; create one first"
				  : "qp create: no CQ %u of the CLI's; create one with: xhca cq "
				    "create", a->cq);
	if (!n->srq && (!a->rq_depth || a->rq_depth > XHCA_RING_DEPTH_MAX ||
			(a->rq_depth & (a->rq_depth - 1))))
		return errf(err, errlen, -EINVAL,
			    "qp create: receive queue depth %u is not a power of 2 in 1..%u",
			    a->rq_depth, XHCA_RING_DEPTH_MAX);
	if (!owner && (a->buf_size > (1u << 20) || (__u64)a->rq_depth * n->buf_size > (64ull << 20)))
		return errf(err, errlen, -EINVAL,
			    "qp create: receive buffers of %u bytes x %u: give at most 1 MiB "
			    "each and 64 MiB in all", a->buf_size, a->rq_depth);
	return 0;
}

/* Its send side (applications only), the proxy's CQ, its PD. */
static int create_check_send(struct xhcad *d, const struct xhca_qp_attr *a, __u32 owner,
			     struct qp_new *n, char *err, size_t errlen)
{
	if (a->send_cq) {
		n->scq = cq_find(d, a->send_cq);
		if (!owner)
			return errf(err, errlen, -EINVAL,
				    "qp create: the CLI's QPs have no send queue; applications send "
				    "through libxhca (xhca_post_send)");
		if (!n->scq || n->scq->owner != owner)
			return errf(err, errlen, -ENOENT,
				    "qp create: no CQ %u in this session for send completions; "
				    "create one first", a->send_cq);
		if (n->scq->proxy)
			return errf(err, errlen, -EINVAL,
				    "qp create: CQ %u is a proxy CQ, for receive completions only; "
				    "give the send queue an ordinary CQ", a->send_cq);
		if (!a->sq_depth || a->sq_depth > XHCA_RING_DEPTH_MAX ||
		    (a->sq_depth & (a->sq_depth - 1)))
			return errf(err, errlen, -EINVAL,
				    "qp create: send queue depth %u is not a power of 2 in 1..%u",
				    a->sq_depth, XHCA_RING_DEPTH_MAX);
	}
	if ((a->flags & XHCA_QPF_PROXY) && !n->cq)
		return errf(err, errlen, -EINVAL,
			    "qp create: a proxy QP needs a proxy CQ; give one (xhca cq create "
			    "--proxy, then qp create --cq ID)");
	if ((a->flags & XHCA_QPF_PROXY) && !n->cq->proxy)
		return errf(err, errlen, -EINVAL,
			    "qp create: a proxy QP needs a proxy CQ; CQ %u is not one (create it "
			    "with XHCA_CQF_PROXY, xhca cq create --proxy)", a->cq);
	if (!pd_usable(d, owner, a->pd))
		return errf(err, errlen, -ENOENT,
			    owner ? "qp create: no protection domain %u in this session; allocate "
				    "one first"
				  : "qp create: protection domain %u is an application's; the CLI's "
				    "QPs are in PD 0", a->pd);
	return 0;
}

static void rings_free(struct xhcad *d, __u32 owner, struct qp_new *n)
{
	if (n->bufs)
		mem_free(d, n->bufs->id, 0);
	if (n->rq)
		mem_free(d, n->rq->id, owner);
	if (n->sq)
		mem_free(d, n->sq->id, owner);
	n->bufs = n->rq = n->sq = NULL;
}

/* Its rings in host memory (and the CLI's QP, xhcad's buffers posted for it). */
static int create_rings(struct xhcad *d, const struct xhca_qp_attr *a, __u32 owner,
			struct qp_new *n, char *err, size_t errlen)
{
	if (n->cq && !n->srq) {
		n->rq = hm_alloc(d, xhca_ring_bytes(a->rq_depth, sizeof(struct xhca_rwqe)), owner,
				 XHCA_ALLOC_CONTIG);
		n->bufs = n->rq && !owner ? hm_alloc(d, (__u64)a->rq_depth * n->buf_size, 0, 0)
					  : NULL;
		if (!n->rq || (!owner && !n->bufs)) {
			rings_free(d, owner, n);
			return errf(err, errlen, -ENOMEM, "qp create: no room in host memory for a "
				    "receive queue of %u%s; free buffers or start xhcad with a larger "
				    "--hostmem-mb", a->rq_depth, owner ? "" : " and its buffers");
		}
	}
	if (n->scq) {
		n->sq = hm_alloc(d, xhca_ring_bytes(a->sq_depth, sizeof(struct xhca_swqe)), owner,
				 XHCA_ALLOC_CONTIG);
		if (!n->sq) {
			rings_free(d, owner, n);
			return errf(err, errlen, -ENOMEM, "qp create: no room in host memory for a "
				    "send queue of %u; free buffers or start xhcad with a larger "
				    "--hostmem-mb", a->sq_depth);
		}
	}
	return 0;
}

/* A new context in slot lidx (its generation one more than the slot's). */
static void ctx_new(struct xhcad *d, const struct xhca_qp_attr *a, __u32 lidx, __u32 qpn,
		    __u32 flowq, __u8 pidx, __u16 pkey, __u32 owner, const struct cq *cq,
		    struct xhca_qp_ctx *c)
{
	__u32 gen;

	qp_ctx_read(d, lidx, c);
	gen = c->gen + 1;
	memset(c, 0, sizeof(*c));
	c->gen = gen;
	c->gqpn = qpn;
	c->valid = 1;
	c->type = a->type;
	c->state = XHCA_QPS_RESET;
	/* An application's QP delivers to it, and the CLI's with a CQ; the
	 * CLI's others start as pass. */
	c->action = owner || cq ? XHCA_ACT_HOST : XHCA_ACT_PASS;
	c->flowq = (__u8)flowq;
	c->pkey_index = pidx;
	c->pkey = pkey;
	c->mtu_shift = 10;
	if (a->type == XHCA_QPT_RC) { /* the responder's: RC only */
		c->ack_every = XHCA_ACK_EVERY_DEFAULT;
		c->rnr_timer = XHCA_RNR_TIMER_DEFAULT;
	}
	c->qkey = qpn == XHCA_QPN_GSI ? XHCA_GSI_QKEY : a->qkey;
	c->pd = a->pd;
	c->flags = a->flags & (XHCA_QPF_BLOCK_MC_LOOPBACK | XHCA_QPF_PROXY);
	if (cq && cq->proxy)
		c->flags |= XHCA_QPF_PROXY_CQ; /* every message gets a CSN */
	if (d->icrc_first)
		c->flags |= XHCA_QPF_ICRC_FIRST;
}

/* A session at its limit of QPs (--session-qps) gets no more. */
static int create_check_quota(struct xhcad *d, __u32 owner, char *err, size_t errlen)
{
	__u32 n = 0;

	if (!owner || !d->app.lim_qps)
		return 0;
	for (__u32 i = 0; i < d->max_qps; i++)
		n += d->qh[i].valid && d->qh[i].owner == owner;
	if (n < d->app.lim_qps)
		return 0;
	return errf(err, errlen, -ENOMEM, "qp create: this session has %u QPs, its limit (xhcad "
		    "--session-qps); destroy one first", n);
}

/* Its slot, QPN and P_Key index: what create takes from the tables. */
static int create_slot(struct xhcad *d, const struct xhca_qp_attr *a, __u16 pkey, __u32 *lidx,
		       __u8 *pidx, char *err, size_t errlen)
{
	struct xhca_cam_val v;
	int rc;

	if (a->qpn && !qp_cam_lookup(d, a->qpn, &v))
		return errf(err, errlen, -EEXIST,
			    "qp create: QPN 0x%06x already exists on %s; pick another --qpn or omit it",
			    a->qpn, d->ifname);
	if (alloc_lidx(d, lidx))
		return errf(err, errlen, -ENOSPC,
			    "qp create: all %u local QPs are in use (table full); destroy a QP or "
			    "restart xhcad with a larger --max-qps",
			    d->max_qps);
	rc = pkey_index(d, pkey, pidx);
	if (rc == -ENOSPC)
		return errf(err, errlen, rc,
			    "qp create: P_Key table full (%d partitions); reuse an existing --pkey",
			    XHCA_PKEY_TBL_LEN);
	if (rc)
		return errf(err, errlen, rc, "qp create: P_Key table: %s", strerror(-rc));
	return 0;
}

/* QP1 carries the connection manager's MADs: not the CLI's to make, change
 * or destroy while it runs (xhcad --no-cm leaves QP1 to the CLI). */
static int qp1_guard(const struct xhcad *d, const char *op, __u32 qpn, char *err, size_t errlen)
{
	if (!d->cm_qp1 || qpn != XHCA_QPN_GSI)
		return 0;
	return errf(err, errlen, -EBUSY,
		    "%s: QP 0x000001 is the connection manager's (xhcad --no-cm leaves it to you)",
		    op);
}

int qp_gsi_ensure(struct xhcad *d)
{
	struct xhca_qp_attr a = { .qpn = XHCA_QPN_GSI, .type = XHCA_QPT_UD };
	struct xhca_cam_val v;
	char err[XHCA_ERRMSG_LEN];
	int rc = 0;

	if (!qp_cam_lookup(d, XHCA_QPN_GSI, &v)) { /* an earlier xhcad's: ours if nobody's */
		if (v.lidx < d->max_qps && d->qh[v.lidx].valid && !d->qh[v.lidx].owner) {
			d->cm_qp1 = 1;
			return 0;
		}
		return -EEXIST;
	}
	rc = qp_create(d, &a, 0, err, sizeof(err));
	for (__u8 st = XHCA_QPS_INIT; !rc && st <= XHCA_QPS_RTS; st++) {
		a.mask = XHCA_QPA_STATE | (st == XHCA_QPS_INIT ? XHCA_QPA_ACTION : 0);
		a.state = st;
		a.action = XHCA_ACT_HOST;
		rc = qp_modify(d, &a, 0, err, sizeof(err));
	}
	if (rc)
		pr_warn("the connection manager's QP1: %s\n", err);
	d->cm_qp1 = !rc;
	return rc;
}

/* A flow queue given for a QP engine 0 must run is one of engine 0's. */
static int create_check_engine(struct xhcad *d, const struct xhca_qp_attr *a,
			       const struct cq *cq, char *err, size_t errlen)
{
	if (!(a->mask & XHCA_QPA_FLOWQ) || !qp_engine0_only(a->qpn, cq) || !fq_engine(d, a->flowq))
		return 0;
	return errf(err, errlen, -EINVAL,
		    "qp create: flow queue %u is engine %u's; a %s runs on engine 0 (xhcad "
		    "--engines %u): give a flow queue that is a multiple of %u", a->flowq,
		    fq_engine(d, a->flowq), cq && cq->proxy ? "QP of a proxy CQ" : "GSI QP",
		    d->neng, d->neng);
}

int qp_create(struct xhcad *d, struct xhca_qp_attr *a, __u32 owner, char *err, size_t errlen)
{
	struct qp_new n = { .buf_size = a->buf_size ? a->buf_size : 4096 };
	__u16 pkey = a->pkey ? a->pkey : XHCA_PKEY_DEFAULT;
	__u32 lidx = 0, qpn = a->qpn, flowq;
	struct xhca_cam_val v;
	struct xhca_qp_ctx c;
	struct qp_host *qh;
	__u8 pidx = 0;
	int rc;

	rc = qp1_guard(d, "qp create", qpn, err, errlen);
	rc = rc ?: create_check_attr(d, a, pkey, err, errlen);
	rc = rc ?: create_check_recv(d, a, owner, &n, err, errlen);
	rc = rc ?: create_check_send(d, a, owner, &n, err, errlen);
	rc = rc ?: create_check_engine(d, a, n.cq, err, errlen);
	rc = rc ?: create_check_quota(d, owner, err, errlen);
	rc = rc ?: create_slot(d, a, pkey, &lidx, &pidx, err, errlen);
	rc = rc ?: create_rings(d, a, owner, &n, err, errlen);
	if (rc)
		return rc;
	if (!qpn && (rc = alloc_qpn(d, &qpn))) {
		rings_free(d, owner, &n);
		return errf(err, errlen, rc, "qp create: no free QPN: %s", strerror(-rc));
	}
	flowq = (a->mask & XHCA_QPA_FLOWQ) ? a->flowq
					    : qp_default_flowq(d, qpn, qp_engine0_only(qpn, n.cq));
	ctx_new(d, a, lidx, qpn, flowq, pidx, pkey, owner, n.cq, &c);
	qp_percpu_zero(d, d->m.qp_stats, lidx, sizeof(struct xhca_qp_counter));
	qp_ctx_write(d, lidx, &c, 1);
	v.lidx = lidx;
	v.gen = c.gen;
	if (bpf_map_update_elem(d->m.cam, &qpn, &v, BPF_NOEXIST)) {
		rc = -errno;
		qp_invalidate_slot(d, lidx, &c);
		rings_free(d, owner, &n);
		return errf(err, errlen, rc, "qp create: QP CAM insert for 0x%06x: %s", qpn,
			    strerror(-rc));
	}
	bm_set(d->bitmap, lidx, 1);
	d->qps_in_use++;
	qp_host_attach(d, lidx, c.gen, qpn, c.type, c.flowq, owner, n.cq, n.rq, a->rq_depth,
		       n.srq);
	qh = &d->qh[lidx];
	if (qh->cq && qh->cq->proxy) /* its first message: what xhca_rx counts from */
		proxy_qp_add(d, lidx, (__u16)__atomic_load_n(&d->ctxm[lidx].msn, __ATOMIC_ACQUIRE));
	qh->pd = a->pd;
	if (n.sq && sq_attach(d, qh, n.sq, a->sq_depth, n.scq)) {
		char e2[XHCA_ERRMSG_LEN];

		qp_destroy(d, qpn, owner, e2, sizeof(e2));
		mem_free(d, n.sq->id, owner);
		return errf(err, errlen, -ENOMEM, "qp create: no memory for the send queue's state");
	}
	if (n.bufs) {
		qh->rcv.cli_bufs = n.bufs->id;
		qh->rcv.cli_buf_size = n.buf_size;
		for (__u32 i = 0; i < a->rq_depth; i++)
			cli_post(d, qh, i);
	}
	pd_ref(d, a->pd, 1);
	qp_attr_from_ctx(&c, a);
	qp_attr_from_host(d, qh, a);
	pr_info("created %s QP 0x%06x (flow queue %u%s)\n", type_names[c.type], qpn, flowq,
		owner ? ", application" : "");
	return 0;
}


/* The interface's MTU (0: unknown). */
static __u32 link_mtu(const struct xhcad *d)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	__u32 mtu = 0;

	if (fd < 0)
		return 0;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", d->ifname);
	if (!ioctl(fd, SIOCGIFMTU, &ifr))
		mtu = (__u32)ifr.ifr_mtu;
	close(fd);
	return mtu;
}

/* What a modify may set of the context, against the context c as it is. */
static int modify_check_ctx(const struct xhca_qp_attr *a, const struct xhca_qp_ctx *c,
			    char *err, size_t errlen)
{
	__u32 m = a->mask;

	if ((m & XHCA_QPA_STATE) && (a->state > XHCA_QPS_ERR || !valid_transition(c->state, a->state)))
		return errf(err, errlen, -EINVAL,
			    "qp modify: QP 0x%06x: invalid state transition %s -> %s; allowed: "
			    "reset->init->rtr->rts, rts<->sqd, sqe->rts, any->reset|err",
			    a->qpn, state_names[c->state],
			    a->state <= XHCA_QPS_ERR ? state_names[a->state] : "?");
	if ((m & XHCA_QPA_EPSN) && a->epsn > XHCA_PSN_MASK)
		return errf(err, errlen, -ERANGE, "qp modify: ePSN 0x%x is out of range (24 bits)",
			    a->epsn);
	if ((m & XHCA_QPA_MTU) && (a->mtu_shift < 8 || a->mtu_shift > 12))
		return errf(err, errlen, -EINVAL,
			    "qp modify: MTU must be 256, 512, 1024, 2048 or 4096");
	if ((m & XHCA_QPA_PROXY) && (a->flags & XHCA_QPF_PROXY) && !(c->flags & XHCA_QPF_PROXY_CQ))
		return errf(err, errlen, -EINVAL,
			    "qp modify: QP 0x%06x cannot be a proxy QP: its completions do not go "
			    "to a proxy CQ (create the QP on a CQ made with XHCA_CQF_PROXY)", a->qpn);
	if ((m & XHCA_QPA_ACTION) && a->action > XHCA_ACT_HOST)
		return errf(err, errlen, -EINVAL, "qp modify: action must be pass, drop or host");
	if ((m & XHCA_QPA_DEST_QPN) && a->dest_qpn > XHCA_QPN_MASK)
		return errf(err, errlen, -ERANGE, "qp modify: dest QPN 0x%x is out of range",
			    a->dest_qpn);
	if ((m & XHCA_QPA_RNR_TIMER) && a->rnr_timer > 31)
		return errf(err, errlen, -ERANGE,
			    "qp modify: RNR timer code %u is out of range (0..31, IBA table 45)",
			    a->rnr_timer);
	if ((m & XHCA_QPA_ACCESS) && (a->access & ~(XHCA_ACCESS_REMOTE_WRITE |
						      XHCA_ACCESS_REMOTE_READ |
						      XHCA_ACCESS_REMOTE_ATOMIC)))
		return errf(err, errlen, -EINVAL, "qp modify: remote access 0x%x: only remote "
			    "write (0x2), read (0x4) and atomic (0x8)", a->access);
	if ((m & (XHCA_QPA_ACK_EVERY | XHCA_QPA_RNR_TIMER)) && c->type != XHCA_QPT_RC)
		return errf(err, errlen, -EINVAL,
			    "qp modify: QP 0x%06x is not RC: only an RC responder sends ACKs and "
			    "RNR NAKs", a->qpn);
	return 0;
}

/* The requester's settings, and a path MTU that fits the link. */
static int modify_check_req(struct xhcad *d, const struct xhca_qp_attr *a,
			    const struct xhca_qp_ctx *c, __u32 lidx, char *err, size_t errlen)
{
	__u32 m = a->mask;

	if ((m & (XHCA_QPA_SQ_PSN | XHCA_QPA_TIMEOUT | XHCA_QPA_RETRY_CNT | XHCA_QPA_RNR_RETRY |
		  XHCA_QPA_MAX_RD_ATOMIC)) && !d->qh[lidx].sq)
		return errf(err, errlen, -EINVAL,
			    "qp modify: QP 0x%06x has no send queue (created without a send CQ): "
			    "the requester's settings do not apply", a->qpn);
	if ((m & XHCA_QPA_SQ_PSN) && a->sq_psn > XHCA_PSN_MASK)
		return errf(err, errlen, -ERANGE, "qp modify: SQ PSN 0x%x is out of range (24 bits)",
			    a->sq_psn);
	if ((m & (XHCA_QPA_TIMEOUT | XHCA_QPA_RETRY_CNT | XHCA_QPA_RNR_RETRY |
		  XHCA_QPA_MAX_RD_ATOMIC)) && c->type != XHCA_QPT_RC)
		return errf(err, errlen, -EINVAL,
			    "qp modify: QP 0x%06x is not RC: only an RC requester waits for "
			    "acknowledgements and retries", a->qpn);
	if ((m & XHCA_QPA_TIMEOUT) && a->timeout > 31)
		return errf(err, errlen, -ERANGE,
			    "qp modify: timeout %u is out of range (0..31: 4.096 us * 2^N; 0 never)",
			    a->timeout);
	if ((m & XHCA_QPA_RETRY_CNT) && a->retry_cnt > 7)
		return errf(err, errlen, -ERANGE, "qp modify: retry count %u is out of range (0..7)",
			    a->retry_cnt);
	if ((m & XHCA_QPA_RNR_RETRY) && a->rnr_retry > 7)
		return errf(err, errlen, -ERANGE,
			    "qp modify: RNR retry count %u is out of range (0..7, 7: no end)",
			    a->rnr_retry);
	if ((m & XHCA_QPA_MAX_RD_ATOMIC) && (!a->max_rd_atomic || a->max_rd_atomic > RESP_RES))
		return errf(err, errlen, -ERANGE,
			    "qp modify: max_rd_atomic %u is out of range (1..%d)", a->max_rd_atomic,
			    RESP_RES);
	if (d->qh[lidx].sq && ((m & XHCA_QPA_MTU) || ((m & XHCA_QPA_STATE) &&
						    a->state == XHCA_QPS_RTS))) {
		/* the requester's packets must fit the link (as RXE's path MTU
		 * is at most the port's) */
		__u32 mtu = 1u << ((m & XHCA_QPA_MTU) ? a->mtu_shift : c->mtu_shift);
		int v6 = c->type == XHCA_QPT_UD ||
			 ((m & XHCA_QPA_REMOTE_IP) ? !xhca_ip_is_v4(a->remote_ip)
						   : !!(c->flags & XHCA_QPF_IPV6));
		__u32 need = (v6 ? 40 : 20) + 8 + 12 + 16 + 4 + mtu + 4, link = link_mtu(d);

		if (link && need > link)
			return errf(err, errlen, -EINVAL,
				    "qp modify: path MTU %u does not fit %s (link MTU %u; its largest "
				    "request takes %u bytes): raise it (ip link set %s mtu %u) or use "
				    "a smaller --mtu", mtu, d->ifname, link, need, d->ifname, need);
		if (mtu > xsk_max_path_mtu(d))
			return errf(err, errlen, -EINVAL,
				    "qp modify: path MTU %u: this kernel's AF_XDP lacks multi-buffer "
				    "(Linux 6.6), a frame must fit one UMEM frame: %u at most", mtu,
				    xsk_max_path_mtu(d));
	}
	return 0;
}

/* Addresses, Q_Key and P_Key (its index in the table into *pidx). */
static int modify_check_addr(struct xhcad *d, const struct xhca_qp_attr *a,
			     const struct xhca_qp_ctx *c, __u8 *pidx, char *err, size_t errlen)
{
	__u32 m = a->mask;
	int rc;

	if ((m & XHCA_QPA_QKEY) && a->qpn == XHCA_QPN_GSI && a->qkey != XHCA_GSI_QKEY)
		return errf(err, errlen, -EINVAL, "qp modify: QP1 always uses Q_Key 0x80010000");
	if ((m & (XHCA_QPA_LOCAL_IP | XHCA_QPA_REMOTE_IP)) && c->type == XHCA_QPT_UD)
		return errf(err, errlen, -EINVAL,
			    "qp modify: UD QPs have no remote address; set addresses on RC/UC QPs");
	if (m & (XHCA_QPA_LOCAL_IP | XHCA_QPA_REMOTE_IP)) {
		const __u8 *l = (m & XHCA_QPA_LOCAL_IP) ? a->local_ip : c->local_ip;
		const __u8 *r = (m & XHCA_QPA_REMOTE_IP) ? a->remote_ip : c->remote_ip;

		if (ip_set(l) && ip_set(r) && xhca_ip_is_v4(l) != xhca_ip_is_v4(r))
			return errf(err, errlen, -EINVAL,
				    "qp modify: QP 0x%06x would have an IPv%d local and an IPv%d "
				    "remote address; give both of one family",
				    a->qpn, xhca_ip_is_v4(l) ? 4 : 6, xhca_ip_is_v4(r) ? 4 : 6);
	}
	if (m & XHCA_QPA_PKEY) {
		if ((a->pkey & 0x7fff) == 0)
			return errf(err, errlen, -EINVAL, "qp modify: P_Key 0x%04x is invalid",
				    a->pkey);
		rc = pkey_index(d, a->pkey, pidx);
		if (rc)
			return errf(err, errlen, rc, "qp modify: P_Key table full (%d partitions)",
				    XHCA_PKEY_TBL_LEN);
	}
	return 0;
}

/* The new context; returns whether the receive state is set too. */
static int modify_ctx(const struct xhca_qp_attr *a, __u8 pidx, struct xhca_qp_ctx *c)
{
	__u32 m = a->mask;
	int set_rx = 0;

	if (m & XHCA_QPA_STATE) {
		if (a->state == XHCA_QPS_RESET) {
			c->rx_psn = 0;
			set_rx = 1;
		}
		c->state = a->state;
	}
	if (m & XHCA_QPA_EPSN) {
		c->rx_psn = a->epsn; /* and a UC message in progress is forgotten */
		set_rx = 1;
	}
	if (m & XHCA_QPA_MTU)
		c->mtu_shift = a->mtu_shift;
	if (m & XHCA_QPA_ACTION)
		c->action = a->action;
	if (m & XHCA_QPA_QKEY)
		c->qkey = a->qkey;
	if (m & XHCA_QPA_DEST_QPN)
		c->dest_qpn = a->dest_qpn;
	if (m & XHCA_QPA_ACK_EVERY)
		c->ack_every = a->ack_every;
	if (m & XHCA_QPA_RNR_TIMER)
		c->rnr_timer = a->rnr_timer;
	if (m & XHCA_QPA_ACCESS)
		c->access = (__u8)(XHCA_QP_ACCESS_SET | a->access);
	/* Off: no new message is offloaded; the ones already given to the
	 * proxy, and the rest of a message it was given, still go there, and
	 * every completion is still released in order. */
	if (m & XHCA_QPA_PROXY)
		c->flags = (c->flags & ~XHCA_QPF_PROXY) | (a->flags & XHCA_QPF_PROXY);
	if (m & XHCA_QPA_PKEY) {
		c->pkey = a->pkey;
		c->pkey_index = pidx;
	}
	if (m & XHCA_QPA_LOCAL_IP)
		memcpy(c->local_ip, a->local_ip, 16);
	if (m & XHCA_QPA_REMOTE_IP)
		memcpy(c->remote_ip, a->remote_ip, 16);
	if (m & (XHCA_QPA_LOCAL_IP | XHCA_QPA_REMOTE_IP))
		c->flags = (c->flags & ~XHCA_QPF_IPV6) | (a->flags & XHCA_QPF_IPV6);
	return set_rx;
}

/* The host side: the requester's settings, a new sequence, the error state. */
static void modify_host(struct xhcad *d, const struct xhca_qp_attr *a, __u32 lidx, int set_rx)
{
	__u32 m = a->mask;

	/* --recv-fast: off while xhcad alone may touch the receive queue */
	if ((m & XHCA_QPA_STATE) && a->state != XHCA_QPS_RTR && a->state != XHCA_QPS_RTS) {
		resp_final_ack(d, &d->qh[lidx], lidx);
		recv_fast_off(&d->qh[lidx]);
	}

	if (d->qh[lidx].sq) {
		struct sq_state *s = d->qh[lidx].sq;

		if (m & XHCA_QPA_TIMEOUT)
			s->timeout = a->timeout;
		if (m & XHCA_QPA_RETRY_CNT)
			s->retry_cnt = s->retry_left = a->retry_cnt;
		if (m & XHCA_QPA_RNR_RETRY)
			s->rnr_retry = s->rnr_left = a->rnr_retry;
		if (m & XHCA_QPA_MAX_RD_ATOMIC)
			s->max_rd_atomic = a->max_rd_atomic;
		if ((m & XHCA_QPA_STATE) && a->state == XHCA_QPS_RESET)
			sq_reset(d, &d->qh[lidx]);
		if (m & XHCA_QPA_SQ_PSN)
			sq_set_psn(d, s, a->sq_psn);
	}
	if ((m & XHCA_QPA_STATE) && a->state == XHCA_QPS_RESET)
		recv_reset(&d->qh[lidx]);
	if (set_rx) {
		/* a new sequence: the host side starts over too */
		d->qh[lidx].rcv.psn_valid = 0;
		d->qh[lidx].rcv.in_msg = 0;
		d->qh[lidx].rcv.discard = 0;
		resp_reset(&d->qh[lidx]);
	}
	if ((m & XHCA_QPA_STATE) && a->state == XHCA_QPS_ERR)
		qp_host_to_error(d, &d->qh[lidx]); /* verbs: posted buffers complete, flushed */
	if (m & XHCA_QPA_STATE)
		recv_fast_on(d, &d->qh[lidx], lidx); /* (in RTR or RTS: its receive side ready) */
	sq_direct(d, &d->qh[lidx]);
}

int qp_modify(struct xhcad *d, struct xhca_qp_attr *a, __u32 owner, char *err, size_t errlen)
{
	struct xhca_qp_ctx c;
	__u32 lidx, m = a->mask;
	__u8 pidx = 0;
	int rc, set_rx;

	rc = qp1_guard(d, "qp modify", a->qpn, err, errlen);
	rc = rc ?: qp_find(d, "qp modify", a->qpn, owner, &lidx, &c, err, errlen);
	if (rc)
		return rc;
	if ((m & XHCA_QPA_FLOWQ))
		return errf(err, errlen, -EINVAL,
			    "qp modify: the flow queue is set at create; destroy and create the QP");
	if ((m & XHCA_QPA_ACTION) && owner)
		return errf(err, errlen, -EINVAL,
			    "qp modify: an application's QP always delivers to it (action host)");
	/* Validate everything first: a failed modify changes nothing. */
	rc = modify_check_ctx(a, &c, err, errlen);
	rc = rc ?: modify_check_req(d, a, &c, lidx, err, errlen);
	rc = rc ?: modify_check_addr(d, a, &c, &pidx, err, errlen);
	if (rc)
		return rc;
	set_rx = modify_ctx(a, pidx, &c);
	qp_ctx_write(d, lidx, &c, set_rx);
	modify_host(d, a, lidx, set_rx);
	qp_ctx_read(d, lidx, &c); /* the ePSN as it is now */
	qp_attr_from_ctx(&c, a);
	qp_attr_from_host(d, &d->qh[lidx], a);
	return 0;
}

int qp_destroy(struct xhcad *d, __u32 qpn, __u32 owner, char *err, size_t errlen)
{
	struct xhca_qp_ctx c;
	struct qp_host *qh;
	__u32 lidx;
	int rc;

	rc = qp1_guard(d, "qp destroy", qpn, err, errlen);
	rc = rc ?: qp_find(d, "qp destroy", qpn, owner, &lidx, &c, err, errlen);
	if (rc)
		return rc;
	sq_drain(d, &d->qh[lidx]); /* (while the QP is still in its state) */
	/* CAM first: from here on new packets miss and are quietly dropped. */
	if (bpf_map_delete_elem(d->m.cam, &qpn))
		return errf(err, errlen, -errno, "qp destroy: QP CAM delete: %s", strerror(errno));
	resp_final_ack(d, &d->qh[lidx], lidx);
	qp_invalidate_slot(d, lidx, &c);
	bm_set(d->bitmap, lidx, 0);
	d->qps_in_use--;
	/* Frames still queued carry the old generation: xhcad discards them
	 * as stale. The receive queue's memory goes with its owner's handle;
	 * destroyed by someone else, the ring is marked dead and stays until
	 * the session frees it or ends. */
	qh = &d->qh[lidx];
	pd_ref(d, qh->pd, -1);
	mcast_qp_gone(d, lidx);
	filter_clear(d, lidx);
	{
		/* Detach first: it marks the ring dead, in its memory. */
		__u32 rq_alloc = qh->rcv.rq && qh->owner == owner ? qh->rcv.rq_alloc : 0;
		__u32 sq_alloc = qh->sq && qh->owner == owner ? qh->sq->alloc : 0;
		__u32 bufs = qh->rcv.cli_bufs;

		sq_detach(d, qh);
		qp_host_detach(d, lidx);
		if (rq_alloc)
			mem_free(d, rq_alloc, owner);
		if (sq_alloc)
			mem_free(d, sq_alloc, owner);
		if (bufs)
			mem_free(d, bufs, 0);
	}
	pr_info("destroyed QP 0x%06x\n", qpn);
	return 0;
}
