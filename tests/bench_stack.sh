#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make bench, the stack above the verbs: Debian's unmodified ucx_perftest
# between two xhca hosts (an xhcad in each namespace of a veth pair, UCX on
# xhca's rc_verbs through xhca exec) beside the same program with UCX's own
# TCP transport between the same namespaces over the same veth pair: what
# a UCX user has without xhca. Same machine, same run. Per figure: UCX on
# xhca, UCX on TCP, their ratio.
#  - tag_lat: 8-byte tagged messages, one way (UCX's average of half the
#    round trip);
#  - tag_bw, ucp_put_bw: 64 KiB messages and RDMA puts, MB/s.
# BENCH_UCX_ITERS: iterations of each run (default 20000 for the latency,
# a tenth of it for the bandwidths).
set -u
. "$(dirname "$0")/lib.sh"
need_root bench_stack
command -v ucx_perftest >/dev/null ||
	{ echo "bench_stack: SKIPPED: ucx_perftest is not installed (make deps)"; exit 0; }
ITERS=${BENCH_UCX_ITERS:-20000}
tmp=$(mktemp -d)
TOPO_MTU=4200 topo_setup || { echo "bench_stack: cannot build the veth topology" >&2; exit 1; }
trap 'topo_cleanup; rm -rf "$tmp"' EXIT

# perftest TLS DEVA DEVB ARGS: ucx_perftest ARGS, server on A, client on B,
# with UCX_TLS and UCX_NET_DEVICES as given (xhca's under xhca exec); the
# client's "Final:" fields on stdout
perftest() {
	local tls=$1 da=$2 db=$3 ra=() rb=() spid
	shift 3
	if [ "$tls" = tcp ]; then
		# (ip netns exec: /sys of the namespace, where UCX looks for it)
		ra=(ip netns exec "$NS_A") rb=(ip netns exec "$NS_B")
	else
		ra=(in_a "$B/xhca" -i "$IF_A" exec --) rb=(in_b "$B/xhca" -i "$IF_B" exec --)
	fi
	"${ra[@]}" env UCX_TLS="$tls" UCX_NET_DEVICES="$da" timeout 120 ucx_perftest "$@" \
		>"$tmp/srv" 2>&1 &
	spid=$!
	for _ in $(seq 100); do
		ip netns exec "$NS_A" ss -Hltn 'sport = :13337' | grep -q LISTEN && break
		sleep 0.05
	done
	"${rb[@]}" env UCX_TLS="$tls" UCX_NET_DEVICES="$db" timeout 120 ucx_perftest "$@" "$IP_A" \
		>"$tmp/cli" 2>&1
	wait "$spid"
	grep '^Final:' "$tmp/cli" | tr -s ' '
}
# field N of a Final: line (2 iterations, 3 latency 50%, 4 latency average,
# 6 bandwidth average MB/s, 8 message rate average)
field() { awk -v n="$2" '{ print $n }' <<<"$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

xhcad_start --hostmem-mb 512 || exit 1
xhcad_start_b --hostmem-mb 512 || exit 1
links_up
XA="xhca_$IF_A:1" XB="xhca_$IF_B:1"
echo "== UCX (ucx_perftest) on xhca's rc_verbs beside UCX on TCP, two hosts of a veth pair"
printf '%-34s %14s %14s %8s\n' "figure" "UCX on xhca" "UCX on TCP" "ratio"
run() { # NAME FIELD BETTER(lower|higher) ARGS...
	local name=$1 f=$2 better=$3 x t
	shift 3
	x=$(perftest rc_v,self "$XA" "$XB" "$@") t=$(perftest tcp "$IF_A" "$IF_B" "$@")
	if [ -z "$x" ] || [ -z "$t" ]; then
		echo "bench_stack: $name: a run failed (xhca: '${x}', tcp: '${t}')" >&2
		tail -n 5 "$tmp/cli" "$tmp/srv" >&2
		return 1
	fi
	x=$(field "$x" "$f") t=$(field "$t" "$f")
	printf '%-34s %14s %14s %8s\n' "$name" "$x" "$t" \
		"$([ "$better" = lower ] && ratio "$t" "$x" || ratio "$x" "$t")x"
}
run "tag_lat 8 B, one way (us, average)" 4 lower -t tag_lat -n "$ITERS" || exit 1
run "tag_bw 64 KiB (MB/s)" 6 higher -t tag_bw -s 65536 -n $((ITERS / 10)) || exit 1
run "ucp_put_bw 64 KiB (MB/s)" 6 higher -t ucp_put_bw -s 65536 -n $((ITERS / 10)) || exit 1
echo "(ratio: how many times better xhca is, for latency TCP's over xhca's)"
