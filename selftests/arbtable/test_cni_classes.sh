#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# arbtable-cni's shared classes (issue 28 item 3), driven as a runtime
# drives the plugin (see test_cni.sh):
#
# The system class.  The root the plugin creates has a system class as
# its default (here systemClass rate 20% of 10mbit): capacity leaves it
# out (its slot is not free); two
# reserved tenants flood UDP at twice the link each while a TCP flow of
# the host (root namespace, unmarked) keeps at least the system class's
# rate, all of it in the system class; with the qdisc's default cleared
# (the control) the same host flow starves.
#
# The shared best-effort class.  120 containers that ask for nothing,
# beside the two reserved ones, on one device: every ADD succeeds, they
# share one class (one fw filter, each veth marking with its mark), a
# member's traffic is counted in it and not in the system class, CHECK
# passes; the class stays until the last member's DEL and goes with it;
# a class whose only member died before writing its state goes at the
# next DEL.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_net.sh"
. "$(dirname "$0")/lib_cni.sh"
tap_begin "arbtable-cni: the system class keeps the host's floor under saturation; 120 best-effort pods share one class"
tmp=$(mktemp -d)
NBE=${ARBT_CNI_BE_PODS:-120}
TENANTS="ra rb be"
ip3_pids=
cleanup() {
	[ -n "$ip3_pids" ] && kill $ip3_pids 2>/dev/null
	ip netns pids $NET_RX 2>/dev/null | xargs -r kill 2>/dev/null
	for i in $(seq 1 $((NBE - 1))); do echo "netns del arbt-b$i"; done | ip -force -batch - >/dev/null 2>&1
	net_teardown $TENANTS
	rm -rf "$tmp"
}
trap cleanup EXIT
cni_begin "cni classes"
mkdir -p "$SD"

conf() {
	printf '{"cniVersion":"1.0.0","name":"tenants","type":"arbtable-cni","device":"%s","stateDir":"%s","qdisc":{"rate":"10mbit","burst":"30k","highlimit":16},"systemClass":{"rate":"20%%"},"defaultShare":2%s}' \
		"$NET" "$SD" "${1:+,$1}"
}
# jf FILE FILTER...: each jq FILTER's raw output on the JSON in FILE, one
# a line (empty where it fails or is null); jq, not python: a lighter
# process to start in a slow guest
jf() {
	local f=$1 e v
	shift
	for e; do
		v=$(jq -r "($e) // empty" "$f" 2>/dev/null)
		echo "$v"
	done
}
# class_bytes CLASSID: bytes the class has sent; class_drops: its drops
class_bytes() { cls_stats "$NET" arbtable | awk -v c="$1" '$1 == c { print $2 }'; }
class_drops() { cls_stats "$NET" arbtable | awk -v c="$1" '$1 == c { print $4 }'; }
# unclassified: packets the qdisc's internal queue has taken
unclassified() { "$CTL" --json show "$NET" | jq -r ".unclassified.packets // empty" 2>/dev/null; }

for t in ra:1 rb:2 be:3; do
	net_tenant "${t%:*}" "${t#*:}" || { tap_fail "cni classes: tenant namespace ${t%:*}"; tap_end; exit; }
done

# ---- the root and its system class
cni ADD ra /run/netns/arbt-ra "$(conf '"runtimeConfig":{"arbtable":{"rate":"2mbit","distance":4}}')"
r1=$RC
cni ADD rb /run/netns/arbt-rb "$(conf '"runtimeConfig":{"arbtable":{"rate":"2mbit","distance":4}}')"
tap_check "ADD ra, rb (rate 2mbit distance 4 each): exit 0 ($r1, $RC)" test "$r1:$RC" = 0:0
[ "$r1:$RC" = 0:0 ] || diag "$OUT $(cat "$tmp/stderr")"
diag "$(tc qdisc show dev "$NET" | grep arbtable; tc class show dev "$NET")"
tap_check "the root the plugin created has default ff" \
	bash -c 'tc qdisc show dev "$1" | grep -qE "^qdisc arbtable 1: root .*default ff( |$)"' _ "$NET"
tap_check "system class 1:ff: rate 2Mbit (20% of 10mbit), distance 64 asked" \
	bash -c 'tc class show dev "$1" classid 1:ff | grep -qE "rate 2Mbit .*distance 64( |$)"' _ "$NET"

