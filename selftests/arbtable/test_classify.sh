#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Classification the way operators classify, each path with real UDP
# traffic (a python3 sender) through the qdisc on a dummy device: every
# case counts what it sent and asserts that exactly those packets and
# bytes landed in the expected class (or the unclassified queue) and
# nowhere else, and that the qdisc sent nothing more (counts, no rates).
#
#   flower src_ip       tenants in network namespaces, forwarded by the host
#   flower ip_tos       DSCP EF (with an ECN bit, matched under the mask)
#   u32                 ip dport
#   fw                  on a mark set by nftables (postrouting)
#   bpf da              a clang-built classifier: class from skb->mark
#   skb->priority       SO_PRIORITY naming 1:10 beats the filters
#   priomap             SO_PRIORITY band 3 -> 1:70; a filter beats it
#   unclassified        no match, no default: counted in the qdisc xstats
#   default             the same traffic after 'default 80'
#   lifecycle           class del refused while a filter targets the class
#                       (the kernel's extack, as tc prints it), also for a
#                       filter that named the class before it existed;
#                       filter replace under traffic moves it to the new
#                       class; deleting the filter frees the class
#   cached classes      the priomap's and default's class deleted, added again
# and at the end: qdisc drained, per-class packets + deleted classes +
# unclassified add up to the qdisc's Sent packets and bytes, no splat.
# ARBT_CLASSIFY_TIMES=1 adds the time each case took as diagnostics.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_debug.sh"
tap_begin "classification: flower, u32, fw (nftables), bpf, skb->priority, priomap, default, unclassified, filter lifecycle"
tmp=$(mktemp -d)
NS1=arbt_t1
NS2=arbt_t2
NFT_TABLE=arbt_classify
fwd_old=$(cat /proc/sys/net/ipv4/ip_forward 2>/dev/null || echo 0)
cleanup() {
	touch "$tmp/stop"
	senders_stop
	ip netns del $NS1 2>/dev/null
	ip netns del $NS2 2>/dev/null
	nft delete table inet $NFT_TABLE 2>/dev/null
	echo "$fwd_old" >/proc/sys/net/ipv4/ip_forward 2>/dev/null
	dev_del $DEV
	rm -rf "$tmp"
}
trap cleanup EXIT
have_arbtable || { tap_fail "classify: module and plugin present"; tap_end; exit; }
klog_mark

PY=$(command -v /usr/bin/python3 || command -v python3)
N=100		# packets per case
SIZE=100	# UDP payload bytes
WIRE=$((SIZE + 8 + 20 + 14))	# what qdisc_pkt_len counts on the dummy
DST=192.0.2.2
BPF_OBJ=${ARBT_ROOT}/build/bpf/arbt_classify.bpf.o

# ------------------------------------------------------------ helpers
# The senders: python3 processes (one on the host, one in each tenant
# namespace; python3 takes seconds to start under TCG, so each starts
# once) that read requests "KEY=VAL ..." line by line from a FIFO, send,
# and answer "sent K" (plus "errors E LAST" when a send failed).
# Request keys: dst= dport= count= size= [src=] [tos=] [prio=]
# [gap=SECONDS] [until=FILE: send until FILE exists instead of count=].
# IP_TOS is set before SO_PRIORITY (IP_TOS also sets the socket priority).
udp_send_py='
import os, socket, sys, time
for line in sys.stdin:
    try:
        a = dict(x.split("=", 1) for x in line.split())
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        if "tos" in a:
            s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, int(a["tos"], 0))
        if "prio" in a:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_PRIORITY, int(a["prio"], 0))
        if "src" in a:
            s.bind((a["src"], 0))
        s.connect((a["dst"], int(a["dport"])))
        buf = b"x" * int(a.get("size", "100"))
        n = int(a.get("count", "0"))
        stop = a.get("until")
        gap = float(a.get("gap", "0"))
        sent = err = 0
        while (not os.path.exists(stop)) if stop else (sent + err < n):
            try:
                s.send(buf)
                sent += 1
            except OSError as e:
                err += 1
                last = e
            if gap:
                time.sleep(gap)
        s.close()
        print("sent", sent, *(("errors", err, str(last)) if err else ()), flush=True)
    except Exception as e:
        print("error", repr(e), flush=True)
