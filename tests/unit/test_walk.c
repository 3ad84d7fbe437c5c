// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the arbiter's bounded table walk (arb_table_pick() and
 * arb_table_skip_rounds() in kernel/arbtable_core.[ch]):
 * - arb_recip_div() is floor division, exhaustively over its exact range;
 * - the walk picks the same slots and leaves the same state as the walk
 *   before it (arb_ref_walk.h: one quantum per pass), step by step, on
 *   adversarial tables: weight 1 and mixed weights, 1..64 classes, both
 *   accountings, highlimit 0..255, packets up to and at 1 MiB, eligibility
 *   changing, slots reprogrammed and swapped;
 * - its steps per pick stay under a constant while the old loop's reach
 *   ~10^6 (both maxima printed).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

/* count the inline half's steps too (arbtable_core_test.h) */
#define ARB_TEST_COUNT_STEPS
#include "arbtable_core_test.h"
#include "arb_test_util.h"
#include "arb_ref_walk.h"

/* steps of one pick: a round inline, two passes of the slow path */
#define WALK_BOUND	(3 * ARB_SLOTS)

/* ------------------------------------------------------------------ */
/* 1. The reciprocal                                                    */
/* ------------------------------------------------------------------ */

static void test_recip_exhaustive(void **state)
{
	unsigned int w, x;

	(void)state;
	assert_int_equal(arb_weight_recip(0), 0);
	/* the debts the walk divides: D / 64 with D <= ARB_MAX_PKT_LEN */
	assert_true((ARB_MAX_PKT_LEN >> 6) <= ARB_RECIP_MAX_X);
	assert_true(((1U << 21) - 1) >> 6 <= ARB_RECIP_MAX_X);
	for (w = 1; w <= 255; w++) {
		u32 rc = arb_weight_recip((u8)w);

		assert_int_equal(rc, ((1U << ARB_RECIP_SHIFT) + w - 1) / w);
		for (x = 0; x <= ARB_RECIP_MAX_X; x++)
			if (arb_recip_div(x, rc) != x / w)
				fail_msg("floor(%u / %u): got %u, want %u", x, w,
					 arb_recip_div(x, rc), x / w);
	}
}

/* ------------------------------------------------------------------ */
/* 2. Equivalence with the old walk, and the bound                      */
/* ------------------------------------------------------------------ */

enum walk_layout {
	WL_W1,		/* 64 HIGH slots of weight 1, class i % ncls */
	WL_W1_SHARED,	/* 64 HIGH slots of weight 1, random classes */
	WL_MIXED,	/* 64 HIGH slots of weight 1..255, class i % ncls */
	WL_RANDOM,	/* both tables, random fill, weights and classes */
};

enum walk_sizes {
	WS_1M,		/* every packet ARB_MAX_PKT_LEN */
	WS_UPTO_1M,	/* uniform 1..1 MiB, 1 in 8 exactly 1 MiB */
	WS_OVER,	/* up to 2 MiB: the charge cap */
	WS_MIX,		/* mostly small, some large */
};

struct walk_cfg {
	u8 layout;		/* enum walk_layout */
	u8 sizes;		/* enum walk_sizes */
	u8 accounting;
	u8 highlimit;
	bool low;		/* fill the LOW table too (weight-1 layouts) */
	unsigned int ncls;	/* 1..64 */
	unsigned int churn;	/* per mille of steps changing eligibility */
	unsigned int drain;	/* % of charges that drain the class */
	unsigned int reprogram;	/* per mille of steps reprogramming */
};

struct walk_stats {
	unsigned long picks;		/* picks that walked a table */
	unsigned long slow;		/* of those, a whole round in debt */
	unsigned long max_steps;	/* new walk, per pick */
	unsigned long max_ref;		/* old walk, passes per pick */
	unsigned long long steps, ref;	/* totals */
};

static u32 walk_len(struct arb_rng *r, u8 sizes)
{
	unsigned int k;

	switch (sizes) {
	case WS_1M:
		return ARB_MAX_PKT_LEN;
	case WS_UPTO_1M:
		if (arb_rng_chance(r, 12))
			return ARB_MAX_PKT_LEN;
		return arb_rng_range(r, 1, ARB_MAX_PKT_LEN);
	case WS_OVER:
		if (arb_rng_chance(r, 20))
			return ARB_MAX_PKT_LEN + 1;
		return arb_rng_range(r, 1, 2 * ARB_MAX_PKT_LEN);
	default:
		k = arb_rng_range(r, 0, 99);
		if (k < 50)
			return arb_rng_range(r, 64, 1500);
		if (k < 75)
			return arb_rng_range(r, 1, 65536);
		if (k < 95)
			return arb_rng_range(r, 1, ARB_MAX_PKT_LEN);
		return ARB_MAX_PKT_LEN;
	}
}

