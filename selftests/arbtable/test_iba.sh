#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# IBA-literal accounting (overshoot forgiven): a weight-2 class (128 B per
# visit) with 1500-byte packets sends a whole packet every visit, so it
# gets far more than its 2/92 weight share.  The same table under deficit
# accounting is test_deficit's subject; here we show the deviation.
. "$(dirname "$0")/lib.sh"
pg_test_begin iba "iba accounting deviates for large packets on small weights"

setup() {
	arb_base manual rate 10mbit accounting iba || return 1
	for m in 10 11 12 13; do arb_class $m || return 1; done
	arb_deep 10 || return 1
	arb_change high 10:20,11:30,12:40,13:2 || return 1
	arb_traffic "10:64:4 11:700:10 12:1200:10 13:1500:10"
}
if ! setup; then tap_fail "iba: setup"; tap_end; exit; fi
pg_start
measure $DEV arbtable 4 10 "$tmp/m"
spec="1:10=20 1:11=30 1:12=40 1:13=2"
diag "$(m_table "$tmp/m" "$spec")"
diag "IBA-literal model predicts per round 1280/2100/3600/1500 B: class 1:13 share 17.7%"
tap_measure "iba: all 4 classes backlogged at both reads" m_backlogged "$tmp/m" 1:10 1:11 1:12 1:13
deviates() {
	awk -v tol=0.10 '$1 !~ /:/ { next } { d[$1] = $2; D += $2 }
	END { want = 2 / 92; got = D ? d["1:13"] / D : 0; err = (got - want) / want
		printf "# class 1:13 (weight 2, 1500 B): share %.4f, weight share %.4f, rel deviation %.1f%%\n", got, want, 100 * err
		exit !(err > tol) }' "$1"
}
tap_measure "iba: weight-2 class with 1500-byte packets exceeds its weight share by >10% relative" deviates "$tmp/m"
pg_stop
arb_after_stop iba
tap_end
