#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# --steer: a QP's frames arrive on its engine's queue. Two xhca hosts on a
# veth pair of two queues each, two engines each (engine k reads RX queue
# k). By default (auto, a veth) each xhcad attaches xhca_steer to its
# interface's tc egress hook, and its UDP GSO runs (a QP's requests, READ
# responses, the responder's ACKs) leave by the TX queue whose RX queue at
# the peer the engine of the destination QP reads: a QP belongs to the engine of the queue its QPN
# hashes to (Fibonacci hashing, checked here on QPs made with the CLI). With
# 8 QPs of ib_write_bw from B every request frame A's engines took came from
# their own queues, every ACK B's took, and every READ response and ATOMIC
# ACK B's took with ib_read_bw and ib_atomic_bw (without
# steering the kernel's seeded hash spreads the runs over both queues: shown
# with --steer off). A user's filter on the same hook keeps running after
# ours and stays when xhcad goes; the clsact qdisc xhcad added goes with it
# (but not while someone's filter is on it); one a killed xhcad left is
# replaced by the next and taken down by `xhcad --unload`. Where the filter
# cannot be set up (an ingress qdisc, a user's filter at its priority),
# auto runs without it and on stops; `xhcad --unload` leaves a user's
# filter at that priority alone. With --gso off
# --steer on says there is nothing to steer.
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/steer
need_cmds steer ib_write_bw ib_read_bw ib_atomic_bw tc bpftool
TOPO_MTU=4200 topo_setup || { fail "steer: topology"; t_done; }
tmp=$(mktemp -d)
trap 'apps_kill; topo_cleanup; rm -rf "$tmp"' EXIT
XHCAD_LOG=$tmp/a.log
XHCAD_LOG_B=$tmp/b.log

# a user's filter on A's egress before xhcad: after ours (a larger
# priority number), counting what it sees (tests/tc/count.bpf.c)
in_a tc qdisc add dev "$IF_A" clsact
in_a tc filter add dev "$IF_A" egress prio 30000 bpf da obj "$B/tc_count.bpf.o" sec tc ||
	fail "steer: the user's filter"
user_pkts() {
	local p m
	p=$(in_a tc filter show dev "$IF_A" egress | sed -n 's/.* id \([0-9]*\) name tc_count .*/\1/p')
	m=$(bpftool -j prog show id "$p" | json_get "d['map_ids'][0]")
	bpftool -j map dump id "$m" | json_get "d[0]['formatted']['value']['.bss'][0]['seen']"
}

xhcad_start --hostmem-mb 256 --engines 2 && xhcad_start_b --hostmem-mb 256 --engines 2 ||
	{ fail "steer: two xhcads"; t_done; }
links_up
st() { "$B/xhca" -i "$1" -j status | json_get "d['$2']"; }
check_eq "steer: A's xhca status says steer on (auto, a veth)" "$(st "$IF_A" steer)" 1
check_eq "steer: B's too" "$(st "$IF_B" steer)" 1
check_eq "steer: ... of 2 TX queues" "$(st "$IF_A" tx_queues)" 2
check "steer: A's log says so" grep -q -- "--steer: on" "$XHCAD_LOG"
filters() { in_a tc filter show dev "$IF_A" egress; }
check "steer: xhca_steer on A's egress hook at its handle ($(filters | grep -c 'handle'))" \
	sh -c "ip netns exec $NS_A tc filter show dev $IF_A egress | grep -q 'handle 0x5848 xhca_steer'"
check "steer: ... beside the user's filter" sh -c \
	"ip netns exec $NS_A tc filter show dev $IF_A egress | grep -q 'pref 30000 bpf.*tc_count'"

# A QP is its engine's whose queue the QPN hashes to: flow queue % 2 ==
# (qpn * 2654435761 mod 2^32) * 2 >> 32, for QPs of neighbouring QPNs
bad=0 n=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	out=$("$B/xhca" -i "$IF_B" qp create --type rc) || { bad=$((bad + 1)); continue; }
	qpn=$(echo "$out" | sed -n 's/.*qp \(0x[0-9a-f]*\).*/\1/p')
	fq=$(echo "$out" | sed -n 's/.*flow queue \([0-9]*\).*/\1/p')
	q=$(((((qpn * 2654435761) & 0xffffffff) * 2) >> 32))
	[ $((fq % 2)) = "$q" ] || { bad=$((bad + 1)); echo "    qp $qpn: flow queue $fq, queue $q"; }
	n=$((n + 1))
done
check "steer: $n QPs each on the engine of its QPN's queue ($bad not)" test "$n" = 10 -a "$bad" = 0
# (B's QPNs now run ten ahead of A's: the peers' QPs hash apart)
# Each perftest below: A the server, B the client, so A responds

