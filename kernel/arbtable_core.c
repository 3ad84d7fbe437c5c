// SPDX-License-Identifier: GPL-2.0
/*
 * sch_arbtable core: see arbtable_core.h. Paper references:
 * [F] fill-in-arbitration-table.txt, [E] table-management-evaluation.txt.
 */
#include "arbtable_core.h"

/*
 * arbtable arbiter: IBA VL arbitration (ib-vl-arbitration.txt, "Data VL
 * Arbitration Description") with BXIv3 per-entry deficit counters
 * (bxiv3-qos.txt §3.3, Algorithm 2). See arbtable_core.h, which also
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
	tb->recip[slot] = arb_weight_recip(weight);
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
	u32 ra = tb->recip[a];
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
	tb->recip[a] = tb->recip[b];
	tb->cls[b] = ca;
	tb->weight[b] = wa;
	tb->credit[b] = cra;
	tb->recip[b] = ra;

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

/*
 * The rest of arb_table_pick()'s walk of table @t after a whole round, from
 * @first, in which every eligible slot paid its quantum and stayed in debt
 * (credit <= 0). Going round, slot p gets out of a debt D_p on its
 * floor(D_p / Q_p) + 1-th visit (Q_p = 64 * weight): the walk would make
 * r = min floor(D_p / Q_p) more rounds that only pay quanta, then stop in
 * the next at the first slot to get out. Pay the r rounds at once, then
 * walk that last one: two steps per eligible slot, the same credits and
 * slot. A debt is less than one packet (charges are capped at 2^20), so
 * D_p / 64 is in arb_recip_div()'s exact range; a larger one would be cut
 * to it, which skips fewer rounds and loops. Deficit mode only: in iba mode
 * every visit starts positive. Out of line, and it fills in @p itself, so
 * that the per-packet path keeps nothing live across the call.
 */
noinline void arb_table_skip_rounds(struct arb_sched *s, unsigned int t,
				    unsigned int first, struct arb_pick *p)
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
			/* the credit is <= 0: x = D_p / 64 */
			x = -(u32)tb->credit[i] >> 6;
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
	tb->cur = stop;
	tb->in_visit = true;
	p->table = t;
	p->slot = stop;
	p->cls = tb->cls[stop];
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

/*
 * arbtable allocator: see arbtable_core.h for the model, the
 * management model chosen and the formulas. Paper references:
 * [F] fill-in-arbitration-table.txt, [E] table-management-evaluation.txt.
 */
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

char *arb_fmt_rate(char *buf, size_t len, u64 bytes_per_s)
{
	if (bytes_per_s > U64_MAX / 8) {
		scnprintf(buf, len, "%lluB/s", bytes_per_s);
		return buf;
	}
	return arb_fmt_unit(buf, len, bytes_per_s * 8, arb_rate_unit,
			    ARRAY_SIZE(arb_rate_unit));
}

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
		return scnprintf(buf, len, "invalid: rate 1..2^48 B/s above strict ceil, mtu 64..1048576, maxweight 1..255");
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
	case ARB_R_SHARE_SPREAD:
		return scnprintf(buf, len, "share %u cannot be spread over %u slots of at most weight %u",
				 r->share, r->need_slots, r->weight);
	default:
		return scnprintf(buf, len, "rejected");
	}
}

