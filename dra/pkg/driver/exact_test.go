// SPDX-License-Identifier: GPL-2.0
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
// one-device request with a CEL selector on rateBits and boundNs: first
// fit over pools by name, slices in order, devices in order, a device
// taken only when not allocated and its counters fit.
type scheduler struct {
	devs    []schedDev
	used    map[string]bool
	slots   map[string]int64 // counter set -> remaining
	classes map[string]int64
}

type schedDev struct {
	pool string
	dev  resourceapi.Device
}

func newScheduler(t *testing.T, res map[string][]resourceapi.Device, counters map[string][2]int64) *scheduler {
	s := &scheduler{used: map[string]bool{}, slots: map[string]int64{}, classes: map[string]int64{}}
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
	for k, v := range counters {
		s.slots[k], s.classes[k] = v[0], v[1]
	}
	return s
}

func attr(d resourceapi.Device, name string) int64 {
	return *d.Attributes[resourceapi.QualifiedName(name)].IntValue
}

func (s *scheduler) place(rateBits, boundNs int64) (schedDev, bool) {
	for _, c := range s.devs {
		if s.used[c.dev.Name] || attr(c.dev, drslices.AttrRateBits) < rateBits || attr(c.dev, drslices.AttrBoundNs) > boundNs {
			continue
		}
		cc := c.dev.ConsumesCounters[0]
		n, k := cc.Counters[drslices.CounterSlots].Value, cc.Counters[drslices.CounterClasses].Value
		if n.Value() > s.slots[cc.CounterSet] || k.Value() > s.classes[cc.CounterSet] {
			continue
		}
		s.used[c.dev.Name] = true
		s.slots[cc.CounterSet] -= n.Value()
		s.classes[cc.CounterSet] -= k.Value()
		return c, true
	}
	return schedDev{}, false
}

func (s *scheduler) free(c schedDev) {
	cc := c.dev.ConsumesCounters[0]
	n, k := cc.Counters[drslices.CounterSlots].Value, cc.Counters[drslices.CounterClasses].Value
	delete(s.used, c.dev.Name)
	s.slots[cc.CounterSet] += n.Value()
	s.classes[cc.CounterSet] += k.Value()
}

// TestExactness: random sequences of claims and deletions on two NICs;
// every placement the scheduler model makes on the published devices is
// admitted by the module's allocator (the fake kernel is arbcore.Plan) at
// exactly the counted slots, and every request the scheduler cannot place
// is one the allocator refuses on every NIC and block that matches it.
func TestExactness(t *testing.T) {
	tests := []struct {
		name  string
		seed  int64
		steps int
		root  kernel.RootConfig
	}{
		{"system class in LOW", 1, 600, kernel.RootConfig{Handle: 0x10000, SystemMinor: 0xfffe, SystemShare: 64}},
		{"system class holds 4 HIGH slots", 2, 600, kernel.RootConfig{Handle: 0x10000, SystemMinor: 0xfffe, SystemRate: 100000, SystemDistance: 16}},
		{"system class holds 1 HIGH slot", 3, 600, kernel.RootConfig{Handle: 0x10000, SystemMinor: 0xfffe, SystemRate: 100000, SystemDistance: 64}},
		{"another seed", 4, 1000, kernel.RootConfig{Handle: 0x10000, SystemMinor: 0xfffe, SystemRate: 100000, SystemDistance: 32}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := &env{k: kernel.NewFake(map[string]arbcore.Params{"eth0": fast, "eth1": slow}), pub: &fakePub{},
				status: &fakeStatus{got: map[string]DeviceStatus{}}, cfg: testConfig(t)}
			e.cfg.Root = tc.root
			e.start(t)
			res := map[string][]resourceapi.Device{}
			counters := map[string][2]int64{}
			var blocks []drslices.Block
			for pname, pool := range e.pub.last.Pools {
				cs := pool.Slices[0].SharedCounters[0]
				s, k := cs.Counters[drslices.CounterSlots].Value, cs.Counters[drslices.CounterClasses].Value
				counters[cs.Name] = [2]int64{s.Value(), k.Value()}
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
			placed, refused, full, deleted := 0, 0, 0, 0
			for step := 0; step < tc.steps; step++ {
				if len(lives) > 0 && rng.Intn(10) < 4 {
					i := rng.Intn(len(lives))
					l := lives[i]
					lives = append(lives[:i], lives[i+1:]...)
					if err := e.d.PodDown(ctx, "pod-"+l.uid); err != nil {
						t.Fatal(err)
					}
					e.unprepare(t, l.uid)
					sch.free(l.dev)
					deleted++
				} else {
					// a request in the pod's own terms: a rate and a
					// bound near what some block of some NIC offers
					b1 := blocks[rng.Intn(len(blocks))]
					b2 := blocks[rng.Intn(len(blocks))]
					rate := int64(b1.RateBytes*8) * int64(50+rng.Intn(51)) / 100
					bound := int64(b2.BoundNs) * int64(100+rng.Intn(60)) / 100
					uid := fmt.Sprintf("c%d", step)
					c, ok := sch.place(rate, bound)
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
					if got, want := int64(e.k.FreeSlots(nic)), sch.slots[drslices.Label(nic)]; got != want {
						t.Fatalf("step %d: %s: kernel %d free slots, scheduler counts %d", step, nic, got, want)
					}
				}
			}
			if placed < tc.steps/4 || full < tc.steps/20 || deleted < tc.steps/10 {
				t.Fatalf("a run that tests little: %d placed, %d unplaced for capacity, %d deleted", placed, full, deleted)
			}
			t.Logf("%d placed (all admitted at the counted slots), %d unplaced (%d with a matching block, all refused by the allocator), %d deleted",
				placed, refused, full, deleted)
		})
	}
}
