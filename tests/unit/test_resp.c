/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The RC responder (user/xhcad/respond.c) without a network: xhcad's layers
 * below it, as they are, and in place of the AF_XDP layer (xsk.c, xsk_io.c) three
 * functions that keep the frames the responder sends (layers.c). A QP's context lives
 * in plain memory, as xhcad's mapping of xhca_qp_ctx; each case hands
 * resp_before/resp_after a request frame with the metadata xhca_rx would
 * have written, and reads the acknowledgement that came out of it: its
 * opcode, PSN, AETH syndrome and MSN, the counters, and the QP's receive
 * state (a rewind, the error state).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xhca/pkt.h>
#include <xhca/qpctx.h>
#include <xhca/wire.h>
#include "layers.h"
#include "tests.h"

#define LIDX 1
#define GQPN 0x000123u
#define PEER_QPN 0x000456u
#define GEN 7u

/* ---- one responder ------------------------------------------------------------ */

static struct xhcad D;

#define res(ok, ...) unit_check((ok), __VA_ARGS__)

/* An RC QP in RTS at l, its next PSN epsn, msn messages received. */
static void qp_reset_at(__u32 l, __u32 epsn, __u32 msn)
{
	struct xhca_qp_ctx *c = &D.ctxm[l];
	struct qp_host *qh = &D.qh[l];

	memset(c, 0, sizeof(*c));
	c->valid = 1;
	c->gen = GEN;
	c->gqpn = GQPN;
	c->type = XHCA_QPT_RC;
	c->state = XHCA_QPS_RTS;
	c->action = XHCA_ACT_HOST;
	c->dest_qpn = PEER_QPN;
	c->pkey = 0xffff;
	c->mtu_shift = 10;
	c->rnr_timer = 14;
	c->rx_psn = epsn;
	c->msn = msn;
	memset(qh, 0, sizeof(*qh));
	qh->valid = 1;
	qh->gen = GEN;
	qh->gqpn = GQPN;
	qh->type = XHCA_QPT_RC;
}

/* ... at LIDX, the counters and the frames sent cleared. */
static void qp_reset(__u32 epsn, __u32 msn)
{
	qp_reset_at(LIDX, epsn, msn);
	memset(&D.eng[0].resp, 0, sizeof(D.eng[0].resp));
	D.eng[0].naks = 0;
	fx_n = 0;
}

/* A request frame (op, psn, ackreq) from the peer, with xhca_rx's metadata
 * (reason, msg_len as the reason wants it) and its parse. */
struct req {
	__u8 fr[XHCA_PKT_MAX];
	struct xhca_rx_meta m;
	struct pkt_info pi;
};

static void req_make(struct req *q, __u8 op, __u32 psn, int ackreq, __u8 reason, __u32 msg_len)
{
	static const __u8 payload[64];
	struct xhca_pkt_spec s;
	int len;

	xhca_pkt_spec_init(&s, XHCA_OPC_RC | op);
	xhca_ip_parse("10.9.0.2", s.src_ip);
	xhca_ip_parse("10.9.0.1", s.dst_ip);
	memcpy(s.smac, "\x02\x00\x00\x00\x00\x02", 6);
	memcpy(s.dmac, "\x02\x00\x00\x00\x00\x01", 6);
	s.dqpn = GQPN;
	s.psn = psn;
	s.ackreq = (__u8)ackreq;
	s.payload = payload;
	s.payload_len = sizeof(payload);
	len = xhca_pkt_build(&s, q->fr, sizeof(q->fr));
	memset(&q->m, 0, sizeof(q->m));
	q->m.lidx = LIDX;
	q->m.gen = GEN;
	q->m.gqpn = GQPN;
	q->m.opcode = XHCA_OPC_RC | op;
	q->m.psn = psn;
	q->m.reason = reason;
	q->m.flags = XHCA_MF_CSN | (ackreq ? XHCA_MF_ACKREQ : 0);
	q->m.csn = (__u16)D.ctxm[LIDX].msn;
	q->m.rx_ns = now_ns();
	if (msg_len) /* dup_to_flowq, seq_nak_to_flowq: in the union */
		q->m.msg_len = msg_len;
	else
		fx_meta_payload(&q->m, q->fr, (__u32)len, sizeof(payload));
	pkt_parse(&q->pi, &q->m, q->fr, len > 0 ? (__u32)len : 0);
}

