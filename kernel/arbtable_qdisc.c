// SPDX-License-Identifier: GPL-2.0
/*
 * net/sched/sch_arbtable: InfiniBand VL arbitration tables for Ethernet.
 *
 * A classful qdisc: each class owns a child qdisc and is served through a
 * 64-slot HIGH and a 64-slot LOW table of (class, weight) slots, walked as
 * the InfiniBand Architecture Specification, Vol. 1, "Data VL Arbitration"
 * walks its VL arbitration tables, with per-slot deficit counters. A
 * strict class is served before both tables, under a ceil.
 *
 * Manual mode: the user programs the slots. Auto mode: classes ask for a
 * rate and a latency (or a share) and the allocator places them, following
 * F. J. Alfaro, J. L. Sanchez, M. Menduina, J. Duato, "Formalizing the
 * Fill-In of the InfiniBand Arbitration Table", Technical Report
 * DIAB-03-02-35, University of Castilla-La Mancha, 2003 (sections 8-10:
 * fill-in, release and defragmentation).
 *
 * This file is the qdisc: netlink configuration, classes, classification,
 * shaping (qdisc rate, class ceil) with the qdisc watchdog, statistics.
 * The table walk and the allocator are arbtable_core.c, the same module;
 * Documentation/networking/arbtable.rst describes the model.
 */

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/types.h>
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/skbuff.h>
#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/if_vlan.h>
#include <linux/rtnetlink.h>
#include <linux/ptr_ring.h>
#include <net/dst.h>
#include <net/net_namespace.h>
#include <net/netlink.h>
#include <net/pkt_sched.h>
#include <net/pkt_cls.h>
#include <net/sch_generic.h>

#include "arbtable_compat.h"
#include "arbtable_core.h"

#define CREATE_TRACE_POINTS
#include <trace/events/arbtable.h>

#define ARBTABLE_DEFAULT_HIGHLIMIT	16	/* 64 KiB of high per low turn */
#define ARBTABLE_DEFAULT_MAXWEIGHT	255

struct arbtable_bucket {
	struct psched_ratecfg	rate;
	s64			tokens;		/* ns of transmission time */
	s64			buffer;		/* max tokens, ns */
	u64			t_c;		/* last refill */
	u64			bps;		/* bytes/s, 0 = none */
};

struct arbtable_class {
	struct Qdisc_class_common	common;
	struct Qdisc			*qdisc;
	struct gnet_stats_basic_sync	bstats;
	struct gnet_stats_queue		qstats;
	struct net_rate_estimator __rcu	*rate_est;
	struct arbtable_bucket		ceil;
	u64				unthrottle_at;	/* ns, when throttled */
	u64				head_since;	/* ns the head became head,
							 * 0: at an idle qdisc
							 */
	u64				max_hol_ns;
	u64				throttled;
	u64				stalls;		/* child had packets, sent none */
	u32				cburst;		/* ceil depth, bytes;
							 * 0: the default
							 */
#if !ARBTABLE_CLASS_REFS
	u32				filter_cnt;	/* arbtable_class_get() */
#endif
	u8				index;		/* arbiter class index */
	bool				strict;

	/* auto mode: what was asked, and what the allocator granted */
	struct arb_resv		resv;
	u8				table;		/* ARB_HIGH/LOW, or ARB_NO_CLASS */
	u32				distance;	/* effective */
	u32				weight;		/* units reserved */
	u64				bound_ns;	/* guaranteed HOL bound */
	/* the device's frames outgrew what the admission assumed: the
	 * reserved rate or the latency asked no longer holds
	 */
	bool				broken;

	/* lockless mode: the class's queue instead of a child qdisc */
	struct ptr_ring			ring;
	u64				ll_enq_pkts;	/* ring.producer_lock */
	u64				ll_enq_bytes;
	u64				ll_drops;
	u64				ll_deq_pkts;	/* the dequeuer */
	u64				ll_deq_bytes;
};

/* arbtable_sched.cls_limits: classification paths closed */
#define ARBTABLE_NO_PRIO_CLASSID	BIT(0)	/* skb->priority as a classid */
#define ARBTABLE_NO_FOREIGN		BIT(1)	/* any, for foreign packets */

struct arbtable_sched {
	struct Qdisc			*sch;
	struct list_head		list;		/* on arbtable_list */
	struct tcf_proto __rcu		*filter_list;
	struct tcf_block		*block;
	struct Qdisc_class_hash		clhash;		/* by classid */
	struct arbtable_class		*classes[ARB_MAX_CLASSES];	/* by index */
	/* a class whose minor is the slot's modulo 64: skb->priority without
	 * the hash walk (a NULL or another minor: arbtable_find_class())
	 */
	struct arbtable_class		*by_minor[ARB_MAX_CLASSES];
	u64				cls_used;	/* indices in use */
	u64				throttled;	/* by ceil */
	u64				stalled;	/* child returned NULL */
	u64				next_unthrottle;
	u64				busy_since;	/* ns, first dequeue of the
							 * busy period; 0 unknown
							 */
	struct arb_sched		arb;
	struct arbtable_bucket		shaper;		/* qdisc rate */
	struct qdisc_skb_head		unclassified;
	struct qdisc_watchdog		watchdog;

	/* bytes/s the tables share: the rate, else the link speed when
	 * the qdisc was created or its rate last changed
	 */
	u64				capacity;
	u64				link_rate;	/* link speed last read, 0 unknown */
	u64				link_changes;
	u64				mtu_changes;	/* device mtu followed */
	u32				broken;		/* classes, see arbtable_class */
	u32				priomap[TC_ARBTABLE_PRIO_BANDS];
	u32				default_minor;
	/* the classes they name, NULL where none exists: no lookup per packet */
	struct arbtable_class		*prio_cl[TC_ARBTABLE_PRIO_BANDS];
	struct arbtable_class		*default_cl;
	u32				mtu;
	u32				burst;		/* qdisc rate, bytes;
							 * 0: the default depth
							 */
	u8				mode;
	u8				maxweight;
	bool				mtu_pinned;	/* 'mtu' given: do not follow */
	u8				cls_limits;	/* ARBTABLE_NO_*, 0 usually */
	u8				stall_next;	/* next stalled class to retry */
	/* in a child's dequeue: its qlen_notify is settled after it */
	bool				dequeuing;

	u64				unclassified_pkts;
	u64				unclassified_drops;
	u64				uncl_head_since;	/* ns */
	u64				uncl_max_wait;		/* ns */
	u64				nthrottled;
	u64				swaps;
	/* per GSO skb or oversize frame, before any class's queue: every
	 * sending CPU at once writes them in the lockless mode
	 */
	atomic64_t			gso_split;	/* GSO skbs segmented */
	atomic64_t			gso_segs;	/* segments queued */
	atomic64_t			oversize_drops;	/* frames > mtu */
	u64				stalls;

	/* auto mode: the allocator's view of each table */
	struct arb_alloc		alloc[ARB_NTABLES];

	/* lockless mode (TCQ_F_NOLOCK), chosen at creation. Enqueue
	 * produces into a ring and marks the class pending; the dequeuer,
	 * under the seqlock, folds pending into ll_busy and the arbiter.
	 */
	bool				lockless;
	atomic64_t			pending;	/* class bits */
	unsigned long			uncl_pending;	/* bit 0 */
	u64				ll_busy;	/* the dequeuer's view */
	struct ptr_ring			uncl_ring;
	u64				uncl_enq;	/* uncl_ring.producer_lock */
	u64				uncl_deq;	/* the dequeuer */
};

/* A qdisc configuration parsed and checked in full before anything is
 * applied, so that a rejected change leaves the running one intact.
 */
struct arbtable_cfg {
	u64	rate;
	u32	priomap[TC_ARBTABLE_PRIO_BANDS];
	u32	default_minor;
	u32	mtu;
	u32	burst;
	bool	mtu_pinned;
	bool	rate_given;	/* in this request: the capacity is set anew */
	bool	sizes_given;	/* in this request: burst or mtu */
	u8	mode;
	u8	highlimit;
	u8	accounting;
	u8	maxweight;
	u8	cls_limits;
	bool	lockless;
	bool	set_tbl[ARB_NTABLES];
	u8	cls[ARB_NTABLES][ARB_SLOTS];
	u8	weight[ARB_NTABLES][ARB_SLOTS];
};

/* The same for a class change */
struct arbtable_class_opts {
	struct arb_resv	resv;		/* auto mode */
	u64		ceil;
	u32		cburst;
	bool		strict;
};

/* Plain ranges are the policies'; not const, as 6.1's nla_policy wants. */
static struct netlink_range_validation arbtable_minor_range = {
	.max = TC_H_MIN_MASK,
};

static struct netlink_range_validation arbtable_burst_range = {
	.max = TC_ARBTABLE_BURST_MAX,
};

/* a ceil, or the qdisc's rate: 0 is none (the qdisc's: the link's) */
static struct netlink_range_validation arbtable_ceil_range = {
	.max = ARB_RATE_MAX,
};

static struct netlink_range_validation arbtable_rate_range = {
	.min = 1,
	.max = ARB_RATE_MAX,
};

static struct netlink_range_validation arbtable_slot_minor_range = {
	.min = 1,
	.max = TC_H_MIN_MASK,
};

static const struct nla_policy arbtable_slot_policy[TCA_ARBTABLE_SLOT_MAX + 1] = {
	[TCA_ARBTABLE_SLOT_CLASS] = NLA_POLICY_FULL_RANGE(NLA_U32, &arbtable_slot_minor_range),
	[TCA_ARBTABLE_SLOT_WEIGHT] = NLA_POLICY_MAX(NLA_U32, TC_ARBTABLE_WEIGHT_MAX),
};

static const struct nla_policy arbtable_tbl_policy[TCA_ARBTABLE_TBL_MAX + 1] = {
	[TCA_ARBTABLE_TBL_SLOT] = NLA_POLICY_NESTED(arbtable_slot_policy),
};

static const struct nla_policy arbtable_prio_policy[TCA_ARBTABLE_PRIOMAP_MAX + 1] = {
	[TCA_ARBTABLE_PRIOMAP_BAND] = NLA_POLICY_FULL_RANGE(NLA_U32, &arbtable_minor_range),
};

static const struct nla_policy arbtable_policy[TCA_ARBTABLE_MAX + 1] = {
	[TCA_ARBTABLE_MODE]	= NLA_POLICY_MAX(NLA_U32, __TC_ARBTABLE_MODE_MAX - 1),
	[TCA_ARBTABLE_RATE]	= NLA_POLICY_FULL_RANGE(NLA_U64, &arbtable_ceil_range),
	[TCA_ARBTABLE_HIGHLIMIT] = NLA_POLICY_MAX(NLA_U32, TC_ARBTABLE_HIGHLIMIT_MAX),
	[TCA_ARBTABLE_ACCOUNTING] = NLA_POLICY_MAX(NLA_U32, __TC_ARBTABLE_ACCT_MAX - 1),
	[TCA_ARBTABLE_DEFAULT]	= NLA_POLICY_FULL_RANGE(NLA_U32, &arbtable_minor_range),
	[TCA_ARBTABLE_PRIOMAP]	= NLA_POLICY_NESTED(arbtable_prio_policy),
	[TCA_ARBTABLE_MTU]	= { .type = NLA_U32 },	/* 0, or a range */
	[TCA_ARBTABLE_MAXWEIGHT] = NLA_POLICY_RANGE(NLA_U32, 1, TC_ARBTABLE_WEIGHT_MAX),
	[TCA_ARBTABLE_HIGH]	= NLA_POLICY_NESTED(arbtable_tbl_policy),
	[TCA_ARBTABLE_LOW]	= NLA_POLICY_NESTED(arbtable_tbl_policy),
	[TCA_ARBTABLE_BURST]	= NLA_POLICY_FULL_RANGE(NLA_U32, &arbtable_burst_range),
	[TCA_ARBTABLE_MTU_FOLLOW] = { .type = NLA_FLAG },
	[TCA_ARBTABLE_RATE_LINK] = { .type = NLA_FLAG },
	[TCA_ARBTABLE_PRIO_CLASSID] = NLA_POLICY_MAX(NLA_U32, 1),
	[TCA_ARBTABLE_CLASSIFY_FOREIGN] = NLA_POLICY_MAX(NLA_U32, 1),
	[TCA_ARBTABLE_LOCKLESS]	= NLA_POLICY_MAX(NLA_U32, 1),
	/* what nla_put_u64_64bit() puts before a u64 on some arches
	 * (i386): taken, so a dump is accepted back, and ignored
	 */
	[TCA_ARBTABLE_PAD]	= NLA_POLICY_EXACT_LEN(0),
};

static const struct nla_policy arbtable_class_policy[TCA_ARBTABLE_C_MAX + 1] = {
	[TCA_ARBTABLE_C_STRICT]	= NLA_POLICY_MAX(NLA_U32, 1),
	[TCA_ARBTABLE_C_CEIL]	= NLA_POLICY_FULL_RANGE(NLA_U64, &arbtable_ceil_range),
	[TCA_ARBTABLE_C_CBURST]	= NLA_POLICY_FULL_RANGE(NLA_U32, &arbtable_burst_range),
	[TCA_ARBTABLE_C_RATE]	= NLA_POLICY_FULL_RANGE(NLA_U64, &arbtable_rate_range),
	[TCA_ARBTABLE_C_LATENCY] = NLA_POLICY_MIN(NLA_U64, 1),
	[TCA_ARBTABLE_C_DISTANCE] = NLA_POLICY_RANGE(NLA_U32, 1, ARB_SLOTS),
	[TCA_ARBTABLE_C_SHARE]	= NLA_POLICY_RANGE(NLA_U32, 1, TC_ARBTABLE_WEIGHT_MAX),
	[TCA_ARBTABLE_C_PAD]	= NLA_POLICY_EXACT_LEN(0),	/* as above */
};

/* Constant messages below spell these limits out. */
static_assert(ARB_MTU_MIN == 64 && ARB_MTU_MAX == 1048576);
static_assert(TC_ARBTABLE_SLOTS == 64 && ARB_MAX_CLASSES == 64);
static_assert(TC_ARBTABLE_WEIGHT_MAX == 255 && TC_ARBTABLE_PRIO_BANDS == 16);

/* ---- lockless mode: configuration against the datapath ---- */

/*
 * The tree lock excludes no enqueue or dequeue of a lockless qdisc: its
 * configuration also takes the seqlock, before the root lock as
 * dev_reset_queue() does, so that no dequeue runs meanwhile. What enqueue
 * reads is published with release stores and unpublished before a grace
 * period (arbtable_delete_class()).
 */
static void arbtable_tree_lock(struct Qdisc *sch)
	__acquires(&sch->seqlock) __acquires(qdisc_lock(sch))
{
	struct arbtable_sched *q = qdisc_priv(sch);

	if (q->lockless)
		spin_lock_bh(&sch->seqlock);
	else
		__acquire(&sch->seqlock);	/* for sparse: unused when locked */
	sch_tree_lock(sch);
}

static void arbtable_tree_unlock(struct Qdisc *sch)
	__releases(qdisc_lock(sch)) __releases(&sch->seqlock)
{
	struct arbtable_sched *q = qdisc_priv(sch);

	sch_tree_unlock(sch);
	if (!q->lockless) {
		__release(&sch->seqlock);
		return;
	}
	spin_unlock_bh(&sch->seqlock);
	/* a sender that found the seqlock taken left its packet to us, as
	 * qdisc_run_end() does for the dequeuer
	 */
	smp_mb();
	if (test_bit(__QDISC_STATE_MISSED, &sch->state))
		__netif_schedule(sch);
}

