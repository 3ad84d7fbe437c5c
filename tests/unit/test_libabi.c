// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of libarbtable's extensible structs (arbtable.h, "Extensible
 * structs"): the size rules of lib/arbtable_abi.c on a struct in two
 * versions, as an older and a newer caller would pass it, then the same
 * rules through the public calls: the record getters on a state filled
 * here (a caller built with the first release's records among them), the
 * kernel's xstats as this release lays them out, longer and cut short,
 * and the option calls on a real handle, which refuse bad sizes before
 * they look for the device (no kernel module, no privilege).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <linux/pkt_sched_arbtable.h>

#include "arbtable/arbtable.h"
#include "arbtable_abi.h"
#include "arbtable_state.h"

/* A struct in its first release and after one field was appended. */
struct t_v0 {
	uint64_t	a;
	uint32_t	b;
	uint32_t	c;
};

struct t_v1 {
	uint64_t	a;
	uint32_t	b;
	uint32_t	c;
	uint64_t	d;	/* appended */
};

/*
 * The records as the first release (0.1.0) declared them, copied from its
 * arbtable.h: what a program built then passes, at
 * ARBTABLE_*_INFO_SIZE_VER0. Never edit these.
 */
struct qdisc_info_ver0 {
	int32_t		ifindex;
	char		ifname[16];
	uint32_t	handle;
	uint32_t	parent;
	uint32_t	nclasses;
	uint64_t	timestamp_ns;
	uint32_t	priomap[ARBTABLE_PRIO_BANDS];
	struct arbtable_slot table[ARBTABLE_NTABLES][ARBTABLE_SLOTS];

	struct arbtable_stats stats;
	int32_t		has_xstats;
	uint32_t	unclassified_qlen;
	uint64_t	unclassified_pkts;
	uint64_t	unclassified_drops;
	uint64_t	swaps;
	uint64_t	throttled;
	uint32_t	used[ARBTABLE_NTABLES];
	uint32_t	cur[ARBTABLE_NTABLES];
	int32_t		hp_counter;
	int32_t		credit[ARBTABLE_NTABLES][ARBTABLE_SLOTS];
	uint32_t	reserved;
};

struct class_info_ver0 {
	uint32_t	classid;
	uint32_t	leaf;
	struct arbtable_stats stats;
	int32_t		has_xstats;
	uint32_t	distance;
	uint64_t	slots[ARBTABLE_NTABLES];
	uint32_t	weight[ARBTABLE_NTABLES];
	uint32_t	index;
	uint32_t	reserved_weight;
	uint64_t	reserved_rate;
	uint64_t	guaranteed_rate;
	uint64_t	guaranteed_bound_ns;
	uint64_t	current_bound_ns;
	uint64_t	max_hol_ns;
	uint64_t	throttled;
};

#define CANARY		0xa5
#define NODEV		"arbt-nodev0"	/* no such device on the host */

static int all_bytes(const void *p, size_t n, unsigned char v)
{
	const unsigned char *b = p;

	while (n--)
		if (*b++ != v)
			return 0;
	return 1;
}

/* An older caller reads a record the library knows as v1: it gets the
 * fields it knows and not one byte past its own size.
 */
static void test_rec_out_older_caller(void **state)
{
	struct t_v1 k = { .a = 1, .b = 2, .c = 3, .d = 4 };
	unsigned char buf[sizeof(struct t_v0) + 16];
	struct t_v0 u;
	int n;

	(void)state;
	memset(buf, CANARY, sizeof(buf));
	n = arb_rec_out(buf, sizeof(struct t_v0), &k, sizeof(k),
			sizeof(struct t_v0));
	assert_int_equal(n, sizeof(struct t_v0));
	memcpy(&u, buf, sizeof(u));
	assert_int_equal(u.a, 1);
	assert_int_equal(u.b, 2);
	assert_int_equal(u.c, 3);
	assert_true(all_bytes(buf + sizeof(struct t_v0), 16, CANARY));
}

/* A newer caller reads a record the library knows as v0: the common
 * fields, the field the library does not know zeroed, and the size
 * filled returned so the caller can tell.
 */
static void test_rec_out_newer_caller(void **state)
{
	struct t_v0 k = { .a = 7, .b = 8, .c = 9 };
	unsigned char buf[sizeof(struct t_v1) + 16];
	struct t_v1 u;
	int n;

	(void)state;
	memset(buf, CANARY, sizeof(buf));
	n = arb_rec_out(buf, sizeof(struct t_v1), &k, sizeof(k),
			sizeof(struct t_v0));
	assert_int_equal(n, sizeof(struct t_v0));
	memcpy(&u, buf, sizeof(u));
	assert_int_equal(u.a, 7);
	assert_int_equal(u.b, 8);
	assert_int_equal(u.c, 9);
	assert_int_equal(u.d, 0);
	assert_true(all_bytes(buf + sizeof(struct t_v1), 16, CANARY));
}

static void test_rec_out_too_small(void **state)
{
	struct t_v1 k = { .a = 1 };
	unsigned char buf[sizeof(k)];

	(void)state;
	memset(buf, CANARY, sizeof(buf));
	assert_int_equal(arb_rec_out(buf, sizeof(struct t_v0) - 1, &k,
				     sizeof(k), sizeof(struct t_v0)), -EINVAL);
	assert_int_equal(arb_rec_out(buf, 0, &k, sizeof(k),
				     sizeof(struct t_v0)), -EINVAL);
	assert_true(all_bytes(buf, sizeof(buf), CANARY));
}

/* Options from an older caller: the field it does not have reads as 0
 * (unset), whatever the library's struct held before.
 */
static void test_opts_in_older_caller(void **state)
{
	struct t_v0 u = { .a = 11, .b = 12, .c = 13 };
	struct t_v1 k;

	(void)state;
	memset(&k, CANARY, sizeof(k));
	assert_int_equal(arb_opts_in(&k, sizeof(k), &u, sizeof(u),
				     sizeof(struct t_v0)), 0);
	assert_int_equal(k.a, 11);
	assert_int_equal(k.b, 12);
	assert_int_equal(k.c, 13);
	assert_int_equal(k.d, 0);
}

/* Options from a newer caller: fine while what it added is unset (zero),
 * refused with E2BIG when any byte of it is set, wherever that byte is.
 */
static void test_opts_in_newer_caller(void **state)
{
	struct t_v1 u = { .a = 21, .b = 22, .c = 23, .d = 0 };
	struct t_v0 k;
	size_t i;

	(void)state;
	memset(&k, CANARY, sizeof(k));
	assert_int_equal(arb_opts_in(&k, sizeof(k), &u, sizeof(u),
				     sizeof(struct t_v0)), 0);
	assert_int_equal(k.a, 21);
	assert_int_equal(k.b, 22);
	assert_int_equal(k.c, 23);

	for (i = sizeof(struct t_v0); i < sizeof(u); i++) {
		unsigned char raw[sizeof(u)];

		memcpy(raw, &u, sizeof(u));
		raw[i] = 1;
		assert_int_equal(arb_opts_in(&k, sizeof(k), raw, sizeof(raw),
					     sizeof(struct t_v0)), -E2BIG);
	}
}

static void test_opts_in_too_small(void **state)
{
	struct t_v0 u = { 0 }, k;

	(void)state;
	assert_int_equal(arb_opts_in(&k, sizeof(k), &u, sizeof(u) - 1,
				     sizeof(struct t_v0)), -EINVAL);
	assert_int_equal(arb_opts_in(&k, sizeof(k), &u, sizeof(void *),
				     sizeof(struct t_v0)), -EINVAL);
}

/* ------------------------------------------------------ public calls */

/* The sizes are what the header promises: the first release's, and each
 * later one's where its first appended field begins.
 */
static void test_ver_sizes(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct arbtable_qdisc_opts),
			 ARBTABLE_QDISC_OPTS_SIZE_VER2);
	assert_int_equal(offsetof(struct arbtable_qdisc_opts, lockless),
			 ARBTABLE_QDISC_OPTS_SIZE_VER1);
	assert_int_equal(offsetof(struct arbtable_qdisc_opts, prio_classid),
			 ARBTABLE_QDISC_OPTS_SIZE_VER0);
	assert_int_equal(sizeof(struct arbtable_class_opts),
			 ARBTABLE_CLASS_OPTS_SIZE_VER0);
	assert_int_equal(sizeof(struct qdisc_info_ver0),
			 ARBTABLE_QDISC_INFO_SIZE_VER0);
	assert_int_equal(sizeof(struct class_info_ver0),
			 ARBTABLE_CLASS_INFO_SIZE_VER0);
	assert_int_equal(offsetof(struct arbtable_qdisc_info,
				  mtu_follows_device),
			 ARBTABLE_QDISC_INFO_SIZE_VER0);
	assert_int_equal(offsetof(struct arbtable_class_info, xstats_fields),
			 ARBTABLE_CLASS_INFO_SIZE_VER0);
	assert_int_equal(sizeof(struct arbtable_qdisc_info),
			 ARBTABLE_QDISC_INFO_SIZE_VER2);
	assert_int_equal(sizeof(struct arbtable_class_info),
			 ARBTABLE_CLASS_INFO_SIZE_VER1);
	assert_int_equal(offsetof(struct arbtable_qdisc_info, reserved1) + 4,
			 ARBTABLE_QDISC_INFO_SIZE_VER1);
	assert_int_equal(offsetof(struct arbtable_qdisc_info,
				  unclassified_max_wait_ns) + 8,
			 ARBTABLE_QDISC_INFO_SIZE_VER2);
	assert_int_equal(offsetof(struct arbtable_class_info, stalls) + 8,
			 ARBTABLE_CLASS_INFO_SIZE_VER1);
}

