/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The requester and completer (user/xhcad/request.c, completer.c) without a
 * network: xhcad's layers below it as they are, host memory in plain
 * memory, the AF_XDP layer replaced by layers.c. A send request posted
 * into a send queue ring goes out as the packet it should be; the
 * responses that come back (an ACK, a READ response, an ATOMIC ACK, a NAK,
 * nothing until the timer) complete it as verbs say, in the CQ ring, with
 * a READ's bytes and an ATOMIC's value in its buffer.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <xhca/pkt.h>
#include <xhca/wire.h>
#include "layers.h"
#include "../../user/xhcad/sq_int.h" /* (sq_refused, sq_cwnd) */
#include "tests.h"

#define LIDX 2
#define GQPN 0x000321u
#define PEER_QPN 0x000654u
#define GEN 3u
#define SQ_DEPTH 16
#define PSN0 0x700u

static struct xhcad D;
static struct cq *cq;
static struct sq_state *sq;
static struct hm_alloc *payload;

#define res(ok, ...) unit_check((ok), __VA_ARGS__)

/* An RC QP in RTS at lidx (its QPN gqpn, the peer's peer) with a send
 * queue of SQ_DEPTH on the CQ; its send queue, or NULL. */
static struct sq_state *qp_make(__u32 lidx, __u32 gqpn, __u32 peer)
{
	struct xhca_qp_ctx *c = &D.ctxm[lidx];
	struct qp_host *qh = &D.qh[lidx];
	struct hm_alloc *ring;
	struct sq_state *s;

	c->valid = 1;
	c->gen = GEN;
	c->gqpn = gqpn;
	c->type = XHCA_QPT_RC;
	c->state = XHCA_QPS_RTS;
	c->action = XHCA_ACT_HOST;
	c->dest_qpn = peer;
	c->pkey = 0xffff;
	c->mtu_shift = 10;
	xhca_ip_parse("10.9.0.1", c->local_ip);
	xhca_ip_parse("10.9.0.2", c->remote_ip);
	qh->valid = 1;
	qh->gen = GEN;
	qh->gqpn = gqpn;
	qh->type = XHCA_QPT_RC;
	ring = hm_alloc(&D, xhca_ring_bytes(SQ_DEPTH, sizeof(struct xhca_swqe)), 0,
			XHCA_ALLOC_CONTIG);
	if (!ring || sq_attach(&D, qh, ring, SQ_DEPTH, cq))
		return NULL;
	s = qh->sq;
	s->timeout = 14;
	s->retry_cnt = s->retry_left = 7;
	s->rnr_retry = s->rnr_left = 7;
	s->max_rd_atomic = 16;
	sq_set_psn(&D, s, PSN0);
	s->dmac_ok = 1; /* the peer's MAC: known (no neighbour table here) */
	memcpy(s->dmac, "\x02\x00\x00\x00\x00\x02", 6);
	return s;
}

/* An RC QP in RTS with a send queue of SQ_DEPTH on a CQ of the CLI's. */
static int setup(void)
{
	struct xhca_cq_attr ca = { .depth = 16 };
	char err[XHCA_ERRMSG_LEN];

	D.neng = 1;
	eng_self = &D.eng[0];
	D.max_qps = 4;
	D.ctxm = calloc(D.max_qps, sizeof(*D.ctxm));
	D.qh = calloc(D.max_qps, sizeof(*D.qh));
	D.net.mac_ms = 1; /* the interface's MAC: known (net.c asks no ioctl) */
	if (!D.ctxm || !D.qh || fx_hostmem(&D, 64) || cq_create(&D, 0, &ca, -1, err, sizeof(err)))
		return -1;
	cq = cq_find(&D, ca.cq);
	payload = hm_alloc(&D, 4 * XHCA_PAGE_SIZE, 0, XHCA_ALLOC_CONTIG);
	if (!cq || !payload)
		return -1;
	sq = qp_make(LIDX, GQPN, PEER_QPN);
	return sq ? 0 : -1;
}

/* A request (opcode) of len bytes at the payload allocation's start, with
 * flags (XHCA_SEND_*). */
static void post_flags(__u64 wr_id, __u8 opcode, __u32 len, __u32 flags)
{
	struct xhca_swqe *e = (struct xhca_swqe *)(sq->ring + 1);
	struct xhca_swqe w = {
		.wr_id = wr_id, .opcode = opcode, .flags = flags, .nsge = 1, .len = len,
		.rkey = 0x1234, .sge = { { .len = len, .alloc = payload->id } },
	};

	e[sq->ring->prod & (SQ_DEPTH - 1)] = w;
	__atomic_store_n(&sq->ring->prod, sq->ring->prod + 1, __ATOMIC_RELEASE);
}

/* A request (opcode) of len bytes at off in the payload allocation,
 * signaled; READ and ATOMIC at the peer's va. */
