// SPDX-License-Identifier: GPL-2.0
/*
 * sch_arbtable auto mode: classes are admitted from `rate` (+ `latency` or
 * `distance`) into the HIGH table and from `share` into the LOW table by
 * the allocator core (arbtable_alloc.c, DESIGN §4); released classes give
 * their slots back and the table is defragmented.
 *
 * Every change is planned on copies of the allocators (may sleep, may
 * fail, touches nothing live) and then committed under the tree lock
 * (cannot fail): freeing the class's old slots, applying the
 * defragmentation swaps to the live arbiter table (each swap moves a
 * class's slot together with its credit, so no packet is split or
 * lost), and filling the new slots.
 */
#include <linux/slab.h>
#include <linux/netdevice.h>

#include "arbtable_qdisc.h"
#include "arbtable_trace.h"

struct arbtable_plan {
	struct arb_alloc	alloc[ARB_NTABLES];
	struct arb_moves	mv;
	struct arbtable_resv	resv;
	u8			old_table;	/* table the moves apply to */
	u8			new_table;
	u32			distance;
	u32			weight;
	u64			bound_ns;
};

static struct arbtable_class *arbtable_strict_class(struct arbtable_sched *q)
{
	return q->arb.strict == ARB_NO_CLASS ? NULL :
	       q->classes[q->arb.strict];
}

/* Bytes the strict class may send in a burst: its bucket depth plus the
 * one packet the bucket may overshoot by (arbtable_bucket_*).
 */
static u32 arbtable_strict_burst(u64 ceil, u32 mtu)
{
	u64 b = div64_u64(ceil * (ARBTABLE_MIN_BURST_NS / NSEC_PER_USEC),
			  USEC_PER_SEC);

	return (u32)min_t(u64, max_t(u64, b, 2 * (u64)mtu) + mtu, U32_MAX);
}

static void arbtable_auto_params(struct arbtable_sched *q, u64 capacity,
				 u32 mtu, u8 maxweight, u8 highlimit,
				 struct arb_params *p)
{
	struct arbtable_class *s = arbtable_strict_class(q);

	memset(p, 0, sizeof(*p));
	p->rate = capacity;
	p->mtu = mtu;
	p->maxweight = maxweight;
	p->highlimit = highlimit;
	if (s && s->ceil.bps) {
		p->strict_ceil = s->ceil.bps;
		p->strict_burst = arbtable_strict_burst(s->ceil.bps, mtu);
	}
}

static void arbtable_params(struct arbtable_sched *q, struct arb_params *p)
{
	arbtable_auto_params(q, q->capacity, q->mtu, q->maxweight,
			     q->arb.highlimit, p);
}

static unsigned int arbtable_admitted(const struct arbtable_sched *q)
{
	return q->alloc[ARB_HIGH].nclasses + q->alloc[ARB_LOW].nclasses;
}

void arbtable_auto_init(struct arbtable_sched *q)
{
	unsigned int t;

	for (t = 0; t < ARB_NTABLES; t++)
		arb_alloc_init(&q->alloc[t], q->maxweight);
}

/*
 * The guarantees of admitted classes were computed from the rate, MTU,
 * maxweight and highlimit: those stay fixed while any class holds a
 * reservation, so no later change can break a guarantee.
 */
int arbtable_auto_check_qdisc(struct Qdisc *sch, u64 capacity,
			      const struct arbtable_cfg *cfg,
			      struct netlink_ext_ack *extack)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	unsigned int n = arbtable_admitted(q);
	struct arb_params p;

	if (!capacity) {
		arbtable_errmsg(extack, NULL,
				"auto mode needs a rate: the link speed of %s is unknown; give 'rate'",
				qdisc_dev(sch)->name);
		return -EINVAL;
	}
	if (n && (capacity != q->capacity || cfg->mtu != q->mtu ||
		  cfg->maxweight != q->maxweight ||
		  cfg->highlimit != q->arb.highlimit)) {
		arbtable_errmsg(extack, NULL,
				"rate, mtu, maxweight and highlimit are fixed while %u classes hold reservations (their guarantees depend on them); delete those classes first",
				n);
		return -EBUSY;
	}
	arbtable_auto_params(q, capacity, cfg->mtu, cfg->maxweight,
			     cfg->highlimit, &p);
	if (arb_params_check(&p)) {
		arbtable_errmsg(extack, NULL,
				"auto mode cannot use rate %llu bytes/s with mtu %u (rate must be 1..2^48 bytes/s and above the strict ceil)",
				capacity, cfg->mtu);
		return -EINVAL;
	}
	return 0;
}

int arbtable_auto_parse(struct Qdisc *sch, struct nlattr **tb,
			struct arbtable_resv *resv, bool strict,
			struct netlink_ext_ack *extack)
{
	struct nlattr *a;

