#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Paths no other test takes (issue 35):
#  - arbtable as the child of tbf, htb, drr and ets: the parent peeks it
#    (qdisc_peek_dequeued) and takes the packet later; TCP through it, all
#    of it through arbtable's class, the parent's shaping kept;
#  - an instance the kernel creates without options
#    (net.core.default_qdisc=arbtable): a virtio-net NIC's root once its
#    own is deleted, and each queue's under mq; frames are sent;
#  - a device whose arbtable root carries a UDP flood moved to another
#    namespace, and a namespace destroyed under a flood through its
#    devices' arbtable roots.
# The runner reads this test's window of the kernel log: any splat fails.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_net.sh"
DEV=pa0
PEER=pa1
NS=pa-peer
dq_old=$(sysctl -n net.core.default_qdisc)
cleanup_paths() {
	sysctl -qw net.core.default_qdisc="$dq_old"
	ip link del dq2 2>/dev/null
	[ -n "${NIC:-}" ] && tc qdisc replace dev "$NIC" root pfifo 2>/dev/null && tc qdisc del dev "$NIC" root 2>/dev/null
	ip link del mv0 2>/dev/null
	ip netns pids pa-mv 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns del pa-mv 2>/dev/null
	ip netns pids pa-gone 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns del pa-gone 2>/dev/null
}
veth_test_begin paths "arbtable under tbf, htb, drr and ets; as default_qdisc; moved and destroyed with its namespace" cleanup_paths

if ! veth_peer $DEV $PEER $NS 10.94.0; then
	tap_fail "paths: veth $DEV to namespace $NS with an iperf3 server"
	tap_end; exit
fi

