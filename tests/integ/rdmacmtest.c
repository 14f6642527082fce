/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-rdmacmtest: an rdma_cm program of the tests' own, built against
 * Debian's librdmacm and run on xhca by `xhca exec` (tests/integ/rdmacm.sh),
 * for what rping and perftest do not show: the bind rules and errors, a
 * non-blocking channel, options, the route and QP attributes, the
 * synchronous API of rdma_verbs.h (rdma_create_ep, rdma_get_request),
 * private data both ways, a reject with its private data, what is not
 * supported.
 *
 *   xhca-rdmacmtest local IP PEER UNSERVED   checks on one host (IP ours, PEER's,
 *                                            UNSERVED an address no xhcad serves)
 *   xhca-rdmacmtest server IP         waits for the client on rdma_cm port 7300
 *   xhca-rdmacmtest client SERVER_IP  the two-sided cases
 *
 * Each check prints "ok - ..." or "not ok - ..."; the exit status is the
 * number of failed checks (capped at 100), 2 for bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <rdma/rsocket.h>

#define PORT "7300"
#define REQ_PD 56
#define REP_PD 196
#define REJ_PD 148

#include "check.h"

static void die(const char *what)
{
	printf("not ok - %s: %s\n", what, strerror(errno));
	exit(100);
}

static struct sockaddr_in sin_of(const char *ip, int port)
{
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

	inet_pton(AF_INET, ip, &s.sin_addr);
	return s;
}

/* rdma_bind_addr's errno (0: bound) on a new id of ch. */
static int bind_err(struct rdma_event_channel *ch, struct rdma_cm_id **id, const char *ip,
		    int port)
{
	struct sockaddr_in s = sin_of(ip, port);

	if (rdma_create_id(ch, id, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	return rdma_bind_addr(*id, (struct sockaddr *)&s) ? errno : 0;
}

static void local_binds(struct rdma_event_channel *ch, const char *ip, const char *unserved)
{
	struct rdma_cm_id *a, *b, *c, *d, *e;
	int err;

	check(!bind_err(ch, &a, ip, 7301), "bind %s:7301", ip);
	check(a->verbs && a->pd && a->pd->context == a->verbs,
	      "... the id has its device's context and a PD of it (librdmacm's)");
	err = bind_err(ch, &b, ip, 7301);
	check(err == EADDRINUSE, "the same address and port again: EADDRINUSE (%s)", strerror(err));
	err = bind_err(ch, &c, "0.0.0.0", 7301);
	check(err == EADDRINUSE, "its wildcard: EADDRINUSE (%s)", strerror(err));
	err = bind_err(ch, &d, "192.0.2.1", 7301);
	check(err == EADDRNOTAVAIL, "an address of no interface: EADDRNOTAVAIL (%s)",
	      strerror(err));
	err = bind_err(ch, &e, unserved, 7301);
	check(err == ENODEV, "an address no xhcad serves (%s): ENODEV (%s)", unserved,
	      strerror(err));
	rdma_destroy_id(e);
	/* as the kernel's binds the wildcard; libfabric's verbs provider asks
	 * for "localhost" when it is given no address */
	err = bind_err(ch, &e, "127.0.0.1", 7301);
	check(!err && !e->verbs, "127.0.0.1: bound, to no device yet, as the wildcard (%s)",
	      strerror(err));
	check(ntohs(rdma_get_src_port(a)) == 7301, "rdma_get_src_port: 7301");
	rdma_destroy_id(a);
	check(!rdma_bind_addr(b, (struct sockaddr *)&(struct sockaddr_in){ .sin_family = AF_INET,
		.sin_port = htons(7301), .sin_addr.s_addr = inet_addr(ip) }),
	      "the port is free once its id is destroyed");
	rdma_destroy_id(b);
	rdma_destroy_id(c);
	rdma_destroy_id(d);
	rdma_destroy_id(e);
}

static void local_options(struct rdma_cm_id *id)
{
	uint8_t tos = 32;
	int one = 1;

	check(!rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof(tos)),
	      "RDMA_OPTION_ID_TOS");
	check(rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &one, sizeof(one)) &&
	      errno == EINVAL, "TOS of 4 bytes: EINVAL");
	check(rdma_set_option(id, RDMA_OPTION_ID, 99, &one, sizeof(one)) && errno == ENOSYS,
	      "an unknown option: ENOSYS");
	check(!rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof(one)),
	      "RDMA_OPTION_ID_REUSEADDR before binding");
}

