# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The RXE guest from the host's side (sourced). The guest's NIC is a tap in
# a namespace; its commands go through a shared folder (see init).
#   vm_boot NS TAP MAC IP/N MTU DIR   boots it (KVM, or TCG when KVM is missing
#                                     or the guest does not come up in time);
#                                     VM_PID, VM_ACCEL, VM_GID (RXE's RoCEv2 GID
#                                     index of IP), VM_DIR (the share), console
#                                     in DIR/console.log
#   vm_start NAME CMD                 CMD in the guest, in the background
#   vm_wait NAME [SECONDS]            its exit status (124 on timeout); its
#                                     output in $VM_DIR/o/NAME.out
#   vm_run NAME CMD [SECONDS]         vm_start + vm_wait
#   vm_stop                           powers it off (kills it if it must)
#   listening_a PORT                  a server on xhca's side is ready
#   vm_topo MTU                       the network (lib.sh's names): NS_A's
#                                     IF_A (xhcad) and a tap MB for the guest,
#                                     both on a bridge in NS_M; the guest is
#                                     IP_B/MAC_B
# VM_IMAGE=xhca boots image.sh's xhca guest (of kernel VM_SERIES, default
# 6.1) instead of the RXE guest: this host's root folder shared read-only,
# 1.5 GiB, the NIC with mergeable receive buffers (virtio_net's XDP needs
# them).
VM_QEMU=${VM_QEMU:-qemu-system-x86_64}
VM_BOOT_KVM=${VM_BOOT_KVM:-45}   # seconds a KVM guest has to come up
VM_KVM_SILENT=${VM_KVM_SILENT:-10} # ... or to write its first console line
VM_BOOT_TCG=${VM_BOOT_TCG:-240}
# A KVM that hung a guest once is not tried again until the host reboots.
VM_KVM_VERDICT=/run/xhca-rxe-kvm-hangs
VM_PID=

vm_try() {
	local accel=$1 limit=$2 ns=$3 tap=$4 mac=$5 ip=$6 mtu=$7 img cpu i
	local mem=768 nic=mrg_rxbuf=off root=()
	img=$(bash "$VM_HERE/image.sh" path "${VM_IMAGE:-rxe}" ${VM_SERIES:-})
	if [ "${VM_IMAGE:-rxe}" = xhca ]; then
		mem=1536 nic=mrg_rxbuf=on
		root=(-fsdev local,id=fs1,path=/,security_model=none,readonly=on,multidevs=remap
		      -device virtio-9p-pci,fsdev=fs1,mount_tag=root)
	fi
	rm -rf "$VM_DIR/q" "$VM_DIR/o" "$VM_DIR/ready" "$VM_DIR/gid" "$VM_DIR/poweroff" \
		"$VM_DIR/kernel"
	mkdir -p "$VM_DIR/q" "$VM_DIR/o"
	cpu=max; [ "$accel" = kvm ] && cpu=host
	# checksums computed by the guest (no offload): frames leave it whole
	(exec nsenter --net=/run/netns/"$ns" "$VM_QEMU" -machine q35,accel="$accel" \
		-cpu "$cpu" -smp 2 -m "$mem" -nodefaults -no-user-config -display none -no-reboot \
		-kernel "$img/vmlinuz" -initrd "$img/initrd.img" \
		-append "console=ttyS0 panic=-1 loglevel=4 xhca.ip=$ip xhca.mtu=$mtu" \
		-serial file:"$VM_DIR/console.log" \
		-netdev tap,id=n0,ifname="$tap",script=no,downscript=no \
		-device virtio-net-pci,netdev=n0,mac="$mac",host_mtu="$mtu",csum=off,guest_csum=off,gso=off,guest_tso4=off,guest_tso6=off,guest_ecn=off,guest_ufo=off,host_tso4=off,host_tso6=off,host_ecn=off,host_ufo=off,"$nic" \
		-fsdev local,id=fs0,path="$VM_DIR",security_model=none \
		-device virtio-9p-pci,fsdev=fs0,mount_tag=xhca "${root[@]}" \
		>"$VM_DIR/qemu.log" 2>&1) &
	VM_PID=$!
	VM_ACCEL=$accel
	for ((i = 0; i < limit * 10; i++)); do
		[ -f "$VM_DIR/ready" ] && break
		kill -0 "$VM_PID" 2>/dev/null || break
		# a kernel under KVM writes its first line in well under a second
		[ "$accel" = kvm ] && [ $i -ge $((VM_KVM_SILENT * 10)) ] &&
			[ ! -s "$VM_DIR/console.log" ] && break
		sleep 0.1
	done
	if [ -f "$VM_DIR/ready" ]; then
		VM_GID=$(cat "$VM_DIR/gid" 2>/dev/null)
		return 0
	fi
	kill -9 "$VM_PID" 2>/dev/null
	wait "$VM_PID" 2>/dev/null
	VM_PID=
	return 1
}

