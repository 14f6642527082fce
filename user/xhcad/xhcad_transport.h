/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhcad's transport layer: the transports: a QP's receive side, the RC
 * responder, the completer, the requester, the connection manager, a frame
 * to its stage. A file of this layer includes this header; it declares the
 * layers below too, never those above (docs/design.md: xhcad in layers).
 */
#ifndef XHCAD_TRANSPORT_H
#define XHCAD_TRANSPORT_H

#include "xhcad_queues.h"

/* receive.c: a QP's receive side on the host, SEND and WRITE placement */
/* A frame of a flow queue as every stage after the dispatch reads it,
 * beside the metadata xhca_rx wrote: its headers found once (pkt_parse). */
struct pkt_info {
	const struct xhca_rx_meta *m;
	const __u8 *fr;
	__u32 len;
	const struct xhca_opinfo *oi;	/* its opcode's */
	__u8 op;			/* the opcode's low 5 bits */
	const __u8 *bth;		/* NULL: the metadata and the frame disagree */
};
/* Fills pi for the frame fr of len bytes and its metadata m. Where the
 * metadata carries the payload's place (xhca_rx parsed the headers), the
 * BTH is found from it; the other frames (placed WRITEs, duplicates, gaps,
 * READ and ATOMIC requests) are parsed here. */
void pkt_parse(struct pkt_info *pi, const struct xhca_rx_meta *m, const __u8 *fr, __u32 len);
/* rq: the QP's own receive ring (rq_depth entries), or srq's ring. */
void qp_host_attach(struct xhcad *d, __u32 lidx, __u32 gen, __u32 gqpn, __u8 type, __u8 flowq,
		    __u32 owner, struct cq *cq, struct hm_alloc *rq, __u32 rq_depth,
		    struct srq *srq);
/* Its send queue goes first (sq_detach). */
void qp_host_detach(struct xhcad *d, __u32 lidx);
/* The QP of a frame's metadata, if it is still the one xhca_rx saw. */
struct qp_host *qp_host_of(struct xhcad *d, const struct xhca_rx_meta *m);
/* The host side of a QP that went to the error state: the message in
 * progress is dropped, its posted receive buffers complete with
 * WR_FLUSH_ERR (as far as its CQ has room now; the rest later), its send
 * requests are flushed by the next sq_run. */
void qp_host_to_error(struct xhcad *d, struct qp_host *qh);
__u32 recv_cons(const struct qp_host *qh); /* xhcad's consumer index of its receive queue */
void recv_reset(struct qp_host *qh);
/* --recv-fast: xhca_rx places the QP's one-packet SENDs from now, where it
 * can (a QP of the host but QP1, in RTR or RTS by its context, with a
 * receive queue of its own and a CQ xhca_rx writes: cq_slot), and no more
 * (xhcad takes the receive queue's index back). struct xhca_rfast has the
 * rules. */
void recv_fast_on(struct xhcad *d, struct qp_host *qh, __u32 lidx);
void recv_fast_off(struct qp_host *qh);
/* A frame xhca_rx counted in its QP's pend: the QP's receive queue held
 * (its lock) while the frame is placed, NULL for any other frame; then
 * released, the pend taken back once the frame's completion is written
 * (recv_fast_done, at the round's end). */
struct xhca_rfast *recv_fast_hold(struct xhcad *d, const struct xhca_rx_meta *m,
				  const struct pkt_info *pi);
void recv_fast_release(struct xhca_rfast *rf);
void recv_fast_done(void);
/* --xdp-ack: a frame the round took that xhca_rx counted in its QP's owe
 * (an RC request of a QP whose ACKs it sends) noted; the notes taken back
 * from owe once the round sent its answers (after its last TX kick); every
 * QP's ACKs back to xhcad (the interface drops frames sent by XDP_TX). */
void recv_owe_note(struct xhcad *d, const struct xhca_rx_meta *m);
void recv_owe_done(struct xhcad *d);
void recv_xdp_ack_off(struct xhcad *d);
void qp_ring_fatal(struct xhcad *d, struct qp_host *qh, const char *which);
void qp_cq_overruns(struct xhcad *d);
/* Flushes what the CQs have room for now. */
void qp_flush_run(struct xhcad *d);
/* The placement of one frame (dispatch.c chose it; host reasons back): a
 * SEND into the next receive buffer, a WRITE xhca_rx left to xhcad, a
 * WRITE with immediate xhca_rx placed (its completion). */
int recv_send(struct xhcad *d, __u32 f, struct qp_host *qh, const struct pkt_info *pi);
int recv_write(struct xhcad *d, __u32 f, struct qp_host *qh, const struct pkt_info *pi);
int recv_write_imm(struct xhcad *d, struct qp_host *qh, const struct xhca_rx_meta *m, __u32 imm,
		   __u32 len, int reason);
