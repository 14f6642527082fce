/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The connection manager (IBA chapter 12) over RoCEv2, as rdma_cm uses it:
 * REQ, REP, RTU, REJ, MRA, DREQ and DREP in 256-byte MADs, UD SENDs to and
 * from QP1 (the GSI QP, Q_Key 0x80010000), which xhcad keeps for itself.
 * The rdma_cm library of an application (user/rdmacm/) asks through the
 * control socket (cm.h) and hears back on its event channels; the QPs
 * themselves it moves through RTR and RTS with what the messages carried.
 *
 * Per connection, as the IBA state machine has it: the active side sends
 * REQ (REQ_SENT), gets REP (REP_RCVD: the library moves its QP and asks for
 * the RTU: ESTABLISHED); the passive side gets a REQ on a listener's
 * service ID (REQ_RCVD: a new id, CONNECT_REQUEST), accepts (REP_SENT) and
 * gets the RTU (ESTABLISHED); either side can REJ; DREQ and DREP end it
 * (TIMEWAIT, then the id is free for reuse). REQ, REP and DREQ wait for
 * their answer and are sent again on a timer, up to CM_RETRIES; an MRA
 * makes the peer's wait longer; a duplicate of a REQ not yet accepted is
 * answered with an MRA, of a REP of an established connection with the
 * RTU again. A UD id resolves a service ID instead (SIDR_REQ, SIDR_REP:
 * the peer's UD QP and Q_Key, or its refusal). An id destroyed mid-way
 * tells the peer first (REJ 4 of a REQ sent, REJ 28 of one received,
 * DREQ of a connection). Layouts and the rdma_cm header in the REQ's private data
 * follow what Linux's ib_cm and rdma_cm send, so either side can be RXE.
 *
 * This file is the state machine: ids, listeners, timers, event channels, the
 * messages received and the library's requests. The MADs are built in
 * cm_wire.c, below it (cm_int.h: what the two files share).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <xhca/cm.h>
#include <xhca/pkt.h>
#include <xhca/wire.h>
#include "log.h"
#include "cm_int.h"

#define TIMEWAIT_NS 500000000ull
#define NEIGH_WAIT_NS 20000000ull /* no neighbour entry yet: again soon */

struct cm_chan {
	__u32 id, session;
	int fd;			/* xhcad's end of the channel's socket pair */
	struct cm_chan *next;
};

static __u64 ns_of_cm_time(__u8 t) /* 4.096 us * 2^t, in ns */
{
	return 4096ull << (t > 31 ? 31 : t);
}

/* A received MAD, where it came from and where to. */
struct mad_in {
	const __u8 *m, *q;	/* the MAD, its CM data */
	__u8 local[16], remote[16];
};

/* ---- ids and channels ---------------------------------------------------- */

static struct cm_conn_id *id_find(struct xhcad *d, __u32 id, __u32 session)
{
	for (struct cm_conn_id *c = d->cm->ids; c; c = c->next)
		if (c->id == id && (!session || c->session == session))
			return c;
	return NULL;
}

static struct cm_chan *chan_find(struct xhcad *d, __u32 chan, __u32 session)
{
	for (struct cm_chan *ch = d->cm->chans; ch; ch = ch->next)
		if (ch->id == chan && ch->session == session)
			return ch;
	return NULL;
}

static struct cm_conn_id *id_new(struct xhcad *d, __u32 session, __u32 chan)
{
	struct cm_conn_id *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->id = ++d->cm->next_id;
	c->session = session;
	c->chan = chan;
	c->next = d->cm->ids;
	d->cm->ids = c;
	return c;
}

static void id_free(struct xhcad *d, struct cm_conn_id *c)
{
	for (struct cm_conn_id **pp = &d->cm->ids; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	free(c);
}

/* A fresh local communication ID: random, and no other connection's. */
static __u32 new_cid(struct xhcad *d)
{
	for (;;) {
		__u32 v = 0;
		int used = 0;

		if (getrandom(&v, sizeof(v), 0) != sizeof(v))
			v = (__u32)now_ns();
		for (struct cm_conn_id *c = d->cm->ids; c && v; c = c->next)
			used |= c->local_cid == v;
		if (v && !used)
			return v;
	}
}

/* An event on the id's channel (an application that stopped reading
 * loses it: the channel's socket holds plenty). */
static void event(struct xhcad *d, const struct cm_conn_id *c, __u32 type, __s32 status,
		  struct xhca_cm_event *ev)
{
	struct xhca_cm_event z = {};
	struct cm_chan *ch = chan_find(d, c->chan, c->session);

	if (!ev)
		ev = &z;
	ev->event = type;
	ev->id = c->id;
	ev->status = status;
	if (!ev->src_port) {
		memcpy(ev->src_ip, c->remote_ip, 16);
		memcpy(ev->dst_ip, c->local_ip, 16);
		ev->src_port = c->remote_port;
		ev->dst_port = c->local_port;
	}
	if (!ch || send(ch->fd, ev, sizeof(*ev), MSG_DONTWAIT | MSG_NOSIGNAL) != sizeof(*ev))
		d->cm->st.events_lost++;
	else
		d->cm->st.events++;
}

/* ---- sending ------------------------------------------------------------------ */

/* A MAD to QP1 at ip (from our QP1). 0, or -EHOSTUNREACH while the
 * neighbour is unknown (looked up meanwhile). */
static int mad_send(struct xhcad *d, const __u8 ip[16], const __u8 local_ip[16], const __u8 *mad)
{
	struct xhca_pkt_spec s;
	int r;

	xhca_pkt_spec_init(&s, XHCA_OPC_UD | XHCA_OP_SEND_ONLY);
	r = net_dest_mac(d, ip, s.dmac);
	if (r)
		return r;
	memcpy(s.smac, d->net.mac, 6);
	memcpy(s.dst_ip, ip, 16);
	memcpy(s.src_ip, local_ip, 16);
	s.ipv6 = !xhca_ip_is_v4(ip);
	s.dqpn = XHCA_QPN_GSI;
	s.deth_qkey = XHCA_GSI_QKEY;
	s.deth_sqp = XHCA_QPN_GSI;
	s.payload = mad;
	s.payload_len = MAD_LEN;
	s.psn = d->cm->sq_psn;
	r = resp_tx_umem(d, &s);
	if (!r)
		d->cm->sq_psn = (d->cm->sq_psn + 1) & XHCA_PSN_MASK;
	if (!r) /* now: a control request or a timer sends outside a round's kick */
		xsk_tx_kick(d);
	d->cm->st.sent += !r;
	return r;
}

/* c's message that waits for an answer: sent now, again every wait_ns. */
static void send_waiting(struct xhcad *d, struct cm_conn_id *c, __u64 wait_ns)
{
	c->mad_live = 1;
	c->tries = 0;
	c->wait_ns = wait_ns;
	c->deadline = now_ns() + (mad_send(d, c->remote_ip, c->local_ip, c->mad) ? NEIGH_WAIT_NS
										 : wait_ns);
}

/* A message that waits for nothing (RTU, REJ, MRA, DREP). */
static void send_once(struct xhcad *d, struct cm_conn_id *c, const __u8 *mad)
{
	if (mad_send(d, c->remote_ip, c->local_ip, mad))
		d->cm->st.send_failed++;
}

/* A REJ (cm_build_rej) sent, counted. */
static void send_rej(struct xhcad *d, struct cm_conn_id *c, __u16 reason, int msg,
		     const __u8 *pdata, __u8 len)
{
	__u8 m[MAD_LEN];

	cm_build_rej(d, c, m, reason, msg, pdata, len);
	send_once(d, c, m);
	d->cm->st.rejects_sent++;
}

/* A REJ for a REQ no id took (no listener, or nobody's): to where it came
 * from, its TID echoed. */
static void rej_unmatched(struct xhcad *d, const __u8 *req, const __u8 local[16],
			  const __u8 remote[16], __u16 reason)
{
	struct cm_conn_id c = { .remote_cid = get32(req + MAD_DATA), .tid = get64(req + 8) };

	memcpy(c.local_ip, local, 16);
	memcpy(c.remote_ip, remote, 16);
	send_rej(d, &c, reason, 0, NULL, 0);
}

/* A SIDR_REP that refuses a request no id took: to where it came from. */
static void sidr_refuse(struct xhcad *d, const struct mad_in *in, __u8 status)
{
	struct cm_conn_id c = { .remote_cid = get32(in->q), .tid = get64(in->m + 8),
				.sid = get64(in->q + 8) };
	__u8 m[MAD_LEN];

	memcpy(c.local_ip, in->local, 16);
	memcpy(c.remote_ip, in->remote, 16);
	cm_build_sidr_rep(d, &c, m, status, 0, 0, NULL, 0);
	send_once(d, &c, m);
	d->cm->st.rejects_sent++;
}

/* ---- received messages -------------------------------------------------------- */

static struct cm_conn_id *by_local_cid(struct xhcad *d, __u32 cid)
{
	for (struct cm_conn_id *c = d->cm->ids; c && cid; c = c->next)
		if (c->local_cid == cid && c->state != CM_LISTEN)
			return c;
	return NULL;
}

/* A listener for the REQ's service ID and destination address; *sid_known:
 * some listener has the service ID (a wrong address is then a consumer's
 * reject, as rdma_cm's, not an invalid service ID). */
static struct cm_conn_id *listener(struct xhcad *d, __u64 sid, const __u8 dst[16], __u8 qp_type,
				   int *sid_known)
{
	static const __u8 any[16];

	*sid_known = 0;
	for (struct cm_conn_id *c = d->cm->ids; c; c = c->next) {
		if (c->state != CM_LISTEN || ((__u64)c->ps << 16 | c->lport) != sid)
			continue;
		*sid_known = 1;
		if (c->qp_type == qp_type && (!memcmp(c->lip, any, 16) || !memcmp(c->lip, dst, 16)))
			return c;
	}
	return NULL;
}

/* The CONNECT_REQUEST of a new id: the REQ's values, from the peer's side. */
static void req_event(struct xhcad *d, struct cm_conn_id *c, const __u8 *q)
{
	struct xhca_cm_event ev = {
		.listen_id = c->listen_id, .qpn = get24(q + 32), .psn = get24(q + 44),
		.resp_res = q[35], .init_depth = q[39], .retry_count = q[47] & 7,
		.rnr_retry = q[50] & 7, .flow_control = q[43] & 1, .srq = (q[51] >> 3) & 1,
		.mtu = q[50] >> 4, .ack_timeout = q[95] >> 3, .pdata_len = 56,
		.src_port = c->remote_port, .dst_port = c->local_port,
	};

	memcpy(ev.src_ip, c->remote_ip, 16);
	memcpy(ev.dst_ip, c->local_ip, 16);
	memcpy(ev.pdata, q + 140 + 36, 56);
	event(d, c, XHCA_CM_EV_CONNECT_REQUEST, 0, &ev);
}

static int on_req(struct xhcad *d, const struct mad_in *in)
{
	const __u8 *q = in->q;
	__u32 rcid = get32(q);
	__u64 guid = get64(q + 16), sid = get64(q + 8);
	__u8 src[16], dst[16], qp_type = ((q[43] >> 1) & 3) == 1 ? XHCA_QPT_UC : XHCA_QPT_RC;
	__u16 sport;
	struct cm_conn_id *l, *c;
	int known;

	for (c = d->cm->ids; c; c = c->next) {
		if (c->remote_cid != rcid || c->remote_guid != guid || c->state == CM_LISTEN)
			continue;
		if (c->state == CM_REQ_RCVD) { /* not accepted yet: wait longer */
			__u8 m[MAD_LEN];

			cm_build_mra(d, c, m, 0);
			send_once(d, c, m);
		}
		return 1; /* a duplicate */
	}
	if (cm_cma_hdr_get(q + 140, src, dst, &sport) || memcmp(dst, in->local, 16)) {
		rej_unmatched(d, in->m, in->local, in->remote, REJ_CONSUMER);
		return 1;
	}
	l = listener(d, sid, dst, qp_type, &known);
	if (!l || l->pending >= l->backlog) {
		rej_unmatched(d, in->m, in->local, in->remote, known ? REJ_CONSUMER : REJ_INVALID_SID);
		return 1;
	}
	c = id_new(d, l->session, l->chan);
	if (!c)
		return 0;
	c->ps = l->ps;
	c->qp_type = l->qp_type;
	c->state = CM_REQ_RCVD;
	c->listen_id = l->id;
	c->local_cid = new_cid(d);
	c->remote_cid = rcid;
	c->remote_guid = guid;
	c->tid = get64(in->m + 8);
	c->remote_qpn = get24(q + 32);
	c->sid = sid;
	memcpy(c->local_ip, in->local, 16);
	memcpy(c->remote_ip, in->remote, 16);
	c->local_port = l->lport;
	c->remote_port = sport;
	c->req_local_timeout = q[47] >> 3;
	l->pending++;
	req_event(d, c, q);
	return 1;
}

static int on_rep(struct xhcad *d, const struct mad_in *in)
{
	const __u8 *q = in->q;
	struct cm_conn_id *c = by_local_cid(d, get32(q + 4));
	struct xhca_cm_event ev = {};
	__u8 m[MAD_LEN];

	if (!c)
		return 0;
	if (c->state == CM_ESTABLISHED) { /* our RTU was lost: again */
		cm_build_ids(d, c, m, ATTR_RTU, c->tid);
		send_once(d, c, m);
		return 1;
	}
	if (c->state == CM_REP_RCVD) { /* the library is at it: wait longer */
		cm_build_mra(d, c, m, 1);
		send_once(d, c, m);
		return 1;
	}
	if (c->state != CM_REQ_SENT)
		return 0;
	c->mad_live = 0;
	c->state = CM_REP_RCVD;
	c->remote_cid = get32(q);
	c->remote_qpn = get24(q + 12);
	c->remote_guid = get64(q + 28);
	ev.qpn = c->remote_qpn;
	ev.psn = get24(q + 20);
	ev.resp_res = q[24];
	ev.init_depth = q[25];
	ev.flow_control = q[26] & 1;
	ev.rnr_retry = q[27] >> 5;
	ev.srq = (q[27] >> 4) & 1;
	ev.ack_timeout = CM_PKT_LIFE + 1;
	ev.pdata_len = 196;
	memcpy(ev.pdata, q + 36, 196);
	event(d, c, XHCA_CM_EV_CONNECT_RESPONSE, 0, &ev);
	return 1;
}

static int on_rtu(struct xhcad *d, const struct mad_in *in)
{
	struct cm_conn_id *c = by_local_cid(d, get32(in->q + 4));

	if (!c || c->remote_cid != get32(in->q))
		return 0;
	if (c->state != CM_REP_SENT) /* a duplicate RTU */
		return c->state == CM_ESTABLISHED;
	c->mad_live = 0;
	c->state = CM_ESTABLISHED;
	event(d, c, XHCA_CM_EV_ESTABLISHED, 0, NULL);
	return 1;
}

/* A REJ of a request whose sender gave up before our answer names no comm
 * ID of ours: the request's, from that address. */
static struct cm_conn_id *by_request(struct xhcad *d, __u32 remote_cid, const __u8 ip[16])
{
	for (struct cm_conn_id *c = d->cm->ids; c && remote_cid; c = c->next)
		if (c->remote_cid == remote_cid && c->state == CM_REQ_RCVD &&
		    !memcmp(c->remote_ip, ip, 16))
			return c;
	return NULL;
}

static int on_rej(struct xhcad *d, const struct mad_in *in)
{
	const __u8 *q = in->q;
	struct cm_conn_id *c = get32(q + 4) ? by_local_cid(d, get32(q + 4))
					    : by_request(d, get32(q), in->remote);
	struct xhca_cm_event ev = { .pdata_len = 148 };
	__u16 reason = get16(q + 10);

	if (!c || c->state == CM_ESTABLISHED || c->state == CM_TIMEWAIT || c->state == CM_IDLE)
		return 0;
	if (c->state == CM_REQ_RCVD || c->state == CM_REP_SENT) { /* the active side gave up */
		struct cm_conn_id *l = id_find(d, c->listen_id, 0);

		if (l && c->state == CM_REQ_RCVD && l->pending)
			l->pending--;
	}
	c->mad_live = 0;
	c->state = CM_IDLE;
	memcpy(ev.pdata, q + 84, 148);
	event(d, c, XHCA_CM_EV_REJECTED, reason, &ev);
	return 1;
}

static int on_mra(struct xhcad *d, const struct mad_in *in)
{
	struct cm_conn_id *c = by_local_cid(d, get32(in->q + 4));
	int msg = in->q[8] >> 6;

	if (!c || !c->mad_live || !((c->state == CM_REQ_SENT && msg == 0) ||
				    (c->state == CM_REP_SENT && msg == 1)))
		return 0;
	c->deadline = now_ns() + ns_of_cm_time(in->q[9] >> 3) + ns_of_cm_time(CM_PKT_LIFE);
	return 1;
}

/* The end of a connection: DISCONNECTED once, then its time wait. */
static void to_timewait(struct xhcad *d, struct cm_conn_id *c, __s32 status)
{
	if (c->state == CM_ESTABLISHED || c->state == CM_DREQ_SENT || c->state == CM_REP_SENT)
		event(d, c, XHCA_CM_EV_DISCONNECTED, status, NULL);
	c->mad_live = 0;
	c->state = CM_TIMEWAIT;
	c->deadline = now_ns() + TIMEWAIT_NS;
}

static int on_dreq(struct xhcad *d, const struct mad_in *in)
{
	const __u8 *q = in->q;
	struct cm_conn_id *c = by_local_cid(d, get32(q + 4)), tmp = {};
	__u8 m[MAD_LEN];

	if (c && (c->remote_cid != get32(q) || get24(q + 8) != c->local_qpn))
		return 0; /* not this connection's: Linux drops it too */
	if (!c) { /* a connection we do not know (any more): its DREP all the same */
		tmp.local_cid = get32(q + 4);
		tmp.remote_cid = get32(q);
		memcpy(tmp.local_ip, in->local, 16);
		memcpy(tmp.remote_ip, in->remote, 16);
		c = &tmp;
	}
	cm_build_ids(d, c, m, ATTR_DREP, get64(in->m + 8));
	send_once(d, c, m);
	if (c != &tmp)
		to_timewait(d, c, 0);
	return 1;
}

static int on_drep(struct xhcad *d, const struct mad_in *in)
{
	struct cm_conn_id *c = by_local_cid(d, get32(in->q + 4));

	if (!c || c->remote_cid != get32(in->q))
		return 0;
	if (c->state == CM_DREQ_SENT)
		to_timewait(d, c, 0);
	return 1; /* or a duplicate DREP, in time wait */
}

/* SIDR_REQ: a UD listener's CONNECT_REQUEST; a repeated one is answered
 * again if it was (its SIDR_REP lost), else waits for the application. */
static int on_sidr_req(struct xhcad *d, const struct mad_in *in)
{
	const __u8 *q = in->q;
	struct xhca_cm_event ev = { .pdata_len = 180 };
	__u8 src[16], dst[16];
	struct cm_conn_id *l, *c;
	__u16 sport;
	int known;

	for (c = d->cm->ids; c; c = c->next) {
		if (c->remote_cid != get32(q) || memcmp(c->remote_ip, in->remote, 16) ||
		    (c->state != CM_SIDR_REQ_RCVD && c->state != CM_SIDR_REP_SENT))
			continue;
		if (c->state == CM_SIDR_REP_SENT)
			send_once(d, c, c->mad);
		return 1;
	}
	if (cm_cma_hdr_get(q + 16, src, dst, &sport) || memcmp(dst, in->local, 16)) {
		sidr_refuse(d, in, SIDR_REJECT);
		return 1;
	}
	l = listener(d, get64(q + 8), dst, XHCA_QPT_UD, &known);
	if (!l || l->pending >= l->backlog) {
		sidr_refuse(d, in, known ? SIDR_REJECT : SIDR_UNSUPPORTED);
		return 1;
	}
	c = id_new(d, l->session, l->chan);
	if (!c)
		return 0;
	c->ps = l->ps;
	c->qp_type = XHCA_QPT_UD;
	c->state = CM_SIDR_REQ_RCVD;
	c->listen_id = l->id;
	c->remote_cid = get32(q);
	c->tid = get64(in->m + 8);
	c->sid = get64(q + 8);
	memcpy(c->local_ip, in->local, 16);
	memcpy(c->remote_ip, in->remote, 16);
	c->local_port = l->lport;
	c->remote_port = sport;
	l->pending++;
	ev.listen_id = l->id;
	memcpy(ev.pdata, q + 52, 180);
	event(d, c, XHCA_CM_EV_CONNECT_REQUEST, 0, &ev);
	return 1;
}

/* SIDR_REP: the peer's UD QP and Q_Key (ESTABLISHED), or its refusal
 * (REJECTED, the SIDR status). */
static int on_sidr_rep(struct xhcad *d, const struct mad_in *in)
{
	const __u8 *q = in->q;
	struct cm_conn_id *c = by_local_cid(d, get32(q));
	struct xhca_cm_event ev = { .pdata_len = 136 };

	if (!c || c->state != CM_SIDR_REQ_SENT || memcmp(c->remote_ip, in->remote, 16))
		return 0;
	c->mad_live = 0;
	c->state = CM_IDLE;
	memcpy(ev.pdata, q + 96, 136);
	if (q[4] != SIDR_OK) {
		event(d, c, XHCA_CM_EV_REJECTED, q[4], &ev);
		return 1;
	}
	ev.qpn = get24(q + 8);
	ev.qkey = get32(q + 20);
	event(d, c, XHCA_CM_EV_ESTABLISHED, 0, &ev);
	return 1;
}

int cm_recv(struct xhcad *d, const struct pkt_info *pi)
{
	const struct xhca_rx_meta *m = pi->m;
	struct xhca_pkt_spec s;
	struct mad_in in;
	int taken;

	d->cm->st.received++;
	if ((__u32)m->payload_off + MAD_LEN > pi->len || m->payload_len < MAD_LEN ||
	    resp_reply_spec(pi->fr, pi->len, &d->ctxm[m->lidx], &s, XHCA_OPC_UD) < 0) {
		d->cm->st.bad++;
		return XHCA_H_BAD_META;
	}
	in.m = pi->fr + m->payload_off;
	in.q = in.m + MAD_DATA;
	memcpy(in.local, s.src_ip, 16);	/* the reply's source: the frame's destination */
	memcpy(in.remote, s.dst_ip, 16);
	if (in.m[0] != 1 || in.m[1] != CM_CLASS || in.m[2] != CM_CLASS_VERSION ||
	    in.m[3] != CM_SEND) {
		d->cm->st.bad++;
		return XHCA_H_CM;
	}
	switch (get16(in.m + 16)) {
	case ATTR_REQ: taken = on_req(d, &in); break;
	case ATTR_REP: taken = on_rep(d, &in); break;
	case ATTR_RTU: taken = on_rtu(d, &in); break;
	case ATTR_REJ: taken = on_rej(d, &in); break;
	case ATTR_MRA: taken = on_mra(d, &in); break;
	case ATTR_DREQ: taken = on_dreq(d, &in); break;
	case ATTR_DREP: taken = on_drep(d, &in); break;
	case ATTR_SIDR_REQ: taken = on_sidr_req(d, &in); break;
	case ATTR_SIDR_REP: taken = on_sidr_rep(d, &in); break;
	default: taken = 0; break; /* LAP, APR (no alternate paths on RoCE), ClassPortInfo */
	}
	d->cm->st.ignored += !taken;
	return XHCA_H_CM;
}

/* ---- what the library asks ------------------------------------------------------ */

/* The session's id for op: 0 with *out, or -errno with err saying why. */
static int own_id(struct xhcad *d, __u32 session, __u32 id, const char *op, char *err,
		  size_t errlen, struct cm_conn_id **out)
{
	struct cm_conn_id *c = id_find(d, id, 0);

	*out = c;
	if (!c || c->session != session)
		return errf(err, errlen, c ? -EPERM : -ENOENT, "%s: %s cm id %u", op,
			    c ? "another session's" : "no", id);
	return 0;
}

int cm_channel(struct xhcad *d, __u32 session, __u32 *chan, int *fd)
{
	struct cm_chan *ch = calloc(1, sizeof(*ch));
	int sv[2];

	if (!ch)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv)) {
		free(ch);
		return -errno;
	}
	ch->id = ++d->cm->next_chan;
	ch->session = session;
	ch->fd = sv[0];
	ch->next = d->cm->chans;
	d->cm->chans = ch;
	*chan = ch->id;
	*fd = sv[1];
	return 0;
}

