#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make bench's xhca_rx figures (xhca-bench prog), run short: every case is
# measured on the path it names (the bench checks each packet's reason in
# xhca_stats, and for a placed WRITE the payload in host memory, and exits
# 1 otherwise), and the placement table sets each placed case's GB/s beside
# memcpy of the same chunk. xhca-bench crc: every size by each
# implementation of the ICRC's CRC-32 this CPU has, beside zlib's. xhca-bench
# tcp-pingpong, the spinning TCP
# baseline of bench_verbs.sh, between two namespaces: both ways of waiting
# give a median and a 99th percentile; a peer that does not echo, and its
# bad uses, are refused with a reason. xhca-bench jit-lines: the loaded
# xhca_rx's lines where its JIT image has them. No figure
# is judged: only that each is there.
set -u
. "$(dirname "$0")/../lib.sh"
need_root bench_prog
err=$(mktemp)
trap 'rm -f "$err"' EXIT
out=$("$B/xhca-bench" prog -n 200 -r 1 -j 2>"$err"); rc=$?
check_eq "bench_prog: xhca-bench prog runs every case on its path (exit)" "$rc" 0 || cat "$err"
get() { json_get "$1" <<<"$out" 2>/dev/null; }
check_eq "bench_prog: ... the placed WRITE cases among them (RC 1 KiB, UC 1 and 4 KiB)" \
	"$(get 'sum(1 for c in d["cases"] if c["name"].endswith(" placed"))')" 3
check_eq "bench_prog: ... each with a time and a ratio to the empty program" \
	"$(get 'all(c["single_ns"] > 0 and c["single_ratio"] > 0 for c in d["cases"])')" True
check_eq "bench_prog: the placement table: the two batch cases, GB/s beside memcpy's" \
	"$(get '[c["name"] for c in d["placement"] if c["gbytes_per_s"] > 0 and c["memcpy_gbytes_per_s"] > 0]')" \
	"['UC RDMA WRITE 1 KiB placed', 'UC RDMA WRITE 4 KiB placed']"

out=$("$B/xhca-bench" crc -r 1 -j 2>"$err"); rc=$?
check_eq "bench_prog: xhca-bench crc (exit)" "$rc" 0 || cat "$err"
check_eq "bench_prog: ... 64 to 65536 bytes, each by zlib and by every implementation up to the best this CPU has, with a ratio" \
	"$(get 'all(s["zlib_ns"] > 0 and s["ratio"] > 0 and all(s[n] > 0 for n in ["sliced8", "clmul128", "clmul256", "clmul512"][:["sliced8", "clmul128", "clmul256", "clmul512"].index(d["best"]) + 1]) for s in d["sizes"]) and [s["bytes"] for s in d["sizes"]]')" \
	"[64, 256, 1024, 4096, 65536]"

# tcp-pingpong between the namespaces of a veth pair
topo_setup || { fail "bench_prog: cannot build the veth topology"; t_done; }
trap 'rm -f "$err"; topo_cleanup' EXIT
for spin in "" --spin; do
	in_b timeout 30 "$B/xhca-bench" tcp-pingpong -l "$IP_B" $spin 2>>"$err" &
	srv=$!
	for _ in $(seq 100); do
		ip netns exec "$NS_B" ss -Hltn "sport = :11112" | grep -q LISTEN && break
		sleep 0.05
	done
	out=$(in_a timeout 30 "$B/xhca-bench" tcp-pingpong -c "$IP_B" -n 500 $spin -j 2>>"$err")
	rc=$?
	wait "$srv"
	check_eq "bench_prog: tcp-pingpong ${spin:---blocking}: 500 round trips, one way median and 99th percentile" \
		"$rc $(json_get 'd["count"], d["spin"] == (1 if "'"$spin"'" else 0), 0 < d["p50_us"] <= d["p99_us"]' <<<"$out" 2>/dev/null)" \
		"0 500 True True" || cat "$err"
