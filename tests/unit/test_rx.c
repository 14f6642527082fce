/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca_rx under BPF_PROG_TEST_RUN: a table of {packet, QP, expected reason},
 * with a case for every reason of the enum (checked at the end), and
 * sequences that need state: PSN wrap at 2^24, UC gaps, READ PSN cost,
 * destroy and re-create with stale generations, truncation at every byte of
 * the headers, and every one of the 256 opcodes.
 *
 * Every run checks what every packet must satisfy: exactly one reason counter
 * moved, by one packet and the frame's bytes; the verdict is the reason's;
 * the frame came out unchanged; the per-QP counters moved only for packets
 * that reached a valid QP context.
 *
 * The test writes the maps itself, as xhcad would: it is the program under
 * test here, not the daemon.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <linux/bpf.h>
#include <linux/if_xdp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xhca/abi.h>
#include <xhca/pkt.h>
#include <xhca/qpctx.h>
#include <xhca/wire.h>
#include "xhca.skel.h"
#include "tests.h"

/* The tables name their first fields by position and leave the rest zero. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define TQ 64 /* local QPs of the object under test */
#define HM_PAGES 16 /* its host memory */
#define WHY_LEN 256

#define XHCA_REASON_STR(name, str, desc) str,
static const char *const rname[XHCA_R_MAX] = { XHCA_REASONS(XHCA_REASON_STR) };
#undef XHCA_REASON_STR

static struct {
	struct xhca *skel;
	int prog, cam, ctx, stats, qp_stats, pkeys;
	struct xhca_qp_ctx *ctxm; /* the context map, mapped as xhcad maps it */
	int ncpus;
	unsigned char hit[XHCA_R_MAX]; /* reasons some case produced */
	int fails;
} E;

/* ---- the QPs every table case starts from -------------------------------- */

enum {
	L_RC = 1, L_UC, L_UD, L_RC6, L_GSI, L_RC_RESET, L_RC_INIT, L_RC_RTS, L_RC_SQD, L_RC_ERR,
	L_RC_PASS, L_RC_LIM, L_UD_LIM, L_STALE, L_INVALID, L_UD_HOST, L_RC_HOST, L_RCW, L_UCW,
	L_NQP,
};
#define FQ_SOCK 3	/* the flow queue with a socket (on lo, RX queue 0) */
#define FQ_NOSOCK 5
#define QPN(l) (0x100u + (l))
#define EPSN0 0x000500u /* expected PSN every RC/UC QP starts with */
#define UD_QKEY 0x11111111u

struct qp_def {
	__u32 qpn;
	__u8 type, state, action, v6;
	__u16 pkey;
	__u32 qkey;
	int cam_gen_off; /* CAM generation minus context generation */
	int invalid;
	__u8 flowq;
	__u32 pd;
};

static const struct qp_def qps[L_NQP] = {
	[L_RC] = { QPN(L_RC), XHCA_QPT_RC, XHCA_QPS_RTR, XHCA_ACT_DROP, 0, 0xffff, 0 },
	[L_UC] = { QPN(L_UC), XHCA_QPT_UC, XHCA_QPS_RTR, XHCA_ACT_DROP, 0, 0xffff, 0 },
	[L_UD] = { QPN(L_UD), XHCA_QPT_UD, XHCA_QPS_RTS, XHCA_ACT_DROP, 0, 0xffff, UD_QKEY },
	[L_RC6] = { QPN(L_RC6), XHCA_QPT_RC, XHCA_QPS_RTR, XHCA_ACT_DROP, 1, 0xffff, 0 },
	[L_GSI] = { XHCA_QPN_GSI, XHCA_QPT_UD, XHCA_QPS_RTS, XHCA_ACT_DROP, 0, 0xffff,
		    XHCA_GSI_QKEY },
	[L_RC_RESET] = { QPN(L_RC_RESET), XHCA_QPT_RC, XHCA_QPS_RESET, XHCA_ACT_DROP, 0, 0xffff },
	[L_RC_INIT] = { QPN(L_RC_INIT), XHCA_QPT_RC, XHCA_QPS_INIT, XHCA_ACT_DROP, 0, 0xffff },
	[L_RC_RTS] = { QPN(L_RC_RTS), XHCA_QPT_RC, XHCA_QPS_RTS, XHCA_ACT_DROP, 0, 0xffff },
	[L_RC_SQD] = { QPN(L_RC_SQD), XHCA_QPT_RC, XHCA_QPS_SQD, XHCA_ACT_DROP, 0, 0xffff },
	[L_RC_ERR] = { QPN(L_RC_ERR), XHCA_QPT_RC, XHCA_QPS_ERR, XHCA_ACT_DROP, 0, 0xffff },
	[L_RC_PASS] = { QPN(L_RC_PASS), XHCA_QPT_RC, XHCA_QPS_RTR, XHCA_ACT_PASS, 0, 0xffff },
	/* limited members of partition 0x0123 */
	[L_RC_LIM] = { QPN(L_RC_LIM), XHCA_QPT_RC, XHCA_QPS_RTR, XHCA_ACT_DROP, 0, 0x0123 },
	[L_UD_LIM] = { QPN(L_UD_LIM), XHCA_QPT_UD, XHCA_QPS_RTR, XHCA_ACT_DROP, 0, 0x0123,
		       UD_QKEY },
	[L_STALE] = { QPN(L_STALE), XHCA_QPT_RC, XHCA_QPS_RTR, XHCA_ACT_DROP, 0, 0xffff, 0, -1 },
	[L_INVALID] = { QPN(L_INVALID), XHCA_QPT_RC, XHCA_QPS_RTR, XHCA_ACT_DROP, 0, 0xffff, 0, 0,
			1 },
	[L_UD_HOST] = { QPN(L_UD_HOST), XHCA_QPT_UD, XHCA_QPS_RTS, XHCA_ACT_HOST, 0, 0xffff, UD_QKEY,
			0, 0, FQ_SOCK },
	[L_RC_HOST] = { QPN(L_RC_HOST), XHCA_QPT_RC, XHCA_QPS_RTR, XHCA_ACT_HOST, 0, 0xffff, 0, 0, 0,
			FQ_NOSOCK },
	/* the RDMA WRITE targets: host QPs of protection domain 7 */
	[L_RCW] = { QPN(L_RCW), XHCA_QPT_RC, XHCA_QPS_RTR, XHCA_ACT_HOST, 0, 0xffff, 0, 0, 0, FQ_SOCK,
		    7 },
	[L_UCW] = { QPN(L_UCW), XHCA_QPT_UC, XHCA_QPS_RTR, XHCA_ACT_HOST, 0, 0xffff, 0, 0, 0, FQ_SOCK,
		    7 },
};

static void addr(__u8 out[16], int v6, int local)
{
	xhca_ip_parse(v6 ? (local ? "fd00::2" : "fd00::1") : (local ? "10.0.0.2" : "10.0.0.1"),
		      out);
}

/* Writes one QP as xhcad does: context (seqcount write section), then CAM. */
static __u8 next_flowq; /* of the next qp_write */
static __u32 next_pd;

static int qp_write(__u32 lidx, __u32 qpn, __u32 ctx_gen, __u32 cam_gen, int valid, __u8 type,
		    __u8 state, __u8 action, __u16 pkey, __u32 qkey, int v6, __u32 epsn)
{
	struct xhca_qp_ctx c = {};
	struct xhca_cam_val v = { .lidx = lidx, .gen = cam_gen };

	c.gen = ctx_gen;
	c.gqpn = qpn;
	c.valid = (__u8)valid;
	c.type = type;
	c.state = state;
	c.action = action;
	c.pkey = pkey;
	c.qkey = qkey;
	c.mtu_shift = 10;
	c.rx_psn = epsn;
	c.flowq = next_flowq;
	c.pd = next_pd;
	next_flowq = 0;
	next_pd = 0;
	c.flags = v6 ? XHCA_QPF_IPV6 : 0;
	addr(c.local_ip, v6, 1);
	addr(c.remote_ip, v6, 0);
	xhca_qpctx_store(&E.ctxm[lidx], &c, 1);
	if (bpf_map_update_elem(E.cam, &qpn, &v, 0))
		return -errno;
	return 0;
}

static int qps_reset(void)
{
	for (__u32 l = 1; l < L_NQP; l++) {
		const struct qp_def *q = &qps[l];
		int err;

		next_flowq = q->flowq;
		next_pd = q->pd;
		err = qp_write(l, q->qpn, 10, 10 + q->cam_gen_off, !q->invalid, q->type,
				   q->state, q->action, q->pkey, q->qkey, q->v6, EPSN0);

		if (err)
			return err;
	}
	return 0;
}

