#!/usr/bin/env bash
# Where the test cluster's control plane runs, measured: the same
# control-plane.sh up, once on the host and once inside a TCG guest of the
# kind check-k8s.sh boots; prints the time each took to a ready apiserver
# and to running controllers (the default service account), and the CPU
# its components then take at rest over 60 s.  The numbers are in
# Documentation/dev/kubernetes-test-cluster.rst.
#
#   measure-placement.sh [host] [guest]   both by default (the host part
#                                         needs ports 2379/2380/6443 free:
#                                         no check-k8s beside it)
#   measure-placement.sh --one D          up in D, the rest CPU, down (what
#                                         runs in each place)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
if [ "${1:-}" = --one ]; then
	d=$2
	"$here/control-plane.sh" up "$d" || exit 1
	ticks() {
		local s=0 p t
		for p in "$d"/pid/*; do
			t=$(awk '{ print $14 + $15 }' "/proc/$(cat "$p")/stat" 2>/dev/null) && s=$((s + t))
		done
		echo "$s"
	}
	c0=$(ticks)
	sleep 60
	c1=$(ticks)
	echo "control plane: at rest $(( (c1 - c0) * 100 / $(getconf CLK_TCK) / 60 ))% of a CPU over 60 s ($(nproc) CPUs)"
	"$here/control-plane.sh" down "$d"
	exit 0
fi
kver=${ARBT_K8S_KVER:-$(ls /boot/vmlinuz-7.2.* 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V | tail -n1)}
for where in ${*:-host guest}; do
	case $where in
	host)
		echo "== host"
		d=$(mktemp -d "$root/build/k8s-measure.XXXXXX")
		"$0" --one "$d"
		rm -rf "$d"
		;;
	guest)
		echo "== guest ($kver, TCG)"
		ARBTABLE_VM_MEM=4G "$root/scripts/vm.sh" -k "$kver" -M -t 1800 -- \
			bash "$here/measure-placement.sh" --one /tmp/cp
		;;
	*) echo "measure-placement.sh: host or guest, not $where" >&2; exit 2 ;;
	esac
done
