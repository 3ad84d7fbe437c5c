#!/usr/bin/env bash
# Run each cmocka unit-test binary, keep cmocka's own output, and end with
# one summary line over all of them: "unit: N passed, N failed".
set -u
pass=0
fail=0
for bin in "$@"; do
	out=$("$bin" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]\+\) test.*/\1/p' | tail -n1)
	f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]\+\) test.*/\1/p' | tail -n1)
	pass=$((pass + ${p:-0}))
	fail=$((fail + ${f:-0}))
	if [ "$rc" -ne 0 ] && [ -z "$f" ]; then
		echo "unit: $bin exited $rc without a cmocka summary"
		fail=$((fail + 1))
	fi
done
echo "unit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
