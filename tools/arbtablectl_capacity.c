// SPDX-License-Identifier: GPL-2.0
/*
 * arbtablectl capacity: what a node can still guarantee, in the units a
 * request costs (`request`, arbtablectl_request.c), so that a scheduler
 * counting them never places a tenant the kernel would refuse (DESIGN 6,
 * issue 17 item 3).
 *
 *   capacity DEV   free HIGH slots, and how many more requests of each
 *                  distance fit (floor(free / (64 / d)): the allocator keeps
 *                  the table normalized, so free slots of any spacing form
 *                  whole sets, Theorem 4); the HIGH weight units left and
 *                  the rate they guarantee; free LOW slots; classes left
 *
 * The reading of a live qdisc and the JSON helpers here are request's too
 * (arbtablectl_capacity.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arbtable/arbtable.h>
#include <json-c/json.h>

#include "arbtable_parse.h"
#include "arbtable_cost.h"
#include "arbtablectl.h"
#include "arbtablectl_capacity.h"

/* The qdisc's sizing parameters as the kernel uses them. */
static int cost_params(const struct ctl_snap *st,
		       struct arbt_cost_params *p)
{
	unsigned int i;

	memset(p, 0, sizeof(*p));
	p->rate = st->opts.rate;
	/* auto mode at link speed: the capacity the kernel's admissions
	 * use, from its own dump (a sysfs read would see the namespace
	 * sysfs was mounted in, not the one -n entered)
	 */
	if (!p->rate && (st->q.xstats_fields & ARBTABLE_QX_CAPACITY))
		p->rate = st->q.capacity;
	if (!p->rate)
		return -1;
	p->mtu = st->opts.mtu;
	p->maxweight = st->opts.maxweight;
	p->highlimit = st->opts.highlimit;
	for (i = 0; i < st->nclasses; i++) {
		const struct arbtable_class_opts *o = &st->classes[i].opts;

		if ((o->set & ARBTABLE_C_STRICT) && o->strict) {
			p->strict_ceil = o->ceil;
			p->strict_cburst = o->cburst;
		}
	}
	return 0;
}

void ctl_capacity_of(const struct ctl_snap *st,
		     const struct arbt_cost_params *p, struct capacity *c)
{
	uint32_t cap = ARBTABLE_SLOTS * p->maxweight, used = 0;
	unsigned int i, s, t;

	memset(c, 0, sizeof(*c));
	for (t = 0; t < ARBTABLE_NTABLES; t++)
		for (s = 0; s < ARBTABLE_SLOTS; s++)
			if (!st->q.table[t][s].minor || !st->q.table[t][s].weight)
				c->free_slots[t]++;
	for (i = 0; i < st->nclasses; i++)
		if (st->classes[i].i.slots[ARBTABLE_HIGH])
			used += st->classes[i].i.reserved_weight;
	c->free_units = used < cap ? cap - used : 0;
	c->free_rate = arbt_cost_units_rate(p, c->free_units);
	c->high_rate = arbt_cost_high_capacity(p);
	c->classes_free = st->nclasses < ARBTABLE_MAX_CLASSES ?
		ARBTABLE_MAX_CLASSES - st->nclasses : 0;
}

/* JSON through json-c, as the rest of arbtablectl's output; rates here are
 * bit/s (the keys say _bps), as a scheduler's resource counts them.
 */
struct json_object *ctl_jobj(void)
{
	struct json_object *o = json_object_new_object();

	if (!o) {
		fprintf(stderr, "%s: out of memory\n", ctl_prog);
		exit(EX_FAIL);
	}
	return o;
}

void ctl_jadd(struct json_object *o, const char *key, struct json_object *v)
{
	if (!v || json_object_object_add(o, key, v)) {
		fprintf(stderr, "%s: out of memory\n", ctl_prog);
		exit(EX_FAIL);
	}
}

