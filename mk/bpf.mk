# BPF programs of the selftests (a tc classifier for test_classify.sh),
# built with clang into build/bpf/<name>.bpf.o.  Without clang they are
# not built and the tests that need them report a SKIP saying so.
#
#   make bpf

BPF_CLANG  ?= clang
BPF_SRCS   := $(wildcard selftests/arbtable/bpf/*.bpf.c)
BPF_OBJS   := $(patsubst selftests/arbtable/bpf/%.c,$(BUILD)/bpf/%.o,$(BPF_SRCS))
# asm/types.h lives under the host's multiarch include directory
BPF_CFLAGS ?= -O2 -g -target bpf -Wall $(WERROR_FLAG) \
	      -I/usr/include/$(shell $(CC) -dumpmachine 2>/dev/null || echo x86_64-linux-gnu)

$(BUILD)/bpf/%.o: selftests/arbtable/bpf/%.c mk/bpf.mk
	@mkdir -p $(dir $@)
	$(BPF_CLANG) $(BPF_CFLAGS) -c $< -o $@

.PHONY: bpf
bpf: $(BPF_OBJS)

ifneq ($(shell command -v $(BPF_CLANG) 2>/dev/null),)
all: bpf
else
$(info mk/bpf.mk: $(BPF_CLANG) not found: BPF test programs not built (their tests will SKIP))
endif
