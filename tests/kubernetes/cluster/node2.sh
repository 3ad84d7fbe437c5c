#!/usr/bin/env bash
# The second node of check-k8s, in a second virtme-ng guest that
# check-k8s.sh boots when the two_nodes scenario asks for it (ConfigMap
# default/arbt-node2, data.state "wanted"): its own QEMU user network (the
# host's apiserver at 10.0.2.2, the node at 10.0.2.15 as on the first), a
# NIC whose link speed ethtool sets lower than the first node's NICs, the
# same containerd, kubelet and module.  The scenario runs in the first
# guest; this one answers for its kernel through the same ConfigMap:
#
#   data.state   wanted (the scenario) -> ready (here: Ready, the driver's
#                image imported; data.nic, data.speed) -> done (the
#                scenario) -> left (here: the node deleted)
#   data.ask     a number the scenario raises; here answered with
#                data.answer (arbtablectl --json show NIC, "" with no
#                arbtable root) and data.answered (that number), after
#   data.cmd     "speed MBIT" with that ask: the NIC's link speed set
#
#   node2.sh RUN_DIR    TAP, like guest.sh
here=$(cd "$(dirname "$0")" && pwd)
run=$1
# shellcheck source=selftests/arbtable/lib.sh
. "$(cd "$here/../../.." && pwd)/selftests/arbtable/lib.sh"
# shellcheck source=selftests/arbtable/lib_net.sh
. "$ARBT_ROOT/selftests/arbtable/lib_net.sh"
# shellcheck source=tests/kubernetes/cluster/node.sh
. "$here/node.sh"
CM=arbt-node2
MBIT=${ARBT_K8S_NODE2_MBIT:-10}
CTL=$ARBT_ROOT/build/tools/arbtablectl

# cm_data KEY=VALUE...: merged into the ConfigMap's data
cm_data() {
	local p='{}' kv
	for kv in "$@"; do
		p=$(jq -c --arg k "${kv%%=*}" --arg v "${kv#*=}" '.data[$k] = $v' <<<"$p")
	done
	k patch configmap $CM --type merge -p "$p" >/dev/null
}

tap_begin "the second node ($NODE) of the two_nodes scenario"
t0=$(now)
net_setup || { tap_fail "lib_net.sh net_setup"; tap_end; exit 1; }
# a virtio-net NIC's speed is what ethtool sets (unknown until then); the
# driver (no rate in its NIC list here) and the module's auto capacity
# read it
ethtool -s "$NET" speed "$MBIT" duplex full
speed=$(cat "/sys/class/net/$NET/speed" 2>/dev/null)
tap_check "$NET's link speed set to $MBIT Mbit/s (reads ${speed:-nothing})" test "$speed" = "$MBIT"
ip netns exec "$NET_RX" iperf3 -s -D -p 5201 >/dev/null 2>&1
if ! node_up "$run"; then
	tap_fail "$NODE joins and is Ready"
	tail -n 30 /var/log/kubelet.log | diag "$(cat)"
	cm_data state=failed
	node_down
	tap_end
	exit 1
fi
tap_ok "$NODE joins and is Ready ($(fcalc "$(now) - $t0") s from guest start)"
if ! ctr_k8s images import "$RUN/images/arbtable-dra.oci.tar" >/dev/null; then
	tap_fail "the driver's image imported"
	cm_data state=failed
	node_down
	tap_end
	exit 1
fi
cm_data state=ready "nic=$NET" "speed=$speed"

# answer until the scenario says done (or a deadline, or the apiserver
# gone for a minute: the first guest ended without saying)
deadline=$(($(date +%s) + ${ARBT_K8S_NODE2_SECS:-2400}))
last='' state='' lost=0
while [ "$(date +%s)" -lt "$deadline" ] && [ "$state" != "done" ]; do
	# one watch (one kubectl) for as long as the apiserver keeps it
	while read -r state ask cmd; do
		[ "$state" = "done" ] && break
		[ -n "$ask" ] && [ "$ask" != "$last" ] || continue
		case $cmd in
		"speed "[0-9]*)
			ethtool -s "$NET" speed "${cmd#speed }" duplex full
			diag "$NET's link speed set to $(cat "/sys/class/net/$NET/speed") Mbit/s (ask $ask)"
			;;
		esac
		if tc qdisc show dev "$NET" root | grep -q '^qdisc arbtable '; then
			ans=$("$CTL" --json show "$NET" 2>&1) || ans="arbtablectl failed: $ans"
		else
			ans=
		fi
		cm_data "answer=$ans" "answered=$ask"
		last=$ask
		lost=0
	done < <(timeout $((deadline - $(date +%s))) "$K8S_BIN/kubectl" \
		--kubeconfig "$RUN/pki/admin-guest.kubeconfig" get configmap $CM -w \
		-o jsonpath='{.data.state}{" "}{.data.ask}{" "}{.data.cmd}{"\n"}' 2>/dev/null)
	# the watch outlives a break out of the loop (node_down waits for
	# every child)
	kill $! 2>/dev/null
	[ "$state" = "done" ] && break
	k get --raw /readyz >/dev/null 2>&1 && lost=0 || lost=$((lost + 1))
	[ "$lost" -lt 12 ] || break
	sleep 5
done
tap_check "the scenario ended with the second node still answering (state ${state:-none})" test "$state" = "done"
node_down
k delete node "$NODE" --wait=true --timeout=60s >/dev/null 2>&1
cm_data state=left
tap_end
