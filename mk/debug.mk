# The sanitizer kernel (issue 15): linux-source-7.2, allnoconfig plus
# scripts/sanitizer-kernel.config (KASAN, lockdep, atomic-sleep checks,
# kmemleak, UBSAN, debug objects, failslab/fail_page_alloc), sch_arbtable
# in its net/sched, cached in /var/lib/arbtable/sanitizer/.  Not part of
# make test (its build is about 1,450 core-seconds cold); ARBT_SANITIZER=1
# make test adds a lane with fault injection, netlink fuzzing and the
# lockless mode there, built when missing.
#
#   make check-debug       build or reuse it; the whole VM suite at full
#                          size (10,000 stress cycles, 300,000 fuzzed
#                          netlink messages) through the kselftest runner
#   make sanitizer-kernel  only build it (and rebuild the module in it)
#   make check-kcsan       the KCSAN kernel (issue 27: ARBT_SAN_VARIANT=kcsan,
#                          the same base with KCSAN instead of KASAN and
#                          the other checkers, cached under kcsan-<key>):
#                          the tests that race dumps and netlink changes
#                          against the datapath; fails on any KCSAN report
#                          that involves sch_arbtable
#   make kcsan-kernel      only build the KCSAN kernel (and the module in it)
#   make check-full        before a release: make test with the distro
#                          kernel's tests at full size (ARBT_FULL=1), then
#                          make check-debug and make check-kcsan
.PHONY: check-debug check-kcsan check-full sanitizer-kernel kcsan-kernel
check-full:
	@ARBT_FULL=1 bash scripts/test.sh && bash scripts/check-debug.sh && bash scripts/check-kcsan.sh
check-debug:
	@bash scripts/check-debug.sh
check-kcsan:
	@bash scripts/check-kcsan.sh
sanitizer-kernel:
	@bash scripts/sanitizer-kernel.sh
kcsan-kernel:
	@ARBT_SAN_VARIANT=kcsan bash scripts/sanitizer-kernel.sh
