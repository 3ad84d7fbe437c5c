/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arbtable arbiter: the IBA VL arbitration walk over a HIGH and a LOW table
 * of 64 (class, weight) slots, with per-slot deficit counters (BXIv3
 * Algorithm 2) and the IBA VLHighLimit rule. Kernel-independent: the qdisc,
 * the unit tests and arbsim compile this same file.
 *
 * Classes are small indices 0..63 chosen by the caller. The caller tells
 * the arbiter which classes are eligible (backlogged and not throttled);
 * the arbiter keeps per-table 64-bit masks of eligible slots so finding the
 * next slot to serve is a couple of bit operations, never a scan.
 *
 * Use: arb_select() names the class to dequeue from, the caller dequeues
 * one packet from it and reports its length with arb_charge().
 */
#ifndef _ARBTABLE_ARBITER_H
#define _ARBTABLE_ARBITER_H

#include <linux/types.h>
#include <linux/bitops.h>
#include <linux/string.h>
#include <linux/pkt_sched_arbtable.h>

/* the table's dimensions and units are the uapi's (IBA values) */
#define ARB_SLOTS		TC_ARBTABLE_SLOTS
#define ARB_MAX_CLASSES		TC_ARBTABLE_MAX_CLASSES
#define ARB_WEIGHT_UNIT		TC_ARBTABLE_WEIGHT_UNIT
#define ARB_HIGHLIMIT_UNIT	TC_ARBTABLE_HIGHLIMIT_UNIT
#define ARB_HIGHLIMIT_INF	TC_ARBTABLE_HIGHLIMIT_MAX	/* unlimited */
#define ARB_NO_CLASS		0xff	/* a slot or label nobody owns */
#define ARB_MAX_PKT_LEN		(1024U * 1024)	/* charge cap, keeps s32 math safe */

enum arb_table_id {
	ARB_HIGH = 0,
	ARB_LOW = 1,
	ARB_NTABLES = 2,
	ARB_STRICT = 2,		/* arb_pick.table for the strict class */
	ARB_SLOTLESS = 3,	/* a class no slot names, served when idle */
};

enum arb_accounting {
	ARB_ACCT_DEFICIT = 0,	/* carry overshoot as debt (BXIv3 Alg. 2) */
	ARB_ACCT_IBA = 1,	/* IBA-literal: overshoot forgiven */
};

struct arb_table {
	u8	cls[ARB_SLOTS];		/* class index, valid where weight > 0 */
	u8	weight[ARB_SLOTS];	/* 64-byte units, 0 = null slot */
	/* Credit of the visit in progress at @cur, else the balance carried
	 * to the slot's next visit (always <= 0 between visits).
	 */
	s32	credit[ARB_SLOTS];
	u64	used;			/* slots with weight > 0 */
	u64	eligible;		/* used slots whose class is eligible */
	u8	cur;			/* slot being (or next to be) visited */
	bool	in_visit;		/* @cur's visit has started */
	/* The last visit closed because its class went ineligible, and its
	 * credit before the close: a child that drops its last packets
	 * inside its own dequeue makes the qdisc close the visit between
	 * select and charge, and the packet must still be charged (DESIGN
	 * §3).
	 */
	u8	dropped_slot;
	s32	dropped_credit;
};

struct arb_sched {
	struct arb_table tbl[ARB_NTABLES];
	u64	cls_slots[ARB_NTABLES][ARB_MAX_CLASSES];	/* slots per class */
	u64	cls_eligible;		/* eligible class indices */
	u64	cls_slotted;		/* classes some slot names */
	s32	hp_counter;		/* bytes the high table may still send */
	u8	highlimit;		/* 0..255, IBA VLHighLimit */
	u8	accounting;		/* enum arb_accounting */
	u8	strict;			/* strict class index or ARB_NO_CLASS */
	bool	low_turn;		/* the high limit expired: low is owed */
	u8	slotless_cur;		/* round-robin position for slotless */
};

