#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Table changes and class deletion under load (DESIGN §8): while 4
# classes are backlogged, reprogram the tables 20 times with different
# layouts, and four times fill class 1:14 (in no table, so it only
# queues) then delete it with its backlog and re-add it.  Afterwards the
# qdisc drains and per-class counters sum to the qdisc's.
. "$(dirname "$0")/lib.sh"
pg_test_begin change "table change and class delete under traffic"

setup() {
	arb_base manual rate 10mbit || return 1
	for m in 10 11 12 13 14; do arb_class $m || return 1; done
	arb_change high 10:10,11:20,12:30,13:40 || return 1
	arb_traffic "10:64:3 11:700:10 12:1200:10 13:1500:10"
}
if ! setup; then tap_fail "change: setup"; tap_end; exit; fi
pg_start
sleep 3
loop_t0=$SECONDS
w=(10 20 30 40)
changes_failed=0
dels_failed=0
for i in $(seq 1 20); do
	a=${w[i % 4]} b=${w[(i + 1) % 4]} c=${w[(i + 2) % 4]} d=${w[(i + 3) % 4]}
	case $((i % 5)) in
	0) args=(high "10:$a,11:$b,12:$c,13:$d" low none) ;;
	1) args=(high "13:$d@3,12:$c@7,11:$b@20,10:$a@63" low "10:1") ;;
	2) args=(high "10:$a,-,11:$b,-,12:$c,-,13:$d,10:$i,11:$i" low none) ;;
	3) args=(high "12:$c@0,10:$a@1" low "11:2,13:2") ;;
	4) args=(high none low "10:$a,11:$b,12:$c,13:$d") ;;
	esac
	arb_change "${args[@]}" || changes_failed=$((changes_failed + 1))
	if [ $((i % 5)) = 0 ]; then
		# fill 1:14, then delete it with packets queued and re-add it
		pg_prio $DEV 3 0x10014
		sleep 0.5
		pg_prio $DEV 3 0x10013
		diag "1:14 before delete: $(cls_stats $DEV arbtable | awk '$1 == "1:14"')"
		if run tc class del dev $DEV classid 1:14; then
			arb_class 14 || dels_failed=$((dels_failed + 1))
		else
			diag "tc class del dev $DEV classid 1:14: rc $RUN_RC: $RUN_ERR"
			dels_failed=$((dels_failed + 1))
		fi
	fi
	sleep 0.1
done
diag "20 changes + 4 delete/re-add took $((SECONDS - loop_t0)) s"
arb_change high 10:10,11:20,12:30,13:40 low none || changes_failed=$((changes_failed + 1))
tap_check "change: 21 table changes under traffic accepted" test "$changes_failed" = 0
tap_check "change: backlogged class 1:14 deleted and re-added 4 times under traffic" test "$dels_failed" = 0
measure $DEV arbtable 1 2 "$tmp/m"
diag "$(m_table "$tmp/m" "1:10=10 1:11=20 1:12=30 1:13=40")"
flowing() { awk '$1 ~ /^1:1[0-3]$/ && $2 <= 0 { print "# " $1 " sent nothing"; bad = 1 } END { exit bad }' "$1"; }
tap_check "change: every table class still sends after the changes" flowing "$tmp/m"
pg_stop
arb_after_stop change
tap_end
