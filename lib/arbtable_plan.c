// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * arbtable_plan.c - the module's sizing and allocator in userspace, for
 * programs that must decide as the kernel would without asking it: what
 * a request costs (arbtable_cost_request(): arb_admit_prepare() on an
 * empty table) and a plan, a pair of tables the core's allocator admits
 * into and releases from exactly as sch_arbtable does.
 *
 * The core is kernel/arbtable_core.c compiled for userspace
 * (tests/core), linked into the library with hidden visibility: only the
 * functions below are exported.  It is GPL-2.0 code; see
 * Documentation/networking/arbtable-kubernetes.rst on what that
 * means for the library.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arbtable_core_test.h"
#include "arbtable/arbtable.h"

#define ARB_EXPORT		__attribute__((visibility("default")))

struct arbtable_plan {
	struct arb_alloc	alloc[ARB_NTABLES];
	u8			table[ARB_MAX_CLASSES];	/* per index */
	u8			maxweight;
};

/* The caller's params, whatever their size (extensible, see arbtable.h) */
static int plan_params(const struct arbtable_cost_params *c, size_t size,
		       struct arbtable_cost_params *out, struct arb_params *p)
{
	if (!c || size < ARBTABLE_COST_PARAMS_SIZE_VER0)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (size > sizeof(*out)) {
		const unsigned char *b = (const unsigned char *)c;
		size_t i;

		for (i = sizeof(*out); i < size; i++)
			if (b[i])
				return -E2BIG;
		size = sizeof(*out);
	}
	memcpy(out, c, size);
	if (out->reserved || out->maxweight < 1 || out->maxweight > 255 ||
	    out->highlimit > 255)
		return -EINVAL;
	arb_admit_params(out->rate, out->mtu, (u8)out->maxweight,
			 (u8)out->highlimit, out->strict_ceil,
			 out->strict_cburst, p);
	return arb_params_check(p) ? -EINVAL : 0;
}

static void plan_why(char *why, size_t len, const char *msg)
{
	if (why && len)
		snprintf(why, len, "%s", msg);
}

static void cost_fill(const struct arb_params *p,
		      const struct arb_admission *adm, struct arbtable_cost *c)
{
	memset(c, 0, sizeof(*c));
	c->table = adm->new_table == ARB_HIGH ? ARBTABLE_HIGH : ARBTABLE_LOW;
	c->distance = adm->distance;
	c->slots = ARB_SLOTS / adm->distance;
	c->units = adm->weight;
	c->units_rate = adm->new_table == ARB_HIGH ?
			arb_weight_rate(p, adm->weight) : 0;
	c->bound_ns = adm->bound_ns;
}

static int cost_out(const struct arbtable_cost *c, struct arbtable_cost *out,
		    size_t size)
{
	if (size < ARBTABLE_COST_SIZE_VER0)
		return -EINVAL;
	if (size > sizeof(*c)) {
		memset((char *)out + sizeof(*c), 0, size - sizeof(*c));
		size = sizeof(*c);
	}
	memcpy(out, c, size);
	return (int)size;
}

ARB_EXPORT
uint64_t arbtable_cost_high_capacity(const struct arbtable_cost_params *c,
				     size_t size)
{
	struct arbtable_cost_params cp;
	struct arb_params p;

	if (plan_params(c, size, &cp, &p))
		return 0;
	return arb_high_capacity(&p);
}

ARB_EXPORT
uint64_t arbtable_cost_units_rate(const struct arbtable_cost_params *c,
				  size_t size, uint32_t units)
{
	struct arbtable_cost_params cp;
	struct arb_params p;

	if (plan_params(c, size, &cp, &p))
		return 0;
	return arb_weight_rate(&p, units);
}

/* Size @rq against @plan's tables (an empty pair for a cost) */
static int plan_prepare(const struct arb_alloc alloc[ARB_NTABLES],
			const struct arbtable_cost_params *c, size_t size,
			unsigned int idx, const struct arbtable_class_opts *o,
			struct arb_admission *adm, struct arb_params *p,
			char *why, size_t len)
{
	struct arbtable_cost_params cp;
	struct arb_resv resv = { 0 };
	int err;

	if (why && len)
		why[0] = '\0';
	err = plan_params(c, size, &cp, p);
	if (err) {
		plan_why(why, len, "bad qdisc parameters");
		return err;
	}
	if (!o || (o->set & ~(ARBTABLE_C_RATE | ARBTABLE_C_LATENCY |
			      ARBTABLE_C_DISTANCE | ARBTABLE_C_SHARE))) {
		plan_why(why, len, "only rate, latency, distance and share are sized");
		return -EINVAL;
	}
	if (o->set & ARBTABLE_C_RATE)
		resv.rate = o->rate;
	if (o->set & ARBTABLE_C_LATENCY)
		resv.latency = o->latency_ns;
	if (o->set & ARBTABLE_C_DISTANCE)
		resv.distance = o->distance;
	if (o->set & ARBTABLE_C_SHARE)
		resv.share = o->share;
	if (!resv.rate && !resv.share) {
		plan_why(why, len, "give a rate (HIGH table) or a share (LOW table)");
		return -EINVAL;
	}
	if (arb_admit_prepare(alloc, p, (u8)cp.maxweight, idx, ARB_NO_CLASS,
			      &resv, adm, why ? why : (char *)"", why ? len : 0))
		return adm->reason == ARB_R_NO_SLOTS ||
		       adm->reason == ARB_R_CAPACITY ? -ENOSPC : -EINVAL;
	return 0;
}