/* An SRQ, then a QP on it, with CQs and channels the library makes: the
 * QP in INIT (an RC id's, before connecting). */
static void local_qp(struct rdma_cm_id *id)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	/* (max_recv_wr sizes the receive CQ the library makes, as librdmacm's) */
	struct ibv_qp_init_attr qa = { .cap = { .max_send_wr = 4, .max_send_sge = 1,
						.max_recv_wr = 8 }, .qp_type = IBV_QPT_RC };
	struct ibv_qp_attr q;
	struct ibv_qp_init_attr qi;

	int rc = rdma_create_srq(id, NULL, &sa);

	check(!rc && id->srq && id->pd, "rdma_create_srq (%s)", rc ? strerror(errno) : "made");
	rc = rdma_create_qp(id, NULL, &qa);
	check(!rc && id->qp && id->qp->srq == id->srq && id->send_cq && id->recv_cq &&
	      id->send_cq_channel && qa.send_cq == id->send_cq,
	      "rdma_create_qp: on the id's SRQ and PD, CQs of its own (%s)",
	      rc ? strerror(errno) : "made");
	check(id->qp && !ibv_query_qp(id->qp, &q, IBV_QP_STATE, &qi) && q.qp_state == IBV_QPS_INIT,
	      "the QP in INIT");
	check(rdma_create_qp(id, NULL, &qa) && errno == EINVAL, "a second QP: EINVAL");
	rdma_destroy_qp(id);
	check(!id->qp && !id->send_cq && !id->recv_cq && !id->send_cq_channel,
	      "rdma_destroy_qp: the QP and its CQs gone");
	rdma_destroy_srq(id);
}

/* The next event on ch within ms, NULL if none came. */
static struct rdma_cm_event *event_within(struct rdma_event_channel *ch, int ms)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *e;

	if (poll(&p, 1, ms) != 1 || rdma_get_cm_event(ch, &e))
		return NULL;
	return e;
}

static void local_resolve(struct rdma_event_channel *ch, const char *ip, const char *peer)
{
	struct sockaddr_in dst = sin_of(peer, 7302);
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT };
	struct rdma_cm_event *e;
	struct rdma_cm_id *id;
	int mask = 0, n;
	char src[INET_ADDRSTRLEN] = "";

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		die("rdma_create_id");
	local_options(id);
	check(!rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), "rdma_resolve_addr");
	e = event_within(ch, 2000);
	check(e && e->event == RDMA_CM_EVENT_ADDR_RESOLVED && e->id == id,
	      "ADDR_RESOLVED on the (non-blocking) channel's fd");
	if (e)
		rdma_ack_cm_event(e);
	inet_ntop(AF_INET, &((struct sockaddr_in *)rdma_get_local_addr(id))->sin_addr, src,
		  sizeof(src));
	check(!strcmp(src, ip) && id->verbs && rdma_get_src_port(id),
	      "the source the routing picks (%s), an ephemeral port, the device", src);
	check(!rdma_resolve_route(id, 2000), "rdma_resolve_route");
	e = event_within(ch, 2000);
	check(e && e->event == RDMA_CM_EVENT_ROUTE_RESOLVED, "ROUTE_RESOLVED");
	if (e)
		rdma_ack_cm_event(e);
	check(id->route.num_paths == 1 && id->route.path_rec->traffic_class == 32 &&
	      id->route.path_rec->dgid.raw[10] == 0xff && id->route.path_rec->hop_limit == 64,
	      "the path: TOS 32, the peer's v4-mapped GID, hop limit 64");
	n = rdma_init_qp_attr(id, &a, &mask);
	check(!n && !a.qp_access_flags &&
	      mask == (IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
	      "rdma_init_qp_attr(INIT) before connecting: no remote access (mask 0x%x)", mask);
	a.qp_state = IBV_QPS_RTR;
	check(rdma_init_qp_attr(id, &a, &mask) && errno == EINVAL,
	      "rdma_init_qp_attr(RTR) before a connection: EINVAL");
	local_qp(id);
	rdma_destroy_id(id);
}

