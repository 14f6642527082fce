#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make test-fresh (not part of make test): the packages on a FRESH Debian 12.
# integ/service.sh boots this machine's root, where libbpf1, libxdp1 and
# ibverbs-utils are installed already; here the root is a minimal bookworm
# made by debootstrap (tests/fresh/root.sh, cached), with systemd and dbus
# only, booted in a container (systemd-nspawn -b) under an overlay in memory.
# In it `apt install ./xhca_*.deb` (as README says) fetches what the package
# depends on from the Debian mirror; libxhca1 and libxhca-dev install beside
# it; then ibverbs-utils. Then xhcad@v0 and xhcad@v1 (v1 in a network
# namespace of the container's, the other end of a veth pair, by a drop-in
# with NetworkNamespacePath=) run as units; alice, in the group xhca, runs
# ibv_rc_pingpong on both through xhca exec; bob, outside it, is told why
# not; apt-get remove xhca stops both units and takes xhca_rx off both
# interfaces. The steps: tests/fresh/steps.sh.
# The container's apt reaches the mirror through tests/fresh/mirror_proxy.py,
# whose socket is on the container's loopback: the container has no other
# way out, and nothing is added to this machine's network.
# Not covered: the unit's BindsTo=/After= on the interface's device unit (a
# container has no udev: the test starts the unit without them, as
# service.sh does); bpffs mounted by systemd at boot (the container gets one
# from the test); a real NIC (veths, with the offloads a veth needs for XDP).
# Without network (no bootstrap, no mirror) it says SKIPPED, never ok.
set -u
. "$(dirname "$0")/../lib.sh"
need_root fresh
if [ "${SANITIZE:-0}" = 1 ]; then
	skip "fresh: the packages are built from the plain tree"
	t_done
fi
for p in systemd-nspawn:systemd-container debootstrap:debootstrap \
	dpkg-buildpackage:dpkg-dev /usr/bin/python3:python3; do
	command -v "${p%%:*}" >/dev/null ||
		{ skip "fresh: no ${p%%:*} (make deps: ${p#*:})"; t_done; }
done
# the mounts (tmpfs, overlay, bpffs) in a mount namespace of this test's own
[ -n "${XHCA_FRESH_NS:-}" ] || exec env XHCA_FRESH_NS=1 unshare -m --propagation private bash "$0"

HERE=$XHCA_TOP/tests/fresh
MIRROR_HOST=deb.debian.org
PORT=3142
TRIPLET=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
VERBS_DIR=/usr/lib/$TRIPLET/xhca/verbs
d=$(mktemp -d /tmp/xhca-fresh.XXXXXX)
PROXY=
cleanup() {
	if [ -n "$PROXY" ]; then
		kill -TERM "$PROXY" 2>/dev/null
		wait "$PROXY" 2>/dev/null
	fi
	ct_cleanup "$d"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
. "$HERE/steps.sh"

t0=$(date +%s)
mirror_up
fresh_root
build_debs
boot_fresh
echo "  # $(( $(date +%s) - t0 )) s: root, packages, boot"
install_xhca || t_done
install_verbs_utils || t_done
echo "  # $(( $(date +%s) - t0 )) s: installed"
two_ends
units_up || t_done
pingpong_alice
bob_refused
remove_xhca
echo "  # $(( $(date +%s) - t0 )) s in all"
t_done
