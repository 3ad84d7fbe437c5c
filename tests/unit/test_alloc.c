// SPDX-License-Identifier: GPL-2.0
/*
 * Unit and property tests of the allocator core (kernel/arbtable_core.c).
 * [F] fill-in-arbitration-table.txt, [E] table-management-evaluation.txt,
 * [B] bxiv3-qos.txt.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "arbtable_core_test.h"

/* Physical slots k0 + k*step, k = 0..n-1. */
static u64 slots(unsigned int k0, unsigned int step, unsigned int n)
{
	u64 m = 0;
	unsigned int k;

	for (k = 0; k < n; k++)
		m |= 1ULL << (k0 + k * step);
	return m;
}

static u64 phys_free(const struct arb_alloc *a)
{
	u64 m = 0;
	unsigned int s;

	for (s = 0; s < 64; s++)
		if (arb_alloc_slot_owner(a, s) == ARB_NO_CLASS)
			m |= 1ULL << s;
	return m;
}

static void ins(struct arb_alloc *a, unsigned int cls, unsigned int d,
		unsigned int want_set)
{
	u8 set = 0xee;

	assert_int_equal(arb_alloc_insert(a, cls, d, 0, &set, NULL), 0);
	assert_int_equal(set, want_set);
	assert_int_equal(arb_alloc_check(a), 0);
}

static void rel(struct arb_alloc *a, unsigned int cls, struct arb_moves *mv)
{
	mv->n = 0;
	assert_int_equal(arb_alloc_release(a, cls, mv, NULL), 0);
	assert_int_equal(arb_alloc_check(a), 0);
}

/* Move @i of @mv swaps the slots labelled @la and @lb (bit-reversed) */
static void assert_move(const struct arb_moves *mv, unsigned int i,
			unsigned int la, unsigned int lb)
{
	assert_int_equal(mv->m[i].a, arb_rev6(la));
	assert_int_equal(mv->m[i].b, arb_rev6(lb));
}

/* ---------------------------------------------------------------------- */
/* Fixed vectors                                                           */

static void test_rev6_and_sets(void **state)
{
	unsigned int x;

	(void)state;
	for (x = 0; x < 64; x++)
		assert_int_equal(arb_rev6(arb_rev6(x)), x);
	assert_int_equal(arb_rev6(1), 32);
	assert_int_equal(arb_rev6(8), 4);
	/* [E] Cuadro 1, 16-entry table: E_{3,40} of 64 = {40,44,42,...} */
	assert_int_equal(arb_rev6(40), 5);	/* slots 5, 13, ... */
	assert_int_equal(arb_round_distance(0), 0);
	assert_int_equal(arb_round_distance(65), 0);
	assert_int_equal(arb_round_distance(3), 2);
	assert_int_equal(arb_round_distance(11), 8);	/* [F] 6.1.2 */
	assert_int_equal(arb_round_distance(45), 32);
	assert_int_equal(arb_round_distance(63), 32);
	assert_int_equal(arb_round_distance(64), 64);
}

/* [F] Figure 5: requests 45, 8, 53, 61, 60, 55, 24, 3, 9 (power of 2). */
static void test_paper_figure5(void **state)
{
	static const unsigned int req[] = { 45, 8, 53, 61, 60, 55, 24, 3, 9 };
	/* 1-based entries of the figure minus one. */
	const u64 want[] = {
		slots(0, 32, 2), slots(4, 8, 8), slots(16, 32, 2),
		slots(8, 32, 2), slots(24, 32, 2), slots(2, 32, 2),
		slots(10, 16, 4), slots(1, 2, 32), slots(6, 8, 8),
	};
	struct arb_alloc a;
	unsigned int c;

	(void)state;
	arb_alloc_init(&a, 255);
	for (c = 0; c < 9; c++) {
		assert_int_equal(arb_alloc_insert(&a, c, req[c], 0, NULL,
						  NULL), 0);
		assert_int_equal(arb_alloc_check(&a), 0);
	}
	for (c = 0; c < 9; c++)
		assert_true(arb_alloc_slot_mask(&a, c) == want[c]);
	/* "still 2 free entries (entries number 19 and 51)" */
	assert_true(phys_free(&a) == ((1ULL << 18) | (1ULL << 50)));
	assert_true(arb_alloc_singular_sets(&a, 5) == (1ULL << 18));
}

/* 8 classes of distance 8 fill the table: E_{3,0}, E_{3,8}, ..., E_{3,56}. */
static void fill8(struct arb_alloc *a)
{
	unsigned int c;

	arb_alloc_init(a, 255);
	for (c = 0; c < 8; c++)
		ins(a, c, 8, c * 8);
	assert_int_equal(arb_alloc_free_slots(a), 0);
}

/* [F] Examples 1-3 (Figures 9-12) with smart insertion. */
static void test_paper_examples_1_3(void **state)
{
	struct arb_alloc a;
	struct arb_moves mv;
	unsigned int k;

	(void)state;
	fill8(&a);
	rel(&a, 2, &mv);		/* E_{3,16} */
	assert_int_equal(mv.n, 0);
	rel(&a, 4, &mv);		/* E_{3,32}: two singular on level 3 */
	/* Example 2: interchange E_{3,16} and E_{3,40}; E_{2,32} free. */
	assert_int_equal(mv.n, 8);
	for (k = 0; k < 8; k++) {
		assert_move(&mv, k, 16 + k, 40 + k);
	}
	assert_int_equal(a.cls[5].set, 16);
	assert_true(arb_alloc_free_sets(&a, 2) == (1ULL << 32));
	assert_true(arb_alloc_singular_sets(&a, 2) == (1ULL << 32));
	/* Example 3: release E_{3,56}; not ordered, still normalized. */
	rel(&a, 7, &mv);
	assert_int_equal(mv.n, 0);
	/*
	 * A request of type 8: leftmost fill-in would take E_{3,32} and
	 * denormalize (Figure 12); smart insertion takes E_{3,56}.
	 */
	ins(&a, 9, 8, 56);
	assert_true(arb_alloc_free_sets(&a, 2) == (1ULL << 32));
	assert_true(arb_alloc_singular_sets(&a, 3) == 0);
}

