// SPDX-License-Identifier: GPL-2.0
/*
 * arbsim: auto-mode admission through the allocator core, the way
 * kernel/arbtable_auto.c drives it. See arbsim_auto.h.
 */
#include <stdio.h>

#include "arbsim_auto.h"

/*
 * Copy of arbtable_strict_burst() (static in kernel/arbtable_auto.c):
 * bucket depth of the strict class's ceil plus the one packet the bucket
 * may overshoot by. Should move into the core (arb_strict_burst()) next to
 * arb_params, with ARBTABLE_MIN_BURST_NS.
 */
u32 asim_strict_burst(u64 ceil, u32 mtu)
{
	u64 b = ceil * (ASIM_MIN_BURST_NS / 1000) / 1000000;
	u64 lo = 2 * (u64)mtu;

	b = (b > lo ? b : lo) + mtu;
	return b > 0xffffffffULL ? 0xffffffffU : (u32)b;
}

void asim_params(u64 capacity, u32 mtu, u8 maxweight, u8 highlimit,
		 u64 strict_ceil, struct arb_params *p)
{
	memset(p, 0, sizeof(*p));
	p->rate = capacity;
	p->mtu = mtu;
	p->maxweight = maxweight;
	p->highlimit = highlimit;
	if (strict_ceil) {
		p->strict_ceil = strict_ceil;
		p->strict_burst = asim_strict_burst(strict_ceil, mtu);
	}
}

/*
 * arbtable_auto_size(): table, distance and units for a request. The
 * HIGH branch is arb_plan(); the LOW (share) branch is module code that
 * should become a core call (arb_plan_share()).
 */
static int asim_size(const struct arb_params *p, u8 maxweight,
		     const struct asim_resv *resv, struct asim_plan *plan,
		     struct arb_reject *rj, char *why, size_t len)
{
	struct arb_plan pl;
	unsigned int d, n;
	int err;

	if (resv->rate) {
		err = arb_plan(p, resv->rate, resv->latency, resv->distance,
			       &pl, rj);
		if (err)
			return err;
		plan->new_table = ARB_HIGH;
		plan->distance = pl.distance;
		plan->weight = pl.w_eff;
		plan->bound_ns = pl.bound_ns;
		return 0;
	}
	if (resv->share) {
		d = resv->distance ? arb_round_distance(resv->distance) :
				     ARB_SLOTS;
		n = ARB_SLOTS / d;
		plan->weight = arb_weight_eff(resv->share, n, maxweight);
		if (!plan->weight) {
			snprintf(why, len,
				 "share %u cannot be spread over %u slots of at most weight %u",
				 resv->share, n, maxweight);
			return -EINVAL;
		}
		plan->new_table = ARB_LOW;
		plan->distance = d;
		plan->bound_ns = 0;
		return 0;
	}
	plan->new_table = ARB_NO_CLASS;
	return 0;
}

static void asim_reject(const struct arb_reject *rj, char *why, size_t len)
{
	char buf[160];

	arb_reject_format(rj, buf, sizeof(buf));
	snprintf(why, len, "cannot admit the class: %s", buf);
}

int asim_plan(const struct arb_alloc alloc[ARB_NTABLES],
	      const struct arb_params *p, u8 maxweight, unsigned int idx,
	      u8 old_table, const struct asim_resv *resv,
	      struct asim_plan *plan, char *why, size_t len)
{
	struct arb_reject rj;
	int err;

	memset(plan, 0, sizeof(*plan));
	memset(&rj, 0, sizeof(rj));
	memcpy(plan->alloc, alloc, sizeof(plan->alloc));
	plan->resv = *resv;
	plan->old_table = old_table;
	if (len)
		why[0] = '\0';

	err = asim_size(p, maxweight, resv, plan, &rj, why, len);
	if (err) {
		if (rj.code != ARB_R_OK)
			asim_reject(&rj, why, len);
		return err;
	}
	if (old_table != ARB_NO_CLASS && old_table == plan->new_table) {
		err = arb_alloc_change(&plan->alloc[old_table], idx,
				       plan->distance, plan->weight, &plan->mv,
				       &rj);
	} else {
		if (old_table != ARB_NO_CLASS) {
			err = arb_alloc_release(&plan->alloc[old_table], idx,
						&plan->mv, &rj);
			if (err)
				goto out;
		}
		if (plan->new_table != ARB_NO_CLASS)
			err = arb_alloc_insert(&plan->alloc[plan->new_table],
					       idx, plan->distance,
					       plan->weight, NULL, &rj);
	}
out:
	if (err)
		asim_reject(&rj, why, len);
	return err;
}

/*
 * arbtable_auto_sync(): make a live table hold what the allocator says.
 * Should move into the core (arb_alloc_sync(alloc, sched, table)).
 */
static void asim_sync(struct arb_sched *arb, const struct arb_alloc *a,
		      unsigned int t)
{
	const struct arb_table *tb = &arb->tbl[t];
	unsigned int s;

	for (s = 0; s < ARB_SLOTS; s++) {
		u8 owner = arb_alloc_slot_owner(a, s);
		u8 w = owner == ARB_NO_CLASS ? 0 : arb_alloc_slot_weight(a, s);

		if (tb->weight[s] != w || (w && tb->cls[s] != owner))
			arb_set_slot(arb, t, s, owner, w);
	}
}

void asim_commit(struct arb_sched *arb, struct arb_alloc alloc[ARB_NTABLES],
		 unsigned int idx, const struct asim_plan *plan)
{
	unsigned int i, t = plan->old_table;
	u64 m;

	if (t != ARB_NO_CLASS) {
		m = arb_class_slots(arb, t, idx);
		while (m) {
			arb_set_slot(arb, t, __ffs64(m), ARB_NO_CLASS, 0);
			m &= m - 1;
		}
		for (i = 0; i < plan->mv.n; i++)
			arb_swap_slots(arb, t, plan->mv.m[i].a,
				       plan->mv.m[i].b);
	}
	memcpy(alloc, plan->alloc, sizeof(plan->alloc));
	for (t = 0; t < ARB_NTABLES; t++)
		asim_sync(arb, &alloc[t], t);
}
