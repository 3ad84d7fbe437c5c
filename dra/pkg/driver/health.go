// SPDX-License-Identifier: Apache-2.0
package driver

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/dynamic-resource-allocation/resourceslice"
)

// HealthResend is how often WatchHealthStatus sends the report again
// unchanged: the kubelet takes a device not refreshed within 30 s (its
// default HealthCheckTimeout) as of unknown health.
const HealthResend = 10 * time.Second

// healthState is the devices' health as last published, for the
// kubelet's DRA resource-health stream.
type healthState struct {
	mu      sync.Mutex
	report  *kubeletplugin.DeviceHealthReport // nil before the first publish
	changed chan struct{}                     // closed when report changes
}

func (h *healthState) get() (*kubeletplugin.DeviceHealthReport, <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.changed == nil {
		h.changed = make(chan struct{})
	}
	return h.report, h.changed
}

// set replaces the report; watchers are woken only when a device's
// health or message changed (a pass that changes nothing is resent at
// the next HealthResend, with its time).
func (h *healthState) set(r kubeletplugin.DeviceHealthReport) {
	h.mu.Lock()
	defer h.mu.Unlock()
	same := h.report != nil && slices.EqualFunc(h.report.Devices, r.Devices, func(a, b kubeletplugin.DeviceHealth) bool {
		return a.PoolName == b.PoolName && a.DeviceName == b.DeviceName && a.Health == b.Health && a.Message == b.Message
	})
	h.report = &r
	if !same {
		if h.changed != nil {
			close(h.changed)
		}
		h.changed = make(chan struct{})
	}
}

// healthOf is the health of every device published: unhealthy while its
// NIC is tainted (link down, NIC or module missing, root unreadable,
// capacity or guarantees lost), the taints its message; healthy else.
func healthOf(res resourceslice.DriverResources, now time.Time) kubeletplugin.DeviceHealthReport {
	var r kubeletplugin.DeviceHealthReport
	pools := make([]string, 0, len(res.Pools))
	for name := range res.Pools {
		pools = append(pools, name)
	}
	slices.Sort(pools)
	for _, pool := range pools {
		for _, s := range res.Pools[pool].Slices {
			for _, dev := range s.Devices {
				h := kubeletplugin.DeviceHealth{PoolName: pool, DeviceName: dev.Name,
					Health: kubeletplugin.HealthStatusHealthy, LastUpdated: now}
				if len(dev.Taints) > 0 {
					var why []string
					for _, t := range dev.Taints {
						why = append(why, t.Key+"="+t.Value)
					}
					h.Health, h.Message = kubeletplugin.HealthStatusUnhealthy, "tainted "+strings.Join(why, ", ")
				}
				r.Devices = append(r.Devices, h)
			}
		}
	}
	return r
}

// WatchHealthStatus implements kubeletplugin.DRAPlugin: the published
// devices' health, sent once there is a publish, again at each change
// (a reconcile pass tainting or untainting a NIC) and every
// HealthResend (HealthTick in tests), until ctx ends.
func (d *Driver) WatchHealthStatus(ctx context.Context, reports chan<- kubeletplugin.DeviceHealthReport) error {
	tick := d.HealthTick
	if tick == nil {
		t := time.NewTicker(HealthResend)
		defer t.Stop()
		tick = t.C
	}
	for {
		r, changed := d.health.get()
		if r != nil {
			select {
			case <-ctx.Done():
				return nil
			case reports <- *r:
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-tick:
		}
	}
}
