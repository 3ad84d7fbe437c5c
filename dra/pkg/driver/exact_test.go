// SPDX-License-Identifier: Apache-2.0
package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"sort"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"

	"arbtable.dev/dra/pkg/arbcore"
	"arbtable.dev/dra/pkg/kernel"
	drslices "arbtable.dev/dra/pkg/slices"
)

// classLister holds the project's DeviceClasses as shipped.
type classLister map[string]*resourceapi.DeviceClass

func (l classLister) List() ([]*resourceapi.DeviceClass, error) {
	var out []*resourceapi.DeviceClass
	for _, c := range l {
		out = append(out, c)
	}
	return out, nil
}

func (l classLister) Get(name string) (*resourceapi.DeviceClass, error) {
	if c, ok := l[name]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("device class %s not found", name)
}

// deviceClasses reads deploy/kubernetes/dra/deviceclass.yaml: the
// selectors the scheduler runs are the ones a cluster gets.
func deviceClasses(t *testing.T) classLister {
	t.Helper()
	f, err := os.Open("../../../deploy/kubernetes/dra/deviceclass.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := classLister{}
	dec := yaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var c resourceapi.DeviceClass
		if err := dec.Decode(&c); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if c.Kind != "DeviceClass" || len(c.Spec.Selectors) == 0 {
			t.Fatalf("deviceclass.yaml: %+v", c)
		}
		out[c.Name] = &c
	}
	if out["arbtable.dev"] == nil || out["share.arbtable.dev"] == nil {
		t.Fatalf("deviceclass.yaml: classes %v", out)
	}
	return out
}

// apiSlices turns what the driver publishes into the ResourceSlices the
// kubelet plugin's controller writes for this node (one generation),
// named as it names them: the slice's index in hex first (the allocator
// walks a pool's slices by name).
func apiSlices(node string, res resourceslice.DriverResources, gen int64) []*resourceapi.ResourceSlice {
	var pools []string
	for p := range res.Pools {
		pools = append(pools, p)
	}
	sort.Strings(pools)
	var out []*resourceapi.ResourceSlice
	for _, p := range pools {
		pool := res.Pools[p]
		for i, sl := range pool.Slices {
			out = append(out, &resourceapi.ResourceSlice{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%02x-%s-%s-%s", i, drslices.DriverName, node, p)},
				Spec: resourceapi.ResourceSliceSpec{
					Driver:         drslices.DriverName,
					Pool:           resourceapi.ResourcePool{Name: p, Generation: gen, ResourceSliceCount: int64(len(pool.Slices))},
					NodeName:       ptr.To(node),
					Devices:        sl.Devices,
					SharedCounters: sl.SharedCounters,
				},
			})
		}
	}
	return out
}

// kind of claim the property test makes
const (
	kBlock = iota
	kShare
	kAdmin
)

type liveClaim struct {
	uid   string
	kind  int
	res   resourceapi.DeviceRequestAllocationResult
	dev   resourceapi.Device
	nic   string
	slots int
}

