/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where a frame of a flow queue goes: its metadata checked against what
 * xhca_rx can have said, its QP found; a response to the QP's requests to
 * the requester (request.c), a READ or ATOMIC to the responder (respond.c),
 * a SEND or a WRITE xhca_rx left to xhcad placed (receive.c), the RC
 * responder's checks before and its ACK or NAK after. The ICRC, which
 * xhca_rx does not check, is checked here first. On a proxy CQ, the end of
 * each message is told to the proxy (pxq.c), in its CSN's turn.
 */
#include <string.h>
#include <xhca/pkt.h>
#include <xhca/wire.h>
#include "xhcad_transport.h"

/* Whether the metadata can be what xhca_rx says of this frame (pkt_parse
 * found the headers where it says). */
static int meta_ok(const struct pkt_info *pi, __u32 f)
{
	const struct xhca_rx_meta *m = pi->m;
	const struct xhca_opinfo *oi = pi->oi;

	if (m->flowq != f || !(oi->flags & XHCA_O_KNOWN) || !pi->bth)
		return 0;
	switch (m->reason) {
	case XHCA_R_PLACED_TO_FLOWQ:
		return (m->flags & XHCA_MF_PLACED) && (oi->flags & XHCA_H_IMM);
	case XHCA_R_PLACED_ACK:
		/* a WRITE's packet, or an RC SEND ONLY (--recv-fast) */
		return (m->flags & XHCA_MF_PLACED) &&
		       ((pi->op >= XHCA_OP_WRITE_FIRST && pi->op <= XHCA_OP_WRITE_ONLY) ||
			((pi->op == XHCA_OP_SEND_ONLY || pi->op == XHCA_OP_SEND_ONLY_IMM) &&
			 (m->opcode >> 5) == XHCA_QPT_RC));
	case XHCA_R_DUP_TO_FLOWQ:
	case XHCA_R_SEQ_NAK_TO_FLOWQ:
		return (oi->flags & XHCA_O_REQ) && (m->opcode >> 5) == XHCA_QPT_RC;
	case XHCA_R_TO_FLOWQ:
		/* READ, ATOMIC (WRITE): respond() reads the headers */
		if (m->flags & XHCA_MF_MSN)
			return xhca_op_responded(pi->op);
		/* fall through */
	case XHCA_R_TO_XLATE:
		/* its payload inside the frame, after the headers (pkt_parse) */
		return !(m->flags & XHCA_MF_PLACED);
	default:
		return 0;
	}
}

static int place_qp(struct xhcad *d, __u32 f, struct qp_host *qh, const struct pkt_info *pi);

/* Places one frame; returns its host reason. */
static int place(struct xhcad *d, __u32 f, const struct pkt_info *pi)
{
	const struct xhca_rx_meta *m = pi->m;
	const struct xhca_opinfo *oi = pi->oi;
	struct qp_host *qh;

	if (!meta_ok(pi, f))
		return XHCA_H_BAD_META;
	qh = qp_host_of(d, m);
	if (!qh)
		return XHCA_H_STALE;
	qh->cnt.frames++;
	/* QP1 is xhcad's own: the connection manager's MADs, ICRC checked */
	if (qh->gqpn == XHCA_QPN_GSI && !qh->owner && d->cm) {
		if (xhca_icrc_check_frame(pi->fr, pi->len)) {
			eng()->resp.bad_icrc++;
			return XHCA_H_BAD_ICRC;
		}
		return cm_recv(d, pi);
	}
	if (!(oi->flags & XHCA_O_REQ)) {
		/* a response to this QP's requests: the requester's */
		if (xhca_icrc_check_frame(pi->fr, pi->len)) {
			eng()->resp.bad_icrc++;
			return XHCA_H_BAD_ICRC;
		}
		sq_catch_up(d, qh); /* (its answer may come before xhcad saw a direct send) */
		return sq_response(d, qh, pi);
	}
	/* the ICRC, which xhca_rx does not check */
	if (!(m->flags & XHCA_MF_MCAST) && xhca_icrc_check_frame(pi->fr, pi->len)) {
		if (qh->type != XHCA_QPT_RC && (qh->rcv.in_msg || !(oi->flags & XHCA_O_END)))
			recv_msg_fail(qh, !!(oi->flags & XHCA_O_END), XHCA_H_BAD_ICRC);
		return resp_bad_icrc(d, qh, m);
	}
	if (qh->type == XHCA_QPT_RC) {
		int r = resp_before(d, qh, pi);

		if (r >= 0)
			return r;
		return resp_after(d, qh, pi, place_qp(d, f, qh, pi));
	}
	return place_qp(d, f, qh, pi);
}

