// SPDX-License-Identifier: GPL-2.0
/*
 * arbtablectl show: one read of a device's qdisc, as text (the two
 * tables drawn slot by slot, a line per class) or as tc -j's JSON.
 *
 *   show DEV
 *
 * The time, size and class-table words here are watch's too.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include <arbtable/arbtable.h>

#include "arbt_print.h"
#include "arbtablectl.h"

const char *ctl_fmt_time(uint64_t ns, char *buf, size_t size)
{
	if (ns >= 1000000000ull)
		snprintf(buf, size, "%.4gs", ns / 1e9);
	else if (ns >= 1000000ull)
		snprintf(buf, size, "%.4gms", ns / 1e6);
	else if (ns >= 1000ull)
		snprintf(buf, size, "%.4gus", ns / 1e3);
	else
		snprintf(buf, size, "%" PRIu64 "ns", ns);
	return buf;
}

const char *ctl_fmt_size(uint64_t b, char *buf, size_t size)
{
	if (b >= 1048576)
		snprintf(buf, size, "%.3gMb", b / 1048576.);
	else if (b >= 1024)
		snprintf(buf, size, "%.3gKb", b / 1024.);
	else
		snprintf(buf, size, "%" PRIu64 "b", b);
	return buf;
}

static const char *table_name[ARBTABLE_NTABLES] = { "high", "low" };

static uint64_t used_mask(const struct ctl_snap *st, int t)
{
	uint64_t m = 0;
	int s;

	for (s = 0; s < ARBTABLE_SLOTS; s++)
		if (st->q.table[t][s].minor && st->q.table[t][s].weight)
			m |= 1ull << s;
	return m;
}

/* Number of whole free sets {r, r+d, ...} at each distance d = 2^k. */
static void free_sets(uint64_t used, unsigned int count[7])
{
	int k, r, s;

	for (k = 0; k < 7; k++) {
		int d = 1 << k;

		count[k] = 0;
		for (r = 0; r < d; r++) {
			int ok = 1;

			for (s = r; s < ARBTABLE_SLOTS; s += d)
				if (used & (1ull << s))
					ok = 0;
			count[k] += ok;
		}
	}
}

const char *ctl_class_table(const struct ctl_class *c)
{
	if (c->i.slots[ARBTABLE_HIGH] && c->i.slots[ARBTABLE_LOW])
		return "both";
	if (c->i.slots[ARBTABLE_HIGH])
		return "high";
	if (c->i.slots[ARBTABLE_LOW])
		return "low";
	if ((c->opts.set & ARBTABLE_C_STRICT) && c->opts.strict)
		return "strict";
	return "-";
}

/*
 * JSON, built with json-c. The keys and their shape are tc -j's (the
 * plugin's, tc/q_arbtable.c): a qdisc object with "options", its stats and
 * xstats beside them; class objects with their options beside "handle"
 * and what is measured or allocated inside "stats". Class ids are tc
 * class id strings ("1:10"), rates bytes/s, times ns, sizes bytes.
 * Documentation/arbtablectl.8 lists them.
 */

/* "1:10"; "" for none (minor 0) */
static struct json_object *jclassid(uint32_t handle, uint32_t minor)
{
	char b[16] = "";

	if (minor)
		ctl_fmt_classid(ARBTABLE_CLASSID(ARBTABLE_MAJOR(handle), minor),
				b, sizeof(b));
	return json_object_new_string(b);
}

/* "kind", "handle", "dev", "root"/"parent" of tc's qdisc object */
void ctl_json_qdisc_id(struct json_object *q, const struct ctl_snap *st)
{
	char b[16];

	arbt_jput_str(q, "kind", "arbtable");
	snprintf(b, sizeof(b), "%x:", ARBTABLE_MAJOR(st->q.handle));
	arbt_jput_str(q, "handle", b);
	arbt_jput_str(q, "dev", st->q.ifname);
	if (st->q.parent == 0xffffffffu)
		arbt_jput_bool(q, "root", 1);
	else
		arbt_jput_str(q, "parent", ctl_fmt_classid(st->q.parent, b, sizeof(b)));
}

