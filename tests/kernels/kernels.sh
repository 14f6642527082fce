#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# xhca on the kernels Debian 12 offers (make test-kernels): each kernel
# package (KERNELS, default "6.1 6.12": bookworm's own and its newer one;
# 6.1 also the RXE harness's) boots in a qemu guest whose root is this
# host's, shared read-only (image.sh build xhca SERIES, init): the guest runs
# this build's xhcad, xhca and verbs library on its virtio NIC, native XDP,
# against this host's xhcad over a tap and a bridge. Unmodified
# ibv_rc_pingpong, ib_write_bw, ib_read_bw, ib_send_bw and rping run between
# the two xhcas, the guest the server and then the client (the guest's
# xhca_rx sending its ACKs by XDP_TX: --xdp-ack auto, on for virtio_net). Then the
# fallbacks' own checks: the start line and xhca status name what the kernel
# lacks (bpf_dynptr_copy before 6.15, AF_XDP multi-buffer before 6.6); a
# WRITE xhca_rx cannot place without the kfunc goes to xhcad, counted
# (xlate_nocopy), the others are placed by xhca_rx. At link MTU 4200: before
# 6.3 virtio_net has no XDP multi-buffer, so native XDP is refused (with
# --mode native, naming the reason; by default xhcad serves in skb mode,
# saying why), and without AF_XDP multi-buffer the port offers
# 2048, a QP is refused 4096 naming why, and 2048-byte packets flow; with
# both (6.12) native XDP serves and 4096-byte packets flow.
# On a veth pair of two queues in the guest `--steer on` loads xhca_steer
# onto the clsact egress hook of the guest's kernel, and takes it down with
# its qdisc at exit.
# KERNELS_CASES="read_bw mtu4200" runs some (names as in CASES);
# KERNELS_KEEP=DIR keeps the run's files (both ends' output, the guests'
# consoles and xhcad logs).
. "$(dirname "$0")/../lib.sh"
here=$XHCA_TOP/tests/interop/rxe
. "$here/vm.sh"
VM_HERE=$here VM_IMAGE=xhca

KERNELS=${KERNELS:-6.1 6.12}
CASES="boot start rc_pingpong write_bw read_bw send_bw rping nocopy steer mtu4200"
want() { [ -z "${KERNELS_CASES:-}" ] || [[ " $KERNELS_CASES " == *" $1 "* ]]; }
skip_all() {
	local c k
	for k in $KERNELS; do
		for c in $CASES; do skip "kernels: $k: $c: $1"; done
	done
	t_done
}
[ "$(id -u)" = 0 ] || skip_all "needs root"
for p in "$VM_QEMU" ibv_rc_pingpong ib_write_bw rping cpio depmod; do
	command -v "$p" >/dev/null || [ -x /usr/sbin/$p ] || skip_all "$p is not installed (make deps)"
done
[ -e /dev/net/tun ] || skip_all "no /dev/net/tun for the guest's NIC"

tmp=$(mktemp -d)
# guest_done: what the guest's xhca counted, kept; the guest off
guest_done() {
	[ -n "${VM_PID:-}" ] && vm_run xs "$B/xhca -i eth0 -j stats; $B/xhca -i eth0 status" 20 \
		>/dev/null && vm_out xs >"$tmp/guest-xhca-$SERIES.txt"
	vm_stop
}
cleanup() {
	guest_done
	"$B/xhca" -i "$IF_A" status >"$tmp/xhca-host-status.txt" 2>&1
	[ -n "${KERNELS_KEEP:-}" ] && mkdir -p "$KERNELS_KEEP" && cp -r "$tmp"/. "$KERNELS_KEEP"/
	topo_cleanup
	rm -rf "$tmp"
}
trap 'exit 130' INT TERM # (the EXIT trap then cleans up)
MTU=1500 SERIES=
vm_topo "$MTU" || { fail "kernels: topology"; cleanup; t_done; }
trap cleanup EXIT
XHCAD_LOG=$tmp/xhcad-host.log
xhcad_start || { fail "kernels: xhcad on $IF_A"; t_done; }

