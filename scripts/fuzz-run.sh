#!/usr/bin/env bash
# Run the libFuzzer targets of the core (tests/fuzz, built by mk/fuzz.mk)
# for a fixed time or a fixed number of inputs each, starting from the
# in-tree seeds plus what earlier runs found (build/fuzz/corpus-<target>).
# A crash, a sanitizer report or a broken invariant fails the target; its
# input is kept in build/fuzz/.
#
#   scripts/fuzz-run.sh SECONDS|runs=N TARGET_BINARY...
# Ends with "N passed, N failed".
set -u
case $1 in
runs=*) limit=-runs=${1#runs=}; what="${1#runs=} inputs" ;;
*) limit=-max_total_time=$1; what="${1}s" ;;
esac
shift
passed=0
failed=0
for bin in "$@"; do
	t=$(basename "$bin")
	t=${t#fuzz_}
	dir=$(dirname "$bin")
	corpus=$dir/corpus-$t
	mkdir -p "$corpus"
	log=$dir/$t.log
	echo "fuzz: $t for $what (corpus $corpus)"
	# -timeout: a single input running 10 s means the walk does not end
	"$bin" "$limit" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$dir/crash-$t-" -print_final_stats=1 \
		"$corpus" "$(dirname "$0")/../tests/fuzz/corpus/$t" >"$log" 2>&1
	rc=$?
	runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$log")
	eps=$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+)/\1/p' "$log")
	secs=$(sed -nE 's/^Done [0-9]+ runs in ([0-9]+) second.*/\1/p' "$log")
	if [ $rc = 0 ] && [ -n "$runs" ]; then
		echo "ok - fuzz $t: $runs inputs in ${secs:-?}s ($eps/s), corpus $(ls "$corpus" | wc -l)"
		passed=$((passed + 1))
	else
		echo "not ok - fuzz $t: exit $rc"
		grep -E 'invariant failed|ERROR: |runtime error|SUMMARY' "$log" | head -n 10 | sed 's/^/# /'
		ls "$dir"/crash-"$t"-* 2>/dev/null | sed 's/^/# input: /'
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
