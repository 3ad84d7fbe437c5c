/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arbtablectl_capacity.h - what `capacity` (arbtablectl_capacity.c)
 * shares with `request` (arbtablectl_request.c): a live qdisc read as the
 * sizing parameters and the free room the allocator counts, and the
 * parameters' JSON both print.
 */
#ifndef ARBTABLECTL_CAPACITY_H
#define ARBTABLECTL_CAPACITY_H

#include <stdint.h>

#include <arbtable/arbtable.h>

#include "arbtable_cost.h"

struct capacity {
	unsigned int	free_slots[ARBTABLE_NTABLES];
	uint32_t	free_units;	/* HIGH */
	uint64_t	free_rate;	/* HIGH, bytes/s */
	uint64_t	high_rate;	/* C_high, bytes/s */
	unsigned int	classes_free;
};

/* Read @dev's auto-mode qdisc into @st and its sizing parameters into
 * @p; EX_OK or the exit code, the reason printed.
 */
int ctl_read_auto(struct arbtable *h, const char *dev,
		  struct ctl_snap *st, struct arbt_cost_params *p);
void ctl_capacity_of(const struct ctl_snap *st,
		     const struct arbt_cost_params *p, struct capacity *c);

/* rate_bps, high_capacity_bps, maxweight, mtu, highlimit, strict_ceil_bps,
 * strict_cburst (bytes, 0 = default): the sizing parameters, the same
 * keys in capacity and the device-less request; JSON only
 */
void ctl_print_params(const struct arbt_cost_params *p);

#endif /* ARBTABLECTL_CAPACITY_H */