# ---- capacity leaves it out
"$CTL" --json capacity "$NET" >"$tmp/cap.json"
"$CTL" --json show "$NET" >"$tmp/show.json"
sys_slots=$(jf "$tmp/show.json" '[.classes[] | select(.handle == "1:ff") | .stats.high_slot_count][0]')
all_slots=$(jf "$tmp/show.json" '[.classes[].stats.high_slot_count] | add')
free_slots=$(jf "$tmp/cap.json" .high.free_slots)
diag "capacity: $(cat "$tmp/cap.json")"
tap_check "capacity: the system class's $sys_slots HIGH slot(s) are not free ($free_slots free + $all_slots held = 64)" \
	fcmp "${sys_slots:-0} > 0 && $((free_slots + all_slots)) == 64"

# ---- saturation: the host's TCP flow keeps its floor
# host_flow N: the host's TCP flow to the receiver while ra and rb flood
# UDP at 20 Mbit/s each.  The host's connections are up before the
# floods start, and both outlast the window (killed after it): a starved
# SYN would only delay the test until the floods stop and measure an
# empty link.  The window (WIN s, its length as measured in ELAPSED)
# opens once both floods' classes drop (backlogged): HOSTBPS is the
# host's TCP goodput in it (bytes the receiver acknowledged, from ss),
# HOSTB the bytes the system class sent, UNCL the packets the
# unclassified queue sent, DROPS the packets ra's and rb's classes
# dropped, OFFERED the bit/s each flood offered ("A B"), counted where
# its packets enter the root namespace (vh-ra, vh-rb rx_bytes: upstream
# of the qdisc, whatever it does with them).
WIN=10
# vh_rx T: bytes tenant T's veth has received from its namespace
vh_rx() { cat "/sys/class/net/vh-$1/statistics/rx_bytes" 2>/dev/null || echo 0; }
# host_acked: bytes the receiver acknowledged on the host's data connection
host_acked() {
	ss -Htin state established '( dport = :5301 )' |
		grep -o 'bytes_acked:[0-9]*' | cut -d: -f2 | sort -n | tail -n1
}
host_flow() {
	local p=$1 da0 db0 b0 b1 n0 n1 a0 a1 t0 t1 hp ra0 rb0 ra1 rb1 v0 v1
	# every sender runs until killed after the window: in a slow guest
	# the waits before it took long enough for a 90 s client to end
	# inside it (no connection left to read: -10000600 bit/s computed)
	iperf3 -c $NET_RX_ADDR -p 5301 -t 3600 >/dev/null 2>&1 &
	hp=$!
	# the control and the data connection established
	for _ in $(seq 50); do
		[ "$(ss -Htn state established '( dport = :5301 )' | wc -l)" -ge 2 ] && break
		sleep 0.1
	done
	da0=$(class_drops "$CRA") db0=$(class_drops "$CRB")
	# each round's floods have servers of their own: a server whose
	# client was killed at the end of the last round may still be
	# closing that test, and reset the next client's control connection
	ip netns exec arbt-ra iperf3 -c $NET_RX_ADDR -p $((5300 + 2 * p)) -u -b 20M -l 1400 -t 3600 >"$tmp/ra.$p" 2>&1 &
	ip3_pids+=" $!"
	ip netns exec arbt-rb iperf3 -c $NET_RX_ADDR -p $((5301 + 2 * p)) -u -b 20M -l 1400 -t 3600 >"$tmp/rb.$p" 2>&1 &
	ip3_pids+=" $!"
	for _ in $(seq 100); do
		[ "$(class_drops "$CRA")" -gt "${da0:-0}" ] && [ "$(class_drops "$CRB")" -gt "${db0:-0}" ] && break
		sleep 0.1
	done
	da0=$(class_drops "$CRA") db0=$(class_drops "$CRB")
	a0=$(host_acked) b0=$(class_bytes 1:ff) n0=$(unclassified)
	ra0=$(vh_rx ra) rb0=$(vh_rx rb) v0=${EPOCHREALTIME/,/.}
	t0=$(date +%s.%N)
	sleep $WIN
	ra1=$(vh_rx ra) rb1=$(vh_rx rb) v1=${EPOCHREALTIME/,/.}
	a1=$(host_acked) b1=$(class_bytes 1:ff) n1=$(unclassified)
	t1=$(date +%s.%N)
	DROPS="$(($(class_drops "$CRA") - ${da0:-0})) $(($(class_drops "$CRB") - ${db0:-0}))"
	kill $ip3_pids $hp 2>/dev/null
	wait $ip3_pids $hp 2>/dev/null
	ip3_pids=
	ELAPSED=$(fcalc "$t1 - $t0") HOSTACK0=${a0:-} HOSTACK1=${a1:-}
	HOSTB=$((${b1:-0} - ${b0:-0})) UNCL=$((${n1:-0} - ${n0:-0}))
	# no goodput without the connection at both ends of the window
	HOSTBPS=none
	[ -n "$a0" ] && [ -n "$a1" ] && HOSTBPS=$(fcalc "($a1 - $a0) * 8 / $ELAPSED")
	OFFERED="$(fcalc "(${ra1:-0} - ${ra0:-0}) * 8 / ($v1 - $v0)" | sed 's/\..*//') $(fcalc "(${rb1:-0} - ${rb0:-0}) * 8 / ($v1 - $v0)" | sed 's/\..*//')"
	diag "window of $ELAPSED s: the host's TCP goodput $HOSTBPS bit/s ($((${a1:-0} - ${a0:-0})) B acknowledged, ${a0:-none} before); system class sent $HOSTB B, the unclassified queue $UNCL packets; ra, rb offered $OFFERED bit/s at their veths and their classes dropped $DROPS; floods: $(grep -h -m1 -iE 'error|refused' "$tmp/ra.$p" "$tmp/rb.$p" | tr '\n' ' ')"
}
# flooded: each flood offered at least half the qdisc's 10 Mbit/s at its
# veth (together more than the link: the tenants' classes stay
# backlogged), measured upstream of the qdisc
flooded() { set -- $OFFERED; fcmp "${1:-0} >= 5000000 && ${2:-0} >= 5000000"; }
CRA=$(jq -r .class.handle "$SD/ra-eth0.json")
CRB=$(jq -r .class.handle "$SD/rb-eth0.json")
# iperf3 servers in the receiver, listening before any client starts:
# the host's flow on 5301 (a daemon serves both rounds), each round's two
# floods on ports of their own (5302-5303, then 5304-5305)
for q in 5301 5302 5303 5304 5305; do
	ip netns exec $NET_RX iperf3 -s -D -p $q >/dev/null 2>&1
