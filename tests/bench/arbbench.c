// SPDX-License-Identifier: GPL-2.0
/*
 * arbbench: userspace benchmarks of the kernel-independent core
 * (kernel/arbtable_core.c). Not a test: it asserts nothing
 * about time; tests/bench/run.py drives it and prints the tables.
 *
 *   arbbench alloc-time  SEEDS OPS   random allocator ops, ns per op
 *   arbbench alloc-instr SEED  OPS   same ops through per-group wrappers,
 *                                    run under callgrind (instructions)
 *   arbbench arb-time    DECISIONS REPS   ns per dequeue decision
 *   arbbench arb-instr   DECISIONS        one callgrind dump per config
 *
 * The arbiter configurations with 1 MiB packets on weight-1 slots run
 * twice: with the core's table walk and with the old one it replaced
 * (tests/unit/arb_ref_walk.h, "walk":"ref"), whose passes per decision
 * are printed too.
 *
 * Every mode prints one JSON object per line on stdout and progress on
 * stderr. OPS is per load phase; there are ARRAY_SIZE(phases) phases.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arbtable_core_test.h"
/* the walk before arb_table_skip_rounds(), the adversarial baseline */
#include "../unit/arb_ref_walk.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif
#ifndef HAVE_CALLGRIND
#define HAVE_CALLGRIND 0
#define CALLGRIND_ZERO_STATS do { } while (0)
#define CALLGRIND_DUMP_STATS_AT(s) do { (void)(s); } while (0)
#endif

#define NOINL __attribute__((__noinline__, __noclone__))

static volatile uint64_t g_sink;

/* ---------------------------------------------------------------------- */
/* RNG (splitmix64) and small helpers                                      */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned int rnd_range(unsigned int lo, unsigned int hi)
{
	return lo + (unsigned int)(rnd() % ((uint64_t)hi - lo + 1));
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

struct samples {
	uint32_t *v;
	size_t n, cap;
};

static void samples_add(struct samples *s, uint32_t x)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 4096;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v) {
			perror("realloc");
			exit(2);
		}
	}
	s->v[s->n++] = x;
}

/* Percentile (0..100) of sorted samples, nearest rank. */
static uint32_t pct(const struct samples *s, unsigned int p)
{
	size_t i;

	if (!s->n)
		return 0;
	i = (s->n - 1) * p / 100;
	return s->v[i];
}

/* ---------------------------------------------------------------------- */
/* Allocator workload                                                      */

/* Groups by number of classes admitted (counting the class operated on). */
static const struct { unsigned int lo, hi; } buckets[] = {
	{ 1, 1 }, { 2, 3 }, { 4, 7 }, { 8, 15 }, { 16, 31 }, { 32, 47 },
	{ 48, 63 }, { 64, 64 },
};
#define NB ARRAY_SIZE(buckets)

static unsigned int bucket_of(unsigned int k)
{
	unsigned int b;

	for (b = 0; b < NB; b++)
		if (k <= buckets[b].hi)
			return b;
	return NB - 1;
}

/* Target class counts of the load phases, a few classes up to 64. */
static const unsigned int phases[] = { 1, 2, 4, 8, 16, 32, 48, 64 };

enum { OP_INS, OP_REL, OP_CHG, OP_INS_FAIL, OP_CHG_FAIL, NOPS };
static const char *const op_name[NOPS] = {
	"insert", "release", "change", "insert_fail", "change_fail",
};

struct group {
	struct samples ns;
	uint64_t count, swaps, slots;
};

static struct group groups[NOPS][NB];

static struct arb_reject g_rj;
static struct arb_moves g_mv;

/*
 * Per-(op, bucket) wrappers so that callgrind attributes each call's cost
 * to its group (instructions of the core function, from the call arcs
 * wrapper -> arb_alloc_*). noclone plus -fno-ipa-icf keep them distinct.
 */
