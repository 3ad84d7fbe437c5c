/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arbtable_cost.h - what one admission costs, computed by the module's
 * own sizing code (kernel/arbtable_core.c, arb_admit_prepare) in userspace,
 * for `arbtablectl request` and `arbtablectl capacity`.  Plain C types:
 * arbtablectl includes this without the core's kernel-header shims.
 *
 * The cost of a request is a table (HIGH for a rate, LOW for a share), a
 * slot distance d and n = 64 / d slots, and weight units W (HIGH: the
 * rate's ceil(R * 64 * maxweight / C_high), raised to n and, for a
 * latency, to what a slot needs to cover an MTU within the bound).  On a
 * normalized table (the allocator keeps it so) a request is admitted if
 * and only if its sizing succeeds, its n slots are free in its table
 * (Theorem 4) and the qdisc has fewer than 64 classes: the units follow
 * from the slots (each class holds at most n * maxweight on its n
 * slots, so the table's 64 * maxweight units never run out first).
 */
#ifndef ARBTABLE_COST_H
#define ARBTABLE_COST_H

#include <stddef.h>
#include <stdint.h>

struct arbt_cost_params {
	uint64_t	rate;		/* qdisc rate C, bytes/s */
	uint32_t	mtu;
	uint32_t	maxweight;
	uint32_t	highlimit;
	uint64_t	strict_ceil;	/* bytes/s, 0 = no strict class */
	uint32_t	strict_cburst;	/* its cburst as set, 0 = default */
};

/* The mtu a qdisc follows, 'mtu' not given, on an Ethernet NIC at mtu
 * 1500 whose GSO skbs are up to 64 KiB, at @rate bytes/s: 1514, or from
 * 1gbit up a whole GSO skb (the module's arb_follow_mtu()).
 */
uint32_t arbt_cost_default_mtu(uint64_t rate);

struct arbt_cost {
	int		high;		/* 1 HIGH table, 0 LOW */
	unsigned int	distance;
	unsigned int	slots;		/* 64 / distance */
	uint32_t	units;		/* weight units reserved */
	uint64_t	units_rate;	/* HIGH: the rate they guarantee, B/s */
	uint64_t	bound_ns;	/* HIGH: guaranteed HOL-wait bound */
};

/* The HIGH table's guaranteed rate C_high, bytes/s (0: bad parameters). */
uint64_t arbt_cost_high_capacity(const struct arbt_cost_params *p);
/* The rate @units of HIGH weight guarantee: units * C_high / (64 * maxweight). */
uint64_t arbt_cost_units_rate(const struct arbt_cost_params *p, uint32_t units);

/*
 * Size a request: @rate bytes/s (+ @latency_ns or @distance) or @share
 * (+ @distance); 0 = not given.  0 and *c, or -1 with the module's own
 * refusal text in @why (what the kernel would say, whatever the table).
 */
int arbt_cost_request(const struct arbt_cost_params *p, uint64_t rate,
		      uint64_t latency_ns, uint32_t distance, uint32_t share,
		      struct arbt_cost *c, char *why, size_t len);

#endif /* ARBTABLE_COST_H */