/* The acknowledgement frame i sent: 0, or -1 when it is not one. */
static int ack_of(int i, __u32 *psn, __u8 *syn, __u32 *msn, __u32 *dqpn)
{
	__u32 off;
	const __u8 *bth;

	if (i >= fx_n || recv_bth_offset(fx_frame[i], fx_len[i], &off) ||
	    off + 16 > fx_len[i])
		return -1;
	bth = fx_frame[i] + off;
	if (bth[0] != (XHCA_OPC_RC | XHCA_OP_ACK))
		return -1;
	*dqpn = (__u32)bth[5] << 16 | (__u32)bth[6] << 8 | bth[7];
	*psn = (__u32)bth[9] << 16 | (__u32)bth[10] << 8 | bth[11];
	*syn = bth[12];
	*msn = (__u32)bth[13] << 16 | (__u32)bth[14] << 8 | bth[15];
	return xhca_icrc_check_frame(fx_frame[i], fx_len[i]) ? -1 : 0;
}

/* Exactly one acknowledgement went, with these fields. */
static int one_ack(const char *what, __u32 psn, __u8 syn, __u32 msn)
{
	__u32 p, m, q;
	__u8 s;

	if (fx_n != 1 || ack_of(0, &p, &s, &m, &q)) {
		res(0, "%s: one ACKNOWLEDGE with a good ICRC (%d frames sent)", what, fx_n);
		return -1;
	}
	res(p == psn && s == syn && m == msn && q == PEER_QPN,
	    "%s: ACKNOWLEDGE to QP 0x%06x, PSN 0x%06x, AETH 0x%02x MSN %u (want 0x%06x 0x%02x %u)",
	    what, q, p, s, m, psn, syn, msn);
	return 0;
}

static void case_acks(void)
{
	struct req q;
	int r;

	qp_reset(0x100, 5);
	req_make(&q, XHCA_OP_SEND_ONLY, 0x100, 1, XHCA_R_TO_FLOWQ, 0);
	r = resp_before(&D, &D.qh[LIDX], &q.pi);
	res(r == -1, "a SEND at the ePSN is for placement (%d)", r);
	r = resp_after(&D, &D.qh[LIDX], &q.pi, XHCA_H_PLACED);
	/* no receive queue here: the credit field says none (31) */
	one_ack("SEND ONLY placed, AckReq", 0x100, 0x1f, 6);
	res(r == XHCA_H_PLACED && D.eng[0].resp.acks == 1, "... counted as one ACK (%llu)",
	    (unsigned long long)D.eng[0].resp.acks);
	fx_n = 0;
	req_make(&q, XHCA_OP_SEND_ONLY, 0x101, 0, XHCA_R_TO_FLOWQ, 0);
	resp_after(&D, &D.qh[LIDX], &q.pi, XHCA_H_PLACED);
	res(fx_n == 0, "SEND ONLY placed without AckReq: no ACK of its own (%d sent)", fx_n);
}

/* The credit count of an ACK (IBA 9.7.7.2.5): the largest code not above
 * the buffers posted to the QP's own receive queue; none for an SRQ's. */
static void case_credit_count(void)
{
	static struct xhca_ring_ctl rq;
	static const struct {
		__u32 posted;
		__u8 code;
	} want[] = { { 0, 0 }, { 1, 1 }, { 7, 5 }, { 512, 18 }, { 40000, 30 } };
	struct srq srq = { 0 };
	struct req q;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char what[64];

		qp_reset(0x100, 5);
		D.qh[LIDX].rcv.rq = &rq;
		rq.cons = D.qh[LIDX].rcv.rq_cons = 100; /* (xhcad's index, and the ring's copy) */
		rq.prod = 100 + want[i].posted;
		req_make(&q, XHCA_OP_SEND_ONLY, 0x100, 1, XHCA_R_TO_FLOWQ, 0);
		resp_after(&D, &D.qh[LIDX], &q.pi, XHCA_H_PLACED);
		snprintf(what, sizeof(what), "%u buffers posted", want[i].posted);
		one_ack(what, 0x100, want[i].code, 6);
	}
	qp_reset(0x100, 5);
	D.qh[LIDX].rcv.rq = &rq;
	D.qh[LIDX].rcv.srq = &srq;
	req_make(&q, XHCA_OP_SEND_ONLY, 0x100, 1, XHCA_R_TO_FLOWQ, 0);
	resp_after(&D, &D.qh[LIDX], &q.pi, XHCA_H_PLACED);
	one_ack("a QP on an SRQ with 512 posted: no count (31)", 0x100, 0x1f, 6);
	qp_reset(0x100, 5);
}

