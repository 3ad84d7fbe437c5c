#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Auto mode admission through tc (issue 3, DESIGN §4): classes admitted
# from rate + latency/distance (HIGH) and share (LOW); every rejection
# returns an error with the expected extack text and leaves the qdisc and
# class configuration untouched (a rejected `class change` keeps the old
# rate, latency and slot list).  Admitted classes hold 64/d slots exactly
# d apart, no slot has two owners.  The HIGH table is filled to 64/64
# slots, a further class is rejected with "needs ... 0 free; table full";
# releasing eight scattered single slots leaves a free distance-8 set
# (defragmentation) and a distance-8 class is admitted (Theorem 4).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_auto.sh"
tap_begin "auto mode admission and rejections"
tmp=$(mktemp -d)
DEV2=d1
trap 'dev_del $DEV; dev_del $DEV2; rm -rf $tmp' EXIT
have_arbtable || { tap_fail "auto admit: module and plugin present"; tap_end; exit; }

# ------------------------------------------------------- local helpers
# configuration as tc shows it, counters (Sent/backlog lines) removed
auto_state() {
	local d=${1:-$DEV} l
	# filtered in bash, not by a grep: two states per rejection
	while IFS= read -r l; do
		[[ $l =~ ^\ *(Sent|backlog|rate\ [0-9.]+[KMG]?bit\ [0-9]+pps) ]] || printf '%s\n' "$l"
	done < <(printf 'qdisc show dev %s\nclass show dev %s\n' "$d" "$d" | tc -s -d -batch -)
}
# rejects DESC SUBSTRING CMD...: CMD fails, stderr has SUBSTRING, state unchanged
rejects() {
	local desc=$1 want=$2 dev=$DEV before after; shift 2
	[ "${REJ_DEV:-}" ] && dev=$REJ_DEV
	before=$(auto_state "$dev")
	run "$@"
	after=$(auto_state "$dev")
	if [ "$RUN_RC" = 0 ]; then
		diag "$*: accepted, want rejection with '$want'"
		tap_fail "$desc: rejected"
	elif [[ "$RUN_ERR" != *"$want"* ]]; then
		diag "$*: rc $RUN_RC, stderr: $RUN_ERR"
		tap_fail "$desc: rejected with '$want'"
	elif [ "$before" != "$after" ]; then
		diag "$*: configuration changed by a rejected command:"
		diag "$(diff <(echo "$before") <(echo "$after"))"
		tap_fail "$desc: configuration unchanged after rejection"
	else
		tap_ok "$desc: rc $RUN_RC, '$want', configuration unchanged"
	fi
}
cls() { run tc class add dev $DEV parent 1: classid "1:$1" arbtable "${@:2}" || diag "tc class add 1:$1 ${*:2}: rc $RUN_RC: $RUN_ERR"; }

# ------------------------------------------------------- qdisc
auto_dev $DEV || { tap_fail "auto admit: dummy device"; tap_end; exit; }
rejects "qdisc without rate on a device of unknown speed" "auto mode needs a rate" \
	tc qdisc add dev $DEV root handle 1: arbtable
run tc qdisc add dev $DEV root handle 1: arbtable auto rate 10mbit
tap_check "qdisc: 'auto rate 10mbit' accepted and shown as auto" \
	grep -q ' auto rate 10Mbit' <<<"$(tc qdisc show dev $DEV) rc=$RUN_RC $RUN_ERR"
tc qdisc del dev $DEV root 2>/dev/null
run tc qdisc add dev $DEV root handle 1: arbtable rate 10mbit
if [ "$RUN_RC" != 0 ] || ! tc qdisc show dev $DEV | grep -q ' auto rate 10Mbit'; then
	diag "tc qdisc add ... arbtable rate 10mbit: rc $RUN_RC $RUN_ERR; $(tc qdisc show dev $DEV)"
	tap_fail "qdisc: auto is the default mode"
	tap_end; exit
fi
tap_ok "qdisc: auto is the default mode (rate 10mbit)"

