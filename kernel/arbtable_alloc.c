// SPDX-License-Identifier: GPL-2.0
/*
 * arbtable allocator core: see arbtable_alloc.h for the model, the
 * management model chosen and the formulas. Paper references:
 * [F] fill-in-arbitration-table.txt, [E] table-management-evaluation.txt.
 */
#include "arbtable_alloc.h"

/* Labels in a set of level i: 2^(6-i). */
#define SET_SIZE(i)	(ARB_SLOTS >> (i))

/* Bits at the first label of every set of level i ([F] 7.3, I_i). */
static const u64 arb_align[ARB_LEVELS] = {
	0x0000000000000001ULL,	/* level 0: E_{0,0} */
	0x0000000100000001ULL,
	0x0001000100010001ULL,
	0x0101010101010101ULL,
	0x1111111111111111ULL,
	0x5555555555555555ULL,
	0xffffffffffffffffULL,	/* level 6: single labels */
};

/* ---------------------------------------------------------------------- */
/* Free and singular sets, all levels at once, with bitmasks               */

/* f[i] bit j set iff E_{i,j} is free (Proposition 1: union of sons). */
static void arb_free_levels(u64 free, u64 f[ARB_LEVELS])
{
	int i;

	f[ARB_LEVELS - 1] = free;
	for (i = ARB_LEVELS - 2; i >= 0; i--)
		f[i] = f[i + 1] & (f[i + 1] >> SET_SIZE(i + 1)) & arb_align[i];
}

/* Bit j set iff the brother of E_{i,j} is free ([F] Brother(p)). */
static u64 arb_brother_bits(u64 f, unsigned int i)
{
	u64 left = arb_align[i - 1];
	u64 right = arb_align[i] & ~left;

	return ((f >> SET_SIZE(i)) & left) | ((f << SET_SIZE(i)) & right);
}

/* Singular sets of level i >= 1 (Definition 3). */
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

/*
 * @v in base units as tc prints it: the largest unit (steps of 1000) that
 * keeps an integer part, up to three decimals, trailing zeros dropped,
 * truncated as tc truncates ("9.765Gbit", "2.42ms", "64bit").
 */
static char *arb_fmt_unit(char *buf, size_t len, u64 v,
			  const char *const *unit, unsigned int nunit)
{
	u64 div = 1, ip;
	unsigned int i = 0, digits = 3;
	u32 frac;

	while (i + 1 < nunit && v >= div * 1000) {
		div *= 1000;
		i++;
	}
	ip = div64_u64(v, div);
	frac = (u32)div64_u64((v - ip * div) * 1000, div);
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

/*
 * Two values compared in a message, each as tc prints it, or both in the
 * base unit when they would print the same ("10Gbit above 10Gbit").
 */
static void arb_fmt_pair(char *a, char *b, size_t len, u64 va, u64 vb,
			 const char *const *unit, unsigned int nunit)
{
	arb_fmt_unit(a, len, va, unit, nunit);
	arb_fmt_unit(b, len, vb, unit, nunit);
	if (!strcmp(a, b)) {
		scnprintf(a, len, "%llu%s", va, unit[0]);
		scnprintf(b, len, "%llu%s", vb, unit[0]);
	}
}

size_t arb_reject_format(const struct arb_reject *r, char *buf, size_t len)
{
	char a[24], b[24];

	switch (r->code) {
	case ARB_R_OK:
		return scnprintf(buf, len, "ok");
	case ARB_R_BAD_PARAMS:
		return scnprintf(buf, len, "invalid parameters: rate 1..2^48 B/s, strict ceil below rate, mtu 64..65535, maxweight 1..255");
	case ARB_R_BAD_DISTANCE:
		return scnprintf(buf, len, "distance %u invalid: must be 1..64",
				 r->distance);
	case ARB_R_BAD_CLASS:
		return scnprintf(buf, len, "class index out of range (at most 64 classes)");
	case ARB_R_RATE_ZERO:
		return scnprintf(buf, len, "rate 0: a guaranteed class needs a rate above 0");
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
	case ARB_R_EXISTS:
		return scnprintf(buf, len, "class already admitted");
	case ARB_R_UNKNOWN:
		return scnprintf(buf, len, "unknown class");
	default:
		return scnprintf(buf, len, "rejected");
	}
}

static void arb_rj(struct arb_reject *rj, enum arb_reason code)
{
	if (!rj)
		return;
	memset(rj, 0, sizeof(*rj));
	rj->code = code;
}

/* ---------------------------------------------------------------------- */
/* Arithmetic                                                              */

/*
 * a * b / c rounded up (up) or down; ~0 when the quotient does not fit
 * in 64 bits or c is 0 (x86's divq, behind mul_u64_u64_div_u64(), traps
 * there instead). The remainder a * b - q * c is below c, so its low 64
 * bits are all of it.
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

static u64 arb_highlimit_bytes(const struct arb_params *p)
{
	if (p->highlimit)
		return (u64)p->highlimit * ARB_HIGHLIMIT_UNIT;
	return p->min_pkt ? p->min_pkt : ARB_MIN_PKT_DEFAULT;
}

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

u32 arb_weight_units(const struct arb_params *p, u64 rate)
{
	u64 ch = arb_high_capacity(p);

	if (!rate || !ch || rate > ch)
		return 0;
	/* [F] 5.1.1: weight from the bandwidth; W <= 64 * maxweight. */
	return (u32)arb_muldiv(rate, (u64)ARB_SLOTS * p->maxweight, ch, true);
}

