// SPDX-License-Identifier: GPL-2.0
/*
 * arbtablectl request: what one request costs, sized by the module's own
 * code (arbtable_cost.c), in the units `capacity` counts.
 *
 *   request DEV rate R [latency L | distance D]
 *   request DEV share N [distance D]
 *                  on DEV's qdisc: the cost, and whether it fits now
 *                  (slots <= free slots of its table, a class left)
 *   request rate R [latency L | distance D] [QDISC-PARAMETERS]
 *   request share N [distance D] [QDISC-PARAMETERS]
 *                  without a node (a scheduler, an operator planning):
 *                  the same cost for a qdisc given by link, mtu,
 *                  maxweight, highlimit, strictceil and strictcburst
 *
 * Both forms size through arbt_cost_request() on the same parameter
 * struct; they differ only in where the parameters come from, so the
 * device-less answer for a qdisc's parameters is the device form's.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <arbtable/arbtable.h>
#include "arbt_print.h"
#include "arbtable_parse.h"
#include "arbtable_request.h"
#include "arbtable_cost.h"
#include "arbtablectl.h"
#include "arbtablectl_capacity.h"

/*
 * Device-less defaults: the kernel's own for a qdisc created without
 * options (tc-arbtable.8) on a 10 Gbit/s Ethernet NIC with a 1500-byte
 * MTU and 64 KiB GSO skbs (the mtu it follows: arbt_cost_default_mtu).  The link has no kernel default (it is read from the NIC), so the
 * 10 Gbit/s is this command's choice, printed with every answer.
 */
#define DEVLESS_LINK		1250000000ULL	/* bytes/s: 10gbit */
#define DEVLESS_MAXWEIGHT	255
#define DEVLESS_HIGHLIMIT	16
#define MTU_MIN			64		/* ARB_MTU_MIN */
#define MTU_MAX			(1024U * 1024)	/* ARB_MTU_MAX */

static const char *const req_keys[] = {
	"rate", "latency", "distance", "share", NULL,
};

#define DEVLESS_PARAMS \
	"; link, mtu, maxweight, highlimit, strictceil, strictcburst"
static const char *const param_keys[] = {
	"link", "mtu", "maxweight", "highlimit", "strictceil", "strictcburst",
	NULL,
};

static int in(const char *const *keys, const char *k)
{
	for (; *keys; keys++)
		if (!strcmp(*keys, k))
			return 1;
	return 0;
}

int ctl_request_devless(int argc, char **argv)
{
	return argc > 0 && (in(req_keys, argv[0]) || in(param_keys, argv[0]));
}

static void parse_param(const char *k, const char *v,
			struct arbt_cost_params *p)
{
	uint32_t u;

	if (!strcmp(k, "link")) {
		if (arbt_parse_rate(v, &p->rate) || !p->rate)
			ctl_usage("request: bad link \"%s\" (a rate: 10gbit)", v);
	} else if (!strcmp(k, "mtu")) {
		if (arbt_parse_size(v, &p->mtu) || p->mtu < MTU_MIN ||
		    p->mtu > MTU_MAX)
			ctl_usage("request: bad mtu \"%s\" (a tc size, %u..%u bytes)", v,
				  MTU_MIN, MTU_MAX);
	} else if (!strcmp(k, "maxweight")) {
		if (arbt_parse_u32(v, 10, &u) || !u || u > 255)
			ctl_usage("request: bad maxweight \"%s\" (1..255)", v);
		p->maxweight = u;
	} else if (!strcmp(k, "highlimit")) {
		if (arbt_parse_u32(v, 10, &u) || u > 255)
			ctl_usage("request: bad highlimit \"%s\" (0..255)", v);
		p->highlimit = u;
	} else if (!strcmp(k, "strictceil")) {
		if (arbt_parse_rate(v, &p->strict_ceil) || !p->strict_ceil)
			ctl_usage("request: bad strictceil \"%s\" (a rate)", v);
	} else {
		if (arbt_parse_size(v, &p->strict_cburst) || !p->strict_cburst)
			ctl_usage("request: bad strictcburst \"%s\" (bytes, tc sizes: 30k)",
				  v);
	}
}

