#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The requester's less travelled paths between two xhca hosts, each seen
# where it shows (xhca-rctest paths, driven through its pauses):
# - FENCE: a SEND behind a 128 KiB READ leaves after the READ's last response
#   came with it; without it, it leaves behind the READ's requests with the
#   link cut, while no response can come (the captures' order; rctest checks
#   that with FENCE b gets the SEND after a completed the READ);
# - SOLICITED: the SE bit on the wire, in that request's packet only;
# - max_rd_atomic: with 1, never two READ requests on the wire at once (the
#   capture, request by request); with 16, several;
# - BAD_RESP_ERR: a NAK with a code RC has no use for (0x64), injected into a
#   cut link from the middle, completes the request with the syndrome in
#   vendor_err, flushes the next, the QP in error;
# - a READ's buffer freed by the application before the READ's response
#   came: LOC_PROT_ERR, xhcad goes on.
. "$(dirname "$0")/../lib.sh"
need_root "rc_paths"
two_hosts rc_paths 64

rct_start "$tmp" paths
rct_pause 1 || fail "rc_paths: pause 1"
# the capture at M's port sees A's frames before the cut (tc ingress) drops them
impair_start --drop 100 || fail "rc_paths: cut the link"
cap_start "$NS_M" "$MA" "$tmp/plain.pcap" "udp port 4791" -s 128
rct_go
rct_pause 2 || fail "rc_paths: pause 2"
sleep 0.3
cap_stop
impair_stop
cap_start "$NS_M" "$MA" "$tmp/fence.pcap" "udp port 4791" -s 128
rct_go
rct_pause 3 || fail "rc_paths: pause 3"
cap_stop
cap_start "$NS_M" "$MA" "$tmp/one.pcap" "udp port 4791" -s 128
rct_go
rct_pause 4 || fail "rc_paths: pause 4"
cap_stop
cap_start "$NS_M" "$MA" "$tmp/many.pcap" "udp port 4791" -s 128
rct_go
rct_pause 5 || fail "rc_paths: pause 5"
cap_stop
impair_start --drop 100 || fail "rc_paths: cut the link"
rct_go
rct_pause 6 || fail "rc_paths: pause 6"
read -r _ _ _ qpn _ psn < <(grep '^# inject' "$RCT_OUT")
out=$(nsenter --net=/run/netns/"$NS_M" "$B/xhca-gen" -i "$MA" --dst-mac "$MAC_A" --src "$IP_B" \
	--dst "$IP_A" --op rc-ack --qpn "$qpn" --psn "$psn" --aeth 0x64 2>&1)
check "rc_paths: the NAK injected from the middle ($out)" test $? = 0
rct_go
rct_pause 7 || fail "rc_paths: pause 7"
impair_stop
rct_go
rct_end rc_paths 12
check "rc_paths: xhcad on $IF_A answers after a READ's response found its buffer freed" \
	bash -c "'$B/xhca' -i '$IF_A' status >/dev/null"

tshark_roce_init
# READ then SEND: READ requests (12) from A, the responses (13-16) from B,
# the SEND ONLY (4) from A. Without FENCE, the link cut: the READ's
# requests, then the SEND (with a timeout under the cut's length, the
# same again); with FENCE, the READ responses on the wire after the SEND.
plain=$("${TSHARK_ROCE[@]}" -r "$tmp/plain.pcap" -T fields -e infiniband.bth.opcode 2>/dev/null |
	tr '\n' ' ')
check "without FENCE, no response possible, the SEND is on the wire behind the READ's requests ($plain)" \
	grep -Eq '^(12 )+4 ' <<<"$plain"
after_fence=$("${TSHARK_ROCE[@]}" -r "$tmp/fence.pcap" -T fields -e infiniband.bth.opcode \
	2>/dev/null | awk '$1 == 4 { s = 1 } $1 >= 13 && $1 <= 16 && s { n++ } END { print s ? n + 0 : "none" }')
check_eq "with FENCE the SEND is on the wire after the READ's last response (responses after it)" \
	"$after_fence" 0
se=$("${TSHARK_ROCE[@]}" -r "$tmp/one.pcap" -Y "infiniband.bth.se == 1" -T fields \
	-e infiniband.bth.opcode 2>/dev/null | tr '\n' ' ')
check_eq "SOLICITED: one packet with SE set, the SEND ONLY of that request" "$se" "4 "
# most READ requests (opcode 12, from A) on the wire at once: one more with
# each, one less with each response LAST or ONLY (15, 16) that ends one
most() {
	"${TSHARK_ROCE[@]}" -r "$1" -T fields -e infiniband.bth.opcode 2>/dev/null |
		awk '$1 == 12 { n++; if (n > m) m = n } $1 == 15 || $1 == 16 { n-- } END { print m + 0 }'
}
m1=$(most "$tmp/one.pcap")
m16=$(most "$tmp/many.pcap")
check_eq "max_rd_atomic 1: at most one READ request on the wire at a time" "$m1" 1
check "max_rd_atomic 16: several at once ($m16), the same READs" test "$m16" -gt 1
t_done