static void post(__u64 wr_id, __u8 opcode, __u32 off, __u32 len, __u64 va, __u64 add)
{
	struct xhca_swqe *e = (struct xhca_swqe *)(sq->ring + 1);
	struct xhca_swqe w = {
		.wr_id = wr_id, .opcode = opcode, .flags = XHCA_SEND_SIGNALED, .nsge = 1,
		.len = len, .remote_va = va, .rkey = 0x1234, .compare_add = add,
		.sge = { { .off = off, .len = len, .alloc = payload->id } },
	};

	e[sq->ring->prod & (SQ_DEPTH - 1)] = w;
	__atomic_store_n(&sq->ring->prod, sq->ring->prod + 1, __ATOMIC_RELEASE);
}

static void post_send(__u64 wr_id, __u32 len)
{
	post(wr_id, XHCA_WR_SEND, 0, len, 0, 0);
}

/* A round of the requester. The peer's MAC stays known: a timeout makes
 * the requester look it up again, and there is no neighbour table here. */
static int run(void)
{
	int more;
	__u64 deadline;

	sq->dmac_ok = 1;
	return sq_run(&D, 64, &more, &deadline);
}

/* Frame i as a request: its opcode and PSN, its payload's length. */
static int frame_of(int i, __u8 *op, __u32 *psn, __u32 *dqpn, __u32 *plen)
{
	const __u8 *bth;
	__u32 off;

	if (i >= fx_n || i >= FX_MAX || xhca_icrc_check_frame(fx_frame[i], fx_len[i]) ||
	    recv_bth_offset(fx_frame[i], fx_len[i], &off))
		return -1;
	bth = fx_frame[i] + off;
	*op = bth[0];
	*dqpn = (__u32)bth[5] << 16 | (__u32)bth[6] << 8 | bth[7];
	*psn = (__u32)bth[9] << 16 | (__u32)bth[10] << 8 | bth[11];
	*plen = fx_len[i] - off - xhca_opinfo_tbl[bth[0]].hdr_len - (bth[1] >> 4 & 3) - 4;
	return 0;
}

/* A response of the peer's (op: ACK, READ RESPONSE, ATOMIC ACKNOWLEDGE) at
 * psn comes in: its AETH (syndrome, msn), its payload, an ATOMIC's value. */
static int peer_response(__u8 op, __u32 psn, __u8 syn, __u32 msn, const void *payload,
			 __u32 plen, __u64 orig)
{
	static __u8 fr[XHCA_PKT_MAX];
	struct xhca_rx_meta m = {
		.lidx = LIDX, .gen = GEN, .gqpn = GQPN, .opcode = XHCA_OPC_RC | op,
		.psn = psn, .reason = XHCA_R_TO_FLOWQ,
	};
	struct xhca_pkt_spec s;
	struct pkt_info pi;
	int len;

	xhca_pkt_spec_init(&s, XHCA_OPC_RC | op);
	xhca_ip_parse("10.9.0.2", s.src_ip);
	xhca_ip_parse("10.9.0.1", s.dst_ip);
	s.dqpn = GQPN;
	s.psn = psn;
	s.aeth_syndrome = syn;
	s.aeth_msn = msn;
	s.atomic_orig = orig;
	s.payload = payload;
	s.payload_len = plen;
	s.pad = -1;
	len = xhca_pkt_build(&s, fr, sizeof(fr));
	fx_meta_payload(&m, fr, len > 0 ? (__u32)len : 0, plen);
	m.rx_ns = now_ns();
	pkt_parse(&pi, &m, fr, len > 0 ? (__u32)len : 0);
	return sq_response(&D, &D.qh[LIDX], &pi);
}

static int peer_ack(__u32 psn, __u8 syn, __u32 msn)
{
	return peer_response(XHCA_OP_ACK, psn, syn, msn, NULL, 0, 0);
}

static void case_send_acked(void)
{
	struct xhca_cqe c = { .wr_id = 0 };
	int ok;
	__u32 p0 = sq->psn, psn = 0, dqpn = 0, plen = 0;
	__u8 op;

	fx_reset();
	post_send(42, 100);
	run();
	res(fx_n == 1 && !frame_of(0, &op, &psn, &dqpn, &plen) &&
		    op == (XHCA_OPC_RC | XHCA_OP_SEND_ONLY) && psn == p0 && dqpn == PEER_QPN &&
		    plen == 100,
	    "a SEND of 100 bytes goes out as one SEND ONLY at the QP's PSN to the peer's QP "
	    "(%d frames)", fx_n);
	res(fx_take_cqe(cq, &c) != 0, "no completion before the ACK");
	peer_ack(p0, 0x1f, 1);
	run();
	ok = !fx_take_cqe(cq, &c);
	res(ok && c.wr_id == 42 && c.status == XHCA_WC_SUCCESS && c.opcode == XHCA_WC_SEND &&
		    c.byte_len == 100 && c.qp_num == GQPN,
	    "its ACK completes it: wr 42, success, SEND, 100 bytes (wr %llu status %u)",
	    (unsigned long long)c.wr_id, c.status);
}

