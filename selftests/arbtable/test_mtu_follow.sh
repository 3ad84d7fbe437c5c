#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The mtu follows the device.  On the virtio-net pair (vm.sh -n; a veth
# pair otherwise) with auto mode, rate 40mbit and a class admitted with a
# latency: both ends raised to mtu 9000 after the qdisc is attached carry
# 8000-byte UDP datagrams and jumbo TCP, with no oversize drop; the
# qdisc's mtu, the class's bound and its broken flag follow the device,
# and going back to 1500 restores the bound.  A VLAN on top carries
# full-size frames at both mtus.  A pinned mtu drops the longer frames,
# counts them and says so in the kernel log; mtu 0 follows again.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_net.sh"
. "$(dirname "$0")/lib_debug.sh"
tap_begin "mtu follows the device: jumbo frames, back, VLAN, pinned"
tmp=$(mktemp -d)
VLAN_OK=
cleanup() {
	ip link del "$NET.100" 2>/dev/null
	[ -n "${PEER:-}" ] && ip -n $NET_RX link set "$PEER" mtu 1500 2>/dev/null
	[ -n "${NET:-}" ] && ip link set "$NET" mtu 1500 2>/dev/null
	ip netns pids $NET_RX 2>/dev/null | xargs -r kill 2>/dev/null
	net_teardown
	rm -rf "$tmp"
}
trap cleanup EXIT
have_arbtable || { tap_fail "mtu: module and plugin present"; tap_end; exit; }
if ! net_setup; then tap_fail "mtu: network set-up"; tap_end; exit; fi
diag "network: $NET_KIND"
ip netns exec $NET_RX iperf3 -s -D -p 5301 >/dev/null 2>&1
sleep 0.5

# xs KEY: a number of the qdisc's xstats (tc -s)
xs() { tc -s qdisc show dev "$NET" | tr ' ' '\n' | awk -v k="$1" 'p { print $1 + 0; exit } $1 == k { p = 1 }'; }
qmtu() { tc -d qdisc show dev "$NET" | sed -nE 's/.* mtu ([0-9]+) .*/\1/p'; }
# the class's guaranteed bound in ns and whether it is broken
cbound() { tc -s class show dev "$NET" classid 1:10 | awk "$_awk_t2ns"'
	/ bound:/ { for (i = 1; i <= NF; i++) if ($i == "guaranteed") print t2ns($(i + 1)) }'; }
cbroken() { tc -s class show dev "$NET" classid 1:10 | grep -c 'BROKEN'; }
_awk_t2ns='function t2ns(s,  n, u) { n = s + 0; u = s; sub(/^[0-9.eE+-]+/, "", u)
	if (u == "s") return n * 1e9; if (u == "ms") return n * 1e6; if (u == "us") return n * 1e3; return n }'

# rxpk DEV: packets the receiver's DEV (in its namespace) took in
rxpk() { ip -n $NET_RX -s link show dev "$1" | awk 'p { print $2; exit } /RX:/ { p = 1 }'; }
# udp DST LEN: 3 s of LEN-byte datagrams at 20 Mbit/s; prints "sent received",
# datagrams iperf3 sent and packets the receiving NIC counted meanwhile
udp() {
	local rdev=$PEER r0 r1
	[ "$1" = $NET_RX_ADDR ] || rdev=$PEER.100
	r0=$(rxpk "$rdev")
	iperf3 -c "$1" -p 5301 -u -b 20M -l "$2" -t 3 -J >"$tmp/u.json" 2>/dev/null
	sleep 0.5
	r1=$(rxpk "$rdev")
	python3 -c 'import json,sys
try:
    s = json.load(open(sys.argv[1]))["end"]["sum"]
    print(s.get("packets", 0), int(sys.argv[3]) - int(sys.argv[2]))
except Exception:
    print(0, 0)' "$tmp/u.json" "${r0:-0}" "${r1:-0}"
}
udp_ok() { # DST LEN DESC: at least 90 % of the datagrams arrive
	local r
	r=$(udp "$1" "$2")
	set -- $r "$3"
	diag "$3: UDP datagrams sent $1, packets received $2; oversize_drops $(xs oversize_drops)"
	[ "$1" -gt 0 ] && fcmp "$2 >= 0.9 * $1"
}
tcp_ok() { # DESC: 3 s of TCP; goodput above 2 Mbit/s
	local g
	iperf3 -c $NET_RX_ADDR -p 5301 -t 3 -J >"$tmp/t.json" 2>/dev/null
	g=$(ip3_rx_bps "$tmp/t.json")
	diag "$1: TCP goodput $g bit/s (MSS $(python3 -c 'import json,sys
try: print(json.load(open(sys.argv[1]))["start"]["tcp_mss_default"])
except Exception: print("?")' "$tmp/t.json")); oversize_drops $(xs oversize_drops)"
	fcmp "${g:-0} > 2000000"
}

