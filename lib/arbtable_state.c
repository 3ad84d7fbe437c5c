// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The read side of libarbtable's ABI: the opaque state and the calls that
 * copy its records out, each to the caller's size (arbtable_abi.c). Kept
 * apart from the netlink code so the unit tests can check it on the host.
 */
#include <errno.h>
#include <stdlib.h>

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
/* embedded in the records, so frozen */
_Static_assert(sizeof(struct arbtable_stats) == 56, "arbtable_stats frozen");
_Static_assert(sizeof(struct arbtable_slot) == 8, "arbtable_slot frozen");

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
