#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Runs the test suites (unit, integ, interop; all by default), or single
# tests: unit/FILE (pkt, rx, sched, ...), unit/FILE/CASE or unit/PATTERN
# (test_unit -t: unit/rx/seq_*; test_unit -l lists the cases), integ/NAME,
# interop/NAME, or a bare NAME of any of them (make test T="control
# unit/rx"); rxe (make test-rxe: the RXE harness, a qemu guest, about 7
# minutes; not in interop, never run by default); kernels (make
# test-kernels: xhca on Debian 12's 6.1 kernel in a qemu guest; never run
# by default); fresh (make test-fresh:
# the packages on a fresh Debian 12, with the Debian mirror; never run by
# default); stack (make test-stack: rdma-core's suite, UCX, libfabric and
# Open MPI on xhca, tests/stack; never run by default). Counts the
# "ok"/"not ok"/"skip" lines they print (test_unit's TAP: the checks,
# "# ok - ..."; each case of its plan must have its line), and ends with
# "N passed, N failed, N skipped".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(unit integ interop)
log=$(mktemp)
B=${XHCA_BUILD:-$top/build}
export XHCA_BUILD=$B
san=
if [ "${SANITIZE:-0}" = 1 ]; then
	# every sanitizer report of any program goes to a file here; one is a
	# failure. Leak detection is on (the default of ASan on Linux).
	san=$(mktemp -d)
	export ASAN_OPTIONS="log_path=$san/asan:detect_leaks=1:abort_on_error=0"
	export UBSAN_OPTIONS="log_path=$san/ubsan:print_stacktrace=1:halt_on_error=1"
	export LSAN_OPTIONS="log_path=$san/lsan"
fi
times=$(mktemp) # seconds each test took
trap 'rm -f "$log" "$times"; [ -n "$san" ] && rm -rf "$san"' EXIT

run_one() {
	local name=$1; shift
	local out t0=$SECONDS
	out=$(mktemp)
	echo "== $name"
	"$@" >"$out" 2>&1
	local rc=$?
	echo "$((SECONDS - t0)) $name" >>"$times"
	sed 's/^/  /' "$out"
	results "$name" "$rc" "$out" >"$out.r"
	cat "$out.r" >>"$log"
	if [ "$rc" != 0 ] && ! grep -q '^not ok ' "$out.r"; then
		echo "not ok - $name exited $rc" | tee -a "$log"
	fi
	rm -f "$out" "$out.r"
}

# A test's result lines from its output (file $3): the lines themselves,
# or of TAP (test_unit's: a plan "1..N") the checks, "# ok - ...", "# not
# ok - ...", "# skip - ...", as the others' lines; a case of the plan
# without its line ("ok N - FILE/CASE", "not ok N - ...": the program
# died) is a failure.
results() {
	awk -v name="$1" -v rc="$2" '
		FNR == NR { if (!tap && /^1\.\.[0-9]+$/) { tap = 1; plan = substr($0, 4) + 0 }
			    next }
		!tap { print; next }
		/^# (ok|not ok|skip) - / { print substr($0, 3); next }
		/^(not )?ok [0-9]+ - / { cases++ }
		END { if (tap && cases != plan)
			printf "not ok - %s: %d of its %d cases reported (exit %s)\n",
			       name, cases, plan, rc }
	' "$3" "$3"
}

for s in "${suites[@]}"; do
	case $s in
	unit) run_one unit "$B/test_unit" ;;
	integ|interop)
		for t in tests/"$s"/*.sh; do
			[ -e "$t" ] || continue
			[ "$t" = tests/interop/rxe.sh ] && continue # its own suite: rxe
			run_one "$s/$(basename "$t" .sh)" bash "$t"
		done ;;
	rxe|interop/rxe) run_one interop/rxe bash tests/interop/rxe.sh ;;
	kernels) run_one kernels bash tests/kernels/kernels.sh ;;
	stack)
		for t in tests/stack/*.sh; do
			run_one "stack/$(basename "$t" .sh)" bash "$t"
		done ;;
	fresh) run_one fresh bash tests/fresh/fresh.sh ;;
	unit/*) run_one "$s" "$B/test_unit" -t "${s#unit/}" ;;
	integ/*|interop/*|stack/*|fuzz/*)
		if [ -e "tests/$s.sh" ]; then run_one "$s" bash "tests/$s.sh"
		else echo "no test $s (tests/$s.sh)"; exit 2; fi ;;
	*)
		if [ -e "tests/integ/$s.sh" ]; then run_one "integ/$s" bash "tests/integ/$s.sh"
		elif [ -e "tests/interop/$s.sh" ]; then run_one "interop/$s" bash "tests/interop/$s.sh"
		elif [ -e "tests/unit/test_$s.c" ]; then run_one "unit/$s" "$B/test_unit" -t "$s"
		else
			echo "no suite or test $s: give unit, integ, interop, rxe, kernels, stack, fresh, unit/FILE[/CASE]," \
				"integ/NAME, interop/NAME or a NAME of tests/integ, tests/interop"
			exit 2
		fi ;;
	esac
done
if [ -n "$san" ]; then
	for r in "$san"/*; do
		[ -e "$r" ] || continue
		echo "not ok - sanitizer report $(basename "$r"): $(grep -m1 -E 'ERROR|runtime error|SUMMARY' "$r")" | tee -a "$log"
		sed 's/^/    /' "$r" | head -n 40
	done
fi
p=$(grep -c '^ok ' "$log"); f=$(grep -c '^not ok ' "$log"); k=$(grep -c '^skip ' "$log")
echo
grep '^not ok ' "$log" | sed 's/^/FAILED: /'
grep '^skip - ' "$log" | sed 's/^skip - /SKIPPED: /'
[ "$(wc -l <"$times")" -gt 1 ] &&
	echo "slowest: $(sort -rn "$times" | head -n 5 | awk '{ printf "%s%s %d s", s, $2, $1; s = ", " }')"
echo "$p passed, $f failed, $k skipped"
[ "$f" = 0 ]
