// SPDX-License-Identifier: GPL-2.0
/*
 * arbtablectl_opts.c - the option words of a command (KEY or KEY VALUE)
 * read by a table of them (struct ctl_opt): the class options of admit
 * and change, the qdisc options of create and change, one loop for both
 * with tc's units.
 */
#include <stdint.h>
#include <string.h>

#include "arbtable_parse.h"
#include "arbtablectl.h"

const struct ctl_opt *ctl_find_opt(const struct ctl_opt *opts, const char *k)
{
	for (; opts->name; opts++)
		if (!strcmp(opts->name, k))
			return opts;
	return NULL;
}

/* @v into the field of @opt in @o: 0, or -1 when @v is not one */
static int opt_value(const struct ctl_opt *opt, const char *v, void *o)
{
	char *field = (char *)o + opt->off;
	uint64_t v64;
	uint32_t v32;
	int err;

	switch (opt->kind) {
	case CTL_OPT_RATE:
	case CTL_OPT_TIME:
		err = opt->kind == CTL_OPT_RATE ? arbt_parse_rate(v, &v64) :
						  arbt_parse_time(v, &v64);
		if (!err)
			memcpy(field, &v64, sizeof(v64));
		return err;
	case CTL_OPT_SIZE:
		err = arbt_parse_size(v, &v32);
		break;
	case CTL_OPT_DEC:
	case CTL_OPT_HEX:
		err = arbt_parse_u32(v, opt->kind == CTL_OPT_HEX ? 16 : 10,
				     &v32);
		break;
	default:
		v32 = opt->word;
		err = 0;
		break;
	}
	if (!err)
		memcpy(field, &v32, sizeof(v32));
	return err;
}

void ctl_parse_opts(const char *cmd, int argc, char **argv,
		    const struct ctl_opt *opts, void *o,
		    int (*other)(const char *cmd, const char *k,
				 const char *v, void *ctx), void *ctx)
{
	uint32_t *set = o;
	int i;

	for (i = 0; i < argc; i++) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		const struct ctl_opt *opt = ctl_find_opt(opts, k);

		if (opt && opt->kind == CTL_OPT_WORD) {
			opt_value(opt, NULL, o);
			*set |= opt->flag;
			continue;
		}
		if (!v)
			ctl_usage("%s: \"%s\" needs a value", cmd, k);
		i++;
		if (!opt) {
			if (!other || other(cmd, k, v, ctx))
				ctl_usage("%s: unknown option \"%s\"", cmd, k);
			continue;
		}
		if (opt_value(opt, v, o))
			ctl_usage("%s: bad %s \"%s\"%s", cmd,
				  opt->what ? opt->what : opt->name, v,
				  opt->hint ? opt->hint : "");
		*set |= opt->flag;
	}
}
