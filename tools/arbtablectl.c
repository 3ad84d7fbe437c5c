// SPDX-License-Identifier: GPL-2.0
/*
 * arbtablectl: admit, change and release sch_arbtable classes, draw the
 * two 64-slot arbitration tables and watch per-class rates, on top of
 * libarbtable.
 *
 * Exit codes: 0 ok, 1 other failure, 2 no such device, 3 not an arbtable
 * qdisc, 4 rejected by the kernel (its reason is printed), 64 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <signal.h>
#include <inttypes.h>

#include <json-c/json.h>

#include <arbtable/arbtable.h>

#include "arbtable_parse.h"
#include "arbtable_request.h"
#include "arbtablectl.h"

const char *const ctl_prog = "arbtablectl";
static const char *prog = "arbtablectl";
static int json;

static void usage_text(FILE *f)
{
	fprintf(f,
		"Usage: %s [--json] [-n NETNS] COMMAND ...\n"
		"  admit   DEV CLASSID rate RATE [latency TIME | distance D] [ceil RATE]\n"
		"  admit   DEV CLASSID share N [distance D] [ceil RATE]\n"
		"  admit   DEV CLASSID strict ceil RATE\n"
		"  change  DEV CLASSID [rate RATE] [latency TIME | distance D] [share N]\n"
		"                      [ceil RATE [cburst BYTES]] [strict | nostrict]\n"
		"  change  DEV QDISC-OPTION...   (rate, burst, highlimit, accounting, mtu,\n"
		"                                maxweight, default: as for create)\n"
		"  release DEV CLASSID\n"
		"  show    DEV\n"
		"  watch   DEV [-i SECONDS] [-n COUNT]\n"
		"  create  DEV [handle MAJOR:] [auto | manual] [rate RATE] [highlimit N]\n"
		"              [accounting deficit | iba] [mtu BYTES] [maxweight W]\n"
		"              [burst BYTES]\n"
		"              [default MINOR]\n"
		"  table   DEV { high | low } { none | MINOR:WEIGHT[@SLOT]|-[,...] }\n"
		"  priomap DEV MINOR0 ... MINOR15   (hex minors by skb->priority, 0 = none)\n"
		"  delete  DEV\n"
		"  capacity DEV                  (free slots per distance, free guaranteed rate)\n"
		"  request DEV rate RATE [latency TIME | distance D]   (what it costs, and\n"
		"  request DEV share N [distance D]                      whether it fits now)\n"
		"  request rate RATE [latency TIME | distance D] [QDISC-PARAMETER...]\n"
		"  request share N [distance D] [QDISC-PARAMETER...]   (no device: the cost\n"
		"          for link RATE (10gbit), mtu BYTES (1514), maxweight W (255),\n"
		"          highlimit N (16), strictceil RATE, strictcburst BYTES)\n"
		"CLASSID is MAJOR:MINOR in hex (1:10) or a bare minor; RATE in tc units\n"
		"(10mbit, 500kbit, 1gbit; a bare number is bit/s); TIME 50us, 2ms, 1s\n"
		"(a bare number is ns).  Exit codes: 2 no such device, 3 not an\n"
		"arbtable qdisc, 4 rejected by the kernel, 64 usage.\n",
		prog);
}

__attribute__((format(printf, 1, 2), noreturn))
static void usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fprintf(stderr, "(\"%s help\" lists the commands and options)\n", prog);
	exit(EX_USAGE);
}

/* Report a library failure and pick the exit code. */
static int failed(struct arbtable *h, int err, const char *what)
{
	const char *msg = arbtable_errmsg(h);

	if (arbtable_err_from_kernel(h)) {
		fprintf(stderr, "%s: %s: rejected by the kernel: %s (%s)\n",
			prog, what, msg, strerror(-err));
		return EX_KERNEL;
	}
	if (*msg)
		fprintf(stderr, "%s: %s\n", prog, msg);
	else
		fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(-err));
	if (err == -ENODEV)
		return EX_NODEV;
	if (err == -EMEDIUMTYPE)
		return EX_NOTARB;
	return EX_FAIL;
}

void ctl_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fprintf(stderr, "(\"%s help\" lists the commands and options)\n", prog);
	exit(EX_USAGE);
}

int ctl_failed(struct arbtable *h, int err, const char *what)
{
	return failed(h, err, what);
}

/* ------------------------------------------------------------ parsing */

/* "1:10", ":10" or "10" (minor only, the device's arbtable qdisc) */
static int parse_classid(const char *s, uint32_t *id)
{
	const char *colon = strchr(s, ':');
	uint32_t maj = 0, min;
	char buf[16];

	if (colon) {
		size_t n = colon - s;

		if (n >= sizeof(buf))
			return -1;
		memcpy(buf, s, n);
		buf[n] = '\0';
		if (n && (arbt_parse_u32(buf, 16, &maj) || maj > 0xffff || !maj))
			return -1;
		s = colon + 1;
	}
	if (arbt_parse_u32(s, 16, &min) || !min || min > 0xffff)
		return -1;
	*id = ARBTABLE_CLASSID(maj, min);
	return 0;
}

/* ------------------------------------------------------------ printing */

static const char *fmt_rate(uint64_t bytes, char *buf, size_t size)
{
	double bits = (double)bytes * 8;

	if (bits >= 1e9)
		snprintf(buf, size, "%.4gGbit", bits / 1e9);
	else if (bits >= 1e6)
		snprintf(buf, size, "%.4gMbit", bits / 1e6);
	else if (bits >= 1e3)
		snprintf(buf, size, "%.4gKbit", bits / 1e3);
	else
		snprintf(buf, size, "%.4gbit", bits);
	return buf;
}

static const char *fmt_time(uint64_t ns, char *buf, size_t size)
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

static const char *fmt_size(uint64_t b, char *buf, size_t size)
{
	if (b >= 1048576)
		snprintf(buf, size, "%.3gMb", b / 1048576.);
	else if (b >= 1024)
		snprintf(buf, size, "%.3gKb", b / 1024.);
	else
		snprintf(buf, size, "%" PRIu64 "b", b);
	return buf;
}

