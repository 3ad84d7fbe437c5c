/* SPDX-License-Identifier: GPL-2.0 */
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

int arb_alloc_check(const struct arb_alloc *a);

/* Bitmask of the physical slots class cls occupies (0 if none). */
u64 arb_alloc_slot_mask(const struct arb_alloc *a, unsigned int cls);

/* Bitmask of free sets (by first label) at a level; singular ones. */
u64 arb_alloc_free_sets(const struct arb_alloc *a, unsigned int level);
u64 arb_alloc_singular_sets(const struct arb_alloc *a, unsigned int level);

#endif /* _ARBTABLE_CORE_TEST_H */
