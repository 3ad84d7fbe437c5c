/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libarbtable: configure and read the sch_arbtable qdisc (InfiniBand-style
 * VL arbitration tables on Ethernet) from C.
 *
 * The library speaks rtnetlink through libnl-3 / libnl-route-3. It needs
 * CAP_NET_ADMIN for the calls that change the configuration; reading
 * works for every user.
 *
 * Conventions
 *   - Rates are bytes per second, latencies and bounds nanoseconds.
 *   - Handles and class ids are the kernel's 32-bit form: major << 16 |
 *     minor, so tc's "1:10" is 0x00010010 (ARBTABLE_CLASSID(1, 0x10)).
 *   - Every call that can fail returns 0 (the arbtable_state_*() record
 *     getters: the bytes they filled) or a negative errno. The text
 *     that explains it, the kernel's extended-ack message when the kernel
 *     refused, is then in arbtable_errmsg(); arbtable_err_from_kernel()
 *     says who refused. Errnos the library itself returns:
 *       -ENODEV       the network device does not exist
 *       -EMEDIUMTYPE  the device has no arbtable qdisc (at that handle)
 *       -EINVAL       a bad argument (NULL pointer, slot out of range...)
 *       -E2BIG        options from a newer header this library does not know
 *       -ENOMEM       out of memory
 *       -EIO          the netlink conversation failed
 *     Any other value came from the kernel.
 *   - A handle is not thread safe; use one per thread.
 *   - Structs are passed with the caller's sizeof and only ever grow at
 *     their end (see "Extensible structs" below), and the state of a read
 *     is opaque, so programs built against this header keep working with
 *     later releases of the library.
 *
 * Link with `pkg-config --libs libarbtable`.
 */
#ifndef ARBTABLE_ARBTABLE_H
#define ARBTABLE_ARBTABLE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ARBTABLE_SLOTS		64	/* slots per table */
/* Classes one read holds (this library's arrays, not a kernel limit the
 * netlink API states; sch_arbtable admits as many today)
 */
#define ARBTABLE_MAX_CLASSES	64
#define ARBTABLE_PRIO_BANDS	16	/* priomap entries */
#define ARBTABLE_WEIGHT_MAX	255	/* slot weight, 64-byte units */
#define ARBTABLE_WEIGHT_UNIT	64

#define ARBTABLE_CLASSID(maj, min) \
	((((uint32_t)(maj) & 0xffffu) << 16) | ((uint32_t)(min) & 0xffffu))
#define ARBTABLE_MAJOR(id)	(((uint32_t)(id) >> 16) & 0xffffu)
#define ARBTABLE_MINOR(id)	((uint32_t)(id) & 0xffffu)

enum arbtable_mode {
	ARBTABLE_MODE_MANUAL = 0,	/* the administrator programs slots */
	ARBTABLE_MODE_AUTO = 1,		/* the in-kernel allocator does */
};

enum arbtable_accounting {
	ARBTABLE_ACCT_DEFICIT = 0,	/* overshoot carried as debt */
	ARBTABLE_ACCT_IBA = 1,		/* overshoot forgiven (IBA literal) */
};

enum arbtable_table {
	ARBTABLE_HIGH = 0,
	ARBTABLE_LOW = 1,
	ARBTABLE_NTABLES = 2,
};

/* ------------------------------------------------------------ ABI */

/*
 * Extensible structs. Every struct below that crosses the library's ABI
 * is passed with its size, the caller's sizeof, as openat2() and clone3()
 * take theirs, so that a struct can grow without breaking binaries built
 * against an older header:
 *   - fields are only ever appended, never moved, resized or removed;
 *   - ARBTABLE_*_SIZE_VER0 is the size of the first release; a size below
 *     it is a bug (often sizeof a pointer) and fails with -EINVAL;
 *     ARBTABLE_*_SIZE_VER1, VER2, ... the size after each set of fields
 *     appended, so a caller compares what a getter returned with them;
 *   - options the caller gives (arbtable_qdisc_opts, arbtable_class_opts
 *     as arguments): a struct larger than this library knows is accepted
 *     when the unknown tail is all zero (fields the caller left unset) and
 *     refused with -E2BIG otherwise, since the library cannot do what
 *     they ask; a smaller one from an older caller reads as if the missing
 *     fields were zero. Reserved fields must be zero (-EINVAL).
 *   - records the library fills (arbtable_state_*()): the library writes
 *     at most the caller's size, the fields both know, zeroes the rest of
 *     a larger caller's struct and returns the number of bytes it filled,
 *     so a caller can tell whether a field it knows was filled.
 * struct arbtable_stats and struct arbtable_slot are embedded in the
 * records and are frozen: they never change.
 * The state of a read is opaque (arbtable_state_new()) so that it can
 * hold whatever a newer kernel reports.
 */

