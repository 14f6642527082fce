#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A fresh Debian 12 root file system for tests/fresh/fresh.sh, made once and
# kept in the cache (XHCA_CACHE, default /var/cache/xhca, /fresh/bookworm):
#   root.sh make   debootstrap --variant=minbase bookworm with what a boot
#                  with systemd needs (systemd, systemd-sysv, dbus) and nothing
#                  of xhca's: made again only when this recipe changed (a
#                  stamp); prints the root's path
#   root.sh path   prints it (the root may not be there)
# The root is only ever a read-only lower layer: each run boots an overlay
# of it in memory. Its apt lists and downloaded packages are removed, so a
# run starts, as a new machine does, with apt-get update.
set -euo pipefail
MIRROR=${XHCA_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${XHCA_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}
INCLUDE=systemd,systemd-sysv,dbus
cache=${XHCA_CACHE:-/var/cache/xhca}/fresh
root=$cache/bookworm
RECIPE="minbase bookworm $INCLUDE $MIRROR $SECURITY v1"

# sources.list as Debian's installer writes it: main, updates, security
sources() {
	cat <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb $SECURITY bookworm-security main
EOF
}

# bootstrap: debootstrap into DIR.new, then DIR.new becomes DIR
bootstrap() {
	local new=$root.new log=$cache/debootstrap.log
	rm -rf "$new"
	echo "root: debootstrap --variant=minbase --include=$INCLUDE bookworm ($MIRROR)" >&2
	if ! debootstrap --variant=minbase --include="$INCLUDE" bookworm "$new" "$MIRROR" \
		>"$log" 2>&1; then
		echo "root: debootstrap failed ($(grep -m1 -E '^E:' "$log" || tail -n 1 "$log"));" \
			"the whole log: $log" >&2
		rm -rf "$new"
		return 1
	fi
	sources >"$new/etc/apt/sources.list"
	chroot "$new" apt-get clean
	find "$new/var/lib/apt/lists" -maxdepth 1 -type f -delete
	# the files of this machine debootstrap copies: each boot gets its own
	: >"$new/etc/machine-id"
	echo debian >"$new/etc/hostname"
	rm -f "$new/etc/resolv.conf"
	echo "$RECIPE" >"$new/.xhca-fresh"
	rm -rf "$root"
	mv "$new" "$root"
}

make_root() {
	mkdir -p "$cache"
	# (one bootstrap at a time: another test may be making it)
	exec 9>"$cache/lock"
	flock 9
	if [ "$(cat "$root/.xhca-fresh" 2>/dev/null)" != "$RECIPE" ]; then
		command -v debootstrap >/dev/null ||
			{ echo "root: no debootstrap (make deps)" >&2; return 1; }
		bootstrap || return 1
	fi
	echo "$root"
}

case ${1:-} in
make) make_root ;;
path) echo "$root" ;;
*) echo "usage: root.sh make|path" >&2; exit 2 ;;
esac
