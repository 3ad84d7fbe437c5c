// SPDX-License-Identifier: Apache-2.0
package podnet

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"arbtable.dev/dra/pkg/kernel"
)

func ip(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// A pod network namespace with eth0 of the given kind; returns its path
// and the host-side name (veth only).
func podNS(t *testing.T, kind string) (string, string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (network namespaces)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip(8)")
	}
	ns := fmt.Sprintf("dra-t%d-%s", os.Getpid(), kind)
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Skipf("cannot make a network namespace here: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	host := fmt.Sprintf("drah%d%c", os.Getpid()%100000, kind[0])
	switch kind {
	case "veth":
		ip(t, "link", "add", host, "type", "veth", "peer", "name", "eth0", "netns", ns)
		t.Cleanup(func() { _ = exec.Command("ip", "link", "del", host).Run() })
	case "macvlan", "ipvlan":
		ip(t, "link", "add", host, "type", "veth", "peer", "name", host+"p")
		t.Cleanup(func() { _ = exec.Command("ip", "link", "del", host).Run() })
		if out, err := exec.Command("ip", "link", "add", "link", host, "name", host+"v", "type", kind).CombinedOutput(); err != nil {
			t.Skipf("this kernel has no %s: %s", kind, out)
		}
		ip(t, "link", "set", host+"v", "netns", ns, "name", "eth0")
	}
	return "/run/netns/" + ns, host
}

func TestHostInterface(t *testing.T) {
	tests := []struct {
		kind    string
		wantErr error
	}{
		{"veth", nil},
		{"macvlan", ErrUnclassifiable},
		{"ipvlan", ErrUnclassifiable},
	}
	for _, tc := range tests {
		t.Run(tc.kind, func(t *testing.T) {
			path, host := podNS(t, tc.kind)
			got, err := Linux{}.HostInterface(path)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.kind) {
					t.Fatalf("err %v, want %v naming %s", err, tc.wantErr, tc.kind)
				}
				return
			}
			if err != nil || got != host {
				t.Fatalf("got %q, %v; want %q", got, err, host)
			}
		})
	}
	if _, err := (Linux{}).HostInterface(""); err == nil {
		t.Fatal("no netns path accepted")
	}
}

// The mark filter on a real host-side veth: clsact, matchall with an
// skbedit mark under the mask; removed again.
func TestMarkOnVeth(t *testing.T) {
	_, host := podNS(t, "veth")
	// the classifier and action this needs may be missing (modules)
	probe := exec.Command("sh", "-c", "tc qdisc add dev "+host+" clsact && tc filter add dev "+host+
		" ingress prio 1 matchall action skbedit mark 1/1 && tc filter del dev "+host+" ingress prio 1")
	if out, err := probe.CombinedOutput(); err != nil {
		t.Skipf("tc matchall/skbedit unavailable here: %s", out)
	}
	k := &kernel.Linux{}
	if err := k.Mark(host, 0xa7b, 0x5, 0x7f); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("tc", "filter", "show", "dev", host, "ingress").CombinedOutput()
	if err != nil {
		t.Skipf("tc: %v", err)
	}
	s := string(out)
	if !strings.Contains(s, "matchall") || !strings.Contains(s, "skbedit") || !strings.Contains(s, "mark 5/0x7f") {
		t.Fatalf("ingress filters:\n%s", s)
	}
	if err := k.Unmark(host, 0xa7b); err != nil {
		t.Fatal(err)
	}
	if err := k.Unmark(host, 0xa7b); err != nil {
		t.Fatalf("second unmark: %v", err)
	}
	out, _ = exec.Command("tc", "filter", "show", "dev", host, "ingress").CombinedOutput()
	if strings.Contains(string(out), "matchall") {
		t.Fatalf("filter left:\n%s", out)
	}
}
