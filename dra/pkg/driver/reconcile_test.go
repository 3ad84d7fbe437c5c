// SPDX-License-Identifier: Apache-2.0
package driver

import (
	"context"
	"errors"
	"testing"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/resourceslice"

	"arbtable.dev/dra/pkg/arbcore"
	"arbtable.dev/dra/pkg/kernel"
	drslices "arbtable.dev/dra/pkg/slices"
)

// devicesOf returns the devices of nic's pool in the last publish.
func (e *env) devicesOf(t *testing.T, nic string) []resourceapi.Device {
	t.Helper()
	last, _ := e.pub.snapshot()
	pool, ok := last.Pools[drslices.PoolName("node1", nic)]
	if !ok {
		t.Fatalf("pool of %s not published (pools %v)", nic, keys(last.Pools))
	}
	var devs []resourceapi.Device
	for _, s := range pool.Slices {
		devs = append(devs, s.Devices...)
	}
	if len(devs) == 0 {
		t.Fatalf("pool of %s has no devices", nic)
	}
	return devs
}

func keys(m map[string]resourceslice.Pool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// taintKeys returns the taint keys every device of nic carries, and
// fails when the devices differ.
func (e *env) taintKeys(t *testing.T, nic string) map[string]string {
	t.Helper()
	devs := e.devicesOf(t, nic)
	out := map[string]string{}
	for _, tn := range devs[0].Taints {
		if tn.Effect != resourceapi.DeviceTaintEffectNoSchedule {
			t.Errorf("%s: taint %s effect %s", nic, tn.Key, tn.Effect)
		}
		out[tn.Key] = tn.Value
	}
	for _, d := range devs[1:] {
		if len(d.Taints) != len(devs[0].Taints) {
			t.Fatalf("%s: device %s has %d taints, %s %d", nic, d.Name, len(d.Taints), devs[0].Name, len(devs[0].Taints))
		}
	}
	return out
}

func (e *env) linkBits(t *testing.T, nic string) int64 {
	t.Helper()
	return *e.devicesOf(t, nic)[0].Attributes[drslices.AttrLinkBits].IntValue
}

// podWith prepares claim c for pod-<uid> and brings the pod up on
// veth-<uid>; it returns the record.
func (e *env) podWith(t *testing.T, uid string, c *resourceapi.ResourceClaim) {
	t.Helper()
	if err := e.prepare(t, c); err != nil {
		t.Fatal(err)
	}
	if err := e.d.PodUp(context.Background(), "pod-"+uid, "veth-"+uid, nil); err != nil {
		t.Fatal(err)
	}
}

// shaped checks that claim uid's class is in the kernel with its fw
// filter and its pod's mark: what PodUp made.
func (e *env) shaped(t *testing.T, uid string) {
	t.Helper()
	r := e.d.Records()[uid]
	if !r.Admitted() {
		t.Fatalf("claim %s: record not admitted", uid)
	}
	q, err := e.k.Read(r.NIC)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := q.Find(r.ClassID)
	if !ok || c.ClassID != r.ClassID {
		t.Fatalf("claim %s: class %x not in the kernel (%+v)", uid, r.ClassID, q.Classes)
	}
	if got := c.HighSlots + c.LowSlots; got != r.Slots {
		t.Errorf("claim %s: %d slots, recorded %d", uid, got, r.Slots)
	}
	mark := r.Mark << e.d.markShift()
	if e.k.Fws[r.NIC][mark] != r.ClassID {
		t.Errorf("claim %s: fw filter of mark %#x -> %x, want %x", uid, mark, e.k.Fws[r.NIC][mark], r.ClassID)
	}
	if e.k.Marks["veth-"+uid] != mark {
		t.Errorf("claim %s: pod interface marked %#x, want %#x", uid, e.k.Marks["veth-"+uid], mark)
	}
}

func (e *env) unshaped(t *testing.T, uid string) {
	t.Helper()
	r := e.d.Records()[uid]
	if r.Admitted() {
		t.Errorf("claim %s: record still admitted (class %x)", uid, r.ClassID)
	}
	if m, ok := e.k.Marks["veth-"+uid]; ok {
		t.Errorf("claim %s: pod interface still marked %#x", uid, m)
	}
}

func TestReconcile(t *testing.T) {
	up := func(p arbcore.Params) kernel.Link {
		return kernel.Link{Exists: true, Up: true, Speed: p.Rate, MTU: p.MTU}
	}
	tests := []struct {
		name string
		// claim a is on eth0: a 4-slot block at the block's rate, or
		// with shareA a share (the LOW table fits any capacity)
		shareA bool
		event  func(e *env)
		// taints of eth0's devices after the pass (keys); eth1 stays
		// untainted and published in every case
		taints []string
		// eth0's root capacity in the kernel and its published linkBits
		root uint64
		// claim a is still (or again) shaped; otherwise unshaped
		shaped  bool
		wantErr bool
	}{
		{name: "steady", event: func(e *env) {}, root: fast.Rate, shaped: true},
		{name: "link down: tainted, not rate 0", event: func(e *env) {
			e.k.SetLink("eth0", kernel.Link{Exists: true, MTU: fast.MTU})
		}, taints: []string{drslices.TaintLinkDown}, root: fast.Rate, shaped: true},
		{name: "link down and up: untainted", event: func(e *env) {
			e.k.SetLink("eth0", kernel.Link{Exists: true, MTU: fast.MTU})
			if err := e.d.Reconcile(context.Background()); err != nil {
				panic(err)
			}
			e.k.SetLink("eth0", up(fast))
		}, root: fast.Rate, shaped: true},
		{name: "speed up: the root remade at it, the class re-admitted", event: func(e *env) {
			e.k.SetLink("eth0", kernel.Link{Exists: true, Up: true, Speed: 2 * fast.Rate, MTU: fast.MTU})
		}, root: 2 * fast.Rate, shaped: true},
		{name: "speed down, the claim fits: the root remade at it", shareA: true, event: func(e *env) {
			e.k.SetLink("eth0", kernel.Link{Exists: true, Up: true, Speed: slow.Rate, MTU: fast.MTU})
		}, root: slow.Rate, shaped: true},
		{name: "speed down, the claim does not fit: tainted, the kernel's capacity published", event: func(e *env) {
			e.k.SetLink("eth0", kernel.Link{Exists: true, Up: true, Speed: slow.Rate, MTU: fast.MTU})
		}, taints: []string{drslices.TaintCapacity}, root: fast.Rate, shaped: true},
		{name: "root replaced by hand: made again, the class re-admitted", event: func(e *env) {
			_ = e.k.DeleteRoot("eth0")
		}, root: fast.Rate, shaped: true},
		{name: "class deleted by hand: re-admitted", event: func(e *env) {
			_ = e.k.DeleteClass("eth0", e.d.Records()["a"].ClassID)
		}, root: fast.Rate, shaped: true},
		{name: "fw filter deleted by hand, its class kept: the filter added again", event: func(e *env) {
			r := e.d.Records()["a"]
			_ = e.k.DelFw("eth0", r.ClassID&0xffff0000, e.cfg.FwPrio, r.Mark<<e.d.markShift())
		}, root: fast.Rate, shaped: true},
		{name: "module missing after the root went: tainted, the pod unmarked", event: func(e *env) {
			_ = e.k.DeleteRoot("eth0")
			e.k.NoModule = true
		}, taints: []string{drslices.TaintQdisc}, root: 0, shaped: false, wantErr: true},
		{name: "root unreadable: tainted with its last numbers", event: func(e *env) {
			e.k.ReadErr["eth0"] = errors.New("dump truncated")
		}, taints: []string{drslices.TaintQdisc}, root: fast.Rate, shaped: true, wantErr: true},
		{name: "NIC renamed: tainted, the pod unmarked", event: func(e *env) {
			e.k.SetLink("eth0", kernel.Link{})
		}, taints: []string{drslices.TaintNICMissing}, root: fast.Rate, shaped: false},
		{name: "mtu grew and broke a guarantee: tainted", event: func(e *env) {
			e.k.SetBroken("eth0", 1)
		}, taints: []string{drslices.TaintBroken}, root: fast.Rate, shaped: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			c := claim("a", "eth0", 4, 0, "pod-a")
			if tc.shareA {
				c = shareClaim("a", "eth0", 0, "")
			}
			e.podWith(t, "a", c)
			e.podWith(t, "b", claim("b", "eth1", 2, 0, "pod-b"))
			tc.event(e)
			n := e.pub.count
			err := e.d.Reconcile(context.Background())
			if e.pub.count != n+1 {
				t.Fatalf("%d publishes in the pass, want 1", e.pub.count-n)
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("Reconcile: %v, want an error %v", err, tc.wantErr)
			}
			got := e.taintKeys(t, "eth0")
			if len(got) != len(tc.taints) {
				t.Errorf("eth0 taints %v, want %v", got, tc.taints)
			}
			for _, k := range tc.taints {
				if _, ok := got[k]; !ok {
					t.Errorf("eth0 taints %v, want %s", got, k)
				}
			}
			if got := e.taintKeys(t, "eth1"); len(got) != 0 {
				t.Errorf("eth1 taints %v, want none", got)
			}
			clear(e.k.ReadErr) // the checks below read the kernel
			e.shaped(t, "b")
			if r := e.k.Root("eth0"); r != tc.root {
				t.Errorf("eth0 root capacity %d, want %d", r, tc.root)
			}
			if tc.root != 0 {
				if lb := e.linkBits(t, "eth0"); lb != int64(tc.root*8) {
					t.Errorf("eth0 published linkBits %d, the kernel admits against %d", lb, tc.root*8)
				}
			}
			if tc.shaped {
				e.shaped(t, "a")
			} else {
				e.unshaped(t, "a")
			}
		})
	}
}

