#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# GSO at high rates.  With 'mtu' not given the qdisc follows the device:
# below 1gbit its frame (a GSO skb is split at enqueue), from 1gbit up a
# whole 64 KiB GSO skb (gso_max_size + link header + room for the
# segments' headers), so that TCP's GSO skbs are dequeued whole and the
# bounds are those of such an skb.  On a veth pair with TSO (the QEMU
# hub's virtio-net has no offloads, so TCP sends it no GSO skb): the mtu
# taken at 10gbit, TCP dequeued whole (no split, more than a frame per
# packet), a latency such skbs cannot meet refused; a lowered
# gso_max_size read at the next change; 'mtu 1514' pinned: split, one
# frame per packet, the latency admitted; 'mtu 0' with that class: the
# class broken; the frame below 1gbit.  The lockless root (issue 46) on
# the same veth, of 4 queues: whole at 10gbit, plain and through VXLAN.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_net.sh"
. "$(dirname "$0")/lib_debug.sh"
tap_begin "gso default: whole GSO skbs from 1gbit, split below, gso_max_size followed"
tmp=$(mktemp -d)
DEV=ag0
NS=arbt-gso
cleanup() {
	ip link del vx0 2>/dev/null
	veth_peer_del $DEV $NS
	rm -rf "$tmp"
}
trap cleanup EXIT
have_arbtable || { tap_fail "gso: module and plugin present"; tap_end; exit; }
veth_peer_del $DEV $NS
if ! VETH_QUEUES=4 veth_peer $DEV ag1 $NS 10.98.0; then tap_fail "gso: veth pair with TSO"; tap_end; exit; fi
diag "veth $DEV: $(net_offloads $DEV)"
sleep 0.5

xs() { tc -s qdisc show dev $DEV | tr ' ' '\n' | awk -v k="$1" 'p { print $1 + 0; exit } $1 == k { p = 1 }'; }
qmtu() { tc -d qdisc show dev $DEV | sed -nE 's/.* mtu ([0-9]+) .*/\1/p'; }
frame=$(($(cat /sys/class/net/$DEV/mtu) + 14))
gso0=$(ip -d link show dev $DEV | sed -nE 's/.* gso_max_size ([0-9]+).*/\1/p')
gso0=${gso0:-65536}
diag "device: frame $frame, gso_max_size $gso0"
whole() { # GSO_MAX_SIZE: the mtu followed from 1gbit up, room for 72
	# bytes of headers per 536 bytes of payload
	local g=$1
	g=$((g + 14 + (g + 535) / 536 * 72))
	if [ "$g" -gt "$frame" ]; then echo "$g"; else echo "$frame"; fi
}
want=$(whole "$gso0")

# tcp_run [ADDR [IPERF3-ARGS...]]: 3 s of TCP through the qdisc (to
# 10.98.0.2 unless ADDR); "split_delta bytes skbs goodput", bytes and skbs
# as the veth sent them (it counts an skb, GSO or not, once)
st() { cat /sys/class/net/$DEV/statistics/"$1"; }
tcp_run() {
	local s0 b0 p0 a=${1:-10.98.0.2}
	shift
	s0=$(xs split)
	b0=$(st tx_bytes) p0=$(st tx_packets)
	iperf3 -c "$a" -p 5201 -t 3 -J "$@" >"$tmp/t.json" 2>/dev/null
	echo "$(($(xs split) - s0)) $(($(st tx_bytes) - b0)) $(($(st tx_packets) - p0)) $(ip3_rx_bps "$tmp/t.json")"
}
per_pkt() { echo $(($2 / ($3 > 0 ? $3 : 1))); } # split bytes packets
# whole_run NAME FRAMES [ADDR [IPERF3-ARGS...]]: tcp_run, then its checks:
# TCP flows, no GSO skb is split, the veth's skbs average above FRAMES
# frames
whole_run() {
	local name=$1 frames=$2 r split bytes pkts gp
	shift 2
	r=$(tcp_run "$@")
	read -r split bytes pkts gp <<<"$r"
	diag "$name: TCP $gp bit/s; GSO skbs split +$split; the veth sent $bytes bytes in $pkts skbs"
	tap_check "gso: $name: TCP flows ($gp bit/s)" fcmp "${gp:-0} > 2000000"
	tap_check "gso: $name: no GSO skb split (split +$split)" test "$split" = 0
	tap_check "gso: $name: whole skbs sent: $(per_pkt $r) bytes per skb, above $frames frame(s) of $frame" \
		fcmp "$pkts > 0 && $bytes / $pkts > $frames * $frame"
}

