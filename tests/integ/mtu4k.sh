#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Path MTU 4096 on one host. A frame over one UMEM frame (3840 bytes after
# the kernel's headroom) reaches xhcad in several AF_XDP descriptors and is
# made whole in a jumbo slot; xhca_rx (xdp.frags) parses and places frames
# whose payload goes on in fragments. UD and RC SENDs of 4096-byte packets
# arrive exact; WRITEs of 4096-byte packets are placed into a pre-translated
# region by xhca_rx and into a fragmented one by xhcad, across pages; a bad
# ICRC in the second descriptor is a counted drop; so is a frame too big
# for a slot (three descriptors); a multicast frame of
# several buffers reaches a group's one function port, and is a counted
# drop for several (the kernel cannot copy it); with no jumbo slot a big
# frame is a counted drop and nothing else changes; a frame over the sender's
# link MTU is refused by xhca-gen with a reason.
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/mtu4k
TOPO_MTU=4200 topo_setup || { fail "mtu4k: topology"; t_done; }
tmp=$(mktemp -d)
APP_DIR=$tmp
XHCAD_LOG=$tmp/xhcad.log
NS_C=xhca-c-$(( $$ % 100000 ))
trap 'apps_kill; ip netns del "$NS_C" 2>/dev/null; topo_cleanup; rm -rf "$tmp"' EXIT
img() { "$SCAPY_PY" "$XHCA_TOP/tests/mrimage.py" "$@"; }
# comps NAME PYEXPR: PYEXPR with c = the completions, pat(n) = xhca-gen's
# --size payload, msg(seed, n) = its --msg-len --pattern payload, as hex.
comps() {
	"$SCAPY_PY" - "$tmp/$1" "$2" <<'PY'
import json, sys
c = [json.loads(l) for l in open(sys.argv[1]) if '"wr_id"' in l]
def pat(n): return bytes(i & 255 for i in range(n)).hex()
def msg(seed, n):
    return bytes((seed * 0x9e + k + (k >> 8) * 3 + (k >> 16) * 5) & 0xff for k in range(n)).hex()
print(eval(sys.argv[2]))
PY
}
umem() { xhca -j status | json_get "d['umem']['$1']"; }
bad_icrc() { xhca -j status | json_get 'd["responder"]["bad_icrc"]'; }
RECV=$B/xhca-recv

check "mtu4k: xhcad starts" xhcad_start
check_eq "mtu4k: jumbo slots, all free (a 16th of 8192 frames)" \
	"$(umem jumbo_slots) $(umem jumbo_free)" "512 512"

# --- UD: 4096 bytes over IPv4 and IPv6 (two descriptors each), 3000 (one) ---
app ud "$RECV" -i "$IF_A" --type ud --qkey 0x11 --mtu 4096 --buf-size 8192 -j --dump 8192 \
	--count 3 --timeout 5
UD=$(ready ud)
gen --op ud-send-only --qpn "$UD" --qkey 0x11 --sqp 0x77 --size 4096
gen --op ud-send-only --qpn "$UD" --qkey 0x11 --sqp 0x77 --size 4096 --src "$IP6_B" --dst "$IP6_A"
gen --op ud-send-only --qpn "$UD" --qkey 0x11 --sqp 0x77 --size 3000
wait "$PID_ud"
check_eq "mtu4k: UD 4096 B (IPv4, IPv6) and 3000 B: completions with the GRH's 40 bytes" \
	"$(comps ud '[(x["status"], x["byte_len"]) for x in c]')" "[(0, 4136), (0, 4136), (0, 3040)]"
check_eq "mtu4k: UD: every byte exact" \
	"$(comps ud '[x["data"] == pat(n) for x, n in zip(c, (4096, 4096, 3000))]')" \
	"[True, True, True]"
check_eq "mtu4k: the two frames over 3840 B were made one in a jumbo slot, which came back" \
	"$(umem jumbo_frames) $(umem jumbo_free) $(umem jumbo_drops)" "2 512 0"

