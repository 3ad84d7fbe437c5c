// SPDX-License-Identifier: Apache-2.0
package arbcore

import (
	"errors"
	"testing"
)

var p = Params{Rate: 125000000, MTU: 1514, MaxWeight: 255, HighLimit: 4}

func TestRateCost(t *testing.T) {
	tests := []struct {
		name      string
		rate      uint64
		distance  uint32
		wantSlots uint32
		wantErr   bool
	}{
		{"small rate at distance 64", 1000, 64, 1, false},
		{"small rate at distance 1", 1000, 1, 64, false},
		{"rate above the table", p.Rate * 2, 1, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := RateCost(p, tc.rate, tc.distance)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v", err)
			}
			if err == nil && (c.Slots != tc.wantSlots || !c.High || c.BoundNs == 0) {
				t.Fatalf("cost %+v", c)
			}
		})
	}
}

// Theorem 4 on the library's plan: power-of-two requests whose slots sum
// to 64 are all admitted, in any order; one more slot is refused with
// ErrNoSpace; a release makes room again.
func TestPlanFillsExactly(t *testing.T) {
	for _, sizes := range [][]int{{1, 2, 4, 8, 16, 32, 1}, {32, 1, 16, 1, 8, 4, 2}, {1, 1, 2, 4, 8, 16, 32}} {
		pl, err := NewPlan(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, n := range sizes {
			if _, err := pl.Admit(i, 1000, uint32(Slots/n)); err != nil {
				t.Fatalf("%v: class %d (%d slots): %v", sizes, i, n, err)
			}
			if err := pl.Check(); err != nil {
				t.Fatal(err)
			}
		}
		if pl.FreeSlots() != 0 {
			t.Fatalf("%v: %d free", sizes, pl.FreeSlots())
		}
		if _, err := pl.Admit(40, 1000, 64); !errors.Is(err, ErrNoSpace) {
			t.Fatalf("full table admitted: %v", err)
		}
		if err := pl.Release(0); err != nil {
			t.Fatal(err)
		}
		if _, err := pl.Admit(40, 1000, uint32(Slots/sizes[0])); err != nil {
			t.Fatalf("after a release: %v", err)
		}
		pl.Close()
	}
}

// LOW-table shares: one slot each at distance 64, counted apart from the
// HIGH table; a full LOW table refuses with ErrNoSpace until a release; a
// share above maxweight cannot sit on one slot.
func TestPlanShares(t *testing.T) {
	pl, err := NewPlan(p)
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	if _, err := pl.Admit(0, 1000, 4); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < MaxClasses; i++ {
		c, err := pl.AdmitShare(i, uint32(i), Slots)
		if err != nil {
			t.Fatalf("share class %d: %v", i, err)
		}
		if c.High || c.Slots != 1 || c.Distance != Slots {
			t.Fatalf("share class %d: cost %+v", i, c)
		}
	}
	if pl.FreeSlots() != Slots-16 || pl.FreeLowSlots() != 1 {
		t.Fatalf("free HIGH %d LOW %d, want %d and 1", pl.FreeSlots(), pl.FreeLowSlots(), Slots-16)
	}
	if err := pl.Check(); err != nil {
		t.Fatal(err)
	}

	full, err := NewPlan(p)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	for i := 0; i < MaxClasses-1; i++ {
		if _, err := full.AdmitShare(i, 1, Slots); err != nil {
			t.Fatalf("share class %d: %v", i, err)
		}
	}
	if _, err := full.AdmitShare(MaxClasses-1, 2, Slots/2); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("two LOW slots admitted with one free: %v", err)
	}
	if _, err := full.AdmitShare(MaxClasses-1, 1, Slots); err != nil {
		t.Fatalf("the last LOW slot: %v", err)
	}
	if full.FreeLowSlots() != 0 {
		t.Fatalf("LOW free %d after 64 shares", full.FreeLowSlots())
	}
	if err := full.Release(5); err != nil {
		t.Fatal(err)
	}
	if _, err := full.AdmitShare(5, p.MaxWeight+1, Slots); err == nil || errors.Is(err, ErrNoSpace) {
		t.Fatalf("share %d on one slot of maxweight %d: %v", p.MaxWeight+1, p.MaxWeight, err)
	}
	if _, err := full.AdmitShare(5, p.MaxWeight, Slots); err != nil {
		t.Fatalf("share %d after a release: %v", p.MaxWeight, err)
	}
}
