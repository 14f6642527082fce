# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Hostile CM MADs to a host's QP1, built with scapy (not our packet builder).

Usage: /usr/bin/python3 cm_mad.py IFACE DST_MAC SRC_MAC DST_IP SRC_IP CASE

Sends one UD SEND_ONLY frame to QP1 of DST_IP, from QP1 of SRC_IP; CASE is
what its MAD is (see CASES). The ICRC is scapy's, right unless the case
says otherwise.
"""
import logging
import struct
import sys

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.all import IP, UDP, Ether, Raw, conf, sendp  # noqa: E402
from scapy.contrib.roce import BTH  # noqa: E402

GSI_QKEY = 0x80010000


def mad(attr, data=b"", cls=0x07, ver=2, method=0x03, base=1):
    """A 256-byte MAD: common header, then the CM data (zero-padded)."""
    hdr = struct.pack(">BBBBHHQHHI", base, cls, ver, method, 0, 0, 0x1234_0000_0042, attr, 0, 0)
    return (hdr + data + bytes(232))[:256]


def ids(local, remote):
    """The two comm IDs every connected-mode message starts with."""
    return struct.pack(">II", local, remote)


def cma_hdr(sport, src, dst, ver=4):
    """rdma_cm's header: version 0, IP version, port, the two addresses."""
    h = struct.pack(">BBH", 0, ver << 4, sport) + bytes(12)
    return h + bytes(map(int, src.split("."))) + bytes(12) + bytes(map(int, dst.split(".")))


def req(sid, src, dst, cma=None):
    """A REQ for service ID sid (an RC QP 0x42, PSN 0), rdma_cm's header at 140."""
    q = bytearray(232)
    q[0:4] = struct.pack(">I", 0x51515151)
    q[8:16] = struct.pack(">Q", sid)
    q[16:24] = struct.pack(">Q", 0x0200_00ff_fe00_0001)
    q[32:35] = (0x42).to_bytes(3, "big")
    q[47] = 20 << 3 | 7
    q[48:50] = b"\xff\xff"
    q[50] = 3 << 4 | 7
    q[51] = 15 << 4
    q[140:176] = cma if cma is not None else cma_hdr(40000, src, dst)
    return bytes(q)


def cases(src, dst):
    unknown = ids(0x0BADC0DE, 0x0DEFACED)
    return {
        # the MAD cut short: 100 bytes of 256
        "short": (mad(0x0010)[:100], {}),
        # not the CM's class (Performance Management), version 1, a Get
        "class": (mad(0x0010, cls=0x04), {}),
        "version": (mad(0x0010, ver=1), {}),
        "method": (mad(0x0010, method=0x01), {}),
        "base": (mad(0x0010, base=2), {}),
        # LAP: no alternate paths on RoCE
        "lap": (mad(0x0019, unknown), {}),
        # messages for no connection of the host's
        "rep": (mad(0x0013, unknown), {}),
        "rtu": (mad(0x0014, unknown), {}),
        "rej": (mad(0x0012, unknown), {}),
        "mra": (mad(0x0011, unknown), {}),
        "drep": (mad(0x0016, unknown), {}),
        "sidr_rep": (mad(0x0018, unknown), {}),
        # a DREQ for no connection is answered all the same (a DREP)
        "dreq": (mad(0x0015, unknown + b"\x00\x00\x42\x00"), {}),
        # a REQ whose rdma_cm header is no header (version 0xff)
        "req_bad_cma": (mad(0x0010, req(0x0106 << 16 | 7471, src, dst, b"\xff" * 36)), {}),
        # a REQ for another host's address in its rdma_cm header
        "req_other_dst": (mad(0x0010, req(0x0106 << 16 | 7471, src, "10.99.99.99")), {}),
        # QP1 with a Q_Key other than the GSI's
        "qkey": (mad(0x0010, req(0x0106 << 16 | 7471, src, dst)), {"qkey": 0x1234}),
        # a wrong ICRC
        "icrc": (mad(0x0010, req(0x0106 << 16 | 7471, src, dst)), {"icrc": 0x12345678}),
    }


def main():
    ifc, dmac, smac, dip, sip, what = sys.argv[1:7]
    payload, opt = cases(sip, dip)[what]
    deth = struct.pack(">IBBH", opt.get("qkey", GSI_QKEY), 0, 0, 1)  # source QP 1
    frame = (Ether(dst=dmac, src=smac) / IP(dst=dip, src=sip, flags="DF") /
             UDP(sport=49152, dport=4791) /
             BTH(opcode=0x64, dqpn=1, psn=7, icrc=opt.get("icrc")) / Raw(deth + payload))
    conf.verb = 0
    sendp(frame, iface=ifc)


if __name__ == "__main__":
    main()
