#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Invalidation soak: WRITEs arrive without pause while memory regions are
# registered and deregistered in a loop. The sender cycles through all 256
# keys of the region's index, so every registration is hit while it lives
# and every stale key keeps knocking after it is gone. xhcad --canary fills
# freed pages with a pattern and checks it whenever a page is handed out
# again and on every status: not one byte may reach a page after its region
# was gone. Pre-translated regions (xhca_rx places) and fragmented ones
# (xhcad places) in turn. Each kind runs SOAK_SECONDS and then on until it
# made ten re-registrations (each is four xhca commands: a slow machine
# takes longer, the soak still covers as many), thirty seconds at most.
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/soak
topo_setup || { fail "soak: topology"; t_done; }
tmp=$(mktemp -d)
XHCAD_LOG=$tmp/xhcad.log
trap 'kill -9 $SPRAY 2>/dev/null; topo_cleanup; rm -rf "$tmp"' EXIT
SPRAY=
SECS=${SOAK_SECONDS:-3}
MRLEN=65536

check "soak: xhcad starts (--canary)" xhcad_start --canary
UC=$(qp_up uc --action host)
for kind in pretranslated fragmented; do
	flag=--contig
	[ $kind = fragmented ] && flag=--scatter
	R=$(xhca -j mr reg --len $MRLEN $flag | json_get 'd["rkey"]')
	IDX=$((R >> 8))
	stats_snap "$tmp/snap"
	h0=$(xhca -j stats | json_get 'd["host"]["xlate_placed"]["frames"]')
	# not through in_b: $SPRAY must be the sender itself, for the TERM below
	nsenter --net=/run/netns/"$NS_B" "$B/xhca-apptest" spray "$IF_B" "$MAC_A" "$IP_A" "$IP_B" "$UC" "$IDX" 60 $MRLEN \
		>"$tmp/spray" 2>&1 &
	SPRAY=$!
	n=0
	end=$((SECONDS + SECS))
	cap=$((SECONDS + 30))
	while [ $SECONDS -lt $end ] || { [ $n -lt 10 ] && [ $SECONDS -lt $cap ]; }; do
		xhca mr dereg "$R" >/dev/null || break
		# another region takes the freed pages at once (first fit): a
		# late WRITE of the old one would land in them
		O=$(xhca -j mr reg --len $MRLEN $flag | json_get 'd["rkey"]') || break
		R=$(xhca -j mr reg --len $MRLEN $flag | json_get 'd["rkey"]') || break
		xhca mr dereg "$O" >/dev/null || break
		n=$((n + 1))
	done
	kill -TERM "$SPRAY" 2>/dev/null
	wait "$SPRAY"
	SPRAY=
	sent=$(json_get 'd["sent"]' <"$tmp/spray")
	check "soak: $kind: $n re-registrations under $sent WRITEs" test "$n" -ge 10 -a "$sent" -gt 10000
	if [ $kind = pretranslated ]; then
		placed=$(stats_delta "$tmp/snap" placed)
	else
		placed=$(( $(xhca -j stats | json_get 'd["host"]["xlate_placed"]["frames"]') - h0 ))
	fi
	check "soak: $kind: WRITEs landed while their region lived ($placed)" test "$placed" -gt 0
	check "soak: $kind: stale and wrong keys refused ($(stats_delta "$tmp/snap" drop_mr_key))" \
		test "$(stats_delta "$tmp/snap" drop_mr_key)" -gt 0
	check_eq "soak: $kind: not one byte in a freed page (canary)" \
		"$(xhca -j status | json_get 'd["canary_violations"]')" 0
	check "soak: $kind: each deregistration waited for xhca_rx (barriers)" \
		test "$(xhca -j status | json_get 'd["barriers"]')" -ge $((2 * n))
	xhca mr dereg "$R" >/dev/null
done
grep canary "$XHCAD_LOG" >&2 || true
t_done
