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
#include <json-c/json.h>

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
		if (arbt_parse_u32(v, 10, &p->mtu) || p->mtu < MTU_MIN ||
		    p->mtu > MTU_MAX)
			ctl_usage("request: bad mtu \"%s\" (%u..%u bytes)", v,
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

/* The cost as JSON: the same keys in both forms. */
static void json_cost(struct json_object *o, const struct arbt_cost *c)
{
	ctl_jadd(o, "valid", json_object_new_boolean(1));
	ctl_jadd(o, "table", json_object_new_string(c->high ? "high" : "low"));
	ctl_jadd(o, "distance", json_object_new_int(c->distance));
	ctl_jadd(o, "slots", json_object_new_int(c->slots));
	ctl_jadd(o, "units", json_object_new_int(c->units));
	ctl_jadd(o, "guaranteed_bps",
		 json_object_new_uint64(c->units_rate * 8));
	ctl_jadd(o, "bound_ns", json_object_new_uint64(c->bound_ns));
}

static void print_cost(const char *prefix, const struct arbt_cost *c)
{
	printf("%s%s table, distance %u, %u slots, %u weight units", prefix,
	       c->high ? "HIGH" : "LOW", c->distance, c->slots, c->units);
	if (c->high)
		printf(" (guarantee %" PRIu64 " bit/s, bound %" PRIu64 " ns)",
		       c->units_rate * 8, c->bound_ns);
	printf("\n");
}

/* A request the sizing refuses whatever the table holds: exit 4. */
static int refused(int json, const char *dev, const struct arbt_cost_params *p,
		   const char *why)
{
	if (json) {
		struct json_object *o = ctl_jobj();

		if (dev)
			ctl_jadd(o, "dev", json_object_new_string(dev));
		else
			ctl_json_params(o, p);
		ctl_jadd(o, "valid", json_object_new_boolean(0));
		if (dev)
			ctl_jadd(o, "fits", json_object_new_boolean(0));
		ctl_jadd(o, "why", json_object_new_string(why));
		ctl_jemit(o);
	} else {
		printf("%s%srefused whatever the table holds: %s\n",
		       dev ? dev : "", dev ? ": " : "", why);
	}
	return EX_KERNEL;
}

static int request_devless(int json, const struct arbt_request *r,
			   struct arbt_cost_params *p)
{
	struct arbt_cost cost;
	char why[256];

	if (arbt_cost_request(p, r->rate, r->latency_ns, r->distance, r->share,
			      &cost, why, sizeof(why)))
		return refused(json, NULL, p, why);
	if (json) {
		struct json_object *o = ctl_jobj();

		ctl_json_params(o, p);
		json_cost(o, &cost);
		ctl_jemit(o);
		return EX_OK;
	}
	printf("link %" PRIu64 " bit/s, mtu %u, maxweight %u, highlimit %u",
	       p->rate * 8, p->mtu, p->maxweight, p->highlimit);
	if (p->strict_ceil)
		printf(", strict ceil %" PRIu64 " bit/s", p->strict_ceil * 8);
	printf(": HIGH guaranteed %" PRIu64 " bit/s\n",
	       arbt_cost_high_capacity(p) * 8);
	print_cost("", &cost);
	return EX_OK;
}

static int request_dev(struct arbtable *h, int json, const char *dev,
		       const struct arbt_request *r)
{
	static struct ctl_snap st;
	struct arbt_cost_params p;
	struct arbt_cost cost;
	struct capacity c;
	char why[256], pre[32];
	int rc, t, fits;

	rc = ctl_read_auto(h, dev, &st, &p);
	if (rc)
		return rc;
	ctl_capacity_of(&st, &p, &c);
	if (arbt_cost_request(&p, r->rate, r->latency_ns, r->distance, r->share,
			      &cost, why, sizeof(why)))
		return refused(json, st.q.ifname, &p, why);
	t = cost.high ? ARBTABLE_HIGH : ARBTABLE_LOW;
	fits = cost.slots <= c.free_slots[t] && c.classes_free > 0;
	if (json) {
		struct json_object *o = ctl_jobj();

		ctl_jadd(o, "dev", json_object_new_string(st.q.ifname));
		json_cost(o, &cost);
		ctl_jadd(o, "free_slots", json_object_new_int(c.free_slots[t]));
		ctl_jadd(o, "classes_free",
			 json_object_new_int(c.classes_free));
		ctl_jadd(o, "fits", json_object_new_boolean(fits));
		ctl_jemit(o);
		return EX_OK;
	}
	snprintf(pre, sizeof(pre), "%s: ", st.q.ifname);
	print_cost(pre, &cost);
	printf("%s now: %u of its slots free, %u classes left\n",
	       fits ? "fits" : "does not fit", c.free_slots[t],
	       c.classes_free);
	return EX_OK;
}

int ctl_request(struct arbtable *h, int json, int argc, char **argv)
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
		return request_devless(json, &r, &p);
	return request_dev(h, json, argv[0], &r);
}
