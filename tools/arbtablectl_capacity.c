// SPDX-License-Identifier: GPL-2.0
/*
 * arbtablectl capacity / request: what a node can still guarantee, and
 * what one request costs, in the same units, so that a scheduler counting
 * them never places a tenant the kernel would refuse (DESIGN 6,
 * issue 17 item 3).
 *
 *   capacity DEV   free HIGH slots, and how many more requests of each
 *                  distance fit (floor(free / (64 / d)): the allocator keeps
 *                  the table normalized, so free slots of any spacing form
 *                  whole sets, Theorem 4); the HIGH weight units left and
 *                  the rate they guarantee; free LOW slots; classes left
 *   request DEV rate R [latency L | distance D]
 *   request DEV share N [distance D]
 *                  the request's table, distance d, slots 64 / d and units,
 *                  sized by the module's own code (arbtable_cost.c), and
 *                  whether it fits now: slots <= free slots of its table
 *                  and fewer than 64 classes
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

/* The qdisc's sizing parameters as the kernel uses them. */
static int cost_params(const struct arbtable_state *st,
		       struct arbt_cost_params *p)
{
	unsigned int i;

	memset(p, 0, sizeof(*p));
	p->rate = st->opts.rate;
	if (!p->rate) {
		/* auto mode at link speed: the speed the kernel read */
		char path[64];
		long mbit = -1;
		FILE *f;

		snprintf(path, sizeof(path), "/sys/class/net/%s/speed",
			 st->ifname);
		f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%ld", &mbit) != 1)
				mbit = -1;
			fclose(f);
		}
		if (mbit <= 0)
			return -1;
		p->rate = (uint64_t)mbit * 125000;
	}
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

struct capacity {
	unsigned int	free_slots[ARBTABLE_NTABLES];
	uint32_t	free_units;	/* HIGH */
	uint64_t	free_rate;	/* HIGH, bytes/s */
	uint64_t	high_rate;	/* C_high, bytes/s */
	unsigned int	classes_free;
};

static void capacity_of(const struct arbtable_state *st,
			const struct arbt_cost_params *p, struct capacity *c)
{
	uint32_t cap = ARBTABLE_SLOTS * p->maxweight, used = 0;
	unsigned int i, s, t;

	memset(c, 0, sizeof(*c));
	for (t = 0; t < ARBTABLE_NTABLES; t++)
		for (s = 0; s < ARBTABLE_SLOTS; s++)
			if (!st->table[t][s].minor || !st->table[t][s].weight)
				c->free_slots[t]++;
	for (i = 0; i < st->nclasses; i++)
		if (st->classes[i].slots[ARBTABLE_HIGH])
			used += st->classes[i].reserved_weight;
	c->free_units = used < cap ? cap - used : 0;
	c->free_rate = arbt_cost_units_rate(p, c->free_units);
	c->high_rate = arbt_cost_high_capacity(p);
	c->classes_free = st->nclasses < ARBTABLE_MAX_CLASSES ?
		ARBTABLE_MAX_CLASSES - st->nclasses : 0;
}

/* JSON through json-c, as the rest of arbtablectl's output; rates here are
 * bit/s (the keys say _bps), as a scheduler's resource counts them.
 */
static struct json_object *jobj(void)
{
	struct json_object *o = json_object_new_object();

	if (!o) {
		fprintf(stderr, "%s: out of memory\n", ctl_prog);
		exit(EX_FAIL);
	}
	return o;
}

static void jadd(struct json_object *o, const char *key, struct json_object *v)
{
	if (!v || json_object_object_add(o, key, v)) {
		fprintf(stderr, "%s: out of memory\n", ctl_prog);
		exit(EX_FAIL);
	}
}

