/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arbsim: the auto-mode admission glue of the module (kernel/arbtable_auto.c,
 * arbtable_auto_size / arbtable_auto_plan / arbtable_auto_commit) redone on
 * the same core calls in userspace: arb_plan, arb_weight_eff,
 * arb_alloc_insert / release / change, arb_reject_format, arb_swap_slots,
 * arb_set_slot. No admission arithmetic lives here; it is all in the core.
 *
 * The pieces below that are not core calls but copies of static module code
 * (asim_strict_burst, the share branch of asim_size, asim_sync) should move
 * into the core so that the module and arbsim cannot drift apart; see the
 * comments at each.
 */
#ifndef _ARBSIM_AUTO_H
#define _ARBSIM_AUTO_H

#include "arbtable_types.h"
#include "arbtable_arbiter.h"
#include "arbtable_alloc.h"

/* Mirrors ARBTABLE_MIN_BURST_NS in kernel/arbtable_qdisc.h. */
#define ASIM_MIN_BURST_NS	2000000ULL

/* A class's auto-mode request, as given (0 = not given): arbtable_resv. */
struct asim_resv {
	u64 rate;		/* bytes/s, HIGH table */
	u64 latency;		/* ns */
	u32 distance;		/* as given, before rounding */
	u32 share;		/* LOW table weight units */
};

/* Outcome of planning one admission/change/release on copies. */
struct asim_plan {
	struct arb_alloc alloc[ARB_NTABLES];
	struct arb_moves mv;
	struct asim_resv resv;
	u8 old_table;		/* ARB_HIGH/ARB_LOW or ARB_NO_CLASS */
	u8 new_table;
	u32 distance;
	u32 weight;
	u64 bound_ns;
};

/* Strict-class burst in bytes for a ceil (arbtable_strict_burst). */
u32 asim_strict_burst(u64 ceil, u32 mtu);

/* The allocator's parameters (arbtable_auto_params). */
void asim_params(u64 capacity, u32 mtu, u8 maxweight, u8 highlimit,
		 u64 strict_ceil, struct arb_params *p);

/*
 * Plan what @resv asks for class index @idx (currently in @old_table) on
 * copies of @alloc. 0, or a negative errno with the module's extack text
 * in @why ("cannot admit the class: ..." for allocator rejections).
 */
int asim_plan(const struct arb_alloc alloc[ARB_NTABLES],
	      const struct arb_params *p, u8 maxweight, unsigned int idx,
	      u8 old_table, const struct asim_resv *resv,
	      struct asim_plan *plan, char *why, size_t len);

/*
 * Commit a plan to the live arbiter and allocators, as the module does
 * under the tree lock: free the class's old slots, apply the swaps (which
 * move credits with the slots), copy the allocators and sync the tables.
 */
void asim_commit(struct arb_sched *arb, struct arb_alloc alloc[ARB_NTABLES],
		 unsigned int idx, const struct asim_plan *plan);

#endif /* _ARBSIM_AUTO_H */