vm_boot() {
	local ns=$1 tap=$2 mac=$3 ip=$4 mtu=$5
	VM_DIR=$6
	VM_HERE=${VM_HERE:-$(dirname "${BASH_SOURCE[0]}")}
	local boot
	boot=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)
	if [ -r /dev/kvm ] && [ -w /dev/kvm ] && [ "${VM_ACCEL_FORCE:-}" != tcg ] &&
	   [ "$(cat "$VM_KVM_VERDICT" 2>/dev/null)" != "$boot" ]; then
		vm_try kvm "$VM_BOOT_KVM" "$ns" "$tap" "$mac" "$ip" "$mtu" && return 0
		echo "# vm: the guest did not come up under KVM (qemu: $(tail -1 "$VM_DIR/qemu.log" 2>/dev/null | cut -c1-100)); TCG, and not KVM again until this host reboots" >&2
		echo "$boot" >"$VM_KVM_VERDICT"
		[ -f "$VM_DIR/console.log" ] && mv "$VM_DIR/console.log" "$VM_DIR/console-kvm.log"
	elif [ -r /dev/kvm ] && [ "${VM_ACCEL_FORCE:-}" != tcg ]; then
		echo "# vm: KVM failed a guest (abort or hang) since this host booted; TCG" >&2
	fi
	vm_try tcg "$VM_BOOT_TCG" "$ns" "$tap" "$mac" "$ip" "$mtu"
}

vm_start() {
	local name=$1
	shift
	rm -f "$VM_DIR/o/$name.rc" "$VM_DIR/o/$name.out"
	printf '%s\n' "$*" >"$VM_DIR/q/.$name.tmp"
	mv "$VM_DIR/q/.$name.tmp" "$VM_DIR/q/$name.sh"
}

vm_wait() {
	local name=$1 limit=${2:-60} i
	for ((i = 0; i < limit * 20; i++)); do
		if [ -f "$VM_DIR/o/$name.rc" ]; then
			cat "$VM_DIR/o/$name.rc"
			return 0
		fi
		kill -0 "$VM_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo 124
}

vm_run() {
	vm_start "$1" "$2"
	vm_wait "$1" "${3:-60}"
}

vm_out() { cat "$VM_DIR/o/$1.out" 2>/dev/null; }

vm_stop() {
	local i
	[ -n "$VM_PID" ] || return 0
	echo >"$VM_DIR/poweroff"
	for ((i = 0; i < 50; i++)); do
		kill -0 "$VM_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$VM_PID" 2>/dev/null
	wait "$VM_PID" 2>/dev/null
	VM_PID=
}

# listening_a PORT: the server on xhca's side (NS_A) is ready: a TCP
# listener (the pingpongs' and perftest's exchange of QP numbers) or, with
# CM=PS (its port space, 0106 TCP's, 0111 UDP's), an rdma_cm listener: its
# id's socket in xhcad's name space (as rdmacm.sh's bound).
listening_a() {
	if [ -n "${CM:-}" ]; then
		ip netns exec "$NS_A" grep -q "@xhca-rdmacm:$CM:$1:" /proc/net/unix
	else
		ip netns exec "$NS_A" ss -Hltn "sport = :$1" 2>/dev/null | grep -q LISTEN
	fi
}

vm_topo() {
	local id=$(( $$ % 100000 )) mtu=$1 l
	NS_M=xhca-m-$id MA=ma$id MB=mb$id
	topo_names && ip netns add "$NS_M" || return 1
	ip link add "$IF_A" numrxqueues 2 numtxqueues 2 netns "$NS_A" type veth \
		peer name "$MA" netns "$NS_M" || return 1
	ip -n "$NS_M" tuntap add "$MB" mode tap || return 1
	ip -n "$NS_M" link add br0 type bridge || return 1
	ip -n "$NS_M" link set "$MA" master br0
	ip -n "$NS_M" link set "$MB" master br0
	ip -n "$NS_M" link set lo up
	for l in "$MA" "$MB" br0; do ip -n "$NS_M" link set "$l" mtu "$mtu" up; done
	ip netns exec "$NS_M" ethtool -K "$MA" tx off rxvlan off txvlan off >/dev/null 2>&1
	ip -n "$NS_A" link set "$IF_A" address $MAC_A
	ip -n "$NS_A" addr add $IP_A/24 dev "$IF_A"
	ip -n "$NS_A" link set lo up
	ip -n "$NS_A" link set "$IF_A" mtu "$mtu" up
	in_a ethtool -K "$IF_A" tx off rxvlan off txvlan off gro on >/dev/null 2>&1
	ip -n "$NS_A" neigh replace $IP_B lladdr $MAC_B dev "$IF_A"
}
