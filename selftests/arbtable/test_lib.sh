#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# libarbtable and arbtablectl against the real module (issue 7): create an
# auto-mode qdisc, admit/change/reject/release classes, show (map and
# --json), watch (text, --json, in-place refresh on a tty), manual tables,
# the example program (from build/ and built against an installed tree),
# and every failure path with its exit code and message: usage (64), no
# such device (2), not an arbtable qdisc (3), kernel rejection (4, with
# the kernel's extack text).
. "$(dirname "$0")/lib.sh"
tap_begin "libarbtable and arbtablectl"
CTL=$ARBT_ROOT/build/tools/arbtablectl
EX=$ARBT_ROOT/build/lib/libarbtable-example
DEV2=d1
tmp=$(mktemp -d)
trap 'pg_stop; dev_del $DEV; dev_del $DEV2; rm -rf $tmp' EXIT

# The module: scripts/vm.sh loads it; a bare vng run does not.
arb_load_module || diag "loading sch_arbtable failed"
if ! grep -q '^sch_arbtable ' /proc/modules; then
	tap_fail "lib: sch_arbtable module loaded"
	tap_end
	exit
fi
if [ ! -x "$CTL" ] || [ ! -x "$EX" ]; then
	tap_fail "lib: $CTL and $EX built (make lib)"
	tap_end
	exit
fi

# expect DESC RC SUBSTRING CMD...: CMD exits RC and its stderr+stdout
# contains SUBSTRING (if not empty)
expect() {
	local desc=$1 want=$2 sub=$3
	shift 3
	run "$@"
	if [ "$RUN_RC" != "$want" ]; then
		diag "$*: rc $RUN_RC, want $want"
		diag "stdout: $RUN_OUT"
		diag "stderr: $RUN_ERR"
		tap_fail "$desc"
	elif [ -n "$sub" ] && [[ "$RUN_ERR$RUN_OUT" != *"$sub"* ]]; then
		diag "$*: rc $RUN_RC, output lacks '$sub'"
		diag "stdout: $RUN_OUT"
		diag "stderr: $RUN_ERR"
		tap_fail "$desc"
	else
		tap_ok "$desc (rc $RUN_RC${sub:+, '$sub'})"
	fi
}
# JSON checks, one python3 start per document (slow under TCG):
# jcheck JSON DESC EXPR [DESC EXPR ...]: each EXPR (d = the object) is a
# TAP result; a DESC "=NAME" stores str(EXPR) in the shell variable NAME.
cat >"$tmp/jcheck.py" <<'PY'
import json, sys
try:
    d = json.loads(sys.argv[1])
except ValueError as e:
    d = None
    err = "not JSON: %s: %s" % (e, sys.argv[1][:300])
for desc, expr in zip(sys.argv[2::2], sys.argv[3::2]):
    try:
        v = eval(expr) if d is not None else None
    except Exception as e:
        v, err = None, "%s: %r" % (expr, e)
    if desc.startswith("="):
        print("VAL %s %s" % (desc[1:], v))
    elif v:
        print("OK %s" % desc)
    else:
        print("FAIL %s" % desc)
        print("DIAG %s" % (err if d is None or v is None else expr))
        print("DIAG %s" % json.dumps(d)[:1200])
PY
jcheck() {
	local js=$1 line kind rest
	shift
	while IFS= read -r line; do
		kind=${line%% *} rest=${line#* }
		case $kind in
		OK) tap_ok "$rest" ;;
		FAIL) tap_fail "$rest" ;;
		DIAG) diag "$rest" ;;
		VAL) printf -v "${rest%% *}" '%s' "${rest#* }" ;;
		*) diag "$line" ;;
		esac
	done < <(python3 "$tmp/jcheck.py" "$js" "$@" 2>&1)
}

# ------------------------------------------------------- usage, devices
expect "usage: no command" 64 "no command given" "$CTL"
expect "usage: unknown command" 64 "unknown command" "$CTL" frobnicate d0
expect "usage: bad rate" 64 'bad rate "fast"' "$CTL" admit d0 1:10 rate fast
expect "usage: bad class id" 64 "bad class id" "$CTL" admit d0 1:0 rate 1mbit
expect "usage: watch -n needs a count" 64 "-n needs COUNT" "$CTL" watch d0 -n
expect "no such device: show" 2 "no such device: nosuchdev0" "$CTL" show nosuchdev0
expect "no such device: admit" 2 "no such device: nosuchdev0" "$CTL" admit nosuchdev0 1:10 rate 1mbit
expect "no such device: release" 2 "no such device" "$CTL" release nosuchdev0 1:10

