#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Unmodified rdma_cm programs on xhca (issue "Connection manager: librdmacm
# applications and IB CM on the wire"): xhca's librdmacm.so.1 has rdma-core
# 44's export set and is what `xhca exec` loads; between two xhca hosts
# (an xhcad in each namespace, their CMs speaking the IB CM on the wire)
# Debian's rping (counts, sizes, verification, IPv6, its self-made QP), a
# rping to a port nobody listens on (REJECTED), perftest with -R (rdma_cm
# for its side channel and its QPs), ucmatose, udaddy, mckey (multicast),
# and a program of the tests' own (xhca-rdmacmtest). Every program
# runs under a timeout: a CM that does not answer is a failure, not a hang.
. "$(dirname "$0")/../lib.sh"
need_root "rdmacm"
LIB=$B/verbs/librdmacm.so.1
SYS=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/librdmacm.so.1

# ---- the library, without xhcad ---------------------------------------------------
# symbols FILE: "VERSION NAME" of each symbol it defines, sorted
symbols() { objdump -T "$1" | awk '$4 ~ /text|ABS/ { print $(NF-1), $NF }' | sort; }
if [ -e "$SYS" ]; then
	d=$(diff <(symbols "$SYS") <(symbols "$LIB"))
	check "librdmacm.so.1: rdma-core 44's export set, every symbol at its version ($(symbols "$LIB" | wc -l) with the 4 version nodes)${d:+: $d}" test -z "$d"
else
	skip "librdmacm.so.1's export set: Debian's librdmacm1 is not installed (make deps)"
fi
check "librdmacm.so.1: SONAME librdmacm.so.1, needs libibverbs.so.1" bash -c \
	"objdump -p '$LIB' | grep -q 'SONAME *librdmacm.so.1\$' && objdump -p '$LIB' | grep -q 'NEEDED *libibverbs.so.1\$'"
need_cmds rdmacm rping ucmatose udaddy mckey ib_send_bw
out=$("$B/xhca" exec -- ldd "$(command -v rping)" 2>&1)
check "xhca exec: rping loads xhca's librdmacm.so.1 and libibverbs.so.1 ($(echo "$out" | awk '/rdmacm|ibverbs/ {print $3}' | tr '\n' ' '))" \
	bash -c 'grep -q "librdmacm.so.1 => $1/librdmacm.so.1" <<<"$2" &&
		 grep -q "libibverbs.so.1 => $1/libibverbs.so.1" <<<"$2"' _ "$B/verbs" "$out"
out=$("$B/xhca" exec -- ldd "$(command -v ib_send_bw)" 2>&1)
check "xhca exec: perftest loads xhca's librdmacm.so.1" grep -q "librdmacm.so.1 => $B/verbs/" <<<"$out"

# ---- two xhca hosts ------------------------------------------------------------------
MID_MTU=4200 two_hosts rdmacm 256
links_up

# bound NS PS PORT: a program of namespace NS holds PORT of port space PS
# (hex) in xhca's librdmacm (its reservation, an abstract unix socket); a
# moment more for the listen that follows the bind.
bound() { ip netns exec "$1" grep -q "@xhca-rdmacm:$2:$3:" /proc/net/unix && sleep 0.2; }

# Without xhcad's CM every case below would only time out: say so once.
out=$(xb timeout 10 rping -c -a "$IP_A" -p 9 -C 1 2>&1)
if grep -q "Operation not supported" <<<"$out"; then
	fail "rdmacm: xhcad has no connection manager (the XHCA_CTL_CM_* requests are unknown to it: '$(echo "$out" | head -n 1)'); rping, perftest -R, ucmatose, udaddy, mckey and xhca-rdmacmtest need it"
	t_done
fi

# pair NAME SECS PS PORT 'SERVER' 'CLIENT': SERVER on A, CLIENT on B once
# the server holds its port (exec_pair).
pair() { exec_pair "$1" "$2" "bound $NS_A $3 $4" "$5" "$6"; }

# rping_pair NAME PORT COUNT ARGS...: rping both ends, the client's every
# ping printed (-v) and verified (-V) by both.
rping_pair() {
	local name=$1 port=$2 n=$3 addr=${RPING_ADDR:-$IP_A}
	shift 3
	pair "$name" 60 0106 "$port" "rping -s -a $addr -p $port -C $n -V $*" \
		"rping -c -a $addr -p $port -C $n -v -V $*" || return
	check "$name: $n pings, each verified ($(grep -c 'ping data' "$tmp/$name.cli") printed)" \
		test "$(grep -c 'ping data: rdma-ping-' "$tmp/$name.cli")" = "$n"
}

# ---- a program of the tests' own: bind rules, options, the synchronous API ---------
# an interface of A that no xhcad serves
IF_N=xn$(($$ % 100000))
ip link add "$IF_N" netns "$NS_A" type veth peer name "${IF_N}p" netns "$NS_M"
ip -n "$NS_A" addr add 10.91.0.1/24 dev "$IF_N"
ip -n "$NS_A" link set "$IF_N" up
xa "$B/xhca-rdmacmtest" local "$IP_A" "$IP_B" 10.91.0.1 >"$tmp/ct.local" 2>&1
prog_checks "xhca-rdmacmtest local (bind rules, a non-blocking channel, options, route, QP attributes)" \
	"$tmp/ct.local" $?