/* gnet statistics of the qdisc or of one class. Frozen. */
struct arbtable_stats {
	uint64_t	bytes;
	uint64_t	packets;
	uint32_t	drops;
	uint32_t	overlimits;
	uint32_t	requeues;
	uint32_t	backlog;	/* bytes queued */
	uint32_t	qlen;		/* packets queued */
	int32_t		has_rate_est;	/* the kernel's rate estimator runs */
	uint64_t	est_bps;	/* estimator, bytes/s */
	uint64_t	est_pps;
};

/* One slot of a table; minor 0 or weight 0 = free (null) slot. Frozen. */
struct arbtable_slot {
	uint32_t	minor;
	uint32_t	weight;		/* 64-byte units, 1..255 */
};

/* ------------------------------------------------------------ qdisc */

/* Bits of arbtable_qdisc_opts.set: which fields are sent. Fields whose
 * bit is clear are left out of the request (kernel default on create,
 * unchanged on change).
 */
#define ARBTABLE_Q_MODE		(1u << 0)
#define ARBTABLE_Q_RATE		(1u << 1)
#define ARBTABLE_Q_HIGHLIMIT	(1u << 2)
#define ARBTABLE_Q_ACCOUNTING	(1u << 3)
#define ARBTABLE_Q_MTU		(1u << 4)
#define ARBTABLE_Q_MAXWEIGHT	(1u << 5)
#define ARBTABLE_Q_DEFAULT	(1u << 6)
#define ARBTABLE_Q_BURST	(1u << 7)
#define ARBTABLE_Q_PRIO_CLASSID	(1u << 8)
#define ARBTABLE_Q_CLASSIFY_FOREIGN (1u << 9)
#define ARBTABLE_Q_LOCKLESS	(1u << 10)

/* Extensible (see above): new options are appended. */
struct arbtable_qdisc_opts {
	uint32_t		set;		/* ARBTABLE_Q_* */
	uint32_t		mode;		/* enum arbtable_mode; fixed
						 * once created
						 */
	uint64_t		rate;		/* bytes/s; 0 = link speed */
	uint32_t		highlimit;	/* 4096-byte blocks, 0..255 */
	uint32_t		accounting;	/* enum arbtable_accounting */
	uint32_t		mtu;		/* bytes */
	uint32_t		maxweight;	/* auto mode slot weight cap */
	uint32_t		default_minor;	/* unclassified traffic, 0 = none */
	uint32_t		burst;		/* bytes the rate may send back to
						 * back; 0 = the kernel's default
						 */
	/* 1 (kernel default): skb->priority naming a class selects it;
	 * 0: it does not (tc's noprioclassid)
	 */
	uint32_t		prio_classid;
	/* 1 (kernel default): packets not routed in the device's netns
	 * are classified; 0: they go to the default class, unread (tc's
	 * noclassifyforeign; closes a macvlan/ipvlan tenant's SO_MARK and
	 * SO_PRIORITY)
	 */
	uint32_t		classify_foreign;
	/* 0 (default): the locked mode, any child qdisc; 1: a lockless
	 * root (one ring per class, no child qdiscs). Fixed once created
	 * (tc's lockless and locked)
	 */
	uint32_t		lockless;
};
#define ARBTABLE_QDISC_OPTS_SIZE_VER0	40	/* up to burst */
#define ARBTABLE_QDISC_OPTS_SIZE_VER1	48	/* up to classify_foreign */
#define ARBTABLE_QDISC_OPTS_SIZE_VER2	56	/* up to lockless, with the
						 * struct's tail padding
						 */

/* ------------------------------------------------------------ classes */

/* Bits of arbtable_class_opts.set */
#define ARBTABLE_C_RATE		(1u << 0)
#define ARBTABLE_C_LATENCY	(1u << 1)
#define ARBTABLE_C_DISTANCE	(1u << 2)
#define ARBTABLE_C_SHARE	(1u << 3)
#define ARBTABLE_C_CEIL		(1u << 4)
#define ARBTABLE_C_STRICT	(1u << 5)
#define ARBTABLE_C_CBURST	(1u << 6)

