/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A QP's receive side (user/xhcad/receive.c) without a network: SENDs placed
 * into the receive buffers an application posted, in plain host memory, and
 * their completions in the CQ ring: one packet, a message of three, the
 * 40-byte GRH of UD, a message longer than its buffer, no buffer (RNR), and
 * the buffers still posted when the QP goes to the error state (flushed);
 * and through the dispatch (dispatch.c): metadata that disagrees with the
 * frame, a wrong ICRC.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <xhca/pkt.h>
#include <xhca/wire.h>
#include "layers.h"
#include "tests.h"

#define RQ_DEPTH 8
#define BUF 4096
#define LRC 1
#define LUD 2

static struct xhcad D;
static struct cq *cq;
static struct hm_alloc *bufs;
static __u32 posted[4]; /* by local index (D.max_qps): buffers posted so far */

#define res(ok, ...) unit_check((ok), __VA_ARGS__)

/* QP lidx of type, with a receive queue of RQ_DEPTH on the CQ. */
static int qp_make(__u32 lidx, __u8 type)
{
	struct hm_alloc *rq = hm_alloc(&D, xhca_ring_bytes(RQ_DEPTH, sizeof(struct xhca_rwqe)), 0,
				       XHCA_ALLOC_CONTIG);

	if (!rq)
		return -1;
	qp_host_attach(&D, lidx, 1, 0x100 + lidx, type, 0, 0, cq, rq, RQ_DEPTH, NULL);
	return D.qh[lidx].valid ? 0 : -1;
}

/* The application posts buffer k (BUF bytes, or len) of QP lidx. */
static void post_recv(__u32 lidx, __u64 wr_id, __u32 k, __u32 len)
{
	struct qp_host *qh = &D.qh[lidx];
	__u32 prod = qh->rcv.rq->prod;
	struct xhca_rwqe w = { .wr_id = wr_id, .off = (__u64)k * BUF, .len = len,
			       .alloc = bufs->id };

	qh->rcv.rqe[prod & (RQ_DEPTH - 1)] = w;
	__atomic_store_n(&qh->rcv.rq->prod, prod + 1, __ATOMIC_RELEASE);
	posted[lidx]++;
}

static __u8 *buf_at(__u32 k)
{
	return D.hm.base + hm_base(bufs, (__u64)k * BUF);
}

/* A SEND packet (op) of plen pattern bytes from offset start of message
 * seed, to QP lidx, with the metadata xhca_rx writes (its payload offset
 * moved by skew) and its parse. */
static __u8 fr[XHCA_PKT_MAX];
static struct xhca_rx_meta m;
static struct pkt_info pi;

static void frame(__u32 lidx, __u8 opc, __u32 psn, __u32 plen, __u32 start, __u32 seed, int skew)
{
	static __u8 data[XHCA_PKT_MAX];
	struct xhca_pkt_spec s;
	int len;

	m = (struct xhca_rx_meta){ .lidx = (__u16)lidx, .gen = 1, .gqpn = 0x100 + lidx,
				   .opcode = opc, .psn = psn, .reason = XHCA_R_TO_FLOWQ,
				   .flags = XHCA_MF_CSN };

	for (__u32 i = 0; i < plen; i++)
		data[i] = xhca_msg_pattern(seed, start + i);
	xhca_pkt_spec_init(&s, opc);
	xhca_ip_parse("10.9.0.2", s.src_ip);
	xhca_ip_parse("10.9.0.1", s.dst_ip);
	s.dqpn = 0x100 + lidx;
	s.psn = psn;
	s.deth_sqp = 0x77;
	s.payload = data;
	s.payload_len = plen;
	s.pad = -1;
	len = xhca_pkt_build(&s, fr, sizeof(fr));
	fx_meta_payload(&m, fr, len > 0 ? (__u32)len : 0, plen);
	m.payload_off = (__u16)(m.payload_off + skew);
	m.rx_ns = now_ns();
	pkt_parse(&pi, &m, fr, len > 0 ? (__u32)len : 0);
}

/* ... through the receive side: its host reason. */
static int deliver(__u32 lidx, __u8 opc, __u32 psn, __u32 plen, __u32 start, __u32 seed)
{
	frame(lidx, opc, psn, plen, start, seed, 0);
	return recv_send(&D, 0, &D.qh[lidx], &pi);
}