/* [F] Example 5 (Figure 15): two defragmentation iterations. */
static void test_paper_example5(void **state)
{
	struct arb_alloc a;
	struct arb_moves mv;

	(void)state;
	fill8(&a);
	rel(&a, 6, &mv);		/* E_{3,48} */
	rel(&a, 7, &mv);		/* E_{3,56}: merges, E_{2,48} free */
	assert_int_equal(mv.n, 0);
	rel(&a, 2, &mv);		/* E_{3,16} singular: Figure 15(a) */
	assert_int_equal(mv.n, 0);
	rel(&a, 0, &mv);		/* release E_{3,0} */
	/* E_{3,0} <-> E_{3,24}, then E_{2,16} <-> E_{2,32}. */
	assert_int_equal(mv.n, 8 + 16);
	assert_move(&mv, 0, 0, 24);
	assert_move(&mv, 8, 16, 32);
	assert_int_equal(a.cls[3].set, 0);
	assert_int_equal(a.cls[4].set, 16);
	assert_int_equal(a.cls[5].set, 24);
	assert_int_equal(a.cls[1].set, 8);
	/* Figure 15(b): E_{1,32} free, i.e. the odd slots. */
	assert_true(phys_free(&a) == slots(1, 2, 32));
	assert_true(arb_alloc_singular_sets(&a, 1) == (1ULL << 32));
	ins(&a, 10, 2, 32);
}

/*
 * [E] Examples 1, 2, 3, 10 on its 16-entry table, scaled to 64 entries
 * (label j -> 4j, same levels): Figure 8 has E_{2,0} and E_{3,6} occupied,
 * E_{3,4} and E_{1,8} singular.
 */
static void test_eval_examples_1_2_10(void **state)
{
	struct arb_alloc a;
	struct arb_moves mv;

	(void)state;
	arb_alloc_init(&a, 255);
	ins(&a, 0, 4, 0);		/* E_{2,0} */
	ins(&a, 1, 8, 16);
	ins(&a, 2, 8, 24);		/* E_{3,6} scaled */
	rel(&a, 1, &mv);		/* leaves E_{3,4} scaled singular */
	assert_int_equal(mv.n, 0);
	assert_true(arb_alloc_singular_sets(&a, 3) == (1ULL << 16));
	assert_true(arb_alloc_singular_sets(&a, 1) == (1ULL << 32));
	/* Example 1: a 4-entry request takes E_{2,8} (scaled E_{2,32}). */
	ins(&a, 3, 4, 32);
	/* Example 2/10: release E_{2,0}; swap E_{2,0} and E_{2,8}. */
	rel(&a, 0, &mv);
	assert_int_equal(mv.n, 16);
	assert_move(&mv, 0, 0, 32);
	assert_int_equal(a.cls[3].set, 0);
	/* Figure 26 / Example 3: E_{1,8} (scaled E_{1,32}) is free. */
	assert_true(arb_alloc_singular_sets(&a, 1) == (1ULL << 32));
	/* Example 3: an 8-entry request (level 1) now fits. */
	ins(&a, 4, 2, 32);
}

/* [E] Example 11 (Figures 27-29), scaled: swaps on levels 4 then 3. */
static void test_eval_example11(void **state)
{
	struct arb_alloc a;
	struct arb_moves mv;
	unsigned int c;

	(void)state;
	arb_alloc_init(&a, 255);
	for (c = 0; c < 8; c++)
		ins(&a, c, 16, c * 4);		/* E_{4,0} .. E_{4,28} */
	for (c = 8; c < 12; c++)
		ins(&a, c, 8, 32 + (c - 8) * 8);	/* E_{3,32} .. */
	rel(&a, 5, &mv);			/* E_{4,5} scaled: 20 */
	rel(&a, 9, &mv);			/* E_{3,10} scaled: 40 */
	assert_int_equal(mv.n, 0);
	rel(&a, 3, &mv);			/* E_{4,3} scaled: 12 */
	/* E_{4,3}<->E_{4,4}, then E_{3,4}<->E_{3,8} (scaled x4). */
	assert_int_equal(mv.n, 4 + 8);
	assert_move(&mv, 0, 12, 16);
	assert_move(&mv, 4, 16, 32);
	assert_int_equal(a.cls[4].set, 12);
	assert_int_equal(a.cls[8].set, 16);
	/* Figure 29: the only singular set is E_{2,8} (scaled E_{2,32}). */
	assert_true(arb_alloc_singular_sets(&a, 2) == (1ULL << 32));
	assert_true(arb_alloc_singular_sets(&a, 3) == 0);
	assert_true(arb_alloc_singular_sets(&a, 4) == 0);
}

/* [B] Table 2: latency tuning with strides 2, 4, 8, 16, 32. */
static void test_bxiv3_layout(void **state)
{
	struct arb_alloc a;
	unsigned int c, s;

	(void)state;
	arb_alloc_init(&a, 255);
	for (c = 0; c < 5; c++)
		assert_int_equal(arb_alloc_insert(&a, c, 2U << c, 0, NULL,
						  NULL), 0);
	assert_int_equal(arb_alloc_check(&a), 0);
	assert_true(arb_alloc_slot_mask(&a, 0) == slots(0, 2, 32));
	assert_true(arb_alloc_slot_mask(&a, 1) == slots(1, 4, 16));
	assert_true(arb_alloc_slot_mask(&a, 2) == slots(3, 8, 8));
	assert_true(arb_alloc_slot_mask(&a, 3) == slots(7, 16, 4));
	assert_true(arb_alloc_slot_mask(&a, 4) == slots(15, 32, 2));
	assert_true(phys_free(&a) == ((1ULL << 31) | (1ULL << 63)));
	/* Every class recurs exactly at its stride. */
	for (c = 0; c < 5; c++)
		for (s = 0; s < 64; s++)
			if (arb_alloc_slot_owner(&a, s) == c)
				assert_int_equal(arb_alloc_slot_owner(&a,
						 (s + (2U << c)) % 64), c);
}

/*
 * The module sends a refusal as a formatted netlink message, 80 bytes with
 * the NUL on 6.2+ (NETLINK_MAX_FMTMSG_LEN): every reason must fit for every
 * value its fields can take (slots and distances up to 64, weights up to
 * 64 * 255, rates up to 2^48 bytes/s; times up to 10^6 s, the bound at 8
 * bit/s with the largest mtu), two values that differ by one unit
 * included (tc's units print them alike), and each has a constant text
 * for 6.1.
 */
