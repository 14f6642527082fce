/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca_rx sequences: RDMA WRITE placement and its checks, the opcode
 * sequence, READ and ATOMIC, the responder's duplicates, NAKs and ACKs.
 */
#include "rx.h"

/* WRITEs of a whole 4 KiB page (path MTU 4096: the frame's payload goes on
 * in XDP fragments): one starting a host memory page, copied by one
 * bpf_xdp_load_bytes; one 100 bytes into a page, the dynptr copy to the
 * page's end, then a load_bytes from the page's start. Then 4 KiB at path
 * MTU 1024 into a page: a load_bytes at each of the four 1 KiB offsets.
 * Exact every time. */
int seq_write_placed_4k(char *why)
{
	static __u8 want[4096];
	struct xhca_pkt_spec s;
	struct xhca_qp_ctx c;
	/* PRE_BASE is 100 bytes into a page: this VA starts the next one */
	__u64 aligned = 4096 - 100;

	if (qps_reset() || ctx_get(L_UCW, &c))
		return -1;
	c.mtu_shift = 12;
	xhca_qpctx_store(&E.ctxm[L_UCW], &c, 1);
	for (int i = 0; i < 4096; i++)
		want[i] = (__u8)i;
	mrs_reset();
	wspec(&s, L_UCW, XHCA_OP_WRITE_ONLY, EPSN0, MR_PRE, PRE_IOVA + aligned, 4096, 4096);
	if (step(&s, XHCA_R_PLACED, L_UCW, EPSN0 + 1, why) ||
	    hm_only(PRE_BASE + aligned, want, 4096, why))
		return -1;
	if ((PRE_BASE + aligned) % 4096)
		return snprintf(why, WHY_LEN, "the first WRITE does not start a page"), -1;
	mrs_reset();
	wspec(&s, L_UCW, XHCA_OP_WRITE_ONLY, EPSN0 + 1, MR_PRE, PRE_IOVA, 4096, 4096);
	if (step(&s, XHCA_R_PLACED, L_UCW, EPSN0 + 2, why) || hm_only(PRE_BASE, want, 4096, why))
		return -1;
	/* path MTU 1024 into that page: its packets at 0, 1, 2 and 3 KiB, each
	 * with bytes of its own (a branch copying to another's place shows) */
	mrs_reset();
	for (int i = 0; i < 4096; i++)
		want[i] = (__u8)(i + i / 1024 * 0x40);
	for (__u32 k = 0; k < 4; k++) {
		static const __u8 ops[] = { XHCA_OP_WRITE_FIRST, XHCA_OP_WRITE_MIDDLE,
					    XHCA_OP_WRITE_MIDDLE, XHCA_OP_WRITE_LAST };

		wspec(&s, L_RCW, ops[k], EPSN0 + k, k ? 0 : MR_PRE, k ? 0 : PRE_IOVA + aligned,
		      k ? 0 : 4096, 1024);
		s.payload = want + k * 1024;
		if (step(&s, XHCA_R_PLACED, L_RCW, EPSN0 + k + 1, why))
			return -1;
	}
	return hm_only(PRE_BASE + aligned, want, 4096, why);
}

/* WRITEs into a pre-translated region: placed by xhca_rx, exactly, across
 * pages, nothing else touched; multi-packet with the cursor; immediate
 * goes on for its completion; zero length checks no key. */
int seq_write_placed(char *why)
{
	static __u8 want[4096];
	struct xhca_pkt_spec s;
	__u64 off = 4096 - 100 - 50; /* lands 50 bytes before a page boundary */

	if (qps_reset())
		return -1;
	mrs_reset();
	for (int i = 0; i < 4096; i++)
		want[i] = (__u8)i;
	wspec(&s, L_RCW, XHCA_OP_WRITE_ONLY, EPSN0, MR_PRE, PRE_IOVA + off, 200, 200);
	if (step(&s, XHCA_R_PLACED, L_RCW, EPSN0 + 1, why) ||
	    hm_only(PRE_BASE + off, want, 200, why))
		return -1;
	/* FIRST + MIDDLE + LAST: 3000 bytes at MTU 1024, from the region's start */
	mrs_reset();
	wspec(&s, L_RCW, XHCA_OP_WRITE_FIRST, EPSN0 + 1, MR_PRE, PRE_IOVA, 3000, 1024);
	if (step(&s, XHCA_R_PLACED, L_RCW, EPSN0 + 2, why))
		return -1;
	if (!(rx_word(L_RCW) & XHCA_RXPSN_WRITE) || !(rx_word(L_RCW) & XHCA_RXPSN_PRETX))
		return snprintf(why, WHY_LEN, "no WRITE in progress after FIRST"), -1;
	wspec(&s, L_RCW, XHCA_OP_WRITE_MIDDLE, EPSN0 + 2, 0, 0, 0, 1024);
	if (step(&s, XHCA_R_PLACED, L_RCW, EPSN0 + 3, why))
		return -1;
	wspec(&s, L_RCW, XHCA_OP_WRITE_LAST, EPSN0 + 3, 0, 0, 0, 952);
	if (step(&s, XHCA_R_PLACED, L_RCW, EPSN0 + 4, why))
		return -1;
	{
		static __u8 w3[3000];

		for (int i = 0; i < 3000; i++)
			w3[i] = (__u8)(i % 1024);
		if (hm_only(PRE_BASE, w3, 3000, why))
			return -1;
	}
	if (rx_word(L_RCW) & XHCA_RXPSN_WRITE)
		return snprintf(why, WHY_LEN, "WRITE still in progress after LAST"), -1;
	/* WRITE ONLY with immediate: placed, then to the flow queue */
	mrs_reset();
	wspec(&s, L_RCW, XHCA_OP_WRITE_ONLY_IMM, EPSN0 + 4, MR_PRE, PRE_IOVA + 8, 64, 64);
	s.imm = 0x1234;
	if (step(&s, XHCA_R_PLACED_TO_FLOWQ, L_RCW, EPSN0 + 5, why) ||
	    hm_only(PRE_BASE + 8, want, 64, why))
		return -1;
	if (!(last_meta.flags & XHCA_MF_PLACED) || last_meta.msg_len != 64 ||
	    last_meta.reason != XHCA_R_PLACED_TO_FLOWQ)
		return snprintf(why, WHY_LEN, "metadata of the immediate: flags 0x%x len %u",
				last_meta.flags, last_meta.msg_len), -1;
	/* FIRST then LAST with immediate: the completion knows the length */
	wspec(&s, L_RCW, XHCA_OP_WRITE_FIRST, EPSN0 + 5, MR_PRE, PRE_IOVA, 1500, 1024);
	if (step(&s, XHCA_R_PLACED, L_RCW, EPSN0 + 6, why))
		return -1;
	wspec(&s, L_RCW, XHCA_OP_WRITE_LAST_IMM, EPSN0 + 6, 0, 0, 0, 476);
	if (step(&s, XHCA_R_PLACED_TO_FLOWQ, L_RCW, EPSN0 + 7, why))
		return -1;
	if (last_meta.msg_len != 1500)
		return snprintf(why, WHY_LEN, "LAST_IMM message length %u", last_meta.msg_len), -1;
	/* zero length: no key checked, nothing written */
	mrs_reset();
	wspec(&s, L_RCW, XHCA_OP_WRITE_ONLY, EPSN0 + 7, 9, 0xdead, 0, 0);
	s.reth_rkey = 0xffffffff;
	if (step(&s, XHCA_R_PLACED, L_RCW, EPSN0 + 8, why) || hm_only(0, NULL, 0, why))
		return -1;
	/* UC too */
	wspec(&s, L_UCW, XHCA_OP_WRITE_ONLY, EPSN0, MR_PRE, PRE_IOVA + 4000, 300, 300);
	return step(&s, XHCA_R_PLACED, L_UCW, EPSN0 + 1, why) ||
	       hm_only(PRE_BASE + 4000, want, 300, why);
}