int cm_channel_destroy(struct xhcad *d, __u32 session, __u32 chan, char *err, size_t errlen)
{
	for (struct cm_conn_id *c = d->cm->ids; c; c = c->next)
		if (c->chan == chan && c->session == session)
			return errf(err, errlen, -EBUSY, "cm channel %u: cm id %u still uses it; "
				    "destroy the ids first", chan, c->id);
	for (struct cm_chan **pp = &d->cm->chans; *pp; pp = &(*pp)->next) {
		struct cm_chan *ch = *pp;

		if (ch->id != chan || ch->session != session)
			continue;
		*pp = ch->next;
		close(ch->fd);
		free(ch);
		return 0;
	}
	return errf(err, errlen, -ENOENT, "cm channel %u: no such channel in this session", chan);
}

int cm_id_create(struct xhcad *d, __u32 session, struct xhca_cm_id *a, char *err, size_t errlen)
{
	struct cm_conn_id *c;

	if (!chan_find(d, a->chan, session))
		return errf(err, errlen, -ENOENT, "cm id: no channel %u in this session", a->chan);
	if (a->qp_type != XHCA_QPT_RC && a->qp_type != XHCA_QPT_UC && a->qp_type != XHCA_QPT_UD)
		return errf(err, errlen, -EINVAL, "cm id: QP type %u: use RC, UC or UD",
			    a->qp_type);
	c = id_new(d, session, a->chan);
	if (!c)
		return -ENOMEM;
	c->ps = a->ps;
	c->qp_type = a->qp_type;
	a->id = c->id;
	return 0;
}

