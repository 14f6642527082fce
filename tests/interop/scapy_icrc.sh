#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Interop with scapy's RoCE layer (scapy.contrib.roce): frames written by
# xhca-gen --pcap (the C packet builder) are dissected by scapy, which
# recomputes the ICRC and must arrive at ours, and must decode opcode, DestQP,
# PSN, P_Key and PadCnt as we asked. The extension headers and the payload are
# read from scapy's dissection at the offsets RXE's opcode table gives.
#
# scapy 2.5 computes no ICRC over IPv6 (it warns and returns 0). For IPv6 the
# script applies scapy's IPv4 recipe (BTH.compute_icrc) to scapy's IPv6
# dissection with the IPv6 variant fields (TC, flow label, hop limit) masked.
#
# XHCA_GEN=/path/to/a/generator overrides build/xhca-gen.
. "$(dirname "$0")/../lib.sh"

GEN=${XHCA_GEN:-$B/xhca-gen}
if [ ! -x "$GEN" ]; then
	skip "interop scapy: $GEN is not built (make)"
	t_done
fi
if ! "$SCAPY_PY" -c 'import scapy.contrib.roce' 2>/dev/null; then
	skip "interop scapy: $SCAPY_PY cannot import scapy.contrib.roce (apt-get install python3-scapy)"
	t_done
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/cases"

V4=(--src 10.0.0.1 --dst 10.0.0.2 --src-mac 02:00:00:00:00:01 --dst-mac 02:00:00:00:00:02)
V6=(--src fd00::1 --dst fd00::2 --src-mac 02:00:00:00:00:01 --dst-mac 02:00:00:00:00:02)

# add NAME EXPECT GEN-ARGS...: writes NAME.pcap; EXPECT is "key=value ..."
# checked by the Python below (hl = BTH + extension headers, as in RXE's table).
add() {
	local name=$1 expect=$2
	shift 2
	if "$GEN" --pcap "$tmp/$name.pcap" "$@" >"$tmp/$name.log" 2>&1 && [ -s "$tmp/$name.pcap" ]; then
		echo "$name $expect" >>"$tmp/cases"
	else
		fail "scapy: $name: xhca-gen $* failed: $(head -c 300 "$tmp/$name.log")"
	fi
}

add rc-send-v4 "op=0x04 hl=12 qpn=0x11 psn=0 pkey=0xffff pad=0 ackreq=1 size=4 ip=4" \
	"${V4[@]}" --op rc-send-only --qpn 0x11 --psn 0 --size 4 --ackreq
add rc-send-v6 "op=0x04 hl=12 qpn=0x11 psn=5 pkey=0xffff pad=0 ackreq=1 size=4 ip=6" \
	"${V6[@]}" --op rc-send-only --qpn 0x11 --psn 5 --size 4 --ackreq
add uc-send-v4 "op=0x24 hl=12 qpn=0x123456 psn=0xabcdef pad=1 ackreq=0 size=7 ip=4" \
	"${V4[@]}" --op uc-send-only --qpn 0x123456 --psn 0xabcdef --size 7
add ud-send-v4 "op=0x64 hl=20 qpn=0x12 psn=7 qkey=0x11111111 sqp=0x13 pad=0 size=8 ip=4" \
	"${V4[@]}" --op ud-send-only --qpn 0x12 --psn 7 --qkey 0x11111111 --sqp 0x13 --size 8
add ud-send-v6 "op=0x64 hl=20 qpn=0x12 psn=8 qkey=0x80010000 sqp=0xfffffe pad=3 size=13 ip=6" \
	"${V6[@]}" --op ud-send-only --qpn 0x12 --psn 8 --qkey 0x80010000 --sqp 0xfffffe --size 13
add ud-send-imm "op=0x65 hl=24 qpn=0x12 qkey=0x22 sqp=0x14 imm=0xcafe0001 pad=2 size=2 ip=4" \
	"${V4[@]}" --op ud-send-only-imm --qpn 0x12 --qkey 0x22 --sqp 0x14 --imm 0xcafe0001 --size 2
