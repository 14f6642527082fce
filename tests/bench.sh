#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make bench: speed, each figure beside a baseline measured in the same run.
#  1. ns/packet of xhca_rx under BPF_PROG_TEST_RUN beside the empty XDP
#     program, and the GB/s of its WRITE placement beside memcpy
#     (xhca-bench prog).
#  2. packets per second through a veth: xhca-gen in one namespace sends
#     UC SENDs in PSN order at full speed; received by xhca_rx (accepted, QP
#     action drop) and, as the baseline, by a kernel UDP socket on port 4791
#     with no XDP program attached. Same frames, same duration. (UC, not RC:
#     a frame the veth's ring loses would stop an RC QP for good, every
#     later PSN out of sequence, as nothing retransmits; UC goes on with the
#     next message.)
#  3. messages per second delivered to an application through xhca (xhcad
#     and xhca-recv), beside a kernel UDP socket receiving the same traffic
#     with recvmmsg; xhcad's CPU time per message with the DRR scheduler
#     and with FIFO, and the scheduler's decision alone (xhca-bench sched);
#     the CRC-32 every frame's ICRC is made of, by each implementation this
#     CPU has, beside zlib's crc32 (xhca-bench crc).
#  4. RDMA WRITE bandwidth into a pre-translated region (placed by xhca_rx)
#     beside a fragmented one (placed by xhcad), and memcpy as the ceiling.
#  5. multicast copies delivered per second with 8 members, beside the
#     kernel's IP multicast to 8 UDP sockets; UMEM frames per packet.
set -u
. "$(dirname "$0")/lib.sh"
need_root bench
SECONDS_RUN=${BENCH_SECONDS:-3}

echo "== xhca_rx per packet (BPF_PROG_TEST_RUN)"
"$B/xhca-bench" prog || exit 1

echo
echo "== xhcad's flow queue scheduler per decision"
"$B/xhca-bench" sched || exit 1

echo
echo "== the ICRC's CRC-32 per call, each implementation this CPU has, beside zlib"
"$B/xhca-bench" crc || exit 1

echo
echo "== packets per second through a veth (${SECONDS_RUN} s each, 64-byte UC SEND payload)"
topo_setup || { echo "bench: cannot build the veth topology" >&2; exit 1; }
# The sender on one CPU: on a veth the RX queue follows the sending CPU, and
# RC in PSN order must stay on one queue, as a NIC's RSS keeps a flow.
genj() {
	in_b taskset -c 0 "$B/xhca-gen" -i "$IF_B" --dst-mac "$MAC_A" --src "$IP_B" --dst "$IP_A" \
		-j "$@"
}
jf() { "$SCAPY_PY" -c 'import json,sys; d=json.loads(sys.argv[1]); print('"$2"')' "$1"; }

xhcad_start || { echo "bench: xhcad did not start" >&2; exit 1; }
RC=$(qp_up uc --epsn 0 --action drop)
before=$(stat_of accept_drop)
g1=$(genj --op uc-send-only --qpn "$RC" --psn 0 --size 64 --duration "$SECONDS_RUN") || exit 1
sleep 0.2
acc=$(( $(stat_of accept_drop) - before ))
others=$(xhca -j stats | json_get 'sum(v["packets"] for k, v in d["reasons"].items() if k.startswith("drop_"))')
xhcad_stop TERM

in_a "$B/xhca-bench" udp-sink -p 4791 -s 600 -i 1500 -j >"${TMPDIR:-/tmp}/xhca-sink.$$" 2>/dev/null &
sink=$!
sleep 0.5
g2=$(genj --op uc-send-only --qpn "$RC" --psn 0 --size 64 --duration "$SECONDS_RUN") || exit 1
wait $sink
s2=$(cat "${TMPDIR:-/tmp}/xhca-sink.$$"); rm -f "${TMPDIR:-/tmp}/xhca-sink.$$"
got=$(jf "$s2" 'd["received"]')

t1=$(jf "$g1" 'd["seconds"]'); sent1=$(jf "$g1" 'd["sent"]')
t2=$(jf "$g2" 'd["seconds"]'); sent2=$(jf "$g2" 'd["sent"]')
"$SCAPY_PY" - "$acc" "$t1" "$sent1" "$got" "$t2" "$sent2" "$others" <<'PY'
import sys
acc, t1, s1, got, t2, s2, others = (float(x) for x in sys.argv[1:])
x, u = acc / t1, got / t2
print(f"{'receiver':40s} {'sent':>10s} {'received':>10s} {'pps':>12s} {'ratio':>7s}")
print(f"{'kernel UDP socket, no XDP (baseline)':40s} {s2:10.0f} {got:10.0f} {u:12.0f} {1:6.2f}x")
print(f"{'xhca_rx, UC SEND accepted':40s} {s1:10.0f} {acc:10.0f} {x:12.0f} {x / u if u else 0:6.2f}x")
print(f"(xhca_rx drops by any reason during its run: {others:.0f}; pps = received / sender's seconds)")
PY