static void test_reject_fits_netlink(void **state)
{
	static const u64 rates[] = { 1, 123456789, 999999999999ULL,
				     (1ULL << 40) + 1, 1ULL << 48 };
	static const u64 times[] = { 1, 999999, 123456789,
				     999999999999999ULL };
	static const u32 small[] = { 0, 1, 63, 64 };
	struct arb_reject rj;
	unsigned int code, i, j, k;
	char buf[256];
	size_t n, longest = 0;

	(void)state;
	for (code = ARB_R_OK; code <= ARB_R_SHARE_SPREAD; code++) {
		assert_true(strlen(arb_reason_text(code)) > 0);
		for (k = 0; k < code; k++)
			assert_string_not_equal(arb_reason_text(code),
						arb_reason_text(k));
		for (i = 0; i < ARRAY_SIZE(small); i++) {
			memset(&rj, 0, sizeof(rj));
			rj.code = code;
			rj.need_slots = small[i];
			rj.distance = small[ARRAY_SIZE(small) - 1 - i];
			rj.free_slots = small[i] ? small[i] - 1 : 0;
			rj.fit_distance = small[i];
			rj.weight = 64 * 255;
			rj.capacity = 64 * 255 - 1;
			rj.share = 255;
			for (j = 0; j < ARRAY_SIZE(rates) * ARRAY_SIZE(times); j++) {
				rj.rate = rates[j % ARRAY_SIZE(rates)];
				rj.cap_rate = rates[(j + 1) % ARRAY_SIZE(rates)];
				rj.latency_ns = times[j % ARRAY_SIZE(times)];
				rj.best_ns = times[(j + 1) % ARRAY_SIZE(times)];
				n = arb_reject_format(&rj, buf, sizeof(buf));
				if (n >= 80)
					fail_msg("%zu characters: %s", n, buf);
				if (n > longest)
					longest = n;
				/* one unit apart, as the refusal has them */
				rj.cap_rate = rj.rate - (rj.rate > 1);
				rj.best_ns = rj.latency_ns + 1;
				n = arb_reject_format(&rj, buf, sizeof(buf));
				if (n >= 80)
					fail_msg("%zu characters: %s", n, buf);
				if (n > longest)
					longest = n;
			}
		}
	}
	print_message("longest refusal: %zu characters\n", longest);
}

/* ---------------------------------------------------------------------- */
/* Edge and bad input                                                      */

static void test_bad_inputs(void **state)
{
	struct arb_alloc a, b;
	struct arb_reject rj;
	struct arb_moves mv;
	char buf[160];

	(void)state;
	arb_alloc_init(&a, 255);
	assert_int_equal(arb_alloc_insert(&a, 0, 0, 0, NULL, &rj), -EINVAL);
	assert_int_equal(rj.code, ARB_R_BAD_DISTANCE);
	arb_reject_format(&rj, buf, sizeof(buf));
	assert_string_equal(buf, "distance 0 invalid: must be 1..64");
	assert_int_equal(arb_alloc_insert(&a, 0, 65, 0, NULL, &rj), -EINVAL);
	assert_int_equal(arb_alloc_insert(&a, 0, 128, 0, NULL, &rj), -EINVAL);
	assert_int_equal(arb_alloc_insert(&a, 64, 8, 0, NULL, &rj), -EINVAL);
	assert_int_equal(rj.code, ARB_R_BAD_CLASS);
	/* Non power of two: rounded down ([F] Table 1). */
	assert_int_equal(arb_alloc_insert(&a, 0, 3, 0, NULL, &rj), 0);
	assert_int_equal(arb_alloc_distance(&a, 0), 2);
	assert_int_equal(hweight64(arb_alloc_slot_mask(&a, 0)), 32);
	assert_int_equal(arb_alloc_insert(&a, 0, 8, 0, NULL, &rj), -EEXIST);
	assert_int_equal(rj.code, ARB_R_EXISTS);
	/* Weight out of range for the slots. */
	assert_int_equal(arb_alloc_insert(&a, 1, 32, 511, NULL, &rj),
			 -EINVAL);
	assert_int_equal(rj.code, ARB_R_WEIGHT);
	arb_reject_format(&rj, buf, sizeof(buf));
	assert_string_equal(buf, "needs 511 weight units, 2 slots at distance 32 hold at most 510");
	assert_int_equal(arb_alloc_release(&a, 5, &mv, &rj), -ENOENT);
	assert_int_equal(rj.code, ARB_R_UNKNOWN);
	assert_int_equal(arb_alloc_release(&a, 99, &mv, &rj), -EINVAL);
	assert_int_equal(arb_alloc_change(&a, 7, 8, 0, &mv, &rj), -ENOENT);
	/* DESIGN's example message: 10 free, a distance-4 request. */
	arb_alloc_init(&a, 255);
	assert_int_equal(arb_alloc_insert(&a, 0, 2, 0, NULL, NULL), 0);
	assert_int_equal(arb_alloc_insert(&a, 1, 4, 0, NULL, NULL), 0);
	assert_int_equal(arb_alloc_insert(&a, 2, 16, 0, NULL, NULL), 0);
	assert_int_equal(arb_alloc_insert(&a, 3, 32, 0, NULL, NULL), 0);
	assert_int_equal(arb_alloc_free_slots(&a), 10);
	b = a;
	assert_int_equal(arb_alloc_insert(&a, 4, 4, 0, NULL, &rj), -ENOSPC);
	assert_memory_equal(&a, &b, sizeof(a));
	arb_reject_format(&rj, buf, sizeof(buf));
	assert_string_equal(buf, "needs 16 slots at distance 4, 10 free; largest admissible distance 8");
	/* Atomic change: failing change leaves everything intact. */
	assert_int_equal(arb_alloc_change(&a, 2, 1, 0, &mv, &rj), -ENOSPC);
	assert_memory_equal(&a, &b, sizeof(a));
	/* Table full. */
	arb_alloc_init(&a, 255);
	assert_int_equal(arb_alloc_insert(&a, 0, 1, 0, NULL, NULL), 0);
	assert_int_equal(arb_alloc_insert(&a, 1, 64, 0, NULL, &rj), -ENOSPC);
	arb_reject_format(&rj, buf, sizeof(buf));
	assert_string_equal(buf, "needs 1 slots at distance 64, 0 free; table full");
	/* Truncation keeps a NUL. */
	assert_int_equal(arb_reject_format(&rj, buf, 6), 5);
	assert_string_equal(buf, "needs");
	/* Capacity: maxweight 1, every unit taken. */
	arb_alloc_init(&a, 1);
	assert_int_equal(arb_alloc_insert(&a, 0, 2, 33, NULL, &rj), -EINVAL);
	assert_int_equal(arb_alloc_insert(&a, 0, 2, 32, NULL, &rj), 0);
	/* Units as tc prints them: up to three decimals, truncated. */
	memset(&rj, 0, sizeof(rj));
	rj.code = ARB_R_RATE_ABOVE_CAP;
	rj.rate = 125;			/* 1000 bit/s */
	rj.cap_rate = 8;		/* 64 bit/s */
	arb_reject_format(&rj, buf, sizeof(buf));
	assert_string_equal(buf, "rate 1Kbit above the guaranteed high-table rate 64bit");
	rj.rate = 1220703125ULL;	/* 9.765625 Gbit/s */
	rj.cap_rate = 187500;		/* 1.5 Mbit/s */
	arb_reject_format(&rj, buf, sizeof(buf));
	assert_string_equal(buf, "rate 9.765Gbit above the guaranteed high-table rate 1.5Mbit");
	rj.rate = 1ULL << 48;		/* the largest rate */
	arb_reject_format(&rj, buf, sizeof(buf));
	assert_string_equal(buf, "rate 2251.799Tbit above the guaranteed high-table rate 1.5Mbit");
	rj.code = ARB_R_LATENCY_LOW;
	rj.latency_ns = 1000000;
	rj.best_ns = 2420999;
	rj.distance = 8;
	arb_reject_format(&rj, buf, sizeof(buf));
	assert_string_equal(buf, "latency 1ms below the best possible bound 2.42ms at distance <= 8");
	rj.latency_ns = 1000000;	/* 1 ns apart: the larger rounded up */
	rj.best_ns = 1000001;
	arb_reject_format(&rj, buf, sizeof(buf));
	assert_string_equal(buf, "latency 1ms below the best possible bound 1.001ms at distance <= 8");
	rj.best_ns = 999999999999ULL;	/* up to the next unit */
	rj.latency_ns = rj.best_ns - 1;
	arb_reject_format(&rj, buf, sizeof(buf));
	assert_string_equal(buf, "latency 999.999s below the best possible bound 1000s at distance <= 8");
	rj.latency_ns = 999;
	rj.best_ns = 3000000000ULL;
	arb_reject_format(&rj, buf, sizeof(buf));
	assert_string_equal(buf, "latency 999ns below the best possible bound 3s at distance <= 8");
	/* a rate alone (the qdisc's messages), bits overflowing 64 */
	assert_string_equal(arb_fmt_rate(buf, sizeof(buf), 1250000), "10Mbit");
	assert_string_equal(arb_fmt_rate(buf, sizeof(buf), U64_MAX / 8),
			    "18446744.073Tbit");
	assert_string_equal(arb_fmt_rate(buf, sizeof(buf), U64_MAX / 8 + 1),
			    "2305843009213693952B/s");
}