int cm_migrate(struct xhcad *d, __u32 session, const struct xhca_cm_migrate *a, char *err,
	       size_t errlen)
{
	struct cm_conn_id *c;
	int rc = own_id(d, session, a->id, "cm migrate", err, errlen, &c);

	if (rc)
		return rc;
	if (!chan_find(d, a->chan, session))
		return errf(err, errlen, -ENOENT, "cm migrate: no channel %u in this session",
			    a->chan);
	c->chan = a->chan;
	return 0;
}

int cm_listen(struct xhcad *d, __u32 session, const struct xhca_cm_listen *a, char *err,
	      size_t errlen)
{
	static const __u8 any[16];
	struct cm_conn_id *c;
	int rc = own_id(d, session, a->id, "cm listen", err, errlen, &c);

	if (rc)
		return rc;
	if (c->state != CM_IDLE)
		return errf(err, errlen, -EINVAL, "cm listen: cm id %u is in use", a->id);
	if (!a->port)
		return errf(err, errlen, -EINVAL, "cm listen: bind a port first");
	if (memcmp(a->ip, any, 16) && !net_is_local(d, a->ip))
		return errf(err, errlen, -EADDRNOTAVAIL, "cm listen: not an address of %s",
			    d->ifname);
	for (struct cm_conn_id *o = d->cm->ids; o; o = o->next)
		if (o->state == CM_LISTEN && o->ps == c->ps && o->lport == a->port &&
		    (!memcmp(o->lip, a->ip, 16) || !memcmp(o->lip, any, 16) ||
		     !memcmp(a->ip, any, 16)))
			return errf(err, errlen, -EADDRINUSE, "cm listen: port %u is listened "
				    "on already (cm id %u)", a->port, o->id);
	memcpy(c->lip, a->ip, 16);
	c->lport = a->port;
	c->backlog = a->backlog ? a->backlog : 128;
	c->state = CM_LISTEN;
	return 0;
}

