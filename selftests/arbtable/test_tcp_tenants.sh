#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Real traffic (issue item 5): TCP tenants from network namespaces,
# routed out of one NIC (virtio-net under vm.sh -n, GSO/TSO as the driver
# offers them) whose root qdisc is arbtable in auto mode with a rate
# below the link; a receiver namespace on the other NIC runs iperf3
# servers.  Tenants, classified by flower on the source address:
#   gold    rate R1 latency L1   1 TCP flow
#   silver  rate R2              8 TCP flows
#   bronze  share 20             16 TCP flows
#   flood   share 10             UDP at 1.2 x the link rate (its class
#                                gets ~8% of it: always backlogged); a
#                                flood the guest cannot make (2 x at
#                                30 Mbit/s made 27 of its 60) only takes
#                                the CPU the qdisc's dequeue needs
# Run at 10 Mbit/s and at ARBT_TCP_FAST_K x 10 Mbit/s (default 200; make
# test runs 30, what a TCG guest beside CI's second lane keeps busy: at
# 200 it sent 58 Mbit/s there and the rate checks could only skip), rates
# scaled alike; both divided by ARBT_RATE_DIV on a slow kernel, lib.sh.  Checks:
#  - no dequeued skb longer than the qdisc mtu (device MTU + link-layer
#    header, as tc -d prints it): every arbtable_dequeue event of the
#    whole run, through a trace instance filtered on len > mtu (bytes:
#    never skipped).  A module that queues GSO super-packets whole fails
#    this, and then the bound checks too;
#  - every reserved class's head-of-line wait, in bytes from the
#    arbtable_dequeue trace of the measured window, <= guaranteed bound
#    x rate (never skipped);
#  - the qdisc sent >= 95% of its rate in the window (trace), and each
#    reserved class's byte rate >= 97% of its reservation and the TCP
#    goodput iperf3's receiver saw >= 97% (95% for the one-flow tenant);
#    the share tenants split the bytes sent in whole table rounds
#    while both were backlogged 20:10 within 5% (queues from the trace:
#    never skipped);
#  - the kernel's wall-clock max_hol_wait is the largest wait its
#    dequeue events carried (wait=), and <= the bound, or explained by
#    the trace (that very wait carried no more than the bound in bytes).
# Rates are asked over the part of the window in which the guest ran
# its senders (skbs handed to the NIC, the core's net_dev_queue, before
# the qdisc), and no higher than the in-tree tbf at the same rate carries
# in this guest where the qdisc fell short.  Wall-clock checks may SKIP
# only where the senders did not make the load, counted where the
# tenants' packets enter the root namespace (their veths' rx_bytes,
# upstream of the qdisc); where they made it and the qdisc sent less,
# the check fails.
# ARBT_TCP_LOCKLESS=1 (test_mq_floor.sh) runs the same on a lockless root
# of a 4-queue veth, XPS mapping CPU n to queue n: gold's four flows are
# four iperf3 clients, one pinned to each CPU (a check counts its packets
# enqueued per CPU); then gold alone on one CPU and queue must get the
# port (work conservation).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_auto.sh"
. "$(dirname "$0")/lib_net.sh"
LL=${ARBT_TCP_LOCKLESS:-0}
if [ "$LL" = 1 ]; then
	tap_begin "lockless root of a 4-queue NIC: TCP tenants from every CPU + UDP flood: floors, HOL bound, work conservation"
	NET_QUEUES=4
else
	tap_begin "TCP tenants + UDP flood through a NIC with GSO: guarantees, shares, HOL bound, no skb above mtu"
fi
tmp=$(mktemp -d)
TR=/sys/kernel/tracing
TRI=$TR/instances/arbt_len
TENANTS_ALL="gold silver bronze flood"
ip3_pids=
cleanup() {
	[ -n "$ip3_pids" ] && kill $ip3_pids 2>/dev/null
	echo 0 >$TR/tracing_on 2>/dev/null
	echo 0 >$TR/events/arbtable/arbtable_dequeue/enable 2>/dev/null
	echo 0 >$TR/events/arbtable/arbtable_enqueue/enable 2>/dev/null
	echo 0 >$TR/events/arbtable/arbtable_enqueue/filter 2>/dev/null
	: >$TR/trace 2>/dev/null
	[ -d $TRI ] && rmdir $TRI 2>/dev/null
	in_trace_stop /dev/null
	net_teardown $TENANTS_ALL
	rm -rf "$tmp"
}
trap cleanup EXIT
have_arbtable || { tap_fail "tcp: module and plugin present"; tap_end; exit; }
command -v iperf3 >/dev/null || { tap_fail "tcp: iperf3 installed"; tap_end; exit; }
if [ "$LL" = 1 ] && [ "$(nproc)" -lt 4 ]; then
	tap_fail "tcp: 4 vCPUs for gold's four pinned senders (have $(nproc))"; tap_end; exit
fi

# Tenants: name subnet minor port flows proto class-options(at 10 Mbit/s; scaled)
# gold asks for a latency its distance-2 placement meets at both rates.
TEN="gold 1 10 5201 $([ "$LL" = 1 ] && echo 4 || echo 1) tcp
silver 2 20 5202 8 tcp
bronze 3 30 5203 16 tcp
flood 4 40 5204 1 udp"

