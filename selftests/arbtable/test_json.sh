#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# JSON that scripts can rely on (issue 16, items 5 and 6), on the real
# module:
#  - tc -j (the plugin, through Debian's tc 6.1 and bookworm-backports'
#    tc 6.15 with the plugin built for it) and arbtablectl --json describe
#    the same qdisc and classes with the same keys and the same values
#    (class ids as tc class id strings, rates bytes/s, times ns);
#  - no key names a configured value in one place and a measured or
#    allocated one in the other;
#  - the xstats the kernel added later (GSO, oversize drops, capacity,
#    link, mtu changes, broken classes, stalls; mtu_follows_device in the
#    options) are among the keys compared, with counts made non-zero
#    first: a UDP GSO send on $DEV, a frame above $DEV2's pinned mtu, and
#    a third device whose mtu grows under a class admitted with a latency
#    (its guarantee breaks);
#  - tc 6.15's tc -j class show round-trips every class option: every
#    class is deleted, then added again through tc 6.15 with the values its
#    JSON gave (the strict class first, as it must be), and each shows the
#    same options and the same reservation as before.
# tc 6.1 prints classes as text even with -j, so classes need tc 6.15
# (unpacked by scripts/setup.sh into the cache, never installed).
. "$(dirname "$0")/lib.sh"
tap_begin "JSON: tc -j and arbtablectl --json, tc 6.15 round trip"
CTL=$ARBT_ROOT/build/tools/arbtablectl
BPO=${ARBT_IPROUTE2_BPO:-/var/lib/arbtable/iproute2-bpo}
TC15=$BPO/root/sbin/tc
mm=$(sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p' "$BPO/version" 2>/dev/null)
PL15=$ARBT_ROOT/build/tc-$mm
DEV2=d1
DEV3=d2
tmp=$(mktemp -d)
trap 'dev_del $DEV; dev_del $DEV2; dev_del $DEV3; rm -rf $tmp' EXIT

arb_load_module || diag "loading sch_arbtable failed"
if ! have_arbtable || [ ! -x "$CTL" ]; then
	tap_fail "json: module, plugin and $CTL"
	tap_end
	exit
fi
if [ -z "$mm" ] || [ ! -x "$TC15" ] || [ ! -f "$PL15/q_arbtable.so" ]; then
	tap_fail "json: backports tc ($TC15, version '${mm}') and its plugin $PL15 (scripts/setup.sh, make)"
	tap_end
	exit
fi
diag "tc 6.1: $(tc -V | head -n1); backports: $("$TC15" -V | head -n1)"
tc15() { TC_LIB_DIR=$PL15 "$TC15" "$@"; }

ok=0
dummy_up $DEV && dummy_up $DEV2 || ok=1
# auto: every class option (the strict class first: its ceil cannot be
# added once guaranteed classes exist)
tc qdisc add dev $DEV root handle 1: arbtable rate 10mbit burst 30k || ok=1
tc class add dev $DEV parent 1: classid 1:40 arbtable strict ceil 1mbit cburst 20k || ok=1
tc class add dev $DEV parent 1: classid 1:10 arbtable rate 1mbit latency 50ms ceil 5mbit cburst 30k || ok=1
tc class add dev $DEV parent 1: classid 1:11 arbtable rate 500kbit distance 16 || ok=1
tc class add dev $DEV parent 1: classid 1:30 arbtable share 7 || ok=1
tc class add dev $DEV parent 1: classid 1:31 arbtable share 3 distance 8 || ok=1
# manual: tables, default, priomap, the other qdisc options
tc qdisc add dev $DEV2 root handle 2: arbtable manual rate 20mbit highlimit 8 accounting iba mtu 1500 || ok=1
for m in 10 11 30; do tc class add dev $DEV2 parent 2: classid 2:$m arbtable || ok=1; done
tc qdisc change dev $DEV2 root handle 2: arbtable high 10:20,-,11:30@5 low 30:2 default 30 \
	priomap 10 10 0 0 11 0 0 0 0 0 0 0 0 0 0 30 || ok=1
tap_check "json: configuration through tc" test $ok = 0

# Counters for the comparison. $DEV: one UDP GSO send of 4 segments to
# class 1:10 (skb->priority names it), split at enqueue (the dummy
# device takes GSO); $DEV2: a 1514-byte frame above its pinned mtu 1500,
# dropped; $DEV3: auto at 40mbit, highlimit 255, a class admitted with
# the latency its distance-8 placement gets at mtu 1514 (read back
# first), then the device's mtu raised to 9000: the mtu follows and the
# class's latency breaks (test_mtu_follow.sh's recipe).
ok=0
dummy_up $DEV3 || ok=1
ip addr add 10.81.0.1/24 dev $DEV && ip addr add 10.81.1.1/24 dev $DEV2 || ok=1
python3 - <<'PY' || ok=1
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_PRIORITY, 0x10010)
rc = 0
for size, seg, dst in ((4000, 1000, "10.81.0.2"), (1472, 0, "10.81.1.2")):
    try:
        s.setsockopt(socket.IPPROTO_UDP, 103, seg)  # UDP_SEGMENT
        s.sendto(b"x" * size, (dst, 9))
    except OSError as e:
        print("send of %d bytes to %s: %s" % (size, dst, e), file=sys.stderr)
        rc = 1
