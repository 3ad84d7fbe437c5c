// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: admission sequences as the module runs them (plan on
 * copies, commit to the live arbiter and allocators). The input picks the
 * qdisc parameters and a stream of admit / change / release requests
 * (rate, latency or distance, share). Checked after every request:
 * - a refused request has a reason and leaves both allocators untouched;
 * - both allocators pass arb_alloc_check();
 * - the arbiter's live tables hold exactly the allocators' layout (class
 *   and weight per slot): the commit's swaps and fills are right;
 * - every admitted HIGH class's guaranteed bound still covers its current
 *   placement bound, however later admissions, releases and
 *   defragmentation moved it (DESIGN §4; fill-in paper §10).
 */
#include <string.h>
#include "arbtable_core_test.h"
#include "fuzz_input.h"

#define NCLS 16

struct shadow_cls {
	u8	table;		/* ARB_HIGH, ARB_LOW or ARB_NO_CLASS */
	u64	bound_ns;	/* guaranteed at admission (HIGH) */
	struct arb_resv resv;
};

static void check_layout(const struct arb_sched *arb,
			 const struct arb_alloc alloc[ARB_NTABLES])
{
	unsigned int t, s;

	for (t = 0; t < ARB_NTABLES; t++) {
		FUZZ_CHECK(arb_alloc_check(&alloc[t]) == 0, "table %u: check %d", t,
			   arb_alloc_check(&alloc[t]));
		for (s = 0; s < ARB_SLOTS; s++) {
			u8 w = arb_alloc_slot_weight(&alloc[t], s);

			FUZZ_CHECK(arb->tbl[t].weight[s] == w,
				   "table %u slot %u: live weight %u, allocator %u",
				   t, s, arb->tbl[t].weight[s], w);
			if (w)
				FUZZ_CHECK(arb->tbl[t].cls[s] ==
					   arb_alloc_slot_owner(&alloc[t], s),
					   "table %u slot %u: live class %u, allocator %u",
					   t, s, arb->tbl[t].cls[s],
					   arb_alloc_slot_owner(&alloc[t], s));
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fin f = { data, size };
	static struct arb_admission adm;	/* large: keep off the stack */
	struct arb_alloc alloc[ARB_NTABLES], before[ARB_NTABLES];
	struct shadow_cls cls[NCLS];
	struct arb_sched arb;
	struct arb_params p;
	u64 capacity = (u64)fin_u32(&f) * 125 + 1250;	/* >= 10 kbit/s */
	u32 mtu = 64 + fin_u16(&f) % 9000;
	u8 maxweight = 1 + fin_u8(&f) % 255;
	u8 highlimit = fin_u8(&f);
	char why[256];
	int ops = 0, rc;
	unsigned int i;

	arb_admit_params(capacity, mtu, maxweight, highlimit, 0, 0, &p);
	if (arb_params_check(&p))
		return 0;
	arb_init(&arb, highlimit, ARB_ACCT_DEFICIT);
	for (i = 0; i < ARB_NTABLES; i++)
		arb_alloc_init(&alloc[i], maxweight);
	for (i = 0; i < NCLS; i++)
		cls[i] = (struct shadow_cls){ .table = ARB_NO_CLASS };

	while (fin_more(&f) && ops++ < 512) {
		unsigned int c = fin_u8(&f) % NCLS;
		u8 kind = fin_u8(&f);
		struct arb_resv r = { 0 };

		switch (kind % 4) {
		case 0:		/* release */
			break;
		case 1:		/* rate + latency */
			r.rate = 1 + (u64)fin_u32(&f) % (capacity * 2);
			r.latency = fin_u32(&f);
			break;
		case 2:		/* rate + distance */
			r.rate = 1 + (u64)fin_u32(&f) % (capacity * 2);
			r.distance = fin_u8(&f) % 70;
			break;
		default:	/* share [+ distance] */
			r.share = fin_u16(&f) % 300;
			if (kind & 4)
				r.distance = fin_u8(&f) % 70;
			break;
		}
		if (!r.rate && !r.share && cls[c].table == ARB_NO_CLASS)
			continue;	/* nothing to release */
		memcpy(before, alloc, sizeof(before));
		why[0] = '\0';
		rc = arb_admit_prepare(alloc, &p, maxweight, c, cls[c].table,
				       &r, &adm, why, sizeof(why));
		FUZZ_CHECK(!memcmp(before, alloc, sizeof(before)),
			   "planning changed the live allocators");
		if (rc) {
			FUZZ_CHECK(why[0] != '\0', "refusal %d without a reason", rc);
			FUZZ_CHECK(adm.reason != ARB_R_OK,
				   "refusal %d without a reason code", rc);
			/* the module sends it as a formatted netlink message:
			 * 80 bytes with the NUL (NETLINK_MAX_FMTMSG_LEN)
			 */
			FUZZ_CHECK(strlen(why) < 80,
				   "reason of %zu characters: %s", strlen(why), why);
			continue;
		}
		arb_admit_commit(&arb, alloc, c, &adm, NULL, NULL);
		cls[c].table = adm.new_table;
		cls[c].bound_ns = adm.bound_ns;
		cls[c].resv = adm.resv;
		check_layout(&arb, alloc);
		for (i = 0; i < NCLS; i++) {
			u64 cur;

			if (cls[i].table != ARB_HIGH)
				continue;
			FUZZ_CHECK(arb_alloc_has(&alloc[ARB_HIGH], i),
				   "HIGH class %u lost its slots", i);
			cur = arb_alloc_current_bound_ns(&alloc[ARB_HIGH], &p, i);
			FUZZ_CHECK(cur <= cls[i].bound_ns,
				   "class %u: current bound %llu ns > guaranteed %llu ns",
				   i, (unsigned long long)cur,
				   (unsigned long long)cls[i].bound_ns);
		}
	}
	return 0;
}
