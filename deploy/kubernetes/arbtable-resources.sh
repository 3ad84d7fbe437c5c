# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# arbtable-resources.sh - the translation between arbtablectl's JSON and
# Kubernetes extended resources, sourced by arbtable-node-agent.sh,
# arbtable-install-cni.sh and tests/kubernetes/check.sh (pure functions:
# files in, lines out, no API calls; arbt_device alone reads the routing
# table).  Documentation/networking/arbtable-kubernetes.rst gives the
# reasoning; in short:
#
#   arbtable.io/high-slots      HIGH table slots pods may hold
#   arbtable.io/low-slots       LOW table slots pods may hold (the shared
#                               best-effort class's one slot kept aside)
#   arbtable.io/guaranteed-mbit guaranteed HIGH rate pods may reserve, Mbit/s
#   arbtable.io/classes         classes of their own pods may hold (the
#                               shared best-effort class's kept aside)
#
# Only a pod that asks for something (a rate, a share, a distance, a
# ceil) takes a class of its own and asks for these; a pod that asks for
# nothing joins the shared best-effort class and asks for none, so the
# node runs as many of those as its kubelet allows.  The root's system
# class (its default, outside the tenant minors) is never counted.
#
# A node advertises what pods may hold *in total* (free now plus what pod
# classes hold now), not what is free now: the scheduler subtracts the
# requests of the pods bound to the node itself, so subtracting admitted
# pods here as well would count them twice.  The total stays the same
# while pods come and go; it changes when the qdisc or the classes an
# administrator made outside the plugin's minors change.
#
# Needs bash and jq.

# ------------------------------------------------------------ configuration
# The ConfigMap's values are parsed by pattern, never handed to bash
# arithmetic ($((ARBTABLE_MARK_MASK)) would evaluate "a[$(cmd)]"), and
# checked as arbtable-cni checks them (cni/conf.c), so that a value the
# plugin refuses stops the installer and the agent with a message instead
# of every pod's ADD.

