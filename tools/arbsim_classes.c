// SPDX-License-Identifier: GPL-2.0
/*
 * arbsim_classes.c - the statements that change classes and tables (class,
 * change, del, high, low) applied to the module's own arbiter and
 * allocator, each recorded as a decision: admitted with what the
 * allocator chose, or rejected in the module's words.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "arbt_print.h"
#include "arbtable_parse.h"
#include "arbtable_request.h"
#include "arbsim.h"
#include <linux/pkt_sched_arbtable.h>

/* the shared request check states the module's limits: keep them equal */
_Static_assert(ARBT_RQ_SLOTS == ARB_SLOTS, "slots");
_Static_assert(ARBT_RQ_SHARE_MAX == TC_ARBTABLE_WEIGHT_MAX, "share");
_Static_assert(ARBT_RQ_RATE_MAX == ARB_RATE_MAX, "rate");

/* ---------------------------------------------------------------------- */
/* Classes and decisions                                                   */

struct sim_class *find_class(struct sim *s, u32 minor)
{
	unsigned int i;

	for (i = 0; i < ARB_MAX_CLASSES; i++)
		if (s->cls[i].used && s->cls[i].minor == minor)
			return &s->cls[i];
	return NULL;
}

static struct decision *decide(struct sim *s, const char *cmd, u32 minor)
{
	struct decision *d;

	if (s->ndec == s->adec) {
		s->adec = s->adec ? 2 * s->adec : 16;
		s->dec = realloc(s->dec, s->adec * sizeof(*s->dec));
		if (!s->dec) {
			fprintf(stderr, "arbsim: out of memory\n");
			exit(2);
		}
	}
	d = &s->dec[s->ndec++];
	memset(d, 0, sizeof(*d));
	d->line = scen_line;
	snprintf(d->cmd, sizeof(d->cmd), "%s", cmd);
	d->minor = minor;
	d->table = ARB_NO_CLASS;
	return d;
}

static void __attribute__((format(printf, 2, 3)))
reject(struct decision *d, const char *fmt, ...)
{
	va_list ap;

	d->ok = false;
	va_start(ap, fmt);
	vsnprintf(d->text, sizeof(d->text), fmt, ap);
	va_end(ap);
}

struct sim_class *new_class(struct sim *s, u32 minor)
{
	struct sim_class *c;
	unsigned int idx;

	if (s->cls_used == ~0ULL)
		return NULL;
	idx = (unsigned int)__ffs64(~s->cls_used);
	c = &s->cls[idx];
	memset(c, 0, sizeof(*c));
	c->used = true;
	c->minor = minor;
	c->index = (u8)idx;
	c->table = ARB_NO_CLASS;
	s->cls_used |= BIT_ULL(idx);
	return c;
}

/* As the module's arbtable_bucket_set(): @burst bytes deep when given,
 * else max(2 * mtu, ARB_MIN_BURST_NS of the rate).
 */
static void bucket_set(struct bucket *b, u64 bps, u32 mtu, u32 burst, u64 now)
{
	u64 l2t;

	memset(b, 0, sizeof(*b));
	b->bps = bps;
	if (!bps)
		return;
	l2t = 2ULL * mtu * NSEC_PER_SEC / bps;
	b->buffer = (s64)(l2t > ARB_MIN_BURST_NS ? l2t : ARB_MIN_BURST_NS);
	if (burst)
		b->buffer = (s64)((u64)burst * NSEC_PER_SEC / bps);
	b->tokens = b->buffer;
	b->t_c = now;
}

void strict_params(const struct sim *s, struct arb_params *p)
{
	u64 sc = 0;
	u32 sb = 0;
	unsigned int i;

	for (i = 0; i < ARB_MAX_CLASSES; i++) {
		if (s->cls[i].used && s->cls[i].strict) {
			sc = s->cls[i].ceil;
			sb = s->cls[i].cburst;
		}
	}
	arb_admit_params(s->rate, s->mtu, s->maxweight, s->highlimit, sc, sb, p);
}

