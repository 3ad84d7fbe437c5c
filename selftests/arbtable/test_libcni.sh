#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# arbtable-cni driven by libcni 1.3 (issue 28, "A libcni client for every
# verb"): arbt-cnitool (tools/cnitool, built by scripts/runtimes-setup.sh
# against Debian sid's golang-github-appc-cni-dev) runs ADD, CHECK, DEL,
# GC and STATUS on a chain of bridge + host-local (containernetworking-
# plugins 1.9) + arbtable-cni, the way containerd and CRI-O call it: one
# network at cniVersion 1.0.0, one whose cniVersions lists 1.1.0 (libcni
# takes the highest it knows).  A dummy NIC carries the table; the
# containers are network namespaces.
#
# Checks, for each version: STATUS (libcni calls it only from 1.1.0: on
# 1.1.0 it answers 0 for a NIC that can carry an auto-mode arbtable and
# 0 for one whose root is another qdisc: the table is not the plugin's health); ADD's result in the
# network's version with the class, filter and state it made; CHECK, and
# CHECK failing once the class is gone behind the plugin's back; DEL, and
# DEL again; GC: libcni's own pass deletes a cached attachment that is
# not valid; from 1.1.0 the plugin's GC removes an attachment libcni has
# no cache of and keeps the valid one.  Killed ADD: the plugin is killed
# (SIGKILL) after its admission and after its mark filter (its test
# hook), in make check-full also at each of its netlink requests and
# state renames in turn (strace's syscall injection); after each, GC
# (1.1.0) or the runtime's DEL (1.0.0) leaves exactly the valid
# attachment's class, filter and state.
. "$(dirname "$0")/lib.sh"
tap_begin "arbtable-cni under libcni 1.3 (arbt-cnitool): ADD, CHECK, DEL, GC, STATUS at 1.0.0 and 1.1.0, killed ADD"
RT=${ARBT_RUNTIMES:-/var/lib/arbtable/containerd-2}
TOOL=$RT/bin/arbt-cnitool
CNI_DIR=$ARBT_ROOT/build/cni
NIC=arbt-lc0
tmp=$(mktemp -d)
SD=$tmp/state
NS=()
cleanup() {
	local n
	for n in "${NS[@]}"; do ip netns del "$n" 2>/dev/null; done
	ip link del arbt-lcbr0 2>/dev/null
	ip link del arbt-lcbr1 2>/dev/null
	ip link del $NIC 2>/dev/null
	ip link del arbt-lchtb 2>/dev/null
	veth_mac_restore
	rm -rf "$tmp"
}
trap cleanup EXIT
have_arbtable || { tap_fail "libcni: module and plugin present"; tap_end; exit; }
if ! [ -x "$CNI_DIR/arbtable-cni" ] || ! [ -x "$TOOL" ] || ! [ -x "$RT/root/usr/lib/cni/bridge" ] ||
	! command -v strace >/dev/null; then
	tap_fail "libcni: $CNI_DIR/arbtable-cni (make cni), $TOOL and plugins 1.9 (scripts/setup.sh), strace"
	tap_end
	exit
fi
dummy_up $NIC || { tap_fail "libcni: dummy NIC $NIC"; tap_end; exit; }
veth_mac_keep
diag "udev: $(pgrep -c systemd-udevd || echo 0) systemd-udevd process(es); veths keep their MACs ($VETH_LINK)"
# the bridges exist beforehand with fixed addresses: a bridge that takes
# its ports' lowest address changes it as ports come and go, and the
# bridge plugin's CHECK then fails on the MAC in the cached result (seen
# at 1.1.0: "Bridge interface arbt-lcbr1 Mac doesn't match")
for i in 0 1; do
	if ! ip link add arbt-lcbr$i type bridge || ! ip link set arbt-lcbr$i address "02:ab:7c:00:00:0$i"; then
		tap_fail "libcni: bridge arbt-lcbr$i"
		tap_end
		exit
	fi
done
if ! dummy_up arbt-lchtb || ! tc qdisc add dev arbt-lchtb root handle 1: htb; then
	tap_fail "libcni: a NIC with an htb root"
	tap_end
	exit
fi