/* The connection's QP is one of the session's, of the id's type. */
static int own_qp(struct xhcad *d, __u32 session, const struct cm_conn_id *c, __u32 qpn,
		  const char *op, char *err, size_t errlen)
{
	struct xhca_qp_ctx ctx;
	__u32 lidx;
	int rc = qp_find(d, op, qpn, session, &lidx, &ctx, err, errlen);

	if (!rc && ctx.type != c->qp_type)
		rc = errf(err, errlen, -EINVAL, "%s: QP 0x%06x is not of the cm id's type", op, qpn);
	return rc;
}

int cm_connect(struct xhcad *d, __u32 session, const struct xhca_cm_conn *k, char *err,
	       size_t errlen)
{
	struct cm_conn_id *c;
	int rc = own_id(d, session, k->id, "cm connect", err, errlen, &c);

	rc = rc ?: own_qp(d, session, c, k->qpn, "cm connect", err, errlen);
	if (rc)
		return rc;
	if (c->state != CM_IDLE)
		return errf(err, errlen, -EISCONN, "cm connect: cm id %u is in use", k->id);
	if (!net_is_local(d, k->src_ip))
		return errf(err, errlen, -EADDRNOTAVAIL, "cm connect: the source address is not "
			    "one of %s's", d->ifname);
	if (!k->dst_port || xhca_ip_is_v4(k->src_ip) != xhca_ip_is_v4(k->dst_ip))
		return errf(err, errlen, -EINVAL, "cm connect: give a destination port and "
			    "addresses of one family");
	c->local_cid = new_cid(d);
	c->local_qpn = k->qpn;
	memcpy(c->local_ip, k->src_ip, 16);
	memcpy(c->remote_ip, k->dst_ip, 16);
	c->local_port = k->src_port;
	c->remote_port = k->dst_port;
	c->sid = (__u64)c->ps << 16 | k->dst_port;
	if (c->qp_type == XHCA_QPT_UD) {
		cm_build_sidr_req(d, c, k);
		c->state = CM_SIDR_REQ_SENT;
	} else {
		cm_build_req(d, c, k);
		c->state = CM_REQ_SENT;
	}
	send_waiting(d, c, 2 * ns_of_cm_time(CM_PKT_LIFE) + ns_of_cm_time(CM_RESP_TIMEOUT_REMOTE));
	return 0;
}

