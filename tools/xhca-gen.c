/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-gen: RoCEv2 traffic generator.
 *
 * Builds frames with the libxhca packet builder and sends them out of an
 * interface with BPF_PROG_TEST_RUN in live-frames mode: the kernel runs the
 * xhca_gen XDP program (loaded, never attached) on each frame, and its
 * XDP_TX hands the frame to the driver, as if it had been received and
 * bounced. On a veth the frames arrive at the peer. Frames over a page (path
 * MTU 4096), which the kernel refuses in live-frames mode, go out of a packet
 * socket instead, each built whole. With --pcap the frames are written to a
 * file instead.
 *
 * Exit codes: 0 sent, 1 failed, 2 bad usage.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xhca/pcap.h>
#include <xhca/pkt.h>
#include <xhca/wire.h>
#include "log.h"
#include "opt.h"
#include "xhca_gen.skel.h"

#define PSN_MASK 0xffffffu
/*
 * How frames are split into test runs. A run of more than one frame costs two
 * RCU grace periods on top of its frames (bpf_prog_test_run_xdp swaps the XDP
 * dispatcher in and out: bpf_dispatcher_change_prog -> synchronize_rcu, about
 * 20 ms on the 2-core 6.18 machine); a run of one frame skips that and takes
 * about 0.1 ms. So paced traffic goes out one frame per run up to
 * SINGLE_RATE_MAX, and above it in bursts every PACED_RUN_SEC; traffic bounded
 * by --duration alone goes in runs of about UNPACED_RUN_SEC.
 */
#define SINGLE_RATE_MAX 2000.0
#define PACED_RUN_SEC 0.05
#define UNPACED_RUN_SEC 0.25
#define FIRST_DURATION_RUN 65536u
/* BPF_PROG_TEST_RUN takes a 32-bit repeat. */
#define MAX_REPEAT 0x40000000u
#define MAX_SIZES 16
/* The largest frame live frames carry: a page less the kernel's headroom
 * and shared info (x86-64). */
#define LIVE_FRAME_MAX 3408

struct gen_opts {
	const char *ifname;
	const char *pcap;
	int have_op, have_qpn, have_count, have_smac, have_dmac, have_reth_len, have_aeth;
	int have_src, have_dst;
	uint64_t count;
	double duration;	/* 0 = bounded by count */
	double rate;		/* 0 = as fast as the kernel goes */
	uint32_t psn, psn_step;
	uint32_t sizes[MAX_SIZES];	/* payload bytes, one block of frames each */
	int nsizes;
	uint32_t batch;
	const char *src, *dst;
	int json;
	int verbose;
	/* --msg-len: whole messages, split into FIRST/MIDDLE/LAST by mtu */
	uint64_t msg_len;
	uint32_t mtu;
	uint32_t seed;
	/* --payload: these bytes in every frame */
	uint8_t payload[XHCA_PKT_MAX];
	int have_payload;
	/* --va-step/--va-span: the RETH VA moves on per frame */
	uint32_t va_step, va_span;
	struct xhca_pkt_spec spec;
};

static volatile sig_atomic_t stop;
/* Set by every usage error, so that main exits 2 for those and 1 otherwise. */
static int usage_error;

static void on_signal(int sig)
{
	stop = 1;
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Every usage error is one line: what is wrong, then what to do. */
#define bad_usage(...)                    \
	({                                \
		pr_warn(__VA_ARGS__);     \
		usage_error = 1;          \
		-EINVAL;                  \
	})

/* A setter whose check said why it refused (bad_usage) returns 1, so that
 * xhca_opt_parse adds no second line. */
static int said(int err)
{
	return err ? 1 : 0;
}

/* The number parsers keep their own messages (tests/integ/gen.sh checks
 * them); x names the option. */
static int parse_u64(const struct xhca_opt *x, const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (!*s || *end || errno || *s == '-')
		return bad_usage("--%s '%s' is not a number; give a decimal or 0x hex value\n",
				 x->name, s);
	if (v > max)
		return bad_usage("--%s %s is out of range; give 0..%#" PRIx64 "\n", x->name, s, max);
	*out = v;
	return 0;
}

static int parse_u32(const struct xhca_opt *x, const char *s, uint32_t max, uint32_t *out)
{
	uint64_t v;
	int err;

	err = parse_u64(x, s, max, &v);
	if (!err)
		*out = (uint32_t)v;
	return err;
}

static int parse_pos_double(const struct xhca_opt *x, const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !(v > 0) || v > 1e12)
		return bad_usage("--%s '%s' is not a positive number; give e.g. 1.5\n", x->name, s);
	*out = v;
	return 0;
}

static int parse_mac(const struct xhca_opt *x, const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char tail;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &tail) != 6)
		return bad_usage("--%s '%s' is not a MAC address; give e.g. 02:77:00:00:00:01\n",
				 x->name, s);
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

static int parse_vlans(const struct xhca_opt *x, const char *s, struct xhca_pkt_spec *spec)
{
	char buf[64], *save = NULL, *tok;
	uint32_t id;
	int n = 0, err;

	if (strlen(s) >= sizeof(buf))
		return bad_usage("--vlan '%s' is too long; give ID or ID,ID\n", s);
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == 2)
			return bad_usage("--vlan '%s' has more than two tags; give ID or ID,ID\n", s);
		err = parse_u32(x, tok, 4095, &id);
		if (err)
			return err;
		spec->vlan_tci[n++] = (uint16_t)id;
	}
	if (!n)
		return bad_usage("--vlan '%s' has no VLAN ID; give ID or ID,ID\n", s);
	spec->nvlan = n;
	return 0;
}

static int parse_sizes(const struct xhca_opt *x, const char *s, struct gen_opts *o)
{
	char buf[256], *save = NULL, *tok;
	int err;

	if (strlen(s) >= sizeof(buf))
		return bad_usage("--size '%s' is too long; give at most %d sizes\n", s, MAX_SIZES);
	strcpy(buf, s);
	o->nsizes = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nsizes == MAX_SIZES)
			return bad_usage("--size '%s' has more than %d sizes\n", s, MAX_SIZES);
		err = parse_u32(x, tok, XHCA_PKT_MAX, &o->sizes[o->nsizes]);
		if (err)
			return err;
		o->nsizes++;
	}
	if (!o->nsizes)
		return bad_usage("--size '%s' has no size; give e.g. 64 or 64,1024\n", s);
	return 0;
}

/* --aeth SYN[:MSN] */
static int parse_aeth(const struct xhca_opt *x, const char *s, struct xhca_pkt_spec *spec)
{
	const char *colon = strchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : strlen(s);
	char syn[16];
	uint32_t v;
	int err;

	snprintf(syn, sizeof(syn), "%.*s", (int)(n < sizeof(syn) ? n : sizeof(syn) - 1), s);
	err = parse_u32(x, syn, 0xff, &v);
	if (err)
		return err;
	spec->aeth_syndrome = (uint8_t)v;
	return colon ? parse_u32(x, colon + 1, 0xffffff, &spec->aeth_msn) : 0;
}

