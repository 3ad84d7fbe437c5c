// SPDX-License-Identifier: Apache-2.0
package driver

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"testing"

	resourceapi "k8s.io/api/resource/v1"

	"arbtable.dev/dra/pkg/arbcore"
	"arbtable.dev/dra/pkg/kernel"
	drslices "arbtable.dev/dra/pkg/slices"
)

// scheduler models the DRA allocator on the published devices for a
// one-device request: the DeviceClass's selector first (arbtable.dev:
// table high; share.arbtable.dev: table low), then a block request's CEL
// selector on rateBits and boundNs; first fit over pools by name, slices
// in order, devices in order, a device taken only when not allocated and
// every counter it consumes fits.
type scheduler struct {
	devs []schedDev
	used map[string]bool
	left map[string]map[string]int64 // counter set -> counter -> remaining
}

type schedDev struct {
	pool string
	dev  resourceapi.Device
}

func newScheduler(t *testing.T, res map[string][]resourceapi.Device, counters map[string]map[string]int64) *scheduler {
	s := &scheduler{used: map[string]bool{}, left: counters}
	var pools []string
	for p := range res {
		pools = append(pools, p)
	}
	sort.Strings(pools)
	for _, p := range pools {
		for _, d := range res[p] {
			s.devs = append(s.devs, schedDev{pool: p, dev: d})
		}
	}
	return s
}

func attr(d resourceapi.Device, name string) int64 {
	return *d.Attributes[resourceapi.QualifiedName(name)].IntValue
}

// place takes the first free device of table whose counters fit; for a
// block, rateBits >= the request's and boundNs <= its bound.
func (s *scheduler) place(table string, rateBits, boundNs int64) (schedDev, bool) {
	for _, c := range s.devs {
		if s.used[c.dev.Name] || *c.dev.Attributes[drslices.AttrTable].StringValue != table {
			continue
		}
		if table == drslices.TableHigh && (attr(c.dev, drslices.AttrRateBits) < rateBits || attr(c.dev, drslices.AttrBoundNs) > boundNs) {
			continue
		}
		cc := c.dev.ConsumesCounters[0]
		fits := true
		for name, q := range cc.Counters {
			fits = fits && q.Value.Value() <= s.left[cc.CounterSet][name]
		}
		if !fits {
			continue
		}
		s.used[c.dev.Name] = true
		for name, q := range cc.Counters {
			s.left[cc.CounterSet][name] -= q.Value.Value()
		}
		return c, true
	}
	return schedDev{}, false
}

func (s *scheduler) free(c schedDev) {
	cc := c.dev.ConsumesCounters[0]
	delete(s.used, c.dev.Name)
	for name, q := range cc.Counters {
		s.left[cc.CounterSet][name] += q.Value.Value()
	}
}

