#!/usr/bin/env bash
# The test cluster's node, in the virtme-ng guest (scripts/vm.sh -n):
# containerd 2.1 with CRI and NRI, the kubelet, pod networking by the
# bridge plugin, all state on tmpfs in a private mount namespace; the
# control plane runs on the host (control-plane.sh) and is reached at
# 10.0.2.2:6443 through a third virtio-net NIC on QEMU's user network
# (MAC 52:54:00:a7:b1:e0; the two loop NICs stay the tests' egress NIC and
# receiver).  Sourced by the guest's test script after lib.sh and
# lib_net.sh:
#
#   node_up RUN_DIR     start containerd and the kubelet, wait for Ready
#   node_down           stop them (pods first)
#
# Sets: KUBECTL (a function k), NODE, POD_CIDR.
K8S_MAC=52:54:00:a7:b1:e0
# lib_net.sh's net_setup leaves it alone
export ARBT_NET_SKIP_MAC=$K8S_MAC
NODE=${ARBT_K8S_NODE:-arbt-node}
# the second node (node2.sh) has its own
POD_CIDR=${ARBT_K8S_POD_CIDR:-10.88.200.0/24}
RT=${ARBT_RUNTIMES:-/var/lib/arbtable/containerd-2}
K8S_BIN=${ARBT_K8S_BIN:?}

k() { "$K8S_BIN/kubectl" --kubeconfig "$RUN/pki/admin-guest.kubeconfig" "$@"; }

# the NIC on QEMU's user network, by its MAC
node_k8s_nic() {
	local n
	for n in /sys/class/net/*; do
		[ "$(cat "$n/address" 2>/dev/null)" = "$K8S_MAC" ] && { echo "${n##*/}"; return 0; }
	done
	return 1
}

node_mounts() {
	# a private mount namespace is the caller's (unshare -m); within it,
	# mounts propagate as systemd makes them on a host (shared), so that a
	# pod's network namespace containerd mounts under /run/netns after the
	# DRA driver's container started reaches that container's
	# HostToContainer mount; then the directories the node writes, on tmpfs
	mount --make-rshared / || return 1
	mkdir -p /tmp/arbt-keep &&
		mount --bind /var/lib/arbtable /tmp/arbt-keep &&
		mount -t tmpfs -o size=3G arbt-varlib /var/lib &&
		mkdir -p /var/lib/arbtable && mount --bind /tmp/arbt-keep /var/lib/arbtable &&
		mount -t tmpfs arbt-etc-cni /etc/cni 2>/dev/null ||
		{ mkdir -p /tmp/arbt-etc-cni && mount --bind /tmp/arbt-etc-cni /etc/cni; } || return 1
	mkdir -p /etc/cni/net.d
	mount -t tmpfs arbt-opt /opt && mkdir -p /opt/cni/bin &&
		mount -t tmpfs arbt-varlog /var/log &&
		mkdir -p /run/containerd /var/run/nri /var/lib/kubelet /etc/kubernetes 2>/dev/null
	[ -d /etc/kubernetes ] || { mkdir -p /tmp/arbt-etc-k8s && mount --bind /tmp/arbt-etc-k8s /etc/kubernetes; }
	true
}

node_cgroups() {
	if ! grep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts; then
		mount -t cgroup2 none /sys/fs/cgroup || return 1
	fi
	# the kubelet needs cpu, memory, pids (and cpuset, hugetlb, io when
	# there) delegated from the root
	local c
	for c in $(cat /sys/fs/cgroup/cgroup.controllers); do
		echo "+$c" >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
	done
	grep -qw memory /sys/fs/cgroup/cgroup.subtree_control
}

node_net() {
	local nic
	nic=$(node_k8s_nic) || { echo "node: no NIC with MAC $K8S_MAC (vm.sh's QEMU options)"; return 1; }
	ip link set "$nic" up && ip addr add 10.0.2.15/24 dev "$nic" || return 1
	ip route replace default via 10.0.2.2 dev "$nic" || return 1
	sysctl -qw net.ipv4.ip_forward=1
	for p in bridge host-local loopback portmap; do
		ln -sf "$RT/root/usr/lib/cni/$p" "/opt/cni/bin/$p"
	done
	cat >/etc/cni/net.d/10-pods.conflist <<-NET
	{
	  "cniVersion": "1.1.0",
	  "name": "pods",
	  "plugins": [
	    { "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false,
	      "hairpinMode": true,
	      "ipam": { "type": "host-local", "ranges": [[{ "subnet": "$POD_CIDR" }]],
	                "routes": [{ "dst": "0.0.0.0/0" }] } },
	    { "type": "portmap", "capabilities": { "portMappings": true } }
	  ]
	}
	NET
}

