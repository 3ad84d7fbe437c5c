// SPDX-License-Identifier: Apache-2.0

// Package arbcore reaches the sch_arbtable module's own sizing formulas and
// allocator through libarbtable (LIBARBTABLE_0.2: arbtable_cost_*,
// arbtable_plan_*), so that what the driver publishes and what the kernel
// admits come from one piece of code.
package arbcore

/*
#cgo CFLAGS: -I${SRCDIR}/../../../lib/include
#cgo LDFLAGS: -L${SRCDIR}/../../../build/lib -Wl,-rpath,${SRCDIR}/../../../build/lib -larbtable
#include <stdlib.h>
#include <arbtable/arbtable.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"
)

// Slots is the number of slots of one arbitration table.
const Slots = 64

// MaxClasses is the number of classes one qdisc holds (both tables).
const MaxClasses = 64

// Params are the qdisc parameters a cost depends on.
type Params struct {
	Rate         uint64 // qdisc rate C, bytes/s
	MTU          uint32 // bytes
	MaxWeight    uint32 // 1..255
	HighLimit    uint32 // 4096-byte blocks
	StrictCeil   uint64 // bytes/s, 0 = no strict class
	StrictCburst uint32 // bytes, 0 = the kernel's default
}

// Cost is what one admission costs in the HIGH table.
type Cost struct {
	Distance  uint32
	Slots     uint32
	Units     uint32
	UnitsRate uint64 // bytes/s the units guarantee
	BoundNs   uint64 // placement-independent head-of-line wait bound
	High      bool
}

// ErrNoSpace is returned when a request's slots are not free.
var ErrNoSpace = errors.New("no space in the table")

func (p Params) c() C.struct_arbtable_cost_params {
	return C.struct_arbtable_cost_params{
		rate:          C.uint64_t(p.Rate),
		strict_ceil:   C.uint64_t(p.StrictCeil),
		mtu:           C.uint32_t(p.MTU),
		maxweight:     C.uint32_t(p.MaxWeight),
		highlimit:     C.uint32_t(p.HighLimit),
		strict_cburst: C.uint32_t(p.StrictCburst),
	}
}

// HighCapacity returns C_high, the rate the HIGH table is guaranteed, in
// bytes/s.
func HighCapacity(p Params) (uint64, error) {
	cp := p.c()
	v := uint64(C.arbtable_cost_high_capacity(&cp, C.size_t(unsafe.Sizeof(cp))))
	if v == 0 {
		return 0, fmt.Errorf("arbtable parameters %+v refused by the core", p)
	}
	return v, nil
}

// UnitsRate returns the rate, bytes/s, that units HIGH weight units
// guarantee.
func UnitsRate(p Params, units uint32) (uint64, error) {
	cp := p.c()
	v := uint64(C.arbtable_cost_units_rate(&cp, C.size_t(unsafe.Sizeof(cp)), C.uint32_t(units)))
	if v == 0 && units != 0 {
		return 0, fmt.Errorf("arbtable parameters %+v refused by the core", p)
	}
	return v, nil
}

func rateOpts(rate uint64, distance uint32) C.struct_arbtable_class_opts {
	return C.struct_arbtable_class_opts{
		set:      C.ARBTABLE_C_RATE | C.ARBTABLE_C_DISTANCE,
		rate:     C.uint64_t(rate),
		distance: C.uint32_t(distance),
	}
}

func fromC(c *C.struct_arbtable_cost) Cost {
	return Cost{
		Distance:  uint32(c.distance),
		Slots:     uint32(c.slots),
		Units:     uint32(c.units),
		UnitsRate: uint64(c.units_rate),
		BoundNs:   uint64(c.bound_ns),
		High:      c.table == C.ARBTABLE_HIGH,
	}
}

func errText(buf []C.char) string {
	return C.GoString(&buf[0])
}

// RateCost sizes a HIGH-table request of rate bytes/s at a slot distance,
// as the module does.
func RateCost(p Params, rate uint64, distance uint32) (Cost, error) {
	cp := p.c()
	o := rateOpts(rate, distance)
	var out C.struct_arbtable_cost
	why := make([]C.char, 256)
	rc := C.arbtable_cost_request(&cp, C.size_t(unsafe.Sizeof(cp)), &o, &out,
		C.size_t(unsafe.Sizeof(out)), &why[0], C.size_t(len(why)))
	if rc < 0 {
		return Cost{}, fmt.Errorf("sizing rate %d B/s at distance %d: %s", rate, distance, errText(why))
	}
	return fromC(&out), nil
}

// Plan is a pair of tables as the module's allocator keeps them.
type Plan struct {
	p      *C.struct_arbtable_plan
	params Params
}

// NewPlan returns an empty plan for a qdisc with these parameters.
func NewPlan(p Params) (*Plan, error) {
	pl, err := C.arbtable_plan_new(C.uint32_t(p.MaxWeight))
	if pl == nil {
		return nil, fmt.Errorf("arbtable_plan_new: %w", err)
	}
	return &Plan{p: pl, params: p}, nil
}

// Close frees the plan.
func (pl *Plan) Close() {
	if pl.p != nil {
		C.arbtable_plan_free(pl.p)
		pl.p = nil
	}
}

// Admit admits class idx (0..63) at rate bytes/s and distance as the
// module would; ErrNoSpace when its slots are not free.
func (pl *Plan) Admit(idx int, rate uint64, distance uint32) (Cost, error) {
	o := rateOpts(rate, distance)
	return pl.admit(idx, &o)
}

// AdmitShare admits class idx as a LOW-table class of weight share
// spread at distance (64: one slot), as the module would; ErrNoSpace
// when its slots are not free.
func (pl *Plan) AdmitShare(idx int, share, distance uint32) (Cost, error) {
	o := C.struct_arbtable_class_opts{
		set:      C.ARBTABLE_C_SHARE | C.ARBTABLE_C_DISTANCE,
		share:    C.uint32_t(share),
		distance: C.uint32_t(distance),
	}
	return pl.admit(idx, &o)
}

func (pl *Plan) admit(idx int, o *C.struct_arbtable_class_opts) (Cost, error) {
	cp := pl.params.c()
	var out C.struct_arbtable_cost
	why := make([]C.char, 256)
	rc := C.arbtable_plan_admit(pl.p, &cp, C.size_t(unsafe.Sizeof(cp)), C.uint32_t(idx), o,
		&out, C.size_t(unsafe.Sizeof(out)), &why[0], C.size_t(len(why)))
	if rc < 0 {
		err := syscall.Errno(-rc)
		if err == syscall.ENOSPC {
			return Cost{}, fmt.Errorf("admitting class %d: %s: %w", idx, errText(why), ErrNoSpace)
		}
		return Cost{}, fmt.Errorf("admitting class %d: %s: %w", idx, errText(why), err)
	}
	return fromC(&out), nil
}

// Release frees class idx's slots (and defragments).
func (pl *Plan) Release(idx int) error {
	if rc := C.arbtable_plan_release(pl.p, C.uint32_t(idx)); rc < 0 {
		return fmt.Errorf("releasing class %d: %w", idx, syscall.Errno(-rc))
	}
	return nil
}

// FreeSlots returns the HIGH table's free slots.
func (pl *Plan) FreeSlots() int {
	return int(C.arbtable_plan_free_slots(pl.p, C.ARBTABLE_HIGH))
}

// FreeLowSlots returns the LOW table's free slots.
func (pl *Plan) FreeLowSlots() int {
	return int(C.arbtable_plan_free_slots(pl.p, C.ARBTABLE_LOW))
}

// Check returns an error when the allocator's invariants do not hold.
func (pl *Plan) Check() error {
	if rc := C.arbtable_plan_check(pl.p); rc < 0 {
		return fmt.Errorf("allocator invariants: %w", syscall.Errno(-rc))
	}
	return nil
}
