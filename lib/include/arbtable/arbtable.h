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
 *   - Every call that can fail returns 0 or a negative errno. The text
 *     that explains it, the kernel's extended-ack message when the kernel
 *     refused, is then in arbtable_errmsg(); arbtable_err_from_kernel()
 *     says who refused. Errnos the library itself returns:
 *       -ENODEV       the network device does not exist
 *       -EMEDIUMTYPE  the device has no arbtable qdisc (at that handle)
 *       -EINVAL       a bad argument (NULL pointer, slot out of range...)
 *       -ENOMEM       out of memory
 *       -EIO          the netlink conversation failed
 *     Any other value came from the kernel.
 *   - A handle is not thread safe; use one per thread.
 *
 * Link with `pkg-config --libs libarbtable`.
 */
#ifndef ARBTABLE_ARBTABLE_H
#define ARBTABLE_ARBTABLE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ARBTABLE_SLOTS		64	/* slots per table */
#define ARBTABLE_MAX_CLASSES	64	/* classes per qdisc */
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

struct arbtable_qdisc_opts {
	unsigned int		set;		/* ARBTABLE_Q_* */
	enum arbtable_mode	mode;		/* fixed once created */
	uint64_t		rate;		/* bytes/s; 0 = link speed */
	uint32_t		highlimit;	/* 4096-byte blocks, 0..255 */
	enum arbtable_accounting accounting;
	uint32_t		mtu;		/* bytes */
	uint32_t		maxweight;	/* auto mode slot weight cap */
	uint32_t		default_minor;	/* unclassified traffic, 0 = none */
	uint32_t		burst;		/* bytes the rate may send back to
						 * back; 0 = the kernel's default
						 */
};

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
 * refuses one.
 */
struct arbtable_class_opts {
	unsigned int	set;		/* ARBTABLE_C_* */
	uint64_t	rate;		/* bytes/s to reserve in HIGH */
	uint64_t	latency_ns;	/* head-of-line wait bound */
	uint32_t	distance;	/* slot spacing, power of two 1..64 */
	uint32_t	share;		/* LOW table weight, 1..255 */
	uint64_t	ceil;		/* bytes/s, 0 = none */
	int		strict;		/* 0 or 1 */
	uint32_t	cburst;		/* ceil bucket depth, bytes, 0 = the
					 * kernel's default
					 */
};

/* gnet statistics of the qdisc or of one class */
struct arbtable_stats {
	uint64_t	bytes;
	uint64_t	packets;
	uint32_t	drops;
	uint32_t	overlimits;
	uint32_t	requeues;
	uint32_t	backlog;	/* bytes queued */
	uint32_t	qlen;		/* packets queued */
	int		has_rate_est;	/* the kernel's rate estimator runs */
	uint64_t	est_bps;	/* estimator, bytes/s */
	uint64_t	est_pps;
};

/* One slot of a table; minor 0 or weight 0 = free (null) slot. */
struct arbtable_slot {
	uint32_t	minor;
	uint32_t	weight;		/* 64-byte units, 1..255 */
};

struct arbtable_class_state {
	uint32_t	classid;
	uint32_t	leaf;		/* handle of the class's child qdisc */
	/* options as the kernel reports them; .set says which are present */
	struct arbtable_class_opts opts;
	struct arbtable_stats stats;
	int		has_xstats;
	/* xstats */
	uint64_t	slots[ARBTABLE_NTABLES];	/* bitmask of its slots */
	uint32_t	weight[ARBTABLE_NTABLES];	/* sum over its slots */
	uint32_t	distance;	/* auto: effective distance, else 0 */
	uint32_t	index;		/* kernel class index */
	uint64_t	reserved_rate;	/* auto: reserved bytes/s */
	uint64_t	guaranteed_bound_ns;	/* auto: placement independent */
	uint64_t	current_bound_ns;	/* auto: current placement */
	uint64_t	max_hol_ns;	/* measured max head-of-line wait */
	uint64_t	throttled;	/* times the ceil made it wait */
	/* auto: the weight units reserved and the rate they guarantee
	 * (>= reserved_rate: rounding up to whole units, and the weight a
	 * latency asks for beyond its rate, see tc-arbtable(8))
	 */
	uint32_t	reserved_weight;
	uint64_t	guaranteed_rate;	/* bytes/s */
};

struct arbtable_state {
	int		ifindex;
	char		ifname[16];
	uint32_t	handle;		/* of the arbtable qdisc */
	uint32_t	parent;		/* 0xffffffff = root */
	uint64_t	timestamp_ns;	/* CLOCK_MONOTONIC at the read */

