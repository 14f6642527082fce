/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca_rx sequences: PSNs (RC across 2^24, UC gaps), multi-packet messages,
 * destroy and re-create, truncation, every opcode, a torn or concurrently
 * written context, the same PSN from two CPUs.
 */
#include "rx.h"

int seq_psn_wrap(char *why)
{
	struct xhca_pkt_spec s;
	static const struct {
		__u32 psn;
		int reason;
		__u32 epsn;
	} steps[] = {
		{ 0xfffffe, XHCA_R_ACCEPT_DROP, 0xffffff },
		{ 0xffffff, XHCA_R_ACCEPT_DROP, 0x000000 },
		{ 0x000000, XHCA_R_ACCEPT_DROP, 0x000001 },
		{ 0xffffff, XHCA_R_DROP_PSN_DUP, 0x000001 },
		{ 0xfffffe, XHCA_R_DROP_PSN_DUP, 0x000001 },
		{ 0x000002, XHCA_R_DROP_PSN_OOS, 0x000001 },
		{ 0x000001, XHCA_R_ACCEPT_DROP, 0x000002 },
	};

	if (qps_reset() || ctx_set_epsn(L_RC, 0xfffffe))
		return snprintf(why, WHY_LEN, "setup"), -1;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		spec_to(&s, RC_SEND, L_RC, steps[i].psn);
		if (step(&s, steps[i].reason, L_RC, steps[i].epsn, why))
			return -1;
	}
	/* A READ whose responses cross the wrap. */
	if (ctx_set_epsn(L_RC, 0xfffffd))
		return -1;
	spec_to(&s, XHCA_OPC_RC | XHCA_OP_READ_REQ, L_RC, 0xfffffd);
	s.reth_len = 4096; /* 4 responses at MTU 1024 */
	return step(&s, XHCA_R_ACCEPT_DROP, L_RC, 0x000001, why);
}

int seq_multi_packet(char *why)
{
	struct xhca_pkt_spec s;
	__u32 psn = EPSN0;
	static const __u8 ops[] = {
		XHCA_OP_SEND_FIRST, XHCA_OP_SEND_MIDDLE, XHCA_OP_SEND_MIDDLE, XHCA_OP_SEND_LAST_IMM,
		XHCA_OP_WRITE_FIRST, XHCA_OP_WRITE_MIDDLE, XHCA_OP_WRITE_LAST,
		XHCA_OP_WRITE_FIRST, XHCA_OP_WRITE_LAST_IMM, XHCA_OP_SEND_FIRST,
		XHCA_OP_SEND_LAST_INV,
	};

	if (qps_reset())
		return -1;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++, psn++) {
		spec_to(&s, XHCA_OPC_RC | ops[i], L_RC, psn);
		s.reth_len = 1024;
		if (step(&s, XHCA_R_ACCEPT_DROP, L_RC, psn + 1, why))
			return -1;
	}
	/* The same on UC. */
	psn = EPSN0;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]) - 2; i++, psn++) {
		spec_to(&s, XHCA_OPC_UC | ops[i], L_UC, psn);
		if (step(&s, XHCA_R_ACCEPT_DROP, L_UC, psn + 1, why))
			return -1;
	}
	return 0;
}

int seq_uc_gap(char *why)
{
	struct xhca_pkt_spec s;
	static const struct {
		__u8 op;
		__u32 psn;
		int reason;
		__u32 epsn;
	} steps[] = {
		{ XHCA_OP_SEND_FIRST, EPSN0, XHCA_R_ACCEPT_DROP, EPSN0 + 1 },
		{ XHCA_OP_SEND_MIDDLE, EPSN0 + 1, XHCA_R_ACCEPT_DROP, EPSN0 + 2 },
		/* EPSN0 + 2 is lost */
		{ XHCA_OP_SEND_MIDDLE, EPSN0 + 3, XHCA_R_DROP_UC_GAP, EPSN0 + 2 },
		/* in sequence again, but the message is broken: still dropped */
		{ XHCA_OP_SEND_MIDDLE, EPSN0 + 2, XHCA_R_DROP_UC_GAP, EPSN0 + 2 },
		{ XHCA_OP_SEND_LAST, EPSN0 + 4, XHCA_R_DROP_UC_GAP, EPSN0 + 2 },
		/* the next message starts clean, whatever its PSN */
		{ XHCA_OP_WRITE_FIRST, EPSN0 + 5, XHCA_R_ACCEPT_DROP, EPSN0 + 6 },
		{ XHCA_OP_WRITE_LAST, EPSN0 + 6, XHCA_R_ACCEPT_DROP, EPSN0 + 7 },
		/* a gap at the start of a message is no gap for that message */
		{ XHCA_OP_SEND_ONLY, EPSN0 + 9, XHCA_R_ACCEPT_DROP, EPSN0 + 10 },
		/* across the 2^24 wrap */
		{ XHCA_OP_SEND_FIRST, 0xffffff, XHCA_R_ACCEPT_DROP, 0 },
		{ XHCA_OP_SEND_LAST, 0, XHCA_R_ACCEPT_DROP, 1 },
	};

	if (qps_reset())
		return -1;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		spec_to(&s, XHCA_OPC_UC | steps[i].op, L_UC, steps[i].psn);
		s.reth_len = 64;
		if (step(&s, steps[i].reason, L_UC, steps[i].epsn, why)) {
			size_t n = strlen(why);

			snprintf(why + n, WHY_LEN - n, " (step %zu)", i);
			return -1;
		}
	}
	return 0;
}

