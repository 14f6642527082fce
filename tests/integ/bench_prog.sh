#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make bench's xhca_rx figures (xhca-bench prog), run short: every case is
# measured on the path it names (the bench checks each packet's reason in
# xhca_stats, and for a placed WRITE the payload in host memory, and exits
# 1 otherwise), and the placement table sets each placed case's GB/s beside
# memcpy of the same chunk. No figure is judged: only that each is there.
set -u
. "$(dirname "$0")/../lib.sh"
need_root bench_prog
err=$(mktemp)
trap 'rm -f "$err"' EXIT
out=$("$B/xhca-bench" prog -n 200 -r 1 -j 2>"$err"); rc=$?
check_eq "bench_prog: xhca-bench prog runs every case on its path (exit)" "$rc" 0 || cat "$err"
get() { json_get "$1" <<<"$out" 2>/dev/null; }
check_eq "bench_prog: ... the placed WRITE cases among them (RC 1 KiB, UC 1 and 4 KiB)" \
	"$(get 'sum(1 for c in d["cases"] if c["name"].endswith(" placed"))')" 3
check_eq "bench_prog: ... each with a time and a ratio to the empty program" \
	"$(get 'all(c["single_ns"] > 0 and c["single_ratio"] > 0 for c in d["cases"])')" True
check_eq "bench_prog: the placement table: the two batch cases, GB/s beside memcpy's" \
	"$(get '[c["name"] for c in d["placement"] if c["gbytes_per_s"] > 0 and c["memcpy_gbytes_per_s"] > 0]')" \
	"['UC RDMA WRITE 1 KiB placed', 'UC RDMA WRITE 4 KiB placed']"
t_done