// TestExactness runs the scheduler's own allocator
// (k8s.io/dynamic-resource-allocation/structured, the DeviceClasses of
// deploy/) over the slices the driver publishes, with Prepare and PodUp
// behind the fake kernel (the module's allocator, arbcore.Plan): random
// block claims (a rate and a bound, some with an exact rateBits), share
// claims, adminAccess claims and deletions on two or three NICs under
// several mark masks. After every step:
//   - every claim the allocator places is admitted by the driver at the
//     slots its device consumed (adminAccess: no class, no slot, no mark);
//   - every claim it refuses is one the kernel refuses on every NIC and
//     block that match it, or whose NIC has used its share of the node's
//     marks (slices.SplitMarks);
//   - the counters the scheduler has left equal the kernel's free slots,
//     NIC by NIC, and no NIC holds more marks than its share.
func TestExactness(t *testing.T) {
	medium := arbcore.Params{Rate: 312500000, MTU: 1514, MaxWeight: 64, HighLimit: 4}
	sysLow := kernel.RootConfig{Handle: 0x10000, SystemMinor: 0xfffe, SystemShare: 64}
	tests := []struct {
		name  string
		seed  int64
		steps int
		nics  []string
		root  kernel.RootConfig
		mask  uint32
		// weights of block, share and adminAccess claims; deletions
		// del in 10 steps
		mix [3]int
		del int
	}{
		{"two NICs, system class in LOW", 1, 500, []string{"eth0", "eth1"}, sysLow, 0x7f, [3]int{6, 3, 1}, 4},
		{"system class holds 4 HIGH slots", 2, 500, []string{"eth0", "eth1"},
			kernel.RootConfig{Handle: 0x10000, SystemMinor: 0xfffe, SystemRate: 100000, SystemDistance: 16}, 0x7f, [3]int{6, 3, 1}, 4},
		{"three NICs at the default mask", 3, 600, []string{"eth0", "eth1", "eth2"}, sysLow, 0x7f, [3]int{3, 6, 1}, 2},
		{"two NICs at mask 0x1f80", 4, 600, []string{"eth0", "eth1"},
			kernel.RootConfig{Handle: 0x10000, SystemMinor: 0xfffe, SystemRate: 100000, SystemDistance: 64}, 0x1f80, [3]int{3, 6, 1}, 2},
		{"marks run out first: mask 0xf", 5, 400, []string{"eth0", "eth1", "eth2"}, sysLow, 0xf, [3]int{4, 4, 2}, 3},
		{"only shares and adminAccess: LOW slots and classes run out", 6, 600, []string{"eth0", "eth1"}, sysLow, 0x7f, [3]int{0, 9, 1}, 1},
	}
	params := map[string]arbcore.Params{"eth0": fast, "eth1": slow, "eth2": medium}
	classes := deviceClasses(t)
	celCache := cel.NewCache(10, cel.Features{})
	// the kube-scheduler's at 1.37's default gates (AllocatorFeatures in
	// pkg/scheduler/framework/plugins/dynamicresources): the incubating
	// allocator, which walks pools and slices by name
	features := structured.Features{AdminAccess: true, PrioritizedList: true, PartitionableDevices: true, DeviceTaints: true,
		DeviceBindingAndStatus: true, ConsumableCapacity: true, FractionalCapacityRange: true}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node1"}}
	var total struct{ tried, placed, refused, admin, markRefused int }
	start := time.Now()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := &env{k: kernel.NewFake(params), pub: &fakePub{}, status: &fakeStatus{got: map[string]DeviceStatus{}}, cfg: testConfig(t)}
			e.cfg.Root, e.cfg.NICs, e.cfg.MarkMask = tc.root, tc.nics, tc.mask
			e.start(t)
			span := int(e.d.markSpan())
			shares := map[string]int{}
			for i, m := range drslices.SplitMarks(span, len(tc.nics)) {
				shares[tc.nics[i]] = m
			}
			blocks := map[string][]drslices.Block{}
			var all []drslices.Block
			for _, nic := range tc.nics {
				bl, err := drslices.Blocks(params[nic])
				if err != nil {
					t.Fatal(err)
				}
				blocks[nic] = bl
				all = append(all, bl...)
			}
			rng := rand.New(rand.NewSource(tc.seed))
			var lives []liveClaim
			var n struct{ blocks, shares, admin, refused, full, markFull, adminRefused, deleted int }
			for step := 0; step < tc.steps; step++ {
				if len(lives) > 0 && rng.Intn(10) < tc.del {
					i := rng.Intn(len(lives))
					l := lives[i]
					lives = append(lives[:i], lives[i+1:]...)
					if err := e.d.PodDown(ctx, "pod-"+l.uid); err != nil {
						t.Fatal(err)
					}
					e.unprepare(t, l.uid)
					n.deleted++
					continue
				}
				// the published slices, the devices live claims hold
				res, err := e.d.Resources()
				if err != nil {
					t.Fatal(err)
				}
				devs := map[string]resourceapi.Device{}
				for _, p := range res.Pools {
					for _, sl := range p.Slices {
						for _, d := range sl.Devices {
							devs[d.Name] = d
						}
					}
				}
				allocated := sets.New[structured.DeviceID]()
				for _, l := range lives {
					if l.kind != kAdmin {
						allocated.Insert(structured.MakeDeviceID(l.res.Driver, l.res.Pool, l.res.Device))
					}
				}
				alloc, err := structured.NewAllocator(ctx, features, structured.AllocatedState{AllocatedDevices: allocated},
					classes, apiSlices("node1", res, 1), celCache)
				if err != nil {
					t.Fatal(err)
				}
				uid := fmt.Sprintf("c%d", step)
				kind := kBlock
				switch r := rng.Intn(tc.mix[0] + tc.mix[1] + tc.mix[2]); {
				case r >= tc.mix[0]+tc.mix[1]:
					kind = kAdmin
				case r >= tc.mix[0]:
					kind = kShare
				}
				req := resourceapi.ExactDeviceRequest{DeviceClassName: "arbtable.dev", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1}
				var raw string
				var rate, bound int64
				share := 1 + rng.Intn(255)
				switch kind {
				case kShare:
					req.DeviceClassName = "share.arbtable.dev"
					// a share above a NIC's maxShare is selected away
					req.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{
						Expression: fmt.Sprintf(`device.attributes["arbtable.dev"].maxShare >= %d`, share)}}}
					raw = fmt.Sprintf(`{"apiVersion":"arbtable.dev/v1alpha1","kind":"ClassConfig","share":%d}`, share)
				case kAdmin:
					// visibility of a device, whatever claims hold it
					req.AdminAccess = ptr.To(true)
					if rng.Intn(2) == 0 {
						req.DeviceClassName = "share.arbtable.dev"
					}
				default:
					// a rate and a bound near what some block of some
					// NIC offers; half of the claims carry the rate
					b1, b2 := all[rng.Intn(len(all))], all[rng.Intn(len(all))]
					rate = int64(b1.RateBytes*8) * int64(50+rng.Intn(51)) / 100
					bound = int64(b2.BoundNs) * int64(100+rng.Intn(60)) / 100
					req.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: fmt.Sprintf(
						`device.attributes["arbtable.dev"].rateBits >= %d && device.attributes["arbtable.dev"].boundNs <= %d`, rate, bound)}}}
					if rng.Intn(2) == 0 {
						raw = fmt.Sprintf(`{"apiVersion":"arbtable.dev/v1alpha1","kind":"ClassConfig","rateBits":%d}`, rate)
					}
				}
				cl := &resourceapi.ResourceClaim{
					ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "claim-" + uid, UID: types.UID(uid)},
					Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{
						Requests: []resourceapi.DeviceRequest{{Name: "net", Exactly: &req}}}},
				}
				if raw != "" {
					cl.Spec.Devices.Config = []resourceapi.DeviceClaimConfiguration{{Requests: []string{"net"},
						DeviceConfiguration: resourceapi.DeviceConfiguration{Opaque: &resourceapi.OpaqueDeviceConfiguration{
							Driver: drslices.DriverName, Parameters: runtime.RawExtension{Raw: []byte(raw)}}}}}
				}
				total.tried++
				results, err := alloc.Allocate(ctx, node, []*resourceapi.ResourceClaim{cl})
				if err != nil {
					t.Fatalf("step %d: allocator: %v", step, err)
				}
				slotsBefore, lowBefore := map[string]int{}, map[string]int{}
				for _, nic := range tc.nics {
					slotsBefore[nic], lowBefore[nic] = e.k.FreeSlots(nic), e.k.FreeLowSlots(nic)
				}
				if len(results) == 1 {
					cl.Status.Allocation = &results[0]
					cl.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: "pod-" + uid, UID: types.UID("pod-" + uid)}}
					r := results[0].Devices.Results[0]
					d := devs[r.Device]
					l := liveClaim{uid: uid, kind: kind, res: r, dev: d, nic: *d.Attributes[drslices.AttrNIC].StringValue,
						slots: int(*d.Attributes[drslices.AttrSlots].IntValue)}
					if err := e.prepare(t, cl); err != nil {
						t.Fatalf("step %d: the allocator placed %s/%s, Prepare refused: %v", step, r.Pool, r.Device, err)
					}
					if err := e.d.PodUp(ctx, "pod-"+uid, "veth-"+uid, nil); err != nil {
						t.Fatalf("step %d: the allocator placed %s/%s, PodUp refused: %v", step, r.Pool, r.Device, err)
					}
					st, wrote := e.statusOf(uid)
					dHigh, dLow := slotsBefore[l.nic]-e.k.FreeSlots(l.nic), lowBefore[l.nic]-e.k.FreeLowSlots(l.nic)
					switch kind {
					case kAdmin:
						if !ptr.Deref(r.AdminAccess, false) {
							t.Fatalf("step %d: adminAccess claim allocated %+v", step, r)
						}
						if dHigh != 0 || dLow != 0 || wrote || e.k.Marks["veth-"+uid] != 0 {
							t.Fatalf("step %d: adminAccess claim on %s took %d HIGH, %d LOW slots (status %v, mark %#x): visibility only",
								step, r.Device, dHigh, dLow, wrote, e.k.Marks["veth-"+uid])
						}
						n.admin++
						total.admin++
					case kShare:
						if dLow != 1 || dHigh != 0 || st.Table != drslices.TableLow || st.Share != uint32(share) {
							t.Fatalf("step %d: share %d on %s: %d LOW, %d HIGH slots, status %+v", step, share, r.Device, dLow, dHigh, st)
						}
						n.shares++
					default:
						if dHigh != l.slots || dLow != 0 || st.Slots != l.slots || st.BoundNs > uint64(bound) ||
							(raw == "" && int64(st.GuaranteedRateBits) < rate) {
							t.Fatalf("step %d: rate %d bound %d on %s: the kernel took %d slots, the device %d, status %+v",
								step, rate, bound, r.Device, dHigh, l.slots, st)
						}
						// the smallest block that serves it: a smaller
						// matching one fits wherever a larger one does
						for _, b := range blocks[l.nic] {
							if b.Slots < l.slots && int64(b.RateBytes*8) >= rate && int64(b.BoundNs) <= bound {
								t.Fatalf("step %d: rate %d bound %d placed on %s (%d slots), a %d-slot block of %s serves it",
									step, rate, bound, r.Device, l.slots, b.Slots, l.nic)
							}
						}
						n.blocks++
					}
					total.placed++
					lives = append(lives, l)
				} else {
					// refused: the kernel must refuse it on every NIC
					// and block that match, unless that NIC's share of
					// the marks is used up
					total.refused++
					n.refused++
					marks := map[string]int{}
					for _, rec := range e.d.Records() {
						if rec.Mark != 0 {
							marks[rec.NIC]++
						}
					}
					probe := uint32(0x10000 | 0x7f00)
					markOnly := false
					for _, nic := range tc.nics {
						var ok bool
						switch kind {
						case kAdmin:
							continue
						case kShare:
							if share > int(params[nic].MaxWeight) {
								continue
							}
							if _, err := e.k.AdmitShare(nic, probe, uint32(share), ""); err == nil {
								ok = true
							}
						default:
							for _, b := range blocks[nic] {
								if int64(b.RateBytes*8) < rate || int64(b.BoundNs) > bound {
									continue
								}
								if _, err := e.k.Admit(nic, probe, b.RateBytes, uint32(b.Distance), ""); err == nil {
									ok = true
									break
								}
							}
						}
						if !ok {
							continue
						}
						_ = e.k.Release(nic, probe)
						if marks[nic] < shares[nic] {
							t.Fatalf("step %d: the allocator refused kind %d (rate %d bound %d share %d); %s admits it, %d of its %d marks held",
								step, kind, rate, bound, share, nic, marks[nic], shares[nic])
						}
						markOnly = true
					}
					switch {
					case kind == kAdmin:
						n.adminRefused++
					case markOnly:
						n.markFull++
						total.markRefused++
					default:
						n.full++
					}
				}
				// the scheduler's remaining counters are the kernel's
				left := map[string]map[string]int64{}
				for _, p := range res.Pools {
					for _, sl := range p.Slices {
						for _, cs := range sl.SharedCounters {
							left[cs.Name] = map[string]int64{}
							for c, q := range cs.Counters {
								left[cs.Name][c] = q.Value.Value()
							}
						}
					}
				}
				for _, l := range lives {
					if l.kind == kAdmin {
						continue
					}
					for _, cc := range l.dev.ConsumesCounters {
						for c, q := range cc.Counters {
							left[cc.CounterSet][c] -= q.Value.Value()
						}
					}
				}
				for _, nic := range tc.nics {
					lf := left[drslices.Label(nic)]
					if got, want := int64(e.k.FreeSlots(nic)), lf[drslices.CounterSlots]; got != want {
						t.Fatalf("step %d: %s: kernel %d free slots, scheduler counts %d", step, nic, got, want)
					}
					if got, want := int64(e.k.FreeLowSlots(nic)), lf[drslices.CounterLowSlots]; got != want {
						t.Fatalf("step %d: %s: kernel %d free LOW slots, scheduler counts %d", step, nic, got, want)
					}
					if lf[drslices.CounterMarks] < 0 || lf[drslices.CounterClasses] < 0 {
						t.Fatalf("step %d: %s: counters overcommitted: %v", step, nic, lf)
					}
				}
			}
			if n.blocks+n.shares < tc.steps/8 || n.full+n.markFull < tc.steps/30 || n.deleted < tc.steps/20 || n.admin == 0 {
				t.Fatalf("a run that tests little: %+v", n)
			}
			t.Logf("%+v", n)
		})
	}
	t.Logf("%d claims tried, %d placed (%d adminAccess), %d refused (%d for a NIC's mark share alone), %v",
		total.tried, total.placed, total.admin, total.refused, total.markRefused, time.Since(start).Round(time.Millisecond))
}

