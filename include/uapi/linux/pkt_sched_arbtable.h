/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * sch_arbtable: InfiniBand-style VL arbitration tables for Linux qdiscs.
 *
 * Netlink attributes (nested in TCA_OPTIONS) and xstats layouts shared by
 * the kernel module, the tc plugin, libarbtable and the tests.
 *
 * Units: rates are bytes per second (u64), latencies nanoseconds (u64),
 * weights 64-byte blocks (IBA), highlimit 4096-byte blocks (IBA).
 */
#ifndef _UAPI_LINUX_PKT_SCHED_ARBTABLE_H
#define _UAPI_LINUX_PKT_SCHED_ARBTABLE_H

#include <linux/types.h>

#define TC_ARBTABLE_SLOTS	64	/* slots per table */
#define TC_ARBTABLE_PRIO_BANDS	16	/* priomap entries, skb->priority & 15 */
#define TC_ARBTABLE_WEIGHT_MAX	255
#define TC_ARBTABLE_WEIGHT_UNIT	64	/* bytes per weight unit */
#define TC_ARBTABLE_HIGHLIMIT_MAX	255	/* 255 = unlimited */
#define TC_ARBTABLE_HIGHLIMIT_UNIT	4096

/**
 * enum tc_arbtable_table - the two arbitration tables
 * @TC_ARBTABLE_HIGH: served first, up to highlimit bytes per low turn
 * @TC_ARBTABLE_LOW: served when high has nothing or is owed a turn
 * @TC_ARBTABLE_NTABLES: number of tables
 */
enum tc_arbtable_table {
	TC_ARBTABLE_HIGH,
	TC_ARBTABLE_LOW,
	TC_ARBTABLE_NTABLES,
};

/**
 * enum tc_arbtable_accounting - what a slot's credit carries between visits
 * @TC_ARBTABLE_ACCT_DEFICIT: a packet's overshoot is debt paid at the
 *	slot's next visit (BXIv3 Algorithm 2): byte shares equal weight shares
 * @TC_ARBTABLE_ACCT_IBA: each visit starts from the weight, overshoot is
 *	forgiven (the IBA specification's rule)
 * @__TC_ARBTABLE_ACCT_MAX: number of modes
 */
enum tc_arbtable_accounting {
	TC_ARBTABLE_ACCT_DEFICIT,
	TC_ARBTABLE_ACCT_IBA,
	__TC_ARBTABLE_ACCT_MAX,
};

/**
 * enum tc_arbtable_mode - who programs the tables (fixed at creation)
 * @TC_ARBTABLE_MODE_MANUAL: the administrator, with TCA_ARBTABLE_HIGH/LOW
 * @TC_ARBTABLE_MODE_AUTO: the allocator, from each class's rate and
 *	latency/distance (HIGH) or share (LOW)
 * @__TC_ARBTABLE_MODE_MAX: number of modes
 */
enum tc_arbtable_mode {
	TC_ARBTABLE_MODE_MANUAL,
	TC_ARBTABLE_MODE_AUTO,
	__TC_ARBTABLE_MODE_MAX,
};

/* Largest qdisc burst and class cburst, bytes (keeps the token
 * arithmetic in 64 bits)
 */
#define TC_ARBTABLE_BURST_MAX	(1U << 28)

/* Qdisc options */
enum {
	TCA_ARBTABLE_UNSPEC,
	TCA_ARBTABLE_MODE,		/* u32, enum tc_arbtable_mode; create only */
	TCA_ARBTABLE_RATE,		/* u64 bytes/s, 0 = link speed */
	TCA_ARBTABLE_HIGHLIMIT,		/* u32, 0..255 */
	TCA_ARBTABLE_ACCOUNTING,	/* u32, enum tc_arbtable_accounting */
	TCA_ARBTABLE_DEFAULT,		/* u32 class minor, 0 = none */
	TCA_ARBTABLE_PRIOMAP,		/* nested: TC_ARBTABLE_PRIO_BANDS x u32 */
	TCA_ARBTABLE_MTU,		/* u32 bytes, for bounds and the low share;
					 * 0 = follow the device's frame size
					 */
	TCA_ARBTABLE_MAXWEIGHT,		/* u32, 1..255, auto mode slot weight cap */
	TCA_ARBTABLE_HIGH,		/* nested: TCA_ARBTABLE_TBL_SLOT...,
					 * replaces the whole table (manual
					 * mode; auto mode takes only the
					 * table in force: a dump sent back)
					 */
	TCA_ARBTABLE_LOW,		/* nested: as TCA_ARBTABLE_HIGH */
	TCA_ARBTABLE_PAD,		/* alignment of 64-bit attributes (i386),
					 * accepted back and ignored
					 */
	TCA_ARBTABLE_BURST,		/* u32 bytes the rate may send back to
					 * back, 0 = max(2 * mtu, 10 ms of rate)
					 */
	TCA_ARBTABLE_MTU_FOLLOW,	/* flag: the mtu was not given and follows
					 * the device's; in a request (a dump sent
					 * back) the same as TCA_ARBTABLE_MTU 0
					 */
	TCA_ARBTABLE_RATE_LINK,		/* flag: no rate is set (RATE dumped 0):
					 * the capacity is the link speed read
					 * when the rate was last given. In a
					 * request with RATE 0 or none (a dump
					 * sent back) it keeps that capacity
					 * without reading the link again
					 */
	TCA_ARBTABLE_PRIO_CLASSID,	/* u32 0/1, 1 when not given: an
					 * skb->priority naming one of the
					 * qdisc's classes selects it before the
					 * filters; 0 ignores it (the priomap
					 * still maps its low 4 bits)
					 */
	TCA_ARBTABLE_CLASSIFY_FOREIGN,	/* u32 0/1, 1 when not given: 0 sends
					 * packets not routed in the device's
					 * network namespace (a macvlan or ipvlan
					 * L2 in another one, a bridge, a packet
					 * socket) to the default class, without
					 * reading their priority or running the
					 * filters
					 */
	TCA_ARBTABLE_LOCKLESS,		/* u32 0/1, 0 when not given; create
					 * only: 1 makes a root qdisc lockless
					 * (TCQ_F_NOLOCK: every sending CPU
					 * enqueues into its class's ring, one
					 * CPU at a time dequeues), with no
					 * child qdiscs; 0 is the locked mode,
					 * which takes any child
					 */
	__TCA_ARBTABLE_MAX,
};