/* Empty a ring as its only consumer; the packets leave the qdisc's counts */
static unsigned int arbtable_ring_purge(struct Qdisc *sch, struct ptr_ring *r,
					u64 *bytes)
{
	struct sk_buff *skb;
	unsigned int n = 0;

	while ((skb = __ptr_ring_consume(r))) {
		qdisc_qstats_cpu_backlog_dec(sch, skb);
		qdisc_qstats_cpu_qlen_dec(sch);
		if (bytes)
			*bytes += qdisc_pkt_len(skb);
		n++;
		kfree_skb(skb);
	}
	return n;
}

/* ---- auto mode ---- */

/*
 * Auto mode: the allocator admits classes from `rate` (and `latency` or
 * `distance`) into the HIGH table and from `share` into the LOW table;
 * released classes give their slots back and the table is defragmented.
 *
 * A class's admission is staged on copies of the allocators (may sleep,
 * may fail, touches nothing live) and committed under the tree lock
 * (cannot fail): its old slots freed, the defragmentation swaps applied
 * to the live table (a slot moves with its credit, so no packet is split
 * or lost), its new slots filled.
 */
struct arbtable_pending_admission {
	struct arb_admission	adm;
	char			why[200];	/* a refusal's reason, too large
						 * for the stack
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

/*
 * The guarantees of admitted classes were computed from the rate, MTU,
 * maxweight and highlimit: those stay fixed while any class holds a
 * reservation, so no later change can break a guarantee.
 */
static int arbtable_auto_check_qdisc(struct Qdisc *sch, u64 capacity,
				     const struct arbtable_cfg *cfg,
				     bool no_rate_ok,
				     struct netlink_ext_ack *extack)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	unsigned int n = arbtable_admitted(q);
	struct arb_params p;

	/*
	 * An instance made without options (default_qdisc, a queue of mq)
	 * with no capacity (the speed unknown, or a queue's share of the
	 * port not given, arbtable_configure()): refusing it would leave the
	 * device without a qdisc, dropping everything. It runs unshaped and
	 * admits no class until it is given a rate; a change that gives none
	 * leaves it so.
	 */
	if (!capacity && no_rate_ok)
		return 0;
	if (!capacity) {
		NL_SET_ERR_MSG(extack,
			       "auto mode needs a rate: the device's link speed is unknown; give 'rate'");
		return -EINVAL;
	}
	/* an mtu left to follow the device changes as the device's does */
	if (n && (capacity != q->capacity ||
		  (cfg->mtu_pinned && cfg->mtu != q->mtu) ||
		  cfg->maxweight != q->maxweight ||
		  cfg->highlimit != q->arb.highlimit)) {
		NL_SET_ERR_MSG(extack,
			       "rate, mtu, maxweight and highlimit are fixed while classes hold reservations (their guarantees depend on them); delete those classes first");
		return -EBUSY;
	}
	arbtable_auto_params(q, capacity, cfg->mtu, cfg->maxweight,
			     cfg->highlimit, &p);
	if (arb_params_check(&p)) {
		char r[24];

		arbtable_refuse(extack, NULL,
				"auto mode needs 1..2^48 bytes/s above the strict ceil",
				": %.16s", arb_fmt_rate(r, sizeof(r), capacity));
		return -EINVAL;
	}
	return 0;
}

static int arbtable_auto_parse(struct Qdisc *sch, struct nlattr **tb,
			       struct arb_resv *resv, bool strict,
			       struct netlink_ext_ack *extack)
{
	struct nlattr *a;

	a = tb[TCA_ARBTABLE_C_RATE];
	if (a)
		arb_resv_set_rate(resv, nla_get_u64(a));
	a = tb[TCA_ARBTABLE_C_SHARE];
	if (a) {
		if (tb[TCA_ARBTABLE_C_RATE]) {
			NL_SET_ERR_MSG_ATTR(extack, a,
					    "give either rate (HIGH table) or share (LOW table), not both");
			return -EINVAL;
		}
		arb_resv_set_share(resv, nla_get_u32(a));
	}
	if (tb[TCA_ARBTABLE_C_LATENCY] && tb[TCA_ARBTABLE_C_DISTANCE]) {
		NL_SET_ERR_MSG(extack,
			       "give either latency or distance, not both");
		return -EINVAL;
	}
	a = tb[TCA_ARBTABLE_C_LATENCY];
	if (a) {
		resv->latency = nla_get_u64(a);
		resv->distance = 0;
	}
	a = tb[TCA_ARBTABLE_C_DISTANCE];
	if (a) {
		resv->distance = nla_get_u32(a);
		resv->latency = 0;
	}
	if (resv->latency && resv->share) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_ARBTABLE_C_LATENCY],
				    "latency bounds are for rate classes in the HIGH table; give a share class a distance instead");
		return -EINVAL;
	}
	if ((resv->latency || resv->distance) && !resv->rate && !resv->share) {
		NL_SET_ERR_MSG(extack,
			       "latency/distance need a rate (HIGH table) or a share (LOW table)");
		return -EINVAL;
	}
	if (strict && (resv->rate || resv->share)) {
		NL_SET_ERR_MSG(extack,
			       "the strict class is served before the tables and takes no rate or share");
		return -EINVAL;
	}
	return 0;
}

/* An instance the kernel made without options on a device of unknown
 * speed or a queue of mq (arbtable_auto_check_qdisc()): nothing to admit
 * against yet.
 */
static bool arbtable_no_capacity(const struct arbtable_sched *q,
				 struct netlink_ext_ack *extack)
{
	if (q->capacity)
		return false;
	NL_SET_ERR_MSG(extack,
		       "no rate to admit against: the link speed is unknown, or this is one queue of a multi-queue root; give the qdisc 'rate' first");
	return true;
}

/* The strict class of an auto-mode qdisc: served before the tables, it
 * is bounded by a ceil the admitted classes' guarantees count.
 */
static int arbtable_auto_strict_check(struct Qdisc *sch,
				      struct arbtable_class *cl,
				      const struct arbtable_class_opts *o,
				      struct netlink_ext_ack *extack)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	bool was = cl && cl->strict;
	u64 old = was ? cl->ceil.bps : 0;
	u32 old_burst = was ? arb_strict_burst(old, q->mtu, cl->cburst) : 0;

	if (arbtable_no_capacity(q, extack))
		return -EINVAL;
	if (!o->ceil) {
		NL_SET_ERR_MSG(extack,
			       "a strict class needs a ceil on an auto-mode qdisc, otherwise no admitted class keeps its guarantee");
		return -EINVAL;
	}
	if (o->ceil >= q->capacity) {
		char c[16], r[16];	/* both at most 2^48 bytes/s */

		arbtable_refuse(extack, NULL,
				"strict ceil is not below the qdisc's capacity",
				": %.12s >= %.12s", arb_fmt_rate(c, sizeof(c), o->ceil),
				arb_fmt_rate(r, sizeof(r), q->capacity));
		return -EINVAL;
	}
	/* A lower ceil only helps the admitted classes; a higher one or a
	 * new strict class would take bandwidth they were promised, and a
	 * deeper bucket (cburst) would lengthen their bounds.
	 */
	if ((!was || o->ceil > old) && q->alloc[ARB_HIGH].nclasses) {
		NL_SET_ERR_MSG(extack,
			       "cannot add or raise the strict class's ceil while classes hold HIGH-table guarantees; configure the strict class first");
		return -EBUSY;
	}
	if (arb_strict_burst(o->ceil, q->mtu, o->cburst) > old_burst &&
	    q->alloc[ARB_HIGH].nclasses) {
		NL_SET_ERR_MSG(extack,
			       "cannot deepen the strict class's cburst while classes hold HIGH-table guarantees: their bounds count its burst");
		return -EBUSY;
	}
	return 0;
}

static int arbtable_admission_stage(struct Qdisc *sch, unsigned int idx,
				    u8 old_table, const struct arb_resv *resv,
				    struct arbtable_pending_admission **pendp,
				    struct netlink_ext_ack *extack)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct arbtable_pending_admission *pend;
	struct arb_params p;
	int err;

	if (arbtable_no_capacity(q, extack))
		return -EINVAL;
	pend = kzalloc(sizeof(*pend), GFP_KERNEL);
	if (!pend) {
		NL_SET_ERR_MSG(extack, "cannot allocate the admission");
		return -ENOMEM;
	}
	arbtable_params(q, &p);
	err = arb_admit_prepare(q->alloc, &p, q->maxweight, idx, old_table,
				resv, &pend->adm, pend->why, sizeof(pend->why));
	if (err) {
		arbtable_err(extack, NULL, arb_reason_text(pend->adm.reason),
			     "%.79s", pend->why);
		kfree(pend);
		return err;
	}
	*pendp = pend;
	return 0;
}

/* @ctx is the qdisc: a slot pair moved by the defragmentation */
static void arbtable_on_swap(void *ctx, unsigned int t, u8 a, u8 b)
{
	struct Qdisc *sch = ctx;
	struct arbtable_sched *q = qdisc_priv(sch);

	q->swaps++;
	trace_arbtable_swap(sch, t, a, b);
}

/* Caller holds the tree lock; cannot fail; frees @pend. */
static void arbtable_admission_commit(struct Qdisc *sch,
				      struct arbtable_class *cl,
				      struct arbtable_pending_admission *pend)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	const struct arb_admission *adm = &pend->adm;

	if (adm->old_table != ARB_NO_CLASS)
		trace_arbtable_release(sch, cl->common.classid,
				       adm->old_table,
				       arb_class_slots(&q->arb, adm->old_table,
						       cl->index),
				       adm->mv.n);
	arb_admit_commit(&q->arb, q->alloc, cl->index, adm, arbtable_on_swap,
			 sch);

	cl->resv = adm->resv;
	cl->table = adm->new_table;
	cl->distance = cl->table == ARB_NO_CLASS ? 0 : adm->distance;
	cl->weight = cl->table == ARB_NO_CLASS ? 0 : adm->weight;
	cl->bound_ns = adm->bound_ns;
	if (cl->table != ARB_NO_CLASS)
		trace_arbtable_admit(sch, cl->common.classid, cl->table,
				     cl->distance, cl->weight,
				     arb_class_slots(&q->arb, cl->table,
						     cl->index),
				     cl->bound_ns);
	kfree(pend);
}

/*
 * An admitted class's reservation; a HIGH class's guaranteed rate and
 * current bound, from the allocation and the parameters as they are:
 * read, nothing written (RTNL held). Its own frame: the stats dump's is
 * large already.
 */
static noinline_for_stack void
arbtable_auto_fill_xstats(struct Qdisc *sch, struct arbtable_class *cl,
			  struct tc_arbtable_class_xstats *xs)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct arb_params p;
	u64 cur;

	if (q->mode != TC_ARBTABLE_MODE_AUTO || cl->table == ARB_NO_CLASS)
		return;
	xs->distance = cl->distance;
	xs->reserved_rate = cl->resv.rate;
	xs->reserved_weight = cl->weight;
	if (cl->table != ARB_HIGH)
		return;
	xs->guaranteed_bound_ns = cl->bound_ns;
	arbtable_params(q, &p);
	xs->guaranteed_rate = arb_weight_rate(&p, cl->weight);
	cur = arb_alloc_current_bound_ns(&q->alloc[ARB_HIGH], &p, cl->index);
	xs->current_bound_ns = cur == ARB_BOUND_NONE ? 0 : cur;
}

static const char *const arbtable_table_name[ARB_NTABLES] = { "high", "low" };

/* @cl: each class whose index is in @mask, lowest first */
#define arbtable_for_each_class(q, cl, mask)				\
	for (u64 __m = (mask);						\
	     __m && ((cl) = (q)->classes[__ffs64(__m)], true);		\
	     __m &= __m - 1)

/*
 * By classid: the class hash, which the root lock (or RTNL) keeps still
 * for a locked qdisc. A lockless enqueue cannot walk a hash changed under
 * that lock: it reads the array instead, each entry once (a class is
 * freed only a grace period after it left it).
 */
static __always_inline struct arbtable_class *
arbtable_find_class(struct Qdisc *sch, u32 classid)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct Qdisc_class_common *clc;
	struct arbtable_class *cl;
	u64 m;

	if (!q->lockless) {
		clc = qdisc_class_find(&q->clhash, classid);
		return clc ? container_of(clc, struct arbtable_class, common) :
			     NULL;
	}
	for (m = READ_ONCE(q->cls_used); m; m &= m - 1) {
		cl = READ_ONCE(q->classes[__ffs64(m)]);
		if (cl && cl->common.classid == classid)
			return cl;
	}
	return NULL;
}

static struct arbtable_class *arbtable_find_minor(struct Qdisc *sch, u32 minor)
{
	return arbtable_find_class(sch, TC_H_MAKE(sch->handle, minor));
}

/* After a change of the priomap, the default or the classes; tree lock held */
static void arbtable_cache_classes(struct Qdisc *sch)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct arbtable_class *cl;
	u64 filled = 0;
	unsigned int i;

	/* a lockless enqueue reads each pointer once, never a torn table:
	 * every entry is written once, a new class initialised before
	 */
	smp_wmb();
	for (i = 0; i < TC_ARBTABLE_PRIO_BANDS; i++)
		WRITE_ONCE(q->prio_cl[i], q->priomap[i] ?
			   arbtable_find_minor(sch, q->priomap[i]) : NULL);
	WRITE_ONCE(q->default_cl, q->default_minor ?
		   arbtable_find_minor(sch, q->default_minor) : NULL);
	arbtable_for_each_class(q, cl, q->cls_used) {
		u32 slot = TC_H_MIN(cl->common.classid) & (ARB_MAX_CLASSES - 1);

		if (!(filled & BIT_ULL(slot))) {
			filled |= BIT_ULL(slot);
			WRITE_ONCE(q->by_minor[slot], cl);
		}
	}
	for (i = 0; i < ARB_MAX_CLASSES; i++)
		if (!(filled & BIT_ULL(i)))
			WRITE_ONCE(q->by_minor[i], NULL);
}

/* The device's largest frame as the qdisc sees it, in the mtu's range */
static u32 arbtable_dev_mtu(const struct net_device *dev)
{
	return clamp_t(u32, psched_mtu(dev), ARB_MTU_MIN, ARB_MTU_MAX);
}

/* The mtu followed while 'mtu' is not given: frames, or whole GSO skbs */
static u32 arbtable_follow_size(const struct net_device *dev, u64 capacity)
{
	return arb_follow_mtu(arbtable_dev_mtu(dev), arbtable_gso_max_size(dev),
			      dev->hard_header_len, capacity);
}

/* ---- token buckets (qdisc rate, class ceil) ---- */

/* Bucket depth in ns: @burst bytes when given, else the default depth
 * max(2 * mtu, ARB_MIN_BURST_NS of the rate).
 */
static s64 arbtable_bucket_depth(const struct arbtable_bucket *b, u32 mtu,
				 u32 burst)
{
	if (burst)
		return psched_l2t_ns(&b->rate, burst);
	return max_t(s64, psched_l2t_ns(&b->rate, 2 * mtu),
		     (s64)ARB_MIN_BURST_NS);
}

static void arbtable_bucket_set(struct arbtable_bucket *b, u64 bps, u32 mtu,
				u32 burst)
{
	struct tc_ratespec spec = { .linklayer = TC_LINKLAYER_ETHERNET };

	b->bps = bps;
	if (!bps)
		return;
	psched_ratecfg_precompute(&b->rate, &spec, bps);
	b->buffer = arbtable_bucket_depth(b, mtu, burst);
	b->tokens = b->buffer;
	b->t_c = ktime_get_ns();
}

/* A new depth at the same rate: keep the bucket's state, clip its tokens */
static void arbtable_bucket_resize(struct arbtable_bucket *b, u32 mtu,
				   u32 burst)
{
	if (!b->bps)
		return;
	b->buffer = arbtable_bucket_depth(b, mtu, burst);
	if (b->tokens > b->buffer)
		b->tokens = b->buffer;
}