static const char *fmt_classid(uint32_t id, char *buf, size_t size)
{
	snprintf(buf, size, "%x:%x", ARBTABLE_MAJOR(id), ARBTABLE_MINOR(id));
	return buf;
}

/* "0,8,16,24" or "-" */
static const char *fmt_slots(uint64_t mask, char *buf, size_t size)
{
	size_t n = 0;
	int s;

	buf[0] = '\0';
	for (s = 0; s < ARBTABLE_SLOTS && n + 4 < size; s++)
		if (mask & (1ull << s))
			n += snprintf(buf + n, size - n, n ? ",%d" : "%d", s);
	if (!n)
		snprintf(buf, size, "-");
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

static const char *class_table(const struct ctl_class *c)
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

static struct json_object *jnew(void)
{
	struct json_object *o = json_object_new_object();

	if (!o) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(EX_FAIL);
	}
	return o;
}

static void jput(struct json_object *o, const char *key, struct json_object *v)
{
	if (!v || json_object_object_add(o, key, v)) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(EX_FAIL);
	}
}

static void jput_u64(struct json_object *o, const char *key, uint64_t v)
{
	jput(o, key, json_object_new_uint64(v));
}

static void jput_int(struct json_object *o, const char *key, int64_t v)
{
	jput(o, key, json_object_new_int64(v));
}

static void jput_str(struct json_object *o, const char *key, const char *v)
{
	jput(o, key, json_object_new_string(v));
}

static void jput_bool(struct json_object *o, const char *key, int v)
{
	jput(o, key, json_object_new_boolean(v));
}

static void jarr_add(struct json_object *a, struct json_object *v)
{
	if (!v || json_object_array_add(a, v)) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(EX_FAIL);
	}
}

/* "1:10"; "" for none (minor 0) */
static struct json_object *jclassid(uint32_t handle, uint32_t minor)
{
	char b[16] = "";

	if (minor)
		fmt_classid(ARBTABLE_CLASSID(ARBTABLE_MAJOR(handle), minor), b,
			    sizeof(b));
	return json_object_new_string(b);
}

static struct json_object *jslot_array(uint64_t mask)
{
	struct json_object *a = json_object_new_array();
	int s;

	if (!a)
		return NULL;
	for (s = 0; s < ARBTABLE_SLOTS; s++)
		if (mask & (1ull << s))
			jarr_add(a, json_object_new_int(s));
	return a;
}

