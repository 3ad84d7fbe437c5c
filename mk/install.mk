# Installing like a kernel project: make install / make uninstall, the
# DKMS source package, and the packaging checks (DKMS build for every
# kernel with headers, in-tree build in net/sched of linux-source-6.12,
# tdc test cases prepared for the VM suite).
#
#   make install        module (the running kernel's) into
#                       /lib/modules/<kver>/updates/ + depmod, tc plugin into
#                       the directory the installed tc loads from, man pages,
#                       and libarbtable/arbtablectl/arbsim when they are built
#   make uninstall      removes what install put there
#   make dkms-src       sources + dkms.conf into /usr/src/sch-arbtable-<ver>
#   make dkms-install   dkms-src, then dkms add/build/install for every kernel
#                       in KVERS (DKMS_KVERS to choose)
#   make dkms-check     scripts/dkms-check.sh (private DKMS tree, both kernels)
#   make intree-check   scripts/intree-check.sh (net/sched of linux-source-6.12)
#   make tdc-prepare    unpack tc-testing for selftests/arbtable/test_tdc.sh
#
# Variables: DESTDIR (staging root: no depmod/ldconfig), PREFIX (/usr/local),
# BINDIR LIBDIR INCLUDEDIR MANDIR PKGCONFIGDIR, TCLIBDIR (default: read from
# the installed tc, /usr/lib/x86_64-linux-gnu/tc on Debian, tc 6.1 and
# 6.15 alike), INSTALL_KVERS (default: the running kernel's, when built),
# INSTALL_MOD_DIR (updates).  Built outputs only: run make
# first (as your user), then make install (as root).

DKMS_NAME        := sch-arbtable