static void case_duplicate_and_gap(void)
{
	struct req q;
	int r;

	/* xhca_rx's ePSN is 0x200: a duplicate of 0x1f0 is acknowledged again
	 * up to 0x1ff, with the MSN as it is */
	qp_reset(0x200, 9);
	req_make(&q, XHCA_OP_SEND_ONLY, 0x1f0, 0, XHCA_R_DUP_TO_FLOWQ, 0x200);
	r = resp_before(&D, &D.qh[LIDX], &q.pi);
	res(r == XHCA_H_DUP, "a duplicate SEND is answered, not placed (%d)", r);
	one_ack("duplicate", 0x1ff, 0x1f, 9);
	res(D.eng[0].resp.dups == 1, "... counted as a duplicate");
	/* a gap: one sequence NAK at the ePSN */
	qp_reset(0x300, 2);
	req_make(&q, XHCA_OP_SEND_ONLY, 0x305, 0, XHCA_R_SEQ_NAK_TO_FLOWQ, 0x300);
	r = resp_before(&D, &D.qh[LIDX], &q.pi);
	res(r == XHCA_H_SEQ_NAK, "a PSN gap gets a NAK, nothing placed (%d)", r);
	one_ack("gap", 0x300, XHCA_AETH_NAK_SEQ, 2);
	res(D.eng[0].resp.seq_naks == 1 && D.eng[0].naks == 1, "... counted as a sequence NAK");
}

/* A SEND's FIRST lost between xhca_rx and xhcad after an earlier message
 * ended: its MIDDLE shows the gap, and xhca_rx expects that FIRST again,
 * not the earlier message (done, maybe acknowledged: a requester whose
 * window moved past it would never send it again, and its retries would
 * run out). */
static void case_gap_after_message(void)
{
	struct xhca_qp_ctx *c = &D.ctxm[LIDX];
	struct qp_host *qh = &D.qh[LIDX];
	struct req q;
	int r;

	/* the message at 0x500 ended at 0x503; xhca_rx took 0x504-0x507 */
	qp_reset(0x508, 5);
	qh->resp.msg_psn = 0x500;
	qh->rcv.psn_valid = 1;
	qh->rcv.next_psn = qh->rcv.end_psn = 0x504;
	qh->rcv.in_msg = MSG_NONE;
	req_make(&q, XHCA_OP_SEND_MIDDLE, 0x505, 0, XHCA_R_TO_FLOWQ, 0);
	r = resp_after(&D, qh, &q.pi, XHCA_H_SEQ_ERR);
	res((c->rx_psn & XHCA_RXPSN_MASK) == 0x504 && c->msn == 5 && D.eng[0].resp.rewinds == 1,
	    "a message's FIRST lost after another ended: xhca_rx expects it again, MSN as before "
	    "it (rx_psn 0x%08x, MSN %u, r %d)", c->rx_psn, c->msn, r);
	res(qh->rcv.end_psn == 0x504 && !qh->rcv.psn_valid,
	    "... the next message starts there (0x%06x)", qh->rcv.end_psn);
}