# the plugin directory: bridge, host-local, loopback 1.9 and arbtable-cni
# behind a wrapper that, when ARBT_KILL names a syscall and a count
# (sendmsg:3), runs an ADD under strace, which kills it with SIGKILL on
# entering that call (libcni hands its environment to plugins)
mkdir -p "$tmp/bin" "$SD"
for p in bridge host-local loopback; do ln -s "$RT/root/usr/lib/cni/$p" "$tmp/bin/$p"; done
cat >"$tmp/bin/arbtable-cni" <<-EOF
	#!/bin/sh
	if [ "\$CNI_COMMAND" = ADD ] && [ -n "\${ARBT_KILL:-}" ]; then
		exec strace -f -qq -o /dev/null -e trace="\${ARBT_KILL%%:*}" \\
			-e inject="\${ARBT_KILL%%:*}:signal=KILL:when=\${ARBT_KILL#*:}" "$CNI_DIR/arbtable-cni" "\$@"
	fi
	exec "$CNI_DIR/arbtable-cni" "\$@"
EOF
chmod +x "$tmp/bin/arbtable-cni"
export CNI_PATH=$tmp/bin CNI_CACHE_DIR=$tmp/cache

# conflist FILE NAME VERSION-FIELDS DEVICE BRIDGE SUBNET
conflist() {
	cat >"$1" <<-EOF
	{
	  $3,
	  "name": "$2",
	  "plugins": [
	    { "type": "bridge", "bridge": "$5",
	      "ipam": { "type": "host-local", "ranges": [[{ "subnet": "$6" }]] } },
	    { "type": "arbtable-cni", "device": "$4", "stateDir": "$SD",
	      "qdisc": { "rate": "10mbit" } }
	  ]
	}
	EOF
}
conflist "$tmp/v100.conflist" lc100 '"cniVersion": "1.0.0"' $NIC arbt-lcbr0 10.91.0.0/24
conflist "$tmp/v110.conflist" lc110 '"cniVersion": "1.0.0", "cniVersions": ["1.0.0", "1.1.0"]' $NIC arbt-lcbr1 10.91.1.0/24
conflist "$tmp/htb.conflist" lchtb '"cniVersion": "1.1.0"' arbt-lchtb arbt-lcbr1 10.91.2.0/24

# cni VERB CONFLIST ARGS...: arbt-cnitool into RUN_OUT RUN_ERR RUN_RC
cni() { run "$TOOL" "$@"; }
netns() { ip netns add "$1" && NS+=("$1"); }
# the table as the plugin left it: classes, fw filters, state files,
# mark filters and clsact qdiscs on the bridges' ports
table() {
	local f v
	tc class show dev $NIC
	tc filter show dev $NIC parent 1: 2>/dev/null
	for f in "$SD"/*; do [ -e "$f" ] && [ "${f##*/}" != lock ] && echo "state ${f##*/}"; done
	for v in /sys/class/net/arbt-lcbr*/brif/*; do
		[ -e "$v" ] || continue
		tc filter show dev "${v##*/}" ingress | grep -c 'matchall.* handle ' |
			awk -v p="${v##*/}" '$1 > 0 { print "port", p, $1 }'
		tc qdisc show dev "${v##*/}" | grep -q '^qdisc clsact ' && echo "clsact ${v##*/}"
	done
}
# the tenants' classes: not the system class (1:ff) of the root the
# plugin made, which stays with the root
nclasses() { tc class show dev $NIC | grep '^class arbtable' | grep -vc '^class arbtable 1:ff '; }
# same TEXT: the table equals TEXT; otherwise the difference as diag
same() {
	local t
	t=$(table)
	[ "$t" = "$1" ] && return 0
	diff <(echo "$1") <(echo "$t") | head -n 20 | sed 's/^/# /'
	return 1
}

cni version "$tmp/v110.conflist"
diag "libcni's choice for the cniVersions list and the plugins' versions: $RUN_OUT $RUN_ERR"
vers=$RUN_OUT
tap_check "libcni picks 1.1.0 from cniVersions [1.0.0, 1.1.0]" grep -q '"list":"1.1.0"' <<<"$vers"
plugin_vers_ok() {
	grep -q '"arbtable-cni":\[[^]]*"1.0.0"' <<<"$vers" && grep -q '"arbtable-cni":\[[^]]*"1.1.0"' <<<"$vers"
}
tap_check "arbtable-cni's VERSION lists 1.0.0 and 1.1.0 (as libcni reads it)" plugin_vers_ok

# STATUS: on the NIC with no qdisc yet (can be made), on the htb NIC
cni status "$tmp/v110.conflist"
[ "$RUN_RC" = 0 ] || diag "STATUS: exit $RUN_RC: $RUN_ERR"
tap_check "1.1.0 STATUS on a NIC that can carry an auto-mode arbtable: exit 0" test "$RUN_RC" = 0
cni status "$tmp/htb.conflist"
diag "STATUS on a NIC whose root is htb: exit $RUN_RC: $RUN_ERR"
# a root someone replaced is not the plugin's health (a failed STATUS
# makes a containerd 2.x node NotReady): healthy, the reason in the log
tap_check "1.1.0 STATUS on a NIC whose root is htb: exit 0 (the plugin is healthy; ADD says why it refuses)" test "$RUN_RC" = 0
cni status "$tmp/v100.conflist"
tap_check "1.0.0 STATUS: libcni does not call it below 1.1.0 (exit 0)" test "$RUN_RC" = 0

