#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Packet size (DESIGN §3): no packet longer than the qdisc mtu leaves the
# arbiter.  TCP over a veth with TSO hands the qdisc GSO super-packets:
# they are split into segments at enqueue, every segment accounted (the
# qdisc's bytes equal the device's, classes sum to the qdisc), and the
# arbtable_dequeue trace never shows a length above the mtu.  An mtu of
# 70000 keeps TCP's 64 KiB GSO skbs whole; a frame longer than the mtu that is not GSO is
# dropped and counted; the root's size table (stab) is what classes are
# charged.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_net.sh"
DEV=gv0
PEER=gv1
NS=gso-peer
TR=/sys/kernel/tracing
cleanup() {
	[ -d $TR/events/arbtable ] && echo 0 >$TR/events/arbtable/arbtable_dequeue/enable
}
veth_test_begin gso "arbtable GSO segmentation, oversize frames, size tables" cleanup
if ! command -v iperf3 >/dev/null; then
	tap_fail "gso: iperf3 installed (scripts/setup.sh)"
	tap_end; exit
fi

if ! veth_peer $DEV $PEER $NS 10.88.0; then
	tap_fail "gso: veth $DEV to namespace $NS with an iperf3 server"
	tap_end; exit
fi

[ -d $TR/events ] || mount -t tracefs nodev $TR 2>/dev/null
trace_on() {
	[ -d $TR/events/arbtable/arbtable_dequeue ] || return 1
	echo 0 >$TR/tracing_on && echo 4096 >$TR/buffer_size_kb && : >$TR/trace &&
		echo 1 >$TR/events/arbtable/arbtable_dequeue/enable && echo 1 >$TR/tracing_on
}
trace_off() { # file: the dequeue lengths, one per line
	echo 0 >$TR/tracing_on
	sed -nE 's/.*arbtable_dequeue: .* len=([0-9]+).*/\1/p' $TR/trace >"$1"
	grep -o 'entries-in-buffer/entries-written: [0-9]*/[0-9]*' $TR/trace >"$1.lost"
	echo 0 >$TR/events/arbtable/arbtable_dequeue/enable
	: >$TR/trace
}
# xst FIELD: a number from the qdisc xstats ("gso: split N segments N oversize_drops N")
xst() { tc -s qdisc show dev $DEV | sed -nE "s/.* $1 ([0-9]+).*/\1/p" | head -n1; }
tx_bytes() { cat /sys/class/net/$DEV/statistics/tx_bytes; }
tcp_run() { # seconds: one TCP flow through the qdisc
	iperf3 -c 10.88.0.2 -p 5201 -t "$1" -J >"$tmp/iperf.json" 2>&1
}

# ------------------------------------------------- GSO split at enqueue
run tc qdisc add dev $DEV root handle 1: arbtable rate 20mbit burst 30k default 20
ok=$RUN_RC
run tc class add dev $DEV parent 1: classid 1:10 arbtable rate 8mbit latency 20ms
ok=$((ok | RUN_RC))
run tc class add dev $DEV parent 1: classid 1:20 arbtable share 10
ok=$((ok | RUN_RC))
run tc filter add dev $DEV parent 1: protocol ip prio 1 flower ip_proto tcp dst_port 5201 classid 1:10
ok=$((ok | RUN_RC))
tap_check "gso: auto qdisc at 20mbit, TCP class 1:10, default 1:20 (${RUN_ERR:-ok})" test $ok = 0
MTU=$(tc -d qdisc show dev $DEV | sed -nE 's/.* mtu ([0-9]+) .*/\1/p')
diag "qdisc mtu $MTU (device mtu $(cat /sys/class/net/$DEV/mtu)); TSO: $(ethtool -k $DEV 2>/dev/null | awk '/tcp-segmentation-offload/ { print $2 }')"
tap_check "gso: default mtu is the device's frame (1514)" test "$MTU" = 1514

