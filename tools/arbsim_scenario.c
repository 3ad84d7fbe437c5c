// SPDX-License-Identifier: GPL-2.0
/*
 * arbsim_scenario.c - the scenario: its statements read line by line, their
 * values in tc's units (the plugin's parser), handed to the classes and
 * tables (arbsim_classes.c) in order.
 *
 * Scenario format (one statement per line, '#' starts a comment):
 *
 *   qdisc [manual|auto] rate RATE [highlimit 0..255]
 *         [accounting deficit|iba] [mtu BYTES] [maxweight 1..255]
 *       First statement. RATE in tc units (bit, kbit, mbit, gbit, tbit,
 *       kibit.., Bps, KBps, MBps, ...; a bare number is bit/s). Defaults
 *       as the module: auto, highlimit 16, deficit, maxweight 255,
 *       mtu as the module follows an Ethernet NIC at mtu 1500 (1514;
 *       from 1gbit up 74406, a 64 KiB GSO skb kept whole). The rate is the link: simulated time advances by
 *       len / rate per packet.
 *   high LIST | low LIST          (manual mode)
 *       LIST := none | ENTRY[,ENTRY...]; ENTRY := MINOR:WEIGHT[@SLOT] | -
 *       as in tc-arbtable(8): minors hex, weights and slots decimal.
 *       Each list replaces the table. Classes named here are created if
 *       no 'class' statement did.
 *   class ID [strict|nostrict] [ceil RATE] [rate RATE]
 *         [latency TIME | distance D] [share N]
 *       tc class add: ID is MAJ:MIN or MIN (hex). rate/latency/distance/
 *       share are auto mode only (admitted through the allocator, in
 *       order); strict/ceil work in both modes. TIME takes s, ms, us, ns
 *       (a bare number is us, as in tc).
 *   change ID [options as for class]   tc class change
 *   del ID                              tc class del
 *   traffic ID [size S[,S...]] [mix alternate|random] [idle-after N]
 *           [offered RATE]
 *       Traffic of a class. Without 'offered' the class is backlogged
 *       (always has a packet) until it has sent N packets (idle-after).
 *       With 'offered' packets arrive at that constant bit rate into a
 *       1000-packet FIFO (drops counted), N then limits the arrivals.
 *       Sizes cycle in order (alternate, default) or are drawn uniformly
 *       (random). Default size: the mtu. Traffic for a class that does
 *       not exist (e.g. a rejected admission) goes to the qdisc's
 *       unclassified queue, which takes every second LOW-side turn.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arbt_print.h"
#include "arbtable_parse.h"
#include "arbsim.h"

/* ---------------------------------------------------------------------- */
/* tc-style value parsing                                                  */

/* tc's units through the parser the plugin and arbtablectl use
 * (lib/arbtable_parse.c); u64 is unsigned long long here
 */
static int parse_rate(const char *str, u64 *rate)
{
	uint64_t v;

	if (arbt_parse_rate(str, &v))
		return -1;
	*rate = v;
	return 0;
}

static int parse_time(const char *str, u64 *ns)
{
	uint64_t v;

	if (arbt_parse_time(str, &v))
		return -1;
	*ns = v;
	return 0;
}

static u32 size_arg(const char *what, const char *s)
{
	uint32_t v;

	if (arbt_parse_size(s, &v))
		die("bad %s \"%s\" (bytes, tc sizes: 30k)", what, s);
	return v;
}

