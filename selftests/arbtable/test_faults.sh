#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Fault injection (issue 15, on the sanitizer kernel): failslab and
# fail_page_alloc aimed at the tc process while it adds, changes and
# deletes qdiscs and classes in both modes, grafts children and programs
# tables.  Only allocations reached through sch_arbtable's own code fail
# (the stack-trace filter spans the module's text), so every configuration
# path of the module and of what it calls (child qdisc creation, the rate
# estimator) meets a failed allocation, at a different point each trial.
#
# Every operation runs first without injection (its reference result),
# then ARBT_FAULT_TRIALS times (default 4) from the same starting state
# with injection at probability 100, 50, 25 and 10 % (each operation
# starts that cycle one step after the one before it).  Asserted for every
# trial: a failed command printed an error message and left the dump
# exactly as before; a command that succeeded left the dump its reference
# left; a failure came with at least one injected fault.  After all of it:
# no splat, and kmemleak finds nothing of ours.  The number of injected
# faults survived is printed and asserted above zero.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_debug.sh"
tap_begin "failslab / fail_page_alloc in the module's configuration paths"
trap 'fi_disarm 2>/dev/null; dev_del $DEV' EXIT

DBG=/sys/kernel/debug
[ -d $DBG/failslab ] || mount -t debugfs none $DBG 2>/dev/null
if [ ! -d $DBG/failslab ] || [ ! -f $DBG/failslab/require-start ]; then
	tap_skip "faults: inject allocation failures" \
		"this kernel has no failslab with a stack-trace filter (CONFIG_FAILSLAB, CONFIG_FAULT_INJECTION_STACKTRACE_FILTER): the sanitizer kernel has them"
	tap_end
	exit
fi
if ! have_arbtable; then
	tap_fail "faults: sch_arbtable module and tc plugin present"
	tap_end; exit
fi
TRIALS=${ARBT_FAULT_TRIALS:-4}

# The module's text: its lowest and highest text symbols, plus the last
# function's length at most (4 KiB is more than any function here).
addrs=$(awk '$4 == "[sch_arbtable]" && $2 ~ /^[tT]$/ { print $1 }' /proc/kallsyms | sort)
mod_lo=$(head -n1 <<<"$addrs")
mod_hi=$(tail -n1 <<<"$addrs")
if [ -z "$mod_lo" ] || [ "$mod_lo" = 0000000000000000 ]; then
	tap_fail "faults: the module's text symbols in /proc/kallsyms"
	tap_end; exit
fi
mod_lo=0x$mod_lo
mod_hi=$(printf '%#x' $((0x$mod_hi + 4096)))
diag "module text $mod_lo-$mod_hi"

FI_TIMES=1000000
fi_set() { echo "$2" >"$DBG/$1" 2>/dev/null || { diag "cannot write $2 to $DBG/$1"; return 1; }; }
# fi_arm PERCENT: both failure points, filtered to tasks with make-it-fail
# and to stacks that pass through the module
fi_arm() {
	local d
	for d in failslab fail_page_alloc; do
		fi_set $d/probability 0 &&
		fi_set $d/task-filter Y &&
		fi_set $d/interval 1 &&
		fi_set $d/space 0 &&
		fi_set $d/verbose 0 &&
		fi_set $d/stacktrace-depth 32 &&
		fi_set $d/require-start "$mod_lo" &&
		fi_set $d/require-end "$mod_hi" &&
		fi_set $d/ignore-gfp-wait N &&
		fi_set $d/times $FI_TIMES || return 1
	done
	fi_set fail_page_alloc/ignore-gfp-highmem N &&
	fi_set fail_page_alloc/min-order 0 &&
	fi_set failslab/probability "$1" &&
	fi_set fail_page_alloc/probability "$1"
}
# fi_disarm: off; prints how many faults were injected since fi_arm
fi_disarm() {
	local d n=0 t
	for d in failslab fail_page_alloc; do
		echo 0 >"$DBG/$d/probability"
		read -r t <"$DBG/$d/times"
		n=$((n + FI_TIMES - t))
	done
	echo "$n"
}
# the configuration as tc shows it (no statistics)
# (handles the kernel picks, 8000: and up, differ between runs)
# One tc process: under KASAN and TCG each process start costs ~0.5 s.
dump() {
	printf '%s\n' "qdisc show dev $DEV" "class show dev $DEV" "filter show dev $DEV" |
		tc -d -batch - | sed -E 's/\b[89a-f][0-9a-f]{3}:/auto:/g'
}

# State builders (tc -batch, no injection)
st_none() { tc qdisc del dev $DEV root 2>/dev/null; true; }
st_batch() { st_none; printf '%s\n' "$@" | tc -batch - >/dev/null; }
q_auto="qdisc add dev $DEV root handle 1: arbtable rate 100mbit"
q_man="qdisc add dev $DEV root handle 1: arbtable manual rate 100mbit"
st_auto() {
	st_batch "$q_auto" \
		"class add dev $DEV parent 1: classid 1:10 arbtable rate 10mbit latency 5ms" \
		"class add dev $DEV parent 1: classid 1:11 arbtable rate 2mbit distance 8" \
		"class add dev $DEV parent 1: classid 1:12 arbtable share 4" \
		"class add dev $DEV parent 1: classid 1:13 arbtable rate 1mbit latency 20ms" \
		"filter add dev $DEV parent 1: protocol ip prio 1 u32 match ip dst 10.0.0.1/32 flowid 1:12"
}
st_man() {
	st_batch "$q_man" \
		"class add dev $DEV parent 1: classid 1:10 arbtable" \
		"class add dev $DEV parent 1: classid 1:11 arbtable ceil 5mbit" \
		"class add dev $DEV parent 1: classid 1:12 arbtable" \
		"qdisc change dev $DEV root handle 1: arbtable high 10:20,11:30 low 12:4,10:1 priomap 10 11 12 12 10 11 12 12 10 11 12 12 10 11 12 12"
}
st_auto0() { st_batch "$q_auto"; }
st_graft() { st_man && tc qdisc add dev $DEV parent 1:10 handle 10: fq_codel >/dev/null; }

