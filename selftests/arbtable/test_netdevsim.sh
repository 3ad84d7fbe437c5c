#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# netdevsim as a device (issue 44): since 6.15 a device whose ops take
# the instance lock (netdevsim: queue management and shaper ops) is
# locked by tc and by the netdevice notifiers around the qdisc's calls,
# and the link settings must be read with the caller's lock
# (netif_get_link_ksettings): __ethtool_get_link_ksettings takes it
# again, a recursive lock (lockdep) and a task stuck for good.  veth and
# dummy take no such lock, so the other tests cannot see it.
#
# Two linked 4-queue netdevsims (A here, B in its own namespace; A's
# frames land in B's receive rings, a full ring stops A's queue).
# netdevsim has no get_link_ksettings: its speed is unknown, and the
# qdisc reads the link on each path anyway (the read fails after the
# lock assertion).  Every place the qdisc reads it, under traffic: tc
# add/change of a root and of mq's queues, default_qdisc making mq's
# queues in dev_activate, link up (NETDEV_UP), carrier changes from the
# peer (linkwatch's NETDEV_CHANGE), ifalias (NETDEV_CHANGE), mtu
# changes, a channel count change (mq's queues reset), devices deleted
# with their qdiscs.  A command that does not return in ARBT_NSIM_TMO
# seconds (a deadlock) fails the test and ends it, the kernel log shown.
# On the sanitizer kernel lockdep must be on and stay on (debug_locks);
# each phase's kernel log has no splat, and kmemleak finds nothing after.
# (Planted: __ethtool_get_link_ksettings in arbtable_compat.h; the first
# tc qdisc replace hung, lockdep "possible recursive locking detected".)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_debug.sh"
tap_begin "netdevsim: the instance lock on every path that reads the link"
NS=arbt-nsim
IDA=441
IDB=442
TMO=${ARBT_NSIM_TMO:-120}
A=
B=
dflt=$(sysctl -n net.core.default_qdisc)
cleanup() {
	[ ! -d "$PG" ] || pg_stop
	sysctl -qw net.core.default_qdisc="$dflt"
	echo $IDA >/sys/bus/netdevsim/del_device 2>/dev/null
	echo $IDB >/sys/bus/netdevsim/del_device 2>/dev/null
	ip netns del $NS 2>/dev/null
	true
}
trap cleanup EXIT

# trun CMD...: run (RUN_OUT, RUN_ERR, RUN_RC), in TMO seconds: a command
# stuck in the kernel holds RTNL or the instance lock for good, and every
# later one would wait on it; so the test ends here, the log shown
NRUN=0
trun() {
	local o e pid end=$((SECONDS + TMO))
	NRUN=$((NRUN + 1))
	o=$(mktemp)
	e=$(mktemp)
	"$@" >"$o" 2>"$e" &
	pid=$!
	while kill -0 $pid 2>/dev/null && [ $SECONDS -lt $end ]; do
		sleep 0.2
	done
	if kill -0 $pid 2>/dev/null; then
		tap_fail "netdevsim: each command returned within $TMO s ('$*' did not: a deadlock on RTNL or the instance lock)"
		tap_check "netdevsim: the kernel log has no splat" klog_clean
		# the cleanup would wait on the same lock
		trap - EXIT
		tap_end
		exit
	fi
	wait $pid
	RUN_RC=$?
	RUN_OUT=$(cat "$o")
	RUN_ERR=$(cat "$e")
	rm -f "$o" "$e"
	return $RUN_RC
}
# xs DEV KEY [PARENT]: the qdisc's xstats value after KEY (tc -s)
xs() {
	tc -s qdisc show dev "$1" ${3:+parent $3} | tr ' ' '\n' |
		awk -v k="$2" 'p { print; exit } $1 == k { p = 1 }'
}
# qmtu DEV: the mtu of each arbtable on DEV, one line each
qmtu() { tc -d qdisc show dev "$1" | sed -nE 's/^qdisc arbtable .* mtu ([0-9]+) .*/\1/p'; }
# sent DEV: packets the arbtables on DEV sent, summed
sent() {
	tc -s qdisc show dev "$1" |
		awk '$1 == "qdisc" { a = ($2 == "arbtable") } a && $1 == "Sent" { s += $4 } END { print s + 0 }'
}
# reach: datagrams from A reach B, and B answered A's ARP (no ping in
# the guest): B's received packets grew, A has B's address
reach() {
	local r0 r1 _
	r0=$(ip netns exec $NS cat /sys/class/net/"$B"/statistics/rx_packets)
	for _ in 1 2 3 4 5; do
		echo x 2>/dev/null >/dev/udp/192.0.2.2/9
		sleep 0.3
	done
	r1=$(ip netns exec $NS cat /sys/class/net/"$B"/statistics/rx_packets)
	diag "$B received $((r1 - r0)) packets; $(ip neigh show 192.0.2.2 dev "$A")"
	[ "$r1" -gt "$r0" ] && ip neigh show 192.0.2.2 dev "$A" | grep -q lladdr
}
# lockdep_on: lockdep is built in and has not turned itself off (after
# its first report it stops, and a later recursion would pass unseen)
lockdep_on() { grep -qE '^ *debug_locks: +1$' /proc/lockdep_stats; }
# phase NAME: the kernel log since the last phase has no splat, lockdep
# still on where the kernel has it
phase() {
	tap_check "netdevsim $1: no BUG/WARNING/KASAN/UBSAN/lockdep splat in the kernel log" klog_clean
	[ "$LOCKDEP" = 0 ] || tap_check "netdevsim $1: lockdep still on (debug_locks 1)" lockdep_on
	klog_mark
}
# flood DEV SECONDS: pktgen from every CPU (XPS: CPU n on queue n), so
# every queue and the peer's rings are busy
flood() {
	local th n=0
	pg_reset || return 1
	for th in 0 1 2 3; do
		[ -e "$PG/kpktgend_$th" ] || continue
		pg_add "$1" $th 1000 0 20 || return 1
		n=$((n + 1))
	done
	[ $n -gt 0 ] || return 1
	pg_start
}

