#!/usr/bin/env bash
# The test cluster's PKI and kubeconfigs, made fresh for each run with
# openssl (nothing is kept between runs):
#
#   pki.sh DIR APISERVER_URL NODE_NAME...
#
# DIR/ca.{crt,key}          the cluster CA (clients and serving certs)
# DIR/apiserver.{crt,key}   serving cert: 127.0.0.1, 10.0.2.2 (the guest's
#                           way to the host), 10.96.0.1 (the kubernetes
#                           service), kubernetes.default.svc...
# DIR/sa.{key,pub}          service account token signing key pair
# DIR/<who>.kubeconfig      admin (system:masters), kube-controller-manager,
#                           kube-scheduler, kube-proxy (system:kube-proxy)
# DIR/kubelet-NODE.kubeconfig  each node's kubelet (system:node:NODE, group
#                           system:nodes: Node authorization and
#                           NodeRestriction apply)
# DIR/kubelet-serving-NODE.{crt,key}, DIR/apiserver-kubelet-client.{crt,key}
set -euo pipefail
mkdir -p "$1"
dir=$(cd "$1" && pwd)
url=$2
shift 2
nodes=$*
cd "$dir"
umask 077
days=2
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days $days \
	-subj "/CN=arbtable-test-cluster-ca" -keyout ca.key -out ca.crt 2>/dev/null
# cert NAME SUBJ EXT: key and cert signed by the CA
cert() {
	local name=$1 subj=$2 ext=$3
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "$subj" \
		-keyout "$name.key" -out "$name.csr" 2>/dev/null
	printf '%s\n' "$ext" >"$name.ext"
	openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial \
		-days $days -extfile "$name.ext" -out "$name.crt" 2>/dev/null
	rm -f "$name.csr" "$name.ext"
}
client="basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
cert apiserver "/CN=kube-apiserver" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:10.0.2.2,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
# every node is 10.0.2.15 on its own guest's QEMU user network
for node in $nodes; do
	cert "kubelet-serving-$node" "/CN=$node" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:10.0.2.15,DNS:$node"
	cert "kubelet-$node" "/O=system:nodes/CN=system:node:$node" "$client"
done
cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "$client"
cert admin "/O=system:masters/CN=arbtable-test-admin" "$client"
cert kube-controller-manager "/CN=system:kube-controller-manager" "$client"
cert kube-scheduler "/CN=system:kube-scheduler" "$client"
# the user the default binding system:node-proxier names
cert kube-proxy "/CN=system:kube-proxy" "$client"
openssl genrsa -out sa.key 2048 2>/dev/null
openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
# kubeconfig WHO URL
kubeconfig() {
	cat >"$1.kubeconfig" <<-KC
	apiVersion: v1
	kind: Config
	clusters:
	- name: arbtable-test
	  cluster:
	    certificate-authority: $dir/ca.crt
	    server: $2
	users:
	- name: $1
	  user:
	    client-certificate: $dir/$1.crt
	    client-key: $dir/$1.key
	contexts:
	- name: $1@arbtable-test
	  context: {cluster: arbtable-test, user: $1}
	current-context: $1@arbtable-test
	KC
}
for who in admin kube-controller-manager kube-scheduler; do
	kubeconfig $who https://127.0.0.1:6443
done
for node in $nodes; do
	kubeconfig "kubelet-$node" "$url"
done
kubeconfig kube-proxy "$url"
# the guest's admin kubeconfig: the apiserver through QEMU's user network
sed "s|https://127.0.0.1:6443|$url|" admin.kubeconfig >admin-guest.kubeconfig
chmod 644 ./*.crt ./*.kubeconfig
chmod 600 ./*.key