/*
 * Auto mode: a guaranteed class gives rate and one of latency_ns or
 * distance (HIGH table); a best-effort class gives share and optionally
 * distance (LOW table). ceil limits any class; strict serves it before
 * both tables. The kernel checks every combination and says why it
 * refuses one. Extensible (see above): new options are appended.
 */
struct arbtable_class_opts {
	uint32_t	set;		/* ARBTABLE_C_* */
	uint32_t	distance;	/* slot spacing, power of two 1..64 */
	uint64_t	rate;		/* bytes/s to reserve in HIGH */
	uint64_t	latency_ns;	/* head-of-line wait bound */
	uint64_t	ceil;		/* bytes/s, 0 = none */
	uint32_t	share;		/* LOW table weight, 1..255 */
	uint32_t	strict;		/* 0 or 1 */
	uint32_t	cburst;		/* ceil bucket depth, bytes, 0 = the
					 * kernel's default
					 */
	uint32_t	reserved;	/* 0: no hole a later field could fall
					 * into unseen
					 */
};
#define ARBTABLE_CLASS_OPTS_SIZE_VER0	48	/* up to reserved */

/* ------------------------------------------------------------ a read */

/* The qdisc of a read. Extensible (see above): new fields are appended. */
struct arbtable_qdisc_info {
	int32_t		ifindex;
	char		ifname[16];
	uint32_t	handle;		/* of the arbtable qdisc */
	uint32_t	parent;		/* 0xffffffff = root */
	uint32_t	nclasses;	/* arbtable_state_class() 0..nclasses-1 */
	uint64_t	timestamp_ns;	/* CLOCK_MONOTONIC at the read */
	uint32_t	priomap[ARBTABLE_PRIO_BANDS];
	struct arbtable_slot table[ARBTABLE_NTABLES][ARBTABLE_SLOTS];

	struct arbtable_stats stats;
	int32_t		has_xstats;
	/* qdisc xstats */
	uint32_t	unclassified_qlen;
	uint64_t	unclassified_pkts;
	uint64_t	unclassified_drops;
	uint64_t	swaps;		/* allocator defragmentation swaps */
	uint64_t	throttled;
	uint32_t	used[ARBTABLE_NTABLES];	/* non-null slots */
	/* no longer reported, always 0 (ARBTABLE_QX_CURSOR and
	 * ARBTABLE_QX_CREDIT are never set): the arbiter's position and
	 * the slots' credits change with every packet; the kernel's
	 * arbtable_dequeue tracepoint carries them per packet
	 */
	uint32_t	cur[ARBTABLE_NTABLES];
	int32_t		hp_counter;
	int32_t		credit[ARBTABLE_NTABLES][ARBTABLE_SLOTS];
	uint32_t	reserved;	/* 0 */

	/* appended after the first release (ARBTABLE_QDISC_INFO_SIZE_VER1) */
	int32_t		mtu_follows_device;	/* the mtu was not given and
						 * follows the device's
						 */
	uint32_t	xstats_fields;	/* ARBTABLE_QX_*: which of the xstats
					 * below the kernel reported
					 */
	uint64_t	gso_split;	/* GSO packets split at enqueue */
	uint64_t	gso_segs;	/* segments of those packets */
	uint64_t	oversize_drops;	/* longer than the mtu, not split */
	uint64_t	capacity;	/* bytes/s the tables share */
	uint64_t	link_rate;	/* link speed last read, bytes/s, 0 =
					 * unknown
					 */
	uint64_t	link_changes;	/* link speed changes seen */
	uint64_t	mtu_changes;	/* times the mtu followed the device */
	uint64_t	stalls;		/* a child held packets, gave none */
	uint32_t	broken;		/* classes whose guarantee no longer
					 * holds (the device's frames grew)
					 */
	uint32_t	reserved1;	/* 0 */

	/* appended in the second (ARBTABLE_QDISC_INFO_SIZE_VER2) */
	uint64_t	unclassified_bound_ns;	/* the unclassified queue's
						 * head-of-line bound, 0 = none
						 */
	uint64_t	unclassified_max_wait_ns; /* its longest wait */
};
#define ARBTABLE_QDISC_INFO_SIZE_VER0	1760	/* up to reserved */
#define ARBTABLE_QDISC_INFO_SIZE_VER1	1840	/* up to reserved1 */
#define ARBTABLE_QDISC_INFO_SIZE_VER2	1856

