# libarbtable (libnl-3 / libnl-route-3), the arbtablectl CLI on it and the
# example program of Documentation/.
#
#   make lib           build/lib/libarbtable.so.0 (+ .so link, header, .pc),
#                      build/lib/libarbtable-example, build/tools/arbtablectl
#   make lib-install   install-lib + install-tools + install-man of
#                      mk/install.mk (DESTDIR, PREFIX=/usr/local, LIBDIR, ...)
#   make lib-check     host-side checks: exported symbols, man page render,
#                      example built against the installed tree, installed
#                      binaries without rpath
#   make lib-abi-check the built library's ABI against the baseline
#                      lib/abi/libarbtable.abi (abidiff, abigail-tools)
#   make lib-abi-update rewrite that baseline (a deliberate ABI change only)
#
# The binaries in build/ find the built library through an $ORIGIN rpath,
# so they run without installing; build/tools/install/arbtablectl is the
# same program without it, the one make install copies.

LIB_VERSION    := $(ARBTABLE_VERSION)
LIB_SOMAJOR    := 0
LIB_OUT        := $(BUILD)/lib
TOOLS_OUT      := $(BUILD)/tools
LIB_SONAME     := libarbtable.so.$(LIB_SOMAJOR)
LIB_REAL       := $(LIB_OUT)/libarbtable.so.$(LIB_VERSION)
LIB_SO_LINKS   := $(LIB_OUT)/$(LIB_SONAME) $(LIB_OUT)/libarbtable.so
LIB_PC         := $(LIB_OUT)/libarbtable.pc
LIB_HDR        := lib/include/arbtable/arbtable.h
LIB_SRCS       := lib/libarbtable.c lib/arbtable_state.c lib/arbtable_abi.c \
		  lib/arbtable_nl.c
LIB_PRIV_HDRS  := lib/arbtable_abi.h lib/arbtable_state.h lib/arbtable_nl.h
LIB_MAP        := lib/libarbtable.map
# the sizing and allocator exports (LIBARBTABLE_0.2): the core built as
# userspace builds it (tests/core), position independent, hidden
LIB_PLAN_SRCS  := lib/arbtable_plan.c
LIB_PLAN_OBJS  := $(LIB_OUT)/obj/arbtable_plan.o $(LIB_OUT)/obj/arbtable_core.o
LIB_EXAMPLE    := $(LIB_OUT)/libarbtable-example
ARBTABLECTL    := $(TOOLS_OUT)/arbtablectl
# the same program without the build tree's rpath: what make install copies
ARBTABLECTL_INST := $(TOOLS_OUT)/install/arbtablectl

NL_CFLAGS      := $(shell pkg-config --cflags libnl-3.0 libnl-route-3.0 2>/dev/null)
NL_LIBS        := $(shell pkg-config --libs libnl-3.0 libnl-route-3.0 2>/dev/null)
# arbtablectl and arbsim write their JSON with json-c (libjson-c-dev)
JSONC_CFLAGS   := $(shell pkg-config --cflags json-c 2>/dev/null)
JSONC_LIBS     := $(shell pkg-config --libs json-c 2>/dev/null)

LIB_WARN       := -Wall -Wextra $(WERROR_FLAG) -Wmissing-prototypes -Wstrict-prototypes
LIB_CFLAGS     ?= -O2 -g -std=gnu11 -D_GNU_SOURCE $(LIB_WARN)
LIB_LDFLAGS    ?=
# PREFIX, LIBDIR, INCLUDEDIR, ...: mk/install.mk

$(LIB_OUT)/obj/arbtable_plan.o: $(LIB_PLAN_SRCS) $(LIB_HDR) $(CORE_HDRS) mk/lib.mk
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -fPIC -fvisibility=hidden -Ilib/include -c -o $@ $<

$(LIB_OUT)/obj/arbtable_core.o: $(CORE_SRCS) $(CORE_HDRS) mk/lib.mk
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -fPIC -fvisibility=hidden -c -o $@ $<

