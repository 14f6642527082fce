/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Connections, as rdma-core's librdmacm makes them (cm_spec 4.7): the
 * active side's REQ (XHCA_CTL_CM_CONNECT; SIDR_REQ on a UD id) with its
 * QP's number and the PSN it expects first (rdma_cm's seq_num), the
 * passive side's QP to RTR and RTS and then its REP (XHCA_CTL_CM_ACCEPT),
 * REJ, and the disconnection (the QP to the error state, then DREQ, or the
 * DREP owed). Responder resources and initiator depth of 0xFF are the
 * device's most; over the device's most is EINVAL (RDMA_PS_TCP, as
 * librdmacm checks). Retry counts are at most 7; private data at most what
 * the message holds beside rdma_cm's own (REQ 56, REP 196, REJ 148, SIDR
 * 180 and 136): over it is EINVAL.
 */
#include <errno.h>
#include <string.h>
#include <xhca/ctl.h>
#include "xcm.h"

static uint8_t at_most7(uint8_t v)
{
	return v > 7 ? 7 : v;
}

/* librdmacm's ucma_valid_param. */
static int valid_param(struct xcm_id *i, const struct rdma_conn_param *p)
{
	const struct xcm_dev *d = i->dev;

	if (i->id.ps != RDMA_PS_TCP)
		return 0;
	if (!i->id.qp && !p)
		return -EINVAL;
	if (!p)
		return 0;
	if (p->responder_resources != RDMA_MAX_RESP_RES && p->responder_resources > d->max_resp_res)
		return -EINVAL;
	if (p->initiator_depth != RDMA_MAX_INIT_DEPTH && p->initiator_depth > d->max_init_depth)
		return -EINVAL;
	return 0;
}

/* The part of a REQ or REP both sides fill alike: the QP, our values, the
 * addresses of the route, the private data (after rdma_create_ep's). */
static int conn_fill(struct xcm_id *i, const struct rdma_conn_param *p, size_t max,
		     struct xhca_cm_conn *c)
{
	const struct rdma_addr *a = &i->id.route.addr;
	size_t n = p && p->private_data ? p->private_data_len : 0;

	if (i->connect_len + n > max)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	c->id = xcm_id_xid(i);
	c->qpn = i->id.qp ? i->id.qp->qp_num : p ? p->qp_num : 0;
	c->srq = i->id.qp ? !!i->id.qp->srq : p ? p->srq : 0;
	c->psn = i->conn.rq_psn;
	c->qkey = i->conn.qkey;
	xcm_ip_of(&a->src_addr, c->src_ip, &c->src_port);
	xcm_ip_of(&a->dst_addr, c->dst_ip, &c->dst_port);
	c->resp_res = i->conn.resp_res;
	c->init_depth = i->conn.init_depth;
	c->retry_count = p ? at_most7(p->retry_count) : 7;
	c->rnr_retry = p ? at_most7(p->rnr_retry_count) : 7;
	c->flow_control = p ? p->flow_control : 0;
	c->mtu = i->conn.mtu;
	memcpy(c->pdata, i->connect, i->connect_len);
	if (n)
		memcpy(c->pdata + i->connect_len, p->private_data, n);
	c->pdata_len = (uint8_t)(i->connect_len + n);
	return 0;
}

XCM_EXPORT int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct xcm_id *i = xcm_id(id);
	const struct rdma_conn_param *p = conn_param;
	struct xhca_cm_conn c;
	int rc;

	if (!id || !i->dev || !xcm_id_xid(i) || !id->route.num_paths)
		return xcm_err(EINVAL); /* the route first */
	rc = valid_param(i, p);
	if (rc)
		return xcm_err(rc);
	i->conn.init_depth = p && p->initiator_depth != RDMA_MAX_INIT_DEPTH
				     ? p->initiator_depth : i->dev->max_init_depth;
	i->conn.resp_res = p && p->responder_resources != RDMA_MAX_RESP_RES
				   ? p->responder_resources : i->dev->max_resp_res;
	rc = conn_fill(i, p, i->conn.ud ? XCM_SIDR_REQ_PDATA : XCM_REQ_PDATA, &c);
	if (rc)
		return xcm_err(rc);
	i->conn.retry_count = c.retry_count; /* our QP's, in RTS */
	i->connect_error = 0;
	rc = xcm_id_call(i, XHCA_CTL_CM_CONNECT, &c, sizeof(c));
	i->connect_len = 0;
	if (!rc)
		rc = xcm_complete(i);
	return rc ? xcm_err(rc) : 0;
}

