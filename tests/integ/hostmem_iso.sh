#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Host memory isolation: each session's memory is its own blocks, maps no
# one else is given. Two members of the group (different users): a victim
# with a secret in a registered buffer, and a hostile application
# (xhca-hostile) that maps every descriptor it holds, asks xhcad for every
# block and the kernel for every BPF map, and posts work requests naming
# the victim's allocation; then one that scribbles over its own rings while
# an ibv_rc_pingpong pair runs; then one that allocates until its limit
# (--session-mb). Each time: the victim's bytes intact, byte by byte, xhcad
# serving, the hostile request refused or its QP in error.
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/hostmem_iso
command -v setpriv >/dev/null || { skip "hostmem_iso: no setpriv (util-linux)"; t_done; }
topo_setup || { fail "hostmem_iso: topology"; t_done; }
tmp=$(mktemp -d)
trap 'exec 3>&- 4<&- 2>/dev/null; topo_cleanup; rm -rf "$tmp"' EXIT
bin=$tmp/bin
mkdir "$bin"
cp "$B/xhca-hostile" "$bin/"
chmod 755 "$tmp" "$bin"
GROUP=$(getent group 65534 | cut -d: -f1)
# two users of the group: neither may read the other's processes
victim_user() { setpriv --reuid 65533 --regid 65534 --clear-groups "$@"; }
member() { setpriv --reuid 65534 --regid 65534 --clear-groups "$@"; }

check "hostmem_iso: xhcad starts (--group, 64 MiB, 16 MiB a session, other limits)" \
	xhcad_start --group "$GROUP" --hostmem-mb 64 --session-mb 16 --session-qps 8 \
	--session-cqs 6 --session-mrs 10 --user-clients 5 --flowqs 1 --cq-stall-ms 200
links_up
fds0=$(ls "/proc/$XHCAD_PID/fd" | wc -l)
used0=$(xhca -j status | json_get 'd["hostmem_used"]')

# the victim: 1 MiB of secret, registered
mkfifo "$tmp/vin"
victim_user "$bin/xhca-hostile" victim "$IF_A" 1048576 <"$tmp/vin" >"$tmp/vout" 2>&1 &
VPID=$!
exec 3>"$tmp/vin"
for _ in $(seq 100); do grep -q ready "$tmp/vout" && break; sleep 0.05; done
ready=$(grep ready "$tmp/vout")
check "hostmem_iso: the victim has its buffer registered ($ready)" test -n "$ready"
VALLOC=$(json_get 'd["alloc"]' <<<"$ready")
VRKEY=$(json_get 'd["rkey"]' <<<"$ready")
victim_intact() {
	local n
	n=$(wc -l <"$tmp/vout")
	echo check >&3
	for _ in $(seq 100); do [ "$(wc -l <"$tmp/vout")" -gt "$n" ] && break; sleep 0.05; done
	tail -n 1 "$tmp/vout" | json_get 'd["intact"]'
}

# the search, first with the secret planted in its own memory: it finds it
member "$bin/xhca-hostile" search "$IF_A" "$IP_A" "$VALLOC" "$VRKEY" plant >"$tmp/s0" 2>&1
check_eq "hostmem_iso: the search finds a secret in its own memory (the check works)" \
	"$(json_get 'd["found"]' <"$tmp/s0" 2>&1)" 1
member "$bin/xhca-hostile" search "$IF_A" "$IP_A" "$VALLOC" "$VRKEY" >"$tmp/s1" 2>&1
sed 's/^/  /' "$tmp/s1" >&2
s() { json_get "d[\"$1\"]" <"$tmp/s1" 2>&1; }
check "hostmem_iso: it mapped every descriptor it holds ($(s fds)), $(( $(s mapped) >> 20 )) MiB in all" \
	test "$(s fds)" -ge 4 -a "$(s mapped)" -gt 0
check_eq "hostmem_iso: none of it holds a byte run of the victim's secret" "$(s found)" 0
check_eq "hostmem_iso: xhcad gives it its own block alone, refuses the other 4095" \
	"$(s blocks_granted) $(s blocks_refused)" "1 4095"
