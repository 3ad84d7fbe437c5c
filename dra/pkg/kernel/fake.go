// SPDX-License-Identifier: Apache-2.0
package kernel

import (
	"fmt"
	"sync"

	"arbtable.dev/dra/pkg/arbcore"
)

// Fake is a kernel model for tests: each NIC's HIGH table is the module's
// allocator (arbcore.Plan), so what it admits is what sch_arbtable admits.
type Fake struct {
	mu     sync.Mutex
	Params map[string]arbcore.Params // NICs that exist, and their qdisc's parameters
	nics   map[string]*fakeNIC
	Fws    map[string]map[uint32]uint32 // nic -> mark -> classid
	Marks  map[string]uint32            // host interface -> mark
	// Missing are host interfaces that do not exist.
	Missing map[string]bool
	// Calls counts Admit calls that reached the model.
	Calls int
	// Links are the NICs' link states; a NIC of Params not named here is
	// up at its Params' rate and mtu.
	Links map[string]Link
	// ReadErr makes Read of a NIC fail with this error (a module
	// missing, a dump the library cannot parse).
	ReadErr map[string]error
	// NoModule makes EnsureRoot fail as without sch_arbtable.
	NoModule bool
	// Roots counts the roots EnsureRoot made.
	Roots int
	// TxQueues are the NICs' transmit queues; a NIC not named has one.
	TxQueues map[string]int
	// Children are the child qdiscs the classes got: nic -> minor ->
	// kind. A child on a lockless root is refused, as the kernel's
	// graft is.
	Children map[string]map[uint32]string
}

type fakeNIC struct {
	q    Qdisc
	plan *arbcore.Plan
	idx  map[uint32]int // minor -> plan index
}

// NewFake returns a model with these NICs (no arbtable root yet).
func NewFake(params map[string]arbcore.Params) *Fake {
	return &Fake{Params: params, nics: map[string]*fakeNIC{},
		Fws: map[string]map[uint32]uint32{}, Marks: map[string]uint32{}, Missing: map[string]bool{},
		Links: map[string]Link{}, ReadErr: map[string]error{}, TxQueues: map[string]int{},
		Children: map[string]map[uint32]string{}}
}

// MakeLockless puts an admin's lockless root on nic (tc qdisc add ...
// arbtable lockless), which EnsureRoot then leaves as it is.
func (f *Fake) MakeLockless(nic string, handle uint32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.Params[nic]
	if !ok {
		return fmt.Errorf("creating the root on %s: no such device", nic)
	}
	pl, err := arbcore.NewPlan(p)
	if err != nil {
		return err
	}
	f.nics[nic] = &fakeNIC{q: Qdisc{Handle: handle, Params: p, Lockless: true}, plan: pl, idx: map[uint32]int{}}
	return nil
}

// childLocked gives the class its child, as the driver's graft does.
func (f *Fake) childLocked(nic string, n *fakeNIC, classid uint32, child string) error {
	if child == "" {
		return nil
	}
	if n.q.Lockless {
		return fmt.Errorf("%s child of class %x on %s: a lockless arbtable takes no child qdisc; create the root locked", child, classid, nic)
	}
	if f.Children[nic] == nil {
		f.Children[nic] = map[uint32]string{}
	}
	f.Children[nic][classid&0xffff] = child
	return nil
}

// admitChildLocked admits the class and gives it child; a refused child
// releases the class (the Linux view's order).
func (f *Fake) admitChildLocked(nic string, n *fakeNIC, classid uint32, rate uint64, distance, share uint32, child string) (Class, error) {
	c, err := f.admitLocked(n, classid, rate, distance, share)
	if err != nil {
		return Class{}, err
	}
	if err := f.childLocked(nic, n, classid, child); err != nil {
		_ = f.releaseLocked(nic, n, classid)
		return Class{}, err
	}
	return c, nil
}

func (f *Fake) nic(name string) (*fakeNIC, error) {
	n, ok := f.nics[name]
	if !ok {
		return nil, fmt.Errorf("reading %s: %w", name, ErrNoQdisc)
	}
	return n, nil
}

// Read implements Kernel.
func (f *Fake) Read(nic string) (Qdisc, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.ReadErr[nic]; err != nil {
		return Qdisc{}, err
	}
	n, err := f.nic(nic)
	if err != nil {
		return Qdisc{}, err
	}
	q := n.q
	q.Classes = append([]Class(nil), n.q.Classes...)
	q.LinkRate = f.linkLocked(nic).Speed
	return q, nil
}