$(LIB_REAL): $(LIB_SRCS) $(LIB_PLAN_OBJS) $(LIB_PRIV_HDRS) $(LIB_HDR) $(LIB_MAP) include/uapi/linux/pkt_sched_arbtable.h mk/lib.mk VERSION
	@test -n "$(NL_LIBS)" || { echo "libnl-3 / libnl-route-3 not found (apt install libnl-3-dev libnl-route-3-dev)" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -fPIC -fvisibility=hidden -Ilib/include -Iinclude/uapi $(NL_CFLAGS) \
		-DARBTABLE_VERSION='"$(ARBTABLE_VERSION)"' \
		-shared -Wl,-soname,$(LIB_SONAME) -Wl,--version-script=$(LIB_MAP) -Wl,-z,defs \
		$(LIB_LDFLAGS) -o $@ $(LIB_SRCS) $(LIB_PLAN_OBJS) $(NL_LIBS)

$(LIB_SO_LINKS): $(LIB_REAL)
	ln -sf $(notdir $(LIB_REAL)) $@

$(LIB_PC): lib/libarbtable.pc.in mk/lib.mk
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(LIB_VERSION)|' $< >$@

# linked like an outside program: public header and -larbtable only
$(LIB_EXAMPLE): Documentation/libarbtable-example.c $(LIB_HDR) $(LIB_SO_LINKS)
	$(CC) $(LIB_CFLAGS) -Ilib/include -o $@ $< -L$(LIB_OUT) -larbtable \
		-Wl,-rpath,'$$ORIGIN'

# capacity/request size requests with the module's own code: the core
# (tests/core, as arbsim builds it) behind tools/arbtable_cost.h
CTL_SRCS       := tools/arbtablectl.c tools/arbtablectl_class.c \
		  tools/arbtablectl_qdisc.c tools/arbtablectl_table.c \
		  tools/arbtablectl_show.c tools/arbtablectl_watch.c \
		  tools/arbtablectl_capacity.c tools/arbtablectl_request.c \
		  tools/arbtablectl_opts.c tools/arbtablectl_snap.c \
		  tools/arbt_print.c
CTL_HDRS       := tools/arbtablectl.h tools/arbtablectl_capacity.h \
		  tools/arbtable_cost.h tools/arbt_print.h
CTL_COST_OBJS  := $(TOOLS_OUT)/obj/arbtable_cost.o $(TOOLS_OUT)/obj/arbtable_core.o

$(TOOLS_OUT)/obj/arbtable_cost.o: tools/arbtable_cost.c tools/arbtable_cost.h $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -Itools -c -o $@ $<

$(TOOLS_OUT)/obj/arbtable_core.o: $(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(USER_CFLAGS) -c -o $@ $<

$(ARBTABLECTL): $(CTL_SRCS) $(CTL_HDRS) $(CTL_COST_OBJS) $(PARSE_SRCS) $(PARSE_HDRS) $(REQUEST_SRCS) $(REQUEST_HDRS) $(LIB_HDR) $(LIB_SO_LINKS)
	@mkdir -p $(dir $@)
	@test -n "$(JSONC_LIBS)" || { echo "json-c not found (apt install libjson-c-dev)" >&2; exit 1; }
	$(CC) $(LIB_CFLAGS) -Ilib/include -Ilib -Itools $(JSONC_CFLAGS) -o $@ $(CTL_SRCS) $(CTL_COST_OBJS) \
		$(PARSE_SRCS) $(REQUEST_SRCS) -L$(LIB_OUT) -larbtable $(JSONC_LIBS) -lm -Wl,-rpath,'$$ORIGIN/../lib'

$(ARBTABLECTL_INST): $(CTL_SRCS) $(CTL_HDRS) $(CTL_COST_OBJS) $(PARSE_SRCS) $(PARSE_HDRS) $(REQUEST_SRCS) $(REQUEST_HDRS) $(LIB_HDR) $(LIB_SO_LINKS)
	@mkdir -p $(dir $@)
	@test -n "$(JSONC_LIBS)" || { echo "json-c not found (apt install libjson-c-dev)" >&2; exit 1; }
	$(CC) $(LIB_CFLAGS) -Ilib/include -Ilib -Itools $(JSONC_CFLAGS) -o $@ $(CTL_SRCS) $(CTL_COST_OBJS) \
		$(PARSE_SRCS) $(REQUEST_SRCS) -L$(LIB_OUT) -larbtable $(JSONC_LIBS) -lm $(LIB_LDFLAGS)

.PHONY: lib lib-install lib-check
lib: $(LIB_REAL) $(LIB_SO_LINKS) $(LIB_PC) $(LIB_EXAMPLE) $(ARBTABLECTL) $(ARBTABLECTL_INST)

# the one install path (mk/install.mk): library, tools, man pages
lib-install: lib arbsim
	@$(MAKE) --no-print-directory install-lib install-tools install-man

# The ABI check: the exported symbols with their version nodes are exactly
# lib/libarbtable.symbols, and every ARB_EXPORT function is among them (a
# function missing from libarbtable.map would silently stay local).
lib-check: lib
	@set -e; nm -D --defined-only $(LIB_REAL) | awk '$$2 == "T" { print $$3 }' | sort >$(LIB_OUT)/symbols.now; \
		if ! diff -u lib/libarbtable.symbols $(LIB_OUT)/symbols.now; then \
			echo "exported symbols differ from lib/libarbtable.symbols (a new symbol needs a new version node)"; exit 1; fi; \
		for f in $$(sed -n '/^ARB_EXPORT/{N;p}' $(LIB_SRCS) $(LIB_PLAN_SRCS) | grep -o 'arbtable_[a-z_]*(' | tr -d '('); do \
			grep -q "^$$f@@" lib/libarbtable.symbols || { echo "ARB_EXPORT $$f is not exported"; exit 1; }; done; \
		echo "exported: $$(wc -l <lib/libarbtable.symbols) symbols, as lib/libarbtable.symbols lists them"
	@readelf -d $(LIB_REAL) | grep -q 'SONAME.*$(LIB_SONAME)' && echo "soname $(LIB_SONAME)"
	@out=$$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z Documentation/arbtablectl.8 2>&1); \
		if [ -n "$$out" ]; then echo "$$out"; exit 1; fi; echo "arbtablectl.8 renders without warnings"
	@rm -rf $(BUILD)/lib-install-check
	@$(MAKE) --no-print-directory lib-install DESTDIR=$(BUILD)/lib-install-check PREFIX=/usr >/dev/null
	@PKG_CONFIG_SYSROOT_DIR=$(BUILD)/lib-install-check \
	 PKG_CONFIG_PATH=$(BUILD)/lib-install-check/usr/lib/pkgconfig \
	 bash -c 'set -e; f=$$(pkg-config --cflags --libs libarbtable); echo "pkg-config: $$f"; \
		$(CC) $(LIB_CFLAGS) -o $(BUILD)/lib-install-check/example Documentation/libarbtable-example.c $$f \
		-Wl,-rpath,$(BUILD)/lib-install-check/usr/lib; \
		$(BUILD)/lib-install-check/example --help >/dev/null; echo "example builds against the installed tree"'
	@set -e; d=$(BUILD)/lib-install-check/usr; \
		for f in $$d/bin/arbtablectl $$d/bin/arbsim $$d/share/man/man8/arbtablectl.8 $$d/share/man/man1/arbsim.1; do \
			test -e $$f || { echo "not installed: $$f"; exit 1; }; done; \
		for f in $$d/bin/arbtablectl $$d/bin/arbsim $$d/lib/libarbtable.so.$(LIB_VERSION); do \
			! readelf -d $$f | grep -qE "RPATH|RUNPATH" || { echo "$$f carries an rpath"; exit 1; }; done; \
		LD_LIBRARY_PATH=$$d/lib $$d/bin/arbtablectl --version | grep -q "libarbtable $(LIB_VERSION)"; \
		echo "installed arbtablectl, arbsim, man pages; no RPATH/RUNPATH in the installed binaries"

all: lib

# libarbtable's extensible structs (tests/unit/test_libabi.c): the library's
# sources compiled into the test, which fills the opaque state itself;
# part of make unit
$(BUILD)/unit/test_libabi: tests/unit/test_libabi.c $(LIB_SRCS) $(LIB_PRIV_HDRS) $(LIB_HDR) include/uapi/linux/pkt_sched_arbtable.h
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) $(SAN_FLAGS) -Ilib/include -Ilib -Iinclude/uapi $(NL_CFLAGS) \
		-DARBTABLE_VERSION='"$(ARBTABLE_VERSION)"' -o $@ $< $(LIB_SRCS) $(NL_LIBS) $(UNIT_LIBS)

