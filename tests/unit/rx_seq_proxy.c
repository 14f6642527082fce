/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca_rx sequences: the proxy QP (filters, CSNs, the load limit, WRITE
 * records).
 */
#include "rx.h"

/* ---- the proxy QP ---------------------------------------------------------- */

static int px_flags(__u32 lidx, __u8 flags)
{
	struct xhca_qp_ctx c;

	xhca_qpctx_load(&E.ctxm[lidx], &c);
	c.flags = flags;
	xhca_qpctx_store(&E.ctxm[lidx], &c, 1);
	return 0;
}

static int px_filters(__u32 lidx, __u32 gen, const struct xhca_pfilter *f, int n)
{
	struct xhca_pfilter_set fs = { .gen = gen };

	for (int i = 0; i < n; i++)
		fs.f[i] = f[i];
	return bpf_map_update_elem(bpf_map__fd(E.skel->maps.xhca_pfilt), &lidx, &fs, 0);
}

static __u64 px_count(size_t field)
{
	struct xhca_proxy_counter v[E.ncpus];
	__u32 zero = 0;
	__u64 sum = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(E.skel->maps.xhca_px_stats), &zero, v))
		return ~0ull;
	for (int i = 0; i < E.ncpus; i++)
		sum += *(__u64 *)((char *)&v[i] + field);
	return sum;
}

/* A SEND ONLY of n bytes starting with text to the proxy QP; checks the
 * reason and, for the flow queues, the CSN and flow queue in the metadata. */
static int px_send(__u8 op, __u32 psn, const char *text, __u32 n, int want, __u32 csn, char *why)
{
	static __u8 buf[4096];
	struct xhca_pkt_spec s;

	memset(buf, 'x', sizeof(buf));
	memcpy(buf, text, strlen(text));
	spec_to(&s, XHCA_OPC_RC | op, L_RCW, psn);
	s.payload = buf;
	s.payload_len = n;
	if (step(&s, want, L_RCW, -1, why))
		return -1;
	if ((want == XHCA_R_TO_PROXY || want == XHCA_R_TO_FLOWQ) &&
	    (last_meta.csn != csn || !(last_meta.flags & XHCA_MF_CSN) ||
	     last_meta.flowq != (want == XHCA_R_TO_PROXY ? XHCA_FLOWQ_PROXY : FQ_SOCK)))
		return snprintf(why, WHY_LEN, "PSN 0x%x: CSN %u flags 0x%x flowq %u, want CSN %u",
				psn, last_meta.csn, last_meta.flags, last_meta.flowq, csn), -1;
	return 0;
}

static int px_on_rec(void *ctx, void *data, size_t len)
{
	struct xhca_proxy_rec *out = ctx;

	if (len == sizeof(*out))
		*out = *(const struct xhca_proxy_rec *)data;
	return 0;
}

/*
 * xhca_rx's half of the proxy QP: a proxy QP without a proxy CQ discarded;
 * the filters (size threshold below, opcode set, value/mask with invert),
 * decided at the first packet and followed by the rest of the message; a
 * CSN per message on either path; the load limit; a placed WRITE's record.
 */
/* SEND filters: size, generation, a multi-packet SEND following its FIRST,
 * value/mask and invert. */
