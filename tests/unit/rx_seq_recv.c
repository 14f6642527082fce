/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca_rx sequences: SENDs placed by xhca_rx (--recv-fast, recv.bpf.h).
 * A one-packet SEND goes into the buffer at the head of its QP's receive
 * queue and its completion into the CQ when all it needs is there; each
 * missing piece sends it on to xhcad with nothing taken or written; pend
 * counts what xhcad is to take back.
 */
#include <arpa/inet.h>
#include <xhca/ring.h>
#include "rx.h"

#define RQ_OFF (12 * 4096ull)	/* the receive queue's ring in host memory */
#define CQ_OFF (13 * 4096ull)	/* the CQ's */
#define RQ_DEPTH 4
#define CQ_DEPTH 4
#define R_ALLOC 42		/* the allocation MR_PRE lies in, at its start */
#define R_OWNER 5
/* a buffer 1 KiB into a page (PRE_BASE is 100 bytes into one): placed by
 * bpf_xdp_load_bytes, with the kfunc or without */
#define BUF_OFF (4096 - 100 + 1024ull)
#define CQX_SLOT 3
#define XDP_ACK_DQPN 0xabcde	/* the remote QPN of L_RCW, for its ACKs */

static struct xhca_rfast *rfm;
static struct xhca_cqx *cqxm;
static size_t rf_len, cqx_len;
static int wakes;

static struct xhca_ring_ctl *rq_ctl(void) { return (void *)(hm + RQ_OFF); }
static struct xhca_ring_ctl *cq_ctl(void) { return (void *)(hm + CQ_OFF); }
static struct xhca_rwqe *rq_e(__u32 i) { return (struct xhca_rwqe *)(rq_ctl() + 1) + i % RQ_DEPTH; }
static struct xhca_cqe *cq_e(__u32 i) { return (struct xhca_cqe *)(cq_ctl() + 1) + i % CQ_DEPTH; }

static int wake_event(void *ctx, void *data, size_t len)
{
	const struct xhca_event *e = data;

	(void)ctx;
	if (len == sizeof(*e) && e->type == XHCA_EV_CQ_WAKE && e->lidx == CQX_SLOT)
		wakes++;
	return 0;
}

static int maps_on(char *why)
{
	struct bpf_map *a = E.skel->maps.xhca_rfast, *b = E.skel->maps.xhca_cqx;

	if (rfm)
		return 0;
	rf_len = (size_t)bpf_map__max_entries(a) * sizeof(*rfm);
	cqx_len = (size_t)bpf_map__max_entries(b) * sizeof(*cqxm);
	rfm = mmap(NULL, rf_len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(a), 0);
	cqxm = mmap(NULL, cqx_len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(b), 0);
	if (rfm == MAP_FAILED || cqxm == MAP_FAILED) {
		rfm = NULL;
		return snprintf(why, WHY_LEN, "map xhca_rfast/xhca_cqx: %s", strerror(errno)), -1;
	}
	return 0;
}

/* QP lidx served here: its receive queue and CQ empty, MR_PRE a region
 * buffers may be in. */
static int fast_up(__u32 lidx, char *why)
{
	struct xhca_qp_ctx c;
	struct xhca_mr_ctx m;

	if (maps_on(why) || qps_reset() || ctx_get(lidx, &c))
		return -1;
	mrs_reset();
	m = mrm[MR_PRE];
	m.access |= XHCA_ACCESS_LOCAL_WRITE;
	m.alloc = R_ALLOC;
	m.aoff = 0;
	m.owner = R_OWNER;
	xhca_mr_store(&mrm[MR_PRE], &m);
	memset(hm + RQ_OFF, 0, 2 * 4096);
	memset(rfm, 0, rf_len);
	memset(cqxm, 0, cqx_len);
	cqxm[CQX_SLOT] = (struct xhca_cqx){ .gen = 1, .depth = CQ_DEPTH, .ring = CQ_OFF };
	rfm[lidx] = (struct xhca_rfast){ .gen = c.gen, .rq_depth = RQ_DEPTH, .rq_ring = RQ_OFF,
					 .cq = CQX_SLOT, .owner = R_OWNER };
	return 0;
}

/* A receive posted (the buffer holding the canary again). */
static void post(__u64 wr_id, __u64 off, __u32 len)
{
	struct xhca_ring_ctl *r = rq_ctl();

	memset(hm + PRE_BASE + BUF_OFF, CANARY, 512);
	*rq_e(r->prod) = (struct xhca_rwqe){ .wr_id = wr_id, .off = off, .len = len,
					     .alloc = R_ALLOC, .nsge = 1,
					     .lkey = rkey_of(MR_PRE) };
	__atomic_store_n(&r->prod, r->prod + 1, __ATOMIC_RELEASE);
}

static void send_spec(struct xhca_pkt_spec *s, __u32 lidx, __u8 op, __u32 psn, const __u8 *p,
		      __u32 n)
{
	spec_to(s, (__u8)((qps[lidx].type == XHCA_QPT_UC ? XHCA_OPC_UC : XHCA_OPC_RC) | op), lidx,
		psn);
	s->payload = p;
	s->payload_len = n;
}

/* The state after a SEND placed here: the payload in the buffer (the rest
 * of it untouched), completion k as it should be, every index moved. */
