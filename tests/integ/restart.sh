#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# xhcad restart with pinned state: --keep leaves program and maps, a new xhcad
# rebuilds its QP table from them (also after SIGKILL), removes and reports
# broken entries, and the QPN cursor survives so retired QPNs are reused last.
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/restart
topo_setup || { fail "restart: topology"; t_done; }
snap=$(mktemp)
XHCAD_LOG=$(mktemp)
trap 'topo_cleanup; rm -f "$snap" "$XHCAD_LOG"' EXIT
PIN=/sys/fs/bpf/xhca/$IF_A

qp_field() { xhca -j qp show "$1" | json_get 'd["qps"][0]["'"$2"'"]'; }

check "restart: xhcad --keep starts" xhcad_start --keep
RC=$(qp_up rc --epsn 0 --action drop)
UD=$(QP_CREATE_ARGS="--qkey 0x42" qp_up ud --action drop)
HQ=$(QP_CREATE_ARGS="--qkey 0x43 --flowq 3" qp_up ud --action host)
gen --op rc-send-only --qpn "$RC" --psn 0 --count 10
id=$(xdp_prog_id "$NS_A" "$IF_A")
xhcad_stop TERM
check_eq "restart: --keep daemon exits 0" "$XHCAD_RC" 0
check_eq "restart: --keep leaves the program attached" "$(xdp_prog_id "$NS_A" "$IF_A")" "$id"
check "restart: --keep leaves the maps pinned" test -e "$PIN"/xhca_qp_cam
check "restart: ping while xhcad is down" in_b ping -c 2 -i 0.2 -W 2 -q "$IP_A" >/dev/null
gen --op rc-send-only --qpn "$RC" --psn 10 --count 5
# No xhcad, no sockets: a host QP's packets are counted drops, not lost silently.
nosock() {
	bpftool -j map lookup pinned "$PIN"/xhca_stats key "$1" 0 0 0 |
		json_get 'sum(c["value"]["packets"] for c in d.get("formatted", d)["values"])'
}
NOSOCK_ID=$(awk '/#define XHCA_REASONS/,/^$/' "$XHCA_TOP/include/xhca/abi.h" | grep -o 'X([A-Z_0-9]*' |
	sed 's/X(//' | grep -n '^DROP_NO_SOCKET$' | cut -d: -f1 | awk '{print $1 - 1}')
ns0=$(nosock "$NOSOCK_ID")
gen --op ud-send-only --qpn "$HQ" --qkey 0x43 --count 6
check_eq "restart: no xhcad: a host QP's packets are drop_no_socket" "$(( $(nosock "$NOSOCK_ID") - ns0 ))" 6

check "restart: xhcad starts again on the pinned maps" xhcad_start
check_eq "restart: QPs restored (and the connection manager's QP1)" "$(xhca -j qp show | json_get 'sorted(q["qpn"] for q in d["qps"])')" \
	"$(printf '%s\n' 1 "$RC" "$UD" "$HQ" | sort -n | "$SCAPY_PY" -c 'import sys; print(sorted(int(x) for x in sys.stdin))')"
check_eq "restart: ePSN kept (accepted while the daemon was down)" "$(qp_field "$RC" epsn)" 15
check_eq "restart: counters kept" "$(xhca -j stats | json_get 'd["reasons"]["accept_drop"]["packets"]')" 15
check_eq "restart: Q_Key kept" "$(qp_field "$UD" qkey)" $((0x42))
check_eq "restart: flow queue and action kept" "$(qp_field "$HQ" flowq) $(qp_field "$HQ" action)" "3 host"
rnr0=$(xhca -j stats | json_get 'd["host"]["rnr"]["frames"]')
gen --op ud-send-only --qpn "$HQ" --qkey 0x43 --count 4
sleep 0.2
check_eq "restart: the sockets are back: the host QP's packets reach xhcad (RNR: no buffers)" \
	"$(( $(xhca -j stats | json_get 'd["host"]["rnr"]["frames"]') - rnr0 ))" 4
stats_snap "$snap"
gen --op rc-send-only --qpn "$RC" --psn 15 --count 3
check_eq "restart: restored QP still accepts" "$(stats_delta "$snap" accept_drop)" 3
NEW=$(xhca -j qp create --type uc | json_get 'd["qpn"]')
check "restart: the QPN cursor survived (new QPN $NEW after $UD)" test "$NEW" -gt "$UD"
xhca qp destroy "$NEW" >/dev/null
NEW2=$(xhca -j qp create --type uc | json_get 'd["qpn"]')
check "restart: a destroyed QPN is not reused next ($NEW2 != $NEW)" test "$NEW2" -gt "$NEW"

# A crash leaves everything in place; the next xhcad recovers it.
xhcad_stop KILL
check "restart: after SIGKILL the program stays" test -n "$(xdp_prog_id "$NS_A" "$IF_A")"
# Break the table while nobody owns it: a CAM entry pointing at an unused
# context, and a valid context that no CAM entry points at.
bpftool map update pinned "$PIN"/xhca_qp_cam key hex 77 77 77 00 value hex 64 00 00 00 05 00 00 00
ctx=$(printf '00 00 00 00  09 00 00 00  55 55 55 00  01 00 03 00'; for i in $(seq 112); do printf ' 00'; done)
bpftool map update pinned "$PIN"/xhca_qp_ctx key hex c8 00 00 00 value hex $ctx
# Move the QPN cursor to the top of the range to see it wrap.
bpftool map update pinned "$PIN"/xhca_dstate key hex 00 00 00 00 value hex fe ff ff 00 00 00 00 00
: >"$XHCAD_LOG"
check "restart: xhcad starts after a crash" xhcad_start
check "restart: broken CAM entry reported" grep -q "removed broken CAM entry for QPN 0x777777" "$XHCAD_LOG"
check "restart: orphan context reported" grep -q "removed QP context 200" "$XHCAD_LOG"
check_eq "restart: status counts the repairs" "$(xhca -j status | json_get 'd["repaired"]')" 2
check "restart: broken CAM entry removed" bash -c "! bpftool map lookup pinned $PIN/xhca_qp_cam key hex 77 77 77 00 >/dev/null 2>&1"
check_eq "restart: orphan context invalidated" \
	"$(bpftool -j map lookup pinned "$PIN"/xhca_qp_ctx key hex c8 00 00 00 | json_get 'd.get("formatted", d)["value"]["valid"]')" 0
check_eq "restart: valid QPs survive the repair (QP1 with them)" "$(xhca -j qp show | json_get 'len(d["qps"])')" 5
check_eq "restart: restored QP accepts after a crash" "$(qp_field "$RC" epsn)" 18
W1=$(xhca -j qp create --type ud | json_get 'd["qpn"]')
W2=$(xhca -j qp create --type ud | json_get 'd["qpn"]')
check_eq "restart: cursor at the top hands out 0xfffffe" "$W1" $((0xfffffe))
check_eq "restart: after the wrap the QPN retired longest ago comes back first" "$W2" "$NEW"
xhcad_stop TERM
check_eq "restart: plain SIGTERM detaches" "$(xdp_prog_id "$NS_A" "$IF_A")" ""
check "restart: plain SIGTERM removes the pin directory" test ! -e "$PIN"
t_done
