// SPDX-License-Identifier: GPL-2.0
/*
 * arbtable arbiter: IBA VL arbitration (ib-vl-arbitration.txt, "Data VL
 * Arbitration Description") with BXIv3 per-entry deficit counters
 * (bxiv3-qos.txt §3.3, Algorithm 2). See arbtable_arbiter.h, which also
 * holds the per-packet half (eligibility, select, charge) inline.
 *
 * Rules, as DESIGN §3 fixes them:
 * - A slot may send while its credit is positive; a packet costs its length
 *   and may drive the credit negative (IBA: "VL6 ... 63 - 64 = -1").
 * - deficit mode: a visit starts with weight*64 plus the balance carried
 *   from the slot's last visit, which is never positive: overshoot is debt,
 *   positive leftover is dropped when the class stops being eligible
 *   (Algorithm 2 lines 16-19). Long-run byte shares equal weight shares.
 * - iba mode: a visit starts with weight*64, overshoot is forgiven.
 * - The high table may send while its byte counter is not negative; the
 *   packet that drives it negative is sent, then the counter is reset and
 *   the low table is owed one packet (IBA HighPriCounter). highlimit 255 is
 *   unlimited; 0 gives one high packet per low opportunity.
 * - A low turn sends one packet from the current low slot, which keeps its
 *   remaining credit; with nothing eligible in high, low runs on.
 * - The slot being visited keeps its credit while the other table runs
 *   (IBA "resume with this entry").
 */
#include "arbtable_arbiter.h"

void arb_init(struct arb_sched *s, u8 highlimit, u8 accounting)
{
	memset(s, 0, sizeof(*s));
	s->strict = ARB_NO_CLASS;
	s->tbl[ARB_HIGH].dropped_slot = ARB_NO_CLASS;
	s->tbl[ARB_LOW].dropped_slot = ARB_NO_CLASS;
	s->highlimit = highlimit;
	s->accounting = accounting;
	s->hp_counter = arb_hp_limit(s);
}

void arb_set_highlimit(struct arb_sched *s, u8 highlimit)
{
	s->highlimit = highlimit;
	s->hp_counter = arb_hp_limit(s);
	s->low_turn = false;
}

void arb_set_accounting(struct arb_sched *s, u8 accounting)
{
	unsigned int t, i;

	if (s->accounting == accounting)
		return;
	s->accounting = accounting;
	/* Carried balances mean nothing across modes: start clean. */
	for (t = 0; t < ARB_NTABLES; t++) {
		for (i = 0; i < ARB_SLOTS; i++)
			s->tbl[t].credit[i] = 0;
		s->tbl[t].in_visit = false;
		s->tbl[t].dropped_slot = ARB_NO_CLASS;
	}
}

static void arb_slotted_update(struct arb_sched *s, u8 cls)
{
	if (cls >= ARB_MAX_CLASSES)
		return;
	if (s->cls_slots[ARB_HIGH][cls] | s->cls_slots[ARB_LOW][cls])
		s->cls_slotted |= BIT_ULL(cls);
	else
		s->cls_slotted &= ~BIT_ULL(cls);
}

static void arb_slot_mask_update(struct arb_sched *s, unsigned int t,
				 unsigned int slot)
{
	struct arb_table *tb = &s->tbl[t];
	u64 bit = BIT_ULL(slot);

	tb->used &= ~bit;
	tb->eligible &= ~bit;
	if (!tb->weight[slot])
		return;
	tb->used |= bit;
	if (s->cls_eligible & BIT_ULL(tb->cls[slot]))
		tb->eligible |= bit;
}

void arb_set_slot(struct arb_sched *s, unsigned int t, unsigned int slot,
		  u8 cls, u8 weight)
{
	struct arb_table *tb = &s->tbl[t];
	u64 bit = BIT_ULL(slot);
	u8 old = tb->weight[slot] ? tb->cls[slot] : ARB_NO_CLASS;

	tb->dropped_slot = ARB_NO_CLASS;
	if (cls == ARB_NO_CLASS || cls >= ARB_MAX_CLASSES)
		weight = 0;
	if (tb->weight[slot])
		s->cls_slots[t][tb->cls[slot]] &= ~bit;
	if (!weight || tb->cls[slot] != cls) {
		tb->credit[slot] = 0;
		if (tb->cur == slot)
			tb->in_visit = false;
	}
	tb->weight[slot] = weight;
	tb->cls[slot] = weight ? cls : ARB_NO_CLASS;
	if (weight)
		s->cls_slots[t][cls] |= bit;
	arb_slotted_update(s, old);
	arb_slotted_update(s, tb->cls[slot]);
	arb_slot_mask_update(s, t, slot);
}

void arb_swap_slots(struct arb_sched *s, unsigned int t, unsigned int a,
		    unsigned int b)
{
	struct arb_table *tb = &s->tbl[t];
	u8 ca = tb->cls[a], wa = tb->weight[a];
	s32 cra = tb->credit[a];
	u64 ba = BIT_ULL(a), bb = BIT_ULL(b);

	if (a == b)
		return;
	tb->dropped_slot = ARB_NO_CLASS;
	if (wa)
		s->cls_slots[t][ca] &= ~ba;
	if (tb->weight[b])
		s->cls_slots[t][tb->cls[b]] &= ~bb;

	tb->cls[a] = tb->cls[b];
	tb->weight[a] = tb->weight[b];
	tb->credit[a] = tb->credit[b];
	tb->cls[b] = ca;
	tb->weight[b] = wa;
	tb->credit[b] = cra;

	if (tb->weight[a])
		s->cls_slots[t][tb->cls[a]] |= ba;
	if (tb->weight[b])
		s->cls_slots[t][tb->cls[b]] |= bb;
	/* A visit belongs to the occupant, who just moved to the other
	 * position with its credit: close the visit there; the occupant now
	 * at @cur starts a fresh one.
	 */
	if (tb->in_visit && (tb->cur == a || tb->cur == b)) {
		arb_close_credit(s, &tb->credit[tb->cur == a ? b : a]);
		tb->in_visit = false;
	}
	arb_slot_mask_update(s, t, a);
	arb_slot_mask_update(s, t, b);
	/* Both occupants stay in this table: cls_slotted is unchanged. */
}

void arb_set_strict(struct arb_sched *s, u8 cls)
{
	s->strict = cls;
}

/* The slotless round robin behind arb_select(): rare, so out of line; the
 * class by value (ARB_NO_CLASS: none) so the caller's pick stays in
 * registers.
 */
u8 arb_select_slotless(struct arb_sched *s)
{
	u64 m = s->cls_eligible & ~s->cls_slotted;
	u8 cls;

	if (s->strict != ARB_NO_CLASS)
		m &= ~BIT_ULL(s->strict);
	if (!m)
		return ARB_NO_CLASS;
	cls = arb_next_slot(m, s->slotless_cur);
	s->slotless_cur = (cls + 1) & (ARB_MAX_CLASSES - 1);
	return cls;
}