/* Ceils of the default depth are sized from the mtu */
static void arbtable_resize_ceils(struct arbtable_sched *q, u32 mtu)
{
	struct arbtable_class *cl;

	arbtable_for_each_class(q, cl, q->cls_used)
		arbtable_bucket_resize(&cl->ceil, mtu, cl->cburst);
}

/* Refill and report how long until the bucket may send (0 = now). */
static u64 arbtable_bucket_wait(struct arbtable_bucket *b, u64 now)
{
	s64 toks = b->tokens + (s64)(now - b->t_c);

	if (toks > b->buffer)
		toks = b->buffer;
	b->tokens = toks;
	b->t_c = now;
	return toks < 0 ? (u64)-toks : 0;
}

static void arbtable_bucket_charge(struct arbtable_bucket *b, u32 len)
{
	b->tokens -= (s64)psched_l2t_ns(&b->rate, len);
}

/* ---- eligibility ---- */

static __always_inline bool
arbtable_class_can_run(const struct arbtable_sched *q,
		       const struct arbtable_class *cl)
{
	u64 bit = BIT_ULL(cl->index);

	return (q->lockless ? q->ll_busy & bit : cl->qdisc->q.qlen) &&
	       !(q->throttled & bit) && !(q->stalled & bit);
}

/* per packet: inlined in enqueue and dequeue */
static __always_inline void arbtable_update_eligible(struct arbtable_sched *q,
						     struct arbtable_class *cl)
{
	arb_set_eligible(&q->arb, cl->index, arbtable_class_can_run(q, cl));
}

static __always_inline void arbtable_throttle(struct arbtable_sched *q,
					      struct arbtable_class *cl,
					      u64 now, u64 wait)
{
	cl->unthrottle_at = now + wait;
	/* counters the dumps read without the root lock */
	WRITE_ONCE(cl->throttled, cl->throttled + 1);
	WRITE_ONCE(cl->qstats.overlimits, cl->qstats.overlimits + 1);
	WRITE_ONCE(q->nthrottled, q->nthrottled + 1);
	q->throttled |= BIT_ULL(cl->index);
	if (q->throttled == BIT_ULL(cl->index) ||
	    cl->unthrottle_at < q->next_unthrottle)
		q->next_unthrottle = cl->unthrottle_at;
	arb_set_eligible(&q->arb, cl->index, false);
}

/* Release the classes whose ceil allows them to send again. Runs only when
 * the earliest deadline has passed, and visits throttled classes only.
 */
static __always_inline void arbtable_unthrottle(struct arbtable_sched *q,
						u64 now)
{
	u64 m = q->throttled, next = U64_MAX;

	while (m) {
		unsigned int i = __ffs64(m);
		struct arbtable_class *cl = q->classes[i];

		m &= m - 1;
		if (cl->unthrottle_at <= now) {
			q->throttled &= ~BIT_ULL(i);
			arbtable_update_eligible(q, cl);
		} else if (cl->unthrottle_at < next) {
			next = cl->unthrottle_at;
		}
	}
	q->next_unthrottle = next;
}

/* A child that holds packets gave none (a shaped child: tbf, netem) */
static void arbtable_stall(struct arbtable_sched *q, struct arbtable_class *cl)
{
	q->stalled |= BIT_ULL(cl->index);
	WRITE_ONCE(cl->stalls, cl->stalls + 1);
	WRITE_ONCE(q->stalls, q->stalls + 1);
}

/*
 * Ask stalled children whether they have a packet now, through their peek
 * (which keeps it for the dequeue that follows): @all of them when nothing
 * else can be sent, else the next one in turn, so that a dequeue costs one
 * peek however many children wait. Their own watchdogs wake the qdisc.
 * Returns whether a class became eligible.
 */
static bool arbtable_retry_stalled(struct arbtable_sched *q, bool all)
{
	u64 mask = q->stalled;
	struct arbtable_class *cl;
	bool any = false;

	if (!all) {
		unsigned int i = arb_next_slot(mask, q->stall_next);

		q->stall_next = (i + 1) & (ARB_MAX_CLASSES - 1);
		mask = BIT_ULL(i);
	}
	arbtable_for_each_class(q, cl, mask) {
		/* a peek may empty the child (its dequeue drops) */
		if (!cl->qdisc->q.qlen || cl->qdisc->ops->peek(cl->qdisc) ||
		    !cl->qdisc->q.qlen) {
			q->stalled &= ~BIT_ULL(cl->index);
			arbtable_update_eligible(q, cl);
			any |= arb_class_eligible(&q->arb, cl->index);
		}
	}
	return any;
}

/* ---- classification ---- */

#define ARBTABLE_UNCLASSIFIED	((struct arbtable_class *)1UL)
#define ARBTABLE_STOLEN		((struct arbtable_class *)2UL)

/* skb->priority naming one of our classes, or NULL */
static __always_inline struct arbtable_class *
arbtable_classify_prio(struct sk_buff *skb, struct Qdisc *sch)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct arbtable_class *cl;

	if (TC_H_MAJ(skb->priority ^ sch->handle))
		return NULL;
	cl = READ_ONCE(q->by_minor[skb->priority & (ARB_MAX_CLASSES - 1)]);
	if (likely(cl && cl->common.classid == skb->priority))
		return cl;
	return arbtable_find_class(sch, skb->priority);
}

/* Not routed in the device's netns: another netns's socket reached it
 * through a macvlan or ipvlan L2 (no scrub), or it was bridged or sent
 * by a packet socket. Its mark and priority are whatever that sender
 * set, and skb_iif is no proof of forwarding: mirred and a bridge set it
 * to a device the sender made, with the ifindex it chose. The dst is
 * made by routing in one netns, which a pod cannot do in ours.
 */
static bool arbtable_foreign(struct sk_buff *skb, struct Qdisc *sch)
{
	struct dst_entry *dst = skb_dst(skb);
	struct net_device *dev = dst ? READ_ONCE(dst->dev) : NULL;

	return !dev || !net_eq(dev_net(dev), dev_net(qdisc_dev(sch)));
}

/* Filters, priomap, default class: the classification paths after the
 * skb->priority fast path, out of line so that path sets up no tcf_result
 * (and no stack protector) per packet; and the whole of it when a
 * classification path is closed (cls_limits).
 */
static noinline struct arbtable_class *
arbtable_classify_slow(struct sk_buff *skb, struct Qdisc *sch)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct arbtable_class *cl;
	struct tcf_result res;
	struct tcf_proto *fl;
	int result;

	if (q->cls_limits) {
		if ((q->cls_limits & ARBTABLE_NO_FOREIGN) &&
		    arbtable_foreign(skb, sch))
			return READ_ONCE(q->default_cl) ?: ARBTABLE_UNCLASSIFIED;
		if (!(q->cls_limits & ARBTABLE_NO_PRIO_CLASSID)) {
			cl = arbtable_classify_prio(skb, sch);
			if (cl)
				return cl;
		}
	}

	fl = rcu_dereference_bh(q->filter_list);
	if (fl) {
		result = tcf_classify(skb, NULL, fl, &res, false);
		if (result >= 0) {
#ifdef CONFIG_NET_CLS_ACT
			switch (result) {
			case TC_ACT_QUEUED:
			case TC_ACT_STOLEN:
			case TC_ACT_TRAP:
				return ARBTABLE_STOLEN;
			case TC_ACT_SHOT:
				return NULL;
			}
#endif
			cl = (struct arbtable_class *)res.class;
			if (!cl)
				cl = arbtable_find_class(sch, res.classid);
			if (cl)
				return cl;
		}
	}

	cl = READ_ONCE(q->prio_cl[skb->priority & TC_PRIO_MAX]) ?:
	     READ_ONCE(q->default_cl);
	return cl ?: ARBTABLE_UNCLASSIFIED;
}

/* Order: skb->priority naming a class, tc filters, priomap, default class;
 * NULL means drop, ARBTABLE_STOLEN that an action took the packet,
 * ARBTABLE_UNCLASSIFIED the internal best-effort queue. cls_limits may
 * close the first path or all of them: one byte tested when it is 0.
 */
static struct arbtable_class *arbtable_classify(struct sk_buff *skb,
						struct Qdisc *sch)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct arbtable_class *cl;

	if (likely(!q->cls_limits)) {
		cl = arbtable_classify_prio(skb, sch);
		if (cl)
			return cl;
	}
	return arbtable_classify_slow(skb, sch);
}

/* ---- datapath ---- */

/*
 * The unclassified queue, as __qdisc_enqueue_tail() and
 * __qdisc_dequeue_head() keep it, its qlen written once: the stats dump
 * reads it without the qdisc lock.
 */
static void arbtable_unclassified_add(struct qdisc_skb_head *qh,
				      struct sk_buff *skb)
{
	skb->next = NULL;
	if (qh->tail)
		qh->tail->next = skb;
	else
		qh->head = skb;
	qh->tail = skb;
	WRITE_ONCE(qh->qlen, qh->qlen + 1);
}

static struct sk_buff *arbtable_unclassified_take(struct qdisc_skb_head *qh)
{
	struct sk_buff *skb = qh->head;

	if (!skb)
		return NULL;
	qh->head = skb->next;
	if (!qh->head)
		qh->tail = NULL;
	skb->next = NULL;
	WRITE_ONCE(qh->qlen, qh->qlen - 1);
	return skb;
}

static void arbtable_unclassified_purge(struct qdisc_skb_head *qh)
{
	rtnl_kfree_skbs(qh->head, qh->tail);
	qh->head = NULL;
	qh->tail = NULL;
	WRITE_ONCE(qh->qlen, 0);
}

/*
 * A lockless qdisc's enqueue, on any CPU at once: the packet into its
 * class's ring (whose producer lock only senders of that class share),
 * then the class's pending bit. The full barrier orders the produce before
 * the bit's test, against the dequeuer's xchg of the mask before it looks
 * at the ring: either the dequeuer's fold sees this packet, or this test
 * sees the bit cleared and sets it again for the next fold; and the
 * sender's qdisc_run() (or its MISSED bit) makes that fold happen.
 */
static noinline int arbtable_enqueue_ll(struct sk_buff *skb,
					struct Qdisc *sch,
					struct arbtable_class *cl,
					struct sk_buff **to_free)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	bool uncl = cl == ARBTABLE_UNCLASSIFIED;
	struct ptr_ring *r = uncl ? &q->uncl_ring : &cl->ring;
	unsigned int len = qdisc_pkt_len(skb);
	int err;

	spin_lock(&r->producer_lock);
	err = __ptr_ring_produce(r, skb);
	if (uncl) {
		if (err)
			WRITE_ONCE(q->unclassified_drops,
				   q->unclassified_drops + 1);
		else
			WRITE_ONCE(q->uncl_enq, q->uncl_enq + 1);
	} else if (err) {
		WRITE_ONCE(cl->ll_drops, cl->ll_drops + 1);
	} else {
		WRITE_ONCE(cl->ll_enq_pkts, cl->ll_enq_pkts + 1);
		WRITE_ONCE(cl->ll_enq_bytes, cl->ll_enq_bytes + len);
	}
	spin_unlock(&r->producer_lock);
	if (unlikely(err))
		return qdisc_drop_cpu(skb, sch, to_free);
	qdisc_update_stats_at_enqueue(sch, len);

	/* the produce before the pending test: pairs with the fold's xchg */
	smp_mb();
	if (uncl) {
		if (!test_bit(0, &q->uncl_pending))
			set_bit(0, &q->uncl_pending);
		trace_arbtable_enqueue(sch, 0, len, 0);
	} else {
		u64 bit = BIT_ULL(cl->index);

		if (!(atomic64_read(&q->pending) & bit))
			atomic64_or(bit, &q->pending);
		trace_arbtable_enqueue(sch, cl->common.classid, len, 0);
	}
	return NET_XMIT_SUCCESS;
}

/* Queue one packet of at most q->mtu bytes; on success it is counted in
 * sch->q.qlen/backlog with qdisc_pkt_len() bytes, as read before.
 */
static __always_inline int arbtable_enqueue_one(struct sk_buff *skb,
						struct Qdisc *sch,
						struct arbtable_class *cl,
						struct sk_buff **to_free)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	unsigned int len;
	bool was_empty, idle;
	int err;

	if (q->lockless)
		return arbtable_enqueue_ll(skb, sch, cl, to_free);
	if (cl == ARBTABLE_UNCLASSIFIED) {
		if (unlikely(q->unclassified.qlen >= READ_ONCE(sch->limit))) {
			WRITE_ONCE(q->unclassified_drops,
				   q->unclassified_drops + 1);
			return arbtable_drop_overlimit(skb, sch, to_free);
		}
		len = qdisc_pkt_len(skb);
		if (!q->unclassified.qlen) {
			q->uncl_head_since = ktime_get_ns();
			q->arb.uncl_ready = true;
		}
		arbtable_unclassified_add(&q->unclassified, skb);
		arbtable_backlog_add(sch, len);
		arbtable_qlen_inc(sch);
		trace_arbtable_enqueue(sch, 0, len,
				       q->unclassified.qlen);
		return NET_XMIT_SUCCESS;
	}

	/* read before: a child may free @skb inside its enqueue (tbf
	 * segmenting it) and fix our backlog with qdisc_tree_reduce_backlog
	 */
	len = qdisc_pkt_len(skb);
	was_empty = !cl->qdisc->q.qlen;
	idle = !sch->q.qlen;
	err = qdisc_enqueue(skb, cl->qdisc, to_free);
	if (unlikely(err != NET_XMIT_SUCCESS)) {
		if (net_xmit_drop_count(err))
			qdisc_qstats_drop(sch);
		return err;
	}

	/* the HOL wait at an idle qdisc starts at the first dequeue */
	if (idle)
		q->busy_since = 0;
	/* Only a class that becomes backlogged can become eligible (decided
	 * from the child's qlen: netem may queue more than one packet); a
	 * stall was about packets now gone.
	 */
	if (was_empty && cl->qdisc->q.qlen) {
		cl->head_since = idle ? 0 : ktime_get_ns();
		q->stalled &= ~BIT_ULL(cl->index);
		if (!(q->throttled & BIT_ULL(cl->index)))
			arb_set_eligible(&q->arb, cl->index, true);
	}

	arbtable_backlog_add(sch, len);
	arbtable_qlen_inc(sch);
	/* the arguments' loads only when tracing */
	if (trace_arbtable_enqueue_enabled())
		trace_arbtable_enqueue(sch, cl->common.classid, len,
				       cl->qdisc->q.qlen);
	return NET_XMIT_SUCCESS;
}

/* A frame that cannot be made to fit: counted, and said in the log */
static int arbtable_drop_oversize(struct sk_buff *skb, struct Qdisc *sch,
				  struct sk_buff **to_free)
{
	struct arbtable_sched *q = qdisc_priv(sch);

	atomic64_inc(&q->oversize_drops);
	net_warn_ratelimited("%s: arbtable %x: dropped a %u-byte frame above the qdisc's mtu %u%s\n",
			     qdisc_dev(sch)->name, TC_H_MAJ(sch->handle) >> 16,
			     skb->len, q->mtu,
			     q->mtu_pinned ? " (pinned by its 'mtu' option)" : "");
	if (q->lockless)
		return qdisc_drop_cpu(skb, sch, to_free);
	return qdisc_drop(skb, sch, to_free);
}

/*
 * A frame the device takes while the mtu follows it: one the mtu has not
 * caught up with (the device's new mtu is set before its change notifier
 * runs), and a full-size frame carrying a VLAN tag, which the stack
 * forwards up to mtu + link header + VLAN_HLEN (a VLAN-unaware bridge,
 * AF_PACKET). A frame the device takes is never dropped here.
 */
