// SPDX-License-Identifier: GPL-2.0
/*
 * q_arbtable.c	tc plugin for sch_arbtable, the InfiniBand-style VL
 *		arbitration table qdisc (64-slot HIGH and LOW tables of
 *		class:weight entries, highlimit, strict classes, an in-kernel
 *		allocator in auto mode).
 *
 * Built as q_arbtable.so and loaded by tc from TC_LIB_DIR. The netlink
 * contract is include/uapi/linux/pkt_sched_arbtable.h.
 *
 * Units are tc(8)'s (a bare time is microseconds, a bare rate bits/s,
 * a bare size bytes), through the parser arbtablectl, arbsim and
 * arbtable-cni share. An option given twice is refused, as q_ets's
 * "Duplicate" and q_htb's "Double" are. A value outside its attribute's
 * plain range is refused here, naming the option and the range: the
 * kernel refuses it too, by netlink policy, but tc then prints only
 * "integer out of range".  Rules across options and the allocator's
 * refusals are the kernel's alone, said in its extack message.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <inttypes.h>

#include "utils.h"
#include "tc_util.h"

#include <linux/pkt_sched_arbtable.h>

#include "arbtable_parse.h"

/* Largest rate and ceil the module takes, bytes/s (its policy) */
#define ARB_RATE_MAX	(1ULL << 48)
/* mtu: 0 (follow the device) or this range, bytes (ARB_MTU_MIN/MAX) */
#define ARB_MTU_MIN	64
#define ARB_MTU_MAX	(1024 * 1024)

/* Space tc gives us: tc_qdisc.c sends from a TCA_BUF_MAX (64 KiB) buffer,
 * tc_class.c from a 4 KiB one.
 */
#define ARB_QDISC_MSG_MAX	(64 * 1024)
#define ARB_CLASS_MSG_MAX	4096

#define ARB_UNUSED		__attribute__((unused))
/* iproute2 6.3 made the qdisc_util hooks take a const qdisc_util; the
 * build passes ARB_QU_CONST=const for such a tc (mk/plugin.mk reads
 * tc_util.h). The two layouts are the same: only the prototypes differ.
 */
#ifndef ARB_QU_CONST
#define ARB_QU_CONST
#endif
#define ARB_STR_(x)		#x
#define ARB_STR(x)		ARB_STR_(x)

static const char *const arb_table_name[TC_ARBTABLE_NTABLES] = {
	[TC_ARBTABLE_HIGH] = "high",
	[TC_ARBTABLE_LOW] = "low",
};

static void explain_full(void)
{
	fprintf(stderr,
		"Usage: ... arbtable [ manual | auto ] [ rate RATE [ burst BYTES ] ]\n"
		"                    [ highlimit BLOCKS ]\n"
		"                    [ accounting { deficit | iba } ] [ default MINOR ]\n"
		"                    [ priomap MINOR0 MINOR1 ... MINOR15 ] [ mtu BYTES ]\n"
		"                    [ maxweight WEIGHT ] [ high LIST ] [ low LIST ]\n"
		"                    [ [no]prioclassid ] [ [no]classifyforeign ]\n"
		"                    [ lockless | locked ]\n"
		"  LIST  := none | ENTRY[,ENTRY...]\n"
		"  ENTRY := MINOR:WEIGHT[@SLOT] | -\n"
		"\n"
		"  manual|auto  who programs the tables: the administrator (high/low\n"
		"               lists) or the in-kernel allocator (class rate/latency);\n"
		"               fixed when the qdisc is created (default auto)\n"
		"  rate         capacity, tc rate (10mbit, 1gbit, 5%%; bare: bit/s),\n"
		"               at most 2^48 bytes/s; 0 or absent = link speed;\n"
		"               below line rate it shapes\n"
		"  burst        bytes the rate may send back to back after a pause\n"
		"               (tc sizes: 30k, 1mb); at least mtu; 0 or absent =\n"
		"               max(2 x mtu, 10 ms at the rate)\n"
		"  highlimit    HIGH table bytes per LOW turn, in 4096-byte blocks;\n"
		"               0 = one packet, 255 = unlimited (kernel range 0..255)\n"
		"  accounting   deficit: overshoot carried as debt (exact byte shares,\n"
		"               default); iba: overshoot forgiven (IBA literal)\n"
		"  default      class minor (hex) for unclassified traffic, 0 = none\n"
		"  priomap      16 class minors (hex) indexed by skb->priority & 15,\n"
		"               0 = unmapped\n"
		"  mtu          largest packet, tc size (1514, 9k), 64..1048576 bytes,\n"
		"               used for bounds and the LOW share; 0 or absent =\n"
		"               the device's frame, followed when it changes\n"
		"  maxweight    auto mode cap of every slot's weight, 1..255 (default 255)\n"
		"  noprioclassid  skb->priority naming a class does not select it\n"
		"               (default prioclassid; the priomap still applies)\n"
		"  noclassifyforeign  packets not routed in this netns (macvlan or\n"
		"               ipvlan L2 of another netns, bridged) go to the default\n"
		"               class: no priority, no filters (default classifyforeign)\n"
		"  lockless|locked  a root qdisc without a lock every sending CPU\n"
		"               takes (one ring per class, no child qdiscs), or the\n"
		"               locked mode, which takes any child; fixed when the\n"
		"               qdisc is created (default locked)\n"
		"  high, low    the 64-slot tables (manual mode): MINOR is a class minor\n"
		"               in hex as in classids (10 = class 1:10), WEIGHT in\n"
		"               64-byte units (1..255), SLOT 0..63; an entry without\n"
		"               @SLOT takes the slot after the previous one (first: 0);\n"
		"               '-' leaves a null slot; 'none' clears the table.\n"
		"               Each list replaces the whole table; classes must exist.\n"
		"Example: ... arbtable manual rate 10mbit highlimit 4 high 10:127,11:63,-,12:5 low 30:2\n");
}

static void cexplain_full(void)
{
	fprintf(stderr,
		"Usage: ... arbtable [ strict | nostrict ] [ ceil RATE [ cburst BYTES ] ]\n"
		"                    [ rate RATE ]\n"
		"                    [ latency TIME | distance D ] [ share N ]\n"
		"\n"
		"  strict     serve this class before both tables (IB VL15 analogue);\n"
		"             give it a ceil when guaranteed classes exist\n"
		"  ceil       per-class rate limit in bits/s with tc units (100mbit);\n"
		"             0 removes it\n"
		"  cburst     bytes the ceil may send back to back after a pause\n"
		"             (30k); at least mtu; 0 = max(2 x mtu, 10 ms at the ceil)\n"
		"  rate       auto mode: guaranteed rate to reserve in the HIGH table\n"
		"  latency    auto mode: head-of-line wait bound, tc time (50us, 1ms;\n"
		"             a bare number is microseconds); picks the slot distance\n"
		"  distance   auto mode: slot spacing instead of latency, power of two\n"
		"             1..64 (64/D slots)\n"
		"  share      auto mode: best-effort weight in the LOW table, 1..255\n");
}

