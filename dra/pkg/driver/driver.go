// SPDX-License-Identifier: Apache-2.0

// Package driver is arbtable-dra's node side: it publishes the node's
// arbtable NICs, records allocations at Prepare, and admits, marks and
// releases classes when the pods' networks come and go (called from the
// NRI plugin). Its state is the checkpoint; the kernel and the API server
// are reached through small interfaces so that tests run without either.
package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sync"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"arbtable.dev/dra/pkg/arbcore"
	"arbtable.dev/dra/pkg/checkpoint"
	"arbtable.dev/dra/pkg/events"
	"arbtable.dev/dra/pkg/kernel"
	drslices "arbtable.dev/dra/pkg/slices"
)

// Config is the driver's configuration.
type Config struct {
	NodeName   string
	NICs       []string
	Root       kernel.RootConfig
	MarkMask   uint32 // bits of the packet mark the driver owns
	MarkPrio   uint16 // prio of the mark filter on host-side interfaces
	FwPrio     uint16 // prio of the fw filters on the NIC's root
	MinorBase  uint32 // class minors are MinorBase + mark value
	Child      string // child qdisc of the classes the driver admits
	Checkpoint string // path of the checkpoint file
}

// Publisher publishes ResourceSlices (kubeletplugin.Helper).
type Publisher interface {
	PublishResources(ctx context.Context, res resourceslice.DriverResources) error
}

// StatusWriter writes a claim's device status (KEP-4817).
type StatusWriter interface {
	WriteStatus(ctx context.Context, rec checkpoint.Record, st DeviceStatus) error
}

// DeviceStatus is what the driver reports in the claim for its device.
type DeviceStatus struct {
	NIC                string `json:"nic"`
	ClassID            string `json:"classID"`
	Table              string `json:"table"` // high (a block) or low (a share)
	Share              uint32 `json:"share,omitempty"`
	Slots              int    `json:"slots"`
	Distance           uint32 `json:"distance"`
	RequestedRateBits  uint64 `json:"requestedRateBits"`
	GuaranteedRateBits uint64 `json:"guaranteedRateBits"`
	BoundNs            uint64 `json:"boundNs"`
	Interface          string `json:"interface,omitempty"`
	Ready              bool   `json:"-"`
	Reason             string `json:"-"`
}

// ClassConfig is the opaque configuration a claim may carry
// (DeviceClaimConfiguration parameters): the pod's exact rate, for the
// kernel's weight, or its share of the LOW table.
type ClassConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// RateBits is the rate to reserve, bits/s; 0 or above the block's
	// rate means the block's rate.  Only for a block (arbtable.dev).
	RateBits uint64 `json:"rateBits,omitempty"`
	// Share is the LOW-table weight, 1..the device's maxShare; 0 means
	// 1.  Only for a share device (share.arbtable.dev).
	Share uint32 `json:"share,omitempty"`
}

// Driver is the node plugin.
type Driver struct {
	cfg    Config
	k      kernel.Kernel
	pub    Publisher
	status StatusWriter

	mu     sync.Mutex
	recs   map[string]checkpoint.Record // by claim UID
	params map[string]arbcore.Params    // by NIC
	blocks map[string][]drslices.Block  // by NIC
	pools  map[string]string            // pool -> NIC
	rc     reconcileState               // reconcile.go

	// Events, when set, takes the refusals and failures users see as
	// Events (events.go)
	Events events.Sink
	// OnPublish, when set, is told each reconcile pass's publish result
	// (readiness)
	OnPublish func(error)
}

var _ kubeletplugin.DRAPlugin = &Driver{}

// New loads the checkpoint and returns the driver.
func New(cfg Config, k kernel.Kernel, pub Publisher, status StatusWriter) (*Driver, error) {
	if cfg.MarkMask == 0 {
		return nil, errors.New("mark mask is 0")
	}
	recs, err := checkpoint.Load(cfg.Checkpoint)
	if err != nil {
		return nil, err
	}
	return &Driver{cfg: cfg, k: k, pub: pub, status: status, recs: recs,
		params: map[string]arbcore.Params{}, blocks: map[string][]drslices.Block{}, pools: map[string]string{}}, nil
}