# --- RC SEND of 10000 bytes: FIRST and MIDDLE of 4096, LAST of 1808 ---
app rc "$RECV" -i "$IF_A" --type rc --local-ip "$IP_A" --remote-ip "$IP_B" --epsn 0 --mtu 4096 \
	-j --dump 16384 --buf-size 16384 --count 1 --timeout 5
RC=$(ready rc)
gen --op rc-send-only --qpn "$RC" --psn 0 --msg-len 10000 --mtu 4096 --pattern 3
wait "$PID_rc"
check_eq "mtu4k: RC SEND of 3 packets at path MTU 4096: one completion of 10000 bytes, exact" \
	"$(comps rc '[(x["status"], x["byte_len"], x["data"] == msg(3, 10000)) for x in c]')" \
	"[(0, 10000, True)]"

# --- a bad ICRC in the frame's second descriptor: dropped, counted ---
app icrc "$RECV" -i "$IF_A" --type ud --qkey 0x12 --mtu 4096 --buf-size 8192 -j --count 1 \
	--timeout 2
UD2=$(ready icrc)
b0=$(bad_icrc)
gen --op ud-send-only --qpn "$UD2" --qkey 0x12 --size 4096 --bad-icrc
wait "$PID_icrc"
check_eq "mtu4k: a 4096 B UD SEND with a bad ICRC: no completion, counted in bad_icrc" \
	"$(comps icrc 'len(c)') $(($(bad_icrc) - b0))" "0 1"

