#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The RXE guest's image, from Debian packages only:
#   image.sh fetch   the newest bookworm linux-image-6.1.*-amd64 .deb, downloaded
#                    by apt-get into the cache (never installed on this host),
#                    and the newest linux-image-6.12.*-amd64 (bookworm's
#                    other kernel) for the xhca guest
#   image.sh build   CACHE/guest/{vmlinuz,initrd.img}: that kernel and an
#                    initramfs (cpio) of its modules (rdma_rxe, virtio, 9p, ...),
#                    busybox-static, and the installed files of ibverbs-utils,
#                    ibverbs-providers (rxe), perftest, rdmacm-utils (rping,
#                    ucmatose, udaddy; the kernel's rdma_cm and rdma_ucm
#                    loaded) and iproute2's rdma with
#                    the libraries they load. Rebuilt only when an input changed
#                    (a stamp of the packages' versions and of the init script).
#   image.sh path    prints the image's folder (after build)
#   image.sh build xhca [SERIES], image.sh path xhca [SERIES]
#                    the xhca guest (make test-kernels) of kernel SERIES (6.1,
#                    the default, or 6.12): an initramfs of only its virtio
#                    and 9p modules, busybox and ../../kernels/init, which
#                    runs this host's root folder (shared read-only) as the
#                    guest's: xhcad, xhca and the programs are this host's
#                    own (CACHE/xguest-SERIES)
# The cache is XHCA_CACHE (default /var/cache/xhca)/rxe.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${XHCA_CACHE:-/var/cache/xhca}/rxe
mkdir -p "$cache"
variant=${2:-rxe} series=${3:-6.1}
# modules the guest loads (with what they depend on, from modules.dep)
MODS="virtio_pci virtio_net 9pnet_virtio 9p crc32_generic rdma_rxe ib_uverbs rdma_cm rdma_ucm"
# programs the guest runs; libraries follow from ldd
INIT=$here/init GUEST=guest
PROGS="/usr/bin/ibv_rc_pingpong /usr/bin/ibv_ud_pingpong /usr/bin/ibv_srq_pingpong
	/usr/bin/ibv_uc_pingpong /usr/bin/ibv_devinfo /usr/bin/ibv_devices
	/usr/bin/ib_send_bw /usr/bin/ib_write_bw /usr/bin/ib_read_bw /usr/bin/ib_atomic_bw
	/usr/bin/ib_write_lat /usr/bin/ib_send_lat /usr/bin/ib_read_lat /usr/bin/ib_atomic_lat
	/usr/bin/rping /usr/bin/ucmatose /usr/bin/udaddy
	/usr/bin/rdma /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so"
PKGS="ibverbs-utils ibverbs-providers libibverbs1 perftest iproute2 busybox-static libc6
	rdmacm-utils librdmacm1"
if [ "$variant" = xhca ]; then
	# (veth, clsact and cls_bpf: --steer on a veth pair of the guest's own)
	MODS="virtio_pci virtio_net 9pnet_virtio 9p veth sch_ingress cls_bpf"
	PROGS= PKGS=busybox-static INIT=$here/../../kernels/init GUEST=xguest-$series
fi

# the kernel package of a series: what its meta-package depends on
# (linux-image-amd64 is bookworm's 6.1; linux-image-6.12-amd64 its 6.12)
kernel_pkg() {
	local meta=linux-image-$1-amd64

	[ "$1" = 6.1 ] && meta=linux-image-amd64
	apt-cache depends "$meta" 2>/dev/null |
		awk -v p="linux-image-$1." '$1 == "Depends:" && index($2, p) == 1 &&
			$2 ~ /-amd64$/ && $2 !~ /-(cloud|rt)-amd64$/ {print $2; exit}'
}

debs() { ls "$cache"/linux-image-"$1".*-amd64_*.deb 2>/dev/null | grep -v -- '-\(cloud\|rt\)-amd64_'; }

fetch_one() {
	local k
	debs "$1" >/dev/null && return 0
	k=$(kernel_pkg "$1")
	if [ -z "$k" ]; then
		apt-get update -qq >/dev/null 2>&1 || true
		k=$(kernel_pkg "$1")
	fi
	[ -n "$k" ] || { echo "image: no linux-image-$1 package known to apt" >&2; return 1; }
	echo "image: downloading $k into $cache"
	(cd "$cache" && apt-get download -q "$k" >/dev/null 2>&1) ||
		{ echo "image: apt-get download $k failed" >&2; return 1; }
	debs "$1" >/dev/null
}

fetch() {
	local s rc=0 list=("$@")
	[ ${#list[@]} -gt 0 ] || list=(6.1 6.12)
	for s in "${list[@]}"; do
		fetch_one "$s" || rc=1
	done
	return $rc
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
	# (a module may be compressed, .ko.xz, or built in: modules.builtin)
	for m in $MODS; do
		local p x
		for x in .ko .ko.xz; do
			p=$(awk -F: -v m="/$m$x" 'index($1, m) && substr($1, length($1) - length(m) + 1) == m {print $1; exit}' "$dep")
			[ -n "$p" ] && break
		done
		if [ -z "$p" ]; then
			grep -q "/$m.ko$" "$(dirname "$dep")/modules.builtin" 2>/dev/null && continue
			echo "image: module $m not in the kernel package" >&2
			return 1
		fi
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
		sha256sum "$INIT" "$0"
	} | sha256sum | cut -d' ' -f1
}

build() {
	local deb out kroot kver root f mods
	fetch "$series"
	deb=$(debs "$series" | sort -V | tail -1)
	out=$cache/$GUEST
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
	echo "image: building the $variant guest from $(basename "$deb")"
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
		case $f in
		*.xz) xz -dc "$kroot/lib/modules/$kver/$f" >"$root/modules/$(basename "$f" .xz)" ;;
		*) cp "$kroot/lib/modules/$kver/$f" "$root/modules/" ;;
		esac
		basename "$f" .xz >>"$root/modules/order"
	done
	for f in $PROGS; do
		put "$root" "$f"
		ldd "$f" | awk '/=> \// {print $3} /^\t\/lib/ {print $1}'
	done | sort -u | while read -r f; do put "$root" "$f"; done
	if [ "$variant" = rxe ]; then
		put "$root" /etc/libibverbs.d/rxe.driver
		# glibc loads it for pthread_exit (rping's threads end so)
		put "$root" "$(gcc -print-file-name=libgcc_s.so.1 2>/dev/null | xargs readlink -f)"
	fi
	cp "$INIT" "$root/init"
	chmod 755 "$root/init"
	(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) | gzip -1 >"$out.new/initrd.img"
	cp "$kroot"/boot/vmlinuz-* "$out.new/vmlinuz"
	rm -rf "$kroot" "$root"
	stamp "$deb" >"$out.new/stamp"
	rm -rf "$out" && mv "$out.new" "$out"
	echo "image: $out ($(du -sh "$out/initrd.img" | cut -f1) initramfs)"
}

case ${1:-build} in
fetch) shift; fetch ${@:+"$@"} ;;
build) build ;;
path) echo "$cache/$GUEST" ;;
*) echo "usage: image.sh fetch [SERIES...] | build|path [rxe|xhca [SERIES]]" >&2; exit 2 ;;
esac
