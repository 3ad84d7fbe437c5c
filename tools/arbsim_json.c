// SPDX-License-Identifier: GPL-2.0
/*
 * arbsim_json.c - the JSON report, written with json-c (arbt_print.c).
 * Keys are those of tc -j and arbtablectl --json for the same quantities
 * (tc/q_arbtable.c, tools/arbtablectl_show.c): class ids as
 * "1:10" strings, "handle" for a class's own id and "class" where one is
 * named; the options under their option names (rate, latency, distance,
 * share, ceil, cburst, strict), what the allocator chose under other names
 * (allocated_distance, reserved_rate, guaranteed_rate, reserved_weight,
 * guaranteed_bound, current_bound) and what was measured under yet others
 * (max_hol_wait, byte_share, ...). Rates bytes/s, times ns, sizes bytes.
 */
#include <stdio.h>

#include <json-c/json.h>

#include "arbt_print.h"
#include "arbsim.h"

static void jput_classid(struct json_object *o, const char *key, const struct sim *s,
			 u32 minor)
{
	char b[16];

	arbt_jput_str(o, key, arbt_fmt_classid(s->major, minor, b, sizeof(b)));
}

/* a bound in ns; null where the class has none */
static void jput_bound(struct json_object *o, const char *key, u64 ns)
{
	if (ns == ARB_BOUND_NONE)
		arbt_jput_null(o, key);
	else
		arbt_jput_u64(o, key, ns);
}

static struct json_object *json_qdisc(struct sim *s)
{
	struct json_object *q = arbt_jobj();
	struct arb_params p;
	char b[16];

	snprintf(b, sizeof(b), "%x:", s->major);
	arbt_jput_str(q, "handle", b);
	arbt_jput_str(q, "mode", s->autom ? "auto" : "manual");
	arbt_jput_u64(q, "rate", s->rate);
	arbt_jput_u64(q, "highlimit", s->highlimit);
	arbt_jput_str(q, "accounting",
		      s->accounting == ARB_ACCT_IBA ? "iba" : "deficit");
	arbt_jput_u64(q, "mtu", s->mtu);
	arbt_jput_u64(q, "maxweight", s->maxweight);
	arbt_jput_u64(q, "burst", s->burst);
	if (s->autom) {
		strict_params(s, &p);
		arbt_jput_u64(q, "high_capacity", arb_high_capacity(&p));
		arbt_jput_u64(q, "capacity_units", 64U * s->maxweight);
	}
	return q;
}

static struct json_object *json_decision(struct sim *s, const struct decision *d)
{
	struct json_object *j = arbt_jobj();

	arbt_jput_int(j, "line", d->line);
	arbt_jput_str(j, "cmd", d->cmd);
	if (d->minor)
		jput_classid(j, "class", s, d->minor);
	arbt_jput_str(j, "result", d->ok ? "ok" : "rejected");
	arbt_jput_str(j, "text", d->text);
	if (d->ok && d->admission) {
		if (d->table == ARB_NO_CLASS)
			arbt_jput_null(j, "table");
		else
			arbt_jput_str(j, "table", tname(d->table));
		arbt_jput_u64(j, "allocated_distance", d->distance);
		arbt_jput_u64(j, "reserved_weight", d->weight);
		arbt_jput(j, "slots", arbt_jslots(d->slots));
		if (d->table == ARB_HIGH)
			jput_bound(j, "guaranteed_bound", d->bound_ns);
		arbt_jput_u64(j, "swaps", d->moves);
	}
	return j;
}

static struct json_object *json_class(struct sim *s, struct sim_class *c)
{
	struct json_object *j = arbt_jobj();