/* Whether buffer k holds message seed's first n bytes from offset off. */
static int holds(__u32 k, __u32 off, __u32 n, __u32 seed)
{
	for (__u32 i = 0; i < n; i++)
		if (buf_at(k)[off + i] != xhca_msg_pattern(seed, i))
			return 0;
	return 1;
}

static void case_rc(void)
{
	struct xhca_cqe c = { .wr_id = 0 };
	int r, ok;

	post_recv(LRC, 10, 0, BUF);
	r = deliver(LRC, XHCA_OPC_RC | XHCA_OP_SEND_ONLY, 1, 100, 0, 5);
	ok = !fx_take_cqe(cq, &c);
	res(r == XHCA_H_PLACED && ok && c.wr_id == 10 && c.status == XHCA_WC_SUCCESS &&
		    c.opcode == XHCA_WC_RECV && c.byte_len == 100 && holds(0, 0, 100, 5),
	    "a SEND ONLY lands in the posted buffer, one completion of its 100 bytes "
	    "(reason %d, wr %llu, %u bytes)", r, (unsigned long long)c.wr_id, c.byte_len);
	post_recv(LRC, 11, 1, BUF);
	r = deliver(LRC, XHCA_OPC_RC | XHCA_OP_SEND_FIRST, 2, 1024, 0, 6);
	r = r == XHCA_H_PLACED ? deliver(LRC, XHCA_OPC_RC | XHCA_OP_SEND_MIDDLE, 3, 1024, 1024, 6)
			       : r;
	ok = fx_take_cqe(cq, &c) != 0;
	r = r == XHCA_H_PLACED ? deliver(LRC, XHCA_OPC_RC | XHCA_OP_SEND_LAST, 4, 100, 2048, 6) : r;
	ok = ok && !fx_take_cqe(cq, &c);
	res(r == XHCA_H_PLACED && ok && c.wr_id == 11 && c.byte_len == 2148 && holds(1, 0, 2148, 6),
	    "FIRST, MIDDLE and LAST in one buffer, completed at the LAST only (%u bytes)",
	    c.byte_len);
	post_recv(LRC, 12, 2, 1500);
	r = deliver(LRC, XHCA_OPC_RC | XHCA_OP_SEND_FIRST, 5, 1024, 0, 7);
	r = r == XHCA_H_PLACED ? deliver(LRC, XHCA_OPC_RC | XHCA_OP_SEND_LAST, 6, 1024, 1024, 7) : r;
	ok = !fx_take_cqe(cq, &c);
	res(r == XHCA_H_LEN_ERR && ok && c.wr_id == 12 && c.status == XHCA_WC_LOC_LEN_ERR,
	    "a message longer than its buffer: LOC_LEN_ERR (reason %d, status %u)", r, c.status);
	r = deliver(LRC, XHCA_OPC_RC | XHCA_OP_SEND_ONLY, 7, 10, 0, 8);
	res(r == XHCA_H_RNR && fx_take_cqe(cq, &c) != 0, "no buffer posted: RNR, no completion (%d)", r);
}

static void case_ud(void)
{
	struct xhca_cqe c = { .wr_id = 0 };
	__u8 *b = buf_at(3);
	int r, ok;

	post_recv(LUD, 20, 3, BUF);
	r = deliver(LUD, XHCA_OPC_UD | XHCA_OP_SEND_ONLY, 9, 64, 0, 9);
	ok = !fx_take_cqe(cq, &c);
	res(r == XHCA_H_PLACED && ok && c.byte_len == 40 + 64 && (c.wc_flags & XHCA_WC_GRH) &&
		    c.src_qp == 0x77 && b[20 + 9] == 17 && !memcmp(b + 20 + 12, "\x0a\x09\x00\x02", 4) &&
		    holds(3, 40, 64, 9),
	    "UD: the buffer starts with the 40-byte GRH (the IPv4 header, the sender's "
	    "address), the payload after it, src_qp from the DETH (%u bytes, src_qp 0x%x)",
	    c.byte_len, c.src_qp);
}

/* Through the dispatch (dispatch.c, the RC responder around it): what
 * xhca_rx's metadata says must be what the parse finds. */