u64 arb_weight_rate(const struct arb_params *p, u32 units)
{
	u64 ch = arb_high_capacity(p);

	if (!ch)
		return 0;
	/* the inverse of arb_weight_units(): what @units guarantee */
	return arb_muldiv(ch, units, (u64)ARB_SLOTS * p->maxweight, false);
}

u32 arb_weight_eff(u32 w, unsigned int n, unsigned int maxweight)
{
	if (w < n)
		w = n;
	return w > n * maxweight ? 0 : w;
}

u8 arb_slot_weight(u32 w, unsigned int n, unsigned int k,
		   unsigned int maxweight)
{
	u32 base, first, excess;

	if (!n || k >= n)
		return 0;
	base = w / n;
	/* First slot: base + remainder ([F] 7.2 hypothesis 3). */
	first = w - base * (n - 1);
	if (first > maxweight)
		first = maxweight;
	excess = w - base * (n - 1) - first;
	if (k == 0)
		return (u8)first;
	return (u8)(base + (k - 1 < excess ? 1 : 0));
}

/* Finish a bound from the HIGH bytes other slots may send (see header). */
static u64 arb_bound_bytes(const struct arb_params *p, u64 b_high)
{
	u64 b = b_high + p->mtu + p->strict_burst;

	if (p->highlimit != ARB_HIGHLIMIT_INF)
		b += (div64_u64(b_high, arb_highlimit_bytes(p)) + 1) * p->mtu;
	return arb_muldiv(b, 1000000000ULL, p->rate - p->strict_ceil, true);
}

/* Visits of one slot of weight wmin to pay a debt below one MTU. */
static u64 arb_visits(const struct arb_params *p, u32 wmin)
{
	return DIV64_U64_ROUND_UP(p->mtu, (u64)ARB_WEIGHT_UNIT * wmin);
}

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
 * With the rate's weight no distance meets the latency: find the largest
 * distance <= dmax where raising the smallest slot weight (fewer visits to
 * cover an MTU) does, and the smallest such raise. Returns the distance
 * and sets *we, or 0.
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

int arb_plan(const struct arb_params *p, u64 rate, u64 latency_ns,
	     unsigned int distance, struct arb_plan *pl, struct arb_reject *rj)
{
	unsigned int dmax = ARB_SLOTS, d, n;
	u32 w, we = 0;
	u64 ch;

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
		if (rj) {
			rj->rate = rate;
			rj->cap_rate = ch;
		}
		return -EINVAL;
	}
	if (distance) {
		dmax = arb_round_distance(distance);
		if (!dmax) {
			arb_rj(rj, ARB_R_BAD_DISTANCE);
			if (rj)
				rj->distance = distance;
			return -EINVAL;
		}
	}
	w = arb_weight_units(p, rate);
	/* Fewer slots than the weight needs: use a smaller distance. */
	for (d = dmax; !arb_weight_eff(w, ARB_SLOTS / d, p->maxweight); d >>= 1)
		;
	if (latency_ns) {
		unsigned int d0 = d;

		/*
		 * Largest distance first; at each, the rate's weight or
		 * the smallest raise of the slot weight that meets the
		 * latency: slots are the scarce resource, units are not.
		 */
		d = arb_boost_for_latency(p, latency_ns, w, d0, &we);
		if (!d) {
			arb_rj(rj, ARB_R_LATENCY_LOW);
			if (rj) {
				rj->distance = distance ? dmax : 0;
				rj->latency_ns = latency_ns;
				rj->best_ns = arb_bound_ns(p, 1, p->maxweight);
			}
			return -EINVAL;
		}
	}
	n = ARB_SLOTS / d;
	if (!we)
		we = arb_weight_eff(w, n, p->maxweight);
	pl->w = w;
	pl->w_eff = we;
	pl->distance = d;
	pl->n = n;
	pl->bound_ns = arb_bound_ns(p, d, we / n);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Allocator                                                               */

