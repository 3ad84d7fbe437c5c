#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Dumps racing the datapath (issue 27; made for the KCSAN kernel, `make
# check-kcsan`, and run everywhere check-debug runs every test).  Paced
# pktgen producers keep classes and the unclassified queue busy on both
# CPUs' pktgen threads behind a 10 Mbit/s qdisc (a shaper, and a class
# ceil: the throttle and watchdog paths run too) while, for
# ARBT_DUMPRACE_SECS seconds (default 20) per mode, two loops run beside
# them:
#  - two dumpers, each dump going through the qdisc's dump and dump_stats
#    and every class's dump and dump_class_stats (the dump_stats that once
#    read the counters without the qdisc lock among them): arbt_nlfuzz -D,
#    netlink dumps back to back (KCSAN samples one memory access in
#    thousands, so a race is found in proportion to the racing reads: the
#    old dump_stats, put back for a try, went unreported through 120 s of
#    the tc dumper alone), and `tc -s -d -batch` of qdisc and class shows,
#    which parses what tc users see;
#  - a changer: netlink changes of what the datapath reads, under it.
#    Auto mode: class rate/distance/ceil changes (slot swaps), qdisc
#    burst changes, child grafts.  Manual mode: table reprogramming,
#    accounting (deficit/iba) and highlimit changes, class ceil changes,
#    child grafts.
# Checked: every change accepted; every dump parsed, every tc class dump
# listed every class; the counters of the qdisc and of each class (sent
# bytes and packets, drops; the qdisc's xstats counters) never went back
# from one dump to the next (a torn or stale read shows as a step back);
# traffic flowed through the window; after it the qdisc drains and the
# class counters add up.  Then the kernel
# log: no splat, and on the KCSAN kernel no KCSAN report that involves
# sch_arbtable (lib_debug.sh's klog_clean; other reports are printed).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_auto.sh"
. "$(dirname "$0")/lib_debug.sh"
_bg=
# shellcheck disable=SC2016 # _bg at exit
pg_test_begin "dump race" "dumps and changes racing the datapath" 'kill $_bg 2>/dev/null; wait 2>/dev/null'
FUZZ=$ARBT_ROOT/build/nlfuzz/arbt_nlfuzz
[ -x "$FUZZ" ] || { tap_fail "dump race: $FUZZ built (make all)"; tap_end; exit; }
SECS=${ARBT_DUMPRACE_SECS:-20}
klog_mark
have_kcsan && diag "KCSAN before: $(kcsan_stats)"

