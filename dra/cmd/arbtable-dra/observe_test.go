// SPDX-License-Identifier: Apache-2.0
package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"arbtable.dev/dra/pkg/arbcore"
	"arbtable.dev/dra/pkg/checkpoint"
	"arbtable.dev/dra/pkg/kernel"
	"arbtable.dev/dra/pkg/metrics"
)

// The server main starts: the collector and the Go and process
// collectors registered together, the probes answering from health, and
// the listener closed when ctx ends.
func TestServeMetrics(t *testing.T) {
	k := kernel.NewFake(map[string]arbcore.Params{"eth0": {Rate: 125000000, MTU: 1514, MaxWeight: 255, HighLimit: 4}})
	if err := k.EnsureRoot("eth0", kernel.RootConfig{Handle: 1 << 16, SystemMinor: 0xfffe, SystemShare: 64}); err != nil {
		t.Fatal(err)
	}
	c := &metrics.Collector{NICs: []string{"eth0"}, K: k, Claims: func() map[string]checkpoint.Record { return nil }}
	h := &metrics.Health{}
	ctx, cancel := context.WithCancel(context.Background())
	if a, err := serveMetrics(ctx, "", c, h); a != nil || err != nil {
		t.Fatalf("address \"\": %v, %v; want nothing served", a, err)
	}
	a, err := serveMetrics(ctx, "127.0.0.1:0", c, h)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		t.Helper()
		r, err := http.Get("http://" + a.String() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return r.StatusCode, string(b)
	}
	if code, _ := get("/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before NRI and slices: %d", code)
	}
	h.SetNRI(true)
	h.SetPublished(nil)
	if code, _ := get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz when ready: %d", code)
	}
	code, body := get("/metrics")
	for _, want := range []string{`arbtable_dra_nic_up{nic="eth0"} 1`, "go_goroutines ", "process_start_time_seconds "} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("/metrics %d lacks %q", code, want)
		}
	}
	if _, err := serveMetrics(ctx, a.String(), c, h); err == nil {
		t.Error("a second server on the same address started")
	}
	cancel()
}
