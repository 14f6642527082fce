#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Delivery to applications through xhcad: UD SENDs with source QPN, GRH and
# immediate; RC SENDs of several packets reassembled into one buffer, with
# immediate and invalidate; UC messages broken by a gap never complete; the
# exact bytes arrive; length errors and RNR drops are reported and counted;
# bad buffers, a destroyed QP and a full CQ behave as libxhca says.
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/host
topo_setup || { fail "host: topology"; t_done; }
tmp=$(mktemp -d)
XHCAD_LOG=$tmp/xhcad.log
APP_DIR=$tmp
trap 'apps_kill; topo_cleanup; rm -rf "$tmp"' EXIT

# comps NAME PYEXPR: evaluates PYEXPR with c = the list of completion objects.
comps() {
	"$SCAPY_PY" - "$tmp/$1" "$2" <<'PY'
import json, sys
c = [json.loads(l) for l in open(sys.argv[1]) if '"wr_id"' in l]
print(eval(sys.argv[2]))
PY
}
pattern() { "$SCAPY_PY" -c "print(''.join('%02x' % (i & 255) for i in range($1)))"; }
RECV=$B/xhca-recv

check "host: xhcad starts" xhcad_start
snap=$tmp/snap

# --- UD: GRH, source QPN, immediate, exact bytes ---
app ud "$RECV" -i "$IF_A" --type ud --qkey 0x11 -j --dump 4096 --count 3 --timeout 5
UD=$(ready ud)
gen --op ud-send-only --qpn "$UD" --qkey 0x11 --sqp 0x77 --size 100
gen --op ud-send-only-imm --qpn "$UD" --qkey 0x11 --sqp 0x1234 --size 7 --imm 0xcafe0001
gen --op ud-send-only --qpn "$UD" --qkey 0x11 --sqp 0x77 --size 1 --src "$IP6_B" --dst "$IP6_A"
wait "$PID_ud"
check_eq "host: UD completions" "$(comps ud 'len(c), [x["status"] for x in c]')" "(3, [0, 0, 0])"
check_eq "host: UD byte counts include the 40-byte GRH" "$(comps ud '[x["byte_len"] for x in c]')" \
	"[140, 47, 41]"
check_eq "host: UD source QPNs" "$(comps ud '[x["src_qp"] for x in c]')" "[119, 4660, 119]"
check_eq "host: UD flags GRH, GRH+immediate" "$(comps ud '[x["flags"] for x in c]')" "[1, 3, 1]"
check_eq "host: UD immediate data" "$(comps ud 'c[1]["imm"]')" $((0xcafe0001))
check_eq "host: UD payload bytes exact" "$(comps ud 'c[0]["data"]')" "$(pattern 100)"
check_eq "host: UD over IPv6 delivered" "$(comps ud 'c[2]["data"]')" "00"

# --- RC: FIRST/MIDDLE/LAST reassembled; immediate; invalidate ---
app rc "$RECV" -i "$IF_A" --type rc --local-ip "$IP_A" --remote-ip "$IP_B" --epsn 0 -j \
	--dump 8192 --buf-size 8192 --count 3 --timeout 5
RC=$(ready rc)
gen --op rc-send-first --qpn "$RC" --psn 0 --size 1024
gen --op rc-send-middle --qpn "$RC" --psn 1 --count 2 --size 1024
gen --op rc-send-last-imm --qpn "$RC" --psn 3 --size 100 --imm 0x42
gen --op rc-send-only-inv --qpn "$RC" --psn 4 --size 10 --rkey 0x1234
gen --op rc-send-only --qpn "$RC" --psn 5 --size 1400
wait "$PID_rc"
want=$(pattern 1024)$(pattern 1024)$(pattern 1024)$(pattern 100)
check_eq "host: RC 4-packet SEND is one completion of 3172 bytes" \
	"$(comps rc '[x["byte_len"] for x in c]')" "[3172, 10, 1400]"
check_eq "host: RC reassembled bytes exact" "$(comps rc 'c[0]["data"]')" "$want"
check_eq "host: RC SEND LAST with immediate" "$(comps rc '(c[0]["flags"], c[0]["imm"])')" "(2, 66)"
check_eq "host: RC SEND with invalidate" "$(comps rc '(c[1]["flags"], c[1]["inv_rkey"])')" "(8, 4660)"
check_eq "host: RC completions name the QP" "$(comps rc 'set(x["qp_num"] for x in c)')" "{$RC}"

# --- UC: a gap breaks the message; the next one completes ---
app uc "$RECV" -i "$IF_A" --type uc --local-ip "$IP_A" --remote-ip "$IP_B" -j --dump 64 \
	--count 1 --timeout 5
