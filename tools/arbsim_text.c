// SPDX-License-Identifier: GPL-2.0
/*
 * arbsim_text.c - the text report: the qdisc, the allocator's decisions,
 * the tables, the classes with what they were given and what they got,
 * shares against weights, the first dequeues.
 */
#include <stdio.h>
#include <string.h>

#include "arbt_print.h"
#include "arbsim.h"

/* The rates a scenario gives, in the unit that writes them exactly
 * (10mbit), as tc takes them.
 */
static char *fmt_rate_exact(u64 bytes, char *buf, size_t len)
{
	u64 bits = bytes * 8;

	if (bits && bits % 1000000000ULL == 0)
		snprintf(buf, len, "%llugbit", (u64)(bits / 1000000000ULL));
	else if (bits && bits % 1000000ULL == 0)
		snprintf(buf, len, "%llumbit", (u64)(bits / 1000000ULL));
	else if (bits && bits % 1000ULL == 0)
		snprintf(buf, len, "%llukbit", (u64)(bits / 1000ULL));
	else
		snprintf(buf, len, "%llubit", bits);
	return buf;
}

static char *fmt_ns(u64 ns, char *buf, size_t len)
{
	if (ns == ARB_BOUND_NONE)
		snprintf(buf, len, "none");
	else if (ns >= NSEC_PER_SEC)
		snprintf(buf, len, "%.3fs", (double)ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, len, "%.3fms", (double)ns / 1e6);
	else if (ns >= 1000)
		snprintf(buf, len, "%.3fus", (double)ns / 1e3);
	else
		snprintf(buf, len, "%lluns", ns);
	return buf;
}

/*
 * The classes table's slots column, the same shape for every class: the
 * count, then the slots with runs as ranges ("64: 0-63", "8: 0,8,...,56",
 * "1: 5"), cut with "..." to fit @width; "-" for none.
 */
static void fmt_slot_column(u64 m, char *buf, size_t width)
{
	char list[400];
	size_t n = 0, w;
	unsigned int a, b;
	u64 r = m;

	if (!m) {
		snprintf(buf, width + 1, "-");
		return;
	}
	list[0] = '\0';
	while (r) {
		a = __ffs64(r);
		b = a;
		while (b + 1 < ARB_SLOTS && (r & BIT_ULL(b + 1)))
			b++;
		n += (size_t)snprintf(list + n, sizeof(list) - n,
				      b > a + 1 ? "%s%u-%u" : b > a ? "%s%u,%u" : "%s%u",
				      n ? "," : "", a, b);
		while (a <= b)
			r &= ~BIT_ULL(a++);
	}
	w = (size_t)snprintf(buf, width + 1, "%u: %s", hweight64(m), list);
	if (w > width) {
		/* cut after a whole slot number */
		char *cut = buf + width - 3;

		while (cut > buf && cut[-1] != ',')
			cut--;
		strcpy(cut, "...");
	}
}

static void text_qdisc(const struct sim *s)
{
	struct arb_params p;
	char b1[64];
	u64 ch;

	printf("qdisc %x: %s rate %s (%llu bytes/s) highlimit %u accounting %s mtu %u maxweight %u\n",
	       s->major, s->autom ? "auto" : "manual",
	       fmt_rate_exact(s->rate, b1, sizeof(b1)),
	       s->rate, s->highlimit,
	       s->accounting == ARB_ACCT_IBA ? "iba" : "deficit", s->mtu,
	       s->maxweight);
	if (s->autom) {
		strict_params(s, &p);
		ch = arb_high_capacity(&p);
		printf("high-table guaranteed rate %s (%llu bytes/s), capacity %u units\n",
		       fmt_rate_exact(ch, b1, sizeof(b1)), ch, 64U * s->maxweight);
	}
}

