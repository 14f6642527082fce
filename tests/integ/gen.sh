#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# xhca-gen, the load source: what it sends arrives, as many frames as it says,
# in PSN order, paced and timed as asked, with ICRCs scapy accepts on the wire
# (the XDP half rewrites PSN and ICRC per frame); every bad option is exit 2
# with one line naming it, and sends nothing.
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/gen
topo_setup || { fail "gen: topology"; t_done; }
tmp=$(mktemp -d)
snap=$tmp/snap
trap 'kill $CAP 2>/dev/null; topo_cleanup; rm -rf "$tmp"' EXIT
CAP=
GEN=$B/xhca-gen

# --- live frames on the wire, before any XDP program: scapy checks them ---
cap_start "$NS_A" "$IF_A" "$tmp/wire.pcap" "udp dst port 4791" -c 70
gen --op rc-send-only --qpn 0x33 --psn 0xffffd0 --count 64 --size 40
gen --op ud-send-only --qpn 0x44 --qkey 7 --psn 5 --psn-step 3 --count 3 --size 9,300
wait "$CAP"
out=$("$SCAPY_PY" - "$tmp/wire.pcap" <<'PY'
import logging, sys
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.all import Ether, raw, rdpcap
from scapy.contrib.roce import BTH
frames = [Ether(raw(f)) for f in rdpcap(sys.argv[1])]
rc = [p for p in frames if p[BTH].dqpn == 0x33]
ud = [p for p in frames if p[BTH].dqpn == 0x44]
def icrc_ok(p):
    q = p.copy(); q[BTH].icrc = None
    return raw(q)[-4:] == raw(p)[-4:]
want_rc = [(0xffffd0 + i) & 0xffffff for i in range(64)]
print("rc", len(rc), [p[BTH].psn for p in rc] == want_rc, all(icrc_ok(p) for p in rc))
print("ud", len(ud), [p[BTH].psn for p in ud] == [5, 8, 11, 14, 17, 20],
      [len(raw(p[BTH])) - 12 - 8 - 4 - p[BTH].padcount for p in ud] == [9] * 3 + [300] * 3,
      all(icrc_ok(p) for p in ud))
PY
)
check_eq "gen: 64 RC SENDs across the PSN wrap arrive in order, ICRCs valid" \
	"$(sed -n 1p <<<"$out")" "rc 64 True True"
check_eq "gen: --psn-step 3 and --size 9,300: PSNs, sizes and ICRCs" \
	"$(sed -n 2p <<<"$out")" "ud 6 True True True"

# --- counted by xhca_rx ---
check "gen: xhcad starts" xhcad_start
RC=$(qp_up rc --epsn 0xfffff0 --action drop)
UD=$(QP_CREATE_ARGS="--qkey 9" qp_up ud --action drop)
stats_snap "$snap"
out=$(in_b "$GEN" -i "$IF_B" --dst-mac "$MAC_A" --src "$IP_B" --dst "$IP_A" -j --op rc-send-only \
	--qpn "$RC" --psn 0xfffff0 --count 5000 --size 256)
check_eq "gen: reports 5000 sent" "$(json_get 'd["sent"]' <<<"$out")" 5000
check_eq "gen: reports the last PSN" "$(json_get 'd["psn_last"]' <<<"$out")" $(( (0xfffff0 + 4999) & 0xffffff ))
sleep 0.2
check_eq "gen: 5000 accepted in sequence" "$(stats_delta "$snap" accept_drop)" 5000
check_eq "gen: ePSN followed the sequence across 2^24" \
	"$(xhca -j qp show "$RC" | json_get 'd["qps"][0]["epsn"]')" $(( (0xfffff0 + 5000) & 0xffffff ))
check_eq "gen: nothing dropped" "$(stats_changed "$snap")" "accept_drop"

# --rate paces: 300 frames at 1000/s take about 0.3 s
stats_snap "$snap"
t0=$(date +%s%N)
gen --op ud-send-only --qpn "$UD" --qkey 9 --psn-step 0 --count 300 --rate 1000
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "gen: --rate 1000 --count 300 took ${ms} ms (250..2000)" test "$ms" -ge 250 -a "$ms" -le 2000
sleep 0.1
check_eq "gen: paced frames all arrive" "$(stats_delta "$snap" accept_drop)" 300
# --duration bounds the run by time
stats_snap "$snap"
out=$(in_b "$GEN" -i "$IF_B" --dst-mac "$MAC_A" -j --op ud-send-only --qpn "$UD" --qkey 9 \
	--psn-step 0 --duration 0.5 --rate 20000)