setup_net() {
	net_setup || return 1
	local name n m p f pr
	while read -r name n m p f pr; do
		net_tenant "$name" "$n" || return 1
	done <<<"$TEN"
}
if ! setup_net; then tap_fail "tcp: namespaces, veths, routes, receiver"; tap_end; exit; fi
diag "egress: $NET_KIND; $NET offloads: $(net_offloads "$NET"); tenants' veth: $(net_offloads vh-gold)"
LLW=
if [ "$LL" = 1 ]; then
	LLW=lockless xps=1
	for q in 0 1 2 3; do
		echo $((1 << q)) >"/sys/class/net/$NET/queues/tx-$q/xps_cpus" 2>/dev/null || xps=
	done
	tap_check "tcp: $NET has 4 transmit queues, XPS maps CPU n to queue n" \
		eval '[ "$(ls -d /sys/class/net/$NET/queues/tx-* | wc -l)" = 4 ] && [ -n "$xps" ]'
fi
# t_clients NAME PORT FLOWS: "PORT CPU FLOWS" per iperf3 client of tenant
# NAME (CPU -: not pinned).  In the lockless run gold has one client of
# one flow pinned to each CPU: its packets enter the qdisc from all four
# CPUs at once and leave by all four queues
t_clients() {
	if [ "$LL" = 1 ] && [ "$1" = gold ]; then
		local i
		for i in 0 1 2 3; do echo "$(($2 + 10 * i)) $i $(($3 / 4))"; done
	else
		echo "$2 - $3"
	fi
}
# t_servers: an iperf3 server (one test) for every client; pids in ip3_pids
t_servers() {
	local name n m p f pr cp cc cf
	while read -r name n m p f pr; do
		while read -r cp cc cf; do
			ip netns exec $NET_RX iperf3 -s -1 -p "$cp" >/dev/null 2>&1 &
			ip3_pids+=" $!"
		done < <(t_clients "$name" "$p" "$f")
	done <<<"$TEN"
}
# t_send NAME PORT FLOWS PROTO SECS UDP_MBIT OUT [IPERF3 ARGS]: tenant NAME's
# clients for SECS s, each's JSON in OUT.PORT.json; pids in cpids
t_send() {
	local name=$1 p=$2 f=$3 pr=$4 t=$5 fl=$6 out=$7 cp cc cf pin
	shift 7
	while read -r cp cc cf; do
		pin=; [ "$cc" != - ] && pin="taskset -c $cc"
		if [ "$pr" = udp ]; then
			$pin ip netns exec "arbt-$name" iperf3 -c $NET_RX_ADDR -p "$cp" -u -b "${fl}M" -l 1400 -t "$t" "$@" \
				>"$out.$cp.json" 2>&1 &
		else
			$pin ip netns exec "arbt-$name" iperf3 -c $NET_RX_ADDR -p "$cp" -P "$cf" -w "$(win_of "$cf")" -t "$t" "$@" \
				>"$out.$cp.json" 2>&1 &
		fi
		cpids+=" $!"
	done < <(t_clients "$name" "$p" "$f")
}
# t_gp PREFIX: the goodput of every client whose JSON is PREFIX.*.json, summed
t_gp() {
	local j s=0
	for j in "$1".*.json; do s=$((s + $(ip3_rx_bps "$j"))); done
	echo $s
}
[ -d $TR/events ] || mount -t tracefs nodev $TR 2>/dev/null

# class_opts MINOR SCALE: the class's options at SCALE x 10 Mbit/s (divided
# by ARBT_RATE_DIV on a slow kernel, lib.sh: gold's latency grows by the
# same factor, so it keeps its distance-2 placement)
class_opts() {
	local k=$2
	case $1 in
	10) echo "rate $((2000 * k / ARBT_RATE_DIV))kbit latency $(fcalc "30000 * $ARBT_RATE_DIV / $k" | sed 's/\..*//')us" ;;
	20) echo "rate $((3000 * k / ARBT_RATE_DIV))kbit" ;;
	30) echo "share 20" ;;
	40) echo "share 10" ;;
	esac
}
# TCP windows (iperf3 -w, at most net.core.wmem_max = 208 KiB): bounded so the flows of a reserved class never
# overflow its 1000-packet fifo (a drop would be an arrival the trace
# cannot see leave) and the queue left at the end drains in seconds;
# far above any path's bandwidth-delay product here, so the classes
# stay backlogged
win_of() { case $1 in 1 | 8) echo 128K ;; *) echo 64K ;; esac; }
reserved_bps() { case $1 in 10) echo $((2000000 * $2 / ARBT_RATE_DIV)) ;; 20) echo $((3000000 * $2 / ARBT_RATE_DIV)) ;; *) echo 0 ;; esac; }

tf() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }

# tr_on KB FILTER: the trace of every dequeue and of the enqueues FILTER
# passes, in a buffer of KB per CPU, on the monotonic clock
tr_on() {
	echo 0 >$TR/tracing_on
	echo mono >$TR/trace_clock 2>/dev/null
	echo "$1" >$TR/buffer_size_kb && : >$TR/trace &&
		echo "$2" >$TR/events/arbtable/arbtable_enqueue/filter &&
		echo 1 >$TR/events/arbtable/arbtable_enqueue/enable &&
		echo 1 >$TR/events/arbtable/arbtable_dequeue/enable && echo 1 >$TR/tracing_on
}
# tr_off FILE: the trace into FILE, the events off, the buffer back
tr_off() {
	echo 0 >$TR/tracing_on
	cat $TR/trace >"$1"
	echo 0 >$TR/events/arbtable/arbtable_dequeue/enable
	echo 0 >$TR/events/arbtable/arbtable_enqueue/enable
	echo 0 >$TR/events/arbtable/arbtable_enqueue/filter
	: >$TR/trace
	echo 1408 >$TR/buffer_size_kb
}
# cpu_split FILE CLASS: "N0 N1 N2 N3 TOTAL" enqueues of CLASS (1:10) per
# CPU between the window's markers of a trace
cpu_split() {
	awk -v c="class=$2 " '/tracing_mark_write: WSTART/ { on = 1 } /tracing_mark_write: WEND/ { on = 0 }
	on && /arbtable_enqueue:/ && index($0, c) { if (match($0, /\[[0-9]+\]/)) n[substr($0, RSTART + 1, RLENGTH - 2) + 0]++; t++ }
	END { printf "%d %d %d %d %d\n", n[0], n[1], n[2], n[3], t }' "$1"
}

