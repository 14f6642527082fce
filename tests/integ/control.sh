#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The control socket under bad clients: stalled, garbage, oversized, vanished,
# unknown requests. The daemon answers others and changes nothing.
set -u
. "$(dirname "$0")/../lib.sh"
need_root integ/control
topo_setup || { fail "control: topology"; t_done; }
trap 'topo_cleanup' EXIT

check "control: xhcad starts" xhcad_start
QP=$(qp_up rc)
before=$(xhca -j qp show)
SOCK=/run/xhca/$IF_A.sock

client() {
	timeout 10 python3 - "$SOCK" "$1" <<'PY'
import socket, struct, sys, time
path, what = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(path)
MAGIC = 0x58484341
if what == "stall":
    s.sendall(struct.pack("<II", MAGIC, 1))       # half a header, then nothing
    time.sleep(3)
elif what == "garbage":
    s.sendall(b"GET / HTTP/1.0\r\n\r\n")
    try:
        # Unread bytes make the close a reset rather than an EOF.
        print("closed" if s.recv(100) == b"" else "answered")
    except ConnectionResetError:
        print("closed")
elif what == "huge":
    s.sendall(struct.pack("<IIIi", MAGIC, 1, 1 << 30, 0))
    try:
        print("closed" if s.recv(100) == b"" else "answered")
    except ConnectionResetError:
        print("closed")
elif what == "vanish":
    s.sendall(struct.pack("<IIIi", MAGIC, 5, 4, 0) + struct.pack("<I", 0))
    s.close()
elif what == "unknown":
    s.sendall(struct.pack("<IIIi", MAGIC, 999, 0, 0))
    h = s.recv(16)
    magic, op, ln, err = struct.unpack("<IIIi", h)
    msg = b""
    while len(msg) < ln:
        msg += s.recv(ln - len(msg))
    print(err, msg.rstrip(b"\0").decode())
PY
}

client stall &
stall=$!
sleep 0.3
start=$(date +%s%N)
check "control: answers while another client stalls" timeout 5 "$B/xhca" -i "$IF_A" status >/dev/null
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "control: stalled client held it up at most ~1 s ($ms ms)" test "$ms" -lt 2500
wait $stall
check_eq "control: garbage closes that connection" "$(client garbage)" closed
check_eq "control: an oversized message closes that connection" "$(client huge)" closed
client vanish
out=$(client unknown)
check "control: unknown request gets an error reply ($out)" grep -q "^-95 unknown request" <<<"$out"
check "control: xhcad still running" kill -0 "$XHCAD_PID"
check_eq "control: nothing changed" "$(xhca -j qp show)" "$before"

# A second daemon for the same interface must not touch the first one's state.
out=$(in_a "$B/xhcad" "$IF_A" 2>&1); rc=$?
check_eq "control: second xhcad refused (exit 1)" "$rc" 1
check "control: the message names the running daemon" grep -q "already serves" <<<"$out"
check_eq "control: first daemon's QPs untouched" "$(xhca -j qp show)" "$before"
check "control: bad xhcad option exits 2" bash -c "'$B/xhcad' --max-qps 0 '$IF_A' 2>/dev/null; test \$? = 2"
check "control: bad --mode exits 2" bash -c "'$B/xhcad' --mode turbo '$IF_A' 2>/dev/null; test \$? = 2"
check "control: unknown interface exits 1" bash -c "'$B/xhcad' nosuchif0 2>/dev/null; test \$? = 1"
# bad host interface options: exit 2 and one line naming the option
xbad() {
	local name=$1 re=$2; shift 2
	local out rc
	out=$(in_a "$B/xhcad" "$IF_A" "$@" 2>&1); rc=$?
	if [ "$rc" = 2 ] && grep -q -e "$re" <<<"$out"; then pass "control: $name"
	else fail "control: $name (exit $rc: $out)"; fi
}
xbad "--flowqs 0" "--flowqs 0: use a number from 1 to 62" --flowqs 0
xbad "--flowqs 63 (two are the replication and proxy queues)" "--flowqs 63" --flowqs 63
xbad "--sched rr" "--sched rr: use drr or fifo" --sched rr
xbad "--bus-rate fast" "--bus-rate fast" --bus-rate fast
xbad "--bus-rate 0" "--bus-rate 0" --bus-rate 0
xbad "--watermarks without LOW" "--watermarks" --watermarks 100
xbad "--watermarks LOW >= HIGH" "--watermarks" --watermarks 100,100
xbad "--watermarks over half a ring" "--watermarks" --watermarks 2000,10
xbad "--hostmem-mb 0" "--hostmem-mb 0" --hostmem-mb 0
xbad "--umem-frames 10" "--umem-frames 10" --umem-frames 10
xbad "--jumbo-slots 70000" "--jumbo-slots 70000: use 0 to 65536" --jumbo-slots 70000
xbad "--jumbo-slots many" "--jumbo-slots many: use 0 to 65536" --jumbo-slots many
check_eq "control: the running daemon did not notice" "$(xhca -j qp show)" "$before"
xhcad_stop TERM
check_eq "control: xhcad exits 0" "$XHCAD_RC" 0
check "control: socket removed on exit" test ! -e "$SOCK"
t_done