/* The rate a HIGH class's reserved weight guarantees, as the module
 * exports it (guaranteed_rate); 0 for other classes.
 */
u64 class_reserved(const struct sim *s, const struct sim_class *c)
{
	struct arb_params p;

	if (!s->autom || c->table != ARB_HIGH)
		return 0;
	strict_params(s, &p);
	return arb_weight_rate(&p, c->weight);
}

void do_class(struct sim *s, bool create, u32 minor,
	      const struct copts *o)
{
	struct decision *d = decide(s, create ? "class" : "change", minor);
	struct sim_class *c = find_class(s, minor);
	bool strict = c ? c->strict : false;
	u64 ceil = c ? c->ceil : 0;
	u32 cburst = c ? c->cburst : 0;
	struct arb_resv resv;
	struct arb_admission plan;
	struct arb_params p;
	unsigned int i, idx;
	bool want_plan = false;
	char why[256];

	if (create && c) {
		reject(d, "class %x:%x exists; use 'change'", s->major, minor);
		return;
	}
	if (!create && !c) {
		reject(d, "class %x:%x does not exist", s->major, minor);
		return;
	}
	if (o->has_strict)
		strict = o->strict;
	if (o->has_ceil) {
		if (!o->ceil) {
			reject(d, "ceil must be greater than 0; omit it for no ceiling");
			return;
		}
		ceil = o->ceil;
	}
	if (o->has_cburst) {
		if (o->cburst > TC_ARBTABLE_BURST_MAX) {
			reject(d, "cburst out of range: at most 256 MiB (0 = default)");
			return;
		}
		cburst = o->cburst;
	}
	if (cburst && !ceil) {
		reject(d, "cburst sizes the class's ceil: give a ceil too");
		return;
	}
	if (cburst && cburst < s->mtu) {
		reject(d, "cburst %u is below the mtu %u: the ceil must let one whole packet through",
		       cburst, s->mtu);
		return;
	}
	if (!s->autom && (o->has_rate || o->has_latency || o->has_distance ||
			  o->has_share)) {
		reject(d, "rate/latency/distance/share need an auto-mode qdisc; a manual qdisc serves its classes by the slots it is given");
		return;
	}
	if (strict) {
		for (i = 0; i < ARB_MAX_CLASSES; i++) {
			if (s->cls[i].used && &s->cls[i] != c &&
			    s->cls[i].strict) {
				reject(d, "class %x:%x is already the strict class; only one is allowed",
				       s->major, s->cls[i].minor);
				return;
			}
		}
		if (c && (arb_class_slots(&s->arb, ARB_HIGH, c->index) |
			  arb_class_slots(&s->arb, ARB_LOW, c->index))) {
			reject(d, "a class that table slots name cannot become strict; remove it from the tables first");
			return;
		}
		if (s->autom) {
			bool was = c && c->strict;
			u64 old = was ? c->ceil : 0;
			u32 old_burst = was ?
				arb_strict_burst(old, s->mtu, c->cburst) : 0;

			if (!ceil) {
				reject(d, "a strict class needs a ceil on an auto-mode qdisc, otherwise no admitted class keeps its guarantee");
				return;
			}
			if ((!was || ceil > old) &&
			    s->alloc[ARB_HIGH].nclasses) {
				reject(d, "cannot add or raise the strict class's ceil while %u classes hold HIGH-table guarantees; configure the strict class first",
				       s->alloc[ARB_HIGH].nclasses);
				return;
			}
			if (arb_strict_burst(ceil, s->mtu, cburst) > old_burst &&
			    s->alloc[ARB_HIGH].nclasses) {
				reject(d, "cannot deepen the strict class's cburst while %u classes hold HIGH-table guarantees: their bounds count its burst",
				       s->alloc[ARB_HIGH].nclasses);
				return;
			}
		}
	}

	/* arbtable_auto_parse(): the checks every front end shares
	 * (lib/arbtable_request.c), the merge the module's own
	 */
	memset(&resv, 0, sizeof(resv));
	if (c)
		resv = c->resv;
	if (s->autom) {
		struct arbt_request rq = {
			.rate = o->rate, .latency_ns = o->latency,
			.distance = o->distance, .share = o->share,
		};
		struct arbt_resv r;
		const char *err;

		rq.given = (o->has_rate ? ARBT_RQ_RATE : 0) |
			   (o->has_latency ? ARBT_RQ_LATENCY : 0) |
			   (o->has_distance ? ARBT_RQ_DISTANCE : 0) |
			   (o->has_share ? ARBT_RQ_SHARE : 0);
		err = arbt_request_check(&rq);
		if (err) {
			reject(d, "%s", err);
			return;
		}
		if (o->has_rate)
			arb_resv_set_rate(&resv, o->rate);
		if (o->has_share)
			arb_resv_set_share(&resv, o->share);
		if (o->has_latency) {
			resv.latency = o->latency;
			resv.distance = 0;
		}
		if (o->has_distance) {
			resv.distance = o->distance;
			resv.latency = 0;
		}
		r = (struct arbt_resv){ .rate = resv.rate,
					.latency_ns = resv.latency,
					.distance = resv.distance,
					.share = resv.share };
		err = arbt_resv_check(&r, strict);
		if (err) {
			reject(d, "%s", err);
			return;
		}
	}

	if (c) {
		idx = c->index;
		want_plan = memcmp(&resv, &c->resv, sizeof(resv)) != 0;
	} else {
		if (s->cls_used == ~0ULL) {
			reject(d, "at most %d classes per qdisc",
			       ARB_MAX_CLASSES);
			return;
		}
		idx = (unsigned int)__ffs64(~s->cls_used);
		want_plan = resv.rate || resv.share;
	}
	if (want_plan) {
		/* As the module: the strict class's ceil before this change
		 * (a strict class itself takes no reservation).
		 */
		strict_params(s, &p);
		if (arb_admit_prepare(s->alloc, &p, s->maxweight, idx,
				      c ? c->table : ARB_NO_CLASS, &resv, &plan,
				      why, sizeof(why))) {
			reject(d, "cannot admit the class: %s", why);
			return;
		}
	}

	if (!c)
		c = new_class(s, minor);
	if (want_plan) {
		arb_admit_commit(&s->arb, s->alloc, c->index, &plan, NULL, NULL);
		s->swaps += plan.mv.n;
		d->moves = plan.mv.n;
		c->resv = plan.resv;
		c->table = plan.new_table;
		c->distance = c->table == ARB_NO_CLASS ? 0 : plan.distance;
		c->weight = c->table == ARB_NO_CLASS ? 0 : plan.weight;
		c->bound_ns = plan.bound_ns;
		d->admission = true;
	}
	if (ceil != c->ceil || cburst != c->cburst) {
		c->ceil = ceil;
		c->cburst = cburst;
		bucket_set(&c->cb, ceil, s->mtu, cburst, 0);
	}
	if (strict != c->strict) {
		c->strict = strict;
		arb_set_strict(&s->arb, strict ? c->index : ARB_NO_CLASS);
	}
	d->ok = true;
	d->table = c->table;
	d->distance = c->distance;
	d->weight = c->weight;
	d->bound_ns = c->bound_ns;
	d->rate = c->resv.rate;
	d->reserved = class_reserved(s, c);
	if (c->table != ARB_NO_CLASS)
		d->slots = arb_class_slots(&s->arb, c->table, c->index);
	snprintf(d->text, sizeof(d->text), "%s",
		 d->admission && c->table != ARB_NO_CLASS ? "admitted" :
		 create ? "created" : "changed");
}

