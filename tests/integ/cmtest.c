/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-cmtest: xhcad's connection manager driven as the rdma_cm library
 * drives it (cm.h), on a libxhca session whose RC QP the connection is for:
 * the CM's messages on the wire, its events, and the QP carrying a message
 * once connected. One line per step, "ok"/"not ok", then exit 0 when all
 * went as expected.
 *
 *   server IF PORT WHAT            listen on PORT; the request: accept
 *                                  (then a SEND received, the peer's
 *                                  DREQ: DISCONNECTED), reject (private
 *                                  data "no thanks"), dies (exit, not
 *                                  answered) or late (the client gone:
 *                                  its REJ, reason 4)
 *   client IF SRC DST PORT expect  connect; expect: established (a SEND,
 *                                  then disconnect: DISCONNECTED),
 *                                  dies (a SEND, then exits connected),
 *                                  gone (exits before an answer),
 *                                  rejected:REASON or unreachable
 *   ud-server IF PORT accept|reject  the same for a UD id: a SIDR_REQ,
 *                                  answered with the QP and Q_Key (then a
 *                                  UD SEND received) or refused
 *   ud-client IF SRC DST PORT expect  SIDR_REQ; expect: established (a UD
 *                                  SEND to what SIDR_REP said) or
 *                                  rejected:STATUS
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <xhca/xhca.h>
#include <xhca/ctl.h>
#include <xhca/cm.h>
#include <xhca/pkt.h>

#include "check.h"

struct side {
	struct xhca_ctx *ctx;
	struct xhca_cq *cq;
	struct xhca_qp *qp;
	__u8 *buf;
	int chan_fd;
	__u32 chan, id;
};

static void die(const char *what, int rc)
{
	check(0, "%s: %s", what, strerror(-rc));
	exit(1);
}

#define UD_QKEY 0x01234567u /* rdma_cm's RDMA_UDP_QKEY */

/* The session main() closes once a role returned (its exits are _exit:
 * the session left to xhcad as a dead process's). */
static struct side *opened;

/* A session with a QP (RC, or UD with UD_QKEY in RTS), a CQ, a buffer,
 * an event channel and a cm id of the QP's type. */
static void side_open(struct side *s, const char *ifname, int ud)
{
	struct xhca_qp_init_attr ia = { .type = ud ? XHCA_QPT_UD : XHCA_QPT_RC, .flowq = -1,
					.rq_depth = 16, .sq_depth = 16 };
	struct xhca_qp_attr at = { .mask = XHCA_QPA_STATE, .state = XHCA_QPS_INIT };
	struct xhca_cm_id id = { .ps = ud ? XHCA_CM_PS_UDP : XHCA_CM_PS_TCP,
				 .qp_type = ia.type };
	int rc;

	opened = s;
	s->ctx = xhca_open(ifname);
	if (!s->ctx)
		die("xhca_open", -errno);
	s->cq = xhca_cq_create(s->ctx, 64);
	s->buf = xhca_alloc(s->ctx, 4096);
	ia.recv_cq = ia.send_cq = s->cq;
	s->qp = s->cq && s->buf ? xhca_qp_create(s->ctx, &ia) : NULL;
	if (!s->qp || xhca_qp_modify(s->qp, &at))
		die("QP", -errno);
	for (__u8 st = XHCA_QPS_RTR; ud && st <= XHCA_QPS_RTS; st++) {
		struct xhca_qp_attr u = { .mask = XHCA_QPA_STATE | XHCA_QPA_QKEY, .state = st,
					  .qkey = UD_QKEY };

		if (xhca_qp_modify(s->qp, &u))
			die("UD QP", -errno);
	}
	rc = xhca_session_call(s->ctx, XHCA_CTL_CM_CHANNEL, NULL, 0, -1, &s->chan,
			       sizeof(s->chan), &s->chan_fd);
	if (rc)
		die("cm channel", rc);
	id.chan = s->chan;
	rc = xhca_session_call(s->ctx, XHCA_CTL_CM_ID, &id, sizeof(id), -1, &id, sizeof(id), NULL);
	if (rc)
		die("cm id", rc);
	s->id = id.id;
}

/* The next event within ms; its type, or -1. */
static int next_event(struct side *s, struct xhca_cm_event *ev, int ms)
{
	struct pollfd p = { .fd = s->chan_fd, .events = POLLIN };

	if (poll(&p, 1, ms) != 1 || recv(s->chan_fd, ev, sizeof(*ev), 0) != sizeof(*ev))
		return -1;
	return (int)ev->event;
}

