#!/usr/bin/env bash
# The test cluster's control plane on the host: etcd, kube-apiserver,
# kube-controller-manager (the resource-claim controller among its
# default controllers), kube-scheduler, built by scripts/k8s-build.sh.
# The node (containerd 2.1 and the kubelet) runs in the virtme-ng guest
# with the module and reaches the apiserver through QEMU's user network
# at 10.0.2.2:6443 (the host's loopback).  Why on the host: measured in
# Documentation/dev/kubernetes-test-cluster.rst.
#
#   control-plane.sh up DIR     PKI, start, wait until /readyz is ok
#   control-plane.sh down DIR   stop everything started by `up DIR`
#
# Logs: DIR/log/<component>.log.  Nothing listens beyond 127.0.0.1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
cmd=$1
mkdir -p "$2"
dir=$(cd "$2" && pwd)
# the node check-k8s boots first, and the second node the two_nodes
# scenario asks for (node2.sh)
nodes="${ARBT_K8S_NODE:-arbt-node} ${ARBT_K8S_NODE2:-arbt-node2}"
bin=$("$root/scripts/k8s-build.sh" --print)/bin

down() {
	local p
	for p in "$dir"/pid/*; do
		[ -f "$p" ] || continue
		kill "$(cat "$p" 2>/dev/null)" 2>/dev/null || true
	done
	for p in "$dir"/pid/*; do
		[ -f "$p" ] || continue
		for _ in $(seq 50); do
			kill -0 "$(cat "$p" 2>/dev/null)" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$(cat "$p" 2>/dev/null)" 2>/dev/null || true
		rm -f "$p"
	done
}
if [ "$cmd" = down ]; then
	down
	exit 0
fi
[ "$cmd" = up ] || { echo "control-plane.sh: up|down DIR" >&2; exit 2; }
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl; do
	[ -x "$bin/$b" ] || { echo "control-plane.sh: no $bin/$b (scripts/k8s-build.sh)" >&2; exit 1; }
done
mkdir -p "$dir"/{log,pid,etcd}
# shellcheck disable=SC2086 # two names
"$here/pki.sh" "$dir/pki" https://10.0.2.2:6443 $nodes
p=$dir/pki
start() { # NAME ARGS...: in the background, its pid in DIR/pid/NAME
	local n=$1
	shift
	"$@" >"$dir/log/$n.log" 2>&1 &
	echo $! >"$dir/pid/$n"
}
t0=$(date +%s.%N)
start etcd "$bin/etcd" --name arbt --data-dir "$dir/etcd" \
	--listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
	--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
	--initial-cluster arbt=http://127.0.0.1:2380 --log-level warn
# PodGroups whose ResourceClaims are reserved for the group (both gates
# beta, off by default in v1.37; the podgroup scenario), on every
# component and the kubelet (node.sh)
gates=GenericWorkload=true,DRAWorkloadResourceClaims=true
start kube-apiserver "$bin/kube-apiserver" \
	--feature-gates "$gates" --runtime-config scheduling.k8s.io/v1beta1=true \
	--etcd-servers http://127.0.0.1:2379 \
	--bind-address 127.0.0.1 --secure-port 6443 --advertise-address 10.0.2.2 \
	--service-cluster-ip-range 10.96.0.0/16 \
	--client-ca-file "$p/ca.crt" --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" \
	--kubelet-client-certificate "$p/apiserver-kubelet-client.crt" \
	--kubelet-client-key "$p/apiserver-kubelet-client.key" \
	--kubelet-certificate-authority "$p/ca.crt" \
	--service-account-issuer https://kubernetes.default.svc \
	--service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
	--authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
	--allow-privileged=true --endpoint-reconciler-type lease --profiling=false
k() { "$bin/kubectl" --kubeconfig "$p/admin.kubeconfig" "$@"; }
SECONDS=0
while [ $SECONDS -lt 300 ]; do
	if k get --raw /readyz >/dev/null 2>&1; then
		printf 'control plane: apiserver ready after %.1f s (%s)\n' \
			"$(echo "$(date +%s.%N) - $t0" | bc)" "$(k version -o json | sed -n 's/.*"gitVersion": "\(.*\)".*/\1/p' | tail -n1)"
		break
	fi
	for n in etcd kube-apiserver; do
		kill -0 "$(cat "$dir/pid/$n")" 2>/dev/null && continue
		echo "control plane: $n exited; its log:" >&2
		tail -n 30 "$dir/log/$n.log" >&2
		down
		exit 1
	done
	sleep 0.2
done
if [ $SECONDS -ge 300 ]; then
	echo "control plane: apiserver not ready in 300 s" >&2
	tail -n 30 "$dir/log/kube-apiserver.log" >&2
	down
	exit 1
fi
# the controllers once the apiserver has made its bootstrap RBAC roles
# (started earlier, kube-controller-manager cannot read
# extension-apiserver-authentication and exits)
start kube-controller-manager "$bin/kube-controller-manager" \
	--feature-gates "$gates" \
	--kubeconfig "$p/kube-controller-manager.kubeconfig" \
	--authentication-kubeconfig "$p/kube-controller-manager.kubeconfig" \
	--authorization-kubeconfig "$p/kube-controller-manager.kubeconfig" \
	--bind-address 127.0.0.1 --secure-port 10257 \
	--service-account-private-key-file "$p/sa.key" --root-ca-file "$p/ca.crt" \
	--use-service-account-credentials=true --cluster-signing-cert-file "$p/ca.crt" \
	--cluster-signing-key-file "$p/ca.key" --leader-elect=false --controllers '*'
start kube-scheduler "$bin/kube-scheduler" \
	--feature-gates "$gates" \
	--kubeconfig "$p/kube-scheduler.kubeconfig" \
	--authentication-kubeconfig "$p/kube-scheduler.kubeconfig" \
	--authorization-kubeconfig "$p/kube-scheduler.kubeconfig" \
	--bind-address 127.0.0.1 --secure-port 10259 --leader-elect=false
# the default service account: pods are refused until the service
# account controller has made it
for _ in $(seq 300); do
	if k -n default get serviceaccount default >/dev/null 2>&1; then
		printf 'control plane: controllers up after %.1f s\n' "$(echo "$(date +%s.%N) - $t0" | bc)"
		exit 0
	fi
	for n in kube-controller-manager kube-scheduler; do
		kill -0 "$(cat "$dir/pid/$n")" 2>/dev/null && continue
		echo "control plane: $n exited; its log:" >&2
		tail -n 30 "$dir/log/$n.log" >&2
		down
		exit 1
	done
	sleep 0.5
done
echo "control plane: no default service account in 150 s" >&2
tail -n 30 "$dir/log/kube-controller-manager.log" >&2
down
exit 1
