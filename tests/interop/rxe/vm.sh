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
VM_QEMU=${VM_QEMU:-qemu-system-x86_64}
VM_BOOT_KVM=${VM_BOOT_KVM:-45}   # seconds a KVM guest has to come up
VM_KVM_SILENT=${VM_KVM_SILENT:-10} # ... or to write its first console line
VM_BOOT_TCG=${VM_BOOT_TCG:-240}
# A KVM that hung a guest once is not tried again until the host reboots.
VM_KVM_VERDICT=/run/xhca-rxe-kvm-hangs
VM_PID=

vm_try() {
	local accel=$1 limit=$2 ns=$3 tap=$4 mac=$5 ip=$6 mtu=$7 img cpu i
	img=$(bash "$VM_HERE/image.sh" path)
	rm -rf "$VM_DIR/q" "$VM_DIR/o" "$VM_DIR/ready" "$VM_DIR/gid" "$VM_DIR/poweroff"
	mkdir -p "$VM_DIR/q" "$VM_DIR/o"
	cpu=max; [ "$accel" = kvm ] && cpu=host
	# checksums computed by the guest (no offload): frames leave it whole
	(exec nsenter --net=/run/netns/"$ns" "$VM_QEMU" -machine q35,accel="$accel" \
		-cpu "$cpu" -smp 2 -m 768 -nodefaults -no-user-config -display none -no-reboot \
		-kernel "$img/vmlinuz" -initrd "$img/initrd.img" \
		-append "console=ttyS0 panic=-1 loglevel=4 xhca.ip=$ip xhca.mtu=$mtu" \
		-serial file:"$VM_DIR/console.log" \
		-netdev tap,id=n0,ifname="$tap",script=no,downscript=no \
		-device virtio-net-pci,netdev=n0,mac="$mac",host_mtu="$mtu",csum=off,guest_csum=off,gso=off,guest_tso4=off,guest_tso6=off,guest_ecn=off,guest_ufo=off,host_tso4=off,host_tso6=off,host_ecn=off,host_ufo=off,mrg_rxbuf=off \
		-fsdev local,id=fs0,path="$VM_DIR",security_model=none \
		-device virtio-9p-pci,fsdev=fs0,mount_tag=xhca \
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
