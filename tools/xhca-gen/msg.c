/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-gen: --msg-len: whole messages, each split into FIRST/MIDDLE/LAST
 * packets by the path MTU, out of the interface or into the pcap file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <xhca/pcap.h>
#include "gen.h"

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
int send_messages(const struct gen_opts *o, FILE *pcap, struct gen_result *res)
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