int cm_accept(struct xhcad *d, __u32 session, const struct xhca_cm_conn *k, char *err,
	      size_t errlen)
{
	struct cm_conn_id *c, *l;
	__u64 wait;
	int rc = own_id(d, session, k->id, "cm accept", err, errlen, &c);

	rc = rc ?: own_qp(d, session, c, k->qpn, "cm accept", err, errlen);
	if (rc)
		return rc;
	if (c->state != CM_REQ_RCVD && c->state != CM_SIDR_REQ_RCVD)
		return errf(err, errlen, -EINVAL, "cm accept: cm id %u has no request to accept",
			    k->id);
	l = id_find(d, c->listen_id, 0);
	if (l && l->pending)
		l->pending--;
	c->local_qpn = k->qpn;
	if (c->state == CM_SIDR_REQ_RCVD) { /* kept: a repeated SIDR_REQ gets it again */
		cm_build_sidr_rep(d, c, c->mad, SIDR_OK, k->qpn, k->qkey, k->pdata, k->pdata_len);
		send_once(d, c, c->mad);
		c->state = CM_SIDR_REP_SENT;
		return 0;
	}
	cm_build_rep(d, c, k);
	c->state = CM_REP_SENT;
	/* the active side's REQ says how long it takes to answer: within
	 * that (a second at most) the REP goes again */
	wait = ns_of_cm_time(c->req_local_timeout);
	send_waiting(d, c, wait > 1000000000ull ? 1000000000ull : wait);
	return 0;
}