struct arb_pick {
	u8	cls;
	u8	table;	/* ARB_HIGH, ARB_LOW, ARB_STRICT or ARB_SLOTLESS */
	u8	slot;
};

void arb_init(struct arb_sched *s, u8 highlimit, u8 accounting);
void arb_set_highlimit(struct arb_sched *s, u8 highlimit);
void arb_set_accounting(struct arb_sched *s, u8 accounting);

/* Program one slot; weight 0 or cls ARB_NO_CLASS makes it null. Credits
 * of a slot whose occupant changes start from zero.
 */
void arb_set_slot(struct arb_sched *s, unsigned int t, unsigned int slot,
		  u8 cls, u8 weight);
/* Exchange two slots of a table with their credits (allocator swaps). */
void arb_swap_slots(struct arb_sched *s, unsigned int t, unsigned int a,
		    unsigned int b);
void arb_set_strict(struct arb_sched *s, u8 cls);

static inline bool arb_class_eligible(const struct arb_sched *s,
				      unsigned int cls)
{
	return s->cls_eligible & BIT_ULL(cls);
}

static inline u64 arb_class_slots(const struct arb_sched *s, unsigned int t,
				  unsigned int cls)
{
	return s->cls_slots[t][cls];
}

/*
 * The per-packet half: the qdisc calls these on every enqueue and dequeue,
 * so they live here, inline, and cost no calls (bench-vm profile: as
 * out-of-line calls they were ~200 guest instructions per packet).
 */

static inline s32 arb_hp_limit(const struct arb_sched *s)
{
	return (s32)s->highlimit * ARB_HIGHLIMIT_UNIT;
}

/* Closing a visit: keep debt (deficit mode) and drop any positive rest. */
static inline void arb_close_credit(const struct arb_sched *s, s32 *credit)
{
	if (s->accounting == ARB_ACCT_IBA || *credit > 0)
		*credit = 0;
}

static inline void arb_end_visit(struct arb_sched *s, struct arb_table *tb)
{
	arb_close_credit(s, &tb->credit[tb->cur]);
	tb->in_visit = false;
	tb->cur = (tb->cur + 1) & (ARB_SLOTS - 1);
}

/* A class's slots (@slots) in @tb stop being eligible. */
static inline void arb_table_drop(struct arb_sched *s, struct arb_table *tb,
				  u64 slots)
{
	tb->eligible &= ~slots;
	/* Algorithm 2 line 19: an inactive queue's rest is discarded now,
	 * not when the walk comes back.
	 */
	if (tb->in_visit && (slots & BIT_ULL(tb->cur))) {
		tb->dropped_slot = tb->cur;
		tb->dropped_credit = tb->credit[tb->cur];
		arb_end_visit(s, tb);
	}
}

/* The caller's view of @cls: backlogged and allowed to send, or not. */
static inline void arb_set_eligible(struct arb_sched *s, unsigned int cls,
				    bool eligible)
{
	u64 bit = BIT_ULL(cls);

	if (!!(s->cls_eligible & bit) == eligible)
		return;
	if (eligible) {
		s->cls_eligible |= bit;
		s->tbl[ARB_HIGH].eligible |= s->cls_slots[ARB_HIGH][cls];
		s->tbl[ARB_LOW].eligible |= s->cls_slots[ARB_LOW][cls];
		return;
	}
	s->cls_eligible &= ~bit;
	/* most classes live in one table: skip the other */
	if (s->cls_slots[ARB_HIGH][cls])
		arb_table_drop(s, &s->tbl[ARB_HIGH], s->cls_slots[ARB_HIGH][cls]);
	if (s->cls_slots[ARB_LOW][cls])
		arb_table_drop(s, &s->tbl[ARB_LOW], s->cls_slots[ARB_LOW][cls]);
}

/* First set bit of @m at or after @from, wrapping around: O(1). */
static inline unsigned int arb_next_slot(u64 m, unsigned int from)
{
	u64 ahead = m & (~0ULL << from);

	return __ffs64(ahead ? ahead : m);
}