# phase SCALE BURST FLOOD_MBIT WIN: one configuration, traffic, checks
phase() {
	local k=$1 burst=$2 flood=$(((${3} + ARBT_RATE_DIV - 1) / ARBT_RATE_DIV)) win=$4
	local C=$(($1 * 10000000 / ARBT_RATE_DIV)) kb=$(($1 * 10000 / ARBT_RATE_DIV)) tag
	tag="tcp $([ $((kb % 1000)) = 0 ] && echo "$((kb / 1000))mbit" || echo "${kb}kbit")"
	local name n m p f pr mtu warm=5 dur
	dur=$((win + 4))
	tc qdisc del dev "$NET" root 2>/dev/null
	# highlimit 1: the LOW table gets one packet per 4 KiB of HIGH, so
	# the share tenants have ~25% of the link beside greedy reserved ones
	run tc qdisc add dev "$NET" root handle 1: arbtable $LLW rate "$((k * 10000 / ARBT_RATE_DIV))kbit" burst "$burst" highlimit 1 ||
		{ tap_fail "$tag: qdisc: $RUN_ERR"; return 1; }
	while read -r name n m p f pr; do
		run tc class add dev "$NET" parent 1: classid "1:$m" arbtable $(class_opts "$m" "$k") ||
			{ tap_fail "$tag: class 1:$m $(class_opts "$m" "$k"): $RUN_ERR"; return 1; }
		run tc filter add dev "$NET" parent 1: protocol ip prio 1 flower src_ip "10.88.$n.2" classid "1:$m" ||
			{ tap_fail "$tag: filter for $name: $RUN_ERR"; return 1; }
	done <<<"$TEN"
	mtu=$(tc -d qdisc show dev "$NET" | sed -nE 's/.* mtu ([0-9]+) .*/\1/p' | head -n1)
	auto_cls "$NET" >"$tmp/c0.$k"
	diag "$tag: $(tc qdisc show dev "$NET" | head -n1); mtu ${mtu:-?} (device MTU $(cat /sys/class/net/$NET/mtu) + header)"
	diag "$(awk '{ printf "%s distance %s high slots %s weight %s, guaranteed bound %.3f ms\n", $1, $8, $2, $4, $9 / 1e6 }' "$tmp/c0.$k")"
	[ -n "$mtu" ] || { tap_fail "$tag: qdisc mtu shown by tc -d qdisc show"; return 1; }

	# every dequeue longer than the mtu: a filtered trace instance
	# (events that pass the filter count in entries-written even if its
	# small buffer wraps)
	local len_ok=0
	if [ -d $TR/events/arbtable ]; then
		[ -d $TRI ] || mkdir $TRI 2>/dev/null
		if [ -d $TRI ]; then
			echo 0 >$TRI/tracing_on; echo 256 >$TRI/buffer_size_kb; : >$TRI/trace
			echo "len > $mtu" >$TRI/events/arbtable/arbtable_dequeue/filter &&
				echo 1 >$TRI/events/arbtable/arbtable_dequeue/enable && echo 1 >$TRI/tracing_on && len_ok=1
		fi
	fi
	# the whole run's trace: every dequeue, the reserved tenants' arrivals
	local tr_ok=0
	tr_on $((k > 1 ? 32768 : 4096)) 'classid == 0x10010 || classid == 0x10020 || classid == 0x10030 || classid == 0x10040' && tr_ok=1

	ip3_pids=
	t_servers
	sleep 1
	local t0=$SECONDS cpids=
	while read -r name n m p f pr; do
		if [ "$pr" = udp ]; then
			t_send "$name" "$p" "$f" udp "$((dur + warm))" "$flood" "$tmp/$name.$k" -J
		else
			t_send "$name" "$p" "$f" tcp "$dur" 0 "$tmp/$name.$k" -O "$warm" -J
		fi
	done <<<"$TEN"
	# iperf3 -O: the first $warm s are left out of its totals (it runs
	# $warm + $dur s); the window starts after them, ends before the end
	sleep $((warm + 1))
	# every skb the stack hands NET (the core's net_dev_queue, before the
	# qdisc) in the window: where none came for longer than the qdisc's
	# bucket, the guest ran no sender, and could not run the qdisc either
	in_trace_start "$NET"
	vh_rx_all >"$tmp/rx0.$k"
	echo WSTART >$TR/trace_marker
	local w0=$EPOCHREALTIME
	# the window is timed by the trace (markers): no tc dump inside it
	# (one takes seconds under TCG on a loaded host)
	sleep "$win"
	echo WEND >$TR/trace_marker
	local w1=$EPOCHREALTIME
	in_trace_stop "$tmp/in.$k"
	vh_rx_all >"$tmp/rx1.$k"
	# what each tenant offered in the window: bytes in from its namespace
	# (one header per GSO skb: a TCP tenant's count is ~3% below its
	# bytes on the wire) over the window's wall time
	awk -v t="$(fcalc "${w1/,/.} - ${w0/,/.}")" 'FNR == NR { a[$1] = $2; next } { printf "%s %.0f\n", $1, (t > 0 ? ($2 - a[$1]) * 8 / t : 0) }' \
		"$tmp/rx0.$k" "$tmp/rx1.$k" >"$tmp/off.$k"
	diag "$tag: window $(fcalc "${w1/,/.} - ${w0/,/.}") s of guest wall clock; trace clock $(sed -nE 's/.*\[([a-z_0-9-]+)\].*/\1/p' $TR/trace_clock); offered at the veths (bit/s): $(tr '\n' ' ' <"$tmp/off.$k")"
	local drops
	drops=$(cls_stats "$NET" arbtable | awk '$1 != "" { printf "%s drops %s; ", $1, $4 }')
	wait $cpids 2>/dev/null
	kill $ip3_pids 2>/dev/null; wait $ip3_pids 2>/dev/null
	ip3_pids=
	drained "$NET" 1: arbtable 20 >/dev/null
	echo 0 >$TR/tracing_on
	[ $len_ok = 1 ] && echo 0 >$TRI/tracing_on
	diag "$tag: traffic ran $((SECONDS - t0)) s; classes' child drops: $drops"
	[ $tr_ok = 1 ] && tr_off "$tmp/trace.$k"
	auto_cls "$NET" >"$tmp/c1.$k"

	# ---- no skb above the mtu (whole run, bytes)
	if [ $len_ok = 1 ]; then
		local big ex
		big=$(sed -nE 's/^# entries-in-buffer\/entries-written: [0-9]+\/([0-9]+).*/\1/p' $TRI/trace)
		ex=$(grep -m3 'arbtable_dequeue:' $TRI/trace | sed -E 's/.*(class=[^ ]+).*(len=[0-9]+).*/\1 \2/' | tr '\n' ' ')
		tap_check "$tag: no dequeued skb longer than the qdisc mtu $mtu B over the whole run (${big:-?} were${ex:+, e.g. $ex}; GSO skbs must be segmented at enqueue)" \
			test "${big:-1}" = 0
		echo 0 >$TRI/events/arbtable/arbtable_dequeue/enable
		echo 0 >$TRI/events/arbtable/arbtable_dequeue/filter
	else
		tap_fail "$tag: trace instance for dequeues above the mtu (tracefs)"
	fi

	# ---- HOL waits in bytes from the trace of the whole run
	trace_analyze "$tmp/trace.$k" "10 20" "30 40" >"$tmp/tr.$k"
	local lost span tot maxlen events qrate
	lost=$(tf "$tmp/tr.$k" LOST); span=$(tf "$tmp/tr.$k" SPAN); tot=$(tf "$tmp/tr.$k" TOT)
	maxlen=$(tf "$tmp/tr.$k" MAXLEN); events=$(tf "$tmp/tr.$k" EVENTS)
	qrate=$(awk -v b="${tot:-0}" -v s="${span:-0}" 'BEGIN { printf "%.0f", (s > 0 ? b * 8e9 / s : 0) }')
	diag "$tag: trace: ${events:-0} dequeues, longest ${maxlen:-?} B, lost ${lost:-?}; window $(fcalc "${span:-0} / 1e9") s: qdisc sent ${qrate} bit/s of $C"
	local trace_ok=0
	if [ $tr_ok = 1 ] && [ "${lost:-1}" = 0 ] && [ "${events:-0}" -ge 100 ]; then
		trace_ok=1
	else
		tap_fail "$tag: dequeue trace of the run complete (tr_ok $tr_ok, lost ${lost:-?}, ${events:-0} events)"
	fi
	if [ "$LL" = 1 ] && [ $trace_ok = 1 ]; then
		local c0 c1 c2 c3 ct
		read -r c0 c1 c2 c3 ct < <(cpu_split "$tmp/trace.$k" 1:10)
		tap_check "$tag: gold's packets entered the lockless qdisc from all four CPUs, each >= 10% (CPU 0-3: $c0 $c1 $c2 $c3 of $ct in the window)" \
			fcmp "$ct >= 100 && $c0 >= 0.1 * $ct && $c1 >= 0.1 * $ct && $c2 >= 0.1 * $ct && $c3 >= 0.1 * $ct"
	fi
	local c sv mw mt mtb emp fq wb wbk nm nmax gb bb r
	for c in 1:10 1:20; do
		[ $trace_ok = 1 ] || break
		read -r _ sv mw mt mtb emp fq wb wbk _ _ nm _ < <(awk -v c=$c '$1 == c' "$tmp/tr.$k")
		# waits the trace cannot time: none under the qdisc lock; in the
		# lockless mode the dequeues that came before their enqueue event
		nmax=0; [ "$LL" = 1 ] && nmax=$((${sv:-0} / 20))
		gb=$(awk -v c=$c '$1 == c { print $9 }' "$tmp/c1.$k")
		bb=$(awk -v g="${gb:-0}" -v r=$C 'BEGIN { printf "%.0f", g * r / 8e9 }')
		r=$(reserved_bps "${c#1:}" "$k")
		diag "$tag: $c: $sv waits, worst ${mw} B of a ${bb} B bound (margin $((bb - mw)) B, $(fcalc "100 * ($bb - $mw) / $bb")%); longest in time $(fcalc "${mt:-0} / 1e6") ms carrying $mtb B; $emp services after the class had gone empty; queue at the end ${fq} B (0: the byte count is exact)"
		tap_check "$tag: $c queue followed exactly through the trace (arrivals - dequeues = $fq B after the drain)" test "${fq:-1}" = 0
		tap_check "$tag: $c head-of-line wait ${mw:-?} B <= guaranteed bound $(fcalc "${gb:-0} / 1e6") ms x rate = $bb B (dequeue trace, whole run; ${nm:-?} of $((${sv:-0} + ${nm:-0})) waits not timed, at most $nmax)" \
			fcmp "${sv:-0} > 50 && ${gb:-0} > 0 && ${mw:-0} <= $bb && ${nm:-1} <= $nmax"
		# while the class was backlogged, its part of the bytes sent is
		# at least its reserved part of the rate: time-independent, and
		# true however fast the guest (the 200 Mbit/s run cannot keep
		# the link busy under TCG)
		tap_check "$tag: $c sent $wb of the $wbk B dequeued in the window while it was backlogged >= 0.97 x reserved fraction $r/$C" \
			fcmp "${wbk:-0} > 0 && $wb / $wbk >= 0.97 * $r / $C"
	done

	# ---- rates, goodput, shares
	# per-class bytes of the window, from the trace (every dequeue)
	awk -v s="${span:-0}" '$1 == "B" { printf "%s %d %.0f 0 0\n", $2, $3, (s > 0 ? $3 * 8e9 / s : 0) }' "$tmp/tr.$k" >"$tmp/m.$k"
	echo "T $(fcalc "${span:-0} / 1e9")" >>"$tmp/m.$k"
	m_table "$tmp/m.$k" "1:10=1 1:20=1 1:30=1 1:40=1" >"$tmp/mt.$k"
	diag "$(sed '/^window/d' "$tmp/mt.$k")"
	# class rates from the trace's window (exact kernel time, every
	# byte); measure()'s device counter is not exact here: with TSO the
	# NIC counts a super-packet without its replicated headers.  The
	# qdisc must send its rate when the tenants together offered it (the
	# UDP flood alone asks for 1.2 x the link): where they did not, the
	# guest could not make the load, and a low rate is a skip that says
	# so; where they did, every rate check below fails rather than skips
	# The time the guest ran no sender (net_dev_queue gaps longer than
	# the bucket, less the bucket: in_busy) is taken out of the window:
	# busy is the fraction left.  Where the UDP flood (open loop) made
	# less than 90% of what it was asked, or the tenants together less
	# than the rate, the guest could not make the load: that, measured at
	# their veths, is the only excuse (a skip).  Where the qdisc still
	# sent less than 95% of its rate x busy, the same traffic goes through
	# the in-tree tbf at the same rate and burst (ref_rate): what that
	# carried here, measured the same way, is what this guest can carry
	# (under TCG on a loaded host both lose stalls shorter than the
	# bucket too); the checks below take the lower of the two
	local offered qfault=0 busy=1 idle="?" fl_off fl_ask gcause="" scale ref="" rb="" rbusy=""
	offered=$(awk '{ s += $2 } END { printf "%.0f", s }' "$tmp/off.$k")
	fl_off=$(awk '$1 == "flood" { print $2 }' "$tmp/off.$k") fl_ask=$((flood * 1000000))
	local bucket
	bucket=$(fcalc "${burst%k} * 1024 * 8 / $C")
	if [ -s "$tmp/in.$k" ]; then
		read -r _ busy idle < <(in_busy "$tmp/in.$k" "$bucket")
		diag "$tag: the guest ran no sender for $idle s of the window (net_dev_queue gaps beyond the bucket $bucket s): busy $busy; the tenants offered $offered bit/s, the UDP flood $fl_off of its $fl_ask"
	elif kver_ge 6 2; then
		tap_fail "$tag: trace of the skbs handed to $NET (tracefs instance)"
	else
		diag "$tag: no trace of the skbs handed to $NET before 6.2 (lib.sh in_trace_start): busy 1, no stall excused"
	fi
	fcmp "${offered:-0} < $C" && gcause="the tenants offered only $offered bit/s at their veths (upstream of the qdisc), less than $C: the guest could not make the load"
	fcmp "${fl_off:-0} < 0.9 * $fl_ask" && gcause="the UDP flood made only ${fl_off:-0} of its $fl_ask bit/s at its veth (upstream of the qdisc): the guest had not the CPU to make the load"
	scale=$busy
	if [ $trace_ok = 1 ] && [ -z "$gcause" ] && ! fcmp "${qrate:-0} >= 0.95 * $C * $busy"; then
		read -r ref rbusy < <(ref_rate "$k" "$burst" "$flood" "$win" "$bucket")
		rb=$(fcalc "${ref:-0} / ${rbusy:-1}" | sed 's/\..*//')
		diag "$tag: the in-tree tbf at the same rate and burst, the same traffic: ${ref:-?} bit/s, busy ${rbusy:-?} ($rb bit/s while busy)"
		fcmp "${rb:-0} > 0 && $rb < $C" && scale=$(fcalc "$busy * $rb / $C")
	fi
	local qd="$tag: the qdisc sent $qrate bit/s >= 0.95 x its rate $C x $scale (busy $busy${ref:+; tbf here carried $rb bit/s while busy}) in the window (trace)"
	if [ $trace_ok != 1 ]; then
		:
	elif fcmp "${qrate:-0} >= 0.95 * $C * $scale"; then
		tap_ok "$qd"
	elif [ -n "$gcause" ]; then
		tap_skip "$qd" "$gcause"
	else
		qfault=1
		tap_fail "$qd, the tenants having offered $offered bit/s at their veths"
	fi
	local gp tol cb crate off cause
	while read -r name n m p f pr; do
		r=$(reserved_bps "$m" "$k")
		[ "$r" = 0 ] && continue
		cb=$(awk -v c="1:$m" '$1 == "B" && $2 == c { print $3 }' "$tmp/tr.$k")
		crate=$(awk -v b="${cb:-0}" -v s="${span:-0}" 'BEGIN { printf "%.0f", (s > 0 ? b * 8e9 / s : 0) }')
		gp=$(t_gp "$tmp/$name.$k")
		tol=0.97; [ "$f" = 1 ] && tol=0.95
		diag "$tag: $name 1:$m reserved $r bit/s: class sent $crate bit/s in the window, TCP goodput $gp bit/s over $(ip3_rx_secs "$tmp/$name.$k.$p.json") s ($f flows)$(e=$(ip3_error "$tmp/$name.$k.$p.json"); [ -n "$e" ] && echo "; iperf3: $e")"
		# a rate below the reservation is a skip only where the tenant's
		# own senders offered less than the check asks (TCG cannot carry
		# 200 Mbit/s of TCP) and the qdisc is not the one that sent less
		# than it had; the byte-fraction check above (relative to what
		# the qdisc sent while the class was backlogged) is asserted
		# regardless
		off=$(awk -v t="$name" '$1 == t { print $2 }' "$tmp/off.$k")
		cause=
		if [ $qfault = 0 ] && [ $trace_ok = 1 ]; then
			cause=$gcause
			[ -z "$cause" ] && fcmp "${off:-0} < $tol * $r * $scale" &&
				cause="$name's senders offered only ${off:-0} bit/s at its veth (upstream of the qdisc) in the window, less than $tol x $r x $scale"
		fi
		timing_check "$tag: $name 1:$m class rate $crate bit/s >= 0.97 x reserved $r x $scale" "$cause" \
			fcmp "$crate >= 0.97 * $r * $scale"
		timing_check "$tag: $name TCP goodput $gp bit/s >= $tol x reserved $r x $scale" "$cause" \
			fcmp "$gp >= $tol * $r * $scale"
	done <<<"$TEN"
	diag "$tag: UDP flood sent $(t_gp "$tmp/flood.$k") bit/s; bronze goodput $(t_gp "$tmp/bronze.$k") bit/s"
	# shares: the bytes each share tenant sent while both held packets
	# (queues followed exactly through the trace), counted from the
	# flood's first to its last service inside each stretch where both
	# stayed backlogged: whole table rounds, so the split is the weights'
	# up to one packet of deficit carry per stretch (BXIv3 Alg. 2), and
	# independent of how fast the guest kept the link busy.  The raw
	# count over whole stretches is printed beside it: where the flood
	# goes empty between packets (a slowed guest cannot send it fast
	# enough) most stretches are shorter than one round and favour the
	# tenant that stays backlogged (sanitizer kernel, 50 Mbit/s: 100 of
	# 110 stretches under 4 KB, 72.7% whole, 66.6% aligned).
	local b30 b40 a30 a40
	read -r _ b30 b40 < <(grep '^BOTH ' "$tmp/tr.$k")
	read -r _ a30 a40 < <(grep '^ALIGNED ' "$tmp/tr.$k")
	diag "$tag: both share tenants backlogged, stretches by size, count/bronze B/flood B:$(sed -n 's/^STRETCHES//p' "$tmp/tr.$k")"
	diag "$tag: while both share tenants were backlogged: bronze $b30 B, flood $b40 B$(fcmp "${b30:-0} + ${b40:-0} > 0" && echo " (bronze $(fcalc "100 * $b30 / ($b30 + $b40)")%)")"
	tap_check "$tag: share tenants split the bytes sent in whole rounds while both were backlogged (more than 100,000 B) 20:10 within 5% (bronze 16 TCP flows: ${a30:-?} B, flood UDP: ${a40:-?} B$(fcmp "${a30:-0} + ${a40:-0} > 0" && echo ", bronze $(fcalc "100 * $a30 / ($a30 + $a40)")%, want 66.667%"))" \
		fcmp "${a30:-0} + ${a40:-0} > 100000 && $a30 / ($a30 + $a40) >= 0.95 * 2 / 3 && $a30 / ($a30 + $a40) <= 1.05 * 2 / 3"
	# the kernel's wall-clock max_hol_wait over the whole run, checked
	# against the trace: every dequeue event carries the wait the kernel
	# measured for it (wait=), so the exported maximum must be the
	# largest of those (tc prints it to 3 digits), and it is within the
	# bound, or the bytes other classes sent in that very wait (from the
	# trace, in order, whatever the clocks say) were within the bound,
	# i.e. the rest of the time the link was not served at all (under
	# TCG the guest or its shaper timer stalls for tens of ms, and a stall
	# between the clock read and the event's timestamp makes the two
	# clocks' waits differ: the 2026-11-25 CI run saw 74.3 ms in the
	# kernel and at most 45.7 ms between trace timestamps).  A wait that
	# would break the bound in link time fails here and in the byte check
	# above.
	local hol how km kmb tol
	for c in 1:10 1:20; do
		gb=$(awk -v c=$c '$1 == c { print $9 }' "$tmp/c1.$k"); hol=$(awk -v c=$c '$1 == c { print $11 }' "$tmp/c1.$k")
		read -r _ _ _ _ _ _ _ _ _ km kmb _ < <(awk -v c=$c '$1 == c' "$tmp/tr.$k" 2>/dev/null)
		bb=$(awk -v g="${gb:-0}" -v r=$C 'BEGIN { printf "%.0f", g * r / 8e9 }')
		# tc prints times with 3 significant digits ("%.3g"): half a
		# unit of the last one, as test_auto_hol allows
		tol=$(awk -v a="${km:-0}" -v b="${hol:-0}" 'BEGIN { t = a > b ? a : b
			printf "%.0f", (t > 0 ? 0.5 * 10 ^ (int(log(t) / log(10) + 1e-9) - 2) : 0) + 1 }')
		how="<= guaranteed $(fcalc "${gb:-0} / 1e6") ms"
		if ! fcmp "${gb:-0} > 0 && ${hol:-0} <= $gb"; then
			how="above the bound in wall time; in that wait (the dequeue the trace shows measured it) other classes sent ${kmb:-?} B <= $bb B (bound in link time): the link was not served for the rest"
		fi
		tap_check "$tag: $c kernel max_hol_wait $(fcalc "${hol:-0} / 1e6") ms = the largest wait its dequeue events carried ($(fcalc "${km:-0} / 1e6") ms), $how" \
			fcmp "${gb:-0} > 0 && $trace_ok == 1 && ${km:-0} > 0 && ${hol:-0} - ${km:-0} <= $tol && ${km:-0} - ${hol:-0} <= $tol && (${hol:-0} <= $gb || (${kmb:--1} >= 0 && ${kmb:--1} <= $bb))"
	done
	tc qdisc del dev "$NET" root 2>/dev/null
	true
}
# ref_tr 1 KB | ref_tr 0: the reference window's instrumentation, as the
# qdisc's (tr_on): an event per enqueue and per dequeue of NET's root
# (qdisc:qdisc_enqueue, qdisc:qdisc_dequeue) into a buffer of KB per CPU,
# which nothing reads.  A starved guest pays for the qdisc's trace in the
# rate it carries: a reference run without it excused too little (the
# slow end, 2026-12-02: the qdisc at 0.934 of its rate while busy, tbf
# untraced at 1.014)
ref_tr() {
	local e
	echo 0 >$TR/tracing_on
	if [ "$1" = 1 ]; then
		echo "$2" >$TR/buffer_size_kb && : >$TR/trace || return
	fi
	for e in qdisc_enqueue qdisc_dequeue; do
		echo "$1" >$TR/events/qdisc/$e/enable 2>/dev/null
	done
	if [ "$1" = 1 ]; then
		echo 1 >$TR/tracing_on
	else
		: >$TR/trace
		echo 1408 >$TR/buffer_size_kb
	fi
}
# ref_rate SCALE BURST FLOOD_MBIT WIN BUCKET: the phase's traffic through
# the in-tree tbf at the qdisc's rate and burst for WIN s (after the same
# warm-up, under the same trace: ref_tr); prints "bit/s busy": NET's
# transmitted bytes over the window (with TSO one header per
# super-packet: ~3% below the bytes on the wire) and the fraction of it
# in which the guest ran a sender (in_busy)
ref_rate() {
	local k=$1 burst=$2 flood=$3 win=$4 b=$5 warm=5 name n m p f pr pids="" cp="" a0 a1 t0 t1 busy
	# (replace cannot change the kind under the same handle)
	tc qdisc del dev "$NET" root 2>/dev/null
	tc qdisc add dev "$NET" root handle 1: tbf rate "$((k * 10000 / ARBT_RATE_DIV))kbit" burst "$burst" latency 200ms >&2 ||
		return
	local ip3_pids= cpids=
	t_servers
	sleep 1
	while read -r name n m p f pr; do
		t_send "$name" "$p" "$f" "$pr" "$((win + warm + 2))" "$flood" "$tmp/ref.$name"
	done <<<"$TEN"
	pids=$ip3_pids cp=$cpids
	sleep $((warm + 1))
	ref_tr 1 $((k > 1 ? 32768 : 4096))
	in_trace_start "$NET"
	read -r a0 <"/sys/class/net/$NET/statistics/tx_bytes"; t0=$EPOCHREALTIME
	sleep "$win"
	read -r a1 <"/sys/class/net/$NET/statistics/tx_bytes"; t1=$EPOCHREALTIME
	in_trace_stop "$tmp/ref.in"
	ref_tr 0
	kill $cp $pids 2>/dev/null; wait $cp $pids 2>/dev/null
	read -r _ busy _ < <(in_busy "$tmp/ref.in" "$b")
	tc qdisc del dev "$NET" root 2>/dev/null
	echo "$(fcalc "($a1 - $a0) * 8 / (${t1/,/.} - ${t0/,/.})" | sed 's/\..*//') ${busy:-1}"
}
# vh_rx_all: "TENANT rx_bytes" of every tenant's veth in the root
# namespace, read with builtins (no fork between the reads)
vh_rx_all() {
	local t b
	for t in $TENANTS_ALL; do
		read -r b <"/sys/class/net/vh-$t/statistics/rx_bytes" || b=0
		echo "$t $b"
	done
}
# timing_check DESC CAUSE CMD...: a wall-clock check; a failure is a SKIP
# only when CAUSE (measured at the sender) is given
timing_check() {
	local d=$1 cause=$2; shift 2
	if "$@"; then
		tap_ok "$d"
	elif [ -n "$cause" ]; then
		tap_skip "$d" "$cause"
	else
		tap_fail "$d"
	fi
}

