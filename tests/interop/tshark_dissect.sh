#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Interop with Wireshark's InfiniBand dissector: frames written by
# xhca-gen --pcap (the C packet builder) must dissect, through tshark, as the
# opcodes, QPNs, PSNs and extension-header fields we asked for, with the
# payload (payload + pad, as tshark counts it) where we put it and nothing
# malformed.
#
# tshark 4.0 dissects UDP port 4791 as RoCEv2 by itself; "-d" makes that
# explicit. The upper-layer protocols that claim InfiniBand payloads
# heuristically (RPC-over-RDMA, SMB Direct, iSER, ...) are disabled: they
# would take the test pattern for their own messages and call it malformed.
#
# XHCA_GEN=/path/to/a/generator overrides build/xhca-gen.
. "$(dirname "$0")/../lib.sh"

GEN=${XHCA_GEN:-$B/xhca-gen}
if [ ! -x "$GEN" ]; then
	skip "interop tshark: $GEN is not built (make)"
	t_done
fi
if ! command -v tshark >/dev/null; then
	skip "interop tshark: tshark is not installed (apt-get install tshark)"
	t_done
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/cases"

tshark_roce_init
TSHARK=("${TSHARK_ROCE[@]}")

FIELDS=(frame.protocols ieee8021ad.id vlan.id ip.version ipv6.version
	infiniband.bth.opcode infiniband.bth.destqp infiniband.bth.psn infiniband.bth.p_key
	infiniband.bth.padcnt infiniband.bth.a infiniband.bth.tver
	infiniband.deth.q_key infiniband.deth.srcqp
	infiniband.reth.va infiniband.reth.r_key infiniband.reth.dmalen
	infiniband.aeth.msn infiniband.atomiceth infiniband.immdt data.len _ws.malformed)

V4=(--src 10.0.0.1 --dst 10.0.0.2 --src-mac 02:00:00:00:00:01 --dst-mac 02:00:00:00:00:02)
V6=(--src fd00::1 --dst fd00::2 --src-mac 02:00:00:00:00:01 --dst-mac 02:00:00:00:00:02)

# add NAME EXPECT GEN-ARGS...: EXPECT is "key=value ..." (see the checker);
# data = the bytes tshark shows after the headers (payload + pad), 0 = none.
add() {
	local name=$1 expect=$2
	shift 2
	if ! "$GEN" --pcap "$tmp/$name.pcap" "$@" >"$tmp/$name.log" 2>&1; then
		fail "tshark: $name: xhca-gen $* failed: $(head -c 300 "$tmp/$name.log")"
		return
	fi
	if ! "${TSHARK[@]}" -r "$tmp/$name.pcap" -T fields -E separator='|' -E occurrence=f \
		$(printf -- '-e %s ' "${FIELDS[@]}") >"$tmp/$name.txt" 2>"$tmp/$name.err"; then
		fail "tshark: $name: tshark failed: $(grep -v 'Running as user' "$tmp/$name.err" | head -c 300)"
		return
	fi
	echo "$name $expect" >>"$tmp/cases"
}

add rc-send-v4 "op=4 qpn=0x11 psn=0 pkey=0xffff pad=0 ackreq=1 data=4 ip=4" \
	"${V4[@]}" --op rc-send-only --qpn 0x11 --psn 0 --size 4 --ackreq
add rc-send-v6 "op=4 qpn=0x11 psn=5 pkey=0xffff pad=1 data=8 ip=6" \
	"${V6[@]}" --op rc-send-only --qpn 0x11 --psn 5 --size 7
add uc-send-only "op=0x24 qpn=0xabcdef psn=0x123456 pad=0 data=32 ip=4" \
	"${V4[@]}" --op uc-send-only --qpn 0xabcdef --psn 0x123456 --size 32
add ud-send-only "op=0x64 qpn=0x12 psn=7 qkey=0x11111111 sqp=0x13 pad=0 data=8 ip=4" \
	"${V4[@]}" --op ud-send-only --qpn 0x12 --psn 7 --qkey 0x11111111 --sqp 0x13 --size 8
# tshark 4.0 stops after the ImmDt of UD SEND_ONLY_IMM (no payload, no ICRC
# shown): no data= here; scapy_icrc.sh checks that payload.
add ud-send-imm-v6 "op=0x65 qpn=0x12 qkey=0x80010000 sqp=0x1 imm=0xcafe0001 pad=2 ip=6" \
	"${V6[@]}" --op ud-send-only-imm --qpn 0x12 --qkey 0x80010000 --sqp 1 --imm 0xcafe0001 --size 2
add rc-write-only "op=0x0a qpn=0x20 psn=1000 va=0x1000 rkey=0x1234 len=64 pad=0 data=64 ip=4" \
	"${V4[@]}" --op rc-write-only --qpn 0x20 --psn 1000 --va 0x1000 --rkey 0x1234 --reth-len 64 --size 64
add rc-write-only-imm "op=0x0b qpn=0x20 va=0xffff800012345678 rkey=0xabcd len=5 imm=0xdeadbeef pad=3 data=8 ip=4" \
	"${V4[@]}" --op rc-write-only-imm --qpn 0x20 --va 0xffff800012345678 --rkey 0xabcd --reth-len 5 \
	--imm 0xdeadbeef --size 5