'
declare -A S_IN S_OUT
S_PIDS=()
# sender_start NAME [NETNS]
sender_start() {
	local name=$1 ns=${2:-} fd
	mkfifo "$tmp/$name.in" "$tmp/$name.out" || return 1
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$PY" -S -c "$udp_send_py" <"$tmp/$name.in" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	else
		"$PY" -S -c "$udp_send_py" <"$tmp/$name.in" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	fi
	S_PIDS+=($!)
	exec {fd}>"$tmp/$name.in"
	S_IN[$name]=$fd
	exec {fd}<"$tmp/$name.out"
	S_OUT[$name]=$fd
}
senders_stop() {
	local n p fd
	for n in "${!S_IN[@]}"; do fd=${S_IN[$n]}; exec {fd}>&-; done
	for n in "${!S_OUT[@]}"; do fd=${S_OUT[$n]}; exec {fd}<&-; done
	S_IN=() S_OUT=()
	for p in "${S_PIDS[@]}"; do wait "$p" 2>/dev/null; done
	S_PIDS=()
}
# sender_req NAME KEY=VAL...; sender_reply NAME: prints the answer
sender_req() { local n=$1; shift; echo "$*" >&"${S_IN[$n]}"; }
sender_reply() {
	local r
	if read -r -t 300 -u "${S_OUT[$1]}" r; then echo "$r"; return 0; fi
	echo "sender $1: no answer; stderr: $(cat "$tmp/$1.err" 2>/dev/null)"
	return 1
}
udp_send() { sender_req "$@" && sender_reply "$1"; }

# snapshot FILE: one tc run; "ID bytes pkts drops backlog_pkts" per
# class, "Q bytes pkts drops backlog_pkts" for the qdisc and
# "U pkts drops qlen" for the unclassified queue (qdisc xstats)
snapshot() {
	printf 'class show dev %s\nqdisc show dev %s\n' "$DEV" "$DEV" | tc -s -batch - | awk '
	$1 == "class" { cur = ($2 == "arbtable") ? $3 : ""; next }
	$1 == "qdisc" { cur = ($2 == "arbtable" && $3 == "1:") ? "Q" : ""; next }
	cur != "" && $1 == "Sent" { d = $7; sub(/,/, "", d); sb[cur] = $2; sp[cur] = $4; dr[cur] = d
		if (!(cur in seen)) { seen[cur] = 1; order[++n] = cur } }
	cur != "" && $1 == "backlog" { bp[cur] = $3 + 0 }
	cur == "Q" && /unclassified: pkts/ { for (i = 1; i < NF; i++) {
		if ($i == "pkts") up = $(i + 1); if ($i == "drops") ud = $(i + 1); if ($i == "qlen") uq = $(i + 1) } }
	END { for (i = 1; i <= n; i++) { c = order[i]; print c, sb[c], sp[c], dr[c], bp[c] }
		print "U", up + 0, ud + 0, uq + 0 }' >"$1"
}
# snapshot_idle FILE: a snapshot once the qdisc and its unclassified
# queue are empty (30 s at most)
snapshot_idle() {
	local i
	for ((i = 0; i < 150; i++)); do
		snapshot "$1"
		awk '$1 == "Q" { q = $5 } $1 == "U" { u = $4 } END { exit !(q == 0 && u == 0) }' "$1" && return 0
		sleep 0.2
	done
	diag "qdisc not idle after 30 s: $(tr '\n' ';' <"$1")"
	return 1
}
# s_get FILE ID COL (2 bytes, 3 pkts, 4 drops, 5 backlog); 0 if absent
s_get() { awk -v c="$2" -v f="$3" '$1 == c { v = $f } END { print v + 0 }' "$1"; }

