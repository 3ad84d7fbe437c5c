// SPDX-License-Identifier: GPL-2.0
/*
 * arbtablectl create, change, delete: the qdisc itself, with tc's option
 * words.
 *
 *   create  DEV [handle MAJOR:] [auto | manual] [QDISC-OPTION...]
 *   change  DEV QDISC-OPTION...
 *   delete  DEV
 */
#include <stdio.h>
#include <string.h>

#include <arbtable/arbtable.h>

#include "arbtable_parse.h"
#include "arbtablectl.h"

/* an option of the qdisc, not a class id: change DEV rate 10mbit */
int ctl_is_qdisc_option(const char *k)
{
	static const char *const opts[] = {
		"rate", "burst", "highlimit", "accounting", "mtu", "maxweight",
		"default", "auto", "manual",
	};
	size_t i;

	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (!strcmp(k, opts[i]))
			return 1;
	return 0;
}

/*
 * Qdisc options of create and change; @handle NULL: no handle option
 * (change). Returns nothing: bad input is a usage error.
 */
static void parse_qdisc_opts(const char *cmd, int argc, char **argv,
			     struct arbtable_qdisc_opts *o, uint32_t *handle)
{
	uint32_t v;
	int i;

	for (i = 0; i < argc; i++) {
		const char *k = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(k, "auto") || !strcmp(k, "manual")) {
			o->mode = !strcmp(k, "auto") ? ARBTABLE_MODE_AUTO :
				  ARBTABLE_MODE_MANUAL;
			o->set |= ARBTABLE_Q_MODE;
			continue;
		}
		if (!val)
			ctl_usage("%s: \"%s\" needs a value", cmd, k);
		i++;
		if (!strcmp(k, "handle") && handle) {
			char buf[16];
			size_t n = strcspn(val, ":");

			if (n >= sizeof(buf) || (val[n] && val[n + 1]))
				ctl_usage("%s: bad handle \"%s\" (e.g. 1:)", cmd, val);
			memcpy(buf, val, n);
			buf[n] = '\0';
			if (arbt_parse_u32(buf, 16, &v) || !v || v > 0xffff)
				ctl_usage("%s: bad handle \"%s\" (e.g. 1:)", cmd, val);
			*handle = ARBTABLE_CLASSID(v, 0);
		} else if (!strcmp(k, "rate")) {
			if (arbt_parse_rate(val, &o->rate))
				ctl_usage("%s: bad rate \"%s\"", cmd, val);
			o->set |= ARBTABLE_Q_RATE;
		} else if (!strcmp(k, "highlimit")) {
			if (arbt_parse_u32(val, 10, &o->highlimit))
				ctl_usage("%s: bad highlimit \"%s\"", cmd, val);
			o->set |= ARBTABLE_Q_HIGHLIMIT;
		} else if (!strcmp(k, "accounting")) {
			if (!strcmp(val, "deficit"))
				o->accounting = ARBTABLE_ACCT_DEFICIT;
			else if (!strcmp(val, "iba"))
				o->accounting = ARBTABLE_ACCT_IBA;
			else
				ctl_usage("%s: accounting is deficit or iba", cmd);
			o->set |= ARBTABLE_Q_ACCOUNTING;
		} else if (!strcmp(k, "mtu")) {
			if (arbt_parse_u32(val, 10, &o->mtu))
				ctl_usage("%s: bad mtu \"%s\"", cmd, val);
			o->set |= ARBTABLE_Q_MTU;
		} else if (!strcmp(k, "burst")) {
			if (arbt_parse_size(val, &o->burst))
				ctl_usage("%s: bad burst \"%s\" (bytes, tc sizes: 30k)",
					  cmd, val);
			o->set |= ARBTABLE_Q_BURST;
		} else if (!strcmp(k, "maxweight")) {
			if (arbt_parse_u32(val, 10, &o->maxweight))
				ctl_usage("%s: bad maxweight \"%s\"", cmd, val);
			o->set |= ARBTABLE_Q_MAXWEIGHT;
		} else if (!strcmp(k, "default")) {
			if (arbt_parse_u32(val, 16, &o->default_minor))
				ctl_usage("%s: bad default minor \"%s\"", cmd, val);
			o->set |= ARBTABLE_Q_DEFAULT;
		} else {
			ctl_usage("%s: unknown option \"%s\"", cmd, k);
		}
	}
}

/* change DEV QDISC-OPTIONS: the qdisc's own options (tc qdisc change) */
int ctl_qdisc_change(struct arbtable *h, int argc, char **argv)
{
	struct arbtable_qdisc_opts o = { 0 };
	char what[64];
	int err;

	parse_qdisc_opts("change", argc - 1, argv + 1, &o, NULL);
	if (!o.set)
		ctl_usage("change: nothing to change");
	snprintf(what, sizeof(what), "change of %s's qdisc", argv[0]);
	err = arbtable_qdisc_change(h, argv[0], &o, sizeof(o));
	return err ? ctl_failed(h, err, what) : EX_OK;
}

int ctl_create(struct arbtable *h, int argc, char **argv)
{
	struct arbtable_qdisc_opts o = { 0 };
	uint32_t handle = ARBTABLE_CLASSID(1, 0);
	char what[64];
	int err;

	if (argc < 1)
		ctl_usage("create: expected DEV");
	parse_qdisc_opts("create", argc - 1, argv + 1, &o, &handle);
	snprintf(what, sizeof(what), "create on %s", argv[0]);
	err = arbtable_qdisc_create(h, argv[0], handle, &o, sizeof(o));
	return err ? ctl_failed(h, err, what) : EX_OK;
}

int ctl_delete(struct arbtable *h, int argc, char **argv)
{
	char what[64];
	int err;

	if (argc != 1)
		ctl_usage("delete: expected DEV");
	snprintf(what, sizeof(what), "delete on %s", argv[0]);
	err = arbtable_qdisc_delete(h, argv[0]);
	return err ? ctl_failed(h, err, what) : EX_OK;
}
