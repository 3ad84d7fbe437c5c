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

#include <arbtable/arbtable.h>

#include "arbtable_parse.h"
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

static uint64_t used_mask(const struct arbtable_state *st, int t)
{
	uint64_t m = 0;
	int s;

	for (s = 0; s < ARBTABLE_SLOTS; s++)
		if (st->table[t][s].minor && st->table[t][s].weight)
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

static const char *class_table(const struct arbtable_class_state *c)
{
	if (c->slots[ARBTABLE_HIGH] && c->slots[ARBTABLE_LOW])
		return "both";
	if (c->slots[ARBTABLE_HIGH])
		return "high";
	if (c->slots[ARBTABLE_LOW])
		return "low";
	if ((c->opts.set & ARBTABLE_C_STRICT) && c->opts.strict)
		return "strict";
	return "-";
}

/* JSON: only numbers and our own ASCII strings (device names are
 * escaped anyway).
 */
static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = *s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

void ctl_json_str(const char *s)
{
	json_str(s);
}

static void json_slot_array(uint64_t mask)
{
	int s, first = 1;

	putchar('[');
	for (s = 0; s < ARBTABLE_SLOTS; s++)
		if (mask & (1ull << s)) {
			printf(first ? "%d" : ",%d", s);
			first = 0;
		}
	putchar(']');
}

static void json_qdisc_head(const struct arbtable_state *st)
{
	char b[32];
	int i;

	printf("\"dev\":");
	json_str(st->ifname);
	printf(",\"handle\":\"%x:\",\"mode\":\"%s\",\"rate\":%" PRIu64
	       ",\"highlimit\":%u,\"accounting\":\"%s\",\"mtu\":%u"
	       ",\"maxweight\":%u,\"burst\":%u,\"default\":\"%s\"",
	       ARBTABLE_MAJOR(st->handle),
	       st->opts.mode == ARBTABLE_MODE_AUTO ? "auto" : "manual",
	       st->opts.rate, st->opts.highlimit,
	       st->opts.accounting == ARBTABLE_ACCT_IBA ? "iba" : "deficit",
	       st->opts.mtu, st->opts.maxweight, st->opts.burst,
	       st->opts.default_minor ?
	       fmt_classid(st->handle | st->opts.default_minor, b, sizeof(b)) :
	       "");
	/* class ids as strings, "" where a priority maps to no class */
	printf(",\"priomap\":[");
	for (i = 0; i < ARBTABLE_PRIO_BANDS; i++)
		printf("%s\"%s\"", i ? "," : "",
		       st->priomap[i] ? fmt_classid(st->handle | st->priomap[i],
						    b, sizeof(b)) : "");
	putchar(']');
}

static void json_class_common(const struct arbtable_state *st,
			      const struct arbtable_class_state *c)
{
	char b[32];

	(void)st;
	printf("\"class\":\"%s\",\"table\":\"%s\"",
	       fmt_classid(c->classid, b, sizeof(b)), class_table(c));
}

static void show_json(const struct arbtable_state *st)
{
	unsigned int i, cnt[7];
	int t, s, first, k;

	putchar('{');
	json_qdisc_head(st);
	printf(",\"tables\":{");
	for (t = 0; t < ARBTABLE_NTABLES; t++) {
		uint64_t used = used_mask(st, t);

		printf("%s\"%s\":{\"used\":%d,\"free\":", t ? "," : "",
		       table_name[t], __builtin_popcountll(used));
		json_slot_array(~used);
		printf(",\"free_sets\":{");
		free_sets(used, cnt);
		for (k = 0; k < 7; k++)
			printf("%s\"%d\":%u", k ? "," : "", 1 << k, cnt[k]);
		printf("},\"slots\":[");
		first = 1;
		for (s = 0; s < ARBTABLE_SLOTS; s++) {
			const struct arbtable_slot *e = &st->table[t][s];
			char b[32];

			if (!(used & (1ull << s)))
				continue;
			printf("%s{\"slot\":%d,\"class\":\"%s\",\"weight\":%u}",
			       first ? "" : ",", s,
			       fmt_classid(st->handle | e->minor, b, sizeof(b)),
			       e->weight);
			first = 0;
		}
		printf("]}");
	}
	printf("},\"classes\":[");
	for (i = 0; i < st->nclasses; i++) {
		const struct arbtable_class_state *c = &st->classes[i];
		const struct arbtable_class_opts *o = &c->opts;

		printf("%s{", i ? "," : "");
		json_class_common(st, c);
		printf(",\"rate\":%" PRIu64 ",\"latency_ns\":%" PRIu64
		       ",\"distance_asked\":%u,\"share\":%u,\"ceil\":%" PRIu64
		       ",\"strict\":%s",
		       o->rate, o->latency_ns, o->distance, o->share, o->ceil,
		       (o->set & ARBTABLE_C_STRICT) && o->strict ? "true" : "false");
		printf(",\"distance\":%u,\"high_slots\":", c->distance);
		json_slot_array(c->slots[ARBTABLE_HIGH]);
		printf(",\"low_slots\":");
		json_slot_array(c->slots[ARBTABLE_LOW]);
		printf(",\"high_weight\":%u,\"low_weight\":%u"
		       ",\"reserved_rate\":%" PRIu64
		       ",\"reserved_weight\":%u,\"guaranteed_rate\":%" PRIu64
		       ",\"guaranteed_bound_ns\":%" PRIu64
		       ",\"current_bound_ns\":%" PRIu64
		       ",\"max_hol_ns\":%" PRIu64,
		       c->weight[ARBTABLE_HIGH], c->weight[ARBTABLE_LOW],
		       c->reserved_rate, c->reserved_weight, c->guaranteed_rate,
		       c->guaranteed_bound_ns,
		       c->current_bound_ns, c->max_hol_ns);
		printf(",\"stats\":{\"bytes\":%" PRIu64 ",\"packets\":%" PRIu64
		       ",\"drops\":%u,\"overlimits\":%u,\"backlog\":%u"
		       ",\"qlen\":%u}}",
		       c->stats.bytes, c->stats.packets, c->stats.drops,
		       c->stats.overlimits, c->stats.backlog, c->stats.qlen);
	}
	printf("],\"stats\":{\"bytes\":%" PRIu64 ",\"packets\":%" PRIu64
	       ",\"drops\":%u,\"backlog\":%u,\"qlen\":%u,\"swaps\":%" PRIu64
	       ",\"unclassified_packets\":%" PRIu64 "}}\n",
	       st->stats.bytes, st->stats.packets, st->stats.drops,
	       st->stats.backlog, st->stats.qlen, st->swaps,
	       st->unclassified_pkts);
}

static void show_head(const struct arbtable_state *st)
{
	char b[32];

	printf("arbtable %x: on %s: %s", ARBTABLE_MAJOR(st->handle), st->ifname,
	       st->opts.mode == ARBTABLE_MODE_AUTO ? "auto" : "manual");
	if (st->opts.rate)
		printf(", rate %s", fmt_rate(st->opts.rate, b, sizeof(b)));
	else
		printf(", rate link speed");
	if (st->opts.burst)
		printf(", burst %u bytes", st->opts.burst);
	printf(", highlimit %u, mtu %u, maxweight %u, accounting %s\n",
	       st->opts.highlimit, st->opts.mtu, st->opts.maxweight,
	       st->opts.accounting == ARBTABLE_ACCT_IBA ? "iba" : "deficit");
}

/* The 64 slots as 8 rows of 8 cells "MINOR/WEIGHT", "." when free. */
static void show_map(const struct arbtable_state *st, int t)
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
				 st->table[t][s].minor, st->table[t][s].weight);
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