/* Destroy and re-create in the order xhcad uses, with a packet between each
 * write: none may ever reach a context that is not its QP's. */
int seq_destroy_recreate(char *why)
{
	const __u32 slot = 40, old_qpn = 0x4444, new_qpn = 0x5555;
	struct xhca_pkt_spec s;
	struct xhca_cam_val v;
	struct xhca_qp_ctx c;

	if (qps_reset())
		return -1;
	if (qp_write(slot, old_qpn, 1, 1, 1, XHCA_QPT_UD, XHCA_QPS_RTS, XHCA_ACT_DROP, 0xffff,
		     UD_QKEY, 0, 0))
		return snprintf(why, WHY_LEN, "create"), -1;
	xhca_pkt_spec_init(&s, UD_SEND);
	s.deth_qkey = UD_QKEY;
	s.dqpn = old_qpn;
	if (step(&s, XHCA_R_ACCEPT_DROP, 0, -1, why))
		return -1;
	/* destroy, step 1: CAM delete */
	if (bpf_map_delete_elem(E.cam, &old_qpn))
		return -1;
	if (step(&s, XHCA_R_DROP_CAM_MISS, 0, -1, why))
		return -1;
	/* a packet that looked the CAM up before the delete holds {slot, 1}:
	 * emulate it by putting the old entry back while the context changes */
	v.lidx = slot;
	v.gen = 1;
	if (bpf_map_update_elem(E.cam, &old_qpn, &v, 0))
		return -1;
	/* destroy, step 2: context invalid, generation bumped */
	if (ctx_get(slot, &c))
		return -1;
	c.valid = 0;
	c.gen = 2;
	xhca_qpctx_store(&E.ctxm[slot], &c, 0);
	if (step(&s, XHCA_R_DROP_STALE, 0, -1, why))
		return -1;
	/* re-create another QPN in the same slot at once */
	if (qp_write(slot, new_qpn, 3, 3, 1, XHCA_QPT_UD, XHCA_QPS_RTS, XHCA_ACT_DROP, 0xffff,
		     UD_QKEY, 0, 0))
		return -1;
	if (step(&s, XHCA_R_DROP_STALE, 0, -1, why)) /* old QPN, old gen: stale */
		return -1;
	if (bpf_map_delete_elem(E.cam, &old_qpn))
		return -1;
	if (step(&s, XHCA_R_DROP_CAM_MISS, 0, -1, why))
		return -1;
	s.dqpn = new_qpn;
	if (step(&s, XHCA_R_ACCEPT_DROP, 0, -1, why))
		return -1;
	/* the same QPN re-created with a new generation: an old CAM value
	 * (gen 3) against the new context (gen 4) is stale */
	if (qp_write(slot, new_qpn, 4, 3, 1, XHCA_QPT_UD, XHCA_QPS_RTS, XHCA_ACT_DROP, 0xffff,
		     UD_QKEY, 0, 0))
		return -1;
	if (step(&s, XHCA_R_DROP_STALE, 0, -1, why))
		return -1;
	bpf_map_delete_elem(E.cam, &new_qpn);
	return 0;
}

/* Cuts a valid frame at every length from the Ethernet header to one byte
 * short of the whole: before the UDP header ends the kernel gets it (it
 * cannot be told from other traffic); after, it is a truncated RoCEv2 frame.
 * Never accepted, never a crash, one counter each. */
