/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The environment of the unit tests of xhca_rx (rx.h): the program loaded,
 * the QPs, run() and the checks of every packet, memory regions, the flow
 * queue socket on lo.
 */
#include "rx.h"

const char *const rname[XHCA_R_MAX] = { XHCA_REASONS(XHCA_REASON_STR) };

struct rx_env E;

/* ---- the QPs every table case starts from -------------------------------- */

const struct qp_def qps[L_NQP] = {
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
			0, 0, FQ_SOCK, 7 },
	[L_RC_HOST] = { QPN(L_RC_HOST), XHCA_QPT_RC, XHCA_QPS_RTR, XHCA_ACT_HOST, 0, 0xffff, 0, 0, 0,
			FQ_NOSOCK },
	/* the RDMA WRITE targets: host QPs of protection domain 7 */
	[L_RCW] = { QPN(L_RCW), XHCA_QPT_RC, XHCA_QPS_RTR, XHCA_ACT_HOST, 0, 0xffff, 0, 0, 0, FQ_SOCK,
		    7 },
	[L_UCW] = { QPN(L_UCW), XHCA_QPT_UC, XHCA_QPS_RTR, XHCA_ACT_HOST, 0, 0xffff, 0, 0, 0, FQ_SOCK,
		    7 },
};

void addr(__u8 out[16], int v6, int local)
{
	xhca_ip_parse(v6 ? (local ? "fd00::2" : "fd00::1") : (local ? "10.0.0.2" : "10.0.0.1"),
		      out);
}

/* Writes one QP as xhcad does: context (seqcount write section), then CAM. */
__u8 next_flowq; /* of the next qp_write */
__u32 next_pd;

int qp_write(__u32 lidx, __u32 qpn, __u32 ctx_gen, __u32 cam_gen, int valid, __u8 type,
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

int qps_reset(void)
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

__u32 lidx_of(__u32 qpn)
{
	for (__u32 l = 1; l < L_NQP; l++)
		if (qps[l].qpn == qpn)
			return l;
	return 0;
}

int ctx_get(__u32 lidx, struct xhca_qp_ctx *c)
{
	xhca_qpctx_load(&E.ctxm[lidx], c);
	c->rx_psn &= XHCA_RXPSN_MASK;
	return 0;
}

int ctx_set_epsn(__u32 lidx, __u32 epsn)
{
	struct xhca_qp_ctx c;

	xhca_qpctx_load(&E.ctxm[lidx], &c);
	c.rx_psn = epsn;
	xhca_qpctx_store(&E.ctxm[lidx], &c, 1);
	return 0;
}

/* ---- counters ------------------------------------------------------------ */

/* The flow queues' counters and enq, summed (whichever flow queue a packet
 * was for, it is counted once there). */
static int snap_flowqs(struct snap *s)
{
	static struct xhca_flowq_counter fv[XHCA_FLOWQ_MAX * 512];
	static struct xhca_flowq qv[XHCA_FLOWQ_MAX];
	static __u32 keys[XHCA_FLOWQ_MAX];
	__u32 n = XHCA_FLOWQ_MAX, out;
	LIBBPF_OPTS(bpf_map_batch_opts, bo);

	if (bpf_map_lookup_batch(bpf_map__fd(E.skel->maps.xhca_fq_stats), NULL, &out, keys, fv, &n,
				 &bo) && errno != ENOENT)
		return -errno;
	for (__u32 k = 0; k < n * (__u32)E.ncpus; k++) {
		s->fq.packets += fv[k].packets;
		s->fq.bytes += fv[k].bytes;
		s->fq.gate_drops += fv[k].gate_drops;
		s->fq.nosock_drops += fv[k].nosock_drops;
	}
	n = XHCA_FLOWQ_MAX;
	if (bpf_map_lookup_batch(bpf_map__fd(E.skel->maps.xhca_flowq), NULL, &out, keys, qv, &n,
				 &bo) && errno != ENOENT)
		return -errno;
	for (__u32 k = 0; k < n; k++)
		s->enq += qv[k].enq;
	return 0;
}

int snap_take(struct snap *s)
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
	return snap_flowqs(s);
}

