#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The packages on a Debian 12 system that runs systemd as PID 1: a container
# (systemd-nspawn, booted) whose root is this machine's root file system
# under an overlay that goes with it, with a network, a bpffs and a mount
# namespace of its own: nothing it does reaches this machine. There `apt-get
# install ./xhca_*.deb` as on a fresh machine; xhcad@v0 runs under the real
# systemd, with the unit's sandboxing and /etc/xhca/v0.conf; a member of
# the group xhca runs ibv_rc_pingpong through xhca exec against a second
# xhca host (xhcad by hand in a namespace of the container), a user outside
# it is told why not; restarts and a crash keep the fast path; a mistake in
# the file stops the unit for good, with the line in the journal; removing
# the package stops the instances.
set -u
. "$(dirname "$0")/../lib.sh"
need_root service
if [ "${SANITIZE:-0}" = 1 ]; then
	skip "service: the packages are built from the plain tree (make test runs this)"
	t_done
fi
command -v systemd-nspawn >/dev/null ||
	{ skip "service: no systemd-nspawn to boot a system with (make deps: systemd-container)"; t_done; }
# the mounts (tmpfs, overlay, bpffs) in a mount namespace of this test's own
[ -n "${XHCA_SVC_NS:-}" ] || exec env XHCA_SVC_NS=1 unshare -m --propagation private bash "$0"

d=$(mktemp -d /tmp/xhca-svc.XXXXXX)
XB= # host B's xhcad, started by hand: its nsenter and the subshell around it
trap '[ -n "$XB" ] && { pkill -KILL -P "$XB"; kill -KILL "$XB"; } 2>/dev/null
	ct_cleanup "$d"' EXIT
trap 'exit 130' INT TERM

log=$d.log
if ! make -C "$XHCA_TOP" --no-print-directory -s deb >"$log" 2>&1; then
	fail "service: make deb: $(tail -n 3 "$log" | tr '\n' ' ')"
	t_done
fi
rm -f "$log"
DEBS=$XHCA_TOP/build/debs

# cb CMD...: CMD in the container's namespace b (host B)
cb() { c nsenter --net=/run/netns/b "$@"; }

# the root file system (without the mounts on it) under an overlay in memory
if ! ct_root "$d" / || ! ct_boot "$d" --bind-ro="$DEBS:/debs"; then
	fail "service: the container did not boot: $(tail -n 5 "$d/console" | tr '\n' ' ')"
	t_done
fi
pass "service: a container booted with systemd as PID 1 ($(c systemctl is-system-running))"

# ---- apt install ------------------------------------------------------------------
# (this machine's image forbids maintainer scripts to start or stop
# services, as Docker images do; a fresh Debian has no such policy)
rm -f "$d/root/usr/sbin/policy-rc.d"
out=$(c sh -c 'cd /debs && apt-get install -y --no-install-recommends ./xhca_*.deb' 2>&1)
check "service: apt-get install ./xhca_*.deb: exit $?, the package installed" \
	cgrep 'install ok installed' dpkg-query -W -f '${Status}' xhca
[ "$(c dpkg-query -W -f '${Status}' xhca 2>/dev/null)" = "install ok installed" ] ||
	{ echo "$out" | tail -n 15 | sed 's/^/    /'; t_done; }
check "service: it made the group xhca" cq getent group xhca
check_eq "service: and /run/xhca (tmpfiles.d)" "$(c stat -c '%a %U' /run/xhca)" "755 root"
check "service: systemd knows xhcad@.service" cq systemctl cat xhcad@.service
out=$(c systemd-analyze verify xhcad@v0.service 2>&1)
check_eq "service: systemd-analyze verify xhcad@v0.service, on the installed system" "$out" ""
# no udev in a container, so no device units: the unit without its
# BindsTo/After on sys-subsystem-net-devices-%i.device, all else as shipped
ct_unit_no_device

# ---- two hosts: v0 (the container's network, the unit) and v1 (namespace b)
c ip netns add b
c ip link add v0 numrxqueues 2 numtxqueues 2 type veth peer name v1 numrxqueues 2 \
	numtxqueues 2 netns b
c ip addr add 10.78.0.1/24 dev v0
cb ip addr add 10.78.0.2/24 dev v1
c ip link set v0 address 02:78:00:00:00:01 up
cb ip link set v1 address 02:78:00:00:00:02 mtu 4200 up
cb ip link set lo up
c ethtool -K v0 tx off rxvlan off txvlan off gro on >/dev/null 2>&1
cb ethtool -K v1 tx off rxvlan off txvlan off gro on >/dev/null 2>&1
cat >"$d/root/etc/xhca/v0.conf" <<'EOF'
# host A
hostmem-mb = 96
flowqs = 4
mtu = 4200
icrc = after
EOF
out=$(c xhcad --check-config v0 2>&1)
check "service: xhcad --check-config v0: $out" test $? = 0

# active NAME: the unit is active and its socket answers
active() {
	for _ in $(seq 100); do
		c systemctl -q is-active "$1" && c xhca -i v0 status >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}
