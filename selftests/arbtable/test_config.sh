#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Configuration: `tc qdisc show` / `tc class show` output typed back as
# `change` round-trips, and every bad input is rejected with an extack
# message and leaves the configuration untouched.
. "$(dirname "$0")/lib.sh"
tap_begin "arbtable configuration round-trip and bad input"
trap 'dev_del $DEV' EXIT

if ! have_arbtable; then
	tap_fail "config: sch_arbtable module and tc plugin present"
	tap_end; exit
fi

# ------------------------------------------------------------ round-trip
setup_ok=1
arb_base manual rate 10mbit burst 30k || setup_ok=
for m in 10 11 12 13; do arb_class $m || setup_ok=; done
arb_class 14 ceil 2mbit cburst 20k || setup_ok=
arb_class 15 strict ceil 3mbit || setup_ok=
arb_change highlimit 10 accounting deficit default 13 \
	priomap 10 10 11 11 12 12 13 13 10 10 11 11 12 12 13 13 \
	high 10:40,11:20,-,12:30@10,13:255 low 13:2,10:1 || setup_ok=
if [ -z "$setup_ok" ]; then
	tap_fail "config: set up a qdisc with classes, priomap and tables"
else
	tap_ok "config: set up a qdisc with classes, priomap and tables"
fi

roundtrip_qdisc() {
	local s1 s2
	s1=$(arb_qdisc_opts)
	diag "qdisc show: $s1"
	[ -n "$s1" ] || { diag "no arbtable qdisc in tc qdisc show"; return 1; }
	# shellcheck disable=SC2086 # the show output is split into words on purpose
	arb_change $s1 || return 1
	s2=$(arb_qdisc_opts)
	[ "$s1" = "$s2" ] || { diag "after change: $s2"; return 1; }
}
roundtrip_class() { # minor
	local s1 s2
	s1=$(arb_class_opts "$1")
	diag "class 1:$1 show: $s1"
	# shellcheck disable=SC2086
	run tc class change dev $DEV parent 1: classid 1:$1 arbtable $s1 ||
		{ diag "tc class change ... classid 1:$1 arbtable $s1: rc $RUN_RC: $RUN_ERR"; return 1; }
	s2=$(arb_class_opts "$1")
	[ "$s1" = "$s2" ] || { diag "after change: $s2"; return 1; }
}
tap_check "config: tc qdisc show typed back as tc qdisc change gives identical show output" roundtrip_qdisc
tap_check "config: tc class show (ceil cburst) typed back as tc class change round-trips" roundtrip_class 14
cburst_shown() {
	local s; s=$(arb_class_opts 14)
	grep -qw -- "cburst 20Kb" <<<"$s" || { diag "want 'cburst 20Kb' in: $s"; return 1; }
}
tap_check "config: class cburst 20k shown as 'cburst 20Kb'" cburst_shown
tap_check "config: tc class show (strict ceil) typed back as tc class change round-trips" roundtrip_class 15
# the tables programmed above, slot for slot: as the lists tc shows (null
# slots as "-" up to the last used one) and as the -d slot maps
shows_table() {
	local s hi lo mhi mlo
	s=$(arb_qdisc_opts)
	hi=$(sed -n 's/.* high \([^ ]*\).*/\1/p' <<<"$s")
	lo=$(sed -n 's/.* low \([^ ]*\).*/\1/p' <<<"$s")
	read -r mhi mlo <<<"$(tc -d qdisc show dev $DEV | awk '
		/high table/ { t = 1; next } /low table/ { t = 2; next }
		/^qdisc/ { t = 0 } t { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+:[0-9a-f]+\/[0-9]+$/) m[t] = m[t] (m[t] == "" ? "" : ",") $i }
		END { print (m[1] == "" ? "-" : m[1]), (m[2] == "" ? "-" : m[2]) }')"
	[ "$hi" = "10:40,11:20,-,-,-,-,-,-,-,-,12:30,13:255" ] && [ "$lo" = "13:2,10:1" ] &&
		[ "$mhi" = "0:10/40,1:11/20,10:12/30,11:13/255" ] && [ "$mlo" = "0:13/2,1:10/1" ] && return 0
	diag "show: high '$hi' low '$lo'; -d maps: high '$mhi' low '$mlo'"
	return 1
}
tap_check "config: show and the -d slot maps give the programmed tables slot for slot" shows_table
# burst: shown when set, 0 goes back to the default depth (not shown)
burst_shown() { # WANT ("" = absent)
	local s; s=$(arb_qdisc_opts)
	if [ -n "$1" ]; then
		grep -qw -- "burst $1" <<<"$s" || { diag "want 'burst $1' in: $s"; return 1; }
	elif grep -qw burst <<<"$s"; then
		diag "want no burst in: $s"; return 1
	fi
}
tap_check "config: burst 30k shown as 'burst 30Kb'" burst_shown 30Kb
arb_change burst 0 || diag "burst 0 refused"
tap_check "config: burst 0 restores the default depth (not shown)" burst_shown ""
arb_change burst 64k || diag "burst 64k refused"
tap_check "config: burst 64k set by change" burst_shown 64Kb