static int placed_ok(__u32 lidx, __u32 k, __u64 wr_id, const __u8 *p, __u32 n, __u32 imm,
		     char *why)
{
	const struct xhca_cqe *e = cq_e(k);
	const __u8 *buf = hm + PRE_BASE + BUF_OFF;

	if (memcmp(buf, p, n) || buf[n] != CANARY)
		return snprintf(why, WHY_LEN, "SEND %u: buffer not the payload", k), -1;
	if (e->wr_id != wr_id || e->status != XHCA_WC_SUCCESS || e->opcode != XHCA_WC_RECV ||
	    e->byte_len != n || e->qp_num != QPN(lidx) ||
	    e->wc_flags != (imm ? XHCA_WC_WITH_IMM : 0) || e->imm_data != imm || !e->rx_ns)
		return snprintf(why, WHY_LEN, "completion %u: wr_id 0x%llx status %u opcode %u len "
				"%u qpn 0x%x flags 0x%x imm 0x%x", k,
				(unsigned long long)e->wr_id, e->status, e->opcode, e->byte_len,
				e->qp_num, e->wc_flags, e->imm_data), -1;
	if (cq_ctl()->prod != k + 1 || cqxm[CQX_SLOT].prod != k + 1 || rq_ctl()->cons != k + 1 ||
	    rfm[lidx].rq_cons != k + 1 || rfm[lidx].placed != k + 1 || rfm[lidx].pend)
		return snprintf(why, WHY_LEN, "after SEND %u: CQ prod %u/%u, RQ cons %u/%u, placed "
				"%u, pend %u", k, cq_ctl()->prod, cqxm[CQX_SLOT].prod, rq_ctl()->cons, rfm[lidx].rq_cons, rfm[lidx].placed,
				rfm[lidx].pend), -1;
	return 0;
}

/* Nothing taken, nothing written: k completions and receive entries so
 * far, and pend as xhcad is to see it. */
static int untouched(__u32 lidx, __u32 k, __u32 pend, const char *what, char *why)
{
	if (cq_ctl()->prod != k || cqxm[CQX_SLOT].prod != k || rq_ctl()->cons != k ||
	    rfm[lidx].rq_cons != k || rfm[lidx].pend != pend || rfm[lidx].lock ||
	    cqxm[CQX_SLOT].lock)
		return snprintf(why, WHY_LEN, "%s: CQ prod %u/%u, RQ cons %u/%u, pend %u (want %u), "
				"locks %u %u", what, cq_ctl()->prod, cqxm[CQX_SLOT].prod,
				rq_ctl()->cons, rfm[lidx].rq_cons, rfm[lidx].pend, pend,
				rfm[lidx].lock, cqxm[CQX_SLOT].lock), -1;
	return 0;
}

/* Placed here: RC and UC, with and without immediate, without payload, a
 * sleeping application told through xhcad. */
int seq_recv_placed(char *why)
{
	static __u8 pay[300];
	struct ring_buffer *rb;
	struct xhca_pkt_spec s;
	int err;

	for (int i = 0; i < 300; i++)
		pay[i] = (__u8)(i * 3 + 1);
	if (fast_up(L_RCW, why))
		return -1;
	post(0x1001, BUF_OFF, 512);
	send_spec(&s, L_RCW, XHCA_OP_SEND_ONLY, EPSN0, pay, 300);
	if (step(&s, XHCA_R_RECV_PLACED, L_RCW, EPSN0 + 1, why) ||
	    placed_ok(L_RCW, 0, 0x1001, pay, 300, 0, why))
		return -1;
	/* with immediate */
	post(0x1002, BUF_OFF, 512);
	send_spec(&s, L_RCW, XHCA_OP_SEND_ONLY_IMM, EPSN0 + 1, pay + 1, 64);
	s.imm = 0xa1b2c3d4;
	if (step(&s, XHCA_R_RECV_PLACED, L_RCW, EPSN0 + 2, why) ||
	    placed_ok(L_RCW, 1, 0x1002, pay + 1, 64, htonl(0xa1b2c3d4), why))
		return -1;
	/* no payload */
	post(0x1003, BUF_OFF, 0);
	send_spec(&s, L_RCW, XHCA_OP_SEND_ONLY, EPSN0 + 2, NULL, 0);
	if (step(&s, XHCA_R_RECV_PLACED, L_RCW, EPSN0 + 3, why) ||
	    placed_ok(L_RCW, 2, 0x1003, pay, 0, 0, why))
		return -1;
	/* the application sleeps on the CQ: xhcad hears of it */
	rb = ring_buffer__new(bpf_map__fd(E.skel->maps.xhca_events), wake_event, NULL, NULL);
	if (!rb)
		return snprintf(why, WHY_LEN, "ring buffer: %s", strerror(errno)), -1;
	ring_buffer__consume(rb);
	wakes = 0;
	cq_ctl()->armed = 1;
	post(0x1004, BUF_OFF, 512);
	send_spec(&s, L_RCW, XHCA_OP_SEND_ONLY, EPSN0 + 3, pay, 10);
	err = step(&s, XHCA_R_RECV_PLACED, L_RCW, EPSN0 + 4, why) ||
	      placed_ok(L_RCW, 3, 0x1004, pay, 10, 0, why);
	ring_buffer__consume(rb);
	ring_buffer__free(rb);
	if (err)
		return -1;
	if (wakes != 1)
		return snprintf(why, WHY_LEN, "%d wake events for a sleeping CQ, want 1", wakes), -1;
	/* UC too */
	if (fast_up(L_UCW, why))
		return -1;
	post(0x2001, BUF_OFF, 512);
	send_spec(&s, L_UCW, XHCA_OP_SEND_ONLY, EPSN0, pay, 200);
	return step(&s, XHCA_R_RECV_PLACED, L_UCW, EPSN0 + 1, why) ||
	       placed_ok(L_UCW, 0, 0x2001, pay, 200, 0, why);
}

