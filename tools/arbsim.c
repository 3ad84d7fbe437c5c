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
 * Scenario format (one statement per line, '#' starts a comment):
 *
 *   qdisc [manual|auto] rate RATE [highlimit 0..255]
 *         [accounting deficit|iba] [mtu BYTES] [maxweight 1..255]
 *       First statement. RATE in tc units (bit, kbit, mbit, gbit, tbit,
 *       kibit.., Bps, KBps, MBps, ...; a bare number is bit/s). Defaults
 *       as the module: auto, highlimit 16, deficit, maxweight 255,
 *       mtu as the module follows an Ethernet NIC at mtu 1500 (1514;
 *       from 1gbit up 69646, a 64 KiB GSO skb kept whole). The rate is the link: simulated time advances by
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
 *       (a bare number is ns).
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
 *       unclassified queue, served only when no class is eligible.
 *
 * Admission errors and rejections are reported as decisions (with the
 * module's message) and the simulation goes on without that change;
 * syntax errors stop arbsim with exit status 2.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "arbtable_core_test.h"
#include "arbtable_parse.h"
#include "arbtable_request.h"
#include <linux/pkt_sched_arbtable.h>

/* the shared request check states the module's limits: keep them equal */
_Static_assert(ARBT_RQ_SLOTS == ARB_SLOTS, "slots");
_Static_assert(ARBT_RQ_SHARE_MAX == TC_ARBTABLE_WEIGHT_MAX, "share");
_Static_assert(ARBT_RQ_RATE_MAX == ARB_RATE_MAX, "rate");

#define SIM_QLIMIT		1000	/* pfifo default (txqueuelen) */
#define SIM_MAX_SIZES		32
#define SIM_UNCLASSIFIED	4	/* table id in the order output */
#define SIM_MAX_SOURCES		128

static const char *const table_name[] = {
	"high", "low", "strict", "slotless", "unclassified"
};

/* ---------------------------------------------------------------------- */
/* State                                                                   */

struct bucket {			/* arbtable_bucket, in simulated ns */
	s64 tokens;
	s64 buffer;
	u64 t_c;
	u64 bps;
};

struct traffic {
	bool on;
	u32 sizes[SIM_MAX_SIZES];
	unsigned int nsizes;
	bool random;
	u64 limit;		/* idle-after: packets (0 = none) */
	u64 offered;		/* bytes/s, 0 = backlogged */
	u64 rng;
	unsigned int pos;	/* next size (alternate) */
	u64 generated;		/* packets generated so far */
	/* FIFO of sizes (offered) or the head (backlogged) */
	u32 q[SIM_QLIMIT];
	unsigned int qhead, qlen;
	u64 next_arrival;	/* ns */
	u64 arr_rem;		/* remainder of the arrival clock */
	bool done;		/* no more packets ever */
	u64 drops;
};

struct sim_class {
	bool used;
	u32 minor;
	u8 index;
	bool strict;
	u64 ceil;		/* bytes/s, 0 = none */
	u32 cburst;		/* ceil depth, bytes, 0 = default */
	struct bucket cb;
	bool throttled;
	u64 unthrottle_at;
	u64 nthrottled;
	/* auto mode */
	struct arb_resv resv;
	u8 table;		/* ARB_HIGH/ARB_LOW or ARB_NO_CLASS */
	u32 distance;
	u32 weight;
	u64 bound_ns;
	/* traffic and statistics */
	struct traffic tr;
	u64 pkts, bytes;
	u64 tbytes[5], tpkts[5];
	u64 mark;		/* total bytes when last served/activated */
	u64 gap_max;
	u64 head_since;
	u64 max_hol;
	bool active;		/* has a packet */
};

struct decision {
	int line;
	char cmd[8];
	u32 minor;
	bool ok;
	char text[320];
	u8 table;
	u32 distance;
	u32 weight;
	u64 rate;		/* asked, bytes/s */
	u64 reserved;		/* what the weight guarantees, bytes/s */
	u64 slots;
	u64 bound_ns;
	unsigned int moves;
	bool admission;		/* an allocator decision (auto mode) */
};

struct order_ent {
	u64 t;
	u32 minor;
	u8 table;
	u8 slot;
	s32 credit;
	u32 len;
};

struct sim {
	/* qdisc */
	bool have_qdisc;
	bool autom;
	u32 major;		/* of the qdisc handle, as tc's "handle 1:" */
	u64 rate;		/* bytes/s */
	u64 rate_bits;
	u8 highlimit;
	u8 accounting;
	u32 mtu;
	u32 burst;		/* as given (0 = default); no effect here */
	u8 maxweight;
	struct arb_sched arb;
	struct arb_alloc alloc[ARB_NTABLES];
	struct sim_class cls[ARB_MAX_CLASSES];
	u64 cls_used;
	/* unclassified sources (traffic for classes that do not exist) */
	struct sim_class uncl[SIM_MAX_SOURCES];
	unsigned int nuncl, uncl_rr;
	u64 uncl_pkts, uncl_bytes;
	/* log */
	struct decision *dec;
	unsigned int ndec, adec;
	/* run */
	u64 packets, order_n, seed;
	struct order_ent *order;
	u64 norder;
	u64 now, now_rem, total_bytes, sent;
	bool stopped_early;
	u64 swaps;
};

static const char *scen_name = "-";
static int scen_line;

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "arbsim: %s:%d: ", scen_name, scen_line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);

	if (!p) {
		fprintf(stderr, "arbsim: out of memory\n");
		exit(2);
	}
	return p;
}

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

static int parse_u64(const char *s, int base, u64 *v)
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
	u64 maj, v;

	if (c && c != s) {
		char buf[8];
		size_t n = (size_t)(c - s);

		if (n >= sizeof(buf))
			die("bad class id \"%s\" (MAJ:MIN or MIN, hex)", s);
		memcpy(buf, s, n);
		buf[n] = '\0';
		if (parse_u64(buf, 16, &maj) || maj != sim->major)
			die("class id \"%s\" is not a class of the qdisc %x:",
			    s, sim->major);
	}
	if (c)
		s = c + 1;
	if (parse_u64(s, 16, &v) || !v || v > 0xffff)
		die("bad class id \"%s\" (MAJ:MIN or MIN, minor hex 1..ffff)",
		    s);
	return (u32)v;
}

/* ---------------------------------------------------------------------- */
/* Output helpers                                                          */

static char *fmt_ns(u64 ns, char *buf, size_t len)
{
	if (ns == ARB_BOUND_NONE)
		snprintf(buf, len, "none");
	else if (ns >= NSEC_PER_SEC)
		snprintf(buf, len, "%.3fs", (double)ns / 1e9);
	else if (ns >= 1000000)
		snprintf(buf, len, "%.3fms", (double)ns / 1e6);
	else if (ns >= 1000)
		snprintf(buf, len, "%.3fus", (double)ns / 1e3);
	else
		snprintf(buf, len, "%lluns", ns);
	return buf;
}

