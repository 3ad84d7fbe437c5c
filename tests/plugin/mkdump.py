#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write netlink RTM_NEWQDISC / RTM_NEWTCLASS messages, shaped like the
dumps sch_arbtable sends, to a file that `tc monitor file FILE` prints with
q_arbtable.so: tests the plugin's printing paths without the kernel module.

  mkdump.py OUT qdisc-manual | qdisc-auto | class | class-strict | all
"""
import struct
import sys

RTM_NEWQDISC, RTM_NEWTCLASS = 36, 40
TCA_KIND, TCA_OPTIONS, TCA_STATS2 = 1, 2, 7
TCA_STATS_BASIC, TCA_STATS_QUEUE, TCA_STATS_APP = 1, 3, 4
NLA_F_NESTED = 0x8000


def attr(atype, data):
    a = struct.pack("<HH", 4 + len(data), atype) + data
    return a + b"\0" * ((-len(a)) % 4)


def nest(atype, *children):
    return attr(atype | NLA_F_NESTED, b"".join(children))


def u32(t, v): return attr(t, struct.pack("<I", v))
def u64(t, v): return attr(t, struct.pack("<Q", v))


def table(t, entries):
    # one TCA_ARBTABLE_TBL_SLOT nest per slot from slot 0, empty if null
    by_slot = {s: (m, w) for s, m, w in entries}
    last = max(by_slot) + 1 if by_slot else 0
    return nest(t, *[nest(1, u32(1, by_slot[s][0]), u32(2, by_slot[s][1]))
                     if s in by_slot else nest(1) for s in range(last)])


def msg(mtype, handle, parent, info, body):
    tcm = struct.pack("<BxxxiIII", 0, 1, handle, parent, info)
    payload = tcm + body
    return struct.pack("<IHHII", 16 + len(payload), mtype, 0, 1, 0) + payload


def stats(app):
    basic = struct.pack("<QI", 123456, 789) + b"\0" * 4
    queue = struct.pack("<IIIII", 2, 3000, 4, 5, 6)
    return nest(TCA_STATS2, attr(TCA_STATS_BASIC, basic),
                attr(TCA_STATS_QUEUE, queue), attr(TCA_STATS_APP, app))


XSTATS_QDISC, XSTATS_CLASS = 0, 1


def qdisc_xstats(high_used, low_used, extra=b""):
    # type, nclasses, unclassified pkts/drops, swaps, throttled,
    # unclassified qlen, used, broken; gso split, segments, oversize
    # drops; capacity, link rate, link and mtu changes, stalls
    return struct.pack("<IIQQQQIIIIQQQQQQQQ", XSTATS_QDISC, 4, 7, 1, 3, 9, 2,
                       high_used, low_used, 0, 5, 40, 1,
                       0, 0, 0, 0, 0) + extra


def qdisc(mode, high, low, priomap=None, default=0x30):
    opts = [u32(1, mode), u64(2, 1250000), u32(3, 4), u32(4, 0),
            u32(5, default)]
    if priomap is not None:
        opts.append(nest(6, *[u32(1, b) for b in priomap]))
    opts += [u32(7, 1514), u32(8, 255), table(9, high), table(10, low)]
    if mode == 0:
        opts.append(u32(12, 30720))   # burst: manual example only
    # the auto example from a kernel that reports the unclassified
    # queue's bound and longest wait, the manual one from an older one
    extra = struct.pack("<QQ", 109702400, 52000000) if mode == 1 else b""
    body = (attr(TCA_KIND, b"arbtable\0") + nest(TCA_OPTIONS, *opts) +
            stats(qdisc_xstats(len(high), len(low), extra)))
    return msg(RTM_NEWQDISC, 0x10000, 0xFFFFFFFF, 1, body)


def klass(minor, opts, high_slots, low_slots, xtype=XSTATS_CLASS, extra=b""):
    # type, broken, slots, weights, distance, reserved weight, reserved
    # and guaranteed rates, guaranteed/current bounds, max HOL, throttled,
    # stalls
    xs = struct.pack("<IIQQIIIIQQQQQQQ", xtype, 0, high_slots,
                     low_slots, 127 * bin(high_slots).count("1"),
                     2 * bin(low_slots).count("1"), 16, 3427,
                     250000000, 262500000, 12345, 11000, 5200, 17,
                     0) + extra
    body = (attr(TCA_KIND, b"arbtable\0") + nest(TCA_OPTIONS, *opts) +
            stats(xs))
    return msg(RTM_NEWTCLASS, 0x10000 | minor, 0x10000, 0x80010000, body)


def build(which):
    out = b""
    if which in ("qdisc-manual", "all"):
        out += qdisc(0, [(0, 0x10, 127), (1, 0x11, 63), (3, 0x12, 5)],
                     [(0, 0x30, 2)],
                     [0x10, 0x10, 0, 0, 0x11, 0, 0, 0,
                      0, 0, 0, 0, 0, 0, 0, 0x12])
    if which in ("qdisc-auto", "all"):
        out += qdisc(1, [(s, 0x20, 255) for s in range(0, 64, 16)], [],
                     None, 0)
    if which in ("class", "all"):
        out += klass(0x10, [u64(2, 0), u64(3, 250000000), u64(4, 50000),
                            u32(6, 0)], (1 << 0) | (1 << 16) | (1 << 32) |
                     (1 << 48), 0)
    if which in ("class-strict", "all"):
        out += klass(0x11, [u32(1, 1), u64(2, 12500000), u32(8, 30720), u32(5, 8),
                            u32(6, 3)], 0, 1 << 5)
    if which == "class-newer":
        # a newer kernel's longer class xstats: the known prefix is read
        out += klass(0x12, [u32(6, 4)], 0, 1 << 7, extra=b"\xff" * 24)
    if which == "class-badtype":
        out += klass(0x13, [u32(6, 4)], 0, 1 << 7, xtype=7)
    return out


if __name__ == "__main__":
    with open(sys.argv[1], "wb") as f:
        f.write(build(sys.argv[2] if len(sys.argv) > 2 else "all"))
