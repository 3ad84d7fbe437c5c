#!/usr/bin/env bash
# make check-k8s: a real single-node Kubernetes cluster, built from source
# (scripts/k8s-build.sh, cached per machine), with the node in a
# virtme-ng guest on Debian's 7.2 image and the control plane on the host.
# Ends with "N passed, N failed, N skipped".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
kver=${ARBT_K8S_KVER:-$(ls /boot/vmlinuz-7.2.* 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V | tail -n1)}
ARBT_K8S_OFFLINE=1 "$root/scripts/k8s-build.sh" >/dev/null || {
	echo "check-k8s: the cluster's binaries are not built (scripts/k8s-build.sh, run by scripts/setup.sh)"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
}
cache=$("$root/scripts/k8s-build.sh" --print)
helm=$("$root/scripts/k8s-build.sh" --print-helm)
run=$root/build/k8s/run
"$here/control-plane.sh" down "$run" 2>/dev/null
rm -rf "$run"
mkdir -p "$run/images"
cp "$cache/images/pause.oci.tar" "$run/images/"
# the driver's image, built by make dra-image (check-k8s's make target)
if [ ! -f "$root/build/dra/arbtable-dra.oci.tar" ]; then
	echo "check-k8s: no build/dra/arbtable-dra.oci.tar (make dra-image)"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
cp "$root/build/dra/arbtable-dra.oci.tar" "$run/images/"
t0=$(date +%s)
"$here/control-plane.sh" up "$run" || {
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
}
trap '"$here/control-plane.sh" down "$run"' EXIT
out=$run/tap.log
ARBT_K8S_BIN=$cache/bin ARBT_K8S_HELM=$helm ARBTABLE_VM_MEM=${ARBTABLE_VM_MEM:-6G} \
	ARBTABLE_VM_QEMU_OPTS="-netdev user,id=k8s,net=10.0.2.0/24,host=10.0.2.2,restrict=off -device virtio-net-pci,netdev=k8s,mac=52:54:00:a7:b1:e0" \
	"$root/scripts/vm.sh" -k "$kver" -n -t "${ARBT_K8S_TIMEOUT:-5400}" -- \
	unshare -m --propagation private bash "$here/guest.sh" "$run" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
# what the control plane cost the host, to weigh running it in the guest:
# CPU seconds of each component (utime + stime, clock ticks)
cpu=
for p in "$run"/pid/*; do
	[ -f "$p" ] || continue
	t=$(awk '{ print $14 + $15 }' "/proc/$(cat "$p")/stat" 2>/dev/null) || continue
	cpu="$cpu ${p##*/} $((t / $(getconf CLK_TCK))) s"
done
echo "check-k8s: host CPU of the control plane:${cpu:- unknown}"
pass=$(grep -c '^ok ' "$out")
skip=$(grep -c '^ok .*# SKIP' "$out")
fail=$(grep -c '^not ok ' "$out")
pass=$((pass - skip))
if [ "$rc" != 0 ] && [ "$fail" = 0 ]; then
	echo "check-k8s: the guest ended with status $rc"
	fail=1
fi
echo "check-k8s: $(( $(date +%s) - t0 )) s; logs in $run/log"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
