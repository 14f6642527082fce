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
else:
    # one request (op, protocol version, payload), its reply's error and message
    op, ver, payload = {
        "unknown": (999, 1, b""),
        "v0": (1, 0, b""),              # a client from before versions (32-bit op)
        "v2": (1, 2, b""),              # one from a later release
        "short": (4, 1, b"\0\0"),       # QP_DESTROY: a QPN is 4 bytes
        "long": (1, 1, b"\0" * 8),       # STATUS: no payload
        "nosession": (14, 1, b""),      # PD_ALLOC from the CLI
    }[what]
    s.sendall(struct.pack("<IHHIi", MAGIC, op, ver, len(payload), 0) + payload)
    h = b""
    while len(h) < 16:
        h += s.recv(16 - len(h))
    magic, rop, rver, ln, err = struct.unpack("<IHHIi", h)
    msg = b""
    while len(msg) < ln:
        msg += s.recv(ln - len(msg))
    print(err, rop == op and rver == ver, msg.rstrip(b"\0").decode())
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
check "control: unknown request gets an error reply ($out)" grep -q "^-95 True unknown request" <<<"$out"
# The protocol's version: another one's client gets -EPROTO and a message
# it can read (the reply in its own version), and nothing is served.
out=$(client v0)
check "control: a client of protocol 0 is told ($out)" \
	grep -q "^-71 True this client speaks control protocol 0, xhcad 1" <<<"$out"
out=$(client v2)
check "control: a client of protocol 2 is told ($out)" \
	grep -q "^-71 True this client speaks control protocol 2, xhcad 1" <<<"$out"
out=$(client short)
check "control: a request of the wrong size is refused ($out)" \
	grep -q "^-22 True qp destroy: bad request size 2 (4)" <<<"$out"
out=$(client long)
check "control: a payload where none belongs is refused ($out)" \
	grep -q "^-22 True status: bad request size 8 (0)" <<<"$out"
out=$(client nosession)
check "control: a session's request from the CLI is refused ($out)" \
	grep -q "^-1 True pd alloc: only an application session" <<<"$out"
# The other way: a daemon of another protocol version, the CLI refuses its
# reply with a message (a fake daemon on its own socket).
FAKE=/run/xhca/xvfake$$.sock
timeout 10 python3 - "$FAKE" <<'PY' &
import os, socket, struct, sys
path = sys.argv[1]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(1)
c, _ = srv.accept()
h = c.recv(16)
magic, op, ver, ln, err = struct.unpack("<IHHIi", h)
c.sendall(struct.pack("<IHHIi", magic, op, 2, 0, 0))
c.close()
os.unlink(path)
PY
fake=$!
for _ in $(seq 50); do [ -S "$FAKE" ] && break; sleep 0.1; done
out=$("$B/xhca" -i "xvfake$$" status 2>&1); rc=$?
wait $fake
rm -f "$FAKE"
check_eq "control: the CLI refuses a reply of protocol 2: exit 1" "$rc" 1
check "control: ... and says why ($out)" \
	grep -q "xhcad speaks control protocol 2, this client 1" <<<"$out"
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
xbad "--flowqs 0" "--flowqs 0: use 1 to 62" --flowqs 0
xbad "--flowqs 63 (two are the replication and proxy queues)" "--flowqs 63" --flowqs 63
xbad "--sched rr" "--sched rr: use drr or fifo" --sched rr
xbad "--sched fif (no prefix of a word)" "--sched fif: use drr or fifo" --sched fif
xbad "--gso yes" "--gso yes: use on or off" --gso yes
xbad "--gso on|off (the usage's words, not one)" "--gso on|off: use on or off" --gso "on|off"
xbad "--icrc both" "--icrc both: use first or after" --icrc both
xbad "--mode nativ" "--mode nativ" --mode nativ
xbad "--bus-rate fast" "--bus-rate fast" --bus-rate fast
xbad "--bus-rate 0" "--bus-rate 0" --bus-rate 0
xbad "--watermarks without LOW" "--watermarks" --watermarks 100
xbad "--watermarks LOW >= HIGH" "--watermarks" --watermarks 100,100
xbad "--watermarks over half a ring" "--watermarks" --watermarks 2000,10
xbad "--hostmem-mb 0" "--hostmem-mb 0" --hostmem-mb 0
xbad "--umem-frames 10" "--umem-frames 10" --umem-frames 10
xbad "--jumbo-slots 70000" "--jumbo-slots 70000: use 0 to 65536" --jumbo-slots 70000
xbad "--jumbo-slots many" "--jumbo-slots many: use 0 to 65536" --jumbo-slots many
xbad "--pin-dir longer than a path" "--pin-dir x*: the path is too long" \
	--pin-dir "$(printf 'x%.0s' $(seq 300))"
xbad "--proxy-handler a 7th time" "--proxy-handler /h7.so: 6 at most" \
	$(for i in 1 2 3 4 5 6 7; do echo --proxy-handler /h$i.so; done)
xbad "an option it does not have" "unknown option '--turbo'" --turbo
out=$("$B/xhcad" --help 2>&1); rc=$?
check_eq "control: xhcad --help exits 0" "$rc" 0
check "control: ... its usage from the option table, with ranges and defaults" \
	grep -q -- "--max-qps N .*\[1\.\.65536, default 4096\]" <<<"$out"
check_eq "control: the running daemon did not notice" "$(xhca -j qp show)" "$before"
xhcad_stop TERM
check_eq "control: xhcad exits 0" "$XHCAD_RC" 0
check "control: socket removed on exit" test ! -e "$SOCK"
t_done
