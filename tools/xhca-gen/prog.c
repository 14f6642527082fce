/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca-gen: the xhca_gen XDP program: loaded (never attached) with what it
 * needs to rewrite PSN, VA and ICRC per frame, checked against the builder,
 * and run in live-frames mode.
 */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "gen.h"

/* Loads xhca_gen with what it needs to rewrite PSN and ICRC per frame. */
int gen_load(const struct gen_opts *o, const uint8_t *frame0, size_t len,
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
int gen_self_check(const struct gen_opts *o, struct xhca_gen *skel, const uint8_t *frame0,
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

/* Sends up to n frames in one live-frames test run. Interrupted by a signal,
 * the kernel returns -EINTR; the frame count comes from seq either way. */
int send_run(const struct gen_opts *o, int prog_fd, int ifindex, const uint8_t *frame,
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