static int sweep(const struct xhca_pkt_spec *s, __u32 lidx, const char *what, char *why)
{
	static __u8 f[XHCA_PKT_MAX];
	int len = xhca_pkt_build(s, f, sizeof(f));
	__u32 udp_end;

	if (len < 0)
		return snprintf(why, WHY_LEN, "%s: build", what), -1;
	udp_end = 14 + 4 * (__u32)s->nvlan + (s->ipv6 ? 40 : 20 + (__u32)s->ip_opt_len) + 8;
	for (__u32 cut = 14; cut < (__u32)len; cut++) {
		int want = cut < udp_end ? XHCA_R_PASS_TRUNCATED : XHCA_R_DROP_TRUNCATED;

		if (run(f, cut, want, lidx, why) < 0) {
			size_t n = strlen(why);

			snprintf(why + n, WHY_LEN - n, " (%s cut at %u of %d)", what, cut, len);
			return -1;
		}
	}
	if (qps_reset())
		return -1;
	if (run(f, (__u32)len, XHCA_R_ACCEPT_DROP, lidx, why) < 0) {
		size_t n = strlen(why);

		snprintf(why + n, WHY_LEN - n, " (%s whole)", what);
		return -1;
	}
	return 0;
}

int seq_truncation(char *why)
{
	struct xhca_pkt_spec s;

	if (qps_reset())
		return -1;
	spec_to(&s, XHCA_OPC_RC | XHCA_OP_WRITE_ONLY_IMM, L_RC, EPSN0);
	s.nvlan = 2;
	s.ip_opt_len = 8;
	s.reth_len = 6;
	s.payload_len = 6;
	if (sweep(&s, L_RC, "RC WRITE_ONLY_IMM QinQ IPv4+options", why))
		return -1;
	spec_to(&s, XHCA_OPC_UD | XHCA_OP_SEND_ONLY_IMM, L_UD, 0);
	s.ipv6 = 1;
	addr(s.src_ip, 1, 0);
	addr(s.dst_ip, 1, 1);
	s.nvlan = 1;
	s.deth_qkey = UD_QKEY;
	s.payload_len = 5;
	if (sweep(&s, L_UD, "UD SEND_ONLY_IMM VLAN IPv6", why))
		return -1;
	spec_to(&s, XHCA_OPC_RC | XHCA_OP_CMP_SWAP, L_RC, EPSN0);
	return sweep(&s, L_RC, "RC CMP_SWAP", why);
}

/* Every opcode, to a QP of its class: unknown ones are dropped as unknown
 * whatever follows the BTH; known ones never are, and with a UDP length one
 * byte short of their headers and ICRC they are bad-length drops. */
int seq_all_opcodes(char *why)
{
	static const __u32 by_class[8] = { L_RC_RTS, L_UC, 0, L_UD, L_RC_RTS, 0, 0, 0 };
	struct xhca_pkt_spec s;
	int known = 0;

	for (int op = 0; op < 256; op++) {
		const struct xhca_opinfo *oi = &xhca_opinfo_tbl[op];
		__u32 lidx = by_class[op >> 5] ? by_class[op >> 5] : L_RC_RTS;
		int got;

		if (qps_reset())
			return -1;
		spec_to(&s, (__u8)op, lidx, EPSN0);
		s.deth_qkey = UD_QKEY;
		s.payload_len = 24; /* unknown opcodes get it straight after the BTH */
		if (oi->flags & XHCA_O_KNOWN)
			s.payload_len = (oi->flags & XHCA_O_PAYLOAD) ? 24 : 0;
		if (op == XHCA_OP_CNP)
			lidx = L_RC_RTS;
		got = step(&s, (oi->flags & XHCA_O_KNOWN) ? -1 : XHCA_R_DROP_UNKNOWN_OPCODE, lidx, -1,
			   why);
		if (got < 0) {
			size_t n = strlen(why);

			snprintf(why + n, WHY_LEN - n, " (opcode 0x%02x)", op);
			return -1;
		}
		if (!(oi->flags & XHCA_O_KNOWN))
			continue;
		known++;
		/* One byte short: the UDP length still fits the frame. */
		s.payload_len = 0;
		s.pad = 0;
		s.udp_len_delta = -1;
		if (step(&s, XHCA_R_DROP_BAD_LENGTH, lidx, -1, why)) {
			size_t n = strlen(why);

			snprintf(why + n, WHY_LEN - n, " (opcode 0x%02x one byte short)", op);
			return -1;
		}
	}
	/* RC and UC: 12 SEND/WRITE each, RC also READ, responses, atomics,
	 * invalidates, FLUSH, ATOMIC WRITE; UD 2; CNP 1. */
	if (known != 12 + 13 + 12 + 2 + 1) {
		snprintf(why, WHY_LEN, "%d known opcodes, want 40", known);
		return -1;
	}
	return 0;
}

