#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The proxy QP (US 9,069,633), end to end: xhca-recv --proxy is the
# application (a proxy QP on a proxy CQ, a memory region), xhca-gen the
# requester, `xhca filter` and `xhca proxy` the operator. Filters (size
# threshold at its boundary, opcode, value/mask with invert, multi-packet
# messages), the lock service and its decline, READ and ATOMIC executed by
# the proxy (responses checked on the wire), the load limit, the gap
# timeout, proxy off with requests in flight; completions always in order.
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/proxy
topo_setup || { fail "proxy: topology"; t_done; }
tmp=$(mktemp -d)
APP_DIR=$tmp
XHCAD_LOG=$tmp/xhcad.log
CAP=
trap 'kill $CAP 2>/dev/null; apps_kill; topo_cleanup; rm -rf "$tmp"' EXIT

check "proxy: xhcad starts" xhcad_start --proxy-limit 8 --proxy-timeout-ms 20000

px() { xhca -j proxy show | json_get "d[\"$1\"]"; }
host_of() { xhca -j stats | json_get "d[\"host\"][\"$1\"][\"frames\"]"; }
# start NAME [xhca-recv options]: a proxy QP application; QPN, RK (its
# region's R_Key) and VA (the region's address) of the last one started.
start() {
	local name=$1 line
	shift
	app "$name" "$B/xhca-recv" -i "$IF_A" --type rc --local-ip "$IP_A" --remote-ip "$IP_B" \
		--mr 65536 -j --dump 64 --timeout 120 "$@"
	ready "$name" >/dev/null || return 1
	line=$(grep '"ready"' "$APP_DIR/$name")
	QPN=$(echo "$line" | json_get 'd["qpn"]')
	RK=$(echo "$line" | json_get 'd.get("rkey", 0)')
	VA=$(echo "$line" | json_get 'd.get("iova", 0)')
}
# cqes NAME: the completions so far, "|" between them: OPCODE[:RESULT|:TEXT]
# (257: the proxy's, with the lock service's result; 256: a WRITE landed;
# 128: a SEND, with its payload as text), or sSTATUS for an error.
# cqes_from NAME K: from the K-th on.
cqes() {
	"$SCAPY_PY" - "$APP_DIR/$1" <<'PY'
import json, sys
out = []
for l in open(sys.argv[1]):
    d = json.loads(l)
    if "wr_id" not in d:
        continue
    if d["status"]:
        out.append("s%d" % d["status"])
    elif d["opcode"] == 257:
        out.append("257:%d" % d["result"])
    elif d["opcode"] == 128:
        out.append("128:" + bytes.fromhex(d.get("data", "")).decode(errors="replace"))
    else:
        out.append(str(d["opcode"]))
print("|".join(out))
PY
}
cqes_from() { cqes "$1" | cut -d'|' -f"$2"-; }
ncqes() { grep -c '"wr_id"' "$APP_DIR/$1"; }
# wait_cqes NAME N: until NAME has N completions (5 s at most).
wait_cqes() {
	for _ in $(seq 100); do [ "$(ncqes "$1")" -ge "$2" ] && return 0; sleep 0.05; done
	return 1
}
send() { gen --op rc-send-only --qpn "$QPN" --psn "$1" --payload "text:$2"; }
mr_hex() { xhca mr read "$RK" --offset "$1" --len "$2" --out - | od -An -tx1 -v | tr -d ' \n'; }
u64le() { xhca mr read "$RK" --offset "$1" --len 8 --out - | od -An -tu8 | tr -d ' '; }
u64() { printf %u "$(($1))"; }

# --- bad input ---------------------------------------------------------------------
out=$(in_a "$B/xhca-recv" -i "$IF_A" --type rc --local-ip "$IP_A" --remote-ip "$IP_B" \
	--proxy-qp -j 2>&1)
check "proxy: a proxy QP on a CQ that is not a proxy CQ is refused" \
	grep -q "a proxy QP needs a proxy CQ" <<<"$out"
check_eq "proxy: ... and no QP is left (QP1 is the CM's)" "$(xhca -j status | json_get 'd["qps_in_use"]')" 1
err=$(xhca qp create --type rc --proxy on 2>&1)
check "proxy: xhca qp create --proxy on with no CQ: refused" grep -q "needs a proxy CQ" <<<"$err"
PCQ=$(xhca -j cq create --depth 16 --proxy | json_get 'd["cq"]')
NCQ=$(xhca -j cq create --depth 16 | json_get 'd["cq"]')
err=$(xhca qp create --type rc --cq "$NCQ" --proxy on 2>&1)
check "proxy: a proxy QP on the CLI's ordinary CQ: refused" grep -q "CQ $NCQ is not one" <<<"$err"
xhca cq create --depth 3 >/dev/null 2>&1
check_eq "proxy: cq create --depth 3: a usage error" "$?" 2
xhca qp create --type rc --rq-depth 8 >/dev/null 2>&1
check_eq "proxy: qp create --rq-depth without --cq: a usage error" "$?" 2
xhca qp create --type rc --cq "$PCQ" --buf-size 2000000 >/dev/null 2>&1
check_eq "proxy: qp create --buf-size 2000000: a usage error" "$?" 2
err=$(xhca qp create --type rc --cq "$PCQ" --rq-depth 65536 2>&1); rc=$?
check "proxy: 65536 receive buffers of 4 KiB for a CLI QP: refused by xhcad (64 MiB at most)" \
	test $rc = 1 -a -n "$(grep "64 MiB in all" <<<"$err")"
