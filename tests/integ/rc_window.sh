#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The RC requester's window between two xhca hosts, seen on the wire: with
# the link cut (no ACK can come), Debian's ib_write_bw posts 2 MiB WRITEs
# and A sends what its window lets it before the timer sends again. The
# window is 512 packets and 1 MiB of payload at most (request.c): 512
# packets at path MTU 1024, 256 at 4096 (perftest's -m). The packet at the
# window's edge asks for an ACK; the frames after the timer start over at
# the first PSN.
. "$(dirname "$0")/../lib.sh"
need_root "rc_window"
need_cmds rc_window ib_write_bw
MID_MTU=4200 two_hosts rc_window 64
links_up || fail "rc_window: links up"
tshark_roce_init

# burst MTU: A's WRITE packets as "PSN ACKREQ" lines, in wire order, while
# the link is cut (the capture at M's port sees them before the cut drops them)
burst() {
	local m=$1 port=$((18600 + $1 / 1024)) srv
	impair_start --drop 100 || { fail "rc_window: cut the link"; return; }
	cap_start "$NS_M" "$MA" "$tmp/w$m.pcap" "udp port 4791" -s 96
	xb timeout 8 ib_write_bw -F -x 1 -m "$m" -s $((2 << 20)) -n 5 -p "$port" >"$tmp/w$m.srv" 2>&1 &
	srv=$!
	wait_listen "$NS_B" "$port" || fail "rc_window: -m $m: no server"
	# the client's QP fails once its retries are spent: its exit is not the point
	xa timeout 2 ib_write_bw -F -x 1 -m "$m" -s $((2 << 20)) -n 5 -p "$port" "$IP_B" \
		>"$tmp/w$m.cli" 2>&1
	cap_stop
	impair_stop
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	"${TSHARK_ROCE[@]}" -r "$tmp/w$m.pcap" -Y "ip.src == $IP_A && infiniband.bth.opcode >= 6 && infiniband.bth.opcode <= 8" \
		-T fields -e infiniband.bth.psn -e infiniband.bth.a 2>/dev/null >"$tmp/w$m.txt"
}

for m in 1024 4096; do
	want=$((m == 1024 ? 512 : 256))
	burst "$m"
	# the first burst: PSNs until one comes again (the timer's go-back)
	read -r n edge again < <(awk 'NR == 1 { first = $1 } seen[$1]++ { print n, last, ($1 == first); done = 1; exit }
		{ n++; last = $2 } END { if (!done) print n + 0, last + 0, 0 }' "$tmp/w$m.txt")
	check_eq "path MTU $m: A sent $want WRITE packets before the timer, no ACK possible" "$n" "$want"
	check_eq "path MTU $m: the packet at the window's edge asks for an ACK" "$edge" 1
	check_eq "path MTU $m: after the timer A starts over at the first PSN" "$again" 1
done
t_done
