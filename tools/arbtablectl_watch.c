// SPDX-License-Identifier: GPL-2.0
/*
 * arbtablectl watch: the device's classes read again every interval, the
 * rate each was measured at against its reservation, its backlog, drops
 * and worst head-of-line wait; a frame redrawn in place on a terminal,
 * a JSON object a line with --json.
 *
 *   watch DEV [-i SECONDS] [-n COUNT]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include <arbtable/arbtable.h>

#include "arbt_print.h"
#include "arbtablectl.h"

static volatile sig_atomic_t stop_watch;

static void on_signal(int sig)
{
	(void)sig;
	stop_watch = 1;
}

/* bytes @k sent since @prev's read (0 for a class new since then) */
static uint64_t bytes_since(const struct ctl_snap *prev,
			    const struct ctl_class *k)
{
	const struct ctl_class *p = ctl_find_class(prev, k->i.classid);

	return p && k->i.stats.bytes >= p->i.stats.bytes ?
	       k->i.stats.bytes - p->i.stats.bytes : 0;
}

/* one JSON object a refresh */
static void frame_json(const struct ctl_snap *prev, const struct ctl_snap *cur,
		       long n, double dt)
{
	struct json_object *w = arbt_jobj(), *a = arbt_jarr();
	unsigned int c;
	char id[16];

	ctl_json_qdisc_id(w, cur);
	arbt_jput_int(w, "refresh", n);
	arbt_jput(w, "interval", json_object_new_double(dt));
	arbt_jput(w, "classes", a);
	for (c = 0; c < cur->nclasses; c++) {
		const struct ctl_class *k = &cur->classes[c];
		struct json_object *cj = arbt_jobj();

		arbt_jput_str(cj, "handle",
			      ctl_fmt_classid(k->i.classid, id, sizeof(id)));
		arbt_jput_str(cj, "table", ctl_class_table(k));
		/* measured here; "rate" is only ever the option */
		arbt_jput_u64(cj, "measured_rate",
			      (uint64_t)(bytes_since(prev, k) / dt));
		arbt_jput_u64(cj, "reserved_rate", k->i.reserved_rate);
		if ((k->opts.set & ARBTABLE_C_SHARE) && k->opts.share)
			arbt_jput_u64(cj, "share", k->opts.share);
		arbt_jput_u64(cj, "backlog", k->i.stats.backlog);
		arbt_jput_u64(cj, "qlen", k->i.stats.qlen);
		arbt_jput_u64(cj, "drops", k->i.stats.drops);
		arbt_jput_u64(cj, "max_hol_wait", k->i.max_hol_ns);
		arbt_jadd(a, cj);
	}
	arbt_jprint(w);
}

/* one line a class; the number of lines written */
static int frame_class(const struct ctl_class *k, double r)
{
	char b2[24], b3[24], b4[24], id[16], res[24], pct[16], bl[32];

	if (k->i.reserved_rate) {
		arbt_fmt_rate(k->i.reserved_rate, res, sizeof(res));
		snprintf(pct, sizeof(pct), "%.1f%%",
			 100. * r / k->i.reserved_rate);
	} else {
		if (k->opts.share)
			snprintf(res, sizeof(res), "share %u", k->opts.share);
		else
			snprintf(res, sizeof(res), "-");
		snprintf(pct, sizeof(pct), "-");
	}
	snprintf(bl, sizeof(bl), "%up %s", k->i.stats.qlen,
		 ctl_fmt_size(k->i.stats.backlog, b3, sizeof(b3)));
	printf("%-9s %-6s %-11s %-11s %7s %-16s %7u %-9s\n",
	       ctl_fmt_classid(k->i.classid, id, sizeof(id)),
	       ctl_class_table(k), res,
	       arbt_fmt_rate((uint64_t)r, b2, sizeof(b2)), pct,
	       bl, k->i.stats.drops,
	       ctl_fmt_time(k->i.max_hol_ns, b4, sizeof(b4)));
	return 1;
}

/* A text frame; the number of lines written, for a terminal to go back
 * over them before the next one.
 */
static int frame_text(const struct ctl_snap *prev, const struct ctl_snap *cur,
		      const char *dev, long n, double dt, double interval)
{
	uint64_t tot = cur->q.stats.bytes >= prev->q.stats.bytes ?
		       cur->q.stats.bytes - prev->q.stats.bytes : 0;
	char b1[24], b2[24], b3[24];
	unsigned int c;
	int lines = 0;

	printf("arbtable %x: on %s  rate %s  refresh %ld every %.2gs\n",
	       ARBTABLE_MAJOR(cur->q.handle), dev,
	       cur->opts.rate ? arbt_fmt_rate(cur->opts.rate, b1, sizeof(b1)) :
	       "link", n, interval);
	lines++;
	printf("%-9s %-6s %-11s %-11s %7s %-16s %7s %-9s\n",
	       "CLASS", "TABLE", "RESERVED", "RATE", "%RES",
	       "BACKLOG", "DROPS", "MAX_HOL");
	lines++;
	for (c = 0; c < cur->nclasses; c++)
		lines += frame_class(&cur->classes[c],
				     bytes_since(prev, &cur->classes[c]) / dt);
	printf("%-9s %-6s %-11s %-11s %7s %up %-13s %7u\n", "total",
	       "", "", arbt_fmt_rate((uint64_t)(tot / dt), b2, sizeof(b2)),
	       "", cur->q.stats.qlen,
	       ctl_fmt_size(cur->q.stats.backlog, b3, sizeof(b3)),
	       cur->q.stats.drops);
	lines++;
	return lines;
}

int ctl_watch(struct arbtable *h, int argc, char **argv)
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
				ctl_usage("watch: -i needs SECONDS");
			interval = strtod(argv[i], &end);
			if (*end || !(interval >= 0.05 && interval <= 3600))
				ctl_usage("watch: bad interval \"%s\" (0.05..3600 s)",
					  argv[i]);
		} else if (!strcmp(argv[i], "-n") || !strcmp(argv[i], "--count")) {
			char *end;

			if (++i >= argc)
				ctl_usage("watch: -n needs COUNT");
			count = strtol(argv[i], &end, 10);
			if (*end || count < 1)
				ctl_usage("watch: bad count \"%s\"", argv[i]);
		} else if (!dev && argv[i][0] != '-') {
			dev = argv[i];
		} else {
			ctl_usage("watch: unexpected \"%s\"", argv[i]);
		}
	}
	if (!dev)
		ctl_usage("watch: expected DEV");
	snprintf(what, sizeof(what), "watch %s", dev);

	prev = calloc(1, sizeof(*prev));
	cur = calloc(1, sizeof(*cur));
	if (!prev || !cur) {
		free(prev);
		free(cur);
		fprintf(stderr, "%s: out of memory\n", arbt_prog);
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

		if (ctl_json) {
			frame_json(prev, cur, n, dt);
		} else {
			/* back over the previous frame, clear to the end */
			if (tty && lines)
				printf("\033[%dA\r\033[J", lines);
			else if (n > 1)
				printf("\n");
			lines = frame_text(prev, cur, dev, n, dt, interval);
		}
		fflush(stdout);
		tmp = prev;
		prev = cur;
		cur = tmp;
	}
	free(prev);
	free(cur);
	if (err)
		return ctl_failed(h, err, what);
	return EX_OK;
}