# gso_root OPTS...: a root arbtable with OPTS, class 1:10 rate 1gbit and
# default 10; ok 0 when all three were taken (RUN_ERR the last error)
gso_root() {
	run tc qdisc add dev $DEV root handle 1: arbtable "$@"
	ok=$RUN_RC
	run tc class add dev $DEV parent 1: classid 1:10 arbtable rate 1gbit
	ok=$((ok | RUN_RC))
	run tc qdisc change dev $DEV root handle 1: arbtable default 10
	ok=$((ok | RUN_RC))
}

# ---- 10gbit, mtu not given: whole GSO skbs
gso_root rate 10gbit
tap_check "gso: auto qdisc rate 10gbit, class 1:10 rate 1gbit, default 10 (${RUN_ERR:-ok})" test "$ok" = 0
tap_check "gso: at 10gbit the mtu followed is a whole GSO skb ($(qmtu), want $want)" test "$(qmtu)" = "$want"
whole_run "10gbit, mtu followed" 1
tap_check "gso: no oversize drop ($(xs oversize_drops))" test "$(xs oversize_drops)" = 0
# one whole skb is ~56 us at 10gbit: 100us cannot be guaranteed
bad "gso: class latency 100us refused, the whole skbs' bound above it" 'bound' \
	tc class add dev $DEV parent 1: classid 1:20 arbtable rate 100mbit latency 100us

# ---- issue 35, defect 6: GSO skbs whose segments carry more headers for
# their payload stay whole too.  qdisc_pkt_len() charges every segment
# after the first its headers again: TCP at MSS 536 (as GRO forwards it
# from a peer that sends the IPv4 default) adds 120 x 66 bytes to a 64 KiB
# skb, TCP inside VXLAN over IPv6 46 x 136.  Before the fix the room was
# 4096 bytes and every such skb was split.
whole_run "MSS 536" 8 10.98.0.2 -M 536
# VXLAN over IPv6 (136 bytes of headers a segment at MSS 1378): over IPv4
# (116 at 1398) a 64 KiB skb charged 69644 bytes, 2 under the old room
# vx_up: vx0 (10.97.0.1) to vx1 (10.97.0.2) in $NS over the veth's IPv6
vx_up() {
	local pm
	pm=$(ip -n $NS link show ag1 | awk '/ether/ { print $2 }')
	sysctl -qw "net.ipv6.conf.$DEV.disable_ipv6=0" &&
		ip addr replace fd00:98::1/64 dev $DEV nodad &&
		ip -n $NS addr replace fd00:98::2/64 dev ag1 nodad &&
		ip -6 neigh replace fd00:98::2 lladdr "$pm" dev $DEV nud permanent &&
		ip -n $NS -6 neigh replace fd00:98::1 lladdr "$(ip link show $DEV | awk '/ether/ { print $2 }')" dev ag1 nud permanent &&
		ip link add vx0 type vxlan id 42 local fd00:98::1 remote fd00:98::2 dstport 4789 dev $DEV &&
		ip -n $NS link add vx1 type vxlan id 42 local fd00:98::2 remote fd00:98::1 dstport 4789 dev ag1 &&
		ip addr add 10.97.0.1/24 dev vx0 && ip link set vx0 up &&
		ip -n $NS addr add 10.97.0.2/24 dev vx1 && ip -n $NS link set vx1 up &&
		sleep 0.5
}
vx_down() {
	ip link del vx0 2>/dev/null
	ip -n $NS link del vx1 2>/dev/null
}
# vx_run NAME [IPERF3-ARGS...]: whole_run through the tunnel, then that
# the TCP went through it
vx_run() {
	local name=$1 v0 v
	shift
	if vx_up; then
		v0=$(cat /sys/class/net/vx0/statistics/tx_bytes)
		whole_run "$name (vx0 mtu $(cat /sys/class/net/vx0/mtu))" 8 10.97.0.2 "$@"
		v=$(($(cat /sys/class/net/vx0/statistics/tx_bytes) - v0))
		tap_check "gso: $name: the TCP went through the tunnel ($v bytes into vx0)" test "$v" -gt 1000000
	else
		tap_fail "gso: $name: VXLAN vx0 over $DEV's IPv6, 10.97.0.1 -> 10.97.0.2"
	fi
	vx_down
}
vx_run "VXLAN over IPv6"
tap_check "gso: no oversize drop after MSS 536 and VXLAN ($(xs oversize_drops))" test "$(xs oversize_drops)" = 0