int is_pass_reason(int r)
{
	return r == XHCA_R_PASS_NOT_ROCE || r == XHCA_R_PASS_TRUNCATED ||
	       r == XHCA_R_PASS_VLAN_DEPTH || r == XHCA_R_PASS_IPV6_EXT ||
	       r == XHCA_R_PASS_IP_FRAG || r == XHCA_R_ACCEPT_PASS;
}

/* Reasons given after the QP context was found valid: they count per QP. */
int is_redirect_reason(int r)
{
	return r == XHCA_R_TO_FLOWQ || r == XHCA_R_PLACED_TO_FLOWQ || r == XHCA_R_TO_XLATE ||
	       r == XHCA_R_XLATE_NOCOPY || r == XHCA_R_TO_MCAST || r == XHCA_R_TO_MCAST_DEVS || r == XHCA_R_TO_MCAST_PORTS ||
	       r == XHCA_R_TO_PROXY ||
	       r == XHCA_R_PLACED_ACK || r == XHCA_R_DUP_TO_FLOWQ || r == XHCA_R_SEQ_NAK_TO_FLOWQ;
}

/* Redirected into a flow queue's socket (the function ports' copies go
 * elsewhere). */
int flowq_reason(int r)
{
	return is_redirect_reason(r) && r != XHCA_R_TO_MCAST_DEVS;
}

/* Redirected to be answered, not taken: they count as the QP's drops. */
int answered_reason(int r)
{
	return r == XHCA_R_DUP_TO_FLOWQ || r == XHCA_R_SEQ_NAK_TO_FLOWQ;
}

int qp_accepted_reason(int r)
{
	return r == XHCA_R_ACCEPT_PASS || r == XHCA_R_ACCEPT_DROP || r == XHCA_R_CNP ||
	       (is_redirect_reason(r) && !answered_reason(r)) || r == XHCA_R_PLACED ||
	       r == XHCA_R_RECV_PLACED || r == XHCA_R_RECV_ACKED ||
	       r == XHCA_R_PLACED_ACKED;
}

int qp_dropped_reason(int r)
{
	return r == XHCA_R_DROP_OPCODE_TYPE || r == XHCA_R_DROP_QP_STATE || r == XHCA_R_DROP_ADDR ||
	       r == XHCA_R_DROP_PKEY || r == XHCA_R_DROP_QKEY || r == XHCA_R_DROP_UD_MTU ||
	       r == XHCA_R_DROP_PSN_DUP ||
	       r == XHCA_R_DROP_PSN_OOS || r == XHCA_R_DROP_UC_GAP || r == XHCA_R_DROP_NO_SOCKET ||
	       r == XHCA_R_DROP_FLOWQ_GATE || r == XHCA_R_DROP_META || r == XHCA_R_DROP_PROXY_NOCQ ||
	       answered_reason(r) ||
	       (r >= XHCA_R_DROP_MR_RKEY && r <= XHCA_R_DROP_QP_ACCESS);
}

/* The flow queues' counters moved as the packet's reason says, and only
 * so: redirected into one (packets, bytes and enq by one frame), refused by
 * its gate or the multicast threshold (gate_drops), or for want of a
 * socket (nosock_drops); every other reason leaves them alone. */
static int flowq_moved(const struct snap *a, const struct snap *b, int got, __u32 len,
		       char *why)
{
	__u64 in = flowq_reason(got), bytes = in ? len : 0;
	__u64 gate = got == XHCA_R_DROP_FLOWQ_GATE || got == XHCA_R_DROP_MCAST_THRESHOLD;
	__u64 nosock = got == XHCA_R_DROP_NO_SOCKET;

	if (b->fq.packets - a->fq.packets == in && b->fq.bytes - a->fq.bytes == bytes &&
	    b->enq - a->enq == in && b->fq.gate_drops - a->fq.gate_drops == gate &&
	    b->fq.nosock_drops - a->fq.nosock_drops == nosock)
		return 0;
	snprintf(why, WHY_LEN, "reason %s: flow queues' packets +%llu bytes +%llu enq +%llu "
		 "gate_drops +%llu nosock_drops +%llu, want +%llu +%llu +%llu +%llu +%llu",
		 rname[got], (unsigned long long)(b->fq.packets - a->fq.packets),
		 (unsigned long long)(b->fq.bytes - a->fq.bytes),
		 (unsigned long long)(b->enq - a->enq),
		 (unsigned long long)(b->fq.gate_drops - a->fq.gate_drops),
		 (unsigned long long)(b->fq.nosock_drops - a->fq.nosock_drops),
		 (unsigned long long)in, (unsigned long long)bytes, (unsigned long long)in,
		 (unsigned long long)gate, (unsigned long long)nosock);
	return -1;
}