if ! have_arbtable; then
	tap_fail "netdevsim: sch_arbtable module and tc plugin present"
	tap_end; exit
fi
# the kernel's own (the sanitizer kernel), else the one make all builds
# from Debian's 7.2 sources (mk/module.mk: Debian's images lack it),
# after psample, which it links to
nsim_ko=$ARBT_ROOT/build/$(uname -r)/netdevsim.ko
if ! modprobe netdevsim 2>/dev/null && [ -f "$nsim_ko" ]; then
	modprobe psample 2>/dev/null
	insmod "$nsim_ko" || diag "insmod $nsim_ko failed"
fi
if [ ! -w /sys/bus/netdevsim/new_device ]; then
	tap_fail "netdevsim: the module loaded (CONFIG_NETDEVSIM, or $nsim_ko from make all)"
	tap_end; exit
fi
LOCKDEP=0
if [ -r /proc/lockdep_stats ]; then
	LOCKDEP=1
	tap_check "netdevsim: lockdep on at the start (debug_locks 1)" lockdep_on
else
	diag "no lockdep in $(uname -r): deadlocks are seen as commands that do not return"
fi
klog_mark

# ------------------------------------------------------------ the pair
# RTNL free before anything here takes it: a command an earlier run left
# stuck in the kernel holds it for good (a second run in the same guest,
# as scripts/mutants.sh makes), and the cleanup would wait on it unseen
trun ip link set dev lo up
cleanup
ip netns add $NS
newdev() { # ID: its netdev's name, once udev has renamed it
	echo "$1 1 4" >/sys/bus/netdevsim/new_device || return 1
	udevadm settle 2>/dev/null
	ls "/sys/bus/netdevsim/devices/netdevsim$1/net/" 2>/dev/null | head -n1
}
A=$(newdev $IDA)
B=$(newdev $IDB)
if [ -z "$A" ] || [ -z "$B" ]; then
	tap_fail "netdevsim: two devices of 4 queues ($A, $B)"
	tap_end; exit
fi
ip link set "$B" netns $NS
exec {fda}</proc/self/ns/net {fdb}</run/netns/$NS
ifb=$(ip netns exec $NS cat /sys/class/net/"$B"/ifindex)
lrc=0
echo "$fda:$(cat /sys/class/net/"$A"/ifindex) $fdb:$ifb" >/sys/bus/netdevsim/link_device || lrc=1
exec {fda}<&- {fdb}<&-
sysctl -qw net.ipv6.conf."$A".disable_ipv6=1
ip netns exec $NS sysctl -qw net.ipv6.conf."$B".disable_ipv6=1
ip addr add 192.0.2.1/24 dev "$A"
ip netns exec $NS ip addr add 192.0.2.2/24 dev "$B"
ip link set "$A" up
ip netns exec $NS ip link set "$B" up
for q in 0 1 2 3; do echo $((1 << q)) >/sys/class/net/"$A"/queues/tx-$q/xps_cpus 2>/dev/null; done
tap_check "netdevsim: $A (4 queues) linked to $B in $NS (rc $lrc): carrier $(cat /sys/class/net/"$A"/carrier), datagrams arrive, ARP answered" \
	eval '[ "$lrc" = 0 ] && reach'
