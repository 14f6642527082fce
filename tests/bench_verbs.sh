#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make bench, end to end: Debian's unmodified perftest between two xhca
# hosts (an xhcad in each namespace of a veth pair, the programs on xhca's
# verbs library through xhca exec) beside TCP between the same namespaces
# over the same veth pair with no XDP program attached: what a user has
# without xhca. Same machine, same run. Per figure: xhca's, TCP's, their
# ratio and the goal (issue 32's; docs/bench.md has them all).
#  - 64 B latency, one way (half the round trip), median and 99th percentile:
#    ib_send_lat and ib_write_lat (t_typical, 99%) / sockperf ping-pong over
#    TCP (50% and 99% percentiles; its ends sleep in epoll between messages);
#    and the medians beside a TCP ping-pong whose ends spin on non-blocking
#    sockets, as perftest spins on its CQ (xhca-bench tcp-pingpong --spin);
#  - 64 KiB bandwidth: ib_write_bw and ib_read_bw / iperf3 (one TCP stream,
#    64 KiB writes);
#  - 64 B messages per second: ib_send_bw / sockperf throughput over TCP
#    (64 B messages, TCP_NODELAY);
#  - CPU: the machine's busy CPU time (both hosts are on it) during each
#    run, per MiB moved and per message.
# BENCH_SECONDS: seconds per throughput run (default 5); BENCH_LAT_ITERS:
# latency iterations (default 20000); BENCH_MTU: the link MTU (default 4200,
# path MTU 4096; make bench runs 1500 too, path MTU 1024: a figure's name
# then says so). Each run's figures are kept in
# BENCH_HISTORY (default build/bench_history.tsv) and the table shows the
# last run's ratio beside each (tests/bench_history.py).
set -u
. "$(dirname "$0")/lib.sh"
need_root bench_verbs
SECS=${BENCH_SECONDS:-5}
ITERS=${BENCH_LAT_ITERS:-20000}
for p in ib_send_lat sockperf iperf3; do
	command -v "$p" >/dev/null || { echo "bench_verbs: SKIPPED: $p is not installed (make deps)"; exit 0; }
done
tmp=$(mktemp -d)
MTU=${BENCH_MTU:-4200}
TOPO_MTU=$MTU topo_setup || { echo "bench_verbs: cannot build the veth topology" >&2; exit 1; }
trap 'apps_kill; topo_cleanup; [ -n "${BENCH_KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"' EXIT
# BENCH_NAPI_THREADED=1: both veth ends' NAPI in a kernel thread of its own
# (the receive side off the sender's CPU, as a NIC's interrupt is)
if [ -n "${BENCH_NAPI_THREADED:-}" ]; then
	ip netns exec "$NS_A" sh -c "echo 1 > /sys/class/net/$IF_A/threaded" &&
		ip netns exec "$NS_B" sh -c "echo 1 > /sys/class/net/$IF_B/threaded" ||
		{ echo "bench_verbs: no threaded NAPI" >&2; exit 1; }
fi

# busy CPU seconds of the whole machine so far (user, nice, system, irq,
# softirq, steal): both hosts run here
busy() { awk '/^cpu / { printf "%.3f\n", ($2 + $3 + $4 + $7 + $8 + $9) / 100 }' /proc/stat; }
# result NAME VALUE UNIT CPU: one line of results for the table
result() { echo "$1 $2 $3" >>"$tmp/results"; }

# ---- TCP, no XDP program on the veth ----------------------------------------
in_b sockperf sr --tcp -i "$IP_B" -p 11111 >/dev/null 2>&1 &
sp=$!
wait_listen "$NS_B" 11111 || { echo "bench_verbs: sockperf server did not start" >&2; exit 1; }
in_a sockperf pp --tcp -i "$IP_B" -p 11111 -m 64 -t "$SECS" >"$tmp/tcp.pp" 2>&1
# the same ping-pong, both ends spinning (perftest's way of waiting)
in_b timeout 120 "$B/xhca-bench" tcp-pingpong -l "$IP_B" -p 11112 --spin >/dev/null 2>&1 &
pp=$!
wait_listen "$NS_B" 11112 || { echo "bench_verbs: tcp-pingpong server did not start" >&2; exit 1; }
in_a "$B/xhca-bench" tcp-pingpong -c "$IP_B" -p 11112 --spin -n "$ITERS" -j >"$tmp/tcp.spin" 2>&1
wait "$pp" 2>/dev/null
c0=$(busy)
in_a sockperf tp --tcp -i "$IP_B" -p 11111 -m 64 -t "$SECS" >"$tmp/tcp.tp" 2>&1
c1=$(busy)
echo "$c0 $c1" >"$tmp/tcp.tp.cpu"
kill "$sp" 2>/dev/null; wait "$sp" 2>/dev/null
in_b iperf3 -s -B "$IP_B" -p 5201 -1 >/dev/null 2>&1 &
ip_srv=$!
wait_listen "$NS_B" 5201 || { echo "bench_verbs: iperf3 server did not start" >&2; exit 1; }
c0=$(busy)
in_a iperf3 -c "$IP_B" -p 5201 -t "$SECS" -l 65536 -J >"$tmp/tcp.bw" 2>&1
c1=$(busy)
echo "$c0 $c1" >"$tmp/tcp.bw.cpu"
wait "$ip_srv" 2>/dev/null

