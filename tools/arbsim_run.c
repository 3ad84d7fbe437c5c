// SPDX-License-Identifier: GPL-2.0
/*
 * arbsim_run.c - the simulation: the qdisc dequeues on the module's arbiter
 * at its rate, simulated time advancing by each packet's length; traffic
 * backlogged or offered at a constant rate, ceils throttling, the
 * unclassified queue where the arbiter picks it (every second LOW-side
 * opportunity while it is backlogged). What it measures
 * stays in struct sim for the reports.
 */
#include <string.h>

#include "arbsim.h"

static u64 splitmix64(u64 *x)
{
	u64 z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static u32 next_size(struct traffic *tr)
{
	u32 sz;

	if (tr->random) {
		sz = tr->sizes[splitmix64(&tr->rng) % tr->nsizes];
	} else {
		sz = tr->sizes[tr->pos];
		tr->pos = (tr->pos + 1) % tr->nsizes;
	}
	tr->generated++;
	if (tr->limit && tr->generated >= tr->limit)
		tr->done = true;
	return sz;
}

static void q_push(struct traffic *tr, u32 len)
{
	tr->q[(tr->qhead + tr->qlen) % SIM_QLIMIT] = len;
	tr->qlen++;
}

static u32 q_pop(struct traffic *tr)
{
	u32 len = tr->q[tr->qhead];

	tr->qhead = (tr->qhead + 1) % SIM_QLIMIT;
	tr->qlen--;
	return len;
}

/* The class gets a packet: head-of-line and gap clocks start now. */
static void activate(struct sim *s, struct sim_class *c, u64 t)
{
	if (c->active)
		return;
	c->active = true;
	c->head_since = t;
	c->mark = s->total_bytes;
}

/* Refill a source up to @now; backlogged sources keep one head packet. */
static void refill(struct sim *s, struct sim_class *c)
{
	struct traffic *tr = &c->tr;

	if (!tr->on)
		return;
	if (!tr->offered) {
		if (!tr->qlen && !tr->done) {
			q_push(tr, next_size(tr));
			activate(s, c, s->now);
		}
		return;
	}
	while (!tr->done && tr->next_arrival <= s->now) {
		u64 t = tr->next_arrival;
		u32 len = next_size(tr);
		u64 num = (u64)len * NSEC_PER_SEC + tr->arr_rem;

		if (tr->qlen < SIM_QLIMIT) {
			q_push(tr, len);
			activate(s, c, t);
		} else {
			tr->drops++;
		}
		tr->next_arrival += num / tr->offered;
		tr->arr_rem = num % tr->offered;
	}
}

static bool class_can_run(const struct sim_class *c)
{
	return c->tr.qlen && !c->throttled;
}

static void account(struct sim *s, struct sim_class *c, u8 table, u8 slot,
		    s32 credit, u32 len)
{
	u64 gap = s->total_bytes - c->mark;

	if (gap > c->gap_max)
		c->gap_max = gap;
	if (s->now - c->head_since > c->max_hol)
		c->max_hol = s->now - c->head_since;
	c->head_since = s->now;
	c->pkts++;
	c->bytes += len;
	c->tbytes[table] += len;
	c->tpkts[table]++;
	if (s->norder < s->order_n) {
		struct order_ent *o = &s->order[s->norder++];

		o->t = s->now;
		o->minor = c->minor;
		o->table = table;
		o->slot = slot;
		o->credit = credit;
		o->len = len;
	}
}

/* Advance the clock by one packet time at the qdisc rate, exactly. */
static void transmit(struct sim *s, u32 len)
{
	u64 num = (u64)len * NSEC_PER_SEC + s->now_rem;

	s->now += num / s->rate;
	s->now_rem = num % s->rate;
	s->total_bytes += len;
	s->sent++;
}

static u64 next_event(struct sim *s)
{
	u64 t = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < ARB_MAX_CLASSES; i++) {
		struct sim_class *c = &s->cls[i];

		if (!c->used)
			continue;
		if (c->throttled && c->tr.qlen && c->unthrottle_at < t)
			t = c->unthrottle_at;
		if (c->tr.on && c->tr.offered && !c->tr.done &&
		    c->tr.next_arrival < t)
			t = c->tr.next_arrival;
	}
	for (i = 0; i < s->nuncl; i++) {
		struct sim_class *c = &s->uncl[i];

		if (c->tr.offered && !c->tr.done && c->tr.next_arrival < t)
			t = c->tr.next_arrival;
	}
	return t;
}

