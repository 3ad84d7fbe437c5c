// SPDX-License-Identifier: Apache-2.0
package slices

import (
	"fmt"
	"strings"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"arbtable.dev/dra/pkg/arbcore"
)

// Two NICs of different rates, as the module sizes them: 10gbit and
// 1gbit, mtu as the module follows a 1500-byte Ethernet device.
var (
	fast = arbcore.Params{Rate: 1250000000, MTU: 65536, MaxWeight: 255, HighLimit: 4}
	slow = arbcore.Params{Rate: 125000000, MTU: 1514, MaxWeight: 255, HighLimit: 4}
)

func TestBlocksAreTheCoresNumbers(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    arbcore.Params
	}{{"10gbit", fast}, {"1gbit", slow}, {"maxweight 16", arbcore.Params{Rate: 125000000, MTU: 1514, MaxWeight: 16, HighLimit: 0}}} {
		t.Run(tc.name, func(t *testing.T) {
			blocks, err := Blocks(tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if len(blocks) != len(BlockSizes) {
				t.Fatalf("%d blocks", len(blocks))
			}
			ch, err := arbcore.HighCapacity(tc.p)
			if err != nil {
				t.Fatal(err)
			}
			for i, b := range blocks {
				if b.Slots != BlockSizes[i] || b.Distance*b.Slots != 64 {
					t.Fatalf("block %d: %+v", i, b)
				}
				// the rate n slots guarantee: n*maxweight of the
				// 64*maxweight units of C_high
				want := ch * uint64(b.Slots) / 64
				if d := int64(b.RateBytes) - int64(want); d < -1 || d > 1 {
					t.Errorf("n=%d: rate %d, n/64*C_high = %d", b.Slots, b.RateBytes, want)
				}
				// the core sizes that rate at that distance as n slots
				// with that bound, and one byte/s more needs more slots
				c, err := arbcore.RateCost(tc.p, b.RateBytes, uint32(b.Distance))
				if err != nil || int(c.Slots) != b.Slots || c.BoundNs != b.BoundNs {
					t.Errorf("n=%d: core cost %+v, %v; block %+v", b.Slots, c, err, b)
				}
				if b.Slots < 64 {
					if c, err := arbcore.RateCost(tc.p, b.RateBytes+1, uint32(b.Distance)); err == nil && int(c.Slots) == b.Slots {
						t.Errorf("n=%d: rate+1 still fits %d slots: the published rate is not the largest", b.Slots, b.Slots)
					}
				}
				// fewer slots (longer distance) never bound better
				if i > 0 && b.BoundNs > blocks[i-1].BoundNs {
					t.Errorf("n=%d: bound %d above n=%d's %d", b.Slots, b.BoundNs, blocks[i-1].Slots, blocks[i-1].BoundNs)
				}
			}
		})
	}
}

func intOf(t *testing.T, d resourceapi.Device, name resourceapi.QualifiedName) int64 {
	t.Helper()
	a, ok := d.Attributes[name]
	if !ok || a.IntValue == nil {
		t.Fatalf("device %s: no int attribute %s", d.Name, name)
	}
	return *a.IntValue
}

