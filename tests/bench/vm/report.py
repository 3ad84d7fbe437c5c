#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn a bench-vm run into a table, CSV and JSON.

The guest prints one "RUN unshaped QDISC N BANDS SIZE REP PACKETS NS" line
per pktgen burst; the plugin printed two "MARK total" lines around each
burst, in the same order.  Instructions per packet = (after - before) /
packets.  The gso mode's RUN lines (one iperf3 run each) give the payload
in MSS-sized segments (bytes / the mode's MSS) as PACKETS and add the skbs the
sending veth transmitted: instructions per segment, and segments per skb.  Per configuration: median over the repetitions and the spread
(max - min) / median.  Then the issue's targets are evaluated on the
medians and printed as statements, never asserted.
"""
import argparse
import csv
import json
import platform
import statistics
import sys


def parse(guest, marks, boot=0):
    """One VM boot's runs.  With COMBO lines in the log (run.sh resumes
    after a guest crash), only the configurations the boot finished
    count; markers after the last finished run (a crash between the two
    markers of a burst) are dropped."""
    runs, done, finished = [], set(), False
    for line in open(guest, errors="replace"):
        f = line.split()
        if len(f) in (9, 10) and f[0] == "RUN":
            runs.append(dict(mode=f[1], qdisc=f[2], n=int(f[3]), bands=int(f[4]),
                             size=int(f[5]), rep=int(f[6]), packets=int(f[7]), ns=int(f[8]), boot=boot,
                             skbs=int(f[9]) if len(f) == 10 else 0))
        elif len(f) == 5 and f[0] == "COMBO":
            done.add((f[1], f[2], int(f[3]), int(f[4])))
        elif f[:1] == ["BENCH-DONE"]:
            finished = True
    m = [int(l.split()[1]) for l in open(marks, errors="replace") if l.startswith("MARK ")]
    # profile blocks ("TB vaddr insns") follow each run's second marker
    prof, k = [], -1
    for l in open(marks, errors="replace"):
        if l.startswith("MARK "):
            k += 1
            if k % 2 == 1:
                prof.append({})
        elif l.startswith("TB ") and prof:
            _, va, n = l.split()
            prof[-1][int(va, 16)] = int(n)
        elif l.startswith("TBFULL ") and prof:
            prof[-1]["full"] = int(l.split()[1])
    if not finished and len(m) > 2 * len(runs):
        m = m[:2 * len(runs)]
    if len(m) != 2 * len(runs):
        sys.exit("report: %s: %d RUN lines but %d MARK lines (want twice as many)" % (guest, len(runs), len(m)))
    for i, r in enumerate(runs):
        r["insns"] = m[2 * i + 1] - m[2 * i]
        r["ipp"] = r["insns"] / r["packets"] if r["packets"] else 0.0
        r["pps"] = r["packets"] / (r["ns"] / 1e9) if r["ns"] else 0.0
        r["tbs"] = prof[i] if i < len(prof) else {}
    if done or not finished:
        runs = [r for r in runs if (r["mode"], r["qdisc"], r["n"], r["size"]) in done]
    # a failed gso run (RUN ... 0 0 0): its markers are paired, it counts not
    return [r for r in runs if r["packets"]]


def ksyms(guest):
    """The boot's kernel text symbols (KASLR: each boot has its own),
    sent by the guest as gzip + base64 on KSYMZ lines."""
    import base64
    import gzip
    b64 = "".join(line.split()[1] for line in open(guest, errors="replace")
                  if line.startswith("KSYMZ ") and len(line.split()) == 2)
    syms = []
    try:
        text = gzip.decompress(base64.b64decode(b64)).decode(errors="replace") if b64 else ""
    except (ValueError, OSError, EOFError):
        text = ""      # damaged on the console: the profile names nothing
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 2:
            syms.append((int(f[0], 16), f[1] + (" " + f[2] if len(f) > 2 else "")))
    syms.sort()
    return syms


# Kernel helpers that are the per-class queue of ets/drr/qfq/htb and
# arbtable (their default pfifo child, called through its ops).
CHILD_HELPERS = ("pfifo_enqueue", "qdisc_dequeue_head", "qdisc_peek_head", "qdisc_peek_dequeued")


def profile(runs, guests):
    """Instructions per packet by kernel symbol, for each configuration,
    and the scheduler's own code per packet: the sch_* modules' symbols
    plus the default child's helpers (deterministic where the totals are
    not: in the shaped mode the watchdog wakeups and idle dominate)."""
    import bisect
    import re
    tables = [ksyms(g) for g in guests]
    seen = set()
    summary = []
    for r in runs:
        key = (r["mode"], r["qdisc"], r["n"], r["size"])
        if key in seen or not r["tbs"]:
            continue
        seen.add(key)
        syms = tables[r["boot"]]
        addrs = [a for a, _ in syms]
        per = {}
        for va, n in r["tbs"].items():
            if va == "full":
                continue
            if va == 0:
                name = "(user space)"
            else:
                i = bisect.bisect_right(addrs, va) - 1
                name = syms[i][1] if i >= 0 else "?"
            per[name] = per.get(name, 0) + n
        seen_total = sum(per.values()) / r["packets"]
        print("\nprofile %s %s N=%d %dB: %.0f insn/pkt, %.0f of them attributed; top symbols (insn/pkt):"
              % (key + (r["ipp"], seen_total)))
        if r["tbs"].get("full"):
            print("  (profile table full: %d blocks went uncounted)" % r["tbs"]["full"])
        for name, n in sorted(per.items(), key=lambda x: -x[1])[:40]:
            print("  %8.1f  %s" % (n / r["packets"], name))
        parts = {}
        for name, n in per.items():
            m = re.search(r"\[(sch_\w+)\]", name)
            part = m.group(1) if m else ("child" if name in CHILD_HELPERS else None)
            if part:
                parts[part] = parts.get(part, 0) + n / r["packets"]
        summary.append((key, sum(parts.values()), parts))
    if summary:
        print("\nscheduler code per packet (sch_* module symbols + the default child's helpers):")
        for key, tot, parts in summary:
            print("  %-9s %-16s N=%-3d %5dB %7.1f  (%s)" % (key + (tot, ", ".join(
                "%s %.0f" % kv for kv in sorted(parts.items())))))
        print("  (the first configuration of a boot also pays one-time costs)")


def aggregate(runs):
    groups = {}
    for r in runs:
        groups.setdefault((r["mode"], r["qdisc"], r["n"], r["size"]), []).append(r)
    rows = []
    for (mode, q, n, size), rs in groups.items():
        ipp = [r["ipp"] for r in rs]
        med = statistics.median(ipp)
        rows.append(dict(mode=mode, qdisc=q, n=n, bands=rs[0]["bands"], size=size, reps=len(rs),
                         ipp_median=round(med, 1),
                         ipp_spread_pct=round(100 * (max(ipp) - min(ipp)) / med, 2) if med else 0,
                         pps_median=round(statistics.median(r["pps"] for r in rs)),
                         ipp_runs=[round(x, 1) for x in ipp]))
        if mode.startswith("gso"):
            rows[-1]["segs_per_skb"] = round(statistics.median(
                r["packets"] / r["skbs"] if r["skbs"] else 0 for r in rs), 1)
            rows[-1]["mbit_median"] = round(statistics.median(
                r["packets"] * r["size"] * 8 / (r["ns"] / 1e3) if r["ns"] else 0 for r in rs), 1)
    order = ["mq-pfifo_fast", "mq-pfifo_fast-locked", "pfifo_fast", "tbf", "prio", "ets", "drr", "qfq", "htb", "arbtable-manual",
             "arbtable-auto", "arbtable-manual-split", "arbtable-lockless-manual", "arbtable-lockless-auto",
             "cake_mq", "mq-arbtable"]
    rows.sort(key=lambda r: (r["mode"], r["size"], r["n"],
                             order.index(r["qdisc"]) if r["qdisc"] in order else 99))
    return rows


def targets(rows):
    """The issue's targets, on the medians; each a sentence and a verdict.
    Unshaped: <= ets at N=8/64, overhead over pfifo_fast <= 75% of ets's,
    <= htb.  Shaped (a rate is the bottleneck): <= htb, the one peer that
    shapes by itself, and <= ets under a tbf at N=8/64 (issue 44)."""
    get = {(r["mode"], r["qdisc"], r["n"], r["size"]): r["ipp_median"] for r in rows}
    out = []
    for mode in sorted({r["mode"] for r in rows if r["mode"] in ("unshaped", "shaped")}, reverse=True):
        for size in sorted({r["size"] for r in rows if r["mode"] == mode}):
            for n in sorted({r["n"] for r in rows if r["mode"] == mode}):
                base = get.get((mode, "pfifo_fast", n, size))
                ets = get.get((mode, "ets", n, size))
                htb = get.get((mode, "htb", n, size))
                for arb in ("arbtable-manual", "arbtable-auto"):
                    a = get.get((mode, arb, n, size))
                    if a is None:
                        continue
                    if mode == "shaped" and ets is not None and n in (8, 64):
                        out.append(dict(mode=mode, target="%s <= ets under tbf" % arb, n=n, size=size,
                                        value=a, peer=ets, met=a <= ets))
                    if mode == "unshaped" and ets is not None and n in (8, 64):
                        out.append(dict(mode=mode, target="%s <= ets" % arb, n=n, size=size,
                                        value=a, peer=ets, met=a <= ets))
                        if base is not None and ets > base:
                            ratio = (a - base) / (ets - base)
                            out.append(dict(mode=mode, target="%s overhead over pfifo_fast <= 75%% of ets's" % arb,
                                            n=n, size=size, value=round(100 * ratio, 1), peer=75.0,
                                            met=ratio <= 0.75))
                    if htb is not None:
                        out.append(dict(mode=mode, target="%s <= htb" % arb, n=n, size=size,
                                        value=a, peer=htb, met=a <= htb))
    return out


def gso_compare(rows):
    """gso modes: what splitting GSO at enqueue costs, per MSS-sized
    segment of payload, against the qdiscs that keep GSO skbs whole."""
    out = []
    for mode in sorted({r["mode"] for r in rows if r["mode"].startswith("gso")}):
        get = {r["qdisc"]: r["ipp_median"] for r in rows if r["mode"] == mode}
        for arb in ("arbtable-manual", "arbtable-auto", "arbtable-manual-split"):
            if arb not in get:
                continue
            for peer in ("pfifo_fast", "ets", "htb", "arbtable-manual"):
                if peer == arb or peer not in get or not get[peer]:
                    continue
                d = get[arb] - get[peer]
                out.append(dict(mode=mode, qdisc=arb, peer_qdisc=peer, value=get[arb], peer=get[peer],
                                diff=round(d, 1), pct=round(100 * d / get[peer], 1)))
    return out


def lockstat(guest):
    import re
    """LOCKSTAT lines (a CONFIG_LOCK_STAT kernel): per qdisc and size, the
    lock classes summed by name (every qdisc's root lock has a key of its
    own, all named &sch->root_lock_key), per million packets.  A
    /proc/lock_stat line is the class name, a colon, then con-bounces,
    contentions, waittime min/max/total/avg, acq-bounces, acquisitions,
    holdtime min/max/total/avg (times in microseconds)."""
    acc = {}
    for line in open(guest, errors="replace"):
        if not line.startswith("LOCKSTAT mq "):
            continue
        f = line.split(None, 5)
        if len(f) < 6:
            continue
        q, size, pkts, rest = f[2], int(f[3]), int(f[4]), f[5]
        name, sep, nums = rest.rpartition(":")
        v = nums.split()
        if not sep or len(v) != 12:
            continue
        # lockdep numbers the classes of one name (#2, #3, ...): the
        # root locks of the several qdiscs (mq's children) are summed
        key = (q, size, re.sub(r"#[0-9]+$", "", name.strip()))
        a = acc.setdefault(key, dict(packets=pkts, contentions=0, wait_us=0.0, acquisitions=0, hold_us=0.0,
                                     classes=0))
        a["classes"] += 1
        a["contentions"] += int(v[1])
        a["wait_us"] += float(v[4])
        a["acquisitions"] += int(v[7])
        a["hold_us"] += float(v[10])
    out = []
    for (q, size, name), a in acc.items():
        m = 1e6 / a["packets"] if a["packets"] else 0
        out.append(dict(qdisc=q, size=size, lock=name, classes=a["classes"], packets=a["packets"],
                        contentions_per_mpkt=round(a["contentions"] * m, 1),
                        wait_us_per_mpkt=round(a["wait_us"] * m, 1),
                        acquisitions_per_pkt=round(a["acquisitions"] * m / 1e6, 3),
                        hold_us_per_mpkt=round(a["hold_us"] * m, 1)))
    return out


def mq_spread(guest):
    """SPREAD lines: packets each queue's own qdisc sent (mq roots only).
    XPS should put a quarter on each queue; without it pktgen's one flow
    hashes to a single queue, and the mode measures no spreading."""
    out = []
    for line in open(guest, errors="replace"):
        f = line.split()
        if f[:2] == ["SPREAD", "mq"] and len(f) > 4:
            sent = [int(x) for x in f[4:] if x.isdigit()]
            if sent:
                out.append(dict(qdisc=f[2], size=int(f[3].rstrip(":")), sent=sent,
                                even=min(sent) * 10 >= max(sent) * 9))
    return out


def mq_compare(rows):
    """mq mode: each qdisc against mq+pfifo_fast (the no-shaping ceiling)
    at the same packet size: instructions per packet and packets per
    second as ratios (qdisc / ceiling)."""
    out = []
    for size in sorted({r["size"] for r in rows if r["mode"] == "mq"}):
        get = {r["qdisc"]: r for r in rows if r["mode"] == "mq" and r["size"] == size}
        base = get.get("mq-pfifo_fast")
        for q, r in get.items():
            out.append(dict(size=size, qdisc=q, ipp=r["ipp_median"], pps=r["pps_median"],
                            ipp_ratio=round(r["ipp_median"] / base["ipp_median"], 3) if base else None,
                            pps_ratio=round(r["pps_median"] / base["pps_median"], 3) if base and base["pps_median"] else None))
    return out


def mq_peers(rows):
    """mq mode: each lockless arbtable row against the peers of the same
    run and size: total instructions per packet as a ratio, and the
    qdisc's own share (the row minus mq-pfifo_fast's) as a ratio."""
    out = []
    for size in sorted({r["size"] for r in rows if r["mode"] == "mq"}):
        get = {r["qdisc"]: r["ipp_median"] for r in rows if r["mode"] == "mq" and r["size"] == size}
        base = get.get("mq-pfifo_fast")
        for lk, locked in (("arbtable-lockless-manual", "arbtable-manual"),
                           ("arbtable-lockless-auto", "arbtable-auto")):
            if lk not in get:
                continue
            for peer in ("mq-pfifo_fast", "htb", "cake_mq", locked, "mq-arbtable"):
                if peer not in get:
                    continue
                own = (get[lk] - base) / (get[peer] - base) if base is not None and get[peer] != base else None
                out.append(dict(size=size, qdisc=lk, peer=peer, ratio=round(get[lk] / get[peer], 3),
                                own_ratio=round(own, 2) if own is not None else None))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--guest", required=True, action="append", help="guest log, one per VM boot")
    ap.add_argument("--marks", required=True, action="append", help="plugin log, one per VM boot")
    ap.add_argument("--left-out", default="", help="run.sh's list of configurations a crash left out")
    ap.add_argument("--kernel", default="")
    ap.add_argument("--cpus", type=int, default=1, help="the guest's vCPUs")
    ap.add_argument("--out", required=True)
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    if len(a.guest) != len(a.marks):
        sys.exit("report: one --marks per --guest")
    runs = []
    for b, (g, m) in enumerate(zip(a.guest, a.marks)):
        runs += parse(g, m, b)
    left = []
    if a.left_out:
        try:
            left = [l.split(None, 1)[1].strip() for l in open(a.left_out) if l.startswith("LEFT-OUT ")]
        except OSError:
            pass
    rows = aggregate(runs)
    tg = targets(rows)
    gc = gso_compare(rows)
    mc = mq_compare(rows)
    mp = mq_peers(rows)
    ls = [x for g in a.guest for x in lockstat(g)]
    sp = [x for g in a.guest for x in mq_spread(g)]
    if a.profile:
        profile(runs, a.guest)
    for r in runs:
        r.pop("tbs", None)
    if any(r["mode"] in ("unshaped", "shaped") for r in rows):
        print("\nguest instructions per packet (median of reps; spread = (max-min)/median), kernel %s, TCG, %d vCPU(s)"
              % (a.kernel, a.cpus))
        print("%-9s %-16s %4s %5s %6s %10s %8s %10s" % ("mode", "qdisc", "N", "bands", "size", "insn/pkt",
                                                         "spread%", "pkt/s"))
    else:
        print("\nkernel %s, TCG, %d vCPU(s)" % (a.kernel, a.cpus))
    last = None
    for r in rows:
        if r["mode"].startswith("gso") or r["mode"] == "mq":
            continue
        if last and (last["mode"], last["size"], last["n"]) != (r["mode"], r["size"], r["n"]):
            print()
        print("%-9s %-16s %4d %5d %6d %10.1f %8.2f %10d" % (r["mode"], r["qdisc"], r["n"], r["bands"], r["size"],
                                                            r["ipp_median"], r["ipp_spread_pct"], r["pps_median"]))
        last = r
    if len(a.guest) > 1:
        print("(%d VM boots: the guest died and the run resumed; see bench-vm's output above)" % len(a.guest))
    for l in left:
        print("not measured (the guest died in it twice): %s" % l)
    for mode in sorted({r["mode"] for r in rows if r["mode"].startswith("gso")}):
        gso = [r for r in rows if r["mode"] == mode]
        print("\n%s: iperf3 TCP over veth (TSO on), one class; guest instructions per"
              " MSS-sized segment of payload (bytes / %d; both TCP ends counted), median of reps;"
              " spread = (max-min)/median" % (mode, gso[0]["size"] if gso else 1448))
        print("%-22s %10s %8s %8s %9s  %s" % ("qdisc", "insn/seg", "spread%", "seg/skb", "Mbit/s", "runs"))
        for r in gso:
            print("%-22s %10.1f %8.2f %8.1f %9.1f  %s" % (r["qdisc"], r["ipp_median"], r["ipp_spread_pct"],
                                                         r.get("segs_per_skb", 0), r.get("mbit_median", 0),
                                                         " ".join("%.0f" % x for x in r["ipp_runs"])))
        print("(seg/skb: payload segments per skb the sending veth transmitted -- the qdisc's output;"
              " Mbit/s: indicative, TCG)")
        for c in gc:
            if c["mode"] == mode:
                print("  %-22s vs %-22s %+8.1f insn/seg (%+.1f%%)" % (c["qdisc"], c["peer_qdisc"], c["diff"],
                                                                    c["pct"]))
    if mc:
        print("\nmq: 4-queue dummy, %d vCPUs (single-threaded TCG: one host thread runs them in turn),"
              " one pktgen thread per CPU, XPS CPU i -> queue i, tenant i on queue i;"
              " all guest instructions (4 vCPUs) / all packets; ratios against mq-pfifo_fast" % a.cpus)
        print("%-26s %6s %10s %8s %10s %9s %9s" % ("qdisc", "size", "insn/pkt", "spread%", "pkt/s",
                                                   "insn x", "pkt/s x"))
        spread = {(r["qdisc"], r["size"]): r["ipp_spread_pct"] for r in rows if r["mode"] == "mq"}
        last = None
        for c in mc:
            if last is not None and last != c["size"]:
                print()
            print("%-26s %6d %10.1f %8.2f %10d %9s %9s" % (c["qdisc"], c["size"], c["ipp"],
                                                          spread[(c["qdisc"], c["size"])], c["pps"],
                                                          "%.3f" % c["ipp_ratio"] if c["ipp_ratio"] else "-",
                                                          "%.3f" % c["pps_ratio"] if c["pps_ratio"] else "-"))
            last = c["size"]
        print("(pkt/s: wall time under emulation, all vCPUs on one host thread, which shares the host with"
              " whatever else runs: it follows the host's load; insn/pkt does not)")
        for x in sp:
            if not x["even"]:
                print("UNEVEN: %s %dB: the queues' qdiscs sent %s packets (XPS not in effect?)"
                      % (x["qdisc"], x["size"], " ".join(map(str, x["sent"]))))
        if sp and all(x["even"] for x in sp):
            print("queues: every mq root's four qdiscs sent within 10%% of each other (%d configurations)" % len(sp))
        if mp:
            print("\nmq: the lockless rows against their peers (same run and size): insn/pkt ratio, and own-share"
                  " ratio (each minus mq-pfifo_fast)")
            for x in mp:
                print("  %-26s %5dB vs %-22s %7.3f  own %s" % (x["qdisc"], x["size"], x["peer"], x["ratio"],
                                                               "-" if x["own_ratio"] is None else "%.2f" % x["own_ratio"]))
    if ls:
        print("\nmq: qdisc lock classes from /proc/lock_stat (CONFIG_LOCK_STAT), over each configuration's bursts;"
              " per million packets")
        print("%-26s %6s %-40s %3s %12s %12s %8s %12s" % ("qdisc", "size", "lock class (lock_stat's name)", "n",
                                                           "contentions", "wait us", "acq/pkt", "hold us"))
        for x in ls:
            print("%-26s %6d %-40s %3d %12.1f %12.1f %8.3f %12.1f" % (
                x["qdisc"], x["size"], x["lock"][:40], x["classes"], x["contentions_per_mpkt"],
                x["wait_us_per_mpkt"], x["acquisitions_per_pkt"], x["hold_us_per_mpkt"]))
        print("(n: lock classes summed, one per qdisc; per million packets except acq/pkt)")
    if tg:
        print("\ntargets (medians):")
    for t in tg:
        print("  %-9s %-52s N=%-3d %4dB: %8s vs %8s  %s" % (t["mode"], t["target"], t["n"], t["size"], t["value"],
                                                           t["peer"], "met" if t["met"] else "MISSED"))
    with open(a.out + "/vm-results.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["mode", "qdisc", "n", "bands", "size", "reps", "insn_per_pkt_median",
                    "insn_per_pkt_spread_pct", "pkt_per_s_median"])
        for r in rows:
            w.writerow([r["mode"], r["qdisc"], r["n"], r["bands"], r["size"], r["reps"], r["ipp_median"],
                        r["ipp_spread_pct"], r["pps_median"]])
    with open(a.out + "/vm-results.json", "w") as f:
        json.dump(dict(kernel=a.kernel, cpus=a.cpus, host=platform.node(), metric="guest instructions per packet (TCG plugin)",
                       boots=len(a.guest), left_out=left, rows=rows, targets=tg, gso=gc, mq=mc, mq_peers=mp, lockstat=ls, spread=sp, runs=runs), f, indent=1)
    print("\nwritten: %s/vm-results.csv, %s/vm-results.json" % (a.out, a.out))


if __name__ == "__main__":
    main()