/*
 * Bits of arbtable_qdisc_info.xstats_fields: the kernel reported the
 * field (shorter xstats lack the fields at their end; a field missing
 * reads as 0 and its bit is clear). The xstats are read in the layout of
 * the sch_arbtable of the same release: the 0.x modules before it laid
 * them out differently (with the arbiter's cursor and credits) and are
 * not read correctly.
 */
#define ARBTABLE_QX_GSO_SPLIT		(1u << 0)
#define ARBTABLE_QX_GSO_SEGS		(1u << 1)
#define ARBTABLE_QX_OVERSIZE_DROPS	(1u << 2)
#define ARBTABLE_QX_CAPACITY		(1u << 3)
#define ARBTABLE_QX_LINK_RATE		(1u << 4)
#define ARBTABLE_QX_LINK_CHANGES	(1u << 5)
#define ARBTABLE_QX_MTU_CHANGES		(1u << 6)
#define ARBTABLE_QX_BROKEN		(1u << 7)
#define ARBTABLE_QX_STALLS		(1u << 8)
#define ARBTABLE_QX_UNCL_BOUND		(1u << 11)
#define ARBTABLE_QX_UNCL_MAX_WAIT	(1u << 12)
/* never set: the kernel no longer reports cur and hp_counter, credit */
#define ARBTABLE_QX_CURSOR		(1u << 9)
#define ARBTABLE_QX_CREDIT		(1u << 10)

/* One class of a read. Extensible (see above): new fields are appended. */
struct arbtable_class_info {
	uint32_t	classid;
	uint32_t	leaf;		/* handle of the class's child qdisc */
	struct arbtable_stats stats;
	int32_t		has_xstats;
	/* xstats */
	uint32_t	distance;	/* auto: effective distance, else 0 */
	uint64_t	slots[ARBTABLE_NTABLES];	/* bitmask of its slots */
	uint32_t	weight[ARBTABLE_NTABLES];	/* sum over its slots */
	uint32_t	index;		/* no longer reported, always 0
					 * (ARBTABLE_CX_INDEX never set)
					 */
	/* auto: the weight units reserved and the rate they guarantee
	 * (>= reserved_rate: rounding up to whole units, and the weight a
	 * latency asks for beyond its rate, see tc-arbtable(8))
	 */
	uint32_t	reserved_weight;
	uint64_t	reserved_rate;	/* auto: reserved bytes/s */
	uint64_t	guaranteed_rate;	/* bytes/s */
	uint64_t	guaranteed_bound_ns;	/* auto: placement independent */
	uint64_t	current_bound_ns;	/* auto: current placement */
	uint64_t	max_hol_ns;	/* measured max head-of-line wait */
	uint64_t	throttled;	/* times the ceil made it wait */

	/* appended after the first release (ARBTABLE_CLASS_INFO_SIZE_VER1) */
	uint32_t	xstats_fields;	/* ARBTABLE_CX_*, as the qdisc's */
	uint32_t	broken;		/* auto: 1 when its reserved rate or
					 * latency no longer holds (the
					 * device's frames grew)
					 */
	uint64_t	stalls;		/* its child held packets, gave none */
};
#define ARBTABLE_CLASS_INFO_SIZE_VER0	152	/* up to throttled */
#define ARBTABLE_CLASS_INFO_SIZE_VER1	168	/* up to stalls */

/* Bits of arbtable_class_info.xstats_fields */
#define ARBTABLE_CX_BROKEN		(1u << 0)
#define ARBTABLE_CX_STALLS		(1u << 1)
/* never set: the kernel no longer reports its internal class index */
#define ARBTABLE_CX_INDEX		(1u << 2)

/* ------------------------------------------------------------ calls */

struct arbtable;
/* What one arbtable_read() saw; opaque, any number of reads. */
struct arbtable_state;

/* Open a handle (two rtnetlink sockets). NULL with errno set on failure:
 * what socket() or bind() said (EPERM, EMFILE, ...) or ENOMEM.
 */
struct arbtable *arbtable_open(void);
void arbtable_close(struct arbtable *h);

/* Text for the last failure of a call on @h: the kernel's extack message
 * (or, without one, the kernel's errno spelled out) when the kernel
 * refused, else the library's own explanation. "" after a success.
 */
