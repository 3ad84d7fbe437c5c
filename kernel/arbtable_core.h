/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sch_arbtable core: the arbiter, the allocator and admission. It uses
 * kernel APIs only and knows nothing of skbs or netlink, so the userspace
 * unit tests, fuzzers, arbsim and benchmarks compile this same code
 * (tests/core, with the headers of tests/include).
 */
#ifndef _ARBTABLE_CORE_H
#define _ARBTABLE_CORE_H

#include <linux/types.h>
#include <linux/bitops.h>
#include <linux/bug.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/string.h>
#include <linux/time64.h>
#include <linux/pkt_sched_arbtable.h>

/*
 * arbtable arbiter: the IBA VL arbitration walk over a HIGH and a LOW table
 * of 64 (class, weight) slots, with per-slot deficit counters (BXIv3
 * Algorithm 2) and the IBA VLHighLimit rule.
 *
 * Classes are small indices 0..63 chosen by the caller. The caller tells
 * the arbiter which classes are eligible (backlogged and not throttled);
 * the arbiter keeps per-table 64-bit masks of eligible slots so finding the
 * next slot to serve is a couple of bit operations, never a scan.
 *
 * Use: arb_select() names the class to dequeue from, the caller dequeues
 * one packet from it and reports its length with arb_charge().
 */
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
	/* arb_weight_recip() of each slot's weight, 0 for a null slot: lets
	 * arb_table_skip_rounds() divide a debt by a quantum without a
	 * division instruction.
	 */
	u32	recip[ARB_SLOTS];
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
	bool	fresh;	/* the pick started the slot's visit */
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

/*
 * The checks of one manual-table entry, in the order the qdisc makes them
 * (a slot given twice is found before its weight is looked at). arbsim
 * makes the same checks through this function and says the same words:
 * ARB_ENTRY_MSG_* are the formats (table name, slot, then the value), the
 * _FIXED texts what a kernel without formatted extack messages says.
 */
enum arb_entry_err {
	ARB_ENTRY_OK = 0,
	ARB_ENTRY_SLOT,		/* slot index above 63 */
	ARB_ENTRY_TWICE,	/* slot given twice */
	ARB_ENTRY_WEIGHT,	/* weight above 255 */
	ARB_ENTRY_MINOR,	/* weighted slot without a valid class minor */
};

#define ARB_ENTRY_MSG_SLOT	"%s table: slot index %u out of range 0..63"
#define ARB_ENTRY_FIXED_SLOT	"slot index out of range 0..63"
#define ARB_ENTRY_MSG_TWICE	"%s table: slot %u given twice"
#define ARB_ENTRY_FIXED_TWICE	"slot given twice in a table"
#define ARB_ENTRY_MSG_WEIGHT	"%s table: slot %u weight %u out of range 0..255"
#define ARB_ENTRY_FIXED_WEIGHT	"slot weight out of range 0..255"
#define ARB_ENTRY_MSG_MINOR	"%s table: slot %u class minor %#x out of range 1..0xffff"
#define ARB_ENTRY_FIXED_MINOR	"slot class minor out of range 1..0xffff"
#define ARB_ENTRY_MSG_TOO_MANY	"a slot table has more than 64 entries"
/* after the checks above, on a slot naming the strict class */
#define ARB_ENTRY_MSG_STRICT	"%s table: slot %u names strict class %x:%x, which takes no slot"

static inline enum arb_entry_err arb_entry_check(u64 *seen, u32 slot,
						 u32 weight, u32 minor)
{
	if (slot >= ARB_SLOTS)
		return ARB_ENTRY_SLOT;
	if (*seen & BIT_ULL(slot))
		return ARB_ENTRY_TWICE;
	*seen |= BIT_ULL(slot);
	if (weight > TC_ARBTABLE_WEIGHT_MAX)
		return ARB_ENTRY_WEIGHT;
	if (weight && (!minor || minor > 0xffff))
		return ARB_ENTRY_MINOR;
	return ARB_ENTRY_OK;
}

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

/*
 * @cls was just picked and sent its last packet, which has been charged:
 * arb_set_eligible(s, cls, false) without its two tests, whether the class
 * is eligible (it was picked; if a ceil has made it ineligible since, all
 * this does is idempotent) and what a late charge would need (there is
 * none: arb_table_drop()'s record is for a visit closed between select and
 * charge). The dequeue's per-packet path.
 */