/* --payload text:STRING, or bytes in hex: the payload and its size. */
static int parse_payload(const char *s, struct gen_opts *o)
{
	const char *h = !strncmp(s, "0x", 2) ? s + 2 : s;
	size_t n = 0;

	if (!strncmp(s, "text:", 5)) {
		n = strlen(s + 5);
		if (n > 4096)
			return bad_usage("--payload: at most 4096 bytes\n");
		memcpy(o->payload, s + 5, n);
	} else {
		if (!*h || strlen(h) % 2 || strlen(h) / 2 > 4096 ||
		    strspn(h, "0123456789abcdefABCDEF") != strlen(h))
			return bad_usage("--payload '%s': give text:STRING or bytes in hex "
					 "(up to 4096)\n", s);
		for (; *h; h += 2, n++) {
			char b[3] = { h[0], h[1], 0 };

			o->payload[n] = (uint8_t)strtoul(b, NULL, 16);
		}
	}
	o->have_payload = 1;
	o->sizes[0] = (uint32_t)n;
	o->nsizes = 1;
	return 0;
}

/* Opcode names as the verbs and the spec spell them ("rc-rdma-write-only",
 * "rc-read-request", "ud-send-only-with-immediate") are accepted beside the
 * builder's short ones ("rc-write-only", "rc-read-req"): scripts use both. */
static int opcode_parse(const char *arg, uint8_t *opcode)
{
	static const char *const words[][2] = {
		{ "rdma-", "" }, { "rdma_", "" }, { "request", "req" }, { "response", "resp" },
		{ "immediate", "imm" }, { "invalidate", "inv" }, { "with-", "" }, { "with_", "" },
	};
	char buf[64], tmp[64], *p;

	if (!xhca_opcode_parse(arg, opcode))
		return 0;
	if (strlen(arg) >= sizeof(buf))
		return -EINVAL;
	for (size_t i = 0; i <= strlen(arg); i++)
		buf[i] = (char)tolower((unsigned char)arg[i]);
	for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
		while ((p = strstr(buf, words[w][0]))) {
			snprintf(tmp, sizeof(tmp), "%.*s%s%s", (int)(p - buf), buf, words[w][1],
				 p + strlen(words[w][0]));
			strcpy(buf, tmp);
		}
	}
	return xhca_opcode_parse(buf, opcode);
}

/* ---- options: one table, which also writes the usage text ---------------- */

/* The options' setters (struct xhca_opt's set: ctx is struct gen_opts, the
 * builder's fields go straight into its spec). */
#define G ((struct gen_opts *)ctx)
#define S (&G->spec)

/* arg as a number 0..max for a narrower field; -1 when refused (said why:
 * the field's value does not matter then). */
static int64_t num32(const struct xhca_opt *x, const char *arg, uint32_t max)
{
	uint32_t v;

	return parse_u32(x, arg, max, &v) ? -1 : (int64_t)v;
}

XHCA_OPT_SETTER(set_ifname) { G->ifname = arg; return 0; }
XHCA_OPT_SETTER(set_pcap) { G->pcap = arg; return 0; }

XHCA_OPT_SETTER(set_op)
{
	if (opcode_parse(arg, &S->opcode))
		return said(bad_usage("--op '%s' is not a known opcode; give e.g. rc-send-only, "
				      "ud-send-only, cnp or a number 0..255\n", arg));
	G->have_op = 1;
	return 0;
}

XHCA_OPT_SETTER(set_qpn) { G->have_qpn = 1; return said(parse_u32(x, arg, PSN_MASK, &S->dqpn)); }
XHCA_OPT_SETTER(set_psn) { return said(parse_u32(x, arg, PSN_MASK, &G->psn)); }
XHCA_OPT_SETTER(set_psn_step) { return said(parse_u32(x, arg, PSN_MASK, &G->psn_step)); }

XHCA_OPT_SETTER(set_count)
{
	G->have_count = 1;
	return said(parse_u64(x, arg, UINT64_MAX >> 1, &G->count));
}

XHCA_OPT_SETTER(set_duration) { return said(parse_pos_double(x, arg, &G->duration)); }
XHCA_OPT_SETTER(set_rate) { return said(parse_pos_double(x, arg, &G->rate)); }
XHCA_OPT_SETTER(set_batch) { return said(parse_u32(x, arg, 256, &G->batch)); }
XHCA_OPT_SETTER(set_sizes) { return said(parse_sizes(x, arg, G)); }

XHCA_OPT_SETTER(set_pkey)
{
	int64_t t = num32(x, arg, 0xffff);

	S->pkey = (uint16_t)t;
	S->pkey_zero = !t; /* the builder reads 0 as "default" */
	return t < 0;
}

XHCA_OPT_SETTER(set_qkey) { return said(parse_u32(x, arg, UINT32_MAX, &S->deth_qkey)); }
XHCA_OPT_SETTER(set_sqp) { return said(parse_u32(x, arg, PSN_MASK, &S->deth_sqp)); }

XHCA_OPT_SETTER(set_tver) { int64_t t = num32(x, arg, 15); S->tver = (uint8_t)t; return t < 0; }
XHCA_OPT_SETTER(set_pad) { int64_t t = num32(x, arg, 3); S->pad = (int)t; return t < 0; }

XHCA_OPT_SETTER(set_ackreq) { S->ackreq = 1; return 0; }
XHCA_OPT_SETTER(set_se) { S->se = 1; return 0; }
XHCA_OPT_SETTER(set_aeth) { G->have_aeth = 1; return said(parse_aeth(x, arg, S)); }
XHCA_OPT_SETTER(set_bad_icrc) { S->bad_icrc = 1; return 0; }

XHCA_OPT_SETTER(set_reth_len)
{
	G->have_reth_len = 1;
	return said(parse_u32(x, arg, UINT32_MAX, &S->reth_len));
}

XHCA_OPT_SETTER(set_va)
{
	uint64_t v64;

	if (parse_u64(x, arg, UINT64_MAX, &v64))
		return 1;
	S->reth_va = S->atomic_va = v64;
	return 0;
}

XHCA_OPT_SETTER(set_rkey)
{
	int64_t t = num32(x, arg, UINT32_MAX);

	S->reth_rkey = S->atomic_rkey = S->ieth_rkey = (uint32_t)t;
	return t < 0;
}

XHCA_OPT_SETTER(set_imm) { return said(parse_u32(x, arg, UINT32_MAX, &S->imm)); }
XHCA_OPT_SETTER(set_swap_add) { return said(parse_u64(x, arg, UINT64_MAX, &S->atomic_swap)); }
XHCA_OPT_SETTER(set_compare) { return said(parse_u64(x, arg, UINT64_MAX, &S->atomic_cmp)); }
XHCA_OPT_SETTER(set_src) { G->src = arg; return 0; }
XHCA_OPT_SETTER(set_dst) { G->dst = arg; return 0; }
XHCA_OPT_SETTER(set_src_mac) { G->have_smac = 1; return said(parse_mac(x, arg, S->smac)); }
XHCA_OPT_SETTER(set_dst_mac) { G->have_dmac = 1; return said(parse_mac(x, arg, S->dmac)); }
XHCA_OPT_SETTER(set_vlan) { return said(parse_vlans(x, arg, S)); }

