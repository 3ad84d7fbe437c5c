#!/usr/bin/env bash
# Where the test cluster's control plane runs, measured: the same
# control-plane.sh up, once on the host and once inside a TCG guest of the
# kind check-k8s.sh boots; prints the time each took to a ready apiserver
# and to running controllers (the default service account).  The numbers
# are in tests/kubernetes/cluster/README.rst.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
kver=${ARBT_K8S_KVER:-$(ls /boot/vmlinuz-7.2.* 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V | tail -n1)}
echo "== host"
d=$(mktemp -d "$root/build/k8s-measure.XXXXXX")
"$here/control-plane.sh" up "$d"
"$here/control-plane.sh" down "$d"
rm -rf "$d"
echo "== guest ($kver, TCG)"
ARBTABLE_VM_MEM=4G "$root/scripts/vm.sh" -k "$kver" -M -t 1800 -- \
	bash -c "'$here/control-plane.sh' up /tmp/cp; '$here/control-plane.sh' down /tmp/cp"
