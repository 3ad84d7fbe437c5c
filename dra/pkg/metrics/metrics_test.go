// SPDX-License-Identifier: Apache-2.0
package metrics

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"arbtable.dev/dra/pkg/arbcore"
	"arbtable.dev/dra/pkg/checkpoint"
	"arbtable.dev/dra/pkg/kernel"
)

var fast = arbcore.Params{Rate: 1250000000, MTU: 9000, MaxWeight: 255, HighLimit: 16}

// fixture: eth0 has a root with its system class (a LOW share) and one
// claim's HIGH class with counters; eth1 exists but has no root; claims
// admitted, prepared only, and on the rootless NIC.
func fixture(t *testing.T) (*Collector, kernel.Class) {
	t.Helper()
	k := kernel.NewFake(map[string]arbcore.Params{"eth0": fast, "eth1": fast})
	if err := k.EnsureRoot("eth0", kernel.RootConfig{Handle: 1 << 16, SystemMinor: 0xfffe, SystemShare: 64}); err != nil {
		t.Fatal(err)
	}
	cl, err := k.Admit("eth0", 1<<16|0x101, 125000000, 8, "")
	if err != nil {
		t.Fatal(err)
	}
	st := kernel.ClassStats{Bytes: 1234567, Packets: 890, Drops: 7, ReservedRate: 125001000, MaxHolNs: 345000}
	if err := k.SetStats("eth0", cl.ClassID, st); err != nil {
		t.Fatal(err)
	}
	sys := kernel.ClassStats{Bytes: 99, ReservedRate: 5}
	if err := k.SetStats("eth0", 0xfffe, sys); err != nil {
		t.Fatal(err)
	}
	cl.Stats = st
	recs := map[string]checkpoint.Record{
		"u1": {ClaimUID: "u1", Namespace: "ns", Name: "fast", NIC: "eth0", RateBytes: 125000000, ClassID: cl.ClassID, Mark: 1},
		"u2": {ClaimUID: "u2", Namespace: "ns", Name: "waiting", NIC: "eth0", RateBytes: 62500000},
		"u3": {ClaimUID: "u3", Namespace: "other", Name: "gone", NIC: "eth1", ClassID: 1<<16 | 0x102, Share: 3},
	}
	return &Collector{NICs: []string{"eth0", "eth1"}, K: k, Claims: func() map[string]checkpoint.Record { return recs }}, cl
}

