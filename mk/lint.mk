# Static checks of the kernel sources: checkpatch (from Debian's
# linux-source, unpacked by scripts/setup.sh) and sparse via Kbuild C=2.

CHECKPATCH ?= $(CACHE)/checkpatch/checkpatch.pl
LINT_FILES := $(wildcard kernel/*.c kernel/*.h) include/uapi/linux/pkt_sched_arbtable.h

.PHONY: lint checkpatch sparse
lint: checkpatch sparse

checkpatch:
	@test -x $(CHECKPATCH) || { echo "lint: $(CHECKPATCH) missing: run scripts/setup.sh"; exit 1; }
	$(CHECKPATCH) --no-tree --terse --show-types \
		--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG,TRACE_PRINTK \
		-f $(LINT_FILES)

sparse:
	@command -v sparse >/dev/null || { echo "lint: sparse missing: run scripts/setup.sh"; exit 1; }
	@for k in $(KVERS); do \
		out=$$($(MAKE) --no-print-directory BUILD=$(BUILD)/sparse C=2 KBUILD_W=1 $(BUILD)/sparse/$$k/sch_arbtable.ko 2>&1); \
		rc=$$?; printf '%s\n' "$$out" | grep -E ': (warning|error):' ; \
		if [ $$rc -ne 0 ] || printf '%s\n' "$$out" | grep -qE ': (warning|error):'; then echo "sparse: $$k: FAILED"; exit 1; fi; \
		echo "sparse: $$k: clean"; \
	done
