/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The pure parts of xhca's librdmacm (user/rdmacm/), without xhcad: an
 * xhcad event made rdma_cm's (the peer's values from our side, private
 * data the event's own, SIDR's refusal UNREACHABLE), what a connection
 * learns from it, the QP attributes of each state (cm_spec 4.8), the path
 * of a route, rdma_getaddrinfo's numeric answers, and the port spaces'
 * bind rules (per network namespace, privileged ports).
 */
#include <errno.h>
#include <netdb.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/wait.h>
#include "../../user/rdmacm/xcm.h"
#include "tests.h"

#define WHY_LEN 200

static void ip4(uint8_t ip[16], const char *s)
{
	memset(ip, 0, 16);
	ip[10] = ip[11] = 0xff;
	inet_pton(AF_INET, s, ip + 12);
}

/* A REQ's CONNECT_REQUEST as xhcad gives it: the peer's raw values. */
static void request(struct xhca_cm_event *x)
{
	memset(x, 0, sizeof(*x));
	x->event = XHCA_CM_EV_CONNECT_REQUEST;
	x->id = 7;
	x->listen_id = 3;
	x->qpn = 0x123456;
	x->psn = 0xabcdef;
	x->resp_res = 4;	/* the peer's responder resources */
	x->init_depth = 2;	/* its initiator depth */
	x->retry_count = 6;
	x->rnr_retry = 5;
	x->flow_control = 1;
	x->mtu = 3;
	x->ack_timeout = 17;
	ip4(x->src_ip, "10.0.0.2");
	ip4(x->dst_ip, "10.0.0.1");
	x->src_port = 40000;
	x->dst_port = 7174;
	x->pdata_len = 56;
	for (int k = 0; k < 56; k++)
		x->pdata[k] = (uint8_t)k;
}

static int ev_request(char *why)
{
	struct xhca_cm_event x;
	struct rdma_cm_event e = {};
	uint8_t pd[XCM_MAX_PDATA] = {};
	const struct rdma_conn_param *c = &e.param.conn;

	request(&x);
	xcm_event_conv(&x, 0, &e, pd);
	CHECK(e.event == RDMA_CM_EVENT_CONNECT_REQUEST && !e.status, "event %d", e.event);
	CHECK(c->responder_resources == 2 && c->initiator_depth == 4,
	      "ours from the peer's: responder %u (want its initiator depth 2), initiator %u",
	      c->responder_resources, c->initiator_depth);
	CHECK(c->retry_count == 6 && c->rnr_retry_count == 5 && c->flow_control == 1 &&
	      c->qp_num == 0x123456, "retry %u rnr %u fc %u qpn %x", c->retry_count,
	      c->rnr_retry_count, c->flow_control, c->qp_num);
	CHECK(c->private_data == pd && c->private_data_len == 56 && !memcmp(pd, x.pdata, 56),
	      "private data: the event's copy, 56 bytes");
	return 0;
}

static int ev_no_pdata(char *why)
{
	struct xhca_cm_event x = { .event = XHCA_CM_EV_ESTABLISHED };
	struct rdma_cm_event e = {};
	uint8_t pd[XCM_MAX_PDATA];

	xcm_event_conv(&x, 0, &e, pd);
	CHECK(e.event == RDMA_CM_EVENT_ESTABLISHED && !e.param.conn.private_data &&
	      !e.param.conn.private_data_len, "ESTABLISHED (the RTU): no private data");
	x.event = XHCA_CM_EV_REJECTED;
	x.status = 28;
	x.pdata_len = 148;
	xcm_event_conv(&x, 0, &e, pd);
	CHECK(e.event == RDMA_CM_EVENT_REJECTED && e.status == 28 &&
	      e.param.conn.private_data_len == 148, "REJECTED: reason 28, 148 bytes");
	x.pdata_len = 255;
	xcm_event_conv(&x, 0, &e, pd);
	CHECK(e.param.conn.private_data_len == XHCA_CM_PDATA_MAX, "a length past cm.h's: %u",
	      e.param.conn.private_data_len);
	return 0;
}

