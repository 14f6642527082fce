#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Two xhca hosts: an xhcad in each namespace (joined by a bridge in a third,
# where the traffic is captured), one application (xhca-rctest) with a
# session on each, QP pairs across. Scatter lists, unsignaled requests,
# SEND with invalidate, a full send CQ, multicast sends; every operation, size
# and path MTU of each QP type, both ways, with every byte checked; the NAK
# and error paths; a credit update and a probe; xhca_post_send's refusals; a capture of the traffic that
# tshark dissects without a malformed packet and whose every ICRC scapy
# computes the same. The link MTU is 4200: path MTU 4096 too (frames over
# one UMEM frame both ways: several AF_XDP descriptors, jumbo slots).

. "$(dirname "$0")/../lib.sh"
need_root "rc"
MID_MTU=4200 two_hosts rc 128
MiB=$((1 << 20))
timeouts() { "$B/xhca" -i "$IF_A" -j status | json_get 'd["requester"]["timeouts"]'; }

# Scatter lists, unsignaled requests (1100 through a queue of 1024: its
# slots come back), SEND with invalidate, a bad request in the raw ring, a
# send CQ of 2, a UD SEND to a multicast group (and one of 4096 bytes). Nothing is lost on a quiet
# link: no retransmission timer may go off (frames left in the TX ring once
# waited for one).
rct more 4k
check_eq "a burst of 1100 SENDs and the rest: no retransmission timeout" "$(timeouts)" 0
# (A's multicast SENDs: the group's members are on B, none on A's device,
# so each went to the wire only, counted)
check "A's multicast SENDs had no member on A: the wire's only, counted ($("$B/xhca" -i "$IF_A" -j status | json_get 'd["loopback"]["mcast_wire"]'))" \
	test "$("$B/xhca" -i "$IF_A" -j status | json_get 'd["loopback"]["mcast_wire"]')" -ge 2

# End-to-end credits: B's buffers used up, more posted; B's xhcad sends its
# last ACK again with the new count (a credit update) and A's requester
# takes it (xhca-rctest credits: the SENDs after it arrive intact).
st() { "$B/xhca" -i "$1" -j status | json_get "d['$2']['$3']"; }
ca0=$(st "$IF_B" responder credit_acks) cu0=$(st "$IF_A" requester credit_updates)
rct credits
ca=$(($(st "$IF_B" responder credit_acks) - ca0)) cu=$(($(st "$IF_A" requester credit_updates) - cu0))
check "credits: B's xhcad sent a credit update once its buffers were posted ($ca), A's took it ($cu)" \
	test "$ca" -ge 1 -a "$cu" -ge 1
# No credit left and too few buffers posted for an update: of A's 3
# SENDs in one list the first goes alone (the probe), the others wait for
# its ACK's count (xhca-rctest probe: all arrive).
cw0=$(st "$IF_A" requester credit_waits) rn0=$(st "$IF_A" requester rnr_naks)
rct probe
cw=$(($(st "$IF_A" requester credit_waits) - cw0)) rn=$(($(st "$IF_A" requester rnr_naks) - rn0))
check_eq "probe: A's requester held 2 SENDs once for the probe's ACK, no RNR NAK (waits, NAKs)" \
	"$cw $rn" "1 0"

cap_start "$NS_M" "$MA" "$tmp/rc.pcap" "udp port 4791" -s 256
rct ops rc 1024 1 255 1023 1024 1025 3077 65536 $((4 * MiB + 3))
cap_stop
rct ops rc 256 1 256 257 70000
rct ops rc 2048 2047 2048 2049 $((MiB + 1))
rct ops uc 1024 1 1024 1025 300000
rct ops uc 512 512 513
rct ops ud 1024 1 1000 1024
rct ops ud 2048 2048
rct ops rc 4096 1 4096 4097 12289 $((MiB + 7))
rct ops uc 4096 4096 4097 100000
rct ops ud 4096 1 4096
RCT_IP_A=$IP6_A RCT_IP_B=$IP6_B rct ops rc 1024 1 5000
RCT_IP_A=$IP6_A RCT_IP_B=$IP6_B rct ops ud 1024 100
RCT_IP_A=$IP6_A RCT_IP_B=$IP6_B rct ops rc 4096 4096 70000
RCT_IP_A=$IP6_A RCT_IP_B=$IP6_B rct ops ud 4096 4096
# A UD QP's SENDs go out as UDP GSO runs while it sends to one address; once
# it sends to a second, through the TX ring (a run would break at each). 36
# SENDs in one list: the TX ring is kicked at the 32nd frame, so the run of
# the first 12 must have gone before the 13th (rctest checks the order).
gso_a() { "$B/xhca" -i "$IF_A" -j status | json_get 'd["requester"]["gso_frames"]'; }
g0=$(gso_a)
rct ud2 "$IP6_B" 12
check_eq "UD to B, to B's IPv6 address, to B again: the first 12 as GSO runs, then the TX ring" \
	"$(($(gso_a) - g0))" 12
