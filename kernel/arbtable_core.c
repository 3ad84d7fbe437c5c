// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sch_arbtable core: the arbiter, the allocator and admission.
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
 *
 * Arbiter. Two tables, HIGH and LOW, of 64 (class, weight) slots. A slot
 * may send while its credit is positive; a packet costs its length and may
 * drive the credit negative. In deficit mode a visit starts with
 * weight * 64 plus the balance carried from the slot's last visit, which
 * is never positive: overshoot is debt, a positive rest is dropped when
 * the class stops being eligible ([BXI] 3.3, Algorithm 2); in iba mode
 * overshoot is forgiven. HIGH may send while its byte counter is not
 * negative; the packet that drives it negative is sent, then LOW is owed
 * one packet ([IBA] HighPriCounter, VLHighLimit; 255 is unlimited). The
 * slot being visited keeps its credit while the other table runs.
 *
 * Allocator. Slots carry labels by 6-bit bit reversal; the slots of
 * distance d = 2^i are the label sets E_{i,j} = [j, j + 64/d), a buddy
 * tree of 7 levels whose sets hold 64/d slots exactly d apart ([FILL]
 * 7.3). A free set whose brother is not free is singular; a table with
 * at most one singular set per level is normalized, and then admits every
 * request whose slots fit in the free ones ([FILL] Theorems 3, 4). Of the
 * management models of [EVAL] 5.3.4, the cheapest: best-fit ("smart")
 * insertion, which keeps the table normalized ([EVAL] 4.4, 6), and
 * defragmentation after a release, never reordering.
 */
#include "arbtable_core.h"

void arb_init(struct arb_sched *s, u8 highlimit, u8 accounting)
{
	memset(s, 0, sizeof(*s));
	s->strict = ARB_NO_CLASS;
	s->highlimit = highlimit;
	s->accounting = accounting;
	s->hp_counter = arb_hp_limit(s);
}

/*
 * Forget every visit in progress: no slot keeps a credit or a debt, both
 * tables start at slot 0, the high table's limit is whole and no low turn
 * is owed. The tables and the eligible classes stay.
 */
void arb_reset_visits(struct arb_sched *s)
{
	unsigned int t;

	for (t = 0; t < ARB_NTABLES; t++) {
		struct arb_table *tb = &s->tbl[t];

		memset(tb->credit, 0, sizeof(tb->credit));
		tb->cur = 0;
		tb->in_visit = false;
	}
	s->hp_counter = arb_hp_limit(s);
	s->low_turn = false;
	s->slotless_cur = 0;
	s->uncl_turn = false;
}

void arb_set_highlimit(struct arb_sched *s, u8 highlimit)
{
	s->highlimit = highlimit;
	s->hp_counter = arb_hp_limit(s);
	s->low_turn = false;
}

