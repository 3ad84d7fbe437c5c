# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by check-debug.sh and check-kcsan.sh: the selftests in a VM on
# a sanitizer kernel, through the kernel's kselftest runner.  Sourcing it
# moves to the project's root (ROOT) and starts the clock (t0).
# shellcheck disable=SC2034 # t0, src, p, s and f are for the caller
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
t0=$(date +%s)

# say MESSAGE: a line of the run's own, "[check-NAME] MESSAGE" (the
# caller's script name)
say() { echo "[$(basename "$0" .sh)] $*"; }

# ks_kernel WHAT [VARIANT]: src, the sanitizer kernel's tree
# (scripts/sanitizer-kernel.sh, ARBT_SAN_VARIANT=VARIANT when given;
# built when not cached); without it the run ends as one failure ("WHAT
# kernel build failed")
ks_kernel() {
	if [ -n "${2:-}" ]; then
		src=$(ARBT_SAN_VARIANT=$2 bash scripts/sanitizer-kernel.sh | tail -n1)
	else
		src=$(bash scripts/sanitizer-kernel.sh | tail -n1)
	fi
	[ -d "$src" ] || { say "$1 kernel build failed"; echo "0 passed, 1 failed"; exit 1; }
}

# ks_run LOG TIMEOUT PROGS: the tests PROGS (kselftest's TEST_PROGS) in a
# VM on $src with the module built in that tree (vm.sh -n -K, TIMEOUT s;
# the VM's memory and command line from the caller's ARBTABLE_VM_*), the
# TAP stream into LOG; then p, s, f counted (kselftest_tally)
ks_run() {
	make -s all >/dev/null 2>&1 || say "note: make all failed; tests use what is built"
	mkdir -p "$(dirname "$1")"
	bash scripts/vm.sh -n -K "$src" -t "$2" -- \
		make -s -C "$src/tools/testing/selftests" TARGETS=arbtable TEST_PROGS="$3" run_tests 2>&1 | tee "$1"
	kselftest_tally "$1" "${PIPESTATUS[0]}"
}

# kselftest_tally LOG VRC   sets p (passed), s (skipped) and f (failed)
#
# The runner prints each test's own results indented ("# ok N"); a test
# that fails before printing one shows only in the runner's own line
# ("not ok N selftests: arbtable: ..."), counted when no inner result
# failed.  A run that vm.sh ended (VRC not 0) with nothing failed counts
# as one failure, so a cut run never reads as a pass.
kselftest_tally() {
	local log=$1 vrc=$2 bad
	p=$(grep -E '^# ok [0-9]+' "$log" | grep -cv '# SKIP')
	s=$(grep -E '^# ok [0-9]+' "$log" | grep -c '# SKIP')
	f=$(grep -cE '^# not ok [0-9]+' "$log")
	bad=$(grep -cE '^not ok [0-9]+ selftests: arbtable:' "$log")
	[ "$f" = 0 ] && [ "$bad" -gt 0 ] && f=$bad
	if [ "$vrc" != 0 ] && [ "$f" = 0 ]; then
		say "VM run incomplete (vm.sh exit $vrc)"
		f=1
	fi
}
