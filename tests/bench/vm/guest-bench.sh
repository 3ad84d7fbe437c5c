#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Guest side of `make bench-vm` (run by tests/bench/vm/run.sh inside one
# TCG VM with one vCPU and the instruction-counting plugin).  For every
# qdisc x classes-in-use x packet size: configure the qdisc on a dummy
# device, then per repetition run the marker, one pktgen burst, the
# marker.  The host pairs each RUN line with the two instruction totals
# the plugin printed at the markers.
#
# Environment: BENCH_QDISCS, BENCH_NS, BENCH_SIZES, BENCH_REPS,
# BENCH_PKTS (packets per burst), MARKER (the marker binary).
set -u
QDISCS=${BENCH_QDISCS:-"pfifo_fast prio ets drr qfq htb arbtable-manual arbtable-auto"}
NS=${BENCH_NS:-"1 8 64"}
SIZES=${BENCH_SIZES:-"64 1500"}
REPS=${BENCH_REPS:-3}
PKTS=${BENCH_PKTS:-100000}
DEV=d0
PG=/proc/net/pktgen

pg() { echo "$2" >"$1" || { echo "BENCH-ERROR pktgen '$2' > $1" >&2; return 1; }; }

# bands a classful peer can have at most (prio and ets stop at 16)
cap() { case $1 in prio|ets) echo $(($2 > 16 ? 16 : $2)) ;; *) echo "$2" ;; esac; }

# setup QDISC N: root QDISC with N classes of equal weight on d0, each
# reachable through skb->priority = 1:minor (minor 1..N), the direct
# lookup every one of these qdiscs does before trying filters; dummy's
# xmit is free, so the qdisc never backlogs (unshaped).
setup() {
	local q=$1 n=$2 i b h=1:
	ip link del $DEV 2>/dev/null
	ip link add $DEV type dummy && ip link set $DEV txqueuelen 1000 up || return 1
	sysctl -qw net.ipv6.conf.$DEV.disable_ipv6=1
	b=$(cap "$q" "$n")
	case $q in
	pfifo_fast) tc qdisc add dev $DEV root handle $h pfifo_fast ;;
	prio) tc qdisc add dev $DEV root handle $h prio bands $((b < 3 ? 3 : b)) ;;
	ets) tc qdisc add dev $DEV root handle $h ets bands "$b" quanta $(for ((i = 0; i < b; i++)); do printf '1514 '; done) ;;
	drr) tc qdisc add dev $DEV root handle $h drr &&
		for ((i = 1; i <= n; i++)); do tc class add dev $DEV parent 1: classid 1:$(printf %x $i) drr quantum 1514 || return 1; done ;;
	qfq) tc qdisc add dev $DEV root handle $h qfq &&
		for ((i = 1; i <= n; i++)); do tc class add dev $DEV parent 1: classid 1:$(printf %x $i) qfq weight 1 maxpkt 2048 || return 1; done ;;
	htb) tc qdisc add dev $DEV root handle $h htb &&
		tc class add dev $DEV parent 1: classid 1:ff htb rate 100gbit burst 15k &&
		for ((i = 1; i <= n; i++)); do tc class add dev $DEV parent 1:ff classid 1:$(printf %x $i) htb rate $((100000 / n))mbit ceil 100gbit burst 15k || return 1; done ;;
	arbtable-manual) tc qdisc add dev $DEV root handle $h arbtable manual &&
		for ((i = 1; i <= n; i++)); do tc class add dev $DEV parent 1: classid 1:$(printf %x $i) arbtable || return 1; done &&
		tc qdisc change dev $DEV root handle $h arbtable high "$(for ((i = 1; i <= n; i++)); do printf '%x:24,' $i; done | sed 's/,$//')" ;;
	arbtable-auto) tc qdisc add dev $DEV root handle $h arbtable rate 10gbit &&
		for ((i = 1; i <= n; i++)); do tc class add dev $DEV parent 1: classid 1:$(printf %x $i) arbtable rate "$((9000 / n))mbit" || return 1; done ;;
	*) return 1 ;;
	esac
}

# burst Q N SIZE PKTS: N pktgen devices on the one pktgen thread, device i
# tagged skb->priority 1:(i mod bands)+1, PKTS packets in all
burst() {
	local q=$1 n=$2 size=$3 pkts=$4 b i t0 t1
	b=$(cap "$q" "$n")
	pg $PG/kpktgend_0 rem_device_all
	for ((i = 0; i < n; i++)); do
		pg $PG/kpktgend_0 "add_device $DEV@$i" || return 1
		local f=$PG/$DEV@$i
		pg "$f" "count $((pkts / n))" && pg "$f" "pkt_size $size" && pg "$f" "clone_skb 0" &&
			pg "$f" "delay 0" && pg "$f" "xmit_mode queue_xmit" &&
			pg "$f" "dst 198.51.100.1" && pg "$f" "dst_mac 02:00:00:00:00:01" &&
			pg "$f" "skb_priority $((0x10000 + i % b + 1))" || return 1
	done
	"$MARKER"
	t0=$(date +%s%N)
	echo start >$PG/pgctrl
	t1=$(date +%s%N)
	"$MARKER"
	echo "$((pkts / n * n)) $((t1 - t0))"
}

modprobe pktgen || exit 1
for q in $QDISCS; do
	for n in $NS; do
		for size in $SIZES; do
			if ! setup "$q" "$n" 2>/tmp/bench-setup.err; then
				echo "BENCH-SKIP $q n=$n size=$size: $(head -c 200 /tmp/bench-setup.err)"
				continue
			fi
			for ((r = 1; r <= REPS; r++)); do
				res=$(burst "$q" "$n" "$size" "$PKTS") || { echo "BENCH-SKIP $q n=$n size=$size: burst failed"; break; }
				echo "RUN unshaped $q $n $(cap "$q" "$n") $size $r $res"
			done
			# the whole configuration is torn down between runs
			tc qdisc del dev $DEV root 2>/dev/null
		done
	done
done
ip link del $DEV 2>/dev/null
# profile runs: kernel text symbols for the host to name the blocks
[ -n "${BENCH_PROFILE:-}" ] && awk '$2 ~ /^[tT]$/ { print "KSYM", $1, $3, $4 }' /proc/kallsyms
echo "BENCH-DONE"
