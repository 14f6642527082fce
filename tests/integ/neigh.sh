#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The neighbour lookup (user/lib/neigh.c: one entry asked of the kernel by
# libnl-route; xhcad and xhca-gen find a destination's MAC with it), in a
# namespace of its own with a veth pair: entries added with ip neigh are
# found with their MACs (IPv4, IPv6; PERMANENT, STALE, REACHABLE), an
# address with no entry, with an unresolved one (INCOMPLETE, FAILED) or
# with an entry on the other interface only is "not found" (-ENOENT), among
# a thousand other entries; then eight threads look up at once and every
# answer is right. The same again by the fallback of kernels before 5.0 (a
# dump filtered by libnl).
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/neigh
id=$(( $$ % 100000 ))
NS=xnl-$id
trap 'ip netns pids "$NS" 2>/dev/null | xargs -r kill -9 2>/dev/null; ip netns del "$NS" 2>/dev/null' EXIT
trap 'exit 130' INT TERM
in_ns() { nsenter --net=/run/netns/"$NS" "$@"; }

ip netns add "$NS" || { fail "neigh: namespace $NS"; t_done; }
# (the veths live and die with the namespace)
if ! ip -n "$NS" link add xnla type veth peer name xnlb ||
	! ip -n "$NS" addr add 10.78.0.1/16 dev xnla ||
	! ip -n "$NS" -6 addr add fd78::1/64 dev xnla nodad ||
	! ip -n "$NS" link set xnla up || ! ip -n "$NS" link set xnlb up; then
	fail "neigh: a veth pair in $NS"
	t_done
fi
nb() { ip -n "$NS" "$@"; }
nb neigh add 10.78.0.2 lladdr 02:78:00:00:00:02 dev xnla nud permanent
nb neigh add 10.78.0.3 lladdr 02:78:00:00:00:03 dev xnla nud stale
nb neigh add 10.78.0.4 lladdr 02:78:00:00:00:04 dev xnla nud reachable
nb neigh add 10.78.0.5 dev xnla nud incomplete
nb neigh add 10.78.0.6 lladdr 02:78:00:00:00:06 dev xnla nud failed
nb neigh add 10.78.0.7 lladdr 02:78:00:00:00:07 dev xnlb nud permanent
nb -6 neigh add fd78::2 lladdr 02:78:00:00:06:02 dev xnla nud permanent
nb -6 neigh add fd78::3 lladdr 02:78:00:00:06:03 dev xnla nud stale
nb -6 neigh add fd78::7 lladdr 02:78:00:00:06:07 dev xnlb nud permanent
# a big table: a thousand entries beside those (10.78.16.0 ...)
for i in $(seq 0 999); do
	printf 'neigh add 10.78.%d.%d lladdr 02:78:01:00:%02x:%02x dev xnla nud permanent\n' \
		$((16 + i / 250)) $((1 + i % 250)) $((i / 256)) $((i % 256))
done | nb -batch - || { fail "neigh: a thousand entries"; t_done; }
n=$(nb neigh show | wc -l)
check "neigh: the table holds the entries ($n)" test "$n" -ge 1009

wants=(10.78.0.2=02:78:00:00:00:02 10.78.0.3=02:78:00:00:00:03 10.78.0.4=02:78:00:00:00:04
	10.78.0.5=none 10.78.0.6=none 10.78.0.7=none 10.78.0.8=none 10.78.19.250=02:78:01:00:03:e7
	fd78::2=02:78:00:00:06:02 fd78::3=02:78:00:00:06:03 fd78::7=none fd78::8=none)
for how in "" --dump; do
	rounds=200
	[ -n "$how" ] && rounds=5 # (a dump a lookup: a thousand entries each)
	# (a lookup that never returns fails too: 124)
	out=$(in_ns timeout 60 "$B/xhca-neightest" $how xnla 8 $rounds "${wants[@]}" 2>&1)
	rc=$?
	echo "$out"
	check_eq "neigh${how:+ $how}: xhca-neightest exits 0, within 60 s" "$rc" 0
done
t_done
