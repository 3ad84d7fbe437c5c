// SPDX-License-Identifier: GPL-2.0
/*
 * arbtablectl_snap.c - one arbtable_read() copied into arbtablectl's own
 * records. libarbtable keeps its state opaque and hands out each record
 * at the size this program was built with, so the commands work on these
 * copies instead of the library's layout.
 */
#include <errno.h>
#include <string.h>

#include <arbtable/arbtable.h>

#include "arbtablectl.h"

int ctl_snap_read(struct arbtable *h, const char *dev, struct ctl_snap *snap)
{
	struct arbtable_state *st = arbtable_state_new();
	unsigned int i;
	int err;

	if (!st)
		return -ENOMEM;
	memset(snap, 0, sizeof(*snap));
	err = arbtable_read(h, dev, st);
	if (!err)
		err = arbtable_state_qdisc(st, &snap->q, sizeof(snap->q));
	if (err >= 0)
		err = arbtable_state_qdisc_opts(st, &snap->opts,
						sizeof(snap->opts));
	snap->nclasses = snap->q.nclasses < ARBTABLE_MAX_CLASSES ?
			 snap->q.nclasses : ARBTABLE_MAX_CLASSES;
	for (i = 0; err >= 0 && i < snap->nclasses; i++) {
		struct ctl_class *c = &snap->classes[i];

		err = arbtable_state_class(st, i, &c->i, sizeof(c->i));
		if (err >= 0)
			err = arbtable_state_class_opts(st, i, &c->opts,
							sizeof(c->opts));
	}
	arbtable_state_free(st);
	return err < 0 ? err : 0;
}

const struct ctl_class *ctl_find_class(const struct ctl_snap *snap,
				       uint32_t classid)
{
	unsigned int i;

	for (i = 0; i < snap->nclasses; i++)
		if (snap->classes[i].i.classid == classid)
			return &snap->classes[i];
	return NULL;
}
