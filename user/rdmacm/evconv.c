/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhcad's events (struct xhca_cm_event, cm.h) as rdma_cm's: what an
 * application reads in struct rdma_cm_event, and what the library keeps of
 * them for the QP's moves. xhcad gives the peer's values as its message
 * carried them; rdma_cm gives them from the receiver's side (ib_cm swaps
 * them): the peer's initiator depth is our responder resources and the
 * other way round. Pure: the unit tests check it.
 */
#include <string.h>
#include "xcm.h"

/* cm.h's path MTU (IB encoding, 1 = 256 ... 5 = 4096) as enum ibv_mtu,
 * whose values are the same; 0 where there is none. */
uint8_t xcm_mtu_of_ib(uint8_t ib_mtu)
{
	return ib_mtu >= IBV_MTU_256 && ib_mtu <= IBV_MTU_4096 ? ib_mtu : 0;
}

static void conv_conn(const struct xhca_cm_event *x, struct rdma_conn_param *p,
		      const uint8_t *pdata, uint8_t n)
{
	p->private_data = n ? pdata : NULL;
	p->private_data_len = n;
	p->responder_resources = x->init_depth;
	p->initiator_depth = x->resp_res;
	p->flow_control = x->flow_control;
	p->retry_count = x->retry_count;
	p->rnr_retry_count = x->rnr_retry;
	p->srq = x->srq;
	p->qp_num = x->qpn;
}

/*
 * x as e (its type, status and parameters; the ids are the caller's), the
 * private data copied into pdata, which the event owns. On a UD id
 * (SIDR) the parameters are param.ud's (the address handle is the
 * caller's), and a REJECTED is UNREACHABLE with the SIDR status, as Linux's
 * rdma_cm reports a SIDR_REP that refuses.
 */
void xcm_event_conv(const struct xhca_cm_event *x, int ud, struct rdma_cm_event *e,
		    uint8_t pdata[XCM_MAX_PDATA])
{
	uint8_t n = x->pdata_len > XHCA_CM_PDATA_MAX ? XHCA_CM_PDATA_MAX : x->pdata_len;

	memset(&e->param, 0, sizeof(e->param));
	e->event = (enum rdma_cm_event_type)x->event;
	e->status = x->status;
	if (n)
		memcpy(pdata, x->pdata, n);
	if (!ud) {
		conv_conn(x, &e->param.conn, pdata, n);
		return;
	}
	if (e->event == RDMA_CM_EVENT_REJECTED)
		e->event = RDMA_CM_EVENT_UNREACHABLE;
	e->param.ud.private_data = n ? pdata : NULL;
	e->param.ud.private_data_len = n;
	e->param.ud.qp_num = x->qpn;
	e->param.ud.qkey = x->qkey;
}

/*
 * What a CONNECT_REQUEST (passive) or CONNECT_RESPONSE (active; SIDR's
 * ESTABLISHED) tells of the connection: the peer's QPN and starting PSN
 * (the first we send), its RNR retry count, the ACK timeout xhcad worked
 * out; the passive side takes the REQ's retry count and path MTU too (no
 * negotiation, as ib_cm), the active side keeps its own. Responder
 * resources and initiator depth from our side (the caller bounds them by
 * the device's on the passive side, as librdmacm).
 */
void xcm_conn_learn(struct xcm_conn *c, const struct xhca_cm_event *x, int active)
{
	uint8_t mtu = xcm_mtu_of_ib(x->mtu);

	c->have = 1;
	c->remote_qpn = x->qpn & 0xffffff;
	c->sq_psn = x->psn & 0xffffff;
	c->rnr_retry = x->rnr_retry & 7;
	c->timeout = x->ack_timeout ? x->ack_timeout & 0x1f : XCM_ACK_TIMEOUT;
	c->resp_res = x->init_depth;
	c->init_depth = x->resp_res;
	if (!active) {
		c->retry_count = x->retry_count & 7;
		if (mtu)
			c->mtu = mtu;
	} else if (mtu && mtu < c->mtu) {
		c->mtu = mtu;
	}
}
