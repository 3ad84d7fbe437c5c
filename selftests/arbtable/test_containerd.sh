#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# arbtable-cni under containerd 2.1 (issue 28, "Real runtimes in the
# tests"): Debian sid's containerd and containernetworking-plugins 1.9
# (libcni 1.3), unpacked by scripts/runtimes-setup.sh under
# /var/lib/arbtable/containerd-2, never installed on the host.  In the
# guest the test starts its own containerd (root, state and socket in a
# temporary directory), imports a local image (busybox + iperf3, built by
# runtimes-setup.sh, no registry) with `ctr images import` and runs
# containers with `ctr run --cni` on a bridge conflist at cniVersion
# 1.1.0 with cniVersions, arbtable-cni chained after bridge + host-local
# on the egress NIC (vm.sh -n), masqueraded towards a receiver across
# the QEMU hub.
#
# ctr's --cni reads /etc/cni/net.d and /opt/cni/bin and caches in
# /var/lib/cni (go-cni's defaults, no flag moves them): the test runs in
# its own mount namespace with those on tmpfs, so nothing of the host's
# (read-only in the guest anyway) is seen or touched.  ctr passes no
# CNI_ARGS, so a container asks for its guarantee through the plugin's
# "args" in the conflist ({"cni": {"arbtable": {...}}}), written before
# each `ctr run`: how a runtime without annotations passes static args.
#
# Checks: a resident container's class; a container whose request cannot
# be guaranteed fails to start with the allocator's reason (once) in
# ctr's error and leaves the table as it was once removed; two reserved
# containers' TCP goodput >= 97 % of their rates beside a best-effort UDP
# flood; removal (ctr task rm) releases; ARBT_CONTAINERD_CYCLES
# start/stop cycles leave no class, filter, mark filter, state file,
# bridge port, IP lease or container behind.
if [ -z "${ARBT_CTD_NS:-}" ]; then
	ARBT_CTD_NS=1 exec unshare --mount --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_net.sh"
