# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The RoCEv2 responses in a capture, one line per frame: opcode, dest QPN, PSN,
# AETH (hex, "-" without one), the ATOMIC ACK's original value or the payload
# (hex, "-" for none), whether scapy finds the ICRC right.
# Usage: /usr/bin/python3 roce_resp.py FILE.pcap
import logging
import sys

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.all import Ether, raw, rdpcap  # noqa: E402
from scapy.contrib.roce import BTH  # noqa: E402

for f in rdpcap(sys.argv[1]):
    p = Ether(raw(f))
    if BTH not in p:
        continue
    b = raw(p[BTH])
    op, pad = b[0], (b[1] >> 4) & 3
    q = p.copy()
    q[BTH].icrc = None
    icrc = raw(q)[-4:] == raw(p)[-4:]
    hdr = 12 + (4 if op in (0x0d, 0x0f, 0x10, 0x11) else 12 if op == 0x12 else 0)
    aeth = b[12:16].hex() if op in (0x0d, 0x0f, 0x10, 0x11, 0x12) else "-"
    pay = b[hdr:len(b) - 4 - pad]
    extra = b[16:24].hex() if op == 0x12 else pay.hex()
    print(hex(op), int.from_bytes(b[5:8], "big"), int.from_bytes(b[9:12], "big"), aeth,
          extra or "-", icrc)