run /usr/sbin/ethtool "$A"
diag "ethtool $A: $(grep -E 'Speed|Link detected' <<<"$RUN_OUT$RUN_ERR" | tr -d '\t' | tr '\n' ' ') (netdevsim has no get_link_ksettings: the speed is unknown)"

# ----------------------------------------- arbtable as the port's root
# without a rate: auto mode refuses, the link speed being unknown (only
# default_qdisc makes one without options: unshaped, nothing to admit
# against); with a rate: admits against it
trun tc qdisc replace dev "$A" root handle 1: arbtable
tap_check "root: arbtable without a rate, the speed unknown: refused, saying so (${RUN_ERR:-accepted})" \
	eval '[ "$RUN_RC" != 0 ] && grep -q "link speed is unknown" <<<"$RUN_ERR"'
trun tc qdisc replace dev "$A" root handle 1: arbtable auto
tap_check "root: auto (given) without a rate: refused, saying so (${RUN_ERR:-accepted})" \
	eval '[ "$RUN_RC" != 0 ] && grep -q "link speed is unknown" <<<"$RUN_ERR"'
trun tc qdisc replace dev "$A" root handle 1: arbtable auto rate 50mbit
ok=$RUN_RC
trun tc class add dev "$A" parent 1: classid 1:10 arbtable rate 10mbit distance 8
ok=$((ok | RUN_RC))
trun tc qdisc change dev "$A" root handle 1: arbtable default 10
tap_check "root: auto rate 50mbit, class 1:10 admitted, default 10 (${RUN_ERR:-ok}; capacity $(xs "$A" capacity))" \
	eval '[ $((ok | RUN_RC)) = 0 ] && [ "$(xs "$A" capacity)" = 50Mbit ]'
s0=$(sent "$A")
flood "$A" || diag "pktgen producers not started"
m0=$(qmtu "$A")
trun ip link set "$A" mtu 4000
m1=$(qmtu "$A")
trun tc qdisc change dev "$A" root handle 1: arbtable default 10
c1=$RUN_RC
trun ip link set "$A" mtu 1500
m2=$(qmtu "$A")
tap_check "root under traffic: mtu 4000 and back followed ($m0 -> $m1 -> $m2), a change in between (rc $c1)" \
	eval '[ "$m0" = 1514 ] && [ "$m1" = 4014 ] && [ "$m2" = 1514 ] && [ "$c1" = 0 ]'
trun ip link set "$A" down
r1=$RUN_RC
trun ip link set "$A" up
r1=$((r1 | RUN_RC))
# the peer's down/up: A's carrier, through linkwatch (NETDEV_CHANGE)
trun ip netns exec $NS ip link set "$B" down
r1=$((r1 | RUN_RC))
trun ip netns exec $NS ip link set "$B" up
r1=$((r1 | RUN_RC))
# ifalias in sysfs: NETDEV_CHANGE from netdev_state_change()
trun sh -c "echo arbt-nsim >/sys/class/net/$A/ifalias"
r1=$((r1 | RUN_RC))
trun ip link set "$A" alias arbt-nsim-2
r1=$((r1 | RUN_RC))
sleep 1
s1=$(sent "$A")
pg_stop
tap_check "root under traffic: down/up, the peer's down/up (carrier), ifalias and alias (rc $r1); packets sent $s0 -> $s1" \
	eval '[ "$r1" = 0 ] && [ "$s1" -gt "$s0" ] && [ "$(cat /sys/class/net/$A/carrier)" = 1 ]'
tap_check "root: the qdisc survived it, capacity still 50Mbit, link unknown ($(xs "$A" capacity), link_changes $(xs "$A" link_changes))" \
	eval '[ "$(xs "$A" capacity)" = 50Mbit ] && [ "$(xs "$A" link_changes)" = 0 ]'
phase root

# ------------------------------------------ mq, one arbtable per queue
trun tc qdisc del dev "$A" root
trun tc qdisc add dev "$A" root handle 1: mq
trun tc qdisc add dev "$A" parent 1:1 handle 10: arbtable auto
tap_check "mq: a queue's auto arbtable without a rate, the speed unknown: refused (${RUN_ERR:-accepted})" \
	eval '[ "$RUN_RC" != 0 ] && grep -q "link speed is unknown" <<<"$RUN_ERR"'
ok=0
for q in 1 2 3 4; do
	trun tc qdisc replace dev "$A" parent 1:$q handle $((q * 10)): arbtable auto rate 10mbit burst 3000
	ok=$((ok | RUN_RC))
	trun tc class add dev "$A" parent $((q * 10)): classid $((q * 10)):10 arbtable rate 2mbit distance 8
	ok=$((ok | RUN_RC))
	trun tc qdisc change dev "$A" parent 1:$q handle $((q * 10)): arbtable default 10
	ok=$((ok | RUN_RC))
