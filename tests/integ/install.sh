#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make install puts the daemon, the tools, the BPF object, the headers, the
# libraries (libxhca.a, libxhca.so.1 with its pkg-config file, the verbs
# library in a directory of its own), the man pages (sections 8 and 3), the systemd unit and
# the tmpfiles.d entry under DESTDIR/PREFIX (xhcad carries its program in
# its skeleton).
set -u
. "$(dirname "$0")/../lib.sh"
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
if ! make -C "$XHCA_TOP" --no-print-directory -s install DESTDIR="$dest" PREFIX=/opt/xhca \
	>"$dest/log" 2>&1; then
	fail "install: make install failed: $(tail -n 3 "$dest/log" | tr '\n' ' ')"
	t_done
fi
for f in sbin/xhcad bin/xhca bin/xhca-gen bin/xhca-bench lib/xhca/xhca.bpf.o lib/libxhca.a \
	lib/libxhca.so.1 lib/pkgconfig/libxhca.pc lib/xhca/verbs/libibverbs.so.1 \
	lib/xhca/verbs/librdmacm.so.1 lib/systemd/system/xhcad@.service lib/tmpfiles.d/xhca.conf; do
	check "install: /opt/xhca/$f" test -s "$dest/opt/xhca/$f"
done
# the public headers only (the control protocol, wire format, packet
# builder, pcap and context writers are the project's own), and they are
# enough: an application of docs/libxhca.md builds against them alone
hdrs=$(cd "$dest/opt/xhca/include/xhca" && ls | tr '\n' ' ')
check_eq "install: the public headers, no private one" "$hdrs" \
	"abi.h attr.h proxy_handler.h ring.h xhca.h "
cat >"$dest/app.c" <<'EOF'
#include <stdio.h>
#include <xhca/xhca.h>

int main(int argc, char **argv)
{
	struct xhca_ctx *ctx = xhca_open(argc > 1 ? argv[1] : "lo");
	struct xhca_qp_attr a = { .mask = XHCA_QPA_STATE | XHCA_QPA_MAX_RD_ATOMIC,
				  .state = XHCA_QPS_INIT, .max_rd_atomic = XHCA_MAX_RD_ATOMIC };
	struct xhca_wc wc;

	if (!ctx) {
		printf("no xhcad: %d %u\n", a.state, (unsigned)sizeof(wc));
		return 0;
	}
	xhca_close(ctx);
	return 0;
}
EOF
# (a library of the sanitized build needs the sanitizers' runtime)
san=
nm "$dest/opt/xhca/lib/libxhca.a" 2>/dev/null | grep -q __asan_ && san=-fsanitize=address,undefined
out=$(cc -std=gnu11 -Wall -Werror $san -I"$dest/opt/xhca/include" "$dest/app.c" \
	"$dest/opt/xhca/lib/libxhca.a" -lbpf -lelf -lz -lpthread -o "$dest/app" 2>&1)
check "install: an application builds with the installed headers and library alone ($out)" \
	test -x "$dest/app"
check "install: and runs" bash -c "'$dest/app' xhca-no-such-if | grep -q '^no xhcad'"

# libxhca.so.1: its soname, the header's functions exported and nothing
# else, each of the version libxhca.map names; an application built with pkg-config
# alone takes it
so=$dest/opt/xhca/lib/libxhca.so.1
check_eq "install: libxhca.so.1's soname" \
	"$(readelf -d "$so" | awk '/SONAME/ {print $NF}')" "[libxhca.so.1]"
want=$(grep -E '^[a-z].*\bxhca_[a-z0-9_]+\(' "$XHCA_TOP/include/xhca/xhca.h" |
	grep -oE '\bxhca_[a-z0-9_]+\(' | tr -d '(' | sort -u)
got=$(nm -D --defined-only "$so" | awk '$2 == "T" {print $3}' | sort -u)
check_eq "install: libxhca.so.1 exports the functions of xhca.h, nothing else" \
	"$(comm -3 <(echo "$want") <(sed 's/@.*//' <<<"$got") | tr -d '\t' | tr '\n' ' ')" ""
# (the version each has: the node of libxhca.map that names it)
mapped=$(awk '/^XHCA_[0-9.]+ \{/ {v = $1} /^\t\txhca_/ {sub(";", "", $1); print $1 "@@" v}' \
	"$XHCA_TOP/user/lib/libxhca.map" | sort -u)
check_eq "install: each of the version libxhca.map gives it ($(wc -l <<<"$got") functions)" \
	"$(comm -3 <(echo "$mapped") <(echo "$got") | tr -d '\t' | tr '\n' ' ')" ""
check "install: the first ones of version XHCA_1.0" grep -q 'xhca_open@@XHCA_1\.0$' <<<"$got"
check_eq "install: the development link libxhca.so" "$(readlink "$dest/opt/xhca/lib/libxhca.so")" \
	libxhca.so.1