echo
echo "== messages per second delivered to an application (${SECONDS_RUN} s each, 64-byte UD SENDs)"
tmp=$(mktemp -d); APP_DIR=$tmp
trap 'apps_kill; topo_cleanup; rm -rf "$tmp"' EXIT
cpu_ticks() { awk '{print $14 + $15}' /proc/"$1"/stat; }
# deliver SCHED: xhcad with SCHED, an application, full-speed traffic.
# Writes "sent received seconds cpu_ticks_of_xhcad" to $tmp/SCHED.
deliver() {
	local q g t0 t1
	xhcad_start --sched "$1" || { echo "bench: xhcad did not start" >&2; exit 1; }
	app "r$1" "$B/xhca-recv" -i "$IF_A" --type ud --qkey 0x99 --bufs 4096 --cq-depth 8192 \
		--buf-size 256 -q -j --timeout 2
	q=$(ready "r$1") || exit 1
	t0=$(cpu_ticks "$XHCAD_PID")
	g=$(genj --op ud-send-only --qpn "$q" --qkey 0x99 --psn-step 0 --size 64 \
		--duration "$SECONDS_RUN") || exit 1
	eval wait "\$PID_r$1"
	t1=$(cpu_ticks "$XHCAD_PID")
	echo "$(jf "$g" 'd["sent"]') $(grep '"received"' "$tmp/r$1" | json_get 'd["received"]')" \
		"$(jf "$g" 'd["seconds"]') $((t1 - t0))" >"$tmp/$1"
	xhcad_stop TERM
}
deliver drr
deliver fifo
read -r s_drr r_drr t_drr c_drr <"$tmp/drr"
read -r s_fifo r_fifo t_fifo c_fifo <"$tmp/fifo"
in_a "$B/xhca-bench" udp-sink -p 4791 -s 600 -i 1500 -j >"$tmp/sink" 2>/dev/null &
sink=$!
sleep 0.5
g3=$(genj --op ud-send-only --qpn 0x99 --qkey 0x99 --psn-step 0 --size 64 --duration "$SECONDS_RUN") || exit 1
wait $sink
got3=$(json_get 'd["received"]' <"$tmp/sink")
"$SCAPY_PY" - "$s_drr" "$r_drr" "$t_drr" "$c_drr" "$s_fifo" "$r_fifo" "$t_fifo" "$c_fifo" \
	"$(jf "$g3" 'd["sent"]')" "$got3" "$(jf "$g3" 'd["seconds"]')" "$(getconf CLK_TCK)" <<'PY'
import sys
v = [float(x) for x in sys.argv[1:]]
sd, rd, td, cd, sf, rf, tf, cf, su, ru, tu, hz = v
base = ru / tu
print(f"{'receiver':44s} {'sent':>9s} {'received':>9s} {'msgs/s':>10s} {'ratio':>7s}")
print(f"{'kernel UDP socket, recvmmsg (baseline)':44s} {su:9.0f} {ru:9.0f} {base:10.0f} {1:6.2f}x")
print(f"{'application via xhca (xhcad DRR, xhca-recv)':44s} {sd:9.0f} {rd:9.0f} {rd / td:10.0f} {rd / td / base:6.2f}x")
print(f"{'application via xhca (xhcad FIFO)':44s} {sf:9.0f} {rf:9.0f} {rf / tf:10.0f} {rf / tf / base:6.2f}x")
nd, nf = cd / hz * 1e9 / max(rd, 1), cf / hz * 1e9 / max(rf, 1)
print(f"xhcad CPU per message delivered: DRR {nd:.0f} ns, FIFO {nf:.0f} ns ({nd / nf:.2f}x)")
PY

