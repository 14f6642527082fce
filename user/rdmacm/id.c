/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdma_cm ids: what the application sees (struct rdma_cm_id first), the
 * device the id is bound to, xhcad's ids for it (made when an id first
 * needs its device's CM: resolving, listening), the port it holds, the
 * options, the connection's values. Every id is in one list, where an
 * event's (device, xhcad id) finds its id.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <xhca/ctl.h>
#include "xcm.h"

#define MAX_BACKLOG 1024	/* rdma_ucm's bound; a backlog <= 0 is this */

static struct xcm_id *ids;
static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t random_psn(void)
{
	uint32_t r = 0;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (uint32_t)(uintptr_t)&r;
	return r & 0xffffff;
}

int xcm_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **out, void *context,
		  enum rdma_port_space ps, enum ibv_qp_type qp_type)
{
	struct xcm_id *i = calloc(1, sizeof(*i));

	if (!i)
		return -ENOMEM;
	if (!ch) {
		/* synchronous: a channel of its own, each call waits on it */
		ch = rdma_create_event_channel();
		if (!ch) {
			free(i);
			return -ENOMEM;
		}
		i->sync = 1;
	}
	i->id.channel = ch;
	i->id.context = context;
	i->id.ps = ps;
	i->id.qp_type = qp_type;
	i->port = (struct xcm_port)XCM_PORT_INIT;
	i->conn.ud = qp_type == IBV_QPT_UD;
	i->conn.qkey = RDMA_UDP_QKEY;
	i->conn.retry_count = 7;
	i->conn.rnr_retry = 7;
	i->conn.rq_psn = random_psn();	/* rdma_cm's seq_num */
	pthread_mutex_init(&i->mut, NULL);
	pthread_cond_init(&i->cond, NULL);
	pthread_mutex_lock(&ids_lock);
	i->next = ids;
	ids = i;
	pthread_mutex_unlock(&ids_lock);
	*out = &i->id;
	return 0;
}

XCM_EXPORT int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
			      void *context, enum rdma_port_space ps)
{
	enum ibv_qp_type t = ps == RDMA_PS_UDP || ps == RDMA_PS_IPOIB ? IBV_QPT_UD : IBV_QPT_RC;
	int rc;

	if (!id || (ps != RDMA_PS_TCP && ps != RDMA_PS_UDP && ps != RDMA_PS_IB &&
		    ps != RDMA_PS_IPOIB))
		return xcm_err(EINVAL);
	rc = xcm_create_id(channel, id, context, ps, t);
	return rc ? xcm_err(rc) : 0;
}

/* The id of xhcad's id xid on d, counted as handed an event (the caller
 * hands one, or calls xcm_id_acked), or NULL. */
struct xcm_id *xcm_id_find(struct xcm_dev *d, uint32_t xid)
{
	struct xcm_id *i;

	pthread_mutex_lock(&ids_lock);
	for (i = ids; i; i = i->next) {
		struct xcm_xid *x;

		for (x = i->xids; x && (x->dev != d || x->xid != xid); x = x->next)
			;
		if (x)
			break;
	}
	if (i) {
		pthread_mutex_lock(&i->mut);
		i->handed++;
		pthread_mutex_unlock(&i->mut);
	}
	pthread_mutex_unlock(&ids_lock);
	return i;
}

void xcm_id_acked(struct xcm_id *i)
{
	pthread_mutex_lock(&i->mut);
	i->acked++;
	pthread_cond_broadcast(&i->cond);
	pthread_mutex_unlock(&i->mut);
}

void xcm_event_free(struct rdma_cm_event *e)
{
	struct xcm_event *ev = (struct xcm_event *)e;

	if (ev->owner)
		xcm_id_acked(ev->owner);
	free(ev);
}

static void wait_acked(struct xcm_id *i)
{
	pthread_mutex_lock(&i->mut);
	while (i->acked < i->handed)
		pthread_cond_wait(&i->cond, &i->mut);
	pthread_mutex_unlock(&i->mut);
}

