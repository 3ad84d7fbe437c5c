#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# arbtable-node-agent.sh - the DaemonSet's main container: keeps the
# plugin installed and chained (arbtable-install-cni.sh), makes sure the
# egress NIC has its arbtable root, and publishes on this node's object
#
#   status.capacity      arbtable.io/high-slots, arbtable.io/low-slots,
#                        arbtable.io/guaranteed-mbit (the kubelet copies
#                        them into allocatable; the scheduler places pods
#                        against them)
#   metadata.labels      the qdisc's sizing parameters (arbtable.io/link,
#                        mtu, maxweight, highlimit, strictceil,
#                        strictcburst), for pods' nodeSelector
#   metadata.annotations what is free right now, per distance too
#
# computed by arbtable-resources.sh from `arbtablectl --json capacity` and
# `--json show`.  It looks again every ARBTABLE_INTERVAL seconds, or at
# once when arbtable-cni adds or removes a tenant (its state directory
# changes, watched with inotifywait), and patches what the Node object
# does not already say.
#
# The API is reached with curl and the pod's service account token (RBAC:
# rbac.yaml).  Environment: the ConfigMap's ARBTABLE_* (see
# arbtable-install-cni.sh), NODE_NAME (downward API), ARBTABLE_INTERVAL
# (10), ARBTABLE_STATE_DIR (the plugin's stateDir, as mounted here).
#
#   arbtable-node-agent.sh             run
#   arbtable-node-agent.sh --once      one look, then exit (its status)
#   arbtable-node-agent.sh --withdraw  remove what it published (uninstall)
set -u

here=$(dirname "$0")
# shellcheck source-path=SCRIPTDIR source=arbtable-resources.sh
. "$here/arbtable-resources.sh"

SA=${ARBTABLE_SA_DIR:-/var/run/secrets/kubernetes.io/serviceaccount}
API=https://${KUBERNETES_SERVICE_HOST:-kubernetes.default.svc}:${KUBERNETES_SERVICE_PORT:-443}
INTERVAL=${ARBTABLE_INTERVAL:-10}
STATE_DIR=${ARBTABLE_STATE_DIR:-/host/var/lib/arbtable-cni}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

log() { echo "arbtable-node-agent: $*" >&2; }

# api METHOD PATH [BODY]: the API server's JSON on stdout
api() {
	curl -sS --fail --max-time 20 --cacert "$SA/ca.crt" \
		-H "Authorization: Bearer $(cat "$SA/token")" \
		-H "Accept: application/json" \
		-H "Content-Type: application/merge-patch+json" \
		-X "$1" ${3:+--data-binary "$3"} "$API$2"
}

device() {
	if [ "${ARBTABLE_DEVICE:-auto}" != auto ]; then
		echo "$ARBTABLE_DEVICE"
		return
	fi
	ip -o route show default | sed -n 's/.* dev \([^ ]*\).*/\1/p' | head -n1
}

# The root the plugin would create on its first ADD, made now, so that
# the node advertises its room before the first pod needs it.  A root
# qdisc someone else configured is left alone (create refuses it).
ensure_root() {
	local dev=$1 rc
	# shellcheck disable=SC2086
	arbtablectl --json capacity "$dev" >"$WORK/capacity.json" 2>"$WORK/err"
	rc=$?
	if [ $rc = 3 ]; then
		# shellcheck disable=SC2086
		arbtablectl create "$dev" ${ARBTABLE_QDISC:-} 2>>"$WORK/err" &&
			log "created the arbtable root on $dev" &&
			arbtablectl --json capacity "$dev" >"$WORK/capacity.json" \
				2>"$WORK/err"
		rc=$?
	fi
	[ $rc = 0 ] || log "capacity $dev: $(cat "$WORK/err")"
	return $rc
}

publish() {
	local dev maxpods lo hi sent=
	dev=$(device)
	[ -n "$dev" ] || { log "no egress device"; return 1; }
	ensure_root "$dev" || return 1
	arbtablectl --json show "$dev" >"$WORK/show.json" || return 1
	api GET "/api/v1/nodes/$NODE_NAME" >"$WORK/node.json" || return 1
	maxpods=$(jq -er '.status.allocatable.pods // .status.capacity.pods' \
		  "$WORK/node.json") || return 1
	read -r lo hi < <(arbt_pod_minors "${ARBTABLE_MARK_MASK:-0x00ff0000}" \
				      "${ARBTABLE_MINOR_BASE:-0x100}")
	arbt_node_values "$WORK/capacity.json" "$WORK/show.json" "$maxpods" \
		"$lo" "$hi" >"$WORK/values" || return 1
	arbt_patch status "$WORK/values" >"$WORK/status.json" &&
		arbt_patch meta "$WORK/values" >"$WORK/meta.json" || return 1
	if ! arbt_current "$WORK/status.json" "$WORK/node.json"; then
		api PATCH "/api/v1/nodes/$NODE_NAME/status" \
			"$(cat "$WORK/status.json")" >/dev/null || return 1
		sent=1
	fi
	if ! arbt_current "$WORK/meta.json" "$WORK/node.json"; then
		api PATCH "/api/v1/nodes/$NODE_NAME" \
			"$(cat "$WORK/meta.json")" >/dev/null || return 1
		sent=1
	fi
	[ -z "$sent" ] ||
		log "published: $(grep -E '^(resource|annotation arbtable.io/warning)' "$WORK/values" |
				  cut -d' ' -f2- | paste -sd';')"
}

withdraw() {
	local n
	n='["arbtable.io/high-slots","arbtable.io/low-slots","arbtable.io/guaranteed-mbit"]'
	api PATCH "/api/v1/nodes/$NODE_NAME/status" "$(jq -nc --argjson n "$n" \
		'{status: {capacity: ($n | map({(.): null}) | add)}}')" >/dev/null
	api PATCH "/api/v1/nodes/$NODE_NAME" "$(jq -nc '
		["link", "mtu", "maxweight", "highlimit", "strictceil",
		 "strictcburst"] as $l | ["free", "fit-high", "pod-classes",
		 "warning"] as $a |
		{metadata: {labels: ($l | map({("arbtable.io/" + .): null}) | add),
			    annotations: ($a | map({("arbtable.io/" + .): null}) |
					  add)}}')" >/dev/null
}

: "${NODE_NAME:?NODE_NAME (downward API spec.nodeName) is not set}"
case "${1:-}" in
--withdraw)
	withdraw
	exit
	;;
--once)
	"$here/arbtable-install-cni.sh" || exit
	publish
	exit
	;;
esac
while :; do
	"$here/arbtable-install-cni.sh" || log "install: failed, retrying"
	publish || log "publish: failed, retrying"
	# a tenant's state file appearing or going wakes us at once
	if command -v inotifywait >/dev/null && [ -d "$STATE_DIR" ]; then
		inotifywait -qq -t "$INTERVAL" -e create,delete,moved_to \
			"$STATE_DIR" || true
	else
		sleep "$INTERVAL"
	fi
done
