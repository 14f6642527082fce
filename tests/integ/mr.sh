#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Memory region checks of xhca_rx: every failure has its own reason and
# writes nothing; an RC QP goes to the error state (RXE's class C errors)
# and its posted receive buffers are flushed, a UC QP only drops the
# message (RC ones are NAKed: tests/integ/respond.sh). READ and ATOMIC
# requests are checked the same way, then xhcad executes them. libxhca
# refuses bad registrations; a PD in use stays.
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/mr
topo_setup || { fail "mr: topology"; t_done; }
tmp=$(mktemp -d)
APP_DIR=$tmp
XHCAD_LOG=$tmp/xhcad.log
trap 'exec 8>&- 2>/dev/null; apps_kill; topo_cleanup; rm -rf "$tmp"' EXIT
check "mr: xhcad starts" xhcad_start --canary

IOVA=$((0x100000))
reg() { xhca -j mr reg --iova "$IOVA" "$@" | json_get 'd["rkey"]'; }
A=$(reg --len 16384)                                   # pre-translated, no atomic
F=$(reg --len 16384 --scatter)                         # fragmented
RO=$(reg --len 4096 --access local-write)              # no remote access at all
AT=$(reg --len 4096 --access local-write,remote-atomic)
zero() { head -c "$1" /dev/zero >"$tmp/zero.$1"; }
zero 16384; zero 4096
untouched() { # RKEY LEN: the region is still all zero
	xhca mr read "$1" --len "$2" --out "$tmp/got" && cmp -s "$tmp/got" "$tmp/zero.$2"
}
qp_state() { xhca -j qp show "$1" | json_get 'd["qps"][0]["state"]'; }
# rc_fresh: an RC QP back in RTS at ePSN 0 (reset clears an error state).
RC=$(qp_up rc --epsn 0 --action host)
rc_fresh() {
	xhca qp modify "$RC" --state reset >/dev/null
	xhca qp modify "$RC" --state init >/dev/null
	xhca qp modify "$RC" --state rtr --local-ip "$IP_A" --remote-ip "$IP_B" --epsn 0 >/dev/null
	xhca qp modify "$RC" --state rts >/dev/null
}
rc_fresh
wait_state() { # QPN STATE: xhcad hears of the error from xhca_rx
	for _ in $(seq 40); do [ "$(qp_state "$1")" = "$2" ] && return 0; sleep 0.05; done
	return 1
}

# bad NAME REASON GEN-ARGS...: one request on a fresh RC QP fails with REASON
# alone, writes nothing, and puts the QP in the error state; the next good
# packet is then dropped as drop_qp_state.
bad() {
	local name=$1 reason=$2; shift 2
	rc_fresh
	stats_snap "$tmp/snap"
	gen --qpn "$RC" --psn 0 "$@"
	check_eq "mr: $name: $reason, nothing else" "$(stats_changed "$tmp/snap")" "$reason"
	check "mr: $name: nothing written" eval 'untouched "$A" 16384 && untouched "$F" 16384 &&
		untouched "$RO" 4096 && untouched "$AT" 4096'
	check "mr: $name: the RC QP goes to the error state" wait_state "$RC" err
	stats_snap "$tmp/snap"
	gen --qpn "$RC" --psn 1 --op rc-rdma-write-only --va "$IOVA" --rkey "$A" --size 8
	check_eq "mr: $name: afterwards a good WRITE is dropped as drop_qp_state" \
		"$(stats_changed "$tmp/snap")" drop_qp_state
}
W="--op rc-rdma-write-only --size 64"
bad "unknown R_Key index" drop_mr_rkey $W --va "$IOVA" --rkey $(((4000 << 8) | 1))
bad "wrong key byte" drop_mr_key $W --va "$IOVA" --rkey $((A ^ 0x5a))
bad "region without remote write" drop_mr_access $W --va "$IOVA" --rkey "$RO"
bad "before the region" drop_mr_bounds $W --va $((IOVA - 1)) --rkey "$A"
bad "past the end" drop_mr_bounds $W --va $((IOVA + 16384 - 63)) --rkey "$A"
bad "the whole message past the end (FIRST)" drop_mr_bounds \
	--op rc-rdma-write-first --size 1024 --reth-len 16385 --va "$IOVA" --rkey "$A"
