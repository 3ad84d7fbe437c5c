// SPDX-License-Identifier: Apache-2.0

// Command arbtable-blocks prints the blocks arbtable-dra publishes for a
// NIC's qdisc parameters: per slot count, the distance, the largest rate
// it guarantees and its guaranteed bound, from the module's own code.
package main

import (
	"flag"
	"fmt"
	"os"

	"arbtable.dev/dra/pkg/arbcore"
	"arbtable.dev/dra/pkg/slices"
)

func main() {
	var p arbcore.Params
	var mw, hl uint
	flag.Uint64Var(&p.Rate, "rate", 125000000, "qdisc rate, bytes/s")
	mtu := flag.Uint("mtu", 1514, "qdisc mtu, bytes")
	flag.UintVar(&mw, "maxweight", 255, "qdisc maxweight")
	flag.UintVar(&hl, "highlimit", 4, "qdisc highlimit, 4096-byte blocks")
	flag.Parse()
	p.MTU, p.MaxWeight, p.HighLimit = uint32(*mtu), uint32(mw), uint32(hl)
	ch, err := arbcore.HighCapacity(p)
	if err != nil {
		fmt.Fprintln(os.Stderr, "arbtable-blocks:", err)
		os.Exit(1)
	}
	bs, err := slices.Blocks(p)
	if err != nil {
		fmt.Fprintln(os.Stderr, "arbtable-blocks:", err)
		os.Exit(1)
	}
	fmt.Printf("rate %d B/s, mtu %d, maxweight %d, highlimit %d: C_high %d B/s\n", p.Rate, p.MTU, p.MaxWeight, p.HighLimit, ch)
	fmt.Printf("%6s %9s %14s %12s\n", "slots", "distance", "rateBits", "boundNs")
	for _, b := range bs {
		fmt.Printf("%6d %9d %14d %12d\n", b.Slots, b.Distance, b.RateBytes*8, b.BoundNs)
	}
}