/* ---------------------------------------------------------------------- */
/* Arithmetic                                                              */

static struct arb_params p10g(void)
{
	struct arb_params p = {
		.rate = 1250000000ULL,	/* 10 Gbit/s */
		.mtu = 1500,
		.maxweight = 255,
		.highlimit = 255,
	};
	return p;
}

static void test_weights(void **state)
{
	struct arb_params p = p10g();
	unsigned int k, sum;

	(void)state;
	assert_int_equal(arb_params_check(&p), 0);
	assert_true(arb_high_capacity(&p) == 1250000000ULL);
	/* 2 Gbit/s of 10: 0.2 * 64 * 255 = 3264 exactly. */
	assert_int_equal(arb_weight_units(&p, 250000000ULL), 3264);
	/* 300 Mbit/s: 0.03 * 16320 = 489.6 -> 490. */
	assert_int_equal(arb_weight_units(&p, 37500000ULL), 490);
	assert_int_equal(arb_weight_units(&p, 0), 0);
	assert_int_equal(arb_weight_units(&p, 1250000001ULL), 0);
	assert_int_equal(arb_weight_units(&p, 1250000000ULL), 16320);
	/* highlimit 16: H = 65536, C_high = C - ceil(C*1500/67036). */
	p.highlimit = 16;
	assert_true(arb_high_capacity(&p) == 1222029954ULL);
	/* highlimit 0: one min_pkt (64) high per MTU low. */
	p.highlimit = 0;
	assert_true(arb_high_capacity(&p) == 51150895ULL);
	p.highlimit = 255;
	p.strict_ceil = 250000000ULL;
	assert_true(arb_high_capacity(&p) == 1000000000ULL);
	/* Spread (hypothesis 3): first takes the remainder. */
	assert_int_equal(arb_slot_weight(490, 8, 0, 255), 61 + 2);
	assert_int_equal(arb_slot_weight(490, 8, 1, 255), 61);
	assert_int_equal(arb_slot_weight(490, 8, 7, 255), 61);
	/* Remainder beyond the cap spills one unit per following slot. */
	assert_int_equal(arb_slot_weight(39, 4, 0, 10), 10);
	assert_int_equal(arb_slot_weight(39, 4, 1, 10), 10);
	assert_int_equal(arb_slot_weight(39, 4, 2, 10), 10);
	assert_int_equal(arb_slot_weight(39, 4, 3, 10), 9);
	for (sum = 0, k = 0; k < 16; k++)
		sum += arb_slot_weight(4079, 16, k, 255);
	assert_int_equal(sum, 4079);
	assert_int_equal(arb_weight_eff(3, 8, 255), 8);
	assert_int_equal(arb_weight_eff(2041, 8, 255), 0);
	/* What a weight guarantees: the inverse, rounded down. */
	p = p10g();
	assert_true(arb_weight_rate(&p, 3264) == 250000000ULL);
	assert_true(arb_weight_rate(&p, 16320) == 1250000000ULL);
	assert_true(arb_weight_rate(&p, 490) == 37530637ULL);
	for (k = 1; k < 1240; k += 7) {	/* r <= C_high */
		u64 r = (u64)k * 1000003ULL;
		u64 back = arb_weight_rate(&p, arb_weight_units(&p, r));

		/* never below what was asked, at most one unit above */
		assert_true(back >= r);
		assert_true(back < r + 1250000000ULL / 16320 + 1);
	}
	p.maxweight = 0;
	assert_true(arb_weight_rate(&p, 10) == 0);
	/* Bad params. */
	p = p10g();
	p.mtu = 10;
	assert_int_equal(arb_params_check(&p), -EINVAL);
	p = p10g();
	p.maxweight = 0;
	assert_int_equal(arb_params_check(&p), -EINVAL);
}