/* The used slots of table @t: {"slot", "class", "weight"} as in the
 * options.
 */
static struct json_object *json_slots(const struct ctl_snap *st, int t)
{
	struct json_object *a = arbt_jarr();
	uint64_t used = used_mask(st, t);
	int s;

	for (s = 0; s < ARBTABLE_SLOTS; s++) {
		struct json_object *e;

		if (!(used & (1ull << s)))
			continue;
		e = arbt_jobj();
		arbt_jput_int(e, "slot", s);
		arbt_jput(e, "class", jclassid(st->q.handle,
					       st->q.table[t][s].minor));
		arbt_jput_u64(e, "weight", st->q.table[t][s].weight);
		arbt_jadd(a, e);
	}
	return a;
}

/* the qdisc's "options", as tc -j prints them */
static struct json_object *json_qdisc_opts(const struct ctl_snap *st)
{
	const struct arbtable_qdisc_opts *o = &st->opts;
	struct json_object *j = arbt_jobj(), *a;
	int i, t;

	arbt_jput_str(j, "mode", o->mode == ARBTABLE_MODE_AUTO ? "auto" : "manual");
	arbt_jput_u64(j, "rate", o->rate);
	if (o->set & ARBTABLE_Q_BURST)
		arbt_jput_u64(j, "burst", o->burst);
	arbt_jput_u64(j, "highlimit", o->highlimit);
	arbt_jput_str(j, "accounting",
		      o->accounting == ARBTABLE_ACCT_IBA ? "iba" : "deficit");
	arbt_jput(j, "default", jclassid(st->q.handle, o->default_minor));
	a = arbt_jarr();
	arbt_jput(j, "priomap", a);
	for (i = 0; i < ARBTABLE_PRIO_BANDS; i++)
		arbt_jadd(a, jclassid(st->q.handle, st->q.priomap[i]));
	arbt_jput_u64(j, "mtu", o->mtu);
	arbt_jput_bool(j, "mtu_follows_device", st->q.mtu_follows_device);
	arbt_jput_u64(j, "maxweight", o->maxweight);
	arbt_jput_bool(j, "prioclassid", o->prio_classid != 0);
	arbt_jput_bool(j, "classifyforeign", o->classify_foreign != 0);
	arbt_jput_bool(j, "lockless", o->lockless != 0);
	for (t = 0; t < ARBTABLE_NTABLES; t++)
		arbt_jput(j, table_name[t], json_slots(st, t));
	return j;
}

/* tc's gnet stats keys (print_tcstats_attr) */
static void json_stats(struct json_object *j, const struct arbtable_stats *st)
{
	arbt_jput_u64(j, "bytes", st->bytes);
	arbt_jput_u64(j, "packets", st->packets);
	arbt_jput_u64(j, "drops", st->drops);
	arbt_jput_u64(j, "overlimits", st->overlimits);
	arbt_jput_u64(j, "requeues", st->requeues);
	arbt_jput_u64(j, "backlog", st->backlog);
	arbt_jput_u64(j, "qlen", st->qlen);
}

/* A class: its options beside "handle" (only those the kernel reports,
 * as tc prints them), the measured and allocated in "stats".
 */
static struct json_object *json_class(const struct ctl_class *c)
{
	const struct arbtable_class_opts *o = &c->opts;
	struct json_object *j = arbt_jobj(), *x = arbt_jobj();
	char b[16];

	arbt_jput_str(j, "handle", ctl_fmt_classid(c->i.classid, b, sizeof(b)));
	/* the kernel reports its classes' parent as TC_H_ROOT: tc says "root" */
	arbt_jput_bool(j, "root", 1);
	arbt_jput_str(j, "table", ctl_class_table(c));
	if ((o->set & ARBTABLE_C_STRICT) && o->strict)
		arbt_jput_bool(j, "strict", 1);
	if ((o->set & ARBTABLE_C_CEIL) && o->ceil)
		arbt_jput_u64(j, "ceil", o->ceil);
	if (o->set & ARBTABLE_C_CBURST)
		arbt_jput_u64(j, "cburst", o->cburst);
	if ((o->set & ARBTABLE_C_RATE) && o->rate)
		arbt_jput_u64(j, "rate", o->rate);
	if ((o->set & ARBTABLE_C_LATENCY) && o->latency_ns)
		arbt_jput_u64(j, "latency", o->latency_ns);
	if ((o->set & ARBTABLE_C_DISTANCE) && o->distance)
		arbt_jput_u64(j, "distance", o->distance);
	if ((o->set & ARBTABLE_C_SHARE) && o->share)
		arbt_jput_u64(j, "share", o->share);