/* A region that is not pre-translated: xhcad places it; xhca_rx writes
 * nothing and sends the frame on. */
int seq_write_slow(char *why)
{
	struct xhca_pkt_spec s;

	if (qps_reset())
		return -1;
	mrs_reset();
	wspec(&s, L_RCW, XHCA_OP_WRITE_FIRST, EPSN0, MR_SLOW, 0x200000 + 10, 2048, 1024);
	if (step(&s, XHCA_R_TO_XLATE, L_RCW, EPSN0 + 1, why) || hm_only(0, NULL, 0, why))
		return -1;
	if (last_meta.payload_len != 1024 || (last_meta.flags & XHCA_MF_PLACED))
		return snprintf(why, WHY_LEN, "metadata of a slow-path frame"), -1;
	if (rx_word(L_RCW) & XHCA_RXPSN_PRETX)
		return snprintf(why, WHY_LEN, "the cursor says pre-translated"), -1;
	/* a duplicate inside it names the ePSN: xhcad rewinds into it to a
	 * packet, never before one acknowledged */
	spec_to(&s, RC_SEND, L_RCW, EPSN0 - 1);
	if (step(&s, XHCA_R_DUP_TO_FLOWQ, L_RCW, EPSN0 + 1, why) ||
	    last_meta.msg_len != EPSN0 + 1)
		return snprintf(why, WHY_LEN, "duplicate inside a slow-path WRITE: 0x%x, want the "
				"ePSN 0x%x", last_meta.msg_len, EPSN0 + 1), -1;
	wspec(&s, L_RCW, XHCA_OP_WRITE_LAST, EPSN0 + 1, 0, 0, 0, 1024);
	return step(&s, XHCA_R_TO_XLATE, L_RCW, EPSN0 + 2, why) || hm_only(0, NULL, 0, why);
}

/* Every R_Key and length failure: its own reason, nothing written, the RC
 * QP in the error state (and xhcad told), a UC message dropped. */
/* What an error depends on: a duplicate's is none, an RC message cut short
 * moves the QP to the error state, a UC one only drops the message. */
static int write_errors_sequence(char *why)
{
	struct xhca_pkt_spec s;

	/* A duplicate with a bad R_Key is a duplicate: no error. */
	if (qps_reset())
		return -1;
	mrs_reset();
	wspec(&s, L_RCW, XHCA_OP_WRITE_ONLY, EPSN0 - 1, 9, 0, 16, 16);
	if (step(&s, XHCA_R_DUP_TO_FLOWQ, L_RCW, EPSN0, why) || (rx_word(L_RCW) & XHCA_RXPSN_ERR))
		return -1;
	/* An RC message cut short by another one. */
	wspec(&s, L_RCW, XHCA_OP_WRITE_FIRST, EPSN0, MR_PRE, PRE_IOVA, 2048, 1024);
	if (step(&s, XHCA_R_PLACED, L_RCW, EPSN0 + 1, why))
		return -1;
	spec_to(&s, RC_SEND, L_RCW, EPSN0 + 1);
	if (step(&s, XHCA_R_DROP_WRITE_SEQ, L_RCW, -1, why) || !(rx_word(L_RCW) & XHCA_RXPSN_ERR))
		return -1;
	/* UC: a bad key drops the message, quietly; the next one is placed. */
	mrs_reset();
	wspec(&s, L_UCW, XHCA_OP_WRITE_FIRST, EPSN0, MR_PRE, PRE_IOVA, 2048, 1024);
	s.reth_rkey = 1 << 8 | 0x77;
	if (step(&s, XHCA_R_DROP_MR_KEY, L_UCW, -1, why) || (rx_word(L_UCW) & XHCA_RXPSN_ERR))
		return -1;
	wspec(&s, L_UCW, XHCA_OP_WRITE_LAST, EPSN0 + 1, 0, 0, 0, 1024);
	if (step(&s, XHCA_R_DROP_UC_GAP, L_UCW, -1, why) || hm_only(0, NULL, 0, why))
		return -1;
	wspec(&s, L_UCW, XHCA_OP_WRITE_ONLY, EPSN0 + 2, MR_PRE, PRE_IOVA, 4, 4);
	return step(&s, XHCA_R_PLACED, L_UCW, EPSN0 + 3, why);
}