static void case_dispatch(void)
{
	struct xhca_cqe c = { .wr_id = 0 };
	int r, ok;

	post_recv(LRC, 40, 6, BUF);
	memset(buf_at(6), 0xee, 64);
	frame(LRC, XHCA_OPC_RC | XHCA_OP_SEND_ONLY, 20, 64, 0, 11, 40);
	r = deliver_frame(&D, 0, &m, fr, pi.len);
	res(r == XHCA_H_BAD_META && fx_take_cqe(cq, &c) != 0 && buf_at(6)[0] == 0xee,
	    "metadata whose payload runs past the frame: bad metadata, nothing placed, no "
	    "completion (%d)", r);
	frame(LRC, XHCA_OPC_RC | XHCA_OP_SEND_ONLY, 20, 64, 0, 11, 0);
	r = deliver_frame(&D, 0, &m, fr, pi.len);
	ok = !fx_take_cqe(cq, &c);
	res(r == XHCA_H_PLACED && ok && c.wr_id == 40 && holds(6, 0, 64, 11),
	    "the same frame with its metadata right: placed through the dispatch (%d)", r);
	res(D.qh[LRC].rcv.psn_valid && D.qh[LRC].rcv.next_psn == 21 && D.qh[LRC].rcv.end_psn == 21,
	    "... its message ended: the next starts at PSN 21 (next %u, end %u)",
	    D.qh[LRC].rcv.next_psn, D.qh[LRC].rcv.end_psn);
	frame(LRC, XHCA_OPC_RC | XHCA_OP_SEND_ONLY, 21, 64, 0, 12, 0);
	fr[pi.len - 1] ^= 1; /* the ICRC's last byte */
	r = deliver_frame(&D, 0, &m, fr, pi.len);
	res(r == XHCA_H_BAD_ICRC && fx_take_cqe(cq, &c) != 0, "a wrong ICRC: dropped before placement "
	    "(%d)", r);
}

static void case_flush(void)
{
	struct xhca_cqe c = { .wr_id = 0 };
	int n = 0, flushed = 0;

	post_recv(LRC, 30, 4, BUF);
	post_recv(LRC, 31, 5, BUF);
	qp_host_to_error(&D, &D.qh[LRC]);
	while (!fx_take_cqe(cq, &c)) {
		n++;
		flushed += c.status == XHCA_WC_WR_FLUSH_ERR && (c.wr_id == 30 || c.wr_id == 31);
	}
	res(n == 2 && flushed == 2, "the QP to the error state: its 2 posted buffers complete "
	    "WR_FLUSH_ERR (%d completions, %d flushed)", n, flushed);
}

/* Two QPs on one SRQ, a message of three packets each, their packets
 * interleaved: each message has a buffer of its own (the first QP's start
 * took the head entry off the ring), in the order they began. */