/* The passive side's values: the application's, or (NULL, 0xFF) those of
 * the request, bounded by the device's. */
static void accept_values(struct xcm_id *i, const struct rdma_conn_param *p)
{
	if (p && p->initiator_depth != RDMA_MAX_INIT_DEPTH)
		i->conn.init_depth = p->initiator_depth;
	if (p && p->responder_resources != RDMA_MAX_RESP_RES)
		i->conn.resp_res = p->responder_resources;
}

XCM_EXPORT int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct xcm_id *i = xcm_id(id);
	const struct rdma_conn_param *p = conn_param;
	struct xhca_cm_conn c;
	int rc;

	if (!id || !i->dev || !xcm_id_xid(i) || !i->conn.have)
		return xcm_err(EINVAL); /* a CONNECT_REQUEST's id */
	rc = valid_param(i, p);
	if (rc)
		return xcm_err(rc);
	accept_values(i, p);
	rc = conn_fill(i, p, i->conn.ud ? XCM_SIDR_REP_PDATA : XCM_REP_PDATA, &c);
	if (rc)
		return xcm_err(rc);
	/* able to receive before the peer's RTU and first SEND come */
	rc = xcm_qp_ready(i);
	if (!rc)
		rc = xcm_id_call(i, XHCA_CTL_CM_ACCEPT, &c, sizeof(c));
	if (rc) {
		xcm_qp_err(i);
		return xcm_err(rc);
	}
	if (i->conn.ud)
		return 0; /* SIDR_REP: no event follows */
	rc = xcm_complete(i);
	return rc ? xcm_err(rc) : 0;
}

XCM_EXPORT int rdma_reject(struct rdma_cm_id *id, const void *private_data,
			   uint8_t private_data_len)
{
	struct xcm_id *i = xcm_id(id);
	struct xhca_cm_reject r = { .pdata_len = private_data ? private_data_len : 0 };
	int rc;

	if (!id || r.pdata_len > (i->conn.ud ? XCM_SIDR_REP_PDATA : XCM_REJ_PDATA))
		return xcm_err(EINVAL);
	r.id = xcm_id_xid(i);
	if (r.pdata_len)
		memcpy(r.pdata, private_data, r.pdata_len);
	rc = xcm_id_call(i, XHCA_CTL_CM_REJECT, &r, sizeof(r));
	return rc ? xcm_err(rc) : 0;
}

/* The QP to the error state first (its posted requests flush: rping's
 * completion thread ends on that), then DREQ, or the DREP owed. */
XCM_EXPORT int rdma_disconnect(struct rdma_cm_id *id)
{
	struct xcm_id *i = xcm_id(id);
	uint32_t xid;
	int rc;

	if (!id || !(xid = xcm_id_xid(i)))
		return xcm_err(EINVAL);
	rc = xcm_qp_err(i);
	if (!rc)
		rc = xcm_id_call(i, XHCA_CTL_CM_DISCONNECT, &xid, sizeof(xid));
	if (!rc)
		rc = xcm_complete(i);
	return rc ? xcm_err(rc) : 0;
}

/* After CONNECT_RESPONSE on an id without a QP: the application moved
 * its QP (rdma_init_qp_attr); the RTU goes. */
XCM_EXPORT int rdma_establish(struct rdma_cm_id *id)
{
	int rc;

	if (!id || id->qp || !xcm_id(id)->conn.have)
		return xcm_err(EINVAL);
	rc = xcm_conn_resp(xcm_id(id));
	return rc ? xcm_err(rc) : 0;
}

/* IBV_EVENT_COMM_EST (data came before the RTU): accepted; xhcad's CM
 * establishes the connection on the RTU, which the peer sends again on a
 * duplicate REP. Other events are not the CM's. */
XCM_EXPORT int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	if (!id || event != IBV_EVENT_COMM_EST)
		return xcm_err(EINVAL);
	return 0;
}