func TestCollectExact(t *testing.T) {
	c, cl := fixture(t)
	if cl.HighSlots == 0 || cl.BoundNs == 0 || cl.GuaranteedRate == 0 {
		t.Fatalf("fake admitted %+v: no slots, bound or rate to check", cl)
	}
	q, _ := c.K.Read("eth0")
	b := fmt.Sprintf("%g", float64(cl.BoundNs)/1e9)
	want := `
# HELP arbtable_dra_nic_up 1 when the NIC's arbtable root was read, 0 when it is gone or unreadable.
# TYPE arbtable_dra_nic_up gauge
arbtable_dra_nic_up{nic="eth0"} 1
arbtable_dra_nic_up{nic="eth1"} 0
# HELP arbtable_dra_nic_capacity_bytes_per_second Rate of the NIC's arbtable root (the link speed when the root names none).
# TYPE arbtable_dra_nic_capacity_bytes_per_second gauge
arbtable_dra_nic_capacity_bytes_per_second{nic="eth0"} 1.25e+09
# HELP arbtable_dra_nic_reserved_bytes_per_second Sum of the rates the kernel reserved for the root's classes.
# TYPE arbtable_dra_nic_reserved_bytes_per_second gauge
arbtable_dra_nic_reserved_bytes_per_second{nic="eth0"} 1.25001005e+08
# HELP arbtable_dra_nic_free_slots Slots of the table (high or low) that no class holds.
# TYPE arbtable_dra_nic_free_slots gauge
arbtable_dra_nic_free_slots{nic="eth0",table="high"} ` + fmt.Sprint(64-cl.HighSlots) + `
arbtable_dra_nic_free_slots{nic="eth0",table="low"} ` + fmt.Sprint(q.FreeLowSlots()) + `
# HELP arbtable_dra_nic_classes Classes of the root, the system class and classes made outside claims included.
# TYPE arbtable_dra_nic_classes gauge
arbtable_dra_nic_classes{nic="eth0"} 2
# HELP arbtable_dra_claim_requested_bytes_per_second Rate the driver asks the kernel for (the block's, or the claim's rateBits); 0 for a share.
# TYPE arbtable_dra_claim_requested_bytes_per_second gauge
arbtable_dra_claim_requested_bytes_per_second{claim="fast",class="1:101",namespace="ns",nic="eth0"} 1.25e+08
arbtable_dra_claim_requested_bytes_per_second{claim="waiting",class="",namespace="ns",nic="eth0"} 6.25e+07
arbtable_dra_claim_requested_bytes_per_second{claim="gone",class="1:102",namespace="other",nic="eth1"} 0
# HELP arbtable_dra_claim_admitted 1 when the claim's class is in the kernel, 0 when prepared and not (yet) admitted or gone.
# TYPE arbtable_dra_claim_admitted gauge
arbtable_dra_claim_admitted{claim="fast",class="1:101",namespace="ns",nic="eth0"} 1
arbtable_dra_claim_admitted{claim="waiting",class="",namespace="ns",nic="eth0"} 0
arbtable_dra_claim_admitted{claim="gone",class="1:102",namespace="other",nic="eth1"} 0
# HELP arbtable_dra_claim_reserved_bytes_per_second Rate the kernel reserved for the claim's class.
# TYPE arbtable_dra_claim_reserved_bytes_per_second gauge
arbtable_dra_claim_reserved_bytes_per_second{claim="fast",class="1:101",namespace="ns",nic="eth0"} 1.25001e+08
# HELP arbtable_dra_claim_guaranteed_bytes_per_second Rate the kernel guarantees the claim's class.
# TYPE arbtable_dra_claim_guaranteed_bytes_per_second gauge
arbtable_dra_claim_guaranteed_bytes_per_second{claim="fast",class="1:101",namespace="ns",nic="eth0"} ` + fmt.Sprintf("%g", float64(cl.GuaranteedRate)) + `
# HELP arbtable_dra_claim_sent_bytes_total Bytes the claim's class sent.
# TYPE arbtable_dra_claim_sent_bytes_total counter
arbtable_dra_claim_sent_bytes_total{claim="fast",class="1:101",namespace="ns",nic="eth0"} 1.234567e+06
# HELP arbtable_dra_claim_sent_packets_total Packets the claim's class sent.
# TYPE arbtable_dra_claim_sent_packets_total counter
arbtable_dra_claim_sent_packets_total{claim="fast",class="1:101",namespace="ns",nic="eth0"} 890
# HELP arbtable_dra_claim_dropped_packets_total Packets the claim's class dropped.
# TYPE arbtable_dra_claim_dropped_packets_total counter
arbtable_dra_claim_dropped_packets_total{claim="fast",class="1:101",namespace="ns",nic="eth0"} 7
# HELP arbtable_dra_claim_guaranteed_bound_seconds Guaranteed bound of the claim's class (placement independent).
# TYPE arbtable_dra_claim_guaranteed_bound_seconds gauge
arbtable_dra_claim_guaranteed_bound_seconds{claim="fast",class="1:101",namespace="ns",nic="eth0"} ` + b + `
# HELP arbtable_dra_claim_max_head_of_line_wait_seconds Longest head-of-line wait the kernel measured for the claim's class.
# TYPE arbtable_dra_claim_max_head_of_line_wait_seconds gauge
arbtable_dra_claim_max_head_of_line_wait_seconds{claim="fast",class="1:101",namespace="ns",nic="eth0"} 0.000345
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

// Each metric carries its own field: setting one counter moves one
// metric (catches two metrics reading the same field).
func TestEachFieldItsMetric(t *testing.T) {
	for _, tc := range []struct {
		name  string
		set   func(*kernel.ClassStats)
		value float64
	}{
		{"arbtable_dra_claim_sent_bytes_total", func(s *kernel.ClassStats) { s.Bytes = 11 }, 11},
		{"arbtable_dra_claim_sent_packets_total", func(s *kernel.ClassStats) { s.Packets = 12 }, 12},
		{"arbtable_dra_claim_dropped_packets_total", func(s *kernel.ClassStats) { s.Drops = 13 }, 13},
		{"arbtable_dra_claim_reserved_bytes_per_second", func(s *kernel.ClassStats) { s.ReservedRate = 14 }, 14},
		{"arbtable_dra_claim_max_head_of_line_wait_seconds", func(s *kernel.ClassStats) { s.MaxHolNs = 15e9 }, 15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, cl := fixture(t)
			var s kernel.ClassStats
			tc.set(&s)
			if err := c.K.(*kernel.Fake).SetStats("eth0", cl.ClassID, s); err != nil {
				t.Fatal(err)
			}
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(c)
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			for _, mf := range mfs {
				if !strings.HasPrefix(mf.GetName(), "arbtable_dra_claim_") {
					continue
				}
				for _, m := range mf.Metric {
					if m.GetLabel()[0].GetValue() != "fast" {
						continue
					}
					v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
					switch mf.GetName() {
					case tc.name:
						if v != tc.value {
							t.Errorf("%s = %g, want %g", mf.GetName(), v, tc.value)
						}
					case "arbtable_dra_claim_sent_bytes_total", "arbtable_dra_claim_sent_packets_total",
						"arbtable_dra_claim_dropped_packets_total", "arbtable_dra_claim_reserved_bytes_per_second",
						"arbtable_dra_claim_max_head_of_line_wait_seconds":
						if v != 0 {
							t.Errorf("%s = %g with only %s set", mf.GetName(), v, tc.name)
						}
					}
				}
			}
		})
	}
}

// The names follow Prometheus's conventions (base units, _total on
// counters), and the pedantic registry accepts the collector.
func TestLint(t *testing.T) {
	c, _ := fixture(t)
	probs, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probs {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	if err := prometheus.NewPedanticRegistry().Register(c); err != nil {
		t.Fatal(err)
	}
}
