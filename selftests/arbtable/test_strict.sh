#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Strict class: 1:13 `strict ceil 3mbit` (not in the tables) is served
# before both tables up to its ceil: 3 Mbit/s +-3%; the table classes
# share the remaining 7 Mbit/s by weight (+-1%).  burst 30k and cburst
# 15k: see test_ceil.sh.
. "$(dirname "$0")/lib.sh"
pg_test_begin strict "strict class with ceil"

setup() {
	arb_base manual rate 10mbit burst 30k || return 1
	for m in 10 11 12; do arb_class $m || return 1; done
	arb_class 13 strict ceil 3mbit cburst 15k || return 1
	arb_deep 10 || return 1
	arb_change high 10:20,11:30,12:50 || return 1
	arb_traffic "10:64:3 11:700:10 12:1200:10 13:1500:10"
}
if ! setup; then tap_fail "strict: setup"; tap_end; exit; fi
pg_start
measure $DEV arbtable 4 10 "$tmp/m"
diag "$(m_table "$tmp/m" "1:10=20 1:11=30 1:12=50")"
diag "strict 1:13: $(m_rate "$tmp/m" 1:13) bit/s"
tap_measure "strict: all 4 classes backlogged at both reads" m_backlogged "$tmp/m" 1:10 1:11 1:12 1:13
rate_check "strict: class 1:13 (strict ceil 3mbit) measures 3 Mbit/s +-3%" "$(m_rate "$tmp/m" 1:13)" 3000000 0.03 "$tmp/m" 10
tap_measure "strict: table classes share the rest by weight +-1%" m_shares_ok "$tmp/m" "1:10=20 1:11=30 1:12=50" 0.01
pg_stop
arb_after_stop strict
tap_end