done
n=$(tc qdisc show dev "$A" | grep -c '^qdisc arbtable ')
tap_check "mq: four auto arbtables with rate 10mbit, a class admitted in each ($n; ${RUN_ERR:-ok})" \
	eval '[ "$ok" = 0 ] && [ "$n" = 4 ]'
s0=$(sent "$A")
flood "$A" || diag "pktgen producers not started"
trun ip link set "$A" mtu 2000
m1=$(qmtu "$A" | sort -u | tr '\n' ' ')
trun ip link set "$A" mtu 1500
m2=$(qmtu "$A" | sort -u | tr '\n' ' ')
tap_check "mq under traffic: the four queues follow mtu 2000 and back ($m1-> $m2)" \
	eval '[ "$m1" = "2014 " ] && [ "$m2" = "1514 " ]'
r1=0
for c in 2 4; do
	# fewer channels: mq's upper queues reset (qdisc_reset_all_tx_gt)
	trun /usr/sbin/ethtool -L "$A" combined $c
	r1=$((r1 | RUN_RC))
done
for cmd in "ip link set $A down" "ip link set $A up" "ip netns exec $NS ip link set $B down" \
	"ip netns exec $NS ip link set $B up"; do
	trun $cmd
	r1=$((r1 | RUN_RC))
done
trun tc qdisc change dev "$A" parent 1:2 handle 20: arbtable default 10
r1=$((r1 | RUN_RC))
sleep 1
s1=$(sent "$A")
pg_stop
n=$(tc qdisc show dev "$A" | grep -c '^qdisc arbtable ')
tap_check "mq under traffic: channels 2 and 4 again, down/up, the peer's down/up, a change (rc $r1); $n arbtables, packets sent $s0 -> $s1" \
	eval '[ "$r1" = 0 ] && [ "$n" = 4 ] && [ "$s1" -gt "$s0" ]'
phase mq

# ---------------------- default_qdisc: mq's queues made in dev_activate
sysctl -qw net.core.default_qdisc=arbtable
# the root deleted: qdisc_graft's dev_activate makes mq and its queues,
# under tc's instance lock
trun tc qdisc del dev "$A" root
r1=$RUN_RC
trun ip link set "$A" down
r1=$((r1 | RUN_RC))
trun ip link set "$A" up
r1=$((r1 | RUN_RC))
sysctl -qw net.core.default_qdisc="$dflt"
n=$(tc qdisc show dev "$A" | grep -c '^qdisc arbtable ')
s0=$(sent "$A")
ip neigh flush dev "$A"
rc=1
reach && rc=0
s1=$(sent "$A")
tap_check "default_qdisc arbtable: root deleted, down/up: mq with $n arbtables, unshaped, datagrams and ARP through them (rc $r1, reach $rc, sent $s0 -> $s1)" \
	eval '[ "$r1" = 0 ] && [ "$n" = 4 ] && [ "$rc" = 0 ] && [ "$s1" -gt "$s0" ]'
phase default_qdisc

# -------------------------------- the devices deleted with their qdiscs
trun tc qdisc replace dev "$A" root handle 1: arbtable auto rate 50mbit
r1=$RUN_RC
trun ip netns exec $NS tc qdisc replace dev "$B" root handle 1: mq
r1=$((r1 | RUN_RC))
trun ip netns exec $NS tc qdisc replace dev "$B" parent 1:1 handle 10: arbtable auto rate 10mbit
r1=$((r1 | RUN_RC))
flood "$A" || diag "pktgen producers not started"
sleep 1
pg_stop
trun sh -c "echo $IDA >/sys/bus/netdevsim/del_device && echo $IDB >/sys/bus/netdevsim/del_device"
r1=$((r1 | RUN_RC))
tap_check "netdevsim: both devices deleted with arbtables on them (rc $r1${RUN_ERR:+; $RUN_ERR})" \
	eval '[ "$r1" = 0 ] && [ ! -e /sys/bus/netdevsim/devices/netdevsim$IDA ]'
phase delete
# trun's check where no command stuck (it fails, and ends the test, at
# the first that does)
tap_check "netdevsim: each command returned within $TMO s ($NRUN commands under the locks)" \
	test "$NRUN" -gt 0
# what the devices' and qdiscs' teardown left (kmemleak reports objects
# older than 5 s)
if have_kmemleak; then
	tap_check "netdevsim: kmemleak: no unreferenced object" kmemleak_clean 5
fi
tap_end
