# BPF programs of the selftests (a tc classifier for test_classify.sh),
# built with clang into build/bpf/<name>.bpf.o.  A plain `make` without
# clang builds everything else (a user installing from source needs no
# clang); make test builds them with `make bpf`, which fails without it
# (scripts/setup.sh installs clang before make test's build).
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
endif