static char *fmt_rate(u64 bytes, char *buf, size_t len)
{
	u64 bits = bytes * 8;

	if (bits && bits % 1000000000ULL == 0)
		snprintf(buf, len, "%llugbit", (u64)(bits / 1000000000ULL));
	else if (bits && bits % 1000000ULL == 0)
		snprintf(buf, len, "%llumbit", (u64)(bits / 1000000ULL));
	else if (bits && bits % 1000ULL == 0)
		snprintf(buf, len, "%llukbit", (u64)(bits / 1000ULL));
	else
		snprintf(buf, len, "%llubit", bits);
	return buf;
}

/* A measured or derived rate the way tc prints one: 71.95Mbit */
static char *fmt_rate_approx(u64 bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "bit", "Kbit", "Mbit", "Gbit" };
	double v = (double)bytes * 8;
	unsigned int i = 0;

	while (v >= 1000 && i < 3) {
		v /= 1000;
		i++;
	}
	snprintf(buf, len, "%.4g%s", v, unit[i]);
	return buf;
}

static char *fmt_slots(u64 m, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	if (!m) {
		snprintf(buf, len, "-");
		return buf;
	}
	while (m && n + 4 < len) {
		n += (size_t)snprintf(buf + n, len - n, n ? ",%u" : "%u",
				      (unsigned int)__ffs64(m));
		m &= m - 1;
	}
	return buf;
}

/*
 * The classes table's slots column, the same shape for every class: the
 * count, then the slots with runs as ranges ("64: 0-63", "8: 0,8,...,56",
 * "1: 5"), cut with "..." to fit @width; "-" for none.
 */
static void fmt_slot_column(u64 m, char *buf, size_t width)
{
	char list[400];
	size_t n = 0, w;
	unsigned int a, b;
	u64 r = m;

	if (!m) {
		snprintf(buf, width + 1, "-");
		return;
	}
	list[0] = '\0';
	while (r) {
		a = __ffs64(r);
		b = a;
		while (b + 1 < ARB_SLOTS && (r & BIT_ULL(b + 1)))
			b++;
		n += (size_t)snprintf(list + n, sizeof(list) - n,
				      b > a + 1 ? "%s%u-%u" : b > a ? "%s%u,%u" : "%s%u",
				      n ? "," : "", a, b);
		while (a <= b)
			r &= ~BIT_ULL(a++);
	}
	w = (size_t)snprintf(buf, width + 1, "%u: %s", hweight64(m), list);
	if (w > width) {
		/* cut after a whole slot number */
		char *cut = buf + width - 3;

		while (cut > buf && cut[-1] != ',')
			cut--;
		strcpy(cut, "...");
	}
}

static const char *tname(u8 t)
{
	return t < 5 ? table_name[t] : "none";
}

/* ---------------------------------------------------------------------- */
/* Classes and decisions                                                   */

static struct sim_class *find_class(struct sim *s, u32 minor)
{
	unsigned int i;

	for (i = 0; i < ARB_MAX_CLASSES; i++)
		if (s->cls[i].used && s->cls[i].minor == minor)
			return &s->cls[i];
	return NULL;
}

static struct decision *decide(struct sim *s, const char *cmd, u32 minor)
{
	struct decision *d;

	if (s->ndec == s->adec) {
		s->adec = s->adec ? 2 * s->adec : 16;
		s->dec = realloc(s->dec, s->adec * sizeof(*s->dec));
		if (!s->dec) {
			fprintf(stderr, "arbsim: out of memory\n");
			exit(2);
		}
	}
	d = &s->dec[s->ndec++];
	memset(d, 0, sizeof(*d));
	d->line = scen_line;
	snprintf(d->cmd, sizeof(d->cmd), "%s", cmd);
	d->minor = minor;
	d->table = ARB_NO_CLASS;
	return d;
}

static void __attribute__((format(printf, 2, 3)))
reject(struct decision *d, const char *fmt, ...)
{
	va_list ap;

	d->ok = false;
	va_start(ap, fmt);
	vsnprintf(d->text, sizeof(d->text), fmt, ap);
	va_end(ap);
}

static struct sim_class *new_class(struct sim *s, u32 minor)
{
	struct sim_class *c;
	unsigned int idx;

	if (s->cls_used == ~0ULL)
		return NULL;
	idx = (unsigned int)__ffs64(~s->cls_used);
	c = &s->cls[idx];
	memset(c, 0, sizeof(*c));
	c->used = true;
	c->minor = minor;
	c->index = (u8)idx;
	c->table = ARB_NO_CLASS;
	s->cls_used |= BIT_ULL(idx);
	return c;
}

/* As the module's arbtable_bucket_set(): @burst bytes deep when given,
 * else max(2 * mtu, ARB_MIN_BURST_NS of the rate).
 */
static void bucket_set(struct bucket *b, u64 bps, u32 mtu, u32 burst, u64 now)
{
	u64 l2t;

	memset(b, 0, sizeof(*b));
	b->bps = bps;
	if (!bps)
		return;
	l2t = 2ULL * mtu * NSEC_PER_SEC / bps;
	b->buffer = (s64)(l2t > ARB_MIN_BURST_NS ? l2t : ARB_MIN_BURST_NS);
	if (burst)
		b->buffer = (s64)((u64)burst * NSEC_PER_SEC / bps);
	b->tokens = b->buffer;
	b->t_c = now;
}

static void strict_params(const struct sim *s, struct arb_params *p)
{
	u64 sc = 0;
	u32 sb = 0;
	unsigned int i;

	for (i = 0; i < ARB_MAX_CLASSES; i++) {
		if (s->cls[i].used && s->cls[i].strict) {
			sc = s->cls[i].ceil;
			sb = s->cls[i].cburst;
		}
	}
	arb_admit_params(s->rate, s->mtu, s->maxweight, s->highlimit, sc, sb, p);
}

/* The rate a HIGH class's reserved weight guarantees, as the module
 * exports it (guaranteed_rate); 0 for other classes.
 */
static u64 class_reserved(const struct sim *s, const struct sim_class *c)
{
	struct arb_params p;

	if (!s->autom || c->table != ARB_HIGH)
		return 0;
	strict_params(s, &p);
	return arb_weight_rate(&p, c->weight);
}