// markShift is the mask's lowest bit.
func (d *Driver) markShift() int { return bits.TrailingZeros32(d.cfg.MarkMask) }

// markSpan is the number of mark values the mask holds (1..span).
func (d *Driver) markSpan() uint32 { return d.cfg.MarkMask >> d.markShift() }

func (d *Driver) owned(minor uint32) bool {
	return minor > d.cfg.MinorBase && minor <= d.cfg.MinorBase+d.markSpan()
}

// Start ensures each NIC's root and publishes the node's resources. It
// withdraws nothing: classes recorded in the checkpoint stay admitted. A
// NIC it cannot serve (no module, no such interface) is the reconcile
// pass's: tainted or left out, the others served; Start fails only when
// no NIC is published.
func (d *Driver) Start(ctx context.Context) error {
	var errs []error
	for _, nic := range d.cfg.NICs {
		if err := d.k.EnsureRoot(nic, d.cfg.Root); err != nil {
			errs = append(errs, fmt.Errorf("NIC %s: %w", nic, err))
		}
	}
	if err := d.ReconcileKernel(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := d.Reconcile(ctx); err != nil {
		errs = append(errs, err)
	}
	d.mu.Lock()
	none := len(d.pools) == 0
	d.mu.Unlock()
	if none {
		return errors.Join(append(errs, errors.New("no NIC can be published"))...)
	}
	if err := errors.Join(errs...); err != nil {
		klog.FromContext(ctx).Error(err, "starting: NICs tainted or left out")
	}
	return nil
}

// nicsLocked reads the NICs and returns what to publish: the counters
// are the slots and classes held outside claims subtracted from 64.
func (d *Driver) nicsLocked() ([]drslices.NIC, error) {
	mine := map[string]map[uint32]bool{}
	for _, r := range d.recs {
		if r.Admitted() {
			if mine[r.NIC] == nil {
				mine[r.NIC] = map[uint32]bool{}
			}
			mine[r.NIC][r.ClassID&0xffff] = true
		}
	}
	var out []drslices.NIC
	var errs []error
	marks := drslices.SplitMarks(int(d.markSpan()), len(d.cfg.NICs))
	for i, nic := range d.cfg.NICs {
		taints := d.rc.taints[nic]
		q, err := d.k.Read(nic)
		if err != nil {
			// one NIC's error withdraws no other NIC: this one is
			// published tainted with its last numbers, or left out
			p, ok := d.params[nic]
			if !ok {
				errs = append(errs, fmt.Errorf("NIC %s: %w", nic, err))
				continue
			}
			errs = append(errs, fmt.Errorf("NIC %s (published tainted): %w", nic, err))
			q = kernel.Qdisc{Params: p}
			if !slices.ContainsFunc(taints, func(t resourceapi.DeviceTaint) bool { return t.Key == drslices.TaintQdisc }) {
				taints = append(slices.Clip(taints), drslices.Taint(drslices.TaintQdisc, "unreadable"))
			}
		}
		n := drslices.NIC{Name: nic, Params: q.Params, FreeSlots: arbcore.Slots,
			FreeLowSlots: arbcore.Slots, FreeClasses: arbcore.MaxClasses, Marks: marks[i], Taints: taints}
		for _, c := range q.Classes {
			if mine[nic][c.ClassID&0xffff] {
				continue
			}
			n.FreeSlots -= c.HighSlots
			n.FreeLowSlots -= c.LowSlots
			n.FreeClasses--
		}
		blocks, err := drslices.Blocks(q.Params)
		if err != nil {
			errs = append(errs, fmt.Errorf("NIC %s: %w", nic, err))
			continue
		}
		d.params[nic] = q.Params
		d.blocks[nic] = blocks
		d.pools[drslices.PoolName(d.cfg.NodeName, nic)] = nic
		out = append(out, n)
	}
	return out, errors.Join(errs...)
}

// Resources returns what the driver publishes now.
func (d *Driver) Resources() (resourceslice.DriverResources, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	nics, err := d.nicsLocked()
	res, berr := drslices.Build(d.cfg.NodeName, nics)
	return res, errors.Join(err, berr)
}

// Publish publishes the node's resources: the NICs that can be read,
// even when another cannot (the error names that one).
func (d *Driver) Publish(ctx context.Context) error {
	res, err := d.Resources()
	if len(res.Pools) == 0 && err != nil {
		return err
	}
	if perr := d.pub.PublishResources(ctx, res); perr != nil {
		return errors.Join(err, fmt.Errorf("publishing resource slices: %w", perr))
	}
	return err
}

// saveLocked writes the checkpoint.
func (d *Driver) saveLocked() error {
	return checkpoint.Save(d.cfg.Checkpoint, d.recs)
}

// Records returns a copy of the records.
func (d *Driver) Records() map[string]checkpoint.Record {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]checkpoint.Record, len(d.recs))
	for k, v := range d.recs {
		out[k] = v
	}
	return out
}

