#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The checks each VM test makes, against selftests/arbtable/plan (issue
# 43): a test that reports fewer results than its plan lost checks (an
# early exit, a loop that ran no round, a check turned off), which a run
# that counts only failures cannot see.
#
#   scripts/test-plan.sh count RUN LOG...   "RUN test count" per test in the
#                                          TAP logs (run_all.sh's "# ===== T"
#                                          blocks, or the kselftest runner's)
#   scripts/test-plan.sh check RUN LOG...   each test's count against the plan:
#                                          one "ok"/"not ok" line per test, then
#                                          "plan RUN: N passed, N failed"
#   scripts/test-plan.sh update LOGDIR      the plan from make test's logs
#                                          (build/test-logs), to review and commit
#                                          after adding or removing checks
#
# RUN is "full" (Debian's 7.2 image, all the full run's logs together),
# "6.1", "6.12" (the subsets) or "sanitizer".  A test with no line in the
# plan fails the check: a new test adds its line with its first commit.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PLAN=${ARBT_PLAN:-$ROOT/selftests/arbtable/plan}

count() { # RUN LOG...
	local run=$1
	shift
	awk -v run="$run" '
		/^# ===== test_.*\.sh$/ { t = $3; next }
		/^# ----- test_/ { t = ""; next }
		/^# selftests: arbtable: / { k = $4; next }
		/^(not )?ok [0-9]+ selftests: arbtable: / { k = ""; next }
		/^(not )?ok [0-9]+/ { if (t != "") c[t]++; next }
		/^# (not )?ok [0-9]+/ { if (k != "") c[k]++; next }
		END { for (x in c) print run, x, c[x] }' "$@" | sort -k2
}

case ${1:-} in
count)
	shift
	count "$@"
	;;
check)
	run=$2
	shift 2
	pass=0 fail=0
	while read -r _ t n; do
		want=$(awk -v r="$run" -v t="$t" '$1 == r && $2 == t { print $3 }' "$PLAN" 2>/dev/null)
		if [ -z "$want" ]; then
			echo "not ok - plan $run: $t made $n checks and has no plan (scripts/test-plan.sh update)"
			fail=$((fail + 1))
		elif [ "$n" -lt "$want" ]; then
			echo "not ok - plan $run: $t made $n checks, its plan $want"
			fail=$((fail + 1))
		else
			echo "ok - plan $run: $t made $n checks (plan $want)"
			pass=$((pass + 1))
		fi
	done < <(count "$run" "$@")
	echo "plan $run: $pass passed, $fail failed"
	[ "$fail" = 0 ]
	;;
update)
	d=${2:-$ROOT/build/test-logs}
	{
		echo "# The checks each VM test makes in make test (scripts/test-plan.sh):"
		echo "# run test count.  Written by 'scripts/test-plan.sh update' from a"
		echo "# green make test's logs; a count below its line fails make test."
		{
			count full "$d"/vm-full.*.tap
			for k in "$d"/vm-6.1.*.tap; do [ -f "$k" ] && count 6.1 "$k"; done
			for k in "$d"/vm-6.12.*.tap; do [ -f "$k" ] && count 6.12 "$k"; done
			[ -f "$d/vm-sanitizer.tap" ] && count sanitizer "$d/vm-sanitizer.tap"
		} >"$PLAN.new"
		# lines of runs and tests these logs do not have (make
		# check-full's tests, the sanitizer lane) are kept
		grep -v '^#' "$PLAN" 2>/dev/null | awk 'NR == FNR { have[$1 " " $2] = 1; next }
			!(($1 " " $2) in have)' "$PLAN.new" - >>"$PLAN.new"
		sort -k1,1 -k2,2 "$PLAN.new"
		rm -f "$PLAN.new"
	} >"$PLAN.tmp"
	mv "$PLAN.tmp" "$PLAN"
	echo "wrote $PLAN: $(grep -vc '^#' "$PLAN") lines"
	;;
*)
	sed -n '2,25p' "$0"
	exit 2
	;;
esac