static __u32 lidx_of(__u32 qpn)
{
	for (__u32 l = 1; l < L_NQP; l++)
		if (qps[l].qpn == qpn)
			return l;
	return 0;
}

static int ctx_get(__u32 lidx, struct xhca_qp_ctx *c)
{
	xhca_qpctx_load(&E.ctxm[lidx], c);
	c->rx_psn &= XHCA_RXPSN_MASK;
	return 0;
}

static int ctx_set_epsn(__u32 lidx, __u32 epsn)
{
	struct xhca_qp_ctx c;

	xhca_qpctx_load(&E.ctxm[lidx], &c);
	c.rx_psn = epsn;
	xhca_qpctx_store(&E.ctxm[lidx], &c, 1);
	return 0;
}

/* ---- counters ------------------------------------------------------------ */

struct snap {
	struct xhca_counter r[XHCA_R_MAX];
	struct xhca_qp_counter q[L_NQP];
};

static int snap_take(struct snap *s)
{
	static struct xhca_qp_counter qv[TQ * 512];
	static struct xhca_counter v[XHCA_R_MAX * 512];
	static __u32 keys[(int)XHCA_R_MAX > TQ ? (int)XHCA_R_MAX : TQ];
	__u32 n = XHCA_R_MAX, out;
	LIBBPF_OPTS(bpf_map_batch_opts, bo);

	if (E.ncpus > 512)
		return -E2BIG;
	memset(s, 0, sizeof(*s));
	/* one system call per map: the fuzzer takes two snapshots a frame */
	if (bpf_map_lookup_batch(E.stats, NULL, &out, keys, v, &n, &bo) && errno != ENOENT)
		return -errno;
	if (n != XHCA_R_MAX)
		return -EIO;
	for (__u32 k = 0; k < XHCA_R_MAX; k++)
		for (int i = 0; i < E.ncpus; i++) {
			s->r[keys[k]].packets += v[k * E.ncpus + i].packets;
			s->r[keys[k]].bytes += v[k * E.ncpus + i].bytes;
		}
	n = TQ;
	if (bpf_map_lookup_batch(E.qp_stats, NULL, &out, keys, qv, &n, &bo) && errno != ENOENT)
		return -errno;
	for (__u32 k = 0; k < n; k++) {
		if (keys[k] >= L_NQP)
			continue;
		for (int i = 0; i < E.ncpus; i++) {
			const struct xhca_qp_counter *c = &qv[k * E.ncpus + i];

			s->q[keys[k]].accepted += c->accepted;
			s->q[keys[k]].accepted_bytes += c->accepted_bytes;
			s->q[keys[k]].dropped += c->dropped;
			s->q[keys[k]].dropped_bytes += c->dropped_bytes;
		}
	}
	return 0;
}

static int is_pass_reason(int r)
{
	return r == XHCA_R_PASS_NOT_ROCE || r == XHCA_R_PASS_TRUNCATED ||
	       r == XHCA_R_PASS_VLAN_DEPTH || r == XHCA_R_PASS_IPV6_EXT ||
	       r == XHCA_R_PASS_IP_FRAG || r == XHCA_R_ACCEPT_PASS;
}

/* Reasons given after the QP context was found valid: they count per QP. */
static int is_redirect_reason(int r)
{
	return r == XHCA_R_TO_FLOWQ || r == XHCA_R_PLACED_TO_FLOWQ || r == XHCA_R_TO_XLATE ||
	       r == XHCA_R_TO_MCAST || r == XHCA_R_TO_MCAST_DEVS || r == XHCA_R_TO_PROXY ||
	       r == XHCA_R_PLACED_ACK || r == XHCA_R_DUP_TO_FLOWQ || r == XHCA_R_SEQ_NAK_TO_FLOWQ;
}

/* Redirected to be answered, not taken: they count as the QP's drops. */
static int answered_reason(int r)
{
	return r == XHCA_R_DUP_TO_FLOWQ || r == XHCA_R_SEQ_NAK_TO_FLOWQ;
}

static int qp_accepted_reason(int r)
{
	return r == XHCA_R_ACCEPT_PASS || r == XHCA_R_ACCEPT_DROP || r == XHCA_R_CNP ||
	       (is_redirect_reason(r) && !answered_reason(r)) || r == XHCA_R_PLACED;
}

static int qp_dropped_reason(int r)
{
	return r == XHCA_R_DROP_OPCODE_TYPE || r == XHCA_R_DROP_QP_STATE || r == XHCA_R_DROP_ADDR ||
	       r == XHCA_R_DROP_PKEY || r == XHCA_R_DROP_QKEY || r == XHCA_R_DROP_UD_MTU ||
	       r == XHCA_R_DROP_PSN_DUP ||
	       r == XHCA_R_DROP_PSN_OOS || r == XHCA_R_DROP_UC_GAP || r == XHCA_R_DROP_NO_SOCKET ||
	       r == XHCA_R_DROP_FLOWQ_GATE || r == XHCA_R_DROP_META || r == XHCA_R_DROP_PROXY_NOCQ ||
	       answered_reason(r) ||
	       (r >= XHCA_R_DROP_MR_RKEY && r <= XHCA_R_DROP_ATOMIC_ALIGN);
}

/*
 * Runs one frame through xhca_rx and checks the invariants of every packet.
 * want: the reason expected, or -1 to accept any (the reason is returned).
 * qp_lidx: the context the packet is addressed to (0: none), for the per-QP
 * counters. Returns the reason, or -1 with why filled.
 */
static struct xhca_rx_meta last_meta; /* of the last packet sent to a flow queue */


#define ANY_QP 0xffffffffu /* run's qp_lidx: the QP the frame names, whichever */

static int run(const void *frame, __u32 len, int want, __u32 qp_lidx, char *why)
{
	static __u8 out[XHCA_PKT_MAX + 256];
	__u32 mlen;
	struct snap a, b;
	int got = -1, moved = 0, any_moved = 0;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = len, .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1);

	if (snap_take(&a)) {
		snprintf(why, WHY_LEN, "read counters: %s", strerror(errno));
		return -1;
	}
	if (bpf_prog_test_run_opts(E.prog, &o)) {
		snprintf(why, WHY_LEN, "test run: %s", strerror(errno));
		return -1;
	}
	if (snap_take(&b)) {
		snprintf(why, WHY_LEN, "read counters: %s", strerror(errno));
		return -1;
	}
	for (int r = 0; r < XHCA_R_MAX; r++) {
		__u64 dp = b.r[r].packets - a.r[r].packets, db = b.r[r].bytes - a.r[r].bytes;

		if (!dp && !db)
			continue;
		moved++;
		got = r;
		if (dp != 1 || db != len) {
			snprintf(why, WHY_LEN, "%s moved by %llu packets / %llu bytes, want 1 / %u",
				 rname[r], (unsigned long long)dp, (unsigned long long)db, len);
			return -1;
		}
	}
	if (moved != 1) {
		snprintf(why, WHY_LEN, "%d reason counters moved, want exactly 1", moved);
		return -1;
	}
	E.hit[got] = 1;
	if (want >= 0 && got != want) {
		snprintf(why, WHY_LEN, "reason %s, want %s", rname[got], rname[want]);
		return -1;
	}
	if (o.retval != (is_redirect_reason(got) ? XDP_REDIRECT
						  : is_pass_reason(got) ? XDP_PASS : XDP_DROP)) {
		snprintf(why, WHY_LEN, "verdict %u for reason %s", o.retval, rname[got]);
		return -1;
	}
	/* The output starts at data_meta: a redirected frame carries the
	 * metadata block in front, and nothing else may change. */
	/* (the function ports get the frame as it came) */
	mlen = is_redirect_reason(got) && got != XHCA_R_TO_MCAST_DEVS ? sizeof(struct xhca_rx_meta)
								       : 0;
	if (mlen && o.data_size_out >= mlen)
		memcpy(&last_meta, out, mlen);
	if (o.data_size_out != len + mlen || memcmp(out + mlen, frame, len)) {
		snprintf(why, WHY_LEN, "the frame was modified (%u bytes out of %u)", o.data_size_out,
			 len);
		return -1;
	}
	for (__u32 l = 0; l < L_NQP; l++) {
		__u64 da = b.q[l].accepted - a.q[l].accepted, dd = b.q[l].dropped - a.q[l].dropped;
		__u64 wa = l && l == qp_lidx && qp_accepted_reason(got);
		__u64 wd = l && l == qp_lidx && qp_dropped_reason(got);

		/* ANY_QP (the fuzzer): whichever QP the frame names */
		if (qp_lidx == ANY_QP && (da || dd)) {
			wa = da && qp_accepted_reason(got) && !any_moved;
			wd = dd && qp_dropped_reason(got) && !any_moved;
			any_moved = 1;
		}

		if (da != wa || dd != wd) {
			snprintf(why, WHY_LEN,
				 "QP slot %u counters: accepted +%llu dropped +%llu, want +%llu +%llu",
				 l, (unsigned long long)da, (unsigned long long)dd,
				 (unsigned long long)wa, (unsigned long long)wd);
			return -1;
		}
		if ((wa && b.q[l].accepted_bytes - a.q[l].accepted_bytes != len) ||
		    (wd && b.q[l].dropped_bytes - a.q[l].dropped_bytes != len)) {
			snprintf(why, WHY_LEN, "QP slot %u byte counters off", l);
			return -1;
		}
	}
	return got;
}

