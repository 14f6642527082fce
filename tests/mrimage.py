# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""What a memory region should hold, for the WRITE tests.

  mrimage.py init IMG LEN            LEN zero bytes
  mrimage.py apply IMG OFF LEN SEED  a WRITE of xhca-gen --msg-len LEN
                                     --pattern SEED at offset OFF
  mrimage.py check IMG GOT           prints "same", or where GOT differs
"""
import sys


def pattern(seed, off, n):
    # xhca_msg_pattern() in include/xhca/pkt.h
    return bytes((seed * 0x9e + k + (k >> 8) * 3 + (k >> 16) * 5) & 0xff
                 for k in range(n))


def main(a):
    if a[0] == "init":
        open(a[1], "wb").write(bytes(int(a[2])))
    elif a[0] == "apply":
        img = bytearray(open(a[1], "rb").read())
        off, n, seed = int(a[2], 0), int(a[3], 0), int(a[4], 0)
        img[off:off + n] = pattern(seed, off, n)
        open(a[1], "wb").write(img)
    elif a[0] == "check":
        want, got = open(a[1], "rb").read(), open(a[2], "rb").read()
        if want == got:
            print("same")
            return
        if len(want) != len(got):
            print("length %d, want %d" % (len(got), len(want)))
            return
        diff = [i for i in range(len(want)) if want[i] != got[i]]
        print("%d bytes differ, first at %d (0x%02x, want 0x%02x), last at %d"
              % (len(diff), diff[0], got[diff[0]], want[diff[0]], diff[-1]))


main(sys.argv[1:])
