#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Checks of the tc plugin q_arbtable.so that need no kernel module:
#  - parse: valid command lines must reach the kernel with the expected
#    netlink attributes (decoded from an strace hex dump by nldecode.py);
#    invalid ones must fail in tc with the usage text and send nothing.
#  - print: dumps shaped like the module's (mkdump.py) are printed with
#    `tc monitor file`, and the printed qdisc line is parsed back to the
#    same attributes (round trip).
# Every tc runs in a throwaway network namespace (unshare -n), so nothing on
# the host is touched even if a sch_arbtable module happens to be loaded.
#
# usage: [TC=/path/to/tc] tests/plugin/parse-check.sh [PLUGIN_DIR]
#        (default: the tc in PATH, build/tc; make plugin-check also runs it
#        with bookworm-backports' tc 6.15 and the plugin built for it)

set -u
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${1:-$HERE/../../build/tc}
TC=${TC:-tc}
export TC_LIB_DIR=$(cd "$DIR" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0

for tool in "$TC" strace python3 unshare; do
	command -v $tool >/dev/null || { echo "missing $tool"; echo "0 passed, 1 failed"; exit 1; }
done
[ -f "$TC_LIB_DIR/q_arbtable.so" ] || { echo "no $TC_LIB_DIR/q_arbtable.so"; echo "0 passed, 1 failed"; exit 1; }

ok() { pass=$((pass + 1)); echo "ok   $*"; }
ko() { fail=$((fail + 1)); echo "FAIL $*"; }

# run tc ARGS...: sets RC, ERR (tc's stderr), NL (decoded request or "no request")
run() {
	ERR=$(unshare -n strace -o "$TMP/trace" -e trace=sendmsg -e write=all \
		"$TC" "$@" 2>&1 >/dev/null)
	RC=$?
	NL=$(python3 "$HERE/nldecode.py" < "$TMP/trace")
}

# good "DESC" "TOKEN TOKEN ..." tc-args...: the request must carry every token
good() {
	local desc=$1 want=$2 t missing=
	shift 2
	run "$@"
	for t in $want; do
		case " $NL " in *" $t "*) ;; *) missing="$missing $t" ;; esac
	done
	if [ "$NL" = "no request" ] || [ -n "$missing" ]; then
		ko "$desc: missing [$missing ] in [$NL] (rc $RC: $(echo "$ERR" | head -n2 | tr '\n' ' '))"
	else
		ok "$desc"
	fi
}

# bad "DESC" tc-args...: tc must refuse it itself, with one line saying
# why and one line of usage (as q_ets does; the full text is for "help")
bad() {
	local desc=$1
	shift
	run "$@"
	if [ "$RC" -ne 0 ] && [ "$NL" = "no request" ] && grep -q "Usage:" <<<"$ERR" &&
	   [ "$(wc -l <<<"$ERR")" -le 2 ]; then
		ok "$desc"
	else
		ko "$desc: rc $RC, request [$NL], stderr [$(echo "$ERR" | head -n2 | tr '\n' ' ')]"
	fi
}

# range_bad "DESC" "RANGE TEXT" tc-args...: as bad, and the reason names
# the range
range_bad() {
	local desc=$1 want=$2
	shift 2
	run "$@"
	if [ "$RC" -ne 0 ] && [ "$NL" = "no request" ] && grep -qF -- "$want" <<<"$ERR" &&
	   grep -q "Usage:" <<<"$ERR" && [ "$(wc -l <<<"$ERR")" -le 2 ]; then
		ok "$desc: refused, naming $want"
	else
		ko "$desc: rc $RC, request [$NL], stderr [$(echo "$ERR" | head -n2 | tr '\n' ' ')] (want '$want')"
	fi
}

Q="qdisc add dev lo root handle 1: arbtable"
C="class add dev lo parent 1: classid 1:10 arbtable"

# ---- qdisc: valid ----
good "minimal manual table" "kind=arbtable OPTIONSN MODE=0 RATE=1250000 HIGHN=[0:0x10:5]" \
	$Q manual rate 10mbit high 10:5