static void case_srq(void)
{
	struct hm_alloc *ring = hm_alloc(&D, xhca_ring_bytes(RQ_DEPTH, sizeof(struct xhca_rwqe)), 0,
					 XHCA_ALLOC_CONTIG);
	static struct srq srq;
	struct xhca_cqe c1 = { .wr_id = 0 }, c2 = { .wr_id = 0 };
	int r = -1;

	if (!ring) {
		res(0, "an SRQ ring in host memory");
		return;
	}
	srq = (struct srq){ .depth = RQ_DEPTH, .alloc = ring->id, .ring = hm_contig_ptr(&D, ring) };
	srq.e = (struct xhca_rwqe *)(srq.ring + 1);
	qp_host_detach(&D, LRC);
	qp_host_detach(&D, LUD);
	qp_host_attach(&D, LRC, 1, 0x100 + LRC, XHCA_QPT_RC, 0, 0, cq, NULL, 0, &srq);
	qp_host_attach(&D, LUD, 1, 0x100 + LUD, XHCA_QPT_RC, 0, 0, cq, NULL, 0, &srq);
	for (__u32 k = 6; k < 8; k++) {
		srq.e[srq.ring->prod & (RQ_DEPTH - 1)] = (struct xhca_rwqe){
			.wr_id = 40 + k, .off = (__u64)k * BUF, .len = BUF, .alloc = bufs->id };
		__atomic_store_n(&srq.ring->prod, srq.ring->prod + 1, __ATOMIC_RELEASE);
	}
	if (deliver(LRC, XHCA_OPC_RC | XHCA_OP_SEND_FIRST, 1, 1024, 0, 21) == XHCA_H_PLACED &&
	    deliver(LUD, XHCA_OPC_RC | XHCA_OP_SEND_FIRST, 1, 1024, 0, 22) == XHCA_H_PLACED &&
	    deliver(LRC, XHCA_OPC_RC | XHCA_OP_SEND_MIDDLE, 2, 1024, 1024, 21) == XHCA_H_PLACED &&
	    deliver(LUD, XHCA_OPC_RC | XHCA_OP_SEND_MIDDLE, 2, 1024, 1024, 22) == XHCA_H_PLACED &&
	    deliver(LRC, XHCA_OPC_RC | XHCA_OP_SEND_LAST, 3, 100, 2048, 21) == XHCA_H_PLACED)
		r = deliver(LUD, XHCA_OPC_RC | XHCA_OP_SEND_LAST, 3, 100, 2048, 22);
	if (fx_take_cqe(cq, &c1) || fx_take_cqe(cq, &c2))
		r = -2; /* (not two completions) */
	res(r == XHCA_H_PLACED && c1.wr_id == 46 && c1.qp_num == 0x100 + LRC && c2.wr_id == 47 &&
		    c2.qp_num == 0x100 + LUD && holds(6, 0, 2148, 21) && holds(7, 0, 2148, 22) &&
		    srq.ring->cons == 2,
	    "two QPs' messages on one SRQ, their packets interleaved: a buffer each, whole "
	    "(reason %d, wr %llu and %llu, the ring's consumer index %u)", r,
	    (unsigned long long)c1.wr_id, (unsigned long long)c2.wr_id, srq.ring->cons);
	qp_host_detach(&D, LRC);
	qp_host_detach(&D, LUD);
}

/* A CQ two engines write: a completion whose room the other engine took
 * waits in its engine's spill list, in order, the CQ full meanwhile; it
 * is written when the application makes room, and forgotten with its CQ. */
static void spill(void)
{
	struct xhca_cq_attr ca = { .depth = 4 };
	struct xhca_cqe c = {}, got[6];
	char err[XHCA_ERRMSG_LEN];
	struct cq *q;
	int n = 0, ok;

	if (cq_create(&D, 0, &ca, -1, err, sizeof(err)) || !(q = cq_find(&D, ca.cq))) {
		res(0, "a CQ of 4 entries");
		return;
	}
	D.eng[0].in_round = D.eng[1].in_round = 1; /* (inside their rounds) */
	eng_self = &D.eng[1];
	for (c.wr_id = 1; c.wr_id <= 3; c.wr_id++)
		cq_write(q, &c);
	res(q->prod == 0 && D.eng[1].nstage == 3, "a round's completions: staged by its engine, "
	    "not yet in the ring (prod %u, %u staged)", q->prod, D.eng[1].nstage);
	cq_flush();
	res(q->prod == 3 && D.eng[1].nstage == 0, "... written at the round's end (prod %u)", q->prod);
	eng_self = &D.eng[0];
	c.wr_id = 10; /* the last slot: engine 1's next finds none */
	cq_write(q, &c);
	cq_notify(&D); /* (writes what is staged) */
	eng_self = &D.eng[1];
	c.wr_id = 4;
	cq_write(q, &c);
	cq_flush();
	res(q->prod == 4 && D.eng[1].nspill == 1 && q->spilled == 1,
	    "a completion into a full CQ: spilled by its engine, not written (prod %u, %u spilled)",
	    q->prod, D.eng[1].nspill);
	ok = fx_take_cqe(q, &got[n]) == 0 && fx_take_cqe(q, &got[n + 1]) == 0;
	n += 2;
	eng_self = &D.eng[0];
	res(ok && !cq_room_or_wait(q), "... room made, but the CQ with a spilled completion is full "
	    "to the others");
	eng_self = &D.eng[1];
	c.wr_id = 5;
	cq_write(q, &c); /* behind the spilled one */
	cq_flush();
	res(D.eng[1].nspill == 2 && q->prod == 4, "... the engine's next one waits behind it");
	res(!cq_spill_run(&D) && q->spilled == 0 && q->prod == 6, "... both written at its next round "
	    "(prod %u)", q->prod);
	while (n < 6 && fx_take_cqe(q, &got[n]) == 0)
		n++;
	res(n == 6 && got[0].wr_id == 1 && got[1].wr_id == 2 && got[2].wr_id == 3 &&
	    got[3].wr_id == 10 && got[4].wr_id == 4 && got[5].wr_id == 5,
	    "... in order: each engine's own in the order it wrote them (%d taken)", n);
	for (c.wr_id = 20; c.wr_id < 25; c.wr_id++)
		cq_write(q, &c);
	cq_flush();
	c.wr_id = 25;
	cq_write(q, &c);
	res(D.eng[1].nspill == 1 && D.eng[1].nstage == 1 &&
	    !cq_destroy(&D, ca.cq, 0, err, sizeof(err)) && D.eng[1].nspill == 0 &&
	    D.eng[1].nstage == 0, "a CQ destroyed: its spilled and staged completions go with it");
	D.eng[0].in_round = D.eng[1].in_round = 0;
	eng_self = &D.eng[0];
}