int seq_write_errors(char *why)
{
	static const struct {
		const char *name;
		__u8 op;
		__u32 mr;
		__u32 rkey;	/* 0: the MR's */
		__u64 va;
		__u32 dma, payload;
		int reason;
		__u8 qp_access;	/* the QP's remote access (0: never set, any) */
	} cases[] = {
		{ "no such MR", XHCA_OP_WRITE_ONLY, 9, 0, 0x10000, 16, 16, XHCA_R_DROP_MR_RKEY },
		{ "MR index 0", XHCA_OP_WRITE_ONLY, 0, 0x11, 0x10000, 16, 16, XHCA_R_DROP_MR_RKEY },
		{ "stale key byte", XHCA_OP_WRITE_ONLY, MR_PRE, 1 << 8 | 0x99, PRE_IOVA, 16, 16,
		  XHCA_R_DROP_MR_KEY },
		{ "other PD", XHCA_OP_WRITE_ONLY, MR_OTHERPD, 0, 0x300000, 16, 16, XHCA_R_DROP_MR_PD },
		{ "no remote write", XHCA_OP_WRITE_ONLY, MR_RONLY, 0, 0x400000, 16, 16,
		  XHCA_R_DROP_MR_ACCESS },
		{ "type 2 memory window bound through another QP", XHCA_OP_WRITE_ONLY, MR_MW_QP, 0,
		  0x500000, 16, 16, XHCA_R_DROP_MW_QP },
		{ "before the region", XHCA_OP_WRITE_ONLY, MR_PRE, 0, PRE_IOVA - 1, 16, 16,
		  XHCA_R_DROP_MR_BOUNDS },
		{ "past its end", XHCA_OP_WRITE_ONLY, MR_PRE, 0, PRE_IOVA + PRE_LEN - 15, 16, 16,
		  XHCA_R_DROP_MR_BOUNDS },
		{ "message past its end (FIRST)", XHCA_OP_WRITE_FIRST, MR_PRE, 0, PRE_IOVA, 0x10000,
		  1024, XHCA_R_DROP_MR_BOUNDS },
		{ "VA that wraps 2^64", XHCA_OP_WRITE_ONLY, MR_PRE, 0, 0xfffffffffffffff0ull, 32, 32,
		  XHCA_R_DROP_MR_BOUNDS },
		{ "ONLY shorter than its DMA length", XHCA_OP_WRITE_ONLY, MR_PRE, 0, PRE_IOVA, 100, 50,
		  XHCA_R_DROP_WRITE_LEN },
		{ "FIRST not one MTU", XHCA_OP_WRITE_FIRST, MR_PRE, 0, PRE_IOVA, 4000, 1000,
		  XHCA_R_DROP_WRITE_LEN },
		{ "DMA length over 2^31", XHCA_OP_WRITE_FIRST, MR_PRE, 0, PRE_IOVA, 0x80000001u, 1024,
		  XHCA_R_DROP_WRITE_LEN },
		{ "MIDDLE with no WRITE in progress", XHCA_OP_WRITE_MIDDLE, 0, 0, 0, 0, 1024,
		  XHCA_R_DROP_WRITE_SEQ },
		{ "READ from a write-only region", XHCA_OP_READ_REQ, MR_SLOW, 0, 0x200000, 64, 0,
		  XHCA_R_DROP_MR_ACCESS },
		{ "ATOMIC not 8-byte aligned", XHCA_OP_FETCH_ADD, MR_PRE, 0, PRE_IOVA + 4, 8, 0,
		  XHCA_R_DROP_ATOMIC_ALIGN },
		/* ATOMIC WRITE (IBA 1.5): 8 bytes, aligned, remote write */
		{ "ATOMIC WRITE not 8-byte aligned", XHCA_OP_ATOMIC_WRITE, MR_PRE, 0, PRE_IOVA + 4, 8,
		  8, XHCA_R_DROP_ATOMIC_ALIGN },
		{ "ATOMIC WRITE of 16 bytes", XHCA_OP_ATOMIC_WRITE, MR_PRE, 0, PRE_IOVA, 16, 16,
		  XHCA_R_DROP_WRITE_LEN },
		{ "ATOMIC WRITE of 8 bytes saying 16", XHCA_OP_ATOMIC_WRITE, MR_PRE, 0, PRE_IOVA, 16, 8,
		  XHCA_R_DROP_WRITE_LEN },
		{ "ATOMIC WRITE to a region without remote write", XHCA_OP_ATOMIC_WRITE, MR_RONLY, 0,
		  0x400000, 8, 8, XHCA_R_DROP_MR_ACCESS },
		{ "ATOMIC WRITE to a QP without remote write", XHCA_OP_ATOMIC_WRITE, MR_PRE, 0, PRE_IOVA,
		  8, 8, XHCA_R_DROP_QP_ACCESS, XHCA_QP_ACCESS_SET | XHCA_ACCESS_REMOTE_READ |
		  XHCA_ACCESS_REMOTE_ATOMIC },
		/* the QP's own remote access (verbs' qp_access_flags), before the
		 * region's: each request needs its own bit, zero lengths too */
		{ "WRITE to a QP without remote write", XHCA_OP_WRITE_ONLY, MR_PRE, 0, PRE_IOVA, 16,
		  16, XHCA_R_DROP_QP_ACCESS, XHCA_QP_ACCESS_SET | XHCA_ACCESS_REMOTE_READ |
		  XHCA_ACCESS_REMOTE_ATOMIC },
		{ "zero-length WRITE to a QP without remote write", XHCA_OP_WRITE_ONLY, MR_PRE, 0, 0, 0,
		  0, XHCA_R_DROP_QP_ACCESS, XHCA_QP_ACCESS_SET },
		{ "READ from a QP without remote read", XHCA_OP_READ_REQ, MR_PRE, 0, PRE_IOVA, 64, 0,
		  XHCA_R_DROP_QP_ACCESS, XHCA_QP_ACCESS_SET | XHCA_ACCESS_REMOTE_WRITE |
		  XHCA_ACCESS_REMOTE_ATOMIC },
		{ "ATOMIC to a QP without remote atomics", XHCA_OP_FETCH_ADD, MR_PRE, 0, PRE_IOVA, 8,
		  0, XHCA_R_DROP_QP_ACCESS, XHCA_QP_ACCESS_SET | XHCA_ACCESS_REMOTE_WRITE |
		  XHCA_ACCESS_REMOTE_READ },
		{ "WRITE to a region without remote write, the QP's allowing it",
		  XHCA_OP_WRITE_ONLY, MR_RONLY, 0, 0x400000, 16, 16, XHCA_R_DROP_MR_ACCESS,
		  XHCA_QP_ACCESS_SET | XHCA_ACCESS_REMOTE_WRITE },
	};
	struct ring_buffer *rb = ring_buffer__new(bpf_map__fd(E.skel->maps.xhca_events), on_event,
						  NULL, NULL);
	struct xhca_pkt_spec s;
	int rc_errors = 0, err = 0;

	if (!rb)
		return snprintf(why, WHY_LEN, "ring buffer: %s", strerror(errno)), -1;
	ring_buffer__consume(rb);
	events_seen = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]) && !err; i++) {
		if (qps_reset())
			return -1;
		mrs_reset();
		if (cases[i].qp_access) {
			struct xhca_qp_ctx c;

			xhca_qpctx_load(&E.ctxm[L_RCW], &c);
			c.access = cases[i].qp_access;
			xhca_qpctx_store(&E.ctxm[L_RCW], &c, 0);
		}
		wspec(&s, L_RCW, cases[i].op, EPSN0, cases[i].mr, cases[i].va, cases[i].dma,
		      cases[i].payload);
		if (cases[i].rkey)
			s.reth_rkey = cases[i].rkey;
		s.atomic_rkey = s.reth_rkey;
		s.atomic_va = cases[i].va;
		err = step(&s, cases[i].reason, L_RCW, EPSN0, why) || hm_only(0, NULL, 0, why);
		if (!err && !(rx_word(L_RCW) & XHCA_RXPSN_ERR))
			err = snprintf(why, WHY_LEN, "the RC QP is not in error") > 0;
		rc_errors++;
		/* an RC QP in error takes nothing more */
		if (!err) {
			wspec(&s, L_RCW, XHCA_OP_WRITE_ONLY, EPSN0, MR_PRE, PRE_IOVA, 8, 8);
			err = step(&s, XHCA_R_DROP_QP_STATE, L_RCW, -1, why) ||
			      hm_only(0, NULL, 0, why);
		}
		if (err) {
			size_t n = strlen(why);

			snprintf(why + n, WHY_LEN - n, " (%s)", cases[i].name);
		}
	}
	if (!err) {
		ring_buffer__consume(rb);
		if (events_seen != rc_errors)
			err = snprintf(why, WHY_LEN, "%d error events for %d RC errors", events_seen,
				       rc_errors) > 0;
	}
	ring_buffer__free(rb);
	if (err)
		return -1;
	return write_errors_sequence(why);
}