static void case_retry_on_timeout(void)
{
	__u32 p0 = sq->psn, psn = 0, dqpn = 0, plen = 0;
	__u8 op;
	__u64 before = D.eng[0].req.timeouts;
	struct xhca_cqe c = { .wr_id = 0 };
	int ok;

	__u32 w0 = sq->cwnd;

	fx_reset();
	sq->timeout = 1; /* 4.096 us * 2: the timer goes off at once */
	post_send(43, 64);
	run();
	/* the timer goes off; the retry leaves once the QP's hold after a
	 * timeout is over (at most a few ms) */
	for (int i = 0; i < 200 && fx_n < 2; i++) {
		usleep(1000);
		run();
	}
	ok = fx_n == 2 && !frame_of(1, &op, &psn, &dqpn, &plen);
	res(ok && psn == p0 && D.eng[0].req.timeouts == before + 1,
	    "no ACK: after the timeout the request goes again at the same PSN (%d frames, "
	    "PSN 0x%06x)", fx_n, fx_n > 1 ? psn : 0);
	res(w0 == 512 && sq->cwnd == 256,
	    "the window at path MTU 1024: 512 packets, halved by the timeout (%u -> %u)", w0,
	    sq->cwnd);
	peer_ack(p0, 0x1f, 2);
	run();
	res(!fx_take_cqe(cq, &c) && c.wr_id == 43 && c.status == XHCA_WC_SUCCESS,
	    "the ACK of the retry completes it once");
	res(fx_take_cqe(cq, &c) != 0, "... and nothing else");
	sq->timeout = 14;
}

/* A READ: its request leaves, its response's bytes land in the request's
 * buffer, it completes; an ATOMIC: its ACK's value lands (host order). */
static void case_read_atomic(void)
{
	__u8 data[100], *buf = D.hm.base + hm_base(payload, 0);
	__u32 p0 = sq->psn, psn = 0, dqpn = 0, plen = 0;
	struct xhca_cqe c = { .wr_id = 0 };
	__u64 orig = 0;
	__u8 op = 0;
	int ok;

	for (int i = 0; i < 100; i++)
		data[i] = (__u8)(i * 7 + 1);
	fx_reset();
	post(50, XHCA_WR_RDMA_READ, 1000, 100, 0x10000, 0);
	run();
	ok = fx_n == 1 && !frame_of(0, &op, &psn, &dqpn, &plen);
	res(ok && op == (XHCA_OPC_RC | XHCA_OP_READ_REQ) && psn == p0,
	    "a READ of 100 bytes goes out as a READ request at the next PSN (opcode 0x%02x PSN "
	    "0x%06x)", op, psn);
	peer_response(XHCA_OP_READ_RESP_ONLY, p0, 0x1f, 3, data, sizeof(data), 0);
	run();
	ok = !fx_take_cqe(cq, &c);
	res(ok && c.wr_id == 50 && c.status == XHCA_WC_SUCCESS && c.opcode == XHCA_WC_RDMA_READ &&
		    !memcmp(buf + 1000, data, sizeof(data)),
	    "its response's bytes are in the buffer, the READ completes (wr %llu status %u)",
	    (unsigned long long)c.wr_id, c.status);
	fx_reset();
	post(51, XHCA_WR_ATOMIC_FETCH_AND_ADD, 2000, 8, 0x10008, 5);
	run();
	ok = fx_n == 1 && !frame_of(0, &op, &psn, &dqpn, &plen);
	res(ok && op == (XHCA_OPC_RC | XHCA_OP_FETCH_ADD) && psn == p0 + 1,
	    "a FETCH_ADD goes out at the next PSN (opcode 0x%02x PSN 0x%06x)", op, psn);
	peer_response(XHCA_OP_ATOMIC_ACK, p0 + 1, 0x1f, 4, NULL, 0, 0x1122334455667788ull);
	run();
	ok = !fx_take_cqe(cq, &c);
	memcpy(&orig, buf + 2000, 8);
	res(ok && c.wr_id == 51 && c.status == XHCA_WC_SUCCESS && c.opcode == XHCA_WC_FETCH_ADD &&
		    orig == 0x1122334455667788ull,
	    "its ACK's original value is in the buffer, it completes (0x%llx)",
	    (unsigned long long)orig);
}

/* The PSN of frame i of the ones sent (0: none). */
static __u32 psn_of(int i)
{
	__u32 psn = 0, dqpn, plen;
	__u8 op;

	return frame_of(i, &op, &psn, &dqpn, &plen) ? 0 : psn;
}

/* Credits from a fresh start: one SEND (wr_id id) acknowledged with the
 * credit code cr and MSN msn, its completion taken; then the SENDs id + 1 ..
 * id + 4 posted and a round run (fx_n: what left). */
static void credits_start(__u64 id, __u8 cr, __u32 msn)
{
	__u32 p0 = sq->psn;
	struct xhca_cqe c = { .wr_id = 0 };

	fx_reset();
	post_send(id, 8);
	run();
	peer_ack(p0, cr, msn);
	run();
	res(!fx_take_cqe(cq, &c) && c.wr_id == id, "a SEND acknowledged, credit code %u", cr);
	fx_reset();
	for (__u64 i = id + 1; i <= id + 4; i++)
		post_send(i, 8);
	run();
}

