// SPDX-License-Identifier: Apache-2.0
package driver

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/dynamic-resource-allocation/resourceslice"

	"arbtable.dev/dra/pkg/arbcore"
	"arbtable.dev/dra/pkg/checkpoint"
	"arbtable.dev/dra/pkg/kernel"
	drslices "arbtable.dev/dra/pkg/slices"
)

var (
	fast = arbcore.Params{Rate: 1250000000, MTU: 9000, MaxWeight: 255, HighLimit: 16}
	slow = arbcore.Params{Rate: 125000000, MTU: 1514, MaxWeight: 255, HighLimit: 4}
)

// fakePub records the publishes; the loop's (Run) may run beside the
// test's reads, which take mu (snapshot)
type fakePub struct {
	mu    sync.Mutex
	last  resourceslice.DriverResources
	count int
	err   error // returned, and nothing published, when set
}

func (p *fakePub) snapshot() (resourceslice.DriverResources, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last, p.count
}

func (p *fakePub) PublishResources(_ context.Context, res resourceslice.DriverResources) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count++
	if p.err != nil {
		return p.err
	}
	p.last = res
	return nil
}

// fakeStatus records the statuses written; with gate set, each write
// first says so on started and then waits for gate.
type fakeStatus struct {
	mu      sync.Mutex
	got     map[string]DeviceStatus
	writes  []DeviceStatus
	fail    int // the next fail writes fail
	gate    chan struct{}
	started chan struct{}
}

func (s *fakeStatus) WriteStatus(_ context.Context, rec checkpoint.Record, st DeviceStatus) error {
	if s.gate != nil {
		s.started <- struct{}{}
		<-s.gate
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail > 0 {
		s.fail--
		return errors.New("API server unreachable")
	}
	s.got[rec.ClaimUID] = st
	s.writes = append(s.writes, st)
	return nil
}

// statusOf is claim uid's status once what is queued is written.
func (e *env) statusOf(uid string) (DeviceStatus, bool) {
	e.d.WaitStatus()
	e.status.mu.Lock()
	defer e.status.mu.Unlock()
	st, ok := e.status.got[uid]
	return st, ok
}

type env struct {
	k      *kernel.Fake
	pub    *fakePub
	status *fakeStatus
	cfg    Config
	d      *Driver
}

func testConfig(t *testing.T) Config {
	return Config{
		NodeName: "node1", NICs: []string{"eth0", "eth1"},
		Root:     kernel.RootConfig{Handle: 0x10000, SystemMinor: 0xfffe, SystemRate: 1000000, SystemDistance: 16, Child: "fq_codel"},
		MarkMask: 0x7f, MarkPrio: 0xa7b, FwPrio: 0xa7b, MinorBase: 0x100,
		Checkpoint: filepath.Join(t.TempDir(), "checkpoint.json"),
	}
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{k: kernel.NewFake(map[string]arbcore.Params{"eth0": fast, "eth1": slow}),
		pub: &fakePub{}, status: &fakeStatus{got: map[string]DeviceStatus{}}, cfg: testConfig(t)}
	e.start(t)
	return e
}

// start runs a (new) driver instance on the env's kernel and checkpoint.
func (e *env) start(t *testing.T) {
	t.Helper()
	d, err := New(e.cfg, e.k, e.pub, e.status)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.d = d
}

func claim(uid, nic string, n, k int, pods ...string) *resourceapi.ResourceClaim {
	c := &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "claim-" + uid, UID: types.UID(uid)},
		Status: resourceapi.ResourceClaimStatus{Allocation: &resourceapi.AllocationResult{
			Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{{
				Request: "net", Driver: drslices.DriverName, Pool: drslices.PoolName("node1", nic),
				Device: drslices.DeviceName(nic, n, k)}}}}},
	}
	for _, p := range pods {
		c.Status.ReservedFor = append(c.Status.ReservedFor, resourceapi.ResourceClaimConsumerReference{Resource: "pods", Name: p, UID: types.UID(p)})
	}
	return c
}