survived=0
nop=0
# op DESC STATE CMD...: the operation CMD (tc arguments) from state STATE
op() {
	local desc=$1 state=$2 before ref after out rc i n p ps= bad=0 nfail=0 nok=0 inj=0
	shift 2
	$state || { tap_fail "faults: $desc: set up the starting state"; return; }
	before=$(dump)
	if ! out=$(tc "$@" 2>&1); then
		tap_fail "faults: $desc: runs without injection"
		diag "tc $*: $out"
		return
	fi
	ref=$(dump)
	for ((i = 0; i < TRIALS; i++)); do
		# each op starts the 100/50/25/10 % cycle one step further on,
		# so that with fewer than 4 trials (make test: 1) the ops
		# still meet failures at every depth between them
		case $(((i + nop) % 4)) in 0) p=100 ;; 1) p=50 ;; 2) p=25 ;; *) p=10 ;; esac
		ps="$ps $p"
		$state || { bad=1; diag "trial $i: starting state not built"; break; }
		after=$(dump)
		[ "$after" = "$before" ] || { bad=1; diag "trial $i: starting state differs from the first build"; break; }
		fi_arm $p || { bad=1; break; }
		out=$(sh -c 'echo 1 >/proc/self/make-it-fail && exec "$@"' sh tc "$@" 2>&1)
		rc=$?
		n=$(fi_disarm)
		inj=$((inj + n))
		after=$(dump)
		if [ "$rc" != 0 ]; then
			nfail=$((nfail + 1))
			if [ "$n" = 0 ]; then
				bad=1; diag "trial $i: failed with no fault injected: $out"
			fi
			if [ -z "$out" ]; then
				bad=1; diag "trial $i: failed (rc $rc) without a message"
			fi
			if [ "$after" != "$before" ]; then
				bad=1
				diag "trial $i: failed ($out) but changed the configuration:"
				diag "$(diff <(echo "$before") <(echo "$after") | head -n 12)"
			fi
		else
			nok=$((nok + 1))
			if [ "$after" != "$ref" ]; then
				bad=1
				diag "trial $i: succeeded with $n fault(s) injected but the result differs from its reference:"
				diag "$(diff <(echo "$ref") <(echo "$after") | head -n 12)"
			fi
		fi
	done
	survived=$((survived + inj))
	nop=$((nop + 1))
	ps=${ps# }
	diag "$desc: $TRIALS trials (at ${ps// / %, } %), $inj faults injected, $nfail failed cleanly, $nok succeeded"
	tap_check "faults: $desc: each failure has a message and leaves the dump as it was; each success matches the reference" test "$bad" = 0
}

dummy_up $DEV
klog_mark
# Only operations that allocate through the module: a class change of
# ceil, a class delete and grafting a child the core created allocate
# nothing there (measured: 0 faults in 4 trials each), so they are not
# repeated here; test_config and test_stress cover them.
op "auto: qdisc add" st_none qdisc add dev $DEV root handle 1: arbtable rate 100mbit
op "auto: class add with rate and latency (admission)" st_auto class add dev $DEV parent 1: classid 1:20 arbtable rate 5mbit latency 2ms
op "auto: class add with a share" st_auto class add dev $DEV parent 1: classid 1:21 arbtable share 2
op "auto: class add with an estimator" st_auto class add dev $DEV parent 1: classid 1:22 est 1sec 8sec arbtable rate 1mbit
op "auto: class change rate (reallocation)" st_auto class change dev $DEV classid 1:11 arbtable rate 20mbit latency 5ms
op "auto: class change to a share" st_auto class change dev $DEV classid 1:10 arbtable share 3
op "auto: class delete (release and defragment)" st_auto class del dev $DEV classid 1:10
op "auto: qdisc change rate (no reservations yet)" st_auto0 qdisc change dev $DEV root handle 1: arbtable rate 200mbit
op "auto: qdisc replace by a new manual arbtable" st_auto qdisc replace dev $DEV root handle 2: arbtable manual rate 50mbit
op "manual: qdisc add" st_none qdisc add dev $DEV root handle 1: arbtable manual rate 100mbit highlimit 5
op "manual: class add" st_man class add dev $DEV parent 1: classid 1:13 arbtable strict ceil 1mbit
op "manual: program tables and priomap" st_man qdisc change dev $DEV root handle 1: arbtable high 12:50,10:10@4 low 11:3 priomap 12 12 10 10 12 12 10 10 12 12 10 10 12 12 10 10
op "manual: delete a grafted child" st_graft qdisc del dev $DEV parent 1:10 handle 10:
op "manual: qdisc delete" st_graft qdisc del dev $DEV root
st_none
diag "faults injected and survived: $survived"
tap_check "faults: faults were injected ($survived survived)" test "$survived" -gt 0
phase_checks "faults"
tap_end
