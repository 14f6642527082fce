#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# RDMA WRITE placement (US 9,336,158): into a pre-translated region by
# xhca_rx itself, into a fragmented one by xhcad's translation manager.
# ONLY and FIRST/MIDDLE/LAST, 1 byte to 1 MiB, at offsets across page
# boundaries: the region holds exactly the bytes written, nothing outside
# the target range changes, and both paths give the same bytes. WRITE with
# immediate completes in the application's CQ. A zero-length WRITE checks
# no key. Without bpf_dynptr_copy (--no-kfuncs) xhcad places what xhca_rx
# cannot, with the same bytes.
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/write
topo_setup || { fail "write: topology"; t_done; }
tmp=$(mktemp -d)
APP_DIR=$tmp
XHCAD_LOG=$tmp/xhcad.log
trap 'apps_kill; topo_cleanup; rm -rf "$tmp"' EXIT
img() { "$SCAPY_PY" "$XHCA_TOP/tests/mrimage.py" "$@"; }

# Packets of 2048 bytes of payload need a larger MTU than veth's 1500.
ip -n "$NS_A" link set "$IF_A" mtu 3000
ip -n "$NS_B" link set "$IF_B" mtu 3000
check "write: xhcad starts (--canary)" xhcad_start --canary
QP=$(qp_up rc --epsn 0 --action host --mtu 2048)
# no ACKs due (the responder's are tests/integ/ack.sh): every packet stays in xhca_rx
xhca qp modify "$QP" --ack-every 0 >/dev/null
xhca qp modify "$QP" --state rts >/dev/null
PSN=0
MRLEN=$((1048576 + 4 * 4096))
IOVA=$((0x7f0000001000))

# wr KIND RKEY OFF LEN SEED: one WRITE message of LEN bytes at OFF, checked.
wr() {
	local kind=$1 rkey=$2 off=$3 len=$4 seed=$5 n
	n=$(( (len + 2047) / 2048 ))
	gen --op rc-rdma-write-only --qpn "$QP" --psn "$PSN" --msg-len "$len" --mtu 2048 \
		--va $((IOVA + off)) --rkey "$rkey" --pattern "$seed"
	PSN=$((PSN + n))
	NPK=$((NPK + n))
	img apply "$tmp/$kind.img" "$off" "$len" "$seed"
	# xhcad places the fragmented region's frames: let it catch up
	for _ in $(seq 50); do
		[ "$(qp_epsn)" = "$PSN" ] && [ "$(xhca -j flowq show | json_get 'sum(f["backlog"] for f in d["flowqs"])')" = 0 ] && break
		sleep 0.05
	done
	xhca mr read "$rkey" --len "$MRLEN" --out "$tmp/$kind.got"
	check_eq "write: $kind: $len B at offset $off ($n packets): the region holds exactly that" \
		"$(img check "$tmp/$kind.img" "$tmp/$kind.got")" same
}
qp_epsn() { xhca -j qp show "$QP" | json_get 'd["qps"][0]["epsn"]'; }
# wr_set KIND RKEY: WRITEs of every size and offset into a fresh image; NPK
# their packets, NUN those not at a multiple of 1 KiB.
wr_set() {
	local c seed=10
	img init "$tmp/$1.img" "$MRLEN"
	NPK=0 NUN=0
	for c in 0:1 4095:1 4095:2 4000:100 1234:2048 4090:2049 8190:6149 \
		$((MRLEN - 1)):1 $((MRLEN - 2048)):2048 $((8192 + 7)):1048576; do
		seed=$((seed + 1))
		wr "$1" "$2" "${c%%:*}" "${c##*:}" "$seed"
		[ $(( ${c%%:*} % 1024 )) = 0 ] || NUN=$((NUN + 1))
	done
}

for kind in pretranslated fragmented; do
	if [ $kind = fragmented ]; then flag=--scatter; else flag=--contig; fi
	R=$(xhca -j mr reg --len "$MRLEN" --iova "$IOVA" $flag | json_get 'd["rkey"]')
	check_eq "write: $kind: the region is $kind" \
		"$(xhca -j mr show | json_get '[m["pretranslated"] for m in d["mrs"] if m["rkey"] == '"$R"'][0]')" \
		"$([ $kind = pretranslated ] && echo True || echo False)"
	snap=$tmp/$kind.snap
	stats_snap "$snap"
	wr_set "$kind" "$R"
	if [ $kind = pretranslated ]; then
		check_eq "write: pretranslated: every packet placed by xhca_rx, none to xhcad" \
			"$(stats_changed "$snap")" "placed"
	else
		check_eq "write: fragmented: every packet to the translation manager" \
			"$(stats_changed "$snap")" "to_xlate"
		check_eq "write: fragmented: xhcad placed them all ($NPK frames)" \
			"$(xhca -j stats | json_get 'd["host"]["xlate_placed"]["frames"]')" "$NPK"
	fi
	cp "$tmp/$kind.got" "$tmp/$kind.final"
done
check "write: both paths give the same bytes" cmp -s "$tmp/pretranslated.final" "$tmp/fragmented.final"

# A zero-length WRITE checks no key (IBA C9-88): accepted, nothing written.
stats_snap "$tmp/z.snap"
gen --op rc-rdma-write-only --qpn "$QP" --psn "$PSN" --size 0 --va 0 --rkey 0xdead00
PSN=$((PSN + 1))
check_eq "write: zero-length WRITE with a bogus R_Key: accepted (placed), the PSN moves on" \
	"$(stats_changed "$tmp/z.snap") $(qp_epsn)" "placed $PSN"
