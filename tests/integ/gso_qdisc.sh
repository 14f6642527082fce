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
# the requester no timeout, the requester backed off (fewer packets sent
# again than it moved: sq_refused), and the WRITEs completed.
. "$(dirname "$0")/../lib.sh"
need_root "gso_qdisc"
command -v ib_write_bw >/dev/null || { skip "gso_qdisc: ib_write_bw is not installed (make deps)"; exit 0; }
TOPO_QUEUES=2 TOPO_MTU=1500 topo_setup || { fail "gso_qdisc: topology"; t_done; }
tmp=$(mktemp -d)
trap 'apps_kill; topo_cleanup; rm -rf "$tmp"' EXIT
if ! ip netns exec "$NS_A" tc qdisc replace dev "$IF_A" root tbf rate 2gbit burst 128k limit 128k; then
	skip "gso_qdisc: no tbf qdisc here"
	exit 0
fi
# one engine on A: two engines' runs through one qdisc are still reordered
# on the way (issue 32's notes, not this case)
xhcad_start --engines 1 && xhcad_start_b || { fail "gso_qdisc: xhcad"; t_done; }
links_up || fail "gso_qdisc: links up"
gso=$(xhca -j status | json_get 'd["xsk_mode"]')
[ "$gso" = copy ] || { skip "gso_qdisc: the AF_XDP sockets are not in copy mode (no GSO runs)"; exit 0; }

qdisc_sent() { ip netns exec "$NS_A" tc -s qdisc show dev "$IF_A" | awk '/Sent/ { print $2; exit }'; }
tx_bytes() { ip netns exec "$NS_A" cat "/sys/class/net/$IF_A/statistics/tx_bytes"; }
q0=$(qdisc_sent) t0=$(tx_bytes)
xb timeout 60 ib_write_bw -F -x 1 -s 65536 -q 2 -n 1000 -p 18700 >"$tmp/srv" 2>&1 &
srv=$!
wait_listen "$NS_B" 18700 || fail "gso_qdisc: no ib_write_bw server"
xa timeout 60 ib_write_bw -F -x 1 -s 65536 -q 2 -n 1000 -p 18700 "$IP_B" >"$tmp/cli" 2>&1
rc=$?
wait "$srv"
check "gso_qdisc: ib_write_bw -q 2 through the tbf qdisc completes (exit $rc)" \
	test "$rc" = 0 -a -n "$(grep -E '^ *65536 +2000 ' "$tmp/cli")"
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
# back-off): without it, it sends into the full qdisc at every turn, about
# six packets again for each one moved
check "gso_qdisc: A backed off: fewer packets sent again than moved ($again again, $((pkts - again)) moved)" \
	test "${again:-1}" -lt $((${pkts:-0} - ${again:-0}))
t_done