# ---- xhca: an xhcad on each end, perftest through xhca exec ------------------
# BENCH_XHCAD_ARGS: more options for both xhcads (e.g. --poll-us 0)
# shellcheck disable=SC2086
# (--xdp-ack on: both ends run xhca_rx, so frames XDP_TX sends into the
# veth reach the peer at once)
xhcad_start --hostmem-mb 128 --xdp-ack on ${BENCH_XHCAD_ARGS:-} ||
	{ echo "bench_verbs: xhcad did not start" >&2; exit 1; }
# shellcheck disable=SC2086
xhcad_start_b --hostmem-mb 128 --xdp-ack on ${BENCH_XHCAD_ARGS:-} ||
	{ echo "bench_verbs: the second xhcad did not start" >&2; exit 1; }
[ -n "${BENCH_XHCAD_CHRT:-}" ] && for p in "$XHCAD_PID" "$XHCAD_PID_B"; do
	# shellcheck disable=SC2086
	chrt -a -p $BENCH_XHCAD_CHRT "$p" >/dev/null
done
for _ in $(seq 100); do
	ip -n "$NS_A" link show "$IF_A" | grep -q 'state UP' &&
		ip -n "$NS_B" link show "$IF_B" | grep -q 'state UP' && break
	sleep 0.05
done
# pt NAME PROG ARGS: the server on B, the client on A; the client's output
# in $tmp/NAME, the CPU seconds around it in $tmp/NAME.cpu
pt() {
	local name=$1 srv c0 c1
	shift
	# BENCH_ONLY: a regular expression of the runs to make (default all)
	[[ $name =~ ${BENCH_ONLY:-.} ]] || { echo "0 0" >"$tmp/$name.cpu"; : >"$tmp/$name"; : >"$tmp/$name.skip"; return 0; }
	in_b timeout 120 "$B/xhca" -i "$IF_B" exec -- "$@" -F -x 1 -p 18515 >"$tmp/$name.srv" 2>&1 &
	srv=$!
	wait_listen "$NS_B" 18515 || { echo "bench_verbs: $name: no server" >&2; return 1; }
	c0=$(busy)
	in_a timeout 120 "$B/xhca" -i "$IF_A" exec -- "$@" -F -x 1 -p 18515 "$IP_B" >"$tmp/$name" 2>&1
	c1=$(busy)
	wait "$srv"
	echo "$c0 $c1" >"$tmp/$name.cpu"
	grep -q '^ *[0-9]' "$tmp/$name" || { echo "bench_verbs: $name failed:" >&2; tail -n 5 "$tmp/$name" "$tmp/$name.srv" >&2; }
}
pt send_lat ib_send_lat -s 64 -n "$ITERS"
pt write_lat ib_write_lat -s 64 -n "$ITERS"
pt write_bw ib_write_bw -s 65536 -D "$SECS"
pt read_bw ib_read_bw -s 65536 -D "$SECS"
pt send_bw ib_send_bw -s 64 -D "$SECS"
for i in "$IF_A" "$IF_B"; do "$B/xhca" -i "$i" -j status >"$tmp/status.$i"; done
xhcad_stop
XHCAD_PID=$XHCAD_PID_B xhcad_stop

"$SCAPY_PY" - "$tmp" "$SECS" "$MTU" <<'PY'
import json, os, re, sys
tmp, secs = sys.argv[1], float(sys.argv[2])
at = "" if sys.argv[3] == "4200" else f" (MTU {sys.argv[3]})"

def lines(name):
    try:
        return open(f"{tmp}/{name}").read().splitlines()
    except FileNotFoundError:  # (not run: BENCH_ONLY)
        return []

def cpu(name):
    a, b = (float(x) for x in open(f"{tmp}/{name}.cpu").read().split())
    return b - a

def perf_row(name):
    """perftest's result line: the row that starts with the size."""
    for l in lines(name):
        f = l.split()
        if len(f) >= 5 and f[0].isdigit() and f[1].isdigit():
            return [float(x) for x in f]
    return None