func claimConfig(claim *resourceapi.ResourceClaim, request string) (ClassConfig, error) {
	var cc ClassConfig
	if claim.Status.Allocation == nil {
		return cc, nil
	}
	for _, c := range claim.Status.Allocation.Devices.Config {
		if c.Opaque == nil || c.Opaque.Driver != drslices.DriverName {
			continue
		}
		if len(c.Requests) > 0 && !slices.Contains(c.Requests, request) {
			continue
		}
		var v ClassConfig
		if err := json.Unmarshal(c.Opaque.Parameters.Raw, &v); err != nil {
			return cc, fmt.Errorf("opaque parameters of claim %s/%s: %w", claim.Namespace, claim.Name, err)
		}
		if v.Kind != "ClassConfig" {
			return cc, fmt.Errorf("opaque parameters of claim %s/%s: kind %q, want ClassConfig", claim.Namespace, claim.Name, v.Kind)
		}
		cc = v
	}
	return cc, nil
}

// prepareLocked records one claim's allocation.
func (d *Driver) prepareLocked(claim *resourceapi.ResourceClaim) (kubeletplugin.PrepareResult, error) {
	if claim.Status.Allocation == nil {
		return kubeletplugin.PrepareResult{}, fmt.Errorf("claim %s/%s is not allocated", claim.Namespace, claim.Name)
	}
	var mine []resourceapi.DeviceRequestAllocationResult
	var admin kubeletplugin.PrepareResult
	for _, r := range claim.Status.Allocation.Devices.Results {
		if r.Driver != drslices.DriverName {
			continue
		}
		// adminAccess: visibility of a device another claim may hold;
		// the scheduler counts nothing for it, so no record, no class
		if ptr.Deref(r.AdminAccess, false) {
			admin.Devices = append(admin.Devices, kubeletplugin.Device{
				Requests: []string{r.Request}, PoolName: r.Pool, DeviceName: r.Device})
			continue
		}
		mine = append(mine, r)
	}
	if len(mine) == 0 && len(admin.Devices) > 0 {
		return admin, nil
	}
	if len(mine) != 1 {
		return kubeletplugin.PrepareResult{}, fmt.Errorf("claim %s/%s has %d arbtable devices: one per claim (one class per pod network)", claim.Namespace, claim.Name, len(mine))
	}
	res := mine[0]
	result := kubeletplugin.PrepareResult{Devices: []kubeletplugin.Device{{
		Requests: []string{res.Request}, PoolName: res.Pool, DeviceName: res.Device}}}
	var pods []string
	for _, ref := range claim.Status.ReservedFor {
		if ref.Resource == "pods" {
			pods = append(pods, string(ref.UID))
		}
	}
	uid := string(claim.UID)
	if r, ok := d.recs[uid]; ok {
		// prepared before (kubelet retry or restart): the same answer,
		// with the consumers as they are now
		if r.Device != res.Device || r.Pool != res.Pool {
			return result, fmt.Errorf("claim %s/%s was prepared with device %s/%s, now allocated %s/%s", claim.Namespace, claim.Name, r.Pool, r.Device, res.Pool, res.Device)
		}
		if !slices.Equal(r.PodUIDs, pods) {
			r.PodUIDs = pods
			d.recs[uid] = r
		}
		return result, nil
	}
	nic, ok := d.pools[res.Pool]
	if !ok {
		return result, fmt.Errorf("claim %s/%s: pool %s is not one of this node's NICs", claim.Namespace, claim.Name, res.Pool)
	}
	n, low, err := drslices.ParseDevice(res.Device)
	if err != nil {
		return result, fmt.Errorf("claim %s/%s: %w", claim.Namespace, claim.Name, err)
	}
	cc, err := claimConfig(claim, res.Request)
	if err != nil {
		return result, err
	}
	if low {
		// a share: one LOW slot, weight Share (the kernel spreads it
		// on that slot, so it is at most maxweight)
		if cc.RateBits > 0 {
			return result, fmt.Errorf("claim %s/%s: rateBits %d on share device %s: a reserved rate needs a block (deviceClassName arbtable.dev)", claim.Namespace, claim.Name, cc.RateBits, res.Device)
		}
		share := max(cc.Share, 1)
		if mw := d.params[nic].MaxWeight; share > mw {
			return result, fmt.Errorf("claim %s/%s: share %d above %s's maxShare %d", claim.Namespace, claim.Name, share, nic, mw)
		}
		d.recs[uid] = checkpoint.Record{
			ClaimUID: uid, Namespace: claim.Namespace, Name: claim.Name, PodUIDs: pods,
			Pool: res.Pool, Device: res.Device, Request: res.Request, NIC: nic, Slots: 1, Share: share,
		}
		return result, nil
	}
	if cc.Share > 0 {
		return result, fmt.Errorf("claim %s/%s: share %d on block %s: a share needs a share device (deviceClassName share.arbtable.dev)", claim.Namespace, claim.Name, cc.Share, res.Device)
	}
	var blk drslices.Block
	for _, b := range d.blocks[nic] {
		if b.Slots == n {
			blk = b
		}
	}
	rate := blk.RateBytes
	if cc.RateBits > 0 && cc.RateBits/8 < rate {
		rate = cc.RateBits / 8
		// a smaller weight per slot can lengthen the bound (more visits
		// to cover an MTU): keep the published bound, the one the
		// claim's selector saw
		if c, err := arbcore.RateCost(d.params[nic], rate, uint32(blk.Distance)); err != nil || c.BoundNs > blk.BoundNs || c.Slots != uint32(n) {
			rate = blk.RateBytes
		}
	}
	d.recs[uid] = checkpoint.Record{
		ClaimUID: uid, Namespace: claim.Namespace, Name: claim.Name, PodUIDs: pods,
		Pool: res.Pool, Device: res.Device, Request: res.Request, NIC: nic, Slots: n,
		RateBytes: rate, BoundNs: blk.BoundNs,
	}
	return result, nil
}