bad "64-bit wrap-around" drop_mr_bounds $W --va 0xffffffffffffffe0 --rkey "$A"
bad "ONLY shorter than its DMA length" drop_write_len $W --reth-len 100 --va "$IOVA" --rkey "$A"
bad "FIRST not a full MTU" drop_write_len \
	--op rc-rdma-write-first --size 100 --reth-len 5000 --va "$IOVA" --rkey "$A"
bad "MIDDLE without a FIRST" drop_write_seq --op rc-rdma-write-middle --size 1024
bad "READ of a region without remote read" drop_mr_access \
	--op rc-read-req --reth-len 64 --va "$IOVA" --rkey "$RO"
bad "ATOMIC on a region without remote atomic" drop_mr_access \
	--op rc-cmp-swap --va "$IOVA" --rkey "$A"
bad "ATOMIC not 8-byte aligned" drop_atomic_align --op rc-fetch-add --va $((IOVA + 4)) --rkey "$AT"

# The region goes away in the middle of a WRITE: the rest is refused, as
# unknown R_Key once it is gone, as out of sequence once its index holds
# another region.
for how in gone rereg; do
	rc_fresh
	MB=$(reg --len 8192)
	stats_snap "$tmp/snap"
	gen --qpn "$RC" --psn 0 --op rc-rdma-write-first --size 1024 --reth-len 3072 --va "$IOVA" \
		--rkey "$MB"
	xhca mr dereg "$MB" >/dev/null
	if [ $how = rereg ]; then
		MB2=$(reg --len 8192)
		check_eq "mr: re-registration takes the same index, with another key" \
			"$((MB2 >> 8)) $([ "$MB2" != "$MB" ] && echo new)" "$((MB >> 8)) new"
		want="drop_write_seq placed"
	else
		want="drop_mr_rkey placed"
	fi
	gen --qpn "$RC" --psn 1 --op rc-rdma-write-middle --size 1024
	check_eq "mr: region deregistered mid-WRITE ($how): FIRST placed, MIDDLE refused" \
		"$(stats_changed "$tmp/snap")" "$want"
	check "mr: region deregistered mid-WRITE ($how): the QP goes to the error state" \
		wait_state "$RC" err
	[ $how = rereg ] && xhca mr dereg "$MB2" >/dev/null
done

# UC: the same error drops the message only.
UC=$(qp_up uc --action host)
stats_snap "$tmp/snap"
gen --qpn "$UC" --psn 0 --op uc-rdma-write-only --size 64 --va "$IOVA" --rkey $((A ^ 0x5a))
gen --qpn "$UC" --psn 1 --op uc-rdma-write-only --size 64 --va "$IOVA" --rkey "$A"
check_eq "mr: UC: a bad R_Key drops that message; the next one is placed" \
	"$(stats_changed "$tmp/snap")" "drop_mr_key placed"
check_eq "mr: UC: the QP stays in RTR" "$(qp_state "$UC")" rtr

# READ and ATOMIC that pass the checks go to xhcad, which executes them and
# sends the responses (tests/integ/respond.sh looks at those).
rc_fresh
stats_snap "$tmp/snap"
h0=$(xhca -j stats | json_get 'd["host"]["responded"]["frames"]')
gen --qpn "$RC" --psn 0 --op rc-read-req --reth-len 4096 --va "$IOVA" --rkey "$A"
# a READ of 4096 B at MTU 1024 takes 4 PSNs
gen --qpn "$RC" --psn 4 --op rc-fetch-add --va "$IOVA" --rkey "$AT"
gen --qpn "$RC" --psn 5 --op rc-read-req --reth-len 0 --va 0 --rkey 0
check_eq "mr: READ and ATOMIC checked and sent to xhcad" "$(stats_changed "$tmp/snap")" to_flowq
for _ in $(seq 40); do
	[ "$(( $(xhca -j stats | json_get 'd["host"]["responded"]["frames"]') - h0 ))" = 3 ] && break
	sleep 0.05