# boot MTU: the guest, its xhcad (its output in GX.out) serving eth0
GX=0
boot() {
	local t0=$SECONDS
	VMD=$tmp/vm-$SERIES-$1
	vm_boot "$NS_M" "$MB" "$MAC_B" "$IP_B/24" "$1" "$VMD" 2>"$tmp/boot.err"
	local brc=$?
	grep '# vm' "$tmp/boot.err"
	if [ "$brc" != 0 ]; then
		fail "kernels: $SERIES: the guest boots (MTU $1)"
		tail -20 "$VMD/console.log" 2>/dev/null | sed 's/^/    /'
		return 1
	fi
	KREL=$(cat "$VMD/kernel")
	pass "kernels: Debian 12's kernel $KREL boots ($VM_ACCEL, $((SECONDS - t0)) s) with this host's root, MTU $1"
	vm_run neigh "ip neigh replace $IP_A lladdr $MAC_A dev eth0" 10 >/dev/null
}
# serving NAME IF: 0 once the guest's xhcad started as NAME serves IF; 1
# when it ended first, or after a minute
serving() {
	for _ in $(seq 600); do
		grep -q "serving $2" "$VMD/o/$1.out" 2>/dev/null && return 0
		[ -f "$VMD/o/$1.rc" ] && return 1
		sleep 0.1
	done
	return 1
}
# gx_start ARGS: the guest's xhcad on eth0; 0 once it serves
gx_start() {
	GX=$((GX + 1))
	vm_start "gx$GX" "exec $B/xhcad eth0 --hostmem-mb 128 --gso on $*"
	serving "gx$GX" eth0
}
# xs_start NAME ARGS: a guest's xhcad on xs0 (steer_checks' veth) as NAME;
# xs_stop: it stopped, and gone
xs_start() {
	vm_start "$1" "exec $B/xhcad xs0 --hostmem-mb 32 --engines 2 ${*:2}"
	serving "$1" xs0
}
xs_stop() {
	vm_run "$1" "pkill -f 'xhcad xs0'; for i in \$(seq 100); do pgrep -f 'xhcad xs0' >/dev/null || break; sleep 0.1; done
		${*:2}" 30 >/dev/null
}
gx_stop() { vm_run "gxstop$GX" "killall -w xhcad" 30 >/dev/null; }
# gxhca ARGS: the guest's xhca CLI (its output on stdout)
gxhca() {
	local n=c$((++NC))
	vm_run "$n" "$B/xhca -i eth0 $*" 30 >/dev/null
	vm_out "$n"
}
NC=0

DEV_H=xhca_$IF_A DEV_G=xhca_eth0 GIDX=1 PORT=18700
# listening_g PORT: the server in the guest is ready, as listening_a
# (vm.sh) says of this host's
listening_g() {
	local cmd="ss -Hltn 'sport = :$1' | grep -q LISTEN"

	[ -n "${CM:-}" ] && cmd="grep -q '@xhca-rdmacm:$CM:$1:' /proc/net/unix"
	[ "$(vm_run "lis$1" "$cmd" 10)" = 0 ]
}

