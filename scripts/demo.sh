#!/usr/bin/env bash
# sch_arbtable demo: build, boot the 6.1 distro kernel under virtme-ng with
# two virtio-net NICs on one QEMU hub (`vng --network loop`), move one NIC
# into a netns, attach arbtable to the other with a manual HIGH/LOW table,
# saturate three tenant classes with iperf3 UDP (told apart by destination
# port with flower filters) and print configured vs measured shares.
# Without two NICs in the guest it falls back to a dummy device + pktgen.
#
#   bash scripts/demo.sh            (or: make demo)
#   DEMO_SECONDS=10 DEMO_RATE=10mbit KVER=... ARBTABLE_KVM=1
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)

if [ "${1:-}" != --guest ]; then
	# ------------------------------------------------------------- host
	cd "$ROOT" || exit 1
	echo "[demo] building (make all)"
	make -C "$ROOT" all >/tmp/arbtable-demo-build.log 2>&1 ||
		{ tail -n 30 /tmp/arbtable-demo-build.log; echo "[demo] build failed"; exit 1; }
	KVER=${KVER:-$(ls /boot/vmlinuz-6.1.* | sed 's|.*/vmlinuz-||' | sort -V | tail -n1)}
	export ARBT_DEMO_SECONDS=${DEMO_SECONDS:-10} ARBT_DEMO_RATE=${DEMO_RATE:-10mbit}
	export ARBT_DEMO_AUTO=${DEMO_AUTO:-0}
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
if [ $# -ge 2 ] && command -v iperf3 >/dev/null; then
	MODE=iperf3 DEV=$1 PEER=$2
else
	MODE=pktgen DEV=d0
fi
say "traffic: $MODE on $DEV${PEER:+ (peer $PEER in netns demo-peer)}"

cleanup() {
	pkill_ids=$(jobs -p); [ -n "$pkill_ids" ] && kill $pkill_ids 2>/dev/null
	[ "$MODE" = pktgen ] && pg_stop
	[ -n "${server_pids:-}" ] && kill $server_pids 2>/dev/null
	true
}
trap cleanup EXIT

if [ "$MODE" = iperf3 ]; then
	ip netns add demo-peer
	ip link set "$PEER" netns demo-peer
	ip addr add 10.77.0.1/24 dev "$DEV"
	ip link set "$DEV" txqueuelen 1000 up
	ip -n demo-peer addr add 10.77.0.2/24 dev "$PEER"
	ip -n demo-peer link set "$PEER" up
	ip -n demo-peer link set lo up
	# MTU-sized packets at the qdisc, not 64 KB GSO bursts
	ethtool -K "$DEV" tso off gso off gro off >/dev/null 2>&1
	server_pids=
	for t in "${TENANTS[@]}"; do
		read -r m w port sz name <<<"$t"
		ip netns exec demo-peer iperf3 -s -p "$port" >/dev/null 2>&1 &
		server_pids="$server_pids $!"
	done
	sleep 1
else
	dummy_up d0
fi

say "qdisc: tc qdisc add dev $DEV root handle 1: arbtable manual rate $RATE"
tc qdisc add dev "$DEV" root handle 1: arbtable manual rate "$RATE" || exit 1
high=
spec=
for t in "${TENANTS[@]}"; do
	read -r m w port sz name <<<"$t"
	tc class add dev "$DEV" parent 1: classid 1:$m arbtable || exit 1
	high=${high:+$high,}$m:$w
	spec="$spec 1:$m=$w"
	if [ "$MODE" = iperf3 ]; then
		# the iperf3 control connection (TCP, same port) must not sit in the
		# unclassified best-effort queue behind saturated tenants
		for proto in udp tcp; do
			tc filter add dev "$DEV" parent 1: protocol ip prio 1 flower ip_proto $proto dst_port "$port" classid 1:$m || exit 1
		done
	fi
done
# highlimit 255: the low table only gets what high leaves, so while every
# tenant is backlogged the HIGH weights alone set the split
say "tables: tc qdisc change dev $DEV root handle 1: arbtable highlimit 255 high $high low $LOW"
tc qdisc change dev "$DEV" root handle 1: arbtable highlimit 255 high "$high" low "$LOW" || exit 1
tc -d qdisc show dev "$DEV" | sed 's/^/    /'

say "saturating every class for $((WIN + 4)) s"
if [ "$MODE" = iperf3 ]; then
	for t in "${TENANTS[@]}"; do
		read -r m w port sz name <<<"$t"
		# UDP above the tenant's share keeps its class backlogged (TCP's
		# small-queue limit would keep only ~2 packets per socket queued)
		iperf3 -c 10.77.0.2 -p "$port" -u -b 15M -l "$sz" -t $((WIN + 8)) >/dev/null 2>&1 &
	done
else
	i=0; pgspec=
	for t in "${TENANTS[@]}"; do read -r m w port sz name <<<"$t"; pgspec="$pgspec $m:$sz:10"; done
	DEV=d0 arb_traffic "$pgspec" && pg_start
fi
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
[ "$MODE" = pktgen ] && pg_stop
wait 2>/dev/null

# --------------------------------------------------------------- auto mode
# Next step of the demo (enabled with DEMO_AUTO=1 once the allocator is
# wired up): a qdisc in `auto` mode admits tenants from a rate and a
# latency bound, and `tc -d` shows where the allocator put their slots.
if [ "${ARBT_DEMO_AUTO:-0}" = 1 ]; then
	say "auto mode: admitting tenants from rate + latency"
	tc qdisc del dev "$DEV" root
	tc qdisc add dev "$DEV" root handle 1: arbtable auto rate "$RATE" || exit 1
	tc class add dev "$DEV" parent 1: classid 1:10 arbtable rate 4mbit latency 5ms
	tc class add dev "$DEV" parent 1: classid 1:11 arbtable rate 2mbit latency 20ms
	tc class add dev "$DEV" parent 1: classid 1:12 arbtable share 10
	tc -d qdisc show dev "$DEV" | sed 's/^/    /'
	tc -d class show dev "$DEV" | sed 's/^/    /'
fi
say "done"
