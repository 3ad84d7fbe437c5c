#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A child that drops inside its own dequeue tells arbtable the class went
# empty (qlen_notify, through qdisc_tree_reduce_backlog) while the packet
# it returns is on its way out; arbtable settles the class after the
# packet is charged.  DESIGN §3: the packet is charged, to its slot and to
# the highlimit counter.  codel never drops below one MTU of
# backlog, so it empties its queue that way only when the packet behind
# the dropped ones is larger than an MTU: a GSO skb, kept whole here by
# mtu 65000, from a TCP flow into an fq_codel child with a 1 us target.
# With highlimit 0 and the LOW class always backlogged the IBA rule is one
# HIGH packet, then one LOW packet: a HIGH packet that escaped the counter
# shows up in the trace as two HIGH dequeues in a row while LOW held
# packets.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_auto.sh"
. "$(dirname "$0")/lib_net.sh"
DEV=cd0
PEER=cd1
NS=cd-peer
TR=/sys/kernel/tracing
cleanup() {
	pg_stop
	if [ -d $TR/events/arbtable ]; then
		echo 0 >$TR/events/arbtable/arbtable_dequeue/enable
		echo 0 >$TR/events/arbtable/arbtable_enqueue/enable
		echo 0 >$TR/tracing_on
		: >$TR/trace
	fi
}
veth_test_begin child_drop "arbtable: packets a child hands out after dropping the rest are charged" cleanup

# no ARP (veth_peer's neighbours are permanent): only the test's own
# packets pass the qdisc
if ! veth_peer $DEV $PEER $NS 10.89.0; then
	tap_fail "child_drop: veth $DEV to namespace $NS with an iperf3 server"
	tap_end; exit
fi

ok=0
run tc qdisc add dev $DEV root handle 1: arbtable manual rate 10mbit burst 200k highlimit 0 mtu 65000
ok=$RUN_RC
for m in 10 11 30; do run tc class add dev $DEV parent 1: classid 1:$m arbtable; ok=$((ok | RUN_RC)); done
# fq_codel drops whatever waited longer than 1 us, 10 us apart: under
# emulation a dequeue comes every ~100 us or more
run tc qdisc add dev $DEV parent 1:10 handle 10: fq_codel target 1us interval 10us limit 1000
ok=$((ok | RUN_RC))
run tc filter add dev $DEV parent 1: protocol ip prio 1 flower ip_proto tcp dst_port 5201 classid 1:10
ok=$((ok | RUN_RC))
run tc qdisc change dev $DEV root handle 1: arbtable high 10:20,11:20 low 30:20
tap_check "child_drop: highlimit 0, HIGH 1:10 (TCP into fq_codel) and 1:11, LOW 1:30, mtu 65000 (${RUN_ERR:-ok})" test $((ok | RUN_RC)) = 0
[ -d $TR/events ] || mount -t tracefs nodev $TR 2>/dev/null
tr=0
if [ -d $TR/events/arbtable/arbtable_enqueue ]; then
	# one clock for all CPUs: the enqueues (one CPU) and dequeues
	# (another) must merge in the order they happened under the lock
	echo 0 >$TR/tracing_on && echo mono >$TR/trace_clock &&
		echo 8192 >$TR/buffer_size_kb && : >$TR/trace &&
		echo 1 >$TR/events/arbtable/arbtable_enqueue/enable &&
		echo 1 >$TR/events/arbtable/arbtable_dequeue/enable && tr=1
fi
# 1:11 and 1:30 always backlogged (pktgen), 1:10 one TCP flow
arb_traffic "11:1000:8 30:1000:8" && pg_start
tap_check "child_drop: trace and producers started" test $tr = 1
timeout 30 iperf3 -c 10.89.0.2 -p 5201 -t 12 --connect-timeout 5000 >"$tmp/iperf" 2>&1 &
ipf=$!
sleep 2
echo 1 >$TR/tracing_on
sleep 8
echo 0 >$TR/tracing_on
wait $ipf
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
big=$(awk '/arbtable_dequeue: .*class=1:10 / { l = $0; sub(/.* len=/, "", l); if (l + 0 > 1514) n++ } END { print n + 0 }' "$tmp/trace")
diag "1:10 dequeued $big GSO skbs longer than 1514 B; TCP: $(grep -E 'sender|receiver' "$tmp/iperf" | tail -n1)"
tap_check "child_drop: fq_codel dropped inside its dequeue (${drops:-?} drops) while 1:10 sent GSO skbs ($big)" \
	fcmp "${drops:-0} > 0 && ${empties:-0} > 0 && $big > 0"
# every packet 1:10 sent was charged to its slot: a visit starts with
# the quantum (weight 20: 1280 B) plus a balance never above 0, so the
# slot's credit after a packet is at most 1280 - its length. A packet the
# slot was not charged for (its visit closed by the child's qlen_notify
# before the charge) leaves 0, above that for any GSO skb.
read -r free10 n10 < <(awk '/arbtable_dequeue: .*class=1:10 table=high/ {
		c = $0; sub(/.* credit=/, "", c); sub(/ .*/, "", c)
		l = $0; sub(/.* len=/, "", l); sub(/ .*/, "", l)
		n++; if (c + 0 > 1280 - l) f++ }
	END { print f + 0, n + 0 }' "$tmp/trace")
tap_check "child_drop: each of 1:10's $n10 HIGH packets was charged to its slot (credit after <= 1280 - len; $free10 not)" \
	fcmp "${n10:-0} > 0 && ${free10:-1} == 0"
# tc -s class shows the class's drops, its child's AQM drops among them
# (issue 35, defect 8: they showed only arbtable's own refusals)
cdrops=$(cls_stats $DEV arbtable | awk '$1 == "1:10" { print $4 }')
drops_now=$(tc -s qdisc show dev $DEV | awk '/qdisc fq_codel 10:/ { on = 1 } on && /Sent/ { d = $7; sub(/,/, "", d); print d; exit }')
tap_check "child_drop: tc -s class shows 1:10's drops as its fq_codel child counts them (class ${cdrops:-?}, child ${drops_now:-?})" \
	eval '[ "${drops_now:-0}" -gt 0 ] && [ "$cdrops" = "$drops_now" ]'
tap_check "child_drop: trace complete (${pairs:-0} dequeue pairs, ${lost:-?} events lost)" \
	fcmp "${pairs:-0} > 500 && ${lost:-1} == 0"
tap_check "child_drop: highlimit 0 held: never two HIGH packets in a row while LOW had packets (${hh:-?} times)" \
	test "${hh:-1}" = 0
tap_check "child_drop: qdisc drains, classes sum to the qdisc" \
	eval 'drained $DEV 1: arbtable 30 && sums_ok'
tap_end
