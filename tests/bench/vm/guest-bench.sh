#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of `make bench-vm` (run by tests/bench/vm/run.sh inside one
# TCG VM with one vCPU and the instruction-counting plugin).  For every
# mode x qdisc x classes-in-use x packet size: configure the qdisc on a
# dummy device, then per repetition run the marker, one pktgen burst, the
# marker.  The host pairs each RUN line with the two instruction totals
# the plugin printed at the markers.
#
# Modes: unshaped - dummy's xmit is free, the qdisc never backlogs: the
# per-packet cost of enqueue + dequeue.  shaped - a rate is the bottleneck
# (arbtable's own `rate`, htb's root class, a tbf parent for the others)
# at SHAPED_PPS packets/s; the burst backlogs every class and the second
# marker waits until the device has sent them all: enqueue + backlogged
# dequeue + the watchdog wakeups that pace it.
#
# gso - GSO traffic from a real TCP sender: iperf3 -c in the root
# namespace sends BENCH_GSO_BYTES through a veth pair (TSO on) to iperf3 -s
# in a namespace; the qdisc under test is the root of the sending veth
# with one class, which all traffic goes to.  The markers bracket the
# whole client run, so the count holds both TCP ends (sender, receiver,
# ACKs, both iperf3s): the RUN line gives the payload in MSS-sized
# segments (bytes / 1448) as its packets, and the host divides by those.
# The veth says 10 Gbit/s, so arbtable's default mtu keeps 64 KiB GSO skbs
# whole, as the peers do; arbtable-manual-split is arbtable-manual with
# `mtu 1514` pinned, which splits every GSO skb at enqueue.
# gso-mss536 - the same with the sender's MSS at 536 (iperf3 -M: the skbs
# GRO forwards from a peer that sends the IPv4 default), 66 bytes of
# headers per 536 of payload.  gso-vxlan - the same TCP inside VXLAN
# (vx0 over v0, MSS 1398): the qdisc on v0 sees the encapsulated GSO skbs,
# 116 bytes of headers per segment.  qdisc_pkt_len() charges each segment
# its headers: the mtu arbtable follows must hold them to keep such skbs
# whole (issue 35, defect 6).
#
# Environment: BENCH_MODES, BENCH_QDISCS, BENCH_NS, BENCH_SIZES,
# BENCH_REPS, BENCH_PKTS (packets per unshaped burst), BENCH_SHAPED_PKTS,
# BENCH_SHAPED_PPS, BENCH_GSO_QDISCS, BENCH_GSO_BYTES (payload per gso
# run), BENCH_GSO_REPS, BENCH_MQ_QDISCS, BENCH_MQ_PKTS (packets per mq
# burst, all senders), MARKER (the marker binary).  Prints START before
# and COMBO after each configuration's repetitions, so a crash names the
# configuration it interrupted.
set -u
QDISCS=${BENCH_QDISCS:-"pfifo_fast prio ets drr qfq htb arbtable-manual arbtable-auto"}
NS=${BENCH_NS:-"1 8 64"}
SIZES=${BENCH_SIZES:-"64 1500"}
REPS=${BENCH_REPS:-3}
PKTS=${BENCH_PKTS:-50000}
MODES=${BENCH_MODES:-"unshaped shaped"}
SPKTS=${BENCH_SHAPED_PKTS:-20000}
SPPS=${BENCH_SHAPED_PPS:-8000}
GSO_QDISCS=${BENCH_GSO_QDISCS:-"pfifo_fast ets htb arbtable-manual arbtable-manual-split arbtable-auto"}
GSO_BYTES=${BENCH_GSO_BYTES:-256M}
GSO_REPS=${BENCH_GSO_REPS:-5}	# TCP's timing varies more than a pktgen burst
MSS=1448	# TCP payload per 1500-byte frame with timestamps
DEV=d0
PG=/proc/net/pktgen

pg() { echo "$2" >"$1" || { echo "BENCH-ERROR pktgen '$2' > $1" >&2; return 1; }; }

