#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Unmodified libibverbs programs on xhca (issue "Verbs"): Debian's
# ibv_devices/ibv_devinfo, ibv_{rc,uc,ud,srq}_pingpong and perftest, run by
# `xhca exec` between two xhca hosts (an xhcad in each namespace, the
# programs' TCP side channel over the same veth). Each pair: both ends exit
# 0 and print their result line; the pingpongs validate every byte (-c).
# Then the pingpongs again through loss and reordering in the middle.
. "$(dirname "$0")/../lib.sh"
need_root "verbs"
need_cmds verbs ibv_devinfo ibv_rc_pingpong ib_send_bw
# (--gso on, the default: its requests as UDP GSO sends, checked below)
MID_MTU=4200 two_hosts verbs 256
links_up

# placements: WRITE packets xhca_rx placed (alone, with an ACK due) and
# xhcad placed (a region not pre-translated), on A.
placements() {
	"$B/xhca" -i "$IF_A" -j stats | json_get \
		'd["reasons"]["placed"]["packets"], d["reasons"]["placed_ack"]["packets"], d["host"]["xlate_placed"]["frames"]' |
		tr -d '(),'
}

# pair NAME SECS PORT 'SERVER ARGS' 'CLIENT ARGS': SERVER on A, CLIENT on
# B (IP_A appended) once the server listens on PORT (exec_pair).
pair() { exec_pair "$1" "$2" "listening $NS_A $3" "$4" "$5 $IP_A"; }

# pingpong NAME ARGS: an ibv_*_pingpong pair; both ends report their
# iterations ("N iters in S seconds").
pingpong() {
	local name=$1 prog=$2
	shift 2
	pair "$name" 60 18515 "$prog $*" "$prog $*" || return
	local n
	n=$(grep -h ' iters in ' "$tmp/$name.srv" "$tmp/$name.cli" | wc -l)
	check "$name: both ends done, every byte validated ($(grep -h ' iters in ' \
		"$tmp/$name.cli"))" test "$n" = 2
}

# perf NAME PROG ARGS: a perftest pair; the client's result line has the
# size asked for and a positive figure.
perf() {
	local name=$1 prog=$2 size=$3
	shift 3
	pair "$name" 90 18515 "$prog -F -s $size $*" "$prog -F -s $size $*" || return
	local line
	line=$(awk -v s="$size" '$1 == s && NF >= 4 { print; exit }' "$tmp/$name.cli")
	check "$name: result line for $size bytes ($(echo $line | tr -s ' '))" \
		awk -v s="$size" '$1 == s && NF >= 4 && $3 + 0 > 0 { f = 1 } END { exit !f }' \
		"$tmp/$name.cli"
}

# ---- devices ------------------------------------------------------------------
out=$(xa ibv_devices)
check "ibv_devices: one device, xhca_$IF_A, GUID from the MAC (0077:00ff:fe00:0001)" \
	test "$(echo "$out" | awk 'NR > 2' | tr -s ' \t' ' ')" = " xhca_$IF_A 007700fffe000001"
info=$(xa ibv_devinfo -v)
for want in "hca_id:	xhca_$IF_A" "vendor_id:			0x0058" "state:			PORT_ACTIVE (4)" \
	"active_mtu:		4096 (5)" "link_layer:		Ethernet" "phys_port_cnt:			1" \
	"GID[  0]:		fe80::77:ff:fe00:1, RoCE v2" "GID[  1]:		::ffff:$IP_A, RoCE v2" \
	"GID[  2]:		$IP6_A, RoCE v2" "atomic_cap:			ATOMIC_HCA (1)"; do
	check "ibv_devinfo -v: '$(echo "$want" | tr -s '\t' ' ')'" grep -qF "$want" <<<"$info"
done
ip -n "$NS_A" addr add 10.79.0.1/24 dev "$IF_A"
check "ibv_devinfo: a new address is a new GID at once" \
	grep -qF "::ffff:10.79.0.1, RoCE v2" <<<"$(xa ibv_devinfo -v)"
ip -n "$NS_A" addr del 10.79.0.1/24 dev "$IF_A"
check "ibv_devinfo: and gone with the address" \
	bash -c "! grep -qF 10.79.0.1 <<<\"\$1\"" _ "$(xa ibv_devinfo -v)"
