#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The xhca CLI against the real xhcad: every bad request fails with the right
# exit code (2 bad usage, 1 refused or failed), one line on stderr that names
# the problem, nothing on stdout, and changes nothing (the QP table and the
# counters are compared before and after). Also --help at every level, which
# is made from the command and option tables: what it lists is what the
# commands take and what their messages name, and the man page names it too;
# and the happy paths of create/modify/show/destroy/stats/status, text and JSON.
set -u
. "$(dirname "$0")/../lib.sh"
need_root cli_errors
for b in xhcad xhca; do
	if [ ! -x "$B/$b" ]; then skip "cli_errors: $B/$b is not built (run make)"; exit 0; fi
done

PY=/usr/bin/python3
XHCAD_LOG=$(mktemp)
OUT=$(mktemp -d)
if ! topo_setup; then
	fail "cli_errors: cannot build the veth topology"
	topo_cleanup
	rm -rf "$XHCAD_LOG" "$OUT"
	t_done
fi
# After topo_setup, which sets its own EXIT trap.
STALE_SOCK=
trap 'topo_cleanup; rm -rf "$XHCAD_LOG" "$OUT"; [ -n "$STALE_SOCK" ] && rm -f "$STALE_SOCK"' EXIT

# --- helpers -----------------------------------------------------------------

# Everything a bad request must leave alone: the QP table and the counters.
# The pass_* reasons are left out (the host's own IPv6 chatter, MLD with a
# hop-by-hop header, moves them), and the total with them.
snap() {
	{ xhca -j qp show; xhca -j stats; xhca -j mr show; xhca -j mcast show; } 2>&1 | "$PY" -c '
import json, sys
try:
    qp = json.loads(sys.stdin.readline()); st = json.loads(sys.stdin.readline())
    mr = json.loads(sys.stdin.readline()); mc = json.loads(sys.stdin.readline())
except Exception as e:
    print("snapshot failed:", e); sys.exit(0)
st["reasons"] = {k: v for k, v in st["reasons"].items() if not k.startswith("pass_")}
st.pop("total", None)
print(json.dumps([qp, st, mr, mc], sort_keys=True))'
}

# is_json FILE: the file holds one valid JSON value.
is_json() { "$PY" -c 'import json,sys; json.load(sys.stdin)' <"$1" 2>/dev/null; }

# jget FILE EXPR: evaluates EXPR on the JSON in FILE (bound to j).
jget() { "$PY" -c 'import json,sys; j=json.load(sys.stdin); print('"$2"')' <"$1" 2>/dev/null; }

