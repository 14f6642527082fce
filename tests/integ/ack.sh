#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The RC responder's reliability, as a requester sees it on the wire:
# ACKs at AckReq and coalesced (every --ack-every packets, WRITEs xhca_rx
# placed too) with the MSN and the credit count of the posted buffers; a
# duplicate SEND or WRITE re-ACKed at ePSN - 1; one PSN sequence NAK per
# gap; a duplicate READ answered again and a duplicate ATOMIC with its
# saved result, never executed twice; an RNR NAK with the QP's timer when
# no buffer is posted, the retry accepted once one is; a bad ICRC dropped
# and the packet received again; a SEND longer than its buffer NAKed as an
# invalid request, the QP to error. tshark dissects every response and
# scapy accepts every ICRC.
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/ack
topo_setup || { fail "ack: topology"; t_done; }
tmp=$(mktemp -d)
XHCAD_LOG=$tmp/xhcad.log
trap 'kill $CAP 2>/dev/null; topo_cleanup; rm -rf "$tmp"' EXIT
CAP=

check "ack: xhcad starts" xhcad_start
CQ=$(xhca -j cq create --depth 64 | json_get 'd["cq"]')
IOVA=$((0x20000))
R=$(xhca -j mr reg --len 65536 --iova $IOVA \
	--access local-write,remote-write,remote-read,remote-atomic | json_get 'd["rkey"]')
# xhcad posts 4 receive buffers of 256 bytes for the CLI's QP
QP=$(QP_CREATE_ARGS="--cq $CQ --rq-depth 4 --buf-size 256" qp_up rc --epsn 0 --action host \
	--dest-qpn 0x77 --mtu 1024)
xhca qp modify "$QP" --state rts >/dev/null
check_eq "ack: an RC QP's defaults: an ACK every 16 packets, RNR timer 14" \
	"$(xhca -j qp show "$QP" | json_get '(d["qps"][0]["ack_every"], d["qps"][0]["rnr_timer"])')" \
	"(16, 14)"
PSN=0

cap() { cap_start "$NS_B" "$IF_B" "$tmp/cap.pcap" "udp port 4791 and src host $IP_A"; }
# one line per response: opcode dqpn psn aeth extra icrc
decode() { "$SCAPY_PY" "$XHCA_TOP/tests/roce_resp.py" "$tmp/cap.pcap"; }
resp() { xhca -j status | json_get "d[\"responder\"][\"$1\"]"; }
fields() { awk '{print $1 ":" $3 ":" $4}' "$tmp/r" | tr '\n' ' '; }
interop() {
	check_eq "ack: $1: every ICRC is valid" "$(awk '{print $6}' "$tmp/r" | sort -u)" True
	check_eq "ack: $1: tshark dissects every response, nothing malformed" \
		"$(tshark -n -r "$tmp/cap.pcap" -d udp.port==4791,infiniband -T fields \
			-e _ws.malformed 2>/dev/null | sort -u | tr -d '\n')" ""
}
send() { gen --op rc-send-only --qpn "$QP" --psn "$1" --size "${2:-64}" ${3:-}; }
poll() { xhca cq poll "$CQ" >/dev/null; } # takes the completions, posts the buffers again

# --- ACKs at AckReq, with the MSN and the credits -------------------------------
cap
send 0 64 --ackreq       # 4 buffers posted, this one takes 1: 3 left (code 3)
send 1 64                # no AckReq: no ACK
send 2 64 --ackreq       # 1 left (code 1)
PSN=3
cap_stop
decode >"$tmp/r"
check_eq "ack: AckReq: an ACK for PSN 0 (MSN 1, 3 buffers left) and PSN 2 (MSN 3, 1 left), none for PSN 1" \
	"$(fields)" "0x11:0:03000001 0x11:2:01000003 "
check_eq "ack: each to the QP's remote QPN" "$(awk '{print $2}' "$tmp/r" | sort -u)" 119
interop AckReq
poll

# --- coalescing: every 16 packets; WRITEs xhca_rx placed too ---------------------
cap
gen --op rc-rdma-write-only --qpn "$QP" --psn $PSN --msg-len 20480 --mtu 1024 --va $IOVA \
	--rkey "$R" --pattern 4
