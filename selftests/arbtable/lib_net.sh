#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Real-traffic helpers (test_tcp_tenants.sh, scripts/demo.sh; veth_peer
# for test_gso.sh and test_child_drop.sh): tenant
# network namespaces routed through the root namespace out of one NIC,
# a receiver namespace on the other NIC running iperf3 servers.  Source
# after lib.sh.
#
#   tenant netns arbt-T (eth0 10.88.N.2/24) --veth-- vh-T (10.88.N.1) root
#   root: ip_forward, NET 10.77.0.1/24 --(QEMU hub or veth)-- PEER 10.77.0.2/24 in arbt-rx
#
# Every tenant's packets leave NET with its own source address, so a
# flower filter on src_ip names its class.  Neighbours are permanent on
# both sides, so that nothing but the tenants' traffic is measured (ARP
# would wait in the qdisc's unclassified queue, which takes every second
# LOW-side turn: test_unclassified.sh).

NET_RX=arbt-rx
NET_RX_ADDR=10.77.0.2

# veth_peer DEV PEER NS PREFIX: a TSO/GSO veth DEV (PREFIX.1/24) whose
# PEER (PREFIX.2) lives in a new namespace NS running an iperf3 server on
# port 5201 (test_gso.sh, test_child_drop.sh).  Neighbours are permanent
# both ways, so nothing but the test's traffic is sent and no ARP waits
# in the unclassified queue.  VETH_QUEUES=N: N transmit and receive
# queues each side (one without).  Teardown: veth_peer_del.
veth_peer() {
	local dev=$1 peer=$2 ns=$3 pfx=$4
	ip netns add "$ns" &&
		ip link add "$dev" ${VETH_QUEUES:+numtxqueues $VETH_QUEUES numrxqueues $VETH_QUEUES} \
			type veth peer name "$peer" &&
		ip link set "$peer" netns "$ns" || return 1
	sysctl -qw "net.ipv6.conf.$dev.disable_ipv6=1"
	ip addr add "$pfx.1/24" dev "$dev" &&
		ip link set "$dev" txqueuelen 1000 up &&
		ip -n "$ns" addr add "$pfx.2/24" dev "$peer" &&
		ip -n "$ns" link set "$peer" up &&
		ip -n "$ns" link set lo up || return 1
	ethtool -K "$dev" tso on gso on >/dev/null 2>&1
	ip neigh replace "$pfx.2" lladdr "$(ip -n "$ns" link show "$peer" | awk '/ether/ { print $2 }')" dev "$dev" nud permanent &&
		ip -n "$ns" neigh replace "$pfx.1" lladdr "$(ip link show "$dev" | awk '/ether/ { print $2 }')" dev "$peer" nud permanent &&
		ip netns exec "$ns" iperf3 -s -D -p 5201 >/dev/null 2>&1
}
# veth_peer_del DEV NS: every process in NS, the pair, the namespace
veth_peer_del() {
	ip netns pids "$2" 2>/dev/null | xargs -r kill 2>/dev/null
	ip link del "$1" 2>/dev/null
	ip netns del "$2" 2>/dev/null
}
# veth_test_begin NAME TITLE [CLEANUP]: tap_begin TITLE for a test over
# veth_peer $DEV $PEER $NS (the caller sets them): tmp, its directory; at
# exit CLEANUP (shell code), then veth_peer_del $DEV $NS and tmp removed;
# without the module and plugin the test ends there (a failed check
# named NAME)
veth_test_begin() {
	tap_begin "$2"
	tmp=$(mktemp -d)
	# shellcheck disable=SC2064 # CLEANUP now; DEV, NS and tmp at exit
	trap "${3:+$3; }veth_peer_del \$DEV \$NS; rm -rf \"\$tmp\"" EXIT
	if ! have_arbtable; then
		tap_fail "$1: sch_arbtable module and tc plugin present"
		tap_end; exit
	fi
}

# net_nics: the virtio-net devices of the guest (vm.sh -n gives two),
# but for those whose MAC is in ARBT_NET_SKIP_MAC (the Kubernetes node's
# NIC to the host, tests/kubernetes/cluster/node.sh)
net_nics() {
	local n d
	for n in /sys/class/net/*; do
		n=${n##*/}
		[ "$n" = lo ] && continue
		case " ${ARBT_NET_SKIP_MAC:-} " in
		*" $(cat "/sys/class/net/$n/address" 2>/dev/null) "*) continue ;;
		esac
		d=$(readlink -f "/sys/class/net/$n/device/driver" 2>/dev/null)
		[ "${d##*/}" = virtio_net ] && echo "$n"
	done
}