#define WRAPS(b)							\
static NOINL int bw_ins_##b(struct arb_alloc *a, unsigned int c,	\
			    unsigned int d, u32 w)			\
{									\
	u8 set;								\
	int r = arb_alloc_insert(a, c, d, w, &set, &g_rj);		\
	g_sink += set;							\
	return r;							\
}									\
static NOINL int bw_rel_##b(struct arb_alloc *a, unsigned int c,	\
			    unsigned int d, u32 w)			\
{									\
	int r = arb_alloc_release(a, c, &g_mv, &g_rj);			\
	g_sink += d + w;						\
	return r;							\
}									\
static NOINL int bw_chg_##b(struct arb_alloc *a, unsigned int c,	\
			    unsigned int d, u32 w)			\
{									\
	int r = arb_alloc_change(a, c, d, w, &g_mv, &g_rj);		\
	g_sink += b;							\
	return r;							\
}
WRAPS(0) WRAPS(1) WRAPS(2) WRAPS(3) WRAPS(4) WRAPS(5) WRAPS(6) WRAPS(7)

static NOINL int bw_insfail_0(struct arb_alloc *a, unsigned int c,
			      unsigned int d, u32 w)
{
	int r = arb_alloc_insert(a, c, d, w, NULL, &g_rj);

	g_sink += 1;
	return r;
}

static NOINL int bw_chgfail_0(struct arb_alloc *a, unsigned int c,
			      unsigned int d, u32 w)
{
	int r = arb_alloc_change(a, c, d, w, &g_mv, &g_rj);

	g_sink += 2;
	return r;
}

typedef int (*alloc_fn)(struct arb_alloc *, unsigned int, unsigned int, u32);

#define W8(op) { bw_##op##_0, bw_##op##_1, bw_##op##_2, bw_##op##_3,	\
		 bw_##op##_4, bw_##op##_5, bw_##op##_6, bw_##op##_7 }
static const alloc_fn wrap_ins[NB] = W8(ins);
static const alloc_fn wrap_rel[NB] = W8(rel);
static const alloc_fn wrap_chg[NB] = W8(chg);

/* Random distance for load phase K: levels ~log2(K) .. +2, any integer
 * of that range (the allocator rounds it down to a power of two).
 */
static unsigned int gen_distance(unsigned int k)
{
	unsigned int lo = 0, hi, l, d;

	while ((2U << lo) <= k && lo < 6)
		lo++;
	hi = lo + 2 > 6 ? 6 : lo + 2;
	l = rnd_range(lo, hi);
	d = (1U << l) + rnd_range(0, (1U << l) - 1);
	return d > 64 ? 64 : d;
}

/* Random weight that fits the slots of distance d: n .. n * maxweight. */
static u32 gen_weight(unsigned int d, unsigned int maxweight)
{
	unsigned int n = 64 / arb_round_distance(d);

	return rnd_range(n, n * maxweight);
}

static unsigned int pick_class(const struct arb_alloc *a, bool admitted)
{
	unsigned int c = rnd_range(0, 63), i;

	for (i = 0; i < 64; i++, c = (c + 1) & 63)
		if (arb_alloc_has(a, c) == admitted)
			return c;
	return 64;
}

struct alloc_op {
	int op;			/* OP_INS, OP_REL or OP_CHG (requested) */
	unsigned int cls, d;
	u32 w;
};

static struct alloc_op gen_op(const struct arb_alloc *a, unsigned int k)
{
	struct alloc_op o = { 0 };
	unsigned int n = a->nclasses, r = rnd_range(0, 99);

	if (!n)
		o.op = OP_INS;
	else if (n >= 64)
		o.op = r < 70 ? OP_REL : OP_CHG;
	else if (n < k)
		o.op = r < 60 ? OP_INS : r < 80 ? OP_REL : OP_CHG;
	else
		o.op = r < 20 ? OP_INS : r < 80 ? OP_REL : OP_CHG;
	o.cls = pick_class(a, o.op != OP_INS);
	o.d = gen_distance(k);
	o.w = gen_weight(o.d, a->maxweight);
	return o;
}

static void check_or_die(const struct arb_alloc *a, const char *what)
{
	int e = arb_alloc_check(a);

	if (e) {
		fprintf(stderr, "arbbench: allocator invariant %d broken after %s\n",
			e, what);
		exit(3);
	}
}