/* A UD SEND (n bytes, src_qp 0x4321) at k into the buffer at off (len), its
 * frame built in f: the reason, and where it leaves the receive queue. */
static int ud_step(__u32 k, __u64 off, __u32 len, int v6, __u32 imm, const __u8 *p, __u32 n,
		   int want, __u8 *f, int *flen, char *why)
{
	struct xhca_pkt_spec s;

	post(0x5000 + k, off, len);
	xhca_pkt_spec_init(&s, XHCA_OPC_UD | (imm ? XHCA_OP_SEND_ONLY_IMM : XHCA_OP_SEND_ONLY));
	s.dqpn = qps[L_UD_HOST].qpn;
	s.deth_qkey = UD_QKEY;
	s.deth_sqp = 0x4321;
	s.psn = 0x777;
	s.imm = imm;
	s.payload = p;
	s.payload_len = n;
	if (v6) {
		s.ipv6 = 1;
		xhca_ip_parse("fd00::1", s.src_ip);
		xhca_ip_parse("fd00::2", s.dst_ip);
	} else {
		addr(s.src_ip, 0, 0);
		addr(s.dst_ip, 0, 1);
	}
	*flen = xhca_pkt_build(&s, f, XHCA_PKT_MAX);
	return step(&s, want, L_UD_HOST, -1, why);
}

/* The buffer after a UD SEND placed: the GRH (the frame's IP header after 20
 * zero bytes, or the IPv6 header), the payload, the canary; completion k. */
static int ud_placed_ok(__u32 k, const __u8 *f, int v6, __u32 imm, const __u8 *p, __u32 n,
			char *why)
{
	const __u8 *buf = hm + PRE_BASE + BUF_OFF;
	const struct xhca_cqe *e = cq_e(k);
	static const __u8 zero[20];
	__u8 sl = XHCA_SL_ROCE_V2 | (v6 ? XHCA_SL_IPV6 : XHCA_SL_IPV4);

	if (v6 ? memcmp(buf, f + 14, 40) : (memcmp(buf, zero, 20) || memcmp(buf + 20, f + 14, 20)))
		return snprintf(why, WHY_LEN, "UD SEND %u: the GRH is not the frame's IP header", k),
		       -1;
	if (memcmp(buf + 40, p, n) || buf[40 + n] != CANARY)
		return snprintf(why, WHY_LEN, "UD SEND %u: the payload after the GRH", k), -1;
	if (e->wr_id != 0x5000 + k || e->status != XHCA_WC_SUCCESS || e->opcode != XHCA_WC_RECV ||
	    e->byte_len != 40 + n || e->qp_num != qps[L_UD_HOST].qpn || e->src_qp != 0x4321 ||
	    e->wc_flags != (XHCA_WC_GRH | (imm ? XHCA_WC_WITH_IMM : 0)) ||
	    e->imm_data != htonl(imm) || e->sl != sl)
		return snprintf(why, WHY_LEN, "UD completion %u: wr_id 0x%llx len %u src_qp 0x%x "
				"flags 0x%x imm 0x%x sl 0x%x", k, (unsigned long long)e->wr_id,
				e->byte_len, e->src_qp, e->wc_flags, e->imm_data, e->sl), -1;
	if (cq_ctl()->prod != k + 1 || rq_ctl()->cons != k + 1 || rfm[L_UD_HOST].pend)
		return snprintf(why, WHY_LEN, "after UD SEND %u: CQ prod %u, RQ cons %u, pend %u", k,
				cq_ctl()->prod, rq_ctl()->cons, rfm[L_UD_HOST].pend), -1;
	return 0;
}

/* UD: the GRH, then the payload, the completion naming the sender's QP and
 * the network header; a buffer without room for both, or whose GRH would
 * not be 8-byte aligned, and a kernel without bpf_dynptr_copy (the payload
 * 40 bytes past a 1 KiB offset): to xhcad, nothing taken or written. */
