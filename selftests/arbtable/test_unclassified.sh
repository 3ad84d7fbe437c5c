#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The link's control plane while every class is flooded (issue 44): ARP,
# IPv6 neighbour discovery and LLDP-like frames match no filter, priomap
# or default and wait in the qdisc's unclassified queue, which takes every
# second LOW-side turn of the arbiter and so has a head-of-line bound of
# its own.
#
# A veth to a namespace, arbtable at 10 Mbit/s in auto mode: 1:10 rate
# 4mbit and 1:11 rate 3mbit (HIGH), 1:20 share 10 (LOW), each fed by an
# unpaced-enough pktgen producer through skb->priority, so all three stay
# backlogged. No filter and no default: the host's own frames are
# unclassified. Checked while the flood runs: an ARP request for a new
# neighbour and an IPv6 neighbour solicitation are answered (the
# neighbour resolves within 3 s: the bound is about 0.11 s, ARP and ND
# retransmit after 1 s), 40 of 40 LLDP-like frames (ethertype 0x88cc) sent
# 20 ms apart reach the peer within 5 s of the last send; in the arbtable_enqueue/dequeue trace, the
# bytes the qdisc sent while an unclassified packet was at the head of its
# queue never exceed the bound's bytes (2 * (highlimit bytes + mtu) + mtu
# for the packet ahead), and the qdisc's reported bound is that number of
# bytes at 10 Mbit/s; its measured max_wait is nonzero.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_net.sh"
DEV=arbu0
PEER=arbu1
NS=arbt-uncl
# a trace instance of its own; on 6.1 the top-level buffer: there a later
# test's function_graph tracer (test_dump_lock) missed most callbacks
# after an instance had come and gone (as lib.sh's in_trace_start says)
TR=/sys/kernel/tracing
kver_ge 6 2 && TR=/sys/kernel/tracing/instances/arbt_uncl
# tr_done: the trace's events off and, for an instance, the instance gone
tr_done() {
	local e
	[ -d $TR ] || return 0
	echo 0 >$TR/tracing_on
	for e in arbtable_enqueue arbtable_dequeue; do
		echo 0 >$TR/events/arbtable/$e/enable
		echo 0 >$TR/events/arbtable/$e/filter
	done
	: >$TR/trace
	if [ "${TR#*/instances/}" != "$TR" ]; then
		rmdir $TR
	else
		echo 1 >$TR/tracing_on	# the top-level buffer's default
	fi
}
# shellcheck disable=SC2016 # at exit
veth_test_begin unclassified "the unclassified queue's bound: ARP, ND, LLDP under a flood" \
	'pg_stop; tr_done 2>/dev/null'

# uncl_json FIELD: the qdisc's unclassified.FIELD from tc -s -j
uncl_json() {
	tc -s -j qdisc show dev $DEV | python3 -c 'import json, sys
for q in json.load(sys.stdin):
    if q.get("kind") == "arbtable":
        print(q.get("unclassified", {}).get(sys.argv[1], "missing"))' "$1"
}
# resolved ADDR SECONDS: the neighbour entry of ADDR becomes REACHABLE (or
# STALE/DELAY/PROBE: answered) within SECONDS; diag how long it took
resolved() {
	local a=$1 t0 s
	t0=$(now)
	while fcmp "$(now) - $t0 < $2"; do
		s=$(ip neigh show "$a" dev $DEV)
		case $s in
		*REACHABLE* | *STALE* | *DELAY* | *PROBE*)
			diag "$a resolved in $(fcalc "$(now) - $t0") s: $s"
			return 0 ;;
		esac
		sleep 0.05
	done
	diag "$a not resolved in $2 s: ${s:-no entry}"
	return 1
}