# highlimit 255: the low table takes no share of the high table's, so a
# larger frame breaks the class's latency, not its rate
run tc qdisc add dev "$NET" root handle 1: arbtable rate 40mbit highlimit 255
ok=$RUN_RC
# the latency: the bound a distance-8 class gets at mtu 1514 (probed)
run tc class add dev "$NET" parent 1: classid 1:10 arbtable rate 10mbit distance 8
ok=$((ok | RUN_RC))
lat=$(cbound)
tc class del dev "$NET" classid 1:10 2>/dev/null
run tc class add dev "$NET" parent 1: classid 1:10 arbtable rate 10mbit latency "${lat:-0}ns"
ok=$((ok | RUN_RC))
run tc qdisc change dev "$NET" root handle 1: arbtable default 10
ok=$((ok | RUN_RC))
tap_check "mtu: auto qdisc rate 40mbit highlimit 255, class 1:10 rate 10mbit latency ${lat:-?} ns, default 10 (${RUN_ERR:-ok})" test "$ok" = 0
b0=$(cbound)
m0=$(qmtu)
tap_check "mtu: not given, follows the device ($m0); tc qdisc show does not print it" \
	eval '[ "$m0" = 1514 ] && ! tc qdisc show dev "$NET" | grep -q " mtu "'
tap_check "mtu: class bound $b0 ns within its latency ${lat:-?} ns, not broken" \
	eval '[ -n "$b0" ] && fcmp "$b0 <= ${lat:-0}" && [ "$(cbroken)" = 0 ]'

# ------------------------------------------------ both ends to 9000
# only this event, into an empty buffer (other tests leave tracing off
# or other events on)
TR=/sys/kernel/tracing
[ -d $TR/events ] || mount -t tracefs nodev $TR 2>/dev/null
echo 0 >$TR/events/arbtable/enable 2>/dev/null
echo 1 >$TR/events/arbtable/arbtable_guarantee/enable 2>/dev/null
: >$TR/trace 2>/dev/null
echo 1 >$TR/tracing_on 2>/dev/null
ip link set "$NET" mtu 9000 && ip -n $NET_RX link set "$PEER" mtu 9000
tap_check "mtu 9000 on both ends: the qdisc's mtu follows (9014: $(qmtu)), mtu_changes $(xs mtu_changes)" \
	eval '[ "$(qmtu)" = 9014 ] && [ "$(xs mtu_changes)" = 1 ]'
tap_check "mtu 9000: 8000-byte UDP datagrams arrive" udp_ok $NET_RX_ADDR 8000 "mtu 9000"
tap_check "mtu 9000: jumbo TCP flows" tcp_ok "mtu 9000"
tap_check "mtu 9000: no oversize drop ($(xs oversize_drops))" test "$(xs oversize_drops)" = 0
b1=$(cbound)
tap_check "mtu 9000: the class's bound grew ($b0 -> $b1 ns) past its latency: broken in tc -s class (qdisc broken $(xs broken))" \
	eval 'fcmp "${b1:-0} > ${lat:-0}" && [ "$(cbroken)" = 1 ] && [ "$(xs broken)" = 1 ]'
tap_check "mtu 9000: arbtable_guarantee traced the class as broken, naming the device by ifindex" \
	grep -q "arbtable_guarantee: ifindex=$(cat /sys/class/net/$NET/ifindex) qdisc=1: class=1:10 mtu=9014 .*broken=1" $TR/trace
tap_check "mtu 9000: the kernel log names the device and the classes" \
	eval 'dmesg | grep -q "$NET: arbtable 1: mtu now 9014: 1 admitted classes"'

