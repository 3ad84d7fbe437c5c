// SPDX-License-Identifier: GPL-2.0
/*
 * arbsim_report.c - what the text and the JSON report both compute from a
 * simulated qdisc: weights per class and table, bytes per table, current
 * bounds, gaps in time, the classes in a stable order.
 */
#include "arbsim.h"

const char *const table_name[] = {
	"high", "low", "strict", "slotless", "unclassified"
};

const char *tname(u8 t)
{
	return t < 5 ? table_name[t] : "none";
}

/* Weight of a class in a table: the sum of its slots' weights. */
u64 class_weight(const struct sim *s, unsigned int t, unsigned int idx)
{
	u64 m = arb_class_slots(&s->arb, t, idx), w = 0;

	while (m) {
		w += s->arb.tbl[t].weight[__ffs64(m)];
		m &= m - 1;
	}
	return w;
}

/* Total weight of the classes that have traffic, per table. */
u64 table_weight(const struct sim *s, unsigned int t)
{
	u64 w = 0;
	unsigned int i;

	for (i = 0; i < ARB_MAX_CLASSES; i++)
		if (s->cls[i].used && s->cls[i].tr.on)
			w += class_weight(s, t, i);
	return w;
}

u64 table_bytes(const struct sim *s, unsigned int t)
{
	u64 b = 0;
	unsigned int i;

	for (i = 0; i < ARB_MAX_CLASSES; i++)
		if (s->cls[i].used)
			b += s->cls[i].tbytes[t];
	return b;
}

u64 cur_bound(const struct sim *s, const struct sim_class *c)
{
	struct arb_params p;

	if (!s->autom || c->table != ARB_HIGH)
		return ARB_BOUND_NONE;
	strict_params(s, &p);
	return arb_alloc_current_bound_ns(&s->alloc[ARB_HIGH], &p, c->index);
}

u64 gap_ns(const struct sim *s, u64 bytes)
{
	return bytes * NSEC_PER_SEC / s->rate;
}

/* Classes sorted by minor for stable, readable output. */
unsigned int sorted_classes(const struct sim *s, unsigned int *out)
{
	unsigned int n = 0, i, j;

	for (i = 0; i < ARB_MAX_CLASSES; i++) {
		if (!s->cls[i].used)
			continue;
		for (j = n; j > 0 && s->cls[out[j - 1]].minor >
				     s->cls[i].minor; j--)
			out[j] = out[j - 1];
		out[j] = i;
		n++;
	}
	return n;
}

