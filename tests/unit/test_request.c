// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the one reservation request check arbtable-cni,
 * arbtablectl and arbsim share (lib/arbtable_request.c): every bad
 * combination and every value out of range, each refused with the
 * text the module gives a rule across options (kernel/arbtable_qdisc.c,
 * whose strings are compared here as the kernel source spells them; its
 * netlink policy refuses a plain range first); the order of those checks
 * (the first reason wins); the good requests passed; the merged reservation of a change;
 * the limits equal to the uapi's and the core's.  That the three front
 * ends print these texts is tests/request/validator-check.sh's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "arbtable_core_test.h"
#include "arbtable_request.h"

_Static_assert(ARBT_RQ_SLOTS == ARB_SLOTS, "slots");
_Static_assert(ARBT_RQ_SHARE_MAX == TC_ARBTABLE_WEIGHT_MAX, "share");
_Static_assert(ARBT_RQ_RATE_MAX == ARB_RATE_MAX, "rate");

#define MSG_BOTH_RS	"give either rate (HIGH table) or share (LOW table), not both"
#define MSG_BOTH_LD	"give either latency or distance, not both"
#define MSG_RATE0	"rate must be greater than 0 bytes/s"
#define MSG_RATEMAX	"rate above the largest rate, 2^48 bytes/s"
#define MSG_SHARE	"share out of range 1..255 (LOW table weight, units of 64 bytes)"
#define MSG_LAT0	"latency must be greater than 0"
#define MSG_DIST	"distance out of range 1..64 slots"
#define MSG_LATSHARE	"latency bounds are for rate classes in the HIGH table; give a share class a distance instead"
#define MSG_NEEDRS	"latency/distance need a rate (HIGH table) or a share (LOW table)"
#define MSG_STRICT	"the strict class is served before the tables and takes no rate or share"
#define MSG_NEED	"give a rate (HIGH table) or a share (LOW table)"

#define R	ARBT_RQ_RATE
#define L	ARBT_RQ_LATENCY
#define D	ARBT_RQ_DISTANCE
#define S	ARBT_RQ_SHARE

struct rq_case {
	struct arbt_request rq;
	int		strict;
	unsigned int	flags;
	const char	*why;		/* NULL: accepted */
};

static const struct rq_case cases[] = {
	/* accepted: each table's forms */
	{ { R, 125000, 0, 0, 0 }, 0, 0, NULL },
	{ { R | L, 125000, 50000, 0, 0 }, 0, 0, NULL },
	{ { R | D, 125000, 0, 8, 0 }, 0, 0, NULL },
	{ { S, 0, 0, 0, 1 }, 0, 0, NULL },
	{ { S, 0, 0, 0, 255 }, 0, 0, NULL },
	{ { S | D, 0, 0, 64, 7 }, 0, 0, NULL },
	{ { R | D, ARBT_RQ_RATE_MAX, 0, 1, 0 }, 0, 0, NULL },
	/* a distance the allocator rounds (not a power of two) is its to
	 * round, not a refusal
	 */
	{ { R | D, 125000, 0, 3, 0 }, 0, 0, NULL },
	/* a class without a reservation (a ceil alone, the strict class) */
	{ { 0, 0, 0, 0, 0 }, 0, 0, NULL },
	{ { 0, 0, 0, 0, 0 }, 1, 0, NULL },

	/* rate xor share */
	{ { R | S, 125000, 0, 0, 3 }, 0, 0, MSG_BOTH_RS },
	{ { R | S | L, 125000, 5, 0, 3 }, 0, 0, MSG_BOTH_RS },
	{ { R | S | D, 125000, 0, 8, 3 }, 0, 0, MSG_BOTH_RS },
	/* latency xor distance */
	{ { R | L | D, 125000, 50000, 8, 0 }, 0, 0, MSG_BOTH_LD },
	{ { S | L | D, 0, 50000, 8, 3 }, 0, 0, MSG_BOTH_LD },
	{ { L | D, 0, 50000, 8, 0 }, 0, 0, MSG_BOTH_LD },
	/* values */
	{ { R, 0, 0, 0, 0 }, 0, 0, MSG_RATE0 },
	{ { R, ARBT_RQ_RATE_MAX + 1, 0, 0, 0 }, 0, 0, MSG_RATEMAX },
	{ { S, 0, 0, 0, 0 }, 0, 0, MSG_SHARE },
	{ { S, 0, 0, 0, 256 }, 0, 0, MSG_SHARE },
	{ { R | L, 125000, 0, 0, 0 }, 0, 0, MSG_LAT0 },
	{ { R | D, 125000, 0, 0, 0 }, 0, 0, MSG_DIST },
	{ { R | D, 125000, 0, 65, 0 }, 0, 0, MSG_DIST },
	{ { S | D, 0, 0, 0xffffffff, 3 }, 0, 0, MSG_DIST },
	/* what they reserve together */
	{ { S | L, 0, 50000, 0, 3 }, 0, 0, MSG_LATSHARE },
	{ { L, 0, 50000, 0, 0 }, 0, 0, MSG_NEEDRS },
	{ { D, 0, 0, 8, 0 }, 0, 0, MSG_NEEDRS },
	{ { R, 125000, 0, 0, 0 }, 1, 0, MSG_STRICT },
	{ { S, 0, 0, 0, 3 }, 1, 0, MSG_STRICT },
	/* a tenant must hold something */
	{ { 0, 0, 0, 0, 0 }, 0, ARBT_RQ_NEED_RESV, MSG_NEED },
	{ { R, 1, 0, 0, 0 }, 0, ARBT_RQ_NEED_RESV, NULL },
	{ { S, 0, 0, 0, 1 }, 0, ARBT_RQ_NEED_RESV, NULL },
	{ { L, 0, 50000, 0, 0 }, 0, ARBT_RQ_NEED_RESV, MSG_NEEDRS },

	/* the module's order: the first reason wins */
	{ { R | S, 0, 0, 0, 3 }, 0, 0, MSG_RATE0 },
	{ { R | S, 125000, 0, 0, 0 }, 0, 0, MSG_BOTH_RS },
	{ { S | L | D, 0, 0, 0, 0 }, 0, 0, MSG_SHARE },
	{ { R | L | D, 125000, 0, 0, 0 }, 0, 0, MSG_BOTH_LD },
	{ { S | L, 0, 0, 0, 3 }, 0, 0, MSG_LAT0 },
	{ { S | L, 0, 50000, 0, 3 }, 1, 0, MSG_LATSHARE },
	/* values not given are not looked at */
	{ { D, 125000, 0, 8, 999 }, 0, 0, MSG_NEEDRS },
	{ { R, 125000, 0, 999, 999 }, 0, 0, NULL },
};

