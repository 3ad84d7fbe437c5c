# arbsim: what-if simulator on the module's own core (kernel/arbtable_core.c,
# with the userspace kernel headers of tests/include), in userspace.
#
#   make arbsim        build/tools/arbsim
#   make arbsim-san    build/tools/arbsim-san (ASan+UBSan)
#   make arbsim-test   tests/arbsim/run.sh on the ASan+UBSan build
#                      (ARBSIM=... to test another binary)
#   make front-ends-check  tc, arbtablectl and arbsim fed the same values

ARBSIM_SRCS := tools/arbsim.c tools/arbsim_scenario.c tools/arbsim_classes.c \
	       tools/arbsim_run.c tools/arbsim_report.c tools/arbsim_text.c \
	       tools/arbsim_json.c tools/arbt_print.c
ARBSIM_HDRS := tools/arbsim.h tools/arbt_print.h
ARBSIM      := $(BUILD)/tools/arbsim
ARBSIM_SAN  := $(BUILD)/tools/arbsim-san

$(ARBSIM): $(ARBSIM_SRCS) $(ARBSIM_HDRS) $(CORE_SRCS) $(CORE_HDRS) $(PARSE_SRCS) $(PARSE_HDRS) $(REQUEST_SRCS) $(REQUEST_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Itools -Ilib $(JSONC_CFLAGS) -o $@ $(ARBSIM_SRCS) $(CORE_SRCS) $(PARSE_SRCS) $(REQUEST_SRCS) $(JSONC_LIBS)

$(ARBSIM_SAN): $(ARBSIM_SRCS) $(ARBSIM_HDRS) $(CORE_SRCS) $(CORE_HDRS) $(PARSE_SRCS) $(PARSE_HDRS) $(REQUEST_SRCS) $(REQUEST_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) $(SAN_FLAGS) -Itools -Ilib $(JSONC_CFLAGS) -o $@ $(ARBSIM_SRCS) $(CORE_SRCS) $(PARSE_SRCS) $(REQUEST_SRCS) $(JSONC_LIBS)

# tc, arbtablectl and arbsim given the same values (tests/parse)
.PHONY: front-ends-check
front-ends-check: $(ARBSIM) plugin plugin-bpo lib
	@bash tests/parse/front-ends.sh $(BUILD)

.PHONY: arbsim arbsim-san arbsim-test
arbsim: $(ARBSIM)
arbsim-san: $(ARBSIM_SAN)
arbsim-test: $(ARBSIM) $(ARBSIM_SAN)
	@ARBSIM=$${ARBSIM:-$(ARBSIM_SAN)} bash tests/arbsim/run.sh

all: arbsim