static void case_rnr(void)
{
	struct xhca_qp_ctx *c = &D.ctxm[LIDX];
	struct req q;
	int r;

	/* xhca_rx took 0x400 (ePSN now 0x401); no receive buffer here */
	qp_reset(0x401, 3);
	req_make(&q, XHCA_OP_SEND_ONLY, 0x400, 1, XHCA_R_TO_FLOWQ, 0);
	r = resp_before(&D, &D.qh[LIDX], &q.pi);
	r = r == -1 ? resp_after(&D, &D.qh[LIDX], &q.pi, XHCA_H_RNR) : r;
	one_ack("no receive buffer", 0x400, XHCA_AETH_RNR | 14, 3);
	res(r == XHCA_H_RNR && D.eng[0].resp.rnr_naks == 1, "... counted as an RNR NAK");
	res((c->rx_psn & XHCA_RXPSN_MASK) == 0x400 && (c->rx_psn & XHCA_RXPSN_NAKED),
	    "xhca_rx rewound to the NAKed PSN, quiet until it comes again (rx_psn 0x%08x)",
	    c->rx_psn);
	/* what xhca_rx tells the frames committed before the rewind by */
	res(c->rw_gen == 1, "... the rewind counted in the context (rw_gen %u)", c->rw_gen);
	/* one committed before it and redirected after it (rx_time: 1) */
	req_make(&q, XHCA_OP_SEND_ONLY, 0x401, 1, XHCA_R_TO_FLOWQ, 0);
	q.m.rx_ns = 1;
	r = resp_before(&D, &D.qh[LIDX], &q.pi);
	res(r == XHCA_H_REWOUND && D.qh[LIDX].resp.rewound,
	    "... a frame stamped 1 is stale: dropped, the rewind goes on (%d)", r);
}

static void case_class_c(void)
{
	struct xhca_qp_ctx *c = &D.ctxm[LIDX];
	struct req q;
	int r;

	/* a message that cannot be placed (longer than its buffer): NAK
	 * invalid request, the QP to the error state */
	qp_reset(0x501, 4);
	req_make(&q, XHCA_OP_SEND_ONLY, 0x500, 0, XHCA_R_TO_FLOWQ, 0);
	r = resp_after(&D, &D.qh[LIDX], &q.pi, XHCA_H_LEN_ERR);
	one_ack("a SEND longer than its buffer", 0x500, XHCA_AETH_NAK_INVALID, 4);
	res(r == XHCA_H_LEN_ERR && c->state == XHCA_QPS_ERR && (c->rx_psn & XHCA_RXPSN_ERR),
	    "... and the QP is in the error state (state %u, rx_psn 0x%08x)", c->state,
	    c->rx_psn);
	fx_n = 0;
	req_make(&q, XHCA_OP_SEND_ONLY, 0x501, 1, XHCA_R_TO_FLOWQ, 0);
	r = resp_before(&D, &D.qh[LIDX], &q.pi);
	res(r == XHCA_H_QP_ERR && fx_n == 0,
	    "after it, a later request is neither placed nor answered (%d, %d sent)", r, fx_n);
}

/* A SEND with AckReq at psn to the QP at l, placed, and the round's end. */
static void send_acked(__u32 l, __u32 psn)
{
	struct req q;

	req_make(&q, XHCA_OP_SEND_ONLY, psn, 1, XHCA_R_TO_FLOWQ, 0);
	q.m.lidx = l;
	D.ctxm[l].rx_psn = psn + 1;
	resp_after(&D, &D.qh[l], &q.pi, XHCA_H_PLACED);
	resp_flush_acks(&D);
}

/* The QP at l receives into rq, a ring of 16. */
static void with_rq(__u32 l, struct xhca_ring_ctl *rq)
{
	D.qh[l].rcv.rq = rq;
	D.qh[l].rcv.rq_depth = 16;
}

/* A case of the responder's ACK lists: their memory, the QP at LIDX reset
 * (epsn, msn) and receiving into rq (none if NULL). Non-zero: not begun. */
static int acks_begin(__u32 epsn, __u32 msn, struct xhca_ring_ctl *rq)
{
	if (resp_init(&D)) {
		res(0, "resp_init");
		return -1;
	}
	qp_reset(epsn, msn);
	if (rq)
		with_rq(LIDX, rq);
	return 0;
}

/* ... and its end: the QP as the other cases expect it, the lists freed. */
static void acks_end(void)
{
	qp_reset(0x100, 5);
	resp_fini(&D);
}

/* ACKs that AckReq asks for within one round are owed until its end, one
 * per QP, the last covering the others; an ACK owed leaves before anything
 * else for the QP (here a NAK), so the requester sees PSN order. */