/* Options of 'class' and 'change' (tc class add/change arbtable ...). */
struct copts {
	bool has_strict, strict;
	bool has_ceil, has_cburst;
	u64 ceil;
	u32 cburst;
	bool has_rate, has_latency, has_distance, has_share;
	u64 rate, latency;
	u32 distance, share;
};

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
static void do_class(struct sim *s, bool create, u32 minor,
		     const struct copts *o)
{
	struct decision *d = decide(s, create ? "class" : "change", minor);
	struct sim_class *c = find_class(s, minor);
	bool strict = c ? c->strict : false;
	u64 ceil = c ? c->ceil : 0;
	u32 cburst = c ? c->cburst : 0;
	struct arb_resv resv;
	struct arb_admission plan;
	struct arb_params p;
	unsigned int i, idx;
	bool want_plan = false;
	char why[256];

	if (create && c) {
		reject(d, "class %x:%x exists; use 'change'", s->major, minor);
		return;
	}
	if (!create && !c) {
		reject(d, "class %x:%x does not exist", s->major, minor);
		return;
	}
	if (o->has_strict)
		strict = o->strict;
	if (o->has_ceil) {
		if (!o->ceil) {
			reject(d, "ceil must be greater than 0; omit it for no ceiling");
			return;
		}
		ceil = o->ceil;
	}
	if (o->has_cburst) {
		if (o->cburst > TC_ARBTABLE_BURST_MAX) {
			reject(d, "cburst out of range: at most 256 MiB (0 = default)");
			return;
		}
		cburst = o->cburst;
	}
	if (cburst && !ceil) {
		reject(d, "cburst sizes the class's ceil: give a ceil too");
		return;
	}
	if (cburst && cburst < s->mtu) {
		reject(d, "cburst %u is below the mtu %u: the ceil must let one whole packet through",
		       cburst, s->mtu);
		return;
	}
	if (!s->autom && (o->has_rate || o->has_latency || o->has_distance ||
			  o->has_share)) {
		reject(d, "rate/latency/distance/share need an auto-mode qdisc; on a manual qdisc program the slots with 'tc qdisc change ... high/low'");
		return;
	}
	if (strict) {
		for (i = 0; i < ARB_MAX_CLASSES; i++) {
			if (s->cls[i].used && &s->cls[i] != c &&
			    s->cls[i].strict) {
				reject(d, "class %x:%x is already the strict class; only one is allowed",
				       s->major, s->cls[i].minor);
				return;
			}
		}
		if (c && (arb_class_slots(&s->arb, ARB_HIGH, c->index) |
			  arb_class_slots(&s->arb, ARB_LOW, c->index))) {
			reject(d, "a class that table slots name cannot become strict; remove it from the tables first");
			return;
		}
		if (s->autom) {
			bool was = c && c->strict;
			u64 old = was ? c->ceil : 0;
			u32 old_burst = was ?
				arb_strict_burst(old, s->mtu, c->cburst) : 0;

			if (!ceil) {
				reject(d, "a strict class needs a ceil on an auto-mode qdisc, otherwise no admitted class keeps its guarantee");
				return;
			}
			if ((!was || ceil > old) &&
			    s->alloc[ARB_HIGH].nclasses) {
				reject(d, "cannot add or raise the strict class's ceil while %u classes hold HIGH-table guarantees; configure the strict class first",
				       s->alloc[ARB_HIGH].nclasses);
				return;
			}
			if (arb_strict_burst(ceil, s->mtu, cburst) > old_burst &&
			    s->alloc[ARB_HIGH].nclasses) {
				reject(d, "cannot deepen the strict class's cburst while %u classes hold HIGH-table guarantees: their bounds count its burst",
				       s->alloc[ARB_HIGH].nclasses);
				return;
			}
		}
	}

	/* arbtable_auto_parse(): the checks every front end shares
	 * (lib/arbtable_request.c), the merge the module's own
	 */
	memset(&resv, 0, sizeof(resv));
	if (c)
		resv = c->resv;
	if (s->autom) {
		struct arbt_request rq = {
			.rate = o->rate, .latency_ns = o->latency,
			.distance = o->distance, .share = o->share,
		};
		struct arbt_resv r;
		const char *err;

		rq.given = (o->has_rate ? ARBT_RQ_RATE : 0) |
			   (o->has_latency ? ARBT_RQ_LATENCY : 0) |
			   (o->has_distance ? ARBT_RQ_DISTANCE : 0) |
			   (o->has_share ? ARBT_RQ_SHARE : 0);
		err = arbt_request_check(&rq);
		if (err) {
			reject(d, "%s", err);
			return;
		}
		if (o->has_rate)
			arb_resv_set_rate(&resv, o->rate);
		if (o->has_share)
			arb_resv_set_share(&resv, o->share);
		if (o->has_latency) {
			resv.latency = o->latency;
			resv.distance = 0;
		}
		if (o->has_distance) {
			resv.distance = o->distance;
			resv.latency = 0;
		}
		r = (struct arbt_resv){ .rate = resv.rate,
					.latency_ns = resv.latency,
					.distance = resv.distance,
					.share = resv.share };
		err = arbt_resv_check(&r, strict);
		if (err) {
			reject(d, "%s", err);
			return;
		}
	}

	if (c) {
		idx = c->index;
		want_plan = memcmp(&resv, &c->resv, sizeof(resv)) != 0;
	} else {
		if (s->cls_used == ~0ULL) {
			reject(d, "at most %d classes per qdisc",
			       ARB_MAX_CLASSES);
			return;
		}
		idx = (unsigned int)__ffs64(~s->cls_used);
		want_plan = resv.rate || resv.share;
	}
	if (want_plan) {
		/* As the module: the strict class's ceil before this change
		 * (a strict class itself takes no reservation).
		 */
		strict_params(s, &p);
		if (arb_admit_prepare(s->alloc, &p, s->maxweight, idx,
				      c ? c->table : ARB_NO_CLASS, &resv, &plan,
				      why, sizeof(why))) {
			reject(d, "cannot admit the class: %s", why);
			return;
		}
	}

	if (!c)
		c = new_class(s, minor);
	if (want_plan) {
		arb_admit_commit(&s->arb, s->alloc, c->index, &plan, NULL, NULL);
		s->swaps += plan.mv.n;
		d->moves = plan.mv.n;
		c->resv = plan.resv;
		c->table = plan.new_table;
		c->distance = c->table == ARB_NO_CLASS ? 0 : plan.distance;
		c->weight = c->table == ARB_NO_CLASS ? 0 : plan.weight;
		c->bound_ns = plan.bound_ns;
		d->admission = true;
	}
	if (ceil != c->ceil || cburst != c->cburst) {
		c->ceil = ceil;
		c->cburst = cburst;
		bucket_set(&c->cb, ceil, s->mtu, cburst, 0);
	}
	if (strict != c->strict) {
		c->strict = strict;
		arb_set_strict(&s->arb, strict ? c->index : ARB_NO_CLASS);
	}
	d->ok = true;
	d->table = c->table;
	d->distance = c->distance;
	d->weight = c->weight;
	d->bound_ns = c->bound_ns;
	d->rate = c->resv.rate;
	d->reserved = class_reserved(s, c);
	if (c->table != ARB_NO_CLASS)
		d->slots = arb_class_slots(&s->arb, c->table, c->index);
	snprintf(d->text, sizeof(d->text), "%s",
		 d->admission && c->table != ARB_NO_CLASS ? "admitted" :
		 create ? "created" : "changed");
}