#define TCA_ARBTABLE_MAX (__TCA_ARBTABLE_MAX - 1)

/* Inside TCA_ARBTABLE_HIGH / TCA_ARBTABLE_LOW: one TCA_ARBTABLE_TBL_SLOT
 * per slot, in slot order from slot 0, at most TC_ARBTABLE_SLOTS; the
 * slots after the last one sent are null. A dump sends slots 0 to the
 * last non-null one, a null slot as an empty nest.
 */
enum {
	TCA_ARBTABLE_TBL_UNSPEC,
	TCA_ARBTABLE_TBL_SLOT,		/* nested: TCA_ARBTABLE_SLOT_* */
	__TCA_ARBTABLE_TBL_MAX,
};

#define TCA_ARBTABLE_TBL_MAX (__TCA_ARBTABLE_TBL_MAX - 1)

/* Inside TCA_ARBTABLE_TBL_SLOT. An empty nest, or a weight of 0, is a
 * null slot; a weight above 0 needs a class, and a class needs a weight
 * (0 for a null slot).
 */
enum {
	TCA_ARBTABLE_SLOT_UNSPEC,
	TCA_ARBTABLE_SLOT_CLASS,	/* u32 class minor, 1..0xffff */
	TCA_ARBTABLE_SLOT_WEIGHT,	/* u32 64-byte units per visit,
					 * 0..255; 0 = null slot
					 */
	__TCA_ARBTABLE_SLOT_MAX,
};

#define TCA_ARBTABLE_SLOT_MAX (__TCA_ARBTABLE_SLOT_MAX - 1)

/* Inside TCA_ARBTABLE_PRIOMAP: TC_ARBTABLE_PRIO_BANDS attributes in band
 * order, each a u32 class minor (0 = unmapped).
 */
enum {
	TCA_ARBTABLE_PRIOMAP_UNSPEC,
	TCA_ARBTABLE_PRIOMAP_BAND,	/* u32 */
	__TCA_ARBTABLE_PRIOMAP_MAX,
};

#define TCA_ARBTABLE_PRIOMAP_MAX (__TCA_ARBTABLE_PRIOMAP_MAX - 1)

/* Class options */
enum {
	TCA_ARBTABLE_C_UNSPEC,
	TCA_ARBTABLE_C_STRICT,		/* u32 0/1: served before both tables */
	TCA_ARBTABLE_C_CEIL,		/* u64 bytes/s, per-class limit */
	TCA_ARBTABLE_C_RATE,		/* u64 bytes/s, auto mode reservation */
	TCA_ARBTABLE_C_LATENCY,		/* u64 ns, auto mode bound */
	TCA_ARBTABLE_C_DISTANCE,	/* u32 1..64, auto mode */
	TCA_ARBTABLE_C_SHARE,		/* u32 1..255, auto mode, LOW table */
	TCA_ARBTABLE_C_PAD,		/* as TCA_ARBTABLE_PAD */
	TCA_ARBTABLE_C_CBURST,		/* u32 bytes the ceil may send back to
					 * back, 0 = max(2 * mtu, 10 ms of ceil)
					 */
	__TCA_ARBTABLE_C_MAX,
};

#define TCA_ARBTABLE_C_MAX (__TCA_ARBTABLE_C_MAX - 1)

