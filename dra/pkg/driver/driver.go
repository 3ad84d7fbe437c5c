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
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
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
	// APITimeout bounds the API reads that find a pod's claims at
	// sandbox start (0: DefaultAPITimeout)
	APITimeout time.Duration
}

// DefaultAPITimeout is below the runtime's NRI request timeout
// (containerd's default, 2 s), which disconnects a plugin that overruns
// it: a slow API server fails the one sandbox (the kubelet retries), not
// the hook for every pod.
const DefaultAPITimeout = 1500 * time.Millisecond

// Publisher publishes ResourceSlices (kubeletplugin.Helper).
type Publisher interface {
	PublishResources(ctx context.Context, res resourceslice.DriverResources) error
}

// StatusWriter writes a claim's device status (KEP-4817).
type StatusWriter interface {
	WriteStatus(ctx context.Context, rec checkpoint.Record, st DeviceStatus) error
}

// PodSource reads a pod and a claim from the API server: at sandbox time
// the driver finds a pod's claims from the pod itself, since the kubelet
// prepares a claim once, for its first pod only.
type PodSource interface {
	GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	GetClaim(ctx context.Context, namespace, name string) (*resourceapi.ResourceClaim, error)
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
	status *statusQueue
	src    PodSource

	mu sync.Mutex
	// orphans are classes in the driver's minor range that no record
	// holds (a lost or corrupt checkpoint, a crash): kept until the
	// first Synchronize has read the running pods' claims, which adopt
	// theirs, then released
	orphans map[string]map[uint32]bool // NIC -> minor
	// recovering: the checkpoint was lost or corrupt, so a pod the
	// records do not name may still hold a claim prepared here
	recovering bool
	recs       map[string]checkpoint.Record // by claim UID
	params     map[string]arbcore.Params    // by NIC
	blocks     map[string][]drslices.Block  // by NIC
	pools      map[string]string            // pool -> NIC
	rc         reconcileState               // reconcile.go
	// noChild are the NICs whose lockless root was logged as taking
	// no --child
	noChild map[string]bool

	// Events, when set, takes the refusals and failures users see as
	// Events (events.go)
	Events events.Sink
	// HealthTick, when set, replaces WatchHealthStatus's resend ticker
	// (tests)
	HealthTick <-chan time.Time
	health     healthState

	// OnPublish, when set, is told after each reconcile pass whether the
	// slices were published (nil), tainted NICs included, or not
	// (readiness: one NIC the driver cannot serve does not stop a rollout)
	OnPublish func(error)
}

var _ kubeletplugin.DRAPlugin = &Driver{}

// New loads the checkpoint and returns the driver.
func New(cfg Config, k kernel.Kernel, pub Publisher, status StatusWriter) (*Driver, error) {
	if cfg.MarkMask == 0 {
		return nil, errors.New("mark mask is 0")
	}
	// a missing checkpoint is a first start or a deleted file: the two
	// look alike, and after a deletion a claim prepared here may have a
	// pod still to start, so pods are looked up as after a corrupt one
	_, serr := os.Stat(cfg.Checkpoint)
	recovering := errors.Is(serr, os.ErrNotExist)
	recs, err := checkpoint.Load(cfg.Checkpoint)
	if errors.Is(err, checkpoint.ErrCorrupt) {
		// not fatal: the kernel's classes and the API's claims rebuild
		// the records; the bad file is kept for a post-mortem
		klog.Background().Error(err, "starting without the checkpoint; rebuilding from the kernel and the API")
		if rerr := os.Rename(cfg.Checkpoint, cfg.Checkpoint+".corrupt"); rerr != nil {
			klog.Background().Error(rerr, "keeping the corrupt checkpoint aside")
		}
		recs, err, recovering = map[string]checkpoint.Record{}, nil, true
	}
	if err != nil {
		return nil, err
	}
	d := &Driver{cfg: cfg, k: k, pub: pub, recs: recs, recovering: recovering,
		orphans: map[string]map[uint32]bool{},
		params:  map[string]arbcore.Params{}, blocks: map[string][]drslices.Block{}, pools: map[string]string{}}
	if status != nil {
		d.status = newStatusQueue(status)
	}
	return d, nil
}