// EnsureRoot implements Kernel.
func (f *Fake) EnsureRoot(nic string, cfg RootConfig) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n, ok := f.nics[nic]; ok {
		n.q.PathsOpen = false
		return nil
	}
	if f.NoModule {
		return fmt.Errorf("creating the root on %s: unknown qdisc kind arbtable", nic)
	}
	p, ok := f.Params[nic]
	if !ok {
		return fmt.Errorf("creating the root on %s: no such device", nic)
	}
	txq := f.TxQueues[nic]
	if txq == 0 {
		txq = 1
	}
	lockless, err := ResolveRootMode(cfg.Mode, txq)
	if err != nil {
		return err
	}
	pl, err := arbcore.NewPlan(p)
	if err != nil {
		return err
	}
	n := &fakeNIC{q: Qdisc{Handle: cfg.Handle, Params: p, Default: cfg.SystemMinor, Lockless: lockless},
		plan: pl, idx: map[uint32]int{}}
	f.nics[nic] = n
	f.Roots++
	sys := Class{ClassID: cfg.Handle | cfg.SystemMinor}
	child := cfg.Child
	if lockless {
		child = ""
	}
	var aerr error
	if cfg.SystemRate > 0 {
		_, aerr = f.admitChildLocked(nic, n, sys.ClassID, cfg.SystemRate, cfg.SystemDistance, 0, child)
	} else {
		_, aerr = f.admitChildLocked(nic, n, sys.ClassID, 0, arbcore.Slots, cfg.SystemShare, child)
	}
	if aerr != nil {
		delete(f.nics, nic)
		return fmt.Errorf("system class on %s: %w", nic, aerr)
	}
	return nil
}

func (n *fakeNIC) freeIdx() int {
	used := map[int]bool{}
	for _, i := range n.idx {
		used[i] = true
	}
	for i := 0; i < arbcore.MaxClasses; i++ {
		if !used[i] {
			return i
		}
	}
	return -1
}

func (f *Fake) admitLocked(n *fakeNIC, classid uint32, rate uint64, distance uint32, share uint32) (Class, error) {
	f.Calls++
	if _, ok := n.q.Find(classid); ok {
		return Class{}, fmt.Errorf("class %x exists: %w", classid, ErrRefused)
	}
	i := n.freeIdx()
	if i < 0 {
		return Class{}, fmt.Errorf("64 classes: %w", ErrRefused)
	}
	var c arbcore.Cost
	var err error
	if rate > 0 {
		c, err = n.plan.Admit(i, rate, distance)
	} else {
		c, err = n.plan.AdmitShare(i, share, distance)
	}
	if err != nil {
		return Class{}, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	cl := Class{ClassID: n.q.Handle | classid&0xffff, High: c.High,
		Distance: c.Distance, GuaranteedRate: c.UnitsRate, BoundNs: c.BoundNs}
	if c.High {
		cl.HighSlots = int(c.Slots)
	} else {
		cl.LowSlots, cl.Share = int(c.Slots), share
	}
	n.idx[classid&0xffff] = i
	n.q.Classes = append(n.q.Classes, cl)
	return cl, nil
}

// Admit implements Kernel with the module's allocator.
func (f *Fake) Admit(nic string, classid uint32, rate uint64, distance uint32, child string) (Class, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.nic(nic)
	if err != nil {
		return Class{}, err
	}
	return f.admitChildLocked(nic, n, classid, rate, distance, 0, child)
}

// AdmitShare implements Kernel with the module's allocator.
func (f *Fake) AdmitShare(nic string, classid uint32, share uint32, child string) (Class, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.nic(nic)
	if err != nil {
		return Class{}, err
	}
	return f.admitChildLocked(nic, n, classid, 0, arbcore.Slots, share, child)
}

// Release implements Kernel.
func (f *Fake) Release(nic string, classid uint32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.nic(nic)
	if err != nil {
		return nil
	}
	return f.releaseLocked(nic, n, classid)
}

func (f *Fake) releaseLocked(nic string, n *fakeNIC, classid uint32) error {
	i, ok := n.idx[classid&0xffff]
	if !ok {
		return nil
	}
	if err := n.plan.Release(i); err != nil {
		return err
	}
	delete(n.idx, classid&0xffff)
	delete(f.Children[nic], classid&0xffff)
	for k, c := range n.q.Classes {
		if c.ClassID&0xffff == classid&0xffff {
			n.q.Classes = append(n.q.Classes[:k], n.q.Classes[k+1:]...)
			break
		}
	}
	return nil
}

// AddFw implements Kernel.
func (f *Fake) AddFw(nic string, handle uint32, prio uint16, mark, mask, classid uint32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.nic(nic); err != nil {
		return err
	}
	if f.Fws[nic] == nil {
		f.Fws[nic] = map[uint32]uint32{}
	}
	if c, ok := f.Fws[nic][mark]; ok && c != classid {
		return fmt.Errorf("fw filter for mark %#x exists (-> %x)", mark, c)
	}
	f.Fws[nic][mark] = classid
	return nil
}

// DelFw implements Kernel.
func (f *Fake) DelFw(nic string, handle uint32, prio uint16, mark uint32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.Fws[nic], mark)
	return nil
}