cap_stop
decode >"$tmp/r"
check_eq "ack: a WRITE of 20 packets, no AckReq: one ACK at its packet 16 since the last; xhca_rx placed it, so the ACK names that packet (PSN $((PSN + 15)), MSN 3)" \
	"$(awk '{print $1 ":" $3 ":" $4}' "$tmp/r" | tr '\n' ' ')" "0x11:$((PSN + 15)):04000003 "
PSN=$((PSN + 20))
send $PSN 64 --ackreq # an ACK: the count starts again
PSN=$((PSN + 1))
xhca qp modify "$QP" --ack-every 4 >/dev/null
cap
gen --op rc-rdma-write-only --qpn "$QP" --psn $PSN --msg-len 8192 --mtu 1024 --va $IOVA \
	--rkey "$R" --pattern 5
cap_stop
decode >"$tmp/r"
# (both packets in one of xhcad's rounds, the ACK owed at the 4th is
# coalesced into the 8th's, which covers it: no ACK waits past the round)
got=$(awk '{print $1 ":" $3}' "$tmp/r" | tr '\n' ' ')
check "ack: --ack-every 4: a WRITE of 8 packets: ACKs at its 4th and 8th, or the 8th's alone when one round took both ($got)" \
	test "$got" = "0x11:$((PSN + 3)) 0x11:$((PSN + 7)) " -o "$got" = "0x11:$((PSN + 7)) "
PSN=$((PSN + 8))
xhca qp modify "$QP" --ack-every 0 >/dev/null
check_eq "ack: placed_ack counts the WRITE packets that went on for their ACK" \
	"$(xhca -j stats | json_get 'd["reasons"]["placed_ack"]["packets"]')" 3
poll
MSN=6 # 3 SENDs, a WRITE, a SEND, a WRITE

# --- duplicates of SEND and WRITE: re-ACKed at ePSN - 1 --------------------------
before=$(xhca mr read "$R" --offset 0 --len 64 --out - | od -An -tx1 | tr -d ' \n')
cap
send 1 64                               # a duplicate SEND
gen --op rc-rdma-write-only --qpn "$QP" --psn 5 --va $IOVA --rkey "$R" --size 64 --pattern 9
cap_stop
decode >"$tmp/r"
hx() { printf '%02x%06x' "$1" "$2"; }
check_eq "ack: a duplicate SEND and a duplicate WRITE: each re-ACKed at ePSN - 1 with the MSN" \
	"$(fields)" "0x11:$((PSN - 1)):$(hx 4 $MSN) 0x11:$((PSN - 1)):$(hx 4 $MSN) "
check_eq "ack: the duplicate WRITE was not placed again (the region keeps the later bytes)" \
	"$(xhca mr read "$R" --offset 0 --len 64 --out - | od -An -tx1 | tr -d ' \n')" "$before"
check_eq "ack: status counts the duplicates answered" "$(resp dups)" 2
interop duplicates

# --- a gap: one sequence NAK, then silence until the expected PSN ---------------
cap
send $((PSN + 2)) 64           # gap: NAK 0x60 at ePSN
send $((PSN + 3)) 64           # silent
send $((PSN + 4)) 64 --ackreq  # silent too
send $PSN 64 --ackreq          # the expected one: accepted, ACKed
cap_stop
decode >"$tmp/r"
check_eq "ack: a gap: one NAK (0x60, PSN = ePSN), then nothing until ePSN, which is ACKed" \
	"$(fields)" "0x11:$PSN:$(hx 0x60 $MSN) 0x11:$PSN:$(hx 3 $((MSN + 1))) "
MSN=$((MSN + 1))
check_eq "ack: the rest of the gap dropped as drop_psn_oos" \
	"$(xhca -j stats | json_get 'd["reasons"]["drop_psn_oos"]["packets"]')" 2
PSN=$((PSN + 1))
poll
cap
send $((PSN + 1)) 64           # a new gap: NAKed again
cap_stop
decode >"$tmp/r"
check_eq "ack: the next gap gets its own NAK" "$(fields)" "0x11:$PSN:$(hx 0x60 $MSN) "
interop gaps

