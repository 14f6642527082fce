#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# ACKs sent by xhca_rx (xhcad --xdp-ack on): two xhca hosts on a veth pair,
# both ends running xhca_rx. An RC SEND or WRITE xhca_rx placed whose ACK
# is due is acknowledged by xhca_rx itself (XDP_TX): Debian's pingpong
# (every byte checked), perftest's SEND and WRITE latency and bandwidth,
# and rping (SENDs,
# READs and WRITEs on one QP: an ACK of xhca_rx's never passes a READ
# response xhcad still owes) all end well with nothing sent again and no
# timeout; recv_acked counts the ACKs; `xhca status` says xdp_ack on. By
# default (auto) an xhcad on a veth sends every ACK itself in native mode,
# and lets xhca_rx send them in skb mode.
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/xdp_ack
need_cmds xdp_ack ib_send_bw ibv_rc_pingpong rping
TOPO_MTU=4200 topo_setup || { fail "xdp_ack: topology"; t_done; }
tmp=$(mktemp -d)
APP_DIR=$tmp
trap 'apps_kill; topo_cleanup; rm -rf "$tmp"' EXIT
xhcad_start --hostmem-mb 256 --xdp-ack on && xhcad_start_b --hostmem-mb 256 --xdp-ack on ||
	{ fail "xdp_ack: xhcads with --xdp-ack on"; t_done; }
links_up
check_eq "xdp_ack: xhca status says on" "$(xhca -j status | json_get 'd["xdp_ack"]')" 1

# acked IF [REASON]: ACKs xhca_rx sent on IF's host so far (for SENDs, or
# REASON placed_acked: for WRITEs)
acked() { "$B/xhca" -i "$1" -j stats | json_get "d['reasons']['${2:-recv_acked}']['packets']"; }
# quiet NAME: neither requester sent anything again or timed out
quiet() {
	local v
	v=$(for i in "$IF_A" "$IF_B"; do "$B/xhca" -i "$i" -j status |
		json_get "d['requester']['retransmits'] + d['requester']['timeouts']"; done | xargs)
	check "xdp_ack: $1: nothing sent again, no timeout ($v)" test "$v" = "0 0"
}
# run2 NAME 'SERVER' 'CLIENT': SERVER on B, then CLIENT on A; both exit 0
run2() {
	local name=$1 srv rs rc
	xb timeout 60 $2 >"$tmp/$name.srv" 2>&1 &
	srv=$!
	sleep 0.5
	xa timeout 60 $3 >"$tmp/$name.cli" 2>&1
	rc=$?
	wait "$srv"
	rs=$?
	check "xdp_ack: $name: both ends exit 0 ($rs, $rc)" test "$rs" = 0 -a "$rc" = 0
	[ "$rs$rc" = 00 ] || tail -n 4 "$tmp/$name.srv" "$tmp/$name.cli" | sed 's/^/    /'
}

a0=$(acked "$IF_A") b0=$(acked "$IF_B")
run2 "rc_pingpong -c -s 64" "ibv_rc_pingpong -g 1 -c -n 500 -s 64" \
	"ibv_rc_pingpong -g 1 -c -n 500 -s 64 $IP_B"
check "xdp_ack: rc_pingpong: every byte validated on both ends" \
	test "$(grep -h ' iters in ' "$tmp/rc_pingpong -c -s 64.srv" "$tmp/rc_pingpong -c -s 64.cli" | wc -l)" = 2
a=$(($(acked "$IF_A") - a0)) b=$(($(acked "$IF_B") - b0))
check "xdp_ack: rc_pingpong: xhca_rx sent ACKs on both hosts ($a on A, $b on B)" \
	test "$a" -gt 0 -a "$b" -gt 0
