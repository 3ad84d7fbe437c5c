#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What the kernel dumps, sent back, is accepted and changes nothing
# (issue 35, defect 4), at the netlink level, not through tc:
# build/nlfuzz/arbt_nlfuzz -T sends the qdisc's dumped TCA_OPTIONS back
# whole as a change and compares the dump and the capacity after; then
# the options libarbtable reads are given back to arbtable_qdisc_change().
# On a virtio-net NIC (vm.sh -n) whose speed `ethtool -s` sets:
# - auto mode without a rate (the capacity is the link's), no class: the
#   tables dump as empty nests;
# - the same with a class admitted (its slots in the HIGH table);
# - after the link's speed changed (a rate given would read it again and
#   is refused with classes admitted: EBUSY);
# - with the link down (a rate given would find no speed);
# - manual mode at the link speed with a table, and with a rate;
# - with a class and with a rate, the qdisc's and the classes' options
#   sent back with the PAD attributes an i386 kernel puts before 64-bit
#   ones (nla_put_u64_64bit()).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_net.sh"
tap_begin "dumps sent back at the netlink level change nothing"
tmp=$(mktemp -d)
NIC=$(net_nics | sed -n 2p)
# the other NIC on the QEMU hub: the hub takes a frame only when some
# other port can receive it, and a down virtio NIC stops refilling its
# receive ring, so while it is down, once its ring is full, $NIC's
# transmit queue stalls (NETDEV WATCHDOG) whatever the root qdisc; it
# is kept up for the test
OTHER=$(net_nics | sed -n 1p)
other_up=$(ip -br link show dev "$OTHER" 2>/dev/null | awk '{ print ($2 == "DOWN") ? 0 : 1 }')
cleanup() {
	rm -rf "$tmp"
	[ "${other_up:-1}" = 0 ] && ip link set "$OTHER" down 2>/dev/null
	[ -n "$NIC" ] || return
	tc qdisc del dev "$NIC" root 2>/dev/null
	ip link set "$NIC" up 2>/dev/null
	# back to the speed virtio-net reports at boot: unknown
	ethtool -s "$NIC" speed 4294967295 2>/dev/null
}
trap cleanup EXIT
have_arbtable || { tap_fail "roundtrip: module and plugin present"; tap_end; exit; }
FUZZ=${ARBT_NLFUZZ:-$ARBT_ROOT/build/nlfuzz/arbt_nlfuzz}
[ -x "$FUZZ" ] || { tap_fail "roundtrip: $FUZZ built (make all)"; tap_end; exit; }
[ -n "$NIC" ] || { tap_fail "roundtrip: two virtio-net NICs (vm.sh -n)"; tap_end; exit; }
# the same through libarbtable: the options arbtable_read() reports,
# given back to arbtable_qdisc_change() (built here as test_lib builds
# the library's example)
LIBRT=
if command -v gcc >/dev/null && [ -e "$ARBT_ROOT/build/lib/libarbtable.so" ]; then
	cat >"$tmp/librt.c" <<'CEOF'
#include <stdio.h>
#include <arbtable/arbtable.h>

int main(int argc, char **argv)
{
	struct arbtable *h = arbtable_open();
	struct arbtable_state *st = arbtable_state_new();
	struct arbtable_qdisc_opts o = { 0 };
	int err;

	if (!h || !st || argc < 2)
		return 2;
	err = arbtable_read(h, argv[1], st);
	if (!err && arbtable_state_qdisc_opts(st, &o, sizeof(o)) < 0)
		err = -1;
	if (!err)
		err = arbtable_qdisc_change(h, argv[1], &o, sizeof(o));
	printf("set 0x%x rate %llu mtu %u: rc %d %s\n", o.set,
	       (unsigned long long)o.rate, o.mtu, err,
	       err ? arbtable_errmsg(h) : "");
	return err ? 1 : 0;
}
CEOF
	gcc -O2 -Wall -I"$ARBT_ROOT/lib/include" -o "$tmp/librt" "$tmp/librt.c" \
		-L"$ARBT_ROOT/build/lib" -larbtable 2>"$tmp/librt.log" && LIBRT=$tmp/librt
	[ -n "$LIBRT" ] || diag "$(cat "$tmp/librt.log")"