static bool arbtable_dev_takes(struct Qdisc *sch, const struct sk_buff *skb)
{
	struct arbtable_sched *q = qdisc_priv(sch);

	return !q->mtu_pinned &&
	       skb->len <= arbtable_dev_mtu(qdisc_dev(sch)) + VLAN_HLEN;
}

/*
 * A packet longer than the mtu, which every bound assumes no packet is: a
 * GSO skb is split into its segments, as tbf and cake do, and the parents
 * told what was queued; a frame that cannot be made to fit is dropped and
 * counted, never queued whole.
 */
static noinline int arbtable_enqueue_oversize(struct sk_buff *skb,
					      struct Qdisc *sch,
					      struct arbtable_class *cl,
					      struct sk_buff **to_free)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	unsigned int len = qdisc_pkt_len(skb), seglen, bytes = 0;
	struct sk_buff *segs, *seg, *next;
	netdev_features_t features;
	int n = 0;

	if (!skb_is_gso(skb)) {
		/* longer only by a size table's overhead: a frame that fits */
		if (skb->len <= q->mtu || arbtable_dev_takes(sch, skb))
			return arbtable_enqueue_one(skb, sch, cl, to_free);
		return arbtable_drop_oversize(skb, sch, to_free);
	}
	features = netif_skb_features(skb);
	segs = skb_gso_segment(skb, features & ~NETIF_F_GSO_MASK);
	if (IS_ERR_OR_NULL(segs))
		return arbtable_drop_oversize(skb, sch, to_free);
	atomic64_inc(&q->gso_split);
	skb_list_walk_safe(segs, seg, next) {
		skb_mark_not_on_list(seg);
		/* as in tbf and cake: the root's size table is not reapplied */
		arbtable_seg_cb_init(seg);
		if (unlikely(seg->len > q->mtu &&	/* mtu below gso_size */
			     !arbtable_dev_takes(sch, seg))) {
			arbtable_drop_oversize(seg, sch, to_free);
			continue;
		}
		/* read before: the child may free @seg in its enqueue */
		seglen = qdisc_pkt_len(seg);
		if (arbtable_enqueue_one(seg, sch, cl, to_free) ==
		    NET_XMIT_SUCCESS) {
			bytes += seglen;
			n++;
		}
	}
	if (!n) {
		kfree_skb(skb);
		return NET_XMIT_DROP;
	}
	atomic64_add(n, &q->gso_segs);
	qdisc_tree_reduce_backlog(sch, 1 - n, (int)len - (int)bytes);
	consume_skb(skb);
	return NET_XMIT_SUCCESS;
}

static int arbtable_enqueue(struct sk_buff *skb, struct Qdisc *sch,
			    struct sk_buff **to_free)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct arbtable_class *cl;

	cl = arbtable_classify(skb, sch);
	if (unlikely(!cl || cl == ARBTABLE_STOLEN)) {
		if (cl == ARBTABLE_STOLEN) {
			__qdisc_drop(skb, to_free);
			return NET_XMIT_SUCCESS | __NET_XMIT_STOLEN;
		}
		if (q->lockless)
			qdisc_qstats_cpu_drop(sch);
		else
			qdisc_qstats_drop(sch);
		__qdisc_drop(skb, to_free);
		return NET_XMIT_SUCCESS | __NET_XMIT_BYPASS;
	}
	/* a GSO skb counts its segments' headers (qdisc_pkt_len_init) */
	if (unlikely(qdisc_pkt_len(skb) > q->mtu))
		return arbtable_enqueue_oversize(skb, sch, cl, to_free);
	return arbtable_enqueue_one(skb, sch, cl, to_free);
}

/* The arbiter's pick of the unclassified queue (arb_low_side_pick()) */
static __always_inline struct sk_buff *
arbtable_dequeue_unclassified(struct Qdisc *sch, u64 *now)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct sk_buff *skb;
	u64 wait;

	if (q->lockless) {
		skb = __ptr_ring_consume(&q->uncl_ring);
		if (skb)
			WRITE_ONCE(q->uncl_deq, q->uncl_deq + 1);
	} else {
		skb = arbtable_unclassified_take(&q->unclassified);
	}
	if (WARN_ON_ONCE(!skb)) {
		q->arb.uncl_ready = false;
		return NULL;
	}
	if (!*now)
		*now = ktime_get_ns();
	wait = *now - q->uncl_head_since;
	if (wait > q->uncl_max_wait)
		WRITE_ONCE(q->uncl_max_wait, wait);
	q->uncl_head_since = *now;
	if (q->lockless ? __ptr_ring_empty(&q->uncl_ring) :
			  !q->unclassified.qlen)
		q->arb.uncl_ready = false;
	WRITE_ONCE(q->unclassified_pkts, q->unclassified_pkts + 1);
	trace_arbtable_dequeue(sch, 0, ARB_UNCLASSIFIED, 0, 0,
			       q->arb.hp_counter, qdisc_pkt_len(skb), wait);
	return skb;
}

/*
 * The head-of-line wait, for max_hol_ns, without a clock read per packet:
 * a head waits from when it became head (cl->head_since) or, if that was
 * at an idle qdisc, from the busy period's first dequeue (q->busy_since).
 * A packet alone at an idle qdisc waited for nothing: no clock read.
 * @now is 0 until read; @cl's packet is still counted in sch->q.qlen.
 * Returns the wait (0: none) for the dequeue tracepoint.
 */
static __always_inline u64 arbtable_hol_account(struct Qdisc *sch,
						struct arbtable_class *cl,
						u64 *now, const bool ll)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	u64 start, wait = 0;

	/* the unloaded link: alone, and nothing read the clock */
	if (!ll && sch->q.qlen == 1 &&
	    !(cl->head_since | q->busy_since))
		return 0;
	start = cl->head_since ?: q->busy_since;
	if (!*now)
		*now = ktime_get_ns();
	if (start) {
		wait = *now - start;
		if (wait > cl->max_hol_ns)
			WRITE_ONCE(cl->max_hol_ns, wait);
	}
	cl->head_since = *now;	/* for the class's next head, if any */
	if (!q->busy_since)
		q->busy_since = *now;
	return wait;
}

/* arbtable_dequeue() with packets queued; @ll: the lockless mode, a
 * constant in each of the two copies below
 */
static __always_inline struct sk_buff *
__arbtable_dequeue_busy(struct Qdisc *sch, const bool ll)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct arbtable_class *cl;
	struct sk_buff *skb;
	struct arb_pick pick;
	u64 now = 0, wait, hol;
	bool retried = false;
	unsigned int len;
	u32 segs;
	s32 credit;

	/* one test for the unshaped, unthrottled, unstalled common case */
	if (unlikely(q->shaper.bps | q->throttled | q->stalled)) {
		/* the clock only when shaping or a HOL wait needs it */
		if (q->shaper.bps || q->throttled) {
			now = ktime_get_ns();
			if (!q->busy_since)
				q->busy_since = now;
		}
		if (q->shaper.bps) {
			wait = arbtable_bucket_wait(&q->shaper, now);
			if (wait) {
				if (ll)
					this_cpu_inc(sch->cpu_qstats->overlimits);
				else
					qdisc_qstats_overlimit(sch);
				qdisc_watchdog_schedule_ns(&q->watchdog,
							   now + wait);
				return NULL;
			}
		}
		if (q->throttled && now >= q->next_unthrottle)
			arbtable_unthrottle(q, now);
		if (q->stalled)
			arbtable_retry_stalled(q, false);
	}
again:
	while (arb_select(&q->arb, &pick)) {
		if (unlikely(pick.table == ARB_UNCLASSIFIED)) {
			skb = arbtable_dequeue_unclassified(sch, &now);
			if (!skb)
				continue;
			arb_charge(&q->arb, &pick, 0);
			len = qdisc_pkt_len(skb);
			segs = skb_is_gso(skb) ? skb_shinfo(skb)->gso_segs : 1;
			goto out;
		}
		cl = q->classes[pick.cls];
		if (ll) {
			/* empty: as an emptied child (noop_qdisc's qlen 0) */
			skb = __ptr_ring_consume(&cl->ring);
			if (unlikely(!skb))
				q->ll_busy &= ~BIT_ULL(cl->index);
		} else {
			q->dequeuing = true;
			skb = qdisc_dequeue_peeked(cl->qdisc);
			q->dequeuing = false;
		}
		if (unlikely(!skb)) {
			/* shaped: skipped until its peek has a packet; or
			 * emptied by its own drops. The pick is given back.
			 */
			if (cl->qdisc->q.qlen)
				arbtable_stall(q, cl);
			arb_set_stalled(&q->arb, &pick);
			continue;
		}
		len = qdisc_pkt_len(skb);
		credit = arb_charge(&q->arb, &pick, len);
		hol = arbtable_hol_account(sch, cl, &now, ll);
		trace_arbtable_dequeue(sch, cl->common.classid, pick.table,
				       pick.slot, credit, q->arb.hp_counter,
				       len, hol);

		if (cl->ceil.bps) {
			if (!now)
				now = ktime_get_ns();
			arbtable_bucket_wait(&cl->ceil, now);
			arbtable_bucket_charge(&cl->ceil, len);
			if (cl->ceil.tokens < 0)
				arbtable_throttle(q, cl, now,
						  (u64)-cl->ceil.tokens);
		}
		if (ll) {
			WRITE_ONCE(cl->ll_deq_pkts, cl->ll_deq_pkts + 1);
			WRITE_ONCE(cl->ll_deq_bytes, cl->ll_deq_bytes + len);
			/* a packet produced after this test set pending */
			if (__ptr_ring_empty(&cl->ring)) {
				q->ll_busy &= ~BIT_ULL(cl->index);
				arb_set_drained(&q->arb, cl->index);
			}
		} else if (!cl->qdisc->q.qlen) {
			arb_set_drained(&q->arb, cl->index);
		}

		segs = skb_is_gso(skb) ? skb_shinfo(skb)->gso_segs : 1;
		_bstats_update(&cl->bstats, len, segs);
		goto out;
	}

	/* nothing else to send: once per dequeue, ask every stalled child */
	if (q->stalled && !retried) {
		retried = true;
		if (arbtable_retry_stalled(q, true))
			goto again;
	}
	if (q->throttled)
		qdisc_watchdog_schedule_ns(&q->watchdog,
					   q->next_unthrottle);
	return NULL;
out:
	if (q->shaper.bps)
		arbtable_bucket_charge(&q->shaper, len);
	if (ll) {
		qdisc_update_stats_at_dequeue(sch, skb);
		return skb;
	}
	_bstats_update(&sch->bstats, len, segs);
	arbtable_backlog_sub(sch, len);
	arbtable_qlen_dec(sch);
	return skb;
}

static noinline struct sk_buff *arbtable_dequeue_busy(struct Qdisc *sch)
{
	return __arbtable_dequeue_busy(sch, false);
}

static noinline struct sk_buff *arbtable_dequeue_busy_ll(struct Qdisc *sch)
{
	return __arbtable_dequeue_busy(sch, true);
}

/*
 * The dequeuer (the seqlock's holder) takes the classes marked pending
 * since its last look: each with packets in its ring becomes backlogged,
 * and eligible unless its ceil holds it, as enqueue makes a class of a
 * locked qdisc. The xchg is the full barrier the enqueue side pairs with.
 */
static void arbtable_ll_fold(struct Qdisc *sch)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	bool idle = !(q->ll_busy | q->arb.uncl_ready);
	struct arbtable_class *cl;
	u64 m = 0, now = 0;

	if (atomic64_read(&q->pending))
		m = atomic64_xchg(&q->pending, 0);
	if (test_bit(0, &q->uncl_pending) &&
	    test_and_clear_bit(0, &q->uncl_pending) &&
	    !q->arb.uncl_ready && !__ptr_ring_empty(&q->uncl_ring)) {
		now = ktime_get_ns();
		q->uncl_head_since = now;
		q->arb.uncl_ready = true;
	}
	arbtable_for_each_class(q, cl, m & ~q->ll_busy) {
		/* a bit left by a class deleted since: none, or empty */
		if (!cl || __ptr_ring_empty(&cl->ring))
			continue;
		if (!now && !idle)
			now = ktime_get_ns();
		/* the HOL wait at an idle qdisc starts at the first dequeue */
		cl->head_since = idle ? 0 : now;
		q->ll_busy |= BIT_ULL(cl->index);
		if (!(q->throttled & BIT_ULL(cl->index)))
			arb_set_eligible(&q->arb, cl->index, true);
	}
	if (idle && (q->ll_busy | q->arb.uncl_ready))
		q->busy_since = 0;
}

static noinline struct sk_buff *arbtable_dequeue_ll(struct Qdisc *sch)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	bool retry = true;
	struct sk_buff *skb;

again:
	arbtable_ll_fold(sch);
	if (q->ll_busy | q->arb.uncl_ready) {
		skb = arbtable_dequeue_busy_ll(sch);
		if (skb)
			return skb;
	}
	/* as pfifo_fast: a sender that set MISSED after our fold is served
	 * now, and the flag cleared does not make qdisc_run_end() reschedule
	 * an empty or shaped qdisc forever
	 */
	if (retry && test_bit(__QDISC_STATE_MISSED, &sch->state)) {
		clear_bit(__QDISC_STATE_MISSED, &sch->state);
		clear_bit(__QDISC_STATE_DRAINING, &sch->state);
		/* the fold after the clear, as pfifo_fast's retry */
		smp_mb__after_atomic();
		retry = false;
		goto again;
	}
	return NULL;
}

static struct sk_buff *arbtable_dequeue(struct Qdisc *sch)
{
	struct arbtable_sched *q = qdisc_priv(sch);

	/* qdisc_restart() asks again after every packet: the empty answer
	 * is the common one on an unloaded link, so it pays no prologue
	 */
	if (!sch->q.qlen)
		return unlikely(q->lockless) ? arbtable_dequeue_ll(sch) : NULL;
	return arbtable_dequeue_busy(sch);
}

/* ---- configuration ---- */

/* One slot nest: a class and a weight, or neither (a null slot). The
 * nest was validated with the options (arbtable_slot_policy).
 */
static int arbtable_parse_slot(struct Qdisc *sch, struct arbtable_cfg *cfg,
			       unsigned int t, unsigned int slot,
			       struct nlattr *nest,
			       struct netlink_ext_ack *extack)
{
	struct nlattr *c = nla_find_nested(nest, TCA_ARBTABLE_SLOT_CLASS);
	struct nlattr *w = nla_find_nested(nest, TCA_ARBTABLE_SLOT_WEIGHT);
	const char *name = arbtable_table_name[t];
	struct arbtable_class *cl;
	u32 minor, weight;

	if (!c != !w) {
		arbtable_refuse(extack, c ?: w,
				"a table slot needs both a class and a weight",
				": %.4s slot %hhu", name, slot);
		return -EINVAL;
	}
	weight = w ? nla_get_u32(w) : 0;
	if (!weight)
		return 0;
	minor = nla_get_u32(c);
	cl = arbtable_find_minor(sch, minor);
	if (!cl) {
		arbtable_refuse(extack, c,
				"a table slot names a class that does not exist",
				": %.4s slot %hhu, class %hx:%hx", name, slot,
				TC_H_MAJ(sch->handle) >> 16, minor);
		return -ENOENT;
	}
	if (cl->strict) {
		arbtable_refuse(extack, c,
				"the strict class takes no table slot",
				": %.4s slot %hhu, class %hx:%hx", name, slot,
				TC_H_MAJ(sch->handle) >> 16, minor);
		return -EINVAL;
	}
	cfg->cls[t][slot] = cl->index;
	cfg->weight[t][slot] = weight;
	return 0;
}