b0=$(tx_bytes)
tr=0
trace_on && tr=1
tcp_run 4
[ $tr = 1 ] && trace_off "$tmp/len"
drained $DEV 1: arbtable 10 || diag "qdisc did not drain"
b1=$(tx_bytes)
split=$(xst split)
segs=$(xst segments)
diag "TCP: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.2f Mbit/s" % (d["end"]["sum_received"]["bits_per_second"] / 1e6))' "$tmp/iperf.json" 2>/dev/null || head -c 200 "$tmp/iperf.json")"
diag "GSO skbs split $split into $segs segments"
tap_check "gso: TCP over TSO reached the qdisc as GSO skbs, split at enqueue (split $split, segments $segs)" \
	fcmp "${split:-0} > 0 && ${segs:-0} >= 2 * ${split:-0}"
if [ $tr = 1 ]; then
	n=$(wc -l <"$tmp/len")
	max=$(sort -n "$tmp/len" | tail -n1)
	diag "trace: $n dequeues, longest $max bytes, $(cat "$tmp/len.lost")"
	tap_check "gso: no dequeued packet longer than the mtu ($n traced, longest ${max:-none} <= $MTU)" \
		fcmp "$n > 100 && ${max:-999999} <= $MTU"
	tap_check "gso: trace complete (no event lost)" \
		awk '{ split($2, n, "/"); exit !(n[1] == n[2] && n[1] > 0) }' "$tmp/len.lost"
else
	tap_fail "gso: arbtable_dequeue tracepoint available"
fi
read -r qb qp _ _ _ <<<"$(qd_stats $DEV 1:)"
diag "qdisc sent $qb bytes $qp pkts; device sent $((b1 - b0)) bytes in the window"
tap_check "gso: classes sum to the qdisc (bytes, packets, backlog)" sums_match $DEV 1: arbtable
tap_check "gso: the qdisc's bytes are the device's (every segment counted at its length)" \
	test "$qb" = "$((b1 - b0))"

# ------------------------------------------- an mtu above TCP's 64 KiB GSO skbs keeps them whole
tc qdisc del dev $DEV root
# 64 KiB of payload in up to 45 segments: qdisc_pkt_len counts each
# segment's headers, up to ~68.5 KB; 70000 covers it
run tc qdisc add dev $DEV root handle 1: arbtable manual rate 20mbit burst 200k mtu 70000
ok=$RUN_RC
run tc class add dev $DEV parent 1: classid 1:10 arbtable
ok=$((ok | RUN_RC))
run tc qdisc change dev $DEV root handle 1: arbtable high 10:255
ok=$((ok | RUN_RC))
run tc filter add dev $DEV parent 1: protocol ip prio 1 flower ip_proto tcp dst_port 5201 classid 1:10
tap_check "gso: manual qdisc with mtu 70000 (${RUN_ERR:-ok})" test $((ok | RUN_RC)) = 0
tr=0
trace_on && tr=1
tcp_run 3
[ $tr = 1 ] && trace_off "$tmp/len2"
drained $DEV 1: arbtable 10 || diag "qdisc did not drain"
max=$(sort -n "$tmp/len2" 2>/dev/null | tail -n1)
diag "mtu 70000: longest dequeue ${max:-none} bytes, split $(xst split)"
tap_check "gso: mtu 70000 keeps GSO whole (split $(xst split), longest dequeue ${max:-none} > 1514)" \
	fcmp "$(xst split) == 0 && ${max:-0} > 1514"
tap_check "gso: mtu 70000: classes sum to the qdisc" sums_match $DEV 1: arbtable

# -------------------------------- frames above the mtu are dropped, counted
# UDP through skb->priority (1:10 names the class), sized by the sender
udp_send() { # count payload
	python3 - "$1" "$2" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_PRIORITY, 0x10010)
for _ in range(int(sys.argv[1])):
    try:
        s.sendto(b"x" * int(sys.argv[2]), ("10.88.0.2", 9))
    except OSError:
        pass    # a drop may be reported (ENOBUFS); the qdisc counts it