# bands a classful peer can have at most (prio and ets stop at 16)
cap() { case $1 in prio|ets) echo $(($2 > 16 ? 16 : $2)) ;; *) echo "$2" ;; esac; }

# setup MODE QDISC N SIZE: root QDISC with N classes of equal weight on
# d0, each reachable through skb->priority = 1:minor (minor 1..N), the
# direct lookup every one of these qdiscs does before trying filters.
# shaped: the same under a bottleneck of SPPS packets of SIZE per second;
# the queues hold a whole burst (txqueuelen sizes the default children).
setup() {
	local mode=$1 q=$2 n=$3 size=$4
	ip link del $DEV 2>/dev/null
	ip link add $DEV type dummy && ip link set $DEV txqueuelen $((SPKTS + 1000)) up || return 1
	sysctl -qw net.ipv6.conf.$DEV.disable_ipv6=1
	qdisc_add "$@"
}

# qdisc_add MODE QDISC N SIZE: the qdisc alone, on $DEV
qdisc_add() {
	local mode=$1 q=$2 n=$3 size=$4 i b h=1: at=root rate lk=
	b=$(cap "$q" "$n")
	# arbtable-lockless-auto/-manual: the same qdisc, classes and table
	# as arbtable-auto/-manual, created in the lockless mode (a root only)
	case $q in arbtable-lockless-*) lk=lockless q=arbtable-${q#arbtable-lockless-} ;; esac
	rate=$((SPPS * size * 8))
	if [ "$mode" = shaped ]; then
		case $q in
		htb|arbtable-*) ;;
		*)	tc qdisc add dev $DEV root handle 10: tbf rate ${rate}bit burst 3028 \
				limit $(((SPKTS + 1000) * (size + 64))) || return 1
			at="parent 10:1" ;;
		esac
	fi
	case $q in
	tbf) [ "$mode" = shaped ] || return 1 ;;	# the shaped baseline: tbf alone
	pfifo_fast) tc qdisc add dev $DEV $at handle $h pfifo_fast ;;
	prio) tc qdisc add dev $DEV $at handle $h prio bands $((b < 3 ? 3 : b)) ;;
	ets) tc qdisc add dev $DEV $at handle $h ets bands "$b" quanta $(for ((i = 0; i < b; i++)); do printf '1514 '; done) ;;
	drr) tc qdisc add dev $DEV $at handle $h drr &&
		for ((i = 1; i <= n; i++)); do tc class add dev $DEV parent 1: classid 1:$(printf %x $i) drr quantum 1514 || return 1; done ;;
	qfq) tc qdisc add dev $DEV $at handle $h qfq &&
		for ((i = 1; i <= n; i++)); do tc class add dev $DEV parent 1: classid 1:$(printf %x $i) qfq weight 1 maxpkt 2048 || return 1; done ;;
	htb) local top=100000000000
		[ "$mode" = shaped ] && top=$rate
		tc qdisc add dev $DEV root handle $h htb &&
		tc class add dev $DEV parent 1: classid 1:ff htb rate ${top}bit burst 3028 cburst 3028 &&
		for ((i = 1; i <= n; i++)); do tc class add dev $DEV parent 1:ff classid 1:$(printf %x $i) htb rate $((top / n))bit ceil ${top}bit burst 3028 cburst 3028 || return 1; done ;;
	arbtable-manual|arbtable-manual-split) local r=
		# the same bucket depth as tbf and htb here (3028 B): the
		# default (10 ms of the rate) would batch ~80 packets per wakeup
		[ "$mode" = shaped ] && r="rate ${rate}bit burst 3028"
		# the frame pinned: every GSO skb split at enqueue
		[ "$q" = arbtable-manual-split ] && r="$r mtu 1514"
		tc qdisc add dev $DEV root handle $h arbtable manual $lk $r &&
		for ((i = 1; i <= n; i++)); do tc class add dev $DEV parent 1: classid 1:$(printf %x $i) arbtable || return 1; done &&
		tc qdisc change dev $DEV root handle $h arbtable high "$(for ((i = 1; i <= n; i++)); do printf '%x:24,' $i; done | sed 's/,$//')" ;;
	arbtable-auto) local top=10000000000 bu= share=9
		[ "$mode" = shaped ] && top=$rate && bu="burst 3028"
		# pktgen's frames: mtu 1514 (from 1gbit up a 64 KiB GSO skb
		# is followed otherwise); gso keeps the default, whose high
		# table guarantees 4.68 of the 10 Gbit/s at highlimit 16
		if [ "$mode" = gso ]; then share=4; else bu="$bu mtu 1514"; fi
		tc qdisc add dev $DEV root handle $h arbtable $lk rate ${top}bit $bu &&
		for ((i = 1; i <= n; i++)); do tc class add dev $DEV parent 1: classid 1:$(printf %x $i) arbtable rate "$((top * share / 10 / n))bit" || return 1; done ;;
	*) return 1 ;;
	esac
}

