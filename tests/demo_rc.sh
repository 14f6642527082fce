#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make demo, part 1: two xhca hosts. Namespaces A and B, each with its own
# xhcad, joined through a bridge in a third namespace (where the traffic
# can be captured and impaired). An application on each side (xhca-rc,
# libxhca only, connected over TCP like perftest): a ping-pong of SENDs,
# a 64 MiB RDMA WRITE checked by hash on the other side, the same read
# back by RDMA READs, a counter in B's memory that both sides add to, a
# multicast group of two QPs on B. Unmodified verbs programs (Debian's
# ibv_rc_pingpong and perftest's ib_write_bw) through `xhca exec`, which
# gives them xhca's libibverbs.so.1, and UCX's ucx_perftest on rc_verbs
# (Debian's ucx-utils, unmodified). Then the same run through loss,
# reordering and duplicates (tests/impair, a tc program of our own: this
# kernel has no netem). Everything is removed on exit.
set -u -o pipefail # the applications' exit status, through their output's sed
. "$(dirname "$0")/lib.sh"
need_root demo
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
tmp=$(mktemp -d)
MID_MTU=3000 topo_setup_mid || { echo "demo: cannot build the topology" >&2; exit 1; }
trap 'topo_cleanup; rm -rf "$tmp"' EXIT
say "two hosts: $NS_A/$IF_A ($IP_A) <-> bridge in $NS_M <-> $NS_B/$IF_B ($IP_B)"
xhcad_start --hostmem-mb 320 || exit 1
xhcad_start_b --hostmem-mb 320 || exit 1
echo "an xhcad on each ($IF_A and $IF_B), the XDP program on each interface"

# rc_pair ARGS: the server (B) and the client (A), their output side by side
rc_pair() {
	in_b "$B/xhca-rc" -i "$IF_B" -a "$IP_B" --mtu 2048 "$@" >"$tmp/server" 2>&1 &
	local spid=$! rc=0
	in_a "$B/xhca-rc" -i "$IF_A" -a "$IP_A" -c "$IP_B" --mtu 2048 "$@" 2>&1 | sed 's/^/  /' ||
		rc=1
	wait "$spid" || rc=1
	sed 's/^/  /' "$tmp/server"
	return $rc
}
status_lines() {
	for i in "$IF_A" "$IF_B"; do
		echo "  $i:"
		"$B/xhca" -i "$i" status | grep -E '^(requester|responder):' | sed 's/^/    /'
	done
}

say "xhca-rc: server on $IF_B, client on $IF_A (RC, path MTU 2048)"
rc_pair --expect-all ${DEMO_ARGS:-} || { echo "demo: the two-host run failed" >&2; exit 1; }
say "what each host's requester and responder did"
status_lines

# verbs_pair PORT PROGRAM ARGS: Debian's PROGRAM, server on B, client on A,
# each run by xhca exec; the client's output, then the server's.
verbs_pair() {
	local port=$1 spid rc=0
	shift
	in_b "$B/xhca" -i "$IF_B" exec -- "$@" >"$tmp/vserver" 2>&1 &
	spid=$!
	for _ in $(seq 100); do
		ip netns exec "$NS_B" ss -Hltn "sport = :$port" | grep -q LISTEN && break
		sleep 0.05
	done
	in_a "$B/xhca" -i "$IF_A" exec -- "$@" "$IP_B" 2>&1 | sed 's/^/  /' || rc=1
	wait "$spid" || rc=1
	echo "  -- server:"
	sed 's/^/  /' "$tmp/vserver"
	return $rc
}
if command -v ibv_rc_pingpong >/dev/null && command -v ib_write_bw >/dev/null; then
	say "unmodified verbs programs: xhca -i IF exec -- ibv_devices, on each host"
	in_a "$B/xhca" -i "$IF_A" exec -- ibv_devices | sed 's/^/  /'
	in_b "$B/xhca" -i "$IF_B" exec -- ibv_devices | sed 's/^/  /'
	say "ibv_rc_pingpong (Debian's, unmodified): 1000 x 4096 bytes, every byte checked"
	verbs_pair 18515 ibv_rc_pingpong -g 1 -c -n 1000 -s 4096 ||
		{ echo "demo: ibv_rc_pingpong failed" >&2; exit 1; }
	say "perftest's ib_write_bw (unmodified): 64 KiB RDMA WRITEs into B's memory"
	verbs_pair 18515 ib_write_bw -F -x 1 -s 65536 -n 2000 ||
		{ echo "demo: ib_write_bw failed" >&2; exit 1; }
else
	say "verbs programs: not installed (make deps installs ibverbs-utils and perftest)"
fi

# ucx_pair ARGS: Debian's ucx_perftest, server on B, client on A, through
# xhca exec, UCX on xhca's rc_verbs (UCX_TLS=rc_v,self: with ud_verbs for
# its wire-up); the client's table of results
ucx_pair() {
	local spid rc=0
	in_b "$B/xhca" -i "$IF_B" exec -- env UCX_TLS=rc_v,self UCX_NET_DEVICES="xhca_$IF_B:1" \
		timeout 60 ucx_perftest "$@" >"$tmp/userver" 2>&1 &
	spid=$!
	for _ in $(seq 100); do
		ip netns exec "$NS_B" ss -Hltn 'sport = :13337' | grep -q LISTEN && break
		sleep 0.05
	done
	in_a "$B/xhca" -i "$IF_A" exec -- env UCX_TLS=rc_v,self UCX_NET_DEVICES="xhca_$IF_A:1" \
		timeout 60 ucx_perftest "$@" "$IP_B" >"$tmp/uclient" 2>&1 || rc=1
	wait "$spid" || rc=1
	grep -E '^( *\+-|[|]|Final:)' "$tmp/uclient" | grep -vE '^[|] +[0-9]+ +[|]' | sed 's/^/  /'
	[ $rc = 0 ] || sed 's/^/  /' "$tmp/uclient" "$tmp/userver" | tail -n 8
	return $rc
}
if command -v ucx_perftest >/dev/null; then
	say "UCX (Debian's ucx_perftest, unmodified) over xhca: ucx_info -d on A lists"
	in_a "$B/xhca" -i "$IF_A" exec -- ucx_info -d | grep -E '^# +(Memory domain|Transport|Device): +(xhca|rc_verbs|ud_verbs)' |
		sed 's/^#  */  /'
	say "ucx_perftest tag_lat between the two hosts over rc_verbs (UCX_TLS=rc_v,self)"
	ucx_pair -t tag_lat -n 2000 || { echo "demo: ucx_perftest tag_lat failed" >&2; exit 1; }
	say "ucx_perftest ucp_put_bw: 64 KiB RDMA puts into B's memory"
	ucx_pair -t ucp_put_bw -n 2000 -s 65536 ||
		{ echo "demo: ucx_perftest ucp_put_bw failed" >&2; exit 1; }
else
	say "UCX: not installed (make deps installs ucx-utils)"
fi

say "the same run through 2% loss, 2% reordering, 1% duplicates (both directions)"
impair_start --drop 2 --reorder 2 --dup 1 || exit 1
rc_pair || { impair_stop; echo "demo: the impaired run failed" >&2; exit 1; }
impair_stop
echo "the impairment (tc ingress on the bridge ports, RoCEv2 frames only):"
echo "$IMPAIR_STATS" | sed 's/^/  /'
echo "(UD multicast is unreliable: a lost copy is not sent again)"
status_lines
echo "two-host demo done"