/* Member @f where the first release had it: same offset, same size. */
#define SAME_MEMBER(v0, cur, f)						\
	do {								\
		assert_int_equal(offsetof(v0, f), offsetof(cur, f));	\
		assert_int_equal(sizeof(((v0 *)0)->f),			\
				 sizeof(((cur *)0)->f));		\
	} while (0)

/* Appending moved, resized and dropped nothing of the first release. */
static void test_ver0_layout_kept(void **state)
{
	(void)state;
#define Q(f)	SAME_MEMBER(struct qdisc_info_ver0, struct arbtable_qdisc_info, f)
	Q(ifindex); Q(ifname); Q(handle); Q(parent); Q(nclasses);
	Q(timestamp_ns); Q(priomap); Q(table); Q(stats); Q(has_xstats);
	Q(unclassified_qlen); Q(unclassified_pkts); Q(unclassified_drops);
	Q(swaps); Q(throttled); Q(used); Q(cur); Q(hp_counter); Q(credit);
	Q(reserved);
#undef Q
#define C(f)	SAME_MEMBER(struct class_info_ver0, struct arbtable_class_info, f)
	C(classid); C(leaf); C(stats); C(has_xstats); C(distance); C(slots);
	C(weight); C(index); C(reserved_weight); C(reserved_rate);
	C(guaranteed_rate); C(guaranteed_bound_ns); C(current_bound_ns);
	C(max_hol_ns); C(throttled);
#undef C
}

