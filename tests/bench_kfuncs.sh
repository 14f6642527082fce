#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make bench, what a kernel without bpf_dynptr_copy (Linux < 6.15) costs:
# two xhca hosts on a veth pair (MTU 4200), ib_write_bw of SIZE bytes
# (BENCH_KF_SIZES, default "100 4000 65536": perftest cycles its WRITEs
# ALIGN(SIZE, 64) bytes apart, so the first two land off 1 KiB and the
# last on it) for BENCH_SECONDS, the xhcads as this kernel runs them beside
# the same with --no-kfuncs (xhcad places the WRITEs xhca_rx would have
# copied with the kfunc), alternated over BENCH_KF_ROUNDS (default 2)
# rounds; the ratio of messages per second, and the receiver's
# xlate_nocopy, which says the fallback was taken.
set -u
. "$(dirname "$0")/lib.sh"
need_root bench_kfuncs
SECS=${BENCH_SECONDS:-5}
SIZES=${BENCH_KF_SIZES:-100 4000 65536}
ROUNDS=${BENCH_KF_ROUNDS:-2}
command -v ib_write_bw >/dev/null || { echo "bench_kfuncs: SKIPPED: perftest is not installed (make deps)"; exit 0; }
tmp=$(mktemp -d)
trap 'topo_cleanup; rm -rf "$tmp"' EXIT
TOPO_MTU=4200 topo_setup || { echo "bench_kfuncs: topology failed"; exit 1; }
links_up

# run MODE SIZE PORT: messages per second of one ib_write_bw, B the server
run() {
	local mode=$1 size=$2 port=$3 r spid
	in_b "$B/xhca" -i "$IF_B" exec -- timeout $((SECS + 30)) ib_write_bw -d "xhca_$IF_B" -x 1 -F \
		-s "$size" -D "$SECS" -p "$port" >/dev/null 2>&1 &
	spid=$!
	wait_listen "$NS_B" "$port"
	r=$(in_a "$B/xhca" -i "$IF_A" exec -- timeout $((SECS + 30)) ib_write_bw -d "xhca_$IF_A" -x 1 -F \
		-s "$size" -D "$SECS" -p "$port" "$IP_B" 2>/dev/null | awk -v s="$size" '$1 == s {print $5 * 1e6}')
	wait "$spid"
	echo "${r:-0}"
}

port=19100
for round in $(seq "$ROUNDS"); do
	for mode in kfunc nokfuncs; do
		flag=; [ $mode = nokfuncs ] && flag=--no-kfuncs
		xhcad_start $flag >/dev/null 2>&1 && xhcad_start_b $flag >/dev/null 2>&1 ||
			{ echo "bench_kfuncs: xhcad did not start"; exit 1; }
		for size in $SIZES; do
			port=$((port + 1))
			run $mode "$size" $port >>"$tmp/$mode-$size"
		done
		in_b "$B/xhca" -i "$IF_B" -j stats | json_get 'd["reasons"]["xlate_nocopy"]["packets"]' \
			>>"$tmp/$mode-nocopy"
		kill "$XHCAD_PID" "$XHCAD_PID_B"
		wait "$XHCAD_PID" "$XHCAD_PID_B" 2>/dev/null
	done
done
mean() { awk '{ s += $1; n++ } END { printf "%.0f", n ? s / n : 0 }' "$1"; }
echo "bench_kfuncs: ib_write_bw messages/s, $SECS s x $ROUNDS rounds, MTU 4200, $(nproc) CPUs; xhcad placing what bpf_dynptr_copy would (--no-kfuncs) beside xhca_rx with it"
printf '%-8s %14s %14s %8s\n' size kfunc no-kfuncs ratio
for size in $SIZES; do
	a=$(mean "$tmp/kfunc-$size") b=$(mean "$tmp/nokfuncs-$size")
	printf '%-8s %14s %14s %8s\n' "$size" "$a" "$b" \
		"$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2fx", (a > 0 ? b / a : 0) }')"
done
echo "xlate_nocopy on the receiver per round: kfunc $(tr '\n' ' ' <"$tmp/kfunc-nocopy"); no-kfuncs $(tr '\n' ' ' <"$tmp/nokfuncs-nocopy")"
