// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * arbtable_parse.c - values and table lists for every front end (see
 * arbtable_parse.h).  The unit words and their scales are tc(8)'s.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arbtable_parse.h"

struct arbt_unit {
	const char *name;
	double scale;
};

/* tc(8) RATES: bits (SI and IEC prefixes) and bytes per second */
static const struct arbt_unit arbt_rate_units[] = {
	{ "", 1. }, { "bit", 1. },
	{ "kbit", 1e3 }, { "mbit", 1e6 }, { "gbit", 1e9 }, { "tbit", 1e12 },
	{ "kibit", 1024. }, { "mibit", 1024. * 1024 },
	{ "gibit", 1024. * 1024 * 1024 }, { "tibit", 1024. * 1024 * 1024 * 1024 },
	{ "bps", 8. }, { "kbps", 8e3 }, { "mbps", 8e6 }, { "gbps", 8e9 },
	{ "tbps", 8e12 }, { "kibps", 8. * 1024 }, { "mibps", 8. * 1024 * 1024 },
	{ "gibps", 8. * 1024 * 1024 * 1024 },
	{ "tibps", 8. * 1024 * 1024 * 1024 * 1024 },
	{ NULL, 0 }
};

/* tc(8) SIZES: bytes; k, m, g are binary; kbit, mbit, gbit their eighths */
static const struct arbt_unit arbt_size_units[] = {
	{ "", 1. }, { "b", 1. },
	{ "k", 1024. }, { "kb", 1024. }, { "kbit", 1024. / 8 },
	{ "m", 1024. * 1024 }, { "mb", 1024. * 1024 },
	{ "mbit", 1024. * 1024 / 8 },
	{ "g", 1024. * 1024 * 1024 }, { "gb", 1024. * 1024 * 1024 },
	{ "gbit", 1024. * 1024 * 1024 / 8 },
	{ NULL, 0 }
};

/*
 * tc(8) TIMES, to nanoseconds: a bare number is microseconds, as tc(8)
 * says and get_time() (tbf's latency, codel's target) takes it; "ns" is
 * get_time64()'s unit word for what needs finer steps.
 */
static const struct arbt_unit arbt_time_units[] = {
	{ "", 1e3 }, { "ns", 1. }, { "nsec", 1. }, { "nsecs", 1. },
	{ "us", 1e3 }, { "usec", 1e3 }, { "usecs", 1e3 },
	{ "ms", 1e6 }, { "msec", 1e6 }, { "msecs", 1e6 },
	{ "s", 1e9 }, { "sec", 1e9 }, { "secs", 1e9 },
	{ NULL, 0 }
};

/*
 * A number and a unit of @units, scaled and checked against @limit
 * (exclusive).  The number must start with a digit or a point: no sign,
 * no blank, no "inf" or "nan", which strtod() would take.
 */
static int arbt_parse_scaled(const char *s, const struct arbt_unit *units,
			     double limit, double *out)
{
	const struct arbt_unit *u;
	char *end;
	double v;

	if (!s || !((*s >= '0' && *s <= '9') || *s == '.'))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || (errno && v != 0))	/* ERANGE overflow */
		return -1;
	for (u = units; u->name; u++) {
		if (strcasecmp(end, u->name))
			continue;
		v *= u->scale;
		if (!(v >= 0 && v < limit))
			return -1;
		*out = v;
		return 0;
	}
	return -1;
}

int arbt_parse_rate(const char *s, uint64_t *bytes_per_sec)
{
	double bits;

	/* 2^67 bit/s is 2^64 bytes/s */
	if (arbt_parse_scaled(s, arbt_rate_units, 0x1p67, &bits))
		return -1;
	*bytes_per_sec = (uint64_t)(bits / 8);
	return 0;
}

int arbt_parse_size(const char *s, uint32_t *bytes)
{
	double v;

	if (arbt_parse_scaled(s, arbt_size_units, 0x1p32, &v))
		return -1;
	*bytes = (uint32_t)v;
	return 0;
}

int arbt_parse_time(const char *s, uint64_t *ns)
{
	double v;

	if (arbt_parse_scaled(s, arbt_time_units, 0x1p63, &v))
		return -1;
	*ns = (uint64_t)v;
	return 0;
}

