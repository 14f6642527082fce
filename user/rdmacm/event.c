/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdma_get_cm_event: the next record of xhcad on the channel, made the
 * event rdma-core's librdmacm would hand out (rdma_get_cm_event of its
 * cma.c): a CONNECT_REQUEST brings a new id; an active id with a QP turns
 * CONNECT_RESPONSE into ESTABLISHED itself (QP to RTR and RTS, then the
 * RTU), or CONNECT_ERROR when the QP refuses, after which the connection's
 * REJECTED and DISCONNECTED are the library's and not handed out; REJECTED
 * moves the QP to the error state; MULTICAST_JOIN attaches the id's QP to
 * the group. Events of ids that are gone are dropped. Synchronous ids (no
 * channel given) wait here for the event of each call (xcm_complete).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xhca/ctl.h>
#include "xcm.h"

/* The active side's answer to a REP: its QP (if it has one) to RTR and RTS,
 * then the RTU; the QP to the error state if any step fails. */
int xcm_conn_resp(struct xcm_id *i)
{
	uint32_t xid = xcm_id_xid(i);
	int rc = xcm_qp_ready(i);

	if (!rc)
		rc = xcm_id_call(i, XHCA_CTL_CM_ESTABLISH, &xid, sizeof(xid));
	if (rc)
		xcm_qp_err(i);
	return rc;
}

/* The address handle of a UD peer (SIDR's ESTABLISHED, a UD request). */
static void ud_ah(struct xcm_id *i, struct rdma_cm_event *e)
{
	e->param.ud.ah_attr = i->conn.ah;
}

static int on_response(struct xcm_id *i, const struct xhca_cm_event *x, struct rdma_cm_event *e)
{
	int rc;

	xcm_conn_learn(&i->conn, x, 1);
	if (!i->id.qp)
		return 1; /* the application moves its QP, then rdma_establish */
	rc = xcm_conn_resp(i);
	e->event = rc ? RDMA_CM_EVENT_CONNECT_ERROR : RDMA_CM_EVENT_ESTABLISHED;
	e->status = rc;
	i->connect_error = !!rc;
	return 1;
}

/* A MULTICAST_JOIN: the first group not reported yet, the id's QP
 * attached to it (librdmacm's ucma_process_join). */
static int on_join(struct xcm_id *i, struct rdma_cm_event *e)
{
	struct xcm_mc *m;

	for (m = i->mcs; m && m->reported; m = m->next)
		;
	if (!m)
		return 0;
	m->reported = 1;
	xcm_ah_fill(&e->param.ud.ah_attr, m->ip, m->sgid_index, i->tos, 0);
	e->param.ud.private_data = m->context;
	e->param.ud.private_data_len = 0;
	e->param.ud.qp_num = 0xffffff;
	e->param.ud.qkey = i->conn.qkey;
	if (i->id.qp && !m->sendonly && !e->status)
		e->status = -ibv_attach_mcast(i->id.qp, &e->param.ud.ah_attr.grh.dgid, 0);
	return 1;
}

/* What the library does with an event of id i before handing it out:
 * 1 to hand it out, 0 to keep it. */
static int process(struct xcm_id *i, const struct xhca_cm_event *x, struct rdma_cm_event *e)
{
	switch (x->event) {
	case XHCA_CM_EV_CONNECT_RESPONSE:
		return on_response(i, x, e);
	case XHCA_CM_EV_ESTABLISHED:
		if (i->conn.ud)
			ud_ah(i, e);
		return 1;
	case XHCA_CM_EV_REJECTED:
		if (i->connect_error)
			return 0;
		if (!i->conn.ud)
			xcm_qp_err(i);
		return 1;
	case XHCA_CM_EV_DISCONNECTED:
		return !i->connect_error;
	case RDMA_CM_EVENT_MULTICAST_JOIN:
		return on_join(i, e);
	default:
		return 1;
	}
}

/* A CONNECT_REQUEST: the new id xhcad made, the listener's; counted on
 * the listener (rdma_destroy_id of the listener waits for its ack). */
static struct xcm_event *on_request(struct xcm_dev *d, const struct xhca_cm_event *x,
				    struct xcm_event *e)
{
	struct xcm_id *l = xcm_id_find(d, x->listen_id), *n;

	if (!l) {
		xcm_id_drop_xid(d, x->id);
		free(e);
		return NULL;
	}
	e->owner = l;
	n = xcm_id_passive(l, d, x);
	if (!n) {
		xcm_id_drop_xid(d, x->id);
		xcm_event_free(&e->ev);
		return NULL;
	}
	xcm_event_conv(x, n->conn.ud, &e->ev, e->pdata);
	e->ev.id = &n->id;
	e->ev.listen_id = &l->id;
	if (n->conn.ud)
		ud_ah(n, &e->ev);
	/* a synchronous listener's requests each get a channel of their own,
	 * as librdmacm's (rdma_get_request) */
	if (l->sync && rdma_migrate_id(&n->id, NULL))
		xcm_log("connect request: no channel of its own for the new id: %s",
			strerror(errno));
	return e;
}

static struct xcm_event *make_event(struct xcm_dev *d, const struct xhca_cm_event *x)
{
	struct xcm_event *e = calloc(1, sizeof(*e));
	struct xcm_id *i;

	if (!e)
		return NULL;
	if (x->event == XHCA_CM_EV_CONNECT_REQUEST)
		return on_request(d, x, e);
	i = xcm_id_find(d, x->id);
	if (!i) {
		free(e);
		return NULL;
	}
	e->owner = i;
	e->ev.id = &i->id;
	xcm_event_conv(x, i->conn.ud, &e->ev, e->pdata);
	if (process(i, x, &e->ev))
		return e;
	xcm_event_free(&e->ev);
	return NULL;
}

XCM_EXPORT int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	if (!channel || !event)
		return xcm_err(EINVAL);
	for (;;) {
		struct xhca_cm_event x;
		struct xcm_event *e;
		struct xcm_dev *d;
		int rc = xcm_chan_read(xcm_chan(channel), &x, &d);

		if (rc)
			return xcm_err(rc);
		e = make_event(d, &x);
		if (e) {
			*event = &e->ev;
			return 0;
		}
	}
}

XCM_EXPORT int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	if (!event)
		return xcm_err(EINVAL);
	xcm_event_free(event);
	return 0;
}

/* A synchronous id's call: its event, kept in id->event until the next
 * call (or rdma_destroy_id); 0, or -errno from the event's status
 * (REJECTED: -ECONNREFUSED), as librdmacm's ucma_complete. */
int xcm_complete(struct xcm_id *i)
{
	struct rdma_cm_event *e;

	if (!i->sync)
		return 0;
	if (i->id.event) {
		xcm_event_free(i->id.event);
		i->id.event = NULL;
	}
	if (rdma_get_cm_event(i->id.channel, &i->id.event))
		return -errno;
	e = i->id.event;
	if (!e->status)
		return 0;
	if (e->event == RDMA_CM_EVENT_REJECTED)
		return -ECONNREFUSED;
	return e->status < 0 ? e->status : -e->status;
}
