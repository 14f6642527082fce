/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * An id's QP and SRQ, as librdmacm makes them: on the id's device (its PD,
 * or one of the device's), with CQs and completion channels of their own
 * when the application gives none; an RC QP goes to INIT at once, a UD QP
 * to RTS (it needs nobody). The QP's moves to RTR and RTS take the values
 * of the connection (qpattr.c), the RDMA_OPTION_ID_ACK_TIMEOUT the
 * application set over the ACK timeout.
 */
#include <errno.h>
#include <string.h>
#include "xcm.h"

static int id_qp_attr(struct xcm_id *i, struct ibv_qp_attr *a, int *mask)
{
	int rc = xcm_qp_attr(&i->conn, a, mask);

	if (!rc && a->qp_state == IBV_QPS_RTS && i->ack_timeout && !i->conn.ud)
		a->timeout = i->ack_timeout;
	return rc;
}

XCM_EXPORT int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr,
				 int *qp_attr_mask)
{
	int rc;

	if (!id || !qp_attr || !qp_attr_mask)
		return xcm_err(EINVAL);
	rc = id_qp_attr(xcm_id(id), qp_attr, qp_attr_mask);
	return rc ? xcm_err(rc) : 0;
}

/* The id's QP (none: nothing to do) to state with the connection's
 * values: 0 or -errno. */
int xcm_qp_move(struct xcm_id *i, enum ibv_qp_state state)
{
	struct ibv_qp_attr a = { .qp_state = state };
	int mask, rc;

	if (!i->id.qp)
		return 0;
	rc = id_qp_attr(i, &a, &mask);
	if (!rc)
		rc = -ibv_modify_qp(i->id.qp, &a, mask);
	if (rc)
		xcm_log("qp 0x%06x to state %d: %s", i->id.qp->qp_num, state, strerror(-rc));
	return rc;
}

/* RC: INIT again (the access a CM exchange allows), RTR, RTS. */
int xcm_qp_ready(struct xcm_id *i)
{
	if (i->conn.ud)
		return 0;
	return xcm_qp_move(i, IBV_QPS_INIT) ?: xcm_qp_move(i, IBV_QPS_RTR) ?:
		xcm_qp_move(i, IBV_QPS_RTS);
}

int xcm_qp_err(struct xcm_id *i)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	return i->id.qp ? -ibv_modify_qp(i->id.qp, &a, IBV_QP_STATE) : 0;
}

static int make_cq(struct rdma_cm_id *id, uint32_t n, struct ibv_comp_channel **ch,
		   struct ibv_cq **cq)
{
	*ch = ibv_create_comp_channel(id->verbs);
	if (!*ch)
		return -errno;
	*cq = ibv_create_cq(id->verbs, (int)n, id, *ch, 0);
	if (!*cq) {
		int e = errno;

		ibv_destroy_comp_channel(*ch);
		*ch = NULL;
		return -e;
	}
	return 0;
}

/* The CQs the library made for the id (librdmacm's ucma_destroy_cqs). */
static void drop_cqs(struct rdma_cm_id *id)
{
	if (id->recv_cq) {
		ibv_destroy_cq(id->recv_cq);
		if (id->send_cq && id->send_cq != id->recv_cq)
			ibv_destroy_cq(id->send_cq);
	} else if (id->send_cq) {
		ibv_destroy_cq(id->send_cq);
	}
	id->recv_cq = id->send_cq = NULL;
	if (id->recv_cq_channel) {
		ibv_destroy_comp_channel(id->recv_cq_channel);
		if (id->send_cq_channel && id->send_cq_channel != id->recv_cq_channel)
			ibv_destroy_comp_channel(id->send_cq_channel);
	} else if (id->send_cq_channel) {
		ibv_destroy_comp_channel(id->send_cq_channel);
	}
	id->recv_cq_channel = id->send_cq_channel = NULL;
}

static int make_cqs(struct rdma_cm_id *id, const struct ibv_qp_init_attr_ex *a)
{
	int rc = 0;

	if (!a->recv_cq && !id->recv_cq && a->cap.max_recv_wr)
		rc = make_cq(id, a->cap.max_recv_wr, &id->recv_cq_channel, &id->recv_cq);
	if (!rc && !a->send_cq && !id->send_cq && a->cap.max_send_wr)
		rc = make_cq(id, a->cap.max_send_wr, &id->send_cq_channel, &id->send_cq);
	if (rc)
		drop_cqs(id);
	return rc;
}

