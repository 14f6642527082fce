# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The ICRC of a RoCEv2 frame as scapy computes it (tests' reference).

scapy's BTH.post_build knows IPv4 only; for IPv6 its recipe is applied with
the IPv6 variant fields (traffic class, flow label, hop limit) set to ones.
"""
import struct
import zlib

from scapy.all import UDP, IPv6, raw
from scapy.contrib.roce import BTH


def icrc_ipv6(pkt):
    """scapy's IPv4 ICRC recipe, IPv6 variant fields set to ones."""
    ip = pkt[IPv6].copy()
    ip.tc, ip.fl, ip.hlim = 0xFF, 0xFFFFF, 0xFF
    ip[UDP].chksum = 0xFFFF
    ip[BTH].fecn, ip[BTH].becn, ip[BTH].resv6 = 1, 1, 0x3F
    data = raw(ip)[:-4]  # the dissected ICRC is kept as is: strip it
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + data) & 0xFFFFFFFF)


def scapy_icrc(pkt):
    """The 4 ICRC bytes scapy computes for pkt (an Ether frame)."""
    if IPv6 in pkt:
        return icrc_ipv6(pkt)
    again = pkt.copy()
    again[BTH].icrc = None  # scapy recomputes it in BTH.post_build
    return raw(again)[-4:]
