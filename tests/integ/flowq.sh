#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Flow queues (US 8,155,135): under a host bus slower than the wire
# (--bus-rate), an application that stops polling holds up only its own
# flow queue with DRR, and everybody with FIFO; weights share the bus; one
# QP's messages arrive in PSN order; and no UMEM frame is lost after a
# million packets, a crashed client, or a QP destroyed with frames queued.
# The scheduler and the bus model are an engine's (xhcad --engines): the
# tests of them run one engine; order and leaks run the default.
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/flowq
topo_setup || { fail "flowq: topology"; t_done; }
tmp=$(mktemp -d)
XHCAD_LOG=$tmp/xhcad.log
APP_DIR=$tmp
trap 'apps_kill; topo_cleanup; rm -rf "$tmp"' EXIT
RECV=$B/xhca-recv
# The bus is slow enough that xhca-gen's bursts (one test run every 50 ms)
# fit under a flow queue's high watermark, so a backlogged queue stays
# backlogged between bursts.
BUS=4000000		# bytes/s: 3750 frames/s
SIZE=1000		# payload; 1066-byte frames
RUN=3			# seconds of traffic

summary() { grep '"received"' "$tmp/$1" | tail -n 1 | json_get "$2"; }
# two_flows TAG A-ARGS: an application on flow queue 1 (A, with A-ARGS) and
# one on flow queue 2 (B), each offered 60% of the bus (2250 frames/s) for
# RUN seconds.
# Sets RATE_B and GOT_A. RATE_B is B's share of what xhca-gen sent it, as
# messages/s at the offered 2250/s: on two busy CPUs xhca-gen itself may
# send a few of its 50 ms bursts short of RUN seconds, and that is not xhca's.
two_flows() {
	local tag=$1 qa qb; shift
	app "a$tag" "$RECV" -i "$IF_A" --type ud --qkey 0xa --flowq 1 --bufs 256 --cq-depth 64 \
		--buf-size 2048 -q -j --timeout 2 "$@"
	app "b$tag" "$RECV" -i "$IF_A" --type ud --qkey 0xb --flowq 2 --bufs 256 --cq-depth 512 \
		--buf-size 2048 -q -j --timeout 2
	qa=$(ready "a$tag") && qb=$(ready "b$tag") || return 1
	gen --op ud-send-only --qpn "$qa" --qkey 0xa --psn-step 0 --size $SIZE --rate 2250 \
		--duration $RUN &
	local g1=$!
	in_b "$B/xhca-gen" -i "$IF_B" --dst-mac "$MAC_A" --src "$IP_B" --dst "$IP_A" -j \
		--op ud-send-only --qpn "$qb" --qkey 0xb --psn-step 0 --size $SIZE --rate 2250 \
		--duration $RUN >"$tmp/gen_b$tag" &
	wait $! $g1
	eval wait "\$PID_b$tag"
	eval kill "\$PID_a$tag" 2>/dev/null
	eval wait "\$PID_a$tag" 2>/dev/null
	GOT_A=$(summary "a$tag" 'd["received"]')
	local got sent
	got=$(summary "b$tag" 'd["received"]')
	sent=$(json_get 'd["sent"]' <"$tmp/gen_b$tag")
	echo "# B received $got of the $sent frames sent to it"
	RATE_B=$(awk -v g="${got:-0}" -v s="${sent:-0}" 'BEGIN { printf "%.0f", s ? g * 2250 / s : 0 }')
}

# --- isolation: DRR keeps B going when A stalls ---
check "flowq: xhcad --sched drr --bus-rate 4M" xhcad_start --engines 1 --sched drr --bus-rate $BUS
two_flows 0
base=$RATE_B
echo "# DRR, both applications polling: B received $base msgs/s of the 2250 offered"
check "flowq: baseline: B gets at least about half the bus ($base msgs/s)" \
	test "$base" -ge 1500
two_flows 1 --stop-after 100
echo "# DRR, A stops polling after 100: A got $GOT_A, B $RATE_B msgs/s"
check "flowq: A stalled after its CQ filled ($GOT_A)" test "${GOT_A:-0}" -le 200
check "flowq: DRR: B keeps >= 95% of its throughput while A is stalled ($RATE_B vs $base)" \
	test $((RATE_B * 100)) -ge $((base * 95))
