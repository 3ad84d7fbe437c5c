#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Tagged full-size frames (issue 35, defect 2).  A device takes mtu +
# link header + VLAN_HLEN for a tagged frame: 1518 bytes on a 1500-mtu
# Ethernet device.  The qdisc's followed mtu is 1514 below 1gbit, and such
# frames, tag inline, were dropped as oversize.  A frame the device takes
# is never dropped: 100 tagged 1518-byte frames sent with AF_PACKET leave
# the qdisc (no oversize drop, no ENOBUFS) and arrive.  Full-size UDP over
# a VLAN through a VLAN-unaware bridge whose port carries arbtable
# arrives too: there the stack carries the tag beside the frame (the
# receive path untags, and it is put back after the qdisc), so that path
# was never dropped; it stays checked.  A pinned mtu still drops inline
# tagged frames (the user's choice).  On every kernel, in both root modes
# (issue 46): the locked root, then the lockless one on a 4-queue veth,
# whose enqueue checks a frame's size on every sending CPU apart from the
# locked path.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_net.sh"
DEV=vf0
PEER=vf1
NS=vf-peer
BNS=vf-src
cleanup_vlan() {
	ip netns pids $BNS 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns del $BNS 2>/dev/null
	ip link del vfb0 2>/dev/null
	ip link del vfbr 2>/dev/null
}
veth_test_begin vlan_frames "arbtable: tagged full-size frames the device takes are never dropped" cleanup_vlan

if ! VETH_QUEUES=4 veth_peer $DEV $PEER $NS 10.92.0; then
	tap_fail "vlan_frames: veth $DEV to namespace $NS"
	tap_end; exit
fi
xs() { tc -s qdisc show dev "$DEV" | tr ' ' '\n' | awk -v k="$1" 'p { print $1 + 0; exit } $1 == k { p = 1 }'; }
rxpk() { ip netns exec $NS cat "/sys/class/net/$1/statistics/rx_packets"; }

# ------------------------------------------------ AF_PACKET
# 1518 bytes: Ethernet header, an 802.1Q tag (VLAN 100), IPv4 ethertype
# and 1500 bytes of payload, to the peer's address
send_tagged() { # DEV COUNT LEN
	python3 - "$@" <<'EOF'
import socket, struct, sys
dev, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
src = open("/sys/class/net/%s/address" % dev).read().strip()
mac = lambda a: bytes(int(x, 16) for x in a.split(":"))
hdr = b"\xff" * 6 + mac(src) + struct.pack("!HHH", 0x8100, 100, 0x0800)
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((dev, 0))
sent = 0
for _ in range(count):
    try:   # a frame the qdisc drops comes back as ENOBUFS
        sent += s.send(hdr + b"\0" * (size - len(hdr))) == size
    except OSError:
        pass
print(sent)
EOF
}
# ------------------------------------------------ VLAN-unaware bridge
# $BNS (vfs0.100, 10.93.0.1) -- vfb0/vfbr bridge/$DEV -- $PEER.100 (10.93.0.2)
ok=0
ip netns add $BNS &&
	ip link add vfb0 type veth peer name vfs0 &&
	ip link set vfs0 netns $BNS &&
	ip link add vfbr type bridge vlan_filtering 0 &&
	ip link set vfb0 master vfbr && ip link set $DEV master vfbr &&
	ip link set vfb0 up && ip link set vfbr up &&
	ip -n $BNS link set vfs0 up && ip -n $BNS link set lo up &&
	ip -n $BNS link add link vfs0 name vfs0.100 type vlan id 100 &&
	ip -n $BNS addr add 10.93.0.1/24 dev vfs0.100 && ip -n $BNS link set vfs0.100 up &&
	ip -n $NS link add link $PEER name $PEER.100 type vlan id 100 &&
	ip -n $NS addr add 10.93.0.2/24 dev $PEER.100 && ip -n $NS link set $PEER.100 up || ok=1