/* A state as arbtable_read() would leave it: two classes. */
static struct arbtable_state *filled_state(void)
{
	struct arbtable_state *st = arbtable_state_new();

	assert_non_null(st);
	st->q.handle = ARBTABLE_CLASSID(1, 0);
	st->q.ifindex = 5;
	snprintf(st->q.ifname, sizeof(st->q.ifname), "d0");
	st->q.nclasses = 2;
	st->q.credit[ARBTABLE_LOW][ARBTABLE_SLOTS - 1] = -3;
	st->qopts.set = ARBTABLE_Q_RATE;
	st->qopts.rate = 1250000;
	st->qopts.burst = 3000;
	st->classes[0].info.classid = ARBTABLE_CLASSID(1, 0x10);
	st->classes[0].info.throttled = 99;
	st->classes[0].opts.set = ARBTABLE_C_CBURST;
	st->classes[0].opts.cburst = 1500;
	st->classes[1].info.classid = ARBTABLE_CLASSID(1, 0x20);
	st->classes[1].info.max_hol_ns = 42;
	/* what the first release's records do not have */
	st->q.mtu_follows_device = 1;
	st->q.xstats_fields = ARBTABLE_QX_CAPACITY | ARBTABLE_QX_STALLS;
	st->q.capacity = 1250000;
	st->q.stalls = 17;
	st->q.broken = 2;
	st->classes[1].info.xstats_fields = ARBTABLE_CX_BROKEN |
					    ARBTABLE_CX_STALLS;
	st->classes[1].info.broken = 1;
	st->classes[1].info.stalls = 5;
	return st;
}

/* Each getter: the whole record at sizeof; a larger caller's tail
 * zeroed and the library's size returned; below SIZE_VER0 (@ver0)
 * refused with nothing written.
 */
#define CHECK_GETTER(call, type, ver0, check)				\
	do {								\
		unsigned char big[sizeof(type) + 24];			\
		type rec;						\
									\
		memset(&rec, CANARY, sizeof(rec));			\
		assert_int_equal(call(&rec, sizeof(rec)), sizeof(type));\
		check;							\
		memset(big, CANARY, sizeof(big));			\
		assert_int_equal(call((type *)big, sizeof(big)),	\
				 sizeof(type));				\
		assert_true(all_bytes(big + sizeof(type), 24, 0));	\
		memcpy(&rec, big, sizeof(rec));				\
		check;							\
		memset(big, CANARY, sizeof(big));			\
		assert_int_equal(call((type *)big, (ver0) - 1), -EINVAL);\
		assert_int_equal(call((type *)big, sizeof(void *)),	\
				 -EINVAL);				\
		assert_true(all_bytes(big, sizeof(big), CANARY));	\
	} while (0)