# --- duplicate READ and ATOMIC: answered from saved state ------------------------
cap
gen --op rc-read-req --qpn "$QP" --psn $PSN --va $((IOVA + 100)) --rkey "$R" --reth-len 2000
gen --op rc-fetch-add --qpn "$QP" --psn $((PSN + 2)) --va $((IOVA + 4096)) --rkey "$R" --swap-add 7
v1=$(xhca mr read "$R" --offset 4096 --len 8 --out - | od -An -tu8 | tr -d ' ')
# the READ again, and its second half only; the FETCH_ADD again
gen --op rc-read-req --qpn "$QP" --psn $PSN --va $((IOVA + 100)) --rkey "$R" --reth-len 2000
gen --op rc-read-req --qpn "$QP" --psn $((PSN + 1)) --va $((IOVA + 1124)) --rkey "$R" --reth-len 976
gen --op rc-fetch-add --qpn "$QP" --psn $((PSN + 2)) --va $((IOVA + 4096)) --rkey "$R" --swap-add 7
cap_stop
decode >"$tmp/r"
check_eq "ack: READ (2 responses), FETCH_ADD; the READ again; its rest; the FETCH_ADD again" \
	"$(awk '{print $1 ":" $3}' "$tmp/r" | tr '\n' ' ')" \
	"0xd:$PSN 0xf:$((PSN + 1)) 0x12:$((PSN + 2)) 0xd:$PSN 0xf:$((PSN + 1)) 0x10:$((PSN + 1)) 0x12:$((PSN + 2)) "
check_eq "ack: the replayed READ carries the same bytes" \
	"$(sed -n 1,2p "$tmp/r" | awk '{print $5}' | tr -d '\n')" \
	"$(sed -n 4,5p "$tmp/r" | awk '{print $5}' | tr -d '\n')"
check_eq "ack: the READ of its rest: the last 976 bytes" "$(sed -n 6p "$tmp/r" | awk '{print $5}')" \
	"$(sed -n 2p "$tmp/r" | awk '{print $5}')"
check_eq "ack: the duplicate FETCH_ADD returns the saved original value" \
	"$(sed -n 3p "$tmp/r" | awk '{print $5}')" "$(sed -n 7p "$tmp/r" | awk '{print $5}')"
check_eq "ack: and is not executed twice (the word went up by 7 once)" \
	"$(xhca mr read "$R" --offset 4096 --len 8 --out - | od -An -tu8 | tr -d ' ')" "$v1"
check_eq "ack: 3 responses sent again" "$(resp replays)" 3
PSN=$((PSN + 3))
MSN=$((MSN + 2))
cap
gen --op rc-fetch-add --qpn "$QP" --psn 1 --va $((IOVA + 4096)) --rkey "$R" --swap-add 7
cap_stop
check_eq "ack: a duplicate ATOMIC with no saved state: nothing sent, counted" \
	"$(decode | wc -l):$(resp dup_unknown)" "0:1"
interop replays

# --- RNR: no buffer posted ---------------------------------------------------
poll
cap
for i in 0 1 2 3; do send $((PSN + i)) 64; done   # the 4 buffers
send $((PSN + 4)) 64 --ackreq                      # none left: RNR NAK
cap_stop
decode >"$tmp/r"
MSN=$((MSN + 4))
rnr=$(hx 0x2e $MSN)
check_eq "ack: no buffer: an RNR NAK (0x20 | timer 14) at its PSN" \
	"$(awk '{print $1 ":" $3 ":" $4}' "$tmp/r" | grep -c "^0x11:$((PSN + 4)):$rnr$")" 1
check_eq "ack: the requester is to send it again: xhca_rx expects its PSN" \
	"$(xhca -j qp show "$QP" | json_get 'd["qps"][0]["epsn"]')" $((PSN + 4))
# What comes behind it after the rewind (a requester that had more in
# flight): IBA 9.7.5.2.8 allows no other NAK until the RNR's PSN comes
# again. A sequence NAK here (RXE 6.1 sends one) would be taken by the
# requester as a retry and spend its retry_cnt on an RNR condition.
oos0=$(xhca -j stats | json_get 'd["reasons"]["drop_psn_oos"]["packets"]')
seq0=$(resp seq_naks)
cap
send $((PSN + 5)) 64 --ackreq
send $((PSN + 6)) 64 --ackreq
cap_stop
decode >"$tmp/r"
check_eq "ack: after an RNR NAK, what comes behind it gets no NAK (no sequence NAK), dropped as drop_psn_oos" \
	"$(wc -l <"$tmp/r"):$(( $(xhca -j stats | json_get 'd["reasons"]["drop_psn_oos"]["packets"]') - oos0 ))" "0:2"
