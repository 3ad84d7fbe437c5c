// SPDX-License-Identifier: Apache-2.0
package driver

import (
	"context"
	"errors"
	"os"
	"testing"

	"arbtable.dev/dra/pkg/kernel"
)

// Uninstall takes back what the driver made and nothing else: marks,
// its classes and fw filters, a root left with only the system class,
// the checkpoint; a root that also carries an administrator's class
// keeps it (and its root).
func TestUninstall(t *testing.T) {
	tests := []struct {
		name      string
		adminEth1 bool // an administrator's class 1:50 on eth1
	}{
		{name: "only the driver's"},
		{name: "an admin's class on eth1", adminEth1: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			if tc.adminEth1 {
				if _, err := e.k.Admit("eth1", 0x10050, 1000, 64, ""); err != nil {
					t.Fatal(err)
				}
			}
			if err := e.prepare(t, claim("a", "eth0", 8, 0, "pod-a")); err != nil {
				t.Fatal(err)
			}
			if err := e.prepare(t, claim("b", "eth1", 4, 0, "pod-b")); err != nil {
				t.Fatal(err)
			}
			if err := e.d.PodUp(ctx, "pod-a", "vethA", nil); err != nil {
				t.Fatal(err)
			}
			if err := e.d.PodUp(ctx, "pod-b", "vethB", nil); err != nil {
				t.Fatal(err)
			}
			e.d.WaitStatus()
			if err := e.d.Uninstall(ctx); err != nil {
				t.Fatal(err)
			}
			if len(e.k.Marks) != 0 || len(e.k.Fws["eth0"]) != 0 || len(e.k.Fws["eth1"]) != 0 {
				t.Fatalf("left: marks %v, fws %v", e.k.Marks, e.k.Fws)
			}
			if _, err := e.k.Read("eth0"); !errors.Is(err, kernel.ErrNoQdisc) {
				t.Fatalf("eth0's root, the driver's only: %v, want deleted", err)
			}
			q, err := e.k.Read("eth1")
			if tc.adminEth1 {
				_, admin := q.Find(0x10050)
				if err != nil || !admin || len(q.Classes) != 2 {
					t.Fatalf("eth1 with an admin's class: %v, classes %+v; want the root, 1:50 and the system class", err, q.Classes)
				}
			} else if !errors.Is(err, kernel.ErrNoQdisc) {
				t.Fatalf("eth1's root: %v, want deleted", err)
			}
			if len(e.d.Records()) != 0 {
				t.Fatalf("records left: %v", e.d.Records())
			}
			if _, err := os.Stat(e.cfg.Checkpoint); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("checkpoint: %v, want removed", err)
			}
		})
	}
}
