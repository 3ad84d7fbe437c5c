#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Last program of the kselftest run (TEST_PROGS in the Makefile): the
# kernel log since boot, read whole (else a failure), has no splat (on the
# KCSAN kernel: no KCSAN report that involves sch_arbtable, the others
# printed), and on a kmemleak kernel no object is unreferenced, whoever
# allocated it (lib_debug.sh's KMEMLEAK_ALLOW names the exceptions).
# run_all.sh (out of tree) does the same after its tests.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_debug.sh"
tap_begin "kernel log and kmemleak after the suite"
_klog_mark=0
tap_check "kernel log: no BUG/WARNING/Oops/KASAN/UBSAN/lockdep splat since boot" klog_clean
# NL_SET_ERR_MSG_FMT logs "truncated extack: ..." when a message does not
# fit its 80 bytes: every refusal the suite provoked must have fitted
# (read as above: a log that cannot be read fails)
no_truncated_extack() {
	local t
	klog_window_read 0 || { diag "$KLOG_ERR"; return 1; }
	t=$(grep -i "truncated extack" <<<"$KLOG") || return 0
	diag "$t"
	return 1
}
tap_check "kernel log: every formatted extack message fitted its 80 bytes (no 'truncated extack')" no_truncated_extack
# The KCSAN kernel (make check-kcsan): KCSAN was on and watching, and
# every report outside sch_arbtable in full (klog_clean above failed on
# any that involves it, and listed only the others' titles)
if have_kcsan; then
	diag "KCSAN: $(kcsan_stats)"
	tap_check "KCSAN: enabled, and set up watchpoints during the suite" kcsan_watched
	others=$(klog_read 0 | kcsan_reports others)
	if [ -n "$others" ]; then
		diag "$(grep -c 'BUG: KCSAN:' <<<"$others") KCSAN reports outside sch_arbtable (diagnostics, not failures):"
		diag "$(head -n 600 <<<"$others")"
	fi
fi
# every unreferenced object not reported by an earlier phase check,
# whoever allocated it; 5 s first, so that what the last test left is old
# enough for kmemleak to report
if have_kmemleak; then
	tap_check "kmemleak: no unreferenced object" kmemleak_clean 5
else
	diag "no kmemleak in this kernel: leak check not run"
fi
tap_end