good "auto mode" "MODE=1 MAXWEIGHT=100" $Q auto maxweight 100
good "64-bit rate" "RATE=12500000000" $Q rate 100gbit
good "positions, null slots, @SLOT" "HIGHN=[0:0x10:127,1:0x11:63,3:0x12:5,10:0x13:1,11:0x14:2]" \
	$Q high 10:127,11:63,-,12:5,13:1@10,14:2
good "low table and none" "HIGHN=[] LOWN=[0:0x30:2]" $Q high none low 30:2
good "accounting words" "ACCOUNTING=1" $Q accounting iba
good "accounting deficit" "ACCOUNTING=0" $Q accounting deficit
good "default hex minor" "DEFAULT=48" $Q default 30
good "default 0x form" "DEFAULT=48" $Q default 0x30
good "priomap 16 hex minors" \
	"PRIOMAPN=[0x10,0x10,0x0,0x0,0x11,0x0,0x0,0x0,0x0,0x0,0x0,0x0,0x0,0x0,0x0,0x12]" \
	$Q priomap 10 10 0 0 11 0 0 0 0 0 0 0 0 0 0 12
good "mtu" "MTU=9000" $Q mtu 9000
good "mtu as a tc size (9k)" "MTU=9216" $Q mtu 9k
good "mtu 0 (follow the device)" "MTU=0" $Q mtu 0
range_bad "mtu 63" "64..1048576" $Q mtu 63
range_bad "mtu 1048577" "64..1048576" $Q mtu 1048577
good "mtu 1048576" "MTU=1048576" $Q mtu 1m
range_bad "qdisc rate 3000tbit" "2^48 bytes/s" $Q rate 3000tbit
good "qdisc rate 2000tbit" "RATE=250000000000000" $Q rate 2000tbit
good "qdisc rate 0 (link speed)" "RATE=0" $Q rate 0
# a bare rate is bit/s, a bare size bytes (tc(8), get_rate64/get_size)
good "bare rate = bit/s" "RATE=1000" $Q rate 8000
good "bare burst = bytes" "BURST=3000" $Q burst 3000
good "burst with tc size units" "RATE=1250000 BURST=30720" $Q rate 10mbit burst 30k
good "burst in bytes" "BURST=4000" $Q burst 4000
# a plain range (the kernel's netlink policy) is refused here, naming it
range_bad "highlimit 256" "0..255" $Q highlimit 256
good "highlimit 255 (unlimited)" "HIGHLIMIT=255" $Q highlimit 255
range_bad "maxweight 0" "1..255" $Q maxweight 0
range_bad "maxweight 256" "1..255" $Q maxweight 256
good "maxweight 255" "MAXWEIGHT=255" $Q maxweight 255
range_bad "default 10000" "0..ffff" $Q default 10000
good "default ffff" "DEFAULT=65535" $Q default ffff
range_bad "priomap minor 10000" "0..ffff" $Q priomap 1 2 3 4 5 6 7 8 9 a b c d e f 10000
range_bad "burst 300mb" "256 MiB" $Q burst 300mb
good "burst 256 MiB" "BURST=268435456" $Q burst 268435456
# the slots' own ranges (a slot nest's weight and class, 64 nests), in
# the words arbtablectl and arbsim use; a weight of 0 is a null slot, an
# empty nest like "-", whatever its class
range_bad "slot weight 256" "high table: slot 1 weight 256 out of range 0..255" $Q high 10:1,11:256
good "slot weight 255" "HIGHN=[0:0x10:255]" $Q high 10:255
range_bad "slot class 10000" "high table: slot 0 class minor 0x10000 out of range 1..0xffff" $Q high 10000:1
range_bad "slot class 0" "high table: slot 0 class minor 0 out of range 1..0xffff" $Q high 0:1
good "slot class ffff" "HIGHN=[0:0xffff:1]" $Q high ffff:1
good "weight 0 sent as an empty nest" "HIGHN=[1:0x11:5]" $Q high 10000:0,11:5
range_bad "slot 64" "high table: slot index 64 out of range 0..63" $Q high 10:5@64
good "slot 63" "HIGHN=[63:0x10:5]" $Q high 10:5@63
LIST65=$(for i in $(seq 0 64); do printf '%x:1,' $((i % 8 + 16)); done)
range_bad "65 entries" "high table: slot index 64 out of range 0..63" $Q high "${LIST65%,}"