// TestReconcileMTU: an mtu the root followed is the one published (the
// blocks' bounds are computed from it).
func TestReconcileMTU(t *testing.T) {
	e := newEnv(t)
	e.k.SetLink("eth1", kernel.Link{Exists: true, Up: true, Speed: slow.Rate, MTU: 4000})
	if err := e.d.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	d := e.devicesOf(t, "eth1")[0]
	if m := *d.Attributes[drslices.AttrMTU].IntValue; m != 4000 {
		t.Errorf("published mtu %d, want 4000", m)
	}
	p := slow
	p.MTU = 4000
	if b := *d.Attributes[drslices.AttrBoundNs].IntValue; b != int64(block(t, p, 1).BoundNs) {
		t.Errorf("published bound %d, the core's at mtu 4000 %d", b, block(t, p, 1).BoundNs)
	}
}

// TestRun: the loop passes at a tick and at a Trigger; no sleeps (a send
// on the unbuffered tick returns only once the loop is back in select).
func TestRun(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	tick := make(chan time.Time)
	done := make(chan struct{})
	go func() { e.d.Run(ctx, tick); close(done) }()
	count := func() int { _, n := e.pub.snapshot(); return n }
	n := count()
	e.k.SetLink("eth0", kernel.Link{Exists: true, MTU: fast.MTU})
	tick <- time.Time{}
	tick <- time.Time{} // the first pass is over (the second may run)
	if c := count(); c < n+1 {
		t.Fatalf("%d publishes after a tick", c-n)
	}
	if _, ok := e.taintKeys(t, "eth0")[drslices.TaintLinkDown]; !ok {
		t.Errorf("link down not tainted by the loop")
	}
	n = count()
	e.d.Trigger()
	e.d.Trigger() // folds into the first
	tick <- time.Time{}
	tick <- time.Time{}
	if c := count(); c < n+2 {
		t.Errorf("%d publishes after a trigger and two ticks", c-n)
	}
	cancel()
	<-done
}

