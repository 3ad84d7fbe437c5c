/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arbtable admission: turns a class's request (rate + latency/distance for
 * the HIGH table, share for the LOW table) into an allocator operation,
 * planned on copies of both allocators, then committed to the live
 * arbiter. Kernel-independent: the qdisc (arbtable_auto.c) and arbsim run
 * exactly this code, so a what-if answer is the module's answer.
 */
#ifndef _ARBTABLE_ADMIT_H
#define _ARBTABLE_ADMIT_H

#include "arbtable_arbiter.h"
#include "arbtable_alloc.h"

/* Shortest burst a token bucket (qdisc rate, class ceil) may save up, ns:
 * long enough that a watchdog firing late (timer slack, a loaded or
 * emulated CPU) costs no throughput, short enough to shape: 2 ms lost up
 * to 18% of a 10 Mbit/s rate under TCG, 10 ms nothing measurable. The
 * module's buckets and the strict-class burst (hence the bounds) use it.
 */
#define ARB_MIN_BURST_NS	10000000ULL

/* A class's request as given by the user (0 = not given). */
struct arb_resv {
	u64	rate;		/* bytes/s, HIGH table */
	u64	latency;	/* ns */
	u32	distance;	/* as given, before rounding */
	u32	share;		/* LOW table weight units */
};

/*
 * A request that moves between tables drops what applied only to the old
 * one (DESIGN §4): a share class given a rate loses its LOW distance, a
 * rate class given a share its latency and HIGH distance. A latency or
 * distance in the same request is applied after these.
 */
static inline void arb_resv_set_rate(struct arb_resv *r, u64 rate)
{
	if (r->share)
		r->distance = 0;
	r->share = 0;
	r->rate = rate;
}

static inline void arb_resv_set_share(struct arb_resv *r, u32 share)
{
	if (r->rate)
		r->distance = 0;
	r->rate = 0;
	r->latency = 0;
	r->share = share;
}

/* The outcome of planning one admission, change or release. */
struct arb_admission {
	struct arb_alloc	alloc[ARB_NTABLES];	/* after the op */
	struct arb_moves	mv;	/* swaps in @old_table, in order */
	struct arb_resv		resv;
	u8			old_table;	/* ARB_HIGH/LOW or ARB_NO_CLASS */
	u8			new_table;
	u32			distance;	/* effective */
	u32			weight;		/* units reserved */
	u64			bound_ns;	/* guaranteed bound, HIGH only */
};

/* Bytes the strict class may send in a burst under a ceil: its bucket
 * depth (@cburst bytes, or by default max(2 * mtu, ceil * ARB_MIN_BURST_NS))
 * plus the one packet the bucket may overshoot by.
 */
u32 arb_strict_burst(u64 ceil, u32 mtu, u32 cburst);

/* The allocator's parameters for a qdisc (strict_ceil 0: no strict;
 * strict_cburst 0: the default depth).
 */
void arb_admit_params(u64 capacity, u32 mtu, u8 maxweight, u8 highlimit,
		      u64 strict_ceil, u32 strict_cburst,
		      struct arb_params *p);

/*
 * Plan what @resv asks for class index @idx, now in @old_table (ARB_NO_CLASS
 * if none), on copies of @alloc; a zero @resv releases. Returns 0 or a
 * negative errno with the reason in @why ("cannot admit the class: ...").
 */
int arb_admit_plan(const struct arb_alloc alloc[ARB_NTABLES],
		   const struct arb_params *p, u8 maxweight, unsigned int idx,
		   u8 old_table, const struct arb_resv *resv,
		   struct arb_admission *adm, char *why, size_t len);

/*
 * Apply a plan to the live arbiter and allocators: free the class's old
 * slots, apply the defragmentation swaps (each moves a slot with its
 * credit), then fill the slots the allocators now assign. Cannot fail.
 * @on_swap (may be NULL) sees every swap, for tracing and counting.
 */
void arb_admit_commit(struct arb_sched *arb,
		      struct arb_alloc alloc[ARB_NTABLES], unsigned int idx,
		      const struct arb_admission *adm,
		      void (*on_swap)(void *ctx, unsigned int t, u8 a, u8 b),
		      void *ctx);

#endif /* _ARBTABLE_ADMIT_H */