# delta_ok A B WANT PKTS BYTES: between snapshots A and B, class WANT
# (or U, the unclassified queue) grew by PKTS packets (and BYTES bytes
# for a class), every other class and the unclassified queue did not
# grow, and the qdisc sent exactly PKTS packets of BYTES bytes, dropped
# none.  Prints what differs.
delta_ok() {
	awk -v want="$3" -v np="$4" -v nb="$5" '
	FNR == NR { b[$1] = $2; p[$1] = $3; d[$1] = $4; next }
	{ db = $2 - b[$1]; dp = $3 - p[$1]; dd = $4 - d[$1]; seen[$1] = 1
	  if ($1 == "Q") {
		if (dp != np || db != nb || dd != 0) { printf "# qdisc: sent %d pkts %d bytes, dropped %d; want %d pkts %d bytes, 0 dropped\n", dp, db, dd, np, nb; bad = 1 }
	  } else if ($1 == "U") {
		if ($1 == want) { if (db != np) { printf "# unclassified: +%d pkts, want +%d\n", db, np; bad = 1 } }
		else if (db != 0 || dp != 0) { printf "# unclassified: +%d pkts +%d drops, want none\n", db, dp; bad = 1 }
	  } else if ($1 == want) {
		if (dp != np || db != nb || dd != 0) { printf "# %s: +%d pkts +%d bytes +%d drops; want +%d pkts +%d bytes\n", $1, dp, db, dd, np, nb; bad = 1 }
	  } else if (dp != 0 || db != 0 || dd != 0) { printf "# %s: +%d pkts +%d bytes +%d drops; want none\n", $1, dp, db, dd; bad = 1 }
	}
	END { if (!(want in seen)) { printf "# %s not in the stats\n", want; bad = 1 } exit bad }' "$1" "$2"
}

# lands DESC WANT SENDER KEY=VAL...: send N packets of SIZE bytes with
# the sender's options, wait for the qdisc to drain, assert they all went
# to WANT (class id, or U) and nothing else moved.
lands() {
	local desc=$1 want=$2 out; shift 2
	snapshot "$tmp/a"
	local t0=$EPOCHREALTIME t1 t2
	out=$(udp_send "$@" dst=$DST count=$N size=$SIZE)
	t1=$EPOCHREALTIME
	snapshot_idle "$tmp/b"
	t2=$EPOCHREALTIME
	[ "${ARBT_CLASSIFY_TIMES:-0}" = 1 ] && diag "$(fcalc "${t1/,/.} - ${t0/,/.}") s sending, $(fcalc "${t2/,/.} - ${t1/,/.}") s snapshot, at ${SECONDS} s"
	if [ "$out" != "sent $N" ]; then
		diag "sender ($*): $out"
		tap_fail "$desc"
	elif delta_ok "$tmp/a" "$tmp/b" "$want" $N $((N * WIRE)) >"$tmp/why"; then
		tap_ok "$desc"
	else
		diag "$(sed 's/^# //' "$tmp/why")"
		tap_fail "$desc"
	fi
}
# tc_ok DESC CMD...: a configuration command that must succeed
tc_ok() {
	if run "$@"; then return 0; fi
	diag "$*: rc $RUN_RC: $RUN_ERR"
	return 1
}
F=(tc filter add dev "$DEV" parent 1:)

# ------------------------------------------------------------ setup
# Classes 1:10..1:a0 each own one HIGH slot (manual mode, 10mbit).  The
# qdisc is on dummy d0 (192.0.2.1/24, NOARP: nothing but our packets
# leaves it); tenants t1 (10.1.0.2) and t2 (10.2.0.2) sit in network
# namespaces behind veth pairs and the host forwards them to 192.0.2.2.
# (tc and ip run in batches: each process costs ~0.5-1.5 s under TCG)
setup() {
	arb_base manual rate 10mbit || return 1
	local m i ns
	{
		for m in 10 20 30 40 50 60 70 80 90 a0; do
			echo "class add dev $DEV parent 1: classid 1:$m arbtable"
		done
		echo "qdisc change dev $DEV root handle 1: arbtable" \
			"high 10:20,20:20,30:20,40:20,50:20,60:20,70:20,80:20,90:20,a0:20" \
			"priomap 0 0 0 70 0 0 0 0 0 0 0 0 0 0 0 0"
		echo "filter add dev $DEV parent 1: protocol ip pref 10 flower src_ip 10.1.0.0/24 classid 1:10"
		echo "filter add dev $DEV parent 1: protocol ip pref 11 flower src_ip 10.2.0.0/24 classid 1:20"
		echo "filter add dev $DEV parent 1: protocol ip pref 20 flower ip_tos 0xb8/0xfc classid 1:30"
		echo "filter add dev $DEV parent 1: protocol ip pref 30 u32 match ip protocol 17 0xff match ip dport 5004 0xffff classid 1:40"
		echo "filter add dev $DEV parent 1: protocol ip pref 40 handle 0x50 fw classid 1:50"
	} >"$tmp/tc.batch"
	tc_ok tc -batch "$tmp/tc.batch" || return 1
	echo 1 >/proc/sys/net/ipv4/ip_forward || return 1
	{
		echo "addr add 192.0.2.1/24 dev $DEV"
		for i in 1 2; do
			echo "link add t${i}h type veth peer name t$i netns arbt_t$i"
			echo "addr add 10.$i.0.1/24 dev t${i}h"
			echo "link set t${i}h up"
		done
	} >"$tmp/ip.batch"
	for i in 1 2; do
		ns=arbt_t$i
		ip netns del $ns 2>/dev/null
		tc_ok ip netns add $ns || return 1
		printf '%s\n' "link set lo up" "addr add 10.$i.0.2/24 dev t$i" \
			"link set t$i up" "route add default via 10.$i.0.1" >"$tmp/ip.$ns"
	done
	tc_ok ip -batch "$tmp/ip.batch" &&
		tc_ok ip -n $NS1 -batch "$tmp/ip.$NS1" &&
		tc_ok ip -n $NS2 -batch "$tmp/ip.$NS2" || return 1
	sender_start host && sender_start t1 $NS1 && sender_start t2 $NS2 || return 1
	# marks for fw (0x50) and for the BPF classifier (tag 0xab, minor 0x60)
	nft delete table inet $NFT_TABLE 2>/dev/null
	tc_ok nft -f - <<-EOF || return 1
	table inet $NFT_TABLE {
		chain post {
			type filter hook postrouting priority mangle; policy accept;
			oifname "$DEV" udp dport 5005 meta mark set 0x50
			oifname "$DEV" udp dport 5006 meta mark set 0xab0060
		}
	}
	EOF
}
if ! setup; then tap_fail "classify: setup (qdisc, 10 classes, tenants, nftables, filters)"; tap_end; exit; fi
tap_ok "classify: setup (qdisc, 10 classes, tenants in netns, nftables marks, flower/u32/fw filters)"

