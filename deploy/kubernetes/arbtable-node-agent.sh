#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# arbtable-node-agent.sh - the DaemonSet's main container: keeps the
# plugin installed and chained where it can work (arbtable-install-cni.sh),
# makes sure the egress NIC has its arbtable root (the one the plugin's
# first ADD would make, system class included: `arbtable-cni
# --ensure-root` on the plugin's entry), and publishes on this node's
# object
#
#   status.capacity      arbtable.io/high-slots, arbtable.io/low-slots,
#                        arbtable.io/guaranteed-mbit, arbtable.io/classes
#                        (the kubelet copies them into allocatable; the
#                        scheduler places pods against them)
#   metadata.labels      the qdisc's sizing parameters (arbtable.io/link,
#                        mtu, maxweight, highlimit, strictceil,
#                        strictcburst), for pods' nodeSelector
#   metadata.annotations what is free right now, per distance too
#
# computed by arbtable-resources.sh from `arbtablectl --json capacity` and
# `--json show`, both read under one shared flock on the plugin's
# per-device lock ($ARBTABLE_LOCK_DIR/<device>.lock, which every ADD, DEL
# and GC holds exclusively): one snapshot, never half of an admission.
# Published only while the chain is in place (no chain: sch_arbtable not
# loaded, no primary network, a version the plugin does not speak), and
# withdrawn otherwise.  It looks again every ARBTABLE_INTERVAL seconds, or
# at once when arbtable-cni adds or removes a tenant (its state directory
# changes, watched with inotifywait), and patches what the Node object
# does not already say.
#
# The API is reached with curl and the pod's service account token (RBAC
# and the admission policy limiting it to this node: rbac.yaml).  The
# token is read by the shell and handed to curl on a pipe (--config -):
# never in a process's arguments or environment.  SIGTERM (the pod's
# deletion) removes the chain (the plugin stays for the DEL of pods
# chained before), withdraws what was published and exits 0.
#
# Environment: the ConfigMap's ARBTABLE_* (parsed by arbt_config, refused
# with a message: exit 2), NODE_NAME (downward API), ARBTABLE_STATE_DIR
# (the plugin's stateDir, as mounted here), ARBTABLE_LOCK_DIR (the
# plugin's lock directory, /run/arbtable-cni: the host's, mounted where
# the plugin run from here locks too), ARBTABLE_BUNDLE (the plugin the
# image carries), ARBTABLE_SA_DIR (the service account's token and CA),
# ARBTABLE_AGENT_DIR (where the probes' files are kept).
#
#   arbtable-node-agent.sh              run
#   arbtable-node-agent.sh --once       one look, then exit (its status)
#   arbtable-node-agent.sh --withdraw   remove what it published (uninstall)
#   arbtable-node-agent.sh --probe live|ready   the kubelet's exec probes:
#       live: the loop went round within 2 intervals + 60 s; ready: the
#       last look did its job
set -u

here=$(dirname "$0")
# shellcheck source-path=SCRIPTDIR source=arbtable-resources.sh
. "$here/arbtable-resources.sh"

arbt_paths
SA=${ARBTABLE_SA_DIR:-/var/run/secrets/kubernetes.io/serviceaccount}
API=https://${KUBERNETES_SERVICE_HOST:-kubernetes.default.svc}:${KUBERNETES_SERVICE_PORT:-443}
STATE_DIR=${ARBTABLE_STATE_DIR:-$HOST_PREFIX/var/lib/arbtable-cni}
LOCK_DIR=${ARBTABLE_LOCK_DIR:-/run/arbtable-cni}
AGENT_DIR=${ARBTABLE_AGENT_DIR:-/tmp/arbtable-node-agent}
CHAIN=$NETD/$OURS

log() { echo "arbtable-node-agent: $*" >&2; }

probe() {
	local t now
	case ${1:-} in
	live)
		t=$(stat -c %Y "$AGENT_DIR/alive" 2>/dev/null) || {
			echo "no heartbeat yet"
			return 1
		}
		now=$(date +%s)
		[ $((now - t)) -le $((2 * ARBT_INTERVAL + 60)) ] || {
			echo "last heartbeat $((now - t)) s ago"
			return 1
		}
		;;
	ready)
		[ -e "$AGENT_DIR/ready" ] || {
			echo "the last look failed (see the log)"
			return 1
		}
		;;
	*)
		echo "--probe live|ready" >&2
		return 64
		;;
	esac
}