// shareClaim is a claim allocated share device k of nic, with opaque
// parameters raw ("" for none), reserved for pod-<uid>.
func shareClaim(uid, nic string, k int, raw string) *resourceapi.ResourceClaim {
	c := claim(uid, nic, 1, 0, "pod-"+uid)
	c.Status.Allocation.Devices.Results[0].Device = drslices.LowDeviceName(nic, k)
	if raw != "" {
		withConfig(c, raw)
	}
	return c
}

func withConfig(c *resourceapi.ResourceClaim, raw string) *resourceapi.ResourceClaim {
	c.Status.Allocation.Devices.Config = []resourceapi.DeviceAllocationConfiguration{{
		Source: resourceapi.AllocationConfigSourceClaim,
		DeviceConfiguration: resourceapi.DeviceConfiguration{Opaque: &resourceapi.OpaqueDeviceConfiguration{
			Driver: drslices.DriverName, Parameters: runtime.RawExtension{Raw: []byte(raw)}}}}}
	return c
}

func (e *env) prepare(t *testing.T, c *resourceapi.ResourceClaim) error {
	t.Helper()
	res, err := e.d.PrepareResourceClaims(context.Background(), []*resourceapi.ResourceClaim{c})
	if err != nil {
		t.Fatal(err)
	}
	return res[c.UID].Err
}

func (e *env) unprepare(t *testing.T, uid string) {
	t.Helper()
	res, err := e.d.UnprepareResourceClaims(context.Background(), []kubeletplugin.NamespacedObject{{UID: types.UID(uid)}})
	if err != nil || res[types.UID(uid)] != nil {
		t.Fatalf("unprepare %s: %v, %v", uid, err, res[types.UID(uid)])
	}
}

func hostIf(name string) func() (string, error) {
	return func() (string, error) { return name, nil }
}

func block(t *testing.T, p arbcore.Params, n int) drslices.Block {
	t.Helper()
	bs, err := drslices.Blocks(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		if b.Slots == n {
			return b
		}
	}
	t.Fatalf("no block of %d", n)
	return drslices.Block{}
}

