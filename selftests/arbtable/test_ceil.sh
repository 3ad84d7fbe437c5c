#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Class ceil: 1:13 (weight 30, would get 3 Mbit/s) has ceil 2mbit under
# qdisc rate 10mbit; measured 2 Mbit/s +-3%.  The other classes keep the
# rest (work-conserving) and share it by weight.  The buckets are deeper
# than the default (burst 30k, cburst 15k): under TCG the watchdog often
# fires more than 10 ms late, and a 10 ms bucket then loses ~4% of a rate
# measured in wall-clock time (README.rst here, "Rates under emulation").
. "$(dirname "$0")/lib.sh"
pg_test_begin ceil "class ceil under a 10 Mbit/s qdisc rate"

setup() {
	arb_base manual rate "$(kbit 10)" burst 30k || return 1
	for m in 10 11 12; do arb_class $m || return 1; done
	arb_class 13 ceil "$(kbit 2)" cburst 15k || return 1
	arb_deep 10 || return 1
	arb_change high 10:10,11:30,12:30,13:30 || return 1
	arb_traffic "10:64:3 11:700:10 12:1200:10 13:1500:10"
}
if ! setup; then tap_fail "ceil: setup"; tap_end; exit; fi
pg_start
measure $DEV arbtable 4 "$(win 10)" "$tmp/m"
diag "$(m_table "$tmp/m" "1:10=10 1:11=30 1:12=30 1:13=30")"
tap_measure "ceil: all 4 classes backlogged at both reads" m_backlogged "$tmp/m" 1:10 1:11 1:12 1:13
rate_check "ceil: class 1:13 with ceil 2mbit measures 2 Mbit/s +-3%" "$(m_rate "$tmp/m" 1:13)" "$(bps 2)" 0.03 "$tmp/m" "$(win 10)"
total=$(awk '$1 ~ /:/ { s += $3 } END { print s }' "$tmp/m")
rate_check "ceil: qdisc total 10 Mbit/s +-3% (work-conserving, rate shaping)" "$total" "$(bps 10)" 0.03 "$tmp/m" "$(win 10)"
tap_measure "ceil: the other classes share the rest by weight +-1%" m_shares_ok "$tmp/m" "1:10=10 1:11=30 1:12=30" 0.01
pg_stop
arb_after_stop ceil

# A class throttled by a ceil of 120 bit/s waits a minute per packet;
# a new ceil, or none, lets it send at once (the watchdog was set for the
# old deadline).  Nothing else is sent meanwhile, so only that wake-up
# can drain it.
throttled_burst() {
	run tc class change dev $DEV classid 1:13 arbtable ceil 120bit cburst 2k ||
		{ diag "ceil 120bit: $RUN_ERR"; return 1; }
	arb_traffic "13:1500:2" && pg_start && sleep 1 && pg_stop
	sleep 1
	read -r _ _ _ _ qp <<<"$(qd_stats $DEV 1:)"
	diag "1:13 under ceil 120bit holds $qp packets after traffic stopped"
	[ "${qp:-0}" -gt 2 ]
}
for lift in "ceil 5mbit" "ceil 0"; do
	tap_check "ceil: packets queued behind ceil 120bit before '$lift'" throttled_burst
	tap_check "ceil: tc class change 1:13 $lift" run tc class change dev $DEV classid 1:13 arbtable $lift
	tap_check "ceil: '$lift' drains the throttled class within 5 s" drained $DEV 1: arbtable 5
done
tap_check "ceil: 'ceil 0' removed the ceil" bash -c "! tc class show dev $DEV classid 1:13 | grep -q ' ceil '"
# The first class added holds the lowest index (0): its ceil throttles
# it as any other's does (a "no class" reading of index 0 would let it
# through: make check-mutants' 01)
first_throttled() {
	local qp
	run tc class change dev $DEV classid 1:10 arbtable ceil 120bit cburst 2k ||
		{ diag "1:10 ceil 120bit: $RUN_ERR"; return 1; }
	arb_traffic "10:1500:2" && pg_start && sleep 1 && pg_stop
	sleep 1
	qp=$(cls_stats $DEV arbtable | awk '$1 == "1:10" { print $6 }')
	diag "1:10 (the first class) under ceil 120bit holds ${qp:-?} packets after traffic stopped"
	[ "${qp:-0}" -gt 2 ]
}
tap_check "ceil: the first class added (1:10) is throttled by its ceil 120bit too" first_throttled
tap_check "ceil: 'ceil 0' on 1:10 drains it within 5 s" \
	eval 'run tc class change dev $DEV classid 1:10 arbtable ceil 0 && drained $DEV 1: arbtable 5'
tap_end