void arb_set_accounting(struct arb_sched *s, u8 accounting)
{
	unsigned int t;

	if (s->accounting == accounting)
		return;
	s->accounting = accounting;
	/* carried balances mean nothing across modes */
	for (t = 0; t < ARB_NTABLES; t++) {
		memset(s->tbl[t].credit, 0, sizeof(s->tbl[t].credit));
		s->tbl[t].in_visit = false;
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

	if (cls == ARB_NO_CLASS || cls >= ARB_MAX_CLASSES)
		weight = 0;
	if (tb->weight[slot])
		s->cls_slots[t][tb->cls[slot]] &= ~bit;
	/* a new occupant starts from zero */
	if (!weight || tb->cls[slot] != cls) {
		tb->credit[slot] = 0;
		if (tb->cur == slot)
			tb->in_visit = false;
	}
	tb->weight[slot] = weight;
	tb->recip[slot] = arb_weight_recip(weight);
	tb->cls[slot] = weight ? cls : ARB_NO_CLASS;
	if (weight)
		s->cls_slots[t][cls] |= bit;
	arb_slotted_update(s, old);
	arb_slotted_update(s, tb->cls[slot]);
	arb_slot_mask_update(s, t, slot);
}

/* Exchange two slots with their credits: a class keeps its balance. */
void arb_swap_slots(struct arb_sched *s, unsigned int t, unsigned int a,
		    unsigned int b)
{
	struct arb_table *tb = &s->tbl[t];
	u64 ba = BIT_ULL(a), bb = BIT_ULL(b);

	if (a == b)
		return;
	if (tb->weight[a])
		s->cls_slots[t][tb->cls[a]] &= ~ba;
	if (tb->weight[b])
		s->cls_slots[t][tb->cls[b]] &= ~bb;
	swap(tb->cls[a], tb->cls[b]);
	swap(tb->weight[a], tb->weight[b]);
	swap(tb->credit[a], tb->credit[b]);
	swap(tb->recip[a], tb->recip[b]);
	if (tb->weight[a])
		s->cls_slots[t][tb->cls[a]] |= ba;
	if (tb->weight[b])
		s->cls_slots[t][tb->cls[b]] |= bb;
	/* the visit belongs to the occupant, who moved: close it there */
	if (tb->in_visit && (tb->cur == a || tb->cur == b)) {
		arb_close_credit(s, &tb->credit[tb->cur == a ? b : a]);
		tb->in_visit = false;
	}
	arb_slot_mask_update(s, t, a);
	arb_slot_mask_update(s, t, b);
}

/*
 * arb_table_pick() after a round from @first in which every eligible slot
 * paid its quantum Q_p and stayed in debt D_p: slot p gets out on visit
 * floor(D_p / Q_p) + 1, so the r = min floor(D_p / Q_p) rounds that only
 * pay quanta are paid at once, then the last one is walked. Returns the
 * slot that gets out; out of line, as it is rare.
 */
noinline unsigned int arb_table_skip_rounds(struct arb_sched *s,
					    unsigned int t, unsigned int first)
{
	struct arb_table *tb = &s->tbl[t];
	u64 m = tb->eligible;
	/* bit b of @ahead is slot (first + b) % 64: the walk's order */
	u64 ahead = ror64(m, first);
	unsigned int i, stop = ARB_SLOTS;
	u32 r, x, q;
	s32 quantum, credit;
	u64 w;

	while (stop == ARB_SLOTS) {
		r = ARB_RECIP_MAX_X;
		for (w = m; w; w &= w - 1) {
			i = __ffs64(w);
			ARB_WALK_STEP();
			x = -(u32)tb->credit[i] >> 6;	/* D_p / 64 */
			if (x > ARB_RECIP_MAX_X)
				x = ARB_RECIP_MAX_X;
			q = arb_recip_div(x, tb->recip[i]);
			if (q < r)
				r = q;
		}
		for (w = ahead; w; w &= w - 1) {
			i = (__ffs64(w) + first) & (ARB_SLOTS - 1);
			ARB_WALK_STEP();
			/* r * quantum <= D_p: no overflow, still <= 0 */
			quantum = (s32)tb->weight[i] * ARB_WEIGHT_UNIT;
			credit = tb->credit[i] + (s32)r * quantum;
			if (stop == ARB_SLOTS) {
				credit += quantum;
				if (credit > 0)
					stop = i;
			}
			tb->credit[i] = credit;
		}
	}
	return stop;
}

void arb_set_strict(struct arb_sched *s, u8 cls)
{
	s->strict = cls;
}

/* Rare, so out of line; returns the class so the pick stays in registers. */
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

/* Messages */

/*
 * @v as tc prints it, truncated to three decimals ("9.765Gbit", "2.42ms"),
 * or rounded up to them with @up. At most 16 characters for any u64.
 */
static char *arb_fmt_unit(char *buf, size_t len, u64 v,
			  const char *const *unit, unsigned int nunit, bool up)
{
	u64 div = 1, ip, rest;
	unsigned int i = 0, digits = 3;
	u32 frac;

	while (i + 1 < nunit && v >= div * 1000) {
		div *= 1000;
		i++;
	}
	ip = div64_u64(v, div);
	rest = (v - ip * div) * 1000;	/* below 10^15: div is at most 10^12 */
	frac = (u32)div64_u64(rest, div);
	if (up && (u64)frac * div != rest && ++frac == 1000) {
		ip++;
		frac = 0;
	}
	if (!frac) {
		scnprintf(buf, len, "%llu%s", ip, unit[i]);
		return buf;
	}
	while (!(frac % 10)) {
		frac /= 10;
		digits--;
	}
	scnprintf(buf, len, "%llu.%0*u%s", ip, digits, frac, unit[i]);
	return buf;
}

static const char *const arb_rate_unit[] = {
	"bit", "Kbit", "Mbit", "Gbit", "Tbit"
};

static const char *const arb_time_unit[] = { "ns", "us", "ms", "s" };

char *arb_fmt_rate(char *buf, size_t len, u64 bytes_per_s)
{
	if (bytes_per_s > U64_MAX / 8) {
		scnprintf(buf, len, "%lluB/s", bytes_per_s);
		return buf;
	}
	return arb_fmt_unit(buf, len, bytes_per_s * 8, arb_rate_unit,
			    ARRAY_SIZE(arb_rate_unit), false);
}

/*
 * Two different values compared: where tc would print them alike, the
 * larger is rounded up, so they read as different and stay as short (an
 * exact base unit took up to 20 digits each, beyond an extack's 80 bytes).
 */
static void arb_fmt_pair(char *a, char *b, size_t len, u64 va, u64 vb,
			 const char *const *unit, unsigned int nunit)
{
	arb_fmt_unit(a, len, va, unit, nunit, false);
	arb_fmt_unit(b, len, vb, unit, nunit, false);
	if (!strcmp(a, b) && va != vb) {
		if (va > vb)
			arb_fmt_unit(a, len, va, unit, nunit, true);
		else
			arb_fmt_unit(b, len, vb, unit, nunit, true);
	}
}

static const char *const arb_reason_texts[] = {
	[ARB_R_OK] = "ok",
	[ARB_R_BAD_PARAMS] = "invalid parameters (rate, strict ceil, mtu or maxweight)",
	[ARB_R_BAD_DISTANCE] = "distance invalid: must be 1..64",
	[ARB_R_BAD_CLASS] = "class index out of range (at most 64 classes)",
	[ARB_R_RATE_ZERO] = "rate 0: a guaranteed class needs a rate above 0",
	[ARB_R_RATE_ABOVE_CAP] = "rate above the guaranteed high-table rate",
	[ARB_R_LATENCY_LOW] = "latency below the best possible bound",
	[ARB_R_WEIGHT] = "needs more weight units than the slots at its distance hold",
	[ARB_R_NO_SLOTS] = "needs more slots at its distance than the table has free",
	[ARB_R_CAPACITY] = "needs more weight units than the table has free",
	[ARB_R_EXISTS] = "class already admitted",
	[ARB_R_UNKNOWN] = "unknown class",
	[ARB_R_SHARE_SPREAD] = "share cannot be spread over its slots at maxweight",
};

const char *arb_reason_text(enum arb_reason code)
{
	if ((unsigned int)code >= ARRAY_SIZE(arb_reason_texts))
		return "rejected";
	return arb_reason_texts[code];
}

size_t arb_reject_format(const struct arb_reject *r, char *buf, size_t len)
{
	char a[24], b[24];

	switch (r->code) {
	case ARB_R_BAD_PARAMS:
		return scnprintf(buf, len, "invalid: rate 1..2^48 B/s above strict ceil, mtu 64..1048576, maxweight 1..255");
	case ARB_R_BAD_DISTANCE:
		return scnprintf(buf, len, "distance %u invalid: must be 1..64",
				 r->distance);
	case ARB_R_RATE_ABOVE_CAP:
		arb_fmt_pair(a, b, sizeof(a), r->rate * 8, r->cap_rate * 8,
			     arb_rate_unit, ARRAY_SIZE(arb_rate_unit));
		return scnprintf(buf, len, "rate %s above the guaranteed high-table rate %s",
				 a, b);
	case ARB_R_LATENCY_LOW:
		arb_fmt_pair(a, b, sizeof(a), r->latency_ns, r->best_ns,
			     arb_time_unit, ARRAY_SIZE(arb_time_unit));
		if (!r->distance)
			return scnprintf(buf, len, "latency %s below the best possible bound %s",
					 a, b);
		return scnprintf(buf, len, "latency %s below the best possible bound %s at distance <= %u",
				 a, b, r->distance);
	case ARB_R_WEIGHT:
		return scnprintf(buf, len, "needs %u weight units, %u slots at distance %u hold at most %u",
				 r->weight, r->need_slots, r->distance,
				 r->capacity);
	case ARB_R_NO_SLOTS:
		if (!r->free_slots)
			return scnprintf(buf, len, "needs %u slots at distance %u, 0 free; table full",
					 r->need_slots, r->distance);
		if (r->fit_distance)
			return scnprintf(buf, len, "needs %u slots at distance %u, %u free; largest admissible distance %u",
					 r->need_slots, r->distance,
					 r->free_slots, r->fit_distance);
		return scnprintf(buf, len, "needs %u slots at distance %u, %u free; no distance fits",
				 r->need_slots, r->distance, r->free_slots);
	case ARB_R_CAPACITY:
		return scnprintf(buf, len, "needs %u weight units, %u of the table's capacity free",
				 r->weight, r->capacity);
	case ARB_R_SHARE_SPREAD:
		return scnprintf(buf, len, "share %u cannot be spread over %u slots of at most weight %u",
				 r->share, r->need_slots, r->weight);
	default:
		return scnprintf(buf, len, "%s", arb_reason_text(r->code));
	}
}

static void arb_rj(struct arb_reject *rj, enum arb_reason code)
{
	memset(rj, 0, sizeof(*rj));
	rj->code = code;
}

/* @d rounded down to a power of two, or 0 and ARB_R_BAD_DISTANCE. */
static unsigned int arb_check_distance(unsigned int d, struct arb_reject *rj)
{
	unsigned int rd = arb_round_distance(d);

	if (!rd) {
		arb_rj(rj, ARB_R_BAD_DISTANCE);
		rj->distance = d;
	}
	return rd;
}

/* Arithmetic */

#define ARB_MIN_PKT		64	/* H at highlimit 0: one packet */

/*
 * a * b / c rounded up or down; ~0 where x86's divq would trap (c is 0 or
 * the quotient needs more than 64 bits). The remainder fits in 64 bits.
 */
u64 arb_muldiv(u64 a, u64 b, u64 c, bool up)
{
	u64 q;

	if (!c || mul_u64_u64_shr(a, b, 64) >= c)
		return ~0ULL;
	q = mul_u64_u64_div_u64(a, b, c);
	if (up && a * b - q * c)
		return q == ~0ULL ? q : q + 1;
	return q;
}

int arb_params_check(const struct arb_params *p)
{
	if (!p->rate || p->rate > ARB_RATE_MAX || p->strict_ceil >= p->rate)
		return -EINVAL;
	if (p->mtu < ARB_MTU_MIN || p->mtu > ARB_MTU_MAX)
		return -EINVAL;
	if (!p->maxweight)
		return -EINVAL;
	return 0;
}

/* H: what HIGH sends at least before LOW's turn (one packet at 0) */
static u64 arb_highlimit_bytes(const struct arb_params *p)
{
	if (p->highlimit)
		return (u64)p->highlimit * ARB_HIGHLIMIT_UNIT;
	return ARB_MIN_PKT;
}

/*
 * C_high, the guaranteed rate of HIGH: X = C - strict_ceil, less what LOW
 * takes when highlimit is finite (one MTU per H bytes): X - X*MTU/(H+MTU).
 */
u64 arb_high_capacity(const struct arb_params *p)
{
	u64 x, h;

	if (arb_params_check(p))
		return 0;
	x = p->rate - p->strict_ceil;
	if (p->highlimit == ARB_HIGHLIMIT_INF)
		return x;
	h = arb_highlimit_bytes(p);
	return x - arb_muldiv(x, p->mtu, h + p->mtu, true);
}

/* W = ceil(R * 64 * maxweight / C_high) ([FILL] 5.1.1); 0 if R won't fit */
u32 arb_weight_units(const struct arb_params *p, u64 rate)
{
	u64 ch = arb_high_capacity(p);

	if (!rate || !ch || rate > ch)
		return 0;
	return (u32)arb_muldiv(rate, (u64)ARB_SLOTS * p->maxweight, ch, true);
}

/* The rate @units guarantee, the inverse of arb_weight_units(). */
u64 arb_weight_rate(const struct arb_params *p, u32 units)
{
	u64 ch = arb_high_capacity(p);

	if (!ch)
		return 0;
	return arb_muldiv(ch, units, (u64)ARB_SLOTS * p->maxweight, false);
}

/* Units reserved on @n slots: each needs weight >= 1; 0 if W cannot fit. */
u32 arb_weight_eff(u32 w, unsigned int n, unsigned int maxweight)
{
	if (w < n)
		w = n;
	return w > n * maxweight ? 0 : w;
}

/*
 * Weight of the k-th of n slots holding W units: the first takes the
 * remainder up to maxweight ([FILL] 7.2 hyp. 3), the next ones any excess.
 */
u8 arb_slot_weight(u32 w, unsigned int n, unsigned int k,
		   unsigned int maxweight)
{
	u32 base, first, excess;

	if (!n || k >= n)
		return 0;
	base = w / n;
	first = w - base * (n - 1);
	if (first > maxweight)
		first = maxweight;
	excess = w - base * (n - 1) - first;
	if (k == 0)
		return (u8)first;
	return (u8)(base + (k - 1 < excess ? 1 : 0));
}

/*
 * The bound after B_high bytes of other HIGH slots: plus an MTU of LOW per
 * H, one packet in flight and the strict burst, at C - strict_ceil.
 */
static u64 arb_bound_bytes(const struct arb_params *p, u64 b_high)
{
	u64 b = b_high + p->mtu + p->strict_burst;

	if (p->highlimit != ARB_HIGHLIMIT_INF)
		b += (div64_u64(b_high, arb_highlimit_bytes(p)) + 1) * p->mtu;
	return arb_muldiv(b, 1000000000ULL, p->rate - p->strict_ceil, true);
}

/* k: visits of a slot of weight wmin to pay a debt below one MTU */
static u64 arb_visits(const struct arb_params *p, u32 wmin)
{
	return DIV64_U64_ROUND_UP(p->mtu, (u64)ARB_WEIGHT_UNIT * wmin);
}

/*
 * Head-of-line wait bound of a HIGH class at distance d, smallest slot
 * weight wmin, whatever else is admitted: it may wait V = (k - 1) * n + 1
 * of its visits, each past d - 1 slots that send < 64 * maxweight + MTU.
 */
u64 arb_bound_ns(const struct arb_params *p, unsigned int d, u32 wmin)
{
	u64 n, k, v, per;

	if (arb_params_check(p) || !wmin || arb_round_distance(d) != d)
		return ARB_BOUND_NONE;
	n = ARB_SLOTS / d;
	k = arb_visits(p, wmin);
	v = (k - 1) * n + 1;
	per = (u64)ARB_WEIGHT_UNIT * p->maxweight + p->mtu;
	return arb_bound_bytes(p, v * (d - 1) * per);
}

/*
 * The unclassified queue's head-of-line bound: it takes every second
 * LOW-side opportunity while backlogged (arb_low_side_pick()), and HIGH
 * leaves one at least every H bytes, past which it sends one more packet.
 * So its head waits for at most one packet in flight, two runs of HIGH of
 * H + MTU, one LOW packet and the strict burst, at C - strict_ceil. None
 * when highlimit is unlimited: LOW then gets only what HIGH leaves.
 */
u64 arb_unclassified_bound_ns(const struct arb_params *p)
{
	u64 b;

	if (arb_params_check(p) || p->highlimit == ARB_HIGHLIMIT_INF)
		return ARB_BOUND_NONE;
	b = 2 * (arb_highlimit_bytes(p) + p->mtu) + 2 * (u64)p->mtu +
	    p->strict_burst;
	return arb_muldiv(b, 1000000000ULL, p->rate - p->strict_ceil, true);
}

/*
 * The largest distance <= dmax, and the smallest raise of the slot weight
 * there, that meet @lat: slots are the scarce resource, not units.
 */
static unsigned int arb_boost_for_latency(const struct arb_params *p,
					  u64 lat, u32 w, unsigned int dmax,
					  u32 *we)
{
	unsigned int d;

	for (d = dmax; d; d >>= 1) {
		unsigned int n = ARB_SLOTS / d;
		u32 base = arb_weight_eff(w, n, p->maxweight);
		u64 k;

		if (!base)
			continue;
		for (k = arb_visits(p, base / n); k >= 1; k--) {
			u32 wmin = (u32)DIV64_U64_ROUND_UP(p->mtu,
							   ARB_WEIGHT_UNIT * k);

			if (wmin > p->maxweight)
				break;
			if (wmin < base / n)
				wmin = base / n;
			if (arb_bound_ns(p, d, wmin) <= lat) {
				*we = wmin * n > base ? wmin * n : base;
				return d;
			}
		}
	}
	return 0;
}

/*
 * The largest power-of-two distance <= @distance (64 if 0) that holds the
 * rate's weight ([FILL] 5.1.3) and meets @latency_ns (if not 0).
 */
int arb_spread_for_rate(const struct arb_params *p, u64 rate, u64 latency_ns,
			unsigned int distance, struct arb_spread *sp,
			struct arb_reject *rj)
{
	unsigned int dmax = ARB_SLOTS, d, n;
	struct arb_reject none;
	u32 w, we = 0;
	u64 ch;

	if (!rj)
		rj = &none;
	if (arb_params_check(p)) {
		arb_rj(rj, ARB_R_BAD_PARAMS);
		return -EINVAL;
	}
	if (!rate) {
		arb_rj(rj, ARB_R_RATE_ZERO);
		return -EINVAL;
	}
	ch = arb_high_capacity(p);
	if (rate > ch) {
		arb_rj(rj, ARB_R_RATE_ABOVE_CAP);
		rj->rate = rate;
		rj->cap_rate = ch;
		return -EINVAL;
	}
	if (distance) {
		dmax = arb_check_distance(distance, rj);
		if (!dmax)
			return -EINVAL;
	}
	w = arb_weight_units(p, rate);
	for (d = dmax; !arb_weight_eff(w, ARB_SLOTS / d, p->maxweight); d >>= 1)
		;
	if (latency_ns) {
		d = arb_boost_for_latency(p, latency_ns, w, d, &we);
		if (!d) {
			arb_rj(rj, ARB_R_LATENCY_LOW);
			rj->distance = distance ? dmax : 0;
			rj->latency_ns = latency_ns;
			rj->best_ns = arb_bound_ns(p, 1, p->maxweight);
			return -EINVAL;
		}
	}
	n = ARB_SLOTS / d;
	if (!we)
		we = arb_weight_eff(w, n, p->maxweight);
	sp->w = w;
	sp->w_eff = we;
	sp->distance = d;
	sp->n = n;
	sp->bound_ns = arb_bound_ns(p, d, we / n);
	return 0;
}

/* Allocator */

#define ARB_LEVELS	7			/* distances 1, 2, 4, ..., 64 */
#define SET_SIZE(i)	(ARB_SLOTS >> (i))	/* labels in a set of level i */

/* Bits at the first label of every set of level i ([FILL] 7.3, I_i). */
static const u64 arb_align[ARB_LEVELS] = {
	0x0000000000000001ULL,
	0x0000000100000001ULL,
	0x0001000100010001ULL,
	0x0101010101010101ULL,
	0x1111111111111111ULL,
	0x5555555555555555ULL,
	0xffffffffffffffffULL,
};

static inline unsigned int arb_level(unsigned int d)
{
	return (unsigned int)__ffs64(d);
}

/* f[i] bit j set iff E_{i,j} is free ([FILL] Proposition 1). */
static void arb_free_levels(u64 free, u64 f[ARB_LEVELS])
{
	int i;

	f[ARB_LEVELS - 1] = free;
	for (i = ARB_LEVELS - 2; i >= 0; i--)
		f[i] = f[i + 1] & (f[i + 1] >> SET_SIZE(i + 1)) & arb_align[i];
}

/* Bit j set iff the brother of E_{i,j} is free ([FILL] Brother(p)). */
static u64 arb_brother_bits(u64 f, unsigned int i)
{
	u64 left = arb_align[i - 1];
	u64 right = arb_align[i] & ~left;

	return ((f >> SET_SIZE(i)) & left) | ((f << SET_SIZE(i)) & right);
}

/* Singular sets of level i >= 1 ([FILL] Definition 3). */
static u64 arb_singular(const u64 f[ARB_LEVELS], unsigned int i)
{
	return f[i] & ~arb_brother_bits(f[i], i);
}

static u64 arb_range(unsigned int first, unsigned int size)
{
	if (size >= 64)
		return ~0ULL;
	return ((1ULL << size) - 1) << first;
}

void arb_alloc_init(struct arb_alloc *a, unsigned int maxweight)
{
	memset(a, 0, sizeof(*a));
	a->free = ~0ULL;
	memset(a->owner, ARB_NO_CLASS, sizeof(a->owner));
	memset(a->cls, ARB_NO_CLASS, sizeof(a->cls));
	a->maxweight = (u8)(maxweight && maxweight <= 255 ? maxweight : 255);
}

u8 arb_alloc_slot_weight(const struct arb_alloc *a, unsigned int s)
{
	unsigned int c, i;

	s &= ARB_SLOTS - 1;
	c = a->owner[arb_rev6(s)];
	if (c == ARB_NO_CLASS)
		return 0;
	i = a->cls[c].level;
	return arb_slot_weight(a->cls[c].w, ARB_SLOTS >> i,
			       (s - arb_rev6(a->cls[c].set)) >> i,
			       a->maxweight);
}

/*
 * The smallest distance at which @w units would be admitted, 0 if none: on
 * a normalized table the free slot count alone decides ([FILL] Theorem 4).
 */
static unsigned int arb_fit_distance(const struct arb_alloc *a,
				     unsigned int free, u32 total_w, u32 w)
{
	unsigned int d;

	for (d = 1; d <= ARB_SLOTS; d <<= 1) {
		unsigned int n = ARB_SLOTS / d;

		if (n <= free && w <= n * a->maxweight &&
		    total_w + (w > n ? w : n) <= ARB_SLOTS * a->maxweight)
			return d;
	}
	return 0;
}

static int arb_check_weight(const struct arb_alloc *a, u32 w, unsigned int n,
			    unsigned int d, struct arb_reject *rj)
{
	if (w >= n && w <= n * a->maxweight)
		return 0;
	arb_rj(rj, ARB_R_WEIGHT);
	rj->weight = w;
	rj->need_slots = n;
	rj->distance = d;
	rj->capacity = n * a->maxweight;
	return -EINVAL;
}

static int arb_check_capacity(const struct arb_alloc *a, u32 total_w, u32 w,
			      struct arb_reject *rj)
{
	u32 cap = ARB_SLOTS * a->maxweight;

	if (total_w + w <= cap)
		return 0;
	arb_rj(rj, ARB_R_CAPACITY);
	rj->weight = w;
	rj->capacity = cap - total_w;
	return -ENOSPC;
}

static int arb_no_slots(const struct arb_alloc *a, unsigned int n,
			unsigned int d, unsigned int free, u32 total_w, u32 w,
			struct arb_reject *rj)
{
	arb_rj(rj, ARB_R_NO_SLOTS);
	rj->need_slots = n;
	rj->distance = d;
	rj->free_slots = free;
	rj->weight = w;
	rj->fit_distance = arb_fit_distance(a, free, total_w, w);
	return -ENOSPC;
}

static int arb_check_admitted(const struct arb_alloc *a, unsigned int cls,
			      struct arb_reject *rj)
{
	if (cls >= ARB_MAX_CLASSES) {
		arb_rj(rj, ARB_R_BAD_CLASS);
		return -EINVAL;
	}
	if (!arb_alloc_has(a, cls)) {
		arb_rj(rj, ARB_R_UNKNOWN);
		return -ENOENT;
	}
	return 0;
}

/*
 * Best fit: the singular set of the deepest level <= @d's ([EVAL] 4.4).
 * Deeper levels had none, so the table stays normalized ([FILL] Th. 2).
 */
int arb_alloc_insert(struct arb_alloc *a, unsigned int cls, unsigned int d,
		     u32 w, u8 *set, struct arb_reject *rj)
{
	unsigned int rd, i, n, k, size;
	u64 f[ARB_LEVELS], cand = 0;
	struct arb_reject none;
	int lvl, err;

	if (!rj)
		rj = &none;
	if (cls >= ARB_MAX_CLASSES) {
		arb_rj(rj, ARB_R_BAD_CLASS);
		return -EINVAL;
	}
	rd = arb_check_distance(d, rj);
	if (!rd)
		return -EINVAL;
	if (arb_alloc_has(a, cls)) {
		arb_rj(rj, ARB_R_EXISTS);
		return -EEXIST;
	}
	i = arb_level(rd);
	n = ARB_SLOTS >> i;
	if (!w)
		w = n;
	err = arb_check_weight(a, w, n, rd, rj);
	if (err)
		return err;
	arb_free_levels(a->free, f);
	for (lvl = (int)i; lvl >= 0; lvl--) {
		cand = lvl ? arb_singular(f, lvl) : f[0];
		if (cand)
			break;
	}
	if (!cand)
		return arb_no_slots(a, n, rd, arb_alloc_free_slots(a),
				    a->total_w, w, rj);
	/* implied by the slots, kept as a cheap guard */
	err = arb_check_capacity(a, a->total_w, w, rj);
	if (err)
		return err;
	k = (unsigned int)__ffs64(cand);
	size = SET_SIZE(i);
	a->free &= ~arb_range(k, size);
	memset(&a->owner[k], (int)cls, size);
	a->cls[cls].level = (u8)i;
	a->cls[cls].set = (u8)k;
	a->cls[cls].w = (u16)w;
	a->total_w += w;
	a->nclasses++;
	if (set)
		*set = (u8)k;
	arb_rj(rj, ARB_R_OK);
	return 0;
}

/*
 * Exchange the sets of level i at labels x and y ([FILL] Proposition 5):
 * label x+o <-> y+o keeps every class in a set of its own level.
 */
static void arb_swap_sets(struct arb_alloc *a, unsigned int i,
			  unsigned int x, unsigned int y, struct arb_moves *mv)
{
	unsigned int o, size = SET_SIZE(i);

	for (o = 0; o < size; o++) {
		unsigned int lx = x + o, ly = y + o;
		u8 cx = a->owner[lx], cy = a->owner[ly];
		u64 bx = (a->free >> lx) & 1, by = (a->free >> ly) & 1;

		if (cx == ARB_NO_CLASS && cy == ARB_NO_CLASS)
			continue;
		if (cx != ARB_NO_CLASS && a->cls[cx].set == lx)
			a->cls[cx].set = (u8)ly;
		if (cy != ARB_NO_CLASS && a->cls[cy].set == ly)
			a->cls[cy].set = (u8)lx;
		a->owner[lx] = cy;
		a->owner[ly] = cx;
		a->free &= ~(BIT_ULL(lx) | BIT_ULL(ly));
		a->free |= (by << lx) | (bx << ly);
		if (mv && mv->n < ARB_MAX_MOVES) {
			mv->m[mv->n].a = (u8)arb_rev6(lx);
			mv->m[mv->n].b = (u8)arb_rev6(ly);
			mv->n++;
		}
	}
}

/*
 * [FILL] 9.1 Figure 14, [EVAL] 4.3.3: from the deepest level up, while a
 * level has two singular sets, swap the left one with the occupied brother
 * of the right one; the free pair merges into their parent, on the right.
 */
static void arb_defragment(struct arb_alloc *a, struct arb_moves *mv)
{
	u64 f[ARB_LEVELS], sing;
	int i;

	for (i = ARB_LEVELS - 1; i >= 1; i--) {
		arb_free_levels(a->free, f);
		sing = arb_singular(f, i);
		while (hweight64(sing) >= 2) {
			unsigned int left = (unsigned int)__ffs64(sing);
			unsigned int right = (unsigned int)
					     __ffs64(sing & (sing - 1));

			arb_swap_sets(a, i, left, right ^ SET_SIZE(i), mv);
			arb_free_levels(a->free, f);
			sing = arb_singular(f, i);
		}
	}
}

/* Release @cls and defragment; *mv (may be NULL) gets the swaps. */
int arb_alloc_release(struct arb_alloc *a, unsigned int cls,
		      struct arb_moves *mv, struct arb_reject *rj)
{
	unsigned int size, first;
	struct arb_reject none;
	int err;

	if (!rj)
		rj = &none;
	if (mv)
		mv->n = 0;
	err = arb_check_admitted(a, cls, rj);
	if (err)
		return err;
	size = SET_SIZE(a->cls[cls].level);
	first = a->cls[cls].set;
	a->free |= arb_range(first, size);
	memset(&a->owner[first], ARB_NO_CLASS, size);
	a->total_w -= a->cls[cls].w;
	a->nclasses--;
	memset(&a->cls[cls], ARB_NO_CLASS, sizeof(a->cls[cls]));
	arb_defragment(a, mv);
	arb_rj(rj, ARB_R_OK);
	return 0;
}

/*
 * A new distance is a release and an insert, decided from counts first
 * (by [FILL] Theorem 4 they suffice), so a refusal leaves *a untouched.
 */
int arb_alloc_change(struct arb_alloc *a, unsigned int cls, unsigned int d,
		     u32 w, struct arb_moves *mv, struct arb_reject *rj)
{
	unsigned int rd, n, free;
	struct arb_reject none;
	u32 total_w;
	int err;

	if (!rj)
		rj = &none;
	if (mv)
		mv->n = 0;
	err = arb_check_admitted(a, cls, rj);
	if (err)
		return err;
	rd = arb_check_distance(d, rj);
	if (!rd)
		return -EINVAL;
	n = ARB_SLOTS / rd;
	if (!w)
		w = n;
	err = arb_check_weight(a, w, n, rd, rj);
	if (err)
		return err;
	total_w = a->total_w - a->cls[cls].w;
	if (rd == 1U << a->cls[cls].level) {
		err = arb_check_capacity(a, total_w, w, rj);
		if (err)
			return err;
		a->total_w = total_w + w;
		a->cls[cls].w = (u16)w;
		arb_rj(rj, ARB_R_OK);
		return 0;
	}
	free = arb_alloc_free_slots(a) + SET_SIZE(a->cls[cls].level);
	if (n > free)
		return arb_no_slots(a, n, rd, free, total_w, w, rj);
	err = arb_check_capacity(a, total_w, w, rj);
	if (err)
		return err;
	arb_alloc_release(a, cls, mv, NULL);
	err = arb_alloc_insert(a, cls, rd, w, NULL, rj);
	WARN_ON_ONCE(err);
	return err;
}

/*
 * arb_bound_ns() with the actual neighbours (64 * weight + MTU each):
 * B_high = (k - 1) * (all other slots) + the largest gap.
 */
u64 arb_alloc_current_bound_ns(const struct arb_alloc *a,
			       const struct arb_params *p, unsigned int cls)
{
	unsigned int i, d, n, s0, m, t;
	u64 cycle = 0, gap_max = 0, k;

	if (!arb_alloc_has(a, cls) || arb_params_check(p))
		return ARB_BOUND_NONE;
	i = a->cls[cls].level;
	d = 1U << i;
	n = ARB_SLOTS >> i;
	s0 = arb_rev6(a->cls[cls].set);
	for (m = 0; m < n; m++) {
		u64 gap = 0;

		for (t = 1; t < d; t++) {
			unsigned int s = (s0 + m * d + t) & (ARB_SLOTS - 1);
			u8 w = arb_alloc_slot_weight(a, s);

			if (w)
				gap += (u64)ARB_WEIGHT_UNIT * w + p->mtu;
		}
		cycle += gap;
		if (gap > gap_max)
			gap_max = gap;
	}
	k = arb_visits(p, a->cls[cls].w / n);
	return arb_bound_bytes(p, (k - 1) * cycle + gap_max);
}

/* Admission */

/*
 * From 1 Gbit/s a pass per segment costs more CPU than the rate leaves:
 * GSO skbs stay whole, the largest the device takes (BIG TCP's too).
 * qdisc_pkt_len() charges such an skb its headers again for each segment
 * after the first, so the mtu followed leaves ARB_GSO_SEG_HDR bytes of
 * headers for every ARB_GSO_MIN_MSS bytes of payload (13.4%): TCP over
 * IPv4 at its default MSS of 536, forwarded after GRO (66 bytes a segment
 * with timestamps, 70 VLAN-tagged), TCP over IPv6 at MSS 1220 (86), VXLAN
 * at a 1500-byte underlay's MSS (116 over IPv4, 156 over IPv6) fit. An
 * skb with more (a tunnel at MSS 536) is split into its segments; each
 * byte of room lengthens every bound by the time it takes to send.
 */
#define ARB_GSO_WHOLE_RATE	125000000ULL
#define ARB_GSO_MIN_MSS		536U
#define ARB_GSO_SEG_HDR		72U

/* The strict class's bucket plus the packet it may overshoot by. */
u32 arb_strict_burst(u64 ceil, u32 mtu, u32 cburst)
{
	/* saturates: it enters every HIGH bound */
	u64 b = arb_muldiv(ceil, ARB_MIN_BURST_NS, NSEC_PER_SEC, false);
	u64 lo = 2 * (u64)mtu;

	if (cburst)
		b = (u64)cburst + mtu;
	else
		b = (b > lo ? b : lo) + mtu;
	return b > 0xffffffffULL ? 0xffffffffU : (u32)b;
}

u32 arb_follow_mtu(u32 frame, u32 gso_max_size, u32 hard_hdr, u64 capacity)
{
	u64 mtu = frame;

	if (capacity >= ARB_GSO_WHOLE_RATE && gso_max_size) {
		/* 32-bit division: no libgcc helper on 32-bit builds */
		u32 segs = gso_max_size / ARB_GSO_MIN_MSS +
			   !!(gso_max_size % ARB_GSO_MIN_MSS);
		u64 gso = (u64)gso_max_size + hard_hdr +
			  (u64)segs * ARB_GSO_SEG_HDR;

		if (gso > mtu)
			mtu = gso;
	}
	if (mtu < ARB_MTU_MIN)
		return ARB_MTU_MIN;
	return mtu < ARB_MTU_MAX ? (u32)mtu : ARB_MTU_MAX;
}

void arb_admit_params(u64 capacity, u32 mtu, u8 maxweight, u8 highlimit,
		      u64 strict_ceil, u32 strict_cburst,
		      struct arb_params *p)
{
	memset(p, 0, sizeof(*p));
	p->rate = capacity;
	p->mtu = mtu;
	p->maxweight = maxweight;
	p->highlimit = highlimit;
	if (strict_ceil) {
		p->strict_ceil = strict_ceil;
		p->strict_burst = arb_strict_burst(strict_ceil, mtu,
						   strict_cburst);
	}
}

/* Table, distance and units @resv asks for. */
static int arb_resv_spread(const struct arb_params *p, u8 maxweight,
			   const struct arb_resv *resv,
			   struct arb_admission *adm, struct arb_reject *rj)
{
	struct arb_spread sp;
	unsigned int d, n;
	int err;

	if (resv->rate) {
		err = arb_spread_for_rate(p, resv->rate, resv->latency,
					  resv->distance, &sp, rj);
		if (err)
			return err;
		adm->new_table = ARB_HIGH;
		adm->distance = sp.distance;
		adm->weight = sp.w_eff;
		adm->bound_ns = sp.bound_ns;
		return 0;
	}
	if (resv->share) {
		/* spread as a rate's W, on one slot unless a distance is given */
		d = resv->distance ? arb_check_distance(resv->distance, rj) :
				     ARB_SLOTS;
		if (!d)
			return -EINVAL;
		n = ARB_SLOTS / d;
		adm->weight = arb_weight_eff(resv->share, n, maxweight);
		if (!adm->weight) {
			arb_rj(rj, ARB_R_SHARE_SPREAD);
			rj->share = resv->share;
			rj->need_slots = n;
			rj->weight = maxweight;
			return -EINVAL;
		}
		adm->new_table = ARB_LOW;
		adm->distance = d;
		adm->bound_ns = 0;
		return 0;
	}
	adm->new_table = ARB_NO_CLASS;
	return 0;
}

/* @resv (zero: a release) for class @idx, planned on copies of @alloc. */
int arb_admit_prepare(const struct arb_alloc alloc[ARB_NTABLES],
		      const struct arb_params *p, u8 maxweight,
		      unsigned int idx, u8 old_table,
		      const struct arb_resv *resv, struct arb_admission *adm,
		      char *why, size_t len)
{
	struct arb_reject rj;
	int err;

	memset(adm, 0, sizeof(*adm));
	memset(&rj, 0, sizeof(rj));
	memcpy(adm->alloc, alloc, sizeof(adm->alloc));
	adm->resv = *resv;
	adm->old_table = old_table;
	if (len)
		why[0] = '\0';

	err = arb_resv_spread(p, maxweight, resv, adm, &rj);
	if (err)
		goto out;
	if (old_table != ARB_NO_CLASS && old_table == adm->new_table) {
		err = arb_alloc_change(&adm->alloc[old_table], idx,
				       adm->distance, adm->weight, &adm->mv,
				       &rj);
	} else {
		if (old_table != ARB_NO_CLASS) {
			err = arb_alloc_release(&adm->alloc[old_table], idx,
						&adm->mv, &rj);
			if (err)
				goto out;
		}
		if (adm->new_table != ARB_NO_CLASS)
			err = arb_alloc_insert(&adm->alloc[adm->new_table],
					       idx, adm->distance, adm->weight,
					       NULL, &rj);
	}
out:
	if (err) {
		adm->reason = rj.code;
		arb_reject_format(&rj, why, len);
	}
	return err;
}

/* Cannot fail: the swaps move slots with their credits, no packet lost. */
void arb_admit_commit(struct arb_sched *arb,
		      struct arb_alloc alloc[ARB_NTABLES], unsigned int idx,
		      const struct arb_admission *adm,
		      void (*on_swap)(void *ctx, unsigned int t, u8 a, u8 b),
		      void *ctx)
{
	unsigned int i, s, t = adm->old_table;
	u64 m;

	if (t != ARB_NO_CLASS) {
		for (m = arb_class_slots(arb, t, idx); m; m &= m - 1)
			arb_set_slot(arb, t, __ffs64(m), ARB_NO_CLASS, 0);
		for (i = 0; i < adm->mv.n; i++) {
			arb_swap_slots(arb, t, adm->mv.m[i].a, adm->mv.m[i].b);
			if (on_swap)
				on_swap(ctx, t, adm->mv.m[i].a,
					adm->mv.m[i].b);
		}
	}
	memcpy(alloc, adm->alloc, sizeof(adm->alloc));
	for (t = 0; t < ARB_NTABLES; t++) {
		const struct arb_table *tb = &arb->tbl[t];

		for (s = 0; s < ARB_SLOTS; s++) {
			u8 owner = arb_alloc_slot_owner(&alloc[t], s);
			u8 w = owner == ARB_NO_CLASS ? 0 :
			       arb_alloc_slot_weight(&alloc[t], s);

			if (tb->weight[s] != w || (w && tb->cls[s] != owner))
				arb_set_slot(arb, t, s, owner, w);
		}
	}
}
