# A real single-node Kubernetes cluster (tests/kubernetes/cluster): the
# control plane on the host, containerd 2.1 and the kubelet in a
# virtme-ng guest on Debian's 7.2 image with the module.
#
#   make k8s-cluster   fetch (pinned by go.sum) and build the cluster's
#                      binaries into /var/lib/arbtable/k8s/<key> (cached)
#   make check-k8s     set-up as make test does, the cluster, then its
#                      checks; ends "N passed, N failed, N skipped"
#   make check-k8s-mutants
#                      the driver built with each defect of
#                      tests/kubernetes/mutants/*.patch, check-k8s run on
#                      the scenarios each names: every one must be killed
#                      by a failed check (scripts/k8s-mutants.sh)
.PHONY: k8s-cluster check-k8s check-k8s-mutants
k8s-cluster:
	@bash scripts/k8s-build.sh
check-k8s:
	@bash scripts/setup.sh && $(MAKE) --no-print-directory all dra-image && \
		bash scripts/k8s-build.sh && bash tests/kubernetes/cluster/check-k8s.sh
check-k8s-mutants:
	@bash scripts/k8s-mutants.sh