err=$(xhca cq poll 99 2>&1); rc=$?
check "proxy: cq poll of no CQ: exit 1, a clear message" \
	test $rc = 1 -a -n "$(grep 'no CQ 99' <<<"$err")"
check_eq "proxy: ... and no QP was made by any of that" "$(xhca -j status | json_get 'd["qps_in_use"]')" 1
CLIQP=$(qp_up rc)
err=$(xhca qp modify "$CLIQP" --proxy on 2>&1)
check "proxy: --proxy on for a QP whose CQ is no proxy CQ: refused" \
	grep -q "cannot be a proxy QP" <<<"$err"
err=$(xhca filter add "$CLIQP" --op send 2>&1)
check "proxy: a filter on a QP that is not a proxy QP: refused" grep -q "is not a proxy QP" <<<"$err"
err=$(xhca filter del 999 2>&1); rc=$?
check "proxy: deleting an unknown filter: exit 1, a clear message" \
	test $rc = 1 -a -n "$(grep 'no filter 999' <<<"$err")"
for bad in "--op" "--op jump" "--op send --size-below 5 --size-above 9" "--op send --invert" \
	"--op read --va 9-9" "--op send --match zz" "--op send --match 00112233445566778899aabbccddeeff00"; do
	xhca filter add "$CLIQP" $bad >/dev/null 2>&1
	check_eq "proxy: filter add $bad: a usage error (exit 2)" "$?" 2
done
in_a "$B/xhcad" "$IF_A" --proxy-limit 1 >/dev/null 2>&1
check_eq "proxy: xhcad --proxy-limit 1: a usage error" "$?" 2
in_a "$B/xhcad" "$IF_A" --proxy-timeout-ms x >/dev/null 2>&1
check_eq "proxy: xhcad --proxy-timeout-ms x: a usage error" "$?" 2
check_eq "proxy: no filter exists after all that" "$(xhca -j filter show | json_get 'len(d["filters"])')" 0

# --- from the CLI alone: a proxy CQ, a proxy QP on it, its completions polled ---------------
CQP=$(xhca -j qp create --type rc --cq "$PCQ" --rq-depth 8 --proxy on | json_get 'd["qpn"]')
xhca qp modify "$CQP" --state init >/dev/null
xhca qp modify "$CQP" --state rtr --local-ip "$IP_A" --remote-ip "$IP_B" >/dev/null
CR=$(xhca -j mr reg --len 8192 | json_get 'd["rkey"]')
xhca filter add "$CQP" --op send --match text:LOCK >/dev/null
cap_start "$NS_B" "$IF_B" "$tmp/ack.pcap" "udp port 4791 and src host $IP_A"
gen --op rc-send-only --qpn "$CQP" --psn 0 --payload "text:LOCK cli1 ops" --ackreq
gen --op rc-rdma-write-only --qpn "$CQP" --psn 1 --va 0 --rkey "$CR" --size 100
gen --op rc-send-only --qpn "$CQP" --psn 2 --payload "text:hi"
cap_stop
check_eq "proxy: CLI: the SEND the lock service took is ACKed (PSN 0, MSN 1), ICRC valid" \
	"$("$SCAPY_PY" "$XHCA_TOP/tests/roce_resp.py" "$tmp/ack.pcap" | awk '{print $1, $3, $4, $6}')" \
	"0x11 0 1f000001 True"
check_eq "proxy: CLI: the proxy counts that ACK" "$(px acks)" 1
check_eq "proxy: CLI: cq poll: the lock's answer, the WRITE, the SEND with its bytes, in order" \
	"$(xhca -j cq poll "$PCQ" --dump 8 | json_get '[(c["opcode"], c.get("result"), c.get("data")) for c in d["completions"]]')" \
	"[(257, 1, None), (256, None, None), (128, None, '6869')]"
# a duplicate and a gap's first packet complete nothing: the sequence of
# completions goes on with the next message, none lost or flushed
gen --op rc-send-only --qpn "$CQP" --psn 2 --payload "text:hi"
gen --op rc-send-only --qpn "$CQP" --psn 5 --payload "text:gap"
gen --op rc-send-only --qpn "$CQP" --psn 3 --payload "text:yo"
# (the proxy releases it in its turn: waited for, up to 3 s, not a fixed
# 0.3 s that a loaded machine once missed; then nothing more may come)
cli_wc() { xhca -j cq poll "$PCQ" --dump 8 |
	json_get '[(c["opcode"], c["status"], c.get("data")) for c in d["completions"]]'; }