/* After a parse error: the error line, then one line of usage (q_ets). */
static void explain(void)
{
	fprintf(stderr,
		"Usage: ... arbtable [ manual | auto ] [ rate RATE [ burst BYTES ] ] [ high LIST ] [ low LIST ] ... (\"arbtable help\" for all)\n");
}

static void cexplain(void)
{
	fprintf(stderr,
		"Usage: ... arbtable [ strict ] [ ceil RATE ] [ rate RATE ] [ latency TIME | distance D ] [ share N ] ... (\"arbtable help\" for all)\n");
}

/* --- parsing ----------------------------------------------------------- */

/* An option given twice is refused (q_ets: Duplicate "bands"); @seen is
 * set for the next time.
 */
static int arb_once(bool *seen, const char *name, void (*usage)(void))
{
	if (*seen) {
		fprintf(stderr, "arbtable: duplicate \"%s\"\n", name);
		usage();
		return -1;
	}
	*seen = true;
	return 0;
}

/* Values go through the parser arbtablectl and arbsim use
 * (lib/arbtable_parse.c: tc's units, overflow refused); only a percent
 * rate, which needs the device's speed, is tc's own.
 */
static int arb_get_rate(__u64 *rate, const char *arg, const char *dev)
{
	uint64_t v;

	if (arg[0] == '-')
		return -1;
	if (strchr(arg, '%'))
		return get_percent_rate64(rate, arg, dev);
	if (arbt_parse_rate(arg, &v))
		return -1;
	*rate = v;
	return 0;
}

static int arb_get_dec(__u32 *val, const char *arg)
{
	return arbt_parse_u32(arg, 10, val);
}

/*
 * Parse "none" or "MINOR:WEIGHT[@SLOT]|-[,...]" (lib/arbtable_parse.c,
 * which refuses a slot's position, weight and class out of range and a
 * slot given twice) and append the nest TCA_ARBTABLE_HIGH/LOW with one
 * TCA_ARBTABLE_TBL_SLOT per slot from slot 0 to the last named, empty
 * for a null slot.
 */
static int arb_parse_table(struct nlmsghdr *n, int type, const char *name,
			   const char *arg)
{
	struct rtattr *nest, *slot;
	struct arbt_table t;
	char err[200];
	unsigned int i;

	if (arbt_table_parse(arg, name, &t, err, sizeof(err))) {
		fprintf(stderr, "arbtable: %s\n", err);
		return -1;
	}
	nest = addattr_nest(n, ARB_QDISC_MSG_MAX, type | NLA_F_NESTED);
	for (i = 0; i < t.nslots; i++) {
		slot = addattr_nest(n, ARB_QDISC_MSG_MAX,
				    TCA_ARBTABLE_TBL_SLOT | NLA_F_NESTED);
		if (t.weight[i]) {
			addattr32(n, ARB_QDISC_MSG_MAX, TCA_ARBTABLE_SLOT_CLASS,
				  t.minor[i]);
			addattr32(n, ARB_QDISC_MSG_MAX, TCA_ARBTABLE_SLOT_WEIGHT,
				  t.weight[i]);
		}
		addattr_nest_end(n, slot);
	}
	addattr_nest_end(n, nest);
	return 0;
}

/* 0: [no]prioclassid, 1: [no]classifyforeign, -1: neither */
static int arb_limit_kw(const char *arg)
{
	if (strncmp(arg, "no", 2) == 0)
		arg += 2;
	if (strcmp(arg, "prioclassid") == 0)
		return 0;
	if (strcmp(arg, "classifyforeign") == 0)
		return 1;
	return -1;
}

/* JSON always; text only when off, the default being on */
static void arb_print_limit(struct rtattr *a, const char *key)
{
	bool on;

	if (!a || RTA_PAYLOAD(a) < sizeof(__u32))
		return;
	on = rta_getattr_u32(a) != 0;
	print_bool(PRINT_JSON, key, NULL, on);
	if (!on)
		print_string(PRINT_FP, NULL, "no%s ", key);
}

static int arb_parse_opt(ARB_QU_CONST struct qdisc_util *qu ARB_UNUSED, int argc, char **argv,
			 struct nlmsghdr *n, const char *dev)
{
	const char *table_arg[TC_ARBTABLE_NTABLES] = {};
	bool have_table[TC_ARBTABLE_NTABLES] = {};
	__u32 priomap[TC_ARBTABLE_PRIO_BANDS];
	bool have_mode = false, have_rate = false, have_highlimit = false;
	bool have_acct = false, have_default = false, have_priomap = false;
	bool have_mtu = false, have_maxweight = false, have_burst = false;
	__u32 highlimit = 0, acct = 0, defcls = 0, mtu = 0, maxweight = 0;
	__u32 burst = 0;
	/* prioclassid, classifyforeign: -1 not given, else 0/1 */
	int lim[2] = { -1, -1 };
	static const char * const lim_kw[2] = { "prioclassid", "classifyforeign" };
	int lockless = -1;	/* not given, else 0/1 */
	__u32 mode = TC_ARBTABLE_MODE_MANUAL;
	struct rtattr *tail, *nest;
	__u64 rate = 0;
	int i;

