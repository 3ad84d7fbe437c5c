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
#include <trace/events/arbtable.h>

struct arbtable_plan {
	struct arb_admission	adm;
	char			why[200];	/* a refusal's reason, formatted
						 * here rather than on the stack
						 */
};

static struct arbtable_class *arbtable_strict_class(struct arbtable_sched *q)
{
	return q->arb.strict == ARB_NO_CLASS ? NULL :
	       q->classes[q->arb.strict];
}

static void arbtable_auto_params(struct arbtable_sched *q, u64 capacity,
				 u32 mtu, u8 maxweight, u8 highlimit,
				 struct arb_params *p)
{
	struct arbtable_class *s = arbtable_strict_class(q);

	arb_admit_params(capacity, mtu, maxweight, highlimit,
			 s ? s->ceil.bps : 0, s ? s->cburst : 0, p);
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
			struct arb_resv *resv, bool strict,
			struct netlink_ext_ack *extack)
{
	struct nlattr *a;

	a = tb[TCA_ARBTABLE_C_RATE];
	if (a) {
		if (!nla_get_u64(a)) {
			arbtable_errmsg(extack, a,
					"rate must be greater than 0 bytes/s");
			return -EINVAL;
		}
		arb_resv_set_rate(resv, nla_get_u64(a));
	}
	a = tb[TCA_ARBTABLE_C_SHARE];
	if (a) {
		if (tb[TCA_ARBTABLE_C_RATE]) {
			arbtable_errmsg(extack, a,
					"give either rate (HIGH table) or share (LOW table), not both");
			return -EINVAL;
		}
		if (!nla_get_u32(a) ||
		    nla_get_u32(a) > TC_ARBTABLE_WEIGHT_MAX) {
			arbtable_errmsg(extack, a,
					"share %u out of range 1..%d (LOW table weight units of 64 bytes)",
					nla_get_u32(a), TC_ARBTABLE_WEIGHT_MAX);
			return -EINVAL;
		}
		arb_resv_set_share(resv, nla_get_u32(a));
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
			       bool strict, u64 ceil, u32 cburst,
			       struct netlink_ext_ack *extack)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	bool was = cl && cl->strict;
	u64 old = was ? cl->ceil.bps : 0;
	u32 old_burst = was ? arb_strict_burst(old, q->mtu, cl->cburst) : 0;

	if (!strict)
		return 0;
	if (!ceil) {
		arbtable_errmsg(extack, NULL,
				"a strict class needs a ceil on an auto-mode qdisc, otherwise no admitted class keeps its guarantee");
		return -EINVAL;
	}
	/* A lower ceil only helps the admitted classes; a higher one or a
	 * new strict class would take bandwidth they were promised, and a
	 * deeper bucket (cburst) would lengthen their bounds.
	 */
	if ((!was || ceil > old) && q->alloc[ARB_HIGH].nclasses) {
		arbtable_errmsg(extack, NULL,
				"cannot add or raise the strict class's ceil while %u classes hold HIGH-table guarantees; configure the strict class first",
				q->alloc[ARB_HIGH].nclasses);
		return -EBUSY;
	}
	if (arb_strict_burst(ceil, q->mtu, cburst) > old_burst &&
	    q->alloc[ARB_HIGH].nclasses) {
		arbtable_errmsg(extack, NULL,
				"cannot deepen the strict class's cburst while %u classes hold HIGH-table guarantees: their bounds count its burst",
				q->alloc[ARB_HIGH].nclasses);
		return -EBUSY;
	}
	return 0;
}

int arbtable_auto_plan(struct Qdisc *sch, unsigned int idx, u8 old_table,
		       const struct arb_resv *resv,
		       struct arbtable_plan **planp,
		       struct netlink_ext_ack *extack)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct arbtable_plan *plan;
	struct arb_params p;
	int err;

	plan = kzalloc(sizeof(*plan), GFP_KERNEL);
	if (!plan) {
		NL_SET_ERR_MSG(extack, "cannot allocate the admission plan");
		return -ENOMEM;
	}
	arbtable_params(q, &p);
	err = arb_admit_plan(q->alloc, &p, q->maxweight, idx, old_table, resv,
			     &plan->adm, plan->why, sizeof(plan->why));
	if (err) {
		arbtable_errmsg(extack, NULL, "%s", plan->why);
		kfree(plan);
		return err;
	}
	*planp = plan;
	return 0;
}

struct arbtable_swap_ctx {
	struct Qdisc	*sch;
};

static void arbtable_on_swap(void *ctx, unsigned int t, u8 a, u8 b)
{
	struct Qdisc *sch = ((struct arbtable_swap_ctx *)ctx)->sch;
	struct arbtable_sched *q = qdisc_priv(sch);

	q->swaps++;
	trace_arbtable_swap(sch->handle, t, a, b);
}

/* Caller holds the tree lock; cannot fail; frees @plan. */
void arbtable_auto_commit(struct Qdisc *sch, struct arbtable_class *cl,
			  struct arbtable_plan *plan)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	const struct arb_admission *adm = &plan->adm;
	struct arbtable_swap_ctx ctx = { .sch = sch };

	if (adm->old_table != ARB_NO_CLASS)
		trace_arbtable_release(sch->handle, cl->common.classid,
				       adm->old_table,
				       arb_class_slots(&q->arb, adm->old_table,
						       cl->index),
				       adm->mv.n);
	arb_admit_commit(&q->arb, q->alloc, cl->index, adm, arbtable_on_swap,
			 &ctx);

	cl->resv = adm->resv;
	cl->table = adm->new_table;
	cl->distance = cl->table == ARB_NO_CLASS ? 0 : adm->distance;
	cl->weight = cl->table == ARB_NO_CLASS ? 0 : adm->weight;
	cl->bound_ns = adm->bound_ns;
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
	xs->reserved_weight = cl->weight;
	if (cl->table != ARB_HIGH)
		return;
	xs->guaranteed_bound_ns = cl->bound_ns;
	arbtable_params(q, &p);
	xs->guaranteed_rate = arb_weight_rate(&p, cl->weight);
	cur = arb_alloc_current_bound_ns(&q->alloc[ARB_HIGH], &p, cl->index);
	xs->current_bound_ns = cur == ARB_BOUND_NONE ? 0 : cur;
}
