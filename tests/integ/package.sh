#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make deb: the Debian packages xhca, libxhca1 and libxhca-dev, what each
# holds and depends on, lintian without an error, the unit verified by
# systemd-analyze; then the packages unpacked into a scratch root (dpkg -x)
# and Debian's ibv_rc_pingpong run between two xhca hosts from its files
# alone. service.sh installs them on a booted system.
set -u
. "$(dirname "$0")/../lib.sh"
need_root package
if [ "${SANITIZE:-0}" = 1 ]; then
	skip "package: the packages are built from the plain tree (make test runs this)"
	t_done
fi
need_cmds package dpkg-buildpackage dh lintian systemd-analyze
TRIPLET=$(gcc -print-multiarch) # (lib.sh has MA)
VER=$(make -C "$XHCA_TOP" -s print-VERSION)
DEBS=$XHCA_TOP/build/debs
tmp=$(mktemp -d)
trap 'topo_cleanup; rm -rf "$tmp"' EXIT
if ! make -C "$XHCA_TOP" --no-print-directory -s deb >"$tmp/log" 2>&1; then
	fail "package: make deb: $(tail -n 3 "$tmp/log" | tr '\n' ' ')"
	t_done
fi
deb() { echo "$DEBS/${1}_${VER}_amd64.deb"; }
check_eq "package: make deb made xhca, libxhca1 and libxhca-dev (and their -dbgsym)" \
	"$(cd "$DEBS" && ls *.deb | tr '\n' ' ')" \
	"$(for p in libxhca-dev libxhca1-dbgsym libxhca1 xhca-dbgsym xhca; do
		printf '%s ' "$(basename "$(deb $p)")"; done)"
check "package: and nothing beside the tree" test -z "$(ls "$XHCA_TOP"/.. | grep -E '\.(deb|changes|buildinfo)$')"

# has PACKAGE FILE...: the package holds each file
has() {
	local p=$1 f missing=
	shift
	dpkg-deb -c "$(deb "$p")" | awk '{print $6}' | sed 's|^\.||' >"$tmp/list"
	for f in "$@"; do grep -qx "$f" "$tmp/list" || missing+=" $f"; done
	check_eq "package: $p holds $*" "${missing:-none} missing" "none missing"
}
has xhca /usr/sbin/xhcad /usr/bin/xhca /usr/bin/xhca-gen /usr/lib/$TRIPLET/xhca/xhca.bpf.o \
	/usr/lib/$TRIPLET/xhca/verbs/libibverbs.so.1 /usr/lib/$TRIPLET/xhca/verbs/librdmacm.so.1 \
	/lib/systemd/system/xhcad@.service \
	/usr/lib/tmpfiles.d/xhca.conf /usr/share/man/man8/xhcad.8.gz /usr/share/man/man8/xhca.8.gz \
	/etc/xhca/ /usr/share/doc/xhca/examples/eth0.conf
check_eq "package: the verbs and rdma_cm libraries alone in their directory" \
	"$(grep "^/usr/lib/$TRIPLET/xhca/verbs/." "$tmp/list" | sort | tr '\n' ' ')" \
	"/usr/lib/$TRIPLET/xhca/verbs/libibverbs.so.1 /usr/lib/$TRIPLET/xhca/verbs/librdmacm.so.1 "
has libxhca1 /usr/lib/$TRIPLET/libxhca.so.1
has libxhca-dev /usr/include/xhca/xhca.h /usr/lib/$TRIPLET/libxhca.so /usr/lib/$TRIPLET/libxhca.a \
	/usr/lib/$TRIPLET/pkgconfig/libxhca.pc /usr/share/man/man3/libxhca.3.gz \
	/usr/share/man/man3/xhca_open.3.gz /usr/share/man/man3/xhca_close.3.gz

# depends PACKAGE: its Depends, one name a line, without versions
depends() { dpkg-deb -f "$(deb "$1")" Depends | tr ',' '\n' | sed 's/^ *//; s/ .*//' | sort; }
check_eq "package: xhca depends on libbpf1, libxdp1, libnl-route-3 (the neighbour lookup), libc6 (its programs'), adduser, iproute2" \
	"$(depends xhca | tr '\n' ' ')" "adduser iproute2 libbpf1 libc6 libnl-3-200 libnl-route-3-200 libxdp1 "
check_eq "package: ... and on libelf1 and zlib1g through libbpf1 (xhcad calls neither itself)" \
	"$(dpkg-query -W -f '${Depends}' libbpf1 | tr ',' '\n' | sed 's/^ *//; s/ .*//' |
		grep -xE 'libelf1|zlib1g' | sort | tr '\n' ' ')" "libelf1 zlib1g "
