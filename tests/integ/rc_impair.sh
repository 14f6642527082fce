#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Two xhca hosts through a netem-like impairment of the test's own
# (tests/impair: a tc program on the middle bridge's ports; this kernel has
# no sch_netem): 1% and 5% loss, reordering, duplicates and all of them at
# once. Every RC operation, both ways, sizes up to 4 MiB, each byte checked;
# pipelined SEND/WRITE/READ/FETCH_ADD rounds from both sides at once, each
# FETCH_ADD executed once. The impairment's own counters show it did what
# it was asked; the responders' and requesters' counters show the recovery
# paths ran (duplicates re-ACKed or replayed, NAKs, retransmissions). A's
# requests go as UDP GSO sends (--gso on, the default), B's through the
# AF_XDP TX ring (--gso off): both paths recover under every impairment.
. "$(dirname "$0")/../lib.sh"
need_root "rc_impair"
XHCAD_B_ARGS="--gso off" MID_MTU=4200 two_hosts rc_impair 160
MiB=$((1 << 20))
st() { "$B/xhca" -i "$1" -j status | json_get "$2"; }
sum2() { echo $(( $(st "$IF_A" "$1") + $(st "$IF_B" "$1") )); }

# The impairment refuses what it cannot do.
for bad in "$MB --drop 101" "$MB --dup -1" "$MB --reorder x" "nosuchport" "$MA" ""; do
	out=$(ip netns exec "$NS_M" "$B/xhca-impair" "$MA" $bad 2>&1); rc=$?
	check "impair: xhca-impair $MA $bad refused, exit 2 ($(echo "$out" | head -1))" \
		test "$rc" = 2
done
check "impair: nothing left attached after a refusal" \
	bash -c "! ip netns exec '$NS_M' tc qdisc show dev '$MA' | grep -q clsact"

# run_under NAME FIELD ARGS -- RCTEST ARGS: the xhca-rctest run under
# impairment ARGS; the impairment's FIELD counter moved.
run_under() {
	local name=$1 field=$2 imp=() r0 r1
	shift 2
	while [ "$1" != "--" ]; do imp+=("$1"); shift; done
	shift
	r0=$(sum2 'd["requester"]["retransmits"]')
	impair_start "${imp[@]}" || { fail "$name: impairment attach"; return; }
	rct "$@"
	impair_stop
	r1=$(sum2 'd["requester"]["retransmits"]')
	n=$(impair_sum "$field")
	check "$name: the impairment $field $n RoCE frames ($(echo $IMPAIR_STATS | tr '\n' ' '))" \
		test "$n" -gt 0
	# a duplicate needs nothing sent again; a loss or a late frame does
	[ "$field" = duplicated ] ||
		check "$name: the requesters sent again ($r0 -> $r1)" test "$r1" -gt "$r0"
}

run_under "loss 1%" dropped --drop 1 -- ops rc 1024 1 4097 65536 $((4 * MiB + 3))
run_under "loss 5%" dropped --drop 5 -- ops rc 2048 1 2049 $((MiB + 5))
run_under "path MTU 4096, loss 2%, reordering 2%" dropped --drop 2 --reorder 2 -- \
	ops rc 4096 4096 $((MiB + 9))
run_under "loss 5%, pipelined" dropped --drop 5 -- stress 200 3000 1024
d0=$(sum2 'd["responder"]["dups"]'); p0=$(sum2 'd["responder"]["replays"]')
run_under "duplicates 5%" duplicated --dup 5 -- stress 200 3000 1024
d1=$(sum2 'd["responder"]["dups"]'); p1=$(sum2 'd["responder"]["replays"]')
check "duplicates 5%: the responders saw duplicates ($d0 -> $d1) and answered READs/ATOMICs from saved state ($p0 -> $p1)" \
	test "$d1" -gt "$d0" -a "$p1" -gt "$p0"
run_under "reordering 5%" reordered --reorder 5 -- stress 200 3000 1024
run_under "reordering 5%, big messages" reordered --reorder 5 -- ops rc 1024 $((MiB + 7))
run_under "loss 2%, reordering 5%, duplicates 5%" dropped --drop 2 --reorder 5 --dup 5 -- \
	stress 250 5000 2048
check "A's requests went as UDP GSO sends ($(st "$IF_A" 'd["requester"]["gso_sends"]')), B's (--gso off) through the TX ring ($(st "$IF_B" 'd["requester"]["gso_sends"]') GSO sends)" \
	test "$(st "$IF_A" 'd["requester"]["gso_sends"]')" -gt 0 -a \
	"$(st "$IF_B" 'd["requester"]["gso_sends"]')" = 0
check "nothing left attached on the bridge ports" \
	bash -c "! ip netns exec '$NS_M' tc filter show dev '$MA' ingress | grep -q bpf"
# A clsact qdisc it did not make stays; only its filter goes.
ip netns exec "$NS_M" tc qdisc add dev "$MA" clsact
impair_start && impair_stop
check "impair: a clsact qdisc that was there stays, its filter gone, errors 0 ($(impair_sum errors))" \
	bash -c "ip netns exec '$NS_M' tc qdisc show dev '$MA' | grep -q clsact &&
		! ip netns exec '$NS_M' tc filter show dev '$MA' ingress | grep -q bpf &&
		test '$(impair_sum errors)' = 0"
t_done
