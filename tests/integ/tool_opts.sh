#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The tools' option tables (user/lib/opt.h): xhca-gen, xhca-recv, xhca-rc and
# each command of xhca-bench. --help goes to stdout with exit 0; every option
# it names has a usage line of its own (none is only mentioned in another's
# text); every option of those lines, long and short, is accepted; a bad
# number is exit 2 with one line on stderr naming the option and the value.
# Nothing here gets past the options: no xhcad, no network, no root needed.
set -u
. "$(dirname "$0")/../lib.sh"
for b in xhca-gen xhca-recv xhca-rc xhca-bench; do
	if [ ! -x "$B/$b" ]; then skip "tool_opts: $B/$b is not built (run make)"; exit 0; fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Words no option takes as its own: an option's value, then one left over.
W1=tool-opts-word W2=tool-opts-stray

# heads FILE: the long options the usage lines describe ("  -i, --interface
# IF  ...", "  --qpn N  ..."), one per line.
heads() { sed -nE 's/^  (-[A-Za-z0-9], )?--([a-z0-9-]+).*/\2/p' "$1" | sort -u; }
# shorts FILE: their short forms.
shorts() { sed -nE 's/^  -([A-Za-z0-9]), --.*/\1/p' "$1" | sort -u; }
# named FILE: every option the usage names anywhere, but another program's
# ("(xhca-recv --check-psn)", "xhca qp modify QPN --proxy on").
named() {
	sed -E 's/xhca(-[a-z]+)? [^)]*//g' "$1" | grep -oE -- '--[a-z][a-z0-9-]+' |
		sed 's/^--//' | sort -u
}

# run CMD...: stdout in $tmp/out, stderr in $tmp/err, exit code in RC.
run() { "$@" >"$tmp/out" 2>"$tmp/err"; RC=$?; }

# help_case NAME CMD...: CMD --help, then its options one by one.
help_case() {
	local name=$1; shift
	local o missing= refused=
	run "$@" --help
	cp "$tmp/out" "$tmp/help"
	if [ "$RC" = 0 ] && [ -s "$tmp/help" ] && [ ! -s "$tmp/err" ]; then
		pass "tool_opts: $name --help: the usage on stdout, exit 0"
	else
		fail "tool_opts: $name --help: exit $RC, stdout $(wc -c <"$tmp/help") bytes, stderr: $(head -c 200 "$tmp/err")"
	fi
	for o in $(named "$tmp/help"); do
		heads "$tmp/help" | grep -qx -- "$o" || missing="$missing --$o"
	done
	check_eq "tool_opts: $name --help: every option it names has a line of its own" \
		"$missing" ""
	# With W1 as its value or as a word left over, and W2 left over, the
	# option is taken and then something is refused: exit 2, one line that
	# is no complaint about the option itself.
	for o in $(heads "$tmp/help" | grep -vx help | sed 's/^/--/') \
		 $(shorts "$tmp/help" | grep -vx h | sed 's/^/-/'); do
		run "$@" "$o" "$W1" "$W2"
		if [ "$RC" != 2 ] || [ "$(wc -l <"$tmp/err")" != 1 ] ||
			grep -qE "unknown option|needs a value" "$tmp/err"; then
			refused="$refused $o (exit $RC: $(head -n 1 "$tmp/err"))"
		fi
	done
	check_eq "tool_opts: $name: every option of --help is accepted" "$refused" ""
}

# bad_num NAME OPTION VALUE CMD...: CMD OPTION VALUE is exit 2, one line on
# stderr naming the option's long name (LONG) and the value, nothing on stdout.
bad_num() {
	local name=$1 long=$2 opt=$3 val=$4; shift 4
	run "$@" "$opt" "$val"
	if [ "$RC" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && [ ! -s "$tmp/out" ] &&
		grep -qF -- "$long" "$tmp/err" && grep -qF -- "$val" "$tmp/err"; then
		pass "tool_opts: $name $opt $val: exit 2, one line naming it"
	else
		fail "tool_opts: $name $opt $val: exit $RC, stderr $(wc -l <"$tmp/err") lines: $(head -c 300 "$tmp/err")"
	fi
}

help_case xhca-gen "$B/xhca-gen"
help_case xhca-recv "$B/xhca-recv"
help_case xhca-rc "$B/xhca-rc"
for c in prog sched memcpy crc udp-sink tcp-pingpong; do
	help_case "xhca-bench $c" "$B/xhca-bench" "$c"
done
# xhca-bench's own usage: every command's options
run "$B/xhca-bench" --help
cp "$tmp/out" "$tmp/help"
missing=
for c in prog sched memcpy crc udp-sink tcp-pingpong; do
	"$B/xhca-bench" "$c" --help >"$tmp/chelp" 2>/dev/null
	for o in $(heads "$tmp/chelp"); do grep -q -- "--$o" "$tmp/help" || missing="$missing $c:--$o"; done
done
check_eq "tool_opts: xhca-bench --help: every command's options" "$missing" ""
run "$B/xhca-bench"
check "tool_opts: xhca-bench alone: the usage on stderr, exit 2 ($RC)" \
	test "$RC" = 2 -a -s "$tmp/err" -a ! -s "$tmp/out"

G=("$B/xhca-gen" --pcap "$tmp/x.pcap" --op rc-send-only)
bad_num xhca-gen --count --count -1 "${G[@]}" --qpn 5
bad_num xhca-gen --qpn --qpn 0x1000000 "${G[@]}"
R=("$B/xhca-recv" -i lo --type ud)
bad_num xhca-recv --bufs --bufs 3 "${R[@]}"
bad_num xhca-recv --buf-size --buf-size 0 "${R[@]}"
bad_num xhca-recv --flowq --flowq 64 "${R[@]}"
bad_num xhca-recv --mtu --mtu 1500 "${R[@]}"
bad_num xhca-recv --count --count x "${R[@]}"
X=("$B/xhca-rc" -i lo -a 10.0.0.1)
bad_num xhca-rc --port --port 70000 "${X[@]}"
bad_num xhca-rc --port -p 0 "${X[@]}"
bad_num xhca-rc --mtu --mtu 1000 "${X[@]}"
bad_num xhca-rc --pingpong --pingpong x "${X[@]}"
bad_num "xhca-bench prog" --calls -n 0 "$B/xhca-bench" prog
bad_num "xhca-bench prog" --rounds --rounds 65 "$B/xhca-bench" prog
bad_num "xhca-bench sched" --frames -n x "$B/xhca-bench" sched
bad_num "xhca-bench memcpy" --chunk -c 10000 "$B/xhca-bench" memcpy
bad_num "xhca-bench memcpy" --seconds -s 0 "$B/xhca-bench" memcpy
bad_num "xhca-bench udp-sink" --sockets -n 65 "$B/xhca-bench" udp-sink
bad_num "xhca-bench udp-sink" --port -p 70000 "$B/xhca-bench" udp-sink
bad_num "xhca-bench tcp-pingpong" --size -m 0 "$B/xhca-bench" tcp-pingpong -c 10.0.0.1
bad_num "xhca-bench tcp-pingpong" --count --count x "$B/xhca-bench" tcp-pingpong -c 10.0.0.1
t_done