int seq_recv_ud(char *why)
{
	static __u8 pay[200], f[XHCA_PKT_MAX];
	int flen, err;

	for (int i = 0; i < 200; i++)
		pay[i] = (__u8)(i * 5 + 2);
	if (fast_up(L_UD_HOST, why) ||
	    ud_step(0, BUF_OFF, 512, 0, 0, pay, 200, XHCA_R_RECV_PLACED, f, &flen, why) ||
	    ud_placed_ok(0, f, 0, 0, pay, 200, why) ||
	    ud_step(1, BUF_OFF, 512, 1, 0x1234abcd, pay + 3, 77, XHCA_R_RECV_PLACED, f, &flen,
		    why) ||
	    ud_placed_ok(1, f, 1, 0x1234abcd, pay + 3, 77, why))
		return -1;
	if (ud_step(2, BUF_OFF, 40 + 199, 0, 0, pay, 200, XHCA_R_TO_FLOWQ, f, &flen, why) ||
	    untouched(L_UD_HOST, 2, 1, "a buffer 1 byte short of the GRH and the SEND", why))
		return -1;
	if (fast_up(L_UD_HOST, why) ||
	    ud_step(0, BUF_OFF + 4, 512, 0, 0, pay, 20, XHCA_R_TO_FLOWQ, f, &flen, why) ||
	    untouched(L_UD_HOST, 0, 1, "a buffer whose GRH is not 8-byte aligned", why))
		return -1;
	if (fast_up(L_UD_HOST, why))
		return -1;
	E.skel->bss->xhca_no_kfuncs = 1;
	err = ud_step(0, BUF_OFF, 512, 0, 0, pay, 20, XHCA_R_TO_FLOWQ, f, &flen, why);
	E.skel->bss->xhca_no_kfuncs = 0;
	if (err || untouched(L_UD_HOST, 0, 1, "without bpf_dynptr_copy", why))
		return -1;
	if (hm[PRE_BASE + BUF_OFF] != CANARY)
		return snprintf(why, WHY_LEN, "without bpf_dynptr_copy: the buffer written"), -1;
	return 0;
}

/* Each thing the SEND needs, missing: on to xhcad (to_flowq, as without
 * --recv-fast), nothing taken or written here, and pend left for xhcad. */
int seq_recv_fallback(char *why)
{
	static const struct {
		const char *name;
		int what;
	} cases[] = {
		{ "no receive buffer (xhcad's RNR)", 1 },
		{ "a frame of the QP on its way through xhcad (pend)", 2 },
		{ "the receive queue held by xhcad", 3 },
		{ "the CQ held by another engine", 4 },
		{ "the CQ full", 5 },
		{ "a scatter list", 6 },
		{ "no L_Key", 7 },
		{ "a stale L_Key", 8 },
		{ "a region of another PD", 9 },
		{ "a region of another session", 10 },
		{ "a region without local write", 11 },
		{ "a buffer shorter than the SEND", 12 },
		{ "a buffer past its region", 13 },
		{ "another allocation's buffer", 14 },
		{ "the entry of an earlier QP in its slot (gen)", 15 },
		{ "a CQ xhca_rx no longer writes", 16 },
		{ "completions of xhcad's waiting for room", 17 },
		{ "a garbage producer index", 18 },
		{ "a region that is not pre-translated", 19 },
		{ "a buffer off 1 KiB without bpf_dynptr_copy", 20 },
	};
	static __u8 pay[64];
	struct xhca_pkt_spec s;

	memset(pay, 0x5a, sizeof(pay));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int w = cases[i].what, err;
		__u32 pend0 = 0;
		struct xhca_mr_ctx m;

		if (fast_up(L_RCW, why))
			return -1;
		if (w != 1)
			post(0x3000 + i, BUF_OFF, 64);
		m = mrm[MR_PRE];
		switch (w) {
		case 2: rfm[L_RCW].pend = pend0 = 1; break;
		case 3: rfm[L_RCW].lock = XHCA_RFL_XHCAD; break;
		case 4: cqxm[CQX_SLOT].lock = XHCA_RFL_XHCAD; break;
		case 5: cqxm[CQX_SLOT].prod = cq_ctl()->prod = CQ_DEPTH; cq_ctl()->cons = 0; break;
		case 6: rq_e(0)->nsge = 2; break;
		case 7: rq_e(0)->lkey = 0; break;
		case 8: rq_e(0)->lkey ^= 0x80; break;
		case 9: m.pd = 8; break;
		case 10: m.owner = R_OWNER + 1; break;
		case 11: m.access &= ~XHCA_ACCESS_LOCAL_WRITE; break;
		case 12: rq_e(0)->len = 63; break;
		case 13: rq_e(0)->off = PRE_LEN - 32; break;
		case 14: rq_e(0)->alloc = R_ALLOC + 1; break;
		case 15: rfm[L_RCW].gen++; break;
		case 16: cqxm[CQX_SLOT].gen = 0; break;
		case 17: cqxm[CQX_SLOT].spilled = 1; break;
		case 18: rq_ctl()->prod = RQ_DEPTH + 1; break;
		case 19: m.flags &= ~XHCA_MRF_PRETRANSLATED; break;
		case 20: rq_e(0)->off = BUF_OFF + 8; E.skel->bss->xhca_no_kfuncs = 1; break;
		}
		xhca_mr_store(&mrm[MR_PRE], &m);
		send_spec(&s, L_RCW, XHCA_OP_SEND_ONLY, EPSN0, pay, 64);
		err = step(&s, XHCA_R_TO_FLOWQ, L_RCW, EPSN0 + 1, why);
		E.skel->bss->xhca_no_kfuncs = 0;
		if (w == 5)
			cqxm[CQX_SLOT].prod = cq_ctl()->prod = 0; /* (for untouched) */
		/* (the held locks are the holders' to give back) */
		rfm[L_RCW].lock = cqxm[CQX_SLOT].lock = 0;
		if (w == 18)
			rq_ctl()->prod = 1;
		if (err || untouched(L_RCW, 0, w == 15 ? 0 : pend0 + 1, cases[i].name, why) ||
		    hm[PRE_BASE + BUF_OFF] != CANARY || hm[PRE_BASE + BUF_OFF + 8] != CANARY) {
			if (!err && !why[0])
				snprintf(why, WHY_LEN, "%s: the buffer written", cases[i].name);
			return -1;
		}
	}
	return 0;
}