static void do_del(struct sim *s, u32 minor)
{
	struct decision *d = decide(s, "del", minor);
	struct sim_class *c = find_class(s, minor);
	struct arb_resv none;
	struct arb_admission plan;
	struct arb_params p;
	char why[256], hb[200], lb[200];
	u64 hi, lo;

	if (!c) {
		reject(d, "class %x:%x does not exist", s->major, minor);
		return;
	}
	hi = arb_class_slots(&s->arb, ARB_HIGH, c->index);
	lo = arb_class_slots(&s->arb, ARB_LOW, c->index);
	if (s->autom && c->table != ARB_NO_CLASS) {
		memset(&none, 0, sizeof(none));
		strict_params(s, &p);
		if (arb_admit_prepare(s->alloc, &p, s->maxweight, c->index,
				      c->table, &none, &plan, why, sizeof(why))) {
			reject(d, "cannot admit the class: %s", why);
			return;
		}
		arb_admit_commit(&s->arb, s->alloc, c->index, &plan, NULL, NULL);
		s->swaps += plan.mv.n;
		d->moves = plan.mv.n;
		d->admission = true;
	} else if (hi || lo) {
		reject(d, "class %x:%x is still named by high slots [%s] and low slots [%s]; reprogram the tables first",
		       s->major, minor, fmt_slots(hi, hb, sizeof(hb)),
		       fmt_slots(lo, lb, sizeof(lb)));
		return;
	}
	arb_set_eligible(&s->arb, c->index, false);
	if (c->strict)
		arb_set_strict(&s->arb, ARB_NO_CLASS);
	s->cls_used &= ~BIT_ULL(c->index);
	memset(c, 0, sizeof(*c));
	d->ok = true;
	snprintf(d->text, sizeof(d->text), "deleted");
}

/* Manual tables: arbtable_parse_table() + arbtable_apply(). */
static void do_table(struct sim *s, unsigned int t, const char *list)
{
	struct decision *d = decide(s, t == ARB_HIGH ? "high" : "low", 0);
	u8 cls[ARB_SLOTS], wt[ARB_SLOTS];
	u32 mins[ARB_SLOTS];
	struct arbt_table_iter it;
	struct arbt_table_entry e;
	u64 seen = 0;
	unsigned int n = 0, i;
	const char *name = table_name[t];
	int rc;

	if (s->autom) {
		reject(d, "manual high/low slots on an auto-mode qdisc: the allocator owns the tables; admit classes with rate/latency/share instead");
		return;
	}
	memset(cls, ARB_NO_CLASS, sizeof(cls));
	memset(wt, 0, sizeof(wt));
	memset(mins, 0, sizeof(mins));
	/* the parser of the plugin and arbtablectl, the kernel's checks */
	arbt_table_iter_init(&it, list);
	while ((rc = arbt_table_next(&it, &e)) > 0) {
		if (++n > ARB_SLOTS) {
			reject(d, ARB_ENTRY_MSG_TOO_MANY);
			return;
		}
		switch (arb_entry_check(&seen, e.slot, e.weight, e.minor)) {
		case ARB_ENTRY_OK:
			break;
		case ARB_ENTRY_SLOT:
			reject(d, ARB_ENTRY_MSG_SLOT, name, e.slot);
			return;
		case ARB_ENTRY_TWICE:
			reject(d, ARB_ENTRY_MSG_TWICE, name, e.slot);
			return;
		case ARB_ENTRY_WEIGHT:
			reject(d, ARB_ENTRY_MSG_WEIGHT, name, e.slot, e.weight);
			return;
		case ARB_ENTRY_MINOR:
			reject(d, ARB_ENTRY_MSG_MINOR, name, e.slot, e.minor);
			return;
		}
		if (!e.weight)
			continue;
		mins[e.slot] = e.minor;
		wt[e.slot] = (u8)e.weight;
	}
	if (rc < 0)
		die("\"%s\" list: %s", name, it.err);
	/* Classes named by the list: create the missing ones. */
	for (i = 0; i < ARB_SLOTS; i++) {
		struct sim_class *c;

		if (!wt[i])
			continue;
		c = find_class(s, mins[i]);
		if (c && c->strict) {
			reject(d, ARB_ENTRY_MSG_STRICT, name, i, s->major, mins[i]);
			return;
		}
	}
	for (i = 0; i < ARB_SLOTS; i++) {
		struct sim_class *c;

		if (!wt[i])
			continue;
		c = find_class(s, mins[i]);
		if (!c)
			c = new_class(s, mins[i]);
		if (!c) {
			reject(d, "at most %d classes per qdisc",
			       ARB_MAX_CLASSES);
			return;
		}
		cls[i] = c->index;
	}
	for (i = 0; i < ARB_SLOTS; i++)
		arb_set_slot(&s->arb, t, i, cls[i], wt[i]);
	d->ok = true;
	snprintf(d->text, sizeof(d->text), "%u slots programmed",
		 hweight64(s->arb.tbl[t].used));
}

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

static void parse_scenario(struct sim *s, FILE *f)
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

/* ---------------------------------------------------------------------- */
/* Simulation                                                              */

static u64 splitmix64(u64 *x)
{
	u64 z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static u32 next_size(struct traffic *tr)
{
	u32 sz;

	if (tr->random) {
		sz = tr->sizes[splitmix64(&tr->rng) % tr->nsizes];
	} else {
		sz = tr->sizes[tr->pos];
		tr->pos = (tr->pos + 1) % tr->nsizes;
	}
	tr->generated++;
	if (tr->limit && tr->generated >= tr->limit)
		tr->done = true;
	return sz;
}

static void q_push(struct traffic *tr, u32 len)
{
	tr->q[(tr->qhead + tr->qlen) % SIM_QLIMIT] = len;
	tr->qlen++;
}

static u32 q_pop(struct traffic *tr)
{
	u32 len = tr->q[tr->qhead];

	tr->qhead = (tr->qhead + 1) % SIM_QLIMIT;
	tr->qlen--;
	return len;
}

/* The class gets a packet: head-of-line and gap clocks start now. */
static void activate(struct sim *s, struct sim_class *c, u64 t)
{
	if (c->active)
		return;
	c->active = true;
	c->head_since = t;
	c->mark = s->total_bytes;
}

/* Refill a source up to @now; backlogged sources keep one head packet. */
static void refill(struct sim *s, struct sim_class *c)
{
	struct traffic *tr = &c->tr;

	if (!tr->on)
		return;
	if (!tr->offered) {
		if (!tr->qlen && !tr->done) {
			q_push(tr, next_size(tr));
			activate(s, c, s->now);
		}
		return;
	}
	while (!tr->done && tr->next_arrival <= s->now) {
		u64 t = tr->next_arrival;
		u32 len = next_size(tr);
		u64 num = (u64)len * NSEC_PER_SEC + tr->arr_rem;

		if (tr->qlen < SIM_QLIMIT) {
			q_push(tr, len);
			activate(s, c, t);
		} else {
			tr->drops++;
		}
		tr->next_arrival += num / tr->offered;
		tr->arr_rem = num % tr->offered;
	}
}

static bool class_can_run(const struct sim_class *c)
{
	return c->tr.qlen && !c->throttled;
}

static void account(struct sim *s, struct sim_class *c, u8 table, u8 slot,
		    s32 credit, u32 len)
{
	u64 gap = s->total_bytes - c->mark;

	if (gap > c->gap_max)
		c->gap_max = gap;
	if (s->now - c->head_since > c->max_hol)
		c->max_hol = s->now - c->head_since;
	c->head_since = s->now;
	c->pkts++;
	c->bytes += len;
	c->tbytes[table] += len;
	c->tpkts[table]++;
	if (s->norder < s->order_n) {
		struct order_ent *o = &s->order[s->norder++];

		o->t = s->now;
		o->minor = c->minor;
		o->table = table;
		o->slot = slot;
		o->credit = credit;
		o->len = len;
	}
}

/* Advance the clock by one packet time at the qdisc rate, exactly. */
static void transmit(struct sim *s, u32 len)
{
	u64 num = (u64)len * NSEC_PER_SEC + s->now_rem;

	s->now += num / s->rate;
	s->now_rem = num % s->rate;
	s->total_bytes += len;
	s->sent++;
}

static u64 next_event(struct sim *s)
{
	u64 t = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < ARB_MAX_CLASSES; i++) {
		struct sim_class *c = &s->cls[i];

		if (!c->used)
			continue;
		if (c->throttled && c->tr.qlen && c->unthrottle_at < t)
			t = c->unthrottle_at;
		if (c->tr.on && c->tr.offered && !c->tr.done &&
		    c->tr.next_arrival < t)
			t = c->tr.next_arrival;
	}
	for (i = 0; i < s->nuncl; i++) {
		struct sim_class *c = &s->uncl[i];

		if (c->tr.offered && !c->tr.done && c->tr.next_arrival < t)
			t = c->tr.next_arrival;
	}
	return t;
}