XHCA_OPT_SETTER(set_sport)
{
	int64_t t = num32(x, arg, 0xffff);

	if (!t)
		return said(bad_usage("--sport 0 is not a usable port; give 1..65535\n"));
	S->sport = (uint16_t)t;
	return t < 0;
}

XHCA_OPT_SETTER(set_stamp) { S->psn_stamp = 1; return 0; }

XHCA_OPT_SETTER(set_msg_len)
{
	if (parse_u64(x, arg, 0x80000000ull, &G->msg_len))
		return 1;
	if (!G->msg_len)
		return said(bad_usage("--msg-len 0: give 1 or more bytes (a zero-length WRITE is "
				      "--op ...-write-only --size 0)\n"));
	return 0;
}

XHCA_OPT_SETTER(set_mtu)
{
	if (parse_u32(x, arg, 4096, &G->mtu))
		return 1;
	if (G->mtu < 256 || (G->mtu & (G->mtu - 1)))
		return said(bad_usage("--mtu %s: give 256, 512, 1024, 2048 or 4096\n", arg));
	return 0;
}

XHCA_OPT_SETTER(set_pattern) { return said(parse_u32(x, arg, UINT32_MAX, &G->seed)); }
XHCA_OPT_SETTER(set_payload) { return said(parse_payload(arg, G)); }
XHCA_OPT_SETTER(set_va_step) { return said(parse_u32(x, arg, UINT32_MAX, &G->va_step)); }
XHCA_OPT_SETTER(set_va_span) { return said(parse_u32(x, arg, UINT32_MAX, &G->va_span)); }
XHCA_OPT_SETTER(set_json) { G->json = 1; return 0; }
XHCA_OPT_SETTER(set_verbose) { G->verbose++; return 0; }
#undef S
#undef G

#define OPT XHCA_OPT_LONG
static const struct xhca_opt options[] = {
	{ .name = "interface", .key = 'i', .arg = "IF", .help = "send from IF (on a veth: to its "
	  "peer)", .set = set_ifname },
	OPT(0, "pcap", "FILE", "write the frames to FILE instead of sending", set_pcap),
	OPT(1, "op", "OPCODE", "rc-send-only, uc-send-first, ud-send-only,\n"
	  "rc-rdma-write-only, rc-read-req, rc-ack, cnp, ... or a\n"
	  "number 0..255 (unknown opcodes get a bare BTH)", set_op),
	OPT(2, "qpn", "N", "destination QPN (24 bits)", set_qpn),
	OPT(3, "psn", "N", "first PSN (default 0)", set_psn),
	OPT(4, "psn-step", "N", "PSN increment per frame (default 1; 0 = constant PSN)",
	  set_psn_step),
	OPT(5, "count", "N", "frames to send (default 1)", set_count),
	OPT(6, "duration", "SEC", "send until SEC seconds have passed (with -i)", set_duration),
	OPT(7, "rate", "PPS", "pace to PPS frames per second (default: as fast as\n"
	  "the kernel goes)", set_rate),
	OPT(8, "batch", "N", "live-frames batch size (kernel default 64, max 256)", set_batch),
	OPT(9, "size", "BYTES[,BYTES...]", "payload bytes (default 64; ignored for opcodes\n"
	  "without payload); with several sizes, --count frames\n"
	  "of each in turn (--duration is shared), PSNs\ncontinuing", set_sizes),
	OPT(10, "pkey", "P", "the BTH's P_Key (default 0xffff)", set_pkey),
	OPT(11, "qkey", "K", "the DETH's Q_Key (UD; default 0)", set_qkey),
	OPT(12, "sqp", "N", "the DETH's source QPN (UD; default 0)", set_sqp),
	OPT(13, "tver", "N", "the BTH's transport version, 0..15 (default 0)", set_tver),
	OPT(14, "pad", "N", "the BTH's pad count, 0..3 (default: from the payload)",
	  set_pad),
	OPT(15, "ackreq", NULL, "set the BTH's AckReq bit", set_ackreq),
	OPT(16, "se", NULL, "set the BTH's solicited event bit", set_se),
	OPT(17, "aeth", "SYN[:MSN]", "an ACK's or response's AETH: syndrome (0x00 ACK,\n"
	  "0x20 RNR, 0x60-0x63 NAKs; default 0) and MSN\n(default 0)", set_aeth),
	OPT(18, "bad-icrc", NULL, "send a wrong ICRC (the receiver must drop the frame)",
	  set_bad_icrc),
	OPT(19, "reth-len", "N", "the RETH's length (default: --size)", set_reth_len),
	OPT(20, "va", "N", "the RETH's (or ATOMIC's) virtual address", set_va),
	OPT(21, "rkey", "N", "the R_Key of the RETH, ATOMIC or IETH", set_rkey),
	OPT(22, "imm", "N", "the immediate data", set_imm),
	OPT(23, "swap-add", "N", "ATOMIC: the swap (or add) value", set_swap_add),
	OPT(24, "compare", "N", "ATOMIC: the compare value", set_compare),
	OPT(25, "src", "IP", "IPv4 or IPv6, the family of --dst (default 10.77.0.2;\n"
	  "fd77::2 when --dst is IPv6)", set_src),
	OPT(26, "dst", "IP", "IPv4 or IPv6, the family of --src (default 10.77.0.1;\n"
	  "fd77::1 when --src is IPv6)", set_dst),
	OPT(27, "src-mac", "M", "default: IF's MAC", set_src_mac),
	OPT(28, "dst-mac", "M", "default: the neighbour entry of --dst on IF", set_dst_mac),
	OPT(29, "vlan", "ID[,ID]", "one or two VLAN tags (outer first)", set_vlan),
	OPT(30, "sport", "N", "UDP source port (default 0xc000)", set_sport),
	OPT(31, "stamp", NULL, "the first 4 payload bytes carry the PSN (big-endian),\n"
	  "for receivers that check order (xhca-recv --check-psn)", set_stamp),
	OPT(32, "msg-len", "N", "send --count messages of N bytes each, split by --mtu\n"
	  "into FIRST/MIDDLE/LAST (ONLY if one packet); --op\n"
	  "names the ONLY opcode (e.g. rc-rdma-write-only[-imm],\n"
	  "uc-send-only); PSNs run on from --psn; the RETH (--va,\n"
	  "--rkey) gets the message length", set_msg_len),
	OPT(33, "mtu", "M", "--msg-len's path MTU: 256, 512, 1024, 2048 or 4096\n"
	  "(default 1024)", set_mtu),
	OPT(34, "pattern", "SEED", "message byte k is xhca_msg_pattern(SEED, k)\n"
	  "(include/priv/xhca/pkt.h; default 1)", set_pattern),
	OPT(35, "payload", "text:STRING|HEX", "the payload of every frame, as given (its length\n"
	  "is the size), e.g. text:'LOCK db1 alice'", set_payload),
	OPT(36, "va-step", "N", "frame k's RETH VA is --va + (k * N) % S, with S from\n"
	  "--va-span (only the low 32 bits may change: S < 2^32)", set_va_step),
	OPT(37, "va-span", "S", "the span of --va-step's walk", set_va_span),
	{ .name = "json", .key = 'j', .help = "print the summary as JSON", .set = set_json },
	{ .name = "verbose", .key = 'v', .help = "libbpf messages (twice: debug)",
	  .set = set_verbose },
	{ .name = "help", .key = 'h', .help = "this text" },
	{ 0 },
};
#undef OPT