/* Staged completions count toward a CQ's room: the flow queue waits for
 * the application as it did when each was written at once. */
static void stage_room(void)
{
	struct xhca_cq_attr ca = { .depth = 4 };
	struct xhca_cqe c = {};
	char err[XHCA_ERRMSG_LEN];
	struct cq *q;
	int room;

	if (cq_create(&D, 0, &ca, -1, err, sizeof(err)) || !(q = cq_find(&D, ca.cq))) {
		res(0, "a CQ of 4 entries");
		return;
	}
	eng_self = &D.eng[1];
	cq_write(q, &c);
	res(q->prod == 1 && !D.eng[1].nstage, "a completion outside a round (a control request's): "
	    "written at once (prod %u)", q->prod);
	D.eng[1].in_round = 1;
	for (c.wr_id = 1; c.wr_id <= 2; c.wr_id++)
		cq_write(q, &c);
	res(cq_room_or_wait(q) && q->prod == 1 && D.eng[1].nstage == 2,
	    "staged completions count as written: 1 written, 2 staged, the fourth slot is there");
	cq_write(q, &c);
	room = cq_room_or_wait(q);
	res(!room && q->prod == 4 && D.eng[1].nstage == 0 && q->waiting,
	    "... 3 staged: no room, seen with them written (prod %u)", q->prod);
	res(!cq_destroy(&D, ca.cq, 0, err, sizeof(err)), "... the CQ destroyed");
	D.eng[1].in_round = 0;
	eng_self = &D.eng[0];
}

#define LFAST 3

/* A CQ xhca_rx writes too and an RC QP LFAST on it, served by xhca_rx:
 * the CQ, or NULL. */
static struct cq *fast_setup(__u32 *cq_id)
{
	struct xhca_cq_attr ca = { .depth = 8 };
	char err[XHCA_ERRMSG_LEN];
	struct qp_host *qh = &D.qh[LFAST];
	struct cq *fq, *keep = cq;
	int r;

	D.recv_fast = 1;
	D.rfm = calloc(D.max_qps, sizeof(*D.rfm));
	D.app.cqx = calloc(XHCA_CQX_MAX, sizeof(*D.app.cqx));
	D.ctxm[LFAST].action = XHCA_ACT_HOST;
	if (!D.rfm || !D.app.cqx || cq_create(&D, 0, &ca, -1, err, sizeof(err)) ||
	    !(fq = cq_find(&D, ca.cq))) {
		res(0, "--recv-fast: a CQ with its xhca_cqx entry");
		return NULL;
	}
	*cq_id = ca.cq;
	res(fq->x && fq->x->gen && fq->x->depth == 8 &&
	    fq->x->ring == hm_base(hm_find(&D, fq->alloc), 0),
	    "--recv-fast: a new CQ gets its xhca_cqx entry (its ring, depth)");
	cq = fq;
	r = qp_make(LFAST, XHCA_QPT_RC);
	cq = keep;
	D.ctxm[LFAST].state = XHCA_QPS_INIT;
	recv_fast_on(&D, qh, LFAST);
	res(!r && !qh->rcv.rf, "... an RC QP in INIT: not served by xhca_rx");
	D.ctxm[LFAST].state = XHCA_QPS_RTS;
	recv_fast_on(&D, qh, LFAST);
	res(!r && qh->rcv.rf == &D.rfm[LFAST] && qh->rcv.rf->gen == qh->gen &&
	    qh->rcv.rf->cq == cq_slot(&D, fq) && qh->rcv.rf->rq_depth == RQ_DEPTH &&
	    qh->rcv.rf->rq_ring == hm_base(hm_find(&D, qh->rcv.rq_alloc), 0),
	    "... and an RC QP of the host with a receive queue of its own, its entry");
	return qh->rcv.rf ? fq : NULL;
}

