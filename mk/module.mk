# The kernel module, built out of tree for every kernel in KVERS into
# build/<kver>/kernel/sch_arbtable.ko (sources are copied so two kernels
# never share objects). W=1, and -Werror under WERROR=1 (make test, CI):
# the build must stay warning-free.

MODULE_SRCS := $(wildcard kernel/*.c kernel/*.h kernel/Kbuild) include/uapi/linux/pkt_sched_arbtable.h VERSION \
	       include/trace/events/arbtable.h
MODULE_KOS  := $(foreach k,$(KVERS),$(BUILD)/$(k)/sch_arbtable.ko)
KBUILD_W    ?= 1

define module_rule
$(BUILD)/$(1)/sch_arbtable.ko: $(MODULE_SRCS)
	@mkdir -p $(BUILD)/$(1)/src/kernel $(BUILD)/$(1)/src/include
	@rm -f $(BUILD)/$(1)/src/kernel/*.[ch]
	@cp kernel/*.c kernel/*.h kernel/Kbuild $(BUILD)/$(1)/src/kernel/
	@cp -r include/uapi include/trace $(BUILD)/$(1)/src/include/
	$(MAKE) -C $(call kdir,$(1)) M=$(BUILD)/$(1)/src/kernel \
		CONFIG_NET_SCH_ARBTABLE=m W=$(KBUILD_W) ARBTABLE_VERSION=$(ARBTABLE_VERSION) \
		KCFLAGS="$(WERROR_FLAG) $(MODULE_KCFLAGS)" $(if $(C),C=$(C)) modules
	@cp $(BUILD)/$(1)/src/kernel/sch_arbtable.ko $$@
endef
$(foreach k,$(KVERS),$(eval $(call module_rule,$(k))))

.PHONY: module
module: $(MODULE_KOS)
ifeq ($(KVER_KDIR),)
	@echo "module: no headers for the running kernel $(KVER_RUN) ($(KDIR) has no Makefile):" \
	      "not built for it; install them (Debian/Ubuntu: apt install linux-headers-$(KVER_RUN))" \
	      "or name a kernel tree with KDIR=<dir>" >&2
endif
	@echo "module: built for $(or $(KVERS),no kernel)"
all: module

# netdevsim for Debian's 7.2 image, which does not build it (CONFIG_NETDEVSIM
# is off there): the driver's own sources from the prepared tree, built out
# of tree as the module is, so that test_netdevsim runs in make test's full
# run on the kernel users run (a deadlock is a command that never returns
# there; the sanitizer kernel's own netdevsim adds lockdep in check-debug)
ifneq ($(KVER_72),)
NSIM_DIR := $(BUILD)/$(KVER_72)/netdevsim
NSIM_KO  := $(BUILD)/$(KVER_72)/netdevsim.ko
$(NSIM_KO): $(K72_TREE)/drivers/net/netdevsim/Makefile
	@rm -rf $(NSIM_DIR) && mkdir -p $(NSIM_DIR)
	@cp $(K72_TREE)/drivers/net/netdevsim/*.[ch] $(K72_TREE)/drivers/net/netdevsim/Makefile $(NSIM_DIR)/
	$(MAKE) -C $(K72_TREE) M=$(NSIM_DIR) CONFIG_NETDEVSIM=m modules
	@cp $(NSIM_DIR)/netdevsim.ko $@
module: $(NSIM_KO)
endif