	jput_classid(j, "handle", s, c->minor);
	/* the options, as tc -j prints them: only those given */
	if (c->strict)
		arbt_jput_bool(j, "strict", true);
	if (c->ceil)
		arbt_jput_u64(j, "ceil", c->ceil);
	if (c->cburst)
		arbt_jput_u64(j, "cburst", c->cburst);
	if (c->resv.rate)
		arbt_jput_u64(j, "rate", c->resv.rate);
	if (c->resv.latency)
		arbt_jput_u64(j, "latency", c->resv.latency);
	if (c->resv.distance)
		arbt_jput_u64(j, "distance", c->resv.distance);
	if (c->resv.share)
		arbt_jput_u64(j, "share", c->resv.share);
	/* what the allocator gave it */
	if (c->table == ARB_NO_CLASS)
		arbt_jput_null(j, "table");
	else
		arbt_jput_str(j, "table", tname(c->table));
	arbt_jput_u64(j, "allocated_distance",
		      c->table != ARB_NO_CLASS ? c->distance : 0);
	arbt_jput(j, "high_slots", arbt_jslots(arb_class_slots(&s->arb, ARB_HIGH, c->index)));
	arbt_jput(j, "low_slots", arbt_jslots(arb_class_slots(&s->arb, ARB_LOW, c->index)));
	arbt_jput_u64(j, "high_weight", class_weight(s, ARB_HIGH, c->index));
	arbt_jput_u64(j, "low_weight", class_weight(s, ARB_LOW, c->index));
	if (c->table == ARB_HIGH) {
		arbt_jput_u64(j, "reserved_rate", c->resv.rate);
		arbt_jput_u64(j, "guaranteed_rate", class_reserved(s, c));
		jput_bound(j, "guaranteed_bound", c->bound_ns);
		jput_bound(j, "current_bound", cur_bound(s, c));
	}
	/* what the simulated traffic measured */
	arbt_jput_bool(j, "traffic", c->tr.on);
	if (c->tr.on) {
		arbt_jput_u64(j, "packets", c->pkts);
		arbt_jput_u64(j, "bytes", c->bytes);
		arbt_jput_frac(j, "byte_share", s->total_bytes ?
			       (double)c->bytes / (double)s->total_bytes : 0);
		arbt_jput_u64(j, "bytes_high", c->tbytes[ARB_HIGH]);
		arbt_jput_u64(j, "bytes_low", c->tbytes[ARB_LOW]);
		arbt_jput_u64(j, "bytes_strict", c->tbytes[ARB_STRICT]);
		arbt_jput_u64(j, "bytes_slotless", c->tbytes[ARB_SLOTLESS]);
		arbt_jput_u64(j, "worst_gap_bytes", c->gap_max);
		arbt_jput_u64(j, "worst_gap_ns", gap_ns(s, c->gap_max));
		arbt_jput_u64(j, "max_hol_wait", c->max_hol);
		arbt_jput_u64(j, "throttled", c->nthrottled);
		arbt_jput_u64(j, "drops", c->tr.drops);
	}
	return j;
}

static struct json_object *json_tables(const struct sim *s)
{
	struct json_object *o = arbt_jobj(), *a;
	unsigned int k, t;

	for (t = 0; t < ARB_NTABLES; t++) {
		const struct arb_table *tb = &s->arb.tbl[t];

		a = arbt_jarr();
		arbt_jput(o, table_name[t], a);
		for (k = 0; k < ARB_SLOTS; k++) {
			struct json_object *e;

			if (!tb->weight[k])
				continue;
			e = arbt_jobj();
			arbt_jput_u64(e, "slot", k);
			jput_classid(e, "class", s, s->cls[tb->cls[k]].minor);
			arbt_jput_u64(e, "weight", tb->weight[k]);
			arbt_jadd(a, e);
		}
	}
	return o;
}

static struct json_object *json_unclassified(const struct sim *s)
{
	struct json_object *o = arbt_jobj(), *a;
	unsigned int k;