fi
# xs KEY: the qdisc's xstats value after KEY
xs() { tc -s qdisc show dev "$NIC" | tr ' ' '\n' | awk -v k="$1" 'p { print; exit } $1 == k { p = 1 }'; }
# trip WHAT: one round trip at the netlink level, then one through the
# library, their TAP lines renumbered as ours
trip() {
	local out rc before after c1 c2
	out=$("$FUZZ" -d "$NIC" -T "$1" 2>&1); rc=$?
	diag "$(tc -d qdisc show dev "$NIC" | head -n 3)"
	diag "$out"
	tap_check "roundtrip: $1: accepted, dump and capacity unchanged" test "$rc" = 0
	if [ -z "$LIBRT" ]; then
		tap_fail "roundtrip: $1, through libarbtable: a program built against build/lib (gcc)"
		return
	fi
	before=$(tc -d qdisc show dev "$NIC"); c1=$(xs capacity)
	out=$(LD_LIBRARY_PATH=$ARBT_ROOT/build/lib "$LIBRT" "$NIC" 2>&1); rc=$?
	after=$(tc -d qdisc show dev "$NIC"); c2=$(xs capacity)
	diag "libarbtable: $out; capacity $c1 -> $c2"
	[ "$before" = "$after" ] || diag "before: $before
after: $after"
	tap_check "roundtrip: $1, through libarbtable: accepted, options and capacity unchanged" \
		eval '[ "$rc" = 0 ] && [ "$before" = "$after" ] && [ "$c1" = "$c2" ]'
}
# padtrip WHAT: the same at the netlink level, the qdisc's and every
# class's options sent back with an empty PAD attribute before each
# 64-bit one, as a kernel whose nla_put_u64_64bit() pads (i386) dumps them
padtrip() {
	local out rc
	out=$("$FUZZ" -d "$NIC" -T "$1" -P 2>&1); rc=$?
	diag "$out"
	tap_check "roundtrip: $1, with i386's pads: the qdisc's and classes' dumps accepted, unchanged" \
		test "$rc" = 0
}
setq() { tc qdisc del dev "$NIC" root 2>/dev/null; run tc qdisc add dev "$NIC" root handle 1: arbtable "$@" || diag "qdisc add $*: $RUN_ERR"; }

# the NIC's transmit watchdog (a queue stopped for 5 s) over the test
wd() { dmesg | grep -c "$NIC: NETDEV WATCHDOG"; }
wd0=$(wd)
ip link set "$OTHER" up
ip link set "$NIC" up
run ethtool -s "$NIC" speed 1000 duplex full
tap_check "roundtrip: ethtool -s $NIC speed 1000 ($RUN_ERR)" test "$RUN_RC" = 0

setq auto
trip "auto, capacity from the link, no class (empty tables)"
run tc class add dev "$NIC" parent 1: classid 1:10 arbtable rate 10mbit distance 8
tap_check "roundtrip: class 1:10 admitted (${RUN_ERR:-ok})" test "$RUN_RC" = 0
trip "auto, capacity from the link, class 1:10 in HIGH"
padtrip "auto, class 1:10 in HIGH"
ethtool -s "$NIC" speed 100 duplex full
trip "auto, the link's speed changed to 100 since"
ip link set "$NIC" down
trip "auto, the link down"
ip link set "$NIC" up
ethtool -s "$NIC" speed 1000 duplex full

setq manual
run tc class add dev "$NIC" parent 1: classid 1:10 arbtable &&
	run tc qdisc change dev "$NIC" root handle 1: arbtable high 10:4,10:4
tap_check "roundtrip: manual qdisc with class 1:10 in HIGH (${RUN_ERR:-ok})" test "$RUN_RC" = 0
ethtool -s "$NIC" speed 100 duplex full
trip "manual, capacity from the link, its speed changed since"
setq manual rate 40mbit
trip "manual, rate 40mbit"
padtrip "manual, rate 40mbit"
# traffic through the NIC after all this: its queue still transmits
tc qdisc del dev "$NIC" root 2>/dev/null
tx0=$(cat "/sys/class/net/$NIC/statistics/tx_packets")
python3 - "$NIC" <<'SEND'
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
frame = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01" + b"\x88\xb5" + bytes(46)
for _ in range(20):
    try:
        s.send(frame, socket.MSG_DONTWAIT)
    except OSError:
        pass
SEND
sleep 6
tx1=$(cat "/sys/class/net/$NIC/statistics/tx_packets")
tap_check "roundtrip: $NIC's queue transmits after the link and speed changes ($((tx1 - tx0)) of 20 frames sent)" \
	test "$((tx1 - tx0))" -ge 20
wd1=$(wd)
if [ "$wd1" != "$wd0" ]; then
	diag "$(dmesg | grep "$NIC: NETDEV WATCHDOG" | tail -n 3)"
fi
tap_check "roundtrip: no transmit watchdog on $NIC during the test ($((wd1 - wd0)) reports; $OTHER up)" \
	test "$wd1" = "$wd0"
tap_end