static bool uncl_backlogged(const struct sim *s)
{
	unsigned int k;

	for (k = 0; k < s->nuncl; k++)
		if (s->uncl[k].tr.qlen)
			return true;
	return false;
}

static bool serve_unclassified(struct sim *s)
{
	unsigned int k, j;

	for (k = 0; k < s->nuncl; k++) {
		struct sim_class *c;
		u32 len;

		j = (s->uncl_rr + k) % s->nuncl;
		c = &s->uncl[j];
		if (!c->tr.qlen)
			continue;
		s->uncl_rr = (j + 1) % s->nuncl;
		len = q_pop(&c->tr);
		account(s, c, SIM_UNCLASSIFIED, 0, 0, len);
		if (!c->tr.qlen)
			c->active = false;
		s->uncl_pkts++;
		s->uncl_bytes += len;
		transmit(s, len);
		return true;
	}
	return false;
}

void simulate(struct sim *s)
{
	unsigned int i;

	s->order = xcalloc(s->order_n, sizeof(*s->order));
	for (i = 0; i < ARB_MAX_CLASSES; i++)
		if (s->cls[i].used)
			s->cls[i].tr.rng = s->seed ^
					   ((u64)s->cls[i].minor << 32);
	for (i = 0; i < s->nuncl; i++)
		s->uncl[i].tr.rng = s->seed ^ ((u64)s->uncl[i].minor << 32) ^
				    0x5555;

	while (s->sent < s->packets) {
		struct arb_pick pick;
		struct sim_class *c;
		s32 credit;
		u32 len;

		for (i = 0; i < ARB_MAX_CLASSES; i++) {
			c = &s->cls[i];
			if (!c->used)
				continue;
			refill(s, c);
			if (c->throttled && c->unthrottle_at <= s->now) {
				c->throttled = false;
				c->mark = s->total_bytes;
			}
			arb_set_eligible(&s->arb, i, class_can_run(c));
		}
		for (i = 0; i < s->nuncl; i++)
			refill(s, &s->uncl[i]);
		s->arb.uncl_ready = uncl_backlogged(s);

		if (!arb_select(&s->arb, &pick)) {
			u64 t = next_event(s);

			if (t == UINT64_MAX) {
				s->stopped_early = true;
				break;
			}
			/* Idle until the next arrival or unthrottle. */
			s->now = t > s->now ? t : s->now + 1;
			s->now_rem = 0;
			continue;
		}
		if (pick.table == ARB_UNCLASSIFIED) {
			serve_unclassified(s);
			arb_charge(&s->arb, &pick, 0);
			continue;
		}
		c = &s->cls[pick.cls];
		len = q_pop(&c->tr);
		if (!c->tr.offered)
			refill(s, c);	/* a backlogged class has more */
		credit = arb_charge(&s->arb, &pick, len);
		account(s, c, pick.table, pick.slot, credit, len);
		if (c->ceil) {
			struct bucket *b = &c->cb;
			s64 toks = b->tokens + (s64)(s->now - b->t_c);

			b->tokens = toks > b->buffer ? b->buffer : toks;
			b->t_c = s->now;
			b->tokens -= (s64)((u64)len * NSEC_PER_SEC / b->bps);
			if (b->tokens < 0) {
				c->throttled = true;
				c->nthrottled++;
				c->unthrottle_at = s->now + (u64)-b->tokens;
				arb_set_eligible(&s->arb, c->index, false);
			}
		}
		if (!c->tr.qlen) {
			c->active = false;
			arb_set_drained(&s->arb, c->index);
		}
		transmit(s, len);
		/* The class stays backlogged: its next packet is head now. */
		c->mark = s->total_bytes;
	}
}

