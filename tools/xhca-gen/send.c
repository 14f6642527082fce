/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-gen: a block of frames of one size: out of the interface (live
 * frames, paced in test runs; frames over LIVE_FRAME_MAX from a packet
 * socket) or into the pcap file.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <xhca/pcap.h>
#include "gen.h"

static void on_signal(int sig)
{
	stop = 1;
}

double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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

int send_frames(const struct gen_opts *o, struct gen_result *res)
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

/* Appends o->count frames to the open pcap file f. */
int write_pcap(const struct gen_opts *o, FILE *f, struct gen_result *res)
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