# ------------------------------------------------------- admission
ok=1
cls 10 rate 500kbit latency 50ms || ok=0
cls 11 rate 1mbit distance 8 || ok=0
cls 12 rate 500kbit distance 6 || ok=0
cls 30 share 10 || ok=0
cls 31 share 20 distance 16 || ok=0
tap_check "admit: 1:10 rate+latency, 1:11 distance 8, 1:12 distance 6, 1:30 share, 1:31 share+distance" test $ok = 1
auto_cls >"$tmp/c0"
diag "$(awk '{ printf "%s high %s [%s] w %s low %s [%s] w %s d %s bound %sns current %sns\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 }' "$tmp/c0")"
tap_check "admit: distance 8 stays 8, distance 6 rounds down to 4 (xstats)" \
	test "$(acl_field 1:11 8) $(acl_field 1:12 8)" = "8 4"
tap_check "admit: share classes in LOW table (distance 64 default, 16 given), none in HIGH" \
	awk '$1 == "1:30" { a = ($2 == 0 && $5 == 1 && $8 == 64) } $1 == "1:31" { b = ($2 == 0 && $5 == 4 && $8 == 16) } END { exit !(a && b) }' "$tmp/c0"
tap_check "admit: rate classes in HIGH table only, with a guaranteed bound > 0" \
	awk '$1 ~ /^1:1[0-2]$/ && ($2 == 0 || $5 != 0 || $9 <= 0) { bad = 1 } END { exit bad }' "$tmp/c0"
d10=$(acl_field 1:10 8)
g10=$(acl_field 1:10 9)
tap_check "admit: latency 50ms -> distance $d10, guaranteed bound ${g10}ns <= 50ms" \
	fcmp "$g10 > 0 && $g10 <= 50000000"
tap_check "admit: current (placement) bound <= guaranteed bound for every HIGH class" \
	awk '$2 > 0 && !($10 <= $9) { print "# " $1 ": current " $10 " > guaranteed " $9; bad = 1 } END { exit bad }' "$tmp/c0"
# distance from latency is the largest power of two that meets it: the
# same rate at twice the distance has a bound above 50ms.  Twice the
# distance needs half 1:10's slots at the same rate, and the table has
# them free: a refusal is the qdisc's and fails.
if [ "$d10" -lt 64 ]; then
	read -r oh _ <<<"$(auto_occ)"
	if run tc class add dev $DEV parent 1: classid 1:99 arbtable rate 500kbit distance $((2 * d10)); then
		g99=$(acl_field 1:99 9)
		tap_check "admit: same rate at distance $((2 * d10)) has bound ${g99}ns > 50ms (largest distance chosen)" \
			fcmp "$g99 > 50000000"
		tc class del dev $DEV classid 1:99
	else
		tap_fail "admit: rate 500kbit at distance $((2 * d10)) ($((64 / (2 * d10))) slots, $((64 - oh)) free) admitted: $RUN_ERR"
	fi
fi
tap_check "layout: slots exactly d apart, 64/d of them, no slot shared" auto_layout
read -r oh ol <<<"$(auto_occ)"
tap_check "layout: qdisc occupancy (high $oh low $ol) = slots held by classes" \
	awk -v h="$oh" -v l="$ol" '{ H += $2; L += $5 } END { exit !(H == h && L == l) }' "$tmp/c0"

# ------------------------------------------------------- rejections
A=(tc class add dev $DEV parent 1: classid 1:40 arbtable)
rejects "reject rate above capacity" "above the guaranteed high-table rate" "${A[@]}" rate 20mbit
rejects "reject latency below best bound" "below the best possible bound" "${A[@]}" rate 1mbit latency 1ns
# plain ranges: tc refuses them naming the range (the kernel's policy
# refuses them too, as test_lib sees through the library)
rejects "reject rate 0 (tc)" 'illegal "rate" "0" (above 0' "${A[@]}" rate 0
rejects "reject share 300 (tc)" 'illegal "share" "300" (1..255)' "${A[@]}" share 300
rejects "reject share 0 (tc)" 'illegal "share" "0" (1..255)' "${A[@]}" share 0
rejects "reject distance 0 (tc)" 'illegal "distance" "0"' "${A[@]}" rate 1mbit distance 0
rejects "reject distance 65 (tc)" 'illegal "distance" "65"' "${A[@]}" rate 1mbit distance 65
rejects "reject latency 0 (tc)" 'illegal "latency" "0" (above 0' "${A[@]}" rate 1mbit latency 0
rejects "reject latency and distance" "give either latency or distance, not both" "${A[@]}" rate 1mbit latency 50ms distance 8
rejects "reject strict class without ceil" "a strict class needs a ceil on an auto-mode qdisc" "${A[@]}" strict
rejects "reject manual slots on auto qdisc" "manual high/low slots on an auto-mode qdisc" \
	tc qdisc change dev $DEV root handle 1: arbtable high 10:5
