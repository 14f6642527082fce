#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Direct sends (xhcad --direct, on by default; user/lib/direct.c): a
# one-packet SEND (or WRITE with immediate) of an RC or UC QP whose send
# queue is idle leaves
# from the program itself, through a UDP socket of the QP's, and its xhcad
# takes it as sent. Two xhca hosts on a veth pair: Debian's RC and UC
# pingpongs (every byte checked), perftest's SEND latency and xhca-rctest's
# SENDs and WRITEs with immediate end well, their requests sent directly
# (the requester's direct count; a plain WRITE, a SEND of two packets
# not), none refused, nothing sent again, no timeout; B's xhcad
# checks every frame's ICRC (--icrc first): none bad, so the program's
# packets are RoCE's to the byte (make test-rxe: RXE checks them too). The
# packets leave by the QP's source port (a socket bound to it while the
# program runs). XHCA_DIRECT=0 turns it off for a program, --direct off for
# a host: then xhcad sends everything.
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/direct
need_cmds direct ib_send_lat ib_write_lat ibv_rc_pingpong ibv_uc_pingpong ss
TOPO_MTU=4200 topo_setup || { fail "direct: topology"; t_done; }
tmp=$(mktemp -d)
trap 'apps_kill; topo_cleanup; rm -rf "$tmp"' EXIT
xhcad_start --hostmem-mb 256 && xhcad_start_b --hostmem-mb 256 --icrc first ||
	{ fail "direct: xhcads (B's with --icrc first)"; t_done; }
links_up

# req IF FIELD: the requester's counter FIELD on IF's host
req() { "$B/xhca" -i "$1" -j status | json_get "d['requester']['$2']"; }
resp() { "$B/xhca" -i "$1" -j status | json_get "d['responder']['$2']"; }
# run2 NAME 'SERVER' 'CLIENT' [ENV]: SERVER on B, then CLIENT on A (ENV in
# both programs' environment); both exit 0
run2() {
	local name=$1 srv rs rc
	in_b env ${4:-X=1} "$B/xhca" -i "$IF_B" exec -- timeout 60 $2 >"$tmp/$name.srv" 2>&1 &
	srv=$!
	sleep 0.5
	in_a env ${4:-X=1} "$B/xhca" -i "$IF_A" exec -- timeout 60 $3 >"$tmp/$name.cli" 2>&1
	rc=$?
	wait "$srv"
	rs=$?
	check "direct: $name: both ends exit 0 ($rs, $rc)" test "$rs" = 0 -a "$rc" = 0
	[ "$rs$rc" = 00 ] || tail -n 4 "$tmp/$name.srv" "$tmp/$name.cli" | sed 's/^/    /'
}
# sent NAME CMD...: CMD run; the requests sent directly on A and on B
# meanwhile into DA and DB
sent() {
	local a0 b0
	a0=$(req "$IF_A" direct) b0=$(req "$IF_B" direct)
	"${@:2}"
	DA=$(($(req "$IF_A" direct) - a0)) DB=$(($(req "$IF_B" direct) - b0))
}

sent rc run2 "rc_pingpong" "ibv_rc_pingpong -g 1 -c -n 500 -s 64" \
	"ibv_rc_pingpong -g 1 -c -n 500 -s 64 $IP_B"
check "direct: rc_pingpong: every byte validated on both ends" \
	test "$(grep -h ' iters in ' "$tmp/rc_pingpong.srv" "$tmp/rc_pingpong.cli" | wc -l)" = 2
# (each end's SENDs after the first: its queue idle, each one waits for the
# other's answer)
check "direct: rc_pingpong: the SENDs sent directly on both hosts ($DA on A, $DB on B of 500)" \
	test "$DA" -ge 450 -a "$DB" -ge 450
sent uc run2 "uc_pingpong" "ibv_uc_pingpong -g 1 -c -n 500 -s 64" \
	"ibv_uc_pingpong -g 1 -c -n 500 -s 64 $IP_B"
check "direct: uc_pingpong: every byte validated on both ends" \
	test "$(grep -h ' iters in ' "$tmp/uc_pingpong.srv" "$tmp/uc_pingpong.cli" | wc -l)" = 2
check "direct: uc_pingpong: sent directly on both hosts ($DA on A, $DB on B)" \
	test "$DA" -ge 450 -a "$DB" -ge 450
sent lat run2 "ib_send_lat" "ib_send_lat -F -s 64 -n 3000" "ib_send_lat -F -s 64 -n 3000 $IP_B"
check "direct: ib_send_lat: every SEND sent directly ($DA on A, $DB on B of 3000)" \
	test "$DA" -ge 3000 -a "$DB" -ge 3000