	while (argc > 0) {
		if (strcmp(*argv, "manual") == 0 || strcmp(*argv, "auto") == 0) {
			__u32 m = strcmp(*argv, "auto") == 0 ?
				 TC_ARBTABLE_MODE_AUTO : TC_ARBTABLE_MODE_MANUAL;

			if (have_mode && m != mode) {
				fprintf(stderr,
					"arbtable: \"manual\" and \"auto\" are exclusive\n");
				explain();
				return -1;
			}
			if (arb_once(&have_mode, *argv, explain))
				return -1;
			mode = m;
		} else if (strcmp(*argv, "rate") == 0) {
			if (arb_once(&have_rate, *argv, explain))
				return -1;
			NEXT_ARG();
			if (arb_get_rate(&rate, *argv, dev) || rate > ARB_RATE_MAX) {
				fprintf(stderr,
					"arbtable: illegal \"rate\" \"%s\" (0 = link speed, at most 2^48 bytes/s)\n",
					*argv);
				explain();
				return -1;
			}
		} else if (strcmp(*argv, "highlimit") == 0) {
			if (arb_once(&have_highlimit, *argv, explain))
				return -1;
			NEXT_ARG();
			if (arb_get_dec(&highlimit, *argv) ||
			    highlimit > TC_ARBTABLE_HIGHLIMIT_MAX) {
				fprintf(stderr,
					"arbtable: illegal \"highlimit\" \"%s\" (4096-byte blocks, 0..255)\n",
					*argv);
				explain();
				return -1;
			}
		} else if (strcmp(*argv, "accounting") == 0) {
			if (arb_once(&have_acct, *argv, explain))
				return -1;
			NEXT_ARG();
			if (strcmp(*argv, "deficit") == 0) {
				acct = TC_ARBTABLE_ACCT_DEFICIT;
			} else if (strcmp(*argv, "iba") == 0) {
				acct = TC_ARBTABLE_ACCT_IBA;
			} else {
				fprintf(stderr,
					"arbtable: illegal \"accounting\" \"%s\" (deficit or iba)\n",
					*argv);
				explain();
				return -1;
			}
		} else if (strcmp(*argv, "default") == 0) {
			if (arb_once(&have_default, *argv, explain))
				return -1;
			NEXT_ARG();
			if (arbt_parse_u32(*argv, 16, &defcls) ||
			    defcls > TC_H_MIN_MASK) {
				fprintf(stderr,
					"arbtable: illegal \"default\" \"%s\" (class minor in hex, 0..ffff)\n",
					*argv);
				explain();
				return -1;
			}
		} else if (strcmp(*argv, "priomap") == 0) {
			if (arb_once(&have_priomap, *argv, explain))
				return -1;
			for (i = 0; i < TC_ARBTABLE_PRIO_BANDS; i++) {
				if (argc <= 1 ||
				    arbt_parse_u32(argv[1], 16, &priomap[i]) ||
				    priomap[i] > TC_H_MIN_MASK) {
					fprintf(stderr,
						"arbtable: \"priomap\" needs %d class minors (hex 0..ffff, 0 = unmapped); element %d is %s%s%s\n",
						TC_ARBTABLE_PRIO_BANDS, i,
						argc <= 1 ? "missing" : "\"",
						argc <= 1 ? "" : argv[1],
						argc <= 1 ? "" : "\"");
					explain();
					return -1;
				}
				argc--;
				argv++;
			}
		} else if (strcmp(*argv, "mtu") == 0) {
			if (arb_once(&have_mtu, *argv, explain))
				return -1;
			NEXT_ARG();
			if (arbt_parse_size(*argv, &mtu) ||
			    (mtu && (mtu < ARB_MTU_MIN || mtu > ARB_MTU_MAX))) {
				fprintf(stderr,
					"arbtable: illegal \"mtu\" \"%s\" (0 = the device's, or 64..1048576 bytes)\n",
					*argv);
				explain();
				return -1;
			}
		} else if (strcmp(*argv, "burst") == 0) {
			if (arb_once(&have_burst, *argv, explain))
				return -1;
			NEXT_ARG();
			if (arbt_parse_size(*argv, &burst) ||
			    burst > TC_ARBTABLE_BURST_MAX) {
				fprintf(stderr,
					"arbtable: illegal \"burst\" \"%s\" (bytes, tc sizes: 30k; at most 256 MiB)\n",
					*argv);
				explain();
				return -1;
			}
		} else if (strcmp(*argv, "maxweight") == 0) {
			if (arb_once(&have_maxweight, *argv, explain))
				return -1;
			NEXT_ARG();
			if (arb_get_dec(&maxweight, *argv) || !maxweight ||
			    maxweight > TC_ARBTABLE_WEIGHT_MAX) {
				fprintf(stderr,
					"arbtable: illegal \"maxweight\" \"%s\" (1..255)\n",
					*argv);
				explain();
				return -1;
			}
		} else if (strcmp(*argv, "high") == 0 || strcmp(*argv, "low") == 0) {
			int t = strcmp(*argv, "high") == 0 ?
				TC_ARBTABLE_HIGH : TC_ARBTABLE_LOW;

			if (arb_once(&have_table[t], *argv, explain))
				return -1;
			NEXT_ARG();
			table_arg[t] = *argv;
		} else if (strcmp(*argv, "lockless") == 0 ||
			   strcmp(*argv, "locked") == 0) {
			int v = strcmp(*argv, "lockless") == 0;

			if (lockless >= 0) {
				fprintf(stderr,
					"arbtable: \"%s\" given twice or with \"%s\"\n",
					*argv, v ? "locked" : "lockless");
				explain();
				return -1;
			}
			lockless = v;
		} else if (arb_limit_kw(*argv) >= 0) {
			int k = arb_limit_kw(*argv);
			int v = strncmp(*argv, "no", 2) != 0;

			if (lim[k] >= 0) {
				fprintf(stderr,
					"arbtable: \"%s\" given twice or with \"%s%s\"\n",
					*argv, v ? "no" : "", lim_kw[k]);
				explain();
				return -1;
			}
			lim[k] = v;
		} else if (strcmp(*argv, "help") == 0) {
			explain_full();
			return -1;
		} else {
			fprintf(stderr, "arbtable: what is \"%s\"?\n", *argv);
			explain();
			return -1;
		}
		argc--;
		argv++;
	}

	tail = addattr_nest(n, ARB_QDISC_MSG_MAX, TCA_OPTIONS | NLA_F_NESTED);
	if (have_mode)
		addattr32(n, ARB_QDISC_MSG_MAX, TCA_ARBTABLE_MODE, mode);
	if (have_rate)
		addattr64(n, ARB_QDISC_MSG_MAX, TCA_ARBTABLE_RATE, rate);
	if (have_highlimit)
		addattr32(n, ARB_QDISC_MSG_MAX, TCA_ARBTABLE_HIGHLIMIT, highlimit);
	if (have_acct)
		addattr32(n, ARB_QDISC_MSG_MAX, TCA_ARBTABLE_ACCOUNTING, acct);
	if (have_default)
		addattr32(n, ARB_QDISC_MSG_MAX, TCA_ARBTABLE_DEFAULT, defcls);
	if (have_priomap) {
		nest = addattr_nest(n, ARB_QDISC_MSG_MAX,
				    TCA_ARBTABLE_PRIOMAP | NLA_F_NESTED);
		for (i = 0; i < TC_ARBTABLE_PRIO_BANDS; i++)
			addattr32(n, ARB_QDISC_MSG_MAX,
				  TCA_ARBTABLE_PRIOMAP_BAND, priomap[i]);
		addattr_nest_end(n, nest);
	}
	if (have_mtu)
		addattr32(n, ARB_QDISC_MSG_MAX, TCA_ARBTABLE_MTU, mtu);
	if (have_maxweight)
		addattr32(n, ARB_QDISC_MSG_MAX, TCA_ARBTABLE_MAXWEIGHT, maxweight);
	if (have_burst)
		addattr32(n, ARB_QDISC_MSG_MAX, TCA_ARBTABLE_BURST, burst);
	if (lim[0] >= 0)
		addattr32(n, ARB_QDISC_MSG_MAX, TCA_ARBTABLE_PRIO_CLASSID, lim[0]);
	if (lim[1] >= 0)
		addattr32(n, ARB_QDISC_MSG_MAX, TCA_ARBTABLE_CLASSIFY_FOREIGN,
			  lim[1]);
	if (lockless >= 0)
		addattr32(n, ARB_QDISC_MSG_MAX, TCA_ARBTABLE_LOCKLESS, lockless);
	for (i = 0; i < TC_ARBTABLE_NTABLES; i++) {
		if (!table_arg[i])
			continue;
		if (arb_parse_table(n, i == TC_ARBTABLE_HIGH ?
				    TCA_ARBTABLE_HIGH : TCA_ARBTABLE_LOW,
				    arb_table_name[i], table_arg[i])) {
			explain();
			return -1;
		}
	}
	addattr_nest_end(n, tail);
	return 0;
}