/* The region is deregistered (its generation moves) in the middle of a
 * WRITE: the rest of the message lands nowhere. */
int seq_write_invalidated(char *why)
{
	static __u8 want[1024];
	struct xhca_pkt_spec s;

	if (qps_reset())
		return -1;
	mrs_reset();
	for (int i = 0; i < 1024; i++)
		want[i] = (__u8)i;
	wspec(&s, L_RCW, XHCA_OP_WRITE_FIRST, EPSN0, MR_PRE, PRE_IOVA, 3072, 1024);
	if (step(&s, XHCA_R_PLACED, L_RCW, EPSN0 + 1, why))
		return -1;
	/* invalidate: not valid, new generation; then registered again */
	mr_put(MR_PRE, 7, XHCA_ACCESS_REMOTE_WRITE, 1, PRE_IOVA, PRE_LEN, PRE_BASE, 2);
	wspec(&s, L_RCW, XHCA_OP_WRITE_MIDDLE, EPSN0 + 1, 0, 0, 0, 1024);
	if (step(&s, XHCA_R_DROP_WRITE_SEQ, L_RCW, -1, why))
		return -1;
	return hm_only(PRE_BASE, want, 1024, why);
}

/* A region whose block of host memory is not there (xhcad drops a block
 * only after its regions: a region left over would be its mistake): the
 * WRITE lands nowhere, counted as drop_mr_bounds. */
int seq_write_no_block(char *why)
{
	struct xhca_pkt_spec s;

	if (qps_reset())
		return -1;
	mrs_reset();
	wspec(&s, L_UCW, XHCA_OP_WRITE_ONLY, EPSN0, MR_NOBLOCK, 0x600000, 16, 16);
	return step(&s, XHCA_R_DROP_MR_BOUNDS, L_UCW, -1, why) || hm_only(0, NULL, 0, why);
}

/* IBA 9.7.5.1.2 (RXE's check_op_seq): a multi-packet SEND or WRITE in
 * progress takes only its own MIDDLE/LAST, and a MIDDLE/LAST needs its
 * FIRST. RC: its own reason, the QP to the error state (xhcad NAKs invalid
 * request), nothing executed or placed; UC: dropped quietly until the next
 * FIRST/ONLY, which starts clean (and abandons a SEND in progress). */

