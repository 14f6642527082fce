#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make bench: speed, each figure beside a baseline measured in the same run.
#  1. ns/packet of xhca_rx under BPF_PROG_TEST_RUN beside the empty XDP
#     program (xhca-bench prog).
#  2. packets per second through a veth: xhca-gen in one namespace sends
#     RC SENDs in PSN order at full speed; received by xhca_rx (accepted, QP
#     action drop) and, as the baseline, by a kernel UDP socket on port 4791
#     with no XDP program attached. Same frames, same duration.
#  3. messages per second delivered to an application through xhca (xhcad
#     and xhca-recv), beside a kernel UDP socket receiving the same traffic
#     with recvmmsg; xhcad's CPU time per message with the DRR scheduler
#     and with FIFO, and the scheduler's decision alone (xhca-bench sched).
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
echo "== packets per second through a veth (${SECONDS_RUN} s each, 64-byte RC SEND payload)"
topo_setup || { echo "bench: cannot build the veth topology" >&2; exit 1; }
# The sender on one CPU: on a veth the RX queue follows the sending CPU, and
# RC in PSN order must stay on one queue, as a NIC's RSS keeps a flow.
genj() {
	in_b taskset -c 0 "$B/xhca-gen" -i "$IF_B" --dst-mac "$MAC_A" --src "$IP_B" --dst "$IP_A" \
		-j "$@"
}
jf() { "$SCAPY_PY" -c 'import json,sys; d=json.loads(sys.argv[1]); print('"$2"')' "$1"; }

xhcad_start || { echo "bench: xhcad did not start" >&2; exit 1; }
RC=$(qp_up rc --epsn 0 --action drop)
before=$(stat_of accept_drop)
g1=$(genj --op rc-send-only --qpn "$RC" --psn 0 --size 64 --duration "$SECONDS_RUN") || exit 1
sleep 0.2
acc=$(( $(stat_of accept_drop) - before ))
others=$(xhca -j stats | json_get 'sum(v["packets"] for k, v in d["reasons"].items() if k.startswith("drop_"))')
xhcad_stop TERM

in_a "$B/xhca-bench" udp-sink -p 4791 -s 600 -i 1500 -j >"${TMPDIR:-/tmp}/xhca-sink.$$" 2>/dev/null &
sink=$!
sleep 0.5
g2=$(genj --op rc-send-only --qpn "$RC" --psn 0 --size 64 --duration "$SECONDS_RUN") || exit 1
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
print(f"{'xhca_rx, RC SEND accepted':40s} {s1:10.0f} {acc:10.0f} {x:12.0f} {x / u if u else 0:6.2f}x")
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