// SetPodSource sets where the driver reads pods and claims at sandbox
// time; without one it knows a pod only from the claims' reservedFor at
// Prepare.
func (d *Driver) SetPodSource(s PodSource) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.src = s
}

// WaitStatus waits until every claim status queued so far is written or
// has failed once (tests, shutdown).
func (d *Driver) WaitStatus() {
	if d.status != nil {
		d.status.wait()
	}
}

// childLocked is the child qdisc of a class on root q of nic: Child on a
// locked root, none on a lockless one (the driver's, or an admin's), which
// refuses every graft; logged once per NIC.
func (d *Driver) childLocked(q kernel.Qdisc, nic string) string {
	if !q.Lockless {
		return d.cfg.Child
	}
	if d.cfg.Child != "" && !d.noChild[nic] {
		if d.noChild == nil {
			d.noChild = map[string]bool{}
		}
		d.noChild[nic] = true
		klog.Background().Info("the root is lockless: its classes get no child qdisc (--child applies to locked roots only)",
			"nic", nic, "child", d.cfg.Child)
	}
	return ""
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
		} else if q, err := d.k.Read(nic); err == nil {
			d.mu.Lock()
			d.childLocked(q, nic) // logs a lockless root's lack of children now
			d.mu.Unlock()
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
		return fmt.Errorf("%w: %w", errNotPublished, err)
	}
	// the devices' health is their NICs' state, published or not
	d.health.set(healthOf(res, time.Now()))
	if perr := d.pub.PublishResources(ctx, res); perr != nil {
		return errors.Join(err, fmt.Errorf("%w: publishing resource slices: %w", errNotPublished, perr))
	}
	return err
}

// errNotPublished marks a Publish error after which the slices are not
// the node's; without it a NIC's own error left the others (and the NIC,
// tainted) published.
var errNotPublished = errors.New("nothing published")

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
		// a config naming the main request applies to its subrequests
		// ("net" to the result of "net/fast")
		parent, _, _ := strings.Cut(request, "/")
		if len(c.Requests) > 0 && !slices.Contains(c.Requests, request) && !slices.Contains(c.Requests, parent) {
			continue
		}
		v, err := DecodeClassConfig(c.Opaque.Parameters.Raw)
		if err != nil {
			return cc, fmt.Errorf("opaque parameters of claim %s/%s: %w", claim.Namespace, claim.Name, err)
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
		// pods found at sandbox time (a workload claim's, a shared
		// claim's later ones) are not in reservedFor: kept
		for _, p := range pods {
			if !slices.Contains(r.PodUIDs, p) {
				r.PodUIDs = append(r.PodUIDs, p)
			}
		}
		d.recs[uid] = r
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
		if err := d.teardownLocked(&r, "", true); err != nil {
			d.unprepareFailed(r, err)
			d.recs[uid] = r
			out[c.UID] = err
			continue
		}
		delete(d.recs, uid)
		if d.status != nil {
			d.status.forget(uid)
		}
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

// freeMarkLocked returns a mark value no record holds.
func (d *Driver) freeMarkLocked() (uint32, error) {
	used := map[uint32]bool{}
	for _, r := range d.recs {
		if r.Mark != 0 {
			used[r.Mark] = true
		}
	}
	// an orphan class keeps its mark's fw filter until released
	for _, minors := range d.orphans {
		for m := range minors {
			used[m-d.cfg.MinorBase] = true
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
		if _, marked := r.Ifaces[podUID]; marked || slices.Contains(r.PodUIDs, podUID) {
			uids = append(uids, uid)
		}
	}
	slices.Sort(uids)
	return uids
}

// HasClaims says whether the records hold a claim of the pod.
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
		if d.status != nil {
			d.status.put(s.rec, s.st)
		}
	}
	return nil
}