/* What pend counts: a SEND or immediate xhca_rx sends on (xhcad takes it
 * back), not one it drops or places (nor one placed and sent on for its
 * ACK), nor a WRITE without immediate. */
int seq_recv_pend(char *why)
{
	static __u8 pay[64];
	struct xhca_pkt_spec s;

	if (fast_up(L_RCW, why))
		return -1;
	/* a WRITE placed here: not counted */
	wspec(&s, L_RCW, XHCA_OP_WRITE_ONLY, EPSN0, MR_PRE, PRE_IOVA, 16, 16);
	if (step(&s, XHCA_R_PLACED, L_RCW, EPSN0 + 1, why) || untouched(L_RCW, 0, 0, "WRITE", why))
		return -1;
	/* a WRITE with immediate: on for its completion, counted */
	wspec(&s, L_RCW, XHCA_OP_WRITE_ONLY_IMM, EPSN0 + 1, MR_PRE, PRE_IOVA, 16, 16);
	if (step(&s, XHCA_R_PLACED_TO_FLOWQ, L_RCW, EPSN0 + 2, why) ||
	    untouched(L_RCW, 0, 1, "WRITE with immediate", why))
		return -1;
	rfm[L_RCW].pend = 0; /* (xhcad took it back) */
	/* an RC SEND whose ACK is due (AckReq): placed here, then on to
	 * xhcad for the ACK (msg_len its PSN), not counted */
	post(0x4000, BUF_OFF, 64);
	send_spec(&s, L_RCW, XHCA_OP_SEND_ONLY, EPSN0 + 2, pay, 64);
	s.ackreq = 1;
	if (step(&s, XHCA_R_PLACED_ACK, L_RCW, EPSN0 + 3, why) ||
	    untouched(L_RCW, 1, 0, "a SEND with AckReq", why))
		return -1;
	if (!(last_meta.flags & XHCA_MF_PLACED) || last_meta.msg_len != EPSN0 + 2 ||
	    !(last_meta.flags & XHCA_MF_ACKREQ) || rfm[L_RCW].placed != 1)
		return snprintf(why, WHY_LEN, "the ACK's metadata: flags 0x%x msg_len 0x%x",
				last_meta.flags, last_meta.msg_len), -1;
	/* a SEND's FIRST: xhcad places the message, counted */
	send_spec(&s, L_RCW, XHCA_OP_SEND_FIRST, EPSN0 + 3, pay, 1024);
	s.payload = NULL;
	if (step(&s, XHCA_R_TO_FLOWQ, L_RCW, EPSN0 + 4, why) ||
	    untouched(L_RCW, 1, 1, "SEND FIRST", why))
		return -1;
	/* a duplicate: on to xhcad to be acknowledged again, counted */
	send_spec(&s, L_RCW, XHCA_OP_SEND_ONLY, EPSN0 - 1, pay, 64);
	if (step(&s, XHCA_R_DUP_TO_FLOWQ, L_RCW, EPSN0 + 4, why) ||
	    untouched(L_RCW, 1, 2, "a duplicate", why))
		return -1;
	/* a SEND cutting the one in progress short: dropped, not counted (the
	 * QP goes to the error state) */
	send_spec(&s, L_RCW, XHCA_OP_SEND_ONLY, EPSN0 + 4, pay, 64);
	if (step(&s, XHCA_R_DROP_SEND_SEQ, L_RCW, -1, why) ||
	    untouched(L_RCW, 1, 2, "a SEND cutting another short", why))
		return -1;
	/* a QP not served here: nothing counted */
	rfm[L_RCW].gen = 0;
	rfm[L_RCW].pend = 0;
	if (fast_up(L_UCW, why))
		return -1;
	rfm[L_UCW].gen = 0;
	post(0x4001, BUF_OFF, 64);
	send_spec(&s, L_UCW, XHCA_OP_SEND_ONLY, EPSN0, pay, 64);
	return step(&s, XHCA_R_TO_FLOWQ, L_UCW, EPSN0 + 1, why) ||
	       untouched(L_UCW, 0, 0, "a QP not served here", why);
}

/* The application's indexes are read only when xhca_rx's copies run out
 * (their cache lines are the application's, written as it posts and
 * polls): garbage there is seen only then, and room the application made
 * is seen then. */
