// SPDX-License-Identifier: GPL-2.0
/*
 * arbtable admission: requests to allocator operations, planned on copies
 * and committed to the live arbiter. See arbtable_admit.h and DESIGN §4.
 */
#include <linux/kernel.h>

#include "arbtable_admit.h"

u32 arb_strict_burst(u64 ceil, u32 mtu, u32 cburst)
{
	u64 b = div64_u64(ceil * (ARB_MIN_BURST_NS / 1000), 1000000);
	u64 lo = 2 * (u64)mtu;

	if (cburst)
		b = (u64)cburst + mtu;
	else
		b = (b > lo ? b : lo) + mtu;
	return b > 0xffffffffULL ? 0xffffffffU : (u32)b;
}

void arb_admit_params(u64 capacity, u32 mtu, u8 maxweight, u8 highlimit,
		      u64 strict_ceil, u32 strict_cburst,
		      struct arb_params *p)
{
	memset(p, 0, sizeof(*p));
	p->rate = capacity;
	p->mtu = mtu;
	p->maxweight = maxweight;
	p->highlimit = highlimit;
	if (strict_ceil) {
		p->strict_ceil = strict_ceil;
		p->strict_burst = arb_strict_burst(strict_ceil, mtu,
						   strict_cburst);
	}
}

/* Table, distance and weight units asked for by @resv. */
static int arb_admit_size(const struct arb_params *p, u8 maxweight,
			  const struct arb_resv *resv,
			  struct arb_admission *adm, struct arb_reject *rj,
			  char *why, size_t len)
{
	struct arb_plan pl;
	unsigned int d, n;
	int err;

	if (resv->rate) {
		err = arb_plan(p, resv->rate, resv->latency, resv->distance,
			       &pl, rj);
		if (err)
			return err;
		adm->new_table = ARB_HIGH;
		adm->distance = pl.distance;
		adm->weight = pl.w_eff;
		adm->bound_ns = pl.bound_ns;
		return 0;
	}
	if (resv->share) {
		/* LOW table: share units spread like a rate's W (section
		 * 7.2 hypothesis 3), one slot unless a distance is given.
		 */
		d = resv->distance ? arb_round_distance(resv->distance) :
				     ARB_SLOTS;
		if (!d) {
			snprintf(why, len, "distance %u out of range 1..%d",
				 resv->distance, ARB_SLOTS);
			return -EINVAL;
		}
		n = ARB_SLOTS / d;
		adm->weight = arb_weight_eff(resv->share, n, maxweight);
		if (!adm->weight) {
			snprintf(why, len,
				 "share %u cannot be spread over %u slots of at most weight %u",
				 resv->share, n, maxweight);
			return -EINVAL;
		}
		adm->new_table = ARB_LOW;
		adm->distance = d;
		adm->bound_ns = 0;
		return 0;
	}
	adm->new_table = ARB_NO_CLASS;
	return 0;
}

static void arb_admit_why(const struct arb_reject *rj, char *why, size_t len)
{
	char buf[160];

	arb_reject_format(rj, buf, sizeof(buf));
	snprintf(why, len, "cannot admit the class: %s", buf);
}

int arb_admit_plan(const struct arb_alloc alloc[ARB_NTABLES],
		   const struct arb_params *p, u8 maxweight, unsigned int idx,
		   u8 old_table, const struct arb_resv *resv,
		   struct arb_admission *adm, char *why, size_t len)
{
	struct arb_reject rj;
	int err;

	memset(adm, 0, sizeof(*adm));
	memset(&rj, 0, sizeof(rj));
	memcpy(adm->alloc, alloc, sizeof(adm->alloc));
	adm->resv = *resv;
	adm->old_table = old_table;
	if (len)
		why[0] = '\0';

	err = arb_admit_size(p, maxweight, resv, adm, &rj, why, len);
	if (err) {
		if (rj.code != ARB_R_OK)
			arb_admit_why(&rj, why, len);
		return err;
	}
	if (old_table != ARB_NO_CLASS && old_table == adm->new_table) {
		err = arb_alloc_change(&adm->alloc[old_table], idx,
				       adm->distance, adm->weight, &adm->mv,
				       &rj);
	} else {
		if (old_table != ARB_NO_CLASS) {
			err = arb_alloc_release(&adm->alloc[old_table], idx,
						&adm->mv, &rj);
			if (err)
				goto out;
		}
		if (adm->new_table != ARB_NO_CLASS)
			err = arb_alloc_insert(&adm->alloc[adm->new_table],
					       idx, adm->distance, adm->weight,
					       NULL, &rj);
	}
out:
	if (err)
		arb_admit_why(&rj, why, len);
	return err;
}

/* Make the live table @t hold what the allocator says, slot by slot. */
static void arb_admit_sync(struct arb_sched *arb, const struct arb_alloc *a,
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

void arb_admit_commit(struct arb_sched *arb,
		      struct arb_alloc alloc[ARB_NTABLES], unsigned int idx,
		      const struct arb_admission *adm,
		      void (*on_swap)(void *ctx, unsigned int t, u8 a, u8 b),
		      void *ctx)
{
	unsigned int i, t = adm->old_table;
	u64 m;

	if (t != ARB_NO_CLASS) {
		m = arb_class_slots(arb, t, idx);
		while (m) {
			arb_set_slot(arb, t, __ffs64(m), ARB_NO_CLASS, 0);
			m &= m - 1;
		}
		for (i = 0; i < adm->mv.n; i++) {
			arb_swap_slots(arb, t, adm->mv.m[i].a, adm->mv.m[i].b);
			if (on_swap)
				on_swap(ctx, t, adm->mv.m[i].a,
					adm->mv.m[i].b);
		}
	}
	memcpy(alloc, adm->alloc, sizeof(adm->alloc));
	for (t = 0; t < ARB_NTABLES; t++)
		arb_admit_sync(arb, &alloc[t], t);
}