have_bpf=
if [ -f "$BPF_OBJ" ]; then
	if tc_ok "${F[@]}" protocol all pref 5 bpf obj "$BPF_OBJ" sec tc da classid 1:; then
		have_bpf=1
		tap_ok "bpf: direct-action classifier attached ($(tc filter show dev $DEV parent 1: pref 5 | grep -o 'arbt_classify[^ ]*' | head -n1))"
	else
		tap_fail "bpf: direct-action classifier attached"
	fi
fi
diag "$(tc filter show dev $DEV parent 1:)"

# ------------------------------------------------------------ filters
lands "flower src_ip: tenant t1 (10.1.0.2, forwarded) -> 1:10" 1:10 t1 dport=5001
lands "flower src_ip: tenant t2 (10.2.0.2, forwarded) -> 1:20" 1:20 t2 dport=5001
lands "flower ip_tos 0xb8/0xfc: DSCP EF + ECT(1) (tos 0xb9) -> 1:30" 1:30 host dport=5002 tos=0xb9
lands "u32 ip dport 5004 -> 1:40" 1:40 host dport=5004
lands "fw handle 0x50 on the nftables mark (dport 5005) -> 1:50" 1:50 host dport=5005
if [ -n "$have_bpf" ]; then
	lands "bpf da: class from the nftables mark 0xab0060 -> 1:60" 1:60 host dport=5006
elif [ -f "$BPF_OBJ" ]; then
	tap_fail "bpf da: class from the nftables mark 0xab0060 -> 1:60 (filter not attached)"
else
	# setup installs clang; without it make builds no BPF object
	command -v clang >/dev/null || diag "clang not installed: scripts/setup.sh installs it"
	diag "$BPF_OBJ missing: run make (mk/bpf.mk)"
	tap_fail "bpf da: class from the nftables mark 0xab0060 -> 1:60 (object built)"
fi

# ------------------------------------------------------------ skb->priority, priomap
lands "SO_PRIORITY 0x10010 names 1:10 directly (beats u32 dport 5004)" 1:10 host dport=5004 prio=0x10010
lands "SO_PRIORITY 0x10099 names no class: filters next, u32 -> 1:40" 1:40 host dport=5004 prio=0x10099
lands "priomap band 3 (SO_PRIORITY 3, no filter match) -> 1:70" 1:70 host dport=5010 prio=3
lands "priomap: a filter match comes first (SO_PRIORITY 3 + u32 dport 5004 -> 1:40)" 1:40 host dport=5004 prio=3