func (d *Driver) status0(r *checkpoint.Record, c kernel.Class, hostIf string) DeviceStatus {
	st := DeviceStatus{
		NIC: r.NIC, ClassID: fmt.Sprintf("%x:%x", c.ClassID>>16, c.ClassID&0xffff),
		Table: drslices.TableHigh, Slots: c.HighSlots, Distance: c.Distance, RequestedRateBits: r.RateBytes * 8,
		GuaranteedRateBits: c.GuaranteedRate * 8, BoundNs: c.BoundNs, Ready: true,
	}
	// a shared claim's pods have an interface each: the status names one
	// only when it is the claim's one
	if len(r.Ifaces) == 1 {
		st.Interface = hostIf
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
			c, err = d.k.AdmitShare(r.NIC, r.ClassID, r.Share, d.childLocked(q, r.NIC))
			got = c.LowSlots
		} else {
			c, err = d.k.Admit(r.NIC, r.ClassID, r.RateBytes, uint32(arbcore.Slots/r.Slots), d.childLocked(q, r.NIC))
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
				_ = d.teardownLocked(r, "", true)
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

// teardownLocked unmarks podUID's interface ("" = all of them) and, if
// release and no pod's traffic is marked, releases the class and its
// filter. A claim's class lives from its first pod's start to Unprepare:
// a pod going down leaves it to the claim's other pods and to a
// restarted sandbox.
func (d *Driver) teardownLocked(r *checkpoint.Record, podUID string, release bool) error {
	for p, ifname := range r.Ifaces {
		if podUID != "" && p != podUID {
			continue
		}
		if err := d.k.Unmark(ifname, d.cfg.MarkPrio); err != nil {
			return err
		}
		delete(r.Ifaces, p)
	}
	if !release || len(r.Ifaces) > 0 || !r.Admitted() {
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

// PodDown unmarks a pod's interface (StopPodSandbox, RemovePodSandbox);
// the claim's class stays until Unprepare; idempotent.
func (d *Driver) PodDown(ctx context.Context, podUID string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var errs []error
	changed := false
	for _, uid := range d.podRecordsLocked(podUID) {
		r := d.recs[uid]
		if _, ok := r.Ifaces[podUID]; !ok {
			continue
		}
		if err := d.teardownLocked(&r, podUID, false); err != nil {
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
// again; a class in the driver's minor range without a record (a lost or
// corrupt checkpoint, an older driver's leftovers) is kept as an orphan
// until the first Synchronize has read the running pods' claims: a claim
// whose status names it adopts it, the rest are released then. Recorded
// classes stay: a restart withdraws nothing.
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
			logger.Info("a class no claim records: kept until the running pods' claims are read", "nic", nic, "class", fmt.Sprintf("%x", c.ClassID))
			if d.orphans[nic] == nil {
				d.orphans[nic] = map[uint32]bool{}
			}
			d.orphans[nic][minor] = true
			// a pod not in the records may hold a claim prepared here
			d.recovering = true
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

// releaseOrphans releases the orphans no claim adopted.
func (d *Driver) releaseOrphans(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var errs []error
	for nic, minors := range d.orphans {
		q, err := d.k.Read(nic)
		if err != nil {
			errs = append(errs, fmt.Errorf("NIC %s: %w", nic, err))
			continue
		}
		for minor := range minors {
			if c, ok := q.Find(q.Handle | minor); ok {
				klog.FromContext(ctx).Info("releasing a class no claim holds", "nic", nic, "class", fmt.Sprintf("%x", c.ClassID))
				_ = d.k.DelFw(nic, q.Handle, d.cfg.FwPrio, (minor-d.cfg.MinorBase)<<d.markShift())
				if err := d.k.Release(nic, c.ClassID); err != nil {
					errs = append(errs, err)
					continue
				}
			}
			delete(minors, minor)
		}
		if len(minors) == 0 {
			delete(d.orphans, nic)
		}
	}
	return errors.Join(errs...)
}

// adoptLocked gives a record rebuilt from its claim an orphan class, so
// that a lost checkpoint neither leaks that class nor admits a second:
// the one its claim's status names (the driver wrote it when it admitted
// the class), else, the status not written, one of the same shape on its
// NIC (its pods are marked again with its mark when they are shaped).
func (d *Driver) adoptLocked(r *checkpoint.Record, claim *resourceapi.ResourceClaim) {
	if len(d.orphans[r.NIC]) == 0 {
		return
	}
	q, err := d.k.Read(r.NIC)
	if err != nil {
		return
	}
	fits := func(minor uint32) bool {
		c, ok := q.Find(q.Handle | minor)
		if !ok || !d.orphans[r.NIC][minor] {
			return false
		}
		if r.Low() {
			return c.LowSlots == r.Slots && c.Share == r.Share
		}
		return c.HighSlots == r.Slots && c.GuaranteedRate >= r.RateBytes
	}
	adopt := func(minor uint32) {
		r.ClassID, r.Mark = q.Handle|minor, minor-d.cfg.MinorBase
		delete(d.orphans[r.NIC], minor)
	}
	for _, ds := range claim.Status.Devices {
		if ds.Driver != drslices.DriverName || ds.Pool != r.Pool || ds.Device != r.Device || ds.Data == nil {
			continue
		}
		var st DeviceStatus
		if json.Unmarshal(ds.Data.Raw, &st) != nil || st.NIC != r.NIC {
			continue
		}
		var major, minor uint32
		if _, err := fmt.Sscanf(st.ClassID, "%x:%x", &major, &minor); err != nil || major<<16 != q.Handle {
			continue
		}
		if fits(minor) {
			adopt(minor)
			return
		}
	}
	minors := make([]uint32, 0, len(d.orphans[r.NIC]))
	for m := range d.orphans[r.NIC] {
		minors = append(minors, m)
	}
	slices.Sort(minors)
	for _, m := range minors {
		if fits(m) {
			adopt(m)
			return
		}
	}
}

// podClaimNames returns the names of the ResourceClaims a pod uses.
func podClaimNames(pod *corev1.Pod) ([]string, error) {
	var out []string
	for _, pc := range pod.Spec.ResourceClaims {
		if pc.ResourceClaimName != nil {
			out = append(out, *pc.ResourceClaimName)
			continue
		}
		i := slices.IndexFunc(pod.Status.ResourceClaimStatuses, func(s corev1.PodResourceClaimStatus) bool { return s.Name == pc.Name })
		if i < 0 {
			return nil, fmt.Errorf("claim %q of the pod has no generated ResourceClaim yet", pc.Name)
		}
		if n := pod.Status.ResourceClaimStatuses[i].ResourceClaimName; n != nil {
			out = append(out, *n)
		}
	}
	return out, nil
}

// Resolve says whether a starting or running pod holds arbtable claims on
// this node. The records know a claim's pods from its reservedFor at
// Prepare, which the kubelet calls once per claim: a second pod on a shared
// claim, or a pod of a claim reserved for its workload (PodGroup), is found
// here by reading the pod and its claims; its claim's record gains the pod.
// A pod whose pod or claims cannot be read while such claims may exist
// fails: it must not run unshaped.
func (d *Driver) Resolve(ctx context.Context, podUID, namespace, name string) (bool, error) {
	d.mu.Lock()
	known := len(d.podRecordsLocked(podUID)) > 0
	// no record and a trusted checkpoint: no arbtable claim is prepared
	// here, so no pod can use one (the kubelet prepares before the sandbox)
	look := !known && d.src != nil && (len(d.recs) > 0 || d.recovering)
	src := d.src
	d.mu.Unlock()
	if !look {
		return known, nil
	}
	// one budget for the pod and its claims: the hook must answer
	// within the runtime's timeout
	timeout := d.cfg.APITimeout
	if timeout <= 0 {
		timeout = DefaultAPITimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	pod, err := src.GetPod(ctx, namespace, name)
	if err != nil {
		return false, fmt.Errorf("reading pod %s/%s for its arbtable claims: %w", namespace, name, err)
	}
	if string(pod.UID) != podUID {
		return false, fmt.Errorf("pod %s/%s is %s in the API, the sandbox's is %s", namespace, name, pod.UID, podUID)
	}
	names, err := podClaimNames(pod)
	if err != nil {
		return false, fmt.Errorf("pod %s/%s: %w", namespace, name, err)
	}
	found := false
	for _, cn := range names {
		c, err := src.GetClaim(ctx, namespace, cn)
		if err != nil {
			return false, fmt.Errorf("claim %s of pod %s/%s: %w", cn, namespace, name, err)
		}
		if c.Status.Allocation == nil || !slices.ContainsFunc(c.Status.Allocation.Devices.Results,
			func(r resourceapi.DeviceRequestAllocationResult) bool { return r.Driver == drslices.DriverName }) {
			continue
		}
		ok, err := d.attach(c, podUID)
		if err != nil {
			return false, fmt.Errorf("pod %s/%s: %w", namespace, name, err)
		}
		found = found || ok
	}
	return found, nil
}

// attach adds podUID to the record of claim c, rebuilding the record from
// the claim if the checkpoint lost it; false for a claim that holds no
// class (adminAccess only).
func (d *Driver) attach(c *resourceapi.ResourceClaim, podUID string) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	uid := string(c.UID)
	r, ok := d.recs[uid]
	if !ok {
		if len(d.pools) == 0 {
			if _, err := d.nicsLocked(); err != nil {
				return false, err
			}
		}
		if _, err := d.prepareLocked(c); err != nil {
			return false, err
		}
		if r, ok = d.recs[uid]; !ok {
			return false, nil
		}
		d.adoptLocked(&r, c)
	}
	if slices.Contains(r.PodUIDs, podUID) {
		d.recs[uid] = r
		return true, d.saveLocked()
	}
	r.PodUIDs = append(r.PodUIDs, podUID)
	d.recs[uid] = r
	return true, d.saveLocked()
}

// Sandbox is a running pod sandbox as NRI's Synchronize reports it.
type Sandbox struct {
	PodUID    string
	Namespace string
	Name      string
	// HostIf finds the pod's host-side interface (asked only of a pod
	// with claims)
	HostIf func() (string, error)
}

// Synchronize brings the records in line with the running sandboxes
// (NRI Synchronize after a driver start or a runtime reconnect): a pod
// that no longer runs is unmarked; the running pods' claims are read (a
// record a lost checkpoint dropped is rebuilt and adopts its class), the
// orphan classes no claim adopted are released, then each running pod
// with claims gets its class admitted and marked (if it lost it, or if it
// started while the driver was away: a shared claim's later pod, a lost
// checkpoint). Only the unmarking is done
// before it returns (before a new sandbox can start); the rest, which
// reads the API server, runs in the background: done closes when it ends,
// with its errors logged.
func (d *Driver) Synchronize(ctx context.Context, running []Sandbox) (done <-chan struct{}) {
	up := map[string]bool{}
	for _, s := range running {
		up[s.PodUID] = true
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
	logger := klog.FromContext(ctx)
	for _, p := range gone {
		if err := d.PodDown(ctx, p); err != nil {
			logger.Error(err, "unmarking a pod that no longer runs", "pod", p)
		}
	}
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		ok := true
		var shape []Sandbox
		for _, s := range running {
			has, err := d.Resolve(ctx, s.PodUID, s.Namespace, s.Name)
			if err != nil {
				// the pod runs; it cannot be failed now
				logger.Error(err, "a running pod's arbtable claims could not be read: it runs unshaped", "pod", s.Namespace+"/"+s.Name)
				ok = false
				continue
			}
			if has {
				shape = append(shape, s)
			}
		}
		// every running pod's claims read and their records rebuilt: an
		// orphan none adopted is free, and freed before a pod whose class
		// is gone is admitted one (an orphan holds slots and a mark). One
		// a pod could not read may be that pod's: all are kept then.
		if ok {
			if err := d.releaseOrphans(ctx); err != nil {
				logger.Error(err, "releasing classes no claim holds")
			}
		}
		for _, s := range shape {
			var hostIf string
			var ifErr error
			if s.HostIf != nil {
				hostIf, ifErr = s.HostIf()
			} else {
				ifErr = errors.New("no network namespace")
			}
			if err := d.PodUp(ctx, s.PodUID, hostIf, ifErr); err != nil {
				logger.Error(err, "shaping a running pod", "pod", s.Namespace+"/"+s.Name)
			}
		}
	}()
	return ch
}