static void usage(FILE *f)
{
	fprintf(f, "Usage: xhca-gen -i IFNAME | --pcap FILE --op OPCODE --qpn N [options]\n"
		   "Sends RoCEv2 frames out of IFNAME (BPF_PROG_TEST_RUN, live frames, XDP_TX;\n"
		   "frames over 3408 B from a packet socket), or writes them to a pcap file.\n\n");
	xhca_opt_usage(f, options, 25);
	fprintf(f, "Numbers are decimal or 0x hex. Exit: 0 sent, 1 failed, 2 bad usage.\n");
}

/* ---- what the options must say together --------------------------------- */

/* Where to, what and to whom: the options every run needs. */
static int check_needed(const struct gen_opts *o)
{
	if (!o->ifname == !o->pcap)
		return bad_usage("%s; give -i IFNAME to send or --pcap FILE to write a file\n",
				 o->ifname ? "-i and --pcap exclude each other"
					   : "nowhere to send");
	if (!o->have_op)
		return bad_usage("no opcode; give --op, e.g. --op rc-send-only\n");
	if (!o->have_qpn)
		return bad_usage("no destination QPN; give --qpn N\n");
	return 0;
}

/* How many frames: --count or --duration (-i only), by default one. */
static int check_count(struct gen_opts *o)
{
	if (o->have_count && o->duration > 0)
		return bad_usage("--count and --duration exclude each other; give one\n");
	if (o->pcap && o->duration > 0)
		return bad_usage("--duration needs -i (a file has no time); give --count\n");
	if (o->have_count && !o->count)
		return bad_usage("--count 0 sends nothing; give 1 or more\n");
	if (!o->have_count)
		o->count = 1;
	return 0;
}

/* Addresses: both of one family; the one not given defaults to the test
 * topology's address of that family (tests/lib.sh). */
static int parse_addrs(struct gen_opts *o)
{
	const char *src = o->src, *dst = o->dst;
	int fs, fd;

	if (!src)
		src = dst && strchr(dst, ':') ? "fd77::2" : "10.77.0.2";
	if (!dst)
		dst = strchr(src, ':') ? "fd77::1" : "10.77.0.1";
	fs = xhca_ip_parse(src, o->spec.src_ip);
	if (fs < 0)
		return bad_usage("--src '%s' is not an IPv4 or IPv6 address; give e.g. 10.77.0.2\n",
				 src);
	fd = xhca_ip_parse(dst, o->spec.dst_ip);
	if (fd < 0)
		return bad_usage("--dst '%s' is not an IPv4 or IPv6 address; give e.g. 10.77.0.1\n",
				 dst);
	if (fs != fd)
		return bad_usage("--src %s and --dst %s are of different families; give two IPv4 "
				 "or two IPv6 addresses\n", src, dst);
	o->spec.ipv6 = fs == 6;
	return 0;
}

/* --payload, several --size and --stamp need an opcode that carries a
 * payload (an unknown one may, after its bare BTH). */
static int check_payload(struct gen_opts *o, const struct xhca_opinfo *oi)
{
	int none = (oi->flags & XHCA_O_KNOWN) && !(oi->flags & XHCA_O_PAYLOAD);

	if (o->have_payload) {
		if (none)
			return bad_usage("--payload: %s carries no payload\n",
					 xhca_opcode_name(o->spec.opcode));
		if (o->msg_len || o->spec.psn_stamp)
			return bad_usage("--payload excludes --msg-len and --stamp\n");
		o->spec.payload = o->payload;
	}
	if (o->nsizes > 1 && none)
		return bad_usage("--size: %s carries no payload; give one size or none\n",
				 xhca_opcode_name(o->spec.opcode));
	if (!o->spec.psn_stamp)
		return 0;
	if (!(oi->flags & XHCA_O_KNOWN) || !(oi->flags & XHCA_O_PAYLOAD))
		return bad_usage("--stamp: %s carries no payload\n",
				 xhca_opcode_name(o->spec.opcode));
	for (int i = 0; i < o->nsizes; i++)
		if (o->sizes[i] < 4)
			return bad_usage("--stamp needs payloads of 4 bytes or more; --size %u is "
					 "too small\n", o->sizes[i]);
	return 0;
}

/* --aeth and --va-step/--va-span need the header they change. */
static int check_headers(const struct gen_opts *o, const struct xhca_opinfo *oi)
{
	if (o->have_aeth && !(oi->flags & XHCA_H_AETH))
		return bad_usage("--aeth: %s has no AETH\n", xhca_opcode_name(o->spec.opcode));
	if (!o->va_step != !o->va_span)
		return bad_usage("--va-step and --va-span go together\n");
	if (!o->va_span)
		return 0;
	if (!(oi->flags & XHCA_H_RETH) || (o->spec.opcode >> 5) > 1)
		return bad_usage("--va-step: %s has no RETH of an RC or UC request\n",
				 xhca_opcode_name(o->spec.opcode));
	if ((o->spec.reth_va & 0xffffffffull) + o->va_span > 0x100000000ull)
		return bad_usage("--va-span: --va + span must not carry out of the low 32 bits of "
				 "the VA\n");
	if (o->msg_len || o->spec.psn_stamp)
		return bad_usage("--va-step excludes --msg-len and --stamp\n");
	return 0;
}

/* --msg-len: whole SEND or WRITE messages, from their ONLY opcode. */
static int check_msg(const struct gen_opts *o, const struct xhca_opinfo *oi)
{
	__u8 op = o->spec.opcode & 0x1f;

	if (!o->msg_len)
		return 0;
	if (!(oi->flags & XHCA_O_KNOWN) || !(oi->flags & XHCA_O_REQ) ||
	    !(oi->flags & XHCA_O_PAYLOAD) || !(oi->flags & XHCA_O_START) ||
	    !(oi->flags & XHCA_O_END) || op == XHCA_OP_ATOMIC_WRITE)
		return bad_usage("--msg-len: --op must be a SEND or WRITE ONLY opcode, e.g. "
				 "rc-rdma-write-only; %s is not\n", xhca_opcode_name(o->spec.opcode));
	if (o->duration > 0 || o->nsizes > 1 || o->spec.psn_stamp)
		return bad_usage("--msg-len excludes --duration, several --size and --stamp\n");
	if ((o->spec.opcode >> 5) == 3 && o->msg_len > o->mtu)
		return bad_usage("--msg-len %llu: a UD message is one packet (<= --mtu %u)\n",
				 (unsigned long long)o->msg_len, o->mtu);
	return 0;
}

/* Makes sizes[i] the payload of the frames to build. The opcode decides:
 * only opcodes that carry a payload get one (unknown ones get it after a
 * bare BTH, to exercise the receiver); the RETH length follows unless
 * --reth-len was given. */