static u8 walk_weight(struct arb_rng *r, const struct walk_cfg *c)
{
	if (c->layout == WL_W1 || c->layout == WL_W1_SHARED)
		return 1;
	return arb_rng_chance(r, 30) ? 1 : (u8)arb_rng_range(r, 1, 255);
}

static void walk_tables(struct arb_sched *s, struct arb_rng *r,
			const struct walk_cfg *c)
{
	unsigned int t, i, fill;

	for (i = 0; i < ARB_SLOTS; i++) {
		switch (c->layout) {
		case WL_W1:
		case WL_MIXED:
			arb_set_slot(s, ARB_HIGH, i, i % c->ncls,
				     walk_weight(r, c));
			if (c->low)
				arb_set_slot(s, ARB_LOW, i,
					     (i + 1) % c->ncls,
					     walk_weight(r, c));
			break;
		case WL_W1_SHARED:
			arb_set_slot(s, ARB_HIGH, i,
				     arb_rng_range(r, 0, c->ncls - 1), 1);
			if (c->low)
				arb_set_slot(s, ARB_LOW, i,
					     arb_rng_range(r, 0, c->ncls - 1),
					     1);
			break;
		default:
			for (t = 0; t < ARB_NTABLES; t++) {
				fill = arb_rng_range(r, 10, 100);
				if (!arb_rng_chance(r, fill))
					continue;
				arb_set_slot(s, t, i,
					     arb_rng_range(r, 0, c->ncls - 1),
					     walk_weight(r, c));
			}
			break;
		}
	}
}

/* Both arbiters must agree on everything, field by field. */
static void walk_same(const struct arb_sched *a, const struct arb_sched *b,
		      uint64_t seed, unsigned int step, const char *what)
{
	unsigned int t, i;

	for (t = 0; t < ARB_NTABLES; t++) {
		const struct arb_table *x = &a->tbl[t], *y = &b->tbl[t];

		for (i = 0; i < ARB_SLOTS; i++)
			if (x->credit[i] != y->credit[i])
				fail_msg("seed %llu step %u (%s): table %u slot %u credit %d, old walk %d",
					 (unsigned long long)seed, step, what,
					 t, i, x->credit[i], y->credit[i]);
		if (x->cur != y->cur || x->in_visit != y->in_visit)
			fail_msg("seed %llu step %u (%s): table %u cur %u visit %d, old walk cur %u visit %d",
				 (unsigned long long)seed, step, what, t,
				 x->cur, x->in_visit, y->cur, y->in_visit);
		if (memcmp(x->cls, y->cls, sizeof(x->cls)) ||
		    memcmp(x->weight, y->weight, sizeof(x->weight)) ||
		    memcmp(x->recip, y->recip, sizeof(x->recip)) ||
		    x->used != y->used || x->eligible != y->eligible)
			fail_msg("seed %llu step %u (%s): table %u differs",
				 (unsigned long long)seed, step, what, t);
		for (i = 0; i < ARB_SLOTS; i++) {
			if (x->recip[i] != arb_weight_recip(x->weight[i]))
				fail_msg("seed %llu step %u (%s): table %u slot %u weight %u recip %u",
					 (unsigned long long)seed, step, what,
					 t, i, x->weight[i], x->recip[i]);
			/* the reciprocal's range: a debt below one packet */
			if (x->credit[i] <= -(s32)ARB_MAX_PKT_LEN)
				fail_msg("seed %llu step %u (%s): table %u slot %u debt %d",
					 (unsigned long long)seed, step, what,
					 t, i, x->credit[i]);
		}
	}
	if (memcmp(a->cls_slots, b->cls_slots, sizeof(a->cls_slots)) ||
	    a->cls_eligible != b->cls_eligible ||
	    a->cls_slotted != b->cls_slotted ||
	    a->hp_counter != b->hp_counter || a->highlimit != b->highlimit ||
	    a->accounting != b->accounting || a->strict != b->strict ||
	    a->low_turn != b->low_turn || a->slotless_cur != b->slotless_cur)
		fail_msg("seed %llu step %u (%s): scheduler state differs",
			 (unsigned long long)seed, step, what);
}