static int arb_parse_copt(ARB_QU_CONST struct qdisc_util *qu ARB_UNUSED, int argc, char **argv,
			  struct nlmsghdr *n, const char *dev)
{
	bool have_strict = false, have_ceil = false, have_rate = false;
	bool have_latency = false, have_distance = false, have_share = false;
	__u64 ceil = 0, rate = 0, latency = 0;
	__u32 distance = 0, share = 0, cburst = 0;
	bool have_cburst = false;
	struct rtattr *tail;
	__u32 strict = 0;

	while (argc > 0) {
		if (strcmp(*argv, "strict") == 0 ||
		    strcmp(*argv, "nostrict") == 0) {
			__u8 st = strcmp(*argv, "strict") == 0;

			if (have_strict && st != strict) {
				fprintf(stderr,
					"arbtable: \"strict\" and \"nostrict\" are exclusive\n");
				cexplain();
				return -1;
			}
			if (arb_once(&have_strict, *argv, cexplain))
				return -1;
			strict = st;
		} else if (strcmp(*argv, "ceil") == 0) {
			if (arb_once(&have_ceil, *argv, cexplain))
				return -1;
			NEXT_ARG();
			if (arb_get_rate(&ceil, *argv, dev) || ceil > ARB_RATE_MAX) {
				fprintf(stderr,
					"arbtable: illegal \"ceil\" \"%s\" (0 = none, at most 2^48 bytes/s)\n",
					*argv);
				cexplain();
				return -1;
			}
		} else if (strcmp(*argv, "cburst") == 0) {
			if (arb_once(&have_cburst, *argv, cexplain))
				return -1;
			NEXT_ARG();
			if (arbt_parse_size(*argv, &cburst) ||
			    cburst > TC_ARBTABLE_BURST_MAX) {
				fprintf(stderr,
					"arbtable: illegal \"cburst\" \"%s\" (bytes, tc sizes: 30k; at most 256 MiB)\n",
					*argv);
				cexplain();
				return -1;
			}
		} else if (strcmp(*argv, "rate") == 0) {
			if (arb_once(&have_rate, *argv, cexplain))
				return -1;
			NEXT_ARG();
			if (arb_get_rate(&rate, *argv, dev) || !rate ||
			    rate > ARB_RATE_MAX) {
				fprintf(stderr,
					"arbtable: illegal \"rate\" \"%s\" (above 0, at most 2^48 bytes/s)\n",
					*argv);
				cexplain();
				return -1;
			}
		} else if (strcmp(*argv, "latency") == 0) {
			uint64_t t;

			if (arb_once(&have_latency, *argv, cexplain))
				return -1;
			NEXT_ARG();
			if (arbt_parse_time(*argv, &t) || !t) {
				fprintf(stderr,
					"arbtable: illegal \"latency\" \"%s\" (above 0, e.g. 50us, 2ms)\n",
					*argv);
				cexplain();
				return -1;
			}
			latency = t;
		} else if (strcmp(*argv, "distance") == 0) {
			if (arb_once(&have_distance, *argv, cexplain))
				return -1;
			NEXT_ARG();
			if (arb_get_dec(&distance, *argv) || !distance ||
			    distance > TC_ARBTABLE_SLOTS) {
				fprintf(stderr,
					"arbtable: illegal \"distance\" \"%s\" (1, 2, 4, ... 64)\n",
					*argv);
				cexplain();
				return -1;
			}
		} else if (strcmp(*argv, "share") == 0) {
			if (arb_once(&have_share, *argv, cexplain))
				return -1;
			NEXT_ARG();
			if (arb_get_dec(&share, *argv) || !share ||
			    share > TC_ARBTABLE_WEIGHT_MAX) {
				fprintf(stderr,
					"arbtable: illegal \"share\" \"%s\" (1..255)\n",
					*argv);
				cexplain();
				return -1;
			}
		} else if (strcmp(*argv, "help") == 0) {
			cexplain_full();
			return -1;
		} else {
			fprintf(stderr, "arbtable: what is \"%s\"?\n", *argv);
			cexplain();
			return -1;
		}
		argc--;
		argv++;
	}

	tail = addattr_nest(n, ARB_CLASS_MSG_MAX, TCA_OPTIONS | NLA_F_NESTED);
	if (have_strict)
		addattr32(n, ARB_CLASS_MSG_MAX, TCA_ARBTABLE_C_STRICT, strict);
	if (have_ceil)
		addattr64(n, ARB_CLASS_MSG_MAX, TCA_ARBTABLE_C_CEIL, ceil);
	if (have_cburst)
		addattr32(n, ARB_CLASS_MSG_MAX, TCA_ARBTABLE_C_CBURST, cburst);
	if (have_rate)
		addattr64(n, ARB_CLASS_MSG_MAX, TCA_ARBTABLE_C_RATE, rate);
	if (have_latency)
		addattr64(n, ARB_CLASS_MSG_MAX, TCA_ARBTABLE_C_LATENCY, latency);
	if (have_distance)
		addattr32(n, ARB_CLASS_MSG_MAX, TCA_ARBTABLE_C_DISTANCE, distance);
	if (have_share)
		addattr32(n, ARB_CLASS_MSG_MAX, TCA_ARBTABLE_C_SHARE, share);
	addattr_nest_end(n, tail);
	return 0;
}

/* --- printing ---------------------------------------------------------- */

struct arb_table {
	__u32	minor[TC_ARBTABLE_SLOTS];
	__u32	weight[TC_ARBTABLE_SLOTS];
	__u64	used;		/* slots with a class and weight > 0 */
};