static int ev_sidr(char *why)
{
	struct xhca_cm_event x = { .event = XHCA_CM_EV_REJECTED, .status = 2, .qpn = 0x42,
				   .qkey = RDMA_UDP_QKEY, .pdata_len = 136 };
	struct rdma_cm_event e = {};
	uint8_t pd[XCM_MAX_PDATA];

	xcm_event_conv(&x, 1, &e, pd);
	CHECK(e.event == RDMA_CM_EVENT_UNREACHABLE && e.status == 2,
	      "a refusing SIDR_REP: UNREACHABLE with its status, as Linux (event %d)", e.event);
	x.event = XHCA_CM_EV_ESTABLISHED;
	x.status = 0;
	xcm_event_conv(&x, 1, &e, pd);
	CHECK(e.param.ud.qp_num == 0x42 && e.param.ud.qkey == RDMA_UDP_QKEY &&
	      e.param.ud.private_data == pd && e.param.ud.private_data_len == 136,
	      "SIDR's ESTABLISHED: param.ud with the peer's QPN and Q_Key");
	return 0;
}

static int learn_passive(char *why)
{
	struct xhca_cm_event x;
	struct xcm_conn c = { .mtu = IBV_MTU_4096, .retry_count = 7 };

	request(&x);
	xcm_conn_learn(&c, &x, 0);
	CHECK(c.have && c.remote_qpn == 0x123456 && c.sq_psn == 0xabcdef,
	      "the REQ's QPN and PSN (the first we send): %x %x", c.remote_qpn, c.sq_psn);
	CHECK(c.mtu == IBV_MTU_1024 && c.retry_count == 6 && c.rnr_retry == 5 && c.timeout == 17,
	      "passive: the REQ's MTU, retry counts and ACK timeout (mtu %u retry %u)", c.mtu,
	      c.retry_count);
	CHECK(c.resp_res == 2 && c.init_depth == 4, "resp %u init %u", c.resp_res, c.init_depth);
	x.ack_timeout = 0;
	xcm_conn_learn(&c, &x, 0);
	CHECK(c.timeout == XCM_ACK_TIMEOUT, "no ACK timeout from xhcad: Linux 6.1's (%u)",
	      c.timeout);
	return 0;
}

static int learn_active(char *why)
{
	struct xhca_cm_event x = { .event = XHCA_CM_EV_CONNECT_RESPONSE, .qpn = 0x99, .psn = 0x1234,
				   .resp_res = 1, .init_depth = 3, .rnr_retry = 7,
				   .retry_count = 2, .ack_timeout = 15 };
	struct xcm_conn c = { .mtu = IBV_MTU_4096, .retry_count = 7 };

	xcm_conn_learn(&c, &x, 1);
	CHECK(c.mtu == IBV_MTU_4096 && c.retry_count == 7,
	      "active: its own MTU and retry count (a REP has neither): %u %u", c.mtu,
	      c.retry_count);
	CHECK(c.resp_res == 3 && c.init_depth == 1 && c.sq_psn == 0x1234 && c.timeout == 15,
	      "the REP's: resp %u (its initiator depth), init %u, sq_psn %x", c.resp_res,
	      c.init_depth, c.sq_psn);
	x.mtu = 2;
	xcm_conn_learn(&c, &x, 1);
	CHECK(c.mtu == IBV_MTU_512, "a smaller MTU from xhcad is taken (%u)", c.mtu);
	return 0;
}

static struct xcm_conn connected(void)
{
	struct xcm_conn c = { .have = 1, .mtu = IBV_MTU_1024, .resp_res = 1, .init_depth = 2,
			      .retry_count = 7, .rnr_retry = 6, .timeout = 19, .rq_psn = 0x111,
			      .sq_psn = 0x222, .remote_qpn = 0x333 };
	uint8_t peer[16];

	ip4(peer, "10.0.0.2");
	xcm_ah_fill(&c.ah, peer, 1, 0, xcm_flow_label(40000, 7174));
	return c;
}