# a WRITE without immediate goes through xhcad (its peer may spin on its
# memory: user/lib/direct.c), as does a SEND of two packets: none refused,
# as the library never marks one
sent wlat run2 "ib_write_lat" "ib_write_lat -F -s 64 -n 3000" "ib_write_lat -F -s 64 -n 3000 $IP_B"
check_eq "direct: ib_write_lat: no WRITE sent directly" "$DA $DB" "0 0"
sent big run2 "ib_send_lat 8 KiB" "ib_send_lat -F -s 8192 -n 500" \
	"ib_send_lat -F -s 8192 -n 500 $IP_B"
check_eq "direct: 8 KiB SENDs (two packets): none sent directly" "$DA $DB" "0 0"
# xhca-rctest's ops in A's namespace, its second side A's QP (the one that
# sends with immediates; the first's, B's, cannot bind B's address there:
# through xhcad): A's SENDs and WRITEs with immediate of 1 and 255 bytes
# sent directly, their data and immediates checked at B
sent ops in_a "$B/xhca-rctest" ops "$IF_B" "$IP_B" "$IF_A" "$IP_A" rc 1024 1 255 >"$tmp/ops" 2>&1
prog_checks "direct: xhca-rctest ops rc 1 255" "$tmp/ops" $?
check "direct: xhca-rctest ops: A's SENDs and WRITEs with immediate sent directly ($DA of 4), none of B's ($DB)" \
	test "$DA" = 4 -a "$DB" = 0
v=$(for i in "$IF_A" "$IF_B"; do "$B/xhca" -i "$i" -j status | json_get \
	"d['requester']['direct_refused'] + d['requester']['retransmits'] + d['requester']['timeouts']"; done | xargs)
check "direct: none refused, nothing sent again, no timeout on either host ($v)" test "$v" = "0 0"
check_eq "direct: B checked every frame's ICRC: none bad" "$(resp "$IF_B" bad_icrc)" 0

# the program's packets leave by the QP's source port: a socket of the
# program's bound to the QP's address and 0xc000 | the QPN's low 14 bits
xb timeout 30 ibv_rc_pingpong -g 1 -n 300000 -s 64 >"$tmp/port.srv" 2>&1 &
APPS+=($!)
sleep 0.5
xa timeout 30 ibv_rc_pingpong -g 1 -n 300000 -s 64 "$IP_B" >"$tmp/port.cli" 2>&1 &
APPS+=($!)
ports= bound=
for _ in $(seq 100); do
	ports=$("$B/xhca" -i "$IF_A" -j qp show | json_get \
		"' '.join(str(0xc000 | (q['qpn'] & 0x3fff)) for q in d['qps'] if q['type'] == 'rc' and q['state'] == 'rts')")
	bound=$(in_a ss -uanpH | awk '/ibv_rc_pingpong/ {n = split($4, a, ":"); print a[1] ":" a[n]}' | xargs)
	[ -n "$ports" ] && [ -n "$bound" ] && break
	sleep 0.05
done
check "direct: the client's QP sends from its port of its address ($bound; its QP's: $ports)" \
	test -n "$ports" -a "$bound" = "$IP_A:$ports"
pkill -f 'ibv_rc_pingpong -g 1 -n 300000'
apps_kill
wait "${APPS[@]}" 2>/dev/null
APPS=()
for _ in $(seq 100); do pgrep -f 'ibv_rc_pingpong -g 1 -n 300000' >/dev/null || break; sleep 0.05; done

# XHCA_DIRECT=0: the programs leave every request to xhcad
sent env0 run2 "rc_pingpong, XHCA_DIRECT=0" "ibv_rc_pingpong -g 1 -c -n 300 -s 64" \
	"ibv_rc_pingpong -g 1 -c -n 300 -s 64 $IP_B" XHCA_DIRECT=0
check_eq "direct: XHCA_DIRECT=0: none sent directly" "$DA $DB" "0 0"

# --direct off on A: A's programs find no path in their rings; B's go on
xhcad_stop
xhcad_start --hostmem-mb 256 --direct off || { fail "direct: A's xhcad with --direct off"; t_done; }
links_up
sent off run2 "rc_pingpong, A --direct off" "ibv_rc_pingpong -g 1 -c -n 300 -s 64" \
	"ibv_rc_pingpong -g 1 -c -n 300 -s 64 $IP_B"
check "direct: A --direct off: none sent directly on A, B's still ($DA on A, $DB on B)" \
	test "$DA" = 0 -a "$DB" -ge 250
t_done