/* xhcad after xhca_rx took buffers and wrote completions of the QP's. */
static void fast_shared(struct cq *fq)
{
	struct qp_host *qh = &D.qh[LFAST];
	struct xhca_rfast *rf = qh->rcv.rf;
	struct xhca_cqe c = { .wr_id = 0 };
	int r, ok;

	/* xhca_rx took the first buffer and wrote its completion */
	post_recv(LFAST, 30, 0, BUF);
	post_recv(LFAST, 31, 1, BUF);
	rf->rq_cons = 1;
	qh->rcv.rq->cons = 1;
	fq->e[0] = (struct xhca_cqe){ .wr_id = 30, .opcode = XHCA_WC_RECV, .byte_len = 7 };
	fq->x->prod = 1;
	fq->ring->prod = 1;
	r = deliver(LFAST, XHCA_OPC_RC | XHCA_OP_SEND_ONLY, 1, 50, 0, 9);
	ok = !fx_take_cqe(fq, &c) && c.wr_id == 30 && c.byte_len == 7;
	ok = ok && !fx_take_cqe(fq, &c) && c.wr_id == 31 && c.byte_len == 50 && holds(1, 0, 50, 9);
	res(r == XHCA_H_PLACED && ok && rf->rq_cons == 2 && qh->rcv.rq->cons == 2 &&
	    fq->x->prod == 2 && fx_take_cqe(fq, &c) != 0,
	    "xhcad after xhca_rx: the next buffer, the next completion slot (%d, wr_id %llu)", r,
	    (unsigned long long)c.wr_id);
	/* xhca_rx took the buffer xhcad's cached index had not seen: none */
	post_recv(LFAST, 32, 2, BUF);
	rf->rq_cons = 3;
	qh->rcv.rq->cons = 3;
	r = deliver(LFAST, XHCA_OPC_RC | XHCA_OP_SEND_ONLY, 2, 50, 0, 9);
	res(r == XHCA_H_RNR && fx_take_cqe(fq, &c) != 0 && rf->rq_cons == 3,
	    "every buffer taken by xhca_rx: RNR, none read past the producer index (%d)", r);
}

/* The frames xhca_rx counted in pend: held while placed, then taken back. */
static void fast_counted_frames(void)
{
	struct qp_host *qh = &D.qh[LFAST];
	struct xhca_rfast *rf = qh->rcv.rf, *h;
	int ok;

	frame(LFAST, XHCA_OPC_RC | XHCA_OP_SEND_ONLY, 3, 50, 0, 9, 0);
	m.gen = qh->gen;
	rf->pend = 1;
	h = recv_fast_hold(&D, &m, &pi);
	ok = h == rf && rf->lock;
	recv_fast_release(h);
	res(ok && !rf->lock && rf->pend == 0,
	    "a SEND xhca_rx sent on: the receive queue held while it is placed, pend back");
	/* counted before the QP went off and on again (pend 0 since) */
	h = recv_fast_hold(&D, &m, &pi);
	recv_fast_release(h);
	res(h == rf && rf->pend == 0, "... one counted before pend started over: pend stays 0 (%u)",
	    rf->pend);
	m.reason = XHCA_R_PLACED_ACK;
	m.flags |= XHCA_MF_PLACED;
	h = recv_fast_hold(&D, &m, &pi);
	res(!h && !rf->lock, "a SEND xhca_rx placed and sent on for its ACK: not counted");
	frame(LFAST, XHCA_OPC_RC | XHCA_OP_SEND_ONLY, 3, 50, 0, 9, 0);
	m.gen = qh->gen;
	m.flags |= XHCA_MF_MCAST;
	rf->pend = 1;
	h = recv_fast_hold(&D, &m, &pi);
	recv_fast_release(h);
	res(!h && !rf->lock && rf->pend == 1,
	    "a multicast copy xhcad made: not counted, another frame's count kept (pend %u)",
	    rf->pend);
	rf->pend = 0;
	frame(LFAST, XHCA_OPC_RC | XHCA_OP_WRITE_ONLY, 3, 50, 0, 9, 0);
	m.gen = qh->gen;
	h = recv_fast_hold(&D, &m, &pi);
	res(!h, "a WRITE without immediate: not counted");
}