static inline void arb_set_drained(struct arb_sched *s, unsigned int cls)
{
	u64 hi = s->cls_slots[ARB_HIGH][cls];
	u64 lo = s->cls_slots[ARB_LOW][cls];
	struct arb_table *tb;

	s->cls_eligible &= ~BIT_ULL(cls);
	if (hi) {
		tb = &s->tbl[ARB_HIGH];
		tb->eligible &= ~hi;
		if (tb->in_visit && (hi & BIT_ULL(tb->cur)))
			arb_end_visit(s, tb);
	}
	if (lo) {
		tb = &s->tbl[ARB_LOW];
		tb->eligible &= ~lo;
		if (tb->in_visit && (lo & BIT_ULL(tb->cur)))
			arb_end_visit(s, tb);
	}
}

/*
 * floor(x / w) as a multiply and a shift, exact for x < 2^16, w 1..255:
 * with recip = ceil(2^24 / w) = (2^24 + e) / w, e < w < 2^8, the product
 * x * recip / 2^24 exceeds x / w by x * e / (w * 2^24) < 1 / w, and x / w
 * is at least 1 / w short of the next integer.
 */
#define ARB_RECIP_SHIFT		24
#define ARB_RECIP_MAX_X		0xffffU

static inline u32 arb_weight_recip(u8 weight)
{
	if (!weight)
		return 0;
	return ((1U << ARB_RECIP_SHIFT) + weight - 1) / weight;
}

static inline u32 arb_recip_div(u32 x, u32 recip)
{
	return (u32)(((u64)x * recip) >> ARB_RECIP_SHIFT);
}

/* A userspace build may count the steps of the table walk with this. */
#ifndef ARB_WALK_STEP
#define ARB_WALK_STEP()	do { } while (0)
#endif

/*
 * The class @p picked holds packets but gave none (a shaped child whose
 * next packet is not due): it stops being eligible as with
 * arb_set_eligible(), except that a visit this pick started, which sent
 * nothing, is not spent: its quantum is taken back and the slot keeps the
 * balance it carried, for its next visit once the class can send.
 */
static inline void arb_set_stalled(struct arb_sched *s,
				   const struct arb_pick *p)
{
	if (p->fresh) {
		struct arb_table *tb = &s->tbl[p->table];

		tb->credit[p->slot] -= (s32)tb->weight[p->slot] *
				       ARB_WEIGHT_UNIT;
		tb->in_visit = false;
	}
	arb_set_eligible(s, p->cls, false);
}

/* First set bit of @m at or after @from, wrapping around: O(1). */
static inline unsigned int arb_next_slot(u64 m, unsigned int from)
{
	u64 ahead = m & (~0ULL << from);

	return __ffs64(ahead ? ahead : m);
}

void arb_table_skip_rounds(struct arb_sched *s, unsigned int t,
			   unsigned int first, struct arb_pick *p);

/* Start a visit of @slot: its quantum, plus its balance in deficit mode. */
static inline s32 arb_visit_credit(const struct arb_sched *s,
				   struct arb_table *tb, unsigned int slot)
{
	s32 credit = (s32)tb->weight[slot] * ARB_WEIGHT_UNIT;

	ARB_WALK_STEP();
	if (s->accounting == ARB_ACCT_DEFICIT)
		credit += tb->credit[slot];
	tb->credit[slot] = credit;
	return credit;
}

/*
 * Pick the slot of table @t to serve; its eligible mask must be non-empty.
 * Continue the visit in progress if its class is still eligible, else
 * close it and start the next eligible slot. In deficit mode a slot whose
 * debt exceeds its quantum pays the quantum and passes (as DRR does). At
 * most one round of that is walked here; after a round in which no slot
 * got out of debt, arb_table_skip_rounds() finishes the walk in two more
 * steps per eligible slot, whatever the debts: at most 3 * 64 steps.
 */
static inline void arb_table_pick(struct arb_sched *s, unsigned int t,
				  struct arb_pick *p)
{
	struct arb_table *tb = &s->tbl[t];
	u64 m = tb->eligible;
	unsigned int slot, first;

