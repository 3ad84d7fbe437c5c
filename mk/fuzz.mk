# libFuzzer targets on the kernel-independent core (tests/fuzz): table
# programming + arbiter steps, allocator op sequences, admission plan and
# commit.  Built with clang (-fsanitize=fuzzer,address,undefined).
#
#   make fuzz         each target for FUZZ_SECONDS (default 300)
#   make fuzz-short   each target for FUZZ_SHORT_RUNS inputs (default
#                     60000; part of make test, where it runs at idle
#                     priority beside the VM)

FUZZ_CC       ?= clang
FUZZ_DIR      := $(BUILD)/fuzz
FUZZ_TARGETS  := $(patsubst tests/fuzz/fuzz_%.c,$(FUZZ_DIR)/fuzz_%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_CFLAGS   := -g -O1 -Wall -Wextra $(WERROR_FLAG) -std=gnu11 -Itests/include -Itests/core -Ikernel -Iinclude/uapi -Itests/fuzz \
		 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_SECONDS       ?= 300
FUZZ_SHORT_RUNS    ?= 60000

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_input.h $(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(CORE_SRCS)

.PHONY: fuzz fuzz-short fuzz-build
fuzz-build: $(FUZZ_TARGETS)
fuzz: fuzz-build
	@bash scripts/fuzz-run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)
fuzz-short: fuzz-build
	@bash scripts/fuzz-run.sh runs=$(FUZZ_SHORT_RUNS) $(FUZZ_TARGETS)

# The netlink fuzzer (run in the VM by selftests/arbtable/test_nlfuzz.sh).
NLFUZZ_BIN := $(BUILD)/nlfuzz/arbt_nlfuzz
$(NLFUZZ_BIN): tests/nlfuzz/arbt_nlfuzz.c include/uapi/linux/pkt_sched_arbtable.h mk/fuzz.mk
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -o $@ $<
all: $(NLFUZZ_BIN)
