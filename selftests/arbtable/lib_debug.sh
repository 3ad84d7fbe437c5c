#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Per-phase kernel checks for the stress tests (issue 4): the runner
# checks the kernel log and kmemleak once after the whole suite, which
# says that something went wrong but not in which phase.  These helpers
# let a test assert after each phase.  Source after lib.sh.

_klog_mark=0
_kml=/sys/kernel/debug/kmemleak
# What a kernel splat prints, whatever its source: a WARN (cut here,
# WARNING:), BUG: (KASAN, KCSAN, KFENCE, soft lockup, bad page, sleeping
# in atomic), an oops (Oops:, general protection, int3), UBSAN, lockdep,
# RCU stalls, hung tasks, hard lockups, panics, list and refcount checks.
# BUG as a word: "DEBUGCTL" (a KVM host's boot line) is none
_klog_pat='cut here|(^|[^[:alnum:]_])BUG([^[:alnum:]_]|$)|WARNING|Oops|KASAN|KFENCE|UBSAN|general protection|Kernel panic|detected stall|self-detected stall|blocked for more than|hard LOCKUP|soft lockup|refcount_t|list_(add|del) corruption|possible circular locking|possible recursive locking|inconsistent lock state|lock held when returning|suspicious RCU usage|sleeping function called from invalid context|scheduling while atomic|stack-protector|stack guard page|double fault'