static void test_cases(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rq_case *c = &cases[i];
		const char *why = arbt_request_check_new(&c->rq, c->strict,
							 c->flags);

		if (!c->why && why)
			fail_msg("case %zu: refused: %s", i, why);
		if (c->why && (!why || strcmp(why, c->why)))
			fail_msg("case %zu: want \"%s\", got \"%s\"", i, c->why,
				 why ? why : "(accepted)");
	}
}

/* The file @path (from the source tree: make unit runs at its top) */
static char *slurp(const char *path)
{
	char *buf = calloc(1, 1 << 20);
	FILE *f = fopen(path, "r");

	if (!buf || !f)
		fail_msg("cannot read %s (run from the source tree's top)", path);
	if (fread(buf, 1, (1 << 20) - 1, f) == 0)
		fail_msg("%s is empty", path);
	fclose(f);
	return buf;
}

/* Each rule across options is refused in the module's own words, as
 * kernel/arbtable_qdisc.c spells them (the plain ranges, MSG_RATE0 to
 * MSG_DIST, the module leaves to its netlink policy, which says "integer
 * out of range"; MSG_NEED only front ends say, as the sizing in
 * tools/arbtable_cost.c does)
 */
static void test_texts_are_the_modules(void **state)
{
	static const char *const kernel[] = {
		MSG_BOTH_RS, MSG_BOTH_LD, MSG_LATSHARE, MSG_NEEDRS, MSG_STRICT,
	};
	char *k = slurp("kernel/arbtable_qdisc.c");
	char *cost = slurp("tools/arbtable_cost.c");
	char quoted[160];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(kernel) / sizeof(kernel[0]); i++) {
		snprintf(quoted, sizeof(quoted), "\"%s\"", kernel[i]);
		if (!strstr(k, quoted))
			fail_msg("not in kernel/arbtable_qdisc.c: %s", quoted);
	}
	snprintf(quoted, sizeof(quoted), "\"%s\"", MSG_NEED);
	if (!strstr(cost, quoted))
		fail_msg("not in tools/arbtable_cost.c: %s", quoted);
	free(k);
	free(cost);
}

/* A change: its options on their own, then the reservation they make of
 * the class's (the merge is the front end's: arbsim's, the core's
 * arb_resv_set_*(); the kernel's)
 */
static void test_change(void **state)
{
	struct arbt_request rq = { L, 0, 50000, 0, 0 };
	struct arbt_resv rate_class = { 125000, 0, 8, 0 };
	struct arbt_resv share_class = { 0, 0, 8, 3 };

	(void)state;
	/* a latency alone is a good change of a rate class ... */
	assert_null(arbt_request_check(&rq));
	rate_class.latency_ns = rq.latency_ns;
	rate_class.distance = 0;
	assert_null(arbt_resv_check(&rate_class, 0));
	/* ... not of a share class */
	share_class.latency_ns = rq.latency_ns;
	share_class.distance = 0;
	assert_string_equal(arbt_resv_check(&share_class, 0), MSG_LATSHARE);
	/* a class that becomes strict keeps no reservation */
	assert_string_equal(arbt_resv_check(&rate_class, 1), MSG_STRICT);
	assert_null(arbt_resv_check(&(struct arbt_resv){ 0 }, 1));
}

static void test_request_resv(void **state)
{
	struct arbt_request rq = { R | D, 125000, 77, 8, 9 };
	struct arbt_resv r;

	(void)state;
	arbt_request_resv(&rq, &r);
	assert_int_equal(r.rate, 125000);
	assert_int_equal(r.distance, 8);
	/* not given: not reserved, whatever the field holds */
	assert_int_equal(r.latency_ns, 0);
	assert_int_equal(r.share, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_texts_are_the_modules),
		cmocka_unit_test(test_change),
		cmocka_unit_test(test_request_resv),
	};

	return cmocka_run_group_tests_name("request", tests, NULL, NULL);
}
