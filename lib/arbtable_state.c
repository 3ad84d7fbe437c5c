// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The read side of libarbtable's ABI: the kernel's xstats, whatever their
 * length, into the state's records; the opaque state and the calls that
 * copy its records out, each to the caller's size (arbtable_abi.c). Kept
 * apart from the netlink code so the unit tests can check it on the host.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/pkt_sched_arbtable.h>

#include "arbtable/arbtable.h"
#include "arbtable_abi.h"
#include "arbtable_state.h"

#define ARB_EXPORT		__attribute__((visibility("default")))

/* The first release's sizes are promises: a field may only be appended. */
_Static_assert(sizeof(struct arbtable_qdisc_opts) >=
	       ARBTABLE_QDISC_OPTS_SIZE_VER0, "qdisc opts shrank");
_Static_assert(sizeof(struct arbtable_class_opts) >=
	       ARBTABLE_CLASS_OPTS_SIZE_VER0, "class opts shrank");
_Static_assert(sizeof(struct arbtable_qdisc_info) >=
	       ARBTABLE_QDISC_INFO_SIZE_VER0, "qdisc info shrank");
_Static_assert(sizeof(struct arbtable_class_info) >=
	       ARBTABLE_CLASS_INFO_SIZE_VER0, "class info shrank");
_Static_assert(sizeof(struct arbtable_qdisc_info) ==
	       ARBTABLE_QDISC_INFO_SIZE_VER2, "qdisc info: a new SIZE_VER");
_Static_assert(sizeof(struct arbtable_class_info) ==
	       ARBTABLE_CLASS_INFO_SIZE_VER1, "class info: a new SIZE_VER");
/* embedded in the records, so frozen */
_Static_assert(sizeof(struct arbtable_stats) == 56, "arbtable_stats frozen");
_Static_assert(sizeof(struct arbtable_slot) == 8, "arbtable_slot frozen");

/*
 * Field @f of the kernel's xstats @x into record @rec when the payload's
 * @len bytes hold it whole, with @bit set in the record's xstats_fields.
 */
#define ARB_XTAKE(rec, x, len, f, bit)					\
	do {								\
		if (offsetof(__typeof__(x), f) + sizeof((x).f) <= (len)) { \
			(rec)->f = (x).f;				\
			(rec)->xstats_fields |= (bit);			\
		}							\
	} while (0)

int arb_qdisc_xstats_in(struct arbtable_qdisc_info *qi, const void *data,
			size_t len)
{
	struct tc_arbtable_xstats x = {};

	qi->has_xstats = 0;
	qi->unclassified_qlen = 0;
	qi->unclassified_pkts = 0;
	qi->unclassified_drops = 0;
	qi->swaps = 0;
	qi->throttled = 0;
	memset(qi->used, 0, sizeof(qi->used));
	memset(qi->cur, 0, sizeof(qi->cur));
	qi->hp_counter = 0;
	memset(qi->credit, 0, sizeof(qi->credit));
	qi->xstats_fields = 0;
	qi->gso_split = 0;
	qi->gso_segs = 0;
	qi->oversize_drops = 0;
	qi->capacity = 0;
	qi->link_rate = 0;
	qi->link_changes = 0;
	qi->mtu_changes = 0;
	qi->stalls = 0;
	qi->broken = 0;
	qi->unclassified_bound_ns = 0;
	qi->unclassified_max_wait_ns = 0;
	if (!data || len < sizeof(x.type))
		return 0;
	memcpy(&x, data, len < sizeof(x) ? len : sizeof(x));
	if (x.type != TCA_ARBTABLE_XSTATS_QDISC)
		return 0;

	/* the fields of the record's first release: what a short payload
	 * lacks reads 0; cur, hp_counter and credit are no longer reported
	 * (the arbtable_dequeue tracepoint carries them) and stay 0
	 */
	qi->has_xstats = 1;
	qi->unclassified_pkts = x.unclassified_pkts;
	qi->unclassified_drops = x.unclassified_drops;
	qi->unclassified_qlen = x.unclassified_qlen;
	qi->swaps = x.swaps;
	qi->throttled = x.throttled;
	qi->used[ARBTABLE_HIGH] = x.high_used;
	qi->used[ARBTABLE_LOW] = x.low_used;

	/* those appended since: each says whether the kernel had it */
	ARB_XTAKE(qi, x, len, gso_split, ARBTABLE_QX_GSO_SPLIT);
	ARB_XTAKE(qi, x, len, gso_segs, ARBTABLE_QX_GSO_SEGS);
	ARB_XTAKE(qi, x, len, oversize_drops, ARBTABLE_QX_OVERSIZE_DROPS);
	ARB_XTAKE(qi, x, len, capacity, ARBTABLE_QX_CAPACITY);
	ARB_XTAKE(qi, x, len, link_rate, ARBTABLE_QX_LINK_RATE);
	ARB_XTAKE(qi, x, len, link_changes, ARBTABLE_QX_LINK_CHANGES);
	ARB_XTAKE(qi, x, len, mtu_changes, ARBTABLE_QX_MTU_CHANGES);
	ARB_XTAKE(qi, x, len, broken, ARBTABLE_QX_BROKEN);
	ARB_XTAKE(qi, x, len, stalls, ARBTABLE_QX_STALLS);
	ARB_XTAKE(qi, x, len, unclassified_bound_ns, ARBTABLE_QX_UNCL_BOUND);
	ARB_XTAKE(qi, x, len, unclassified_max_wait_ns,
		  ARBTABLE_QX_UNCL_MAX_WAIT);
	return 1;
}

