#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# ICRC before placement (xhcad --icrc). With "after" (the default) xhca_rx
# places a WRITE into a pre-translated region at once, before anyone checks
# its ICRC: a bad frame's bytes are in memory. With "first" no byte is
# placed before its ICRC checked out: xhca_rx hands every WRITE to xhcad,
# which drops a bad one (bad_icrc, the QP rewound: the requester sends it
# again) and places a good one. A restart applies the new mode to the QPs it
# keeps. Either way the proxy executes nothing whose ICRC is bad.
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/icrc
topo_setup || { fail "icrc: topology"; t_done; }
tmp=$(mktemp -d)
XHCAD_LOG=$tmp/xhcad.log
trap 'topo_cleanup; rm -rf "$tmp"' EXIT

IOVA=$((0x40000))
resp() { xhca -j status | json_get "d[\"responder\"][\"$1\"]"; }
epsn() { xhca -j qp show "$1" | json_get 'd["qps"][0]["epsn"]'; }
region() { xhca mr read "$R" --offset "$1" --len 64 --out - | od -An -tx1 -v | tr -d ' \n'; }
zero=$(printf '0%.0s' $(seq 128))
write() { # QPN PSN OFFSET [ARGS]: a WRITE ONLY of 64 bytes, pattern 7
	gen --op rc-rdma-write-only --qpn "$1" --psn "$2" --va $((IOVA + $3)) --rkey "$R" \
		--size 64 --pattern 7 ${4:-}
	sleep 0.2
}

check "icrc: xhcad starts (--icrc after, the default, --keep)" xhcad_start --keep
R=$(xhca -j mr reg --len 65536 --iova $IOVA | json_get 'd["rkey"]')
check_eq "icrc: the region is pre-translated" \
	"$(xhca -j mr show | json_get '[m["pretranslated"] for m in d["mrs"] if m["rkey"] == '"$R"']')" \
	"[True]"
CQ=$(xhca -j cq create --depth 16 | json_get 'd["cq"]')
QP=$(QP_CREATE_ARGS="--cq $CQ --rq-depth 4" qp_up rc --epsn 0 --action host --dest-qpn 0x77)
stats_snap "$tmp/s"
write "$QP" 0 0 --bad-icrc
check_eq "icrc after: a bad WRITE is placed by xhca_rx, unchecked" \
	"$(stats_changed "$tmp/s") $(resp bad_icrc)" "placed 0"
placed=$(region 0)
check "icrc after: its bytes are in the region" test "$placed" != "$zero"
xhcad_stop TERM

check "icrc: xhcad starts again with --icrc first on the kept maps" xhcad_start --icrc first
stats_snap "$tmp/s"
write "$QP" 1 4096 --bad-icrc
check_eq "icrc first: a bad WRITE of a QP the restart kept goes to xhcad, which drops it" \
	"$(stats_changed "$tmp/s") $(resp bad_icrc)" "to_xlate 1"
check_eq "icrc first: not a byte of it in the region" "$(region 4096)" "$zero"
check_eq "icrc first: xhca_rx expects it again (rewound)" "$(epsn "$QP")" 1
stats_snap "$tmp/s"
write "$QP" 1 4096
check_eq "icrc first: the good copy: placed by xhcad" \
	"$(stats_changed "$tmp/s") $(epsn "$QP")" "to_xlate 2"
check_eq "icrc first: the region holds it" "$(region 4096)" "$placed"
Q2=$(QP_CREATE_ARGS="--cq $CQ --rq-depth 4" qp_up rc --epsn 0 --action host --dest-qpn 0x78)
stats_snap "$tmp/s"
write "$Q2" 0 8192 --bad-icrc
check_eq "icrc first: a new QP's bad WRITE: dropped by xhcad, nothing placed" \
	"$(stats_changed "$tmp/s") $(resp bad_icrc) $(region 8192)" "to_xlate 2 $zero"

# the proxy: a LOCK request with a bad ICRC is not executed; the good copy is
PCQ=$(xhca -j cq create --depth 8 --proxy | json_get 'd["cq"]')
PQ=$(xhca -j qp create --type rc --cq "$PCQ" --rq-depth 4 --proxy on | json_get 'd["qpn"]')
xhca qp modify "$PQ" --state init >/dev/null
xhca qp modify "$PQ" --state rtr --local-ip "$IP_A" --remote-ip "$IP_B" >/dev/null
xhca filter add "$PQ" --op send --match text:LOCK >/dev/null
b0=$(resp bad_icrc)
gen --op rc-send-only --qpn "$PQ" --psn 0 --payload "text:LOCK k9 one" --bad-icrc
sleep 0.3
check_eq "icrc: proxy: a LOCK with a bad ICRC: not executed, no completion, QP rewound" \
	"$(xhca -j cq poll "$PCQ" | json_get 'len(d["completions"])') $(($(resp bad_icrc) - b0)) $(epsn "$PQ")" \
	"0 1 0"
gen --op rc-send-only --qpn "$PQ" --psn 0 --payload "text:LOCK k9 one"
sleep 0.3
check_eq "icrc: proxy: its good copy is executed (the lock granted)" \
	"$(xhca -j cq poll "$PCQ" | json_get '[(c["opcode"], c.get("result")) for c in d["completions"]]')" \
	"[(257, 1)]"
t_done