const char *arbtable_errmsg(const struct arbtable *h);
/* 1 if the last failure was the kernel refusing the request, else 0. */
int arbtable_err_from_kernel(const struct arbtable *h);

/*
 * The calls that take options take the caller's sizeof of them:
 *	arbtable_admit(h, "eth0", ARBTABLE_CLASSID(0, 0x10), &o, sizeof(o));
 * -EINVAL for a size below the struct's SIZE_VER0, -E2BIG for options
 * this library does not know (see "Extensible structs" above).
 */

/* Create the root arbtable qdisc @handle (e.g. ARBTABLE_CLASSID(1, 0)) on
 * @ifname. @opts may be NULL (kernel defaults: auto mode at link speed).
 */
int arbtable_qdisc_create(struct arbtable *h, const char *ifname,
			  uint32_t handle,
			  const struct arbtable_qdisc_opts *opts,
			  size_t opts_size);
/* Change options of the device's arbtable qdisc. */
int arbtable_qdisc_change(struct arbtable *h, const char *ifname,
			  const struct arbtable_qdisc_opts *opts,
			  size_t opts_size);
/* Delete the device's arbtable qdisc with all its classes. */
int arbtable_qdisc_delete(struct arbtable *h, const char *ifname);

/*
 * Create class @classid and, in auto mode, admit it (reserve its slots).
 * A @classid whose major is 0 takes the handle of the device's arbtable
 * qdisc. Rejections (not enough capacity, bound unreachable, table full,
 * ...) return the kernel's errno with its reason in arbtable_errmsg().
 */
int arbtable_admit(struct arbtable *h, const char *ifname, uint32_t classid,
		   const struct arbtable_class_opts *opts, size_t opts_size);
/* Change an existing class atomically: on refusal the old reservation
 * and slots stay. Options not in opts->set keep their value.
 */
int arbtable_change(struct arbtable *h, const char *ifname, uint32_t classid,
		    const struct arbtable_class_opts *opts, size_t opts_size);
/* Delete the class; in auto mode its slots are freed and defragmented. */
int arbtable_release(struct arbtable *h, const char *ifname,
		     uint32_t classid);

/* Replace the priomap: @priomap[p] is the class minor (hex in tc, 0 =
 * none) that packets of skb->priority p & 15 go to when no filter and no
 * priority naming a class took them. Any mode. (A fixed array: the 16
 * bands are the kernel's TC_PRIO_MAX + 1.)
 */
int arbtable_set_priomap(struct arbtable *h, const char *ifname,
			 const uint32_t priomap[ARBTABLE_PRIO_BANDS]);

/* Manual mode: replace table @table with @slots (ARBTABLE_SLOTS entries;
 * a slot with minor 0 or weight 0 is null). The classes must exist.
 */
int arbtable_set_table(struct arbtable *h, const char *ifname,
		       enum arbtable_table table,
		       const struct arbtable_slot slots[ARBTABLE_SLOTS]);

/* A state to read into; NULL with errno ENOMEM. Free with
 * arbtable_state_free() (NULL is fine).
 */
struct arbtable_state *arbtable_state_new(void);
void arbtable_state_free(struct arbtable_state *st);

/* Read the arbtable qdisc of @ifname (the root one if there are several)
 * into @st: options, both tables, per-class options and statistics.
 */
int arbtable_read(struct arbtable *h, const char *ifname,
		  struct arbtable_state *st);

/*
 * What a read found, copied into the caller's records (see "Extensible
 * structs" above): each returns the bytes it filled (> 0) or -EINVAL
 * (no state, a size below SIZE_VER0, a class index >= nclasses).
 *	struct arbtable_qdisc_info q;
 *	arbtable_state_qdisc(st, &q, sizeof(q));
 * The options are those the kernel reported, .set says which were set:
 * a rate that is the link speed (rate 0) and an mtu that follows the
 * device are reported with their bits clear, so that the options read,
 * given back to arbtable_qdisc_change(), change nothing.
 */
int arbtable_state_qdisc(const struct arbtable_state *st,
			 struct arbtable_qdisc_info *qi, size_t size);
int arbtable_state_qdisc_opts(const struct arbtable_state *st,
			      struct arbtable_qdisc_opts *opts, size_t size);
/* Classes by index, 0..nclasses-1, in class id order. */
int arbtable_state_class(const struct arbtable_state *st, unsigned int idx,
			 struct arbtable_class_info *ci, size_t size);