# ---- qdisc: parse errors ----
bad "unknown keyword" $Q bogus
# help: the full text, every option
run $Q help
if [ "$RC" -ne 0 ] && [ "$NL" = "no request" ] && grep -q "LIST  := none" <<<"$ERR" &&
   grep -q "maxweight" <<<"$ERR" && [ "$(wc -l <<<"$ERR")" -gt 20 ]; then
	ok "help prints every qdisc option"
else
	ko "help: rc $RC, [$(head -c 200 <<<"$ERR")]"
fi
bad "manual and auto" $Q manual auto
bad "bad rate" $Q rate fast
bad "negative rate" $Q rate -5mbit
bad "bad highlimit" $Q highlimit -1
bad "bad accounting" $Q accounting fair
bad "bad default" $Q default zz
bad "priomap with 15 minors" $Q priomap 1 2 3 4 5 6 7 8 9 a b c d e f
bad "priomap element not hex" $Q priomap 1 2 3 4 5 6 7 8 9 a b c d e f rate
bad "bad mtu" $Q mtu lots
bad "bad maxweight" $Q maxweight x
bad "bad burst" $Q burst lots
bad "negative burst" $Q burst -1k
bad "entry without weight" $Q high 10
bad "weight not a number" $Q high 10:abc
bad "weight hex" $Q high 10:0x10
bad "minor not hex" $Q high zz:5
bad "bad slot" $Q high 10:5@x
bad "trailing comma" $Q high 10:5,
bad "empty entry" $Q low 10:5,,11:1
bad "weight overflows u32" $Q high 10:4294967296
# a slot given twice: one nest per slot cannot carry it
bad "slot given twice" $Q high 10:5@3,11:6@3
# the shared parser (lib/arbtable_parse.c): what tc's own get_rate64 would
# have wrapped or taken as infinite is refused
bad "rate above 2^64 bytes/s (tc alone wraps it)" $Q rate 1e20tbit
bad "rate inf" $Q rate inf
bad "burst above 4 GiB" $Q burst 4g
bad "empty table list" $Q high ""
good "rate truncated as tc does (15bit = 1 byte/s)" "RATE=1" $Q rate 15bit
good "rate in IEC bytes" "RATE=131072" $Q rate 128kibps
good "burst in kbit (tc size)" "BURST=8192" $Q burst 64kbit
good "lockless" "LOCKLESS=1" $Q lockless
good "locked" "LOCKLESS=0" $Q locked
bad "lockless with locked" $Q lockless locked

# ---- qdisc: a repeated option is refused (q_ets: Duplicate "bands") ----
dup() {
	local what=$1
	shift
	run "$@"
	if [ "$RC" -ne 0 ] && [ "$NL" = "no request" ] && grep -qF "duplicate \"$what\"" <<<"$ERR" &&
	   [ "$(wc -l <<<"$ERR")" -le 2 ]; then
		ok "duplicate $what refused"
	else
		ko "duplicate $what: rc $RC, request [$NL], stderr [$(echo "$ERR" | head -n2 | tr '\n' ' ')]"
	fi
}
PRIO="1 2 3 4 5 6 7 8 9 a b c d e f 10"
dup manual $Q manual manual
dup auto $Q auto auto
dup rate $Q rate 1mbit rate 2mbit
dup burst $Q burst 30k burst 40k
dup highlimit $Q highlimit 1 highlimit 2
dup accounting $Q accounting iba accounting deficit
dup default $Q default 10 default 11
# shellcheck disable=SC2086
dup priomap $Q priomap $PRIO priomap $PRIO
dup mtu $Q mtu 1500 mtu 9000
dup maxweight $Q maxweight 1 maxweight 2
dup high $Q high 10:1 high 11:1
dup low $Q low 10:1 low none
bad "manual and auto" $Q auto manual
dup strict $C strict strict
dup nostrict $C nostrict nostrict
bad "class strict and nostrict" $C strict nostrict
dup ceil $C ceil 1mbit ceil 2mbit
dup cburst $C cburst 30k cburst 30k
dup rate $C rate 1mbit rate 1mbit
dup latency $C latency 1ms latency 2ms
dup distance $C distance 2 distance 4
dup share $C share 1 share 2