own() { st "$1" rx_own; }
other() { st "$1" rx_other; }
# pair NAME 'SERVER' 'CLIENT': SERVER on A (the responder), CLIENT on B
pair() {
	exec_pair "$1" 60 "wait_listen $NS_A 18515" "$2" "$3 $IP_A" &&
		pass "steer: $1: both ends exit 0"
}

u0=$(user_pkts)
o0=$(own "$IF_A") x0=$(other "$IF_A") bo0=$(own "$IF_B") bx0=$(other "$IF_B")
pair "ib_write_bw -q 8" "ib_write_bw -F -q 8 -s 65536 -n 500" "ib_write_bw -F -q 8 -s 65536 -n 500"
o=$(($(own "$IF_A") - o0)) x=$(($(other "$IF_A") - x0))
check "steer: WRITEs: A's engines took $o frames from their own queues (>= 4000), $x from the other's (0)" \
	test "$o" -ge 4000 -a "$x" = 0
# their ACKs (xhcad's: --xdp-ack auto is off on a native veth) in A's runs
o=$(($(own "$IF_B") - bo0)) x=$(($(other "$IF_B") - bx0))
check "steer: ... their ACKs: B's engines took $o from their own queues (> 0), $x from the other's (0)" \
	test "$o" -gt 0 -a "$x" = 0
u=$(($(user_pkts) - u0))
check "steer: the user's filter after ours saw A's runs go ($u packets)" test "$u" -gt 0

o0=$(own "$IF_B") x0=$(other "$IF_B")
pair "ib_read_bw -q 8" "ib_read_bw -F -q 8 -s 65536 -n 500" "ib_read_bw -F -q 8 -s 65536 -n 500"
o=$(($(own "$IF_B") - o0)) x=$(($(other "$IF_B") - x0))
check "steer: READ responses: B's engines took $o frames from their own queues (>= 4000), $x from the other's (0)" \
	test "$o" -ge 4000 -a "$x" = 0

o0=$(own "$IF_B") x0=$(other "$IF_B")
pair "ib_atomic_bw -q 8" "ib_atomic_bw -F -q 8 -n 2000" "ib_atomic_bw -F -q 8 -n 2000"
o=$(($(own "$IF_B") - o0)) x=$(($(other "$IF_B") - x0))
check "steer: ATOMIC ACKs: B's engines took $o frames from their own queues (>= 16000), $x from the other's (0)" \
	test "$o" -ge 16000 -a "$x" = 0

# xhcad goes: its filter goes, the user's and the qdisc (the user's) stay
xhcad_stop
check "steer: A's xhcad stopped: xhca_steer is off the hook" \
	sh -c "! ip netns exec $NS_A tc filter show dev $IF_A egress | grep -q xhca_steer"
check "steer: ... the user's filter and qdisc stay" sh -c \
	"ip netns exec $NS_A tc filter show dev $IF_A egress | grep -q 'pref 30000 bpf.*tc_count'"

# --steer off (both ends): no filter; the kernel's hash spreads the runs
in_a tc qdisc del dev "$IF_A" clsact
XHCAD_PID=$XHCAD_PID_B xhcad_stop
xhcad_start --hostmem-mb 256 --engines 2 --steer off &&
	xhcad_start_b --hostmem-mb 256 --engines 2 --steer off ||
	{ fail "steer: xhcads with --steer off"; t_done; }
check_eq "steer: --steer off: status says off" "$(st "$IF_A" steer)" 0
check "steer: ... no clsact qdisc on A" sh -c "! ip netns exec $NS_A tc qdisc show dev $IF_A | grep -q clsact"
o0=$(own "$IF_A") x0=$(other "$IF_A")
pair "ib_write_bw -q 8, --steer off" "ib_write_bw -F -q 8 -s 65536 -n 500" \
	"ib_write_bw -F -q 8 -s 65536 -n 500"
o=$(($(own "$IF_A") - o0)) x=$(($(other "$IF_A") - x0))
echo "  # --steer off: A's engines took $o frames from their own queues, $x from the other's"
xhcad_stop

# the qdisc xhcad added goes with it; a killed xhcad's filter is replaced
# by the next xhcad's (one filter, the new program) and --unload takes down
# what a kill left
xhcad_start --hostmem-mb 256 --engines 2 || { fail "steer: A's xhcad again"; t_done; }
check "steer: xhcad added the clsact qdisc" sh -c "ip netns exec $NS_A tc qdisc show dev $IF_A | grep -q clsact"
xhcad_stop
check "steer: ... and removed it at exit" sh -c "! ip netns exec $NS_A tc qdisc show dev $IF_A | grep -q clsact"
xhcad_start --hostmem-mb 256 --engines 2 || { fail "steer: A's xhcad again"; t_done; }
in_a tc filter add dev "$IF_A" egress prio 30000 bpf da obj "$B/tc_count.bpf.o" sec tc
xhcad_stop
check "steer: a filter the user added to xhcad's qdisc meanwhile keeps it at exit" sh -c \
	"ip netns exec $NS_A tc filter show dev $IF_A egress | grep -q 'pref 30000 bpf.*tc_count'"
