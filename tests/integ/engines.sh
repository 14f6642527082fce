#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Engines (xhcad --engines N): two xhca hosts on a veth pair of 4 queues,
# each xhcad with 4 engines. Debian's perftest with many QPs (WRITE, READ,
# ATOMIC, SEND through one SRQ and one CQ shared by QPs of every engine),
# ibv_rc_pingpong and rping: every run ends, every byte checked where the
# program checks; the flow queues of every engine took frames, and frames
# came in on more than one RX queue (each engine sends on its own queue);
# loopback between QPs of different engines on one host; more engines
# than queues are refused down to the queues, with a warning; a UD QP on
# another engine's flow queue is refused with the reason; `xhca status`
# says how many engines run.
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/engines
need_cmds engines ib_write_bw ibv_rc_pingpong rping
TOPO_QUEUES=4 TOPO_MTU=4200 topo_setup || { fail "engines: topology"; t_done; }
tmp=$(mktemp -d)
APP_DIR=$tmp
XHCAD_LOG=$tmp/xhcad-a.log
XHCAD_LOG_B=$tmp/xhcad-b.log
trap 'apps_kill; topo_cleanup; rm -rf "$tmp"' EXIT

check "engines: xhcad --engines 8 on 4 RX queues starts" xhcad_start --hostmem-mb 256 --engines 8
check "engines: ... with a warning, running 4" \
	grep -q -- "--engines 8: $IF_A has 4 RX queues and xhcad 8 flow queues; running 4 engines" \
	"$XHCAD_LOG"
check_eq "engines: xhca status: 4 engines" \
	"$(xhca -j status | json_get 'd["engines"]')" "4"
