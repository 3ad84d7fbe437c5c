#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""`arbtablectl request` without a device against arbsim, on the host.

The device-less form sizes a request for qdisc parameters given on the
command line; arbsim admits the same request as the first class of a
scenario with the same qdisc line.  Both run the module's core, through
different front ends (arbtable_cost.c vs arbsim's own qdisc set-up), so
agreement checks that the parameters reach the core the same way.  For
an empty table the allocator refuses only what the sizing refuses, so
"valid" must equal "admitted", and an admitted class's table, distance,
slots, reserved units and guaranteed bound must equal the request's cost.
The kernel's agreement with the device form is selftests' test_capacity.

    tests/request/devless-check.py [BUILD]     ends with "N passed, N failed"
"""
import json
import random
import subprocess
import sys
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
CTL = os.path.join(BUILD, "tools", "arbtablectl")
SIM = os.path.join(BUILD, "tools", "arbsim")
npass = nfail = 0


def ok(msg):
    global npass
    npass += 1
    print("ok   " + msg)


def bad(msg):
    global nfail
    nfail += 1
    print("FAIL " + msg)


def ctl(args):
    p = subprocess.run([CTL, "--json", "request"] + args, capture_output=True,
                       text=True)
    return p.returncode, p.stdout, p.stderr


def qdisc_words(link, mtu, mw, hl):
    return "rate %s mtu %d maxweight %d highlimit %d" % (link, mtu, mw, hl)


def compare(link, mtu, mw, hl, req, strict=None):
    """One request both ways; strict = (ceil) for a strict class first."""
    name = "link %s mtu %d maxweight %d highlimit %d%s: %s" % (
        link, mtu, mw, hl, " strictceil %s" % strict if strict else "", req)
    args = req.split() + ["link", link, "mtu", str(mtu), "maxweight",
                          str(mw), "highlimit", str(hl)]
    if strict:
        args += ["strictceil", strict]
    rc, out, err = ctl(args)
    try:
        r = json.loads(out)
    except ValueError:
        bad("%s: arbtablectl exit %d, not JSON: %s %s" % (name, rc, out, err))
        return
    scn = "qdisc auto %s\n" % qdisc_words(link, mtu, mw, hl)
    if strict:
        scn += "class 1:1 strict ceil %s\n" % strict
    scn += "class 1:10 %s\n" % req
    p = subprocess.run([SIM, "-n", "1", "-o", "0", "-j", "-"], input=scn,
                       capture_output=True, text=True)
    if p.returncode:
        bad("%s: arbsim exit %d: %s" % (name, p.returncode, p.stderr.strip()))
        return
    s = json.loads(p.stdout)
    d = [x for x in s["decisions"] if x.get("class") == "1:10"][0]
    if r["high_capacity_bps"] != s["qdisc"]["high_capacity"] * 8:
        bad("%s: C_high %d bit/s, arbsim %d B/s" % (
            name, r["high_capacity_bps"], s["qdisc"]["high_capacity"]))
        return
    admitted = d["result"] == "ok"
    if r["valid"] != admitted or (rc == 4) == admitted:
        bad("%s: valid %s (exit %d), arbsim %s" % (name, r["valid"], rc,
                                                     d["result"]))
        return
    if not admitted:
        if r["why"] in d["text"]:
            ok("%s: refused by both (%s)" % (name, r["why"]))
        else:
            bad("%s: why \"%s\", arbsim \"%s\"" % (name, r["why"], d["text"]))
        return
    got = (r["table"], r["distance"], r["slots"], r["units"],
           r["bound_ns"])
    want = (d["table"], d["allocated_distance"], len(d["slots"]),
            d["reserved_weight"], d.get("guaranteed_bound", 0))
    if got == want:
        ok("%s: %s distance %d, %d slots, %d units, bound %d ns" % (
            (name,) + got))
    else:
        bad("%s: request %s, arbsim %s" % (name, got, want))


def main():
    for tool in (CTL, SIM):
        if not os.access(tool, os.X_OK):
            bad("%s not built (make lib arbsim)" % tool)
            print("%d passed, %d failed" % (npass, nfail))
            return 1
    # the example, with the defaults the man page gives
    rc, out, _ = ctl(["rate", "2gbit", "latency", "50ms"])
    r = json.loads(out) if rc == 0 else {}
    if (r.get("rate_bps"), r.get("mtu"), r.get("maxweight"),
            r.get("highlimit"), r.get("strict_ceil_bps")) == \
            (10000000000, 74406, 255, 16, 0):
        ok("defaults: link 10gbit, mtu 74406 (a 64 KiB GSO skb kept whole), "
           "maxweight 255, highlimit 16")
    else:
        bad("defaults: exit %d: %s" % (rc, out))
    # the mtu followed depends on the link: a frame below 1gbit
    for link, want in (("999mbit", 1514), ("1gbit", 74406), ("100mbit", 1514)):
        rc, out, _ = ctl(["rate", "1mbit", "link", link])
        r = json.loads(out) if rc == 0 else {}
        if r.get("mtu") == want:
            ok("default mtu at link %s: %d" % (link, want))
        else:
            bad("default mtu at link %s: want %d, exit %d: %s" % (link, want, rc, out))
    compare("10gbit", 1514, 255, 16, "rate 2gbit latency 50us")
    compare("10gbit", 1514, 255, 16, "rate 1mbit latency 50us")
    compare("10gbit", 1514, 255, 16, "rate 1mbit latency 1ns")
    compare("1gbit", 9014, 64, 4, "rate 100mbit distance 8")
    compare("1gbit", 1514, 255, 0, "share 7 distance 16")
    compare("100mbit", 1514, 16, 255, "rate 90mbit latency 200us")
    compare("10gbit", 1514, 255, 16, "rate 500mbit latency 2ms",
            strict="1gbit")
    # random parameters and requests, fixed seed (repeatable)
    rng = random.Random(17)
    for _ in range(120):
        link = "%dmbit" % rng.choice([10, 100, 1000, 10000, 25000, 100000])
        mbit = int(link[:-4])
        mtu = rng.choice([1514, 4096, 9014])
        mw = rng.choice([255, 128, 64, 16, 1])
        hl = rng.choice([0, 1, 16, 255])
        if rng.random() < 0.3:
            req = "share %d" % rng.randint(1, 255)
            if rng.random() < 0.5:
                req += " distance %d" % rng.choice([1, 2, 4, 8, 16, 32, 64])
        else:
            req = "rate %dkbit" % max(1, mbit * rng.choice(
                [1, 5, 50, 200, 500, 900]))
            k = rng.random()
            if k < 0.4:
                req += " latency %dus" % rng.choice(
                    [1, 5, 20, 50, 200, 1000, 10000])
            elif k < 0.7:
                req += " distance %d" % rng.choice([1, 2, 4, 8, 16, 32, 64])
        strict = None
        if rng.random() < 0.2:
            strict = "%dkbit" % (mbit * rng.choice([10, 100, 300]))
        compare(link, mtu, mw, hl, req, strict)
    # usage errors: exit 64, nothing on stdout
    for args in (["rate", "1mbit", "link", "0"],
                 ["rate", "1mbit", "mtu", "63"],
                 ["rate", "1mbit", "maxweight", "256"],
                 ["rate", "1mbit", "highlimit", "256"],
                 ["rate", "1mbit", "strictceil", "20gbit"],
                 ["rate", "1mbit", "strictcburst", "30k"],
                 ["rate", "1mbit", "share", "3"],
                 ["share", "3", "latency", "1ms"],
                 ["link", "1gbit"],
                 ["rate", "1mbit", "linkk", "1gbit"],
                 ["eth0", "rate", "1mbit", "link", "1gbit"]):
        rc, out, err = ctl(args)
        if rc == 64 and not out and "request:" in err:
            ok("usage error: %s" % " ".join(args))
        else:
            bad("usage error: %s: exit %d, %s %s" % (" ".join(args), rc,
                                                      out, err))
    print("%d passed, %d failed" % (npass, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
