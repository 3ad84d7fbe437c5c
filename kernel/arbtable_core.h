/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sch_arbtable core: the arbiter, the allocator and admission. It knows
 * nothing of skbs or netlink, so that userspace can build the same code.
 *
 * The arbiter walks the IBA VL arbitration tables [IBA] with per-entry
 * deficit counters [BXI]; the allocator places classes in them [FILL],
 * managed as in [EVAL].
 *
 * [IBA]  InfiniBand Architecture Specification, Volume 1, VL arbitration.
 * [BXI]  M. Sánchez de la Rosa, G. Gomez-Lopez, F. J. Andújar,
 *        J. Escudero-Sahuquillo, J. L. Sánchez, F. J. Alfaro-Cortés,
 *        P.-A. Lagadec, "Quality-of-service provision for BXIv3-based
 *        interconnection networks", 2025.
 * [FILL] F. J. Alfaro, J. L. Sánchez, M. Menduiña, J. Duato, "Formalizing
 *        the Fill in of the InfiniBand Arbitration Table", Technical Report
 *        DIAB-03-02-35, Universidad de Castilla-La Mancha, 2003.
 * [EVAL] J. Laborda, J. A. Villar, F. J. Alfaro, J. L. Sánchez,
 *        "Implementación y Evaluación de un Modelo de Gestión de la Tabla
 *        de Arbitraje de InfiniBand", Technical Report DIAB-04-12-1,
 *        Universidad de Castilla-La Mancha, 2004.
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

#define ARB_SLOTS		TC_ARBTABLE_SLOTS
#define ARB_MAX_CLASSES		64	/* class index bitmasks are u64 */
#define ARB_WEIGHT_UNIT		TC_ARBTABLE_WEIGHT_UNIT
#define ARB_HIGHLIMIT_UNIT	TC_ARBTABLE_HIGHLIMIT_UNIT
#define ARB_HIGHLIMIT_INF	TC_ARBTABLE_HIGHLIMIT_MAX	/* unlimited */
#define ARB_NO_CLASS		0xff	/* a slot or label nobody owns */
#define ARB_MAX_PKT_LEN		(1024U * 1024)	/* charge cap, keeps s32 math safe */
#define ARB_RATE_MAX		BIT_ULL(48)	/* bytes/s */
#define ARB_MTU_MIN		64
/* a GSO skb kept whole counts every segment's headers (qdisc_pkt_len) */
#define ARB_MTU_MAX		(1024U * 1024)
#define ARB_BOUND_NONE		(~0ULL)	/* no finite bound */
#define ARB_MAX_MOVES		64	/* >= 1+2+..+32 swaps */
/*
 * Shortest burst a token bucket may save up: long enough that a watchdog
 * firing late costs no throughput, short enough to shape.
 */
#define ARB_MIN_BURST_NS	10000000ULL

enum arb_table_id {
	ARB_HIGH = 0,
	ARB_LOW = 1,
	ARB_NTABLES = 2,
	ARB_STRICT = 2,		/* arb_pick.table for the strict class */
	ARB_SLOTLESS = 3,	/* a class no slot names, served when idle */
	ARB_UNCLASSIFIED = 4,	/* the owner's queue of packets no class took */
};

enum arb_accounting {
	ARB_ACCT_DEFICIT = 0,	/* overshoot carried as debt [BXI] */
	ARB_ACCT_IBA = 1,	/* overshoot forgiven [IBA] */
};

struct arb_table {
	u8	cls[ARB_SLOTS];		/* class index, valid where weight > 0 */
	u8	weight[ARB_SLOTS];	/* 64-byte units, 0 = null slot */
	/* credit of the visit at @cur, else the (<= 0) balance carried */
	s32	credit[ARB_SLOTS];
	u64	used;			/* slots with weight > 0 */
	u64	eligible;		/* used slots whose class is eligible */
	u8	cur;			/* slot being (or next to be) visited */
	bool	in_visit;		/* @cur's visit has started */
	u32	recip[ARB_SLOTS];	/* arb_weight_recip() of each weight */
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
	/* the owner's unclassified queue is backlogged (set by the owner) */
	bool	uncl_ready;
	/* the next LOW-side opportunity is the unclassified queue's */
	bool	uncl_turn;
};

struct arb_pick {
	u8	cls;
	u8	table;	/* ARB_HIGH, ARB_LOW, ARB_STRICT, ARB_SLOTLESS or
			 * ARB_UNCLASSIFIED (no class: the owner's queue)
			 */
	u8	slot;
	bool	fresh;	/* the pick started the slot's visit */
};

