#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The build as users expect it: xhcad's layers checked (a call upward or a
# file in no layer fails, naming it), a header's change rebuilds only the
# files that include it, make alone never installs packages, V=1 shows the
# commands (one object is compiled again, as it was), make test T= runs
# single tests and refuses a name it does not know, make unit runs the unit
# tests alone, every unit case passes run alone, run.sh reads test_unit's
# TAP.
set -u
. "$(dirname "$0")/../lib.sh"
cd "$XHCA_TOP" || exit 1
mk() { make --no-print-directory SANITIZE="${SANITIZE:-0}" "$@"; }
layers=$(mk -s print-XHCAD_LAYERS)
objs=$(for n in $layers; do echo "$B/user/xhcad/$n.o"; done)
check "build: the layers list every file of user/xhcad" \
	test "$(ls user/xhcad/*.c | wc -l)" = "$(wc -w <<<"$layers")"
rlayers=$(mk -s print-RDMACM_LAYERS)
check "build: the layers list every file of user/rdmacm" \
	test "$(ls user/rdmacm/*.c | wc -l)" = "$(wc -w <<<"$rlayers")"
out=$(tests/check_layers.sh "$rlayers" $(for n in $rlayers; do echo "$B/pic/user/rdmacm/$n.o"; done) 2>&1)
check "build: librdmacm's files call only downward ($out)" grep -q "every call downward" <<<"$out"
out=$(tests/check_layers.sh "$layers" $objs 2>&1)
check "build: check-layers passes with XHCAD_LAYERS ($out)" grep -q "every call downward" <<<"$out"
# hostmem.c below mr.c: mr.c's calls into it are upward the other way round
swapped=$(sed 's/ hostmem mr / mr hostmem /' <<<" $layers ")
out=$(tests/check_layers.sh "$swapped" $objs 2>&1); rc=$?
check_eq "build: an upward call fails check-layers" "$rc" 1
check "build: ... naming the call (mr.c calls hm_alloc() of hostmem.c)" \
	grep -q "mr.c calls hm_alloc() of hostmem.c, a higher layer" <<<"$out"
out=$(tests/check_layers.sh "$(sed 's/ util / /' <<<" $layers ")" $objs 2>&1); rc=$?
check_eq "build: a file in no layer fails check-layers" "$rc" 1
check "build: ... naming it" grep -q "user/xhcad/util.c is in no layer" <<<"$out"
# -MMD: what a header's change rebuilds (make -W: as if it were new)
out=$(mk -n -W user/xhcad/proxy_int.h compile 2>&1 | grep -oE -- '-c [^ ]+\.c' | sort | tr '\n' ' ')
check_eq "build: proxy_int.h rebuilds its three users only" "$out" \
	"-c user/xhcad/proxy.c -c user/xhcad/proxy_thread.c -c user/xhcad/pxq.c "
out=$(mk -n -W tools/xhca/cli.h compile 2>&1 | grep -oE -- '-c [^ ]+\.c' | grep -vc tools/xhca/)
check_eq "build: the CLI's header rebuilds the CLI's files, nothing else" "$out" 0
# make alone: no package manager
out=$(mk -n 2>&1)
check "build: make (all) runs no apt-get" bash -c "! grep -q 'apt-get' <<<\"\$1\"" _ "$out"
stamps="${B#"$XHCA_TOP"/}/.layers-checked ${B#"$XHCA_TOP"/}/.man-checked"
mk $stamps >/dev/null 2>&1 # (made by make test, not by make test-sanitize)
out=$(mk -n test T=none 2>&1)
check "build: make test installs what is missing first (make deps)" grep -q 'apt-get' <<<"$out"
check "build: ... and checks the layers and man pages through stamps, again only when what they read changed" \
	bash -c 'grep -q "[.]layers-checked .*[.]man-checked" <<<"$1" && ! grep -q "check_layers.sh\|check_man3.sh" <<<"$1"' _ "$out"
out=$(mk -n -W "${B#"$XHCA_TOP"/}/user/xhcad/util.o" -W man/man3/xhca_open.3 $stamps 2>&1)
check "build: ... an object changed, a page changed: both checked again" \
	bash -c 'grep -q "check_layers.sh" <<<"$1" && grep -q "check_man3.sh" <<<"$1"' _ "$out"
out=$(mk -n unit T="rx/seq_* sched" 2>&1)
check "build: make unit runs test_unit -t for each of T, no packages, no layers checked" \
	bash -c '! grep -q "apt-get\|check_layers" <<<"$1" && grep -qF "$2" <<<"$1"' _ "$out" \
	"test_unit -t 'rx/seq_*' -t 'sched'"
