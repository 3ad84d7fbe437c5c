#!/usr/bin/env bash
# `make check-kcsan` (issue 27): the tests that race the qdisc's dump
# paths and netlink changes against its datapath, on the KCSAN kernel
# (scripts/sanitizer-kernel.sh with ARBT_SAN_VARIANT=kcsan: Linux 7.2,
# KCSAN's default configuration, sch_arbtable in net/sched; built when not
# cached), through the kernel's kselftest runner.  Ends with "N passed,
# N failed".
#
# What fails: any KCSAN report whose text names sch_arbtable (a frame in
# the module), as every test's kernel-log check and kernel_log.sh apply
# lib_debug.sh's klog_clean; and every other splat as on the KASAN kernel.
# KCSAN reports that do not involve the module are races in kernel code
# the traffic only passes through (KCSAN's default configuration reports
# some in net, mm and the scheduler): kernel_log.sh prints them in full as
# diagnostics and they fail nothing, since this project can neither fix
# nor annotate them, and failing on them would make the target fail on
# the kernel, not on the module.  kernel_log.sh also checks that KCSAN
# was enabled and set up watchpoints: a run that sampled nothing would
# pass while proving nothing.
#
# The tests: dump_race (tc -s -d qdisc/class dumps in a loop and netlink
# changes beside paced traffic, auto and manual mode), nlfuzz (fuzzed
# qdisc/class messages and dumps under traffic), stress at reduced size
# (class add/change/del, table changes, grafts, root replace and delete,
# down/up, unload under traffic) and mq_lockless (issue 46: the lockless
# root, four CPUs producing into its class rings and its pending mask
# while one dequeues, with 2 rounds of class add/change/delete and a
# qdisc delete under that traffic: about 180 s here; 0 reports on
# sch_arbtable in the first runs, at KCSAN's default sampling and with
# kcsan.skip_watch=400 and 6 rounds, while a plain read of the pending
# mask planted in its enqueue was reported and failed the run.  Its "port
# sends at the one rate" check fell short in 3 of its first 6 runs
# (1.78, 2.21 and, in one guest beside test_mq's locked root at 2.50,
# 1.49 of 2.5 Mbit/s, rings full), on a machine loaded by other guests,
# before rate_check left out the time no producer ran.  On 2026-11-29 it
# held in every run: 2.504 and 2.502 Mbit/s in two runs of
# `scripts/check-kcsan.sh mq mq_lockless` beside a KASAN guest; and in
# a scratch script outside the project (the test's four producers into a
# 4-queue dummy at 2.5 Mbit/s, 15-20 s per mode, the dequeue, watchdog
# and NET_TX events traced) the lockless root sent 2.435 by the device's
# counter in one guest (the locked one 2.487; 2.504 over the traced
# span), and 2.499 and 2.510 against the locked root's 2.499 and 2.500
# in another with two busy loops on the host's two cores: there the
# watchdog fired at most 12 ms late (p50 0.9 ms) and no gap between
# dequeues reached 20 ms.  The cause of the earlier shortfalls was not
# found; a recurrence fails this target.  On 2026-11-30 (the take-back
# state gone from the arbiter) it held again: 2.5019 and 2.5005 in two
# runs of `mq mq_lockless` (the locked root 2.5002 and 2.5011) and 2.5000
# in the whole target, alone on the machine.  That run's one failure was
# test_stress's "still backlogged after the churn" (the producers made
# 820 of their 1,750 packets/s under KCSAN and 1:30 had drained): the
# check now asks that each permanent class sent through the churn.
# test_mq's link-read counts need kprobes, which this kernel lacks: it
# leaves them out here (make test's 7.2 and 6.1 runs make them).
# Then kernel_log.sh.  Not change_traffic:
# its unpaced producers slow its 20 table changes to 253 s under KCSAN,
# and dump_race's manual mode and stress's churn change tables and delete
# backlogged classes under traffic too.  Not json: it tests userspace.  The guest boots
# with kcsan.interrupt_watcher=1: a task's watchpoint also catches
# interrupts and softirqs on its own CPU (net_tx_action dequeuing on the
# CPU whose dump was reading), not only other CPUs; the false positives
# it can add concern per-CPU data, which sch_arbtable has none of.
#
#   scripts/check-kcsan.sh [TEST...]   TEST: names without test_/.sh
#   ARBT_KCSAN_TESTS="..."             the same, from the environment
set -u
# shellcheck source-path=SCRIPTDIR source=kselftest-vm.sh
. "$(dirname "$0")/kselftest-vm.sh"
ks_kernel KCSAN kcsan
say "KCSAN kernel ready in $(($(date +%s) - t0)) s: $src"
tests=${*:-${ARBT_KCSAN_TESTS:-dump_race nlfuzz stress mq_lockless}}
progs=$(for t in $tests; do printf 'test_%s.sh ' "$t"; done)kernel_log.sh
log=$ROOT/build/test-logs/vm-check-kcsan.tap
# KCSAN under TCG: the rate tests' scaling (lib.sh), and sizes that keep
# the run near 15 minutes on 2 cores (927 s measured before mq_lockless;
# it adds about 3 minutes: its test took 157 and 176 s, 2026-11-29)
export ARBT_SLOW_KERNEL=1
export ARBT_DUMPRACE_SECS=${ARBT_DUMPRACE_SECS:-45}
# nlfuzz: 10,000 messages as make test's sanitizer run, which keeps the
# run near 15 minutes (a survivor's fuzzed ceils are lifted before its
# drain check, so larger counts pass too: 30,000 with seed 1 on 6.1)
export ARBT_NLFUZZ_MSGS=${ARBT_NLFUZZ_MSGS:-10000}
export ARBT_STRESS_CYCLES=${ARBT_STRESS_CYCLES:-150} ARBT_STRESS_MANUAL=${ARBT_STRESS_MANUAL:-15}
export ARBT_STRESS_REPLACE=${ARBT_STRESS_REPLACE:-1} ARBT_STRESS_DOWNUP=${ARBT_STRESS_DOWNUP:-1}
# mq_lockless: 2 churn rounds (its ARBT_SLOW_KERNEL size, spelt out), 28 s
# of its ~160; its rate checks are scaled by ARBT_SLOW_KERNEL as above
export ARBT_LL_ROUNDS=${ARBT_LL_ROUNDS:-2}
ARBTABLE_VM_APPEND="${ARBTABLE_VM_APPEND:+$ARBTABLE_VM_APPEND }kcsan.interrupt_watcher=1" \
	ARBTABLE_VM_MEM=${ARBTABLE_VM_MEM:-3G} ks_run "$log" "${ARBT_KCSAN_VM_TIMEOUT:-3000}" "$progs"
# every KCSAN report of the run, ours or not, once (by its timestamp: the
# kernel-log checks print a report again) and counted per title
kr=$(grep -oE '\[ *[0-9]+\.[0-9]+\] BUG: KCSAN: .*' "$log" | sort -u | sed -E 's/^\[[^]]*\] //' | sort | uniq -c)
[ -z "$kr" ] && say "no KCSAN report in the run" || { say "KCSAN reports printed in the run, per title (those naming sch_arbtable failed):"; echo "$kr"; }
say "KCSAN kernel: $p passed, $f failed, $s skipped in $(($(date +%s) - t0)) s (log: $log)"
echo "$p passed, $f failed"
[ "$f" = 0 ]
