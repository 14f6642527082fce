#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make check-layers: xhcad's files (and librdmacm's) call only downward.
#   check_layers.sh "LAYER LAYER ..." OBJ...
# The layers are the files of one part (user/xhcad, user/rdmacm), lowest
# first (XHCAD_LAYERS, RDMACM_LAYERS in the Makefile; docs/design.md). A function an object needs (nm: undefined) that another
# object of xhcad defines must come from a file lower in the list; a file not
# in the list is an error too (a new file takes its place in the order).
set -u
order=($1)
shift
# the part's source folder, from its objects' (build/.../user/PART/x.o)
part=$(dirname "${1:-user/xhcad/x.o}" | sed 's|.*/\(user/[^/]*\)$|\1|')
declare -A rank
for i in "${!order[@]}"; do rank[${order[$i]}]=$i; done
bad=0
declare -A def
for o in "$@"; do
	n=$(basename "$o" .o)
	if [ -z "${rank[$n]+x}" ]; then
		echo "check-layers: $part/$n.c is in no layer: add it to its layers in the Makefile (and docs/design.md or its header)" >&2
		bad=1
	fi
	while read -r _ t s; do
		case $t in T|D|B|R) def[$s]=$n;; esac
	done < <(nm --defined-only "$o")
done
for o in "$@"; do
	n=$(basename "$o" .o)
	[ -n "${rank[$n]+x}" ] || continue
	while read -r s; do
		d=${def[$s]-}
		[ -n "$d" ] && [ "$d" != "$n" ] && [ -n "${rank[$d]+x}" ] || continue
		if [ "${rank[$d]}" -gt "${rank[$n]}" ]; then
			echo "check-layers: $n.c calls $s() of $d.c, a higher layer" >&2
			bad=1
		fi
	done < <(nm --undefined-only "$o" | awk '{print $2}')
done
if [ $bad = 0 ]; then
	echo "check-layers: ${#order[@]} files of $part, every call downward"
fi
exit $bad