check_eq "ack: rnr_naks 1, seq_naks unchanged" "$(resp rnr_naks):$(resp seq_naks)" "1:$seq0"
poll
cap
send $((PSN + 4)) 64 --ackreq                      # the retry, a buffer posted now
cap_stop
decode >"$tmp/r"
check_eq "ack: the retry after a buffer was posted: ACKed, MSN one on" \
	"$(fields)" "0x11:$((PSN + 4)):$(hx 3 $((MSN + 1))) "
MSN=$((MSN + 1))
PSN=$((PSN + 5))
xhca qp modify "$QP" --rnr-timer 1 >/dev/null
poll
cap
for i in 0 1 2 3 4; do send $((PSN + i)) 64; done
cap_stop
MSN=$((MSN + 4))
check_eq "ack: --rnr-timer 1: the NAK carries it" "$(decode | awk '{print $4}' | tail -1)" \
	"$(hx 0x21 $MSN)"
poll
send $((PSN + 4)) 64
PSN=$((PSN + 5))
MSN=$((MSN + 1))
interop RNR

# rnr_wimm WHAT VA RKEY: RNR at the LAST of a WRITE with immediate into the
# region RKEY: the NAK names the LAST (the FIRST was placed: the cursor, of
# xhca_rx or xhcad, goes back by the LAST only), the FIRST sent again is a
# duplicate (re-ACKed), the LAST completes, nothing hangs.
rnr_wimm() {
	local what=$1
	wimm() { gen --op rc-rdma-write-only-imm --qpn "$QP" --psn $PSN --msg-len 2048 \
		--mtu 1024 --va "$2" --rkey "$3" --imm 0x1234 --pattern 8; }
	poll
	for i in 0 1 2 3; do send $((PSN + i)) 64; done     # the 4 buffers taken
	PSN=$((PSN + 4)) MSN=$((MSN + 4))
	cap
	wimm "$@"
	cap_stop
	check_eq "ack: WRITE with immediate $what, no buffer: RNR NAK at its LAST (PSN $((PSN + 1)))" \
		"$(decode | awk '{print $1 ":" $3 ":" $4}')" "0x11:$((PSN + 1)):$(hx 0x21 $MSN)"
	poll
	cap
	wimm "$@"
	send $((PSN + 2)) 64 --ackreq
	cap_stop
	check_eq "ack: $what: its retry completes (the FIRST a duplicate, re-ACKed); the SEND after it is ACKed" \
		"$(decode | awk '{print $1 ":" $3 ":" $4}' | tr '\n' ' ')" \
		"0x11:$PSN:$(hx 4 $MSN) 0x11:$((PSN + 2)):$(hx 2 $((MSN + 2))) "
	check_eq "ack: $what: the WRITE's completion, with its immediate and length, then the SEND's" \
		"$(xhca -j cq poll "$CQ" | json_get '[(c["opcode"], c["byte_len"]) for c in d["completions"]]')" \
		"[(129, 2048), (128, 64)]"
	PSN=$((PSN + 3)) MSN=$((MSN + 2))
}
rnr_wimm "into a pre-translated region" $IOVA "$R"

# --- a bad ICRC: dropped, received again ------------------------------------------
poll
cap
send $PSN 64 "--ackreq --bad-icrc"
send $((PSN + 1)) 64 --ackreq
cap_stop
decode >"$tmp/r"
check_eq "ack: a bad ICRC: dropped, counted; no ACK for it or what came behind (at most a sequence NAK at its PSN)" \
	"$(grep -vc " $PSN $(hx 0x60 $MSN) " "$tmp/r"):$(resp bad_icrc)" "0:1"
check_eq "ack: xhca_rx expects it again" \
	"$(xhca -j qp show "$QP" | json_get 'd["qps"][0]["epsn"]')" "$PSN"
cap
send $PSN 64 --ackreq
cap_stop
check_eq "ack: the good copy is accepted and ACKed" "$(decode | awk '{print $1 ":" $3}')" "0x11:$PSN"
PSN=$((PSN + 1))

MSN=$((MSN + 1))