out=$(in_a "$B/xhca" -i nosuch0 exec -- ibv_devices 2>&1); rc=$?
check "xhca exec -i with no xhcad: exit 1, the reason ($out)" \
	test "$rc" = 1 -a -n "$(echo "$out" | grep 'no xhcad serves nosuch0')"
out=$(in_a "$B/xhca" exec 2>&1); rc=$?
check "xhca exec without a program: exit 2 ($out)" test "$rc" = 2
check "xhca exec without -i: the devices of this namespace only" \
	test "$(in_a "$B/xhca" exec -- ibv_devices | awk 'NR > 2 {print $1}')" = "xhca_$IF_A"

# ---- pingpongs --------------------------------------------------------------
for s in 1 4096 10000 65536; do
	pingpong "rc_pingpong -s $s" ibv_rc_pingpong -g 1 -c -n 100 -s "$s"
done
pingpong "rc_pingpong -e (events) -s 20000" ibv_rc_pingpong -g 1 -c -e -n 100 -s 20000
pingpong "rc_pingpong -m 1024 -s 5000" ibv_rc_pingpong -g 1 -c -n 50 -m 1024 -s 5000
pingpong "rc_pingpong over IPv6 (GID 2)" ibv_rc_pingpong -g 2 -c -n 50 -s 3000
for s in 1 4096 30000; do
	pingpong "uc_pingpong -s $s" ibv_uc_pingpong -g 1 -c -n 100 -s "$s"
done
pingpong "uc_pingpong -e" ibv_uc_pingpong -g 1 -c -e -n 100 -s 2048
for s in 1 1024 4096; do
	pingpong "ud_pingpong -s $s" ibv_ud_pingpong -g 1 -c -n 100 -s "$s"
done
pingpong "ud_pingpong -e" ibv_ud_pingpong -g 1 -c -e -n 100 -s 512
pingpong "srq_pingpong (16 QPs on one SRQ)" ibv_srq_pingpong -g 1 -c -n 100 -s 4096
pingpong "srq_pingpong -q 4 -s 10000" ibv_srq_pingpong -g 1 -c -n 100 -q 4 -s 10000
pingpong "srq_pingpong -e" ibv_srq_pingpong -g 1 -c -e -n 100 -s 100

# ---- perftest -------------------------------------------------------------------
req_st() { "$B/xhca" -i "$IF_B" -j status | json_get "d['requester']['$1']"; }
for s in 64 65536; do
	ak0=$(req_st ackreqs) pk0=$(req_st packets) dk0=$(req_st direct)
	perf "ib_send_bw $s" ib_send_bw "$s" -x 1 -n 500
	# one signaled SEND in 100 (perftest's -Q): the others ask for an ACK
	# only at the queue's tail, the last credit, or every 32 PSNs (a SEND
	# the program sent itself into its idle queue, --direct, asks: it is
	# alone)
	dk=$(($(req_st direct) - dk0))
	ak=$(($(req_st ackreqs) - ak0 + dk)) pk=$(($(req_st packets) - pk0 + dk))
	[ "$s" = 64 ] && check "ib_send_bw 64: $ak of its $pk packets asked for an ACK (at most a quarter)" \
		test "$pk" -ge 500 -a "$((ak * 4))" -le "$pk" -a "$ak" -ge 5
	w0=$(placements) gs0=$(req_st gso_sends) gf0=$(req_st gso_frames) rt0=$(req_st retransmits)
	perf "ib_write_bw $s" ib_write_bw "$s" -x 1 -n 500
	w1=$(placements)
	# --gso on (AF_XDP copies on veth): the WRITEs' packets in runs of
	# equal size, each run one UDP GSO send the kernel cut up (a 64 KiB
	# WRITE: FIRST with its RETH and a MIDDLE, then 13 MIDDLEs and the LAST)
	gs=$(($(req_st gso_sends) - gs0)) gf=$(($(req_st gso_frames) - gf0)) rt=$(($(req_st retransmits) - rt0))
	[ "$s" = 65536 ] && check "ib_write_bw 65536: its $gf packets went in $gs UDP GSO sends (8 or more a send), $rt sent again (1% at most)" \
		test "$gf" -ge $((500 * 16)) -a "$((gs * 8))" -le "$gf" -a "$((rt * 100))" -le "$gf"
	rg0=$("$B/xhca" -i "$IF_A" -j status | json_get "d['responder']['gso_frames']")
	perf "ib_read_bw $s" ib_read_bw "$s" -x 1 -n 500
	# the server's (A's) READ responses, 16 a READ at path MTU 4096, in GSO runs
	rg=$(($("$B/xhca" -i "$IF_A" -j status | json_get "d['responder']['gso_frames']") - rg0))
	[ "$s" = 65536 ] && check "ib_read_bw 65536: $rg of the server's READ response packets went in UDP GSO sends" \
		test "$rg" -ge $((500 * 16))