int cm_reject(struct xhcad *d, __u32 session, const struct xhca_cm_reject *r, char *err,
	      size_t errlen)
{
	struct cm_conn_id *c, *l;
	int rc = own_id(d, session, r->id, "cm reject", err, errlen, &c);

	if (rc)
		return rc;
	if (c->state != CM_REQ_RCVD && c->state != CM_REP_RCVD && c->state != CM_SIDR_REQ_RCVD)
		return errf(err, errlen, -EINVAL, "cm reject: cm id %u has nothing to reject",
			    r->id);
	l = c->state != CM_REP_RCVD ? id_find(d, c->listen_id, 0) : NULL;
	if (l && l->pending)
		l->pending--;
	if (c->state == CM_SIDR_REQ_RCVD) {
		cm_build_sidr_rep(d, c, c->mad, SIDR_REJECT, 0, 0, r->pdata, r->pdata_len);
		send_once(d, c, c->mad);
		d->cm->st.rejects_sent++;
		c->state = CM_SIDR_REP_SENT;
		return 0;
	}
	send_rej(d, c, REJ_CONSUMER, c->state == CM_REQ_RCVD ? 0 : 1, r->pdata, r->pdata_len);
	c->state = CM_IDLE;
	return 0;
}

int cm_establish(struct xhcad *d, __u32 session, __u32 id, char *err, size_t errlen)
{
	struct cm_conn_id *c;
	__u8 m[MAD_LEN];
	int rc = own_id(d, session, id, "cm establish", err, errlen, &c);

	if (rc)
		return rc;
	if (c->state != CM_REP_RCVD)
		return errf(err, errlen, -EINVAL, "cm establish: cm id %u has no reply to "
			    "answer", id);
	cm_build_ids(d, c, m, ATTR_RTU, c->tid);
	send_once(d, c, m);
	c->state = CM_ESTABLISHED;
	return 0;
}