/* End-to-end credits (IBA 9.7.7.2.5): SENDs start within the count the
 * responder's last ACK gave, or one alone when nothing of theirs is
 * unacknowledged; an ACK with no count (31) lifts the limit. */
static void case_credits(void)
{
	__u32 p0 = sq->psn;
	__u64 waits = D.eng[0].req.credit_waits;
	struct xhca_cqe c = { .wr_id = 0 };
	int n = 0, order = 1;

	sq->timeout = 14;
	credits_start(60, 2, 10); /* 2 buffers posted after it */
	res(fx_n == 2 && psn_of(1) == p0 + 2 && D.eng[0].req.credit_waits == waits + 1,
	    "4 SENDs posted: 2 leave, the other 2 wait for credits (%d frames, %llu waits)", fx_n,
	    (unsigned long long)(D.eng[0].req.credit_waits - waits));
	peer_ack(p0 + 1, 1, 11); /* the one buffer left is the second's */
	run();
	res(fx_n == 2, "the first's ACK with 1 credit (the second's buffer): none leaves (%d frames)",
	    fx_n);
	peer_ack(p0 + 2, 0, 12);
	run();
	res(fx_n == 3 && psn_of(2) == p0 + 3,
	    "no credit left, nothing unacknowledged: one SEND alone (%d frames)", fx_n);
	run();
	res(fx_n == 3, "... and only one");
	peer_ack(p0 + 3, XHCA_AETH_ACK_NO_CREDIT, 13);
	run();
	res(fx_n == 4 && psn_of(3) == p0 + 4, "an ACK with no credit count: no limit, the last "
	    "leaves (%d frames)", fx_n);
	peer_ack(p0 + 4, XHCA_AETH_ACK_NO_CREDIT, 14);
	run();
	while (!fx_take_cqe(cq, &c)) {
		order &= c.wr_id == (__u64)(61 + n) && c.status == XHCA_WC_SUCCESS;
		n++;
	}
	res(n == 4 && order, "the 4 complete, in order (%d)", n);
}

/* The responder's credit update: the last ACK again (its PSN), with a
 * larger count, lets the held SENDs go; the same ACK with a smaller count
 * (a duplicate from before) takes nothing back. */
static void case_credit_update(void)
{
	__u32 p0 = sq->psn;
	__u64 upd = D.eng[0].req.credit_updates, stale;
	struct xhca_cqe c = { .wr_id = 0 };
	int n = 0;

	credits_start(80, 1, 40); /* one buffer left */
	res(fx_n == 1, "4 SENDs posted: 1 leaves, 3 wait for credits (%d frames)", fx_n);
	peer_ack(p0, 3, 40);
	run();
	res(fx_n == 3 && psn_of(2) == p0 + 3 && D.eng[0].req.credit_updates == upd + 1,
	    "the last ACK again with 3 credits: 2 more leave (%d frames, %llu updates)", fx_n,
	    (unsigned long long)(D.eng[0].req.credit_updates - upd));
	stale = D.eng[0].req.stale;
	peer_ack(p0, 1, 40);
	run();
	res(fx_n == 3 && D.eng[0].req.credit_updates == upd + 1 && D.eng[0].req.stale == stale + 1,
	    "... and again with 1 credit: a stale duplicate, nothing taken back (%d frames)", fx_n);
	peer_ack(p0 + 3, 3, 43);
	run();
	res(fx_n == 4, "the 3 acknowledged with 3 credits: the last leaves (%d frames)", fx_n);
	peer_ack(p0 + 4, XHCA_AETH_ACK_NO_CREDIT, 44);
	run();
	while (!fx_take_cqe(cq, &c))
		n += c.status == XHCA_WC_SUCCESS && c.wr_id == (__u64)(81 + n);
	res(n == 4, "the 4 complete, in order (%d)", n);
}

/* A READ response whose AETH is of a NAK's kind (a hostile or broken
 * peer): its data taken as any response's, its syndrome not read as a
 * credit count (an RNR code would have been a count of 0). */
static void case_credits_bad_aeth(void)
{
	static const __u8 data[16];
	__u32 p0 = sq->psn;
	struct xhca_cqe c = { .wr_id = 0 };
	int n = 0;

	fx_reset();
	post(70, XHCA_WR_RDMA_READ, 1000, sizeof(data), 0x10000, 0);
	run();
	peer_response(XHCA_OP_READ_RESP_ONLY, p0, XHCA_AETH_RNR | 3, 30, data, sizeof(data), 0);
	run();
	res(!fx_take_cqe(cq, &c) && c.wr_id == 70 && c.status == XHCA_WC_SUCCESS,
	    "a READ response with an RNR syndrome in its AETH: the READ completes");
	fx_reset();
	for (int i = 71; i <= 73; i++)
		post_send((__u64)i, 8);
	run();
	res(fx_n == 3, "... and no credit count came of it: 3 SENDs leave at once (%d frames)", fx_n);
	peer_ack(p0 + 3, XHCA_AETH_ACK_NO_CREDIT, 33);
	run();
	while (!fx_take_cqe(cq, &c))
		n += c.status == XHCA_WC_SUCCESS;
	res(n == 3, "... and complete (%d)", n);
}