done
# perftest's buffer is its own memory (posix_memalign): registered by verbs,
# pre-translated, so xhca_rx placed every WRITE packet itself (path MTU 4096,
# the port's: 16 a message)
set -- $w0 $w1
check "ib_write_bw 65536: xhca_rx placed the WRITEs into the server's buffer itself ($(($4 - $1)) packets, $(($5 - $2)) with their ACK; $(($6 - $3)) by xhcad)" \
	test "$(($4 - $1 + $5 - $2))" -ge $((500 * 16)) -a "$(($6 - $3))" = 0
perf "ib_write_bw 1 MiB" ib_write_bw 1048576 -x 1 -n 50
perf "ib_atomic_bw FETCH_AND_ADD" ib_atomic_bw 8 -x 1 -n 500 -A FETCH_AND_ADD
perf "ib_atomic_bw CMP_AND_SWAP" ib_atomic_bw 8 -x 1 -n 500 -A CMP_AND_SWAP
for s in 2 4096; do
	perf "ib_send_lat $s" ib_send_lat "$s" -x 1 -n 300
	perf "ib_write_lat $s" ib_write_lat "$s" -x 1 -n 300
	perf "ib_read_lat $s" ib_read_lat "$s" -x 1 -n 300
done
perf "ib_send_bw UD" ib_send_bw 1024 -x 1 -n 500 -c UD
perf "ib_send_bw UC" ib_send_bw 4096 -x 1 -n 500 -c UC

# End-to-end credits: a receiver with 8 buffers (-r 8), as many SENDs
# outstanding (-t 8, so that even the first burst, before any ACK brought
# a count, fits). The ACKs' credit counts hold the sender back whenever
# the receiver has not posted its buffers again yet; it sends into no
# buffer only alone (the probe when the count is used up), so an RNR NAK
# sends one packet again, not everything after it. (With -t 128 and 20000
# SENDs, before credits: 13 RNR NAKs and 1251 packets sent again; with
# them: none, but the first burst's.)
# (Credit updates, the last ACK again with a new count, and the wait
# itself are checked in rc.sh: here they depend on whether ib_send_bw
# posts its buffers again before its xhcad makes the ACK, and whether
# that xhcad is polling then: 0 to 547 updates in runs of this test, and
# once in many runs no wait at all.)
cw0=$(req_st credit_waits) rn0=$(req_st rnr_naks) rt0=$(req_st retransmits)
perf "ib_send_bw 64 -r 8 -t 8" ib_send_bw 64 -x 1 -n 5000 -r 8 -t 8
cw=$(($(req_st credit_waits) - cw0)) rn=$(($(req_st rnr_naks) - rn0)) rt=$(($(req_st retransmits) - rt0))
check "credits: $rt packets sent again, no more than its $rn RNR NAKs (the sender waited for the receiver's credits $cw times)" \
	test "$rt" -le "$rn"

# ---- the proxy QP (US 9,069,633) on a verbs program's QP -------------------------
# xhca exec --proxy: the program's CQs are proxy CQs, so the operator can
# make its QP a proxy QP and give it filters (xhca qp modify, xhca filter).
app_qpn() { # the first QP of an application session on A, waited for
	local q
	for _ in $(seq 200); do
		q=$("$B/xhca" -i "$IF_A" -j qp show |
			json_get '" ".join(str(x["qpn"]) for x in d["qps"] if x["owner"] > 0)')
		[ -n "$q" ] && { echo "${q%% *}"; return 0; }
		sleep 0.02
	done
	return 1
}
px_stat() { "$B/xhca" -i "$IF_A" -j proxy show | json_get "d[\"$1\"]"; }
s0=$(px_stat sends) d0=$(px_stat declined)
in_a "$B/xhca" -i "$IF_A" exec --proxy -- ibv_rc_pingpong -g 1 -c -n 200 -s 100 \
	>"$tmp/px.srv" 2>&1 &