xhca mr read "$R" --len "$MRLEN" --out "$tmp/z.got"
check_eq "write: zero-length WRITE: nothing written" "$(img check "$tmp/fragmented.img" "$tmp/z.got")" same

# WRITE with immediate: the application gets a completion (a receive
# buffer consumed, byte_len the WRITE's length, the immediate data).
for how in contig scatter; do
	app_fed "imm$how" 8 "$B/xhca-apptest" mr "$IF_A" 65536 "$how"
	AQ=$(ready "imm$how")
	line=$(grep '"ready"' "$tmp/imm$how")
	AR=$(echo "$line" | json_get 'd["rkey"]')
	AV=$(echo "$line" | json_get 'd["iova"]')
	check_eq "write imm ($how): the application's region is $([ $how = contig ] && echo pre-translated || echo fragmented)" \
		"$(echo "$line" | json_get 'd["pretranslated"]')" "$([ $how = contig ] && echo True || echo False)"
	xhca qp modify "$AQ" --state init >/dev/null
	xhca qp modify "$AQ" --state rtr --local-ip "$IP_A" --remote-ip "$IP_B" --mtu 2048 --epsn 100 >/dev/null
	stats_snap "$tmp/imm.snap"
	gen --op rc-rdma-write-only-imm --qpn "$AQ" --psn 100 --msg-len 100 --mtu 2048 \
		--va $((AV + 10)) --rkey "$AR" --imm 0x11223344 --pattern 5
	gen --op rc-rdma-write-only-imm --qpn "$AQ" --psn 101 --msg-len 5000 --mtu 2048 \
		--va $((AV + 4000)) --rkey "$AR" --imm 0x55667788 --pattern 6
	echo "drain 2" >&8
	for _ in $(seq 60); do grep -q drained "$tmp/imm$how" && break; sleep 0.05; done
	check_eq "write imm ($how): two completions: RECV_RDMA_WITH_IMM, the WRITE's length, the immediate" \
		"$(grep '"wr_id"' "$tmp/imm$how" | while read -r l; do echo "$l" | json_get '(d["wr_id"], d["status"], d["opcode"], d["byte_len"], hex(d["imm"]), d["flags"])'; done | tr '\n' ' ')" \
		"(0, 0, 129, 100, '0x11223344', 2) (1, 0, 129, 5000, '0x55667788', 2) "
	img init "$tmp/imm.img" 65536
	img apply "$tmp/imm.img" 10 100 5
	img apply "$tmp/imm.img" 4000 5000 6
	xhca mr read "$AR" --len 65536 --out "$tmp/imm.got"
	check_eq "write imm ($how): the bytes are in the application's buffer" \
		"$(img check "$tmp/imm.img" "$tmp/imm.got")" same
	if [ $how = contig ]; then
		check_eq "write imm (contig): placed by xhca_rx, the last packets on to the flow queue" \
			"$(stats_changed "$tmp/imm.snap")" "placed placed_to_flowq"
	else
		check_eq "write imm (scatter): placed by the translation manager" \
			"$(stats_changed "$tmp/imm.snap")" "to_xlate"
	fi
	echo quit >&8
	exec 8>&-
done
check_eq "write imm: completions of placed WRITEs counted (imm_done)" \
	"$(xhca -j stats | json_get 'd["host"]["imm_done"]["frames"]')" 2
check_eq "write: no byte landed in freed memory (canary)" \
	"$(xhca -j status | json_get 'd["canary_violations"]')" 0
grep canary "$XHCAD_LOG" >&2 || true

# A kernel without bpf_dynptr_copy (Linux < 6.15; --no-kfuncs makes this one
# behave so): a WRITE into a pre-translated region is placed by xhca_rx when
# its packets start at a multiple of 1 KiB in their pages; one elsewhere goes
# whole to xhcad (its first packet counted xlate_nocopy), which places the
# same bytes.
xhcad_stop
XHCAD_LOG=$tmp/xhcad-nokfuncs.log
check "write: xhcad starts (--no-kfuncs)" xhcad_start --no-kfuncs
check "write: --no-kfuncs: its start line says what it lacks" \
	grep -q "lacks bpf_dynptr_copy (Linux 6.15; --no-kfuncs)" "$XHCAD_LOG"
check_eq "write: --no-kfuncs: xhca status says the kernel lacks bpf_dynptr_copy" \
	"$(xhca -j status | json_get 'd["kernel"]["kfunc_copy"]')" False
QP=$(qp_up rc --epsn 0 --action host --mtu 2048)
xhca qp modify "$QP" --ack-every 0 >/dev/null
xhca qp modify "$QP" --state rts >/dev/null
PSN=0
R=$(xhca -j mr reg --len "$MRLEN" --iova "$IOVA" --contig | json_get 'd["rkey"]')
stats_snap "$tmp/nokfuncs.snap"
wr_set nokfuncs "$R"
check_eq "write: --no-kfuncs: the aligned ones placed by xhca_rx, the others by xhcad" \
	"$(stats_changed "$tmp/nokfuncs.snap")" "placed to_xlate xlate_nocopy"
check_eq "write: --no-kfuncs: one xlate_nocopy for each WRITE not at a multiple of 1 KiB" \
	"$(xhca -j stats | json_get 'd["reasons"]["xlate_nocopy"]["packets"]')" "$NUN"
check "write: --no-kfuncs: the same bytes as xhca_rx placed with the kfunc" \
	cmp -s "$tmp/pretranslated.final" "$tmp/nokfuncs.got"
t_done