static void jprint(struct json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

/* "kind", "handle", "dev", "root"/"parent" of tc's qdisc object */
static void json_qdisc_id(struct json_object *q, const struct ctl_snap *st)
{
	char b[16];

	jput_str(q, "kind", "arbtable");
	snprintf(b, sizeof(b), "%x:", ARBTABLE_MAJOR(st->q.handle));
	jput_str(q, "handle", b);
	jput_str(q, "dev", st->q.ifname);
	if (st->q.parent == 0xffffffffu)
		jput_bool(q, "root", 1);
	else
		jput_str(q, "parent", fmt_classid(st->q.parent, b, sizeof(b)));
}

/* the qdisc's "options", as tc -j prints them */
static struct json_object *json_qdisc_opts(const struct ctl_snap *st)
{
	const struct arbtable_qdisc_opts *o = &st->opts;
	struct json_object *j = jnew(), *a;
	int i, t, s;

	jput_str(j, "mode", o->mode == ARBTABLE_MODE_AUTO ? "auto" : "manual");
	jput_u64(j, "rate", o->rate);
	if (o->set & ARBTABLE_Q_BURST)
		jput_u64(j, "burst", o->burst);
	jput_u64(j, "highlimit", o->highlimit);
	jput_str(j, "accounting",
		 o->accounting == ARBTABLE_ACCT_IBA ? "iba" : "deficit");
	jput(j, "default", jclassid(st->q.handle, o->default_minor));
	a = json_object_new_array();
	jput(j, "priomap", a);
	for (i = 0; i < ARBTABLE_PRIO_BANDS; i++)
		jarr_add(a, jclassid(st->q.handle, st->q.priomap[i]));
	jput_u64(j, "mtu", o->mtu);
	jput_bool(j, "mtu_follows_device", st->q.mtu_follows_device);
	jput_u64(j, "maxweight", o->maxweight);
	for (t = 0; t < ARBTABLE_NTABLES; t++) {
		uint64_t used = used_mask(st, t);

		a = json_object_new_array();
		jput(j, table_name[t], a);
		for (s = 0; s < ARBTABLE_SLOTS; s++) {
			struct json_object *e;

			if (!(used & (1ull << s)))
				continue;
			e = jnew();
			jput_int(e, "slot", s);
			jput(e, "class", jclassid(st->q.handle, st->q.table[t][s].minor));
			jput_u64(e, "weight", st->q.table[t][s].weight);
			jarr_add(a, e);
		}
	}
	return j;
}

/* tc's gnet stats keys (print_tcstats_attr) */
static void json_stats(struct json_object *j, const struct arbtable_stats *st)
{
	jput_u64(j, "bytes", st->bytes);
	jput_u64(j, "packets", st->packets);
	jput_u64(j, "drops", st->drops);
	jput_u64(j, "overlimits", st->overlimits);
	jput_u64(j, "requeues", st->requeues);
	jput_u64(j, "backlog", st->backlog);
	jput_u64(j, "qlen", st->qlen);
}

/* A class: its options beside "handle" (only those the kernel reports,
 * as tc prints them), the measured and allocated in "stats".
 */
static struct json_object *json_class(const struct ctl_class *c)
{
	const struct arbtable_class_opts *o = &c->opts;
	struct json_object *j = jnew(), *x = jnew();
	char b[16];

	jput_str(j, "handle", fmt_classid(c->i.classid, b, sizeof(b)));
	/* the kernel reports its classes' parent as TC_H_ROOT: tc says "root" */
	jput_bool(j, "root", 1);
	jput_str(j, "table", class_table(c));
	if ((o->set & ARBTABLE_C_STRICT) && o->strict)
		jput_bool(j, "strict", 1);
	if ((o->set & ARBTABLE_C_CEIL) && o->ceil)
		jput_u64(j, "ceil", o->ceil);
	if (o->set & ARBTABLE_C_CBURST)
		jput_u64(j, "cburst", o->cburst);
	if ((o->set & ARBTABLE_C_RATE) && o->rate)
		jput_u64(j, "rate", o->rate);
	if ((o->set & ARBTABLE_C_LATENCY) && o->latency_ns)
		jput_u64(j, "latency", o->latency_ns);
	if ((o->set & ARBTABLE_C_DISTANCE) && o->distance)
		jput_u64(j, "distance", o->distance);
	if ((o->set & ARBTABLE_C_SHARE) && o->share)
		jput_u64(j, "share", o->share);

	jput(j, "stats", x);
	json_stats(x, &c->i.stats);
	jput_int(x, "high_slot_count", __builtin_popcountll(c->i.slots[ARBTABLE_HIGH]));
	jput(x, "high_slots", jslot_array(c->i.slots[ARBTABLE_HIGH]));
	jput_u64(x, "high_weight", c->i.weight[ARBTABLE_HIGH]);
	jput_int(x, "low_slot_count", __builtin_popcountll(c->i.slots[ARBTABLE_LOW]));
	jput(x, "low_slots", jslot_array(c->i.slots[ARBTABLE_LOW]));
	jput_u64(x, "low_weight", c->i.weight[ARBTABLE_LOW]);
	jput_u64(x, "allocated_distance", c->i.distance);
	jput_u64(x, "index", c->i.index);
	jput_u64(x, "reserved_rate", c->i.reserved_rate);
	jput_u64(x, "guaranteed_rate", c->i.guaranteed_rate);
	jput_u64(x, "reserved_weight", c->i.reserved_weight);
	jput_u64(x, "throttled", c->i.throttled);
	jput_u64(x, "guaranteed_bound", c->i.guaranteed_bound_ns);
	jput_u64(x, "current_bound", c->i.current_bound_ns);
	jput_u64(x, "max_hol_wait", c->i.max_hol_ns);
	/* what an older kernel does not report is left out, not 0 */
	if (c->i.xstats_fields & ARBTABLE_CX_STALLS)
		jput_u64(x, "stalls", c->i.stalls);
	if (c->i.xstats_fields & ARBTABLE_CX_BROKEN)
		jput_bool(x, "broken", c->i.broken);
	return j;
}

static struct json_object *json_credits(const struct ctl_snap *st, int t)
{
	struct json_object *a = json_object_new_array();
	uint64_t used = used_mask(st, t);
	int s;

	if (!a)
		return NULL;
	for (s = 0; s < ARBTABLE_SLOTS; s++) {
		struct json_object *e;

		if (!(used & (1ull << s)))
			continue;
		e = jnew();
		jput_int(e, "slot", s);
		jput_int(e, "credit", st->q.credit[t][s]);
		jarr_add(a, e);
	}
	return a;
}

/*
 * The qdisc xstats appended since the first release, with tc's keys; an
 * older kernel's shorter xstats leave out those it does not have.
 */
static void json_qdisc_xstats(struct json_object *q,
			      const struct arbtable_qdisc_info *qi)
{
	uint32_t f = qi->xstats_fields;

	if (f & ARBTABLE_QX_GSO_SPLIT)
		jput_u64(q, "gso_split", qi->gso_split);
	if (f & ARBTABLE_QX_GSO_SEGS)
		jput_u64(q, "gso_segs", qi->gso_segs);
	if (f & ARBTABLE_QX_OVERSIZE_DROPS)
		jput_u64(q, "oversize_drops", qi->oversize_drops);
	if (f & ARBTABLE_QX_STALLS)
		jput_u64(q, "stalls", qi->stalls);
	if (f & ARBTABLE_QX_CAPACITY)
		jput_u64(q, "capacity", qi->capacity);
	if (f & ARBTABLE_QX_LINK_RATE)
		jput_u64(q, "link_rate", qi->link_rate);
	if (f & ARBTABLE_QX_LINK_CHANGES)
		jput_u64(q, "link_changes", qi->link_changes);
	if (f & ARBTABLE_QX_MTU_CHANGES)
		jput_u64(q, "mtu_changes", qi->mtu_changes);
	if (f & ARBTABLE_QX_BROKEN)
		jput_u64(q, "broken", qi->broken);
}

static void show_json(const struct ctl_snap *st)
{
	struct json_object *q = jnew(), *u, *tabs, *a;
	unsigned int i, cnt[7];
	int t, k;

	json_qdisc_id(q, st);
	jput(q, "options", json_qdisc_opts(st));
	json_stats(q, &st->q.stats);
	/* the qdisc xstats tc -s -d prints */
	u = jnew();
	jput(q, "unclassified", u);
	jput_u64(u, "packets", st->q.unclassified_pkts);
	jput_u64(u, "drops", st->q.unclassified_drops);
	jput_u64(u, "qlen", st->q.unclassified_qlen);
	jput_u64(q, "swaps", st->q.swaps);
	jput_u64(q, "throttled", st->q.throttled);
	jput_u64(q, "high_used", st->q.used[ARBTABLE_HIGH]);
	jput_u64(q, "low_used", st->q.used[ARBTABLE_LOW]);
	jput_u64(q, "high_cur", st->q.cur[ARBTABLE_HIGH]);
	jput_u64(q, "low_cur", st->q.cur[ARBTABLE_LOW]);
	jput_int(q, "hp_counter", st->q.hp_counter);
	jput_u64(q, "class_count", st->nclasses);
	jput(q, "high_credit", json_credits(st, ARBTABLE_HIGH));
	jput(q, "low_credit", json_credits(st, ARBTABLE_LOW));
	json_qdisc_xstats(q, &st->q);

	/* arbtablectl's own: free slots and free sets per distance */
	tabs = jnew();
	jput(q, "tables", tabs);
	for (t = 0; t < ARBTABLE_NTABLES; t++) {
		uint64_t used = used_mask(st, t);
		struct json_object *tj = jnew(), *fs = jnew();

		jput(tabs, table_name[t], tj);
		jput_int(tj, "used", __builtin_popcountll(used));
		jput(tj, "free", jslot_array(~used));
		jput(tj, "free_sets", fs);
		free_sets(used, cnt);
		for (k = 0; k < 7; k++) {
			char d[4];

			snprintf(d, sizeof(d), "%d", 1 << k);
			jput_u64(fs, d, cnt[k]);
		}
	}
	a = json_object_new_array();
	jput(q, "classes", a);
	for (i = 0; i < st->nclasses; i++)
		jarr_add(a, json_class(&st->classes[i]));
	jprint(q);
}

static void show_head(const struct ctl_snap *st)
{
	char b[32];

	printf("arbtable %x: on %s: %s", ARBTABLE_MAJOR(st->q.handle), st->q.ifname,
	       st->opts.mode == ARBTABLE_MODE_AUTO ? "auto" : "manual");
	if (st->opts.rate)
		printf(", rate %s", fmt_rate(st->opts.rate, b, sizeof(b)));
	else
		printf(", rate link speed");
	if (st->opts.burst)
		printf(", burst %u bytes", st->opts.burst);
	printf(", highlimit %u, mtu %u%s, maxweight %u, accounting %s\n",
	       st->opts.highlimit, st->opts.mtu,
	       st->q.mtu_follows_device ? " (follows the device)" : "",
	       st->opts.maxweight,
	       st->opts.accounting == ARBTABLE_ACCT_IBA ? "iba" : "deficit");
}

/* one item of a line of "name value" items, comma separated */
__attribute__((format(printf, 2, 3)))
static void line_item(int *n, const char *fmt, ...)
{
	va_list ap;

	if ((*n)++)
		fputs(", ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

/* The capacity and the link, mtu, GSO and stall counters, those of them
 * the kernel reports (an older one reports fewer), on two lines.
 */
static void show_counters(const struct arbtable_qdisc_info *q)
{
	uint32_t f = q->xstats_fields;
	char b[32];
	int n = 0;

	if (f & ARBTABLE_QX_CAPACITY)
		line_item(&n, "capacity %s", fmt_rate(q->capacity, b, sizeof(b)));
	if (f & ARBTABLE_QX_LINK_RATE)
		line_item(&n, "link %s", q->link_rate ?
			  fmt_rate(q->link_rate, b, sizeof(b)) : "unknown");
	if (f & ARBTABLE_QX_LINK_CHANGES)
		line_item(&n, "link_changes %" PRIu64, q->link_changes);
	if (f & ARBTABLE_QX_MTU_CHANGES)
		line_item(&n, "mtu_changes %" PRIu64, q->mtu_changes);
	if (f & ARBTABLE_QX_BROKEN)
		line_item(&n, "broken %u", q->broken);
	if (n)
		putchar('\n');
	n = 0;
	if (f & ARBTABLE_QX_GSO_SPLIT)
		line_item(&n, "gso_split %" PRIu64, q->gso_split);
	if (f & ARBTABLE_QX_GSO_SEGS)
		line_item(&n, "gso_segs %" PRIu64, q->gso_segs);
	if (f & ARBTABLE_QX_OVERSIZE_DROPS)
		line_item(&n, "oversize_drops %" PRIu64, q->oversize_drops);
	if (f & ARBTABLE_QX_STALLS)
		line_item(&n, "stalls %" PRIu64, q->stalls);
	if (n)
		putchar('\n');
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

		fmt_classid(c->i.classid, id, sizeof(id));
		if (o->rate)
			fmt_rate(o->rate, res, sizeof(res));
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
			fmt_rate(c->i.guaranteed_rate, gua, sizeof(gua));
		else
			snprintf(gua, sizeof(gua), "-");
		if (o->latency_ns)
			fmt_time(o->latency_ns, lat, sizeof(lat));
		else
			snprintf(lat, sizeof(lat), "-");
		if (c->i.distance)
			snprintf(dist, sizeof(dist), "%u", c->i.distance);
		else
			snprintf(dist, sizeof(dist), "-");
		if (c->i.guaranteed_bound_ns) {
			fmt_time(c->i.guaranteed_bound_ns, bound, sizeof(bound));
			fmt_time(c->i.current_bound_ns, cur, sizeof(cur));
		} else {
			snprintf(bound, sizeof(bound), "-");
			snprintf(cur, sizeof(cur), "-");
		}
		if (o->ceil)
			fmt_rate(o->ceil, ceil, sizeof(ceil));
		else
			snprintf(ceil, sizeof(ceil), "-");
		if (c->i.xstats_fields & ARBTABLE_CX_STALLS)
			snprintf(stalls, sizeof(stalls), "%" PRIu64, c->i.stalls);
		else
			snprintf(stalls, sizeof(stalls), "-");
		fmt_slots(c->i.slots[tt], list, sizeof(list));
		printf("%-9s %-6s %-13s %-11s %-8s %4s %5d %6u %-9s %-9s %-9s %6s %s\n",
		       id, class_table(c), res, gua, lat, dist,
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
			       fmt_classid(c->i.classid, id, sizeof(id)));
	}
	for (t = 0; t < ARBTABLE_NTABLES; t++) {
		char list[256];

		printf("free %s slots: %s\n", table_name[t],
		       fmt_slots(~used_mask(st, t), list, sizeof(list)));
	}
}

/* ------------------------------------------------------------ commands */

static int cmd_show(struct arbtable *h, int argc, char **argv)
{
	struct ctl_snap *st;
	int err;

	if (argc != 1)
		usage("show: expected DEV");
	st = calloc(1, sizeof(*st));
	if (!st) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return EX_FAIL;
	}
	err = ctl_snap_read(h, argv[0], st);
	if (err) {
		char what[64];

		snprintf(what, sizeof(what), "show %s", argv[0]);
		free(st);
		return failed(h, err, what);
	}
	if (json)
		show_json(st);
	else
		show_text(st);
	free(st);
	return EX_OK;
}

static volatile sig_atomic_t stop_watch;

static void on_signal(int sig)
{
	(void)sig;
	stop_watch = 1;
}

static int cmd_watch(struct arbtable *h, int argc, char **argv)
{
	struct ctl_snap *prev, *cur, *tmp;
	const char *dev = NULL;
	double interval = 1.0;
	long count = 0, n = 0;
	int tty = isatty(STDOUT_FILENO), lines = 0, err, i;
	char what[64];

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "-i") || !strcmp(argv[i], "--interval")) {
			char *end;

			if (++i >= argc)
				usage("watch: -i needs SECONDS");
			interval = strtod(argv[i], &end);
			if (*end || !(interval >= 0.05 && interval <= 3600))
				usage("watch: bad interval \"%s\" (0.05..3600 s)",
				      argv[i]);
		} else if (!strcmp(argv[i], "-n") || !strcmp(argv[i], "--count")) {
			char *end;

			if (++i >= argc)
				usage("watch: -n needs COUNT");
			count = strtol(argv[i], &end, 10);
			if (*end || count < 1)
				usage("watch: bad count \"%s\"", argv[i]);
		} else if (!dev && argv[i][0] != '-') {
			dev = argv[i];
		} else {
			usage("watch: unexpected \"%s\"", argv[i]);
		}
	}
	if (!dev)
		usage("watch: expected DEV");
	snprintf(what, sizeof(what), "watch %s", dev);

	prev = calloc(1, sizeof(*prev));
	cur = calloc(1, sizeof(*cur));
	if (!prev || !cur) {
		free(prev);
		free(cur);
		fprintf(stderr, "%s: out of memory\n", prog);
		return EX_FAIL;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	err = ctl_snap_read(h, dev, prev);
	while (!err && !stop_watch && (!count || n < count)) {
		struct timespec ts = {
			.tv_sec = (time_t)interval,
			.tv_nsec = (long)((interval - (time_t)interval) * 1e9),
		};
		double dt;
		unsigned int c;

		nanosleep(&ts, NULL);
		if (stop_watch)
			break;
		err = ctl_snap_read(h, dev, cur);
		if (err)
			break;
		n++;
		dt = (cur->q.timestamp_ns - prev->q.timestamp_ns) / 1e9;
		if (dt <= 0)
			dt = interval;

		if (json) {
			struct json_object *w = jnew(), *a = json_object_new_array();
			char id[16];

			json_qdisc_id(w, cur);
			jput_int(w, "refresh", n);
			jput(w, "interval", json_object_new_double(dt));
			jput(w, "classes", a);
			for (c = 0; c < cur->nclasses; c++) {
				const struct ctl_class *k = &cur->classes[c];
				const struct ctl_class *p =
					ctl_find_class(prev, k->i.classid);
				uint64_t d = p && k->i.stats.bytes >= p->i.stats.bytes ?
					     k->i.stats.bytes - p->i.stats.bytes : 0;
				struct json_object *cj = jnew();

				jput_str(cj, "handle", fmt_classid(k->i.classid, id,
								   sizeof(id)));
				jput_str(cj, "table", class_table(k));
				/* measured here; "rate" is only ever the option */
				jput_u64(cj, "measured_rate", (uint64_t)(d / dt));
				jput_u64(cj, "reserved_rate", k->i.reserved_rate);
				if ((k->opts.set & ARBTABLE_C_SHARE) && k->opts.share)
					jput_u64(cj, "share", k->opts.share);
				jput_u64(cj, "backlog", k->i.stats.backlog);
				jput_u64(cj, "qlen", k->i.stats.qlen);
				jput_u64(cj, "drops", k->i.stats.drops);
				jput_u64(cj, "max_hol_wait", k->i.max_hol_ns);
				jarr_add(a, cj);
			}
			jprint(w);
		} else {
			char b1[24], b2[24], b3[24], b4[24], id[16];
			uint64_t tot = cur->q.stats.bytes >= prev->q.stats.bytes ?
				       cur->q.stats.bytes - prev->q.stats.bytes : 0;

			/* back over the previous frame, clear to the end */
			if (tty && lines)
				printf("\033[%dA\r\033[J", lines);
			else if (n > 1)
				printf("\n");
			lines = 0;
			printf("arbtable %x: on %s  rate %s  refresh %ld every %.2gs\n",
			       ARBTABLE_MAJOR(cur->q.handle), dev,
			       cur->opts.rate ? fmt_rate(cur->opts.rate, b1, sizeof(b1)) :
			       "link", n, interval);
			lines++;
			printf("%-9s %-6s %-11s %-11s %7s %-16s %7s %-9s\n",
			       "CLASS", "TABLE", "RESERVED", "RATE", "%RES",
			       "BACKLOG", "DROPS", "MAX_HOL");
			lines++;
			for (c = 0; c < cur->nclasses; c++) {
				const struct ctl_class *k = &cur->classes[c];
				const struct ctl_class *p =
					ctl_find_class(prev, k->i.classid);
				uint64_t d = p && k->i.stats.bytes >= p->i.stats.bytes ?
					     k->i.stats.bytes - p->i.stats.bytes : 0;
				double r = d / dt;
				char res[24], pct[16], bl[32];

				if (k->i.reserved_rate) {
					fmt_rate(k->i.reserved_rate, res, sizeof(res));
					snprintf(pct, sizeof(pct), "%.1f%%",
						 100. * r / k->i.reserved_rate);
				} else {
					if (k->opts.share)
						snprintf(res, sizeof(res), "share %u",
							 k->opts.share);
					else
						snprintf(res, sizeof(res), "-");
					snprintf(pct, sizeof(pct), "-");
				}
				snprintf(bl, sizeof(bl), "%up %s", k->i.stats.qlen,
					 fmt_size(k->i.stats.backlog, b3, sizeof(b3)));
				printf("%-9s %-6s %-11s %-11s %7s %-16s %7u %-9s\n",
				       fmt_classid(k->i.classid, id, sizeof(id)),
				       class_table(k), res,
				       fmt_rate((uint64_t)r, b2, sizeof(b2)), pct,
				       bl, k->i.stats.drops,
				       fmt_time(k->i.max_hol_ns, b4, sizeof(b4)));
				lines++;
			}
			printf("%-9s %-6s %-11s %-11s %7s %up %-13s %7u\n", "total",
			       "", "", fmt_rate((uint64_t)(tot / dt), b2, sizeof(b2)),
			       "", cur->q.stats.qlen,
			       fmt_size(cur->q.stats.backlog, b3, sizeof(b3)),
			       cur->q.stats.drops);
			lines++;
		}
		fflush(stdout);
		tmp = prev;
		prev = cur;
		cur = tmp;
	}
	free(prev);
	free(cur);
	if (err)
		return failed(h, err, what);
	return EX_OK;
}