static int px_seq_filters(__u32 *psn, char *why)
{
	struct xhca_pfilter f[2] = {};
	__u64 n0;

	/* SENDs below 100 bytes go to the proxy; the threshold is not below */
	px_flags(L_RCW, XHCA_QPF_PROXY | XHCA_QPF_PROXY_CQ);
	f[0] = (struct xhca_pfilter){ .id = 1, .ops = XHCA_PF_OP_SEND,
				      .flags = XHCA_PF_SIZE_BELOW, .size = 100 };
	if (px_filters(L_RCW, 10, f, 1))
		return snprintf(why, WHY_LEN, "filters: %s", strerror(errno)), -1;
	n0 = px_count(offsetof(struct xhca_proxy_counter, offloaded));
	if (px_send(XHCA_OP_SEND_ONLY, (*psn)++, "", 99, XHCA_R_TO_PROXY, 0, why) ||
	    px_send(XHCA_OP_SEND_ONLY, (*psn)++, "", 100, XHCA_R_TO_FLOWQ, 1, why) ||
	    px_send(XHCA_OP_SEND_ONLY, (*psn)++, "", 101, XHCA_R_TO_FLOWQ, 2, why))
		return -1;
	if (px_count(offsetof(struct xhca_proxy_counter, offloaded)) != n0 + 1)
		return snprintf(why, WHY_LEN, "offloaded not counted once"), -1;
	/* a filter of another QP generation is not this QP's */
	if (px_filters(L_RCW, 9, f, 1) ||
	    px_send(XHCA_OP_SEND_ONLY, (*psn)++, "", 10, XHCA_R_TO_FLOWQ, 3, why))
		return -1;
	/* a multi-packet SEND follows its FIRST both ways; one CSN for all */
	f[0] = (struct xhca_pfilter){ .id = 1, .ops = XHCA_PF_OP_SEND, .flags = XHCA_PF_MATCH,
				      .match_len = 4, .value = "LOCK" };
	if (px_filters(L_RCW, 10, f, 1) ||
	    px_send(XHCA_OP_SEND_FIRST, (*psn)++, "LOCK", 1024, XHCA_R_TO_PROXY, 4, why) ||
	    px_send(XHCA_OP_SEND_MIDDLE, (*psn)++, "UNLO", 1024, XHCA_R_TO_PROXY, 4, why) ||
	    px_send(XHCA_OP_SEND_LAST, (*psn)++, "UNLO", 10, XHCA_R_TO_PROXY, 4, why) ||
	    px_send(XHCA_OP_SEND_FIRST, (*psn)++, "UNLO", 1024, XHCA_R_TO_FLOWQ, 5, why) ||
	    px_send(XHCA_OP_SEND_LAST, (*psn)++, "LOCK", 10, XHCA_R_TO_FLOWQ, 5, why))
		return -1;
	/* value/mask: mask bits ignore; invert offloads what does not match; a
	 * payload shorter than the value does not match */
	f[0] = (struct xhca_pfilter){ .id = 1, .ops = XHCA_PF_OP_SEND, .flags = XHCA_PF_MATCH,
				      .match_len = 4, .value = "LXXK", .mask = { 0, 0xff, 0xff } };
	if (px_filters(L_RCW, 10, f, 1) ||
	    px_send(XHCA_OP_SEND_ONLY, (*psn)++, "LOCK", 8, XHCA_R_TO_PROXY, 6, why) ||
	    px_send(XHCA_OP_SEND_ONLY, (*psn)++, "LOCL", 8, XHCA_R_TO_FLOWQ, 7, why) ||
	    px_send(XHCA_OP_SEND_ONLY, (*psn)++, "LOC", 3, XHCA_R_TO_FLOWQ, 8, why))
		return -1;
	f[0].flags |= XHCA_PF_INVERT;
	if (px_filters(L_RCW, 10, f, 1) ||
	    px_send(XHCA_OP_SEND_ONLY, (*psn)++, "LOCK", 8, XHCA_R_TO_FLOWQ, 9, why) ||
	    px_send(XHCA_OP_SEND_ONLY, (*psn)++, "LOCL", 8, XHCA_R_TO_PROXY, 10, why))
		return -1;
	return 0;
}

/* The opcode set: FETCH_ADD offloaded, CMP_SWAP not; a second filter. */
static int px_seq_opcodes(__u32 *psn, char *why)
{
	struct xhca_pfilter f[2] = {};
	struct xhca_pkt_spec s;

	/* opcode set: FETCH_ADD offloaded, CMP_SWAP not; a second filter */
	f[0] = (struct xhca_pfilter){ .id = 1, .ops = XHCA_PF_OP_READ, .flags = XHCA_PF_SINGLE };
	f[1] = (struct xhca_pfilter){ .id = 2, .ops = XHCA_PF_OP_FETCH_ADD };
	if (px_filters(L_RCW, 10, f, 2))
		return -1;
	wspec(&s, L_RCW, XHCA_OP_FETCH_ADD, (*psn)++, MR_PRE, 0, 0, 0);
	s.atomic_rkey = rkey_of(MR_PRE);
	s.atomic_va = PRE_IOVA + 8;
	if (step(&s, XHCA_R_TO_PROXY, L_RCW, -1, why))
		return -1;
	s.opcode = XHCA_OPC_RC | XHCA_OP_CMP_SWAP;
	s.psn = (*psn)++;
	if (step(&s, XHCA_R_TO_FLOWQ, L_RCW, -1, why))
		return -1;
	if (last_meta.csn != 12 || !(last_meta.flags & XHCA_MF_MSN))
		return snprintf(why, WHY_LEN, "CMP_SWAP: CSN %u flags 0x%x", last_meta.csn,
				last_meta.flags), -1;
	return 0;
}

/* The load limit: the proxy queue's gate closes, nothing offloaded, counted;
 * it opens again at the low watermark. */