/* The QP to RTR and RTS with what the connection's messages said: as Linux,
 * a message's Starting PSN is what its sender's QP expects first (my_psn,
 * ours), the peer's is where we send from. */
static int qp_connect(struct side *s, const struct xhca_cm_event *ev, __u32 my_psn)
{
	struct xhca_qp_attr at = {
		.mask = XHCA_QPA_STATE | XHCA_QPA_MTU | XHCA_QPA_EPSN | XHCA_QPA_LOCAL_IP |
			XHCA_QPA_REMOTE_IP | XHCA_QPA_DEST_QPN,
		.state = XHCA_QPS_RTR, .mtu_shift = 10, .epsn = my_psn, .dest_qpn = ev->qpn,
	};

	memcpy(at.local_ip, ev->dst_ip, 16);
	memcpy(at.remote_ip, ev->src_ip, 16);
	if (xhca_qp_modify(s->qp, &at))
		return -1;
	memset(&at, 0, sizeof(at));
	at.mask = XHCA_QPA_STATE | XHCA_QPA_SQ_PSN;
	at.state = XHCA_QPS_RTS;
	at.sq_psn = ev->psn;
	return xhca_qp_modify(s->qp, &at);
}

static int cm(struct side *s, __u32 op, const void *req, __u32 len)
{
	return xhca_session_call(s->ctx, op, req, len, -1, NULL, 0, NULL);
}

/* A completion within 10 s (an RC SEND under 25% loss both ways may need
 * several retransmissions, each after the QP's timeout). */
static int wait_wc(struct side *s, struct xhca_wc *wc)
{
	for (int i = 0; i < 1000; i++) {
		if (xhca_poll_cq(s->cq, wc, 1) == 1)
			return 0;
		usleep(10000);
	}
	return -1;
}

static int server(const char *ifname, int port, const char *what)
{
	int accept = !strcmp(what, "accept");
	struct xhca_cm_listen l = { .backlog = 4, .port = (__u16)port };
	struct xhca_cm_event ev;
	static struct side s;
	struct xhca_wc wc;
	int t;

	side_open(&s, ifname, 0);
	l.id = s.id;
	check(!cm(&s, XHCA_CTL_CM_LISTEN, &l, sizeof(l)), "server: listening on port %d", port);
	printf("# ready\n");
	fflush(stdout);
	t = next_event(&s, &ev, 20000);
	check(t == XHCA_CM_EV_CONNECT_REQUEST && ev.listen_id == s.id && ev.id != s.id,
	      "server: CONNECT_REQUEST on a new id (%d, id %u, listener %u), private data '%.8s'",
	      t, ev.id, ev.listen_id, (const char *)ev.pdata);
	if (!strcmp(what, "dies")) { /* the request unanswered: xhcad's end rejects it */
		check(1, "server: exits with the request unanswered");
		_exit(fails ? 1 : 0);
	}
	if (!strcmp(what, "late")) { /* the client gone before our answer */
		__u32 req = ev.id;

		t = next_event(&s, &ev, 10000);
		check(t == XHCA_CM_EV_REJECTED && ev.id == req && ev.status == 4,
		      "server: the request REJECTED by its sender, reason 4 (timeout) (%d, status %d)",
		      t, ev.status);
		return fails;
	}
	if (!accept) {
		struct xhca_cm_reject r = { .id = ev.id, .pdata_len = 9 };

		memcpy(r.pdata, "no thanks", 9);
		check(!cm(&s, XHCA_CTL_CM_REJECT, &r, sizeof(r)), "server: rejected");
		return fails;
	}
	{
		struct xhca_cm_conn k = { .id = ev.id, .qpn = xhca_qp_num(s.qp), .psn = 0x2000,
					  .resp_res = 4, .init_depth = 4, .rnr_retry = 7,
					  .pdata_len = 7 };

		memcpy(k.pdata, "welcome", 7);
		check(!qp_connect(&s, &ev, 0x2000), "server: QP to RTR and RTS (peer QP 0x%06x)",
		      ev.qpn);
		xhca_post_recv(s.qp, 1, s.buf, 256);
		check(!cm(&s, XHCA_CTL_CM_ACCEPT, &k, sizeof(k)), "server: accepted");
	}
	t = next_event(&s, &ev, 10000);
	check(t == XHCA_CM_EV_ESTABLISHED, "server: ESTABLISHED once the RTU came (%d)", t);
	check(!wait_wc(&s, &wc) && wc.opcode == XHCA_WC_RECV && !memcmp(s.buf, "hello cm", 8),
	      "server: the client's SEND received over the connection");
	t = next_event(&s, &ev, 10000);
	check(t == XHCA_CM_EV_DISCONNECTED && !ev.status, "server: DISCONNECTED by the peer (%d)",
	      t);
	return fails;
}