int parse_u64(const char *s, int base, u64 *v)
{
	char *e;

	if (!*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoull(s, &e, base);
	return (*e || errno) ? -1 : 0;
}

static u64 dec_arg(const char *what, const char *s, u64 max)
{
	u64 v;

	if (parse_u64(s, 10, &v) || v > max)
		die("bad %s \"%s\" (decimal, at most %llu)", what, s,
		    max);
	return v;
}

/* "1:10", ":10" or "10": the minor, hex; a major must be the qdisc's. */
static u32 parse_classid(const struct sim *sim, const char *s)
{
	const char *c = strchr(s, ':');
	uint32_t maj, min;
	int err;

	if (c && c - s >= 8)
		die("bad class id \"%s\" (MAJ:MIN or MIN, hex)", s);
	err = arbt_parse_classid(s, &maj, &min);
	if (err == ARBT_CLASSID_MAJOR || (!err && maj && maj != sim->major))
		die("class id \"%s\" is not a class of the qdisc %x:",
		    s, sim->major);
	if (err)
		die("bad class id \"%s\" (MAJ:MIN or MIN, minor hex 1..ffff)",
		    c ? c + 1 : s);
	return min;
}
/* ---------------------------------------------------------------------- */
/* Statements                                                              */

static void parse_copts(char **tok, int n, struct copts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < n; i++) {
		const char *k = tok[i];
		const char *v = i + 1 < n ? tok[i + 1] : NULL;

		if (!strcmp(k, "strict") || !strcmp(k, "nostrict")) {
			o->has_strict = true;
			o->strict = k[0] == 's';
			continue;
		}
		if (!v)
			die("\"%s\" needs a value", k);
		i++;
		if (!strcmp(k, "ceil")) {
			if (parse_rate(v, &o->ceil))
				die("illegal \"ceil\" \"%s\"", v);
			o->has_ceil = true;
		} else if (!strcmp(k, "cburst")) {
			o->cburst = size_arg("cburst", v);
			o->has_cburst = true;
		} else if (!strcmp(k, "rate")) {
			if (parse_rate(v, &o->rate))
				die("illegal \"rate\" \"%s\"", v);
			o->has_rate = true;
		} else if (!strcmp(k, "latency")) {
			if (parse_time(v, &o->latency))
				die("illegal \"latency\" \"%s\" (e.g. 50us, 2ms)",
				    v);
			o->has_latency = true;
		} else if (!strcmp(k, "distance")) {
			o->distance = (u32)dec_arg("distance", v, 0xffffffffULL);
			o->has_distance = true;
		} else if (!strcmp(k, "share")) {
			o->share = (u32)dec_arg("share", v, 0xffffffffULL);
			o->has_share = true;
		} else {
			die("unknown class option \"%s\"", k);
		}
	}
}

/*
 * arbtable_class_check() + arbtable_auto_parse() + the plan/commit of
 * arbtable_change_class(), with the module's messages.
 */