int seq_recv_cached(char *why)
{
	static __u8 pay[64];
	struct xhca_pkt_spec s;
	__u32 psn = EPSN0;

	memset(pay, 0x6b, sizeof(pay));
	if (fast_up(L_RCW, why))
		return -1;
	post(0x5001, BUF_OFF, 64);
	post(0x5002, BUF_OFF, 64);
	send_spec(&s, L_RCW, XHCA_OP_SEND_ONLY, psn, pay, 64);
	if (step(&s, XHCA_R_RECV_PLACED, L_RCW, ++psn, why) ||
	    placed_ok(L_RCW, 0, 0x5001, pay, 64, 0, why))
		return -1;
	if (rfm[L_RCW].rq_prod != 2)
		return snprintf(why, WHY_LEN, "the receive queue's index kept: %u, want 2",
				rfm[L_RCW].rq_prod), -1;
	/* both indexes garbage now: the second entry, known, taken anyway */
	rq_ctl()->prod = RQ_DEPTH + 7;
	cq_ctl()->cons = 9;
	send_spec(&s, L_RCW, XHCA_OP_SEND_ONLY, psn, pay, 64);
	if (step(&s, XHCA_R_RECV_PLACED, L_RCW, ++psn, why) ||
	    placed_ok(L_RCW, 1, 0x5002, pay, 64, 0, why))
		return -1;
	/* the known entries used up: the ring's index read, garbage, so on
	 * to xhcad (which fails the QP) */
	send_spec(&s, L_RCW, XHCA_OP_SEND_ONLY, psn, pay, 64);
	if (step(&s, XHCA_R_TO_FLOWQ, L_RCW, ++psn, why) ||
	    untouched(L_RCW, 2, 1, "a garbage producer index past the kept one", why))
		return -1;
	rfm[L_RCW].pend = 0; /* (xhcad took it back) */
	rq_ctl()->prod = 2;
	cq_ctl()->cons = 0;
	post(0x5003, BUF_OFF, 64);
	post(0x5004, BUF_OFF, 64);
	post(0x5005, BUF_OFF, 64); /* (a fifth: the first two are taken) */
	for (__u32 k = 2; k < CQ_DEPTH; k++) {
		send_spec(&s, L_RCW, XHCA_OP_SEND_ONLY, psn, pay, 64);
		if (step(&s, XHCA_R_RECV_PLACED, L_RCW, ++psn, why) ||
		    placed_ok(L_RCW, k, 0x5001 + k, pay, 64, 0, why))
			return -1;
	}
	/* the CQ full as last read; the application took one since */
	cq_ctl()->cons = 1;
	send_spec(&s, L_RCW, XHCA_OP_SEND_ONLY, psn, pay, 64);
	if (step(&s, XHCA_R_RECV_PLACED, L_RCW, ++psn, why) ||
	    placed_ok(L_RCW, CQ_DEPTH, 0x5005, pay, 64, 0, why))
		return -1;
	if (cqxm[CQX_SLOT].cons != 1)
		return snprintf(why, WHY_LEN, "the CQ's consumer index kept: %u, want 1",
				cqxm[CQX_SLOT].cons), -1;
	return 0;
}

/* A CQ made with XHCA_CQF_NO_TS (xhca_cqx flags): the completion is
 * written whole but its time, 0; without the flag, the time is there. */
int seq_recv_no_ts(char *why)
{
	static __u8 pay[32];
	struct xhca_pkt_spec s;

	memset(pay, 0x3c, sizeof(pay));
	if (fast_up(L_RCW, why))
		return -1;
	cqxm[CQX_SLOT].flags = XHCA_CQXF_NO_TS;
	post(0x6001, BUF_OFF, 64);
	send_spec(&s, L_RCW, XHCA_OP_SEND_ONLY, EPSN0, pay, 32);
	if (step(&s, XHCA_R_RECV_PLACED, L_RCW, EPSN0 + 1, why))
		return -1;
	if (cq_e(0)->wr_id != 0x6001 || cq_e(0)->byte_len != 32 || cq_e(0)->rx_ns ||
	    cq_ctl()->prod != 1)
		return snprintf(why, WHY_LEN, "no time asked: wr_id 0x%llx len %u rx_ns %llu prod %u",
				(unsigned long long)cq_e(0)->wr_id, cq_e(0)->byte_len,
				(unsigned long long)cq_e(0)->rx_ns, cq_ctl()->prod), -1;
	cqxm[CQX_SLOT].flags = 0;
	post(0x6002, BUF_OFF, 64);
	send_spec(&s, L_RCW, XHCA_OP_SEND_ONLY, EPSN0 + 1, pay, 32);
	if (step(&s, XHCA_R_RECV_PLACED, L_RCW, EPSN0 + 2, why))
		return -1;
	return placed_ok(L_RCW, 1, 0x6002, pay, 32, 0, why);
}

/* (the maps as the other cases expect them: no QP served here) */
void recv_maps_off(void)
{
	if (!rfm)
		return;
	memset(rfm, 0, rf_len);
	memset(cqxm, 0, cqx_len);
	munmap(rfm, rf_len);
	munmap(cqxm, cqx_len);
	rfm = NULL;
	cqxm = NULL;
}

/* The ACK xhca_rx makes of an RC SEND it placed whose ACK is due, sent
 * back (--xdp-ack): byte for byte the frame xhcad builds for it
 * (resp_ack_spec: addresses and the UDP source port back, VLAN tags kept, the QP's remote
 * QPN and P_Key, the MSN, the receive queue's credits), its ICRC too. */