# inside a SEND: an ACK names the packet; a bad packet is asked again alone.
# FIRST, a MIDDLE asking for an ACK (it names that MIDDLE: xhcad placed it
# and never goes back before it), a MIDDLE with a bad ICRC (xhcad takes the
# SEND up again from it: its buffer and bytes kept), the same MIDDLE good and
# the LAST: one completion of the whole message.
poll
part() { gen --op "rc-send-$1" --qpn "$QP" --psn "$2" --size 64 ${3:-}; }
cap
part first $PSN
part middle $((PSN + 1)) --ackreq
part middle $((PSN + 2)) --bad-icrc
for _ in $(seq 50); do [ "$(resp bad_icrc)" = 2 ] && break; sleep 0.05; done
cap_stop
check_eq "ack: inside a SEND, AckReq on its MIDDLE: the ACK names that MIDDLE" \
	"$(decode | awk '{print $1 ":" $3}' | tr '\n' ' ')" "0x11:$((PSN + 1)) "
check_eq "ack: a bad MIDDLE: xhca_rx expects that packet again, not the SEND's FIRST" \
	"$(xhca -j qp show "$QP" | json_get 'd["qps"][0]["epsn"]')" "$((PSN + 2))"
cap
part middle $((PSN + 2))
part last $((PSN + 3)) --ackreq
cap_stop
check_eq "ack: the MIDDLE again and the LAST complete the SEND, ACKed at its LAST" \
	"$(decode | awk '{print $1 ":" $3}' | tr '\n' ' ')" "0x11:$((PSN + 3)) "
check_eq "ack: the SEND completes once, all 256 bytes" \
	"$(xhca -j cq poll "$CQ" | json_get '[(c["status"], c["byte_len"]) for c in d["completions"]]')" \
	"[(0, 256)]"
PSN=$((PSN + 4)) MSN=$((MSN + 1))

# The same inside a WRITE xhcad places (a scattered region): the ACK names
# the MIDDLE, a bad MIDDLE is asked again alone, xhca_rx's cursor and
# xhcad's place in the region go back by that one packet.
IOVA2=$((0x40000))
RS=$(xhca -j mr reg --len 8192 --iova $IOVA2 --scatter \
	--access local-write,remote-write | json_get 'd["rkey"]')
fill() { printf "text:%0${2}d" 0 | tr 0 "$1"; }
wpkt() { gen --op "rc-rdma-write-$1" --qpn "$QP" --psn "$2" --payload "$(fill "$3" 1024)" ${4:-}; }
cap
wpkt first $PSN A "--va $IOVA2 --rkey $RS --reth-len 4096"
wpkt middle $((PSN + 1)) B --ackreq
wpkt middle $((PSN + 2)) C --bad-icrc
for _ in $(seq 50); do [ "$(resp bad_icrc)" = 3 ] && break; sleep 0.05; done
cap_stop
check_eq "ack: inside a WRITE xhcad places, AckReq on its MIDDLE: the ACK names that MIDDLE" \
	"$(decode | awk '{print $1 ":" $3}' | tr '\n' ' ')" "0x11:$((PSN + 1)) "
check_eq "ack: a bad MIDDLE of that WRITE: xhca_rx expects that packet again" \
	"$(xhca -j qp show "$QP" | json_get 'd["qps"][0]["epsn"]')" "$((PSN + 2))"
cap
wpkt middle $((PSN + 2)) C
wpkt last $((PSN + 3)) D --ackreq
cap_stop
check_eq "ack: the MIDDLE again and the LAST complete the WRITE, ACKed at its LAST" \
	"$(decode | awk '{print $1 ":" $3}' | tr '\n' ' ')" "0x11:$((PSN + 3)) "
check_eq "ack: the region holds the four packets in order, each once" \
	"$(xhca mr read "$RS" --len 4096 --out - | tr -s 'ABCD' | head -c 8)" "ABCD"
check_eq "ack: ... and all 4096 bytes" "$(xhca mr read "$RS" --len 4096 --out - | tr -d 'ABCD' | wc -c)" 0
PSN=$((PSN + 4))
MSN=$((MSN + 1))
# The same into that region (xhcad's place goes back by the LAST); the bytes
# are those of the same WRITE into the pre-translated region above.
rnr_wimm "into a scattered region" $IOVA2 "$RS"
check "ack: its 2048 bytes, as the same WRITE placed by xhca_rx" \
	cmp -s <(xhca mr read "$R" --len 2048 --out -) <(xhca mr read "$RS" --len 2048 --out -)

