#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make bench: speed, each figure beside a baseline measured in the same run.
#  1. ns/packet of xhca_rx under BPF_PROG_TEST_RUN beside the empty XDP
#     program (xhca-bench prog).
#  2. packets per second through a veth: xhca-gen in one namespace sends
#     RC SENDs in PSN order at full speed; received by xhca_rx (accepted, QP
#     action drop) and, as the baseline, by a kernel UDP socket on port 4791
#     with no XDP program attached. Same frames, same duration.
set -u
. "$(dirname "$0")/lib.sh"
need_root bench
SECONDS_RUN=${BENCH_SECONDS:-3}

echo "== xhca_rx per packet (BPF_PROG_TEST_RUN)"
"$B/xhca-bench" prog || exit 1

echo
echo "== packets per second through a veth (${SECONDS_RUN} s each, 64-byte RC SEND payload)"
topo_setup || { echo "bench: cannot build the veth topology" >&2; exit 1; }
genj() {
	in_b "$B/xhca-gen" -i "$IF_B" --dst-mac "$MAC_A" --src "$IP_B" --dst "$IP_A" -j "$@"
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