func TestBuildTwoNICs(t *testing.T) {
	tests := []struct {
		name      string
		nics      []NIC
		wantDevs  map[string]int // per pool
		wantSlots map[string]int64
	}{
		{
			name: "two NICs, empty tables",
			nics: []NIC{{Name: "eth0", Params: fast, FreeSlots: 64, FreeLowSlots: 64, FreeClasses: 64, Marks: 64},
				{Name: "eth1", Params: slow, FreeSlots: 64, FreeLowSlots: 64, FreeClasses: 64, Marks: 63}},
			// 127 blocks and 64 share devices each
			wantDevs:  map[string]int{"node1-eth0": 191, "node1-eth1": 191},
			wantSlots: map[string]int64{"node1-eth0": 64, "node1-eth1": 64},
		},
		{
			name: "a system class holds 8 slots on one, LOW full on the other",
			nics: []NIC{{Name: "eth0", Params: fast, FreeSlots: 56, FreeLowSlots: 64, FreeClasses: 63, Marks: 32},
				{Name: "enp0s4.100", Params: slow, FreeSlots: 64, FreeLowSlots: 0, FreeClasses: 63, Marks: 31}},
			// the 64-slot block can never be allocated on eth0, nor a
			// share on enp0s4.100
			wantDevs:  map[string]int{"node1-eth0": 190, "node1-enp0s4-100": 127},
			wantSlots: map[string]int64{"node1-eth0": 56, "node1-enp0s4-100": 64},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Build("node1", tc.nics)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Pools) != len(tc.nics) {
				t.Fatalf("%d pools", len(res.Pools))
			}
			for _, nic := range tc.nics {
				pname := PoolName("node1", nic.Name)
				pool, ok := res.Pools[pname]
				if !ok {
					t.Fatalf("no pool %s", pname)
				}
				// counters alone in the first slice
				cs := pool.Slices[0]
				if len(cs.Devices) != 0 || len(cs.SharedCounters) != 1 || cs.SharedCounters[0].Name != Label(nic.Name) {
					t.Fatalf("pool %s: first slice %+v", pname, cs)
				}
				if v := cs.SharedCounters[0].Counters[CounterSlots].Value; v.Value() != tc.wantSlots[pname] {
					t.Errorf("pool %s: slots counter %s", pname, v.String())
				}
				if v := cs.SharedCounters[0].Counters[CounterClasses].Value; v.Value() != int64(nic.FreeClasses) {
					t.Errorf("pool %s: classes counter %s", pname, v.String())
				}
				if v := cs.SharedCounters[0].Counters[CounterLowSlots].Value; v.Value() != int64(nic.FreeLowSlots) {
					t.Errorf("pool %s: low-slots counter %s", pname, v.String())
				}
				if v := cs.SharedCounters[0].Counters[CounterMarks].Value; v.Value() != int64(nic.Marks) {
					t.Errorf("pool %s: marks counter %s", pname, v.String())
				}
				blocks, _ := Blocks(nic.Params)
				byN := map[int]Block{}
				for _, b := range blocks {
					byN[b.Slots] = b
				}
				var all []resourceapi.Device
				for i, s := range pool.Slices[1:] {
					if len(s.SharedCounters) != 0 || len(s.Devices) == 0 ||
						len(s.Devices) > resourceapi.ResourceSliceMaxDevicesWithAdvancedFeatures {
						t.Fatalf("pool %s: device slice %d has %d devices, %d counter sets", pname, i, len(s.Devices), len(s.SharedCounters))
					}
					all = append(all, s.Devices...)
				}
				if len(all) != tc.wantDevs[pname] {
					t.Fatalf("pool %s: %d devices, want %d", pname, len(all), tc.wantDevs[pname])
				}
				count := map[int]int{}
				names := map[string]bool{}
				prev, lows := 0, 0
				for _, d := range all {
					if *d.Attributes[AttrTable].StringValue == TableLow {
						lows++
						_, hasRate := d.Attributes[AttrRateBits]
						_, hasBound := d.Attributes[AttrBoundNs]
						cc := d.ConsumesCounters
						if hasRate || hasBound || intOf(t, d, AttrSlots) != 1 || intOf(t, d, AttrDistance) != 64 ||
							intOf(t, d, AttrMaxShare) != int64(nic.Params.MaxWeight) || len(cc) != 1 ||
							cc[0].CounterSet != Label(nic.Name) || len(cc[0].Counters) != 3 {
							t.Errorf("share device %s: attributes %v, consumes %+v", d.Name, d.Attributes, cc)
						}
						vl, vc, vm := cc[0].Counters[CounterLowSlots].Value, cc[0].Counters[CounterClasses].Value, cc[0].Counters[CounterMarks].Value
						if vl.Value() != 1 || vc.Value() != 1 || vm.Value() != 1 {
							t.Errorf("share device %s: consumes %+v", d.Name, cc)
						}
						if n, low, err := ParseDevice(d.Name); err != nil || !low || n != 1 {
							t.Errorf("ParseDevice(%s) = %d, %v, %v", d.Name, n, low, err)
						}
						if names[d.Name] {
							t.Fatalf("device name %s twice", d.Name)
						}
						names[d.Name] = true
						prev = 1 << 10
						continue
					}
					if *d.Attributes[AttrTable].StringValue != TableHigh {
						t.Fatalf("device %s: table %v", d.Name, d.Attributes[AttrTable])
					}
					n := int(intOf(t, d, AttrSlots))
					if n < prev {
						t.Fatalf("pool %s: device %s (%d slots) after a %d-slot one: smallest first", pname, d.Name, n, prev)
					}
					prev = n
					count[n]++
					if names[d.Name] {
						t.Fatalf("device name %s twice", d.Name)
					}
					names[d.Name] = true
					if got, low, err := ParseDevice(d.Name); err != nil || got != n || low {
						t.Errorf("ParseDevice(%s) = %d, %v, %v", d.Name, got, low, err)
					}
					b := byN[n]
					if intOf(t, d, AttrDistance) != int64(64/n) || intOf(t, d, AttrRateBits) != int64(b.RateBytes*8) ||
						intOf(t, d, AttrBoundNs) != int64(b.BoundNs) || intOf(t, d, AttrLinkBits) != int64(nic.Params.Rate*8) ||
						intOf(t, d, AttrMTU) != int64(nic.Params.MTU) || *d.Attributes[AttrNIC].StringValue != nic.Name {
						t.Errorf("device %s: attributes %v, block %+v", d.Name, d.Attributes, b)
					}
					cc := d.ConsumesCounters
					if len(cc) != 1 {
						t.Fatalf("device %s: consumes %+v", d.Name, cc)
					}
					vs, vc, vm := cc[0].Counters[CounterSlots].Value, cc[0].Counters[CounterClasses].Value, cc[0].Counters[CounterMarks].Value
					if cc[0].CounterSet != Label(nic.Name) || len(cc[0].Counters) != 3 || vs.Value() != int64(n) || vc.Value() != 1 ||
						vm.Value() != 1 || d.AllowMultipleAllocations != nil {
						t.Errorf("device %s: consumes %+v", d.Name, cc)
					}
				}
				if want := map[bool]int{true: 64, false: 0}[nic.FreeLowSlots > 0]; lows != want {
					t.Errorf("pool %s: %d share devices, want %d", pname, lows, want)
				}
				for _, n := range BlockSizes {
					want := 64 / n
					if n > nic.FreeSlots {
						want = 0
					}
					if count[n] != want {
						t.Errorf("pool %s: %d devices of %d slots, want %d", pname, count[n], n, want)
					}
				}
			}
			// each NIC's own numbers: the two NICs' blocks differ
			fb, _ := Blocks(tc.nics[0].Params)
			sb, _ := Blocks(tc.nics[1].Params)
			if fb[0].RateBytes == sb[0].RateBytes || fb[0].BoundNs == sb[0].BoundNs {
				t.Errorf("NICs of different rates publish the same block: %+v %+v", fb[0], sb[0])
			}
		})
	}
}