static int client(const char *ifname, const char *src, const char *dst, int port,
		  const char *expect)
{
	struct xhca_cm_conn k = { .qpn = 0, .psn = 0x1000, .dst_port = (__u16)port,
				  .src_port = 40000, .resp_res = 4, .init_depth = 4,
				  .retry_count = 7, .rnr_retry = 7, .mtu = 3, .pdata_len = 5 };
	struct xhca_cm_event ev;
	static struct side s;
	struct xhca_wc wc;
	int t;

	side_open(&s, ifname, 0);
	k.id = s.id;
	k.qpn = xhca_qp_num(s.qp);
	xhca_ip_parse(src, k.src_ip);
	xhca_ip_parse(dst, k.dst_ip);
	memcpy(k.pdata, "hi cm", 5);
	check(!cm(&s, XHCA_CTL_CM_CONNECT, &k, sizeof(k)), "client: REQ sent");
	if (!strcmp(expect, "gone")) { /* before any answer */
		check(1, "client: exits before the answer");
		_exit(fails ? 1 : 0);
	}
	t = next_event(&s, &ev, 30000);
	if (!strncmp(expect, "rejected:", 9)) {
		check(t == XHCA_CM_EV_REJECTED && ev.status == atoi(expect + 9),
		      "client: REJECTED with reason %d (%d, status %d), private data '%.9s'",
		      atoi(expect + 9), t, ev.status, (const char *)ev.pdata);
		return fails;
	}
	if (!strcmp(expect, "unreachable")) {
		check(t == XHCA_CM_EV_UNREACHABLE && ev.status == -ETIMEDOUT,
		      "client: UNREACHABLE, -ETIMEDOUT (%d, status %d)", t, ev.status);
		return fails;
	}
	check(t == XHCA_CM_EV_CONNECT_RESPONSE && !memcmp(ev.pdata, "welcome", 7),
	      "client: CONNECT_RESPONSE with the REP's private data (%d)", t);
	check(!qp_connect(&s, &ev, 0x1000), "client: QP to RTR and RTS (peer QP 0x%06x)", ev.qpn);
	check(!cm(&s, XHCA_CTL_CM_ESTABLISH, &s.id, sizeof(s.id)), "client: RTU sent");
	{
		struct xhca_sge sg = { .addr = (uintptr_t)s.buf, .length = 8 };
		struct xhca_send_wr wr = { .wr_id = 9, .sg_list = &sg, .num_sge = 1,
					   .opcode = XHCA_WR_SEND,
					   .send_flags = XHCA_SEND_SIGNALED };

		memcpy(s.buf, "hello cm", 8);
		check(!xhca_post_send(s.qp, &wr, NULL) && !wait_wc(&s, &wc) && !wc.status,
		      "client: a SEND over the connection, acknowledged");
	}
	if (!strcmp(expect, "dies")) { /* no disconnect: xhcad's end of the session does it */
		check(1, "client: exits connected");
		_exit(fails ? 1 : 0);
	}
	check(!cm(&s, XHCA_CTL_CM_DISCONNECT, &s.id, sizeof(s.id)), "client: DREQ sent");
	t = next_event(&s, &ev, 10000);
	check(t == XHCA_CM_EV_DISCONNECTED && !ev.status, "client: DISCONNECTED once the DREP "
	      "came (%d, status %d)", t, ev.status);
	return fails;
}

/* UD: a SIDR_REQ to a UD listener, accepted (its QPN and Q_Key, then a UD
 * SEND to them) or refused with the SIDR status. */