# ------------------------------------------------------------ bad input
Q=(tc qdisc change dev $DEV root handle 1: arbtable)
arb_change high 11:10@0,10:7@5 low 12:3 || diag "could not program the reference table"
entries65=$(printf '10:1,%.0s' $(seq 64))10:1
zeros15=$(printf ' 0%.0s' $(seq 15))

# a slot's own ranges and a slot given twice (one nest per slot cannot
# carry it) are tc's to refuse; the kernel's refusals of the same nests
# are sent by arbt_nlfuzz -R below
bad "weight 300 > 255 (high 11:7,10:300, tc names the range), old table kept" 'tc:slot 1 weight 300 out of range 0\.\.255' "${Q[@]}" high 11:7,10:300
bad "class minor 0x10000 in a slot (high 10000:5, tc names the range)" 'tc:class minor 0x10000 out of range 1\.\.0xffff' "${Q[@]}" high 10000:5
bad "slot index 70 > 63 (high 10:5@70, tc names the range)" 'tc:slot index 70 out of range 0\.\.63' "${Q[@]}" high 10:5@70
bad "65 table entries (tc names the range)" 'tc:slot index 64 out of range 0\.\.63' "${Q[@]}" high "$entries65"
bad "a slot given twice (tc: one nest per slot cannot carry it)" 'tc:slot 3 given twice' "${Q[@]}" high 10:5@3,11:6@3
bad "slot naming a missing class (high 99:5)" 'class|exist|unknown|no such' "${Q[@]}" high 99:5
bad "deleting class 1:10 that high slot 5 names$(ext ' (message names the slot)' '')" "$(ext 'slot[^0-9]*5([^0-9]|$)' 'still named by table slots')" \
	tc class del dev $DEV classid 1:10
bad "highlimit 256 (tc names the range)" 'tc:highlimit.*0\.\.255' "${Q[@]}" highlimit 256
bad "unknown accounting (tc rejects the word)" 'tc:illegal "accounting" "bogus" \(deficit or iba\)' "${Q[@]}" accounting bogus
# shellcheck disable=SC2086
bad "priomap minor 0x10000 > 0xffff (tc names the range)" 'tc:priomap.*0\.\.ffff' "${Q[@]}" priomap 10000 $zeros15
bad "duplicate classid 1:10 (EEXIST from the tc core)" EEXIST tc class add dev $DEV parent 1: classid 1:10 arbtable
# 2^48 bytes/s bounds every rate (the strict class's burst is 10 ms of its ceil)
bad "class ceil 3000tbit above 2^48 bytes/s (tc names the range)" 'tc:ceil.*2\^48' \
	tc class change dev $DEV classid 1:14 arbtable ceil 3000tbit
# only one strict class may exist: remove the round-trip's 1:15 first so the
# rejection below is about the missing ceil
run tc class del dev $DEV classid 1:15 || diag "tc class del classid 1:15: $RUN_ERR"
bad "strict class without ceil while the table has guaranteed slots" 'ceil' \
	tc class add dev $DEV parent 1: classid 1:20 arbtable strict
bad "mode change on tc qdisc change (auto on a manual qdisc)" 'mode|auto|manual' "${Q[@]}" auto
bad "class cburst 1000 below the mtu (1514)" 'cburst.*mtu' tc class change dev $DEV classid 1:14 arbtable cburst 1000
bad "class cburst 300mb above 256 MiB (tc names the range)" 'tc:cburst.*256 MiB' tc class change dev $DEV classid 1:14 arbtable cburst 300mb
bad "class cburst without a ceil" 'cburst.*ceil' tc class change dev $DEV classid 1:11 arbtable cburst 30k
bad "burst 1000 below the mtu (1514)" 'burst.*mtu' "${Q[@]}" burst 1000
bad "burst 300mb above 256 MiB (tc names the range)" 'tc:burst.*256 MiB' "${Q[@]}" burst 300mb
bad "burst with the rate set to 0 (no shaper to size)" 'rate' "${Q[@]}" rate 0
bad "burst 2000 with mtu 3000 in one change (checked on the final values)" 'burst.*mtu' "${Q[@]}" burst 2000 mtu 3000
# a class's ceil must hold one packet of the mtu, and an mtu change may
# not undercut it (1:14 has cburst 20k)
bad "mtu 30000 above class 1:14's cburst 20k" "$(ext 'mtu is above a class.s cburst: 30000 > 20480 \(1:14\)' 'mtu is above a class.s cburst')" "${Q[@]}" mtu 30000