static u8 walk_highlimit(struct arb_rng *r)
{
	static const u8 hl[] = { 0, 1, 4, ARB_HIGHLIMIT_INF };

	if (arb_rng_chance(r, 20))
		return (u8)arb_rng_range(r, 0, 255);
	return hl[arb_rng_range(r, 0, ARRAY_SIZE(hl) - 1)];
}

/*
 * Run @steps steps of @c on two arbiters, @a with today's walk and @b
 * with the old one (arb_ref_select()), every operation applied to both,
 * and compare the picks and the whole state after each.
 */
static void walk_run(const struct walk_cfg *c, uint64_t seed,
		     unsigned int steps, struct walk_stats *st)
{
	static struct arb_sched a, b;
	struct arb_rng r;
	unsigned int i;

	arb_rng_seed(&r, seed);
	arb_init(&a, c->highlimit, c->accounting);
	walk_tables(&a, &r, c);
	for (i = 0; i < c->ncls; i++)
		arb_set_eligible(&a, i, true);
	memcpy(&b, &a, sizeof(a));

	for (i = 0; i < steps; i++) {
		unsigned int op = arb_rng_range(&r, 0, 999);
		unsigned long before, n, ref = 0;
		struct arb_pick pa, pb;
		unsigned int cls, t, x, y;
		bool sa, sb, on;
		u32 len;
		s32 ca, cb;
		u8 w;

		if (op < c->churn) {
			cls = arb_rng_range(&r, 0, c->ncls - 1);
			on = arb_rng_chance(&r, 70);
			arb_set_eligible(&a, cls, on);
			arb_set_eligible(&b, cls, on);
			walk_same(&a, &b, seed, i, "eligibility");
			continue;
		}
		op -= c->churn;
		if (op < c->reprogram) {
			t = c->layout == WL_RANDOM || c->low ?
			    arb_rng_range(&r, 0, 1) : ARB_HIGH;
			x = arb_rng_range(&r, 0, ARB_SLOTS - 1);
			if (arb_rng_chance(&r, 50)) {
				y = arb_rng_range(&r, 0, ARB_SLOTS - 1);
				arb_swap_slots(&a, t, x, y);
				arb_swap_slots(&b, t, x, y);
			} else {
				cls = arb_rng_range(&r, 0, c->ncls - 1);
				w = arb_rng_chance(&r, 10) ? 0 :
				    walk_weight(&r, c);
				arb_set_slot(&a, t, x, cls, w);
				arb_set_slot(&b, t, x, cls, w);
			}
			walk_same(&a, &b, seed, i, "reprogram");
			continue;
		}
		op -= c->reprogram;
		if (op < 3 && c->churn) {
			w = walk_highlimit(&r);
			arb_set_highlimit(&a, w);
			arb_set_highlimit(&b, w);
			continue;
		}
		if (op == 3 && c->churn) {
			w = a.accounting == ARB_ACCT_IBA ? ARB_ACCT_DEFICIT :
							   ARB_ACCT_IBA;
			arb_set_accounting(&a, w);
			arb_set_accounting(&b, w);
			continue;
		}

		before = arb_test_walk_steps;
		sa = arb_select(&a, &pa);
		n = arb_test_walk_steps - before;
		sb = arb_ref_select(&b, &pb, &ref);
		assert_int_equal(sa, sb);
		if (!sa) {
			/* nothing eligible: wake every class */
			for (cls = 0; cls < c->ncls; cls++) {
				arb_set_eligible(&a, cls, true);
				arb_set_eligible(&b, cls, true);
			}
			continue;
		}
		if (pa.table != pb.table || pa.slot != pb.slot ||
		    pa.cls != pb.cls)
			fail_msg("seed %llu step %u: picked table %u slot %u class %u, old walk table %u slot %u class %u",
				 (unsigned long long)seed, i, pa.table,
				 pa.slot, pa.cls, pb.table, pb.slot, pb.cls);
		walk_same(&a, &b, seed, i, "select");
		if (pa.table < ARB_NTABLES) {
			unsigned int e = hweight64(a.tbl[pa.table].eligible);

			if (n > 3 * e || n > WALK_BOUND)
				fail_msg("seed %llu step %u: %lu steps for %u eligible slots",
					 (unsigned long long)seed, i, n, e);
			st->picks++;
			st->slow += ref > e;
			st->steps += n;
			st->ref += ref;
			if (n > st->max_steps)
				st->max_steps = n;
			if (ref > st->max_ref)
				st->max_ref = ref;
		}

		len = walk_len(&r, c->sizes);
		ca = arb_charge(&a, &pa, len);
		cb = arb_charge(&b, &pb, len);
		assert_int_equal(ca, cb);
		/* drained, or a child that dropped its last packets in its
		 * dequeue: settled after the charge
		 */
		if (arb_rng_chance(&r, 2) || arb_rng_chance(&r, c->drain)) {
			arb_set_drained(&a, pa.cls);
			arb_set_drained(&b, pb.cls);
		}
		walk_same(&a, &b, seed, i, "charge");
	}
}