done
for _ in $(seq 50); do
	[ "$(ip netns exec $NET_RX ss -Hltn 'sport >= :5301 and sport <= :5305' | wc -l)" -ge 5 ] && break
	sleep 0.2
done
host_flow 1
# the class's rate is in bytes on the wire; TCP goodput is 1448 of
# every 1514 of them
floor=$((2000000 * 1448 / 1514))
# both checks need floods that fill the link: where the guest could not
# send them (a loaded TCG host), measured at the tenants' veths before
# the qdisc, a check is a skip naming that; a qdisc that had the floods
# and gave the host less, or more, fails
if flooded; then
	tap_measure "host TCP beside two UDP floods (ra, rb offered $OFFERED bit/s, dropped $DROPS): $HOSTBPS bit/s >= the system class's 2 Mbit/s in goodput ($floor)" \
		eval '[ "$HOSTBPS" != none ] && fcmp "$HOSTBPS >= $floor"'
else
	tap_skip "host TCP keeps the system class's floor beside two UDP floods" \
		"ra and rb offered only $OFFERED bit/s at their veths (upstream of the qdisc), less than 5 Mbit/s each: the guest could not send the floods (host $HOSTBPS bit/s)"
fi
tap_check "the host's flow went through the system class ($HOSTB B in $ELAPSED s, 90% of its rate at least), not the unclassified queue ($UNCL packets)" \
	fcmp "$HOSTB >= $ELAPSED * 2000000 / 8 * 0.9 && $UNCL < 50"
