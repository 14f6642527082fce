#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make bench keeps its end-to-end figures (tests/bench_history.py): the
# table shows each figure's last recorded ratio beside this run's, and the
# run is appended to the history. A figure that did not run (0) is shown
# and not kept; a bad row (fields, a figure not a number) changes nothing;
# lines that are not the history's (one with a ratio not a number too) are
# left alone and not read as a last run. No network, no root: rows of made-up figures.
set -u
. "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
h=$tmp/sub/history.tsv
T=$(printf '\t')
hist() { "$SCAPY_PY" "$(dirname "$0")/../bench_history.py" "$h" "$@"; }
row() { printf '%s\t%s\t%s\t%s\t%s\n' "$@"; }

out=$( { row "64 B latency, us" 10 30 0.3333 "<= 0.5x"; row "64 KiB bandwidth, MB/s" 1200 1600 0.75 ">= 2x"
	row "64 B messages/s" 0 800000 0 ">= 3x"; } | hist "run-1 aaaa")
check "bench_history: a first run shows no last figure ('-')" \
	test "$(grep -c -- ' -  ' <<<"$out")" = 3
check "bench_history: ... its directory made, the two figures that ran kept, not the one at 0" \
	test "$(wc -l <"$h")" = 2 -a "$(grep -c "^run-1 aaaa${T}" "$h")" = 2
check "bench_history: ... says where, and how many" \
	grep -q "this run kept as run-1 aaaa, 2 figures" <<<"$out"
echo "a line of someone else's" >>"$h"
printf 'run-x\t64 B latency, us\t1\t2\tnot-a-ratio\n' >>"$h"
out=$( { row "64 B latency, us" 9 30 0.30 "<= 0.5x"; row "64 KiB bandwidth, MB/s" 1300 1600 0.8125 ">= 2x"; } |
	hist "run-2 bbbb")
check "bench_history: the second run shows the first's ratios beside its own" \
	test "$(grep -cE '0\.30x +0\.33x|0\.81x +0\.75x' <<<"$out")" = 2
check "bench_history: ... names the last run" grep -q "latest run-1 aaaa" <<<"$out"
check "bench_history: ... is kept after it; the other line left alone" \
	test "$(wc -l <"$h")" = 6 -a "$(grep -c "^run-2 bbbb${T}" "$h")" = 2 -a \
	"$(grep -c "someone else" "$h")" = 1
cp "$h" "$tmp/before"
out=$(printf 'only\ttwo\n' | hist "run-3 cccc" 2>&1); rc=$?
check "bench_history: a bad row: exit 2, which row ($out)" test "$rc" = 2 -a -n "$(grep 'bad row: only' <<<"$out")"
check "bench_history: ... and the history as it was" cmp -s "$h" "$tmp/before"
out=$(row "64 B latency, us" fast 30 0.3 "" | hist "run-4 dddd" 2>&1); rc=$?
check "bench_history: a row whose figure is not a number: exit 2 ($out)" \
	test "$rc" = 2 -a -n "$(grep 'bad row: 64 B latency' <<<"$out")"
check "bench_history: ... and the history as it was" cmp -s "$h" "$tmp/before"
out=$(hist 2>&1); rc=$?
check "bench_history: no arguments: exit 2 and the usage" test "$rc" = 2 -a -n "$(grep Usage <<<"$out")"
t_done