static void case_nak_access(void)
{
	struct xhca_cqe c = { .wr_id = 0 };
	__u32 p0 = sq->psn;
	int ok;

	fx_reset();
	sq->timeout = 14;
	post_send(44, 10);
	post_send(45, 10);
	run();
	peer_ack(p0, XHCA_AETH_NAK_ACCESS, 4);
	run();
	ok = !fx_take_cqe(cq, &c);
	res(ok && c.wr_id == 44 && c.status == XHCA_WC_REM_ACCESS_ERR &&
		    c.vendor_err == XHCA_AETH_NAK_ACCESS,
	    "a remote access NAK completes the request with REM_ACCESS_ERR (wr %llu status %u)",
	    (unsigned long long)c.wr_id, c.status);
	ok = !fx_take_cqe(cq, &c);
	res(ok && c.wr_id == 45 && c.status == XHCA_WC_WR_FLUSH_ERR,
	    "what follows it completes flushed (wr %llu status %u)", (unsigned long long)c.wr_id,
	    c.status);
	res(D.ctxm[LIDX].state == XHCA_QPS_ERR, "the QP is in the error state");
}

/* Whether frame i asks for an ACK (the BTH's AckReq bit). */
static int ackreq_of(int i)
{
	__u32 off;

	if (i >= fx_n || i >= FX_MAX || recv_bth_offset(fx_frame[i], fx_len[i], &off))
		return -1;
	return !!(fx_frame[i][off + 8] & 0x80);
}

/* The frames of this round that ask for an ACK, as a bit mask. */
static __u32 ackreq_mask(void)
{
	__u32 m = 0;

	for (int i = 0; i < fx_n && i < 32; i++)
		m |= (__u32)(ackreq_of(i) == 1) << i;
	return m;
}

/* A message asks for an ACK when something waits for it: its completion
 * (signaled), the queue's tail, the responder's last credit; and at least
 * every half queue (SQ_DEPTH / 2 PSNs here). The others go without, and an
 * ACK of a later one retires them. */
static void case_ackreq(void)
{
	__u32 p0 = sq->psn, m;
	struct xhca_cqe c = { .wr_id = 0 };
	int n = 0;

	fx_reset();
	post_send(90, 8);
	run();
	res(fx_n == 1 && ackreq_of(0) == 1, "a signaled SEND asks for an ACK");
	peer_ack(p0, XHCA_AETH_ACK_NO_CREDIT, 50);
	run();
	res(!fx_take_cqe(cq, &c) && c.wr_id == 90, "... and completes with it");
	fx_reset();
	for (int i = 0; i < 12; i++)
		post_flags((__u64)(91 + i), XHCA_WR_SEND, 8, 0);
	run();
	m = ackreq_mask();
	res(fx_n == 12 && m == (1u << 7 | 1u << 11),
	    "12 unsignaled SENDs: the 8th asks (half the queue of 16), the 12th (the tail) asks, "
	    "no other (%d frames, mask 0x%x)", fx_n, m);
	peer_ack(p0 + 12, XHCA_AETH_ACK_NO_CREDIT, 62);
	run();
	res(fx_take_cqe(cq, &c) != 0 && sq->acked == sq->fetched && sq->cons == sq->fetched,
	    "the tail's ACK retires all 12, with no completion (%u left)", sq->fetched - sq->acked);
	fx_reset();
	for (int i = 0; i < 5; i++)
		post_flags((__u64)(110 + i), XHCA_WR_SEND, 8, i == 2 ? XHCA_SEND_SIGNALED : 0);
	run();
	m = ackreq_mask();
	res(fx_n == 5 && m == (1u << 2 | 1u << 4),
	    "5 SENDs, the 3rd signaled: it asks, the tail asks (mask 0x%x)", m);
	peer_ack(p0 + 17, 2, 67); /* 2 buffers posted after it */
	run();
	while (!fx_take_cqe(cq, &c))
		n += c.wr_id == 112 && c.status == XHCA_WC_SUCCESS;
	res(n == 1, "... and only the signaled one completes (%d)", n);
	fx_reset();
	for (int i = 0; i < 4; i++)
		post_flags((__u64)(120 + i), XHCA_WR_SEND, 8, 0);
	run();
	m = ackreq_mask();
	res(fx_n == 2 && m == 1u << 1,
	    "2 credits, 4 unsignaled SENDs: 2 leave, the 2nd (the last credit) asks (%d frames, "
	    "mask 0x%x)", fx_n, m);
	peer_ack(p0 + 19, XHCA_AETH_ACK_NO_CREDIT, 69);
	run();
	m = ackreq_mask();
	res(fx_n == 4 && m == (1u << 1 | 1u << 3), "its ACK lifts the limit: the other 2 leave, "
	    "the tail asks (%d frames, mask 0x%x)", fx_n, m);
	peer_ack(p0 + 21, XHCA_AETH_ACK_NO_CREDIT, 71);
	run();
	res(sq->acked == sq->fetched, "... and its ACK retires them");
}