static void do_qdisc(struct sim *s, char **tok, int n)
{
	struct arb_params p;
	bool have_rate = false;
	u32 burst = 0;
	int i;

	if (s->have_qdisc)
		die("only one qdisc statement");
	s->have_qdisc = true;
	s->autom = true;	/* the module's default mode */
	s->major = 1;
	s->highlimit = 16;
	s->accounting = ARB_ACCT_DEFICIT;
	s->mtu = 0;		/* not given: followed, as the module does */
	s->maxweight = 255;
	for (i = 0; i < n; i++) {
		const char *k = tok[i];
		const char *v = i + 1 < n ? tok[i + 1] : NULL;

		if (!strcmp(k, "manual") || !strcmp(k, "auto")) {
			s->autom = k[0] == 'a';
			continue;
		}
		if (!v)
			die("\"%s\" needs a value", k);
		i++;
		if (!strcmp(k, "handle")) {
			u64 maj;
			size_t len = strlen(v);

			/* "2:" as tc writes it, or "2" */
			if (len && v[len - 1] == ':')
				len--;
			if (!len || len > 4 || !isxdigit((unsigned char)v[0]) ||
			    strspn(v, "0123456789abcdefABCDEF") != len)
				die("bad handle \"%s\" (MAJ:, hex 1..ffff)", v);
			maj = strtoull(v, NULL, 16);
			if (!maj)
				die("bad handle \"%s\" (MAJ:, hex 1..ffff)", v);
			s->major = (u32)maj;
		} else if (!strcmp(k, "rate")) {
			if (parse_rate(v, &s->rate) || !s->rate)
				die("illegal \"rate\" \"%s\" (e.g. 10mbit)", v);
			have_rate = true;
		} else if (!strcmp(k, "highlimit")) {
			s->highlimit = (u8)dec_arg("highlimit", v, 255);
		} else if (!strcmp(k, "accounting")) {
			if (!strcmp(v, "deficit"))
				s->accounting = ARB_ACCT_DEFICIT;
			else if (!strcmp(v, "iba"))
				s->accounting = ARB_ACCT_IBA;
			else
				die("accounting \"%s\": deficit or iba", v);
		} else if (!strcmp(k, "mtu")) {
			s->mtu = (u32)dec_arg("mtu", v, ARB_MTU_MAX);
			if (s->mtu < ARB_MTU_MIN)
				die("mtu %u out of range %d..%d bytes", s->mtu,
				    ARB_MTU_MIN, ARB_MTU_MAX);
		} else if (!strcmp(k, "maxweight")) {
			s->maxweight = (u8)dec_arg("maxweight", v, 255);
			if (!s->maxweight)
				die("maxweight 0 out of range 1..255");
		} else if (!strcmp(k, "burst")) {
			/* accepted as tc takes it; the simulated link sends at
			 * exactly the rate and never pauses, so the qdisc
			 * bucket's depth changes nothing here
			 */
			burst = size_arg("burst", v);
		} else {
			die("unknown qdisc option \"%s\"", k);
		}
	}
	if (!have_rate)
		die("the qdisc needs a rate: arbsim simulates a link of that speed");
	/* an Ethernet NIC at mtu 1500 whose GSO skbs are up to 64 KiB */
	if (!s->mtu)
		s->mtu = arb_follow_mtu(1514, 65536, 14, s->rate);
	if (burst > TC_ARBTABLE_BURST_MAX)
		die("burst out of range: at most 256 MiB (0 = default)");
	if (burst && burst < s->mtu)
		die("burst %u is below the mtu %u: the rate must let one whole packet through",
		    burst, s->mtu);
	s->burst = burst;
	if (s->rate > ARB_RATE_MAX)
		die("rate above 2^48 bytes/s");
	s->rate_bits = s->rate * 8;
	arb_init(&s->arb, s->highlimit, s->accounting);
	arb_alloc_init(&s->alloc[ARB_HIGH], s->maxweight);
	arb_alloc_init(&s->alloc[ARB_LOW], s->maxweight);
	if (s->autom) {
		arb_admit_params(s->rate, s->mtu, s->maxweight, s->highlimit, 0, 0, &p);
		if (arb_params_check(&p))
			die("auto mode cannot use rate %llu bytes/s with mtu %u",
			    s->rate, s->mtu);
	}
}

