#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# xhcad's connection manager between two xhca hosts (xhca-cmtest drives it
# as the rdma_cm library does): REQ, REP, RTU on the wire (tshark dissects
# them as the InfiniBand CM's), a SEND over the connection, DREQ and DREP;
# a rejected request (REJ 28 with the server's private data); a port nobody
# listens on (REJ 8, invalid service ID); a peer that never answers (the
# REQ sent again, then UNREACHABLE); lost MADs under 25% loss in the middle
# (sent again, connected all the same); UD's SIDR_REQ and SIDR_REP
# (accepted, refused, nobody listening); either side gone mid-handshake; a
# client that dies connected (its
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
# QP1 is a UD QP: each MAD it sends has the next PSN (a peer that watches
# for a request sent twice, as rxe.sh does, sees none)
psns=$("${TSHARK_ROCE[@]}" -r "$tmp/cm.pcap" -Y "ip.src == $IP_A && infiniband.bth.destqp == 1" \
	-T fields -e infiniband.bth.psn 2>/dev/null | tr '\n' ' ')
check "cm: A's REQ, RTU and DREQ from QP1 with consecutive PSNs ($psns)" \
	awk -v p="$psns" 'BEGIN { n = split(p, a, " "); for (i = 2; i <= n; i++) if (a[i] != a[i - 1] + 1) exit 1; exit n != 3 }'

# a client that dies connected: its session's end sends the DREQ
srv dead accept || fail "cm: the server did not start"
out=$(in_a "$B/xhca-cmtest" client "$IF_A" "$IP_A" "$IP_B" $PORT dies 2>&1)
rc=$?
wait "$SRV"
src=$?
show "$tmp/dead.srv"
check_eq "cm: a client gone while connected: the server gets DISCONNECTED, no id left on A" \
	"$rc $src $(cm_stat "$IF_A" ids)" "0 0 0"

# a peer gone in the middle of the handshake: the server exits with the
# request unanswered (its xhcad sends REJ 28); the client exits before the
# answer (its xhcad sends REJ 4, timeout, as Linux does)
srv srvdies dies || fail "cm: the server did not start"
out=$(in_a "$B/xhca-cmtest" client "$IF_A" "$IP_A" "$IP_B" $PORT rejected:28 2>&1)
rc=$?
wait "$SRV"
echo "$out" | sed 's/^/    /'
check_eq "cm: the server gone before answering: the client REJECTED, reason 28; no id left on B" \
	"$rc $(cm_stat "$IF_B" ids)" "0 0"
srv late late || fail "cm: the server did not start"
out=$(in_a "$B/xhca-cmtest" client "$IF_A" "$IP_A" "$IP_B" $PORT gone 2>&1)
rc=$?
wait "$SRV"
src=$?
show "$tmp/late.srv"
check_eq "cm: the client gone before the answer: the server's request REJECTED, reason 4 (timeout)" \
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

# UD: SIDR_REQ and SIDR_REP (tshark dissects them), accepted, refused, no
# listener
udsrv() { # NAME accept|reject
	in_b "$B/xhca-cmtest" ud-server "$IF_B" $PORT "$2" >"$tmp/$1.srv" 2>&1 &
	SRV=$!
	for _ in $(seq 100); do grep -q '^# ready' "$tmp/$1.srv" && return 0; sleep 0.05; done
	return 1
}
cap_start "$NS_M" "$MA" "$tmp/sidr.pcap" "udp port 4791"
udsrv ud accept || fail "cm: the UD server did not start"
out=$(in_a "$B/xhca-cmtest" ud-client "$IF_A" "$IP_A" "$IP_B" $PORT established 2>&1)
rc=$?
wait "$SRV"
src=$?
cap_stop
echo "$out" | sed 's/^/    /'
show "$tmp/ud.srv"
check_eq "cm: UD: SIDR_REQ answered with the QP and Q_Key, a UD SEND to them received" \
	"$rc $src" "0 0"
check_eq "cm: UD: on the wire, as tshark dissects them: SIDR_REQ, SIDR_REP" \
	"$("${TSHARK_ROCE[@]}" -r "$tmp/sidr.pcap" -Y "infiniband.mad.mgmtclass == 0x07" -T fields \
		-e infiniband.mad.attributeid 2>/dev/null | tr '\n' ' ')" "0x0017 0x0018 "