/* A broken message: the rest of it is dropped by reason (end: it ended). */
int recv_msg_fail(struct qp_host *qh, int end, int reason);
int recv_is_send(__u8 op);
/* Where the BTH starts in the frame. */
int recv_bth_offset(const __u8 *fr, __u32 len, __u32 *off);

/* respond.c: the RC responder: READ and ATOMIC resolved, duplicates, gaps,
 * rewinds, ACKs and NAKs */
/* 0 with j filled (free it with resp_job_free), or the host reason: a
 * region gone since xhca_rx looked (NAK sent), bad metadata. */
int resp_resolve(struct xhcad *d, struct qp_host *qh, const struct pkt_info *pi,
		 struct resp_job *j);
int respond(struct xhcad *d, struct qp_host *qh, const struct pkt_info *pi);
/* An ATOMIC executed (by the proxy, too): its result kept for duplicates. */
void resp_atomic_done(struct xhcad *d, __u32 lidx, __u32 gen, __u32 psn, __u64 orig);
/* The RC responder around the placement of a frame: resp_before answers
 * duplicates and gaps and drops what a rewind made stale (a host reason),
 * or returns -1 to place the frame; resp_after sends its ACK, or the RNR
 * or error NAK of the placement's reason r (returned). resp_bad_icrc: the
 * frame's ICRC was wrong (an RC QP is rewound to receive it again). */
int resp_before(struct xhcad *d, struct qp_host *qh, const struct pkt_info *pi);
int resp_after(struct xhcad *d, struct qp_host *qh, const struct pkt_info *pi, int r);
int resp_bad_icrc(struct xhcad *d, struct qp_host *qh, const struct xhca_rx_meta *m);
/* A QP's sequence starts over (reset, a new ePSN): no rewind, error or
 * saved response of the old one applies. */
void resp_reset(struct qp_host *qh);
/* xhca_rx put the QP in the error state (its event): the context says so
 * too, the requester gets its NAK, the application its async event, and its
 * posted receive buffers complete with WR_FLUSH_ERR. */
void resp_qp_error_event(struct xhcad *d, const struct xhca_event *e);
/* The round's end: every QP's ACK it owes leaves, one per QP (ACKs that
 * AckReq asked for in the round coalesced into the last: nothing waits
 * longer than the round, whose frames leave at its end anyway). */
void resp_flush_acks(struct xhcad *d);
/* --recv-fast: an RC QP that goes after xhca_rx placed SENDs of its gets
 * the ACK of all it accepted, now (the ACK owed to one may wait in the
 * flow queue, its completion seen). */
void resp_final_ack(struct xhcad *d, struct qp_host *qh, __u32 lidx);
/* Credit updates (IBA 9.7.7.2.5): a QP whose last ACK let its requester
 * send few more messages, and whose application has posted receive
 * buffers since, gets that ACK again with the new count. resp_credit_due:
 * whether one is due (no system call: busy polling asks); resp_credits_run
 * sends them, returns how many. */
int resp_credit_due(struct xhcad *d);
int resp_credits_run(struct xhcad *d);
int resp_init(struct xhcad *d);
void resp_fini(struct xhcad *d);

/* completer.c: the completer (responses in, retries, completions; its
 * insides shared with request.c in sq_int.h) */
/* A response frame (ACK, NAK, READ response, ATOMIC ACK) of an RC QP's
 * requests: its host reason. */
int sq_response(struct xhcad *d, struct qp_host *qh, const struct pkt_info *pi);

/* request.c: the requester (send queues, requests taken, packets out) */
/* The send queue of a QP being created: its ring in alloc (sq_depth
 * slots), completions to cq. */
int sq_attach(struct xhcad *d, struct qp_host *qh, struct hm_alloc *alloc, __u32 depth,
	      struct cq *cq);
/* The QP to flow queue flowq, its send queue to that queue's engine (at
 * start, before any frame: qp_engines_fix). */
void sq_move(struct xhcad *d, struct qp_host *qh, __u32 flowq);
void sq_detach(struct xhcad *d, struct qp_host *qh);
/* A UD or UC QP being destroyed (engines stopped): the requests posted
 * before that no engine took yet are sent now, as an HCA sends them within
 * microseconds of the doorbell (RXE within the post itself). */