// An adminAccess claim gives visibility of a device that another claim
// may hold: the scheduler counts nothing for it, so the driver admits no
// class, takes no slot and no mark, and marks no pod.
func TestAdminAccessIsVisibilityOnly(t *testing.T) {
	for _, tc := range []struct {
		name string
		cl   func() *resourceapi.ResourceClaim
	}{
		{"a block", func() *resourceapi.ResourceClaim { return claim("a1", "eth0", 16, 0, "pod-a1") }},
		{"a share", func() *resourceapi.ResourceClaim { return shareClaim("a1", "eth0", 3, "") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			// a claim holds the device; the admin claim sees the same one
			held := tc.cl()
			held.UID, held.Status.ReservedFor[0].UID = "h1", "pod-h1"
			if err := e.prepare(t, held); err != nil {
				t.Fatal(err)
			}
			if err := e.d.PodUp(ctx, "pod-h1", "veth-h1", nil); err != nil {
				t.Fatal(err)
			}
			free, low := e.k.FreeSlots("eth0"), e.k.FreeLowSlots("eth0")
			cl := tc.cl()
			cl.Status.Allocation.Devices.Results[0].AdminAccess = ptr.To(true)
			if err := e.prepare(t, cl); err != nil {
				t.Fatal(err)
			}
			if err := e.d.PodUp(ctx, "pod-a1", "veth-a1", nil); err != nil {
				t.Fatal(err)
			}
			if f, l := e.k.FreeSlots("eth0"), e.k.FreeLowSlots("eth0"); f != free || l != low {
				t.Fatalf("adminAccess claim: free slots %d -> %d, LOW %d -> %d", free, f, low, l)
			}
			if _, ok := e.d.Records()["a1"]; ok || e.k.Marks["veth-a1"] != 0 || e.d.HasClaims("pod-a1") {
				t.Fatalf("adminAccess claim recorded or marked: %v, mark %#x", e.d.Records()["a1"], e.k.Marks["veth-a1"])
			}
			e.unprepare(t, "a1")
			if f := e.k.FreeSlots("eth0"); f != free {
				t.Fatalf("unprepare of the adminAccess claim: free slots %d -> %d", free, f)
			}
		})
	}
}
