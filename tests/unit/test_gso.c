/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The runs of request frames that xhcad sends as one UDP GSO send
 * (user/xhcad/gso.c): each frame is built as the segment the kernel will
 * cut of the run, so the run's one send, segmented as the kernel does
 * (UDP_L4: the headers again for each gso_size bytes of UDP payload, the
 * last segment shorter, IP and UDP lengths per segment, IPv4 IDs counted up
 * from the first), gives every frame back byte for byte, ICRC included;
 * what gso_flush does with a run the kernel refuses (frame by frame through
 * the TX ring, or lost when that is full), and when there is no socket.
 */
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <linux/virtio_net.h>
#include <xhca/pkt.h>
#include <xhca/wire.h>
#include "layers.h"
#include "tests.h"

#define res(ok, ...) unit_check((ok), __VA_ARGS__)

static struct gso_run run;
static __u8 payload[8192];

/* An RC request packet: op at psn with plen payload bytes, over IPv4 or
 * IPv6, from UDP source port sport. */
static void spec(struct xhca_pkt_spec *s, __u8 op, __u32 psn, __u32 plen, int ipv6, __u16 sport)
{
	xhca_pkt_spec_init(s, XHCA_OPC_RC | op);
	xhca_ip_parse(ipv6 ? "fd00::1" : "10.9.0.1", s->src_ip);
	xhca_ip_parse(ipv6 ? "fd00::2" : "10.9.0.2", s->dst_ip);
	s->ipv6 = ipv6;
	memcpy(s->dmac, "\x02\x00\x00\x00\x00\x02", 6);
	memcpy(s->smac, "\x02\x00\x00\x00\x00\x01", 6);
	s->sport = sport;
	s->dqpn = 0x654;
	s->psn = psn;
	s->payload = payload + (psn % 64);
	s->payload_len = plen;
	s->reth_va = 0x10000;
	s->reth_rkey = 0x1234;
	s->reth_len = 65536;
}

static __u32 g16(const __u8 *p)
{
	return (__u32)p[0] << 8 | p[1];
}

static void p16(__u8 *p, __u32 v)
{
	p[0] = (__u8)(v >> 8);
	p[1] = (__u8)v;
}

/* Segment i of the run's one send, as the kernel cuts it: the headers
 * (hdr, the whole run's) again with their lengths and the ID for it, the
 * checksums zeroed (the kernel computes them; ICRC masks them). */
static __u32 kernel_segment(const struct virtio_net_hdr *vh, const __u8 *hdr, const __u8 *pay,
			    __u32 paylen, __u32 i, __u8 *out)
{
	__u32 u = vh->csum_start, seg = vh->gso_size, off = i * seg;
	__u32 pl = paylen - off < seg ? paylen - off : seg;

	memcpy(out, hdr, vh->hdr_len);
	memcpy(out + vh->hdr_len, pay + off, pl);
	if (u == 34) {
		p16(out + 16, 28 + pl);
		p16(out + 18, g16(hdr + 18) + i);
		p16(out + 24, 0);
	} else {
		p16(out + 18, 8 + pl);
	}
	p16(out + u + 4, 8 + pl);
	p16(out + u + 6, 0);
	return vh->hdr_len + pl;
}

/* A run of the packets (op[k], plen[k]) from psn 100 on: each added, then
 * the one send checked against the frames built alone. */
