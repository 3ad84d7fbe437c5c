// SPDX-License-Identifier: GPL-2.0
/*
 * arbsim: what-if analysis of an arbtable configuration in userspace, on the
 * same arbiter and allocator core the sch_arbtable module runs
 * (kernel/arbtable_core.c).
 *
 * It reads a scenario (qdisc options, manual tables or auto-mode
 * admissions in the tc syntax, traffic per class), prints the allocator's
 * decisions, then simulates the qdisc at its rate with every class
 * backlogged unless told otherwise, and prints the dequeue order, byte
 * shares against weight shares, worst gaps and head-of-line waits.
 * Output is deterministic (random size mixes use --seed).
 *
 * The scenario format is arbsim_scenario.c's; admission errors and
 * rejections are reported as decisions (with the module's message) and
 * the simulation goes on without that change; syntax errors stop arbsim
 * with exit status 2.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arbt_print.h"
#include "arbsim.h"

const char *const arbt_prog = "arbsim";
const char *scen_name = "-";
int scen_line;

void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "arbsim: %s:%d: ", scen_name, scen_line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);

	if (!p) {
		fprintf(stderr, "arbsim: out of memory\n");
		exit(2);
	}
	return p;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: arbsim [options] SCENARIO   (- reads standard input)\n"
"\n"
"Simulates an arbtable qdisc in userspace on the module's own arbiter and\n"
"allocator: allocator decisions, dequeue order, byte shares vs weight shares,\n"
"worst gaps between services, head-of-line waits. Deterministic.\n"
"\n"
"options:\n"
"  -n, --packets N   packets to simulate (default 100000)\n"
"  -o, --order N     print the first N dequeues (default 20)\n"
"  -j, --json        JSON output\n"
"  -s, --seed S      seed of the random size mixes (default 1)\n"
"  -h, --help        this text\n"
"\n"
"scenario (one statement a line, # comments):\n"
"  qdisc [manual|auto] [handle MAJ:] rate RATE [highlimit 0..255]\n"
"        [accounting deficit|iba]\n"
"        [mtu BYTES] [maxweight 1..255]          first line; rate = the link;\n"
"                                                handle: class ids' major (1:)\n"
"        [burst BYTES]                           (accepted, no effect: the\n"
"                                                simulated link never pauses)\n"
"  high LIST      manual mode: LIST := none | MINOR:WEIGHT[@SLOT]|-[,...]\n"
"  low LIST       (minors hex, weights 1..255 x 64 bytes, slots 0..63)\n"
"  class ID [strict|nostrict] [ceil RATE [cburst BYTES]] [rate RATE]\n"
"        [latency TIME | distance D] [share N]   tc class add (rate/latency/\n"
"                 distance/share: auto mode, admitted through the allocator)\n"
"  change ID OPTIONS                             tc class change\n"
"  del ID                                        tc class del\n"
"  traffic ID [size S[,S...]] [mix alternate|random] [idle-after N]\n"
"        [offered RATE]   backlogged unless offered (CBR into a 1000-packet\n"
"                         FIFO); idle-after: stop after N packets\n"
"  ID: MAJ:MIN or MIN (hex). RATE: tc units (kbit, mbit, gbit, bit, Bps, ...).\n"
"  TIME: ns, us, ms, s (bare = us, as tc). Defaults: auto, highlimit 16, deficit,\n"
"  maxweight 255, size = mtu; mtu as the module follows an Ethernet NIC at\n"
"  mtu 1500: 1514, from rate 1gbit up 74406 (a 64 KiB GSO skb kept whole).\n"
"\n"
"example:\n"
"  qdisc manual rate 10mbit highlimit 4 accounting iba mtu 4096\n"
"  high 6:127,1:63,7:254\n"
"  low 3:2\n"
"  traffic 6 size 4096\n"
"  traffic 1 size 4096\n"
"  traffic 7 size 4096\n"
"  traffic 3 size 4096\n"
"\n"
"exit status: 0 ok, 2 usage or scenario error. See arbsim(1).\n");
}

/* --NAME's count (optarg) into @v: 0, or -1 with the message */
static int count_arg(const char *name, const char *range, u64 max, u64 *v)
{
	if (!parse_u64(optarg, 10, v) && *v <= max)
		return 0;
	fprintf(stderr, "arbsim: bad --%s \"%s\" (%s)\n", name, optarg, range);
	return -1;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "packets", required_argument, NULL, 'n' },
		{ "order", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, 'j' },
		{ "seed", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	u64 packets = 100000, order_n = 20, seed = 1;
	bool json = false;
	struct sim *s;
	FILE *f;
	int opt;

	while ((opt = getopt_long(argc, argv, "n:o:js:h", lopts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			if (count_arg("packets", "0..1e9", 1000000000ULL, &packets))
				return 2;
			break;
		case 'o':
			if (count_arg("order", "0..1e7", 10000000ULL, &order_n))
				return 2;
			break;
		case 'j':
			json = true;
			break;
		case 's':
			if (parse_u64(optarg, 0, &seed)) {
				fprintf(stderr, "arbsim: bad --seed \"%s\"\n",
					optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	s = xcalloc(1, sizeof(*s));
	s->packets = packets;
	s->order_n = order_n < packets ? order_n : packets;
	s->seed = seed;
	scen_name = argv[optind];
	if (!strcmp(scen_name, "-")) {
		f = stdin;
	} else {
		f = fopen(scen_name, "r");
		if (!f) {
			fprintf(stderr, "arbsim: %s: %s\n", scen_name,
				strerror(errno));
			free(s);
			return 2;
		}
	}
	parse_scenario(s, f);
	if (f != stdin)
		fclose(f);

	simulate(s);
	if (json)
		print_json(s);
	else
		print_text(s);
	free(s->order);
	free(s->dec);
	free(s);
	return 0;
}
