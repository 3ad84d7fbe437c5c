# Userspace benchmarks of the kernel-independent core (not tests; no
# timing assertions): allocator cost per insert/release/change and arbiter
# cost per dequeue decision, in ns (native) and instructions (callgrind).
# Built at -O2 without sanitizers from CORE_SRCS; not part of all or test.
#
#   make bench      build/bench/results.{csv,json} and a table on stdout

BENCH_DIR    := $(BUILD)/bench
BENCH_BIN    := $(BENCH_DIR)/arbbench
BENCH_CFLAGS := $(filter-out -fsanitize=% -O%,$(USER_CFLAGS)) -O2
BENCH_OBJS   := $(patsubst kernel/%.c,$(BENCH_DIR)/%.o,$(CORE_SRCS))
BENCH_ARGS   ?=

$(BENCH_DIR)/%.o: kernel/%.c $(CORE_HDRS) mk/bench.mk
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -c -o $@ $<

# -fno-ipa-icf: the per-group wrappers must stay distinct functions.
$(BENCH_DIR)/arbbench.o: tests/bench/arbbench.c $(CORE_HDRS) mk/bench.mk
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -fno-ipa-icf -c -o $@ $<

$(BENCH_BIN): $(BENCH_DIR)/arbbench.o $(BENCH_OBJS)
	$(CC) -o $@ $^

.PHONY: bench
bench: $(BENCH_BIN)
	python3 tests/bench/run.py --bin $(BENCH_BIN) --out $(BENCH_DIR) $(BENCH_ARGS)