/* One op, timed (timed) or through the wrappers (!timed). */
static void run_alloc_op(struct arb_alloc *a, const struct alloc_op *o,
			 bool timed)
{
	unsigned int n0 = a->nclasses, k, b;
	uint64_t t0 = 0, t1 = 0;
	int op = o->op, r;

	/* Group: classes admitted counting the one operated on. */
	k = op == OP_INS ? n0 + 1 : n0;
	if (k > 64)
		k = 64;
	b = bucket_of(k);
	if (timed) {
		switch (op) {
		case OP_INS:
			t0 = now_ns();
			r = arb_alloc_insert(a, o->cls, o->d, o->w, NULL, &g_rj);
			t1 = now_ns();
			break;
		case OP_REL:
			t0 = now_ns();
			r = arb_alloc_release(a, o->cls, &g_mv, &g_rj);
			t1 = now_ns();
			break;
		default:
			t0 = now_ns();
			r = arb_alloc_change(a, o->cls, o->d, o->w, &g_mv,
					     &g_rj);
			t1 = now_ns();
			break;
		}
	} else {
		/* Trial on a copy (not measured) picks the wrapper. */
		struct arb_alloc tmp = *a;
		int ok;

		if (op == OP_INS)
			ok = !arb_alloc_insert(&tmp, o->cls, o->d, o->w, NULL,
					       NULL);
		else if (op == OP_CHG)
			ok = !arb_alloc_change(&tmp, o->cls, o->d, o->w, NULL,
					       NULL);
		else
			ok = 1;
		if (op == OP_INS)
			r = (ok ? wrap_ins[b] : bw_insfail_0)(a, o->cls, o->d,
							      o->w);
		else if (op == OP_REL)
			r = wrap_rel[b](a, o->cls, o->d, o->w);
		else
			r = (ok ? wrap_chg[b] : bw_chgfail_0)(a, o->cls, o->d,
							      o->w);
		if (!ok != !!r) {
			fprintf(stderr, "arbbench: trial and op disagree\n");
			exit(3);
		}
	}
	if (r && op == OP_REL) {
		fprintf(stderr, "arbbench: release failed (%d)\n", r);
		exit(3);
	}
	if (r)
		op = op == OP_INS ? OP_INS_FAIL : OP_CHG_FAIL;
	if (op == OP_INS_FAIL || op == OP_CHG_FAIL)
		b = bucket_of(n0 ? n0 : 1);
	groups[op][b].count++;
	groups[op][b].slots += 64 - arb_alloc_free_slots(a);
	if (op == OP_REL || op == OP_CHG)
		groups[op][b].swaps += g_mv.n;
	if (timed)
		samples_add(&groups[op][b].ns, (uint32_t)(t1 - t0));
	check_or_die(a, op_name[op]);
}

static void run_alloc(unsigned int seeds, unsigned int ops, bool timed)
{
	unsigned int s, p, i;
	uint64_t total = 0;

	for (s = 1; s <= seeds; s++) {
		struct arb_alloc a;

		rng_state = 0x5eed0000ULL + s;
		arb_alloc_init(&a, 255);
		for (p = 0; p < ARRAY_SIZE(phases); p++) {
			fprintf(stderr, "  %s: seed %u/%u, load phase %u/%zu (target %u classes), %u ops\n",
				timed ? "alloc-time" : "alloc-instr", s, seeds,
				p + 1, ARRAY_SIZE(phases), phases[p], ops);
			for (i = 0; i < ops; i++) {
				struct alloc_op o = gen_op(&a, phases[p]);

				run_alloc_op(&a, &o, timed);
				total++;
			}
		}
	}
	fprintf(stderr, "  %s: %" PRIu64 " ops done\n",
		timed ? "alloc-time" : "alloc-instr", total);
}

static uint32_t timer_overhead_ns(void)
{
	struct samples s = { 0 };
	unsigned int i;
	uint32_t med;

	for (i = 0; i < 200000; i++) {
		uint64_t t0 = now_ns(), t1 = now_ns();

		samples_add(&s, (uint32_t)(t1 - t0));
	}
	qsort(s.v, s.n, sizeof(*s.v), cmp_u32);
	med = pct(&s, 50);
	free(s.v);
	return med;
}