/* ibv_resize_cq of a CQ xhca_rx writes: its xhca_cqx entry, in the slot
 * the QP's names, moves to the new ring (depth, ring, the producer index
 * xhca_rx left), the completions not yet taken where the same indexes fall;
 * a resize refused leaves the entry as it was. */
static void fast_resize(struct cq *fq, __u32 cq_id)
{
	struct xhca_rfast *rf = D.qh[LFAST].rcv.rf;
	struct xhca_cq_attr a = { .cq = cq_id, .depth = 2 };
	char err[XHCA_ERRMSG_LEN];
	struct xhca_cqe c = { .wr_id = 0 };
	struct xhca_cqx *x = fq->x;
	__u64 ring = x->ring;
	__u32 prod;
	int r;

	/* xhca_rx wrote two completions the application has not taken */
	prod = x->prod;
	fq->e[prod & (fq->depth - 1)] = (struct xhca_cqe){ .wr_id = 40, .opcode = XHCA_WC_RECV };
	fq->e[(prod + 1) & (fq->depth - 1)] = (struct xhca_cqe){ .wr_id = 41 };
	x->prod = fq->ring->prod = prod + 2;
	fq->owner = 9; /* (an application's: the CLI's CQs keep their size) */
	a.depth = 1;
	r = cq_resize(&D, 9, &a, 0, err, sizeof(err));
	res(r == -EINVAL && fq->x == x && x->gen && x->ring == ring && x->depth == 8 &&
	    x->prod == prod + 2 && cq_slot(&D, fq) == rf->cq,
	    "resize refused (2 completions, 1 entry): the xhca_cqx entry as it was (%d)", r);
	a.depth = 32;
	r = cq_resize(&D, 9, &a, 0, err, sizeof(err));
	res(!r && fq->x == x && x->gen && cq_slot(&D, fq) == rf->cq && x->depth == 32 &&
	    x->ring == hm_base(hm_find(&D, fq->alloc), 0) && x->ring != ring &&
	    x->prod == prod + 2 && fq->ring->prod == prod + 2,
	    "resized to 32: the QP's slot names the new ring, its depth, xhca_rx's index (%d: %s)",
	    r, r ? err : "");
	r = !fx_take_cqe(fq, &c) && c.wr_id == 40;
	res(r && !fx_take_cqe(fq, &c) && c.wr_id == 41 && fx_take_cqe(fq, &c) != 0,
	    "... the completions xhca_rx wrote come next from the new ring");
	fq->owner = 0;
}

/* Housekeeping's look for a lost wake-up (xhca_events full): an armed CQ
 * xhca_rx writes, holding a completion not taken, is signalled; with none
 * left to take, it is not. */
static void fast_wake_missed(struct cq *fq)
{
	int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), old = fq->efd, quiet;
	__u32 prod = fq->ring->prod;
	__u64 v = 0;

	cq_notify(&D); /* (what was written before: signalled, to no one) */
	fq->efd = efd;
	fq->ring->cons = prod;
	fq->ring->armed = 1;
	cq_wake_missed(&D);
	cq_notify(&D);
	quiet = read(efd, &v, sizeof(v)) < 0 && fq->ring->armed;
	fq->ring->cons = prod - 1;
	cq_wake_missed(&D);
	cq_notify(&D);
	res(efd >= 0 && quiet && read(efd, &v, sizeof(v)) == sizeof(v) && v == 1 &&
	    !fq->ring->armed,
	    "an armed CQ xhca_rx wrote a completion into, the wake-up lost: signalled; none "
	    "left to take: not");
	fq->ring->cons = prod;
	fq->efd = old;
	if (efd >= 0)
		close(efd);
}

/* The flags a CQ is made with: XHCA_CQF_NO_TS reaches its xhca_cqx entry
 * (xhca_rx then writes no time), as it is listed; another bit is refused. */
