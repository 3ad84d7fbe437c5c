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

/* the value @opt stored in @o; 1, or 0 for a word */
static int opt_get(const struct ctl_opt *opt, const void *o, uint64_t *v)
{
	const char *field = (const char *)o + opt->off;
	uint32_t v32;

	switch (opt->kind) {
	case CTL_OPT_WORD:
		return 0;
	case CTL_OPT_RATE:
	case CTL_OPT_TIME:
		memcpy(v, field, sizeof(*v));
		return 1;
	default:
		memcpy(&v32, field, sizeof(v32));
		*v = v32;
		return 1;
	}
}

void ctl_parse_opts(const char *cmd, int argc, char **argv,
		    const struct ctl_opt *opts, void *o,
		    int (*other)(const char *cmd, const char *k,
				 const char *v, void *ctx), void *ctx)
{
	const char *seen[32] = { NULL };	/* by flag bit: the word */
	const char *other_seen[8];
	uint32_t *set = o;
	int i, j, nother = 0;
	uint64_t val;

	for (i = 0; i < argc; i++) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		const struct ctl_opt *opt = ctl_find_opt(opts, k);

		/* a repeated option is refused (tc's q_ets: Duplicate "bands");
		 * strict and nostrict, auto and manual, are one option
		 */
		if (opt && opt->flag) {
			const char **w = &seen[__builtin_ctz(opt->flag)];

			if (*w && strcmp(*w, k))
				ctl_usage("%s: \"%s\" and \"%s\" are exclusive",
					  cmd, *w, k);
			if (*w)
				ctl_usage("%s: duplicate \"%s\"", cmd, k);
			*w = k;
		} else if (!opt) {
			for (j = 0; j < nother; j++)
				if (!strcmp(other_seen[j], k))
					ctl_usage("%s: duplicate \"%s\"", cmd, k);
			if (nother < (int)(sizeof(other_seen) / sizeof(other_seen[0])))
				other_seen[nother++] = k;
		}
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
		if (opt_value(opt, v, o) ||
		    (opt->hi && opt_get(opt, o, &val) &&
		     !(val == 0 && opt->zero) && (val < opt->lo || val > opt->hi)))
			ctl_usage("%s: bad %s \"%s\"%s", cmd,
				  opt->what ? opt->what : opt->name, v,
				  opt->hint ? opt->hint : "");
		*set |= opt->flag;
	}
}