add rc-read-req "op=0x0c qpn=0x21 psn=77 va=0x2000 rkey=0x42 len=4096 pad=0 data=0 ackreq=1 ip=4" \
	"${V4[@]}" --op rc-read-req --qpn 0x21 --psn 77 --va 0x2000 --rkey 0x42 --reth-len 4096 --size 0 --ackreq
add rc-read-resp-only "op=0x10 qpn=0x21 psn=77 aeth=1 pad=2 data=12 ip=4" \
	"${V4[@]}" --op rc-read-resp-only --qpn 0x21 --psn 77 --size 10
add rc-ack "op=0x11 qpn=0x11 psn=9 aeth=1 data=0 ip=4" \
	"${V4[@]}" --op rc-ack --qpn 0x11 --psn 9 --size 0
add rc-cmp-swap "op=0x13 qpn=0x22 atomic=1 data=0 ip=4" \
	"${V4[@]}" --op rc-cmp-swap --qpn 0x22 --size 0
add vlan "op=4 qpn=0x11 vlan=100 pad=0 data=16 ip=4" \
	"${V4[@]}" --op rc-send-only --qpn 0x11 --size 16 --vlan 100
add qinq "op=0x64 qpn=0x30 vlan=100,200 qkey=5 sqp=6 pad=1 data=4 ip=6" \
	"${V6[@]}" --op ud-send-only --qpn 0x30 --qkey 5 --sqp 6 --size 3 --vlan 100,200
add psn-count "op=4 qpn=0x11 pkey=0x7fff psn=0xfffffe,0x0,0x2 data=4 ip=4" \
	"${V4[@]}" --op rc-send-only --qpn 0x11 --pkey 0x7fff --psn 0xfffffe --psn-step 2 --count 3 --size 4
add tver1 "op=4 qpn=0x11 tver=1 data=4 ip=4" \
	"${V4[@]}" --op rc-send-only --qpn 0x11 --tver 1 --size 4
add cnp "op=0x81 qpn=0x33 ip=4" \
	"${V4[@]}" --op cnp --qpn 0x33 --size 0

# The checker prints the result lines; a crash in it is one more failure.
out=$("$SCAPY_PY" - "$tmp" "${FIELDS[@]}" 2>&1 <<'PY'
import sys

tmp, fields = sys.argv[1], sys.argv[2:]
# expectation key -> tshark field; values compare as integers
num = {
    "op": "infiniband.bth.opcode", "qpn": "infiniband.bth.destqp",
    "psn": "infiniband.bth.psn", "pkey": "infiniband.bth.p_key",
    "pad": "infiniband.bth.padcnt", "ackreq": "infiniband.bth.a",
    "tver": "infiniband.bth.tver", "qkey": "infiniband.deth.q_key",
    "sqp": "infiniband.deth.srcqp", "va": "infiniband.reth.va",
    "rkey": "infiniband.reth.r_key", "len": "infiniband.reth.dmalen",
    "imm": "infiniband.immdt",
}
present = {"aeth": "infiniband.aeth.msn", "atomic": "infiniband.atomiceth"}


def as_int(key, v):
    return int(v, 16) if key == "imm" else int(v, 0)  # ImmDt is shown as bytes


for line in open(f"{tmp}/cases"):
    name, *kv = line.split()
    exp = dict(x.split("=", 1) for x in kv)
    rows = [r.rstrip("\n").split("|") for r in open(f"{tmp}/{name}.txt") if r.strip()]
    nwant = len(exp["psn"].split(",")) if "psn" in exp else 1
    errs = [] if len(rows) == nwant else [f"{len(rows)} frames, want {nwant}"]
    for i, row in enumerate(rows[:nwant]):
        f = dict(zip(fields, row + [""] * len(fields)))
        e = []
        if "infiniband" not in f["frame.protocols"].split(":"):
            e.append(f"not dissected as InfiniBand: {f['frame.protocols']}")
        if f["_ws.malformed"]:
            e.append("malformed")
        for key, field in num.items():
            if key not in exp:
                continue
            w = exp[key].split(",")[i] if "," in exp[key] else exp[key]
            got = f[field]
            if not got:
                e.append(f"{field} missing")
            elif as_int(key, got) != int(w, 0):
                e.append(f"{field} {got} != {w}")
        for key, field in present.items():
            if (key in exp) != bool(f[field]):
                e.append(f"{field} {'missing' if key in exp else 'unexpected'}")
        tags = [int(t) for t in (f["ieee8021ad.id"], f["vlan.id"]) if t]
        if tags != [int(t) for t in exp.get("vlan", "").split(",") if t]:
            e.append(f"VLAN ids {tags}")
        if f["ip.version" if exp["ip"] == "4" else "ipv6.version"] != exp["ip"]:
            e.append(f"not IPv{exp['ip']}")
        if "data" in exp and int(f["data.len"] or 0) != int(exp["data"]):
            e.append(f"data.len {f['data.len'] or 0} != {exp['data']}")
        errs += [f"frame {i}: {x}" for x in e]
    if errs:
        print(f"not ok - tshark: {name} ({'; '.join(errs)})")
    else:
        print(f"ok - tshark: {name}")
PY
)
rc=$?
echo "$out"
T_FAILS=$((T_FAILS + $(grep -c '^not ok ' <<<"$out")))
[ "$rc" = 0 ] || fail "tshark: checker exited $rc"
t_done
