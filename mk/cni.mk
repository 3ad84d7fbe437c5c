# arbtable-cni: the CNI plugin (cni/), on libarbtable and json-c.
#
#   make cni-result-check  cni/version.c's unit test (tests/cni)
#   make cni        build/cni/arbtable-cni (finds the built libarbtable
#                   through an $ORIGIN rpath) and build/cni/install/
#                   arbtable-cni (without it: what make install copies)
#
# make install puts it into CNI_BINDIR (/opt/cni/bin, where containerd and
# Kubernetes look; Debian's podman looks in /usr/lib/cni as well).

CNI_OUT      := $(BUILD)/cni
CNI_BIN      := $(CNI_OUT)/arbtable-cni
CNI_BIN_INST := $(CNI_OUT)/install/arbtable-cni
CNI_SRCS     := cni/main.c cni/conf.c cni/state.c cni/cmd.c cni/tcnl.c \
		cni/version.c cni/status.c cni/gc.c cni/classes.c cni/error.c
CNI_HDRS     := cni/cni.h cni/tcnl.h
CNI_BINDIR   ?= /opt/cni/bin
# tcnl.c builds its requests with libnl-route-3 itself (links, clsact,
# fw, matchall + skbedit) and sends them through lib/arbtable_nl.c, the
# exchange libarbtable uses (compiled in: the library keeps it hidden)
CNI_NL_SRCS  := lib/arbtable_nl.c
CNI_NL_HDRS  := lib/arbtable_nl.h
CNI_NL_CFLAGS := $(shell pkg-config --cflags libnl-3.0 libnl-route-3.0 2>/dev/null)
CNI_NL_LIBS  := $(shell pkg-config --libs libnl-3.0 libnl-route-3.0 2>/dev/null)

# (mk/lib.mk is read after this file: name its outputs, not its variables)
CNI_DEPS := $(CNI_SRCS) $(CNI_HDRS) $(CNI_NL_SRCS) $(CNI_NL_HDRS) $(PARSE_SRCS) $(PARSE_HDRS) \
	    $(REQUEST_SRCS) $(REQUEST_HDRS) lib/include/arbtable/arbtable.h \
	    $(BUILD)/lib/libarbtable.so $(BUILD)/lib/libarbtable.so.0 mk/cni.mk

# the two differ only in where they find libarbtable: the built one, or
# the installed one
$(CNI_BIN): CNI_LDFLAGS = -Wl,-rpath,'$$ORIGIN/../lib'
$(CNI_BIN_INST): CNI_LDFLAGS = $(LIB_LDFLAGS)
$(CNI_BIN) $(CNI_BIN_INST): $(CNI_DEPS)
	@test -n "$(JSONC_LIBS)" || { echo "json-c not found (apt install libjson-c-dev)" >&2; exit 1; }
	@test -n "$(CNI_NL_LIBS)" || { echo "libnl-route-3 not found (apt install libnl-3-dev libnl-route-3-dev)" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -Ilib/include -Ilib $(JSONC_CFLAGS) $(CNI_NL_CFLAGS) -o $@ \
		$(CNI_SRCS) $(CNI_NL_SRCS) $(PARSE_SRCS) $(REQUEST_SRCS) \
		-L$(BUILD)/lib -larbtable $(JSONC_LIBS) $(CNI_NL_LIBS) $(CNI_LDFLAGS)

# the host checks' "ok"/"FAIL" lines and their counts (tests/cni/check.h)
CNI_CHECK_SRCS := tests/cni/check.c tests/cni/check.h

# cni/version.c alone: versions, cniVersions, results per version
CNI_RESULT_CHECK := $(CNI_OUT)/result-check
$(CNI_RESULT_CHECK): tests/cni/result-check.c $(CNI_CHECK_SRCS) cni/version.c cni/cni.h mk/cni.mk
	@test -n "$(JSONC_LIBS)" || { echo "json-c not found (apt install libjson-c-dev)" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -Ilib/include -Icni $(JSONC_CFLAGS) -o $@ \
		tests/cni/result-check.c tests/cni/check.c cni/version.c $(JSONC_LIBS)

.PHONY: cni install-cni cni-result-check
cni: $(CNI_BIN) $(CNI_BIN_INST) $(CNI_RESULT_CHECK)

cni-result-check: $(CNI_RESULT_CHECK)
	$(CNI_RESULT_CHECK)

install-cni: cni
	$(INSTALL) -d $(DESTDIR)$(CNI_BINDIR)
	$(INSTALL) -m 0755 $(CNI_BIN_INST) $(DESTDIR)$(CNI_BINDIR)/arbtable-cni

all: cni

# make install / uninstall (mk/install.mk) take the plugin along
install: install-cni
uninstall: uninstall-cni
.PHONY: uninstall-cni
uninstall-cni:
	rm -f $(DESTDIR)$(CNI_BINDIR)/arbtable-cni

# cni/tcnl.c on the host: the mark request's layout (libnl builds it,
# tcnl.c adds TCA_SKBEDIT_MASK) and requests in a namespace of its own
# (tests/cni/tcnl-check.c; root)
CNI_TCNL_CHECK := $(CNI_OUT)/tcnl-check
$(CNI_TCNL_CHECK): tests/cni/tcnl-check.c $(CNI_CHECK_SRCS) cni/tcnl.c cni/tcnl.h $(CNI_NL_SRCS) $(CNI_NL_HDRS) mk/cni.mk
	@test -n "$(CNI_NL_LIBS)" || { echo "libnl-route-3 not found (apt install libnl-3-dev libnl-route-3-dev)" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -Icni -Ilib $(CNI_NL_CFLAGS) -o $@ \
		tests/cni/tcnl-check.c tests/cni/check.c cni/tcnl.c $(CNI_NL_SRCS) $(CNI_NL_LIBS)

.PHONY: cni-tcnl-check
cni: $(CNI_TCNL_CHECK)
cni-tcnl-check: $(CNI_TCNL_CHECK)
	$(CNI_TCNL_CHECK)

# cni/state.c alone: records under arbtablectl's keys, and the records of
# earlier versions still read (tests/cni/state-check.c)
CNI_STATE_CHECK := $(CNI_OUT)/state-check
$(CNI_STATE_CHECK): tests/cni/state-check.c $(CNI_CHECK_SRCS) cni/state.c cni/error.c cni/cni.h $(PARSE_SRCS) $(PARSE_HDRS) mk/cni.mk
	@test -n "$(JSONC_LIBS)" || { echo "json-c not found (apt install libjson-c-dev)" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -Ilib/include -Ilib -Icni $(JSONC_CFLAGS) -o $@ \
		tests/cni/state-check.c tests/cni/check.c cni/state.c cni/error.c $(PARSE_SRCS) $(JSONC_LIBS)

.PHONY: cni-state-check
cni: $(CNI_STATE_CHECK)
cni-state-check: $(CNI_STATE_CHECK)
	$(CNI_STATE_CHECK) Documentation/arbtablectl.8