// PrepareResourceClaims implements kubeletplugin.DRAPlugin: it records the
// allocations; the classes are admitted when the pods' networks exist.
func (d *Driver) PrepareResourceClaims(ctx context.Context, claims []*resourceapi.ResourceClaim) (map[types.UID]kubeletplugin.PrepareResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.pools) == 0 {
		if _, err := d.nicsLocked(); err != nil {
			return nil, err
		}
	}
	out := make(map[types.UID]kubeletplugin.PrepareResult, len(claims))
	for _, c := range claims {
		r, err := d.prepareLocked(c)
		if err != nil {
			d.prepareRefused(c, err)
			r = kubeletplugin.PrepareResult{Err: err}
		}
		out[c.UID] = r
	}
	if err := d.saveLocked(); err != nil {
		return nil, err
	}
	return out, nil
}

// UnprepareResourceClaims implements kubeletplugin.DRAPlugin: a class
// still admitted is released, and the record dropped.
func (d *Driver) UnprepareResourceClaims(ctx context.Context, claims []kubeletplugin.NamespacedObject) (map[types.UID]error, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[types.UID]error, len(claims))
	for _, c := range claims {
		uid := string(c.UID)
		r, ok := d.recs[uid]
		if !ok {
			out[c.UID] = nil
			continue
		}
		if err := d.teardownLocked(&r, ""); err != nil {
			d.unprepareFailed(r, err)
			d.recs[uid] = r
			out[c.UID] = err
			continue
		}
		delete(d.recs, uid)
		out[c.UID] = nil
	}
	if err := d.saveLocked(); err != nil {
		return nil, err
	}
	return out, nil
}

