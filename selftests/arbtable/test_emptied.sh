#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Children that empty themselves in their own dequeue (issue 35, defect 3).
# netem with an inner qdisc moves its due packets into the inner one in
# its dequeue and drops those the inner one refuses; when it drops its
# last packets it tells the parent (qlen_notify) and returns nothing. That
# class is empty, not stalled: no `stalls`, and no quantum taken from the
# slot (arbtable settles the class after the child's dequeue, as a pick
# given back).
#
# Manual mode at 10 Mbit/s, deficit accounting, one HIGH table: 1:10 and
# 1:11 with pfifo children kept backlogged by pktgen (weights 40:20);
# 1:12 netem + inner `bfifo limit 1000` fed bursts of 1400-byte datagrams
# (each dropped at netem's dequeue: the class never has a packet to send);
# 1:13 netem + inner `pfifo limit 1` fed bursts of 5 small datagrams (one
# per due batch passes, the rest are dropped in netem's dequeue). No child
# delays anything, so no class is ever stalled. Checked: the pfifo
# classes' byte shares within the deficit test's 1%, the netem children
# did drop in their dequeue, `stalls` 0 for both netem classes and the
# qdisc, and 1:13 sent every packet its netem gave.
. "$(dirname "$0")/lib.sh"
spid=
# shellcheck disable=SC2016 # spid at exit
pg_test_begin emptied "children emptied by their own dequeue" '[ -n "$spid" ] && kill $spid 2>/dev/null'

setup() {
	arb_base manual rate "$(kbit 10)" accounting deficit || return 1
	modprobe sch_netem 2>/dev/null
	for m in 10 11 12 13; do arb_class $m || return 1; done
	run tc qdisc add dev $DEV parent 1:12 handle 12: netem limit 1000 &&
		run tc qdisc add dev $DEV parent 12:1 handle 120: bfifo limit 1000 &&
		run tc qdisc add dev $DEV parent 1:13 handle 13: netem limit 1000 &&
		run tc qdisc add dev $DEV parent 13:1 handle 130: pfifo limit 1 ||
		{ diag "netem with an inner qdisc: $RUN_ERR"; return 1; }
	arb_change high 10:40,11:20,12:20,13:20 || return 1
	ip addr add 192.0.2.1/24 dev $DEV || return 1
	arb_traffic "10:1500:20 11:1500:20"
}
if ! setup; then tap_fail "emptied: setup"; tap_end; exit; fi
tap_ok "emptied: 2 pfifo classes, netem + bfifo and netem + pfifo limit 1 children"

# every 10 ms: 3 datagrams of 1400 bytes into 1:12, 5 of 100 into 1:13
python3 - >"$tmp/sender.log" 2>&1 <<'EOF' &
import socket, time
def sock(m):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_PRIORITY, 0x10000 | m)
    return s
big, small = sock(0x12), sock(0x13)
t = time.monotonic()
while True:
    for n, s, size in ((3, big, 1372), (5, small, 72)):
        for _ in range(n):
            try:
                s.sendto(b"x" * size, ("192.0.2.2", 9))
            except OSError:
                pass
    t += 0.01
    d = t - time.monotonic()
    if d > 0:
        time.sleep(d)
EOF
spid=$!
pg_start

# cls_xstat CLASSID FIELD: a class's xstats field as tc -s prints it
cls_xstat() {
	tc -s class show dev $DEV | awk -v c="$1" -v f="$2" '
		$1 == "class" { on = ($2 == "arbtable" && $3 == c) }
		on { for (i = 1; i < NF; i++) if ($i == f) { print $(i + 1); exit } }'
}
qd_stalls() {
	tc -s qdisc show dev $DEV | awk '
		$1 == "qdisc" { on = ($2 == "arbtable") }
		on { for (i = 1; i < NF; i++) if ($i == "stalls") { print $(i + 1); exit } }'
}
measure $DEV arbtable 4 "$(win 10)" "$tmp/m"
spec="1:10=40 1:11=20"
diag "$(m_table "$tmp/m" "$spec")"
tap_measure "emptied: 1:10 and 1:11 backlogged at both reads" m_backlogged "$tmp/m" 1:10 1:11
# off shares are a skip only where a producer, by pktgen's own counters,
# offered less than its class's part of the rate (2/3 and 1/3 of it: the
# netem classes hardly send): then the guest let that class run dry
d="emptied: pfifo byte shares = weight shares +-1% beside the netem classes"
o10=$(m_offered "$tmp/m" 1:10) o11=$(m_offered "$tmp/m" 1:11)
diag "producers offered: 1:10 ${o10:-?} bit/s, 1:11 ${o11:-?} bit/s (pktgen's counters)"
if m_shares_ok "$tmp/m" "$spec" 0.01; then
	tap_ok "$d"