void arb_init(struct arb_sched *s, u8 highlimit, u8 accounting);
void arb_reset_visits(struct arb_sched *s);
void arb_set_highlimit(struct arb_sched *s, u8 highlimit);
void arb_set_accounting(struct arb_sched *s, u8 accounting);
/* weight 0 or ARB_NO_CLASS makes a null slot */
void arb_set_slot(struct arb_sched *s, unsigned int t, unsigned int slot,
		  u8 cls, u8 weight);
void arb_swap_slots(struct arb_sched *s, unsigned int t, unsigned int a,
		    unsigned int b);
void arb_set_strict(struct arb_sched *s, u8 cls);
unsigned int arb_table_skip_rounds(struct arb_sched *s, unsigned int t,
				   unsigned int first);
u8 arb_select_slotless(struct arb_sched *s);

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

/* The per-packet half, inline: the qdisc runs it on every packet. */

static inline s32 arb_hp_limit(const struct arb_sched *s)
{
	return (s32)s->highlimit * ARB_HIGHLIMIT_UNIT;
}

/* Closing a visit keeps a debt in deficit mode, never a positive rest. */
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

/*
 * @slots stop being eligible, and a visit among them ends now ([BXI]
 * Algorithm 2 l. 19). Never between a pick and its charge: the owner
 * settles the picked class after the charge (arb_set_drained()).
 */
static __always_inline void arb_table_drop(struct arb_sched *s,
					   struct arb_table *tb, u64 slots)
{
	tb->eligible &= ~slots;
	if (tb->in_visit && (slots & BIT_ULL(tb->cur)))
		arb_end_visit(s, tb);
}

static __always_inline void arb_class_drop(struct arb_sched *s,
					   unsigned int cls)
{
	u64 hi = s->cls_slots[ARB_HIGH][cls];
	u64 lo = s->cls_slots[ARB_LOW][cls];

	s->cls_eligible &= ~BIT_ULL(cls);
	/* most classes live in one table: skip the other */
	if (hi)
		arb_table_drop(s, &s->tbl[ARB_HIGH], hi);
	if (lo)
		arb_table_drop(s, &s->tbl[ARB_LOW], lo);
}

/* The caller's view of @cls: backlogged and allowed to send, or not. */
static __always_inline void arb_set_eligible(struct arb_sched *s,
					     unsigned int cls, bool eligible)
{
	u64 bit = BIT_ULL(cls);

	if (!!(s->cls_eligible & bit) == eligible)
		return;
	if (!eligible) {
		arb_class_drop(s, cls);
		return;
	}
	s->cls_eligible |= bit;
	s->tbl[ARB_HIGH].eligible |= s->cls_slots[ARB_HIGH][cls];
	s->tbl[ARB_LOW].eligible |= s->cls_slots[ARB_LOW][cls];
}

/* The picked class's last packet was charged: no eligibility test. */
static inline void arb_set_drained(struct arb_sched *s, unsigned int cls)
{
	arb_class_drop(s, cls);
}

/*
 * floor(x / w) as a multiply and a shift, exact for x < 2^16, w 1..255:
 * recip = (2^24 + e) / w with e < w makes x * recip / 2^24 exceed x / w by
 * x * e / (w * 2^24) < 1 / w, less than x / w's gap to the next integer.
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
 * The picked class gave no packet: its child holds packets but is shaped
 * (stalled), or dropped its last ones in its own dequeue (emptied, netem
 * moving packets into a full inner qdisc). It stops being eligible, and a
 * visit this pick started is taken back: the slot keeps the balance it had
 * before, as a slot skipped while empty does. A visit under way closes.
 */
