#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The build as users expect it: xhcad's layers checked (a call upward or a
# file in no layer fails, naming it), a header's change rebuilds only the
# files that include it, make alone never installs packages, V=1 shows the
# commands (one object is compiled again, as it was), make test T= runs
# single tests and refuses a name it does not know.
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
out=$(mk -n test T=none 2>&1)
check "build: make test installs what is missing first (make deps)" grep -q 'apt-get' <<<"$out"
# V=1: the commands (one object made again, as it was)
obj=${B#"$XHCA_TOP"/}/user/xhcad/util.o
out=$(mk -W user/xhcad/util.c "$obj" 2>&1)
# (other outputs a run left older may be made too: only this object's line counts)
check "build: without V=1 a short line, no command ($out)" bash -c \
	'grep -qx "  CC      $2" <<<"$1" && ! grep -q -- "-c user/xhcad/util.c" <<<"$1"' _ "$out" "$obj"
out=$(mk V=1 -W user/xhcad/util.c "$obj" 2>&1)
check "build: V=1 shows the compiler's command" grep -q -- "-c user/xhcad/util.c" <<<"$out"
# make test T=...: single tests by name (tests/run.sh), a unit file alone
out=$(tests/run.sh unit/sched 2>&1)
check "build: T=unit/sched runs the scheduler's cases alone" \
	bash -c 'grep -q "^  ok - sched" <<<"$1" && ! grep -q "^  ok - rx:" <<<"$1" &&
		 grep -q " passed, 0 failed" <<<"$1"' _ "$out"
out=$(tests/run.sh nosuchtest 2>&1); rc=$?
check_eq "build: T= with an unknown name fails (exit 2)" "$rc" 2
check "build: ... naming what it takes" grep -q "no suite or test nosuchtest" <<<"$out"
out=$("$B/test_unit" --only nosuch 2>&1); rc=$?
check_eq "build: test_unit --only of no file fails (exit 2)" "$rc" 2
check "build: ... listing the files" grep -q "there are pkt, rx" <<<"$out"
t_done