static void text_decisions(const struct sim *s)
{
	char b1[64], b2[64], b3[64], sl[256];
	unsigned int i;

	printf("\ndecisions:\n");
	for (i = 0; i < s->ndec; i++) {
		const struct decision *d = &s->dec[i];

		printf("  line %d: %s", d->line, d->cmd);
		if (d->minor)
			printf(" %x:%x", s->major, d->minor);
		if (!d->ok) {
			printf(": rejected: %s\n", d->text);
			continue;
		}
		printf(": %s", d->text);
		if (d->admission && d->table != ARB_NO_CLASS) {
			printf(", %s table distance %u, %u slots [%s], weight %u",
			       tname(d->table), d->distance,
			       hweight64(d->slots),
			       arbt_fmt_slots(d->slots, sl, sizeof(sl)), d->weight);
			if (d->table == ARB_HIGH)
				printf(" guaranteeing %s (asked %s), guaranteed bound %s",
				       arbt_fmt_rate(d->reserved, b2, sizeof(b2)),
				       fmt_rate_exact(d->rate, b3, sizeof(b3)),
				       fmt_ns(d->bound_ns, b1, sizeof(b1)));
		} else if (d->admission) {
			printf(", released");
		}
		if (d->moves)
			printf(", %u swaps", d->moves);
		printf("\n");
	}
}

/* Rows of 8 slots; rows without a used slot are left out. */
static void text_tables(const struct sim *s)
{
	char b1[64], sl[256];
	unsigned int k, t;

	printf("\ntables (slot:minor/weight):\n");
	for (t = 0; t < ARB_NTABLES; t++) {
		printf("  %s:", table_name[t]);
		if (!s->arb.tbl[t].used) {
			printf(" empty\n");
			continue;
		}
		for (k = 0; k < ARB_SLOTS; k += 8) {
			const struct arb_table *tb = &s->arb.tbl[t];
			unsigned int j;
			size_t len = 0;

			if (!((tb->used >> k) & 0xff))
				continue;
			for (j = k; j < k + 8; j++) {
				if (tb->weight[j])
					snprintf(b1, sizeof(b1), "%u:%x/%u", j,
						 s->cls[tb->cls[j]].minor,
						 tb->weight[j]);
				else
					snprintf(b1, sizeof(b1), "%u:-", j);
				len += (size_t)snprintf(sl + len,
							sizeof(sl) - len,
							j + 1 < k + 8 ?
							" %-10s" : " %s", b1);
			}
			printf("\n   %s", sl);
		}
		printf("\n");
	}
}

static void text_classes(const struct sim *s, const unsigned int *idx,
			 unsigned int n)
{
	char b1[64], b2[64], b3[64], b4[64], sl[256];
	unsigned int k;

	printf("\nclasses:\n");
	printf("  %-7s %-5s %-6s %4s %-24s %6s %11s %11s %11s %s\n", "class",
	       "index", "table", "dist", "slots", "weight", "guaranteed",
	       "bound", "current", "ceil");
	for (k = 0; k < n; k++) {
		const struct sim_class *c = &s->cls[idx[k]];
		u64 hm = arb_class_slots(&s->arb, ARB_HIGH, c->index);
		u64 lm = arb_class_slots(&s->arb, ARB_LOW, c->index);
		const char *tab = c->strict ? "strict" :
				  hm && lm ? "both" : hm ? "high" :
				  lm ? "low" : "none";

		fmt_slot_column(hm | lm, sl, 24);
		if (c->table != ARB_NO_CLASS)
			snprintf(b3, sizeof(b3), "%u", c->distance);
		else
			snprintf(b3, sizeof(b3), "-");
		printf("  %x:%-5x %-5u %-6s %4s %-24s %6llu %11s %11s %11s ",
		       s->major, c->minor, c->index, tab, b3, sl,
		       class_weight(s, ARB_HIGH, c->index) +
		       class_weight(s, ARB_LOW, c->index),
		       c->table == ARB_HIGH ?
		       arbt_fmt_rate(class_reserved(s, c), b4, sizeof(b4)) : "-",
		       c->table == ARB_HIGH ? fmt_ns(c->bound_ns, b1, sizeof(b1)) : "-",
		       c->table == ARB_HIGH ? fmt_ns(cur_bound(s, c), b2, sizeof(b2)) : "-");
		printf("%s\n", c->ceil ? fmt_rate_exact(c->ceil, b3, sizeof(b3)) : "-");
	}
}