udsrv udrej reject || fail "cm: the UD server did not start"
out=$(in_a "$B/xhca-cmtest" ud-client "$IF_A" "$IP_A" "$IP_B" $PORT rejected:2 2>&1)
rc=$?
wait "$SRV"
echo "$out" | sed 's/^/    /'
check_eq "cm: UD refused: REJECTED with SIDR status 2 (consumer), the server's private data" \
	"$rc $(grep -c "private data 'no thanks'" <<<"$out")" "0 1"
out=$(in_a "$B/xhca-cmtest" ud-client "$IF_A" "$IP_A" "$IP_B" 7999 rejected:1 2>&1)
check "cm: UD, a port nobody listens on: SIDR status 1 (service ID not supported) ($out)" \
	test $? = 0

# hostile MADs to B's QP1, built by scapy: each a counted drop, or the answer
# the IBA gives (a DREP, a REJ), and nothing else moves; B connects after
bsnap() { { "$B/xhca" -i "$IF_B" -j status; "$B/xhca" -i "$IF_B" -j stats; } >"$1"; }
bdelta() { # FILE: received sent dropped rejects ids drop_qkey bad_icrc, since FILE
	bsnap "$tmp/now"
	"$SCAPY_PY" - "$1" "$tmp/now" <<'PY'
import json, sys
def load(f):
    t = open(f).read()
    st, s2 = json.JSONDecoder().raw_decode(t)
    stats = json.loads(t[s2:])
    return st, stats
(o, os_), (n, ns) = load(sys.argv[1]), load(sys.argv[2])
v = [n["cm"][k] - o["cm"][k] for k in ("received", "sent", "dropped", "rejects")]
v += [n["cm"]["ids"], ns["reasons"]["drop_qkey"]["packets"] - os_["reasons"]["drop_qkey"]["packets"],
      n["responder"]["bad_icrc"] - o["responder"]["bad_icrc"]]
print(" ".join(map(str, v)))
PY
}
mad_case() { # CASE "received sent dropped rejects ids drop_qkey bad_icrc" WHAT
	bsnap "$tmp/before"
	in_a "$SCAPY_PY" "$XHCA_TOP/tests/cm_mad.py" "$IF_A" "$MAC_B" "$MAC_A" "$IP_B" "$IP_A" "$1" ||
		fail "cm: hostile $1: scapy"
	sleep 0.3
	check_eq "cm: hostile MAD, $3" "$(bdelta "$tmp/before")" "$2"
}
for c in short class version method base; do
	mad_case $c "1 0 1 0 0 0 0" "$c: dropped, counted"
done
for c in lap rep rtu rej mra drep sidr_rep; do
	mad_case $c "1 0 1 0 0 0 0" "$c for no connection: dropped, counted"
done
mad_case dreq "1 1 0 0 0 0 0" "DREQ for no connection: answered with a DREP (as Linux)"
mad_case req_bad_cma "1 1 0 1 0 0 0" "REQ, no rdma_cm header: REJ 28, no id"
mad_case req_other_dst "1 1 0 1 0 0 0" "REQ for another address: REJ 28, no id"
mad_case qkey "0 0 0 0 0 1 0" "a Q_Key not the GSI's: drop_qkey in xhca_rx"
mad_case icrc "0 0 0 0 0 0 1" "a wrong ICRC: dropped before the CM (bad_icrc)"
srv after accept || fail "cm: the server did not start"
out=$(in_a "$B/xhca-cmtest" client "$IF_A" "$IP_A" "$IP_B" $PORT established 2>&1)
rc=$?
wait "$SRV"
check_eq "cm: after the hostile MADs, a connection as before" "$rc $?" "0 0"

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

# 25% loss in the middle: MADs lost are sent again. (Each connection also
# carries an RC SEND with retry_count 7: at 40% loss both ways 8 tries all
# fail 2.8% of the time, RETRY_EXC_ERR as it should be; at 25%, 0.13%.)
impair_start --drop 25 || fail "cm: impairment"
ok=0
for i in 1 2 3; do
	srv loss$i accept || break
	if in_a "$B/xhca-cmtest" client "$IF_A" "$IP_A" "$IP_B" $PORT established >"$tmp/loss$i.cli" 2>&1; then
		ok=$((ok + 1))
	else
		sed 's/^/    /' "$tmp/loss$i.cli"
	fi
	wait "$SRV"
done
impair_stop
check_eq "cm: under 25% loss, three connections made anyway (MADs sent again: $(cm_stat "$IF_A" resent) + $(cm_stat "$IF_B" resent))" \
	"$ok" 3
t_done
