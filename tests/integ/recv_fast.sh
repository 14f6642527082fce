#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# SENDs placed by xhca_rx (xhcad --recv-fast on), between two xhca hosts
# (RC, UC, and UD with its GRH):
# Debian's pingpongs validating every byte (-c) and perftest, through
# `xhca exec`. xhca_rx placed and completed the one-packet SENDs itself
# (recv_placed), xhcad the longer ones, the SRQ's and what xhca_rx lacked
# something for; an application sleeping on its CQ is woken; a QP that goes
# at once after its last completion still acknowledges it (the peer's SEND
# completes); xhca qp show counts xhca_rx's completions; with --recv-fast
# off, xhca_rx places none; a QP an xhcad restart keeps gets it again.
. "$(dirname "$0")/../lib.sh"
need_root "recv_fast"
need_cmds recv_fast ibv_rc_pingpong ib_send_bw
MID_MTU=4200 XHCAD_B_ARGS="--recv-fast on" two_hosts recv_fast 256 --recv-fast on
links_up

# placed IF: SENDs xhca_rx placed on IF's host so far (recv_placed;
# placed_ack: an RC SEND whose ACK is due, placed and sent on to xhcad for
# it; recv_acked: ... whose ACK xhca_rx sent back itself; no test here
# WRITEs)
placed() {
	"$B/xhca" -i "$1" -j stats |
		json_get 'sum(d["reasons"][r]["packets"] for r in ("recv_placed", "placed_ack", "recv_acked"))'
}
pair() { exec_pair "$1" "$2" "listening $NS_A $3" "$4" "$5 $IP_A"; }
# pingpong NAME WANT ARGS: an ibv_*_pingpong pair validating every byte;
# WANT: "some" (xhca_rx placed SENDs on both hosts) or "none"
pingpong() {
	local name=$1 want=$2 prog=$3 a0 b0 a b n
	shift 3
	a0=$(placed "$IF_A") b0=$(placed "$IF_B")
	pair "$name" 60 18515 "$prog $*" "$prog $*" || return
	a=$(($(placed "$IF_A") - a0)) b=$(($(placed "$IF_B") - b0))
	n=$(grep -h ' iters in ' "$tmp/$name.srv" "$tmp/$name.cli" | wc -l)
	check "$name: both ends done, every byte validated" test "$n" = 2
	if [ "$want" = some ]; then
		check "$name: xhca_rx placed SENDs on both hosts ($a on A, $b on B)" \
			test "$a" -gt 0 -a "$b" -gt 0
	else
		check "$name: xhca_rx placed none ($a on A, $b on B)" test "$a" = 0 -a "$b" = 0
	fi
}

# one-packet SENDs (the pingpongs' path MTU 1024 by default): xhca_rx's;
# longer ones: xhcad's
for s in 1 64 1024; do
	pingpong "rc_pingpong -s $s" some ibv_rc_pingpong -g 1 -c -n 200 -s "$s"
done
pingpong "rc_pingpong -m 4096 -s 4096 (a page in one packet)" some \
	ibv_rc_pingpong -g 1 -c -n 200 -m 4096 -s 4096
pingpong "uc_pingpong -s 1000" some ibv_uc_pingpong -g 1 -c -n 200 -s 1000
# UD: the GRH first, then the payload (ud_pingpong checks both)
for s in 64 1000; do
	pingpong "ud_pingpong -s $s" some ibv_ud_pingpong -g 1 -c -n 200 -s "$s"
done
pingpong "rc_pingpong -s 4096 (four packets a SEND)" none ibv_rc_pingpong -g 1 -c -n 50 -s 4096
# an SRQ's buffers are every QP's: xhcad's
pingpong "srq_pingpong" none ibv_srq_pingpong -g 1 -c -n 50 -s 100
# the programs sleep on their CQs' events: xhca_rx's completions wake them
pingpong "rc_pingpong -e (completion events)" some ibv_rc_pingpong -g 1 -c -e -n 200 -s 100
# one exchange: each side destroys its QP as soon as its last completion
# came, before xhcad sent the ACK that completion's SEND asked for; the QP
# acknowledges all it took as it goes, so the peer's SEND completes
for i in 1 2 3; do
	pingpong "rc_pingpong -n 1 (the QP goes at once: its ACK goes first), run $i" some \
		ibv_rc_pingpong -g 1 -c -n 1 -s 64
done

# xhca qp show counts the completions xhca_rx wrote with xhcad's: read
# while a long ping-pong runs, once A placed 2000 of its SENDs (the QP is
# A's only one)
a0=$(placed "$IF_A")
xa timeout 60 ibv_rc_pingpong -g 1 -n 100000 -s 64 >"$tmp/qpshow.srv" 2>&1 &
spid=$!
wait_listen "$NS_A" 18515
xb timeout 60 ibv_rc_pingpong -g 1 -n 100000 -s 64 "$IP_A" >"$tmp/qpshow.cli" 2>&1 &
cpid=$!
for _ in $(seq 200); do [ $(($(placed "$IF_A") - a0)) -ge 2000 ] && break; sleep 0.05; done
comp=$("$B/xhca" -i "$IF_A" -j qp show | json_get 'sum(q["host"]["completions"] for q in d["qps"])')
check "qp show: the QP's completions count xhca_rx's ($comp, 2000 placed before)" \
	test "${comp:-0}" -ge 2000