check_eq "package: libxhca1 depends on libc6 alone" "$(depends libxhca1)" libc6
check_eq "package: libxhca-dev on its libxhca1" "$(dpkg-deb -f "$(deb libxhca-dev)" Depends)" \
	"libxhca1 (= $VER)"
check_eq "package: libxhca1's shlibs" "$(dpkg-deb -I "$(deb libxhca1)" shlibs)" \
	"libxhca 1 libxhca1 (>= $VER)"

# (lintian's tags on stdout; on stderr, as root, a warning without a newline)
out=$(lintian --pedantic --info "$DEBS/xhca.changes" 2>"$tmp/lintian.err")
rc=$?
check_eq "package: lintian --pedantic: it ran (exit $rc), no error ($(grep -c '^W:' <<<"$out") \
warnings, $(grep -c '^[IP]:' <<<"$out") notes)" "$(grep '^E:' <<<"$out")" ""
[ "$rc" -le 1 ] || fail "package: lintian: $(cat "$tmp/lintian.err")"
grep -E '^[WIP]:' <<<"$out" | sed 's/^/  # /'

# ---- a scratch root of the three packages' files --------------------------------
root=$tmp/root
for p in xhca libxhca1 libxhca-dev; do dpkg -x "$(deb "$p")" "$root"; done
# the unit as systemd-analyze verify sees it, with ExecStart in the scratch root
sed "s|/usr/sbin/xhcad|$root/usr/sbin/xhcad|" "$root/lib/systemd/system/xhcad@.service" \
	>"$tmp/xhcad@v0.service"
out=$(systemd-analyze verify --man=no "$tmp/xhcad@v0.service" 2>&1)
check_eq "package: systemd-analyze verify xhcad@v0.service" "$out" ""
out=$(systemd-analyze security --offline=true --threshold=40 "$tmp/xhcad@v0.service" 2>&1)
rc=$?
check "package: systemd-analyze security: the sandbox's exposure at most 4.0 ($(tail -n 1 \
	<<<"$out" | sed 's/.*: //'))" test $rc = 0
out=$(PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root/usr/lib/$TRIPLET/pkgconfig \
	bash -c 'cc -std=gnu11 -Wall -Werror $(pkg-config --cflags libxhca) -x c - \
		$(pkg-config --libs libxhca) -o "$1"' _ "$tmp/app" 2>&1 <<'EOF'
#include <stdio.h>
#include <xhca/xhca.h>

int main(void)
{
	struct xhca_ctx *ctx = xhca_open("xhca-no-such-if");

	printf("%s\n", ctx ? "open" : "no xhcad");
	return 0;
}
EOF
)
check "package: an application builds against libxhca-dev's files ($out)" test -x "$tmp/app"
check_eq "package: and runs on libxhca1's" \
	"$(LD_LIBRARY_PATH=$root/usr/lib/$TRIPLET "$tmp/app")" "no xhcad"

# ---- ibv_rc_pingpong between two xhca hosts, from the scratch root's files --------
command -v ibv_rc_pingpong >/dev/null ||
	{ skip "package: the ping-pong: no ibv_rc_pingpong (make deps)"; t_done; }
B=$tmp/bin # (lib.sh's xhcad_start and xhca: the unpacked programs)
mkdir "$B" && ln -s "$root/usr/sbin/xhcad" "$root/usr/bin/xhca" "$B/"
MID_MTU=3000 two_hosts package 64
xa() { in_a env -u XHCA_VERBS_DIR "$root/usr/bin/xhca" -i "$IF_A" exec -- "$@"; }
xb() { in_b env -u XHCA_VERBS_DIR "$root/usr/bin/xhca" -i "$IF_B" exec -- "$@"; }
check_eq "package: xhca exec takes the verbs library of the package" \
	"$(xa sh -c 'echo $LD_LIBRARY_PATH')" "$root/usr/lib/$TRIPLET/xhca/verbs"
xa timeout 30 ibv_rc_pingpong -g 1 -c -n 100 -s 4096 >"$tmp/srv" 2>&1 &
srv=$!
for _ in $(seq 100); do
	ip netns exec "$NS_A" ss -Hltn 'sport = :18515' | grep -q LISTEN && break
	sleep 0.05
done
xb timeout 30 ibv_rc_pingpong -g 1 -c -n 100 -s 4096 "$IP_A" >"$tmp/cli" 2>&1
rc=$?
wait "$srv"
rs=$?
check "package: ibv_rc_pingpong between two hosts of the unpacked files: exit $rs and $rc, \
both done ($(grep -h ' iters in ' "$tmp/cli"))" test "$(cat "$tmp/srv" "$tmp/cli" | grep -c ' iters in ')" = 2
t_done