void arb_alloc_init(struct arb_alloc *a, unsigned int maxweight)
{
	memset(a, 0, sizeof(*a));
	a->free = ~0ULL;
	memset(a->owner, ARB_NO_CLASS, sizeof(a->owner));
	memset(a->cls, ARB_NO_CLASS, sizeof(a->cls));
	a->maxweight = (u8)(maxweight && maxweight <= 255 ? maxweight : 255);
}

unsigned int arb_alloc_distance(const struct arb_alloc *a, unsigned int cls)
{
	if (!arb_alloc_has(a, cls))
		return 0;
	return 1U << a->cls[cls].level;
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

/* Smallest distance whose slots and weight fit now (for the message). */
/*
 * The smallest distance at which @w units would be admitted on a table
 * with @free free slots and @total_w units reserved (Theorem 4: on a
 * normalized table the free slot count alone decides); 0 if none.
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

int arb_alloc_insert(struct arb_alloc *a, unsigned int cls, unsigned int d,
		     u32 w, u8 *set, struct arb_reject *rj)
{
	unsigned int rd = arb_round_distance(d), i, n, k, size;
	u64 f[ARB_LEVELS], cand = 0;
	u32 cap = ARB_SLOTS * a->maxweight;
	int lvl;

	if (cls >= ARB_MAX_CLASSES) {
		arb_rj(rj, ARB_R_BAD_CLASS);
		return -EINVAL;
	}
	if (!rd) {
		arb_rj(rj, ARB_R_BAD_DISTANCE);
		if (rj)
			rj->distance = d;
		return -EINVAL;
	}
	if (arb_alloc_has(a, cls)) {
		arb_rj(rj, ARB_R_EXISTS);
		return -EEXIST;
	}
	i = arb_level(rd);
	n = ARB_SLOTS >> i;
	if (!w)
		w = n;
	if (w < n || w > n * a->maxweight) {
		arb_rj(rj, ARB_R_WEIGHT);
		if (rj) {
			rj->weight = w;
			rj->need_slots = n;
			rj->distance = rd;
			rj->capacity = n * a->maxweight;
		}
		return -EINVAL;
	}

	/*
	 * Smart insertion ([E] 4.4, Figure 40): the singular set of the
	 * deepest level <= i, i.e. the smallest free set that fits (best
	 * fit); E_{0,0} counts when the whole table is free ([E] 4.2 note).
	 * Its leftmost level-i subset is E_{i,j}, j its first label. Levels
	 * below the chosen one had no singular set, so splitting it leaves
	 * at most one per level: the table stays normalized ([F] Th. 2).
	 */
	arb_free_levels(a->free, f);
	for (lvl = (int)i; lvl >= 0; lvl--) {
		cand = lvl ? arb_singular(f, lvl) : f[0];
		if (cand)
			break;
	}
	if (!cand) {
		arb_rj(rj, ARB_R_NO_SLOTS);
		if (rj) {
			rj->need_slots = n;
			rj->distance = rd;
			rj->free_slots = arb_alloc_free_slots(a);
			rj->weight = w;
			rj->fit_distance = arb_fit_distance(a, rj->free_slots,
							    a->total_w, w);
		}
		return -ENOSPC;
	}
	/*
	 * Implied by the slots (each class holds <= n * maxweight on its n
	 * slots), kept as a cheap guard.
	 */
	if (a->total_w + w > cap) {
		arb_rj(rj, ARB_R_CAPACITY);
		if (rj) {
			rj->weight = w;
			rj->capacity = cap - a->total_w;
		}
		return -ENOSPC;
	}
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

static void arb_add_move(struct arb_moves *mv, unsigned int x, unsigned int y)
{
	if (mv && mv->n < ARB_MAX_MOVES) {
		mv->m[mv->n].a = (u8)x;
		mv->m[mv->n].b = (u8)y;
		mv->n++;
	}
}

/*
 * Exchange the contents of the sets of level i starting at labels x and y
 * (Proposition 5): label x+o <-> y+o keeps every class inside a set of its
 * own level, so its slots stay exactly d apart.
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
		arb_add_move(mv, arb_rev6(lx), arb_rev6(ly));
	}
}

/*
 * Defragmentation ([F] 9.1 Figure 14, Theorem 6/7; [E] 4.3.3 Figure 24):
 * from the deepest level up, where a level holds two singular sets, swap
 * the left one with the occupied brother of the right one; the free pair
 * merges into their parent, the larger free set ending up on the right
 * ([E] 4.3.3), and the next level up is examined.
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

int arb_alloc_release(struct arb_alloc *a, unsigned int cls,
		      struct arb_moves *mv, struct arb_reject *rj)
{
	unsigned int size, first;

	if (mv)
		mv->n = 0;
	if (cls >= ARB_MAX_CLASSES) {
		arb_rj(rj, ARB_R_BAD_CLASS);
		return -EINVAL;
	}
	if (!arb_alloc_has(a, cls)) {
		arb_rj(rj, ARB_R_UNKNOWN);
		return -ENOENT;
	}
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

int arb_alloc_change(struct arb_alloc *a, unsigned int cls, unsigned int d,
		     u32 w, struct arb_moves *mv, struct arb_reject *rj)
{
	unsigned int rd = arb_round_distance(d), n, free;
	u32 total_w;
	int err;

	if (mv)
		mv->n = 0;
	if (cls >= ARB_MAX_CLASSES) {
		arb_rj(rj, ARB_R_BAD_CLASS);
		return -EINVAL;
	}
	if (!arb_alloc_has(a, cls)) {
		arb_rj(rj, ARB_R_UNKNOWN);
		return -ENOENT;
	}
	if (!rd) {
		arb_rj(rj, ARB_R_BAD_DISTANCE);
		if (rj)
			rj->distance = d;
		return -EINVAL;
	}
	n = ARB_SLOTS / rd;
	if (!w)
		w = n;
	if (rd == arb_alloc_distance(a, cls)) {
		u32 old = a->cls[cls].w;

		if (w < n || w > n * a->maxweight) {
			arb_rj(rj, ARB_R_WEIGHT);
			if (rj) {
				rj->weight = w;
				rj->need_slots = n;
				rj->distance = rd;
				rj->capacity = n * a->maxweight;
			}
			return -EINVAL;
		}
		if (a->total_w - old + w > ARB_SLOTS * a->maxweight) {
			arb_rj(rj, ARB_R_CAPACITY);
			if (rj) {
				rj->weight = w;
				rj->capacity = ARB_SLOTS * a->maxweight -
					       (a->total_w - old);
			}
			return -ENOSPC;
		}
		a->total_w = a->total_w - old + w;
		a->cls[cls].w = (u16)w;
		arb_rj(rj, ARB_R_OK);
		return 0;
	}
	/*
	 * A new distance: release, then insert. Rather than trying that on
	 * a copy of the table (a 300-byte struct on the stack), decide first
	 * from counts what arb_alloc_insert() would decide on the released
	 * table: by Theorem 4 ([F] 4) a normalized table admits any request
	 * whose slots fit in the free ones, so the free slots after the
	 * release, and the units, are all that matters. A refused change
	 * thus leaves *a untouched, with the reasons insert would give.
	 */
	if (w < n || w > n * a->maxweight) {
		arb_rj(rj, ARB_R_WEIGHT);
		if (rj) {
			rj->weight = w;
			rj->need_slots = n;
			rj->distance = rd;
			rj->capacity = n * a->maxweight;
		}
		return -EINVAL;
	}
	free = arb_alloc_free_slots(a) + SET_SIZE(a->cls[cls].level);
	total_w = a->total_w - a->cls[cls].w;
	if (n > free) {
		arb_rj(rj, ARB_R_NO_SLOTS);
		if (rj) {
			rj->need_slots = n;
			rj->distance = rd;
			rj->free_slots = free;
			rj->weight = w;
			rj->fit_distance = arb_fit_distance(a, free, total_w,
							    w);
		}
		return -ENOSPC;
	}
	if (total_w + w > ARB_SLOTS * a->maxweight) {
		arb_rj(rj, ARB_R_CAPACITY);
		if (rj) {
			rj->weight = w;
			rj->capacity = ARB_SLOTS * a->maxweight - total_w;
		}
		return -ENOSPC;
	}
	arb_alloc_release(a, cls, mv, NULL);
	err = arb_alloc_insert(a, cls, rd, w, NULL, rj);
	/* cannot fail after the checks above on a normalized table */
	WARN_ON_ONCE(err);
	return err;
}

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
	k = arb_visits(p, arb_min_slot_weight(a->cls[cls].w, n));
	return arb_bound_bytes(p, (k - 1) * cycle + gap_max);
}

