#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# arbtable-cni under a real container engine (issue 17, item 2): Debian's
# podman 4.3 with its CNI backend runs containers from a local rootfs (a
# few symlinks, /usr bound read-only from the host: no image, no
# registry) on a bridge network whose conflist chains arbtable-cni after
# bridge + host-local.  Podman hands its CNI_ARGS environment to the
# chain, which is how a container asks for its guarantee here
# (ARBTABLE_RATE=... ; Kubernetes uses pod annotations instead, test_cni).
# The containers' traffic is bridged, forwarded and masqueraded onto the
# virtio NIC (vm.sh -n), towards a receiver across the QEMU hub.
#
# Checks: a resident container's class; a container whose request cannot
# be guaranteed fails to start with the allocator's reason (once) in
# podman's error and leaves the table as it was; two reserved containers'
# TCP goodput >= 97 % of their rates beside a best-effort UDP flood
# container; the table returns to its earlier state when they stop;
# ARBT_PODMAN_CYCLES start/stop cycles (two engines at once) leave no
# class, filter, mark rule or state behind; the last container's stop
# leaves no tenant at all.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_net.sh"
. "$(dirname "$0")/lib_runtime.sh"
tap_begin "arbtable-cni under podman 4.3 (CNI backend): admission at container start, refusal in podman's error, release at stop, churn"
CYCLES=${ARBT_PODMAN_CYCLES:-20}
tmp=$(mktemp -d)
P=$tmp/podman
R=$P/rootfs
SD=$P/state
NFT_TABLE=arbt_podman
SUBNET=10.89.0.0/24
ip3_pids=
cleanup() {
	[ -n "$ip3_pids" ] && kill $ip3_pids 2>/dev/null
	podman rm -a -f -t 0 >/dev/null 2>&1
	nft delete table ip $NFT_TABLE 2>/dev/null
	ip link del arbt-br0 2>/dev/null
	net_teardown
	rm -rf "$tmp"
}
trap cleanup EXIT
have_arbtable || { tap_fail "podman: module and plugin present"; tap_end; exit; }
CNI_DIR=$ARBT_ROOT/build/cni
[ -x "$CNI_DIR/arbtable-cni" ] || { tap_fail "podman: $CNI_DIR/arbtable-cni built (make cni)"; tap_end; exit; }
command -v podman >/dev/null && [ -x /usr/lib/cni/bridge ] ||
	{ tap_fail "podman: podman and containernetworking-plugins installed (scripts/setup.sh)"; tap_end; exit; }
net_setup || { tap_fail "podman: egress NIC and receiver namespace"; tap_end; exit; }
diag "egress: $NET_KIND; $(podman --version)"
tc qdisc del dev "$NET" root 2>/dev/null

# Podman's state, storage (vfs: no overlay on the guest's host-backed
# filesystem) and network configs under $P, nothing of the host's
mkdir -p "$P/net" "$P/tmp" "$R"/{usr,etc,proc,sys,dev,tmp,run,var}
for l in bin lib lib64 sbin; do ln -s "usr/$l" "$R/$l"; done
cat >"$P/containers.conf" <<-EOF
	[network]
	network_backend = "cni"
	cni_plugin_dirs = ["/usr/lib/cni", "$CNI_DIR"]
	network_config_dir = "$P/net"
	[engine]
	cgroup_manager = "cgroupfs"
	events_logger = "file"
	runtime = "crun"
	tmp_dir = "$P/tmp"
EOF
cat >"$P/storage.conf" <<-EOF
	[storage]
	driver = "vfs"
	graphroot = "$P/root"
	runroot = "$P/run"
EOF
export CONTAINERS_CONF=$P/containers.conf CONTAINERS_STORAGE_CONF=$P/storage.conf
# the network: bridge + host-local, then arbtable-cni on the egress NIC;
# gold and silver below take all 64 HIGH slots of this 10mbit root
# (highlimit 1), so its system class is a LOW share instead of the
# default HIGH slot (arbtable-cni(8), SYSTEM CLASS)
tenants_conflist '"cniVersion": "1.0.0"' arbt-br0 >"$P/net/tenants.conflist"
masquerade

# prun NAME CNI_ARGS PODMAN-RUN-OPTIONS... -- CMD...: podman run in the
# tenants network from the rootfs; stderr in $tmp/NAME.err
prun() {
	local name=$1 args=$2 opts=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	CNI_ARGS=$args podman run --name "$name" "${opts[@]}" --network tenants \
		--rootfs -v /usr:/usr:ro "$R" "$@" 2>"$tmp/$name.err"
}
# ports_state: the mark filters on the bridge's ports (one per tenant)
ports_state() { bridge_marks arbt-br0; }
class_of() { # ID: the class of container ID, from the plugin's state file
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["class"]["handle"])' \
		"$SD/$1-eth0.json" 2>/dev/null || echo none
}

# ---- a resident tenant (share 2) whose class and filters stay through
# everything below
t0=$(date +%s)
prun res "ARBTABLE_SHARE=2" -d -- sleep 100000 >/dev/null
rc=$?
tap_check "podman run res (CNI_ARGS ARBTABLE_SHARE=2): exit 0 ($(($(date +%s) - t0)) s)" test "$rc" = 0
[ "$rc" = 0 ] || diag "$(cat "$tmp/res.err")"
res_ok() {
	tc class show dev "$NET" | grep -qE "share 2( |$)" &&
		[ "$(tc filter show dev "$NET" parent 1: | grep -c classid)" = 1 ] &&
		[ "$(ports_state | awk '{ s += $2 } END { print s }')" = 1 ] && return 0
	diag "$(tc class show dev "$NET"; tc filter show dev "$NET" parent 1:; ports_state)"
	return 1
}
tap_check "res: a class with share 2 on $NET, a fw filter, a mark filter on its bridge port" res_ok
before=$(table_state)
ports_before=$(ports_state)