static bool serve_unclassified(struct sim *s)
{
	unsigned int k, j;

	for (k = 0; k < s->nuncl; k++) {
		struct sim_class *c;
		u32 len;

		j = (s->uncl_rr + k) % s->nuncl;
		c = &s->uncl[j];
		if (!c->tr.qlen)
			continue;
		s->uncl_rr = (j + 1) % s->nuncl;
		len = q_pop(&c->tr);
		account(s, c, SIM_UNCLASSIFIED, 0, 0, len);
		if (!c->tr.qlen)
			c->active = false;
		s->uncl_pkts++;
		s->uncl_bytes += len;
		transmit(s, len);
		return true;
	}
	return false;
}

static void simulate(struct sim *s)
{
	unsigned int i;

	s->order = xcalloc(s->order_n, sizeof(*s->order));
	for (i = 0; i < ARB_MAX_CLASSES; i++)
		if (s->cls[i].used)
			s->cls[i].tr.rng = s->seed ^
					   ((u64)s->cls[i].minor << 32);
	for (i = 0; i < s->nuncl; i++)
		s->uncl[i].tr.rng = s->seed ^ ((u64)s->uncl[i].minor << 32) ^
				    0x5555;

	while (s->sent < s->packets) {
		struct arb_pick pick;
		struct sim_class *c;
		s32 credit;
		u32 len;

		for (i = 0; i < ARB_MAX_CLASSES; i++) {
			c = &s->cls[i];
			if (!c->used)
				continue;
			refill(s, c);
			if (c->throttled && c->unthrottle_at <= s->now) {
				c->throttled = false;
				c->mark = s->total_bytes;
			}
			arb_set_eligible(&s->arb, i, class_can_run(c));
		}
		for (i = 0; i < s->nuncl; i++)
			refill(s, &s->uncl[i]);

		if (!arb_select(&s->arb, &pick)) {
			u64 t;

			if (serve_unclassified(s))
				continue;
			t = next_event(s);
			if (t == UINT64_MAX) {
				s->stopped_early = true;
				break;
			}
			/* Idle until the next arrival or unthrottle. */
			s->now = t > s->now ? t : s->now + 1;
			s->now_rem = 0;
			continue;
		}
		c = &s->cls[pick.cls];
		len = q_pop(&c->tr);
		if (!c->tr.offered)
			refill(s, c);	/* a backlogged class has more */
		credit = arb_charge(&s->arb, &pick, len);
		account(s, c, pick.table, pick.slot, credit, len);
		if (c->ceil) {
			struct bucket *b = &c->cb;
			s64 toks = b->tokens + (s64)(s->now - b->t_c);

			b->tokens = toks > b->buffer ? b->buffer : toks;
			b->t_c = s->now;
			b->tokens -= (s64)((u64)len * NSEC_PER_SEC / b->bps);
			if (b->tokens < 0) {
				c->throttled = true;
				c->nthrottled++;
				c->unthrottle_at = s->now + (u64)-b->tokens;
				arb_set_eligible(&s->arb, c->index, false);
			}
		}
		if (!c->tr.qlen) {
			c->active = false;
			arb_set_drained(&s->arb, c->index);
		}
		transmit(s, len);
		/* The class stays backlogged: its next packet is head now. */
		c->mark = s->total_bytes;
	}
}

/* ---------------------------------------------------------------------- */
/* Reports                                                                 */

/* Weight of a class in a table: the sum of its slots' weights. */
static u64 class_weight(const struct sim *s, unsigned int t, unsigned int idx)
{
	u64 m = arb_class_slots(&s->arb, t, idx), w = 0;

	while (m) {
		w += s->arb.tbl[t].weight[__ffs64(m)];
		m &= m - 1;
	}
	return w;
}

/* Total weight of the classes that have traffic, per table. */
static u64 table_weight(const struct sim *s, unsigned int t)
{
	u64 w = 0;
	unsigned int i;

	for (i = 0; i < ARB_MAX_CLASSES; i++)
		if (s->cls[i].used && s->cls[i].tr.on)
			w += class_weight(s, t, i);
	return w;
}

static u64 table_bytes(const struct sim *s, unsigned int t)
{
	u64 b = 0;
	unsigned int i;

	for (i = 0; i < ARB_MAX_CLASSES; i++)
		if (s->cls[i].used)
			b += s->cls[i].tbytes[t];
	return b;
}

static u64 cur_bound(const struct sim *s, const struct sim_class *c)
{
	struct arb_params p;

	if (!s->autom || c->table != ARB_HIGH)
		return ARB_BOUND_NONE;
	strict_params(s, &p);
	return arb_alloc_current_bound_ns(&s->alloc[ARB_HIGH], &p, c->index);
}

static u64 gap_ns(const struct sim *s, u64 bytes)
{
	return bytes * NSEC_PER_SEC / s->rate;
}

/* Classes sorted by minor for stable, readable output. */
static unsigned int sorted_classes(const struct sim *s, unsigned int *out)
{
	unsigned int n = 0, i, j;

	for (i = 0; i < ARB_MAX_CLASSES; i++) {
		if (!s->cls[i].used)
			continue;
		for (j = n; j > 0 && s->cls[out[j - 1]].minor >
				     s->cls[i].minor; j--)
			out[j] = out[j - 1];
		out[j] = i;
		n++;
	}
	return n;
}