static void test_state_records(void **state)
{
	struct arbtable_state *st = filled_state();

	(void)state;
#define QI(p, n)	arbtable_state_qdisc(st, p, n)
#define QO(p, n)	arbtable_state_qdisc_opts(st, p, n)
#define CI1(p, n)	arbtable_state_class(st, 1, p, n)
#define CO0(p, n)	arbtable_state_class_opts(st, 0, p, n)
	CHECK_GETTER(QI, struct arbtable_qdisc_info,
		     ARBTABLE_QDISC_INFO_SIZE_VER0,
		     assert_true(rec.handle == ARBTABLE_CLASSID(1, 0) &&
				 rec.nclasses == 2 && rec.ifindex == 5 &&
				 !strcmp(rec.ifname, "d0") &&
				 rec.credit[ARBTABLE_LOW][ARBTABLE_SLOTS - 1] == -3 &&
				 rec.reserved == 0 && rec.mtu_follows_device &&
				 rec.capacity == 1250000 && rec.stalls == 17 &&
				 rec.broken == 2 && rec.reserved1 == 0));
	CHECK_GETTER(QO, struct arbtable_qdisc_opts,
		     ARBTABLE_QDISC_OPTS_SIZE_VER0,
		     assert_true(rec.set == ARBTABLE_Q_RATE &&
				 rec.rate == 1250000 && rec.burst == 3000));
	CHECK_GETTER(CI1, struct arbtable_class_info,
		     ARBTABLE_CLASS_INFO_SIZE_VER0,
		     assert_true(rec.classid == ARBTABLE_CLASSID(1, 0x20) &&
				 rec.max_hol_ns == 42 && rec.throttled == 0 &&
				 rec.broken == 1 && rec.stalls == 5));
	CHECK_GETTER(CO0, struct arbtable_class_opts,
		     ARBTABLE_CLASS_OPTS_SIZE_VER0,
		     assert_true(rec.set == ARBTABLE_C_CBURST &&
				 rec.cburst == 1500 && rec.reserved == 0));
#undef QI
#undef QO
#undef CI1
#undef CO0
	arbtable_state_free(st);
}

/*
 * A program built against the first release passes its records at
 * SIZE_VER0: it gets exactly the fields it knows, byte for byte as a
 * current caller sees them, the size it passed back, and not one byte
 * written past its struct. A current caller gets the appended fields.
 */
static void test_state_ver0_caller(void **state)
{
	struct arbtable_state *st = filled_state();
	unsigned char qbuf[sizeof(struct qdisc_info_ver0) + 64];
	unsigned char cbuf[sizeof(struct class_info_ver0) + 64];
	struct arbtable_qdisc_info q;
	struct arbtable_class_info c;
	struct qdisc_info_ver0 q0;
	struct class_info_ver0 c0;

	(void)state;
	assert_int_equal(arbtable_state_qdisc(st, &q, sizeof(q)),
			 ARBTABLE_QDISC_INFO_SIZE_VER2);
	assert_true(q.mtu_follows_device == 1 &&
		    q.xstats_fields == (ARBTABLE_QX_CAPACITY | ARBTABLE_QX_STALLS) &&
		    q.capacity == 1250000 && q.stalls == 17 && q.broken == 2);

	memset(qbuf, CANARY, sizeof(qbuf));
	assert_int_equal(arbtable_state_qdisc(st, (void *)qbuf,
					      ARBTABLE_QDISC_INFO_SIZE_VER0),
			 ARBTABLE_QDISC_INFO_SIZE_VER0);
	assert_memory_equal(qbuf, &q, ARBTABLE_QDISC_INFO_SIZE_VER0);
	assert_true(all_bytes(qbuf + ARBTABLE_QDISC_INFO_SIZE_VER0, 64, CANARY));
	memcpy(&q0, qbuf, sizeof(q0));
	assert_true(q0.handle == ARBTABLE_CLASSID(1, 0) && q0.nclasses == 2 &&
		    q0.ifindex == 5 && !strcmp(q0.ifname, "d0") &&
		    q0.credit[ARBTABLE_LOW][ARBTABLE_SLOTS - 1] == -3 &&
		    q0.reserved == 0);

	assert_int_equal(arbtable_state_class(st, 1, &c, sizeof(c)),
			 ARBTABLE_CLASS_INFO_SIZE_VER1);
	assert_true(c.xstats_fields == (ARBTABLE_CX_BROKEN | ARBTABLE_CX_STALLS) &&
		    c.broken == 1 && c.stalls == 5);
	memset(cbuf, CANARY, sizeof(cbuf));
	assert_int_equal(arbtable_state_class(st, 1, (void *)cbuf,
					      ARBTABLE_CLASS_INFO_SIZE_VER0),
			 ARBTABLE_CLASS_INFO_SIZE_VER0);
	assert_memory_equal(cbuf, &c, ARBTABLE_CLASS_INFO_SIZE_VER0);
	assert_true(all_bytes(cbuf + ARBTABLE_CLASS_INFO_SIZE_VER0, 64, CANARY));
	memcpy(&c0, cbuf, sizeof(c0));
	assert_true(c0.classid == ARBTABLE_CLASSID(1, 0x20) &&
		    c0.max_hol_ns == 42 && c0.throttled == 0);
	arbtable_state_free(st);
}