# the slot nests tc cannot send: a weight without a class and the
# reverse, 65 of them, ranges, a nest without its flag (arbt_nlfuzz -R);
# then null slots, an empty nest and weight 0, accepted
FUZZ=$ARBT_ROOT/build/nlfuzz/arbt_nlfuzz
if [ -x "$FUZZ" ]; then
	out=$("$FUZZ" -d $DEV -R 2>&1)
	frc=$?
	nres=0
	nbad=0
	while IFS= read -r l; do
		case $l in
		"ok "*) tap_ok "${l#ok - }"; nres=$((nres + 1)) ;;
		"not ok "*) tap_fail "${l#not ok - }"; nres=$((nres + 1)); nbad=$((nbad + 1)) ;;
		*) diag "$l" ;;
		esac
	done <<<"$out"
	# its exit says what its lines say: 0 with every refusal checked
	tap_check "table refusals: arbt_nlfuzz -R exited 0 after $nres results ($nbad failed; exit $frc)" \
		eval '[ "$frc" = 0 ] && [ "$nres" -gt 0 ] && [ "$nbad" = 0 ]'
else
	tap_fail "table refusals: $FUZZ built (make all)"
fi
arb_change high 11:10@0,10:7@5 low 12:3 || diag "could not program the reference table again"

# ------------------------------------------------------------ ceil removal
ceil_gone() { # MINOR: no ceil, no cburst in its options
	local s; s=$(arb_class_opts "$1")
	! grep -qwE 'ceil|cburst' <<<"$s" || { diag "class 1:$1 still shows: $s"; return 1; }
}
run tc class change dev $DEV classid 1:14 arbtable ceil 0
tap_check "ceil 0 removes class 1:14's ceil and its cburst (${RUN_ERR:-ok})" eval '[ "$RUN_RC" = 0 ] && ceil_gone 14'
run tc class add dev $DEV parent 1: classid 1:20 arbtable ceil 0
tap_check "ceil 0 on a new class: no ceil (${RUN_ERR:-ok})" eval '[ "$RUN_RC" = 0 ] && ceil_gone 20'
run tc class change dev $DEV classid 1:14 arbtable ceil 2mbit
tap_check "and a ceil set again afterwards (${RUN_ERR:-ok})" eval '[ "$RUN_RC" = 0 ] && arb_class_opts 14 | grep -qw "ceil 2Mbit"'

# ------------------------------------------------------------ drop reasons
# The unclassified queue full (sch->limit, the device's txqueuelen at
# creation, 4 here) behind a 8 kbit/s rate: 20 unclassified 1000-byte
# packets from pktgen, most dropped. Where the kernel has the qdisc drop
# reasons (7.2) the qdisc:qdisc_drop trace must name QDISC_DROP_OVERLIMIT
# for each (the trace says OVERLIMIT; the generic drop left GENERIC);
# before 7.2 (no reasons) the drops must be counted as the unclassified
# queue's.
TR=/sys/kernel/tracing
[ -d $TR/events ] || mount -t tracefs nodev $TR 2>/dev/null
reasons_kernel=0
kver_ge 7 2 && reasons_kernel=1
tc qdisc del dev $DEV root 2>/dev/null
ip link set $DEV txqueuelen 4
run tc qdisc add dev $DEV root handle 1: arbtable manual rate 8kbit
ip link set $DEV txqueuelen 1000
if [ "$RUN_RC" = 0 ] && { [ $reasons_kernel = 0 ] || [ -d $TR/events/qdisc/qdisc_drop ]; } &&
	pg_reset && pg_device $DEV 0 0 1000 0 1 02:00:00:00:00:01 &&
	pg_cmd "$PG/$DEV@0" "count 20"; then
	if [ $reasons_kernel = 1 ]; then
		echo 0 >$TR/tracing_on; : >$TR/trace
		echo 1 >$TR/events/qdisc/qdisc_drop/enable
		echo 1 >$TR/tracing_on
	fi
	timeout 20 sh -c "echo start >$PG/pgctrl"
	if [ $reasons_kernel = 1 ]; then
		echo 0 >$TR/tracing_on
		echo 0 >$TR/events/qdisc/qdisc_drop/enable
		reasons=$(awk '/qdisc_drop:.* kind=arbtable / { r = $0; sub(/.* reason=/, "", r); n[r]++ }
			END { for (r in n) printf "%s:%d ", r, n[r] }' $TR/trace)
		: >$TR/trace
	fi
	pg_stop
	udrops=$(tc -s qdisc show dev $DEV | awk '/unclassified: pkts/ { for (i = 1; i < NF; i++) if ($i == "drops") print $(i + 1) }')
	if [ $reasons_kernel = 1 ]; then
		tap_check "drop reasons: a full unclassified queue drops with QDISC_DROP_OVERLIMIT (${reasons:-no drop traced})" \
			eval '[[ "$reasons" =~ ^OVERLIMIT:[0-9]+\ $ ]]'
	else
		tap_check "drop reasons: $(uname -r) has none; a full unclassified queue's drops counted as its own (drops ${udrops:-?} of 20 sent)" \
			eval '[ "${udrops:-0}" -ge 10 ]'
	fi
else
	tap_fail "drop reasons: qdisc (rate 8kbit, limit 4), qdisc:qdisc_drop trace and pktgen set up (${RUN_ERR:-ok})"
fi

tap_end
