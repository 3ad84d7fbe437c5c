#!/usr/bin/env bash
# sch_arbtable demo: build, boot the 6.1 distro kernel under virtme-ng with
# two virtio-net NICs on one QEMU hub (`vng --network loop`), move one NIC
# into a netns, attach arbtable to the other, saturate three tenant classes
# with paced pktgen producers (skb->priority names the class; flower
# filters by port classify the same tenants' socket traffic) and print
# configured vs measured shares: first with a manual HIGH/LOW table (IB
# style), then with tenants admitted by rate + latency (auto mode) with
# their slots and latency bounds; part 3 runs TCP tenants (iperf3 from
# network namespaces, GSO on their veths) beside a UDP flood through the
# NIC and prints per tenant reserved rate, TCP goodput, share, HOL bound
# and measured max HOL wait. Without two NICs in the guest it uses a
# dummy device (part 3: a veth pair).
#
#   bash scripts/demo.sh            (or: make demo)
#   DEMO_SECONDS=10 DEMO_RATE=10mbit KVER=... ARBTABLE_KVM=1 DEMO_TCP=0 (no part 3)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)

if [ "${1:-}" != --guest ]; then
	# ------------------------------------------------------------- host
	cd "$ROOT" || exit 1
	echo "[demo] setting up the host (scripts/setup.sh, idempotent)"
	bash scripts/setup.sh || { echo "[demo] setup failed"; exit 1; }
	echo "[demo] building (make all)"
	make -C "$ROOT" all >/tmp/arbtable-demo-build.log 2>&1 ||
		{ tail -n 30 /tmp/arbtable-demo-build.log; echo "[demo] build failed"; exit 1; }
	KVER=${KVER:-$(ls /boot/vmlinuz-6.1.* | sed 's|.*/vmlinuz-||' | sort -V | tail -n1)}
	export ARBT_DEMO_SECONDS=${DEMO_SECONDS:-10} ARBT_DEMO_RATE=${DEMO_RATE:-10mbit}
	export ARBT_DEMO_AUTO=${DEMO_AUTO:-1} ARBT_DEMO_TCP=${DEMO_TCP:-1}
	exec bash scripts/vm.sh -k "$KVER" -n -t 900 -- bash scripts/demo.sh --guest
fi

# ----------------------------------------------------------------- guest
. "$ROOT/selftests/arbtable/lib.sh"
say() { echo "[demo $(date +%T)] $*"; }
RATE=${ARBT_DEMO_RATE:-10mbit}
WIN=${ARBT_DEMO_SECONDS:-10}
have_arbtable || { say "module or tc plugin missing"; exit 1; }

# Tenants: MINOR WEIGHT(high) PORT/PKTSIZE NAME
TENANTS=("10 40 5201 1400 gold" "11 20 5202 700 silver" "12 10 5203 1200 bronze")
LOW="12:4"

nics=$(for n in /sys/class/net/*; do
	n=${n##*/}; [ "$n" = lo ] && continue
	[ "$(basename "$(readlink -f /sys/class/net/$n/device/driver 2>/dev/null)")" = virtio_net ] && echo "$n"
