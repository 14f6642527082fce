# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""pcap_icrc.py FILE: checks the ICRC of every RoCEv2 frame of a capture
with scapy's. Prints "N roce frames, M bad ICRC" and the first bad ones;
exits 1 when any is bad or there is none."""
import logging
import os
import sys

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scapy.all import UDP, Ether, raw, rdpcap  # noqa: E402
from scapy.contrib.roce import BTH  # noqa: E402,F401

from roce_icrc import scapy_icrc  # noqa: E402

n, bad = 0, []
for i, f in enumerate(rdpcap(sys.argv[1])):
    pkt = Ether(raw(f))
    if UDP not in pkt or pkt[UDP].dport != 4791:
        continue
    n += 1
    if raw(pkt)[-4:] != scapy_icrc(pkt):
        bad.append(i + 1)
print(f"{n} roce frames, {len(bad)} bad ICRC" + (f": frames {bad[:10]}" if bad else ""))
sys.exit(1 if bad or not n else 0)