	p->fresh = false;
	if (tb->in_visit) {
		if (m & BIT_ULL(tb->cur))
			goto out;
		arb_end_visit(s, tb);
	}
	p->fresh = true;
	slot = arb_next_slot(m, tb->cur);
	if (unlikely(arb_visit_credit(s, tb, slot) <= 0)) {
		first = slot;
		do {
			slot = arb_next_slot(m, (slot + 1) & (ARB_SLOTS - 1));
			if (slot == first) {
				arb_table_skip_rounds(s, t, first, p);
				return;
			}
		} while (arb_visit_credit(s, tb, slot) <= 0);
	}
	tb->cur = slot;
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
		p->fresh = false;
		return true;
	}
	if (unlikely(s->low_turn)) {
		if (lo) {
			if (!hi)	/* IBA: high has nothing, reset its counter */
				s->hp_counter = arb_hp_limit(s);
			arb_table_pick(s, ARB_LOW, p);
			return true;
		}
		s->low_turn = false;	/* nobody to take the owed turn */
	}
	if (hi) {
		arb_table_pick(s, ARB_HIGH, p);
		return true;
	}
	if (lo) {
		s->hp_counter = arb_hp_limit(s);	/* as above */
		arb_table_pick(s, ARB_LOW, p);
		return true;
	}
	p->cls = arb_select_slotless(s);
	p->table = ARB_SLOTLESS;
	p->slot = 0;
	p->fresh = false;
	return p->cls != ARB_NO_CLASS;
}

