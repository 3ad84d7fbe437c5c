#!/usr/bin/env bash
# The Kubernetes checks, in the guest (check-k8s.sh boots it): the node
# joins the host's control plane, then each scenario runs against the real
# kubelet, scheduler and API server.  TAP, like the selftests.
#
#   guest.sh RUN_DIR
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
run=$1
# shellcheck source=selftests/arbtable/lib.sh
. "$root/selftests/arbtable/lib.sh"
# shellcheck source=selftests/arbtable/lib_net.sh
. "$root/selftests/arbtable/lib_net.sh"
# shellcheck source=tests/kubernetes/cluster/node.sh
. "$here/node.sh"

tap_begin "Kubernetes v1.37 node (containerd 2.1, kubelet) in the guest, control plane on the host"
t0=$(now)
if ! node_up "$run"; then
	tap_fail "the node joins and is Ready"
	tail -n 30 /var/log/containerd.log | diag "$(cat)"
	node_down
	tap_end
	exit 1
fi
tap_ok "the node joins and is Ready ($(fcalc "$(now) - $t0") s from guest start)"
diag "$(k get nodes -o wide 2>&1)"

# shellcheck source=tests/kubernetes/cluster/dra-checks.sh
. "$here/dra-checks.sh"
# one pod without a claim, before the driver exists
t1=$(now)
plain_pod hello
tap_check "a pod without a claim runs" k wait --for=condition=Ready pod/hello --timeout=300s
diag "pod Ready after $(fcalc "$(now) - $t1") s: $(k get pod hello -o wide --no-headers 2>&1)"
k delete pod hello --wait=true --timeout=120s >/dev/null 2>&1

t1=$(now)
if dra_setup; then
	tap_ok "arbtable-dra deployed from deploy/kubernetes/dra with kubectl, its image imported ($(fcalc "$(now) - $t1") s)"
	for s in ${ARBT_K8S_SCENARIOS:-publish ops admission goodput share shared podgroup admin escape quota two_nics two_nodes exact full node_changes recovery helm 110}; do
		t1=$(now)
		"dra_check_$s"
		diag "scenario $s: $(fcalc "$(now) - $t1") s"
	done
else
	tap_fail "arbtable-dra deployed from deploy/kubernetes/dra with kubectl, its image imported"
	k -n kube-system get pods -o wide 2>&1 | diag "$(cat)"
	k -n kube-system describe ds arbtable-dra 2>&1 | tail -n 20 | diag "$(cat)"
	tail -n 30 /var/log/kubelet.log | diag "$(cat)"
fi
# the driver's own log, from the kubelet's files
diag "arbtable-dra log (tail): $(cat /var/log/pods/kube-system_arbtable-dra-*/*/*.log 2>/dev/null | tail -n 15)"
node_down
tap_end
