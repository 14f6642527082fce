# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Shared helpers for the shell tests: result lines, a two-namespace veth
# topology that is always removed on exit, and xhcad start/stop.
#
# Result lines (counted by tests/run.sh): "ok - NAME", "not ok - NAME",
# "skip - NAME: why". A script exits 0 when nothing failed.

XHCA_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B=${XHCA_BUILD:-$XHCA_TOP/build} # make test SANITIZE=1: build/sanitize
SCAPY_PY=/usr/bin/python3
T_FAILS=0

pass() { echo "ok - $*"; }
fail() { echo "not ok - $*"; T_FAILS=$((T_FAILS + 1)); }
skip() { echo "skip - $*"; }
# check NAME CMD...: runs CMD, passes when it exits 0. (No local variable:
# a CMD of eval '... $k ...' reads the caller's k, which a local here of the
# same name would hide.)
check() { if "${@:2}"; then pass "$1"; else fail "$1"; fi; }
# check_eq NAME GOT WANT
check_eq() {
	if [ "$2" == "$3" ]; then pass "$1"; else fail "$1 (got '$2', want '$3')"; return 1; fi
}
t_done() { exit $((T_FAILS > 0)); }

need_root() {
	if [ "$(id -u)" != 0 ]; then skip "$1: needs root"; exit 0; fi
}

# need_cmds NAME CMD...: the test NAME skipped, and ended, unless every CMD
# is installed (make deps installs them)
need_cmds() {
	local name=$1 c
	shift
	for c in "$@"; do
		command -v "$c" >/dev/null || { skip "$name: $c is not installed (make deps)"; exit 0; }
	done
}

# bpffs is not mounted at boot on this machine.
ensure_bpffs() {
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
}

# topo_setup: namespaces NS_A (xhcad side, IF_A, 10.77.0.1, fd77::1) and NS_B
# (traffic side, IF_B, 10.77.0.2, fd77::2), joined by a veth pair of
# TOPO_QUEUES queues each way (default 2). Names carry
# the PID so a leftover from a killed run cannot collide.
topo_setup() {
	topo_names || return 1
	local q=${TOPO_QUEUES:-2}
	ip link add "$IF_A" numrxqueues "$q" numtxqueues "$q" netns "$NS_A" type veth \
		peer name "$IF_B" numrxqueues "$q" numtxqueues "$q" netns "$NS_B" || return 1
	topo_ends
	return 0
}

# topo_names: the topology's names (with the PID) and addresses, cleanup on
# exit, NS_A and NS_B made.
topo_names() {
	local id=$(( $$ % 100000 ))
	NS_A=xhca-a-$id NS_B=xhca-b-$id IF_A=xa$id IF_B=xb$id
	MAC_A=02:77:00:00:00:01 MAC_B=02:77:00:00:00:02
	IP_A=10.77.0.1 IP_B=10.77.0.2 IP6_A=fd77::1 IP6_B=fd77::2
	trap topo_cleanup EXIT
	trap 'exit 130' INT TERM
	ensure_bpffs
	ip netns add "$NS_A" && ip netns add "$NS_B"
}

