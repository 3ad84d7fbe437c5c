// SPDX-License-Identifier: Apache-2.0
package claimstatus

import (
	"context"
	"encoding/json"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"arbtable.dev/dra/pkg/checkpoint"
	"arbtable.dev/dra/pkg/driver"
	"arbtable.dev/dra/pkg/slices"
)

func TestWriteStatus(t *testing.T) {
	other := resourceapi.AllocatedDeviceStatus{Driver: "gpu.example.com", Pool: "p", Device: "g0"}
	claim := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", UID: "u1"},
		Status: resourceapi.ResourceClaimStatus{Devices: []resourceapi.AllocatedDeviceStatus{other,
			{Driver: slices.DriverName, Pool: "n-eth0", Device: "eth0-s04-00"}}}}
	cs := fake.NewClientset(claim)
	w := &Writer{Client: cs}
	rec := checkpoint.Record{ClaimUID: "u1", Namespace: "ns", Name: "c", Pool: "n-eth0", Device: "eth0-s04-00"}
	st := driver.DeviceStatus{NIC: "eth0", ClassID: "1:101", Slots: 4, Distance: 16, GuaranteedRateBits: 57000000, BoundNs: 123456, Interface: "vethA"}
	for i := 0; i < 2; i++ {
		if err := w.WriteStatus(context.Background(), rec, st); err != nil {
			t.Fatal(err)
		}
	}
	got, err := cs.ResourceV1().ResourceClaims("ns").Get(context.Background(), "c", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Devices) != 2 || got.Status.Devices[0].Driver != other.Driver {
		t.Fatalf("devices %+v", got.Status.Devices)
	}
	e := got.Status.Devices[1]
	var data driver.DeviceStatus
	if err := json.Unmarshal(e.Data.Raw, &data); err != nil {
		t.Fatal(err)
	}
	if data.BoundNs != 123456 || data.GuaranteedRateBits != 57000000 || data.ClassID != "1:101" ||
		e.NetworkData.InterfaceName != "vethA" || e.Conditions[0].Type != "Ready" {
		t.Fatalf("entry %+v data %+v", e, data)
	}
	// a claim recreated under the same name is not written
	rec.ClaimUID = "u2"
	if err := w.WriteStatus(context.Background(), rec, st); err == nil {
		t.Fatal("wrote the status of another claim")
	}
}
