#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Deficit accounting under load: 4 backlogged classes with 64/700/1200/
# 1500-byte packets and HIGH weights 20:30:40:10 (64-byte units; the
# 1500-byte class's 640-byte weight is smaller than its packet, so debt
# carry is exercised).  Byte shares over 10 s must equal weight shares
# within 1% relative.  qdisc rate 10mbit is the bottleneck (all rates
# divided by ARBT_RATE_DIV on a slow kernel, lib.sh).
. "$(dirname "$0")/lib.sh"
pg_test_begin deficit "deficit mode byte shares"

setup() {
	arb_base manual rate "$(kbit 10)" accounting deficit || return 1
	for m in 10 11 12 13; do arb_class $m || return 1; done
	arb_deep 10 || return 1
	arb_change high 10:20,11:30,12:40,13:10 || return 1
	arb_traffic "10:64:4 11:700:10 12:1200:10 13:1500:10"
}
if ! setup; then tap_fail "deficit: setup"; tap_end; exit; fi
pg_start
measure $DEV arbtable 4 "$(win 10)" "$tmp/m"
spec="1:10=20 1:11=30 1:12=40 1:13=10"
diag "$(m_table "$tmp/m" "$spec")"
tap_measure "deficit: all 4 classes backlogged at both reads" m_backlogged "$tmp/m" 1:10 1:11 1:12 1:13
tap_measure "deficit: byte shares = weight shares +-1% relative (64/700/1200/1500 B)" m_shares_ok "$tmp/m" "$spec" 0.01
pg_stop
arb_after_stop deficit
tap_end