void sq_drain(struct xhcad *d, struct qp_host *qh);
/* At exit: every send queue's memory, its ring left as it is. */
void sq_fini(struct xhcad *d);
/* The QP was reset: the queue starts over, nothing completes (verbs). */
void sq_reset(struct xhcad *d, struct qp_host *qh);
/* The PSN of the next new request (XHCA_QPA_SQ_PSN, a restart). */
void sq_set_psn(struct xhcad *d, struct sq_state *s, __u32 psn);
/* Direct sends (request.c): the QP's path put in its send queue's ring for
 * the program, or taken away (after any modify); and requests the program
 * sent itself that xhcad has not taken yet taken now (before a response
 * of the QP: it may answer one of them). */
void sq_direct(struct xhcad *d, struct qp_host *qh);
void sq_catch_up(struct xhcad *d, struct qp_host *qh);
/* The next PSN and the requests started, into the QP context (restarts). */
void sq_note(struct xhcad *d, const struct sq_state *s, __u32 started);
/* A send queue again after a restart (state.c); attrs: timeout, retry_cnt,
 * rnr_retry, max_rd_atomic. 1 when requests were in flight: flushed. */
int sq_restore(struct xhcad *d, struct qp_host *qh, struct hm_alloc *alloc, __u32 depth,
	       struct cq *cq, const __u8 attrs[4]);
/* Sends what the send queues have, within budget packets; retransmits on
 * timers; writes completions. Returns the packets sent and completions
 * written; *more when it had
 * to stop with work left; *deadline the next timer (ns, 0: none). */
int sq_run(struct xhcad *d, int budget, int *more, __u64 *deadline);
/* Sleep: every send queue drained arms its doorbell; returns 1 if one got
 * entries meanwhile (do not sleep). */
int sq_arm(struct xhcad *d);
/* A send queue has requests not taken yet, or a timer is due (rings only). */
int sq_ready(const struct xhcad *d);
/* Signaled requests posted on send queues completing to cq, their
 * completions not written yet. */
__u32 sq_in_flight(const struct xhcad *d, const struct cq *cq);

/* cm_wire.c: the CM's MADs built field by field (its functions take the
 * connection manager's insides: cm_int.h, shared with cm.c only) */

/* cm.c: the connection manager (QP1's MADs, the rdma_cm library's requests;
 * include/priv/xhca/cm.h) */
struct cm_state_all;
struct xhca_cm_id;
struct xhca_cm_listen;
struct xhca_cm_conn;
struct xhca_cm_reject;
struct xhca_cm_notify;
struct xhca_cm_migrate;
int cm_init(struct xhcad *d);
void cm_fini(struct xhcad *d);
/* A frame of QP1 (its pkt_info): a CM message; its host reason. */
int cm_recv(struct xhcad *d, const struct pkt_info *pi);
int cm_channel(struct xhcad *d, __u32 session, __u32 *chan, int *fd);
int cm_channel_destroy(struct xhcad *d, __u32 session, __u32 chan, char *err, size_t errlen);
int cm_id_create(struct xhcad *d, __u32 session, struct xhca_cm_id *a, char *err, size_t errlen);
int cm_migrate(struct xhcad *d, __u32 session, const struct xhca_cm_migrate *a, char *err,
	       size_t errlen);
int cm_listen(struct xhcad *d, __u32 session, const struct xhca_cm_listen *a, char *err,
	      size_t errlen);
int cm_connect(struct xhcad *d, __u32 session, const struct xhca_cm_conn *k, char *err,
	       size_t errlen);
int cm_accept(struct xhcad *d, __u32 session, const struct xhca_cm_conn *k, char *err,
	      size_t errlen);
int cm_reject(struct xhcad *d, __u32 session, const struct xhca_cm_reject *r, char *err,
	      size_t errlen);
int cm_establish(struct xhcad *d, __u32 session, __u32 id, char *err, size_t errlen);
int cm_disconnect(struct xhcad *d, __u32 session, __u32 id, char *err, size_t errlen);
int cm_destroy(struct xhcad *d, __u32 session, __u32 id, char *err, size_t errlen);
int cm_notify(struct xhcad *d, __u32 session, const struct xhca_cm_notify *n, char *err,
	      size_t errlen);
/* A session ended: its ids go (their peers told), its channels close. */
void cm_session_gone(struct xhcad *d, __u32 session);
/* Messages sent again, gone time waits: due now; the next one's time (0: none). */
void cm_timers(struct xhcad *d);
__u64 cm_deadline(const struct xhcad *d);
void cm_status(const struct xhcad *d, struct xhca_status *s);

/* dispatch.c: where a frame of a flow queue goes */
/* Places one frame (the proxy's declined messages come back here);
 * returns its host reason. */
int deliver_frame(struct xhcad *d, __u32 f, const struct xhca_rx_meta *m, const __u8 *fr,
		  __u32 len);

#endif