# topo_ends: the two hosts' ends of the topology (IF_A in NS_A, IF_B in
# NS_B, made already): MACs, addresses, up (with TOPO_MTU if set), offloads,
# neighbour entries.
topo_ends() {
	ip -n "$NS_A" link set "$IF_A" address $MAC_A
	ip -n "$NS_B" link set "$IF_B" address $MAC_B
	ip -n "$NS_A" addr add $IP_A/24 dev "$IF_A"
	ip -n "$NS_B" addr add $IP_B/24 dev "$IF_B"
	ip -n "$NS_A" -6 addr add $IP6_A/64 dev "$IF_A" nodad
	ip -n "$NS_B" -6 addr add $IP6_B/64 dev "$IF_B" nodad
	for ns in "$NS_A" "$NS_B"; do ip -n "$ns" link set lo up; done
	ip -n "$NS_A" link set "$IF_A" ${TOPO_MTU:+mtu "$TOPO_MTU"} up
	ip -n "$NS_B" link set "$IF_B" ${TOPO_MTU:+mtu "$TOPO_MTU"} up
	# Checksum offload would leave wrong UDP checksums for XDP and scapy;
	# VLAN offload would hide tags from XDP. Frames sent by XDP_TX into a
	# veth need NAPI on the peer: GRO on turns it on without a program.
	in_a ethtool -K "$IF_A" tx off rxvlan off txvlan off gro on >/dev/null 2>&1
	in_b ethtool -K "$IF_B" tx off rxvlan off txvlan off gro on >/dev/null 2>&1
	ip -n "$NS_A" neigh replace $IP_B lladdr $MAC_B dev "$IF_A"
	ip -n "$NS_B" neigh replace $IP_A lladdr $MAC_A dev "$IF_B"
}

# topo_setup_mid: as topo_setup, but IF_A and IF_B each on a veth into a
# third namespace NS_M, whose bridge joins MA (IF_A's peer) and MB (IF_B's):
# traffic between two xhca hosts can be captured (on MA) and impaired there
# (tc ingress of MA and MB), where no XDP program hides it.
topo_setup_mid() {
	local id=$(( $$ % 100000 ))
	NS_M=xhca-m-$id MA=ma$id MB=mb$id
	topo_names && ip netns add "$NS_M" || return 1
	ip link add "$IF_A" numrxqueues 2 numtxqueues 2 netns "$NS_A" type veth \
		peer name "$MA" netns "$NS_M" || return 1
	ip link add "$IF_B" numrxqueues 2 numtxqueues 2 netns "$NS_B" type veth \
		peer name "$MB" netns "$NS_M" || return 1
	ip -n "$NS_M" link add br0 type bridge || return 1
	ip -n "$NS_M" link set "$MA" master br0
	ip -n "$NS_M" link set "$MB" master br0
	ip -n "$NS_M" link set lo up
	for l in "$MA" "$MB" br0; do ip -n "$NS_M" link set "$l" mtu "${MID_MTU:-1500}" up; done
	for l in "$MA" "$MB"; do
		ip netns exec "$NS_M" ethtool -K "$l" tx off rxvlan off txvlan off >/dev/null 2>&1
	done
	TOPO_MTU=${MID_MTU:-1500} topo_ends
	ip -n "$NS_A" -6 neigh replace $IP6_B lladdr $MAC_B dev "$IF_A"
	ip -n "$NS_B" -6 neigh replace $IP6_A lladdr $MAC_A dev "$IF_B"
	return 0
}

# tshark_roce_init: TSHARK_ROCE, tshark with UDP port 4791 dissected as
# RoCEv2 and the upper protocols tshark would guess from payload bytes
# (RPC-over-RDMA, SMB Direct, iSER, ...) off: test payloads are patterns.
tshark_roce_init() {
	local p
	TSHARK_ROCE=(tshark -n -d udp.port==4791,infiniband)
	for p in $(tshark -G protocols 2>/dev/null | awk -F'\t' '{print $3}' |
		grep -xE 'rpcordma|smb_direct|iser|nvme-rdma|lnet|smc|infiniband_sdp|fcoib|drbd'); do
		TSHARK_ROCE+=(--disable-protocol "$p")
	done
}