/*
 * Pick the slot of table @t to serve; its eligible mask must be non-empty.
 * Continue the visit in progress if its class is still eligible, else
 * close it and start the next eligible slot. In deficit mode a slot whose
 * debt exceeds its quantum pays the quantum and passes (as DRR does); the
 * number of such passes per packet is bounded by MTU / (64 * weight), not
 * by the number of slots or classes.
 */
static inline void arb_table_pick(struct arb_sched *s, unsigned int t,
				  struct arb_pick *p)
{
	struct arb_table *tb = &s->tbl[t];
	u64 m = tb->eligible;
	unsigned int slot;
	s32 credit;

	if (tb->in_visit) {
		if (m & BIT_ULL(tb->cur))
			goto out;
		arb_end_visit(s, tb);
	}
	for (;;) {
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

u8 arb_select_slotless(struct arb_sched *s);

/*
 * Choose the next class to serve; false when nothing is eligible. Order:
 * the strict class, the tables (IBA walk), then eligible classes that no
 * slot names, round robin (IBA lets an unlisted VL "be sent when the
 * arbiter has no packets to send for other data VLs"; this keeps such a
 * class from holding packets forever).
 */
static inline bool arb_select(struct arb_sched *s, struct arb_pick *p)
{
	u64 hi = s->tbl[ARB_HIGH].eligible;
	u64 lo = s->tbl[ARB_LOW].eligible;

	if (s->strict != ARB_NO_CLASS && arb_class_eligible(s, s->strict)) {
		p->table = ARB_STRICT;
		p->slot = 0;
		p->cls = s->strict;
		return true;
	}
	if (s->low_turn && !lo)
		s->low_turn = false;	/* nobody to take the owed turn */
	if (s->low_turn || (!hi && lo)) {
		if (!hi)	/* IBA: high has nothing, reset its counter */
			s->hp_counter = arb_hp_limit(s);
		arb_table_pick(s, ARB_LOW, p);
		return true;
	}
	if (hi) {
		arb_table_pick(s, ARB_HIGH, p);
		return true;
	}
	p->cls = arb_select_slotless(s);
	p->table = ARB_SLOTLESS;
	p->slot = 0;
	return p->cls != ARB_NO_CLASS;
}

/* Account a packet of @len bytes sent for @p; returns the slot's credit
 * after the charge (0 for the strict class).
 */
static inline s32 arb_charge(struct arb_sched *s, const struct arb_pick *p,
			     u32 len)
{
	struct arb_table *tb;
	s32 credit;

	if (p->table >= ARB_NTABLES)
		return 0;	/* strict and slotless use no credit */
	tb = &s->tbl[p->table];
	if (len > ARB_MAX_PKT_LEN)
		len = ARB_MAX_PKT_LEN;

	/* every high packet counts against VLHighLimit (IB arbitration
	 * paper, HighPriCounter: each packet's length is deducted)
	 */
	if (p->table == ARB_HIGH) {
		if (s->highlimit != ARB_HIGHLIMIT_INF) {
			s->hp_counter -= (s32)len;
			if (s->hp_counter < 0) {
				s->hp_counter = arb_hp_limit(s);
				s->low_turn = true;
			}
		}
	} else {
		s->low_turn = false;
	}

	if (!tb->in_visit || tb->cur != p->slot) {
		/* The class went ineligible while this packet was being
		 * dequeued (a child dropping its last packets notified
		 * the qdisc) and its visit was closed: close it again with
		 * the packet counted, so the debt carries as if the
		 * packet had come first.
		 */
		if (tb->dropped_slot != p->slot)
			return 0;
		credit = tb->dropped_credit - (s32)len;
		tb->dropped_credit = credit;
		tb->credit[p->slot] = credit;
		arb_close_credit(s, &tb->credit[p->slot]);
		return credit;
	}
	credit = tb->credit[p->slot] - (s32)len;
	tb->credit[p->slot] = credit;
	if (credit <= 0)
		arb_end_visit(s, tb);
	return credit;
}

#endif /* _ARBTABLE_ARBITER_H */