static void print_text(struct sim *s)
{
	unsigned int idx[ARB_MAX_CLASSES], n, i, k, t;
	struct arb_params p;
	char b1[64], b2[64], b3[64], b4[64], sl[256];
	u64 ch;

	n = sorted_classes(s, idx);
	printf("qdisc %x: %s rate %s (%llu bytes/s) highlimit %u accounting %s mtu %u maxweight %u\n",
	       s->major, s->autom ? "auto" : "manual",
	       fmt_rate(s->rate, b1, sizeof(b1)),
	       s->rate, s->highlimit,
	       s->accounting == ARB_ACCT_IBA ? "iba" : "deficit", s->mtu,
	       s->maxweight);
	if (s->autom) {
		strict_params(s, &p);
		ch = arb_high_capacity(&p);
		printf("high-table guaranteed rate %s (%llu bytes/s), capacity %u units\n",
		       fmt_rate(ch, b1, sizeof(b1)), ch, 64U * s->maxweight);
	}

	printf("\ndecisions:\n");
	for (i = 0; i < s->ndec; i++) {
		struct decision *d = &s->dec[i];

		printf("  line %d: %s", d->line, d->cmd);
		if (d->minor)
			printf(" %x:%x", s->major, d->minor);
		if (!d->ok) {
			printf(": rejected: %s\n", d->text);
			continue;
		}
		printf(": %s", d->text);
		if (d->admission && d->table != ARB_NO_CLASS) {
			printf(", %s table distance %u, %u slots [%s], weight %u",
			       tname(d->table), d->distance,
			       hweight64(d->slots),
			       fmt_slots(d->slots, sl, sizeof(sl)), d->weight);
			if (d->table == ARB_HIGH)
				printf(" guaranteeing %s (asked %s), guaranteed bound %s",
				       fmt_rate_approx(d->reserved, b2, sizeof(b2)),
				       fmt_rate(d->rate, b3, sizeof(b3)),
				       fmt_ns(d->bound_ns, b1, sizeof(b1)));
		} else if (d->admission) {
			printf(", released");
		}
		if (d->moves)
			printf(", %u swaps", d->moves);
		printf("\n");
	}

	printf("\ntables (slot:minor/weight):\n");
	for (t = 0; t < ARB_NTABLES; t++) {
		printf("  %s:", table_name[t]);
		if (!s->arb.tbl[t].used) {
			printf(" empty\n");
			continue;
		}
		/* Rows of 8 slots; rows without a used slot are left out. */
		for (k = 0; k < ARB_SLOTS; k += 8) {
			const struct arb_table *tb = &s->arb.tbl[t];
			unsigned int j;
			size_t len = 0;

			if (!((tb->used >> k) & 0xff))
				continue;
			for (j = k; j < k + 8; j++) {
				if (tb->weight[j])
					snprintf(b1, sizeof(b1), "%u:%x/%u", j,
						 s->cls[tb->cls[j]].minor,
						 tb->weight[j]);
				else
					snprintf(b1, sizeof(b1), "%u:-", j);
				len += (size_t)snprintf(sl + len,
							sizeof(sl) - len,
							j + 1 < k + 8 ?
							" %-10s" : " %s", b1);
			}
			printf("\n   %s", sl);
		}
		printf("\n");
	}

	printf("\nclasses:\n");
	printf("  %-7s %-5s %-6s %4s %-24s %6s %11s %11s %11s %s\n", "class",
	       "index", "table", "dist", "slots", "weight", "guaranteed",
	       "bound", "current", "ceil");
	for (k = 0; k < n; k++) {
		struct sim_class *c = &s->cls[idx[k]];
		u64 hm = arb_class_slots(&s->arb, ARB_HIGH, c->index);
		u64 lm = arb_class_slots(&s->arb, ARB_LOW, c->index);
		const char *tab = c->strict ? "strict" :
				  hm && lm ? "both" : hm ? "high" :
				  lm ? "low" : "none";

		fmt_slot_column(hm | lm, sl, 24);
		if (c->table != ARB_NO_CLASS)
			snprintf(b3, sizeof(b3), "%u", c->distance);
		else
			snprintf(b3, sizeof(b3), "-");
		printf("  %x:%-5x %-5u %-6s %4s %-24s %6llu %11s %11s %11s ",
		       s->major, c->minor, c->index, tab, b3, sl,
		       class_weight(s, ARB_HIGH, c->index) +
		       class_weight(s, ARB_LOW, c->index),
		       c->table == ARB_HIGH ?
		       fmt_rate_approx(class_reserved(s, c), b4, sizeof(b4)) : "-",
		       c->table == ARB_HIGH ? fmt_ns(c->bound_ns, b1, sizeof(b1)) : "-",
		       c->table == ARB_HIGH ? fmt_ns(cur_bound(s, c), b2, sizeof(b2)) : "-");
		printf("%s\n", c->ceil ? fmt_rate(c->ceil, b3, sizeof(b3)) : "-");
	}

	printf("\ndequeue order (first %llu of %llu):\n",
	       s->norder, s->sent);
	printf("  %6s %14s %-7s %-12s %4s %8s %6s\n", "#", "time", "class",
	       "table", "slot", "credit", "len");
	for (i = 0; i < s->norder; i++) {
		struct order_ent *o = &s->order[i];

		printf("  %6u %14s %x:%-5x %-12s %4u %8d %6u\n", i + 1,
		       fmt_ns(o->t, b1, sizeof(b1)), s->major, o->minor,
		       table_name[o->table], o->slot, o->credit, o->len);
	}

	printf("\nsimulated %llu packets, %llu bytes in %s%s\n",
	       s->sent, s->total_bytes, fmt_ns(s->now, b1, sizeof(b1)),
	       s->stopped_early ? " (stopped early: no traffic left)" : "");

	printf("\nshares per table (of the bytes each table sent; weights of classes with traffic):\n");
	printf("  %-6s %-7s %7s %9s %14s %9s %9s\n", "table", "class", "weight",
	       "w-share%", "bytes", "b-share%", "diff");
	for (t = 0; t < ARB_NTABLES; t++) {
		u64 tw = table_weight(s, t), tbt = table_bytes(s, t);

		for (k = 0; k < n; k++) {
			struct sim_class *c = &s->cls[idx[k]];
			u64 w = class_weight(s, t, c->index);
			double ws, bs;

			if (!w || !c->tr.on)
				continue;
			ws = tw ? 100.0 * (double)w / (double)tw : 0;
			bs = tbt ? 100.0 * (double)c->tbytes[t] / (double)tbt : 0;
			printf("  %-6s %x:%-5x %7llu %9.3f %14llu %9.3f %+9.3f\n",
			       table_name[t], s->major, c->minor, w, ws, c->tbytes[t], bs,
			       bs - ws);
		}
	}

	printf("\nper class:\n");
	printf("  %-7s %10s %14s %8s %10s %11s %11s %11s %9s %6s\n", "class",
	       "packets", "bytes", "share%", "gap-bytes", "gap-time",
	       "max-hol", "bound", "throttled", "drops");
	for (k = 0; k < n; k++) {
		struct sim_class *c = &s->cls[idx[k]];

		if (!c->tr.on)
			continue;
		printf("  %x:%-5x %10llu %14llu %8.3f %10llu %11s %11s %11s %9llu %6llu\n",
		       s->major, c->minor, c->pkts, c->bytes,
		       s->total_bytes ? 100.0 * (double)c->bytes /
					(double)s->total_bytes : 0,
		       c->gap_max, fmt_ns(gap_ns(s, c->gap_max), b1, sizeof(b1)),
		       fmt_ns(c->max_hol, b2, sizeof(b2)),
		       c->table == ARB_HIGH ? fmt_ns(c->bound_ns, b3, sizeof(b3)) : "-",
		       c->nthrottled, c->tr.drops);
	}
	for (k = 0; k < s->nuncl; k++) {
		struct sim_class *c = &s->uncl[k];

		printf("  %x:%-5x %10llu %14llu %8.3f %10llu %11s %11s %11s %9s %6llu  (unclassified)\n",
		       s->major, c->minor, c->pkts, c->bytes,
		       s->total_bytes ? 100.0 * (double)c->bytes /
					(double)s->total_bytes : 0,
		       c->gap_max, fmt_ns(gap_ns(s, c->gap_max), b1, sizeof(b1)),
		       fmt_ns(c->max_hol, b2, sizeof(b2)), "-", "-",
		       c->tr.drops);
	}
	if (s->swaps)
		printf("\ndefragmentation swaps: %llu\n", s->swaps);
}

