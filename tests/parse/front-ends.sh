#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The same values fed to the three front ends: the tc plugin, arbtablectl
# and arbsim, which share lib/arbtable_parse.c.  What each would send to
# the kernel is read from the request itself (strace + the plugin
# checks' netlink decoder, in a throwaway network namespace: no module
# needed), arbsim's from its JSON.  Compared:
#  - qdisc rate and burst: tc, arbtablectl create, arbsim;
#  - class ceil: tc, arbsim (arbtablectl's class commands need the module:
#    selftests/arbtable/test_lib.sh compares them in the VM);
#  - table lists: tc, arbsim;
#  - values all of them must refuse;
#  - JSON keys: a class given every option in arbsim prints them under
#    the keys tc -j (bookworm-backports' tc 6.15, which prints classes as
#    JSON) uses, and arbsim's other class keys are tc's (options, stats,
#    xstats) or its own simulation results, listed here. (arbtablectl's
#    JSON needs the module: selftests/arbtable/test_json.sh compares it
#    with tc -j's key by key in the VM.)
#
# usage: tests/parse/front-ends.sh [BUILD_DIR]   (default build)

set -u
HERE=$(cd "$(dirname "$0")" && pwd)
B=$(cd "${1:-$HERE/../../build}" && pwd)
export TC_LIB_DIR=$B/tc
CTL=$B/tools/arbtablectl
SIM=$B/tools/arbsim
DEC=$HERE/../plugin/nldecode.py
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0

for f in "$TC_LIB_DIR/q_arbtable.so" "$CTL" "$SIM"; do
	[ -x "$f" ] || [ -f "$f" ] || { echo "missing $f (make all)"; echo "0 passed, 1 failed"; exit 1; }
done
for tool in tc strace python3 unshare; do
	command -v $tool >/dev/null || { echo "missing $tool"; echo "0 passed, 1 failed"; exit 1; }
done

ok() { pass=$((pass + 1)); echo "ok   $*"; }
ko() { fail=$((fail + 1)); echo "FAIL $*"; }

# request CMD...: the decoded arbtable options of the request CMD sends
request() {
	unshare -n strace -f -o "$TMP/trace" -e trace=sendmsg,sendto -e write=all \
		"$@" >/dev/null 2>&1
	python3 "$DEC" <"$TMP/trace"
}

# field NAME DECODED: the value of NAME=... in a decoded request
field() {
	tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p" | head -n1
}

# sim_json SCENARIO: arbsim's JSON, or nothing when it refused
sim_json() {
	printf '%b' "$1" | "$SIM" -j -n 0 - 2>/dev/null
}

sim_get() { # python-expression over j
	python3 -c "import json,sys; j=json.load(sys.stdin); print($1)"
}

# tc_sim_agree WHAT TC SIM [UNIT]: tc sent TC and arbsim took the same
tc_sim_agree() {
	if [ -n "$2" ] && [ "$2" = "$3" ]; then
		ok "$1: ${2% }${4:+ $4} in tc and arbsim"
	else
		ko "$1: tc '$2', arbsim '$3'"
	fi
}

# refused_by_all WHAT OPTS...: the qdisc options OPTS, refused by tc,
# arbtablectl create and arbsim
refused_by_all() {
	local what=$1 t c s
	shift
	t=$(request tc qdisc add dev lo root handle 1: arbtable "$@")
	c=$(request "$CTL" create lo "$@")
	s=$(sim_json "qdisc $*\n")
	if [ "$t" = "no request" ] && [ "$c" = "no request" ] && [ -z "$s" ]; then
		ok "$what refused by all three"
	else
		ko "$what: tc [$t], arbtablectl [$c], arbsim [${s:0:60}]"
	fi
}

# ---- qdisc rate and burst
for pair in "10mbit 30k" "10.5mbit 1514" "1gbit 64kbit" "15bit 1mb" \
	    "125kBps 2047.9" "1.23456789gbit 0x800" "40GBIT 1M" "3mibit 16K" \
	    "999999999999 200m" "1e6 100000"; do
	set -- $pair
	rate=$1 burst=$2
	t=$(request tc qdisc add dev lo root handle 1: arbtable manual rate "$rate" burst "$burst")
	c=$(request "$CTL" create lo manual rate "$rate" burst "$burst")
	tr=$(field RATE "$t") tb=$(field BURST "$t")
	cr=$(field RATE "$c") cb=$(field BURST "$c")
	s=$(sim_json "qdisc manual rate $rate burst $burst mtu 64\n")
	if [ -n "$s" ]; then
		sr=$(sim_get 'j["qdisc"]["rate"]' <<<"$s")
		sb=$(sim_get 'j["qdisc"]["burst"]' <<<"$s")
	else
		sr=refused sb=refused
	fi
	if [ -n "$tr" ] && [ "$tr" = "$cr" ] && [ "$tr" = "$sr" ] &&
	   [ -n "$tb" ] && [ "$tb" = "$cb" ] && [ "$tb" = "$sb" ]; then
		ok "rate $rate burst $burst: $tr bytes/s, $tb bytes in all three"
	else
		ko "rate $rate burst $burst: tc $tr/$tb, arbtablectl $cr/$cb, arbsim $sr/$sb"
	fi