static void print_alloc(bool timed, uint32_t timer)
{
	uint64_t ops = 0, swaps = 0, rel = 0, rel_swaps = 0;
	unsigned int op, b;

	for (op = 0; op < NOPS; op++) {
		for (b = 0; b < NB; b++) {
			struct group *g = &groups[op][b];
			uint64_t sum = 0;
			size_t i;

			if (!g->count)
				continue;
			ops += g->count;
			swaps += g->swaps;
			if (op == OP_REL) {
				rel += g->count;
				rel_swaps += g->swaps;
			}
			printf("{\"bench\":\"alloc\",\"op\":\"%s\",\"wrapper\":\"bw_%s_%u\",\"lo\":%u,\"hi\":%u,\"count\":%" PRIu64 ",\"mean_slots_used\":%.2f,\"mean_swaps\":%.4f",
			       op_name[op],
			       op == OP_INS ? "ins" : op == OP_REL ? "rel" :
			       op == OP_CHG ? "chg" : op == OP_INS_FAIL ?
			       "insfail" : "chgfail",
			       op >= OP_INS_FAIL ? 0 : b,
			       buckets[b].lo, buckets[b].hi, g->count,
			       (double)g->slots / (double)g->count,
			       (double)g->swaps / (double)g->count);
			if (timed) {
				qsort(g->ns.v, g->ns.n, sizeof(*g->ns.v),
				      cmp_u32);
				for (i = 0; i < g->ns.n; i++)
					sum += g->ns.v[i];
				printf(",\"median_ns_raw\":%u,\"p10_ns_raw\":%u,\"p90_ns_raw\":%u,\"p99_ns_raw\":%u,\"mean_ns_raw\":%.1f",
				       pct(&g->ns, 50), pct(&g->ns, 10),
				       pct(&g->ns, 90), pct(&g->ns, 99),
				       (double)sum / (double)g->ns.n);
			}
			printf("}\n");
		}
	}
	printf("{\"bench\":\"alloc_meta\",\"ops\":%" PRIu64 ",\"releases\":%" PRIu64 ",\"swaps\":%" PRIu64 ",\"swaps_per_op\":%.4f,\"swaps_per_release\":%.4f",
	       ops, rel, swaps, (double)swaps / (double)ops,
	       rel ? (double)rel_swaps / (double)rel : 0.0);
	if (timed)
		printf(",\"timer_ns\":%u", timer);
	printf("}\n");
}

/* ---------------------------------------------------------------------- */
/* Arbiter: cost of one dequeue decision (arb_select + arb_charge)         */

struct arb_cfg {
	unsigned int len;	/* packet length, bytes (rand: the largest) */
	/* "quantum": debt < quantum; "small": w 1; "rand": w 1 and packet
	 * lengths uniform in 1..len
	 */
	const char *regime;
	unsigned int w;		/* weight of every slot */
	unsigned int slots;	/* slots in use */
	unsigned int classes;	/* backlogged classes */
	bool ref;		/* the old table walk (arb_ref_walk.h) */
};

#define GSO_LEN		65536
#define GSO_DIV		32	/* fewer decisions for GSO configs */
#define ADV_LEN		ARB_MAX_PKT_LEN
#define ADV_DIV		128	/* and for 1 MiB ones */

static unsigned int cfg_div(const struct arb_cfg *c)
{
	return c->len == ADV_LEN ? ADV_DIV : c->len == GSO_LEN ? GSO_DIV : 1;
}

/* Decisions per measurement: 1 MiB ones in whole rounds of the 64 slots
 * (with equal debts one decision in 64 pays them off).
 */
static unsigned int cfg_decisions(const struct arb_cfg *c, unsigned int m)
{
	m /= cfg_div(c);
	if (c->len == ADV_LEN)
		m = m < ARB_SLOTS ? ARB_SLOTS : m - m % ARB_SLOTS;
	return m;
}

static unsigned int quantum_weight(unsigned int len)
{
	/* Quantum >= 2 packets: overshoot (< len) stays below it. */
	unsigned int w = 2 * ((len + ARB_WEIGHT_UNIT - 1) / ARB_WEIGHT_UNIT);

	return w > 255 ? 255 : w;
}