# ------------------------------------------------------------ unclassified, default
unc_pkts=0
lands "unclassified: no filter, priomap or default match -> internal queue (xstats pkts +$N)" U host dport=5011
unc_pkts=$((unc_pkts + N))
lands "unclassified: DSCP AF41 (tos 0x88) misses the EF match -> internal queue" U host dport=5011 tos=0x88
unc_pkts=$((unc_pkts + N))
if arb_change default 80 && tc -d qdisc show dev $DEV | grep -q 'default 80 ' &&
	tc -d qdisc show dev $DEV | grep -q 'priomap 0 0 0 70 '; then
	tap_ok "default: 'qdisc change default 80' accepted, priomap kept"
else
	diag "$(tc -d qdisc show dev $DEV)"
	tap_fail "default: 'qdisc change default 80' accepted, priomap kept"
fi
lands "default 80: the unclassified traffic now -> 1:80" 1:80 host dport=5011

# ------------------------------------------------------------ lifecycle
# filter replace while traffic runs: a paced sender on dport 5012, first
# to 1:90; after the replace no packet may be enqueued to 1:90 (its Sent
# + backlog + drops at that moment is its final Sent) and the rest goes
# to 1:a0.  Counts only: the pacing just keeps the run short.
cls_pkts() { cls_stats $DEV arbtable | awk -v c="$1" '$1 == c { print $3 + $6 + $4 }'; }
wait_pkts() { # ID MIN TIMEOUT_S: enqueued packets of ID reach MIN
	local i v
	for ((i = 0; i < $3 * 5; i++)); do
		v=$(cls_pkts "$1")
		[ "${v:-0}" -ge "$2" ] && return 0
		sleep 0.2
	done
	diag "$1: $v packets after $3 s, want $2"
	return 1
}
snapshot_idle "$tmp/r0"
tc_ok "${F[@]}" protocol ip pref 50 handle 1 flower ip_proto udp dst_port 5012 classid 1:90
rm -f "$tmp/stop"
sender_req host dst=$DST dport=5012 size=$SIZE gap=0.002 until="$tmp/stop"
rep_ok=0
if wait_pkts 1:90 20 60; then
	if tc_ok tc filter replace dev $DEV parent 1: protocol ip pref 50 handle 1 flower ip_proto udp dst_port 5012 classid 1:a0; then
		enq90=$(cls_pkts 1:90)
		wait_pkts 1:a0 20 60 && rep_ok=1
	fi
fi
touch "$tmp/stop"
bg_out=$(sender_reply host)
snapshot_idle "$tmp/r1"
sent_bg=$(awk '$1 == "sent" && NF == 2 { print $2 }' <<<"$bg_out")
[ -n "$sent_bg" ] || diag "continuous sender: $bg_out"
tap_check "replace: traffic ran into 1:90, filter replaced to 1:a0 under traffic, 1:a0 got packets" test $rep_ok = 1
p90=$(($(s_get "$tmp/r1" 1:90 3) - $(s_get "$tmp/r0" 1:90 3)))
pa0=$(($(s_get "$tmp/r1" 1:a0 3) - $(s_get "$tmp/r0" 1:a0 3)))
diag "replace: sender sent ${sent_bg:-?}; 1:90 +$p90 (enqueued ${enq90:-?} total when the replace returned), 1:a0 +$pa0"
tap_check "replace: no packet enqueued to 1:90 after the replace returned (final Sent = Sent+backlog then)" \
	test "$(s_get "$tmp/r1" 1:90 3)" = "${enq90:-x}"
tap_check "replace: every packet sent landed in 1:90 or 1:a0 (${sent_bg:-?} = $p90 + $pa0)" \
	test "${sent_bg:-x}" = $((p90 + pa0))
# nothing but 1:90 and 1:a0 moved; the qdisc sent exactly the sender's packets
others_quiet() {
	awk -v np="${sent_bg:-x}" -v nb=$((${sent_bg:-0} * WIRE)) '
	FNR == NR { b[$1] = $2; p[$1] = $3; d[$1] = $4; next }
	$1 == "1:90" || $1 == "1:a0" { next }
	$1 == "Q" { if ($3 - p[$1] != np || $2 - b[$1] != nb || $4 - d[$1] != 0) {
			printf "# qdisc: +%d pkts +%d bytes +%d drops; want +%s pkts +%d bytes\n", $3 - p[$1], $2 - b[$1], $4 - d[$1], np, nb; bad = 1 }
		next }
	$2 != b[$1] || $3 != p[$1] || $4 != d[$1] { printf "# %s moved: %s %s %s -> %s %s %s\n", $1, b[$1], p[$1], d[$1], $2, $3, $4; bad = 1 }
	END { exit bad }' "$1" "$2"
}
if others_quiet "$tmp/r0" "$tmp/r1" >"$tmp/why"; then
	tap_ok "replace: the qdisc sent exactly the sender's packets; no other class nor the unclassified queue moved"
