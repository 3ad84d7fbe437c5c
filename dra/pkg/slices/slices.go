// SPDX-License-Identifier: Apache-2.0

// Package slices builds the ResourceSlices arbtable-dra publishes: per
// arbtable NIC one pool with a counter set (the HIGH and LOW tables' free
// slots, the qdisc's free classes and the NIC's share of the node's
// marks) and, for each block size n = 1, 2,
// 4, ..., 64, 64/n HIGH devices that consume n slots, smallest blocks
// first, then 64 share devices that consume one LOW slot each.
package slices

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/utils/ptr"

	"arbtable.dev/dra/pkg/arbcore"
)

// DriverName is the driver's name and its attributes' domain.
const DriverName = "arbtable.dev"

// Counter names of a NIC's counter set.
const (
	CounterSlots    = "slots"
	CounterLowSlots = "low-slots"
	CounterClasses  = "classes"
	CounterMarks    = "marks"
)

// Values of AttrTable: a HIGH block (a reserved rate and bound) or a LOW
// share (best effort, weighted).
const (
	TableHigh = "high"
	TableLow  = "low"
)

// Attribute names (domain DriverName).
const (
	AttrNIC      = "nic"
	AttrSlots    = "slots"
	AttrDistance = "distance"
	AttrRateBits = "rateBits"
	AttrBoundNs  = "boundNs"
	AttrLinkBits = "linkBits"
	AttrMTU      = "mtu"
	AttrTable    = "table"
	AttrMaxShare = "maxShare"
)

// BlockSizes are the slot counts a device can hold: 64/d for the
// power-of-two distances d the allocator admits.
var BlockSizes = []int{1, 2, 4, 8, 16, 32, 64}

// NIC is one arbtable NIC of the node as the driver publishes it.
type NIC struct {
	Name         string         // interface name
	Params       arbcore.Params // the qdisc's parameters
	FreeSlots    int            // HIGH slots not held outside claims
	FreeLowSlots int            // LOW slots not held outside claims
	FreeClasses  int            // classes not held outside claims
	Marks        int            // the NIC's share of the driver's marks (SplitMarks)
	// Taints are set on every device of the NIC: what the driver cannot
	// serve on it now (the link down, a capacity the kernel no longer
	// has); NoSchedule keeps new claims off, allocated ones stay.
	Taints []resourceapi.DeviceTaint
}

// Taint keys (label names in the driver's domain); the value says why.
const (
	TaintLinkDown   = DriverName + "/link-down"
	TaintNICMissing = DriverName + "/nic-missing"
	TaintQdisc      = DriverName + "/qdisc"      // the root cannot be read or made
	TaintCapacity   = DriverName + "/capacity"   // the link is slower than the kernel's capacity
	TaintBroken     = DriverName + "/broken"     // guarantees the module reports broken (the mtu grew)
	TaintClassLost  = DriverName + "/class-lost" // recorded classes that could not be re-admitted
)