/* A new xhcad id for i on d, on i's channel there. */
static int xid_new(struct xcm_id *i, struct xcm_dev *d)
{
	struct xhca_cm_id r = { .ps = (__u16)i->id.ps,
				.qp_type = i->conn.ud ? XHCA_QPT_UD : XHCA_QPT_RC };
	struct xcm_xid *x = calloc(1, sizeof(*x));
	int rc;

	if (!x)
		return -ENOMEM;
	rc = xcm_leg_get(xcm_chan(i->id.channel), d, &r.chan);
	if (!rc)
		rc = xcm_call(d, XHCA_CTL_CM_ID, &r, sizeof(r), &r, sizeof(r), NULL);
	if (rc) {
		free(x);
		return rc;
	}
	x->dev = d;
	x->xid = r.id;
	pthread_mutex_lock(&ids_lock);
	x->next = i->xids;
	i->xids = x;
	pthread_mutex_unlock(&ids_lock);
	return 0;
}

static struct xcm_xid *xid_on(const struct xcm_id *i, const struct xcm_dev *d)
{
	struct xcm_xid *x;

	for (x = i->xids; x && x->dev != d; x = x->next)
		;
	return x;
}

/* i bound to d, with an xhcad id there: 0 or -errno. */
int xcm_id_attach(struct xcm_id *i, struct xcm_dev *d)
{
	if (i->dev && i->dev != d)
		return -EINVAL;
	i->dev = d;
	i->id.verbs = d->verbs;
	i->id.pd = xcm_dev_pd(d); /* as librdmacm's: an id on a device has its PD */
	i->id.port_num = 1;
	return xid_on(i, d) ? 0 : xid_new(i, d);
}

uint32_t xcm_id_xid(const struct xcm_id *i)
{
	struct xcm_xid *x = i->dev ? xid_on(i, i->dev) : NULL;

	return x ? x->xid : 0;
}

int xcm_id_call(struct xcm_id *i, uint32_t op, const void *req, uint32_t len)
{
	if (!i->dev || !xcm_id_xid(i))
		return -EINVAL;
	return xcm_call(i->dev, op, req, len, NULL, 0, NULL);
}

/* An event the library makes itself, on i's channel in its turn. */
int xcm_id_notify(struct xcm_id *i, uint32_t event, int32_t status)
{
	struct xhca_cm_notify n = { .id = xcm_id_xid(i), .event = event, .status = status };

	return xcm_id_call(i, XHCA_CTL_CM_NOTIFY, &n, sizeof(n));
}

/* xhcad's id with no id of ours (a request for a listener that went). */
void xcm_id_drop_xid(struct xcm_dev *d, uint32_t xid)
{
	xcm_call(d, XHCA_CTL_CM_DESTROY, &xid, sizeof(xid), NULL, 0, NULL);
}

XCM_EXPORT int rdma_destroy_id(struct rdma_cm_id *id)
{
	struct xcm_id *i = xcm_id(id);

	if (!id)
		return xcm_err(EINVAL);
	if (id->event) {
		xcm_event_free(id->event);
		id->event = NULL;
	}
	pthread_mutex_lock(&ids_lock);
	for (struct xcm_id **pp = &ids; *pp; pp = &(*pp)->next)
		if (*pp == i) {
			*pp = i->next;
			break;
		}
	pthread_mutex_unlock(&ids_lock);
	while (i->xids) {
		struct xcm_xid *x = i->xids;

		i->xids = x->next;
		xcm_id_drop_xid(x->dev, x->xid);
		free(x);
	}
	wait_acked(i);
	while (i->mcs) {
		struct xcm_mc *m = i->mcs;

		i->mcs = m->next;
		free(m);
	}
	xcm_port_drop(&i->port);
	free(i->qp_init_attr);
	if (i->sync)
		rdma_destroy_event_channel(id->channel);
	pthread_mutex_destroy(&i->mut);
	pthread_cond_destroy(&i->cond);
	free(i);
	return 0;
}

/* i bound to ip (a wildcard, or a loopback address: to no device) and
 * port (0: an ephemeral one): 0, -EINVAL (bound already), -EADDRNOTAVAIL
 * (no interface has ip), -ENODEV (no xhcad serves it), -EADDRINUSE,
 * -EACCES. A loopback address is bound as the kernel's rdma_cm binds a
 * wildcard: no device yet. (libfabric's verbs provider asks for
 * "localhost" when given no address at all, fi_pingpong's server among
 * its users, and takes an id with no device to mean every device's
 * addresses.) */