	arbt_jput_u64(o, "packets", s->uncl_pkts);
	arbt_jput_u64(o, "bytes", s->uncl_bytes);
	a = arbt_jarr();
	arbt_jput(o, "sources", a);
	for (k = 0; k < s->nuncl; k++) {
		char b[16];

		arbt_fmt_classid(s->major, s->uncl[k].minor, b, sizeof(b));
		arbt_jadd(a, json_object_new_string(b));
	}
	return o;
}

/* per table, the classes with traffic: weight and byte shares */
static struct json_object *json_shares(const struct sim *s,
				       const unsigned int *idx, unsigned int n)
{
	struct json_object *o = arbt_jobj(), *a;
	unsigned int k, t;

	for (t = 0; t < ARB_NTABLES; t++) {
		u64 tw = table_weight(s, t), tbt = table_bytes(s, t);

		a = arbt_jarr();
		arbt_jput(o, table_name[t], a);
		for (k = 0; k < n; k++) {
			const struct sim_class *c = &s->cls[idx[k]];
			u64 w = class_weight(s, t, c->index);
			double ws, bs;
			struct json_object *e;

			if (!w || !c->tr.on)
				continue;
			ws = tw ? (double)w / (double)tw : 0;
			bs = tbt ? (double)c->tbytes[t] / (double)tbt : 0;
			e = arbt_jobj();
			jput_classid(e, "class", s, c->minor);
			arbt_jput_u64(e, "weight", w);
			arbt_jput_frac(e, "weight_share", ws);
			arbt_jput_u64(e, "bytes", c->tbytes[t]);
			arbt_jput_frac(e, "byte_share", bs);
			arbt_jput_frac(e, "diff", bs - ws);
			arbt_jadd(a, e);
		}
	}
	return o;
}

static struct json_object *json_order(const struct sim *s)
{
	struct json_object *a = arbt_jarr();
	unsigned int i;

	for (i = 0; i < s->norder; i++) {
		const struct order_ent *oe = &s->order[i];
		struct json_object *e = arbt_jobj();

		arbt_jput_u64(e, "seq", i + 1);
		arbt_jput_u64(e, "time_ns", oe->t);
		jput_classid(e, "class", s, oe->minor);
		arbt_jput_str(e, "table", table_name[oe->table]);
		arbt_jput_u64(e, "slot", oe->slot);
		arbt_jput_int(e, "credit", oe->credit);
		arbt_jput_u64(e, "len", oe->len);
		arbt_jadd(a, e);
	}
	return a;
}

static struct json_object *json_sim(const struct sim *s)
{
	struct json_object *o = arbt_jobj();

	arbt_jput_u64(o, "packets", s->sent);
	arbt_jput_u64(o, "bytes", s->total_bytes);
	arbt_jput_u64(o, "duration_ns", s->now);
	arbt_jput_u64(o, "seed", s->seed);
	arbt_jput_bool(o, "stopped_early", s->stopped_early);
	arbt_jput_u64(o, "swaps", s->swaps);
	return o;
}

void print_json(struct sim *s)
{
	unsigned int idx[ARB_MAX_CLASSES], n, i, k;
	struct json_object *root = arbt_jobj(), *a;

	n = sorted_classes(s, idx);
	arbt_jput(root, "qdisc", json_qdisc(s));

	a = arbt_jarr();
	arbt_jput(root, "decisions", a);
	for (i = 0; i < s->ndec; i++)
		arbt_jadd(a, json_decision(s, &s->dec[i]));
	arbt_jput(root, "tables", json_tables(s));

	a = arbt_jarr();
	arbt_jput(root, "classes", a);
	for (k = 0; k < n; k++)
		arbt_jadd(a, json_class(s, &s->cls[idx[k]]));
	arbt_jput(root, "unclassified", json_unclassified(s));
	arbt_jput(root, "shares", json_shares(s, idx, n));
	arbt_jput(root, "order", json_order(s));
	arbt_jput(root, "sim", json_sim(s));
	arbt_jprint(root);
}
