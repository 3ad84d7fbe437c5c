// SPDX-License-Identifier: Apache-2.0

// Package claimstatus writes the driver's device status into a
// ResourceClaim (KEP-4817): the class, guaranteed rate and bound of the
// allocated device, as status.devices[].data, with a Ready condition.
package claimstatus

import (
	"context"
	"encoding/json"
	"fmt"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"arbtable.dev/dra/pkg/checkpoint"
	"arbtable.dev/dra/pkg/driver"
	"arbtable.dev/dra/pkg/slices"
)

// Writer writes through a clientset; its RBAC needs update on
// resourceclaims/status and associated-node:update on resourceclaims/driver
// named after the driver.
type Writer struct {
	Client kubernetes.Interface
}

// Entry returns the device status entry for a record.
func Entry(rec checkpoint.Record, st driver.DeviceStatus) (resourceapi.AllocatedDeviceStatus, error) {
	data, err := json.Marshal(st)
	if err != nil {
		return resourceapi.AllocatedDeviceStatus{}, fmt.Errorf("device status of claim %s/%s: %w", rec.Namespace, rec.Name, err)
	}
	cond := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "ClassAdmitted",
		Message:            fmt.Sprintf("class %s on %s: %d slots, %d bit/s guaranteed, bound %d ns", st.ClassID, st.NIC, st.Slots, st.GuaranteedRateBits, st.BoundNs),
		LastTransitionTime: metav1.Now()}
	e := resourceapi.AllocatedDeviceStatus{
		Driver: slices.DriverName, Pool: rec.Pool, Device: rec.Device,
		Conditions: []metav1.Condition{cond},
		Data:       &runtime.RawExtension{Raw: data},
	}
	if st.Interface != "" {
		e.NetworkData = &resourceapi.NetworkDeviceData{InterfaceName: st.Interface}
	}
	return e, nil
}

// Merge replaces the driver's entry for the record's device in devs.
func Merge(devs []resourceapi.AllocatedDeviceStatus, e resourceapi.AllocatedDeviceStatus) []resourceapi.AllocatedDeviceStatus {
	out := devs[:0:0]
	for _, d := range devs {
		if d.Driver == e.Driver && d.Pool == e.Pool && d.Device == e.Device {
			continue
		}
		out = append(out, d)
	}
	return append(out, e)
}

// WriteStatus implements driver.StatusWriter.
func (w *Writer) WriteStatus(ctx context.Context, rec checkpoint.Record, st driver.DeviceStatus) error {
	e, err := Entry(rec, st)
	if err != nil {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c, err := w.Client.ResourceV1().ResourceClaims(rec.Namespace).Get(ctx, rec.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("getting claim %s/%s: %w", rec.Namespace, rec.Name, err)
		}
		if c.UID != types.UID(rec.ClaimUID) {
			return fmt.Errorf("claim %s/%s: UID %s, recorded %s", rec.Namespace, rec.Name, c.UID, rec.ClaimUID)
		}
		c = c.DeepCopy()
		c.Status.Devices = Merge(c.Status.Devices, e)
		if _, err := w.Client.ResourceV1().ResourceClaims(rec.Namespace).UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("updating the status of claim %s/%s: %w", rec.Namespace, rec.Name, err)
		}
		return nil
	})
}