void ctl_jemit(struct json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

void ctl_json_params(struct json_object *o, const struct arbt_cost_params *p)
{
	ctl_jadd(o, "rate_bps", json_object_new_uint64(p->rate * 8));
	ctl_jadd(o, "high_capacity_bps",
		 json_object_new_uint64(arbt_cost_high_capacity(p) * 8));
	ctl_jadd(o, "maxweight", json_object_new_int(p->maxweight));
	ctl_jadd(o, "mtu", json_object_new_int(p->mtu));
	ctl_jadd(o, "highlimit", json_object_new_int(p->highlimit));
	ctl_jadd(o, "strict_ceil_bps",
		 json_object_new_uint64(p->strict_ceil * 8));
	ctl_jadd(o, "strict_cburst", json_object_new_int64(p->strict_cburst));
}

/* Requests of distance d that still fit: whole sets of 64/d free slots,
 * as many as there are classes left.
 */
static unsigned int fit_count(const struct capacity *c, int t, unsigned int d)
{
	unsigned int k = c->free_slots[t] / (ARBTABLE_SLOTS / d);

	return k < c->classes_free ? k : c->classes_free;
}

int ctl_read_auto(struct arbtable *h, const char *dev,
		  struct ctl_snap *st, struct arbt_cost_params *p)
{
	int err = ctl_snap_read(h, dev, st);

	if (err)
		return ctl_failed(h, err, "capacity");
	if (st->opts.mode != ARBTABLE_MODE_AUTO) {
		fprintf(stderr, "%s: %s: a manual-mode qdisc: the administrator's table has no capacity to count\n",
			ctl_prog, dev);
		return EX_NOTARB;
	}
	if (cost_params(st, p)) {
		fprintf(stderr, "%s: %s: runs at link speed and the kernel reports no capacity for it\n",
			ctl_prog, dev);
		return EX_FAIL;
	}
	return EX_OK;
}

int ctl_capacity(struct arbtable *h, int json, int argc, char **argv)
{
	static struct ctl_snap st;
	struct arbt_cost_params p;
	struct capacity c;
	unsigned int d;
	int rc, t;

	if (argc != 1)
		ctl_usage("capacity: expected DEV");
	rc = ctl_read_auto(h, argv[0], &st, &p);
	if (rc)
		return rc;
	ctl_capacity_of(&st, &p, &c);
	if (json) {
		struct json_object *o = ctl_jobj();

		ctl_jadd(o, "dev", json_object_new_string(st.q.ifname));
		ctl_json_params(o, &p);
		ctl_jadd(o, "classes_free", json_object_new_int(c.classes_free));
		for (t = 0; t < ARBTABLE_NTABLES; t++) {
			struct json_object *tt = ctl_jobj(), *fit = ctl_jobj();
			char k[8];

			ctl_jadd(tt, "free_slots",
				 json_object_new_int(c.free_slots[t]));
			for (d = 1; d <= ARBTABLE_SLOTS; d <<= 1) {
				snprintf(k, sizeof(k), "%u", d);
				ctl_jadd(fit, k,
					 json_object_new_int(fit_count(&c, t, d)));
			}
			ctl_jadd(tt, "fit_by_distance", fit);
			if (t == ARBTABLE_HIGH) {
				ctl_jadd(tt, "free_units",
					 json_object_new_int(c.free_units));
				ctl_jadd(tt, "free_guaranteed_bps",
					 json_object_new_uint64(c.free_rate * 8));
			}
			ctl_jadd(o, t == ARBTABLE_HIGH ? "high" : "low", tt);
		}
		ctl_jemit(o);
		return EX_OK;
	}
	printf("%s: rate %" PRIu64 " bit/s, HIGH guaranteed %" PRIu64
	       " bit/s, %u classes left\n", st.q.ifname, p.rate * 8,
	       c.high_rate * 8, c.classes_free);
	for (t = 0; t < ARBTABLE_NTABLES; t++) {
		printf("%s: %u free slots; requests that fit by distance:",
		       t == ARBTABLE_HIGH ? "HIGH" : "LOW", c.free_slots[t]);
		for (d = 1; d <= ARBTABLE_SLOTS; d <<= 1)
			printf(" %u:%u", d, fit_count(&c, t, d));
		printf("\n");
	}
	printf("HIGH: %u of %u weight units free, guaranteeing %" PRIu64
	       " bit/s\n", c.free_units, ARBTABLE_SLOTS * p.maxweight,
	       c.free_rate * 8);
	return EX_OK;
}