# solo WIN: gold alone, one flow pinned to CPU 1 (queue 1), the classes
# and filters of phase 1 in place: a work-conserving qdisc walks past the
# idle classes' entries and gives gold the port's rate, not its 2 of 10
# Mbit/s.  The rate is asked of the time the guest ran the sender (in_busy:
# net_dev_queue gaps longer than the bucket), so no skip: a window in which
# gold kept its class backlogged and the qdisc sent less fails
solo() {
	local win=$1 warm=3 C=$((10000000 / ARBT_RATE_DIV)) tag="work conservation" ip3_pids= cpids=
	local name n m p f pr lost span tot wbk busy=1 idle=0 bucket qrate c0 c1 c2 c3 ct gp
	tc qdisc del dev "$NET" root 2>/dev/null
	run tc qdisc add dev "$NET" root handle 1: arbtable $LLW rate "$((10000 / ARBT_RATE_DIV))kbit" burst 30k highlimit 1 ||
		{ tap_fail "$tag: qdisc: $RUN_ERR"; return 1; }
	while read -r name n m p f pr; do
		run tc class add dev "$NET" parent 1: classid "1:$m" arbtable $(class_opts "$m" 1) &&
			run tc filter add dev "$NET" parent 1: protocol ip prio 1 flower src_ip "10.88.$n.2" classid "1:$m" ||
			{ tap_fail "$tag: class 1:$m and its filter: $RUN_ERR"; return 1; }
	done <<<"$TEN"
	tr_on 4096 'classid == 0x10010' || { tap_fail "$tag: trace (tracefs)"; return 1; }
	ip netns exec $NET_RX iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
	ip3_pids=$!
	sleep 1
	taskset -c 1 ip netns exec arbt-gold iperf3 -c $NET_RX_ADDR -p 5201 -P 1 -w 128K -t $((win + warm + 2)) -J >"$tmp/solo.json" 2>&1 &
	cpids=$!
	sleep $((warm + 1))
	in_trace_start "$NET"
	echo WSTART >$TR/trace_marker
	sleep "$win"
	echo WEND >$TR/trace_marker
	in_trace_stop "$tmp/in.solo"
	wait $cpids 2>/dev/null
	kill $ip3_pids 2>/dev/null; wait $ip3_pids 2>/dev/null
	drained "$NET" 1: arbtable 20 >/dev/null
	tr_off "$tmp/trace.solo"
	trace_analyze "$tmp/trace.solo" "10" "30 40" >"$tmp/tr.solo"
	lost=$(tf "$tmp/tr.solo" LOST); span=$(tf "$tmp/tr.solo" SPAN); tot=$(tf "$tmp/tr.solo" TOT)
	read -r _ _ _ _ _ _ _ _ wbk _ < <(awk '$1 == "1:10"' "$tmp/tr.solo")
	qrate=$(awk -v b="${tot:-0}" -v s="${span:-0}" 'BEGIN { printf "%.0f", (s > 0 ? b * 8e9 / s : 0) }')
	bucket=$(fcalc "30 * 1024 * 8 / $C")
	[ -s "$tmp/in.solo" ] && read -r _ busy idle < <(in_busy "$tmp/in.solo" "$bucket")
	read -r c0 c1 c2 c3 ct < <(cpu_split "$tmp/trace.solo" 1:10)
	gp=$(ip3_rx_bps "$tmp/solo.json")
	diag "$tag: window $(fcalc "${span:-0} / 1e9") s, ${tot:-0} B dequeued (${wbk:-0} B of them while 1:10 held packets), lost ${lost:-?}; the guest ran no sender for $idle s (busy $busy); gold's enqueues per CPU 0-3: $c0 $c1 $c2 $c3; its goodput $gp bit/s"
	# (a TCP sender also transmits from the CPU that takes its ACKs)
	tap_check "$tag: gold alone, one TCP flow pinned to CPU 1, reserved 2 of 10 Mbit/s: the qdisc sent $qrate bit/s >= 0.95 x the port's $C x busy $busy (trace)" \
		fcmp "${lost:-1} == 0 && $ct >= 100 && $qrate >= 0.95 * $C * $busy"
	tc qdisc del dev "$NET" root 2>/dev/null
	true
}

phase 1 30k 12 ${ARBT_TCP_WIN:-10}
[ "$LL" = 1 ] && solo ${ARBT_TCP_WIN:-10}
# The fast phase's window: 6 s, or 18 s on a slow kernel.  The KASAN guest
# keeps only ~5 of its 50 Mbit/s busy, and the whole rounds that fall in a
# 6 s window there varied ~3x between runs (59,552 B in one CI run against
# the 100,000 B the share check needs, 177 KB in the one before).
fast_win=6
[ "${ARBT_SLOW_KERNEL:-0}" = 1 ] && fast_win=18
# the bucket 12 ms of the rate (300k at 200 Mbit/s), the UDP flood 1.2 x it
fk=${ARBT_TCP_FAST_K:-20}
[ "${ARBT_TCP_FAST:-1}" = 1 ] && phase "$fk" "$((fk * 15))k" "$((fk * 12))" ${ARBT_TCP_WIN_FAST:-$fast_win}
tap_end
