#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Decode the TCA_OPTIONS that tc + q_arbtable.so put in a netlink request.

Reads `strace -e trace=sendmsg -e write=all` output (the hex dump of every
sent buffer) on stdin, takes the last
RTM_NEWQDISC / RTM_NEWTCLASS message and prints its arbtable options on one
line, e.g.

  kind=arbtable MODE=0 RATE=1250000 HIGH=[0:0x10:5,2:0x12:7] LOW=[]

Table slots are slot:minor:weight, the slot being the nest's position
(one TCA_ARBTABLE_TBL_SLOT per slot from 0); an empty nest (a null slot)
is left out, one with only a class or a weight prints its missing value as
"-". Exit 1 if no request was found.
"""
import re
import struct
import sys

RTM_NEWQDISC, RTM_NEWTCLASS = 36, 40
TCA_KIND, TCA_OPTIONS = 1, 2
NLA_TYPE_MASK = 0x3FFF

# (name, format) by attribute type, from pkt_sched_arbtable.h
QDISC = {1: ("MODE", "I"), 2: ("RATE", "Q"), 3: ("HIGHLIMIT", "I"),
         4: ("ACCOUNTING", "I"), 5: ("DEFAULT", "I"), 6: ("PRIOMAP", "prio"),
         7: ("MTU", "I"), 8: ("MAXWEIGHT", "I"), 9: ("HIGH", "table"),
         10: ("LOW", "table"), 12: ("BURST", "I"), 13: ("MTU_FOLLOW", "flag"),
         14: ("RATE_LINK", "flag"), 15: ("PRIO_CLASSID", "I"),
         16: ("CLASSIFY_FOREIGN", "I"), 17: ("LOCKLESS", "I")}
CLASS = {1: ("STRICT", "I"), 2: ("CEIL", "Q"), 3: ("RATE", "Q"),
         4: ("LATENCY", "Q"), 5: ("DISTANCE", "I"), 6: ("SHARE", "I"),
         8: ("CBURST", "I")}


def attrs(buf):
    off = 0
    while off + 4 <= len(buf):
        alen, atype = struct.unpack_from("<HH", buf, off)
        if alen < 4:
            break
        yield atype, buf[off + 4:off + alen]
        off += (alen + 3) & ~3


def decode_opts(payload, table):
    out = []
    for atype, data in attrs(payload):
        name, fmt = table.get(atype & NLA_TYPE_MASK, ("ATTR%d" % atype, "raw"))
        nested = "N" if atype & 0x8000 else ""
        if fmt == "table":
            ents = []
            for s, (t, d) in enumerate(attrs(data)):
                if (t & NLA_TYPE_MASK) != 1:
                    ents.append("?%d" % t)
                    continue
                f = {st & NLA_TYPE_MASK: struct.unpack_from("<I", sd)[0]
                     for st, sd in attrs(d) if len(sd) >= 4}
                if not f:
                    continue
                ents.append("%d:%s:%s" % (
                    s, "%#x" % f[1] if 1 in f else "-",
                    f[2] if 2 in f else "-"))
            out.append("%s%s=[%s]" % (name, nested, ",".join(ents)))
        elif fmt == "prio":
            bands = ["%#x" % struct.unpack_from("<I", d)[0]
                     for t, d in attrs(data) if (t & NLA_TYPE_MASK) == 1]
            out.append("%s%s=[%s]" % (name, nested, ",".join(bands)))
        elif fmt == "flag":
            out.append(name if not data else "%s=BADLEN%d" % (name, len(data)))
        elif fmt == "raw":
            out.append("%s=%s" % (name, data.hex()))
        else:
            size = struct.calcsize("<" + fmt)
            if len(data) != size:
                out.append("%s=BADLEN%d" % (name, len(data)))
            else:
                out.append("%s=%d" % (name, struct.unpack("<" + fmt, data)[0]))
    return out


def main():
    bufs, cur = [], None
    for line in sys.stdin:
        if re.match(r"^ \* \d+ bytes in buffer", line):
            cur = bytearray()
            bufs.append(cur)
            continue
        m = re.match(r"^ \| [0-9a-f]{5}  ((?:[0-9a-f]{2} {1,2}){1,16})", line)
        if m and cur is not None:
            cur += bytes.fromhex(m.group(1).replace(" ", ""))
    msgs = []
    for raw in bufs:
        if len(raw) >= 16:
            mtype = struct.unpack_from("<H", raw, 4)[0]
            if mtype in (RTM_NEWQDISC, RTM_NEWTCLASS):
                msgs.append((mtype, raw))
    if not msgs:
        print("no request")
        return 1
    mtype, raw = msgs[-1]
    nlen = struct.unpack_from("<I", raw, 0)[0]
    body = raw[16 + 20:nlen]   # nlmsghdr + struct tcmsg
    out = []
    for atype, data in attrs(body):
        if atype == TCA_KIND:
            out.append("kind=" + data.rstrip(b"\0").decode())
        elif (atype & NLA_TYPE_MASK) == TCA_OPTIONS:
            out.append("OPTIONS%s" % ("N" if atype & 0x8000 else ""))
            out += decode_opts(data, QDISC if mtype == RTM_NEWQDISC else CLASS)
    print(" ".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
