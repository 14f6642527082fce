/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The CLI's receive side: a QP made with `xhca qp create --cq` gets receive
 * buffers of xhcad's, posted here; `xhca cq poll` takes its completions out
 * of the CQ, with the start of each message, and posts the buffers again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "xhcad_mech.h"

void cli_post(struct xhcad *d, struct qp_host *qh, __u32 i)
{
	struct hm_alloc *a = hm_find(d, qh->rcv.cli_bufs);
	__u32 prod = qh->rcv.rq->prod;
	struct xhca_rwqe w = {
		.wr_id = i, .off = (__u64)i * qh->rcv.cli_buf_size, .len = qh->rcv.cli_buf_size,
		.alloc = qh->rcv.cli_bufs,
	};

	if (!a || prod - qh->rcv.rq->cons >= qh->rcv.rq_depth)
		return;
	qh->rcv.rqe[prod & (qh->rcv.rq_depth - 1)] = w;
	__atomic_store_n(&qh->rcv.rq->prod, prod + 1, __ATOMIC_RELEASE);
}

/* The CLI QP a completion is for, if it has xhcad's buffers. */
static struct qp_host *cli_qp(struct xhcad *d, __u32 qpn)
{
	struct xhca_qp_ctx c;
	char err[XHCA_ERRMSG_LEN];
	__u32 lidx;

	if (qp_find(d, "cq poll", qpn, 0, &lidx, &c, err, sizeof(err)))
		return NULL;
	return d->qh[lidx].valid && d->qh[lidx].rcv.cli_bufs ? &d->qh[lidx] : NULL;
}

int cq_poll(struct xhcad *d, const struct xhca_cq_poll *r, struct xhca_cq_entry **out, __u32 *n,
	    char *err, size_t errlen)
{
	struct cq *cq = cq_find(d, r->cq);
	struct xhca_cq_entry *v;
	__u32 cons, prod, k = 0, max = r->max ? r->max : 64;

	if (!cq || cq->owner) {
		snprintf(err, errlen, cq ? "cq poll: CQ %u is an application's: it polls it"
					 : "cq poll: no CQ %u; list them with: xhca cq show", r->cq);
		return cq ? -EPERM : -ENOENT;
	}
	if (max > 4096)
		max = 4096;
	cons = cq->ring->cons;
	prod = __atomic_load_n(&cq->ring->prod, __ATOMIC_ACQUIRE);
	if (prod - cons < max)
		max = prod - cons;
	v = calloc(max ? max : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (; k < max; k++) {
		const struct xhca_cqe *c = &cq->e[(cons + k) & (cq->depth - 1)];
		/* the completions that took a buffer (an error in a proxy CQ's
		 * gap and a flushed one do not want it back) */
		int took = (c->opcode == XHCA_WC_RECV || c->opcode == XHCA_WC_RECV_RDMA_WITH_IMM) &&
			   c->status != XHCA_WC_RESP_TIMEOUT_ERR && c->status != XHCA_WC_WR_FLUSH_ERR;
		struct qp_host *qh = took ? cli_qp(d, c->qp_num) : NULL;

		v[k].c = *c;
		if (!qh || c->wr_id >= qh->rcv.rq_depth)
			continue;
		if (c->opcode == XHCA_WC_RECV && !c->status && r->dump) {
			__u32 len = c->byte_len < r->dump ? c->byte_len : r->dump;

			if (len > XHCA_CQ_DUMP_MAX)
				len = XHCA_CQ_DUMP_MAX;
			hm_read(d, hm_find(d, qh->rcv.cli_bufs), c->wr_id * qh->rcv.cli_buf_size, v[k].data,
				len);
			v[k].data_len = len;
		}
		cli_post(d, qh, (__u32)c->wr_id);
	}
	__atomic_store_n(&cq->ring->cons, cons + k, __ATOMIC_RELEASE);
	if (k)
		flowq_unblock(d, cq); /* room again: what waited for it goes on */
	*out = v;
	*n = k;
	return 0;
}