static int attr_init(char *why)
{
	struct xcm_conn c = { .qkey = RDMA_UDP_QKEY };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT };
	int base = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT, mask = 0;

	CHECK(!xcm_qp_attr(&c, &a, &mask) && mask == (base | IBV_QP_ACCESS_FLAGS) &&
	      !a.qp_access_flags && a.port_num == 1 && !a.pkey_index,
	      "INIT before a CM exchange: access 0 (mask %x, access %x)", mask,
	      a.qp_access_flags);
	c = connected();
	a.qp_state = IBV_QPS_INIT;
	xcm_qp_attr(&c, &a, &mask);
	CHECK(a.qp_access_flags == (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				     IBV_ACCESS_REMOTE_ATOMIC), "INIT with responder resources: %x",
	      a.qp_access_flags);
	c.resp_res = 0;
	a.qp_state = IBV_QPS_INIT;
	xcm_qp_attr(&c, &a, &mask);
	CHECK(a.qp_access_flags == IBV_ACCESS_REMOTE_WRITE, "INIT without: REMOTE_WRITE (%x)",
	      a.qp_access_flags);
	c = (struct xcm_conn){ .ud = 1, .qkey = RDMA_UDP_QKEY };
	a.qp_state = IBV_QPS_INIT;
	CHECK(!xcm_qp_attr(&c, &a, &mask) && mask == (base | IBV_QP_QKEY) &&
	      a.qkey == RDMA_UDP_QKEY, "UD INIT: the Q_Key (mask %x)", mask);
	return 0;
}