static int xdp_ack_is(const struct xhca_pkt_spec *req, __u32 msn, __u32 posted, char *why)
{
	static __u8 want[256];
	struct xhca_pkt_spec a;
	int n;

	xhca_pkt_spec_init(&a, XHCA_OPC_RC | XHCA_OP_ACK);
	memcpy(a.dmac, req->smac, 6);
	memcpy(a.smac, req->dmac, 6);
	memcpy(a.src_ip, req->dst_ip, 16);
	memcpy(a.dst_ip, req->src_ip, 16);
	a.sport = req->sport;
	a.nvlan = req->nvlan;
	memcpy(a.vlan_tpid, req->vlan_tpid, sizeof(a.vlan_tpid));
	memcpy(a.vlan_tci, req->vlan_tci, sizeof(a.vlan_tci));
	a.dqpn = XDP_ACK_DQPN;
	a.pkey = qps[L_RCW].pkey;
	a.psn = req->psn;
	a.aeth_msn = msn;
	a.aeth_syndrome = xhca_credit_code(posted);
	n = xhca_pkt_build(&a, want, sizeof(want));
	/* (the output starts at the metadata: none, the flow queue's block
	 * taken away, else the peer's xhca_rx would find it) */
	if (n <= 0 || last_tx_len != (__u32)n || memcmp(last_tx, want, (size_t)n))
		return snprintf(why, WHY_LEN, "the ACK of PSN 0x%06x: %u bytes, want %d like xhcad's",
				req->psn, last_tx_len, n), -1;
	return 0;
}

/* L_RCW served here (not yet let send ACKs), its ACKs to XDP_ACK_DQPN,
 * path MTU 4096, its receive queue full of entries from wr_id w. */
static int xdp_ack_qp(__u64 w, char *why)
{
	struct xhca_qp_ctx c;

	if (fast_up(L_RCW, why) || ctx_get(L_RCW, &c))
		return -1;
	c.dest_qpn = XDP_ACK_DQPN;
	c.mtu_shift = 12;
	xhca_qpctx_store(&E.ctxm[L_RCW], &c, 1);
	for (int i = 0; i < RQ_DEPTH; i++)
		post(w + (__u64)i, BUF_OFF, 128);
	return 0;
}

/* An RC SEND or WRITE placed here whose ACK is due (AckReq): its ACK made
 * here and sent back where xhcad lets it (XHCA_RFF_XDP_ACK) and owe is the
 * packet's alone (a SEND's: with credits to give); else on to xhcad for
 * it. owe counts every RC request, taken back for what does not go to
 * xhcad. */
int seq_recv_xdp_ack(char *why)
{
	static __u8 pay[100];
	struct xhca_pkt_spec s;
	__u32 psn = EPSN0;

	memset(pay, 0x5a, sizeof(pay));
	if (xdp_ack_qp(0x7001, why))
		return -1;
	/* not let: on to xhcad, owe not counted */
	send_spec(&s, L_RCW, XHCA_OP_SEND_ONLY, psn, pay, 100);
	s.ackreq = 1;
	if (step(&s, XHCA_R_PLACED_ACK, L_RCW, ++psn, why) || rfm[L_RCW].owe)
		return snprintf(why, WHY_LEN, "%s", rfm[L_RCW].owe ? "owe counted, not let" : why), -1;
	rfm[L_RCW].flags = XHCA_RFF_XDP_ACK;
	/* three credits left (code 3), the MSN the second message's; then
	 * a SEND without payload (the frame grows into the ACK) */
	send_spec(&s, L_RCW, XHCA_OP_SEND_ONLY, psn, pay, 100);
	s.ackreq = 1;
	s.sport = 0xc123;
	if (step(&s, XHCA_R_RECV_ACKED, L_RCW, ++psn, why) ||
	    placed_ok(L_RCW, 1, 0x7002, pay, 100, 0, why) || xdp_ack_is(&s, 2, 2, why))
		return -1;
	send_spec(&s, L_RCW, XHCA_OP_SEND_ONLY, psn, NULL, 0);
	s.ackreq = 1;
	if (step(&s, XHCA_R_RECV_ACKED, L_RCW, ++psn, why) || xdp_ack_is(&s, 3, 1, why))
		return -1;
	if (rfm[L_RCW].owe || rfm[L_RCW].pend)
		return snprintf(why, WHY_LEN, "owe %u pend %u after ACKs sent here, want 0 0",
				rfm[L_RCW].owe, rfm[L_RCW].pend), -1;
	/* a WRITE placed here: counted and taken back; one on to xhcad
	 * (with immediate): counted, left for xhcad */
	wspec(&s, L_RCW, XHCA_OP_WRITE_ONLY, psn, MR_PRE, PRE_IOVA, 16, 16);
	if (step(&s, XHCA_R_PLACED, L_RCW, ++psn, why) || rfm[L_RCW].owe)
		return snprintf(why, WHY_LEN, "a WRITE placed here: owe %u", rfm[L_RCW].owe), -1;
	/* ... whose ACK is due: sent back here (one receive entry left:
	 * credit code 1; the MSN the fifth message's) */
	wspec(&s, L_RCW, XHCA_OP_WRITE_ONLY, psn, MR_PRE, PRE_IOVA, 16, 16);
	s.ackreq = 1;
	if (step(&s, XHCA_R_PLACED_ACKED, L_RCW, ++psn, why) || xdp_ack_is(&s, 5, 1, why))
		return -1;
	wspec(&s, L_RCW, XHCA_OP_WRITE_ONLY_IMM, psn, MR_PRE, PRE_IOVA, 16, 16);
	if (step(&s, XHCA_R_PLACED_TO_FLOWQ, L_RCW, ++psn, why) || rfm[L_RCW].owe != 1)
		return snprintf(why, WHY_LEN, "a WRITE on to xhcad: owe %u", rfm[L_RCW].owe), -1;
	rfm[L_RCW].pend = 0; /* (xhcad took its completion's count back) */
	/* owe not this packet's alone: xhcad sends the ACK, after its own */
	post(0x7005, BUF_OFF, 128);
	send_spec(&s, L_RCW, XHCA_OP_SEND_ONLY, psn, pay, 100);
	s.ackreq = 1;
	if (step(&s, XHCA_R_PLACED_ACK, L_RCW, ++psn, why) || rfm[L_RCW].owe != 2)
		return snprintf(why, WHY_LEN, "behind a frame in xhcad: owe %u, want 2",
				rfm[L_RCW].owe), -1;
	rfm[L_RCW].owe = 0; /* (xhcad's round sent both answers) */
	cq_ctl()->cons = 4; /* (the application polled them) */
	/* the receive queue's last entry taken: no credit to give, xhcad's
	 * ACK (its credit update follows the next posts) */
	send_spec(&s, L_RCW, XHCA_OP_SEND_ONLY, psn, pay, 100);
	s.ackreq = 1;
	if (step(&s, XHCA_R_PLACED_ACK, L_RCW, ++psn, why))
		return -1;
	/* UC: nothing counted */
	if (fast_up(L_UCW, why))
		return -1;
	rfm[L_UCW].flags = XHCA_RFF_XDP_ACK;
	post(0x7101, BUF_OFF, 128);
	send_spec(&s, L_UCW, XHCA_OP_SEND_ONLY, EPSN0, pay, 100);
	if (step(&s, XHCA_R_RECV_PLACED, L_UCW, EPSN0 + 1, why) || rfm[L_UCW].owe)
		return snprintf(why, WHY_LEN, "%s", rfm[L_UCW].owe ? "UC counted in owe" : why), -1;
	return 0;
}