const char *arb_reason_text(enum arb_reason code)
{
	switch (code) {
	case ARB_R_OK:
		return "ok";
	case ARB_R_BAD_PARAMS:
		return "invalid parameters (rate, strict ceil, mtu or maxweight)";
	case ARB_R_BAD_DISTANCE:
		return "distance invalid: must be 1..64";
	case ARB_R_BAD_CLASS:
		return "class index out of range (at most 64 classes)";
	case ARB_R_RATE_ZERO:
		return "rate 0: a guaranteed class needs a rate above 0";
	case ARB_R_RATE_ABOVE_CAP:
		return "rate above the guaranteed high-table rate";
	case ARB_R_LATENCY_LOW:
		return "latency below the best possible bound";
	case ARB_R_WEIGHT:
		return "needs more weight units than the slots at its distance hold";
	case ARB_R_NO_SLOTS:
		return "needs more slots at its distance than the table has free";
	case ARB_R_CAPACITY:
		return "needs more weight units than the table has free";
	case ARB_R_EXISTS:
		return "class already admitted";
	case ARB_R_UNKNOWN:
		return "unknown class";
	case ARB_R_SHARE_SPREAD:
		return "share cannot be spread over its slots at maxweight";
	}
	return "rejected";
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
 * arbtable admission: requests to allocator operations, planned on copies
 * and committed to the live arbiter. See arbtable_core.h and DESIGN §4.
 */
u32 arb_strict_burst(u64 ceil, u32 mtu, u32 cburst)
{
	/* saturates: the strict class's burst enters every HIGH bound */
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
	u32 mtu = frame;

	if (capacity >= ARB_GSO_WHOLE_RATE && gso_max_size) {
		u32 gso = gso_max_size < ARB_GSO_MAX ? gso_max_size : ARB_GSO_MAX;

		gso += hard_hdr + ARB_GSO_HDR_ROOM;
		if (gso > mtu)
			mtu = gso;
	}
	if (mtu < ARB_MTU_MIN)
		return ARB_MTU_MIN;
	return mtu < ARB_MTU_MAX ? mtu : ARB_MTU_MAX;
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

/* Table, distance and weight units asked for by @resv. */
static int arb_admit_size(const struct arb_params *p, u8 maxweight,
			  const struct arb_resv *resv,
			  struct arb_admission *adm, struct arb_reject *rj)
{
	struct arb_plan pl;
	unsigned int d, n;
	int err;

	if (resv->rate) {
		err = arb_plan(p, resv->rate, resv->latency, resv->distance,
			       &pl, rj);
		if (err)
			return err;
		adm->new_table = ARB_HIGH;
		adm->distance = pl.distance;
		adm->weight = pl.w_eff;
		adm->bound_ns = pl.bound_ns;
		return 0;
	}
	if (resv->share) {
		/* LOW table: share units spread like a rate's W (section
		 * 7.2 hypothesis 3), one slot unless a distance is given.
		 */
		d = resv->distance ? arb_round_distance(resv->distance) :
				     ARB_SLOTS;
		if (!d) {
			arb_rj(rj, ARB_R_BAD_DISTANCE);
			rj->distance = resv->distance;
			return -EINVAL;
		}
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

int arb_admit_plan(const struct arb_alloc alloc[ARB_NTABLES],
		   const struct arb_params *p, u8 maxweight, unsigned int idx,
		   u8 old_table, const struct arb_resv *resv,
		   struct arb_admission *adm, char *why, size_t len)
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

	err = arb_admit_size(p, maxweight, resv, adm, &rj);
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

/* Make the live table @t hold what the allocator says, slot by slot. */
static void arb_admit_sync(struct arb_sched *arb, const struct arb_alloc *a,
			   unsigned int t)
{
	const struct arb_table *tb = &arb->tbl[t];
	unsigned int s;

	for (s = 0; s < ARB_SLOTS; s++) {
		u8 owner = arb_alloc_slot_owner(a, s);
		u8 w = owner == ARB_NO_CLASS ? 0 : arb_alloc_slot_weight(a, s);

		if (tb->weight[s] != w || (w && tb->cls[s] != owner))
			arb_set_slot(arb, t, s, owner, w);
	}
}

void arb_admit_commit(struct arb_sched *arb,
		      struct arb_alloc alloc[ARB_NTABLES], unsigned int idx,
		      const struct arb_admission *adm,
		      void (*on_swap)(void *ctx, unsigned int t, u8 a, u8 b),
		      void *ctx)
{
	unsigned int i, t = adm->old_table;
	u64 m;

	if (t != ARB_NO_CLASS) {
		m = arb_class_slots(arb, t, idx);
		while (m) {
			arb_set_slot(arb, t, __ffs64(m), ARB_NO_CLASS, 0);
			m &= m - 1;
		}
		for (i = 0; i < adm->mv.n; i++) {
			arb_swap_slots(arb, t, adm->mv.m[i].a, adm->mv.m[i].b);
			if (on_swap)
				on_swap(ctx, t, adm->mv.m[i].a,
					adm->mv.m[i].b);
		}
	}
	memcpy(alloc, adm->alloc, sizeof(adm->alloc));
	for (t = 0; t < ARB_NTABLES; t++)
		arb_admit_sync(arb, &alloc[t], t);
}