/* ------------------------------------------------------ kernel xstats */

/* The kernel's qdisc xstats with every field set. */
static void full_qdisc_xstats(struct tc_arbtable_xstats *x)
{
	memset(x, 0, sizeof(*x));
	x->type = TCA_ARBTABLE_XSTATS_QDISC;
	x->nclasses = 3;
	x->unclassified_pkts = 101;
	x->unclassified_drops = 102;
	x->swaps = 103;
	x->throttled = 104;
	x->unclassified_qlen = 105;
	x->high_used = 10;
	x->low_used = 11;
	x->broken = 206;
	x->gso_split = 201;
	x->gso_segs = 202;
	x->oversize_drops = 203;
	x->capacity = 1250000000;
	x->link_rate = 125000000;
	x->link_changes = 204;
	x->mtu_changes = 205;
	x->stalls = 207;
	x->unclassified_bound_ns = 208;
	x->unclassified_max_wait_ns = 209;
}

/* The record's first fields, as any length that holds them gives them;
 * the arbiter's cursor and credits the kernel no longer reports read 0.
 */
static void assert_qdisc_ver0_xstats(const struct arbtable_qdisc_info *q)
{
	int i;

	assert_int_equal(q->has_xstats, 1);
	assert_true(q->unclassified_pkts == 101 && q->unclassified_drops == 102 &&
		    q->swaps == 103 && q->throttled == 104 &&
		    q->unclassified_qlen == 105);
	assert_true(q->used[ARBTABLE_HIGH] == 10 && q->used[ARBTABLE_LOW] == 11 &&
		    q->cur[ARBTABLE_HIGH] == 0 && q->cur[ARBTABLE_LOW] == 0 &&
		    q->hp_counter == 0);
	for (i = 0; i < ARBTABLE_SLOTS; i++)
		assert_true(q->credit[ARBTABLE_HIGH][i] == 0 &&
			    q->credit[ARBTABLE_LOW][i] == 0);
	assert_int_equal(q->xstats_fields &
			 (ARBTABLE_QX_CURSOR | ARBTABLE_QX_CREDIT), 0);
}

/* A record whose xstats a previous read left set: a read must clear them. */
static void stale_qdisc_info(struct arbtable_qdisc_info *q)
{
	memset(q, 0x5a, sizeof(*q));
	q->mtu_follows_device = 1;
}

/*
 * The xstats of this release's sch_arbtable (136 bytes, configuration and
 * results only), a newer kernel's longer struct, and payloads cut short:
 * what a payload lacks reads as 0 with its bit clear; a field cut short
 * is not taken.
 */
