#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The demo's application pair (xhca-rc: two processes, one per host,
# connected over TCP): its run as make demo does it, smaller, captured in the
# middle (tshark dissects every frame, none malformed; scapy computes every
# ICRC the same); the same run through loss, reordering and duplicates; bad
# usage; a peer that is not there, and one that dies half-way.
. "$(dirname "$0")/../lib.sh"
need_root "rc_demo"
two_hosts rc_demo 96
RC=("$B/xhca-rc" --mtu 2048)

# pair NAME ARGS: the server on B, the client on A; both must pass.
pair() {
	local name=$1 src
	shift
	in_b "${RC[@]}" -i "$IF_B" -a "$IP_B" "$@" >"$tmp/s" 2>&1 &
	local spid=$!
	in_a "${RC[@]}" -i "$IF_A" -a "$IP_A" -c "$IP_B" "$@" >"$tmp/c" 2>&1
	crc=$?
	wait "$spid"
	src=$?
	check "$name: client and server exit 0 ($crc, $src)" test "$crc" = 0 -a "$src" = 0
	for side in c s; do
		for what in ping-pong write read counter multicast; do
			case "$side:$what" in c:multicast|s:ping-pong|s:read) continue ;; esac
			check "$name: $( [ $side = c ] && echo client || echo server): $what checked" \
				grep -q "ok: $what" "$tmp/$side"
		done
	done
	[ "$crc$src" = 00 ] || cat "$tmp/c" "$tmp/s" >&2
}

cap_start "$NS_M" "$MA" "$tmp/demo.pcap" "udp port 4791"
pair "demo run" --write-mib 4 --pingpong 200 --counter 200 --mcast-msgs 20 --expect-all
cap_stop
# RC SEND, WRITE (with immediate), READ request/responses, ACK, FETCH_ADD
# and its ACK, UD SEND with immediate
ICRC=1 roce_interop "the demo run" "$tmp/demo.pcap" 4000 4 6 7 8 9 12 13 14 15 17 18 20 101

impair_start --drop 1 --reorder 2 --dup 1 || fail "rc_demo: impairment"
pair "demo run through 1% loss, 2% reordering, 1% duplicates" --write-mib 16 --pingpong 100 \
	--counter 300 --mcast-msgs 20 --port 18516
impair_stop
check "the impairment dropped, held back and duplicated frames ($(echo $IMPAIR_STATS))" \
	test "$(impair_sum dropped)" -gt 0 -a "$(impair_sum reordered)" -gt 0 -a \
	"$(impair_sum duplicated)" -gt 0

# Bad usage: exit 2 and a reason; nothing opened.
for bad in "--mtu 1000" "--write-mib 0" "--port 70000" "--counter 0" "--mcast 10.0.0.1" \
	"--pingpong x"; do
	out=$(in_a "${RC[@]}" -i "$IF_A" -a "$IP_A" $bad 2>&1); rc=$?
	check "xhca-rc $bad: refused, exit 2 ($(echo "$out" | head -1))" test "$rc" = 2
done
out=$(in_a "$B/xhca-rc" -i nosuchif -a "$IP_A" 2>&1); rc=$?
check "xhca-rc on an interface without xhcad: exit 1, says so ($out)" \
	bash -c "test $rc = 1 && echo '$out' | grep -q 'no xhcad answers on nosuchif .*is it running (xhcad nosuchif)'"
# No server: the client gives up after its 10 s of trying, exit 1.
out=$(in_a "${RC[@]}" -i "$IF_A" -a "$IP_A" -c "$IP_B" --port 18599 --write-mib 1 2>&1); rc=$?
check "xhca-rc with no server: exit 1 ($out)" \
	bash -c "test $rc = 1 && echo '$out' | grep -q 'connect to'"
# The client killed half-way through the ping-pong: the server says the
# peer is gone (exit 1) at once, not after its 60 s wait; xhcad lives on.
in_b "${RC[@]}" -i "$IF_B" -a "$IP_B" --pingpong 1000000 --write-mib 1 --port 18517 \
	>"$tmp/s" 2>&1 &
spid=$!
in_a "${RC[@]}" -i "$IF_A" -a "$IP_A" -c "$IP_B" --pingpong 1000000 --write-mib 1 --port 18517 \
	>"$tmp/c" 2>&1 &
for _ in $(seq 50); do grep -q "connected" "$tmp/c" 2>/dev/null && break; sleep 0.1; done
sleep 0.5
pkill -9 -f -- "-c $IP_B --pingpong 1000000"
t0=$(date +%s)
wait "$spid"
rc=$?
check "a client killed half-way: the server exits 1 within 3 s ($(( $(date +%s) - t0 )) s): $(tail -1 "$tmp/s")" \
	bash -c "test $rc = 1 && test $(( $(date +%s) - t0 )) -le 3 && grep -q 'peer closed' '$tmp/s'"
check "a client killed half-way: both xhcads still answer" \
	bash -c "'$B/xhca' -i '$IF_A' status >/dev/null && '$B/xhca' -i '$IF_B' status >/dev/null"
t_done