# arbt_uint NAME VALUE MAX: VALUE, decimal or 0x-hexadecimal as
# arbtable-cni reads numbers, in decimal on stdout; a message naming NAME
# and 1 when it is not such a number of at most MAX.
arbt_uint() {
	local n=$1 v=$2 max=$3 d
	if [[ $v =~ ^0[xX]([0-9a-fA-F]{1,8})$ ]]; then
		d=$((16#${BASH_REMATCH[1]}))
	elif [[ $v =~ ^[0-9]{1,10}$ ]]; then
		d=$((10#$v))
	else
		echo "$n \"$v\": want a number (decimal, or hexadecimal with 0x)" >&2
		return 1
	fi
	if [ "$d" -gt "$max" ]; then
		echo "$n $v: at most $max" >&2
		return 1
	fi
	echo "$d"
}

# arbt_pod_minors MARK_MASK MINOR_BASE: "LO HI", the class minors
# arbtable-cni gives tenants (cni/conf.c: minorBase + t, t = 1 .. the
# values the mark field holds, within 16 bits).  The same checks as the
# plugin's: a mask of contiguous bits holding at least 64 tenants, a base
# of 1..0xffbe; a message and 1 otherwise.
arbt_pod_minors() {
	local mask base shift=0 span
	mask=$(arbt_uint ARBTABLE_MARK_MASK "$1" 4294967295) || return 1
	base=$(arbt_uint ARBTABLE_MINOR_BASE "$2" 65535) || return 1
	if [ "$mask" = 0 ]; then
		echo "ARBTABLE_MARK_MASK $1: must not be 0 (the mark field of the tenant number)" >&2
		return 1
	fi
	while [ $((mask & 1)) = 0 ]; do
		mask=$((mask >> 1))
		shift=$((shift + 1))
	done
	if [ $((mask & (mask + 1))) != 0 ]; then
		echo "ARBTABLE_MARK_MASK $1: the bits must be contiguous" >&2
		return 1
	fi
	if [ "$mask" -lt 64 ]; then
		echo "ARBTABLE_MARK_MASK $1: holds $mask tenants, fewer than the 64 classes a qdisc can have" >&2
		return 1
	fi
	if [ "$base" = 0 ] || [ "$base" -gt $((0xffff - 64 - 1)) ]; then
		echo "ARBTABLE_MINOR_BASE $2: want 1..0xffbe" >&2
		return 1
	fi
	span=$mask
	[ "$span" -gt $((0xffff - base)) ] && span=$((0xffff - base))
	echo "$((base + 1)) $((base + span))"
}

# arbt_words VAR KEYS...: the KEY VALUE pairs of the ConfigMap value
# $VAR as a JSON object of strings on stdout (each key once, one of KEYS,
# a value such as 10gbit, 1%, 1514, 30k, 1: or 0xff); a message per
# refusal and 1 otherwise
arbt_words() {
	local var=$1 words k v seen=" " o='{}' bad=0
	shift
	read -ra words <<<"${!var:-}"
	set -- "$@" -- "${words[@]}"
	local keys=" "
	while [ "$1" != -- ]; do
		keys="$keys$1 "
		shift
	done
	shift
	while [ $# -gt 0 ]; do
		k=$1 v=${2:-}
		shift
		[ $# = 0 ] || shift
		if [[ $keys != *" $k "* ]]; then
			echo "$var: unknown key \"$k\" (known:$(tr ' ' ',' <<<"${keys% }" | sed 's/^,/ /; s/,/, /g'))" >&2
			bad=1
			continue
		fi
		if [[ $seen == *" $k "* ]]; then
			echo "$var: $k given twice" >&2
			bad=1
		elif [[ ! $v =~ ^[0-9][0-9A-Za-z.:%]*$ ]]; then
			echo "$var: $k \"$v\": want a value such as 10gbit, 1%, 1514, 30k, 1: or 0xff" >&2
			bad=1
		else
			o=$(jq -c --arg k "$k" --arg v "$v" '. + {($k): $v}' <<<"$o")
		fi
		seen="$seen$k "
	done
	echo "$o"
	return $bad
}

# arbt_config: the ConfigMap's ARBTABLE_* (defaults for those unset)
# parsed into
#   ARBT_DEVICE     an interface name, or "auto" (the default route's)
#   ARBT_QDISC      the qdisc object of the plugin's entry (JSON, {} for
#                   none: the plugin then sizes the root to the link)
#   ARBT_SYSTEM     the systemClass object of the plugin's entry (JSON, {}
#                   for the plugin's default, rate 1% at distance 64)
#   ARBT_SHARE      defaultShare, 1..255
#   ARBT_MASK       markMask, ARBT_BASE minorBase (as given: checked)
#   ARBT_LO ARBT_HI the tenant minors they give
#   ARBT_INTERVAL   seconds, 1..3600
# Every value refused gets a line on stderr naming it; returns 1 then.
# shellcheck disable=SC2034 # the ARBT_* are the callers'
arbt_config() {
	local bad=0 r m
	ARBT_DEVICE=${ARBTABLE_DEVICE:-auto}
	# an interface name as the kernel takes it (dev_valid_name)
	if [ "$ARBT_DEVICE" != auto ] &&
	   { [[ ! $ARBT_DEVICE =~ ^[^/:[:space:]]{1,15}$ ]] ||
	     [ "$ARBT_DEVICE" = . ] || [ "$ARBT_DEVICE" = .. ]; }; then
		echo "ARBTABLE_DEVICE \"$ARBT_DEVICE\": want an interface name (1..15 characters, no '/', ':' or space) or auto" >&2
		bad=1
	fi
	ARBT_QDISC=$(arbt_words ARBTABLE_QDISC handle rate burst mtu highlimit maxweight) || bad=1
	# the qdisc's mtu as the plugin takes it: 0 (follow the device) or
	# 64..1048576 bytes (a size unit: the plugin checks the rest)
	m=$(jq -r '.mtu // empty' <<<"$ARBT_QDISC")
	if [[ $m =~ ^[0-9]+$ ]] && { [ ${#m} -gt 7 ] ||
	   { [ "$m" != 0 ] && { [ "$((10#$m))" -lt 64 ] || [ "$((10#$m))" -gt 1048576 ]; }; }; }; then
		echo "ARBTABLE_QDISC: mtu $m: want 0 (follow the device) or 64..1048576 bytes" >&2
		bad=1
	fi
	# the root's system class (arbtable-cni(8), SYSTEM CLASS): a rate
	# (a tc rate or a percentage of the qdisc's) or a share, as the
	# plugin checks them; its minor checked against the tenants' below
	ARBT_SYSTEM=$(arbt_words ARBTABLE_SYSTEM_CLASS rate latency distance share ceil minor) || bad=1
	if [ "$ARBT_SYSTEM" != '{}' ]; then
		r=$(jq -r '[has("rate"), has("share"), has("latency"), has("distance")] | map(tostring) | join(" ")' <<<"$ARBT_SYSTEM")
		case $r in
		"true true "*)
			echo "ARBTABLE_SYSTEM_CLASS: rate and share exclude each other" >&2
			bad=1 ;;
		"false false "*)
			echo "ARBTABLE_SYSTEM_CLASS: give a rate (1%, 100mbit) or a share (1..255): the node's own traffic needs a floor" >&2
			bad=1 ;;
		*" true true")
			echo "ARBTABLE_SYSTEM_CLASS: give latency or distance, not both" >&2
			bad=1 ;;
		esac
	fi
	if ARBT_SHARE=$(arbt_uint ARBTABLE_DEFAULT_SHARE "${ARBTABLE_DEFAULT_SHARE:-1}" 255); then
		[ "$ARBT_SHARE" != 0 ] ||
			{ echo "ARBTABLE_DEFAULT_SHARE 0: want 1..255" >&2; bad=1; }
	else
		bad=1
	fi
	ARBT_MASK=${ARBTABLE_MARK_MASK:-0x00ff0000}
	ARBT_BASE=${ARBTABLE_MINOR_BASE:-0x100}
	if r=$(arbt_pod_minors "$ARBT_MASK" "$ARBT_BASE"); then
		read -r ARBT_LO ARBT_HI <<<"$r"
		m=$(jq -r '.minor // empty' <<<"$ARBT_SYSTEM")
		if [ -n "$m" ]; then
			if ! m=$(arbt_uint ARBTABLE_SYSTEM_CLASS\ minor "$m" 65535); then
				bad=1
			elif [ "$m" = 0 ] || { [ "$m" -ge "$ARBT_LO" ] && [ "$m" -le "$ARBT_HI" ]; }; then
				echo "ARBTABLE_SYSTEM_CLASS: minor $(jq -r .minor <<<"$ARBT_SYSTEM"): want 1..0xffff outside the tenant minors $(printf '0x%x..0x%x' "$ARBT_LO" "$ARBT_HI")" >&2
				bad=1
			fi
		fi
	else
		bad=1
	fi
	if ARBT_INTERVAL=$(arbt_uint ARBTABLE_INTERVAL "${ARBTABLE_INTERVAL:-10}" 3600); then
		[ "$ARBT_INTERVAL" != 0 ] ||
			{ echo "ARBTABLE_INTERVAL 0: want 1..3600 seconds" >&2; bad=1; }
	else
		bad=1
	fi
	return $bad
}

# arbt_paths: what the installer and the agent both find where, from
# their environment: HOST_PREFIX (the host's root as the pod mounts it,
# default /host), BUNDLE (the plugin and the libraries it links, as the
# image carries them), NETD (the host's CNI config directory) and OURS
# (the chained conflist's name there: "00-" sorts first)
# shellcheck disable=SC2034 # they are the callers'
arbt_paths() {
	HOST_PREFIX=${HOST_PREFIX:-/host}
	BUNDLE=${ARBTABLE_BUNDLE:-/usr/local/lib/arbtable-cni-bundle}
	NETD=$HOST_PREFIX/etc/cni/net.d
	OURS=00-arbtable.conflist
}

# arbt_device: the egress device arbt_config's ARBT_DEVICE names, or
# for "auto" the device of the default route (nothing when there is
# none); the installer chains the plugin on it and the agent makes its
# root there
arbt_device() {
	if [ "$ARBT_DEVICE" != auto ]; then
		echo "$ARBT_DEVICE"
		return
	fi
	ip -o route show default | sed -n 's/.* dev \([^ ]*\).*/\1/p' | head -n1
}

# arbt_plugin_entry DEV: arbtable-cni's entry in the chain for egress
# device DEV, from arbt_config's ARBT_* (JSON on stdout): what the
# installer appends to the node's conflist and what the agent hands to
# `arbtable-cni --ensure-root`, so both make the same root.  The
# pod-annotations capability makes containerd and CRI-O pass the pod's
# annotations in runtimeConfig.
arbt_plugin_entry() {
	jq -nc --arg dev "$1" --argjson q "$ARBT_QDISC" \
		--argjson sys "$ARBT_SYSTEM" \
		--argjson share "$ARBT_SHARE" --arg mask "$ARBT_MASK" \
		--arg base "$ARBT_BASE" \
		'{type: "arbtable-cni", device: $dev,
		  defaultShare: $share, markMask: $mask, minorBase: $base,
		  capabilities: {"io.kubernetes.cri.pod-annotations": true}} +
		 (if $q == {} then {} else {qdisc: $q} end) +
		 (if $sys == {} then {} else {systemClass: $sys} end)'
}

# arbt_node_values CAPACITY_JSON SHOW_JSON MINOR_LO MINOR_HI
#
# CAPACITY_JSON: `arbtablectl --json capacity DEV`, SHOW_JSON: `arbtablectl
# --json show DEV` (files), MINOR_LO..MINOR_HI: the class minors
# arbtable-cni gives pods (arbt_pod_minors).  Prints "KIND NAME VALUE"
# lines, KIND resource (node status capacity), label or annotation (node
# metadata), or retired (an annotation earlier agents published, to
# remove); returns 1 on input that is not arbtablectl's.
#
# Pod classes are those in the tenant minors: the classes of pods that
# asked for something and the shared best-effort class.  The shared
# class is kept aside whether it exists yet or not (one class, one LOW
# slot: a share with no distance), since the pods that join it ask for
# nothing the scheduler could count; the system class (the root's
# default, outside the tenant minors) and an administrator's classes are
# neither free nor the pods', so they are left out.  The kubelet's
# maxPods does not enter: pods asking for nothing take no class.
arbt_node_values() {
	local cap=$1 show=$2 lo=$3 hi=$4
	local c handle hs ls rw minor ph=0 pl=0 pu=0 pc=0
	local fh fl fu cf hc mw rate mtu hl sc scb fit high low units mbit
	local classes dev def

	# capacity: the free room and the sizing parameters, one line
	# (numbers checked as numbers: what reaches bash arithmetic below
	# is digits only)
	c=$(jq -er 'def n: if type == "number" and . >= 0 and . == floor
			   then tostring else error("not a count") end;
		    [(.high.free_slots, .low.free_slots, .high.free_units,
		      .classes_free, .high_capacity_bps, .maxweight,
		      .rate_bps, .mtu, .highlimit, .strict_ceil_bps,
		      .strict_cburst | n),
		     ([.high.fit_by_distance | to_entries[] |
		       "\(.key):\(.value | n)"] | join(","))] |
		    join(" ")' "$cap" 2>/dev/null) || return 1
	read -r fh fl fu cf hc mw rate mtu hl sc scb fit <<<"$c"
	[ "$mw" != 0 ] || return 1
	# the root's device and default class ("" for none)
	c=$(jq -er '[(.dev | strings | select(test("^[^ ]{1,15}$"))),
		     (.options.default | strings |
		      select(. == "" or test("^[0-9a-f]{1,4}:[0-9a-f]{1,4}$")) |
		      if . == "" then "-" else . end)] | join(" ")' \
	    "$show" 2>/dev/null) || return 1
	read -r dev def <<<"$c"
	# the classes arbtable-cni made (its minors): what pods hold now
	c=$(jq -er 'def n: if type == "number" and . >= 0 and . == floor
			   then tostring else error("not a count") end;
		    .classes | map(if (.handle | type == "string" and
					test("^[0-9a-f]{1,4}:[0-9a-f]{1,4}$"))
				   then [.handle, (.stats.high_slot_count,
						   .stats.low_slot_count,
						   .stats.reserved_weight | n)]
				   else error("bad handle") end |
				   join(" ")) | join("\n")' \
	    "$show" 2>/dev/null) || return 1
	while read -r handle hs ls rw; do
		[ -n "$handle" ] || continue
		minor=$((16#${handle#*:}))
		if [ "$minor" -lt "$lo" ] || [ "$minor" -gt "$hi" ]; then
			continue
		fi
		pc=$((pc + 1))
		ph=$((ph + hs))
		pl=$((pl + ls))
		# the HIGH units a class reserves (capacity counts them so)
		if [ "$hs" -gt 0 ]; then
			pu=$((pu + rw))
		fi
	done <<<"$c"

	high=$((fh + ph))
	# the shared best-effort class's LOW slot and class, kept aside
	low=$((fl + pl - 1))
	[ $low -lt 0 ] && low=0
	classes=$((cf + pc - 1))
	[ $classes -lt 0 ] && classes=0
	# the rate of the units, as the module computes it (arb_weight_rate:
	# units * C_high / (64 * maxweight), bytes/s, rounded down), then
	# whole Mbit/s rounded down (two roundings, as the two steps are)
	units=$((fu + pu))
	# shellcheck disable=SC2017
	mbit=$((units * (hc / 8) / (64 * mw) * 8 / 1000000))

	echo "resource arbtable.io/high-slots $high"
	echo "resource arbtable.io/low-slots $low"
	echo "resource arbtable.io/guaranteed-mbit $mbit"
	echo "resource arbtable.io/classes $classes"
	# the sizing parameters: pods select nodes whose costs they computed
	# (`arbtablectl request ... link L mtu M ...` takes them as they are)
	echo "label arbtable.io/link $rate"
	echo "label arbtable.io/mtu $mtu"
	echo "label arbtable.io/maxweight $mw"
	echo "label arbtable.io/highlimit $hl"
	echo "label arbtable.io/strictceil $sc"
	echo "label arbtable.io/strictcburst $scb"
	# what is free right now, for people (changes with every tenant)
	echo "annotation arbtable.io/free high-slots=$fh,low-slots=$fl,units=$fu,classes=$cf"
	echo "annotation arbtable.io/fit-high $fit"
	if [ "$def" = - ]; then
		echo "annotation arbtable.io/warning the root on $dev has no default class: the node's own traffic is served only when no class is eligible and starves once pods fill the link (a root arbtable-cni or this agent makes has a system class)"
	else
		echo "annotation arbtable.io/warning none"
	fi
	# the classes left to pods, before there was a resource for them
	echo "retired arbtable.io/pod-classes"
}

# arbt_pod_resources REQUEST_JSON: the resources.limits of a pod whose
# annotations make the request (`arbtablectl --json request ...`, either
# form), "NAME VALUE" lines; returns 1 for a request the module refuses
# whatever the table holds.  A pod that asks for nothing (no arbtable.io/
# annotation) asks for no resource: it joins the shared best-effort class.
arbt_pod_resources() {
	local r table slots bps
	r=$(jq -er 'select(.valid) | [.table, .slots, .guaranteed_bps] |
		    map(tostring) | join(" ")' "$1") || return 1
	read -r table slots bps <<<"$r"
	# (jq -e passes an empty file: no request at all)
	[[ $table =~ ^(high|low)$ && $slots =~ ^[0-9]+$ && $bps =~ ^[0-9]+$ ]] ||
		return 1
	if [ "$table" = high ]; then
		echo "arbtable.io/high-slots $slots"
		# rounded up: the pod never asks for less than it reserves
		echo "arbtable.io/guaranteed-mbit $(((bps + 999999) / 1000000))"
	else
		echo "arbtable.io/low-slots $slots"
	fi
	# the class of its own
	echo "arbtable.io/classes 1"
}

# arbt_patch status|meta VALUES: the JSON merge patch (RFC 7386) of the
# node's status (its capacity: the resources) or of its metadata (labels,
# annotations; a retired annotation set to null, which removes it) for
# arbt_node_values' lines in the file VALUES.  Quantities and label
# values are strings in the API.
arbt_patch() {
	local q
	case $1 in
	status)
		q='{status: {capacity: (map(select(.k == "resource") |
						{(.n): .v}) | add)}}' ;;
	meta)
		q='{metadata: {labels: (map(select(.k == "label") |
					      {(.n): .v}) | add),
			       annotations: (map(select(.k == "annotation" or
							.k == "retired") |
						   {(.n): (if .k == "retired"
							   then null
							   else .v end)}) |
					     add)}}' ;;
	*)
		return 1 ;;
	esac
	jq -cRn "[inputs | select(test(\"^[a-z]+ \")) |
		  capture(\"^(?<k>[a-z]+) (?<n>[^ ]+) ?(?<v>.*)\$\")] | $q" <"$2"
}

# arbt_current PATCH NODE: 0 when the node object in the file NODE already
# holds every value the merge patch in the file PATCH sets (no PATCH to
# send).  Compared with the node, not with what this agent sent last: the
# kubelet zeroes extended resources when it re-creates its Node, and the
# agent must then put them back (kubernetes PR 64784).
arbt_current() {
	jq -e --slurpfile p "$1" '. as $n | $p[0] as $w |
		all($w | paths(scalars); . as $k |
		    ($w | getpath($k)) == ($n | getpath($k))) and
		all($w | paths(. == null); . as $k |
		    ($n | getpath($k)) == null)' "$2" >/dev/null
}

# arbt_holds NODE STATUS_PATCH META_PATCH: "status", "meta", both or
# neither (one line): the merge patches in those files (named so) that
# delete (set to null) a key the node object in the file NODE has a value
# for, i.e. the withdrawals to send.
arbt_holds() {
	jq -r --slurpfile s "$2" --slurpfile m "$3" '. as $n |
		def holds($w): any($w | paths(. == null); . as $k |
				   ($n | getpath($k)) != null);
		[if holds($s[0]) then "status" else empty end,
		 if holds($m[0]) then "meta" else empty end] | join(" ")' "$1"
}