int arbt_parse_u32(const char *s, int base, uint32_t *v)
{
	unsigned long long x;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ' || *s == '\t')
		return -1;
	errno = 0;
	x = strtoull(s, &end, base);
	if (*end || errno || x > UINT32_MAX)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

void arbt_table_iter_init(struct arbt_table_iter *it, const char *list)
{
	it->next = list;
	it->pos = 0;
	it->err[0] = '\0';
	if (list && !strcmp(list, "none"))
		it->next = NULL;
}

/* Copies the field [s, s + n) into @buf; false when it does not fit. */
static int arbt_field(char *buf, size_t size, const char *s, size_t n)
{
	if (n >= size)
		return 0;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return 1;
}

int arbt_table_next(struct arbt_table_iter *it, struct arbt_table_entry *e)
{
	char tok[64], *colon, *at;
	const char *s = it->next, *comma;
	size_t n;

	for (;;) {
		if (!s)
			return 0;
		comma = strchr(s, ',');
		n = comma ? (size_t)(comma - s) : strlen(s);
		it->next = comma ? comma + 1 : NULL;
		if (!arbt_field(tok, sizeof(tok), s, n)) {
			snprintf(it->err, sizeof(it->err),
				 "entry \"%.*s...\" too long", 16, s);
			return -1;
		}
		if (strcmp(tok, "-"))
			break;
		it->pos++;	/* a null slot */
		s = it->next;
	}

	colon = strchr(tok, ':');
	if (!*tok || !colon) {
		snprintf(it->err, sizeof(it->err),
			 "bad entry \"%s\": expected MINOR:WEIGHT[@SLOT] or -",
			 tok);
		return -1;
	}
	*colon = '\0';
	at = strchr(colon + 1, '@');
	if (at)
		*at++ = '\0';
	if (arbt_parse_u32(tok, 16, &e->minor)) {
		snprintf(it->err, sizeof(it->err),
			 "bad class minor \"%s\" (hex, e.g. 10 for class 1:10)",
			 tok);
		return -1;
	}
	if (arbt_parse_u32(colon + 1, 10, &e->weight)) {
		snprintf(it->err, sizeof(it->err),
			 "bad weight \"%s\" (decimal, 64-byte units)", colon + 1);
		return -1;
	}
	if (at) {
		if (arbt_parse_u32(at, 10, &e->slot)) {
			snprintf(it->err, sizeof(it->err),
				 "bad slot \"%s\" (decimal)", at);
			return -1;
		}
	} else {
		if (it->pos > UINT32_MAX) {
			snprintf(it->err, sizeof(it->err),
				 "slot position past 2^32");
			return -1;
		}
		e->slot = (uint32_t)it->pos;
	}
	it->pos = (uint64_t)e->slot + 1;
	return 1;
}

int arbt_table_parse(const char *list, const char *name, struct arbt_table *t,
		     char *err, size_t errsize)
{
	struct arbt_table_iter it;
	struct arbt_table_entry e;
	uint64_t seen = 0;
	int rc;

	memset(t, 0, sizeof(*t));
	arbt_table_iter_init(&it, list);
	while ((rc = arbt_table_next(&it, &e)) > 0) {
		if (e.slot >= ARBT_TABLE_SLOTS) {
			snprintf(err, errsize,
				 "%s table: slot index %u out of range 0..%d",
				 name, e.slot, ARBT_TABLE_SLOTS - 1);
			return -2;
		}
		if (seen & (1ULL << e.slot)) {
			snprintf(err, errsize, "%s table: slot %u given twice",
				 name, e.slot);
			return -2;
		}
		seen |= 1ULL << e.slot;
		if (e.weight > 255) {
			snprintf(err, errsize,
				 "%s table: slot %u weight %u out of range 0..255",
				 name, e.slot, e.weight);
			return -2;
		}
		if (e.weight && (!e.minor || e.minor > 0xffff)) {
			snprintf(err, errsize,
				 "%s table: slot %u class minor %#x out of range 1..0xffff",
				 name, e.slot, e.minor);
			return -2;
		}
		if (!e.weight)
			continue;	/* a null slot, as "-" */
		t->minor[e.slot] = e.minor;
		t->weight[e.slot] = e.weight;
		if (e.slot + 1 > t->nslots)
			t->nslots = e.slot + 1;
	}
	if (rc < 0) {
		snprintf(err, errsize, "\"%s\" list: %s", name, it.err);
		return -1;
	}
	return 0;
}