PREFIX        ?= /usr/local
BINDIR        ?= $(PREFIX)/bin
LIBDIR        ?= $(PREFIX)/lib
INCLUDEDIR    ?= $(PREFIX)/include
MANDIR        ?= $(PREFIX)/share/man
PKGCONFIGDIR  ?= $(LIBDIR)/pkgconfig
# tc looks for q_<kind>.so in $TC_LIB_DIR or in the LIBDIR it was built with
# (Debian: /usr/lib/x86_64-linux-gnu/tc/), not under PREFIX.  Read it from
# the binary; fall back to the multiarch default.
TC_BIN        ?= $(shell command -v tc 2>/dev/null || echo /usr/sbin/tc)
TCLIBDIR      ?= $(or $(shell strings -n 6 $(TC_BIN) 2>/dev/null | grep -m1 -E '^/[^ ]*/tc/?$$' | sed 's|/*$$||'),\
		      /usr/lib/$(shell $(CC) -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/tc)
# The plugin built for that tc: build/tc-<maj.min>/ when TC_BIN is the
# backports' version (mk/plugin.mk), else build/tc/ (the 6.1 headers).
TC_BIN_MM     ?= $(shell $(TC_BIN) -V 2>/dev/null | sed -n 's/.*iproute2-\([0-9]*\.[0-9]*\).*/\1/p')
INSTALL_PLUGIN_DIR = $(if $(and $(TC_BPO_MM),$(filter $(TC_BPO_MM),$(TC_BIN_MM))),$(PLUGIN_BPO_DIR),$(BUILD)/tc)
# the running kernel's module (built where its headers, or KDIR, are);
# INSTALL_KVERS="$(KVERS)" installs every built one
INSTALL_KVERS   ?= $(KVER_KDIR)
INSTALL_MOD_DIR ?= updates
DKMS_SRC_DIR    ?= /usr/src/$(DKMS_NAME)-$(ARBTABLE_VERSION)

INSTALL       ?= install
# Optional pieces built by other parts of the tree: installed if present.
INST_LIB_REAL  = $(wildcard $(BUILD)/lib/libarbtable.so.*.*.*)
INST_TOOLS     = $(wildcard $(BUILD)/tools/install/arbtablectl $(BUILD)/tools/arbsim)
INST_MAN1      = $(wildcard Documentation/*.1)
INST_MAN8      = $(wildcard Documentation/*.8)
INST_LIB_HDR   = $(wildcard lib/include/arbtable/arbtable.h)
INST_LIB_PCIN  = $(wildcard lib/libarbtable.pc.in)

.PHONY: install install-module install-plugin install-man install-lib \
	install-tools uninstall dkms-src dkms-install dkms-check intree-check \
	tdc-prepare install-dirs

install: install-module install-plugin install-man install-lib install-tools
	@echo "installed: modules for $(or $(INSTALL_KVERS),no kernel) in /lib/modules/<kver>/$(INSTALL_MOD_DIR)," \
	      "tc plugin in $(TCLIBDIR), man pages in $(MANDIR)$(if $(DESTDIR), under DESTDIR=$(DESTDIR))"

install-module: module
ifeq ($(strip $(INSTALL_KVERS)),)
	@echo "install: no module installed: none is built for the running kernel $(KVER_RUN)" \
	      "(no headers at $(KDIR); apt install linux-headers-$(KVER_RUN), or KDIR=<tree>," \
	      "or INSTALL_KVERS=\"<kver>...\" for kernels built: $(KVERS))" >&2
endif
	@set -e; for k in $(INSTALL_KVERS); do \
		ko=$(BUILD)/$$k/sch_arbtable.ko; \
		[ -f $$ko ] || { echo "install: $$ko not built (make module)" >&2; exit 1; }; \
		d=$(DESTDIR)/lib/modules/$$k/$(INSTALL_MOD_DIR); \
		echo "  INSTALL $$d/sch_arbtable.ko"; \
		$(INSTALL) -d $$d; $(INSTALL) -m 0644 $$ko $$d/; \
		if [ -z "$(DESTDIR)" ]; then \
			if [ -d /lib/modules/$$k/kernel ]; then depmod -a $$k; \
			else echo "install: /lib/modules/$$k/kernel missing (headers only?), depmod skipped"; fi; \
		fi; \
	done

install-plugin: plugin plugin-bpo
	@case "$(TC_BIN_MM)" in 6.1|$(or $(TC_BPO_MM),6.1)) ;; \
	 *) echo "install: note: $(TC_BIN) is iproute2 $(or $(TC_BIN_MM),of unknown version); the plugin" \
		 "is built for 6.1$(if $(TC_BPO_MM), and $(TC_BPO_MM)) (check with: tc qdisc add dev lo root arbtable help)" >&2 ;; esac
	@echo "  INSTALL $(DESTDIR)$(TCLIBDIR)/q_arbtable.so (for $(TC_BIN), iproute2 $(or $(TC_BIN_MM),?): $(INSTALL_PLUGIN_DIR)/q_arbtable.so)"
	$(INSTALL) -d $(DESTDIR)$(TCLIBDIR)
	$(INSTALL) -m 0644 $(INSTALL_PLUGIN_DIR)/q_arbtable.so $(DESTDIR)$(TCLIBDIR)/q_arbtable.so

install-man:
	$(INSTALL) -d $(DESTDIR)$(MANDIR)/man8 $(if $(INST_MAN1),$(DESTDIR)$(MANDIR)/man1)
	$(INSTALL) -m 0644 $(INST_MAN8) $(DESTDIR)$(MANDIR)/man8/
	$(if $(INST_MAN1),$(INSTALL) -m 0644 $(INST_MAN1) $(DESTDIR)$(MANDIR)/man1/)

# libarbtable: the real file, the soname and dev links, the header and a
# .pc generated for the PREFIX/LIBDIR given now (not the build's).
install-lib:
ifneq ($(INST_LIB_REAL),)
	$(INSTALL) -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/arbtable $(DESTDIR)$(PKGCONFIGDIR)
	@set -e; for f in $(INST_LIB_REAL); do \
		r=$$(basename $$f); so=$$(readelf -d $$f | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p'); \
		echo "  INSTALL $(DESTDIR)$(LIBDIR)/$$r ($$so, libarbtable.so)"; \
		$(INSTALL) -m 0755 $$f $(DESTDIR)$(LIBDIR)/; \
		[ -z "$$so" ] || ln -sf $$r $(DESTDIR)$(LIBDIR)/$$so; \
		ln -sf $${so:-$$r} $(DESTDIR)$(LIBDIR)/libarbtable.so; \
	done
	$(if $(INST_LIB_HDR),$(INSTALL) -m 0644 $(INST_LIB_HDR) $(DESTDIR)$(INCLUDEDIR)/arbtable/)
	$(if $(INST_LIB_PCIN),sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(patsubst libarbtable.so.%,%,$(notdir $(firstword $(INST_LIB_REAL))))|' \
		$(INST_LIB_PCIN) >$(DESTDIR)$(PKGCONFIGDIR)/libarbtable.pc)
	$(if $(DESTDIR),,-ldconfig)
else
	@echo "install: libarbtable not built (make lib), skipped"
endif

# The tools as built for installing: arbtablectl without the build tree's
# rpath (the library is found where ldconfig or the system puts it),
# arbsim (static on the core).
install-tools:
ifneq ($(INST_TOOLS),)
	$(INSTALL) -d $(DESTDIR)$(BINDIR)
	$(INSTALL) -m 0755 $(INST_TOOLS) $(DESTDIR)$(BINDIR)/
else
	@echo "install: arbtablectl/arbsim not built, skipped"
endif

uninstall:
	@set -e; for f in $(DESTDIR)/lib/modules/*/$(INSTALL_MOD_DIR)/sch_arbtable.ko; do \
		[ -e "$$f" ] || continue; echo "  RM $$f"; rm -f "$$f"; \
		k=$${f#$(DESTDIR)/lib/modules/}; k=$${k%%/*}; \
		if [ -z "$(DESTDIR)" ] && [ -d /lib/modules/$$k/kernel ]; then depmod -a $$k; fi; \
	done
	rm -f $(DESTDIR)$(TCLIBDIR)/q_arbtable.so
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man8/,tc-arbtable.8 arbtablectl.8 $(notdir $(INST_MAN8))) \
	      $(addprefix $(DESTDIR)$(MANDIR)/man1/,arbsim.1 $(notdir $(INST_MAN1)))
	rm -f $(DESTDIR)$(BINDIR)/arbtablectl $(DESTDIR)$(BINDIR)/arbsim
	rm -f $(DESTDIR)$(LIBDIR)/libarbtable.so $(DESTDIR)$(LIBDIR)/libarbtable.so.* \
	      $(DESTDIR)$(PKGCONFIGDIR)/libarbtable.pc $(DESTDIR)$(INCLUDEDIR)/arbtable/arbtable.h
	-rmdir $(DESTDIR)$(INCLUDEDIR)/arbtable 2>/dev/null
	$(if $(DESTDIR),,-ldconfig)

# DKMS source package layout: what dkms.conf's MAKE line expects.
dkms-src:
	$(INSTALL) -d $(DESTDIR)$(DKMS_SRC_DIR)/kernel $(DESTDIR)$(DKMS_SRC_DIR)/include/uapi/linux \
		$(DESTDIR)$(DKMS_SRC_DIR)/include/trace/events
	$(INSTALL) -m 0644 $(wildcard kernel/*.c kernel/*.h) kernel/Kbuild $(DESTDIR)$(DKMS_SRC_DIR)/kernel/
	$(INSTALL) -m 0644 include/uapi/linux/pkt_sched_arbtable.h $(DESTDIR)$(DKMS_SRC_DIR)/include/uapi/linux/
	$(INSTALL) -m 0644 include/trace/events/arbtable.h $(DESTDIR)$(DKMS_SRC_DIR)/include/trace/events/
	sed 's/@VERSION@/$(ARBTABLE_VERSION)/g' dkms.conf >$(DESTDIR)$(DKMS_SRC_DIR)/dkms.conf

dkms-install: dkms-src
	@test -z "$(DESTDIR)" || { echo "dkms-install: DESTDIR makes no sense here (use dkms-src)" >&2; exit 1; }
	dkms status -m $(DKMS_NAME) -v $(ARBTABLE_VERSION) | grep -q . || dkms add -m $(DKMS_NAME) -v $(ARBTABLE_VERSION)
	@set -e; for k in $(or $(DKMS_KVERS),$(KVERS)); do dkms install -m $(DKMS_NAME) -v $(ARBTABLE_VERSION) -k $$k; done

dkms-check:
	@bash scripts/dkms-check.sh

intree-check:
	@bash scripts/intree-check.sh

tdc-prepare:
	@bash selftests/tdc/prepare.sh