EOF
}
tc qdisc del dev $DEV root
run tc qdisc add dev $DEV root handle 1: arbtable manual mtu 1000
ok=$RUN_RC
run tc class add dev $DEV parent 1: classid 1:10 arbtable
ok=$((ok | RUN_RC))
run tc qdisc change dev $DEV root handle 1: arbtable high 10:10
tap_check "gso: manual qdisc with mtu 1000 below the device's 1514 (${RUN_ERR:-ok})" test $((ok | RUN_RC)) = 0
udp_send 20 1200	# 1242-byte frames
udp_send 30 500		# 542-byte frames
drained $DEV 1: arbtable 10
read -r _ cb cp _ _ _ <<<"$(cls_stats $DEV arbtable | awk '$1 == "1:10"')"
read -r _ _ qd _ _ <<<"$(qd_stats $DEV 1:)"
diag "class 1:10 sent $cb bytes $cp pkts; qdisc dropped $qd; oversize_drops $(xst oversize_drops)"
tap_check "gso: 20 frames of 1242 bytes above mtu 1000 dropped and counted (oversize_drops $(xst oversize_drops), drops $qd)" \
	test "$(xst oversize_drops)" = 20 -a "$qd" = 20
tap_check "gso: 30 frames of 542 bytes sent (class 1:10: $cp pkts, $cb bytes)" \
	test "$cp" = 30 -a "$cb" = $((30 * 542))

# ---------------------------- the root's size table is what classes pay
tc qdisc del dev $DEV root
run tc qdisc add dev $DEV root handle 1: stab overhead 24 arbtable manual
ok=$RUN_RC
run tc class add dev $DEV parent 1: classid 1:10 arbtable
ok=$((ok | RUN_RC))
# a change without stab would remove it (qdisc_change replaces the table)
run tc qdisc change dev $DEV root handle 1: stab overhead 24 arbtable high 10:10
tap_check "gso: qdisc with a size table (stab overhead 24) (${RUN_ERR:-ok})" test $((ok | RUN_RC)) = 0
udp_send 40 700		# 742-byte frames
drained $DEV 1: arbtable 10
read -r _ cb cp _ _ _ <<<"$(cls_stats $DEV arbtable | awk '$1 == "1:10"')"
tap_check "gso: stab overhead charged: 40 frames of 742 bytes cost $((40 * 766)) (class 1:10: $cp pkts, $cb bytes)" \
	test "$cp" = 40 -a "$cb" = $((40 * 766))
tap_check "gso: stab: classes sum to the qdisc" sums_match $DEV 1: arbtable
tc qdisc del dev $DEV root

# ------------------------------------------------ a child's size table
# The kernel refuses a size table on a qdisc below a class ("STAB not
# supported on a non root", qdisc_graft in net/sched/sch_api.c, 6.1 and
# 6.12 alike): only the root's table sizes packets, and qdisc_enqueue()
# never recomputes the length. The refusal must leave the class and its
# default child working, charged the root's (here: no) table.
run tc qdisc add dev $DEV root handle 1: arbtable manual
ok=$RUN_RC
run tc class add dev $DEV parent 1: classid 1:10 arbtable
ok=$((ok | RUN_RC))
run tc qdisc change dev $DEV root handle 1: arbtable high 10:10
ok=$((ok | RUN_RC))
tap_check "gso: manual qdisc, class 1:10 (${RUN_ERR:-ok})" test $ok = 0
run tc qdisc replace dev $DEV parent 1:10 handle 10: stab overhead 24 pfifo
diag "child with stab: rc $RUN_RC: $RUN_ERR"
tap_check "gso: a child with its own size table is refused by the kernel (${RUN_ERR:-accepted})" \
	test $RUN_RC != 0
udp_send 40 700		# 742-byte frames
tap_check "gso: after the refusal the qdisc drains to backlog 0" drained $DEV 1: arbtable 10
read -r _ cb cp _ _ _ <<<"$(cls_stats $DEV arbtable | awk '$1 == "1:10"')"
tap_check "gso: after the refusal 40 frames of 742 bytes cost $((40 * 742)) (class 1:10: $cp pkts, $cb bytes)" \
	test "$cp" = 40 -a "$cb" = $((40 * 742))
tap_check "gso: after the refusal classes sum to the qdisc" sums_match $DEV 1: arbtable
tc qdisc del dev $DEV root

tap_check "gso: no kernel warning or splat" eval '! dmesg | grep -qE "WARNING:|BUG:|KASAN|UBSAN"'
tap_end
