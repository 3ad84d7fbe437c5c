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

#include "arbtable_types.h"

#define ARB_SLOTS		64
#define ARB_MAX_CLASSES		64
#define ARB_WEIGHT_UNIT		64	/* bytes per weight unit (IBA) */
#define ARB_HIGHLIMIT_UNIT	4096	/* bytes per highlimit unit (IBA) */
#define ARB_HIGHLIMIT_INF	255	/* unlimited high table */
#define ARB_NO_CLASS		0xff
#define ARB_MAX_PKT_LEN		(1U << 20)	/* charge cap, keeps s32 math safe */

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
void arb_set_eligible(struct arb_sched *s, unsigned int cls, bool eligible);
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
 * Choose the next class to serve; false when nothing is eligible. Order:
 * the strict class, the tables (IBA walk), then eligible classes that no
 * slot names, round robin (IBA lets an unlisted VL "be sent when the
 * arbiter has no packets to send for other data VLs"; this keeps such a
 * class from holding packets forever).
 */
bool arb_select(struct arb_sched *s, struct arb_pick *p);
/* Account a packet of @len bytes sent for @p; returns the slot's credit
 * after the charge (0 for the strict class).
 */
s32 arb_charge(struct arb_sched *s, const struct arb_pick *p, u32 len);

#endif /* _ARBTABLE_ARBITER_H */
