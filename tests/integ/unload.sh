#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# xhcad --unload: what --keep left (xhca_rx attached, the maps pinned, the
# restart record) taken down, as the package's removal does (debian/
# xhca.prerm). Only the xhca_rx of the pinned maps is detached: refused while
# an xhcad serves the interface, when somebody else's program is attached, or
# when the maps are used from another network namespace, with nothing
# changed; nothing kept: said so, exit 0. In both modes, with --pin-dir, and
# after xdp-loader and --adopt.
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/unload
topo_setup || { fail "unload: topology"; t_done; }
XHCAD_LOG=$(mktemp)
out=$(mktemp)
ALT=/sys/fs/bpf/xhca-unload-$$
trap 'in_a xdp-loader unload -a "$IF_A" >/dev/null 2>&1; topo_cleanup; rm -rf "$ALT";
	rm -f "$XHCAD_LOG" "$out"' EXIT
PIN=/sys/fs/bpf/xhca/$IF_A
NPINS=20 # the maps of loader.c's map_descs and xhca_dstate

# unload [NS] ARGS...: xhcad --unload IF_A ARGS in NS_A (or NS given as
# ns=NAME); stdout and stderr in $out, RC its exit code.
unload() {
	local ns=$NS_A
	case ${1:-} in ns=*) ns=${1#ns=}; shift ;; esac
	nsenter --net=/run/netns/"$ns" "$B/xhcad" --unload "$IF_A" "$@" >"$out" 2>&1
	RC=$?
}
npins() { find "${1:-$PIN}" -mindepth 1 2>/dev/null | wc -l; }
xdp_shown() { in_a ip link show "$IF_A" | grep -c 'xdp'; }

# ---- what --keep leaves -------------------------------------------------------------
check "unload: xhcad --keep starts" xhcad_start --keep
qpn=$(xhca -j qp create --type rc | json_get 'd["qpn"]')
id=$(xdp_prog_id "$NS_A" "$IF_A")
xhcad_stop TERM
check "unload: after --keep xhca_rx (id $id) stays attached" test -n "$id" -a \
	"$(xdp_prog_id "$NS_A" "$IF_A")" = "$id"
check_eq "unload: ... its $NPINS maps pinned in $PIN" "$(npins)" $NPINS
check "unload: ... and the restart record in /run/xhca" test -e /run/xhca/"$IF_A".state

# ---- refused while an xhcad serves the interface ----------------------------------
check "unload: xhcad starts again on the kept maps" xhcad_start --keep
id=$(xdp_prog_id "$NS_A" "$IF_A") # (its own xhca_rx, over the maps)
unload
check_eq "unload: with xhcad running: exit 1" "$RC" 1
check "unload: ... the message says an xhcad serves it and how to stop it" \
	grep -q "another xhcad already serves $IF_A.*systemctl stop xhcad@$IF_A" \
	<<<"$(tr '\n' ' ' <"$out")"
check_eq "unload: ... nothing changed: the program, the pins, xhcad answers with the QP" \
	"$(xdp_prog_id "$NS_A" "$IF_A") $(npins) $(xhca -j qp show "$qpn" |
		json_get 'd["qps"][0]["qpn"]')" \
	"$id $NPINS $qpn"
xhcad_stop TERM

# ---- taken down -----------------------------------------------------------------------
unload
check_eq "unload: xhcad --unload: exit 0" "$RC" 0
check "unload: ... says what it did ($(cat "$out"))" \
	grep -q "detached xhca_rx (id $id, native mode); removed $NPINS pins and $PIN" "$out"
check_eq "unload: ... ip link show has no xdp on the interface" "$(xdp_shown)" 0
check "unload: ... the program is gone (bpftool prog show id $id)" \
	bash -c "! bpftool prog show id $id >/dev/null 2>&1"
check "unload: ... the pin directory is gone" test ! -e "$PIN"
check "unload: ... the restart record and the socket too" \
	test ! -e /run/xhca/"$IF_A".state -a ! -e /run/xhca/"$IF_A".sock
check "unload: ... the host stack answers without it" \
	in_b ping -c 2 -i 0.2 -W 2 -q "$IP_A" >/dev/null
unload
check "unload: again, nothing kept: exit 0, the message says so ($(cat "$out"))" \
	test "$RC" = 0 -a "$(grep -c "nothing kept: no xhca maps pinned in $PIN" "$out")" = 1