else
	diag "$(sed 's/^# //' "$tmp/why")"
	tap_fail "replace: the qdisc sent exactly the sender's packets; no other class nor the unclassified queue moved"
fi

# deleting a class that a filter targets: refused with the kernel's
# extack; the slots are taken away first so the filter is the only
# reason left
del_refused() { # DESC ID
	run tc class del dev $DEV classid "$2"
	if [ "$RUN_RC" = 0 ]; then
		tap_fail "$1: tc class del $2 refused"
	elif [[ "$RUN_ERR" != *"filters still point at the class"* ]]; then
		diag "tc class del $2: rc $RUN_RC: $RUN_ERR"
		tap_fail "$1: tc class del $2 refused naming the filter ('filters still point at the class')"
	elif ! tc class show dev $DEV classid "$2" | grep -q .; then
		tap_fail "$1: $2 still exists after the refused delete"
	else
		tap_ok "$1: tc class del $2 refused: $(head -n1 <<<"$RUN_ERR")"
	fi
}
arb_change high 10:20,20:20,30:20,40:20,50:20,60:20,70:20,80:20 ||
	diag "could not take 1:90/1:a0 out of the table"
del_refused "lifecycle (flower replaced to 1:a0)" 1:a0
del_refused "lifecycle (fw handle 0x50 -> 1:50)" 1:50
# 1:90 lost its filter with the replace: deletable; keep its counters
# for the final sums
gone_b=$(s_get "$tmp/r1" 1:90 2)
gone_p=$(s_get "$tmp/r1" 1:90 3)
tap_check "lifecycle: 1:90, no longer a filter target after the replace, is deleted" tc_ok tc class del dev $DEV classid 1:90
tap_check "lifecycle: the flower filter (pref 50) is deleted" tc_ok tc filter del dev $DEV parent 1: protocol ip pref 50
gone_b=$((gone_b + $(s_get "$tmp/r1" 1:a0 2)))
gone_p=$((gone_p + $(s_get "$tmp/r1" 1:a0 3)))
tap_check "lifecycle: with its filter deleted, 1:a0 is deleted" tc_ok tc class del dev $DEV classid 1:a0
# A filter that names a class before the class exists: tc's reverse
# binding on class creation (tc_bind_tclass) walks only the classes' own
# filter blocks, never the qdisc's, so the module is not told about it;
# the qdisc finds the class by the filter's classid per packet.  Its
# traffic goes to the default class until the class exists, then to the
# class; deleting the class is either refused naming the filter or (the
# filter not being bound) allowed, and either way the traffic then goes
# back to the default class: no stale class.
tc_ok "${F[@]}" protocol ip pref 60 flower ip_proto udp dst_port 5013 classid 1:b0
lands "unbound filter naming 1:b0 before it exists: traffic falls through to default 1:80" 1:80 host dport=5013
arb_class b0 && arb_change high 10:20,20:20,30:20,40:20,50:20,60:20,70:20,80:20,b0:20 ||
	diag "could not create 1:b0 with a slot"
lands "unbound filter: once 1:b0 is created its traffic lands there (classid looked up per packet)" 1:b0 host dport=5013
arb_change high 10:20,20:20,30:20,40:20,50:20,60:20,70:20,80:20 || diag "could not take 1:b0 out of the table"
snapshot_idle "$tmp/d0"
run tc class del dev "$DEV" classid 1:b0
if [ "$RUN_RC" = 0 ]; then
	tap_ok "unbound filter: tc class del 1:b0 allowed (the filter was added before the class: tc never bound it)"
	tc_ok tc filter del dev "$DEV" parent 1: protocol ip pref 60
elif [[ "$RUN_ERR" == *"filters still point at the class"* ]]; then
	tap_ok "unbound filter: tc class del 1:b0 refused naming the filter: $(head -n1 <<<"$RUN_ERR")"
	tc_ok tc filter del dev "$DEV" parent 1: protocol ip pref 60
	tc_ok tc class del dev "$DEV" classid 1:b0
