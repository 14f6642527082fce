#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Loopback (issue "The RDMA software stack runs on xhca", part 1): a QP
# reaches a QP of the same device, and of another xhca device of the same
# host, with the semantics of the wire, and no frame to one of the host's
# own addresses goes out on a wire. Host A (NS_A) has two xhca devices,
# IF_A and IF_C, each with an xhcad; NS_B holds the far ends of both veths,
# where a capture would see anything A sent. On one device: Debian's
# pingpongs (RC, UC, UD, SRQ), perftest (WRITE, READ, SEND, both atomics),
# rping and mckey (rdma_cm, multicast), the tests' own verbs program for
# every error status (server and client on one device) and libxhca's
# (every opcode of RC, UC and UD, the error paths); across the two devices
# the same programs; a device of this host no xhcad serves; what a process
# may send to xhcad's loopback socket. Counted in `xhca status`.
. "$(dirname "$0")/../lib.sh"
need_root "loopback"
need_cmds loopback ibv_rc_pingpong ib_write_bw rping mckey tshark
topo_setup || { fail "loopback: topology"; t_done; }
id=$(($$ % 100000))
IF_C=xc$id IF_D=xd$id IF_N=xn$id IF_M=xm$id IP_C=10.78.0.1 IP_N=10.90.0.1
tmp=$(mktemp -d)
trap 'topo_cleanup; rm -rf "$tmp" /run/xhca/"$IF_C".{sock,lo,state,ib} /sys/fs/bpf/xhca/"$IF_C"' EXIT
# the second device, and an interface no xhcad serves
ip link add "$IF_C" numrxqueues 2 numtxqueues 2 netns "$NS_A" type veth \
	peer name "$IF_D" netns "$NS_B"
ip link add "$IF_N" netns "$NS_A" type veth peer name "$IF_M" netns "$NS_B"
ip -n "$NS_A" addr add $IP_C/24 dev "$IF_C"
ip -n "$NS_A" addr add $IP_N/24 dev "$IF_N"
for l in "$IF_C" "$IF_N"; do ip -n "$NS_A" link set "$l" up; done
for l in "$IF_D" "$IF_M"; do ip -n "$NS_B" link set "$l" up; done
in_a ethtool -K "$IF_C" tx off rxvlan off txvlan off >/dev/null 2>&1
xhcad_start --hostmem-mb 128 || { fail "loopback: xhcad on $IF_A"; t_done; }
xhcad_in "$NS_A" "$IF_C" /dev/null --hostmem-mb 128 || { fail "loopback: xhcad on $IF_C"; t_done; }
links_up

# RoCE frames on the far ends of A's wires, for as long as the tests run.
cap_start "$NS_B" any "$tmp/wire.pcap" "udp port 4791 and not multicast"

xc() { in_a "$B/xhca" -i "$IF_C" exec -- "$@"; }
xboth() { in_a "$B/xhca" exec -- "$@"; } # both devices
lo_stat() { "$B/xhca" -i "$1" -j status | json_get "d['loopback']['$2']"; }
bound() { ip netns exec "$NS_A" grep -q "@xhca-rdmacm:$1:$2:" /proc/net/unix && sleep 0.2; }