# pg_halt: stop the producers but keep their counters readable
pg_halt() {
	echo stop >"$PG/pgctrl" 2>/dev/null
	[ -n "$_pg_pid" ] && wait "$_pg_pid" 2>/dev/null
	_pg_pid=
}
# dumper FILE_PREFIX: dump batches until $tmp/stop appears; one output
# file per batch, numbered, so their order is the dumps' order
dumper() {
	local n=0
	# 10 qdisc and 10 class dumps per tc run
	for ((i = 0; i < 10; i++)); do
		echo "qdisc show dev $DEV"
		echo "class show dev $DEV"
	done >"$tmp/dumps"
	while [ ! -e "$tmp/stop" ]; do
		n=$((n + 1))
		tc -s -d -batch "$tmp/dumps" >"$1.$(printf %06d $n)" 2>&1
	done
}
# changer CMDFILE: tc -force -batch CMDFILE until $tmp/stop appears;
# prints "runs failed-commands" at the end
changer() {
	local runs=0 failed=0 f
	while [ ! -e "$tmp/stop" ]; do
		runs=$((runs + 1))
		tc -force -batch "$1" >"$1.out" 2>&1
		f=$(grep -c '^Command failed' "$1.out")
		[ "$f" = 0 ] || { failed=$((failed + f)); cp "$1.out" "$1.failed"; }
	done
	echo "$runs $failed" >"$1.result"
}
# dumps_check PREFIX NCLASSES: every class dump listed NCLASSES classes;
# the qdisc's and every class's sent bytes and packets never went back
# between consecutive dumps, nor did their drops while the class kept its
# child: a class's queue statistics are its child's, as drr's are, so a
# graft (the changer's "qdisc replace ... parent 1:30") starts them again
# from the new child's (check-kcsan, 2026-11-27: 1:30 drops 147 -> 0 at a
# graft, its bytes still rising).  Prints what went wrong.
dumps_check() {
	cat "$1".* | awk -v ncl="$2" '
	$1 == "qdisc" { cur = ($2 == "arbtable" && $3 == "1:") ? "qdisc" : ""; leaf = ""; if (cur != "") nq++
		if (inc) { if (k != ncl) { printf "# a class dump listed %d classes, not %d\n", k, ncl; bad = 1 }; inc = 0 }
		next }
	$1 == "class" && $2 == "arbtable" { cur = $3; if (!inc) { inc = 1; k = 0; nc++ }; k++
		leaf = match($0, / leaf [0-9a-f]+:/) ? substr($0, RSTART + 6, RLENGTH - 6) : ""
		if ((cur in lf) && lf[cur] != leaf) delete dr[cur]
		lf[cur] = leaf
		next }
	$1 == "class" { cur = ""; next }
	cur != "" && $1 == "Sent" {
		d = $7; sub(/,/, "", d)
		if (cur in sb && ($2 + 0 < sb[cur] || $4 + 0 < sp[cur] || ((cur in dr) && d + 0 < dr[cur]))) {
			printf "# %s went back: sent %s bytes %s pkts %s dropped after %s %s %s (child %s)\n", cur, $2, $4, d, sb[cur], sp[cur], dr[cur], leaf
			bad = 1
		}
		sb[cur] = $2 + 0; sp[cur] = $4 + 0; dr[cur] = d + 0
	}
	/^(Error|RTNETLINK|Command failed)/ { printf "# dump error: %s\n", $0; bad = 1 }
	END { if (inc && k != ncl) { printf "# a class dump listed %d classes, not %d\n", k, ncl; bad = 1 }
		printf "# %d qdisc dumps, %d class dumps\n", nq, nc
		if (nq == 0 || nc == 0) bad = 1
		exit bad }'
}

# race MODE NCLASSES CMDFILE: the window: dumper and changer beside the
# traffic for SECS s; then the checks
race() {
	local mode=$1 ncl=$2 cmds=$3 s0 s1 res out rc
	rm -f "$tmp/stop" "$tmp/d".*
	pg_start
	sleep 2
	read -r _ s0 _ <<<"$(qd_stats $DEV 1:)"
	"$FUZZ" -d $DEV -D "$SECS" >"$tmp/loop.out" 2>&1 &
	_bg="$!"
	dumper "$tmp/d" &
	_bg="$_bg $!"
	changer "$cmds" &
	_bg="$_bg $!"
	sleep "$SECS"
	touch "$tmp/stop"
	wait $_bg
	_bg=
	read -r _ s1 _ <<<"$(qd_stats $DEV 1:)"
	read -r res <"$cmds.result"
	diag "$mode: $SECS s: $(ls "$tmp"/d.* | wc -l) tc dump batches, changer: runs and failed commands: $res; qdisc sent $s0 -> $s1 packets"
	tap_check "dump race: $mode: the changes ran (${res%% *} runs of the batch), every one accepted" \
		test "${res%% *}" -gt 0 -a "${res#* }" = 0
	[ ! -e "$cmds.failed" ] || diag "$(grep -A1 '^Command failed' "$cmds.failed" | head -n 6)"
	out=$(dumps_check "$tmp/d" "$ncl")
	rc=$?
	# what went wrong (its lines are diagnostics already)
	echo "$out" | head -n 20
	tap_check "dump race: $mode: every tc dump complete, no counter went back between dumps" test $rc = 0
	diag "$out"
	while IFS= read -r l; do
		case $l in
		"ok - "*) tap_ok "dump race: $mode: ${l#ok - }" ;;
		"not ok - "*) tap_fail "dump race: $mode: ${l#not ok - }" ;;
		*) diag "${l#\# }" ;;
		esac
	done <"$tmp/loop.out"
	grep -q '^ok - \|^not ok - ' "$tmp/loop.out" || tap_fail "dump race: $mode: $(basename "$FUZZ") -D reported its checks"
	tap_check "dump race: $mode: traffic flowed during the window ($s0 -> $s1 packets)" test "${s1:-0}" -gt "${s0:-0}"
	pg_halt
	tap_check "dump race: $mode: qdisc drains to backlog 0, qlen 0" drained $DEV 1: arbtable 30
	tap_check "dump race: $mode: class counters add up to the qdisc's" sums_ok
	pg_stop
	tap_check "dump race: $mode: no BUG/WARNING/KASAN/UBSAN/lockdep splat or KCSAN report on sch_arbtable in the kernel log" klog_clean
	klog_mark
}

