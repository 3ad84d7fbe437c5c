/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sch_arbtable private state, shared by the qdisc glue (arbtable_qdisc.c)
 * and the auto-mode admission code (arbtable_auto.c).
 */
#ifndef _ARBTABLE_QDISC_H
#define _ARBTABLE_QDISC_H

#include <linux/types.h>
#include <net/netlink.h>
#include <net/pkt_sched.h>
#include <net/sch_generic.h>

#include <linux/pkt_sched_arbtable.h>
#include "arbtable_compat.h"
#include "arbtable_arbiter.h"
#include "arbtable_alloc.h"
#include "arbtable_admit.h"

#define ARBTABLE_DEFAULT_HIGHLIMIT	16	/* 64 KiB of high per low turn */
#define ARBTABLE_DEFAULT_MAXWEIGHT	255
#define ARBTABLE_TRACE_UNCLASSIFIED	4

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
	u32				cburst;		/* ceil depth, bytes;
							 * 0: the default
							 */
	u32				filter_cnt;
	u8				index;		/* arbiter class index */
	bool				strict;

	/* auto mode: what was asked, and what the allocator granted */
	struct arb_resv		resv;
	u8				table;		/* ARB_HIGH/LOW, or ARB_NO_CLASS */
	u32				distance;	/* effective */
	u32				weight;		/* units reserved */
	u64				bound_ns;	/* guaranteed HOL bound */
};

struct arbtable_sched {
	struct tcf_proto __rcu		*filter_list;
	struct tcf_block		*block;
	struct Qdisc_class_hash		clhash;
	struct arbtable_class		*classes[ARB_MAX_CLASSES];
	/* classes by minor % 64, for the skb->priority fast path; a minor
	 * that collides with one already here is found by hash instead
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

	u64				capacity;	/* bytes/s the tables share */
	u32				priomap[TC_ARBTABLE_PRIO_BANDS];
	u32				default_minor;
	u32				mtu;
	u32				burst;		/* qdisc rate, bytes;
							 * 0: the default depth
							 */
	u8				mode;
	u8				maxweight;

	u64				unclassified_pkts;
	u64				unclassified_drops;
	u64				nthrottled;
	u64				swaps;
	u64				gso_split;	/* GSO skbs segmented */
	u64				gso_segs;	/* segments queued */
	u64				oversize_drops;	/* frames > mtu */

	/* auto mode: the allocator's view of each table */
	struct arb_alloc		alloc[ARB_NTABLES];
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
	u8	mode;
	u8	highlimit;
	u8	accounting;
	u8	maxweight;
	bool	set_tbl[ARB_NTABLES];
	u8	cls[ARB_NTABLES][ARB_SLOTS];
	u8	weight[ARB_NTABLES][ARB_SLOTS];
};

void arbtable_errmsg(struct netlink_ext_ack *extack,
		     const struct nlattr *attr, const char *fmt, ...)
	__printf(3, 4);

/* arbtable_auto.c: auto mode, the allocator behind `rate`/`share` */
struct arbtable_plan;
void arbtable_auto_init(struct arbtable_sched *q);
int arbtable_auto_check_qdisc(struct Qdisc *sch, u64 capacity,
			      const struct arbtable_cfg *cfg,
			      struct netlink_ext_ack *extack);
int arbtable_auto_parse(struct Qdisc *sch, struct nlattr **tb,
			struct arb_resv *resv, bool strict,
			struct netlink_ext_ack *extack);
int arbtable_auto_strict_check(struct Qdisc *sch, struct arbtable_class *cl,
			       bool strict, u64 ceil, u32 cburst,
			       struct netlink_ext_ack *extack);
int arbtable_auto_plan(struct Qdisc *sch, unsigned int idx, u8 old_table,
		       const struct arb_resv *resv,
		       struct arbtable_plan **planp,
		       struct netlink_ext_ack *extack);
void arbtable_auto_commit(struct Qdisc *sch, struct arbtable_class *cl,
			  struct arbtable_plan *plan);
void arbtable_auto_fill_xstats(struct Qdisc *sch, struct arbtable_class *cl,
			       struct tc_arbtable_class_xstats *xs);

#endif /* _ARBTABLE_QDISC_H */
