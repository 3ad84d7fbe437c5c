#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# arbtable-dra's Linux code against a real kernel.  pkg/podnet: the pod's
# host-side interface found for veth (also with CAP_NET_ADMIN as the only
# capability, the DaemonSet's), refused for macvlan and ipvlan and for a
# veth whose peer is in another namespace, and the mark filter (clsact,
# matchall, skbedit) put on and taken off a veth.  pkg/kernel (tagged
# vm): the root made over an admin's foreign root and its paths closed
# again, a class with its child, fw filters added, read back and deleted,
# a pod marked again and with a new mark (matchall refuses a replace).
# Go's test binaries (make dra-vmtests) run here because the build host's
# kernel may lack those device kinds and actions; every Go test and
# subtest is one result, and a t.Skip is a failure: this kernel has all
# of them.
. "$(dirname "$0")/lib.sh"
tap_begin "arbtable-dra pkg/podnet and pkg/kernel on a real kernel"
for pkg in podnet kernel; do
	bin=$ARBT_ROOT/build/dra/$pkg.test
	if [ ! -x "$bin" ]; then
		tap_fail "$pkg: $bin built (make dra-vmtests)"
		continue
	fi
	out=$(cd /tmp && LD_LIBRARY_PATH=$ARBT_ROOT/build/lib "$bin" -test.v -test.count=1 2>&1)
	rc=$?
	n=0
	while read -r verdict name secs; do
		n=$((n + 1))
		case $verdict in
		PASS) tap_ok "$pkg: $name $secs" ;;
		SKIP) tap_fail "$pkg: $name skipped: $(grep -A2 -F -- "--- SKIP: $name " <<<"$out" | sed -n 2p | sed 's/^[[:space:]]*//')" ;;
		*) tap_fail "$pkg: $name $secs"; diag "$(grep -B20 -F -- "--- FAIL: $name " <<<"$out" | tail -n 20)" ;;
		esac
	done < <(sed -nE 's/^[[:space:]]*--- (PASS|FAIL|SKIP): ([^ ]+) (\(.*\))$/\1 \2 \3/p' <<<"$out")
	tap_check "$pkg: the test binary exited 0 with results ($n; exit $rc)" test "$rc" = 0 -a "$n" -gt 0
done
tap_end
