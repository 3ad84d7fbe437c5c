#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Stress and faults under traffic (issue 4), every class backlogged by
# paced pktgen producers on a dummy device behind a 10 Mbit/s qdisc rate:
#  1. auto mode: ARBT_STRESS_CYCLES (default 10000) class add / change /
#     del cycles through one `tc -batch` (eight churned classes live at a
#     time; one producer feeds a churned class, so classes die with
#     packets queued);
#  2. manual mode: ARBT_STRESS_MANUAL (default 1000) cycles of class add,
#     table change naming it, table change dropping it, class del;
#  3. child qdisc graft under traffic (pfifo, fq_codel, netem, pfifo ...);
#  4. ARBT_STRESS_REPLACE (default 10) rounds of root qdisc replace
#     (arbtable <-> pfifo) and delete/re-add;
#  5. ARBT_STRESS_DOWNUP (default 5) device down/up cycles;
#  6. module unload refused while a qdisc is attached, clean after.
# After the phases where the qdisc lives on: it drains to backlog 0 /
# qlen 0, every packet pktgen handed it was either sent or counted as a
# drop (pktgen's successes + errors = the qdisc's sent + dropped), class
# counters add up to the qdisc's.  After every phase the kernel log has
# no splat; after the down/up phase and after the unload, on a kmemleak
# kernel (the sanitizer kernel), nothing the module or tc allocated is
# unreferenced (lib_debug.sh); the runner checks both again after the
# suite.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_auto.sh"
. "$(dirname "$0")/lib_debug.sh"
tap_begin "stress: churn, graft, replace, down/up, unload under traffic"
tmp=$(mktemp -d)
# Since 7.x a packet can be dropped before any qdisc sees it:
# __dev_xmit_skb() queues senders on a lockless list while one of them
# takes the root lock, and drops beyond net.core.qdisc_max_burst (1000)
# waiting packets (SKB_DROP_REASON_QDISC_BURST_DROP, in no qdisc counter).
# A tc command holding the tree lock while a slow guest's pktgen threads
# keep sending can get there; the accounting check below means packets
# the qdisc was handed, so the limit is lifted for the test.  (One KCSAN
# run under TCG found 318 of 48,914 packets in neither counter; a re-run
# tracing that drop reason saw none and passed.)
max_burst=$(sysctl -n net.core.qdisc_max_burst 2>/dev/null)
[ -z "$max_burst" ] || sysctl -qw net.core.qdisc_max_burst=1000000000
trap 'pg_stop; dev_del $DEV; rm -rf $tmp; [ -z "$max_burst" ] || sysctl -qw net.core.qdisc_max_burst=$max_burst' EXIT
have_arbtable || { tap_fail "stress: module and plugin present"; tap_end; exit; }
CYCLES=${ARBT_STRESS_CYCLES:-10000}
MANUAL=${ARBT_STRESS_MANUAL:-1000}
DOWNUP=${ARBT_STRESS_DOWNUP:-5}
REPLACE=${ARBT_STRESS_REPLACE:-10}
phase_t0=$SECONDS
klog_mark
# phase_time NAME [leaks]: how long the phase took, then the kernel log
# check; with "leaks", kmemleak's too (lib_debug.sh).  A kmemleak scan
# of the KASAN guest takes seconds: the leak check runs after the last
# phase that keeps the module loaded (it covers every phase before: an
# object leaked there is unreferenced at every later scan) and after
# the unload.
phase_time() {
	diag "$1 took $((SECONDS - phase_t0)) s"
	if [ "${2:-}" = leaks ]; then
		phase_checks "stress: $1"
	else
		tap_check "stress: $1: no BUG/WARNING/KASAN/UBSAN/lockdep splat in the kernel log" klog_clean
		klog_mark
	fi
	phase_t0=$SECONDS
}