/*
 * The latency boost (arb_spread_for_rate): 1 Mbit/s asking for 50 us on
 * 10 Gbit/s needs one slot to cover an MTU within the bound, so it reserves far
 * more weight than the rate's; what it reserves is what capacity counts
 * and what the class's reserved rate says.
 */
static void test_latency_boost(void **state)
{
	struct arb_params p = p10g();
	struct arb_spread pl;
	struct arb_reject rj;

	(void)state;
	assert_int_equal(arb_spread_for_rate(&p, 125000ULL, 50000ULL, 0, &pl, &rj), 0);
	assert_int_equal(pl.w, 2);
	assert_true(pl.w_eff > pl.w);
	assert_true(pl.bound_ns <= 50000ULL);
	/* the reserved rate is the weight's, not the one asked */
	assert_true(arb_weight_rate(&p, pl.w_eff) >
		    arb_weight_rate(&p, pl.w));
	assert_true(arb_weight_rate(&p, pl.w_eff) ==
		    1250000000ULL * pl.w_eff / 16320);
	/* without a latency nothing is boosted */
	assert_int_equal(arb_spread_for_rate(&p, 125000ULL, 0, 0, &pl, &rj), 0);
	assert_int_equal(pl.w_eff, 2);
}

static void test_bounds(void **state)
{
	struct arb_params p = p10g();

	(void)state;
	/* d 8, wmin 255: S = 7, B = 7*17820 + 1500 = 126240 B -> 100992 ns */
	assert_true(arb_bound_ns(&p, 8, 255) == 100992ULL);
	/* d 1: only the packet in flight: 1500 B = 1200 ns. */
	assert_true(arb_bound_ns(&p, 1, 255) == 1200ULL);
	/* d 64, wmin 1: k = 24, V = 24, S = 1512 -> 26945340 B. */
	assert_true(arb_bound_ns(&p, 64, 1) == 21556272ULL);
	/* highlimit 16, strict 2 Gbit/s ceil + 3000 B burst. */
	p.highlimit = 16;
	p.strict_ceil = 250000000ULL;
	p.strict_burst = 3000;
	/* 124740 + (1 + 1) * 1500 + 1500 + 3000 = 132240 B at 1e9 B/s. */
	assert_true(arb_bound_ns(&p, 8, 255) == 132240ULL);
	p = p10g();
	assert_true(arb_bound_ns(&p, 3, 255) == ARB_BOUND_NONE);
	assert_true(arb_bound_ns(&p, 8, 0) == ARB_BOUND_NONE);
	/* distance_for_latency: W = 2040 needs n >= 8. */
	assert_int_equal(arb_distance_for_latency(&p, 101000, 2040), 8);
	assert_int_equal(arb_distance_for_latency(&p, 100991, 2040), 4);
	assert_int_equal(arb_distance_for_latency(&p, 1200, 0), 1);
	assert_int_equal(arb_distance_for_latency(&p, 1199, 0), 0);
}

/* The mtu followed while none is given: frames below 1 Gbit/s, whole GSO
 * skbs from it up: gso_max_size, the link header, and 72 bytes of
 * headers per 536 bytes of payload (qdisc_pkt_len() charges each segment
 * its headers)
 */
static void test_follow_mtu(void **state)
{
	u32 m;

	(void)state;
	/* 1 Gbit/s less one byte/s: a frame */
	assert_int_equal(arb_follow_mtu(1514, 65536, 14, 124999999ULL), 1514);
	/* 65536 / 536 = 122.3: 123 segments' headers */
	assert_int_equal(arb_follow_mtu(1514, 65536, 14, 125000000ULL),
			 65536 + 14 + 123 * 72);
	assert_int_equal(arb_follow_mtu(1514, 65536, 14, 1250000000ULL), 74406);
	/* gso_max_size lowered by the user: followed (31 segments) */
	assert_int_equal(arb_follow_mtu(1514, 16384, 14, 1250000000ULL),
			 16384 + 14 + 31 * 72);
	/* BIG TCP: the device's larger skbs kept whole too (346 segments) */
	assert_int_equal(arb_follow_mtu(1514, 185000, 14, 1250000000ULL),
			 185000 + 14 + 346 * 72);
	/* GSO_MAX_SIZE, 512 KiB: 979 segments, within ARB_MTU_MAX */
	assert_int_equal(arb_follow_mtu(1514, 524288, 14, 1250000000ULL),
			 524288 + 14 + 979 * 72);
	/* the qdisc_pkt_len() of the skbs the room is for stays within it:
	 * 64 KiB of TCP over IPv4 at MSS 536 (122 segments after the
	 * first), 66 bytes of headers a segment (Ethernet, IPv4, TCP with
	 * timestamps), 70 VLAN-tagged; VXLAN over IPv4 at MSS 1398, 116
	 * bytes a segment; VXLAN over IPv6 at MSS 1338, 156 bytes
	 */
	m = arb_follow_mtu(1514, 65536, 14, 1250000000ULL);
	assert_true(65536 + 14 + 122 * 70 <= m);
	assert_true(65536 + 14 + 46 * 116 <= m);
	assert_true(65536 + 14 + 48 * 156 <= m);
	/* VXLAN at MSS 536 does not fit: such skbs are split */
	assert_true(65536 + 14 + 122 * 116 > m);
	/* a frame above that (loopback, 64 KiB mtu) wins */
	assert_int_equal(arb_follow_mtu(65550, 1024, 14, 1250000000ULL), 65550);
	/* no GSO (0), capacity unknown (0): the frame, kept in range */
	assert_int_equal(arb_follow_mtu(9014, 0, 14, 1250000000ULL), 9014);
	assert_int_equal(arb_follow_mtu(9014, 65536, 14, 0), 9014);
	assert_int_equal(arb_follow_mtu(20, 0, 0, 0), ARB_MTU_MIN);
	assert_int_equal(arb_follow_mtu(ARB_MTU_MAX + 1, 65536, 14, 0),
			 ARB_MTU_MAX);
	/* never above ARB_MTU_MAX, whatever the device says */
	assert_int_equal(arb_follow_mtu(1514, 0xffffffffU, 14, 1250000000ULL),
			 ARB_MTU_MAX);
}