# ---- class: valid ----
good "class all options" \
	"OPTIONSN STRICT=1 CEIL=125000000 RATE=250000000 LATENCY=50000 DISTANCE=8 SHARE=3" \
	$C strict ceil 1gbit rate 2gbit latency 50us distance 8 share 3
good "class nostrict" "STRICT=0" $C nostrict
good "class latency 1ms" "LATENCY=1000000" $C latency 1ms
# a bare time is microseconds (tc(8) TIMES), as tbf's latency
good "class latency 50 = 50us" "LATENCY=50000" $C latency 50
good "class latency 2.5 = 2.5us" "LATENCY=2500" $C latency 2.5
good "class latency 500ns" "LATENCY=500" $C latency 500ns
good "class 64-bit ceil" "CEIL=5000000000" $C ceil 40gbit
good "class distance 3 (the module rounds it)" "DISTANCE=3" $C distance 3
good "class distance 64" "DISTANCE=64" $C distance 64
good "class share 255" "SHARE=255" $C share 255
good "class ceil 0 (none)" "CEIL=0" $C ceil 0
good "class ceil 2000tbit (below 2^48 bytes/s)" "CEIL=250000000000000" $C ceil 2000tbit
# ---- class: plain ranges (the kernel's netlink policy), named here ----
range_bad "class share 300" "1..255" $C share 300
range_bad "class share 0" "1..255" $C share 0
range_bad "class distance 0" "64" $C distance 0
range_bad "class distance 65" "64" $C distance 65
range_bad "class rate 0" "above 0" $C rate 0
range_bad "class rate 3000tbit" "2^48 bytes/s" $C rate 3000tbit
range_bad "class ceil 3000tbit" "2^48 bytes/s" $C ceil 3000tbit
range_bad "class latency 0" "above 0" $C latency 0
range_bad "class cburst 300mb" "256 MiB" $C cburst 300mb

# ---- class: parse errors ----
bad "class unknown keyword" $C weight 5
bad "class bad latency" $C latency soon
bad "class negative latency" $C latency -5us
bad "class bad distance" $C distance far
bad "class bad ceil" $C ceil lots
bad "class latency above 2^63 ns" $C latency 1e10s
bad "class cburst above 4 GiB" $C cburst 5g
good "class latency truncated to ns" "LATENCY=2500" $C latency 2.5009us
good "class cburst in tc size units" "CBURST=30720" $C cburst 30k
run $C help
if [ "$RC" -ne 0 ] && grep -q "share      auto mode" <<<"$ERR" && [ "$(wc -l <<<"$ERR")" -gt 10 ]; then
	ok "class help prints every class option"
else
	ko "class help: rc $RC, [$(head -c 200 <<<"$ERR")]"
fi

# ---- printing (tc monitor file) and round trip ----
python3 "$HERE/mkdump.py" "$TMP/all.dump" all
OUT=$("$TC" -s -d monitor file "$TMP/all.dump" 2>&1)
chk() {
	if grep -qF -- "$2" <<<"$OUT"; then ok "print: $1"; else ko "print: $1: no [$2]"; fi
}
chk "manual qdisc line" "manual rate 10Mbit burst 30Kb highlimit 4 accounting deficit default 30 priomap 10 10 0 0 11 0 0 0 0 0 0 0 0 0 0 12 mtu 1514 maxweight 255 high 10:127,11:63,-,12:5 low 30:2"
chk "auto qdisc line" "auto rate 10Mbit highlimit 4 accounting deficit mtu 1514 maxweight 255"
chk "slot map: the used slots only" "0:10/127    1:11/63     3:12/5"
if grep -qE '(^| )[0-9]+:-( |$)' <<<"$OUT"; then ko "print: slot map lists null slots"; else ok "print: slot map without null slots"; fi
if grep -qx -- " unclassified: pkts 7 drops 1 qlen 2 *" <<<"$OUT" && grep -qx -- " swaps 3 throttled 9 *" <<<"$OUT"; then
	ok "print: qdisc xstats, the unclassified queue on its own line"