/*
 * Runs one frame through xhca_rx and checks the invariants of every packet.
 * want: the reason expected, or -1 to accept any (the reason is returned).
 * qp_lidx: the context the packet is addressed to (0: none), for the per-QP
 * counters. Returns the reason, or -1 with why filled.
 */
struct xhca_rx_meta last_meta; /* of the last packet sent to a flow queue */
__u8 last_tx[XHCA_PKT_MAX];	/* the last frame sent back (XDP_TX) */
__u32 last_tx_len;

int run(const void *frame, __u32 len, int want, __u32 qp_lidx, char *why)
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
	if (o.retval != (is_redirect_reason(got)  ? XDP_REDIRECT
			 : is_pass_reason(got)	  ? XDP_PASS
			 : got == XHCA_R_RECV_ACKED || got == XHCA_R_PLACED_ACKED ? XDP_TX
						  : XDP_DROP)) {
		snprintf(why, WHY_LEN, "verdict %u for reason %s", o.retval, rname[got]);
		return -1;
	}
	/* (a frame sent back is the ACK xhca_rx made of it: the case checks
	 * it) */
	if (o.retval == XDP_TX) {
		last_tx_len = o.data_size_out < sizeof(last_tx) ? o.data_size_out : 0;
		memcpy(last_tx, out, last_tx_len);
		goto counted;
	}
	/* The output starts at data_meta: a redirected frame carries the
	 * metadata block in front, and nothing else may change. */
	/* (the function ports get the frame as it came) */
	mlen = is_redirect_reason(got) && got != XHCA_R_TO_MCAST_DEVS ? sizeof(struct xhca_rx_meta)
								       : 0;
	/* a frame dropped after its flow queue admitted it may keep the
	 * room made for the block: nobody sees a dropped frame */
	if (o.retval == XDP_DROP && o.data_size_out == len + sizeof(struct xhca_rx_meta))
		mlen = sizeof(struct xhca_rx_meta);
	if (mlen && o.data_size_out >= mlen)
		memcpy(&last_meta, out, mlen);
	if (o.data_size_out != len + mlen || memcmp(out + mlen, frame, len)) {
		snprintf(why, WHY_LEN, "the frame was modified (%u bytes out of %u)", o.data_size_out,
			 len);
		return -1;
	}
counted:
	if (flowq_moved(&a, &b, got, len, why))
		return -1;
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

/* ---- sequences ----------------------------------------------------------- */

/* Sends one frame built from s; checks the reason (and ePSN when >= 0). */
int step(struct xhca_pkt_spec *s, int want, __u32 lidx, long long want_epsn, char *why)
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

void spec_to(struct xhca_pkt_spec *s, __u8 opcode, __u32 lidx, __u32 psn)
{
	xhca_pkt_spec_init(s, opcode);
	s->dqpn = qps[lidx].qpn;
	s->psn = psn;
	addr(s->src_ip, 0, 0);
	addr(s->dst_ip, 0, 1);
	s->payload_len = (xhca_opinfo_tbl[opcode].flags & XHCA_O_PAYLOAD) ? 32 : 0;
}

/* ---- flow queues ---------------------------------------------------------- */

/* An AF_XDP socket on lo, RX queue 0 (where BPF_PROG_TEST_RUN's packets
 * come from), in xhca_xsks as flow queue FQ_SOCK's. test_run returns the
 * redirect without carrying it out: the socket only has to exist. */
int xsk_fd = -1;
void *xsk_area;

int xsk_on_lo(char *why)
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
	    setsockopt(xsk_fd, SOL_XDP, XDP_RX_RING, &n, sizeof(n)))
		return snprintf(why, WHY_LEN, "AF_XDP socket on lo: %s", strerror(errno)), -1;
	/* another test_unit (of another checkout, or cases run one by one
	 * beside) may hold lo's queue 0 a while: waited for, up to 10 s */
	for (int t = 0; bind(xsk_fd, (struct sockaddr *)&sx, sizeof(sx)); t++) {
		if (errno != EBUSY || t == 100)
			return snprintf(why, WHY_LEN, "AF_XDP socket on lo: %s", strerror(errno)), -1;
		usleep(100000);
	}
	if (bpf_map_update_elem(bpf_map__fd(E.skel->maps.xhca_xsks), &key, &xsk_fd, 0))
		return snprintf(why, WHY_LEN, "xhca_xsks: %s", strerror(errno)), -1;
	return 0;
}