# local_pair NAME SECS READY 'SERVER' 'CLIENT' [RUN_SRV [RUN_CLI]]: both on host A
# (xa by default, or the functions given), the client once READY holds;
# both must exit 0.
local_pair() {
	local name=$1 secs=$2 ready=$3 srv=$4 cli=$5 rs=${6:-xa} rc_=${7:-${6:-xa}} spid r1 r2 i
	$rs timeout "$secs" $srv >"$tmp/$name.srv" 2>&1 &
	spid=$!
	# ready within 30 s (5 s before: on a loaded machine a server may take
	# longer, and a client started early finds no listener, or sends its
	# multicast to nobody); not ready then: a failure of its own
	for ((i = 0; i < 600; i++)); do eval "$ready" && break; sleep 0.05; done
	if [ "$i" = 600 ]; then
		fail "$name: the server was not ready within 30 s ($ready)"
		kill "$spid" 2>/dev/null
		wait "$spid"
		return 1
	fi
	$rc_ timeout "$secs" $cli >"$tmp/$name.cli" 2>&1
	r2=$?
	# (SNAP: what to look at with the server still there, printed on failure)
	[ -n "${SNAP:-}" ] && eval "$SNAP" >"$tmp/$name.snap" 2>&1
	wait "$spid"
	r1=$?
	if [ "$r1" != 0 ] || [ "$r2" != 0 ]; then
		fail "$name: server exit $r1, client exit $r2"
		tail -n 5 "$tmp/$name.srv" "$tmp/$name.cli" | sed 's/^/    /'
		[ -n "${SNAP:-}" ] && sed 's/^/    /' "$tmp/$name.snap"
		return 1
	fi
	return 0
}

# pingpong NAME PROG ARGS: an ibv_*_pingpong pair on one device (or RUN_*)
pingpong() {
	local name=$1 prog=$2 args=$3
	local_pair "$name" 60 "listening $NS_A 18515" "$prog $args" "$prog $args ${TO:-$IP_A}" \
		${RUN_SRV:-} ${RUN_CLI:-} || return
	check "$name: both ends done, every byte validated ($(grep -h ' iters in ' "$tmp/$name.cli"))" \
		test "$(grep -h ' iters in ' "$tmp/$name.srv" "$tmp/$name.cli" | wc -l)" = 2
}

# perf NAME PROG SIZE ARGS: a perftest pair; the result line has the size
perf() {
	local name=$1 prog=$2 size=$3
	shift 3
	local_pair "$name" 60 "listening $NS_A 18515" "$prog -F -s $size $*" \
		"$prog -F -s $size $* ${TO:-$IP_A}" ${RUN_SRV:-} ${RUN_CLI:-} || return
	check "$name: result line for $size bytes ($(awk -v s="$size" '$1 == s && NF >= 4 { print; exit }' "$tmp/$name.cli" | tr -s ' '))" \
		awk -v s="$size" '$1 == s && NF >= 4 && $3 + 0 > 0 { f = 1 } END { exit !f }' \
		"$tmp/$name.cli"
}

# ---- one device: two processes ---------------------------------------------------
self0=$(lo_stat "$IF_A" self)
pingpong "rc_pingpong on one device" ibv_rc_pingpong "-g 1 -n 200 -c"
pingpong "rc_pingpong on one device, 4 KiB, MTU 1024" ibv_rc_pingpong "-g 1 -n 100 -s 4096 -m 1024 -c"
pingpong "uc_pingpong on one device" ibv_uc_pingpong "-g 1 -n 200 -c"
pingpong "ud_pingpong on one device" ibv_ud_pingpong "-g 1 -n 200 -s 1000 -c"
pingpong "srq_pingpong on one device (4 QPs on an SRQ)" ibv_srq_pingpong "-g 1 -n 100 -q 4 -c"
perf "ib_write_bw on one device" ib_write_bw 65536 -x 1 -n 1000
perf "ib_read_bw on one device" ib_read_bw 65536 -x 1 -n 1000
perf "ib_send_bw on one device" ib_send_bw 4096 -x 1 -n 1000
perf "ib_atomic_bw FETCH_AND_ADD on one device" ib_atomic_bw 8 -x 1 -n 1000 -A FETCH_AND_ADD
perf "ib_atomic_bw CMP_AND_SWAP on one device" ib_atomic_bw 8 -x 1 -n 1000 -A CMP_AND_SWAP
perf "ib_write_lat on one device" ib_write_lat 64 -x 1 -n 500
local_pair "rping on one device" 60 "bound 0106 7190" "rping -s -a $IP_A -p 7190 -C 20 -V" \
	"rping -c -a $IP_A -p 7190 -C 20 -v -V" &&
	check "rping on one device: 20 pings, each verified" \
		test "$(grep -c 'ping data: rdma-ping-' "$tmp/rping on one device.cli")" = 20
