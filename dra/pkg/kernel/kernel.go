// SPDX-License-Identifier: Apache-2.0

// Package kernel is what arbtable-dra asks of the kernel, behind a small
// interface: the arbtable root of a NIC, its classes, the fw filters that
// send a mark to a class, and the mark set on a pod's host-side interface.
// Linux implements it with libarbtable and rtnetlink; Fake is a model for
// tests whose admissions are the module's allocator (arbcore.Plan).
package kernel

import (
	"errors"

	"arbtable.dev/dra/pkg/arbcore"
)

// ErrNoQdisc means the NIC has no arbtable root.
var ErrNoQdisc = errors.New("no arbtable qdisc")

// ErrRefused wraps the kernel's refusal of an admission.
var ErrRefused = errors.New("refused by the kernel")

// Class is one class of an arbtable root.
type Class struct {
	ClassID        uint32
	High           bool   // holds HIGH slots
	HighSlots      int    // HIGH slots it holds
	LowSlots       int    // LOW slots it holds (a share class)
	Share          uint32 // LOW-table weight, 0 when not a share class
	Distance       uint32 // effective distance, 0 when not auto
	GuaranteedRate uint64 // bytes/s
	BoundNs        uint64 // guaranteed bound, placement independent
	Stats          ClassStats
}

// ClassStats are a class's counters and measurements as Read saw them
// (zero in what Admit returns); pkg/metrics exports them.
type ClassStats struct {
	Bytes        uint64 // sent
	Packets      uint64
	Drops        uint64
	ReservedRate uint64 // bytes/s the kernel reserved (auto mode)
	MaxHolNs     uint64 // measured max head-of-line wait
}

// Qdisc is a NIC's arbtable root as read. Params.Rate is the capacity the
// kernel admits against, fixed while classes hold reservations; LinkRate
// is the link speed the module last read, which may differ after a speed
// change.
type Qdisc struct {
	Handle   uint32
	Params   arbcore.Params
	Default  uint32 // default class minor
	Classes  []Class
	LinkRate uint64 // bytes/s, 0 unknown
	Broken   uint32 // classes whose guarantee no longer holds (the mtu grew)
	// PathsOpen: skb->priority or foreign packets' marks may select a
	// class (prioclassid or classifyforeign: reopened by hand, an old
	// module's root); EnsureRoot closes both
	PathsOpen bool
	// Lockless: the root is in the lockless mode, whoever made it; its
	// classes take no child qdisc (the kernel refuses the graft)
	Lockless bool
}

// Link is a NIC's state: Exists false when no interface has the name (a
// rename, a removed device).
type Link struct {
	Exists bool
	Up     bool   // operationally up, carrier present
	Speed  uint64 // bytes/s, 0 unknown (down, virtual)
	MTU    uint32
}

// FreeSlots returns the HIGH slots no class holds.
func (q Qdisc) FreeSlots() int {
	used := 0
	for _, c := range q.Classes {
		used += c.HighSlots
	}
	return arbcore.Slots - used
}

// FreeLowSlots returns the LOW slots no class holds.
func (q Qdisc) FreeLowSlots() int {
	used := 0
	for _, c := range q.Classes {
		used += c.LowSlots
	}
	return arbcore.Slots - used
}

// Find returns the class with classid's minor.
func (q Qdisc) Find(classid uint32) (Class, bool) {
	for _, c := range q.Classes {
		if c.ClassID&0xffff == classid&0xffff {
			return c, true
		}
	}
	return Class{}, false
}

// RootConfig is the root the driver ensures on a NIC that has none: an
// auto-mode arbtable whose default class (the system class) carries the
// node's own traffic and every pod without a claim.
type RootConfig struct {
	Handle      uint32 // e.g. 1:0
	SystemMinor uint32
	// SystemRate reserves HIGH bandwidth for the system class, bytes/s at
	// distance SystemDistance; 0 makes it a LOW-table class of SystemShare.
	SystemRate     uint64
	SystemDistance uint32
	SystemShare    uint32
	Child          string // child qdisc of classes: fq_codel, fq, pfifo, "" = kernel default
	// Mode is the root's mode (RootAuto, RootLocked, RootLockless; ""
	// is RootAuto): auto makes a lockless root on a NIC with more than
	// one transmit queue. On a lockless root no class gets Child.
	Mode string
	// Rates are the capacities, bytes/s, of the roots made on the NICs
	// named here (for NICs whose speed reads unknown, virtual or virtio);
	// a NIC not named gets its link speed.
	Rates map[string]uint64
}

// Kernel is the driver's view of the kernel.
type Kernel interface {
	// Read returns the NIC's arbtable root; ErrNoQdisc when it has none.
	Read(nic string) (Qdisc, error)
	// EnsureRoot creates the root with its system class when the NIC has
	// no arbtable root, in cfg.Mode resolved by the NIC's transmit
	// queues; an existing root is left as it is, its mode too.
	EnsureRoot(nic string, cfg RootConfig) error
	// Admit admits class classid at rate bytes/s and distance (HIGH),
	// with child as its child qdisc ("": none); the caller passes "" on a
	// lockless root, which refuses every child.
	Admit(nic string, classid uint32, rate uint64, distance uint32, child string) (Class, error)
	// AdmitShare admits class classid as a LOW-table class of weight
	// share on one slot (distance 64).
	AdmitShare(nic string, classid uint32, share uint32, child string) (Class, error)
	// Release deletes the class; nil when it does not exist.
	Release(nic string, classid uint32) error
	// AddFw sends packets whose mark&mask is mark to classid.
	AddFw(nic string, handle uint32, prio uint16, mark, mask, classid uint32) error
	// DelFw deletes that filter; nil when it does not exist.
	DelFw(nic string, handle uint32, prio uint16, mark uint32) error
	// FwFilters returns the fw filters at prio on the root handle, mark
	// to classid (an admin may delete one and leave its class).
	FwFilters(nic string, handle uint32, prio uint16) (map[uint32]uint32, error)
	// Mark sets mark under mask on packets entering the host from
	// ifname (the pod's host-side interface).
	Mark(ifname string, prio uint16, mark, mask uint32) error
	// Unmark removes it; nil when the interface or the filter is gone.
	Unmark(ifname string, prio uint16) error
	// Link returns the NIC's link state.
	Link(nic string) (Link, error)
	// DeleteRoot deletes the NIC's arbtable root, its classes and
	// filters; nil when it has none.
	DeleteRoot(nic string) error
}
