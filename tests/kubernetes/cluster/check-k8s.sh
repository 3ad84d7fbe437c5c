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
k8s_net="-netdev user,id=k8s,net=10.0.2.0/24,host=10.0.2.2,restrict=off -device virtio-net-pci,netdev=k8s,mac=52:54:00:a7:b1:e0"
# The second node (node2.sh), in a second guest on its own QEMU user
# network, booted only when the two_nodes scenario asks for it (so that
# the other scenarios have one node and the host one emulated machine)
node2() {
	local st
	while [ ! -e "$run/node1.done" ]; do
		st=$("$cache/bin/kubectl" --kubeconfig "$run/pki/admin.kubeconfig" get configmap arbt-node2 \
			-o jsonpath='{.data.state}' 2>/dev/null)
		if [ "$st" = wanted ]; then
			echo "check-k8s: the two_nodes scenario asked for the second node: booting it"
			ARBT_K8S_NODE=${ARBT_K8S_NODE2:-arbt-node2} ARBT_K8S_POD_CIDR=10.88.201.0/24 \
				ARBT_K8S_BIN=$cache/bin ARBTABLE_VM_MEM=${ARBT_K8S_NODE2_MEM:-3G} \
				ARBTABLE_VM_QEMU_OPTS="$k8s_net" \
				"$root/scripts/vm.sh" -k "$kver" -n -t "${ARBT_K8S_NODE2_TIMEOUT:-3000}" -- \
				unshare -m --propagation private bash "$here/node2.sh" "$run" >"$run/node2.log" 2>&1
			echo $? >"$run/node2.rc"
			return
		fi
		sleep 5
	done
}
node2 &
n2=$!
# the API server on the host calls the driver's admission webhook (port
# 9878 on the node's address) through a port forwarded to the first node
wh_port=${ARBT_K8S_WEBHOOK_PORT:-19878}
ARBT_K8S_BIN=$cache/bin ARBT_K8S_HELM=$helm ARBTABLE_VM_MEM=${ARBTABLE_VM_MEM:-6G} \
	ARBT_K8S_WEBHOOK_PORT=$wh_port \
	ARBTABLE_VM_QEMU_OPTS="${k8s_net/restrict=off/restrict=off,hostfwd=tcp:127.0.0.1:$wh_port-:9878}" \
	"$root/scripts/vm.sh" -k "$kver" -n -t "${ARBT_K8S_TIMEOUT:-9000}" -- \
	unshare -m --propagation private bash "$here/guest.sh" "$run" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
# the second node ends when the scenario says done; if the first guest
# ended before saying it, say it here, and give the second node the time
# to leave the cluster
touch "$run/node1.done"
if [ -f "$run/node2.log" ] || [ -f "$run/node2.rc" ]; then
	st=$("$cache/bin/kubectl" --kubeconfig "$run/pki/admin.kubeconfig" get configmap arbt-node2 \
		-o jsonpath='{.data.state}' 2>/dev/null)
	case $st in
	done | left | failed) ;;
	*) "$cache/bin/kubectl" --kubeconfig "$run/pki/admin.kubeconfig" patch configmap arbt-node2 \
		--type merge -p '{"data":{"state":"done"}}' >/dev/null 2>&1 ;;
	esac
fi
for _ in $(seq 300); do kill -0 $n2 2>/dev/null || break; sleep 1; done
if kill -0 $n2 2>/dev/null; then
	echo "check-k8s: the second node did not end within 300 s of the first"
	pkill -P $n2 2>/dev/null
fi
wait $n2 2>/dev/null
tap2=
if [ -f "$run/node2.log" ]; then
	tap2=$run/node2.log
	echo "check-k8s: the second node's guest (exit $(cat "$run/node2.rc" 2>/dev/null || echo none)):"
	grep -E '^(ok|not ok) ' "$tap2"
fi
# what the control plane cost the host, to weigh running it in the guest:
# CPU seconds of each component (utime + stime, clock ticks)
cpu=
for p in "$run"/pid/*; do
	[ -f "$p" ] || continue
	t=$(awk '{ print $14 + $15 }' "/proc/$(cat "$p")/stat" 2>/dev/null) || continue
	cpu="$cpu ${p##*/} $((t / $(getconf CLK_TCK))) s"
done
echo "check-k8s: host CPU of the control plane:${cpu:- unknown}"
pass=$(cat "$out" $tap2 | grep -c '^ok ')
skip=$(cat "$out" $tap2 | grep -c '^ok .*# SKIP')
fail=$(cat "$out" $tap2 | grep -c '^not ok ')
pass=$((pass - skip))
if [ "$rc" != 0 ] && [ "$fail" = 0 ]; then
	echo "check-k8s: the guest ended with status $rc"
	fail=1
fi
if [ -n "$tap2" ] && [ "$(cat "$run/node2.rc" 2>/dev/null)" != 0 ] && [ "$fail" = 0 ]; then
	echo "check-k8s: the second node's guest ended with status $(cat "$run/node2.rc" 2>/dev/null || echo none)"
	fail=1
fi
echo "check-k8s: $(( $(date +%s) - t0 )) s; logs in $run/log"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