/* Slot nests in slot order: the nth is slot n, those not sent are null */
static int arbtable_parse_table(struct Qdisc *sch, struct arbtable_cfg *cfg,
				unsigned int t, struct nlattr *nest,
				struct netlink_ext_ack *extack)
{
	unsigned int slot = 0;
	struct nlattr *a;
	int rem, err;

	memset(cfg->cls[t], ARB_NO_CLASS, ARB_SLOTS);
	memset(cfg->weight[t], 0, ARB_SLOTS);
	cfg->set_tbl[t] = true;

	nla_for_each_nested(a, nest, rem) {
		if (slot >= ARB_SLOTS) {
			arbtable_refuse(extack, a,
					"a slot table has more than 64 slots",
					": %.4s", arbtable_table_name[t]);
			return -EINVAL;
		}
		err = arbtable_parse_slot(sch, cfg, t, slot++, a, extack);
		if (err)
			return err;
	}
	return 0;
}

static int arbtable_parse_priomap(struct arbtable_cfg *cfg, struct nlattr *nest,
				  struct netlink_ext_ack *extack)
{
	unsigned int n = 0;
	struct nlattr *a;
	int rem;

	nla_for_each_nested(a, nest, rem) {
		if (n >= TC_ARBTABLE_PRIO_BANDS) {
			NL_SET_ERR_MSG(extack,
				       "priomap: more than 16 entries");
			return -EINVAL;
		}
		cfg->priomap[n++] = nla_get_u32(a);
	}
	if (n != TC_ARBTABLE_PRIO_BANDS) {
		arbtable_refuse(extack, NULL,
				"priomap: exactly 16 entries required",
				", %u given", n);
		return -EINVAL;
	}
	return 0;
}

/* TCA_ARBTABLE_PRIO_CLASSID, _CLASSIFY_FOREIGN: 1 (the default) keeps a
 * classification path, 0 closes it (@bit of cls_limits)
 */
static void arbtable_parse_limit(struct arbtable_cfg *cfg,
				 const struct nlattr *a, u8 bit)
{
	if (a && nla_get_u32(a))
		cfg->cls_limits &= ~bit;
	else if (a)
		cfg->cls_limits |= bit;
}

static void arbtable_cfg_from_sched(struct Qdisc *sch, struct arbtable_cfg *cfg)
{
	struct arbtable_sched *q = qdisc_priv(sch);

	memset(cfg, 0, sizeof(*cfg));
	cfg->rate = q->shaper.bps;
	memcpy(cfg->priomap, q->priomap, sizeof(cfg->priomap));
	cfg->default_minor = q->default_minor;
	cfg->mtu = q->mtu;
	cfg->mtu_pinned = q->mtu_pinned;
	cfg->burst = q->burst;
	cfg->lockless = q->lockless;
	cfg->mode = q->mode;
	cfg->highlimit = q->arb.highlimit;
	cfg->accounting = q->arb.accounting;
	cfg->maxweight = q->maxweight;
	cfg->cls_limits = q->cls_limits;
}

static bool arbtable_cfg_has_slots(struct Qdisc *sch,
				   const struct arbtable_cfg *cfg, unsigned int t)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	unsigned int i;

	if (!cfg->set_tbl[t])
		return q->arb.tbl[t].used;
	for (i = 0; i < ARB_SLOTS; i++)
		if (cfg->weight[t][i])
			return true;
	return false;
}

/* A strict class is served before both tables: their shares hold only
 * if it has a ceil.
 */
static int arbtable_check_strict_ceil(struct Qdisc *sch,
				      const struct arbtable_cfg *cfg,
				      struct netlink_ext_ack *extack)
{
	struct arbtable_class *s = arbtable_strict_class(qdisc_priv(sch));

	if (!s || s->ceil.bps ||
	    (!arbtable_cfg_has_slots(sch, cfg, ARB_HIGH) &&
	     !arbtable_cfg_has_slots(sch, cfg, ARB_LOW)))
		return 0;
	arbtable_refuse(extack, NULL,
			"the strict class has no ceil and would starve the table slots",
			": %hx:%hx", TC_H_MAJ(s->common.classid) >> 16,
			TC_H_MIN(s->common.classid));
	return -EINVAL;
}

static int arbtable_parse_mode(struct arbtable_cfg *cfg, struct nlattr **tb,
			       bool create, struct netlink_ext_ack *extack)
{
	u8 mode;

	if (!tb[TCA_ARBTABLE_MODE]) {
		if (create && (tb[TCA_ARBTABLE_HIGH] || tb[TCA_ARBTABLE_LOW]))
			cfg->mode = TC_ARBTABLE_MODE_MANUAL;
		return 0;
	}
	mode = nla_get_u32(tb[TCA_ARBTABLE_MODE]);
	if (!create && mode != cfg->mode) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_ARBTABLE_MODE],
				    "the mode (manual/auto) is fixed at creation; delete and re-add the qdisc to change it");
		return -EINVAL;
	}
	cfg->mode = mode;
	return 0;
}

/* mtu and burst, checked on their final values: both, and the rate, may
 * change in the same message
 */
static int arbtable_parse_sizes(struct Qdisc *sch, struct arbtable_cfg *cfg,
				struct nlattr **tb,
				struct netlink_ext_ack *extack)
{
	u32 mtu;

	if (tb[TCA_ARBTABLE_MTU]) {
		mtu = nla_get_u32(tb[TCA_ARBTABLE_MTU]);
		if (mtu && (mtu < ARB_MTU_MIN || mtu > ARB_MTU_MAX)) {
			NL_SET_ERR_MSG_ATTR(extack, tb[TCA_ARBTABLE_MTU],
					    "mtu out of range 64..1048576 bytes (0 = follow the device)");
			return -EINVAL;
		}
		cfg->mtu_pinned = mtu;
		cfg->mtu = mtu ? : arbtable_dev_mtu(qdisc_dev(sch));
	}
	/* a dump sent back: the mtu it reports follows the device */
	if (tb[TCA_ARBTABLE_MTU_FOLLOW]) {
		cfg->mtu_pinned = false;
		cfg->mtu = arbtable_dev_mtu(qdisc_dev(sch));
	}
	if (tb[TCA_ARBTABLE_BURST])
		cfg->burst = nla_get_u32(tb[TCA_ARBTABLE_BURST]);
	/* burst against the mtu: arbtable_configure(), on the final mtu */
	cfg->sizes_given = tb[TCA_ARBTABLE_BURST] || tb[TCA_ARBTABLE_MTU] ||
			   tb[TCA_ARBTABLE_MTU_FOLLOW];
	if (cfg->burst && !cfg->rate) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_ARBTABLE_BURST],
				    "burst shapes the qdisc rate: give a rate too");
		return -EINVAL;
	}
	return 0;
}

/* @cfg's table @t is the one in force, slot for slot */
static bool arbtable_cfg_tbl_in_force(struct Qdisc *sch,
				      const struct arbtable_cfg *cfg,
				      unsigned int t)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	const struct arb_table *tb = &q->arb.tbl[t];
	unsigned int i;

	for (i = 0; i < ARB_SLOTS; i++) {
		if (cfg->weight[t][i] != tb->weight[i] ||
		    (tb->weight[i] && cfg->cls[t][i] != tb->cls[i]))
			return false;
	}
	return true;
}

/* The slots a manual-mode qdisc is given; an auto-mode one takes its own.
 * Kept out of line: the slot nests' attribute arrays would otherwise sit in
 * arbtable_parse()'s frame beside its own.
 */
static noinline_for_stack int
arbtable_parse_tables(struct Qdisc *sch, struct arbtable_cfg *cfg,
		      struct nlattr **tb, struct netlink_ext_ack *extack)
{
	static const int attr[ARB_NTABLES] = {
		[ARB_HIGH] = TCA_ARBTABLE_HIGH, [ARB_LOW] = TCA_ARBTABLE_LOW,
	};
	unsigned int t;
	int err;

	if (!tb[TCA_ARBTABLE_HIGH] && !tb[TCA_ARBTABLE_LOW])
		return 0;
	for (t = 0; t < ARB_NTABLES; t++) {
		if (!tb[attr[t]])
			continue;
		err = arbtable_parse_table(sch, cfg, t, tb[attr[t]], extack);
		if (err)
			return err;
		if (cfg->mode != TC_ARBTABLE_MODE_AUTO)
			continue;
		/* the allocator's table, as dumped, sent back: no change */
		if (!arbtable_cfg_tbl_in_force(sch, cfg, t)) {
			NL_SET_ERR_MSG_ATTR(extack, tb[attr[t]],
					    "manual high/low slots on an auto-mode qdisc: the allocator owns the tables; admit classes with rate/latency/share instead");
			return -EINVAL;
		}
		cfg->set_tbl[t] = false;
	}
	return 0;
}

static int arbtable_parse(struct Qdisc *sch, struct nlattr *opt,
			  struct arbtable_cfg *cfg, bool create,
			  struct netlink_ext_ack *extack)
{
	struct nlattr *tb[TCA_ARBTABLE_MAX + 1];
	int err;

	if (!opt)
		return 0;
	err = nla_parse_nested(tb, TCA_ARBTABLE_MAX, opt, arbtable_policy,
			       extack);
	if (err < 0)
		return err;
	err = arbtable_parse_mode(cfg, tb, create, extack);
	if (err)
		return err;
	/* TCQ_F_NOLOCK is read by every sender without a lock */
	if (tb[TCA_ARBTABLE_LOCKLESS]) {
		bool ll = nla_get_u32(tb[TCA_ARBTABLE_LOCKLESS]);

		if (!create && ll != cfg->lockless) {
			NL_SET_ERR_MSG_ATTR(extack, tb[TCA_ARBTABLE_LOCKLESS],
					    "lockless or locked is fixed at creation; delete and re-add the qdisc to change it");
			return -EINVAL;
		}
		cfg->lockless = ll;
	}
	if (tb[TCA_ARBTABLE_RATE] || tb[TCA_ARBTABLE_RATE_LINK]) {
		u64 rate = tb[TCA_ARBTABLE_RATE] ?
			   nla_get_u64(tb[TCA_ARBTABLE_RATE]) : 0;

		if (rate && tb[TCA_ARBTABLE_RATE_LINK]) {
			NL_SET_ERR_MSG_ATTR(extack, tb[TCA_ARBTABLE_RATE_LINK],
					    "rate_link (the capacity is the link's) goes with rate 0 or none");
			return -EINVAL;
		}
		/* a dump sent back keeps the link speed in force (cfg->rate
		 * is the one in force); a rate given reads the link anew
		 */
		if (create || !tb[TCA_ARBTABLE_RATE_LINK] || cfg->rate) {
			cfg->rate = rate;
			cfg->rate_given = true;
		}
	}
	if (tb[TCA_ARBTABLE_HIGHLIMIT])
		cfg->highlimit = nla_get_u32(tb[TCA_ARBTABLE_HIGHLIMIT]);
	if (tb[TCA_ARBTABLE_ACCOUNTING])
		cfg->accounting = nla_get_u32(tb[TCA_ARBTABLE_ACCOUNTING]);
	if (tb[TCA_ARBTABLE_DEFAULT])
		cfg->default_minor = nla_get_u32(tb[TCA_ARBTABLE_DEFAULT]);
	if (tb[TCA_ARBTABLE_MAXWEIGHT])
		cfg->maxweight = nla_get_u32(tb[TCA_ARBTABLE_MAXWEIGHT]);
	arbtable_parse_limit(cfg, tb[TCA_ARBTABLE_PRIO_CLASSID],
			     ARBTABLE_NO_PRIO_CLASSID);
	arbtable_parse_limit(cfg, tb[TCA_ARBTABLE_CLASSIFY_FOREIGN],
			     ARBTABLE_NO_FOREIGN);
	err = arbtable_parse_sizes(sch, cfg, tb, extack);
	if (!err && tb[TCA_ARBTABLE_PRIOMAP])
		err = arbtable_parse_priomap(cfg, tb[TCA_ARBTABLE_PRIOMAP],
					     extack);
	if (!err)
		err = arbtable_parse_tables(sch, cfg, tb, extack);
	return err ? : arbtable_check_strict_ceil(sch, cfg, extack);
}

static LIST_HEAD(arbtable_list);	/* every instance; RTNL */

/*
 * One transmit queue's instance under mq, mqprio or offloaded htb: it
 * schedules a share of the port, not the port. Its parent is in a tree
 * under such a root or, while mq_init() makes the queues' defaults, not
 * in the device's tree yet (as bpf_qdisc_init() tells them apart). RTNL.
 */
static bool arbtable_per_queue(struct Qdisc *sch)
{
	struct net_device *dev = qdisc_dev(sch);
	struct Qdisc *root = rtnl_dereference(dev->qdisc), *p;
	u32 major = TC_H_MAJ(sch->parent);

	if (sch->parent == TC_H_ROOT || dev->real_num_tx_queues < 2)
		return false;
	if (root->flags & TCQ_F_MQROOT)
		return true;
	if (!(root->flags & TCQ_F_BUILTIN) && root->handle == major)
		return false;
	hash_for_each_possible(dev->qdisc_hash, p, hash, major)
		if (p->handle == major)
			return false;
	return true;
}

/* Link speed in bytes/s from ethtool, 0 when unknown. Called under RTNL. */
static u64 arbtable_link_capacity(struct Qdisc *sch)
{
	struct ethtool_link_ksettings ks;
	struct net_device *dev = qdisc_dev(sch);

	if (arbtable_get_link_ksettings(dev, &ks) < 0)
		return 0;
	if (ks.base.speed == SPEED_UNKNOWN || !ks.base.speed)
		return 0;
	return (u64)ks.base.speed * 1000 * 1000 / 8;
}

/* The port's speed for a new queue of a multi-queue root: a sibling's
 * reading (taken at its creation, its last change or the port's last
 * NETDEV_UP/CHANGE), so mq's N queues cost the driver one read, not N.
 */
static u64 arbtable_port_capacity(struct Qdisc *sch)
{
	struct arbtable_sched *s;

	list_for_each_entry(s, &arbtable_list, list)
		if (qdisc_dev(s->sch) == qdisc_dev(sch))
			return s->link_rate;
	return arbtable_link_capacity(sch);
}

/* A new link speed read under RTNL: remembered and counted, never applied
 * to the capacity that admissions were made against.
 */
static void arbtable_link_seen(struct arbtable_sched *q, u64 link)
{
	if (link == q->link_rate)
		return;
	if (q->link_rate)
		WRITE_ONCE(q->link_changes, q->link_changes + 1);
	WRITE_ONCE(q->link_rate, link);
}

/* A class ceil's depth must hold one packet of the mtu (checked at class
 * change); an mtu change may not undercut it.
 */
static int arbtable_check_cburst(struct Qdisc *sch, u32 mtu,
				 struct netlink_ext_ack *extack)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct arbtable_class *cl;

	arbtable_for_each_class(q, cl, q->cls_used) {
		if (cl->cburst && cl->cburst < mtu) {
			arbtable_refuse(extack, NULL,
					"the mtu is above a class's cburst",
					": %u > %u (%x:%x)", mtu, cl->cburst,
					TC_H_MAJ(cl->common.classid) >> 16,
					TC_H_MIN(cl->common.classid));
			return -EINVAL;
		}
	}
	return 0;
}