# ------------------------------------------------------- local helpers
# pg_halt: stop the producers but keep their counters readable
pg_halt() {
	echo stop >"$PG/pgctrl" 2>/dev/null
	[ -n "$_pg_pid" ] && wait "$_pg_pid" 2>/dev/null
	_pg_pid=
}
# pg_handed: packets pktgen handed to the qdisc, accepted + refused
pg_handed() {
	cat "$PG"/"$DEV"@* 2>/dev/null | awk '
		/pkts-sofar:/ { for (i = 1; i < NF; i++) { if ($i == "pkts-sofar:") s += $(i + 1); if ($i == "errors:") e += $(i + 1) } }
		END { printf "%d %d\n", s, e }'
}
# accounted: after a drain, pktgen's successes + errors = the qdisc's
# sent + dropped (a packet is sent once or counted as a drop, never both,
# never neither)
accounted() {
	local ok err qp dr
	read -r ok err <<<"$(pg_handed)"
	read -r _ qp dr _ _ <<<"$(qd_stats $DEV 1:)"
	diag "pktgen handed $((ok + err)) packets ($ok accepted, $err refused); qdisc sent $qp, dropped $dr"
	[ $((ok + err)) -gt 0 ] && [ $((ok + err)) = $((qp + dr)) ]
}
# batch FILE: tc -batch -force FILE; prints the number of failed commands
# (tc exits 1 after failed commands; a crash, or a non-zero exit without
# a failed command, is reported as such and is not 0 either)
batch() {
	local rc n
	tc -force -batch "$1" >"$1.out" 2>&1
	rc=$?
	n=$(grep -c '^Command failed' "$1.out")
	if [ "$rc" -gt 1 ] || { [ "$rc" != 0 ] && [ "$n" = 0 ]; }; then
		echo "tc-exited-$rc-after-$n-failed"
	else
		echo "$n"
	fi
}

# ------------------------------------------------------- 1. auto churn
# Permanent tenants (44 HIGH slots, 3.5 Mbit/s reserved) plus up to eight
# churned classes at distance 32 or 64 (at most 16 slots, 1.6 Mbit/s):
# every add and change fits, so every command must succeed.
auto_setup() {
	auto_dev $DEV 300 || return 1
	# one tc for the qdisc and its classes (tc -batch stops at the first
	# failure and names its line)
	run tc -batch - <<-EOF || { diag "$RUN_ERR"; return 1; }
		qdisc add dev $DEV root handle 1: arbtable rate 10mbit
		class add dev $DEV parent 1: classid 1:10 arbtable rate 2mbit latency 50ms
		class add dev $DEV parent 1: classid 1:11 arbtable rate 1mbit distance 8
		class add dev $DEV parent 1: classid 1:13 arbtable rate 500kbit distance 16
		class add dev $DEV parent 1: classid 1:30 arbtable share 10
	EOF
	auto_traffic "10:1500:600 11:1000:400 13:600:300 30:800:150 100:700:300"
}
if auto_setup; then
	awk -v n="$CYCLES" -v dev=$DEV 'BEGIN {
		# step i: add A(i), change A(i-4), delete A(i-7); A(i) = 1:(100 + i % 8)
		for (i = 0; i < n + 7; i++) {
			if (i < n) printf "class add dev %s parent 1: classid 1:%x arbtable rate %dkbit %s\n", dev, 256 + i % 8, 60 + 20 * (i % 3), (i % 2 ? "distance 64" : "latency 900ms")
			if (i >= 4 && i - 4 < n) printf "class change dev %s classid 1:%x arbtable rate %dkbit distance 32\n", dev, 256 + (i - 4) % 8, 100 + 25 * (i % 3)
			if (i >= 7 && i - 7 < n) printf "class del dev %s classid 1:%x\n", dev, 256 + (i - 7) % 8
		}
	}' >"$tmp/churn"
	pg_start
	sleep 2
	auto_cls >"$tmp/sent0"
	nfail=$(batch "$tmp/churn")
	# the permanent classes kept their traffic through the churn: each
	# sent more by a second after it (a lost slot or class stops that;
	# the LOW class gets one packet per 64 KB of HIGH, ~20 a second);
	# backlogged or not is the producers' speed (half their rate under
	# KCSAN)
	sleep 1
	m_ok=0
	auto_cls | awk 'NR == FNR { s0[$1] = $12; next }
		$1 ~ /^1:1[0-3]$|^1:30$/ { if ($12 > s0[$1]) n++; printf "%s +%d B (backlog %d p) ", $1, $12 - s0[$1], $13 }
		END { exit n != 4 }' "$tmp/sent0" - >"$tmp/sent1" && m_ok=1
	tap_check "stress: $CYCLES auto add/change/del cycles ($(wc -l <"$tmp/churn") tc commands) under traffic, none failed" \
		test "$nfail" = 0
	[ "$nfail" = 0 ] || diag "$(grep -A1 '^Command failed' "$tmp/churn.out" | head -n 6)"
	tap_check "stress: permanent classes sent through the churn and a second after ($(sed "s/ $//" "$tmp/sent1"))" test $m_ok = 1
	tap_check "stress: table layout exact after the churn (slots d apart, occupancy)" auto_layout
	pg_halt
	tap_check "stress: churn: qdisc drains to backlog 0, qlen 0" drained $DEV 1: arbtable 30
	tap_check "stress: churn: every packet handed to the qdisc sent or counted dropped" accounted
	pg_stop
	tap_check "stress: churn: only the permanent classes are left" \
		bash -c "[ \"\$(tc class show dev $DEV | grep -c '^class arbtable')\" = 4 ]"