# check_active NAME: xhcad@v0 is active and answers; its journal when not
check_active() {
	if active xhcad@v0; then
		pass "$1"
	else
		fail "$1"
		c journalctl -u xhcad@v0 --no-pager | tail -n 15 | sed 's/^/    /'
	fi
}
main_pid() { c systemctl show -p MainPID --value xhcad@v0; }

c systemctl start xhcad@v0
if ! active xhcad@v0; then
	fail "service: systemctl start xhcad@v0: not active, or its socket does not answer"
	c journalctl -u xhcad@v0 --no-pager | tail -n 15 | sed 's/^/    /'
	t_done
fi
pass "service: systemctl start xhcad@v0: active, the socket answers"
st=$(c xhca -i v0 -j status)
check_eq "service: v0.conf's settings: flow queues, host memory (and the unit's --keep)" \
	"$(json_get 'd["flowqs"], d["hostmem_bytes"] >> 20, d["keep"]' <<<"$st")" "4 96 1"
check_eq "service: v0.conf's MTU" "$(c cat /sys/class/net/v0/mtu)" 4200
check_eq "service: the socket is the group xhca's (--group xhca)" \
	"$(c stat -c '%a %U %G' /run/xhca/v0.sock)" "660 root xhca"
pid=$(main_pid)
check_eq "service: xhcad runs sandboxed: capability bounding set, seccomp, no new privileges" \
	"$(c grep -E '^(CapBnd|Seccomp|NoNewPrivs):' /proc/"$pid"/status | tr -s '\t ' ' ' |
		tr '\n' ' ')" "CapBnd: 000000c000207001 NoNewPrivs: 1 Seccomp: 2 "
sec=$(c systemd-analyze security xhcad@v0.service 2>/dev/null | tail -n 1)
echo "  # $sec"

# host B: xhcad by hand, as root
cb xhcad v1 --hostmem-mb 64 >"$d/xhcad-b.log" 2>&1 &
XB=$!
for _ in $(seq 100); do c xhca -i v1 status >/dev/null 2>&1 && break; sleep 0.1; done

# ---- verbs programs: a member of the group, a user outside it --------------------
c useradd -m -G xhca alice
c useradd -m bob
# pingpong NAME: ibv_rc_pingpong between alice on A and root on B, both
# under a timeout; both ends report their iterations
pingpong() {
	local srv rc rs
	c runuser -u alice -- timeout 30 xhca -i v0 exec -- ibv_rc_pingpong -g 1 -c -n 100 -s 4096 \
		>"$d/srv" 2>&1 &
	srv=$!
	for _ in $(seq 100); do c ss -Hltn 'sport = :18515' | grep -q LISTEN && break; sleep 0.05; done
	cb timeout 30 xhca -i v1 exec -- ibv_rc_pingpong -g 1 -c -n 100 -s 4096 10.78.0.1 \
		>"$d/cli" 2>&1
	rc=$?
	wait "$srv"
	rs=$?
	check "$1: alice's server exit $rs, the client's $rc, both done ($(grep -h ' iters in ' \
		"$d/cli"))" test "$(cat "$d/srv" "$d/cli" | grep -c ' iters in ')" = 2 ||
		tail -n 3 "$d/srv" "$d/cli" | sed 's/^/    /'
}
pingpong "service: ibv_rc_pingpong of a member of xhca through xhca exec"
check_eq "service: xhca exec took the packaged verbs library" \
	"$(c runuser -u alice -- xhca -i v0 exec -- sh -c 'echo $LD_LIBRARY_PATH')" \
	"/usr/lib/$(gcc -print-multiarch)/xhca/verbs"
out=$(c runuser -u bob -- xhca -i v0 exec -- ibv_devinfo 2>&1)
check "service: bob, outside the group: xhca exec refuses (exit $?), saying why" \
	grep -q 'no permission to use xhca_v0' <<<"$out"
out=$(c runuser -u bob -- env LD_LIBRARY_PATH=/usr/lib/$(gcc -print-multiarch)/xhca/verbs \
	ibv_devinfo -d xhca_v0 2>&1)
check "service: bob's ibv_devinfo with the library alone: not opened, a warning why" \
	grep -q 'Warning: no permission to use xhca_v0' <<<"$out"

# ---- the sandbox lets xhcad make the multicast replication port (ip link add)
c ip link add p0 type veth peer name p1
c ip link set p0 up
c ip link set p1 up
qpn=$(c xhca -i v0 -j qp create --type ud | json_get 'd["qpn"]')
c xhca -i v0 qp modify "$qpn" --state init >/dev/null
c xhca -i v0 mcast create 239.7.7.7 >/dev/null
c xhca -i v0 mcast attach 239.7.7.7 "$qpn" >/dev/null
c xhca -i v0 mcast attach 239.7.7.7 --dev p0 >/dev/null
check "service: under the sandbox xhcad made the replication port (a veth pair xhr<ifindex>)" \
	cgrep ' xhr[0-9]*p@xhr[0-9]*:.* xdp' ip -o link show
