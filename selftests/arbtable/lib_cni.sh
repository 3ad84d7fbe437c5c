#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Helpers for the tests that run arbtable-cni themselves, as a runtime
# runs a chained plugin (test_cni.sh, test_cni_classes.sh): what they
# need before the first call, and the call.  Source after lib.sh and
# lib_net.sh; the test sets tmp (its directory).
# shellcheck disable=SC2154 # tmp: the test's

# the plugin (ARBT_CNI: another build of it) and arbtablectl
# shellcheck disable=SC2034 # CTL is for the test
CNI=${ARBT_CNI:-$ARBT_ROOT/build/cni/arbtable-cni}
CTL=$ARBT_ROOT/build/tools/arbtablectl

# cni_begin WHAT: the module, the plugin and the egress NIC with its
# receiver there (else a failed check, named after WHAT, ends the test),
# and NET's root qdisc removed; SD: the plugin's stateDir, in $tmp
cni_begin() {
	SD=$tmp/state
	have_arbtable || { tap_fail "$1: module and plugin present"; tap_end; exit; }
	[ -x "$CNI" ] || { tap_fail "$1: $CNI built (make cni)"; tap_end; exit; }
	net_setup || { tap_fail "$1: egress NIC and receiver namespace"; tap_end; exit; }
	diag "egress: $NET_KIND"
	tc qdisc del dev "$NET" root 2>/dev/null
}
# cni CMD ID NETNS(or -) CONFIG [CNI_ARGS]: run the plugin as a runtime
# does (with ARBTABLE_CNI_TEST_KILL=$TEST_KILL, the plugin's test hook,
# when TEST_KILL is set); stdout in OUT, exit code in RC, stderr in
# $tmp/stderr
# shellcheck disable=SC2034 # OUT and RC are for the test
cni() {
	local ns=$3
	[ "$ns" = - ] && ns=
	# the environment as `env -i NAME=VALUE...` would leave it, without
	# env's process (55-100 ms under TCG, twice per pod in test_cni_classes)
	OUT=$(printf '%s' "$4" | (
		# shellcheck disable=SC2163 # v names the variable
		for v in $(compgen -e); do export -n "$v"; done
		export PATH CNI_COMMAND="$1" CNI_CONTAINERID="$2" CNI_IFNAME=eth0 CNI_PATH=/opt/cni/bin
		[ -z "$ns" ] || export CNI_NETNS="$ns"
		[ -z "${5:-}" ] || export CNI_ARGS="$5"
		[ -z "${TEST_KILL:-}" ] || export ARBTABLE_CNI_TEST_KILL="$TEST_KILL"
		exec "$CNI"
	) 2>"$tmp/stderr")
	RC=$?
}
