#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Per-phase kernel checks for the stress tests (issue 4): the runner
# checks the kernel log and kmemleak once after the whole suite, which
# says that something went wrong but not in which phase.  These helpers
# let a test assert after each phase.  Source after lib.sh.

_klog_mark=0
_kml=/sys/kernel/debug/kmemleak
_klog_pat='BUG|WARNING|Oops|KASAN|UBSAN|general protection|RCU stall|refcount_t|list_(add|del) corruption|possible circular locking|inconsistent lock state|lock held when returning|sleeping function called from invalid context'

# klog_mark: remember where the kernel log ends (without clearing it,
# so the runner's final check still sees everything)
klog_mark() { _klog_mark=$(dmesg 2>/dev/null | wc -l); }
# klog_clean: no splat in the kernel log since the last klog_mark;
# prints the offending lines
klog_clean() {
	local s
	s=$(dmesg 2>/dev/null | tail -n +$((_klog_mark + 1)) | grep -E "$_klog_pat")
	[ -z "$s" ] && return 0
	diag "$(head -n 20 <<<"$s")"
	return 1
}

# have_kmemleak: a kmemleak kernel (the sanitizer kernel)
have_kmemleak() {
	[ -e $_kml ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	[ -w $_kml ]
}
# kmemleak_ours: scan and report unreferenced objects whose allocation
# backtrace goes through the module or the tc control paths that create
# its objects.  kmemleak only reports objects older than 5 s and wants
# an object unreferenced across a scan, hence two scans.  Objects left
# by other tests (or the kernel) are the runner's business.
kmemleak_ours() {
	local ours
	echo scan >$_kml 2>/dev/null
	sleep 1
	echo scan >$_kml 2>/dev/null
	ours=$(awk '/^unreferenced object/ { if (o != "" && hit) print o; o = $0; hit = 0; next }
		{ o = o "\n" $0; if ($0 ~ /arbtable|qdisc_create|qdisc_alloc|tc_ctl_tclass|tc_modify_qdisc/) hit = 1 }
		END { if (o != "" && hit) print o }' $_kml 2>/dev/null)
	[ -z "$ours" ] && return 0
	diag "$(head -n 40 <<<"$ours")"
	return 1
}

# phase_checks NAME: the kernel log since the last klog_mark has no
# splat and, on a kmemleak kernel, nothing of ours leaked; then marks the
# log for the next phase
phase_checks() {
	tap_check "$1: no BUG/WARNING/KASAN/UBSAN/lockdep splat in the kernel log" klog_clean
	if have_kmemleak; then
		tap_check "$1: kmemleak: no unreferenced object allocated by the module or tc" kmemleak_ours
	fi
	klog_mark
}
