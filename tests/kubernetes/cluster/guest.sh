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

# one pod, the way every scenario starts them
t1=$(now)
k apply -f - >/dev/null <<POD
apiVersion: v1
kind: Pod
metadata: {name: hello}
spec:
  containers:
  - name: c
    image: localhost/arbtable/tenant:1
    imagePullPolicy: Never
    command: ["sleep", "3600"]
POD
tap_check "a pod without a claim runs" k wait --for=condition=Ready pod/hello --timeout=300s
diag "pod Ready after $(fcalc "$(now) - $t1") s: $(k get pod hello -o wide --no-headers 2>&1)"
k delete pod hello --wait=true --timeout=120s >/dev/null 2>&1
node_down
tap_end
