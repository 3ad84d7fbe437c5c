/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * struct arbtable_state, opaque to callers: what one arbtable_read() saw,
 * in this library's own records. Only the library (and its unit tests)
 * see the layout, so it may change in any release.
 */
#ifndef ARBTABLE_STATE_H
#define ARBTABLE_STATE_H

#include <stddef.h>

#include "arbtable/arbtable.h"

struct arb_class {
	struct arbtable_class_info	info;
	struct arbtable_class_opts	opts;
};

struct arbtable_state {
	struct arbtable_qdisc_info	q;
	struct arbtable_qdisc_opts	qopts;
	struct arb_class		classes[ARBTABLE_MAX_CLASSES];
};

/*
 * The kernel's xstats (the payload of TCA_STATS_APP, @len bytes at @data)
 * into a record: false, and the record's xstats left zero, when the
 * payload is shorter than its type or of the other type. The layout is
 * that of the sch_arbtable of the same release; a shorter payload fills
 * the fields it holds whole, the others read as 0 with their
 * ARBTABLE_QX_* / ARBTABLE_CX_* bit clear. A longer one from a newer
 * kernel is read up to what this library knows. The fields the kernel no
 * longer reports (cur, hp_counter, credit, index) always read 0.
 */
int arb_qdisc_xstats_in(struct arbtable_qdisc_info *qi, const void *data,
			size_t len);
int arb_class_xstats_in(struct arbtable_class_info *ci, const void *data,
			size_t len);

#endif /* ARBTABLE_STATE_H */