# roce_interop WHAT PCAP MIN [OPCODES...]: tshark dissects more than MIN
# RoCE frames of PCAP, none malformed; the capture has every BTH opcode
# given (numbers); with ICRC=1 (a capture of whole frames), scapy computes
# every ICRC as the frames carry it.
roce_interop() {
	local what=$1 pcap=$2 min=$3 n bad ops o missing= out rc
	shift 3
	tshark_roce_init
	n=$("${TSHARK_ROCE[@]}" -r "$pcap" -Y infiniband 2>/dev/null | wc -l)
	bad=$("${TSHARK_ROCE[@]}" -r "$pcap" -Y "_ws.malformed || _ws.expert.severity >= error" \
		2>/dev/null | wc -l)
	check "interop: tshark dissects $n RoCE frames of $what, none malformed ($bad)" \
		test "$n" -gt "$min" -a "$bad" = 0
	if [ $# -gt 0 ]; then
		ops=" $("${TSHARK_ROCE[@]}" -r "$pcap" -T fields -e infiniband.bth.opcode 2>/dev/null |
			sort -un | tr '\n' ' ')"
		for o in "$@"; do case "$ops" in *" $o "*) ;; *) missing+=" $o" ;; esac; done
		check_eq "interop: $what has the opcodes $* (it has$ops)" "${missing:-none} missing" \
			"none missing"
	fi
	if [ "${ICRC:-0}" = 1 ]; then
		out=$("$SCAPY_PY" "$XHCA_TOP/tests/pcap_icrc.py" "$pcap")
		rc=$?
		check "interop: scapy computes every ICRC of $what as the frames carry it ($out)" \
			test "$rc" = 0
	fi
}

# nsenter --net keeps the mount namespace (unlike ip netns exec, which remounts
# /sys): pinned maps stay visible across daemon restarts.
in_a() { nsenter --net=/run/netns/"$NS_A" "$@"; }
in_b() { nsenter --net=/run/netns/"$NS_B" "$@"; }

# listening NS PORT: a TCP socket listens on PORT in namespace NS;
# wait_listen NS PORT: waits for one (10 s at most).
listening() { ip netns exec "$1" ss -Hltn "sport = :$2" 2>/dev/null | grep -q LISTEN; }
wait_listen() { for _ in $(seq 200); do listening "$1" "$2" && return 0; sleep 0.05; done; return 1; }

# cap_start NS IF FILE FILTER [TSHARK ARGS]: tshark captures IF in namespace
# NS into FILE in the background (CAP: its pid) and is ready when this
# returns: dumpcap reports "Capturing on" a moment before its filter is in
# place, so a little more time after it. cap_stop: ends it, frames written.
# A kernel buffer of 32 MiB, not dumpcap's 2: a burst of WRITEs (rc_demo's
# 4 MiB) outran the default on a loaded machine (make test-sanitize) and
# the capture lost the burst's last frame.
cap_start() {
	local ns=$1 ifn=$2 file=$3 filter=$4
	shift 4
	rm -f "$file.err"
	(exec nsenter --net=/run/netns/"$ns" tshark -n -i "$ifn" -B 32 -w "$file" -f "$filter" "$@" \
		>/dev/null 2>"$file.err") &
	CAP=$!
	for _ in $(seq 50); do grep -q "Capturing on" "$file.err" 2>/dev/null && break; sleep 0.1; done
	sleep 0.3
}
cap_stop() {
	sleep 0.5
	kill -TERM "$CAP" 2>/dev/null
	wait "$CAP" 2>/dev/null
	CAP=
}

# two_hosts NAME MB [ARGS...]: two xhca hosts (topo_setup_mid, MTU 3000: room
# for path MTU 2048; MID_MTU=4200 for 4096), an xhcad on each end with MB MiB of host memory
# (ARGS: more for A's; XHCAD_LOG=tmp: A's log in $tmp/xhcad-a.log), a
# scratch folder tmp; the test ends on a failure; everything (an rctest
# driver's FIFO, an impairment's output) removed on exit. XHCAD_B_ARGS: more
# for B's.
two_hosts() {
	local name=$1 mb=$2
	shift 2
	MID_MTU=${MID_MTU:-3000} topo_setup_mid || { fail "$name: topology"; t_done; }
	tmp=$(mktemp -d)
	trap 'exec 3>&- 2>/dev/null; topo_cleanup; rm -rf "$tmp" ${IMPAIR_OUT:+"$IMPAIR_OUT"}' EXIT
	[ "${XHCAD_LOG:-}" = tmp ] && XHCAD_LOG=$tmp/xhcad-a.log
	xhcad_start --hostmem-mb "$mb" "$@" || { fail "$name: xhcad on $IF_A"; t_done; }
	# shellcheck disable=SC2086 # (words: options)
	xhcad_start_b --hostmem-mb "$mb" ${XHCAD_B_ARGS:-} || { fail "$name: xhcad on $IF_B"; t_done; }
}