UC=$(ready uc)
stats_snap "$snap"
gen --op uc-send-first --qpn "$UC" --psn 0 --size 64
gen --op uc-send-middle --qpn "$UC" --psn 2 --size 64
gen --op uc-send-last --qpn "$UC" --psn 3 --size 64
gen --op uc-send-only --qpn "$UC" --psn 4 --size 16
wait "$PID_uc"
check_eq "host: UC broken message never completes, the next does" \
	"$(comps uc '[(x["byte_len"], x["data"]) for x in c]')" "[(16, '$(pattern 16)')]"
check_eq "host: UC gap dropped in xhca_rx" "$(stats_delta "$snap" drop_uc_gap)" 2

# --- length errors ---
app len "$RECV" -i "$IF_A" --type ud --qkey 0x22 -j --buf-size 256 --count 2 --timeout 5
LQ=$(ready len)
hs() { xhca -j stats | json_get 'd["host"]["'"$1"'"]["frames"]'; }
le0=$(hs len_err)
gen --op ud-send-only --qpn "$LQ" --qkey 0x22 --size 300
gen --op ud-send-only --qpn "$LQ" --qkey 0x22 --size 216
wait "$PID_len"
check_eq "host: UD message over the buffer: LOC_LEN_ERR, then the next fits exactly" \
	"$(comps len '[(x["status"], x["byte_len"]) for x in c]')" "[(1, 0), (0, 256)]"
check_eq "host: length error counted" "$(( $(hs len_err) - le0 ))" 1
app len2 "$RECV" -i "$IF_A" --type rc --local-ip "$IP_A" --remote-ip "$IP_B" -j --buf-size 2048 \
	--count 2 --timeout 5
RL=$(ready len2)
le0=$(hs len_err)
gen --op rc-send-first --qpn "$RL" --psn 0 --size 1024
gen --op rc-send-middle --qpn "$RL" --psn 1 --size 1024
gen --op rc-send-middle --qpn "$RL" --psn 2 --size 1024
gen --op rc-send-last --qpn "$RL" --psn 3 --size 1024
gen --op rc-send-only --qpn "$RL" --psn 4 --size 100
wait "$PID_len2"
# RC: a class C error (IBA, RXE): NAK invalid request, the QP to the error
# state, its other buffers flushed; nothing after it is placed
check_eq "host: RC message over the buffer: error, then the QP in error flushes its buffers" \
	"$(comps len2 '[(c[0]["status"], c[0]["byte_len"]), sorted({(x["status"], x["byte_len"]) for x in c[1:]})]')" \
	"[(1, 0), [(5, 0)]]"
check_eq "host: the error packet counted once" "$(( $(hs len_err) - le0 ))" 1

# --- RNR: nowhere to put it ---
CQ_QP=$(qp_up ud --action host)
rnr0=$(hs rnr)
gen --op ud-send-only --qpn "$CQ_QP" --count 5
sleep 0.2
check_eq "host: no receive buffer: counted RNR drops" "$(( $(hs rnr) - rnr0 ))" 5
check_eq "host: per-QP RNR count" "$(xhca -j qp show "$CQ_QP" | json_get 'd["qps"][0]["host"]["rnr"]')" 5

# --- bad buffers: refused by libxhca, or completed with an error by xhcad ---
app bad "$B/xhca-apptest" badbuf "$IF_A"
BQ=$(ready bad)
gen --op ud-send-only --qpn "$BQ" --qkey 0x5151 --count 4 --size 64
wait "$PID_bad"
check_eq "host: libxhca refuses a stack buffer, zero length, past its buffer's end (-EFAULT)" \
	"$(head -n 1 "$tmp/bad" | json_get '(d["stack"], d["zero_len"], d["past_end"])')" "(-14, -14, -14)"
check_eq "host: xhcad: unknown buffer, another session's, past the end of one's own -> LOC_PROT_ERR; own fine" \
	"$(comps bad '[(x["wr_id"], x["status"], x["vendor_err"]) for x in c]')" \
	"[(10, 4, 3), (11, 4, 3), (12, 4, 3), (13, 0, 0)]"
check_eq "host: the other session's page is untouched" \
	"$(grep theirs "$tmp/bad" | json_get 'd["theirs_untouched"]')" True

# --- a QP destroyed under the application ---
mkfifo "$tmp/dead.in"
nsenter --net=/run/netns/"$NS_A" "$B/xhca-apptest" dead "$IF_A" <"$tmp/dead.in" >"$tmp/dead" 2>&1 &
APPS+=("$!"); PID_dead=$!
exec 9>"$tmp/dead.in"
DQ=$(ready dead)
check "host: the CLI may destroy an application's QP" bash -c "'$B/xhca' -i '$IF_A' qp destroy '$DQ' >/dev/null"
echo go >&9
exec 9>&-
wait "$PID_dead"
check_eq "host: posting to it (a receive, a send) is -ESHUTDOWN; the handle, its send queue and its CQ are freed" \
	"$(tail -n 1 "$tmp/dead" | json_get '(d["post"], d["send"], d["destroy"], d["cq_destroy"])')" \
	"(-108, -108, 0, 0)"