/* Apply a checked configuration; caller holds the tree lock. */
static void arbtable_apply(struct Qdisc *sch, const struct arbtable_cfg *cfg,
			   u64 capacity)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	bool fresh = !arbtable_admitted(q);
	unsigned int t, i;

	q->mode = cfg->mode;
	memcpy(q->priomap, cfg->priomap, sizeof(q->priomap));
	q->default_minor = cfg->default_minor;
	/* a root's device drops the dst before the qdisc unless told */
	if (cfg->cls_limits & ARBTABLE_NO_FOREIGN)
		netif_keep_dst(qdisc_dev(sch));
	q->cls_limits = cfg->cls_limits;
	arbtable_cache_classes(sch);
	q->maxweight = cfg->maxweight;
	if (cfg->highlimit != q->arb.highlimit)
		arb_set_highlimit(&q->arb, cfg->highlimit);
	arb_set_accounting(&q->arb, cfg->accounting);
	if (cfg->rate != q->shaper.bps)
		arbtable_bucket_set(&q->shaper, cfg->rate, cfg->mtu, cfg->burst);
	else if (cfg->burst != q->burst || cfg->mtu != q->mtu)
		arbtable_bucket_resize(&q->shaper, cfg->mtu, cfg->burst);
	arbtable_resize_ceils(q, cfg->mtu);
	q->mtu = cfg->mtu;
	q->mtu_pinned = cfg->mtu_pinned;
	q->burst = cfg->burst;
	q->capacity = capacity;
	for (t = 0; t < ARB_NTABLES; t++) {
		if (q->mode == TC_ARBTABLE_MODE_AUTO && fresh)
			arb_alloc_init(&q->alloc[t], q->maxweight);
		for (i = 0; cfg->set_tbl[t] && i < ARB_SLOTS; i++)
			arb_set_slot(&q->arb, t, i, cfg->cls[t][i],
				     cfg->weight[t][i]);
	}
}

/*
 * The admitted classes' guarantees at the current mtu: a larger frame
 * lengthens every bound and takes more of the link from the HIGH table
 * for the LOW table's turns. Recomputed when the mtu follows the device;
 * returns how many classes no longer get what they asked. Tree lock held.
 */
static u32 arbtable_auto_recheck(struct Qdisc *sch)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct arbtable_class *cl;
	struct arb_params p;
	u32 broken = 0;

	arbtable_params(q, &p);
	arbtable_for_each_class(q, cl, q->cls_used) {
		unsigned int n;
		bool was;

		if (cl->table != ARB_HIGH)
			continue;
		n = ARB_SLOTS / cl->distance;
		was = cl->broken;
		cl->bound_ns = arb_bound_ns(&p, cl->distance, cl->weight / n);
		cl->broken = arb_weight_rate(&p, cl->weight) < cl->resv.rate ||
			     (cl->resv.latency && cl->bound_ns > cl->resv.latency);
		broken += cl->broken;
		if (cl->broken != was)
			trace_arbtable_guarantee(sch, cl->common.classid,
						 q->mtu,
						 arb_weight_rate(&p, cl->weight),
						 cl->bound_ns, cl->broken);
	}
	return broken;
}

/* init and change: see struct arbtable_cfg */
static int arbtable_configure(struct Qdisc *sch, struct nlattr *opt,
			      bool create, struct netlink_ext_ack *extack)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct arbtable_cfg *cfg;
	u64 link, capacity;
	bool per_queue;
	u32 mtu;
	int err;

	cfg = kmalloc(sizeof(*cfg), GFP_KERNEL);
	if (!cfg) {
		NL_SET_ERR_MSG(extack, "cannot allocate the configuration");
		return -ENOMEM;
	}
	arbtable_cfg_from_sched(sch, cfg);
	err = arbtable_parse(sch, opt, cfg, create, extack);
	if (err)
		goto out;
	per_queue = arbtable_per_queue(sch);
	link = create && per_queue ? arbtable_port_capacity(sch) :
				     arbtable_link_capacity(sch);
	/* the link speed counts when the rate is set, not at every change:
	 * admissions keep the capacity they were made against. A queue of
	 * a multi-queue root admits against its own rate only: the port's
	 * speed in each of N queues would promise N times the wire. Its
	 * mtu still follows as the port's does.
	 */
	capacity = q->capacity;
	if (create || cfg->rate_given) {
		capacity = cfg->rate ? : link;
		if (per_queue && cfg->mode == TC_ARBTABLE_MODE_AUTO)
			capacity = cfg->rate;
	}
	if (!cfg->mtu_pinned)
		cfg->mtu = arbtable_follow_size(qdisc_dev(sch),
						capacity ? : link);
	/* on the mtu that will be in force: a following mtu is a whole GSO
	 * skb from 1gbit up. Checked when burst, mtu or rate is given; the
	 * device's own changes are the notifier's (arbtable_follow_mtu()).
	 */
	if (cfg->burst && cfg->burst < cfg->mtu &&
	    (create || cfg->sizes_given || cfg->rate_given)) {
		arbtable_refuse(extack, NULL,
				"burst is below the mtu: one whole packet must fit",
				": %u < %u", cfg->burst, cfg->mtu);
		err = -EINVAL;
		goto out;
	}
	if (cfg->mtu != q->mtu) {
		err = arbtable_check_cburst(sch, cfg->mtu, extack);
		if (err)
			goto out;
	}
	if (cfg->mode == TC_ARBTABLE_MODE_AUTO) {
		/* no rate, and none to have: made without options, or such
		 * an instance changed without a rate (its dump sent back)
		 */
		bool no_rate_ok = create ? !opt : !q->capacity && !cfg->rate;

		if (!capacity && !no_rate_ok && per_queue && link) {
			char r[16];

			arbtable_refuse(extack, NULL,
					"a queue of a multi-queue root: give 'rate', its share of the port",
					"'s %.10s", arb_fmt_rate(r, sizeof(r), link));
			err = -EINVAL;
			goto out;
		}
		err = arbtable_auto_check_qdisc(sch, capacity, cfg, no_rate_ok,
						extack);
		if (err)
			goto out;
	}
	if (create)
		q->lockless = cfg->lockless;
	arbtable_tree_lock(sch);
	mtu = q->mtu;
	arbtable_apply(sch, cfg, capacity);
	arbtable_link_seen(q, link);
	if (q->mtu != mtu && q->mode == TC_ARBTABLE_MODE_AUTO)
		q->broken = arbtable_auto_recheck(sch);
	arbtable_tree_unlock(sch);
out:
	kfree(cfg);
	return err;
}

/*
 * What a user's change is refused for (arbtable_configure(),
 * arbtable_check_cburst()) the device's change cannot be: said in one
 * line per device and change (*@warned), every problem of @sch in it.
 */
static void arbtable_warn_mtu(struct Qdisc *sch, u32 mtu, u32 broken,
			      bool *warned)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	bool burst = q->burst && q->burst < mtu;
	bool cburst = arbtable_check_cburst(sch, mtu, NULL);
	/* what a whole packet of the new mtu does, and what to do */
	const char *bw = ": a packet overdraws its bucket; raise 'burst'";
	const char *cw = " above a class's cburst: raise it (tc -d class show)";
	const char *kw = " admitted classes lost their rate or latency (tc -s class show)";
	char bn[12] = "", kn[12] = "";

	if (!burst && !cburst && !broken)
		return;
	*warned = true;
	if (burst)
		snprintf(bn, sizeof(bn), "%u", q->burst);
	if (broken)
		snprintf(kn, sizeof(kn), "%u", broken);
	netdev_warn(qdisc_dev(sch), "arbtable %x: mtu now %u%s%s%s%s%s%s%s%s\n",
		    sch->handle >> 16, mtu,
		    burst ? ", above the qdisc's burst " : "", bn,
		    burst ? bw : "",
		    cburst ? (burst ? ";" : ",") : "",
		    cburst ? cw : "",
		    broken ? (burst || cburst ? "; " : ": ") : "", kn,
		    broken ? kw : "");
}

/*
 * The device's mtu or gso_max_size may have changed (RTNL held). Unless the
 * user pinned the qdisc's mtu, follow it: a frame the device accepts is
 * never dropped for length, and the bounds describe the skbs actually sent.
 */
static void arbtable_follow_mtu(struct Qdisc *sch, unsigned long event,
				bool *warned)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct net_device *dev = qdisc_dev(sch);
	u32 mtu = arbtable_dev_mtu(dev), broken = 0, h = sch->handle >> 16;

	if (q->mtu_pinned) {
		if (event == NETDEV_CHANGEMTU && mtu > q->mtu && !*warned) {
			netdev_warn(dev,
				    "arbtable %x: frames of up to %u bytes are now allowed, above the qdisc's pinned mtu %u: longer ones are dropped and counted (oversize_drops); raise 'mtu' or set it to 0 to follow the device\n",
				    h, mtu, q->mtu);
			*warned = true;
		}
		return;
	}
	mtu = arbtable_follow_size(dev, q->capacity ? : q->link_rate);
	if (mtu == q->mtu)
		return;
	arbtable_tree_lock(sch);
	arbtable_bucket_resize(&q->shaper, mtu, q->burst);
	arbtable_resize_ceils(q, mtu);
	q->mtu = mtu;
	q->mtu_changes++;
	if (q->mode == TC_ARBTABLE_MODE_AUTO)
		broken = arbtable_auto_recheck(sch);
	q->broken = broken;
	arbtable_tree_unlock(sch);
	if (!*warned)
		arbtable_warn_mtu(sch, mtu, broken, warned);
}

static int arbtable_dev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct arbtable_sched *q;
	bool read = false, warned = false;
	u64 link = 0;

	if (event != NETDEV_CHANGEMTU && event != NETDEV_UP &&
	    event != NETDEV_CHANGE)
		return NOTIFY_DONE;
	ASSERT_RTNL();
	list_for_each_entry(q, &arbtable_list, list) {
		if (qdisc_dev(q->sch) != dev)
			continue;
		if (event != NETDEV_CHANGEMTU) {
			/* once per device and event, under RTNL: mq's
			 * instances share one device (and its firmware)
			 */
			if (!read) {
				link = arbtable_link_capacity(q->sch);
				read = true;
			}
			arbtable_tree_lock(q->sch);
			arbtable_link_seen(q, link);
			arbtable_tree_unlock(q->sch);
		}
		/* gso_max_size has no event of its own: read it here too */
		arbtable_follow_mtu(q->sch, event, &warned);
	}
	return NOTIFY_DONE;
}

static struct notifier_block arbtable_dev_notifier = {
	.notifier_call = arbtable_dev_event,
};

static int arbtable_change(struct Qdisc *sch, struct nlattr *opt,
			   struct netlink_ext_ack *extack)
{
	return arbtable_configure(sch, opt, false, extack);
}

/*
 * A lockless root: TCQ_F_NOLOCK | TCQ_F_CPUSTATS as pfifo_fast's static
 * flags, set here because the mode is an option; qdisc_free() frees the
 * per-CPU stats by the flag. Only a root: a parent's lock would serialise
 * it anyway (qdisc_graft() clears NOLOCK under a locked parent).
 */
static int arbtable_lockless_init(struct Qdisc *sch,
				  struct netlink_ext_ack *extack)
{
	struct arbtable_sched *q = qdisc_priv(sch);

	if (sch->parent != TC_H_ROOT) {
		NL_SET_ERR_MSG(extack,
			       "arbtable: lockless is for a device's root qdisc; use 'locked' below another qdisc");
		return -EOPNOTSUPP;
	}
	if (ptr_ring_init(&q->uncl_ring, sch->limit, GFP_KERNEL))
		goto nomem;
	sch->cpu_bstats = netdev_alloc_pcpu_stats(struct gnet_stats_basic_sync);
	sch->cpu_qstats = alloc_percpu(struct gnet_stats_queue);
	if (!sch->cpu_bstats || !sch->cpu_qstats) {
		free_percpu(sch->cpu_bstats);
		free_percpu(sch->cpu_qstats);
		sch->cpu_bstats = NULL;
		sch->cpu_qstats = NULL;
		goto nomem;
	}
	sch->flags |= TCQ_F_NOLOCK | TCQ_F_CPUSTATS;
	return 0;
nomem:
	NL_SET_ERR_MSG(extack, "cannot allocate the lockless queues");
	return -ENOMEM;
}

static int arbtable_init(struct Qdisc *sch, struct nlattr *opt,
			 struct netlink_ext_ack *extack)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct net_device *dev = qdisc_dev(sch);
	int err;

	/* First: destroy() runs after a failed init and undoes them. */
	qdisc_watchdog_init(&q->watchdog, sch);
	q->sch = sch;
	INIT_LIST_HEAD(&q->list);
	err = tcf_block_get(&q->block, &q->filter_list, sch, extack);
	if (err)
		return err;
	err = qdisc_class_hash_init(&q->clhash);
	if (err < 0)
		return err;
	memset(&q->unclassified, 0, sizeof(q->unclassified));
	arb_init(&q->arb, ARBTABLE_DEFAULT_HIGHLIMIT, ARB_ACCT_DEFICIT);
	/* The device's largest frame, followed while 'mtu' is not given */
	q->mtu = arbtable_dev_mtu(dev);
	q->maxweight = ARBTABLE_DEFAULT_MAXWEIGHT;
	q->mode = TC_ARBTABLE_MODE_AUTO;
	sch->limit = READ_ONCE(dev->tx_queue_len) ? : 1;
	err = arbtable_configure(sch, opt, true, extack);
	if (!err && q->lockless)
		err = arbtable_lockless_init(sch, extack);
	if (err)
		return err;
	list_add(&q->list, &arbtable_list);
	return 0;
}

static void arbtable_reset(struct Qdisc *sch)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct arbtable_class *cl;

	arbtable_for_each_class(q, cl, q->cls_used) {
		if (q->lockless) {
			u64 bytes = 0;
			unsigned int n;

			n = arbtable_ring_purge(sch, &cl->ring, &bytes);
			WRITE_ONCE(cl->ll_deq_pkts, cl->ll_deq_pkts + n);
			WRITE_ONCE(cl->ll_deq_bytes, cl->ll_deq_bytes + bytes);
		} else {
			qdisc_reset(cl->qdisc);
		}
		arb_set_eligible(&q->arb, cl->index, false);
	}
	if (q->lockless) {
		unsigned int n = arbtable_ring_purge(sch, &q->uncl_ring, NULL);
		int cpu;

		WRITE_ONCE(q->uncl_deq, q->uncl_deq + n);
		atomic64_set(&q->pending, 0);
		clear_bit(0, &q->uncl_pending);
		q->ll_busy = 0;
		/* as pfifo_fast: the core's requeued skbs (gso_skb), purged
		 * after this, were counted per CPU too
		 */
		for_each_possible_cpu(cpu) {
			struct gnet_stats_queue *qs;

			qs = per_cpu_ptr(sch->cpu_qstats, cpu);
			qs->backlog = 0;
			qs->qlen = 0;
		}
	}
	arbtable_unclassified_purge(&q->unclassified);
	q->arb.uncl_ready = false;
	q->throttled = 0;
	q->stalled = 0;
	/* no class carries a debt or a visit across a reset */
	arb_reset_visits(&q->arb);
	qdisc_watchdog_cancel(&q->watchdog);
}

static void arbtable_destroy_class(struct Qdisc *sch, struct arbtable_class *cl)
{
	struct arbtable_sched *q = qdisc_priv(sch);

	gen_kill_estimator(&cl->rate_est);
	qdisc_put(cl->qdisc);
	if (q->lockless) {
		arbtable_ring_purge(sch, &cl->ring, NULL);
		ptr_ring_cleanup(&cl->ring, NULL);
	}
	kfree(cl);
}

static void arbtable_destroy(struct Qdisc *sch)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct arbtable_class *cl;

	list_del(&q->list);
	tcf_block_put(q->block);
	qdisc_watchdog_cancel(&q->watchdog);
	arbtable_for_each_class(q, cl, q->cls_used)
		arbtable_destroy_class(sch, cl);
	qdisc_class_hash_destroy(&q->clhash);
	rtnl_kfree_skbs(q->unclassified.head, q->unclassified.tail);
	if (q->lockless)
		arbtable_ring_purge(sch, &q->uncl_ring, NULL);
	ptr_ring_cleanup(&q->uncl_ring, NULL);
}

