/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-gen: the options' table, whose setters fill struct gen_opts, and the
 * usage text it writes.
 */
#include <errno.h>
#include "gen.h"

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
const struct xhca_opt options[] = {
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

void usage(FILE *f)
{
	fprintf(f, "Usage: xhca-gen -i IFNAME | --pcap FILE --op OPCODE --qpn N [options]\n"
		   "Sends RoCEv2 frames out of IFNAME (BPF_PROG_TEST_RUN, live frames, XDP_TX;\n"
		   "frames over 3408 B from a packet socket), or writes them to a pcap file.\n\n");
	xhca_opt_usage(f, options, 25);
	fprintf(f, "Numbers are decimal or 0x hex. Exit: 0 sent, 1 failed, 2 bad usage.\n");
}