// Taint is a NoSchedule taint; value is cut to a label value (63
// characters of [-_.A-Za-z0-9], alphanumeric at both ends).
func Taint(key, value string) resourceapi.DeviceTaint {
	var b strings.Builder
	for _, r := range value {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	v := b.String()
	if len(v) > 63 {
		v = v[:63]
	}
	v = strings.Trim(v, "-_.")
	return resourceapi.DeviceTaint{Key: key, Value: v, Effect: resourceapi.DeviceTaintEffectNoSchedule}
}

// SplitMarks divides the node's span mark values among its nics NICs,
// the first span%nics one more. The marks are the node's (one mask, one
// mark per class on any NIC), but the API keeps counters within a pool
// and a pool is a NIC: shares that sum to at most span let the scheduler
// count them without ever overcommitting the node.
func SplitMarks(span, nics int) []int {
	out := make([]int, nics)
	for i := range out {
		out[i] = span / nics
		if i < span%nics {
			out[i]++
		}
	}
	return out
}

// Block is what a device of n slots guarantees on a NIC.
type Block struct {
	Slots     int
	Distance  int
	RateBytes uint64 // largest rate n slots guarantee, bytes/s
	BoundNs   uint64 // guaranteed head-of-line wait bound at distance 64/n
}

// Blocks computes, with the module's formulas, what each block size
// guarantees on a NIC with parameters p: a class at n slots holds at most
// n*maxweight units, the rate arbcore.UnitsRate gives for them, and its
// bound is the module's at distance 64/n for that rate.
func Blocks(p arbcore.Params) ([]Block, error) {
	out := make([]Block, 0, len(BlockSizes))
	for _, n := range BlockSizes {
		d := arbcore.Slots / n
		rate, err := arbcore.UnitsRate(p, uint32(n)*p.MaxWeight)
		if err != nil {
			return nil, fmt.Errorf("rate of %d slots: %w", n, err)
		}
		c, err := arbcore.RateCost(p, rate, uint32(d))
		if err != nil {
			return nil, fmt.Errorf("block of %d slots: %w", n, err)
		}
		if int(c.Slots) != n || !c.High {
			return nil, fmt.Errorf("block of %d slots: the core sizes rate %d B/s at distance %d as %d slots", n, rate, d, c.Slots)
		}
		out = append(out, Block{Slots: n, Distance: d, RateBytes: rate, BoundNs: c.BoundNs})
	}
	return out, nil
}

// Label turns an interface name into a DNS label part.
func Label(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

// PoolName is the pool of a NIC on a node.
func PoolName(node, nic string) string {
	return node + "-" + Label(nic)
}

// DeviceName is the k-th device of n slots on a NIC.
func DeviceName(nic string, n, k int) string {
	return fmt.Sprintf("%s-s%02d-%02d", Label(nic), n, k)
}

// LowDeviceName is the k-th share device on a NIC.
func LowDeviceName(nic string, k int) string {
	return fmt.Sprintf("%s-low-%02d", Label(nic), k)
}

// ParseDevice returns the slots a device name holds and its table: a
// HIGH block of n slots, or one LOW slot (low true).
func ParseDevice(name string) (n int, low bool, err error) {
	// "<nic>-low-kk": the suffix alone (a NIC's label may hold "-low-")
	if i := len(name) - len("-low-00"); i >= 0 && name[i:i+5] == "-low-" {
		k, err := strconv.Atoi(name[i+5:])
		if err != nil || k < 0 || k >= arbcore.Slots {
			return 0, false, fmt.Errorf("device %q: not an arbtable share device name", name)
		}
		return 1, true, nil
	}
	i := strings.LastIndex(name, "-s")
	if i < 0 {
		return 0, false, fmt.Errorf("device %q: not an arbtable device name", name)
	}
	var k int
	if _, err := fmt.Sscanf(name[i:], "-s%02d-%02d", &n, &k); err != nil {
		return 0, false, fmt.Errorf("device %q: %w", name, err)
	}
	for _, b := range BlockSizes {
		if b == n {
			return n, false, nil
		}
	}
	return 0, false, fmt.Errorf("device %q: %d slots is not a block size", name, n)
}

func intAttr(v int64) resourceapi.DeviceAttribute {
	return resourceapi.DeviceAttribute{IntValue: ptr.To(v)}
}

// Devices are a NIC's devices, smallest blocks first, then the share
// devices; blocks larger than the free slots, and share devices when no
// LOW slot is free, are left out (they could never be allocated).
func Devices(nic NIC, blocks []Block) []resourceapi.Device {
	set := Label(nic.Name)
	var devs []resourceapi.Device
	for _, b := range blocks {
		if b.Slots > nic.FreeSlots {
			continue
		}
		for k := 0; k < arbcore.Slots/b.Slots; k++ {
			devs = append(devs, resourceapi.Device{
				Name: DeviceName(nic.Name, b.Slots, k),
				Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
					AttrNIC:      {StringValue: ptr.To(nic.Name)},
					AttrSlots:    intAttr(int64(b.Slots)),
					AttrDistance: intAttr(int64(b.Distance)),
					AttrRateBits: intAttr(int64(b.RateBytes * 8)),
					AttrBoundNs:  intAttr(int64(b.BoundNs)),
					AttrLinkBits: intAttr(int64(nic.Params.Rate * 8)),
					AttrMTU:      intAttr(int64(nic.Params.MTU)),
					AttrTable:    {StringValue: ptr.To(TableHigh)},
				},
				ConsumesCounters: []resourceapi.DeviceCounterConsumption{{
					CounterSet: set,
					Counters: map[string]resourceapi.Counter{
						CounterSlots:   {Value: *resource.NewQuantity(int64(b.Slots), resource.DecimalSI)},
						CounterClasses: {Value: *resource.NewQuantity(1, resource.DecimalSI)},
						CounterMarks:   {Value: *resource.NewQuantity(1, resource.DecimalSI)},
					},
				}},
			})
		}
	}
	// share devices: no rate, no bound (the LOW table guarantees none),
	// so the attributes a rate selector reads are absent; the DeviceClass
	// share.arbtable.dev selects them by table first
	for k := 0; nic.FreeLowSlots > 0 && k < arbcore.Slots; k++ {
		devs = append(devs, resourceapi.Device{
			Name: LowDeviceName(nic.Name, k),
			Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
				AttrNIC:      {StringValue: ptr.To(nic.Name)},
				AttrTable:    {StringValue: ptr.To(TableLow)},
				AttrSlots:    intAttr(1),
				AttrDistance: intAttr(arbcore.Slots),
				AttrMaxShare: intAttr(int64(nic.Params.MaxWeight)),
				AttrLinkBits: intAttr(int64(nic.Params.Rate * 8)),
				AttrMTU:      intAttr(int64(nic.Params.MTU)),
			},
			ConsumesCounters: []resourceapi.DeviceCounterConsumption{{
				CounterSet: set,
				Counters: map[string]resourceapi.Counter{
					CounterLowSlots: {Value: *resource.NewQuantity(1, resource.DecimalSI)},
					CounterClasses:  {Value: *resource.NewQuantity(1, resource.DecimalSI)},
					CounterMarks:    {Value: *resource.NewQuantity(1, resource.DecimalSI)},
				},
			}},
		})
	}
	if len(nic.Taints) > 0 {
		for i := range devs {
			devs[i].Taints = append([]resourceapi.DeviceTaint(nil), nic.Taints...)
		}
	}
	return devs
}