static size_t arb_cfgs(struct arb_cfg *c, size_t max)
{
	static const unsigned int lens[] = { 64, 1500 };
	size_t n = 0;
	unsigned int l, r, s, k;

	for (l = 0; l < ARRAY_SIZE(lens); l++)
		for (r = 0; r < 2; r++)
			for (s = 1; s <= 64; s *= 2)
				for (k = 1; k <= s; k *= 2) {
					if (n == max)
						return n;
					c[n].len = lens[l];
					c[n].regime = r ? "small" : "quantum";
					c[n].w = r ? 1 : quantum_weight(lens[l]);
					c[n].slots = s;
					c[n].classes = k;
					c[n].ref = false;
					n++;
				}
	/* GSO-sized packets with weight 1: a debt of ~1,000 quanta, which
	 * the old walk paid one quantum per loop pass.
	 */
	for (k = 1; k <= 64 && n < max; k *= 2, n++) {
		c[n].len = GSO_LEN;
		c[n].regime = "small";
		c[n].w = 1;
		c[n].slots = 64;
		c[n].classes = k;
		c[n].ref = false;
	}
	/* The adversarial tables: 64 weight-1 slots (quantum 64 B) owing up
	 * to a 1 MiB packet each, 1 MiB or random lengths, with today's walk
	 * and the old one, which went round ~len / 64 times per decision.
	 */
	for (r = 0; r < 4; r++)
		for (k = 1; k <= 64 && n < max; k *= 2, n++) {
			c[n].len = ADV_LEN;
			c[n].regime = r & 1 ? "rand" : "small";
			c[n].w = 1;
			c[n].slots = 64;
			c[n].classes = k;
			c[n].ref = r >= 2;
		}
	return n;
}

/* HIGH table only (highlimit 255), deficit mode; @slots evenly spaced
 * slots, class i % classes in the i-th, every class backlogged.
 */
static void arb_setup(struct arb_sched *s, const struct arb_cfg *c)
{
	unsigned int i;

	arb_init(s, ARB_HIGHLIMIT_INF, ARB_ACCT_DEFICIT);
	for (i = 0; i < c->slots; i++)
		arb_set_slot(s, ARB_HIGH, i * (64 / c->slots),
			     (u8)(i % c->classes), (u8)c->w);
	for (i = 0; i < c->classes; i++)
		arb_set_eligible(s, i, true);
}

static uint64_t served[ARB_MAX_CLASSES];

/* arb_select()/arb_charge() are inline (the qdisc's hot path): callgrind
 * collects inside these out-of-line copies (--toggle-collect=bwa_*).
 */
static NOINL bool bwa_select(struct arb_sched *s, struct arb_pick *p)
{
	return arb_select(s, p);
}

static NOINL s32 bwa_charge(struct arb_sched *s, const struct arb_pick *p,
			    u32 len)
{
	return arb_charge(s, p, len);
}

/* the old walk's passes, counted by arb_ref_walk.h */
static unsigned long ref_passes;

static NOINL bool bwr_select(struct arb_sched *s, struct arb_pick *p)
{
	return arb_ref_select(s, p, &ref_passes);
}

/* "rand" lengths: drawn once, outside the measured decisions */
#define RAND_LENS	4096
static u32 rand_lens[RAND_LENS];

static void rand_lens_init(unsigned int max)
{
	unsigned int i;

	rng_state = 12345;
	for (i = 0; i < RAND_LENS; i++)
		rand_lens[i] = rnd_range(1, max);
}

static NOINL void run_decisions(struct arb_sched *s,
				const struct arb_cfg *c, unsigned int m)
{
	bool rnd_len = !strcmp(c->regime, "rand");
	struct arb_pick p;
	unsigned int i;
	bool ok;

	for (i = 0; i < m; i++) {
		ok = c->ref ? bwr_select(s, &p) : bwa_select(s, &p);
		if (!ok) {
			fprintf(stderr, "arbbench: nothing selected\n");
			exit(3);
		}
		served[p.cls]++;
		bwa_charge(s, &p, rnd_len ? rand_lens[i % RAND_LENS] : c->len);
	}
}

/* Every backlogged class must be served (sanity, not a test). */
static void check_served(const struct arb_cfg *c)
{
	unsigned int i;

	for (i = 0; i < c->classes; i++)
		if (!served[i]) {
			fprintf(stderr, "arbbench: class %u never served\n", i);
			exit(3);
		}
}

