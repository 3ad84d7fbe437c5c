#!/usr/bin/env bash
# The project's test entry (`make test`, .ci/run): set up the host, build
# everything, run the userspace unit tests, then boot each kernel once
# (6.1 and 6.12 distro kernels, TCG) and run the VM selftests in it.
# Ends with exactly one line "N passed, N failed" summing unit tests and
# VM TAP results; exits non-zero on any failure.
#
# The whole VM suite runs on Debian 12's own kernel (6.1); the other
# kernels run the tests that reach their kernel-facing code (netlink
# parsing and dumps, the tc plugin and libnl against that kernel, the
# datapath with shaping, churn, teardown, netlink fuzzing).  The
# measurement-heavy tests exercise the same core and glue on both, and
# running them twice made the suite ~53 min.
#
#   scripts/test.sh [--vm-only] [--no-setup]
#   KVERS="6.1.0-56-amd64"   restrict the kernels
#   ARBT_TESTS="deficit"     restrict the VM tests (names without test_/.sh)
#   ARBT_FULL_KVER=<kver>    the kernel that runs every VM test (default 6.1)
#   ARBT_OTHER_TESTS="..."   the VM tests on the other kernels
#   ARBT_ALL_FULL=1          every VM test on every kernel
#   ARBTABLE_KVM=1           use KVM instead of TCG
#   ARBT_DEBUG=0             skip the reliability subset on the debug kernel
#                            (default: run it when that kernel is built)
#   ARBT_DEBUG_TESTS="..."   tests for the debug kernel (default: stress nlfuzz)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
vm_only=
setup=1
for a in "$@"; do
	case $a in
	--vm-only) vm_only=1 ;;
	--no-setup) setup= ;;
	*) echo "test.sh: unknown argument $a" >&2; exit 2 ;;
	esac
done
pick() { ls -d /usr/src/linux-headers-"$1".*-amd64 2>/dev/null | sed 's|.*/linux-headers-||' | sort -V | tail -n1; }
KVERS=${KVERS:-$(echo $(pick 6.1) $(pick 6.12))}
LOG=$ROOT/build/test-logs
t0=$(date +%s)
passed=0
skipped=0
failed=0
step() { echo; echo "=== [$(($(date +%s) - t0))s] $*"; }

if [ -n "$setup" ]; then
	step "setup (scripts/setup.sh)"
	if ! bash scripts/setup.sh; then
		echo "setup failed"
		echo "0 passed, 1 failed"
		exit 1
	fi
fi
mkdir -p "$LOG"

step "build (make all)"
if make -C "$ROOT" all >"$LOG/build.log" 2>&1; then
	echo "build ok"
else
	tail -n 30 "$LOG/build.log"
	echo "build FAILED (full log: $LOG/build.log)"
	failed=$((failed + 1))
fi
for k in $KVERS; do
	[ -f "build/$k/sch_arbtable.ko" ] || echo "note: build/$k/sch_arbtable.ko not built"
done
[ -f build/tc/q_arbtable.so ] || echo "note: build/tc/q_arbtable.so not built"

if [ -z "$vm_only" ]; then
	step "unit tests (make unit)"
	make -C "$ROOT" --no-print-directory unit 2>&1 | tee "$LOG/unit.log"
	urc=${PIPESTATUS[0]}
	line=$(grep -E '^unit: [0-9]+ passed, [0-9]+ failed' "$LOG/unit.log" | tail -n1)
	up=$(sed -E 's/^unit: ([0-9]+) passed.*/\1/' <<<"$line")
	uf=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
	passed=$((passed + ${up:-0}))
	failed=$((failed + ${uf:-0}))
	if [ "$urc" != 0 ] && [ "${uf:-0}" = 0 ]; then
		echo "make unit exited $urc without failed tests counted"
		failed=$((failed + 1))
	fi
fi

# Host-side suites that end in "N passed, N failed": the tc plugin's
# parse/print checks and arbsim's scenario tests.
host_suite() { # name command...
	local name=$1 out rc hp hf
	shift
	step "$name"
	out=$("$@" 2>&1)
	rc=$?
	printf '%s\n' "$out" >"$LOG/$name.log"
	printf '%s\n' "$out" | grep -vE '^ok ' | tail -n 40
	hp=$(printf '%s\n' "$out" | sed -nE 's/^([0-9]+) passed, ([0-9]+) failed.*/\1/p' | tail -n1)
	hf=$(printf '%s\n' "$out" | sed -nE 's/^([0-9]+) passed, ([0-9]+) failed.*/\2/p' | tail -n1)
	passed=$((passed + ${hp:-0}))
	failed=$((failed + ${hf:-0}))
	if [ "$rc" != 0 ] && [ "${hf:-0}" = 0 ]; then
		echo "$name exited $rc without failed tests counted"
		failed=$((failed + 1))
	fi
}
if [ -z "$vm_only" ]; then
	host_suite plugin-check bash tests/plugin/parse-check.sh
	host_suite arbsim-test make --no-print-directory arbsim-test
	# the per-packet functions of the built modules: no division, no
	# calls outside the clock/trace/thunk/watchdog allow-list
	host_suite hotpath-check bash scripts/hotpath-check.sh
	# libFuzzer on the core (tests/fuzz), a short fixed budget per target
	host_suite fuzz-short make --no-print-directory fuzz-short
	# Packaging: DKMS builds for both kernels; net/sched in-tree build.
	host_suite dkms-check bash scripts/dkms-check.sh
	host_suite intree-check bash scripts/intree-check.sh