else
	ko "print: qdisc xstats lines: $(grep -E 'unclassified|swaps' <<<"$OUT" | tr '\n' '|')"
fi
chk "the unclassified queue's bound and longest wait (a kernel that has them)" " unclassified: pkts 7 drops 1 qlen 2 bound 110ms max_wait 52ms"
chk "occupancy" "occupancy: high 3/64 low 1/64 classes 4"
if grep -qE 'pointers|hp_counter|credit' <<<"$OUT"; then ko "print: the arbiter's cursor or credits printed"; else ok "print: no cursor, hp_counter or credits (the tracepoint has them)"; fi
chk "class options" "class arbtable 1:10 dev lo parent 1: leaf 8001: rate 2Gbit latency 50us"
chk "strict class options" "strict ceil 100Mbit cburst 30Kb distance 8 share 3"
chk "class xstats slots" "slots: high 4 [0,16,32,48] weight 508 low 0 [-] weight 0"
chk "class bounds" "bound: guaranteed 12.3us current 11us max_hol_wait 5.2us"
chk "class guaranteed rate" "rate 2Gbit guaranteed 2100Mbit (3427 units) throttled 17"
chk "qdisc gso" "gso: split 5 segments 40 oversize_drops 1"
if grep -qiE 'cannot parse|too short|malformed|unknown type' <<<"$OUT"; then ko "print: errors in output"; else ok "print: no errors"; fi
# xstats carry their type (qdisc/class) first: a longer blob from a newer
# kernel prints its known fields, an unknown type is reported, not guessed
python3 "$HERE/mkdump.py" "$TMP/newer.dump" class-newer
OUT=$("$TC" -s monitor file "$TMP/newer.dump" 2>&1)
chk "longer class xstats (newer kernel): known fields" "slots: high 0 [-] weight 0 low 1 [7] weight 2"
python3 "$HERE/mkdump.py" "$TMP/badtype.dump" class-badtype
OUT=$("$TC" -s monitor file "$TMP/badtype.dump" 2>&1)
chk "xstats of an unknown type are reported" "(arbtable xstats of unknown type 7)"

python3 "$HERE/mkdump.py" "$TMP/q.dump" qdisc-manual
LINE=$("$TC" monitor file "$TMP/q.dump" | head -n1 | sed 's/.* root //')
# shellcheck disable=SC2086
run qdisc add dev lo root handle 1: arbtable $LINE
want="MODE=0 RATE=1250000 HIGHLIMIT=4 ACCOUNTING=0 DEFAULT=48 PRIOMAPN=[0x10,0x10,0x0,0x0,0x11,0x0,0x0,0x0,0x0,0x0,0x0,0x0,0x0,0x0,0x0,0x12] MTU=1514 MAXWEIGHT=255 BURST=30720 HIGHN=[0:0x10:127,1:0x11:63,3:0x12:5] LOWN=[0:0x30:2]"
[ "$NL" = "kind=arbtable OPTIONSN $want" ] && ok "round trip of the qdisc line" ||
	ko "round trip: [$LINE] -> [$NL]"

# JSON (-j): tc's monitor has no JSON mode, so a tiny preload (jsonon.c)
# turns the JSON writer on around it. tc 6.1 prints classes as text only,
# so with it only the qdisc messages are checked; a newer tc (6.15) prints
# classes as JSON too, and their options and xstats are checked as well.
if ${CC:-cc} -shared -fPIC -o "$TMP/jsonon.so" "$HERE/jsonon.c" 2>/dev/null; then
	python3 "$HERE/mkdump.py" "$TMP/m.dump" qdisc-manual
	python3 "$HERE/mkdump.py" "$TMP/a.dump" qdisc-auto
	cat "$TMP/m.dump" "$TMP/a.dump" > "$TMP/qq.dump"
	LD_PRELOAD="$TMP/jsonon.so" "$TC" -s -d monitor file "$TMP/qq.dump" > "$TMP/qq.json" 2>&1
	if python3 - "$TMP/qq.json" <<'EOF2'
