# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# arbtable-resources.sh - the translation between arbtablectl's JSON and
# Kubernetes extended resources, sourced by arbtable-node-agent.sh and by
# tests/kubernetes/check.sh (pure functions: files in, lines out, no API
# calls).  Documentation/networking/arbtable-kubernetes.rst gives the
# reasoning; in short:
#
#   arbtable.io/high-slots      HIGH table slots pods may hold
#   arbtable.io/low-slots       LOW table slots pods may hold beyond the one
#                               slot every pod's class may take
#   arbtable.io/guaranteed-mbit guaranteed HIGH rate pods may reserve, Mbit/s
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

# arbt_config: the ConfigMap's ARBTABLE_* (defaults for those unset)
# parsed into
#   ARBT_DEVICE     an interface name, or "auto" (the default route's)
#   ARBT_QDISC      the qdisc object of the plugin's entry (JSON, {} for
#                   none: the plugin then sizes the root to the link)
#   ARBT_SHARE      defaultShare, 1..255
#   ARBT_MASK       markMask, ARBT_BASE minorBase (as given: checked)
#   ARBT_LO ARBT_HI the tenant minors they give
#   ARBT_INTERVAL   seconds, 1..3600
# Every value refused gets a line on stderr naming it; returns 1 then.
# shellcheck disable=SC2034 # the ARBT_* are the callers'
arbt_config() {
	local bad=0 words k v seen=" " q='{}' r
	ARBT_DEVICE=${ARBTABLE_DEVICE:-auto}
	# an interface name as the kernel takes it (dev_valid_name)
	if [ "$ARBT_DEVICE" != auto ] &&
	   { [[ ! $ARBT_DEVICE =~ ^[^/:[:space:]]{1,15}$ ]] ||
	     [ "$ARBT_DEVICE" = . ] || [ "$ARBT_DEVICE" = .. ]; }; then
		echo "ARBTABLE_DEVICE \"$ARBT_DEVICE\": want an interface name (1..15 characters, no '/', ':' or space) or auto" >&2
		bad=1
	fi
	read -ra words <<<"${ARBTABLE_QDISC:-}"
	set -- "${words[@]}"
	while [ $# -gt 0 ]; do
		k=$1 v=${2:-}
		shift
		[ $# = 0 ] || shift
		case $k in
		handle | rate | burst | mtu | highlimit | maxweight) ;;
		*)
			echo "ARBTABLE_QDISC: unknown key \"$k\" (known: handle, rate, burst, mtu, highlimit, maxweight)" >&2
			bad=1
			continue ;;
		esac
		if [[ $seen == *" $k "* ]]; then
			echo "ARBTABLE_QDISC: $k given twice" >&2
			bad=1
		elif [[ ! $v =~ ^[0-9][0-9A-Za-z.:%]*$ ]]; then
			echo "ARBTABLE_QDISC: $k \"$v\": want a value such as 10gbit, 50%, 1514, 30k or 1:" >&2
			bad=1
		else
			q=$(jq -c --arg k "$k" --arg v "$v" '. + {($k): $v}' <<<"$q")
		fi
		seen="$seen$k "
	done
	ARBT_QDISC=$q
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

# arbt_node_values CAPACITY_JSON SHOW_JSON MAX_PODS MINOR_LO MINOR_HI
#
# CAPACITY_JSON: `arbtablectl --json capacity DEV`, SHOW_JSON: `arbtablectl
# --json show DEV` (files), MAX_PODS: the node's pod capacity (kubelet
# maxPods).  Prints "KIND NAME VALUE" lines, KIND resource (node status
# capacity), label or annotation (node metadata); returns 1 on input that
# is not arbtablectl's.
arbt_node_values() {
	local cap=$1 show=$2 maxpods=$3 lo=$4 hi=$5
	local c handle hs ls rw minor ph=0 pl=0 pu=0 pc=0
	local fh fl fu cf hc mw rate mtu hl sc scb fit high low units mbit
	local classes

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
	# every pod's class (a default share too) may take one LOW slot
	# without asking for it: keep max-pods of them aside
	low=$((fl + pl - maxpods))
	[ $low -lt 0 ] && low=0
	# the rate of the units, as the module computes it (arb_weight_rate:
	# units * C_high / (64 * maxweight), bytes/s, rounded down), then
	# whole Mbit/s rounded down (two roundings, as the two steps are)
	units=$((fu + pu))
	# shellcheck disable=SC2017
	mbit=$((units * (hc / 8) / (64 * mw) * 8 / 1000000))
	classes=$((cf + pc))

	echo "resource arbtable.io/high-slots $high"
	echo "resource arbtable.io/low-slots $low"
	echo "resource arbtable.io/guaranteed-mbit $mbit"
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
	echo "annotation arbtable.io/pod-classes $classes"
	if [ "$maxpods" -gt "$classes" ]; then
		echo "annotation arbtable.io/warning max-pods $maxpods exceeds the $classes classes left to pods: admission can fail"
	else
		echo "annotation arbtable.io/warning none"
	fi
}

# arbt_pod_resources REQUEST_JSON: the resources.limits of a pod whose
# annotations make the request (`arbtablectl --json request ...`, either
# form), "NAME VALUE" lines; returns 1 for a request the module refuses
# whatever the table holds.
arbt_pod_resources() {
	local r table slots bps
	r=$(jq -er 'select(.valid) | [.table, .slots, .guaranteed_bps] |
		    map(tostring) | join(" ")' "$1") || return 1
	read -r table slots bps <<<"$r"
	if [ "$table" = high ]; then
		echo "arbtable.io/high-slots $slots"
		# rounded up: the pod never asks for less than it reserves
		echo "arbtable.io/guaranteed-mbit $(((bps + 999999) / 1000000))"
	elif [ "$slots" -gt 1 ]; then
		# the first slot is the one kept aside for every pod
		echo "arbtable.io/low-slots $((slots - 1))"
	fi
}

# arbt_patch status|meta VALUES: the JSON merge patch (RFC 7386) of the
# node's status (its capacity: the resources) or of its metadata (labels,
# annotations) for arbt_node_values' lines in the file VALUES.  Quantities
# and label values are strings in the API.
arbt_patch() {
	local q
	case $1 in
	status)
		q='{status: {capacity: (map(select(.k == "resource") |
						{(.n): .v}) | add)}}' ;;
	meta)
		q='{metadata: {labels: (map(select(.k == "label") |
					      {(.n): .v}) | add),
			       annotations: (map(select(.k == "annotation") |
						   {(.n): .v}) | add)}}' ;;
	*)
		return 1 ;;
	esac
	jq -cRn "[inputs | select(test(\"^[a-z]+ \")) |
		  capture(\"^(?<k>[a-z]+) (?<n>[^ ]+) (?<v>.*)\$\")] | $q" <"$2"
}

# arbt_current PATCH NODE: 0 when the node object in the file NODE already
# holds every value the merge patch in the file PATCH sets (no PATCH to
# send).  Compared with the node, not with what this agent sent last: the
# kubelet zeroes extended resources when it re-creates its Node, and the
# agent must then put them back (kubernetes PR 64784).
arbt_current() {
	jq -e --slurpfile p "$1" '. as $n | $p[0] as $w |
		all($w | paths(scalars); . as $k |
		    ($w | getpath($k)) == ($n | getpath($k)))' "$2" >/dev/null
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