int xcm_id_bind(struct xcm_id *i, const uint8_t ip[16], uint16_t port)
{
	unsigned int flags = (i->reuseaddr ? XCM_PORT_REUSE : 0) |
			     (i->afonly ? XCM_PORT_AFONLY : 0);
	struct xcm_dev *d = NULL;
	int rc;

	if (i->bound)
		return -EINVAL;
	if (!xcm_ip_any(ip) && !xcm_ip_loopback(ip)) {
		d = xcm_dev_of_ip(ip, &rc);
		if (!d)
			return rc;
	}
	rc = xcm_port_take(&i->port, (uint16_t)i->id.ps, ip, port, flags);
	if (rc)
		return rc;
	xcm_sockaddr(&i->id.route.addr.src_storage, ip, i->port.port);
	memcpy(i->id.route.addr.addr.ibaddr.sgid.raw, ip, 16);
	i->bound = 1;
	if (d) {
		i->dev = d;
		i->id.verbs = d->verbs;
		i->id.pd = xcm_dev_pd(d);
		i->id.port_num = 1;
	}
	return 0;
}

XCM_EXPORT int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	uint8_t ip[16];
	uint16_t port;
	int rc = xcm_ip_of(addr, ip, &port);

	if (!rc)
		rc = xcm_id_bind(xcm_id(id), ip, port);
	return rc ? xcm_err(rc) : 0;
}

/* Listening on d: an xhcad id there and its LISTEN. */
static int listen_on(struct xcm_id *i, struct xcm_dev *d, const uint8_t ip[16], uint16_t port,
		     uint32_t backlog)
{
	struct xhca_cm_listen l = { .backlog = backlog, .port = port };
	struct xcm_xid *x;
	int rc = xid_on(i, d) ? 0 : xid_new(i, d);

	if (rc)
		return rc;
	x = xid_on(i, d);
	l.id = x->xid;
	if (!xcm_ip_any(ip))
		memcpy(l.ip, ip, 16); /* else all zero: any address (cm.h) */
	return xcm_call(d, XHCA_CTL_CM_LISTEN, &l, sizeof(l), NULL, 0, NULL);
}

/* An id bound to an address listens on its device; a wildcard on every
 * device (rdma_cm's listens on every RDMA device too); unbound, it binds
 * the IPv4 wildcard and an ephemeral port first, as the kernel's does. */
XCM_EXPORT int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct xcm_id *i = xcm_id(id);
	uint8_t ip[16];
	uint16_t port = 0;
	int rc = 0, n, on = 0;

	if (!i->bound) {
		static const uint8_t any4[16] = { [10] = 0xff, [11] = 0xff };

		rc = xcm_id_bind(i, any4, 0);
	}
	if (!rc && i->listening)
		return 0;
	if (!rc)
		rc = xcm_ip_of(&id->route.addr.src_addr, ip, &port);
	if (rc)
		return xcm_err(rc);
	if (backlog <= 0 || backlog > MAX_BACKLOG)
		backlog = MAX_BACKLOG;
	if (i->dev)
		rc = listen_on(i, i->dev, ip, port, (uint32_t)backlog);
	n = i->dev ? 0 : xcm_devices();
	for (int k = 0; k < n && !rc; k++) {
		struct xcm_dev *d = xcm_dev_at(k);

		if (xcm_dev_open(d))
			continue; /* a device this user may not open: not a listener's */
		rc = listen_on(i, d, ip, port, (uint32_t)backlog);
		on++;
	}
	if (!rc && !i->dev && !on)
		rc = -ENODEV; /* no xhcad serves any interface here */
	if (rc)
		return xcm_err(rc);
	i->listening = 1;
	return 0;
}

/* The id's events go to channel (NULL: a channel of its own, synchronous)
 * from now on; events xhcad queued on the old one before stay there. */
XCM_EXPORT int rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	struct xcm_id *i = xcm_id(id);
	struct rdma_event_channel *old = id->channel, *ch = channel;
	int rc = 0;

	if (!ch && !(ch = rdma_create_event_channel()))
		return -1;
	for (struct xcm_xid *x = i->xids; x && !rc; x = x->next) {
		struct xhca_cm_migrate m = { .id = x->xid };

		rc = xcm_leg_get(xcm_chan(ch), x->dev, &m.chan);
		if (!rc)
			rc = xcm_call(x->dev, XHCA_CTL_CM_MIGRATE, &m, sizeof(m), NULL, 0, NULL);
	}
	if (rc) {
		if (!channel)
			rdma_destroy_event_channel(ch);
		return xcm_err(rc);
	}
	/* a synchronous id's last event, which it keeps until its next call,
	 * is acked first (librdmacm's): else the wait below never ends
	 * (libfabric resolves synchronously, then moves the id to its
	 * event queue's channel) */
	if (i->sync && id->event) {
		xcm_event_free(id->event);
		id->event = NULL;
	}
	wait_acked(i);
	id->channel = ch;
	if (i->sync)
		rdma_destroy_event_channel(old);
	i->sync = !channel;
	return 0;
}