# race_mode MODE: the race in MODE (auto, manual) on the qdisc and
# classes setup_MODE makes, with the changes changes_MODE prints
race_mode() {
	if "setup_$1"; then
		"changes_$1" >"$tmp/$1.cmds"
		race "$1" 4 "$tmp/$1.cmds"
	else
		tap_fail "dump race: $1 setup"
	fi
}
# root_setup [OPTION...]: the dummy device and its 10 Mbit/s root
root_setup() {
	auto_dev $DEV 300 || return 1
	run tc qdisc add dev $DEV root handle 1: arbtable "$@" rate 10mbit || { diag "$RUN_ERR"; return 1; }
}

# ------------------------------------------------------- auto mode
# stress's auto tenants (test_stress.sh): 2 Mbit/s, 1 Mbit/s, 500 kbit/s
# HIGH, a LOW share, and a producer no class takes (unclassified)
setup_auto() {
	root_setup || return 1
	arb_class 10 rate 2mbit latency 50ms && arb_class 11 rate 1mbit distance 8 ceil 3mbit &&
		arb_class 13 rate 500kbit distance 16 && arb_class 30 share 10 || return 1
	auto_traffic "10:1500:600 11:1000:400 13:600:300 30:800:150 100:700:300"
}
changes_auto() {
	local i
	for ((i = 0; i < 8; i++)); do
		echo "class change dev $DEV classid 1:11 arbtable rate $((1000 + 200 * (i % 2)))kbit distance 8 ceil $((3 - i % 2))mbit"
		echo "class change dev $DEV classid 1:13 arbtable rate $((500 - 100 * (i % 2)))kbit distance $((16 << (i % 2)))"
		echo "qdisc change dev $DEV root handle 1: arbtable rate 10mbit burst $((30 + 30 * (i % 2)))k"
		# a new handle each run of the batch would be a graft too; this
		# alternates two kinds on the LOW class
		[ $((i % 4)) = 3 ] && echo "qdisc replace dev $DEV parent 1:30 handle $((0x300 + i % 8)): $([ $((i % 8)) = 3 ] && echo "fq_codel limit 100" || echo "pfifo limit 100")"
	done
}
race_mode auto

# ------------------------------------------------------- manual mode
setup_manual() {
	root_setup manual || return 1
	local m
	for m in 10 11 12 13; do arb_class $m || return 1; done
	run tc class change dev $DEV classid 1:13 arbtable ceil 2mbit || { diag "$RUN_ERR"; return 1; }
	arb_change high 10:20,11:30,12:40 low 13:4 || return 1
	auto_traffic "10:1500:500 11:1000:500 12:700:500 13:600:300 100:700:200"
}
changes_manual() {
	local i a b c t acc w=(10 20 30 40)
	for ((i = 0; i < 10; i++)); do
		a=${w[i % 4]} b=${w[(i + 1) % 4]} c=${w[(i + 2) % 4]}
		case $((i % 5)) in
		0) t="high 10:$a,11:$b,12:$c low 13:4" ;;
		1) t="high 12:$c@3,11:$b@7,10:$a@63 low 13:2,10:1" ;;
		2) t="high 10:$a,-,11:$b,-,12:$c,10:$i low 13:$((i + 1))" ;;
		3) t="high 13:$a@0,12:$b@1 low 10:2,11:2" ;;
		4) t="high none low 10:$a,11:$b,12:$c,13:4" ;;
		esac
		acc=$([ $((i % 2)) = 0 ] && echo deficit || echo iba)
		echo "qdisc change dev $DEV root handle 1: arbtable $t accounting $acc highlimit $((i * 50 % 256))"
		echo "class change dev $DEV classid 1:13 arbtable ceil $((1 + i % 3))mbit"
		[ $((i % 5)) = 4 ] && echo "qdisc replace dev $DEV parent 1:12 handle $((0x400 + i % 10)): $([ $((i % 10)) = 4 ] && echo "fq_codel limit 100" || echo "pfifo limit 100")"
	done
}
race_mode manual
have_kcsan && diag "KCSAN after: $(kcsan_stats)"
tap_end