done

# ---- class ceil
for ceil in 100mbit 40gbit 1.5Mbit 12345bit 1tibps; do
	t=$(request tc class add dev lo parent 1: classid 1:10 arbtable ceil "$ceil")
	s=$(sim_json "qdisc manual rate 100tbit\nclass 1:10 ceil $ceil\n")
	tc_v=$(field CEIL "$t")
	sim_v=$([ -n "$s" ] && sim_get '[c.get("ceil", 0) for c in j["classes"]][0]' <<<"$s")
	tc_sim_agree "ceil $ceil" "$tc_v" "$sim_v" bytes/s
done

# ---- table lists: tc's entries against arbsim's programmed slots
for list in "10:127,11:63,-,12:5" "10:20,-,11:30@5,12:1" "a:1@63" "-,-,10:7" \
	    "10:255@0,11:1@32,10:2"; do
	t=$(request tc qdisc add dev lo root handle 1: arbtable manual rate 10mbit high "$list")
	tc_v=$(field HIGHN "$t" | python3 -c '
import sys
v = sys.stdin.read().strip().strip("[]")
e = [x.split(":") for x in v.split(",") if x]
print("".join("%d:%x:%d " % (int(a), int(b, 16), int(c))
              for a, b, c in sorted(e, key=lambda x: int(x[0])) if int(c)), end="")')
	s=$(sim_json "qdisc manual rate 10mbit\nhigh $list\n")
	sim_v=$([ -n "$s" ] && sim_get '" ".join("%d:%s:%d" % (e["slot"], e["class"].split(":")[1], e["weight"]) for e in sorted(j["tables"]["high"], key=lambda e: e["slot"])) + " "' <<<"$s")
	tc_sim_agree "high $list" "$tc_v" "$sim_v"
done

# ---- a bare time is microseconds (tc(8) TIMES) in every front end:
# tc's request, arbsim's class, arbtablectl request's cost (arbtable-cni
# parses with the same arbt_parse_time, pinned by tests/unit/test_parse)
for pair in "5000 5ms 5000000" "2500.5 2500500ns 2500500" "20000 20ms 20000000" \
	    "1e4 10ms 10000000"; do
	set -- $pair
	t=$(request tc class add dev lo parent 1: classid 1:10 arbtable rate 1mbit latency "$1")
	tc_v=$(field LATENCY "$t")
	s=$(sim_json "qdisc auto rate 1gbit mtu 1514\nclass 1:10 rate 1mbit latency $1\n")
	sim_v=$([ -n "$s" ] && sim_get '[c.get("latency", 0) for c in j["classes"]][0]' <<<"$s")
	[ "$tc_v" = "$3" ] || tc_v="$tc_v (not $3)"
	tc_sim_agree "latency $1 (bare: us)" "$tc_v" "$sim_v" ns
	c1=$("$CTL" -j request rate 1gbit latency "$1" 2>&1)
	c2=$("$CTL" -j request rate 1gbit latency "$2" 2>&1)
	if [ "$c1" = "$c2" ] && grep -q '"valid":true' <<<"$c1"; then
		ok "arbtablectl request: latency $1 is latency $2"
	else
		ko "arbtablectl request: latency $1 [$c1], latency $2 [$c2]"
	fi
done

# ---- the classification words: tc and arbtablectl create send the same
# attributes, 0 for no-WORD, 1 for WORD, none when not given (arbtablectl
# change reads the qdisc first, so needs the module: test_tenant_escape)
word_val() { # WORD WORDS: 0, 1 or nothing
	case " $2 " in *" no$1 "*) echo 0 ;; *" $1 "*) echo 1 ;; esac
}
for w in "noprioclassid" "prioclassid" "noclassifyforeign" "classifyforeign" \
	 "noprioclassid noclassifyforeign" "prioclassid noclassifyforeign"; do
	t=$(request tc qdisc add dev lo root handle 1: arbtable $w)
	c=$(request "$CTL" create lo $w)
	tp=$(field PRIO_CLASSID "$t") tf=$(field CLASSIFY_FOREIGN "$t")
	cp=$(field PRIO_CLASSID "$c") cf=$(field CLASSIFY_FOREIGN "$c")
	wp=$(word_val prioclassid "$w") wf=$(word_val classifyforeign "$w")
	if [ "$tp" = "$cp" ] && [ "$tf" = "$cf" ] && [ "$tp" = "$wp" ] && [ "$tf" = "$wf" ]; then
		ok "create $w: PRIO_CLASSID '$tp' CLASSIFY_FOREIGN '$tf' from tc and arbtablectl"
	else
		ko "create $w: tc [$t], arbtablectl [$c], want PRIO_CLASSID '$wp' CLASSIFY_FOREIGN '$wf'"
	fi