int cm_disconnect(struct xhcad *d, __u32 session, __u32 id, char *err, size_t errlen)
{
	struct cm_conn_id *c;
	int rc = own_id(d, session, id, "cm disconnect", err, errlen, &c);

	if (rc)
		return rc;
	if (c->state == CM_TIMEWAIT || c->state == CM_DREQ_SENT)
		return 0; /* the peer's DREQ was answered already, or ours is out */
	if (c->state != CM_ESTABLISHED && c->state != CM_REP_SENT)
		return errf(err, errlen, -EINVAL, "cm disconnect: cm id %u is not connected", id);
	cm_build_dreq(d, c, c->mad);
	c->state = CM_DREQ_SENT;
	send_waiting(d, c, 2 * ns_of_cm_time(CM_PKT_LIFE) + ns_of_cm_time(CM_RESP_TIMEOUT_REMOTE));
	return 0;
}

int cm_notify(struct xhcad *d, __u32 session, const struct xhca_cm_notify *n, char *err,
	      size_t errlen)
{
	struct cm_conn_id *c;
	int rc = own_id(d, session, n->id, "cm notify", err, errlen, &c);

	if (rc)
		return rc;
	if (n->event > XHCA_CM_EV_TIMEWAIT_EXIT)
		return errf(err, errlen, -EINVAL, "cm notify: event %u is no rdma_cm event",
			    n->event);
	event(d, c, n->event, n->status, NULL);
	return 0;
}

/* An id goes: what its peer waits for is said first (REJ of a request not
 * answered, DREQ of a connection; no waiting for either). */
static void id_drop(struct xhcad *d, struct cm_conn_id *c)
{
	__u8 m[MAD_LEN];

	if (c->state == CM_REQ_RCVD || c->state == CM_REP_RCVD || c->state == CM_REQ_SENT) {
		struct cm_conn_id *l = c->state == CM_REQ_RCVD ? id_find(d, c->listen_id, 0) : NULL;

		if (l && l->pending)
			l->pending--;
		if (c->state == CM_REQ_SENT) /* as Linux: timeout, our GUID the ARI */
			send_rej(d, c, REJ_TIMEOUT, 2, NULL, 0);
		else
			send_rej(d, c, REJ_CONSUMER, c->state == CM_REQ_RCVD ? 0 : 2, NULL, 0);
	} else if (c->state == CM_SIDR_REQ_RCVD) {
		struct cm_conn_id *l = id_find(d, c->listen_id, 0);

		if (l && l->pending)
			l->pending--;
		cm_build_sidr_rep(d, c, m, SIDR_REJECT, 0, 0, NULL, 0);
		send_once(d, c, m);
		d->cm->st.rejects_sent++;
	} else if (c->state == CM_ESTABLISHED || c->state == CM_REP_SENT) {
		cm_build_dreq(d, c, m);
		send_once(d, c, m);
	}
	if (c->state == CM_LISTEN) /* its requests nobody accepted go with it */
		for (struct cm_conn_id *o = d->cm->ids; o; o = o->next)
			if (o->listen_id == c->id &&
			    (o->state == CM_REQ_RCVD || o->state == CM_SIDR_REQ_RCVD))
				o->listen_id = 0;
	id_free(d, c);
}