static void show_text(const struct arbtable_state *st)
{
	unsigned int i;
	int t;

	show_head(st);
	for (t = 0; t < ARBTABLE_NTABLES; t++)
		show_map(st, t);
	printf("\n%-9s %-6s %-13s %-11s %-8s %4s %5s %6s %-9s %-9s %-9s %s\n",
	       "CLASS", "TABLE", "RESERVED", "GUARANTEED", "LATENCY", "DIST",
	       "SLOTS", "WEIGHT", "BOUND", "CURRENT", "CEIL", "SLOT LIST");
	for (i = 0; i < st->nclasses; i++) {
		const struct arbtable_class_state *c = &st->classes[i];
		const struct arbtable_class_opts *o = &c->opts;
		char id[16], res[24], gua[24], lat[16], bound[16], cur[16];
		char ceil[16];
		char list[256], dist[16];
		int tt = c->slots[ARBTABLE_HIGH] ? ARBTABLE_HIGH : ARBTABLE_LOW;

		fmt_classid(c->classid, id, sizeof(id));
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
		if (c->guaranteed_rate)
			fmt_rate(c->guaranteed_rate, gua, sizeof(gua));
		else
			snprintf(gua, sizeof(gua), "-");
		if (o->latency_ns)
			fmt_time(o->latency_ns, lat, sizeof(lat));
		else
			snprintf(lat, sizeof(lat), "-");
		if (c->distance)
			snprintf(dist, sizeof(dist), "%u", c->distance);
		else
			snprintf(dist, sizeof(dist), "-");
		if (c->guaranteed_bound_ns) {
			fmt_time(c->guaranteed_bound_ns, bound, sizeof(bound));
			fmt_time(c->current_bound_ns, cur, sizeof(cur));
		} else {
			snprintf(bound, sizeof(bound), "-");
			snprintf(cur, sizeof(cur), "-");
		}
		if (o->ceil)
			fmt_rate(o->ceil, ceil, sizeof(ceil));
		else
			snprintf(ceil, sizeof(ceil), "-");
		fmt_slots(c->slots[tt], list, sizeof(list));
		printf("%-9s %-6s %-13s %-11s %-8s %4s %5d %6u %-9s %-9s %-9s %s\n",
		       id, class_table(c), res, gua, lat, dist,
		       __builtin_popcountll(c->slots[ARBTABLE_HIGH]) +
		       __builtin_popcountll(c->slots[ARBTABLE_LOW]),
		       c->weight[ARBTABLE_HIGH] + c->weight[ARBTABLE_LOW],
		       bound, cur, ceil, list);
	}
	if (!st->nclasses)
		printf("(no classes)\n");
	for (t = 0; t < ARBTABLE_NTABLES; t++) {
		char list[256];

		printf("free %s slots: %s\n", table_name[t],
		       fmt_slots(~used_mask(st, t), list, sizeof(list)));
	}
}