rejects "reject qdisc rate change while classes hold reservations" \
	"rate, mtu, maxweight and highlimit are fixed while" \
	tc qdisc change dev $DEV root handle 1: arbtable rate 5mbit
# the tc core answers ENOENT before the qdisc is asked (no extack)
rejects "reject change of an unknown class (ENOENT)" "No such file or directory" \
	tc class change dev $DEV classid 1:77 arbtable rate 1mbit distance 8
diag "change of unknown class 1:77: $RUN_ERR"
tap_check "change of unknown class 1:77 created nothing" test -z "$(tc class show dev $DEV classid 1:77)"
# a class needing more slots than are free: the extack says what fits
read -r oh _ <<<"$(auto_occ)"
rejects "reject class needing 32 slots with $((64 - oh)) free" \
	"$(ext "needs 32 slots at distance 2, $((64 - oh)) free" "needs more slots at its distance than the table has free")" "${A[@]}" rate 100kbit distance 2

# rejected `class change`: old rate/latency/slots intact
o10=$(arb_class_opts 10) s10=$(acl_field 1:10 3)
o11=$(arb_class_opts 11) s11=$(acl_field 1:11 3)
rejects "reject change 1:10 to rate 20mbit" "above the guaranteed high-table rate" \
	tc class change dev $DEV classid 1:10 arbtable rate 20mbit latency 50ms
# 1:11 holds 8 slots; with its own slots back there are 8 + free < 64
rejects "reject change 1:11 to distance 1 (too few slots even with its own)" "$(ext "needs 64 slots at distance 1" "needs more slots at its distance")" \
	tc class change dev $DEV classid 1:11 arbtable rate 1mbit distance 1
rejects "reject change 1:10 latency 1ns" "below the best possible bound" \
	tc class change dev $DEV classid 1:10 arbtable rate 500kbit latency 1ns
tap_check "rejected changes: 1:10 keeps '$o10' and slots [$s10]" \
	test "$(arb_class_opts 10)|$(acl_field 1:10 3)" = "$o10|$s10"
tap_check "rejected change: 1:11 keeps '$o11' and slots [$s11]" \
	test "$(arb_class_opts 11)|$(acl_field 1:11 3)" = "$o11|$s11"

# accepted change: atomic replace
run tc class change dev $DEV classid 1:10 arbtable rate 800kbit latency 50ms
tap_check "change 1:10 to rate 800kbit latency 50ms accepted and shown" \
	grep -q 'rate 800Kbit latency 50ms' <<<"$(arb_class_opts 10) rc=$RUN_RC $RUN_ERR"
tap_check "layout after change: slots exactly d apart, no slot shared" auto_layout

# manual-mode qdisc rejects auto options
auto_dev $DEV2 && tc qdisc add dev $DEV2 root handle 1: arbtable manual rate 10mbit &&
	tc class add dev $DEV2 parent 1: classid 1:10 arbtable ||
	diag "manual qdisc on $DEV2 setup failed"
REJ_DEV=$DEV2
for o in "rate 1mbit" "rate 1mbit latency 10ms" "rate 1mbit distance 8" "share 10"; do
	# shellcheck disable=SC2086
	rejects "manual qdisc: class add with '$o'" "rate/latency/distance/share need an auto-mode qdisc" \
		tc class add dev $DEV2 parent 1: classid 1:11 arbtable $o
done
rejects "manual qdisc: class change with 'distance 8'" "need an auto-mode qdisc" \
	tc class change dev $DEV2 classid 1:10 arbtable rate 1mbit distance 8
REJ_DEV=
dev_del $DEV2

