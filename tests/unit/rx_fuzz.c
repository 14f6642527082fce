/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * make fuzz: mutated and random frames through xhca_rx, checked after each.
 */
#include "rx.h"

/* ---- fuzzing ------------------------------------------------------------- */

/* xorshift64*: the fuzzer's own generator, so a seed replays a run exactly. */
static __u64 fz_state;

static __u64 fz_rand(void)
{
	fz_state ^= fz_state >> 12;
	fz_state ^= fz_state << 25;
	fz_state ^= fz_state >> 27;
	return fz_state * 0x2545f4914f6cdd1dull;
}

static __u32 fz_below(__u32 n)
{
	return n ? (__u32)(fz_rand() % n) : 0;
}

/* A valid frame of a random known opcode to one of the table's QPs, with
 * fields near what the QP accepts (its ePSN, the write region, its Q_Key),
 * so that mutations reach the checks behind the parser. */
static int fz_valid(__u8 *f, __u32 cap)
{
	struct xhca_pkt_spec s;
	__u32 l = 1 + fz_below(L_NQP - 1), mr = fz_below(6);
	__u8 cls = qps[l].type == XHCA_QPT_UD ? XHCA_OPC_UD
		   : qps[l].type == XHCA_QPT_UC ? XHCA_OPC_UC : XHCA_OPC_RC;
	__u8 op;

	do
		op = (__u8)(cls | fz_below(32));
	while (!(xhca_opinfo_tbl[op].flags & XHCA_O_KNOWN));
	if (fz_below(16) == 0)
		op = (__u8)fz_below(256); /* any opcode, to any QP */
	xhca_pkt_spec_init(&s, op);
	s.dqpn = fz_below(32) ? qps[l].qpn : (fz_below(2) ? XHCA_QPN_MCAST : fz_below(1u << 24));
	s.psn = (EPSN0 + fz_below(8) - 2) & XHCA_PSN_MASK;
	if (fz_below(8) == 0)
		s.psn = fz_below(1u << 24);
	addr(s.src_ip, qps[l].v6, 0);
	addr(s.dst_ip, qps[l].v6, 1);
	s.ipv6 = qps[l].v6;
	s.deth_qkey = qps[l].qkey;
	s.reth_rkey = fz_below(8) ? rkey_of(mr) : (__u32)fz_rand();
	s.reth_va = PRE_IOVA + fz_below(PRE_LEN + 64) - 32;
	s.reth_len = fz_below(4) ? fz_below(4096) : (__u32)fz_rand();
	s.atomic_rkey = s.reth_rkey;
	s.atomic_va = s.reth_va & ~(fz_below(4) ? 7ull : 0ull);
	s.payload_len = (xhca_opinfo_tbl[op].flags & XHCA_O_PAYLOAD) ? fz_below(2100) : 0;
	if (fz_below(4) == 0)
		s.payload_len = s.reth_len < 4096 ? s.reth_len : 1024;
	s.nvlan = fz_below(8) == 0 ? (int)fz_below(3) : 0;
	s.ip_opt_len = !s.ipv6 && fz_below(8) == 0 ? (int)(4 * fz_below(11)) : 0;
	return xhca_pkt_build(&s, f, cap);
}

/* Mutations: bits and bytes anywhere, header bytes set to edge values, the
 * length cut or grown, a run of random bytes; sometimes the IPv4 checksum
 * made right again so that the mutation goes past it. */
static __u32 fz_mutate(__u8 *f, __u32 len, __u32 cap)
{
	static const __u8 edge[] = { 0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff };
	__u32 n = 1 + fz_below(4);

	for (__u32 i = 0; i < n && len; i++) {
		__u32 at = fz_below(8) ? fz_below(len < 96 ? len : 96) : fz_below(len);

		switch (fz_below(6)) {
		case 0:
			f[at] ^= (__u8)(1u << fz_below(8));
			break;
		case 1:
			f[at] = (__u8)fz_rand();
			break;
		case 2:
			f[at] = edge[fz_below(sizeof(edge))];
			break;
		case 3:
			len = fz_below(len + 1);
			break;
		case 4: {
			__u32 grow = fz_below(64);

			if (len + grow <= cap) {
				for (__u32 k = 0; k < grow; k++)
					f[len + k] = (__u8)fz_rand();
				len += grow;
			}
			break;
		}
		default:
			for (__u32 k = at; k < len && k < at + 8; k++)
				f[k] = (__u8)fz_rand();
		}
	}
	if (len >= 34 && f[12] == 0x08 && f[13] == 0x00 && (f[14] >> 4) == 4 &&
	    14 + (f[14] & 15u) * 4 <= len && fz_below(2))
		ip4_csum_fix(f + 14);
	return len;
}