sys.exit(rc)
PY
tc qdisc add dev $DEV3 root handle 3: arbtable rate 40mbit highlimit 255 || ok=1
tc class add dev $DEV3 parent 3: classid 3:10 arbtable rate 10mbit distance 8 || ok=1
lat=$("$CTL" --json show $DEV3 | python3 -c 'import json, sys
print(json.load(sys.stdin)["classes"][0]["stats"]["guaranteed_bound"])')
tc class del dev $DEV3 classid 3:10 || ok=1
tc class add dev $DEV3 parent 3: classid 3:10 arbtable rate 10mbit latency "${lat:-0}ns" || ok=1
ip link set $DEV3 mtu 9000 || ok=1
tap_check "json: counters: UDP GSO on $DEV, an oversize frame on $DEV2, $DEV3's mtu to 9000 under class 3:10 latency ${lat:-?} ns" \
	test $ok = 0

for d in $DEV $DEV2 $DEV3; do
	tc -s -d -j qdisc show dev $d >"$tmp/q61.$d" 2>&1
	tc15 -s -d -j qdisc show dev $d >"$tmp/q.$d" 2>&1
	tc15 -s -d -j class show dev $d >"$tmp/c.$d" 2>&1
	"$CTL" --json show $d >"$tmp/ctl.$d" 2>&1
done
# the same counters in arbtablectl's text
s=$("$CTL" show $DEV3 2>&1)
if grep -q ", mtu 9014 (follows the device), " <<<"$s" &&
	grep -qx "capacity 40Mbit, link unknown, link_changes 0, mtu_changes 1, broken 1" <<<"$s" &&
	grep -q "^3:10 BROKEN: " <<<"$s"; then
	tap_ok "json: arbtablectl show $DEV3 (text): mtu 9014 followed, mtu_changes 1, broken 1, 3:10 BROKEN"
else
	diag "$s"
	tap_fail "json: arbtablectl show $DEV3 (text): mtu 9014 followed, mtu_changes 1, broken 1, 3:10 BROKEN"
fi

# One python3 for every comparison and the round trip (each start costs
# seconds under TCG). Lines: OK/FAIL DESC, DIAG TEXT.
cat >"$tmp/cmp.py" <<'PY'
import json, os, subprocess, sys

tmp, tc15, pl15 = sys.argv[1], sys.argv[2], sys.argv[3]
devs = sys.argv[4:]
env = dict(os.environ, TC_LIB_DIR=pl15)


def check(desc, cond, diag=None):
    print("%s %s" % ("OK" if cond else "FAIL", desc))
    if not cond and diag is not None:
        print("DIAG %s" % str(diag)[:1500])


def load(path):
    try:
        return json.load(open(path))
    except ValueError as e:
        print("DIAG %s: %s: %s" % (path, e, open(path).read()[:300]))
        return None


def arb(objs):
    return [o for o in objs or [] if o.get("kind", o.get("class")) == "arbtable"]


def full(major, ref):
    # a class inside the qdisc's options: "1:10" as tc prints class ids
    # (a minor-only ":10" is completed with the qdisc's major)
    return major.rstrip(":") + ref if ref.startswith(":") else ref


def norm_opts(o, major):
    o = dict(o)
    o["default"] = full(major, o["default"])
    if "priomap" in o:
        o["priomap"] = [full(major, x) for x in o["priomap"]]
    for t in ("high", "low"):
        o[t] = [dict(e, **{"class": full(major, e["class"])}) for e in o[t]]
    return o


# keys of tc's own (the qdisc's refcount)
TC_ONLY = {"refcnt"}
# tc leaves "dev" out when asked about one device
CTL_ONLY = {"high_table", "low_table", "classes", "dev"}
CLASS_TC_ONLY = {"class", "dev", "leaf"}
CLASS_STATS_TC_ONLY = set()
CLASS_CTL_ONLY = {"table"}
# the xstats the kernel appended after libarbtable's first release: each
# must be among the keys compared, on every device
NEW_QDISC = {"gso_split", "gso_segs", "oversize_drops", "stalls", "capacity",
             "link_rate", "link_changes", "mtu_changes", "broken_classes"}
NEW_CLASS = {"stalls", "broken"}
# and what the shell made of them before the dumps (tc's values, which
# arbtablectl's must equal): device -> (options, qdisc, class stats)
EXPECT = {
    devs[0]: ({"mtu_follows_device": True},
              {"gso_split": 1, "gso_segs": 4, "capacity": 1250000,
               "link_rate": 0, "mtu_changes": 0, "broken_classes": 0},
              ("1:10", {"broken": False, "stalls": 0})),
    devs[1]: ({"mtu_follows_device": False, "mtu": 1500},
              {"oversize_drops": 1, "gso_split": 0, "capacity": 2500000},
              ("2:10", {"broken": False})),
    devs[2]: ({"mtu_follows_device": True, "mtu": 9014},
              {"mtu_changes": 1, "broken_classes": 1, "capacity": 5000000},
              ("3:10", {"broken": True, "stalls": 0})),
}

for dev in devs:
    q61 = arb(load("%s/q61.%s" % (tmp, dev)))
    q = arb(load("%s/q.%s" % (tmp, dev)))
    cls = arb(load("%s/c.%s" % (tmp, dev)))
    ctl = load("%s/ctl.%s" % (tmp, dev))
    if not (q61 and q and ctl and isinstance(cls, list)):
        check("%s: tc 6.1, tc 6.15 and arbtablectl give JSON" % dev, False)
        continue
    q61, q = q61[0], q[0]
    major = q["handle"]
    check("%s: tc 6.1 and tc 6.15 print the same qdisc options" % dev,
          q61["options"] == q["options"], (q61["options"], q["options"]))
    check("%s: qdisc options: the same keys and values in tc -j and arbtablectl (%d keys)"
          % (dev, len(q["options"])),
          norm_opts(q["options"], major) == ctl["options"],
          (q["options"], ctl["options"]))
    tk, ck = set(q), set(ctl)
    check("%s: qdisc object: keys only tc has %s, only arbtablectl %s"
          % (dev, sorted(tk - ck), sorted(ck - tk)),
          tk - ck <= TC_ONLY and ck - tk == CTL_ONLY, (sorted(tk), sorted(ck)))
    diff = [k for k in tk & ck if k != "options" and q[k] != ctl[k]]
    check("%s: qdisc stats and xstats: the same values (%d keys)" % (dev, len(tk & ck)),
          not diff, [(k, q[k], ctl[k]) for k in diff])
    byh = {c["handle"]: c for c in ctl["classes"]}
    check("%s: the same classes: %s" % (dev, sorted(c["handle"] for c in cls)),
          sorted(c["handle"] for c in cls) == sorted(byh) and cls,
          (sorted(c["handle"] for c in cls), sorted(byh)))
    bad = []
    for c in cls:
        k = byh.get(c["handle"])
        if k is None:
            continue
        ct, kt = set(c) - CLASS_TC_ONLY, set(k) - CLASS_CTL_ONLY
        cs = set(c["stats"]) - CLASS_STATS_TC_ONLY
        if ct != kt or cs != set(k["stats"]):
            bad.append(("keys", c["handle"], sorted(ct ^ kt),
                        sorted(cs ^ set(k["stats"]))))
            continue
        for key in ct - {"stats"}:
            if c[key] != k[key]:
                bad.append((c["handle"], key, c[key], k[key]))
        for key in cs:
            if c["stats"][key] != k["stats"][key]:
                bad.append((c["handle"], "stats." + key, c["stats"][key],
                            k["stats"][key]))
    check("%s: every class: the same keys and values in tc -j class show and arbtablectl (options, stats, xstats)"
          % dev, not bad, bad)
    miss = sorted(NEW_QDISC - (tk & ck)) + \
        sorted("class " + c["handle"] + ": " + k for c in cls for k in NEW_CLASS
               if k not in c["stats"] or k not in byh.get(c["handle"], {}).get("stats", {}))
    check("%s: the later xstats are compared (qdisc %s, class %s) and mtu_follows_device"
          % (dev, sorted(NEW_QDISC), sorted(NEW_CLASS)),
          not miss and "mtu_follows_device" in q["options"], miss)
    eo, eq, (eh, ec) = EXPECT.get(dev, ({}, {}, (None, {})))
    tcc = [c["stats"] for c in cls if c["handle"] == eh]
    got = ({k: q["options"].get(k) for k in eo}, {k: q.get(k) for k in eq},
           {k: tcc[0].get(k) for k in ec} if tcc else None)
    check("%s: those values are what was done to the device: options %s, qdisc %s, class %s %s"
          % (dev, eo, eq, eh, ec), got == (eo, eq, ec), got)
    over = [(w, c.get("handle"), sorted((set(c) - {"stats"}) & set(c["stats"])))
            for w, l in (("tc", cls), ("arbtablectl", ctl["classes"])) for c in l
            if (set(c) - {"stats"}) & set(c["stats"])]
    check("%s: no class key is both an option (configured) and a stat (measured or allocated)" % dev,
          not over, over)

# ---- one JSON type per key across qdisc and class output, tc -j and
# arbtablectl --json, every device (tests/plugin/json-types.py)
files = ["%s/%s.%s" % (tmp, w, d) for d in devs for w in ("q61", "q", "c", "ctl")]
r = subprocess.run([sys.executable, os.path.join(os.environ["ARBT_ROOT"],
                    "tests/plugin/json-types.py")] + files,
                   capture_output=True, text=True)
check("one JSON type per key in the qdisc and class output of tc -j and arbtablectl (%s)"
      % r.stdout.strip().splitlines()[-1:], r.returncode == 0, r.stdout)

# ---- round trip through tc 6.15: every class re-added from its JSON
dev = devs[0]
cls = arb(load("%s/c.%s" % (tmp, dev)))
parent = arb(load("%s/q.%s" % (tmp, dev)))[0]["handle"]
SPELL = {
    "ceil": lambda v: ["ceil", "%dbps" % v],
    "rate": lambda v: ["rate", "%dbps" % v],
    "cburst": lambda v: ["cburst", "%db" % v],
    "latency": lambda v: ["latency", "%dns" % v],
    "distance": lambda v: ["distance", str(v)],
    "share": lambda v: ["share", str(v)],
    "strict": lambda v: ["strict"] if v else [],
}
KEEP = ("allocated_distance", "reserved_rate", "reserved_weight",
        "guaranteed_rate", "guaranteed_bound", "high_slot_count",
        "low_slot_count", "high_weight", "low_weight")
opts_seen = set()


def cls_now(h):
    out = subprocess.run([tc15, "-s", "-j", "class", "show", "dev", dev,
                          "classid", h], env=env, capture_output=True,
                         text=True)
    try:
        return arb(json.loads(out.stdout))[0]
    except (ValueError, IndexError):
        return {"error": out.stdout + out.stderr}


def options(c):
    return {k: v for k, v in c.items()
            if k not in CLASS_TC_ONLY | {"handle", "root", "stats"}}


errs = []
for c in cls:
    r = subprocess.run([tc15, "class", "del", "dev", dev, "classid",
                        c["handle"]], env=env, capture_output=True, text=True)
    if r.returncode:
        errs.append("del %s: %s" % (c["handle"], r.stderr.strip()))
check("round trip (tc 6.15): every class deleted", not errs, errs)
for c in sorted(cls, key=lambda c: (not c.get("strict"), c["handle"])):
    h = c["handle"]
    opts = options(c)
    unknown = set(opts) - set(SPELL)
    args = sum((SPELL[k](v) for k, v in sorted(opts.items()) if k in SPELL), [])
    opts_seen |= set(opts)
    cmd = ["class", "add", "dev", dev, "parent", parent, "classid", h,
           "arbtable"] + args
    r = subprocess.run([tc15] + cmd, env=env, capture_output=True, text=True)
    err = "" if not r.returncode else "rc %d: %s" % (r.returncode, r.stderr.strip())
    n = cls_now(h)
    same = ({k: n.get("stats", {}).get(k) for k in KEEP} ==
            {k: c["stats"][k] for k in KEEP})
    check("round trip (tc 6.15): %s added back as 'arbtable %s': the same options%s and reservation"
          % (h, " ".join(args), "" if not unknown else " (unknown keys %s)" % sorted(unknown)),
          not err and not unknown and options(n) == opts and same,
          (err, opts, options(n), [(k, c["stats"][k], n.get("stats", {}).get(k)) for k in KEEP]))
check("round trip covered every class option: %s" % sorted(opts_seen),
      opts_seen == set(SPELL), sorted(set(SPELL) - opts_seen))

# ---- and the manual qdisc's options, given back to tc qdisc change
dev2 = devs[1]
q = arb(load("%s/q.%s" % (tmp, dev2)))[0]
o = q["options"]


def minor(ref):
    # a class of the options, "2:30" as tc prints it: the option takes 30
    return ref.split(":")[-1]


def tlist(entries):
    return ",".join("%s:%d@%d" % (minor(e["class"]), e["weight"], e["slot"])
                    for e in entries) or "none"


args = ["rate", "%dbps" % o["rate"], "highlimit", str(o["highlimit"]),
        "accounting", o["accounting"], "mtu", str(o["mtu"]),
        "maxweight", str(o["maxweight"]),
        "default", minor(o["default"]) or "0",
        "priomap"] + [minor(x) or "0" for x in o["priomap"]] + \
       ["high", tlist(o["high"]), "low", tlist(o["low"])]
if "burst" in o:
    args += ["burst", "%db" % o["burst"]]
# from empty tables and no default, so that the change sets them again
r0 = subprocess.run([tc15, "qdisc", "change", "dev", dev2, "root", "handle",
                     q["handle"], "arbtable", "high", "none", "low", "none",
                     "default", "0"], env=env, capture_output=True, text=True)
r = subprocess.run([tc15, "qdisc", "change", "dev", dev2, "root", "handle",
                    q["handle"], "arbtable"] + args, env=env,
                   capture_output=True, text=True)
out = subprocess.run([tc15, "-j", "qdisc", "show", "dev", dev2], env=env,
                     capture_output=True, text=True).stdout
try:
    n = arb(json.loads(out))[0]["options"]
except (ValueError, IndexError):
    n = out
check("round trip (tc 6.15): the manual qdisc's options given back as 'arbtable %s'"
      % " ".join(args), not r0.returncode and not r.returncode and n == o,
      (r0.stderr, r.stderr, o, n))
print("END")
PY
ended=0
while IFS= read -r line; do
	kind=${line%% *} rest=${line#* }
	case $kind in
	END) ended=1 ;;
	OK) tap_ok "$rest" ;;
	FAIL) tap_fail "$rest" ;;
	DIAG) diag "$rest" ;;
	*) diag "$line" ;;
	esac
done < <(ARBT_ROOT=$ARBT_ROOT python3 "$tmp/cmp.py" "$tmp" "$TC15" "$PL15" $DEV $DEV2 $DEV3 2>&1)
[ $ended = 1 ] || tap_fail "json: the comparison script ran to its end"

tap_end