static void case_ack_coalescing(void)
{
	struct req q;
	__u32 p = 0, m = 0, dq = 0;
	__u8 syn = 0;

	if (acks_begin(0x600, 1, NULL))
		return;
	for (__u32 i = 0; i < 3; i++) {
		req_make(&q, XHCA_OP_SEND_ONLY, 0x600 + i, 1, XHCA_R_TO_FLOWQ, 0);
		D.ctxm[LIDX].rx_psn = 0x601 + i;
		D.ctxm[LIDX].msn = 2 + i;
		resp_after(&D, &D.qh[LIDX], &q.pi, XHCA_H_PLACED);
	}
	res(fx_n == 0, "three SENDs with AckReq in one round: no ACK before its end (%d sent)", fx_n);
	resp_flush_acks(&D);
	one_ack("the round's end: one ACK for the three", 0x602, 0x1f, 4);
	res(D.eng[0].resp.acks == 1, "... counted once (%llu)", (unsigned long long)D.eng[0].resp.acks);
	fx_n = 0;
	resp_flush_acks(&D);
	res(fx_n == 0, "the next round owes nothing (%d sent)", fx_n);
	/* an ACK owed, then a message that fails: the ACK first, then the NAK */
	req_make(&q, XHCA_OP_SEND_ONLY, 0x603, 1, XHCA_R_TO_FLOWQ, 0);
	D.ctxm[LIDX].rx_psn = 0x604;
	D.ctxm[LIDX].msn = 5;
	resp_after(&D, &D.qh[LIDX], &q.pi, XHCA_H_PLACED);
	req_make(&q, XHCA_OP_SEND_ONLY, 0x604, 0, XHCA_R_TO_FLOWQ, 0);
	resp_after(&D, &D.qh[LIDX], &q.pi, XHCA_H_LEN_ERR);
	{
		int first = fx_n == 2 && !ack_of(0, &p, &syn, &m, &dq) && p == 0x603 && syn == 0x1f;
		int second = first && !ack_of(1, &p, &syn, &m, &dq) && p == 0x604 &&
			     syn == XHCA_AETH_NAK_INVALID;

		res(second, "an owed ACK leaves before the QP's NAK (%d frames; the last PSN "
		    "0x%06x AETH 0x%02x)", fx_n, p, syn);
	}
	resp_flush_acks(&D);
	res(fx_n == 2, "... and not again at the round's end (%d)", fx_n);
	resp_fini(&D);
}


/* A round's ACK on a QP with a 16-entry receive queue and 2 buffers posted:
 * 4 more posted before the round's end count (6). Then, as the application
 * posts more: nothing for 2 (under a quarter of the ring), the same ACK
 * again with 12 for 8 more (an unsolicited credit update), and then no
 * more (12 is over half the ring). */
static void case_credit_update(void)
{
	static struct xhca_ring_ctl rq;
	struct qp_host *qh = &D.qh[LIDX];
	struct req q;
	int due, n;

	if (acks_begin(0x700, 3, &rq))
		return;
	rq.cons = qh->rcv.rq_cons = 200;
	rq.prod = 202;
	req_make(&q, XHCA_OP_SEND_ONLY, 0x700, 1, XHCA_R_TO_FLOWQ, 0);
	D.ctxm[LIDX].rx_psn = 0x701;
	D.ctxm[LIDX].msn = 4;
	resp_after(&D, qh, &q.pi, XHCA_H_PLACED);
	rq.prod += 4;
	resp_flush_acks(&D);
	one_ack("the round's ACK, 6 buffers posted by its end", 0x700, 5, 4);
	fx_n = 0;
	rq.prod += 2;
	due = resp_credit_due(&D);
	n = resp_credits_run(&D);
	res(!due && !n && fx_n == 0, "2 more posted (8, a code of 6): no update (%d, %d, %d frames)",
	    due, n, fx_n);
	rq.prod += 6;
	fx_tx_full = 1;
	n = resp_credits_run(&D);
	fx_tx_full = 0;
	res(!n && fx_n == 0 && qh->resp.ack.aeth_syndrome == 5,
	    "6 more (14, a code of 12), the TX ring full: no update, the last ACK still the one "
	    "that went (%d, %d frames, code %u)", n, fx_n, qh->resp.ack.aeth_syndrome);
	due = resp_credit_due(&D);
	n = resp_credits_run(&D);
	res(due && n == 1, "... with room: the update is due and sent (%d, %d)", due, n);
	one_ack("the credit update: the last ACK's PSN and MSN, the new count", 0x700, 7, 4);
	res(D.eng[0].resp.credit_acks == 1, "... counted (%llu)", (unsigned long long)D.eng[0].resp.credit_acks);
	fx_n = 0;
	rq.prod += 16;
	due = resp_credit_due(&D);
	n = resp_credits_run(&D);
	res(!due && !n && fx_n == 0 && D.eng[0].ncredit_qps == 0,
	    "12 credits given, over half the ring: not watched any more (%d, %d, %d frames, %u "
	    "watched)", due, n, fx_n, D.eng[0].ncredit_qps);
	acks_end();
}

