// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: table programming and arbiter steps. The input sets
 * highlimit and accounting, programs slots (class, weight), swaps slots,
 * flips class eligibility and the strict class, and runs select + charge
 * steps with adversarial packet lengths (0, 1, 64 KB GSO, beyond
 * ARB_MAX_PKT_LEN). After every operation the bitmasks the O(1) walk
 * relies on must agree with the slot arrays, and every step must pick an
 * eligible class through a slot that names it (DESIGN §3, IBA "Data VL
 * Arbitration Description", BXIv3 Algorithm 2).
 */
#include <string.h>
#include "arbtable_core_test.h"
#include "fuzz_input.h"

static void check_masks(const struct arb_sched *s, const char *after)
{
	unsigned int t, i, c;

	for (t = 0; t < ARB_NTABLES; t++) {
		const struct arb_table *tb = &s->tbl[t];
		u64 used = 0, elig = 0, per[ARB_MAX_CLASSES] = { 0 };

		for (i = 0; i < ARB_SLOTS; i++) {
			if (!tb->weight[i])
				continue;
			used |= 1ULL << i;
			per[tb->cls[i]] |= 1ULL << i;
			if (s->cls_eligible & (1ULL << tb->cls[i]))
				elig |= 1ULL << i;
		}
		FUZZ_CHECK(tb->used == used, "%s: table %u used %llx, slots say %llx",
			   after, t, (unsigned long long)tb->used,
			   (unsigned long long)used);
		FUZZ_CHECK(tb->eligible == elig, "%s: table %u eligible %llx, want %llx",
			   after, t, (unsigned long long)tb->eligible,
			   (unsigned long long)elig);
		for (c = 0; c < ARB_MAX_CLASSES; c++)
			FUZZ_CHECK(s->cls_slots[t][c] == per[c],
				   "%s: class %u slots in table %u: %llx, want %llx",
				   after, c, t, (unsigned long long)s->cls_slots[t][c],
				   (unsigned long long)per[c]);
		/* Between visits a slot's carried balance is never positive. */
		for (i = 0; i < ARB_SLOTS; i++)
			if (!(tb->in_visit && tb->cur == i))
				FUZZ_CHECK(tb->credit[i] <= 0,
					   "%s: table %u slot %u carries credit %d",
					   after, t, i, tb->credit[i]);
	}
	for (c = 0; c < ARB_MAX_CLASSES; c++) {
		bool slotted = s->cls_slots[ARB_HIGH][c] | s->cls_slots[ARB_LOW][c];

		FUZZ_CHECK(!!(s->cls_slotted & (1ULL << c)) == slotted,
			   "%s: class %u slotted bit wrong", after, c);
	}
}

static u32 pick_len(struct fin *f)
{
	switch (fin_u8(f) % 8) {
	case 0: return 0;
	case 1: return 1;
	case 2: return 64;
	case 3: return 1514;
	case 4: return 65536;			/* GSO */
	case 5: return ARB_MAX_PKT_LEN + fin_u16(f);	/* beyond the cap */
	case 6: return fin_u32(f);
	default: return fin_u16(f);
	}
}

static void step(struct arb_sched *s, struct fin *f)
{
	struct arb_pick p;
	bool any = s->cls_eligible != 0;
	bool got = arb_select(s, &p);

	FUZZ_CHECK(got == any, "select returned %d with eligible classes %llx",
		   got, (unsigned long long)s->cls_eligible);
	if (!got)
		return;
	FUZZ_CHECK(s->cls_eligible & (1ULL << p.cls), "picked ineligible class %u",
		   p.cls);
	if (p.table == ARB_STRICT) {
		FUZZ_CHECK(p.cls == s->strict, "strict pick %u, strict class %u",
			   p.cls, s->strict);
	} else if (p.table == ARB_SLOTLESS) {
		FUZZ_CHECK(!(s->cls_slotted & (1ULL << p.cls)),
			   "slotless pick of slotted class %u", p.cls);
		FUZZ_CHECK(!(s->strict != ARB_NO_CLASS &&
			     (s->cls_eligible & (1ULL << s->strict))),
			   "slotless pick while the strict class is eligible");
	} else {
		const struct arb_table *tb = &s->tbl[p.table];

		FUZZ_CHECK(p.table < ARB_NTABLES && p.slot < ARB_SLOTS,
			   "pick table %u slot %u", p.table, p.slot);
		FUZZ_CHECK(tb->weight[p.slot] && tb->cls[p.slot] == p.cls,
			   "slot %u of table %u (weight %u class %u) picked for class %u",
			   p.slot, p.table, tb->weight[p.slot], tb->cls[p.slot], p.cls);
		FUZZ_CHECK(tb->in_visit && tb->credit[p.slot] > 0,
			   "picked slot %u without a visit or credit (%d)",
			   p.slot, tb->credit[p.slot]);
	}
	arb_charge(s, &p, pick_len(f));
	/* a quarter of the packets are their class's last (the dequeue's
	 * shortcut); check_masks() then sees the tables it leaves
	 */
	if (fin_u8(f) < 64) {
		arb_set_drained(s, p.cls);
		FUZZ_CHECK(!(s->cls_eligible & (1ULL << p.cls)),
			   "class %u still eligible after its last packet",
			   p.cls);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fin f = { data, size };
	struct arb_sched s;
	int ops = 0;

	arb_init(&s, fin_u8(&f), fin_u8(&f) & 1);
	check_masks(&s, "init");
	while (fin_more(&f) && ops++ < 8192) {
		u8 op = fin_u8(&f);
		unsigned int t = op >> 7;	/* table for slot ops */

		switch (op % 9) {
		case 0: {
			unsigned int slot = fin_u8(&f) % ARB_SLOTS;
			u8 cls = fin_u8(&f) % ARB_MAX_CLASSES;
			u8 w = fin_u8(&f);

			arb_set_slot(&s, t, slot, cls, w);
			break;
		}
		case 1:
			arb_swap_slots(&s, t, fin_u8(&f) % ARB_SLOTS,
				       fin_u8(&f) % ARB_SLOTS);
			break;
		case 2:
			arb_set_eligible(&s, fin_u8(&f) % ARB_MAX_CLASSES,
					 fin_u8(&f) & 1);
			break;
		case 3: {
			u8 c = fin_u8(&f);

			arb_set_strict(&s, c < ARB_MAX_CLASSES ? c : ARB_NO_CLASS);
			break;
		}
		case 4:
			arb_set_highlimit(&s, fin_u8(&f));
			break;
		case 5:
			arb_set_accounting(&s, fin_u8(&f) & 1);
			break;
		default: {
			/* a burst of steps */
			unsigned int n = 1 + fin_u8(&f) % 64;

			while (n--)
				step(&s, &f);
			break;
		}
		}
		check_masks(&s, "op");
	}
	return 0;
}