/* One option's value; what the options ask for together is checked
 * after (lib/arbtable_request.c, as arbtable-cni and arbsim check it)
 */
static void parse_req(const char *k, const char *v, struct arbt_request *r)
{
	if (!strcmp(k, "rate")) {
		if (arbt_parse_rate(v, &r->rate))
			ctl_usage("request: bad rate \"%s\"", v);
		r->given |= ARBT_RQ_RATE;
	} else if (!strcmp(k, "latency")) {
		if (arbt_parse_time(v, &r->latency_ns))
			ctl_usage("request: bad latency \"%s\"", v);
		r->given |= ARBT_RQ_LATENCY;
	} else if (!strcmp(k, "distance")) {
		if (arbt_parse_u32(v, 10, &r->distance))
			ctl_usage("request: bad distance \"%s\"", v);
		r->given |= ARBT_RQ_DISTANCE;
	} else {
		if (arbt_parse_u32(v, 10, &r->share))
			ctl_usage("request: bad share \"%s\" (1..255)", v);
		r->given |= ARBT_RQ_SHARE;
	}
}

/* KEY VALUE pairs; the qdisc's parameters only without a device (with
 * one they are the qdisc's own, read from the kernel).
 */
static void parse_args(int argc, char **argv, int devless,
		       struct arbt_request *r, struct arbt_cost_params *p)
{
	const char *why;
	int i;

	for (i = 0; i < argc; i += 2) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int j;

		/* a repeated option is refused, as tc's q_ets does */
		for (j = 0; j < i; j += 2)
			if (!strcmp(argv[j], k))
				ctl_usage("request: duplicate \"%s\"", k);

		if (in(req_keys, k)) {
			if (!v)
				ctl_usage("request: %s needs a value", k);
			parse_req(k, v, r);
		} else if (in(param_keys, k)) {
			if (!devless)
				ctl_usage("request: %s is the qdisc's own on a device; leave out DEV to give it",
					  k);
			if (!v)
				ctl_usage("request: %s needs a value", k);
			parse_param(k, v, p);
		} else {
			ctl_usage("request: unknown option \"%s\" (rate, latency, distance, share%s)",
				  k, devless ? DEVLESS_PARAMS : "");
		}
	}
	why = arbt_request_check_new(r, 0, ARBT_RQ_NEED_RESV);
	if (why)
		ctl_usage("request: %s", why);
	if (!devless)
		return;
	if (!p->mtu)
		p->mtu = arbt_cost_default_mtu(p->rate);
	if (p->strict_cburst && !p->strict_ceil)
		ctl_usage("request: strictcburst needs strictceil");
	if (p->strict_ceil >= p->rate)
		ctl_usage("request: strictceil must be below the link rate");
	if (!arbt_cost_high_capacity(p))
		ctl_usage("request: these qdisc parameters leave the HIGH table no rate");
}

/* The cost: the same keys in both forms. */
static void print_cost(const struct arbt_cost *c)
{
	/* what a LOW table's class has no use for, JSON still gives */
	enum arbt_out high_only = c->high ? ARBT_ANY : ARBT_JSON;

	arbt_print_bool(ARBT_JSON, "valid", NULL, 1);
	arbt_print_str(ARBT_JSON, "table", NULL, c->high ? "high" : "low");
	arbt_print_str(ARBT_TEXT, NULL, "%s table", c->high ? "HIGH" : "LOW");
	arbt_print_uint(ARBT_ANY, "distance", ", distance %u", c->distance);
	arbt_print_uint(ARBT_ANY, "slots", ", %u slots", c->slots);
	arbt_print_uint(ARBT_ANY, "units", ", %u weight units", c->units);
	arbt_print_u64(high_only, "guaranteed_bps",
		       " (guarantee %" PRIu64 " bit/s", c->units_rate * 8);
	arbt_print_u64(high_only, "bound_ns", ", bound %" PRIu64 " ns)",
		       c->bound_ns);
	arbt_print_text("\n");
}

