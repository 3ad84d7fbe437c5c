// SPDX-License-Identifier: Apache-2.0
package kernel

/*
#cgo CFLAGS: -I${SRCDIR}/../../../lib/include
#cgo LDFLAGS: -L${SRCDIR}/../../../build/lib -Wl,-rpath,${SRCDIR}/../../../build/lib -larbtable
#include <stdlib.h>
#include <arbtable/arbtable.h>
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"arbtable.dev/dra/pkg/arbcore"
)

// Linux is the kernel through libarbtable (classes, the root) and
// rtnetlink (filters, child qdiscs). Calls are serialized: a libarbtable
// handle is not thread safe.
type Linux struct {
	mu sync.Mutex
	h  *C.struct_arbtable
}

// OpenLinux opens a libarbtable handle.
func OpenLinux() (*Linux, error) {
	h, err := C.arbtable_open()
	if h == nil {
		return nil, fmt.Errorf("arbtable_open: %w", err)
	}
	return &Linux{h: h}, nil
}

// Close closes the handle.
func (l *Linux) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.h != nil {
		C.arbtable_close(l.h)
		l.h = nil
	}
}

func (l *Linux) err(rc C.int, what string) error {
	e := syscall.Errno(-rc)
	msg := C.GoString(C.arbtable_errmsg(l.h))
	if e == syscall.EMEDIUMTYPE {
		return fmt.Errorf("%s: %s: %w", what, msg, ErrNoQdisc)
	}
	if C.arbtable_err_from_kernel(l.h) != 0 {
		return fmt.Errorf("%s: %s: %w (%w)", what, msg, ErrRefused, e)
	}
	return fmt.Errorf("%s: %s: %w", what, msg, e)
}

// Read implements Kernel.
func (l *Linux) Read(nic string) (Qdisc, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cn := C.CString(nic)
	defer C.free(unsafe.Pointer(cn))
	st := C.arbtable_state_new()
	if st == nil {
		return Qdisc{}, errors.New("arbtable_state_new: out of memory")
	}
	defer C.arbtable_state_free(st)
	if rc := C.arbtable_read(l.h, cn, st); rc < 0 {
		return Qdisc{}, l.err(rc, "reading the arbtable root of "+nic)
	}
	var qi C.struct_arbtable_qdisc_info
	var qo C.struct_arbtable_qdisc_opts
	if rc := C.arbtable_state_qdisc(st, &qi, C.size_t(unsafe.Sizeof(qi))); rc < 0 {
		return Qdisc{}, fmt.Errorf("qdisc record of %s: %w", nic, syscall.Errno(-rc))
	}
	if rc := C.arbtable_state_qdisc_opts(st, &qo, C.size_t(unsafe.Sizeof(qo))); rc < 0 {
		return Qdisc{}, fmt.Errorf("qdisc options of %s: %w", nic, syscall.Errno(-rc))
	}
	q := Qdisc{
		Handle:    uint32(qi.handle),
		Default:   uint32(qo.default_minor),
		PathsOpen: qo.prio_classid != 0 || qo.classify_foreign != 0,
		Lockless:  qo.lockless != 0,
		Params: arbcore.Params{
			Rate:      uint64(qo.rate),
			MTU:       uint32(qo.mtu),
			MaxWeight: uint32(qo.maxweight),
			HighLimit: uint32(qo.highlimit),
		},
	}
	// the capacity admissions are made against: the link's speed read
	// when the rate was set, not the speed now (qi.link_rate), which
	// the module records but never applies while classes are admitted
	if qi.xstats_fields&C.ARBTABLE_QX_CAPACITY != 0 && qi.capacity != 0 {
		q.Params.Rate = uint64(qi.capacity)
	}
	if qi.xstats_fields&C.ARBTABLE_QX_LINK_RATE != 0 {
		q.LinkRate = uint64(qi.link_rate)
	}
	if q.Params.Rate == 0 {
		// a module that reports no capacity (before xstats had it)
		q.Params.Rate = uint64(qi.link_rate)
	}
	if qi.xstats_fields&C.ARBTABLE_QX_BROKEN != 0 {
		q.Broken = uint32(qi.broken)
	}
	for i := 0; i < int(qi.nclasses); i++ {
		var ci C.struct_arbtable_class_info
		var co C.struct_arbtable_class_opts
		if rc := C.arbtable_state_class(st, C.uint(i), &ci, C.size_t(unsafe.Sizeof(ci))); rc < 0 {
			return Qdisc{}, fmt.Errorf("class %d of %s: %w", i, nic, syscall.Errno(-rc))
		}
		if rc := C.arbtable_state_class_opts(st, C.uint(i), &co, C.size_t(unsafe.Sizeof(co))); rc < 0 {
			return Qdisc{}, fmt.Errorf("class %d options of %s: %w", i, nic, syscall.Errno(-rc))
		}
		if co.strict != 0 {
			q.Params.StrictCeil = uint64(co.ceil)
			q.Params.StrictCburst = uint32(co.cburst)
		}
		hs := bits.OnesCount64(uint64(ci.slots[C.ARBTABLE_HIGH]))
		ls := bits.OnesCount64(uint64(ci.slots[C.ARBTABLE_LOW]))
		var share uint32
		if ls > 0 {
			share = uint32(co.share)
		}
		q.Classes = append(q.Classes, Class{
			ClassID:        uint32(ci.classid),
			High:           hs > 0,
			HighSlots:      hs,
			LowSlots:       ls,
			Share:          share,
			Distance:       uint32(ci.distance),
			GuaranteedRate: uint64(ci.guaranteed_rate),
			BoundNs:        uint64(ci.guaranteed_bound_ns),
			Stats: ClassStats{Bytes: uint64(ci.stats.bytes), Packets: uint64(ci.stats.packets),
				Drops: uint64(ci.stats.drops), ReservedRate: uint64(ci.reserved_rate),
				MaxHolNs: uint64(ci.max_hol_ns)},
		})
	}
	return q, nil
}

func (l *Linux) admitLocked(nic string, classid uint32, o *C.struct_arbtable_class_opts) error {
	cn := C.CString(nic)
	defer C.free(unsafe.Pointer(cn))
	if rc := C.arbtable_admit(l.h, cn, C.uint32_t(classid), o, C.size_t(unsafe.Sizeof(*o))); rc < 0 {
		return l.err(rc, fmt.Sprintf("admitting class %x:%x on %s", classid>>16, classid&0xffff, nic))
	}
	return nil
}

// Tenants stay in their class: a pod's own skb->priority never names a
// class, and packets not routed in the host's netns (a pod's macvlan or
// ipvlan L2, where SO_MARK survives) are not classified by mark; marks set
// on the host-side veth, where the crossing cleared the pod's, still are.
const closedPaths = C.ARBTABLE_Q_PRIO_CLASSID | C.ARBTABLE_Q_CLASSIFY_FOREIGN

// EnsureRoot implements Kernel.
func (l *Linux) EnsureRoot(nic string, cfg RootConfig) error {
	if _, err := l.Read(nic); err == nil {
		return l.closePaths(nic)
	} else if !errors.Is(err, ErrNoQdisc) {
		return err
	}
	txq, err := TxQueues("/sys", nic)
	if err != nil {
		return err
	}
	lockless, err := ResolveRootMode(cfg.Mode, txq)
	if err != nil {
		return err
	}
	if err := dropForeignRoot(nic); err != nil {
		return err
	}
	l.mu.Lock()
	cn := C.CString(nic)
	defer C.free(unsafe.Pointer(cn))
	qo := C.struct_arbtable_qdisc_opts{
		set:           C.ARBTABLE_Q_MODE | C.ARBTABLE_Q_DEFAULT | closedPaths,
		mode:          C.ARBTABLE_MODE_AUTO,
		default_minor: C.uint32_t(cfg.SystemMinor),
	}
	if lockless {
		// locked is the kernel's default: an older module, which has
		// no such attribute, still takes the locked create
		qo.set |= C.ARBTABLE_Q_LOCKLESS
		qo.lockless = 1
	}
	if r := cfg.Rates[nic]; r > 0 {
		qo.set |= C.ARBTABLE_Q_RATE
		qo.rate = C.uint64_t(r)
	}
	if rc := C.arbtable_qdisc_create(l.h, cn, C.uint32_t(cfg.Handle), &qo, C.size_t(unsafe.Sizeof(qo))); rc < 0 {
		l.mu.Unlock()
		return l.err(rc, "creating the arbtable root of "+nic)
	}
	o := C.struct_arbtable_class_opts{set: C.ARBTABLE_C_SHARE, share: C.uint32_t(cfg.SystemShare)}
	if cfg.SystemRate > 0 {
		o = C.struct_arbtable_class_opts{set: C.ARBTABLE_C_RATE | C.ARBTABLE_C_DISTANCE,
			rate: C.uint64_t(cfg.SystemRate), distance: C.uint32_t(cfg.SystemDistance)}
	}
	classid := cfg.Handle | cfg.SystemMinor
	err = l.admitLocked(nic, classid, &o)
	if err != nil {
		C.arbtable_qdisc_delete(l.h, cn)
	}
	l.mu.Unlock()
	if err != nil {
		return fmt.Errorf("system class on %s: %w", nic, err)
	}
	if lockless {
		return nil
	}
	return setChild(nic, classid, cfg.Child)
}

// dropForeignRoot deletes the root qdisc of another kind an
// administrator put on nic (tc qdisc replace ... root fq), which a create
// cannot override: the NIC is the driver's (--nics), and its claims'
// classes are made again on the new root. A default root (handle 0: mq,
// pfifo_fast, noqueue) is replaced by the create itself.
func dropForeignRoot(nic string) error {
	link, err := netlink.LinkByName(nic)
	if err != nil {
		return fmt.Errorf("the root of %s: %w", nic, err)
	}
	qs, err := netlink.QdiscList(link)
	if err != nil {
		return fmt.Errorf("the qdiscs of %s: %w", nic, err)
	}
	for _, q := range qs {
		a := q.Attrs()
		if a.Parent != netlink.HANDLE_ROOT || a.Handle == 0 {
			continue
		}
		if err := netlink.QdiscDel(q); err != nil {
			return fmt.Errorf("deleting the %s root of %s: %w", q.Type(), nic, err)
		}
	}
	return nil
}

// closePaths closes both paths on a root already there (made by an older
// driver or by hand); a change of these two options only.
func (l *Linux) closePaths(nic string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	cn := C.CString(nic)
	defer C.free(unsafe.Pointer(cn))
	qo := C.struct_arbtable_qdisc_opts{set: closedPaths}
	if rc := C.arbtable_qdisc_change(l.h, cn, &qo, C.size_t(unsafe.Sizeof(qo))); rc < 0 {
		return l.err(rc, "closing skb->priority and foreign classification on "+nic)
	}
	return nil
}

// setChild gives a class a child qdisc (fq_codel, fq, pfifo).
func setChild(nic string, classid uint32, kind string) error {
	if kind == "" {
		return nil
	}
	link, err := netlink.LinkByName(nic)
	if err != nil {
		return fmt.Errorf("child of %x on %s: %w", classid, nic, err)
	}
	attrs := netlink.QdiscAttrs{LinkIndex: link.Attrs().Index, Parent: classid,
		Handle: netlink.MakeHandle(uint16(0x8000+classid&0x7fff), 0)}
	var q netlink.Qdisc
	switch kind {
	case "fq_codel":
		q = netlink.NewFqCodel(attrs)
	case "fq":
		q = netlink.NewFq(attrs)
	case "pfifo":
		q = &netlink.GenericQdisc{QdiscAttrs: attrs, QdiscType: "pfifo"}
	default:
		return fmt.Errorf("child qdisc %q: fq_codel, fq or pfifo", kind)
	}
	if err := netlink.QdiscReplace(q); err != nil {
		return fmt.Errorf("%s child of class %x on %s: %w", kind, classid, nic, err)
	}
	return nil
}

// Admit implements Kernel.
func (l *Linux) Admit(nic string, classid uint32, rate uint64, distance uint32, child string) (Class, error) {
	o := C.struct_arbtable_class_opts{set: C.ARBTABLE_C_RATE | C.ARBTABLE_C_DISTANCE,
		rate: C.uint64_t(rate), distance: C.uint32_t(distance)}
	return l.admitChild(nic, classid, &o, child)
}

// AdmitShare implements Kernel.
func (l *Linux) AdmitShare(nic string, classid uint32, share uint32, child string) (Class, error) {
	o := C.struct_arbtable_class_opts{set: C.ARBTABLE_C_SHARE | C.ARBTABLE_C_DISTANCE,
		share: C.uint32_t(share), distance: C.uint32_t(arbcore.Slots)}
	return l.admitChild(nic, classid, &o, child)
}

// admitChild admits the class, reads it back and gives it its child,
// none on a lockless root (an admin's too), which refuses every graft.
func (l *Linux) admitChild(nic string, classid uint32, o *C.struct_arbtable_class_opts, child string) (Class, error) {
	l.mu.Lock()
	err := l.admitLocked(nic, classid, o)
	l.mu.Unlock()
	if err != nil {
		return Class{}, err
	}
	q, err := l.Read(nic)
	if err != nil {
		return Class{}, err
	}
	c, ok := q.Find(classid)
	if !ok {
		return Class{}, fmt.Errorf("class %x on %s vanished after its admission", classid, nic)
	}
	if q.Lockless {
		return c, nil
	}
	if err := setChild(nic, q.Handle|classid&0xffff, child); err != nil {
		_ = l.Release(nic, classid)
		return Class{}, err
	}
	return c, nil
}

// Release implements Kernel.
func (l *Linux) Release(nic string, classid uint32) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	cn := C.CString(nic)
	defer C.free(unsafe.Pointer(cn))
	rc := C.arbtable_release(l.h, cn, C.uint32_t(classid))
	if rc < 0 {
		e := syscall.Errno(-rc)
		if e == syscall.ENOENT || e == syscall.ENODEV || e == syscall.EMEDIUMTYPE {
			return nil
		}
		return l.err(rc, fmt.Sprintf("releasing class %x on %s", classid, nic))
	}
	return nil
}

func linkIndex(name string) (int, error) {
	link, err := netlink.LinkByName(name)
	if err != nil {
		return 0, fmt.Errorf("interface %s: %w", name, err)
	}
	return link.Attrs().Index, nil
}

// AddFw implements Kernel.
func (l *Linux) AddFw(nic string, handle uint32, prio uint16, mark, mask, classid uint32) error {
	idx, err := linkIndex(nic)
	if err != nil {
		return err
	}
	f := &netlink.FwFilter{
		FilterAttrs: netlink.FilterAttrs{LinkIndex: idx, Parent: handle, Handle: mark,
			Priority: prio, Protocol: unix.ETH_P_ALL},
		ClassId: classid, Mask: mask,
	}
	if err := netlink.FilterReplace(f); err != nil {
		return fmt.Errorf("fw filter %#x/%#x -> %x on %s: %w", mark, mask, classid, nic, err)
	}
	return nil
}

// DelFw implements Kernel.
func (l *Linux) DelFw(nic string, handle uint32, prio uint16, mark uint32) error {
	idx, err := linkIndex(nic)
	if err != nil {
		return nil
	}
	f := &netlink.FwFilter{FilterAttrs: netlink.FilterAttrs{LinkIndex: idx, Parent: handle,
		Handle: mark, Priority: prio, Protocol: unix.ETH_P_ALL}}
	if err := netlink.FilterDel(f); err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("deleting fw filter %#x on %s: %w", mark, nic, err)
	}
	return nil
}

// FwFilters implements Kernel: a filter dump of the root (the fw
// classifier's own entry, handle 0, is not a filter).
func (l *Linux) FwFilters(nic string, handle uint32, prio uint16) (map[uint32]uint32, error) {
	link, err := netlink.LinkByName(nic)
	if err != nil {
		return nil, fmt.Errorf("interface %s: %w", nic, err)
	}
	fs, err := netlink.FilterList(link, handle)
	if err != nil {
		return nil, fmt.Errorf("listing the filters of %s: %w", nic, err)
	}
	out := map[uint32]uint32{}
	for _, f := range fs {
		if fw, ok := f.(*netlink.FwFilter); ok && fw.Priority == prio && fw.Handle != 0 {
			out[fw.Handle] = fw.ClassId
		}
	}
	return out, nil
}

// Mark implements Kernel: a clsact on the host-side interface (kept when
// it exists) and a matchall filter at prio on its ingress that sets the
// mark under mask (skbedit), where neither forwarding nor masquerade
// undo it.
func (l *Linux) Mark(ifname string, prio uint16, mark, mask uint32) error {
	idx, err := linkIndex(ifname)
	if err != nil {
		return err
	}
	cl := &netlink.GenericQdisc{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: idx,
		Parent: netlink.HANDLE_CLSACT, Handle: netlink.MakeHandle(0xffff, 0)}, QdiscType: "clsact"}
	if err := netlink.QdiscAdd(cl); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("clsact on %s: %w", ifname, err)
	}
	m, k := mark, mask
	f := &netlink.MatchAll{
		FilterAttrs: netlink.FilterAttrs{LinkIndex: idx, Parent: netlink.HANDLE_MIN_INGRESS,
			Priority: prio, Protocol: unix.ETH_P_ALL},
		Actions: []netlink.Action{&netlink.SkbEditAction{
			ActionAttrs: netlink.ActionAttrs{Action: netlink.TC_ACT_PIPE}, Mark: &m, Mask: &k}},
	}
	err = netlink.FilterAdd(f)
	if errors.Is(err, unix.EEXIST) {
		// matchall keeps one filter per prio and refuses to replace it
		// (EEXIST, with or without its handle): a pod marked again (after
		// a lost checkpoint, or with a new mark) has its old filter
		// deleted first; its packets in between go to the system class
		if derr := netlink.FilterDel(&netlink.MatchAll{FilterAttrs: netlink.FilterAttrs{LinkIndex: idx,
			Parent: netlink.HANDLE_MIN_INGRESS, Priority: prio, Protocol: unix.ETH_P_ALL}}); derr != nil {
			return fmt.Errorf("mark filter on %s: replacing the one at prio %d: %w", ifname, prio, derr)
		}
		err = netlink.FilterAdd(f)
	}
	if err != nil {
		return fmt.Errorf("mark filter on %s: %w", ifname, err)
	}
	return nil
}

// Unmark implements Kernel.
func (l *Linux) Unmark(ifname string, prio uint16) error {
	idx, err := linkIndex(ifname)
	if err != nil {
		return nil
	}
	f := &netlink.MatchAll{FilterAttrs: netlink.FilterAttrs{LinkIndex: idx,
		Parent: netlink.HANDLE_MIN_INGRESS, Priority: prio, Protocol: unix.ETH_P_ALL}}
	if err := netlink.FilterDel(f); err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("deleting the mark filter on %s: %w", ifname, err)
	}
	return nil
}

// Link implements Kernel: the operational state and mtu from rtnetlink,
// the speed from sysfs (ethtool's, -1 or an error when down or unknown).
func (l *Linux) Link(nic string) (Link, error) {
	link, err := netlink.LinkByName(nic)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) || errors.Is(err, unix.ENODEV) {
			return Link{}, nil
		}
		return Link{}, fmt.Errorf("interface %s: %w", nic, err)
	}
	a := link.Attrs()
	out := Link{Exists: true, MTU: uint32(a.MTU),
		Up: a.OperState == netlink.OperUp || a.OperState == netlink.OperUnknown && a.Flags&net.FlagUp != 0}
	if b, err := os.ReadFile("/sys/class/net/" + nic + "/speed"); err == nil {
		if mbit, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && mbit > 0 {
			out.Speed = uint64(mbit) * 1000 * 1000 / 8
		}
	}
	return out, nil
}

// DeleteRoot implements Kernel.
func (l *Linux) DeleteRoot(nic string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	cn := C.CString(nic)
	defer C.free(unsafe.Pointer(cn))
	if rc := C.arbtable_qdisc_delete(l.h, cn); rc < 0 {
		e := syscall.Errno(-rc)
		if e == syscall.ENOENT || e == syscall.EMEDIUMTYPE {
			return nil
		}
		return l.err(rc, "deleting the arbtable root of "+nic)
	}
	return nil
}

// WatchLinks calls fn at every rtnetlink link event of one of nics (down,
// up, speed, mtu, a rename away from or to the name) until ctx ends; the
// events of other interfaces (pods' veths) are ignored.
func WatchLinks(ctx context.Context, nics []string, fn func()) error {
	ch := make(chan netlink.LinkUpdate, 64)
	if err := netlink.LinkSubscribe(ch, ctx.Done()); err != nil {
		return fmt.Errorf("subscribing to link events: %w", err)
	}
	idx := map[int32]bool{}
	for _, n := range nics {
		if i, err := linkIndex(n); err == nil {
			idx[int32(i)] = true
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case u, ok := <-ch:
			if !ok {
				return errors.New("link events: the subscription ended")
			}
			name := u.Attrs().Name
			if idx[u.Index] || slices.Contains(nics, name) {
				if slices.Contains(nics, name) {
					idx[u.Index] = true
				}
				fn()
			}
		}
	}
}