done)
set -- $nics
if [ $# -ge 2 ]; then
	MODE=nic DEV=$1 PEER=$2
else
	MODE=dummy DEV=d0
fi
say "device: $DEV${PEER:+ (virtio-net; peer $PEER in netns demo-peer)}"

cleanup() {
	pkill_ids=$(jobs -p); [ -n "$pkill_ids" ] && kill $pkill_ids 2>/dev/null
	pg_stop
	true
}
trap cleanup EXIT

if [ "$MODE" = nic ]; then
	ip netns add demo-peer
	ip link set "$PEER" netns demo-peer
	ip addr add 10.77.0.1/24 dev "$DEV"
	ip link set "$DEV" txqueuelen 1000 up
	ip -n demo-peer addr add 10.77.0.2/24 dev "$PEER"
	ip -n demo-peer link set "$PEER" up
	ip -n demo-peer link set lo up
	# MTU-sized packets at the qdisc, not 64 KB GSO bursts
	ethtool -K "$DEV" tso off gso off gro off >/dev/null 2>&1
else
	dummy_up d0
fi

add_filters() { # minor port
	[ "$MODE" = nic ] || return 0
	# socket traffic of the tenants (TCP and UDP to their port)
	for proto in udp tcp; do
		tc filter add dev "$DEV" parent 1: protocol ip prio 1 flower ip_proto $proto dst_port "$2" classid 1:$1 || return 1
	done
}

# One paced pktgen producer per tenant, through the qdisc (queue_xmit) and
# out of the NIC: unlike iperf3 under emulation, it keeps every class
# backlogged, so the shares measure the scheduler, not the senders.
start_traffic() {
	local pgspec= t m w port sz name
	for t in "${TENANTS[@]}"; do
		read -r m w port sz name <<<"$t"
		pgspec="$pgspec $m:$sz:10"
	done
	arb_traffic "$pgspec" && pg_start
}

stop_traffic() {
	pg_stop
}

# rate_bits RATE: the demo's rate (bit, kbit, mbit or gbit) in bit/s
rate_bits() {
	awk -v r="$1" 'BEGIN { n = r + 0; u = tolower(r); sub(/^[0-9.]+/, "", u)
		m = u == "kbit" ? 1e3 : u == "mbit" ? 1e6 : u == "gbit" ? 1e9 : 1
		printf "%.0f", n * m }'
}
# total_check PART M: the classes' rates in measure file M sum to the
# qdisc rate within 3% (every class is backlogged: the qdisc rate is the
# bottleneck, so anything else is a counting or shaping error)
demo_failed=
total_check() {
	local want got
	want=$(rate_bits "$RATE")
	got=$(awk '$1 ~ /:/ { s += $3 } END { printf "%.0f", s }' "$2")
	if awk -v g="$got" -v w="$want" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(w > 0 && d <= 0.03 * w) }'; then
		printf 'check: %s: the classes sum to %.3f Mbit/s, within 3%% of the qdisc rate %s: ok\n' "$1" "$(fcalc "$got / 1e6")" "$RATE"
	else
		printf 'check: %s: the classes sum to %.3f Mbit/s, not within 3%% of the qdisc rate %s: FAILED\n' "$1" "$(fcalc "$got / 1e6")" "$RATE"
		demo_failed="$demo_failed $1"
	fi
}

# burst 30k: a 10 ms bucket loses ~4% of the rate when timers fire late,
# as they do under TCG (selftests/arbtable/README.rst, "Rates under
# emulation")
say "part 1, manual tables (IB style): tc qdisc add dev $DEV root handle 1: arbtable manual rate $RATE burst 30k"
tc qdisc add dev "$DEV" root handle 1: arbtable manual rate "$RATE" burst 30k || exit 1
high=
spec=
for t in "${TENANTS[@]}"; do
	read -r m w port sz name <<<"$t"
	tc class add dev "$DEV" parent 1: classid 1:$m arbtable || exit 1
	high=${high:+$high,}$m:$w
	spec="$spec 1:$m=$w"
	add_filters "$m" "$port" || exit 1
done
# highlimit 255: the low table only gets what high leaves, so while every
# tenant is backlogged the HIGH weights alone set the split
say "tables: tc qdisc change dev $DEV root handle 1: arbtable highlimit 255 high $high low $LOW"
tc qdisc change dev "$DEV" root handle 1: arbtable highlimit 255 high "$high" low "$LOW" || exit 1
tc -d qdisc show dev "$DEV" | sed 's/^/    /'

say "saturating every class for $((WIN + 4)) s"
start_traffic
tmp=$(mktemp -d)
measure "$DEV" arbtable 4 "$WIN" "$tmp/m"

# configured share: the high table's weights (low slots only run when high
# is idle or highlimit lets them in; with the default highlimit the high
# table decides the split while everything is backlogged)
echo
printf '%-8s %-7s %7s %12s %12s %14s %9s\n' tenant class weight "cfg share" "meas share" "rate (Mbit/s)" backlogged
# class lines only: measure's "W wall device_rate" line is no class
total=$(awk '$1 ~ /:/ { s += $2 } END { print s }' "$tmp/m")
W=0; for t in "${TENANTS[@]}"; do read -r m w _ <<<"$t"; W=$((W + w)); done
for t in "${TENANTS[@]}"; do
	read -r m w port sz name <<<"$t"
	b=$(m_bytes "$tmp/m" 1:$m); r=$(m_rate "$tmp/m" 1:$m)
	bl1=$(m_field "$tmp/m" 1:$m 4); bl2=$(m_field "$tmp/m" 1:$m 5)
	printf '%-8s %-7s %7s %11.2f%% %11.2f%% %14.3f %9s\n' "$name" 1:$m "$w" \
		"$(fcalc "100 * $w / $W")" "$(fcalc "${total:-0} ? 100 * ${b:-0} / $total : 0")" \
		"$(fcalc "${r:-0} / 1000000")" "$([ "${bl1:-0}" -gt 0 ] && [ "${bl2:-0}" -gt 0 ] && echo yes || echo "no")"