static __always_inline void arb_set_stalled(struct arb_sched *s,
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

/* First set bit of @m at or after @from, wrapping around. */
static inline unsigned int arb_next_slot(u64 m, unsigned int from)
{
	u64 ahead = m & (~0ULL << from);

	return __ffs64(ahead ? ahead : m);
}

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
 * The slot of table @t to serve (@t has eligible slots). A slot whose debt
 * exceeds its quantum pays it and passes, as in DRR; after a whole round
 * of those, arb_table_skip_rounds() ends the walk in bounded steps.
 */
static __always_inline void arb_table_pick(struct arb_sched *s,
					   unsigned int t, struct arb_pick *p)
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
				slot = arb_table_skip_rounds(s, t, first);
				break;
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

/*
 * A LOW-side opportunity (the high limit expired, or HIGH is idle): the
 * unclassified queue takes every second one while it is backlogged, so
 * that it has a bound of its own (arb_unclassified_bound_ns()) and takes
 * nothing HIGH was guaranteed; the LOW table, or the classes no slot
 * names, the others.
 */
static __always_inline bool arb_low_side_pick(struct arb_sched *s, u64 lo,
					      struct arb_pick *p)
{
	if (s->uncl_ready && s->uncl_turn)
		goto unclassified;
	if (lo) {
		arb_table_pick(s, ARB_LOW, p);
		return true;
	}
	*p = (struct arb_pick){ .cls = arb_select_slotless(s),
				.table = ARB_SLOTLESS };
	if (p->cls != ARB_NO_CLASS)
		return true;
	if (!s->uncl_ready)
		return false;
unclassified:
	*p = (struct arb_pick){ .cls = ARB_NO_CLASS,
				.table = ARB_UNCLASSIFIED };
	return true;
}

/*
 * The next class to serve, false when none: the strict class, the tables,
 * then classes no slot names, round robin, so that none waits forever.
 * The unclassified queue shares the LOW side (arb_low_side_pick()).
 */
static __always_inline bool arb_select(struct arb_sched *s,
				       struct arb_pick *p)
{
	u64 hi = s->tbl[ARB_HIGH].eligible;
	u64 lo = s->tbl[ARB_LOW].eligible;

	if (s->strict != ARB_NO_CLASS && arb_class_eligible(s, s->strict)) {
		*p = (struct arb_pick){ .cls = s->strict, .table = ARB_STRICT };
		return true;
	}
	if (unlikely(s->low_turn)) {
		if (lo || s->uncl_ready) {
			if (!hi)	/* [IBA]: high idle resets its counter */
				s->hp_counter = arb_hp_limit(s);
			return arb_low_side_pick(s, lo, p);
		}
		s->low_turn = false;	/* nobody to take the owed turn */
	}
	if (hi) {
		arb_table_pick(s, ARB_HIGH, p);
		return true;
	}
	if (lo)
		s->hp_counter = arb_hp_limit(s);	/* as above */
	return arb_low_side_pick(s, lo, p);
}

/* arb_charge() for table @t, a constant where it is inlined */
static __always_inline s32 arb_charge_slot(struct arb_sched *s,
					   unsigned int t, unsigned int slot,
					   u32 len)
{
	struct arb_table *tb = &s->tbl[t];
	s32 credit;

	if (len > ARB_MAX_PKT_LEN)
		len = ARB_MAX_PKT_LEN;
	/* [IBA] HighPriCounter: every high packet's length is deducted */
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
		s->uncl_turn = true;
	}

	if (!tb->in_visit || tb->cur != slot)	/* reprogrammed since */
		return 0;
	credit = tb->credit[slot] - (s32)len;
	tb->credit[slot] = credit;
	if (credit <= 0)
		arb_end_visit(s, tb);
	return credit;
}

/*
 * Account a packet sent for @p; the slot's credit after it (0 without a
 * slot). One copy per table keeps the table's fields at constant offsets.
 */
static inline s32 arb_charge(struct arb_sched *s, const struct arb_pick *p,
			     u32 len)
{
	if (p->table == ARB_HIGH)
		return arb_charge_slot(s, ARB_HIGH, p->slot, len);
	if (p->table == ARB_LOW)
		return arb_charge_slot(s, ARB_LOW, p->slot, len);
	if (p->table == ARB_SLOTLESS) {
		s->low_turn = false;
		s->uncl_turn = true;
	} else if (p->table == ARB_UNCLASSIFIED) {
		s->low_turn = false;
		s->uncl_turn = false;
	}
	return 0;
}

/* The allocator: configuration path only. */

/* 6-bit bit reversal: label <-> physical slot ([FILL] 7.3). */
static inline unsigned int arb_rev6(unsigned int x)
{
	return ((x & 1) << 5) | ((x & 2) << 3) | ((x & 4) << 1) |
	       ((x & 8) >> 1) | ((x & 16) >> 3) | ((x & 32) >> 5);
}

/* A distance rounded down to a power of two ([FILL] 6.1.2); 0 if invalid. */
static inline unsigned int arb_round_distance(unsigned int d)
{
	if (d == 0 || d > ARB_SLOTS)
		return 0;
	while (d & (d - 1))
		d &= d - 1;
	return d;
}

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

/* One line, with the numbers; the length written. */
size_t arb_reject_format(const struct arb_reject *r, char *buf, size_t len);
/* The same without numbers, for kernels that cannot format an extack. */
const char *arb_reason_text(enum arb_reason code);
/* @bytes_per_s as tc prints a rate ("9.08Mbit"); returns @buf. */
char *arb_fmt_rate(char *buf, size_t len, u64 bytes_per_s);