/*
 * Only the userspace tests, fuzzers and benchmarks call these (they define
 * ARBTABLE_TESTING): invariant checks and views of the allocator's state.
 */
#ifdef ARBTABLE_TESTING
u64 arb_alloc_free_sets(const struct arb_alloc *a, unsigned int level)
{
	u64 f[ARB_LEVELS];

	if (level >= ARB_LEVELS)
		return 0;
	arb_free_levels(a->free, f);
	return f[level];
}

u64 arb_alloc_singular_sets(const struct arb_alloc *a, unsigned int level)
{
	u64 f[ARB_LEVELS];

	if (level == 0 || level >= ARB_LEVELS)
		return 0;
	arb_free_levels(a->free, f);
	return arb_singular(f, level);
}

static unsigned int arb_dist_lat(const struct arb_params *p, u64 latency_ns,
				 u32 w, unsigned int dmax)
{
	int i;

	for (i = (int)arb_level(dmax); i >= 0; i--) {
		unsigned int d = 1U << i, n = ARB_SLOTS >> i;
		u32 we = arb_weight_eff(w, n, p->maxweight);

		if (!we)
			continue;
		if (arb_bound_ns(p, d, we / n) <= latency_ns)
			return d;
	}
	return 0;
}

unsigned int arb_distance_for_latency(const struct arb_params *p,
				      u64 latency_ns, u32 w)
{
	return arb_dist_lat(p, latency_ns, w, ARB_SLOTS);
}

