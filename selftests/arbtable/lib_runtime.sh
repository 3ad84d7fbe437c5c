#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Helpers for the tests that run arbtable-cni under a container engine
# (test_podman.sh, test_containerd.sh): the tenants network both run
# (bridge + host-local, then arbtable-cni on the egress NIC) masqueraded
# onto it, the table and state compared before and after, the
# allocator's refusal in the engine's error, the gold/silver goodput
# beside the flood.  Source after lib.sh and lib_net.sh; the test sets
# NET (net_setup), SD (the plugin's stateDir), SUBNET (the bridge's) and
# NFT_TABLE.
# shellcheck disable=SC2154 # tmp, cf, f0, f1, before, ports_before: the test's

# tenants_conflist VERSION-MEMBERS BRIDGE [MEMBERS]: the network's
# conflist on stdout: cniVersion (and cniVersions) as VERSION-MEMBERS
# gives them, MEMBERS appended to arbtable-cni's config
tenants_conflist() {
	cat <<-EOF
	{
	  $1,
	  "name": "tenants",
	  "plugins": [
	    { "type": "bridge", "bridge": "$2", "isGateway": true,
	      "ipam": { "type": "host-local", "ranges": [[{ "subnet": "$SUBNET" }]],
	                "routes": [{ "dst": "0.0.0.0/0" }] } },
	    { "type": "arbtable-cni", "device": "$NET", "stateDir": "$SD",
	      "qdisc": { "rate": "10mbit", "burst": "30k", "highlimit": 1 },
	      "systemClass": { "share": 1 }${3:+,
	      $3} }
	  ]
	}
	EOF
}
# masquerade: the bridge's subnet leaves NET masqueraded (table
# NFT_TABLE, whose counter goodput_checks reads)
masquerade() {
	nft -f - <<-EOF
		table ip $NFT_TABLE {
			chain post {
				type nat hook postrouting priority 100;
				oifname "$NET" ip saddr $SUBNET counter masquerade
			}
		}
	EOF
}
# state_files: the plugin's state files (not its lock)
state_files() {
	local f
	for f in "$SD"/*; do
		[ -e "$f" ] && [ "${f##*/}" != lock ] && echo "${f##*/}"
	done
}
# table_state: the table as tc shows it (classes, options, filters) and
# the plugin's state files
table_state() {
	tc -d qdisc show dev "$NET" | grep '^qdisc arbtable'
	tc -d class show dev "$NET" | sort
	tc filter show dev "$NET" parent 1:
	state_files
}
# same_as_before: table_state and ports_state (the test's own: its
# bridge's ports) as they were in $before and $ports_before; else the
# difference, as diagnostics
same_as_before() {
	local t p
	t=$(table_state) p=$(ports_state)
	[ "$t" = "$before" ] && [ "$p" = "$ports_before" ] && return 0
	diff <(echo "$before"; echo "$ports_before") <(echo "$t"; echo "$p") | head -n 20 | sed 's/^/# /'
	return 1
}
# bridge_marks BRIDGE: each port of the bridge with its count of mark
# filters (one per tenant)
bridge_marks() {
	local v
	for v in "/sys/class/net/$1/brif"/*; do
		[ -e "$v" ] || continue
		v=${v##*/}
		tc filter show dev "$v" ingress | grep -c 'matchall.* handle ' | sed "s/^/$v /"
	done
}
# refused_once RC ERROR SEPARATOR: the engine failed (RC not 0) and its
# ERROR text gives the allocator's reason for NET ("refused on NET",
# SEPARATOR, the reason), once
refused_once() {
	local reason
	reason=$(grep -oE "${ARB_REFUSAL_RE#^Error: }.*" <<<"$2" | head -n1)
	[ "$1" != 0 ] && grep -qE "refused on ${NET}$3 ${ARB_REFUSAL_RE#^Error: }" <<<"$2" &&
		[ "$(grep -oF -- "$reason" <<<"$2" | wc -l)" = 1 ]
}
# no_tenant_left: no class but the root's system class (1:ff, its
# default, which stays with the root) and no fw filter
no_tenant_left() {
	! tc class show dev "$NET" | grep "^class arbtable" | grep -qv "^class arbtable 1:ff " &&
		[ -z "$(tc filter show dev "$NET" parent 1: 2>/dev/null)" ]
}
# admitted_check PREDICATE: the check that gold, silver and flood were
# admitted as they asked (PREDICATE: the test's, on their classes gold's
# cg, silver's cs, flood's cf); if not, the classes and the engine's
# errors ($tmp/NAME.err) as diagnostics
admitted_check() {
	local d="gold, silver and flood started and admitted: classes rate 3Mbit latency 30ms, rate 2Mbit, share 1"
	if "$1"; then
		tap_ok "$d"
	else
		diag "$(tc class show dev "$NET"; cat "$tmp/gold.err" "$tmp/silver.err" "$tmp/flood.err")"
		tap_fail "$d"
	fi
}
# flood_bytes: the bytes the flood's class (cf) has sent
flood_bytes() { cls_stats "$NET" arbtable | awk -v c="$cf" '$1 == c { print $2 }'; }
# start_traffic: gold, silver and flood (which runs until removed), each
# waiting for $tmp/go/start, told to send; f0: the flood's bytes as they
# start
start_traffic() {
	touch "$tmp/go/start"
	sleep 1
	read -r f0 <<<"$(flood_bytes)"
}
# goodput_checks DIR ENGINE: gold's and silver's iperf3 results in
# DIR/gold.json and DIR/silver.json against their 3 and 2 Mbit/s, the
# flood's class having sent from f0 to f1 bytes meanwhile, through
# masquerade; ENGINE (" under containerd" or empty) ends the measures' names
goodput_checks() {
	local gg gs nat
	gg=$(ip3_rx_bps "$1/gold.json") gs=$(ip3_rx_bps "$1/silver.json")
	nat=$(nft list table ip "$NFT_TABLE" 2>/dev/null | sed -nE 's/.*counter packets ([0-9]+).*/\1/p')
	# the flood runs until removed: its class gone before gold and silver
	# ended means its container left early, and f1 says nothing
	[ -n "$f1" ] || diag "the flood's class $cf was gone when gold and silver ended"
	diag "gold ${gg} bit/s of 3000000 ($(fcalc "100 * $gg / 3000000")%), silver ${gs} bit/s of 2000000 ($(fcalc "100 * $gs / 2000000")%); flood sent $((${f1:-0} - ${f0:-0})) B meanwhile; masqueraded packets ${nat:-?}; errors: $(ip3_error "$1/gold.json") $(ip3_error "$1/silver.json")"
	tap_check "the flood competed: its class sent >= 1 Mbit/s on average while gold and silver ran ($((${f1:-0} - ${f0:-0})) B), through masquerade (${nat:-0} packets)" \
		fcmp "${f1:-0} - ${f0:-0} >= 1000000 / 8 * 15 && ${nat:-0} > 0"
	tap_measure "gold's TCP goodput beside the flood$2: $gg bit/s >= 97% of its 3 Mbit/s" fcmp "$gg >= 0.97 * 3000000"
	tap_measure "silver's TCP goodput beside the flood$2: $gs bit/s >= 97% of its 2 Mbit/s" fcmp "$gs >= 0.97 * 2000000"
}