/* rate/latency/distance/share/ceil/strict words of admit and change */
static void parse_class_opts(const char *cmd, int argc, char **argv,
			     struct arbtable_class_opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < argc; i++) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(k, "strict") || !strcmp(k, "nostrict")) {
			o->strict = !strcmp(k, "strict");
			o->set |= ARBTABLE_C_STRICT;
			continue;
		}
		if (!v)
			usage("%s: \"%s\" needs a value", cmd, k);
		i++;
		if (!strcmp(k, "rate")) {
			if (arbt_parse_rate(v, &o->rate))
				usage("%s: bad rate \"%s\" (e.g. 500kbit, 10mbit)", cmd, v);
			o->set |= ARBTABLE_C_RATE;
		} else if (!strcmp(k, "ceil")) {
			if (arbt_parse_rate(v, &o->ceil))
				usage("%s: bad ceil \"%s\" (e.g. 100mbit)", cmd, v);
			o->set |= ARBTABLE_C_CEIL;
		} else if (!strcmp(k, "cburst")) {
			if (arbt_parse_size(v, &o->cburst))
				usage("%s: bad cburst \"%s\" (bytes, tc sizes: 30k)", cmd, v);
			o->set |= ARBTABLE_C_CBURST;
		} else if (!strcmp(k, "latency")) {
			if (arbt_parse_time(v, &o->latency_ns))
				usage("%s: bad latency \"%s\" (e.g. 50us, 2ms)", cmd, v);
			o->set |= ARBTABLE_C_LATENCY;
		} else if (!strcmp(k, "distance")) {
			if (arbt_parse_u32(v, 10, &o->distance))
				usage("%s: bad distance \"%s\" (1, 2, 4 ... 64)", cmd, v);
			o->set |= ARBTABLE_C_DISTANCE;
		} else if (!strcmp(k, "share")) {
			if (arbt_parse_u32(v, 10, &o->share))
				usage("%s: bad share \"%s\" (1..255)", cmd, v);
			o->set |= ARBTABLE_C_SHARE;
		} else {
			usage("%s: unknown option \"%s\"", cmd, k);
		}
	}
}