spid=$!
qpn=$(app_qpn)
"$B/xhca" -i "$IF_A" qp modify "$qpn" --proxy on >/dev/null &&
	"$B/xhca" -i "$IF_A" filter add "$qpn" --op send --handler none >/dev/null
check "xhca exec --proxy: the verbs program's QP ($qpn) made a proxy QP with a SEND filter" \
	test "$?" = 0
xb ibv_rc_pingpong -g 1 -c -n 200 -s 100 "$IP_A" >"$tmp/px.cli" 2>&1
rc=$?
wait "$spid"
check "rc_pingpong with its SENDs through the proxy (offered, declined, replayed; completions by the reorderer): exit $? and $rc, $(($(px_stat sends) - s0)) SENDs, $(($(px_stat declined) - d0)) declined" \
	test "$rc" = 0 -a "$(grep -c ' iters in ' "$tmp/px.srv")" = 1 \
	-a "$(($(px_stat sends) - s0))" = 200 -a "$(($(px_stat declined) - d0))" = 200
a0=$(px_stat atomics)
in_a "$B/xhca" -i "$IF_A" exec --proxy -- ib_atomic_bw -F -x 1 -n 30000 >"$tmp/pxa.srv" 2>&1 &
spid=$!
for _ in $(seq 100); do listening "$NS_A" 18515 && break; sleep 0.05; done
xb ib_atomic_bw -F -x 1 -n 30000 "$IP_A" >"$tmp/pxa.cli" 2>&1 &
cpid=$!
qpn=$(app_qpn)
"$B/xhca" -i "$IF_A" qp modify "$qpn" --proxy on >/dev/null &&
	"$B/xhca" -i "$IF_A" filter add "$qpn" --op fetch-add >/dev/null
wait "$cpid"; rc=$?
wait "$spid"; rs=$?
check "ib_atomic_bw with a FETCH_ADD filter added while it runs: the proxy thread executed $(($(px_stat atomics) - a0)) of its ATOMICs (exit $rs, $rc)" \
	test "$rs" = 0 -a "$rc" = 0 -a "$(($(px_stat atomics) - a0))" -gt 0

# ---- through loss and reordering ----------------------------------------------
# RC recovers every loss. Its teardown cannot: a program exits once its
# own work completed, and the peer's last request, whose ACK was lost, is
# then sent again to a QP that is gone (on any HCA: RETRY_EXC_ERR). So the
# impairment runs while the pair is in the middle of its iterations, and
# is gone for their end. UC and UD resend nothing: on any HCA (RXE too) a
# lost, duplicated or held-back packet ends a message and leaves
# ibv_uc/ud_pingpong waiting for good; they are not run impaired.
# impaired NAME SECS IMPAIRMENT -- PINGPONG ARGS
impaired() {
	local name=$1 secs=$2 imp=() spid cpid rs rc n
	shift 2
	while [ "$1" != "--" ]; do imp+=("$1"); shift; done
	shift
	xa timeout 90 "$@" >"$tmp/imp.srv" 2>&1 &
	spid=$!
	for _ in $(seq 100); do listening "$NS_A" 18515 && break; sleep 0.05; done
	impair_start "${imp[@]}" || { fail "$name: impairment attach"; return; }
	xb timeout 90 "$@" "$IP_A" >"$tmp/imp.cli" 2>&1 &
	cpid=$!
	sleep "$secs"
	impair_stop
	wait "$cpid"; rc=$?
	wait "$spid"; rs=$?
	n=$(grep -h ' iters in ' "$tmp/imp.srv" "$tmp/imp.cli" | wc -l)
	check "$name: both ends done, every byte validated, through $(impair_sum dropped) frames dropped and $(impair_sum held) held back (exit $rs, $rc)" \
		test "$rs" = 0 -a "$rc" = 0 -a "$n" = 2 -a "$(impair_sum dropped)" -gt 0
	[ "$rs" = 0 ] && [ "$rc" = 0 ] || cat "$tmp/imp.srv" "$tmp/imp.cli" | grep -v address | sed 's/^/    /'
}
impaired "rc_pingpong under 2% loss + 2% reordering" 2 --drop 2 --reorder 2 -- \
	ibv_rc_pingpong -g 1 -c -n 1000 -s 8192
