/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca_rx sequences: the flow queues (metadata, the gate, no room).
 */
#include "rx.h"

/* A UD SEND to the host QP: redirected with the metadata block in front. */
int seq_flowq_meta(char *why)
{
	struct xhca_pkt_spec s;
	struct xhca_flowq q0, q1;
	__u64 t0 = 0;

	if (qps_reset() || fq_set(FQ_SOCK, 0, 0, 0) || fq_get(FQ_SOCK, &q0))
		return snprintf(why, WHY_LEN, "setup"), -1;
	{
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		t0 = (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
	}
	xhca_pkt_spec_init(&s, XHCA_OPC_UD | XHCA_OP_SEND_ONLY_IMM);
	s.dqpn = qps[L_UD_HOST].qpn;
	s.deth_qkey = UD_QKEY;
	s.psn = 0x123456;
	s.se = 1;
	s.ackreq = 1;
	s.payload_len = 77;
	if (step(&s, XHCA_R_TO_FLOWQ, L_UD_HOST, -1, why))
		return -1;
	if (last_meta.gqpn != s.dqpn || last_meta.lidx != L_UD_HOST || last_meta.gen != 10 ||
	    last_meta.psn != 0x123456 || last_meta.opcode != s.opcode ||
	    last_meta.flowq != FQ_SOCK || last_meta.reason != XHCA_R_TO_FLOWQ ||
	    last_meta.payload_off != 14 + 20 + 8 + 24 || last_meta.payload_len != 77 ||
	    last_meta.flags != (XHCA_MF_SE | XHCA_MF_ACKREQ) || last_meta.rx_ns < t0)
		return snprintf(why, WHY_LEN,
				"metadata: qpn 0x%x lidx %u gen %u psn 0x%x op 0x%x fq %u reason %u "
				"off %u len %u flags 0x%x", last_meta.gqpn, last_meta.lidx,
				last_meta.gen, last_meta.psn, last_meta.opcode, last_meta.flowq,
				last_meta.reason, last_meta.payload_off, last_meta.payload_len,
				last_meta.flags), -1;
	/* IPv6 and a VLAN tag move the payload and set the flag */
	s.ipv6 = 1;
	xhca_ip_parse("fd00::1", s.src_ip);
	xhca_ip_parse("fd00::2", s.dst_ip);
	s.nvlan = 1;
	s.se = s.ackreq = 0;
	if (step(&s, XHCA_R_TO_FLOWQ, L_UD_HOST, -1, why))
		return -1;
	if (last_meta.payload_off != 14 + 4 + 40 + 8 + 24 || last_meta.flags != XHCA_MF_IPV6)
		return snprintf(why, WHY_LEN, "IPv6 metadata: off %u flags 0x%x",
				last_meta.payload_off, last_meta.flags), -1;
	if (fq_get(FQ_SOCK, &q1) || q1.enq - q0.enq != 2)
		return snprintf(why, WHY_LEN, "enq moved by %llu, want 2",
				(unsigned long long)(q1.enq - q0.enq)), -1;
	/* an RC request whose QP was rewound before (rw_gen 5), none since:
	 * its time, not 1 (stale: rx_time) */
	E.ctxm[L_RCW].rw_gen = 5;
	xhca_pkt_spec_init(&s, XHCA_OPC_RC | XHCA_OP_SEND_ONLY);
	s.dqpn = qps[L_RCW].qpn;
	s.psn = EPSN0;
	s.payload_len = 8;
	if (step(&s, XHCA_R_TO_FLOWQ, L_RCW, EPSN0 + 1, why))
		return -1;
	if (last_meta.gqpn != s.dqpn || last_meta.rx_ns < t0)
		return snprintf(why, WHY_LEN, "RC metadata: qpn 0x%x rx_ns %llu", last_meta.gqpn,
				(unsigned long long)last_meta.rx_ns), -1;
	return 0;
}

/* Backpressure: above high the flow queue's packets are dropped early, until
 * its backlog is down to low; an RC packet so refused keeps its PSN. */
int seq_flowq_gate(char *why)
{
	struct xhca_pkt_spec s;
	struct xhca_flowq q;
	__u64 base;

	if (qps_reset() || fq_get(FQ_SOCK, &q))
		return snprintf(why, WHY_LEN, "setup"), -1;
	base = q.enq; /* backlog 0 */
	if (fq_set(FQ_SOCK, 3, 1, base))
		return -1;
	xhca_pkt_spec_init(&s, UD_SEND);
	s.dqpn = qps[L_UD_HOST].qpn;
	s.deth_qkey = UD_QKEY;
	for (int i = 0; i < 3; i++)
		if (step(&s, XHCA_R_TO_FLOWQ, L_UD_HOST, -1, why))
			return -1;
	for (int i = 0; i < 2; i++)
		if (step(&s, XHCA_R_DROP_FLOWQ_GATE, L_UD_HOST, -1, why))
			return -1;
	if (fq_get(FQ_SOCK, &q) || !q.gate || q.enq != base + 3)
		return snprintf(why, WHY_LEN, "gate %u enq +%llu", q.gate,
				(unsigned long long)(q.enq - base)), -1;
	/* backlog 2, above low: still closed */
	if (fq_set(FQ_SOCK, 3, 1, base + 1) || step(&s, XHCA_R_DROP_FLOWQ_GATE, L_UD_HOST, -1, why))
		return -1;
	/* an RC QP on the same flow queue is refused before its PSN moves */
	{
		struct xhca_qp_ctx c;
		struct xhca_pkt_spec r;

		xhca_qpctx_load(&E.ctxm[L_RC_HOST], &c);
		c.flowq = FQ_SOCK;
		xhca_qpctx_store(&E.ctxm[L_RC_HOST], &c, 0);
		spec_to(&r, RC_SEND, L_RC_HOST, EPSN0);
		if (step(&r, XHCA_R_DROP_FLOWQ_GATE, L_RC_HOST, EPSN0, why))
			return -1;
	}
	/* backlog 1, at low: open again */
	if (fq_set(FQ_SOCK, 3, 1, base + 2) || step(&s, XHCA_R_TO_FLOWQ, L_UD_HOST, -1, why))
		return -1;
	if (fq_get(FQ_SOCK, &q) || q.gate || q.gate_closes < 1)
		return snprintf(why, WHY_LEN, "gate %u closes %llu", q.gate,
				(unsigned long long)q.gate_closes), -1;
	/* the other flow queue never noticed: still no socket, not gated */
	{
		struct xhca_pkt_spec r;

		spec_to(&r, RC_SEND, L_RC_HOST, EPSN0);
		if (qps_reset() || step(&r, XHCA_R_DROP_NO_SOCKET, L_RC_HOST, EPSN0, why))
			return -1;
	}
	return fq_set(FQ_SOCK, 0, 0, 0) ? -1 : 0;
}

/* A frame whose metadata (another program's, in a dispatcher) already takes
 * what the kernel allows leaves no room for ours: dropped before the PSN is
 * used. The kernel's limit differs between versions: the test takes the
 * largest metadata test_run accepts. */
int seq_flowq_no_meta_room(char *why)
{
	static __u8 in[XHCA_PKT_MAX + 256];
	struct xhca_pkt_spec s;
	struct snap a, b;
	int len;

	if (qps_reset() || fq_set(FQ_SOCK, 0, 0, 0))
		return -1;
	xhca_pkt_spec_init(&s, UD_SEND);
	s.dqpn = qps[L_UD_HOST].qpn;
	s.deth_qkey = UD_QKEY;
	for (__u32 other = 252; other >= 4; other -= 4) {
		struct xdp_md ctx = { .data = other };

		len = xhca_pkt_build(&s, in + other, XHCA_PKT_MAX);
		if (len < 0)
			return -1;
		memset(in, 0xee, other);
		ctx.data_end = other + (__u32)len;
		{
			LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in,
				    .data_size_in = other + (__u32)len, .ctx_in = &ctx,
				    .ctx_size_in = sizeof(ctx), .repeat = 1);

			snap_take(&a);
			if (bpf_prog_test_run_opts(E.prog, &o)) {
				if (errno == EINVAL)
					continue; /* more metadata than the kernel takes */
				return snprintf(why, WHY_LEN, "test run: %s", strerror(errno)), -1;
			}
			snap_take(&b);
			if (o.retval != XDP_DROP ||
			    b.r[XHCA_R_DROP_META].packets - a.r[XHCA_R_DROP_META].packets != 1 ||
			    b.q[L_UD_HOST].dropped - a.q[L_UD_HOST].dropped != 1)
				return snprintf(why, WHY_LEN, "%u bytes of metadata: verdict %u, "
						"drop_meta +%llu", other, o.retval,
						(unsigned long long)(b.r[XHCA_R_DROP_META].packets -
								     a.r[XHCA_R_DROP_META].packets)), -1;
			E.hit[XHCA_R_DROP_META] = 1;
			return 0;
		}
	}
	return snprintf(why, WHY_LEN, "test_run takes no metadata at all"), -1;
}