/* The strict class's burst in the bounds: its bucket depth plus one packet */
static void test_strict_burst(void **state)
{
	struct arb_params p;

	(void)state;
	/* default depth: 10 ms of a 2 Gbit/s ceil = 2,500,000 B, + mtu */
	assert_int_equal(arb_strict_burst(250000000ULL, 1500, 0), 2501500);
	/* a slow ceil: 2 * mtu wins over 10 ms (12,500 B at 10 Mbit/s) */
	assert_int_equal(arb_strict_burst(1250000ULL, 9000, 0), 27000);
	/* cburst given: exactly it, + mtu, whatever the ceil */
	assert_int_equal(arb_strict_burst(250000000ULL, 1500, 30000), 31500);
	assert_int_equal(arb_strict_burst(1250000ULL, 1500, 4000), 5500);
	/* a ceil whose 10 ms overflow 64 bits saturates, never wraps */
	assert_int_equal(arb_strict_burst(~0ULL, 1500, 0), 0xffffffffU);
	assert_int_equal(arb_strict_burst(1ULL << 62, 1500, 0), 0xffffffffU);
	arb_admit_params(1000000000ULL, 1500, 255, 16, 250000000ULL, 30000, &p);
	assert_int_equal(p.strict_burst, 31500);
	assert_true(p.strict_ceil == 250000000ULL);
	arb_admit_params(1000000000ULL, 1500, 255, 16, 0, 30000, &p);
	assert_int_equal(p.strict_burst, 0);
}

static void test_plan(void **state)
{
	struct arb_params p = p10g();
	struct arb_spread pl;
	struct arb_reject rj;
	char buf[160];

	(void)state;
	/* 2 Gbit/s, 50 us: W 3264 needs 16 slots; d 4 bound 43968 ns. */
	assert_int_equal(arb_spread_for_rate(&p, 250000000ULL, 50000, 0, &pl, &rj), 0);
	assert_int_equal(pl.distance, 4);
	assert_int_equal(pl.w, 3264);
	assert_int_equal(pl.w_eff, 3264);
	assert_true(pl.bound_ns == 43968ULL);
	/* 300 Mbit/s distance 8 (given 11: rounded down). */
	assert_int_equal(arb_spread_for_rate(&p, 37500000ULL, 0, 11, &pl, &rj), 0);
	assert_int_equal(pl.distance, 8);
	assert_int_equal(pl.w_eff, 490);
	assert_true(pl.bound_ns == 100992ULL);
	/* Weight too big for the distance: more slots. */
	assert_int_equal(arb_spread_for_rate(&p, 250000000ULL, 0, 64, &pl, &rj), 0);
	assert_int_equal(pl.distance, 4);
	/* 10 Mbit/s, 200 us: W 17; weight raised to 24/slot at d 8. */
	assert_int_equal(arb_spread_for_rate(&p, 1250000ULL, 200000, 0, &pl, &rj), 0);
	assert_int_equal(pl.w, 17);
	assert_int_equal(pl.distance, 8);
	assert_int_equal(pl.w_eff, 192);
	assert_true(pl.bound_ns == 100992ULL);
	/* Rejections. */
	assert_int_equal(arb_spread_for_rate(&p, 0, 0, 0, &pl, &rj), -EINVAL);
	assert_int_equal(rj.code, ARB_R_RATE_ZERO);
	assert_int_equal(arb_spread_for_rate(&p, 1250000001ULL, 0, 0, &pl, &rj), -EINVAL);
	assert_int_equal(rj.code, ARB_R_RATE_ABOVE_CAP);
	/* 8 bit/s above: tc's units would print the same, so rounded up */
	arb_reject_format(&rj, buf, sizeof(buf));
	assert_string_equal(buf, "rate 10.001Gbit above the guaranteed high-table rate 10Gbit");
	assert_int_equal(arb_spread_for_rate(&p, 2500000000ULL, 0, 0, &pl, &rj), -EINVAL);
	arb_reject_format(&rj, buf, sizeof(buf));
	assert_string_equal(buf, "rate 20Gbit above the guaranteed high-table rate 10Gbit");
	assert_int_equal(arb_spread_for_rate(&p, 1000, 1000, 0, &pl, &rj), -EINVAL);
	assert_int_equal(rj.code, ARB_R_LATENCY_LOW);
	arb_reject_format(&rj, buf, sizeof(buf));
	assert_string_equal(buf, "latency 1us below the best possible bound 1.2us");
	assert_int_equal(arb_spread_for_rate(&p, 1000, 0, 65, &pl, &rj), -EINVAL);
	assert_int_equal(rj.code, ARB_R_BAD_DISTANCE);
	p.maxweight = 0;
	assert_int_equal(arb_spread_for_rate(&p, 1000, 0, 0, &pl, &rj), -EINVAL);
	assert_int_equal(rj.code, ARB_R_BAD_PARAMS);
}

static void test_current_bound(void **state)
{
	struct arb_params p = p10g();
	struct arb_alloc a;
	unsigned int c;

	(void)state;
	arb_alloc_init(&a, 255);
	/* Alone in the table: nothing between its slots. */
	assert_int_equal(arb_alloc_insert(&a, 0, 8, 2040, NULL, NULL), 0);
	assert_true(arb_alloc_current_bound_ns(&a, &p, 0) == 1200ULL);
	/* Full of maxweight neighbours: equals the guaranteed bound. */
	for (c = 1; c < 8; c++)
		assert_int_equal(arb_alloc_insert(&a, c, 8, 2040, NULL, NULL),
				 0);
	assert_true(arb_alloc_current_bound_ns(&a, &p, 0) ==
		    arb_bound_ns(&p, 8, 255));
	assert_true(arb_alloc_current_bound_ns(&a, &p, 9) == ARB_BOUND_NONE);
}