static void test_qdisc_xstats_lengths(void **state)
{
	const uint32_t gso = ARBTABLE_QX_GSO_SPLIT | ARBTABLE_QX_GSO_SEGS |
			     ARBTABLE_QX_OVERSIZE_DROPS;
	const uint32_t all = gso | ARBTABLE_QX_CAPACITY | ARBTABLE_QX_LINK_RATE |
			     ARBTABLE_QX_LINK_CHANGES | ARBTABLE_QX_MTU_CHANGES |
			     ARBTABLE_QX_BROKEN | ARBTABLE_QX_STALLS |
			     ARBTABLE_QX_UNCL_BOUND | ARBTABLE_QX_UNCL_MAX_WAIT;
	unsigned char buf[sizeof(struct tc_arbtable_xstats) + 16];
	struct tc_arbtable_xstats x;
	struct arbtable_qdisc_info q;

	(void)state;
	full_qdisc_xstats(&x);
	memset(buf, CANARY, sizeof(buf));
	memcpy(buf, &x, sizeof(x));
	/* no holes: every byte a field */
	assert_int_equal(sizeof(x), 136);
	assert_int_equal(offsetof(struct tc_arbtable_xstats, broken), 52);
	assert_int_equal(offsetof(struct tc_arbtable_xstats, gso_split), 56);
	assert_int_equal(offsetof(struct tc_arbtable_xstats, capacity), 80);
	assert_int_equal(offsetof(struct tc_arbtable_xstats, stalls), 112);
	assert_int_equal(offsetof(struct tc_arbtable_xstats,
				  unclassified_max_wait_ns), 128);

	/* today's kernel, and a newer one with 16 bytes more */
	stale_qdisc_info(&q);
	assert_int_equal(arb_qdisc_xstats_in(&q, buf, sizeof(x)), 1);
	assert_qdisc_ver0_xstats(&q);
	assert_int_equal(q.xstats_fields, all);
	assert_true(q.gso_split == 201 && q.gso_segs == 202 &&
		    q.oversize_drops == 203 && q.capacity == 1250000000 &&
		    q.link_rate == 125000000 && q.link_changes == 204 &&
		    q.mtu_changes == 205 && q.broken == 206 && q.stalls == 207 &&
		    q.unclassified_bound_ns == 208 &&
		    q.unclassified_max_wait_ns == 209);
	/* not the library's to touch: read from the qdisc's options */
	assert_int_equal(q.mtu_follows_device, 1);
	stale_qdisc_info(&q);
	assert_int_equal(arb_qdisc_xstats_in(&q, buf, sizeof(buf)), 1);
	assert_qdisc_ver0_xstats(&q);
	assert_int_equal(q.xstats_fields, all);
	assert_true(q.stalls == 207 && q.broken == 206);

	/* up to the GSO counters */
	stale_qdisc_info(&q);
	assert_int_equal(arb_qdisc_xstats_in(&q, buf, 80), 1);
	assert_qdisc_ver0_xstats(&q);
	assert_int_equal(q.xstats_fields, gso | ARBTABLE_QX_BROKEN);
	assert_true(q.gso_split == 201 && q.gso_segs == 202 &&
		    q.oversize_drops == 203 && q.broken == 206);
	assert_true(q.capacity == 0 && q.link_rate == 0 && q.link_changes == 0 &&
		    q.mtu_changes == 0 && q.stalls == 0);

	/* up to the used slot counts: before broken */
	stale_qdisc_info(&q);
	assert_int_equal(arb_qdisc_xstats_in(&q, buf, 52), 1);
	assert_qdisc_ver0_xstats(&q);
	assert_int_equal(q.xstats_fields, 0);
	assert_true(q.gso_split == 0 && q.gso_segs == 0 && q.oversize_drops == 0 &&
		    q.capacity == 0 && q.stalls == 0 && q.broken == 0);

	/* cut inside capacity and inside stalls: those not taken */
	stale_qdisc_info(&q);
	assert_int_equal(arb_qdisc_xstats_in(&q, buf, 84), 1);
	assert_int_equal(q.xstats_fields, gso | ARBTABLE_QX_BROKEN);
	assert_int_equal(q.capacity, 0);
	stale_qdisc_info(&q);
	assert_int_equal(arb_qdisc_xstats_in(&q, buf, 119), 1);
	assert_int_equal(q.xstats_fields, all & ~(ARBTABLE_QX_STALLS |
						  ARBTABLE_QX_UNCL_BOUND |
						  ARBTABLE_QX_UNCL_MAX_WAIT));
	assert_true(q.stalls == 0 && q.broken == 206);

	/* the type alone: xstats, every field 0 */
	stale_qdisc_info(&q);
	assert_int_equal(arb_qdisc_xstats_in(&q, buf, 4), 1);
	assert_true(q.has_xstats == 1 && q.xstats_fields == 0 &&
		    q.unclassified_pkts == 0 && q.hp_counter == 0 &&
		    q.credit[ARBTABLE_LOW][0] == 0 && q.stalls == 0);

	/* none: too short for its type, the class's type, no payload */
	stale_qdisc_info(&q);
	assert_int_equal(arb_qdisc_xstats_in(&q, buf, 3), 0);
	assert_true(q.has_xstats == 0 && q.xstats_fields == 0 &&
		    q.swaps == 0 && q.capacity == 0 && q.stalls == 0);
	x.type = TCA_ARBTABLE_XSTATS_CLASS;
	stale_qdisc_info(&q);
	assert_int_equal(arb_qdisc_xstats_in(&q, &x, sizeof(x)), 0);
	assert_true(q.has_xstats == 0 && q.xstats_fields == 0 &&
		    q.swaps == 0 && q.gso_split == 0);
	stale_qdisc_info(&q);
	assert_int_equal(arb_qdisc_xstats_in(&q, NULL, 0), 0);
	assert_true(q.has_xstats == 0 && q.used[ARBTABLE_HIGH] == 0 &&
		    q.link_rate == 0);
}

