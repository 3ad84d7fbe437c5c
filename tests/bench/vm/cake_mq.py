#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Attach cake_mq (Linux 7.0+) as the root of a device, with a base rate.

    cake_mq.py DEV HANDLE_MAJOR RATE_BYTES_PER_S

The installed tc (iproute2 6.1) predates cake_mq: for an unknown kind it
sends no options, which would leave cake_mq unlimited, and an unlimited
cake_mq never runs its sibling scan (cake_dequeue reads the other queues
only when a rate is set).  This sends the RTM_NEWQDISC itself: TCA_KIND
"cake_mq" and TCA_OPTIONS { TCA_CAKE_BASE_RATE64 } (include/uapi/linux/
pkt_sched.h; bytes per second, as tc's cake sends it); every other cake
option keeps its default.  Exits non-zero
with the kernel's error (and extack message) if the kernel refuses.
"""
import os
import socket
import struct
import sys

RTM_NEWQDISC = 36
NLM_F_REQUEST, NLM_F_ACK, NLM_F_EXCL, NLM_F_CREATE = 1, 4, 0x200, 0x400
NLMSG_ERROR = 2
TCA_KIND, TCA_OPTIONS = 1, 2
TCA_CAKE_BASE_RATE64 = 2
TC_H_ROOT = 0xFFFFFFFF
NLMSGERR_ATTR_MSG = 1


def nla(kind, payload):
    hdr = struct.pack("=HH", 4 + len(payload), kind)
    return hdr + payload + b"\0" * (-len(payload) % 4)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    dev, major, rate = sys.argv[1], int(sys.argv[2], 16), int(sys.argv[3])
    ifindex = socket.if_nametoindex(dev)
    tcm = struct.pack("=BxxxiIII", socket.AF_UNSPEC, ifindex, major << 16, TC_H_ROOT, 0)
    body = tcm + nla(TCA_KIND, b"cake_mq\0") + nla(TCA_OPTIONS, nla(TCA_CAKE_BASE_RATE64, struct.pack("=Q", rate)))
    msg = struct.pack("=IHHII", 16 + len(body), RTM_NEWQDISC,
                      NLM_F_REQUEST | NLM_F_ACK | NLM_F_EXCL | NLM_F_CREATE, 1, 0) + body
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    s.setsockopt(270, 11, 1)  # SOL_NETLINK, NETLINK_EXT_ACK
    s.send(msg)
    ans = s.recv(65536)
    _, typ, flags, _, _ = struct.unpack_from("=IHHII", ans)
    if typ != NLMSG_ERROR:
        sys.exit("cake_mq.py: unexpected netlink answer type %d" % typ)
    err = -struct.unpack_from("=i", ans, 16)[0]
    if err:
        text = ""
        off = 16 + 4 + 16 + len(body) if not flags & 0x100 else 16 + 4 + 16  # NLM_F_CAPPED
        while off + 4 <= len(ans):
            alen, akind = struct.unpack_from("=HH", ans, off)
            if alen < 4:
                break
            if akind == NLMSGERR_ATTR_MSG:
                text = ans[off + 4:off + alen].split(b"\0")[0].decode(errors="replace")
            off += (alen + 3) & ~3
        sys.exit("cake_mq.py: %s%s" % (os.strerror(err), ": " + text if text else ""))


if __name__ == "__main__":
    main()