add rc-write-only "op=0x0a hl=28 qpn=0x20 psn=1000 va=0x1000 rkey=0x1234 len=64 pad=0 size=64 ip=4" \
	"${V4[@]}" --op rc-write-only --qpn 0x20 --psn 1000 --va 0x1000 --rkey 0x1234 --reth-len 64 --size 64
add rc-write-imm-v6 "op=0x0b hl=32 qpn=0x20 va=0x7f0012345678 rkey=0xabcd len=5 imm=0xdeadbeef pad=3 size=5 ip=6" \
	"${V6[@]}" --op rc-write-only-imm --qpn 0x20 --va 0x7f0012345678 --rkey 0xabcd --reth-len 5 \
	--imm 0xdeadbeef --size 5
add rc-read-req "op=0x0c hl=28 qpn=0x21 psn=77 va=0x2000 rkey=0x42 len=4096 pad=0 size=0 ip=4 ackreq=1" \
	"${V4[@]}" --op rc-read-req --qpn 0x21 --psn 77 --va 0x2000 --rkey 0x42 --reth-len 4096 --size 0 --ackreq
add rc-ack "op=0x11 hl=16 qpn=0x11 psn=9 aeth=1 pad=0 size=0 ip=4" \
	"${V4[@]}" --op rc-ack --qpn 0x11 --psn 9 --size 0
for n in 1 2 3 4 1021; do
	add "pad-size$n" "op=0x04 hl=12 qpn=0x11 pad=$(((4 - n % 4) % 4)) size=$n ip=4" \
		"${V4[@]}" --op rc-send-only --qpn 0x11 --size "$n"
done
add pad-forced "op=0x04 hl=12 qpn=0x11 pad=2 size=8 ip=4" \
	"${V4[@]}" --op rc-send-only --qpn 0x11 --size 8 --pad 2
add vlan "op=0x04 hl=12 qpn=0x11 vlan=100 pad=0 size=16 ip=4" \
	"${V4[@]}" --op rc-send-only --qpn 0x11 --size 16 --vlan 100
add qinq-v6 "op=0x64 hl=20 qpn=0x30 vlan=100,200 qkey=0x5 sqp=0x6 pad=1 size=3 ip=6" \
	"${V6[@]}" --op ud-send-only --qpn 0x30 --qkey 5 --sqp 6 --size 3 --vlan 100,200
add pkey-psn-wrap "op=0x04 hl=12 qpn=0x11 pkey=0x7fff psn=0xfffffe,0xffffff,0x0 pad=0 size=4 ip=4" \
	"${V4[@]}" --op rc-send-only --qpn 0x11 --pkey 0x7fff --psn 0xfffffe --psn-step 1 --count 3 --size 4