# api METHOD PATH [BODY_FILE]: the answer in $WORK/answer.json; 0 for a
# 2xx, else a line naming the API server's message.  The bearer token
# goes to curl as a config line on its stdin (printf is a builtin).
api() {
	local tok='' code
	IFS= read -r tok <"$SA/token" || [ -n "$tok" ] || {
		log "no token in $SA/token"
		return 1
	}
	if [[ ! $tok =~ ^[A-Za-z0-9._-]+$ ]]; then
		log "$SA/token does not hold a bearer token"
		return 1
	fi
	code=$(printf 'header = "Authorization: Bearer %s"\n' "$tok" |
	       curl -sS --config - --max-time 10 --cacert "$SA/ca.crt" \
		       -H "Accept: application/json" \
		       -H "Content-Type: application/merge-patch+json" \
		       -X "$1" ${3:+--data-binary "@$3"} \
		       -o "$WORK/answer.json" -w '%{http_code}' "$API$2") || {
		log "$1 $2: no answer"
		return 1
	}
	case $code in
	2??) return 0 ;;
	esac
	log "$1 $2: HTTP $code: $(jq -r '.message // empty' "$WORK/answer.json" 2>/dev/null)"
	return 1
}

# make_root DEV: the root the plugin would make on its first ADD, made
# now, so that the node advertises its room before the first pod needs
# it (and an installed sch_arbtable is loaded): the plugin makes it
# itself (`arbtable-cni --ensure-root` on the entry the installer
# chains), system class and all, under its own exclusive hold of the
# device's lock.  A root qdisc someone else configured is left alone.
make_root() {
	local out
	if out=$(arbt_plugin_entry "$1" |
		 jq -c '. + {cniVersion: "1.1.0", name: "arbtable-node-agent"}' |
		 env -i "$BUNDLE/bin/arbtable-cni" --ensure-root 2>/dev/null); then
		log "made the arbtable root on $1 as arbtable-cni's first ADD would (its system class the default)"
		return 0
	fi
	log "no arbtable root on $1 and arbtable-cni --ensure-root made none: $(jq -r '"code \(.code): \(.msg)\(if .details then ": " + .details else "" end)"' <<<"$out" 2>/dev/null || echo "$out")"
	return 1
}

# snapshot DEV: capacity.json and show.json, read under one shared flock
# on the plugin's lock of DEV (an ADD or DEL in flight finishes first);
# with no arbtable root on DEV (capacity's exit 3), the lock is let go
# for make_root, then taken again for the snapshot
snapshot() {
	local dev=$1 lock=$LOCK_DIR/$1.lock fd rc=1 try
	if ! mkdir -p "$LOCK_DIR" || ! exec {fd}>>"$lock"; then
		log "cannot open $lock"
		return 1
	fi
	for try in 1 2; do
		if ! flock -s -w 10 "$fd"; then
			log "$lock: held by another for 10 s"
			rc=1
			break
		fi
		arbtablectl --json capacity "$dev" >"$WORK/capacity.json" 2>"$WORK/err"
		rc=$?
		if [ $rc = 3 ] && [ $try = 1 ]; then
			flock -u "$fd"
			make_root "$dev" && continue
			rc=1
			break
		fi
		if [ $rc != 0 ]; then
			log "capacity $dev: $(cat "$WORK/err")"
		elif ! arbtablectl --json show "$dev" >"$WORK/show.json" 2>"$WORK/err"; then
			log "show $dev: $(cat "$WORK/err")"
			rc=1
		fi
		break
	done
	exec {fd}>&-
	return $rc
}

# withdraw [--blind]: take off this node what publish put on it: what it
# holds of it (a GET first), or, --blind (SIGTERM: two calls, no GET),
# whatever it holds
withdraw() {
	local what="status meta"
	printf '%s\n' '{"status":{"capacity":{"arbtable.io/high-slots":null,"arbtable.io/low-slots":null,"arbtable.io/guaranteed-mbit":null,"arbtable.io/classes":null}}}' \
		>"$WORK/status.json"
	printf '%s\n' '{"metadata":{"labels":{"arbtable.io/link":null,"arbtable.io/mtu":null,"arbtable.io/maxweight":null,"arbtable.io/highlimit":null,"arbtable.io/strictceil":null,"arbtable.io/strictcburst":null},"annotations":{"arbtable.io/free":null,"arbtable.io/fit-high":null,"arbtable.io/pod-classes":null,"arbtable.io/warning":null}}}' \
		>"$WORK/meta.json"
	if [ "${1:-}" != --blind ]; then
		api GET "/api/v1/nodes/$NODE_NAME" || return 1
		what=$(arbt_holds "$WORK/answer.json" "$WORK/status.json" \
			"$WORK/meta.json") || return 1
	fi
	case " $what " in
	*" status "*)
		api PATCH "/api/v1/nodes/$NODE_NAME/status" "$WORK/status.json" ||
			return 1
		log "withdrew the resources" ;;
	esac
	case " $what " in
	*" meta "*)
		api PATCH "/api/v1/nodes/$NODE_NAME" "$WORK/meta.json" || return 1
		log "withdrew the labels and annotations" ;;
	esac
}

