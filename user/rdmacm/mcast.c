/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Multicast on a UD id (bound or resolved: it has a device). RoCE has no
 * SA to join: a group is its address as a GID (IPv4 v4-mapped), and
 * joining is attaching the id's QP to it (xhca's multicast groups,
 * ibv_attach_mcast), which the library does when it hands out the
 * MULTICAST_JOIN event (queued by xhcad: XHCA_CTL_CM_NOTIFY), as
 * librdmacm's ucma_process_join; a send-only member is not attached.
 * Leaving detaches the QP; no event.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "xcm.h"

static int is_multicast(const uint8_t ip[16])
{
	return xcm_ip_is_v4(ip) ? (ip[12] & 0xf0) == 0xe0 : ip[0] == 0xff;
}

static int join(struct rdma_cm_id *id, struct sockaddr *addr, int sendonly, void *context)
{
	struct xcm_id *i = xcm_id(id);
	struct xcm_mc *m, **tail;
	uint8_t src[16];
	int rc, gid;

	if (!id || !i->dev || !addr || !i->conn.ud)
		return xcm_err(EINVAL);
	m = calloc(1, sizeof(*m));
	if (!m)
		return xcm_err(ENOMEM);
	rc = xcm_ip_of(addr, m->ip, NULL);
	if (!rc && !is_multicast(m->ip))
		rc = -EINVAL;
	if (!rc)
		rc = xcm_id_attach(i, i->dev);
	if (rc) {
		free(m);
		return xcm_err(rc);
	}
	memcpy(&m->addr, addr, xcm_sa_len(addr));
	m->context = context;
	m->sendonly = (uint8_t)sendonly;
	xcm_ip_of(&id->route.addr.src_addr, src, NULL);
	gid = xcm_gid_index(i->dev, src);
	m->sgid_index = gid < 0 ? 0 : (uint8_t)gid;
	for (tail = &i->mcs; *tail; tail = &(*tail)->next)
		; /* in the order of the joins: their events come so */
	*tail = m;
	rc = xcm_id_notify(i, RDMA_CM_EVENT_MULTICAST_JOIN, 0);
	if (!rc)
		rc = xcm_complete(i);
	return rc ? xcm_err(rc) : 0;
}

XCM_EXPORT int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	return join(id, addr, 0, context);
}

XCM_EXPORT int rdma_join_multicast_ex(struct rdma_cm_id *id,
				      struct rdma_cm_join_mc_attr_ex *mc_join_attr, void *context)
{
	const struct rdma_cm_join_mc_attr_ex *a = mc_join_attr;

	if (!a || !(a->comp_mask & RDMA_CM_JOIN_MC_ATTR_ADDRESS) ||
	    (a->comp_mask & ~(uint32_t)(RDMA_CM_JOIN_MC_ATTR_ADDRESS |
					 RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS)))
		return xcm_err(EINVAL);
	if ((a->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS) &&
	    a->join_flags >= RDMA_MC_JOIN_FLAG_RESERVED)
		return xcm_err(EINVAL);
	return join(id, a->addr, (a->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS) &&
			 a->join_flags == RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER, context);
}

XCM_EXPORT int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct xcm_id *i = xcm_id(id);
	struct xcm_mc **pp, *m;
	uint8_t ip[16];

	if (!id || xcm_ip_of(addr, ip, NULL))
		return xcm_err(EINVAL);
	for (pp = &i->mcs; *pp && memcmp((*pp)->ip, ip, 16); pp = &(*pp)->next)
		;
	m = *pp;
	if (!m)
		return xcm_err(EADDRNOTAVAIL);
	*pp = m->next;
	if (id->qp && !m->sendonly)
		ibv_detach_mcast(id->qp, (union ibv_gid *)m->ip, 0);
	free(m);
	return 0;
}
