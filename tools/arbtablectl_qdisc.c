// SPDX-License-Identifier: GPL-2.0
/*
 * arbtablectl create, change, delete: the qdisc itself, with tc's option
 * words.
 *
 *   create  DEV [handle MAJOR:] [auto | manual] [QDISC-OPTION...]
 *   change  DEV QDISC-OPTION...
 *   delete  DEV
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <arbtable/arbtable.h>

#include "arbtable_parse.h"
#include "arbtablectl.h"

/* what the words the table does not have write to */
struct qdisc_words {
	struct arbtable_qdisc_opts	*o;
	uint32_t			*handle;
};

/* the option words of create and change (but accounting and handle),
 * with the ranges the module's netlink policy has
 */
#define Q_OPT(name, kind, field, flag, what, hint, lo, hi, zero) \
	{ name, CTL_OPT_##kind, offsetof(struct arbtable_qdisc_opts, field), \
	  ARBTABLE_Q_##flag, 0, what, hint, lo, hi, zero }
/* a word that stores @val in @field */
#define Q_WORD(name, field, flag, val) \
	{ name, CTL_OPT_WORD, offsetof(struct arbtable_qdisc_opts, field), \
	  ARBTABLE_Q_##flag, val, NULL, NULL, 0, 0, 0 }
static const struct ctl_opt qdisc_opts[] = {
	{ "auto", CTL_OPT_WORD, offsetof(struct arbtable_qdisc_opts, mode),
	  ARBTABLE_Q_MODE, ARBTABLE_MODE_AUTO, NULL, NULL, 0, 0, 0 },
	{ "manual", CTL_OPT_WORD, offsetof(struct arbtable_qdisc_opts, mode),
	  ARBTABLE_Q_MODE, ARBTABLE_MODE_MANUAL, NULL, NULL, 0, 0, 0 },
	Q_WORD("prioclassid", prio_classid, PRIO_CLASSID, 1),
	Q_WORD("noprioclassid", prio_classid, PRIO_CLASSID, 0),
	Q_WORD("classifyforeign", classify_foreign, CLASSIFY_FOREIGN, 1),
	Q_WORD("noclassifyforeign", classify_foreign, CLASSIFY_FOREIGN, 0),
	Q_WORD("lockless", lockless, LOCKLESS, 1),
	Q_WORD("locked", lockless, LOCKLESS, 0),
	Q_OPT("rate", RATE, rate, RATE, NULL,
	      " (a tc rate: 10gbit; 0 = link speed, at most 2^48 bytes/s)",
	      0, 1ULL << 48, 1),
	Q_OPT("highlimit", DEC, highlimit, HIGHLIMIT, NULL,
	      " (4096-byte blocks, 0..255)", 0, 255, 1),
	Q_OPT("mtu", SIZE, mtu, MTU, NULL,
	      " (a tc size: 0 = the device's, or 64..1048576 bytes)",
	      64, 1024 * 1024, 1),
	Q_OPT("burst", SIZE, burst, BURST, NULL,
	      " (a tc size: 30k; 0 = default, at most 256 MiB)", 0, 1U << 28, 1),
	Q_OPT("maxweight", DEC, maxweight, MAXWEIGHT, NULL, " (1..255)",
	      1, 255, 0),
	Q_OPT("default", HEX, default_minor, DEFAULT, "default minor",
	      " (class minor in hex, 0..ffff)", 0, 0xffff, 1),
	{ NULL },
};
#undef Q_OPT
#undef Q_WORD

/* an option of the qdisc, not a class id: change DEV rate 10mbit */
int ctl_is_qdisc_option(const char *k)
{
	return ctl_find_opt(qdisc_opts, k) || !strcmp(k, "accounting");
}

/* accounting, and handle where @ctx (the handle) is not NULL */
static int other_opt(const char *cmd, const char *k, const char *val,
		     void *ctx)
{
	struct qdisc_words *w = ctx;
	char buf[16];
	size_t n;
	uint32_t v;

	if (!strcmp(k, "accounting")) {
		if (!strcmp(val, "deficit"))
			w->o->accounting = ARBTABLE_ACCT_DEFICIT;
		else if (!strcmp(val, "iba"))
			w->o->accounting = ARBTABLE_ACCT_IBA;
		else
			ctl_usage("%s: bad accounting \"%s\" (deficit or iba)",
				  cmd, val);
		w->o->set |= ARBTABLE_Q_ACCOUNTING;
		return 0;
	}
	if (strcmp(k, "handle") || !w->handle)
		return 1;
	n = strcspn(val, ":");
	if (n >= sizeof(buf) || (val[n] && val[n + 1]))
		ctl_usage("%s: bad handle \"%s\" (e.g. 1:)", cmd, val);
	memcpy(buf, val, n);
	buf[n] = '\0';
	if (arbt_parse_u32(buf, 16, &v) || !v || v > 0xffff)
		ctl_usage("%s: bad handle \"%s\" (e.g. 1:)", cmd, val);
	*w->handle = ARBTABLE_CLASSID(v, 0);
	return 0;
}

/*
 * Qdisc options of create and change; @handle NULL: no handle option
 * (change). Returns nothing: bad input is a usage error.
 */
static void parse_qdisc_opts(const char *cmd, int argc, char **argv,
			     struct arbtable_qdisc_opts *o, uint32_t *handle)
{
	struct qdisc_words w = { .o = o, .handle = handle };

	ctl_parse_opts(cmd, argc, argv, qdisc_opts, o, other_opt, &w);
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
