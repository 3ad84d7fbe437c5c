// SPDX-License-Identifier: GPL-2.0
/*
 * arbtable_cost.c - arbtable_cost.h on the module's core: the sizing is
 * arb_admit_prepare() itself, run on an empty table so that only the
 * request's own size is decided here; whether its slots are free is the
 * caller's comparison with the live table (Theorem 4 makes it exact).
 */
#include "arbtable_core_test.h"
#include "arbtable_cost.h"

static void arbt_params(const struct arbt_cost_params *c, struct arb_params *p)
{
	arb_admit_params(c->rate, c->mtu, (u8)c->maxweight, (u8)c->highlimit,
			 c->strict_ceil, c->strict_cburst, p);
}

uint32_t arbt_cost_default_mtu(uint64_t rate)
{
	return arb_follow_mtu(1514, 65536, 14, rate);
}

uint64_t arbt_cost_high_capacity(const struct arbt_cost_params *c)
{
	struct arb_params p;

	arbt_params(c, &p);
	return arb_params_check(&p) ? 0 : arb_high_capacity(&p);
}

uint64_t arbt_cost_units_rate(const struct arbt_cost_params *c, uint32_t units)
{
	struct arb_params p;

	arbt_params(c, &p);
	return arb_params_check(&p) ? 0 : arb_weight_rate(&p, units);
}

int arbt_cost_request(const struct arbt_cost_params *c, uint64_t rate,
		      uint64_t latency_ns, uint32_t distance, uint32_t share,
		      struct arbt_cost *out, char *why, size_t len)
{
	static struct arb_alloc alloc[ARB_NTABLES];
	static struct arb_admission adm;
	struct arb_resv resv = {
		.rate = rate, .latency = latency_ns, .distance = distance,
		.share = share,
	};
	struct arb_params p;
	unsigned int t;

	if (len)
		why[0] = '\0';
	if (!rate && !share) {
		snprintf(why, len, "give a rate (HIGH table) or a share (LOW table)");
		return -1;
	}
	arbt_params(c, &p);
	for (t = 0; t < ARB_NTABLES; t++)
		arb_alloc_init(&alloc[t], c->maxweight);
	if (arb_admit_prepare(alloc, &p, (u8)c->maxweight, 0, ARB_NO_CLASS,
			      &resv, &adm, why, len))
		return -1;
	out->high = adm.new_table == ARB_HIGH;
	out->distance = adm.distance;
	out->slots = ARB_SLOTS / adm.distance;
	out->units = adm.weight;
	out->units_rate = out->high ? arb_weight_rate(&p, adm.weight) : 0;
	out->bound_ns = adm.bound_ns;
	return 0;
}