. "$(dirname "$0")/lib_runtime.sh"
tap_begin "arbtable-cni under containerd 2.1 (ctr run --cni, conflist ${ARBT_CTD_CNIVERSION:-1.1.0}): admission, refusal in ctr's error, release at removal, start/stop cycles"
# 50 cycles take about 20 minutes under TCG: make test runs 3
# (scripts/test.sh), make check-full the 50, with a longer timeout
CYCLES=${ARBT_CONTAINERD_CYCLES:-50}
RT=${ARBT_RUNTIMES:-/var/lib/arbtable/containerd-2}
CNI_DIR=$ARBT_ROOT/build/cni
tmp=$(mktemp -d)
C=$tmp/ctd
SD=$tmp/state
NFT_TABLE=arbt_ctd
SUBNET=10.90.0.0/24
BR=arbt-ctd0
ctd_pid=
ip3_pids=()
cleanup() {
	[ ${#ip3_pids[@]} -gt 0 ] && kill "${ip3_pids[@]}" 2>/dev/null
	if [ -n "$ctd_pid" ]; then
		local c
		for c in $(ctr_ c ls -q 2>/dev/null); do ctr_ task rm -f "$c" >/dev/null 2>&1; ctr_ c rm "$c" >/dev/null 2>&1; done
		kill "$ctd_pid" 2>/dev/null
		wait "$ctd_pid" 2>/dev/null
	fi
	nft delete table ip $NFT_TABLE 2>/dev/null
	ip link del $BR 2>/dev/null
	# shellcheck disable=SC2119
	net_teardown
	# $tmp/keep is /var/lib/arbtable bound: unmounted before the rm
	umount "$tmp/keep" 2>/dev/null
	rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT
have_arbtable || { tap_fail "containerd: module and plugin present"; tap_end; exit; }
[ -x "$CNI_DIR/arbtable-cni" ] || { tap_fail "containerd: $CNI_DIR/arbtable-cni built (make cni)"; tap_end; exit; }
if ! [ -x "$RT/root/usr/bin/containerd" ] || ! [ -x "$RT/root/usr/lib/cni/bridge" ] ||
	! [ -f "$RT/image/tenant.oci.tar" ] || ! command -v runc >/dev/null; then
	tap_fail "containerd: containerd 2.1, plugins 1.9, the image under $RT and runc (scripts/setup.sh)"
	tap_end
	exit
fi
net_setup || { tap_fail "containerd: egress NIC and receiver namespace"; tap_end; exit; }
tc qdisc del dev "$NET" root 2>/dev/null

# ---- go-cni's fixed directories, private to this mount namespace
private_dirs() {
	mount -t tmpfs arbt-cni-conf /etc/cni/net.d &&
		mount -t tmpfs arbt-opt /opt && mkdir -p /opt/cni/bin &&
		mkdir -p "$tmp/keep" && mount --bind /var/lib/arbtable "$tmp/keep" &&
		mount -t tmpfs arbt-varlib /var/lib && mkdir -p /var/lib/arbtable /var/lib/cni &&
		mount --bind "$tmp/keep" /var/lib/arbtable
}
if ! private_dirs; then
	tap_fail "containerd: tmpfs over /etc/cni/net.d, /opt and /var/lib in a private mount namespace"
	tap_end
	exit
fi
for p in bridge host-local loopback; do ln -s "$RT/root/usr/lib/cni/$p" /opt/cni/bin/$p; done
ln -s "$CNI_DIR/arbtable-cni" /opt/cni/bin/arbtable-cni

# ---- containerd: its own root, state, socket; no CRI (ctr is the client)
mkdir -p "$C"/{root,state} "$SD" "$tmp/go"
cat >"$C/config.toml" <<-EOF
	version = 3
	root = "$C/root"
	state = "$C/state"
	disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.cri.v1.runtime", "io.containerd.cri.v1.images", "io.containerd.nri.v1.nri"]
	[grpc]
	  address = "$C/sock"
	[ttrpc]
	  address = "$C/sock.ttrpc"
	# images are unpacked for the native snapshotter (below)
	[[plugins."io.containerd.transfer.v1.local".unpack_config]]
	  platform = "linux/amd64"
	  snapshotter = "native"
EOF
export PATH=$RT/root/usr/bin:$PATH
# the native snapshotter (copies): overlayfs on the guest's /tmp was
# refused (mount: invalid argument, 6.1 guest)
export CONTAINERD_SNAPSHOTTER=native
ctr_() { ctr --address "$C/sock" "$@"; }
containerd --config "$C/config.toml" >"$C/log" 2>&1 &
ctd_pid=$!
up=
for _ in $(seq 100); do
	ctr_ version >/dev/null 2>&1 && { up=1; break; }
	sleep 0.3
done
if [ -z "$up" ]; then
	diag "$(tail -n 20 "$C/log")"
	tap_fail "containerd 2.1 starts with its own root, state and socket"
	tap_end
	exit
fi
diag "egress: $NET_KIND; $(ctr_ version | tr -s ' \n' ' ')"
tap_check "containerd's version is 2.1 (Debian sid's, unpacked)" \
	bash -c "ctr --address '$C/sock' version | grep -A2 '^Server' | grep -qE 'Version: +v?2\.1\.'"

IMAGE=$(cat "$RT/image/name")
run ctr_ images import "$RT/image/tenant.oci.tar"
[ "$RUN_RC" = 0 ] || diag "$RUN_OUT $RUN_ERR"
tap_check "ctr images import of the local image (no registry): $IMAGE listed" \
	bash -c "ctr --address '$C/sock' images ls -q | grep -qxF '$IMAGE'"

# the network's version: 1.1.0 by way of cniVersions (libcni takes the
# highest it knows); ARBT_CTD_CNIVERSION=1.0.0 runs it at 1.0.0
CNIV=${ARBT_CTD_CNIVERSION:-1.1.0}
if [ "$CNIV" = 1.1.0 ]; then
	VERSIONS='"cniVersion": "1.1.0", "cniVersions": ["1.0.0", "1.1.0"]'
else
	VERSIONS="\"cniVersion\": \"$CNIV\""
fi
# conflist ARGS-JSON: the tenants network, arbtable-cni's args set to
# the container's request ({} for none)
conflist() {
	tenants_conflist "$VERSIONS" "$BR" "\"args\": { \"cni\": { \"arbtable\": $1 } }" \
		>/etc/cni/net.d/10-tenants.conflist
}
masquerade

# crun NAME REQUEST-JSON CTR-RUN-OPTIONS... -- CMD...: ctr run --cni
# from the image; stderr in $tmp/NAME.err
crun() {
	local name=$1 opts=()
	conflist "$2"
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	ctr_ run --cni --null-io "${opts[@]}" "$IMAGE" "$name" "$@" 2>"$tmp/$name.err"
}
# cstop NAME: removing a container with ctr: `ctr task kill` is where
# ctr runs the CNI DEL (`task rm -f` alone does not), then the task is
# deleted (forced: it may not have died yet) and the container.  Every
# ctr call is a Go program starting under TCG: as few as possible.
cstop() {
	{
		ctr_ task kill -s SIGKILL "$1"
		ctr_ task rm -f "$1"
		ctr_ c rm "$1"
	} >/dev/null 2>>"$tmp/$1.err"
}
# the bridge's ports, their mark filters, host-local's leases
ports_state() {
	local v
	bridge_marks "$BR"
	for v in /var/lib/cni/networks/tenants/*; do
		[ -e "$v" ] || continue
		case ${v##*/} in lock | last_reserved_ip.*) ;; *) echo "lease ${v##*/}" ;; esac
	done
}
# class_with PATTERN: the id of the one tenant class whose line matches
# (not the root's system class 1:ff, whose share 1 the flood's matches)
class_with() {
	tc class show dev "$NET" | awk -v re="$1" '$1 == "class" && $2 == "arbtable" && $3 != "1:ff" && $0 ~ re { print $3 }'
}