# control: without the default, the host's traffic goes to the internal
# queue, served only when no class is eligible
tc qdisc change dev "$NET" root arbtable default 0
diag "control's root: $(tc -d qdisc show dev "$NET" | grep arbtable)"
host_flow 2
# the control proves something only while the floods fill the link: a
# guest too slow to send them gives the unclassified queue the gaps
at=start
[ -n "$HOSTACK0" ] && at=end
if [ -z "$HOSTACK0" ] || [ -z "$HOSTACK1" ]; then
	tap_fail "control: the host's TCP connection was up through the window (ss saw none at its $at: nothing measured)"
elif flooded; then
	tap_measure "control: with the default cleared, the same host flow starves beside the floods (ra, rb offered $OFFERED bit/s, dropped $DROPS): $HOSTBPS bit/s < 20% of $floor" \
		fcmp "$HOSTBPS < 0.2 * $floor"
else
	tap_skip "control: with the default cleared, the host flow starves" \
		"ra and rb offered only $OFFERED bit/s at their veths (upstream of the qdisc), less than 5 Mbit/s each: the guest could not send the floods (host $HOSTBPS bit/s)"
fi
tc qdisc change dev "$NET" root arbtable default ff

# ---- 120 best-effort pods beside the reserved ones: "be" (addressed,
# it sends below) and b1 .. b119 (a namespace and a veth each)
for i in $(seq 1 $((NBE - 1))); do
	echo "netns add arbt-b$i"
	echo "link add vh-b$i type veth peer name eth0 netns arbt-b$i"
done | ip -force -batch - || { tap_fail "cni classes: $NBE pod namespaces"; tap_end; exit; }
# many CMD: CMD for b1 .. b(NBE-1), four runtimes at once (the lock
# serializes their kernel work; starting the plugin is most of the time
# under TCG); NOK the exits 0, the failures' output in the diagnostics
many() {
	local cmd=$1 k i c
	c=$(conf)
	rm -f "$tmp"/many.*
	for k in 0 1 2 3; do
		for ((i = k + 1; i < NBE; i += 4)); do
			cni "$cmd" "b$i" "/run/netns/arbt-b$i" "$c"
			[ "$RC" = 0 ] && echo ok || echo "$cmd b$i: $OUT"
		done >"$tmp/many.$k" &
	done
	wait
	NOK=$(cat "$tmp"/many.* | grep -cx ok)
	grep -vhx ok "$tmp"/many.* | head -n 5 | sed 's/^/# /'
}
t0=$(date +%s)
cni ADD be /run/netns/arbt-be "$(conf)"
r1=$RC
many ADD
nok=$((NOK + (r1 == 0)))
diag "$NBE best-effort ADDs in $(($(date +%s) - t0)) s"
tap_check "$NBE ADDs of pods that ask for nothing, beside 2 reserved: all exit 0 ($nok)" test "$nok" = "$NBE"
bef=$SD/.besteffort-$NET.json
{ read -r bcls; read -r bmark; } < <(jf "$bef" .class.handle .mark)
diag "shared class $bcls mark $(printf '0x%x' "${bmark:-0}"); $(tc class show dev "$NET")"
tap_check "one shared class $bcls (share 2): 4 classes on $NET (system, ra, rb, shared)" \
	bash -c '[ "$(tc class show dev "$1" | grep -c "^class arbtable ")" = 4 ] &&
		tc class show dev "$1" classid "$2" | grep -qE "share 2( |$)"' _ "$NET" "$bcls"
tap_check "one fw filter for the shared class's mark, 3 in all (ra, rb, shared)" \
	bash -c '[ "$(tc filter show dev "$1" parent 1: | grep -c "classid $2")" = 1 ] &&
		[ "$(tc filter show dev "$1" parent 1: | grep -c " classid ")" = 3 ]' _ "$NET" "$bcls"
# every member's veth, one tc: NBE mark actions, all with the mark
marks() {
	{ echo "filter show dev vh-be ingress"
	  seq -f 'filter show dev vh-b%g ingress' 1 $((NBE - 1)); } |
		tc -d -batch - 2>&1 | grep -E " mark " | grep -cE "mark (0x0*$(printf '%x' "$bmark")|$bmark)/"
}
nmarks=$(marks)
tap_check "each of the $NBE members' veths marks its packets with the shared class's mark ($nmarks)" test "$nmarks" = "$NBE"
"$CTL" --json capacity "$NET" >"$tmp/cap2.json"
{ read -r cfree; read -r hfree; } < <(jf "$tmp/cap2.json" .classes_free .high.free_slots)
tap_check "capacity: $cfree classes left with $NBE pods (64 - 4)" test "$cfree" = 60
# HIGH capacity has not moved: the shared class lives in the LOW table
tap_check "capacity: HIGH free slots with $NBE best-effort pods are those before them ($free_slots)" \
	test "$hfree" = "$free_slots"
