/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca_rx sequences: multicast (group checks, the replication queue,
 * function ports, the threshold).
 */
#include "rx.h"

/* ---- multicast ------------------------------------------------------------ */

static int mc_group(const char *mgid, __u32 index, __u32 gen, __u32 nmembers, __u16 pkey)
{
	struct xhca_mcast_grp g = { .index = index, .gen = gen, .nmembers = nmembers,
				    .pkey = pkey };
	struct xhca_mgid k;

	if (xhca_ip_parse(mgid, k.gid) < 0)
		return -1;
	return bpf_map_update_elem(bpf_map__fd(E.skel->maps.xhca_mcast), &k, &g, 0);
}

static __u64 mc_count(__u32 index, size_t field)
{
	struct xhca_mcast_counter v[E.ncpus];
	__u64 sum = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(E.skel->maps.xhca_mc_stats), &index, v))
		return ~0ull;
	for (int i = 0; i < E.ncpus; i++)
		sum += *(__u64 *)((char *)&v[i] + field);
	return sum;
}

static void mc_spec(struct xhca_pkt_spec *s, __u8 opcode, const char *dst)
{
	xhca_pkt_spec_init(s, opcode);
	s->dqpn = XHCA_QPN_MCAST;
	s->deth_qkey = UD_QKEY;
	s->deth_sqp = 0x77;
	s->payload_len = 100;
	s->ipv6 = !!strchr(dst, ':');
	xhca_ip_parse(s->ipv6 ? "fd00::1" : "10.0.0.1", s->src_ip);
	xhca_ip_parse(dst, s->dst_ip);
}

/* Function ports: a group with ports is broadcast to them (its inner
 * devmap); xhca_rep, on the replication port, hands the copy it gets to
 * the replication queue, under the same threshold. */
int seq_mcast_ports(char *why)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .repeat = 1);
	static __u8 f[XHCA_PKT_MAX], out[XHCA_PKT_MAX + 64];
	__u32 idx = 9, lo = if_nametoindex("lo"), rkey = XHCA_XSK_REP_KEY;
	__u32 mkey = 0 * XHCA_FLOWQ_MAX + XHCA_FLOWQ_MCAST; /* RX queue 0's */
	struct xhca_mcast_grp g = { .index = 9, .gen = 4, .nmembers = 1, .ndevs = 1,
				    .pkey = 0xffff };
	struct xhca_pkt_spec s;
	struct xhca_mgid k;
	struct xhca_rx_meta m;
	struct xhca_flowq q;
	int inner, len, rc, rep = bpf_program__fd(E.skel->progs.xhca_rep);
	__u64 d0, p0;

	inner = bpf_map_create(BPF_MAP_TYPE_DEVMAP_HASH, "ports", 4, 4, XHCA_MCAST_DEVS + 1, NULL);
	xhca_ip_parse("239.5.5.5", k.gid);
	if (inner < 0 || bpf_map_update_elem(inner, &lo, &lo, 0) ||
	    bpf_map_update_elem(bpf_map__fd(E.skel->maps.xhca_mc_devs), &idx, &inner, 0) ||
	    bpf_map_update_elem(bpf_map__fd(E.skel->maps.xhca_mcast), &k, &g, 0))
		return snprintf(why, WHY_LEN, "ports setup: %s", strerror(errno)), -1;
	close(inner);
	d0 = mc_count(9, offsetof(struct xhca_mcast_counter, dev_packets));
	mc_spec(&s, XHCA_OPC_UD | XHCA_OP_SEND_ONLY, "239.5.5.5");
	if (step(&s, XHCA_R_TO_MCAST_DEVS, 0, -1, why))
		return -1;
	if (mc_count(9, offsetof(struct xhca_mcast_counter, dev_packets)) != d0 + 1)
		return snprintf(why, WHY_LEN, "dev_packets did not move"), -1;
	/* Over a page, the test run makes the frame multi-buffer (xdp.frags):
	 * for the port and the QPs (two targets) the kernel could not copy
	 * it; stored once in the replication queue for xhcad to copy, not
	 * broadcast. */
	s.payload_len = 4000;
	p0 = mc_count(9, offsetof(struct xhca_mcast_counter, packets));
	if (bpf_map_update_elem(bpf_map__fd(E.skel->maps.xhca_xsks), &mkey, &xsk_fd, 0))
		return snprintf(why, WHY_LEN, "replication queue socket: %s", strerror(errno)), -1;
	rc = step(&s, XHCA_R_TO_MCAST_PORTS, 0, -1, why);
	bpf_map_delete_elem(bpf_map__fd(E.skel->maps.xhca_xsks), &mkey);
	if (rc)
		return -1;
	if (last_meta.reason != XHCA_R_TO_MCAST_PORTS || last_meta.flowq != XHCA_FLOWQ_MCAST ||
	    last_meta.lidx != 9 || last_meta.gen != 4)
		return snprintf(why, WHY_LEN, "frame over a page: metadata reason %u flowq %u lidx %u "
				"gen %u", last_meta.reason, last_meta.flowq, last_meta.lidx,
				last_meta.gen), -1;
	if (mc_count(9, offsetof(struct xhca_mcast_counter, dev_packets)) != d0 + 1 ||
	    mc_count(9, offsetof(struct xhca_mcast_counter, packets)) != p0 + 1)
		return snprintf(why, WHY_LEN, "frame over a page: broadcast to the ports, or not "
				"counted as stored for replication"), -1;
	s.payload_len = 100;
	/* xhca_rep: to its socket with the metadata, or dropped at the threshold */
	len = xhca_pkt_build(&s, f, sizeof(f));
	if (len < 0 || bpf_map_update_elem(bpf_map__fd(E.skel->maps.xhca_xsks), &rkey, &xsk_fd, 0))
		return snprintf(why, WHY_LEN, "rep setup"), -1;
	o.data_in = f;
	o.data_size_in = (__u32)len;
	o.data_out = out;
	o.data_size_out = sizeof(out);
	if (bpf_prog_test_run_opts(rep, &o) || o.retval != XDP_REDIRECT ||
	    o.data_size_out != (__u32)len + sizeof(m))
		return snprintf(why, WHY_LEN, "xhca_rep: verdict %u, %u bytes out", o.retval,
				o.data_size_out), -1;
	memcpy(&m, out, sizeof(m));
	if (m.lidx != 9 || m.gen != 4 || m.reason != XHCA_R_TO_MCAST || m.flowq != XHCA_FLOWQ_MCAST)
		return snprintf(why, WHY_LEN, "xhca_rep metadata: lidx %u gen %u reason %u", m.lidx,
				m.gen, m.reason), -1;
	if (fq_get(XHCA_FLOWQ_MCAST, &q) || fq_set(XHCA_FLOWQ_MCAST, 1, 0, q.enq - 1))
		return snprintf(why, WHY_LEN, "threshold"), -1;
	o.data_size_out = sizeof(out);
	if (bpf_prog_test_run_opts(rep, &o) || o.retval != XDP_DROP ||
	    mc_count(9, offsetof(struct xhca_mcast_counter, threshold_drops)) != 1)
		return snprintf(why, WHY_LEN, "xhca_rep over the threshold: verdict %u", o.retval),
		       -1;
	bpf_map_delete_elem(bpf_map__fd(E.skel->maps.xhca_xsks), &rkey);
	return fq_set(XHCA_FLOWQ_MCAST, 0, 0, 0);
}