	arbt_jput(j, "stats", x);
	json_stats(x, &c->i.stats);
	arbt_jput_int(x, "high_slot_count", __builtin_popcountll(c->i.slots[ARBTABLE_HIGH]));
	arbt_jput(x, "high_slots", arbt_jslots(c->i.slots[ARBTABLE_HIGH]));
	arbt_jput_u64(x, "high_weight", c->i.weight[ARBTABLE_HIGH]);
	arbt_jput_int(x, "low_slot_count", __builtin_popcountll(c->i.slots[ARBTABLE_LOW]));
	arbt_jput(x, "low_slots", arbt_jslots(c->i.slots[ARBTABLE_LOW]));
	arbt_jput_u64(x, "low_weight", c->i.weight[ARBTABLE_LOW]);
	arbt_jput_u64(x, "allocated_distance", c->i.distance);
	arbt_jput_u64(x, "reserved_rate", c->i.reserved_rate);
	arbt_jput_u64(x, "guaranteed_rate", c->i.guaranteed_rate);
	arbt_jput_u64(x, "reserved_weight", c->i.reserved_weight);
	arbt_jput_u64(x, "throttled", c->i.throttled);
	arbt_jput_u64(x, "guaranteed_bound", c->i.guaranteed_bound_ns);
	arbt_jput_u64(x, "current_bound", c->i.current_bound_ns);
	arbt_jput_u64(x, "max_hol_wait", c->i.max_hol_ns);
	/* what an older kernel does not report is left out, not 0 */
	if (c->i.xstats_fields & ARBTABLE_CX_STALLS)
		arbt_jput_u64(x, "stalls", c->i.stalls);
	if (c->i.xstats_fields & ARBTABLE_CX_BROKEN)
		arbt_jput_bool(x, "broken", c->i.broken);
	return j;
}

/*
 * The qdisc counters appended to the xstats since the first release, in
 * tc's JSON order with its keys; show's text writes them on two lines,
 * each in this order. An older kernel's shorter xstats leave out those it
 * does not have (their bit of xstats_fields is clear).
 */
enum qx_kind { QX_U64, QX_U32, QX_RATE, QX_LINK };

static const struct qx_counter {
	uint32_t	flag;		/* ARBTABLE_QX_* */
	const char	*key;		/* JSON */
	const char	*word;		/* text */
	int		line;		/* text: first or second */
	enum qx_kind	kind;
	size_t		off;		/* in struct arbtable_qdisc_info */
} qx_counters[] = {
#define QX(flag, key, word, line, kind, field) \
	{ ARBTABLE_QX_##flag, key, word, line, kind, \
	  offsetof(struct arbtable_qdisc_info, field) }
	QX(GSO_SPLIT, "gso_split", "gso_split", 2, QX_U64, gso_split),
	QX(GSO_SEGS, "gso_segs", "gso_segs", 2, QX_U64, gso_segs),
	QX(OVERSIZE_DROPS, "oversize_drops", "oversize_drops", 2, QX_U64,
	   oversize_drops),
	QX(STALLS, "stalls", "stalls", 2, QX_U64, stalls),
	QX(CAPACITY, "capacity", "capacity", 1, QX_RATE, capacity),
	QX(LINK_RATE, "link_rate", "link", 1, QX_LINK, link_rate),
	QX(LINK_CHANGES, "link_changes", "link_changes", 1, QX_U64,
	   link_changes),
	QX(MTU_CHANGES, "mtu_changes", "mtu_changes", 1, QX_U64, mtu_changes),
	/* a count of classes; a class's "broken" is a bool */
	QX(BROKEN, "broken_classes", "broken", 1, QX_U32, broken),
#undef QX
};

