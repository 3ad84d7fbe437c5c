#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# arbtable-install-cni.sh - put arbtable-cni on the node and chain it after
# the node's own network where, and only where, it can work: run by the
# DaemonSet's init container, and again by the node agent every period
# (idempotent: files change only when their content would).
#
#   1. the plugin and the libraries it links (libarbtable, libnl, json-c,
#      as the image has them) into $HOST_PREFIX/opt/arbtable, and a
#      two-line wrapper $HOST_PREFIX/opt/cni/bin/arbtable-cni that runs it
#      with that library path (the runtime executes plugins in the host's
#      mount namespace, where those libraries may be missing).  Installed
#      on every node: a pod set up while the chain was in place is torn
#      down with the chain the runtime cached, so the plugin must stay for
#      its DEL whatever happens to the chain.
#   2. $HOST_PREFIX/etc/cni/net.d/00-arbtable.conflist: the first other
#      config in that directory (the node's primary network, by the name
#      order containerd and CRI-O use to pick one) with arbtable-cni
#      appended to its plugin list, its cniVersion and cniVersions as they
#      are (a version rewritten down would turn off GC and STATUS for all
#      of its plugins).  "00-" sorts first, so the runtime uses the chained
#      copy; the network keeps its name, so IPAM state (host-local leases)
#      and running pods are unaffected.  Written only when
#        - sch_arbtable is loaded ($ARBTABLE_SYSFS/module/sch_arbtable;
#          the agent's first root creation loads an installed module),
#        - the plugin speaks the primary's cniVersion (and the highest of
#          its cniVersions, which a libcni >= 1.2 picks), and
#        - when the plugin speaks CNI 1.1.0, its STATUS answers 0 for the
#          entry;
#      removed otherwise, and when the primary config is gone: a node
#      without the module never gets the chain, and no stale chain
#      outlives the network it copies.
#
# Environment (the ConfigMap, parsed by arbt_config in
# arbtable-resources.sh): ARBTABLE_DEVICE (or "auto": the device of the
# default route), ARBTABLE_QDISC (KEY VALUE pairs for the root the plugin
# may create; empty: sized to the link speed), ARBTABLE_SYSTEM_CLASS (KEY
# VALUE pairs for that root's system class; empty: the plugin's default),
# ARBTABLE_DEFAULT_SHARE, ARBTABLE_MARK_MASK, ARBTABLE_MINOR_BASE;
# HOST_PREFIX (default /host), ARBTABLE_SYSFS (default /sys).
#
#   arbtable-install-cni.sh              install, chain or unchain
#   arbtable-install-cni.sh --unchain    remove the conflist only (the
#                                        agent's SIGTERM: pods chained
#                                        before keep a plugin for DEL)
#   arbtable-install-cni.sh --uninstall  remove the conflist, then the plugin
#   arbtable-install-cni.sh --print PRIMARY_CONF   the chained conflist on
#                                        stdout (for tests)
#
# Exit status: 0 done (chained or deliberately not), 1 failed, 2 a
# ConfigMap value refused.
set -eu

here=$(dirname "$0")
# shellcheck source-path=SCRIPTDIR source=arbtable-resources.sh
. "$here/arbtable-resources.sh"

arbt_paths
SYSFS=${ARBTABLE_SYSFS:-/sys}
BIN=$HOST_PREFIX/opt/cni/bin
OPT=$HOST_PREFIX/opt/arbtable

log() { echo "arbtable-install-cni: $*" >&2; }

# The plugin's entry in the chain (arbt_plugin_entry: the agent makes
# the root from the same entry)
plugin_json() {
	local dev
	dev=$(arbt_device)
	[ -n "$dev" ] || { log "no device (set ARBTABLE_DEVICE)"; return 1; }
	arbt_plugin_entry "$dev"
}

