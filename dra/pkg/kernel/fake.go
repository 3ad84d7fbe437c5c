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
}

type fakeNIC struct {
	q    Qdisc
	plan *arbcore.Plan
	idx  map[uint32]int // minor -> plan index
}

// NewFake returns a model with these NICs (no arbtable root yet).
func NewFake(params map[string]arbcore.Params) *Fake {
	return &Fake{Params: params, nics: map[string]*fakeNIC{},
		Fws: map[string]map[uint32]uint32{}, Marks: map[string]uint32{}, Missing: map[string]bool{}}
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
	n, err := f.nic(nic)
	if err != nil {
		return Qdisc{}, err
	}
	q := n.q
	q.Classes = append([]Class(nil), n.q.Classes...)
	return q, nil
}

// EnsureRoot implements Kernel.
func (f *Fake) EnsureRoot(nic string, cfg RootConfig) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.nics[nic]; ok {
		return nil
	}
	p, ok := f.Params[nic]
	if !ok {
		return fmt.Errorf("creating the root on %s: no such device", nic)
	}
	pl, err := arbcore.NewPlan(p)
	if err != nil {
		return err
	}
	n := &fakeNIC{q: Qdisc{Handle: cfg.Handle, Params: p, Default: cfg.SystemMinor}, plan: pl, idx: map[uint32]int{}}
	f.nics[nic] = n
	sys := Class{ClassID: cfg.Handle | cfg.SystemMinor}
	if cfg.SystemRate > 0 {
		c, err := f.admitLocked(n, sys.ClassID, cfg.SystemRate, cfg.SystemDistance, 0)
		if err != nil {
			delete(f.nics, nic)
			return fmt.Errorf("system class on %s: %w", nic, err)
		}
		_ = c
		return nil
	}
	if _, err := f.admitLocked(n, sys.ClassID, 0, arbcore.Slots, cfg.SystemShare); err != nil {
		delete(f.nics, nic)
		return fmt.Errorf("system class on %s: %w", nic, err)
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
	return f.admitLocked(n, classid, rate, distance, 0)
}

// AdmitShare implements Kernel with the module's allocator.
func (f *Fake) AdmitShare(nic string, classid uint32, share uint32, child string) (Class, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.nic(nic)
	if err != nil {
		return Class{}, err
	}
	return f.admitLocked(n, classid, 0, arbcore.Slots, share)
}

// Release implements Kernel.
func (f *Fake) Release(nic string, classid uint32) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.nic(nic)
	if err != nil {
		return nil
	}
	i, ok := n.idx[classid&0xffff]
	if !ok {
		return nil
	}
	if err := n.plan.Release(i); err != nil {
		return err
	}
	delete(n.idx, classid&0xffff)
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
