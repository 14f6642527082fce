#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# xhcad attached on a veth: RoCEv2 from xhca-gen and scapy is checked against
# the counters, and ping, TCP and other UDP keep working through the program.
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/traffic
topo_setup || { fail "traffic: topology"; t_done; }
snap=$(mktemp)
trap 'topo_cleanup; rm -f "$snap"' EXIT

check "traffic: xhcad starts and attaches" xhcad_start
id=$(xdp_prog_id "$NS_A" "$IF_A")
check_eq "traffic: status shows the attached program" \
	"$(xhca -j status | json_get 'd["prog_id"]')" "${id:-none}"
for m in xhca_qp_cam xhca_qp_ctx xhca_stats xhca_qp_stats xhca_pkeys; do
	check "traffic: map $m pinned" test -e /sys/fs/bpf/xhca/"$IF_A"/$m
done

RC=$(qp_up rc --epsn 0 --action drop)
UD=$(QP_CREATE_ARGS="--qkey 0x11111111" qp_up ud --action drop)
UC=$(qp_up uc --action drop)
check "traffic: QPs created" test -n "$RC" -a -n "$UD" -a -n "$UC"

# --- the host stack keeps working ---
stats_snap "$snap"
check "traffic: ping through xhca_rx" in_b ping -c 3 -i 0.2 -W 2 -q "$IP_A" >/dev/null
check "traffic: ping6 through xhca_rx" in_b ping -6 -c 2 -i 0.2 -W 2 -q "$IP6_A" >/dev/null
n=$(stats_delta "$snap" pass_not_roce)
check "traffic: pings counted as pass_not_roce ($n)" test "$n" -ge 5
tcp_out=$(mktemp)
in_a timeout 10 python3 -c '
import socket,sys
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("'"$IP_A"'", 7777)); s.listen(1); c,_=s.accept()
sys.stdout.write(c.recv(100).decode()); c.sendall(b"pong")' >"$tcp_out" &
srv=$!
sleep 0.5
reply=$(in_b timeout 5 python3 -c '
import socket; s=socket.create_connection(("'"$IP_A"'", 7777), timeout=3)
s.sendall(b"ping-tcp"); print(s.recv(100).decode())')
wait $srv
check_eq "traffic: TCP request through xhca_rx" "$(cat "$tcp_out")" "ping-tcp"
check_eq "traffic: TCP reply" "$reply" "pong"
in_a timeout 10 python3 -c '
import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("'"$IP_A"'", 4792)); s.settimeout(5); print(s.recv(100).decode())' >"$tcp_out" &
srv=$!
sleep 0.5
in_b python3 -c '
import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"udp-ok", ("'"$IP_A"'", 4792))'
wait $srv
check_eq "traffic: UDP to another port through xhca_rx" "$(cat "$tcp_out")" "udp-ok"
rm -f "$tcp_out"