xa timeout 60 "$B/xhca-rdmacmtest" server "$IP_A" >"$tmp/ct.srv" 2>&1 &
cpid=$!
for _ in $(seq 100); do bound "$NS_A" 0106 7300 && break; sleep 0.05; done
xb timeout 60 "$B/xhca-rdmacmtest" client "$IP_A" >"$tmp/ct.cli" 2>&1
rc=$?
wait "$cpid"
prog_checks "xhca-rdmacmtest server (rdma_create_ep, rdma_get_request, private data, rdma_reject)" \
	"$tmp/ct.srv" $?
prog_checks "xhca-rdmacmtest client (synchronous connect, REP's and REJ's private data)" \
	"$tmp/ct.cli" "$rc"

# ---- rping --------------------------------------------------------------------------
rping_pair "rping -C 10" 7174 10
rping_pair "rping -C 50 -S 4096" 7175 50 -S 4096
rping_pair "rping -C 5 -S 65000 (16 packets a READ)" 7176 5 -S 65000
rping_pair "rping -C 10 -q (its own QP: rdma_init_qp_attr, rdma_establish)" 7177 10 -q
RPING_ADDR=$IP6_A rping_pair "rping -C 10 over IPv6" 7178 10
out=$(xb timeout 30 rping -c -a "$IP_A" -p 7180 -C 1 2>&1); rc=$?
check "rping to a port nobody listens on: REJECTED, exit $rc (not 0, not a timeout): $(echo "$out" | grep -m1 -i 'event\|error')" \
	bash -c '[ "$1" != 0 ] && [ "$1" != 124 ] && grep -q "RDMA_CM_EVENT_REJECTED" <<<"$2"' _ "$rc" "$out"

# ---- perftest -R -----------------------------------------------------------------------
# perf NAME PROG SIZE ARGS: the client's result line has the size and a
# positive figure (PS: the port space, default TCP's; UDP's for -c UD).
perf() {
	local name=$1 prog=$2 size=$3
	shift 3
	pair "$name" 90 "${PS:-0106}" 18515 "$prog -R -F -s $size $*" "$prog -R -F -s $size $* $IP_A" ||
		return
	check "$name: result line for $size bytes ($(awk -v s="$size" '$1 == s && NF >= 4 { print; exit }' "$tmp/$name.cli" | tr -s ' '))" \
		awk -v s="$size" '$1 == s && NF >= 4 && $3 + 0 > 0 { f = 1 } END { exit !f }' \
		"$tmp/$name.cli"
}
perf "ib_send_bw -R" ib_send_bw 4096 -n 500
perf "ib_write_bw -R" ib_write_bw 65536 -n 500
perf "ib_read_lat -R" ib_read_lat 64 -n 300
perf "ib_send_bw -R -q 4 (four QPs, four connections)" ib_send_bw 1024 -n 500 -q 4
PS=0111 perf "ib_send_bw -R -c UD (SIDR)" ib_send_bw 2048 -n 500 -c UD

# ---- ucmatose, udaddy --------------------------------------------------------------------
pair "ucmatose" 60 0106 7471 "ucmatose -b $IP_A -C 20" "ucmatose -s $IP_A -C 20" &&
	check "ucmatose: both ends complete ($(grep -h 'test complete' "$tmp/ucmatose.srv" "$tmp/ucmatose.cli" | wc -l) of 2)" \
		test "$(grep -h 'test complete' "$tmp/ucmatose.srv" "$tmp/ucmatose.cli" | wc -l)" = 2
pair "ucmatose -c 4" 60 0106 7471 "ucmatose -b $IP_A -c 4 -C 10 -S 1000" \
	"ucmatose -s $IP_A -c 4 -C 10 -S 1000" &&
	check "ucmatose -c 4 -S 1000 (four connections on one channel): both ends complete" \
		test "$(grep -h 'test complete' "$tmp/ucmatose -c 4.srv" "$tmp/ucmatose -c 4.cli" | wc -l)" = 2
pair "udaddy (UD, SIDR)" 60 0111 7174 "udaddy -b $IP_A -C 20" "udaddy -s $IP_A -C 20" &&
	check "udaddy: both ends complete" \
		test "$(grep -h 'test complete' "$tmp/udaddy (UD, SIDR).srv" "$tmp/udaddy (UD, SIDR).cli" | wc -l)" = 2

# mckey: a UD id each, joined to 239.1.1.1 (xhca's multicast groups); the
# sender's messages reach the receiver.
pair "mckey (multicast)" 60 0111 '[0-9]*' "mckey -m 239.1.1.1 -b $IP_A -C 20" \
	"mckey -m 239.1.1.1 -b $IP_B -s -C 20" &&
	check "mckey: the receiver got its 20 messages" \
		grep -q 'test complete' "$tmp/mckey (multicast).srv"

# ---- nothing left behind --------------------------------------------------------------------
# (xhcad's own QP1, the CM's, stays: only the programs' QPs count; the CM's
# ids go once their connections' timewait is over)
left() {
	echo "$("$B/xhca" -i "$1" -j status | json_get 'd["sessions"], d["mrs_in_use"], d.get("cm_ids", 0)')" \
		"$("$B/xhca" -i "$1" -j qp show | json_get 'len([q for q in d["qps"] if q["owner"] > 0])')"
}
for side in "$IF_A" "$IF_B"; do
	for _ in $(seq 50); do [ "$(left "$side")" = "0 0 0 0" ] && break; sleep 0.1; done
	check "xhcad on $side: no session, region, CM id or program's QP left after the programs ($(left "$side"))" \
		test "$(left "$side")" = "0 0 0 0"
done
t_done