/**
 * enum tc_arbtable_xstats_type - what a TCA_STATS_APP blob of arbtable holds
 * @TCA_ARBTABLE_XSTATS_QDISC: struct tc_arbtable_xstats
 * @TCA_ARBTABLE_XSTATS_CLASS: struct tc_arbtable_class_xstats
 *
 * Both structs start with this type (as fq_codel's xstats do), so a reader
 * tells them apart without relying on their sizes; a newer kernel may
 * append fields, which older readers ignore.
 */
enum tc_arbtable_xstats_type {
	TCA_ARBTABLE_XSTATS_QDISC,
	TCA_ARBTABLE_XSTATS_CLASS,
};

/**
 * struct tc_arbtable_xstats - qdisc statistics (TCA_STATS_APP)
 * @type: TCA_ARBTABLE_XSTATS_QDISC
 * @nclasses: classes of the qdisc
 * @unclassified_pkts: packets sent from the queue of packets no class took
 * @unclassified_drops: packets dropped there (queue at the qdisc limit)
 * @swaps: slot swaps made by the allocator's defragmentation
 * @throttled: times a class's ceil made it ineligible
 * @unclassified_qlen: packets in the unclassified queue now
 * @high_used: non-null slots of the HIGH table
 * @low_used: non-null slots of the LOW table
 * @broken: admitted classes whose reserved rate or latency no longer
 *	holds since the device's frames grew
 * @gso_split: GSO packets longer than the mtu, segmented at enqueue
 * @gso_segs: segments of those packets queued
 * @oversize_drops: packets longer than the mtu that could not be
 *	segmented, dropped
 * @capacity: bytes/s the tables share (the rate, else the link speed read
 *	when the qdisc was created or its rate last changed)
 * @link_rate: the link speed last read, bytes/s (0: unknown)
 * @link_changes: times the link speed was seen to change since creation
 * @mtu_changes: times the mtu followed the device's
 * @stalls: times a class's child held packets but gave none
 * @unclassified_bound_ns: the unclassified queue's head-of-line bound,
 *	however backlogged the classes are, ns (0: none, with an unlimited
 *	highlimit, an unknown capacity or a strict class without a ceil)
 * @unclassified_max_wait_ns: the longest head-of-line wait measured in
 *	the unclassified queue, ns
 *
 * Configuration and results only: the arbiter's position in the tables
 * and the slots' credits change with every packet and are reported per
 * packet by the arbtable_dequeue tracepoint instead.
 */
struct tc_arbtable_xstats {
	__u32	type;
	__u32	nclasses;
	__u64	unclassified_pkts;
	__u64	unclassified_drops;
	__u64	swaps;
	__u64	throttled;
	__u32	unclassified_qlen;
	__u32	high_used;
	__u32	low_used;
	__u32	broken;
	__u64	gso_split;
	__u64	gso_segs;
	__u64	oversize_drops;
	__u64	capacity;
	__u64	link_rate;
	__u64	link_changes;
	__u64	mtu_changes;
	__u64	stalls;
	__u64	unclassified_bound_ns;
	__u64	unclassified_max_wait_ns;
};

/**
 * struct tc_arbtable_class_xstats - class statistics (TCA_STATS_APP)
 * @type: TCA_ARBTABLE_XSTATS_CLASS
 * @broken: auto mode: 1 when the device's frames grew past what the
 *	admission assumed and @guaranteed_rate or @guaranteed_bound_ns no
 *	longer meets what the class asked
 * @high_slots: bitmask of the HIGH slots that name the class
 * @low_slots: bitmask of the LOW slots that name the class
 * @high_weight: sum of the weights of its HIGH slots
 * @low_weight: sum of the weights of its LOW slots
 * @distance: auto mode: distance between its slots, else 0
 * @reserved_weight: auto mode: weight units reserved
 * @reserved_rate: auto mode: the rate asked (TCA_ARBTABLE_C_RATE), bytes/s
 * @guaranteed_rate: auto mode: bytes/s its reserved weight guarantees
 *	(at least @reserved_rate: weights round up, a latency may raise them)
 * @guaranteed_bound_ns: auto mode: head-of-line bound that holds
 *	wherever the allocator places the class's slots, ns
 * @current_bound_ns: auto mode: bound for the slots as placed now, ns
 * @max_hol_ns: longest head-of-line wait measured, ns
 * @throttled: times its ceil made it ineligible
 * @stalls: times its child held packets but gave none (a shaped child)
 */
struct tc_arbtable_class_xstats {
	__u32	type;
	__u32	broken;
	__u64	high_slots;
	__u64	low_slots;
	__u32	high_weight;
	__u32	low_weight;
	__u32	distance;
	__u32	reserved_weight;
	__u64	reserved_rate;
	__u64	guaranteed_rate;
	__u64	guaranteed_bound_ns;
	__u64	current_bound_ns;
	__u64	max_hol_ns;
	__u64	throttled;
	__u64	stalls;
};

#endif /* _UAPI_LINUX_PKT_SCHED_ARBTABLE_H */
