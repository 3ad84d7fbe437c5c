// SPDX-License-Identifier: Apache-2.0

package manifests

import (
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"

	"arbtable.dev/dra/pkg/slices"
)

// The quota recipe (examples/tenant-quota.yaml): its DeviceClass matches
// exactly the HIGH blocks of at most 8 slots on both example NICs, and
// its ResourceQuota names, in the form the quota evaluator counts, only
// device classes that exist, caps small blocks so that they cannot fill
// one NIC's table, and forbids arbtable.dev.
func TestQuotaRecipe(t *testing.T) {
	classes := classSelectors(t)
	var small []string
	var quota *corev1.ResourceQuota
	for _, o := range decodeAll(t, filepath.Join(dir, "examples", "tenant-quota.yaml")) {
		switch v := o.(type) {
		case *resourceapi.DeviceClass:
			for _, s := range v.Spec.Selectors {
				small = append(small, s.CEL.Expression)
			}
			classes[v.Name] = small
		case *corev1.ResourceQuota:
			quota = v
		default:
			t.Fatalf("tenant-quota.yaml: a %T", o)
		}
	}
	if len(small) == 0 || quota == nil {
		t.Fatal("tenant-quota.yaml: want a DeviceClass and a ResourceQuota")
	}
	const maxSlots = 8
	for _, nic := range exampleNICs {
		blocks, err := slices.Blocks(nic.Params)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range slices.Devices(nic, blocks) {
			n := int(*d.Attributes[slices.AttrSlots].IntValue)
			want := *d.Attributes[slices.AttrTable].StringValue == slices.TableHigh && n <= maxSlots
			if got := matches(t, d, small); got != want {
				t.Errorf("%s: device %s (%d slots) matched=%v, want %v", nic.Name, d.Name, n, got, want)
			}
		}
	}
	suffix := string(corev1.ResourceClaimsPerClass)
	for name, q := range quota.Spec.Hard {
		class, ok := strings.CutSuffix(string(name), suffix)
		if !ok || classes[class] == nil {
			t.Errorf("quota %s: not <an existing DeviceClass>%s", name, suffix)
		}
		if class == "arbtable.dev" && !q.IsZero() {
			t.Errorf("quota %s = %s: any block up to the whole table", name, q.String())
		}
		if class == "small.arbtable.dev" && q.Value()*maxSlots >= 64 {
			t.Errorf("quota %s = %s: %d x %d slots fill a table", name, q.String(), q.Value(), maxSlots)
		}
	}
}