# ------------------------------------------------------- fill to 64/64
read -r oh _ <<<"$(auto_occ)"
free0=$((64 - oh))
# one tc process for all of them (fork+exec of tc is slow under TCG)
for ((m = 0x100; m < 0x100 + free0; m++)); do
	printf 'class add dev %s parent 1: classid 1:%x arbtable rate 10kbit distance 64\n' $DEV $m
done >"$tmp/fill"
tc -force -batch "$tmp/fill" 2>"$tmp/fill.err"
nadd=$((free0 - $(grep -c '^Command failed' "$tmp/fill.err")))
[ "$nadd" = "$free0" ] || diag "$(cat "$tmp/fill.err")"
read -r oh _ <<<"$(auto_occ)"
tap_check "fill: $free0 single-slot classes admitted into the $free0 free slots, occupancy $oh/64" \
	test "$nadd/$oh" = "$free0/64"
rejects "full table: further admission rejected" "$(ext "needs 1 slots at distance 64, 0 free; table full" "needs more slots at its distance")" \
	"${A[@]}" rate 10kbit distance 64
tap_check "full table: layout exact" auto_layout

# release 8 single-slot classes spread over as many slot residues mod 8
# as possible: defragmentation must leave one free distance-8 set
auto_cls | awk '$1 ~ /^1:1[0-9a-f][0-9a-f]$/ && $2 == 1 { print $1, $3 }' >"$tmp/singles"
pick=$(awk '{ r = $2 % 8; if (!(r in seen) && n < 8) { seen[r] = 1; p[++n] = $1; used[$1] = 1 } a[++m] = $1 }
	END { for (i = 1; i <= m && n < 8; i++) if (!(a[i] in used)) p[++n] = a[i]; for (i = 1; i <= n; i++) print p[i] }' "$tmp/singles")
picked_slots=$(awk -v l="$(echo $pick)" 'BEGIN { n = split(l, a, " "); for (i = 1; i <= n; i++) w[a[i]] = 1 } $1 in w { printf "%s ", $2 }' "$tmp/singles")
diag "releasing $(echo $pick) (slots $picked_slots)"
sw0=$(auto_swaps)
for c in $pick; do echo "class del dev $DEV classid $c"; done >"$tmp/del"
tc -force -batch "$tmp/del" 2>"$tmp/del.err"
ndel=$(($(wc -l <"$tmp/del") - $(grep -c '^Command failed' "$tmp/del.err")))
sw1=$(auto_swaps)
auto_layout >/dev/null
diag "free HIGH slots after release: $FREE_HIGH; swaps $sw0 -> $sw1"
tap_check "release: 8 classes deleted" test "$ndel" = 8
tap_check "release: free slots form one distance-8 set (normalized after defragmentation)" \
	awk -v f="$FREE_HIGH" 'BEGIN { n = split(f, s, ","); if (n != 8) exit 1; for (i = 1; i < n; i++) if (s[i + 1] - s[i] != 8) exit 1 }'
if awk -v l="$picked_slots" 'BEGIN { n = split(l, s, " "); for (i = 2; i <= n; i++) if ((s[i] - s[1]) % 8) exit 0; exit 1 }'; then
	tap_check "release: scattered slots needed swaps (swaps $sw0 -> $sw1)" fcmp "$sw1 > $sw0"
fi
run tc class add dev $DEV parent 1: classid 1:50 arbtable rate 100kbit distance 8
tap_check "Theorem 4: distance-8 class admitted into the 8 freed slots (${RUN_ERR:-ok})" test "$RUN_RC" = 0
tap_check "Theorem 4: layout exact, table full again ($(auto_occ | cut -d' ' -f1)/64)" \
	eval 'auto_layout && [ "$(auto_occ | cut -d" " -f1)" = 64 ]'
rejects "full again: further admission rejected" "$(ext "0 free; table full" "needs more slots at its distance")" "${A[@]}" rate 10kbit distance 64
c=$(awk 'NR == 1 { print $1 }' <(auto_cls | awk '$1 ~ /^1:1[0-9a-f][0-9a-f]$/ && $2 == 1'))
tc class del dev $DEV classid "$c"
run tc class add dev $DEV parent 1: classid 1:51 arbtable rate 10kbit distance 64
tap_check "delete one ($c) and re-admit a single-slot class" test "$RUN_RC" = 0
tap_check "final layout exact" auto_layout
tap_end
