#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The responder: RDMA READ and ATOMIC requests are executed by xhcad and
# answered through the AF_XDP TX ring; requests xhca_rx refuses on an RC QP
# are NAKed. Captured on the requester's side: the response data equals the
# region's bytes (1 byte to several MTUs), PSNs and the AETH's MSN are right,
# tshark dissects every frame and scapy accepts every ICRC. ATOMIC:
# fetch-and-add and compare-and-swap semantics, the exact sum of concurrent
# fetch-and-adds from two senders, a misaligned address NAKed.
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/respond
topo_setup || { fail "respond: topology"; t_done; }
tmp=$(mktemp -d)
XHCAD_LOG=$tmp/xhcad.log
trap 'kill $CAP 2>/dev/null; topo_cleanup; rm -rf "$tmp"' EXIT
CAP=

check "respond: xhcad starts" xhcad_start
IOVA=$((0x10000))
R=$(xhca -j mr reg --len 16384 --iova $IOVA \
	--access local-write,remote-write,remote-read,remote-atomic | json_get 'd["rkey"]')
RC=$(qp_up rc --epsn 0 --action host --dest-qpn 0x99 --mtu 1024)
xhca qp modify "$RC" --state rts >/dev/null
# the region's contents: a pattern, written by RDMA WRITE
gen --op rc-rdma-write-only --qpn "$RC" --psn 0 --msg-len 16384 --mtu 1024 --va $IOVA \
	--rkey "$R" --pattern 3
PSN=16

# the responses, as the requester's side sees them
cap() { cap_start "$NS_B" "$IF_B" "$tmp/cap.pcap" "udp port 4791 and src host $IP_A"; }
# decode: one line per response frame: opcode psn msn-or-syndrome payload-hex icrc-ok
decode() { "$SCAPY_PY" "$XHCA_TOP/tests/roce_resp.py" "$tmp/cap.pcap"; }
# xhcad sends a NAK when it hears of the error from xhca_rx's ring buffer
wait_naks() {
	for _ in $(seq 50); do
		[ "$(xhca -j status | json_get 'd["naks"]')" -ge "$1" ] && break
		sleep 0.05
	done
}
mr_hex() { xhca mr read "$R" --offset "$1" --len "$2" --out - | od -An -tx1 -v | tr -d ' \n'; }
u64() { printf %u "$(($1))"; }   # 64-bit unsigned sums, as the ATOMICs do
u64le() { xhca mr read "$R" --offset "$1" --len 8 --out - | od -An -tu8 | tr -d ' '; }