# links_up: waits (5 s at most) for both hosts' links to run: a port is
# ACTIVE once its link runs (perftest refuses a DOWN port), and the veths'
# carrier comes a moment after they are set up.
links_up() {
	for _ in $(seq 100); do
		ip -n "$NS_A" link show "$IF_A" | grep -q 'state UP' &&
			ip -n "$NS_B" link show "$IF_B" | grep -q 'state UP' && return 0
		sleep 0.05
	done
	return 1
}

# xa/xb ARGS...: a program through `xhca exec` on host A (in NS_A, IF_A's
# device) or B.
xa() { in_a "$B/xhca" -i "$IF_A" exec -- "$@"; }
xb() { in_b "$B/xhca" -i "$IF_B" exec -- "$@"; }

# exec_pair NAME SECS READY 'SERVER' 'CLIENT': SERVER on A (xa), then CLIENT
# on B once the command READY succeeds (tried for 5 s), each under a
# timeout of SECS (exit 124: it ran out); both must exit 0. Their output in
# $tmp/NAME.srv and $tmp/NAME.cli.
exec_pair() {
	local name=$1 secs=$2 ready=$3 srv=$4 cli=$5 spid rs rc
	xa timeout "$secs" $srv >"$tmp/$name.srv" 2>&1 &
	spid=$!
	for _ in $(seq 100); do eval "$ready" && break; sleep 0.05; done
	xb timeout "$secs" $cli >"$tmp/$name.cli" 2>&1
	rc=$?
	wait "$spid"
	rs=$?
	if [ "$rs" != 0 ] || [ "$rc" != 0 ]; then
		fail "$name: server exit $rs, client exit $rc"
		tail -n 5 "$tmp/$name.srv" "$tmp/$name.cli" | sed 's/^/    /'
		return 1
	fi
	return 0
}

# prog_checks NAME OUTPUT_FILE EXIT: a test program's output, whose lines
# are its checks ("ok - ...", "not ok - ..."), shown; more than 5 ran, none
# failed, it exited 0.
prog_checks() {
	sed 's/^/  /' "$2"
	grep -q '^not ok' "$2" && fail "$1: see above"
	check "$1: $(grep -c '^ok' "$2") checks ran, exit $3" test "$3" = 0 -a "$(grep -c '^ok' "$2")" -gt 5
}

# rct CASE ARGS...: xhca-rctest's CASE between A and B, with its ARGS
# (RCT_IP_A, RCT_IP_B: other addresses than IP_A, IP_B). Its checks print
# themselves; a non-zero exit (a failed check, or it died: exit 2, no "not
# ok" line) is a failure too.
rct() {
	"$B/xhca-rctest" "$1" "$IF_A" "${RCT_IP_A:-$IP_A}" "$IF_B" "${RCT_IP_B:-$IP_B}" "${@:2}"
	local rc=$?
	[ "$rc" = 0 ] || fail "xhca-rctest $*: exit $rc"
	return "$rc"
}