func TestPrepare(t *testing.T) {
	tests := []struct {
		name      string
		claim     *resourceapi.ResourceClaim
		wantErr   string
		wantRate  func(t *testing.T) uint64
		wantShare uint32 // a share device's record
	}{
		{name: "block rate", claim: claim("a", "eth0", 4, 1, "pod-a"),
			wantRate: func(t *testing.T) uint64 { return block(t, fast, 4).RateBytes }},
		{name: "exact rate from ClassConfig", claim: withConfig(claim("b", "eth1", 8, 0, "pod-b"),
			`{"apiVersion":"arbtable.dev/v1alpha1","kind":"ClassConfig","rateBits":100000000}`),
			wantRate: func(t *testing.T) uint64 { return 100000000 / 8 }},
		{name: "ClassConfig above the block keeps the block's rate", claim: withConfig(claim("c", "eth1", 1, 0, "pod-c"),
			`{"apiVersion":"arbtable.dev/v1alpha1","kind":"ClassConfig","rateBits":900000000}`),
			wantRate: func(t *testing.T) uint64 { return block(t, slow, 1).RateBytes }},
		{name: "a config naming the main request reaches its subrequest", claim: func() *resourceapi.ResourceClaim {
			c := withConfig(claim("m", "eth1", 8, 0, "pod-m"), `{"apiVersion":"arbtable.dev/v1alpha1","kind":"ClassConfig","rateBits":100000000}`)
			c.Status.Allocation.Devices.Results[0].Request = "net/fast"
			c.Status.Allocation.Devices.Config[0].Requests = []string{"net"}
			return c
		}(), wantRate: func(t *testing.T) uint64 { return 100000000 / 8 }},
		{name: "a config naming the subrequest", claim: func() *resourceapi.ResourceClaim {
			c := withConfig(claim("n", "eth1", 8, 0, "pod-n"), `{"apiVersion":"arbtable.dev/v1alpha1","kind":"ClassConfig","rateBits":100000000}`)
			c.Status.Allocation.Devices.Results[0].Request = "net/fast"
			c.Status.Allocation.Devices.Config[0].Requests = []string{"net/fast"}
			return c
		}(), wantRate: func(t *testing.T) uint64 { return 100000000 / 8 }},
		{name: "a config naming another request", claim: func() *resourceapi.ResourceClaim {
			c := withConfig(claim("o", "eth1", 8, 0, "pod-o"), `{"apiVersion":"arbtable.dev/v1alpha1","kind":"ClassConfig","rateBits":100000000}`)
			c.Status.Allocation.Devices.Results[0].Request = "net/fast"
			c.Status.Allocation.Devices.Config[0].Requests = []string{"netx", "other/fast"}
			return c
		}(), wantRate: func(t *testing.T) uint64 { return block(t, slow, 8).RateBytes }},
		{name: "wrong config kind", claim: withConfig(claim("d", "eth1", 1, 0, "pod-d"), `{"kind":"Other"}`), wantErr: "want ClassConfig"},
		{name: "foreign pool", claim: func() *resourceapi.ResourceClaim {
			c := claim("e", "eth0", 1, 0)
			c.Status.Allocation.Devices.Results[0].Pool = "node2-eth0"
			return c
		}(), wantErr: "not one of this node's NICs"},
		{name: "two devices", claim: func() *resourceapi.ResourceClaim {
			c := claim("f", "eth0", 1, 0)
			r := c.Status.Allocation.Devices.Results
			c.Status.Allocation.Devices.Results = append(r, r[0])
			return c
		}(), wantErr: "one per claim"},
		{name: "not allocated", claim: &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{UID: "g"}}, wantErr: "not allocated"},
		{name: "share device, share 1 by default", claim: shareClaim("h", "eth0", 3, ""), wantShare: 1},
		{name: "share device with its share", claim: shareClaim("i", "eth1", 0,
			`{"apiVersion":"arbtable.dev/v1alpha1","kind":"ClassConfig","share":200}`), wantShare: 200},
		{name: "share above maxShare", claim: shareClaim("j", "eth1", 0,
			`{"apiVersion":"arbtable.dev/v1alpha1","kind":"ClassConfig","share":256}`), wantErr: "share 256 outside 0..255"},
		{name: "a rate on a share device", claim: shareClaim("k", "eth1", 0,
			`{"apiVersion":"arbtable.dev/v1alpha1","kind":"ClassConfig","rateBits":1000000}`), wantErr: "a reserved rate needs a block"},
		{name: "a share on a block", claim: withConfig(claim("l", "eth1", 1, 0, "pod-l"),
			`{"apiVersion":"arbtable.dev/v1alpha1","kind":"ClassConfig","share":4}`), wantErr: "a share needs a share device"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			err := e.prepare(t, tc.claim)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				if len(e.d.Records()) != 0 {
					t.Fatal("a refused claim left a record")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r := e.d.Records()[string(tc.claim.UID)]
			if tc.wantShare != 0 {
				if r.Share != tc.wantShare || !r.Low() || r.Slots != 1 || r.RateBytes != 0 {
					t.Errorf("record %+v, want share %d on one LOW slot", r, tc.wantShare)
				}
			} else if r.RateBytes != tc.wantRate(t) || r.Low() {
				t.Errorf("rate %d (share %d), want %d", r.RateBytes, r.Share, tc.wantRate(t))
			}
			// idempotent: again, and after a restart
			if err := e.prepare(t, tc.claim); err != nil {
				t.Fatal(err)
			}
			e.start(t)
			if err := e.prepare(t, tc.claim); err != nil {
				t.Fatal(err)
			}
			if got := e.d.Records()[string(tc.claim.UID)]; got.RateBytes != r.RateBytes || got.Device != r.Device {
				t.Errorf("after restart %+v, was %+v", got, r)
			}
			e.unprepare(t, string(tc.claim.UID))
			e.unprepare(t, string(tc.claim.UID))
			if len(e.d.Records()) != 0 {
				t.Fatal("record left after unprepare")
			}
		})
	}
}

