#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# arbtable-install-cni.sh - put arbtable-cni on the node and chain it after
# the node's own network: run by the DaemonSet's init container, and again
# by the node agent every period (idempotent: files change only when their
# content would).
#
#   1. the plugin and the libraries it links (libarbtable, libnl, json-c,
#      as the image has them) into $HOST_PREFIX/opt/arbtable, and a
#      two-line wrapper $HOST_PREFIX/opt/cni/bin/arbtable-cni that runs it
#      with that library path (the runtime executes plugins in the host's
#      mount namespace, where those libraries may be missing);
#   2. $HOST_PREFIX/etc/cni/net.d/00-arbtable.conflist: the first other
#      config in that directory (the node's primary network, by the name
#      order containerd and CRI-O use to pick one) with arbtable-cni
#      appended to its plugin list.  "00-" sorts first, so the runtime
#      uses the chained copy; the network keeps its name, so IPAM state
#      (host-local leases) and running pods are unaffected.
#
# Environment (the ConfigMap): ARBTABLE_DEVICE (or "auto": the device of
# the default route), ARBTABLE_QDISC ("rate 10gbit mtu 1514": KEY VALUE
# pairs for the root the plugin may create), ARBTABLE_DEFAULT_SHARE,
# ARBTABLE_MARK_MASK, ARBTABLE_MINOR_BASE; HOST_PREFIX (default /host).
#
#   arbtable-install-cni.sh              install or refresh
#   arbtable-install-cni.sh --uninstall  remove the conflist, then the plugin
#   arbtable-install-cni.sh --print PRIMARY_CONF   the chained conflist on
#                                        stdout (for tests)
set -eu

HOST_PREFIX=${HOST_PREFIX:-/host}
BUNDLE=${ARBTABLE_BUNDLE:-/usr/local/lib/arbtable-cni-bundle}
NETD=$HOST_PREFIX/etc/cni/net.d
BIN=$HOST_PREFIX/opt/cni/bin
OPT=$HOST_PREFIX/opt/arbtable
OURS=00-arbtable.conflist

log() { echo "arbtable-install-cni: $*" >&2; }

device() {
	if [ "${ARBTABLE_DEVICE:-auto}" != auto ]; then
		echo "$ARBTABLE_DEVICE"
		return
	fi
	ip -o route show default | sed -n 's/.* dev \([^ ]*\).*/\1/p' | head -n1
}

# ARBTABLE_QDISC "k v k v" as the plugin's "qdisc" object
qdisc_json() {
	local words k v obj='{}'
	read -ra words <<<"${ARBTABLE_QDISC:-}"
	set -- "${words[@]}"
	while [ $# -ge 2 ]; do
		k=$1 v=$2
		shift 2
		obj=$(jq -c --arg k "$k" --arg v "$v" '. + {($k): $v}' <<<"$obj")
	done
	[ $# = 0 ] || { log "ARBTABLE_QDISC: \"$1\" has no value"; return 1; }
	echo "$obj"
}

# The plugin's entry in the chain: the pod-annotations capability makes
# containerd and CRI-O pass the pod's annotations in runtimeConfig.
plugin_json() {
	local dev q
	dev=$(device)
	[ -n "$dev" ] || { log "no device (set ARBTABLE_DEVICE)"; return 1; }
	q=$(qdisc_json)
	jq -nc --arg dev "$dev" --argjson q "$q" \
		--arg share "${ARBTABLE_DEFAULT_SHARE:-1}" \
		--arg mask "${ARBTABLE_MARK_MASK:-0x00ff0000}" \
		--arg base "${ARBTABLE_MINOR_BASE:-0x100}" \
		'{type: "arbtable-cni", device: $dev,
		  defaultShare: ($share | tonumber), markMask: $mask,
		  minorBase: $base,
		  capabilities: {"io.kubernetes.cri.pod-annotations": true}} +
		 (if $q == {} then {} else {qdisc: $q} end)'
}

# PRIMARY (a .conf of one plugin or a .conflist) + our entry, last; an
# arbtable-cni entry it already has is replaced, not doubled.  The plugin
# speaks CNI 0.4.0 and 1.0.0: an older list (0.3.x) is raised to 0.4.0,
# which every plugin of containernetworking-plugins >= 0.8 also speaks, a
# newer one (1.1.0) lowered to 1.0.0.
chain() {
	local p
	p=$(plugin_json)
	jq --argjson p "$p" '
		(if has("plugins") then .
		 else {cniVersion: .cniVersion, name: .name,
		       plugins: [del(.cniVersion, .name)]} end) |
		(if (.cniVersion | IN("0.4.0", "1.0.0")) then .
		 elif (.cniVersion | startswith("0.")) then .cniVersion = "0.4.0"
		 else .cniVersion = "1.0.0" end) |
		.plugins = ([.plugins[] | select(.type != "arbtable-cni")] +
			    [$p])' "$1"
}

# the node's primary config: the first other *.conf, *.conflist, *.json
primary() {
	local f
	for f in "$NETD"/*.conf "$NETD"/*.conflist "$NETD"/*.json; do
		[ -f "$f" ] && [ "${f##*/}" != "$OURS" ] && echo "$f"
	done | LC_ALL=C sort | head -n1
}

# copy SRC to DST through a temporary file in DST's directory, only when
# different (a runtime never sees a half-written file)
put() {
	local src=$1 dst=$2 mode=$3
	cmp -s "$src" "$dst" 2>/dev/null && return 0
	install -m "$mode" "$src" "$dst.tmp.$$"
	mv -f "$dst.tmp.$$" "$dst"
	log "updated $dst"
}

install_plugin() {
	local f w
	mkdir -p "$OPT/bin" "$OPT/lib" "$BIN"
	for f in "$BUNDLE"/lib/*; do
		put "$f" "$OPT/lib/${f##*/}" 0644
	done
	put "$BUNDLE/bin/arbtable-cni" "$OPT/bin/arbtable-cni" 0755
	w=$(mktemp)
	printf '#!/bin/sh\nLD_LIBRARY_PATH=/opt/arbtable/lib exec /opt/arbtable/bin/arbtable-cni "$@"\n' >"$w"
	put "$w" "$BIN/arbtable-cni" 0755
	rm -f "$w"
}

install_conflist() {
	local src out
	src=$(primary)
	if [ -z "$src" ]; then
		log "no network config in $NETD yet: nothing to chain after"
		return 0
	fi
	out=$(mktemp)
	if ! chain "$src" >"$out"; then
		rm -f "$out"
		log "cannot chain after $src"
		return 1
	fi
	put "$out" "$NETD/$OURS" 0644
	rm -f "$out"
}

case "${1:-}" in
--print)
	chain "$2"
	;;
--uninstall)
	# the config first: no pod may be set up with a plugin that is gone
	rm -f "$NETD/$OURS" "$BIN/arbtable-cni"
	rm -rf "$OPT"
	;;
"")
	install_plugin
	install_conflist
	;;
*)
	echo "usage: $0 [--uninstall | --print PRIMARY_CONF]" >&2
	exit 64
	;;
esac