check "steer: ... and says so" grep -q "clsact qdisc on $IF_A holds other filters: kept" "$XHCAD_LOG"
in_a tc qdisc del dev "$IF_A" clsact
xhcad_start --hostmem-mb 256 --engines 2 || { fail "steer: A's xhcad again"; t_done; }
xhcad_stop KILL
check "steer: a killed xhcad leaves its filter" sh -c \
	"ip netns exec $NS_A tc filter show dev $IF_A egress | grep -q xhca_steer"
xhcad_start --hostmem-mb 256 --engines 2 || { fail "steer: A's xhcad after a kill"; t_done; }
check_eq "steer: the next xhcad's replaces it: one filter" \
	"$(in_a tc filter show dev "$IF_A" egress | grep -c 'xhca_steer')" 1
xhcad_stop KILL
out=$(in_a "$B/xhcad" --unload "$IF_A" 2>&1)
check "steer: xhcad --unload says it detached xhca_steer ($out)" grep -q 'detached xhca_steer' <<<"$out"
check "steer: ... and it is gone" sh -c \
	"! ip netns exec $NS_A tc filter show dev $IF_A egress | grep -q xhca_steer"
in_a tc qdisc del dev "$IF_A" clsact 2>/dev/null

# the filter cannot be set up (an ingress qdisc holds the handle clsact
# needs): auto says so and runs without it, leaving the qdisc; on stops
in_a tc qdisc add dev "$IF_A" ingress
: >"$XHCAD_LOG"
xhcad_start --hostmem-mb 256 --engines 2 || { fail "steer: auto beside an ingress qdisc"; t_done; }
check_eq "steer: auto, no clsact possible: off" "$(st "$IF_A" steer)" 0
check "steer: ... said why" grep -q -- "--steer auto: off" "$XHCAD_LOG"
xhcad_stop
check "steer: ... the ingress qdisc left as it was" sh -c \
	"ip netns exec $NS_A tc qdisc show dev $IF_A | grep -q 'qdisc ingress'"
xhcad_start --hostmem-mb 256 --engines 2 --steer on && fail "steer: --steer on starts without its filter"
xhcad_stop
check "steer: --steer on without its filter: xhcad stops, saying why" \
	grep -q -- "--steer: cannot attach xhca_steer to $IF_A.s egress: another qdisc holds ffff:" "$XHCAD_LOG"
in_a tc qdisc del dev "$IF_A" ingress

# the filter cannot be attached (a user's filter of another protocol holds
# its priority): auto says why and runs without it, on stops; the user's
# filter is never touched, by xhcad nor by --unload
in_a tc qdisc add dev "$IF_A" clsact
in_a tc filter add dev "$IF_A" egress prio 22600 protocol ip bpf da obj "$B/tc_count.bpf.o" sec tc ||
	fail "steer: the user's filter at xhca_steer's priority"
users() { in_a tc filter show dev "$IF_A" egress | grep -c 'pref 22600 bpf.*tc_count'; }
: >"$XHCAD_LOG"
xhcad_start --hostmem-mb 256 --engines 2 || { fail "steer: auto beside a filter at its priority"; t_done; }
check_eq "steer: auto, the priority taken: off" "$(st "$IF_A" steer)" 0
check "steer: ... said why" grep -q -- "--steer: cannot attach xhca_steer to $IF_A.s egress: Invalid argument" \
	"$XHCAD_LOG"
pair "ib_write_bw, auto fallen back off" "ib_write_bw -F -s 65536 -n 200" "ib_write_bw -F -s 65536 -n 200"
xhcad_stop
check_eq "steer: ... the user's filter left as it was" "$(users)" 1
xhcad_start --hostmem-mb 256 --engines 2 --steer on && fail "steer: --steer on starts without its filter"
xhcad_stop
check "steer: --steer on, the priority taken: xhcad stops, saying why" \
	grep -q -- "--steer: cannot attach xhca_steer to $IF_A.s egress: Invalid argument" "$XHCAD_LOG"
out=$(in_a "$B/xhcad" --unload "$IF_A" 2>&1)
check "steer: --unload does not take the user's filter for ours ($out)" \
	test -z "$(grep 'detached xhca_steer' <<<"$out")"
check_eq "steer: ... it stays" "$(users)" 1
in_a tc qdisc del dev "$IF_A" clsact

# nothing to steer: --gso off
xhcad_start --hostmem-mb 256 --engines 2 --steer on --gso off ||
	{ fail "steer: --steer on --gso off"; t_done; }
check_eq "steer: --steer on --gso off: off" "$(st "$IF_A" steer)" 0
check "steer: ... said why" grep -q -- "--steer on: nothing to steer (--gso is off)" "$XHCAD_LOG"
xhcad_stop
t_done
