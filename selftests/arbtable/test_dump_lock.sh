#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Statistics dumps take no root lock (issue 35, defect 8): the kernel
# calls the qdisc's dump_stats and the classes' dump_class_stats with
# RTNL held and without the qdisc's lock (gnet_stats_start_copy_compat()
# is given none), the configuration they report changes only under RTNL,
# and the datapath's counters are written with WRITE_ONCE. A dump that
# took the root lock stalled every dequeue on the device for as long as
# it ran, once per class. Checked with the function_graph tracer rooted
# at both callbacks, over `tc -s qdisc/class show` of a qdisc with 8
# classes carrying traffic: both callbacks ran, and no spin lock was
# taken inside them; the counters read agree with the traffic.
. "$(dirname "$0")/lib.sh"
TR=/sys/kernel/tracing
cleanup_tr() {
	[ -w $TR/current_tracer ] || return
	echo 0 >$TR/tracing_on
	echo nop >$TR/current_tracer
	: >$TR/set_graph_function
	: >$TR/trace
}
# shellcheck disable=SC2016 # at exit
pg_test_begin dump_lock "statistics dumps without the root lock" 'cleanup_tr'

setup() {
	local m high=
	arb_base manual rate "$(kbit 10)" || return 1
	for m in 10 11 12 13 14 15 16 17; do
		arb_class $m || return 1
		high="$high${high:+,}$m:10"
	done
	arb_change high "$high" || return 1
	arb_traffic "10:1500:5 11:1500:5 12:800:5 13:300:5"
}
if ! setup; then tap_fail "dump_lock: setup"; tap_end; exit; fi
tap_ok "dump_lock: 8 classes, 4 of them fed by pktgen"
pg_start
sleep "$(win 2)"

fns="arbtable_dump_stats arbtable_dump_class_stats"
have=1
for f in $fns; do
	grep -q "^$f\b" $TR/available_filter_functions 2>/dev/null || have=
done
if [ -z "$have" ] || ! grep -qw function_graph $TR/available_tracers; then
	tap_fail "dump_lock: function_graph tracer and both callbacks traceable"
	tap_end; exit
fi
echo 0 >$TR/tracing_on
echo nop >$TR/current_tracer
: >$TR/trace
echo "$fns" >$TR/set_graph_function
echo function_graph >$TR/current_tracer
echo 1 >$TR/tracing_on
for _ in 1 2 3; do
	tc -s qdisc show dev $DEV >/dev/null
	tc -s class show dev $DEV >/dev/null
done
echo 0 >$TR/tracing_on
cat $TR/trace >"$tmp/graph"
cleanup_tr
nq=$(grep -c 'arbtable_dump_stats' "$tmp/graph")
nc=$(grep -c 'arbtable_dump_class_stats' "$tmp/graph")
nl=$(grep -c '_raw_spin_lock\|queued_spin_lock' "$tmp/graph")
diag "traced: $nq qdisc dump_stats, $nc class dump_class_stats, $nl spin lock calls inside them"
[ "$nl" = 0 ] || diag "$(grep -B3 '_raw_spin_lock\|queued_spin_lock' "$tmp/graph" | head -n 20)"
tap_check "dump_lock: the callbacks ran under the tracer (qdisc $nq >= 3, classes $nc >= 24)" \
	eval '[ "$nq" -ge 3 ] && [ "$nc" -ge 24 ]'
tap_check "dump_lock: no spin lock taken in dump_stats or dump_class_stats ($nl)" [ "$nl" = 0 ]

pg_stop
arb_after_stop dump_lock
tap_end