/* A mix of adversarial configurations, several seeds each. */
static const struct walk_cfg walk_cfgs[] = {
	/* the worst case: 64 weight-1 slots, 1 MiB packets, no churn */
	{ WL_W1, WS_1M, ARB_ACCT_DEFICIT, ARB_HIGHLIMIT_INF, false, 64,
	  0, 0, 0 },
	{ WL_W1, WS_UPTO_1M, ARB_ACCT_DEFICIT, ARB_HIGHLIMIT_INF, false, 64,
	  0, 0, 0 },
	{ WL_W1, WS_OVER, ARB_ACCT_DEFICIT, 0, true, 64, 20, 5, 2 },
	{ WL_W1, WS_MIX, ARB_ACCT_IBA, 4, true, 64, 50, 10, 5 },
	{ WL_W1_SHARED, WS_UPTO_1M, ARB_ACCT_DEFICIT, 0, false, 7,
	  30, 10, 5 },
	{ WL_W1_SHARED, WS_MIX, ARB_ACCT_DEFICIT, 255, true, 33,
	  100, 20, 10 },
	{ WL_MIXED, WS_UPTO_1M, ARB_ACCT_DEFICIT, ARB_HIGHLIMIT_INF, false,
	  64, 10, 5, 5 },
	{ WL_MIXED, WS_MIX, ARB_ACCT_IBA, 0, true, 64, 30, 10, 5 },
	{ WL_MIXED, WS_OVER, ARB_ACCT_DEFICIT, 1, true, 12, 50, 10, 10 },
	{ WL_RANDOM, WS_UPTO_1M, ARB_ACCT_DEFICIT, 4, false, 64, 30, 10,
	  10 },
	{ WL_RANDOM, WS_MIX, ARB_ACCT_DEFICIT, 0, false, 5, 100, 20, 20 },
	{ WL_RANDOM, WS_MIX, ARB_ACCT_IBA, 255, false, 40, 50, 10, 20 },
};

#define WALK_SEEDS	3
#define WALK_STEPS	3000

static void walk_print(const char *what, const struct walk_stats *st)
{
	print_message("%s: %lu picks walked a table, %lu needed more than a round;\n"
		      "  steps per pick: max %lu (bound %u), mean %.2f;\n"
		      "  old walk passes per pick: max %lu, mean %.1f\n",
		      what, st->picks, st->slow, st->max_steps, WALK_BOUND,
		      st->picks ? (double)st->steps / st->picks : 0.0,
		      st->max_ref,
		      st->picks ? (double)st->ref / st->picks : 0.0);
}

static void test_walk_equivalence(void **state)
{
	struct walk_stats st;
	unsigned int k, seed, runs = 0, total = 0;

	(void)state;
	memset(&st, 0, sizeof(st));
	for (k = 0; k < ARRAY_SIZE(walk_cfgs); k++) {
		for (seed = 1; seed <= WALK_SEEDS; seed++) {
			walk_run(&walk_cfgs[k], 1000 * k + seed, WALK_STEPS,
				 &st);
			runs++;
			total += WALK_STEPS;
		}
	}
	print_message("walk equivalence: %u runs, %u steps\n", runs, total);
	walk_print("walk equivalence", &st);
	assert_true(total >= 100000);
	/* the slow path ran, often */
	assert_true(st.slow > 5000);
	assert_true(st.max_steps <= WALK_BOUND);
}