func TestPodUpDown(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	free0 := e.k.FreeSlots("eth0")
	if free0 != 64-4 {
		t.Fatalf("system class at distance 16: %d free", free0)
	}
	// a pod without a claim is never touched, whatever its interface
	if err := e.d.PodUp(ctx, "nobody", "", errors.New("ipvlan")); err != nil {
		t.Fatal(err)
	}
	if err := e.prepare(t, claim("a", "eth0", 8, 0, "pod-a")); err != nil {
		t.Fatal(err)
	}
	// a pod with a claim on an unclassifiable interface fails clearly
	if err := e.d.PodUp(ctx, "pod-a", "", errors.New("eth0 is a ipvlan")); err == nil || !strings.Contains(err.Error(), "cannot be classified") {
		t.Fatalf("unclassifiable: %v", err)
	}
	if e.k.FreeSlots("eth0") != free0 {
		t.Fatal("a failed pod holds slots")
	}
	for i := 0; i < 2; i++ { // twice: idempotent
		if err := e.d.PodUp(ctx, "pod-a", "vethA", nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.k.FreeSlots("eth0"); got != free0-8 {
		t.Fatalf("free %d after an 8-slot admission from %d", got, free0)
	}
	r := e.d.Records()["a"]
	if !r.Admitted() || r.Ifaces["pod-a"] != "vethA" || e.k.Marks["vethA"] != r.Mark || e.k.Fws["eth0"][r.Mark] != r.ClassID {
		t.Fatalf("record %+v, marks %v, fws %v", r, e.k.Marks, e.k.Fws)
	}
	st, _ := e.statusOf("a")
	b := block(t, fast, 8)
	if st.Slots != 8 || st.BoundNs != b.BoundNs || st.GuaranteedRateBits < b.RateBytes*8 || st.Distance != 8 {
		t.Errorf("status %+v, block %+v", st, b)
	}
	for i := 0; i < 2; i++ {
		if err := e.d.PodDown(ctx, "pod-a"); err != nil {
			t.Fatal(err)
		}
	}
	// the pod is unmarked; the claim's class stays until Unprepare (the
	// scheduler counts its slots until then, and a restarted sandbox or
	// the claim's other pods use it)
	if e.k.FreeSlots("eth0") != free0-8 || len(e.k.Marks) != 0 || e.k.Fws["eth0"][r.Mark] != r.ClassID {
		t.Fatalf("after PodDown: free %d, marks %v, fws %v", e.k.FreeSlots("eth0"), e.k.Marks, e.k.Fws)
	}
	// up again: the same class, marked again
	if err := e.d.PodUp(ctx, "pod-a", "vethA2", nil); err != nil {
		t.Fatal(err)
	}
	if r2 := e.d.Records()["a"]; r2.ClassID != r.ClassID || e.k.Marks["vethA2"] != r.Mark || e.k.FreeSlots("eth0") != free0-8 {
		t.Fatalf("up again: record %+v, marks %v, free %d", r2, e.k.Marks, e.k.FreeSlots("eth0"))
	}
	e.unprepare(t, "a")
	if e.k.FreeSlots("eth0") != free0 || len(e.k.Marks) != 0 || len(e.k.Fws["eth0"]) != 0 {
		t.Fatalf("unprepare did not release: free %d, marks %v, fws %v", e.k.FreeSlots("eth0"), e.k.Marks, e.k.Fws)
	}
}

// A share pod: one LOW slot while it runs, marked and filtered like a
// block's; its status says table low and its share, no rate, no bound; a
// driver restart keeps it; PodDown gives the LOW slot back, and the
// published low-slots counter follows.
func TestSharePodUpDown(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	low0, high0 := e.k.FreeLowSlots("eth1"), e.k.FreeSlots("eth1")
	lowCounter := func() int64 {
		q := e.pub.last.Pools[drslices.PoolName("node1", "eth1")].Slices[0].SharedCounters[0].Counters[drslices.CounterLowSlots].Value
		return q.Value()
	}
	if low0 != 64 || lowCounter() != 64 {
		t.Fatalf("system class in HIGH: %d LOW slots free, %d published", low0, lowCounter())
	}
	if err := e.prepare(t, shareClaim("s", "eth1", 5, `{"apiVersion":"arbtable.dev/v1alpha1","kind":"ClassConfig","share":8}`)); err != nil {
		t.Fatal(err)
	}
	if err := e.d.PodUp(ctx, "pod-s", "vethS", nil); err != nil {
		t.Fatal(err)
	}
	r := e.d.Records()["s"]
	if e.k.FreeLowSlots("eth1") != low0-1 || e.k.FreeSlots("eth1") != high0 || !r.Admitted() ||
		e.k.Marks["vethS"] != r.Mark || e.k.Fws["eth1"][r.Mark] != r.ClassID {
		t.Fatalf("LOW free %d HIGH free %d, record %+v, marks %v, fws %v",
			e.k.FreeLowSlots("eth1"), e.k.FreeSlots("eth1"), r, e.k.Marks, e.k.Fws)
	}
	if st, _ := e.statusOf("s"); st.Table != drslices.TableLow || st.Share != 8 || st.Slots != 1 ||
		st.GuaranteedRateBits != 0 || st.BoundNs != 0 || st.Interface != "vethS" {
		t.Errorf("status %+v", st)
	}
	// the driver's own claims count as free in what it publishes
	if err := e.d.Publish(ctx); err != nil {
		t.Fatal(err)
	}
	if lowCounter() != 64 {
		t.Errorf("published low-slots %d with the driver's own share admitted, want 64", lowCounter())
	}
	e.start(t)
	if err := e.d.ReconcileKernel(ctx); err != nil {
		t.Fatal(err)
	}
	if e.k.FreeLowSlots("eth1") != low0-1 {
		t.Fatal("a driver restart withdrew the share")
	}
	if err := e.d.PodDown(ctx, "pod-s"); err != nil {
		t.Fatal(err)
	}
	if e.k.FreeLowSlots("eth1") != low0-1 || len(e.k.Marks) != 0 {
		t.Fatalf("PodDown: LOW free %d, marks %v", e.k.FreeLowSlots("eth1"), e.k.Marks)
	}
	e.unprepare(t, "s")
	if e.k.FreeLowSlots("eth1") != low0 || len(e.k.Marks) != 0 || len(e.k.Fws["eth1"]) != 0 {
		t.Fatalf("not released: LOW free %d, marks %v, fws %v", e.k.FreeLowSlots("eth1"), e.k.Marks, e.k.Fws)
	}
}

func TestRestartReconcile(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		between func(t *testing.T, e *env) // while the driver is down
		running []Sandbox
		want    func(t *testing.T, e *env, free0 int)
	}{
		{
			name:    "nothing changed: nothing withdrawn, nothing leaked",
			running: []Sandbox{{PodUID: "pod-a", HostIf: hostIf("vethA")}},
			want: func(t *testing.T, e *env, free0 int) {
				if e.k.FreeSlots("eth0") != free0-2 || !e.d.Records()["a"].Admitted() {
					t.Fatalf("free %d, record %+v", e.k.FreeSlots("eth0"), e.d.Records()["a"])
				}
			},
		},
		{
			name: "a leaked class in the driver's range is released",
			between: func(t *testing.T, e *env) {
				if _, err := e.k.Admit("eth0", 0x10000|0x100+0x50, 1000, 64, ""); err != nil {
					t.Fatal(err)
				}
			},
			running: []Sandbox{{PodUID: "pod-a", HostIf: hostIf("vethA")}},
			want: func(t *testing.T, e *env, free0 int) {
				if e.k.FreeSlots("eth0") != free0-2 {
					t.Fatalf("free %d, want %d", e.k.FreeSlots("eth0"), free0-2)
				}
			},
		},
		{
			name: "a class gone from the kernel is admitted again for the running pod",
			between: func(t *testing.T, e *env) {
				r := e.d.Records()["a"]
				if err := e.k.Release("eth0", r.ClassID); err != nil {
					t.Fatal(err)
				}
			},
			running: []Sandbox{{PodUID: "pod-a", HostIf: hostIf("vethA")}},
			want: func(t *testing.T, e *env, free0 int) {
				if e.k.FreeSlots("eth0") != free0-2 || !e.d.Records()["a"].Admitted() {
					t.Fatalf("free %d, record %+v", e.k.FreeSlots("eth0"), e.d.Records()["a"])
				}
			},
		},
		{
			name:    "a pod that stopped while the driver was down is unmarked, its claim keeps the class",
			running: nil,
			want: func(t *testing.T, e *env, free0 int) {
				if e.k.FreeSlots("eth0") != free0-2 || !e.d.Records()["a"].Admitted() || len(e.k.Marks) != 0 {
					t.Fatalf("free %d, record %+v, marks %v", e.k.FreeSlots("eth0"), e.d.Records()["a"], e.k.Marks)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			free0 := e.k.FreeSlots("eth0")
			if err := e.prepare(t, claim("a", "eth0", 2, 0, "pod-a")); err != nil {
				t.Fatal(err)
			}
			if err := e.d.PodUp(ctx, "pod-a", "vethA", nil); err != nil {
				t.Fatal(err)
			}
			if tc.between != nil {
				tc.between(t, e)
			}
			e.start(t)
			<-e.d.Synchronize(ctx, tc.running)
			if err := e.d.Publish(ctx); err != nil {
				t.Fatal(err)
			}
			// published counters: 64 minus what is held outside claims
			// (a leaked class's slot freed by the Synchronize)
			for _, nic := range []string{"eth0", "eth1"} {
				pool := e.pub.last.Pools[drslices.PoolName("node1", nic)]
				v := pool.Slices[0].SharedCounters[0].Counters[drslices.CounterSlots].Value
				if v.Value() != 60 {
					t.Fatalf("%s: published %d slots, want 60 (the system class holds 4)", nic, v.Value())
				}
			}
			tc.want(t, e, free0)
		})
	}
}

func TestCountersExcludeForeignClasses(t *testing.T) {
	e := newEnv(t)
	// someone else's class (not in the driver's minor range) holds 16
	if _, err := e.k.Admit("eth1", 0x10000|0x20, 1000, 4, ""); err != nil {
		t.Fatal(err)
	}
	if err := e.d.Publish(context.Background()); err != nil {
		t.Fatal(err)
	}
	pool := e.pub.last.Pools[drslices.PoolName("node1", "eth1")]
	c := pool.Slices[0].SharedCounters[0].Counters
	s, k := c[drslices.CounterSlots].Value, c[drslices.CounterClasses].Value
	if s.Value() != 64-4-16 || k.Value() != 64-2 {
		t.Fatalf("slots %d classes %d", s.Value(), k.Value())
	}
	// and the driver never releases it
	e.start(t)
	<-e.d.Synchronize(context.Background(), nil)
	q, _ := e.k.Read("eth1")
	if _, ok := q.Find(0x20); !ok {
		t.Fatal("a foreign class was released")
	}
}

func TestOnePerPod(t *testing.T) {
	e := newEnv(t)
	for _, uid := range []string{"a", "b"} {
		if err := e.prepare(t, claim(uid, "eth0", 1, map[string]int{"a": 0, "b": 1}[uid], "pod-x")); err != nil {
			t.Fatal(err)
		}
	}
	err := e.d.PodUp(context.Background(), "pod-x", "vethX", nil)
	if err == nil || !strings.Contains(err.Error(), "one per pod") {
		t.Fatalf("two claims on one pod: %v", err)
	}
	_ = fmt.Sprint()
}