check_eq "flowq: DRR: the stalled queue was dropped early at its gate, B's queue served" \
	"$(xhca -j flowq show | json_get '(d["flowqs"][1]["gate_drops"] > 0, d["flowqs"][2]["frames"] > 0)')" \
	"(True, True)"
xhcad_stop TERM

# --- the FIFO baseline: the same stall stops B too ---
check "flowq: xhcad --sched fifo --bus-rate 4M" xhcad_start --engines 1 --sched fifo --bus-rate $BUS
two_flows 2 --stop-after 100
echo "# FIFO, A stops polling after 100: B $RATE_B msgs/s"
check "flowq: FIFO: B collapses behind A's blocked frame ($RATE_B vs $base)" \
	test $((RATE_B * 100)) -le $((base * 20))
xhcad_stop TERM

# --- weights 3:1 while both are backlogged ---
# A low watermark under one burst period of service would let the faster
# queue run dry between xhca-gen's bursts: keep 512 frames queued.
check "flowq: xhcad for the weights" xhcad_start --engines 1 --sched drr --bus-rate $BUS \
	--watermarks 1024,512 --umem-frames 16384
xhca flowq set 1 --weight 3 >/dev/null
app w1 "$RECV" -i "$IF_A" --type ud --qkey 0xa --flowq 1 --bufs 1024 --buf-size 2048 -q -j --timeout 2
app w2 "$RECV" -i "$IF_A" --type ud --qkey 0xb --flowq 2 --bufs 1024 --buf-size 2048 -q -j --timeout 2
q1=$(ready w1); q2=$(ready w2)
# Shares are measured in a window where both queues are backlogged (after
# the first second, before the senders stop and the queues drain).
fq_frames() { xhca -j flowq show | json_get '"%d %d" % (d["flowqs"][1]["frames"], d["flowqs"][2]["frames"])'; }
gen --op ud-send-only --qpn "$q1" --qkey 0xa --psn-step 0 --size $SIZE --rate 5000 --duration 4 &
g=$!
gen --op ud-send-only --qpn "$q2" --qkey 0xb --psn-step 0 --size $SIZE --rate 5000 --duration 4 &
g2=$!
sleep 1
read -r a0 b0 <<<"$(fq_frames)"
d0=$(xhca -j flowq show | json_get 'd["flowqs"][1]["gate_drops"] + 1000000 * d["flowqs"][2]["gate_drops"]')
sleep 2
read -r a1 b1 <<<"$(fq_frames)"
d1=$(xhca -j flowq show | json_get 'd["flowqs"][1]["gate_drops"] + 1000000 * d["flowqs"][2]["gate_drops"]')
wait $g $g2 "$PID_w1" "$PID_w2"
n1=$((a1 - a0)); n2=$((b1 - b0))
echo "# weights 3:1, 2 s of both backlogged: $n1 and $n2 frames"
check "flowq: weights 3:1 give a 3:1 share within 10% ($n1:$n2)" \
	"$SCAPY_PY" -c "import sys; r = $n1 / max($n2, 1); sys.exit(not 2.7 <= r <= 3.3)"
check "flowq: both were backlogged in the window (both gates dropped)" \
	"$SCAPY_PY" -c "import sys; d = $d1 - $d0; sys.exit(not (d % 1000000 > 0 and d // 1000000 > 0))"
xhcad_stop TERM

# --- order: 100,000 messages of one QP, in PSN order ---
# xhca-gen sends 1000-frame bursts at 20000/s: a flow queue holds one.
check "flowq: xhcad for order and leaks" xhcad_start --watermarks 1024,256 --umem-frames 16384
app ord "$RECV" -i "$IF_A" --type ud --qkey 0xc --bufs 4096 --buf-size 512 --cq-depth 8192 -q -j \
	--check-psn --count 100000 --timeout 5
QO=$(ready ord)
# One sending CPU: on veth the RX queue follows the sender's CPU, as RSS
# keeps a QP on one queue on a NIC.
in_b taskset -c 0 "$B/xhca-gen" -i "$IF_B" --dst-mac "$MAC_A" --op ud-send-only --qpn "$QO" \
	--qkey 0xc --psn 0xfff000 --stamp --size 64 --count 100000 --rate 20000 >/dev/null
wait "$PID_ord"
check_eq "flowq: 100,000 messages on one QP arrive, in PSN order (across the 2^24 wrap)" \
	"$(summary ord '(d["received"], d["out_of_order"], d["errors"])')" "(100000, 0, 0)"