/* One nest per slot from slot 0 (an empty one: a null slot) */
static void arb_decode_table(struct arb_table *t, const struct rtattr *nest)
{
	struct rtattr *tb[TCA_ARBTABLE_SLOT_MAX + 1];
	const struct rtattr *rta;
	int len, s = 0;

	memset(t, 0, sizeof(*t));
	if (!nest)
		return;

	len = RTA_PAYLOAD(nest);
	for (rta = RTA_DATA(nest); RTA_OK(rta, len) && s < TC_ARBTABLE_SLOTS;
	     rta = RTA_NEXT(rta, len), s++) {
		if ((rta->rta_type & ~NLA_F_NESTED) != TCA_ARBTABLE_TBL_SLOT)
			continue;
		parse_rtattr_nested(tb, TCA_ARBTABLE_SLOT_MAX, rta);
		if (tb[TCA_ARBTABLE_SLOT_CLASS] &&
		    RTA_PAYLOAD(tb[TCA_ARBTABLE_SLOT_CLASS]) >= sizeof(__u32))
			t->minor[s] = rta_getattr_u32(tb[TCA_ARBTABLE_SLOT_CLASS]);
		if (tb[TCA_ARBTABLE_SLOT_WEIGHT] &&
		    RTA_PAYLOAD(tb[TCA_ARBTABLE_SLOT_WEIGHT]) >= sizeof(__u32))
			t->weight[s] = rta_getattr_u32(tb[TCA_ARBTABLE_SLOT_WEIGHT]);
		if (t->minor[s] && t->weight[s])
			t->used |= 1ULL << s;
	}
}

static int arb_last_slot(__u64 mask)
{
	return mask ? 63 - __builtin_clzll(mask) : -1;
}

/* The round-trippable form: "10:127,11:63,-,12:5" (slot 0 .. last used). */
static void arb_print_table_line(const char *name, const struct arb_table *t)
{
	char buf[TC_ARBTABLE_SLOTS * 24];
	int last = arb_last_slot(t->used);
	size_t off = 0;
	int s;

	if (last < 0)
		return;

	for (s = 0; s <= last; s++) {
		const char *sep = s ? "," : "";

		if (t->used & (1ULL << s))
			off += snprintf(buf + off, sizeof(buf) - off, "%s%x:%u",
					sep, t->minor[s], t->weight[s]);
		else
			off += snprintf(buf + off, sizeof(buf) - off, "%s-", sep);
		if (off >= sizeof(buf))
			break;
	}
	print_string(PRINT_FP, NULL, "%s ", name);
	print_string(PRINT_FP, NULL, "%s ", buf);
}

/*
 * The qdisc's major, for the classes its options name. The options carry
 * only minors and tc hands print_qopt the TCA_OPTIONS attribute alone,
 * but always inside the message it received: the kernel's dump
 * (tc_fill_qdisc) is the tcmsg, TCA_KIND, then the qdisc's TCA_OPTIONS.
 * When TCA_KIND "arbtable" is right before @opt the tcmsg before it has
 * the handle; otherwise 0.
 */
static __u32 arb_msg_major(const struct rtattr *opt)
{
	static const char kind[] = "arbtable";
	const struct rtattr *k;
	const struct tcmsg *t;

	k = (const void *)((const char *)opt -
			   RTA_ALIGN(RTA_LENGTH(sizeof(kind))));
	if (k->rta_type != TCA_KIND ||
	    k->rta_len != RTA_LENGTH(sizeof(kind)) ||
	    memcmp(RTA_DATA(k), kind, sizeof(kind)))
		return 0;
	t = (const void *)((const char *)k - NLMSG_ALIGN(sizeof(*t)));
	return TC_H_MAJ(t->tcm_handle);
}

static __u32 arb_major;	/* of the qdisc being printed, 0 if unknown */

/*
 * JSON: a class the qdisc's options name (default, priomap, table slots)
 * as tc prints a class id: "1:10"; ":10" (tc's minor-only spelling) if
 * the major could not be found; "" for none.
 */
static void arb_print_class_ref(const char *key, __u32 minor)
{
	char b[16] = "";

	if (minor && arb_major)
		snprintf(b, sizeof(b), "%x:%x", arb_major >> 16, minor);
	else if (minor)
		snprintf(b, sizeof(b), ":%x", minor);
	print_string(PRINT_JSON, key, NULL, b);
}

static void arb_print_table_json(const char *name, const struct arb_table *t)
{
	int s;

	open_json_array(PRINT_JSON, name);
	for (s = 0; s < TC_ARBTABLE_SLOTS; s++) {
		if (!(t->used & (1ULL << s)))
			continue;
		open_json_object(NULL);
		print_uint(PRINT_JSON, "slot", NULL, s);
		arb_print_class_ref("class", t->minor[s]);
		print_uint(PRINT_JSON, "weight", NULL, t->weight[s]);
		close_json_object();
	}
	close_json_array(PRINT_JSON, NULL);
}

/* Rows of the -d views: cells padded to a column, trailing blanks cut. */
struct arb_row {
	char	buf[256];
	size_t	len;
};

static void arb_row_add(struct arb_row *r, const char *cell, int width)
{
	int n = snprintf(r->buf + r->len, sizeof(r->buf) - r->len, " %-*s",
			 width, cell);

	if (n > 0)
		r->len += n;
	if (r->len >= sizeof(r->buf))
		r->len = sizeof(r->buf) - 1;
}

static void arb_row_flush(struct arb_row *r)
{
	while (r->len && r->buf[r->len - 1] == ' ')
		r->len--;
	r->buf[r->len] = '\0';
	if (r->len) {
		print_nl();
		print_string(PRINT_FP, NULL, "%s", r->buf);
	}
	r->len = 0;
}

/* -d: the whole 64-slot layout, 8 slots a line, "slot:minor/weight". */
static void arb_print_slot_map(const char *name, const struct arb_table *t)
{
	struct arb_row row = {};
	int s, n = 0;

	print_nl();
	print_string(PRINT_FP, NULL, " %s table", name);
	print_uint(PRINT_FP, NULL, " (%u/" ARB_STR(TC_ARBTABLE_SLOTS)
		   " slots used)", __builtin_popcountll(t->used));
	if (!t->used)
		return;
	/* the used slots only, eight to a line: null slots are the gaps */
	print_string(PRINT_FP, NULL, "%s", ":");
	for (s = 0; s < TC_ARBTABLE_SLOTS; s++) {
		char cell[32];

		if (!(t->used & (1ULL << s)))
			continue;
		if (n % 8 == 0) {
			arb_row_flush(&row);
			arb_row_add(&row, "", 0);
		}
		snprintf(cell, sizeof(cell), "%u:%x/%u", s, t->minor[s],
			 t->weight[s]);
		arb_row_add(&row, cell, 11);
		n++;
	}
	arb_row_flush(&row);
}

