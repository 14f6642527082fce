#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The device view (issue "The RDMA software stack runs on xhca", part 2):
# what a program of `xhca exec` finds of its device outside the verbs, as
# the kernel shows an RDMA device: /dev/infiniband/uverbsN (a character
# device it may open), /sys/class/infiniband/<dev> (live: an address added
# while it runs is a GID there as in ibv_query_gid), the interface's device,
# /sys/class/infiniband_verbs, and ibv_device's names pointing there (the
# tests' verbs program checks each file against the verbs). For root and
# for a member of xhcad's group (a user namespace); nothing the host sees
# changes; without user namespaces the program runs without a view, and
# says so.
set -u
. "$(dirname "$0")/../lib.sh"
need_root "devview"
command -v setpriv >/dev/null || { skip "devview: no setpriv (util-linux)"; t_done; }
need_cmds devview ibv_devinfo
topo_setup || { fail "devview: topology"; t_done; }
tmp=$(mktemp -d)
trap 'topo_cleanup; rm -rf "$tmp"' EXIT
GROUP=$(getent group 65534 | cut -d: -f1)
xhcad_start --group "$GROUP" || { fail "devview: xhcad"; t_done; }
links_up
DEV=xhca_$IF_A
V=/sys/class/infiniband/$DEV

# ---- as root --------------------------------------------------------------------
out=$(xa sh -c "stat -c '%F %a' /dev/infiniband/uverbs0 /dev/infiniband/rdma_cm; head -c 0 /dev/infiniband/uverbs0 && echo opened")
check_eq "/dev/infiniband/uverbs0 and rdma_cm: character devices the program may open" \
	"$(echo $out)" "character special file 666 character special file 666 opened"