done
check_eq "mr: xhcad executed all three (host reason responded)" \
	"$(( $(xhca -j stats | json_get 'd["host"]["responded"]["frames"]') - h0 ))" 3
check_eq "mr: the READ's PSNs are used up (ePSN 6)" \
	"$(xhca -j qp show "$RC" | json_get 'd["qps"][0]["epsn"]')" 6

# An application: its bad registrations, its PD, and the flush of its
# receive buffers when its QP fails.
app_fed app 8 "$B/xhca-apptest" mr "$IF_A" 32768
AQ=$(ready app)
check_eq "mr: libxhca: length 0, outside its buffers, past a buffer's end, unknown flags, remote write without local write, another session's PD" \
	"$(head -n 1 "$tmp/app" | json_get '(d["len0"], d["outside"], d["past_end"], d["bad_flags"], d["no_local_write"], d["other_pd"])')" \
	"(-22, -14, -14, -22, -22, -14)"
APPR=$(grep '"ready"' "$tmp/app" | json_get 'd["rkey"]')
APPV=$(grep '"ready"' "$tmp/app" | json_get 'd["iova"]')
check_eq "mr show: the application's region, in its PD, owned by its session" \
	"$(xhca -j mr show | json_get '[(m["pd"] > 0, m["owner"] > 0) for m in d["mrs"] if m["rkey"] == '"$APPR"']')" \
	"[(True, True)]"
stats_snap "$tmp/snap"
rc_fresh
gen --qpn "$RC" --psn 0 $W --va "$APPV" --rkey "$APPR"
check_eq "mr: another PD's region (the CLI's QP, an application's region): drop_mr_pd" \
	"$(stats_changed "$tmp/snap")" drop_mr_pd
echo pd >&8
for _ in $(seq 40); do grep -q pd_dealloc "$tmp/app" && break; sleep 0.05; done
check_eq "mr: a PD with a QP and a region in it stays (-EBUSY)" \
	"$(grep pd_dealloc "$tmp/app" | json_get 'd["pd_dealloc"]')" -16
xhca qp modify "$AQ" --state init >/dev/null
xhca qp modify "$AQ" --state rtr --local-ip "$IP_A" --remote-ip "$IP_B" --epsn 0 >/dev/null
gen --qpn "$AQ" --psn 0 $W --va "$APPV" --rkey $((APPR ^ 0x11))
check "mr: the application's QP goes to the error state" wait_state "$AQ" err
echo "drain 16" >&8
for _ in $(seq 60); do grep -q drained "$tmp/app" && break; sleep 0.05; done
check_eq "mr: its 16 posted receive buffers complete with WR_FLUSH_ERR, in order" \
	"$(grep '"wr_id"' "$tmp/app" | while read -r l; do echo "$l" | json_get '(d["wr_id"], d["status"])'; done | tr '\n' ' ')" \
	"$(for i in $(seq 0 15); do printf '(%d, 5) ' "$i"; done)"
echo quit >&8
exec 8>&-
wait "$(jobs -p | tail -n 1)" 2>/dev/null
for _ in $(seq 40); do [ "$(xhca -j status | json_get 'd["sessions"]')" = 0 ] && break; sleep 0.05; done
check_eq "mr: the session's region went with it" \
	"$(xhca -j mr show | json_get '[m for m in d["mrs"] if m["rkey"] == '"$APPR"']')" "[]"
check_eq "mr: no byte landed in freed memory (canary)" \
	"$(xhca -j status | json_get 'd["canary_violations"]')" 0
t_done