struct arb_params {
	u64 rate;		/* C: link/qdisc rate, bytes/s, 1..2^48 */
	u64 strict_ceil;	/* strict class ceil, bytes/s, < rate */
	u32 strict_burst;	/* strict class burst, bytes */
	u32 mtu;		/* largest packet, bytes, 64..1048576 */
	u8 maxweight;		/* per-slot weight cap, 1..255 */
	u8 highlimit;		/* IBA VLHighLimit, 4096-byte units */
};

int arb_params_check(const struct arb_params *p);
u64 arb_high_capacity(const struct arb_params *p);
u32 arb_weight_units(const struct arb_params *p, u64 rate);
u64 arb_weight_rate(const struct arb_params *p, u32 units);
u64 arb_muldiv(u64 a, u64 b, u64 c, bool up);
u32 arb_weight_eff(u32 w, unsigned int n, unsigned int maxweight);
u8 arb_slot_weight(u32 w, unsigned int n, unsigned int k,
		   unsigned int maxweight);
u64 arb_bound_ns(const struct arb_params *p, unsigned int d, u32 wmin);
u64 arb_unclassified_bound_ns(const struct arb_params *p);

/* How a rate (and latency or distance) spreads over the HIGH table. */
struct arb_spread {
	u32 w;			/* weight units from the rate */
	u32 w_eff;		/* units reserved: max(w, n) */
	unsigned int distance;	/* power of two */
	unsigned int n;		/* slots: 64 / distance */
	u64 bound_ns;		/* guaranteed head-of-line wait bound */
};

int arb_spread_for_rate(const struct arb_params *p, u64 rate, u64 latency_ns,
			unsigned int distance, struct arb_spread *sp,
			struct arb_reject *rj);

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

/* Swaps of two physical slots (class, weight, credit), in order. */
struct arb_moves {
	unsigned int n;
	struct arb_move {
		u8 a;
		u8 b;
	} m[ARB_MAX_MOVES];
};

void arb_alloc_init(struct arb_alloc *a, unsigned int maxweight);
int arb_alloc_insert(struct arb_alloc *a, unsigned int cls, unsigned int d,
		     u32 w, u8 *set, struct arb_reject *rj);
int arb_alloc_release(struct arb_alloc *a, unsigned int cls,
		      struct arb_moves *mv, struct arb_reject *rj);
int arb_alloc_change(struct arb_alloc *a, unsigned int cls, unsigned int d,
		     u32 w, struct arb_moves *mv, struct arb_reject *rj);
u8 arb_alloc_slot_weight(const struct arb_alloc *a, unsigned int s);
u64 arb_alloc_current_bound_ns(const struct arb_alloc *a,
			       const struct arb_params *p, unsigned int cls);

static inline unsigned int arb_alloc_free_slots(const struct arb_alloc *a)
{
	return hweight64(a->free);
}

static inline bool arb_alloc_has(const struct arb_alloc *a, unsigned int cls)
{
	return cls < ARB_MAX_CLASSES && a->cls[cls].level != ARB_NO_CLASS;
}

static inline u8 arb_alloc_slot_owner(const struct arb_alloc *a,
				      unsigned int s)
{
	return a->owner[arb_rev6(s & (ARB_SLOTS - 1))];
}

/* Admission: a class's request planned on copies, then committed. */

/* A class's request as given by the user (0 = not given). */
struct arb_resv {
	u64	rate;		/* bytes/s, HIGH table */
	u64	latency;	/* ns */
	u32	distance;	/* as given, before rounding */
	u32	share;		/* LOW table weight units */
};

/* A request that moves tables drops what applied only to the old one. */
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

u32 arb_strict_burst(u64 ceil, u32 mtu, u32 cburst);
u32 arb_follow_mtu(u32 frame, u32 gso_max_size, u32 hard_hdr, u64 capacity);
void arb_admit_params(u64 capacity, u32 mtu, u8 maxweight, u8 highlimit,
		      u64 strict_ceil, u32 strict_cburst,
		      struct arb_params *p);
int arb_admit_prepare(const struct arb_alloc alloc[ARB_NTABLES],
		      const struct arb_params *p, u8 maxweight,
		      unsigned int idx, u8 old_table,
		      const struct arb_resv *resv, struct arb_admission *adm,
		      char *why, size_t len);
void arb_admit_commit(struct arb_sched *arb,
		      struct arb_alloc alloc[ARB_NTABLES], unsigned int idx,
		      const struct arb_admission *adm,
		      void (*on_swap)(void *ctx, unsigned int t, u8 a, u8 b),
		      void *ctx);

#endif /* _ARBTABLE_CORE_H */