static void arb_print_priomap(const struct rtattr *nest)
{
	__u32 band[TC_ARBTABLE_PRIO_BANDS] = {};
	const struct rtattr *rta;
	bool any = false;
	int len, i = 0;

	len = RTA_PAYLOAD(nest);
	for (rta = RTA_DATA(nest); RTA_OK(rta, len) && i < TC_ARBTABLE_PRIO_BANDS;
	     rta = RTA_NEXT(rta, len)) {
		if ((rta->rta_type & ~NLA_F_NESTED) != TCA_ARBTABLE_PRIOMAP_BAND ||
		    RTA_PAYLOAD(rta) < sizeof(__u32))
			continue;
		band[i] = rta_getattr_u32(rta);
		if (band[i])
			any = true;
		i++;
	}
	/* JSON always has the 16 bands; the line only a map in use */
	open_json_array(PRINT_JSON, "priomap");
	for (i = 0; i < TC_ARBTABLE_PRIO_BANDS; i++)
		arb_print_class_ref(NULL, band[i]);
	close_json_array(PRINT_JSON, NULL);
	if (!any)
		return;

	print_string(PRINT_FP, NULL, "%s", "priomap");
	for (i = 0; i < TC_ARBTABLE_PRIO_BANDS; i++)
		print_hex(PRINT_FP, NULL, " %x", band[i]);
	print_string(PRINT_FP, NULL, "%s", " ");
}

static int arb_print_opt(ARB_QU_CONST struct qdisc_util *qu ARB_UNUSED,
			 FILE *f ARB_UNUSED, struct rtattr *opt)
{
	struct rtattr *tb[TCA_ARBTABLE_MAX + 1];
	struct arb_table table[TC_ARBTABLE_NTABLES];
	bool is_auto = false;
	int i;

	if (!opt)
		return 0;

	parse_rtattr_nested(tb, TCA_ARBTABLE_MAX, opt);
	arb_major = arb_msg_major(opt);

	if (tb[TCA_ARBTABLE_MODE] &&
	    RTA_PAYLOAD(tb[TCA_ARBTABLE_MODE]) >= sizeof(__u32)) {
		__u32 mode = rta_getattr_u32(tb[TCA_ARBTABLE_MODE]);

		if (mode == TC_ARBTABLE_MODE_AUTO) {
			is_auto = true;
			print_string(PRINT_ANY, "mode", "%s ", "auto");
		} else if (mode == TC_ARBTABLE_MODE_MANUAL) {
			print_string(PRINT_ANY, "mode", "%s ", "manual");
		} else {
			char b[11];	/* a u32 */

			/* a string still: one JSON type per key */
			snprintf(b, sizeof(b), "%u", mode);
			print_string(PRINT_ANY, "mode", "mode %s ", b);
		}
	}

	if (tb[TCA_ARBTABLE_RATE] &&
	    RTA_PAYLOAD(tb[TCA_ARBTABLE_RATE]) >= sizeof(__u64)) {
		__u64 rate = rta_getattr_u64(tb[TCA_ARBTABLE_RATE]);

		if (rate)
			tc_print_rate(PRINT_ANY, "rate", "rate %s ", rate);
		else
			print_u64(PRINT_JSON, "rate", NULL, 0);
	}

	/* only when set: absent means the default depth */
	if (tb[TCA_ARBTABLE_BURST] &&
	    RTA_PAYLOAD(tb[TCA_ARBTABLE_BURST]) >= sizeof(__u32))
		print_size(PRINT_ANY, "burst", "burst %s ",
			   rta_getattr_u32(tb[TCA_ARBTABLE_BURST]));

	if (tb[TCA_ARBTABLE_HIGHLIMIT] &&
	    RTA_PAYLOAD(tb[TCA_ARBTABLE_HIGHLIMIT]) >= sizeof(__u32))
		print_uint(PRINT_ANY, "highlimit", "highlimit %u ",
			   rta_getattr_u32(tb[TCA_ARBTABLE_HIGHLIMIT]));

	if (tb[TCA_ARBTABLE_ACCOUNTING] &&
	    RTA_PAYLOAD(tb[TCA_ARBTABLE_ACCOUNTING]) >= sizeof(__u32)) {
		__u32 acct = rta_getattr_u32(tb[TCA_ARBTABLE_ACCOUNTING]);

		if (acct == TC_ARBTABLE_ACCT_DEFICIT)
			print_string(PRINT_ANY, "accounting", "accounting %s ",
				     "deficit");
		else if (acct == TC_ARBTABLE_ACCT_IBA)
			print_string(PRINT_ANY, "accounting", "accounting %s ",
				     "iba");
		else {
			char b[12];

			snprintf(b, sizeof(b), "%u", acct);
			print_string(PRINT_ANY, "accounting", "accounting %s ",
				     b);
		}
	}

	if (tb[TCA_ARBTABLE_DEFAULT] &&
	    RTA_PAYLOAD(tb[TCA_ARBTABLE_DEFAULT]) >= sizeof(__u32)) {
		__u32 def = rta_getattr_u32(tb[TCA_ARBTABLE_DEFAULT]);

		arb_print_class_ref("default", def);
		if (def)
			print_hex(PRINT_FP, NULL, "default %x ", def);
	}

	if (tb[TCA_ARBTABLE_PRIOMAP])
		arb_print_priomap(tb[TCA_ARBTABLE_PRIOMAP]);

	/* an mtu that follows the device is not an option to type back:
	 * the line shows it with -d only (JSON always, with the flag)
	 */
	if (tb[TCA_ARBTABLE_MTU] &&
	    RTA_PAYLOAD(tb[TCA_ARBTABLE_MTU]) >= sizeof(__u32)) {
		bool follow = tb[TCA_ARBTABLE_MTU_FOLLOW];

		print_uint(follow && !show_details ? PRINT_JSON : PRINT_ANY,
			   "mtu", "mtu %u ",
			   rta_getattr_u32(tb[TCA_ARBTABLE_MTU]));
		print_bool(PRINT_JSON, "mtu_follows_device", NULL, follow);
	}

	if (tb[TCA_ARBTABLE_MAXWEIGHT] &&
	    RTA_PAYLOAD(tb[TCA_ARBTABLE_MAXWEIGHT]) >= sizeof(__u32))
		print_uint(PRINT_ANY, "maxweight", "maxweight %u ",
			   rta_getattr_u32(tb[TCA_ARBTABLE_MAXWEIGHT]));

	arb_print_limit(tb[TCA_ARBTABLE_PRIO_CLASSID], "prioclassid");
	arb_print_limit(tb[TCA_ARBTABLE_CLASSIFY_FOREIGN], "classifyforeign");

	/* lockless always, the default locked with -d; JSON always */
	if (tb[TCA_ARBTABLE_LOCKLESS] &&
	    RTA_PAYLOAD(tb[TCA_ARBTABLE_LOCKLESS]) >= sizeof(__u32)) {
		bool ll = rta_getattr_u32(tb[TCA_ARBTABLE_LOCKLESS]) != 0;

		print_bool(PRINT_JSON, "lockless", NULL, ll);
		if (ll || show_details)
			print_string(PRINT_FP, NULL, "%s ",
				     ll ? "lockless" : "locked");
	}

	arb_decode_table(&table[TC_ARBTABLE_HIGH], tb[TCA_ARBTABLE_HIGH]);
	arb_decode_table(&table[TC_ARBTABLE_LOW], tb[TCA_ARBTABLE_LOW]);

	for (i = 0; i < TC_ARBTABLE_NTABLES; i++) {
		arb_print_table_json(arb_table_name[i], &table[i]);
		/* In auto mode the allocator owns the tables and the kernel
		 * refuses high/low lists, so the line only shows them with -d.
		 */
		if (!is_auto)
			arb_print_table_line(arb_table_name[i], &table[i]);
	}

	if (show_details)
		for (i = 0; i < TC_ARBTABLE_NTABLES; i++)
			arb_print_slot_map(arb_table_name[i], &table[i]);

	return 0;
}

