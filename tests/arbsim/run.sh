#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# arbsim tests: golden text outputs of every scenario (tests/arbsim/*.scn,
# arguments from its "# args:" line, expected output in expected/NAME.out),
# properties checked on --json output (check.py), JSON validity, error
# handling. Ends with "N passed, N failed"; exit status 1 on any failure.
#
#   ARBSIM=build/tools/arbsim-san tests/arbsim/run.sh   (make arbsim-test)
#   UPDATE=1 tests/arbsim/run.sh                        rewrite expected/

set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ARBSIM=${ARBSIM:-$root/build/tools/arbsim}
UPDATE=${UPDATE:-0}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
nok() {
	fail=$((fail + 1))
	echo "FAIL $1"
	[ -n "${2:-}" ] && printf '%s\n' "$2" | head -n 40 | sed 's/^/     /'
	return 0
}
# t NAME CMD...: passes when CMD exits 0.
t() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then ok "$name"; else nok "$name" "$out"; fi
}
args() { sed -n 's/^# args: //p' "$1"; }
# sim NAME [extra args]: JSON of scenario NAME into $tmp/NAME.json
sim() {
	local n=$1
	shift
	# shellcheck disable=SC2046
	"$ARBSIM" $(args "$here/$n.scn") "$@" --json "$here/$n.scn" \
		>"$tmp/$n.json" 2>"$tmp/$n.err"
}

if [ ! -x "$ARBSIM" ]; then
	nok "arbsim binary $ARBSIM (make arbsim)"
	echo "$pass passed, $fail failed"
	exit 1
fi