for side in "$IF_A" "$IF_B"; do
	check_eq "path MTU 4096 on $side: frames of two descriptors made one, none dropped" \
		"$("$B/xhca" -i "$side" -j status |
			json_get 'd["umem"]["jumbo_frames"] > 100, d["umem"]["jumbo_drops"]')" "True 0"
done
# IPv6 link-local: UD between the interfaces' fe80:: addresses. No neighbour
# entry for them: xhcad has the kernel resolve them on its own link (the
# address means nothing without it); the source is link-local too.
ll_of() { ip -n "$1" -6 addr show dev "$2" scope link | awk '/inet6/ {print $2}' | cut -d/ -f1; }
for _ in $(seq 50); do
	ip -n "$NS_A" -6 addr show dev "$IF_A" tentative | grep -q inet6 ||
		ip -n "$NS_B" -6 addr show dev "$IF_B" tentative | grep -q inet6 || break
	sleep 0.1
done
LL_A=$(ll_of "$NS_A" "$IF_A") LL_B=$(ll_of "$NS_B" "$IF_B")
RCT_IP_A=$LL_A RCT_IP_B=$LL_B rct ops ud 1024 1 1024
check "IPv6 link-local: the peer's neighbour entry resolved on the link ($LL_B)" \
	bash -c "ip -n '$NS_A' neigh show '$LL_B' dev '$IF_A' | grep -q lladdr"
rct errors
# (among xhca_post_send's refusals: path MTU 4096 over a smaller link)
ip -n "$NS_A" link set "$IF_A" mtu 3000
rct post
ip -n "$NS_A" link set "$IF_A" mtu 4200

# No neighbour entry for the peer: xhcad has the kernel resolve it (ARP
# through both XDP programs, which pass it) and sends once it is there.
ip -n "$NS_A" neigh del "$IP_B" dev "$IF_A"
sleep 1.1 # xhcad keeps what it looked up for a second
nn0=$("$B/xhca" -i "$IF_A" -j status | json_get 'd["requester"]["no_neigh"]')
rct ops rc 1024 100
nn1=$("$B/xhca" -i "$IF_A" -j status | json_get 'd["requester"]["no_neigh"]')
check "no neighbour entry: the sends waited for one ($nn0 -> $nn1 waits)" test "$nn1" -gt "$nn0"
check "no neighbour entry: the kernel resolved it meanwhile" \
	bash -c "ip -n '$NS_A' neigh show '$IP_B' dev '$IF_A' | grep -q lladdr"

# SENDs, WRITEs, READs and FETCH_ADDs pipelined both ways: each responder's
# ACKs (on the TX ring) and READ responses (--gso on: in GSO runs, READs of
# 3000 bytes at path MTU 1024) leave in PSN order, per QP: no frame behind
# one of a later PSN, but for an ACK that repeats the last ACK's (a credit
# update is the last ACK sent again).
tshark_roce_init
g0=$(st "$IF_B" responder gso_frames)
cap_start "$NS_M" "$MA" "$tmp/mix.pcap" "udp port 4791" -s 96
rct stress 200 3000 1024
cap_stop
g=$(($(st "$IF_B" responder gso_frames) - g0))
read -r n_resp n_read n_ack n_late < <("${TSHARK_ROCE[@]}" -r "$tmp/mix.pcap" -T fields \
	-e ip.src -e infiniband.bth.destqp -e infiniband.bth.opcode -e infiniband.bth.psn 2>/dev/null |
	awk '$3 >= 13 && $3 <= 18 { k = $1 " " $2; n++; r += $3 <= 16
		if (k in top && top[k] >= $4 && !($3 == 17 && ack[k] == $4)) late++
		if ($3 == 17) { a++; ack[k] = $4 }
		if (!(k in top) || $4 > top[k]) top[k] = $4 }
	     END { print n + 0, r + 0, a + 0, late + 0 }')
