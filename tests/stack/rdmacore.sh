#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# rdma-core's own test suite (v44.0's tests/, unmodified, third-party: it
# is in ../shared/rdma-core-tests, run from there) with Debian's
# python3-pyverbs on one xhca device, through `xhca exec`: its traffic
# tests connect two QPs of the device to each other (loopback), its
# rdma_cm tests find the device's address in the device view. Each test
# class runs under a time limit (a hang fails, not stalls). Done means no
# test fails, errors or hangs, and every skip is for a feature README.md
# lists as unsupported (the table below says which): any other skip fails.
. "$(dirname "$0")/../lib.sh"
need_root "rdmacore"
SUITE=${RDMA_CORE_TESTS:-$XHCA_TOP/../shared/rdma-core-tests}
[ -e "$SUITE/run_tests.py" ] || { skip "rdmacore: rdma-core's suite is not in $SUITE (../shared/rdma-core-tests)"; t_done; }
/usr/bin/python3 -c 'import pyverbs.device' 2>/dev/null ||
	{ skip "rdmacore: Debian's python3-pyverbs is not installed (make deps)"; t_done; }
LIMIT=${RDMACORE_LIMIT:-240}	# seconds a class may take
MODULES=${RDMACORE_MODULES:-"test_addr test_atomic test_cq test_cq_events test_cqex test_device
	test_fork test_mr test_odp test_parent_domain test_pd test_qp test_qpex test_rdmacm
	test_relaxed_ordering test_rss_traffic test_shared_pd test_tag_matching test_flow
	test_cuda_dmabuf"}

# The skips that are fine: a feature README.md lists as unsupported. Each
# entry: the test class (a regex), the skip's reason (a regex), the
# feature as README names it. A skip that matches none fails the run.
ALLOWED=(
	".|[Dd]evice memory|device memory"
	".|DM is not supported|device memory"
	".|XRC|XRC"
	".|[Cc]reate QP type 8 |raw packet QPs"
	".|[Rr]aw [Pp]acket QP|raw packet QPs"
	"FlowTest|.|flow steering"
	"RSSTrafficTest|.|raw packet QPs (RSS)"
	"ParentDomain|.|parent domains"
	"TMTest|.|tag matching"
	"DmaBuf|.|dmabuf/GPU"
	"Cuda|.|dmabuf/GPU"
	"Odp|.|on-demand paging"
	"ParentDomain|[Hh]uge|hugetlb memory"
	".|[Ii]mporting a device|importing another process's context (shared PD)"
)
topo_setup || { fail "rdmacore: topology"; t_done; }
tmp=$(mktemp -d)
trap 'topo_cleanup; rm -rf "$tmp"' EXIT
xhcad_start --hostmem-mb 1024 || { fail "rdmacore: xhcad"; t_done; }
links_up
DEV=xhca_$IF_A

# allowed CLASS REASON: the feature of the first entry that matches both
allowed() {
	local a cls why feat
	for a in "${ALLOWED[@]}"; do
		IFS='|' read -r cls why feat <<<"$a"
		grep -qE -- "$cls" <<<"$1" && grep -qE -- "$why" <<<"$2" && { echo "$feat"; return 0; }
	done
	return 1
}

# the test classes of each module, from the suite's own list
xa env PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 "$SUITE/run_tests.py" --list-tests \
	>"$tmp/list" 2>&1
classes=()
for m in $MODULES; do
	while read -r c; do classes+=("$c"); done < <(sed -n "s/^tests\.$m\.\([A-Za-z0-9_]*\)\..*/tests.$m.\1/p" "$tmp/list" | sort -u)
done
check "rdmacore: the suite lists ${#classes[@]} test classes of its device-independent modules" \
	test "${#classes[@]}" -gt 20

total_ok=0 total_skip=0 total_bad=0
for c in "${classes[@]}"; do
	xa env PYTHONDONTWRITEBYTECODE=1 timeout -k 10 "$LIMIT" /usr/bin/python3 \
		"$SUITE/run_tests.py" --dev "$DEV" --gid 1 -v "$c" >"$tmp/out" 2>&1
	rc=$?
	# (unittest's summary: a test that prints ends its "... ok" on a line
	# of its own)
	ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' "$tmp/out")
	n_ok=$(( ${ran:-0} - $(grep -cE "\.\.\. skipped" "$tmp/out") ))
	[ "$n_ok" -ge 0 ] || n_ok=0
	bad=$(grep -E '\.\.\. (FAIL|ERROR)$|unexpected success' "$tmp/out")
	skips=$(grep -oE "\.\.\. skipped .*" "$tmp/out" | sed 's/^\.\.\. skipped //')
	why=""
	while read -r s; do
		[ -n "$s" ] || continue
		f=$(allowed "$c" "$s") || { bad+="${bad:+$'\n'}skipped for no listed reason: $s"; continue; }
		why+="${why:+, }$f"
	done <<<"$skips"
	n_skip=$(grep -cE "\.\.\. skipped" "$tmp/out")
	total_ok=$((total_ok + n_ok))
	total_skip=$((total_skip + n_skip))
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		fail "$c: still running after ${LIMIT}s (killed); the last lines:"
		tail -n 5 "$tmp/out" | sed 's/^/    /'
		total_bad=$((total_bad + 1))
	elif [ -n "$bad" ] || { [ "$rc" != 0 ] && [ "$n_ok$n_skip" = 00 ]; }; then
		fail "$c: $n_ok passed, exit $rc"
		echo "${bad:-$(tail -n 5 "$tmp/out")}" | sed 's/^/    /'
		grep -E '^(FAIL|ERROR):|Error|assert' "$tmp/out" | head -n 10 | sed 's/^/    /'
		total_bad=$((total_bad + 1))
	else
		pass "$c: $n_ok passed${n_skip:+, $n_skip skipped}${why:+ ($(tr ',' '\n' <<<"$why" | sed 's/^ //' | sort -u | paste -sd, | sed 's/,/, /g'))}"
	fi
done
echo "# rdma-core's suite on $DEV: $total_ok tests passed, $total_skip skipped (listed unsupported features), $total_bad classes failed"
t_done
