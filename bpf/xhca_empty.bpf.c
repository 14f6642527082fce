/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xhca_empty: the baseline of xhca-bench. It does nothing but drop, so its
 * BPF_PROG_TEST_RUN time is the fixed cost of running any XDP program; the
 * bench reports xhca_rx beside it, measured in the same run.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int xhca_empty(struct xdp_md *ctx)
{
	return XDP_DROP;
}