static void arb_print_time(const char *key, const char *fmt, __u64 ns)
{
	SPRINT_BUF(b);

	print_u64(PRINT_JSON, key, NULL, ns);
	print_string(PRINT_FP, NULL, fmt,
		     sprint_time64(ns > INT64_MAX ? INT64_MAX : (__s64)ns, b));
}

static int arb_print_copt(ARB_QU_CONST struct qdisc_util *qu ARB_UNUSED,
			  FILE *f ARB_UNUSED, struct rtattr *opt)
{
	struct rtattr *tb[TCA_ARBTABLE_C_MAX + 1];

	if (!opt)
		return 0;

	parse_rtattr_nested(tb, TCA_ARBTABLE_C_MAX, opt);

	if (tb[TCA_ARBTABLE_C_STRICT] &&
	    RTA_PAYLOAD(tb[TCA_ARBTABLE_C_STRICT]) >= sizeof(__u32)) {
		bool strict = rta_getattr_u32(tb[TCA_ARBTABLE_C_STRICT]);

		print_bool(PRINT_JSON, "strict", NULL, strict);
		if (strict)
			print_string(PRINT_FP, NULL, "%s ", "strict");
	}

	if (tb[TCA_ARBTABLE_C_CEIL] &&
	    RTA_PAYLOAD(tb[TCA_ARBTABLE_C_CEIL]) >= sizeof(__u64)) {
		__u64 ceil = rta_getattr_u64(tb[TCA_ARBTABLE_C_CEIL]);

		if (ceil)
			tc_print_rate(PRINT_ANY, "ceil", "ceil %s ", ceil);
	}

	if (tb[TCA_ARBTABLE_C_CBURST] &&
	    RTA_PAYLOAD(tb[TCA_ARBTABLE_C_CBURST]) >= sizeof(__u32))
		print_size(PRINT_ANY, "cburst", "cburst %s ",
			   rta_getattr_u32(tb[TCA_ARBTABLE_C_CBURST]));

	if (tb[TCA_ARBTABLE_C_RATE] &&
	    RTA_PAYLOAD(tb[TCA_ARBTABLE_C_RATE]) >= sizeof(__u64)) {
		__u64 rate = rta_getattr_u64(tb[TCA_ARBTABLE_C_RATE]);

		if (rate)
			tc_print_rate(PRINT_ANY, "rate", "rate %s ", rate);
	}

	if (tb[TCA_ARBTABLE_C_LATENCY] &&
	    RTA_PAYLOAD(tb[TCA_ARBTABLE_C_LATENCY]) >= sizeof(__u64)) {
		__u64 lat = rta_getattr_u64(tb[TCA_ARBTABLE_C_LATENCY]);

		if (lat)
			arb_print_time("latency", "latency %s ", lat);
	}

	if (tb[TCA_ARBTABLE_C_DISTANCE] &&
	    RTA_PAYLOAD(tb[TCA_ARBTABLE_C_DISTANCE]) >= sizeof(__u32)) {
		__u32 d = rta_getattr_u32(tb[TCA_ARBTABLE_C_DISTANCE]);

		if (d)
			print_uint(PRINT_ANY, "distance", "distance %u ", d);
	}

	if (tb[TCA_ARBTABLE_C_SHARE] &&
	    RTA_PAYLOAD(tb[TCA_ARBTABLE_C_SHARE]) >= sizeof(__u32)) {
		__u32 s = rta_getattr_u32(tb[TCA_ARBTABLE_C_SHARE]);

		if (s)
			print_uint(PRINT_ANY, "share", "share %u ", s);
	}

	return 0;
}

/* "0,16,32,48" or "-" */
static void arb_print_slot_list(const char *key, __u64 mask)
{
	char buf[TC_ARBTABLE_SLOTS * 4 + 2];
	size_t off = 0;
	int s;

	buf[0] = '\0';
	open_json_array(PRINT_JSON, key);
	for (s = 0; s < TC_ARBTABLE_SLOTS; s++) {
		if (!(mask & (1ULL << s)))
			continue;
		print_uint(PRINT_JSON, NULL, NULL, s);
		off += snprintf(buf + off, sizeof(buf) - off, "%s%d",
				off ? "," : "", s);
	}
	close_json_array(PRINT_JSON, NULL);
	print_string(PRINT_FP, NULL, " [%s]", off ? buf : "-");
}

static void arb_print_class_xstats(const struct tc_arbtable_class_xstats *st)
{
	print_string(PRINT_FP, NULL, "%s", " slots:");
	print_uint(PRINT_ANY, "high_slot_count", " high %u",
		   __builtin_popcountll(st->high_slots));
	arb_print_slot_list("high_slots", st->high_slots);
	print_uint(PRINT_ANY, "high_weight", " weight %u", st->high_weight);
	print_uint(PRINT_ANY, "low_slot_count", " low %u",
		   __builtin_popcountll(st->low_slots));
	arb_print_slot_list("low_slots", st->low_slots);
	print_uint(PRINT_ANY, "low_weight", " weight %u", st->low_weight);
	print_nl();

	/* distance and bounds exist only for classes the allocator admitted;
	 * JSON has every key, 0 where there is none. The distance the
	 * allocator chose is "allocated_distance": "distance" is the option
	 * (the one asked for), printed with the class's options.
	 */
	if (st->distance)
		print_uint(PRINT_ANY, "allocated_distance", " distance %u",
			   st->distance);
	else
		print_uint(PRINT_JSON, "allocated_distance", NULL, 0);
	/* "reserved_rate": tc's "stats" object has the estimator's "rate" */
	if (st->reserved_rate)
		tc_print_rate(PRINT_ANY, "reserved_rate", " rate %s",
			      st->reserved_rate);
	else
		print_u64(PRINT_JSON, "reserved_rate", NULL, 0);
	/* what its weight guarantees: above the rate asked when the
	 * latency needed a heavier slot (see tc-arbtable(8), "rate")
	 */
	if (st->reserved_weight) {
		if (st->guaranteed_rate)
			tc_print_rate(PRINT_FP, NULL, " guaranteed %s",
				      st->guaranteed_rate);
		print_uint(PRINT_FP, NULL,
			   st->guaranteed_rate ? " (%u units)" : " reserved %u units",
			   st->reserved_weight);
	}
	print_u64(PRINT_JSON, "guaranteed_rate", NULL, st->guaranteed_rate);
	print_uint(PRINT_JSON, "reserved_weight", NULL, st->reserved_weight);
	print_u64(PRINT_ANY, "throttled", " throttled %" PRIu64,
		  (uint64_t)st->throttled);
	print_u64(PRINT_ANY, "stalls", " stalls %" PRIu64,
		  (uint64_t)st->stalls);
	print_nl();

	print_string(PRINT_FP, NULL, "%s", " bound:");
	if (st->guaranteed_bound_ns) {
		arb_print_time("guaranteed_bound", " guaranteed %s",
			       st->guaranteed_bound_ns);
		arb_print_time("current_bound", " current %s",
			       st->current_bound_ns);
	} else {
		print_u64(PRINT_JSON, "guaranteed_bound", NULL, 0);
		print_u64(PRINT_JSON, "current_bound", NULL, 0);
	}
	arb_print_time("max_hol_wait", " max_hol_wait %s", st->max_hol_ns);
	/* the device's frames grew past what the admission assumed */
	print_bool(PRINT_JSON, "broken", NULL, st->broken);
	if (st->broken)
		print_string(PRINT_FP, NULL, " %s", "BROKEN (mtu grew)");
}