secs=$(json_get 'd["seconds"]' <<<"$out"); sent=$(json_get 'd["sent"]' <<<"$out")
check "gen: --duration 0.5 ran ${secs} s" "$SCAPY_PY" -c "import sys; sys.exit(not 0.45 <= $secs <= 1.0)"
check "gen: --duration 0.5 at 20000/s sent ${sent} (8000..11000)" test "$sent" -ge 8000 -a "$sent" -le 11000
sleep 0.1
check_eq "gen: every frame of the duration run counted" "$(stats_delta "$snap" accept_drop)" "$sent"
# tagged and IPv6 frames
stats_snap "$snap"
gen --op ud-send-only --qpn "$UD" --qkey 9 --count 7 --vlan 10,20
gen --op ud-send-only --qpn "$UD" --qkey 9 --count 3 --src "$IP6_B" --dst "$IP6_A"
sleep 0.1
check_eq "gen: QinQ and IPv6 frames accepted" "$(stats_delta "$snap" accept_drop)" 10
# --va-step walks the RETH VA (rewritten in XDP with the ICRC): ten WRITEs
# land 100 bytes apart in a pre-translated region
UQ=$(qp_up uc --action host)
R=$(xhca -j mr reg --len 4096 | json_get 'd["rkey"]')
stats_snap "$snap"
gen --op uc-rdma-write-only --qpn "$UQ" --psn-step 0 --count 10 --size 60 --rkey "$R" --va 0 \
	--va-step 100 --va-span 1000
sleep 0.1
check_eq "gen: --va-step: ten WRITEs placed" "$(stats_changed "$snap")" placed
xhca mr read "$R" --len 4096 --out "$tmp/va.bin"
check_eq "gen: --va-step: at 0, 100, ..., 900, nothing between" "$("$SCAPY_PY" - "$tmp/va.bin" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
want = bytearray(4096)
for k in range(10):
    want[k * 100:k * 100 + 60] = bytes(i & 0xff for i in range(60))
print(d == bytes(want))
PY
)" True
xhcad_stop TERM

# --msg-len: a whole message, split by the MTU, the pattern across packets
"$GEN" --pcap "$tmp/msg.pcap" --op rc-rdma-write-only --qpn 0x55 --psn 0xfffffe --msg-len 2500 \
	--mtu 1024 --va 0x1000 --rkey 0x1234 --pattern 9 --count 2 >/dev/null
check_eq "gen: --msg-len 2500 --mtu 1024 twice: FIRST/MIDDLE/LAST, PSNs on, RETH, pattern, ICRCs" \
	"$("$SCAPY_PY" - "$tmp/msg.pcap" <<'PY'
import logging, sys
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.all import Ether, raw, rdpcap
from scapy.contrib.roce import BTH
ps = [Ether(raw(f)) for f in rdpcap(sys.argv[1])]
ops = [p[BTH].opcode for p in ps]
psns = [p[BTH].psn for p in ps]
def payload(p):
    b = raw(p[BTH])
    hl = 12 + (16 if p[BTH].opcode in (6, 10) else 0)
    return b[hl:len(b) - 4 - p[BTH].padcount]
def reth(p):
    b = raw(p[BTH])[12:28]
    return int.from_bytes(b[:8], "big"), int.from_bytes(b[8:12], "big"), int.from_bytes(b[12:], "big")
def icrc_ok(p):
    q = p.copy(); q[BTH].icrc = None
    return raw(q)[-4:] == raw(p)[-4:]
msg = b"".join(payload(p) for p in ps[:3])
pat = bytes((9 * 0x9e + k + (k >> 8) * 3 + (k >> 16) * 5) & 0xff for k in range(2500))
print(ops == [6, 7, 8] * 2, psns == [0xfffffe, 0xffffff, 0, 1, 2, 3], reth(ps[0]) == (0x1000, 0x1234, 2500),
      msg == pat, all(icrc_ok(p) for p in ps))
PY
)" "True True True True True"