else
	tap_fail "stress: auto setup"
fi
phase_time "auto churn"

# ------------------------------------------------------- 2. manual churn
man_setup() {
	auto_dev $DEV 300 || return 1
	run tc -batch - <<-EOF || { diag "$RUN_ERR"; return 1; }
		qdisc add dev $DEV root handle 1: arbtable manual rate 10mbit
		class add dev $DEV parent 1: classid 1:10 arbtable
		class add dev $DEV parent 1: classid 1:11 arbtable
		class add dev $DEV parent 1: classid 1:12 arbtable
		qdisc change dev $DEV root handle 1: arbtable high 10:20,11:30,12:40 low 12:4
	EOF
	auto_traffic "10:1500:500 11:1000:500 12:700:500 20:600:300"
}
if man_setup; then
	awk -v n="$MANUAL" -v dev=$DEV 'BEGIN {
		for (i = 0; i < n; i++) {
			c = 32 + i % 4	# 1:20..1:23; the producer feeds 1:20
			printf "class add dev %s parent 1: classid 1:%x arbtable\n", dev, c
			printf "qdisc change dev %s root handle 1: arbtable high 10:20,%x:%d,11:30,12:40 low %x:%d,12:4\n", dev, c, 1 + i % 200, c, 1 + i % 7
			printf "qdisc change dev %s root handle 1: arbtable high 10:20,11:30,12:40 low 12:4\n", dev
			printf "class del dev %s classid 1:%x\n", dev, c
		}
	}' >"$tmp/manual"
	pg_start
	sleep 2
	nfail=$(batch "$tmp/manual")
	tap_check "stress: $MANUAL manual add/table/untable/del cycles under traffic, none failed" test "$nfail" = 0
	[ "$nfail" = 0 ] || diag "$(grep -A1 '^Command failed' "$tmp/manual.out" | head -n 6)"
	pg_halt
	tap_check "stress: manual churn: qdisc drains to backlog 0, qlen 0" drained $DEV 1: arbtable 30
	tap_check "stress: manual churn: every packet handed to the qdisc sent or counted dropped" accounted
	pg_stop
else
	tap_fail "stress: manual setup"
fi
phase_time "manual churn"

# ------------------------------------------------------- 3. graft
if man_setup; then
	kinds=("fq_codel limit 200" "netem delay 1ms limit 100" pfifo "pfifo limit 5" "fq_codel limit 50" "netem delay 2ms limit 50")
	: >"$tmp/graft"
	for ((i = 0; i < 60; i++)); do
		# a new handle each time: replace of an existing handle with
		# another kind is a (refused) change, not a graft
		echo "qdisc replace dev $DEV parent 1:$((10 + i % 3)) handle $(printf '%x' $((0x200 + i))): ${kinds[i % ${#kinds[@]}]}" >>"$tmp/graft"
	done
	pg_start
	sleep 2
	nfail=$(batch "$tmp/graft")
	tap_check "stress: 60 child grafts (fq_codel, netem, pfifo) under traffic, none failed" test "$nfail" = 0
	[ "$nfail" = 0 ] || diag "$(grep -A1 '^Command failed' "$tmp/graft.out" | head -n 6)"
	sleep 1
	pg_halt
	tap_check "stress: graft: qdisc drains to backlog 0, qlen 0" drained $DEV 1: arbtable 30
	tap_check "stress: graft: every packet handed to the qdisc sent or counted dropped" accounted
	tap_check "stress: graft: class counters add up to the qdisc's" sums_ok
	pg_stop
else
	tap_fail "stress: graft setup"
fi
phase_time "graft"