# ------------------------------------------------ under a parent
# parent_setup KIND: the parent at root 1:, arbtable 2: at its class
parent_setup() {
	case $1 in
	tbf) run tc qdisc add dev $DEV root handle 1: tbf rate 40mbit burst 64k latency 100ms ;;
	htb) run tc qdisc add dev $DEV root handle 1: htb default 10 &&
		run tc class add dev $DEV parent 1: classid 1:10 htb rate 40mbit ;;
	drr) run tc qdisc add dev $DEV root handle 1: drr &&
		run tc class add dev $DEV parent 1: classid 1:10 drr &&
		run tc filter add dev $DEV parent 1: prio 1 matchall classid 1:10 ;;
	ets) run tc qdisc add dev $DEV root handle 1: ets bands 2 strict 1 quanta 1514 priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 ;;
	esac
	[ "$RUN_RC" = 0 ] || return 1
	local at=1:10
	[ "$1" = tbf ] && at=1:1
	[ "$1" = ets ] && at=1:2
	run tc qdisc add dev $DEV parent $at handle 2: arbtable manual rate 100mbit &&
		run tc class add dev $DEV parent 2: classid 2:10 arbtable &&
		run tc filter add dev $DEV parent 2: protocol ip prio 1 flower ip_proto tcp classid 2:10 &&
		run tc qdisc change dev $DEV parent $at handle 2: arbtable high 10:16
}
for p in tbf htb drr ets; do
	tc qdisc del dev $DEV root 2>/dev/null
	parent_setup $p
	tap_check "paths: arbtable 2: under $p (${RUN_ERR:-ok})" test "$RUN_RC" = 0
	timeout 20 iperf3 -c 10.94.0.2 -p 5201 -t 3 --connect-timeout 5000 -J >"$tmp/$p.json" 2>&1
	sleep 0.5
	g=$(python3 -c 'import json,sys
try:
    print("%.1f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 1e6))
except Exception:
    print("0")' "$tmp/$p.json")
	read -r pb pp _ <<<"$(qd_stats $DEV 1:)"
	read -r ab ap _ <<<"$(qd_stats $DEV 2:)"
	cb=$(tc -s class show dev $DEV classid 2:10 | awk '$1 == "Sent" { print $2; exit }')
	diag "$p: goodput $g Mbit/s; parent sent $pb bytes $pp packets, arbtable $ab bytes $ap packets, its class 2:10 $cb bytes"
	tap_check "paths: under $p: TCP carried ($g Mbit/s)" fcmp "$g > 1"
	case $p in tbf | htb)
		tap_check "paths: under $p: the parent's 40mbit kept ($g Mbit/s)" fcmp "$g <= 44" ;;
	esac
	# what the parent sent came out of arbtable, and out of its class
	# (ARP is not sent: the neighbours are permanent)
	tap_check "paths: under $p: parent and arbtable sent the same ($pb = $ab bytes), all of it from class 2:10 ($cb)" \
		eval '[ "${pb:-0}" -gt 0 ] && [ "$pb" = "$ab" ] && [ "$ab" = "$cb" ]'
	run tc qdisc del dev $DEV root
	tap_check "paths: under $p: the tree deleted (${RUN_ERR:-ok})" test "$RUN_RC" = 0
done

# ------------------------------------------------ default_qdisc
# veth and dummy are noqueue by default; a virtio-net NIC (vm.sh -n) gets
# the default qdisc when its root is deleted, and mq creates one per
# queue of a 4-queue dummy
NIC=$(net_nics | head -n1)
# send_bcast DEV N: N broadcast frames of a local ethertype (no neighbour)
send_bcast() {
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
src = open("/sys/class/net/%s/address" % sys.argv[1]).read().strip()
frame = b"\xff" * 6 + bytes(int(x, 16) for x in src.split(":")) + b"\x88\xb5" + b"\0" * 500
n = 0
for _ in range(int(sys.argv[2])):
    try:
        n += s.send(frame) == len(frame)
    except OSError:
        pass
print(n)' "$1" "$2" 2>&1
}
# arb_sent DEV: packets every arbtable instance on DEV sent
arb_sent() {
	tc -s qdisc show dev "$1" | awk '/^qdisc/ { on = ($2 == "arbtable") } on && $1 == "Sent" { n += $4 } END { print n + 0 }'
}
sysctl -qw net.core.default_qdisc=arbtable
rc=$?
nics_down=
if [ -n "$NIC" ]; then
	# a device that is down has no qdisc to show, and QEMU's hub holds
	# the frames of a NIC whose peers are all down: every NIC up, and
	# as found at the end
	for n in $(net_nics); do
		ip link show "$n" | grep -q '[<,]UP[,>]' && continue
		nics_down="$nics_down $n"
		ip link set "$n" up
	done
	for _ in $(seq 50); do
		[ "$(cat "/sys/class/net/$NIC/carrier" 2>/dev/null)" = 1 ] && break
		sleep 0.1
	done
	tc qdisc replace dev "$NIC" root pfifo
	tc qdisc del dev "$NIC" root
	tc qdisc show dev "$NIC" >"$tmp/nic"
	diag "default_qdisc arbtable (sysctl rc $rc): $NIC: $(head -n1 "$tmp/nic")"
	tap_check "paths: default_qdisc=arbtable: $NIC's root, deleted, comes back as arbtable made without options" \
		grep -q '^qdisc arbtable ' "$tmp/nic"
	n=$(send_bcast "$NIC" 50)
	tap_check "paths: default_qdisc: 50 frames sent through $NIC's default arbtable (sent $n; the qdisc $(arb_sent "$NIC"))" \
		eval '[ "$n" = 50 ] && [ "$(arb_sent "$NIC")" -ge 50 ]'
else
	tap_fail "paths: default_qdisc: a virtio-net NIC (vm.sh -n) to take the default qdisc"
fi
ip link add dq2 numtxqueues 64 numrxqueues 64 type dummy && ip link set dq2 txqueuelen 1000 up &&
	run tc qdisc add dev dq2 root handle 1: mq
tc qdisc show dev dq2 >"$tmp/dq2"
tap_check "paths: default_qdisc=arbtable: mq on a 64-queue dummy has arbtable on each queue (${RUN_ERR:-ok}; $(grep -c '^qdisc arbtable ' "$tmp/dq2"))" \
	eval '[ "$RUN_RC" = 0 ] && [ "$(grep -c "^qdisc arbtable " "$tmp/dq2")" = 64 ]'
# The link settings under RTNL: once per device and event, not once per
# instance (64 here; on a NIC each is a firmware query).  Counted with the
# function tracer on the kernel's link-settings call, over the events of
# one down and up of the device.
TR=/sys/kernel/tracing
[ -d $TR/events ] || mount -t tracefs nodev $TR 2>/dev/null
lfn=
for f in netif_get_link_ksettings __ethtool_get_link_ksettings; do
	grep -qx "$f" $TR/available_filter_functions 2>/dev/null && { lfn=$f; break; }
done
if [ -n "$lfn" ] && echo "$lfn" >$TR/set_ftrace_filter && echo 0 >$TR/tracing_on && : >$TR/trace &&
	echo function >$TR/current_tracer; then
	echo 1 >$TR/tracing_on
	ip link set dq2 down && ip link set dq2 up
	echo 0 >$TR/tracing_on
	calls=$(grep -c " $lfn" $TR/trace)
	echo nop >$TR/current_tracer
	: >$TR/set_ftrace_filter
	tap_check "paths: a down and up of the 64-queue device reads its link settings once per event, not per instance ($calls calls of $lfn)" \
		eval '[ "$calls" -ge 1 ] && [ "$calls" -le 4 ]'
else
	tap_fail "paths: the function tracer on the kernel's link-settings call (${lfn:-none found})"
fi
n=$(send_bcast dq2 50)
tap_check "paths: default_qdisc: 50 frames through mq's default arbtables (sent $n; the queues $(arb_sent dq2))" \
	eval '[ "$n" = 50 ] && [ "$(arb_sent dq2)" -ge 50 ]'
ip link del dq2
sysctl -qw net.core.default_qdisc="$dq_old"
[ -n "$NIC" ] && tc qdisc replace dev "$NIC" root pfifo && tc qdisc del dev "$NIC" root
for n in $nics_down; do ip link set "$n" down; done

# ------------------------------------------------ moved and destroyed
# flood_to ADDR SECONDS [NETNS]: UDP to ADDR for SECONDS from the
# sender's first datagram, in the background; $tmp/flood.up once that
# one left the socket.  flood_up: wait for it (python3 starts in 0.6 s
# on the fast machine and took past 2 s beside a second guest on the
# slow one, where the class was read before anything was sent).
flood_to() {
	rm -f "$tmp/flood.up"
	${3:+ip netns exec "$3"} python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
up = None
end = time.time() + float(sys.argv[2])
while time.time() < end:
    try:
        s.sendto(b"\0" * 1000, (sys.argv[1], 9))
        if up is None:
            up = open(sys.argv[3], "w")
            up.close()
    except OSError:
        time.sleep(0.001)' "$1" "$2" "$tmp/flood.up" >/dev/null 2>&1 &
}
flood_up() {
	local i
	for ((i = 0; i < 300; i++)); do
		[ -e "$tmp/flood.up" ] && return 0
		sleep 0.1
	done
	diag "the flood's sender sent nothing in 30 s"
	return 1
}
ok=0
ip netns add pa-mv && ip netns add pa-gone &&
	ip link add mv0 type veth peer name mv1 && ip link set mv1 netns pa-gone &&
	ip addr add 10.95.0.1/24 dev mv0 && ip link set mv0 up &&
	ip -n pa-gone addr add 10.95.0.2/24 dev mv1 && ip -n pa-gone link set mv1 up || ok=1
ip neigh replace 10.95.0.2 lladdr "$(ip -n pa-gone link show mv1 | awk '/ether/ { print $2 }')" dev mv0 nud permanent || ok=1
run tc qdisc add dev mv0 root handle 1: arbtable rate 20mbit && run tc class add dev mv0 parent 1: classid 1:10 arbtable rate 5mbit latency 10ms &&
	run tc filter add dev mv0 parent 1: protocol ip prio 1 matchall classid 1:10 || ok=1
tap_check "paths: mv0 (arbtable, a class at 5mbit) to namespace pa-gone (${RUN_ERR:-ok})" test $ok = 0
flood_to 10.95.0.2 6
fl=$!
flood_up
sleep 1
q0=$(tc -s class show dev mv0 classid 1:10 | awk '$1 == "Sent" { print $2; exit }')
ip link set mv0 netns pa-mv
mrc=$?
sleep 1
tap_check "paths: mv0 moved to namespace pa-mv under the flood (class had sent ${q0:-0} bytes; rc $mrc)" \
	eval '[ "$mrc" = 0 ] && [ "${q0:-0}" -gt 0 ] && ip -n pa-mv link show mv0 >/dev/null'
ip -n pa-mv link set mv0 up
ip -n pa-mv addr add 10.95.0.1/24 dev mv0
tap_check "paths: mv0 in pa-mv: a root qdisc to show, and tc answers ($(tc -n pa-mv qdisc show dev mv0 | head -n1))" \
	eval 'tc -n pa-mv qdisc show dev mv0 | grep -q "^qdisc "'
# arbtable again in the new namespace, then the namespace with both
# ends of the pair destroyed while a flood from inside runs through it
run tc -n pa-mv qdisc replace dev mv0 root handle 1: arbtable rate 20mbit
ok=$RUN_RC
ip -n pa-mv neigh replace 10.95.0.2 lladdr "$(ip -n pa-gone link show mv1 | awk '/ether/ { print $2 }')" dev mv0 nud permanent || ok=1
run tc -n pa-gone qdisc replace dev mv1 root handle 1: arbtable rate 20mbit
ok=$((ok | RUN_RC))
tap_check "paths: arbtable on mv0 in pa-mv and on mv1 in pa-gone (${RUN_ERR:-ok})" test $ok = 0
kill $fl 2>/dev/null
wait $fl 2>/dev/null
flood_to 10.95.0.2 8 pa-mv
fl=$!
flood_up
sleep 1
sent=$(tc -n pa-mv -s qdisc show dev mv0 | awk '$1 == "Sent" { print $2; exit }')
ip netns del pa-gone
drc=$?
sleep 2
tap_check "paths: namespace pa-gone destroyed under the flood through mv0's arbtable (${sent:-0} bytes sent; rc $drc): mv0 went with its peer" \
	eval '[ "$drc" = 0 ] && [ "${sent:-0}" -gt 0 ] && ! ip -n pa-mv link show mv0 >/dev/null 2>&1'
kill $fl 2>/dev/null
wait $fl 2>/dev/null
ip netns del pa-mv
tap_end