cni CHECK be /run/netns/arbt-be "$(conf '"prevResult":{"cniVersion":"1.0.0"}')"
tap_check "CHECK of a member: exit 0" test "$RC:$OUT" = "0:"
[ "$RC" = 0 ] || diag "CHECK be: $OUT"

# a member's traffic is counted in the shared class
ip netns exec $NET_RX iperf3 -s -1 -p 5321 >/dev/null 2>&1 &
ip3_pids+=" $!"
sleep 1
s0=$(class_bytes "$bcls") y0=$(class_bytes 1:ff)
ip netns exec arbt-be iperf3 -c $NET_RX_ADDR -p 5321 -u -b 1M -l 1000 -t 3 -J >"$tmp/be.json" 2>/dev/null
s1=$(class_bytes "$bcls") y1=$(class_bytes 1:ff)
wait $ip3_pids 2>/dev/null
ip3_pids=
sent=$(jf "$tmp/be.json" .end.sum.bytes)
diag "member be sent ${sent:-?} B of UDP payload; shared class +$((s1 - s0)) B, system class +$((y1 - y0)) B"
tap_check "a member's UDP (${sent:-?} B payload) is in the shared class (+$((s1 - s0)) B), not in the system class (+$((y1 - y0)) B)" \
	fcmp "${sent:-0} > 0 && $((s1 - s0)) >= ${sent:-0} && $((y1 - y0)) < ${sent:-0} / 10"

# ---- DEL: the class stays while members remain
t0=$(date +%s)
many DEL
ndel=$NOK
diag "$((NBE - 1)) DELs in $(($(date +%s) - t0)) s"
tap_check "DEL of $((NBE - 1)) members: all exit 0 ($ndel), the shared class and its fw filter stay for the last one" \
	bash -c '[ "$1" = "$2" ] && tc class show dev "$3" classid "$4" | grep -q . &&
		tc filter show dev "$3" parent 1: | grep -q "classid $4" && [ -f "$5" ]' _ "$ndel" $((NBE - 1)) "$NET" "$bcls" "$bef"
cni DEL be /run/netns/arbt-be "$(conf)"
be_gone() {
	! tc class show dev "$NET" | grep -q "^class arbtable $bcls " &&
		! tc filter show dev "$NET" parent 1: | grep -q "classid $bcls" &&
		[ ! -e "$bef" ] && [ "$(tc class show dev "$NET" | grep -c '^class arbtable ')" = 3 ] && return 0
	diag "$(tc class show dev "$NET"; tc filter show dev "$NET" parent 1:; ls -a "$SD")"
	return 1
}
tap_check "DEL of the last member ($RC): the shared class, its fw filter and its file are gone; system, ra, rb stay" be_gone
tap_check "the state directory holds ra's and rb's files only" \
	test "$(find "$SD" -mindepth 1 ! -name lock -printf '%f\n' | sort | tr '\n' ' ')" = "ra-eth0.json rb-eth0.json "

# ---- a member that died before writing its state: the next DEL collects
cni ADD b1 /run/netns/arbt-b1 "$(conf)"
r1=$RC
rm -f "$SD/b1-eth0.json"
cni DEL nobody - "$(conf)"
tap_check "ADD b1 ($r1), its state lost (a plugin killed before writing it): DEL of another container ($RC) removes the memberless class" be_gone

cni DEL ra /run/netns/arbt-ra "$(conf)"
r1=$RC
cni DEL rb /run/netns/arbt-rb "$(conf)"
tap_check "DEL ra, rb ($r1, $RC): the system class alone stays with the root" \
	bash -c '[ "$1:$2" = 0:0 ] && [ "$(tc class show dev "$3" | grep -c "^class arbtable ")" = 1 ] &&
		tc class show dev "$3" | grep -q "^class arbtable 1:ff "' _ "$r1" "$RC" "$NET"
tap_end