# ------------------------------------------------ a VLAN on top
if modprobe 8021q 2>/dev/null &&
	ip link add link "$NET" name "$NET.100" type vlan id 100 &&
	ip -n $NET_RX link add link "$PEER" name "$PEER.100" type vlan id 100 &&
	ip addr add 10.79.0.1/24 dev "$NET.100" && ip link set "$NET.100" up &&
	ip -n $NET_RX addr add 10.79.0.2/24 dev "$PEER.100" && ip -n $NET_RX link set "$PEER.100" up; then
	ip neigh replace 10.79.0.2 lladdr "$(ip -n $NET_RX -o link show "$PEER" | sed -E 's/.*link\/ether ([0-9a-f:]+).*/\1/')" dev "$NET.100" nud permanent
	ip -n $NET_RX neigh replace 10.79.0.1 lladdr "$(cat "/sys/class/net/$NET/address")" dev "$PEER.100" nud permanent
	VLAN_OK=1
fi
tap_check "vlan: $NET.100 on both ends" test -n "$VLAN_OK"
if [ -n "$VLAN_OK" ]; then
	tap_check "vlan, mtu 9000: 8000-byte UDP datagrams arrive" udp_ok 10.79.0.2 8000 "vlan mtu 9000"
fi

# ------------------------------------------------ back to 1500
ip link set "$NET" mtu 1500 && ip -n $NET_RX link set "$PEER" mtu 1500
b2=$(cbound)
tap_check "mtu 1500 again: qdisc mtu 1514 ($(qmtu)), the bound as admitted ($b2 = $b0 ns), not broken" \
	eval '[ "$(qmtu)" = 1514 ] && [ "$b2" = "$b0" ] && [ "$(cbroken)" = 0 ] && [ "$(xs broken)" = 0 ]'
tap_check "mtu 1500: full-size UDP (1472 bytes) arrives" udp_ok $NET_RX_ADDR 1472 "mtu 1500"
if [ -n "$VLAN_OK" ]; then
	tap_check "vlan, mtu 1500: full-size UDP (1468 bytes) arrives" udp_ok 10.79.0.2 1468 "vlan mtu 1500"
fi
tap_check "mtu 1500: still no oversize drop ($(xs oversize_drops))" test "$(xs oversize_drops)" = 0

# ------------------------------------------------ pinned
run tc qdisc change dev "$NET" root handle 1: arbtable mtu 1514
tap_check "pinned: mtu 1514 given (${RUN_ERR:-ok}); tc qdisc show prints it" \
	eval '[ "$RUN_RC" = 0 ] && tc qdisc show dev "$NET" | grep -q " mtu 1514 "'
klog_mark
ip link set "$NET" mtu 9000 && ip -n $NET_RX link set "$PEER" mtu 9000
tap_check "pinned: the device's mtu 9000 leaves the qdisc's at 1514 ($(qmtu))" test "$(qmtu)" = 1514
tap_check "pinned: the kernel log says frames above the pinned mtu will be dropped" \
	eval 'klog_read $_klog_mark | grep -q "$NET: arbtable 1: frames of up to 9014 bytes are now allowed, above the qdisc.s pinned mtu 1514"'
d0=$(xs oversize_drops)
udp $NET_RX_ADDR 8000 >/dev/null
d1=$(xs oversize_drops)
tap_check "pinned: 8000-byte datagrams dropped and counted (oversize_drops $d0 -> $d1)" fcmp "${d1:-0} > ${d0:-0}"
tap_check "pinned: each drop is said, ratelimited, naming the device and the option" \
	eval 'klog_read $_klog_mark | grep -q "$NET: arbtable 1: dropped a 8042-byte frame above the qdisc.s mtu 1514 (pinned by its .mtu. option)"'
run tc qdisc change dev "$NET" root handle 1: arbtable mtu 0
tap_check "mtu 0: follows the device again despite the admitted class (${RUN_ERR:-ok}; mtu $(qmtu))" \
	eval '[ "$RUN_RC" = 0 ] && [ "$(qmtu)" = 9014 ]'
tap_check "mtu 0: 8000-byte UDP datagrams arrive" udp_ok $NET_RX_ADDR 8000 "mtu 0 (following)"
echo 0 >$TR/events/arbtable/arbtable_guarantee/enable 2>/dev/null
tap_end