else
	diag "tc class del 1:b0: rc $RUN_RC: $RUN_ERR"
	tap_fail "unbound filter: tc class del 1:b0 allowed, or refused naming the filter"
fi
if tc class show dev "$DEV" classid 1:b0 | grep -q .; then
	tap_fail "unbound filter: 1:b0 deleted"
else
	tap_ok "unbound filter: 1:b0 deleted"
	gone_b=$((gone_b + $(s_get "$tmp/d0" 1:b0 2)))
	gone_p=$((gone_p + $(s_get "$tmp/d0" 1:b0 3)))
fi
lands "unbound filter: with 1:b0 gone, dport 5013 goes to default 1:80" 1:80 host dport=5013

# ------------------------------------------------------------ priomap, default: class deleted, added again
# The qdisc keeps the classes the priomap and default name (no lookup per
# packet): a delete must drop the pointer (a stale one is a use-after-free)
# and an add of the same minor must restore it.
gone() { # CASE MINOR: delete 1:MINOR (out of the table first), count what it sent
	local hi=10:20,20:20,30:20,40:20,50:20,60:20,70:20,80:20
	arb_change high "${hi/,$2:20/}" || diag "could not take 1:$2 out of the table"
	snapshot_idle "$tmp/g$2"
	if tc_ok tc class del dev "$DEV" classid "1:$2"; then
		tap_ok "$1: 1:$2 deleted"
		gone_b=$((gone_b + $(s_get "$tmp/g$2" "1:$2" 2)))
		gone_p=$((gone_p + $(s_get "$tmp/g$2" "1:$2" 3)))
	else
		tap_fail "$1: 1:$2 deleted"
	fi
}
# the class add alone must restore it (a qdisc change refreshes it too):
# the slot comes back after the check (slotless, the class is served idle)
slot_back() {
	arb_change high 10:20,20:20,30:20,40:20,50:20,60:20,70:20,80:20 || diag "could not give 1:$1 its slot again"
}
gone priomap 70
lands "priomap: band 3 with 1:70 deleted falls to default 1:80" 1:80 host dport=5010 prio=3
arb_class 70 || diag "could not add 1:70 again"
lands "priomap: band 3 -> 1:70 again once 1:70 is added again" 1:70 host dport=5010 prio=3
slot_back 70
gone default 80
lands "default: with 1:80 deleted, unmatched traffic -> the unclassified queue" U host dport=5011
unc_pkts=$((unc_pkts + N))
arb_class 80 || diag "could not add 1:80 again"
lands "default: unmatched traffic -> 1:80 again once 1:80 is added again" 1:80 host dport=5011
slot_back 80

# ------------------------------------------------------------ after all
# traffic still classified after the churn: the remaining filters did not
# lose their classes
lands "after the lifecycle: u32 dport 5004 -> 1:40 still" 1:40 host dport=5004
if snapshot_idle "$tmp/end"; then
	tap_ok "end: qdisc idle (backlog 0, qlen 0, unclassified qlen 0)"
else
	tap_fail "end: qdisc idle (backlog 0, qlen 0, unclassified qlen 0)"
fi
# every packet the qdisc sent is one of ours (WIRE bytes each), counted
# once: in a class, a deleted class or the unclassified queue
sums() {
	awk -v gb="$gone_b" -v gp="$gone_p" -v un="$unc_pkts" -v w="$WIRE" '
	$1 == "Q" { qb = $2; qp = $3; next } $1 == "U" { u = $2; ud = $3; next } { cb += $2; cp += $3 }
	END {
		printf "# qdisc sent %dB %dp; classes %dB %dp; deleted classes %dB %dp; unclassified %dp (%d sent there), %d dropped there\n", qb, qp, cb, cp, gb, gp, u, un, ud
		exit !(u == un && ud == 0 && qp == cp + gp + u && qb == cb + gb + u * w && qp * w == qb)
	}' "$tmp/end"
}
sums_ok=0
sums >"$tmp/why" && sums_ok=1
diag "$(sed 's/^# //' "$tmp/why")"
tap_check "end: class + deleted class + unclassified packets = the qdisc's Sent packets and bytes (all ${WIRE}-byte packets of this test)" test $sums_ok = 1
tap_check "end: kernel log has no splat since the test began" klog_clean
tap_end