/* By the frame's shape: one or two VLAN tags stay in the ACK xhca_rx
 * makes; IPv4 options, a multi-buffer frame (xdp.frags) and an IPv6 QP
 * leave it to xhcad: placed here, the frame on to xhcad as it came (run
 * checks that), owe counted for xhcad to take back. */
int seq_recv_xdp_ack_frames(char *why)
{
	static __u8 pay[100];
	struct xhca_pkt_spec s;
	struct xhca_qp_ctx c;
	__u32 psn = EPSN0;

	memset(pay, 0x3c, sizeof(pay));
	if (xdp_ack_qp(0x7201, why))
		return -1;
	rfm[L_RCW].flags = XHCA_RFF_XDP_ACK;
	for (int n = 1; n <= 2; n++) {
		send_spec(&s, L_RCW, XHCA_OP_SEND_ONLY, psn, pay, 100);
		s.ackreq = 1;
		s.nvlan = n;
		s.vlan_tci[0] = 0x0123;
		s.vlan_tci[1] = 0x0456;
		if (step(&s, XHCA_R_RECV_ACKED, L_RCW, ++psn, why) ||
		    xdp_ack_is(&s, (__u32)n, RQ_DEPTH - (__u32)n, why))
			return -1;
	}
	send_spec(&s, L_RCW, XHCA_OP_SEND_ONLY, psn, pay, 100);
	s.ackreq = 1;
	s.ip_opt_len = 8;
	if (step(&s, XHCA_R_PLACED_ACK, L_RCW, ++psn, why))
		return -1;
	if (rfm[L_RCW].owe != 1)
		return snprintf(why, WHY_LEN, "IPv4 options: owe %u, want 1", rfm[L_RCW].owe), -1;
	rfm[L_RCW].owe = 0; /* (xhcad's round sent its ACK) */
	/* a WRITE of 4 KiB: over a page, the test run makes it multi-buffer */
	wspec(&s, L_RCW, XHCA_OP_WRITE_ONLY, psn, MR_PRE, PRE_IOVA, 4096, 4096);
	s.ackreq = 1;
	if (step(&s, XHCA_R_PLACED_ACK, L_RCW, ++psn, why))
		return -1;
	if (rfm[L_RCW].owe != 1)
		return snprintf(why, WHY_LEN, "multi-buffer: owe %u, want 1", rfm[L_RCW].owe), -1;
	rfm[L_RCW].owe = 0;
	/* the QP made IPv6; receives to give credits for (what was placed
	 * polled) */
	cq_ctl()->cons = 3;
	post(0x7205, BUF_OFF, 128);
	post(0x7206, BUF_OFF, 128);
	if (ctx_get(L_RCW, &c))
		return -1;
	c.flags |= XHCA_QPF_IPV6;
	addr(c.local_ip, 1, 1);
	addr(c.remote_ip, 1, 0);
	xhca_qpctx_store(&E.ctxm[L_RCW], &c, 1);
	send_spec(&s, L_RCW, XHCA_OP_SEND_ONLY, psn, pay, 100);
	s.ackreq = 1;
	s.ipv6 = 1;
	addr(s.src_ip, 1, 0);
	addr(s.dst_ip, 1, 1);
	if (step(&s, XHCA_R_PLACED_ACK, L_RCW, ++psn, why))
		return -1;
	if (rfm[L_RCW].owe != 1)
		return snprintf(why, WHY_LEN, "IPv6: owe %u, want 1", rfm[L_RCW].owe), -1;
	return 0;
}
