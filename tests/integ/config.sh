#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# xhcad's configuration file: NAME = VALUE lines, NAME a long option.
# --check-config names each mistake with its file, line and what to give
# (the option table's own checks and hints, as on the command line) and
# exits 1; xhcad reads /etc/xhca/IFNAME.conf or --config FILE, the command
# line over it; a file with a mistake starts nothing (exit 2).
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/config
topo_setup || { fail "config: topology"; t_done; }
tmp=$(mktemp -d)
XHCAD_LOG=$tmp/xhcad.log
[ -d /etc/xhca ] && made_etc= || made_etc=1
trap 'topo_cleanup; rm -rf "$tmp"; rm -f "/etc/xhca/$IF_A.conf";
	[ -n "$made_etc" ] && rmdir /etc/xhca 2>/dev/null' EXIT

cat >"$tmp/bad.conf" <<'EOF'
# every kind of mistake
hostmem-mb = 128
flowqs = 63
hostmem = 3
flowqs 8
keep = maybe
--icrc = first
icrc = both
poll_us = 5
config = other.conf
hostmem-mb = 64
sched =
bogus = 1
group = xhca-no-such-group
EOF
out=$("$B/xhcad" --check-config --config "$tmp/bad.conf" 2>&1)
rc=$?
f=$tmp/bad.conf
check_eq "config: --check-config: exit 1, every mistake with its line and what to give" \
	"$rc
$out" "1
$f:3: flowqs = 63: use 1 to 62
$f:4: unknown setting 'hostmem'; did you mean hostmem-mb?
$f:5: 'flowqs 8' is not NAME = VALUE: write flowqs = 8
$f:6: keep = maybe: give yes or no
$f:7: '--icrc': write the name without --
$f:8: icrc = both: use first or after
$f:9: unknown setting 'poll_us'; did you mean poll-us?
$f:10: 'config' is for the command line only (xhcad --config)
$f:11: hostmem-mb is given again (first on line 2): give it once
$f:12: sched needs a value (drr|fifo)
$f:13: unknown setting 'bogus': the settings are the long options of xhcad --help, without --
$f:14: group = xhca-no-such-group: no such group (see getent group)
xhcad: $f: 12 mistakes"
# the file's checks are the command line's: the same words after the name
for o in "flowqs 63" "icrc both" "sched lifo" "watermarks 9,10" "proxy-limit 1" "xdp-ack maybe" \
	"steer sideways"; do
	set -- $o
	cl=$("$B/xhcad" "$IF_A" --"$1" "$2" 2>&1 | sed 's/^xhcad: --[a-z-]* [^:]*: //')
	echo "$1 = $2" >"$tmp/one.conf"
	fl=$("$B/xhcad" --check-config --config "$tmp/one.conf" 2>&1 | head -n 1 |
		sed 's/^[^:]*:1: [a-z-]* = [^:]*: //')
	check_eq "config: '$1 = $2' is refused as --$1 $2 is ($cl)" "$fl" "$cl"
done
check_eq "config: --xdp-ack takes auto, on or off" "$(echo "xdp-ack = maybe" >"$tmp/one.conf"
	"$B/xhcad" --check-config --config "$tmp/one.conf" 2>&1 | head -n 1)" "$tmp/one.conf:1: xdp-ack = maybe: use auto, on or off"
check_eq "config: --steer takes auto, on or off" "$(echo "steer = sideways" >"$tmp/one.conf"
	"$B/xhcad" --check-config --config "$tmp/one.conf" 2>&1 | head -n 1)" "$tmp/one.conf:1: steer = sideways: use auto, on or off"

out=$("$B/xhcad" --check-config "$IF_A" 2>&1)
check_eq "config: --check-config IFNAME without its file: exit 1, saying xhcad starts with the defaults" \
	"$?:$out" "1:xhcad: /etc/xhca/$IF_A.conf: no such file (xhcad $IF_A starts with the defaults)"
out=$("$B/xhcad" --check-config 2>&1)
check_eq "config: --check-config with neither: exit 2" "$?:$out" \
	"2:xhcad: --check-config: give IFNAME or --config FILE"
out=$("$B/xhcad" "$IF_A" --config "$tmp/none.conf" 2>&1)
check_eq "config: --config of a file that is not there: exit 2" "$?:$out" \
	"2:xhcad: $tmp/none.conf: cannot read it: No such file or directory"
out=$(in_a "$B/xhcad" "$IF_A" --config "$tmp/bad.conf" 2>&1)
rc=$?
check "config: xhcad with a file with mistakes: exit 2 ($rc), the mistakes, nothing attached" \
	test "$rc" = 2 -a "$(grep -c "^$f:" <<<"$out")" = 12 -a -z "$(xdp_prog_id "$NS_A" "$IF_A")"

mkdir -p /etc/xhca
cat >"/etc/xhca/$IF_A.conf" <<'EOF'
# host A
hostmem-mb = 48
flowqs = 4
poll-us = 25
mtu = 3000
keep = no
canary = yes
EOF
out=$("$B/xhcad" --check-config "$IF_A" 2>&1)
check_eq "config: --check-config IFNAME: its file, no mistakes" "$?:$out" \
	"0:xhcad: /etc/xhca/$IF_A.conf: no mistakes"
settings() {
	xhca -j status | json_get 'd["flowqs"], d["hostmem_bytes"] >> 20, d["poll_us"], d["canary"]'
}
check "config: xhcad IFNAME starts with /etc/xhca/IFNAME.conf" xhcad_start
check_eq "config: ... its flow queues, host memory, busy poll and canary" "$(settings)" \
	"4 48 25 True"
check_eq "config: ... its MTU" "$(ip -n "$NS_A" -o link show "$IF_A" | grep -o 'mtu [0-9]*')" \
	"mtu 3000"
check "config: ... and says where they came from" \
	grep -q "settings from /etc/xhca/$IF_A.conf" "$XHCAD_LOG"
xhcad_stop
check "config: the command line goes over the file" xhcad_start --flowqs 2 --poll-us 0
check_eq "config: ... --flowqs 2 --poll-us 0 over 4 and 25" "$(settings)" "2 48 0 True"
xhcad_stop
# (the handler's path is read later than the lines after it: the file's
# values must outlive its reading)
printf 'proxy-handler = %s\nflowqs = 6\nkeep = yes\n' "$B/px_counter.so:5" >"$tmp/other.conf"
check "config: --config FILE in place of IFNAME's" xhcad_start --config "$tmp/other.conf"
check_eq "config: ... its settings alone (the defaults for the rest), its proxy handler" \
	"$(settings) $(xhca -j status | json_get 'd["keep"]') $(xhca -j proxy show |
		json_get '[h["name"] for h in d["handlers"]][-1]')" "6 256 50 False 1 counter"
xhcad_stop
t_done
