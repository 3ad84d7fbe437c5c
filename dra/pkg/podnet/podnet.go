// SPDX-License-Identifier: Apache-2.0

// Package podnet finds a pod's host-side interface: the peer, in the host
// namespace, of the pod network namespace's eth0.
package podnet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
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

// HostInterface reads the pod's interface and returns the name of its veth
// peer in the driver's (the host's) namespace. It never enters the pod's
// namespace: setns(CLONE_NEWNET) needs CAP_SYS_ADMIN, while a netlink
// request aimed at the namespace by its id (IFLA_TARGET_NETNSID) needs
// only CAP_NET_ADMIN over it, which the driver holds anyway.
func (l Linux) HostInterface(netnsPath string) (string, error) {
	if netnsPath == "" {
		return "", errors.New("the sandbox has no network namespace (host network?)")
	}
	ifname := l.Ifname
	if ifname == "" {
		ifname = "eth0"
	}
	f, err := os.Open(netnsPath)
	if err != nil {
		return "", fmt.Errorf("network namespace %s: %w", netnsPath, err)
	}
	defer f.Close()
	nsid, err := netnsID(int(f.Fd()))
	if err != nil {
		return "", fmt.Errorf("network namespace %s: its id: %w", netnsPath, err)
	}
	link, err := linkAt(nsid, ifname)
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
	host, err := netlink.LinkByIndex(peer)
	if err != nil {
		return "", fmt.Errorf("peer %d of %s in %s: %w", peer, ifname, netnsPath, err)
	}
	// the index is the peer's only if the peer lives here: the host link
	// must be a veth whose own peer is this interface in that namespace
	if host.Type() != "veth" || host.Attrs().NetNsID != nsid || host.Attrs().ParentIndex != link.Attrs().Index {
		return "", fmt.Errorf("%s in %s: its peer %d is not in this network namespace", ifname, netnsPath, peer)
	}
	return host.Attrs().Name, nil
}

// netnsID is the id this namespace knows the namespace open at fd by,
// assigned if it has none yet (RTM_NEWNSID, CAP_NET_ADMIN here).
func netnsID(fd int) (int, error) {
	id, err := netlink.GetNetNsIdByFd(fd)
	if err != nil || id >= 0 {
		return id, err
	}
	// -1: the kernel picks the id; EEXIST: a concurrent caller did
	if err := netlink.SetNetNsIdByFd(fd, -1); err != nil && !errors.Is(err, unix.EEXIST) {
		return -1, err
	}
	id, err = netlink.GetNetNsIdByFd(fd)
	if err == nil && id < 0 {
		err = errors.New("no id assigned")
	}
	return id, err
}

// linkAt is RTM_GETLINK of ifname in the namespace with id nsid, as seen
// from here (IFLA_TARGET_NETNSID, Linux 4.20).
func linkAt(nsid int, ifname string) (netlink.Link, error) {
	req := nl.NewNetlinkRequest(unix.RTM_GETLINK, unix.NLM_F_ACK)
	req.AddData(nl.NewIfInfomsg(unix.AF_UNSPEC))
	id := make([]byte, 4)
	binary.NativeEndian.PutUint32(id, uint32(int32(nsid)))
	req.AddData(nl.NewRtAttr(unix.IFLA_TARGET_NETNSID, id))
	req.AddData(nl.NewRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated(ifname)))
	msgs, err := req.Execute(unix.NETLINK_ROUTE, unix.RTM_NEWLINK)
	if err != nil {
		return nil, err
	}
	if len(msgs) != 1 {
		return nil, fmt.Errorf("%d links in the answer", len(msgs))
	}
	return netlink.LinkDeserialize(nil, msgs[0])
}
