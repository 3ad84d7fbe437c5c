// SPDX-License-Identifier: Apache-2.0
package kernel

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The root modes the driver may ask for (--root-mode).
const (
	// RootAuto: lockless where the NIC has more than one transmit
	// queue, locked where it has one (a lockless root gains nothing
	// with one queue and loses the classes' children).
	RootAuto = "auto"
	// RootLocked: one qdisc lock, any child qdisc under a class.
	RootLocked = "locked"
	// RootLockless: no lock every sending CPU takes; a class's queue is
	// a FIFO ring and no class takes a child qdisc.
	RootLockless = "lockless"
)

// ParseRootMode checks a root mode; "" is RootAuto.
func ParseRootMode(s string) (string, error) {
	switch s {
	case "", RootAuto:
		return RootAuto, nil
	case RootLocked, RootLockless:
		return s, nil
	}
	return "", fmt.Errorf("root mode %q: auto, locked or lockless", s)
}

// ResolveRootMode says whether a root made in mode on a NIC with
// txQueues transmit queues is lockless.
func ResolveRootMode(mode string, txQueues int) (bool, error) {
	m, err := ParseRootMode(mode)
	if err != nil {
		return false, err
	}
	switch m {
	case RootLocked:
		return false, nil
	case RootLockless:
		return true, nil
	}
	return txQueues > 1, nil
}

// TxQueues counts the NIC's transmit queues under sysfs (/sys): its
// queues/tx-N entries, the real count, not the maximum ethtool reports.
func TxQueues(sysfs, nic string) (int, error) {
	ents, err := os.ReadDir(filepath.Join(sysfs, "class/net", nic, "queues"))
	if err != nil {
		return 0, fmt.Errorf("the transmit queues of %s: %w", nic, err)
	}
	n := 0
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "tx-") {
			n++
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("the transmit queues of %s: none under %s", nic, sysfs)
	}
	return n, nil
}
