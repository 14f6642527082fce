#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A daemon restart keeps the memory regions of the applications still
# alive: xhca_rx goes on placing WRITEs into pre-translated regions while no
# xhcad runs, the next xhcad takes the sessions back from its state file,
# places into fragmented regions again, delivers completions into the same
# CQs, and libxhca resumes its session on its next call. The regions of an
# application that died meanwhile are invalidated and its memory freed.
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/restart_mr
topo_setup || { fail "restart_mr: topology"; t_done; }
tmp=$(mktemp -d)
APP_DIR=$tmp
XHCAD_LOG=$tmp/xhcad.log
trap 'for f in 5 6 7; do eval "exec $f>&-" 2>/dev/null; done; apps_kill; topo_cleanup; rm -rf "$tmp"' EXIT
img() { "$SCAPY_PY" "$XHCA_TOP/tests/mrimage.py" "$@"; }

check "restart_mr: xhcad --keep starts" xhcad_start --keep --canary
# start_app NAME FD HOW: an application with a 64 KiB region, driven through fd FD
start_app() {
	app_fed "$1" "$2" "$B/xhca-apptest" mr "$IF_A" 65536 "$3"
	ready "$1" >/dev/null
}
field() { grep '"ready"' "$tmp/$1" | json_get "d[\"$2\"]"; }
rtr() {
	xhca qp modify "$1" --state init >/dev/null &&
		xhca qp modify "$1" --state rtr --local-ip "$IP_A" --remote-ip "$IP_B" --epsn 0 >/dev/null
}
start_app one 5 contig
start_app two 6 scatter
start_app three 7 contig
for a in one two three; do
	eval "Q_$a=$(field $a qpn) R_$a=$(field $a rkey) V_$a=$(field $a iova)"
	rtr "$(field $a qpn)"
	img init "$tmp/$a.img" 65536
done
C=$(xhca -j mr reg --len 8192 | json_get 'd["rkey"]')
PSN_one=0 PSN_two=0
# w APP OFF LEN SEED: a WRITE into the application's region
w() {
	local q r v p
	eval "q=\$Q_$1 r=\$R_$1 v=\$V_$1 p=\${PSN_$1:-0}"
	gen --op rc-rdma-write-only --qpn "$q" --psn "$p" --msg-len "$3" --mtu 1024 --va $((v + $2)) \
		--rkey "$r" --pattern "$4"
	eval "PSN_$1=$((p + ($3 + 1023) / 1024))"
	img apply "$tmp/$1.img" "$2" "$3" "$4"
}
same() { # APP: its region holds what was written
	local r
	eval "r=\$R_$1"
	xhca mr read "$r" --len 65536 --out "$tmp/$1.got" && [ "$(img check "$tmp/$1.img" "$tmp/$1.got")" = same ]
}
w one 100 3000 1
w two 5000 2500 2
sleep 0.2
check "restart_mr: before: the pre-translated region holds its WRITE" same one
check "restart_mr: before: the fragmented region holds its WRITE" same two
used0=$(xhca -j status | json_get 'd["hostmem_used"]')

xhcad_stop TERM
check_eq "restart_mr: xhcad --keep exits 0" "$XHCAD_RC" 0
# No xhcad: xhca_rx places into the pre-translated region by itself.
w one 20000 5000 3
kill -9 "$PID_three"
wait "$PID_three" 2>/dev/null

: >"$XHCAD_LOG"
check "restart_mr: xhcad starts again" xhcad_start --keep --canary
# (each application has two sessions: xhca-apptest opens a second one for
# its bad-input checks)
check_eq "restart_mr: the live sessions wait to be resumed, the dead one's are gone" \
	"$(xhca -j status | json_get 'd["sessions"]')" 4
check "restart_mr: xhcad says so" grep -q "4 sessions alive, to be resumed; 2 ended" "$XHCAD_LOG"
check_eq "restart_mr: the live sessions' regions and the CLI's are kept, same R_Keys" \
	"$(xhca -j mr show | json_get 'sorted(m["rkey"] for m in d["mrs"])')" \
	"$("$SCAPY_PY" -c "print(sorted([$R_one, $R_two, $C]))")"
check "restart_mr: a WRITE placed by xhca_rx while xhcad was down is there" same one
check_eq "restart_mr: the dead application's memory is free again" \
	"$(( used0 - $(xhca -j status | json_get 'd["hostmem_used"]') > 65536 ))" 1

stats_snap "$tmp/snap"
w one 40000 1500 4
w two 30000 6000 5
sleep 0.3
check "restart_mr: after: placement into the pre-translated region goes on" same one
check "restart_mr: after: xhcad places into the fragmented region again" same two
check_eq "restart_mr: after: by xhca_rx and by the translation manager" \
	"$(stats_changed "$tmp/snap")" "placed to_xlate"
stats_snap "$tmp/snap"
gen --op rc-rdma-write-only --qpn "$Q_three" --psn 0 --size 64 --va "$V_three" --rkey "$R_three"
check_eq "restart_mr: the dead application's region is gone (drop_cam_miss: its QP too)" \
	"$(stats_changed "$tmp/snap")" drop_cam_miss

# A WRITE with immediate: the completion goes into the same CQ; waiting on
# it, libxhca sees xhcad went away and resumes the session. (The application
# waits first: a completion already there is taken without a wait.)
echo "drain 1" >&5
sleep 0.3
gen --op rc-rdma-write-only-imm --qpn "$Q_one" --psn "$PSN_one" --size 8 --va "$V_one" \
	--rkey "$R_one" --imm 0x7007
for _ in $(seq 100); do grep -q drained "$tmp/one" && break; sleep 0.05; done
check_eq "restart_mr: the completion reaches the application after the restart" \
	"$(grep '"wr_id"' "$tmp/one" | tail -n 1 | json_get '(d["opcode"], d["byte_len"], hex(d["imm"]))')" \
	"(129, 8, '0x7007')"
echo dereg >&6
for _ in $(seq 100); do grep -q '"dereg"' "$tmp/two" && break; sleep 0.05; done
check_eq "restart_mr: a control call resumes the session (dereg works)" \
	"$(grep '"dereg"' "$tmp/two" | json_get 'd["dereg"]')" 0
# (xhcad logs "session N: NAME (pid P) resumed" for each; the two calls
# above returned, but the log line may come a moment later)
for _ in $(seq 50); do [ "$(grep -c ') resumed$' "$XHCAD_LOG")" = 2 ] && break; sleep 0.1; done
check_eq "restart_mr: both sessions resumed" "$(grep -c ') resumed$' "$XHCAD_LOG")" 2
check_eq "restart_mr: no byte landed in freed memory (canary)" \
	"$(xhca -j status | json_get 'd["canary_violations"]')" 0
echo quit >&5
echo quit >&6
for _ in $(seq 100); do [ "$(xhca -j status | json_get 'd["sessions"]')" = 0 ] && break; sleep 0.05; done
check_eq "restart_mr: when the applications end, their regions go" \
	"$(xhca -j mr show | json_get '[m["rkey"] for m in d["mrs"]]')" "[$C]"
t_done