u64 arb_alloc_slot_mask(const struct arb_alloc *a, unsigned int cls)
{
	unsigned int i, s0, d, k;
	u64 m = 0;

	if (!arb_alloc_has(a, cls))
		return 0;
	i = a->cls[cls].level;
	d = 1U << i;
	s0 = arb_rev6(a->cls[cls].set);
	for (k = 0; k < (64U >> i); k++)
		m |= BIT_ULL(s0 + k * d);
	return m;
}

int arb_alloc_check(const struct arb_alloc *a)
{
	u8 cnt[ARB_MAX_CLASSES];
	u64 f[ARB_LEVELS];
	u32 total = 0;
	unsigned int l, c, i;

	memset(cnt, 0, sizeof(cnt));
	for (l = 0; l < ARB_SLOTS; l++) {
		u8 o = a->owner[l];
		bool fr = (a->free >> l) & 1, nobody = o == ARB_NO_CLASS;

		if (fr != nobody)
			return ARB_CHK_FREE_MISMATCH;
		if (o == ARB_NO_CLASS)
			continue;
		if (o >= ARB_MAX_CLASSES || !arb_alloc_has(a, o))
			return ARB_CHK_STRAY_OWNER;
		cnt[o]++;
	}
	for (c = 0; c < ARB_MAX_CLASSES; c++) {
		const struct arb_alloc_class *k = &a->cls[c];
		unsigned int size, n, d, s0, j;
		u64 phys = 0;

		if (k->level == ARB_NO_CLASS)
			continue;
		if (k->level >= ARB_LEVELS)
			return ARB_CHK_CLASS_SET;
		size = SET_SIZE(k->level);
		if (k->set & (size - 1) || cnt[c] != size)
			return ARB_CHK_CLASS_SET;
		for (j = 0; j < size; j++) {
			if (a->owner[k->set + j] != c)
				return ARB_CHK_CLASS_SET;
			phys |= BIT_ULL(arb_rev6(k->set + j));
		}
		/* Physical slots: exactly s0, s0 + d, s0 + 2d, ... */
		n = size;
		d = ARB_SLOTS / n;
		s0 = (unsigned int)__ffs64(phys);
		if (s0 >= d)
			return ARB_CHK_SPACING;
		for (j = 0; j < n; j++)
			phys &= ~BIT_ULL(s0 + j * d);
		if (phys)
			return ARB_CHK_SPACING;
		if (k->w < n || k->w > n * a->maxweight)
			return ARB_CHK_WEIGHT;
		total += k->w;
	}
	if (total != a->total_w || total > ARB_SLOTS * a->maxweight)
		return ARB_CHK_WEIGHT;
	/* Normalized: at most one singular set per level (Definition 4). */
	arb_free_levels(a->free, f);
	for (i = 1; i < ARB_LEVELS; i++)
		if (hweight64(arb_singular(f, i)) > 1)
			return ARB_CHK_NOT_NORMALIZED;
	return ARB_CHK_OK;
}
#endif /* ARBTABLE_TESTING */