# burst MODE Q N SIZE PKTS: N pktgen devices on the one pktgen thread,
# device i tagged skb->priority 1:(i mod bands)+1, PKTS packets in all;
# shaped: the closing marker waits until the device sent them
burst() {
	local mode=$1 q=$2 n=$3 size=$4 pkts=$5 b i t0 t1 sent
	b=$(cap "$q" "$n")
	pg $PG/kpktgend_0 rem_device_all
	# the pktgen thread removes them later (after 125 ms, more on a
	# loaded host): adding one that is still there fails
	for ((i = 0; i < 100; i++)); do
		compgen -G "$PG/$DEV@*" >/dev/null || break
		sleep 0.1
	done
	for ((i = 0; i < n; i++)); do
		pg $PG/kpktgend_0 "add_device $DEV@$i" || return 1
		local f=$PG/$DEV@$i
		pg "$f" "count $((pkts / n))" && pg "$f" "pkt_size $size" && pg "$f" "clone_skb 0" &&
			pg "$f" "delay 0" && pg "$f" "xmit_mode queue_xmit" &&
			pg "$f" "dst 198.51.100.1" && pg "$f" "dst_mac 02:00:00:00:00:01" &&
			pg "$f" "skb_priority $((0x10000 + i % b + 1))" || return 1
	done
	sent=$(cat /sys/class/net/$DEV/statistics/tx_packets)
	"$MARKER"
	t0=$(date +%s%N)
	echo start >$PG/pgctrl
	if [ "$mode" = shaped ]; then
		"$MARKER" $DEV $((sent + pkts / n * n)) 120000 ||
			{ echo "BENCH-ERROR $q n=$n: not drained in 120 s ($(($(cat /sys/class/net/$DEV/statistics/tx_packets) - sent)) of $((pkts / n * n)) sent)" >&2; return 1; }
		t1=$(date +%s%N)
	else
		t1=$(date +%s%N)
		"$MARKER"
	fi
	echo "$((pkts / n * n)) $((t1 - t0))"
}

