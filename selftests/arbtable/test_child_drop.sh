#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A child that drops inside its own dequeue (fq_codel with a tiny target:
# codel drops until the flow's queue is empty and hands back the last
# packet) tells arbtable the class went empty (qlen_notify) while that
# packet is on its way out, which closes the slot's visit before the
# packet is charged.  DESIGN §3: the packet is still charged, to its slot
# and to the highlimit counter.  With highlimit 0 and the LOW class always
# backlogged the IBA rule is one HIGH packet, then one LOW packet: a HIGH
# packet that escaped the counter shows up in the trace as two HIGH
# dequeues in a row while LOW held packets.
. "$(dirname "$0")/lib.sh"
tap_begin "arbtable: packets a child hands out after dropping the rest are charged"
DEV=cd0
tmp=$(mktemp -d)
TR=/sys/kernel/tracing
cleanup() {
	pg_stop
	if [ -d $TR/events/arbtable ]; then
		echo 0 >$TR/events/arbtable/arbtable_dequeue/enable
		echo 0 >$TR/events/arbtable/arbtable_enqueue/enable
		echo 0 >$TR/tracing_on
		: >$TR/trace
	fi
	dev_del $DEV
	rm -rf "$tmp"
}
trap cleanup EXIT

if ! have_arbtable; then
	tap_fail "child_drop: sch_arbtable module and tc plugin present"
	tap_end; exit
fi

ok=0
arb_base manual rate 10mbit burst 30k highlimit 0 || ok=1
for m in 10 11 30; do arb_class $m || ok=1; done
# 1:10's fq_codel drops whatever waited longer than 1 us, spaced 10 us
# apart: under emulation a dequeue comes every ~100 us or more, so one
# dequeue drops the flow's backlog down to the packet it returns
run tc qdisc add dev $DEV parent 1:10 handle 10: fq_codel target 1us interval 10us limit 1000
ok=$((ok | RUN_RC))
arb_change high 10:20,11:20 low 30:20 || ok=1
tap_check "child_drop: highlimit 0, HIGH 1:10 (fq_codel child) and 1:11, LOW 1:30 (${RUN_ERR:-ok})" test $ok = 0

[ -d $TR/events ] || mount -t tracefs nodev $TR 2>/dev/null
tr=0
if [ -d $TR/events/arbtable/arbtable_enqueue ]; then
	echo 0 >$TR/tracing_on && echo 8192 >$TR/buffer_size_kb && : >$TR/trace &&
		echo 1 >$TR/events/arbtable/arbtable_enqueue/enable &&
		echo 1 >$TR/events/arbtable/arbtable_dequeue/enable && tr=1
fi
# 1:10 bursty and small (its queue often empties by drops), 1:11 and
# 1:30 always backlogged
arb_traffic "10:200:2 11:1000:8 30:1000:8" && pg_start
tap_check "child_drop: trace and producers started" test $tr = 1
sleep 2
echo 1 >$TR/tracing_on
sleep 8
echo 0 >$TR/tracing_on
pg_stop
cp $TR/trace "$tmp/trace"
drops=$(tc -s qdisc show dev $DEV | awk '/qdisc fq_codel 10:/ { on = 1 } on && /Sent/ { d = $7; sub(/,/, "", d); print d; exit }')
# consecutive dequeues, with LOW's queue (1:30) followed exactly from
# the enqueue and dequeue events
read -r pairs hh empties lost < <(awk '
	/^# entries-in-buffer\/entries-written:/ { split($3, e, "/"); lost = e[2] - e[1]; next }
	/arbtable_enqueue:/ { c = $0; sub(/.* class=/, "", c); sub(/ .*/, "", c)
		if (c == "1:30") q30++; next }
	/arbtable_dequeue:/ {
		c = $0; sub(/.* class=/, "", c); sub(/ .*/, "", c)
		t = $0; sub(/.* table=/, "", t); sub(/ .*/, "", t)
		if (t == "high" && prev == "high" && q30 > 0 && seen) hh++
		if (c == "1:10" && t == "high") { n10++ }
		if (prev != "") pairs++
		if (c == "1:30") { q30--; if (q30 < 0) q30 = 0 }
		prev = t; seen = 1
	}
	END { printf "%d %d %d %d\n", pairs, hh, n10, lost }' "$tmp/trace")
diag "trace: $pairs consecutive dequeues, 1:10 sent $empties from HIGH; fq_codel 10: dropped ${drops:-?}; events lost ${lost:-?}"
tap_check "child_drop: fq_codel dropped inside its dequeue (${drops:-?} drops) while 1:10 was served" \
	fcmp "${drops:-0} > 0 && ${empties:-0} > 0"
tap_check "child_drop: trace complete (${pairs:-0} dequeue pairs, ${lost:-?} events lost)" \
	fcmp "${pairs:-0} > 500 && ${lost:-1} == 0"
tap_check "child_drop: highlimit 0 held: never two HIGH packets in a row while LOW had packets (${hh:-?} times)" \
	test "${hh:-1}" = 0
tap_check "child_drop: qdisc drains, classes sum to the qdisc" \
	eval 'drained $DEV 1: arbtable 30 && sums_match $DEV 1: arbtable'
tap_end