static int px_seq_load_limit(__u32 *psn, char *why)
{
	struct xhca_pkt_spec s;
	struct xhca_flowq pq;
	__u64 n0;

	/* the load limit: the proxy queue's gate closed, no offload, counted */
	n0 = px_count(offsetof(struct xhca_proxy_counter, no_offload));
	if (fq_set(XHCA_FLOWQ_PROXY, 1, 0, 0))
		return -1;
	wspec(&s, L_RCW, XHCA_OP_FETCH_ADD, (*psn)++, MR_PRE, 0, 0, 0);
	s.atomic_rkey = rkey_of(MR_PRE);
	s.atomic_va = PRE_IOVA + 8;
	if (step(&s, XHCA_R_TO_FLOWQ, L_RCW, -1, why))
		return -1;
	if (px_count(offsetof(struct xhca_proxy_counter, no_offload)) != n0 + 1)
		return snprintf(why, WHY_LEN, "no_offload not counted"), -1;
	if (fq_get(XHCA_FLOWQ_PROXY, &pq) || !pq.gate || pq.gate_closes < 1)
		return snprintf(why, WHY_LEN, "load limit: gate %u closes %llu", pq.gate,
				(unsigned long long)pq.gate_closes), -1;
	/* it stays closed while the backlog is above low, opens at low */
	if (fq_set(XHCA_FLOWQ_PROXY, 4, 0, pq.enq - 1))
		return -1;
	wspec(&s, L_RCW, XHCA_OP_FETCH_ADD, (*psn)++, MR_PRE, 0, 0, 0);
	s.atomic_rkey = rkey_of(MR_PRE);
	s.atomic_va = PRE_IOVA + 8;
	if (step(&s, XHCA_R_TO_FLOWQ, L_RCW, -1, why))
		return snprintf(why + strlen(why), WHY_LEN - strlen(why), " (backlog 1 > low 0)"), -1;
	if (fq_get(XHCA_FLOWQ_PROXY, &pq) || fq_set(XHCA_FLOWQ_PROXY, 4, 0, pq.enq))
		return -1;
	wspec(&s, L_RCW, XHCA_OP_FETCH_ADD, (*psn)++, MR_PRE, 0, 0, 0);
	s.atomic_rkey = rkey_of(MR_PRE);
	s.atomic_va = PRE_IOVA + 8;
	if (step(&s, XHCA_R_TO_PROXY, L_RCW, -1, why))
		return snprintf(why + strlen(why), WHY_LEN - strlen(why), " (backlog 0)"), -1;
	if (fq_get(XHCA_FLOWQ_PROXY, &pq) || pq.gate)
		return snprintf(why, WHY_LEN, "load limit: the gate did not open at low"), -1;
	if (fq_set(XHCA_FLOWQ_PROXY, 0, 0, 0))
		return -1;
	return 0;
}

/* A WRITE placed by xhca_rx: its record, with its CSN and length. */
static int px_seq_write_record(__u32 *psn, char *why)
{
	struct xhca_proxy_rec rec = {};
	struct ring_buffer *rb;
	struct xhca_pkt_spec s;

	/* a WRITE placed by xhca_rx: its record, with its CSN and length */
	rb = ring_buffer__new(bpf_map__fd(E.skel->maps.xhca_proxy_rb), px_on_rec, &rec, NULL);
	if (!rb)
		return snprintf(why, WHY_LEN, "ring buffer: %s", strerror(errno)), -1;
	wspec(&s, L_RCW, XHCA_OP_WRITE_ONLY, (*psn)++, MR_PRE, PRE_IOVA, 200, 200);
	if (step(&s, XHCA_R_PLACED, L_RCW, -1, why)) {
		ring_buffer__free(rb);
		return -1;
	}
	ring_buffer__consume(rb);
	ring_buffer__free(rb);
	if (rec.lidx != L_RCW || rec.gen != 10 || rec.gqpn != qps[L_RCW].qpn || rec.csn != 16 ||
	    rec.len != 200)
		return snprintf(why, WHY_LEN, "WRITE record: lidx %u gen %u qpn 0x%x csn %u len %u",
				rec.lidx, rec.gen, rec.gqpn, rec.csn, rec.len), -1;
	return 0;
}

int seq_proxy(char *why)
{
	const __u32 key = 0 * XHCA_FLOWQ_MAX + XHCA_FLOWQ_PROXY;
	__u32 psn = EPSN0;

	if (qps_reset() || fq_set(FQ_SOCK, 0, 0, 0) || fq_set(XHCA_FLOWQ_PROXY, 0, 0, 0) ||
	    bpf_map_update_elem(bpf_map__fd(E.skel->maps.xhca_xsks), &key, &xsk_fd, 0))
		return snprintf(why, WHY_LEN, "setup: %s", strerror(errno)), -1;
	mrs_reset();
	/* a proxy QP on an ordinary CQ: discarded, PSN kept */
	px_flags(L_RCW, XHCA_QPF_PROXY);
	if (px_send(XHCA_OP_SEND_ONLY, psn, "", 8, XHCA_R_DROP_PROXY_NOCQ, 0, why))
		return -1;
	if (E.ctxm[L_RCW].rx_psn != EPSN0)
		return snprintf(why, WHY_LEN, "the discarded packet moved the PSN"), -1;
	if (px_seq_filters(&psn, why) || px_seq_opcodes(&psn, why) ||
	    px_seq_load_limit(&psn, why) || px_seq_write_record(&psn, why))
		return -1;
	px_flags(L_RCW, 0);
	return 0;
}