static void result(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void result(int ok, const char *fmt, ...)
{
	va_list ap;

	fputs(ok ? "ok - rx: " : "not ok - rx: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!ok)
		E.fails++;
}

/* ---- the table ----------------------------------------------------------- */

/* The IPv4 header checksum of ip, set again after an edit. */
static void ip4_csum_fix(__u8 *ip)
{
	__u32 sum = 0, hlen = (ip[0] & 15u) * 4;

	ip[10] = ip[11] = 0;
	for (__u32 i = 0; i < hlen; i += 2)
		sum += (__u32)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = ~sum & 0xffff;
	ip[10] = (__u8)(sum >> 8);
	ip[11] = (__u8)sum;
}

/* Frame edits the builder has no field for. */
enum raw_edit {
	RAW_NONE,
	RAW_THREE_VLANS,	/* a third tag inside two */
	RAW_IHL4,		/* IPv4 IHL below 5 */
	RAW_PAD_NO_ROOM,	/* PadCnt 3 without the pad bytes */
	RAW_ETH_ONLY,		/* 14 bytes: an IPv4 ethertype and nothing else */
	RAW_ETH_PAD,		/* Ethernet padding after the UDP datagram, up to 60 bytes */
	RAW_IP_CSUM,		/* IPv4 header checksum off by one */
	RAW_IP_SHORT,		/* IPv4 total length 4 short of the UDP datagram (checksum right) */
	RAW_IP_LONG,		/* IPv4 total length 4 past the frame (checksum right) */
	RAW_IP6_SHORT,		/* IPv6 payload length 4 short of the UDP datagram */
};

struct rx_case {
	const char *name;
	__u8 opcode;
	__u32 qpn;
	int reason;
	__u32 psn;		/* 0 = EPSN0 */
	__u16 pkey;		/* 0 = 0xffff */
	__u32 qkey;		/* 0 = UD_QKEY */
	int v6, nvlan, ip_opt_len, tver, ipv6_hbh, pkey_zero;
	int empty;		/* no payload, even for opcodes that carry one */
	__u8 ip_proto, ipv6_nexthdr;
	__u16 ethertype, dport, frag_off;
	int udp_len_delta;
	__u32 reth_len, payload_len;
	const char *src; /* source address instead of the QP's remote one */
	enum raw_edit raw;
	__s64 want_epsn; /* the QP's expected PSN after, when non-zero */
};

#define RC_SEND (XHCA_OPC_RC | XHCA_OP_SEND_ONLY)
#define UC_SEND (XHCA_OPC_UC | XHCA_OP_SEND_ONLY)
#define UD_SEND (XHCA_OPC_UD | XHCA_OP_SEND_ONLY)
#define R(x) XHCA_R_##x

static const struct rx_case cases[] = {
	/* not RoCEv2: given to the kernel untouched */
	{ "ARP ethertype", RC_SEND, QPN(L_RC), R(PASS_NOT_ROCE), .ethertype = 0x0806 },
	{ "IPv4 TCP", RC_SEND, QPN(L_RC), R(PASS_NOT_ROCE), .ip_proto = 6 },
	{ "UDP to port 4792", RC_SEND, QPN(L_RC), R(PASS_NOT_ROCE), .dport = 4792 },
	{ "IPv6 ICMPv6", RC_SEND, QPN(L_RC6), R(PASS_NOT_ROCE), .v6 = 1, .ip_proto = 58 },
	{ "IPv4 IHL 4", RC_SEND, QPN(L_RC), R(PASS_NOT_ROCE), .raw = RAW_IHL4 },
	{ "Ethernet header only", RC_SEND, QPN(L_RC), R(PASS_TRUNCATED), .raw = RAW_ETH_ONLY },
	{ "three VLAN tags", RC_SEND, QPN(L_RC), R(PASS_VLAN_DEPTH), .nvlan = 2,
	  .raw = RAW_THREE_VLANS },
	{ "IPv6 hop-by-hop header", RC_SEND, QPN(L_RC6), R(PASS_IPV6_EXT), .v6 = 1, .ipv6_hbh = 1 },
	{ "IPv6 routing header", RC_SEND, QPN(L_RC6), R(PASS_IPV6_EXT), .v6 = 1,
	  .ipv6_nexthdr = 43 },
	{ "IPv4 non-first fragment", RC_SEND, QPN(L_RC), R(PASS_IP_FRAG), .frag_off = 0x0010 },
	{ "IPv4 first fragment (MF)", RC_SEND, QPN(L_RC), R(DROP_IP_FRAG), .frag_off = 0x2000 },
	/* malformed RoCEv2 */
	{ "UDP length beyond the frame", RC_SEND, QPN(L_RC), R(DROP_TRUNCATED),
	  .udp_len_delta = 8 },
	{ "IPv4 header checksum wrong", RC_SEND, QPN(L_RC), R(DROP_IP_CSUM), .raw = RAW_IP_CSUM },
	{ "IPv4 checksum wrong, with options", RC_SEND, QPN(L_RC), R(DROP_IP_CSUM),
	  .ip_opt_len = 40, .raw = RAW_IP_CSUM },
	{ "IPv4 total length short of the UDP datagram", RC_SEND, QPN(L_RC), R(DROP_IP_LENGTH),
	  .raw = RAW_IP_SHORT },
	{ "IPv4 total length past the frame", RC_SEND, QPN(L_RC), R(DROP_TRUNCATED),
	  .raw = RAW_IP_LONG },
	{ "IPv6 payload length short of the UDP datagram", RC_SEND, QPN(L_RC6),
	  R(DROP_IP_LENGTH), .v6 = 1, .raw = RAW_IP6_SHORT },
	{ "UD payload over the path MTU (1024)", UD_SEND, QPN(L_UD), R(DROP_UD_MTU),
	  .payload_len = 1025 },
	{ "UD payload of the path MTU", UD_SEND, QPN(L_UD), R(ACCEPT_DROP), .payload_len = 1024 },
	{ "reserved RC opcode 0x18", 0x18, QPN(L_RC), R(DROP_UNKNOWN_OPCODE) },
	{ "reserved RC opcode 0x15", 0x15, QPN(L_RC), R(DROP_UNKNOWN_OPCODE) },
	{ "RD opcode 0x44", 0x44, QPN(L_RC), R(DROP_UNKNOWN_OPCODE) },
	{ "XRC opcode 0xa4", 0xa4, QPN(L_RC), R(DROP_UNKNOWN_OPCODE) },
	{ "opcode 0xff to QPN 0xffffff", 0xff, XHCA_QPN_MCAST, R(DROP_UNKNOWN_OPCODE) },
	{ "opcode 0x80", 0x80, QPN(L_RC), R(DROP_UNKNOWN_OPCODE) },
	{ "UDP length short of the RETH", XHCA_OPC_RC | XHCA_OP_WRITE_ONLY, QPN(L_RC),
	  R(DROP_BAD_LENGTH), .udp_len_delta = -1, .empty = 1 },
	{ "UDP length short of the ICRC", RC_SEND, QPN(L_RC), R(DROP_BAD_LENGTH),
	  .udp_len_delta = -1, .empty = 1 },
	{ "PadCnt 3 without pad bytes", RC_SEND, QPN(L_RC), R(DROP_BAD_LENGTH),
	  .raw = RAW_PAD_NO_ROOM, .empty = 1 },
	{ "PadCnt 3 with a 13-byte payload", RC_SEND, QPN(L_RC), R(ACCEPT_DROP),
	  .raw = RAW_PAD_NO_ROOM },
	{ "TVer 1", RC_SEND, QPN(L_RC), R(DROP_BAD_TVER), .tver = 1 },
	{ "TVer 15", UD_SEND, QPN(L_UD), R(DROP_BAD_TVER), .tver = 15 },
	/* QPN checks */
	{ "destination QP 0", RC_SEND, 0, R(DROP_QP0) },
	{ "destination QP 0xffffff to a unicast address", UD_SEND, XHCA_QPN_MCAST,
	  R(DROP_MCAST_ADDR) },
	{ "unknown QPN", RC_SEND, 0xabcdef, R(DROP_CAM_MISS) },
	{ "CNP to an unknown QPN", XHCA_OP_CNP, 0xabcdef, R(DROP_CAM_MISS) },
	{ "CAM generation != context generation", RC_SEND, QPN(L_STALE), R(DROP_STALE) },
	{ "CAM points at an invalid context", RC_SEND, QPN(L_INVALID), R(DROP_STALE) },
	/* opcode class vs QP type */
	{ "UD SEND to an RC QP", UD_SEND, QPN(L_RC), R(DROP_OPCODE_TYPE) },
	{ "UC SEND to an RC QP", UC_SEND, QPN(L_RC), R(DROP_OPCODE_TYPE) },
	{ "RC SEND to a UD QP", RC_SEND, QPN(L_UD), R(DROP_OPCODE_TYPE) },
	{ "RC SEND to a UC QP", RC_SEND, QPN(L_UC), R(DROP_OPCODE_TYPE) },
	/* state */
	{ "SEND to an RC QP in RESET", RC_SEND, QPN(L_RC_RESET), R(DROP_QP_STATE) },
	{ "SEND to an RC QP in INIT", RC_SEND, QPN(L_RC_INIT), R(DROP_QP_STATE) },
	{ "SEND to an RC QP in ERR", RC_SEND, QPN(L_RC_ERR), R(DROP_QP_STATE) },
	{ "ACK to an RC QP in RTR", XHCA_OPC_RC | XHCA_OP_ACK, QPN(L_RC), R(DROP_QP_STATE) },
	{ "READ response to an RC QP in RTR", XHCA_OPC_RC | XHCA_OP_READ_RESP_ONLY, QPN(L_RC),
	  R(DROP_QP_STATE) },
	{ "ACK to an RC QP in RTS", XHCA_OPC_RC | XHCA_OP_ACK, QPN(L_RC_RTS), R(ACCEPT_DROP),
	  .want_epsn = EPSN0 },
	{ "ATOMIC ACK to an RC QP in RTS", XHCA_OPC_RC | XHCA_OP_ATOMIC_ACK, QPN(L_RC_RTS),
	  R(ACCEPT_DROP) },
	{ "READ response to an RC QP in RTS", XHCA_OPC_RC | XHCA_OP_READ_RESP_FIRST,
	  QPN(L_RC_RTS), R(ACCEPT_DROP) },
	{ "SEND to an RC QP in RTS", RC_SEND, QPN(L_RC_RTS), R(ACCEPT_DROP) },
	{ "SEND to an RC QP in SQD", RC_SEND, QPN(L_RC_SQD), R(ACCEPT_DROP) },
	/* addresses */
	{ "RC from another source address", RC_SEND, QPN(L_RC), R(DROP_ADDR), .src = "10.0.0.9" },
	{ "IPv6 SEND to an IPv4 QP", RC_SEND, QPN(L_RC), R(DROP_ADDR), .v6 = 1 },
	{ "IPv4 SEND to an IPv6 QP", RC_SEND, QPN(L_RC6), R(DROP_ADDR) },
	{ "UC from another source address", UC_SEND, QPN(L_UC), R(DROP_ADDR), .src = "10.0.0.9" },
	{ "UD from any source address", UD_SEND, QPN(L_UD), R(ACCEPT_DROP), .src = "10.0.0.9" },
	/* P_Key: same partition, not 0, at least one full member */
	{ "limited P_Key to a full-member QP", RC_SEND, QPN(L_RC), R(ACCEPT_DROP),
	  .pkey = 0x7fff },
	{ "full P_Key to a limited QP", RC_SEND, QPN(L_RC_LIM), R(ACCEPT_DROP), .pkey = 0x8123 },
	{ "limited P_Key to a limited QP", RC_SEND, QPN(L_RC_LIM), R(DROP_PKEY), .pkey = 0x0123 },
	{ "limited P_Key to a limited UD QP", UD_SEND, QPN(L_UD_LIM), R(DROP_PKEY),
	  .pkey = 0x0123 },
	{ "another partition", RC_SEND, QPN(L_RC), R(DROP_PKEY), .pkey = 0x8001 },
	{ "P_Key 0", RC_SEND, QPN(L_RC), R(DROP_PKEY), .pkey_zero = 1 },
	{ "P_Key 0x8000 (partition 0)", RC_SEND, QPN(L_RC_LIM), R(DROP_PKEY), .pkey = 0x8000 },
	{ "QP1: P_Key in the table (index 1, full 0x8123)", UD_SEND, XHCA_QPN_GSI,
	  R(ACCEPT_DROP), .pkey = 0x0123, .qkey = XHCA_GSI_QKEY },
	{ "QP1: P_Key not in the table", UD_SEND, XHCA_QPN_GSI, R(DROP_PKEY), .pkey = 0x8456,
	  .qkey = XHCA_GSI_QKEY },
	/* Q_Key */
	{ "UD wrong Q_Key", UD_SEND, QPN(L_UD), R(DROP_QKEY), .qkey = 0x22222222 },
	{ "QP1 with a Q_Key other than 0x80010000", UD_SEND, XHCA_QPN_GSI, R(DROP_QKEY) },
	{ "UD SEND with immediate", XHCA_OPC_UD | XHCA_OP_SEND_ONLY_IMM, QPN(L_UD),
	  R(ACCEPT_DROP) },
	/* RC PSN */
	{ "RC SEND at the expected PSN", RC_SEND, QPN(L_RC), R(ACCEPT_DROP),
	  .want_epsn = EPSN0 + 1 },
	{ "RC duplicate (ePSN - 1)", RC_SEND, QPN(L_RC), R(DROP_PSN_DUP), .psn = EPSN0 - 1,
	  .want_epsn = EPSN0 },
	{ "RC duplicate from before the 2^24 wrap", RC_SEND, QPN(L_RC), R(DROP_PSN_DUP),
	  .psn = 0xf00000, .want_epsn = EPSN0 },
	{ "RC PSN gap (ePSN + 1)", RC_SEND, QPN(L_RC), R(DROP_PSN_OOS), .psn = EPSN0 + 1,
	  .want_epsn = EPSN0 },
	{ "RC PSN far ahead", RC_SEND, QPN(L_RC), R(DROP_PSN_OOS), .psn = EPSN0 + 0x7fff00,
	  .want_epsn = EPSN0 },
	{ "RC WRITE ONLY with immediate", XHCA_OPC_RC | XHCA_OP_WRITE_ONLY_IMM, QPN(L_RC),
	  R(ACCEPT_DROP), .reth_len = 64, .payload_len = 64, .want_epsn = EPSN0 + 1 },
	{ "RC WRITE FIRST", XHCA_OPC_RC | XHCA_OP_WRITE_FIRST, QPN(L_RC), R(ACCEPT_DROP),
	  .reth_len = 4096, .payload_len = 1024, .want_epsn = EPSN0 + 1 },
	{ "RC READ request of 8 KiB at MTU 1024 costs 8 PSNs", XHCA_OPC_RC | XHCA_OP_READ_REQ,
	  QPN(L_RC), R(ACCEPT_DROP), .reth_len = 8192, .want_epsn = EPSN0 + 8 },
	{ "RC READ request of 8193 B costs 9 PSNs", XHCA_OPC_RC | XHCA_OP_READ_REQ, QPN(L_RC),
	  R(ACCEPT_DROP), .reth_len = 8193, .want_epsn = EPSN0 + 9 },
	{ "RC READ request of 0 B costs 1 PSN", XHCA_OPC_RC | XHCA_OP_READ_REQ, QPN(L_RC),
	  R(ACCEPT_DROP), .reth_len = 0, .want_epsn = EPSN0 + 1 },
	{ "RC READ request of 4 GiB - 1 B", XHCA_OPC_RC | XHCA_OP_READ_REQ, QPN(L_RC),
	  R(ACCEPT_DROP), .reth_len = 0xffffffff, .want_epsn = (EPSN0 + 0x400000) & 0xffffff },
	{ "RC CMP_SWAP", XHCA_OPC_RC | XHCA_OP_CMP_SWAP, QPN(L_RC), R(ACCEPT_DROP) },
	{ "RC FETCH_ADD", XHCA_OPC_RC | XHCA_OP_FETCH_ADD, QPN(L_RC), R(ACCEPT_DROP) },
	{ "RC SEND ONLY with invalidate", XHCA_OPC_RC | XHCA_OP_SEND_ONLY_INV, QPN(L_RC),
	  R(ACCEPT_DROP) },
	{ "RC duplicate on a QP in SQD", RC_SEND, QPN(L_RC_SQD), R(DROP_PSN_DUP),
	  .psn = EPSN0 - 5 },
	/* UC and UD: no duplicate check */
	{ "UC SEND ONLY at another PSN starts a message", UC_SEND, QPN(L_UC), R(ACCEPT_DROP),
	  .psn = 0x123, .want_epsn = 0x124 },
	{ "UC SEND MIDDLE after a gap", XHCA_OPC_UC | XHCA_OP_SEND_MIDDLE, QPN(L_UC),
	  R(DROP_UC_GAP), .psn = EPSN0 + 2, .want_epsn = EPSN0 },
	{ "UD SEND at any PSN", UD_SEND, QPN(L_UD), R(ACCEPT_DROP), .psn = 0x777 },
	/* action */
	{ "RC SEND to a QP with action pass", RC_SEND, QPN(L_RC_PASS), R(ACCEPT_PASS) },
	{ "action host, no socket on the flow queue: refused before the PSN", RC_SEND,
	  QPN(L_RC_HOST), R(DROP_NO_SOCKET), .want_epsn = EPSN0 },
	/* congestion notification */
	{ "CNP to an RC QP", XHCA_OP_CNP, QPN(L_RC), R(CNP), .want_epsn = EPSN0 },
	{ "CNP to a UD QP", XHCA_OP_CNP, QPN(L_UD), R(CNP) },
	/* encapsulations */
	{ "802.1Q tag", RC_SEND, QPN(L_RC), R(ACCEPT_DROP), .nvlan = 1 },
	{ "802.1ad + 802.1Q tags", RC_SEND, QPN(L_RC), R(ACCEPT_DROP), .nvlan = 2 },
	{ "IPv4 with 40 bytes of options", RC_SEND, QPN(L_RC), R(ACCEPT_DROP), .ip_opt_len = 40 },
	{ "QinQ and IPv4 options", XHCA_OPC_RC | XHCA_OP_WRITE_ONLY, QPN(L_RC), R(ACCEPT_DROP),
	  .nvlan = 2, .ip_opt_len = 12, .reth_len = 100, .payload_len = 100 },
	{ "IPv6 RC SEND", RC_SEND, QPN(L_RC6), R(ACCEPT_DROP), .v6 = 1 },
	{ "IPv6 UD SEND with a VLAN tag", UD_SEND, QPN(L_UD), R(ACCEPT_DROP), .v6 = 1,
	  .nvlan = 1 },
	{ "empty SEND padded to 60 bytes by Ethernet", RC_SEND, QPN(L_RC), R(ACCEPT_DROP),
	  .raw = RAW_ETH_PAD, .want_epsn = EPSN0 + 1 },
};

static int build_case(const struct rx_case *c, __u8 *f, __u32 *lenp, char *why)
{
	struct xhca_pkt_spec s;
	int len;

	xhca_pkt_spec_init(&s, c->opcode);
	s.dqpn = c->qpn;
	s.psn = c->psn ? c->psn : EPSN0;
	if (c->pkey)
		s.pkey = c->pkey;
	s.pkey_zero = c->pkey_zero;
	if (c->pkey_zero)
		s.pkey = 0;
	s.deth_qkey = c->qkey ? c->qkey : UD_QKEY;
	s.deth_sqp = 0x42;
	s.ipv6 = c->v6;
	addr(s.src_ip, c->v6, 0);
	addr(s.dst_ip, c->v6, 1);
	if (c->src)
		xhca_ip_parse(c->src, s.src_ip);
	s.nvlan = c->nvlan;
	s.vlan_tci[0] = 100;
	s.vlan_tci[1] = 200;
	s.ip_opt_len = c->ip_opt_len;
	s.tver = (__u8)c->tver;
	s.ipv6_hbh = c->ipv6_hbh;
	s.ip_proto = c->ip_proto;
	s.ipv6_nexthdr = c->ipv6_nexthdr;
	s.ethertype = c->ethertype;
	s.dport = c->dport;
	s.frag_off = c->frag_off;
	s.udp_len_delta = c->udp_len_delta;
	s.reth_len = c->reth_len;
	if (xhca_opinfo_tbl[c->opcode].flags & XHCA_O_PAYLOAD)
		s.payload_len = c->payload_len ? c->payload_len : 16;
	if (c->empty || c->raw == RAW_ETH_PAD)
		s.payload_len = 0;
	len = xhca_pkt_build(&s, f, XHCA_PKT_MAX);
	if (len < 0) {
		snprintf(why, WHY_LEN, "build: %s", strerror(-len));
		return -1;
	}
	switch (c->raw) {
	case RAW_NONE:
		break;
	case RAW_THREE_VLANS:
		memmove(f + 20, f + 16, (size_t)len - 16);
		f[16] = 0x81;
		f[17] = 0x00;
		f[18] = 0x01;
		f[19] = 0x2c;
		len += 4;
		break;
	case RAW_IHL4:
		f[14] = 0x44;
		break;
	case RAW_PAD_NO_ROOM:
		f[14 + 20 + 8 + 1] |= 3 << XHCA_BTH_PAD_SHIFT;
		break;
	case RAW_ETH_ONLY:
		len = 14;
		break;
	case RAW_IP_CSUM:
		f[14 + 10] ^= 1;
		break;
	case RAW_IP_SHORT:
	case RAW_IP_LONG: {
		__u16 tl = (__u16)((f[16] << 8 | f[17]) + (c->raw == RAW_IP_LONG ? 4 : -4));

		f[16] = (__u8)(tl >> 8);
		f[17] = (__u8)tl;
		ip4_csum_fix(f + 14);
		break;
	}
	case RAW_IP6_SHORT: {
		__u16 pl = (__u16)((f[18] << 8 | f[19]) - 4);

		f[18] = (__u8)(pl >> 8);
		f[19] = (__u8)pl;
		break;
	}
	case RAW_ETH_PAD:
		if (len >= 60) {
			snprintf(why, WHY_LEN, "frame of %d bytes needs no padding", len);
			return -1;
		}
		memset(f + len, 0, (size_t)(60 - len));
		len = 60;
		break;
	}
	*lenp = (__u32)len;
	return 0;
}

static void run_table(void)
{
	static __u8 f[XHCA_PKT_MAX + 8];
	char why[WHY_LEN];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rx_case *c = &cases[i];
		__u32 len, lidx = lidx_of(c->qpn);
		struct xhca_qp_ctx ctx;
		int ok = 0;

		why[0] = 0;
		if (qps_reset()) {
			snprintf(why, WHY_LEN, "write QPs: %s", strerror(errno));
		} else if (!build_case(c, f, &len, why) && run(f, len, c->reason, lidx, why) >= 0) {
			ok = 1;
			if (c->want_epsn && lidx) {
				if (ctx_get(lidx, &ctx)) {
					ok = 0;
					snprintf(why, WHY_LEN, "read context");
				} else if (ctx.rx_psn != (__u32)c->want_epsn) {
					ok = 0;
					snprintf(why, WHY_LEN, "ePSN 0x%06x after, want 0x%06x",
						 ctx.rx_psn, (__u32)c->want_epsn);
				}
			}
		}
		if (ok)
			result(1, "%s: %s", c->name, rname[c->reason]);
		else
			result(0, "%s: %s (%s)", c->name, rname[c->reason], why);
	}
}

static int fuzz_frames(unsigned long n, unsigned long long seed);

/* ---- sequences ----------------------------------------------------------- */

/* Sends one frame built from s; checks the reason (and ePSN when >= 0). */
static int step(struct xhca_pkt_spec *s, int want, __u32 lidx, long long want_epsn, char *why)
{
	static __u8 f[XHCA_PKT_MAX];
	struct xhca_qp_ctx c;
	int len = xhca_pkt_build(s, f, sizeof(f));

	if (len < 0) {
		snprintf(why, WHY_LEN, "build: %s", strerror(-len));
		return -1;
	}
	if (run(f, (__u32)len, want, lidx, why) < 0)
		return -1;
	if (want_epsn < 0)
		return 0;
	if (ctx_get(lidx, &c)) {
		snprintf(why, WHY_LEN, "read context");
		return -1;
	}
	if (c.rx_psn != (__u32)want_epsn) {
		snprintf(why, WHY_LEN, "PSN 0x%06x: ePSN 0x%06x after, want 0x%06llx", s->psn, c.rx_psn,
			 want_epsn);
		return -1;
	}
	return 0;
}

static void spec_to(struct xhca_pkt_spec *s, __u8 opcode, __u32 lidx, __u32 psn)
{
	xhca_pkt_spec_init(s, opcode);
	s->dqpn = qps[lidx].qpn;
	s->psn = psn;
	addr(s->src_ip, 0, 0);
	addr(s->dst_ip, 0, 1);
	s->payload_len = (xhca_opinfo_tbl[opcode].flags & XHCA_O_PAYLOAD) ? 32 : 0;
}

static int seq_psn_wrap(char *why)
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

static int seq_multi_packet(char *why)
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

static int seq_uc_gap(char *why)
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
static int seq_destroy_recreate(char *why)
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

static int seq_truncation(char *why)
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
static int seq_all_opcodes(char *why)
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
static int seq_sizing(char *why)
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
static int seq_torn_context(char *why)
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
		(*n)++;
	}
	return NULL;
}

