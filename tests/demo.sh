#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make demo: part 1 is demo_rc.sh (two xhca hosts, an application on each).
# Part 2: two namespaces joined by a veth pair, xhcad on one side, a few
# QPs, a mix of valid and invalid RoCEv2 traffic from xhca-gen on the other,
# then the per-reason counters and the QP table; applications receiving
# SENDs; RDMA WRITEs placed into a pre-translated region by xhca_rx and into
# a fragmented one by xhcad; a multicast group of three applications.
# Everything is removed on exit.
set -u
. "$(dirname "$0")/lib.sh"
need_root demo
# part 1: two xhca hosts, an application on each side
"$(dirname "$0")/demo_rc.sh" || exit 1
printf '\n\033[1m== part 2: one host'"'"'s receive pipeline up close\033[0m\n'
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
say "host delivery: an application (xhca-recv, libxhca) on a UD QP and on an RC QP"
APP_DIR=$(mktemp -d)
trap 'apps_kill; topo_cleanup; rm -rf "$XHCAD_LOG" "$APP_DIR"' EXIT
app ud "$B/xhca-recv" -i "$IF_A" --type ud --qkey 0x22 --flowq 2 --count 4 --timeout 5 -j
app rc "$B/xhca-recv" -i "$IF_A" --type rc --flowq 5 --local-ip "$IP_A" --remote-ip "$IP_B" \
	--count 2 --timeout 5 -j
QU=$(ready ud); QR=$(ready rc)
printf 'UD QP 0x%06x on flow queue 2, RC QP 0x%06x on flow queue 5\n' "$QU" "$QR"
echo "3 UD SENDs and one with immediate; an RC SEND of 3 packets and one with invalidate"
gen --op ud-send-only --qpn "$QU" --qkey 0x22 --sqp 0x77 --count 3 --size 100
gen --op ud-send-only-imm --qpn "$QU" --qkey 0x22 --sqp 0x77 --imm 0xcafe --size 20
gen --op rc-send-first --qpn "$QR" --psn 0 --size 1000
gen --op rc-send-middle --qpn "$QR" --psn 1 --size 1000
gen --op rc-send-last --qpn "$QR" --psn 2 --size 500
gen --op rc-send-only-inv --qpn "$QR" --psn 3 --size 10 --rkey 0x1234
wait "$PID_ud" "$PID_rc"
echo "completions the applications polled (UD byte counts include the 40-byte GRH):"
grep wr_id "$APP_DIR/ud" "$APP_DIR/rc" | sed "s|^$APP_DIR/|  |"
run "$B/xhca" -i "$IF_A" flowq show
run "$B/xhca" -i "$IF_A" status
say "what xhcad did with each frame it took from a flow queue"
"$B/xhca" -i "$IF_A" stats | sed -n '/^HOST/,$p'

say "RDMA WRITE placement: a pre-translated region (xhca_rx) and a fragmented one (xhcad)"
ip -n "$NS_A" link set "$IF_A" mtu 3000
ip -n "$NS_B" link set "$IF_B" mtu 3000
W=$(xhca -j qp create --type rc | qpn_of)
xhca qp modify "$W" --state init >/dev/null
xhca qp modify "$W" --state rtr --epsn 0 --local-ip "$IP_A" --remote-ip "$IP_B" --mtu 2048 \
	--action host >/dev/null
xhca qp modify "$W" --state rts >/dev/null
run "$B/xhca" -i "$IF_A" mr reg --len 65536 --iova 0x10000
run "$B/xhca" -i "$IF_A" mr reg --len 65536 --iova 0x10000 --scatter
PRE=$(xhca -j mr show | "$SCAPY_PY" -c 'import json,sys; print([m["rkey"] for m in json.load(sys.stdin)["mrs"] if m["pretranslated"]][0])')
FRAG=$(xhca -j mr show | "$SCAPY_PY" -c 'import json,sys; print([m["rkey"] for m in json.load(sys.stdin)["mrs"] if not m["pretranslated"]][0])')
run "$B/xhca" -i "$IF_A" mr show
xhca stats --reset >/dev/null
echo "a 10000-byte WRITE (FIRST, 3 MIDDLE, LAST at MTU 2048) at iova 0x10ffe into each,"
echo "crossing page boundaries; then a WRITE with a stale key"
gen --op rc-rdma-write-only --qpn "$W" --psn 0 --msg-len 10000 --mtu 2048 --va 0x10ffe \
	--rkey "$PRE" --pattern 7