enum { OPS_NONE = 0xff };
static const struct {
	const char *name;
	__u8 first, next; /* OPS_NONE: no first packet */
	int reason;
} op_seq_cases[] = {
	{ "SEND FIRST, WRITE ONLY", XHCA_OP_SEND_FIRST, XHCA_OP_WRITE_ONLY, XHCA_R_DROP_SEND_SEQ },
	{ "SEND FIRST, WRITE FIRST", XHCA_OP_SEND_FIRST, XHCA_OP_WRITE_FIRST, XHCA_R_DROP_SEND_SEQ },
	{ "SEND FIRST, SEND ONLY", XHCA_OP_SEND_FIRST, XHCA_OP_SEND_ONLY, XHCA_R_DROP_SEND_SEQ },
	{ "SEND FIRST, SEND FIRST", XHCA_OP_SEND_FIRST, XHCA_OP_SEND_FIRST, XHCA_R_DROP_SEND_SEQ },
	{ "SEND FIRST, READ", XHCA_OP_SEND_FIRST, XHCA_OP_READ_REQ, XHCA_R_DROP_SEND_SEQ },
	{ "SEND FIRST, FETCH_ADD", XHCA_OP_SEND_FIRST, XHCA_OP_FETCH_ADD, XHCA_R_DROP_SEND_SEQ },
	{ "SEND FIRST, WRITE LAST", XHCA_OP_SEND_FIRST, XHCA_OP_WRITE_LAST, XHCA_R_DROP_WRITE_SEQ },
	{ "WRITE FIRST, SEND ONLY", XHCA_OP_WRITE_FIRST, XHCA_OP_SEND_ONLY, XHCA_R_DROP_WRITE_SEQ },
	{ "WRITE FIRST, SEND MIDDLE", XHCA_OP_WRITE_FIRST, XHCA_OP_SEND_MIDDLE,
	  XHCA_R_DROP_WRITE_SEQ },
	{ "SEND MIDDLE, no FIRST", OPS_NONE, XHCA_OP_SEND_MIDDLE, XHCA_R_DROP_SEND_SEQ },
	{ "SEND LAST, no FIRST", OPS_NONE, XHCA_OP_SEND_LAST, XHCA_R_DROP_SEND_SEQ },
	{ "SEND LAST with invalidate, no FIRST", OPS_NONE, XHCA_OP_SEND_LAST_INV,
	  XHCA_R_DROP_SEND_SEQ },
	{ "WRITE LAST with immediate, no FIRST", OPS_NONE, XHCA_OP_WRITE_LAST_IMM,
	  XHCA_R_DROP_WRITE_SEQ },
};

static int is_write_op_(__u8 op)
{
	return op >= XHCA_OP_WRITE_FIRST && op <= XHCA_OP_WRITE_ONLY_IMM;
}

/* UC: a FIRST/ONLY after a FIRST abandons that message and starts clean. */
static int op_seq_uc_start(__u32 l, __u8 next, struct xhca_pkt_spec *s, char *why)
{
	if (step(s, is_write_op_(next) ? XHCA_R_PLACED : XHCA_R_TO_FLOWQ, l, -1, why))
		return -1;
	if ((rx_word(l) & (XHCA_RXPSN_SEND | XHCA_RXPSN_UC_DROP)) !=
	    (next == XHCA_OP_SEND_FIRST ? XHCA_RXPSN_SEND : 0))
		return snprintf(why, WHY_LEN, "UC state 0x%08x after", rx_word(l)), -1;
	return 0;
}

/* One case on the RC (uc 0) or UC write-target QP; 1: not for UC. */
static int op_seq_case(size_t i, int uc, char *why)
{
	__u32 l = uc ? L_UCW : L_RCW, psn = EPSN0;
	__u8 first = op_seq_cases[i].first, next = op_seq_cases[i].next;
	int w1 = first == XHCA_OP_WRITE_FIRST, want = op_seq_cases[i].reason;
	struct xhca_pkt_spec s;

	/* UC has no READ, ATOMIC or SEND with invalidate */
	if (uc && !(xhca_opinfo_tbl[XHCA_OPC_UC | next].flags & XHCA_O_KNOWN))
		return 1;
	if (qps_reset())
		return -1;
	mrs_reset();
	if (first != OPS_NONE) {
		wspec(&s, l, first, psn++, MR_PRE, PRE_IOVA, 2048, 1024);
		if (step(&s, w1 ? XHCA_R_PLACED : XHCA_R_TO_FLOWQ, l, -1, why))
			return -1;
	}
	if (next == XHCA_OP_WRITE_FIRST)
		wspec(&s, l, next, psn, MR_PRE, PRE_IOVA, 2048, 1024);
	else
		wspec(&s, l, next, psn, MR_PRE, PRE_IOVA, 8, 8);
	s.atomic_rkey = s.reth_rkey;
	s.atomic_va = PRE_IOVA;
	if (uc && first != OPS_NONE && (xhca_opinfo_tbl[XHCA_OPC_UC | next].flags & XHCA_O_START))
		return op_seq_uc_start(l, next, &s, why);
	/* UC lets a new message cut a WRITE short: a SEND's MIDDLE is then
	 * one without its FIRST */
	if (uc && w1 && next == XHCA_OP_SEND_MIDDLE)
		want = XHCA_R_DROP_SEND_SEQ;
	if (step(&s, want, l, -1, why))
		return -1;
	if (!uc && !(rx_word(l) & XHCA_RXPSN_ERR))
		return snprintf(why, WHY_LEN, "the RC QP is not in error"), -1;
	/* nothing placed (after a WRITE FIRST, its own bytes are) */
	if (!w1 && hm_only(0, NULL, 0, why))
		return -1;
	if (uc) {
		/* the next FIRST/ONLY starts clean, at any PSN */
		wspec(&s, l, XHCA_OP_SEND_ONLY, psn + 1, 0, 0, 0, 16);
		return step(&s, XHCA_R_TO_FLOWQ, l, psn + 2, why);
	}
	return 0;
}

/* A whole SEND in three packets: in progress until its LAST, then a WRITE
 * is placed. */
static int op_seq_whole_send(char *why)
{
	struct xhca_pkt_spec s;

	if (qps_reset())
		return -1;
	mrs_reset();
	wspec(&s, L_RCW, XHCA_OP_SEND_FIRST, EPSN0, 0, 0, 0, 1024);
	if (step(&s, XHCA_R_TO_FLOWQ, L_RCW, EPSN0 + 1, why))
		return -1;
	if (!(rx_word(L_RCW) & XHCA_RXPSN_SEND))
		return snprintf(why, WHY_LEN, "no SEND in progress after its FIRST"), -1;
	wspec(&s, L_RCW, XHCA_OP_SEND_MIDDLE, EPSN0 + 1, 0, 0, 0, 1024);
	if (step(&s, XHCA_R_TO_FLOWQ, L_RCW, EPSN0 + 2, why))
		return -1;
	wspec(&s, L_RCW, XHCA_OP_SEND_LAST, EPSN0 + 2, 0, 0, 0, 10);
	if (step(&s, XHCA_R_TO_FLOWQ, L_RCW, EPSN0 + 3, why))
		return -1;
	if (rx_word(L_RCW) & XHCA_RXPSN_SEND)
		return snprintf(why, WHY_LEN, "a SEND still in progress after its LAST"), -1;
	wspec(&s, L_RCW, XHCA_OP_WRITE_ONLY, EPSN0 + 3, MR_PRE, PRE_IOVA, 8, 8);
	return step(&s, XHCA_R_PLACED, L_RCW, EPSN0 + 4, why);
}