# ---- a resident container (share 2)
t0=$(date +%s)
crun res '{"share": 2}' -d -- sleep 100000
rc=$?
[ "$rc" = 0 ] || diag "$(cat "$tmp/res.err")"
tap_check "ctr run --cni -d res (share 2): exit 0 ($(($(date +%s) - t0)) s)" test "$rc" = 0
res_ok() {
	[ -n "$(class_with 'share 2( |$)')" ] &&
		[ "$(tc filter show dev "$NET" parent 1: | grep -c classid)" = 1 ] &&
		[ "$(ports_state | awk '$1 != "lease" { s += $2 } END { print s + 0 }')" = 1 ] && return 0
	diag "$(tc class show dev "$NET"; tc filter show dev "$NET" parent 1:; ports_state; cat "$tmp/res.err")"
	return 1
}
tap_check "res: a class with share 2 on $NET, a fw filter, a mark filter on its bridge port" res_ok
# the chain's cached result says which version libcni settled on
ver=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"]["cniVersion"])' \
	/var/lib/cni/results/tenants-default-res-eth0 2>/dev/null)
tap_check "containerd's libcni ran the chain at $CNIV (cached result: ${ver:-none})" test "$ver" = "$CNIV"
before=$(table_state)
ports_before=$(ports_state)

# ---- refused: the allocator's reason in ctr's error
crun big '{"rate": "20mbit"}' -d -- true
rc=$?
err=$(cat "$tmp/big.err")
diag "ctr run big (rate 20mbit of 10mbit), exit $rc: $err"
refused_ok() { refused_once "$rc" "$err" '[:;]'; }
tap_check "a container asking for 20mbit of 10mbit does not start: ctr's error gives the allocator's reason, once" refused_ok
ran_ok() { ! ctr_ task ls | awk '$1 == "big" { print $3 }' | grep -q RUNNING; }
tap_check "the refused container's task is not running" ran_ok
cstop big
gone_ok() {
	! ctr_ c ls -q | grep -qx big && same_as_before && return 0
	diag "ctr's errors while removing big: $(tail -n +2 "$tmp/big.err")"
	return 1
}
tap_check "the refused container removed (ctr task rm, c rm): table, filters, state, ports and leases as before" gone_ok