/* The QP count is a load-time knob: an object sized for TQ QPs takes a QP
 * in its last slot and refuses one past it. */
int seq_sizing(char *why)
{
	struct xhca_qp_ctx c = {};
	__u32 last = TQ - 1, past = TQ;
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info);

	if (bpf_obj_get_info_by_fd(E.ctx, &info, &ilen) || info.max_entries != TQ)
		return snprintf(why, WHY_LEN, "context map has %u entries, want %u",
				info.max_entries, TQ), -1;
	if (!(info.map_flags & BPF_F_MMAPABLE))
		return snprintf(why, WHY_LEN, "context map is not mmapable"), -1;
	if (bpf_map_update_elem(E.ctx, &last, &c, 0))
		return snprintf(why, WHY_LEN, "last slot: %s", strerror(errno)), -1;
	if (!bpf_map_update_elem(E.ctx, &past, &c, 0) || errno != E2BIG)
		return snprintf(why, WHY_LEN, "slot past the end accepted"), -1;
	return 0;
}

/* A writer that died inside a write section leaves seq odd and the fields
 * mixed: here the P_Key of one configuration and the Q_Key of another, which
 * together would accept the packet. Every packet of the slot is dropped as
 * busy, nothing else moves; the next write section makes it whole. */
int seq_torn_context(char *why)
{
	struct xhca_pkt_spec s;
	struct xhca_qp_ctx *m = &E.ctxm[L_UD];

	if (qps_reset())
		return -1;
	xhca_pkt_spec_init(&s, UD_SEND);
	s.dqpn = qps[L_UD].qpn;
	s.deth_qkey = UD_QKEY;
	__atomic_store_n(&m->seq, m->seq + 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 3; i++)
		if (step(&s, XHCA_R_DROP_QP_BUSY, L_UD, -1, why))
			return -1;
	if (!xhca_qpctx_torn(m))
		return snprintf(why, WHY_LEN, "xhca_qpctx_torn misses an odd seq"), -1;
	if (qps_reset() || xhca_qpctx_torn(m))
		return snprintf(why, WHY_LEN, "a write section does not mend the slot"), -1;
	return step(&s, XHCA_R_ACCEPT_DROP, L_UD, -1, why);
}

/* Two configurations of one UD QP, A (Q_Key wrong for the packet) and B
 * (P_Key wrong), rewritten in turn by a writer on the other CPU while
 * xhca_rx runs the packet in batches on this one. A view mixing A's P_Key
 * with B's Q_Key would accept it: none may. */
static volatile int flip_stop;