void do_del(struct sim *s, u32 minor)
{
	struct decision *d = decide(s, "del", minor);
	struct sim_class *c = find_class(s, minor);
	struct arb_resv none;
	struct arb_admission plan;
	struct arb_params p;
	char why[256], hb[200], lb[200];
	u64 hi, lo;

	if (!c) {
		reject(d, "class %x:%x does not exist", s->major, minor);
		return;
	}
	hi = arb_class_slots(&s->arb, ARB_HIGH, c->index);
	lo = arb_class_slots(&s->arb, ARB_LOW, c->index);
	if (s->autom && c->table != ARB_NO_CLASS) {
		memset(&none, 0, sizeof(none));
		strict_params(s, &p);
		if (arb_admit_prepare(s->alloc, &p, s->maxweight, c->index,
				      c->table, &none, &plan, why, sizeof(why))) {
			reject(d, "cannot admit the class: %s", why);
			return;
		}
		arb_admit_commit(&s->arb, s->alloc, c->index, &plan, NULL, NULL);
		s->swaps += plan.mv.n;
		d->moves = plan.mv.n;
		d->admission = true;
	} else if (hi || lo) {
		reject(d, "class %x:%x is still named by high slots [%s] and low slots [%s]; reprogram the tables first",
		       s->major, minor, arbt_fmt_slots(hi, hb, sizeof(hb)),
		       arbt_fmt_slots(lo, lb, sizeof(lb)));
		return;
	}
	arb_set_eligible(&s->arb, c->index, false);
	if (c->strict)
		arb_set_strict(&s->arb, ARB_NO_CLASS);
	s->cls_used &= ~BIT_ULL(c->index);
	memset(c, 0, sizeof(*c));
	d->ok = true;
	snprintf(d->text, sizeof(d->text), "deleted");
}