done
# the sum of the classes' rates (the "W" line carries the device's own
# rate: adding it too printed twice the real total)
printf 'total %.3f Mbit/s over %.1f s (qdisc rate %s)\n' "$(awk '$1 ~ /:/ { s += $3 } END { print s / 1e6 }' "$tmp/m")" "$(m_elapsed "$tmp/m")" "$RATE"
total_check "part 1" "$tmp/m"
echo
stop_traffic

# --------------------------------------------------------------- auto mode
# Part 2: the allocator fills the table. Tenants ask for a rate and a
# latency bound (HIGH table) or a best-effort share (LOW table); the
# qdisc picks a power-of-two slot distance, refuses what it cannot
# guarantee, and reports each class's slots and bounds.
if [ "${ARBT_DEMO_AUTO:-1}" = 1 ]; then
	echo
	say "part 2, auto mode: tc qdisc replace dev $DEV root handle 1: arbtable rate $RATE burst 30k"
	tc qdisc del dev "$DEV" root
	[ "$MODE" = dummy ] && dummy_up d0
	tc qdisc add dev "$DEV" root handle 1: arbtable auto rate "$RATE" burst 30k || exit 1
	AUTO=("10 rate 4mbit latency 50ms" "11 rate 2mbit latency 200ms" "12 share 10")
	for a in "${AUTO[@]}"; do
		read -r m opts <<<"$a"
		say "tc class add dev $DEV parent 1: classid 1:$m arbtable $opts"
		tc class add dev "$DEV" parent 1: classid 1:$m arbtable $opts || exit 1
	done
	for t in "${TENANTS[@]}"; do read -r m w port sz name <<<"$t"; add_filters "$m" "$port" || exit 1; done
	say "a tenant the table cannot guarantee is refused:"
	say "tc class add dev $DEV parent 1: classid 1:13 arbtable rate 9mbit latency 1ms"
	tc class add dev "$DEV" parent 1: classid 1:13 arbtable rate 9mbit latency 1ms 2>&1 | sed 's/^/    /'
	tc -d qdisc show dev "$DEV" | sed 's/^/    /'
	say "saturating every class for $((WIN + 4)) s"
	start_traffic
	measure "$DEV" arbtable 4 "$WIN" "$tmp/a"
	stop_traffic
	echo
	printf '%-8s %-6s %-5s %5s %6s %10s %12s %12s %12s %12s\n' tenant class table dist slots "reserved" "meas Mbit/s" "guaranteed" current "max HOL"
	tc -s class show dev "$DEV" | awk '
		$1 == "class" { c = $3; resv[c] = "-"; for (i = 4; i < NF; i++) if ($i == "rate") resv[c] = $(i + 1); if (index($0, "share")) resv[c] = "share" }
		$1 == "slots:" { hs[c] = $3; ls[c] = $8; tbl[c] = $3 > 0 ? "high" : ($8 > 0 ? "low" : "-") }
		$1 == "distance" { d[c] = $2 }
		$1 == "bound:" { g[c] = "-"; cu[c] = "-"; for (i = 2; i < NF; i++) { if ($i == "guaranteed") g[c] = $(i + 1); if ($i == "current") cu[c] = $(i + 1); if ($i == "max_hol_wait") h[c] = $(i + 1) } }
		END { for (c in tbl) printf "%s %s %s %s %s %s %s %s\n", c, tbl[c], (c in d) ? d[c] : "-", hs[c] + ls[c], resv[c], g[c], cu[c], h[c] }' | sort >"$tmp/cls"
	for t in "${TENANTS[@]}"; do
		read -r m w port sz name <<<"$t"
		read -r _ tb dist ns resv gb cb hol < <(awk -v c=1:$m '$1 == c' "$tmp/cls")
		printf '%-8s %-6s %-5s %5s %6s %10s %12.3f %12s %12s %12s\n' "$name" 1:$m "${tb:--}" "${dist:--}" "${ns:-0}" "${resv:--}" \
			"$(fcalc "$(m_rate "$tmp/a" 1:$m) / 1000000")" "${gb:--}" "${cb:--}" "${hol:--}"
	done
	printf 'total %.3f Mbit/s over %.1f s (qdisc rate %s); reserved classes get at least their rate, the rest is shared by weight\n' \
		"$(awk '$1 ~ /:/ { s += $3 } END { print s / 1e6 }' "$tmp/a")" "$(m_elapsed "$tmp/a")" "$RATE"
	total_check "part 2" "$tmp/a"
	echo "max HOL is guest wall-clock time: under TCG on a busy host it includes stretches the guest did not"
	echo "run at all; selftests/arbtable/test_auto_hol.sh checks the bound in bytes from the dequeue trace."