echo
echo "== RDMA WRITE bandwidth into a memory region (${SECONDS_RUN} s each, UC WRITE ONLY, 2048-byte payloads)"
# The same traffic into a pre-translated region (xhca_rx places it) and into
# a fragmented one (xhcad's translation manager places it), the VA walking
# through a 32 MiB region. The receive side gets one CPU for both paths:
# the veth's NAPI runs threaded, pinned to CPU 1 with xhcad; the sender has
# CPU 0. Bandwidth = payload bytes placed / the sender's seconds. The
# ceiling: memcpy of the same chunks through the same area on CPU 1. Then
# the pre-translated region again under --icrc first (xhcad checks every
# WRITE's ICRC before it places a byte): the cost of that mode.
ip -n "$NS_A" link set "$IF_A" mtu 3000
ip -n "$NS_B" link set "$IF_B" mtu 3000
ip netns exec "$NS_A" sh -c "echo 1 > /sys/class/net/$IF_A/threaded" ||
	{ echo "bench: no threaded NAPI on $IF_A" >&2; exit 1; }
pin_rx() {
	for p in $(ps -eo pid,comm | awk -v n="napi/$IF_A-" 'index($2, n) == 1 {print $1}') "$XHCAD_PID"; do
		taskset -p -c 1 "$p" >/dev/null
	done
}
xhcad_start --hostmem-mb 128 --keep || { echo "bench: xhcad did not start" >&2; exit 1; }
pin_rx
UC=$(qp_up uc --action host --mtu 2048)
AREA=$((32 << 20))
PRE=$(xhca -j mr reg --len $AREA --contig | json_get 'd["rkey"]')
FRAG=$(xhca -j mr reg --len $AREA --scatter | json_get 'd["rkey"]')
host_frames() { xhca -j stats | json_get 'd["host"]["'"$1"'"]["frames"]'; }
wbench() { # RKEY -> "sent seconds placed_by_xhca_rx placed_by_xhcad gate_drops"
	local s0 p0 x0 g0 g
	stats_snap "$tmp/w.snap"
	x0=$(host_frames xlate_placed)
	g=$(genj --op uc-rdma-write-only --qpn "$UC" --psn-step 0 --size 2048 --rkey "$1" --va 0 \
		--va-step 2048 --va-span $AREA --duration "$SECONDS_RUN") || exit 1
	sleep 0.3
	echo "$(jf "$g" 'd["sent"]') $(jf "$g" 'd["seconds"]') $(stats_delta "$tmp/w.snap" placed)" \
		"$(( $(host_frames xlate_placed) - x0 )) $(stats_delta "$tmp/w.snap" drop_flowq_gate)"
}
read -r ps pt pp px pg <<<"$(wbench "$PRE")"
read -r fs ft fp fx fg <<<"$(wbench "$FRAG")"
xhcad_stop TERM
xhcad_start --hostmem-mb 128 --icrc first || { echo "bench: xhcad --icrc first did not start" >&2; exit 1; }
pin_rx
read -r is it ip ix ig <<<"$(wbench "$PRE")"
mc=$(taskset -c 1 "$B/xhca-bench" memcpy -c 2048 -a $AREA -s 1 -j) || exit 1
"$SCAPY_PY" - "$ps" "$pt" "$pp" "$fs" "$ft" "$fx" "$fg" "$is" "$it" "$ix" \
	"$(jf "$mc" 'd["gbytes_per_s"]')" <<'PY'
import sys
ps, pt, pp, fs, ft, fx, fg, is_, it, ix, mc = (float(x) for x in sys.argv[1:])
pre, frag, first = pp * 2048 / pt / 1e9, fx * 2048 / ft / 1e9, ix * 2048 / it / 1e9
print(f"{'placement':46s} {'sent':>9s} {'placed':>9s} {'GB/s':>7s} {'ratio':>7s}")
print(f"{'fragmented region, by xhcad (baseline)':46s} {fs:9.0f} {fx:9.0f} {frag:7.2f} {1:6.2f}x")
print(f"{'pre-translated region, by xhca_rx':46s} {ps:9.0f} {pp:9.0f} {pre:7.2f} {pre / frag if frag else 0:6.2f}x")
print(f"{'pre-translated, --icrc first (xhcad checks)':46s} {is_:9.0f} {ix:9.0f} {first:7.2f} {first / frag if frag else 0:6.2f}x")
print(f"{'memcpy, same chunks and area (ceiling)':46s} {'':9s} {'':9s} {mc:7.2f} {mc / frag if frag else 0:6.2f}x")
print(f"(--icrc first places at {first / pre if pre else 0:.2f}x the rate of --icrc after, xhca_rx's placement)")
print(f"(the fragmented run's flow queue shed {fg:.0f} WRITEs at its gate: xhcad could not keep up;"
      f" the rest of what was sent and not placed was lost in the veth ring)")
