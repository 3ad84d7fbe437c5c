# Benchmarks (not tests; nothing fails on a number; not part of all or
# test):
#   make bench-core  userspace: allocator cost per insert/release/change and
#                    arbiter cost per dequeue decision, ns and callgrind
#                    instructions; build/bench/results.{csv,json}
#   make bench-vm    guest instructions per packet through arbtable and the
#                    peer qdiscs, counted by a QEMU TCG plugin in one VM run;
#                    build/bench/vm-results.{csv,json} (tests/bench/vm/)
#   make bench       both
# The core is built at -O2 without sanitizers from CORE_SRCS.

BENCH_DIR    := $(BUILD)/bench
BENCH_BIN    := $(BENCH_DIR)/arbbench
BENCH_CFLAGS := $(filter-out -fsanitize=% -O%,$(USER_CFLAGS)) -O2
BENCH_OBJS   := $(patsubst tests/core/%.c,$(BENCH_DIR)/%.o,$(CORE_SRCS))
BENCH_ARGS   ?=

$(BENCH_DIR)/%.o: tests/core/%.c $(CORE_HDRS) mk/bench.mk
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -c -o $@ $<

# -fno-ipa-icf: the per-group wrappers must stay distinct functions.
$(BENCH_DIR)/arbbench.o: tests/bench/arbbench.c $(CORE_HDRS) mk/bench.mk
	@mkdir -p $(dir $@)
	$(CC) $(BENCH_CFLAGS) -fno-ipa-icf -c -o $@ $<

$(BENCH_BIN): $(BENCH_DIR)/arbbench.o $(BENCH_OBJS)
	$(CC) -o $@ $^

.PHONY: bench bench-core bench-vm
bench: bench-core bench-vm
bench-core: $(BENCH_BIN)
	python3 tests/bench/run.py --bin $(BENCH_BIN) --out $(BENCH_DIR) $(BENCH_ARGS)
bench-vm:
	bash tests/bench/vm/run.sh
