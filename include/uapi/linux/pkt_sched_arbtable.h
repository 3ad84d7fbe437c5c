/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
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
#define TC_ARBTABLE_MAX_CLASSES	64
#define TC_ARBTABLE_PRIO_BANDS	16	/* priomap entries, skb->priority & 15 */
#define TC_ARBTABLE_WEIGHT_MAX	255
#define TC_ARBTABLE_WEIGHT_UNIT	64	/* bytes per weight unit */
#define TC_ARBTABLE_HIGHLIMIT_MAX	255	/* 255 = unlimited */
#define TC_ARBTABLE_HIGHLIMIT_UNIT	4096

enum tc_arbtable_table {
	TC_ARBTABLE_HIGH,
	TC_ARBTABLE_LOW,
	TC_ARBTABLE_NTABLES,
};

enum tc_arbtable_accounting {
	TC_ARBTABLE_ACCT_DEFICIT,	/* BXIv3 Algorithm 2: carry debt */
	TC_ARBTABLE_ACCT_IBA,		/* IBA-literal: overshoot forgiven */
	__TC_ARBTABLE_ACCT_MAX,
};

enum tc_arbtable_mode {
	TC_ARBTABLE_MODE_MANUAL,	/* administrator programs the slots */
	TC_ARBTABLE_MODE_AUTO,		/* allocator admits classes */
	__TC_ARBTABLE_MODE_MAX,
};

/* One slot of a manual table (TCA_ARBTABLE_ENTRY inside HIGH/LOW). The
 * fields are u32 so that out-of-range values reach the kernel and are
 * rejected with a message instead of being truncated by the sender.
 */
struct tc_arbtable_entry {
	__u32	slot;		/* 0..63 */
	__u32	minor;		/* class minor id, 1..0xffff */
	__u32	weight;		/* 0..255, 0 = null slot */
};

/* Largest qdisc burst and class cburst, bytes (keeps the token
 * arithmetic in 64 bits)
 */
#define TC_ARBTABLE_BURST_MAX	(1U << 28)

/* Qdisc options */
enum {
	TCA_ARBTABLE_UNSPEC,
	TCA_ARBTABLE_MODE,		/* u8, enum tc_arbtable_mode; create only */
	TCA_ARBTABLE_RATE,		/* u64 bytes/s, 0 = link speed */
	TCA_ARBTABLE_HIGHLIMIT,		/* u32, 0..255 */
	TCA_ARBTABLE_ACCOUNTING,	/* u32, enum tc_arbtable_accounting */
	TCA_ARBTABLE_DEFAULT,		/* u32 class minor, 0 = none */
	TCA_ARBTABLE_PRIOMAP,		/* nested: TC_ARBTABLE_PRIO_BANDS x u32 */
	TCA_ARBTABLE_MTU,		/* u32 bytes, for bounds and the low share */
	TCA_ARBTABLE_MAXWEIGHT,		/* u32, 1..255, auto mode slot weight cap */
	TCA_ARBTABLE_HIGH,		/* nested: TCA_ARBTABLE_ENTRY..., replaces */
	TCA_ARBTABLE_LOW,		/* nested: TCA_ARBTABLE_ENTRY..., replaces */
	TCA_ARBTABLE_PAD,
	TCA_ARBTABLE_BURST,		/* u32 bytes the rate may send back to
					 * back, 0 = max(2 * mtu, 10 ms of rate)
					 */
	__TCA_ARBTABLE_MAX,
};

#define TCA_ARBTABLE_MAX (__TCA_ARBTABLE_MAX - 1)

/* Inside TCA_ARBTABLE_HIGH / TCA_ARBTABLE_LOW */
enum {
	TCA_ARBTABLE_TBL_UNSPEC,
	TCA_ARBTABLE_ENTRY,		/* struct tc_arbtable_entry */
	__TCA_ARBTABLE_TBL_MAX,
};

#define TCA_ARBTABLE_TBL_MAX (__TCA_ARBTABLE_TBL_MAX - 1)

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
	TCA_ARBTABLE_C_STRICT,		/* u8 0/1: served before both tables */
	TCA_ARBTABLE_C_CEIL,		/* u64 bytes/s, per-class limit */
	TCA_ARBTABLE_C_RATE,		/* u64 bytes/s, auto mode reservation */
	TCA_ARBTABLE_C_LATENCY,		/* u64 ns, auto mode bound */
	TCA_ARBTABLE_C_DISTANCE,	/* u32 1..64, auto mode */
	TCA_ARBTABLE_C_SHARE,		/* u32 1..255, auto mode, LOW table */
	TCA_ARBTABLE_C_PAD,
	TCA_ARBTABLE_C_CBURST,		/* u32 bytes the ceil may send back to
					 * back, 0 = max(2 * mtu, 10 ms of ceil)
					 */
	__TCA_ARBTABLE_C_MAX,
};

#define TCA_ARBTABLE_C_MAX (__TCA_ARBTABLE_C_MAX - 1)

/* Qdisc xstats (gnet app stats). */
struct tc_arbtable_xstats {
	__u64	unclassified_pkts;	/* sent from the internal BE queue */
	__u64	unclassified_drops;
	__u64	swaps;			/* allocator defragmentation swaps */
	__u64	throttled;		/* times a class ceil throttled a class */
	__u32	unclassified_qlen;
	__u32	high_used;		/* non-null slots */
	__u32	low_used;
	__u32	high_cur;		/* slot pointers */
	__u32	low_cur;
	__s32	hp_counter;		/* bytes left before a low turn */
	__u32	nclasses;
	__u32	pad;
	__s32	high_credit[TC_ARBTABLE_SLOTS];	/* bytes, per slot */
	__s32	low_credit[TC_ARBTABLE_SLOTS];
	__u64	gso_split;		/* GSO skbs longer than mtu, segmented */
	__u64	gso_segs;		/* segments of those queued */
	__u64	oversize_drops;		/* frames longer than mtu, dropped */
};

/* Class xstats */
struct tc_arbtable_class_xstats {
	__u64	high_slots;		/* bitmask of HIGH slots naming it */
	__u64	low_slots;
	__u32	high_weight;		/* sum of weights over its slots */
	__u32	low_weight;
	__u32	distance;		/* auto mode: effective distance, else 0 */
	__u32	index;			/* internal class index 0..63 */
	__u64	rate;			/* auto: reserved bytes/s */
	__u64	guaranteed_bound_ns;	/* auto: placement-independent bound */
	__u64	current_bound_ns;	/* auto: bound for the current placement */
	__u64	max_hol_ns;		/* measured max head-of-line wait */
	__u64	throttled;		/* times ceil made it ineligible */
	__u64	guaranteed_rate;	/* auto: bytes/s its reserved weight
					 * guarantees (>= rate: rounding,
					 * latency boost)
					 */
	__u32	reserved_weight;	/* auto: weight units reserved */
	__u32	pad;
};

#endif /* _UAPI_LINUX_PKT_SCHED_ARBTABLE_H */
