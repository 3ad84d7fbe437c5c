/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * struct arbtable_state, opaque to callers: what one arbtable_read() saw,
 * in this library's own records. Only the library (and its unit tests)
 * see the layout, so it may change in any release.
 */
#ifndef ARBTABLE_STATE_H
#define ARBTABLE_STATE_H

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

#endif /* ARBTABLE_STATE_H */
