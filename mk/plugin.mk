# tc plugin: build/tc/q_arbtable.so, loaded by Debian's tc (iproute2 6.1)
# through TC_LIB_DIR. It is compiled against the private headers of the
# installed tc's source (IPROUTE2, unpacked by scripts/setup.sh) and uses
# only symbols that /usr/sbin/tc exports.
#
# The same plugin is also built for bookworm-backports' iproute2 (6.15;
# IPROUTE2_BPO, unpacked by scripts/setup.sh without installing it: root/
# its package, root/sbin/tc the binary, src/ its source where the archive
# serves it) into build/tc-<maj.min>/, and plugin-check runs its checks
# with both tc's.
#
#   make plugin
#   TC_LIB_DIR=$(BUILD)/tc tc qdisc add dev X root handle 1: arbtable help

PLUGIN_SO     := $(BUILD)/tc/q_arbtable.so
PLUGIN_SRCS   := tc/q_arbtable.c $(PARSE_SRCS)
PLUGIN_HDRS   := include/uapi/linux/pkt_sched_arbtable.h $(PARSE_HDRS)
# Our uapi header first, then iproute2's own copies of the kernel uapi
# headers (the ones tc was built with, as iproute2's own Makefile does).
PLUGIN_WARN   ?= -O2 -g -fPIC -Wall -Wextra $(WERROR_FLAG) \
		 -Wmissing-prototypes -Wstrict-prototypes -std=gnu11 \
		 -D_GNU_SOURCE -Iinclude/uapi -Ilib
# $(call plugin_cflags,IPROUTE2-SOURCE): its headers, and const hooks
# where its tc_util.h has them (iproute2 >= 6.3)
plugin_cflags = $(PLUGIN_WARN) -I$(1)/include -I$(1)/tc -I$(1)/include/uapi \
		$(if $(shell grep -s 'int .\*parse_qopt.\{2\}const struct qdisc_util' $(1)/tc/tc_util.h),-DARB_QU_CONST=const)
PLUGIN_CFLAGS ?= $(call plugin_cflags,$(IPROUTE2))

$(PLUGIN_SO): $(PLUGIN_SRCS) $(PLUGIN_HDRS) mk/plugin.mk
	@test -f $(IPROUTE2)/tc/tc_util.h || \
		{ echo "iproute2 source not found at $(IPROUTE2) (run scripts/setup.sh)" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) $(PLUGIN_CFLAGS) -shared -o $@ $(PLUGIN_SRCS)

# The backports tc: version from setup's record, e.g. 6.15.0-1~bpo12+1
# under /var/lib, not CACHE: the VM guest sees /var/cache as an empty tmpfs
IPROUTE2_BPO  ?= /var/lib/arbtable/iproute2-bpo
TC_BPO        := $(IPROUTE2_BPO)/root/sbin/tc
TC_BPO_VER    := $(shell cat $(IPROUTE2_BPO)/version 2>/dev/null)
TC_BPO_MM     := $(shell echo '$(TC_BPO_VER)' | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p')
PLUGIN_BPO_DIR := $(BUILD)/tc-$(TC_BPO_MM)
PLUGIN_BPO_SO := $(PLUGIN_BPO_DIR)/q_arbtable.so

# Its headers: its own source where setup could get it; else, as the
# archive no longer serves 6.15's source, the installed tc's (6.1). That
# is sound for this plugin: the 24 tc symbols it imports (addattr*,
# parse_rtattr_flags, print_color_*, open/close_json_*, print_nl,
# tc_print_rate, sprint_time64, get_percent_rate64, incomplete_command,
# show_details) are declared alike in 6.1 and 6.15, and struct
# qdisc_util has the same members (6.3 made the hooks' qu const, which
# changes no ABI). Either way the built plugin's imports are checked
# against that tc's exports, and plugin-check-bpo runs it under that tc.
PLUGIN_BPO_HDRS := $(if $(wildcard $(IPROUTE2_BPO)/src/tc/tc_util.h),$(IPROUTE2_BPO)/src,$(IPROUTE2))

$(PLUGIN_BPO_SO): $(PLUGIN_SRCS) $(PLUGIN_HDRS) mk/plugin.mk
	@test -f $(PLUGIN_BPO_HDRS)/tc/tc_util.h || \
		{ echo "iproute2 source not found at $(PLUGIN_BPO_HDRS) (run scripts/setup.sh)" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) $(call plugin_cflags,$(PLUGIN_BPO_HDRS)) -shared -o $@.tmp $(PLUGIN_SRCS)
	@bash scripts/tc-plugin-symbols.sh $@.tmp $(TC_BPO) >/dev/null || { rm -f $@.tmp; exit 1; }
	@mv $@.tmp $@

.PHONY: plugin plugin-bpo plugin-check plugin-check-bpo
plugin: $(PLUGIN_SO)
# nothing to do (and nothing claimed) where setup found no backports tc
plugin-bpo: $(if $(TC_BPO_MM),$(PLUGIN_BPO_SO))

# Parse and print checks of the plugin with the installed tc, then with
# the backports tc and the plugin built for it (no module needed).
plugin-check: plugin
	@bash tests/plugin/parse-check.sh $(BUILD)/tc
	@$(MAKE) --no-print-directory plugin-check-bpo

plugin-check-bpo: plugin-bpo
	@if [ -n "$(TC_BPO_MM)" ]; then \
		echo "--- tc $(TC_BPO_VER) ($(TC_BPO)), plugin $(PLUGIN_BPO_SO)"; \
		TC=$(TC_BPO) bash tests/plugin/parse-check.sh $(PLUGIN_BPO_DIR); \
	else echo "plugin-check-bpo: no backports tc in $(IPROUTE2_BPO) (scripts/setup.sh)"; exit 1; fi

all: plugin plugin-bpo