// HandleError implements kubeletplugin.DRAPlugin.
func (d *Driver) HandleError(ctx context.Context, err error, msg string) {
	klog.FromContext(ctx).Error(err, msg)
}

// WatchHealthStatus implements kubeletplugin.DRAPlugin: no health reports.
func (d *Driver) WatchHealthStatus(ctx context.Context, reports chan<- kubeletplugin.DeviceHealthReport) error {
	return kubeletplugin.ErrHealthNotSupported
}

// freeMarkLocked returns a mark value no record holds.
func (d *Driver) freeMarkLocked() (uint32, error) {
	used := map[uint32]bool{}
	for _, r := range d.recs {
		if r.Mark != 0 {
			used[r.Mark] = true
		}
	}
	for v := uint32(1); v <= d.markSpan(); v++ {
		if !used[v] {
			return v, nil
		}
	}
	return 0, fmt.Errorf("all %d marks of mask %#x in use", d.markSpan(), d.cfg.MarkMask)
}

func (d *Driver) podRecordsLocked(podUID string) []string {
	var uids []string
	for uid, r := range d.recs {
		if slices.Contains(r.PodUIDs, podUID) {
			uids = append(uids, uid)
		}
	}
	slices.Sort(uids)
	return uids
}

// HasClaims says whether a pod holds arbtable claims on this node.
func (d *Driver) HasClaims(podUID string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.podRecordsLocked(podUID)) > 0
}

// PodUp admits the classes of a pod's claims, marks the pod's traffic
// (hostIf is its host-side interface) and writes the claims' status. A pod
// without a claim is not touched: it returns nil before looking at
// ifErr, the error finding the interface.
func (d *Driver) PodUp(ctx context.Context, podUID, hostIf string, ifErr error) error {
	d.mu.Lock()
	uids := d.podRecordsLocked(podUID)
	if len(uids) == 0 {
		d.mu.Unlock()
		return nil
	}
	if ifErr != nil {
		d.mu.Unlock()
		return fmt.Errorf("pod %s holds arbtable claims but its interface cannot be classified: %w", podUID, ifErr)
	}
	if len(uids) > 1 {
		d.mu.Unlock()
		return fmt.Errorf("pod %s holds %d arbtable claims: one per pod (its traffic carries one mark)", podUID, len(uids))
	}
	var sts []struct {
		rec checkpoint.Record
		st  DeviceStatus
	}
	var err error
	for _, uid := range uids {
		r := d.recs[uid]
		var st DeviceStatus
		st, err = d.upLocked(&r, podUID, hostIf)
		d.recs[uid] = r
		if err != nil {
			err = fmt.Errorf("claim %s/%s: %w", r.Namespace, r.Name, err)
			break
		}
		sts = append(sts, struct {
			rec checkpoint.Record
			st  DeviceStatus
		}{r, st})
	}
	if serr := d.saveLocked(); serr != nil && err == nil {
		err = serr
	}
	d.mu.Unlock()
	if err != nil {
		return err
	}
	for _, s := range sts {
		if d.status == nil {
			continue
		}
		if err := d.status.WriteStatus(ctx, s.rec, s.st); err != nil {
			// the class is admitted; the status is information
			klog.FromContext(ctx).Error(err, "writing the claim's device status", "claim", s.rec.Namespace+"/"+s.rec.Name)
		}
	}
	return nil
}

func (d *Driver) status0(r *checkpoint.Record, c kernel.Class, hostIf string) DeviceStatus {
	st := DeviceStatus{
		NIC: r.NIC, ClassID: fmt.Sprintf("%x:%x", c.ClassID>>16, c.ClassID&0xffff),
		Table: drslices.TableHigh, Slots: c.HighSlots, Distance: c.Distance, RequestedRateBits: r.RateBytes * 8,
		GuaranteedRateBits: c.GuaranteedRate * 8, BoundNs: c.BoundNs, Interface: hostIf, Ready: true,
	}
	if r.Low() {
		st.Table, st.Share, st.Slots = drslices.TableLow, c.Share, c.LowSlots
		st.GuaranteedRateBits, st.BoundNs = 0, 0
	}
	return st
}

