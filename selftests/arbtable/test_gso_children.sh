#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The children behind a GSO split (issue 35, defect 1).  Below 1gbit the
# qdisc's mtu is one frame, so the TSO skbs of a TCP flow over a veth are
# split at enqueue.  Since 7.x the qdisc cb also carries the skb's segment
# count (qdisc_pkt_segs()); a segment that kept the whole skb's count made
# a cake child segment it again and drop it (the class sent nothing), and
# every other child and every parent counted one frame as that many
# packets.  Four TCP flows, one per class, into cake, fq_codel, fq and
# pfifo children: each class carries its flow, cake drops next to nothing,
# every class's and child's packets are frames (bytes per packet at most
# one frame, at least a full segment's worth on average), and the root's
# packets are the frames the device sent.  On every kernel.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_net.sh"
DEV=gc0
PEER=gc1
NS=gc-peer
veth_test_begin gso_children "arbtable: cake, fq_codel, fq and pfifo children behind a GSO split"

if ! veth_peer $DEV $PEER $NS 10.91.0; then
	tap_fail "gso_children: veth $DEV to namespace $NS with an iperf3 server"
	tap_end; exit
fi
for p in 5202 5203 5204; do
	ip netns exec $NS iperf3 -s -D -p $p >/dev/null 2>&1
done
sleep 1
kinds="cake fq_codel fq pfifo"
ok=0
run tc qdisc add dev $DEV root handle 1: arbtable manual rate 200mbit
ok=$RUN_RC
i=0
for k in $kinds; do
	c=$((10 + i))
	run tc class add dev $DEV parent 1: classid 1:$c arbtable
	ok=$((ok | RUN_RC))
	case $k in
	cake) run tc qdisc add dev $DEV parent 1:$c handle $c: cake unlimited ;;
	pfifo) run tc qdisc add dev $DEV parent 1:$c handle $c: pfifo limit 1000 ;;
	*) run tc qdisc add dev $DEV parent 1:$c handle $c: "$k" ;;
	esac
	ok=$((ok | RUN_RC))
	[ "$RUN_RC" = 0 ] || diag "$k child: $RUN_ERR"
	run tc filter add dev $DEV parent 1: protocol ip prio 1 flower ip_proto tcp dst_port $((5201 + i)) classid 1:$c
	ok=$((ok | RUN_RC))
	i=$((i + 1))
done
run tc qdisc change dev $DEV root handle 1: arbtable high 10:16,11:16,12:16,13:16
ok=$((ok | RUN_RC))
tap_check "gso_children: rate 200mbit, classes 1:10-1:13 with $kinds children, TCP by port (${RUN_ERR:-ok})" test "$ok" = 0
qmtu=$(tc -d qdisc show dev $DEV | sed -nE 's/.* mtu ([0-9]+) .*/\1/p' | head -n1)
tap_check "gso_children: the qdisc's mtu is one frame (${qmtu:-none}), so TSO skbs are split" \
	eval '[ -n "$qmtu" ] && [ "$qmtu" -le 1518 ]'

read -r tx0 <"/sys/class/net/$DEV/statistics/tx_packets"
read -r root0 < <(qd_stats $DEV 1: | awk '{ print $2 }')
i=0
pids=
for k in $kinds; do
	timeout 20 iperf3 -c 10.91.0.2 -p $((5201 + i)) -t 6 --connect-timeout 5000 -J >"$tmp/$k.json" 2>&1 &
	pids="$pids $!"
	i=$((i + 1))
done
# shellcheck disable=SC2086
wait $pids
sleep 1
read -r tx1 <"/sys/class/net/$DEV/statistics/tx_packets"
read -r root1 < <(qd_stats $DEV 1: | awk '{ print $2 }')
split=$(tc -s qdisc show dev $DEV | sed -nE 's/.* gso: split ([0-9]+).*/\1/p' | head -n1)
diag "root: gso_split ${split:-?}; packets $root0 -> $root1, device tx_packets $tx0 -> $tx1"
tap_check "gso_children: TSO skbs were split (gso_split ${split:-none})" eval '[ "${split:-0}" -gt 0 ]'
# the root's packets are the frames the device sent (a few ACK-less
# control frames of the flows' ends go through it too; nothing else does)
tap_check "gso_children: root packets = frames the device sent ($((root1 - root0)) vs $((tx1 - tx0)))" \
	test "$((root1 - root0))" = "$((tx1 - tx0))"

cls_stats $DEV arbtable >"$tmp/cls"
# goodput per flow (Mbit/s); equal weights, every class backlogged: each
# flow gets a like share of what the four carried
goodput() {
	python3 -c 'import json,sys
try:
    print("%.1f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 1e6))
except Exception:
    print("0")' "$tmp/$1.json"
}
best=0
for k in $kinds; do
	g=$(goodput $k)
	fcmp "$g > $best" && best=$g
done
i=0
for k in $kinds; do
	c=1:$((10 + i))
	h=$((10 + i)):
	i=$((i + 1))
	read -r _ cb cp _ <<<"$(awk -v c=$c '$1 == c' "$tmp/cls")"
	read -r qb qp qd _ <<<"$(qd_stats $DEV $h)"
	gbit=$(goodput $k)
	diag "$k: class $c sent $cb bytes $cp packets; child sent $qb bytes $qp packets, dropped $qd; goodput $gbit Mbit/s"
	tap_check "gso_children: $k: its TCP flow carried (goodput $gbit Mbit/s, at least a quarter of the best flow's $best; class sent $cb bytes)" \
		eval 'fcmp "$gbit >= 0.25 * $best && $gbit > 1" && [ "${cb:-0}" -gt 1000000 ]'
	tap_check "gso_children: $k: class packets are frames ($cp packets of $cb bytes: 500 to ${qmtu:-1514} bytes each)" \
		eval '[ "${cp:-0}" -gt 0 ] && fcmp "$cb / $cp >= 500 && $cb / $cp <= ${qmtu:-1514}"'
	tap_check "gso_children: $k: the child's packets are frames ($qp packets of $qb bytes)" \
		eval '[ "${qp:-0}" -gt 0 ] && fcmp "$qb / $qp >= 500 && $qb / $qp <= ${qmtu:-1514}"'
	if [ "$k" = cake ]; then
		tap_check "gso_children: cake drops next to nothing ($qd of $((qp + qd)) packets)" \
			fcmp "${qd:-0} <= 0.01 * (${qp:-0} + ${qd:-0}) + 2"
	fi
done
tap_end