check_eq "hostmem_iso: the kernel gives it no BPF map by id" "$(s by_id)" 0
check "hostmem_iso: nor the pinned xhca_hostmem (errno $(s pinned_errno))" \
	test "$(s pinned_errno)" = 13 -o "$(s pinned_errno)" = 1
check_eq "hostmem_iso: a SEND naming the victim's allocation completes LOC_PROT_ERR" \
	"$(s foreign_send)" 4
check_eq "hostmem_iso: a receive naming the victim's region as its lkey completes LOC_PROT_ERR" \
	"$(s foreign_lkey)" 4
check_eq "hostmem_iso: the victim's bytes are intact" "$(victim_intact)" True

# the scribbler, while two processes ping-pong on the device
xa ibv_rc_pingpong -g 1 -n 3000 -c >"$tmp/srv" 2>&1 &
SRV=$!
for _ in $(seq 100); do grep -q 'listening\|local address' "$tmp/srv" && break; sleep 0.05; done
sleep 0.3
xa ibv_rc_pingpong -g 1 -n 3000 -c "$IP_A" >"$tmp/cli" 2>&1 &
CLI=$!
member "$bin/xhca-hostile" scribble "$IF_A" 4 7 >"$tmp/sc" 2>&1
sc_rc=$?
wait $SRV; r1=$?
wait $CLI; r2=$?
sed 's/^/  /' "$tmp/sc" >&2
check "hostmem_iso: the scribbler wrote over its rings and posted ($(cat "$tmp/sc"))" \
	test $sc_rc = 0 -a "$(json_get 'd["writes"]' <"$tmp/sc" 2>/dev/null || echo 0)" -gt 10000
check_eq "hostmem_iso: the scribbler's UD QP is in the error state" \
	"$(json_get 'd["states"][0]' <"$tmp/sc" 2>&1)" 6
check "hostmem_iso: ... for garbage in its queues' indexes, counted ($(xhca -j status | json_get 'd["ring_faults"]'))" \
	test "$(xhca -j status | json_get 'd["ring_faults"]')" -ge 1
check "hostmem_iso: xhcad still serves" bash -c "kill -0 $XHCAD_PID && '$B/xhca' -i '$IF_A' status >/dev/null"
check_eq "hostmem_iso: the ping-pong beside it ran to the end, every byte checked" \
	"$r1 $r2 $(grep -h ' iters in ' "$tmp/srv" "$tmp/cli" | wc -l)" "0 0 2"
check_eq "hostmem_iso: the victim's bytes are intact" "$(victim_intact)" True

# a session that stops polling a full CQ, on the one flow queue every QP
# shares (--flowqs 1): after --cq-stall-ms its CQ overruns, its QP goes to
# error, and the queue goes on for the ping-pong started meanwhile
member "$bin/xhca-hostile" nopoll "$IF_A" "$IP_A" 2 >"$tmp/np" 2>&1 &
NP=$!
sleep 0.3
xa ibv_rc_pingpong -g 1 -n 200 -c >"$tmp/srv2" 2>&1 &
SRV=$!
sleep 0.3
xa ibv_rc_pingpong -g 1 -n 200 -c "$IP_A" >"$tmp/cli2" 2>&1
r2=$?
wait $SRV; r1=$?
wait $NP
sed 's/^/  /' "$tmp/np" >&2
np() { json_get "d[\"$1\"]" <"$tmp/np" 2>&1; }
check "hostmem_iso: a session's CQ stays full: xhcad held the flow queue for it ($(np stalls) stalls)" \
	test "$(np stalls)" -ge 1
check_eq "hostmem_iso: ... then overran it (XHCA_CQ_OVERRUN), its QP in the error state" \
	"$(np overrun) $(np state)" "1 6"
check_eq "hostmem_iso: ... counted" "$(xhca -j status | json_get 'd["cq_overruns"]')" 1
check_eq "hostmem_iso: the ping-pong on the same flow queue ran to the end" \
	"$r1 $r2 $(grep -h ' iters in ' "$tmp/srv2" "$tmp/cli2" | wc -l)" "0 0 2"

