// SPDX-License-Identifier: Apache-2.0
package driver

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/dynamic-resource-allocation/kubeletplugin"

	"arbtable.dev/dra/pkg/kernel"
	drslices "arbtable.dev/dra/pkg/slices"
)

// health is one report as counts per NIC: healthy and unhealthy devices
// and the unhealthy ones' messages.
type health struct {
	healthy, unhealthy map[string]int
	msgs               map[string]string
}

func healthByNIC(t *testing.T, r kubeletplugin.DeviceHealthReport) health {
	t.Helper()
	h := health{healthy: map[string]int{}, unhealthy: map[string]int{}, msgs: map[string]string{}}
	for _, d := range r.Devices {
		nic := map[string]string{drslices.PoolName("node1", "eth0"): "eth0", drslices.PoolName("node1", "eth1"): "eth1"}[d.PoolName]
		if nic == "" || d.DeviceName == "" || d.LastUpdated.IsZero() {
			t.Fatalf("device %+v: not of a NIC's pool, or no name or time", d)
		}
		switch d.Health {
		case kubeletplugin.HealthStatusHealthy:
			h.healthy[nic]++
		case kubeletplugin.HealthStatusUnhealthy:
			h.unhealthy[nic]++
			h.msgs[nic] = d.Message
		default:
			t.Fatalf("device %s/%s health %q", d.PoolName, d.DeviceName, d.Health)
		}
	}
	return h
}

// The kubelet's health stream: every published device healthy at first;
// a reconcile pass that taints a NIC (link down, the module gone)
// reports its devices unhealthy, with the taint, and no other NIC's; the
// pass that lifts it reports them healthy; an unchanged state is resent
// at each tick; the stream ends with its context.
func TestWatchHealthStatus(t *testing.T) {
	tests := []struct {
		name  string
		event func(e *env)
		taint string // eth0's devices unhealthy with it; "" all healthy
	}{
		{name: "link down", event: func(e *env) { e.k.SetLink("eth0", kernel.Link{Exists: true, MTU: fast.MTU}) }, taint: drslices.TaintLinkDown},
		{name: "link up again", event: func(e *env) {
			e.k.SetLink("eth0", kernel.Link{Exists: true, Up: true, Speed: fast.Rate, MTU: fast.MTU})
		}},
		{name: "the module gone", event: func(e *env) {
			_ = e.k.DeleteRoot("eth0")
			e.k.NoModule = true
		}, taint: drslices.TaintQdisc},
		{name: "the module back", event: func(e *env) { e.k.NoModule = false }},
		{name: "NIC renamed", event: func(e *env) { e.k.SetLink("eth0", kernel.Link{}) }, taint: drslices.TaintNICMissing},
		{name: "NIC back", event: func(e *env) {
			e.k.SetLink("eth0", kernel.Link{Exists: true, Up: true, Speed: fast.Rate, MTU: fast.MTU})
		}},
	}
	e := newEnv(t)
	tick := make(chan time.Time)
	e.d.HealthTick = tick
	ctx, cancel := context.WithCancel(context.Background())
	reports := make(chan kubeletplugin.DeviceHealthReport)
	done := make(chan error, 1)
	go func() { done <- e.d.WatchHealthStatus(ctx, reports) }()
	next := func(what string) health {
		t.Helper()
		select {
		case r := <-reports:
			return healthByNIC(t, r)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no health report in 10 s", what)
		}
		return health{}
	}
	devs := map[string]int{"eth0": len(e.devicesOf(t, "eth0")), "eth1": len(e.devicesOf(t, "eth1"))}
	h := next("first")
	if h.healthy["eth0"] != devs["eth0"] || h.healthy["eth1"] != devs["eth1"] || len(h.unhealthy) != 0 {
		t.Fatalf("first report %+v, want every device healthy (%v)", h, devs)
	}
	for _, tc := range tests {
		tc.event(e)
		_ = e.d.Reconcile(context.Background())
		h := next(tc.name)
		if h.healthy["eth1"] != devs["eth1"] || h.unhealthy["eth1"] != 0 {
			t.Errorf("%s: eth1 %d healthy %d unhealthy, want all %d healthy", tc.name, h.healthy["eth1"], h.unhealthy["eth1"], devs["eth1"])
		}
		// eth0's device count follows its root (a root gone frees the
		// system class's LOW slot): every device of the report counts
		if tc.taint == "" && (h.healthy["eth0"] != devs["eth0"] || h.unhealthy["eth0"] != 0) {
			t.Errorf("%s: eth0 %d healthy %d unhealthy, want all %d healthy", tc.name, h.healthy["eth0"], h.unhealthy["eth0"], devs["eth0"])
		}
		if tc.taint != "" && (h.healthy["eth0"] != 0 || h.unhealthy["eth0"] < devs["eth0"] || !strings.Contains(h.msgs["eth0"], tc.taint)) {
			t.Errorf("%s: eth0 %d healthy, %d unhealthy (%q), want all (%d or more) unhealthy with %s", tc.name,
				h.healthy["eth0"], h.unhealthy["eth0"], h.msgs["eth0"], devs["eth0"], tc.taint)
		}
		// nothing changed: no watcher woken; the next report at the
		// tick, the same
		_, changed := e.d.health.get()
		_ = e.d.Reconcile(context.Background())
		select {
		case <-changed:
			t.Fatalf("%s: watchers woken by a pass that changed nothing", tc.name)
		default:
		}
		select {
		case tick <- time.Now():
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: WatchHealthStatus took no tick in 10 s", tc.name)
		}
		if again := next(tc.name + ", resent"); again.healthy["eth0"] != h.healthy["eth0"] || again.unhealthy["eth0"] != h.unhealthy["eth0"] {
			t.Errorf("%s: resent %+v, was %+v", tc.name, again, h)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("WatchHealthStatus: %v, want nil when its context ends", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WatchHealthStatus still running 10 s after its context ended")
	}
}