/* Class xstats: 96 bytes, broken near the start, stalls last. */
static void test_class_xstats_lengths(void **state)
{
	unsigned char buf[sizeof(struct tc_arbtable_class_xstats) + 16];
	struct tc_arbtable_class_xstats x = {
		.type = TCA_ARBTABLE_XSTATS_CLASS,
		.broken = 1,
		.high_slots = 0x8000000000000001ull,
		.low_slots = 0x10,
		.high_weight = 40,
		.low_weight = 3,
		.distance = 32,
		.reserved_weight = 43,
		.reserved_rate = 125000,
		.guaranteed_rate = 130000,
		.guaranteed_bound_ns = 5000000,
		.current_bound_ns = 4000000,
		.max_hol_ns = 3000000,
		.throttled = 9,
		.stalls = 77,
	};
	const uint32_t all = ARBTABLE_CX_BROKEN | ARBTABLE_CX_STALLS;
	struct arbtable_class_info c;
	size_t len;

	(void)state;
	assert_int_equal(sizeof(x), 96);
	assert_int_equal(offsetof(struct tc_arbtable_class_xstats, broken), 4);
	assert_int_equal(offsetof(struct tc_arbtable_class_xstats, stalls), 88);
	memset(buf, CANARY, sizeof(buf));
	memcpy(buf, &x, sizeof(x));

	for (len = 88; len <= sizeof(buf); len += 8) {
		uint32_t want = len >= 96 ? all : ARBTABLE_CX_BROKEN;

		memset(&c, 0x5a, sizeof(c));
		assert_int_equal(arb_class_xstats_in(&c, buf, len), 1);
		/* the class index is no longer reported: 0, its bit clear */
		assert_true(c.has_xstats == 1 && c.index == 0 &&
			    c.slots[ARBTABLE_HIGH] == 0x8000000000000001ull &&
			    c.slots[ARBTABLE_LOW] == 0x10 &&
			    c.weight[ARBTABLE_HIGH] == 40 &&
			    c.weight[ARBTABLE_LOW] == 3 && c.distance == 32 &&
			    c.reserved_weight == 43 && c.reserved_rate == 125000 &&
			    c.guaranteed_rate == 130000 &&
			    c.guaranteed_bound_ns == 5000000 &&
			    c.current_bound_ns == 4000000 &&
			    c.max_hol_ns == 3000000 && c.throttled == 9);
		assert_int_equal(c.xstats_fields, want);
		assert_int_equal(c.broken, 1);
		assert_int_equal(c.stalls, want & ARBTABLE_CX_STALLS ? 77 : 0);
	}

	/* a payload cut before the throttle count */
	memset(&c, 0x5a, sizeof(c));
	assert_int_equal(arb_class_xstats_in(&c, buf,
			 offsetof(struct tc_arbtable_class_xstats, throttled)), 1);
	assert_true(c.max_hol_ns == 3000000 && c.throttled == 0 &&
		    c.xstats_fields == ARBTABLE_CX_BROKEN && c.stalls == 0);
	/* the type alone: broken not held */
	memset(&c, 0x5a, sizeof(c));
	assert_int_equal(arb_class_xstats_in(&c, buf, 4), 1);
	assert_true(c.xstats_fields == 0 && c.broken == 0 && c.distance == 0);

	memset(&c, 0x5a, sizeof(c));
	x.type = TCA_ARBTABLE_XSTATS_QDISC;
	assert_int_equal(arb_class_xstats_in(&c, &x, sizeof(x)), 0);
	assert_true(c.has_xstats == 0 && c.index == 0 && c.throttled == 0 &&
		    c.xstats_fields == 0 && c.broken == 0 && c.stalls == 0);
	memset(&c, 0x5a, sizeof(c));
	assert_int_equal(arb_class_xstats_in(&c, NULL, 0), 0);
	assert_true(c.has_xstats == 0 && c.slots[ARBTABLE_LOW] == 0 &&
		    c.stalls == 0);
}

static void test_state_bad_args(void **state)
{
	struct arbtable_state *st = filled_state();
	struct arbtable_class_info ci;
	struct arbtable_class_opts co;
	struct arbtable_qdisc_info qi;

	(void)state;
	assert_int_equal(arbtable_state_class(st, 2, &ci, sizeof(ci)), -EINVAL);
	assert_int_equal(arbtable_state_class_opts(st, 2, &co, sizeof(co)),
			 -EINVAL);
	assert_int_equal(arbtable_state_qdisc(NULL, &qi, sizeof(qi)), -EINVAL);
	assert_int_equal(arbtable_state_qdisc(st, NULL, sizeof(qi)), -EINVAL);
	assert_int_equal(arbtable_state_find_class(st, ARBTABLE_CLASSID(1, 0x20)), 1);
	assert_int_equal(arbtable_state_find_class(st, 0x10), 0);
	assert_int_equal(arbtable_state_find_class(st, ARBTABLE_CLASSID(2, 0x10)),
			 -ENOENT);
	assert_int_equal(arbtable_state_find_class(st, 0x30), -ENOENT);
	assert_int_equal(arbtable_state_find_class(NULL, 0x10), -EINVAL);
	arbtable_state_free(st);
	arbtable_state_free(NULL);
}