# klog_read SEQ: the kernel log's records from sequence number SEQ on,
# read from /dev/kmsg without clearing anything ("[seconds] text", as
# dmesg prints them), then "@@next N" (the next record's number) and,
# when records from SEQ on were overwritten before they were read,
# "@@lost N".  The numbers, not line counts, delimit a window: the ring
# buffer drops its oldest lines when it wraps, and dmesg -c would erase
# what the next reader must see.
# Exit status non-zero, with the reason on stderr, when /dev/kmsg cannot
# be read or SEQ is no number: a caller must then fail, not pass.
klog_read() {
	python3 -c '
import os, sys
try:
    start = int(sys.argv[1])
except (IndexError, ValueError):
    sys.exit("klog_read: no record number: %r" % sys.argv[1:])
top = 0
try:
    fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
except OSError as e:
    sys.exit("klog_read: cannot read /dev/kmsg: %s" % e)
nxt, lost, first = start, 0, True
while True:
    try:
        rec = os.read(fd, 65536)
    except BlockingIOError:
        break
    except BrokenPipeError:     # overwritten under us: read on
        continue
    head, _, msg = rec.decode("utf-8", "replace").partition(";")
    f = head.split(",")
    seq = int(f[1])
    top = max(top, seq + 1)
    if start < 0 or seq < start:
        continue
    if first and seq > start:
        lost = seq - start
    first = False
    nxt = seq + 1
    ts = int(f[2])
    text = msg.split("\n")[0].replace("\\x0a", " ")
    print("[%5d.%06d] %s" % (ts // 1000000, ts % 1000000, text))
print("@@next %d" % (top if start < 0 else max(nxt, start)))
if lost:
    print("@@lost %d" % lost)
' "$1"
}
# klog_next: the number the kernel log's next record will have; when the
# log cannot be read, "unreadable" (no number: a window that starts
# there fails when it is read) and status 1
klog_next() {
	local l
	l=$(klog_read -1 2>/dev/null) && l=$(sed -n 's/^@@next //p' <<<"$l") && [ -n "$l" ] &&
		{ echo "$l"; return 0; }
	echo unreadable
	return 1
}
# klog_window_read SEQ: the window from SEQ to now in KLOG (klog_read's
# output), fail-closed: a marker record is written to /dev/kmsg first and
# must be read back, so a read that returns nothing, stops early or reads
# the wrong records fails (with the reason in KLOG_ERR) instead of
# passing as a clean log.  Each write opens /dev/kmsg anew, so its
# per-open rate limit (10 records in 5 s) is never reached.
KLOG=
KLOG_ERR=
klog_window_read() {
	local tok="arbtable-selftest: kernel log window from $1, check $$.$RANDOM.$SECONDS" err
	KLOG=
	KLOG_ERR=
	if ! echo "<6>$tok" >/dev/kmsg 2>/dev/null; then
		KLOG_ERR="cannot write a marker record to /dev/kmsg"
		return 1
	fi
	if ! KLOG=$(klog_read "$1" 2>&1); then
		KLOG_ERR="kernel log unreadable: $KLOG"
		KLOG=
		return 1
	fi
	if ! grep -q '^@@next [0-9]' <<<"$KLOG"; then
		KLOG_ERR="kernel log read printed no end mark (@@next): ${KLOG:-nothing}"
		return 1
	fi
	if ! grep -qF "] $tok" <<<"$KLOG"; then
		KLOG_ERR="the marker just written to /dev/kmsg is not in the window read from record $1 ($(grep -vc '^@@' <<<"$KLOG") records)"
		return 1
	fi
}
# klog_splats: a kernel log on stdin (as klog_read prints it): its splat
# lines, KCSAN reports that name sch_arbtable, and "records lost" when
# the window is not whole; nothing when it is clean
klog_splats() {
	local log
	log=$(cat)
	sed -n 's/^@@lost \(.*\)/kernel log: \1 records overwritten before they were read/p' <<<"$log"
	kcsan_reports rest <<<"$log" | grep -v '^@@' | grep -E "$_klog_pat"
	kcsan_reports ours <<<"$log"
}

# klog_mark: remember where the kernel log ends (without clearing it,
# so the runner's checks still see everything)
klog_mark() { _klog_mark=$(klog_next); }

# KCSAN (the KCSAN kernel, make check-kcsan; issue 27): a report runs
# from its "BUG: KCSAN: ..." line to the "=====" line that closes it.  A
# report that names sch_arbtable (a frame in the module, "[sch_arbtable]",
# or when built in an arbtable_* or arb_* function) is ours and fails
# klog_clean; the others are races in kernel code the suite only passes
# through (KCSAN's default configuration reports some in net, mm and the
# scheduler, which this project cannot fix): diagnostics, not failures.
# An access's frames below an interrupt entry (asm_sysvec_*, asm_exc_*)
# are the code it interrupted, not the racing one: they do not count.
# kcsan_reports ours|others|rest: from a kernel log on stdin, the reports
# of that kind, or (rest) every line outside a KCSAN report
kcsan_reports() {
	awk -v want="$1" '
	function flush() { if (want != "rest" && (want == "ours") == ours) printf "%s", r; inr = 0 }
	/BUG: KCSAN:/ { inr = 1; r = ""; ours = 0; irq = 0 }
	!inr { if (want == "rest") print; next }
	{ r = r $0 "\n" }
	# a new access, or the blank line that ends one
	/ by (task|interrupt) / || /\[ *[0-9]+\.[0-9]+\] *$/ { irq = 0 }
	# the name of the reporting task (Comm: arbtablectl) is no frame
	!irq && !/ Comm: / && /arbtable|[^a-z_]arb_[a-z_0-9]+\+0x/ { ours = 1 }
	/ asm_[a-z_]+\+0x/ { irq = 1 }
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

# klog_clean [SEQ]: no splat in the kernel log since the last klog_mark (or
# record SEQ) and no
# KCSAN report that involves sch_arbtable; prints the offending lines,
# and the titles of other KCSAN reports as diagnostics
klog_clean() { # [SEQ]: since SEQ instead of the mark
	local log s k
	if ! klog_window_read "${1:-$_klog_mark}"; then
		diag "$KLOG_ERR"
		return 1
	fi
	log=$KLOG
	k=$(kcsan_reports others <<<"$log")
	[ -z "$k" ] || diag "KCSAN reports outside sch_arbtable (not failures):"$'\n'"$(kcsan_titles <<<"$k")"
	s=$(klog_splats <<<"$log")
	[ -z "$s" ] && return 0
	diag "$(head -n 80 <<<"$s")"
	return 1
}

# have_kmemleak: a kmemleak kernel (the sanitizer kernel)
have_kmemleak() {
	[ -e $_kml ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	[ -w $_kml ]
}
# Unreferenced objects that are not the suite's to fix, one entry each:
# "name;;ERE on the object's backtrace frames;;why it is not ours".
# Empty: an entry needs the backtrace the sanitizer kernel reported with
# the real suite, its key frames named, and the reason.
KMEMLEAK_ALLOW=()
# kmemleak_filter: kmemleak's report on stdin; prints every unreferenced
# object no KMEMLEAK_ALLOW entry matches, in full, and for each one that
# matches "@@allowed NAME: first line".  Whatever allocated it (the
# module, TCP, pktgen, the core) counts.
kmemleak_filter() {
	ALLOW=$(printf '%s\n' "${KMEMLEAK_ALLOW[@]}") awk '
	BEGIN {
		n = split(ENVIRON["ALLOW"], l, "\n")
		na = 0
		for (i = 1; i <= n; i++) {
			if (l[i] == "")
				continue
			split(l[i], f, ";;")
			na++; aname[na] = f[1]; are[na] = f[2]
		}
	}
	function flush(i) {
		if (o == "")
			return
		for (i = 1; i <= na; i++)
			if (bt ~ are[i]) {
				print "@@allowed " aname[i] ": " head
				o = ""
				return
			}
		print o
		o = ""
	}
	/^unreferenced object/ { flush(); o = $0; head = $0; bt = ""; inbt = 0; next }
	o == "" { next }
	{ o = o "\n" $0 }
	/^ *backtrace/ { inbt = 1; next }
	inbt { bt = bt " " $0 }
	END { flush() }'
}
# kmemleak_clean [WAIT]: scan (after WAIT seconds: kmemleak reports only
# objects older than 5 s, so the last check of a run waits) and fail on
# any unreferenced object outside KMEMLEAK_ALLOW, listed with its
# backtrace.  Two scans: an object whose contents changed since the last
# one is not reported yet.  Reported objects are then cleared, so that
# the next check reports only what is new: each leak fails the first
# check that finds it.
kmemleak_clean() {
	local rep bad allowed
	[ -w $_kml ] || { diag "kmemleak: $_kml not writable"; return 1; }
	sleep "${1:-0}"
	echo scan >$_kml || { diag "kmemleak: scan refused"; return 1; }
	sleep 1
	echo scan >$_kml || { diag "kmemleak: scan refused"; return 1; }
	rep=$(cat $_kml) || { diag "kmemleak: $_kml unreadable"; return 1; }
	echo clear >$_kml
	rep=$(kmemleak_filter <<<"$rep")
	allowed=$(grep '^@@allowed ' <<<"$rep")
	[ -z "$allowed" ] || diag "kmemleak: allowed (KMEMLEAK_ALLOW):"$'\n'"${allowed//@@allowed /}"
	bad=$(grep -v '^@@allowed ' <<<"$rep")
	[ -z "$bad" ] && return 0
	diag "kmemleak: $(grep -c '^unreferenced object' <<<"$bad") unreferenced objects:"
	diag "$(head -n 120 <<<"$bad")"
	return 1
}

# phase_checks NAME: the kernel log since the last klog_mark has no
# splat and, on a kmemleak kernel, no unreferenced object is new; then
# marks the log for the next phase
phase_checks() {
	tap_check "$1: no BUG/WARNING/KASAN/UBSAN/lockdep splat in the kernel log" klog_clean
	if have_kmemleak; then
		tap_check "$1: kmemleak: no unreferenced object" kmemleak_clean
	fi
	klog_mark
}