	/* options; .set says which the kernel reported */
	struct arbtable_qdisc_opts opts;
	uint32_t	priomap[ARBTABLE_PRIO_BANDS];
	struct arbtable_slot table[ARBTABLE_NTABLES][ARBTABLE_SLOTS];

	struct arbtable_stats stats;
	int		has_xstats;
	/* qdisc xstats */
	uint64_t	unclassified_pkts;
	uint64_t	unclassified_drops;
	uint32_t	unclassified_qlen;
	uint64_t	swaps;		/* allocator defragmentation swaps */
	uint64_t	throttled;
	uint32_t	used[ARBTABLE_NTABLES];	/* non-null slots */
	uint32_t	cur[ARBTABLE_NTABLES];	/* slot pointers */
	int32_t		hp_counter;
	int32_t		credit[ARBTABLE_NTABLES][ARBTABLE_SLOTS];

	unsigned int	nclasses;
	struct arbtable_class_state classes[ARBTABLE_MAX_CLASSES];
};

/* ------------------------------------------------------------ calls */

struct arbtable;

/* Open a handle (two rtnetlink sockets). NULL with errno set on failure. */
struct arbtable *arbtable_open(void);
void arbtable_close(struct arbtable *h);

/* Text for the last failure of a call on @h: the kernel's extack message
 * (or, without one, the kernel's errno spelled out) when the kernel
 * refused, else the library's own explanation. "" after a success.
 */
const char *arbtable_errmsg(const struct arbtable *h);
/* 1 if the last failure was the kernel refusing the request, else 0. */
int arbtable_err_from_kernel(const struct arbtable *h);

/* Create the root arbtable qdisc @handle (e.g. ARBTABLE_CLASSID(1, 0)) on
 * @ifname. @opts may be NULL (kernel defaults: auto mode at link speed).
 */
int arbtable_qdisc_create(struct arbtable *h, const char *ifname,
			  uint32_t handle,
			  const struct arbtable_qdisc_opts *opts);
/* Change options of the device's arbtable qdisc. */
int arbtable_qdisc_change(struct arbtable *h, const char *ifname,
			  const struct arbtable_qdisc_opts *opts);
/* Delete the device's arbtable qdisc with all its classes. */
int arbtable_qdisc_delete(struct arbtable *h, const char *ifname);

/*
 * Create class @classid and, in auto mode, admit it (reserve its slots).
 * A @classid whose major is 0 takes the handle of the device's arbtable
 * qdisc. Rejections (not enough capacity, bound unreachable, table full,
 * ...) return the kernel's errno with its reason in arbtable_errmsg().
 */
int arbtable_admit(struct arbtable *h, const char *ifname, uint32_t classid,
		   const struct arbtable_class_opts *opts);
/* Change an existing class atomically: on refusal the old reservation
 * and slots stay. Options not in opts->set keep their value.
 */
int arbtable_change(struct arbtable *h, const char *ifname, uint32_t classid,
		    const struct arbtable_class_opts *opts);
/* Delete the class; in auto mode its slots are freed and defragmented. */
int arbtable_release(struct arbtable *h, const char *ifname,
		     uint32_t classid);

/* Replace the priomap: @priomap[p] is the class minor (hex in tc, 0 =
 * none) that packets of skb->priority p & 15 go to when no filter and no
 * priority naming a class took them. Any mode.
 */
int arbtable_set_priomap(struct arbtable *h, const char *ifname,
			 const uint32_t priomap[ARBTABLE_PRIO_BANDS]);

/* Manual mode: replace table @table with @slots (ARBTABLE_SLOTS entries;
 * null slots are skipped). The classes must exist.
 */
int arbtable_set_table(struct arbtable *h, const char *ifname,
		       enum arbtable_table table,
		       const struct arbtable_slot slots[ARBTABLE_SLOTS]);

/* Read the arbtable qdisc of @ifname (the root one if there are several):
 * options, both tables, per-class options and statistics.
 */
int arbtable_read(struct arbtable *h, const char *ifname,
		  struct arbtable_state *st);

/* Helpers */
/* The class of @st with @classid (or with minor @classid when its major
 * is 0), NULL if none.
 */
const struct arbtable_class_state *
arbtable_find_class(const struct arbtable_state *st, uint32_t classid);
/* Library version string, e.g. "0.1.0". */
const char *arbtable_version(void);

#ifdef __cplusplus
}
#endif

#endif /* ARBTABLE_ARBTABLE_H */