/* Manual tables: arbtable_parse_table() + arbtable_apply(). */
void do_table(struct sim *s, unsigned int t, const char *list)
{
	struct decision *d = decide(s, t == ARB_HIGH ? "high" : "low", 0);
	u8 cls[ARB_SLOTS], wt[ARB_SLOTS];
	u32 mins[ARB_SLOTS];
	struct arbt_table tbl;
	const char *name = table_name[t];
	unsigned int i;
	char why[200];
	int rc;

	if (s->autom) {
		reject(d, "manual high/low slots on an auto-mode qdisc: the allocator owns the tables; admit classes with rate/latency/share instead");
		return;
	}
	memset(cls, ARB_NO_CLASS, sizeof(cls));
	memset(wt, 0, sizeof(wt));
	memset(mins, 0, sizeof(mins));
	/* the parser of the plugin and arbtablectl: what the kernel would
	 * refuse of a slot, in the words they use
	 */
	rc = arbt_table_parse(list, name, &tbl, why, sizeof(why));
	if (rc == -1)
		die("%s", why);
	if (rc) {
		reject(d, "%s", why);
		return;
	}
	for (i = 0; i < tbl.nslots; i++) {
		mins[i] = tbl.minor[i];
		wt[i] = (u8)tbl.weight[i];
	}
	/* Classes named by the list: create the missing ones. */
	for (i = 0; i < ARB_SLOTS; i++) {
		struct sim_class *c;

		if (!wt[i])
			continue;
		c = find_class(s, mins[i]);
		if (c && c->strict) {
			reject(d, "the strict class takes no table slot: %s slot %u, class %x:%x",
			       name, i, s->major, mins[i]);
			return;
		}
	}
	for (i = 0; i < ARB_SLOTS; i++) {
		struct sim_class *c;

		if (!wt[i])
			continue;
		c = find_class(s, mins[i]);
		if (!c)
			c = new_class(s, mins[i]);
		if (!c) {
			reject(d, "at most %d classes per qdisc",
			       ARB_MAX_CLASSES);
			return;
		}
		cls[i] = c->index;
	}
	for (i = 0; i < ARB_SLOTS; i++)
		arb_set_slot(&s->arb, t, i, cls[i], wt[i]);
	d->ok = true;
	snprintf(d->text, sizeof(d->text), "%u slots programmed",
		 hweight64(s->arb.tbl[t].used));
}