# impair_start ARGS...: xhca-impair on MA and MB in NS_M (topo_setup_mid)
# with ARGS (--drop PCT, --dup PCT, --reorder PCT), in the background
# (IMPAIR: its pid, IMPAIR_OUT: its output); returns once it is attached.
# impair_stop: detaches it; IMPAIR_STATS is its counters, one line per
# direction ("ma>mb seen N passed N dropped N ...").
impair_start() {
	IMPAIR_OUT=$(mktemp)
	(exec nsenter --net=/run/netns/"$NS_M" "$B/xhca-impair" "$MA" "$MB" "$@" \
		>"$IMPAIR_OUT" 2>&1) &
	IMPAIR=$!
	for _ in $(seq 50); do
		grep -q "^attached" "$IMPAIR_OUT" && return 0
		kill -0 "$IMPAIR" 2>/dev/null || break
		sleep 0.1
	done
	cat "$IMPAIR_OUT" >&2
	return 1
}
impair_stop() {
	kill -TERM "$IMPAIR" 2>/dev/null
	wait "$IMPAIR" 2>/dev/null
	IMPAIR_STATS=$(grep ">" "$IMPAIR_OUT")
	rm -f "$IMPAIR_OUT"
	IMPAIR=
}
# impair_sum FIELD: FIELD (dropped, held, ...) of IMPAIR_STATS, both directions.
impair_sum() {
	echo "$IMPAIR_STATS" | awk -v f="$1" '{ for (i = 2; i < NF; i += 2) if ($i == f) n += $(i + 1) } END { print n + 0 }'
}