# gso_setup: veth v0 (root namespace, 10.99.0.1) - v1 (namespace bsrv,
# 10.99.0.2), TSO on the sender, permanent neighbours (no ARP in the
# count), iperf3 -s in bsrv.  All of the sender's packets on v0 go to
# class 1:1: nftables sets skb->priority in the output hook, so every
# qdisc finds its class by the same direct skb->priority lookup as in the
# pktgen modes (pfifo_fast: band of priority 1).  The rule runs once per
# GSO skb before any qdisc, the same for all of them; tos/SO_PRIORITY
# would reach only priorities 0..6, which the classful qdiscs would
# resolve through different fallbacks (filters, priomap, default class).
gso_setup() {
	local m0 m1 i
	gso_teardown
	ip netns add bsrv || return 1
	ip link add v0 type veth peer name v1 netns bsrv || return 1
	sysctl -qw net.ipv6.conf.v0.disable_ipv6=1
	ip netns exec bsrv sysctl -qw net.ipv6.conf.v1.disable_ipv6=1
	ip addr add 10.99.0.1/24 dev v0 && ip link set v0 up &&
		ip -n bsrv addr add 10.99.0.2/24 dev v1 && ip -n bsrv link set v1 up &&
		ip -n bsrv link set lo up || return 1
	ethtool -K v0 tso on gso on sg on tx on >/dev/null 2>&1
	ethtool -k v0 | grep -q '^tcp-segmentation-offload: on' ||
		{ echo "BENCH-ERROR gso: TSO is not on for v0" >&2; return 1; }
	m0=$(cat /sys/class/net/v0/address)
	m1=$(ip netns exec bsrv cat /sys/class/net/v1/address)
	ip neigh replace 10.99.0.2 lladdr "$m1" dev v0 nud permanent &&
		ip -n bsrv neigh replace 10.99.0.1 lladdr "$m0" dev v1 nud permanent || return 1
	nft -f - <<-'NFT' || return 1
	table inet bench {
		chain out {
			type filter hook output priority 0; policy accept;
			oifname "v0" meta priority set 1:1
		}
	}
	NFT
	ip netns exec bsrv iperf3 -s -D -I /tmp/bench-iperf3.pid >/dev/null 2>&1 || return 1
	for ((i = 0; i < 50; i++)); do
		ip netns exec bsrv ss -ltn 2>/dev/null | grep -q ':5201 ' && return 0
		sleep 0.1
	done
	echo "BENCH-ERROR gso: iperf3 -s did not listen" >&2
	return 1
}

# gso_vxlan: vx0 (10.98.9.1) over v0 to vx1 (10.98.9.2) in bsrv, VNI 42
gso_vxlan() {
	ip link add vx0 type vxlan id 42 local 10.99.0.1 remote 10.99.0.2 dstport 4789 dev v0 &&
		ip -n bsrv link add vx1 type vxlan id 42 local 10.99.0.2 remote 10.99.0.1 dstport 4789 dev v1 &&
		ip addr add 10.98.9.1/24 dev vx0 && ip link set vx0 up &&
		ip -n bsrv addr add 10.98.9.2/24 dev vx1 && ip -n bsrv link set vx1 up || return 1
	# the inner neighbour too: no ARP in the count
	ip neigh replace 10.98.9.2 lladdr "$(ip netns exec bsrv cat /sys/class/net/vx1/address)" dev vx0 nud permanent &&
		ip -n bsrv neigh replace 10.98.9.1 lladdr "$(cat /sys/class/net/vx0/address)" dev vx1 nud permanent
}

gso_teardown() {
	ip link del vx0 2>/dev/null
	[ -s /tmp/bench-iperf3.pid ] && kill "$(cat /tmp/bench-iperf3.pid)" 2>/dev/null
	rm -f /tmp/bench-iperf3.pid
	nft delete table inet bench 2>/dev/null
	ip link del v0 2>/dev/null
	ip netns del bsrv 2>/dev/null
	return 0
}

# gso_run [nomark]: one iperf3 client run of GSO_BYTES between the
# markers (nomark: the warm-up, no markers); prints
# "SEGMENTS NS SKBS": payload in MSS-sized segments, wall time, and the
# skbs v0 transmitted (data and control; GSO skbs count once: with
# SEGMENTS, the mean segments per skb the device saw).  A failed run
# still ran both markers: it prints "0 0 0" (the host pairs the markers
# with it, then leaves it out) and returns 1.
gso_run() {
	local t0 t1 s0 s1 bytes out mark=$MARKER
	[ "${1:-}" = nomark ] && mark=true
	s0=$(cat /sys/class/net/v0/statistics/tx_packets)
	"$mark"
	t0=$(date +%s%N)
	out=$(iperf3 -c "$GSO_DST" -n "$GSO_BYTES" -J $GSO_ARGS 2>&1) ||
		{ "$mark"; echo "BENCH-ERROR gso: iperf3 -c failed: $(head -c 300 <<<"$out")" >&2; echo "0 0 0"; return 1; }
	t1=$(date +%s%N)
	"$mark"
	s1=$(cat /sys/class/net/v0/statistics/tx_packets)
	bytes=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["end"]["sum_sent"]["bytes"])' <<<"$out") ||
		{ echo "0 0 0"; return 1; }
	echo "$((bytes / MSS)) $((t1 - t0)) $((s1 - s0))"
}

