/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The QP attributes of each state, from a connection's values: what
 * rdma_init_qp_attr gives and what the library itself sets when it moves
 * an id's QP, as Linux's ib_cm computes them and rdma_cm overrides them
 * (cm_spec 4.8):
 *   INIT  pkey index 0, port 1; RC: access REMOTE_WRITE (and REMOTE_READ,
 *         REMOTE_ATOMIC when we give the peer responder resources) once a
 *         CM exchange happened, none before; UD: the Q_Key.
 *   RTR   RC: the path (GRH to the peer's GID), path MTU, the peer's QPN,
 *         our own starting PSN (sent in our REQ or REP), max_dest_rd_atomic
 *         our responder resources, min_rnr_timer 0; UD: the state alone.
 *   RTS   RC: the peer's starting PSN, retry counts, max_rd_atomic our
 *         initiator depth, the local ACK timeout; UD: SQ PSN 0.
 * Pure: the unit tests check these values.
 */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include "xcm.h"

void xcm_ah_fill(struct ibv_ah_attr *ah, const uint8_t dgid[16], uint8_t sgid_index,
		 uint8_t tclass, uint32_t flow_label)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	memcpy(ah->grh.dgid.raw, dgid, 16);
	ah->grh.sgid_index = sgid_index;
	ah->grh.hop_limit = XCM_HOP_LIMIT;
	ah->grh.traffic_class = tclass;
	ah->grh.flow_label = flow_label;
	ah->port_num = 1;
}

/* The one path rdma_resolve_route makes on RoCE (no SA): cm_spec 3.1. */
void xcm_path_fill(struct ibv_sa_path_rec *p, const struct rdma_addr *a, uint8_t mtu,
		   uint8_t tclass, uint8_t lifetime)
{
	uint16_t sport = 0, dport = 0;
	uint8_t ip[16];

	xcm_ip_of(&a->src_addr, ip, &sport);
	xcm_ip_of(&a->dst_addr, ip, &dport);
	memset(p, 0, sizeof(*p));
	p->dgid = a->addr.ibaddr.dgid;
	p->sgid = a->addr.ibaddr.sgid;
	p->flow_label = htonl(xcm_flow_label(sport, dport));
	p->hop_limit = XCM_HOP_LIMIT;
	p->traffic_class = tclass;
	p->reversible = 1;
	p->numb_path = 1;
	p->pkey = htons(0xffff);
	p->mtu_selector = 2;	/* exactly */
	p->mtu = mtu;
	p->rate_selector = 2;
	p->packet_life_time_selector = 2;
	p->packet_life_time = lifetime;
}

static int init_attr(const struct xcm_conn *c, struct ibv_qp_attr *a)
{
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	a->pkey_index = 0;
	a->port_num = 1;
	if (c->ud) {
		a->qkey = c->qkey;
		return mask | IBV_QP_QKEY;
	}
	if (c->have) {
		a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		if (c->resp_res)
			a->qp_access_flags |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	}
	return mask | IBV_QP_ACCESS_FLAGS;
}

static int rtr_attr(const struct xcm_conn *c, struct ibv_qp_attr *a)
{
	if (c->ud)
		return IBV_QP_STATE;
	if (!c->have)
		return -EINVAL;
	a->ah_attr = c->ah;
	a->path_mtu = (enum ibv_mtu)c->mtu;
	a->dest_qp_num = c->remote_qpn;
	a->rq_psn = c->rq_psn;
	a->max_dest_rd_atomic = c->resp_res;
	a->min_rnr_timer = 0;
	return IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
	       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
}

static int rts_attr(const struct xcm_conn *c, struct ibv_qp_attr *a)
{
	if (c->ud) {
		a->sq_psn = 0;
		return IBV_QP_STATE | IBV_QP_SQ_PSN;
	}
	if (!c->have)
		return -EINVAL;
	a->sq_psn = c->sq_psn;
	a->retry_cnt = c->retry_count;
	a->rnr_retry = c->rnr_retry;
	a->max_rd_atomic = c->init_depth;
	a->timeout = c->timeout;
	return IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
	       IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_TIMEOUT;
}

/* The attributes for a->qp_state (INIT, RTR, RTS) in a, their mask in
 * *mask: 0, or -EINVAL for another state or RTR/RTS before a connection's
 * values are known (ib_cm's answer). */
int xcm_qp_attr(const struct xcm_conn *c, struct ibv_qp_attr *a, int *mask)
{
	enum ibv_qp_state s = a->qp_state;
	int m;

	memset(a, 0, sizeof(*a));
	a->qp_state = s;
	switch (s) {
	case IBV_QPS_INIT:
		m = init_attr(c, a);
		break;
	case IBV_QPS_RTR:
		m = rtr_attr(c, a);
		break;
	case IBV_QPS_RTS:
		m = rts_attr(c, a);
		break;
	default:
		m = -EINVAL;
	}
	if (m < 0)
		return m;
	*mask = m;
	return 0;
}