/* Two QPs with more to send than a run's budget share it: the one the
 * budget left out goes first in the next run, so neither waits behind the
 * other (a QP that always had more used to take every run's budget, and
 * the other's timer went off with nothing lost). */
static void case_fair_budget(void)
{
	struct sq_state *a = qp_make(1, 0x000111u, 0x001111u), *b = qp_make(3, 0x000333u,
									       0x003333u);
	__u32 first[2] = { 0, 0 }, second[2] = { 0, 0 }, dqpn = 0, psn, plen;
	int more = 0, again = 0;
	__u64 deadline;
	__u8 op;

	if (!a || !b) {
		res(0, "two more QPs");
		return;
	}
	for (__u32 i = 0; i < 4; i++) {
		for (int q = 0; q < 2; q++) {
			struct sq_state *s = q ? b : a;
			struct xhca_swqe *e = (struct xhca_swqe *)(s->ring + 1);
			struct xhca_swqe w = {
				.wr_id = i, .opcode = XHCA_WR_RDMA_WRITE, .nsge = 1, .len = 4096,
				.remote_va = 0x10000, .rkey = 0x1234,
				.sge = { { .len = 4096, .alloc = payload->id } },
			};

			e[s->ring->prod & (SQ_DEPTH - 1)] = w;
			__atomic_store_n(&s->ring->prod, s->ring->prod + 1, __ATOMIC_RELEASE);
		}
	}
	fx_reset();
	sq_run(&D, 8, &more, &deadline); /* 16 packets each, 8 a run */
	sq_run(&D, 8, &again, &deadline);
	for (int i = 0; i < 16 && i < fx_n; i++) {
		if (frame_of(i, &op, &psn, &dqpn, &plen))
			break;
		(i < 8 ? first : second)[dqpn == 0x003333u] += 1;
	}
	res(fx_n == 16 && more && again, "two runs of a budget of 8: 16 packets, more to send "
	    "after each (%d, %d %d)", fx_n, more, again);
	res((first[0] == 8 && second[1] == 8) || (first[1] == 8 && second[0] == 8),
	    "the first run's 8 packets are one QP's, the second run's the other's (QP 0x111 "
	    "%u then %u, QP 0x333 %u then %u)", first[0], second[0], first[1], second[1]);
	sq_detach(&D, &D.qh[1]);
	sq_detach(&D, &D.qh[3]);
	D.ctxm[1].valid = D.ctxm[3].valid = 0;
	D.qh[1].valid = D.qh[3].valid = 0;
}

/* A run the interface dropped (gso.c: its qdisc or device queue full) is
 * the QP's to send again (sq_refused): from the run's first PSN once its
 * back-off is over (REFUSED_NS, doubled for each refusal in a row), in
 * order, the window halved, no retry counted (nothing was lost on the
 * wire); a run that leaves ends the back-off. */
static void case_refused(void)
{
	struct sq_state *s = qp_make(1, 0x000555u, 0x005555u); /* (fair_budget's, free again) */
	struct xhca_swqe *e = s ? (struct xhca_swqe *)(s->ring + 1) : NULL;
	__u32 p0, psn = 0, dqpn = 0, plen, w0, got[4];
	__u8 retries, op;
	int more = 0, n = 0;
	__u64 deadline, t0;

	if (!s) {
		res(0, "one more QP");
		return;
	}
	e[s->ring->prod & (SQ_DEPTH - 1)] = (struct xhca_swqe){
		.wr_id = 7, .opcode = XHCA_WR_RDMA_WRITE, .nsge = 1, .len = 4096,
		.remote_va = 0x10000, .rkey = 0x1234,
		.sge = { { .len = 4096, .alloc = payload->id } },
	};
	__atomic_store_n(&s->ring->prod, s->ring->prod + 1, __ATOMIC_RELEASE);
	p0 = s->psn;
	fx_reset();
	sq_run(&D, 64, &more, &deadline);
	res(fx_n == 4, "a 4 KiB WRITE at path MTU 1024: 4 packets (%d)", fx_n);
	w0 = sq_cwnd(s, 1024);
	retries = s->retry_left;
	t0 = now_ns();
	sq_refused(&D, s, (p0 + 2) & XHCA_PSN_MASK, t0);
	fx_reset();
	sq_run(&D, 64, &more, &deadline);
	res(fx_n == 0 && deadline == t0 + REFUSED_NS,
	    "it waits REFUSED_NS first: nothing sent at once (%d frames), its wake-up at the "
	    "back-off's end (%lld ns after the refusal)", fx_n, (long long)(deadline - t0));
	sq_refused(&D, s, (p0 + 2) & XHCA_PSN_MASK, t0);
	res(s->hold_until == t0 + 2 * REFUSED_NS,
	    "a second refusal in a row waits twice as long (%lld ns)", (long long)(s->hold_until - t0));
	while (now_ns() < s->hold_until)
		usleep(10);
	fx_reset();
	sq_run(&D, 64, &more, &deadline);
	for (int i = 0; i < fx_n && i < 4 && !frame_of(i, &op, &psn, &dqpn, &plen); i++)
		got[n++] = psn;
	res(fx_n == 2 && n == 2 && got[0] == ((p0 + 2) & XHCA_PSN_MASK) &&
		    got[1] == ((p0 + 3) & XHCA_PSN_MASK) && dqpn == 0x005555u,
	    "its next turn sends again from the refused PSN, in order (%d frames: 0x%06x 0x%06x, "
	    "from 0x%06x)", fx_n, n > 0 ? got[0] : 0, n > 1 ? got[1] : 0, p0);
	res(sq_cwnd(s, 1024) == (w0 / 4 > CWND_MIN ? w0 / 4 : CWND_MIN) && s->retry_left == retries,
	    "the window halved at each refusal (%u -> %u), no retry counted (%u left)", w0,
	    sq_cwnd(s, 1024), s->retry_left);
	res(s->refusals == 0, "a run that left ends the back-off: the next refusal waits "
	    "REFUSED_NS again (%u in a row)", s->refusals);
	t0 = now_ns();
	for (int i = 0; i < 12; i++)
		sq_refused(&D, s, (p0 + 2) & XHCA_PSN_MASK, t0);
	res(s->hold_until == t0 + REFUSED_MAX_NS,
	    "twelve refusals in a row: the wait stops doubling at REFUSED_MAX_NS (%lld ns)",
	    (long long)(s->hold_until - t0));
	sq_detach(&D, &D.qh[1]);
	D.ctxm[1].valid = 0;
	D.qh[1].valid = 0;
}

