#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The object attaches by `ip link ... xdpdrv obj` and by `xdp-loader load`;
# each keeps the host stack working and drops RoCEv2 to unknown QPs, and
# `xhcad --adopt` takes over the program and its maps.
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/attach
topo_setup || { fail "attach: topology"; t_done; }
snap=$(mktemp)
trap 'in_a xdp-loader unload -a "$IF_A" >/dev/null 2>&1; topo_cleanup; rm -f "$snap" "$snap".adopt-*' EXIT
OBJ=$B/bpf/xhca.bpf.o

# stat_by_map ID REASON: packets of a reason straight from the map (no daemon).
stat_by_map() {
	local mid
	mid=$(bpftool -j prog show id "$1" | json_get 'd["map_ids"]' | tr -d '[],' )
	for m in $mid; do
		if [ "$(bpftool -j map show id "$m" | json_get 'd["name"]')" = xhca_stats ]; then
			bpftool -j map lookup id "$m" key "$2" 0 0 0 | json_get \
				'sum(c["value"]["packets"] for c in d["formatted"]["values"])'
			return
		fi
	done
	echo none
}
reason_id() {
	awk '/#define XHCA_REASONS/,/^$/' "$XHCA_TOP/include/xhca/abi.h" | grep -o 'X([A-Z_0-9]*' |
		sed 's/X(//' | grep -n "^$1\$" | cut -d: -f1 | awk '{print $1 - 1}'
}
CAM_MISS=$(reason_id DROP_CAM_MISS)

# adopt_cycle HOW: with the program attached by hand, check traffic, adopt it,
# create a QP, see packets accepted, stop xhcad.
adopt_cycle() {
	local how=$1 id qpn
	id=$(xdp_prog_id "$NS_A" "$IF_A")
	check "attach/$how: program attached" test -n "$id"
	check "attach/$how: ping through xhca_rx" in_b ping -c 2 -i 0.2 -W 2 -q "$IP_A" >/dev/null
	gen --op rc-send-only --qpn 0x123456 --count 5
	check_eq "attach/$how: RoCEv2 to unknown QPs counted in the map" "$(stat_by_map "$id" "$CAM_MISS")" 5
	XHCAD_LOG=$snap.adopt-$how.log
	check "attach/$how: xhcad --adopt (--no-kfuncs: not its program to set)" \
		xhcad_start --adopt --no-kfuncs
	check "attach/$how: --no-kfuncs said ignored, the kernel's kfunc used" eval \
		'grep -q "no-kfuncs is ignored with --adopt" "$XHCAD_LOG" &&
		 [ "$(xhca -j status | json_get "d[\"kernel\"][\"kfunc_copy\"]")" = True ]'
	check_eq "attach/$how: adopted the same program" "$(xhca -j status | json_get 'd["prog_id"]')" "$id"
	check_eq "attach/$how: status says adopted" "$(xhca -j status | json_get 'd["attached_by"]')" adopted
	check_eq "attach/$how: earlier counters kept" "$(xhca -j stats | json_get 'd["reasons"]["drop_cam_miss"]["packets"]')" 5
	qpn=$(QP_CREATE_ARGS="--qkey 7" qp_up ud --action drop)
	stats_snap "$snap"
	gen --op ud-send-only --qpn "$qpn" --qkey 7 --psn-step 0 --count 9
	check_eq "attach/$how: adopted program accepts for xhcad's QP" "$(stats_delta "$snap" accept_drop)" 9
	check "attach/$how: maps pinned after adopt" test -e /sys/fs/bpf/xhca/"$IF_A"/xhca_qp_ctx
	xhcad_stop TERM
	check_eq "attach/$how: xhcad detaches what it adopted" "$(xdp_prog_id "$NS_A" "$IF_A")" ""
}

# 1. iproute2
check "attach/ip: ip link set xdpdrv obj" in_a ip link set dev "$IF_A" xdpdrv obj "$OBJ" sec xdp.frags
adopt_cycle ip

# 2. xdp-loader (libxdp falls back to a single program without trampolines)
check "attach/xdp-loader: xdp-loader load" in_a xdp-loader load -m native "$IF_A" "$OBJ"
in_a xdp-loader status "$IF_A" 2>/dev/null | grep -q xhca_rx
check "attach/xdp-loader: xdp-loader status lists xhca_rx" test $? = 0
adopt_cycle xdp-loader

# 3. generic (skb) mode through xhcad
check "attach/skb: xhcad --mode skb" xhcad_start --mode skb
check_eq "attach/skb: attached in generic mode" "$(in_a ip -d link show "$IF_A" | grep -c xdpgeneric)" 1
check_eq "attach/skb: status mode" "$(xhca -j status | json_get 'd["mode"]')" skb
xhcad_stop TERM
# ... kept in skb mode (--keep), a restart without --mode takes it over in
# that mode (an earlier xhcad may have fallen back to skb mode from a driver
# that refused native XDP); --mode native refuses it, naming the mode
check "attach/skb-kept: xhcad --keep --mode skb" xhcad_start --keep --mode skb
xhcad_stop TERM
out=$(in_a "$B/xhcad" "$IF_A" --mode native 2>&1); rc=$?
check "attach/skb-kept: --mode native refuses the program kept in skb mode, naming it" \
	test "$rc" = 1 -a "$(grep -c "attached in skb mode" <<<"$out")" = 1
check "attach/skb-kept: a restart without --mode" xhcad_start
check_eq "attach/skb-kept: ... serves in skb mode" "$(xhca -j status | json_get 'd["mode"]')" skb
xhcad_stop TERM

# 4. refusing to replace somebody else's program
check "attach/foreign: ip attaches the generator's program" \
	in_a ip link set dev "$IF_A" xdpdrv obj "$B/bpf/xhca_gen.bpf.o" sec xdp
out=$(in_a "$B/xhcad" "$IF_A" 2>&1); rc=$?
check_eq "attach/foreign: xhcad refuses (exit 1)" "$rc" 1
check "attach/foreign: the message says how to detach" grep -q "xdp off" <<<"$out"
check "attach/foreign: the foreign program stays" test -n "$(xdp_prog_id "$NS_A" "$IF_A")"
in_a ip link set dev "$IF_A" xdp off
out=$(in_a "$B/xhcad" "$IF_A" --adopt 2>&1); rc=$?
check_eq "attach/adopt-nothing: --adopt with no program fails" "$rc" 1
check "attach/adopt-nothing: the message says how to attach" grep -q "attach it first" <<<"$out"
t_done