// TestExactness: random sequences of claims (blocks and shares) and
// deletions on two NICs; every placement the scheduler model makes on the
// published devices is admitted by the module's allocator (the fake
// kernel is arbcore.Plan) at exactly the counted slots, and every request
// the scheduler cannot place is one the allocator refuses on every NIC
// and block that matches it (a share: on every NIC).
func TestExactness(t *testing.T) {
	tests := []struct {
		name  string
		seed  int64
		steps int
		root  kernel.RootConfig
		// one request in shareIn is a share; deletions 4 in 10 steps,
		// 1 in 10 when all are shares (the LOW table and classes fill)
		shareIn int
	}{
		{"system class in LOW", 1, 600, kernel.RootConfig{Handle: 0x10000, SystemMinor: 0xfffe, SystemShare: 64}, 3},
		{"system class holds 4 HIGH slots", 2, 600, kernel.RootConfig{Handle: 0x10000, SystemMinor: 0xfffe, SystemRate: 100000, SystemDistance: 16}, 3},
		{"system class holds 1 HIGH slot", 3, 600, kernel.RootConfig{Handle: 0x10000, SystemMinor: 0xfffe, SystemRate: 100000, SystemDistance: 64}, 3},
		{"another seed", 4, 1000, kernel.RootConfig{Handle: 0x10000, SystemMinor: 0xfffe, SystemRate: 100000, SystemDistance: 32}, 3},
		{"only shares: LOW slots and classes run out", 5, 1000, kernel.RootConfig{Handle: 0x10000, SystemMinor: 0xfffe, SystemShare: 64}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := &env{k: kernel.NewFake(map[string]arbcore.Params{"eth0": fast, "eth1": slow}), pub: &fakePub{},
				status: &fakeStatus{got: map[string]DeviceStatus{}}, cfg: testConfig(t)}
			e.cfg.Root = tc.root
			e.start(t)
			res := map[string][]resourceapi.Device{}
			counters := map[string]map[string]int64{}
			var blocks []drslices.Block
			for pname, pool := range e.pub.last.Pools {
				cs := pool.Slices[0].SharedCounters[0]
				counters[cs.Name] = map[string]int64{}
				for name, q := range cs.Counters {
					counters[cs.Name][name] = q.Value.Value()
				}
				for _, sl := range pool.Slices[1:] {
					res[pname] = append(res[pname], sl.Devices...)
				}
			}
			bf, _ := drslices.Blocks(fast)
			bs, _ := drslices.Blocks(slow)
			blocks = append(append(blocks, bf...), bs...)
			sch := newScheduler(t, res, counters)
			rng := rand.New(rand.NewSource(tc.seed))
			type live struct {
				uid string
				dev schedDev
			}
			var lives []live
			placed, refused, full, deleted, shares, sharesFull := 0, 0, 0, 0, 0, 0
			for step := 0; step < tc.steps; step++ {
				del := 4
				if tc.shareIn == 1 {
					del = 1
				}
				if len(lives) > 0 && rng.Intn(10) < del {
					i := rng.Intn(len(lives))
					l := lives[i]
					lives = append(lives[:i], lives[i+1:]...)
					if err := e.d.PodDown(ctx, "pod-"+l.uid); err != nil {
						t.Fatal(err)
					}
					e.unprepare(t, l.uid)
					sch.free(l.dev)
					deleted++
				} else if rng.Intn(tc.shareIn) == 0 {
					// a share in its own terms: a weight
					uid := fmt.Sprintf("c%d", step)
					share := 1 + rng.Intn(255)
					c, ok := sch.place(drslices.TableLow, 0, 0)
					if ok {
						nic := *c.dev.Attributes[drslices.AttrNIC].StringValue
						cl := claim(uid, nic, 1, 0, "pod-"+uid)
						cl.Status.Allocation.Devices.Results[0].Device = c.dev.Name
						withConfig(cl, fmt.Sprintf(`{"apiVersion":"arbtable.dev/v1alpha1","kind":"ClassConfig","share":%d}`, share))
						if err := e.prepare(t, cl); err != nil {
							t.Fatalf("step %d: prepare %s: %v", step, c.dev.Name, err)
						}
						if err := e.d.PodUp(ctx, "pod-"+uid, "veth-"+uid, nil); err != nil {
							t.Fatalf("step %d: the scheduler placed share %s on %s and the allocator refused: %v", step, c.dev.Name, nic, err)
						}
						if st := e.status.got[uid]; st.Table != drslices.TableLow || st.Share != uint32(share) || st.Slots != 1 {
							t.Fatalf("step %d: share %d: status %+v", step, share, st)
						}
						lives = append(lives, live{uid, c})
						shares++
					} else {
						for _, nic := range []string{"eth0", "eth1"} {
							if _, err := e.k.AdmitShare(nic, uint32(0x10000|0x7f00), uint32(share), ""); err == nil {
								t.Fatalf("step %d: the scheduler left a share unplaced, the allocator admits it on %s", step, nic)
							}
						}
						sharesFull++
					}
				} else {
					// a request in the pod's own terms: a rate and a
					// bound near what some block of some NIC offers
					b1 := blocks[rng.Intn(len(blocks))]
					b2 := blocks[rng.Intn(len(blocks))]
					rate := int64(b1.RateBytes*8) * int64(50+rng.Intn(51)) / 100
					bound := int64(b2.BoundNs) * int64(100+rng.Intn(60)) / 100
					uid := fmt.Sprintf("c%d", step)
					c, ok := sch.place(drslices.TableHigh, rate, bound)
					if ok {
						n := int(attr(c.dev, drslices.AttrSlots))
						nic := *c.dev.Attributes[drslices.AttrNIC].StringValue
						k := 0
						fmt.Sscanf(c.dev.Name[len(c.dev.Name)-2:], "%02d", &k)
						if err := e.prepare(t, claim(uid, nic, n, k, "pod-"+uid)); err != nil {
							t.Fatalf("step %d: prepare %s: %v", step, c.dev.Name, err)
						}
						if err := e.d.PodUp(ctx, "pod-"+uid, "veth-"+uid, nil); err != nil {
							t.Fatalf("step %d: the scheduler placed %s (%d slots on %s) and the allocator refused: %v", step, c.dev.Name, n, nic, err)
						}
						lives = append(lives, live{uid, c})
						placed++
					} else {
						// every NIC and block the selector matches must
						// be refused by the allocator as it stands
						matched := false
						for _, nic := range []string{"eth0", "eth1"} {
							p := fast
							if nic == "eth1" {
								p = slow
							}
							bl, _ := drslices.Blocks(p)
							for _, b := range bl {
								if int64(b.RateBytes*8) < rate || int64(b.BoundNs) > bound {
									continue
								}
								matched = true
								probe := uint32(0x10000 | 0x7f00)
								if _, err := e.k.Admit(nic, probe, b.RateBytes, uint32(b.Distance), ""); err == nil {
									t.Fatalf("step %d: the scheduler left rate %d bound %d unplaced, the allocator admits %d slots on %s",
										step, rate, bound, b.Slots, nic)
								}
							}
						}
						refused++
						if matched {
							full++
						}
					}
				}
				// the counters the scheduler holds equal the kernel's
				// free slots, NIC by NIC
				for _, nic := range []string{"eth0", "eth1"} {
					left := sch.left[drslices.Label(nic)]
					if got, want := int64(e.k.FreeSlots(nic)), left[drslices.CounterSlots]; got != want {
						t.Fatalf("step %d: %s: kernel %d free slots, scheduler counts %d", step, nic, got, want)
					}
					if got, want := int64(e.k.FreeLowSlots(nic)), left[drslices.CounterLowSlots]; got != want {
						t.Fatalf("step %d: %s: kernel %d free LOW slots, scheduler counts %d", step, nic, got, want)
					}
				}
			}
			if tc.shareIn == 1 && (sharesFull < tc.steps/10 || shares < tc.steps/20) {
				t.Fatalf("only shares, yet %d placed and %d unplaced for capacity", shares, sharesFull)
			}
			if tc.shareIn > 1 && (placed < tc.steps/6 || full < tc.steps/30 || deleted < tc.steps/10 || shares < tc.steps/10) {
				t.Fatalf("a run that tests little: %d placed, %d unplaced for capacity, %d deleted, %d shares", placed, full, deleted, shares)
			}
			t.Logf("%d blocks placed (all admitted at the counted slots), %d unplaced (%d with a matching block, all refused by the allocator), %d shares placed, %d unplaced (refused by the allocator), %d deleted",
				placed, refused, full, shares, sharesFull, deleted)
		})
	}
}