// The marks are the node's: the NICs' shares sum to the mask's span, so
// the scheduler, counting each NIC's classes against its share, can never
// place more claims than the node has marks (three NICs of 64 classes at
// the default mask 0x7f, or two at 0x1f80, would).
func TestSplitMarks(t *testing.T) {
	for _, tc := range []struct {
		name       string
		span, nics int
		want       []int
	}{
		{"one NIC keeps the span", 127, 1, []int{127}},
		{"default mask 0x7f, two NICs", 127, 2, []int{64, 63}},
		{"default mask 0x7f, three NICs", 127, 3, []int{43, 42, 42}},
		{"mask 0x1f80, two NICs", 63, 2, []int{32, 31}},
		{"more NICs than marks", 2, 3, []int{1, 1, 0}},
		{"no NIC", 127, 0, []int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SplitMarks(tc.span, tc.nics)
			if len(got) != len(tc.want) {
				t.Fatalf("SplitMarks(%d, %d) = %v, want %v", tc.span, tc.nics, got, tc.want)
			}
			sum := 0
			for i := range got {
				sum += got[i]
				if got[i] != tc.want[i] {
					t.Fatalf("SplitMarks(%d, %d) = %v, want %v", tc.span, tc.nics, got, tc.want)
				}
			}
			if tc.nics > 0 && sum != tc.span {
				t.Fatalf("SplitMarks(%d, %d) = %v: sums to %d", tc.span, tc.nics, got, sum)
			}
			// published, the marks counter is the share
			var nics []NIC
			for i := range got {
				nics = append(nics, NIC{Name: fmt.Sprintf("eth%d", i), Params: slow, FreeSlots: 64, FreeLowSlots: 64, FreeClasses: 64, Marks: got[i]})
			}
			res, err := Build("n", nics)
			if err != nil {
				t.Fatal(err)
			}
			for _, nic := range nics {
				v := res.Pools[PoolName("n", nic.Name)].Slices[0].SharedCounters[0].Counters[CounterMarks].Value
				if v.Value() != int64(nic.Marks) {
					t.Errorf("%s: marks counter %s, want %d", nic.Name, v.String(), nic.Marks)
				}
			}
		})
	}
}