# gso_mode: veth hands every skb the qdisc sends to the receiver as it is,
# so a split GSO skb also costs the receiver one TCP receive per segment
# (the case of veth between containers).  GRO on the receiving veth does
# not change that: veth takes its NAPI/GRO path only for skbs from a
# sender without TSO (veth_skb_is_eligible_for_gro; measured: the same
# counts with `ethtool -K v1 gro on`).
gso_mode() { # MODE: gso, gso-mss536 or gso-vxlan
	local mode=$1 q r res save=$DEV mss_save=$MSS
	gso_setup 2>/tmp/bench-setup.err || { echo "BENCH-SKIP $mode: $(head -c 300 /tmp/bench-setup.err)"; gso_teardown; return; }
	GSO_DST=10.99.0.2 GSO_ARGS=
	case $mode in
	gso-mss536) MSS=536 GSO_ARGS="-M 536" ;;
	gso-vxlan)
		gso_vxlan 2>/tmp/bench-setup.err || { echo "BENCH-SKIP $mode: $(head -c 300 /tmp/bench-setup.err)"; gso_teardown; return; }
		# vx0's mtu 1450: 1450 - 20 - 20 - 12
		MSS=1398 GSO_DST=10.98.9.2 ;;
	esac
	DEV=v0
	for q in $GSO_QDISCS; do
		echo "START $mode $q 1 $MSS"
		tc qdisc del dev v0 root 2>/dev/null
		if ! qdisc_add gso "${q}" 1 $MSS 2>/tmp/bench-setup.err; then
			echo "BENCH-SKIP $mode $q: $(head -c 200 /tmp/bench-setup.err)"
			continue
		fi
		echo "QDISC $mode $q: $(tc -d qdisc show dev v0 root | head -n 1)"
		# one unmeasured run: the connection path and the caches warm
		gso_run nomark >/dev/null || { echo "BENCH-SKIP $mode $q: warm-up run failed"; continue; }
		for ((r = 1; r <= GSO_REPS; r++)); do
			res=$(gso_run) || { echo "RUN $mode $q 1 1 $MSS $r $res"; echo "BENCH-SKIP $mode $q: run $r failed"; break; }
			echo "RUN $mode $q 1 1 $MSS $r $res"
		done
		echo "STATS $mode $q: $(tc -s qdisc show dev v0 root | tr '\n' ' ' | tr -s ' ')"
		echo "COMBO $mode $q 1 $MSS"
		tc qdisc del dev v0 root 2>/dev/null
	done
	DEV=$save MSS=$mss_save
	gso_teardown
}