static void check_run(const char *what, const __u8 *ops, const __u32 *plens, int n, int ipv6)
{
	static __u8 alone[64][XHCA_PKT_MAX], seg[XHCA_PKT_MAX], fr[XHCA_PKT_MAX];
	__u32 alone_len[64], total = 0, u = ipv6 ? 54 : 34, s;
	struct virtio_net_hdr vh;
	__u8 hdr[GSO_HDR_MAX];
	int added = 1, same = 1, icrc = 1, frames = 1;

	memset(&run, 0, sizeof(run));
	for (int k = 0; k < n; k++) {
		struct xhca_pkt_spec sp;
		int len;

		spec(&sp, ops[k], 100 + (__u32)k, plens[k], ipv6, 0xc123);
		added &= gso_run_add(&run, &sp) == 0;
		sp.ip_id = ipv6 ? 0 : (__u16)k; /* (as gso_run_add set it) */
		len = xhca_pkt_build(&sp, alone[k], sizeof(alone[k]));
		alone_len[k] = len > 0 ? (__u32)len : 0;
		total += alone_len[k] - (u + 8);
	}
	res(added && run.n == (__u32)n && run.len == total,
	    "%s: %d frames in one run, %u UDP payload bytes (%u frames, %u bytes)", what, n, total,
	    run.n, run.len);
	gso_run_super(&run, &vh, hdr);
	s = IPPROTO_UDP + 8 + total;
	for (__u32 i = ipv6 ? 22 : 26; i < u; i += 2)
		s += g16(hdr + i);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	res(vh.gso_type == GSO_UDP_L4 && vh.flags == VIRTIO_NET_HDR_F_NEEDS_CSUM &&
		    vh.hdr_len == u + 8 && vh.csum_start == u && vh.csum_offset == 6 &&
		    vh.gso_size == alone_len[0] - (u + 8) && g16(hdr + u + 4) == 8 + total &&
		    g16(hdr + u + 6) == s &&
		    (ipv6 ? g16(hdr + 18) == 8 + total : g16(hdr + 16) == 28 + total),
	    "%s: the send: UDP_L4 GSO of %u-byte segments, headers through UDP, the whole run's "
	    "lengths, the pseudo header's sum in the UDP checksum", what, vh.gso_size);
	for (int k = 0; k < n; k++) {
		__u32 a = kernel_segment(&vh, hdr, run.buf + GSO_HDR_MAX, run.len, (__u32)k, seg);
		__u32 b = gso_run_frame(&run, (__u32)k, fr);

		memcpy(alone[k] + u + 6, "\0", 2); /* (built with none) */
		if (!ipv6)
			p16(seg + 24, g16(fr + 24)); /* (the kernel's IP checksum) */
		same &= a == alone_len[k] && !memcmp(seg, alone[k], a);
		frames &= b == alone_len[k] && !memcmp(fr, alone[k], b);
		icrc &= !xhca_icrc_check_frame(seg, a);
	}
	res(same, "%s: cut as the kernel does, the send gives each frame back as built alone", what);
	res(icrc, "%s: ... each with a valid ICRC", what);
	res(frames, "%s: gso_run_frame (a refused run, frame by frame) gives the same frames", what);
}

static void case_ipv4(void)
{
	static const __u8 ops[] = { XHCA_OP_WRITE_MIDDLE, XHCA_OP_WRITE_MIDDLE, XHCA_OP_WRITE_MIDDLE,
				    XHCA_OP_WRITE_LAST };
	static const __u32 plens[] = { 1024, 1024, 1024, 300 };
	__u8 sends[40];
	__u32 sl[40];

	check_run("IPv4 WRITE MIDDLE x3, LAST", ops, plens, 4, 0);
	memset(sends, XHCA_OP_SEND_ONLY, sizeof(sends));
	for (int i = 0; i < 40; i++)
		sl[i] = 64;
	check_run("IPv4 40 SEND ONLY of 64 bytes", sends, sl, 40, 0);
}

static void case_ipv6(void)
{
	static const __u8 ops[] = { XHCA_OP_SEND_FIRST, XHCA_OP_SEND_MIDDLE, XHCA_OP_SEND_LAST };
	static const __u32 plens[] = { 4096, 4096, 4096 };

	check_run("IPv6 SEND FIRST, MIDDLE, LAST of 4096", ops, plens, 3, 1);
}

/* What ends a run: a larger frame, one after a shorter one, another flow,
 * 64 frames, the bytes; a frame for no run (tagged) is refused. */
