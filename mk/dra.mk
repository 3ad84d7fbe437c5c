# arbtable-dra: the Kubernetes DRA driver (dra/, Go, cgo on libarbtable).
#
#   make dra        build/dra/arbtable-dra (needs make lib: it links
#                   build/lib/libarbtable.so through cgo)
#   make check-dra  the licence check, go vet, a gofmt check and go test
#                   of dra/, offline (GOPROXY=off: the modules come from
#                   scripts/setup.sh's go mod download)
#   make licence-check  the licence check alone, every file it reads
#   make dra-image  build/dra/arbtable-dra.oci.tar, an OCI archive for
#                   `ctr -n k8s.io images import`
#                   (deploy/kubernetes/dra/build-image.sh)
# scripts/go-toolchain.sh: go.mod's Go or newer, never fetched here
GO          ?= $(shell bash scripts/go-toolchain.sh --offline 2>/dev/null || echo /usr/local/go/bin)/go
DRA_OUT     := $(BUILD)/dra
DRA_GOENV   := GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=1
DRA_SRCS    := $(shell find dra -name '*.go' 2>/dev/null) dra/go.mod dra/go.sum

$(DRA_OUT)/arbtable-dra: $(DRA_SRCS) $(LIB_REAL) $(LIB_SO_LINKS) $(LIB_HDR)
	@mkdir -p $(dir $@)
	cd dra && $(DRA_GOENV) $(GO) build -trimpath -ldflags="-s -w" -o $(DRA_OUT)/arbtable-dra ./cmd/arbtable-dra

# pkg/podnet's tests need ipvlan, macvlan, clsact, matchall and skbedit,
# which a build host's kernel may lack: make test runs them in the 7.2
# guest (selftests/arbtable/test_dra_podnet.sh), and check-dra leaves
# them out on the host
$(DRA_OUT)/podnet.test: $(DRA_SRCS) $(LIB_REAL) $(LIB_SO_LINKS) $(LIB_HDR)
	@mkdir -p $(dir $@)
	cd dra && $(DRA_GOENV) $(GO) test -c -o $@ ./pkg/podnet

# pkg/kernel's Linux view against sch_arbtable, tagged vm: root,
# foreign root, class, fw filters, marks (the same guest test)
$(DRA_OUT)/kernel.test: $(DRA_SRCS) $(LIB_REAL) $(LIB_SO_LINKS) $(LIB_HDR)
	@mkdir -p $(dir $@)
	cd dra && $(DRA_GOENV) $(GO) test -c -tags vm -o $@ ./pkg/kernel

.PHONY: dra check-dra dra-image dra-vmtests
dra: $(DRA_OUT)/arbtable-dra
dra-vmtests: $(DRA_OUT)/podnet.test $(DRA_OUT)/kernel.test

# "N passed, N failed, N skipped" for scripts/test.sh's host suites: vet,
# gofmt, and every test and subtest of go test -json counted on its own
# (pkg/podnet's run in the VM: dra-vmtests).  go test's own vet is off:
# check-dra's go vet runs every analyzer on the same files and more (-tags vm),
# and its second pass over every dependency took 35 CPU-seconds cold
# (a skip shows in the total with Go's reason; a package that fails
# without a failed test, e.g. a build error, is a failure).  -timeout
# 30m: make test runs this at idle priority beside two guests that keep
# both cores busy, where pkg/driver's 15 CPU-seconds once took past go
# test's default 10 minutes (2026-11-29, a third guest beside them)
# The licence check (scripts/licence-check.py): every file linked into the
# driver, its Go code and libarbtable's units with the headers they
# compile in, and the Go modules it is built from, under licences that may
# be combined with Apache-2.0; the groups are mk/lib.mk's compile rules.
DRA_LICENCE_CHECK = python3 scripts/licence-check.py --lib $(LIB_REAL) --cc "$(CC)" --go "$(GO)" \
	--group "$(LIB_SRCS)" "-Ilib/include -Iinclude/uapi $(NL_CFLAGS)" \
	--group "$(LIB_PLAN_SRCS)" "$(USER_CFLAGS) -Ilib/include" \
	--group "$(CORE_SRCS)" "$(USER_CFLAGS)"

.PHONY: licence-check
licence-check: $(LIB_REAL)
	@$(DRA_LICENCE_CHECK)

check-dra: $(LIB_REAL) $(LIB_SO_LINKS)
	@p=0; f=0; \
	if out=$$($(DRA_LICENCE_CHECK) 2>&1); then p=$$((p+1)); echo "ok licence: $$(printf '%s\n' "$$out" | tail -n1)"; \
	else f=$$((f+1)); printf '%s\n' "$$out" | grep '^not ok'; echo "not ok licence: $$(printf '%s\n' "$$out" | tail -n1)"; fi; \
	cd dra; \
	if $(DRA_GOENV) $(GO) vet -tags vm ./...; then p=$$((p+1)); echo "ok vet"; else f=$$((f+1)); echo "not ok vet"; fi; \
	u=$$($(shell dirname $(GO))/gofmt -l . 2>&1); \
	if [ -z "$$u" ]; then p=$$((p+1)); echo "ok gofmt"; else f=$$((f+1)); echo "not ok gofmt: $$u"; fi; \
	$(DRA_GOENV) $(GO) test -json -count=1 -vet=off -timeout 30m $$($(DRA_GOENV) $(GO) list ./... | grep -v '/pkg/podnet$$') 2>&1 | python3 ../scripts/go-test-count.py go-test >$(BUILD)/dra-go-test.out; \
	rc=$$?; cat $(BUILD)/dra-go-test.out; \
	set -- $$(sed -nE 's/^go-test: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$$/\1 \2 \3/p' $(BUILD)/dra-go-test.out); \
	if [ $$# = 3 ]; then p=$$((p + $$1)); f=$$((f + $$2)); s=$$3; else f=$$((f + 1)); s=0; echo "not ok go test: no count"; fi; \
	[ $$rc = 0 ] || [ $$f -gt 0 ] || { f=$$((f + 1)); echo "not ok go test exited $$rc"; }; \
	echo "check-dra: $$p passed, $$f failed, $$s skipped"; [ $$f = 0 ]

dra-image: dra
	GO=$(GO) bash deploy/kubernetes/dra/build-image.sh $(DRA_OUT)/arbtable-dra $(DRA_OUT)/arbtable-dra.oci.tar
