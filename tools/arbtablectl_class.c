// SPDX-License-Identifier: GPL-2.0
/*
 * arbtablectl admit, change, release: a class of the qdisc, its options
 * checked as arbtable-cni and arbsim check them before the kernel sees
 * them.
 *
 *   admit   DEV CLASSID rate RATE [latency TIME | distance D] [ceil RATE]
 *   admit   DEV CLASSID share N [distance D] [ceil RATE]
 *   admit   DEV CLASSID strict ceil RATE
 *   change  DEV CLASSID OPTION...   (DEV QDISC-OPTION...: arbtablectl_qdisc.c)
 *   release DEV CLASSID
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include <arbtable/arbtable.h>

#include "arbt_print.h"
#include "arbtable_request.h"
#include "arbtablectl.h"

/* the option words of admit and change; the ranges of ceil and cburst
 * here, those of rate, latency, distance and share in the request check
 * all front ends share (check_class_opts), in the module's words
 */
#define C_OPT(name, kind, field, flag, hint, lo, hi, zero) \
	{ name, CTL_OPT_##kind, offsetof(struct arbtable_class_opts, field), \
	  ARBTABLE_C_##flag, 0, NULL, hint, lo, hi, zero }
static const struct ctl_opt class_opts[] = {
	{ "strict", CTL_OPT_WORD, offsetof(struct arbtable_class_opts, strict),
	  ARBTABLE_C_STRICT, 1, NULL, NULL, 0, 0, 0 },
	{ "nostrict", CTL_OPT_WORD, offsetof(struct arbtable_class_opts, strict),
	  ARBTABLE_C_STRICT, 0, NULL, NULL, 0, 0, 0 },
	C_OPT("rate", RATE, rate, RATE, " (a tc rate: 500kbit)", 0, 0, 0),
	C_OPT("ceil", RATE, ceil, CEIL,
	      " (a tc rate: 100mbit; 0 = none, at most 2^48 bytes/s)",
	      0, 1ULL << 48, 1),
	C_OPT("cburst", SIZE, cburst, CBURST,
	      " (a tc size: 30k; 0 = default, at most 256 MiB)", 0, 1U << 28, 1),
	C_OPT("latency", TIME, latency_ns, LATENCY,
	      " (a tc time: 50us, 2ms; a bare number is us)", 0, 0, 0),
	C_OPT("distance", DEC, distance, DISTANCE, " (1, 2, 4 ... 64)", 0, 0, 0),
	C_OPT("share", DEC, share, SHARE, " (1..255)", 0, 0, 0),
	{ NULL },
};
#undef C_OPT

/*
 * What the options ask for together, in the words arbtable-cni and
 * arbsim use (lib/arbtable_request.c, the module's own): a new class
 * whole; a change only as far as its options go on their own, since
 * what they make depends on the class's reservation, which the kernel
 * merges them into.
 */
static void check_class_opts(const char *cmd, const struct arbtable_class_opts *o)
{
	struct arbt_request rq = {
		.rate = o->rate, .latency_ns = o->latency_ns,
		.distance = o->distance, .share = o->share,
	};
	const char *why;

	rq.given = (o->set & ARBTABLE_C_RATE ? ARBT_RQ_RATE : 0) |
		   (o->set & ARBTABLE_C_LATENCY ? ARBT_RQ_LATENCY : 0) |
		   (o->set & ARBTABLE_C_DISTANCE ? ARBT_RQ_DISTANCE : 0) |
		   (o->set & ARBTABLE_C_SHARE ? ARBT_RQ_SHARE : 0);
	if (!strcmp(cmd, "admit"))
		why = arbt_request_check_new(&rq, (o->set & ARBTABLE_C_STRICT) &&
					     o->strict, 0);
	else
		why = arbt_request_check(&rq);
	if (why)
		ctl_usage("%s: %s", cmd, why);
}

static int class_cmd(struct arbtable *h, const char *cmd, int argc,
		     char **argv)
{
	struct arbtable_class_opts o;
	uint32_t id, maj, min;
	char what[96], b[16];
	int err;

	if (argc < 2)
		ctl_usage("%s: expected DEV CLASSID", cmd);
	/* change DEV rate 10mbit ...: a qdisc option where the class id
	 * would be (no option name is a class id)
	 */
	if (!strcmp(cmd, "change") && ctl_is_qdisc_option(argv[1]))
		return ctl_qdisc_change(h, argc, argv);
	if (arbt_parse_classid(argv[1], &maj, &min))
		ctl_usage("%s: bad class id \"%s\" (MAJOR:MINOR in hex, e.g. 1:10)",
			  cmd, argv[1]);
	id = ARBTABLE_CLASSID(maj, min);
	if (!strcmp(cmd, "release")) {
		if (argc != 2)
			ctl_usage("release: unexpected \"%s\"", argv[2]);
	} else {
		memset(&o, 0, sizeof(o));
		ctl_parse_opts(cmd, argc - 2, argv + 2, class_opts, &o, NULL,
			       NULL);
		if (!strcmp(cmd, "change") && !o.set)
			ctl_usage("change: nothing to change");
		check_class_opts(cmd, &o);
	}
	snprintf(what, sizeof(what), "%s %s on %s", cmd,
		 ARBTABLE_MAJOR(id) ? ctl_fmt_classid(id, b, sizeof(b)) : argv[1],
		 argv[0]);
	if (!strcmp(cmd, "admit"))
		err = arbtable_admit(h, argv[0], id, &o, sizeof(o));
	else if (!strcmp(cmd, "change"))
		err = arbtable_change(h, argv[0], id, &o, sizeof(o));
	else
		err = arbtable_release(h, argv[0], id);
	if (err)
		return ctl_failed(h, err, what);
	if (ctl_json) {
		struct json_object *j = arbt_jobj();

		arbt_jput_bool(j, "ok", 1);
		arbt_jput_str(j, "command", cmd);
		arbt_jput_str(j, "dev", argv[0]);
		/* tc's spelling of a class id without its major: ":30" */
		if (ARBTABLE_MAJOR(id))
			ctl_fmt_classid(id, b, sizeof(b));
		else
			snprintf(b, sizeof(b), ":%x", ARBTABLE_MINOR(id));
		arbt_jput_str(j, "handle", b);
		arbt_jprint(j);
	}
	return EX_OK;
}

int ctl_admit(struct arbtable *h, int argc, char **argv)
{
	return class_cmd(h, "admit", argc, argv);
}

int ctl_change(struct arbtable *h, int argc, char **argv)
{
	return class_cmd(h, "change", argc, argv);
}

int ctl_release(struct arbtable *h, int argc, char **argv)
{
	return class_cmd(h, "release", argc, argv);
}