int seq_op_sequence(char *why)
{
	for (size_t i = 0; i < sizeof(op_seq_cases) / sizeof(op_seq_cases[0]); i++) {
		for (int uc = 0; uc < 2; uc++) {
			if (op_seq_case(i, uc, why) < 0) {
				size_t n = strlen(why);

				snprintf(why + n, WHY_LEN - n, " (%s, %s)", op_seq_cases[i].name,
					 uc ? "UC" : "RC");
				return -1;
			}
		}
	}
	return op_seq_whole_send(why);
}

/* The responder's side here: a duplicate goes to xhcad (for its re-ACK or
 * the saved response) with the ePSN and MSN in its metadata, and changes
 * nothing; the first packet of a gap goes for the sequence NAK, the rest
 * of the gap is silent until the expected PSN comes; a placed WRITE whose
 * ACK is due (AckReq, or every ack_every packets) goes on to xhcad too. */
static int ack_nak_gap_ends(char *why)
{
	struct xhca_pkt_spec s;

	/* a duplicate inside the gap is still answered */
	spec_to(&s, RC_SEND, L_RCW, EPSN0 - 1);
	if (step(&s, XHCA_R_DUP_TO_FLOWQ, L_RCW, EPSN0, why))
		return -1;
	/* the expected PSN ends the gap; the next gap is NAKed again */
	spec_to(&s, RC_SEND, L_RCW, EPSN0);
	if (step(&s, XHCA_R_TO_FLOWQ, L_RCW, EPSN0 + 1, why) || (rx_word(L_RCW) & XHCA_RXPSN_NAKED))
		return snprintf(why, WHY_LEN, "ePSN: NAKED still set"), -1;
	spec_to(&s, RC_SEND, L_RCW, EPSN0 + 5);
	if (step(&s, XHCA_R_SEQ_NAK_TO_FLOWQ, L_RCW, EPSN0 + 1, why))
		return -1;
	return 0;
}

static int ack_nak_writes(char *why)
{
	struct xhca_pkt_spec s;
	struct xhca_qp_ctx c;

	/* ACKs of WRITEs placed here: at AckReq, and every 3rd packet */
	if (qps_reset())
		return -1;
	xhca_qpctx_load(&E.ctxm[L_RCW], &c);
	c.ack_every = 3;
	xhca_qpctx_store(&E.ctxm[L_RCW], &c, 0);
	E.ctxm[L_RCW].unacked = 0;
	for (__u32 i = 0; i < 7; i++) {
		int want = i == 2 || i == 5 || i == 6 ? XHCA_R_PLACED_ACK : XHCA_R_PLACED;

		wspec(&s, L_RCW, XHCA_OP_WRITE_ONLY, EPSN0 + i, MR_PRE, PRE_IOVA, 16, 16);
		s.ackreq = i == 6;
		if (step(&s, want, L_RCW, EPSN0 + i + 1, why))
			return -1;
		if (want == XHCA_R_PLACED_ACK &&
		    (!(last_meta.flags & XHCA_MF_ACKREQ) || !(last_meta.flags & XHCA_MF_PLACED) ||
		     last_meta.msg_len != EPSN0 + i || last_meta.psn != EPSN0 + i))
			return snprintf(why, WHY_LEN, "packet %u: meta flags 0x%x first PSN 0x%x", i,
					last_meta.flags, last_meta.msg_len), -1;
	}
	/* a WRITE whose ACK is due, its flow queue's gate closed: placed all
	 * the same, only its ACK waits for the next one */
	{
		struct xhca_flowq q;

		if (qps_reset() || fq_get(FQ_SOCK, &q) || fq_set(FQ_SOCK, 1, 0, q.enq - 1))
			return snprintf(why, WHY_LEN, "gate setup"), -1;
		E.ctxm[L_RCW].unacked = 0;
		wspec(&s, L_RCW, XHCA_OP_WRITE_ONLY, EPSN0, MR_PRE, PRE_IOVA, 16, 16);
		s.ackreq = 1;
		if (step(&s, XHCA_R_PLACED, L_RCW, EPSN0 + 1, why) || fq_get(FQ_SOCK, &q) ||
		    fq_set(FQ_SOCK, 0, 0, q.enq))
			return -1;
		if (E.ctxm[L_RCW].unacked != 1)
			return snprintf(why, WHY_LEN, "unacked %u after an ACK that could not go, want 1",
					E.ctxm[L_RCW].unacked), -1;
	}
	return 0;
}