/* A UC (or UD) QP being destroyed sends first what was posted to it and no
 * engine took yet (sq_drain): a program that posts unsignaled sends and
 * destroys its QP at once (mckey -s) loses none. RC's requests stay. */
static void case_drain(void)
{
	struct sq_state *s = qp_make(1, 0x000556u, 0x005556u);
	struct xhca_swqe *e = s ? (struct xhca_swqe *)(s->ring + 1) : NULL;
	__u32 psn = 0, dqpn = 0, plen;
	__u8 op = 0;

	if (!s) {
		res(0, "one more QP");
		return;
	}
	D.ctxm[1].type = D.qh[1].type = XHCA_QPT_UC;
	e[s->ring->prod & (SQ_DEPTH - 1)] = (struct xhca_swqe){
		.wr_id = 8, .opcode = XHCA_WR_RDMA_WRITE, .nsge = 1, .len = 4096,
		.remote_va = 0x10000, .rkey = 0x1234,
		.sge = { { .len = 4096, .alloc = payload->id } },
	};
	__atomic_store_n(&s->ring->prod, s->ring->prod + 1, __ATOMIC_RELEASE);
	fx_reset();
	sq_drain(&D, &D.qh[1]);
	if (fx_n > 0)
		frame_of(0, &op, &psn, &dqpn, &plen);
	res(fx_n == 4 && dqpn == 0x005556u,
	    "a UC QP's 4 KiB WRITE posted and not taken: its 4 packets sent by the drain, "
	    "no round run (%d, to QP 0x%06x)", fx_n, dqpn);
	fx_reset();
	sq_drain(&D, &D.qh[1]);
	res(fx_n == 0, "drained again: nothing more (%d)", fx_n);
	post_flags(9, XHCA_WR_RDMA_WRITE, 1024, XHCA_SEND_SIGNALED);
	fx_reset();
	sq_drain(&D, &D.qh[LIDX]);
	res(fx_n == 0, "an RC QP's request is left to its round (%d packets)", fx_n);
	sq_run(&D, 64, &(int){ 0 }, &(__u64){ 0 });
	sq_detach(&D, &D.qh[1]);
	D.ctxm[1].valid = 0;
	D.qh[1].valid = 0;
}

/* A request the program sent itself (XHCA_SEND_DIRECT, at PSN psn), posted. */
static void post_direct(__u64 wr_id, __u8 opcode, __u32 len, __u32 psn)
{
	struct xhca_swqe *e = (struct xhca_swqe *)(sq->ring + 1);

	e[sq->ring->prod & (SQ_DEPTH - 1)] = (struct xhca_swqe){
		.wr_id = wr_id, .opcode = opcode, .flags = XHCA_SEND_SIGNALED | XHCA_SEND_DIRECT,
		.nsge = 1, .len = len, .rkey = 0x1234, .psn = psn,
		.sge = { { .len = len, .alloc = payload->id } },
	};
	__atomic_store_n(&sq->ring->prod, sq->ring->prod + 1, __ATOMIC_RELEASE);
}

/* Everything outstanding acknowledged and its completions taken. */
static void quiesce(void)
{
	struct xhca_cqe c;

	peer_ack((sq->psn - 1) & XHCA_PSN_MASK, 0x1f, 0);
	run();
	while (!fx_take_cqe(cq, &c))
		;
}

/* Direct sends (request.c's sq_direct, direct_take, sq_catch_up): the
 * path in the ring for the program, the next PSN before each consumer
 * index; a request it sent itself taken as sent when it is what xhcad
 * would send, else sent by xhcad; an ACK before xhcad took it. */