out=$(xa sh -c "cat /sys/class/infiniband_verbs/uverbs0/ibdev /sys/class/infiniband_verbs/abi_version; stat -c '%t:%T' /dev/infiniband/uverbs0; cat /sys/class/infiniband_verbs/uverbs0/dev")
set -- $out
check_eq "/sys/class/infiniband_verbs/uverbs0: ibdev $1, ABI $2, dev $4 as the node's ($3, hex)" \
	"$1 $2 $(printf '%d:%d' "0x${3%%:*}" "0x${3##*:}")" "$DEV 6 $4"
check_eq "ls /sys/class/infiniband: the device" "$(xa ls /sys/class/infiniband)" "$DEV"
rd() { xa cat "$V/$1"; }
check_eq "node_type" "$(rd node_type)" "1: CA"
check_eq "node_guid, as ibv_devinfo's" "$(rd node_guid)" \
	"$(xa ibv_devinfo | awk '/node_guid/ {print $2}')"
check_eq "ports/1/state, link_layer, rate, lid, pkeys/0" \
	"$(for f in state link_layer rate lid pkeys/0; do rd ports/1/$f; done | tr '\n' '|')" \
	"4: ACTIVE|Ethernet|25 Gb/sec (1X EDR)|0x0|0xffff|"
check_eq "ports/1/gids/1, gid_attrs/types/1, gid_attrs/ndevs/1: $IP_A, RoCE v2, $IF_A" \
	"$(for f in gids/1 gid_attrs/types/1 gid_attrs/ndevs/1; do rd ports/1/$f; done | tr '\n' '|')" \
	"0000:0000:0000:0000:0000:ffff:0a4d:0001|RoCE v2|$IF_A|"
check_eq "device: the interface's (device/net/$IF_A, numa_node, driver veth)" \
	"$(xa sh -c "ls $V/device/net; cat $V/device/numa_node; basename \$(readlink $V/device/driver); test -s $V/device/local_cpus && echo cpus" | tr '\n' ' ')" \
	"$IF_A -1 veth cpus "
# every file against the verbs, and ibv_device's names (a C program)
xa "$B/xhca-verbstest" view >"$tmp/view" 2>&1
prog_checks "xhca-verbstest view: sysfs as the verbs have it" "$tmp/view" $?

# live: an address added while the program runs (the IPv4 addresses come
# before the IPv6 ones: the new one takes index 2, the IPv6 one moves on)
was=$(cat "/run/xhca/$IF_A.ib/ports/1/gids/2")
xa sh -c "for i in \$(seq 50); do grep -q 0a4f:0001 $V/ports/1/gids/2 && break; sleep 0.1; done; cat $V/ports/1/gids/2 $V/ports/1/gid_attrs/types/2; ibv_devinfo -v | grep -F '::ffff:10.79.0.1'" >"$tmp/live" 2>&1 &
live=$!
sleep 0.5
ip -n "$NS_A" addr add 10.79.0.1/24 dev "$IF_A"
wait "$live"
check_eq "an address added while it runs: gids/2, its type, and ibv_query_gid (ibv_devinfo) at once" \
	"$(tr -s '\t ' ' ' <"$tmp/live" | tr '\n' '|')" \
	"0000:0000:0000:0000:0000:ffff:0a4f:0001|RoCE v2| GID[ 2]: ::ffff:10.79.0.1, RoCE v2|"
ip -n "$NS_A" addr del 10.79.0.1/24 dev "$IF_A"
for _ in $(seq 20); do
	[ "$(cat "/run/xhca/$IF_A.ib/ports/1/gids/2")" = "$was" ] && break
	sleep 0.1
done
check_eq "... and gone with it (gids/2 as before)" "$(xa cat "$V/ports/1/gids/2")" "$was"

# the host sees nothing of it
mounts=$(in_a cat /proc/self/mountinfo | wc -l)
xa true
check_eq "the host's mounts: none added by xhca exec" "$(in_a cat /proc/self/mountinfo | wc -l)" "$mounts"
check "the host has no /dev/infiniband, no /sys/class/infiniband" \
	bash -c "! test -e /dev/infiniband && ! test -e /sys/class/infiniband"
check "xhca exec --no-view: no view" in_a "$B/xhca" -i "$IF_A" exec --no-view -- sh -c "! test -e /dev/infiniband"
check_eq "the program's environment: Open MPI takes UCX on xhca" \
	"$(xa sh -c 'echo $OMPI_MCA_pml_ucx_devices $OMPI_MCA_btl')" "any ^openib"
check_eq "... unless set already" \
	"$(in_a env OMPI_MCA_pml_ucx_devices=mlx5_0 "$B/xhca" -i "$IF_A" exec -- sh -c 'echo $OMPI_MCA_pml_ucx_devices')" "mlx5_0"

# ---- a member of the group, not root ----------------------------------------------
bin=$tmp/bin
mkdir -p "$bin/verbs"
cp "$B/xhca" "$B/xhca-verbstest" "$bin/"
cp "$B/verbs/libibverbs.so.1" "$bin/verbs/"
chmod 755 "$tmp" "$bin" "$bin/verbs"
member() { in_a setpriv --reuid 65534 --regid 65534 --clear-groups env XHCA_VERBS_DIR="$bin/verbs" "$@"; }
out=$(member "$bin/xhca" -i "$IF_A" exec -- sh -c "id -u; cat $V/ports/1/gid_attrs/types/1; stat -c %F /dev/infiniband/uverbs0" 2>&1)
check_eq "a member of $GROUP (uid 65534): the view in a user namespace, as itself" \
	"$(echo $out)" "65534 RoCE v2 character special file"
member "$bin/xhca" -i "$IF_A" exec -- "$bin/xhca-verbstest" view >"$tmp/view" 2>&1
prog_checks "xhca-verbstest view as that member" "$tmp/view" $?

# without user namespaces: the member runs in a user namespace of the
# test's (its users mapped as they are) that lets it make none. (The shell
# that reads the FIFO began without a user: exec'ed again once mapped, as
# root of that namespace, it may set the limit.)
mkfifo "$tmp/go"
# (nsenter itself in the background, not in_a's subshell: $! is its pid)
nsenter --net=/run/netns/"$NS_A" unshare --user sh -c "read _ <$tmp/go; exec sh -c 'echo 0 >/proc/sys/user/max_user_namespaces &&
	exec setpriv --reuid 65534 --regid 65534 --clear-groups env XHCA_VERBS_DIR=$bin/verbs \
	$bin/xhca -i $IF_A exec -- ibv_devinfo -d $DEV'" >"$tmp/nouserns" 2>&1 &
pid=$!
for _ in $(seq 50); do
	ns=$(readlink /proc/$pid/ns/user 2>/dev/null)
	[ -n "$ns" ] && [ "$ns" != "$(readlink /proc/self/ns/user)" ] && break
	sleep 0.05
done
echo "0 0 65536" >/proc/$pid/uid_map && echo "0 0 65536" >/proc/$pid/gid_map
echo go >"$tmp/go" & # (never holds the test up if the reader is gone)
wait "$pid"
rc=$?
check "without user namespaces: the program runs (exit $rc), said on stderr: $(grep -m1 'no device view' "$tmp/nouserns")" \
	bash -c '[ "$1" = 0 ] && grep -q "no device view.*cannot make a user namespace" "$2" && grep -q PORT_ACTIVE "$2"' _ "$rc" "$tmp/nouserns"
t_done