/* The multicast QPN: the group checks, one redirect to the replication
 * queue with the group in the metadata, per-group counters, the threshold
 * (and unicast flowing while it holds multicast back). */
int seq_mcast(char *why)
{
	const __u32 key = 0 * XHCA_FLOWQ_MAX + XHCA_FLOWQ_MCAST;
	struct xhca_pkt_spec s;
	struct xhca_flowq q;
	__u64 p0;

	if (qps_reset() || fq_set(XHCA_FLOWQ_MCAST, 0, 0, 0) || fq_set(FQ_SOCK, 0, 0, 0) ||
	    bpf_map_update_elem(bpf_map__fd(E.skel->maps.xhca_xsks), &key, &xsk_fd, 0) ||
	    mc_group("239.1.1.1", 5, 3, 2, 0xffff) || mc_group("239.1.1.2", 6, 1, 0, 0xffff) ||
	    mc_group("239.1.1.3", 7, 1, 1, 0x0123) || mc_group("ff0e::1:1", 8, 9, 1, 0xffff))
		return snprintf(why, WHY_LEN, "setup: %s", strerror(errno)), -1;
	p0 = mc_count(5, offsetof(struct xhca_mcast_counter, packets));
	mc_spec(&s, XHCA_OPC_UD | XHCA_OP_SEND_ONLY_IMM, "239.1.1.1");
	if (step(&s, XHCA_R_TO_MCAST, 0, -1, why))
		return -1;
	if (last_meta.gqpn != XHCA_QPN_MCAST || last_meta.lidx != 5 || last_meta.gen != 3 ||
	    last_meta.flowq != XHCA_FLOWQ_MCAST || last_meta.reason != XHCA_R_TO_MCAST ||
	    last_meta.payload_len != 100 || last_meta.payload_off != 14 + 20 + 8 + 24)
		return snprintf(why, WHY_LEN, "metadata: lidx %u gen %u fq %u reason %u len %u off %u",
				last_meta.lidx, last_meta.gen, last_meta.flowq, last_meta.reason,
				last_meta.payload_len, last_meta.payload_off), -1;
	if (mc_count(5, offsetof(struct xhca_mcast_counter, packets)) != p0 + 1)
		return snprintf(why, WHY_LEN, "the group's packet counter did not move"), -1;
	mc_spec(&s, XHCA_OPC_UD | XHCA_OP_SEND_ONLY, "ff0e::1:1");
	if (step(&s, XHCA_R_TO_MCAST, 0, -1, why) || last_meta.lidx != 8 ||
	    !(last_meta.flags & XHCA_MF_IPV6))
		return why[0] ? -1 : (snprintf(why, WHY_LEN, "IPv6 group metadata"), -1);
	/* what is common to the group, each with its reason */
	mc_spec(&s, XHCA_OPC_UD | XHCA_OP_SEND_ONLY, "239.9.9.9");
	if (step(&s, XHCA_R_DROP_MCAST_GROUP, 0, -1, why))
		return -1;
	mc_spec(&s, XHCA_OPC_UD | XHCA_OP_SEND_ONLY, "239.1.1.2");
	if (step(&s, XHCA_R_DROP_MCAST_EMPTY, 0, -1, why))
		return -1;
	mc_spec(&s, XHCA_OPC_UD | XHCA_OP_SEND_ONLY, "239.1.1.1");
	s.pkey = 0x8001;
	if (step(&s, XHCA_R_DROP_MCAST_PKEY, 0, -1, why))
		return -1;
	mc_spec(&s, XHCA_OPC_UD | XHCA_OP_SEND_ONLY, "239.1.1.3");
	s.pkey = 0x0123; /* two limited members */
	if (step(&s, XHCA_R_DROP_MCAST_PKEY, 0, -1, why))
		return -1;
	s.pkey = 0x8123;
	if (step(&s, XHCA_R_TO_MCAST, 0, -1, why))
		return -1;
	mc_spec(&s, XHCA_OPC_RC | XHCA_OP_SEND_ONLY, "239.1.1.1");
	if (step(&s, XHCA_R_DROP_MCAST_OPCODE, 0, -1, why))
		return -1;
	mc_spec(&s, XHCA_OPC_UD | XHCA_OP_SEND_ONLY, "10.0.0.2");
	if (step(&s, XHCA_R_DROP_MCAST_ADDR, 0, -1, why))
		return -1;
	if (mc_count(5, offsetof(struct xhca_mcast_counter, pkey_drops)) != 1 ||
	    mc_count(6, offsetof(struct xhca_mcast_counter, empty_drops)) != 1)
		return snprintf(why, WHY_LEN, "per-group drop counters"), -1;
	/* the threshold: two waiting (enq - deq) is the limit */
	if (fq_get(XHCA_FLOWQ_MCAST, &q) || fq_set(XHCA_FLOWQ_MCAST, 2, 1, q.enq - 1))
		return snprintf(why, WHY_LEN, "threshold setup"), -1;
	mc_spec(&s, XHCA_OPC_UD | XHCA_OP_SEND_ONLY, "239.1.1.1");
	if (step(&s, XHCA_R_TO_MCAST, 0, -1, why) ||
	    step(&s, XHCA_R_DROP_MCAST_THRESHOLD, 0, -1, why))
		return -1;
	/* unicast to a host QP is not held back */
	spec_to(&s, XHCA_OPC_UD | XHCA_OP_SEND_ONLY, L_UD_HOST, 1);
	s.deth_qkey = UD_QKEY;
	if (step(&s, XHCA_R_TO_FLOWQ, L_UD_HOST, -1, why))
		return -1;
	if (mc_count(5, offsetof(struct xhca_mcast_counter, threshold_drops)) != 1)
		return snprintf(why, WHY_LEN, "threshold drops not counted for the group"), -1;
	/* replicated: the backlog falls, multicast is admitted again */
	if (fq_get(XHCA_FLOWQ_MCAST, &q) || fq_set(XHCA_FLOWQ_MCAST, 2, 1, q.enq))
		return snprintf(why, WHY_LEN, "threshold reset"), -1;
	mc_spec(&s, XHCA_OPC_UD | XHCA_OP_SEND_ONLY, "239.1.1.1");
	if (step(&s, XHCA_R_TO_MCAST, 0, -1, why))
		return -1;
	bpf_map_delete_elem(bpf_map__fd(E.skel->maps.xhca_xsks), &key);
	if (step(&s, XHCA_R_DROP_NO_SOCKET, 0, -1, why))
		return -1;
	if (fq_set(XHCA_FLOWQ_MCAST, 0, 0, 0))
		return snprintf(why, WHY_LEN, "threshold off"), -1;
	return seq_mcast_ports(why);
}
