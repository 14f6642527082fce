#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Local isolation on the control socket. Who may connect: root, and with
# xhcad --group GROUP that group's members (socket mode 0660; 0600 without).
# What they may do: root's client (the CLI) everything; an application
# session its own objects only (another's QPs, regions, CQs, allocations,
# PDs and filters get a clear error and stay as they are; the views show
# only its own); anyone else connected only the status and hello. Then the
# socket fuzzed, as a session and without one: xhcad keeps serving, and
# nothing it keeps changed (objects, host memory, its descriptors).
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/isolation
command -v setpriv >/dev/null || { skip "isolation: no setpriv (util-linux)"; t_done; }
topo_setup || { fail "isolation: topology"; t_done; }
tmp=$(mktemp -d)
XHCAD_LOG=$tmp/xhcad.log
trap 'topo_cleanup; rm -rf "$tmp"' EXIT
# the programs where other users may run them
bin=$tmp/bin
mkdir "$bin"
mkdir "$bin/verbs"
cp "$B/xhca" "$B/xhca-ctltest" "$bin/"
cp "$B/verbs/libibverbs.so.1" "$bin/verbs/"
chmod 755 "$tmp" "$bin" "$bin/verbs"
GROUP=$(getent group 65534 | cut -d: -f1)
member() { setpriv --reuid 65534 --regid 65534 --clear-groups "$@"; }
outsider() { setpriv --reuid 65533 --regid 65533 --clear-groups "$@"; }
SOCK=/run/xhca/$IF_A.sock

check "isolation: xhcad starts without --group" xhcad_start
check_eq "isolation: the socket is root's alone (0600)" "$(stat -c '%a %U' "$SOCK")" "600 root"
out=$(member "$bin/xhca" -i "$IF_A" status 2>&1)
check_eq "isolation: without --group another user cannot connect: exit 1, saying why" \
	"$?:$(grep -c 'ermission denied' <<<"$out")" "1:1"
xhcad_stop

check "isolation: xhcad starts with --group $GROUP" xhcad_start --group "$GROUP"
check_eq "isolation: the socket is the group's too (0660)" "$(stat -c '%a %U %G' "$SOCK")" \
	"660 root $GROUP"
out=$(outsider "$bin/xhca" -i "$IF_A" status 2>&1)
check_eq "isolation: a user outside the group cannot connect: exit 1, saying why" \
	"$?:$(grep -c 'ermission denied' <<<"$out")" "1:1"
check "isolation: a member asks the status" member "$bin/xhca" -i "$IF_A" status
out=$(member "$bin/xhca" -i "$IF_A" qp create --type ud 2>&1)
check_eq "isolation: a member's CLI (no session) may not create a QP: exit 1, saying why" \
	"$?:$(grep -c 'only root, or an application session' <<<"$out")" "1:1"
out=$(member "$bin/xhca" -i "$IF_A" qp show 2>&1)
check_eq "isolation: ... nor list the QPs" "$?:$(grep -c 'only root' <<<"$out")" "1:1"

# verbs programs: a member's open the device; an outsider's list it, get a
# warning that says why, and cannot open it (EACCES, as a uverbs device
# file without permission)
out=$(in_a setpriv --reuid 65534 --regid 65534 --clear-groups env XHCA_VERBS_DIR="$bin/verbs" \
	"$bin/xhca" -i "$IF_A" exec -- ibv_devinfo -d "xhca_$IF_A" 2>&1)
check_eq "isolation: a member's ibv_devinfo opens xhca_$IF_A" "$?:$(grep -c 'state:.*PORT_ACTIVE' <<<"$out")" "0:1"
out=$(in_a setpriv --reuid 65533 --regid 65533 --clear-groups env XHCA_VERBS_DIR="$bin/verbs" \
	"$bin/xhca" -i "$IF_A" exec -- ibv_devinfo -d "xhca_$IF_A" 2>&1)
rc=$?
check "isolation: an outsider's xhca exec refuses (exit $rc), saying there is no permission" \
	test $rc != 0 -a "$(grep -c 'no permission to use xhca_' <<<"$out")" = 1
out=$(in_a setpriv --reuid 65533 --regid 65533 --clear-groups env LD_LIBRARY_PATH="$bin/verbs" \
	ibv_devinfo -d "xhca_$IF_A" 2>&1)