static int ack_nak_in_write(char *why)
{
	struct xhca_pkt_spec s;
	struct xhca_qp_ctx c;

	/* inside a WRITE placed here: the meta names its FIRST (for
	 * xhcad's rewind of its cursor), a duplicate meanwhile the ePSN
	 * (every packet before it placed: xhcad may acknowledge them) */
	if (qps_reset())
		return -1;
	xhca_qpctx_load(&E.ctxm[L_RCW], &c);
	c.ack_every = 0;
	xhca_qpctx_store(&E.ctxm[L_RCW], &c, 0);
	wspec(&s, L_RCW, XHCA_OP_WRITE_FIRST, EPSN0, MR_PRE, PRE_IOVA, 3072, 1024);
	if (step(&s, XHCA_R_PLACED, L_RCW, EPSN0 + 1, why))
		return -1;
	wspec(&s, L_RCW, XHCA_OP_WRITE_MIDDLE, EPSN0 + 1, MR_PRE, PRE_IOVA, 0, 1024);
	s.ackreq = 1;
	if (step(&s, XHCA_R_PLACED_ACK, L_RCW, EPSN0 + 2, why) || last_meta.msg_len != EPSN0)
		return snprintf(why, WHY_LEN, "MIDDLE's meta: first PSN 0x%x, want 0x%x",
				last_meta.msg_len, EPSN0), -1;
	spec_to(&s, RC_SEND, L_RCW, EPSN0 - 1);
	if (step(&s, XHCA_R_DUP_TO_FLOWQ, L_RCW, EPSN0 + 2, why) || last_meta.msg_len != EPSN0 + 2)
		return snprintf(why, WHY_LEN, "duplicate mid-WRITE: 0x%x, want the ePSN 0x%x",
				last_meta.msg_len, EPSN0 + 2), -1;
	wspec(&s, L_RCW, XHCA_OP_WRITE_LAST, EPSN0 + 2, MR_PRE, PRE_IOVA, 0, 1024);
	if (step(&s, XHCA_R_PLACED, L_RCW, EPSN0 + 3, why))
		return -1;
	spec_to(&s, RC_SEND, L_RCW, EPSN0 - 1);
	if (step(&s, XHCA_R_DUP_TO_FLOWQ, L_RCW, EPSN0 + 3, why) || last_meta.msg_len != EPSN0 + 3)
		return snprintf(why, WHY_LEN, "duplicate after the WRITE: 0x%x, want ePSN",
				last_meta.msg_len), -1;
	xhca_qpctx_load(&E.ctxm[L_RCW], &c);
	c.ack_every = 3;
	xhca_qpctx_store(&E.ctxm[L_RCW], &c, 0);
	E.ctxm[L_RCW].unacked = 0;
	/* a SEND whose ACK is due by count carries AckReq in its meta */
	for (__u32 i = 0; i < 3; i++) {
		spec_to(&s, RC_SEND, L_RCW, EPSN0 + 3 + i);
		if (step(&s, XHCA_R_TO_FLOWQ, L_RCW, EPSN0 + 4 + i, why))
			return -1;
		if (!!(last_meta.flags & XHCA_MF_ACKREQ) != (i == 2))
			return snprintf(why, WHY_LEN, "SEND %u of 3: AckReq %s in its meta", i + 1,
					i == 2 ? "not" : "set"), -1;
	}
	return 0;
}

int seq_ack_nak(char *why)
{
	struct xhca_pkt_spec s;

	if (qps_reset())
		return snprintf(why, WHY_LEN, "setup"), -1;
	mrs_reset();
	E.ctxm[L_RCW].msn = 5;
	spec_to(&s, RC_SEND, L_RCW, EPSN0 - 3);
	if (step(&s, XHCA_R_DUP_TO_FLOWQ, L_RCW, EPSN0, why))
		return -1;
	if (last_meta.reason != XHCA_R_DUP_TO_FLOWQ || last_meta.msg_len != EPSN0 ||
	    last_meta.csn != 5 || last_meta.psn != EPSN0 - 3 || !(last_meta.flags & XHCA_MF_CSN))
		return snprintf(why, WHY_LEN, "duplicate's meta: reason %u ePSN 0x%x MSN %u flags 0x%x",
				last_meta.reason, last_meta.msg_len, last_meta.csn,
				last_meta.flags), -1;
	/* a gap: the first goes, with the ePSN; then silence */
	spec_to(&s, RC_SEND, L_RCW, EPSN0 + 2);
	if (step(&s, XHCA_R_SEQ_NAK_TO_FLOWQ, L_RCW, EPSN0, why) || !(rx_word(L_RCW) & XHCA_RXPSN_NAKED))
		return snprintf(why, WHY_LEN, "gap: NAKED not set"), -1;
	if (last_meta.msg_len != EPSN0 || last_meta.psn != EPSN0 + 2)
		return snprintf(why, WHY_LEN, "gap's meta: ePSN 0x%x psn 0x%x", last_meta.msg_len,
				last_meta.psn), -1;
	spec_to(&s, RC_SEND, L_RCW, EPSN0 + 3);
	if (step(&s, XHCA_R_DROP_PSN_OOS, L_RCW, EPSN0, why))
		return -1;
	return ack_nak_gap_ends(why) ||
	       ack_nak_writes(why) ||
	       ack_nak_in_write(why) ? -1 : 0;
}


/* READ and ATOMIC that pass the checks go to the flow queue (xhcad holds
 * them for the proxy); a READ costs its response count of PSNs. */
int seq_read_atomic(char *why)
{
	struct xhca_pkt_spec s;
	__u32 msn0;

	if (qps_reset())
		return -1;
	mrs_reset();
	wspec(&s, L_RCW, XHCA_OP_READ_REQ, EPSN0, MR_PRE, PRE_IOVA + 100, 3000, 0);
	if (step(&s, XHCA_R_TO_FLOWQ, L_RCW, EPSN0 + 3, why))
		return -1;
	if (E.ctxm[L_RCW].msn != 1)
		return snprintf(why, WHY_LEN, "MSN %u after a READ, want 1", E.ctxm[L_RCW].msn), -1;
	wspec(&s, L_RCW, XHCA_OP_CMP_SWAP, EPSN0 + 3, MR_PRE, 0, 0, 0);
	s.atomic_rkey = rkey_of(MR_PRE);
	s.atomic_va = PRE_IOVA + 8;
	if (step(&s, XHCA_R_TO_FLOWQ, L_RCW, EPSN0 + 4, why))
		return -1;
	/* a zero-length READ checks no key either */
	wspec(&s, L_RCW, XHCA_OP_READ_REQ, EPSN0 + 4, 9, 0, 0, 0);
	s.reth_rkey = 0;
	if (step(&s, XHCA_R_TO_FLOWQ, L_RCW, EPSN0 + 5, why) || hm_only(0, NULL, 0, why))
		return -1;
	/* the responder's MSN: one per request, at its end (a WRITE's LAST) */
	msn0 = E.ctxm[L_RCW].msn;
	wspec(&s, L_RCW, XHCA_OP_WRITE_FIRST, EPSN0 + 5, MR_PRE, PRE_IOVA, 2048, 1024);
	if (step(&s, XHCA_R_PLACED, L_RCW, EPSN0 + 6, why))
		return -1;
	if (E.ctxm[L_RCW].msn != msn0)
		return snprintf(why, WHY_LEN, "MSN moved at a FIRST"), -1;
	wspec(&s, L_RCW, XHCA_OP_WRITE_LAST, EPSN0 + 6, MR_PRE, 0, 0, 1024);
	if (step(&s, XHCA_R_PLACED, L_RCW, EPSN0 + 7, why))
		return -1;
	if (E.ctxm[L_RCW].msn != msn0 + 1)
		return snprintf(why, WHY_LEN, "MSN %u after a whole WRITE, want %u",
				E.ctxm[L_RCW].msn, msn0 + 1), -1;
	return 0;
}