	a = tb[TCA_ARBTABLE_C_RATE];
	if (a) {
		resv->rate = nla_get_u64(a);
		if (!resv->rate) {
			arbtable_errmsg(extack, a,
					"rate must be greater than 0 bytes/s");
			return -EINVAL;
		}
		resv->share = 0;
	}
	a = tb[TCA_ARBTABLE_C_SHARE];
	if (a) {
		if (tb[TCA_ARBTABLE_C_RATE]) {
			arbtable_errmsg(extack, a,
					"give either rate (HIGH table) or share (LOW table), not both");
			return -EINVAL;
		}
		resv->share = nla_get_u32(a);
		if (!resv->share || resv->share > TC_ARBTABLE_WEIGHT_MAX) {
			arbtable_errmsg(extack, a,
					"share %u out of range 1..%d (LOW table weight units of 64 bytes)",
					resv->share, TC_ARBTABLE_WEIGHT_MAX);
			return -EINVAL;
		}
		resv->rate = 0;
		resv->latency = 0;
	}
	if (tb[TCA_ARBTABLE_C_LATENCY] && tb[TCA_ARBTABLE_C_DISTANCE]) {
		arbtable_errmsg(extack, NULL,
				"give either latency or distance, not both");
		return -EINVAL;
	}
	a = tb[TCA_ARBTABLE_C_LATENCY];
	if (a) {
		resv->latency = nla_get_u64(a);
		if (!resv->latency) {
			arbtable_errmsg(extack, a,
					"latency must be greater than 0");
			return -EINVAL;
		}
		resv->distance = 0;
	}
	a = tb[TCA_ARBTABLE_C_DISTANCE];
	if (a) {
		resv->distance = nla_get_u32(a);
		if (!resv->distance || resv->distance > ARB_SLOTS) {
			arbtable_errmsg(extack, a,
					"distance %u out of range 1..%d slots",
					resv->distance, ARB_SLOTS);
			return -EINVAL;
		}
		resv->latency = 0;
	}
	if (resv->latency && resv->share) {
		arbtable_errmsg(extack, tb[TCA_ARBTABLE_C_LATENCY],
				"latency bounds are for rate classes in the HIGH table; give a share class a distance instead");
		return -EINVAL;
	}
	if ((resv->latency || resv->distance) && !resv->rate && !resv->share) {
		arbtable_errmsg(extack, NULL,
				"latency/distance need a rate (HIGH table) or a share (LOW table)");
		return -EINVAL;
	}
	if (strict && (resv->rate || resv->share)) {
		arbtable_errmsg(extack, NULL,
				"the strict class is served before the tables and takes no rate or share");
		return -EINVAL;
	}
	return 0;
}

int arbtable_auto_strict_check(struct Qdisc *sch, struct arbtable_class *cl,
			       bool strict, u64 ceil,
			       struct netlink_ext_ack *extack)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	bool was = cl && cl->strict;
	u64 old = was ? cl->ceil.bps : 0;

	if (!strict)
		return 0;
	if (!ceil) {
		arbtable_errmsg(extack, NULL,
				"a strict class needs a ceil on an auto-mode qdisc, otherwise no admitted class keeps its guarantee");
		return -EINVAL;
	}
	/* A lower ceil only helps the admitted classes; a higher one or a
	 * new strict class would take bandwidth they were promised.
	 */
	if ((!was || ceil > old) && q->alloc[ARB_HIGH].nclasses) {
		arbtable_errmsg(extack, NULL,
				"cannot add or raise the strict class's ceil while %u classes hold HIGH-table guarantees; configure the strict class first",
				q->alloc[ARB_HIGH].nclasses);
		return -EBUSY;
	}
	return 0;
}

static int arbtable_reject(int err, const struct arb_reject *rj,
			   struct netlink_ext_ack *extack)
{
	char why[160];

	arb_reject_format(rj, why, sizeof(why));
	arbtable_errmsg(extack, NULL, "cannot admit the class: %s", why);
	return err;
}

/* Table, distance and weight units asked for by @resv. */
static int arbtable_auto_size(struct arbtable_sched *q,
			      const struct arbtable_resv *resv,
			      struct arbtable_plan *plan,
			      struct arb_reject *rj,
			      struct netlink_ext_ack *extack)
{
	struct arb_params p;
	struct arb_plan pl;
	unsigned int d, n;
	int err;

	if (resv->rate) {
		arbtable_params(q, &p);
		err = arb_plan(&p, resv->rate, resv->latency, resv->distance,
			       &pl, rj);
		if (err)
			return err;
		plan->new_table = ARB_HIGH;
		plan->distance = pl.distance;
		plan->weight = pl.w_eff;
		plan->bound_ns = pl.bound_ns;
		return 0;
	}
	if (resv->share) {
		d = resv->distance ? arb_round_distance(resv->distance) :
				     ARB_SLOTS;
		n = ARB_SLOTS / d;
		plan->weight = arb_weight_eff(resv->share, n, q->maxweight);
		if (!plan->weight) {
			arbtable_errmsg(extack, NULL,
					"share %u cannot be spread over %u slots of at most weight %u",
					resv->share, n, q->maxweight);
			return -EINVAL;
		}
		plan->new_table = ARB_LOW;
		plan->distance = d;
		plan->bound_ns = 0;
		return 0;
	}
	plan->new_table = ARB_NO_CLASS;
	return 0;
}

