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
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include <arbtable/arbtable.h>

#include "arbt_print.h"
#include "arbtable_parse.h"
#include "arbtable_request.h"
#include "arbtablectl.h"

/* rate/latency/distance/share/ceil/strict words of admit and change */
static void parse_class_opts(const char *cmd, int argc, char **argv,
			     struct arbtable_class_opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < argc; i++) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(k, "strict") || !strcmp(k, "nostrict")) {
			o->strict = !strcmp(k, "strict");
			o->set |= ARBTABLE_C_STRICT;
			continue;
		}
		if (!v)
			ctl_usage("%s: \"%s\" needs a value", cmd, k);
		i++;
		if (!strcmp(k, "rate")) {
			if (arbt_parse_rate(v, &o->rate))
				ctl_usage("%s: bad rate \"%s\" (e.g. 500kbit, 10mbit)", cmd, v);
			o->set |= ARBTABLE_C_RATE;
		} else if (!strcmp(k, "ceil")) {
			if (arbt_parse_rate(v, &o->ceil))
				ctl_usage("%s: bad ceil \"%s\" (e.g. 100mbit)", cmd, v);
			o->set |= ARBTABLE_C_CEIL;
		} else if (!strcmp(k, "cburst")) {
			if (arbt_parse_size(v, &o->cburst))
				ctl_usage("%s: bad cburst \"%s\" (bytes, tc sizes: 30k)", cmd, v);
			o->set |= ARBTABLE_C_CBURST;
		} else if (!strcmp(k, "latency")) {
			if (arbt_parse_time(v, &o->latency_ns))
				ctl_usage("%s: bad latency \"%s\" (e.g. 50us, 2ms)", cmd, v);
			o->set |= ARBTABLE_C_LATENCY;
		} else if (!strcmp(k, "distance")) {
			if (arbt_parse_u32(v, 10, &o->distance))
				ctl_usage("%s: bad distance \"%s\" (1, 2, 4 ... 64)", cmd, v);
			o->set |= ARBTABLE_C_DISTANCE;
		} else if (!strcmp(k, "share")) {
			if (arbt_parse_u32(v, 10, &o->share))
				ctl_usage("%s: bad share \"%s\" (1..255)", cmd, v);
			o->set |= ARBTABLE_C_SHARE;
		} else {
			ctl_usage("%s: unknown option \"%s\"", cmd, k);
		}
	}
}

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
		parse_class_opts(cmd, argc - 2, argv + 2, &o);
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