static void set_size(struct gen_opts *o, int i)
{
	const struct xhca_opinfo *oi = &xhca_opinfo_tbl[o->spec.opcode];

	if (!(oi->flags & XHCA_O_KNOWN) || (oi->flags & XHCA_O_PAYLOAD))
		o->spec.payload_len = o->sizes[i];
	if (!o->have_reth_len)
		o->spec.reth_len = o->sizes[i];
}

/* The options into o, checked together. 0; XHCA_OPT_HELP (the usage is
 * printed); else bad usage (one line said why). */
static int parse_args(int argc, char **argv, struct gen_opts *o)
{
	const struct xhca_opinfo *oi;
	int err;

	memset(o, 0, sizeof(*o));
	xhca_pkt_spec_init(&o->spec, 0);
	o->psn_step = 1;
	o->sizes[0] = 64;
	o->nsizes = 1;
	o->mtu = 1024;
	err = xhca_opt_parse_all("xhca-gen", options, argc, argv, o);
	if (err == XHCA_OPT_HELP)
		usage(stdout);
	if (err)
		return err;
	if (!o->seed) /* --pattern 0 too */
		o->seed = 1;
	oi = &xhca_opinfo_tbl[o->spec.opcode];
	err = check_needed(o);
	err = err ?: check_count(o);
	err = err ?: parse_addrs(o);
	err = err ?: check_payload(o, oi);
	err = err ?: check_headers(o, oi);
	err = err ?: check_msg(o, oi);
	if (err)
		return err;
	set_size(o, 0);
	o->spec.psn = o->psn;
	return 0;
}

/* Source MAC, MTU and state of the interface, from the kernel of our network
 * namespace (sysfs may show another one under nsenter). */
static int if_info(const char *ifname, uint8_t mac[6], int *mtu, int *up)
{
	struct ifreq ifr;
	int fd, err = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
		err = -errno;
		goto out;
	}
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	if (ioctl(fd, SIOCGIFMTU, &ifr) < 0) {
		err = -errno;
		goto out;
	}
	*mtu = ifr.ifr_mtu;
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		err = -errno;
		goto out;
	}
	*up = !!(ifr.ifr_flags & IFF_UP);
out:
	close(fd);
	return err;
}


/* Offsets the XDP program patches, found by walking the built frame. */
struct frame_offs {
	uint32_t psn;	/* BTH AckReq|PSN word */
	uint32_t icrc;
	uint32_t csum;	/* UDP checksum; 0 when the checksum is 0 */
	uint32_t payload; /* first payload byte */
};

static int frame_offsets(const uint8_t *f, size_t len, struct frame_offs *fo)
{
	size_t off = 12, udp;
	uint16_t type, ulen;

	type = (uint16_t)(f[off] << 8 | f[off + 1]);
	while (type == ETH_P_8021Q || type == ETH_P_8021AD) {
		off += 4;
		type = (uint16_t)(f[off] << 8 | f[off + 1]);
	}
	off += 2;
	if (type == ETH_P_IP && f[off + 9] == 17)
		udp = off + (size_t)(f[off] & 0x0f) * 4;
	else if (type == ETH_P_IPV6 && f[off + 6] == 17)
		udp = off + 40;
	else
		return -EINVAL;
	ulen = (uint16_t)(f[udp + 4] << 8 | f[udp + 5]);
	if (udp + ulen > len || ulen < 8 + sizeof(struct xhca_bth) + XHCA_ICRC_LEN)
		return -EINVAL;
	fo->psn = (uint32_t)(udp + 8 + 8);
	fo->icrc = (uint32_t)(udp + ulen - XHCA_ICRC_LEN);
	fo->csum = (f[udp + 6] || f[udp + 7]) ? (uint32_t)(udp + 6) : 0;
	fo->payload = (uint32_t)(udp + 8 + xhca_opinfo_tbl[f[udp + 8]].hdr_len);
	return 0;
}

/* Whether frames differ: then xhca_gen rewrites PSN (VA) and ICRC per frame. */
static int psn_varies(const struct gen_opts *o)
{
	return (o->psn_step || o->va_span) && (o->duration > 0 || o->count > 1);
}

static uint64_t va_of(const struct gen_opts *o, uint64_t k)
{
	if (!o->va_span)
		return o->spec.reth_va;
	return o->spec.reth_va + (uint32_t)((k * o->va_step) % o->va_span);
}

static uint32_t psn_of(const struct gen_opts *o, uint64_t k)
{
	return (uint32_t)(o->psn + k * o->psn_step) & PSN_MASK;
}

static int build_va(const struct gen_opts *o, uint32_t psn, uint64_t va, uint8_t *buf)
{
	struct xhca_pkt_spec s = o->spec;

	s.psn = psn;
	s.reth_va = va;
	return xhca_pkt_build(&s, buf, XHCA_PKT_MAX);
}

static int build(const struct gen_opts *o, uint32_t psn, uint8_t *buf)
{
	return build_va(o, psn, o->spec.reth_va, buf);
}

/* Frame number k as xhca_gen makes it. */
static int build_k(const struct gen_opts *o, uint64_t k, uint8_t *buf)
{
	return build_va(o, psn_of(o, k), va_of(o, k), buf);
}

static uint32_t icrc_word(const uint8_t *frame, const struct frame_offs *fo)
{
	uint32_t v;

	memcpy(&v, frame + fo->icrc, sizeof(v));
	return v;
}

/* Loads xhca_gen with what it needs to rewrite PSN and ICRC per frame. */
static int gen_load(const struct gen_opts *o, const uint8_t *frame0, size_t len,
		    struct xhca_gen **out)
{
	static uint8_t tmp[XHCA_PKT_MAX];
	struct xhca_gen *skel;
	struct frame_offs fo = {};
	int err;

	skel = xhca_gen__open();
	if (!skel) {
		err = -errno;
		pr_warn("load: cannot open the xhca_gen BPF object: %s; run with -v\n",
			strerror(-err));
		return err;
	}
	if (psn_varies(o)) {
		err = frame_offsets(frame0, len, &fo);
		if (err) {
			pr_warn("build: cannot find the BTH in the built frame; use --psn-step 0\n");
			goto out;
		}
		skel->rodata->psn_off = fo.psn;
		if (o->spec.psn_stamp) {
			if (fo.csum) {
				pr_warn("build: --stamp needs frames without a UDP checksum\n");
				err = -EINVAL;
				goto out;
			}
			skel->rodata->stamp_off = fo.payload;
		}
		skel->rodata->icrc_off = fo.icrc;
		skel->rodata->csum_off = fo.csum;
		if (o->va_span) {
			/* the RETH follows the BTH; its VA's low word is bytes 4..7 */
			skel->rodata->va_off = fo.psn + 4 + 4;
			skel->rodata->va_first_lo = (uint32_t)o->spec.reth_va;
			skel->rodata->va_step = o->va_step;
			skel->rodata->va_span = o->va_span;
			for (int i = 0; i < 32; i++) {
				err = build_va(o, o->psn, o->spec.reth_va ^ (1ull << i), tmp);
				if (err < 0)
					goto out;
				skel->rodata->va_delta[i] = icrc_word(tmp, &fo) ^
							    icrc_word(frame0, &fo);
			}
			if (fo.csum) {
				pr_warn("build: --va-step needs frames without a UDP checksum\n");
				err = -EINVAL;
				goto out;
			}
		}
		skel->rodata->psn_first = o->psn;
		skel->rodata->psn_step = o->psn_step;
		skel->rodata->icrc_first = icrc_word(frame0, &fo);
		for (int i = 0; i < 24; i++) {
			err = build(o, o->psn ^ (1u << i), tmp);
			if (err < 0) {
				pr_warn("build: the builder refused PSN %#x: %s\n", o->psn ^ (1u << i),
					strerror(-err));
				goto out;
			}
			skel->rodata->icrc_delta[i] = icrc_word(tmp, &fo) ^ icrc_word(frame0, &fo);
		}
	}
	err = xhca_gen__load(skel);
	if (err) {
		pr_warn("load: the kernel refused the xhca_gen XDP program: %s; run as root, "
			"with -v for the verifier log\n", strerror(-err));
		goto out;
	}
	*out = skel;
	skel = NULL;
out:
	xhca_gen__destroy(skel);
	return err;
}

