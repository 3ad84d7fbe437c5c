#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Last program of the kselftest run (TEST_PROGS in the Makefile): the
# kernel log since boot has no splat, and on a kmemleak kernel nothing
# allocated through the module or the tc paths that create its objects is
# unreferenced.  run_all.sh (out of tree) does the same after its tests.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/lib_debug.sh"
tap_begin "kernel log and kmemleak after the suite"
_klog_mark=0
tap_check "kernel log: no BUG/WARNING/Oops/KASAN/UBSAN/lockdep splat since boot" klog_clean
# NL_SET_ERR_MSG_FMT logs "truncated extack: ..." when a message does not
# fit its 80 bytes: every refusal the suite provoked must have fitted
tap_check "kernel log: every formatted extack message fitted its 80 bytes (no 'truncated extack')" \
	eval '! dmesg | grep -i "truncated extack"'
if have_kmemleak; then
	tap_check "kmemleak: no unreferenced object allocated through the module or tc" kmemleak_ours
else
	diag "no kmemleak in this kernel: leak check not run"
fi
tap_end