static int seq_concurrent_writer(char *why)
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

static int seq_concurrent_psn(char *why)
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

/* ---- flow queues ---------------------------------------------------------- */

/* An AF_XDP socket on lo, RX queue 0 (where BPF_PROG_TEST_RUN's packets
 * come from), in xhca_xsks as flow queue FQ_SOCK's. test_run returns the
 * redirect without carrying it out: the socket only has to exist. */
static int xsk_fd = -1;
static void *xsk_area;

static int xsk_on_lo(char *why)
{
	struct xdp_umem_reg mr = { .len = 16 * 4096, .chunk_size = 4096 };
	struct sockaddr_xdp sx = { .sxdp_family = AF_XDP, .sxdp_flags = XDP_COPY };
	__u32 n = 16, key = 0 * XHCA_FLOWQ_MAX + FQ_SOCK;

	xsk_area = mmap(NULL, mr.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	xsk_fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (xsk_area == MAP_FAILED || xsk_fd < 0)
		return snprintf(why, WHY_LEN, "AF_XDP socket: %s", strerror(errno)), -1;
	mr.addr = (__u64)(unsigned long)xsk_area;
	sx.sxdp_ifindex = if_nametoindex("lo");
	if (setsockopt(xsk_fd, SOL_XDP, XDP_UMEM_REG, &mr, sizeof(mr)) ||
	    setsockopt(xsk_fd, SOL_XDP, XDP_UMEM_FILL_RING, &n, sizeof(n)) ||
	    setsockopt(xsk_fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &n, sizeof(n)) ||
	    setsockopt(xsk_fd, SOL_XDP, XDP_RX_RING, &n, sizeof(n)) ||
	    bind(xsk_fd, (struct sockaddr *)&sx, sizeof(sx)))
		return snprintf(why, WHY_LEN, "AF_XDP socket on lo: %s", strerror(errno)), -1;
	if (bpf_map_update_elem(bpf_map__fd(E.skel->maps.xhca_xsks), &key, &xsk_fd, 0))
		return snprintf(why, WHY_LEN, "xhca_xsks: %s", strerror(errno)), -1;
	return 0;
}

static int fq_set(__u32 f, __u32 high, __u32 low, __u64 deq)
{
	int fd = bpf_map__fd(E.skel->maps.xhca_flowq);
	struct xhca_flowq q;

	if (bpf_map_lookup_elem(fd, &f, &q))
		return -1;
	q.high = high;
	q.low = low;
	q.deq = deq;
	return bpf_map_update_elem(fd, &f, &q, 0);
}

static int fq_get(__u32 f, struct xhca_flowq *q)
{
	return bpf_map_lookup_elem(bpf_map__fd(E.skel->maps.xhca_flowq), &f, q);
}

/* A UD SEND to the host QP: redirected with the metadata block in front. */
static int seq_flowq_meta(char *why)
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
	return 0;
}