int cm_destroy(struct xhcad *d, __u32 session, __u32 id, char *err, size_t errlen)
{
	struct cm_conn_id *c;
	int rc = own_id(d, session, id, "cm destroy", err, errlen, &c);

	if (!rc)
		id_drop(d, c);
	return rc;
}

void cm_session_gone(struct xhcad *d, __u32 session)
{
	struct cm_chan **pp;

	if (!d->cm)
		return;
	for (struct cm_conn_id *c = d->cm->ids, *next; c; c = next) {
		next = c->next;
		if (c->session == session)
			id_drop(d, c);
	}
	for (pp = &d->cm->chans; *pp;) {
		struct cm_chan *ch = *pp;

		if (ch->session != session) {
			pp = &ch->next;
			continue;
		}
		*pp = ch->next;
		close(ch->fd);
		free(ch);
	}
}

/* ---- timers ------------------------------------------------------------------------ */

/* c's message got no answer after its last try. */
static void gave_up(struct xhcad *d, struct cm_conn_id *c)
{
	d->cm->st.timeouts++;
	c->mad_live = 0;
	switch (c->state) {
	case CM_REQ_SENT:
	case CM_REP_SENT:
	case CM_SIDR_REQ_SENT:
		c->state = CM_IDLE;
		event(d, c, XHCA_CM_EV_UNREACHABLE, -ETIMEDOUT, NULL);
		break;
	case CM_DREQ_SENT:
		to_timewait(d, c, -ETIMEDOUT);
		break;
	default:
		break;
	}
}

static void timer_one(struct xhcad *d, struct cm_conn_id *c, __u64 now)
{
	if (c->state == CM_TIMEWAIT) {
		c->state = CM_IDLE; /* its comm ID and QPN may be used again */
		return;
	}
	if (!c->mad_live)
		return;
	if (++c->tries > CM_RETRIES) {
		gave_up(d, c);
		return;
	}
	if (mad_send(d, c->remote_ip, c->local_ip, c->mad)) {
		c->tries--; /* the neighbour is being looked up: not a try */
		c->deadline = now + NEIGH_WAIT_NS;
		return;
	}
	d->cm->st.resent++;
	c->deadline = now + c->wait_ns;
}

void cm_timers(struct xhcad *d)
{
	__u64 now = now_ns();

	for (struct cm_conn_id *c = d->cm ? d->cm->ids : NULL; c; c = c->next)
		if ((c->mad_live || c->state == CM_TIMEWAIT) && c->deadline <= now)
			timer_one(d, c, now);
}

__u64 cm_deadline(const struct xhcad *d)
{
	__u64 t = 0;

	for (const struct cm_conn_id *c = d->cm ? d->cm->ids : NULL; c; c = c->next)
		if ((c->mad_live || c->state == CM_TIMEWAIT) && (!t || c->deadline < t))
			t = c->deadline;
	return t;
}

void cm_status(const struct xhcad *d, struct xhca_status *s)
{
	const struct cm_state_all *cm = d->cm;

	s->no_cm = d->no_cm;
	if (!cm)
		return;
	for (const struct cm_conn_id *c = cm->ids; c; c = c->next) {
		s->cm_ids++;
		s->cm_established += c->state == CM_ESTABLISHED;
		s->cm_listening += c->state == CM_LISTEN;
	}
	s->cm_sent = cm->st.sent;
	s->cm_received = cm->st.received;
	s->cm_resent = cm->st.resent;
	s->cm_timeouts = cm->st.timeouts;
	s->cm_rejects = cm->st.rejects_sent;
	s->cm_dropped = cm->st.bad + cm->st.ignored;
}

int cm_init(struct xhcad *d)
{
	const __u8 *mac = d->net.mac;

	d->cm = calloc(1, sizeof(*d->cm));
	if (!d->cm)
		return -ENOMEM;
	/* the CA GUID: the MAC as an EUI-64, as the verbs library's node GUID */
	d->cm->guid = (__u64)(mac[0] ^ 2) << 56 | (__u64)mac[1] << 48 | (__u64)mac[2] << 40 |
		      0xfffeull << 24 | (__u64)mac[3] << 16 | (__u64)mac[4] << 8 | mac[5];
	d->cm->next_tid = (__u64)now_ns() & 0xffffff;
	return 0;
}

void cm_fini(struct xhcad *d)
{
	if (!d->cm)
		return;
	while (d->cm->ids)
		id_drop(d, d->cm->ids);
	while (d->cm->chans) {
		struct cm_chan *ch = d->cm->chans;

		d->cm->chans = ch->next;
		close(ch->fd);
		free(ch);
	}
	free(d->cm);
	d->cm = NULL;
}
