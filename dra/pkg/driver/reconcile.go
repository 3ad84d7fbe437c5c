// SPDX-License-Identifier: Apache-2.0
package driver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/klog/v2"

	"arbtable.dev/dra/pkg/arbcore"
	"arbtable.dev/dra/pkg/checkpoint"
	"arbtable.dev/dra/pkg/kernel"
	drslices "arbtable.dev/dra/pkg/slices"
)

// reconcileState is what the reconcile loop keeps between its passes.
type reconcileState struct {
	once    sync.Once
	trigger chan struct{}
	taints  map[string][]resourceapi.DeviceTaint // by NIC, from the last pass
	// remadeAt is the link speed each NIC's root was last made again
	// for: a root that comes back at another capacity is not remade at
	// every pass for the same speed (each remake drops what is queued)
	remadeAt map[string]uint64
}

func (d *Driver) triggerCh() chan struct{} {
	d.rc.once.Do(func() { d.rc.trigger = make(chan struct{}, 1) })
	return d.rc.trigger
}

// Trigger asks the loop for a pass now (a link event, a class found gone);
// it never blocks, and triggers before a pass starts fold into one.
func (d *Driver) Trigger() {
	select {
	case d.triggerCh() <- struct{}{}:
	default:
	}
}

// Run reconciles at every tick and at every Trigger until ctx ends.
func (d *Driver) Run(ctx context.Context, tick <-chan time.Time) {
	logger := klog.FromContext(ctx)
	tr := d.triggerCh()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		case <-tr:
		}
		if err := d.Reconcile(ctx); err != nil {
			logger.Error(err, "reconciling the NICs")
		}
	}
}

