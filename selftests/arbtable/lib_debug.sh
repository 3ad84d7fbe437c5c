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

# KCSAN (the KCSAN kernel, make check-kcsan; issue 27): a report runs
# from its "BUG: KCSAN: ..." line to the "=====" line that closes it.  A
# report that names sch_arbtable (a frame in the module, "[sch_arbtable]",
# or when built in an arbtable_* or arb_* function) is ours and fails
# klog_clean; the others are races in kernel code the suite only passes
# through (KCSAN's default configuration reports some in net, mm and the
# scheduler, which this project cannot fix): diagnostics, not failures.
# kcsan_reports ours|others|rest: from a kernel log on stdin, the reports
# of that kind, or (rest) every line outside a KCSAN report
kcsan_reports() {
	awk -v want="$1" '
	function flush() { if (want != "rest" && (want == "ours") == ours) printf "%s", r; inr = 0 }
	/BUG: KCSAN:/ { inr = 1; r = ""; ours = 0 }
	!inr { if (want == "rest") print; next }
	{ r = r $0 "\n" }
	# the name of the reporting task (Comm: arbtablectl) is no frame
	!/ Comm: / && /arbtable|[^a-z_]arb_[a-z_0-9]+\+0x/ { ours = 1 }
	/==========/ { flush() }
	END { if (inr) flush() }'
}
# kcsan_titles: "N x BUG: KCSAN: ..." per distinct report title on stdin
kcsan_titles() { grep -o 'BUG: KCSAN: .*' | sort | uniq -c | sed -E 's/^ *([0-9]+) /\1 x /'; }

# have_kcsan: a KCSAN kernel (its debugfs file)
have_kcsan() {
	[ -e /sys/kernel/debug/kcsan ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	[ -r /sys/kernel/debug/kcsan ]
}
# kcsan_stats: KCSAN's counters on one line ("enabled: 1 ... data_races: N")
kcsan_stats() { sed -n '/^$/q; p' /sys/kernel/debug/kcsan 2>/dev/null | tr '\n' ' '; }
# kcsan_watched: KCSAN is on and has set up watchpoints (a run in which it
# sampled nothing would prove nothing)
kcsan_watched() {
	awk '$1 == "enabled:" { e = $2 } $1 == "setup_watchpoints:" { w = $2 }
		END { exit !(e == 1 && w > 0) }' /sys/kernel/debug/kcsan
}

# klog_clean: no splat in the kernel log since the last klog_mark and no
# KCSAN report that involves sch_arbtable; prints the offending lines,
# and the titles of other KCSAN reports as diagnostics
klog_clean() {
	local log s k
	log=$(dmesg 2>/dev/null | tail -n +$((_klog_mark + 1)))
	k=$(kcsan_reports others <<<"$log")
	[ -z "$k" ] || diag "KCSAN reports outside sch_arbtable (not failures):"$'\n'"$(kcsan_titles <<<"$k")"
	s=$(kcsan_reports rest <<<"$log" | grep -E "$_klog_pat")
	k=$(kcsan_reports ours <<<"$log")
	[ -z "$s$k" ] && return 0
	[ -z "$s" ] || diag "$(head -n 20 <<<"$s")"
	[ -z "$k" ] || diag "KCSAN reports involving sch_arbtable:"$'\n'"$(head -n 80 <<<"$k")"
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