# ---- refused: the allocator's reason in podman's error, nothing changed
prun big "ARBTABLE_RATE=20mbit" --rm -- true
rc=$?
err=$(grep -v 'level=warning' "$tmp/big.err")
diag "podman run big (rate 20mbit of 10mbit), exit $rc: $err"
refused_ok() { refused_once "$rc" "$err" :; }
tap_check "a container asking for 20mbit of 10mbit does not start: podman's error gives the allocator's reason, once" refused_ok
gone_ok() { ! podman container exists big && same_as_before; }
tap_check "the refused container is gone and the table, filters and state are as before" gone_ok

# ---- traffic: gold (3mbit, 30ms) and silver (2mbit) TCP beside a UDP flood
# (share 1), all masqueraded onto the NIC
for p in 5201 5202 5203; do
	ip netns exec $NET_RX iperf3 -s -1 -p $p >/dev/null 2>&1 &
	ip3_pids+=" $!"
done
sleep 1
# Podman takes seconds per container under TCG: the three wait for
# $tmp/go/start, so that they send at the same time
mkdir -p "$tmp/go"
gated() { echo 'while [ ! -e /go/start ]; do sleep 0.2; done; exec "$0" "$@"'; }
idf=$(prun flood "ARBTABLE_SHARE=1" -d -v "$tmp/go:/go" -- sh -c "$(gated)" \
	iperf3 -c $NET_RX_ADDR -p 5203 -u -b 20M -l 1400 -t 3600)
idg=$(prun gold "ARBTABLE_RATE=3mbit;ARBTABLE_LATENCY=30ms" -d -v "$tmp/go:/go" -- sh -c "$(gated)" \
	iperf3 -c $NET_RX_ADDR -p 5201 -P 4 -w 128K -t 12 -O 3 -J)
ids=$(prun silver "ARBTABLE_RATE=2mbit" -d -v "$tmp/go:/go" -- sh -c "$(gated)" \
	iperf3 -c $NET_RX_ADDR -p 5202 -P 4 -w 128K -t 12 -O 3 -J)
cg=$(class_of "$idg") cs=$(class_of "$ids") cf=$(class_of "$idf")
diag "classes: gold $cg, silver $cs, flood $cf"
admitted_ok() {
	tc class show dev "$NET" classid "$cg" | grep -qE "rate 3Mbit .*latency 30(\.0)?ms" &&
		tc class show dev "$NET" classid "$cs" | grep -qE "rate 2Mbit" &&
		tc class show dev "$NET" classid "$cf" | grep -qE "share 1( |$)"
}
admitted_check admitted_ok
start_traffic
podman wait gold silver >/dev/null
read -r f1 <<<"$(flood_bytes)"
podman logs gold >"$tmp/gold.json" 2>/dev/null
podman logs silver >"$tmp/silver.json" 2>/dev/null
podman rm -f -t 0 flood gold silver >/dev/null
kill $ip3_pids 2>/dev/null; wait $ip3_pids 2>/dev/null; ip3_pids=
goodput_checks "$tmp" ""
tap_check "gold, silver and flood stopped: the table, filters, mark filters and state are as before" same_as_before

# ---- churn: two engines start and stop containers at once, with
# reservations at two distances and shares
churn() { # ID N: N cycles; prints the failures
	local i req
	for ((i = 0; i < $2; i++)); do
		case $(((i + $1) % 3)) in
		0) req="ARBTABLE_RATE=1mbit;ARBTABLE_LATENCY=100ms" ;;
		1) req="ARBTABLE_RATE=500kbit;ARBTABLE_DISTANCE=8" ;;
		2) req="ARBTABLE_SHARE=3" ;;
		esac
		prun "churn$1-$i" "$req" --rm -- true || echo "churn$1-$i ($req): $(grep -v level=warning "$tmp/churn$1-$i.err" | head -n1)"
	done
}
t0=$(date +%s)
churn 0 $((CYCLES / 2)) >"$tmp/churn0" &
c0=$!
churn 1 $((CYCLES - CYCLES / 2)) >"$tmp/churn1"
wait $c0
el=$(($(date +%s) - t0))
nf=$(cat "$tmp/churn0" "$tmp/churn1" | wc -l)
[ "$nf" = 0 ] || diag "$(cat "$tmp/churn0" "$tmp/churn1" | head -n 5)"
tap_check "$CYCLES container start/stop cycles, two engines at once ($el s): all started" test "$nf" = 0
churn_ok() { [ -z "$(podman ps -a -q -f name=churn)" ] && same_as_before; }
tap_check "after the churn no container, class, fw filter, mark filter or state file is left: as before" churn_ok

podman rm -f -t 0 res >/dev/null
# the root's system class (its default, arbtable-cni(8)) stays with it
empty_ok() { no_tenant_left && [ -z "$(state_files)" ]; }
tap_check "the resident stopped: no tenant class (the system class 1:ff aside), fw filter or state file left" empty_ok
tap_end