# ---- traffic: gold (3mbit, 30ms) and silver (2mbit) TCP beside a UDP
# flood (share 1), all masqueraded onto the NIC; the three wait for
# /go/start so that they send at the same time
for p in 5201 5202 5203; do
	ip netns exec "$NET_RX" iperf3 -s -1 -p $p >/dev/null 2>&1 &
	ip3_pids+=("$!")
done
sleep 1
gate='while [ ! -e /go/start ]; do sleep 0.2; done'
mnt=(--mount "type=bind,src=$tmp/go,dst=/go,options=rbind:rw")
crun flood '{"share": 1}' -d "${mnt[@]}" -- sh -c \
	"$gate; iperf3 -c $NET_RX_ADDR -p 5203 -u -b 20M -l 1400 -t 3600 >/dev/null 2>&1"
crun gold '{"rate": "3mbit", "latency": "30ms"}' -d "${mnt[@]}" -- sh -c \
	"$gate; iperf3 -c $NET_RX_ADDR -p 5201 -P 4 -w 128K -t 12 -O 3 -J >/go/gold.json 2>&1; echo \$? >/go/gold.rc"
crun silver '{"rate": "2mbit"}' -d "${mnt[@]}" -- sh -c \
	"$gate; iperf3 -c $NET_RX_ADDR -p 5202 -P 4 -w 128K -t 12 -O 3 -J >/go/silver.json 2>&1; echo \$? >/go/silver.rc"
cg=$(class_with 'rate 3Mbit') cs=$(class_with 'rate 2Mbit') cf=$(class_with 'share 1( |$)')
diag "classes: gold ${cg:-none}, silver ${cs:-none}, flood ${cf:-none}"
admitted_ok() {
	[ -n "$cg" ] && [ -n "$cs" ] && [ -n "$cf" ] &&
		tc class show dev "$NET" classid "$cg" | grep -qE "latency 30(\.0)?ms"
}
admitted_check admitted_ok
start_traffic
for _ in $(seq 300); do
	[ -f "$tmp/go/gold.rc" ] && [ -f "$tmp/go/silver.rc" ] && break
	sleep 0.2
done
read -r f1 <<<"$(flood_bytes)"
for c in flood gold silver; do cstop $c; done
kill "${ip3_pids[@]}" 2>/dev/null; wait "${ip3_pids[@]}" 2>/dev/null; ip3_pids=()
goodput_checks "$tmp/go" " under containerd"
tap_check "gold, silver and flood removed: the table, filters, state, ports and leases are as before" same_as_before

# ---- cycles: start/stop, ctr run --rm (ctr's own DEL when the task
# exits), every third one run -d and removed; reservations at two
# distances and a share
t0=$(date +%s)
nf=0
for ((i = 0; i < CYCLES; i++)); do
	case $((i % 3)) in
	0) req='{"rate": "1mbit", "latency": "100ms"}' ;;
	1) req='{"rate": "500kbit", "distance": 8}' ;;
	2) req='{"share": 3}' ;;
	esac
	if ((i % 3 != 2)); then
		crun "cy$i" "$req" --rm -- true
	else
		crun "cy$i" "$req" -d -- sleep 1000 && cstop "cy$i"
	fi || { nf=$((nf + 1)); diag "cycle $i ($req): $(head -n 2 "$tmp/cy$i.err")"; }
done
el=$(($(date +%s) - t0))
tap_check "$CYCLES container start/stop cycles ($el s): all started" test "$nf" = 0
cycles_ok() { ! ctr_ c ls -q | grep -q '^cy' && same_as_before; }
tap_check "after the cycles no container, class, fw filter, mark filter, state file, bridge port or lease is left: as before" cycles_ok

cstop res
# the root's system class (LOW share 1, minor ff) stays with the root
empty_ok() {
	no_tenant_left && [ -z "$(state_files)" ] && [ -z "$(ports_state)" ] && return 0
	diag "$(table_state; ports_state)"
	return 1
}
tap_check "the resident removed: no tenant class (the system class 1:ff stays), fw filter, state file or bridge port left" empty_ok
tap_end