int arbtable_auto_plan(struct Qdisc *sch, unsigned int idx, u8 old_table,
		       const struct arbtable_resv *resv,
		       struct arbtable_plan **planp,
		       struct netlink_ext_ack *extack)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct arbtable_plan *plan;
	struct arb_reject rj = {};
	int err;

	plan = kzalloc(sizeof(*plan), GFP_KERNEL);
	if (!plan)
		return -ENOMEM;
	memcpy(plan->alloc, q->alloc, sizeof(plan->alloc));
	plan->resv = *resv;
	plan->old_table = old_table;

	err = arbtable_auto_size(q, resv, plan, &rj, extack);
	if (err) {
		if (rj.code != ARB_R_OK)
			arbtable_reject(err, &rj, extack);
		goto fail;
	}

	if (old_table != ARB_NO_CLASS && old_table == plan->new_table) {
		err = arb_alloc_change(&plan->alloc[old_table], idx,
				       plan->distance, plan->weight, &plan->mv,
				       &rj);
	} else {
		if (old_table != ARB_NO_CLASS) {
			err = arb_alloc_release(&plan->alloc[old_table], idx,
						&plan->mv, &rj);
			if (err)
				goto reject;
		}
		if (plan->new_table != ARB_NO_CLASS)
			err = arb_alloc_insert(&plan->alloc[plan->new_table],
					       idx, plan->distance,
					       plan->weight, NULL, &rj);
	}
reject:
	if (err) {
		arbtable_reject(err, &rj, extack);
		goto fail;
	}
	*planp = plan;
	return 0;
fail:
	kfree(plan);
	return err;
}

/* Make the live table of @t hold what the allocator says, slot by slot. */
static void arbtable_auto_sync(struct arbtable_sched *q, unsigned int t)
{
	const struct arb_alloc *a = &q->alloc[t];
	const struct arb_table *tb = &q->arb.tbl[t];
	unsigned int s;

	for (s = 0; s < ARB_SLOTS; s++) {
		u8 owner = arb_alloc_slot_owner(a, s);
		u8 w = owner == ARB_NO_CLASS ? 0 : arb_alloc_slot_weight(a, s);

		if (tb->weight[s] != w || (w && tb->cls[s] != owner))
			arb_set_slot(&q->arb, t, s, owner, w);
	}
}

/* Caller holds the tree lock; cannot fail; frees @plan. */
void arbtable_auto_commit(struct Qdisc *sch, struct arbtable_class *cl,
			  struct arbtable_plan *plan)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	unsigned int i, t = plan->old_table;
	u64 m;

	if (t != ARB_NO_CLASS) {
		m = arb_class_slots(&q->arb, t, cl->index);
		trace_arbtable_release(sch->handle, cl->common.classid, t, m,
				       plan->mv.n);
		while (m) {
			arb_set_slot(&q->arb, t, __ffs64(m), ARB_NO_CLASS, 0);
			m &= m - 1;
		}
		for (i = 0; i < plan->mv.n; i++) {
			arb_swap_slots(&q->arb, t, plan->mv.m[i].a,
				       plan->mv.m[i].b);
			trace_arbtable_swap(sch->handle, t, plan->mv.m[i].a,
					    plan->mv.m[i].b);
		}
		q->swaps += plan->mv.n;
	}
	memcpy(q->alloc, plan->alloc, sizeof(q->alloc));
	for (t = 0; t < ARB_NTABLES; t++)
		arbtable_auto_sync(q, t);

	cl->resv = plan->resv;
	cl->table = plan->new_table;
	cl->distance = cl->table == ARB_NO_CLASS ? 0 : plan->distance;
	cl->weight = cl->table == ARB_NO_CLASS ? 0 : plan->weight;
	cl->bound_ns = plan->bound_ns;
	if (cl->table != ARB_NO_CLASS)
		trace_arbtable_admit(sch->handle, cl->common.classid, cl->table,
				     cl->distance, cl->weight,
				     arb_class_slots(&q->arb, cl->table,
						     cl->index),
				     cl->bound_ns);
	kfree(plan);
}

void arbtable_auto_fill_xstats(struct Qdisc *sch, struct arbtable_class *cl,
			       struct tc_arbtable_class_xstats *xs)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct arb_params p;
	u64 cur;

	if (q->mode != TC_ARBTABLE_MODE_AUTO || cl->table == ARB_NO_CLASS)
		return;
	xs->distance = cl->distance;
	xs->rate = cl->resv.rate;
	if (cl->table != ARB_HIGH)
		return;
	xs->guaranteed_bound_ns = cl->bound_ns;
	arbtable_params(q, &p);
	cur = arb_alloc_current_bound_ns(&q->alloc[ARB_HIGH], &p, cl->index);
	xs->current_bound_ns = cur == ARB_BOUND_NONE ? 0 : cur;
}