# --- WRITEs at path MTU 4096, placed by xhca_rx (pre-translated) or xhcad ---
QP=$(qp_up rc --epsn 0 --action host --mtu 4096)
xhca qp modify "$QP" --ack-every 0 >/dev/null
xhca qp modify "$QP" --state rts >/dev/null
PSN=0
MRLEN=$((64 * 1024))
IOVA=$((0x7f0000001000))
qp_epsn() { xhca -j qp show "$QP" | json_get 'd["qps"][0]["epsn"]'; }
for kind in pretranslated fragmented; do
	if [ $kind = fragmented ]; then flag=--scatter; else flag=--contig; fi
	R=$(xhca -j mr reg --len "$MRLEN" --iova "$IOVA" $flag | json_get 'd["rkey"]')
	img init "$tmp/$kind.img" "$MRLEN"
	stats_snap "$tmp/$kind.snap"
	seed=20
	# one packet across a page boundary, two (4096 + 1), four (the last short)
	for c in 8190:4096 4090:4097 20000:13000; do
		off=${c%%:*} len=${c##*:} seed=$((seed + 1))
		gen --op rc-rdma-write-only --qpn "$QP" --psn "$PSN" --msg-len "$len" --mtu 4096 \
			--va $((IOVA + off)) --rkey "$R" --pattern "$seed"
		PSN=$((PSN + (len + 4095) / 4096))
		img apply "$tmp/$kind.img" "$off" "$len" "$seed"
	done
	for _ in $(seq 50); do
		[ "$(qp_epsn)" = "$PSN" ] &&
			[ "$(xhca -j flowq show | json_get 'sum(f["backlog"] for f in d["flowqs"])')" = 0 ] &&
			break
		sleep 0.05
	done
	xhca mr read "$R" --len "$MRLEN" --out "$tmp/$kind.got"
	check_eq "mtu4k: WRITEs of 4096-byte packets into a $kind region: it holds exactly them" \
		"$(img check "$tmp/$kind.img" "$tmp/$kind.got")" same
	check_eq "mtu4k: $kind: every packet $([ $kind = fragmented ] && echo "to xhcad's translation manager" || echo "placed by xhca_rx")" \
		"$(stats_changed "$tmp/$kind.snap")" "$([ $kind = fragmented ] && echo to_xlate || echo placed)"
	xhca mr dereg "$R" >/dev/null
done

# --- multicast to function ports: a frame over a page to one port (in the
# kernel); to a port and a QP member, or to two ports, the kernel cannot
# copy it: xhcad sends each its copy from the one stored frame ---
ip netns add "$NS_C"
for p in 1 2; do
	ip link add xf${p}a netns "$NS_A" type veth peer name xf$p netns "$NS_C"
	ip -n "$NS_A" link set xf${p}a mtu 4200 up
	ip -n "$NS_C" link set xf$p mtu 4200 up
	ip netns exec "$NS_C" ethtool -K xf$p gro on >/dev/null # NAPI for redirected frames
done
G=239.10.10.10
xhca mcast create "$G" >/dev/null
xhca mcast attach "$G" --dev xf1a >/dev/null
mcsend() { gen --op ud-send-only --qpn 0xffffff --dst "$G" --qkey 0x5151 --msg-len "$1" \
	--mtu 4096 --pattern 4; }
# the frames port N got: their lengths
port_frames() { "${TSHARK_ROCE[@]}" -r "$tmp/port$1.pcap" -T fields -e frame.len 2>/dev/null | tr '\n' ' '; }
tshark_roce_init
cap_start "$NS_C" xf1 "$tmp/port1.pcap" "udp port 4791"
stats_snap "$tmp/mc.snap"
mcsend 4000
cap_stop
check_eq "mtu4k: multicast, one function port: the 4066 B frame reaches it (in the kernel)" \
	"$(port_frames 1)/$(stats_changed "$tmp/mc.snap")" "4066 /to_mcast_devs"
app mc "$RECV" -i "$IF_A" --type ud --qkey 0x5151 --mcast "$G" --mtu 4096 --buf-size 8192 -j \
	--count 2 --timeout 3
ready mc >/dev/null
cap_start "$NS_C" xf1 "$tmp/port1.pcap" "udp port 4791"
stats_snap "$tmp/mc.snap"
mcsend 4000
sleep 0.2
mcsend 200
cap_stop
wait "$PID_mc"
check_eq "mtu4k: multicast, a port and a QP member: the 4066 B frame through xhcad's copies (to_mcast_ports), the 266 B one in the kernel (to_mcast_devs), both reach both" \
	"$(port_frames 1)/$(stats_changed "$tmp/mc.snap")/$(comps mc '[x["byte_len"] for x in c]')" \
	"4066 266 /to_mcast_devs to_mcast_ports/[4040, 240]"
check_eq "mtu4k: both frames on the port whole (scapy checks their ICRCs)" \
	"$(/usr/bin/python3 "$XHCA_TOP/tests/pcap_icrc.py" "$tmp/port1.pcap" 2>&1)" \
	"2 roce frames, 0 bad ICRC"
xhca mcast attach "$G" --dev xf2a >/dev/null
cap_start "$NS_C" xf1 "$tmp/port1.pcap" "udp port 4791"
cap1=$CAP
cap_start "$NS_C" xf2 "$tmp/port2.pcap" "udp port 4791"
stats_snap "$tmp/mc.snap"
mcsend 4000
cap_stop
CAP=$cap1 cap_stop
check_eq "mtu4k: multicast, two ports (the member gone): the 4066 B frame reaches both, from xhcad" \
	"$(port_frames 1)/$(port_frames 2)/$(stats_changed "$tmp/mc.snap")" \
	"4066 /4066 /to_mcast_ports"
check_eq "mtu4k: mcast show counts the ports' copies (xhca_rx's 2 + xhcad's 3), no error" \
	"$(xhca -j mcast show | json_get '[(g["dev_packets"], g["drops"]["errors"]) for g in d["groups"]]')" \
	"[(5, 0)]"
xhca mcast destroy "$G" >/dev/null

# --- a frame of three descriptors (link MTU 9000) is more than a slot holds:
# dropped, counted; the next one delivered. A UD payload over the path MTU
# is xhca_rx's drop (drop_ud_mtu); an RC SEND ONLY of 8500 bytes (invalid
# too, but xhca_rx checks no SEND's length) reaches a ring: the slot's
# limit drops it ---
ip -n "$NS_A" link set "$IF_A" mtu 9000
ip -n "$NS_B" link set "$IF_B" mtu 9000
app big "$RECV" -i "$IF_A" --type ud --qkey 0x14 --mtu 4096 --buf-size 9000 -j --dump 8192 \
	--count 2 --timeout 2
UD4=$(ready big)
d0=$(umem jumbo_drops)
u0=$(xhca -j stats | json_get 'd["reasons"]["drop_ud_mtu"]["packets"]')
gen --op ud-send-only --qpn "$UD4" --qkey 0x14 --size 8500
CQJ=$(xhca -j cq create --depth 16 | json_get 'd["cq"]')
RCJ=$(QP_CREATE_ARGS="--cq $CQJ --rq-depth 4 --buf-size 9000" qp_up rc --epsn 0 --action host \
	--dest-qpn 0x79 --mtu 4096)
gen --op rc-send-only --qpn "$RCJ" --psn 0 --size 8500
gen --op ud-send-only --qpn "$UD4" --qkey 0x14 --size 100
wait "$PID_big"
check_eq "mtu4k: an 8578 B UD frame: over the path MTU, xhca_rx's counted drop (drop_ud_mtu); an 8566 B RC frame (three descriptors, over a slot's 7936 B): dropped and counted; the next delivered" \
	"$(comps big '[(x["byte_len"], x["data"] == pat(100)) for x in c]') $(( $(xhca -j stats | json_get 'd["reasons"]["drop_ud_mtu"]["packets"]') - u0 )) $(($(umem jumbo_drops) - d0)) $(umem jumbo_free)" \
	"[(140, True)] 1 1 512"
xhca qp destroy "$RCJ" >/dev/null 2>&1
ip -n "$NS_A" link set "$IF_A" mtu 4200
ip -n "$NS_B" link set "$IF_B" mtu 4200

# --- no jumbo slot: a frame of two descriptors is dropped and counted ---
apps_kill
xhcad_stop TERM
check "mtu4k: xhcad starts with --jumbo-slots 0" xhcad_start --jumbo-slots 0
app none "$RECV" -i "$IF_A" --type ud --qkey 0x13 --mtu 4096 --buf-size 8192 -j --dump 8192 \
	--count 2 --timeout 2
UD3=$(ready none)
gen --op ud-send-only --qpn "$UD3" --qkey 0x13 --size 4096
gen --op ud-send-only --qpn "$UD3" --qkey 0x13 --size 3000
wait "$PID_none"
check_eq "mtu4k: no jumbo slot: the 4096 B SEND dropped and counted, the 3000 B one delivered" \
	"$(comps none '[(x["byte_len"], x["data"] == pat(3000)) for x in c]') $(umem jumbo_drops) $(umem jumbo_frames)" \
	"[(3040, True)] 1 0"
check_eq "mtu4k: ... and every UMEM frame is back (free + fill)" \
	"$(xhca -j status | json_get 'd["umem"]["free"] + d["umem"]["fill"] == d["umem"]["frames"]')" True

# --- a frame over the sender's link MTU: xhca-gen says so ---
ip -n "$NS_B" link set "$IF_B" mtu 3000
out=$(in_b "$B/xhca-gen" -i "$IF_B" --dst-mac "$MAC_A" --src "$IP_B" --dst "$IP_A" \
	--op ud-send-only --qpn "$UD3" --qkey 0x13 --size 4096 2>&1)
rc=$?
check_eq "mtu4k: xhca-gen: a 4162 B frame over a 3000 B link refused (exit 2, why)" \
	"$rc $(grep -c "exceeds its MTU" <<<"$out")" "2 1"
t_done