// FwFilters implements Kernel.
func (f *Fake) FwFilters(nic string, handle uint32, prio uint16) (map[uint32]uint32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.nic(nic); err != nil {
		return nil, err
	}
	out := map[uint32]uint32{}
	for m, c := range f.Fws[nic] {
		out[m] = c
	}
	return out, nil
}

// Mark implements Kernel.
func (f *Fake) Mark(ifname string, prio uint16, mark, mask uint32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Missing[ifname] {
		return fmt.Errorf("marking %s: no such device", ifname)
	}
	f.Marks[ifname] = mark
	return nil
}

// Unmark implements Kernel.
func (f *Fake) Unmark(ifname string, prio uint16) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.Marks, ifname)
	return nil
}

// FreeSlots returns the model's free HIGH slots on a NIC (the allocator's
// own count).
func (f *Fake) FreeSlots(nic string) int { return f.free(nic, (*arbcore.Plan).FreeSlots) }

// FreeLowSlots returns the model's free LOW slots on nic.
func (f *Fake) FreeLowSlots(nic string) int { return f.free(nic, (*arbcore.Plan).FreeLowSlots) }

func (f *Fake) free(nic string, count func(*arbcore.Plan) int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.nics[nic]
	if !ok {
		return 0
	}
	return count(n.plan)
}

// SetStats sets the counters Read returns for class classid of nic, as
// the kernel's would have counted them.
func (f *Fake) SetStats(nic string, classid uint32, s ClassStats) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.nic(nic)
	if err != nil {
		return err
	}
	for k, c := range n.q.Classes {
		if c.ClassID&0xffff == classid&0xffff {
			n.q.Classes[k].Stats = s
			return nil
		}
	}
	return fmt.Errorf("class %x on %s: no such class", classid, nic)
}

func (f *Fake) linkLocked(nic string) Link {
	if l, ok := f.Links[nic]; ok {
		return l
	}
	p, ok := f.Params[nic]
	if !ok {
		return Link{}
	}
	return Link{Exists: true, Up: true, Speed: p.Rate, MTU: p.MTU}
}

// Link implements Kernel.
func (f *Fake) Link(nic string) (Link, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.linkLocked(nic), nil
}

// SetLink sets a NIC's link state; a new speed is also the capacity of
// a root made from now on (the module reads the link at creation), not
// of the root there is.
func (f *Fake) SetLink(nic string, l Link) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Links[nic] = l
	if p, ok := f.Params[nic]; ok && l.Speed > 0 {
		p.Rate = l.Speed
		f.Params[nic] = p
	}
	// the root's mtu follows the device's (not pinned)
	if n, ok := f.nics[nic]; ok && l.MTU > 0 {
		n.q.Params.MTU = l.MTU
	}
}

// SetBroken sets the count of classes whose guarantee the module reports
// broken on nic (its mtu grew under them).
func (f *Fake) SetBroken(nic string, n uint32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if q, ok := f.nics[nic]; ok {
		q.q.Broken = n
	}
}

// DeleteRoot implements Kernel; it is also an admin's `tc qdisc del` or
// `tc qdisc replace` by another qdisc: the classes and the root's
// filters go with it.
func (f *Fake) DeleteRoot(nic string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n, ok := f.nics[nic]; ok {
		n.plan.Close()
	}
	delete(f.nics, nic)
	delete(f.Fws, nic)
	delete(f.Children, nic)
	return nil
}

// DeleteClass is an admin's `tc class del`: the class goes, the fw
// filter pointing at it stays (unbound), as in Linux.
func (f *Fake) DeleteClass(nic string, classid uint32) error {
	return f.Release(nic, classid)
}

// Root returns the capacity the model's root on nic admits against, 0
// when it has none.
func (f *Fake) Root(nic string) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n, ok := f.nics[nic]; ok {
		return n.q.Params.Rate
	}
	return 0
}

// OpenPaths is an admin's `tc qdisc change ... prioclassid
// classifyforeign` on nic's root.
func (f *Fake) OpenPaths(nic string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n, ok := f.nics[nic]; ok {
		n.q.PathsOpen = true
	}
}