done
out=$(in_a "$B/xhca-bench" tcp-pingpong -c "$IP_B" -p 11113 2>&1); rc=$?
check "bench_prog: tcp-pingpong to a port nobody listens on: exit 1, says so ($rc: $out)" \
	test "$rc" = 1 -a -n "$(grep -i 'connect to .*11113' <<<"$out")"
# a server that answers with other bytes than the ping's
in_b timeout 30 "$SCAPY_PY" -c 'import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 11114)); s.listen(1); c, _ = s.accept()
c.recv(64); c.sendall(b"\xff" * 64); c.recv(64)' "$IP_B" &
srv=$!
for _ in $(seq 100); do
	ip netns exec "$NS_B" ss -Hltn "sport = :11114" | grep -q LISTEN && break
	sleep 0.05
done
out=$(in_a timeout 30 "$B/xhca-bench" tcp-pingpong -c "$IP_B" -p 11114 -n 10 2>&1); rc=$?
wait "$srv"
check "bench_prog: tcp-pingpong answered with other bytes: exit 1, 'not its echo' ($rc: $out)" \
	test "$rc" = 1 -a -n "$(grep 'round trip 0: not its echo' <<<"$out")"
out=$(in_a "$B/xhca-bench" tcp-pingpong -l "$IP_B" 2>&1); rc=$?
check "bench_prog: tcp-pingpong listening on an address not on the host: exit 1, says so ($rc: $out)" \
	test "$rc" = 1 -a -n "$(grep "listen on $IP_B:11112" <<<"$out")"
out=$("$B/xhca-bench" tcp-pingpong -c not-an-address 2>&1); rc=$?
check "bench_prog: tcp-pingpong to something not an IPv4 address: exit 1, says so ($rc)" \
	test "$rc" = 1 -a -n "$(grep 'not-an-address: not an IPv4 address' <<<"$out")"
out=$("$B/xhca-bench" tcp-pingpong 2>&1); rc=$?
check "bench_prog: tcp-pingpong with neither -l nor -c: exit 2, says so ($rc)" \
	test "$rc" = 2 -a -n "$(grep -- '-l ADDR' <<<"$out")"
# jit-lines: where each source line of the loaded xhca_rx starts in its JIT
# image (bench_profile.sh maps perf's samples with it)
if xhcad_start; then
	id=$("$B/xhca" -i "$IF_A" -j status | json_get 'd["prog_id"]')
	out=$("$B/xhca-bench" jit-lines --prog "$id" -j 2>"$err"); rc=$?
	first=$(json_get '"%x" % d["lines"][0]["addr"]' <<<"$out" 2>/dev/null)
	# (another xhca_rx loaded on the host has the same name: its address)
	sym=$(awk -v a="$first" '$1 == a && $3 ~ /^bpf_prog_[0-9a-f]+_xhca_rx$/ { print "xhca_rx" }' /proc/kallsyms)
	check_eq "bench_prog: jit-lines of xhca_rx (exit, its first line at the program's symbol, its subprograms' lines too)" \
		"$rc $sym $(json_get 'len(d["lines"]) > 100, any(l["text"].startswith("__noinline int xhca_rx_recv(") for l in d["lines"])' <<<"$out" 2>/dev/null)" \
		"0 xhca_rx True True" || cat "$err"
	xhcad_stop TERM
else
	fail "bench_prog: xhcad did not start for jit-lines"
fi
out=$("$B/xhca-bench" jit-lines --prog 4000000000 2>&1); rc=$?
check "bench_prog: jit-lines of a program that is not there: exit 1, says so ($rc: $out)" \
	test "$rc" = 1 -a -n "$(grep 'program 4000000000' <<<"$out")"
out=$("$B/xhca-bench" jit-lines 2>&1); rc=$?
check "bench_prog: jit-lines without --prog: exit 2, says so ($rc)" \
	test "$rc" = 2 -a -n "$(grep -- '--prog' <<<"$out")"
t_done
