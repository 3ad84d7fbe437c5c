# Static checks of the kernel sources: checkpatch (from Debian's
# linux-source, unpacked by scripts/setup.sh) and sparse via Kbuild C=2.

CHECKPATCH ?= $(CACHE)/checkpatch/checkpatch.pl
LINT_FILES := $(wildcard kernel/*.c kernel/*.h) include/uapi/linux/pkt_sched_arbtable.h \
	      include/trace/events/arbtable.h

.PHONY: lint checkpatch kerneldoc sparse stack rst man-lint extack kbuild
lint: checkpatch kerneldoc sparse stack rst man-lint extack kbuild

# The module's Makefiles as an in-tree one would be: no shell; what differs
# between kernels is decided by version in kernel/arbtable_compat.h.
kbuild:
	@! grep -n '$$(shell' kernel/Kbuild kernel/Makefile.intree || \
		{ echo "lint: kernel/Kbuild or Makefile.intree runs the shell (feature tests belong in arbtable_compat.h)"; exit 1; }

# Every formatted extack fits NL_SET_ERR_MSG_FMT's 80 bytes, its width read
# from the format (the core's own refusals: unit test test_alloc).
extack:
	python3 scripts/extack-check.py kernel/arbtable_qdisc.c

# --strict, as net/ maintainers run it. Ignored: CAMELCASE (the kernel's
# own Qdisc types, which --no-tree cannot tell from ours), LONG_LINE_STRING
# (user-visible strings are not split, so they can be grepped), and in the
# tracepoint header only, TRACE_EVENT's own layout (lines ending in '(',
# its argument alignment) as in include/trace/events/; in the compat
# header only, LINUX_VERSION_CODE (it is the header's job: an out-of-tree
# module for several kernels) and the comparison checkpatch then misreads.
TRACE_HDR  := include/trace/events/arbtable.h
COMPAT_HDR := kernel/arbtable_compat.h
CP_IGNORE  := FILE_PATH_CHANGES,SPDX_LICENSE_TAG,TRACE_PRINTK,CAMELCASE,LONG_LINE_STRING
checkpatch:
	@test -x $(CHECKPATCH) || { echo "lint: $(CHECKPATCH) missing: run scripts/setup.sh"; exit 1; }
	$(CHECKPATCH) --no-tree --terse --show-types --strict --ignore $(CP_IGNORE) \
		-f $(filter-out $(TRACE_HDR) $(COMPAT_HDR),$(LINT_FILES))
	$(CHECKPATCH) --no-tree --terse --show-types --strict \
		--ignore $(CP_IGNORE),LINUX_VERSION_CODE,CONSTANT_COMPARISON -f $(COMPAT_HDR)
	$(CHECKPATCH) --no-tree --terse --show-types --strict \
		--ignore $(CP_IGNORE),OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT -f $(TRACE_HDR)

# kernel-doc comments (the uapi structs and enums) complete and well-formed:
# every member described, no stray parameter (scripts/kernel-doc of the
# 6.12 headers package, which setup installs).
KERNEL_DOC ?= $(firstword $(wildcard /usr/src/linux-headers-6.12*-common/scripts/kernel-doc))
kerneldoc:
	@test -n "$(KERNEL_DOC)" || { echo "lint: scripts/kernel-doc missing: run scripts/setup.sh"; exit 1; }
	perl $(KERNEL_DOC) -none -Wall -Werror $(LINT_FILES)

sparse:
	@command -v sparse >/dev/null || { echo "lint: sparse missing: run scripts/setup.sh"; exit 1; }
	@for k in $(KVERS); do \
		out=$$($(MAKE) --no-print-directory BUILD=$(BUILD)/sparse C=2 KBUILD_W=1 $(BUILD)/sparse/$$k/sch_arbtable.ko 2>&1); \
		rc=$$?; printf '%s\n' "$$out" | grep -E ': (warning|error):' ; \
		if [ $$rc -ne 0 ] || printf '%s\n' "$$out" | grep -qE ': (warning|error):'; then echo "sparse: $$k: FAILED"; exit 1; fi; \
		echo "sparse: $$k: clean"; \
	done

# Stack frames: the module built with -fstack-usage for every kernel in
# KVERS; any function's frame above STACK_MAX bytes fails (issue 14: the
# configuration path must not hold tables or message buffers on the stack).
STACK_MAX ?= 256
stack:
	@for k in $(KVERS); do \
		out=$$($(MAKE) --no-print-directory -s BUILD=$(BUILD)/stack KBUILD_W=1 \
			MODULE_KCFLAGS=-fstack-usage $(BUILD)/stack/$$k/sch_arbtable.ko 2>&1) || \
			{ printf '%s\n' "$$out"; echo "stack: $$k: build failed"; exit 1; }; \
		big=$$(cat $(BUILD)/stack/$$k/src/kernel/*.su | awk -F'\t' -v max=$(STACK_MAX) '$$2 + 0 > max'); \
		top=$$(cat $(BUILD)/stack/$$k/src/kernel/*.su | sort -t"$$(printf '\t')" -k2 -n | tail -n1 | sed 's|.*/||'); \
		if [ -n "$$big" ]; then printf '%s\n' "$$big"; echo "stack: $$k: frames above $(STACK_MAX) bytes"; exit 1; fi; \
		echo "stack: $$k: every frame <= $(STACK_MAX) bytes (largest: $$top)"; \
	done

# The documentation: Documentation/networking/*.rst, Documentation/dev/*.rst
# and the selftests' README parse without a docutils warning
# (python3-docutils, from setup).
RST_FILES := $(wildcard Documentation/networking/*.rst Documentation/dev/*.rst selftests/arbtable/*.rst)
rst:
	@/usr/bin/python3 -c 'import docutils' 2>/dev/null || { echo "lint: python3-docutils missing: run scripts/setup.sh"; exit 1; }
	@/usr/bin/python3 scripts/rst-check.py $(RST_FILES)

# The man pages: each rendered by man(1) with every groff warning on
# (--warnings=w); any warning fails (man itself exits 0 on them).
MAN_PAGES := $(wildcard Documentation/*.[1-8])
man-lint:
	@command -v man >/dev/null || { echo "lint: man missing (apt-get install man-db)"; exit 1; }
	@rc=0; for p in $(MAN_PAGES); do \
		w=$$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings=w -l $$p 2>&1 >/dev/null); \
		if [ -n "$$w" ]; then printf '%s\n' "$$w" | sed "s|^|$$p: |"; rc=1; \
		else echo "man: $$p: no warning"; fi; \
	done; exit $$rc