/* Backpressure: above high the flow queue's packets are dropped early, until
 * its backlog is down to low; an RC packet so refused keeps its PSN. */
static int seq_flowq_gate(char *why)
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
static int seq_flowq_no_meta_room(char *why)
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

/* ---- memory regions: checks and placement --------------------------------- */

static struct xhca_mr_ctx *mrm;	/* the MR map, mapped as xhcad maps it */
static __u8 *hm;		/* host memory, mapped */
#define CANARY 0xaa
#define MR_PRE 1		/* pre-translated, crossing pages, REMOTE_WRITE|READ|ATOMIC */
#define MR_SLOW 2		/* not pre-translated, REMOTE_WRITE */
#define MR_OTHERPD 3
#define MR_RONLY 4		/* REMOTE_READ only */
#define PRE_IOVA 0x10000ull
#define PRE_BASE (4 * 4096 + 100ull)
#define PRE_LEN (3 * 4096 + 100ull)

static __u32 rkey_of(__u32 idx)
{
	return idx << 8 | (0x10 + idx);
}

static void mr_put(__u32 idx, __u32 pd, __u32 access, int pretx, __u64 iova, __u64 len,
		   __u64 base, __u32 gen)
{
	struct xhca_mr_ctx m = {
		.gen = gen, .valid = 1, .key = (__u8)(0x10 + idx), .access = access, .pd = pd,
		.iova = iova, .length = len, .base = base,
		.flags = pretx ? XHCA_MRF_PRETRANSLATED : 0,
	};

	xhca_mr_store(&mrm[idx], &m);
}