# --- a CQ's doorbell rung for a completion already polled: xhca_cq_wait
# waits its time for the next one (it once returned at once, "nothing":
# applications that stop on a quiet CQ stopped in the middle of traffic) ---
app_fed cw 9 "$B/xhca-apptest" cqwait "$IF_A"
CWQ=$(ready cw)
gen --op ud-send-only --qpn "$CWQ" --qkey 0x5151 --size 64
echo go >&9
exec 9>&-
wait "$PID_cw"
check_eq "host: xhca_cq_wait after a completion taken by polling (its doorbell left rung): waits the 300 ms, returns 0" \
	"$(tail -n 1 "$APP_DIR/cw" | json_get '(d["polled"], d["wait"], d["ms"] >= 280)')" "(1, 0, True)"

# --- a program spinning on an empty CQ yields the CPU every 64 polls in a
# row (XHCA_POLL_YIELD: how many, 0 never), so xhcad gets a CPU on a busy
# host: xhca-apptest counts the sched_yield calls of libxhca ---
spin_yields() { env "$@" nsenter --net=/run/netns/"$NS_A" "$B/xhca-apptest" spin "$IF_A" |
	json_get '(d["found"], d["yields"])'; }
check_eq "host: 640 empty polls of a CQ yield the CPU 10 times" "$(spin_yields)" "(0, 10)"
check_eq "host: ... with XHCA_POLL_YIELD=0 never" "$(spin_yields XHCA_POLL_YIELD=0)" "(0, 0)"
check_eq "host: ... with XHCA_POLL_YIELD=1 at every one" "$(spin_yields XHCA_POLL_YIELD=1)" "(0, 640)"

# --- a post that finds its send queue idle (a program waiting for the
# answer to what it sends): its next empty CQ poll yields at once, so that
# an xhcad sharing its CPU sends now; once; a post behind one outstanding
# (a stream) does not; none with XHCA_POLL_YIELD=0. xhcad stopped, so that
# the first SEND stays outstanding ---
handover_yields() {
	local i
	app_fed ho 9 env "$@" "$B/xhca-apptest" handover "$IF_A" "$IP_A"
	ready ho >/dev/null
	kill -STOP "$XHCAD_PID"
	echo go >&9
	for i in $(seq 100); do grep -q '"first"' "$APP_DIR/ho" && break; sleep 0.05; done
	kill -CONT "$XHCAD_PID"
	echo go >&9
	exec 9>&-
	wait "$PID_ho"
	grep '"first"' "$APP_DIR/ho" | json_get '(d["post"], d["first"], d["again"], d["busy"])'
	grep '"idle"' "$APP_DIR/ho" | json_get '(d["completed"], d["post"], d["idle"])'
}
out=$(handover_yields)
check_eq "host: a SEND to an idle send queue: the next empty poll yields once, the one after not; a SEND behind it: no yield" \
	"$(echo "$out" | head -n 1)" "([0, 0], 1, 0, 0)"
check_eq "host: ... both completed, the queue idle again: the next SEND's poll yields again" \
	"$(echo "$out" | sed -n 2p)" "(2, 0, 1)"
check_eq "host: ... with XHCA_POLL_YIELD=0 none" "$(handover_yields XHCA_POLL_YIELD=0 | head -n 1)" \
	"([0, 0], 0, 0, 0)"

# --- the send doorbell request, wrong: refused with a reason, nothing else ---
out=$(nsenter --net=/run/netns/"$NS_A" "$B/xhca-apptest" sqdb "$IF_A")
check_eq "host: XHCA_CTL_SQ_DOORBELL outside a session, and without an eventfd: refused (-EPERM, -EINVAL, each with a reason); the session answers after" \
	"$(echo "$out" | json_get '(d["no_session"], d["no_fd"], "eventfd" in d["no_fd_msg"], len(d["no_session_msg"]) > 0, d["after"])')" \
	"(-1, -22, True, True, 0)"

# --- an allocation joining another's pages (libxhca's adopted memory grown) ---
out=$(nsenter --net=/run/netns/"$NS_A" "$B/xhca-apptest" join "$IF_A")
check_eq "host: XHCA_ALLOC_JOIN of an allocation not there, twice the same, without its list, past the end: refused (-EINVAL), no page taken; a right one: 8 pages, 5 of them new ($out)" \
	"$(echo "$out" | json_get '(d["unknown"], d["twice"], d["no_list"], d["past"], d["refused_used"], d["ok"], d["pages"], d["new_used"])')" \
	"(-22, -22, -22, -22, 0, 0, 8, 20480)"