# pair NAME WHO SECS 'SERVER CMD' 'CLIENT CMD': WHO (guest|host) runs the
# server, both under xhca exec; %D is the device of the side that runs it,
# %G the GID index, %P the port, %A the server's address (else appended to
# the client). Both must exit 0; their output in $OUT/NAME.srv, NAME.cli.
pair() {
	local name=$1 who=$2 secs=$3 srv=$4 cli=$5 rs rc spid addr=$IP_A dev_s=$DEV_H dev_c=$DEV_G
	PORT=$((PORT + 1))
	[ "$who" = guest ] && addr=$IP_B dev_s=$DEV_G dev_c=$DEV_H
	[[ $cli == *%A* ]] || cli="$cli %A"
	srv=${srv//%A/$addr}; srv=${srv//%D/$dev_s}; srv=${srv//%G/$GIDX}; srv=${srv//%P/$PORT}
	cli=${cli//%A/$addr}; cli=${cli//%D/$dev_c}; cli=${cli//%G/$GIDX}; cli=${cli//%P/$PORT}
	if [ "$who" = guest ]; then
		vm_start "$name" "timeout $secs $B/xhca -i eth0 exec -- $srv"
		for _ in $(seq 100); do listening_g "$PORT" && break; sleep 0.1; done
		in_a "$B/xhca" -i "$IF_A" exec -- timeout "$secs" $cli >"$OUT/$name.cli" 2>&1
		rc=$?
		[ "$rc" = 0 ] || vm_run "kill$PORT" "killall ${srv%% *}" 10 >/dev/null
		rs=$(vm_wait "$name" $((secs + 5)))
		vm_out "$name" >"$OUT/$name.srv"
	else
		in_a "$B/xhca" -i "$IF_A" exec -- timeout "$secs" $srv >"$OUT/$name.srv" 2>&1 &
		spid=$!
		for _ in $(seq 100); do listening_a "$PORT" && break; sleep 0.05; done
		rc=$(vm_run "$name" "timeout $secs $B/xhca -i eth0 exec -- $cli" $((secs + 5)))
		vm_out "$name" >"$OUT/$name.cli"
		[ "$rc" = 0 ] || pkill -TERM -f "timeout $secs $srv"
		wait "$spid"
		rs=$?
	fi
	if [ "$rs" != 0 ] || [ "$rc" != 0 ]; then
		fail "kernels: $KREL: $name: server ($who) exit $rs, client exit $rc"
		tail -n 6 "$OUT/$name.srv" "$OUT/$name.cli" | sed 's/^/    /'
		return 1
	fi
	return 0
}

# both NAME SECS 'CMD' CHECK: CMD on both sides, the guest the server, then
# the host; CHECK (a grep -E pattern) found in both ends' output.
both() {
	local name=$1 secs=$2 cmd=$3 pat=$4 who
	for who in guest host; do
		pair "$name-$who" "$who" "$secs" "$cmd" "$cmd" || continue
		check "kernels: $KREL: $name, the $who's xhca the server: both ends done ($(grep -hE "$pat" "$OUT/$name-$who.cli" | head -1 | tr -s ' ' | cut -c1-60))" \
			eval 'grep -qE "$pat" "$OUT/$name-$who.srv" && grep -qE "$pat" "$OUT/$name-$who.cli"'
	done
}

# (-u 20: a 4 s transport timeout. READs of 8 KiB, 8 outstanding: with
# perftest's 128 of 64 KiB, the 6.1 guest under TCG answered so slowly
# that this host's requester timed out 27 times and took 3092 responses
# as stale, the run past its 120 s; 6.12's guest got through)
PERF="-d %D -x %G -p %P -F -n 200 -u 20"
reasons() { gxhca -j stats | json_get "d['reasons']['$1']['packets']"; }
# newer KREL MAJOR.MINOR: whether the guest's release is at least that
newer() {
	local a b x y
	IFS=. read -r a b _ <<<"$KREL"
	IFS=. read -r x y <<<"$1"
	[ "$a" -gt "$x" ] || { [ "$a" = "$x" ] && [ "${b%%[^0-9]*}" -ge "$y" ]; }
}

# run_kernel SERIES: the guest of that kernel at MTU 1500, every program
# both ways and the fallbacks; then at MTU 4200
run_kernel() {
	SERIES=$1 OUT=$tmp/$1
	mkdir -p "$OUT"
	for l in "$MA" "$MB" br0; do ip -n "$NS_M" link set "$l" mtu 1500; done
	ip -n "$NS_A" link set "$IF_A" mtu 1500
	local img_log
	img_log=$(mktemp)
	if ! bash "$here/image.sh" build xhca "$SERIES" >"$img_log" 2>&1; then
		sed 's/^/# /' "$img_log"
		rm -f "$img_log"
		for c in $CASES; do skip "kernels: $SERIES: $c: no guest image (image.sh build xhca $SERIES failed)"; done
		return 0
	fi
	rm -f "$img_log"
	VM_SERIES=$SERIES
	boot 1500 || return 0
	gx_start || { fail "kernels: $KREL: xhcad serves eth0 in the guest (native XDP)"
		sed 's/^/    /' "$VMD/o/gx$GX.out"; return 0; }
	pass "kernels: $KREL: xhcad serves the guest's eth0 (native XDP on virtio_net)"
	start_checks
	want rc_pingpong && both rc_pingpong 90 "ibv_rc_pingpong -d %D -g %G -p %P -n 200" ' iters in '
	want write_bw && both write_bw 120 "ib_write_bw $PERF" '^ *65536 +200 ' && xdp_ack_checks
	want read_bw && both read_bw 120 "ib_read_bw $PERF -o 8 -s 8192" '^ *8192 +200 '
	want send_bw && both send_bw 120 "ib_send_bw $PERF" '^ *65536 +200 ' && gso_checks
	want rping && for who in guest host; do
		CM=0106 pair "rping-$who" "$who" 90 "rping -s -a %A -p %P -C 20 -V" \
			"rping -c -a %A -p %P -C 20 -v -V" &&
			check_eq "kernels: $KREL: rping (rdma_cm), the $who's xhca the server: 20 pings, each verified" \
				"$(grep -c 'ping data: rdma-ping-' "$OUT/rping-$who.cli")" 20
	done
	want nocopy && nocopy_checks
	want steer && steer_checks
	want mtu4200 && mtu4200
	guest_done
}

# --gso in the guest, whose requester sent the runs above as the client:
# Linux 6.2 took UDP GSO in the virtio-net header. Before it the first send
# is refused and the path turns itself off, that run and the rest sent
# through the AF_XDP TX ring (the perftest runs above completed); where the
# sockets are zero-copy the TX ring serves anyway.
gso_checks() {
	local st mode sends refused
	st=$(gxhca -j status | json_get '"%s %d %d" % (d["xsk_mode"], d["requester"]["gso_sends"], d["requester"]["gso_fallbacks"])')
	read -r mode sends refused <<<"$st"
	if [ "$mode" != copy ]; then
		check_eq "kernels: $KREL: --gso: AF_XDP $mode: no GSO send, none refused" "$sends $refused" "0 0"
	elif newer 6.2; then
		check "kernels: $KREL: --gso: the guest's requests went as UDP GSO sends ($sends), none refused ($refused)" \
			test "$sends" -gt 0 -a "$refused" = 0
	else
		check "kernels: $KREL: --gso: the kernel refused the first send ($refused runs went frame by frame), none went ($sends), and said so" \
			eval '[ "$refused" -ge 1 ] && [ "$sends" = 0 ] && grep -q -- "--gso: the kernel refused a UDP GSO send" "$VMD/o/gx$GX.out"'
	fi
}

# --xdp-ack auto in the guest: on (virtio_net, native XDP): the ACKs of the
# WRITEs its xhca_rx placed (the guest the server of ib_write_bw above) went
# back to this host by XDP_TX through virtio_net, and the runs completed.
xdp_ack_checks() {
	local n
	n=$(gxhca -j stats | json_get 'd["reasons"]["placed_acked"]["packets"] + d["reasons"]["recv_acked"]["packets"]')
	check_eq "kernels: $KREL: --xdp-ack auto: on in the guest (virtio_net, native XDP)" \
		"$(gxhca -j status | json_get 'd["xdp_ack"]')" 1
	check "kernels: $KREL: --xdp-ack: the guest's xhca_rx sent ACKs by XDP_TX ($n)" test "${n:-0}" -gt 0
}

# --steer on a veth pair of two queues in the guest (its eth0, virtio_net
# with one queue, has nothing to steer): xhca_steer loads and attaches to
# the clsact egress hook of this kernel, and goes with its qdisc at exit.
steer_checks() {
	local k=$((++NC)) on
	vm_run "sv$k" "ip link add xs0 numtxqueues 2 numrxqueues 2 type veth peer name xs1 \
		numtxqueues 2 numrxqueues 2 && ip link set xs1 up && ip link set xs0 up &&
		ip addr add 10.98.0.1/24 dev xs0" 20 >/dev/null
	xs_start "gs$k" --steer on
	vm_run "ss$k" "$B/xhca -i xs0 -j status" 30 >/dev/null
	on=$(vm_out "ss$k" | json_get '(d["steer"], d["tx_queues"])')
	check_eq "kernels: $KREL: --steer on, a 2-queue veth in the guest: on, 2 TX queues" "$on" "(1, 2)" ||
		sed 's/^/    /' "$VMD/o/gs$k.out"
	check "kernels: $KREL: --steer: xhca_steer on the veth's egress hook" \
		eval 'vm_run "sf$k" "tc filter show dev xs0 egress" 20 >/dev/null &&
		      vm_out "sf$k" | grep -q "handle 0x5848 xhca_steer"'
	xs_stop "sk$k" "tc qdisc show dev xs0; tc filter show dev xs0 egress"
	check "kernels: $KREL: --steer: at xhcad's exit its filter and the qdisc it added are gone" \
		eval '! vm_out "sk$k" | grep -q "clsact\|xhca_steer"'
	# a kernel without the BPF classifier, then without clsact (modules not
	# loaded, as in a container that cannot load them): --steer on stops,
	# naming the module; auto (a veth) goes on without steering
	steer_lacks cls_bpf "cannot attach xhca_steer to xs0.s egress: No such file or directory (the kernel has no BPF classifier: modprobe cls_bpf)"
	steer_lacks sch_ingress "cannot add the clsact qdisc to xs0: No such file or directory (the kernel has no clsact: modprobe sch_ingress)"
	vm_run "sd$k" "ip link del xs0" 20 >/dev/null
}

# steer_lacks MODULE MESSAGE: MODULE unloaded in the guest, xhcad on xs0
# with --steer on stops saying MESSAGE, with auto it serves, steering off
steer_lacks() {
	local k=$((++NC)) rc msg="--steer: $2"
	vm_run "sr$k" "rmmod $1" 20 >/dev/null
	xs_start "so$k" --steer on
	rc=$(vm_wait "so$k" 40)
	check "kernels: $KREL: --steer on without $1: xhcad stops (rc $rc), saying why" \
		eval '[ "$rc" != 0 ] && vm_out "so$k" | grep -q -- "$msg"'
	xs_start "sa$k"
	vm_run "sq$k" "$B/xhca -i xs0 -j status" 30 >/dev/null
	check_eq "kernels: $KREL: --steer auto without $1: xhcad serves the veth, steering off" \
		"$(vm_out "sq$k" | json_get 'd["steer"]')" 0
	xs_stop "sx$k"
}

# What the start line and xhca status say of the guest's kernel.
start_checks() {
	local line mb=False lacks="bpf_dynptr_copy"

	line=$(grep 'xhcad: kernel ' "$VMD/o/gx$GX.out")
	newer 6.6 && mb=True
	[ $mb = False ] && lacks="$lacks, AF_XDP multi-buffer"
	check "kernels: $KREL: its start line says what it lacks and what that costs: $lacks" \
		eval '[[ $line == *"lacks bpf_dynptr_copy (Linux 6.15): "*xlate_nocopy* ]] &&
		      { [ $mb = True ] && [[ $line != *"AF_XDP multi-buffer"* ]] ||
		        [[ $line == *"AF_XDP multi-buffer (Linux 6.6): "*"path MTU 2048"* ]]; }'
	check_eq "kernels: $KREL: xhca status -j in the guest: release, kfunc_copy, xsk_multibuf" \
		"$(gxhca -j status | json_get '(d["kernel"]["release"], d["kernel"]["kfunc_copy"], d["kernel"]["xsk_multibuf"])')" \
		"('$KREL', False, $mb)"
	check "kernels: $KREL: xhca status in the guest says it in words" \
		eval 'gxhca status | grep -q "lacks bpf_dynptr_copy (Linux 6.15)"'
}

# Without bpf_dynptr_copy: WRITEs into the guest (the server of ib_write_bw)
# of 100 bytes land 128 bytes apart (perftest's cycle), most not at a
# multiple of 1 KiB: xhcad places them (xlate_nocopy); those of 64 KiB were
# placed by xhca_rx.
nocopy_checks() {
	local placed nocopy0 nocopy

	if want write_bw; then
		placed=$(reasons placed)
		check "kernels: $KREL: the 64 KiB WRITEs into the guest were placed by xhca_rx (placed: $placed)" \
			test "${placed:-0}" -gt 0
	fi
	nocopy0=$(reasons xlate_nocopy)
	pair nocopy guest 120 "ib_write_bw $PERF -s 100" "ib_write_bw $PERF -s 100" || return
	nocopy=$(reasons xlate_nocopy)
	check "kernels: $KREL: 100-byte WRITEs 128 bytes apart: xhcad placed those off 1 KiB (xlate_nocopy $nocopy0 -> $nocopy)" \
		test "$((nocopy - nocopy0))" -ge 150
}

# Link MTU 4200. Before 6.3 virtio_net's XDP has no multi-buffer: native
# XDP is refused (--mode native: xhcad says why and names skb mode; by
# default it serves in skb mode, saying why); in skb mode, without
# AF_XDP multi-buffer (before 6.6) the port offers 2048, a QP is refused
# 4096, and 2048-byte packets flow. With both, native XDP and 4096.
mtu4200() {
	local n rs mtu=2048

	gx_stop
	vm_stop
	for l in "$MA" "$MB" br0; do ip -n "$NS_M" link set "$l" mtu 4200; done
	ip -n "$NS_A" link set "$IF_A" mtu 4200
	boot 4200 || return
	newer 6.6 && mtu=4096
	if newer 6.3; then
		gx_start || { fail "kernels: $KREL: MTU 4200: xhcad serves eth0 in native mode"
			sed 's/^/    /' "$VMD/o/gx$GX.out"; return; }
		pass "kernels: $KREL: MTU 4200: xhcad serves eth0 in native mode (virtio_net's XDP multi-buffer)"
	else
		if gx_start --mode native; then
			fail "kernels: $KREL: MTU 4200: native XDP on virtio_net is refused"
			gx_stop
		else
			check "kernels: $KREL: MTU 4200: --mode native: virtio_net refuses native XDP, xhcad names --mode skb" \
				grep -q "cannot attach xhca_rx to eth0 in native mode.*--mode skb" "$VMD/o/gx$GX.out"
		fi
		gx_start || { fail "kernels: $KREL: MTU 4200: xhcad serves eth0 in skb mode"
			sed 's/^/    /' "$VMD/o/gx$GX.out"; return; }
		check "kernels: $KREL: MTU 4200: by default xhcad serves eth0 in skb mode, saying why" \
			eval 'grep -q "eth0.s driver refuses native XDP .*skb mode" "$VMD/o/gx$GX.out" &&
			      [ "$(gxhca -j status | json_get "d[\"mode\"]")" = skb ]'
		check "kernels: $KREL: MTU 4200: the refused xhcad left no pinned maps behind (none reused)" \
			eval '! grep -q "reusing pinned maps" "$VMD/o/gx$GX.out"'
	fi
	n=c$((++NC))
	vm_run "$n" "$B/xhca -i eth0 exec -- ibv_devinfo -d $DEV_G -v" 30 >/dev/null
	check_eq "kernels: $KREL: MTU 4200: the port's max and active MTU" \
		"$(vm_out "$n" | awk '/max_mtu|active_mtu/ {printf "%s %s ", $1, $2}')" \
		"max_mtu: $mtu active_mtu: $mtu "
	if [ $mtu = 2048 ]; then
		# ibv_rc_pingpong asking for 4096: the guest's modify to RTR is
		# refused, xhcad's reason in the library's debug output
		vm_start mtu4096 "XHCA_VERBS_DEBUG=1 timeout 60 $B/xhca -i eth0 exec -- ibv_rc_pingpong -d $DEV_G -g 1 -p 18790 -m 4096 -n 5"
		for _ in $(seq 100); do listening_g 18790 && break; sleep 0.1; done
		in_a "$B/xhca" -i "$IF_A" exec -- timeout 30 ibv_rc_pingpong -d "$DEV_H" -g 1 -p 18790 \
			-m 4096 -n 5 "$IP_B" >"$OUT/mtu4096.cli" 2>&1
		rs=$(vm_wait mtu4096 70)
		vm_out mtu4096 >"$OUT/mtu4096.srv"
		check "kernels: $KREL: MTU 4200: path MTU 4096 refused to a QP (ibv_rc_pingpong -m 4096 fails), the reason named" \
			eval '[ "$rs" != 0 ] && grep -q "AF_XDP lacks multi-buffer.*2048 at most" "$OUT/mtu4096.srv"'
	fi
	both "send_bw_$mtu" 120 "ib_send_bw $PERF -m $mtu" '^ *65536 +200 '
}

for k in $KERNELS; do
	run_kernel "$k"
done
t_done
