// SPDX-License-Identifier: Apache-2.0

//go:build vm

// The Linux kernel view against a real kernel with sch_arbtable loaded:
// built with -tags vm (make dra-vmtests) and run as root in the guest by
// selftests/arbtable/test_dra_podnet.sh, never on the build host.
package kernel

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
)

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// veth makes a veth pair for the test and returns the first end's name.
func veth(t *testing.T, tag string) string {
	t.Helper()
	name := fmt.Sprintf("kt%d%s", os.Getpid()%100000, tag)
	run(t, "ip", "link", "add", name, "type", "veth", "peer", "name", name+"p")
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", name).Run() })
	run(t, "ip", "link", "set", name, "up")
	run(t, "ip", "link", "set", name+"p", "up")
	return name
}

func open(t *testing.T) *Linux {
	t.Helper()
	l, err := OpenLinux()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

// testRoot is a locked root: a veth's transmit queues follow the
// guest's CPUs, and these tests are about the root's other parts.
func testRoot(nic string) RootConfig {
	return RootConfig{Handle: 0x10000, SystemMinor: 0xfffe, SystemShare: 1, Child: "fq_codel",
		Mode: RootLocked, Rates: map[string]uint64{nic: 30_000_000 / 8}}
}

// dummy makes a dummy device with txq transmit queues, up.
func dummy(t *testing.T, tag string, txq int) string {
	t.Helper()
	name := fmt.Sprintf("kd%d%s", os.Getpid()%100000, tag)
	run(t, "ip", "link", "add", name, "numtxqueues", fmt.Sprint(txq), "type", "dummy")
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", name).Run() })
	run(t, "ip", "link", "set", name, "up")
	return name
}

// children returns the kinds of the qdiscs under nic's classes, by parent.
func children(t *testing.T, nic string) map[uint32]string {
	t.Helper()
	link, err := netlink.LinkByName(nic)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := netlink.QdiscList(link)
	if err != nil {
		t.Fatal(err)
	}
	out := map[uint32]string{}
	for _, q := range qs {
		if a := q.Attrs(); a.Parent != netlink.HANDLE_ROOT && a.Parent&0xffff != 0 {
			out[a.Parent] = q.Type()
		}
	}
	return out
}

// The root's mode: auto is lockless on a 4-queue device and locked on a
// 1-queue one, locked and lockless as asked; an admin's lockless root is
// kept by EnsureRoot. On a lockless root the system class and the
// classes admitted with a child get none, and the admissions succeed (a
// graft there is refused by the kernel); on a locked root each has it.
func TestRootMode(t *testing.T) {
	tests := []struct {
		name     string
		txq      int
		mode     string
		admin    bool // tc qdisc add ... arbtable lockless first
		lockless bool
	}{
		{name: "auto_4q_lockless", txq: 4, mode: RootAuto, lockless: true},
		{name: "auto_1q_locked", txq: 1, mode: RootAuto},
		{name: "locked_4q", txq: 4, mode: RootLocked},
		{name: "lockless_1q", txq: 1, mode: RootLockless, lockless: true},
		{name: "admin_lockless_1q_kept", txq: 1, mode: RootAuto, admin: true, lockless: true},
	}
	l := open(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nic := dummy(t, fmt.Sprint(i), tt.txq)
			cfg := testRoot(nic)
			cfg.Mode = tt.mode
			if tt.admin {
				run(t, "tc", "qdisc", "add", "dev", nic, "root", "handle", "1:", "arbtable", "lockless", "auto", "rate", "30mbit")
			}
			if err := l.EnsureRoot(nic, cfg); err != nil {
				t.Fatal(err)
			}
			q, err := l.Read(nic)
			if err != nil {
				t.Fatal(err)
			}
			out := run(t, "tc", "-d", "qdisc", "show", "dev", nic, "root")
			if q.Lockless != tt.lockless || strings.Contains(out, " lockless") != tt.lockless {
				t.Fatalf("Read says lockless %v, want %v; tc -d:\n%s", q.Lockless, tt.lockless, out)
			}
			if _, err := l.Admit(nic, 0x10101, 2_000_000/8, 8, "fq_codel"); err != nil {
				t.Fatalf("Admit with fq_codel: %v", err)
			}
			if _, err := l.AdmitShare(nic, 0x10102, 4, "fq_codel"); err != nil {
				t.Fatalf("AdmitShare with fq_codel: %v", err)
			}
			q, _ = l.Read(nic)
			for _, cid := range []uint32{0x10101, 0x10102} {
				if _, ok := q.Find(cid); !ok {
					t.Fatalf("class %x not admitted: %+v", cid, q.Classes)
				}
			}
			want := map[uint32]string{}
			if !tt.lockless {
				want = map[uint32]string{0x1fffe: "fq_codel", 0x10101: "fq_codel", 0x10102: "fq_codel"}
			}
			got := children(t, nic)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("children %v, want %v:\n%s", got, want, run(t, "tc", "qdisc", "show", "dev", nic))
			}
		})
	}
}