node_containerd() {
	local c=/var/lib/containerd-cfg snap=overlayfs
	mkdir -p $c /var/lib/containerd /run/containerd
	# overlayfs needs an upper that supports it: tmpfs does
	cat >$c/config.toml <<-CFG
	version = 3
	root = "/var/lib/containerd"
	state = "/run/containerd"
	[grpc]
	  address = "/run/containerd/containerd.sock"
	[plugins.'io.containerd.cri.v1.images']
	  snapshotter = "$snap"
	  [plugins.'io.containerd.cri.v1.images'.pinned_images]
	    sandbox = "localhost/arbtable/pause:1"
	[plugins.'io.containerd.cri.v1.runtime']
	  [plugins.'io.containerd.cri.v1.runtime'.cni]
	    bin_dirs = ["/opt/cni/bin"]
	    conf_dir = "/etc/cni/net.d"
	[plugins.'io.containerd.nri.v1.nri']
	  disable = false
	  socket_path = "/var/run/nri/nri.sock"
	CFG
	PATH=$RT/root/usr/bin:$PATH containerd --config $c/config.toml >/var/log/containerd.log 2>&1 &
	CTD_PID=$!
	for _ in $(seq 200); do
		"$RT/root/usr/bin/ctr" -a /run/containerd/containerd.sock version >/dev/null 2>&1 && return 0
		sleep 0.3
	done
	tail -n 20 /var/log/containerd.log
	return 1
}

ctr_k8s() { "$RT/root/usr/bin/ctr" -a /run/containerd/containerd.sock -n k8s.io "$@"; }

node_images() {
	ctr_k8s images import --no-unpack=false "$K8S_IMAGES/pause.oci.tar" >/dev/null &&
		ctr_k8s images import "$RT/image/tenant.oci.tar" >/dev/null
}

node_kubelet() {
	cat >/var/lib/kubelet/config.yaml <<-CFG
	apiVersion: kubelet.config.k8s.io/v1beta1
	kind: KubeletConfiguration
	authentication:
	  anonymous: {enabled: false}
	  webhook: {enabled: false}
	  x509: {clientCAFile: $RUN/pki/ca.crt}
	authorization: {mode: AlwaysAllow}
	tlsCertFile: $RUN/pki/kubelet-serving-$NODE.crt
	tlsPrivateKeyFile: $RUN/pki/kubelet-serving-$NODE.key
	cgroupDriver: cgroupfs
	containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
	failSwapOn: false
	maxPods: 110
	podCIDR: $POD_CIDR
	resolvConf: ""
	serializeImagePulls: false
	imageGCHighThresholdPercent: 100
	evictionHard: {memory.available: "50Mi", nodefs.available: "1%", imagefs.available: "1%"}
	nodeStatusReportFrequency: 10s
	featureGates: {GenericWorkload: true, DRAWorkloadResourceClaims: true}
	CFG
	"$K8S_BIN/kubelet" --config /var/lib/kubelet/config.yaml \
		--kubeconfig "$RUN/pki/kubelet-$NODE.kubeconfig" \
		--hostname-override "$NODE" --node-ip 10.0.2.15 \
		--v 1 >/var/log/kubelet.log 2>&1 &
	KUBELET_PID=$!
}

# kube-proxy (nftables mode): the kubernetes service (10.96.0.1:443) that
# in-cluster clients such as the DRA driver use leads to the apiserver
node_proxy() {
	"$K8S_BIN/kube-proxy" --kubeconfig "$RUN/pki/kube-proxy.kubeconfig" \
		--hostname-override "$NODE" --proxy-mode nftables \
		--cluster-cidr "$POD_CIDR" --metrics-bind-address 127.0.0.1:10249 \
		--healthz-bind-address 127.0.0.1:10256 >/var/log/kube-proxy.log 2>&1 &
	PROXY_PID=$!
}

# node_ready SECONDS
node_ready() {
	local i
	for i in $(seq "$1"); do
		[ "$(k get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ] && return 0
		kill -0 "$KUBELET_PID" 2>/dev/null || { echo "node: the kubelet exited"; tail -n 30 /var/log/kubelet.log; return 1; }
		sleep 1
	done
	return 1
}

node_up() {
	RUN=$1
	K8S_IMAGES=$RUN/images
	local t0=$SECONDS
	_step() { echo "# node: $1 after $((SECONDS - t0)) s"; }
	node_mounts || { echo "node: mounts"; return 1; }
	node_cgroups || { echo "node: cgroup v2 with memory delegated"; return 1; }
	node_net || return 1
	node_containerd || { echo "node: containerd did not start"; return 1; }
	_step "containerd up"
	node_images || { echo "node: image import"; return 1; }
	_step "images imported"
	node_kubelet
	node_proxy
	node_ready 600 || { echo "node: not Ready in 600 s"; tail -n 40 /var/log/kubelet.log; return 1; }
	_step "Ready"
}

node_down() {
	# this node's pods only: a second node leaves while the first runs on
	k delete pods --all-namespaces --field-selector "spec.nodeName=$NODE" --wait=false >/dev/null 2>&1
	[ -n "${KUBELET_PID:-}" ] && kill "$KUBELET_PID" 2>/dev/null
	[ -n "${PROXY_PID:-}" ] && kill "$PROXY_PID" 2>/dev/null
	sleep 1
	ctr_k8s tasks ls -q 2>/dev/null | while read -r t; do ctr_k8s tasks kill -s KILL "$t" >/dev/null 2>&1; done
	[ -n "${CTD_PID:-}" ] && kill "$CTD_PID" 2>/dev/null
	wait 2>/dev/null
}
