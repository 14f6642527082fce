#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make demo: two namespaces joined by a veth pair, xhcad on one side, a few
# QPs, a mix of valid and invalid RoCEv2 traffic from xhca-gen on the other,
# then the per-reason counters and the QP table. Everything is removed on exit.
set -u
. "$(dirname "$0")/lib.sh"
need_root demo
XHCAD_LOG=$(mktemp)

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { echo "\$ $*"; "$@"; }
gen() { in_b "$B/xhca-gen" -i "$IF_B" --dst-mac "$MAC_A" "$@" | sed 's/^/  /'; }
qpn_of() { "$SCAPY_PY" -c 'import json,sys; print(json.load(sys.stdin)["qpn"])'; }

topo_setup || { echo "demo: cannot build the veth topology" >&2; exit 1; }
trap 'topo_cleanup; rm -f "$XHCAD_LOG"' EXIT
say "topology: $NS_A/$IF_A ($IP_A) <-veth-> $NS_B/$IF_B ($IP_B)"
say "start xhcad on $IF_A"
xhcad_start || { cat "$XHCAD_LOG"; exit 1; }
run "$B/xhca" -i "$IF_A" status

say "create QPs"
RC=$(xhca -j qp create --type rc | qpn_of)
xhca qp modify "$RC" --state init >/dev/null
xhca qp modify "$RC" --state rtr --epsn 0 --local-ip "$IP_A" --remote-ip "$IP_B" --mtu 1024 \
	--action drop >/dev/null
UC=$(xhca -j qp create --type uc | qpn_of)
xhca qp modify "$UC" --state init >/dev/null
xhca qp modify "$UC" --state rtr --local-ip "$IP_A" --remote-ip "$IP_B" --action drop >/dev/null
UD=$(xhca -j qp create --type ud --qkey 0x11111111 | qpn_of)
xhca qp modify "$UD" --state init >/dev/null
xhca qp modify "$UD" --state rtr --action drop >/dev/null
run "$B/xhca" -i "$IF_A" qp show

say "traffic from $IF_B"
echo "valid: 100 RC SENDs in sequence, 20 UC SEND_FIRST/MIDDLE/LAST, 50 UD SENDs"
gen --op rc-send-only --qpn "$RC" --psn 0 --count 100 --size 256
gen --op uc-send-first --qpn "$UC" --psn 0 --count 1
gen --op uc-send-middle --qpn "$UC" --psn 1 --count 18
gen --op uc-send-last --qpn "$UC" --psn 19 --count 1
gen --op ud-send-only --qpn "$UD" --qkey 0x11111111 --psn-step 0 --count 50
echo "invalid: duplicates, a PSN gap, unknown QPN, QP0, bad P_Key, bad Q_Key, unknown opcode, TVer 1"
gen --op rc-send-only --qpn "$RC" --psn 90 --count 10
gen --op rc-send-only --qpn "$RC" --psn 200 --psn-step 0 --count 5
gen --op rc-send-only --qpn 0xabcdef --count 7
gen --op rc-send-only --qpn 0 --count 3
gen --op rc-send-only --qpn "$RC" --psn 100 --pkey 0x8001 --count 4
gen --op ud-send-only --qpn "$UD" --qkey 0x22222222 --count 6
gen --op 0x18 --qpn "$RC" --count 2
gen --op rc-send-only --qpn "$RC" --tver 1 --count 2
echo "not RoCE: ping keeps working through the attached program"
in_b ping -c 3 -i 0.2 -q "$IP_A" | tail -n 2 | sed 's/^/  /'

say "per-reason counters (xhca stats)"
run "$B/xhca" -i "$IF_A" stats
say "QP table with per-QP counters"
run "$B/xhca" -i "$IF_A" qp show
say "stop xhcad: it detaches xhca_rx and unpins its maps"
xhcad_stop TERM
in_a ip link show "$IF_A" | head -n 1
echo "demo done; namespaces are removed on exit"