dummy_up $DEV || { tap_fail "lib: dummy $DEV"; tap_end; exit; }
expect "not arbtable: show on a noqueue device" 3 "not an arbtable qdisc" "$CTL" show $DEV
tc qdisc add dev $DEV root handle 1: prio
expect "not arbtable: admit under a prio qdisc" 3 "qdisc 1: is prio, not an arbtable qdisc" \
	"$CTL" admit $DEV 1:10 rate 1mbit
expect "not arbtable: watch under a prio qdisc" 3 "not an arbtable qdisc" "$CTL" watch $DEV -n 1
tc qdisc del dev $DEV root

# ------------------------------------------------------- create, admit
expect "create: auto rate 10mbit" 0 "" "$CTL" create $DEV auto rate 10mbit
tap_check "create: tc shows an arbtable qdisc 1: on $DEV" \
	grep -q 'qdisc arbtable 1: root' <<<"$(tc qdisc show dev $DEV)"
expect "create: a second root qdisc is refused by the kernel" 4 "rejected by the kernel" \
	"$CTL" create $DEV auto rate 10mbit
expect "not arbtable: admit under handle 2: (qdisc is 1:)" 3 "no qdisc with handle 2:" \
	"$CTL" admit $DEV 2:10 rate 1mbit
expect "admit 1:10 rate 1mbit latency 50ms" 0 "" "$CTL" admit $DEV 1:10 rate 1mbit latency 50ms
# 1mbit fits in 8 slots of weight <= 255, so distance 8 is kept (2mbit
# would not: the allocator halves the distance to give it more weight)
expect "admit 1:11 rate 1mbit distance 8" 0 "" "$CTL" admit $DEV 1:11 rate 1mbit distance 8
expect "admit 30 (bare minor) share 10" 0 "" "$CTL" admit $DEV 30 share 10
expect "admit 1:12 rate 500kbit distance 16 ceil 5mbit" 0 "" \
	"$CTL" admit $DEV 1:12 rate 500kbit distance 16 ceil 5mbit

# ------------------------------------------------------- rejections (exit 4, extack text)
expect "reject: rate above capacity, kernel reason printed" 4 \
	"$(ext "rate 20Mbit above" "rate above")" "$CTL" admit $DEV 1:40 rate 20mbit
tap_check "reject: reason says 'above the guaranteed high-table rate'" \
	grep -q "above the guaranteed high-table rate" <<<"$RUN_ERR"
tap_check "reject: message says 'rejected by the kernel'" \
	grep -q "admit 1:40 on $DEV: rejected by the kernel: rate .*above the guaranteed" <<<"$RUN_ERR"
# what the options ask for together is refused before the kernel, in
# its words (lib/arbtable_request.c, the check arbtable-cni and arbsim
# share; test_auto_admit has the kernel's own refusals through tc)
expect "reject before the kernel: latency and distance (usage, the module's words)" 64 \
	"admit: give either latency or distance, not both" \
	"$CTL" admit $DEV 1:40 rate 1mbit latency 50ms distance 8
expect "reject before the kernel: share 300" 64 "admit: share out of range 1..255" "$CTL" admit $DEV 1:40 share 300
expect "reject before the kernel: distance 65" 64 "admit: distance out of range 1..64" \
	"$CTL" admit $DEV 1:40 rate 1mbit distance 65
expect "reject: latency below the best bound" 4 "below the best possible bound" \
	"$CTL" admit $DEV 1:40 rate 1mbit latency 1ns
expect "reject: strict without ceil" 4 "a strict class needs a ceil" "$CTL" admit $DEV 1:40 strict
expect "reject: admit of an existing class" 4 "rejected by the kernel" \
	"$CTL" admit $DEV 1:10 rate 1mbit latency 50ms
expect "reject: change of a class that does not exist" 4 "rejected by the kernel" \
	"$CTL" change $DEV 1:77 rate 1mbit
tap_check "reject: nothing left behind by the rejections (no 1:40, 1:77)" \
	test -z "$(tc class show dev $DEV classid 1:40)$(tc class show dev $DEV classid 1:77)"

