/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The core as the userspace tests, fuzzers, arbsim and benchmarks see it:
 * kernel/arbtable_core.h plus views of the allocator's state and its
 * invariant check, which only tests need and the module does not carry.
 */
#ifndef _ARBTABLE_CORE_TEST_H
#define _ARBTABLE_CORE_TEST_H

/*
 * Steps of the arbiter's table walk (ARB_WALK_STEP() in arb_table_pick()
 * and arb_table_skip_rounds()), counted where ARB_TEST_COUNT_STEPS is
 * defined before this header: always in the core (tests/core, so its
 * out-of-line slow path counts), and in a test that defines it for the
 * inline half. The kernel build counts nothing.
 */
extern unsigned long arb_test_walk_steps;
#ifdef ARB_TEST_COUNT_STEPS
#define ARB_WALK_STEP()	(arb_test_walk_steps++)
#endif

#include "arbtable_core.h"

/*
 * Largest power-of-two distance d whose bound (with the weight spread of W
 * units over 64/d slots) is <= latency_ns and whose slots can hold W.
 * Returns 0 when none, i.e. the latency is below the best possible bound.
 */
unsigned int arb_distance_for_latency(const struct arb_params *p,
				      u64 latency_ns, u32 w);

/* arb_alloc_check(): 0 if the invariants hold, else which one broke */
enum {
	ARB_CHK_OK = 0,
	ARB_CHK_FREE_MISMATCH = -1,	/* free bit vs owner disagree */
	ARB_CHK_CLASS_SET = -2,		/* class labels != its set */
	ARB_CHK_STRAY_OWNER = -3,	/* label owned by unknown class */
	ARB_CHK_SPACING = -4,		/* slots not exactly d apart */
	ARB_CHK_NOT_NORMALIZED = -5,	/* two singular sets on a level */
	ARB_CHK_WEIGHT = -6,		/* weights inconsistent */
};

int arb_alloc_check(const struct arb_alloc *a);

/* Distance of an admitted class (0 if not admitted). */
unsigned int arb_alloc_distance(const struct arb_alloc *a, unsigned int cls);

/* Bitmask of the physical slots class cls occupies (0 if none). */
u64 arb_alloc_slot_mask(const struct arb_alloc *a, unsigned int cls);

/* Bitmask of free sets (by first label) at a level; singular ones. */
u64 arb_alloc_free_sets(const struct arb_alloc *a, unsigned int level);
u64 arb_alloc_singular_sets(const struct arb_alloc *a, unsigned int level);

#endif /* _ARBTABLE_CORE_TEST_H */