/* Slots 0 to the last non-null one, a null slot as an empty nest */
static int arbtable_dump_table(struct sk_buff *skb, struct arbtable_sched *q,
			       unsigned int t, int type)
{
	const struct arb_table *tb = &q->arb.tbl[t];
	unsigned int i, n = fls64(tb->used);
	struct nlattr *nest, *slot;

	nest = nla_nest_start(skb, type);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < n; i++) {
		slot = nla_nest_start(skb, TCA_ARBTABLE_TBL_SLOT);
		if (!slot)
			return -EMSGSIZE;
		if (tb->weight[i] &&
		    (nla_put_u32(skb, TCA_ARBTABLE_SLOT_CLASS,
				 TC_H_MIN(q->classes[tb->cls[i]]->common.classid)) ||
		     nla_put_u32(skb, TCA_ARBTABLE_SLOT_WEIGHT, tb->weight[i])))
			return -EMSGSIZE;
		nla_nest_end(skb, slot);
	}
	nla_nest_end(skb, nest);
	return 0;
}

static int arbtable_dump(struct Qdisc *sch, struct sk_buff *skb)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct nlattr *opts, *prio;
	unsigned int i;

	opts = nla_nest_start_noflag(skb, TCA_OPTIONS);
	if (!opts)
		goto nla_put_failure;
	if (nla_put_u32(skb, TCA_ARBTABLE_MODE, q->mode) ||
	    nla_put_u64_64bit(skb, TCA_ARBTABLE_RATE, q->shaper.bps,
			      TCA_ARBTABLE_PAD) ||
	    nla_put_u32(skb, TCA_ARBTABLE_HIGHLIMIT, q->arb.highlimit) ||
	    nla_put_u32(skb, TCA_ARBTABLE_ACCOUNTING, q->arb.accounting) ||
	    nla_put_u32(skb, TCA_ARBTABLE_DEFAULT, q->default_minor) ||
	    nla_put_u32(skb, TCA_ARBTABLE_MTU, q->mtu) ||
	    nla_put_u32(skb, TCA_ARBTABLE_MAXWEIGHT, q->maxweight) ||
	    (q->burst && nla_put_u32(skb, TCA_ARBTABLE_BURST, q->burst)) ||
	    (!q->mtu_pinned && nla_put_flag(skb, TCA_ARBTABLE_MTU_FOLLOW)) ||
	    (!q->shaper.bps && nla_put_flag(skb, TCA_ARBTABLE_RATE_LINK)) ||
	    nla_put_u32(skb, TCA_ARBTABLE_PRIO_CLASSID,
			!(q->cls_limits & ARBTABLE_NO_PRIO_CLASSID)) ||
	    nla_put_u32(skb, TCA_ARBTABLE_CLASSIFY_FOREIGN,
			!(q->cls_limits & ARBTABLE_NO_FOREIGN)) ||
	    nla_put_u32(skb, TCA_ARBTABLE_LOCKLESS, q->lockless))
		goto nla_put_failure;

	prio = nla_nest_start(skb, TCA_ARBTABLE_PRIOMAP);
	if (!prio)
		goto nla_put_failure;
	for (i = 0; i < TC_ARBTABLE_PRIO_BANDS; i++)
		if (nla_put_u32(skb, TCA_ARBTABLE_PRIOMAP_BAND, q->priomap[i]))
			goto nla_put_failure;
	nla_nest_end(skb, prio);

	if (arbtable_dump_table(skb, q, ARB_HIGH, TCA_ARBTABLE_HIGH) ||
	    arbtable_dump_table(skb, q, ARB_LOW, TCA_ARBTABLE_LOW))
		goto nla_put_failure;
	return nla_nest_end(skb, opts);

nla_put_failure:
	nla_nest_cancel(skb, opts);
	return -EMSGSIZE;
}

/* arb_unclassified_bound_ns() for the running configuration; 0: none */
static u64 arbtable_unclassified_bound(struct arbtable_sched *q)
{
	struct arbtable_class *s = arbtable_strict_class(q);
	struct arb_params p;
	u64 b;

	if (s && !s->ceil.bps)
		return 0;
	arbtable_params(q, &p);
	b = arb_unclassified_bound_ns(&p);
	return b == ARB_BOUND_NONE ? 0 : b;
}

/*
 * RTNL held, not the root lock, which the dump no longer takes: the
 * configuration (classes, tables, capacity, mtu) changes only under RTNL;
 * the datapath's counters are written with WRITE_ONCE and read once here.
 */
static int arbtable_dump_stats(struct Qdisc *sch, struct gnet_dump *d)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct tc_arbtable_xstats xs = {
		.type = TCA_ARBTABLE_XSTATS_QDISC,
	};

	xs.nclasses = hweight64(q->cls_used);
	xs.unclassified_pkts = READ_ONCE(q->unclassified_pkts);
	xs.unclassified_drops = READ_ONCE(q->unclassified_drops);
	xs.unclassified_qlen = q->lockless ?
			       READ_ONCE(q->uncl_enq) - READ_ONCE(q->uncl_deq) :
			       READ_ONCE(q->unclassified.qlen);
	xs.swaps = q->swaps;
	xs.throttled = READ_ONCE(q->nthrottled);
	xs.high_used = hweight64(q->arb.tbl[ARB_HIGH].used);
	xs.low_used = hweight64(q->arb.tbl[ARB_LOW].used);
	xs.broken = q->broken;
	xs.gso_split = atomic64_read(&q->gso_split);
	xs.gso_segs = atomic64_read(&q->gso_segs);
	xs.oversize_drops = atomic64_read(&q->oversize_drops);
	xs.capacity = q->capacity;
	xs.link_rate = q->link_rate;
	xs.link_changes = q->link_changes;
	xs.mtu_changes = q->mtu_changes;
	xs.stalls = READ_ONCE(q->stalls);
	xs.unclassified_bound_ns = arbtable_unclassified_bound(q);
	xs.unclassified_max_wait_ns = READ_ONCE(q->uncl_max_wait);
	return gnet_stats_copy_app(d, &xs, sizeof(xs));
}

/* ---- classes ---- */

static unsigned long arbtable_find(struct Qdisc *sch, u32 classid)
{
	return (unsigned long)arbtable_find_class(sch, classid);
}

/* strict, ceil and cburst: the options of both modes */
static int arbtable_class_parse_shaping(struct Qdisc *sch, struct nlattr **tb,
					struct arbtable_class_opts *o,
					struct netlink_ext_ack *extack)
{
	struct arbtable_sched *q = qdisc_priv(sch);

	if (tb[TCA_ARBTABLE_C_STRICT])
		o->strict = nla_get_u32(tb[TCA_ARBTABLE_C_STRICT]);
	if (tb[TCA_ARBTABLE_C_CEIL]) {
		/* 0 removes the ceil, and with it the depth it had */
		o->ceil = nla_get_u64(tb[TCA_ARBTABLE_C_CEIL]);
		if (!o->ceil && !tb[TCA_ARBTABLE_C_CBURST])
			o->cburst = 0;
	}
	if (tb[TCA_ARBTABLE_C_CBURST])
		o->cburst = nla_get_u32(tb[TCA_ARBTABLE_C_CBURST]);
	if (o->cburst && !o->ceil) {
		NL_SET_ERR_MSG_ATTR(extack, tb[TCA_ARBTABLE_C_CBURST],
				    "cburst sizes the class's ceil: give a ceil too");
		return -EINVAL;
	}
	if (o->cburst && o->cburst < q->mtu) {
		arbtable_refuse(extack, tb[TCA_ARBTABLE_C_CBURST],
				"cburst is below the mtu: one whole packet must fit",
				": %u < %u", o->cburst, q->mtu);
		return -EINVAL;
	}
	return 0;
}

/* One strict class, served before the tables, so never one they name */
static int arbtable_strict_check(struct Qdisc *sch, struct arbtable_class *cl,
				 struct netlink_ext_ack *extack)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct arbtable_class *s = arbtable_strict_class(q);

	if (s && s != cl) {
		arbtable_refuse(extack, NULL,
				"another class is already the strict class",
				": %x:%x", TC_H_MAJ(s->common.classid) >> 16,
				TC_H_MIN(s->common.classid));
		return -EINVAL;
	}
	if (cl && (arb_class_slots(&q->arb, ARB_HIGH, cl->index) |
		   arb_class_slots(&q->arb, ARB_LOW, cl->index))) {
		NL_SET_ERR_MSG(extack,
			       "a class that table slots name cannot become strict; remove it from the tables first");
		return -EINVAL;
	}
	return 0;
}

static int arbtable_manual_class_check(struct Qdisc *sch, struct nlattr **tb,
				       const struct arbtable_class_opts *o,
				       struct netlink_ext_ack *extack)
{
	static const int autoonly[] = { TCA_ARBTABLE_C_RATE,
					TCA_ARBTABLE_C_LATENCY,
					TCA_ARBTABLE_C_DISTANCE,
					TCA_ARBTABLE_C_SHARE };
	struct arbtable_sched *q = qdisc_priv(sch);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(autoonly); i++) {
		if (tb[autoonly[i]]) {
			NL_SET_ERR_MSG_ATTR(extack, tb[autoonly[i]],
					    "rate/latency/distance/share need an auto-mode qdisc; a manual qdisc serves its classes by the slots it is given");
			return -EINVAL;
		}
	}
	if (o->strict && !o->ceil &&
	    (q->arb.tbl[ARB_HIGH].used | q->arb.tbl[ARB_LOW].used)) {
		NL_SET_ERR_MSG(extack,
			       "a strict class needs a ceil while table slots are programmed, otherwise it can starve them");
		return -EINVAL;
	}
	return 0;
}

/* The refusal's text on its own frame: the class parse's is large already */
static noinline_for_stack int
arbtable_ceil_below_rate(u64 ceil, u64 rate, const struct nlattr *attr,
			 struct netlink_ext_ack *extack)
{
	char c[16], r[16];	/* both at most 2^48 bytes/s */

	arbtable_refuse(extack, attr,
			"the ceil is below the class's reserved rate",
			": %.12s < %.12s", arb_fmt_rate(c, sizeof(c), ceil),
			arb_fmt_rate(r, sizeof(r), rate));
	return -EINVAL;
}

static int arbtable_auto_class_check(struct Qdisc *sch,
				     struct arbtable_class *cl,
				     struct nlattr **tb,
				     struct arbtable_class_opts *o,
				     struct netlink_ext_ack *extack)
{
	int err;

	if (o->strict) {
		err = arbtable_auto_strict_check(sch, cl, o, extack);
		if (err)
			return err;
	}
	err = arbtable_auto_parse(sch, tb, &o->resv, o->strict, extack);
	if (!err && o->ceil && o->ceil < o->resv.rate)
		err = arbtable_ceil_below_rate(o->ceil, o->resv.rate,
					       tb[TCA_ARBTABLE_C_CEIL], extack);
	return err;
}

/* @o: what @cl (NULL: a new class) becomes with the options in @opt */
static int arbtable_class_parse(struct Qdisc *sch, struct arbtable_class *cl,
				struct nlattr *opt,
				struct arbtable_class_opts *o,
				struct netlink_ext_ack *extack)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct nlattr *tb[TCA_ARBTABLE_C_MAX + 1] = {};
	int err;

	if (cl) {
		o->resv = cl->resv;
		o->ceil = cl->ceil.bps;
		o->cburst = cl->cburst;
		o->strict = cl->strict;
	}
	if (opt) {
		err = nla_parse_nested(tb, TCA_ARBTABLE_C_MAX, opt,
				       arbtable_class_policy, extack);
		if (err < 0)
			return err;
	}
	err = arbtable_class_parse_shaping(sch, tb, o, extack);
	if (!err && q->mode == TC_ARBTABLE_MODE_MANUAL)
		err = arbtable_manual_class_check(sch, tb, o, extack);
	if (!err && o->strict)
		err = arbtable_strict_check(sch, cl, extack);
	if (!err && q->mode == TC_ARBTABLE_MODE_AUTO)
		err = arbtable_auto_class_check(sch, cl, tb, o, extack);
	return err;
}

/* Apply checked class options; caller holds the tree lock. */
static void arbtable_class_apply(struct Qdisc *sch, struct arbtable_class *cl,
				 const struct arbtable_class_opts *o)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	u64 bit = BIT_ULL(cl->index);
	bool released = false;

	if (o->ceil != cl->ceil.bps) {
		/* A new ceil starts with a full bucket (or none): a class
		 * throttled by the old one may send now, not when the old
		 * ceil would have let it.
		 */
		arbtable_bucket_set(&cl->ceil, o->ceil, q->mtu, o->cburst);
		released = q->throttled & bit;
		q->throttled &= ~bit;
	} else if (o->cburst != cl->cburst) {
		arbtable_bucket_resize(&cl->ceil, q->mtu, o->cburst);
	}
	cl->cburst = o->cburst;
	if (o->strict != cl->strict) {
		cl->strict = o->strict;
		arb_set_strict(&q->arb, o->strict ? cl->index : ARB_NO_CLASS);
	}
	arbtable_update_eligible(q, cl);
	/* the watchdog was set for the old deadline: wake the qdisc now */
	if (released && (q->lockless ? q->ll_busy & bit : cl->qdisc->q.qlen))
		qdisc_watchdog_schedule_ns(&q->watchdog, ktime_get_ns());
}

/* A new class with its child, not yet visible to the qdisc */
static struct arbtable_class *arbtable_class_alloc(struct Qdisc *sch,
						   u32 classid,
						   unsigned int idx,
						   struct netlink_ext_ack *extack)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct arbtable_class *cl;

	cl = kzalloc(sizeof(*cl), GFP_KERNEL);
	if (!cl) {
		NL_SET_ERR_MSG(extack, "cannot allocate the class");
		return ERR_PTR(-ENOMEM);
	}
	gnet_stats_basic_sync_init(&cl->bstats);
	cl->common.classid = classid;
	cl->index = idx;
	cl->table = ARB_NO_CLASS;
	if (q->lockless) {
		/* the ring is the class's queue, as long as the locked
		 * mode's default pfifo: txqueuelen now; noop_qdisc is no queue
		 */
		u32 limit = READ_ONCE(qdisc_dev(sch)->tx_queue_len);

		cl->qdisc = &noop_qdisc;
		if (!ptr_ring_init(&cl->ring, limit ? : 1, GFP_KERNEL))
			return cl;
		NL_SET_ERR_MSG(extack, "cannot allocate the class's ring");
	} else {
		/* Fail the add rather than report success for a class
		 * without its pfifo, which would drop all it is given (and
		 * may be admitted).
		 */
		cl->qdisc = qdisc_create_dflt(sch->dev_queue, &pfifo_qdisc_ops,
					      classid, extack);
		if (cl->qdisc) {
			qdisc_hash_add(cl->qdisc, true);
			return cl;
		}
		NL_SET_ERR_MSG(extack, "cannot create the class's default pfifo child");
	}
	kfree(cl);
	return ERR_PTR(-ENOMEM);
}

/* Where a new class may be, and whether there is room for it */
static int arbtable_class_check_id(struct Qdisc *sch, u32 classid,
				   u32 parentid, struct netlink_ext_ack *extack)
{
	struct arbtable_sched *q = qdisc_priv(sch);

	if (parentid != TC_H_ROOT && parentid != sch->handle) {
		NL_SET_ERR_MSG(extack,
			       "arbtable classes hang directly off the qdisc, not off a class");
		return -EINVAL;
	}
	if (TC_H_MAJ(classid) != sch->handle || !TC_H_MIN(classid)) {
		NL_SET_ERR_MSG(extack,
			       "class id must be <qdisc handle>:<minor>, minor 1..ffff");
		return -EINVAL;
	}
	if (q->cls_used == U64_MAX) {
		NL_SET_ERR_MSG(extack, "at most 64 classes per qdisc");
		return -ENOSPC;
	}
	return 0;
}