#define QX_COUNTERS	(sizeof(qx_counters) / sizeof(qx_counters[0]))

static uint64_t qx_value(const struct arbtable_qdisc_info *qi,
			 const struct qx_counter *c)
{
	const char *p = (const char *)qi + c->off;
	uint32_t v32;
	uint64_t v;

	if (c->kind == QX_U32) {
		memcpy(&v32, p, sizeof(v32));
		return v32;
	}
	memcpy(&v, p, sizeof(v));
	return v;
}

static void json_qdisc_xstats(struct json_object *q,
			      const struct arbtable_qdisc_info *qi)
{
	size_t i;

	for (i = 0; i < QX_COUNTERS; i++)
		if (qi->xstats_fields & qx_counters[i].flag)
			arbt_jput_u64(q, qx_counters[i].key,
				      qx_value(qi, &qx_counters[i]));
}

static void show_json(const struct ctl_snap *st)
{
	struct json_object *q = arbt_jobj(), *u, *a;
	unsigned int i, cnt[7];
	int t, k;

	ctl_json_qdisc_id(q, st);
	arbt_jput(q, "options", json_qdisc_opts(st));
	json_stats(q, &st->q.stats);
	/* the qdisc xstats tc -s -d prints */
	u = arbt_jobj();
	arbt_jput(q, "unclassified", u);
	arbt_jput_u64(u, "packets", st->q.unclassified_pkts);
	arbt_jput_u64(u, "drops", st->q.unclassified_drops);
	arbt_jput_u64(u, "qlen", st->q.unclassified_qlen);
	if (st->q.xstats_fields & ARBTABLE_QX_UNCL_BOUND)
		arbt_jput_u64(u, "bound", st->q.unclassified_bound_ns);
	if (st->q.xstats_fields & ARBTABLE_QX_UNCL_MAX_WAIT)
		arbt_jput_u64(u, "max_wait", st->q.unclassified_max_wait_ns);
	arbt_jput_u64(q, "swaps", st->q.swaps);
	arbt_jput_u64(q, "throttled", st->q.throttled);
	arbt_jput_u64(q, "high_used", st->q.used[ARBTABLE_HIGH]);
	arbt_jput_u64(q, "low_used", st->q.used[ARBTABLE_LOW]);
	arbt_jput_u64(q, "class_count", st->nclasses);
	json_qdisc_xstats(q, &st->q);

	/* arbtablectl's own: free slots and free sets per distance, as
	 * "high_table" and "low_table" ("high" and "low" are the options'
	 * slot lists: one JSON type per key)
	 */
	for (t = 0; t < ARBTABLE_NTABLES; t++) {
		uint64_t used = used_mask(st, t);
		struct json_object *tj = arbt_jobj(), *fs = arbt_jobj();
		char key[16];

		snprintf(key, sizeof(key), "%s_table", table_name[t]);
		arbt_jput(q, key, tj);
		arbt_jput_int(tj, "used", __builtin_popcountll(used));
		arbt_jput(tj, "free", arbt_jslots(~used));
		arbt_jput(tj, "free_sets", fs);
		free_sets(used, cnt);
		for (k = 0; k < 7; k++) {
			char d[4];

			snprintf(d, sizeof(d), "%d", 1 << k);
			arbt_jput_u64(fs, d, cnt[k]);
		}
	}
	a = arbt_jarr();
	arbt_jput(q, "classes", a);
	for (i = 0; i < st->nclasses; i++)
		arbt_jadd(a, json_class(&st->classes[i]));
	arbt_jprint(q);
}