/*
 * What the options ask for together, in the words arbtable-cni and
 * arbsim use (lib/arbtable_request.c, the module's own): a new class
 * whole; a change only as far as its options go on their own, since
 * what they make depends on the class's reservation, which the kernel
 * merges them into.
 */
static void check_class_opts(const char *cmd, const struct arbtable_class_opts *o)
{
	struct arbt_request rq = {
		.rate = o->rate, .latency_ns = o->latency_ns,
		.distance = o->distance, .share = o->share,
	};
	const char *why;

	rq.given = (o->set & ARBTABLE_C_RATE ? ARBT_RQ_RATE : 0) |
		   (o->set & ARBTABLE_C_LATENCY ? ARBT_RQ_LATENCY : 0) |
		   (o->set & ARBTABLE_C_DISTANCE ? ARBT_RQ_DISTANCE : 0) |
		   (o->set & ARBTABLE_C_SHARE ? ARBT_RQ_SHARE : 0);
	if (!strcmp(cmd, "admit"))
		why = arbt_request_check_new(&rq, (o->set & ARBTABLE_C_STRICT) &&
					     o->strict, 0);
	else
		why = arbt_request_check(&rq);
	if (why)
		usage("%s: %s", cmd, why);
}

static int cmd_qdisc_change(struct arbtable *h, int argc, char **argv);

