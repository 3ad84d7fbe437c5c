# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by check-debug.sh and check-kcsan.sh: counts the results of a
# VM run of the kernel's kselftest runner from its TAP log.
#
#   kselftest_tally LOG VRC   sets p (passed), s (skipped) and f (failed)
#
# The runner prints each test's own results indented ("# ok N"); a test
# that fails before printing one shows only in the runner's own line
# ("not ok N selftests: arbtable: ..."), counted when no inner result
# failed.  A run that vm.sh ended (VRC not 0) with nothing failed counts
# as one failure, so a cut run never reads as a pass.  Needs the caller's
# say().
# shellcheck disable=SC2034 # p, s and f are for the caller
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
