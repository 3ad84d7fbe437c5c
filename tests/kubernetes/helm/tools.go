// SPDX-License-Identifier: Apache-2.0

//go:build tools

// Package tools pins helm for check-k8s's helm scenario: scripts/k8s-build.sh
// builds helm.sh/helm/v4/cmd/helm from this module (go.sum), never at
// test time.
package tools

import _ "helm.sh/helm/v4/cmd/helm"