/*
 * The option calls check the size first: a good size gets as far as the
 * device lookup (-ENODEV for a device that does not exist), a bad one is
 * refused before it, with its reason in arbtable_errmsg().
 */
static void test_opts_calls(void **state)
{
	struct arbtable_class_opts co = {
		.set = ARBTABLE_C_SHARE, .share = 10,
	};
	struct arbtable_qdisc_opts qo = {
		.set = ARBTABLE_Q_RATE, .rate = 125000,
	};
	unsigned char big[sizeof(co) + 16] = { 0 };
	unsigned char qbig[sizeof(qo) + 16] = { 0 };
	struct arbtable *h = arbtable_open();
	uint32_t id = ARBTABLE_CLASSID(1, 0x10);

	(void)state;
	assert_non_null(h);
	assert_int_equal(arbtable_admit(h, NODEV, id, &co, sizeof(co)), -ENODEV);
	assert_int_equal(arbtable_change(h, NODEV, id, &co, sizeof(co)), -ENODEV);
	assert_int_equal(arbtable_admit(h, NODEV, id, &co, sizeof(co) - 8),
			 -EINVAL);
	assert_non_null(strstr(arbtable_errmsg(h), "first release"));
	/* the classic slip: the size of the pointer, not of the struct */
	assert_int_equal(arbtable_change(h, NODEV, id, &co,
					 sizeof(struct arbtable_class_opts *)),
			 -EINVAL);

	/* a newer caller: unset new fields are fine, a set one is not */
	memcpy(big, &co, sizeof(co));
	assert_int_equal(arbtable_admit(h, NODEV, id, (void *)big, sizeof(big)),
			 -ENODEV);
	big[sizeof(co) + 15] = 1;
	assert_int_equal(arbtable_admit(h, NODEV, id, (void *)big, sizeof(big)),
			 -E2BIG);
	assert_non_null(strstr(arbtable_errmsg(h), "newer header"));
	assert_int_equal(arbtable_err_from_kernel(h), 0);
	assert_int_equal(arbtable_change(h, NODEV, id, (void *)big, sizeof(big)),
			 -E2BIG);

	co.reserved = 1;
	assert_int_equal(arbtable_admit(h, NODEV, id, &co, sizeof(co)), -EINVAL);
	assert_non_null(strstr(arbtable_errmsg(h), "reserved"));

	assert_int_equal(arbtable_qdisc_create(h, NODEV, ARBTABLE_CLASSID(1, 0),
					       &qo, sizeof(qo)), -ENODEV);
	assert_int_equal(arbtable_qdisc_create(h, NODEV, ARBTABLE_CLASSID(1, 0),
					       NULL, 0), -ENODEV);
	assert_int_equal(arbtable_qdisc_create(h, NODEV, ARBTABLE_CLASSID(1, 0),
					       &qo, ARBTABLE_QDISC_OPTS_SIZE_VER0 - 4),
			 -EINVAL);
	/* a caller built before prio_classid: its size is the first release's */
	assert_int_equal(arbtable_qdisc_create(h, NODEV, ARBTABLE_CLASSID(1, 0),
					       &qo, ARBTABLE_QDISC_OPTS_SIZE_VER0),
			 -ENODEV);
	memcpy(qbig, &qo, sizeof(qo));
	assert_int_equal(arbtable_qdisc_change(h, NODEV, (void *)qbig,
					       sizeof(qbig)), -ENODEV);
	qbig[sizeof(qo)] = 1;
	assert_int_equal(arbtable_qdisc_change(h, NODEV, (void *)qbig,
					       sizeof(qbig)), -E2BIG);
	assert_int_equal(arbtable_qdisc_create(h, NODEV, ARBTABLE_CLASSID(1, 0),
					       (void *)qbig, sizeof(qbig)),
			 -E2BIG);
	arbtable_close(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rec_out_older_caller),
		cmocka_unit_test(test_rec_out_newer_caller),
		cmocka_unit_test(test_rec_out_too_small),
		cmocka_unit_test(test_opts_in_older_caller),
		cmocka_unit_test(test_opts_in_newer_caller),
		cmocka_unit_test(test_opts_in_too_small),
		cmocka_unit_test(test_ver_sizes),
		cmocka_unit_test(test_ver0_layout_kept),
		cmocka_unit_test(test_state_records),
		cmocka_unit_test(test_state_ver0_caller),
		cmocka_unit_test(test_qdisc_xstats_lengths),
		cmocka_unit_test(test_class_xstats_lengths),
		cmocka_unit_test(test_state_bad_args),
		cmocka_unit_test(test_opts_calls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
