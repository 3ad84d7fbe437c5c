#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Self-test of the measurement harness with an in-tree scheduler: ETS
# (quanta 10:20:30:40 x 64 B) under a 10 Mbit/s HTB class on a dummy
# device, one pktgen thread per band (64/700/1200/1500-byte packets).
# Proves the share and rate measurement the arbtable tests rely on.
. "$(dirname "$0")/lib.sh"
tap_begin "harness dry run with HTB 10mbit + ETS"
tmp=$(mktemp -d)
trap 'pg_stop; dev_del $DEV; rm -rf $tmp' EXIT

setup() {
	modprobe sch_htb && modprobe sch_ets && dummy_up $DEV &&
	tc qdisc add dev $DEV root handle 1: htb default 1 &&
	tc class add dev $DEV parent 1: classid 1:1 htb rate ${ARBT_RATE:-10}mbit ceil ${ARBT_RATE:-10}mbit burst 30k cburst 30k &&
	tc qdisc add dev $DEV parent 1:1 handle 2: ets bands 4 quanta 640 1280 1920 2560 &&
	pg_reset &&
	pg_add $DEV 0 64 0x20001 3 && pg_add $DEV 1 700 0x20002 10 &&
	pg_add $DEV 2 1200 0x20003 10 && pg_add $DEV 3 1500 0x20004 10
}
if ! setup; then
	tap_fail "harness: ETS setup"
	tap_end; exit
fi
pg_start
measure $DEV ets 4 10 "$tmp/m"
spec="2:1=10 2:2=20 2:3=30 2:4=40"
diag "$(m_table "$tmp/m" "$spec")"
tap_measure "harness: all ETS bands backlogged in the window" m_backlogged "$tmp/m" 2:1 2:2 2:3 2:4
tap_measure "harness: ETS byte shares = quanta shares +-1%" m_shares_ok "$tmp/m" "$spec" 0.01
total=$(awk '$1 ~ /:/ { s += $3 } END { print s }' "$tmp/m")
rate_check "harness: HTB total rate 10 Mbit/s +-3% (wall-clock rate measurement)" "$total" $((${ARBT_RATE:-10} * 1000000)) 0.03 "$tmp/m" 10
pg_stop
tap_check "harness: drained after traffic stops" drained $DEV 2: ets 10
tap_check "harness: ETS class stats sum to the qdisc's" sums_match $DEV 2: ets
tap_end