// upLocked admits r's class if it is not, then marks hostIf.
func (d *Driver) upLocked(r *checkpoint.Record, podUID, hostIf string) (DeviceStatus, error) {
	mark := func(v uint32) uint32 { return v << d.markShift() }
	if !r.Admitted() {
		v, err := d.freeMarkLocked()
		if err != nil {
			return DeviceStatus{}, err
		}
		q, err := d.k.Read(r.NIC)
		if err != nil {
			return DeviceStatus{}, err
		}
		// the root's own handle: an existing root keeps its major
		handle := q.Handle
		r.Mark = v
		r.ClassID = handle | (d.cfg.MinorBase + v)
		// the intent first: a crash after the admission leaves a record
		// that owns the class, not a leak
		if err := d.saveLocked(); err != nil {
			r.Mark, r.ClassID = 0, 0
			return DeviceStatus{}, err
		}
		var c kernel.Class
		var got int
		if r.Low() {
			c, err = d.k.AdmitShare(r.NIC, r.ClassID, r.Share, d.cfg.Child)
			got = c.LowSlots
		} else {
			c, err = d.k.Admit(r.NIC, r.ClassID, r.RateBytes, uint32(arbcore.Slots/r.Slots), d.cfg.Child)
			got = c.HighSlots
		}
		if err != nil {
			r.Mark, r.ClassID = 0, 0
			if r.Low() {
				return DeviceStatus{}, fmt.Errorf("admitting share %d on %s: %w", r.Share, r.NIC, err)
			}
			return DeviceStatus{}, fmt.Errorf("admitting %d slots at %d B/s on %s: %w", r.Slots, r.RateBytes, r.NIC, err)
		}
		if got != r.Slots {
			_ = d.k.Release(r.NIC, r.ClassID)
			r.Mark, r.ClassID = 0, 0
			return DeviceStatus{}, fmt.Errorf("the kernel admitted %d slots on %s, the scheduler counted %d", got, r.NIC, r.Slots)
		}
		if err := d.k.AddFw(r.NIC, handle, d.cfg.FwPrio, mark(r.Mark), d.cfg.MarkMask, r.ClassID); err != nil {
			_ = d.k.Release(r.NIC, r.ClassID)
			r.Mark, r.ClassID = 0, 0
			return DeviceStatus{}, err
		}
	}
	if old, ok := r.Ifaces[podUID]; !ok || old != hostIf {
		if err := d.k.Mark(hostIf, d.cfg.MarkPrio, mark(r.Mark), d.cfg.MarkMask); err != nil {
			if len(r.Ifaces) == 0 {
				_ = d.teardownLocked(r, "")
			}
			return DeviceStatus{}, err
		}
		if r.Ifaces == nil {
			r.Ifaces = map[string]string{}
		}
		r.Ifaces[podUID] = hostIf
	}
	q, err := d.k.Read(r.NIC)
	if err != nil {
		return DeviceStatus{}, err
	}
	c, ok := q.Find(r.ClassID)
	if !ok {
		return DeviceStatus{}, fmt.Errorf("class %x on %s vanished", r.ClassID, r.NIC)
	}
	return d.status0(r, c, hostIf), nil
}

// teardownLocked unmarks podUID's interface ("" = all of them) and, once
// no pod's traffic is marked, releases the class and its filter.
func (d *Driver) teardownLocked(r *checkpoint.Record, podUID string) error {
	for p, ifname := range r.Ifaces {
		if podUID != "" && p != podUID {
			continue
		}
		if err := d.k.Unmark(ifname, d.cfg.MarkPrio); err != nil {
			return err
		}
		delete(r.Ifaces, p)
	}
	if len(r.Ifaces) > 0 || !r.Admitted() {
		return nil
	}
	if err := d.k.DelFw(r.NIC, r.ClassID&0xffff0000, d.cfg.FwPrio, r.Mark<<d.markShift()); err != nil {
		return err
	}
	if err := d.k.Release(r.NIC, r.ClassID); err != nil {
		return err
	}
	r.ClassID, r.Mark, r.Ifaces = 0, 0, nil
	return nil
}