/* @len: the payload's length; fields it does not hold are not printed */
static void arb_print_qdisc_xstats(const struct tc_arbtable_xstats *st,
				   size_t len)
{
	open_json_object("unclassified");
	print_u64(PRINT_ANY, "packets", " unclassified: pkts %" PRIu64,
		  (uint64_t)st->unclassified_pkts);
	print_u64(PRINT_ANY, "drops", " drops %" PRIu64,
		  (uint64_t)st->unclassified_drops);
	print_uint(PRINT_ANY, "qlen", " qlen %u", st->unclassified_qlen);
	/* its own bound, beside the classes' (0 in JSON: none); a kernel
	 * before issue 44 served the queue only when no class was eligible
	 */
	if (len < offsetof(struct tc_arbtable_xstats,
			   unclassified_max_wait_ns) + sizeof(__u64)) {
		;
	} else if (st->unclassified_bound_ns) {
		arb_print_time("bound", " bound %s", st->unclassified_bound_ns);
	} else {
		print_u64(PRINT_JSON, "bound", NULL, 0);
		print_string(PRINT_FP, NULL, " bound %s", "none");
	}
	if (len >= sizeof(*st))
		arb_print_time("max_wait", " max_wait %s",
			       st->unclassified_max_wait_ns);
	close_json_object();
	/* the unclassified queue's line is its own; then the allocator's
	 * defragmentation swaps and the class ceilings' throttles
	 */
	print_nl();
	print_u64(PRINT_ANY, "swaps", " swaps %" PRIu64, (uint64_t)st->swaps);
	print_u64(PRINT_ANY, "throttled", " throttled %" PRIu64,
		  (uint64_t)st->throttled);
	print_nl();

	print_uint(PRINT_ANY, "high_used", " occupancy: high %u/"
		   ARB_STR(TC_ARBTABLE_SLOTS), st->high_used);
	print_uint(PRINT_ANY, "low_used", " low %u/"
		   ARB_STR(TC_ARBTABLE_SLOTS), st->low_used);
	print_uint(PRINT_ANY, "class_count", " classes %u", st->nclasses);
	print_nl();
	print_u64(PRINT_ANY, "gso_split", " gso: split %" PRIu64,
		  (uint64_t)st->gso_split);
	print_u64(PRINT_ANY, "gso_segs", " segments %" PRIu64,
		  (uint64_t)st->gso_segs);
	print_u64(PRINT_ANY, "oversize_drops", " oversize_drops %" PRIu64,
		  (uint64_t)st->oversize_drops);
	print_u64(PRINT_ANY, "stalls", " stalls %" PRIu64, (uint64_t)st->stalls);
	print_nl();
	/* the capacity admissions were made against, beside the link now */
	tc_print_rate(PRINT_ANY, "capacity", " capacity %s", st->capacity);
	if (st->link_rate)
		tc_print_rate(PRINT_ANY, "link_rate", " link %s", st->link_rate);
	else
		print_u64(PRINT_JSON, "link_rate", NULL, 0);
	if (!st->link_rate)
		print_string(PRINT_FP, NULL, " link %s", "unknown");
	print_u64(PRINT_ANY, "link_changes", " link_changes %" PRIu64,
		  (uint64_t)st->link_changes);
	print_u64(PRINT_ANY, "mtu_changes", " mtu_changes %" PRIu64,
		  (uint64_t)st->mtu_changes);
	/* a count of classes; a class's own "broken" is a bool */
	print_uint(PRINT_ANY, "broken_classes", " broken %u", st->broken);
}

/*
 * tc calls the same hook for qdisc and class xstats; they are told apart
 * by their leading type (as fq_codel's). A blob longer than the struct
 * (a newer kernel appending fields) is read up to what this plugin knows;
 * a shorter one only if it holds at least the type, the rest read as 0.
 */
static int arb_print_xstats(ARB_QU_CONST struct qdisc_util *qu ARB_UNUSED, FILE *f ARB_UNUSED,
			    struct rtattr *xstats)
{
	size_t len;
	__u32 type;

	if (!xstats)
		return 0;

	len = RTA_PAYLOAD(xstats);
	if (len < sizeof(type)) {
		print_string(PRINT_FP, NULL, " %s", "(arbtable xstats too short)");
		return -1;
	}
	memcpy(&type, RTA_DATA(xstats), sizeof(type));
	if (type == TCA_ARBTABLE_XSTATS_QDISC) {
		struct tc_arbtable_xstats st = {};

		memcpy(&st, RTA_DATA(xstats), len < sizeof(st) ? len : sizeof(st));
		arb_print_qdisc_xstats(&st, len);
	} else if (type == TCA_ARBTABLE_XSTATS_CLASS) {
		struct tc_arbtable_class_xstats st = {};

		memcpy(&st, RTA_DATA(xstats), len < sizeof(st) ? len : sizeof(st));
		arb_print_class_xstats(&st);
	} else {
		print_uint(PRINT_FP, NULL, " (arbtable xstats of unknown type %u)",
			   type);
		return -1;
	}
	return 0;
}

struct qdisc_util arbtable_qdisc_util = {
	.id		= "arbtable",
	.parse_qopt	= arb_parse_opt,
	.print_qopt	= arb_print_opt,
	.print_xstats	= arb_print_xstats,
	.parse_copt	= arb_parse_copt,
	.print_copt	= arb_print_copt,
};