rc=$?
check "isolation: with the library alone: the device listed, not opened (exit $rc), a warning why" \
	test $rc != 0 -a "$(grep -c 'Warning: no permission to use xhca_' <<<"$out")" = 1

# two sessions of a member: B on A's objects
Q0=$(xhca -j qp create --type ud | json_get 'd["qpn"]')
member "$bin/xhca-ctltest" isolate "$IF_A" >"$tmp/iso" 2>&1
sed 's/^/  /' "$tmp/iso"
"$SCAPY_PY" - "$tmp/iso" <<'PY' >"$tmp/iso.check"
import json, sys
cases, sees, intact, a = [], None, None, None
for line in open(sys.argv[1]):
    d = json.loads(line)
    if "case" in d: cases.append(d)
    if "sees" in d: sees = d["sees"]
    if "intact" in d: intact = d["intact"]
    if "a" in d: a = d["a"]
print("made", a and a["rc"] == 0 and all(a[k] for k in ("qpn", "rkey", "cq", "filter")))
print("cases", len(cases))
print("refused", sum(1 for c in cases if c["rc"] < 0 and len(c["msg"]) > 10))
print("accepted", " ".join(c["case"] for c in cases if c["rc"] >= 0) or "none")
print("sees", sees)
print("intact", intact)
PY
cat "$tmp/iso.check" >&2
check_eq "isolation: session A made one of each object" "$(awk '$1 == "made" {print $2}' "$tmp/iso.check")" True
check_eq "isolation: every request of session B on A's ids and keys is refused, with a message" \
	"$(awk '$1 == "accepted" {print $2}' "$tmp/iso.check"):$(awk '$1 == "refused" {print $2}' "$tmp/iso.check")" \
	"none:$(awk '$1 == "cases" {print $2}' "$tmp/iso.check")"
check "isolation: ... all 23 of them" test "$(awk '$1 == "cases" {print $2}' "$tmp/iso.check")" -eq 23
check_eq "isolation: B's views show none of A's QPs, regions, CQs, filters" \
	"$(awk '$1 == "sees" {$1=""; print}' "$tmp/iso.check")" \
	" {'qps': 0, 'mrs': 0, 'cqs': 0, 'filters': 0}"
check_eq "isolation: A's objects are as A made them" "$(awk '$1 == "intact" {print $2}' "$tmp/iso.check")" True
check_eq "isolation: root's QP and the CM's QP1 are untouched, the sessions' went with them" \
	"$(xhca -j qp show | json_get '[q["qpn"] for q in d["qps"]]') $(xhca -j status | json_get 'd["sessions"]')" \
	"[1, $Q0] 0"

# the socket fuzzed: nothing xhcad keeps changes
state() {
	for o in qp mr cq mcast filter; do xhca -j $o show; done
	xhca -j status | json_get 'd["sessions"], d["hostmem_used"], d["mrs_in_use"], d["qps_in_use"]'
	ls "/proc/$XHCAD_PID/fd" | wc -l
}
before=$(state)
N=${CTL_FUZZ_N:-3000}
t0=$(date +%s.%N)
member "$bin/xhca-ctltest" fuzz "$IF_A" "$N" 7 session >"$tmp/f1" 2>&1
member "$bin/xhca-ctltest" fuzz "$IF_A" "$N" 8 >"$tmp/f2" 2>&1
t1=$(date +%s.%N)
echo "  fuzz: $(cat "$tmp/f1") $(cat "$tmp/f2") in $(echo "$t1 - $t0" | bc) s" >&2
check "isolation: fuzz: xhcad still serves after $((2 * N)) hostile messages" \
	bash -c "kill -0 $XHCAD_PID && '$B/xhca' -i '$IF_A' status >/dev/null"
check "isolation: fuzz: it answered (as a session: $(json_get 'd["replies"]' <"$tmp/f1") replies)" \
	test "$(json_get 'd["replies"]' <"$tmp/f1")" -gt $((N / 4))
sleep 0.5
check_eq "isolation: fuzz: objects, host memory, sessions and xhcad's descriptors as before" \
	"$(state)" "$before"
xhcad_stop
check_eq "isolation: xhcad exits 0" "$XHCAD_RC" 0
t_done
