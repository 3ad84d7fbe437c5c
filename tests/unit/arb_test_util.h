/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the arbiter unit tests: a deterministic RNG, packet-size
 * generators, and a simulated set of backlogged classes driven through
 * arb_select()/arb_charge() the way the qdisc drives them.
 */
#ifndef _ARB_TEST_UTIL_H
#define _ARB_TEST_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "arbtable_core_test.h"

/* xorshift64*: deterministic, seedable, good enough for tests. */
struct arb_rng {
	uint64_t s;
};

static inline void arb_rng_seed(struct arb_rng *r, uint64_t seed)
{
	r->s = seed ? seed : 0x9e3779b97f4a7c15ULL;
}

static inline uint64_t arb_rng_next(struct arb_rng *r)
{
	uint64_t x = r->s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* Uniform in [lo, hi] (inclusive). */
static inline uint32_t arb_rng_range(struct arb_rng *r, uint32_t lo,
				     uint32_t hi)
{
	return lo + (uint32_t)(arb_rng_next(r) % ((uint64_t)hi - lo + 1));
}

static inline bool arb_rng_chance(struct arb_rng *r, unsigned int pct)
{
	return arb_rng_next(r) % 100 < pct;
}

/* Packet-size generator of one class. */
enum arb_sz_kind {
	ARB_SZ_FIXED,		/* always @a bytes */
	ARB_SZ_UNIFORM,		/* uniform in [a, b] */
	ARB_SZ_IMIX,		/* 64/594/1500 in 7:4:1 proportion */
};

struct arb_szgen {
	enum arb_sz_kind kind;
	uint32_t a, b;
	struct arb_rng rng;
};

static inline void arb_sz_fixed(struct arb_szgen *g, uint32_t len)
{
	memset(g, 0, sizeof(*g));
	g->kind = ARB_SZ_FIXED;
	g->a = g->b = len;
}

static inline void arb_sz_uniform(struct arb_szgen *g, uint32_t lo,
				  uint32_t hi, uint64_t seed)
{
	g->kind = ARB_SZ_UNIFORM;
	g->a = lo;
	g->b = hi;
	arb_rng_seed(&g->rng, seed);
}

static inline void arb_sz_imix(struct arb_szgen *g, uint64_t seed)
{
	g->kind = ARB_SZ_IMIX;
	g->a = 64;
	g->b = 1500;
	arb_rng_seed(&g->rng, seed);
}

static inline uint32_t arb_sz_max(const struct arb_szgen *g)
{
	return g->b;
}

static inline uint32_t arb_sz_next(struct arb_szgen *g)
{
	uint32_t v;

	switch (g->kind) {
	case ARB_SZ_UNIFORM:
		return arb_rng_range(&g->rng, g->a, g->b);
	case ARB_SZ_IMIX:
		v = arb_rng_range(&g->rng, 0, 11);
		return v < 7 ? 64 : v < 11 ? 594 : 1500;
	case ARB_SZ_FIXED:
	default:
		return g->a;
	}
}

/*
 * A simulated set of classes. Each class has a size generator and a
 * backlog in packets (-1 = infinite). The head packet's size is drawn when
 * it becomes the head, so a test can peek at it.
 */
struct arb_sim_cls {
	struct arb_szgen sz;
	long backlog;		/* packets queued; -1 = always backlogged */
	bool throttled;		/* eligible only if backlogged && !throttled */
	uint64_t bytes;		/* bytes sent */
	uint64_t pkts;		/* packets sent */
};

struct arb_sim {
	struct arb_sched *s;
	struct arb_sim_cls c[ARB_MAX_CLASSES];
	uint64_t total_bytes;
	uint64_t total_pkts;
	uint64_t high_bytes, low_bytes, strict_bytes, other_bytes;
	/* the owner's unclassified queue: packets queued (-1: always), of
	 * uncl_len bytes; what it sent
	 */
	long uncl_backlog;
	uint32_t uncl_len;
	uint64_t uncl_bytes, uncl_pkts;
	uint64_t uncl_empty_picks;	/* picked while empty: a bug */
};

static inline void arb_sim_init(struct arb_sim *sim, struct arb_sched *s)
{
	unsigned int i;

	memset(sim, 0, sizeof(*sim));
	sim->s = s;
	for (i = 0; i < ARB_MAX_CLASSES; i++)
		arb_sz_fixed(&sim->c[i].sz, 1500);
	sim->uncl_len = 64;
}

/* as the qdisc keeps arb_sched.uncl_ready: its queue is backlogged */
static inline void arb_sim_set_uncl(struct arb_sim *sim, long backlog)
{
	sim->uncl_backlog = backlog;
	sim->s->uncl_ready = backlog != 0;
}

static inline bool arb_sim_cls_eligible(const struct arb_sim *sim,
					unsigned int cls)
{
	const struct arb_sim_cls *c = &sim->c[cls];

	return c->backlog != 0 && !c->throttled;
}

/* Push the simulated eligibility of @cls to the arbiter. */
static inline void arb_sim_sync(struct arb_sim *sim, unsigned int cls)
{
	arb_set_eligible(sim->s, cls, arb_sim_cls_eligible(sim, cls));
}

static inline void arb_sim_set_backlog(struct arb_sim *sim, unsigned int cls,
				       long backlog)
{
	sim->c[cls].backlog = backlog;
	arb_sim_sync(sim, cls);
}

static inline void arb_sim_set_throttled(struct arb_sim *sim,
					 unsigned int cls, bool throttled)
{
	sim->c[cls].throttled = throttled;
	arb_sim_sync(sim, cls);
}

/*
 * One dequeue: select, draw the packet length, charge it, account. Returns
 * false when the arbiter had nothing to select. @p, @len and @credit (each
 * may be NULL) receive the pick, the packet length and arb_charge()'s
 * return value.
 */
static inline bool arb_sim_step(struct arb_sim *sim, struct arb_pick *p,
				uint32_t *len, int32_t *credit)
{
	struct arb_pick pk;
	struct arb_sim_cls *c;
	uint32_t l;
	int32_t cr;

	if (!arb_select(sim->s, &pk))
		return false;
	if (pk.table == ARB_UNCLASSIFIED) {
		/* the owner's queue: no class, no slot */
		if (!sim->uncl_backlog)
			sim->uncl_empty_picks++;
		cr = arb_charge(sim->s, &pk, sim->uncl_len);
		sim->uncl_bytes += sim->uncl_len;
		sim->uncl_pkts++;
		sim->total_bytes += sim->uncl_len;
		sim->total_pkts++;
		if (sim->uncl_backlog > 0 && !--sim->uncl_backlog)
			sim->s->uncl_ready = false;
		if (p)
			*p = pk;
		if (len)
			*len = sim->uncl_len;
		if (credit)
			*credit = cr;
		return true;
	}
	c = &sim->c[pk.cls];
	l = arb_sz_next(&c->sz);
	cr = arb_charge(sim->s, &pk, l);
	c->bytes += l;
	c->pkts++;
	sim->total_bytes += l;
	sim->total_pkts++;
	if (pk.table == ARB_HIGH)
		sim->high_bytes += l;
	else if (pk.table == ARB_LOW)
		sim->low_bytes += l;
	else if (pk.table == ARB_STRICT)
		sim->strict_bytes += l;
	else
		sim->other_bytes += l;
	if (c->backlog > 0) {
		c->backlog--;
		if (!c->backlog)
			arb_sim_sync(sim, pk.cls);
	}
	if (p)
		*p = pk;
	if (len)
		*len = l;
	if (credit)
		*credit = cr;
	return true;
}

/* Program @n slots of table @t from parallel arrays, starting at slot 0. */
static inline void arb_prog_table(struct arb_sched *s, unsigned int t,
				  const uint8_t *cls, const uint8_t *weight,
				  unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		arb_set_slot(s, t, i, cls[i], weight[i]);
}

/*
 * Structural invariants of the arbiter state, independent of history.
 * Returns NULL when all hold, else a static description of the first
 * violation (so cmocka can print it).
 */
static inline const char *arb_check_masks(const struct arb_sched *s)
{
	unsigned int t, i, c;

	for (t = 0; t < ARB_NTABLES; t++) {
		const struct arb_table *tb = &s->tbl[t];
		u64 used = 0, elig = 0, or_slots = 0, or_elig = 0;

		for (i = 0; i < ARB_SLOTS; i++) {
			if (!tb->weight[i])
				continue;
			used |= BIT_ULL(i);
			if (tb->cls[i] >= ARB_MAX_CLASSES)
				return "used slot with invalid class";
			if (!(s->cls_slots[t][tb->cls[i]] & BIT_ULL(i)))
				return "cls_slots misses a used slot";
			if (s->cls_eligible & BIT_ULL(tb->cls[i]))
				elig |= BIT_ULL(i);
		}
		for (c = 0; c < ARB_MAX_CLASSES; c++) {
			u64 cs = s->cls_slots[t][c], m;

			for (m = cs; m; m &= m - 1) {
				i = (unsigned int)__builtin_ctzll(m);
				if (!tb->weight[i] || tb->cls[i] != c)
					return "cls_slots names a slot the class does not hold";
			}
			or_slots |= cs;
			if (s->cls_eligible & BIT_ULL(c))
				or_elig |= cs;
		}
		if (tb->used != used)
			return "used mask != slots with weight > 0";
		if (or_slots != used)
			return "OR of cls_slots != used mask";
		if (tb->eligible != elig)
			return "eligible mask != used slots of eligible classes";
		if (tb->eligible != or_elig)
			return "eligible mask != OR of cls_slots of eligible classes";
	}
	return NULL;
}

/*
 * Credit invariant: every slot other than the visit in progress carries a
 * balance <= 0 (deficit) or exactly 0 (iba).
 */
static inline const char *arb_check_credits(const struct arb_sched *s)
{
	unsigned int t, i;

	for (t = 0; t < ARB_NTABLES; t++) {
		const struct arb_table *tb = &s->tbl[t];

		for (i = 0; i < ARB_SLOTS; i++) {
			if (tb->in_visit && tb->cur == i)
				continue;
			if (s->accounting == ARB_ACCT_IBA && tb->credit[i])
				return "iba: nonzero credit between visits";
			if (tb->credit[i] > 0)
				return "deficit: positive credit between visits";
		}
	}
	return NULL;
}

#endif /* _ARB_TEST_UTIL_H */
