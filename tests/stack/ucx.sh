#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# UCX on xhca (issue "The RDMA software stack runs on xhca"): Debian's
# unmodified ucx-utils through `xhca exec`. ucx_info -d lists rc_verbs and
# ud_verbs on xhca_IF:1 (RoCE v2); ucx_perftest tag_lat, tag_bw, ucp_put_bw
# and ucp_get over rc_verbs (with ud_verbs for its wire-up, UCX's rc_v)
# and over ud_verbs alone, between two xhca hosts and between two
# processes on one host (loopback). Each run's result line is checked, and
# that its traffic went through xhca (the hosts' requester counters, or
# the device's looped frames).
. "$(dirname "$0")/../lib.sh"
need_root "ucx"
need_cmds ucx ucx_info ucx_perftest
MID_MTU=4200 two_hosts ucx 512
links_up

# ucx ENV... -- ARGS: ucx_perftest ARGS on A (server) and B (client), or on
# A twice (ONE=1), through xhca exec, with the UCX settings given.
ucx() {
	local envs=() name
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	name="ucx_perftest $* (${envs[*]}${ONE:+, one host})"
	local srv=(env "${envs[@]}" UCX_NET_DEVICES="xhca_$IF_A:1" timeout 60 ucx_perftest "$@")
	local cli=(env "${envs[@]}" UCX_NET_DEVICES="xhca_$IF_B:1" timeout 60 ucx_perftest "$@")
	[ -n "${ONE:-}" ] && cli=(env "${envs[@]}" UCX_NET_DEVICES="xhca_$IF_A:1" timeout 60 ucx_perftest "$@")
	xa "${srv[@]}" >"$tmp/u.srv" 2>&1 &
	local spid=$! rc rs
	for _ in $(seq 100); do ip netns exec "$NS_A" ss -Hltn 'sport = :13337' | grep -q LISTEN && break; sleep 0.05; done
	if [ -n "${ONE:-}" ]; then xa "${cli[@]}" "$IP_A" >"$tmp/u.cli" 2>&1
	else xb "${cli[@]}" "$IP_A" >"$tmp/u.cli" 2>&1; fi
	rc=$?
	wait "$spid"
	rs=$?
	local final
	final=$(grep '^Final:' "$tmp/u.cli" | tr -s ' ')
	if [ "$rc" != 0 ] || [ "$rs" != 0 ] || [ -z "$final" ]; then
		fail "$name: server exit $rs, client exit $rc"
		grep -v '^[|+]' "$tmp/u.srv" "$tmp/u.cli" | tail -n 8 | sed 's/^/    /'
		return 1
	fi
	pass "$name: $final"
}
packets() { "$B/xhca" -i "$1" -j status | json_get 'd["tx_frames"]'; }
looped() { "$B/xhca" -i "$IF_A" -j status | json_get 'd["loopback"]["self"]'; }

# ---- ucx_info ---------------------------------------------------------------------
out=$(xa ucx_info -d)
md=$(awk -v d="xhca_$IF_A" '/Memory domain:/ { on = ($4 == d) } on' <<<"$out")
check "ucx_info -d: a memory domain xhca_$IF_A (component ib)" grep -q 'Component: ib' <<<"$md"
for tl in rc_verbs ud_verbs; do
	check "ucx_info -d: $tl on xhca_$IF_A:1" \
		bash -c 'awk -v t="$1" "/Transport:/ { on = (\$3 == t) } on && /Device:/ { print \$3; exit }" <<<"$2" | grep -qx "$3"' \
		_ "$tl" "$md" "xhca_$IF_A:1"
done
# RoCE v2: UCX takes the GID type from sysfs (the device view); v1 would
# show in its address as "RoCE v1", and the ud_verbs runs below would not
# reach each other's addresses
out=$(xa env UCX_LOG_LEVEL=debug ucx_info -d 2>&1)
check "ucx: GID index 1 (::ffff:$IP_A) chosen, as RoCE v2 ($(grep -o 'using gid_index [0-9]*' <<<"$out" | head -n 1))" \
	grep -q "xhca_$IF_A:1 using gid_index 1" <<<"$out"

# ---- two hosts ---------------------------------------------------------------------
rc_v=(UCX_TLS=rc_v,self)
ud_v=(UCX_TLS=ud_v,self)
pa=$(packets "$IF_A") pb=$(packets "$IF_B")
ucx "${rc_v[@]}" -- -t tag_lat -n 2000
ucx "${rc_v[@]}" -- -t tag_bw -n 2000 -s 65536
ucx "${rc_v[@]}" -- -t ucp_put_bw -n 2000 -s 65536
ucx "${rc_v[@]}" -- -t ucp_get -n 2000 -s 65536
ucx "${ud_v[@]}" -- -t tag_lat -n 2000
ucx "${ud_v[@]}" -- -t tag_bw -n 1000 -s 65536
ucx "${ud_v[@]}" -- -t ucp_put_bw -n 1000 -s 65536
ucx "${ud_v[@]}" -- -t ucp_get -n 1000 -s 65536
check "ucx: the runs' traffic went through xhca (frames sent: A $pa -> $(packets "$IF_A"), B $pb -> $(packets "$IF_B"))" \
	test "$(packets "$IF_A")" -gt $((pa + 10000)) -a "$(packets "$IF_B")" -gt $((pb + 10000))

# ---- two processes on one host -------------------------------------------------------
l0=$(looped)
ONE=1 ucx "${rc_v[@]}" -- -t tag_lat -n 2000
ONE=1 ucx "${rc_v[@]}" -- -t tag_bw -n 1000 -s 65536
ONE=1 ucx "${rc_v[@]}" -- -t ucp_put_bw -n 1000 -s 65536
ONE=1 ucx "${rc_v[@]}" -- -t ucp_get -n 1000 -s 65536
ONE=1 ucx "${ud_v[@]}" -- -t tag_lat -n 2000
ONE=1 ucx "${ud_v[@]}" -- -t tag_bw -n 1000 -s 65536
ONE=1 ucx "${ud_v[@]}" -- -t ucp_put_bw -n 1000 -s 65536
ONE=1 ucx "${ud_v[@]}" -- -t ucp_get -n 1000 -s 65536
check "ucx on one host: through xhca's loopback ($(( $(looped) - l0 )) frames)" \
	test "$(looped)" -gt $((l0 + 10000))
t_done