# (the receiver ready once its QP is a member of the group: its rdma_cm id
# alone is there before the join, and a burst sent then reaches nobody)
# (on failure: the groups, members and skipped members, and loopback's
# counters, as the client ended and the server waited)
SNAP="xhca mcast show -v; xhca -j status | json_get 'd[\"loopback\"]'" \
local_pair "mckey on one device" 60 "xhca mcast show | awk '\$1 == \"239.1.1.1\" && \$3 >= 1' | grep -q ." \
	"mckey -m 239.1.1.1 -b $IP_A -C 20" "mckey -m 239.1.1.1 -b $IP_A -s -C 20" &&
	check "mckey on one device: the receiving process got its 20 messages" \
		grep -q 'test complete' "$tmp/mckey on one device.srv"
check "loopback: the frames to this device went through its own xhca_rx ($(lo_stat "$IF_A" self) since $self0)" \
	test "$(lo_stat "$IF_A" self)" -gt $((self0 + 10000))
check "loopback: the multicast frames' copies for this device ($(lo_stat "$IF_A" mcast))" \
	test "$(lo_stat "$IF_A" mcast)" -ge 20

# every error status, server and client on one device; libxhca's every opcode
local_pair "xhca-verbstest on one device" 120 "listening $NS_A 18600" "$B/xhca-verbstest server" \
	"$B/xhca-verbstest client $IP_A"
prog_checks "xhca-verbstest client on one device (every error status)" "$tmp/xhca-verbstest on one device.cli" 0
xa "$B/xhca-verbstest" local >"$tmp/vlocal" 2>&1
prog_checks "xhca-verbstest local (with multicast on one device)" "$tmp/vlocal" $?
rct1() { in_a timeout 120 "$B/xhca-rctest" "$1" "$IF_A" "$IP_A" "$IF_A" "$IP_A" "${@:2}"; }
for sc in "ops rc 1024 1 1000 4097 70000" "ops uc 1024 1 4097" "ops ud 1024 1 1000" errors more \
	"stress 20 5000 1024"; do
	rct1 $sc >"$tmp/rct" 2>&1
	prog_checks "xhca-rctest $sc, both QPs on one device" "$tmp/rct" $?
done

# ---- two devices of one host -------------------------------------------------------
sent0=$(lo_stat "$IF_A" peer_sent) recv0=$(lo_stat "$IF_C" peer_received)
RUN_SRV=xc RUN_CLI=xa TO=$IP_C pingpong "rc_pingpong, xhca_$IF_A to xhca_$IF_C" ibv_rc_pingpong "-g 1 -n 200 -c"
RUN_SRV=xc RUN_CLI=xa TO=$IP_C pingpong "ud_pingpong, xhca_$IF_A to xhca_$IF_C" ibv_ud_pingpong "-g 1 -n 200 -c"
RUN_SRV=xc RUN_CLI=xa TO=$IP_C perf "ib_write_bw, xhca_$IF_A to xhca_$IF_C" ib_write_bw 65536 -x 1 -n 500
RUN_SRV=xc RUN_CLI=xa TO=$IP_C perf "ib_read_bw, xhca_$IF_A to xhca_$IF_C" ib_read_bw 65536 -x 1 -n 500
local_pair "rping, xhca_$IF_A to xhca_$IF_C" 60 "bound 0106 7191" \
	"rping -s -a $IP_C -p 7191 -C 20 -V" "rping -c -a $IP_C -I $IP_A -p 7191 -C 20 -v -V" xboth &&
	check "rping across the two devices: 20 pings, each verified" \
		test "$(grep -c 'ping data: rdma-ping-' "$tmp/rping, xhca_$IF_A to xhca_$IF_C.cli")" = 20
