/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arbsim.h - what the files of arbsim share: the simulated qdisc, its
 * classes and the allocator's decisions (struct sim), and the entry
 * points of each job:
 *
 *   arbsim_scenario.c  the scenario's statements and values
 *   arbsim_classes.c   classes, tables and admissions, as decisions
 *   arbsim_run.c       the simulation at the qdisc's rate
 *   arbsim_report.c    what both reports compute
 *   arbsim_text.c      the text report
 *   arbsim_json.c      the JSON report
 *   arbsim.c           options, usage, main
 */
#ifndef ARBSIM_H
#define ARBSIM_H

#include <stdio.h>

#include "arbtable_core_test.h"

#define SIM_QLIMIT		1000	/* pfifo default (txqueuelen) */
#define SIM_MAX_SIZES		32
#define SIM_UNCLASSIFIED	ARB_UNCLASSIFIED	/* table id in the order output */
#define SIM_MAX_SOURCES		128

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

struct copts {
	bool has_strict, strict;
	bool has_ceil, has_cburst;
	u64 ceil;
	u32 cburst;
	bool has_rate, has_latency, has_distance, has_share;
	u64 rate, latency;
	u32 distance, share;
};

/* the table names of the reports, by ARB_HIGH .. SIM_UNCLASSIFIED */
extern const char *const table_name[];

/* arbsim.c */
extern const char *scen_name;
extern int scen_line;
/* a scenario error at scen_name:scen_line: the message, exit 2 */
void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...);
void *xcalloc(size_t n, size_t sz);

/* arbsim_scenario.c */
int parse_u64(const char *s, int base, u64 *v);
void parse_scenario(struct sim *s, FILE *f);

/* arbsim_classes.c: the statements that change classes and tables */
struct sim_class *find_class(struct sim *s, u32 minor);
struct sim_class *new_class(struct sim *s, u32 minor);
void strict_params(const struct sim *s, struct arb_params *p);
u64 class_reserved(const struct sim *s, const struct sim_class *c);
void do_class(struct sim *s, bool create, u32 minor, const struct copts *o);
void do_del(struct sim *s, u32 minor);
void do_table(struct sim *s, unsigned int t, const char *list);

/* arbsim_run.c */
void simulate(struct sim *s);

/* arbsim_report.c */
const char *tname(u8 t);
u64 class_weight(const struct sim *s, unsigned int t, unsigned int idx);
u64 table_weight(const struct sim *s, unsigned int t);
u64 table_bytes(const struct sim *s, unsigned int t);
u64 cur_bound(const struct sim *s, const struct sim_class *c);
u64 gap_ns(const struct sim *s, u64 bytes);
unsigned int sorted_classes(const struct sim *s, unsigned int *out);

/* arbsim_text.c, arbsim_json.c */
void print_text(struct sim *s);
void print_json(struct sim *s);

#endif /* ARBSIM_H */
