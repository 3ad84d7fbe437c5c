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
 * The reading of a live qdisc and the sizing parameters' JSON here are
 * request's too (arbtablectl_capacity.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arbtable/arbtable.h>
#include "arbt_print.h"
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

/* The sizing parameters, JSON only (text says them in each command's own
 * words); rates here are bit/s (the keys say _bps), as a scheduler's
 * resource counts them.
 */
void ctl_print_params(const struct arbt_cost_params *p)
{
	arbt_print_u64(ARBT_JSON, "rate_bps", NULL, p->rate * 8);
	arbt_print_u64(ARBT_JSON, "high_capacity_bps", NULL,
		       arbt_cost_high_capacity(p) * 8);
	arbt_print_uint(ARBT_JSON, "maxweight", NULL, p->maxweight);
	arbt_print_uint(ARBT_JSON, "mtu", NULL, p->mtu);
	arbt_print_uint(ARBT_JSON, "highlimit", NULL, p->highlimit);
	arbt_print_u64(ARBT_JSON, "strict_ceil_bps", NULL, p->strict_ceil * 8);
	arbt_print_u64(ARBT_JSON, "strict_cburst", NULL, p->strict_cburst);
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
			arbt_prog, dev);
		return EX_NOTARB;
	}
	if (cost_params(st, p)) {
		fprintf(stderr, "%s: %s: runs at link speed and the kernel reports no capacity for it\n",
			arbt_prog, dev);
		return EX_FAIL;
	}
	return EX_OK;
}

int ctl_capacity(struct arbtable *h, int argc, char **argv)
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
	arbt_print_start(ctl_json);
	arbt_print_str(ARBT_ANY, "dev", "%s: ", st.q.ifname);
	arbt_print_u64(ARBT_TEXT, NULL, "rate %" PRIu64 " bit/s", p.rate * 8);
	arbt_print_u64(ARBT_TEXT, NULL, ", HIGH guaranteed %" PRIu64 " bit/s",
		       c.high_rate * 8);
	ctl_print_params(&p);
	arbt_print_uint(ARBT_ANY, "classes_free", ", %u classes left\n",
			c.classes_free);
	for (t = 0; t < ARBTABLE_NTABLES; t++) {
		arbt_open_object(t == ARBTABLE_HIGH ? "high" : "low");
		arbt_print_str(ARBT_TEXT, NULL, "%s: ",
			       t == ARBTABLE_HIGH ? "HIGH" : "LOW");
		arbt_print_uint(ARBT_ANY, "free_slots",
				"%u free slots; requests that fit by distance:",
				c.free_slots[t]);
		arbt_open_object("fit_by_distance");
		for (d = 1; d <= ARBTABLE_SLOTS; d <<= 1) {
			char k[8], f[16];

			/* key "D", text " D:N" */
			snprintf(k, sizeof(k), "%u", d);
			snprintf(f, sizeof(f), " %u:%%u", d);
			arbt_print_uint(ARBT_ANY, k, f, fit_count(&c, t, d));
		}
		arbt_close_object();
		arbt_print_text("\n");
		if (t == ARBTABLE_HIGH) {
			arbt_print_uint(ARBT_JSON, "free_units", NULL,
					c.free_units);
			arbt_print_u64(ARBT_JSON, "free_guaranteed_bps", NULL,
				       c.free_rate * 8);
		}
		arbt_close_object();
	}
	if (!arbt_print_json())
		printf("HIGH: %u of %u weight units free, guaranteeing %" PRIu64
		       " bit/s\n", c.free_units, ARBTABLE_SLOTS * p.maxweight,
		       c.free_rate * 8);
	arbt_print_end();
	return EX_OK;
}