/* ---------------------------------------------------------------------- */
/* Property test                                                           */

static u64 rng_state;

static u64 rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Level with more weight on long distances, so many classes coexist. */
static unsigned int rnd_distance(void)
{
	static const unsigned int lv[16] = {
		0, 1, 2, 2, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 6
	};
	unsigned int d = 1U << lv[rnd() % 16];

	/* Sometimes a non-power of two in the same range. */
	if (d >= 4 && rnd() % 4 == 0)
		d += (unsigned int)(rnd() % d);
	return d > 64 ? 64 : d;
}

static u32 rnd_weight(unsigned int d, unsigned int mw)
{
	unsigned int n = 64 / arb_round_distance(d);

	return n + (u32)(rnd() % (n * (mw - 1) + 1));
}

struct shadow {
	u8 owner[64];
};

static void shadow_fill(struct shadow *sh, u64 mask, u8 cls)
{
	unsigned int s;

	for (s = 0; s < 64; s++)
		if (mask & (1ULL << s))
			sh->owner[s] = cls;
}

static void shadow_moves(struct shadow *sh, const struct arb_moves *mv)
{
	unsigned int k;

	for (k = 0; k < mv->n; k++) {
		u8 t = sh->owner[mv->m[k].a];

		sh->owner[mv->m[k].a] = sh->owner[mv->m[k].b];
		sh->owner[mv->m[k].b] = t;
	}
}

static void shadow_cmp(const struct shadow *sh, const struct arb_alloc *a)
{
	unsigned int s;

	for (s = 0; s < 64; s++)
		assert_int_equal(sh->owner[s], arb_alloc_slot_owner(a, s));
}

static unsigned long run_seed(u64 seed, unsigned long ops, unsigned long *swaps)
{
	struct arb_alloc a, before;
	struct shadow sh;
	struct arb_moves mv;
	struct arb_reject rj;
	unsigned int mw;
	unsigned long i, ok = 0;

	rng_state = seed;
	mw = 1 + (unsigned int)(seed % 255);
	arb_alloc_init(&a, mw);
	memset(sh.owner, ARB_NO_CLASS, sizeof(sh.owner));
	for (i = 0; i < ops; i++) {
		unsigned int cls = (unsigned int)(rnd() % 64);
		unsigned int op = (unsigned int)(rnd() % 100);
		unsigned int freeb = arb_alloc_free_slots(&a);
		int err;

		before = a;
		if (!arb_alloc_has(&a, cls)) {
			unsigned int d = rnd_distance();
			unsigned int n = 64 / arb_round_distance(d);
			u32 w = rnd_weight(d, mw);

			err = arb_alloc_insert(&a, cls, d, w, NULL, &rj);
			/* Theorem 4: fails iff the slots do not fit. */
			if (n <= freeb) {
				assert_int_equal(err, 0);
				shadow_fill(&sh, arb_alloc_slot_mask(&a, cls),
					    (u8)cls);
				ok++;
			} else {
				assert_int_equal(err, -ENOSPC);
				assert_int_equal(rj.code, ARB_R_NO_SLOTS);
				assert_memory_equal(&a, &before, sizeof(a));
			}
		} else if (op < 55) {
			u64 old = arb_alloc_slot_mask(&a, cls);

			err = arb_alloc_release(&a, cls, &mv, NULL);
			assert_int_equal(err, 0);
			shadow_fill(&sh, old, ARB_NO_CLASS);
			shadow_moves(&sh, &mv);
			*swaps += mv.n;
			ok++;
		} else {
			unsigned int d = rnd_distance();
			unsigned int n = 64 / arb_round_distance(d);
			unsigned int nold = hweight64(arb_alloc_slot_mask(&a,
									  cls));
			u64 old = arb_alloc_slot_mask(&a, cls);
			u32 w = rnd_weight(d, mw);

			err = arb_alloc_change(&a, cls, d, w, &mv, &rj);
			if (n <= freeb + nold) {
				assert_int_equal(err, 0);
				shadow_fill(&sh, old, ARB_NO_CLASS);
				shadow_moves(&sh, &mv);
				shadow_fill(&sh, arb_alloc_slot_mask(&a, cls),
					    (u8)cls);
				*swaps += mv.n;
				ok++;
			} else {
				assert_int_equal(err, -ENOSPC);
				assert_memory_equal(&a, &before, sizeof(a));
			}
		}
		assert_int_equal(arb_alloc_check(&a), 0);
		shadow_cmp(&sh, &a);
	}
	return ok;
}

