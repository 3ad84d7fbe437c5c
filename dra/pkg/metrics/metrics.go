// SPDX-License-Identifier: Apache-2.0

// Package metrics exports what the kernel holds for the driver's NICs and
// claims as Prometheus metrics. Every scrape reads the roots anew (one
// libarbtable dump per NIC), so a value is the kernel's at that scrape,
// never a copy the driver kept.
package metrics

import (
	"fmt"
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"arbtable.dev/dra/pkg/checkpoint"
	"arbtable.dev/dra/pkg/kernel"
)

// Reader reads a NIC's root (kernel.Kernel's Read).
type Reader interface {
	Read(nic string) (kernel.Qdisc, error)
}

// Collector is a prometheus.Collector of the NICs' roots and the claims'
// classes.
type Collector struct {
	NICs   []string
	K      Reader
	Claims func() map[string]checkpoint.Record // the driver's Records
}

var (
	nicLabels   = []string{"nic"}
	claimLabels = []string{"namespace", "claim", "nic", "class"}

	nicUp       = prometheus.NewDesc("arbtable_dra_nic_up", "1 when the NIC's arbtable root was read, 0 when it is gone or unreadable.", nicLabels, nil)
	nicCapacity = prometheus.NewDesc("arbtable_dra_nic_capacity_bytes_per_second", "Rate of the NIC's arbtable root (the link speed when the root names none).", nicLabels, nil)
	nicReserved = prometheus.NewDesc("arbtable_dra_nic_reserved_bytes_per_second", "Sum of the rates the kernel reserved for the root's classes.", nicLabels, nil)
	nicFree     = prometheus.NewDesc("arbtable_dra_nic_free_slots", "Slots of the table (high or low) that no class holds.", []string{"nic", "table"}, nil)
	nicClasses  = prometheus.NewDesc("arbtable_dra_nic_classes", "Classes of the root, the system class and classes made outside claims included.", nicLabels, nil)

	claimRequested = prometheus.NewDesc("arbtable_dra_claim_requested_bytes_per_second", "Rate the driver asks the kernel for (the block's, or the claim's rateBits); 0 for a share.", claimLabels, nil)
	claimAdmitted  = prometheus.NewDesc("arbtable_dra_claim_admitted", "1 when the claim's class is in the kernel, 0 when prepared and not (yet) admitted or gone.", claimLabels, nil)
	claimReserved  = prometheus.NewDesc("arbtable_dra_claim_reserved_bytes_per_second", "Rate the kernel reserved for the claim's class.", claimLabels, nil)
	claimGuarRate  = prometheus.NewDesc("arbtable_dra_claim_guaranteed_bytes_per_second", "Rate the kernel guarantees the claim's class.", claimLabels, nil)
	claimBytes     = prometheus.NewDesc("arbtable_dra_claim_sent_bytes_total", "Bytes the claim's class sent.", claimLabels, nil)
	claimPackets   = prometheus.NewDesc("arbtable_dra_claim_sent_packets_total", "Packets the claim's class sent.", claimLabels, nil)
	claimDrops     = prometheus.NewDesc("arbtable_dra_claim_dropped_packets_total", "Packets the claim's class dropped.", claimLabels, nil)
	claimBound     = prometheus.NewDesc("arbtable_dra_claim_guaranteed_bound_seconds", "Guaranteed bound of the claim's class (placement independent).", claimLabels, nil)
	claimMaxHol    = prometheus.NewDesc("arbtable_dra_claim_max_head_of_line_wait_seconds", "Longest head-of-line wait the kernel measured for the claim's class.", claimLabels, nil)
)

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{nicUp, nicCapacity, nicReserved, nicFree, nicClasses,
		claimRequested, claimAdmitted, claimReserved, claimGuarRate, claimBytes, claimPackets, claimDrops, claimBound, claimMaxHol} {
		ch <- d
	}
}

func seconds(ns uint64) float64 { return float64(ns) / 1e9 }

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	roots := map[string]kernel.Qdisc{}
	for _, nic := range c.NICs {
		q, err := c.K.Read(nic)
		if err != nil {
			ch <- prometheus.MustNewConstMetric(nicUp, prometheus.GaugeValue, 0, nic)
			continue
		}
		roots[nic] = q
		var reserved uint64
		for _, cl := range q.Classes {
			reserved += cl.Stats.ReservedRate
		}
		g := func(d *prometheus.Desc, v float64, l ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{nic}, l...)...)
		}
		g(nicUp, 1)
		g(nicCapacity, float64(q.Params.Rate))
		g(nicReserved, float64(reserved))
		g(nicFree, float64(q.FreeSlots()), "high")
		g(nicFree, float64(q.FreeLowSlots()), "low")
		g(nicClasses, float64(len(q.Classes)))
	}
	if c.Claims == nil {
		return
	}
	recs := c.Claims()
	uids := make([]string, 0, len(recs))
	for uid := range recs {
		uids = append(uids, uid)
	}
	sort.Strings(uids)
	for _, uid := range uids {
		r := recs[uid]
		class := ""
		var cl kernel.Class
		found := false
		if r.Admitted() {
			class = fmt.Sprintf("%x:%x", r.ClassID>>16, r.ClassID&0xffff)
			if q, ok := roots[r.NIC]; ok {
				cl, found = q.Find(r.ClassID)
			}
		}
		l := []string{r.Namespace, r.Name, r.NIC, class}
		g := func(d *prometheus.Desc, t prometheus.ValueType, v float64) {
			ch <- prometheus.MustNewConstMetric(d, t, v, l...)
		}
		g(claimRequested, prometheus.GaugeValue, float64(r.RateBytes))
		if !found {
			g(claimAdmitted, prometheus.GaugeValue, 0)
			continue
		}
		g(claimAdmitted, prometheus.GaugeValue, 1)
		g(claimReserved, prometheus.GaugeValue, float64(cl.Stats.ReservedRate))
		g(claimGuarRate, prometheus.GaugeValue, float64(cl.GuaranteedRate))
		g(claimBytes, prometheus.CounterValue, float64(cl.Stats.Bytes))
		g(claimPackets, prometheus.CounterValue, float64(cl.Stats.Packets))
		g(claimDrops, prometheus.CounterValue, float64(cl.Stats.Drops))
		g(claimBound, prometheus.GaugeValue, seconds(cl.BoundNs))
		g(claimMaxHol, prometheus.GaugeValue, seconds(cl.Stats.MaxHolNs))
	}
}