/* Runs xhca_gen without live frames on a few frame numbers and compares
 * what it makes with what the builder makes for the same PSN: a wrong ICRC
 * on the wire would be dropped by a real receiver, silently. */
static int gen_self_check(const struct gen_opts *o, struct xhca_gen *skel, const uint8_t *frame0,
			  size_t len)
{
	static uint8_t want[XHCA_PKT_MAX], got[XHCA_PKT_MAX];
	const uint64_t ks[] = { 1, 2, 0x5a5a5, 0xffffff };
	int err = 0;

	for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = frame0,
			    .data_size_in = (__u32)len, .data_out = got,
			    .data_size_out = sizeof(got), .repeat = 1);

		skel->bss->seq = ks[i];
		err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xhca_gen), &topts);
		if (err) {
			err = -errno;
			pr_warn("self-check: test run of xhca_gen failed: %s\n", strerror(-err));
			goto out;
		}
		err = build_k(o, ks[i], want);
		if (err < 0)
			goto out;
		if (topts.retval != XDP_TX || topts.data_size_out != len || memcmp(want, got, len)) {
			pr_warn("self-check: xhca_gen's frame for PSN %#x differs from the "
				"builder's; use --psn-step 0 and report this bug\n",
				psn_of(o, ks[i]));
			err = -EPROTO;
			goto out;
		}
	}
	err = 0;
out:
	skel->bss->seq = 0;
	return err;
}

/* A packet socket on ifindex, for frames over LIVE_FRAME_MAX. */
static int packet_open(int ifindex)
{
	struct sockaddr_ll a = { .sll_family = AF_PACKET, .sll_ifindex = ifindex };
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		int err = -errno;

		pr_warn("packet socket: %s; run as root\n", strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	return fd;
}

/* One frame out of the packet socket (the device's queue full: again). */
static int packet_send(int fd, const char *ifname, const uint8_t *frame, size_t len)
{
	for (int tries = 0; tries < 1000; tries++) {
		if (send(fd, frame, len, 0) == (ssize_t)len)
			return 0;
		if (errno == EMSGSIZE)
			return bad_usage("send on %s: the %zu B frame exceeds its MTU; raise it "
					 "(ip link set %s mtu N)\n", ifname, len, ifname);
		if (errno != ENOBUFS && errno != EAGAIN)
			break;
		usleep(100);
	}
	pr_warn("send on %s: %s\n", ifname, strerror(errno));
	return -errno;
}

/* Sends up to n frames in one live-frames test run. Interrupted by a signal,
 * the kernel returns -EINTR; the frame count comes from seq either way. */
static int send_run(const struct gen_opts *o, int prog_fd, int ifindex, const uint8_t *frame,
		    size_t len, uint32_t n)
{
	struct xdp_md ctx_in = { .data_end = (__u32)len, .ingress_ifindex = (__u32)ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = frame, .data_size_in = (__u32)len,
		    .ctx_in = &ctx_in, .ctx_size_in = sizeof(ctx_in), .repeat = n,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = o->batch);

	if (bpf_prog_test_run_opts(prog_fd, &topts))
		return -errno;
	return 0;
}

static void sleep_until(double t)
{
	struct timespec ts;

	ts.tv_sec = (time_t)t;
	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !stop)
		;
}

/* Frames for the next test run; run_pps is the rate the last run reached. */
static uint64_t next_run_len(const struct gen_opts *o, uint64_t left, double run_pps,
			     double time_left)
{
	double n;

	if (o->rate > 0)
		n = o->rate <= SINGLE_RATE_MAX ? 1 : o->rate * PACED_RUN_SEC;
	else if (o->duration > 0)
		n = run_pps > 0 ? run_pps * (time_left < UNPACED_RUN_SEC ? time_left
									 : UNPACED_RUN_SEC)
				: FIRST_DURATION_RUN;
	else
		n = (double)left;
	if (n < 1)
		n = 1;
	if (n > (double)left)
		n = (double)left;
	if (n > MAX_REPEAT)
		n = MAX_REPEAT;
	return (uint64_t)n;
}

struct gen_result {
	uint64_t sent;
	double seconds;
	int frame_len;
};

/* send_frames for frames over LIVE_FRAME_MAX: each built whole, sent from a
 * packet socket; --rate and --duration as for live frames. */
static int send_big(const struct gen_opts *o, int ifindex, struct gen_result *res)
{
	static uint8_t frame[XHCA_PKT_MAX];
	uint64_t left = o->duration > 0 ? UINT64_MAX : o->count;
	double t0 = now_sec(), deadline = t0 + o->duration;
	int fd = packet_open(ifindex), err = 0;

	if (fd < 0)
		return fd;
	for (uint64_t k = 0; k < left && !stop; k++) {
		int len = build_k(o, k, frame);

		if (len < 0) {
			err = len;
			break;
		}
		err = packet_send(fd, o->ifname, frame, (size_t)len);
		if (err)
			break;
		res->sent++;
		if (o->rate > 0)
			sleep_until(t0 + (double)(k + 1) / o->rate);
		if (o->duration > 0 && now_sec() >= deadline)
			break;
	}
	res->seconds = now_sec() - t0;
	close(fd);
	return err;
}

/* The interface's index and MTU, and the MACs the options left out: the
 * interface's own and the neighbour entry of the destination. 0, or -errno
 * with the message printed. */