static void mrs_reset(void)
{
	memset(hm, CANARY, HM_PAGES * 4096);
	mr_put(MR_PRE, 7, XHCA_ACCESS_REMOTE_WRITE | XHCA_ACCESS_REMOTE_READ |
			      XHCA_ACCESS_REMOTE_ATOMIC, 1, PRE_IOVA, PRE_LEN, PRE_BASE, 1);
	mr_put(MR_SLOW, 7, XHCA_ACCESS_REMOTE_WRITE, 0, 0x200000, 8192, 0, 1);
	mr_put(MR_OTHERPD, 8, XHCA_ACCESS_REMOTE_WRITE, 1, 0x300000, 4096, 9 * 4096, 1);
	mr_put(MR_RONLY, 7, XHCA_ACCESS_REMOTE_READ, 1, 0x400000, 4096, 10 * 4096, 1);
}

/* Host memory holds the canary everywhere but [off, off + n), which holds
 * want (or the canary too when want is NULL). */
static int hm_only(__u64 off, const __u8 *want, __u32 n, char *why)
{
	for (__u64 i = 0; i < HM_PAGES * 4096ull; i++) {
		int inside = want && i >= off && i < off + n;
		__u8 w = inside ? want[i - off] : CANARY;

		if (hm[i] != w)
			return snprintf(why, WHY_LEN, "host memory byte %llu is 0x%02x, want 0x%02x%s",
					(unsigned long long)i, hm[i], w,
					inside ? "" : " (outside the write)"), -1;
	}
	return 0;
}

static void wspec(struct xhca_pkt_spec *s, __u32 lidx, __u8 op, __u32 psn, __u32 mr, __u64 va,
		  __u32 dma_len, __u32 payload)
{
	spec_to(s, (__u8)((qps[lidx].type == XHCA_QPT_UC ? XHCA_OPC_UC : XHCA_OPC_RC) | op), lidx,
		psn);
	s->reth_rkey = rkey_of(mr);
	s->reth_va = va;
	s->reth_len = dma_len;
	s->payload_len = payload;
	s->payload = NULL;
}

static int events_seen;

static int on_event(void *ctx, void *data, size_t len)
{
	const struct xhca_event *e = data;
	struct xhca_pkt_spec s;

	/* the frame's Ethernet addresses come along, for the NAK */
	xhca_pkt_spec_init(&s, 0);
	if (len == sizeof(*e) && e->type == XHCA_EV_QP_ERR && !memcmp(e->smac, s.smac, 6) &&
	    !memcmp(e->dmac, s.dmac, 6))
		events_seen++;
	return 0;
}

static __u32 rx_word(__u32 lidx)
{
	return __atomic_load_n(&E.ctxm[lidx].rx_psn, __ATOMIC_ACQUIRE);
}

/* WRITEs into a pre-translated region: placed by xhca_rx, exactly, across
 * pages, nothing else touched; multi-packet with the cursor; immediate
 * goes on for its completion; zero length checks no key. */