# V=1: the commands (one object made again, as it was)
obj=${B#"$XHCA_TOP"/}/user/xhcad/util.o
out=$(mk -W user/xhcad/util.c "$obj" 2>&1)
# (other outputs a run left older may be made too: only this object's line counts)
check "build: without V=1 a short line, no command ($out)" bash -c \
	'grep -qx "  CC      $2" <<<"$1" && ! grep -q -- "-c user/xhcad/util.c" <<<"$1"' _ "$out" "$obj"
out=$(mk V=1 -W user/xhcad/util.c "$obj" 2>&1)
check "build: V=1 shows the compiler's command" grep -q -- "-c user/xhcad/util.c" <<<"$out"
# the compiler's flags: an object is out of date under others ($(OUT)/cflags
# keeps them; OUT a directory of its own, an object of it made, and a
# program compiled straight from its source)
t=$(mktemp -d)
rcs=
for o in "$t/pic/user/lib/log.o" "$t/px_counter.so"; do
	mk -s OUT="$t" "$o" >/dev/null 2>&1
	mk -q OUT="$t" "$o"; rc1=$?
	CFLAGS="-O1 -g" mk -q OUT="$t" "$o"; rcs+="$rc1 $? "
done
check_eq "build: an object and a program from its source are up to date under the flags they were made with, not under others" \
	"$rcs" "0 1 0 1 "
check "build: ... the flags kept in OUT/cflags" grep -q -- "^$(mk -s print-CC) *-O1 -g " "$t/cflags"
rm -rf "$t"
# x86 with GCC: the data path's copies of a known size are plain moves, not
# rep movs (the Makefile's -mmemcpy-strategy; docs/bench-history.md), and the
# ICRC's wide folds clear the upper halves before the SSE fold they end in
if [ "$(uname -m)" = x86_64 ] && [ -n "$(mk -s print-STRINGOP_TAKEN)" ]; then
	for f in xhca_icrc sq_fetch gso_run_add; do
		n=$(objdump -d --no-show-raw-insn "$B/xhcad" |
			awk -v f="<$f>:" '$2 == f { p = 1; next } p && /^$/ { p = 0 } p' |
			grep -c 'rep movs\|rep stos')
		check_eq "build: xhcad's $f copies without rep movs/stos" "$n" 0
	done
	# (per call of crc_fold4 in the two: 1 if a ymm or zmm register was
	# used since the last vzeroupper)
	out=$(objdump -d --no-show-raw-insn "$B/xhcad" | awk '
		/<crc_clmul(256|512)>:/ { p = 1; dirty = 0; next }
		p && /^$/ { p = 0 }
		p && /vzeroupper/ { dirty = 0; next }
		p && /%[yz]mm/ { dirty = 1 }
		p && /<crc_fold4>/ { printf "%d ", dirty }')
	check_eq "build: crc_clmul256 and 512 clear the upper halves before crc_fold4" "$out" "0 0 "
else
	skip "build: rep movs and vzeroupper checks: not x86-64 with GCC's -mmemcpy-strategy"
fi
# make test T=...: single tests by name (tests/run.sh), a unit file alone
# (test_unit's TAP: "ok N - FILE/CASE", its checks "# ok - FILE: ...")
out=$(tests/run.sh unit/sched 2>&1)
check "build: T=unit/sched runs the scheduler's cases alone" \
	bash -c 'grep -q "^  ok [0-9]* - sched/" <<<"$1" && ! grep -q "^  ok [0-9]* - rx/" <<<"$1" &&
		 grep -q " passed, 0 failed" <<<"$1"' _ "$out"
# ... a unit case alone (test_unit -t FILE/CASE): a plan of one, that case,
# run.sh's count its checks
out=$(tests/run.sh unit/sched/hol_fifo 2>&1)
n=$(grep -c "^  # ok - sched: " <<<"$out")
check "build: T=unit/sched/hol_fifo runs that case only, its $n checks counted" \
	bash -c 'grep -qx "  1\.\.1" <<<"$1" && grep -qx "  ok 1 - sched/hol_fifo" <<<"$1" &&
		 [ "$(grep -cE "^  (not )?ok [0-9]+ - " <<<"$1")" = 1 ] && [ "$2" -gt 1 ] &&
		 grep -qx "$2 passed, 0 failed, 0 skipped" <<<"$1"' _ "$out" "$n"
# every unit case alone: none needs a case before it to have run (but
# rx/every_reason, a check over all of rx's: skipped alone)
bad=
for c in $("$B/test_unit" -l); do
	o=$("$B/test_unit" -t "$c" 2>&1) && grep -qx "1\.\.1" <<<"$o" || bad="$bad $c"
done
check "build: every unit case (test_unit -l) passes alone, -t FILE/CASE (failed:${bad:- none})" \
	test -z "$bad"
# a TAP run short of its plan (test_unit died) fails, though no check did
fake=$(mktemp -d)
printf '#!/bin/sh\necho 1..3; echo "# ok - a: one"; echo "ok 1 - a/b"\n' >"$fake/test_unit"
chmod +x "$fake/test_unit"
out=$(XHCA_BUILD=$fake tests/run.sh unit/a 2>&1); rc=$?
rm -rf "$fake"
check_eq "build: run.sh fails a unit run whose cases stop short of its plan" "$rc" 1
check "build: ... saying so, its check counted" \
	bash -c 'grep -q "unit/a: 1 of its 3 cases reported" <<<"$1" &&
		 grep -qx "1 passed, 1 failed, 0 skipped" <<<"$1"' _ "$out"
out=$(tests/run.sh nosuchtest 2>&1); rc=$?
check_eq "build: T= with an unknown name fails (exit 2)" "$rc" 2
check "build: ... naming what it takes" grep -q "no suite or test nosuchtest" <<<"$out"
out=$("$B/test_unit" --only nosuch 2>&1); rc=$?
check_eq "build: test_unit --only of no file fails (exit 2)" "$rc" 2
check "build: ... listing the files" grep -q "there are pkt, rx" <<<"$out"
t_done
