#!/usr/bin/env bash
# Build the test cluster's Kubernetes binaries (kube-apiserver,
# kube-controller-manager, kube-scheduler, kubelet, kubectl) and etcd from
# the module in tests/kubernetes/cluster, whose go.mod/go.sum pin
# k8s.io/kubernetes and every staging module.  Built once per machine and
# cached under /var/lib/arbtable/k8s/<hash of go.mod, go.sum, go version>.
#
#   scripts/k8s-build.sh            fetch the modules and build (setup)
#   scripts/k8s-build.sh --print    print the cache directory and exit
#   scripts/k8s-build.sh --print-helm  print helm's path (built from
#                                   tests/kubernetes/helm, cached apart)
#   ARBT_K8S_OFFLINE=1              build from the module cache only (tests)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
mod=$here/tests/kubernetes/cluster
base=${ARBTABLE_K8S_CACHE:-/var/lib/arbtable/k8s}
# the Go of scripts/go-toolchain.sh (fetched only by an online build)
off=
if [ "${ARBT_K8S_OFFLINE:-0}" = 1 ] || [ "${1:-}" = --print ] || [ "${1:-}" = --print-helm ]; then
	off=--offline
fi
gobin=$(bash "$here/scripts/go-toolchain.sh" $off)
export PATH=$gobin:$PATH GOTOOLCHAIN=local
key=$(cat "$mod/go.mod" "$mod/go.sum" "$mod/etcd/main.go" "$mod/pause/pause.c" \
	"$here/scripts/oci-image.sh" <(go version) <(gcc --version | head -n1) | sha256sum | cut -c1-16)
out=$base/$key
# helm, for the helm scenario: its own module (tests/kubernetes/helm),
# its own cache key, so that a new helm does not rebuild Kubernetes
hmod=$here/tests/kubernetes/helm
hout=$base/helm-$(cat "$hmod/go.mod" "$hmod/go.sum" <(go version) | sha256sum | cut -c1-16)
case ${1:-} in
--print) echo "$out"; exit 0 ;;
--print-helm) echo "$hout/helm"; exit 0 ;;
esac
if [ ! -x "$hout/helm" ]; then
	(
		cd "$hmod"
		if [ "${ARBT_K8S_OFFLINE:-0}" = 1 ]; then
			export GOPROXY=off GOFLAGS=-mod=mod
		else
			echo "k8s-build: fetching helm's modules pinned by $hmod/go.sum"
			go mod download
		fi
		hver=$(awk '$1 == "helm.sh/helm/v4" { print $2 } $2 == "helm.sh/helm/v4" { print $3 }' go.mod)
		echo "k8s-build: helm $hver"
		mkdir -p "$hout"
		CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$hver" \
			-o "$hout/helm.tmp" helm.sh/helm/v4/cmd/helm
		mv "$hout/helm.tmp" "$hout/helm"
	)
fi
bins="kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl etcd"
have=1
for b in $bins; do [ -x "$out/bin/$b" ] || have=0; done
[ -f "$out/images/pause.oci.tar" ] || have=0
if [ $have = 1 ]; then
	echo "k8s-build: cached in $out"
	exit 0
fi
cd "$mod"
if [ "${ARBT_K8S_OFFLINE:-0}" = 1 ]; then
	export GOPROXY=off GOFLAGS=-mod=mod
else
	echo "k8s-build: fetching modules pinned by $mod/go.sum"
	go mod download
fi
kver=$(awk '$1 == "k8s.io/kubernetes" { print $2 }' go.mod)
ld="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ld="$ld -X $p.gitVersion=$kver -X $p.gitMajor=1"
	ld="$ld -X $p.gitMinor=$(echo "$kver" | cut -d. -f2)"
	ld="$ld -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done
# the sandbox image containerd's config pins: a static pause of ours
# shellcheck source=scripts/oci-image.sh
. "$here/scripts/oci-image.sh"
tmp=$(mktemp -d)
mkdir -p "$tmp/rootfs" "$out/images"
gcc -O2 -static -Wall -Wextra -Werror -o "$tmp/rootfs/pause" "$mod/pause/pause.c"
oci_archive "$tmp/rootfs" localhost/arbtable/pause:1 '["/pause"]' \
	"sch_arbtable tests/kubernetes/cluster/pause/pause.c" "$out/images/pause.oci.tar"
rm -rf "$tmp"
mkdir -p "$out/bin.tmp"
t0=$(date +%s)
for b in $bins; do
	[ -x "$out/bin.tmp/$b" ] && continue
	if [ "$b" = etcd ]; then pkg=./etcd; else pkg=k8s.io/kubernetes/cmd/$b; fi
	echo "k8s-build: $b ($(( $(date +%s) - t0 )) s so far)"
	CGO_ENABLED=0 go build -trimpath -ldflags "$ld" -o "$out/bin.tmp/$b" "$pkg"
done
rm -rf "$out/bin"
mv "$out/bin.tmp" "$out/bin"
go version >"$out/bin/.go-version"
echo "k8s-build: built $bins in $(( $(date +%s) - t0 )) s into $out/bin"
