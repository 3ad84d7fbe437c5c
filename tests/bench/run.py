#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Drive build/bench/arbbench: time the core natively, count instructions
under callgrind, print the tables, write results.csv and results.json.

A benchmark, not a test: nothing here fails on a number. It fails only when
the program itself fails (an allocator invariant broken, a class never
served), which arbbench checks outside the measured regions.
"""
import argparse
import csv
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time

# The evaluation study (table-management-evaluation.txt, 5.3.4, Cuadros 3
# and 6): Model 1, mean time per operation and swaps per operation.
PAPER = {
    "source": "table-management-evaluation.txt 5.3.4, Cuadros 3 and 6 "
              "(Model 1, 2004 machine)",
    "us_per_op": 29.04465481,
    "us_per_insert": 29.51606979,
    "us_per_release": 32.6688208,
    "swaps_per_op": 0.0715,
}
TARGET_NS = 1000

T0 = time.time()


def progress(msg):
    print("[bench %5.1fs] %s" % (time.time() - T0, msg), flush=True)


def run_json(cmd):
    """Run cmd, pass its stderr (progress) through, parse JSON lines."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=None, text=True)
    if p.returncode:
        sys.exit("bench: %s failed (exit %d)" % (" ".join(cmd), p.returncode))
    return [json.loads(x) for x in p.stdout.splitlines() if x.strip()]


def callgrind_arcs(path):
    """Sum the call arcs leaving each bw_* wrapper: {wrapper: [calls, Ir]}.

    Only the callee (arb_alloc_*) is collected (--toggle-collect=bw_* turns
    collection on inside the wrapper; the arc cost is the callee's inclusive
    cost), so the wrapper's own few instructions are not in the sum.
    """
    names = {}
    out = {}
    fn = None
    pending = None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line)
            if m:
                kind, fid, name = m.groups()
                if name:
                    names[fid] = name
                if kind == "fn":
                    fn = names.get(fid, fid)
                continue
            m = re.match(r"^calls=(\d+)", line)
            if m:
                pending = int(m.group(1))
                continue
            if pending is not None:
                if fn and fn.startswith("bw_"):
                    key = fn.split(".")[0]
                    ent = out.setdefault(key, [0, 0])
                    ent[0] += pending
                    ent[1] += int(line.split()[-1])
                pending = None
    return out


def callgrind_dumps(prefix):
    """{client request name: total Ir} for every dump file prefix.N."""
    res = {}
    d = os.path.dirname(prefix) or "."
    base = os.path.basename(prefix)
    for fname in os.listdir(d):
        if not re.match(re.escape(base) + r"\.\d+$", fname):
            continue
        name, total = None, None
        with open(os.path.join(d, fname)) as f:
            for line in f:
                tag = "desc: Trigger: Client Request: "
                if line.startswith(tag):
                    name = line[len(tag):].strip()
                elif line.startswith("totals:") or line.startswith("summary:"):
                    total = int(line.split()[1])
                    if line.startswith("totals:"):
                        break
        if name is not None and total is not None:
            res[name] = total
    return res