/*
 * A new class or a change of one. What can fail comes first: the
 * admission staged on copies, the new class allocated, the estimator
 * made or replaced; then, under the tree lock, what cannot: the class
 * published, the admission committed, the options applied.
 */
static int arbtable_change_class(struct Qdisc *sch, u32 classid, u32 parentid,
				 struct nlattr **tca, unsigned long *arg,
				 struct netlink_ext_ack *extack)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct arbtable_class *cl = (struct arbtable_class *)*arg, *new = NULL;
	struct arbtable_pending_admission *pend = NULL;
	struct arbtable_class_opts o = {};
	static const struct arb_resv none;
	unsigned int idx;
	int err;

	err = arbtable_class_parse(sch, cl, tca[TCA_OPTIONS], &o, extack);
	if (!err && !cl)
		err = arbtable_class_check_id(sch, classid, parentid, extack);
	if (err)
		return err;
	/* not ffz(): it takes an unsigned long, 32 bits on i386 */
	idx = cl ? cl->index : __ffs64(~q->cls_used);
	if (memcmp(&o.resv, cl ? &cl->resv : &none, sizeof(o.resv))) {
		err = arbtable_admission_stage(sch, idx,
					       cl ? cl->table : ARB_NO_CLASS,
					       &o.resv, &pend, extack);
		if (err)
			return err;
	}
	if (!cl) {
		new = arbtable_class_alloc(sch, classid, idx, extack);
		if (IS_ERR(new)) {
			err = PTR_ERR(new);
			new = NULL;
			goto out;
		}
	}
	if (tca[TCA_RATE]) {
		struct arbtable_class *e = cl ?: new;

		err = gen_replace_estimator(&e->bstats, NULL, &e->rate_est,
					    NULL, true, tca[TCA_RATE]);
		if (err) {
			NL_SET_ERR_MSG(extack, "failed to set the rate estimator");
			goto out;
		}
	}

	arbtable_tree_lock(sch);
	if (new) {
		cl = new;
		new = NULL;
		qdisc_class_hash_insert(&q->clhash, &cl->common);
		/* initialised before a lockless enqueue can find it */
		smp_store_release(&q->classes[idx], cl);
		WRITE_ONCE(q->cls_used, q->cls_used | BIT_ULL(idx));
		arbtable_cache_classes(sch);
	}
	if (pend)
		arbtable_admission_commit(sch, cl, pend);
	pend = NULL;
	arbtable_class_apply(sch, cl, &o);
	arbtable_tree_unlock(sch);
	if (!*arg)
		qdisc_class_hash_grow(sch, &q->clhash);
	*arg = (unsigned long)cl;
out:
	kfree(pend);
	if (new)
		arbtable_destroy_class(sch, new);
	return err;
}

static int arbtable_delete_class(struct Qdisc *sch, unsigned long arg,
				 struct netlink_ext_ack *extack)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct arbtable_class *cl = (struct arbtable_class *)arg;
	u64 hi = arb_class_slots(&q->arb, ARB_HIGH, cl->index);
	u64 lo = arb_class_slots(&q->arb, ARB_LOW, cl->index);
	struct arbtable_pending_admission *pend = NULL;
	struct arb_resv none = {};
	int err;

	if (arbtable_class_in_use(cl)) {
		arbtable_refuse(extack, NULL,
				"filters still point at the class",
				": %u at %x:%x", arbtable_class_refs(cl),
				TC_H_MAJ(cl->common.classid) >> 16,
				TC_H_MIN(cl->common.classid));
		return -EBUSY;
	}
	if (q->mode == TC_ARBTABLE_MODE_AUTO && cl->table != ARB_NO_CLASS) {
		/* Release + defragment, committed below with the purge. */
		err = arbtable_admission_stage(sch, cl->index, cl->table,
					       &none, &pend, extack);
		if (err)
			return err;
	} else if (hi || lo) {
		unsigned int n = hweight64(hi) + hweight64(lo);
		unsigned int first = __ffs64(hi ? hi : lo);

		arbtable_refuse(extack, NULL,
				"the class is still named by table slots",
				": %hhu, the first %.4s slot %hhu", n,
				hi ? "high" : "low", first);
		return -EBUSY;
	}

	arbtable_tree_lock(sch);
	if (!q->lockless)
		qdisc_purge_queue(cl->qdisc);
	if (pend)
		arbtable_admission_commit(sch, cl, pend);
	arb_set_eligible(&q->arb, cl->index, false);
	if (cl->strict)
		arb_set_strict(&q->arb, ARB_NO_CLASS);
	q->throttled &= ~BIT_ULL(cl->index);
	q->stalled &= ~BIT_ULL(cl->index);
	q->ll_busy &= ~BIT_ULL(cl->index);
	WRITE_ONCE(q->classes[cl->index], NULL);
	WRITE_ONCE(q->cls_used, q->cls_used & ~BIT_ULL(cl->index));
	qdisc_class_hash_remove(&q->clhash, &cl->common);
	arbtable_cache_classes(sch);
	arbtable_tree_unlock(sch);

	/* unpublished, and no dequeue can pick it: once the senders that
	 * found it before are done, its ring has no producer and no consumer
	 */
	if (q->lockless)
		synchronize_net();
	arbtable_destroy_class(sch, cl);
	return 0;
}

static int arbtable_graft_class(struct Qdisc *sch, unsigned long arg,
				struct Qdisc *new, struct Qdisc **old,
				struct netlink_ext_ack *extack)
{
	struct arbtable_class *cl = (struct arbtable_class *)arg;
	struct arbtable_sched *q = qdisc_priv(sch);

	if (q->lockless) {
		NL_SET_ERR_MSG(extack,
			       "arbtable: a lockless qdisc takes no child qdisc (create it with 'locked')");
		return -EOPNOTSUPP;
	}
	if (!new) {
		/* Deleting a child puts the default pfifo back.  If it cannot
		 * be allocated, refuse the delete and keep the old child
		 * rather than leave the class on noop_qdisc, dropping all it is
		 * given while the delete reports success.
		 */
		new = qdisc_create_dflt(sch->dev_queue, &pfifo_qdisc_ops,
					cl->common.classid, extack);
		if (!new) {
			NL_SET_ERR_MSG(extack,
				       "cannot create the default pfifo that replaces the deleted child; the child is kept");
			return -ENOMEM;
		}
		qdisc_hash_add(new, true);
	}
	*old = qdisc_replace(sch, new, &cl->qdisc);
	/* the class's drops outlive its child, as htb's do */
	if (*old) {
		struct gnet_stats_queue qs = {};

		gnet_stats_add_queue(&qs, (*old)->cpu_qstats, &(*old)->qstats);
		WRITE_ONCE(cl->qstats.drops, cl->qstats.drops + qs.drops);
	}
	return 0;
}

static struct Qdisc *arbtable_class_leaf(struct Qdisc *sch, unsigned long arg)
{
	struct arbtable_sched *q = qdisc_priv(sch);

	/* a lockless class has a ring, no qdisc to show or replace */
	return q->lockless ? NULL : ((struct arbtable_class *)arg)->qdisc;
}

/*
 * Idempotent: may be called for a class that is already inactive. From the
 * picked class's child during arbtable_dequeue_busy() (its drops), nothing:
 * the dequeue settles the class after its charge, or without one.
 */
static void arbtable_qlen_notify(struct Qdisc *sch, unsigned long arg)
{
	struct arbtable_sched *q = qdisc_priv(sch);

	if (!q->dequeuing)
		arbtable_update_eligible(q, (struct arbtable_class *)arg);
}

static unsigned long arbtable_bind_tcf(struct Qdisc *sch, unsigned long parent,
				       u32 classid)
{
	struct arbtable_class *cl = arbtable_find_class(sch, classid);

	if (cl)
		arbtable_class_get(cl);
	return (unsigned long)cl;
}

static void arbtable_unbind_tcf(struct Qdisc *sch, unsigned long arg)
{
	struct arbtable_class *cl = (struct arbtable_class *)arg;

	arbtable_class_put(cl);
}

static struct tcf_block *arbtable_tcf_block(struct Qdisc *sch,
					    unsigned long cl,
					    struct netlink_ext_ack *extack)
{
	struct arbtable_sched *q = qdisc_priv(sch);

	if (cl) {
		NL_SET_ERR_MSG(extack,
			       "arbtable classes take no filters; attach them to the qdisc");
		return NULL;
	}
	return q->block;
}

static int arbtable_dump_class(struct Qdisc *sch, unsigned long arg,
			       struct sk_buff *skb, struct tcmsg *tcm)
{
	struct arbtable_class *cl = (struct arbtable_class *)arg;
	struct nlattr *nest;

	tcm->tcm_parent = TC_H_ROOT;
	tcm->tcm_handle = cl->common.classid;
	tcm->tcm_info = cl->qdisc->handle;

	nest = nla_nest_start_noflag(skb, TCA_OPTIONS);
	if (!nest ||
	    (cl->strict && nla_put_u32(skb, TCA_ARBTABLE_C_STRICT, 1)) ||
	    (cl->ceil.bps &&
	     nla_put_u64_64bit(skb, TCA_ARBTABLE_C_CEIL, cl->ceil.bps,
			       TCA_ARBTABLE_C_PAD)) ||
	    (cl->cburst &&
	     nla_put_u32(skb, TCA_ARBTABLE_C_CBURST, cl->cburst)) ||
	    (cl->resv.rate &&
	     nla_put_u64_64bit(skb, TCA_ARBTABLE_C_RATE, cl->resv.rate,
			       TCA_ARBTABLE_C_PAD)) ||
	    (cl->resv.latency &&
	     nla_put_u64_64bit(skb, TCA_ARBTABLE_C_LATENCY, cl->resv.latency,
			       TCA_ARBTABLE_C_PAD)) ||
	    (cl->resv.distance &&
	     nla_put_u32(skb, TCA_ARBTABLE_C_DISTANCE, cl->resv.distance)) ||
	    (cl->resv.share &&
	     nla_put_u32(skb, TCA_ARBTABLE_C_SHARE, cl->resv.share)))
		goto nla_put_failure;
	return nla_nest_end(skb, nest);

nla_put_failure:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

static int arbtable_dump_class_stats(struct Qdisc *sch, unsigned long arg,
				     struct gnet_dump *d)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct arbtable_class *cl = (struct arbtable_class *)arg;
	struct tc_arbtable_class_xstats xs = {
		.type = TCA_ARBTABLE_XSTATS_CLASS,
	};
	struct gnet_stats_queue qs = {};
	__u32 qlen;
	u64 m;

	/* RTNL held, not the root lock: as arbtable_dump_stats() */
	xs.high_slots = arb_class_slots(&q->arb, ARB_HIGH, cl->index);
	xs.low_slots = arb_class_slots(&q->arb, ARB_LOW, cl->index);
	for (m = xs.high_slots; m; m &= m - 1)
		xs.high_weight += q->arb.tbl[ARB_HIGH].weight[__ffs64(m)];
	for (m = xs.low_slots; m; m &= m - 1)
		xs.low_weight += q->arb.tbl[ARB_LOW].weight[__ffs64(m)];
	arbtable_auto_fill_xstats(sch, cl, &xs);
	xs.max_hol_ns = READ_ONCE(cl->max_hol_ns);
	xs.throttled = READ_ONCE(cl->throttled);
	xs.broken = cl->broken;
	xs.stalls = READ_ONCE(cl->stalls);
	/*
	 * The child's queue, as drr reports it: its drops are every drop of
	 * the class (those it refused at enqueue, and its AQM's at dequeue,
	 * which arbtable never sees) with those of the children grafted
	 * before it, its backlog and requeues; the class's overlimits are its
	 * ceil's throttles and the child's own.
	 */
	if (q->lockless) {
		/* producer counts less the dequeuer's, each read once */
		u64 dp = READ_ONCE(cl->ll_deq_pkts);
		u64 db = READ_ONCE(cl->ll_deq_bytes);

		qlen = READ_ONCE(cl->ll_enq_pkts) - dp;
		qs.backlog = READ_ONCE(cl->ll_enq_bytes) - db;
		qs.drops = READ_ONCE(cl->ll_drops);
	} else {
		qlen = qdisc_qlen_sum(cl->qdisc);
		gnet_stats_add_queue(&qs, cl->qdisc->cpu_qstats,
				     &cl->qdisc->qstats);
	}
	qs.overlimits += READ_ONCE(cl->qstats.overlimits);
	qs.drops += READ_ONCE(cl->qstats.drops);

	if (gnet_stats_copy_basic(d, NULL, &cl->bstats, true) < 0 ||
	    gnet_stats_copy_rate_est(d, &cl->rate_est) < 0 ||
	    gnet_stats_copy_queue(d, NULL, &qs, qlen) < 0)
		return -EMSGSIZE;
	return gnet_stats_copy_app(d, &xs, sizeof(xs));
}

static void arbtable_walk(struct Qdisc *sch, struct qdisc_walker *arg)
{
	struct arbtable_sched *q = qdisc_priv(sch);
	struct arbtable_class *cl;

	if (arg->stop)
		return;
	arbtable_for_each_class(q, cl, q->cls_used)
		if (!tc_qdisc_stats_dump(sch, (unsigned long)cl, arg))
			return;
}

static const struct Qdisc_class_ops arbtable_class_ops = {
	.graft		= arbtable_graft_class,
	.leaf		= arbtable_class_leaf,
	.qlen_notify	= arbtable_qlen_notify,
	.find		= arbtable_find,
	.change		= arbtable_change_class,
	.delete		= arbtable_delete_class,
	.walk		= arbtable_walk,
	.tcf_block	= arbtable_tcf_block,
	.bind_tcf	= arbtable_bind_tcf,
	.unbind_tcf	= arbtable_unbind_tcf,
	.dump		= arbtable_dump_class,
	.dump_stats	= arbtable_dump_class_stats,
};

static struct Qdisc_ops arbtable_qdisc_ops __read_mostly = {
	.cl_ops		= &arbtable_class_ops,
	.id		= "arbtable",
	.priv_size	= sizeof(struct arbtable_sched),
	.enqueue	= arbtable_enqueue,
	.dequeue	= arbtable_dequeue,
	.peek		= qdisc_peek_dequeued,
	.init		= arbtable_init,
	.change		= arbtable_change,
	.reset		= arbtable_reset,
	.destroy	= arbtable_destroy,
	.dump		= arbtable_dump,
	.dump_stats	= arbtable_dump_stats,
	.owner		= THIS_MODULE,
};
MODULE_ALIAS_NET_SCH("arbtable");

static int __init arbtable_module_init(void)
{
	int err;

	err = register_netdevice_notifier(&arbtable_dev_notifier);
	if (err)
		return err;
	err = register_qdisc(&arbtable_qdisc_ops);
	if (err)
		unregister_netdevice_notifier(&arbtable_dev_notifier);
	return err;
}

static void __exit arbtable_module_exit(void)
{
	unregister_qdisc(&arbtable_qdisc_ops);
	unregister_netdevice_notifier(&arbtable_dev_notifier);
}

module_init(arbtable_module_init);
module_exit(arbtable_module_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("InfiniBand-style VL arbitration table scheduler");
#ifdef ARBTABLE_VERSION
MODULE_VERSION(ARBTABLE_VERSION);	/* out-of-tree builds */
#endif
