// SPDX-License-Identifier: GPL-2.0
/*
 * arbtablectl table, priomap: what a manual-mode administrator programs,
 * the 64 slots of a table and the class of each skb->priority band.
 *
 *   table   DEV { high | low } { none | MINOR:WEIGHT[@SLOT]|-[,...] }
 *   priomap DEV MINOR0 ... MINOR15
 */
#include <stdio.h>
#include <string.h>

#include <arbtable/arbtable.h>

#include "arbtable_parse.h"
#include "arbtablectl.h"
/* "none" or "MINOR:WEIGHT[@SLOT]|-[,...]" as in tc */
int ctl_table(struct arbtable *h, int argc, char **argv)
{
	struct arbtable_slot slots[ARBTABLE_SLOTS];
	struct arbt_table tbl;
	enum arbtable_table t;
	char what[64], why[200];
	int err, i;

	if (argc != 3)
		ctl_usage("table: expected DEV high|low LIST");
	if (!strcmp(argv[1], "high"))
		t = ARBTABLE_HIGH;
	else if (!strcmp(argv[1], "low"))
		t = ARBTABLE_LOW;
	else
		ctl_usage("table: \"%s\" is neither high nor low", argv[1]);
	/* the words of tc and arbsim for what the kernel would refuse */
	if (arbt_table_parse(argv[2], argv[1], &tbl, why, sizeof(why)))
		ctl_usage("%s", why);
	for (i = 0; i < ARBTABLE_SLOTS; i++) {
		slots[i].minor = tbl.minor[i];
		slots[i].weight = tbl.weight[i];
	}
	snprintf(what, sizeof(what), "table %s on %s", argv[1], argv[0]);
	err = arbtable_set_table(h, argv[0], t, slots);
	return err ? ctl_failed(h, err, what) : EX_OK;
}

int ctl_priomap(struct arbtable *h, int argc, char **argv)
{
	uint32_t map[ARBTABLE_PRIO_BANDS];
	char what[64];
	int i, err;

	if (argc != 1 + ARBTABLE_PRIO_BANDS)
		ctl_usage("priomap: expected DEV and %d class minors (hex, 0 = none), %d given",
			  ARBTABLE_PRIO_BANDS, argc - 1 < 0 ? 0 : argc - 1);
	for (i = 0; i < ARBTABLE_PRIO_BANDS; i++)
		if (arbt_parse_u32(argv[1 + i], 16, &map[i]) ||
		    map[i] > 0xffff)
			ctl_usage("priomap: bad class minor \"%s\" (hex, 0..ffff, 0 = none)",
				  argv[1 + i]);
	snprintf(what, sizeof(what), "priomap on %s", argv[0]);
	err = arbtable_set_priomap(h, argv[0], map);
	return err ? ctl_failed(h, err, what) : EX_OK;
}