static void case_direct(void)
{
	struct xhca_ring_ctl *r = sq->ring;
	struct qp_host *qh = &D.qh[LIDX];
	__u64 dir = D.eng[0].req.direct, ref = D.eng[0].req.direct_refused, stale;
	struct xhca_cqe c = { .wr_id = 0 };
	__u32 p0, psn = 0, dqpn = 0, plen = 0, sa;
	__u8 op = 0;

	/* (the QP again, in RTS: case_nak_access left it in error) */
	D.ctxm[LIDX].state = XHCA_QPS_RTS;
	sq_reset(&D, qh);
	sq_set_psn(&D, sq, PSN0 + 0x100);
	while (!fx_take_cqe(cq, &c))
		;
	D.direct = 0;
	sq_direct(&D, qh);
	res(r->d_psn == 0, "--direct off: no path in the ring (d_psn 0x%x)", r->d_psn);
	D.direct = 1;
	sq_direct(&D, qh);
	p0 = sq->psn;
	sa = htonl(0x0a090001);
	res(r->d_psn == (XHCA_DIRECT_OK | p0) && r->d_dqpn == PEER_QPN && r->d_saddr == sa &&
		    r->d_sport == (0xc000 | (GQPN & 0x3fff)) && r->d_pkey == 0xffff &&
		    r->d_mtu_shift == 10,
	    "--direct on, RC in RTS: the path and the next PSN in the ring (d_psn 0x%x, QP "
	    "0x%06x, port %u)", r->d_psn, r->d_dqpn, r->d_sport);

	fx_reset();
	post_direct(70, XHCA_WR_SEND, 100, p0);
	run();
	res(fx_n == 0 && D.eng[0].req.direct == dir + 1 && fx_take_cqe(cq, &c) != 0,
	    "a SEND the program sent at the next PSN: taken as sent, nothing sent again, "
	    "no completion yet (%d frames)", fx_n);
	peer_ack(p0, 0x1f, 1);
	run();
	res(!fx_take_cqe(cq, &c) && c.wr_id == 70 && c.status == XHCA_WC_SUCCESS &&
		    r->cons == r->prod && r->d_psn == (XHCA_DIRECT_OK | ((p0 + 1) & XHCA_PSN_MASK)),
	    "its ACK completes it; the ring says the PSN after it (wr %llu, d_psn 0x%x)",
	    (unsigned long long)c.wr_id, r->d_psn);

	fx_reset();
	post_direct(71, XHCA_WR_SEND, 100, (p0 + 5) & XHCA_PSN_MASK);
	run();
	res(fx_n == 1 && !frame_of(0, &op, &psn, &dqpn, &plen) &&
		    psn == ((p0 + 1) & XHCA_PSN_MASK) && D.eng[0].req.direct_refused == ref + 1,
	    "one marked with another PSN: xhcad sends it at the next PSN, refused counted "
	    "(%d frames, PSN 0x%06x)", fx_n, psn);
	quiesce();

	fx_reset();
	post_direct(72, XHCA_WR_RDMA_WRITE, 2000, sq->psn);
	run();
	res(fx_n == 2 && D.eng[0].req.direct_refused == ref + 2,
	    "one of two packets (2000 bytes, path MTU 1024) marked: sent by xhcad, both "
	    "packets (%d)", fx_n);
	quiesce();

	fx_reset();
	p0 = sq->psn;
	stale = D.eng[0].req.stale;
	post_direct(73, XHCA_WR_RDMA_WRITE, 64, p0);
	sq_catch_up(&D, qh); /* (dispatch's, before the response) */
	peer_ack(p0, 0x1f, 2);
	run();
	res(fx_n == 0 && !fx_take_cqe(cq, &c) && c.wr_id == 73 && c.status == XHCA_WC_SUCCESS &&
		    D.eng[0].req.stale == stale,
	    "its ACK before xhcad took it: taken first, then completed by it (%d frames, "
	    "wr %llu)", fx_n, (unsigned long long)c.wr_id);

	sq_mark_error(sq);
	res(r->d_psn == 0, "the QP in error: no path in the ring (d_psn 0x%x)", r->d_psn);
	sq->error = 0;
	sq_direct(&D, qh);
}

static int file_setup(char *why)
{
	if (setup()) {
		snprintf(why, UNIT_WHY_LEN, "a send queue in plain host memory");
		return -1;
	}
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_RUN("send_acked", case_send_acked),
	UNIT_RUN("retry_on_timeout", case_retry_on_timeout),
	UNIT_RUN("read_atomic", case_read_atomic),
	UNIT_RUN("credits", case_credits),
	UNIT_RUN("credits_bad_aeth", case_credits_bad_aeth),
	UNIT_RUN("credit_update", case_credit_update),
	UNIT_RUN("ackreq", case_ackreq),
	UNIT_RUN("nak_access", case_nak_access),
	UNIT_RUN("fair_budget", case_fair_budget),
	UNIT_RUN("refused", case_refused),
	UNIT_RUN("drain", case_drain),
	UNIT_RUN("direct", case_direct),
};

UNIT_FILE(req, file_setup, NULL, cases);
