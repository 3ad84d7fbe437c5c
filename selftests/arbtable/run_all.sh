#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Guest-side runner: runs every test_*.sh here (or those named on the
# command line / in $ARBT_TESTS), renumbers their results into one TAP 13
# stream and ends with the plan.  One VM boot runs the whole suite.
# Nothing here clears the kernel log: each test's window of it (its
# records by sequence number, lib_debug.sh's klog_read) is scanned after
# the test, and a splat in it fails that test; so is the window from boot
# to the first test (the module's load) and the one after the last.
cd "$(dirname "$0")" || exit 1
export ARBT_RUNNER=1 ARBT_DIR=$PWD
per_test_timeout=${ARBT_TEST_TIMEOUT:-600}
# the tests that pace themselves (test_tdc.sh) read the real limit
export ARBT_TEST_TIMEOUT=$per_test_timeout

tests=("$@")
[ ${#tests[@]} -gt 0 ] || read -r -a tests <<<"${ARBT_TESTS:-}"
if [ ${#tests[@]} -eq 0 ]; then
	tests=(test_*.sh)
fi

# forks_at: the guest's forks since boot (/proc/stat's "processes") into
# REPLY, read with builtins.  Each test's count is printed beside its
# time: under TCG a process start costs 80-200 ms (tc 170-210 ms, awk
# 115, a bash subshell 14; 7.2 guest, 2026-11-30), and most of the
# suite's time is its tests' tc, ip and awk runs.
forks_at() {
	local k v
	REPLY=0
	while read -r k v; do
		[ "$k" = processes ] && { REPLY=$v; return; }
	done </proc/stat
}
# next_test: the next test file into $t.  With ARBT_QUEUE (scripts/test.sh
# runs the full run in both lanes) the tests are files NNN-name in
# $ARBT_QUEUE/todo, shared with a guest in the other lane: a test is ours
# when its rename into taken/ succeeds (one rename wins on the host).
ti=0
next_test() {
	local f
	if [ -n "${ARBT_QUEUE:-}" ]; then
		for f in $(ls "$ARBT_QUEUE/todo" 2>/dev/null); do
			if mv "$ARBT_QUEUE/todo/$f" "$ARBT_QUEUE/taken/$f" 2>/dev/null; then
				t=${f#*-}
				return 0
			fi
		done
		return 1
	fi
	[ "$ti" -lt ${#tests[@]} ] || return 1
	t=${tests[$ti]}
	ti=$((ti + 1))
}

n=0
failed=0
TAP_RE='^(not )?ok [0-9]+ - ?(.*)$'
result() { # ok|not ok, desc
	n=$((n + 1))
	[ "$1" = ok ] || failed=$((failed + 1))
	echo "$1 $n - $2"
}

# kill_tree PID: PID and its descendants, children first found
kill_tree() {
	local c
	for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do kill_tree "$c"; done
	kill -KILL "$1" 2>/dev/null
}

# lib_debug.sh reports through lib.sh's diag, which the runner does not source
diag() { local l; while IFS= read -r l; do echo "# $l"; done <<<"$*"; }
. ./lib_debug.sh
# klog_window WHAT: the kernel log since $kseq scanned for splats (and
# KCSAN reports naming sch_arbtable); one result for WHAT; $kseq moves on.
# A window that cannot be read whole (klog_window_read's marker) fails:
# an unread log is no clean log.
kseq=0
klog_window() {
	local log bad others nrec
	if ! klog_window_read "$kseq"; then
		diag "$KLOG_ERR"
		result "not ok" "$1: kernel log clean (window from record $kseq not read)"
		# the next window starts where the log ends now, if it can
		# be read at all; else it fails too
		kseq=$(klog_next)
		return
	fi
	log=$KLOG
	kseq=$(sed -n 's/^@@next //p' <<<"$log")
	nrec=$(grep -vc '^@@' <<<"$log")
	others=$(kcsan_reports others <<<"$log")
	[ -z "$others" ] || { echo "KCSAN reports outside sch_arbtable (not failures):"; kcsan_titles <<<"$others"; } | sed 's/^/# /'
	bad=$(klog_splats <<<"$log")
	if [ -z "$bad" ]; then
		result ok "$1: kernel log clean ($nrec records)"
	else
		head -n 80 <<<"$bad" | sed 's/^/# /'
		result "not ok" "$1: kernel log clean ($(grep -c . <<<"$bad") splat lines among $nrec records)"
	fi
}
# kml_window WHAT: on a kmemleak kernel (the sanitizer kernel), every
# unreferenced object since the last check, whoever allocated it, fails
# WHAT (lib_debug.sh's kmemleak_clean: named upstream objects excepted)
have_kmemleak && kml=1 || kml=0
kml_window() {
	local out
	[ "$kml" = 1 ] || return 0
	if out=$(kmemleak_clean "${2:-0}"); then
		[ -z "$out" ] || echo "$out"
		result ok "$1: kmemleak: no unreferenced object"
	else
		echo "$out"
		result "not ok" "$1: kmemleak: no unreferenced object ($(grep -c '^# unreferenced object' <<<"$out") reported)"
	fi
}

echo "TAP version 13"
echo "# kernel $(uname -r), $(nproc) cpus, tc: $(tc -V 2>&1 | head -n1)"
klog_window "boot and module load"
# what boot and the module's load left unreferenced (older than 5 s)
kml_window "boot and module load" 5
while next_test; do
	t=${t##*/}
	[ -f "$t" ] || t=test_$t.sh
	if [ ! -f "$t" ]; then
		result "not ok" "$t: no such test"
		continue
	fi
	echo "# ===== $t"
	# a test's own limit: ARBT_TEST_TIMEOUT_<name> (make check-full's
	# 50 containerd cycles)
	tt=${t#test_}
	tt=ARBT_TEST_TIMEOUT_${tt%.sh}
	this_timeout=${!tt:-$per_test_timeout}
	start=$SECONDS
	forks_at
	forks0=$REPLY
	nfail_before=$failed
	nres=0
	rc=
	# the output is read against a deadline: a process that outlives the
	# test (a daemon it started, one stuck in the kernel) and keeps the
	# pipe open must not hold the runner, and with it the whole VM
	deadline=$((SECONDS + this_timeout + 30))
	stuck=
	while :; do
		left=$((deadline - SECONDS))
		[ "$left" -gt 0 ] || { stuck=1; break; }
		IFS= read -r -t "$left" line
		r=$?
		[ "$r" -gt 128 ] && { stuck=1; break; }
		[ "$r" = 0 ] || [ -n "$line" ] || break
		case $line in
		"ok "* | "not ok "*)
			# the description, by bash: a sed per result was a
			# process start per line (55-100 ms under TCG, ~2,400
			# results in make test's guests)
			if [[ $line =~ $TAP_RE ]]; then d=${BASH_REMATCH[2]}; else d=$line; fi
			if [[ $line == "ok "* ]]; then result ok "$d"; else result "not ok" "$d"; fi
			nres=$((nres + 1)) ;;
		"@@rc "*) rc=${line#@@rc } ;;
		"") ;;
		"#"*)	echo "$line" ;;
		*)	echo "# $line" ;;
		esac
		[ "$r" = 0 ] || break
	done < <(
		# 15 s before the timeout, note what every process waits on
		# and the kernel log's tail: a hung test then says where
		( sleep $((this_timeout - 15)) && {
			echo "15 s before the timeout: processes (stat, kernel wait channel):"
			ps -eo pid,ppid,stat,wchan:28,etime,args --forest | grep -vE ' \[[^]]*\]$' | tail -n 40
			echo "kernel log tail:"; dmesg | tail -n 30
		} >"/tmp/arbt-hang.$t" 2>&1 ) </dev/null >/dev/null 2>&1 &
		wd=$!
		timeout -k 5 "$this_timeout" bash "./$t" 2>&1; printf '\n@@rc %s\n' "$?"
		pkill -P $wd 2>/dev/null; kill $wd 2>/dev/null)
	if [ -n "$stuck" ]; then
		echo "# $t: no end of its output $((this_timeout + 30)) s after it started:"
		[ -f "/tmp/arbt-hang.$t" ] && sed 's/^/# /' "/tmp/arbt-hang.$t"
		{
			echo "processes now (stat, kernel wait channel):"
			ps -eo pid,ppid,stat,wchan:28,etime,args --forest | grep -vE ' \[[^]]*\]$' | tail -n 40
			echo "kernel log tail:"; dmesg | tail -n 30
		} 2>&1 | sed 's/^/# /'
		# what the test left: its reader (the process substitution)
		# and everything under it
		kill_tree "$!"
		result "not ok" "$t: did not end within ${this_timeout}s (a process kept its output open or could not be killed)"
	elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		[ -f "/tmp/arbt-hang.$t" ] && sed 's/^/# /' "/tmp/arbt-hang.$t"
		result "not ok" "$t: timed out after ${this_timeout}s"
	elif [ "$rc" != 0 ] && [ "$failed" = "$nfail_before" ]; then
		result "not ok" "$t: exited $rc without a failed result"
	elif [ "$nres" = 0 ]; then
		result "not ok" "$t: reported no results"
	fi
	klog_window "$t"
	forks_at
	echo "# ----- $t: $((SECONDS - start)) s, $((REPLY - forks0)) processes"
	# leave no pktgen devices, dummies or qdiscs behind for the next file
	for th in /proc/net/pktgen/kpktgend_*; do [ -e "$th" ] && echo rem_device_all >"$th" 2>/dev/null; done
	# only if there: a command a test left stuck holding RTNL (a
	# deadlock test_netdevsim saw) would hold this one for good
	[ ! -e /sys/class/net/d0 ] || ip link del d0 2>/dev/null
done

# what followed the last test (its cleanup above)
klog_window "after the suite"
# after the whole suite (what the last 5 s left is old enough by then)
kml_window "after the suite" 5
echo "1..$n"
echo "# vm suite: $((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