static void show_head(const struct ctl_snap *st)
{
	char b[32];

	printf("arbtable %x: on %s: %s", ARBTABLE_MAJOR(st->q.handle), st->q.ifname,
	       st->opts.mode == ARBTABLE_MODE_AUTO ? "auto" : "manual");
	if (st->opts.rate)
		printf(", rate %s", arbt_fmt_rate(st->opts.rate, b, sizeof(b)));
	else
		printf(", rate link speed");
	if (st->opts.burst)
		printf(", burst %u bytes", st->opts.burst);
	printf(", highlimit %u, mtu %u%s, maxweight %u, accounting %s%s%s%s\n",
	       st->opts.highlimit, st->opts.mtu,
	       st->q.mtu_follows_device ? " (follows the device)" : "",
	       st->opts.maxweight,
	       st->opts.accounting == ARBTABLE_ACCT_IBA ? "iba" : "deficit",
	       st->opts.prio_classid ? "" : ", noprioclassid",
	       st->opts.classify_foreign ? "" : ", noclassifyforeign",
	       st->opts.lockless ? ", lockless" : "");
}

/* The counters of qx_counters the kernel reports, on two lines of
 * "name value" items, comma separated.
 */
static void show_counters(const struct arbtable_qdisc_info *q)
{
	int line;
	size_t i;

	for (line = 1; line <= 2; line++) {
		int n = 0;

		for (i = 0; i < QX_COUNTERS; i++) {
			const struct qx_counter *c = &qx_counters[i];
			uint64_t v = qx_value(q, c);
			char b[32];

			if (c->line != line || !(q->xstats_fields & c->flag))
				continue;
			if (c->kind == QX_RATE || (c->kind == QX_LINK && v))
				arbt_fmt_rate(v, b, sizeof(b));
			else if (c->kind == QX_LINK)
				snprintf(b, sizeof(b), "unknown");
			else
				snprintf(b, sizeof(b), "%" PRIu64, v);
			printf("%s%s %s", n++ ? ", " : "", c->word, b);
		}
		if (n)
			putchar('\n');
	}
}

/* The 64 slots as 8 rows of 8 cells "MINOR/WEIGHT", "." when free. */
static void show_map(const struct ctl_snap *st, int t)
{
	uint64_t used = used_mask(st, t);
	unsigned int cnt[7];
	int s, k, n = __builtin_popcountll(used);

	printf("\n%s table: %d/%d slots used, %d free\n",
	       t == ARBTABLE_HIGH ? "HIGH" : "LOW", n, ARBTABLE_SLOTS,
	       ARBTABLE_SLOTS - n);
	printf("slot");
	for (s = 0; s < 8; s++) {
		char h[8];

		snprintf(h, sizeof(h), "+%d", s);
		printf(s < 7 ? " %-8s" : " %s", h);
	}
	printf("\n");
	for (s = 0; s < ARBTABLE_SLOTS; s++) {
		char cell[24];

		if (s % 8 == 0)
			printf("%4d", s);
		if (used & (1ull << s))
			snprintf(cell, sizeof(cell), "%x/%u",
				 st->q.table[t][s].minor, st->q.table[t][s].weight);
		else
			snprintf(cell, sizeof(cell), ".");
		if (s % 8 == 7)
			printf(" %s\n", cell);
		else
			printf(" %-8s", cell);
	}
	free_sets(used, cnt);
	printf("free sets by distance:");
	for (k = 0; k < 7; k++)
		printf(" %d:%u", 1 << k, cnt[k]);
	printf("\n");
}