static void do_traffic(struct sim *s, char **tok, int n)
{
	struct traffic tr;
	struct sim_class *c;
	u32 minor;
	int i;

	if (n < 1)
		die("traffic needs a class id");
	minor = parse_classid(s, tok[0]);
	memset(&tr, 0, sizeof(tr));
	tr.on = true;
	for (i = 1; i < n; i++) {
		const char *k = tok[i];
		const char *v = i + 1 < n ? tok[i + 1] : NULL;

		if (!v)
			die("\"%s\" needs a value", k);
		i++;
		if (!strcmp(k, "size")) {
			char *copy = strdup(v), *t, *save = NULL;

			if (!copy)
				die("out of memory");
			tr.nsizes = 0;
			for (t = strtok_r(copy, ",", &save); t;
			     t = strtok_r(NULL, ",", &save)) {
				u64 sz = dec_arg("size", t, ARB_MAX_PKT_LEN);

				if (!sz)
					die("size 0");
				if (tr.nsizes == SIM_MAX_SIZES)
					die("at most %d sizes", SIM_MAX_SIZES);
				tr.sizes[tr.nsizes++] = (u32)sz;
			}
			free(copy);
			if (!tr.nsizes)
				die("empty size list");
		} else if (!strcmp(k, "mix")) {
			if (!strcmp(v, "random"))
				tr.random = true;
			else if (!strcmp(v, "alternate"))
				tr.random = false;
			else
				die("mix \"%s\": alternate or random", v);
		} else if (!strcmp(k, "idle-after")) {
			tr.limit = dec_arg("idle-after", v, UINT64_MAX);
			if (!tr.limit)
				die("idle-after 0: omit the traffic line instead");
		} else if (!strcmp(k, "offered")) {
			if (parse_rate(v, &tr.offered) || !tr.offered)
				die("illegal \"offered\" \"%s\"", v);
		} else {
			die("unknown traffic option \"%s\"", k);
		}
	}
	if (!tr.nsizes) {
		tr.sizes[0] = s->mtu;
		tr.nsizes = 1;
	}
	c = find_class(s, minor);
	if (!c && !s->autom)
		c = new_class(s, minor);
	if (!c) {
		unsigned int j;

		for (j = 0; j < s->nuncl; j++)
			if (s->uncl[j].minor == minor)
				break;
		if (j == s->nuncl) {
			if (s->nuncl == SIM_MAX_SOURCES)
				die("too many unclassified sources");
			s->nuncl++;
		}
		c = &s->uncl[j];
		memset(c, 0, sizeof(*c));
		c->minor = minor;
		c->table = ARB_NO_CLASS;
		c->used = true;
		fprintf(stderr,
			"arbsim: %s:%d: note: class %x:%x does not exist; its traffic goes to the unclassified queue\n",
			scen_name, scen_line, s->major, minor);
	}
	for (i = 0; i < (int)tr.nsizes; i++)
		if (tr.sizes[i] > s->mtu)
			fprintf(stderr,
				"arbsim: %s:%d: note: size %u above mtu %u: the bounds assume packets <= mtu\n",
				scen_name, scen_line, tr.sizes[i], s->mtu);
	c->tr = tr;
}

void parse_scenario(struct sim *s, FILE *f)
{
	char line[8192];
	char *tok[512];

	scen_line = 0;
	while (fgets(line, sizeof(line), f)) {
		char *p, *save = NULL;
		int n = 0;

		scen_line++;
		if (!strchr(line, '\n') && !feof(f))
			die("line too long");
		p = strchr(line, '#');
		if (p)
			*p = '\0';
		for (p = strtok_r(line, " \t\r\n", &save); p;
		     p = strtok_r(NULL, " \t\r\n", &save)) {
			if (n == (int)(sizeof(tok) / sizeof(tok[0])))
				die("too many words");
			tok[n++] = p;
		}
		if (!n)
			continue;
		if (!strcmp(tok[0], "qdisc")) {
			do_qdisc(s, tok + 1, n - 1);
			continue;
		}
		if (!s->have_qdisc)
			die("the first statement must be 'qdisc ... rate RATE'");
		if (!strcmp(tok[0], "high") || !strcmp(tok[0], "low")) {
			if (n != 2)
				die("%s takes one list (no spaces): none or MINOR:WEIGHT[@SLOT],...",
				    tok[0]);
			do_table(s, tok[0][0] == 'h' ? ARB_HIGH : ARB_LOW,
				 tok[1]);
		} else if (!strcmp(tok[0], "class") ||
			   !strcmp(tok[0], "change")) {
			struct copts o;
			u32 minor;

			if (n < 2)
				die("%s needs a class id", tok[0]);
			minor = parse_classid(s, tok[1]);
			parse_copts(tok + 2, n - 2, &o);
			do_class(s, tok[0][1] == 'l', minor, &o);
		} else if (!strcmp(tok[0], "del")) {
			if (n != 2)
				die("del takes one class id");
			do_del(s, parse_classid(s, tok[1]));
		} else if (!strcmp(tok[0], "traffic")) {
			do_traffic(s, tok + 1, n - 1);
		} else {
			die("unknown statement \"%s\"", tok[0]);
		}
	}
	if (!s->have_qdisc)
		die("no qdisc statement");
}