static int ud_server(const char *ifname, int port, int accept)
{
	struct xhca_cm_listen l = { .backlog = 4, .port = (__u16)port };
	struct xhca_cm_event ev;
	static struct side s;
	struct xhca_wc wc;
	int t;

	side_open(&s, ifname, 1);
	l.id = s.id;
	check(!cm(&s, XHCA_CTL_CM_LISTEN, &l, sizeof(l)), "ud server: listening on port %d", port);
	printf("# ready\n");
	fflush(stdout);
	t = next_event(&s, &ev, 20000);
	check(t == XHCA_CM_EV_CONNECT_REQUEST && ev.listen_id == s.id,
	      "ud server: CONNECT_REQUEST (SIDR_REQ) (%d), private data '%.5s'", t,
	      (const char *)ev.pdata);
	if (!accept) {
		struct xhca_cm_reject r = { .id = ev.id, .pdata_len = 9 };

		memcpy(r.pdata, "no thanks", 9);
		check(!cm(&s, XHCA_CTL_CM_REJECT, &r, sizeof(r)), "ud server: refused");
		return fails;
	}
	{
		struct xhca_cm_conn k = { .id = ev.id, .qpn = xhca_qp_num(s.qp), .qkey = UD_QKEY,
					  .pdata_len = 7 };

		memcpy(k.pdata, "welcome", 7);
		xhca_post_recv(s.qp, 1, s.buf, 256);
		check(!cm(&s, XHCA_CTL_CM_ACCEPT, &k, sizeof(k)),
		      "ud server: accepted (SIDR_REP: QP 0x%06x, Q_Key 0x%08x)", k.qpn, k.qkey);
	}
	check(!wait_wc(&s, &wc) && wc.opcode == XHCA_WC_RECV && !memcmp(s.buf + 40, "hello ud", 8),
	      "ud server: the client's UD SEND received (after its 40-byte GRH)");
	return fails;
}

static int ud_client(const char *ifname, const char *src, const char *dst, int port,
		     const char *expect)
{
	struct xhca_cm_conn k = { .dst_port = (__u16)port, .src_port = 40001, .pdata_len = 5 };
	struct xhca_cm_event ev;
	static struct side s;
	struct xhca_wc wc;
	int t;

	side_open(&s, ifname, 1);
	k.id = s.id;
	k.qpn = xhca_qp_num(s.qp);
	k.qkey = UD_QKEY;
	xhca_ip_parse(src, k.src_ip);
	xhca_ip_parse(dst, k.dst_ip);
	memcpy(k.pdata, "hi ud", 5);
	check(!cm(&s, XHCA_CTL_CM_CONNECT, &k, sizeof(k)), "ud client: SIDR_REQ sent");
	t = next_event(&s, &ev, 30000);
	if (!strncmp(expect, "rejected:", 9)) {
		check(t == XHCA_CM_EV_REJECTED && ev.status == atoi(expect + 9),
		      "ud client: REJECTED with SIDR status %d (%d, status %d), private data '%.9s'",
		      atoi(expect + 9), t, ev.status, (const char *)ev.pdata);
		return fails;
	}
	check(t == XHCA_CM_EV_ESTABLISHED && ev.qkey == UD_QKEY && ev.qpn &&
	      !memcmp(ev.pdata, "welcome", 7),
	      "ud client: ESTABLISHED (SIDR_REP): QP 0x%06x, Q_Key 0x%08x (%d)", ev.qpn, ev.qkey,
	      t);
	{
		struct xhca_sge sg = { .addr = (uintptr_t)s.buf, .length = 8 };
		struct xhca_send_wr wr = { .wr_id = 9, .sg_list = &sg, .num_sge = 1,
					   .opcode = XHCA_WR_SEND,
					   .send_flags = XHCA_SEND_SIGNALED };

		memcpy(wr.wr.ud.dest_ip, k.dst_ip, 16);
		wr.wr.ud.remote_qpn = ev.qpn;
		wr.wr.ud.remote_qkey = ev.qkey;
		memcpy(s.buf, "hello ud", 8);
		check(!xhca_post_send(s.qp, &wr, NULL) && !wait_wc(&s, &wc) && !wc.status,
		      "ud client: a UD SEND to the QP the SIDR_REP named");
	}
	return fails;
}

/* The role's failures; the session closed, so that leaks show. */
static int done(int failed)
{
	if (opened) {
		if (opened->chan_fd > 0)
			close(opened->chan_fd);
		xhca_close(opened->ctx);
	}
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && !strcmp(argv[1], "server"))
		return done(server(argv[2], atoi(argv[3]), argv[4]));
	if (argc == 5 && !strcmp(argv[1], "ud-server"))
		return done(ud_server(argv[2], atoi(argv[3]), !strcmp(argv[4], "accept")));
	if (argc == 7 && !strcmp(argv[1], "ud-client"))
		return done(ud_client(argv[2], argv[3], argv[4], atoi(argv[5]), argv[6]));
	if (argc == 7 && !strcmp(argv[1], "client"))
		return done(client(argv[2], argv[3], argv[4], atoi(argv[5]), argv[6]));
	fprintf(stderr, "usage: xhca-cmtest server IF PORT accept|reject|dies|late | "
		"client IF SRC DST PORT established|dies|gone|rejected:N|unreachable | "
		"ud-server IF PORT accept|reject | ud-client IF SRC DST PORT established|rejected:N\n");
	return 2;
}