static int seq_write_placed(char *why)
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
static int seq_write_slow(char *why)
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
static int seq_write_errors(char *why)
{
	static const struct {
		const char *name;
		__u8 op;
		__u32 mr;
		__u32 rkey;	/* 0: the MR's */
		__u64 va;
		__u32 dma, payload;
		int reason;
	} cases[] = {
		{ "no such MR", XHCA_OP_WRITE_ONLY, 9, 0, 0x10000, 16, 16, XHCA_R_DROP_MR_RKEY },
		{ "MR index 0", XHCA_OP_WRITE_ONLY, 0, 0x11, 0x10000, 16, 16, XHCA_R_DROP_MR_RKEY },
		{ "stale key byte", XHCA_OP_WRITE_ONLY, MR_PRE, 1 << 8 | 0x99, PRE_IOVA, 16, 16,
		  XHCA_R_DROP_MR_KEY },
		{ "other PD", XHCA_OP_WRITE_ONLY, MR_OTHERPD, 0, 0x300000, 16, 16, XHCA_R_DROP_MR_PD },
		{ "no remote write", XHCA_OP_WRITE_ONLY, MR_RONLY, 0, 0x400000, 16, 16,
		  XHCA_R_DROP_MR_ACCESS },
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

/* The region is deregistered (its generation moves) in the middle of a
 * WRITE: the rest of the message lands nowhere. */
static int seq_write_invalidated(char *why)
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

static int seq_op_sequence(char *why)
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
static int seq_ack_nak(char *why)
{
	struct xhca_pkt_spec s;
	struct xhca_qp_ctx c;

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

/* READ and ATOMIC that pass the checks go to the flow queue (xhcad holds
 * them for the proxy); a READ costs its response count of PSNs. */
static int seq_read_atomic(char *why)
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
static int seq_proxy(char *why)
{
	const __u32 key = 0 * XHCA_FLOWQ_MAX + XHCA_FLOWQ_PROXY;
	struct xhca_pfilter f[2] = {};
	struct xhca_proxy_rec rec = {};
	struct ring_buffer *rb;
	struct xhca_pkt_spec s;
	struct xhca_flowq pq;
	__u32 psn = EPSN0;
	__u64 n0;

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
	/* SENDs below 100 bytes go to the proxy; the threshold is not below */
	px_flags(L_RCW, XHCA_QPF_PROXY | XHCA_QPF_PROXY_CQ);
	f[0] = (struct xhca_pfilter){ .id = 1, .ops = XHCA_PF_OP_SEND,
				      .flags = XHCA_PF_SIZE_BELOW, .size = 100 };
	if (px_filters(L_RCW, 10, f, 1))
		return snprintf(why, WHY_LEN, "filters: %s", strerror(errno)), -1;
	n0 = px_count(offsetof(struct xhca_proxy_counter, offloaded));
	if (px_send(XHCA_OP_SEND_ONLY, psn++, "", 99, XHCA_R_TO_PROXY, 0, why) ||
	    px_send(XHCA_OP_SEND_ONLY, psn++, "", 100, XHCA_R_TO_FLOWQ, 1, why) ||
	    px_send(XHCA_OP_SEND_ONLY, psn++, "", 101, XHCA_R_TO_FLOWQ, 2, why))
		return -1;
	if (px_count(offsetof(struct xhca_proxy_counter, offloaded)) != n0 + 1)
		return snprintf(why, WHY_LEN, "offloaded not counted once"), -1;
	/* a filter of another QP generation is not this QP's */
	if (px_filters(L_RCW, 9, f, 1) ||
	    px_send(XHCA_OP_SEND_ONLY, psn++, "", 10, XHCA_R_TO_FLOWQ, 3, why))
		return -1;
	/* a multi-packet SEND follows its FIRST both ways; one CSN for all */
	f[0] = (struct xhca_pfilter){ .id = 1, .ops = XHCA_PF_OP_SEND, .flags = XHCA_PF_MATCH,
				      .match_len = 4, .value = "LOCK" };
	if (px_filters(L_RCW, 10, f, 1) ||
	    px_send(XHCA_OP_SEND_FIRST, psn++, "LOCK", 1024, XHCA_R_TO_PROXY, 4, why) ||
	    px_send(XHCA_OP_SEND_MIDDLE, psn++, "UNLO", 1024, XHCA_R_TO_PROXY, 4, why) ||
	    px_send(XHCA_OP_SEND_LAST, psn++, "UNLO", 10, XHCA_R_TO_PROXY, 4, why) ||
	    px_send(XHCA_OP_SEND_FIRST, psn++, "UNLO", 1024, XHCA_R_TO_FLOWQ, 5, why) ||
	    px_send(XHCA_OP_SEND_LAST, psn++, "LOCK", 10, XHCA_R_TO_FLOWQ, 5, why))
		return -1;
	/* value/mask: mask bits ignore; invert offloads what does not match; a
	 * payload shorter than the value does not match */
	f[0] = (struct xhca_pfilter){ .id = 1, .ops = XHCA_PF_OP_SEND, .flags = XHCA_PF_MATCH,
				      .match_len = 4, .value = "LXXK", .mask = { 0, 0xff, 0xff } };
	if (px_filters(L_RCW, 10, f, 1) ||
	    px_send(XHCA_OP_SEND_ONLY, psn++, "LOCK", 8, XHCA_R_TO_PROXY, 6, why) ||
	    px_send(XHCA_OP_SEND_ONLY, psn++, "LOCL", 8, XHCA_R_TO_FLOWQ, 7, why) ||
	    px_send(XHCA_OP_SEND_ONLY, psn++, "LOC", 3, XHCA_R_TO_FLOWQ, 8, why))
		return -1;
	f[0].flags |= XHCA_PF_INVERT;
	if (px_filters(L_RCW, 10, f, 1) ||
	    px_send(XHCA_OP_SEND_ONLY, psn++, "LOCK", 8, XHCA_R_TO_FLOWQ, 9, why) ||
	    px_send(XHCA_OP_SEND_ONLY, psn++, "LOCL", 8, XHCA_R_TO_PROXY, 10, why))
		return -1;
	/* opcode set: FETCH_ADD offloaded, CMP_SWAP not; a second filter */
	f[0] = (struct xhca_pfilter){ .id = 1, .ops = XHCA_PF_OP_READ, .flags = XHCA_PF_SINGLE };
	f[1] = (struct xhca_pfilter){ .id = 2, .ops = XHCA_PF_OP_FETCH_ADD };
	if (px_filters(L_RCW, 10, f, 2))
		return -1;
	wspec(&s, L_RCW, XHCA_OP_FETCH_ADD, psn++, MR_PRE, 0, 0, 0);
	s.atomic_rkey = rkey_of(MR_PRE);
	s.atomic_va = PRE_IOVA + 8;
	if (step(&s, XHCA_R_TO_PROXY, L_RCW, -1, why))
		return -1;
	s.opcode = XHCA_OPC_RC | XHCA_OP_CMP_SWAP;
	s.psn = psn++;
	if (step(&s, XHCA_R_TO_FLOWQ, L_RCW, -1, why))
		return -1;
	if (last_meta.csn != 12 || !(last_meta.flags & XHCA_MF_MSN))
		return snprintf(why, WHY_LEN, "CMP_SWAP: CSN %u flags 0x%x", last_meta.csn,
				last_meta.flags), -1;
	/* the load limit: the proxy queue's gate closed, no offload, counted */
	n0 = px_count(offsetof(struct xhca_proxy_counter, no_offload));
	if (fq_set(XHCA_FLOWQ_PROXY, 1, 0, 0))
		return -1;
	wspec(&s, L_RCW, XHCA_OP_FETCH_ADD, psn++, MR_PRE, 0, 0, 0);
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
	wspec(&s, L_RCW, XHCA_OP_FETCH_ADD, psn++, MR_PRE, 0, 0, 0);
	s.atomic_rkey = rkey_of(MR_PRE);
	s.atomic_va = PRE_IOVA + 8;
	if (step(&s, XHCA_R_TO_FLOWQ, L_RCW, -1, why))
		return snprintf(why + strlen(why), WHY_LEN - strlen(why), " (backlog 1 > low 0)"), -1;
	if (fq_get(XHCA_FLOWQ_PROXY, &pq) || fq_set(XHCA_FLOWQ_PROXY, 4, 0, pq.enq))
		return -1;
	wspec(&s, L_RCW, XHCA_OP_FETCH_ADD, psn++, MR_PRE, 0, 0, 0);
	s.atomic_rkey = rkey_of(MR_PRE);
	s.atomic_va = PRE_IOVA + 8;
	if (step(&s, XHCA_R_TO_PROXY, L_RCW, -1, why))
		return snprintf(why + strlen(why), WHY_LEN - strlen(why), " (backlog 0)"), -1;
	if (fq_get(XHCA_FLOWQ_PROXY, &pq) || pq.gate)
		return snprintf(why, WHY_LEN, "load limit: the gate did not open at low"), -1;
	if (fq_set(XHCA_FLOWQ_PROXY, 0, 0, 0))
		return -1;
	/* a WRITE placed by xhca_rx: its record, with its CSN and length */
	rb = ring_buffer__new(bpf_map__fd(E.skel->maps.xhca_proxy_rb), px_on_rec, &rec, NULL);
	if (!rb)
		return snprintf(why, WHY_LEN, "ring buffer: %s", strerror(errno)), -1;
	wspec(&s, L_RCW, XHCA_OP_WRITE_ONLY, psn++, MR_PRE, PRE_IOVA, 200, 200);
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
	px_flags(L_RCW, 0);
	return 0;
}

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
static int seq_mcast_ports(char *why)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .repeat = 1);
	static __u8 f[XHCA_PKT_MAX], out[XHCA_PKT_MAX + 64];
	__u32 idx = 9, lo = if_nametoindex("lo"), rkey = XHCA_XSK_REP_KEY;
	struct xhca_mcast_grp g = { .index = 9, .gen = 4, .nmembers = 1, .ndevs = 1,
				    .pkey = 0xffff };
	struct xhca_pkt_spec s;
	struct xhca_mgid k;
	struct xhca_rx_meta m;
	struct xhca_flowq q;
	int inner, len, rep = bpf_program__fd(E.skel->progs.xhca_rep);
	__u64 d0;

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
	 * it; counted, not sent. */
	s.payload_len = 4000;
	if (step(&s, XHCA_R_DROP_MCAST_FRAGS, 0, -1, why))
		return -1;
	if (mc_count(9, offsetof(struct xhca_mcast_counter, dev_packets)) != d0 + 1)
		return snprintf(why, WHY_LEN, "dev_packets moved for a frame not sent"), -1;
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
static int seq_mcast(char *why)
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

static void run_sequences(void)
{
	static const struct {
		const char *name;
		int (*fn)(char *why);
	} seqs[] = {
		{ "RC PSN across 2^24, READ cost across the wrap", seq_psn_wrap },
		{ "RC and UC multi-packet SEND and WRITE messages", seq_multi_packet },
		{ "UC gap drops the rest of the message, next message resyncs", seq_uc_gap },
		{ "destroy and re-create: CAM miss, stale generation, slot reuse",
		  seq_destroy_recreate },
		{ "truncated at every byte of the headers", seq_truncation },
		{ "all 256 opcodes: unknown dropped, known checked for length", seq_all_opcodes },
		{ "QP maps sized at load time", seq_sizing },
		{ "torn context (writer died mid-section): busy until rewritten", seq_torn_context },
		{ "configuration rewritten on another CPU: no packet sees a mix",
		  seq_concurrent_writer },
		{ "same PSNs from two CPUs: each accepted exactly once", seq_concurrent_psn },
		{ "flow queue: metadata block in front, redirect to the socket", seq_flowq_meta },
		{ "flow queue: gate closes at high, opens at low, PSN untouched", seq_flowq_gate },
		{ "flow queue: no room for the metadata block", seq_flowq_no_meta_room },
		{ "WRITE into a pre-translated MR: placed exactly, across pages, multi-packet",
		  seq_write_placed },
		{ "WRITE into a fragmented MR: to the translation manager, nothing written",
		  seq_write_slow },
		{ "every R_Key and length failure: own reason, nothing written, RC QP to error",
		  seq_write_errors },
		{ "MR deregistered mid-WRITE: the rest lands nowhere", seq_write_invalidated },
		{ "opcode sequence: a SEND or WRITE in progress takes only its own MIDDLE/LAST",
		  seq_op_sequence },
		{ "READ and ATOMIC checked, then to the flow queue", seq_read_atomic },
		{ "responder: duplicates, one sequence NAK per gap, ACKs due", seq_ack_nak },
		{ "proxy QP: filters, CSNs, load limit, WRITE records", seq_proxy },
		{ "multicast: group checks, one copy to the replication queue, threshold",
		  seq_mcast },
	};
	char why[WHY_LEN];

	for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++) {
		why[0] = 0;
		if (seqs[i].fn(why))
			result(0, "%s (%s)", seqs[i].name, why[0] ? why : strerror(errno));
		else
			result(1, "%s", seqs[i].name);
	}
}

/* ---- setup --------------------------------------------------------------- */

static int env_open(char *why)
{
	struct xhca_pkey pk = { .pkey = 0xffff };
	__u32 k = 0;
	int err;

	E.skel = xhca__open();
	if (!E.skel)
		return snprintf(why, WHY_LEN, "open: %s", strerror(errno)), -1;
	bpf_map__set_max_entries(E.skel->maps.xhca_qp_cam, TQ);
	bpf_map__set_max_entries(E.skel->maps.xhca_qp_ctx, TQ);
	bpf_map__set_max_entries(E.skel->maps.xhca_qp_stats, TQ);
	bpf_map__set_max_entries(E.skel->maps.xhca_hostmem, HM_PAGES);
	bpf_map__set_max_entries(E.skel->maps.xhca_mr, 16);
	err = xhca__load(E.skel);
	if (err)
		return snprintf(why, WHY_LEN, "load: %s", strerror(-err)), -1;
	E.prog = bpf_program__fd(E.skel->progs.xhca_rx);
	E.cam = bpf_map__fd(E.skel->maps.xhca_qp_cam);
	E.ctx = bpf_map__fd(E.skel->maps.xhca_qp_ctx);
	E.stats = bpf_map__fd(E.skel->maps.xhca_stats);
	E.qp_stats = bpf_map__fd(E.skel->maps.xhca_qp_stats);
	E.pkeys = bpf_map__fd(E.skel->maps.xhca_pkeys);
	E.ncpus = libbpf_num_possible_cpus();
	E.ctxm = xhca_qpctx_map(E.ctx, TQ);
	if (!E.ctxm)
		return snprintf(why, WHY_LEN, "mmap the context map: %s", strerror(errno)), -1;
	mrm = mmap(NULL, 16 * sizeof(struct xhca_mr_ctx), PROT_READ | PROT_WRITE, MAP_SHARED,
		   bpf_map__fd(E.skel->maps.xhca_mr), 0);
	hm = mmap(NULL, HM_PAGES * 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
		  bpf_map__fd(E.skel->maps.xhca_hostmem), 0);
	if (mrm == MAP_FAILED || hm == MAP_FAILED)
		return snprintf(why, WHY_LEN, "mmap MRs or host memory: %s", strerror(errno)), -1;
	if (bpf_map_update_elem(E.pkeys, &k, &pk, 0))
		return snprintf(why, WHY_LEN, "P_Key table: %s", strerror(errno)), -1;
	k = 1;
	pk.pkey = 0x8123; /* QP1 accepts partition 0x0123 packets through this */
	if (bpf_map_update_elem(E.pkeys, &k, &pk, 0))
		return snprintf(why, WHY_LEN, "P_Key table: %s", strerror(errno)), -1;
	return 0;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

int test_rx_run(void)
{
	char why[WHY_LEN] = "";
	int missing = 0;
	char list[512] = "";

	if (geteuid() != 0) {
		printf("skip - rx: BPF_PROG_TEST_RUN of xhca_rx needs root\n");
		return 0;
	}
	libbpf_set_print(quiet);
	if (env_open(why)) {
		result(0, "load xhca_rx with %d QPs (%s)", TQ, why);
		xhca__destroy(E.skel);
		return E.fails;
	}
	result(1, "load xhca_rx with %d QPs", TQ);
	if (xsk_on_lo(why))
		result(0, "an AF_XDP socket for flow queue %d (%s)", FQ_SOCK, why);
	run_table();
	run_sequences();
	fuzz_frames(20000, 1); /* make fuzz runs millions, from any seed */
	for (int r = 0; r < XHCA_R_MAX; r++) {
		if (E.hit[r])
			continue;
		missing++;
		snprintf(list + strlen(list), sizeof(list) - strlen(list), " %s", rname[r]);
	}
	if (missing)
		result(0, "every reason of the enum has a case (missing:%s)", list);
	else
		result(1, "every reason of the enum has a case (%d reasons)", XHCA_R_MAX);
	xhca_qpctx_unmap(E.ctxm, TQ);
	xhca__destroy(E.skel);
	if (xsk_fd >= 0)
		close(xsk_fd);
	return E.fails;
}

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
static int fuzz_frames(unsigned long n, unsigned long long seed)
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

int test_rx_fuzz(unsigned long n, unsigned long long seed)
{
	char why[WHY_LEN] = "";
	int fails;

	if (geteuid() != 0) {
		printf("skip - rx fuzz: BPF_PROG_TEST_RUN of xhca_rx needs root\n");
		return 0;
	}
	libbpf_set_print(quiet);
	if (env_open(why)) {
		result(0, "fuzz: load xhca_rx (%s)", why);
		xhca__destroy(E.skel);
		return 1;
	}
	if (xsk_on_lo(why))
		result(0, "fuzz: an AF_XDP socket for flow queue %d (%s)", FQ_SOCK, why);
	fails = fuzz_frames(n, seed);
	xhca_qpctx_unmap(E.ctxm, TQ);
	xhca__destroy(E.skel);
	if (xsk_fd >= 0)
		close(xsk_fd);
	return fails + E.fails;
}
