#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A restart (--keep) keeps the multicast groups: their members whose QPs came
# back, their function ports, their counters; a group with ports and QP
# members gets its replication port again, and copies reach both. Without
# the state file that names them, the next xhcad removes the groups it finds
# in the maps (their members are not known).
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/restart_mcast
topo_setup || { fail "restart_mcast: topology"; t_done; }
XHCAD_LOG=$(mktemp)
tmp=$(mktemp -d)
trap 'topo_cleanup; rm -rf "$tmp" "$XHCAD_LOG"' EXIT
PIN=/sys/fs/bpf/xhca/$IF_A

# a function port: xmp1a where xhcad runs, its peer in B (GRO: NAPI for
# the frames redirected to it)
ip link add xmp1a netns "$NS_A" type veth peer name xmp1 netns "$NS_B"
ip -n "$NS_A" link set xmp1a up
ip -n "$NS_B" link set xmp1 up
in_b ethtool -K xmp1 gro on >/dev/null
G1=239.20.20.1
G2=239.20.20.2
mg() { xhca -j mcast show | json_get '[g for g in d["groups"] if g["mgid"] == "'"$1"'"]'"$2"; }
mcsend() { gen --op ud-send-only --qpn 0xffffff --dst "$1" --qkey 0x5151 --pkey 0x8001 \
	--payload "text:$2"; }
polled() { xhca -j cq poll "$CQ" --dump 64 | json_get '[bytes.fromhex(c["data"])[40:].decode() for c in d["completions"]]'; }
port_frames() { "${TSHARK_ROCE[@]}" -r "$tmp/port.pcap" -T fields -e frame.len 2>/dev/null | wc -l; }
tshark_roce_init

check "restart_mcast: xhcad --keep starts" xhcad_start --keep
CQ=$(xhca -j cq create --depth 16 | json_get 'd["cq"]')
QP=$(QP_CREATE_ARGS="--qkey 0x5151 --pkey 0x8001 --cq $CQ --rq-depth 8" qp_up ud --action host)
xhca mcast create "$G1" --pkey 0x8001 >/dev/null
xhca mcast attach "$G1" "$QP" >/dev/null
xhca mcast attach "$G1" --dev xmp1a >/dev/null
xhca mcast create "$G2" >/dev/null
mcsend "$G1" one
sleep 0.2
check_eq "restart_mcast: before: the QP member got its copy" "$(polled)" "['one']"
before=$(mg "$G1" '[0]["replicated"]')
xhcad_stop TERM
REP=xhr$(ip -n "$NS_A" -j link show "$IF_A" | json_get 'd[0]["ifindex"]')
check "restart_mcast: the replication port went with xhcad" \
	bash -c "! ip -n '$NS_A' link show $REP >/dev/null 2>&1"

check "restart_mcast: xhcad starts again on the kept maps" xhcad_start --keep
check_eq "restart_mcast: G1 is back with its P_Key, member, port and counters" \
	"$(mg "$G1" '[0]["pkey"]') $(mg "$G1" '[0]["members"]') $(mg "$G1" '[0]["devs"]') $(mg "$G1" '[0]["replicated"]')" \
	"$((0x8001)) [$QP] ['xmp1a'] $before"
check_eq "restart_mcast: G2 (no members) is back" "$(mg "$G2" '[0]["members"]')" "[]"
check_eq "restart_mcast: xhca_rx sees them (xhca_mcast holds 2 groups)" \
	"$(bpftool -j map dump pinned "$PIN"/xhca_mcast | json_get 'len(d)')" 2
cap_start "$NS_B" xmp1 "$tmp/port.pcap" "udp port 4791"
mcsend "$G1" two
cap_stop
sleep 0.2
check_eq "restart_mcast: after: the QP member gets its copy (through the replication port)" \
	"$(polled)" "['two']"
check_eq "restart_mcast: after: the port gets its copy" "$(port_frames)" 1
check "restart_mcast: the replication port is back" ip -n "$NS_A" link show "$REP"
check_eq "restart_mcast: the QP's copies counted on" "$(mg "$G1" '[0]["copies"]')" 2

# without the state file, the groups in the maps are nobody's: removed
xhcad_stop TERM
rm -f "/run/xhca/$IF_A.state"
check "restart_mcast: xhcad starts without its state file" xhcad_start
check_eq "restart_mcast: no group kept, none left in xhca_mcast" \
	"$(xhca -j mcast show | json_get 'len(d["groups"])') $(bpftool -j map dump pinned "$PIN"/xhca_mcast | json_get 'len(d)')" \
	"0 0"
check "restart_mcast: and it says so" grep -q "removed 2 multicast groups of an earlier xhcad" "$XHCAD_LOG"
xhcad_stop
t_done
