// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: allocator operation sequences (insert, release,
 * change) chosen by the input. After every operation:
 * - arb_alloc_check() holds: normalized (one singular set per level at
 *   most), no label owned twice, every class's slots exactly d apart,
 *   weights consistent (fill-in paper §5-§9);
 * - an insert only fails with -ENOSPC when 64/d slots do not fit in the
 *   free slots (Theorem 4), and a failed op leaves the allocator as it was;
 * - replaying the returned moves on a shadow physical table (release: free
 *   the class's slots, then swap in order; change: the same, then fill)
 *   reproduces the allocator's layout exactly, which is what the module
 *   does to its live table.
 */
#include <string.h>
#include "arbtable_core_test.h"
#include "fuzz_input.h"

static u8 shadow[ARB_SLOTS];

static void shadow_fill(const struct arb_alloc *a, unsigned int cls)
{
	u64 m = arb_alloc_slot_mask(a, cls);
	unsigned int s;

	for (s = 0; s < ARB_SLOTS; s++)
		if (m & (1ULL << s))
			shadow[s] = cls;
}

static void shadow_free_and_move(unsigned int cls, const struct arb_moves *mv)
{
	unsigned int s, k;
	u8 t;

	for (s = 0; s < ARB_SLOTS; s++)
		if (shadow[s] == cls)
			shadow[s] = ARB_NO_CLASS;
	for (k = 0; k < mv->n; k++) {
		t = shadow[mv->m[k].a];
		shadow[mv->m[k].a] = shadow[mv->m[k].b];
		shadow[mv->m[k].b] = t;
	}
}

static void shadow_compare(const struct arb_alloc *a, const char *op)
{
	unsigned int s;

	for (s = 0; s < ARB_SLOTS; s++)
		FUZZ_CHECK(shadow[s] == arb_alloc_slot_owner(a, s),
			   "after %s: slot %u shadow %u allocator %u", op, s,
			   shadow[s], arb_alloc_slot_owner(a, s));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fin f = { data, size };
	struct arb_alloc a, before;
	struct arb_moves mv;
	struct arb_reject rj;
	unsigned int maxw = fin_u8(&f);
	int rc, ops = 0;

	arb_alloc_init(&a, maxw);
	memset(shadow, ARB_NO_CLASS, sizeof(shadow));
	while (fin_more(&f) && ops++ < 4096) {
		u8 op = fin_u8(&f) % 3;
		unsigned int cls = fin_u8(&f) % (ARB_MAX_CLASSES + 2);
		unsigned int d = fin_u8(&f) % 70;
		u32 w = fin_u16(&f);
		unsigned int want;

		before = a;
		memset(&mv, 0, sizeof(mv));
		switch (op) {
		case 0:
			rc = arb_alloc_insert(&a, cls, d, w, NULL, &rj);
			if (rc == -ENOSPC && d >= 1 && d <= 64) {
				want = ARB_SLOTS / arb_round_distance(d);
				FUZZ_CHECK(want > arb_alloc_free_slots(&before),
					   "insert d=%u (%u slots) refused with %u free",
					   d, want, arb_alloc_free_slots(&before));
			}
			if (!rc)
				shadow_fill(&a, cls);
			break;
		case 1:
			rc = arb_alloc_release(&a, cls, &mv, &rj);
			if (!rc)
				shadow_free_and_move(cls, &mv);
			break;
		default:
			rc = arb_alloc_change(&a, cls, d, w, &mv, &rj);
			if (!rc) {
				shadow_free_and_move(cls, &mv);
				shadow_fill(&a, cls);
			}
			break;
		}
		if (rc)
			FUZZ_CHECK(!memcmp(&a, &before, sizeof(a)),
				   "op %u on class %u failed (%d) but changed the allocator",
				   op, cls, rc);
		FUZZ_CHECK(arb_alloc_check(&a) == 0, "op %u class %u d %u w %u: check %d",
			   op, cls, d, w, arb_alloc_check(&a));
		shadow_compare(&a, op == 0 ? "insert" : op == 1 ? "release" : "change");
	}
	return 0;
}
