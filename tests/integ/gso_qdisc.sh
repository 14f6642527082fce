#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A qdisc on the requester's interface that drops: xhcad's GSO runs go
# through it (gso.c's packet socket), and a run it drops (ENOBUFS) is sent
# again by its QP, in order, through the same qdisc, never around it by the
# AF_XDP TX ring (whose frames would overtake the runs the qdisc still
# holds). A token bucket (tbf) slower than the sender, with room for two
# runs, under Debian's ib_write_bw with two QPs at path MTU 1024: the runs
# it drops are counted, none went around it (every byte A sent passed the
# qdisc), the responder saw no packet out of order (no sequence NAK) and
# the requester no timeout, the requester backed off (fewer than two
# packets sent again for each one moved: sq_refused), and the WRITEs
# completed. Then UC
# WRITEs through the same tbf (a dropped run lost as on a wire, counted,
# never around the qdisc), and READs with a tbf on the responder (its
# dropped response runs counted, never around its qdisc, the requester
# asking again for the rest).
. "$(dirname "$0")/../lib.sh"
need_root "gso_qdisc"
need_cmds gso_qdisc ib_write_bw
TOPO_QUEUES=2 TOPO_MTU=1500 topo_setup || { fail "gso_qdisc: topology"; t_done; }
tmp=$(mktemp -d)
trap 'apps_kill; topo_cleanup; rm -rf "$tmp"' EXIT
if ! ip netns exec "$NS_A" tc qdisc replace dev "$IF_A" root tbf rate 2gbit burst 128k limit 128k; then
	skip "gso_qdisc: no tbf qdisc here"
	exit 0
fi
# one engine each: two engines' runs through one qdisc are reordered by
# the kernel itself (docs/bench-history.md, 2026-11-29), not this case
xhcad_start --engines 1 && xhcad_start_b --engines 1 || { fail "gso_qdisc: xhcad"; t_done; }
links_up || fail "gso_qdisc: links up"
gso=$(xhca -j status | json_get 'd["xsk_mode"]')
[ "$gso" = copy ] || { skip "gso_qdisc: the AF_XDP sockets are not in copy mode (no GSO runs)"; exit 0; }

# qdisc_sent, tx_bytes [NS IF]: bytes through the qdisc, bytes the interface sent
qdisc_sent() {
	ip netns exec "${1:-$NS_A}" tc -s qdisc show dev "${2:-$IF_A}" | awk '/Sent/ { print $2; exit }'
}
tx_bytes() { ip netns exec "${1:-$NS_A}" cat "/sys/class/net/${2:-$IF_A}/statistics/tx_bytes"; }
# perf_ba NAME PORT PERFTEST ARGS...: Debian's perftest, its server on B
# and its client (the requester) on A; passes when both exit 0 and the
# client printed the result line for 64 KiB and ITERS (given with the call)
# iterations
perf_ba() {
	local name=$1 port=$2 prog=$3 srv rs rc
	shift 3
	xb timeout 60 "$prog" -F -x 1 -s 65536 -p "$port" "$@" >"$tmp/srv" 2>&1 &
	srv=$!
	wait_listen "$NS_B" "$port" || fail "gso_qdisc: $name: no $prog server"
	xa timeout 60 "$prog" -F -x 1 -s 65536 -p "$port" "$@" "$IP_B" >"$tmp/cli" 2>&1
	rc=$?
	wait "$srv"
	rs=$?
	check "gso_qdisc: $name completes on both sides (exit $rc, $rs)" \
		test "$rc" = 0 -a "$rs" = 0 -a -n "$(grep -E "^ *65536 +$ITERS " "$tmp/cli")"
}
q0=$(qdisc_sent) t0=$(tx_bytes)
ITERS=2000 perf_ba "ib_write_bw -q 2 through the tbf qdisc" 18700 ib_write_bw -q 2 -n 1000
q1=$(qdisc_sent) t1=$(tx_bytes)
read -r drops falls naks tmos pkts again <<<"$(xhca -j status | json_get \
	'"%d %d %d %d %d %d" % tuple(d["requester"][k] for k in ("gso_drops", "gso_fallbacks", "seq_naks", "timeouts", "packets", "retransmits"))')"