static int id_option(struct xcm_id *i, int name, const void *v, size_t len)
{
	switch (name) {
	case RDMA_OPTION_ID_TOS:
		if (len != sizeof(uint8_t))
			return -EINVAL;
		i->tos = *(const uint8_t *)v;
		i->tos_set = 1;
		return 0;
	case RDMA_OPTION_ID_REUSEADDR:
	case RDMA_OPTION_ID_AFONLY:
		if (len != sizeof(int) || i->bound)
			return -EINVAL; /* (the kernel's: before binding) */
		if (name == RDMA_OPTION_ID_REUSEADDR)
			i->reuseaddr = !!*(const int *)v;
		else
			i->afonly = !!*(const int *)v;
		return 0;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (len != sizeof(uint8_t) || i->conn.ud)
			return -EINVAL;
		i->ack_timeout = *(const uint8_t *)v & 0x1f;
		return 0;
	default:
		return -ENOSYS;
	}
}

/* RDMA_OPTION_ID's options; RDMA_OPTION_IB_PATH (paths of an SA or
 * ibacm) has no use on RoCE here: ENOSYS, as an option the kernel lacks. */
XCM_EXPORT int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval,
			       size_t optlen)
{
	int rc;

	if (!id || !optval)
		return xcm_err(EINVAL);
	rc = level == RDMA_OPTION_ID ? id_option(xcm_id(id), optname, optval, optlen) : -ENOSYS;
	return rc ? xcm_err(rc) : 0;
}

static __be16 port_of(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_port;
	if (sa->sa_family == AF_INET6)
		return ((const struct sockaddr_in6 *)sa)->sin6_port;
	return 0;
}

/* (network order, as rdma-core's) */
XCM_EXPORT __be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return port_of(&id->route.addr.src_addr);
}

XCM_EXPORT __be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return port_of(&id->route.addr.dst_addr);
}

/*
 * The id of a CONNECT_REQUEST: made by xhcad (x->id) on listener l's
 * channel on device d; the listener's context, port space and QP type;
 * the route from the REQ's addresses, its values kept for the accept.
 */
struct xcm_id *xcm_id_passive(struct xcm_id *l, struct xcm_dev *d, const struct xhca_cm_event *x)
{
	struct rdma_cm_id *nid;
	struct xcm_xid *xx = calloc(1, sizeof(*xx));
	struct xcm_id *i;
	int gid;

	if (!xx || xcm_create_id(l->id.channel, &nid, l->id.context, l->id.ps, l->id.qp_type)) {
		free(xx);
		return NULL;
	}
	i = xcm_id(nid);
	i->bound = 1;
	i->tos = l->tos;
	i->ack_timeout = l->ack_timeout;
	i->dev = d;
	nid->verbs = d->verbs;
	nid->pd = xcm_dev_pd(d);
	nid->port_num = 1;
	xcm_addr_fill(&nid->route.addr, x->dst_ip, x->dst_port, x->src_ip, x->src_port);
	xcm_conn_learn(&i->conn, x, 0);
	/* the REQ's path MTU, as ib_cm (no negotiation), but not past what
	 * our port takes: xhcad refuses a QP's MTU over its link's */
	if (!i->conn.mtu || i->conn.mtu > xcm_port_mtu(d))
		i->conn.mtu = xcm_port_mtu(d);
	if (i->conn.resp_res > d->max_resp_res)
		i->conn.resp_res = d->max_resp_res;
	if (i->conn.init_depth > d->max_init_depth)
		i->conn.init_depth = d->max_init_depth;
	gid = xcm_gid_index(d, x->dst_ip);
	xcm_ah_fill(&i->conn.ah, x->src_ip, gid < 0 ? 0 : (uint8_t)gid, i->tos,
		    xcm_flow_label(x->src_port, x->dst_port));
	xcm_path_fill(&i->path, &nid->route.addr, i->conn.mtu, i->tos, XCM_PKT_LIFETIME);
	nid->route.path_rec = &i->path;
	nid->route.num_paths = 1;
	xx->dev = d;
	xx->xid = x->id;
	pthread_mutex_lock(&ids_lock);
	i->xids = xx;
	pthread_mutex_unlock(&ids_lock);
	return i;
}
