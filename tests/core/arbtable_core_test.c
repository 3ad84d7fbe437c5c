// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Userspace build of the core: kernel/arbtable_core.c unchanged (with the
 * kernel headers of tests/include), plus the test-only views of
 * arbtable_core_test.h, which need the core's static helpers.
 */
#define ARB_TEST_COUNT_STEPS
#include "arbtable_core_test.h"
#include "arbtable_core.c"

unsigned long arb_test_walk_steps;

u64 arb_alloc_free_sets(const struct arb_alloc *a, unsigned int level)
{
	u64 f[ARB_LEVELS];

	if (level >= ARB_LEVELS)
		return 0;
	arb_free_levels(a->free, f);
	return f[level];
}

u64 arb_alloc_singular_sets(const struct arb_alloc *a, unsigned int level)
{
	u64 f[ARB_LEVELS];

	if (level == 0 || level >= ARB_LEVELS)
		return 0;
	arb_free_levels(a->free, f);
	return arb_singular(f, level);
}

static unsigned int arb_dist_lat(const struct arb_params *p, u64 latency_ns,
				 u32 w, unsigned int dmax)
{
	int i;

	for (i = (int)arb_level(dmax); i >= 0; i--) {
		unsigned int d = 1U << i, n = ARB_SLOTS >> i;
		u32 we = arb_weight_eff(w, n, p->maxweight);

		if (!we)
			continue;
		if (arb_bound_ns(p, d, we / n) <= latency_ns)
			return d;
	}
	return 0;
}

unsigned int arb_distance_for_latency(const struct arb_params *p,
				      u64 latency_ns, u32 w)
{
	return arb_dist_lat(p, latency_ns, w, ARB_SLOTS);
}

unsigned int arb_alloc_distance(const struct arb_alloc *a, unsigned int cls)
{
	if (!arb_alloc_has(a, cls))
		return 0;
	return 1U << a->cls[cls].level;
}

u64 arb_alloc_slot_mask(const struct arb_alloc *a, unsigned int cls)
{
	unsigned int i, s0, d, k;
	u64 m = 0;

	if (!arb_alloc_has(a, cls))
		return 0;
	i = a->cls[cls].level;
	d = 1U << i;
	s0 = arb_rev6(a->cls[cls].set);
	for (k = 0; k < (64U >> i); k++)
		m |= BIT_ULL(s0 + k * d);
	return m;
}

int arb_alloc_check(const struct arb_alloc *a)
{
	u8 cnt[ARB_MAX_CLASSES];
	u64 f[ARB_LEVELS];
	u32 total = 0;
	unsigned int l, c, i;

	memset(cnt, 0, sizeof(cnt));
	for (l = 0; l < ARB_SLOTS; l++) {
		u8 o = a->owner[l];
		bool fr = (a->free >> l) & 1, nobody = o == ARB_NO_CLASS;

		if (fr != nobody)
			return ARB_CHK_FREE_MISMATCH;
		if (o == ARB_NO_CLASS)
			continue;
		if (o >= ARB_MAX_CLASSES || !arb_alloc_has(a, o))
			return ARB_CHK_STRAY_OWNER;
		cnt[o]++;
	}
	for (c = 0; c < ARB_MAX_CLASSES; c++) {
		const struct arb_alloc_class *k = &a->cls[c];
		unsigned int size, n, d, s0, j;
		u64 phys = 0;

		if (k->level == ARB_NO_CLASS)
			continue;
		if (k->level >= ARB_LEVELS)
			return ARB_CHK_CLASS_SET;
		size = SET_SIZE(k->level);
		if (k->set & (size - 1) || cnt[c] != size)
			return ARB_CHK_CLASS_SET;
		for (j = 0; j < size; j++) {
			if (a->owner[k->set + j] != c)
				return ARB_CHK_CLASS_SET;
			phys |= BIT_ULL(arb_rev6(k->set + j));
		}
		/* Physical slots: exactly s0, s0 + d, s0 + 2d, ... */
		n = size;
		d = ARB_SLOTS / n;
		s0 = (unsigned int)__ffs64(phys);
		if (s0 >= d)
			return ARB_CHK_SPACING;
		for (j = 0; j < n; j++)
			phys &= ~BIT_ULL(s0 + j * d);
		if (phys)
			return ARB_CHK_SPACING;
		if (k->w < n || k->w > n * a->maxweight)
			return ARB_CHK_WEIGHT;
		total += k->w;
	}
	if (total != a->total_w || total > ARB_SLOTS * a->maxweight)
		return ARB_CHK_WEIGHT;
	/* Normalized: at most one singular set per level (Definition 4). */
	arb_free_levels(a->free, f);
	for (i = 1; i < ARB_LEVELS; i++)
		if (hweight64(arb_singular(f, i)) > 1)
			return ARB_CHK_NOT_NORMALIZED;
	return ARB_CHK_OK;
}
