#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make check-man: libxhca's section 3 man pages cover what libxhca.so.1
# exports, and render without a warning.
#   check_man3.sh [MAP [MANDIR]]   (user/lib/libxhca.map, man: the tree's;
#                                   tests/integ/install.sh: the installed ones)
# For every function of MAP (the lines "xhca_NAME;" of its version nodes):
#  - MANDIR/man3/NAME.3 is there: the page, or a link page holding only
#    ".so man3/PAGE.3" to the page that documents it (as rdma-core's);
#  - that page lists NAME in its NAME section and declares NAME( in its
#    SYNOPSIS;
#  - libxhca.3, the overview, names it (".BR NAME (3)").
# And for every page of MANDIR/man3: a link leads to a page that is not one
# itself; a page's .TH is its file's name; every name its NAME section lists
# has a file (man NAME finds it); groff -man -ww renders it without a word
# (a link page, through its page).
set -u
map=${1:-user/lib/libxhca.map}
dir=${2:-man}
m3=$dir/man3
bad=0
err() { echo "check-man: $*" >&2; bad=1; }

[ -r "$map" ] || { echo "check-man: no export map $map" >&2; exit 1; }
[ -d "$m3" ] || { echo "check-man: no directory $m3" >&2; exit 1; }
command -v groff >/dev/null || { echo "check-man: groff is not installed (make deps)" >&2; exit 1; }

funcs=$(awk '/^[[:space:]]+xhca_[a-z0-9_]+;/ { sub(";", "", $1); print $1 }' "$map" | sort -u)
[ -n "$funcs" ] || { echo "check-man: no function in $map" >&2; exit 1; }

# link FILE: the page a link page leads to (man3/PAGE.3), or nothing
link() { sed -n '1s/^\.so[[:space:]]\{1,\}\(man3\/[^[:space:]]*\)[[:space:]]*$/\1/p' "$1"; }
# section FILE NAME: the lines of section NAME (.SH NAME up to the next .SH)
section() { awk -v s="$2" '/^\.SH/ { f = ($0 == ".SH " s); next } f' "$1"; }
# names FILE: the names its NAME section lists, one a line
names() { section "$1" NAME | tr '\n' ' ' | sed 's/[[:space:]]\\-.*//' | tr ', ' '\n\n' | sed '/^$/d'; }

# the pages: each link leads to a page; titles; names; rendering
for p in "$m3"/*.3; do
	b=$(basename "$p" .3)
	t=$(link "$p")
	if [ -n "$t" ]; then
		[ "$(wc -l <"$p")" = 1 ] || err "man3/$b.3: a link page holds its .so line alone"
		if [ ! -f "$dir/$t" ]; then
			err "man3/$b.3 leads to $t, which is not there"
		elif [ -n "$(link "$dir/$t")" ]; then
			err "man3/$b.3 leads to $t, a link itself: name the page"
		elif ! names "$dir/$t" | grep -qx "$b"; then
			err "man3/$b.3 leads to $t, whose NAME section does not list $b"
		fi
	else
		th=$(awk '/^\.TH/ { print $2, $3; exit }' "$p")
		[ "$th" = "$(tr a-z A-Z <<<"$b") 3" ] ||
			err "man3/$b.3: .TH says \"$th\", not \"$(tr a-z A-Z <<<"$b") 3\""
		names "$p" | grep -qx "$b" || err "man3/$b.3: its NAME section does not list $b"
		for n in $(names "$p"); do
			[ -f "$m3/$n.3" ] || err "man3/$b.3 lists $n, which has no man3/$n.3 (a link page: .so man3/$b.3)"
		done
		out=$(groff -man -Tutf8 -ww -z "$p" 2>&1)
		[ -z "$out" ] || err "man3/$b.3 does not render cleanly: $(tr '\n' ' ' <<<"$out")"
	fi
done

# every function: its file, its page, the overview
n=0
for f in $funcs; do
	n=$((n + 1))
	if [ ! -f "$m3/$f.3" ]; then
		err "$f (exported by $(basename "$map")) has no page man3/$f.3: document it, and make man3/$f.3 a link page (.so man3/PAGE.3) if another page holds it"
		continue
	fi
	t=$(link "$m3/$f.3")
	page=$dir/${t:-man3/$f.3}
	[ -f "$page" ] || continue # (said above)
	names "$page" | grep -qx "$f" || err "$f: $(basename "$page") does not list it in its NAME section"
	section "$page" SYNOPSIS | grep -q "[^a-z0-9_]$f(" ||
		err "$f: $(basename "$page") does not declare $f( in its SYNOPSIS"
	grep -q "^\.BR $f (3)" "$m3/libxhca.3" 2>/dev/null ||
		err "$f: libxhca.3, the overview, does not name it (.BR $f (3))"
done

if [ $bad = 0 ]; then
	echo "check-man: $n functions of $(basename "$map"), each on its page; the $(ls "$m3" | wc -l) pages of $m3 (links included) render cleanly"
fi
exit $bad