done

# ---- the mode words: LOCKLESS 1 for lockless, 0 for locked, none when
# not given, the same from tc and arbtablectl create
for w in "" "lockless" "locked"; do
	t=$(request tc qdisc add dev lo root handle 1: arbtable $w)
	c=$(request "$CTL" create lo $w)
	tl=$(field LOCKLESS "$t") cl=$(field LOCKLESS "$c")
	case $w in lockless) wl=1 ;; locked) wl=0 ;; *) wl= ;; esac
	if [ "$tl" = "$cl" ] && [ "$tl" = "$wl" ]; then
		ok "create ${w:-(no mode word)}: LOCKLESS '$tl' from tc and arbtablectl"
	else
		ko "create ${w:-(no mode word)}: tc [$t], arbtablectl [$c], want LOCKLESS '$wl'"
	fi
done

# ---- arbtablectl: a repeated option and a value out of its range are
# usage errors (exit 64) before anything is sent, as in the tc plugin
# (tests/plugin/parse-check.sh)
ctl_refuses() { # WANT ARGS...
	local want=$1 out rc
	shift
	out=$(unshare -n "$CTL" "$@" 2>&1)
	rc=$?
	if [ "$rc" = 64 ] && grep -qF -- "$want" <<<"$out"; then
		ok "arbtablectl $*: refused ($want)"
	else
		ko "arbtablectl $*: rc $rc [$out], want 64 and '$want'"
	fi
}
for o in "rate 1mbit" "burst 30k" "highlimit 4" "mtu 1500" "maxweight 9" "default 10" \
	 "accounting iba"; do
	set -- $o
	ctl_refuses "create: duplicate \"$1\"" create lo $o $o
done
ctl_refuses 'create: duplicate "auto"' create lo auto auto
ctl_refuses '"auto" and "manual" are exclusive' create lo auto manual
ctl_refuses '"noprioclassid" and "prioclassid" are exclusive' create lo noprioclassid prioclassid
ctl_refuses '"classifyforeign" and "noclassifyforeign" are exclusive' change lo classifyforeign noclassifyforeign
ctl_refuses 'change: duplicate "noprioclassid"' change lo noprioclassid noprioclassid
for o in "rate 1mbit" "ceil 1mbit" "cburst 30k" "latency 1ms" "distance 8" "share 4"; do
	set -- $o
	ctl_refuses "admit: duplicate \"$1\"" admit lo 1:10 $o $o
done
ctl_refuses 'admit: duplicate "strict"' admit lo 1:10 strict strict
ctl_refuses '"strict" and "nostrict" are exclusive' admit lo 1:10 strict nostrict
ctl_refuses 'request: duplicate "latency"' request rate 1mbit latency 1ms latency 2ms
ctl_refuses '0 = link speed, at most 2^48 bytes/s' create lo rate 3000tbit
ctl_refuses '0 = the device'"'"'s, or 64..1048576 bytes' create lo mtu 63
ctl_refuses '0 = the device'"'"'s, or 64..1048576 bytes' create lo mtu 1048577
ctl_refuses '(4096-byte blocks, 0..255)' create lo highlimit 256
ctl_refuses '(1..255)' create lo maxweight 0
ctl_refuses 'at most 256 MiB' create lo burst 300mb
ctl_refuses '0..ffff' create lo default 10000
ctl_refuses '0 = none, at most 2^48 bytes/s' admit lo 1:10 ceil 3000tbit
ctl_refuses 'at most 256 MiB' admit lo 1:10 cburst 300mb
ctl_refuses 'share out of range 1..255' admit lo 1:10 share 256
ctl_refuses 'distance out of range 1..64' admit lo 1:10 rate 1mbit distance 65
ctl_refuses 'rate above the largest rate, 2^48 bytes/s' admit lo 1:10 rate 3000tbit
ctl_refuses 'latency must be greater than 0' admit lo 1:10 rate 1mbit latency 0
ctl_refuses '0..ffff' priomap lo 10000 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0

# ---- refused by every front end
for rate in 1e20tbit inf -5mbit 10mbits "10 mbit" 5min; do
	refused_by_all "rate '$rate'" manual rate "$rate"
done
for burst in 4g -1 30kB/s nan; do
	refused_by_all "burst '$burst'" manual rate 10mbit burst "$burst"
