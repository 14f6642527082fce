/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A user's own tc filter, for integ/steer: counts the frames it sees (the
 * global `seen`, read with bpftool) and lets each go on to the filters
 * after it, as xhca_steer does.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

__u64 seen;

SEC("tc")
int tc_count(struct __sk_buff *skb)
{
	__sync_fetch_and_add(&seen, 1);
	return -1; /* TC_ACT_UNSPEC */
}