/* A request the sizing refuses whatever the table holds: exit 4. */
static int refused(const char *dev, const struct arbt_cost_params *p,
		   const char *why)
{
	arbt_print_start(ctl_json);
	if (dev)
		arbt_print_str(ARBT_ANY, "dev", "%s: ", dev);
	else
		ctl_print_params(p);
	arbt_print_bool(ARBT_JSON, "valid", NULL, 0);
	if (dev)
		arbt_print_bool(ARBT_JSON, "fits", NULL, 0);
	arbt_print_str(ARBT_ANY, "why", "refused whatever the table holds: %s\n",
		       why);
	arbt_print_end();
	return EX_KERNEL;
}

static int request_devless(const struct arbt_request *r,
			   struct arbt_cost_params *p)
{
	struct arbt_cost cost;
	char why[256];

	if (arbt_cost_request(p, r->rate, r->latency_ns, r->distance, r->share,
			      &cost, why, sizeof(why)))
		return refused(NULL, p, why);
	arbt_print_start(ctl_json);
	ctl_print_params(p);
	if (!arbt_print_json()) {
		printf("link %" PRIu64 " bit/s, mtu %u, maxweight %u, highlimit %u",
		       p->rate * 8, p->mtu, p->maxweight, p->highlimit);
		if (p->strict_ceil)
			printf(", strict ceil %" PRIu64 " bit/s",
			       p->strict_ceil * 8);
		printf(": HIGH guaranteed %" PRIu64 " bit/s\n",
		       arbt_cost_high_capacity(p) * 8);
	}
	print_cost(&cost);
	arbt_print_end();
	return EX_OK;
}

static int request_dev(struct arbtable *h, const char *dev,
		       const struct arbt_request *r)
{
	static struct ctl_snap st;
	struct arbt_cost_params p;
	struct arbt_cost cost;
	struct capacity c;
	char why[256];
	int rc, t, fits;

	rc = ctl_read_auto(h, dev, &st, &p);
	if (rc)
		return rc;
	ctl_capacity_of(&st, &p, &c);
	if (arbt_cost_request(&p, r->rate, r->latency_ns, r->distance, r->share,
			      &cost, why, sizeof(why)))
		return refused(st.q.ifname, &p, why);
	t = cost.high ? ARBTABLE_HIGH : ARBTABLE_LOW;
	fits = cost.slots <= c.free_slots[t] && c.classes_free > 0;
	arbt_print_start(ctl_json);
	arbt_print_str(ARBT_ANY, "dev", "%s: ", st.q.ifname);
	print_cost(&cost);
	arbt_print_str(ARBT_TEXT, NULL, "%s now: ", fits ? "fits" : "does not fit");
	arbt_print_uint(ARBT_ANY, "free_slots", "%u of its slots free",
			c.free_slots[t]);
	arbt_print_uint(ARBT_ANY, "classes_free", ", %u classes left\n",
			c.classes_free);
	arbt_print_bool(ARBT_JSON, "fits", NULL, fits);
	arbt_print_end();
	return EX_OK;
}

int ctl_request(struct arbtable *h, int argc, char **argv)
{
	struct arbt_cost_params p = {
		.rate = DEVLESS_LINK, .mtu = 0,	/* followed, below */
		.maxweight = DEVLESS_MAXWEIGHT, .highlimit = DEVLESS_HIGHLIMIT,
	};
	int devless = ctl_request_devless(argc, argv);
	struct arbt_request r = { 0 };

	if (argc < 2)
		ctl_usage("request: expected [DEV] rate RATE [latency TIME | distance D] or [DEV] share N [distance D]");
	parse_args(argc - !devless, argv + !devless, devless, &r, &p);
	if (devless)
		return request_devless(&r, &p);
	return request_dev(h, argv[0], &r);
}