int fq_set(__u32 f, __u32 high, __u32 low, __u64 deq)
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

int fq_get(__u32 f, struct xhca_flowq *q)
{
	return bpf_map_lookup_elem(bpf_map__fd(E.skel->maps.xhca_flowq), &f, q);
}

/* ---- memory regions: checks and placement --------------------------------- */

struct xhca_mr_ctx *mrm;	/* the MR map, mapped as xhcad maps it */
__u8 *hm;		/* host memory, mapped */

__u32 rkey_of(__u32 idx)
{
	return idx << 8 | (0x10 + idx);
}

void mr_put(__u32 idx, __u32 pd, __u32 access, int pretx, __u64 iova, __u64 len,
		   __u64 base, __u32 gen)
{
	struct xhca_mr_ctx m = {
		.gen = gen, .valid = 1, .key = (__u8)(0x10 + idx), .access = access, .pd = pd,
		.iova = iova, .length = len, .base = base,
		.flags = pretx ? XHCA_MRF_PRETRANSLATED : 0,
	};

	xhca_mr_store(&mrm[idx], &m);
}

void mrs_reset(void)
{
	memset(hm, CANARY, HM_PAGES * 4096);
	mr_put(MR_PRE, 7, XHCA_ACCESS_REMOTE_WRITE | XHCA_ACCESS_REMOTE_READ |
			      XHCA_ACCESS_REMOTE_ATOMIC, 1, PRE_IOVA, PRE_LEN, PRE_BASE, 1);
	mr_put(MR_SLOW, 7, XHCA_ACCESS_REMOTE_WRITE, 0, 0x200000, 8192, 0, 1);
	mr_put(MR_OTHERPD, 8, XHCA_ACCESS_REMOTE_WRITE, 1, 0x300000, 4096, 9 * 4096, 1);
	mr_put(MR_RONLY, 7, XHCA_ACCESS_REMOTE_READ, 1, 0x400000, 4096, 10 * 4096, 1);
	mr_put(MR_MW_QP, 7, XHCA_ACCESS_REMOTE_WRITE, 1, 0x500000, 4096, 11 * 4096, 1);
	mrm[MR_MW_QP].flags |= XHCA_MRF_MW | XHCA_MRF_MW_QP;
	mrm[MR_MW_QP].qpn = 0x777;
	mr_put(MR_NOBLOCK, 7, XHCA_ACCESS_REMOTE_WRITE, 1, 0x600000, 4096,
	       (__u64)XHCA_BLOCK_PAGES * 4096, 1);
}

/* Host memory holds the canary everywhere but [off, off + n), which holds
 * want (or the canary too when want is NULL). */
int hm_only(__u64 off, const __u8 *want, __u32 n, char *why)
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

void wspec(struct xhca_pkt_spec *s, __u32 lidx, __u8 op, __u32 psn, __u32 mr, __u64 va,
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

int events_seen;

int on_event(void *ctx, void *data, size_t len)
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

__u32 rx_word(__u32 lidx)
{
	return __atomic_load_n(&E.ctxm[lidx].rx_psn, __ATOMIC_ACQUIRE);
}

/* ---- setup --------------------------------------------------------------- */

/* Host memory's block 0, as xhcad makes a block: its first HM_PAGES pages
 * mapped. Block 1 is not there: a region in it is memory no one holds. */
static __u8 *block_zero(int outer)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = BPF_F_MMAPABLE);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xhca_hm_block", 4, 4096, XHCA_BLOCK_PAGES, &mo);
	__u32 b = 0;
	void *m;

	if (fd < 0 || bpf_map_update_elem(outer, &b, &fd, 0))
		return MAP_FAILED;
	m = mmap(NULL, HM_PAGES * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd); /* the mapping and xhca_hostmem hold it */
	return m;
}

int env_open(char *why)
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
	bpf_map__set_max_entries(E.skel->maps.xhca_hostmem, HM_BLOCKS);
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
	hm = block_zero(bpf_map__fd(E.skel->maps.xhca_hostmem));
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

int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}
