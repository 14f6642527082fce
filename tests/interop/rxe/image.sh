#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The RXE guest's image, from Debian packages only:
#   image.sh fetch   the newest bookworm linux-image-6.1.*-amd64 .deb, downloaded
#                    by apt-get into the cache (never installed on this host)
#   image.sh build   CACHE/guest/{vmlinuz,initrd.img}: that kernel and an
#                    initramfs (cpio) of its modules (rdma_rxe, virtio, 9p, ...),
#                    busybox-static, and the installed files of ibverbs-utils,
#                    ibverbs-providers (rxe), perftest, rdmacm-utils (rping,
#                    ucmatose, udaddy; the kernel's rdma_cm and rdma_ucm
#                    loaded) and iproute2's rdma with
#                    the libraries they load. Rebuilt only when an input changed
#                    (a stamp of the packages' versions and of the init script).
#   image.sh path    prints the image's folder (after build)
# The cache is XHCA_CACHE (default /var/cache/xhca)/rxe.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${XHCA_CACHE:-/var/cache/xhca}/rxe
mkdir -p "$cache"
# modules the guest loads (with what they depend on, from modules.dep)
MODS="virtio_pci virtio_net 9pnet_virtio 9p crc32_generic rdma_rxe ib_uverbs rdma_cm rdma_ucm"
# programs the guest runs; libraries follow from ldd
PROGS="/usr/bin/ibv_rc_pingpong /usr/bin/ibv_ud_pingpong /usr/bin/ibv_srq_pingpong
	/usr/bin/ibv_uc_pingpong /usr/bin/ibv_devinfo /usr/bin/ibv_devices
	/usr/bin/ib_send_bw /usr/bin/ib_write_bw /usr/bin/ib_read_bw /usr/bin/ib_atomic_bw
	/usr/bin/ib_write_lat /usr/bin/ib_send_lat /usr/bin/ib_read_lat /usr/bin/ib_atomic_lat
	/usr/bin/rping /usr/bin/ucmatose /usr/bin/udaddy
	/usr/bin/rdma /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so"
PKGS="ibverbs-utils ibverbs-providers libibverbs1 perftest iproute2 busybox-static libc6
	rdmacm-utils librdmacm1"

kernel_pkg() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		awk '/Depends: linux-image-6\.1\.[0-9.-]*-amd64$|Depends: linux-image-6\.1\.0-[0-9]+-amd64$/ {print $2; exit}'
}

fetch() {
	local k deb
	ls "$cache"/linux-image-6.1.*-amd64_*.deb >/dev/null 2>&1 && return 0
	k=$(kernel_pkg)
	if [ -z "$k" ]; then
		apt-get update -qq >/dev/null 2>&1 || true
		k=$(kernel_pkg)
	fi
	[ -n "$k" ] || { echo "image: no linux-image-6.1 package known to apt" >&2; return 1; }
	echo "image: downloading $k into $cache"
	(cd "$cache" && apt-get download -q "$k" >/dev/null 2>&1) ||
		{ echo "image: apt-get download $k failed" >&2; return 1; }
	deb=$(ls "$cache"/linux-image-6.1.*-amd64_*.deb 2>/dev/null | head -1)
	[ -n "$deb" ]
}

# the modules MODS need, dependencies first (modules.dep lines: "a.ko: b.ko c.ko")
mod_order() {
	local dep=$1 m
	declare -A seen=()
	visit() {
		local path=$1 d
		[ -n "${seen[$path]:-}" ] && return
		seen[$path]=1
		for d in $(awk -v p="$path:" '$1 == p {for (i = 2; i <= NF; i++) print $i}' "$dep"); do
			visit "$d"
		done
		echo "$path"
	}
	for m in $MODS; do
		local p
		p=$(awk -F: -v m="/$m.ko" 'index($1, m) && substr($1, length($1) - length(m) + 1) == m {print $1; exit}' "$dep")
		[ -n "$p" ] || { echo "image: module $m not in the kernel package" >&2; return 1; }
		visit "$p"
	done
}

# copy FILE into the tree ROOT under the same path, contents of its target
put() {
	local root=$1 f=$2
	mkdir -p "$root$(dirname "$f")"
	cp -L "$f" "$root$f"
}

stamp() {
	local deb=$1
	{
		basename "$deb"
		dpkg-query -W -f '${Package} ${Version}\n' $PKGS 2>/dev/null
		sha256sum "$here/init" "$0"
	} | sha256sum | cut -d' ' -f1
}

build() {
	local deb out kroot kver root f mods
	fetch
	deb=$(ls "$cache"/linux-image-6.1.*-amd64_*.deb | sort -V | tail -1)
	out=$cache/guest
	if [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$(stamp "$deb")" ] &&
	   [ -f "$out/vmlinuz" ] && [ -f "$out/initrd.img" ]; then
		return 0
	fi
	for f in $PROGS /bin/busybox; do
		[ -e "$f" ] || { echo "image: $f missing (make deps installs it)" >&2; return 1; }
	done
	file -L /bin/busybox 2>/dev/null | grep -q 'statically linked' ||
		ldd /bin/busybox 2>&1 | grep -q 'not a dynamic' ||
		{ echo "image: /bin/busybox is not busybox-static's" >&2; return 1; }
	echo "image: building the RXE guest from $(basename "$deb")"
	rm -rf "$out.new" && mkdir -p "$out.new"
	kroot=$out.new/k
	dpkg-deb -x "$deb" "$kroot"
	kver=$(ls "$kroot/lib/modules" | head -1)
	depmod -b "$kroot" "$kver"
	root=$out.new/root
	mkdir -p "$root"/{usr/bin,usr/sbin,usr/lib/x86_64-linux-gnu,usr/lib64,proc,sys,dev,tmp,host,etc,run,mnt}
	ln -s usr/bin "$root/bin"; ln -s usr/sbin "$root/sbin"
	ln -s usr/lib "$root/lib"; ln -s usr/lib64 "$root/lib64"
	cp /bin/busybox "$root/usr/bin/busybox"
	mods=$(cd "$kroot/lib/modules/$kver" && mod_order modules.dep)
	mkdir -p "$root/modules"
	: >"$root/modules/order"
	for f in $mods; do
		cp "$kroot/lib/modules/$kver/$f" "$root/modules/"
		basename "$f" >>"$root/modules/order"
	done
	for f in $PROGS; do
		put "$root" "$f"
		ldd "$f" | awk '/=> \// {print $3} /^\t\/lib/ {print $1}'
	done | sort -u | while read -r f; do put "$root" "$f"; done
	put "$root" /etc/libibverbs.d/rxe.driver
	# glibc loads it for pthread_exit (rping's threads end so)
	put "$root" "$(gcc -print-file-name=libgcc_s.so.1 2>/dev/null | xargs readlink -f)"
	cp "$here/init" "$root/init"
	chmod 755 "$root/init"
	(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) | gzip -1 >"$out.new/initrd.img"
	cp "$kroot"/boot/vmlinuz-* "$out.new/vmlinuz"
	rm -rf "$kroot" "$root"
	stamp "$deb" >"$out.new/stamp"
	rm -rf "$out" && mv "$out.new" "$out"
	echo "image: $out ($(du -sh "$out/initrd.img" | cut -f1) initramfs)"
}

case ${1:-build} in
fetch) fetch ;;
build) build ;;
path) echo "$cache/guest" ;;
*) echo "usage: image.sh fetch|build|path" >&2; exit 2 ;;
esac