static void test_property_random(void **state)
{
	static const u64 seeds[] = {
		0x9e3779b97f4a7c15ULL, 0x0123456789abcdefULL,
		0xdeadbeefcafef00dULL, 0x5851f42d4c957f2dULL,
		0x00000000000000ffULL,
	};
	const unsigned long per_seed = 200000;
	unsigned long total = 0, ok = 0, swaps = 0;
	struct timespec t0, t1;
	unsigned int k;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (k = 0; k < sizeof(seeds) / sizeof(seeds[0]); k++) {
		ok += run_seed(seeds[k], per_seed, &swaps);
		total += per_seed;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("[ INFO     ] alloc property: %lu ops (%lu succeeded, %lu slot swaps) over %zu seeds, %.2f s, invariants checked after every op\n",
	       total, ok, swaps, sizeof(seeds) / sizeof(seeds[0]),
	       (double)(t1.tv_sec - t0.tv_sec) +
	       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	assert_true(total >= 1000000);
}

/*
 * arb_muldiv() (mul_u64_u64_div_u64() behind an overflow guard, rounding
 * up from the low 64 bits of the remainder) against a 128-bit reference:
 * random operands of every magnitude, quotients that just fit and just
 * do not, c = 0.
 */
static u64 ref_muldiv(u64 a, u64 b, u64 c, bool up)
{
	unsigned __int128 p = (unsigned __int128)a * b, q;

	if (!c)
		return ~0ULL;
	q = p / c + (up && p % c);
	return q > ~0ULL ? ~0ULL : (u64)q;
}

static u64 rnd_mag(void)
{
	unsigned int bits = (unsigned int)(rnd() % 65);

	return bits == 64 ? rnd() : rnd() & ((1ULL << bits) - 1);
}

static void test_muldiv_reference(void **state)
{
	static const u64 edge[][3] = {
		{ ~0ULL, ~0ULL, ~0ULL }, { ~0ULL, 2, 1 }, { 1ULL << 32, 1ULL << 32, 1 },
		{ (1ULL << 32) - 1, (1ULL << 32) + 1, 1 }, { ~0ULL, 1, 1 },
		{ ~0ULL, 3, 2 }, { 5, 7, 0 }, { 0, 0, 3 }, { 10, 10, 3 },
	};
	unsigned long i, sat = 0;
	unsigned int k;

	(void)state;
	for (k = 0; k < sizeof(edge) / sizeof(edge[0]); k++) {
		assert_int_equal(arb_muldiv(edge[k][0], edge[k][1], edge[k][2], false),
				 ref_muldiv(edge[k][0], edge[k][1], edge[k][2], false));
		assert_int_equal(arb_muldiv(edge[k][0], edge[k][1], edge[k][2], true),
				 ref_muldiv(edge[k][0], edge[k][1], edge[k][2], true));
	}
	rng_state = 0x853c49e6748fea9bULL;
	for (i = 0; i < 200000; i++) {
		u64 a = rnd_mag(), b = rnd_mag(), c = rnd_mag();
		bool up = rnd() & 1;
		u64 r = ref_muldiv(a, b, c, up);

		assert_int_equal(arb_muldiv(a, b, c, up), r);
		sat += r == ~0ULL;
	}
	/* both the exact and the saturated cases were met */
	assert_true(sat > 1000 && sat < 190000);
}

/*
 * arb_alloc_change() decides a move to a new distance from counts
 * (Theorem 4) and then works in place. Its reference here is what it
 * did before: release and insert on a copy, committed only on success.
 * Both must return the same error, reasons, moves and table, for
 * random tables and requests (weights also beyond a distance's range;
 * maxweight 255 and 3).
 */
static int ref_change(struct arb_alloc *a, unsigned int cls, unsigned int d,
		      u32 w, struct arb_moves *mv, struct arb_reject *rj)
{
	struct arb_alloc tmp;
	struct arb_moves m = { 0 };
	int err;

	if (arb_round_distance(d) == arb_alloc_distance(a, cls))
		return arb_alloc_change(a, cls, d, w, mv, rj);
	mv->n = 0;
	tmp = *a;
	arb_alloc_release(&tmp, cls, &m, NULL);
	err = arb_alloc_insert(&tmp, cls, d, w, NULL, rj);
	if (err)
		return err;
	*a = tmp;
	*mv = m;
	return 0;
}

static void test_change_in_place(void **state)
{
	unsigned long i, moved = 0, refused = 0, reasons[ARB_R_CAPACITY + 1] = { 0 };
	struct arb_alloc a, b;
	unsigned int mw = 255;

	(void)state;
	rng_state = 0x2545f4914f6cdd1dULL;
	arb_alloc_init(&a, mw);
	for (i = 0; i < 300000; i++) {
		unsigned int cls = (unsigned int)(rnd() % 24), d = rnd_distance();
		u32 w = (u32)(rnd() % 8 ? rnd_weight(d, mw) : rnd() % 1024);
		struct arb_reject r1, r2;
		struct arb_moves m1, m2;
		int e1, e2;

		if (i % 50000 == 0) {
			mw = i % 100000 ? 3 : 255;
			arb_alloc_init(&a, mw);
		}
		if (!arb_alloc_has(&a, cls)) {
			arb_alloc_insert(&a, cls, d, rnd_weight(d, mw), NULL,
					 NULL);
			continue;
		}
		if (rnd() % 5 == 0) {
			arb_alloc_release(&a, cls, &m1, NULL);
			continue;
		}
		memset(&r1, 0, sizeof(r1));
		memset(&r2, 0, sizeof(r2));
		memset(&m1, 0, sizeof(m1));
		memset(&m2, 0, sizeof(m2));
		b = a;
		e2 = ref_change(&b, cls, d, w, &m2, &r2);
		e1 = arb_alloc_change(&a, cls, d, w, &m1, &r1);
		assert_int_equal(e1, e2);
		assert_memory_equal(&r1, &r2, sizeof(r1));
		assert_memory_equal(&a, &b, sizeof(a));
		assert_int_equal(m1.n, m2.n);
		assert_memory_equal(m1.m, m2.m, m1.n * sizeof(m1.m[0]));
		assert_int_equal(arb_alloc_check(&a), 0);
		if (e1) {
			refused++;
			if (r1.code <= ARB_R_CAPACITY)
				reasons[r1.code]++;
		} else if (m1.n) {
			moved++;
		}
	}
	printf("[ INFO     ] change in place vs on a copy: %lu refused (no slots %lu, capacity %lu, weight %lu), %lu with slot moves, identical\n",
	       refused, reasons[ARB_R_NO_SLOTS], reasons[ARB_R_CAPACITY],
	       reasons[ARB_R_WEIGHT], moved);
	/* both reachable refusals were met (capacity is implied by the
	 * slots: a class holds at most maxweight per slot)
	 */
	assert_true(reasons[ARB_R_NO_SLOTS] && reasons[ARB_R_WEIGHT] && moved);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rev6_and_sets),
		cmocka_unit_test(test_paper_figure5),
		cmocka_unit_test(test_paper_examples_1_3),
		cmocka_unit_test(test_paper_example5),
		cmocka_unit_test(test_eval_examples_1_2_10),
		cmocka_unit_test(test_eval_example11),
		cmocka_unit_test(test_bxiv3_layout),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_reject_fits_netlink),
		cmocka_unit_test(test_weights),
		cmocka_unit_test(test_latency_boost),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_strict_burst),
		cmocka_unit_test(test_follow_mtu),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_current_bound),
		cmocka_unit_test(test_property_random),
		cmocka_unit_test(test_change_in_place),
		cmocka_unit_test(test_muldiv_reference),
	};

	return cmocka_run_group_tests_name("alloc", tests, NULL, NULL);
}