PY
xhcad_stop TERM

echo
echo "== multicast: copies delivered per second, 8 members (${SECONDS_RUN} s each, 64-byte UD SENDs to 239.1.1.1)"
# xhca: one session with 8 UD QPs joined to the group (xhca-apptest mcast),
# the packet stored once, a descriptor per member. The kernel: 8 UDP sockets
# on port 4791 joined to the group, no XDP program. Same frames, same time.
ip -n "$NS_A" link set "$IF_A" mtu 1500
ip -n "$NS_B" link set "$IF_B" mtu 1500
# NAPI back in the sender's softirq, as in the sections before 4: the other
# CPU is for the receivers (xhcad and the application; the sockets' reader).
ip netns exec "$NS_A" sh -c "echo 0 > /sys/class/net/$IF_A/threaded"
MCMAC=01:00:5e:01:01:01
xhcad_start || { echo "bench: xhcad did not start" >&2; exit 1; }
nsenter --net=/run/netns/"$NS_A" "$B/xhca-apptest" mcast "$IF_A" 239.1.1.1 8 512 1 nocheck \
	>"$tmp/mc" 2>"$tmp/mc.err" &
mcpid=$!
APPS+=("$mcpid")
ready_file() { for _ in $(seq 100); do grep -q ready "$1" && return 0; sleep 0.05; done; return 1; }
ready_file "$tmp/mc" || { echo "bench: the multicast application did not start" >&2; exit 1; }
t0=$(cpu_ticks "$XHCAD_PID")
tm0=$(stat_of to_mcast)
g4=$(in_b taskset -c 0 "$B/xhca-gen" -i "$IF_B" --dst-mac "$MCMAC" --src "$IP_B" -j \
	--op ud-send-only --qpn 0xffffff --dst 239.1.1.1 --qkey 0x5151 --sqp 0x77 --size 64 \
	--psn-step 0 --duration "$SECONDS_RUN") || exit 1
wait "$mcpid"
t1=$(cpu_ticks "$XHCAD_PID")
tm=$(( $(stat_of to_mcast) - tm0 ))
mcs=$(xhca -j status)
xhcad_stop TERM
in_a "$B/xhca-bench" udp-sink -m 239.1.1.1 -I "$IF_A" -n 8 -s 600 -i 1500 -j >"$tmp/ksink" 2>/dev/null &
ksink=$!
sleep 0.5
g5=$(in_b taskset -c 0 "$B/xhca-gen" -i "$IF_B" --dst-mac "$MCMAC" --src "$IP_B" -j \
	--op ud-send-only --qpn 0xffffff --dst 239.1.1.1 --qkey 0x5151 --sqp 0x77 --size 64 \
	--psn-step 0 --duration "$SECONDS_RUN") || exit 1
wait $ksink
"$SCAPY_PY" - "$(grep copies "$tmp/mc")" "$g4" "$tm" "$mcs" "$((t1 - t0))" "$(getconf CLK_TCK)" \
	"$(cat "$tmp/ksink")" "$g5" <<'PY'
import json, sys
app, g4, tm, st, ticks, hz, ks, g5 = sys.argv[1:]
app, g4, st, ks, g5 = (json.loads(x) for x in (app, g4, st, ks, g5))
tm, ticks, hz = int(tm), int(ticks), int(hz)
x = app["copies"] / g4["seconds"]
k = ks["received"] / g5["seconds"]
print(f"{'receiver':50s} {'sent':>9s} {'copies':>9s} {'copies/s':>10s} {'ratio':>7s}")
print(f"{'kernel IP multicast, 8 UDP sockets (baseline)':50s} {g5['sent']:9d} {ks['received']:9d} {k:10.0f} {1:6.2f}x")
print(f"{'xhca replication, 8 UD QPs (xhcad, one session)':50s} {g4['sent']:9d} {app['copies']:9d} {x:10.0f} {x / k if k else 0:6.2f}x")
rep = st["mcast"]["replicated"]
print(f"UMEM frames per multicast packet: {tm / rep if rep else 0:.2f} ({tm} frames to the replication "
      f"queue, {rep} packets replicated); largest reference count {st['mcast']['max_refs']}; "
      f"xhcad CPU per copy {ticks / hz * 1e9 / max(app['copies'], 1):.0f} ns; "
      f"{st['mcast']['credit_stalls']} credit stalls; UMEM {st['umem']}")
