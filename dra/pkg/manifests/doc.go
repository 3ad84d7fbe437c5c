// SPDX-License-Identifier: Apache-2.0

// Package manifests holds the tests of deploy/kubernetes/dra: the
// manifests decode strictly into the API's types, and the examples' CEL
// selectors pick the published devices they promise to.
package manifests