quiet "rc_pingpong"
run2 "ib_send_lat" "ib_send_lat -F -s 64 -n 5000" "ib_send_lat -F -s 64 -n 5000 $IP_B"
run2 "ib_send_bw 64" "ib_send_bw -F -s 64 -n 50000" "ib_send_bw -F -s 64 -n 50000 $IP_B"
# WRITEs xhca_rx placed (perftest's regions are pre-translated)
b0=$(acked "$IF_B" placed_acked)
run2 "ib_write_lat" "ib_write_lat -F -s 64 -n 5000" "ib_write_lat -F -s 64 -n 5000 $IP_B"
run2 "ib_write_bw 64 KiB" "ib_write_bw -F -s 65536 -n 2000" "ib_write_bw -F -s 65536 -n 2000 $IP_B"
b=$(($(acked "$IF_B" placed_acked) - b0))
check "xdp_ack: WRITEs: xhca_rx sent their ACKs ($b on B)" test "$b" -gt 0
quiet "perftest"
# rping -V: each ping a SEND, an RDMA READ and WRITE of the peer's buffer,
# validated
run2 "rping -V" "rping -s -a $IP_B -C 300 -S 1024 -V" "rping -c -a $IP_B -C 300 -S 1024 -V"
quiet "rping"

# B's xhcad by default (--xdp-ack auto): off, as xhca_rx runs native on a
# veth (xhcad cannot see whether the peer runs an XDP program), said in its
# log; xhcad sends B's ACKs, A's xhca_rx still its own
XHCAD_PID=$XHCAD_PID_B xhcad_stop
XHCAD_LOG_B=$tmp/xhcad-b.log
xhcad_start_b --hostmem-mb 256 || { fail "xdp_ack: B's xhcad by default"; t_done; }
links_up
check_eq "xdp_ack: auto, native on a veth: xhca status says off" \
	"$("$B/xhca" -i "$IF_B" -j status | json_get 'd["xdp_ack"]')" 0
check "xdp_ack: ... and xhcad said why" \
	grep -q -- "--xdp-ack auto: off (driver veth, native mode): a veth's peer may run no XDP" "$XHCAD_LOG_B"
a0=$(acked "$IF_A") b0=$(acked "$IF_B")
run2 "rc_pingpong, B auto" "ibv_rc_pingpong -g 1 -c -n 300 -s 64" \
	"ibv_rc_pingpong -g 1 -c -n 300 -s 64 $IP_B"
a=$(($(acked "$IF_A") - a0)) b=$(($(acked "$IF_B") - b0))
check "xdp_ack: B's xhca_rx sent none, A's did ($a on A, $b on B)" test "$a" -gt 0 -a "$b" = 0

# ... and on in skb mode: XDP_TX leaves as any packet does (generic XDP),
# into A's veth, where xhca_rx runs native. (A's own ACKs back into B's
# veth, which has no native program now, would wait there: A by default,
# auto, is off on a veth in native mode.)
XHCAD_PID=$XHCAD_PID_B xhcad_stop
xhcad_stop
: >"$XHCAD_LOG_B"
xhcad_start --hostmem-mb 256 && xhcad_start_b --hostmem-mb 256 --mode skb ||
	{ fail "xdp_ack: A's xhcad by default, B's in skb mode"; t_done; }
links_up
check_eq "xdp_ack: auto: A (native) off, B (skb mode) on" \
	"$(for i in "$IF_A" "$IF_B"; do "$B/xhca" -i "$i" -j status | json_get 'd["xdp_ack"]'; done | xargs)" "0 1"
check "xdp_ack: ... and B's xhcad said so" \
	grep -q -- "--xdp-ack auto: on (driver veth, skb mode)" "$XHCAD_LOG_B"
a0=$(acked "$IF_A") b0=$(($(acked "$IF_B") + $(acked "$IF_B" placed_acked)))
run2 "rc_pingpong, B in skb mode" "ibv_rc_pingpong -g 1 -c -n 300 -s 64" \
	"ibv_rc_pingpong -g 1 -c -n 300 -s 64 $IP_B"
run2 "ib_write_bw, B in skb mode" "ib_write_bw -F -s 65536 -n 1000" "ib_write_bw -F -s 65536 -n 1000 $IP_B"
a=$(($(acked "$IF_A") - a0)) b=$(($(acked "$IF_B") + $(acked "$IF_B" placed_acked) - b0))
check "xdp_ack: skb mode: B's xhca_rx sent ACKs, A's none ($a on A, $b on B)" test "$a" = 0 -a "$b" -gt 0
quiet "skb mode"
t_done
