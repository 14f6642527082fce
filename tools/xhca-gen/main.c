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
#include <inttypes.h>
#include <string.h>
#include <xhca/json.h>
#include <xhca/pcap.h>
#include <xhca/wire.h>
#include "gen.h"

volatile sig_atomic_t stop;
int usage_error;

/* A list of numbers, "64" or "64,1024". */
static void print_list(const char *fmt, const uint32_t *v, int n)
{
	for (int i = 0; i < n; i++) {
		if (i)
			putchar(',');
		printf(fmt, v[i]);
	}
}

/* A list of numbers in JSON, [64] or [64,1024]. */
static void json_list(const char *key, const uint32_t *v, int n)
{
	jw_open_compact(key, '[');
	for (int i = 0; i < n; i++)
		jw_u64(NULL, v[i]);
	jw_close(']');
}

/* --msg-len's summary; last: the last PSN sent. */
static void print_msg_result(const struct gen_opts *o, const struct gen_result *r, uint32_t last)
{
	const char *name = xhca_opcode_name(o->spec.opcode);

	if (!o->json) {
		printf("%s %" PRIu64 " frames: %" PRIu64 " messages of %" PRIu64 " B (%s, "
		       "MTU %u) qpn 0x%06x psn 0x%06x..0x%06x\n", o->pcap ? "wrote" : "sent",
		       r->sent, o->count, o->msg_len, name, o->mtu, o->spec.dqpn, o->psn, last);
		return;
	}
	jw_open(NULL, '{');
	jw_u64("sent", r->sent);
	jw_u64("messages", o->count);
	jw_u64("msg_len", o->msg_len);
	jw_u64("mtu", o->mtu);
	jw_str("opcode", name);
	jw_u64("qpn", o->spec.dqpn);
	jw_u64("psn_first", o->psn);
	jw_u64("psn_last", last);
	jw_float("seconds", 6, r->seconds);
	jw_close('}');
}

/* The summary as JSON: last, the last PSN sent; payloads and frame_lens,
 * each size's lengths. */
static void print_json(const struct gen_opts *o, const struct gen_result *r, uint32_t last,
		       double pps, const uint32_t *payloads, const uint32_t *frame_lens)
{
	jw_open(NULL, '{');
	jw_u64("sent", r->sent);
	jw_str("opcode", xhca_opcode_name(o->spec.opcode));
	jw_u64("opcode_num", o->spec.opcode);
	jw_u64("qpn", o->spec.dqpn);
	jw_u64("psn_first", o->psn);
	jw_u64("psn_last", last);
	jw_u64("payload_len", payloads[0]);
	jw_u64("frame_len", frame_lens[0]);
	json_list("payload_lens", payloads, o->nsizes);
	json_list("frame_lens", frame_lens, o->nsizes);
	jw_float("seconds", 6, r->seconds);
	jw_float("pps", 1, pps);
	if (o->pcap)
		jw_str("pcap", o->pcap);
	jw_close('}');
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
		print_msg_result(o, r, last);
		return;
	}
	if (o->json) {
		print_json(o, r, last, pps, payloads, frame_lens);
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