# ------------------------------------------------------- 4. replace / delete
if man_setup; then
	pg_start
	sleep 1
	bad=0
	for ((i = 0; i < REPLACE; i++)); do
		run tc qdisc replace dev $DEV root handle 2: pfifo limit 100 || { diag "to pfifo: $RUN_ERR"; bad=1; }
		run tc qdisc replace dev $DEV root handle 1: arbtable manual rate 10mbit || { diag "to arbtable: $RUN_ERR"; bad=1; }
		run tc qdisc del dev $DEV root || { diag "del: $RUN_ERR"; bad=1; }
		run tc qdisc add dev $DEV root handle 1: arbtable rate 10mbit || { diag "add: $RUN_ERR"; bad=1; }
		run tc class add dev $DEV parent 1: classid 1:10 arbtable rate 2mbit || { diag "class: $RUN_ERR"; bad=1; }
	done
	tap_check "stress: $REPLACE rounds of root replace arbtable<->pfifo and delete/re-add under traffic" test $bad = 0
	sleep 2
	carries() { [ "$(cls_stats $DEV arbtable | awk '$1 == "1:10" { print $3 }')" -gt 0 ] 2>/dev/null; }
	tap_check "stress: replace: the last arbtable's class 1:10 carries traffic" carries
	pg_halt
	tap_check "stress: replace: the last qdisc drains to backlog 0, qlen 0" drained $DEV 1: arbtable 30
	tap_check "stress: replace: class counters add up to the last qdisc's" sums_ok
	pg_stop
else
	tap_fail "stress: replace setup"
fi
phase_time "replace/delete"

# ------------------------------------------------------- 5. down / up
if man_setup; then
	bad=0
	for ((i = 0; i < DOWNUP; i++)); do
		pg_start
		sleep 1
		ip link set $DEV down || bad=1
		read -r _ _ _ bb bp <<<"$(qd_stats $DEV 1:)"
		[ "$bb" = 0 ] && [ "$bp" = 0 ] || { diag "after down: backlog ${bb}B ${bp}p"; bad=1; }
		pg_halt
		ip link set $DEV up || bad=1
		# pktgen stops its devices when the link goes down: re-add them
		auto_traffic "10:1500:500 11:1000:500 12:700:500 20:600:300" || bad=1
	done
	tap_check "stress: $DOWNUP device down/up cycles under traffic: backlog 0 right after down" test $bad = 0
	pg_start
	sleep 2
	read -r s0 <<<"$(qd_stats $DEV 1: | cut -d' ' -f2)"
	sleep 1
	read -r s1 <<<"$(qd_stats $DEV 1: | cut -d' ' -f2)"
	tap_check "stress: down/up: traffic flows again after the last up ($s0 -> $s1 packets)" test "$s1" -gt "$s0"
	pg_halt
	tap_check "stress: down/up: qdisc drains to backlog 0, qlen 0" drained $DEV 1: arbtable 30
	tap_check "stress: down/up: class counters add up to the qdisc's" sums_ok
	pg_stop
else
	tap_fail "stress: down/up setup"
fi
phase_time "down/up" leaks

# ------------------------------------------------------- 6. unload
if man_setup; then
	pg_start
	sleep 1
	tap_check "stress: rmmod sch_arbtable refused while a qdisc is attached" bash -c '! rmmod sch_arbtable 2>/dev/null'
	tap_check "stress: module and qdisc still work after the refused unload" \
		bash -c "grep -q '^sch_arbtable ' /proc/modules && tc -s class show dev $DEV | grep -q '^class arbtable 1:10'"
	pg_stop
	run tc qdisc del dev $DEV root
	dev_del $DEV
	# the module file (out of tree, or the kernel tree's) is always
	# there: it was loaded from it
	KO=$(arb_module_file)
	tap_check "stress: rmmod sch_arbtable succeeds once no qdisc uses it" rmmod sch_arbtable
	tap_check "stress: module gone after rmmod" bash -c "! grep -q '^sch_arbtable ' /proc/modules"
	reload() {
		arb_load_module && ip link add $DEV type dummy &&
		tc qdisc add dev $DEV root handle 1: arbtable rate 10mbit &&
		tc qdisc del dev $DEV root && ip link del $DEV
	}
	tap_check "stress: module loads again (${KO:-no module file}) and a qdisc attaches" reload
else
	tap_fail "stress: unload setup"
fi
phase_time "unload" leaks
tap_end
