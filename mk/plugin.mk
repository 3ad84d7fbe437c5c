# tc plugin: build/tc/q_arbtable.so, loaded by Debian's tc (iproute2 6.1)
# through TC_LIB_DIR. It is compiled against the private headers of the
# installed tc's source (IPROUTE2, unpacked by scripts/setup.sh) and uses
# only symbols that /usr/sbin/tc exports.
#
#   make plugin
#   TC_LIB_DIR=$(BUILD)/tc tc qdisc add dev X root handle 1: arbtable help

PLUGIN_SO     := $(BUILD)/tc/q_arbtable.so
PLUGIN_SRCS   := tc/q_arbtable.c $(PARSE_SRCS)
PLUGIN_HDRS   := include/uapi/linux/pkt_sched_arbtable.h $(PARSE_HDRS)
# Our uapi header first, then iproute2's own copies of the kernel uapi
# headers (the ones tc was built with, as iproute2's own Makefile does).
PLUGIN_CFLAGS ?= -O2 -g -fPIC -Wall -Wextra $(WERROR_FLAG) \
		 -Wmissing-prototypes -Wstrict-prototypes -std=gnu11 \
		 -D_GNU_SOURCE -Iinclude/uapi -Ilib -I$(IPROUTE2)/include \
		 -I$(IPROUTE2)/tc -I$(IPROUTE2)/include/uapi

$(PLUGIN_SO): $(PLUGIN_SRCS) $(PLUGIN_HDRS) mk/plugin.mk
	@test -f $(IPROUTE2)/tc/tc_util.h || \
		{ echo "iproute2 source not found at $(IPROUTE2) (run scripts/setup.sh)" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_CFLAGS) -shared -o $@ $(PLUGIN_SRCS)

.PHONY: plugin plugin-check
plugin: $(PLUGIN_SO)

# Parse checks of the plugin against the installed tc (no module needed).
plugin-check: plugin
	@bash tests/plugin/parse-check.sh $(BUILD)/tc

all: plugin