def machine_info():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass

    def ver(cmd):
        try:
            return subprocess.run(cmd, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True
                                  ).stdout.splitlines()[0].strip()
        except (OSError, IndexError):
            return None
    return {
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "kernel": platform.release(),
        "cc": ver([os.environ.get("CC", "gcc"), "--version"]),
        "valgrind": ver(["valgrind", "--version"]),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


def fmt(x, nd=0, width=0):
    if x is None:
        s = "n/a"
    elif nd:
        s = "%.*f" % (nd, x)
    else:
        s = "%d" % round(x)
    return s.rjust(width) if width else s


def bucket_label(r):
    return str(r["lo"]) if r["lo"] == r["hi"] else "%d-%d" % (r["lo"], r["hi"])


def arb_key(r):
    """An arbiter configuration; walk "ref" is the old table walk."""
    return (r["len"], r["regime"], r["slots"], r["classes"],
            r.get("walk", "new"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--alloc-seeds", type=int, default=3)
    ap.add_argument("--alloc-ops", type=int, default=20000,
                    help="ops per load phase per seed (8 phases)")
    ap.add_argument("--alloc-instr-ops", type=int, default=14000,
                    help="ops per load phase in the callgrind run")
    ap.add_argument("--arb-decisions", type=int, default=200000)
    ap.add_argument("--arb-reps", type=int, default=7)
    ap.add_argument("--arb-instr-decisions", type=int, default=10000)
    ap.add_argument("--no-valgrind", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    cgdir = os.path.join(a.out, "callgrind")

    caps = run_json([a.bin, "caps"])[0]
    vg = shutil.which("valgrind") and not a.no_valgrind
    if not vg:
        progress("valgrind not found (or --no-valgrind): instruction columns skipped")
    if vg and os.path.isdir(cgdir):
        shutil.rmtree(cgdir)
    if vg:
        os.makedirs(cgdir)

    # 1. Allocator, native timing.
    progress("1/4 allocator: %d seeds x 8 load phases x %d random ops, "
             "clock_gettime around each op" % (a.alloc_seeds, a.alloc_ops))
    at = run_json([a.bin, "alloc-time", str(a.alloc_seeds), str(a.alloc_ops)])
    ameta = [r for r in at if r["bench"] == "alloc_meta"][0]
    arows = [r for r in at if r["bench"] == "alloc"]
    timer = ameta["timer_ns"]

    # 2. Allocator, instructions (deterministic: seed 1).
    instr = {}
    instr_tot = {}
    imeta = None
    if vg:
        progress("2/4 allocator under callgrind: seed 1, 8 x %d ops "
                 "(deterministic)" % a.alloc_instr_ops)
        out = os.path.join(cgdir, "alloc.callgrind")
        cmd = ["valgrind", "--tool=callgrind", "--toggle-collect=bw_*",
               "--callgrind-out-file=" + out, "--quiet",
               a.bin, "alloc-instr", "1", str(a.alloc_instr_ops)]
        ai = run_json(cmd)
        imeta = [r for r in ai if r["bench"] == "alloc_meta"][0]
        arcs = callgrind_arcs(out)
        counts = {}
        for r in ai:
            if r["bench"] == "alloc":
                counts[r["wrapper"]] = counts.get(r["wrapper"], 0) + r["count"]
        for w, n in counts.items():
            c, ir = arcs.get(w, [0, 0])
            if c != n:
                sys.exit("bench: callgrind saw %d calls of %s, program made %d"
                         % (c, w, n))
            instr[w] = ir / n if n else None
            op = w.split("_")[1]
            tot = instr_tot.setdefault(op, [0, 0])
            tot[0] += n
            tot[1] += ir
    else:
        progress("2/4 skipped (no valgrind)")

    # 3. Arbiter, native timing.
    progress("3/4 arbiter: 147 configs x %d reps x %d decisions (GSO: /32, "
             "1 MiB: /128)" % (a.arb_reps, a.arb_decisions))
    bt = run_json([a.bin, "arb-time", str(a.arb_decisions), str(a.arb_reps)])

    # 4. Arbiter, instructions.
    bir = {}
    if vg and caps.get("callgrind_h"):
        progress("4/4 arbiter under callgrind: 147 configs x %d decisions "
                 "(GSO: /32, 1 MiB: /128)"
                 % a.arb_instr_decisions)
        prefix = os.path.join(cgdir, "arb.callgrind")
        cmd = ["valgrind", "--tool=callgrind", "--toggle-collect=bwa_select",
               "--toggle-collect=bwa_charge", "--toggle-collect=bwr_select",
               "--callgrind-out-file=" + prefix,
               "--quiet", a.bin, "arb-instr", str(a.arb_instr_decisions)]
        bi = run_json(cmd)
        dumps = callgrind_dumps(prefix)
        for r in bi:
            if r["dump"] not in dumps:
                sys.exit("bench: no callgrind dump for " + r["dump"])
            bir[arb_key(r)] = dumps[r["dump"]] / r["decisions"]
    else:
        progress("4/4 skipped (no valgrind or no valgrind/callgrind.h)")

    # ------------------------------------------------------------------
    # Allocator results
    def net(x):
        return max(0, x - timer)

    by = {}
    for r in arows:
        by.setdefault(r["op"], []).append(r)
    for r in arows:
        r["median_ns"] = net(r["median_ns_raw"])
        r["p90_ns"] = net(r["p90_ns_raw"])
        r["mean_ns"] = net(r["mean_ns_raw"])
        r["instr_per_op"] = instr.get(r["wrapper"]) if r["op"] in (
            "insert", "release", "change") else None
    # The fail wrappers are shared by all buckets: one row each.
    fails = {}
    for op in ("insert_fail", "change_fail"):
        rs = by.get(op, [])
        n = sum(r["count"] for r in rs)
        if n:
            fails[op] = {
                "count": n,
                "mean_ns": sum(r["mean_ns"] * r["count"] for r in rs) / n,
                "instr_per_op": instr.get(rs[0]["wrapper"]),
            }
    all_ops = sum(r["count"] for r in arows)
    mean_ns_all = sum(r["mean_ns"] * r["count"] for r in arows) / all_ops
    ok = [r for r in arows if r["op"] in ("insert", "release")]
    mean_ns_insrel = sum(r["mean_ns"] * r["count"] for r in ok) / \
        sum(r["count"] for r in ok)

    def idx(op):
        return {bucket_label(r): r for r in by.get(op, [])}
    ins, rel, chg = idx("insert"), idx("release"), idx("change")
    labels = [bucket_label(r) for r in by["insert"]]

    print()
    print("Allocator (arbtable_core.c), maxweight 255, random distances and "
          "weights that fit; %d ops timed (%d seeds), %s ops under callgrind"
          % (ameta["ops"], a.alloc_seeds, imeta["ops"] if imeta else "no"))
    print("ns = median wall time per op minus the clock_gettime pair overhead "
          "(%d ns); instr = callgrind Ir per op (deterministic run)" % timer)
    hdr = ("%-7s | %7s %6s %6s %6s | %7s %6s %6s %6s %7s | %6s %6s | %5s"
           % ("classes", "inserts", "ns", "p90", "instr", "release", "ns",
              "p90", "instr", "swaps", "chg ns", "instr", "slots"))
    print(hdr)
    print("-" * len(hdr))
    for lb in labels:
        i, r, c = ins.get(lb), rel.get(lb), chg.get(lb)
        print("%-7s | %7s %6s %6s %6s | %7s %6s %6s %6s %7s | %6s %6s | %5s" % (
            lb, fmt(i and i["count"]), fmt(i and i["median_ns"]),
            fmt(i and i["p90_ns"]), fmt(i and i["instr_per_op"]),
            fmt(r and r["count"]), fmt(r and r["median_ns"]),
            fmt(r and r["p90_ns"]), fmt(r and r["instr_per_op"]),
            fmt(r and r["mean_swaps"], 3),
            fmt(c and c["median_ns"]), fmt(c and c["instr_per_op"]),
            fmt(i and i["mean_slots_used"], 1)))
    for op, f in fails.items():
        print("%s: %d ops, mean %s ns, %s instr/op" % (
            op.replace("_", " ") + "ed", f["count"], fmt(f["mean_ns"]),
            fmt(f["instr_per_op"])))

    def flat(rows, key):
        v = [x[key] for x in rows if x.get(key) is not None]
        return (max(v) / min(v)) if v and min(v) > 0 else None
    summ = {
        "ops_timed": ameta["ops"],
        "ops_callgrind": imeta["ops"] if imeta else None,
        "timer_overhead_ns": timer,
        "mean_ns_per_op_all": mean_ns_all,
        "mean_ns_per_insert_or_release": mean_ns_insrel,
        "swaps_per_release": ameta["swaps_per_release"],
        "swaps_per_op": ameta["swaps_per_op"],
        "insert_median_ns_max_over_min": flat(by["insert"], "median_ns"),
        "release_median_ns_max_over_min": flat(by["release"], "median_ns"),
        "insert_instr_max_over_min": flat(by["insert"], "instr_per_op"),
        "release_instr_max_over_min": flat(by["release"], "instr_per_op"),
        "insert_median_ns_max": max(r["median_ns"] for r in by["insert"]),
        "release_median_ns_max": max(r["median_ns"] for r in by["release"]),
        "failed_ops": fails,
        "instr_per_op_overall": {
            {"ins": "insert", "rel": "release", "chg": "change",
             "insfail": "insert_fail", "chgfail": "change_fail"}[k]:
            v[1] / v[0] for k, v in instr_tot.items() if v[0]},
    }
    print("swaps per release %.3f, per op %.3f (all ops)   |   paper Model 1: "
          "%.4f swaps per op" % (ameta["swaps_per_release"],
                                 ameta["swaps_per_op"], PAPER["swaps_per_op"]))
    print("mean per op (all ops) %s ns; insert+release %s ns   |   paper "
          "Model 1 (2004): %.2f us per op (insert %.1f us, release %.1f us)"
          % (fmt(mean_ns_all), fmt(mean_ns_insrel), PAPER["us_per_op"],
             PAPER["us_per_insert"], PAPER["us_per_release"]))
    if instr_tot:
        print("instructions per op over the whole callgrind run (total Ir / "
              "ops): " + ", ".join("%s %s" % (k, fmt(v)) for k, v in
                                   summ["instr_per_op_overall"].items()))
    print("target <= %d ns: worst median insert %s ns, release %s ns; "
          "flatness max/min over class counts: insert ns %s instr %s, "
          "release ns %s instr %s" % (
              TARGET_NS, fmt(summ["insert_median_ns_max"]),
              fmt(summ["release_median_ns_max"]),
              fmt(summ["insert_median_ns_max_over_min"], 2),
              fmt(summ["insert_instr_max_over_min"], 2),
              fmt(summ["release_median_ns_max_over_min"], 2),
              fmt(summ["release_instr_max_over_min"], 2)))

    # ------------------------------------------------------------------
    # Arbiter results
    arb = []
    for r in bt:
        r["instr_per_decision"] = bir.get(arb_key(r))
        arb.append(r)
    ref = [r for r in arb if r.get("walk") == "ref"]
    arb_new = [r for r in arb if r.get("walk", "new") == "new"]
    print()
    print("Arbiter (arbtable_core.c): one dequeue decision = arb_select + "
          "arb_charge; HIGH table, deficit mode, all classes backlogged")
    print("instr = callgrind Ir per decision (%d decisions per config); "
          "ns = median of %d reps of %d decisions"
          % (a.arb_instr_decisions, a.arb_reps, a.arb_decisions))
    csizes = [1, 2, 4, 8, 16, 32, 64]
    asumm = []
    series = []
    for r in arb_new:
        if (r["len"], r["regime"]) not in series:
            series.append((r["len"], r["regime"]))
    for ln, reg in series:
        rs = [r for r in arb_new if r["len"] == ln and r["regime"] == reg]
        if not rs:
            continue
        w = rs[0]["weight"]
        print()
        print("%s%d B packets%s, weight %d (quantum %d B%s): instr/decision,"
              " rows = slots in use, columns = backlogged classes" % (
                  "1..%d B (uniform) instead of " % ln if reg == "rand"
                  else "", ln, " (GSO)" if 9000 < ln < 1 << 20 else "", w,
                  w * 64,
                  ", debt < quantum" if ln < w * 64 else
                  ", debt > quantum" if ln > w * 64 else
                  ", one packet per visit"))
        print("%6s | %s" % ("slots", " ".join("%7d" % c for c in csizes)))
        for s in sorted(set(r["slots"] for r in rs)):
            cells = []
            for c in csizes:
                x = [r for r in rs if r["slots"] == s and r["classes"] == c]
                cells.append(fmt(x[0]["instr_per_decision"], 1, 7)
                             if x else " " * 7)
            print("%6d | %s" % (s, " ".join(cells)))
        at64 = sorted((r for r in rs if r["slots"] == 64),
                      key=lambda r: r["classes"])
        print("%6s | %s" % ("ns@64", " ".join(
            fmt(r["ns_per_decision"], 1, 7) for r in at64)))
        ent = {
            "len": ln, "regime": reg, "weight": w,
            "instr_max_over_min_classes_at_64_slots":
                flat(at64, "instr_per_decision"),
            "instr_max_over_min_all": flat(rs, "instr_per_decision"),
            "ns_max_over_min_classes_at_64_slots":
                flat(at64, "ns_per_decision"),
            "instr_min": min((r["instr_per_decision"] for r in rs
                              if r["instr_per_decision"] is not None),
                             default=None),
            "instr_max": max((r["instr_per_decision"] for r in rs
                              if r["instr_per_decision"] is not None),
                             default=None),
        }
        asumm.append(ent)
        print("max/min across class counts at 64 slots: instr %s, ns %s; "
              "across all (slots, classes): instr %s" % (
                  fmt(ent["instr_max_over_min_classes_at_64_slots"], 3),
                  fmt(ent["ns_max_over_min_classes_at_64_slots"], 3),
                  fmt(ent["instr_max_over_min_all"], 3)))

    # The adversarial tables against the walk before arb_table_skip_rounds()
    walk = []
    if ref:
        print()
        print("Table walk on 64 weight-1 slots owing up to 1 MiB each: today's"
              " walk (bounded) against the old one (one quantum per pass,"
              " tests/unit/arb_ref_walk.h)")
        print("%-6s %7s | %9s %11s %8s | %9s %11s %8s | %s" % (
            "sizes", "classes", "instr", "old instr", "x", "ns", "old ns",
            "x", "old passes/decision"))
        for o in ref:
            n = [r for r in arb_new if arb_key(r)[:4] == arb_key(o)[:4]]
            if not n:
                continue
            n = n[0]

            def ratio(key):
                x, y = n.get(key), o.get(key)
                return y / x if x and y else None
            ent = {
                "len": o["len"], "regime": o["regime"],
                "classes": o["classes"],
                "instr": n["instr_per_decision"],
                "old_instr": o["instr_per_decision"],
                "instr_ratio": ratio("instr_per_decision"),
                "ns": n["ns_per_decision"], "old_ns": o["ns_per_decision"],
                "ns_ratio": ratio("ns_per_decision"),
                "old_passes_per_decision": o.get("passes_per_decision"),
            }
            walk.append(ent)
            print("%-6s %7d | %9s %11s %8s | %9s %11s %8s | %s" % (
                "random" if o["regime"] == "rand" else "1 MiB",
                o["classes"], fmt(ent["instr"], 1), fmt(ent["old_instr"]),
                fmt(ent["instr_ratio"], 1), fmt(ent["ns"], 1),
                fmt(ent["old_ns"]), fmt(ent["ns_ratio"], 1),
                fmt(ent["old_passes_per_decision"], 1)))

    # ------------------------------------------------------------------
    # Files
    cols = ["bench", "op", "classes_lo", "classes_hi", "count",
            "median_ns", "p90_ns", "mean_ns", "median_ns_raw",
            "instr_per_op", "mean_swaps", "mean_slots_used",
            "len", "regime", "weight", "slots", "classes", "walk",
            "instr_per_decision", "ns_per_decision", "ns_min", "ns_max",
            "passes_per_decision"]
    def rnd(d):
        return {k: round(v, 2) if isinstance(v, float) else v
                for k, v in d.items()}
    csvp = os.path.join(a.out, "results.csv")
    with open(csvp, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        wr.writeheader()
        for r in arows:
            d = dict(r)
            d["classes_lo"], d["classes_hi"] = r["lo"], r["hi"]
            if r["op"] in fails:
                d["instr_per_op"] = fails[r["op"]]["instr_per_op"]
            wr.writerow(rnd(d))
        for r in arb:
            wr.writerow(rnd(r))
    res = {
        "machine": machine_info(),
        "command": "make bench",
        "reference": PAPER,
        "target_ns_per_op": TARGET_NS,
        "alloc": arows,
        "alloc_summary": summ,
        "arb": arb,
        "arb_summary": asumm,
        "arb_walk": walk,
        "params": vars(a),
    }
    jsp = os.path.join(a.out, "results.json")
    with open(jsp, "w") as f:
        json.dump(res, f, indent=1)
    print()
    progress("done: %s, %s" % (csvp, jsp))


if __name__ == "__main__":
    main()