elif [ -n "$o10" ] && [ -n "$o11" ] && fcmp "$o10 < $(bps 10) * 2 / 3 || $o11 < $(bps 10) / 3"; then
	tap_skip "$d" "the producers offered 1:10 $o10 and 1:11 $o11 bit/s (pktgen's counters), less than their classes' parts of $(bps 10): the guest could not make the load"
else
	tap_fail "$d"
fi
kill $spid 2>/dev/null; spid=
pg_stop
sleep 1
read -r _ _ d12 _ <<<"$(qd_stats $DEV 12:)"
read -r n13b n13p d13 _ <<<"$(qd_stats $DEV 13:)"
c13=$(cls_stats $DEV arbtable | awk '$1 == "1:13" { print $2, $3 }')
s12=$(cls_xstat 1:12 stalls) s13=$(cls_xstat 1:13 stalls) sq=$(qd_stalls)
diag "netem 12: dropped $d12; netem 13: sent ${n13b}B ${n13p}p, dropped $d13; class 1:13 sent $c13"
diag "stalls: class 1:12 $s12, class 1:13 $s13, qdisc $sq"
tap_check "emptied: both netem children dropped packets in their dequeue ($d12, $d13)" \
	eval '[ "${d12:-0}" -gt 0 ] && [ "${d13:-0}" -gt 0 ]'
tap_check "emptied: 1:12 (every packet dropped by its child) has stalls 0 ($s12)" [ "$s12" = 0 ]
tap_check "emptied: 1:13 (netem + pfifo limit 1) has stalls 0 ($s13)" [ "$s13" = 0 ]
tap_check "emptied: the qdisc counts no stall: no child delays ($sq)" [ "$sq" = 0 ]
tap_check "emptied: 1:13 sent every packet its netem gave ($c13 vs ${n13b} ${n13p})" \
	[ "$c13" = "$n13b $n13p" ]
arb_after_stop emptied

# ---------------------------------------------------------------- reset
# A reset (the link going down, a graft) leaves no visit behind: no slot
# keeps its debt, the high limit is whole again (issue 44). 1:10 has weight
# 1 (64 bytes) and highlimit 1 (4096 bytes): one 1000-byte packet leaves
# its slot 936 bytes in debt and the high counter at 3096. The first packet
# after a link down/up must see the same credit and counter as the first
# packet of the qdisc; a debt carried over shows as a different credit.
TR=/sys/kernel/tracing
pg_one() { # send one 1000-byte packet to 1:10 and wait for it
	timeout 10 sh -c "echo start >$PG/pgctrl"
	sleep 0.3
}
tc qdisc del dev $DEV root 2>/dev/null
ok=0
run tc qdisc add dev $DEV root handle 1: arbtable manual rate 100mbit highlimit 1 accounting deficit
ok=$RUN_RC
for m in 10 11; do run tc class add dev $DEV parent 1: classid 1:$m arbtable; ok=$((ok | RUN_RC)); done
run tc qdisc change dev $DEV root handle 1: arbtable high 10:1,11:1
ok=$((ok | RUN_RC))
[ -d $TR/events ] || mount -t tracefs nodev $TR 2>/dev/null
if [ "$ok" = 0 ] && [ -d $TR/events/arbtable/arbtable_dequeue ] && pg_reset &&
	pg_device $DEV 0 0 1000 0x10010 1 02:00:00:00:00:01 &&
	pg_cmd "$PG/$DEV@0" "count 1"; then
	echo 0 >$TR/tracing_on; : >$TR/trace
	echo 1 >$TR/events/arbtable/arbtable_dequeue/enable
	echo 1 >$TR/tracing_on
	pg_one
	ip link set $DEV down; ip link set $DEV up
	pg_one
	echo 0 >$TR/tracing_on
	echo 0 >$TR/events/arbtable/arbtable_dequeue/enable
	deq=$(awk '/arbtable_dequeue: .*class=1:10 / {
		c = $0; sub(/.* credit=/, "", c); sub(/ .*/, "", c)
		h = $0; sub(/.* hp_counter=/, "", h); sub(/ .*/, "", h)
		printf "%s/%s ", c, h }' $TR/trace)
	: >$TR/trace
	pg_stop
	read -r d1 d2 dx <<<"$deq"
	diag "reset: 1:10's dequeues, credit/hp_counter: ${deq:-none}"
	tap_check "emptied: after a link down/up 1:10 starts with no debt, the high limit whole (first ${d1:-none}, after the reset ${d2:-none})" \
		eval '[ -n "$d2" ] && [ -z "$dx" ] && [ "$d1" = "$d2" ]'
else
	tap_fail "emptied: reset: qdisc, classes 1:10 1:11 (weight 1), trace and pktgen set up (${RUN_ERR:-ok})"
fi
tap_end