# --- a full CQ holds its flow queue back and loses nothing ---
# cq_full NAME FLOWQ COUNT: xhca-apptest NAME on flow queue FLOWQ, its
# 4-entry CQ filled by COUNT SENDs (its stdin on descriptor 9); FQ: the flow
# queue's (blocked, backlog) then
cq_full() {
	app_fed "$1" 9 "$B/xhca-apptest" "$1" "$IF_A" "$2"
	gen --op ud-send-only --qpn "$(ready "$1")" --qkey 0x5151 --count "$3" --size 64
	sleep 0.3
	FQ=$(xhca -j flowq show | json_get "(d['flowqs'][$2]['blocked'], d['flowqs'][$2]['backlog'])")
}
cq_full hold 4 20
check_eq "host: flow queue 4 waits for the application" "$FQ" "(True, 16)"
echo go >&9
exec 9>&-
wait "$PID_hold"
check_eq "host: all 20 completions arrive once the application polls; the stall is reported" \
	"$(tail -n 1 "$tmp/hold" | json_get '(d["received"], d["stalls"] >= 1, d["ok"])')" "(20, True, True)"

# --- ... and with its doorbell descriptor closed (a program that closes every
# descriptor), polling still takes what the CQ holds: the doorbell's EBADF
# comes with the next call, which takes nothing (libxhca once returned it
# with the completions it had taken, and they were lost) ---
cq_full dbgone 5 10
check_eq "host: flow queue 5 waits for the application's 4-entry CQ" "$FQ" "(True, 6)"
echo go >&9
exec 9>&-
wait "$PID_dbgone"
check_eq "host: doorbell closed: the 4 completions come (polled, good), then EBADF, again EBADF, nothing taken" \
	"$(tail -n 1 "$tmp/dbgone" | json_get '(d["first"], d["ok"], d["second"], d["third"])')" "(4, True, -9, -9)"

# --- xhca-recv's bad options: exit 2 before touching xhcad; no xhcad: exit 1 ---
rbad() {
	local name=$1 want=$2; shift 2
	local rc
	in_a "$RECV" "$@" >/dev/null 2>&1; rc=$?
	check_eq "host: xhca-recv $name exits $want" "$rc" "$want"
}
rbad "--type xx" 2 -i "$IF_A" --type xx
rbad "without --type" 2 -i "$IF_A"
rbad "--bufs 3 (not a power of 2)" 2 -i "$IF_A" --type ud --bufs 3
rbad "rc without addresses" 2 -i "$IF_A" --type rc
rbad "--mtu 1500" 2 -i "$IF_A" --type ud --mtu 1500
rbad "--flowq 64" 2 -i "$IF_A" --type ud --flowq 64
rbad "on an interface without xhcad" 1 -i lo --type ud --timeout 1
check "host: ... and says why, with xhca_errmsg(NULL) after xhca_open failed ($(in_a "$RECV" -i lo --type ud --timeout 1 2>&1 >/dev/null))" \
	bash -c 'grep -q "^xhca-recv: open: no xhcad answers on lo (/run/xhca/lo.sock: No such file or directory); is it running (xhcad lo)?" <<<"$1"' _ \
	"$(in_a "$RECV" -i lo --type ud --timeout 1 2>&1 >/dev/null)"
rbad "--flowq 20 (xhcad has 8)" 1 -i "$IF_A" --type ud --flowq 20 --timeout 1
check_eq "host: the CLI's QP outlives every application session" \
	"$(xhca -j qp show "$CQ_QP" | json_get 'd["qps"][0]["owner"]')" 0

# --- an application that closes with its objects alive ---
app leave "$B/xhca-apptest" leave "$IF_A"
wait "$PID_leave"
check_eq "host: xhca_close with a buffer, a CQ, an SRQ and QPs alive: all of it was mapped, none stays" \
	"$(json_get 'd["mapped_before"] > 0 and d["mapped_after"] == 0' <"$APP_DIR/leave")" True

# --- nothing left behind ---
sleep 0.2
st=$(xhca -j status)
check_eq "host: sessions gone, their memory freed" \
	"$(json_get '(d["sessions"], d["hostmem_used"])' <<<"$st")" "(0, 0)"
check_eq "host: every UMEM frame back in the free list or a fill ring" \
	"$(json_get 'd["umem"]["free"] + d["umem"]["fill"] == d["umem"]["frames"]' <<<"$st")" True
check_eq "host: every frame taken has one host reason" \
	"$(xhca -j stats | json_get 'sum(v["frames"] for v in d["host"].values()) == d["reasons"]["to_flowq"]["packets"]')" True
xhcad_stop TERM
check_eq "host: xhcad exits 0" "$XHCAD_RC" 0
t_done