# --- RoCEv2 from xhca-gen: each case moves exactly its reason ---
# expect NAME REASON COUNT GEN-ARGS...
expect() {
	local name=$1 reason=$2 want=$3; shift 3
	stats_snap "$snap"
	gen "$@"
	sleep 0.2
	check_eq "traffic: $name: $reason +$want" "$(stats_delta "$snap" "$reason")" "$want"
	check_eq "traffic: $name: only $reason moved" "$(stats_changed "$snap" "$reason")" "$reason"
}
expect "RC SEND in sequence" accept_drop 100 --op rc-send-only --qpn "$RC" --psn 0 --count 100 --size 200
check_eq "traffic: RC ePSN advanced to 100" "$(xhca -j qp show "$RC" | json_get 'd["qps"][0]["epsn"]')" 100
check_eq "traffic: RC per-QP accepted" "$(xhca -j qp show "$RC" | json_get 'd["qps"][0]["accepted"]')" 100
expect "RC duplicates" drop_psn_dup 10 --op rc-send-only --qpn "$RC" --psn 50 --count 10
expect "RC PSN gap" drop_psn_oos 5 --op rc-send-only --qpn "$RC" --psn 300 --psn-step 0 --count 5
expect "RC RDMA WRITE" accept_drop 4 --op rc-write-only --qpn "$RC" --psn 100 --count 4 --reth-len 64 --size 64
expect "RC READ request (8 responses)" accept_drop 1 --op rc-read-req --qpn "$RC" --psn 104 --count 1 --reth-len 8192
check_eq "traffic: READ advanced ePSN by 8" "$(xhca -j qp show "$RC" | json_get 'd["qps"][0]["epsn"]')" 112
expect "UD SEND" accept_drop 50 --op ud-send-only --qpn "$UD" --qkey 0x11111111 --psn-step 0 --count 50
expect "UD bad Q_Key" drop_qkey 3 --op ud-send-only --qpn "$UD" --qkey 0x22222222 --count 3
expect "UC FIRST" accept_drop 1 --op uc-send-first --qpn "$UC" --psn 0 --count 1 --size 1024
expect "UC MIDDLE in order" accept_drop 1 --op uc-send-middle --qpn "$UC" --psn 1 --count 1 --size 1024
expect "UC gap drops the message" drop_uc_gap 3 --op uc-send-middle --qpn "$UC" --psn 5 --count 3 --size 1024
expect "UC next message resyncs" accept_drop 1 --op uc-send-only --qpn "$UC" --psn 9 --count 1
expect "unknown QPN" drop_cam_miss 7 --op rc-send-only --qpn 0xabcdef --count 7
expect "QP0" drop_qp0 2 --op rc-send-only --qpn 0 --count 2
expect "multicast QPN to a unicast address" drop_mcast_addr 2 --op ud-send-only --qpn 0xffffff --count 2
expect "multicast QPN, no such group" drop_mcast_group 2 --op ud-send-only --qpn 0xffffff --dst 239.7.7.7 --count 2
expect "bad P_Key" drop_pkey 4 --op rc-send-only --qpn "$RC" --psn 112 --pkey 0x8001 --count 4
expect "opcode/type mismatch" drop_opcode_type 2 --op ud-send-only --qpn "$RC" --count 2
expect "unknown opcode" drop_unknown_opcode 2 --op 0x18 --qpn "$RC" --count 2
expect "TVer 1" drop_bad_tver 2 --op rc-send-only --qpn "$RC" --tver 1 --count 2
expect "IPv6 to an IPv4 QP" drop_addr 2 --op rc-send-only --qpn "$RC" --psn 112 --src "$IP6_B" --dst "$IP6_A" --count 2

# --- scapy: malformed frames built independently of our builder ---
scapy_send() {
	in_b "$SCAPY_PY" - "$IF_B" "$MAC_A" "$MAC_B" "$IP_A" "$IP_B" "$1" <<'PY'
import sys
from scapy.all import Ether, IP, UDP, Raw, sendp, conf
conf.verb = 0
ifc, da, sa, dip, sip, what = sys.argv[1:7]
base = Ether(dst=da, src=sa) / IP(dst=dip, src=sip)
frames = {
    # BTH cut after 6 bytes, UDP length matching what is there
    "short_bth": base / UDP(sport=49152, dport=4791) / Raw(b"\x04\x00\xff\xff\x00\x00"),
    # a whole RC SEND_ONLY header but the UDP length claims 40 more bytes
    "udp_len_long": base / UDP(sport=49152, dport=4791, len=8 + 12 + 4 + 40) /
                    Raw(b"\x04\x00\xff\xff\x00\x00\x00\x02\x00\x00\x00\x00" + b"\x00" * 4),
    "opcode_ff_mcast": base / UDP(sport=49152, dport=4791) /
                    Raw(b"\xff\x00\xff\xff\x00\xff\xff\xff\x00\x00\x00\x00" + b"\x00" * 24),
}
sendp(frames[what], iface=ifc)
PY
}
sexpect() {
	stats_snap "$snap"
	scapy_send "$1"
	sleep 0.2
	check_eq "traffic: scapy $1: $2 +1" "$(stats_delta "$snap" "$2")" 1
	check_eq "traffic: scapy $1: only $2 moved" "$(stats_changed "$snap" "$2")" "$2"
}
sexpect short_bth drop_truncated
sexpect udp_len_long drop_truncated
sexpect opcode_ff_mcast drop_unknown_opcode

# --- action pass: accepted packets go to the kernel ---
xhca qp modify "$UD" --action pass >/dev/null
expect "UD action pass" accept_pass 5 --op ud-send-only --qpn "$UD" --qkey 0x11111111 --psn-step 0 --count 5

# --- destroy: the QPN misses the CAM at once, the slot is reusable ---
xhca qp destroy "$UD" >/dev/null
expect "destroyed UD QP" drop_cam_miss 3 --op ud-send-only --qpn "$UD" --qkey 0x11111111 --count 3
check "traffic: xhcad still running" kill -0 "$XHCAD_PID"
xhcad_stop TERM
check_eq "traffic: xhcad exits 0 on SIGTERM" "$XHCAD_RC" 0
check_eq "traffic: SIGTERM detaches the program" "$(xdp_prog_id "$NS_A" "$IF_A")" ""
check "traffic: SIGTERM removes the pins" test ! -e /sys/fs/bpf/xhca/"$IF_A"/xhca_qp_cam
t_done