static int iface_setup(struct gen_opts *so, int *ifindex, int *mtu)
{
	char ip[INET6_ADDRSTRLEN];
	uint8_t ifmac[6];
	int up = 0, err;

	*ifindex = (int)if_nametoindex(so->ifname);
	if (!*ifindex)
		return bad_usage("interface '%s' not found in this network namespace; check the "
				 "name (ip link)\n", so->ifname);
	err = if_info(so->ifname, ifmac, mtu, &up);
	if (err) {
		pr_warn("interface %s: cannot read its address: %s\n", so->ifname, strerror(-err));
		return err;
	}
	if (!up) {
		pr_warn("interface %s is down; bring it up (ip link set %s up)\n", so->ifname,
			so->ifname);
		return -ENETDOWN;
	}
	if (!so->have_smac)
		memcpy(so->spec.smac, ifmac, 6);
	if (!so->have_dmac &&
	    xhca_neigh_lookup(*ifindex, so->spec.dst_ip, so->spec.ipv6, so->spec.dmac))
		return bad_usage("no neighbour entry for %s on %s; give --dst-mac (or add one: ip "
				 "neigh replace %s lladdr MAC dev %s)\n",
				 xhca_ip_str(so->spec.dst_ip, ip, sizeof(ip)), so->ifname, ip,
				 so->ifname);
	return 0;
}

/* Sends o->count frames (or for o->duration) in live-frames test runs of
 * the loaded xhca_gen, paced by o->rate, until done or a signal. */
static int send_live(const struct gen_opts *o, struct xhca_gen *skel, int ifindex,
		     const uint8_t *frame, int len, struct gen_result *res)
{
	struct sigaction sa = { .sa_handler = on_signal };
	int prog_fd = bpf_program__fd(skel->progs.xhca_gen), err;
	uint64_t left = o->duration > 0 ? UINT64_MAX : o->count;
	double t0, deadline, run_pps = 0;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	t0 = now_sec();
	deadline = t0 + o->duration;
	while (left && !stop) {
		uint64_t n = next_run_len(o, left, run_pps, deadline - now_sec());
		double tr = now_sec();

		err = send_run(o, prog_fd, ifindex, frame, (size_t)len, (uint32_t)n);
		if (err == -EINTR)
			break;
		if (err == -EINVAL) /* the kernel's only limit a good program can hit */
			return bad_usage("send on %s: the kernel refused the %d B frame; live frames "
					 "must fit in a page with headroom (3408 B on x86-64): "
					 "lower --size\n", o->ifname, len);
		if (err) {
			pr_warn("send on %s: live-frames test run failed: %s; run as root\n",
				o->ifname, strerror(-err));
			return err;
		}
		left -= left == UINT64_MAX ? 0 : n;
		run_pps = (double)n / (now_sec() - tr);
		if (o->rate > 0)
			sleep_until(t0 + (double)skel->bss->seq / o->rate);
		if (o->duration > 0 && now_sec() >= deadline)
			break;
	}
	res->seconds = now_sec() - t0;
	res->sent = skel->bss->seq;
	return 0;
}

static int send_frames(const struct gen_opts *o, struct gen_result *res)
{
	static uint8_t frame[XHCA_PKT_MAX];
	struct xhca_gen *skel = NULL;
	struct gen_opts so = *o;
	int ifindex, mtu = 0, len, err;

	err = iface_setup(&so, &ifindex, &mtu);
	if (err)
		return err;
	len = build(&so, so.psn, frame);
	if (len < 0)
		return bad_usage("build: the builder refused these fields (%s); check --size, "
				 "--pad, --vlan\n", strerror(-len));
	res->frame_len = len;
	if (len > LIVE_FRAME_MAX)
		return send_big(&so, ifindex, res);
	err = gen_load(&so, frame, (size_t)len, &skel);
	if (!err && psn_varies(&so))
		err = gen_self_check(&so, skel, frame, (size_t)len);
	if (!err)
		err = send_live(&so, skel, ifindex, frame, len, res);
	/* After the first run: a frame the kernel refuses needs no warning. */
	if (!err && len - 14 - 4 * so.spec.nvlan > mtu)
		pr_warn("warning: the %d B frames exceed the MTU %d of %s; the receiver may drop "
			"them\n", len, mtu, o->ifname);
	xhca_gen__destroy(skel);
	return err;
}

/* Builds packet i of message m (PSN psn) into frame. */
static int msg_build(const struct gen_opts *o, const uint8_t *msg, uint64_t i, uint64_t n,
		     uint32_t psn, uint8_t *frame)
{
	struct xhca_pkt_spec s = o->spec;
	uint64_t off = i * o->mtu;

	s.opcode = xhca_msg_opcode(o->spec.opcode, i, n);
	s.psn = psn;
	s.payload = msg + off;
	s.payload_len = (uint32_t)(o->msg_len - off < o->mtu ? o->msg_len - off : o->mtu);
	s.reth_len = (uint32_t)o->msg_len;
	s.pad = -1;
	return xhca_pkt_build(&s, frame, XHCA_PKT_MAX);
}

/* Where --msg-len's frames go: into the pcap file, or out of the interface
 * (live frames from xhca_gen, one per test run; frames over LIVE_FRAME_MAX
 * from a packet socket, opened for the first of them). */
struct msg_out {
	FILE *pcap;
	struct xhca_gen *skel;
	int ifindex, pfd;
};

/* The interface, and xhca_gen loaded to send frames built whole. */
static int msg_out_open(struct gen_opts *so, const uint8_t *msg, uint64_t n, struct msg_out *mo)
{
	static uint8_t frame[XHCA_PKT_MAX];
	int mtu, len, err;

	err = iface_setup(so, &mo->ifindex, &mtu);
	if (err)
		return err;
	so->psn_step = 0; /* xhca_gen rewrites nothing */
	len = msg_build(so, msg, 0, n, so->psn, frame);
	if (len < 0)
		return bad_usage("build: the builder refused these fields (%s)\n", strerror(-len));
	return gen_load(so, frame, (size_t)len, &mo->skel);
}

static int msg_emit(const struct gen_opts *o, struct msg_out *mo, const uint8_t *frame, int len)
{
	int err;

	if (mo->pcap) {
		err = xhca_pcap_write(mo->pcap, frame, (size_t)len);
	} else if (len > LIVE_FRAME_MAX) {
		if (mo->pfd < 0)
			mo->pfd = packet_open(mo->ifindex);
		/* both say what went wrong */
		return mo->pfd < 0 ? mo->pfd : packet_send(mo->pfd, o->ifname, frame, (size_t)len);
	} else {
		err = send_run(o, bpf_program__fd(mo->skel->progs.xhca_gen), mo->ifindex, frame,
			       (size_t)len, 1);
		if (err == -EINVAL)
			return bad_usage("send on %s: the kernel refused the %d B frame; live "
					 "frames must fit in a page: lower --mtu\n", o->ifname, len);
	}
	if (err)
		pr_warn("send: %s\n", strerror(-err));
	return err;
}

/* One message of n packets, their PSNs from *psn on. */
static int msg_send(const struct gen_opts *o, struct msg_out *mo, const uint8_t *msg, uint64_t n,
		    uint32_t *psn, struct gen_result *res)
{
	static uint8_t frame[XHCA_PKT_MAX];
	int len, err;

	for (uint64_t i = 0; i < n && !stop; i++) {
		len = msg_build(o, msg, i, n, *psn, frame);
		if (len < 0)
			return bad_usage("build: the builder refused these fields (%s)\n",
					 strerror(-len));
		err = msg_emit(o, mo, frame, len);
		if (err)
			return err;
		*psn = (*psn + 1) & PSN_MASK;
		res->sent++;
		if (len > res->frame_len)
			res->frame_len = len;
	}
	return 0;
}