/* One frame through xhca_rx: it returned, exactly one reason counted it
 * (once, its bytes), the verdict is the reason's; host memory outside the
 * write region holds the canary, and inside it changed only for a frame
 * counted as placed. Returns the reason, or -1 with why. */
static int fz_one(const __u8 *f, __u32 len, __u8 *before, char *why)
{
	static __u8 canary[HM_PAGES * 4096];
	const __u64 end = PRE_BASE + PRE_LEN, total = HM_PAGES * 4096ull;
	int placed, got;

	if (canary[0] != CANARY)
		memset(canary, CANARY, sizeof(canary));
	memcpy(before, hm + PRE_BASE, PRE_LEN);
	got = run(f, len, -1, ANY_QP, why);
	if (got < 0)
		return -1;
	placed = got == XHCA_R_PLACED || got == XHCA_R_PLACED_ACK || got == XHCA_R_PLACED_TO_FLOWQ;
	if (memcmp(hm, canary, PRE_BASE) || memcmp(hm + end, canary, total - end))
		return snprintf(why, WHY_LEN, "%s: host memory outside the region was written",
				rname[got]), -1;
	if (!placed && memcmp(hm + PRE_BASE, before, PRE_LEN))
		return snprintf(why, WHY_LEN, "%s: the region changed for a frame not placed",
				rname[got]), -1;
	return got;
}

/* n frames from seed: a fifth valid, the rest mutated, one in 32 random
 * bytes; the QPs and regions set up again every 64 frames (RC QPs go to
 * the error state quickly). Prints what it did; 0 when every frame passed. */
int fuzz_frames(unsigned long n, unsigned long long seed)
{
	static __u8 f[XHCA_PKT_MAX + 64], before[HM_PAGES * 4096];
	unsigned long reasons[XHCA_R_MAX] = { 0 }, i;
	char why[WHY_LEN] = "";
	int distinct = 0, err = 0;

	fz_state = seed ? seed : 1;
	for (i = 0; i < n && !err; i++) {
		int len, got;

		if (i % 64 == 0) {
			if (qps_reset())
				return snprintf(why, WHY_LEN, "write QPs"), result(0, "fuzz: %s", why), 1;
			mrs_reset();
		}
		if (fz_below(32) == 0) {
			len = (int)(1 + fz_below(1500));
			for (int k = 0; k < len; k++)
				f[k] = (__u8)fz_rand();
		} else {
			len = fz_valid(f, XHCA_PKT_MAX);
			if (len < 0)
				continue;
			if (fz_below(5))
				len = (int)fz_mutate(f, (__u32)len, sizeof(f));
		}
		if (len < 14) /* BPF_PROG_TEST_RUN takes no less than an Ethernet header */
			len = 14;
		got = fz_one(f, (__u32)len, before, why);
		if (got < 0)
			err = 1;
		else
			reasons[got]++;
	}
	for (int r = 0; r < XHCA_R_MAX; r++)
		distinct += !!reasons[r];
	if (err) {
		result(0, "fuzz: frame %lu of seed %llu: %s", i - 1, seed, why);
		return 1;
	}
	result(1, "fuzz: %lu frames (seed %llu) through xhca_rx: each counted once under one of %d reasons, verdicts consistent, nothing outside the region, nothing placed for a frame not placed",
		       n, seed, distinct);
	return 0;
}

unsigned long rx_fuzz_n = 20000; /* make fuzz runs millions, from any seed */
unsigned long long rx_fuzz_seed = 1;

/* rx/fuzz: rx_fuzz_n frames from rx_fuzz_seed (test_unit --fuzz N SEED) */
void rx_fuzz(void)
{
	fuzz_frames(rx_fuzz_n, rx_fuzz_seed);
}