for v in 100 110; do
	V=${v:0:1}.${v:1:1}.${v:2:1}
	L=$tmp/v$v.conflist
	if ! netns "lc$v-a" || ! netns "lc$v-b" || ! netns "lc$v-c" || ! netns "lc$v-d"; then
		tap_fail "$V: network namespaces"
		continue
	fi
	# ADD a: rate 2mbit
	CNI_ARGS="IgnoreUnknown=1;ARBTABLE_RATE=2mbit" cni add "$L" "ca$v" "/run/netns/lc$v-a"
	[ "$RUN_RC" = 0 ] || diag "ADD a: exit $RUN_RC: $RUN_ERR"
	rv=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["cniVersion"])' "$RUN_OUT" 2>/dev/null)
	add_ok() {
		[ "$RUN_RC" = 0 ] && [ "$rv" = "$V" ] && compgen -G "$SD/*ca$v*" >/dev/null &&
			tc class show dev $NIC | grep -q 'rate 2Mbit' &&
			[ "$(tc filter show dev $NIC parent 1: | grep -c classid)" = 1 ] && return 0
		diag "$(table)"
		return 1
	}
	tap_check "$V ADD (rate 2mbit): exit 0, result at $V (${rv:-none}), a class rate 2Mbit, a fw filter, a state file" add_ok
	base=$(table)
	cni check "$L" "ca$v" "/run/netns/lc$v-a"
	[ "$RUN_RC" = 0 ] || diag "CHECK: exit $RUN_RC: $RUN_ERR"
	tap_check "$V CHECK of the attachment: exit 0" test "$RUN_RC" = 0

	# GC, libcni's own pass: c is cached and not valid: DEL'd
	CNI_ARGS="IgnoreUnknown=1;ARBTABLE_SHARE=3" cni add "$L" "cc$v" "/run/netns/lc$v-c"
	[ "$RUN_RC" = 0 ] || diag "ADD c: exit $RUN_RC: $RUN_ERR"
	cni gc "$L" "ca$v/eth0"
	[ "$RUN_RC" = 0 ] || diag "GC: exit $RUN_RC: $RUN_ERR"
	gcrc=$RUN_RC
	gc_cached_ok() { [ "$gcrc" = 0 ] && same "$base"; }
	tap_check "$V GC, valid = [a]: the cached attachment c (share 3) is deleted through libcni's cache, a stays" gc_cached_ok

	# GC, the plugin's own: d was added with another cache (the runtime
	# lost it): only a plugin that implements GC (1.1.0) removes it
	CNI_CACHE_DIR=$tmp/lost CNI_ARGS="IgnoreUnknown=1;ARBTABLE_SHARE=4" cni add "$L" "cd$v" "/run/netns/lc$v-d"
	[ "$RUN_RC" = 0 ] || diag "ADD d: exit $RUN_RC: $RUN_ERR"
	cni gc "$L" "ca$v/eth0"
	gcrc=$RUN_RC
	[ "$gcrc" = 0 ] || diag "GC: exit $gcrc: $RUN_ERR"
	if [ "$V" = 1.1.0 ]; then
		gc_ok() { [ "$gcrc" = 0 ] && same "$base"; }
		tap_check "$V GC, valid = [a]: the plugin removes d (share 4, not in libcni's cache): class, filters, state; a stays" gc_ok
	else
		kept_ok() { [ "$gcrc" = 0 ] && tc class show dev $NIC | grep -qE 'share 4( |$)'; }
		tap_check "$V GC: libcni sends no GC below 1.1.0, d (share 4, uncached) stays until its DEL" kept_ok
		CNI_CACHE_DIR=$tmp/lost cni del "$L" "cd$v" "/run/netns/lc$v-d"
		delrc=$RUN_RC
		del_ok() { [ "$delrc" = 0 ] && same "$base"; }
		tap_check "$V DEL of d: exit 0, the table as with a alone" del_ok
	fi
	ip netns del "lc$v-d"

	# killed ADD: b is killed at the plugin's own kill points (its test
	# hook ARBTABLE_CNI_TEST_KILL: after the admission, after the clsact
	# on b's port, after the mark filter) and, with ARBT_LIBCNI_SWEEP=1
	# (make check-full), at each of its netlink requests and state
	# renames in turn (strace); after each, GC (1.1.0) or the runtime's
	# DEL (1.0.0) leaves a alone, b's port without our clsact included
	points=(hook:admit hook:clsact hook:mark)
	sw=
	if [ "${ARBT_LIBCNI_SWEEP:-0}" = 1 ]; then
		sw=1
		for sc in sendmsg sendto rename renameat2; do
			for ((k = 1; k <= 40; k++)); do points+=("$sc:$k"); done
		done
	fi
	kills=0 bad=0 done_sc=
	for pt in "${points[@]}"; do
		[ "${pt%%:*}" = "$done_sc" ] && continue
		if [ "${pt%%:*}" = hook ]; then
			ARBTABLE_CNI_TEST_KILL=${pt#hook:} CNI_ARGS="IgnoreUnknown=1;ARBTABLE_RATE=1mbit" cni add "$L" "cb$v" "/run/netns/lc$v-b"
		else
			ARBT_KILL=$pt CNI_ARGS="IgnoreUnknown=1;ARBTABLE_RATE=1mbit" cni add "$L" "cb$v" "/run/netns/lc$v-b"
		fi
		if [ "$RUN_RC" = 0 ]; then
			# the ADD ran past its k-th call: done with this call
			done_sc=${pt%%:*}
			[ "$done_sc" = hook ] && { bad=$((bad + 1)); diag "ADD b with the kill hook at ${pt#hook:} was not killed"; }
			cni del "$L" "cb$v" "/run/netns/lc$v-b"
			same "$base" >/dev/null || { bad=$((bad + 1)); diag "ADD b then DEL left more than a"; }
			continue
		fi
		kills=$((kills + 1))
		if [ "$V" = 1.1.0 ]; then
			cni gc "$L" "ca$v/eth0"
			what=GC
		else
			cni del "$L" "cb$v" "/run/netns/lc$v-b"
			what=DEL
		fi
		if [ "$RUN_RC" != 0 ] || ! same "$base" >/dev/null; then
			bad=$((bad + 1))
			diag "killed at $pt, then $what (exit $RUN_RC: $RUN_ERR): the table is not a alone:"
			same "$base"
		fi
		# the chain's other plugins (bridge, host-local) and whatever
		# is left: the runtime's DEL
		cni del "$L" "cb$v" "/run/netns/lc$v-b"
	done
	diag "$V killed ADDs: $kills kill points (${points[*]:0:3}${sw:+ and the strace sweep}), $bad left something behind"
	[ "$V" = 1.1.0 ] && what=GC || what=DEL
	tap_check "$V ADD killed at each of $kills points (after admission, after the clsact, after the mark filter${sw:+, every netlink request and rename}), then $what: nothing but a left each time (no clsact on b's port)" \
		test "$kills" -ge 3 -a "$bad" = 0

	# CHECK once the class is gone behind the plugin's back, then DEL
	cid=$(tc class show dev $NIC | awk '$1 == "class" && /rate 2Mbit/ { print $3 }')
	# (the module refuses to delete a class a filter points at: the fw
	# filters go first; a's is the only one left)
	run tc filter del dev $NIC parent 1: prio 100 || diag "tc filter del dev $NIC parent 1: prio 100: $RUN_ERR"
	run tc class del dev $NIC classid "$cid" || diag "tc class del dev $NIC classid $cid: $RUN_ERR"
	cni check "$L" "ca$v" "/run/netns/lc$v-a"
	diag "CHECK with a's class deleted by hand: exit $RUN_RC: $RUN_ERR"
	tap_check "$V CHECK fails once a's class is gone behind the plugin's back" test "$RUN_RC" != 0
	cni del "$L" "ca$v" "/run/netns/lc$v-a"
	d1=$RUN_RC
	[ "$d1" = 0 ] || diag "DEL: exit $d1: $RUN_ERR"
	cni del "$L" "ca$v" "/run/netns/lc$v-a"
	d2=$RUN_RC
	[ "$d2" = 0 ] || diag "DEL again: exit $d2: $RUN_ERR"
	empty_ok() {
		[ "$d1" = 0 ] && [ "$d2" = 0 ] && [ "$(nclasses)" = 0 ] &&
			! tc filter show dev $NIC parent 1: 2>/dev/null | grep -q . &&
			! compgen -G "$SD/*$v*" >/dev/null && return 0
		diag "$(table)"
		return 1
	}
	tap_check "$V DEL of a (its class already gone), and DEL again: exit 0 both, no class, filter or state left" empty_ok
done
tap_end