# ---- golden outputs --------------------------------------------------------
mkdir -p "$here/expected"
for scn in "$here"/*.scn; do
	n=$(basename "$scn" .scn)
	exp="$here/expected/$n.out"
	# shellcheck disable=SC2046
	if ! "$ARBSIM" $(args "$scn") "$scn" >"$tmp/$n.out" 2>"$tmp/$n.stderr"; then
		nok "golden $n: arbsim failed" "$(cat "$tmp/$n.stderr")"
		continue
	fi
	if [ "$UPDATE" = 1 ]; then
		cp "$tmp/$n.out" "$exp"
		ok "golden $n (updated)"
	elif [ ! -f "$exp" ]; then
		nok "golden $n: no $exp (UPDATE=1 creates it)"
	elif d=$(diff -u "$exp" "$tmp/$n.out"); then
		ok "golden $n"
	else
		nok "golden $n" "$d"
	fi
done

# ---- JSON: parses, and the properties ---------------------------------------
for scn in "$here"/*.scn; do
	n=$(basename "$scn" .scn)
	if sim "$n" && python3 -m json.tool "$tmp/$n.json" >/dev/null 2>"$tmp/$n.jerr"; then
		ok "json $n parses (python3 -m json.tool)"
	else
		nok "json $n" "$(cat "$tmp/$n.err" "$tmp/$n.jerr" 2>/dev/null)"
	fi
done

chk() { t "$1" python3 "$here/check.py" "${@:2}"; }
chk "IBA worked example: VL6,VL6,VL1,VL7,VL7,low VL3,VL7 and the weights left" \
	ib "$tmp/ib-example.json"
chk "BXIv3 Table 2 as a manual table: strides 2..32, shares = BW% within 1%" \
	bxiv3 "$tmp/bxiv3-manual.json"
chk "BXIv3 Table 2 as auto admissions with distance: same strides and shares" \
	bxiv3 "$tmp/bxiv3-auto.json"
chk "BXIv3: the allocator places the slots exactly as the manual table" \
	same-layout "$tmp/bxiv3-auto.json" "$tmp/bxiv3-manual.json"
chk "deficit, sizes 64..9000: byte shares = weight shares within 0.5%" \
	deficit-mixed "$tmp/deficit-mixed.json"
chk "iba, weight 1 with 1500-byte packets: share >10x its weight share" \
	iba-dev "$tmp/iba-deviation.json"
chk "deficit, same table: within 0.5 points of the weight shares" \
	deficit-0.5 "$tmp/deficit-deviation.json"
chk "rejections carry the allocator's text; release lets 1:12 in" \
	reject "$tmp/reject.json"
chk "release + defragmentation: 16 swaps, no slot owned twice" \
	defrag "$tmp/defrag.json"
chk "ceil and strict ceil hold; offered load served; best effort not starved" \
	ceil "$tmp/ceil-offered.json"
for n in bxiv3-auto defrag ceil-offered reject; do
	chk "$n: measured HOL wait <= guaranteed bound" hol "$tmp/$n.json"
done

# ---- determinism and seeds --------------------------------------------------
t "same input, same output" cmp -s \
	<("$ARBSIM" -n 20000 -o 50 "$here/bxiv3-manual.scn" 2>/dev/null) \
	<("$ARBSIM" -n 20000 -o 50 "$here/bxiv3-manual.scn" 2>/dev/null)
if cmp -s <("$ARBSIM" -n 20000 -o 50 -s 1 "$here/bxiv3-manual.scn" 2>/dev/null) \
	  <("$ARBSIM" -n 20000 -o 50 -s 2 "$here/bxiv3-manual.scn" 2>/dev/null); then
	nok "--seed changes the random size mix"
else
	ok "--seed changes the random size mix"
fi

# ---- errors and help ----------------------------------------------------------
# err NAME 'scenario text' 'expected message part'
err() {
	local out rc
	out=$(printf '%b' "$2" | "$ARBSIM" - 2>&1 >/dev/null)
	rc=$?
	if [ $rc -eq 2 ] && grep -qF -- "$3" <<<"$out"; then
		ok "error: $1"
	else
		nok "error: $1 (rc $rc)" "$out"
	fi
}
err "no qdisc" 'high 10:1\n' "-:1: the first statement must be 'qdisc"
err "no rate" 'qdisc manual\n' "needs a rate"
err "bad rate unit" 'qdisc rate 10mbits\n' 'illegal "rate" "10mbits"'
err "bad table entry" 'qdisc manual rate 1mbit\nhigh 10=5\n' \
	'-:2: "high" list: bad entry "10=5": expected MINOR:WEIGHT[@SLOT] or -'
err "unknown statement" 'qdisc rate 1mbit\nfoo 1\n' 'unknown statement "foo"'
err "bad latency" 'qdisc auto rate 1mbit\nclass 1:10 rate 1kbit latency 5min\n' \
	'illegal "latency" "5min"'
err "bad class id" 'qdisc rate 1mbit\ntraffic 1:xyz\n' 'bad class id'
out=$(printf 'qdisc manual rate 1mbit\nhigh 10:300,11:1@64\n' | "$ARBSIM" -o 0 - 2>&1)
if grep -qF "rejected: high table: slot 0 weight 300 out of range 0..255" <<<"$out"; then
	ok "kernel table checks (weight over 255) are reported as a decision"
else
	nok "kernel table checks" "$out"
fi
out=$(printf 'qdisc rate 1mbit\nclass 1:10 share 3\n' | "$ARBSIM" -o 0 - 2>&1)
if grep -q "^qdisc 1: auto rate 1mbit" <<<"$out" && grep -qF "class 1:10: admitted, low table" <<<"$out"; then
	ok "the default mode is the module's: auto (a share admitted)"
else
	nok "the default mode is auto" "$out"
fi
# class ids with the qdisc's major (issue 16 item 4), one slots column shape
out=$(printf 'qdisc manual handle 2: rate 10mbit burst 30k\nclass 2:10 ceil 1mbit cburst 16k\nclass 11\nhigh 10:5,11:3@8,10:1@9,10:1@10,10:1@11\ntraffic 2:10\n' |
	"$ARBSIM" -n 100 -o 1 - 2>&1)
if grep -q "^qdisc 2: manual rate 10mbit" <<<"$out" && grep -qF "class 2:11: created" <<<"$out" &&
   grep -qE "^  2:10 +0 +high +- 4: 0,9-11 " <<<"$out" && grep -qE "^  2:11 +1 +high +- 1: 8 " <<<"$out" &&
   ! grep -q " 1:1[01]" <<<"$out"; then
	ok "handle 2: class ids print as 2:N everywhere; slots column 'count: slots'"
else
	nok "handle 2: class ids and slots column" "$out"
fi
j=$(printf 'qdisc manual handle 2: rate 10mbit burst 30k\nclass 2:10 ceil 1mbit\n' | "$ARBSIM" -j -n 0 - 2>&1)
if grep -qF '"handle":"2:"' <<<"$j" && grep -qF '"burst":30720' <<<"$j" && grep -qF '"class":"2:10"' <<<"$j"; then
	ok "--json: handle, burst in tc size units, class 2:10"
else
	nok "--json handle/burst/class" "$j"
fi
err "class of another qdisc" 'qdisc manual handle 2: rate 1mbit\nclass 1:10\n' \
	'class id "1:10" is not a class of the qdisc 2:'
err "bad handle" 'qdisc manual handle 0: rate 1mbit\n' 'bad handle "0:"'
err "burst above 256 MiB, naming the range (the module's policy range)" 'qdisc manual rate 1mbit burst 300m\n' \
	'burst out of range: at most 256 MiB (0 = default)'
out=$(printf 'qdisc manual rate 1mbit\nclass 1:10 rate 1kbit\n' | "$ARBSIM" -o 0 - 2>&1)
if grep -qF "rate/latency/distance/share need an auto-mode qdisc" <<<"$out"; then
	ok "manual mode refuses rate/share like the module"
else
	nok "manual mode refuses rate/share" "$out"
fi
if "$ARBSIM" --help | grep -q "traffic ID \[size"; then
	ok "--help documents the scenario format"
else
	nok "--help documents the scenario format"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