static int run_local(const char *ip, const char *peer, const char *unserved)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct ibv_context **devs;
	struct rdma_cm_event *e;
	int n = 0;

	check(rsocket(AF_INET, SOCK_STREAM, 0) < 0 && errno == ENOSYS, "rsocket: ENOSYS");
	check(rdma_set_local_ece(NULL, NULL) && errno == EOPNOTSUPP, "ECE: EOPNOTSUPP");
	devs = rdma_get_devices(&n);
	check(devs && n >= 1 && !strncmp(ibv_get_device_name(devs[0]->device), "xhca_", 5),
	      "rdma_get_devices: %d, %s", n, n ? ibv_get_device_name(devs[0]->device) : "");
	rdma_free_devices(devs);
	if (!ch)
		die("rdma_create_event_channel");
	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	check(rdma_get_cm_event(ch, &e) && errno == EAGAIN,
	      "a non-blocking channel with nothing on it: EAGAIN");
	local_binds(ch, ip, unserved);
	local_resolve(ch, ip, peer);
	rdma_destroy_event_channel(ch);
	return fails;
}

static struct rdma_addrinfo *addrinfo(const char *ip, int passive)
{
	struct rdma_addrinfo h = { .ai_port_space = RDMA_PS_TCP,
				   .ai_flags = passive ? RAI_PASSIVE : 0 }, *r;

	if (rdma_getaddrinfo(ip, PORT, &h, &r))
		die("rdma_getaddrinfo");
	return r;
}

static struct ibv_qp_init_attr qp_attr(void)
{
	return (struct ibv_qp_init_attr){ .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						   .max_send_sge = 1, .max_recv_sge = 1 },
					  .sq_sig_all = 1 };
}

static int filled(const void *p, size_t n, int c)
{
	const uint8_t *b = p;

	for (size_t k = 0; p && k < n; k++)
		if (b[k] != c)
			return 0;
	return p != NULL;
}

/* A message each way on a connected id: "hello" to the server, "world"
 * back; in (mi) is the receive posted before connecting. */
static void talk(struct rdma_cm_id *id, int server, const char *in, struct ibv_mr *mi)
{
	static char out[64];
	struct ibv_mr *mo = rdma_reg_msgs(id, out, sizeof(out));
	struct ibv_wc wc;

	if (!mo)
		die("rdma_reg_msgs");
	strcpy(out, server ? "world" : "hello");
	if (!server && rdma_post_send(id, NULL, out, 6, mo, 0))
		die("rdma_post_send");
	if (!server)
		check(rdma_get_send_comp(id, &wc) == 1 && wc.status == IBV_WC_SUCCESS, "SEND done");
	check(rdma_get_recv_comp(id, &wc) == 1 && wc.status == IBV_WC_SUCCESS &&
	      !strcmp(in, server ? "hello" : "world"), "received '%s'", in);
	if (server && rdma_post_send(id, NULL, out, 6, mo, 0))
		die("rdma_post_send");
	if (server)
		check(rdma_get_send_comp(id, &wc) == 1 && wc.status == IBV_WC_SUCCESS, "SEND done");
	rdma_dereg_mr(mi);
	rdma_dereg_mr(mo);
}

static void post_in(struct rdma_cm_id *id, char *buf, struct ibv_mr **mr)
{
	*mr = rdma_reg_msgs(id, buf, 64);
	if (!*mr || rdma_post_recv(id, NULL, buf, 64, *mr))
		die("rdma_post_recv");
}