# PRIMARY (a .conf of one plugin or a .conflist) + our entry, last; an
# arbtable-cni entry it already has is replaced, not doubled.  cniVersion
# and cniVersions are kept as they are.
chain() {
	local p
	p=$(plugin_json) || return 1
	jq --argjson p "$p" '
		(if has("plugins") then .
		 else {cniVersion: .cniVersion, name: .name,
		       plugins: [del(.cniVersion, .name)]} end) |
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

unchain() {
	[ -e "$NETD/$OURS" ] || return 0
	rm -f "$NETD/$OURS"
	log "removed $NETD/$OURS: $1"
}

install_plugin() {
	local f w
	mkdir -p "$OPT/bin" "$OPT/lib" "$BIN"
	for f in "$BUNDLE"/lib/*; do
		[ -e "$f" ] || continue
		put "$f" "$OPT/lib/${f##*/}" 0644
	done
	put "$BUNDLE/bin/arbtable-cni" "$OPT/bin/arbtable-cni" 0755
	w=$(mktemp)
	printf '#!/bin/sh\nLD_LIBRARY_PATH=/opt/arbtable/lib exec /opt/arbtable/bin/arbtable-cni "$@"\n' >"$w"
	put "$w" "$BIN/arbtable-cni" 0755
	rm -f "$w"
}

# the versions the plugin speaks, one JSON array
plugin_versions() {
	env -i CNI_COMMAND=VERSION "$BUNDLE/bin/arbtable-cni" \
		<<<'{"cniVersion":"1.0.0"}' 2>/dev/null |
		jq -ce '.supportedVersions | arrays'
}

# spoken CHAINED_FILE VERSIONS: "" when the plugin speaks the versions
# the runtime may use with the list, else why not
spoken() {
	jq -r --argjson s "$2" '
		[.cniVersion] + (if (.cniVersions | type) == "array" and
				      (.cniVersions | length) > 0
				 then [.cniVersions |
				       max_by(split(".") | map(tonumber? // 0))]
				 else [] end) |
		map(select(. as $v | $s | index($v) | not)) | unique |
		if length == 0 then ""
		else "cniVersion \(join(", ")), which arbtable-cni does not speak (it speaks \($s | join(", ")))"
		end' "$1"
}

# status CHAINED_FILE: "" when the plugin's STATUS accepts its entry at
# CNI 1.1.0, else its answer
status() {
	local out
	out=$(jq -c '.plugins[-1] + {cniVersion: "1.1.0", name}' "$1" |
	      env -i CNI_COMMAND=STATUS CNI_PATH=/opt/cni/bin \
		      "$BUNDLE/bin/arbtable-cni" 2>/dev/null) && return 0
	jq -r '"STATUS code \(.code): \(.msg)"' <<<"$out" 2>/dev/null ||
		echo "STATUS failed: $out"
}

install_conflist() {
	local src out vers why
	src=$(primary)
	if [ -z "$src" ]; then
		unchain "no primary network config in $NETD"
		log "no network config in $NETD yet: nothing to chain after"
		return 0
	fi
	if [ ! -d "$SYSFS/module/sch_arbtable" ]; then
		unchain "sch_arbtable is not loaded"
		log "sch_arbtable is not loaded on this node: not chained"
		return 0
	fi
	out=$(mktemp)
	if ! chain "$src" >"$out"; then
		rm -f "$out"
		unchain "cannot read $src"
		log "cannot chain after $src"
		return 1
	fi
	if ! vers=$(plugin_versions); then
		rm -f "$out"
		unchain "the plugin does not answer VERSION"
		log "$BUNDLE/bin/arbtable-cni does not answer VERSION: not chained"
		return 1
	fi
	why=$(spoken "$out" "$vers")
	if [ -z "$why" ] && jq -e 'index("1.1.0")' <<<"$vers" >/dev/null; then
		why=$(status "$out")
	fi
	if [ -n "$why" ]; then
		rm -f "$out"
		unchain "$why"
		log "not chained after ${src##*/}: $why"
		return 0
	fi
	put "$out" "$NETD/$OURS" 0644
	rm -f "$out"
}

case "${1:-}" in
--unchain)
	unchain "unchain asked"
	exit 0
	;;
--uninstall)
	# the config first: no pod may be set up with a plugin that is gone
	rm -f "$NETD/$OURS" "$BIN/arbtable-cni"
	rm -rf "$OPT"
	exit 0
	;;
--print | "")
	;;
*)
	echo "usage: $0 [--unchain | --uninstall | --print PRIMARY_CONF]" >&2
	exit 64
	;;
esac
arbt_config || { log "ConfigMap refused (above)"; exit 2; }
if [ "${1:-}" = --print ]; then
	chain "$2"
	exit
fi
install_plugin
install_conflist
