/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The synchronous helpers of rdma_verbs.h's programs, as librdmacm's:
 * rdma_create_ep makes a synchronous id from rdma_getaddrinfo's answer
 * (passive: bound, its QP attributes kept for the requests; active:
 * address and route resolved, the QP made), rdma_get_request takes a
 * passive endpoint's next CONNECT_REQUEST (its id on a channel of its own,
 * with a QP when rdma_create_ep was given attributes).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "xcm.h"

static int passive_ep(struct rdma_cm_id *id, struct rdma_addrinfo *res, struct ibv_pd *pd,
		      struct ibv_qp_init_attr *qp_init_attr)
{
	struct xcm_id *i = xcm_id(id);

	if (rdma_bind_addr(id, res->ai_src_addr))
		return -errno;
	id->pd = pd;
	if (qp_init_attr) {
		i->qp_init_attr = malloc(sizeof(*qp_init_attr));
		if (!i->qp_init_attr)
			return -ENOMEM;
		*i->qp_init_attr = *qp_init_attr;
		i->qp_init_attr->qp_type = (enum ibv_qp_type)res->ai_qp_type;
	}
	return 0;
}

static int active_ep(struct rdma_cm_id *id, struct rdma_addrinfo *res, struct ibv_pd *pd,
		     struct ibv_qp_init_attr *qp_init_attr)
{
	struct xcm_id *i = xcm_id(id);

	if (rdma_resolve_addr(id, res->ai_src_addr, res->ai_dst_addr, XCM_CONNECT_TIMEOUT_MS) ||
	    rdma_resolve_route(id, XCM_CONNECT_TIMEOUT_MS))
		return -errno;
	if (qp_init_attr) {
		qp_init_attr->qp_type = (enum ibv_qp_type)res->ai_qp_type;
		if (rdma_create_qp(id, pd, qp_init_attr))
			return -errno;
	}
	if (res->ai_connect_len && res->ai_connect) {
		if (res->ai_connect_len > sizeof(i->connect))
			return -EINVAL;
		memcpy(i->connect, res->ai_connect, res->ai_connect_len);
		i->connect_len = (uint8_t)res->ai_connect_len;
	}
	return 0;
}

XCM_EXPORT int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res,
			      struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cm_id;
	int rc;

	if (!id || !res)
		return xcm_err(EINVAL);
	if (res->ai_route_len)
		return xcm_err(EOPNOTSUPP); /* paths of ibacm: none on RoCE here */
	rc = xcm_create_id(NULL, &cm_id, NULL, (enum rdma_port_space)res->ai_port_space,
			   (enum ibv_qp_type)res->ai_qp_type);
	if (rc)
		return xcm_err(rc);
	rc = res->ai_flags & RAI_PASSIVE ? passive_ep(cm_id, res, pd, qp_init_attr)
					 : active_ep(cm_id, res, pd, qp_init_attr);
	if (rc) {
		rdma_destroy_ep(cm_id);
		return xcm_err(rc);
	}
	*id = cm_id;
	return 0;
}

XCM_EXPORT void rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (id->qp)
		rdma_destroy_qp(id);
	if (id->srq)
		rdma_destroy_srq(id);
	rdma_destroy_id(id);
}

XCM_EXPORT int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct xcm_id *l = xcm_id(listen);
	struct rdma_cm_event *e;
	int rc = 0;

	if (!listen || !id || !l->sync)
		return xcm_err(EINVAL);
	if (listen->event) {
		rdma_ack_cm_event(listen->event);
		listen->event = NULL;
	}
	if (rdma_get_cm_event(listen->channel, &e))
		return -1;
	if (e->event == RDMA_CM_EVENT_REJECTED)
		rc = -ECONNREFUSED;
	else if (e->status)
		rc = e->status < 0 ? e->status : -e->status;
	else if (e->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		rc = -EINVAL;
	if (!rc && l->qp_init_attr) {
		struct ibv_qp_init_attr attr = *l->qp_init_attr;

		if (rdma_create_qp(e->id, listen->pd, &attr))
			rc = -errno;
	}
	if (rc) {
		listen->event = e;
		return xcm_err(rc);
	}
	*id = e->id;
	(*id)->event = e;
	return 0;
}