static void text_order(const struct sim *s)
{
	unsigned int i;
	char b1[64];

	printf("\ndequeue order (first %llu of %llu):\n",
	       s->norder, s->sent);
	printf("  %6s %14s %-7s %-12s %4s %8s %6s\n", "#", "time", "class",
	       "table", "slot", "credit", "len");
	for (i = 0; i < s->norder; i++) {
		const struct order_ent *o = &s->order[i];

		printf("  %6u %14s %x:%-5x %-12s %4u %8d %6u\n", i + 1,
		       fmt_ns(o->t, b1, sizeof(b1)), s->major, o->minor,
		       table_name[o->table], o->slot, o->credit, o->len);
	}

	printf("\nsimulated %llu packets, %llu bytes in %s%s\n",
	       s->sent, s->total_bytes, fmt_ns(s->now, b1, sizeof(b1)),
	       s->stopped_early ? " (stopped early: no traffic left)" : "");
}

static void text_shares(const struct sim *s, const unsigned int *idx,
			unsigned int n)
{
	unsigned int k, t;

	printf("\nshares per table (of the bytes each table sent; weights of classes with traffic):\n");
	printf("  %-6s %-7s %7s %9s %14s %9s %9s\n", "table", "class", "weight",
	       "w-share%", "bytes", "b-share%", "diff");
	for (t = 0; t < ARB_NTABLES; t++) {
		u64 tw = table_weight(s, t), tbt = table_bytes(s, t);

		for (k = 0; k < n; k++) {
			const struct sim_class *c = &s->cls[idx[k]];
			u64 w = class_weight(s, t, c->index);
			double ws, bs;

			if (!w || !c->tr.on)
				continue;
			ws = tw ? 100.0 * (double)w / (double)tw : 0;
			bs = tbt ? 100.0 * (double)c->tbytes[t] / (double)tbt : 0;
			printf("  %-6s %x:%-5x %7llu %9.3f %14llu %9.3f %+9.3f\n",
			       table_name[t], s->major, c->minor, w, ws, c->tbytes[t], bs,
			       bs - ws);
		}
	}
}

static void text_per_class(const struct sim *s, const unsigned int *idx,
			   unsigned int n)
{
	char b1[64], b2[64], b3[64];
	unsigned int k;

	printf("\nper class:\n");
	printf("  %-7s %10s %14s %8s %10s %11s %11s %11s %9s %6s\n", "class",
	       "packets", "bytes", "share%", "gap-bytes", "gap-time",
	       "max-hol", "bound", "throttled", "drops");
	for (k = 0; k < n; k++) {
		const struct sim_class *c = &s->cls[idx[k]];

		if (!c->tr.on)
			continue;
		printf("  %x:%-5x %10llu %14llu %8.3f %10llu %11s %11s %11s %9llu %6llu\n",
		       s->major, c->minor, c->pkts, c->bytes,
		       s->total_bytes ? 100.0 * (double)c->bytes /
					(double)s->total_bytes : 0,
		       c->gap_max, fmt_ns(gap_ns(s, c->gap_max), b1, sizeof(b1)),
		       fmt_ns(c->max_hol, b2, sizeof(b2)),
		       c->table == ARB_HIGH ? fmt_ns(c->bound_ns, b3, sizeof(b3)) : "-",
		       c->nthrottled, c->tr.drops);
	}
	for (k = 0; k < s->nuncl; k++) {
		const struct sim_class *c = &s->uncl[k];

		printf("  %x:%-5x %10llu %14llu %8.3f %10llu %11s %11s %11s %9s %6llu  (unclassified)\n",
		       s->major, c->minor, c->pkts, c->bytes,
		       s->total_bytes ? 100.0 * (double)c->bytes /
					(double)s->total_bytes : 0,
		       c->gap_max, fmt_ns(gap_ns(s, c->gap_max), b1, sizeof(b1)),
		       fmt_ns(c->max_hol, b2, sizeof(b2)), "-", "-",
		       c->tr.drops);
	}
}

void print_text(struct sim *s)
{
	unsigned int idx[ARB_MAX_CLASSES], n;

	n = sorted_classes(s, idx);
	text_qdisc(s);
	text_decisions(s);
	text_tables(s);
	text_classes(s, idx, n);
	text_order(s);
	text_shares(s, idx, n);
	text_per_class(s, idx, n);
	if (s->swaps)
		printf("\ndefragmentation swaps: %llu\n", s->swaps);
}

