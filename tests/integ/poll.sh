#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# xhcad --poll-us: busy polling. Two xhca hosts, Debian's ib_send_lat
# between them: with --poll-us 0 the loop sleeps whenever it has nothing
# (no busy poll ever finds work); with a window it catches the requests and
# frames that come within it without a wakeup (status: wakeups spared), and
# the ping-pong is as correct either way. The default (50 us) polls too,
# and gives the CPU back as soon as a round's work is done (status:
# handbacks), for the program sharing it that waits for its answer.
. "$(dirname "$0")/../lib.sh"
need_root integ/poll
command -v ib_send_lat >/dev/null || { skip "poll: perftest is not installed (make deps)"; t_done; }
TOPO_MTU=4200 topo_setup || { fail "poll: topology"; t_done; }
tmp=$(mktemp -d)
trap 'apps_kill; topo_cleanup; rm -rf "$tmp"' EXIT

st() { "$B/xhca" -i "$1" -j status | json_get "d[\"$2\"]"; }
# pingpong NAME: ib_send_lat, 2000 round trips, server on B; 0 when both
# ends exit 0 with a result line
pingpong() {
	in_b timeout 60 "$B/xhca" -i "$IF_B" exec -- ib_send_lat -F -x 1 -s 64 -n 2000 \
		>"$tmp/$1.srv" 2>&1 &
	local srv=$! rc
	for _ in $(seq 200); do listening "$NS_B" 18515 && break; sleep 0.05; done
	in_a timeout 60 "$B/xhca" -i "$IF_A" exec -- ib_send_lat -F -x 1 -s 64 -n 2000 "$IP_B" \
		>"$tmp/$1.cli" 2>&1
	rc=$?
	wait "$srv" || rc=1
	grep -q '^ *64 *2000 ' "$tmp/$1.cli" && return $rc
	return 1
}
ports_up() {
	for _ in $(seq 100); do
		ip -n "$NS_A" link show "$IF_A" | grep -q 'state UP' &&
			ip -n "$NS_B" link show "$IF_B" | grep -q 'state UP' && return
		sleep 0.05
	done
}

xhcad_start --poll-us 0 && xhcad_start_b --poll-us 0 || { fail "poll: xhcad"; t_done; }
ports_up
check "poll: ib_send_lat without busy polling" pingpong sleep
check_eq "poll: --poll-us 0: never a busy poll, every wait may sleep, the CPU never yielded by one" \
	"$(st "$IF_A" poll_us) $(st "$IF_A" polled) $(test "$(st "$IF_A" sleeps)" -gt 1000 && echo slept) $(st "$IF_A" handbacks)" \
	"0 0 slept 0"
xhcad_stop
XHCAD_PID=$XHCAD_PID_B xhcad_stop

xhcad_start --poll-us 20000 && xhcad_start_b --poll-us 20000 || { fail "poll: xhcad"; t_done; }
ports_up
check "poll: ib_send_lat with 20 ms of busy polling after work" pingpong poll
polled=$(st "$IF_A" polled) sleeps=$(st "$IF_A" sleeps)
check "poll: --poll-us 20000: busy polls caught work ($polled) and spared wakeups (slept $sleeps times)" \
	test "$polled" -gt 1000 -a "$sleeps" -lt "$polled"
check_eq "poll: status says the window" "$(st "$IF_A" poll_us)" 20000
xhcad_stop
XHCAD_PID=$XHCAD_PID_B xhcad_stop

# the default: 50 us, which caught the ping-pong's requests and frames in
# make bench (docs/running.md)
xhcad_start && xhcad_start_b || { fail "poll: xhcad"; t_done; }
ports_up
check_eq "poll: the default window is 50 us" "$(st "$IF_A" poll_us)" 50
check "poll: ib_send_lat with the default window" pingpong default
polled=$(st "$IF_A" polled)
check "poll: the default window caught work without a wakeup ($polled times)" test "$polled" -gt 100
# (a round trip: a round that sends the request, a busy poll after it)
for i in "$IF_A" "$IF_B"; do
	hb=$(st "$i" handbacks)
	check "poll: $i gave its CPU back at once after most of the 2000 requests' rounds ($hb times)" \
		test "$hb" -gt 1000
done
t_done