int arb_class_xstats_in(struct arbtable_class_info *ci, const void *data,
			size_t len)
{
	struct tc_arbtable_class_xstats x = {};

	ci->has_xstats = 0;
	ci->distance = 0;
	memset(ci->slots, 0, sizeof(ci->slots));
	memset(ci->weight, 0, sizeof(ci->weight));
	ci->index = 0;
	ci->reserved_weight = 0;
	ci->reserved_rate = 0;
	ci->guaranteed_rate = 0;
	ci->guaranteed_bound_ns = 0;
	ci->current_bound_ns = 0;
	ci->max_hol_ns = 0;
	ci->throttled = 0;
	ci->xstats_fields = 0;
	ci->broken = 0;
	ci->stalls = 0;
	if (!data || len < sizeof(x.type))
		return 0;
	memcpy(&x, data, len < sizeof(x) ? len : sizeof(x));
	if (x.type != TCA_ARBTABLE_XSTATS_CLASS)
		return 0;

	ci->has_xstats = 1;
	ci->slots[ARBTABLE_HIGH] = x.high_slots;
	ci->slots[ARBTABLE_LOW] = x.low_slots;
	ci->weight[ARBTABLE_HIGH] = x.high_weight;
	ci->weight[ARBTABLE_LOW] = x.low_weight;
	ci->distance = x.distance;
	ci->reserved_weight = x.reserved_weight;
	ci->reserved_rate = x.reserved_rate;
	ci->guaranteed_rate = x.guaranteed_rate;
	ci->guaranteed_bound_ns = x.guaranteed_bound_ns;
	ci->current_bound_ns = x.current_bound_ns;
	ci->max_hol_ns = x.max_hol_ns;
	ci->throttled = x.throttled;
	/* index is no longer reported and stays 0 */

	ARB_XTAKE(ci, x, len, broken, ARBTABLE_CX_BROKEN);
	ARB_XTAKE(ci, x, len, stalls, ARBTABLE_CX_STALLS);
	return 1;
}

ARB_EXPORT struct arbtable_state *arbtable_state_new(void)
{
	struct arbtable_state *st = calloc(1, sizeof(*st));

	if (!st)
		errno = ENOMEM;
	return st;
}

ARB_EXPORT void arbtable_state_free(struct arbtable_state *st)
{
	free(st);
}

ARB_EXPORT int arbtable_state_qdisc(const struct arbtable_state *st,
				    struct arbtable_qdisc_info *qi, size_t size)
{
	if (!st || !qi)
		return -EINVAL;
	return arb_rec_out(qi, size, &st->q, sizeof(st->q),
			   ARBTABLE_QDISC_INFO_SIZE_VER0);
}

ARB_EXPORT int arbtable_state_qdisc_opts(const struct arbtable_state *st,
					 struct arbtable_qdisc_opts *opts,
					 size_t size)
{
	if (!st || !opts)
		return -EINVAL;
	return arb_rec_out(opts, size, &st->qopts, sizeof(st->qopts),
			   ARBTABLE_QDISC_OPTS_SIZE_VER0);
}

ARB_EXPORT int arbtable_state_class(const struct arbtable_state *st,
				    unsigned int idx,
				    struct arbtable_class_info *ci, size_t size)
{
	if (!st || !ci || idx >= st->q.nclasses)
		return -EINVAL;
	return arb_rec_out(ci, size, &st->classes[idx].info,
			   sizeof(st->classes[idx].info),
			   ARBTABLE_CLASS_INFO_SIZE_VER0);
}

ARB_EXPORT int arbtable_state_class_opts(const struct arbtable_state *st,
					 unsigned int idx,
					 struct arbtable_class_opts *opts,
					 size_t size)
{
	if (!st || !opts || idx >= st->q.nclasses)
		return -EINVAL;
	return arb_rec_out(opts, size, &st->classes[idx].opts,
			   sizeof(st->classes[idx].opts),
			   ARBTABLE_CLASS_OPTS_SIZE_VER0);
}

ARB_EXPORT int arbtable_state_find_class(const struct arbtable_state *st,
					 uint32_t classid)
{
	unsigned int i;

	if (!st)
		return -EINVAL;
	for (i = 0; i < st->q.nclasses; i++) {
		uint32_t id = st->classes[i].info.classid;

		if (ARBTABLE_MAJOR(classid) ? id == classid :
		    ARBTABLE_MINOR(id) == ARBTABLE_MINOR(classid))
			return (int)i;
	}
	return -ENOENT;
}