static void *flip_writer(void *arg)
{
	struct xhca_qp_ctx a, b;
	unsigned long *n = arg;
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(1, &cpus);
	pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	xhca_qpctx_load(&E.ctxm[L_UD], &a);
	b = a;
	a.qkey = 0x0bad0bad;
	b.pkey = 0x8001;
	while (!flip_stop) {
		xhca_qpctx_store(&E.ctxm[L_UD], &a, 0);
		xhca_qpctx_store(&E.ctxm[L_UD], &b, 0);
		__atomic_store_n(n, *n + 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

int seq_concurrent_writer(char *why)
{
	static __u8 f[XHCA_PKT_MAX];
	struct xhca_pkt_spec s;
	struct snap a, b;
	pthread_t t;
	unsigned long flips = 0;
	__u64 runs = 0, acc, bad, busy;
	cpu_set_t cpus;
	int len, err = 0;

	if (qps_reset() || E.ncpus < 2)
		return snprintf(why, WHY_LEN, "needs 2 CPUs"), -1;
	xhca_pkt_spec_init(&s, UD_SEND);
	s.dqpn = qps[L_UD].qpn;
	s.deth_qkey = UD_QKEY;
	len = xhca_pkt_build(&s, f, sizeof(f));
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	snap_take(&a);
	flip_stop = 0;
	if (pthread_create(&t, NULL, flip_writer, &flips))
		return snprintf(why, WHY_LEN, "thread"), -1;
	/* (the context as it was, before the writer's first section, is
	 * neither A nor B: the packet passes it) */
	while (!__atomic_load_n(&flips, __ATOMIC_RELAXED))
		sched_yield();
	for (int i = 0; i < 100 && !err; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f, .data_size_in = (__u32)len,
			    .repeat = 50000);

		err = bpf_prog_test_run_opts(E.prog, &o);
		runs += 50000;
	}
	flip_stop = 1;
	pthread_join(t, NULL);
	CPU_SET(1, &cpus);
	pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	snap_take(&b);
	if (err)
		return snprintf(why, WHY_LEN, "test run: %s", strerror(errno)), -1;
	acc = b.r[XHCA_R_ACCEPT_DROP].packets - a.r[XHCA_R_ACCEPT_DROP].packets;
	bad = b.r[XHCA_R_DROP_QKEY].packets - a.r[XHCA_R_DROP_QKEY].packets +
	      b.r[XHCA_R_DROP_PKEY].packets - a.r[XHCA_R_DROP_PKEY].packets;
	busy = b.r[XHCA_R_DROP_QP_BUSY].packets - a.r[XHCA_R_DROP_QP_BUSY].packets;
	if (acc || bad + busy != runs || !flips)
		return snprintf(why, WHY_LEN,
				"%llu packets, %lu rewrites: %llu accepted (want 0), %llu refused, "
				"%llu busy",
				(unsigned long long)runs, flips, (unsigned long long)acc,
				(unsigned long long)bad, (unsigned long long)busy), -1;
	return 0;
}

/* Two CPUs send the same RC PSNs 0..N-1, each in order: every PSN must be
 * accepted exactly once (the other copy is a duplicate), and the expected
 * PSN ends at N. A read-modify-write that is not atomic accepts some twice. */
#define RACE_N 100000
static volatile int race_go;

static void *psn_sender(void *arg)
{
	static __thread __u8 f[XHCA_PKT_MAX];
	long cpu = (long)arg, err = 0;
	struct xhca_pkt_spec s;
	cpu_set_t cpus;
	int len;

	CPU_ZERO(&cpus);
	CPU_SET((int)cpu, &cpus);
	pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	spec_to(&s, RC_SEND, L_RC, 0);
	len = xhca_pkt_build(&s, f, sizeof(f));
	while (!race_go)
		;
	for (__u32 psn = 0; psn < RACE_N && !err; psn++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f, .data_size_in = (__u32)len,
			    .repeat = 1);

		f[14 + 20 + 8 + 9] = (__u8)(psn >> 16);
		f[14 + 20 + 8 + 10] = (__u8)(psn >> 8);
		f[14 + 20 + 8 + 11] = (__u8)psn;
		err = bpf_prog_test_run_opts(E.prog, &o) ? errno : 0;
	}
	return (void *)err;
}

int seq_concurrent_psn(char *why)
{
	struct xhca_qp_ctx c;
	struct snap a, b;
	pthread_t t[2];
	void *rc[2];
	__u64 acc, dup, oos;

	if (qps_reset() || ctx_set_epsn(L_RC, 0) || E.ncpus < 2)
		return snprintf(why, WHY_LEN, "setup"), -1;
	snap_take(&a);
	race_go = 0;
	for (long i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, psn_sender, (void *)i))
			return snprintf(why, WHY_LEN, "thread"), -1;
	race_go = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], &rc[i]);
	snap_take(&b);
	ctx_get(L_RC, &c);
	acc = b.q[L_RC].accepted - a.q[L_RC].accepted;
	dup = b.r[XHCA_R_DROP_PSN_DUP].packets - a.r[XHCA_R_DROP_PSN_DUP].packets;
	oos = b.r[XHCA_R_DROP_PSN_OOS].packets - a.r[XHCA_R_DROP_PSN_OOS].packets;
	if (rc[0] || rc[1] || acc != RACE_N || dup != RACE_N || oos || c.rx_psn != RACE_N)
		return snprintf(why, WHY_LEN,
				"accepted %llu, duplicates %llu, gaps %llu, ePSN %u; want %d, %d, "
				"0, %d", (unsigned long long)acc, (unsigned long long)dup,
				(unsigned long long)oos, c.rx_psn, RACE_N, RACE_N, RACE_N), -1;
	return 0;
}