bnaks=$(in_b "$B/xhca" -i "$IF_B" -j status | json_get 'd["responder"]["seq_naks"]')
check "gso_qdisc: the qdisc dropped runs, counted ($drops gso_drops)" test "${drops:-0}" -gt 0
check_eq "gso_qdisc: no run went through the TX ring instead (gso_fallbacks)" "$falls" 0
# the frames A sent that did not pass the qdisc (the CM's MADs, ARP) are
# a few KiB; a run around it would be tens
check "gso_qdisc: every request byte A sent passed the qdisc ($((t1 - t0)) sent, $((q1 - q0)) through the qdisc)" \
	test $(((t1 - t0) - (q1 - q0))) -lt 16384
check_eq "gso_qdisc: the responder saw nothing out of order (sequence NAKs)" "$bnaks" 0
check_eq "gso_qdisc: no sequence NAK came back to A" "$naks" 0
check_eq "gso_qdisc: no retransmission timer went off on A" "$tmos" 0
# a QP whose run was dropped waits before it sends again (sq_refused's
# back-off): without it, it sends into the full qdisc at every turn, three
# to six packets again for each one moved; with it, under one
check "gso_qdisc: A backed off: under two packets sent again for each one moved ($again again, $((pkts - again)) moved)" \
	test "${again:-1}" -lt $((2 * (${pkts:-0} - ${again:-0})))

# UC: a run the qdisc drops is lost, as on a wire; counted, never sent
# around the qdisc, and the QPs go on
d0=$drops q0=$(qdisc_sent) t0=$(tx_bytes)
ITERS=2000 perf_ba "UC ib_write_bw -q 2 through the tbf" 18701 ib_write_bw -c UC -q 2 -n 1000
q1=$(qdisc_sent) t1=$(tx_bytes)
read -r drops falls <<<"$(xhca -j status | json_get \
	'"%d %d" % tuple(d["requester"][k] for k in ("gso_drops", "gso_fallbacks"))')"
check "gso_qdisc: UC runs the qdisc dropped are counted, lost ($((drops - d0)) gso_drops)" \
	test "$((drops - d0))" -gt 0
check_eq "gso_qdisc: no UC run went through the TX ring instead (gso_fallbacks)" "$falls" 0
check "gso_qdisc: every UC byte A sent passed the qdisc ($((t1 - t0)) sent, $((q1 - q0)) through it)" \
	test $(((t1 - t0) - (q1 - q0))) -lt 16384

# READ responses: B's runs through a tbf on B; one it drops is lost, as on
# a wire, and A asks for the rest again (its retransmissions)
if ! ip netns exec "$NS_B" tc qdisc replace dev "$IF_B" root tbf rate 2gbit burst 128k limit 128k; then
	fail "gso_qdisc: a tbf on B"
	t_done
fi
q0=$(qdisc_sent "$NS_B" "$IF_B") t0=$(tx_bytes "$NS_B" "$IF_B")
bstat() { in_b "$B/xhca" -i "$IF_B" -j status | json_get "$1"; }
bd0=$(bstat 'd["requester"]["gso_drops"]')
r0=$(xhca -j status | json_get 'd["requester"]["retransmits"]')
ITERS=1000 perf_ba "ib_read_bw -q 2 through B's tbf" 18702 ib_read_bw -q 2 -n 500
q1=$(qdisc_sent "$NS_B" "$IF_B") t1=$(tx_bytes "$NS_B" "$IF_B")
bd1=$(bstat 'd["requester"]["gso_drops"]')
read -r r1 errs <<<"$(xhca -j status | json_get \
	'"%d %d" % tuple(d["requester"][k] for k in ("retransmits", "errors"))')"
check "gso_qdisc: B counted the READ response runs its qdisc dropped ($((bd1 - bd0)) gso_drops)" \
	test "$((bd1 - bd0))" -gt 0
check "gso_qdisc: every READ response byte B sent passed its qdisc ($((t1 - t0)) sent, $((q1 - q0)) through it)" \
	test $(((t1 - t0) - (q1 - q0))) -lt 16384
check "gso_qdisc: A asked again for what was lost ($((r1 - r0)) packets again), no request failed" \
	test "$((r1 - r0))" -gt 0 -a "$errs" = 0
t_done
