# sch_arbtable: top-level build. Each area keeps its rules in mk/<area>.mk.
#
#   make            module (for the running kernel when its headers are there,
#                   KDIR=<tree> for another, and every Debian 12 kernel in
#                   KVERS), tc plugin, tools, unit tests
#   make deb        Debian packages into build/deb (mk/deb.mk)
#   make unit       userspace unit tests of the core (cmocka, ASan+UBSan)
#   make test       unit tests + VM selftests (what .ci/run runs)
#   make demo       the VM demo
#   make lint       checkpatch, sparse, kernel-doc, stack, rst, man pages (groff warnings)
#   make bench      benchmarks (not part of the tests)
#   make dra        arbtable-dra, the Kubernetes DRA driver (Go, mk/dra.mk);
#                   make check-dra its offline tests, make dra-image its image

KVER_61   ?= $(shell ls -d /usr/src/linux-headers-6.1.*-amd64 2>/dev/null | sed 's|.*/linux-headers-||' | sort -V | tail -n1)
KVER_612  ?= $(shell ls -d /usr/src/linux-headers-6.12.*-amd64 2>/dev/null | sed 's|.*/linux-headers-||' | sort -V | tail -n1)
# Debian's own 7.2 image: its headers do not install on Debian 12, so the
# module is built against the tree scripts/distro-kernel.sh prepares from
# linux-source-7.2 with the image's config and Module.symvers
K72_TREE  ?= /var/lib/arbtable/distro-7.2/src
KVER_72   ?= $(shell cat $(K72_TREE)/include/config/kernel.release 2>/dev/null)
# The running kernel, where its headers are installed (or KDIR names the
# tree of another kernel): its release is the tree's, so the module loads
# on the kernel the tree was made for.  Without a tree, `make` says so.
KVER_RUN  := $(shell uname -r)
KDIR      ?= /lib/modules/$(KVER_RUN)/build
# (UTS_RELEASE: Debian's headers keep the upstream version in kernel.release)
KVER_KDIR := $(if $(wildcard $(KDIR)/Makefile),$(or $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' $(KDIR)/include/generated/utsrelease.h 2>/dev/null),$(KVER_RUN)))
KVERS     ?= $(strip $(KVER_61) $(KVER_612) $(KVER_72) $(filter-out $(KVER_61) $(KVER_612) $(KVER_72),$(KVER_KDIR)))
# the tree a kernel's modules are built against
kdir       = $(if $(and $(KVER_72),$(filter $(1),$(KVER_72))),$(K72_TREE),$(if $(and $(KVER_KDIR),$(filter $(1),$(KVER_KDIR))),$(KDIR),/lib/modules/$(1)/build))
BUILD     ?= $(CURDIR)/build
CACHE     ?= /var/cache/arbtable
IPROUTE2  ?= $(CACHE)/iproute2

CC        ?= gcc
# the core as userspace builds it: kernel/arbtable_core.c through tests/core
CORE_SRCS := tests/core/arbtable_core_test.c
CORE_HDRS := $(wildcard tests/include/linux/*.h) kernel/arbtable_core.c kernel/arbtable_core.h tests/core/arbtable_core_test.h
# The release, defined once (VERSION): libarbtable, arbtablectl --version,
# modinfo's version of out-of-tree builds, the DKMS package.
ARBTABLE_VERSION := $(shell cat $(CURDIR)/VERSION)
# the one parser of units and table lists of the plugin, arbtablectl, arbsim
PARSE_SRCS := lib/arbtable_parse.c
PARSE_HDRS := lib/arbtable_parse.h
# the one check of a reservation request (rate xor share, latency xor
# distance, ranges) of arbtable-cni, arbtablectl and arbsim
REQUEST_SRCS := lib/arbtable_request.c
REQUEST_HDRS := lib/arbtable_request.h
# Warnings are errors in make test and CI (scripts/test.sh sets WERROR=1),
# not in a distribution's build, where a newer compiler or kernel may add
# warnings the project has not seen yet.
WERROR    ?= 0
WERROR_FLAG := $(if $(filter 1,$(WERROR)),-Werror)
USER_CFLAGS ?= -O2 -g -Wall -Wextra $(WERROR_FLAG) -std=gnu11 -Itests/include -Itests/core -Ikernel -Iinclude/uapi
SAN_FLAGS ?= -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

.PHONY: all clean
all:

clean:
	rm -rf $(BUILD)

include $(sort $(wildcard mk/*.mk))