static void fast_flags(void)
{
	struct xhca_cq_attr a = { .depth = 4, .flags = XHCA_CQF_NO_TS },
			    b = { .depth = 4, .flags = 1u << 2 };
	char err[XHCA_ERRMSG_LEN] = "";
	struct xhca_cq_info *v = NULL;
	__u32 n = 0, listed = 0;
	struct cq *q;

	q = cq_create(&D, 0, &a, -1, err, sizeof(err)) ? NULL : cq_find(&D, a.cq);
	if (q && !cq_show(&D, 0, &v, &n))
		for (__u32 i = 0; i < n; i++)
			listed |= v[i].cq == a.cq && v[i].flags == XHCA_CQF_NO_TS;
	res(q && q->x && q->x->flags == XHCA_CQXF_NO_TS && listed,
	    "a CQ made with XHCA_CQF_NO_TS: its xhca_cqx entry says so (%u), and its listing",
	    q && q->x ? q->x->flags : 99);
	free(v);
	res(q && !cq_destroy(&D, a.cq, 0, err, sizeof(err)), "... destroyed");
	res(cq_create(&D, 0, &b, -1, err, sizeof(err)) == -EINVAL && strstr(err, "unknown flags 0x4"),
	    "an unknown flag: EINVAL (%s)", err);
}

/* --recv-fast: xhca_rx shares the QP's receive queue and its CQ with
 * xhcad (here xhca_rx's part done by hand, as recv.bpf.h does it). */
static void case_fast(void)
{
	char err[XHCA_ERRMSG_LEN];
	struct qp_host *qh = &D.qh[LFAST];
	struct xhca_rfast *rf;
	__u32 cq_id = 0;
	struct cq *fq = fast_setup(&cq_id);

	if (fq) {
		rf = qh->rcv.rf;
		fast_shared(fq);
		fast_counted_frames();
		fast_resize(fq, cq_id);
		fast_wake_missed(fq);
		/* off: the index is xhcad's again, the entry no QP's */
		recv_fast_off(qh);
		res(!qh->rcv.rf && !rf->gen && qh->rcv.rq_cons == 3 && recv_cons(qh) == 3,
		    "off: xhcad's consumer index is the shared one, the entry off");
		qp_host_detach(&D, LFAST);
		res(!cq_destroy(&D, cq_id, 0, err, sizeof(err)) && !D.app.cqx[rf->cq].gen,
		    "the CQ destroyed: its xhca_cqx entry free");
		fast_flags();
	}
	free(D.rfm);
	free(D.app.cqx);
	D.rfm = NULL;
	D.app.cqx = NULL;
	D.recv_fast = 0;
}

/* ... with two engines (the other cases have one) */
static void case_spill(void)
{
	D.neng = 2;
	spill();
	D.neng = 1;
}

static void case_stage_room(void)
{
	D.neng = 2;
	stage_room();
	D.neng = 1;
}

static int setup(char *why)
{
	struct xhca_cq_attr ca = { .depth = 16 };
	char err[XHCA_ERRMSG_LEN];

	D.neng = 1;
	eng_self = &D.eng[0];
	D.max_qps = 4;
	D.nflowq = 1;
	D.ctxm = calloc(D.max_qps, sizeof(*D.ctxm));
	D.qh = calloc(D.max_qps, sizeof(*D.qh));
	if (!D.ctxm || !D.qh || fx_hostmem(&D, 64) || cq_create(&D, 0, &ca, -1, err, sizeof(err)) ||
	    !(cq = cq_find(&D, ca.cq)) ||
	    !(bufs = hm_alloc(&D, 8 * BUF, 0, XHCA_ALLOC_CONTIG)) || qp_make(LRC, XHCA_QPT_RC) ||
	    qp_make(LUD, XHCA_QPT_UD)) {
		snprintf(why, UNIT_WHY_LEN, "QPs with receive queues in plain host memory");
		return -1;
	}
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_RUN("rc", case_rc),
	UNIT_RUN("ud", case_ud),
	UNIT_RUN("dispatch", case_dispatch),
	UNIT_RUN("flush", case_flush),
	UNIT_RUN("srq", case_srq),
	UNIT_RUN("spill", case_spill),
	UNIT_RUN("stage_room", case_stage_room),
	UNIT_RUN("fast", case_fast),
};

UNIT_FILE(recv, setup, NULL, cases);
