// SPDX-License-Identifier: Apache-2.0
package driver

import (
	"context"
	"testing"

	"arbtable.dev/dra/pkg/arbcore"
	"arbtable.dev/dra/pkg/kernel"
)

// The root's mode by the NIC's transmit queues and --root-mode, and the
// classes' child by the root read: a lockless root (the driver's or an
// admin's) gives no class a child, for a claim's first admission, a
// share's and a re-admission alike; a locked root gives every class
// --child. The Fake refuses a child on a lockless root, as the kernel's
// graft does, so a driver that grafts one fails the admission here.
func TestRootModeChild(t *testing.T) {
	tests := []struct {
		name     string
		mode     string
		txq      int
		admin    bool // an admin's lockless root before the driver starts
		lockless bool
	}{
		{name: "auto, one queue: locked", mode: "auto", txq: 1},
		{name: "\"\" is auto, one queue: locked", mode: "", txq: 1},
		{name: "auto, two queues: lockless", mode: "auto", txq: 2, lockless: true},
		{name: "auto, four queues: lockless", mode: "auto", txq: 4, lockless: true},
		{name: "locked, four queues", mode: "locked", txq: 4},
		{name: "lockless, one queue", mode: "lockless", txq: 1, lockless: true},
		{name: "an admin's lockless root, auto, one queue: kept", mode: "auto", txq: 1, admin: true, lockless: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			e := &env{k: kernel.NewFake(map[string]arbcore.Params{"eth0": fast, "eth1": slow}),
				pub: &fakePub{}, status: &fakeStatus{got: map[string]DeviceStatus{}}, cfg: testConfig(t)}
			e.cfg.Root.Mode = tt.mode
			e.cfg.Child = e.cfg.Root.Child
			e.k.TxQueues["eth0"] = tt.txq
			if tt.admin {
				if err := e.k.MakeLockless("eth0", 0x10000); err != nil {
					t.Fatal(err)
				}
			}
			e.start(t)
			q, err := e.k.Read("eth0")
			if err != nil {
				t.Fatal(err)
			}
			if q.Lockless != tt.lockless {
				t.Fatalf("root lockless %v, want %v", q.Lockless, tt.lockless)
			}
			if err := e.prepare(t, claim("a", "eth0", 8, 0, "pod-a")); err != nil {
				t.Fatal(err)
			}
			if err := e.d.PodUp(ctx, "pod-a", "vethA", nil); err != nil {
				t.Fatalf("a block pod: %v", err)
			}
			if err := e.prepare(t, shareClaim("s", "eth0", 0, "")); err != nil {
				t.Fatal(err)
			}
			if err := e.d.PodUp(ctx, "pod-s", "vethS", nil); err != nil {
				t.Fatalf("a share pod: %v", err)
			}
			ra, rs := e.d.Records()["a"], e.d.Records()["s"]
			if !ra.Admitted() || !rs.Admitted() {
				t.Fatalf("records %+v, %+v", ra, rs)
			}
			// a class gone from the kernel is admitted again, its child
			// chosen again from the root
			if err := e.k.Release("eth0", ra.ClassID); err != nil {
				t.Fatal(err)
			}
			if err := e.d.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			if q, _ = e.k.Read("eth0"); len(q.Classes) == 0 {
				t.Fatal("no classes")
			}
			if _, ok := q.Find(ra.ClassID); !ok {
				t.Fatalf("class %x not re-admitted: %+v", ra.ClassID, q.Classes)
			}
			want := map[uint32]string{}
			if !tt.lockless {
				for _, m := range []uint32{ra.ClassID & 0xffff, rs.ClassID & 0xffff, 0xfffe} {
					want[m] = "fq_codel"
				}
			}
			if tt.admin {
				delete(want, 0xfffe) // the admin's root has no system class of the driver's
			}
			got := e.k.Children["eth0"]
			if len(got) != len(want) {
				t.Fatalf("children %v, want %v", got, want)
			}
			for m, k := range want {
				if got[m] != k {
					t.Fatalf("children %v, want %v", got, want)
				}
			}
		})
	}
}
