#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The capacity an admission was made against stays until the user changes
# `rate`.  On a virtio-net NIC (vm.sh -n): a link that is down when the
# qdisc is created takes it with `rate` (and refuses it without, saying
# why); with the speed set by `ethtool -s` the qdisc takes its capacity
# from the link, and a later speed change (read at the next change, or
# when the link comes up) is counted and shown beside the capacity, never
# a reason to refuse a change that does not touch the rate.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_net.sh"
tap_begin "link speed changes and links down at creation"
# the second NIC: the one the real-traffic tests move into the receiver's
# namespace, so the speed set here touches no qdisc of theirs
NIC=$(net_nics | sed -n 2p)
cleanup() {
	[ -n "$NIC" ] || return
	tc qdisc del dev "$NIC" root 2>/dev/null
	ip link set "$NIC" up 2>/dev/null
}
trap cleanup EXIT
have_arbtable || { tap_fail "link: module and plugin present"; tap_end; exit; }
if [ -z "$NIC" ]; then
	tap_fail "link: two virtio-net NICs (vm.sh -n)"
	tap_end; exit
fi
# the speed virtio-net reports at boot, unknown, whatever a test before
# set (the driver keeps it): SPEED_UNKNOWN, as ethtool takes it
run ethtool -s "$NIC" speed 4294967295
[ "$RUN_RC" = 0 ] || diag "ethtool -s $NIC speed unknown: $RUN_ERR"
diag "NIC $NIC, speed $(cat /sys/class/net/$NIC/speed 2>/dev/null)"
# xs KEY: the qdisc's xstats value after KEY (tc -s: "capacity 1Gbit link 100Mbit")
xs() { tc -s qdisc show dev "$NIC" | tr ' ' '\n' | awk -v k="$1" 'p { print; exit } $1 == k { p = 1 }'; }
Q=(tc qdisc change dev "$NIC" root handle 1: arbtable)

# ------------------------------------------------ down at creation
tc qdisc del dev "$NIC" root 2>/dev/null
ip link set "$NIC" down
run tc qdisc add dev "$NIC" root handle 1: arbtable
tap_check "down, no rate: refused, saying the link speed is unknown (${RUN_ERR:-accepted})" \
	eval '[ "$RUN_RC" != 0 ] && grep -q "link speed is unknown" <<<"$RUN_ERR"'
run tc qdisc add dev "$NIC" root handle 1: arbtable rate 40mbit
tap_check "down, rate 40mbit: created (${RUN_ERR:-ok})" test "$RUN_RC" = 0
run tc class add dev "$NIC" parent 1: classid 1:10 arbtable rate 10mbit distance 8
tap_check "down: class 1:10 admitted (${RUN_ERR:-ok})" test "$RUN_RC" = 0
ip link set "$NIC" up
run "${Q[@]}" default 10
tap_check "up: an unrelated change (default 10) succeeds (${RUN_ERR:-ok})" test "$RUN_RC" = 0
tap_check "up: capacity stays the rate, 40Mbit ($(xs capacity))" test "$(xs capacity)" = 40Mbit
tc qdisc del dev "$NIC" root

# ------------------------------------------------ speed from the link
run ethtool -s "$NIC" speed 1000 duplex full
[ "$RUN_RC" = 0 ] || diag "ethtool -s $NIC speed 1000: $RUN_ERR"
sp=$(cat /sys/class/net/$NIC/speed 2>/dev/null)
tap_check "ethtool -s $NIC speed 1000 (the driver stores it): speed $sp" test "$sp" = 1000
run tc qdisc add dev "$NIC" root handle 1: arbtable
tap_check "no rate: capacity from the link, 1Gbit ($(xs capacity); ${RUN_ERR:-ok})" \
	eval '[ "$RUN_RC" = 0 ] && [ "$(xs capacity)" = 1Gbit ] && [ "$(xs link)" = 1Gbit ]'
run tc class add dev "$NIC" parent 1: classid 1:10 arbtable rate 100mbit distance 8
tap_check "class 1:10 rate 100mbit admitted (${RUN_ERR:-ok})" test "$RUN_RC" = 0
ethtool -s "$NIC" speed 100 duplex full
run "${Q[@]}" default 10
tap_check "speed 100 after admission: tc qdisc change default 10 succeeds (${RUN_ERR:-ok})" test "$RUN_RC" = 0
tap_check "speed 100: capacity kept at 1Gbit, link shown as 100Mbit, link_changes 1 ($(xs capacity), $(xs link), $(xs link_changes))" \
	eval '[ "$(xs capacity)" = 1Gbit ] && [ "$(xs link)" = 100Mbit ] && [ "$(xs link_changes)" = 1 ]'
run tc class change dev "$NIC" classid 1:10 arbtable rate 200mbit distance 8
tap_check "speed 100: the class's rate still changes against the kept capacity (${RUN_ERR:-ok})" test "$RUN_RC" = 0
ethtool -s "$NIC" speed 10000 duplex full
ip link set "$NIC" down && ip link set "$NIC" up
tap_check "speed 10000 then down/up: the link read again when it came up, link_changes 2 ($(xs link), $(xs link_changes))" \
	eval '[ "$(xs link)" = 10Gbit ] && [ "$(xs link_changes)" = 2 ]'
run "${Q[@]}" rate 0
tap_check "rate 0 (the link's 10Gbit) while 1:10 holds a reservation made against 1Gbit: refused (${RUN_ERR:-accepted})" \
	eval '[ "$RUN_RC" != 0 ] && grep -q "fixed while classes hold reservations" <<<"$RUN_ERR"'
tc class del dev "$NIC" classid 1:10
run "${Q[@]}" rate 0
tap_check "rate 0 with no reservation: the capacity becomes the link's 10Gbit (${RUN_ERR:-ok}; $(xs capacity))" \
	eval '[ "$RUN_RC" = 0 ] && [ "$(xs capacity)" = 10Gbit ]'
tc qdisc del dev "$NIC" root
# back to what the device reported at boot: unknown
ethtool -s "$NIC" speed 4294967295 2>/dev/null
tap_end