/* A WRITE decided after its flow queue was asked: each packet is counted
 * once, under its final reason, and the flow queue's counters say only
 * what happened to it there (run() checks them for every packet). A LAST
 * placed here whose ACK finds the gate closed is placed, not a gate drop;
 * a LAST with immediate that the gate admitted and the length check then
 * refused is a length drop that never entered the flow queue. */
int seq_flowq_late_drop(char *why)
{
	struct xhca_pkt_spec s;
	struct xhca_flowq q;

	if (qps_reset() || fq_get(FQ_SOCK, &q))
		return snprintf(why, WHY_LEN, "setup"), -1;
	mrs_reset();
	if (fq_set(FQ_SOCK, 1, 0, q.enq - 5)) /* backlog 5, over high: the gate closes */
		return -1;
	wspec(&s, L_RCW, XHCA_OP_WRITE_FIRST, EPSN0, MR_PRE, PRE_IOVA, 2048, 1024);
	if (step(&s, XHCA_R_PLACED, L_RCW, EPSN0 + 1, why))
		return -1;
	wspec(&s, L_RCW, XHCA_OP_WRITE_LAST, EPSN0 + 1, MR_PRE, 0, 0, 1024);
	s.ackreq = 1;
	if (step(&s, XHCA_R_PLACED, L_RCW, EPSN0 + 2, why))
		return -1;
	if (fq_get(FQ_SOCK, &q) || !q.gate)
		return snprintf(why, WHY_LEN, "the gate is open; the backlog should have closed it"),
		       -1;
	/* the gate open again: a LAST with immediate one byte short */
	if (fq_set(FQ_SOCK, 0, 0, q.enq))
		return -1;
	wspec(&s, L_RCW, XHCA_OP_WRITE_FIRST, EPSN0 + 2, MR_PRE, PRE_IOVA, 2048, 1024);
	if (step(&s, XHCA_R_PLACED, L_RCW, EPSN0 + 3, why))
		return -1;
	wspec(&s, L_RCW, XHCA_OP_WRITE_LAST_IMM, EPSN0 + 3, MR_PRE, 0, 0, 1023);
	if (step(&s, XHCA_R_DROP_WRITE_LEN, L_RCW, -1, why))
		return -1;
	return fq_set(FQ_SOCK, 0, 0, 0) ? -1 : 0;
}
