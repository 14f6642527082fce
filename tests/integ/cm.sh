#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# xhcad's connection manager between two xhca hosts (xhca-cmtest drives it
# as the rdma_cm library does): REQ, REP, RTU on the wire (tshark dissects
# them as the InfiniBand CM's), a SEND over the connection, DREQ and DREP;
# a rejected request (REJ 28 with the server's private data); a port nobody
# listens on (REJ 8, invalid service ID); a peer that never answers (the
# REQ sent again, then UNREACHABLE); lost MADs under 40% loss in the middle
# (sent again, connected all the same); a client that dies connected (its
# peer DISCONNECTED all the same).
. "$(dirname "$0")/../lib.sh"
need_root integ/cm
two_hosts cm 64
PORT=7471
cmt() { "$B/xhca-cmtest" "$@"; }
srv() { # NAME accept|reject: a server on B in the background
	in_b "$B/xhca-cmtest" server "$IF_B" $PORT "$2" >"$tmp/$1.srv" 2>&1 &
	SRV=$!
	for _ in $(seq 100); do grep -q '^# ready' "$tmp/$1.srv" && return 0; sleep 0.05; done
	return 1
}
show() { sed 's/^/    /' "$1"; }
cm_stat() { "$B/xhca" -i "$1" -j status | json_get "d[\"cm\"][\"$2\"]"; }

tshark_roce_init
cap_start "$NS_M" "$MA" "$tmp/cm.pcap" "udp port 4791"
srv ok accept || fail "cm: the server did not start"
out=$(in_a "$B/xhca-cmtest" client "$IF_A" "$IP_A" "$IP_B" $PORT established 2>&1)
rc=$?
wait "$SRV"
src=$?
cap_stop
echo "$out" | sed 's/^/    /'
show "$tmp/ok.srv"
check_eq "cm: connect, accept, a SEND, disconnect: both sides as expected" "$rc $src" "0 0"
msgs=$("${TSHARK_ROCE[@]}" -r "$tmp/cm.pcap" -Y "infiniband.mad.mgmtclass == 0x07" -T fields \
	-e infiniband.mad.attributeid 2>/dev/null | tr '\n' ' ')
check_eq "cm: on the wire, as tshark dissects them: REQ, REP, RTU, DREQ, DREP" "$msgs" \
	"0x0010 0x0013 0x0014 0x0015 0x0016 "
check_eq "cm: tshark finds nothing malformed" "$("${TSHARK_ROCE[@]}" -r "$tmp/cm.pcap" -T fields \
	-e _ws.malformed 2>/dev/null | sort -u | tr -d '\n')" ""

# a client that dies connected: its session's end sends the DREQ
srv dead accept || fail "cm: the server did not start"
out=$(in_a "$B/xhca-cmtest" client "$IF_A" "$IP_A" "$IP_B" $PORT dies 2>&1)
rc=$?
wait "$SRV"
src=$?
show "$tmp/dead.srv"
check_eq "cm: a client gone while connected: the server gets DISCONNECTED, no id left on A" \
	"$rc $src $(cm_stat "$IF_A" ids)" "0 0 0"

srv rej reject || fail "cm: the server did not start"
out=$(in_a "$B/xhca-cmtest" client "$IF_A" "$IP_A" "$IP_B" $PORT rejected:28 2>&1)
rc=$?
wait "$SRV"
echo "$out" | sed 's/^/    /'
check_eq "cm: a rejected request: REJECTED, reason 28 (consumer), the server's private data" \
	"$rc $(grep -c "private data 'no thanks'" <<<"$out")" "0 1"

out=$(in_a "$B/xhca-cmtest" client "$IF_A" "$IP_A" "$IP_B" 7999 rejected:8 2>&1)
check "cm: a port nobody listens on: REJECTED, reason 8 (invalid service ID) ($out)" test $? = 0

# a peer that answers nothing: its xhcad stopped (the REQ goes to QP1 of a
# host where no xhcad runs: xhca_rx is gone too)
r0=$(cm_stat "$IF_A" resent)
XHCAD_PID=$XHCAD_PID_B xhcad_stop
t0=$(date +%s)
out=$(in_a "$B/xhca-cmtest" client "$IF_A" "$IP_A" "$IP_B" $PORT unreachable 2>&1)
rc=$?
echo "$out" | sed 's/^/    /'
check "cm: no answer: the REQ sent again $(( $(cm_stat "$IF_A" resent) - r0 )) times, then UNREACHABLE ($(( $(date +%s) - t0 )) s)" \
	test $rc = 0 -a "$(( $(cm_stat "$IF_A" resent) - r0 ))" -ge 10
check "cm: xhcad B again" xhcad_start_b

# 40% loss in the middle: MADs lost are sent again
impair_start --drop 40 || fail "cm: impairment"
ok=0
for i in 1 2 3; do
	srv loss$i accept || break
	in_a "$B/xhca-cmtest" client "$IF_A" "$IP_A" "$IP_B" $PORT established >"$tmp/loss$i.cli" 2>&1 &&
		ok=$((ok + 1))
	wait "$SRV"
done
impair_stop
check_eq "cm: under 40% loss, three connections made anyway (MADs sent again: $(cm_stat "$IF_A" resent) + $(cm_stat "$IF_B" resent))" \
	"$ok" 3
t_done