static int is_qdisc_option(const char *k)
{
	static const char *const opts[] = {
		"rate", "burst", "highlimit", "accounting", "mtu", "maxweight",
		"default", "auto", "manual",
	};
	size_t i;

	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (!strcmp(k, opts[i]))
			return 1;
	return 0;
}

static int cmd_class(struct arbtable *h, const char *cmd, int argc,
		     char **argv)
{
	struct arbtable_class_opts o;
	uint32_t id;
	char what[96], b[16];
	int err;

	if (argc < 2)
		usage("%s: expected DEV CLASSID", cmd);
	/* change DEV rate 10mbit ...: a qdisc option where the class id
	 * would be (no option name is a class id)
	 */
	if (!strcmp(cmd, "change") && is_qdisc_option(argv[1]))
		return cmd_qdisc_change(h, argc, argv);
	if (parse_classid(argv[1], &id))
		usage("%s: bad class id \"%s\" (MAJOR:MINOR in hex, e.g. 1:10)",
		      cmd, argv[1]);
	if (!strcmp(cmd, "release")) {
		if (argc != 2)
			usage("release: unexpected \"%s\"", argv[2]);
	} else {
		parse_class_opts(cmd, argc - 2, argv + 2, &o);
		if (!strcmp(cmd, "change") && !o.set)
			usage("change: nothing to change");
		check_class_opts(cmd, &o);
	}
	snprintf(what, sizeof(what), "%s %s on %s", cmd,
		 ARBTABLE_MAJOR(id) ? fmt_classid(id, b, sizeof(b)) : argv[1],
		 argv[0]);
	if (!strcmp(cmd, "admit"))
		err = arbtable_admit(h, argv[0], id, &o, sizeof(o));
	else if (!strcmp(cmd, "change"))
		err = arbtable_change(h, argv[0], id, &o, sizeof(o));
	else
		err = arbtable_release(h, argv[0], id);
	if (err)
		return failed(h, err, what);
	if (json) {
		struct json_object *j = jnew();

		jput_bool(j, "ok", 1);
		jput_str(j, "command", cmd);
		jput_str(j, "dev", argv[0]);
		/* tc's spelling of a class id without its major: ":30" */
		if (ARBTABLE_MAJOR(id))
			fmt_classid(id, b, sizeof(b));
		else
			snprintf(b, sizeof(b), ":%x", ARBTABLE_MINOR(id));
		jput_str(j, "handle", b);
		jprint(j);
	}
	return EX_OK;
}