: >"$XHCAD_LOG"
check "unload: a new xhcad starts afresh" xhcad_start --keep
check "unload: ... on new maps, without the earlier QP" \
	test "$(grep -c 'reusing pinned maps' "$XHCAD_LOG")" = 0 -a \
	"$(xhca -j qp show | json_get '[q["qpn"] for q in d["qps"]].count('"$qpn"')')" = 0
xhcad_stop TERM

# ---- the maps used from another network namespace: left alone --------------------
id=$(xdp_prog_id "$NS_A" "$IF_A")
unload ns="$NS_B"
check_eq "unload: from a namespace without the interface, its xhca_rx on the maps: exit 1" "$RC" 1
check "unload: ... the message names the program that uses them" \
	grep -q "used by xhca_rx (id $id) elsewhere" "$out"
check_eq "unload: ... nothing changed" "$(xdp_prog_id "$NS_A" "$IF_A") $(npins)" "$id $NPINS"

# ---- somebody else's program: left alone --------------------------------------------
in_a ip link set dev "$IF_A" xdp off
in_a ip link set dev "$IF_A" xdpdrv obj "$B/bpf/xhca_gen.bpf.o" sec xdp
gid=$(xdp_prog_id "$NS_A" "$IF_A")
unload
check_eq "unload: another program (xhca_gen, id $gid) attached, the maps pinned: exit 1" "$RC" 1
check "unload: ... the message names it" \
	grep -q "XDP program $gid (xhca_gen, native mode).*left alone" "$out"
check_eq "unload: ... it stays attached, the pins stay" "$(xdp_prog_id "$NS_A" "$IF_A") $(npins)" \
	"$gid $NPINS"
in_a ip link set dev "$IF_A" xdp off
unload
check "unload: that program gone, the pins alone are removed ($(cat "$out"))" \
	test "$RC" = 0 -a \
	"$(grep -c "nothing to detach); removed $NPINS pins and $PIN" "$out")" = 1 \
	-a ! -e "$PIN"
in_a ip link set dev "$IF_A" xdpdrv obj "$B/bpf/xhca_gen.bpf.o" sec xdp
gid=$(xdp_prog_id "$NS_A" "$IF_A")
unload
check "unload: another program, nothing kept: exit 0, nothing kept, it stays" \
	test "$RC" = 0 -a "$(grep -c 'nothing kept' "$out")" = 1 -a \
	"$(xdp_prog_id "$NS_A" "$IF_A")" = "$gid"
in_a ip link set dev "$IF_A" xdp off

# ---- skb mode; another pin directory ---------------------------------------------------
xhcad_start --keep --mode skb && xhcad_stop TERM
id=$(xdp_prog_id "$NS_A" "$IF_A")
unload
check "unload: skb mode: detached ($(cat "$out"))" test "$RC" = 0 -a \
	"$(grep -c "detached xhca_rx (id $id, skb mode)" "$out")" = 1 -a "$(xdp_shown)" = 0
xhcad_start --keep --pin-dir "$ALT" && xhcad_stop TERM
unload
check "unload: --pin-dir elsewhere: without it, nothing kept in the default directory" \
	test "$RC" = 0 -a "$(grep -c "nothing kept" "$out")" = 1 -a "$(npins "$ALT")" = $NPINS
unload --pin-dir "$ALT"
check "unload: ... with it, detached and removed" \
	test "$RC" = 0 -a ! -e "$ALT" -a "$(xdp_shown)" = 0

# ---- xdp-loader, then xhcad --adopt --keep (libxdp: a single program on this kernel)
in_a xdp-loader load -m native "$IF_A" "$B/bpf/xhca.bpf.o"
id=$(xdp_prog_id "$NS_A" "$IF_A")
xhcad_start --adopt --keep && xhcad_stop TERM
unload
check "unload: xdp-loader's xhca_rx, adopted and kept: detached ($(cat "$out"))" \
	test "$RC" = 0 -a "$(grep -c "detached xhca_rx (id $id, native mode)" "$out")" = 1
check "unload: ... xdp-loader status shows no program, no dispatcher is left in bpffs" \
	test "$(in_a xdp-loader status "$IF_A" | grep -c 'No XDP program')" = 1 -a \
	-z "$(find /sys/fs/bpf -name "dispatch-$(ip -n "$NS_A" -o link show "$IF_A" |
		cut -d: -f1)-*" 2>/dev/null)"
t_done