/* ---- JSON ----
 *
 * Written with json-c. Keys are those of tc -j and arbtablectl --json for
 * the same quantities (tc/q_arbtable.c, tools/arbtablectl.c): class ids as
 * "1:10" strings, "handle" for a class's own id and "class" where one is
 * named; the options under their option names (rate, latency, distance,
 * share, ceil, cburst, strict), what the allocator chose under other names
 * (allocated_distance, reserved_rate, guaranteed_rate, reserved_weight,
 * guaranteed_bound, current_bound) and what was measured under yet others
 * (max_hol_wait, byte_share, ...). Rates bytes/s, times ns, sizes bytes.
 */

static void joom(void)
{
	fprintf(stderr, "arbsim: out of memory\n");
	exit(1);
}

static struct json_object *jnew(void)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		joom();
	return o;
}

static struct json_object *jnew_array(void)
{
	struct json_object *a = json_object_new_array();

	if (!a)
		joom();
	return a;
}

/* @v NULL is JSON null */
static void jput(struct json_object *o, const char *key, struct json_object *v)
{
	if (json_object_object_add(o, key, v))
		joom();
}

static void jput_u64(struct json_object *o, const char *key, u64 v)
{
	struct json_object *j = json_object_new_uint64(v);

	if (!j)
		joom();
	jput(o, key, j);
}

static void jput_int(struct json_object *o, const char *key, int64_t v)
{
	struct json_object *j = json_object_new_int64(v);

	if (!j)
		joom();
	jput(o, key, j);
}

static void jput_str(struct json_object *o, const char *key, const char *v)
{
	struct json_object *j = json_object_new_string(v);

	if (!j)
		joom();
	jput(o, key, j);
}

static void jput_bool(struct json_object *o, const char *key, bool v)
{
	jput(o, key, json_object_new_boolean(v));
}

/* a share, printed with six decimals */
static void jput_frac(struct json_object *o, const char *key, double v)
{
	char b[32];
	struct json_object *j;

	snprintf(b, sizeof(b), "%.6f", v);
	j = json_object_new_double_s(v, b);
	if (!j)
		joom();
	jput(o, key, j);
}

static void jadd(struct json_object *a, struct json_object *v)
{
	if (!v || json_object_array_add(a, v))
		joom();
}

static void jput_classid(struct json_object *o, const char *key, const struct sim *s,
			 u32 minor)
{
	char b[16];

	snprintf(b, sizeof(b), "%x:%x", s->major, minor);
	jput_str(o, key, b);
}

static struct json_object *jslots(u64 m)
{
	struct json_object *a = jnew_array();

	while (m) {
		jadd(a, json_object_new_int(__ffs64(m)));
		m &= m - 1;
	}
	return a;
}

/* a bound in ns; null where the class has none */
static void jput_bound(struct json_object *o, const char *key, u64 ns)
{
	if (ns == ARB_BOUND_NONE)
		jput(o, key, NULL);
	else
		jput_u64(o, key, ns);
}

static struct json_object *json_qdisc(struct sim *s)
{
	struct json_object *q = jnew();
	struct arb_params p;
	char b[16];

	snprintf(b, sizeof(b), "%x:", s->major);
	jput_str(q, "handle", b);
	jput_str(q, "mode", s->autom ? "auto" : "manual");
	jput_u64(q, "rate", s->rate);
	jput_u64(q, "highlimit", s->highlimit);
	jput_str(q, "accounting",
		 s->accounting == ARB_ACCT_IBA ? "iba" : "deficit");
	jput_u64(q, "mtu", s->mtu);
	jput_u64(q, "maxweight", s->maxweight);
	jput_u64(q, "burst", s->burst);
	if (s->autom) {
		strict_params(s, &p);
		jput_u64(q, "high_capacity", arb_high_capacity(&p));
		jput_u64(q, "capacity_units", 64U * s->maxweight);
	}
	return q;
}

static struct json_object *json_decision(struct sim *s, const struct decision *d)
{
	struct json_object *j = jnew();

	jput_int(j, "line", d->line);
	jput_str(j, "cmd", d->cmd);
	if (d->minor)
		jput_classid(j, "class", s, d->minor);
	jput_str(j, "result", d->ok ? "ok" : "rejected");
	jput_str(j, "text", d->text);
	if (d->ok && d->admission) {
		if (d->table == ARB_NO_CLASS)
			jput(j, "table", NULL);
		else
			jput_str(j, "table", tname(d->table));
		jput_u64(j, "allocated_distance", d->distance);
		jput_u64(j, "reserved_weight", d->weight);
		jput(j, "slots", jslots(d->slots));
		if (d->table == ARB_HIGH)
			jput_bound(j, "guaranteed_bound", d->bound_ns);
		jput_u64(j, "swaps", d->moves);
	}
	return j;
}

static struct json_object *json_class(struct sim *s, struct sim_class *c)
{
	struct json_object *j = jnew();