# no ARP behind the flood: permanent neighbours both ways
ip -n $BNS neigh replace 10.93.0.2 lladdr "$(ip -n $NS link show $PEER.100 | awk '/ether/ { print $2 }')" dev vfs0.100 nud permanent || ok=1
ip -n $NS neigh replace 10.93.0.1 lladdr "$(ip -n $BNS link show vfs0.100 | awk '/ether/ { print $2 }')" dev $PEER.100 nud permanent || ok=1
tap_check "vlan_frames: VLAN 100 from $BNS through a VLAN-unaware bridge to $PEER.100 (arbtable on the bridge port $DEV)" test $ok = 0
# 200 datagrams of 1472 bytes to $PEER.100's address; prints how many went
send_udp='
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
n = 0
for _ in range(200):
    n += s.sendto(b"\0" * 1472, ("10.93.0.2", 9)) == 1472
print(n)'
# vlan_pass MODE: the checks with the root in MODE (locked, lockless)
vlan_pass() {
	local mode=$1
	tc qdisc del dev $DEV root 2>/dev/null
	run tc qdisc add dev $DEV root handle 1: arbtable $mode rate 200mbit
	tap_check "vlan_frames $mode: arbtable $mode rate 200mbit on a 1500-mtu 4-queue veth (${RUN_ERR:-ok})" test "$RUN_RC" = 0
	qmtu=$(tc -d qdisc show dev $DEV | sed -nE 's/.* mtu ([0-9]+) .*/\1/p' | head -n1)
	diag "the qdisc's followed mtu: $qmtu"

	d0=$(xs oversize_drops)
	r0=$(rxpk $PEER)
	sent=$(send_tagged $DEV 100 1518 2>&1)
	sleep 1
	d1=$(xs oversize_drops)
	r1=$(rxpk $PEER)
	diag "AF_PACKET: sent $sent tagged 1518-byte frames; oversize_drops $d0 -> $d1; peer received $((r1 - r0))"
	tap_check "vlan_frames $mode: AF_PACKET took 100 tagged 1518-byte frames on a 1500-mtu device (sent $sent)" test "$sent" = 100
	tap_check "vlan_frames $mode: AF_PACKET: none dropped as oversize (oversize_drops $d0 -> $d1)" test "$d1" = "$d0"
	tap_check "vlan_frames $mode: AF_PACKET: the peer received all 100 ($((r1 - r0)))" test "$((r1 - r0))" -ge 100

	# vlan devices inherit the lower device's offloads: full-size datagrams
	# of 1472 bytes of payload make 1518-byte tagged frames on the bridge
	d0=$(xs oversize_drops)
	r0=$(rxpk $PEER.100)
	sent=$(ip netns exec $BNS python3 -c "$send_udp" 2>&1)
	sleep 1
	d1=$(xs oversize_drops)
	r1=$(rxpk $PEER.100)
	diag "bridge: sent $sent 1472-byte datagrams over VLAN 100; oversize_drops $d0 -> $d1; $PEER.100 received $((r1 - r0))"
	tap_check "vlan_frames $mode: bridge: none of the tagged 1518-byte frames dropped as oversize (oversize_drops $d0 -> $d1)" test "$d1" = "$d0"
	tap_check "vlan_frames $mode: bridge: 200 datagrams sent, at least 190 arrived ($((r1 - r0)))" \
		eval '[ "$sent" = 200 ] && [ "$((r1 - r0))" -ge 190 ]'

	# ------------------------------------------------ pinned: the user's choice
	run tc qdisc change dev $DEV root handle 1: arbtable mtu 1514
	d=$(tc -d qdisc show dev $DEV root)
	d0=$(xs oversize_drops)
	sent=$(send_tagged $DEV 10 1518 2>&1)
	sleep 1
	d1=$(xs oversize_drops)
	tap_check "vlan_frames $mode: mtu pinned at 1514 (${RUN_ERR:-ok}): tagged 1518-byte frames are dropped and counted ($d0 -> $d1), the mode kept" \
		eval '[ "$RUN_RC" = 0 ] && [ "$((d1 - d0))" = 10 ] && grep -qw "$mode" <<<"$d"'
}
vlan_pass locked
vlan_pass lockless
tap_end