# ------------------------------------------------------- show
expect "show: text" 0 "HIGH table:" "$CTL" show $DEV
show=$RUN_OUT
diag "$show"
tap_check "show: both maps of 8 rows, class table, free slots, free sets" bash -c '
	s=$1
	[ "$(grep -cE "^ +(0|8|16|24|32|40|48|56) " <<<"$s")" = 16 ] &&
	grep -q "^LOW table:" <<<"$s" && grep -q "^CLASS " <<<"$s" &&
	grep -q "^1:11 .* high .* 1Mbit .* 8 " <<<"$s" &&
	grep -q "^1:30 .* low .*share 10" <<<"$s" &&
	grep -q "^free high slots: " <<<"$s" && grep -q "^free sets by distance:" <<<"$s"' _ "$show"
tap_check "show: the mtu followed, the capacity and link, the GSO and stall counters, a STALLS column" bash -c '
	s=$1
	grep -q "^arbtable 1: on .*, mtu 1514 (follows the device), " <<<"$s" &&
	grep -qx "capacity 10Mbit, link unknown, link_changes 0, mtu_changes 0, broken 0" <<<"$s" &&
	grep -qx "gso_split 0, gso_segs 0, oversize_drops 0, stalls 0" <<<"$s" &&
	grep -q "^CLASS .* CEIL  *STALLS SLOT LIST$" <<<"$s" &&
	[ "$(grep -cE "^1:(10|11|12|30) .* 0 [-0-9,]+$" <<<"$s")" = 4 ] &&
	! grep -q BROKEN <<<"$s"' _ "$show"
expect "show --json" 0 "" "$CTL" --json show $DEV
js=$RUN_OUT
jcheck "$js" \
	"show --json: auto, rate 10mbit (1250000 B/s), handle 1:, 4 classes" \
	'd["options"]["mode"] == "auto" and d["options"]["rate"] == 1250000 and d["handle"] == "1:" and len(d["classes"]) == 4 == d["class_count"]' \
	"show --json: 1:11 has distance 8 and 8 HIGH slots exactly 8 apart" \
	'[ (c["distance"], c["stats"]["allocated_distance"], len(x), sorted(set((b - a) % 64 for a, b in zip(x, x[1:] + x[:1])))) for c in d["classes"] for x in [c["stats"]["high_slots"]] if c["handle"] == "1:11" ] == [(8, 8, 8, [8])]' \
	"show --json: table slots agree with every class's slot lists" \
	'all(sorted(s["slot"] for s in d["options"][t] if s["class"] == c["handle"]) == c["stats"][t + "_slots"] for c in d["classes"] for t in ("high", "low"))' \
	"show --json: used + free = 64 per table; HIGH classes have a bound" \
	'all(d[t + "_table"]["used"] + len(d[t + "_table"]["free"]) == 64 == d[t + "_used"] + len(d[t + "_table"]["free"]) for t in ("high", "low")) and all(c["stats"]["guaranteed_bound"] > 0 for c in d["classes"] if c["stats"]["high_slots"])' \
	"show --json: every rate class's guaranteed_rate >= reserved_rate, with reserved_weight = its weight" \
	'all(x["guaranteed_rate"] >= x["reserved_rate"] > 0 and x["reserved_weight"] == x["high_weight"] + x["low_weight"] for c in d["classes"] for x in [c["stats"]] if "rate" in c)' \
	"show --json: the mtu follows the device, capacity 1250000 B/s, link unknown, every class unbroken with 0 stalls" \
	'd["options"]["mtu_follows_device"] is True and d["options"]["mtu"] == 1514 and (d["capacity"], d["link_rate"], d["broken_classes"], d["stalls"]) == (1250000, 0, 0, 0) and all((c["stats"]["broken"], c["stats"]["stalls"]) == (False, 0) for c in d["classes"])' \
	"show --json: 1:10 reserves 125000 B/s with latency 50ms; 1:12 ceil 625000 B/s" \
	'[(c["stats"]["reserved_rate"], c["latency"]) for c in d["classes"] if c["handle"] == "1:10"] == [(125000, 50000000)] and [c["ceil"] for c in d["classes"] if c["handle"] == "1:12"] == [625000]' \
	=high_before 'd["high_table"]["used"]' \
	=n11 '[len(c["stats"]["high_slots"]) for c in d["classes"] if c["handle"] == "1:11"][0]' \
	=o10 '[c["stats"]["high_slots"] for c in d["classes"] if c["handle"] == "1:10"][0]' \
	=w10 '[c["stats"]["reserved_weight"] for c in d["classes"] if c["handle"] == "1:10"][0]'
