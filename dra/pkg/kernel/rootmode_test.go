// SPDX-License-Identifier: Apache-2.0
package kernel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"arbtable.dev/dra/pkg/arbcore"
)

func TestResolveRootMode(t *testing.T) {
	tests := []struct {
		mode     string
		txq      int
		lockless bool
		err      string
	}{
		{mode: "auto", txq: 1},
		{mode: "auto", txq: 2, lockless: true},
		{mode: "auto", txq: 4, lockless: true},
		{mode: "auto", txq: 64, lockless: true},
		{mode: "", txq: 1},
		{mode: "", txq: 8, lockless: true},
		{mode: "locked", txq: 1},
		{mode: "locked", txq: 16},
		{mode: "lockless", txq: 1, lockless: true},
		{mode: "lockless", txq: 4, lockless: true},
		{mode: "Lockless", txq: 4, err: `root mode "Lockless": auto, locked or lockless`},
		{mode: "nolock", txq: 4, err: "auto, locked or lockless"},
		{mode: "auto ", txq: 4, err: "auto, locked or lockless"},
	}
	for _, tt := range tests {
		got, err := ResolveRootMode(tt.mode, tt.txq)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ResolveRootMode(%q, %d): %v, want an error with %q", tt.mode, tt.txq, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.lockless {
			t.Errorf("ResolveRootMode(%q, %d) = %v, %v; want %v", tt.mode, tt.txq, got, err, tt.lockless)
		}
	}
}

// TxQueues counts tx-N, not rx-N, under a sysfs tree.
func TestTxQueues(t *testing.T) {
	sys := t.TempDir()
	mk := func(nic string, qs ...string) {
		for _, q := range qs {
			if err := os.MkdirAll(filepath.Join(sys, "class/net", nic, "queues", q), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("eth0", "rx-0", "rx-1", "tx-0", "tx-1", "tx-2", "tx-3")
	mk("veth1", "rx-0", "tx-0")
	mk("odd", "rx-0")
	tests := []struct {
		nic string
		n   int
		err bool
	}{
		{nic: "eth0", n: 4},
		{nic: "veth1", n: 1},
		{nic: "odd", err: true},
		{nic: "gone", err: true},
	}
	for _, tt := range tests {
		n, err := TxQueues(sys, tt.nic)
		if (err != nil) != tt.err || n != tt.n {
			t.Errorf("TxQueues(%s) = %d, %v; want %d, error %v", tt.nic, n, err, tt.n, tt.err)
		}
	}
}

// The Fake models the kernel: the mode by the queues, no child on a
// lockless root's system class, a graft on a lockless root refused (the
// class released with it), an existing root's mode kept.
func TestFakeRootMode(t *testing.T) {
	p := arbcore.Params{Rate: 125_000_000, MTU: 1514, MaxWeight: 64, HighLimit: 100}
	cfg := RootConfig{Handle: 0x10000, SystemMinor: 0xfffe, SystemShare: 1, Child: "fq_codel"}
	f := NewFake(map[string]arbcore.Params{"mq": p, "sq": p})
	f.TxQueues["mq"] = 4
	for _, nic := range []string{"mq", "sq"} {
		if err := f.EnsureRoot(nic, cfg); err != nil {
			t.Fatal(err)
		}
	}
	if q, _ := f.Read("mq"); !q.Lockless {
		t.Fatalf("4 queues: %+v, children %v", q, f.Children["mq"])
	}
	if len(f.Children["mq"]) != 0 {
		t.Fatalf("a lockless root's system class has a child: %v", f.Children["mq"])
	}
	if q, _ := f.Read("sq"); q.Lockless || f.Children["sq"][0xfffe] != "fq_codel" {
		t.Fatalf("1 queue: %+v, children %v", q, f.Children["sq"])
	}
	if _, err := f.Admit("mq", 0x10101, 1_000_000, 16, "fq_codel"); err == nil || !strings.Contains(err.Error(), "lockless") {
		t.Fatalf("a child on a lockless root: %v", err)
	}
	if q, _ := f.Read("mq"); len(q.Classes) != 1 {
		t.Fatalf("the refused class stays: %+v", q.Classes)
	}
	if _, err := f.Admit("mq", 0x10101, 1_000_000, 16, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := f.AdmitShare("sq", 0x10102, 4, "fq"); err != nil || f.Children["sq"][0x102] != "fq" {
		t.Fatalf("a share class's child on a locked root: %v, %v", err, f.Children["sq"])
	}
	// an existing root keeps its mode whatever the config says
	if err := f.EnsureRoot("mq", RootConfig{Handle: 0x10000, Mode: RootLocked}); err != nil {
		t.Fatal(err)
	}
	if q, _ := f.Read("mq"); !q.Lockless {
		t.Fatal("EnsureRoot changed an existing root's mode")
	}
}