func TestLabelAndParse(t *testing.T) {
	for _, tc := range []struct{ in, want string }{{"eth0", "eth0"}, {"enp0s4.100", "enp0s4-100"}, {"Br_0", "br-0"}} {
		if got := Label(tc.in); got != tc.want {
			t.Errorf("Label(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		n    int
		low  bool
	}{{DeviceName("eth-low-1", 4, 3), 4, false}, {LowDeviceName("eth-low-1", 7), 1, true}, {LowDeviceName("eth0", 63), 1, true}} {
		if n, low, err := ParseDevice(tc.name); err != nil || n != tc.n || low != tc.low {
			t.Errorf("ParseDevice(%q) = %d, %v, %v; want %d, %v", tc.name, n, low, err, tc.n, tc.low)
		}
	}
	for _, bad := range []string{"eth0", "eth0-s03-00", "eth0-sxx-00", "eth0-low-64", "eth0-low-x", "eth0-low-7"} {
		if _, _, err := ParseDevice(bad); err == nil {
			t.Errorf("ParseDevice(%q) accepted", bad)
		}
	}
}

// Names the API server validates: counter set and counter names are
// DNS-1123 labels, attribute names C identifiers of at most 32 characters
// (a counter "lowSlots" made the apiserver refuse every slice).
func TestNamesTheAPIServerAccepts(t *testing.T) {
	res, err := Build("node1", []NIC{{Name: "enp0s4.100", Params: fast, FreeSlots: 64, FreeLowSlots: 64, FreeClasses: 64}})
	if err != nil {
		t.Fatal(err)
	}
	for _, pool := range res.Pools {
		for _, sl := range pool.Slices {
			for _, cs := range sl.SharedCounters {
				for _, e := range validation.IsDNS1123Label(cs.Name) {
					t.Errorf("counter set %q: %s", cs.Name, e)
				}
				for name := range cs.Counters {
					for _, e := range validation.IsDNS1123Label(name) {
						t.Errorf("counter %q: %s", name, e)
					}
				}
			}
			for _, d := range sl.Devices {
				for _, e := range validation.IsDNS1123Label(d.Name) {
					t.Errorf("device %q: %s", d.Name, e)
				}
				for name := range d.Attributes {
					if errs := validation.IsCIdentifier(string(name)); len(errs) > 0 || len(name) > 32 {
						t.Errorf("attribute %q: %v", name, errs)
					}
				}
				for _, cc := range d.ConsumesCounters {
					for name := range cc.Counters {
						for _, e := range validation.IsDNS1123Label(name) {
							t.Errorf("device %s consumes counter %q: %s", d.Name, name, e)
						}
					}
				}
			}
		}
	}
}

func TestTaints(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"carrier-down", "carrier-down"},
		{"link 1000Mbit/s < 10000Mbit/s", "link-1000Mbit-s---10000Mbit-s"},
		{"-x-", "x"},
		{strings.Repeat("a", 70), strings.Repeat("a", 63)},
	} {
		tn := Taint(TaintCapacity, tc.in)
		if tn.Value != tc.want || tn.Effect != resourceapi.DeviceTaintEffectNoSchedule {
			t.Errorf("Taint(%q) = %+v, want value %q, NoSchedule", tc.in, tn, tc.want)
		}
		if errs := validation.IsValidLabelValue(tn.Value); len(errs) > 0 {
			t.Errorf("Taint(%q): value %q: %v", tc.in, tn.Value, errs)
		}
		if errs := validation.IsQualifiedName(tn.Key); len(errs) > 0 {
			t.Errorf("key %q: %v", tn.Key, errs)
		}
	}
	nic := NIC{Name: "eth0", Params: fast, FreeSlots: 64, FreeLowSlots: 64, FreeClasses: 64,
		Taints: []resourceapi.DeviceTaint{Taint(TaintLinkDown, "carrier-down")}}
	// the unusable NIC first: a Build that stops at it builds nothing
	res, err := Build("n", []NIC{{Name: "eth1", Params: arbcore.Params{}, FreeSlots: 64}, nic})
	if err == nil || !strings.Contains(err.Error(), "eth1") {
		t.Errorf("Build with eth1 unusable: err %v, want one naming eth1", err)
	}
	pool, ok := res.Pools[PoolName("n", "eth0")]
	if !ok {
		t.Fatalf("eth0 not built beside an unusable eth1")
	}
	for _, s := range pool.Slices {
		if len(s.Devices) > resourceapi.ResourceSliceMaxDevicesWithAdvancedFeatures {
			t.Errorf("%d devices in a slice with taints", len(s.Devices))
		}
		for _, d := range s.Devices {
			if len(d.Taints) != 1 || d.Taints[0].Key != TaintLinkDown {
				t.Fatalf("device %s taints %+v", d.Name, d.Taints)
			}
		}
	}
}