# mq - a 4-queue dummy (numtxqueues 4), XPS mapping CPU i to queue i,
# one pktgen thread per CPU (kpktgend_i is bound to CPU i), each sending
# MQ_PKTS/4 packets of tenant i (class i+1 of whatever qdisc serves queue
# i); needs 4 vCPUs (run.sh boots them for this mode).  Every qdisc leaves
# the device unshaped, as in the unshaped mode.  Qdiscs:
#   mq-pfifo_fast  mq with its default pfifo_fast per queue (NOLOCK): no
#                  lock shared by the senders, no shaping (the ceiling)
#   mq-pfifo_fast-locked  the same with each pfifo_fast grafted by tc,
#                  which makes it a locked qdisc (per queue, uncontended)
#   pfifo_fast     one TCQ_F_NOLOCK pfifo_fast as the port's root:
#                  lockless enqueue into a shared ring, one dequeuer
#   htb            the root, a 100 Gbit/s parent and 4 leaves
#   cake_mq        Linux 7.0+ (absent: a BENCH-SKIP line says so); a cake
#                  per queue sharing one 100 Gbit/s configuration, so the
#                  200 us sibling scan runs (cake_mq.py sets the rate)
#   arbtable-auto, arbtable-manual   the root, 4 classes as in unshaped
#   arbtable-lockless-auto, arbtable-lockless-manual   the same two roots
#                  in the lockless mode (TCQ_F_NOLOCK: per-class rings,
#                  one dequeuer under the seqlock)
#   mq-arbtable    mq with an arbtable (auto, 10 Gbit/s, the same 4
#                  classes) per queue: today's per-queue instances
# Each configuration's STATS line holds `tc -s qdisc` for the record, and
# its SPREAD line the packets each queue's own qdisc sent (mq roots).
MQ_QDISCS=${BENCH_MQ_QDISCS:-"mq-pfifo_fast mq-pfifo_fast-locked pfifo_fast htb cake_mq arbtable-auto arbtable-manual arbtable-lockless-auto arbtable-lockless-manual mq-arbtable"}
MQ_N=4
MQ_PKTS=${BENCH_MQ_PKTS:-$PKTS}

mq_setup() { # QDISC
	local q=$1 i h c
	ip link del $DEV 2>/dev/null
	# 7.x refuses a txqueuelen above S16_MAX (rtnetlink's txqlen_range);
	# a burst that outgrows a queue shows as drops on the STATS line
	ip link add $DEV numtxqueues $MQ_N numrxqueues $MQ_N type dummy &&
		ip link set $DEV txqueuelen $((MQ_PKTS + 1000 > 32767 ? 32767 : MQ_PKTS + 1000)) up || return 1
	sysctl -qw net.ipv6.conf.$DEV.disable_ipv6=1
	# pktgen's skbs have no socket: netdev_pick_tx takes the queue from
	# XPS by sending CPU (without it, the flow hash: all on one queue)
	for ((i = 0; i < MQ_N; i++)); do
		printf '%x' $((1 << i)) >/sys/class/net/$DEV/queues/tx-$i/xps_cpus || return 1
	done
	case $q in
	mq-pfifo_fast)
		# mq's own children, what a multi-queue NIC gets by default:
		# qdisc_create_dflt keeps pfifo_fast's TCQ_F_NOLOCK
		sysctl -qw net.core.default_qdisc=pfifo_fast &&
		tc qdisc add dev $DEV root handle 1: mq ;;
	mq-pfifo_fast-locked)
		# grafted by tc: qdisc_graft clears TCQ_F_NOLOCK of a child
		# under a parent without it, so each queue's pfifo_fast takes
		# its own root lock (uncontended: one CPU per queue)
		tc qdisc add dev $DEV root handle 1: mq &&
		for ((i = 0; i < MQ_N; i++)); do
			tc qdisc add dev $DEV parent 1:$((i + 1)) handle $((i + 16)): pfifo_fast || return 1
		done ;;
	mq-arbtable)
		tc qdisc add dev $DEV root handle 1: mq &&
		for ((i = 0; i < MQ_N; i++)); do
			h=$(printf %x $((i + 16)))
			tc qdisc add dev $DEV parent 1:$((i + 1)) handle $h: arbtable rate 10gbit mtu 1514 || return 1
			for ((c = 1; c <= MQ_N; c++)); do
				tc class add dev $DEV parent $h: classid $h:$c arbtable rate "$((9000 / MQ_N))mbit" || return 1
			done
		done ;;
	cake_mq)
		# no sch_cake, or one without cake_mq (before 7.0): the
		# kernel's refusal is the skip's reason
		modprobe sch_cake 2>/dev/null
		python3 "$(dirname "$0")/cake_mq.py" $DEV 1 $((100000000000 / 8)) ;;
	*) qdisc_add unshaped "$q" $MQ_N 64 ;;
	esac
}

# mq_prio I QDISC: the skb->priority of tenant I, naming its class in the
# qdisc that serves queue I
mq_prio() {
	case $2 in
	mq-arbtable) echo $(((($1 + 16) << 16) + $1 + 1)) ;;
	*) echo $((0x10000 + $1 + 1)) ;;
	esac
}