// The root's life: a foreign root an admin put there is replaced, a
// second EnsureRoot leaves the root as it is, and delete is idempotent.
func TestRootReplacesForeign(t *testing.T) {
	l := open(t)
	nic := veth(t, "r")
	run(t, "tc", "qdisc", "replace", "dev", nic, "root", "handle", "5:", "fq")
	if _, err := l.Read(nic); !errors.Is(err, ErrNoQdisc) {
		t.Fatalf("Read under an fq root: %v, want ErrNoQdisc", err)
	}
	if err := l.EnsureRoot(nic, testRoot(nic)); err != nil {
		t.Fatal(err)
	}
	q, err := l.Read(nic)
	if err != nil {
		t.Fatal(err)
	}
	if q.Handle != 0x10000 || q.Default != 0xfffe || q.PathsOpen || q.Params.Rate != 30_000_000/8 {
		t.Fatalf("root %+v: want 1:, default fffe, paths closed, rate 3750000 B/s", q)
	}
	if out := run(t, "tc", "qdisc", "show", "dev", nic); strings.Contains(out, "qdisc fq 5:") {
		t.Fatalf("the fq root is still there:\n%s", out)
	}
	// an admin's root opened by hand is closed again, nothing else changed
	run(t, "tc", "qdisc", "change", "dev", nic, "root", "arbtable", "prioclassid")
	if q, _ = l.Read(nic); !q.PathsOpen {
		t.Fatal("prioclassid set by hand does not read as PathsOpen")
	}
	if err := l.EnsureRoot(nic, testRoot(nic)); err != nil {
		t.Fatal(err)
	}
	if q, _ = l.Read(nic); q.PathsOpen || q.Handle != 0x10000 {
		t.Fatalf("after a second EnsureRoot: %+v", q)
	}
	if err := l.DeleteRoot(nic); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Read(nic); !errors.Is(err, ErrNoQdisc) {
		t.Fatalf("Read after DeleteRoot: %v", err)
	}
	if err := l.DeleteRoot(nic); err != nil {
		t.Fatalf("second DeleteRoot: %v", err)
	}
}

// A class, its child and its fw filter: admitted at the slots asked,
// filters read back as the kernel has them, deleted twice without error.
func TestClassAndFw(t *testing.T) {
	l := open(t)
	nic := veth(t, "c")
	if err := l.EnsureRoot(nic, testRoot(nic)); err != nil {
		t.Fatal(err)
	}
	const cid = 0x10101
	c, err := l.Admit(nic, cid, 2_000_000/8, 8, "fq_codel")
	if err != nil {
		t.Fatal(err)
	}
	if c.HighSlots != 8 || c.ClassID != cid {
		t.Fatalf("class %+v: want 1:101 with 8 HIGH slots", c)
	}
	if child := children(t, nic)[cid]; child != "fq_codel" {
		t.Fatalf("child of 1:101: %q, want fq_codel", child)
	}
	for _, mark := range []uint32{0x1, 0x1} { // the second is a replace
		if err := l.AddFw(nic, 0x10000, 7, mark, 0x7f, cid); err != nil {
			t.Fatal(err)
		}
	}
	// another classifier at another prio is not one of the driver's
	run(t, "tc", "filter", "add", "dev", nic, "parent", "1:", "prio", "9", "handle", "2", "fw", "classid", "1:fffe")
	fws, err := l.FwFilters(nic, 0x10000, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(fws) != 1 || fws[1] != cid {
		t.Fatalf("fw filters at prio 7: %v, want map[1:0x10101]", fws)
	}
	if err := l.DelFw(nic, 0x10000, 7, 1); err != nil {
		t.Fatal(err)
	}
	if err := l.DelFw(nic, 0x10000, 7, 1); err != nil {
		t.Fatalf("second DelFw: %v", err)
	}
	if fws, _ = l.FwFilters(nic, 0x10000, 7); len(fws) != 0 {
		t.Fatalf("fw filters after DelFw: %v", fws)
	}
	if err := l.Release(nic, cid); err != nil {
		t.Fatal(err)
	}
	if q, _ := l.Read(nic); func() bool { _, ok := q.Find(cid); return ok }() {
		t.Fatal("class 1:101 still there after Release")
	}
	if err := l.Release(nic, cid); err != nil {
		t.Fatalf("second Release: %v", err)
	}
}

// A pod marked again (after a lost checkpoint, the driver does not know
// it already is) and marked with another value: one matchall filter, the
// last mark; matchall itself refuses a second filter or a replace.
func TestMarkAgain(t *testing.T) {
	l := open(t)
	ifname := veth(t, "m")
	for _, mark := range []uint32{5, 5, 6} {
		if err := l.Mark(ifname, 0xa7b, mark, 0x7f); err != nil {
			t.Fatalf("Mark %d: %v", mark, err)
		}
	}
	out := run(t, "tc", "filter", "show", "dev", ifname, "ingress")
	// tc prints the classifier's line, then each filter's action
	if n := strings.Count(out, "skbedit"); n != 1 || !strings.Contains(out, "mark 6/0x7f") {
		t.Fatalf("%d skbedit actions, want one with mark 6/0x7f:\n%s", n, out)
	}
	for i := 0; i < 2; i++ {
		if err := l.Unmark(ifname, 0xa7b); err != nil {
			t.Fatalf("Unmark %d: %v", i, err)
		}
	}
	if out = run(t, "tc", "filter", "show", "dev", ifname, "ingress"); strings.Contains(out, "matchall") {
		t.Fatalf("filter left:\n%s", out)
	}
}