# SIGTERM came: a look stops at its next step (bash runs the trap between
# two commands), so that the pod ends within one API call
term=
stopping() { [ -n "$term" ]; }

# one look: install, chain or unchain, publish or withdraw
look() {
	local dev snap=0 sent=
	dev=$(arbt_device)
	[ -n "$dev" ] || { log "no egress device"; return 1; }
	snapshot "$dev" || snap=1
	stopping && return 1
	"$here/arbtable-install-cni.sh" || return 1
	stopping && return 1
	if [ ! -f "$CHAIN" ]; then
		withdraw
		return
	fi
	[ $snap = 0 ] || return 1
	api GET "/api/v1/nodes/$NODE_NAME" || return 1
	stopping && return 1
	cp "$WORK/answer.json" "$WORK/node.json"
	arbt_node_values "$WORK/capacity.json" "$WORK/show.json" \
		"$ARBT_LO" "$ARBT_HI" >"$WORK/values" || {
		log "arbtablectl's report not understood"
		return 1
	}
	arbt_patch status "$WORK/values" >"$WORK/status.json" &&
		arbt_patch meta "$WORK/values" >"$WORK/meta.json" || return 1
	if ! arbt_current "$WORK/status.json" "$WORK/node.json"; then
		api PATCH "/api/v1/nodes/$NODE_NAME/status" "$WORK/status.json" ||
			return 1
		sent=1
	fi
	if ! arbt_current "$WORK/meta.json" "$WORK/node.json"; then
		api PATCH "/api/v1/nodes/$NODE_NAME" "$WORK/meta.json" || return 1
		sent=1
	fi
	[ -z "$sent" ] ||
		log "published: $(grep -E '^(resource|annotation arbtable.io/warning)' "$WORK/values" |
				  cut -d' ' -f2- | paste -sd';')"
}

arbt_config || { log "ConfigMap refused (above)"; exit 2; }
if [ "${1:-}" = --probe ]; then
	probe "${2:-}"
	exit
fi
NODE_NAME=${NODE_NAME:-}
if [[ ! $NODE_NAME =~ ^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$ ]]; then
	log "NODE_NAME \"$NODE_NAME\": want a node name (the downward API's spec.nodeName)"
	exit 2
fi
WORK=$(mktemp -d) || exit 1
trap 'rm -rf "$WORK"' EXIT
case "${1:-}" in
--withdraw)
	withdraw
	exit
	;;
--once)
	look
	exit
	;;
"")
	;;
*)
	echo "usage: $0 [--once | --withdraw | --probe live|ready]" >&2
	exit 64
	;;
esac

# SIGTERM: bash runs a trap only between commands, so the waits are
# background children the trap ends; the longest foreground command is
# an API call (10 s at most).
child=
trap 'term=1; [ -z "$child" ] || kill "$child" 2>/dev/null' TERM INT
mkdir -p "$AGENT_DIR" || exit 1
rm -f "$AGENT_DIR/ready"
# what a look says goes to the log when it differs from what the look
# before said: a node without the module, or an API server away, is
# reported once, not every period
while [ -z "$term" ]; do
	if look 2>"$WORK/said"; then
		touch "$AGENT_DIR/ready"
	else
		rm -f "$AGENT_DIR/ready"
		log "look failed, retrying" 2>>"$WORK/said"
	fi
	cmp -s "$WORK/said" "$WORK/said.before" || cat "$WORK/said" >&2
	mv -f "$WORK/said" "$WORK/said.before"
	touch "$AGENT_DIR/alive"
	[ -z "$term" ] || break
	# a tenant's state file appearing or going wakes us at once
	if command -v inotifywait >/dev/null && [ -d "$STATE_DIR" ]; then
		inotifywait -qq -t "$ARBT_INTERVAL" -e create,delete,moved_to \
			"$STATE_DIR" &
	else
		sleep "$ARBT_INTERVAL" &
	fi
	child=$!
	[ -z "$term" ] || kill "$child" 2>/dev/null
	wait "$child"
	child=
done
rm -f "$AGENT_DIR/ready"
"$here/arbtable-install-cni.sh" --unchain
withdraw --blind || log "could not withdraw what this node advertises"
log "stopped"
exit 0