/* ------------------------------------------------------------ commands */

static int cmd_show(struct arbtable *h, int argc, char **argv)
{
	struct arbtable_state *st;
	int err;

	if (argc != 1)
		usage("show: expected DEV");
	st = calloc(1, sizeof(*st));
	if (!st) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return EX_FAIL;
	}
	err = arbtable_read(h, argv[0], st);
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
	struct arbtable_state *prev, *cur, *tmp;
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

	err = arbtable_read(h, dev, prev);
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
		err = arbtable_read(h, dev, cur);
		if (err)
			break;
		n++;
		dt = (cur->timestamp_ns - prev->timestamp_ns) / 1e9;
		if (dt <= 0)
			dt = interval;

		if (json) {
			printf("{");
			json_qdisc_head(cur);
			printf(",\"refresh\":%ld,\"interval\":%.3f,\"classes\":[",
			       n, dt);
			for (c = 0; c < cur->nclasses; c++) {
				const struct arbtable_class_state *k = &cur->classes[c];
				const struct arbtable_class_state *p =
					arbtable_find_class(prev, k->classid);
				uint64_t d = p && k->stats.bytes >= p->stats.bytes ?
					     k->stats.bytes - p->stats.bytes : 0;

				printf("%s{", c ? "," : "");
				json_class_common(cur, k);
				printf(",\"rate\":%.0f,\"reserved_rate\":%" PRIu64
				       ",\"share\":%u,\"backlog\":%u,\"qlen\":%u"
				       ",\"drops\":%u,\"max_hol_ns\":%" PRIu64 "}",
				       d / dt, k->reserved_rate, k->opts.share,
				       k->stats.backlog, k->stats.qlen,
				       k->stats.drops, k->max_hol_ns);
			}
			printf("]}\n");
		} else {
			char b1[24], b2[24], b3[24], b4[24], id[16];
			uint64_t tot = cur->stats.bytes >= prev->stats.bytes ?
				       cur->stats.bytes - prev->stats.bytes : 0;

			/* back over the previous frame, clear to the end */
			if (tty && lines)
				printf("\033[%dA\r\033[J", lines);
			else if (n > 1)
				printf("\n");
			lines = 0;
			printf("arbtable %x: on %s  rate %s  refresh %ld every %.2gs\n",
			       ARBTABLE_MAJOR(cur->handle), dev,
			       cur->opts.rate ? fmt_rate(cur->opts.rate, b1, sizeof(b1)) :
			       "link", n, interval);
			lines++;
			printf("%-9s %-6s %-11s %-11s %7s %-16s %7s %-9s\n",
			       "CLASS", "TABLE", "RESERVED", "RATE", "%RES",
			       "BACKLOG", "DROPS", "MAX_HOL");
			lines++;
			for (c = 0; c < cur->nclasses; c++) {
				const struct arbtable_class_state *k = &cur->classes[c];
				const struct arbtable_class_state *p =
					arbtable_find_class(prev, k->classid);
				uint64_t d = p && k->stats.bytes >= p->stats.bytes ?
					     k->stats.bytes - p->stats.bytes : 0;
				double r = d / dt;
				char res[24], pct[16], bl[32];

				if (k->reserved_rate) {
					fmt_rate(k->reserved_rate, res, sizeof(res));
					snprintf(pct, sizeof(pct), "%.1f%%",
						 100. * r / k->reserved_rate);
				} else {
					if (k->opts.share)
						snprintf(res, sizeof(res), "share %u",
							 k->opts.share);
					else
						snprintf(res, sizeof(res), "-");
					snprintf(pct, sizeof(pct), "-");
				}
				snprintf(bl, sizeof(bl), "%up %s", k->stats.qlen,
					 fmt_size(k->stats.backlog, b3, sizeof(b3)));
				printf("%-9s %-6s %-11s %-11s %7s %-16s %7u %-9s\n",
				       fmt_classid(k->classid, id, sizeof(id)),
				       class_table(k), res,
				       fmt_rate((uint64_t)r, b2, sizeof(b2)), pct,
				       bl, k->stats.drops,
				       fmt_time(k->max_hol_ns, b4, sizeof(b4)));
				lines++;
			}
			printf("%-9s %-6s %-11s %-11s %7s %up %-13s %7u\n", "total",
			       "", "", fmt_rate((uint64_t)(tot / dt), b2, sizeof(b2)),
			       "", cur->stats.qlen,
			       fmt_size(cur->stats.backlog, b3, sizeof(b3)),
			       cur->stats.drops);
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
	}
	snprintf(what, sizeof(what), "%s %s on %s", cmd,
		 ARBTABLE_MAJOR(id) ? fmt_classid(id, b, sizeof(b)) : argv[1],
		 argv[0]);
	if (!strcmp(cmd, "admit"))
		err = arbtable_admit(h, argv[0], id, &o);
	else if (!strcmp(cmd, "change"))
		err = arbtable_change(h, argv[0], id, &o);
	else
		err = arbtable_release(h, argv[0], id);
	if (err)
		return failed(h, err, what);
	if (json) {
		printf("{\"ok\":true,\"command\":\"%s\",\"dev\":", cmd);
		json_str(argv[0]);
		printf(",\"class\":");
		json_str(argv[1]);
		printf("}\n");
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
	err = arbtable_qdisc_change(h, argv[0], &o);
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
	err = arbtable_qdisc_create(h, argv[0], handle, &o);
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
