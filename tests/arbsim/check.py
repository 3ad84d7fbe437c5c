#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Property checks on arbsim --json output: check.py CHECK FILE.json.

Exit 0 when the property holds, else print why and exit 1.
"""
import json
import sys


def fail(msg):
    print(msg)
    sys.exit(1)


def load(path):
    with open(path) as f:
        return json.load(f)


def classes(d):
    return {c["handle"]: c for c in d["classes"]}


def shares(d, table):
    return {s["class"]: s for s in d["shares"][table]}


def check_ib(d):
    """IBA Figure 25-10: VL6, VL6, VL1, VL7, VL7, low VL3, VL7 resumes."""
    want = [("1:6", "high", 63), ("1:6", "high", -1), ("1:1", "high", -1),
            ("1:7", "high", 190), ("1:7", "high", 126),
            ("1:3", "low", 2 - 64), ("1:7", "high", 62), ("1:7", "high", -2)]
    got = [(o["class"], o["table"], o["credit"] // 64) for o in d["order"]]
    if got[:len(want)] != want:
        fail("order %s\n  want %s" % (got[:len(want)], want))
    if any(o["len"] != 4096 for o in d["order"]):
        fail("packet sizes")


BX = {"1:10": (2, 5), "1:11": (4, 4), "1:12": (8, 3), "1:13": (16, 2),
      "1:14": (32, 1)}   # class: (stride, total flits share of 15)


def layout(d):
    m = {}
    for e in d["tables"]["high"]:
        m[e["slot"]] = e["class"]
    return m


def check_bxiv3(d):
    """Strides 2..32 with 64/d slots each, shares = BW% within 1 point."""
    cl = classes(d)
    for name, (stride, _) in BX.items():
        slots = cl[name]["high_slots"]
        if len(slots) != 64 // stride:
            fail("%s: %d slots, want %d" % (name, len(slots), 64 // stride))
        gaps = {(b - a) for a, b in zip(slots, slots[1:])}
        if gaps != {stride}:
            fail("%s: slot gaps %s, want %d" % (name, gaps, stride))
        if d["qdisc"]["mode"] == "auto" and cl[name]["allocated_distance"] != stride:
            fail("%s: distance %d" % (name, cl[name]["allocated_distance"]))
    sh = shares(d, "high")
    for name, (_, bw) in BX.items():
        want = 100.0 * bw / 15
        got = 100.0 * sh[name]["byte_share"]
        if abs(got - want) > 1.0:
            fail("%s: byte share %.3f%%, BW %.3f%%" % (name, got, want))
    if d["qdisc"]["accounting"] != "deficit":
        fail("not deficit mode")


def check_same_layout(a, b):
    if layout(a) != layout(b):
        fail("layouts differ:\n  %s\n  %s" % (sorted(layout(a).items()),
                                            sorted(layout(b).items())))


def check_weights(d, pts, rel):
    """Byte shares equal weight shares within pts points and rel relative."""
    for t in ("high", "low"):
        for s in d["shares"][t]:
            diff = 100.0 * abs(s["byte_share"] - s["weight_share"])
            r = diff / (100.0 * s["weight_share"])
            if diff > pts or (rel is not None and r > rel):
                fail("%s %s: byte %.4f weight %.4f (diff %.4f pts, %.3f%%)"
                     % (t, s["class"], s["byte_share"], s["weight_share"],
                        diff, 100 * r))


def check_iba_dev(d):
    sh = shares(d, "high")["1:10"]
    if sh["byte_share"] < 10 * sh["weight_share"]:
        fail("iba: 1:10 byte share %.4f not >> weight share %.4f"
             % (sh["byte_share"], sh["weight_share"]))


def check_hol(d):
    """Measured HOL wait <= guaranteed bound (classes without a ceil)."""
    n = 0
    for c in d["classes"]:
        if c["table"] != "high" or not c["traffic"] or c.get("ceil"):
            continue
        n += 1
        if c["max_hol_wait"] > c["guaranteed_bound"]:
            fail("%s: max HOL %d ns > bound %d ns"
                 % (c["handle"], c["max_hol_wait"], c["guaranteed_bound"]))
        if c["current_bound"] > c["guaranteed_bound"]:
            fail("%s: current bound above guaranteed" % c["handle"])
    if not n:
        fail("no class checked")


def check_reject(d):
    dec = {(x["line"], x.get("class")): x for x in d["decisions"]}
    rej = [x for x in d["decisions"] if x["result"] == "rejected"]
    texts = " | ".join(x["text"] for x in rej)
    for want in ("cannot admit the class: needs 32 slots at distance 2, 16 free; largest admissible distance 4",
                 "cannot admit the class: rate 20Mbit above the guaranteed high-table rate 9.08Mbit",
                 "cannot admit the class: latency 100us below the best possible bound 6.374ms",
                 "is already the strict class",
                 "manual high/low slots on an auto-mode qdisc"):
        if want not in texts:
            fail("missing rejection %r in %s" % (want, texts))
    ok = [x for x in d["decisions"] if x["result"] == "ok"
          and x.get("class") == "1:12"]
    if not ok or ok[-1]["allocated_distance"] != 2 or len(ok[-1]["slots"]) != 32:
        fail("1:12 not admitted after the release: %s" % ok)
    cl = classes(d)
    if "1:10" in cl or "1:16" in cl:
        fail("deleted/rejected class present")
    if d["unclassified"]["sources"] != ["1:13"]:
        fail("unclassified sources %s" % d["unclassified"]["sources"])
    del dec


def check_defrag(d):
    sw = [x["swaps"] for x in d["decisions"] if x["cmd"] == "del"]
    if sw != [0, 16]:
        fail("swaps on release %s, want [0, 16]" % sw)
    c = classes(d)["1:14"]
    if c["allocated_distance"] != 2 or len(c["high_slots"]) != 32:
        fail("1:14 after defragmentation: %s" % c)
    owners = {}
    for name, c in classes(d).items():
        for s in c["high_slots"]:
            if s in owners:
                fail("slot %d owned twice" % s)
            owners[s] = name
    if len(owners) != 64:
        fail("%d slots owned" % len(owners))


def check_ceil(d):
    cl = classes(d)
    tot = d["sim"]["bytes"]
    for name, rate in (("1:1", 1e6 / 8), ("1:11", 3e6 / 8), ("1:10", 1.5e6 / 8)):
        got = cl[name]["bytes"] / (d["sim"]["duration_ns"] / 1e9)
        if abs(got - rate) / rate > 0.02:
            fail("%s: %.0f B/s, want %.0f" % (name, got, rate))
    if cl["1:1"]["throttled"] == 0 or cl["1:11"]["throttled"] == 0:
        fail("ceil never throttled")
    if cl["1:20"]["bytes"] < 0.4 * tot:
        fail("best effort starved: %d of %d" % (cl["1:20"]["bytes"], tot))


def main():
    if len(sys.argv) < 3:
        fail("usage: check.py CHECK FILE.json [...]")
    what, files = sys.argv[1], [load(p) for p in sys.argv[2:]]
    d = files[0]
    if what == "ib":
        check_ib(d)
    elif what == "bxiv3":
        check_bxiv3(d)
    elif what == "same-layout":
        check_same_layout(files[0], files[1])
    elif what == "deficit-mixed":
        check_weights(d, 0.5, 0.005)
    elif what == "deficit-0.5":
        check_weights(d, 0.5, None)
    elif what == "iba-dev":
        check_iba_dev(d)
    elif what == "hol":
        check_hol(d)
    elif what == "reject":
        check_reject(d)
    elif what == "defrag":
        check_defrag(d)
    elif what == "ceil":
        check_ceil(d)
    else:
        fail("unknown check " + what)


if __name__ == "__main__":
    main()
