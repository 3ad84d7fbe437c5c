#!/usr/bin/env bash
# `make check-debug` (issue 4): build or reuse the debug kernel
# (scripts/debug-kernel.sh: KASAN, lockdep, DEBUG_ATOMIC_SLEEP, kmemleak,
# UBSAN), build the module against it, boot it once under TCG and run the
# VM suite there with the stress and fuzz tests at full size.  Any splat
# in the kernel log or kmemleak report fails (selftests/arbtable/run_all.sh).
# Ends with "N passed, N failed".
#
#   scripts/check-debug.sh [--if-cached] [TEST...]
#     --if-cached  do nothing (and say so) when the debug kernel is not
#                  built yet: what `make test` uses, so CI never pays the
#                  cold build
#     TEST...      only these tests (names without test_/.sh); default all
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
if_cached=
[ "${1:-}" = --if-cached ] && { if_cached=1; shift; }
t0=$(date +%s)
say() { echo "[check-debug] $*"; }

if [ -n "$if_cached" ]; then
	if ! src=$(bash scripts/debug-kernel.sh --check 2>/dev/null); then
		say "debug kernel not built: skipped (make check-debug builds it, ~40 min cold)"
		exit 0
	fi
else
	src=$(bash scripts/debug-kernel.sh | tail -n1) || { say "debug kernel build failed"; echo "0 passed, 1 failed"; exit 1; }
fi
kver=$(make -s -C "$src" kernelrelease 2>/dev/null)
say "kernel $kver in $src (built in $(cat "$src/../build-seconds" 2>/dev/null || echo '?') s)"

# The module against the debug tree, sources copied as mk/module.mk does.
out=$ROOT/build/debug
mkdir -p "$out/src/kernel" "$out/src/include"
rm -f "$out"/src/kernel/*.[ch]
cp kernel/*.c kernel/*.h kernel/Kbuild "$out/src/kernel/"
cp -r include/uapi "$out/src/include/"
if ! make -C "$src" M="$out/src/kernel" CONFIG_NET_SCH_ARBTABLE=m W=1 KCFLAGS=-Werror modules >"$out/build.log" 2>&1; then
	tail -n 30 "$out/build.log"
	say "module build against $kver failed"
	echo "0 passed, 1 failed"
	exit 1
fi
cp "$out/src/kernel/sch_arbtable.ko" "$out/sch_arbtable.ko"
make -s all >/dev/null 2>&1 || say "note: make all failed; tests use what is built"

log=$ROOT/build/test-logs/vm-debug-$kver.tap
mkdir -p "$(dirname "$log")"
# Full-size stress and fuzzing here; a KASAN kernel under TCG is slow, so
# each test gets 30 minutes.
# Timing-dependent checks (shares, rates, wall-clock waits) become SKIPs
# when they fail here (lib.sh tap_measure): KASAN under TCG is too slow to
# keep a 64-byte producer's class backlogged.  The traffic still runs.
export ARBT_SLOW_KERNEL=1
export ARBT_KO=$out/sch_arbtable.ko ARBT_TEST_TIMEOUT=${ARBT_TEST_TIMEOUT:-1800}
export ARBT_STRESS_CYCLES=${ARBT_STRESS_CYCLES:-10000} ARBT_NLFUZZ_MSGS=${ARBT_NLFUZZ_MSGS:-300000}
[ $# -gt 0 ] && export ARBT_TESTS="$*"
ARBTABLE_VM_MEM=${ARBTABLE_VM_MEM:-4G} bash scripts/vm.sh -K "$src" -t "${ARBT_DEBUG_VM_TIMEOUT:-5400}" \
	-- selftests/arbtable/run_all.sh 2>&1 | tee "$log"
vrc=${PIPESTATUS[0]}
p=$(grep -E '^ok [0-9]+' "$log" | grep -cv '# SKIP')
s=$(grep -E '^ok [0-9]+' "$log" | grep -c '# SKIP')
f=$(grep -cE '^not ok [0-9]+' "$log")
plan=$(sed -nE 's/^1\.\.([0-9]+)$/\1/p' "$log" | tail -n1)
if [ -z "$plan" ] || [ "$plan" != $((p + f + s)) ] || { [ "$vrc" != 0 ] && [ "$f" = 0 ]; }; then
	say "VM run incomplete (vm.sh exit $vrc, plan ${plan:-none}, $((p + f + s)) results)"
	f=$((f + 1))
fi
say "debug kernel $kver: $p passed, $f failed, $s skipped in $(($(date +%s) - t0)) s (log: $log)"
echo "$p passed, $f failed"
[ "$f" = 0 ]
