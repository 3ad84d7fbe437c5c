# Debug kernel checks (issue 4): KASAN, lockdep, atomic-sleep, kmemleak and
# UBSAN kernel from linux-source-6.12, cached in $(CACHE)/debug-kernel/.
#
#   make check-debug   build or reuse it; whole VM suite + full stress and
#                      netlink fuzzing on it; fails on any splat or leak
#   make debug-kernel  only build it (~40 min cold on 2 cores)
.PHONY: check-debug debug-kernel
check-debug:
	@bash scripts/check-debug.sh
debug-kernel:
	@bash scripts/debug-kernel.sh