# run_case NAME WANT_EXIT 'word;word...' SNAP CMD...: runs CMD, then checks
# its exit code, that stdout is empty, that stderr is one line matching every
# ';'-separated word (extended regexes, case-insensitive) and, when SNAP is 1, that
# the snapshot did not change. One result line per case.
run_case() {
	local name=$1 want=$2 words=$3 dosnap=$4; shift 4
	local before= after= rc probs=() w nl
	[ "$dosnap" = 1 ] && before=$(snap)
	"$@" >"$OUT/out" 2>"$OUT/err"
	rc=$?
	[ "$dosnap" = 1 ] && after=$(snap)
	[ "$rc" = "$want" ] || probs+=("exit $rc, want $want")
	[ -s "$OUT/out" ] && probs+=("stdout not empty: $(head -c 200 "$OUT/out")")
	nl=$(wc -l <"$OUT/err")
	[ "$nl" = 1 ] || probs+=("$nl lines on stderr")
	IFS=';' read -r -a ws <<<"$words"
	for w in "${ws[@]}"; do
		grep -Eqi -e "$w" "$OUT/err" || probs+=("stderr lacks /$w/")
	done
	[ "$before" == "$after" ] || probs+=("state changed: before $before after $after")
	if [ ${#probs[@]} = 0 ]; then
		pass "$name"
	else
		fail "$name: $(IFS=';'; echo "${probs[*]}") [stderr: $(head -c 300 "$OUT/err" | tr '\n' ' ')]"
	fi
}
# err2/err1 NAME 'word;word' ARGS...: xhca -i IF_A ARGS fails with 2 / 1.
err2() { local n=$1 w=$2; shift 2; run_case "$n" 2 "$w" 1 "$B/xhca" -i "$IF_A" "$@"; }
err1() { local n=$1 w=$2; shift 2; run_case "$n" 1 "$w" 1 "$B/xhca" -i "$IF_A" "$@"; }

# ok_case NAME REGEX ARGS...: xhca -i IF_A ARGS exits 0, stderr empty, stdout
# matches REGEX (extended, multi-line as one string).
ok_case() {
	local name=$1 re=$2; shift 2
	local rc
	"$B/xhca" -i "$IF_A" "$@" >"$OUT/out" 2>"$OUT/err"
	rc=$?
	if [ "$rc" != 0 ]; then
		fail "$name: exit $rc [stderr: $(head -c 300 "$OUT/err" | tr '\n' ' ')]"
	elif [ -s "$OUT/err" ]; then
		fail "$name: stderr not empty: $(head -c 300 "$OUT/err" | tr '\n' ' ')"
	elif ! grep -Eq -e "$re" "$OUT/out"; then
		fail "$name: stdout does not match /$re/: $(head -c 300 "$OUT/out" | tr '\n' ' ')"
	else
		pass "$name"
	fi
}

# jok_case NAME PYEXPR ARGS...: xhca -j ... exits 0 and its stdout is JSON on
# which PYEXPR (with j bound) is true.
jok_case() {
	local name=$1 expr=$2; shift 2
	local rc
	"$B/xhca" -i "$IF_A" -j "$@" >"$OUT/out" 2>"$OUT/err"
	rc=$?
	if [ "$rc" != 0 ]; then
		fail "$name: exit $rc [stderr: $(head -c 300 "$OUT/err" | tr '\n' ' ')]"
	elif ! is_json "$OUT/out"; then
		fail "$name: not JSON: $(head -c 300 "$OUT/out")"
	elif [ "$(jget "$OUT/out" "bool($expr)")" != True ]; then
		fail "$name: JSON fails ($expr): $(head -c 400 "$OUT/out")"
	else
		pass "$name"
	fi
}

qpn_of() { jget "$OUT/out" 'j["qpn"]'; }

# RC SEND_ONLY to a QPN, from NS_B through the kernel's UDP socket: BTH
# (opcode 0x04, P_Key 0xffff, DestQP, PSN 0), 16 bytes of payload, ICRC.
send_roce() {
	local fmt
	fmt=$(printf '\\x04\\x00\\xff\\xff\\x00\\x%02x\\x%02x\\x%02x\\x00\\x00\\x00\\x00' \
		$((($1 >> 16) & 255)) $((($1 >> 8) & 255)) $(($1 & 255)))
	fmt+='PAYLOAD-PAYLOAD-\x00\x00\x00\x00'
	in_b bash -c 'printf "$1" >/dev/udp/"$2"/4791' _ "$fmt" "$IP_A" 2>/dev/null
}

# xhcad_stop signals the subshell that runs in_a, not xhcad (bash forks for a
# function started with &), so xhcad would outlive it: stop the daemon by the
# pid it reports, wait until it is gone, then let xhcad_stop reap the rest.
daemon_stop() {
	local pid i
	pid=$(xhca -j status 2>/dev/null | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["pid"])' \
		2>/dev/null)
	if [ -n "$pid" ]; then
		kill -TERM "$pid" 2>/dev/null
		for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
	fi
	xhcad_stop TERM
}

# --- the daemon ----------------------------------------------------------------
# --no-cm: QP1 is the CLI's to make (the connection manager's QP1 is below)

if ! xhcad_start --no-cm; then
	fail "cli_errors: xhcad does not start: $(tail -n 5 "$XHCAD_LOG" | tr '\n' ' ')"
	t_done
fi

# --- --help at every level (no daemon needed, no -i needed) --------------------

help_case() {
	local rc
	"$B/xhca" "$@" >"$OUT/out" 2>"$OUT/err"
	rc=$?
	if [ "$rc" = 0 ] && grep -q '^Usage: xhca' "$OUT/out" && [ ! -s "$OUT/err" ]; then
		pass "help: xhca $*"
	else
		fail "help: xhca $*: exit $rc, stdout '$(head -n 1 "$OUT/out")', stderr '$(cat "$OUT/err")'"
	fi
}
help_case --help
help_case -h
help_case help
help_case qp --help
help_case qp help
help_case qp create --help
help_case qp modify --help
help_case qp modify 0x12 --state bogus -h
help_case qp destroy --help
help_case qp show --help
help_case stats --help
help_case status --help
help_case -i "$IF_A" qp create --type bogus --help
help_case -i nosuchif0 stats -h
help_case mr --help
help_case mr reg --help
help_case mr dereg --help
help_case mr show --help
help_case mr read --help
help_case mcast --help
help_case mcast create --help
help_case mcast attach --help
help_case mcast show --help
"$B/xhca" qp create --help | grep -q -- '--type' && pass "help: qp create lists --type" ||
	fail "help: qp create lists --type"
"$B/xhca" qp modify --help | grep -q -- '--remote-ip' && pass "help: qp modify lists --remote-ip" ||
	fail "help: qp modify lists --remote-ip"

# --- the usage texts and the messages come from the command and option tables ---
# For every object and command: the commands its --help lists are the ones
# "unknown command" names; the options a command's --help lists are the ones
# "unknown option" names (its table), every one of them is taken (nothing
# reaches a daemon: NOIF has none), and man/xhca.8 and docs/cli.md name it.

NOIF=xhcanone0
# help_list FILE SECTION: the first words of SECTION's entries ("Commands:",
# "Options:"; an option's long name).
help_list() {
	sed -n "/^$2\$/,/^[^ ]/p" "$1" | grep -oE '^  ((-[a-z], )?--)?[a-z][a-z0-9-]*' |
		sed -E 's/^  (-[a-z], )?//' | sort
}
# used_list FILE: the names in "...; use a, b or c (see xhca ...)" on stderr.
used_list() {
	sed -n 's/.*; use \(.*\) (see xhca.*/\1/p' "$1" | sed 's/, / /g; s/ or / /g' | tr ' ' '\n' |
		grep . | sort
}

# check_cmds WORDS...: the object WORDS names (none: the top level).
check_cmds() {
	local what="xhca${*:+ $*}" want got
	"$B/xhca" "$@" --help >"$OUT/help" 2>&1
	cat "$OUT/help" >>"$OUT/allhelp"
	want=$(help_list "$OUT/help" Commands:)
	"$B/xhca" -i "$NOIF" "$@" frobnicate >/dev/null 2>"$OUT/err"
	got=$(used_list "$OUT/err")
	if [ -n "$want" ] && [ "$want" = "$got" ] && grep -q "unknown command 'frobnicate'" "$OUT/err"; then
		pass "tables: $what: 'unknown command' names the commands its --help lists"
	else
		fail "tables: $what: --help lists [$(echo $want)], 'unknown command' names [$(echo $got)]: $(cat "$OUT/err")"
	fi
}

# check_opts WORDS...: the command WORDS names.
check_opts() {
	local what="xhca${*:+ $*}" want got o rc bad= undoc=
	"$B/xhca" "$@" --help >"$OUT/help" 2>&1
	cat "$OUT/help" >>"$OUT/allhelp"
	want=$(help_list "$OUT/help" Options:)
	"$B/xhca" -i "$NOIF" "$@" --no-such-option >/dev/null 2>"$OUT/err"
	rc=$?
	got=$(used_list "$OUT/err")
	if [ "$rc" = 2 ] && [ "$want" = "$got" ] &&
		{ [ -n "$want" ] || grep -q "$* takes none" "$OUT/err"; }; then
		pass "tables: $what: 'unknown option' names the options its --help lists"
	else
		fail "tables: $what: --help lists [$(echo $want)], 'unknown option' names [$(echo $got)], exit $rc: $(cat "$OUT/err")"
	fi
	for o in $want; do
		"$B/xhca" -i "$NOIF" "$@" "$o" 1 >"$OUT/out" 2>"$OUT/err"
		rc=$?
		# exit 0 only for --help: nothing else may have happened
		{ [ "$rc" = 0 -a "$o" != --help ] || grep -q "unknown option" "$OUT/err"; } &&
			bad+=" $o(exit $rc: $(cat "$OUT/err"))"
		grep -qF -- "$(sed 's/-/\\-/g' <<<"$o")" "$XHCA_TOP/man/xhca.8" || undoc+=" $o(man)"
		grep -qF -- "$o" "$XHCA_TOP/docs/cli.md" || undoc+=" $o(docs)"
	done
	check_eq "tables: $what: takes every option its --help lists" "${bad:-none}" none
	check_eq "tables: $what: man/xhca.8 and docs/cli.md name its options" "${undoc:-none}" none
}

check_cmds
check_opts
for top in $(help_list <("$B/xhca" --help) Commands:); do
	"$B/xhca" "$top" --help >"$OUT/help" 2>&1
	if ! grep -q '^Commands:$' "$OUT/help"; then
		check_opts "$top"
		continue
	fi
	check_cmds "$top"
	for c in $(help_list "$OUT/help" Commands:); do
		check_opts "$top" "$c"
	done
done
check "tables: an alias gets its command's usage (qp list)" \
	diff <("$B/xhca" qp list --help) <("$B/xhca" qp show --help)
check "tables: a required option is shown so, bare in the synopsis" \
	grep -q -- '^Usage: .* mr reg --len N \[--access LIST\]' <("$B/xhca" mr reg --help)
check "tables: ... and marked in its help" grep -q -- '--len N .*(required)$' <("$B/xhca" mr reg --help)
check "tables: exec runs without -i: the synopsis says so" \
	grep -q -- '^Usage: xhca \[-i IFNAME\] .*exec \[--proxy\] \[--no-view\]' <("$B/xhca" exec --help)
check_eq "tables: no line of any --help is over 80 columns" "$(awk 'length > 80' "$OUT/allhelp")" ""

# --- happy paths -----------------------------------------------------------------

jok_case "status -j has every field" '
	j["ifname"] == "'"$IF_A"'" and j["max_qps"] == 4096 and j["qps_in_use"] == 0 and
	all(k in j for k in ("pin_dir", "mode", "attached_by", "ifindex", "prog_id", "abi_version",
			     "pid", "uptime_ms", "next_qpn", "keep", "repaired")) and
	j["flowqs"] == 8 and j["sched"] == "drr" and j["xsk_mode"] == "copy" and
	j["cm"]["enabled"] is False and j["cm"]["ids"] == 0 and
	j["umem"]["frames"] == sum(j["umem"][k] for k in ("free", "fill", "kernel", "rx", "held"))' status
ok_case "status text" "^ifname: +$IF_A\$" status
grep -Eq '^qps_in_use: +0$' "$OUT/out" && grep -Eq '^max_qps: +4096$' "$OUT/out" &&
	pass "status text: qps_in_use and max_qps" || fail "status text: qps_in_use and max_qps"

ok_case "qp create rc (text)" '^created qp 0x[0-9a-f]{6} \(rc, flow queue [0-7]\)$' qp create --type rc
jok_case "qp create uc -j" 'j["type"] == "uc" and j["state"] == "reset" and j["qpn"] >= 2' \
	qp create --type uc
jok_case "qp create with --qpn/--pkey/--qkey -j" '
	j["qpn"] == 0x100 and j["type"] == "rc" and j["pkey"] == 0x7fff and j["qkey"] == 0x1234 and
	j["mtu"] in (256, 512, 1024, 2048, 4096) and j["local_ip"] is None' \
	qp create --type rc --qpn 0x100 --pkey 0x7fff --qkey 0x1234
A=0x100
jok_case "qp create ud, decimal --qpn" 'j["qpn"] == 512 and j["type"] == "ud" and j["qkey"] == 0x11111111' \
	qp create --type ud --qpn 512 --qkey 0x11111111
U=0x200
jok_case "qp create GSI (QPN 1, ud)" 'j["qpn"] == 1 and j["type"] == "ud"' qp create --type ud --qpn 1
jok_case "qp create --flowq 6" 'j["flowq"] == 6 and j["owner"] == 0 and j["cq"] == 0' \
	qp create --type ud --qpn 0x300 --flowq 6
jok_case "qp modify --action host" 'j["action"] == "host"' qp modify 0x300 --action host
jok_case "flowq show -j" 'len(j["flowqs"]) == 8 and j["flowqs"][6]["qps"] >= 1 and
	all(f["weight"] == 1 for f in j["flowqs"])' flowq show
ok_case "flowq show table" '^FLOWQ +WEIGHT +QPS +BACKLOG +GATE +BLOCKED ' flowq show
jok_case "flowq set --weight" 'j["flowq"] == 2 and j["weight"] == 5' flowq set 2 --weight 5
ok_case "flowq set (text)" '^flow queue 2: weight 1$' flowq set 2 --weight 1
ok_case "qp destroy the flowq QP" '^destroyed qp 0x000300$' qp destroy 0x300

ok_case "qp modify reset->init (text)" '^modified qp 0x000100 \(rc\): state init' qp modify $A --state init
jok_case "qp modify init->rtr with addresses, mtu, epsn, action, dest QPN" '
	j["state"] == "rtr" and j["local_ip"] == "10.77.0.1" and j["remote_ip"] == "10.77.0.2" and
	j["mtu"] == 2048 and j["epsn"] == 0x1234 and j["action"] == "drop" and j["dest_qpn"] == 0x42' \
	qp modify $A --state rtr --local-ip "$IP_A" --remote-ip "$IP_B" --mtu 2048 --epsn 0x1234 \
	--action drop --dest-qpn 0x42
jok_case "qp modify rtr->rts" 'j["state"] == "rts"' qp modify $A --state rts
jok_case "qp modify --option=value form" 'j["epsn"] == 7' qp modify $A --epsn=7
jok_case "qp show QPN -j" '
	len(j["qps"]) == 1 and j["qps"][0]["qpn"] == 0x100 and j["qps"][0]["state"] == "rts" and
	all(k in j["qps"][0] for k in ("qpn", "type", "state", "action", "pkey", "qkey", "epsn", "mtu",
		"dest_qpn", "local_ip", "remote_ip", "gen", "accepted", "accepted_bytes", "dropped",
		"dropped_bytes"))' qp show $A
jok_case "qp show -j lists all" '
	sorted(q["qpn"] for q in j["qps"]) == sorted(set(q["qpn"] for q in j["qps"])) and
	len(j["qps"]) == 5 and {1, 0x100, 0x200} <= set(q["qpn"] for q in j["qps"])' qp show
ok_case "qp show table header" \
	'^QPN +TYPE +STATE +ACTION +PKEY +QKEY +EPSN +MTU +LOCAL +REMOTE +FLOWQ +ACCEPTED +DROPPED$' qp show
ok_case "qp show table row" \
	'^0x000100 +rc +rts +drop +0x7fff +0x00001234 +7 +2048 +10\.77\.0\.1 +10\.77\.0\.2 +[0-7] +0 +0$' qp show
ok_case "qp with no subcommand shows" '^0x000200 +ud +reset ' qp
ok_case "qp show -j after the subcommand" '^\{"qps": \[' qp show -j

# Valid IB transitions on a fresh QP, IPv6 addresses on the way.
"$B/xhca" -i "$IF_A" -j qp create --type uc >"$OUT/out" 2>/dev/null
T=$(qpn_of)
for st in init init rtr rts rts sqd sqd rts err reset; do
	jok_case "qp modify: transition to $st allowed" 'j["state"] == "'$st'"' qp modify "$T" --state $st
done
jok_case "qp modify IPv6 addresses" 'j["local_ip"] == "fd77::1" and j["remote_ip"] == "fd77::2"' \
	qp modify "$T" --local-ip "$IP6_A" --remote-ip "$IP6_B"
ok_case "qp destroy (text)" "^destroyed qp 0x$(printf %06x "$T")\$" qp destroy "$T"
jok_case "qp create reuses a destroyed QPN" 'j["qpn"] == '"$T"' and j["state"] == "reset"' \
	qp create --type rc --qpn "$T"
jok_case "qp destroy -j" 'j["qpn"] == '"$T"' and j["destroyed"] is True' qp destroy "$T"
jok_case "qp show -j: destroyed QP gone" 'all(q["qpn"] != '"$T"' for q in j["qps"])' qp show

# Counters: traffic to a QPN nobody has gives drop_cam_miss; to QP A (RTS,
# ePSN 7, PSN 0 sent) something else. Non-zero counters also make the
# "nothing changed" checks below see a wrongful --reset.
for i in 1 2 3; do send_roce 0x424242; send_roce 0x100; done
sleep 0.2
mapfile -t REASONS < <(grep -oE 'X\([A-Z0-9_]+, "[a-z0-9_]+"' "$XHCA_TOP/include/xhca/abi.h" |
	sed 's/.*"\(.*\)"/\1/')
RLIST=$(printf '"%s",' "${REASONS[@]}")
jok_case "stats -j: every reason, total = sum" '
	list(j["reasons"]) == ['"$RLIST"'] and
	j["total"]["packets"] == sum(r["packets"] for r in j["reasons"].values()) and
	j["total"]["bytes"] == sum(r["bytes"] for r in j["reasons"].values()) and
	all(set(r) == {"packets", "bytes"} for r in j["reasons"].values())' stats
jok_case "stats -j: traffic counted (drop_cam_miss 3)" 'j["reasons"]["drop_cam_miss"]["packets"] == 3' stats
check_eq "stat_of from lib.sh (xhca stats -j)" "$(stat_of drop_cam_miss)" 3
ok_case "stats text: total line" '^total +[0-9]+ +[0-9]+$' stats
missing=
for r in "${REASONS[@]}"; do grep -Eq "^$r +[0-9]+ +[0-9]+$" "$OUT/out" || missing+=" $r"; done
check_eq "stats text: a line per reason" "${missing:-none}" none
ok_case "stats -v: descriptions" '^drop_cam_miss +3 +[0-9]+ +destination QPN not in the QP CAM' -v stats
jok_case "stats --qp -j" '
	j["qp"]["qpn"] == 0x100 and set(j["qp"]) == {"qpn", "accepted", "accepted_bytes", "dropped",
	"dropped_bytes"}' stats --qp $A
ok_case "stats --qp text" '^qp 0x000100: accepted [0-9]+ packets \([0-9]+ bytes\), dropped' stats --qp $A

# --- bad usage: refused by xhca, exit 2, nothing sent ---------------------------------

err2 "create: QPN over 24 bits" 'qp create;QPN 0x1000000;out of range;24 bits' \
	qp create --type rc --qpn 0x1000000
err2 "create: QPN over 24 bits (decimal)" 'out of range;24 bits' qp create --type rc --qpn 16777216
err2 "create: QPN over 64 bits" 'out of range' qp create --type rc --qpn 0x10000000000000000
err2 "create: QPN 0" 'QPN 0;SMI' qp create --type rc --qpn 0
err2 "create: QPN 0xffffff" '0xffffff;multicast' qp create --type ud --qpn 0xffffff
err2 "create: QPN not a number" "'abc';not a number" qp create --type rc --qpn abc
err2 "create: QPN bad hex" "not a number" qp create --type rc --qpn 0x12g
err2 "create: QPN empty hex" "not a number" qp create --type rc --qpn 0x
err2 "create: QPN negative" "not a number" qp create --type rc --qpn=-1
err2 "create: bad type" "type;'xc';rc, uc or ud" qp create --type xc
err2 "create: no type" '--type;required' qp create --qpn 0x300
err2 "create: --type without value" '--type;needs a value' qp create --type
err2 "create: P_Key over 16 bits" 'P_Key;out of range;16 bits' qp create --type rc --pkey 0x10000
err2 "create: P_Key partition 0" 'P_Key;0x8000;partition 0' qp create --type rc --pkey 0x8000
err2 "create: Q_Key over 32 bits" 'Q_Key;out of range;32 bits' qp create --type ud --qkey 0x100000000
err2 "create: unknown option" "unknown option;'--bogus'" qp create --type rc --bogus
err2 "create: unknown short option" "unknown option;'-x'" qp create --type rc -x
err2 "create: stray argument" "unexpected argument;'extra'" qp create --type rc extra
err2 "modify: no QPN" 'missing QPN' qp modify --state init
err2 "modify: QPN over 24 bits" 'qp modify;out of range;24 bits' qp modify 0x1000000 --state init
err2 "modify: QPN not a number" "QPN 'q1';not a number" qp modify q1 --state init
err2 "modify: QPN 0" 'QPN 0' qp modify 0 --state init
err2 "modify: nothing to change" 'nothing to change' qp modify $A
err2 "modify: bad state" "state;'ready';reset, init, rtr, rts" qp modify $A --state ready
err2 "modify: bad MTU" "MTU;'1500';256, 512, 1024, 2048 or 4096" qp modify $A --mtu 1500
err2 "modify: bad action" "action;'reject';pass, drop or host" qp modify $A --action reject
err2 "create: flow queue over 6 bits" 'flow queue;out of range;6 bits' qp create --type rc --flowq 64
err2 "create: flow queue not a number" "--flowq;not a number" qp create --type rc --flowq two
err2 "modify: --flowq is not a modify option" "unknown option;'--flowq'" qp modify $A --flowq 1
err2 "flowq set: weight 0" 'weight 0;out of range;1..1000' flowq set 0 --weight 0
err2 "flowq set: weight 1001" 'weight 1001;out of range' flowq set 0 --weight 1001
err2 "flowq set: weight not a number" "--weight;not a number" flowq set 0 --weight heavy
err2 "flowq set: no weight" 'nothing to set;--weight' flowq set 0
err2 "flowq set: no flow queue" 'missing flow queue' flowq set --weight 2
err2 "flowq set: flow queue over 6 bits" 'flow queue;out of range' flowq set 64 --weight 2
err2 "flowq: unknown command" "flowq;unknown command;'get'" flowq get
err2 "modify: bad IPv4" "--remote-ip;'10.0.0.300';not an IPv4 or IPv6" \
	qp modify $A --remote-ip 10.0.0.300
err2 "modify: bad IPv6" "--local-ip;'fd77:::1';not an IPv4 or IPv6" qp modify $A --local-ip fd77:::1
err2 "modify: IPv4 and IPv6 mixed" 'IPv4;IPv6;same family' \
	qp modify $A --local-ip "$IP_A" --remote-ip "$IP6_B"
err2 "modify: ePSN over 24 bits" 'ePSN;out of range;24 bits' qp modify $A --epsn 0x1000000
err2 "modify: ePSN not a number" "--epsn;not a number" qp modify $A --epsn 12k
err2 "modify: P_Key over 16 bits" 'P_Key;out of range;16 bits' qp modify $A --pkey 0x12345
err2 "modify: Q_Key over 32 bits" 'Q_Key;out of range;32 bits' qp modify $A --qkey 4294967296
err2 "modify: dest QPN over 24 bits" 'dest QPN;out of range' qp modify $A --dest-qpn 0x1000000
err2 "modify: option twice" '--state;twice' qp modify $A --state err --state reset
err2 "modify: unknown option" "unknown option;'--speed'" qp modify $A --speed 10
err2 "modify: two QPNs" "unexpected argument" qp modify $A $U --state err
err2 "destroy: no QPN" 'missing QPN' qp destroy
err2 "destroy: QPN over 24 bits" 'qp destroy;out of range;24 bits' qp destroy 0x1000000
err2 "destroy: QPN not a number" 'not a number' qp destroy all
err2 "show: QPN over 24 bits" 'qp show;out of range;24 bits' qp show 0x1000000
err2 "show: QPN 0" 'QPN 0' qp show 0
err2 "stats: --qp over 24 bits, with --reset" 'stats;out of range' stats --qp 0x1000000 --reset
err2 "stats: --qp without value" '--qp;needs a value' stats --qp
err2 "stats: unknown option" "unknown option;'--clear'" stats --clear
err2 "unknown command" "unknown command;'start'" start
err2 "qp: unknown command" "qp;unknown command;'add'" qp add --type rc
run_case "unknown global option" 2 "unknown option;'--color'" 1 "$B/xhca" --color -i "$IF_A" status
run_case "no interface" 2 'no interface;-i IFNAME' 1 "$B/xhca" qp show
run_case "interface name too long" 2 "longer than 15;aaaaaaaaaaaaaaaaaaaa" 1 \
	"$B/xhca" -i aaaaaaaaaaaaaaaaaaaa status
run_case "interface name with /" 2 "not a valid interface name" 1 "$B/xhca" -i ../x status
run_case "no command" 2 'no command' 1 "$B/xhca" -i "$IF_A"

# --- refused by xhcad: exit 1, its message, nothing changed ----------------------------

err1 "create: QPN 1 for rc" 'qp create;QPN 1;GSI' qp create --type rc --qpn 1
err1 "create: QPN 1 for uc" 'QPN 1;GSI' qp create --type uc --qpn 1
err1 "create: duplicate QPN" 'qp create;0x0*100;exist' qp create --type rc --qpn 0x100
err1 "create: duplicate GSI" '0x0*1\b;exist' qp create --type ud --qpn 1
err1 "modify: unknown QPN" 'qp modify;0x0*424242;no QP|not found|unknown|does not exist' qp modify 0x424242 --state init
err1 "destroy: unknown QPN" 'qp destroy;0x0*424242' qp destroy 0x424242
err1 "show: unknown QPN" 'qp show;0x0*424242' qp show 0x424242
err1 "stats: unknown QPN" 'stats;0x0*424242' stats --qp 0x424242
err1 "stats: unknown QPN with --reset" 'stats;0x0*424242' stats --qp 0x424242 --reset
err1 "modify: multicast QPN does not exist" '0xffffff' qp modify 0xffffff --state init
err1 "modify: reset->rts" 'qp modify;reset.*rts;transition|cannot go' qp modify $U --state rts
err1 "modify: reset->rtr" 'reset.*rtr' qp modify $U --state rtr
err1 "modify: reset->sqd" 'reset.*sqd' qp modify $U --state sqd
err1 "modify: rts->init" 'rts.*init' qp modify $A --state init
err1 "modify: rts->rtr" 'rts.*rtr' qp modify $A --state rtr
err1 "modify: rts->sqe (only the HCA enters SQE)" 'rts.*sqe' qp modify $A --state sqe
err1 "modify: a refused transition leaves the other fields" 'rts.*init' \
	qp modify $A --state init --epsn 99 --action pass --mtu 256
err1 "modify: GSI Q_Key is fixed" 'Q_Key;0x80010000' qp modify 1 --qkey 0x1234
err1 "modify: addresses on a UD QP" 'UD' qp modify $U --remote-ip "$IP_B"
err1 "create: flow queue xhcad does not have" 'qp create;flow queue 20;does not exist;0..7' \
	qp create --type ud --flowq 20
err1 "flowq set: flow queue xhcad does not have" 'flowq set;flow queue 9;does not exist' \
	flowq set 9 --weight 3

# P_Key table: 16 partitions (0xffff and 0x7fff are in use); creating QPs
# with new P_Keys fills it, and the next one is refused with a clear message.
made=()
for i in $(seq 1 16); do
	"$B/xhca" -i "$IF_A" -j qp create --type ud --pkey $((0x8000 + i)) >"$OUT/out" 2>/dev/null ||
		break
	made+=("$(qpn_of)")
done
err1 "create: P_Key table full" 'P_Key;full' qp create --type ud --pkey 0x9000
for q in "${made[@]}"; do "$B/xhca" -i "$IF_A" qp destroy "$q" >/dev/null; done

# --- memory regions ------------------------------------------------------------------

jok_case "mr reg -j: pre-translated, default access" '
	j["length"] == 10000 and j["pretranslated"] and j["pages"] == 3 and j["pd"] == 0 and
	j["access"] == "local-write,remote-write,remote-read" and j["rkey"] >> 8 >= 1' mr reg --len 10000
MR1=$(jget "$OUT/out" 'j["rkey"]')
jok_case "mr reg --scatter --access --iova -j: fragmented" '
	not j["pretranslated"] and j["pages"] == 4 and j["iova"] == 0x10000 and
	j["access"] == "local-write,remote-atomic"' \
	mr reg --len 16384 --scatter --access local-write,remote-atomic --iova 0x10000
MR2=$(jget "$OUT/out" 'j["rkey"]')
ok_case "mr reg (text)" '^registered mr 0x[0-9a-f]{8}: 1 bytes at iova 0x0, local-write, pre-translated \(1 pages\)$' \
	mr reg --len 1 --access local-write
MR3=$(sed -n 's/^registered mr \(0x[0-9a-f]*\):.*/\1/p' "$OUT/out")
ok_case "mr show (text)" "^RKEY +PD +OWNER +IOVA" mr show
jok_case "mr show -j lists the three" "sorted(m['rkey'] for m in j['mrs']) == sorted([$MR1, $MR2, $((MR3))])" mr show
ok_case "mr read (hex, zeroed memory)" '^00000010: 0000 0000 0000 0000 0000 0000 0000 0000$' \
	mr read "$MR1" --offset 16 --len 16
err2 "mr reg: --len missing" 'mr reg;--len is required' mr reg
err2 "mr reg: --len not a number" "mr reg;'x1' is not a number" mr reg --len x1
err2 "mr reg: unknown access name" "mr reg;unknown access flag 'remote-everything'" \
	mr reg --len 10 --access remote-everything
err2 "mr reg: --scatter with --contig" 'mr reg;exclude each other' mr reg --len 10 --scatter --contig
err1 "mr reg: length 0" 'mr reg;length 0' mr reg --len 0
err1 "mr reg: more than host memory" 'mr reg;no 4000000000 bytes of host memory' \
	mr reg --len 4000000000
err1 "mr reg: unknown access flags" 'mr reg;unknown access flags 0x20' mr reg --len 10 --access 0x21
err1 "mr reg: remote write without local write" 'mr reg;need local write' \
	mr reg --len 10 --access remote-write
err2 "mr dereg: no R_Key" 'mr dereg;missing R_Key' mr dereg
err2 "mr dereg: not a number" "mr dereg;'zz' is not a number" mr dereg zz
err1 "mr dereg: unknown R_Key" 'mr dereg;no memory region with R_Key 0x00fff001' mr dereg 0xfff001
err1 "mr dereg: wrong key byte" 'mr dereg;no memory region' mr dereg $((MR1 ^ 1))
err1 "mr read: past the end" 'mr read;run past the end' mr read "$MR1" --offset 9990 --len 11
err2 "mr read: --len missing" 'mr read;--len is required' mr read "$MR1"
err2 "mr: unknown command" "mr;unknown command 'frob'" mr frob
ok_case "mr dereg" "^deregistered mr $(printf '0x%08x' "$MR1")\$" mr dereg "$MR1"
err1 "mr dereg: twice" "mr dereg;no memory region with R_Key $(printf '0x%08x' "$MR1")" mr dereg "$MR1"
jok_case "mr reg again: the index comes back with another key" \
	"j['rkey'] >> 8 == $((MR1 >> 8)) and j['rkey'] != $MR1" mr reg --len 100
MR1=$(jget "$OUT/out" 'j["rkey"]')
jok_case "status: regions in use, invalidation barriers waited for" \
	'j["mrs_in_use"] == 3 and j["max_mrs"] == 4095 and j["barriers"] >= 1' status
for r in "$MR1" "$MR2" "$MR3"; do "$B/xhca" -i "$IF_A" mr dereg "$r" >/dev/null; done

# --- multicast groups ------------------------------------------------------------------

ok_case "mcast create (text)" '^created group 239\.1\.2\.3 \(index [0-9]+, P_Key 0xffff\)$' \
	mcast create 239.1.2.3
jok_case "mcast create IPv6 with --pkey -j" \
	'j["mgid"] == "ff0e::42" and j["pkey"] == 0x8005 and j["members"] == [] and not j["auto"]' \
	mcast create ff0e::42 --pkey 0x8005
"$B/xhca" -i "$IF_A" -j qp create --type ud --qkey 0x11 >"$OUT/out" 2>/dev/null
UDQ=$(qpn_of)
"$B/xhca" -i "$IF_A" -j qp create --type rc >"$OUT/out" 2>/dev/null
RCQ=$(qpn_of)
ok_case "mcast attach a UD QP" "^attached qp $(printf '0x%06x' "$UDQ") to group 239.1.2.3\$" \
	mcast attach 239.1.2.3 "$UDQ"
jok_case "mcast show -j: the group and its member" \
	"[g['members'] for g in j['groups'] if g['mgid'] == '239.1.2.3'] == [[$UDQ]]" mcast show
ok_case "mcast show (text)" "^MGID +PKEY +MEMBERS" mcast show
err2 "mcast create: malformed MGID" "mcast create;'239.1.2' is not an MGID" mcast create 239.1.2
err2 "mcast create: not a multicast address" "mcast create;10.0.0.1 is not a multicast address" \
	mcast create 10.0.0.1
err2 "mcast create: P_Key of partition 0" "mcast create;P_Key 0x8000 is invalid" \
	mcast create 239.9.9.9 --pkey 0x8000
err2 "mcast create: MGID missing" "mcast create;missing MGID" mcast create
err2 "mcast attach: QPN missing" "mcast attach;missing QPN" mcast attach 239.1.2.3
err2 "mcast attach: QPN and --dev" "mcast attach;not both" mcast attach 239.1.2.3 "$UDQ" --dev lo
err1 "mcast create: exists already" "mcast create;group 239.1.2.3 exists already" \
	mcast create 239.1.2.3
err1 "mcast attach: a non-UD QP" "mcast attach;QP $(printf '0x%06x' "$RCQ") is RC;only UD QPs" \
	mcast attach 239.1.2.3 "$RCQ"
err1 "mcast attach: twice" "mcast attach;is a member of 239.1.2.3 already" \
	mcast attach 239.1.2.3 "$UDQ"
err1 "mcast attach: unknown group" "mcast attach;no group 239.7.7.7;mcast create" \
	mcast attach 239.7.7.7 "$UDQ"
err1 "mcast attach: unknown QP" "mcast attach;no QP 0x00abcd" mcast attach 239.1.2.3 0xabcd
err1 "mcast detach: not a member" "mcast detach;QP $(printf '0x%06x' "$RCQ") is not a member" \
	mcast detach 239.1.2.3 "$RCQ"
err1 "mcast destroy: unknown group" "mcast destroy;no group 239.7.7.7" mcast destroy 239.7.7.7
err2 "mcast: unknown command" "mcast;unknown command 'join'" mcast join 239.1.2.3
# a full group: 256 members
made=()
for i in $(seq 1 256); do
	"$B/xhca" -i "$IF_A" -j qp create --type ud >"$OUT/out" 2>/dev/null || break
	made+=("$(qpn_of)")
done
xhca mcast create 239.2.2.2 >/dev/null
n=0
for q in "${made[@]}"; do "$B/xhca" -i "$IF_A" mcast attach 239.2.2.2 "$q" >/dev/null 2>&1 && n=$((n + 1)); done
check_eq "mcast: 256 members fit a group" "$n" 256
err1 "mcast attach: group full" "mcast attach;has 256 members, the most it may" \
	mcast attach 239.2.2.2 "$UDQ"
ok_case "mcast detach" "^detached qp $(printf '0x%06x' "${made[0]}") from group 239.2.2.2\$" \
	mcast detach 239.2.2.2 "${made[0]}"
"$B/xhca" -i "$IF_A" qp destroy "${made[1]}" >/dev/null
jok_case "mcast: a destroyed QP leaves its groups" \
	"[len(g['members']) for g in j['groups'] if g['mgid'] == '239.2.2.2'] == [254]" mcast show
for q in "${made[@]:1}"; do "$B/xhca" -i "$IF_A" qp destroy "$q" >/dev/null 2>&1; done
ok_case "mcast destroy" "^destroyed group 239\.2\.2\.2\$" mcast destroy 239.2.2.2
for gid in 239.1.2.3 ff0e::42; do "$B/xhca" -i "$IF_A" mcast destroy "$gid" >/dev/null; done
for q in "$UDQ" "$RCQ"; do "$B/xhca" -i "$IF_A" qp destroy "$q" >/dev/null; done
jok_case "mcast: all gone" 'j["groups"] == []' mcast show

# --- full QP table: xhcad --max-qps 4 -----------------------------------------------

daemon_stop
if ! xhcad_start --max-qps 4 --no-cm; then
	fail "cli_errors: xhcad --max-qps 4 does not start: $(tail -n 5 "$XHCAD_LOG" | tr '\n' ' ')"
	t_done
fi
jok_case "max-qps 4: status" 'j["max_qps"] == 4 and j["qps_in_use"] == 0' status
n=0
for i in $(seq 1 8); do
	"$B/xhca" -i "$IF_A" qp create --type rc >/dev/null 2>&1 || break
	n=$((n + 1))
done
check_eq "max-qps 4: four QPs fit" "$n" 4
err1 "create: table full" 'qp create;full|no free' qp create --type rc
err1 "create: table full, with --qpn" 'full|no free' qp create --type ud --qpn 0x777
jok_case "max-qps 4: status after" 'j["qps_in_use"] == 4' status
"$B/xhca" -i "$IF_A" -j qp show >"$OUT/out" 2>/dev/null
first=$(jget "$OUT/out" 'j["qps"][0]["qpn"]')
ok_case "full table: destroy one" "^destroyed qp " qp destroy "$first"
jok_case "full table: the freed slot is reused" 'j["type"] == "uc"' qp create --type uc

# --- full MR table: xhcad --max-mrs 2 ------------------------------------------------
# (the pinned xhca_mr of the daemon above is gone with it: the new size applies)

daemon_stop
if ! xhcad_start --max-mrs 2; then
	fail "cli_errors: xhcad --max-mrs 2 does not start: $(tail -n 5 "$XHCAD_LOG" | tr '\n' ' ')"
	t_done
fi
n=0
for i in $(seq 1 4); do
	"$B/xhca" -i "$IF_A" mr reg --len 4096 >/dev/null 2>&1 || break
	n=$((n + 1))
done
check_eq "max-mrs 2: two regions fit" "$n" 2
err1 "mr reg: table full" 'mr reg;all 2 memory regions are in use;--max-mrs' mr reg --len 4096
jok_case "max-mrs 2: status" 'j["mrs_in_use"] == 2 and j["max_mrs"] == 2' status
run_case "xhcad --max-mrs 0 is refused" 2 "max-mrs 0;use 1 to 65535" 0 "$B/xhcad" "$IF_A" --max-mrs 0

# --- the connection manager's QP1 (xhcad without --no-cm) ------------------------------
# QP1 is xhcad's, as the GSI QP is the kernel's on a Linux RDMA device: it is
# listed and counted, and the CLI cannot make, change or destroy it

daemon_stop
if ! xhcad_start --max-qps 4; then
	fail "cli_errors: xhcad --max-qps 4 does not start: $(tail -n 5 "$XHCAD_LOG" | tr '\n' ' ')"
	t_done
fi
jok_case "cm: status: on, no ids, QP1 one of the 4 QPs" \
	'j["cm"]["enabled"] is True and j["cm"]["ids"] == 0 and j["qps_in_use"] == 1' status
ok_case "cm: status text" '^cm: +0 ids \(0 listening, 0 connected\); 0 MADs sent' status
jok_case "cm: qp show lists QP1: ud, rts, xhcad's" \
	'[(q["qpn"], q["type"], q["state"], q["owner"]) for q in j["qps"]] == [(1, "ud", "rts", 0)]' qp show
err1 "cm: QP1 cannot be made" "qp create;QP 0x000001 is the connection manager's;--no-cm" \
	qp create --type ud --qpn 1
err1 "cm: QP1 cannot be changed" "qp modify;connection manager's" qp modify 1 --state err
err1 "cm: QP1 cannot be destroyed" "qp destroy;connection manager's" qp destroy 1
n=0
for i in $(seq 1 4); do
	"$B/xhca" -i "$IF_A" qp create --type rc >/dev/null 2>&1 || break
	n=$((n + 1))
done
check_eq "cm: QP1 takes one entry of --max-qps 4: three more fit" "$n" 3
jok_case "cm: QP1 unchanged by all that" \
	'[(q["type"], q["state"]) for q in j["qps"]] == [("ud", "rts")]' qp show 1

# --- daemon not running ---------------------------------------------------------

id=$(( $$ % 100000 ))
run_case "no daemon: no socket" 1 \
	"cannot reach xhcad for xn$id;/run/xhca/xn$id.sock;No such file or directory;start it with: xhcad xn$id" \
	0 "$B/xhca" -i "xn$id" status
# A socket file nobody listens on (left by a crash).
STALE_SOCK=/run/xhca/xs$id.sock
mkdir -p /run/xhca
"$PY" -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$STALE_SOCK"
run_case "no daemon: stale socket" 1 "cannot reach xhcad for xs$id;Connection refused;start it with: xhcad xs$id" \
	0 "$B/xhca" -i "xs$id" qp show
rm -f "$STALE_SOCK"
daemon_stop
run_case "no daemon: stopped" 1 "cannot reach xhcad for $IF_A;start it with: xhcad $IF_A" \
	0 "$B/xhca" -i "$IF_A" qp create --type rc
run_case "no daemon: -j still errors on stderr" 1 "start it with" 0 "$B/xhca" -j -i "$IF_A" stats

t_done