static void print_cfg(const struct arb_cfg *c)
{
	printf("{\"bench\":\"arb\",\"len\":%u,\"regime\":\"%s\",\"weight\":%u,\"quantum\":%u,\"slots\":%u,\"classes\":%u,\"walk\":\"%s\"",
	       c->len, c->regime, c->w, c->w * ARB_WEIGHT_UNIT, c->slots,
	       c->classes, c->ref ? "ref" : "new");
}

static void run_arb(unsigned int m_all, unsigned int reps, bool timed)
{
	struct arb_cfg cfg[256];
	size_t n = arb_cfgs(cfg, ARRAY_SIZE(cfg)), i;
	static struct arb_sched s;
	char name[128];

	rand_lens_init(ADV_LEN);

	for (i = 0; i < n; i++) {
		const struct arb_cfg *c = &cfg[i];
		unsigned int r, m = cfg_decisions(c, m_all);
		unsigned long passes;
		double best[16];

		if (i % 28 == 0)
			fprintf(stderr, "  %s: %zu/%zu configs (%u B, %s weights)\n",
				timed ? "arb-time" : "arb-instr", i, n,
				c->len, c->regime);
		memset(served, 0, sizeof(served));
		arb_setup(&s, c);
		run_decisions(&s, c, cfg_div(c) > 1 ? 256 : 4096);
		passes = ref_passes;
		if (!timed) {
			CALLGRIND_ZERO_STATS;
			run_decisions(&s, c, m);
			snprintf(name, sizeof(name), "arb len=%u regime=%s slots=%u classes=%u walk=%s",
				 c->len, c->regime, c->slots, c->classes,
				 c->ref ? "ref" : "new");
			CALLGRIND_DUMP_STATS_AT(name);
			check_served(c);
			print_cfg(c);
			printf(",\"decisions\":%u,\"dump\":\"%s\"", m, name);
			if (c->ref)
				printf(",\"passes_per_decision\":%.1f",
				       (double)(ref_passes - passes) / m);
			printf("}\n");
			continue;
		}
		if (reps > ARRAY_SIZE(best))
			reps = ARRAY_SIZE(best);
		for (r = 0; r < reps; r++) {
			uint64_t t0 = now_ns();

			run_decisions(&s, c, m);
			best[r] = (double)(now_ns() - t0) / m;
		}
		check_served(c);
		/* median of the repetitions */
		for (r = 1; r < reps; r++) {
			double x = best[r];
			int j = (int)r - 1;

			while (j >= 0 && best[j] > x) {
				best[j + 1] = best[j];
				j--;
			}
			best[j + 1] = x;
		}
		print_cfg(c);
		printf(",\"decisions\":%u,\"reps\":%u,\"ns_per_decision\":%.3f,\"ns_min\":%.3f,\"ns_max\":%.3f",
		       m, reps, best[reps / 2], best[0], best[reps - 1]);
		if (c->ref)
			printf(",\"passes_per_decision\":%.1f",
			       (double)(ref_passes - passes) / (m * reps));
		printf("}\n");
	}
	fprintf(stderr, "  %s: %zu configs done\n",
		timed ? "arb-time" : "arb-instr", n);
}

static unsigned int arg(int argc, char **argv, int i, unsigned int def)
{
	return argc > i ? (unsigned int)strtoul(argv[i], NULL, 0) : def;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "caps")) {
		printf("{\"bench\":\"caps\",\"callgrind_h\":%d}\n",
		       HAVE_CALLGRIND);
	} else if (!strcmp(mode, "alloc-time")) {
		uint32_t t = timer_overhead_ns();

		run_alloc(arg(argc, argv, 2, 3), arg(argc, argv, 3, 20000),
			  true);
		print_alloc(true, t);
	} else if (!strcmp(mode, "alloc-instr")) {
		run_alloc(1, arg(argc, argv, 3, 20000), false);
		print_alloc(false, 0);
	} else if (!strcmp(mode, "arb-time")) {
		run_arb(arg(argc, argv, 2, 200000), arg(argc, argv, 3, 5),
			true);
	} else if (!strcmp(mode, "arb-instr")) {
		run_arb(arg(argc, argv, 2, 10000), 1, false);
	} else {
		fprintf(stderr, "usage: %s caps|alloc-time SEEDS OPS|alloc-instr SEED OPS|arb-time DECISIONS REPS|arb-instr DECISIONS\n",
			argv[0]);
		return 2;
	}
	return 0;
}