import json, sys
d = json.load(open(sys.argv[1]))
m, a = d[0], d[1]
o = m["options"]
assert o["mode"] == "manual" and o["rate"] == 1250000 and o["default"] == "1:30"
assert o["burst"] == 30720 and "burst" not in a["options"]
# class references as tc prints class ids, with the qdisc's major
assert o["priomap"][:5] == ["1:10", "1:10", "", "", "1:11"] and len(o["priomap"]) == 16
assert o["high"][2] == {"slot": 3, "class": "1:12", "weight": 5}
assert o["low"] == [{"slot": 0, "class": "1:30", "weight": 2}]
assert a["options"]["default"] == "" and "priomap" not in a["options"]
assert m["unclassified"]["packets"] == 7
assert "bound" not in m["unclassified"] and "max_wait" not in m["unclassified"]
assert (a["unclassified"]["bound"], a["unclassified"]["max_wait"]) == (109702400, 52000000)
assert not {"high_cur", "low_cur", "hp_counter", "high_credit", "low_credit"} & set(m)
assert (m["gso_split"], m["gso_segs"], m["oversize_drops"]) == (5, 40, 1)
assert a["options"]["mode"] == "auto" and len(a["options"]["high"]) == 4
EOF2
	then ok "json: qdisc options and xstats"; else ko "json: $(head -c 300 "$TMP/qq.json")"; fi
	JSONS="$TMP/qq.json"
	tcver=$("$TC" -V | sed -n 's/.*iproute2-\([0-9]*\.[0-9]*\).*/\1/p')
	if [ "$tcver" = 6.1 ]; then
		echo "info: tc $tcver prints classes as text in -j: class JSON is checked with tc 6.15 (make plugin-check)"
	else
		python3 "$HERE/mkdump.py" "$TMP/c.dump" class
		python3 "$HERE/mkdump.py" "$TMP/cs.dump" class-strict
		cat "$TMP/c.dump" "$TMP/cs.dump" > "$TMP/cc.dump"
		LD_PRELOAD="$TMP/jsonon.so" "$TC" -s -d monitor file "$TMP/cc.dump" > "$TMP/cc.json" 2>&1
		if python3 - "$TMP/cc.json" <<'EOF2'
import json, sys
c, s = json.load(open(sys.argv[1]))
assert c["class"] == "arbtable" and c["handle"] == "1:10" and c["parent"] == "1:"
# the options at the class's level, the measured and allocated in "stats"
assert (c["rate"], c["latency"]) == (250000000, 50000)
st = c["stats"]
assert st["allocated_distance"] == 16 and st["high_slots"] == [0, 16, 32, 48]
assert (st["reserved_rate"], st["guaranteed_rate"], st["reserved_weight"]) == (250000000, 262500000, 3427)
assert (st["guaranteed_bound"], st["current_bound"], st["max_hol_wait"]) == (12345, 11000, 5200)
assert (s["strict"], s["ceil"], s["cburst"], s["distance"], s["share"]) == (True, 12500000, 30720, 8, 3)
assert "rate" not in s and "latency" not in s
# no key means a configured value at one level and a measured one at the other
for x in (c, s):
    assert not (set(x) - {"stats"}) & set(x["stats"]), set(x) & set(x["stats"])
EOF2
		then ok "json: class options and xstats (tc $tcver)"; else ko "json: classes: $(head -c 600 "$TMP/cc.json")"; fi
		JSONS="$JSONS $TMP/cc.json"
	fi
	# one JSON type per key across the qdisc and class output
	# shellcheck disable=SC2086
	if out=$(python3 "$HERE/json-types.py" $JSONS); then
		ok "json: one type per key ($([ -n "${JSONS#* }" ] && [ "$JSONS" != "${JSONS#* }" ] && echo "qdisc and class" || echo qdisc): $(tail -n1 <<<"$out"))"
	else
		ko "json: a key with two types: $(tr '\n' ' ' <<<"$out")"
	fi
else
	ko "json: cannot build the preload helper"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