setup() {
	ip netns add $NS && ip link add $DEV type veth peer name $PEER &&
		ip link set $PEER netns $NS || return 1
	ip addr add 192.0.2.1/24 dev $DEV &&
		ip addr add 2001:db8::1/64 dev $DEV nodad &&
		ip link set $DEV txqueuelen 1000 up &&
		ip -n $NS addr add 192.0.2.2/24 dev $PEER &&
		ip -n $NS addr add 192.0.2.3/24 dev $PEER &&
		ip -n $NS addr add 2001:db8::2/64 dev $PEER nodad &&
		ip -n $NS addr add 2001:db8::3/64 dev $PEER nodad &&
		ip -n $NS link set $PEER up || return 1
	run tc qdisc add dev $DEV root handle 1: arbtable rate "$(kbit 10)" ||
		{ diag "qdisc: $RUN_ERR"; return 1; }
	run tc class add dev $DEV parent 1: classid 1:10 arbtable rate "$(kbit 4)" &&
		run tc class add dev $DEV parent 1: classid 1:11 arbtable rate "$(kbit 3)" &&
		run tc class add dev $DEV parent 1: classid 1:20 arbtable share 10 ||
		{ diag "classes: $RUN_ERR"; return 1; }
	# producers well above each class's rate (pktgen paces them)
	pg_reset &&
		pg_add $DEV 0 1500 0x10010 12 &&
		pg_device $DEV 0 b 1500 0x10011 9 02:00:00:00:00:09 &&
		pg_cmd "$PG/$DEV@b" "rate $(((12 + ARBT_RATE_DIV - 1) / ARBT_RATE_DIV))" &&
		pg_add $DEV 1 1500 0x10020 12
}
if ! setup; then tap_fail "unclassified: setup"; tap_end; exit; fi
tap_ok "unclassified: 10 Mbit/s, 1:10 rate 4mbit, 1:11 rate 3mbit, 1:20 share 10, no filter, no default"

ifx=$(cat /sys/class/net/$DEV/ifindex)
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
tr_ok=0
if [ -d $TR ] || mkdir $TR 2>/dev/null; then
	echo 0 >$TR/tracing_on && echo 16384 >$TR/buffer_size_kb && : >$TR/trace &&
		echo "ifindex == $ifx" >$TR/events/arbtable/arbtable_enqueue/filter &&
		echo "ifindex == $ifx" >$TR/events/arbtable/arbtable_dequeue/filter &&
		echo 1 >$TR/events/arbtable/arbtable_enqueue/enable &&
		echo 1 >$TR/events/arbtable/arbtable_dequeue/enable && tr_ok=1
fi
tap_check "unclassified: arbtable_enqueue/dequeue traced on $DEV (ifindex $ifx)" test $tr_ok = 1

ip neigh flush dev $DEV
pg_start
sleep 1	# the classes' queues fill first
[ $tr_ok = 1 ] && echo 1 >$TR/tracing_on
bl=$(cls_stats $DEV arbtable)
diag "classes at the flood's start (id sent_bytes sent_pkts dropped backlog_bytes backlog_pkts):"
diag "$bl"
# the premise, checked: every class held packets, so before this change
# the unclassified queue would have waited for the flood to end
tap_check "unclassified: 1:10, 1:11 and 1:20 backlogged under the flood" \
	awk '$1 ~ /^1:(10|11|20)$/ && $6 > 0 { n++ } END { exit n != 3 }' <<<"$bl"

# a datagram to each new neighbour starts its resolution
python3 -c 'import socket
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("192.0.2.3", 9))' 2>/dev/null
tap_check "unclassified: ARP for 192.0.2.3 answered under the flood" resolved 192.0.2.3 3
python3 -c 'import socket
socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).sendto(b"x", ("2001:db8::3", 9))' 2>/dev/null
tap_check "unclassified: neighbour solicitation for 2001:db8::3 answered under the flood" resolved 2001:db8::3 3

# 40 LLDP-like frames, 20 ms apart, through the qdisc (AF_PACKET)
ip netns exec $NS python3 - $PEER >"$tmp/lldp.rx" 2>&1 <<'EOF' &
import socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x88cc))
s.bind((sys.argv[1], 0))
s.settimeout(0.2)
n, end = 0, time.monotonic() + 120
print("ready", flush=True)
while time.monotonic() < end and n < 40:
    try:
        f = s.recv(2048)
    except socket.timeout:
        continue
    if f[12:14] == b"\x88\xcc" and f[14:18] == b"arbt":
        n += 1
        print(n, flush=True)