	jput_classid(j, "handle", s, c->minor);
	jput_u64(j, "index", c->index);
	/* the options, as tc -j prints them: only those given */
	if (c->strict)
		jput_bool(j, "strict", true);
	if (c->ceil)
		jput_u64(j, "ceil", c->ceil);
	if (c->cburst)
		jput_u64(j, "cburst", c->cburst);
	if (c->resv.rate)
		jput_u64(j, "rate", c->resv.rate);
	if (c->resv.latency)
		jput_u64(j, "latency", c->resv.latency);
	if (c->resv.distance)
		jput_u64(j, "distance", c->resv.distance);
	if (c->resv.share)
		jput_u64(j, "share", c->resv.share);
	/* what the allocator gave it */
	if (c->table == ARB_NO_CLASS)
		jput(j, "table", NULL);
	else
		jput_str(j, "table", tname(c->table));
	jput_u64(j, "allocated_distance",
		 c->table != ARB_NO_CLASS ? c->distance : 0);
	jput(j, "high_slots", jslots(arb_class_slots(&s->arb, ARB_HIGH, c->index)));
	jput(j, "low_slots", jslots(arb_class_slots(&s->arb, ARB_LOW, c->index)));
	jput_u64(j, "high_weight", class_weight(s, ARB_HIGH, c->index));
	jput_u64(j, "low_weight", class_weight(s, ARB_LOW, c->index));
	if (c->table == ARB_HIGH) {
		jput_u64(j, "reserved_rate", c->resv.rate);
		jput_u64(j, "guaranteed_rate", class_reserved(s, c));
		jput_bound(j, "guaranteed_bound", c->bound_ns);
		jput_bound(j, "current_bound", cur_bound(s, c));
	}
	/* what the simulated traffic measured */
	jput_bool(j, "traffic", c->tr.on);
	if (c->tr.on) {
		jput_u64(j, "packets", c->pkts);
		jput_u64(j, "bytes", c->bytes);
		jput_frac(j, "byte_share", s->total_bytes ?
			  (double)c->bytes / (double)s->total_bytes : 0);
		jput_u64(j, "bytes_high", c->tbytes[ARB_HIGH]);
		jput_u64(j, "bytes_low", c->tbytes[ARB_LOW]);
		jput_u64(j, "bytes_strict", c->tbytes[ARB_STRICT]);
		jput_u64(j, "bytes_slotless", c->tbytes[ARB_SLOTLESS]);
		jput_u64(j, "worst_gap_bytes", c->gap_max);
		jput_u64(j, "worst_gap_ns", gap_ns(s, c->gap_max));
		jput_u64(j, "max_hol_wait", c->max_hol);
		jput_u64(j, "throttled", c->nthrottled);
		jput_u64(j, "drops", c->tr.drops);
	}
	return j;
}

static void print_json(struct sim *s)
{
	unsigned int idx[ARB_MAX_CLASSES], n, i, k, t;
	struct json_object *root = jnew(), *a, *o;

	n = sorted_classes(s, idx);
	jput(root, "qdisc", json_qdisc(s));

	a = jnew_array();
	jput(root, "decisions", a);
	for (i = 0; i < s->ndec; i++)
		jadd(a, json_decision(s, &s->dec[i]));

	o = jnew();
	jput(root, "tables", o);
	for (t = 0; t < ARB_NTABLES; t++) {
		const struct arb_table *tb = &s->arb.tbl[t];

		a = jnew_array();
		jput(o, table_name[t], a);
		for (k = 0; k < ARB_SLOTS; k++) {
			struct json_object *e;

			if (!tb->weight[k])
				continue;
			e = jnew();
			jput_u64(e, "slot", k);
			jput_classid(e, "class", s, s->cls[tb->cls[k]].minor);
			jput_u64(e, "weight", tb->weight[k]);
			jadd(a, e);
		}
	}

	a = jnew_array();
	jput(root, "classes", a);
	for (k = 0; k < n; k++)
		jadd(a, json_class(s, &s->cls[idx[k]]));

	o = jnew();
	jput(root, "unclassified", o);
	jput_u64(o, "packets", s->uncl_pkts);
	jput_u64(o, "bytes", s->uncl_bytes);
	a = jnew_array();
	jput(o, "sources", a);
	for (k = 0; k < s->nuncl; k++) {
		char b[16];

		snprintf(b, sizeof(b), "%x:%x", s->major, s->uncl[k].minor);
		jadd(a, json_object_new_string(b));
	}

	o = jnew();
	jput(root, "shares", o);
	for (t = 0; t < ARB_NTABLES; t++) {
		u64 tw = table_weight(s, t), tbt = table_bytes(s, t);

		a = jnew_array();
		jput(o, table_name[t], a);
		for (k = 0; k < n; k++) {
			struct sim_class *c = &s->cls[idx[k]];
			u64 w = class_weight(s, t, c->index);
			double ws, bs;
			struct json_object *e;

			if (!w || !c->tr.on)
				continue;
			ws = tw ? (double)w / (double)tw : 0;
			bs = tbt ? (double)c->tbytes[t] / (double)tbt : 0;
			e = jnew();
			jput_classid(e, "class", s, c->minor);
			jput_u64(e, "weight", w);
			jput_frac(e, "weight_share", ws);
			jput_u64(e, "bytes", c->tbytes[t]);
			jput_frac(e, "byte_share", bs);
			jput_frac(e, "diff", bs - ws);
			jadd(a, e);
		}
	}

	a = jnew_array();
	jput(root, "order", a);
	for (i = 0; i < s->norder; i++) {
		struct order_ent *oe = &s->order[i];
		struct json_object *e = jnew();

		jput_u64(e, "seq", i + 1);
		jput_u64(e, "time_ns", oe->t);
		jput_classid(e, "class", s, oe->minor);
		jput_str(e, "table", table_name[oe->table]);
		jput_u64(e, "slot", oe->slot);
		jput_int(e, "credit", oe->credit);
		jput_u64(e, "len", oe->len);
		jadd(a, e);
	}

	o = jnew();
	jput(root, "sim", o);
	jput_u64(o, "packets", s->sent);
	jput_u64(o, "bytes", s->total_bytes);
	jput_u64(o, "duration_ns", s->now);
	jput_u64(o, "seed", s->seed);
	jput_bool(o, "stopped_early", s->stopped_early);
	jput_u64(o, "swaps", s->swaps);

	puts(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
}

/* ---------------------------------------------------------------------- */

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
"  TIME: ns, us, ms, s (bare = ns). Defaults: auto, highlimit 16, deficit,\n"
"  maxweight 255, size = mtu; mtu as the module follows an Ethernet NIC at\n"
"  mtu 1500: 1514, from rate 1gbit up 69646 (a 64 KiB GSO skb kept whole).\n"
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
			if (parse_u64(optarg, 10, &packets) ||
			    packets > 1000000000ULL) {
				fprintf(stderr, "arbsim: bad --packets \"%s\" (0..1e9)\n",
					optarg);
				return 2;
			}
			break;
		case 'o':
			if (parse_u64(optarg, 10, &order_n) ||
			    order_n > 10000000ULL) {
				fprintf(stderr, "arbsim: bad --order \"%s\" (0..1e7)\n",
					optarg);
				return 2;
			}
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