PY

echo
echo "== the proxy QP: completions through the reorderer, their latency, ATOMICs per second"
# 1. The same full-speed UD SENDs (64 bytes, ${SECONDS_RUN} s) to an application
#    whose CQ is an ordinary one (baseline) and to one whose CQ is a proxy CQ:
#    every completion then goes from the main thread to the proxy thread,
#    through its reorderer, which writes the CQ. Messages per second.
# 2. The same, paced at 2000 messages/s for 2 s (one frame at a time; faster,
#    xhca-gen sends bursts, whose queueing would be what is measured): the time from xhca_rx taking
#    the message to the application polling its completion, median and 99th
#    percentile; what the reorderer adds is the difference.
# 3. FETCH_ADDs: 20 bursts of 1000 to one QP whose ATOMICs the proxy executes
#    (a filter offloads them) and 20 to one whose ATOMICs the main thread
#    executes (no filter), interleaved; the application watches the word in
#    its memory: the time from its first change to its last is the
#    executor's. ATOMICs per second.
xhcad_start --watermarks 1024,256 --proxy-limit 1024 --umem-frames 16384 ||
	{ echo "bench: xhcad did not start" >&2; exit 1; }
recv_run() { # NAME RECV-OPTIONS... -- GEN-OPTIONS...: the application's summary line
	local name=$1 q g
	shift
	local ro=() go=()
	while [ "$1" != -- ]; do ro+=("$1"); shift; done
	shift
	go=("$@")
	app "$name" "$B/xhca-recv" -i "$IF_A" --type ud --qkey 0x99 --bufs 4096 --cq-depth 8192 \
		--buf-size 256 -q -j --timeout 2 "${ro[@]}"
	q=$(ready "$name") || exit 1
	g=$(genj --op ud-send-only --qpn "$q" --qkey 0x99 --psn-step 0 --size 64 "${go[@]}") || exit 1
	eval wait "\$PID_$name"
	echo "$g" >"$tmp/$name.gen"
	grep '"received"' "$tmp/$name"
}
n_plain=$(recv_run plain -- --duration "$SECONDS_RUN")
n_proxy=$(recv_run proxy --proxy-cq -- --duration "$SECONDS_RUN")
l_plain=$(recv_run lplain --latency -- --rate 2000 --duration 2)
l_proxy=$(recv_run lproxy --proxy-cq --latency -- --rate 2000 --duration 2)
app_fed AT 7 "$B/xhca-apptest" atomic2 "$IF_A" "$IP_A" "$IP_B"
ready AT >/dev/null || exit 1
line=$(grep '"ready"' "$tmp/AT")
Q1=$(echo "$line" | json_get 'd["qpn"]') Q2=$(echo "$line" | json_get 'd["qpn2"]')
R2=$(echo "$line" | json_get 'd["rkey"]') V2=$(echo "$line" | json_get 'd["iova"]')
xhca filter add "$Q1" --op fetch-add >/dev/null || exit 1
: >"$tmp/at.proxy"; : >"$tmp/at.plain"
psn=0 w=0
for r in $(seq 20); do
	for q in "$Q2" "$Q1"; do
		n0=$(grep -c '"ns"' "$tmp/AT")
		echo "watch 1000" >&7
		w=$((w + 1))
		for _ in $(seq 100); do [ "$(grep -c '"watching"' "$tmp/AT")" -ge $w ] && break; sleep 0.01; done
		genj --op rc-fetch-add --qpn "$q" --psn "$psn" --va $((V2 + 256)) --rkey "$R2" \
			--swap-add 1 --count 1000 >/dev/null || exit 1
		for _ in $(seq 200); do [ "$(grep -c '"ns"' "$tmp/AT")" -gt "$n0" ] && break; sleep 0.01; done
		grep '"ns"' "$tmp/AT" | tail -n 1 >>"$tmp/at.$([ "$q" = "$Q1" ] && echo proxy || echo plain)"
	done
	psn=$((psn + 1000))
done
echo quit >&7
eval wait "\$PID_AT"
exec 7>&-
pxs=$(xhca -j proxy show)
xhcad_stop TERM
"$SCAPY_PY" - "$n_plain" "$n_proxy" "$l_plain" "$l_proxy" "$tmp/at.plain" "$tmp/at.proxy" "$pxs" <<'PY'
import json, sys
npl, npx, lpl, lpx = (json.loads(x) for x in sys.argv[1:5])
def rate(path):
    rows = [json.loads(l) for l in open(path)]
    done = [r for r in rows if r["done"] and r["ns"] > 0]
    n = sum(r["n"] - 1 for r in done)
    ns = sum(r["ns"] for r in done)
    return (n / ns * 1e9 if ns else 0), len(done), len(rows)