/* A watched QP destroyed, or in the error state, is forgotten without a
 * frame when buffers are posted. */
static void case_credit_unwatched(void)
{
	static struct xhca_ring_ctl rq;
	struct qp_host *qh = &D.qh[LIDX];
	int n;

	if (acks_begin(0x800, 3, &rq))
		return;
	rq.prod = rq.cons;
	send_acked(LIDX, 0x800);
	one_ack("an ACK with no buffer posted", 0x800, 0, 4);
	fx_n = 0;
	qh->valid = 0;
	rq.prod += 16;
	n = resp_credits_run(&D);
	res(!n && fx_n == 0 && D.eng[0].ncredit_qps == 0 && !resp_credit_due(&D),
	    "its QP destroyed, buffers posted: no update, the QP forgotten (%d, %d frames, %u "
	    "watched)", n, fx_n, D.eng[0].ncredit_qps);
	/* watched again, then in the error state */
	qp_reset(0x900, 3);
	with_rq(LIDX, &rq);
	rq.prod = rq.cons;
	send_acked(LIDX, 0x900);
	fx_n = 0;
	D.ctxm[LIDX].state = XHCA_QPS_ERR;
	rq.prod += 16;
	n = resp_credits_run(&D);
	res(!n && fx_n == 0 && D.eng[0].ncredit_qps == 0,
	    "a QP in the error state, buffers posted: no update (%d, %d frames, %u watched)", n,
	    fx_n, D.eng[0].ncredit_qps);
	acks_end();
}

/* The watch list with two QPs: the first destroyed, the second moves into
 * its place and still gets its updates; a duplicate's re-ACK is the last
 * ACK an update repeats; an ACK with over half the ring ends the watch. */
static void case_credit_watch_list(void)
{
	static struct xhca_ring_ctl rq1, rq2;
	const __u32 l2 = LIDX + 1;
	__u32 p = 0, m = 0, dq = 0;
	__u8 syn = 0;
	struct req q;
	int n, ok;

	if (acks_begin(0xa00, 1, &rq1))
		return;
	qp_reset_at(l2, 0xb00, 1);
	with_rq(l2, &rq2);
	send_acked(LIDX, 0xa00);
	send_acked(l2, 0xb00);
	res(fx_n == 2 && D.eng[0].ncredit_qps == 2, "two QPs' ACKs with no credit: both watched (%d frames, "
	    "%u watched)", fx_n, D.eng[0].ncredit_qps);
	fx_n = 0;
	D.qh[LIDX].valid = 0;
	rq2.prod += 8;
	n = resp_credits_run(&D);
	ok = n == 1 && fx_n == 1 && !ack_of(0, &p, &syn, &m, &dq);
	res(ok && p == 0xb00 && syn == 6 && D.eng[0].ncredit_qps == 1 && D.qh[l2].resp.credit_slot == 1,
	    "the first destroyed, 8 posted to the second: its update (PSN 0x%06x, code %u), and it "
	    "holds the first slot now (%u watched, slot %u)", p, syn, D.eng[0].ncredit_qps,
	    D.qh[l2].resp.credit_slot);
	/* a duplicate SEND re-ACKed at the ePSN - 1 with nothing left posted */
	fx_n = 0;
	rq2.cons = D.qh[l2].rcv.rq_cons = rq2.prod;
	D.ctxm[l2].rx_psn = 0xb05;
	req_make(&q, XHCA_OP_SEND_ONLY, 0xb00, 0, XHCA_R_DUP_TO_FLOWQ, 0xb05);
	q.m.lidx = l2;
	resp_before(&D, &D.qh[l2], &q.pi);
	rq2.prod += 8;
	n = resp_credits_run(&D);
	ok = n == 1 && fx_n == 2 && !ack_of(1, &p, &syn, &m, &dq);
	res(ok && p == 0xb04 && syn == 6,
	    "a duplicate's re-ACK with no credit, then 8 posted: the update repeats the re-ACK "
	    "(%d frames, PSN 0x%06x, code %u)", fx_n, p, syn);
	fx_n = 0;
	rq2.prod += 16;
	send_acked(l2, 0xb05);
	ok = fx_n == 1 && !ack_of(0, &p, &syn, &m, &dq);
	res(ok && syn == 9 && D.eng[0].ncredit_qps == 0,
	    "an ACK with 24 credits, over half the ring: the watch ends (code %u, %u watched)", syn,
	    D.eng[0].ncredit_qps);
	qp_reset_at(l2, 0, 0);
	D.qh[l2].valid = 0;
	D.ctxm[l2].valid = 0;
	acks_end();
}