// Build returns the driver's resources for the NICs of a node: one pool
// per NIC, its first slice the counter set alone (the API keeps shared
// counters out of device slices), then its devices in slices of at most
// resourceapi.ResourceSliceMaxDevicesWithAdvancedFeatures, in order (the
// slice controller names slices by their index, and the allocator walks
// pools by name, slices by name and devices in order: first fit takes the
// smallest matching block). A NIC whose numbers cannot be computed is
// left out and named in the error; the others' pools are returned.
func Build(node string, nics []NIC) (resourceslice.DriverResources, error) {
	res := resourceslice.DriverResources{Pools: map[string]resourceslice.Pool{}}
	var errs []error
	for _, nic := range nics {
		blocks, err := Blocks(nic.Params)
		if err != nil {
			errs = append(errs, fmt.Errorf("NIC %s: %w", nic.Name, err))
			continue
		}
		free := nic.FreeSlots
		if free < 0 {
			free = 0
		}
		low := max(nic.FreeLowSlots, 0)
		classes := nic.FreeClasses
		if classes < 0 {
			classes = 0
		}
		pool := resourceslice.Pool{Slices: []resourceslice.Slice{{
			SharedCounters: []resourceapi.CounterSet{{
				Name: Label(nic.Name),
				Counters: map[string]resourceapi.Counter{
					CounterSlots:    {Value: *resource.NewQuantity(int64(free), resource.DecimalSI)},
					CounterLowSlots: {Value: *resource.NewQuantity(int64(low), resource.DecimalSI)},
					CounterClasses:  {Value: *resource.NewQuantity(int64(classes), resource.DecimalSI)},
					CounterMarks:    {Value: *resource.NewQuantity(int64(max(nic.Marks, 0)), resource.DecimalSI)},
				},
			}},
		}}}
		devs := Devices(nic, blocks)
		for len(devs) > 0 {
			k := min(len(devs), resourceapi.ResourceSliceMaxDevicesWithAdvancedFeatures)
			pool.Slices = append(pool.Slices, resourceslice.Slice{Devices: devs[:k]})
			devs = devs[k:]
		}
		name := PoolName(node, nic.Name)
		if _, dup := res.Pools[name]; dup {
			return res, fmt.Errorf("NIC %s: pool %s twice (interface names that differ only in punctuation)", nic.Name, name)
		}
		res.Pools[name] = pool
	}
	return res, errors.Join(errs...)
}