# the same reserved weight as tc -s prints it ("guaranteed RATE (N units)")
tw10=$(tc -s class show dev $DEV classid 1:10 | sed -nE 's/.* guaranteed [^ ]+ \(([0-9]+) units\).*/\1/p')
tap_check "show --json: 1:10 reserved_weight ${w10:-?} = tc -s class show's ${tw10:-?} units" test "${w10:-x}" = "${tw10:-y}"

# ------------------------------------------------------- change
expect "change: 1:10 to 20mbit is refused" 4 "above the guaranteed high-table rate" \
	"$CTL" change $DEV 1:10 rate 20mbit
run "$CTL" --json show $DEV
jcheck "$RUN_OUT" "change: refused change kept 1:10's rate and slots" \
	"[(c['stats']['reserved_rate'], c['stats']['high_slots']) for c in d['classes'] if c['handle'] == '1:10'] == [(125000, $o10)]"
expect "change: 1:10 to rate 800kbit" 0 "" "$CTL" change $DEV 1:10 rate 800kbit
run "$CTL" --json show $DEV
jcheck "$RUN_OUT" "change: 1:10 now reserves 100000 B/s, latency kept" \
	'[(c["stats"]["reserved_rate"], c["latency"]) for c in d["classes"] if c["handle"] == "1:10"] == [(100000, 50000000)]'

# ------------------------------------------------------- watch
expect "watch: 2 text refreshes" 0 "" "$CTL" watch $DEV -i 0.3 -n 2
tap_check "watch: 2 frames with a header and all 4 classes each" bash -c '
	[ "$(grep -c "^CLASS " <<<"$1")" = 2 ] && [ "$(grep -c "^1:1[012] \|^1:30 " <<<"$1")" = 8 ] &&
	[ "$(grep -c "^total " <<<"$1")" = 2 ]' _ "$RUN_OUT"
if pg_reset && pg_add $DEV 0 1000 0x10010 4; then
	pg_start
	run "$CTL" --json watch $DEV -i 0.5 -n 2
	pg_stop
	lastj=$(tail -n1 <<<"$RUN_OUT")
	tap_check "watch --json: 2 JSON lines" test "$RUN_RC/$(wc -l <<<"$RUN_OUT")" = "0/2"
	jcheck "$lastj" \
		"watch --json: 1:10 (pktgen 4mbit) measured rate > 0 vs reserved 100000 B/s" \
		'[(c["measured_rate"] > 0, c["reserved_rate"], "rate" in c) for c in d["classes"] if c["handle"] == "1:10"] == [(True, 100000, False)]' \
		"watch --json: idle class 1:11 has measured_rate 0" \
		'[c["measured_rate"] for c in d["classes"] if c["handle"] == "1:11"] == [0]'
	diag "$lastj"
else
	# pktgen is a module of every kernel the suite boots
	pg_stop
	tap_fail "watch --json with traffic: pktgen producer on $DEV"
fi
# script(1) is util-linux's (essential on Debian)
if command -v script >/dev/null; then
	out=$(script -qec "$CTL watch $DEV -i 0.2 -n 3" /dev/null </dev/null)
	ups=$(grep -o $'\e\[[0-9]*A' <<<"$out" | wc -l)
	clr=$(grep -c $'\e\[J' <<<"$out")
	tap_check "watch on a tty: refreshes 2 and 3 move the cursor up and clear (ESC[nA ESC[J: $ups, $clr)" \
		test "$ups" = 2 -a "$clr" -ge 1
else
	tap_fail "watch on a tty: script(1) installed"
fi

# ------------------------------------------------------- release
expect "release 1:11" 0 "" "$CTL" release $DEV 1:11
run "$CTL" --json show $DEV
jcheck "$RUN_OUT" "release: 1:11 gone, its $n11 HIGH slots free" \
	"all(c['handle'] != '1:11' for c in d['classes']) and d['high_table']['used'] == $high_before - $n11"
expect "release: again is refused (no such class)" 4 "rejected by the kernel" "$CTL" release $DEV 1:11
expect "release: --json acknowledgement" 0 '{"ok":true,"command":"release","dev":"'$DEV'","handle":":30"}' "$CTL" --json release $DEV 30