# --aeth SYN:MSN: an ACK's AETH as given (tshark reads it back)
"$GEN" --pcap "$tmp/aeth.pcap" --op rc-ack --qpn 5 --psn 7 --aeth 0x64:0x123456 >/dev/null
tshark_roce_init
check_eq "gen: --aeth 0x64:0x123456: a NAK with that syndrome (100) and MSN" \
	"$("${TSHARK_ROCE[@]}" -r "$tmp/aeth.pcap" -T fields -e infiniband.aeth.syndrome \
		-e infiniband.aeth.msn 2>/dev/null | tr '\t' ' ')" "100 1193046"

# --- bad usage: exit 2, one line on stderr that names the problem, nothing sent ---
# bad NAME WANT-EXIT REGEX ARGS...
bad() {
	local name=$1 want=$2 re=$3; shift 3
	local rc
	in_b "$GEN" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" != "$want" ]; then
		fail "gen: $name: exit $rc, want $want [$(head -c 200 "$tmp/err")]"
	elif [ "$(wc -l <"$tmp/err")" != 1 ] || ! grep -Eq -e "$re" "$tmp/err"; then
		fail "gen: $name: stderr is not one line matching /$re/: $(head -c 300 "$tmp/err")"
	elif [ -s "$tmp/out" ]; then
		fail "gen: $name: stdout not empty"
	else
		pass "gen: $name"
	fi
}
I=(-i "$IF_B" --dst-mac "$MAC_A")
before=$(in_a ip -s -j link show "$IF_A" | json_get 'd[0]["stats64"]["rx"]["packets"]')
bad "no destination" 2 "nowhere to send" --op rc-send-only --qpn 5
bad "-i and --pcap" 2 "exclude each other" "${I[@]}" --pcap "$tmp/x.pcap" --op rc-send-only --qpn 5
bad "no opcode" 2 "no opcode" "${I[@]}" --qpn 5
bad "unknown opcode" 2 "--op 'rc-sned'" "${I[@]}" --op rc-sned --qpn 5
bad "opcode over 255" 2 "--op '256'" "${I[@]}" --op 256 --qpn 5
bad "no QPN" 2 "no destination QPN" "${I[@]}" --op rc-send-only
bad "QPN over 24 bits" 2 "--qpn 0x1000000 is out of range" "${I[@]}" --op rc-send-only --qpn 0x1000000
bad "negative count" 2 "--count '-1' is not a number" "${I[@]}" --op rc-send-only --qpn 5 --count -1
bad "count 0" 2 "--count 0 sends nothing" "${I[@]}" --op rc-send-only --qpn 5 --count 0
bad "count and duration" 2 "exclude each other" "${I[@]}" --op rc-send-only --qpn 5 --count 3 --duration 1
bad "duration to a file" 2 "--duration needs -i" --pcap "$tmp/x.pcap" --op rc-send-only --qpn 5 --duration 1
bad "rate 0" 2 "--rate '0' is not a positive number" "${I[@]}" --op rc-send-only --qpn 5 --rate 0
bad "rate not a number" 2 "--rate 'fast'" "${I[@]}" --op rc-send-only --qpn 5 --rate fast
bad "PSN over 24 bits" 2 "--psn 16777216 is out of range" "${I[@]}" --op rc-send-only --qpn 5 --psn 16777216
bad "size over the maximum" 2 "--size 10000 is out of range" "${I[@]}" --op rc-send-only --qpn 5 --size 10000
bad "empty size list" 2 "--size ',' has no size" "${I[@]}" --op rc-send-only --qpn 5 --size ,
bad "sizes for an ACK" 2 "carries no payload" "${I[@]}" --op rc-ack --qpn 5 --size 1,2
bad "frame over the link MTU (sent from a packet socket: over a page)" 2 "exceeds its MTU" "${I[@]}" --op rc-send-only --qpn 5 --size 9000
bad "bad MAC" 2 "--dst-mac 'zz'" -i "$IF_B" --dst-mac zz --op rc-send-only --qpn 5
bad "bad IP" 2 "--src '10.1'" "${I[@]}" --op rc-send-only --qpn 5 --src 10.1
bad "mixed address families" 2 "different families" "${I[@]}" --op rc-send-only --qpn 5 --src fd77::2 --dst 10.77.0.1
bad "three VLAN tags" 2 "more than two tags" "${I[@]}" --op rc-send-only --qpn 5 --vlan 1,2,3
bad "VLAN 4096" 2 "--vlan 4096 is out of range" "${I[@]}" --op rc-send-only --qpn 5 --vlan 4096
bad "pad 4" 2 "--pad 4 is out of range" "${I[@]}" --op rc-send-only --qpn 5 --pad 4
bad "TVer 16" 2 "--tver 16 is out of range" "${I[@]}" --op rc-send-only --qpn 5 --tver 16
bad "source port 0" 2 "--sport 0" "${I[@]}" --op rc-send-only --qpn 5 --sport 0
bad "batch over 256" 2 "--batch 257 is out of range" "${I[@]}" --op rc-send-only --qpn 5 --batch 257
bad "unknown option" 2 "unknown option '--frobnicate'" "${I[@]}" --op rc-send-only --qpn 5 --frobnicate
bad "option without its value" 2 "needs a value" "${I[@]}" --op rc-send-only --qpn
bad "stray argument" 2 "unexpected argument 'extra'" "${I[@]}" --op rc-send-only --qpn 5 extra
bad "msg-len 0" 2 "--msg-len 0" "${I[@]}" --op rc-rdma-write-only --qpn 5 --msg-len 0
bad "msg-len of an ACK" 2 "--msg-len: --op must be a SEND or WRITE ONLY opcode" "${I[@]}" --op rc-ack --qpn 5 --msg-len 10
bad "msg-len of a FIRST" 2 "must be a SEND or WRITE ONLY" "${I[@]}" --op rc-send-first --qpn 5 --msg-len 10
bad "msg-len with duration" 2 "--msg-len excludes" "${I[@]}" --op rc-send-only --qpn 5 --msg-len 10 --duration 1
bad "UD message over the MTU" 2 "a UD message is one packet" "${I[@]}" --op ud-send-only --qpn 5 --msg-len 2000
bad "MTU 300" 2 "--mtu 300: give 256" "${I[@]}" --op rc-send-only --qpn 5 --msg-len 10 --mtu 300
bad "va-step without span" 2 "--va-step and --va-span go together" "${I[@]}" --op rc-rdma-write-only --qpn 5 --va-step 8
bad "va-step of a SEND" 2 "--va-step: RC_SEND_ONLY has no RETH" "${I[@]}" --op rc-send-only --qpn 5 --va-step 8 --va-span 64
bad "va-span carrying out of 32 bits" 2 "must not carry" "${I[@]}" --op rc-rdma-write-only --qpn 5 --va 0xfffffff0 --va-step 8 --va-span 64
bad "unknown interface" 2 "interface 'nosuch0' not found" -i nosuch0 --op rc-send-only --qpn 5
bad "no neighbour entry" 2 "no neighbour entry for 10.77.0.99" -i "$IF_B" --op rc-send-only --qpn 5 --dst 10.77.0.99
in_b ip link set "$IF_B" down
bad "interface down" 1 "is down" "${I[@]}" --op rc-send-only --qpn 5
bad "interface down, --msg-len" 1 "is down" "${I[@]}" --op rc-send-only --qpn 5 --msg-len 100
in_b ip link set "$IF_B" up
bad "AETH syndrome over 8 bits" 2 "--aeth" "${I[@]}" --op rc-ack --qpn 5 --aeth 0x100
bad "AETH MSN over 24 bits" 2 "--aeth" "${I[@]}" --op rc-ack --qpn 5 --aeth 0:0x1000000
bad "AETH not a number" 2 "--aeth" "${I[@]}" --op rc-ack --qpn 5 --aeth x
bad "AETH of a SEND" 2 "--aeth: RC_SEND_ONLY has no AETH" "${I[@]}" --op rc-send-only --qpn 5 --aeth 0x60
bad "unwritable pcap" 1 "cannot create /nonexistent/x.pcap" --pcap /nonexistent/x.pcap --op rc-send-only --qpn 5
after=$(in_a ip -s -j link show "$IF_A" | json_get 'd[0]["stats64"]["rx"]["packets"]')
# IPv6 neighbour discovery may pass by when the link comes back up.
check "gen: bad usage sent no RoCE frame ($before -> $after packets)" test $((after - before)) -le 4
t_done