/* xhcad --icrc first (XHCA_QPF_ICRC_FIRST on the QP): xhca_rx places none
 * of the QP's WRITEs, pre-translated region or not; each goes to xhcad,
 * which checks the ICRC first. Not a byte of host memory moves here. */
int seq_write_icrc_first(char *why)
{
	struct xhca_pkt_spec s;
	struct xhca_qp_ctx c;
	int err;

	if (qps_reset())
		return -1;
	mrs_reset();
	xhca_qpctx_load(&E.ctxm[L_RCW], &c);
	c.flags |= XHCA_QPF_ICRC_FIRST;
	xhca_qpctx_store(&E.ctxm[L_RCW], &c, 0);
	wspec(&s, L_RCW, XHCA_OP_WRITE_ONLY, EPSN0, MR_PRE, PRE_IOVA, 64, 64);
	err = step(&s, XHCA_R_TO_XLATE, L_RCW, EPSN0 + 1, why) || hm_only(0, NULL, 0, why);
	wspec(&s, L_RCW, XHCA_OP_WRITE_FIRST, EPSN0 + 1, MR_PRE, PRE_IOVA, 2048, 1024);
	err = err || step(&s, XHCA_R_TO_XLATE, L_RCW, EPSN0 + 2, why);
	wspec(&s, L_RCW, XHCA_OP_WRITE_LAST, EPSN0 + 2, MR_PRE, 0, 0, 1024);
	err = err || step(&s, XHCA_R_TO_XLATE, L_RCW, EPSN0 + 3, why) || hm_only(0, NULL, 0, why);
	/* a zero-length WRITE moves no byte: xhca_rx still takes it alone */
	wspec(&s, L_RCW, XHCA_OP_WRITE_ONLY, EPSN0 + 3, MR_PRE, PRE_IOVA, 0, 0);
	err = err || step(&s, XHCA_R_PLACED, L_RCW, EPSN0 + 4, why);
	qps_reset();
	return err ? -1 : 0;
}

/* Without bpf_dynptr_copy (Linux < 6.15; xhca_no_kfuncs stands in): a WRITE
 * into a pre-translated region whose packets start at a multiple of 1 KiB in
 * their pages is placed here; one elsewhere goes whole to xhcad, its first
 * packet counted xlate_nocopy with to_xlate in its metadata, nothing written;
 * so does one of a path MTU under 1 KiB, even at a page's start. With the
 * kfunc again, such a WRITE is placed. */
int seq_write_nocopy(char *why)
{
	static __u8 want[2048];
	__u64 aligned = 4096 - 100; /* (PRE_BASE is 100 bytes into a page) */
	struct xhca_pkt_spec s;
	struct xhca_qp_ctx c;
	int err;

	if (qps_reset() || ctx_get(L_UCW, &c))
		return -1;
	c.mtu_shift = 8;
	xhca_qpctx_store(&E.ctxm[L_UCW], &c, 1);
	for (int i = 0; i < 2048; i++)
		want[i] = (__u8)(i * 7);
	mrs_reset();
	E.skel->bss->xhca_no_kfuncs = 1;
	wspec(&s, L_RCW, XHCA_OP_WRITE_FIRST, EPSN0, MR_PRE, PRE_IOVA + aligned + 1024, 2048, 1024);
	s.payload = want;
	err = step(&s, XHCA_R_PLACED, L_RCW, EPSN0 + 1, why);
	wspec(&s, L_RCW, XHCA_OP_WRITE_LAST, EPSN0 + 1, 0, 0, 0, 1024);
	s.payload = want + 1024;
	err = err || step(&s, XHCA_R_PLACED, L_RCW, EPSN0 + 2, why) ||
	      hm_only(PRE_BASE + aligned + 1024, want, 2048, why);
	if (err)
		goto out;
	mrs_reset();
	wspec(&s, L_RCW, XHCA_OP_WRITE_FIRST, EPSN0 + 2, MR_PRE, PRE_IOVA + 8, 2048, 1024);
	err = step(&s, XHCA_R_XLATE_NOCOPY, L_RCW, EPSN0 + 3, why) || hm_only(0, NULL, 0, why);
	if (!err && (last_meta.reason != XHCA_R_TO_XLATE || last_meta.payload_len != 1024 ||
		     (rx_word(L_RCW) & XHCA_RXPSN_PRETX))) {
		snprintf(why, WHY_LEN, "xlate_nocopy: metadata reason %u, payload %u, cursor %s",
			 last_meta.reason, last_meta.payload_len,
			 (rx_word(L_RCW) & XHCA_RXPSN_PRETX) ? "pre-translated" : "not");
		err = -1;
	}
	wspec(&s, L_RCW, XHCA_OP_WRITE_LAST, EPSN0 + 3, 0, 0, 0, 1024);
	err = err || step(&s, XHCA_R_TO_XLATE, L_RCW, EPSN0 + 4, why) || hm_only(0, NULL, 0, why);
	wspec(&s, L_UCW, XHCA_OP_WRITE_ONLY, EPSN0, MR_PRE, PRE_IOVA + aligned, 200, 200);
	err = err || step(&s, XHCA_R_XLATE_NOCOPY, L_UCW, EPSN0 + 1, why) ||
	      hm_only(0, NULL, 0, why);
	if (err)
		goto out;
	E.skel->bss->xhca_no_kfuncs = 0;
	wspec(&s, L_UCW, XHCA_OP_WRITE_ONLY, EPSN0 + 1, MR_PRE, PRE_IOVA + aligned, 200, 200);
	s.payload = want;
	err = step(&s, XHCA_R_PLACED, L_UCW, EPSN0 + 2, why) ||
	      hm_only(PRE_BASE + aligned, want, 200, why);
out:
	E.skel->bss->xhca_no_kfuncs = 0;
	return err;
}
