/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The arbiter's table walk as it was before arb_table_skip_rounds(): one
 * quantum per loop pass, so a pick whose slots are all deep in debt makes
 * ~debt / (64 * weight) passes per eligible slot (~10^6 for 64 weight-1
 * slots owing 1 MiB each). Kept here, test-only, as the reference the
 * bounded walk must reproduce exactly (tests/unit/test_walk.c) and as the
 * baseline bench-core times it against (tests/bench/arbbench.c). Each
 * function counts its loop passes into *@passes.
 */
#ifndef _ARB_REF_WALK_H
#define _ARB_REF_WALK_H

#include "arbtable_core_test.h"

/* arb_table_pick() before the change, verbatim but for the counter and
 * for p->fresh, which the pick reports since (a visit started or not).
 */
static inline void arb_ref_table_pick(struct arb_sched *s, unsigned int t,
				      struct arb_pick *p,
				      unsigned long *passes)
{
	struct arb_table *tb = &s->tbl[t];
	u64 m = tb->eligible;
	unsigned int slot;
	s32 credit;

	p->fresh = false;
	if (tb->in_visit) {
		if (m & BIT_ULL(tb->cur))
			goto out;
		arb_end_visit(s, tb);
	}
	p->fresh = true;
	for (;;) {
		(*passes)++;
		slot = arb_next_slot(m, tb->cur);
		credit = (s32)tb->weight[slot] * ARB_WEIGHT_UNIT;
		if (s->accounting == ARB_ACCT_DEFICIT)
			credit += tb->credit[slot];
		tb->cur = slot;
		tb->credit[slot] = credit;
		if (credit > 0)
			break;
		tb->cur = (slot + 1) & (ARB_SLOTS - 1);
	}
	tb->in_visit = true;
out:
	p->table = t;
	p->slot = tb->cur;
	p->cls = tb->cls[tb->cur];
}

/* arb_select() with the walk above (the benchmark's baseline). */
static inline bool arb_ref_select(struct arb_sched *s, struct arb_pick *p,
				  unsigned long *passes)
{
	u64 hi = s->tbl[ARB_HIGH].eligible;
	u64 lo = s->tbl[ARB_LOW].eligible;

	if (s->strict != ARB_NO_CLASS && arb_class_eligible(s, s->strict)) {
		p->table = ARB_STRICT;
		p->slot = 0;
		p->cls = s->strict;
		p->fresh = false;
		return true;
	}
	if (unlikely(s->low_turn)) {
		if (lo) {
			if (!hi)
				s->hp_counter = arb_hp_limit(s);
			arb_ref_table_pick(s, ARB_LOW, p, passes);
			return true;
		}
		s->low_turn = false;
	}
	if (hi) {
		arb_ref_table_pick(s, ARB_HIGH, p, passes);
		return true;
	}
	if (lo) {
		s->hp_counter = arb_hp_limit(s);
		arb_ref_table_pick(s, ARB_LOW, p, passes);
		return true;
	}
	p->cls = arb_select_slotless(s);
	p->table = ARB_SLOTLESS;
	p->slot = 0;
	p->fresh = false;
	return p->cls != ARB_NO_CLASS;
}

#endif /* _ARB_REF_WALK_H */