/* --msg-len: o->count whole messages, out of the interface or into the pcap. */
static int send_messages(const struct gen_opts *o, FILE *pcap, struct gen_result *res)
{
	uint64_t n = (o->msg_len + o->mtu - 1) / o->mtu;
	struct msg_out mo = { .pcap = pcap, .pfd = -1 };
	struct gen_opts so = *o;
	uint32_t psn = o->psn;
	double t0 = now_sec();
	uint8_t *msg;
	int err = 0;

	msg = malloc(o->msg_len);
	if (!msg)
		return -ENOMEM;
	for (uint64_t k = 0; k < o->msg_len; k++)
		msg[k] = xhca_msg_pattern(o->seed, k);
	if (!pcap)
		err = msg_out_open(&so, msg, n, &mo);
	for (uint64_t m = 0; m < o->count && !err && !stop; m++)
		err = msg_send(&so, &mo, msg, n, &psn, res);
	res->seconds = now_sec() - t0;
	xhca_gen__destroy(mo.skel);
	if (mo.pfd >= 0)
		close(mo.pfd);
	free(msg);
	return err;
}

/* Appends o->count frames to the open pcap file f. */
static int write_pcap(const struct gen_opts *o, FILE *f, struct gen_result *res)
{
	static uint8_t frame[XHCA_PKT_MAX];
	double t0 = now_sec();
	int err = 0, len;

	for (uint64_t k = 0; k < o->count; k++) {
		len = build_k(o, k, frame);
		if (len < 0) {
			err = bad_usage("build: the builder refused these fields (%s); check "
					"--size, --pad, --vlan\n", strerror(-len));
			break;
		}
		err = xhca_pcap_write(f, frame, (size_t)len);
		if (err) {
			pr_warn("pcap: cannot write %s: %s\n", o->pcap, strerror(-err));
			break;
		}
		res->frame_len = len;
		res->sent = k + 1;
	}
	res->seconds = now_sec() - t0;
	return err;
}

/* A list of numbers, "64" or "64,1024". */
static void print_list(const char *fmt, const uint32_t *v, int n)
{
	for (int i = 0; i < n; i++) {
		if (i)
			putchar(',');
		printf(fmt, v[i]);
	}
}

static void print_result(const struct gen_opts *o, const struct gen_result *r,
			 const uint32_t *frame_lens)
{
	const char *name = xhca_opcode_name(o->spec.opcode);
	uint32_t last = r->sent ? psn_of(o, r->sent - 1) : o->psn;
	double pps = r->seconds > 0 ? (double)r->sent / r->seconds : 0;
	uint32_t payloads[MAX_SIZES];

	for (int i = 0; i < o->nsizes; i++) {
		struct gen_opts so = *o;

		set_size(&so, i);
		payloads[i] = so.spec.payload_len;
	}
	if (o->msg_len) {
		if (o->json)
			printf("{\"sent\": %" PRIu64 ", \"messages\": %" PRIu64 ", \"msg_len\": %"
			       PRIu64 ", \"mtu\": %u, \"opcode\": \"%s\", \"qpn\": %u, "
			       "\"psn_first\": %u, \"psn_last\": %u, \"seconds\": %.6f}\n",
			       r->sent, o->count, o->msg_len, o->mtu, name, o->spec.dqpn, o->psn,
			       last, r->seconds);
		else
			printf("%s %" PRIu64 " frames: %" PRIu64 " messages of %" PRIu64 " B (%s, "
			       "MTU %u) qpn 0x%06x psn 0x%06x..0x%06x\n", o->pcap ? "wrote" : "sent",
			       r->sent, o->count, o->msg_len, name, o->mtu, o->spec.dqpn, o->psn,
			       last);
		return;
	}
	if (o->json) {
		printf("{\"sent\": %" PRIu64 ", \"opcode\": \"%s\", \"opcode_num\": %u, "
		       "\"qpn\": %u, \"psn_first\": %u, \"psn_last\": %u, \"payload_len\": %u, "
		       "\"frame_len\": %u, \"payload_lens\": [",
		       r->sent, name, o->spec.opcode, o->spec.dqpn, o->psn, last, payloads[0],
		       frame_lens[0]);
		print_list("%u", payloads, o->nsizes);
		printf("], \"frame_lens\": [");
		print_list("%u", frame_lens, o->nsizes);
		printf("], \"seconds\": %.6f, \"pps\": %.1f%s%s%s}\n", r->seconds, pps,
		       o->pcap ? ", \"pcap\": \"" : "", o->pcap ? o->pcap : "", o->pcap ? "\"" : "");
		return;
	}
	printf("%s %" PRIu64 " frames %s qpn 0x%06x psn 0x%06x..0x%06x payload ",
	       o->pcap ? "wrote" : "sent", r->sent, name, o->spec.dqpn, o->psn, last);
	print_list("%u", payloads, o->nsizes);
	printf(" B (frame ");
	print_list("%u", frame_lens, o->nsizes);
	printf(" B)");
	if (o->pcap)
		printf(" to %s\n", o->pcap);
	else
		printf(" in %.4f s = %.0f pps\n", r->seconds, pps);
}

int main(int argc, char **argv)
{
	uint32_t frame_lens[MAX_SIZES] = {};
	struct gen_result res = {};
	struct gen_opts o;
	FILE *pcap = NULL;
	int err;

	xhca_log_init("xhca-gen", XHCA_LOG_WARN);
	err = parse_args(argc, argv, &o);
	if (err)
		return err == XHCA_OPT_HELP ? 0 : 2;
	xhca_log_init("xhca-gen", XHCA_LOG_WARN + o.verbose);
	if (o.pcap) {
		err = xhca_pcap_open(o.pcap, &pcap);
		if (err) {
			pr_warn("pcap: cannot create %s: %s; check the path\n", o.pcap,
				strerror(-err));
			return 1;
		}
	}
	if (o.msg_len) {
		err = send_messages(&o, pcap, &res);
		frame_lens[0] = (uint32_t)res.frame_len;
		o.psn_step = 1;
	}
	/* One block of frames per size, the PSNs running on. */
	for (int i = 0; i < o.nsizes && !err && !stop && !o.msg_len; i++) {
		struct gen_opts so = o;
		struct gen_result r = {};

		set_size(&so, i);
		so.psn = psn_of(&o, res.sent);
		so.spec.psn = so.psn;
		if (o.duration > 0)
			so.duration = o.duration / o.nsizes;
		err = o.pcap ? write_pcap(&so, pcap, &r) : send_frames(&so, &r);
		res.sent += r.sent;
		res.seconds += r.seconds;
		frame_lens[i] = (uint32_t)r.frame_len;
	}
	if (pcap) {
		int cerr = xhca_pcap_close(pcap);

		if (cerr && !err) {
			pr_warn("pcap: cannot write %s: %s\n", o.pcap, strerror(-cerr));
			err = cerr;
		}
	}
	if (err)
		return usage_error ? 2 : 1;
	print_result(&o, &res, frame_lens);
	return 0;
}