/* arb_charge() for a slot of table @t (a constant where it is inlined) */
static __always_inline s32 arb_charge_slot(struct arb_sched *s,
					   unsigned int t, unsigned int slot,
					   u32 len)
{
	struct arb_table *tb = &s->tbl[t];
	s32 credit;

	if (len > ARB_MAX_PKT_LEN)
		len = ARB_MAX_PKT_LEN;

	/* every high packet counts against VLHighLimit (IB arbitration
	 * paper, HighPriCounter: each packet's length is deducted)
	 */
	if (t == ARB_HIGH) {
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

	if (!tb->in_visit || tb->cur != slot) {
		/* The class went ineligible while this packet was being
		 * dequeued (a child dropping its last packets notified
		 * the qdisc) and its visit was closed: close it again with
		 * the packet counted, so the debt carries as if the
		 * packet had come first.
		 */
		if (tb->dropped_slot != slot)
			return 0;
		credit = tb->dropped_credit - (s32)len;
		tb->dropped_credit = credit;
		tb->credit[slot] = credit;
		arb_close_credit(s, &tb->credit[slot]);
		return credit;
	}
	credit = tb->credit[slot] - (s32)len;
	tb->credit[slot] = credit;
	if (credit <= 0)
		arb_end_visit(s, tb);
	return credit;
}

/*
 * Account a packet of @len bytes sent for @p; returns the slot's credit
 * after the charge (0 for the strict class). One inlined copy per table,
 * so that the table's fields are at constant offsets.
 */
static inline s32 arb_charge(struct arb_sched *s, const struct arb_pick *p,
			     u32 len)
{
	if (p->table == ARB_HIGH)
		return arb_charge_slot(s, ARB_HIGH, p->slot, len);
	if (p->table == ARB_LOW)
		return arb_charge_slot(s, ARB_LOW, p->slot, len);
	return 0;	/* strict and slotless use no credit */
}

/*
 * arbtable allocator: admits classes into a 64-slot arbitration table at a
 * power-of-two distance, keeps the table normalized, and defragments it on
 * release. Runs on configuration changes only, never per packet.
 *
 * Model (fill-in-arbitration-table.txt, sections 7-10):
 * - Slots carry labels by the 6-bit bit-reversal permutation. The candidate
 *   sets for distance d = 2^i are the label ranges
 *   E_{i,j} = [j, j + 2^(6-i)), j a multiple of 2^(6-i): a buddy tree of 7
 *   levels. E_{i,j} holds the physical slots rev6(j) + k*d, k = 0..64/d-1,
 *   i.e. 64/d slots exactly d apart (section 7.3).
 * - A free set is singular when its brother is not free (Definition 3); the
 *   table is normalized when each level has at most one singular set
 *   (Definition 4). Then every request whose slot count fits in the free
 *   slots is admitted (Theorems 3 and 4).
 *
 * Management model: the evaluation study (table-management-evaluation.txt,
 * 5.3.4, tables 3-6) found Model 1 (defragmentation only, no reordering)
 * the cheapest: 29.0 us mean per operation and 0.0715 swaps per operation,
 * against 30.5/30.0 us and 0.12/0.11 swaps for Models 2 and 3 (which also
 * reorder). Its section 6 notes that with the "smart insertion" of 4.4
 * (take the singular set of the deepest level <= the requested one, i.e.
 * best fit) an insertion never denormalizes the table, so Model 1 needs no
 * defragmentation after an insertion either. We implement exactly that:
 * smart insertion + defragmentation after a release, no reordering. The
 * invariant "normalized" then holds after every operation without needing
 * the table to be ordered (Definition 6).
 *
 * All state lives in struct arb_alloc, a plain fixed-size struct the caller
 * embeds (one per table). To make a change atomic, run it on a copy
 * (struct assignment or memcpy) and commit the copy only on success; the
 * arb_alloc_change() helper does this internally.
 */
#define ARB_LEVELS		7	/* distances 1, 2, 4, ..., 64 */
#define ARB_RATE_MAX		BIT_ULL(48)	/* bytes/s */
#define ARB_MTU_MIN		64
/* Largest mtu: a GSO skb kept whole counts every segment's headers
 * (qdisc_pkt_len), ~68.5 KB for TCP's 64 KiB, more with BIG TCP; the
 * arbiter caps a charge at ARB_MAX_PKT_LEN (1 MiB) anyway.
 */
#define ARB_MTU_MAX		(1024U * 1024)
/*
 * The mtu a qdisc follows when it is not given. Below ARB_GSO_WHOLE_RATE
 * (1 Gbit/s, in bytes/s) a GSO skb is split at enqueue, so that the bounds
 * stay those of one frame; from it up, a qdisc pass per MSS of TCP costs
 * more CPU than the host can spend at such rates, so a GSO skb of up to
 * ARB_GSO_MAX bytes is queued whole and the bounds are those of such an
 * skb (pin 'mtu' to the frame size for bounds of one frame).
 * ARB_GSO_HDR_ROOM covers the headers qdisc_pkt_len counts for each of its
 * segments (45 of 66 bytes at an MSS of 1448); a larger skb is split.
 */
#define ARB_GSO_WHOLE_RATE	125000000ULL
#define ARB_GSO_MAX		65536U
#define ARB_GSO_HDR_ROOM	4096U
#define ARB_MIN_PKT_DEFAULT	64
#define ARB_BOUND_NONE		(~0ULL)	/* no finite bound */
#define ARB_MAX_MOVES		64	/* >= 1+2+..+32 swaps */

/* 6-bit bit reversal: label <-> physical slot (its own inverse). */
static inline unsigned int arb_rev6(unsigned int x)
{
	return ((x & 1) << 5) | ((x & 2) << 3) | ((x & 4) << 1) |
	       ((x & 8) >> 1) | ((x & 16) >> 3) | ((x & 32) >> 5);
}

/* Level of a power-of-two distance d (1..64): log2(d). */
static inline unsigned int arb_level(unsigned int d)
{
	return (unsigned int)__ffs64(d);
}

/*
 * Round a requested distance down to a power of two (paper section 6.1.2,
 * Table 1: "any request will be reduced to the corresponding power of 2
 * immediately below"). Returns 0 for an invalid distance (0 or > 64).
 */
static inline unsigned int arb_round_distance(unsigned int d)
{
	if (d == 0 || d > ARB_SLOTS)
		return 0;
	while (d & (d - 1))
		d &= d - 1;
	return d;
}

/* ---------------------------------------------------------------------- */
/* Rejection reasons                                                       */

enum arb_reason {
	ARB_R_OK = 0,
	ARB_R_BAD_PARAMS,	/* qdisc parameters out of range */
	ARB_R_BAD_DISTANCE,	/* distance 0 or > 64 */
	ARB_R_BAD_CLASS,	/* class index >= 64 */
	ARB_R_RATE_ZERO,	/* rate 0 */
	ARB_R_RATE_ABOVE_CAP,	/* rate > guaranteed high-table rate */
	ARB_R_LATENCY_LOW,	/* latency below the best possible bound */
	ARB_R_WEIGHT,		/* weight does not fit the slots */
	ARB_R_NO_SLOTS,		/* not enough free slots */
	ARB_R_CAPACITY,		/* weights would exceed capacity */
	ARB_R_EXISTS,		/* class already admitted */
	ARB_R_UNKNOWN,		/* class not admitted */
	ARB_R_SHARE_SPREAD,	/* share above its slots' total weight */
};

/* A rejection with the numbers that explain it and what would fit. */
struct arb_reject {
	enum arb_reason code;
	u32 need_slots;		/* slots the request needs */
	u32 distance;		/* distance of the request */
	u32 free_slots;		/* free slots in the table */
	u32 fit_distance;	/* smallest distance that would fit, 0 none */
	u32 weight;		/* weight units the request needs */
	u32 capacity;		/* units free (ARB_R_CAPACITY) */
	u32 share;		/* requested share (ARB_R_SHARE_SPREAD) */
	u64 rate;		/* requested rate, bytes/s */
	u64 cap_rate;		/* guaranteed high-table rate, bytes/s */
	u64 latency_ns;		/* requested latency */
	u64 best_ns;		/* best possible bound */
};

/*
 * Format a rejection as one line of text into buf (always NUL-terminated
 * when len > 0), e.g. "needs 16 slots at distance 4, 10 free; largest
 * admissible distance 8". "largest admissible distance" is DESIGN's
 * wording for the smallest power-of-two distance whose slot count and
 * weight fit now, i.e. the largest request the table would admit.
 * Returns the length written (excluding the NUL).
 */
size_t arb_reject_format(const struct arb_reject *r, char *buf, size_t len);

/*
 * The rejection without its numbers, a constant text: for kernels without
 * per-request storage for formatted netlink messages (6.1).
 */
const char *arb_reason_text(enum arb_reason code);

/* @bytes_per_s as tc prints a rate ("9.08Mbit"); returns @buf. */
char *arb_fmt_rate(char *buf, size_t len, u64 bytes_per_s);

/* ---------------------------------------------------------------------- */
/* Weights, admission arithmetic and latency bounds (pure functions)       */

struct arb_params {
	u64 rate;		/* C: link/qdisc rate, bytes/s, 1..2^48 */
	u64 strict_ceil;	/* strict class ceil, bytes/s, < rate */
	u32 strict_burst;	/* strict class burst, bytes */
	u32 mtu;		/* largest packet, bytes, 64..1048576 */
	u32 min_pkt;		/* smallest packet, bytes (0: 64) */
	u8 maxweight;		/* per-slot weight cap, 1..255 */
	u8 highlimit;		/* IBA VLHighLimit, 4096-byte units */
};

/* 0 or -EINVAL. */
int arb_params_check(const struct arb_params *p);

/*
 * Guaranteed rate of the HIGH table, bytes/s:
 *   X      = C - strict_ceil
 *   C_high = X                                  if highlimit == 255
 *   C_high = X - ceil(X * MTU / (H + MTU))      otherwise,
 *   H      = highlimit * 4096 bytes             if highlimit >= 1
 *   H      = min_pkt                            if highlimit == 0
 * While HIGH is backlogged it sends at least H bytes (IBA: until its
 * counter goes negative; with highlimit 0 at least one packet of at least
 * min_pkt bytes) before LOW gets one packet of at most MTU bytes.
 */
u64 arb_high_capacity(const struct arb_params *p);

/*
 * Weight units for a rate R (bytes/s) in the HIGH table:
 *   W = ceil(R * 64 * maxweight / C_high)
 * The table's capacity is 64 * maxweight units per cycle, so W units give
 * the class at least W / (64 * maxweight) of C_high whatever else is
 * admitted. Returns 0 when R is 0 or R > C_high.
 */
u32 arb_weight_units(const struct arb_params *p, u64 rate);

/*
 * The rate @units of HIGH-table weight guarantee, bytes/s:
 *   floor(units * C_high / (64 * maxweight))
 * What a class reserved may exceed what it asked: the weight is rounded up
 * to one unit per slot, and a latency that needs a slot to cover an MTU in
 * fewer visits raises the smallest slot weight (arb_plan). Exported per
 * class so the capacity taken is visible.
 */
u64 arb_weight_rate(const struct arb_params *p, u32 units);

/* a * b / c rounded up or down, saturating at ~0 (configuration path) */
u64 arb_muldiv(u64 a, u64 b, u64 c, bool up);

/*
 * Weight reserved on n = 64/d slots for W units: max(W, n), as each slot
 * needs weight >= 1 (a weight-0 slot is a null slot, skipped). 0 when it
 * cannot fit (W > n * maxweight).
 */
u32 arb_weight_eff(u32 w, unsigned int n, unsigned int maxweight);

/*
 * Weight of the k-th slot (k = 0 is the set's first slot, the lowest
 * physical slot) when W units are spread over n slots (hypothesis 3 of
 * section 7.2: the first slot takes the remainder, so it is >= the others).
 * The remainder goes to the first slot up to maxweight; any excess goes one
 * unit each to the following slots. Requires n <= W <= n * maxweight.
 */
u8 arb_slot_weight(u32 w, unsigned int n, unsigned int k,
		   unsigned int maxweight);

/* Smallest slot weight of that spread: floor(W / n). */
static inline u32 arb_min_slot_weight(u32 w, unsigned int n)
{
	return w / n;	/* n is a power of two: a shift */
}

/*
 * Guaranteed head-of-line wait bound of a HIGH-table class at distance d
 * whose smallest slot weight is wmin (>= 1), in ns. Placement-independent:
 * it holds whatever else is admitted, released or swapped later.
 *
 *   n      = 64 / d                         slots of the class
 *   k      = ceil(MTU / (64 * wmin))        visits of one slot to pay a
 *                                           debt of < MTU bytes (deficit)
 *   V      = (k - 1) * n + 1                class visits until one can send
 *   S      = V * (d - 1)                    other slots passed meanwhile
 *   B_high = S * (64 * maxweight + MTU)     each sends < its credit + MTU
 *   L      = 0                              if highlimit == 255
 *          = (floor(B_high / H) + 1) * MTU  otherwise (H as above): LOW
 *                                           packets let in meanwhile
 *   B      = B_high + L + MTU + strict_burst   (MTU: one packet in flight)
 *   bound  = ceil(B * 10^9 / (C - strict_ceil))
 *
 * Dividing by C - strict_ceil instead of C accounts for what the strict
 * class sends at its ceil during the wait itself (its token bucket allows
 * strict_burst + strict_ceil * t in any window t). Returns ARB_BOUND_NONE
 * on bad input.
 */
u64 arb_bound_ns(const struct arb_params *p, unsigned int d, u32 wmin);

/* Result of planning an admission (rate + latency or distance). */
struct arb_plan {
	u32 w;			/* weight units from the rate */
	u32 w_eff;		/* units reserved: max(w, n) */
	unsigned int distance;	/* chosen distance (power of two) */
	unsigned int n;		/* slots: 64 / distance */
	u64 bound_ns;		/* guaranteed HOL-wait bound */
};

/*
 * Plan a HIGH-table admission: rate in bytes/s (> 0), latency_ns (0 = not
 * given) and distance (0 = not given; else rounded down to a power of two,
 * must be 1..64). The chosen distance is the largest power of two that is
 * <= the requested distance (64 without one), meets the latency, and holds
 * W on its slots; a smaller distance is used when W does not fit (section
 * 5.1.3: more entries when the weight needs them). Free slots are not
 * checked here (arb_alloc_insert does that). 0, or -EINVAL with *rj set.
 * The glue rejects an explicit "latency 0" / "distance 0" before calling.
 */
int arb_plan(const struct arb_params *p, u64 rate, u64 latency_ns,
	     unsigned int distance, struct arb_plan *pl, struct arb_reject *rj);

/* ---------------------------------------------------------------------- */
/* The allocator                                                           */

struct arb_alloc_class {
	u8 level;		/* log2(distance); ARB_NO_CLASS when unused */
	u8 set;			/* first label j of E_{level,j} */
	u16 w;			/* weight units reserved (w_eff) */
};

struct arb_alloc {
	u64 free;		/* bit per label: 1 = free */
	u8 owner[ARB_SLOTS];	/* per label: class or ARB_NO_CLASS */
	struct arb_alloc_class cls[ARB_MAX_CLASSES];
	u32 total_w;		/* sum of reserved units */
	u8 maxweight;		/* capacity = 64 * maxweight units */
	u8 nclasses;
};

/* One slot swap: exchange the contents (class, weight, credit) of a, b. */
struct arb_move {
	u8 a;
	u8 b;
};

/*
 * Slot moves of one operation, in order. Apply them to the live table in
 * this order (each is a swap of two physical slots); arb_alloc_insert()
 * never moves anything, arb_alloc_release() only after freeing the class's
 * slots, arb_alloc_change() after freeing the old slots and before filling
 * the new ones.
 */
struct arb_moves {
	unsigned int n;
	struct arb_move m[ARB_MAX_MOVES];
};

/* maxweight 1..255 (0 is treated as 255). */
void arb_alloc_init(struct arb_alloc *a, unsigned int maxweight);

/*
 * Admit class cls (0..63) at distance d (1..64, rounded down to a power of
 * two) reserving w units (n <= w <= n * maxweight, n = 64/d; 0 means n).
 * Best fit on the singular sets (smart insertion). On success returns 0
 * and stores the chosen set's first label in *set (may be NULL). Errors:
 * -EINVAL (bad class/distance/weight), -EEXIST (already admitted),
 * -ENOSPC (not enough free slots or capacity); *rj explains (may be NULL).
 */
int arb_alloc_insert(struct arb_alloc *a, unsigned int cls, unsigned int d,
		     u32 w, u8 *set, struct arb_reject *rj);

/*
 * Release class cls and defragment (section 9.1, Figure 14; eval. 4.3.3):
 * from the deepest level up, while a level has two singular sets, swap the
 * left one with the (occupied) brother of the right one, so the two free
 * sets merge to the right. *mv (may be NULL) is reset and gets the moves.
 * Returns 0 or -ENOENT / -EINVAL.
 */
int arb_alloc_release(struct arb_alloc *a, unsigned int cls,
		      struct arb_moves *mv, struct arb_reject *rj);

/*
 * Atomically change class cls to distance d and w units: on failure *a is
 * untouched. Same distance: only the weight changes (no moves). Otherwise
 * release + defragment + insert on a copy. *mv gets the release's moves.
 */
int arb_alloc_change(struct arb_alloc *a, unsigned int cls, unsigned int d,
		     u32 w, struct arb_moves *mv, struct arb_reject *rj);

/* Verify the invariants; 0 if they hold, else a negative ARB_CHK_* code. */
enum {
	ARB_CHK_OK = 0,
	ARB_CHK_FREE_MISMATCH = -1,	/* free bit vs owner disagree */
	ARB_CHK_CLASS_SET = -2,		/* class labels != its set */
	ARB_CHK_STRAY_OWNER = -3,	/* label owned by unknown class */
	ARB_CHK_SPACING = -4,		/* slots not exactly d apart */
	ARB_CHK_NOT_NORMALIZED = -5,	/* two singular sets on a level */
	ARB_CHK_WEIGHT = -6,		/* weights inconsistent */
};

static inline unsigned int arb_alloc_free_slots(const struct arb_alloc *a)
{
	return hweight64(a->free);
}

static inline bool arb_alloc_has(const struct arb_alloc *a, unsigned int cls)
{
	return cls < ARB_MAX_CLASSES && a->cls[cls].level != ARB_NO_CLASS;
}

/* Distance of an admitted class (0 if not admitted). */
unsigned int arb_alloc_distance(const struct arb_alloc *a, unsigned int cls);

/* Class in physical slot s, or ARB_NO_CLASS. */
static inline u8 arb_alloc_slot_owner(const struct arb_alloc *a,
				      unsigned int s)
{
	return a->owner[arb_rev6(s & (ARB_SLOTS - 1))];
}

/* Weight of physical slot s (0 when free), from the class's spread. */
u8 arb_alloc_slot_weight(const struct arb_alloc *a, unsigned int s);

/*
 * Current, placement-based bound of an admitted HIGH-table class: as
 * arb_bound_ns() but with the actual slots between the class's slots:
 * each non-null slot counts 64 * its weight + MTU, null slots 0, so
 *   B_high = (k - 1) * (bytes of all other slots) + (largest gap's bytes).
 * Always <= arb_bound_ns(). ARB_BOUND_NONE if cls is not admitted.
 */
u64 arb_alloc_current_bound_ns(const struct arb_alloc *a,
			       const struct arb_params *p, unsigned int cls);

/*
 * arbtable admission: turns a class's request (rate + latency/distance for
 * the HIGH table, share for the LOW table) into an allocator operation,
 * planned on copies of both allocators, then committed to the live
 * arbiter. Kernel-independent: the qdisc (its auto mode) and arbsim run
 * exactly this code, so a what-if answer is the module's answer.
 */

/* Shortest burst a token bucket (qdisc rate, class ceil) may save up, ns:
 * long enough that a watchdog firing late (timer slack, a loaded or
 * emulated CPU) costs no throughput, short enough to shape: 2 ms lost up
 * to 18% of a 10 Mbit/s rate under TCG, 10 ms nothing measurable. The
 * module's buckets and the strict-class burst (hence the bounds) use it.
 */
#define ARB_MIN_BURST_NS	10000000ULL

/* A class's request as given by the user (0 = not given). */
struct arb_resv {
	u64	rate;		/* bytes/s, HIGH table */
	u64	latency;	/* ns */
	u32	distance;	/* as given, before rounding */
	u32	share;		/* LOW table weight units */
};

/*
 * A request that moves between tables drops what applied only to the old
 * one (DESIGN §4): a share class given a rate loses its LOW distance, a
 * rate class given a share its latency and HIGH distance. A latency or
 * distance in the same request is applied after these.
 */
static inline void arb_resv_set_rate(struct arb_resv *r, u64 rate)
{
	if (r->share)
		r->distance = 0;
	r->share = 0;
	r->rate = rate;
}

static inline void arb_resv_set_share(struct arb_resv *r, u32 share)
{
	if (r->rate)
		r->distance = 0;
	r->rate = 0;
	r->latency = 0;
	r->share = share;
}

/* The outcome of planning one admission, change or release. */
struct arb_admission {
	struct arb_alloc	alloc[ARB_NTABLES];	/* after the op */
	struct arb_moves	mv;	/* swaps in @old_table, in order */
	struct arb_resv		resv;
	u8			old_table;	/* ARB_HIGH/LOW or ARB_NO_CLASS */
	u8			new_table;
	u32			distance;	/* effective */
	u32			weight;		/* units reserved */
	u64			bound_ns;	/* guaranteed bound, HIGH only */
	enum arb_reason		reason;		/* why it failed, or ARB_R_OK */
};

/* Bytes the strict class may send in a burst under a ceil: its bucket
 * depth (@cburst bytes, or by default max(2 * mtu, ceil * ARB_MIN_BURST_NS))
 * plus the one packet the bucket may overshoot by.
 */
u32 arb_strict_burst(u64 ceil, u32 mtu, u32 cburst);

/*
 * The mtu followed for a device whose largest frame is @frame bytes, whose
 * GSO skbs are at most @gso_max_size bytes above a link header of @hard_hdr,
 * at @capacity bytes/s (see ARB_GSO_WHOLE_RATE), in ARB_MTU_MIN..MAX.
 */
u32 arb_follow_mtu(u32 frame, u32 gso_max_size, u32 hard_hdr, u64 capacity);

/* The allocator's parameters for a qdisc (strict_ceil 0: no strict;
 * strict_cburst 0: the default depth).
 */
void arb_admit_params(u64 capacity, u32 mtu, u8 maxweight, u8 highlimit,
		      u64 strict_ceil, u32 strict_cburst,
		      struct arb_params *p);

/*
 * Plan what @resv asks for class index @idx, now in @old_table (ARB_NO_CLASS
 * if none), on copies of @alloc; a zero @resv releases. Returns 0 or a
 * negative errno with the reason in @why (arb_reject_format()'s text, at
 * most 79 characters: a netlink message's room) and @adm->reason.
 */
int arb_admit_plan(const struct arb_alloc alloc[ARB_NTABLES],
		   const struct arb_params *p, u8 maxweight, unsigned int idx,
		   u8 old_table, const struct arb_resv *resv,
		   struct arb_admission *adm, char *why, size_t len);

/*
 * Apply a plan to the live arbiter and allocators: free the class's old
 * slots, apply the defragmentation swaps (each moves a slot with its
 * credit), then fill the slots the allocators now assign. Cannot fail.
 * @on_swap (may be NULL) sees every swap, for tracing and counting.
 */
void arb_admit_commit(struct arb_sched *arb,
		      struct arb_alloc alloc[ARB_NTABLES], unsigned int idx,
		      const struct arb_admission *adm,
		      void (*on_swap)(void *ctx, unsigned int t, u8 a, u8 b),
		      void *ctx);

#endif /* _ARBTABLE_CORE_H */