# ------------------------------------------------------- manual tables
dummy_up $DEV2 || tap_fail "lib: dummy $DEV2"
expect "manual: create $DEV2 manual rate 10mbit" 0 "" "$CTL" create $DEV2 manual rate 10mbit
expect "manual: plain class 1:10" 0 "" "$CTL" admit $DEV2 1:10
expect "manual: plain class 1:11" 0 "" "$CTL" admit $DEV2 1:11
expect "manual: table high 10:20,-,11:30@5" 0 "" "$CTL" table $DEV2 high 10:20,-,11:30@5
run "$CTL" --json show $DEV2
jcheck "$RUN_OUT" "manual: HIGH slots 0 -> 1:10/20, 5 -> 1:11/30" \
	'[(s["slot"], s["class"], s["weight"]) for s in d["options"]["high"]] == [(0, "1:10", 20), (5, "1:11", 30)] and d["options"]["mode"] == "manual"'
expect "priomap: 16 class minors set" 0 "" "$CTL" priomap $DEV2 10 10 0 0 11 0 0 0 0 0 0 0 0 0 0 11
run "$CTL" --json show $DEV2
jcheck "$RUN_OUT" "priomap: show --json gives its 16 class ids" \
	'd["options"]["priomap"] == ["1:10", "1:10", "", "", "1:11"] + [""] * 10 + ["1:11"]'
tap_check "priomap: tc shows the same map" \
	grep -q "priomap 10 10 0 0 11 0 0 0 0 0 0 0 0 0 0 11" <<<"$(tc qdisc show dev $DEV2)"
expect "priomap: 3 minors is a usage error" 64 "16 class minors" "$CTL" priomap $DEV2 1 2 3
expect "priomap: a minor above 0xffff is refused before the kernel, naming the range" 64 "0..ffff" \
	"$CTL" priomap $DEV2 10000 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
expect "change DEV rate 20mbit burst 40k: the qdisc's own options" 0 "" \
	"$CTL" change $DEV2 rate 20mbit burst 40k highlimit 8
run "$CTL" --json show $DEV2
jcheck "$RUN_OUT" "change: rate, burst and highlimit changed, tables kept" \
	'd["options"]["rate"] == 2500000 and d["options"]["burst"] == 40960 and d["options"]["highlimit"] == 8 and len(d["options"]["high"]) == 2'
expect "change: a qdisc option out of range is refused before the kernel (highlimit 300)" 64 \
	'bad highlimit "300" (4096-byte blocks, 0..255)' "$CTL" change $DEV2 highlimit 300
expect "change: a repeated qdisc option is refused" 64 'change: duplicate "rate"' \
	"$CTL" change $DEV2 rate 20mbit rate 30mbit
expect "change: a qdisc option the kernel refuses (burst below the mtu)" 4 "rejected by the kernel" \
	"$CTL" change $DEV2 burst 100
expect "manual: unknown class in a table is refused with the kernel's reason" 4 "rejected by the kernel" \
	"$CTL" table $DEV2 low 99:5
expect "manual: rate on a manual qdisc is refused" 4 "need an auto-mode qdisc" \
	"$CTL" admit $DEV2 1:12 rate 1mbit
expect "manual: release of a class still in the table is refused" 4 "still named by table slots" \
	"$CTL" release $DEV2 1:10
expect "manual: table high none" 0 "" "$CTL" table $DEV2 high none
expect "delete $DEV2's qdisc" 0 "" "$CTL" delete $DEV2
expect "delete: again -> not an arbtable qdisc" 3 "not an arbtable qdisc" "$CTL" delete $DEV2

# ------------------------------------------------------- one parser
# tc (the plugin) and arbtablectl share lib/arbtable_parse.c: the same
# words program the same qdisc, classes and table (tests/parse/front-ends.sh
# compares what they send on the host; here the kernel's view of both).
cat >"$tmp/proj.py" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
q = {k: d["options"].get(k) for k in ("mode", "rate", "burst")}
t = [(s["slot"], s["class"], s["weight"]) for s in d["options"]["high"]]
c = sorted((x["handle"], x.get("rate"), x.get("latency"), x.get("distance"),
            x.get("share"), x.get("ceil"), x["stats"]["allocated_distance"])
           for x in d["classes"])
