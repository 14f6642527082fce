/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-gen: the options parsed, then checked together (what each needs of
 * the others and of the opcode).
 */
#include <errno.h>
#include <string.h>
#include <xhca/wire.h>
#include "gen.h"

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
void set_size(struct gen_opts *o, int i)
{
	const struct xhca_opinfo *oi = &xhca_opinfo_tbl[o->spec.opcode];

	if (!(oi->flags & XHCA_O_KNOWN) || (oi->flags & XHCA_O_PAYLOAD))
		o->spec.payload_len = o->sizes[i];
	if (!o->have_reth_len)
		o->spec.reth_len = o->sizes[i];
}

/* The options into o, checked together. 0; XHCA_OPT_HELP (the usage is
 * printed); else bad usage (one line said why). */
int parse_args(int argc, char **argv, struct gen_opts *o)
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
