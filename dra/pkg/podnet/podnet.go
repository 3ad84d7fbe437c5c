// SPDX-License-Identifier: Apache-2.0

// Package podnet finds a pod's host-side interface: the peer, in the host
// namespace, of the pod network namespace's eth0.
package podnet

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// ErrUnclassifiable means the pod's interface has no host-side peer the
// driver can mark (ipvlan, macvlan, netkit in L3 mode, ...).
var ErrUnclassifiable = errors.New("interface type without a host-side peer")

// Finder finds host-side interfaces.
type Finder interface {
	HostInterface(netnsPath string) (string, error)
}

// Linux finds them with rtnetlink.
type Linux struct {
	// Ifname is the pod's interface, eth0 by default.
	Ifname string
}

// HostInterface enters the pod's network namespace, reads its interface
// and returns the name of its veth peer in the host namespace.
func (l Linux) HostInterface(netnsPath string) (string, error) {
	if netnsPath == "" {
		return "", errors.New("the sandbox has no network namespace (host network?)")
	}
	ifname := l.Ifname
	if ifname == "" {
		ifname = "eth0"
	}
	ns, err := netns.GetFromPath(netnsPath)
	if err != nil {
		return "", fmt.Errorf("network namespace %s: %w", netnsPath, err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return "", fmt.Errorf("netlink in %s: %w", netnsPath, err)
	}
	defer h.Close()
	link, err := h.LinkByName(ifname)
	if err != nil {
		return "", fmt.Errorf("%s in %s: %w", ifname, netnsPath, err)
	}
	if link.Type() != "veth" {
		return "", fmt.Errorf("%s in %s is a %s: %w", ifname, netnsPath, link.Type(), ErrUnclassifiable)
	}
	peer := link.Attrs().ParentIndex
	if peer == 0 {
		return "", fmt.Errorf("%s in %s: veth without a peer index", ifname, netnsPath)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	host, err := netlink.LinkByIndex(peer)
	if err != nil {
		return "", fmt.Errorf("peer %d of %s in %s: %w", peer, ifname, netnsPath, err)
	}
	return host.Attrs().Name, nil
}