names=$(cat /proc/"$XHCAD_PID"/task/*/comm | grep -c '^xhcad-e[123]$')
check_eq "engines: engines 1-3 named xhcad-e1..3 (ps -L, top -H, perf)" "$names" 3
check "engines: the second host's xhcad, 4 engines" xhcad_start_b --hostmem-mb 256 --engines 4
links_up

PCQ=$(xhca -j cq create --depth 16 --proxy | json_get 'd["cq"]')
out=$(xhca qp create --type rc --cq "$PCQ" --flowq 1 2>&1); rc=$?
check "engines: a QP of a proxy CQ on engine 1's flow queue: refused, the reason ($out)" \
	test "$rc" != 0 -a -n "$(echo "$out" | grep "flow queue 1 is engine 1's; a QP of a proxy CQ runs on engine 0")"
out=$(xhca -j qp create --type rc --cq "$PCQ" --flowq 4 2>&1)
check "engines: ... on engine 0's flow queue 4: made ($out)" \
	test -n "$(echo "$out" | grep -i "qpn")"

# per flow queue frames taken on host B (engine k has flow queues k and k+4)
fq_frames() {
	"$B/xhca" -i "$IF_B" -j flowq show | json_get \
		'" ".join(str(sum(q["frames"] for q in d["flowqs"] if q["flowq"] % 4 == k)) for k in range(4))'
}
# frames received per RX queue of IF_B (veth's XDP counters)
rxq_frames() {
	in_b ethtool -S "$IF_B" | awk '/rx_queue_[0-9]+_xdp_packets/ { printf "%s ", $2 }'
}

# perf NAME PROG ARGS: the server on B, the client on A (to B's address)
perf() {
	local name=$1 srv rs rc
	shift
	xb timeout 60 "$@" -p 18515 >"$tmp/$name.srv" 2>&1 &
	srv=$!
	for _ in $(seq 100); do listening "$NS_B" 18515 && break; sleep 0.05; done
	xa timeout 60 "$@" -p 18515 "$IP_B" >"$tmp/$name.cli" 2>&1
	rc=$?
	wait "$srv"
	rs=$?
	check "engines: $name: both ends exit 0 ($rs, $rc; $(awk '$1 ~ /^[0-9]+$/ && NF >= 4 \
		{ print $1, $2, $4; exit }' "$tmp/$name.cli"))" test "$rs" = 0 -a "$rc" = 0
	[ "$rs" = 0 ] && [ "$rc" = 0 ] || tail -n 4 "$tmp/$name.srv" "$tmp/$name.cli" | sed 's/^/    /'
}

q0=$(rxq_frames)
perf "ib_write_bw, 16 QPs, 64 KiB" ib_write_bw -F -q 16 -s 65536 -D 2
f=$(fq_frames)
check "engines: every engine's flow queues took frames on B (per engine: $f)" \
	awk -v s="$f" 'BEGIN { n = split(s, a, " "); for (i = 1; i <= n; i++) if (a[i] + 0 == 0) exit 1; exit n != 4 }'
q1=$(rxq_frames)
check "engines: frames came in on every RX queue of B (before: $q0; after: $q1)" \
	awk -v a="$q0" -v b="$q1" 'BEGIN { n = split(a, x, " "); split(b, y, " ");
		for (i = 1; i <= n; i++) if (y[i] - x[i] <= 0) exit 1; exit n != 4 }'
perf "ib_read_bw, 8 QPs" ib_read_bw -F -q 8 -s 65536 -D 2
perf "ib_atomic_bw, 8 QPs" ib_atomic_bw -F -q 8 -D 2
perf "ib_send_bw, 8 QPs, one SRQ, 64 B" ib_send_bw -F -q 8 --use-srq -s 64 -D 2
perf "ib_send_bw, 8 QPs, 4 KiB messages" ib_send_bw -F -q 8 -s 4096 -D 2
perf "ib_send_lat" ib_send_lat -F -s 64 -n 2000

# ibv_rc_pingpong checks every byte of every message
xb timeout 60 ibv_rc_pingpong -g 1 -c -n 500 -s 8192 >"$tmp/pp.srv" 2>&1 &
srv=$!
sleep 0.3
xa timeout 60 ibv_rc_pingpong -g 1 -c -n 500 -s 8192 "$IP_B" >"$tmp/pp.cli" 2>&1
rc=$?
wait "$srv"
check "engines: ibv_rc_pingpong -c, 500 x 8 KiB, both ends ($rc, $?)" \
	test "$(grep -h ' iters in ' "$tmp/pp.srv" "$tmp/pp.cli" | wc -l)" = 2
# rping (rdma_cm: the CM on engine 0, the QPs on any) validates each ping
xb timeout 60 rping -s -a "$IP_B" -C 200 -S 4096 -V >"$tmp/rping.srv" 2>&1 &
srv=$!
sleep 0.5
xa timeout 60 rping -c -a "$IP_B" -C 200 -S 4096 -V >"$tmp/rping.cli" 2>&1
rc=$?
wait "$srv"
rs=$?
check "engines: rping -V, 200 pings of 4 KiB, both ends exit 0 ($rs, $rc)" \
	test "$rs" = 0 -a "$rc" = 0

# local_pair NAME X NS PORT ADDR PROG ARGS: both ends on one host (X: xa or xb,
# its namespace NS), the client to ADDR; the client's exit in $rc
local_pair() {
	local name=$1 x=$2 ns=$3 port=$4 addr=$5 srv
	shift 5
	$x timeout 60 "$@" -p "$port" >"$tmp/$name.srv" 2>&1 &
	srv=$!
	for _ in $(seq 100); do listening "$ns" "$port" && break; sleep 0.05; done
	$x timeout 60 "$@" -p "$port" "$addr" >"$tmp/$name.cli" 2>&1
	rc=$?
	wait "$srv"
}
# loopback: QPs of several engines of one host talking to each other
local_pair lo xa "$NS_A" 18516 "$IP_A" ib_write_bw -F -q 8 -s 65536 -D 2
check "engines: loopback ib_write_bw, 8 QPs on one host: both ends exit 0 ($?, $rc)" test "$rc" = 0
check "engines: ... through xhca_rx here (loopback frames counted)" \
	test "$(xhca -j status | json_get 'd["loopback"]["self"]')" -gt 0
local_pair lo2 xb "$NS_B" 18517 "$IP_B" ib_send_bw -F -q 8 -s 4096 -D 2
check "engines: loopback ib_send_bw, 8 QPs on host B: both ends exit 0 ($?, $rc)" test "$rc" = 0

sleep 0.2
umem=$(xhca -j status | json_get '" ".join(str(x) for x in (d["umem"]["held"], d["umem"]["rx"],
	d["umem"]["kernel"], d["umem"]["free"] + d["umem"]["fill"] == d["umem"]["frames"]))')
check_eq "engines: every UMEM frame back: none held, in RX rings or lost; free and fill are all" \
	"$umem" "0 0 0 True"
check "engines: xhcad A stops cleanly" xhcad_stop
check_eq "engines: ... exit 0" "$XHCAD_RC" 0

# a restart (--keep) with other engines: QP1, the CM's, is engine 0's again
check "engines: xhcad --engines 1 --keep" xhcad_start --hostmem-mb 256 --engines 1 --keep
f1=$(xhca -j qp show 1 | json_get 'd["qps"][0]["flowq"]')
xhcad_stop
check "engines: ... and again with --engines 3" xhcad_start --hostmem-mb 256 --engines 3
f3=$(xhca -j qp show 1 | json_get 'd["qps"][0]["flowq"]')
check "engines: QP1 on flow queue $f1, kept, now on $f3: engine 0's (a multiple of 3)" \
	test $((f3 % 3)) = 0
xa timeout 60 rping -s -a "$IP_A" -C 20 -V -p 7400 >"$tmp/rp2.srv" 2>&1 &
srv=$!
sleep 0.5
xb timeout 60 rping -c -a "$IP_A" -C 20 -V -p 7400 >"$tmp/rp2.cli" 2>&1
rc=$?
wait "$srv"
check "engines: ... the CM answers: rping after the restart ($?, $rc)" test "$rc" = 0
check "engines: xhcad A stops" xhcad_stop
XHCAD_PID=$XHCAD_PID_B
check "engines: xhcad B stops cleanly" xhcad_stop
check_eq "engines: ... exit 0" "$XHCAD_RC" 0
t_done