# rct_start DIR CASE: xhca-rctest's CASE between A and B in the
# background, driven through its pauses: its stdin is a FIFO in DIR held on
# fd 3 (rct_go lets it on), its output DIR/out (RCT_OUT), its pid RCT.
# rct_pause N: waits for its Nth "# pause" line (1 if it ended first).
rct_start() {
	RCT_OUT=$1/out
	mkfifo "$1/in"
	"$B/xhca-rctest" "$2" "$IF_A" "$IP_A" "$IF_B" "$IP_B" <"$1/in" >"$RCT_OUT" 2>&1 &
	RCT=$!
	exec 3>"$1/in"
}
rct_pause() {
	for _ in $(seq 300); do
		[ "$(grep -c '^# pause' "$RCT_OUT")" -ge "$1" ] && return 0
		kill -0 "$RCT" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
rct_go() { echo go >&3; }
# rct_end NAME MIN: waits for it; its lines shown; at least MIN checks ran,
# none failed, it exited 0.
rct_end() {
	wait "$RCT"
	local rc=$? n
	grep -v "^# pause" "$RCT_OUT" | sed 's/^/  /'
	n=$(grep -c '^ok' "$RCT_OUT")
	grep -q "^not ok" "$RCT_OUT" && fail "$1: see above"
	check "$1: the application's checks ran ($n ok) and it exited 0 ($rc)" \
		test "$rc" = 0 -a "$n" -ge "$2"
}

XHCAD_PIDS=()
# xhcad_in NS IF LOG ARGS...: starts xhcad on IF in NS, waits for its socket;
# XHCAD_STARTED is its pid (nsenter execs xhcad in place: the daemon itself).
xhcad_in() {
	local ns=$1 ifn=$2 log=$3 i
	shift 3
	nsenter --net=/run/netns/"$ns" "$B/xhcad" "$ifn" "$@" >>"$log" 2>&1 &
	XHCAD_STARTED=$!
	XHCAD_PIDS+=("$XHCAD_STARTED")
	for i in $(seq 100); do
		[ -S /run/xhca/"$ifn".sock ] && "$B/xhca" -i "$ifn" status >/dev/null 2>&1 && return 0
		kill -0 "$XHCAD_STARTED" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}
# xhcad_start ARGS...: xhcad on IF_A in NS_A (XHCAD_PID).
xhcad_start() {
	xhcad_in "$NS_A" "$IF_A" "${XHCAD_LOG:-/dev/null}" "$@"
	local rc=$?
	XHCAD_PID=$XHCAD_STARTED
	return $rc
}
# xhcad_start_b ARGS...: a second xhcad, on IF_B in NS_B (two xhca hosts).
xhcad_start_b() {
	xhcad_in "$NS_B" "$IF_B" "${XHCAD_LOG_B:-/dev/null}" "$@"
	local rc=$?
	XHCAD_PID_B=$XHCAD_STARTED
	return $rc
}

# xhcad_stop [SIGNAL]: stops the last xhcad and waits for it.
xhcad_stop() {
	[ -n "${XHCAD_PID:-}" ] || return 0
	kill -"${1:-TERM}" "$XHCAD_PID" 2>/dev/null
	wait "$XHCAD_PID" 2>/dev/null
	XHCAD_RC=$?
	XHCAD_PID=
}

xhca() { "$B/xhca" -i "$IF_A" "$@"; }

# stat_of REASON [QPN]: the packet count of one reason from xhca stats -j.
stat_of() {
	xhca stats -j | "$SCAPY_PY" -c 'import json,sys; print(json.load(sys.stdin)["reasons"]["'"$1"'"]["packets"])'
}

topo_cleanup() {
	local p
	for p in "${XHCAD_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${XHCAD_PIDS[@]}"; do wait "$p" 2>/dev/null; done
	[ -n "${NS_A:-}" ] && ip netns pids "$NS_A" 2>/dev/null | xargs -r kill -9 2>/dev/null
	[ -n "${NS_B:-}" ] && ip netns pids "$NS_B" 2>/dev/null | xargs -r kill -9 2>/dev/null
	[ -n "${NS_M:-}" ] && ip netns pids "$NS_M" 2>/dev/null | xargs -r kill -9 2>/dev/null
	[ -n "${NS_A:-}" ] && ip netns del "$NS_A" 2>/dev/null
	[ -n "${NS_B:-}" ] && ip netns del "$NS_B" 2>/dev/null
	[ -n "${NS_M:-}" ] && ip netns del "$NS_M" 2>/dev/null
	[ -n "${IF_A:-}" ] && rm -rf /sys/fs/bpf/xhca/"$IF_A" /run/xhca/"$IF_A".sock \
		/run/xhca/"$IF_A".state /run/xhca/"$IF_A".lo /run/xhca/"$IF_A".ib
	[ -n "${IF_B:-}" ] && rm -rf /sys/fs/bpf/xhca/"$IF_B" /run/xhca/"$IF_B".sock \
		/run/xhca/"$IF_B".state /run/xhca/"$IF_B".lo /run/xhca/"$IF_B".ib
	[ -n "${IF_A:-}" ] && rm -rf /sys/fs/bpf/xdp/globals/xhca_* 2>/dev/null
	return 0
}

# jq-like field access with the Python that has json: json_get 'd["qps"][0]["epsn"]'
json_get() { "$SCAPY_PY" -c 'import json,sys; d=json.load(sys.stdin); print('"$1"')'; }

# stats_snap FILE: saves the counters; stats_delta FILE REASON: packets since.
stats_snap() { xhca -j stats >"$1"; }
stats_delta() {
	local now
	now=$(xhca -j stats) || return 1
	"$SCAPY_PY" - "$1" "$2" "$now" <<'PY'
import json, sys
old = json.load(open(sys.argv[1]))["reasons"]
new = json.loads(sys.argv[3])["reasons"]
print(new[sys.argv[2]]["packets"] - old[sys.argv[2]]["packets"])
PY
}
# stats_changed FILE [REASON]: names of the reasons whose packet count moved,
# sorted. The kernel's own ARP, neighbour discovery and MLD traffic moves
# pass_not_roce and pass_ipv6_ext at any time: they are left out unless they
# are the REASON under test.
stats_changed() {
	local now
	now=$(xhca -j stats) || return 1
	"$SCAPY_PY" - "$1" "$now" "${2:-}" <<'PY'
import json, sys
old = json.load(open(sys.argv[1]))["reasons"]
new = json.loads(sys.argv[2])["reasons"]
noise = {"pass_not_roce", "pass_ipv6_ext"} - {sys.argv[3]}
print(" ".join(sorted(k for k in new
                      if k not in noise and new[k]["packets"] != old.get(k, {}).get("packets", 0))))
PY
}

# gen ARGS...: xhca-gen from NS_B towards IF_A.
gen() { in_b "$B/xhca-gen" -i "$IF_B" --dst-mac "$MAC_A" --src "$IP_B" --dst "$IP_A" "$@" >/dev/null; }

# atomic_trio QPN PSN VA RKEY OLD: the ATOMIC semantics check's three requests
# on the word at VA, whose value is OLD: FETCH_ADD 5, a CMP_SWAP that matches
# (OLD + 5 -> 0x1122334455667788), one that does not (7 -> 9). PSNs PSN..PSN+2.
atomic_trio() {
	gen --op rc-fetch-add --qpn "$1" --psn "$2" --va "$3" --rkey "$4" --swap-add 5
	gen --op rc-cmp-swap --qpn "$1" --psn $(($2 + 1)) --va "$3" --rkey "$4" \
		--compare "$(printf %u "$(($5 + 5))")" --swap-add 0x1122334455667788
	gen --op rc-cmp-swap --qpn "$1" --psn $(($2 + 2)) --va "$3" --rkey "$4" --compare 7 \
		--swap-add 9
}

# qp_up TYPE [ARGS for the rtr modify]: creates a QP, brings it to RTR with
# this topology's addresses (RC/UC), prints its QPN.
qp_up() {
	local type=$1 qpn; shift
	qpn=$(xhca -j qp create --type "$type" ${QP_CREATE_ARGS:-} | json_get 'd["qpn"]') || return 1
	xhca qp modify "$qpn" --state init >/dev/null || return 1
	if [ "$type" = ud ]; then
		xhca qp modify "$qpn" --state rtr "$@" >/dev/null || return 1
	else
		xhca qp modify "$qpn" --state rtr --local-ip "$IP_A" --remote-ip "$IP_B" "$@" \
			>/dev/null || return 1
	fi
	echo "$qpn"
}

# xdp_prog_id NS IF: id of the XDP program attached to IF (empty if none).
xdp_prog_id() {
	ip -n "$1" -d link show "$2" | sed -n 's/.*prog\/xdp id \([0-9]*\).*/\1/p' | head -n 1
}

# Applications in NS_A (xhca-recv, xhca-apptest). APP_DIR holds their output.
APPS=()
# app NAME CMD...: starts CMD in NS_A, stdout in $APP_DIR/NAME, stderr in
# $APP_DIR/NAME.err; PID_NAME is the application's own pid (nsenter execs it,
# so a signal reaches it, not a subshell).
app() {
	local name=$1; shift
	nsenter --net=/run/netns/"$NS_A" "$@" >"$APP_DIR/$name" 2>"$APP_DIR/$name.err" &
	APPS+=("$!")
	eval "PID_$name=$!"
}
# app_fed NAME FD CMD...: as app, with the application's stdin a fifo held
# open on fd FD of the caller (write "go" and the like to it; close FD to
# send EOF).
app_fed() {
	local name=$1 fd=$2; shift 2
	rm -f "$APP_DIR/$name.in"
	mkfifo "$APP_DIR/$name.in"
	eval "exec $fd<>\"\$APP_DIR/\$name.in\""
	nsenter --net=/run/netns/"$NS_A" "$@" <"$APP_DIR/$name.in" >"$APP_DIR/$name" \
		2>"$APP_DIR/$name.err" &
	APPS+=("$!")
	eval "PID_$name=$!"
}
# ready NAME: waits for the application's JSON ready line, prints its QPN.
ready() {
	local i
	for i in $(seq 100); do
		if grep -q '"ready"' "$APP_DIR/$1" 2>/dev/null; then
			grep '"ready"' "$APP_DIR/$1" | head -n 1 | json_get 'd["qpn"]'
			return 0
		fi
		sleep 0.05
	done
	echo "app $1 not ready: $(cat "$APP_DIR/$1.err")" >&2
	return 1
}
apps_kill() {
	local p
	for p in "${APPS[@]}"; do kill -9 "$p" 2>/dev/null; done
	return 0
}

# ---- a system booted in a container: integ/service.sh, fresh/fresh.sh -----------
# systemd is not PID 1 here: a container (systemd-nspawn -b) has it. The
# caller runs in a mount namespace of its own (unshare -m), whose mounts go
# with it; ct_cleanup stops the container and unmounts them at once.
CT_NSPAWN= CT_INIT=

# ct_root DIR LOWER: DIR becomes a tmpfs holding the container's root,
# DIR/root: an overlay in memory over LOWER (bound read-only, without the
# mounts under it), with a machine id of its own; and DIR/bpffs, a bpffs
# instance of its own (its pins go with it).
ct_root() {
	local d=$1
	mount -t tmpfs tmpfs "$d" && mkdir -p "$d"/{lower,upper,work,root,bpffs} &&
		mount --bind "$2" "$d/lower" && mount -o remount,bind,ro "$d/lower" &&
		mount -t bpf bpf "$d/bpffs" &&
		mount -t overlay overlay -o "lowerdir=$d/lower,upperdir=$d/upper,workdir=$d/work" \
			"$d/root" || return 1
	rm -f "$d/root/etc/machine-id"
	systemd-machine-id-setup --root="$d/root" >/dev/null 2>&1
}

# ct_boot DIR [NSPAWN ARGS...]: boots DIR/root (ct_root) with systemd as PID
# 1, a network namespace of its own (only lo), every capability, bpf()
# allowed and DIR/bpffs at /sys/fs/bpf; its console in DIR/console.
# CT_NSPAWN is nspawn's pid, CT_INIT the container's systemd (as this machine
# numbers it). Returns once systemd says it is running (or degraded), 1 when
# it does not within a minute.
ct_boot() {
	local d=$1
	shift
	systemd-nspawn -D "$d/root" --register=no --keep-unit -q -b --private-network \
		--capability=all --system-call-filter='bpf perf_event_open' \
		--bind="$d/bpffs:/sys/fs/bpf" "$@" -- --unit=multi-user.target >"$d/console" 2>&1 &
	CT_NSPAWN=$!
	for _ in $(seq 600); do
		CT_INIT=$(ps -o pid=,comm= --ppid "$CT_NSPAWN" | awk '$2 == "systemd" {print $1}')
		[ -n "$CT_INIT" ] && c systemctl is-system-running 2>/dev/null | grep -qE 'running|degraded' &&
			return 0
		kill -0 "$CT_NSPAWN" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# ct_cleanup DIR: the container stopped (its systemd shuts it down; killed
# after 10 s), DIR's mounts gone, DIR removed. Its network namespace, and
# with it its interfaces and their XDP programs, ends with its processes.
ct_cleanup() {
	if [ -n "$CT_NSPAWN" ]; then
		kill -TERM "$CT_NSPAWN" 2>/dev/null
		for _ in $(seq 100); do kill -0 "$CT_NSPAWN" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$CT_NSPAWN" 2>/dev/null
		wait "$CT_NSPAWN" 2>/dev/null
		CT_NSPAWN=
	fi
	# (never rm -r: a root file system is bound under DIR)
	umount -R -l "$1" 2>/dev/null
	rmdir "$1"
}

# c CMD...: CMD in the container (all its namespaces); cq: its output dropped
c() { nsenter -t "$CT_INIT" -a "$@"; }
cq() { c "$@" >/dev/null 2>&1; }
# cgrep RE CMD...: CMD in the container prints a line that RE matches
cgrep() { local re=$1; shift; c "$@" 2>/dev/null | grep -q -- "$re"; }

# ct_unit_no_device: xhcad@.service as installed, but for its BindsTo= and
# After= on sys-subsystem-net-devices-%i.device, in /etc/systemd/system: a
# container has no udev, so no device units, and the unit would wait for one
# that never comes.
ct_unit_no_device() {
	c sh -c "grep -v '^BindsTo=\|^After=sys-subsystem' /lib/systemd/system/xhcad@.service \
		>/etc/systemd/system/xhcad@.service && systemctl daemon-reload"
}