/* --recv-fast: an RC QP that goes after xhca_rx placed SENDs of its gets
 * the ACK of all it accepted (ePSN - 1, the MSN), from its context; none
 * when xhca_rx placed nothing, none in the error state. */
static void case_final_ack(void)
{
	struct xhca_rfast rf = { .placed = 0 };
	struct xhca_qp_ctx *c = &D.ctxm[LIDX];

	qp_reset(0x300, 11);
	/* (a group address: its MAC needs no neighbour table here) */
	xhca_ip_parse("224.0.0.9", c->remote_ip);
	xhca_ip_parse("10.9.0.1", c->local_ip);
	D.qh[LIDX].rcv.rf = &rf;
	resp_final_ack(&D, &D.qh[LIDX], LIDX);
	res(fx_n == 0, "a QP going, xhca_rx placed none of its SENDs: no ACK (%d sent)", fx_n);
	rf.placed = 3;
	resp_final_ack(&D, &D.qh[LIDX], LIDX);
	one_ack("a QP going after xhca_rx placed its SENDs", 0x2ff, 0x1f, 11);
	fx_n = 0;
	c->rx_psn |= XHCA_RXPSN_ERR;
	resp_final_ack(&D, &D.qh[LIDX], LIDX);
	res(fx_n == 0, "... in the error state: none (%d sent)", fx_n);
	D.qh[LIDX].rcv.rf = NULL;
	qp_reset(0, 0);
}

/* One engine, a QP table of 4. */
static int setup(char *why)
{
	D.neng = 1;
	eng_self = &D.eng[0];
	D.max_qps = 4;
	D.ctxm = calloc(D.max_qps, sizeof(*D.ctxm));
	D.qh = calloc(D.max_qps, sizeof(*D.qh));
	if (!D.ctxm || !D.qh) {
		snprintf(why, UNIT_WHY_LEN, "memory for the QP table");
		return -1;
	}
	return 0;
}

static void teardown(void)
{
	free(D.ctxm);
	free(D.qh);
	D.ctxm = NULL;
	D.qh = NULL;
}

static const struct unit_case cases[] = {
	UNIT_RUN("acks", case_acks),
	UNIT_RUN("credit_count", case_credit_count),
	UNIT_RUN("duplicate_and_gap", case_duplicate_and_gap),
	UNIT_RUN("gap_after_message", case_gap_after_message),
	UNIT_RUN("rnr", case_rnr),
	UNIT_RUN("class_c", case_class_c),
	UNIT_RUN("ack_coalescing", case_ack_coalescing),
	UNIT_RUN("credit_update", case_credit_update),
	UNIT_RUN("credit_unwatched", case_credit_unwatched),
	UNIT_RUN("credit_watch_list", case_credit_watch_list),
	UNIT_RUN("final_ack", case_final_ack),
};

UNIT_FILE(resp, setup, teardown, cases);