// PodDown releases what PodUp made for a pod (StopPodSandbox,
// RemovePodSandbox); idempotent.
func (d *Driver) PodDown(ctx context.Context, podUID string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var errs []error
	changed := false
	for _, uid := range d.podRecordsLocked(podUID) {
		r := d.recs[uid]
		if _, ok := r.Ifaces[podUID]; !ok && (len(r.Ifaces) > 0 || !r.Admitted()) {
			continue
		}
		if err := d.teardownLocked(&r, podUID); err != nil {
			errs = append(errs, fmt.Errorf("claim %s/%s: %w", r.Namespace, r.Name, err))
		}
		d.recs[uid] = r
		changed = true
	}
	if changed {
		if err := d.saveLocked(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ReconcileKernel compares the records with the kernel after a start:
// a record whose class is gone (a reboot, someone deleted it) is marked
// not admitted, so the pod's next sandbox event or Synchronize admits it
// again; a class in the driver's minor range without a record (a crash
// between admission and checkpoint cannot make one: the intent is written
// first; an older driver's leftovers can) is released. Recorded classes
// stay: a restart withdraws nothing.
func (d *Driver) ReconcileKernel(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	logger := klog.FromContext(ctx)
	byNIC := map[string]map[uint32]string{}
	for uid, r := range d.recs {
		if r.Admitted() {
			if byNIC[r.NIC] == nil {
				byNIC[r.NIC] = map[uint32]string{}
			}
			byNIC[r.NIC][r.ClassID&0xffff] = uid
		}
	}
	var errs []error
	for _, nic := range d.cfg.NICs {
		q, err := d.k.Read(nic)
		if err != nil {
			errs = append(errs, fmt.Errorf("NIC %s: %w", nic, err))
			continue
		}
		seen := map[uint32]bool{}
		for _, c := range q.Classes {
			minor := c.ClassID & 0xffff
			seen[minor] = true
			if _, ok := byNIC[nic][minor]; ok || !d.owned(minor) {
				continue
			}
			logger.Info("releasing a class no claim records", "nic", nic, "class", fmt.Sprintf("%x", c.ClassID))
			_ = d.k.DelFw(nic, q.Handle, d.cfg.FwPrio, (minor-d.cfg.MinorBase)<<d.markShift())
			if err := d.k.Release(nic, c.ClassID); err != nil {
				errs = append(errs, err)
			}
		}
		for minor, uid := range byNIC[nic] {
			if seen[minor] {
				continue
			}
			r := d.recs[uid]
			logger.Info("a recorded class is gone from the kernel", "claim", r.Namespace+"/"+r.Name, "nic", nic)
			for _, ifname := range r.Ifaces {
				_ = d.k.Unmark(ifname, d.cfg.MarkPrio)
			}
			_ = d.k.DelFw(nic, q.Handle, d.cfg.FwPrio, r.Mark<<d.markShift())
			r.ClassID, r.Mark, r.Ifaces = 0, 0, nil
			d.recs[uid] = r
		}
	}
	if err := d.saveLocked(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Sandbox is a running pod sandbox as NRI's Synchronize reports it.
type Sandbox struct {
	PodUID string
	HostIf string
	IfErr  error
}

// Synchronize brings the records in line with the running sandboxes
// (NRI Synchronize after a driver start): a pod that runs gets its class
// admitted and marked (if it lost it), a pod that no longer runs has its
// class released.
func (d *Driver) Synchronize(ctx context.Context, running []Sandbox) error {
	up := map[string]bool{}
	var errs []error
	for _, s := range running {
		up[s.PodUID] = true
		if err := d.PodUp(ctx, s.PodUID, s.HostIf, s.IfErr); err != nil {
			errs = append(errs, err)
		}
	}
	d.mu.Lock()
	var gone []string
	for _, r := range d.recs {
		for p := range r.Ifaces {
			if !up[p] {
				gone = append(gone, p)
			}
		}
	}
	d.mu.Unlock()
	for _, p := range gone {
		if err := d.PodDown(ctx, p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