EOF
rpid=$!
for _ in $(seq 50); do grep -q ready "$tmp/lldp.rx" 2>/dev/null && break; sleep 0.1; done
python3 - $DEV <<'EOF'
import socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
src = open("/sys/class/net/%s/address" % sys.argv[1]).read().strip()
f = bytes.fromhex("0180c200000e") + bytes.fromhex(src.replace(":", "")) + \
    b"\x88\xcc" + b"arbt" + b"\0" * 60
for _ in range(40):
    s.send(f)
    time.sleep(0.02)
EOF
# the frames' wait is bounded by the qdisc (0.11 s), not the receiver's
# window: a slow guest may take seconds to start the sender and to run
# its 40 sends, so the receiver counts until 5 s after the last send
for _ in $(seq 50); do
	[ "$(tail -n 1 "$tmp/lldp.rx")" = 40 ] && break
	sleep 0.1
done
kill $rpid 2>/dev/null
wait $rpid 2>/dev/null
got=$(grep -xE '[0-9]+' "$tmp/lldp.rx" | tail -n 1)
diag "LLDP-like frames received by $PEER: ${got:-0} of 40 (in 5 s after the last was sent)"
tap_check "unclassified: 40 of 40 LLDP-like frames reached the peer under the flood" test "${got:-0}" = 40

[ $tr_ok = 1 ] && echo 0 >$TR/tracing_on
bl=$(cls_stats $DEV arbtable)
tap_check "unclassified: classes still backlogged at the end" \
	awk '$1 ~ /^1:(10|11|20)$/ && $6 > 0 { n++ } END { exit n != 3 }' <<<"$bl"
bound=$(uncl_json bound)
maxw=$(uncl_json max_wait)
upk=$(uncl_json packets)
pg_stop
diag "unclassified: packets $upk bound ${bound}ns max_wait ${maxw}ns"

# the bound: 2 * (H + mtu) + 2 * mtu bytes (H = highlimit 16 * 4096; the
# mtu the qdisc follows, 1514 on this veth) at 10 Mbit/s (rate scaling:
# kbit), rounded up
mtu=$(tc -d qdisc show dev $DEV | awk '{ for (i = 1; i < NF; i++) if ($i == "mtu") { print $(i + 1); exit } }')
bb=$((2 * (16 * 4096 + ${mtu:-0}) + 2 * ${mtu:-0}))
rate=$(($(bps 10) / 8))
want=$(((bb * 1000000000 + rate - 1) / rate))
diag "qdisc mtu ${mtu:-?}: bound $bb bytes at $rate B/s = $want ns"
tap_check "unclassified: tc -s reports the bound, ${want} ns" test "$bound" = "$want"
tap_check "unclassified: tc -s reports a measured max_wait (> 0, packets $upk)" \
	fcmp "${maxw:-0} > 0 && ${upk:-0} > 0"

# bytes sent while an unclassified packet was head of its queue; the
# packet in flight when it became head is not in the trace's count
if [ $tr_ok = 1 ]; then
	cat $TR/trace >"$tmp/trace"
	tr_done
fi
awk '
	/^# entries-in-buffer\/entries-written:/ { split($3, e, "/"); lost = e[2] - e[1]; next }
	/^#/ { next }
	/arbtable_enqueue:/ && / class=0:0 / { if (!uq++) head = tot; next }
	/arbtable_dequeue:/ {
		l = $0; sub(/.* len=/, "", l); l += 0
		if (/ class=0:0 /) {
			if (uq > 0) { w = tot - head; if (w > mw) mw = w; n++; uq-- }
			tot += l; head = tot
		} else {
			tot += l
		}
	}
	END { printf "%d %d %d %d\n", n, mw, tot, lost }' "$tmp/trace" >"$tmp/w"
read -r tn tw ttot tlost <"$tmp/w"
diag "trace: $tn unclassified packets dequeued, longest head-of-line wait $tw bytes of $ttot sent; $tlost events lost"
tap_check "unclassified: every unclassified head sent within $((bb - ${mtu:-0})) bytes of others (trace: $tw, $tn packets)" \
	test "$tr_ok" = 1 -a "${tlost:-1}" = 0 -a "${tn:-0}" -ge 3 -a "${tw:-999999999}" -le $((bb - ${mtu:-0}))
tap_end
