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
# classes carrying traffic: both callbacks ran, and took no spin lock;
# the counters still add up after the traffic. In auto mode a HIGH
# class's guaranteed rate and current bound (128-bit divisions) are
# computed by its dump from the allocation as it is, into the dump, with
# no cache a dump would write (issue 44): each class dump calls
# arb_weight_rate() and arb_alloc_current_bound_ns() at most once, and a
# neighbour's admission moves the current bound (read through
# arbtablectl --json).
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
for f in $fns arb_weight_rate arb_alloc_current_bound_ns; do
	grep -q "^$f\b" $TR/available_filter_functions 2>/dev/null || have=
done
if [ -z "$have" ] || ! grep -qw function_graph $TR/available_tracers; then
	tap_fail "dump_lock: function_graph tracer, the callbacks and the guarantee computations traceable"
	tap_end; exit
fi
# graph CMD...: CMD run three times under function_graph rooted at the
# callbacks (interrupts left out), the trace in $tmp/graph
graph() {
	echo 0 >$TR/tracing_on
	echo nop >$TR/current_tracer
	: >$TR/trace
	echo 0 >$TR/options/funcgraph-irqs 2>/dev/null
	echo "$fns" >$TR/set_graph_function
	echo function_graph >$TR/current_tracer
	echo 1 >$TR/tracing_on
	for _ in 1 2 3; do "$@" >/dev/null; done
	echo 0 >$TR/tracing_on
	cat $TR/trace >"$tmp/graph"
	cleanup_tr
	echo 1 >$TR/options/funcgraph-irqs 2>/dev/null
}
# in_cb PATTERN: calls matching PATTERN made by the callbacks themselves
# (one level below them: the lock sch_tree_lock() takes), or at any
# depth with -a; an interrupt's functions nest deeper and are not counted
in_cb() {
	local any=0
	[ "$1" = -a ] && { any=1; shift; }
	awk -v pat="$1" -v any=$any '
	index($0, "|") {
		l = $0; sub(/^[^|]*\|/, "", l); match(l, /^ */); d = RLENGTH; f = substr(l, d + 1)
		if (f ~ /^arbtable_dump_(class_)?stats/) { depth = d; on = 1; next }
		if (on && d <= depth) on = 0
		if (on && (any || d == depth + 2) && f ~ pat) n++
	}
	END { print n + 0 }' "$tmp/graph"
}
graph eval 'tc -s qdisc show dev $DEV; tc -s class show dev $DEV'
nq=$(grep -c 'arbtable_dump_stats' "$tmp/graph")
nc=$(grep -c 'arbtable_dump_class_stats' "$tmp/graph")
# the root lock is a spin_lock_bh (sch_tree_lock()); a preemption inside
# a callback shows the scheduler's own plain spin locks, not counted
nl=$(in_cb '_raw_spin_lock_bh')
diag "manual, 8 classes: traced $nq qdisc dump_stats, $nc class dump_class_stats, $nl spin_lock_bh taken by them"
[ "$nl" = 0 ] || diag "$(grep -B2 -A1 'spin_lock_bh' "$tmp/graph" | head -n 12)"
tap_check "dump_lock: the callbacks ran under the tracer (qdisc $nq >= 3, classes $nc >= 24)" \
	eval '[ "$nq" -ge 3 ] && [ "$nc" -ge 24 ]'
tap_check "dump_lock: no root lock (spin_lock_bh) taken by dump_stats or dump_class_stats ($nl)" [ "$nl" = 0 ]
pg_stop
arb_after_stop dump_lock

# auto mode: a HIGH class's guaranteed rate and current bound (128-bit
# divisions) are computed by each of its dumps, once, and follow the
# changes: a neighbour admitted moves 1:10's current bound
CTL=$ARBT_ROOT/build/tools/arbtablectl
cur_bound() { # MINOR: class 1:MINOR's current_bound (ns), arbtablectl --json
	"$CTL" --json show $DEV | python3 -c '
import json, sys
def find(o):
    if isinstance(o, dict):
        if "current_bound" in o:
            return o["current_bound"]
        for v in o.values():
            r = find(v)
            if r is not None:
                return r
    return None
for c in json.load(sys.stdin).get("classes", []):
    if str(c.get("handle", "")).endswith(":" + sys.argv[1]):
        r = find(c)
        print("" if r is None else r)
        break' "$1" 2>/dev/null
}
tc qdisc del dev $DEV root 2>/dev/null
auto_ok=1
run tc qdisc add dev $DEV root handle 1: arbtable auto rate "$(kbit 10)" || auto_ok=
for m in 10 11; do
	run tc class add dev $DEV parent 1: classid 1:$m arbtable rate "$(kbit 1)" distance 8 || auto_ok=
done
if [ -z "$auto_ok" ]; then
	tap_fail "dump_lock: auto qdisc with 1:10 and 1:11 in HIGH ($RUN_ERR)"
else
	b1=$(cur_bound 10)
	graph tc -s class show dev $DEV
	nm=$(in_cb -a 'arb_weight_rate|arb_alloc_current_bound_ns')
	nc=$(grep -c 'arbtable_dump_class_stats' "$tmp/graph")
	diag "auto, 2 HIGH classes, the dumps after a first: $nc class dumps, $nm calls computing a guarantee in them"
	tap_check "dump_lock: a class dump computes its guarantees once, no cache: $nm calls of arb_weight_rate/arb_alloc_current_bound_ns in $nc dumps" \
		eval '[ "$nc" -ge 6 ] && [ "$nm" -le $((2 * nc)) ]'
	run tc class add dev $DEV parent 1: classid 1:12 arbtable rate "$(kbit 2)" distance 2
	b2=$(cur_bound 10)
	diag "1:10's current bound: $b1 ns, after 1:12 (distance 2) was admitted $b2 ns (${RUN_ERR:-admitted})"
	tap_check "dump_lock: 1:10's current bound follows a neighbour's admission ($b1 -> $b2 ns)" \
		eval '[ "$RUN_RC" = 0 ] && [ -n "$b1" ] && [ -n "$b2" ] && [ "$b2" -gt "$b1" ]'
fi

tap_end
