#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The ring fuzzer (make fuzz, with the sanitizer build): applications that
# write random values over their own rings, indexes, scatter lists and
# buffers for RING_FUZZ_S seconds (default 60), several at once and one
# after another (RING_FUZZ_SEED, default the time), while a victim session
# keeps a secret and a ping-pong pair runs on the same device. Then: xhcad
# alive and answering, every fuzzing session gone with its memory, the
# victim's bytes intact, the ping-pongs all done; tests/run.sh fails on any
# sanitizer report of xhcad's.
set -u
. "$(dirname "$0")/../lib.sh"
need_root fuzz/rings
topo_setup || { fail "rings: topology"; t_done; }
tmp=$(mktemp -d)
trap 'exec 3>&- 2>/dev/null; topo_cleanup; rm -rf "$tmp"' EXIT
SECS=${RING_FUZZ_S:-60}
SEED=${RING_FUZZ_SEED:-$(date +%s)}
check "rings: xhcad starts (one flow queue for all, CQs overrun after 300 ms)" \
	xhcad_start --hostmem-mb 128 --flowqs 1 --cq-stall-ms 300
links_up
used0=$(xhca -j status | json_get 'd["hostmem_used"]')
mkfifo "$tmp/vin"
"$B/xhca-hostile" victim "$IF_A" 262144 <"$tmp/vin" >"$tmp/vout" 2>&1 &
VPID=$!
exec 3>"$tmp/vin"
for _ in $(seq 100); do grep -q ready "$tmp/vout" && break; sleep 0.05; done

# ping-pongs one after another for as long as the fuzzing goes
(
	end=$((SECONDS + SECS))
	n=0 bad=0
	while [ $SECONDS -lt $end ]; do
		xa ibv_rc_pingpong -g 1 -n 100 -c >"$tmp/srv" 2>&1 &
		s=$!
		sleep 0.3
		xa ibv_rc_pingpong -g 1 -n 100 -c "$IP_A" >"$tmp/cli" 2>&1 || bad=$((bad + 1))
		wait $s || bad=$((bad + 1))
		n=$((n + 1))
	done
	echo "$n $bad" >"$tmp/pp"
) &
PP=$!
# fuzzers: two at a time, a new seed each, until the time is up
end=$((SECONDS + SECS))
i=0
while [ $SECONDS -lt $end ]; do
	"$B/xhca-hostile" scribble "$IF_A" 5 $((SEED + i)) >"$tmp/sc$i" 2>&1 &
	a=$!
	"$B/xhca-hostile" scribble "$IF_A" 5 $((SEED + i + 1)) >"$tmp/sc$((i + 1))" 2>&1
	wait $a
	i=$((i + 2))
done
wait $PP
echo "  seed $SEED: $i fuzzing sessions of 5 s; the first: $(cat "$tmp/sc0")" >&2
read -r npp bad <"$tmp/pp"
check "rings: $i fuzzing sessions ran, each to its end" \
	test "$(cat "$tmp"/sc* | grep -c '"writes"')" = "$i"
check_eq "rings: xhcad is alive and answers" \
	"$(kill -0 "$XHCAD_PID" && xhca -j status | json_get 'd["sessions"]')" 1
check_eq "rings: $npp ping-pongs beside them, every one done" "$bad" 0
echo check >&3
sleep 0.3
check_eq "rings: the victim's bytes are intact" "$(tail -n 1 "$tmp/vout" | json_get 'd["intact"]')" True
echo quit >&3
exec 3>&-
wait $VPID
check_eq "rings: every session's memory went with it" \
	"$(xhca -j status | json_get 'd["hostmem_used"]')" "$used0"
echo "  $(xhca status | grep 'ring faults')" >&2
xhcad_stop
check_eq "rings: xhcad exits 0" "$XHCAD_RC" 0
t_done