apl, dpl, rpl = rate(sys.argv[5])
apx, dpx, rpx = rate(sys.argv[6])
px = json.loads(sys.argv[7])
b = npl["msgs_per_s"]
print(f"{'completions (64-byte UD SENDs, full speed)':52s} {'received':>9s} {'msgs/s':>10s} {'ratio':>7s}")
print(f"{'ordinary CQ, written by the main thread (baseline)':52s} {npl['received']:9d} {b:10.0f} {1:6.2f}x")
print(f"{'proxy CQ, through the reorderer':52s} {npx['received']:9d} {npx['msgs_per_s']:10.0f} {npx['msgs_per_s'] / b if b else 0:6.2f}x")
print(f"{'latency, rx to poll (2000 msgs/s)':52s} {'p50 us':>9s} {'p99 us':>10s} {'ratio':>7s}")
print(f"{'ordinary CQ (baseline)':52s} {lpl['lat_p50_ns'] / 1e3:9.1f} {lpl['lat_p99_ns'] / 1e3:10.1f} {1:6.2f}x")
r50 = lpx['lat_p50_ns'] / lpl['lat_p50_ns'] if lpl['lat_p50_ns'] else 0
print(f"{'proxy CQ (the reorderer adds the difference)':52s} {lpx['lat_p50_ns'] / 1e3:9.1f} {lpx['lat_p99_ns'] / 1e3:10.1f} {r50:6.2f}x")
print(f"{'FETCH_ADD executed (20 bursts of 1000)':52s} {'bursts':>9s} {'ops/s':>10s} {'ratio':>7s}")
print(f"{'by the main thread, normal path (baseline)':52s} {dpl:6d}/{rpl:<2d} {apl:10.0f} {1:6.2f}x")
print(f"{'by the proxy thread, offloaded':52s} {dpx:6d}/{rpx:<2d} {apx:10.0f} {apx / apl if apl else 0:6.2f}x")
print(f"(the proxy executed {px['atomics']} ATOMICs; {px['no_offload']} held back by its load limit; "
      f"{px['released']} completions released in order, {px['skipped']} no-ops)")
PY

# xhca-rc --bench on each side: a 64 B ping-pong, 64 B SENDs (at most 512
# outstanding) beside a TCP stream of 64 B messages (TCP_NODELAY), 64 KiB
# RDMA WRITEs (at most 32 outstanding) beside a TCP stream of 64 KiB. TCP
# is the two applications' own side channel: same namespaces, same veth
# (MTU 4200). At path MTU 2048, then 4096 (frames of two AF_XDP descriptors
# each way).
topo_cleanup
XHCAD_PIDS=()
TOPO_MTU=4200 topo_setup || { echo "bench: cannot build the veth topology" >&2; exit 1; }
trap 'apps_kill; topo_cleanup; rm -rf "$tmp"' EXIT # topo_setup set its own
xhcad_start --hostmem-mb 64 || { echo "bench: xhcad did not start" >&2; exit 1; }
xhcad_start_b --hostmem-mb 64 || { echo "bench: the second xhcad did not start" >&2; exit 1; }
for mtu in 2048 4096; do
	echo
	echo "== two xhca hosts: RC through libxhca beside TCP over the same veth pair" \
		"(path MTU $mtu, ${SECONDS_RUN} s each)"
	in_b "$B/xhca-rc" -i "$IF_B" -a "$IP_B" --mtu "$mtu" --write-mib 4 \
		--bench "$SECONDS_RUN" >"$tmp/rc-server" 2>&1 &
	srv=$!
	(
		set -o pipefail
		in_a "$B/xhca-rc" -i "$IF_A" -a "$IP_A" -c "$IP_B" --mtu "$mtu" --write-mib 4 \
			--bench "$SECONDS_RUN" 2>&1 | grep -v '^client: \(RC QP\|ok: ping\)'
	) || echo "bench: the client side failed" >&2
	wait "$srv" || { echo "bench: the server side failed:" >&2; cat "$tmp/rc-server" >&2; }
done
for i in "$IF_A" "$IF_B"; do
	"$B/xhca" -i "$i" status | grep -E '^requester:' | sed "s/^/$i /"
done