static void jemit(struct json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

/* Requests of distance d that still fit: whole sets of 64/d free slots,
 * as many as there are classes left.
 */
static unsigned int fit_count(const struct capacity *c, int t, unsigned int d)
{
	unsigned int k = c->free_slots[t] / (ARBTABLE_SLOTS / d);

	return k < c->classes_free ? k : c->classes_free;
}

static int read_auto(struct arbtable *h, const char *dev,
		     struct arbtable_state *st, struct arbt_cost_params *p)
{
	int err = arbtable_read(h, dev, st);

	if (err)
		return ctl_failed(h, err, "capacity");
	if (st->opts.mode != ARBTABLE_MODE_AUTO) {
		fprintf(stderr, "%s: %s: a manual-mode qdisc: the administrator's table has no capacity to count\n",
			ctl_prog, dev);
		return EX_NOTARB;
	}
	if (cost_params(st, p)) {
		fprintf(stderr, "%s: %s: runs at link speed and its speed is unknown\n",
			ctl_prog, dev);
		return EX_FAIL;
	}
	return EX_OK;
}

int ctl_capacity(struct arbtable *h, int json, int argc, char **argv)
{
	static struct arbtable_state st;
	struct arbt_cost_params p;
	struct capacity c;
	unsigned int d;
	int rc, t;

	if (argc != 1)
		ctl_usage("capacity: expected DEV");
	rc = read_auto(h, argv[0], &st, &p);
	if (rc)
		return rc;
	capacity_of(&st, &p, &c);
	if (json) {
		struct json_object *o = jobj();

		jadd(o, "dev", json_object_new_string(st.ifname));
		jadd(o, "rate_bps", json_object_new_uint64(p.rate * 8));
		jadd(o, "high_capacity_bps",
		     json_object_new_uint64(c.high_rate * 8));
		jadd(o, "maxweight", json_object_new_int(p.maxweight));
		jadd(o, "classes_free", json_object_new_int(c.classes_free));
		for (t = 0; t < ARBTABLE_NTABLES; t++) {
			struct json_object *tt = jobj(), *fit = jobj();
			char k[8];

			jadd(tt, "free_slots",
			     json_object_new_int(c.free_slots[t]));
			for (d = 1; d <= ARBTABLE_SLOTS; d <<= 1) {
				snprintf(k, sizeof(k), "%u", d);
				jadd(fit, k,
				     json_object_new_int(fit_count(&c, t, d)));
			}
			jadd(tt, "fit_by_distance", fit);
			if (t == ARBTABLE_HIGH) {
				jadd(tt, "free_units",
				     json_object_new_int(c.free_units));
				jadd(tt, "free_guaranteed_bps",
				     json_object_new_uint64(c.free_rate * 8));
			}
			jadd(o, t == ARBTABLE_HIGH ? "high" : "low", tt);
		}
		jemit(o);
		return EX_OK;
	}
	printf("%s: rate %" PRIu64 " bit/s, HIGH guaranteed %" PRIu64
	       " bit/s, %u classes left\n", st.ifname, p.rate * 8,
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

int ctl_request(struct arbtable *h, int json, int argc, char **argv)
{
	static struct arbtable_state st;
	struct arbt_cost_params p;
	uint64_t rate = 0, lat = 0;
	uint32_t dist = 0, share = 0;
	struct arbt_cost cost;
	struct capacity c;
	char why[256];
	int rc, i, t, fits;

	if (argc < 3)
		ctl_usage("request: expected DEV rate RATE [latency TIME | distance D] or DEV share N [distance D]");
	for (i = 1; i < argc; i += 2) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			ctl_usage("request: %s needs a value", k);
		if (!strcmp(k, "rate")) {
			if (arbt_parse_rate(v, &rate) || !rate)
				ctl_usage("request: bad rate \"%s\"", v);
		} else if (!strcmp(k, "latency")) {
			if (arbt_parse_time(v, &lat) || !lat)
				ctl_usage("request: bad latency \"%s\"", v);
		} else if (!strcmp(k, "distance")) {
			if (arbt_parse_u32(v, 10, &dist) || !dist)
				ctl_usage("request: bad distance \"%s\"", v);
		} else if (!strcmp(k, "share")) {
			if (arbt_parse_u32(v, 10, &share) || !share ||
			    share > 255)
				ctl_usage("request: bad share \"%s\" (1..255)", v);
		} else {
			ctl_usage("request: unknown option \"%s\" (rate, latency, distance, share)",
				  k);
		}
	}
	if (rate && share)
		ctl_usage("request: give either rate (HIGH table) or share (LOW table), not both");
	if (lat && dist)
		ctl_usage("request: give latency or distance, not both");
	if (share && lat)
		ctl_usage("request: latency bounds are for rate classes; give a share a distance instead");
	if (!rate && !share)
		ctl_usage("request: give a rate or a share");
	rc = read_auto(h, argv[0], &st, &p);
	if (rc)
		return rc;
	capacity_of(&st, &p, &c);
	if (arbt_cost_request(&p, rate, lat, dist, share, &cost, why,
			      sizeof(why))) {
		if (json) {
			struct json_object *o = jobj();

			jadd(o, "dev", json_object_new_string(st.ifname));
			jadd(o, "valid", json_object_new_boolean(0));
			jadd(o, "fits", json_object_new_boolean(0));
			jadd(o, "why", json_object_new_string(why));
			jemit(o);
		} else {
			printf("%s: refused whatever the table holds: %s\n",
			       st.ifname, why);
		}
		return EX_KERNEL;
	}
	t = cost.high ? ARBTABLE_HIGH : ARBTABLE_LOW;
	fits = cost.slots <= c.free_slots[t] && c.classes_free > 0;
	if (json) {
		struct json_object *o = jobj();

		jadd(o, "dev", json_object_new_string(st.ifname));
		jadd(o, "valid", json_object_new_boolean(1));
		jadd(o, "table", json_object_new_string(cost.high ? "high" :
								     "low"));
		jadd(o, "distance", json_object_new_int(cost.distance));
		jadd(o, "slots", json_object_new_int(cost.slots));
		jadd(o, "units", json_object_new_int(cost.units));
		jadd(o, "guaranteed_bps",
		     json_object_new_uint64(cost.units_rate * 8));
		jadd(o, "bound_ns", json_object_new_uint64(cost.bound_ns));
		jadd(o, "free_slots", json_object_new_int(c.free_slots[t]));
		jadd(o, "classes_free", json_object_new_int(c.classes_free));
		jadd(o, "fits", json_object_new_boolean(fits));
		jemit(o);
		return EX_OK;
	}
	printf("%s: %s table, distance %u, %u slots, %u weight units",
	       st.ifname, cost.high ? "HIGH" : "LOW", cost.distance,
	       cost.slots, cost.units);
	if (cost.high)
		printf(" (guarantee %" PRIu64 " bit/s, bound %" PRIu64 " ns)",
		       cost.units_rate * 8, cost.bound_ns);
	printf("\n%s now: %u of its slots free, %u classes left\n",
	       fits ? "fits" : "does not fit", c.free_slots[t],
	       c.classes_free);
	return EX_OK;
}
