/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the running kernel offers xhca: see kfeat.h. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <priv/xhca/ctl.h>
#include "kfeat.h"

/* What xhca_rx calls, with the release that brought it: the newest decides
 * whether the object loads. */
const struct kfeat_need kfeat_needs[] = {
	{ 0, "kernel BTF (/sys/kernel/btf/vmlinux)", "CONFIG_DEBUG_INFO_BTF" },
	{ BPF_FUNC_ringbuf_reserve, "bpf_ringbuf_reserve", "Linux 5.8" },
	{ BPF_FUNC_xdp_get_buff_len, "bpf_xdp_get_buff_len", "Linux 5.18" },
	{ BPF_FUNC_xdp_load_bytes, "bpf_xdp_load_bytes", "Linux 5.18" },
	{ BPF_FUNC_dynptr_from_mem, "bpf_dynptr_from_mem", "Linux 5.19" },
};
const size_t kfeat_nneeds = sizeof(kfeat_needs) / sizeof(kfeat_needs[0]);

int kfeat_missing(kfeat_has_fn has, void *ctx, char *buf, size_t len)
{
	size_t at = 0;
	int n = 0;

	if (len)
		buf[0] = 0;
	for (size_t i = 0; i < kfeat_nneeds; i++) {
		const struct kfeat_need *k = &kfeat_needs[i];

		if (has(ctx, k))
			continue;
		if (at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s%s (%s)", n ? ", " : "",
					       k->name, k->since);
		n++;
	}
	return n;
}

int kfeat_older(const char *release, int major, int minor)
{
	int a, b;

	if (sscanf(release, "%d.%d", &a, &b) != 2)
		return 0;
	return a < major || (a == major && b < minor);
}

#define KF_ROW(n, k, w, s, c) { w, s, c },
static const struct {
	const char *what, *since, *cost;
} kf_rows[] = { XHCA_KFEATS(KF_ROW) };
#undef KF_ROW

void kfeat_describe(__u32 lacks, __u32 forced, char *buf, size_t len)
{
	size_t at;

	if (!len)
		return;
	if (!lacks) {
		snprintf(buf, len, "has every feature xhca uses");
		return;
	}
	at = (size_t)snprintf(buf, len, "lacks");
	for (int i = 0, n = 0; i < XHCA_KF_NR && at < len; i++) {
		if (!(lacks & (1u << i)))
			continue;
		at += (size_t)snprintf(buf + at, len - at, "%s %s (%s%s): %s", n++ ? ";" : "",
				       kf_rows[i].what, kf_rows[i].since,
				       (forced & (1u << i)) ? "; --no-kfuncs" : "", kf_rows[i].cost);
	}
}

int kfeat_probe_need(void *ctx, const struct kfeat_need *n)
{
	(void)ctx;
	if (!n->helper)
		return !access("/sys/kernel/btf/vmlinux", R_OK);
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_XDP, (enum bpf_func_id)n->helper, NULL) == 1;
}

int kfeat_has_kfunc(const struct btf *btf, const char *name)
{
	return !libbpf_get_error(btf) && btf && btf__find_by_name_kind(btf, name, BTF_KIND_FUNC) > 0;
}

/* An fentry program (return 0) on bpf_fentry_test1, a function only
 * BPF_PROG_TEST_RUN calls, attached and closed at once: the trampoline
 * libxdp's dispatcher needs (freplace) is the same machinery. */
int kfeat_has_trampoline(const struct btf *btf)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_TRACE_FENTRY);
	int id, fd, link, ok = 0;

	if (libbpf_get_error(btf) || !btf)
		return 0;
	id = btf__find_by_name_kind(btf, "bpf_fentry_test1", BTF_KIND_FUNC);
	if (id <= 0)
		return 0;
	o.attach_btf_id = (__u32)id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "xhca_probe", "GPL", insns, 2, &o);
	if (fd < 0)
		return 0;
	link = bpf_raw_tracepoint_open(NULL, fd);
	if (link >= 0) {
		ok = 1;
		close(link);
	}
	close(fd);
	return ok;
}