int arbtable_state_class_opts(const struct arbtable_state *st,
			      unsigned int idx,
			      struct arbtable_class_opts *opts, size_t size);
/* The index of the class with @classid (or with minor @classid when its
 * major is 0), -ENOENT if none, -EINVAL without a state.
 */
int arbtable_state_find_class(const struct arbtable_state *st,
			      uint32_t classid);

/* ------------------------------------------------------------ sizing */

/*
 * What an admission costs and whether a set of them fits, decided in
 * userspace by the module's own code (its sizing, arb_admit_prepare(),
 * and its allocator), without a qdisc: for schedulers and capacity
 * planners that must count as the kernel admits (Theorem 4: on the
 * allocator's normalized tables a request at a power-of-two distance is
 * admitted if and only if its sizing succeeds and its slots are free).
 * Added in LIBARBTABLE_0.2.
 */

/* The qdisc parameters a cost depends on. Extensible (see above). */
struct arbtable_cost_params {
	uint64_t	rate;		/* qdisc rate C, bytes/s */
	uint64_t	strict_ceil;	/* bytes/s, 0 = no strict class */
	uint32_t	mtu;		/* bytes */
	uint32_t	maxweight;	/* 1..255 */
	uint32_t	highlimit;	/* 4096-byte blocks, 0..255 */
	uint32_t	strict_cburst;	/* bytes, 0 = the kernel's default */
	uint32_t	reserved;	/* 0 */
	uint32_t	reserved1;	/* 0 */
};
#define ARBTABLE_COST_PARAMS_SIZE_VER0	40

/* One request's cost. A record the library fills (see above). */
struct arbtable_cost {
	uint32_t	table;		/* enum arbtable_table */
	uint32_t	distance;	/* effective, power of two */
	uint32_t	slots;		/* 64 / distance */
	uint32_t	units;		/* weight units reserved */
	uint64_t	units_rate;	/* HIGH: the rate they guarantee, B/s */
	uint64_t	bound_ns;	/* HIGH: guaranteed HOL-wait bound,
					 * placement independent
					 */
};
#define ARBTABLE_COST_SIZE_VER0		32

/* C_high, the rate the HIGH table is guaranteed, bytes/s; 0 for bad
 * parameters.
 */
uint64_t arbtable_cost_high_capacity(const struct arbtable_cost_params *p,
				     size_t size);
/* The rate @units HIGH weight units guarantee: units * C_high / (64 *
 * maxweight), bytes/s; 0 for bad parameters.
 */
uint64_t arbtable_cost_units_rate(const struct arbtable_cost_params *p,
				  size_t size, uint32_t units);
/* Size a request (rate with latency or distance, or share with distance,
 * in @o; other options are refused): bytes filled in @c, or -EINVAL with
 * the module's reason in @why (what the kernel would say on any table).
 */
int arbtable_cost_request(const struct arbtable_cost_params *p, size_t size,
			  const struct arbtable_class_opts *o,
			  struct arbtable_cost *c, size_t c_size,
			  char *why, size_t len);

/* A plan: both tables of one qdisc as the core's allocator keeps them,
 * empty at first; class indexes 0..63. NULL with errno set on failure.
 */
struct arbtable_plan;
struct arbtable_plan *arbtable_plan_new(uint32_t maxweight);
void arbtable_plan_free(struct arbtable_plan *pl);
/* Admit class @idx as the module would: bytes filled in @c, -ENOSPC
 * when the table cannot hold it, -EINVAL for a request no table can,
 * -EEXIST for an index in use; the reason in @why.
 */
int arbtable_plan_admit(struct arbtable_plan *pl,
			const struct arbtable_cost_params *p, size_t size,
			uint32_t idx, const struct arbtable_class_opts *o,
			struct arbtable_cost *c, size_t c_size,
			char *why, size_t len);
/* Release class @idx (and defragment, as the module does); -ENOENT. */
int arbtable_plan_release(struct arbtable_plan *pl, uint32_t idx);
/* Free slots of @table. */
int arbtable_plan_free_slots(const struct arbtable_plan *pl,
			     enum arbtable_table table);
/* 0 when the allocator's invariants hold (normalized tables), else
 * -EUCLEAN.
 */
int arbtable_plan_check(const struct arbtable_plan *pl);

/* Library version string, e.g. "0.1.0". */
const char *arbtable_version(void);

#ifdef __cplusplus
}
#endif

#endif /* ARBTABLE_ARBTABLE_H */