print(q, t, c)
PY
same_config() { # DESC: tc's configuration of $DEV2 ($tmp/by-tc) == arbtablectl's
	run "$CTL" --json show $DEV2
	python3 "$tmp/proj.py" "$RUN_OUT" >"$tmp/by-ctl" 2>&1
	if [ -s "$tmp/by-tc" ] && cmp -s "$tmp/by-tc" "$tmp/by-ctl"; then
		tap_ok "$1: $(cut -c1-150 "$tmp/by-ctl")"
	else
		diag "by tc:          $(cat "$tmp/by-tc")"
		diag "by arbtablectl: $(cat "$tmp/by-ctl")"
		tap_fail "$1"
	fi
}
ok=0
tc qdisc add dev $DEV2 root handle 1: arbtable manual rate 10.5mbit burst 30k || ok=1
tc class add dev $DEV2 parent 1: classid 1:10 arbtable ceil 1.5Mbit || ok=1
tc class add dev $DEV2 parent 1: classid 1:11 arbtable || ok=1
tc qdisc change dev $DEV2 root handle 1: arbtable high 10:20,-,11:30@5,-,10:7 || ok=1
run "$CTL" --json show $DEV2
python3 "$tmp/proj.py" "$RUN_OUT" >"$tmp/by-tc" 2>&1 || ok=1
tc qdisc del dev $DEV2 root 2>/dev/null
expect "one parser: arbtablectl create manual rate 10.5mbit burst 30k" 0 "" \
	"$CTL" create $DEV2 manual rate 10.5mbit burst 30k
expect "one parser: arbtablectl admit 1:10 ceil 1.5Mbit" 0 "" "$CTL" admit $DEV2 1:10 ceil 1.5Mbit
expect "one parser: arbtablectl admit 1:11" 0 "" "$CTL" admit $DEV2 1:11
expect "one parser: arbtablectl table high 10:20,-,11:30@5,-,10:7" 0 "" \
	"$CTL" table $DEV2 high 10:20,-,11:30@5,-,10:7
[ $ok = 0 ] || diag "tc's manual configuration failed"
same_config "one parser: manual qdisc, ceil and table list alike through tc and arbtablectl"
tc qdisc del dev $DEV2 root 2>/dev/null
ok=0
tc qdisc add dev $DEV2 root handle 1: arbtable rate 1.25gbit mtu 1514 || ok=1
tc class add dev $DEV2 parent 1: classid 1:10 arbtable rate 123.4567mbit latency 250.5us ceil 1gibit || ok=1
tc class add dev $DEV2 parent 1: classid 1:11 arbtable rate 10MBps distance 16 || ok=1
tc class add dev $DEV2 parent 1: classid 1:30 arbtable share 7 || ok=1
run "$CTL" --json show $DEV2
python3 "$tmp/proj.py" "$RUN_OUT" >"$tmp/by-tc" 2>&1 || ok=1
tc qdisc del dev $DEV2 root 2>/dev/null
[ $ok = 0 ] || diag "tc's auto configuration failed"
expect "one parser: arbtablectl create rate 1.25gbit mtu 1514" 0 "" "$CTL" create $DEV2 rate 1.25gbit mtu 1514
expect "one parser: arbtablectl admit 1:10 rate 123.4567mbit latency 250.5us ceil 1gibit" 0 "" \
	"$CTL" admit $DEV2 1:10 rate 123.4567mbit latency 250.5us ceil 1gibit
expect "one parser: arbtablectl admit 1:11 rate 10MBps distance 16" 0 "" \
	"$CTL" admit $DEV2 1:11 rate 10MBps distance 16
expect "one parser: arbtablectl admit 1:30 share 7" 0 "" "$CTL" admit $DEV2 1:30 share 7
same_config "one parser: auto admissions (rate, latency, distance, share, ceil) alike through tc and arbtablectl"
expect "one parser: arbtablectl refuses a slot given twice in the kernel's words" 64 \
	"high table: slot 3 given twice" "$CTL" table $DEV2 high 10:5@3,11:6@3
tc qdisc del dev $DEV2 root 2>/dev/null