static int run_server(const char *ip)
{
	struct rdma_addrinfo *res = addrinfo(ip, 1);
	struct ibv_qp_init_attr attr = qp_attr();
	struct rdma_cm_id *l, *id;
	uint8_t rep[REP_PD], rej[REJ_PD];
	struct rdma_conn_param p = { .private_data = rep, .private_data_len = REP_PD };
	static char in[64];
	struct ibv_mr *mr;

	memset(rep, 'S', sizeof(rep));
	memset(rej, 'N', sizeof(rej));
	if (rdma_create_ep(&l, res, NULL, &attr) || rdma_listen(l, 2))
		die("rdma_create_ep, rdma_listen");
	rdma_freeaddrinfo(res);
	if (rdma_get_request(l, &id))
		die("rdma_get_request");
	check(id->qp && id->event && id->event->event == RDMA_CM_EVENT_CONNECT_REQUEST,
	      "rdma_get_request: an id, its QP, the CONNECT_REQUEST");
	check(id->event->param.conn.private_data_len == REQ_PD &&
	      filled(id->event->param.conn.private_data, REQ_PD, 'C'),
	      "the REQ's private data: 56 bytes, the client's");
	post_in(id, in, &mr);
	check(!rdma_accept(id, &p), "rdma_accept (synchronous: ESTABLISHED)");
	talk(id, 1, in, mr);
	check(!rdma_disconnect(id), "rdma_disconnect (synchronous: DISCONNECTED)");
	rdma_destroy_ep(id);
	if (rdma_get_request(l, &id))
		die("rdma_get_request (the second)");
	check(!rdma_reject(id, rej, REJ_PD), "rdma_reject with 148 bytes");
	rdma_destroy_ep(id);
	rdma_destroy_ep(l);
	return fails;
}

static int run_client(const char *srv)
{
	struct rdma_addrinfo *res = addrinfo(srv, 0);
	struct ibv_qp_init_attr attr = qp_attr();
	uint8_t req[REQ_PD + 1];
	struct rdma_conn_param p = { .private_data = req, .private_data_len = REQ_PD + 1,
				     .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_cm_event *e;
	struct rdma_cm_id *id;
	static char in[64];
	struct ibv_mr *mr;

	memset(req, 'C', sizeof(req));
	if (rdma_create_ep(&id, res, NULL, &attr))
		die("rdma_create_ep");
	check(rdma_connect(id, &p) && errno == EINVAL, "57 bytes of private data: EINVAL");
	p.private_data_len = REQ_PD;
	post_in(id, in, &mr);
	check(!rdma_connect(id, &p), "rdma_connect (synchronous: ESTABLISHED)");
	e = id->event;
	check(e && e->event == RDMA_CM_EVENT_ESTABLISHED &&
	      e->param.conn.private_data_len == REP_PD &&
	      filled(e->param.conn.private_data, REP_PD, 'S'),
	      "ESTABLISHED with the REP's private data: 196 bytes, the server's");
	talk(id, 0, in, mr);
	check(!rdma_disconnect(id), "rdma_disconnect");
	rdma_destroy_ep(id);
	attr = qp_attr(); /* (rdma_create_qp wrote the CQs it made into it) */
	if (rdma_create_ep(&id, res, NULL, &attr))
		die("rdma_create_ep");
	check(rdma_connect(id, &p) && errno == ECONNREFUSED, "rejected: ECONNREFUSED");
	e = id->event;
	check(e && e->event == RDMA_CM_EVENT_REJECTED && e->status == 28 &&
	      e->param.conn.private_data_len == REJ_PD &&
	      filled(e->param.conn.private_data, REJ_PD, 'N'),
	      "REJECTED: reason 28 (consumer), the REJ's 148 bytes");
	rdma_destroy_ep(id);
	rdma_freeaddrinfo(res);
	return fails;
}

int main(int argc, char **argv)
{
	int n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && !strcmp(argv[1], "local"))
		n = run_local(argv[2], argv[3], argv[4]);
	else if (argc == 3 && !strcmp(argv[1], "server"))
		n = run_server(argv[2]);
	else if (argc == 3 && !strcmp(argv[1], "client"))
		n = run_client(argv[2]);
	else {
		fprintf(stderr, "usage: xhca-rdmacmtest local IP PEER UNSERVED | server IP | "
			"client SERVER_IP\n");
		return 2;
	}
	return n > 100 ? 100 : n;
}
