#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Where the time goes in one perftest run between two xhca hosts (the
# topology of bench_engines.sh): `perf record -a -g` over the whole machine
# for PROFILE_SECONDS in the middle of the run, then perf report's top
# symbols, by thread name and by symbol (both hosts are on the machine),
# and xhca_rx's samples by source line (xhca-bench jit-lines).
#   tests/bench_profile.sh ib_send_bw -s 64 -q 8
# PROFILE_MTU (4200), PROFILE_QUEUES (one per CPU, 2 to 16), PROFILE_ENGINES
# (as many as queues, at most 8), PROFILE_SECONDS (3), PROFILE_TOP (40);
# PROFILE_OUT: keep perf.data and the reports there; PROFILE_XHCAD_ARGS:
# more options for both xhcads (e.g. --xdp-ack off).
set -u
. "$(dirname "$0")/lib.sh"
need_root bench_profile
[ $# -ge 1 ] || { echo "usage: $0 PERFTEST [ARGS...]" >&2; exit 2; }
for p in perf "$1"; do
	command -v "$p" >/dev/null || { echo "bench_profile: SKIPPED: $p is not installed" >&2; exit 0; }
done
cpus=$(nproc)
Q=${PROFILE_QUEUES:-$(( cpus < 2 ? 2 : cpus > 16 ? 16 : cpus ))}
E=${PROFILE_ENGINES:-$(( Q < 8 ? Q : 8 ))}
SECS=${PROFILE_SECONDS:-3}
TOP=${PROFILE_TOP:-40}
out=${PROFILE_OUT:-$(mktemp -d)}
mkdir -p "$out"
trap 'apps_kill; topo_cleanup; [ -n "${PROFILE_OUT:-}" ] || rm -rf "$out"' EXIT
TOPO_QUEUES=$Q TOPO_MTU=${PROFILE_MTU:-4200} topo_setup || { echo "bench_profile: no topology" >&2; exit 1; }
# (--xdp-ack on as in bench_verbs.sh: both ends run xhca_rx)
xhcad_start --hostmem-mb 256 --engines "$E" --xdp-ack on ${PROFILE_XHCAD_ARGS:-} &&
	xhcad_start_b --hostmem-mb 256 --engines "$E" --xdp-ack on ${PROFILE_XHCAD_ARGS:-} ||
	{ echo "bench_profile: xhcad did not start" >&2; exit 1; }
links_up
in_b timeout $((SECS + 60)) "$B/xhca" -i "$IF_B" exec -- "$@" -F -x 1 -p 18515 -D $((SECS + 4)) \
	>"$out/server.txt" 2>&1 &
srv=$!
sleep 1
in_a timeout $((SECS + 60)) "$B/xhca" -i "$IF_A" exec -- "$@" -F -x 1 -p 18515 -D $((SECS + 4)) "$IP_B" \
	>"$out/client.txt" 2>&1 &
cli=$!
sleep 2
perf record -a -g -o "$out/perf.data" -- sleep "$SECS" >/dev/null 2>&1
wait "$cli" "$srv"
echo "== $* on $E engine(s) per host, $Q queues, MTU ${PROFILE_MTU:-4200}, $cpus CPUs"
awk '$1 ~ /^[0-9]+$/ && NF >= 5' "$out/client.txt"
echo "== by thread"
perf report -i "$out/perf.data" --no-children --sort comm --stdio -g none 2>/dev/null |
	grep -v '^#' | grep '%' | head -n 20
echo "== by symbol"
perf report -i "$out/perf.data" --no-children --sort sym --stdio -g none 2>/dev/null |
	grep -v '^#' | grep '%' | head -n "$TOP"
# xhca_rx's samples by source line: perf names a sample in a BPF program by
# its address only, and xhca-bench jit-lines tells where each line of the
# loaded program starts (both hosts' xhca_rx)
echo "== xhca_rx by source line (% of all samples; a stall often lands on the line after it)"
for h in a b; do
	if [ $h = a ]; then id=$(in_a "$B/xhca" -i "$IF_A" -j status | json_get 'd["prog_id"]')
	else id=$(in_b "$B/xhca" -i "$IF_B" -j status | json_get 'd["prog_id"]'); fi
	[ -n "$id" ] && "$B/xhca-bench" jit-lines --prog "$id"
done >"$out/lines.txt" 2>/dev/null
perf script -i "$out/perf.data" -F ip,sym -G 2>/dev/null >"$out/ips.txt"
python3 - "$out/lines.txt" "$out/ips.txt" "$TOP" <<'PY'
import bisect, collections, sys
lines = sorted((int(a, 16), rest) for a, rest in
               (l.rstrip("\n").split(" ", 1) for l in open(sys.argv[1]) if " " in l))
addrs = [a for a, _ in lines]
total, hits = 0, collections.Counter()
for l in open(sys.argv[2]):
    f = l.split()
    if not f:
        continue
    total += 1
    if len(f) > 1 and f[1].startswith("bpf_prog_") and addrs:
        i = bisect.bisect_right(addrs, int(f[0], 16)) - 1
        if i >= 0:
            hits[lines[i][1]] += 1
for what, n in hits.most_common(int(sys.argv[3]) // 2):
    print("%8.2f%%  %s" % (100.0 * n / max(total, 1), what[:110]))
PY