# The checker prints the result lines; a crash in it is one more failure.
out=$("$SCAPY_PY" - "$tmp" "$XHCA_TOP/tests" 2>&1 <<'PY'

import logging
import struct
import sys

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.all import IP, UDP, Dot1AD, Dot1Q, Ether, IPv6, raw, rdpcap  # noqa: E402
from scapy.contrib.roce import AETH, BTH  # noqa: E402
from scapy.utils import checksum  # noqa: E402

sys.path.insert(0, sys.argv[2])
from roce_icrc import scapy_icrc  # noqa: E402

tmp = sys.argv[1]




def decode_errors(pkt, exp, i):
    errs = []
    b = pkt[BTH]
    ext = raw(b)[12:-4]  # extension headers, payload, pad

    def want(key, got):
        if key not in exp:
            return
        w = exp[key]
        if "," in w:
            w = w.split(",")[i]
        if got != int(w, 0):
            errs.append(f"{key} {got:#x} != {w}")

    want("op", b.opcode)
    want("qpn", b.dqpn)
    want("psn", b.psn)
    want("pkey", b.pkey)
    want("pad", b.padcount)
    want("ackreq", b.ackreq)
    want("ip", 6 if IPv6 in pkt else 4)
    tags = [t.vlan for t in pkt.iterpayloads() if isinstance(t, (Dot1AD, Dot1Q))]
    if "vlan" in exp and tags != [int(v) for v in exp["vlan"].split(",")]:
        errs.append(f"vlan tags {tags}")
    if "vlan" not in exp and tags:
        errs.append(f"unexpected vlan tags {tags}")

    size, pad, hl = int(exp["size"]), b.padcount, int(exp["hl"])
    if len(ext) != hl - 12 + size + pad:
        errs.append(f"transport length {12 + len(ext)} != hl {hl} + size {size} + pad {pad}")
        return errs
    hdr = ext[: hl - 12]
    if exp["op"] in ("0x64", "0x65"):
        qkey, sqp = struct.unpack("!II", hdr[0:8])
        want("qkey", qkey)
        want("sqp", sqp)
    if exp["op"] in ("0x0a", "0x0b", "0x0c"):
        va, rkey, dlen = struct.unpack("!QII", hdr[0:16])
        want("va", va)
        want("rkey", rkey)
        want("len", dlen)
    if "imm" in exp:
        want("imm", struct.unpack("!I", hdr[-4:])[0])  # ImmDt is the last header
    if "aeth" in exp and AETH not in pkt:
        errs.append("scapy found no AETH")
    payload = ext[hl - 12 : hl - 12 + size]
    if payload != bytes(j & 0xFF for j in range(size)):
        errs.append("payload is not the pattern")
    if ext[hl - 12 + size :] != b"\x00" * pad:
        errs.append("pad bytes not zero")

    udp = pkt[UDP]
    if udp.dport != 4791 or udp.chksum != 0 or udp.len != len(raw(udp)):
        errs.append(f"UDP dport {udp.dport} csum {udp.chksum:#x} len {udp.len}")
    if IP in pkt:
        ip = pkt[IP]
        if checksum(raw(ip)[: ip.ihl * 4]) != 0:
            errs.append("IPv4 header checksum")
        if ip.len != len(raw(ip)):
            errs.append(f"IPv4 total length {ip.len}")
    elif pkt[IPv6].plen != len(raw(pkt[IPv6].payload)):
        errs.append(f"IPv6 payload length {pkt[IPv6].plen}")
    return errs


for line in open(f"{tmp}/cases"):
    name, *kv = line.split()
    exp = dict(x.split("=", 1) for x in kv)
    frames = rdpcap(f"{tmp}/{name}.pcap")
    nwant = len(exp["psn"].split(",")) if "psn" in exp else 1
    icrc_errs, dec_errs = [], []
    if len(frames) != nwant:
        dec_errs.append(f"{len(frames)} frames, want {nwant}")
    for i, f in enumerate(frames[:nwant]):
        pkt = Ether(raw(f))
        if BTH not in pkt:
            dec_errs.append(f"frame {i}: scapy finds no BTH: {pkt.summary()}")
            continue
        ours, theirs = raw(pkt)[-4:], scapy_icrc(pkt)
        if ours != theirs:
            icrc_errs.append(f"frame {i}: ours {ours.hex()} scapy {theirs.hex()}")
        dec_errs += [f"frame {i}: {e}" for e in decode_errors(pkt, exp, i)]
    for what, errs in (("ICRC equals scapy's", icrc_errs), ("scapy decodes the fields", dec_errs)):
        if errs:
            print(f"not ok - scapy: {name}: {what} ({'; '.join(errs)})")
        else:
            print(f"ok - scapy: {name}: {what}")
PY
)
rc=$?
echo "$out"
T_FAILS=$((T_FAILS + $(grep -c '^not ok ' <<<"$out")))
[ "$rc" = 0 ] || fail "scapy: checker exited $rc"
t_done