// TestStartWithoutANIC: a NIC that cannot be served at start (no such
// interface) is left out; the driver starts and serves the others.
func TestStartWithoutANIC(t *testing.T) {
	e := &env{k: kernel.NewFake(map[string]arbcore.Params{"eth0": fast, "eth1": slow}),
		pub: &fakePub{}, status: &fakeStatus{got: map[string]DeviceStatus{}}, cfg: testConfig(t)}
	e.cfg.NICs = []string{"eth2", "eth0", "eth1"}
	e.start(t)
	if _, ok := e.pub.last.Pools[drslices.PoolName("node1", "eth2")]; ok {
		t.Errorf("eth2 published")
	}
	for _, nic := range []string{"eth0", "eth1"} {
		if got := e.taintKeys(t, nic); len(got) != 0 {
			t.Errorf("%s taints %v", nic, got)
		}
	}
	e.podWith(t, "a", claim("a", "eth0", 4, 0, "pod-a"))
	e.shaped(t, "a")
}

// TestReconcileRemakesOnce: a root made again for a link speed that it
// does not take (the kernel reads another) is not remade at every pass.
func TestReconcileRemakesOnce(t *testing.T) {
	e := newEnv(t)
	e.podWith(t, "a", claim("a", "eth0", 4, 0, "pod-a"))
	// the link reads faster, but a new root still gets fast.Rate (Links
	// set without SetLink: the model's params stay)
	e.k.Links["eth0"] = kernel.Link{Exists: true, Up: true, Speed: 2 * fast.Rate, MTU: fast.MTU}
	n := e.k.Roots
	for i := 0; i < 3; i++ {
		if err := e.d.Reconcile(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if e.k.Roots != n+1 {
		t.Errorf("%d roots made in 3 passes, want 1", e.k.Roots-n)
	}
	e.shaped(t, "a")
	if r := e.k.Root("eth0"); r != fast.Rate || e.linkBits(t, "eth0") != int64(fast.Rate*8) {
		t.Errorf("root %d, published %d, want the kernel's %d", r, e.linkBits(t, "eth0"), fast.Rate)
	}
}

// TestReconcileClosesPaths: a root whose classification paths were
// reopened by hand (tc qdisc change ... prioclassid classifyforeign) is
// closed again by the next pass, its classes kept.
func TestReconcileClosesPaths(t *testing.T) {
	e := newEnv(t)
	e.podWith(t, "a", claim("a", "eth0", 4, 0, "pod-a"))
	e.k.OpenPaths("eth0")
	if err := e.d.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	q, err := e.k.Read("eth0")
	if err != nil {
		t.Fatal(err)
	}
	if q.PathsOpen {
		t.Error("eth0's root keeps prioclassid/classifyforeign after a pass")
	}
	e.shaped(t, "a")
}

// TestReconcileReadiness: OnPublish (readiness) says published when a NIC
// the driver cannot serve is published tainted, and not when the slices
// could not be published.
func TestReconcileReadiness(t *testing.T) {
	tests := []struct {
		name      string
		event     func(e *env)
		published bool
	}{
		{name: "steady", event: func(e *env) {}, published: true},
		{name: "one root unreadable: tainted, published", event: func(e *env) {
			e.k.ReadErr["eth0"] = errors.New("dump truncated")
		}, published: true},
		{name: "the API refuses the slices", event: func(e *env) {
			e.pub.err = errors.New("resourceslices is forbidden")
		}, published: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			var got []error
			e.d.OnPublish = func(err error) { got = append(got, err) }
			tc.event(e)
			_ = e.d.Reconcile(context.Background())
			if len(got) != 1 {
				t.Fatalf("OnPublish called %d times in a pass, want 1", len(got))
			}
			if (got[0] == nil) != tc.published {
				t.Errorf("OnPublish(%v), want published %v", got[0], tc.published)
			}
		})
	}
}