static void show_text(const struct ctl_snap *st)
{
	unsigned int i;
	int t;

	show_head(st);
	show_counters(&st->q);
	for (t = 0; t < ARBTABLE_NTABLES; t++)
		show_map(st, t);
	printf("\n%-9s %-6s %-13s %-11s %-8s %4s %5s %6s %-9s %-9s %-9s %6s %s\n",
	       "CLASS", "TABLE", "RESERVED", "GUARANTEED", "LATENCY", "DIST",
	       "SLOTS", "WEIGHT", "BOUND", "CURRENT", "CEIL", "STALLS",
	       "SLOT LIST");
	for (i = 0; i < st->nclasses; i++) {
		const struct ctl_class *c = &st->classes[i];
		const struct arbtable_class_opts *o = &c->opts;
		char id[16], res[24], gua[24], lat[16], bound[16], cur[16];
		char ceil[16], stalls[24];
		char list[256], dist[16];
		int tt = c->i.slots[ARBTABLE_HIGH] ? ARBTABLE_HIGH : ARBTABLE_LOW;

		ctl_fmt_classid(c->i.classid, id, sizeof(id));
		if (o->rate)
			arbt_fmt_rate(o->rate, res, sizeof(res));
		else if (o->share)
			snprintf(res, sizeof(res), "share %u", o->share);
		else if ((o->set & ARBTABLE_C_STRICT) && o->strict)
			snprintf(res, sizeof(res), "strict");
		else
			snprintf(res, sizeof(res), "-");
		/* what the reserved weight guarantees: above the rate asked
		 * when a latency needed more weight than the rate
		 */
		if (c->i.guaranteed_rate)
			arbt_fmt_rate(c->i.guaranteed_rate, gua, sizeof(gua));
		else
			snprintf(gua, sizeof(gua), "-");
		if (o->latency_ns)
			ctl_fmt_time(o->latency_ns, lat, sizeof(lat));
		else
			snprintf(lat, sizeof(lat), "-");
		if (c->i.distance)
			snprintf(dist, sizeof(dist), "%u", c->i.distance);
		else
			snprintf(dist, sizeof(dist), "-");
		if (c->i.guaranteed_bound_ns) {
			ctl_fmt_time(c->i.guaranteed_bound_ns, bound, sizeof(bound));
			ctl_fmt_time(c->i.current_bound_ns, cur, sizeof(cur));
		} else {
			snprintf(bound, sizeof(bound), "-");
			snprintf(cur, sizeof(cur), "-");
		}
		if (o->ceil)
			arbt_fmt_rate(o->ceil, ceil, sizeof(ceil));
		else
			snprintf(ceil, sizeof(ceil), "-");
		if (c->i.xstats_fields & ARBTABLE_CX_STALLS)
			snprintf(stalls, sizeof(stalls), "%" PRIu64, c->i.stalls);
		else
			snprintf(stalls, sizeof(stalls), "-");
		arbt_fmt_slots(c->i.slots[tt], list, sizeof(list));
		printf("%-9s %-6s %-13s %-11s %-8s %4s %5d %6u %-9s %-9s %-9s %6s %s\n",
		       id, ctl_class_table(c), res, gua, lat, dist,
		       __builtin_popcountll(c->i.slots[ARBTABLE_HIGH]) +
		       __builtin_popcountll(c->i.slots[ARBTABLE_LOW]),
		       c->i.weight[ARBTABLE_HIGH] + c->i.weight[ARBTABLE_LOW],
		       bound, cur, ceil, stalls, list);
	}
	if (!st->nclasses)
		printf("(no classes)\n");
	for (i = 0; i < st->nclasses; i++) {
		const struct ctl_class *c = &st->classes[i];
		char id[16];

		if (c->i.broken)
			printf("%s BROKEN: the device's frames grew past what its admission assumed; its rate or latency no longer holds\n",
			       ctl_fmt_classid(c->i.classid, id, sizeof(id)));
	}
	for (t = 0; t < ARBTABLE_NTABLES; t++) {
		char list[256];

		printf("free %s slots: %s\n", table_name[t],
		       arbt_fmt_slots(~used_mask(st, t), list, sizeof(list)));
	}
}

int ctl_show(struct arbtable *h, int argc, char **argv)
{
	struct ctl_snap *st;
	int err;

	if (argc != 1)
		ctl_usage("show: expected DEV");
	st = calloc(1, sizeof(*st));
	if (!st) {
		fprintf(stderr, "%s: out of memory\n", arbt_prog);
		return EX_FAIL;
	}
	err = ctl_snap_read(h, argv[0], st);
	if (err) {
		char what[64];

		snprintf(what, sizeof(what), "show %s", argv[0]);
		free(st);
		return ctl_failed(h, err, what);
	}
	if (ctl_json)
		show_json(st);
	else
		show_text(st);
	free(st);
	return EX_OK;
}
