# The sanitizer kernel (issue 15): linux-source-6.12, allnoconfig plus
# scripts/sanitizer-kernel.config (KASAN, lockdep, atomic-sleep checks,
# kmemleak, UBSAN, debug objects, failslab/fail_page_alloc), sch_arbtable
# in its net/sched, cached in /var/lib/arbtable/sanitizer/.  make test
# builds it when missing and runs its part of the suite there.
#
#   make check-debug       build or reuse it; the whole VM suite at full
#                          size (10,000 stress cycles, 300,000 fuzzed
#                          netlink messages) through the kselftest runner
#   make sanitizer-kernel  only build it (and rebuild the module in it)
#   make check-full        before a release: make test with the distro
#                          kernel's tests at full size (ARBT_FULL=1), then
#                          make check-debug
.PHONY: check-debug check-full sanitizer-kernel
check-full:
	@ARBT_FULL=1 bash scripts/test.sh && bash scripts/check-debug.sh
check-debug:
	@bash scripts/check-debug.sh
sanitizer-kernel:
	@bash scripts/sanitizer-kernel.sh