static void case_limits(void)
{
	struct xhca_pkt_spec sp;
	int r1, r2, r3, r4, n;

	memset(&run, 0, sizeof(run));
	spec(&sp, XHCA_OP_SEND_ONLY, 1, 100, 0, 0xc001);
	r1 = gso_run_add(&run, &sp);
	spec(&sp, XHCA_OP_SEND_ONLY, 2, 101, 0, 0xc001);
	r2 = gso_run_add(&run, &sp);
	spec(&sp, XHCA_OP_SEND_ONLY, 3, 100, 0, 0xc002);
	r3 = gso_run_add(&run, &sp);
	spec(&sp, XHCA_OP_SEND_ONLY, 4, 50, 0, 0xc001);
	r4 = gso_run_add(&run, &sp);
	res(!r1 && r2 == 2 && r3 == 2 && !r4 && run.n == 2,
	    "a run of 100-byte SENDs: a 101-byte one, one of another UDP source port do not fit; "
	    "a 50-byte one does (%d %d %d %d, %u frames)", r1, r2, r3, r4, run.n);
	spec(&sp, XHCA_OP_SEND_ONLY, 5, 50, 0, 0xc001);
	res(gso_run_add(&run, &sp) == 2, "nothing after the shorter one");
	/* one destination QP's (--steer sends a run by its queue): an ACK of
	 * the same size and flow for another QP starts a run of its own */
	memset(&run, 0, sizeof(run));
	spec(&sp, XHCA_OP_SEND_ONLY, 1, 100, 0, 0xc001);
	r1 = gso_run_add(&run, &sp);
	spec(&sp, XHCA_OP_SEND_ONLY, 2, 100, 0, 0xc001);
	sp.dqpn = 0x655;
	r2 = gso_run_add(&run, &sp);
	res(!r1 && r2 == 2 && run.n == 1 && run.dqpn == 0x654,
	    "a frame for another destination QP does not fit (%d %d, %u frames, QP 0x%x)", r1, r2,
	    run.n, run.dqpn);
	memset(&run, 0, sizeof(run));
	for (n = 0; n < 100; n++) {
		spec(&sp, XHCA_OP_SEND_ONLY, (__u32)n, 8, 0, 0xc001);
		if (gso_run_add(&run, &sp))
			break;
	}
	res(n == GSO_MAX_SEGS, "%d frames at most in a run (%d)", GSO_MAX_SEGS, n);
	memset(&run, 0, sizeof(run));
	for (n = 0; n < 100; n++) {
		spec(&sp, XHCA_OP_WRITE_MIDDLE, (__u32)n, 4096, 0, 0xc001);
		if (gso_run_add(&run, &sp))
			break;
	}
	res(n == 15 && run.len <= GSO_MAX_BYTES, "%d bytes at most: 15 frames of 4096 (%d, %u bytes)",
	    GSO_MAX_BYTES, n, run.len);
	/* path MTU 1024: a 64 KiB WRITE in two runs, FIRST (its RETH) and a
	 * MIDDLE, then the 61 MIDDLEs and the LAST in one */
	memset(&run, 0, sizeof(run));
	for (n = 0; n < 62; n++) {
		spec(&sp, n < 61 ? XHCA_OP_WRITE_MIDDLE : XHCA_OP_WRITE_LAST, (__u32)n, 1024, 0, 0xc001);
		if (gso_run_add(&run, &sp))
			break;
	}
	res(n == 62, "62 frames of 1024 in a run: a 64 KiB WRITE's after its first two (%d, %u bytes)",
	    n, run.len);
	memset(&run, 0, sizeof(run));
	spec(&sp, XHCA_OP_SEND_ONLY, 1, 100, 0, 0xc001);
	sp.nvlan = 1;
	sp.vlan_tci[0] = 5;
	res(gso_run_add(&run, &sp) == 1 && !run.n, "a VLAN's frame: for no run");
}

/* n 100-byte SENDs from psn into the running engine's run (gso_put); how
 * many it took. */
static int put_sends(struct xhcad *d, __u32 psn, int n)
{
	int took = 0;

	for (int k = 0; k < n; k++) {
		struct xhca_pkt_spec sp;

		spec(&sp, XHCA_OP_SEND_ONLY, psn + (__u32)k, 100, 0, 0xc001);
		took += gso_put(d, &sp, NULL) == 0;
	}
	return took;
}

/* Whether the frames kept by the TX ring's stand-in are the n SENDs from
 * psn built alone (IPv4 IDs 0.. as in their run). */
