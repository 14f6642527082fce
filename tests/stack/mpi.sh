#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Open MPI on xhca (issue "The RDMA software stack runs on xhca"): Debian's
# openmpi-bin, pml ucx (OMPI_MCA_pml=ucx: it is that or an error), UCX on
# rc_verbs; the tests' own MPI program (mpitest.c, built with Debian's
# mpicc: a ping-pong of every size to 4 MiB checked both ways, allreduces)
# with two ranks on one host (loopback) and one rank on each of two xhca
# hosts (mpirun on A; B's rank through nsrsh, an rsh agent into B's
# namespace). Each run's traffic is seen in xhca's counters.
. "$(dirname "$0")/../lib.sh"
need_root "mpi"
need_cmds mpi mpicc mpirun
MID_MTU=4200 two_hosts mpi 512
links_up
chmod 755 "$tmp"
mpicc -O2 -o "$tmp/xhca-mpitest" "$XHCA_TOP/tests/stack/mpitest.c" 2>"$tmp/cc" ||
	{ fail "mpi: mpicc: $(head -n 3 "$tmp/cc")"; t_done; }
echo "$NS_B $IF_B" >"$tmp/hosts"

# the settings a user gives (docs/verbs.md): pml ucx over xhca's rc_verbs
# (UCX's rc_v: with ud_verbs for its wire-up), root allowed (the tests'),
# the other host's rank started by nsrsh, Open MPI's own TCP on the link
mpienv=(env OMPI_MCA_pml=ucx UCX_TLS=rc_v,self OMPI_ALLOW_RUN_AS_ROOT=1
	OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_plm_rsh_agent="$XHCA_TOP/tests/stack/nsrsh"
	XHCA_NSRSH_MAP="$tmp/hosts" XHCA_BUILD="$B" OMPI_MCA_oob_tcp_if_include=10.77.0.0/24
	OMPI_MCA_btl_tcp_if_include=10.77.0.0/24 TMPDIR="$tmp")

# run NAME MPIRUN-ARGS: mpirun on A, its output's checks shown and counted
run() {
	local name=$1 rc
	shift
	xa "${mpienv[@]}" timeout 120 mpirun --oversubscribe "$@" "$tmp/xhca-mpitest" \
		>"$tmp/mpi.out" 2>&1
	rc=$?
	grep -q '^not ok' "$tmp/mpi.out" && { fail "$name: see below"; sed 's/^/    /' "$tmp/mpi.out"; }
	check "$name: $(grep -c '^ok' "$tmp/mpi.out") of 3 checks, exit $rc" \
		test "$rc" = 0 -a "$(grep -c '^ok' "$tmp/mpi.out")" = 3 ||
		tail -n 15 "$tmp/mpi.out" | sed 's/^/    /'
}
packets() { "$B/xhca" -i "$1" -j status | json_get 'd["tx_frames"]'; }
looped() { "$B/xhca" -i "$IF_A" -j status | json_get 'd["loopback"]["self"]'; }

l0=$(looped)
run "mpirun -np 2 on one host (pml ucx, rc_verbs)" -np 2
check "mpi on one host: through xhca's loopback ($(( $(looped) - l0 )) frames)" \
	test "$(looped)" -gt $((l0 + 1000))
pa=$(packets "$IF_A") pb=$(packets "$IF_B")
run "mpirun -np 2 --host localhost,$NS_B (a rank on each host)" -np 2 --host "localhost,$NS_B"
check "mpi on two hosts: through both xhcas (frames sent: A $pa -> $(packets "$IF_A"), B $pb -> $(packets "$IF_B"))" \
	test "$(packets "$IF_A")" -gt $((pa + 1000)) -a "$(packets "$IF_B")" -gt $((pb + 1000))
t_done