# The ABI check: abidiff between lib/abi/libarbtable.abi, the ABI as last
# released (abidw of the library: its exported functions and the public
# types they reach), and the library just built. Any change it reports to
# a function, a symbol or a public type fails: a removed or retyped
# function, a field moved, resized or retyped. Appending a field to an
# extensible struct of arbtable.h is compatible by design but is reported
# too: abigail-tools 2.2's suppressions for "members inserted at the end"
# (has_data_member_inserted_at/between) were tried and also hid two
# fields swapped, so every ABI change is acknowledged by hand instead;
# what an acknowledged append may not do (move, resize or drop a field a
# release had) make unit checks member by member against copies of the
# released records (tests/unit/test_libabi.c, test_ver0_layout_kept).
# Added functions do not fail here: they need their version node, which
# lib-check enforces. Changes to opaque types (struct arbtable,
# struct arbtable_state) are not ABI and are not reported.
# On a deliberate change (a field appended, or a release: VERSION bumped,
# a new node in libarbtable.map):
#   make lib-abi-update && git diff lib/abi/   # review, then commit it
# Fields appended to a record need no new symbol or version node: the
# getters take the caller's size, and the header gets a SIZE_VERn.
LIB_ABI        := lib/abi/libarbtable.abi
LIB_ABIDW      := abidw --headers-dir lib/include/arbtable --drop-private-types \
		  --no-corpus-path --no-comp-dir-path --no-show-locs

.PHONY: lib-abi-check lib-abi-update
lib-abi-check: $(LIB_REAL)
	@command -v abidiff >/dev/null || { echo "abidiff not found (apt install abigail-tools)"; exit 1; }
	@rc=0; abidiff --no-added-syms $(LIB_ABI) $(LIB_REAL) >$(LIB_OUT)/abidiff.txt || rc=$$?; \
	if [ $$rc != 0 ]; then cat $(LIB_OUT)/abidiff.txt; \
		echo "abidiff exit $$rc: the ABI differs from $(LIB_ABI) (a deliberate change: make lib-abi-update, see mk/lib.mk)"; exit 1; fi; \
	echo "ABI as $(LIB_ABI): $$(grep -c '<elf-symbol ' $(LIB_ABI)) symbols, no change"

lib-abi-update: $(LIB_REAL)
	@mkdir -p $(dir $(LIB_ABI))
	$(LIB_ABIDW) --out-file $(LIB_ABI) $(LIB_REAL)
