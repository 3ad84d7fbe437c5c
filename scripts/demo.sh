#!/usr/bin/env bash
# sch_arbtable demo: build, boot the 6.1 distro kernel under virtme-ng with
# two virtio-net NICs on one QEMU hub (`vng --network loop`), move one NIC
# into a netns, attach arbtable to the other, saturate three tenant classes
# with paced pktgen producers (skb->priority names the class; flower
# filters by port classify the same tenants' socket traffic) and print
# configured vs measured shares: first with a manual HIGH/LOW table (IB
# style), then with tenants admitted by rate + latency (auto mode) with
# their slots and latency bounds. Without two NICs in the guest it uses a
# dummy device.
#
#   bash scripts/demo.sh            (or: make demo)
#   DEMO_SECONDS=10 DEMO_RATE=10mbit KVER=... ARBTABLE_KVM=1
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
	export ARBT_DEMO_AUTO=${DEMO_AUTO:-1}
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

say "part 1, manual tables (IB style): tc qdisc add dev $DEV root handle 1: arbtable manual rate $RATE"
tc qdisc add dev "$DEV" root handle 1: arbtable manual rate "$RATE" || exit 1
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
total=$(awk '$1 != "T" { s += $2 } END { print s }' "$tmp/m")
W=0; for t in "${TENANTS[@]}"; do read -r m w _ <<<"$t"; W=$((W + w)); done
for t in "${TENANTS[@]}"; do
	read -r m w port sz name <<<"$t"
	b=$(m_bytes "$tmp/m" 1:$m); r=$(m_rate "$tmp/m" 1:$m)
	bl1=$(m_field "$tmp/m" 1:$m 4); bl2=$(m_field "$tmp/m" 1:$m 5)
	printf '%-8s %-7s %7s %11.2f%% %11.2f%% %14.3f %9s\n' "$name" 1:$m "$w" \
		"$(fcalc "100 * $w / $W")" "$(fcalc "${total:-0} ? 100 * ${b:-0} / $total : 0")" \
		"$(fcalc "${r:-0} / 1000000")" "$([ "${bl1:-0}" -gt 0 ] && [ "${bl2:-0}" -gt 0 ] && echo yes || echo "no")"
done
printf 'total %.3f Mbit/s over %.1f s (qdisc rate %s)\n' "$(awk '$1 != "T" { s += $3 } END { print s / 1e6 }' "$tmp/m")" "$(m_elapsed "$tmp/m")" "$RATE"
echo
stop_traffic

# --------------------------------------------------------------- auto mode
# Part 2: the allocator fills the table. Tenants ask for a rate and a
# latency bound (HIGH table) or a best-effort share (LOW table); the
# qdisc picks a power-of-two slot distance, refuses what it cannot
# guarantee, and reports each class's slots and bounds.
if [ "${ARBT_DEMO_AUTO:-1}" = 1 ]; then
	echo
	say "part 2, auto mode: tc qdisc replace dev $DEV root handle 1: arbtable rate $RATE"
	tc qdisc del dev "$DEV" root
	[ "$MODE" = dummy ] && dummy_up d0
	tc qdisc add dev "$DEV" root handle 1: arbtable auto rate "$RATE" || exit 1
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
		$1 == "index" { if (!(c in d)) d[c] = "-" }
		$1 == "bound:" { g[c] = "-"; cu[c] = "-"; for (i = 2; i < NF; i++) { if ($i == "guaranteed") g[c] = $(i + 1); if ($i == "current") cu[c] = $(i + 1); if ($i == "max_hol_wait") h[c] = $(i + 1) } }
		END { for (c in tbl) printf "%s %s %s %s %s %s %s %s\n", c, tbl[c], d[c], hs[c] + ls[c], resv[c], g[c], cu[c], h[c] }' | sort >"$tmp/cls"
	for t in "${TENANTS[@]}"; do
		read -r m w port sz name <<<"$t"
		read -r _ tb dist ns resv gb cb hol < <(awk -v c=1:$m '$1 == c' "$tmp/cls")
		printf '%-8s %-6s %-5s %5s %6s %10s %12.3f %12s %12s %12s\n' "$name" 1:$m "${tb:--}" "${dist:--}" "${ns:-0}" "${resv:--}" \
			"$(fcalc "$(m_rate "$tmp/a" 1:$m) / 1000000")" "${gb:--}" "${cb:--}" "${hol:--}"
	done
	printf 'total %.3f Mbit/s over %.1f s (qdisc rate %s); reserved classes get at least their rate, the rest is shared by weight\n' \
		"$(awk '$1 != "T" { s += $3 } END { print s / 1e6 }' "$tmp/a")" "$(m_elapsed "$tmp/a")" "$RATE"
	echo "max HOL is guest wall-clock time: under TCG on a busy host it includes stretches the guest did not"
	echo "run at all; selftests/arbtable/test_auto_hol.sh checks the bound in bytes from the dequeue trace."
fi
say "done"
