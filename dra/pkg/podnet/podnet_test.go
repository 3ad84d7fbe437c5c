// SPDX-License-Identifier: Apache-2.0
package podnet

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
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
	host := fmt.Sprintf("drah%d%s", os.Getpid()%100000, kind[:1]+kind[len(kind)-1:])
	switch kind {
	case "veth":
		ip(t, "link", "add", host, "type", "veth", "peer", "name", "eth0", "netns", ns)
		t.Cleanup(func() { _ = exec.Command("ip", "link", "del", host).Run() })
	case "vethns":
		// the peer in a third namespace, with the index of an unrelated
		// veth of the host namespace (host): not the pod's peer
		ip(t, "link", "add", host, "type", "veth", "peer", "name", host+"p")
		t.Cleanup(func() { _ = exec.Command("ip", "link", "del", host).Run() })
		idx, err := os.ReadFile("/sys/class/net/" + host + "/ifindex")
		if err != nil {
			t.Fatal(err)
		}
		other := ns + "-o"
		ip(t, "netns", "add", other)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", other).Run() })
		ip(t, "-n", other, "link", "add", host+"o", "index", strings.TrimSpace(string(idx)),
			"type", "veth", "peer", "name", "eth0", "netns", ns)
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

// The test binary run again by TestHostInterfaceNetAdminOnly: the host
// interface of the namespace in $PODNET_HOSTIF_NETNS and the capabilities
// it was found with.
func TestMain(m *testing.M) {
	if p := os.Getenv("PODNET_HOSTIF_NETNS"); p != "" {
		st, _ := os.ReadFile("/proc/self/status")
		capEff := regexp.MustCompile(`(?m)^CapEff:\s*(\S+)$`).FindSubmatch(st)
		host, err := Linux{}.HostInterface(p)
		if err != nil || capEff == nil {
			fmt.Printf("error: %v (CapEff %q)\n", err, capEff)
			os.Exit(1)
		}
		fmt.Printf("%s %s\n", host, capEff[1])
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The DaemonSet's privilege: root with CAP_NET_ADMIN and no other
// capability (no CAP_SYS_ADMIN, which setns into the pod's namespace
// would need). The test binary runs itself again under setpriv with only
// that capability and finds the veth's peer.
func TestHostInterfaceNetAdminOnly(t *testing.T) {
	path, host := podNS(t, "veth")
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv(1) (util-linux)")
	}
	cmd := exec.Command(setpriv, "--bounding-set=-all,+net_admin", "--inh-caps=-all", "--", os.Args[0])
	cmd.Env = append(os.Environ(), "PODNET_HOSTIF_NETNS="+path)
	out, err := cmd.CombinedOutput()
	// CAP_NET_ADMIN is bit 12: CapEff 0000000000001000
	want := host + " 0000000000001000"
	if err != nil || strings.TrimSpace(string(out)) != want {
		t.Fatalf("with CAP_NET_ADMIN only: %q, %v; want %q", out, err, want)
	}
}

func TestHostInterface(t *testing.T) {
	tests := []struct {
		kind    string
		wantErr error
	}{
		{"veth", nil},
		{"vethns", nil},
		{"macvlan", ErrUnclassifiable},
		{"ipvlan", ErrUnclassifiable},
	}
	for _, tc := range tests {
		t.Run(tc.kind, func(t *testing.T) {
			path, host := podNS(t, tc.kind)
			got, err := Linux{}.HostInterface(path)
			if tc.kind == "vethns" {
				if err == nil || !strings.Contains(err.Error(), "not in this network namespace") {
					t.Fatalf("peer in another namespace: got %q, %v", got, err)
				}
				return
			}
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