static int kept_sends(__u32 psn, int n)
{
	__u8 fr[XHCA_PKT_MAX];

	if (fx_n != n)
		return 0;
	for (int k = 0; k < n; k++) {
		struct xhca_pkt_spec sp;
		int len;

		spec(&sp, XHCA_OP_SEND_ONLY, psn + (__u32)k, 100, 0, 0xc001);
		sp.ip_id = (__u16)k;
		len = xhca_pkt_build(&sp, fr, sizeof(fr));
		if (len <= 0 || fx_len[k] != (__u32)len || memcmp(fx_frame[k], fr, (size_t)len))
			return 0;
	}
	return 1;
}

/* gso.c's socket and what it does when a send fails, in a network
 * namespace of the case's own (its loopback device down: a packet socket
 * bound to it is refused every send with ENETDOWN). */
static void gso_socket_cases(struct xhcad *d)
{
	struct engine *e = &d->eng[0];
	struct xhca_req_stats *q = &e->req;

	d->gso = 1;
	d->ifindex = 0x7ffffff0;
	gso_start(d, e);
	res(!d->gso && !e->gso && gso_put(d, &(struct xhca_pkt_spec){ 0 }, NULL) == 1,
	    "no packet socket at start (no such interface): off, the frames for the TX ring");
	d->gso = 1;
	fx_zerocopy = 1;
	gso_start(d, e);
	fx_zerocopy = 0;
	res(!d->gso && !e->gso, "zero-copy AF_XDP sockets: off, no packet socket");

	d->gso = 1;
	d->ifindex = 1; /* (lo, down) */
	gso_start(d, e);
	if (!unit_check(d->gso && e->gso, "a packet socket on the namespace's loopback device")) {
		fx_reset();
		res(put_sends(d, 10, 5) == 5 && fx_n == 0, "5 SENDs in the run, nothing sent yet");
		gso_flush(d, NULL);
		res(kept_sends(10, 5) && q->gso_fallbacks == 1 && !q->gso_sends && !q->gso_lost &&
			    d->gso,
		    "the send refused (ENETDOWN): the run frame by frame through the TX ring, "
		    "byte for byte, counted (%d frames, %llu refused, %llu lost), the path still on",
		    fx_n, (unsigned long long)q->gso_fallbacks, (unsigned long long)q->gso_lost);
		fx_reset();
		gso_flush(d, NULL);
		res(fx_n == 0 && q->gso_fallbacks == 1, "an empty run: nothing sent");
		fx_tx_full = 1;
		put_sends(d, 20, 4);
		gso_flush(d, NULL);
		fx_tx_full = 0;
		res(fx_n == 0 && q->gso_fallbacks == 2 && q->gso_lost == 4,
		    "refused again with the TX ring full: the 4 frames lost, counted (%llu)",
		    (unsigned long long)q->gso_lost);
		put_sends(d, 30, 1);
		gso_flush(d, NULL);
		res(kept_sends(30, 1), "the run was emptied: the next SEND starts one of its own "
		    "(%d frames sent)", fx_n);
	}
	gso_close(&e->gso);
	res(!e->gso, "the socket closed");
}

static void case_socket(void)
{
	static struct xhcad d;
	struct engine *was = eng_self;
	int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

	if (home < 0 || unshare(CLONE_NEWNET)) {
		unit_skip("no network namespace of its own here (not root)");
		if (home >= 0)
			close(home);
		return;
	}
	memset(&d, 0, sizeof(d));
	d.neng = 1;
	eng_self = &d.eng[0];
	gso_socket_cases(&d);
	eng_self = was;
	if (setns(home, CLONE_NEWNET))
		unit_check(0, "back to the test's network namespace (%m)");
	close(home);
}

static const struct unit_case cases[] = {
	UNIT_RUN("ipv4", case_ipv4),
	UNIT_RUN("ipv6", case_ipv6),
	UNIT_RUN("limits", case_limits),
	UNIT_RUN("socket", case_socket),
};

UNIT_FILE(gso, NULL, NULL, cases);