# ---- gso_max_size has no event: read at the next change
if ip link set $DEV gso_max_size 16384; then
	run tc qdisc change dev $DEV root handle 1: arbtable
	tap_check "gso: gso_max_size 16384 read by a change without options (${RUN_ERR:-ok}; $(qmtu), want $(whole 16384))" \
		eval '[ "$RUN_RC" = 0 ] && [ "$(qmtu)" = "$(whole 16384)" ]'
	ip link set $DEV gso_max_size "$gso0"
	run tc qdisc change dev $DEV root handle 1: arbtable default 10
	tap_check "gso: gso_max_size $gso0 again ($(qmtu))" test "$(qmtu)" = "$want"
else
	tap_fail "gso: ip link set $DEV gso_max_size 16384"
fi
# BIG TCP raises gso_max_size above 64 KiB (the veth takes up to 512 KiB):
# those skbs are kept whole too, not split at 64 KiB
if ip link set $DEV gso_max_size 185000 2>"$tmp/big.err"; then
	run tc qdisc change dev $DEV root handle 1: arbtable
	tap_check "gso: BIG TCP, gso_max_size 185000 followed whole (${RUN_ERR:-ok}; $(qmtu), want $(whole 185000))" \
		eval '[ "$RUN_RC" = 0 ] && [ "$(qmtu)" = "$(whole 185000)" ]'
	ip link set $DEV gso_max_size "$gso0"
	run tc qdisc change dev $DEV root handle 1: arbtable default 10
else
	tap_fail "gso: ip link set $DEV gso_max_size 185000: $(head -c 200 "$tmp/big.err")"
fi
tc qdisc del dev $DEV root

# ---- mtu pinned to the frame: split, one frame per packet, the latency admitted
gso_root rate 10gbit mtu "$frame"
tap_check "gso: rate 10gbit mtu $frame pinned, class 1:10, default 10 (${RUN_ERR:-ok}; mtu $(qmtu))" \
	eval '[ "$ok" = 0 ] && [ "$(qmtu)" = "$frame" ]'
r=$(tcp_run)
read -r split bytes pkts gp <<<"$r"
diag "10gbit, mtu $frame: TCP $gp bit/s; GSO skbs split +$split; the veth sent $bytes bytes in $pkts skbs"
tap_check "gso: pinned, GSO skbs split (split +$split)" fcmp "$split > 0"
tap_check "gso: pinned, no skb above a frame: $(per_pkt $r) bytes per skb" \
	fcmp "$pkts > 0 && $bytes / $pkts <= $frame"
run tc class add dev $DEV parent 1: classid 1:20 arbtable rate 100mbit latency 100us
tap_check "gso: pinned, class latency 100us admitted (${RUN_ERR:-ok})" test "$RUN_RC" = 0
run tc qdisc change dev $DEV root handle 1: arbtable mtu 0
n=$(tc -s class show dev $DEV classid 1:20 | grep -c BROKEN)
tap_check "gso: mtu 0 follows again ($(qmtu)); the 100us class is now BROKEN ($n), the qdisc's broken $(xs broken)" \
	eval '[ "$RUN_RC" = 0 ] && [ "$(qmtu)" = "$want" ] && [ "$n" = 1 ]'