/* place() for the frame's QP, qh. */
static int place_qp(struct xhcad *d, __u32 f, struct qp_host *qh, const struct pkt_info *pi)
{
	const struct xhca_rx_meta *m = pi->m;
	const struct xhca_opinfo *oi = pi->oi;
	__u8 op = pi->op;

	/* RC and UC: a PSN that does not follow means a frame of this message
	 * was lost between xhca_rx and here (an RX ring full): the message
	 * cannot complete. WRITEs xhca_rx placed itself leave gaps here
	 * between messages, never inside one. */
	if (qh->type != XHCA_QPT_UD) {
		int start = !!(oi->flags & XHCA_O_START), end = !!(oi->flags & XHCA_O_END);

		/* RC: inside a message, any frame, a later message's too,
		 * must be the next */
		if (qh->rcv.psn_valid && m->psn != qh->rcv.next_psn && qh->rcv.in_msg &&
		    (!start || (qh->type == XHCA_QPT_RC && !qh->px.on))) {
			qh->cnt.errors++;
			/* RC: what came before is placed (and may be
			 * acknowledged); the message goes on from the
			 * missing packet (rewind_msg) */
			if (qh->type == XHCA_QPT_RC && !qh->px.on)
				return XHCA_H_SEQ_ERR;
			qh->rcv.next_psn = (m->psn + 1) & XHCA_PSN_MASK;
			return recv_msg_fail(qh, end, XHCA_H_SEQ_ERR);
		}
		qh->rcv.psn_valid = 1;
		qh->rcv.next_psn = (m->psn + 1) & XHCA_PSN_MASK;
		if (end)
			qh->rcv.end_psn = qh->rcv.next_psn;
	}
	if (m->reason == XHCA_R_PLACED_ACK)
		return XHCA_H_ACKED; /* xhca_rx placed it: resp_after() acknowledges */
	if (m->reason == XHCA_R_PLACED_TO_FLOWQ) {
		__u32 imm;

		if (qh->rcv.in_msg)
			qh->cnt.errors++;
		qh->rcv.in_msg = MSG_NONE;
		memcpy(&imm, pi->bth + oi->hdr_len - 4, 4);
		return recv_write_imm(d, qh, m, imm, m->msg_len, XHCA_H_IMM_DONE);
	}
	if (m->reason == XHCA_R_TO_XLATE) {
		if (op < XHCA_OP_WRITE_FIRST || op > XHCA_OP_WRITE_ONLY_IMM)
			return XHCA_H_BAD_META;
		return recv_write(d, f, qh, pi);
	}
	if (xhca_op_responded(op))
		return respond(d, qh, pi);
	if (!recv_is_send(op) || !(oi->flags & XHCA_O_REQ))
		return XHCA_H_UNSUPPORTED;
	return recv_send(d, f, qh, pi);
}

/* place(), and on a proxy CQ the message's end told to the proxy: its
 * completion went there, or it has none (no receive buffer, a READ or
 * ATOMIC answered, a broken message): a no-op in the sequence. The frame is
 * parsed here, once; every stage after reads its pkt_info. */
int deliver_frame(struct xhcad *d, __u32 f, const struct xhca_rx_meta *m, const __u8 *fr,
		  __u32 len)
{
	struct qp_host *qh = (m->flags & XHCA_MF_CSN) ? qp_host_of(d, m) : NULL;
	struct xhca_rfast *rf;
	struct pkt_info pi;
	int r;

	pkt_parse(&pi, m, fr, len);
	/* A duplicate or a gap's NAK completes nothing; a WRITE xhca_rx
	 * placed and sends on for its ACK has its record from xhca_rx. */
	if (qh && (!qh->px.on || m->reason == XHCA_R_DUP_TO_FLOWQ ||
		   m->reason == XHCA_R_SEQ_NAK_TO_FLOWQ || m->reason == XHCA_R_PLACED_ACK))
		qh = NULL;
	if (qh && (!qh->px.open || m->csn != qh->px.csn)) {
		if (qh->px.open && !qh->px.recorded) /* a message that never ended */
			proxy_record(d, qh, qh->px.csn, NULL);
		qh->px.csn = m->csn;
		qh->px.open = 1;
		qh->px.recorded = 0;
	}
	rf = recv_fast_hold(d, m, &pi);
	r = place(d, f, &pi);
	recv_fast_release(rf);
	if (qh && qh->valid && qh->px.open && (pi.oi->flags & XHCA_O_END) &&
	    r != XHCA_H_BAD_META) {
		if (!qh->px.recorded)
			proxy_record(d, qh, qh->px.csn, NULL);
		qh->px.open = 0;
	}
	return r;
}
