#!/usr/bin/env bash
# `make check-debug`: the whole VM suite at full size on the sanitizer
# kernel (scripts/sanitizer-kernel.sh: KASAN, lockdep, DEBUG_ATOMIC_SLEEP,
# kmemleak, UBSAN, debug objects, fault injection; built when not cached),
# with the module built in that tree and the tests run by the kernel's
# kselftest runner.  `make test` runs a subset of it at reduced size.
# Ends with "N passed, N failed".
#
#   scripts/check-debug.sh [TEST...]   TEST: names without test_/.sh
#                                      (default: every test)
set -u
# shellcheck source-path=SCRIPTDIR source=kselftest-vm.sh
. "$(dirname "$0")/kselftest-vm.sh"
ks_kernel sanitizer
if [ $# -gt 0 ]; then
	progs=$(for t in "$@"; do printf 'test_%s.sh ' "$t"; done)kernel_log.sh
else
	progs=$(sed -n '/^TEST_PROGS/,/[^\\]$/p' selftests/arbtable/Makefile | tr -d '\\' |
		sed 's/^TEST_PROGS :=//' | tr -s ' \t\n' ' ')
fi
log=$ROOT/build/test-logs/vm-check-debug.tap
export ARBT_SLOW_KERNEL=1
export ARBT_STRESS_CYCLES=${ARBT_STRESS_CYCLES:-10000} ARBT_NLFUZZ_MSGS=${ARBT_NLFUZZ_MSGS:-300000}
ARBTABLE_VM_MEM=${ARBTABLE_VM_MEM:-4G} ks_run "$log" "${ARBT_DEBUG_VM_TIMEOUT:-7200}" "$progs"
say "sanitizer kernel: $p passed, $f failed, $s skipped in $(($(date +%s) - t0)) s (log: $log)"
echo "$p passed, $f failed"
[ "$f" = 0 ]