fi

FULL_KVER=${ARBT_FULL_KVER:-$(pick 6.1)}
# tcp_tenants is not in the 6.12 subset: under TCG the 6.12 distro guest
# panicked in it twice (Oops: int3 in ttwu_do_activate after the
# clocksource watchdog marked the TSC unstable; see vm.sh); it runs in the
# 6.1 suite, and on 6.12 with ARBT_ALL_FULL=1 or ARBT_OTHER_TESTS
OTHER_TESTS=${ARBT_OTHER_TESTS:-config deficit ceil change_traffic auto_churn lib nlfuzz stress gso auto_reserve mq classify child_drop}
for k in $KVERS; do
	tests=${ARBT_TESTS:-}
	what="all tests"
	if [ -z "$tests" ] && [ "${ARBT_ALL_FULL:-0}" != 1 ] && [ "$k" != "$FULL_KVER" ]; then
		tests=$OTHER_TESTS
		what="kernel-facing subset: $tests"
	fi
	step "VM suite on $k (one boot, $what)"
	log=$LOG/vm-$k.tap
	# Stress at a tenth of its full size on the distro kernels (the full
	# 10,000 cycles run on the debug kernel below and in make check-debug).
	ARBT_TESTS=$tests ARBT_STRESS_CYCLES=${ARBT_STRESS_CYCLES:-1000} ARBT_STRESS_MANUAL=${ARBT_STRESS_MANUAL:-200} \
		bash scripts/vm.sh -n -k "$k" -t "${ARBT_VM_TIMEOUT:-3600}" -- selftests/arbtable/run_all.sh 2>&1 | tee "$log"
	vrc=${PIPESTATUS[0]}
	p=$(grep -E '^ok [0-9]+' "$log" | grep -cv '# SKIP')
	s=$(grep -E '^ok [0-9]+' "$log" | grep -c '# SKIP')
	skipped=$((skipped + s))
	f=$(grep -cE '^not ok [0-9]+' "$log")
	plan=$(sed -nE 's/^1\.\.([0-9]+)$/\1/p' "$log" | tail -n1)
	passed=$((passed + p))
	failed=$((failed + f))
	if [ -z "$plan" ]; then
		echo "VM suite on $k: no TAP plan (vm.sh exit $vrc): counted as a failure"
		failed=$((failed + 1))
	elif [ "$plan" != $((p + f + s)) ]; then
		echo "VM suite on $k: plan 1..$plan but $((p + f + s)) results: counted as a failure"
		failed=$((failed + 1))
	elif [ "$vrc" != 0 ] && [ "$f" = 0 ]; then
		echo "VM suite on $k: vm.sh exit $vrc with no failed test: counted as a failure"
		failed=$((failed + 1))
	fi
	echo "VM suite on $k: $p passed, $f failed, $s skipped (log: $log)"
done

# The debug kernel (KASAN, lockdep, kmemleak, UBSAN) when it is already
# built (a cold build, 55 min here beside other work, does not fit CI):
# the stress test at 3,000 auto / 300 manual cycles and 50,000 netlink
# messages (ARBT_DEBUG_TESTS).  Timed there at full size: boot 108 s,
# nlfuzz 100,000 in 296 s, stress 10,000 in 1023 s (its fixed phases,
# replace/delete and down/up, take ~9 of those minutes); this size is
# ~15 min.  `make check-debug` runs the whole suite at full size.
if [ "${ARBT_DEBUG:-1}" = 1 ]; then
	step "debug kernel, if built (scripts/check-debug.sh --if-cached)"
	# bounded: the whole of make test must stay well inside CI's 90 minutes
	ARBT_DEBUG_VM_TIMEOUT=${ARBT_DEBUG_VM_TIMEOUT:-2100} ARBT_TEST_TIMEOUT=${ARBT_TEST_TIMEOUT:-1200} \
		ARBT_STRESS_CYCLES=${ARBT_DEBUG_STRESS_CYCLES:-3000} ARBT_STRESS_MANUAL=${ARBT_DEBUG_STRESS_MANUAL:-300} \
		ARBT_NLFUZZ_MSGS=${ARBT_NLFUZZ_MSGS:-50000} bash scripts/check-debug.sh --if-cached ${ARBT_DEBUG_TESTS:-stress nlfuzz} 2>&1 | tee "$LOG/check-debug.log"
	drc=${PIPESTATUS[0]}
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$LOG/check-debug.log" | tail -n1)
	dp=$(sed -E 's/^([0-9]+) passed.*/\1/' <<<"$line")
	df=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
	passed=$((passed + ${dp:-0}))
	failed=$((failed + ${df:-0}))
	if [ "$drc" != 0 ] && [ "${df:-0}" = 0 ]; then
		echo "check-debug exited $drc without failed tests counted"
		failed=$((failed + 1))
	fi
fi

step "done in $(($(date +%s) - t0))s"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