wait "$cpid" "$spid" || fail "qp show: the long ping-pong did not end well"

# perftest: 64-byte SENDs as fast as they go, and the ping-pong
a0=$(placed "$IF_A")
pair "ib_send_bw 64" 90 18515 "ib_send_bw -F -s 64 -x 1 -n 20000" "ib_send_bw -F -s 64 -x 1 -n 20000"
a=$(($(placed "$IF_A") - a0))
check "ib_send_bw 64: xhca_rx placed most of the 20000 SENDs ($a)" test "$a" -ge 10000
check "ib_send_bw 64: the client's result line" \
	awk '$1 == 64 && NF >= 4 && $4 + 0 > 0 { f = 1 } END { exit !f }' "$tmp/ib_send_bw 64.cli"
pair "ib_send_lat 64" 90 18515 "ib_send_lat -F -s 64 -x 1 -n 2000" "ib_send_lat -F -s 64 -x 1 -n 2000"
check "ib_send_lat 64: the client's result line" \
	awk '$1 == 64 && NF >= 5 && $5 + 0 > 0 { f = 1 } END { exit !f }' "$tmp/ib_send_lat 64.cli"
# every SEND ACKed: nothing went again, no error, no timeout
rt=$("$B/xhca" -i "$IF_B" -j status | json_get "d['requester']['retransmits']")
to=$("$B/xhca" -i "$IF_B" -j status | json_get "d['requester']['timeouts']")
check "B's requester: nothing sent again, no timeout ($rt, $to)" test "$rt" = 0 -a "$to" = 0

# --recv-fast off: xhcad places every SEND
xhcad_stop
XHCAD_PID=$XHCAD_PID_B xhcad_stop
xhcad_start --hostmem-mb 256 --recv-fast off && xhcad_start_b --hostmem-mb 256 --recv-fast off ||
	{ fail "recv_fast: xhcads with --recv-fast off"; t_done; }
links_up
pingpong "rc_pingpong -s 64, --recv-fast off" none ibv_rc_pingpong -g 1 -c -n 100 -s 64

# --xdp-ack on where the frames XDP_TX sends are dropped: A's veth peer has
# no XDP program and GRO off (no NAPI). A's first ACKs are lost, B sends
# those SENDs again, A's xhcad sees the interface's drops and sends every
# ACK itself from then on.
xhcad_stop
XHCAD_PID=$XHCAD_PID_B xhcad_stop
XHCAD_LOG=$tmp/xhcad-a.log
xhcad_start --hostmem-mb 256 --xdp-ack on && xhcad_start_b --hostmem-mb 256 ||
	{ fail "recv_fast: xhcads, A's with --xdp-ack on"; t_done; }
links_up
check_eq "xdp-ack: on at first" "$("$B/xhca" -i "$IF_A" -j status | json_get 'd["xdp_ack"]')" 1
pingpong "rc_pingpong -s 64, --xdp-ack on, XDP_TX dropped" some \
	ibv_rc_pingpong -g 1 -c -n 200 -s 64
check_eq "xdp-ack: off once the interface dropped XDP_TX frames" \
	"$("$B/xhca" -i "$IF_A" -j status | json_get 'd["xdp_ack"]')" 2
check "xdp-ack: ... and xhcad said why" \
	grep -q "dropped [0-9]* frames sent back by XDP_TX" "$XHCAD_LOG"

# A QP an xhcad restart keeps (--keep): xhca_rx places its SENDs again once
# the next xhcad is up. A's ib_send_bw takes 64-byte SENDs for 8 s; its
# xhcad restarts 2 s in. The ACKs of what A's xhca_rx took while no xhcad
# ran were lost: B sends that again after its 1 s timeout (-u 18).
xhcad_stop
xhcad_start --keep --hostmem-mb 256 || { fail "recv_fast: xhcad --keep on $IF_A"; t_done; }
xa timeout 60 ib_send_bw -F -s 64 -x 1 -u 18 -D 8 >"$tmp/keep.srv" 2>&1 &
spid=$!
wait_listen "$NS_A" 18515
xb timeout 60 ib_send_bw -F -s 64 -x 1 -u 18 -D 8 "$IP_A" >"$tmp/keep.cli" 2>&1 &
cpid=$!
sleep 2
xhcad_stop TERM
check_eq "restart: xhcad --keep exits 0" "$XHCAD_RC" 0
xhcad_start --keep --hostmem-mb 256 || fail "restart: xhcad --keep on $IF_A again"
a0=$(placed "$IF_A")
wait "$cpid"
rc=$?
wait "$spid"
rs=$?
check "restart: ib_send_bw on both hosts went on and ended well ($rs, $rc)" test "$rs$rc" = 00
a=$(($(placed "$IF_A") - a0))
check "restart: xhca_rx placed the kept QP's SENDs after the restart ($a)" test "$a" -ge 10000
t_done