in_a timeout 120 "$B/xhca-rctest" ops "$IF_A" "$IP_A" "$IF_C" "$IP_C" rc 1024 1 4097 70000 >"$tmp/rct" 2>&1
prog_checks "xhca-rctest ops rc, xhca_$IF_A and xhca_$IF_C" "$tmp/rct" $?
check "loopback: xhca_$IF_A sent its frames to xhca_$IF_C's xhcad ($(lo_stat "$IF_A" peer_sent) since $sent0)" \
	test "$(lo_stat "$IF_A" peer_sent)" -gt $((sent0 + 1000))
check "loopback: xhca_$IF_C took them ($(lo_stat "$IF_C" peer_received) since $recv0), none refused or lost" \
	test "$(lo_stat "$IF_C" peer_received)" -gt $((recv0 + 1000)) -a \
	"$(lo_stat "$IF_C" peer_refused)$(lo_stat "$IF_C" peer_too_long)$(lo_stat "$IF_A" peer_unreachable)" = 000

# ---- a device of this host that no xhcad serves --------------------------------------
un0=$(lo_stat "$IF_A" peer_unreachable)
xa timeout 60 "$B/xhca-verbstest" nopeer "$IP_N" >"$tmp/nopeer" 2>&1
rc=$?
sed 's/^/  /' "$tmp/nopeer"
grep -q '^not ok' "$tmp/nopeer" && fail "xhca-verbstest nopeer: see above"
check "to $IP_N, an address of $IF_N (no xhcad): the frames lost, counted ($(lo_stat "$IF_A" peer_unreachable) since $un0), exit $rc" \
	test "$rc" = 0 -a "$(lo_stat "$IF_A" peer_unreachable)" -ge $((un0 + 3))

cap_stop
n=$(tshark -r "$tmp/wire.pcap" 2>/dev/null | wc -l)
check "no RoCE frame to this host's addresses went out on a wire ($n captured on the far ends)" \
	test "$n" = 0

# ---- who may send frames to an xhcad's loopback socket ------------------------------
sock=/run/xhca/$IF_C.lo
check "$sock: a socket only root may use (mode $(stat -c %a "$sock"), owner $(stat -c %U "$sock"))" \
	test "$(stat -c %a:%u "$sock")" = 600:0
out=$(in_a setpriv --reuid 65534 --regid 65534 --clear-groups "$SCAPY_PY" -c \
	"import socket; socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET).connect('$sock')" 2>&1)
check "a process that is not root cannot connect to send it frames ($(echo "$out" | tail -n 1))" \
	grep -q "PermissionError" <<<"$out"
rx0=$(lo_stat "$IF_C" peer_received) long0=$(lo_stat "$IF_C" peer_too_long)
in_a "$SCAPY_PY" -c "
import os, socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect('$sock')
for n in (1, 14, 60, 300):
    s.send(os.urandom(n))
s.send(b'\\0' * 9000)"
sleep 0.5
check "root's garbage: 4 frames taken into xhca_rx ($(( $(lo_stat "$IF_C" peer_received) - rx0 ))), one over a frame dropped ($(( $(lo_stat "$IF_C" peer_too_long) - long0 )))" \
	test "$(( $(lo_stat "$IF_C" peer_received) - rx0 ))" = 4 -a \
	"$(( $(lo_stat "$IF_C" peer_too_long) - long0 ))" = 1
RUN_SRV=xc RUN_CLI=xa TO=$IP_C pingpong "rc_pingpong across the devices after that" ibv_rc_pingpong "-g 1 -n 50 -c"

# every UMEM frame back where it belongs
for i in "$IF_A" "$IF_C"; do
	st=$("$B/xhca" -i "$i" -j status)
	check "$i: no looped frame held, every UMEM frame accounted for ($(json_get "d['umem']" <<<"$st"))" \
		json_get "d['loopback']['held'] == 0 and d['umem']['held'] == 0 and d['umem']['free'] + d['umem']['fill'] + d['umem']['kernel'] + d['umem']['rx'] == d['umem']['frames'] or sys.exit(1)" <<<"$st"
done
t_done