/*
 * Qdisc options of create and change; @handle NULL: no handle option
 * (change). Returns nothing: bad input is a usage error.
 */
static void parse_qdisc_opts(const char *cmd, int argc, char **argv,
			     struct arbtable_qdisc_opts *o, uint32_t *handle)
{
	uint32_t v;
	int i;

	for (i = 0; i < argc; i++) {
		const char *k = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(k, "auto") || !strcmp(k, "manual")) {
			o->mode = !strcmp(k, "auto") ? ARBTABLE_MODE_AUTO :
				  ARBTABLE_MODE_MANUAL;
			o->set |= ARBTABLE_Q_MODE;
			continue;
		}
		if (!val)
			usage("%s: \"%s\" needs a value", cmd, k);
		i++;
		if (!strcmp(k, "handle") && handle) {
			char buf[16];
			size_t n = strcspn(val, ":");

			if (n >= sizeof(buf) || (val[n] && val[n + 1]))
				usage("%s: bad handle \"%s\" (e.g. 1:)", cmd, val);
			memcpy(buf, val, n);
			buf[n] = '\0';
			if (arbt_parse_u32(buf, 16, &v) || !v || v > 0xffff)
				usage("%s: bad handle \"%s\" (e.g. 1:)", cmd, val);
			*handle = ARBTABLE_CLASSID(v, 0);
		} else if (!strcmp(k, "rate")) {
			if (arbt_parse_rate(val, &o->rate))
				usage("%s: bad rate \"%s\"", cmd, val);
			o->set |= ARBTABLE_Q_RATE;
		} else if (!strcmp(k, "highlimit")) {
			if (arbt_parse_u32(val, 10, &o->highlimit))
				usage("%s: bad highlimit \"%s\"", cmd, val);
			o->set |= ARBTABLE_Q_HIGHLIMIT;
		} else if (!strcmp(k, "accounting")) {
			if (!strcmp(val, "deficit"))
				o->accounting = ARBTABLE_ACCT_DEFICIT;
			else if (!strcmp(val, "iba"))
				o->accounting = ARBTABLE_ACCT_IBA;
			else
				usage("%s: accounting is deficit or iba", cmd);
			o->set |= ARBTABLE_Q_ACCOUNTING;
		} else if (!strcmp(k, "mtu")) {
			if (arbt_parse_u32(val, 10, &o->mtu))
				usage("%s: bad mtu \"%s\"", cmd, val);
			o->set |= ARBTABLE_Q_MTU;
		} else if (!strcmp(k, "burst")) {
			if (arbt_parse_size(val, &o->burst))
				usage("%s: bad burst \"%s\" (bytes, tc sizes: 30k)",
				      cmd, val);
			o->set |= ARBTABLE_Q_BURST;
		} else if (!strcmp(k, "maxweight")) {
			if (arbt_parse_u32(val, 10, &o->maxweight))
				usage("%s: bad maxweight \"%s\"", cmd, val);
			o->set |= ARBTABLE_Q_MAXWEIGHT;
		} else if (!strcmp(k, "default")) {
			if (arbt_parse_u32(val, 16, &o->default_minor))
				usage("%s: bad default minor \"%s\"", cmd, val);
			o->set |= ARBTABLE_Q_DEFAULT;
		} else {
			usage("%s: unknown option \"%s\"", cmd, k);
		}
	}
}

/* change DEV QDISC-OPTIONS: the qdisc's own options (tc qdisc change) */
static int cmd_qdisc_change(struct arbtable *h, int argc, char **argv)
{
	struct arbtable_qdisc_opts o = { 0 };
	char what[64];
	int err;

	parse_qdisc_opts("change", argc - 1, argv + 1, &o, NULL);
	if (!o.set)
		usage("change: nothing to change");
	snprintf(what, sizeof(what), "change of %s's qdisc", argv[0]);
	err = arbtable_qdisc_change(h, argv[0], &o, sizeof(o));
	return err ? failed(h, err, what) : EX_OK;
}

static int cmd_create(struct arbtable *h, int argc, char **argv)
{
	struct arbtable_qdisc_opts o = { 0 };
	uint32_t handle = ARBTABLE_CLASSID(1, 0);
	char what[64];
	int err;

	if (argc < 1)
		usage("create: expected DEV");
	parse_qdisc_opts("create", argc - 1, argv + 1, &o, &handle);
	snprintf(what, sizeof(what), "create on %s", argv[0]);
	err = arbtable_qdisc_create(h, argv[0], handle, &o, sizeof(o));
	return err ? failed(h, err, what) : EX_OK;
}

static int cmd_delete(struct arbtable *h, int argc, char **argv)
{
	char what[64];
	int err;

	if (argc != 1)
		usage("delete: expected DEV");
	snprintf(what, sizeof(what), "delete on %s", argv[0]);
	err = arbtable_qdisc_delete(h, argv[0]);
	return err ? failed(h, err, what) : EX_OK;
}