// Reconcile brings each NIC's root in line with the records and the link,
// then publishes: a root gone or replaced is made again and the recorded
// classes re-admitted (class, fw filter, the pods' marks); a class gone
// is re-admitted; a link speed that is not the kernel's capacity makes
// the root again at the new speed when every admitted class fits it. What
// cannot be served is tainted NoSchedule (link down, NIC missing, root
// unreadable, classes that no longer fit, guarantees the module reports
// broken); the other NICs are published as they are. The capacity
// published is the one the kernel admits against (the root's, read back).
func (d *Driver) Reconcile(ctx context.Context) error {
	d.mu.Lock()
	var errs []error
	taints := map[string][]resourceapi.DeviceTaint{}
	changed := false
	for _, nic := range d.cfg.NICs {
		t, ch, err := d.reconcileNICLocked(ctx, nic)
		if len(t) > 0 {
			taints[nic] = t
		}
		changed = changed || ch
		if err != nil {
			errs = append(errs, fmt.Errorf("NIC %s: %w", nic, err))
		}
	}
	d.rc.taints = taints
	if changed {
		if err := d.saveLocked(); err != nil {
			errs = append(errs, err)
		}
	}
	d.mu.Unlock()
	err := d.Publish(ctx)
	if d.OnPublish != nil {
		if errors.Is(err, errNotPublished) {
			d.OnPublish(err)
		} else {
			d.OnPublish(nil)
		}
	}
	if err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (d *Driver) recordsOnLocked(nic string) []string {
	var uids []string
	for uid, r := range d.recs {
		if r.NIC == nic && r.Admitted() {
			uids = append(uids, uid)
		}
	}
	slices.Sort(uids)
	return uids
}

// reconcileNICLocked is one NIC's pass: its taints, whether records
// changed, and what went wrong.
func (d *Driver) reconcileNICLocked(ctx context.Context, nic string) ([]resourceapi.DeviceTaint, bool, error) {
	logger := klog.FromContext(ctx)
	var tt []resourceapi.DeviceTaint
	link, err := d.k.Link(nic)
	if err != nil {
		return []resourceapi.DeviceTaint{drslices.Taint(drslices.TaintNICMissing, "link-unreadable")}, false, err
	}
	if !link.Exists {
		// renamed or removed: the classes went with it; the pods are
		// unmarked so that their next start fails, not runs unshaped
		return []resourceapi.DeviceTaint{drslices.Taint(drslices.TaintNICMissing, "no-such-interface")},
			d.dropLocked(ctx, nic, d.recordsOnLocked(nic)), nil
	}
	if !link.Up {
		tt = append(tt, drslices.Taint(drslices.TaintLinkDown, "carrier-down"))
	}
	q, err := d.k.Read(nic)
	if errors.Is(err, kernel.ErrNoQdisc) {
		logger.Info("the arbtable root is gone (deleted or replaced), making it again", "nic", nic)
		if err := d.k.EnsureRoot(nic, d.cfg.Root); err != nil {
			return append(tt, drslices.Taint(drslices.TaintQdisc, "cannot-create-root")),
				d.dropLocked(ctx, nic, d.recordsOnLocked(nic)), err
		}
		q, err = d.k.Read(nic)
	}
	if err != nil {
		return append(tt, drslices.Taint(drslices.TaintQdisc, "unreadable")), false, err
	}
	if q.PathsOpen {
		// a tenant's SO_PRIORITY or macvlan SO_MARK would pick any class
		logger.Info("the root's classification paths were reopened: closing them", "nic", nic)
		if err := d.k.EnsureRoot(nic, d.cfg.Root); err != nil {
			return append(tt, drslices.Taint(drslices.TaintQdisc, "cannot-close-paths")), false, err
		}
	}
	changed := false
	if link.Up && link.Speed > 0 && link.Speed != q.Params.Rate && d.cfg.Root.Rates[nic] == 0 {
		p := q.Params
		p.Rate = link.Speed
		why := d.rebuildableLocked(nic, q, p)
		if why == "" && d.rc.remadeAt[nic] == link.Speed {
			why = fmt.Sprintf("link-%dMbit-root-remade-at-%dMbit", link.Speed*8/1e6, q.Params.Rate*8/1e6)
		}
		if why == "" {
			if d.rc.remadeAt == nil {
				d.rc.remadeAt = map[string]uint64{}
			}
			d.rc.remadeAt[nic] = link.Speed
			logger.Info("the link speed changed: making the root again at it", "nic", nic,
				"capacity", q.Params.Rate, "link", link.Speed)
			if err := d.k.DeleteRoot(nic); err != nil {
				return append(tt, drslices.Taint(drslices.TaintCapacity, "root-not-remade")), false, err
			}
			if err := d.k.EnsureRoot(nic, d.cfg.Root); err != nil {
				return append(tt, drslices.Taint(drslices.TaintQdisc, "cannot-create-root")),
					d.dropLocked(ctx, nic, d.recordsOnLocked(nic)), err
			}
			if q, err = d.k.Read(nic); err != nil {
				return append(tt, drslices.Taint(drslices.TaintQdisc, "unreadable")), false, err
			}
		} else if link.Speed < q.Params.Rate {
			// the kernel still admits against the old, larger capacity:
			// its guarantees no longer hold, and no new claim may come
			tt = append(tt, drslices.Taint(drslices.TaintCapacity, why))
		}
	}
	lost, ch := d.readmitLocked(ctx, nic, q)
	changed = changed || ch
	if lost > 0 {
		tt = append(tt, drslices.Taint(drslices.TaintClassLost, fmt.Sprintf("%d-claims-not-readmitted", lost)))
	}
	if q.Broken > 0 {
		tt = append(tt, drslices.Taint(drslices.TaintBroken, fmt.Sprintf("%d-classes-mtu-grew", q.Broken)))
	}
	return tt, changed, nil
}

// rebuildableLocked says why the root of nic cannot be made again at
// params p ("" when it can): it must be the driver's root (its handle and
// system class), hold no class but the driver's, and every recorded class
// must fit p with the slots the scheduler counted.
func (d *Driver) rebuildableLocked(nic string, q kernel.Qdisc, p arbcore.Params) string {
	if q.Handle != d.cfg.Root.Handle || q.Default != d.cfg.Root.SystemMinor {
		return fmt.Sprintf("link-%dMbit-capacity-%dMbit-root-not-the-drivers", p.Rate*8/1e6, q.Params.Rate*8/1e6)
	}
	for _, c := range q.Classes {
		if m := c.ClassID & 0xffff; m != d.cfg.Root.SystemMinor && !d.owned(m) {
			return fmt.Sprintf("link-%dMbit-capacity-%dMbit-foreign-class-%x", p.Rate*8/1e6, q.Params.Rate*8/1e6, m)
		}
	}
	if _, err := drslices.Blocks(p); err != nil {
		return fmt.Sprintf("link-%dMbit-no-blocks", p.Rate*8/1e6)
	}
	pl, err := arbcore.NewPlan(p)
	if err != nil {
		return "no-plan"
	}
	defer pl.Close()
	idx := 0
	if d.cfg.Root.SystemRate > 0 {
		_, err = pl.Admit(idx, d.cfg.Root.SystemRate, d.cfg.Root.SystemDistance)
	} else {
		_, err = pl.AdmitShare(idx, d.cfg.Root.SystemShare, arbcore.Slots)
	}
	if err != nil {
		return fmt.Sprintf("link-%dMbit-system-class-does-not-fit", p.Rate*8/1e6)
	}
	for _, uid := range d.recordsOnLocked(nic) {
		r := d.recs[uid]
		idx++
		var c arbcore.Cost
		if r.Low() {
			c, err = pl.AdmitShare(idx, r.Share, arbcore.Slots)
		} else {
			c, err = pl.Admit(idx, r.RateBytes, uint32(arbcore.Slots/r.Slots))
		}
		if err != nil || int(c.Slots) != r.Slots {
			return fmt.Sprintf("link-%dMbit-below-capacity-%dMbit-claims-do-not-fit", p.Rate*8/1e6, q.Params.Rate*8/1e6)
		}
	}
	return ""
}

// readmitLocked admits again, as PodUp did, each recorded class of nic
// that the kernel no longer has (an admin deleted it, the root was
// replaced or made again): the class at its classid, its fw filter and
// the marks of the pods that use it; a class still there whose fw filter
// is gone or points elsewhere gets its filter again. A class that cannot be admitted
// again is dropped from its record, its pods unmarked, so that the pods'
// next start admits or fails rather than runs unshaped. It returns how
// many were dropped and whether records changed.
func (d *Driver) readmitLocked(ctx context.Context, nic string, q kernel.Qdisc) (int, bool) {
	logger := klog.FromContext(ctx)
	var drop []string
	changed := false
	// a class whose fw filter is gone (tc filter del) sends its pods'
	// traffic to the system class: the filter is added again
	fws, fwErr := d.k.FwFilters(nic, q.Handle, d.cfg.FwPrio)
	if fwErr != nil {
		logger.Error(fwErr, "reading the fw filters: not checked this pass", "nic", nic)
	}
	for _, uid := range d.recordsOnLocked(nic) {
		r := d.recs[uid]
		if _, ok := q.Find(r.ClassID); ok {
			mark := r.Mark << d.markShift()
			if fwErr == nil && fws[mark] != q.Handle|r.ClassID&0xffff {
				if err := d.k.AddFw(nic, q.Handle, d.cfg.FwPrio, mark, d.cfg.MarkMask, q.Handle|r.ClassID&0xffff); err != nil {
					logger.Error(err, "adding the fw filter of a recorded class again", "claim", r.Namespace+"/"+r.Name, "nic", nic)
				} else {
					logger.Info("re-added the fw filter of a recorded class", "claim", r.Namespace+"/"+r.Name, "nic", nic,
						"mark", fmt.Sprintf("%#x", mark), "class", fmt.Sprintf("%x", r.ClassID))
				}
			}
			continue
		}
		changed = true
		if err := d.readmitOneLocked(q, &r); err != nil {
			logger.Error(err, "re-admitting a recorded class", "claim", r.Namespace+"/"+r.Name, "nic", nic)
			drop = append(drop, uid)
			continue
		}
		logger.Info("re-admitted a recorded class", "claim", r.Namespace+"/"+r.Name, "nic", nic,
			"class", fmt.Sprintf("%x", r.ClassID))
		d.recs[uid] = r
	}
	d.dropLocked(ctx, nic, drop)
	return len(drop), changed
}

func (d *Driver) readmitOneLocked(q kernel.Qdisc, r *checkpoint.Record) error {
	classid := q.Handle | r.ClassID&0xffff
	var c kernel.Class
	var got int
	var err error
	if r.Low() {
		c, err = d.k.AdmitShare(r.NIC, classid, r.Share, d.childLocked(q, r.NIC))
		got = c.LowSlots
	} else {
		c, err = d.k.Admit(r.NIC, classid, r.RateBytes, uint32(arbcore.Slots/r.Slots), d.childLocked(q, r.NIC))
		got = c.HighSlots
	}
	if err != nil {
		return err
	}
	if got != r.Slots {
		_ = d.k.Release(r.NIC, classid)
		return fmt.Errorf("the kernel admitted %d slots, the scheduler counted %d", got, r.Slots)
	}
	mark := r.Mark << d.markShift()
	if err := d.k.AddFw(r.NIC, q.Handle, d.cfg.FwPrio, mark, d.cfg.MarkMask, classid); err != nil {
		_ = d.k.Release(r.NIC, classid)
		return err
	}
	r.ClassID = classid
	// the marks live on the pods' interfaces, not under the root; set
	// them again all the same (an interface gone is its pod's PodDown)
	for _, ifname := range r.Ifaces {
		_ = d.k.Mark(ifname, d.cfg.MarkPrio, mark, d.cfg.MarkMask)
	}
	return nil
}

// dropLocked marks these records not admitted and unmarks their pods;
// it says whether any changed.
func (d *Driver) dropLocked(ctx context.Context, nic string, uids []string) bool {
	for _, uid := range uids {
		r := d.recs[uid]
		klog.FromContext(ctx).Info("a recorded class cannot be served: its pods are unmarked", "claim", r.Namespace+"/"+r.Name, "nic", nic)
		for _, ifname := range r.Ifaces {
			_ = d.k.Unmark(ifname, d.cfg.MarkPrio)
		}
		_ = d.k.DelFw(nic, r.ClassID&0xffff0000, d.cfg.FwPrio, r.Mark<<d.markShift())
		_ = d.k.Release(nic, r.ClassID)
		r.ClassID, r.Mark, r.Ifaces = 0, 0, nil
		d.recs[uid] = r
	}
	return len(uids) > 0
}