# --- READ, 1 byte to several MTUs -----------------------------------------------
cap
want=
for c in 0:1 100:1024 2000:1025 4095:5000; do
	off=${c%%:*} len=${c##*:}
	gen --op rc-read-req --qpn "$RC" --psn "$PSN" --va $((IOVA + off)) --rkey "$R" --reth-len "$len"
	PSN=$((PSN + (len + 1023) / 1024))
done
cap_stop
decode >"$tmp/read"
check_eq "respond: READ: ONLY; ONLY; FIRST LAST; FIRST MIDDLE x3 LAST (by MTU)" \
	"$(awk '{print $1}' "$tmp/read" | tr '\n' ' ')" \
	"0x10 0x10 0xd 0xf 0xd 0xe 0xe 0xe 0xf "
check_eq "respond: READ: each response to the QP's remote QPN, PSNs from the request's on" \
	"$(awk '{print $2 ":" $3}' "$tmp/read" | tr '\n' ' ')" \
	"153:16 153:17 153:18 153:19 153:20 153:21 153:22 153:23 153:24 "
check_eq "respond: READ: AETH on ONLY, FIRST and LAST: ACK, the MSN after each READ" \
	"$(awk '{print $4}' "$tmp/read" | tr '\n' ' ')" \
	"1f000002 1f000003 1f000004 1f000004 1f000005 - - - 1f000005 "
check_eq "respond: READ: every ICRC is valid" "$(awk '{print $6}' "$tmp/read" | sort -u)" True
got=$(awk 'NR==1{print $5 > "/dev/stderr"} NR==2{a=$5} NR==3||NR==4{b=b $5} NR>=5{c=c $5} END{print a; print b; print c}' "$tmp/read" 2>"$tmp/r1")
check_eq "respond: READ of 1 byte: the region's byte" "$(cat "$tmp/r1")" "$(mr_hex 0 1)"
check_eq "respond: READ of 1024, 1025 and 5000 bytes: the region's bytes, in order" \
	"$got" "$(mr_hex 100 1024)
$(mr_hex 2000 1025)
$(mr_hex 4095 5000)"
check_eq "respond: tshark dissects the responses, nothing malformed" \
	"$(tshark -n -r "$tmp/cap.pcap" -d udp.port==4791,infiniband -T fields -e infiniband.bth.opcode -e _ws.malformed 2>/dev/null | tr '\n\t' ' :')" \
	"16: 16: 13: 15: 13: 14: 14: 14: 15: "

# --- ATOMIC ---------------------------------------------------------------------
v0=$(u64le 8)
cap
atomic_trio "$RC" "$PSN" $((IOVA + 8)) "$R" "$v0"
PSN=$((PSN + 3))
cap_stop
decode >"$tmp/atomic"
orig() { sed -n "$1p" "$tmp/atomic" | "$SCAPY_PY" -c 'import sys; print(int(sys.stdin.read().split()[4], 16))'; }
check_eq "respond: ATOMIC ACKs with the PSNs, valid ICRCs" \
	"$(awk '{print $1 ":" $3 ":" $6}' "$tmp/atomic" | tr '\n' ' ')" \
	"0x12:$((PSN - 3)):True 0x12:$((PSN - 2)):True 0x12:$((PSN - 1)):True "
check_eq "respond: FETCH_ADD returns the old value and adds" "$(orig 1)" "$v0"
check_eq "respond: CMP_SWAP that matches returns the old value and swaps" "$(orig 2)" "$(u64 "v0 + 5")"
check_eq "respond: CMP_SWAP that does not match returns the value and leaves it" \
	"$(orig 3) $(u64le 8)" "$((0x1122334455667788)) $((0x1122334455667788))"

# Concurrent fetch-and-adds from two senders (two QPs): the exact sum. Each
# sender paced, as a requester with a few ATOMICs outstanding (max_rd_atomic)
# is: a burst of thousands would overrun the flow queue, and an RC QP that
# loses a request stops until retransmission (issue 7) exists.
RC2=$(qp_up rc --epsn 0 --action host --dest-qpn 0x98)
xhca qp modify "$RC2" --state rts >/dev/null
v0=$(u64le 256)
gen --op rc-fetch-add --qpn "$RC" --psn "$PSN" --va $((IOVA + 256)) --rkey "$R" --swap-add 1 \
	--count 1000 --rate 2000 &
g1=$!
gen --op rc-fetch-add --qpn "$RC2" --psn 0 --va $((IOVA + 256)) --rkey "$R" --swap-add 3 \
	--count 1000 --rate 2000 &
g2=$!
wait $g1 $g2
PSN=$((PSN + 1000))
for _ in $(seq 50); do [ "$(u64le 256)" = "$(u64 "v0 + 4000")" ] && break; sleep 0.1; done
check_eq "respond: 1000 x +1 and 1000 x +3 from two senders at once: the exact sum" \
	"$(u64le 256)" "$(u64 "v0 + 4000")"
check_eq "respond: both QPs took every request in order" \
	"$(xhca -j qp show "$RC" | json_get 'd["qps"][0]["epsn"]') $(xhca -j qp show "$RC2" | json_get 'd["qps"][0]["epsn"]')" \
	"$PSN 1000"

# --- NAKs -------------------------------------------------------------------------
cap
gen --op rc-fetch-add --qpn "$RC" --psn "$PSN" --va $((IOVA + 4)) --rkey "$R" --swap-add 1
wait_naks 1
cap_stop
check_eq "respond: a misaligned ATOMIC: NAK invalid request (AETH 0x61) at its PSN" \
	"$(decode | awk '{print $1, $3, substr($4, 1, 2), $6}')" "0x11 $PSN 61 True"
for _ in $(seq 20); do [ "$(xhca -j qp show "$RC" | json_get 'd["qps"][0]["state"]')" = err ] && break; sleep 0.05; done
check_eq "respond: and the QP is in the error state" \
	"$(xhca -j qp show "$RC" | json_get 'd["qps"][0]["state"]')" err
cap
gen --op rc-rdma-write-only --qpn "$RC2" --psn 1000 --size 8 --va $((IOVA + 20000)) --rkey "$R"
wait_naks 2
cap_stop
check_eq "respond: a WRITE past the region: NAK remote access error (AETH 0x62)" \
	"$(decode | awk '{print $1, $3, substr($4, 1, 2)}')" "0x11 1000 62"
check_eq "respond: status counts the NAKs" "$(xhca -j status | json_get 'd["naks"]')" 2
t_done