fi

# ----------------------------------------------------- part 3: TCP tenants
# Tenants in network namespaces speak TCP (iperf3) through the NIC with
# GSO from their veths, beside a UDP flood; flower on the source address
# classifies them.  Per tenant: reserved rate, TCP goodput at the
# receiver, share, guaranteed HOL bound and the kernel's measured max.
if [ "${ARBT_DEMO_TCP:-1}" = 1 ] && command -v iperf3 >/dev/null; then
	. "$ROOT/selftests/arbtable/lib_auto.sh"
	. "$ROOT/selftests/arbtable/lib_net.sh"
	echo
	tc qdisc del dev "$DEV" root 2>/dev/null
	[ "$MODE" = nic ] && { ip netns del demo-peer; sleep 1; }
	reserved_of() { awk -v r="$1" 'BEGIN { n = r + 0; if (r ~ /gbit$/) n *= 1e9; else if (r ~ /mbit$/) n *= 1e6; else if (r ~ /kbit$/) n *= 1e3; print n }'; }
	TCPT="gold 1 10 5201 1 tcp rate_2mbit_latency_30ms
silver 2 20 5202 8 tcp rate_3mbit
bronze 3 30 5203 16 tcp share_20
flood 4 40 5204 1 udp share_10"
	net_setup || { say "part 3: network setup failed"; exit 1; }
	while read -r name n m p f pr o; do net_tenant "$name" "$n" || exit 1; done <<<"$TCPT"
	cleanup() {
		pkill_ids=$(jobs -p); [ -n "$pkill_ids" ] && kill $pkill_ids 2>/dev/null
		net_teardown gold silver bronze flood
	}
	say "part 3, TCP tenants from network namespaces through $NET ($NET_KIND)"
	say "tc qdisc add dev $NET root handle 1: arbtable rate $RATE burst 30k highlimit 1"
	tc qdisc add dev "$NET" root handle 1: arbtable rate "$RATE" burst 30k highlimit 1 || exit 1
	while read -r name n m p f pr o; do
		say "tc class add dev $NET parent 1: classid 1:$m arbtable ${o//_/ }    # $name: $f $pr flow(s) from 10.88.$n.2"
		tc class add dev "$NET" parent 1: classid 1:$m arbtable ${o//_/ } || exit 1
		tc filter add dev "$NET" parent 1: protocol ip prio 1 flower src_ip "10.88.$n.2" classid "1:$m" || exit 1
	done <<<"$TCPT"
	say "TCP: gold 1 flow, silver 8, bronze 16; UDP flood at 30 Mbit/s; $((WIN + 5)) s"
	while read -r name n m p f pr o; do
		ip netns exec $NET_RX iperf3 -s -1 -p "$p" >/dev/null 2>&1 &
	done <<<"$TCPT"
	sleep 1
	cpids=
	while read -r name n m p f pr o; do
		if [ "$pr" = udp ]; then
			ip netns exec "arbt-$name" iperf3 -c $NET_RX_ADDR -p "$p" -u -b 30M -l 1400 -t $((WIN + 5)) -J >"$tmp/$name.json" 2>&1 &
		else
			ip netns exec "arbt-$name" iperf3 -c $NET_RX_ADDR -p "$p" -P "$f" -w 128K -t "$WIN" -O 4 -J >"$tmp/$name.json" 2>&1 &
		fi
		cpids+=" $!"
	done <<<"$TCPT"
	# every dequeue, and the tenants' enqueues: their queues in bytes,
	# so waits are counted in bytes of other tenants' traffic (link
	# time at the rate), whatever the emulated CPU does
	TR=/sys/kernel/tracing
	[ -d $TR/events ] || mount -t tracefs nodev $TR 2>/dev/null
	tron=0
	if [ -d $TR/events/arbtable/arbtable_enqueue ]; then
		echo 0 >$TR/tracing_on; echo mono >$TR/trace_clock
		echo 16384 >$TR/buffer_size_kb; : >$TR/trace
		echo 1 >$TR/events/arbtable/arbtable_enqueue/enable &&
			echo 1 >$TR/events/arbtable/arbtable_dequeue/enable && echo 1 >$TR/tracing_on && tron=1
	fi
	sleep 5
	[ $tron = 1 ] && echo WSTART >$TR/trace_marker
	measure "$NET" arbtable 0 "$((WIN - 2))" "$tmp/t"
	[ $tron = 1 ] && echo WEND >$TR/trace_marker
	wait $cpids 2>/dev/null
	drained "$NET" 1: arbtable 20 >/dev/null
	if [ $tron = 1 ]; then
		echo 0 >$TR/tracing_on
		trace_analyze $TR/trace "10 20" "30 40" >"$tmp/tr"
		echo 0 >$TR/events/arbtable/arbtable_enqueue/enable
		echo 0 >$TR/events/arbtable/arbtable_dequeue/enable
		: >$TR/trace
	fi
	echo
	tc -s class show dev "$NET" | awk "$_awk_t2ns"'
		$1 == "class" { c = $3 }
		$1 == "bound:" { g[c] = 0; for (i = 2; i < NF; i++) { if ($i == "guaranteed") g[c] = t2ns($(i + 1)); if ($i == "max_hol_wait") h[c] = $(i + 1) } }
		END { for (c in h) print c, g[c], h[c] }' >"$tmp/tcls"
	rbps=$(awk -v r="$RATE" 'BEGIN { n = r + 0; if (r ~ /gbit$/) n *= 1e9; else if (r ~ /mbit$/) n *= 1e6; else if (r ~ /kbit$/) n *= 1e3; print n }')
	read -r _ b30 b40 < <(grep '^BOTH ' "$tmp/tr" 2>/dev/null)
	printf '%-7s %-5s %-5s %9s %9s %9s %22s %21s\n' tenant class flows reserved "goodput" "class" "link share" "HOL wait / bound"
	printf '%-7s %-5s %-5s %9s %9s %9s %22s %21s\n' "" "" "" "" "Mbit/s" "Mbit/s" "while backlogged" "(link time)"
	while read -r name n m p f pr o; do
		read -r _ gbns _ < <(awk -v c=1:$m '$1 == c' "$tmp/tcls")
		resv=-; got=-; hol=-
		case $o in
		rate_*)	resv=$(sed -E 's/rate_([^_]+).*/\1/' <<<"$o")
			read -r _ sv mw _ _ _ _ wb wbk _ < <(awk -v c=1:$m '$1 == c' "$tmp/tr" 2>/dev/null)
			got=$(awk -v a="${wb:-0}" -v b="${wbk:-0}" -v r="$(reserved_of "$resv")" -v C="$rbps" \
				'BEGIN { if (b > 0) printf "%.1f%% (>= %.0f%%)", 100 * a / b, 100 * r / C; else print "-" }')
			hol=$(awk -v w="${mw:-0}" -v g="${gbns:-0}" -v C="$rbps" \
				'BEGIN { printf "%.1fms / %.1fms", w * 8e3 / C, g / 1e6 }') ;;
		share_*) resv="share ${o#share_}"
			got=$(awk -v a="${b30:-0}" -v b="${b40:-0}" -v me="$m" \
				'BEGIN { if (a + b > 0) printf "%.1f%% of the two", 100 * (me == 30 ? a : b) / (a + b); else print "-" }') ;;
		esac
		printf '%-7s %-5s %-5s %9s %9.3f %9.3f %22s %21s\n' "$name" 1:$m "$f" "$resv" \
			"$(fcalc "$(ip3_rx_bps "$tmp/$name.json") / 1e6")" "$(fcalc "$(m_rate "$tmp/t" 1:$m) / 1e6")" "$got" "$hol"
	done <<<"$TCPT"
	printf 'total %.3f Mbit/s over %.1f s (qdisc rate %s); goodput is TCP payload at the receiver (UDP: what the sender offered)\n' \
		"$(awk '$1 ~ /:/ { s += $3 } END { print s / 1e6 }' "$tmp/t")" "$(m_elapsed "$tmp/t")" "$RATE"
	total_check "part 3" "$tmp/t"
	echo "while backlogged: the part of the link a reserved tenant got whenever it had packets queued (its guarantee:"
	echo "at least its rate's part); bronze and flood split what they got while both had packets 20:10 (66.7% : 33.3%)."
	echo "HOL wait: the longest head-of-line wait, in bytes other tenants sent meanwhile (exact, from the"
	echo "arbtable_enqueue/dequeue trace) as link time at $RATE, beside the guaranteed bound; the kernel's"
	echo "wall-clock max_hol_wait (tc -s class show) also counts time an emulated guest was not running:"
	awk '{ printf "  %s max_hol_wait %s\n", $1, $3 }' "$tmp/tcls" | sort
	tc qdisc del dev "$NET" root 2>/dev/null
fi
if [ -n "$demo_failed" ]; then
	say "done; check FAILED in:$demo_failed"
	exit 1
fi
say "done"