/* The PD of a QP or SRQ: the application's (of the id's device), the
 * id's, or the device's own. */
static int pick_pd(struct rdma_cm_id *id, struct ibv_pd **pd)
{
	struct xcm_dev *d = xcm_dev_of_verbs(id->verbs);

	if (*pd)
		return (*pd)->context == id->verbs ? 0 : -EINVAL;
	*pd = id->pd ? id->pd : d ? xcm_dev_pd(d) : NULL;
	return *pd ? 0 : -ENOMEM;
}

static int qp_first_states(struct xcm_id *i)
{
	if (!i->conn.ud)
		return xcm_qp_move(i, IBV_QPS_INIT);
	return xcm_qp_move(i, IBV_QPS_INIT) ?: xcm_qp_move(i, IBV_QPS_RTR) ?:
		xcm_qp_move(i, IBV_QPS_RTS);
}

XCM_EXPORT int rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	struct xcm_id *i = xcm_id(id);
	struct ibv_qp *qp;
	int rc;

	if (!id || !attr || !id->verbs || id->qp)
		return xcm_err(EINVAL);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD))
		attr->pd = NULL;
	rc = pick_pd(id, &attr->pd);
	if (!rc && ((id->recv_cq && attr->recv_cq && id->recv_cq != attr->recv_cq) ||
		    (id->send_cq && attr->send_cq && id->send_cq != attr->send_cq)))
		rc = -EINVAL;
	if (!rc)
		rc = make_cqs(id, attr);
	if (rc)
		return xcm_err(rc);
	attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
	attr->send_cq = attr->send_cq ? attr->send_cq : id->send_cq;
	attr->recv_cq = attr->recv_cq ? attr->recv_cq : id->recv_cq;
	attr->srq = attr->srq ? attr->srq : id->srq;
	qp = ibv_create_qp_ex(id->verbs, attr);
	if (!qp) {
		rc = -errno;
		drop_cqs(id);
		return xcm_err(rc);
	}
	id->qp = qp;
	rc = qp_first_states(i);
	if (rc) {
		ibv_destroy_qp(qp);
		id->qp = NULL;
		drop_cqs(id);
		return xcm_err(rc);
	}
	id->pd = qp->pd;
	return 0;
}

XCM_EXPORT int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
			      struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex ex = {};
	int rc;

	if (!qp_init_attr)
		return xcm_err(EINVAL);
	memcpy(&ex, qp_init_attr, sizeof(*qp_init_attr));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd ? pd : id->pd;
	rc = rdma_create_qp_ex(id, &ex);
	memcpy(qp_init_attr, &ex, sizeof(*qp_init_attr));
	return rc;
}

XCM_EXPORT void rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (id->qp)
		ibv_destroy_qp(id->qp);
	id->qp = NULL;
	drop_cqs(id);
}

XCM_EXPORT int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq *srq;
	int rc;

	if (!id || !attr || !id->verbs || id->srq)
		return xcm_err(EINVAL);
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE)) {
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_TYPE;
		attr->srq_type = IBV_SRQT_BASIC;
	}
	if (attr->srq_type != IBV_SRQT_BASIC)
		return xcm_err(EOPNOTSUPP); /* XRC, tag matching: not in xhca's verbs */
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD))
		attr->pd = NULL;
	rc = pick_pd(id, &attr->pd);
	if (rc)
		return xcm_err(rc);
	attr->comp_mask |= IBV_SRQ_INIT_ATTR_PD;
	srq = ibv_create_srq_ex(id->verbs, attr);
	if (!srq)
		return -1;
	id->srq = srq;
	id->pd = srq->pd;
	return 0;
}

XCM_EXPORT int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd,
			       struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ex = {};
	int rc;

	if (!attr)
		return xcm_err(EINVAL);
	memcpy(&ex, attr, sizeof(*attr));
	ex.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
	ex.srq_type = IBV_SRQT_BASIC;
	ex.pd = pd;
	rc = rdma_create_srq_ex(id, &ex);
	memcpy(attr, &ex, sizeof(*attr));
	return rc;
}

XCM_EXPORT void rdma_destroy_srq(struct rdma_cm_id *id)
{
	if (id->srq)
		ibv_destroy_srq(id->srq);
	id->srq = NULL;
}