c xhca -i v0 mcast destroy 239.7.7.7 >/dev/null
c xhca -i v0 qp destroy "$qpn" >/dev/null

# ---- restarts keep the fast path: the next xhcad takes back the maps ---------------
qpn=$(c xhca -i v0 -j qp create --type rc | json_get 'd["qpn"]')
# the QPs but the connection manager's QP1 (xhcad's own, made again at each start)
qps() { c xhca -i v0 -j qp show | json_get '" ".join(str(q["qpn"]) for q in d["qps"] if q["qpn"] != 1)'; }
c systemctl restart xhcad@v0
check_active "service: systemctl restart: active again"
check_eq "service: ... with the QP made before (--keep)" "$(qps)" "$qpn"
check_eq "service: ... and the connection manager's QP1, once" \
	"$(c xhca -i v0 -j qp show | json_get '[q["qpn"] for q in d["qps"]].count(1)')" 1
pid=$(main_pid)
[ "$pid" -gt 1 ] 2>/dev/null && c kill -KILL "$pid"
for _ in $(seq 100); do
	p=$(main_pid)
	[ "$p" != "$pid" ] && [ "$p" != 0 ] && break
	sleep 0.1
done
check_active "service: xhcad killed: systemd starts it again (Restart=on-failure)"
check_eq "service: ... once, with the QP" \
	"$(c systemctl show -p NRestarts --value xhcad@v0) $(qps)" "1 $qpn"
c xhca -i v0 qp destroy "$qpn" >/dev/null
pingpong "service: ibv_rc_pingpong after the crash"

# ---- a mistake in the file: no restart loop, the line in the journal ---------------
echo "poll-us = 2000000" >>"$d/root/etc/xhca/v0.conf"
out=$(c xhcad --check-config v0 2>&1)
rc=$?
check "service: --check-config names the line and what to give ($(head -n 1 <<<"$out"))" \
	test $rc = 1 -a "$(grep -c '^/etc/xhca/v0.conf:6: poll-us = 2000000: use 0 to 1000000$' <<<"$out")" = 1
c systemctl restart xhcad@v0
sleep 3
check_eq "service: the unit failed with exit 2 and was not restarted" \
	"$(for p in ActiveState ExecMainStatus NRestarts; do
		c systemctl show -p $p --value xhcad@v0; done | tr '\n' ' ')" "failed 2 0 "
check "service: the journal has the mistake" \
	cgrep 'v0.conf:6: poll-us = 2000000' journalctl -u xhcad@v0 --no-pager
sed -i '$d' "$d/root/etc/xhca/v0.conf"

# ---- the package removed: no xhcad left running, nor its program ------------------
c systemctl reset-failed xhcad@v0
c systemctl start xhcad@v0
active xhcad@v0
# an upgrade (here: the same version again) restarts the running instances
qpn=$(c xhca -i v0 -j qp create --type rc | json_get 'd["qpn"]')
pid=$(main_pid)
out=$(c sh -c 'cd /debs && apt-get install -y --reinstall ./xhca_*.deb' 2>&1)
rc=$?
check "service: apt-get install --reinstall: exit $rc, xhcad@v0 restarted (pid $pid, now $(main_pid))" \
	test "$(main_pid)" != "$pid"
check_active "service: ... active again"
check_eq "service: ... with its QP" "$(qps)" "$qpn"
id=$(c ip -d link show v0 | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p')
out=$(c apt-get remove -y xhca 2>&1)
rc=$?
check_eq "service: apt-get remove xhca: exit $rc, xhcad@v0 stopped, xhcad gone" \
	"$(c systemctl is-active xhcad@v0) $(c ls /usr/sbin/xhcad 2>&1 | grep -c 'No such')" \
	"inactive 1" || echo "$out" | tail -n 8 | sed 's/^/    /'
# the unit's --keep left xhca_rx and the pins at the stop: the prerm's
# xhcad --unload takes them (host B's xhcad, by hand, still serves v1: left)
check_eq "service: ... xhca_rx (id $id) taken off v0: no xdp in ip link show, the program gone" \
	"$(c ip -o link show v0 | grep -c ' xdp') $(bpftool prog show id "${id:-0}" 2>&1 |
		grep -c xhca_rx)" "0 0"
check "service: ... the pin directory /sys/fs/bpf/xhca/v0 and the restart record gone" \
	cq test ! -e /sys/fs/bpf/xhca/v0 -a ! -e /run/xhca/v0.state
check "service: ... the removal said what it did" \
	grep -q "xhcad: v0: detached xhca_rx (id $id, native mode); removed 20 pins" <<<"$out"
echo "  # the prerm: $(grep '^xhcad: ' <<<"$out" | tr '\n' ' ')"
check "service: ... and that it left v1 to the xhcad serving it" \
	grep -q "another xhcad already serves v1" <<<"$out"
t_done