# --- no frame leaks ---
frames_ok() {
	xhca -j status | json_get 'd["umem"]["free"] + d["umem"]["fill"] == d["umem"]["frames"] and
		d["umem"]["rx"] == 0 and d["umem"]["held"] == 0 and d["umem"]["kernel"] == 0'
}
accounted() {
	local st fq
	st=$(xhca -j stats); fq=$(xhca -j flowq show)
	"$SCAPY_PY" - "$st" "$fq" <<'PY'
import json, sys
st, fq = json.loads(sys.argv[1]), json.loads(sys.argv[2])
host = sum(v["frames"] for v in st["host"].values())
lost = sum(f["kernel_drops"] for f in fq["flowqs"])
print(host + lost == st["reasons"]["to_flowq"]["packets"])
PY
}
app mil "$RECV" -i "$IF_A" --type ud --qkey 0xd --bufs 1024 --buf-size 256 -q -j --timeout 2
QM=$(ready mil)
out=$(in_b "$B/xhca-gen" -i "$IF_B" --dst-mac "$MAC_A" -j --op ud-send-only --qpn "$QM" \
	--qkey 0xd --psn-step 0 --size 64 --count 1000000)
wait "$PID_mil"
sleep 0.3
echo "# a million packets: sent $(json_get 'd["sent"]' <<<"$out"), delivered $(summary mil 'd["received"]')"
check_eq "flowq: the application reposted every buffer at once, a million times (no error)" \
	"$(cat "$tmp/mil.err")$(summary mil 'd["errors"]')" 0
check_eq "flowq: after a million packets every UMEM frame is free or in a fill ring" "$(frames_ok)" True
check_eq "flowq: every frame redirected is accounted for (host reasons + kernel drops)" \
	"$(accounted)" True

app crash "$B/xhca-apptest" crash "$IF_A" 5
QC=$(ready crash)
gen --op ud-send-only --qpn "$QC" --qkey 0x5151 --count 100 --size 64
sleep 0.3
check_eq "flowq: frames wait behind the crashing client's full CQ" \
	"$(xhca -j flowq show | json_get 'd["flowqs"][5]["blocked"] and d["flowqs"][5]["backlog"] > 0')" True
stale0=$(xhca -j stats | json_get 'd["host"]["stale"]["frames"]')
kill -9 "$PID_crash"; wait "$PID_crash" 2>/dev/null
sleep 0.3
st=$(xhca -j status)
check_eq "flowq: the crashed client's session, QP and memory are gone" \
	"$(json_get '(d["sessions"], d["hostmem_used"])' <<<"$st")" "(0, 0)"
check_eq "flowq: its QP is gone" "$(xhca -j qp show | json_get "[q for q in d['qps'] if q['qpn'] == $QC]")" "[]"
check "flowq: its queued frames were discarded as stale" \
	test "$(xhca -j stats | json_get 'd["host"]["stale"]["frames"]')" -gt "$stale0"
check_eq "flowq: after the crash every UMEM frame is back" "$(frames_ok)" True

mkfifo "$tmp/hold.in"
nsenter --net=/run/netns/"$NS_A" "$B/xhca-apptest" hold "$IF_A" 6 <"$tmp/hold.in" >"$tmp/hold" 2>&1 &
APPS+=("$!"); PID_hold=$!
exec 9>"$tmp/hold.in"
QH=$(ready hold)
gen --op ud-send-only --qpn "$QH" --qkey 0x5151 --count 50 --size 64
sleep 0.3
check "flowq: frames queued for the QP" test "$(xhca -j flowq show | json_get 'd["flowqs"][6]["backlog"]')" -gt 0
xhca qp destroy "$QH" >/dev/null
sleep 0.3
check_eq "flowq: destroying the QP with frames queued frees them all" "$(frames_ok)" True
check_eq "flowq: its flow queue is empty and not blocked" \
	"$(xhca -j flowq show | json_get '(d["flowqs"][6]["backlog"], d["flowqs"][6]["blocked"])')" "(0, False)"
echo go >&9
exec 9>&-
wait "$PID_hold"
check_eq "flowq: all frames accounted for at the end" "$(accounted)" True
xhcad_stop TERM
check_eq "flowq: xhcad exits 0" "$XHCAD_RC" 0
t_done