# mq_burst QDISC SIZE: one burst from the 4 pinned senders; prints
# "PACKETS NS" (wall time from start until the last thread finished)
mq_burst() {
	local q=$1 size=$2 i t0 t1 f
	for ((i = 0; i < MQ_N; i++)); do pg $PG/kpktgend_$i rem_device_all; done
	for ((i = 0; i < 100; i++)); do
		compgen -G "$PG/$DEV@*" >/dev/null || break
		sleep 0.1
	done
	for ((i = 0; i < MQ_N; i++)); do
		pg $PG/kpktgend_$i "add_device $DEV@$i" || return 1
		f=$PG/$DEV@$i
		pg "$f" "count $((MQ_PKTS / MQ_N))" && pg "$f" "pkt_size $size" && pg "$f" "clone_skb 0" &&
			pg "$f" "delay 0" && pg "$f" "xmit_mode queue_xmit" &&
			pg "$f" "dst 198.51.100.1" && pg "$f" "dst_mac 02:00:00:00:00:01" &&
			pg "$f" "skb_priority $(mq_prio $i "$q")" || return 1
	done
	"$MARKER"
	t0=$(date +%s%N)
	echo start >$PG/pgctrl
	t1=$(date +%s%N)
	"$MARKER"
	echo "$((MQ_PKTS / MQ_N * MQ_N)) $((t1 - t0))"
}

# mq_spread: packets sent by each queue's own qdisc (mq roots), else "-"
mq_spread() {
	tc -s qdisc show dev $DEV | awk '
		/^qdisc/ { child = ($0 ~ / parent 1:[0-9a-f]+ /) }
		/^ Sent/ && child { printf "%s ", $4 }' | sed 's/ $//'
}

# On a kernel with CONFIG_LOCK_STAT (the lockstat variant of the
# sanitizer kernel, BENCH_KDIR): the qdisc layer's lock classes over a
# configuration's bursts, cleared before them.  Each qdisc's root lock
# has a lockdep key of its own (qdisc_lock_init: &sch->root_lock_key);
# a NOLOCK qdisc's seqlock, and the busylock of 6.12 and earlier (7.2
# queues contended senders on a lockless defer list instead), take the
# device's qdisc_tx_busylock class; a driver's queue lock is _xmit_lock
# (dummy is LLTX: none); a ptr_ring's producer_lock (pfifo_fast's bands,
# the lockless arbtable's class rings: every sender takes its ring's) and
# consumer_lock.  The host sums the classes of one name.
LOCKSTAT_PAT='root_lock_key|busylock|_xmit_lock|producer_lock|consumer_lock'
mq_lockstat_clear() { [ -w /proc/lock_stat ] && echo 0 >/proc/lock_stat; return 0; }
mq_lockstat() { # QDISC SIZE PACKETS
	[ -r /proc/lock_stat ] || return 0
	grep -E "($LOCKSTAT_PAT).*:[[:space:]]+[0-9]" /proc/lock_stat | head -n 40 |
		sed "s/^/LOCKSTAT mq $1 $2 $3 /"
}

mq_mode() {
	local q size r res ncpu sent
	ncpu=$(nproc)
	if [ "$ncpu" -lt $MQ_N ]; then
		echo "BENCH-SKIP mq: $ncpu CPUs, the mode needs $MQ_N (run.sh boots 4 for it)"
		return
	fi
	for q in $MQ_QDISCS; do
		for size in $SIZES; do
			echo "START mq $q $MQ_N $size"
			if ! mq_setup "$q" 2>/tmp/bench-setup.err; then
				echo "BENCH-SKIP mq $q size=$size: $(head -c 200 /tmp/bench-setup.err)"
				continue
			fi
			echo "QDISC mq $q: $(tc qdisc show dev $DEV root | head -n 1)"
			mq_lockstat_clear
			sent=0
			for ((r = 1; r <= REPS; r++)); do
				res=$(mq_burst "$q" "$size") || { echo "BENCH-SKIP mq $q size=$size: burst failed"; break; }
				echo "RUN mq $q $MQ_N $MQ_N $size $r $res"
				sent=$((sent + ${res%% *}))
			done
			mq_lockstat "$q" "$size" $sent
			echo "SPREAD mq $q $size: $(mq_spread)"
			echo "STATS mq $q $size: $(tc -s qdisc show dev $DEV | tr '\n' ' ' | tr -s ' ' | head -c 1500)"
			echo "COMBO mq $q $MQ_N $size"
			ip link del $DEV 2>/dev/null
		done
	done
}