for _ in $(seq 30); do got=$(cli_wc); [ "$got" != "[]" ] && break; sleep 0.1; done
sleep 0.3
got="$got $(cli_wc)"
check_eq "proxy: CLI: after a duplicate and a gap, the next SEND completes in order, nothing else" \
	"$got" "[(128, 0, '796f')] []"
err=$(xhca cq destroy "$PCQ" 2>&1)
check "proxy: CLI: a CQ with a QP on it is not destroyed" grep -q "still takes the completions" <<<"$err"
xhca qp destroy "$CQP" >/dev/null
xhca cq destroy "$PCQ" >/dev/null && xhca cq destroy "$NCQ" >/dev/null
check_eq "proxy: CLI: QP and CQs destroyed, none left" \
	"$(xhca -j cq show | json_get 'len(d["cqs"])') $(xhca -j status | json_get 'd["qps_in_use"]')" "0 2"

# --- the patent's example: a lock offloaded, then a WRITE on the normal path --------
start A --proxy
check_eq "proxy: the application's QP is a proxy QP on a proxy CQ" \
	"$(xhca -j qp show "$QPN" | json_get 'd["qps"][0]["proxy"], d["qps"][0]["proxy_cq"]')" "True True"
F1=$(xhca -j filter add "$QPN" --op send --match text:LOCK | json_get 'd["id"]')
F1U=$(xhca -j filter add "$QPN" --op send --match text:UNLOCK | json_get 'd["id"]')
# criteria xhcad refuses (the CLI cannot tell): exit 1, the reason, nothing added
for c in "--op send --rkey 5|carry no R_Key" "--op send --src-qpn 5|for UD QPs" \
	"--op send --match text:Z --handler none|share one handler"; do
	err=$(xhca filter add "$QPN" ${c%%|*} 2>&1); rc=$?
	check "proxy: filter add ${c%%|*}: refused by xhcad (${c#*|})" \
		test $rc = 1 -a -n "$(grep -- "${c#*|}" <<<"$err")"
done
check_eq "proxy: ... the QP has its two filters only" \
	"$(xhca -j filter show "$QPN" | json_get 'len(d["filters"])')" 2
ACQ=$(xhca -j qp show "$QPN" | json_get 'd["qps"][0]["cq"]')
err=$(xhca cq poll "$ACQ" 2>&1); rc=$?
check "proxy: the CLI does not poll an application's CQ" \
	test $rc = 1 -a -n "$(grep "is an application's" <<<"$err")"
err=$(xhca qp create --type rc --cq "$ACQ" 2>&1); rc=$?
check "proxy: nor makes its QPs on one" test $rc = 1 -a -n "$(grep "of the CLI's" <<<"$err")"
check "proxy: filter add prints the new filter's id" test "$F1" -ge 1
send 0 "LOCK db1 alice"
wait_cqes A 1
check_eq "proxy: LOCK db1 alice: granted by the proxy (a completion of its own, result 1)" \
	"$(cqes A)" "257:1"
rec0=$(px records)
send 1 "LOCK db1 bob 3000"            # waits for alice's lock
gen --op rc-rdma-write-only --qpn "$QPN" --psn 2 --va "$VA" --rkey "$RK" --size 100
send 3 "hello"
sleep 0.3
check_eq "proxy: bob's lock waits; the WRITE and SEND after it are held back, in order" \
	"$(cqes A)" "257:1"
check_eq "proxy: ... though the WRITE has landed (xhca_rx placed it)" "$(($(px records) - rec0))" 1
send 4 "UNLOCK db1 alice"
wait_cqes A 5
check_eq "proxy: UNLOCK grants bob's lock: then the WRITE's completion, the SEND, the UNLOCK" \
	"$(cqes A)" "257:1|257:1|256|128:hello|257:3"
# a decline: LOCKALL with one of its locks taken gives back what it took and
# goes to the application through the normal path, in its place
send 5 "LOCK x carol"
send 6 "m1"
send 7 "LOCKALL y,x dave"
send 8 "m2"
wait_cqes A 9
check_eq "proxy: LOCKALL y,x (x taken) is declined: to the application, still in order" \
	"$(cqes_from A 6)" "257:1|128:m1|128:LOCKALL y,x dave|128:m2"
check_eq "proxy: ... and y, which it had taken, is free again (undone)" \
	"$(px lock_undone) $(px declined)" "1 1"
send 9 "LOCK y erin"
wait_cqes A 10
check_eq "proxy: LOCK y by another owner is granted" "$(cqes_from A 10)" "257:1"
# a declined message comes back while a multi-packet SEND is being placed: it
# waits for that message's end, and its completion still comes first
xhca proxy pause >/dev/null
send 10 "LOCKALL q,x zed"
gen --op rc-send-first --qpn "$QPN" --psn 11 --payload "text:F$(printf '%01023d' 0)"
sleep 0.2
xhca proxy resume >/dev/null
sleep 0.3
check_eq "proxy: the declined message waits while the next one is half placed" "$(ncqes A)" 10
gen --op rc-send-last --qpn "$QPN" --psn 12 --payload "text:END"
wait_cqes A 12
check_eq "proxy: ... then both, the declined one first, each whole in its own buffer" \
	"$(cqes_from A 11 | cut -c1-30) $(tail -n 1 "$APP_DIR/A" | json_get 'd["byte_len"]')" \
	"128:LOCKALL q,x zed|128:F00000 1027"
PSN_A=13

# --- filters: opcode, size threshold, value/mask, invert -----------------------------
gen --op rc-rdma-write-only --qpn "$QPN" --psn $PSN_A --msg-len 8192 --mtu 1024 --va "$VA" \
	--rkey "$RK" --pattern 5
PSN_A=$((PSN_A + 8))
wait_cqes A 13
xhca filter del "$F1" >/dev/null
xhca filter del "$F1U" >/dev/null
# RP: which path each READ of 999, 1000, 1001 bytes took: P (the proxy) or N
# (normal). (Not in a subshell: PSN_A moves on.)
read_paths() {
	local len r0
	RP=
	for len in 999 1000 1001; do
		r0=$(px reads)
		gen --op rc-read-req --qpn "$QPN" --psn $PSN_A --va "$VA" --rkey "$RK" --reth-len $len
		PSN_A=$((PSN_A + (len + 1023) / 1024))
		for _ in $(seq 20); do [ "$(px reads)" != "$r0" ] && break; sleep 0.01; done
		RP="$RP$([ "$(px reads)" != "$r0" ] && echo P || echo N)"
	done
}
for c in "above NPP 1" "below PNN 2"; do
	set -- $c
	F2=$(xhca -j filter add "$QPN" --op read --size-$1 1000 | json_get 'd["id"]')
	n0=$(host_of responded)
	read_paths
	check_eq "proxy: --size-$1 1000: READs of 999, 1000, 1001 bytes (P: proxy, N: normal)" \
		"$RP $(($(host_of responded) - n0))" "$2 $3"
	xhca filter del "$F2" >/dev/null
done
F3=$(xhca -j filter add "$QPN" --op fetch-add | json_get 'd["id"]')
a0=$(px atomics) n0=$(host_of responded)
gen --op rc-cmp-swap --qpn "$QPN" --psn $PSN_A --va $((VA + 64)) --rkey "$RK" --compare 0 --swap-add 1
gen --op rc-fetch-add --qpn "$QPN" --psn $((PSN_A + 1)) --va $((VA + 64)) --rkey "$RK" --swap-add 1
PSN_A=$((PSN_A + 2))
sleep 0.3
check_eq "proxy: --op fetch-add: the FETCH_ADD offloaded, the CMP_SWAP not" \
	"$(($(px atomics) - a0)) $(($(host_of responded) - n0))" "1 1"
xhca filter del "$F3" >/dev/null
# value/mask: 'K' (0x4b) and 'k' (0x6b) differ in bit 5, which the mask ignores
F4=$(xhca -j filter add "$QPN" --op send --match 4c4f434b/00000020 | json_get 'd["id"]')
s0=$(px sends) d0=$(px declined)
send $PSN_A "LOCk z frank"; send $((PSN_A + 1)) "LOCK z gina"; send $((PSN_A + 2)) "LOCX z hal"
PSN_A=$((PSN_A + 3))
wait_cqes A 16
check_eq "proxy: --match 4c4f434b/00000020: LOCk and LOCK offloaded, LOCX not" \
	"$(($(px sends) - s0)) $(cqes_from A 14)" "2 128:LOCk z frank|257:1|128:LOCX z hal"
check_eq "proxy: ... LOCk is no request the lock service knows: declined, delivered in place" \
	"$(($(px declined) - d0))" 1
xhca filter del "$F4" >/dev/null
F4=$(xhca -j filter add "$QPN" --op send --match text:LOCK --invert --handler none | json_get 'd["id"]')
s0=$(px sends) d0=$(px declined)
send $PSN_A "LOCK z ivan"; send $((PSN_A + 1)) "plain"
PSN_A=$((PSN_A + 2))
wait_cqes A 18
check_eq "proxy: --invert: 'plain' offloaded (and declined: handler none), LOCK not" \
	"$(($(px sends) - s0)) $(($(px declined) - d0)) $(cqes_from A 17)" \
	"1 1 128:LOCK z ivan|128:plain"
check_eq "proxy: filter show lists the QP's filter" \
	"$(xhca -j filter show "$QPN" | json_get '[(f["id"], f["ops"], f["handler"]) for f in d["filters"]]')" \
	"[($F4, 'send', 'none')]"
xhca filter del "$F4" >/dev/null

# multi-packet SENDs follow their first packet's decision
F5=$(xhca -j filter add "$QPN" --op send --handler none | json_get 'd["id"]')
f0=$(px frames)
gen --op rc-send-only --qpn "$QPN" --psn $PSN_A --msg-len 2500 --mtu 1024
PSN_A=$((PSN_A + 3))
wait_cqes A 19
check_eq "proxy: a 3-packet SEND offloaded whole: 3 frames to the proxy, declined, delivered" \
	"$(($(px frames) - f0)) $(tail -n 1 "$APP_DIR/A" | json_get 'd["byte_len"]')" "3 2500"
xhca filter del "$F5" >/dev/null
F5=$(xhca -j filter add "$QPN" --op send --size-below 4000 | json_get 'd["id"]')
f0=$(px frames)
gen --op rc-send-only --qpn "$QPN" --psn $PSN_A --msg-len 2500 --mtu 1024
PSN_A=$((PSN_A + 3))
wait_cqes A 20
check_eq "proxy: --size-below: a multi-packet SEND's size is unknown at its FIRST: not offloaded" \
	"$(($(px frames) - f0))" 0
xhca filter del "$F5" >/dev/null
F5=$(xhca -j filter add "$QPN" --op send --match text:LOCK --handler none | json_get 'd["id"]')
f0=$(px frames)
gen --op rc-send-first --qpn "$QPN" --psn $PSN_A --payload "text:LOCK$(printf '%01020d' 0)"
xhca qp modify "$QPN" --proxy off >/dev/null
gen --op rc-send-middle --qpn "$QPN" --psn $((PSN_A + 1)) --size 1024
gen --op rc-send-last --qpn "$QPN" --psn $((PSN_A + 2)) --size 10
PSN_A=$((PSN_A + 3))
wait_cqes A 21
check_eq "proxy: proxy off between FIRST and LAST: the message still goes whole to the proxy" \
	"$(($(px frames) - f0)) $(tail -n 1 "$APP_DIR/A" | json_get 'd["byte_len"]')" "3 2058"
xhca qp modify "$QPN" --proxy on >/dev/null
xhca filter del "$F5" >/dev/null

# --- READ and ATOMIC executed by the proxy, on the wire ---------------------------------
F6=$(xhca -j filter add "$QPN" --op read,cmp-swap,fetch-add | json_get 'd["id"]')
cap_start "$NS_B" "$IF_B" "$tmp/cap.pcap" "udp port 4791 and src host $IP_A"
want=
p0=$PSN_A
for c in 0:1 100:1024 2000:1025 3000:5000; do
	off=${c%%:*} len=${c##*:}
	gen --op rc-read-req --qpn "$QPN" --psn $PSN_A --va $((VA + off)) --rkey "$RK" --reth-len "$len"
	PSN_A=$((PSN_A + (len + 1023) / 1024))
	want="$want$(mr_hex "$off" "$len")"
done
v0=$(u64le 8)
atomic_trio "$QPN" "$PSN_A" $((VA + 8)) "$RK" "$v0"
PSN_A=$((PSN_A + 3))
cap_stop
"$SCAPY_PY" "$XHCA_TOP/tests/roce_resp.py" "$tmp/cap.pcap" >"$tmp/resp"
check_eq "proxy: READ responses by MTU, PSNs from each request's on" \
	"$(awk '$1 != "0x12" {print $1 ":" $3}' "$tmp/resp" | tr '\n' ' ')" \
	"0x10:$p0 0x10:$((p0 + 1)) 0xd:$((p0 + 2)) 0xf:$((p0 + 3)) 0xd:$((p0 + 4)) 0xe:$((p0 + 5)) 0xe:$((p0 + 6)) 0xe:$((p0 + 7)) 0xf:$((p0 + 8)) "
check_eq "proxy: READ data of 1, 1024, 1025 and 5000 bytes: the region's bytes" \
	"$(awk '$1 != "0x12" {printf "%s", $5}' "$tmp/resp")" "$want"
orig() { awk '$1 == "0x12"' "$tmp/resp" | sed -n "$1p" | "$SCAPY_PY" -c 'import sys; print(int(sys.stdin.read().split()[4], 16))'; }
check_eq "proxy: FETCH_ADD and CMP_SWAP: original values, the swap only when equal" \
	"$(orig 1) $(orig 2) $(orig 3) $(u64le 8)" \
	"$v0 $(u64 "v0 + 5") $((0x1122334455667788)) $((0x1122334455667788))"
check_eq "proxy: every response's ICRC is valid" "$(awk '{print $6}' "$tmp/resp" | sort -u)" True
check_eq "proxy: tshark dissects them, nothing malformed" \
	"$(tshark -n -r "$tmp/cap.pcap" -d udp.port==4791,infiniband -T fields -e _ws.malformed 2>/dev/null | sort -u | tr -d '\n')" ""
check_eq "proxy: the READ/ATOMICs left no completion (no-ops in the sequence)" "$(ncqes A)" 21

# Two senders at once on one word: QP 1's fetch-and-adds offloaded (the proxy
# thread executes them), QP 2's on the normal path (the main thread): the
# exact sum, the two threads' ATOMICs atomic against each other.
app_fed P2 7 "$B/xhca-apptest" atomic2 "$IF_A" "$IP_A" "$IP_B"
ready P2 >/dev/null
line=$(grep '"ready"' "$APP_DIR/P2")
Q1=$(echo "$line" | json_get 'd["qpn"]') Q2=$(echo "$line" | json_get 'd["qpn2"]')
R2=$(echo "$line" | json_get 'd["rkey"]') V2=$(echo "$line" | json_get 'd["iova"]')
xhca filter add "$Q1" --op fetch-add >/dev/null
a0=$(px atomics) n0=$(host_of responded) h0=$(px no_offload)
gen --op rc-fetch-add --qpn "$Q1" --psn 0 --va $((V2 + 256)) --rkey "$R2" --swap-add 3 \
	--count 1000 --rate 2000 &
g1=$!
gen --op rc-fetch-add --qpn "$Q2" --psn 0 --va $((V2 + 256)) --rkey "$R2" --swap-add 1 \
	--count 1000 --rate 2000 &
g2=$!
wait $g1 $g2
word() { xhca mr read "$R2" --offset 256 --len 8 --out - | od -An -tu8 | tr -d ' '; }
for _ in $(seq 50); do [ "$(word)" = 4000 ] && break; sleep 0.1; done
check_eq "proxy: 1000 x +3 by the proxy and 1000 x +1 by the normal path at once: exact sum" \
	"$(word)" 4000
h=$(($(px no_offload) - h0))   # QP 1's the load limit (8) kept on the normal path
check_eq "proxy: ... QP 1's by the proxy (but for $h the load limit held back), QP 2's by the main thread" \
	"$(($(px atomics) - a0 + h)) $(($(host_of responded) - n0 - h))" "1000 1000"
# a misaligned FETCH_ADD on the QP whose ATOMICs are offloaded: xhca_rx
# refuses it before any offload, NAK invalid request, the QP to error
cap_start "$NS_B" "$IF_B" "$tmp/nak.pcap" "udp port 4791 and src host $IP_A"
gen --op rc-fetch-add --qpn "$Q1" --psn 1000 --va $((V2 + 260)) --rkey "$R2" --swap-add 1
for _ in $(seq 50); do [ "$(xhca -j status | json_get 'd["naks"]')" -ge 1 ] && break; sleep 0.05; done
cap_stop
check_eq "proxy: a misaligned ATOMIC on a proxy QP: NAK invalid request (0x61), ICRC valid" \
	"$("$SCAPY_PY" "$XHCA_TOP/tests/roce_resp.py" "$tmp/nak.pcap" | awk '{print $1, $3, substr($4, 1, 2), $6}')" \
	"0x11 1000 61 True"
check_eq "proxy: ... the QP in the error state, the word untouched" \
	"$(xhca -j qp show "$Q1" | json_get 'd["qps"][0]["state"]') $(word)" "err 4000"
exec 7>&-

# --- the load limit ---------------------------------------------------------------------
n0=$(px no_offload) o0=$(px offloaded) c0=$(px gate_closes)
vA=$(u64le 512)
xhca proxy pause >/dev/null
gen --op rc-fetch-add --qpn "$QPN" --psn $PSN_A --va $((VA + 512)) --rkey "$RK" --swap-add 1 \
	--count 20 --rate 2000
PSN_A=$((PSN_A + 20))
sleep 0.2
check_eq "proxy: paused, limit 8: 8 offloaded, then no offload mode: 12 on the normal path" \
	"$(($(px offloaded) - o0)) $(($(px no_offload) - n0)) $(($(px gate_closes) - c0)) $(px no_offload_mode)" \
	"8 12 1 True"
xhca proxy resume >/dev/null
for _ in $(seq 50); do [ "$(px backlog)" = 0 ] && break; sleep 0.05; done
check_eq "proxy: resumed: the backlog drains below the low mark, offloading again" \
	"$(px backlog) $(px no_offload_mode)" "0 False"
gen --op rc-fetch-add --qpn "$QPN" --psn $PSN_A --va $((VA + 512)) --rkey "$RK" --swap-add 1
PSN_A=$((PSN_A + 1))
sleep 0.2
check_eq "proxy: ... the next request is offloaded; every one executed once" \
	"$(($(px offloaded) - o0)) $(u64le 512)" "9 $(u64 "vA + 21")"
xhca filter del "$F6" >/dev/null

# --- proxy off with requests in flight: nothing lost, nothing reordered -----------------
n=$(ncqes A)
F7=$(xhca -j filter add "$QPN" --op send --match text:LOCK | json_get 'd["id"]')
xhca proxy pause >/dev/null
send $PSN_A "LOCK p1 kim"; send $((PSN_A + 1)) "m1"; send $((PSN_A + 2)) "LOCK p2 kim"
xhca qp modify "$QPN" --proxy off >/dev/null
send $((PSN_A + 3)) "m2"; send $((PSN_A + 4)) "LOCK p3 kim"; send $((PSN_A + 5)) "m3"
PSN_A=$((PSN_A + 6))
sleep 0.2
check_eq "proxy: paused: m1 and what follows wait behind the offloaded LOCK" "$(ncqes A)" "$n"
xhca proxy resume >/dev/null
wait_cqes A $((n + 6))
check_eq "proxy: proxy off, resumed: all six in order; the LOCK after off to the application" \
	"$(cqes_from A $((n + 1)))" "257:1|128:m1|257:1|128:m2|128:LOCK p3 kim|128:m3"
xhca qp modify "$QPN" --proxy on >/dev/null

# --- full filter table; an application that dies with requests at the proxy -------------
start D --proxy
for i in 1 2 3 4; do xhca filter add "$QPN" --op send --match "text:K$i" >/dev/null; done
err=$(xhca filter add "$QPN" --op send --match text:K5 2>&1); rc=$?
check "proxy: a fifth filter on a QP: refused (exit 1), the table is full" \
	test $rc = 1 -a -n "$(grep 'has 4 filters already' <<<"$err")"
check_eq "proxy: ... and the QP still has its four" \
	"$(xhca -j filter show "$QPN" | json_get 'len(d["filters"])')" 4
q0=$(px qps)
send 0 "K1 LOCK"; gen --op rc-send-only --qpn "$QPN" --psn 1 --payload "text:K2"
{ kill -9 "$PID_D"; wait "$PID_D"; } 2>/dev/null
for _ in $(seq 50); do [ "$(px qps)" -lt "$q0" ] && break; sleep 0.05; done
check_eq "proxy: the application killed: its QP leaves the proxy, its filters go" \
	"$(px qps) $(xhca -j filter show | json_get 'len([f for f in d["filters"] if f["qpn"] == '"$QPN"'])')" \
	"$((q0 - 1)) 0"
alive() { xhca status >/dev/null; }
check "proxy: xhcad serves on" alive

# --- a flood on a proxy CQ: losses on the way to xhcad are skipped, order kept ------------
# UD SENDs at full speed for a second: the sockets' rings overflow now and then
# (the kernel drops frames xhca_rx numbered); the reorderer skips what never
# comes once its window is full behind it, and releases the rest in order.
app U "$B/xhca-recv" -i "$IF_A" --type ud --qkey 0x99 --proxy-cq --check-psn --bufs 4096 \
	--cq-depth 8192 --buf-size 256 -q -j --timeout 2
QU=$(ready U)
l0=$(px lost)
in_b "$B/xhca-gen" -i "$IF_B" --dst-mac "$MAC_A" --src "$IP_B" --dst "$IP_A" --op ud-send-only \
	--qpn "$QU" --qkey 0x99 --size 64 --stamp --duration 1 >/dev/null
eval wait "\$PID_U"
sum=$(grep '"received"' "$APP_DIR/U")
check "proxy: flood: the application got its messages" test "$(echo "$sum" | json_get 'd["received"]')" -gt 1000
check_eq "proxy: flood: none out of order, no error completion" \
	"$(echo "$sum" | json_get 'd["out_of_order"], d["errors"]')" "0 0"
echo "proxy: flood: $(($(px lost) - l0)) messages lost on the way to xhcad, skipped" >&2

# --- multicast copies to a member on a proxy CQ are messages in its sequence -------------
app M "$B/xhca-recv" -i "$IF_A" --type ud --qkey 0x99 --proxy-cq --mcast 239.9.9.9 -j \
	--dump 8 --timeout 10 --count 4
QM=$(ready M)
l0=$(px late) x0=$(px lost)
for w in u1 m1 u2 m2; do
	if [ "${w#m}" != "$w" ]; then
		gen --op ud-send-only --qpn 0xffffff --dst 239.9.9.9 --qkey 0x99 --sqp 0x55 \
			--payload "text:$w"
	else
		gen --op ud-send-only --qpn "$QM" --qkey 0x99 --sqp 0x55 --payload "text:$w"
	fi
done
eval wait "\$PID_M"
check_eq "proxy: multicast and unicast to a proxy CQ's UD QP: each delivered, in order" \
	"$("$SCAPY_PY" -c 'import json,sys; print(" ".join(bytes.fromhex(json.loads(l)["data"]).decode() for l in open(sys.argv[1]) if "wr_id" in l))' "$APP_DIR/M") $(($(px late) - l0)) $(($(px lost) - x0))" \
	"u1 m1 u2 m2 0 0"

# --- a gap that lasts: an error completion in its place, the QP to error ------------------
kill -INT "$PID_A" 2>/dev/null
xhcad_stop

# --- a restart keeps the CLI's proxy CQ, its proxy QP and the QP's filter ---------------
xhcad_start --keep
KCQ=$(xhca -j cq create --depth 8 --proxy | json_get 'd["cq"]')
KQ=$(xhca -j qp create --type rc --cq "$KCQ" --rq-depth 4 --proxy on | json_get 'd["qpn"]')
xhca qp modify "$KQ" --state init >/dev/null
xhca qp modify "$KQ" --state rtr --local-ip "$IP_A" --remote-ip "$IP_B" >/dev/null
xhca filter add "$KQ" --op send --match text:LOCK >/dev/null
KR=$(xhca -j mr reg --len 8192 | json_get 'd["rkey"]')
QPN=$KQ
send 0 "before"
sleep 0.3
xhcad_stop TERM
# while no xhcad runs, xhca_rx places WRITEs into the pre-translated region
# itself and numbers them in the QP's completion sequence: the xhcad that
# takes over goes on from where the proxy had released (px_csn), not from
# xhca_rx's count, so they complete, in order, before what comes next
gen --op rc-rdma-write-only --qpn "$KQ" --psn 1 --va 0 --rkey "$KR" --size 100
gen --op rc-rdma-write-only --qpn "$KQ" --psn 2 --va 100 --rkey "$KR" --size 200
check "proxy: restart: xhcad starts again on the kept maps" xhcad_start
check_eq "proxy: restart: the proxy CQ, the proxy QP on it and its filter are back" \
	"$(xhca -j cq show | json_get '[(c["cq"], c["proxy"]) for c in d["cqs"]]') $(xhca -j qp show "$KQ" | json_get 'd["qps"][0]["proxy"], d["qps"][0]["cq"]') $(xhca -j filter show "$KQ" | json_get 'len(d["filters"])')" \
	"[($KCQ, True)] True $KCQ 1"
send 3 "LOCK k1 kept"; send 4 "after restart"
sleep 0.3
check_eq "proxy: restart: the completion before, the WRITEs placed while xhcad was down, then the requests after, in order" \
	"$(xhca -j cq poll "$KCQ" --dump 16 | json_get '[(c["opcode"], c.get("result"), c.get("byte_len"), c.get("data")) for c in d["completions"]]')" \
	"[(128, None, 6, '$(printf 'before' | od -An -tx1 | tr -d ' \n')'), (256, None, 100, None), (256, None, 200, None), (257, 1, 12, None), (128, None, 13, '$(printf 'after restart' | od -An -tx1 | tr -d ' \n')')]"
xhcad_stop
err=$(in_a "$B/xhcad" "$IF_A" --proxy-handler /nonexistent/h.so 2>&1); rc=$?
check "proxy: --proxy-handler of a file that is not there: xhcad exits 1, saying why" \
	test $rc = 1 -a -n "$(grep 'nonexistent/h.so' <<<"$err")"
err=$(in_a "$B/xhcad" "$IF_A" --proxy-handler "$B/xhca-recv" 2>&1); rc=$?
check "proxy: --proxy-handler of a file that is no handler library: refused too" test $rc = 1
check "proxy: xhcad starts again with --proxy-timeout-ms 300 and the counter handler" \
	xhcad_start --proxy-timeout-ms 300 --proxy-handler "$B/px_counter.so:100"

# --- an application's handler (include/xhca/proxy_handler.h): build/px_counter.so --------
start C --proxy
xhca filter add "$QPN" --op send --match text:ADD --handler counter >/dev/null
xhca filter add "$QPN" --op send --match text:GET --handler counter >/dev/null
check_eq "proxy: handler: the filters name it" \
	"$(xhca -j filter show "$QPN" | json_get '[f["handler"] for f in d["filters"]]')" \
	"['counter', 'counter']"
xhca filter add "$QPN" --op send --match text:X --handler nosuch >/dev/null 2>&1
check_eq "proxy: handler: an unknown one is a usage error" "$?" 2
send 0 "ADD 5"; send 1 "ADD 7"; send 2 "GET"; send 3 "ADD 500"; send 4 "hello"
wait_cqes C 5
check_eq "proxy: handler: results in order (value + 1), the one over its limit declined" \
	"$(cqes C)" "257:6|257:13|257:13|128:ADD 500|128:hello"
check_eq "proxy: handler: counted" "$(px handled) $(px declined)" "3 1"
kill -INT "$PID_C" 2>/dev/null
start G --proxy
xhca filter add "$QPN" --op send --match text:LOCK >/dev/null
send 0 "LOCK g1 lee"
send 1 "LOCK g1 max 5000"
send 2 "after"
wait_cqes G 3
check_eq "proxy: a lock wait longer than --proxy-timeout-ms: error completion, then the rest" \
	"$(cqes G | cut -d'|' -f1-3)" "257:1|s20|128:after"
check_eq "proxy: ... the gap is counted and the QP is in the error state" \
	"$(px gaps) $(xhca -j qp show "$QPN" | json_get 'd["qps"][0]["state"]')" "1 err"
check_eq "proxy: ... and its posted buffers are flushed after it" \
	"$(cqes_from G 4 | tr '|' '\n' | sort -u)" "s5"
check_eq "proxy: nothing was lost on the way" "$(px lost) $(px record_fail)" "0 0"
kill -INT "$PID_G" 2>/dev/null
t_done