impaired "rc_pingpong -e under 2% loss + 2% reordering" 2 --drop 2 --reorder 2 -- \
	ibv_rc_pingpong -g 1 -c -e -n 3000 -s 100
impaired "srq_pingpong under 2% loss + 2% reordering" 2 --drop 2 --reorder 2 -- \
	ibv_srq_pingpong -g 1 -c -n 2000 -q 4 -s 3000

# ---- error statuses, bad arguments, memory: a verbs program of the tests' own --
xa "$B/xhca-verbstest" local >"$tmp/vt.local" 2>&1
prog_checks "xhca-verbstest local (memory, bad arguments, state rules)" "$tmp/vt.local" $?
xa "$B/xhca-verbstest" server >"$tmp/vt.srv" 2>&1 &
vpid=$!
xb "$B/xhca-verbstest" client "$IP_A" >"$tmp/vt.cli" 2>&1
rc=$?
wait "$vpid"
prog_checks "xhca-verbstest client (error completions of both sides)" "$tmp/vt.cli" "$rc"
# A program killed with everything open: xhcad frees it all.
before=$("$B/xhca" -i "$IF_A" -j status | json_get 'd["hostmem_used"]')
xa "$B/xhca-verbstest" hold >"$tmp/vt.hold" 2>&1 &
vpid=$!
for _ in $(seq 100); do grep -q holding "$tmp/vt.hold" && break; sleep 0.05; done
during=$("$B/xhca" -i "$IF_A" -j status | json_get 'd["sessions"], d["qps_in_use"], d["mrs_in_use"]')
# the port's async events: the link down, then up
ip -n "$NS_A" link set "$IF_A" down
for _ in $(seq 40); do grep -q "port error" "$tmp/vt.hold" && break; sleep 0.05; done
ip -n "$NS_A" link set "$IF_A" up
for _ in $(seq 100); do grep -q "port active" "$tmp/vt.hold" && break; sleep 0.05; done
check "the link down, then up: IBV_EVENT_PORT_ERR, then IBV_EVENT_PORT_ACTIVE on the async fd" \
	test "$(grep 'async event' "$tmp/vt.hold" | tr '\n' ' ')" = \
	"async event: port error async event: port active "
# xhca's own view of the verbs program's objects: its QP in qp show, its MR
# (a static array of 64 KiB) pre-translated: xhca_rx would place WRITEs
check "xhca qp show lists the verbs program's QP (type rc, state reset, an owner)" \
	test "$("$B/xhca" -i "$IF_A" -j qp show |
		json_get '[(q["type"], q["state"], q["owner"] > 0) for q in d["qps"] if q["qpn"] != 1]')" \
		= "[('rc', 'reset', True)]"
check "xhca mr show: the verbs program's region of 64 KiB, pre-translated" \
	test "$("$B/xhca" -i "$IF_A" -j mr show |
		json_get '[(m["length"], m["pretranslated"]) for m in d["mrs"]]')" = "[(65536, True)]"
pkill -9 -f "xhca-verbstest hold"; wait "$vpid" 2>/dev/null
for _ in $(seq 50); do
	[ "$("$B/xhca" -i "$IF_A" -j status | json_get 'd["sessions"]')" = 0 ] && break
	sleep 0.05
done
check "a verbs program killed holding a QP, an MR and a CQ (xhcad had: $during): all freed" \
	test "$during" = "1 2 1" -a "$("$B/xhca" -i "$IF_A" -j status |
		json_get 'd["sessions"], d["qps_in_use"], d["mrs_in_use"], d["hostmem_used"]')" \
		= "0 1 0 $before"

# ---- nothing left behind ------------------------------------------------------------
for side in "$IF_A" "$IF_B"; do
	check "xhcad on $side: no session, QP (but the CM's QP1) or region left after the programs" \
		test "$("$B/xhca" -i "$side" -j status |
			json_get 'd["sessions"], d["qps_in_use"], d["mrs_in_use"]')" = "0 1 0"
done
t_done