modprobe pktgen || exit 1
for mode in $MODES; do
	case $mode in
	gso*)	gso_mode "$mode"; continue ;;
	mq)	mq_mode; continue ;;
	esac
	qs=$QDISCS
	# shaped, the baseline is tbf alone (pfifo_fast's place)
	[ "$mode" = shaped ] && qs=$(sed 's/pfifo_fast/tbf/' <<<"$QDISCS")
	[ "$mode" = shaped ] && pk=$SPKTS || pk=$PKTS
	for q in $qs; do
		for n in $NS; do
			for size in $SIZES; do
				echo "START $mode $q $n $size"
				if ! setup "$mode" "$q" "$n" "$size" 2>/tmp/bench-setup.err; then
					echo "BENCH-SKIP $mode $q n=$n size=$size: $(head -c 200 /tmp/bench-setup.err)"
					continue
				fi
				for ((r = 1; r <= REPS; r++)); do
					res=$(burst "$mode" "$q" "$n" "$size" "$pk") || { echo "BENCH-SKIP $mode $q n=$n size=$size: burst failed"; break; }
					echo "RUN $mode $q $n $(cap "$q" "$n") $size $r $res"
				done
				echo "COMBO $mode $q $n $size"
				# the whole configuration is torn down between runs
				tc qdisc del dev $DEV root 2>/dev/null
			done
		done
	done
done
ip link del $DEV 2>/dev/null
# profile runs: kernel text symbols for the host to name the blocks,
# compressed (as ~110,000 plain lines the console lost the guest's exit)
if [ -n "${BENCH_PROFILE:-}" ]; then
	awk '$2 ~ /^[tT]$/ { print $1, $3, $4 }' /proc/kallsyms | gzip -1 | base64 -w 200 | sed 's/^/KSYMZ /'
	# the serial console is still sending this when the command returns
	# and the guest powers off: give it time to drain
	sleep 20
fi
# on the sanitizer kernel (BENCH_KDIR): what KASAN, lockdep, UBSAN and
# kmemleak saw over the whole run
# (the command line is left out: its base64 may spell anything)
klog() { dmesg | grep -v 'ommand line:'; }
echo "SPLATS $(klog | grep -cE 'BUG|WARNING|Oops|KASAN|UBSAN|list_(add|del) corruption|circular locking') lines in the kernel log"
klog | grep -m 20 -E -A 20 'BUG|WARNING|Oops|KASAN|UBSAN|corruption|circular locking' | sed 's/^/SPLAT /'
kml=/sys/kernel/debug/kmemleak
[ -e $kml ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
if [ -w $kml ]; then
	echo scan >$kml; sleep 6; echo scan >$kml
	echo "KMEMLEAK $(grep -c '^unreferenced object' $kml) unreferenced objects"
	head -n 60 $kml | sed 's/^/KMEMLEAK /'
fi
# whether sch_arbtable was ever in this kernel (a crash run without it,
# BENCH_NO_MODULE=1, shows the module is not the cause)
if grep -q '^sch_arbtable ' /proc/modules; then
	echo "MODULE sch_arbtable loaded in this boot"
else
	echo "MODULE sch_arbtable not loaded at the end of this boot ($(grep -c 'sch_arbtable' /proc/kallsyms) symbols of it in the kernel)"
fi
echo "BENCH-DONE"