check "pipelined both ways: B sent READ responses in GSO runs ($g), the capture has $n_read READ responses and $n_ack ACKs among $n_resp response frames" \
	test "$g" -gt 0 -a "$n_read" -gt 100 -a "$n_ack" -gt 10
check_eq "pipelined both ways: response frames behind one of a later PSN of their QP" "$n_late" 0

# Interop: the RC run's capture (truncated frames are dissected as far as
# they go, so the ICRC is checked on a full capture of a short run).
roce_interop "the RC run" "$tmp/rc.pcap" 5000
cap_start "$NS_M" "$MA" "$tmp/full.pcap" "udp port 4791"
rct ops rc 1024 1 4000
cap_stop
# SEND, WRITE, READ request/response, ACK, ATOMIC
ICRC=1 roce_interop "a full capture of both hosts" "$tmp/full.pcap" 40 \
	4 5 10 11 12 16 17 18 19 20
# the same at path MTU 4096: SEND/WRITE FIRST, MIDDLE, LAST, READ responses
cap_start "$NS_M" "$MA" "$tmp/4k.pcap" "udp port 4791"
rct ops rc 4096 1 13000
cap_stop
ICRC=1 roce_interop "a full capture at path MTU 4096" "$tmp/4k.pcap" 40 \
	0 1 2 6 7 8 12 13 14 15 16
check "path MTU 4096: the capture has 4096-byte payloads both ways (frames of 4154+ bytes)" \
	test "$("${TSHARK_ROCE[@]}" -r "$tmp/4k.pcap" -Y 'frame.len >= 4154' -T fields \
		-e ip.src 2>/dev/null | sort -u | wc -l)" = 2

# The veths' own default, transmit checksum offload on (the topology turns
# it off for the captures' sake): the GSO runs' segments leave with their
# UDP checksums left to the device (partial on a veth), which xhca_rx does
# not read. Every byte still arrives, both ways, requests and READ
# responses in runs.
in_a ethtool -K "$IF_A" tx on >/dev/null 2>&1
in_b ethtool -K "$IF_B" tx on >/dev/null 2>&1
gs0=$(st "$IF_A" requester gso_sends) gr0=$(st "$IF_B" responder gso_frames)
rct ops rc 4096 1 65536 $((MiB + 7))
check "transmit checksum offload on: A's requests went in GSO sends ($(($(st "$IF_A" requester gso_sends) - gs0))), B's READ responses too ($(($(st "$IF_B" responder gso_frames) - gr0)))" \
	test "$(st "$IF_A" requester gso_sends)" -gt "$gs0" -a "$(st "$IF_B" responder gso_frames)" -gt "$gr0"
in_a ethtool -K "$IF_A" tx off >/dev/null 2>&1
in_b ethtool -K "$IF_B" tx off >/dev/null 2>&1

# The requester's counters moved on both hosts.
for side in "$IF_A" "$IF_B"; do
	j=$("$B/xhca" -i "$side" -j status)
	c=$(echo "$j" | json_get 'd["requester"]["completions"]')
	check "status on $side: the requester's completions counted ($c)" test "$c" -gt 50
	# the transmit line counts every frame sent, the requests too
	p=$(echo "$j" | json_get 'd["requester"]["packets"]')
	tx=$("$B/xhca" -i "$side" status | awk '$1 == "transmit:" { print $2 }')
	check "status on $side: 'transmit:' counts every frame sent ($tx), the $p request packets too" \
		test "${tx:-0}" -ge "$p" -a "$p" -gt 0
done
t_done
