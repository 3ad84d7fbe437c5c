// SPDX-License-Identifier: Apache-2.0
package driver

import (
	resourceapi "k8s.io/api/resource/v1"

	"arbtable.dev/dra/pkg/checkpoint"
	"arbtable.dev/dra/pkg/events"
)

// prepareRefused tells the claim and the pods it is reserved for why
// Prepare refused it (the kubelet retries; the pods stay pending).
func (d *Driver) prepareRefused(claim *resourceapi.ResourceClaim, err error) {
	if d.Events == nil {
		return
	}
	d.Events.Warning(events.Claim(claim.Namespace, claim.Name, string(claim.UID)), events.PrepareRefused, err.Error())
	for _, ref := range claim.Status.ReservedFor {
		if ref.Resource == "pods" {
			d.Events.Warning(events.Pod(claim.Namespace, ref.Name, string(ref.UID)), events.PrepareRefused, err.Error())
		}
	}
}

// PodFailed tells the pod and its claims why PodUp (reason ClassFailed:
// the runtime fails the sandbox and the kubelet retries) or PodDown
// (ReleaseFailed) failed; nriplugin calls it.
func (d *Driver) PodFailed(pod events.Object, reason string, err error) {
	if d.Events == nil {
		return
	}
	d.Events.Warning(pod, reason, err.Error())
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, uid := range d.podRecordsLocked(pod.UID) {
		r := d.recs[uid]
		d.Events.Warning(events.Claim(r.Namespace, r.Name, r.ClaimUID), reason, err.Error())
	}
}

// unprepareFailed tells the claim that Unprepare could not release its
// class (the kubelet retries).
func (d *Driver) unprepareFailed(r checkpoint.Record, err error) {
	if d.Events != nil {
		d.Events.Warning(events.Claim(r.Namespace, r.Name, r.ClaimUID), events.ReleaseFailed, err.Error())
	}
}