static int attr_rtr_rts(char *why)
{
	struct xcm_conn c = connected();
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int mask;

	CHECK(!xcm_qp_attr(&c, &a, &mask) &&
	      mask == (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
	      "RTR's mask %x", mask);
	CHECK(a.path_mtu == IBV_MTU_1024 && a.dest_qp_num == 0x333 && a.rq_psn == 0x111 &&
	      a.max_dest_rd_atomic == 1 && !a.min_rnr_timer,
	      "RTR: MTU, the peer's QPN, our PSN, our responder resources");
	CHECK(a.ah_attr.is_global && a.ah_attr.grh.sgid_index == 1 &&
	      a.ah_attr.grh.hop_limit == 64 && a.ah_attr.port_num == 1 &&
	      a.ah_attr.grh.dgid.raw[15] == 2 && a.ah_attr.grh.dgid.raw[10] == 0xff &&
	      a.ah_attr.grh.flow_label == ((40000u * 31 + 7174) & 0xfffff),
	      "RTR's path: a GRH to the peer's v4-mapped GID, hop limit 64, the flow label");
	a.qp_state = IBV_QPS_RTS;
	CHECK(!xcm_qp_attr(&c, &a, &mask) &&
	      mask == (IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		       IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_TIMEOUT), "RTS's mask %x", mask);
	CHECK(a.sq_psn == 0x222 && a.retry_cnt == 7 && a.rnr_retry == 6 && a.max_rd_atomic == 2 &&
	      a.timeout == 19, "RTS: the peer's PSN, retries, our initiator depth, timeout");
	c.have = 0;
	a.qp_state = IBV_QPS_RTR;
	CHECK(xcm_qp_attr(&c, &a, &mask) == -EINVAL, "RTR before a connection: EINVAL");
	a.qp_state = IBV_QPS_SQD;
	CHECK(xcm_qp_attr(&c, &a, &mask) == -EINVAL, "SQD: EINVAL");
	c = (struct xcm_conn){ .ud = 1 };
	a.qp_state = IBV_QPS_RTS;
	CHECK(!xcm_qp_attr(&c, &a, &mask) && mask == (IBV_QP_STATE | IBV_QP_SQ_PSN) && !a.sq_psn,
	      "UD RTS: SQ PSN 0 (mask %x)", mask);
	return 0;
}

static int path(char *why)
{
	struct rdma_addr ad = {};
	struct ibv_sa_path_rec p;
	uint8_t a[16], b[16];

	ip4(a, "10.0.0.1");
	ip4(b, "10.0.0.2");
	xcm_addr_fill(&ad, a, 40000, b, 7174);
	CHECK(ad.src_sin.sin_family == AF_INET && ntohs(ad.dst_sin.sin_port) == 7174 &&
	      ad.addr.ibaddr.pkey == htons(0xffff) && !memcmp(ad.addr.ibaddr.dgid.raw, b, 16),
	      "rdma_addr: sockaddr_in for IPv4, v4-mapped GIDs, P_Key 0xffff");
	xcm_path_fill(&p, &ad, IBV_MTU_1024, 0x20, 18);
	CHECK(p.mtu == IBV_MTU_1024 && p.hop_limit == 64 && p.traffic_class == 0x20 &&
	      p.packet_life_time == 18 && p.pkey == htons(0xffff) &&
	      ntohl(p.flow_label) == ((40000u * 31 + 7174) & 0xfffff) &&
	      !memcmp(p.sgid.raw, a, 16), "the path record of RoCE (cm_spec 3.1)");
	return 0;
}

static int inet(char *why)
{
	struct sockaddr_storage ss;
	uint8_t ip[16], back[16], src[16];
	uint16_t port;

	ip4(ip, "192.0.2.7");
	xcm_sockaddr(&ss, ip, 99);
	CHECK(!xcm_ip_of((struct sockaddr *)&ss, back, &port) && port == 99 &&
	      !memcmp(ip, back, 16), "IPv4 both ways");
	inet_pton(AF_INET6, "fd00::5", ip);
	xcm_sockaddr(&ss, ip, 7);
	CHECK(ss.ss_family == AF_INET6 && !xcm_ip_of((struct sockaddr *)&ss, back, &port) &&
	      !memcmp(ip, back, 16), "IPv6 both ways");
	ip4(ip, "0.0.0.0");
	CHECK(xcm_ip_any(ip) && xcm_ip_any((uint8_t[16]){}), "0.0.0.0 and :: are wildcards");
	CHECK(!xcm_ip_loopback(ip), "0.0.0.0 is no loopback address");
	ip4(ip, "127.3.4.5");
	CHECK(xcm_ip_loopback(ip) && xcm_ip_loopback((uint8_t[16]){ [15] = 1 }),
	      "127.3.4.5 and ::1 are loopback addresses");
	ip4(ip, "128.0.0.1");
	CHECK(!xcm_ip_loopback(ip) && !xcm_ip_loopback((uint8_t[16]){ [15] = 2 }),
	      "128.0.0.1 and ::2 are not");
	ss.ss_family = AF_IB;
	CHECK(xcm_ip_of((struct sockaddr *)&ss, back, NULL) == -EAFNOSUPPORT, "AF_IB: no");
	ip4(ip, "127.0.0.1");
	CHECK(!xcm_route_src(ip, src) && !memcmp(src, ip, 16), "the route to 127.0.0.1 is from it");
	return 0;
}

static int ai_active(char *why)
{
	struct rdma_addrinfo h = { .ai_port_space = RDMA_PS_TCP }, *r = NULL;
	const struct sockaddr_in *d;

	CHECK(!rdma_getaddrinfo("10.1.2.3", "7174", &h, &r) && r, "10.1.2.3 7174");
	d = (const void *)r->ai_dst_addr;
	CHECK(r->ai_qp_type == IBV_QPT_RC && r->ai_port_space == RDMA_PS_TCP &&
	      r->ai_family == AF_INET && r->ai_dst_len == sizeof(*d) && !r->ai_src_addr &&
	      ntohs(d->sin_port) == 7174 && d->sin_addr.s_addr == inet_addr("10.1.2.3") &&
	      !r->ai_route && !r->ai_connect, "a destination, RC, RDMA_PS_TCP");
	rdma_freeaddrinfo(r);
	h = (struct rdma_addrinfo){ .ai_qp_type = IBV_QPT_UD, .ai_port_space = RDMA_PS_UDP };
	CHECK(!rdma_getaddrinfo("fd00::1", "9", &h, &r) && r->ai_family == AF_INET6 &&
	      r->ai_qp_type == IBV_QPT_UD && r->ai_port_space == RDMA_PS_UDP,
	      "IPv6, UD and RDMA_PS_UDP kept");
	rdma_freeaddrinfo(r);
	h = (struct rdma_addrinfo){ .ai_flags = RAI_NUMERICHOST };
	CHECK(rdma_getaddrinfo("not-a-number", "1", &h, &r) == EAI_NONAME,
	      "RAI_NUMERICHOST with a name: EAI_NONAME");
	CHECK(rdma_getaddrinfo(NULL, NULL, NULL, &r) == -1 && errno == EINVAL,
	      "no node and no service: EINVAL");
	return 0;
}

static int ai_passive(char *why)
{
	struct rdma_addrinfo h = { .ai_flags = RAI_PASSIVE, .ai_family = AF_INET,
				   .ai_port_space = RDMA_PS_TCP }, *r = NULL;
	struct sockaddr_in src = { .sin_family = AF_INET, .sin_port = htons(5) };
	const struct sockaddr_in *s;

	CHECK(!rdma_getaddrinfo(NULL, "18515", &h, &r), "RAI_PASSIVE, no node");
	s = (const void *)r->ai_src_addr;
	CHECK((r->ai_flags & RAI_PASSIVE) && s && !r->ai_dst_addr && !s->sin_addr.s_addr &&
	      ntohs(s->sin_port) == 18515, "the source: 0.0.0.0:18515 (perftest's server)");
	rdma_freeaddrinfo(r);
	h = (struct rdma_addrinfo){ .ai_src_addr = (struct sockaddr *)&src,
				    .ai_src_len = sizeof(src) };
	CHECK(!rdma_getaddrinfo("10.9.9.9", "1", &h, &r) && r->ai_src_addr &&
	      r->ai_src_len == sizeof(src) && r->ai_dst_addr, "the hints' source is copied");
	rdma_freeaddrinfo(r);
	return 0;
}

static uint16_t test_port(int k)
{
	return (uint16_t)(20000 + (getpid() * 7 + k * 131) % 9000);
}

static int take(struct xcm_port *p, const char *ip, uint16_t port, unsigned int flags)
{
	uint8_t a[16];

	if (strchr(ip, ':'))
		inet_pton(AF_INET6, ip, a);
	else
		ip4(a, ip);
	return xcm_port_take(p, RDMA_PS_TCP, a, port, flags);
}

static int ports_rules(char *why)
{
	struct xcm_port w = XCM_PORT_INIT, s = XCM_PORT_INIT, t = XCM_PORT_INIT;
	uint16_t p = test_port(0), q = test_port(1);

	CHECK(!take(&w, "0.0.0.0", p, 0), "0.0.0.0:%u", p);
	CHECK(take(&s, "10.0.0.1", p, 0) == -EADDRINUSE, "an address of a port the wildcard has");
	CHECK(take(&s, "0.0.0.0", p, 0) == -EADDRINUSE, "the wildcard twice");
	CHECK(!take(&s, "fd00::1", p, 0), "IPv6's address: IPv4's wildcard does not cover it");
	xcm_port_drop(&s);
	CHECK(!take(&s, "10.0.0.1", p, XCM_PORT_REUSE), "REUSEADDR: shared");
	xcm_port_drop(&s);
	xcm_port_drop(&w);
	CHECK(!take(&w, "10.0.0.1", p, 0), "the port is free again once dropped");
	CHECK(take(&s, "0.0.0.0", p, 0) == -EADDRINUSE, "the wildcard of a port an address has");
	CHECK(take(&s, "::", p, 0) == -EADDRINUSE, ":: (not AF-only) covers IPv4 too");
	CHECK(!take(&s, "::", p, XCM_PORT_AFONLY), ":: AF-only does not");
	CHECK(!take(&t, "10.0.0.2", p, 0), "another address, the same port");
	xcm_port_drop(&t);
	CHECK(!take(&t, "10.0.0.1", q, 0), "the address, another port");
	xcm_port_drop(&t);
	xcm_port_drop(&s);
	xcm_port_drop(&w);
	return 0;
}

static int ports_ephemeral(char *why)
{
	struct xcm_port a = XCM_PORT_INIT, b = XCM_PORT_INIT;
	uint16_t lo, hi;

	xcm_port_range(&lo, &hi);
	CHECK(!take(&a, "10.0.0.1", 0, 0) && !take(&b, "10.0.0.1", 0, 0), "two ephemeral ports");
	CHECK(a.port >= lo && a.port <= hi && b.port >= lo && b.port <= hi && a.port != b.port,
	      "in ip_local_port_range [%u, %u], apart: %u %u", lo, hi, a.port, b.port);
	xcm_port_drop(&a);
	xcm_port_drop(&b);
	return 0;
}

/* In a child: fn's 0 or not as its exit. */
static int in_child(int (*fn)(void))
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (!pid)
		_exit(fn() ? 1 : 0);
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int other_netns(void)
{
	struct xcm_port w = XCM_PORT_INIT;

	if (unshare(CLONE_NEWNET))
		return 2;
	return take(&w, "0.0.0.0", test_port(2), 0);
}

static int unprivileged(void)
{
	struct xcm_port w = XCM_PORT_INIT;

	if (setgid(65534) || setuid(65534))
		return 2;
	return take(&w, "0.0.0.0", 80, 0) == -EACCES ? 0 : 1;
}

/* UNIT_SKIP: skipped (why says why) */
static int ports_netns(char *why)
{
	struct xcm_port w = XCM_PORT_INIT;
	int rc;

	CHECK(!take(&w, "0.0.0.0", test_port(2), 0), "0.0.0.0:%u here", test_port(2));
	rc = in_child(other_netns);
	xcm_port_drop(&w);
	if (rc == 2) {
		snprintf(why, WHY_LEN, "no new network namespace here (not root)");
		return UNIT_SKIP;
	}
	CHECK(!rc, "0.0.0.0:%u there: taken (%d)", test_port(2), rc);
	return 0;
}

static int ports_privileged(char *why)
{
	int rc = in_child(unprivileged);

	if (rc == 2) {
		snprintf(why, WHY_LEN, "cannot become nobody here (not root)");
		return UNIT_SKIP;
	}
	CHECK(!rc, "port 80 as nobody: not EACCES");
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CHECK("ev_request", ev_request,
		   "CONNECT_REQUEST: the peer's values from our side, its private data"),
	UNIT_CHECK("ev_no_pdata", ev_no_pdata,
		   "ESTABLISHED, REJECTED: private data as the message holds"),
	UNIT_CHECK("ev_sidr", ev_sidr, "SIDR: UNREACHABLE for a refusal, param.ud"),
	UNIT_CHECK("learn_passive", learn_passive, "a REQ's values kept for the passive side"),
	UNIT_CHECK("learn_active", learn_active, "a REP's values kept for the active side"),
	UNIT_CHECK("attr_init", attr_init, "INIT's attributes"),
	UNIT_CHECK("attr_rtr_rts", attr_rtr_rts, "RTR's and RTS's attributes"),
	UNIT_CHECK("path", path, "the route's addresses and path"),
	UNIT_CHECK("inet", inet, "addresses as 16 bytes; the route's source"),
	UNIT_CHECK("ai_active", ai_active, "rdma_getaddrinfo: numeric destinations"),
	UNIT_CHECK("ai_passive", ai_passive, "rdma_getaddrinfo: RAI_PASSIVE"),
	UNIT_CHECK("ports_rules", ports_rules,
		   "bind rules: addresses, wildcards, AF-only, REUSEADDR"),
	UNIT_CHECK("ports_ephemeral", ports_ephemeral, "ephemeral ports"),
	UNIT_CHECK("ports_netns", ports_netns, "ports per network namespace"),
	UNIT_CHECK("ports_privileged", ports_privileged,
		   "privileged ports: EACCES without CAP_NET_BIND_SERVICE"),
};

UNIT_FILE(rdmacm, NULL, NULL, cases);