done
for list in "10=5" "10:5," "zz:5" "10:0x5" "10:5@x" ""; do
	t=$(request tc qdisc add dev lo root handle 1: arbtable manual rate 10mbit high "$list")
	s=$(sim_json "qdisc manual rate 10mbit\nhigh $list\n")
	if [ "$t" = "no request" ] && [ -z "$s" ]; then
		ok "high '$list' refused by tc and arbsim"
	else
		ko "high '$list': tc [$t], arbsim [${s:0:60}]"
	fi
done
# a slot given twice, which one nest per slot cannot carry: refused by
# the shared parser (arbt_table_parse), in the same words by arbsim and
# arbtablectl
out=$(printf 'qdisc manual rate 10mbit\nhigh 10:5@3,11:6@3\n' | "$SIM" -n 0 - 2>&1)
if grep -q 'high table: slot 3 given twice' <<<"$out"; then
	ok "arbsim: a slot given twice is refused in the shared words"
else
	ko "arbsim on a slot given twice: $out"
fi
out=$(unshare -n "$CTL" table lo high 10:5@3,11:6@3 2>&1)
if grep -q 'high table: slot 3 given twice' <<<"$out"; then
	ok "arbtablectl: a slot given twice is refused in the shared words"
else
	ko "arbtablectl on a slot given twice: $out"
fi

# ---- JSON keys: arbsim's and tc -j's
BPO=${ARBT_IPROUTE2_BPO:-/var/lib/arbtable/iproute2-bpo}
mm=$(sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p' "$BPO/version" 2>/dev/null)
if [ -n "$mm" ] && [ -x "$BPO/root/sbin/tc" ] && [ -f "$B/tc-$mm/q_arbtable.so" ]; then
	${CC:-cc} -shared -fPIC -o "$TMP/jsonon.so" "$HERE/../plugin/jsonon.c"
	python3 "$HERE/../plugin/mkdump.py" "$TMP/c.dump" class
	python3 "$HERE/../plugin/mkdump.py" "$TMP/cs.dump" class-strict
	cat "$TMP/c.dump" "$TMP/cs.dump" >"$TMP/cc.dump"
	TC_LIB_DIR=$B/tc-$mm LD_PRELOAD="$TMP/jsonon.so" "$BPO/root/sbin/tc" -s monitor file "$TMP/cc.dump" \
		>"$TMP/tc.json" 2>&1
	printf '%b' "qdisc auto rate 10gbit mtu 1514\nclass 1:40 strict ceil 100mbit\nclass 1:10 rate 2gbit latency 500us ceil 5gbit cburst 30k\nclass 1:11 rate 300mbit distance 8\nclass 1:30 share 10 distance 4\ntraffic 1:10 size 1500\n" |
		"$SIM" -j -n 1000 -o 0 - >"$TMP/sim.json" 2>"$TMP/sim.err"
	if out=$(python3 - "$TMP/tc.json" "$TMP/sim.json" 2>&1 <<'EOF2'
import json, sys
tc = json.load(open(sys.argv[1]))
sim = json.load(open(sys.argv[2]))
OPTS = {"strict", "ceil", "cburst", "rate", "latency", "distance", "share"}
tckeys = set().union(*(set(c) | set(c["stats"]) for c in tc)) - {"stats"}
# arbsim's own: where the class sits and what the simulated traffic did
SIM_ONLY = {"table", "traffic", "byte_share", "bytes_high", "bytes_low",
            "bytes_strict", "bytes_slotless", "worst_gap_bytes", "worst_gap_ns"}
cl = {c["handle"]: c for c in sim["classes"]}
want = {"1:10": {"rate": 250000000, "latency": 500000, "ceil": 625000000, "cburst": 30720},
        "1:11": {"rate": 37500000, "distance": 8},
        "1:30": {"share": 10, "distance": 4},
        "1:40": {"strict": True, "ceil": 12500000}}
got = {h: {k: v for k, v in c.items() if k in OPTS} for h, c in cl.items()}
assert got == want, (got, want)
assert OPTS <= tckeys, OPTS - tckeys
extra = set().union(*(set(c) for c in sim["classes"])) - tckeys - SIM_ONLY
assert not extra, "arbsim class keys tc -j does not have: %s" % sorted(extra)
print("%d option keys, %d arbsim class keys, %d of them tc's"
      % (len(OPTS), len(set().union(*(set(c) for c in sim["classes"]))),
         len(set().union(*(set(c) for c in sim["classes"])) & tckeys)))
EOF2
	); then
		ok "json: arbsim's class options under tc -j's keys (tc $mm), its other keys tc's or its own: $out"
	else
		ko "json keys: $out"
	fi
else
	ko "json keys: no backports tc in $BPO with its plugin $B/tc-${mm:-?} (scripts/setup.sh, make plugin-bpo)"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