# ------------------------------------------------------- -n NETNS
ns=arbt-ctl-ns
ip netns del $ns 2>/dev/null
if ip netns add $ns && ip -n $ns link add dn0 type dummy && ip -n $ns link set dn0 up; then
	expect "-n NETNS: create on a device of another namespace" 0 "" \
		"$CTL" -n $ns create dn0 rate 5mbit
	run "$CTL" -n $ns --json show dn0
	jcheck "$RUN_OUT" "-n NETNS: show there gives its qdisc" 'd["dev"] == "dn0" and d["options"]["rate"] == 625000'
	expect "-n NETNS: the device is not in this namespace" 2 "no such device" "$CTL" show dn0
	expect "-n NETNS: a namespace that does not exist" 1 "nosuch-ns" "$CTL" -n nosuch-ns show dn0
else
	tap_fail "-n NETNS: ip netns add $ns with a dummy device"
fi
ip netns del $ns 2>/dev/null

# ------------------------------------------------------- example program
expect "example: creates, admits, shows, releases on $DEV2" 0 "released 10 and 20" "$EX" $DEV2 --create 10
diag "$RUN_OUT"
tap_check "example: over-capacity admission refused with the kernel's reason" \
	grep -q "refused as expected: rate .*above the guaranteed high-table rate" <<<"$RUN_OUT"
tap_check "example: class 10 placed in HIGH with a bound, 20 in LOW" bash -c '
	grep -q "^class 1:10 distance [0-9]* reserved 125000 B/s bound [1-9][0-9]* ns slots H" <<<"$1" &&
	grep -q "^class 1:20 .* slots L" <<<"$1"' _ "$RUN_OUT"
tap_check "example: left no qdisc behind" bash -c "! tc qdisc show dev $DEV2 | grep -q arbtable"
expect "example: 1:10 taken on $DEV -> fails cleanly with the kernel's reason" 1 "[kernel]" "$EX" $DEV
expect "release 1:10 (rate class) on $DEV" 0 "" "$CTL" release $DEV 1:10
expect "example: on $DEV's existing qdisc" 0 "released 10 and 20" "$EX" $DEV
expect "example: no such device" 1 "no such device" "$EX" nosuchdev0

# linked against an installed tree through pkg-config: the files `make
# lib-install` puts in place (copied here: running make under TCG costs
# a minute of $(shell ...) evaluation; make lib-check does the real one)
root=$tmp/root
# gcc and pkg-config build the project: one missing fails, as does the
# installed tree not made (a failed copy)
if ! command -v gcc >/dev/null || ! command -v pkg-config >/dev/null; then
	tap_fail "installed tree: gcc ($(command -v gcc || echo missing)) and pkg-config ($(command -v pkg-config || echo missing)) installed"
elif ! { mkdir -p "$root/usr/lib/pkgconfig" "$root/usr/include/arbtable" &&
	cp -P "$ARBT_ROOT"/build/lib/libarbtable.so* "$root/usr/lib/" &&
	cp "$ARBT_ROOT/lib/include/arbtable/arbtable.h" "$root/usr/include/arbtable/" &&
	sed -e 's|@PREFIX@|/usr|; s|@LIBDIR@|/usr/lib|; s|@INCLUDEDIR@|/usr/include|; s|@VERSION@|0|' \
		"$ARBT_ROOT/lib/libarbtable.pc.in" >"$root/usr/lib/pkgconfig/libarbtable.pc"; } 2>"$tmp/tree.log"; then
	diag "$(cat "$tmp/tree.log")"
	tap_fail "installed: the installed tree (library, header, .pc) made from build/lib"
else
	if PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_PATH=$root/usr/lib/pkgconfig \
		bash -c 'gcc -O2 -Wall -Werror -o "$1/ex" "$2" $(pkg-config --cflags --libs libarbtable)' _ \
		"$tmp" "$ARBT_ROOT/Documentation/libarbtable-example.c" 2>"$tmp/cc.log"; then
		expect "installed: example built with pkg-config admits and releases" 0 "released 10 and 20" \
			env LD_LIBRARY_PATH="$root/usr/lib" "$tmp/ex" $DEV2 --create 10
		tap_check "installed: the example uses the installed libarbtable.so.0" \
			grep -q "$root/usr/lib/libarbtable.so.0" <<<"$(LD_LIBRARY_PATH=$root/usr/lib ldd "$tmp/ex")"
	else
		diag "$(cat "$tmp/cc.log")"
		tap_fail "installed: example builds with pkg-config --cflags --libs libarbtable"
	fi
fi

tc qdisc del dev $DEV root 2>/dev/null
tap_end