pc() { PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_LIBDIR=$dest/opt/xhca/lib/pkgconfig pkg-config "$@"; }
check_eq "install: pkg-config libxhca: its version, where the headers and the library are" \
	"$(echo $(pc --modversion libxhca) $(pc --cflags --libs libxhca))" \
	"$(make -C "$XHCA_TOP" -s print-VERSION) -I$dest/opt/xhca/include -L$dest/opt/xhca/lib -lxhca"
out=$(cc -std=gnu11 -Wall -Werror $(pc --cflags libxhca) "$dest/app.c" $(pc --libs libxhca) \
	-o "$dest/app.so" 2>&1)
check "install: an application builds with pkg-config against libxhca.so ($out)" \
	test -x "$dest/app.so"
check "install: it takes libxhca.so.1, the functions of version XHCA_1.0" \
	bash -c "readelf -d '$dest/app.so' | grep -q 'NEEDED.*libxhca.so.1' &&
		objdump -T '$dest/app.so' | grep -q 'XHCA_1.0.*xhca_open'"
check "install: and runs" bash -c \
	"LD_LIBRARY_PATH='$dest/opt/xhca/lib' '$dest/app.so' xhca-no-such-if | grep -q '^no xhcad'"
check_eq "install: the unit runs the installed xhcad" \
	"$(grep '^ExecStart=' "$dest/opt/xhca/lib/systemd/system/xhcad@.service")" \
	"ExecStart=/opt/xhca/sbin/xhcad --keep --group xhca %I"
check "install: binaries are executable" test -x "$dest/opt/xhca/sbin/xhcad" -a -x "$dest/opt/xhca/bin/xhca"
check "install: the installed CLI runs" bash -c "'$dest/opt/xhca/bin/xhca' --help >/dev/null"
check "install: the installed object holds xhca_rx" bash -c \
	"bpftool btf dump file '$dest/opt/xhca/lib/xhca/xhca.bpf.o' | grep -q \"FUNC 'xhca_rx'\""
# man pages: installed, rendered without a warning, and naming every option
# the programs' own usage texts name (xhcad's comes from its option table)
for p in xhcad xhca xhca-gen; do
	m=$dest/opt/xhca/share/man/man8/$p.8
	check "install: man page $p(8)" test -s "$m"
	out=$(groff -man -Tutf8 -ww -z "$m" 2>&1)
	check_eq "install: $p(8) renders without a warning" "$out" ""
	missing=
	for o in $("$dest/opt/xhca/$( [ $p = xhcad ] && echo sbin || echo bin)/$p" --help 2>&1 |
		grep -oE -- '--[a-z][a-z0-9-]+' | sort -u); do
		grep -qF -- "$(sed 's/-/\\-/g' <<<"$o")" "$m" || missing="$missing $o"
	done
	check_eq "install: $p(8) describes every option of $p --help" "$missing" ""
done
# libxhca's section 3 pages: a page (or a link page) for every function
# libxhca.so.1 exports, each rendered without a warning, its links resolved
# where man resolves them (make check-man, on the installed pages)
if out=$("$XHCA_TOP/tests/check_man3.sh" "$XHCA_TOP/user/lib/libxhca.map" \
	"$dest/opt/xhca/share/man" 2>&1); then
	pass "install: libxhca's man pages: ${out#check-man: }"
else
	fail "install: libxhca's man pages: $(tr '\n' ' ' <<<"$out")"
fi
check "install: the verbs library in a directory of its own, not over the system's" \
	test "$(readelf -d "$dest/opt/xhca/lib/xhca/verbs/libibverbs.so.1" |
		awk '/SONAME/ {print $NF}')" = "[libibverbs.so.1]"
check "install: librdmacm.so.1 beside it, linked to it" bash -c \
	"readelf -d '$dest/opt/xhca/lib/xhca/verbs/librdmacm.so.1' | grep -q 'NEEDED.*\\[libibverbs.so.1\\]' &&
	 LD_LIBRARY_PATH='$dest/opt/xhca/lib/xhca/verbs' ldd '$dest/opt/xhca/lib/xhca/verbs/librdmacm.so.1' |
		grep -q 'libibverbs.so.1 => $dest/opt/xhca/lib/xhca/verbs/libibverbs.so.1'"
check "install: the installed xhca exec finds the installed verbs library" bash -c \
	"XHCA_VERBS_DIR= '$dest/opt/xhca/bin/xhca' exec -- sh -c 'echo \$LD_LIBRARY_PATH' |
		grep -qx '$dest/opt/xhca/lib/xhca/verbs'"
check "install: nothing outside DESTDIR" test ! -e /opt/xhca
t_done
