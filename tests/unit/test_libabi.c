// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of libarbtable's extensible structs (arbtable.h, "Extensible
 * structs"): the size rules of lib/arbtable_abi.c on a struct in two
 * versions, as an older and a newer caller would pass it, then the same
 * rules through the public calls: the record getters on a state filled
 * here, and the option calls on a real handle, which refuse bad sizes
 * before they look for the device (no kernel module, no privilege).
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

/* The first release's sizes are what the header promises. */
static void test_ver0_sizes(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct arbtable_qdisc_opts),
			 ARBTABLE_QDISC_OPTS_SIZE_VER0);
	assert_int_equal(sizeof(struct arbtable_class_opts),
			 ARBTABLE_CLASS_OPTS_SIZE_VER0);
	assert_int_equal(sizeof(struct arbtable_qdisc_info),
			 ARBTABLE_QDISC_INFO_SIZE_VER0);
	assert_int_equal(sizeof(struct arbtable_class_info),
			 ARBTABLE_CLASS_INFO_SIZE_VER0);
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
	return st;
}

/* Each getter: the whole record at sizeof; a larger caller's tail
 * zeroed and the library's size returned; below SIZE_VER0 refused with
 * nothing written.
 */
#define CHECK_GETTER(call, type, check)					\
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
		assert_int_equal(call((type *)big, sizeof(type) - 1),	\
				 -EINVAL);				\
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
		     assert_true(rec.handle == ARBTABLE_CLASSID(1, 0) &&
				 rec.nclasses == 2 && rec.ifindex == 5 &&
				 !strcmp(rec.ifname, "d0") &&
				 rec.credit[ARBTABLE_LOW][ARBTABLE_SLOTS - 1] == -3 &&
				 rec.reserved == 0));
	CHECK_GETTER(QO, struct arbtable_qdisc_opts,
		     assert_true(rec.set == ARBTABLE_Q_RATE &&
				 rec.rate == 1250000 && rec.burst == 3000));
	CHECK_GETTER(CI1, struct arbtable_class_info,
		     assert_true(rec.classid == ARBTABLE_CLASSID(1, 0x20) &&
				 rec.max_hol_ns == 42 && rec.throttled == 0));
	CHECK_GETTER(CO0, struct arbtable_class_opts,
		     assert_true(rec.set == ARBTABLE_C_CBURST &&
				 rec.cburst == 1500 && rec.reserved == 0));
#undef QI
#undef QO
#undef CI1
#undef CO0
	arbtable_state_free(st);
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
					       &qo, sizeof(qo) - 4), -EINVAL);
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
		cmocka_unit_test(test_ver0_sizes),
		cmocka_unit_test(test_state_records),
		cmocka_unit_test(test_state_bad_args),
		cmocka_unit_test(test_opts_calls),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