/*
 * The adversarial tables alone, each seed from a fresh start: every slot
 * weight 1 (quantum 64 B), 64 classes, 1 MiB packets. After the first
 * round every slot owes ~1 MiB, and the old walk goes round ~16,000 times
 * (~10^6 passes) before one gets out of debt.
 */
static void test_walk_bound(void **state)
{
	static const struct walk_cfg adv[] = {
		{ WL_W1, WS_1M, ARB_ACCT_DEFICIT, ARB_HIGHLIMIT_INF, false,
		  64, 0, 0, 0 },
		{ WL_W1, WS_UPTO_1M, ARB_ACCT_DEFICIT, ARB_HIGHLIMIT_INF,
		  false, 64, 0, 0, 0 },
		{ WL_W1, WS_1M, ARB_ACCT_DEFICIT, 0, true, 64, 0, 0, 0 },
		{ WL_MIXED, WS_1M, ARB_ACCT_DEFICIT, ARB_HIGHLIMIT_INF, false,
		  64, 0, 0, 0 },
	};
	struct walk_stats st;
	unsigned int k, seed;

	(void)state;
	memset(&st, 0, sizeof(st));
	for (k = 0; k < ARRAY_SIZE(adv); k++)
		for (seed = 1; seed <= 2; seed++)
			walk_run(&adv[k], 77 + 100 * k + seed, 600, &st);
	walk_print("walk bound (64 slots, 1 MiB)", &st);
	assert_true(st.max_steps <= WALK_BOUND);
	/* the tables are adversarial: the old walk's worst is ~10^6 */
	assert_true(st.max_ref >= 1000000);
}

/*
 * Beyond what the API can reach: debts far above one packet (down to
 * S32_MIN), outside the reciprocal's exact range. The slow path then
 * skips fewer rounds at a time and loops; picks and credits must still
 * match the old walk's.
 */
static void test_walk_huge_debt(void **state)
{
	static struct arb_sched a, b;
	unsigned long ref, before, n, max_n = 0;
	struct arb_pick pa, pb;
	struct arb_rng r;
	unsigned int trial, i, k, slots;

	(void)state;
	arb_rng_seed(&r, 4242);
	for (trial = 0; trial < 40; trial++) {
		arb_init(&a, ARB_HIGHLIMIT_INF, ARB_ACCT_DEFICIT);
		slots = arb_rng_range(&r, 1, 6);
		for (k = 0; k < slots; k++) {
			i = arb_rng_range(&r, 0, ARB_SLOTS - 1);
			arb_set_slot(&a, ARB_HIGH, i, k,
				     (u8)arb_rng_range(&r, 128, 255));
			arb_set_eligible(&a, k, true);
		}
		for (i = 0; i < ARB_SLOTS; i++) {
			if (!a.tbl[ARB_HIGH].weight[i])
				continue;
			if (trial == 0 || arb_rng_chance(&r, 10))
				a.tbl[ARB_HIGH].credit[i] = INT32_MIN;
			else
				a.tbl[ARB_HIGH].credit[i] =
					-(s32)arb_rng_range(&r, 1U << 21,
							    INT32_MAX);
		}
		a.tbl[ARB_HIGH].cur = (u8)arb_rng_range(&r, 0, 63);
		memcpy(&b, &a, sizeof(a));
		ref = 0;
		before = arb_test_walk_steps;
		assert_true(arb_select(&a, &pa));
		n = arb_test_walk_steps - before;
		assert_true(arb_ref_select(&b, &pb, &ref));
		assert_memory_equal(&pa, &pb, sizeof(pa));
		for (i = 0; i < ARB_SLOTS; i++)
			assert_int_equal(a.tbl[ARB_HIGH].credit[i],
					 b.tbl[ARB_HIGH].credit[i]);
		assert_int_equal(a.tbl[ARB_HIGH].cur, b.tbl[ARB_HIGH].cur);
		assert_int_equal(a.tbl[ARB_HIGH].in_visit,
				 b.tbl[ARB_HIGH].in_visit);
		if (n > max_n)
			max_n = n;
	}
	print_message("walk huge debts: max steps per pick %lu\n", max_n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recip_exhaustive),
		cmocka_unit_test(test_walk_equivalence),
		cmocka_unit_test(test_walk_bound),
		cmocka_unit_test(test_walk_huge_debt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