/* "none" or "MINOR:WEIGHT[@SLOT]|-[,...]" as in tc */
static int cmd_table(struct arbtable *h, int argc, char **argv)
{
	struct arbtable_slot slots[ARBTABLE_SLOTS];
	struct arbt_table_iter it;
	struct arbt_table_entry e;
	enum arbtable_table t;
	uint64_t seen = 0;
	char what[64];
	int err, rc;

	if (argc != 3)
		usage("table: expected DEV high|low LIST");
	if (!strcmp(argv[1], "high"))
		t = ARBTABLE_HIGH;
	else if (!strcmp(argv[1], "low"))
		t = ARBTABLE_LOW;
	else
		usage("table: \"%s\" is neither high nor low", argv[1]);
	memset(slots, 0, sizeof(slots));
	arbt_table_iter_init(&it, argv[2]);
	while ((rc = arbt_table_next(&it, &e)) > 0) {
		/* the library takes the table as 64 slots, so the two
		 * checks that shape needs are made here, in the kernel's words
		 */
		if (e.slot >= ARBTABLE_SLOTS)
			usage("%s table: slot index %u out of range 0..%d",
			      argv[1], e.slot, ARBTABLE_SLOTS - 1);
		if (seen & (1ULL << e.slot))
			usage("%s table: slot %u given twice", argv[1], e.slot);
		seen |= 1ULL << e.slot;
		slots[e.slot].minor = e.minor;
		slots[e.slot].weight = e.weight;
	}
	if (rc < 0)
		usage("\"%s\" list: %s", argv[1], it.err);
	snprintf(what, sizeof(what), "table %s on %s", argv[1], argv[0]);
	err = arbtable_set_table(h, argv[0], t, slots);
	return err ? failed(h, err, what) : EX_OK;
}

static int cmd_priomap(struct arbtable *h, int argc, char **argv)
{
	uint32_t map[ARBTABLE_PRIO_BANDS];
	char what[64];
	int i, err;

	if (argc != 1 + ARBTABLE_PRIO_BANDS)
		usage("priomap: expected DEV and %d class minors (hex, 0 = none), %d given",
		      ARBTABLE_PRIO_BANDS, argc - 1 < 0 ? 0 : argc - 1);
	for (i = 0; i < ARBTABLE_PRIO_BANDS; i++)
		if (arbt_parse_u32(argv[1 + i], 16, &map[i]))
			usage("priomap: bad class minor \"%s\" (hex, 0 = none)",
			      argv[1 + i]);
	snprintf(what, sizeof(what), "priomap on %s", argv[0]);
	err = arbtable_set_priomap(h, argv[0], map);
	return err ? failed(h, err, what) : EX_OK;
}

/* -n NAME: the namespace `ip netns add NAME` created (as ip -n does) */
static int enter_netns(const char *name)
{
	char path[256];
	int fd;

	if (!*name || strchr(name, '/')) {
		fprintf(stderr, "%s: bad network namespace name \"%s\"\n", prog,
			name);
		return -1;
	}
	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: network namespace %s: %s\n", prog, name,
			strerror(errno));
		return -1;
	}
	if (setns(fd, CLONE_NEWNET)) {
		fprintf(stderr, "%s: cannot enter network namespace %s: %s\n",
			prog, name, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct arbtable *h;
	const char *cmd;
	int rc;

	argv++;
	argc--;
	while (argc > 0 && argv[0][0] == '-') {
		if (!strcmp(argv[0], "--json") || !strcmp(argv[0], "-j")) {
			json = 1;
		} else if (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h")) {
			usage_text(stdout);
			return EX_OK;
		} else if (!strcmp(argv[0], "--version") || !strcmp(argv[0], "-V")) {
			printf("arbtablectl (libarbtable %s)\n", arbtable_version());
			return EX_OK;
		} else if (!strcmp(argv[0], "-n") || !strcmp(argv[0], "--netns")) {
			if (argc < 2)
				usage("%s needs a network namespace name", argv[0]);
			if (enter_netns(argv[1]))
				return EX_FAIL;
			argv++;
			argc--;
		} else {
			usage("unknown option \"%s\"", argv[0]);
		}
		argv++;
		argc--;
	}
	if (argc < 1)
		usage("no command given");
	cmd = argv[0];
	argv++;
	argc--;
	if (strcmp(cmd, "admit") && strcmp(cmd, "change") &&
	    strcmp(cmd, "release") && strcmp(cmd, "show") &&
	    strcmp(cmd, "watch") && strcmp(cmd, "create") &&
	    strcmp(cmd, "delete") && strcmp(cmd, "table") &&
	    strcmp(cmd, "priomap") && strcmp(cmd, "capacity") &&
	    strcmp(cmd, "request") && strcmp(cmd, "help"))
		usage("unknown command \"%s\"", cmd);
	if (!strcmp(cmd, "help")) {
		usage_text(stdout);
		return EX_OK;
	}

	/* sizing without a node needs no netlink socket */
	if (!strcmp(cmd, "request") && ctl_request_devless(argc, argv))
		return ctl_request(NULL, json, argc, argv);
	h = arbtable_open();
	if (!h) {
		fprintf(stderr, "%s: cannot open rtnetlink: %s\n", prog,
			strerror(errno));
		return EX_FAIL;
	}
	if (!strcmp(cmd, "show"))
		rc = cmd_show(h, argc, argv);
	else if (!strcmp(cmd, "watch"))
		rc = cmd_watch(h, argc, argv);
	else if (!strcmp(cmd, "create"))
		rc = cmd_create(h, argc, argv);
	else if (!strcmp(cmd, "delete"))
		rc = cmd_delete(h, argc, argv);
	else if (!strcmp(cmd, "table"))
		rc = cmd_table(h, argc, argv);
	else if (!strcmp(cmd, "priomap"))
		rc = cmd_priomap(h, argc, argv);
	else if (!strcmp(cmd, "capacity"))
		rc = ctl_capacity(h, json, argc, argv);
	else if (!strcmp(cmd, "request"))
		rc = ctl_request(h, json, argc, argv);
	else
		rc = cmd_class(h, cmd, argc, argv);
	arbtable_close(h);
	return rc;
}
