# VM selftests, the full test entry and the demo (scripts/vm.sh boots the
# distro kernels under virtme-ng; see selftests/arbtable/).
.PHONY: vm-test test demo
vm-test:
	@bash scripts/test.sh --vm-only --no-setup
test:
	@bash scripts/test.sh
demo:
	@bash scripts/demo.sh
