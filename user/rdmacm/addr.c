/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Address and route resolution. There is nothing to wait for on RoCE
 * here: the source is the one given, the id's bound one, or the one the
 * kernel's routing picks for the destination (in the program's network
 * namespace); the device is the xhca device whose interface holds it;
 * xhcad resolves the peer's MAC itself when it sends. The events
 * (ADDR_RESOLVED, ROUTE_RESOLVED) are queued by xhcad on the id's channel
 * (XHCA_CTL_CM_NOTIFY), in their order with the id's others. What fails
 * before the id has a device (no route, an address no xhcad serves) fails
 * the call itself, with errno, rather than an ADDR_ERROR event: there is no
 * xhcad to queue one.
 */
#include <errno.h>
#include <string.h>
#include "xcm.h"

/* The source for dst: src_addr's (bound first), the bound address, or the
 * routing's; the id bound to it (an ephemeral port if it holds none) and
 * to its device. */
static int pick_source(struct xcm_id *i, struct sockaddr *src_addr, const uint8_t dst[16],
		       uint8_t src[16], struct xcm_dev **dev)
{
	uint16_t port = 0;
	int rc;

	if (src_addr && !i->bound) {
		rc = xcm_ip_of(src_addr, src, &port);
		if (!rc)
			rc = xcm_id_bind(i, src, port);
		if (rc)
			return rc;
	}
	if (i->bound)
		xcm_ip_of(&i->id.route.addr.src_addr, src, NULL);
	if (!i->bound || xcm_ip_any(src)) {
		rc = xcm_route_src(dst, src);
		if (rc) {
			xcm_log("resolve addr: no route to the destination: %s", strerror(-rc));
			return rc;
		}
	}
	if (!i->bound) {
		rc = xcm_id_bind(i, src, 0);
		if (rc)
			return rc;
	}
	*dev = i->dev ? i->dev : xcm_dev_of_ip(src, &rc);
	return *dev ? 0 : rc;
}

/* The path to the peer, for the QP: from the route, with the TOS the
 * application set (which may come after the address). */
static void active_path(struct xcm_id *i)
{
	const struct rdma_addr *a = &i->id.route.addr;
	uint16_t sport = 0, dport = 0;
	uint8_t src[16], dst[16];
	int gid;

	xcm_ip_of(&a->src_addr, src, &sport);
	xcm_ip_of(&a->dst_addr, dst, &dport);
	gid = xcm_gid_index(i->dev, src);
	xcm_ah_fill(&i->conn.ah, dst, gid < 0 ? 0 : (uint8_t)gid, i->tos,
		    xcm_flow_label(sport, dport));
}

XCM_EXPORT int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr,
				 struct sockaddr *dst_addr, int timeout_ms)
{
	struct xcm_id *i = xcm_id(id);
	struct xcm_dev *d = NULL;
	uint8_t dst[16], src[16];
	uint16_t dport;
	int rc, st;

	if (!id)
		return xcm_err(EINVAL);
	rc = xcm_ip_of(dst_addr, dst, &dport);
	if (!rc)
		rc = pick_source(i, src_addr, dst, src, &d);
	if (!rc)
		rc = xcm_id_attach(i, d);
	if (rc)
		return xcm_err(rc);
	xcm_addr_fill(&id->route.addr, src, i->port.port, dst, dport);
	i->conn.mtu = xcm_port_mtu(d);
	/* (the address went from the interface in the meantime) */
	st = xcm_gid_index(d, src) < 0 ? -EADDRNOTAVAIL : 0;
	rc = xcm_id_notify(i, st ? XHCA_CM_EV_ADDR_ERROR : XHCA_CM_EV_ADDR_RESOLVED, st);
	if (!rc)
		rc = xcm_complete(i);
	return rc ? xcm_err(rc) : 0;
}

XCM_EXPORT int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct xcm_id *i = xcm_id(id);
	uint8_t lifetime;
	int rc;

	if (!id || !i->dev || !xcm_id_xid(i) || !id->route.addr.dst_addr.sa_family)
		return xcm_err(EINVAL); /* the address first */
	i->conn.mtu = xcm_port_mtu(i->dev);
	/* rdma_cm: an ACK timeout set before the route is the path's
	 * packet lifetime plus one */
	lifetime = i->ack_timeout ? (uint8_t)(i->ack_timeout - 1) : XCM_PKT_LIFETIME;
	xcm_path_fill(&i->path, &id->route.addr, i->conn.mtu, i->tos, lifetime);
	id->route.path_rec = &i->path;
	id->route.num_paths = 1;
	active_path(i);
	rc = xcm_id_notify(i, XHCA_CM_EV_ROUTE_RESOLVED, 0);
	if (!rc)
		rc = xcm_complete(i);
	return rc ? xcm_err(rc) : 0;
}