gen --op rc-rdma-write-only --qpn "$W" --psn 5 --msg-len 10000 --mtu 2048 --va 0x10ffe \
	--rkey "$FRAG" --pattern 7
sleep 0.2
run "$B/xhca" -i "$IF_A" mr read "$PRE" --offset 0xff0 --len 48
run "$B/xhca" -i "$IF_A" mr read "$FRAG" --offset 0xff0 --len 48
xhca mr read "$PRE" --len 65536 --out "$APP_DIR/pre"
xhca mr read "$FRAG" --len 65536 --out "$APP_DIR/frag"
cmp -s "$APP_DIR/pre" "$APP_DIR/frag" && echo "both regions hold the same 64 KiB"
gen --op rc-rdma-write-only --qpn "$W" --psn 10 --size 64 --va 0x10000 --rkey $((PRE ^ 0x11))
sleep 0.2
"$B/xhca" -i "$IF_A" stats | grep -E '^(REASON|placed|to_xlate|drop_mr_key|HOST|xlate_placed) '
"$B/xhca" -i "$IF_A" qp show "$W" | cut -c1-40
echo "(the stale key put the RC QP in the error state, as the spec requires)"

say "multicast: one packet stored once, a copy for each member (three applications)"
run "$B/xhca" -i "$IF_A" mcast create 239.1.1.1
for i in 1 2 3; do
	app "m$i" "$B/xhca-recv" -i "$IF_A" --type ud --qkey 0x77 --mcast 239.1.1.1 --count 2 \
		--timeout 5 -j
done
for i in 1 2 3; do ready "m$i" >/dev/null; done
run "$B/xhca" -i "$IF_A" mcast show
echo "2 UD SENDs to DestQP 0xffffff, IP 239.1.1.1"
gen --op ud-send-only --qpn 0xffffff --dst 239.1.1.1 --qkey 0x77 --sqp 0x55 --count 2 --size 50
wait "$PID_m1" "$PID_m2" "$PID_m3"
echo "(the applications have ended: their QPs left the group, which stays: the CLI made it)"
run "$B/xhca" -i "$IF_A" mcast show -v
echo "completions (qp_num is each member's own; the frame went to xhcad once):"
grep wr_id "$APP_DIR"/m? | sed "s|^$APP_DIR/|  |"
"$B/xhca" -i "$IF_A" status | grep -A1 '^mcast'

say "proxy QP: a lock request offloaded to the proxy, then a WRITE; completions in order"
app px "$B/xhca-recv" -i "$IF_A" --type rc --local-ip "$IP_A" --remote-ip "$IP_B" --proxy \
	--mr 65536 --count 5 --timeout 10
for _ in $(seq 100); do grep -q ready "$APP_DIR/px" && break; sleep 0.05; done
read -r _ _ PXQ _ PXR _ PXV <"$APP_DIR/px"
echo "an application: $(head -n 1 "$APP_DIR/px")"
run "$B/xhca" -i "$IF_A" filter add "$PXQ" --op send --match text:LOCK
run "$B/xhca" -i "$IF_A" filter add "$PXQ" --op send --match text:UNLOCK
run "$B/xhca" -i "$IF_A" filter show
echo "the requester: LOCK db1 alice; LOCK db1 bob 3000 (waits); a WRITE; hello; UNLOCK db1 alice"
pxsend() { gen --op rc-send-only --qpn "$PXQ" --psn "$1" --payload "text:$2"; }
pxsend 0 "LOCK db1 alice"
pxsend 1 "LOCK db1 bob 3000"
gen --op rc-rdma-write-only --qpn "$PXQ" --psn 2 --va "$PXV" --rkey "$PXR" --size 100
pxsend 3 hello
sleep 0.3
echo "before the UNLOCK, the application has seen (opcode 257: the proxy's; result 1: granted):"
grep '^wr' "$APP_DIR/px" | sed 's/^/  /'
pxsend 4 "UNLOCK db1 alice"
wait "$PID_px"
echo "after it: bob's lock granted, then the WRITE (opcode 256), hello, the UNLOCK (result 3):"
grep '^wr' "$APP_DIR/px" | sed 's/^/  /'
"$B/xhca" -i "$IF_A" proxy show

say "stop xhcad: it detaches xhca_rx and unpins its maps"
xhcad_stop TERM
in_a ip link show "$IF_A" | head -n 1
echo "demo done; namespaces are removed on exit"