# control connections that would hold xhcad: half a request sent, then
# nothing; requests sent and no reply read. xhcad answers others meanwhile
# at once and drops them after a second.
for mode in trickle noread; do
	member "$bin/xhca-hostile" $mode "$IF_A" 2.5 >"$tmp/$mode" 2>&1 &
	ST=$!
	sleep 0.3
	t0=$(date +%s%N)
	for _ in 1 2 3 4 5; do xhca status >/dev/null; done
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	wait $ST
	check "hostmem_iso: $mode: 5 requests of root's answered meanwhile in $ms ms" test "$ms" -lt 500
	check_eq "hostmem_iso: $mode: xhcad closed that connection ($(cat "$tmp/$mode"))" \
		"$(json_get 'd["closed"]' <"$tmp/$mode")" 1
done
check "hostmem_iso: ... both counted ($(xhca -j status | json_get 'd["limits"]["stalled_clients"]'))" \
	test "$(xhca -j status | json_get 'd["limits"]["stalled_clients"]')" -ge 2

# per-session host memory: 16 MiB
member "$bin/xhca-hostile" hog "$IF_A" 1048576 >"$tmp/hog" 2>&1
sed 's/^/  /' "$tmp/hog" >&2
check "hostmem_iso: a session allocates up to its 16 MiB: $(json_get 'd["allocs"]' <"$tmp/hog") of 1 MiB" \
	test "$(json_get 'd["allocs"]' <"$tmp/hog")" -ge 12 -a "$(json_get 'd["allocs"]' <"$tmp/hog")" -le 16
check_eq "hostmem_iso: ... then ENOMEM, naming the limit" \
	"$(json_get 'd["errno"]' <"$tmp/hog") $(grep -c 'session-mb' "$tmp/hog")" "12 1"
echo "alloc 4194304" >&3
sleep 0.3
check_eq "hostmem_iso: another session still allocates" "$(tail -n 1 "$tmp/vout" | json_get 'd["alloc"]')" 1
check_eq "hostmem_iso: the victim's bytes are intact" "$(victim_intact)" True

# the other limits: each refused with ENOMEM and the option that sets it;
# a user's sixth connection closed
member "$bin/xhca-hostile" limits "$IF_A" >"$tmp/lim" 2>&1
sed 's/^/  /' "$tmp/lim" >&2
lim() { json_get "d[\"$1\"][\"$2\"]" <"$tmp/lim" 2>&1; }
for k in "cqs 6 session-cqs" "qps 8 session-qps" "mrs 10 session-mrs"; do
	set -- $k
	check_eq "hostmem_iso: a session makes $2 $1, then ENOMEM naming --$3" \
		"$(lim "$1" n) $(lim "$1" errno) $(lim "$1" msg | grep -c -- "--$3")" "$2 12 1"
done
check_eq "hostmem_iso: ... and then a memory window: ENOMEM naming --session-mrs" \
	"$(lim mw n) $(lim mw errno) $(lim mw msg | grep -c -- --session-mrs)" "0 12 1"
check_eq "hostmem_iso: a user opens 5 sessions, the sixth refused" "$(lim sessions n)" 5
check_eq "hostmem_iso: freeing an SRQ's ring under xhcad: EBUSY, saying why" \
	"$(lim ring_free rc) $(lim ring_free msg | grep -c 'ring of a queue')" "-16 1"
check "hostmem_iso: ... counted ($(xhca -j status | json_get 'd["limits"]'))" \
	test "$(xhca -j status | json_get 'd["limits"]["refused_clients"]')" -ge 1
check_eq "hostmem_iso: the victim still allocates" \
	"$(echo 'alloc 4096' >&3; sleep 0.3; tail -n 1 "$tmp/vout" | json_get 'd["alloc"]')" 1

echo quit >&3
exec 3>&-
wait $VPID
check_eq "hostmem_iso: the victim ends cleanly" $? 0
sleep 0.2
check_eq "hostmem_iso: every session's memory and blocks went with it" \
	"$(xhca -j status | json_get 'd["hostmem_used"]') $(ls "/proc/$XHCAD_PID/fd" | wc -l)" "$used0 $fds0"
xhcad_stop
check_eq "hostmem_iso: xhcad exits 0" "$XHCAD_RC" 0
t_done