# net_setup: sets NET (egress device), PEER, NET_KIND.  Two virtio-net
# NICs on one QEMU hub when present; otherwise a veth pair (said so in
# NET_KIND: the traffic then crosses no NIC driver).  NET_QUEUES=N (N > 1)
# takes a veth pair of N transmit and receive queues instead: a NIC on
# QEMU's hub has one.
net_setup() {
	local nics nq=${NET_QUEUES:-1}
	nics=$(net_nics)
	[ "$nq" -gt 1 ] && nics=
	set -- $nics
	ip netns del $NET_RX 2>/dev/null
	if [ $# -ge 2 ]; then
		NET=$1 PEER=$2 NET_KIND="virtio-net ($1 -> $2 on one QEMU hub)"
	else
		ip link del arbt-n0 2>/dev/null
		ip link add arbt-n0 numtxqueues "$nq" numrxqueues "$nq" type veth peer name arbt-n1 numtxqueues "$nq" numrxqueues "$nq" || return 1
		NET=arbt-n0 PEER=arbt-n1 NET_KIND="veth pair (no two virtio-net NICs: boot with vm.sh -n for the real driver)"
		[ "$nq" -gt 1 ] && NET_KIND="veth pair of $nq queues each way"
	fi
	ip netns add $NET_RX || return 1
	ip link set "$PEER" netns $NET_RX || return 1
	sysctl -qw "net.ipv6.conf.$NET.disable_ipv6=1"
	ip netns exec $NET_RX sysctl -qw "net.ipv6.conf.$PEER.disable_ipv6=1"
	ip addr flush dev "$NET"
	ip addr add 10.77.0.1/24 dev "$NET" || return 1
	ip link set "$NET" txqueuelen 1000 up || return 1
	ip -n $NET_RX addr add $NET_RX_ADDR/24 dev "$PEER" || return 1
	ip -n $NET_RX link set "$PEER" up
	ip -n $NET_RX link set lo up
	ip -n $NET_RX route add 10.88.0.0/16 via 10.77.0.1 || return 1
	ip neigh replace $NET_RX_ADDR lladdr "$(ip -n $NET_RX -o link show "$PEER" | sed -E 's/.*link\/ether ([0-9a-f:]+).*/\1/')" dev "$NET" nud permanent || return 1
	ip -n $NET_RX neigh replace 10.77.0.1 lladdr "$(cat "/sys/class/net/$NET/address")" dev "$PEER" nud permanent || return 1
	sysctl -qw net.ipv4.ip_forward=1
	# TSO/GSO on (the default): the qdisc sees GSO super-packets
	ethtool -K "$NET" gso on >/dev/null 2>&1
	ethtool -K "$NET" tso on >/dev/null 2>&1
	true
}

# net_tenant NAME N: namespace arbt-NAME, source address 10.88.N.2
net_tenant() {
	local ns=arbt-$1 h=vh-$1 n=$2
	ip netns del "$ns" 2>/dev/null
	ip netns add "$ns" || return 1
	ip link add "$h" type veth peer name eth0 netns "$ns" || return 1
	sysctl -qw "net.ipv6.conf.$h.disable_ipv6=1"
	ip addr add "10.88.$n.1/24" dev "$h" && ip link set "$h" up || return 1
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip -n "$ns" addr add "10.88.$n.2/24" dev eth0 && ip -n "$ns" link set eth0 up &&
		ip -n "$ns" link set lo up && ip -n "$ns" route add default via "10.88.$n.1" || return 1
	# no ARP on the tenant link either: a reserved tenant's arrivals on
	# vh-NAME are then exactly the packets its class gets
	ip -n "$ns" neigh replace "10.88.$n.1" lladdr "$(cat "/sys/class/net/$h/address")" dev eth0 nud permanent &&
		ip neigh replace "10.88.$n.2" lladdr "$(ip -n "$ns" -o link show eth0 | sed -E 's/.*link\/ether ([0-9a-f:]+).*/\1/')" dev "$h" nud permanent
}

# net_teardown NAME...: tenants, the receiver (its NIC returns to the
# root namespace), the veth fallback, the root qdisc and NET's address
# (its 10.77.0.0/24 route would otherwise outlive the test and take
# later tests' traffic to that prefix)
net_teardown() {
	local t
	for t in "$@"; do ip netns del "arbt-$t" 2>/dev/null; ip link del "vh-$t" 2>/dev/null; done
	ip netns del $NET_RX 2>/dev/null
	ip link del arbt-n0 2>/dev/null
	if [ -n "${NET:-}" ]; then
		tc qdisc del dev "$NET" root 2>/dev/null
		ip addr flush dev "$NET" 2>/dev/null
	fi
	true
}

# net_offloads DEV: "gso on tso off" as ethtool -k reports them
net_offloads() {
	ethtool -k "$1" 2>/dev/null | awk '
		$1 == "generic-segmentation-offload:" { g = $2 }
		$1 == "tcp-segmentation-offload:" { t = $2 }
		END { printf "gso %s tso %s", g ? g : "?", t ? t : "?" }'
}

# ip3_sum FILE KEY FORMAT: KEY of an iperf3 JSON's end sum (the
# receiver's of a TCP test, the sender's of UDP) in printf FORMAT; 0 when
# there is none
ip3_sum() {
	python3 -c 'import json,sys
try:
    d = json.load(open(sys.argv[1])); e = d["end"]
    s = e.get("sum_received") or e.get("sum") or {}
    print(sys.argv[3] % s.get(sys.argv[2], 0))
except Exception:
    print(0)' "$1" "$2" "$3" 2>/dev/null || echo 0
}
# iperf3 JSON: receiver goodput (bit/s) of a TCP test, sender rate of UDP
ip3_rx_bps() { ip3_sum "$1" bits_per_second %.0f; }
# ... and the seconds it measured
ip3_rx_secs() { ip3_sum "$1" seconds %.2f; }
ip3_error() {
	python3 -c 'import json,sys
try:
    print(json.load(open(sys.argv[1])).get("error", ""))
except Exception as x:
    print("no JSON: %s" % x)' "$1" 2>/dev/null
}

# trace_analyze FILE MINORS PAIR: the trace of the whole run (from before the
# first packet to after the drain), with markers WSTART/WEND around the
# measured window.  Per reserved class (MINORS "10 20"), its queue in
# bytes is followed exactly: packets enter by arbtable_enqueue (one per
# segment of a GSO skb the qdisc split, after the child took it, under the
# qdisc lock) and leave by arbtable_dequeue.  The head-of-line wait of
# each packet in bytes: if the class still held bytes after its previous
# service j, all bytes dequeued since j began (j's own packet occupied
# the link too); if it had gone empty, all bytes dequeued since the
# enqueue that made it backlogged again.  A lockless qdisc's enqueue
# event fires on the sending CPU after the ring took the packet, so the
# dequeuer may serve it first: such a dequeue finds the class's queue
# empty with no arrival; its wait is not known from the trace (counted as
# unmeasured), and the late event settles the debt instead of making the
# class backlogged (the locked mode has none: its events are ordered by
# the qdisc lock).  Output per class
#   id services max_wait_B wait_time_ns_of_longest bytes_of_longest empties final_queue_B win_bytes win_bytes_while_backlogged kernel_wait_ns_max bytes_of_kernel_max unmeasured
# where the last two come from the dequeue events' wait= (the wait the
# kernel measured for that packet; its max_hol_wait is the largest): the
# largest, and the bytes other classes sent in that very wait (-1: none).
# and "B id bytes" (window), "SPAN ns" (window), "TOT bytes" (window),
# "LOST n", "MAXLEN n", "EVENTS n" (whole run), and for the two classes
# of PAIR ("30 40") "BOTH b1 b2": the bytes each sent in the window while
# both held packets; "ALIGNED b1 b2": the same counted only from the
# first to the last service of the second class inside each stretch in
# which both stayed backlogged (whole rounds); "STRETCHES" a histogram of
# those stretches by size, "<4K:count/b1/b2 ...".  The trace needs
# arbtable_enqueue for the classes of MINORS and PAIR and arbtable_dequeue
# for all.
trace_analyze() {
	awk -v minors="$2" -v pair="$3" '
	# a stretch: both of PAIR held packets from one dequeue to the next
	function stretch_end(  t, i) {
		t = st[P1] + st[P2]
		if (t > 0) {
			for (i = 0; i < 4 && t >= bl[i + 2]; i++);
			hn[i]++; hb1[i] += st[P1]; hb2[i] += st[P2]
		}
		# from the first to the last service of P2 in the stretch
		if (P2 in a0) { al[P1] += a1[P1] - a0[P1]; al[P2] += a1[P2] - a0[P2] }
		delete a0; delete a1; st[P1] = 0; st[P2] = 0
	}
	BEGIN { n = split(minors, mm, " "); for (i = 1; i <= n; i++) resv["1:" mm[i]] = 1
		split(pair, pp, " "); P1 = "1:" pp[1]; P2 = "1:" pp[2]; inpair[P1] = 1; inpair[P2] = 1
		split("0 4096 16384 65536 262144", bl, " "); split("<4K <16K <64K <256K >=256K", bn0, " ")
		for (i = 0; i < 5; i++) bn[i] = bn0[i + 1] }
	/^# entries-in-buffer\/entries-written:/ { split($3, e, "/"); print "LOST", e[2] - e[1]; next }
	/^#/ { next }
	{ t = $0; if (!sub(/: [a-z_]+: .*/, "", t)) next; k = split(t, f, " "); ts = f[k] * 1e9 }
	/tracing_mark_write: WSTART/ { inw = 1; ws = ts; next }
	/tracing_mark_write: WEND/ { inw = 0; we = ts; stretch_end(); next }
	/arbtable_enqueue:/ {
		c = $0; sub(/.* class=/, "", c); sub(/ .*/, "", c)
		if (!(c in resv) && !(c in inpair)) next
		l = $0; sub(/.* len=/, "", l); l += 0
		if ((c in resv) && q[c] <= 0 && q[c] + l > 0 && !(c in arr)) { arr[c] = tot; at[c] = ts }
		q[c] += l
		next
	}
	/arbtable_dequeue:/ {
		c = $0; sub(/.* class=/, "", c); sub(/ .*/, "", c)
		l = $0; sub(/.* len=/, "", l); l += 0
		ne++
		if (l > maxlen) maxlen = l
		if (inw) { wt += l; wb[c] += l; for (r in resv) if (q[r] > 0) wbk[r] += l
			if ((c in inpair) && q[P1] > 0 && q[P2] > 0) { both[c] += l; st[c] += l
				if (c == P2) { if (!(P2 in a0)) { a0[P1] = st[P1]; a0[P2] = st[P2] } a1[P1] = st[P1]; a1[P2] = st[P2] } } }
		if (c in inpair) { q[c] -= l; if (q[P1] <= 0 || q[P2] <= 0) stretch_end() }
		if (c in resv) {
			w = -1
			if (c in arr) { w = tot - arr[c]; wt0 = at[c]; emp[c]++; delete arr[c] }
			else if ((c in seen) && q[c] > 0) { w = tot - mark[c] + pl[c]; wt0 = lt[c] }
			else if (c in seen) nm[c]++
			if (w > mw[c]) mw[c] = w
			kw = $0
			if (sub(/.* wait=/, "", kw) && kw + 0 > km[c]) { km[c] = kw + 0; kmb[c] = w }
			if (w >= 0 && ts - wt0 > mt[c]) { mt[c] = ts - wt0; mtb[c] = w }
			if (w >= 0) svc[c]++
			q[c] -= l; seen[c] = 1; lt[c] = ts
		}
		tot += l; mark[c] = tot; pl[c] = l
	}
	END {
		hist = ""
		for (i = 0; i < 5; i++) hist = hist sprintf(" %s:%d/%d/%d", bn[i], hn[i], hb1[i], hb2[i])
		printf "STRETCHES%s\n", hist
		printf "ALIGNED %d %d\n", al[P1], al[P2]
		for (c in resv) printf "%s %d %d %.0f %d %d %d %d %d %.0f %d %d\n", c, svc[c], mw[c], mt[c], mtb[c], emp[c], q[c], wb[c], wbk[c], km[c], (c in kmb ? kmb[c] : -1), nm[c]
		for (c in wb) printf "B %s %d\n", c, wb[c]
		printf "BOTH %d %d\n", both[P1], both[P2]
		printf "SPAN %.0f\nTOT %d\nMAXLEN %d\nEVENTS %d\n", we - ws, wt, maxlen, ne
	}' "$1"
}