def lat(name):  # t_typical, 99% (perftest 4.5: bytes iters min max typical avg stdev 99% 99.9%)
    r = perf_row(name)
    return (r[4], r[7]) if r else (0, 0)

def bw(name):   # bytes iters peak avg[MB/s] msgrate[Mpps]
    r = perf_row(name)
    return (r[3], r[4]) if r else (0, 0)

def sockperf_lat():
    t = open(f"{tmp}/tcp.pp").read()
    p50 = re.search(r"<MEDIAN>\s*observation\s*=\s*([\d.]+)", t) or re.search(r"50\.000\s*=\s*([\d.]+)", t)
    p99 = re.search(r"99\.000\s*=\s*([\d.]+)", t)
    return (float(p50.group(1)) if p50 else 0, float(p99.group(1)) if p99 else 0)

def spin_lat():
    try:
        return json.load(open(f"{tmp}/tcp.spin"))["p50_us"]
    except (ValueError, KeyError):
        return 0

def sockperf_rate():
    m = re.search(r"Message Rate is\s*([\d.]+)", open(f"{tmp}/tcp.tp").read())
    return float(m.group(1)) if m else 0

def iperf_bw():
    d = json.load(open(f"{tmp}/tcp.bw"))
    return d["end"]["sum_received"]["bits_per_second"] / 8 / 1e6

def ratio(a, b):
    return a / b if b else 0

rows = []

def add(name, row):  # (none for a run BENCH_ONLY left out)
    if not os.path.exists(f"{tmp}/{name}.skip"):
        rows.append(row)

tl50, tl99 = sockperf_lat()
for name, label in (("send_lat", "ib_send_lat"), ("write_lat", "ib_write_lat")):
    x50, x99 = lat(name)
    add(name, (f"64 B latency, {label} (typical / 50%), us", x50, tl50, ratio(x50, tl50), ""))
    add(name, (f"64 B latency, {label} (99%), us", x99, tl99, ratio(x99, tl99), ""))
ts50 = spin_lat()
for name, label in (("send_lat", "ib_send_lat"), ("write_lat", "ib_write_lat")):
    x50, _ = lat(name)
    add(name, (f"64 B latency, {label} vs spinning TCP, us", x50, ts50, ratio(x50, ts50),
                 "<= 1x" if name == "send_lat" and not at else ""))
tbw = iperf_bw()
for name, label in (("write_bw", "ib_write_bw"), ("read_bw", "ib_read_bw")):
    x, _ = bw(name)
    goal = "" if name != "write_bw" else ">= 0.7x" if at else ">= 1x"
    add(name, (f"64 KiB bandwidth, {label}, MB/s", x, tbw, ratio(x, tbw), goal))
_, mpps = bw("send_bw")
trate = sockperf_rate()
add("send_bw", ("64 B messages/s, ib_send_bw", mpps * 1e6, trate, ratio(mpps * 1e6, trate),
             "" if at else ">= 1x"))
# CPU per MiB moved and per message, both hosts (the machine's busy time)
xw, _ = bw("write_bw")
xmib, tmib = xw * secs / 1.048576, tbw * secs / 1.048576
xc, tc = cpu("write_bw"), cpu("tcp.bw")
add("write_bw", ("CPU ms per MiB, 64 KiB writes", 1e3 * xc / xmib if xmib else 0,
             1e3 * tc / tmib if tmib else 0, ratio(xc / xmib if xmib else 0, tc / tmib if tmib else 0),
             "" if at else "<= 1.5x"))
xm, tm = mpps * 1e6 * secs, trate * secs
xc, tc = cpu("send_bw"), cpu("tcp.tp")
add("send_bw", ("CPU us per 64 B message", 1e6 * xc / xm if xm else 0, 1e6 * tc / tm if tm else 0,
             ratio(xc / xm if xm else 0, tc / tm if tm else 0), ""))
with open(f"{tmp}/rows.tsv", "w") as f:
    for label, x, t, r, goal in rows:
        f.write(f"{label}{at}\t{x}\t{t}\t{r}\t{goal}\n")
PY
# the table, beside each figure's last run; this run kept (BENCH_HISTORY,
# default build/bench_history.tsv)
"$SCAPY_PY" "$(dirname "$0")/bench_history.py" "${BENCH_HISTORY:-$B/bench_history.tsv}" \
	"$(date -u +%Y-%m-%dT%H:%M:%SZ) $(git -C "$(dirname "$0")/.." describe --always --dirty 2>/dev/null || echo unknown)" \
	<"$tmp/rows.tsv"