tc qdisc del dev $DEV root

# ---- below 1gbit: the frame
run tc qdisc add dev $DEV root handle 1: arbtable rate 999mbit
tap_check "gso: at 999mbit the mtu followed is the frame ($(qmtu), want $frame)" \
	eval '[ "$RUN_RC" = 0 ] && [ "$(qmtu)" = "$frame" ]'
run tc qdisc change dev $DEV root handle 1: arbtable rate 1gbit
tap_check "gso: rate 1gbit given: a whole skb again ($(qmtu))" \
	eval '[ "$RUN_RC" = 0 ] && [ "$(qmtu)" = "$want" ]'
tc qdisc del dev $DEV root
# and from the link speed (veth says 10000Mb/s) when no rate is given
run tc qdisc add dev $DEV root handle 1: arbtable
tap_check "gso: no rate, the veth's 10 Gbit/s: a whole skb ($(qmtu))" \
	eval '[ "$RUN_RC" = 0 ] && [ "$(qmtu)" = "$want" ]'
tc qdisc del dev $DEV root

# ---- the lockless root (issue 46) on the 4-queue veth: TCP's GSO skbs
# from four flows (on as many queues as their hashes pick), whole at
# 10gbit, plain and inside VXLAN, as for the locked root above
gso_root lockless rate 10gbit
tap_check "gso: lockless root at 10gbit, class 1:10, default 10 (${RUN_ERR:-ok}; mtu $(qmtu), want $want)" \
	eval '[ "$ok" = 0 ] && [ "$(qmtu)" = "$want" ] && tc -d qdisc show dev $DEV root | grep -qw lockless'
whole_run "lockless, 4 flows" 1 10.98.0.2 -P 4
vx_run "lockless, VXLAN over IPv6, 4 flows" -P 4
tap_check "gso: lockless: no oversize drop ($(xs oversize_drops))" test "$(xs oversize_drops)" = 0
tc qdisc del dev $DEV root

# ---- burst against the mtu in force (issue 35, defect 10): from 1gbit
# the mtu is a whole GSO skb, so a burst of 10k no longer holds one
# packet; it was checked against the frame before the mtu was set
run tc qdisc add dev $DEV root handle 1: arbtable manual rate 2gbit burst 10k
tap_check "gso: rate 2gbit burst 10k refused on the mtu in force, a whole skb ($want) (${RUN_ERR:-accepted})" \
	eval '[ "$RUN_RC" != 0 ] && grep -q "burst is below the mtu" <<<"$RUN_ERR"'
tc qdisc del dev $DEV root 2>/dev/null
run tc qdisc add dev $DEV root handle 1: arbtable manual rate 2gbit burst 100k
tap_check "gso: rate 2gbit burst 100k, above it, accepted (${RUN_ERR:-ok})" test "$RUN_RC" = 0
tc qdisc del dev $DEV root
# the device's own mtu change cannot be refused: said in the kernel log
run tc qdisc add dev $DEV root handle 1: arbtable manual rate 100mbit burst 3000
run tc class add dev $DEV parent 1: classid 1:10 arbtable ceil 10mbit cburst 3000
m0=$(klog_next)
ip link set $DEV mtu 4000
sleep 0.5
klog_read "$m0" >"$tmp/klog"
diag "$(grep arbtable "$tmp/klog")"
tap_check "gso: device mtu 4000 above burst 3000: the kernel log says so" \
	grep -q "$DEV: arbtable 1: mtu now 4014, above the qdisc's burst 3000" "$tmp/klog"
tap_check "gso: device mtu 4000 above class 1:10's cburst 3000: the kernel log says so" \
	grep -q "$DEV: arbtable 1: mtu now 4014, above the qdisc's burst 3000.*; above a class's cburst" "$tmp/klog"
ip link set $DEV mtu 1500
tc qdisc del dev $DEV root
tap_end