ARB_EXPORT
int arbtable_cost_request(const struct arbtable_cost_params *c, size_t size,
			  const struct arbtable_class_opts *o,
			  struct arbtable_cost *out, size_t out_size,
			  char *why, size_t len)
{
	struct arb_alloc empty[ARB_NTABLES];
	struct arb_admission *adm;
	struct arbtable_cost cost;
	struct arb_params p;
	unsigned int t;
	int err;

	if (!c || !out)
		return -EINVAL;
	adm = malloc(sizeof(*adm));
	if (!adm)
		return -ENOMEM;
	for (t = 0; t < ARB_NTABLES; t++)
		arb_alloc_init(&empty[t], c->maxweight ? c->maxweight : 1);
	err = plan_prepare(empty, c, size, 0, o, adm, &p, why, len);
	if (!err)
		cost_fill(&p, adm, &cost);
	free(adm);
	return err ? err : cost_out(&cost, out, out_size);
}

ARB_EXPORT
struct arbtable_plan *arbtable_plan_new(uint32_t maxweight)
{
	struct arbtable_plan *pl;
	unsigned int t;

	if (maxweight < 1 || maxweight > 255) {
		errno = EINVAL;
		return NULL;
	}
	pl = calloc(1, sizeof(*pl));
	if (!pl)
		return NULL;
	pl->maxweight = (u8)maxweight;
	for (t = 0; t < ARB_NTABLES; t++)
		arb_alloc_init(&pl->alloc[t], maxweight);
	memset(pl->table, ARB_NO_CLASS, sizeof(pl->table));
	return pl;
}

ARB_EXPORT
void arbtable_plan_free(struct arbtable_plan *pl)
{
	free(pl);
}

ARB_EXPORT
int arbtable_plan_admit(struct arbtable_plan *pl,
			const struct arbtable_cost_params *c, size_t size,
			uint32_t idx, const struct arbtable_class_opts *o,
			struct arbtable_cost *out, size_t out_size,
			char *why, size_t len)
{
	struct arb_admission *adm;
	struct arbtable_cost cost;
	struct arb_params p;
	int err;

	if (!pl || !c || !out || idx >= ARB_MAX_CLASSES)
		return -EINVAL;
	if (c->maxweight != pl->maxweight) {
		plan_why(why, len, "maxweight differs from the plan's");
		return -EINVAL;
	}
	if (pl->table[idx] != ARB_NO_CLASS) {
		plan_why(why, len, "class index already admitted");
		return -EEXIST;
	}
	adm = malloc(sizeof(*adm));
	if (!adm)
		return -ENOMEM;
	err = plan_prepare(pl->alloc, c, size, idx, o, adm, &p, why, len);
	if (!err) {
		memcpy(pl->alloc, adm->alloc, sizeof(pl->alloc));
		pl->table[idx] = adm->new_table;
		cost_fill(&p, adm, &cost);
	}
	free(adm);
	return err ? err : cost_out(&cost, out, out_size);
}

ARB_EXPORT
int arbtable_plan_release(struct arbtable_plan *pl, uint32_t idx)
{
	struct arb_moves mv;
	struct arb_reject rj;
	u8 t;

	if (!pl || idx >= ARB_MAX_CLASSES)
		return -EINVAL;
	t = pl->table[idx];
	if (t == ARB_NO_CLASS)
		return -ENOENT;
	if (arb_alloc_release(&pl->alloc[t], idx, &mv, &rj))
		return -EINVAL;
	pl->table[idx] = ARB_NO_CLASS;
	return 0;
}

ARB_EXPORT
int arbtable_plan_free_slots(const struct arbtable_plan *pl,
			     enum arbtable_table table)
{
	if (!pl || (unsigned int)table >= ARB_NTABLES)
		return -EINVAL;
	return (int)arb_alloc_free_slots(&pl->alloc[table]);
}

ARB_EXPORT
int arbtable_plan_check(const struct arbtable_plan *pl)
{
	unsigned int t;

	if (!pl)
		return -EINVAL;
	for (t = 0; t < ARB_NTABLES; t++)
		if (arb_alloc_check(&pl->alloc[t]))
			return -EUCLEAN;
	return 0;
}
