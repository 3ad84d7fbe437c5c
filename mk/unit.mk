# Userspace unit tests of the kernel-independent core: every
# tests/unit/test_*.c is linked with the core sources and cmocka, built
# with ASan+UBSan, and run; the summary line comes from scripts/unit-run.sh.

UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/unit/%,$(UNIT_SRCS))
UNIT_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka) -lm

$(BUILD)/unit/%: tests/unit/%.c $(CORE_SRCS) $(CORE_HDRS) $(wildcard tests/unit/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(SAN_FLAGS) -Itests/unit -o $@ $< $(CORE_SRCS) $(UNIT_LIBS)

# The shared parser, checked against tc's own get_rate64()/get_size()
# compiled from the iproute2 source the plugin is built against.
$(BUILD)/unit/tc_utils_math.o: $(IPROUTE2)/lib/utils_math.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -D_GNU_SOURCE -I$(IPROUTE2)/include -I$(IPROUTE2)/include/uapi -c -o $@ $<

$(BUILD)/unit/test_parse: tests/unit/test_parse.c $(PARSE_SRCS) $(PARSE_HDRS) $(BUILD)/unit/tc_utils_math.o $(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(SAN_FLAGS) -Ilib -o $@ $< $(PARSE_SRCS) $(CORE_SRCS) \
		$(BUILD)/unit/tc_utils_math.o $(UNIT_LIBS)

# The one reservation request check of arbtable-cni, arbtablectl and
# arbsim, against the module's texts and limits
$(BUILD)/unit/test_request: tests/unit/test_request.c $(REQUEST_SRCS) $(REQUEST_HDRS) $(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(SAN_FLAGS) -Ilib -o $@ $< $(REQUEST_SRCS) $(CORE_SRCS) $(UNIT_LIBS)

.PHONY: unit unit-build
unit-build: $(UNIT_BINS)
unit: unit-build
	@bash scripts/unit-run.sh $(UNIT_BINS)

all: unit-build