# --- errors: a SEND longer than its buffer ---------------------------------------
poll
cap
send $PSN 300 --ackreq
cap_stop
check_eq "ack: a SEND longer than the buffer: NAK invalid request (0x61) at its PSN" \
	"$(decode | awk '{print $1 ":" $3 ":" substr($4, 1, 2)}')" "0x11:$PSN:61"
check_eq "ack: the QP is in the error state" \
	"$(xhca -j qp show "$QP" | json_get 'd["qps"][0]["state"]')" err

# --- errors: a message that cuts a SEND short (IBA 9.7.5.1.2) ---------------------
# SEND FIRST, then a WRITE ONLY before the SEND's LAST: xhca_rx refuses the
# WRITE (drop_send_seq), places none of it; xhcad NAKs invalid request at
# its PSN and the QP goes to the error state.
QP2=$(QP_CREATE_ARGS="--cq $CQ --rq-depth 4 --buf-size 4096" qp_up rc --epsn 0 --action host \
	--dest-qpn 0x78 --mtu 1024)
xhca qp modify "$QP2" --state rts >/dev/null
seqd0=$(xhca -j stats | json_get 'd["reasons"]["drop_send_seq"]["packets"]')
before=$(xhca mr read "$R" --offset 8192 --len 64 --out - | od -An -tx1 | tr -d ' \n')
cap
gen --op rc-send-first --qpn "$QP2" --psn 0 --size 1024
gen --op rc-rdma-write-only --qpn "$QP2" --psn 1 --size 64 --va $((IOVA + 8192)) --rkey "$R" \
	--pattern 9 --ackreq
cap_stop
check_eq "ack: SEND FIRST, then a WRITE ONLY: NAK invalid request (0x61) at the WRITE's PSN" \
	"$(decode | awk '{print $1 ":" $3 ":" substr($4, 1, 2)}')" "0x11:1:61"
check_eq "ack: ... counted drop_send_seq, the WRITE's bytes not placed, the QP in error" \
	"$(( $(xhca -j stats | json_get 'd["reasons"]["drop_send_seq"]["packets"]') - seqd0 )):$(xhca mr read "$R" --offset 8192 --len 64 --out - | od -An -tx1 | tr -d ' \n'):$(xhca -j qp show "$QP2" | json_get 'd["qps"][0]["state"]')" \
	"1:$before:err"

# --- bad input --------------------------------------------------------------------
err=$(xhca qp modify "$QP" --rnr-timer 32 2>&1); rc=$?
check_eq "ack: --rnr-timer 32: a usage error, says why" "$rc:${err:+said}" "2:said"
err=$(xhca qp modify "$QP" --ack-every x 2>&1); rc=$?
check "ack: --ack-every x: a usage error" [ "$rc" = 2 ]
UD=$(QP_CREATE_ARGS="--qkey 9" qp_up ud --action drop)
err=$(xhca qp modify "$UD" --ack-every 4 2>&1); rc=$?
check_eq "ack: --ack-every on a UD QP: refused, says why" \
	"$rc:$(echo "$err" | grep -c "not RC")" "1:1"
UC=$(qp_up uc --action drop)
err=$(xhca qp modify "$UC" --rnr-timer 3 2>&1); rc=$?
check_eq "ack: --rnr-timer on a UC QP: refused, says why" \
	"$rc:$(echo "$err" | grep -c "not RC")" "1:1"
for bad in "--timeout 32" "--retry-cnt 8" "--rnr-retry 8" "--max-rd-atomic 0" \
	"--max-rd-atomic 129" "--sq-psn 0x1000000" "--timeout x"; do
	err=$(xhca qp modify "$QP" $bad 2>&1); rc=$?
	check "ack: $bad: a usage error ($err)" [ "$rc" = 2 ]
done
err=$(xhca qp modify "$UC" --timeout 10 2>&1); rc=$?
check_eq "ack: --timeout on a QP without a send queue (the CLI's): refused, says why ($err)" \
	"$rc:$(echo "$err" | grep -ci "send queue")" "1:1"
check_eq "ack: a CLI QP shows no send queue" \
	"$(xhca -j qp show "$UC" | json_get '"send_queue" in d["qps"][0]')" False
check_eq "ack: a UC QP has no responder settings" \
	"$(xhca -j qp show "$UC" | json_get '"ack_every" in d["qps"][0]')" False
t_done
