// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the one parser the tc plugin, arbtablectl and arbsim share
 * (lib/arbtable_parse.c): rates and sizes give what tc gives (compared
 * with iproute2's own get_rate64()/get_size(), built from the source tc
 * was built from), times as tc(8) says (a bare number is microseconds,
 * with get_time64()'s "ns" words besides), overflow,
 * signs, "inf" and unknown units are refused; table lists, walked and
 * put in slot order.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "arbtable_core_test.h"
#include "arbtable_parse.h"

/* iproute2 lib/utils_math.c, linked from $(IPROUTE2) */
int get_rate64(unsigned long long *rate, const char *str);
int get_size(unsigned int *size, const char *str);

static const char *const rates_ok[] = {
	"1", "8", "9", "10bit", "1kbit", "10mbit", "10.5mbit", "1gbit",
	"40Gbit", "100gbit", "1tbit", "2251tbit", "1kibit", "3mibit", "1gibit",
	"1tibit", "1bps", "125kBps", "1MBps", "1gbps", "1tbps", "1kibps",
	"1mibps", "1gibps", "1tibps", "0", "0.5", ".5mbit", "1e6", "1e9bit",
	"1.23456789gbit", "10MBIT", "0x10", "7bit", "15bit", "999999999999",
};

static void test_rate_as_tc(void **state)
{
	unsigned long long tc;
	uint64_t v;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(rates_ok); i++) {
		assert_int_equal(get_rate64(&tc, rates_ok[i]), 0);
		if (arbt_parse_rate(rates_ok[i], &v))
			fail_msg("rate \"%s\" refused, tc takes it", rates_ok[i]);
		if (v != tc)
			fail_msg("rate \"%s\": %llu bytes/s, tc %llu",
				 rates_ok[i], (unsigned long long)v, tc);
	}
	/* truncated as tc does: 15 bits are 1 byte */
	assert_int_equal(arbt_parse_rate("15bit", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(arbt_parse_rate("10mbit", &v), 0);
	assert_int_equal(v, 1250000);
}

static void test_rate_refused(void **state)
{
	static const char *const bad[] = {
		"", "-1", "+1", " 1", "-1mbit", "inf", "nan", "infbit",
		"10mbits", "10 mbit", "mbit", "10%", "1e20tbit", "1e30",
		"147573952589676412928", /* 2^67 bits: 2^64 bytes/s */
		"1e400", "10kb", "10m", "1,5mbit",
	};
	uint64_t v = 42;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		if (!arbt_parse_rate(bad[i], &v))
			fail_msg("rate \"%s\" taken as %llu", bad[i],
				 (unsigned long long)v);
	assert_int_equal(arbt_parse_rate(NULL, &v), -1);
	/* the largest that fits: just below 2^64 bytes/s */
	assert_int_equal(arbt_parse_rate("147573952589676396544", &v), 0);
	assert_true(v > (1ULL << 63));
}

static void test_size_as_tc(void **state)
{
	static const char *const ok[] = {
		"0", "1", "1514", "1514b", "30k", "30kb", "30K", "1m", "1mb",
		"1g", "3g", "64kbit", "1mbit", "8gbit", "1.5k", "2047.9",
		"4294967295", "0x100",
	};
	unsigned int tc;
	uint32_t v;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		assert_int_equal(get_size(&tc, ok[i]), 0);
		if (arbt_parse_size(ok[i], &v))
			fail_msg("size \"%s\" refused, tc takes it", ok[i]);
		if (v != tc)
			fail_msg("size \"%s\": %u, tc %u", ok[i], v, tc);
	}
	assert_int_equal(arbt_parse_size("30k", &v), 0);
	assert_int_equal(v, 30720);
}

static void test_size_refused(void **state)
{
	static const char *const bad[] = {
		"", "-1", "+5", "4294967296", "4g", "32gbit", "1t", "10kib",
		"inf", "nan", "1e10", "10 k", "30kB/s", "1mbps",
	};
	uint32_t v = 42;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		if (!arbt_parse_size(bad[i], &v))
			fail_msg("size \"%s\" taken as %u", bad[i], v);
}

static void test_time(void **state)
{
	static const struct {
		const char *s;
		uint64_t ns;
	} ok[] = {
		/* a bare number is microseconds (tc(8) TIMES) */
		{ "0", 0 }, { "1", 1000 }, { "50", 50000 }, { "999", 999000 },
		{ "2.5", 2500 }, { "0.0019", 1 }, { "1ns", 1 },
		{ "5nsec", 5 }, { "5nsecs", 5 }, { "50us", 50000 },
		{ "50usec", 50000 }, { "2usecs", 2000 }, { "2.5ms", 2500000 },
		{ "1msec", 1000000 }, { "3msecs", 3000000 },
		{ "1s", 1000000000 }, { "1sec", 1000000000 },
		{ "2secs", 2000000000 }, { "1.0000000019s", 1000000001 },
		{ "1.9ns", 1 }, { "50US", 50000 }, { "1e3us", 1000000 },
		{ "9223372s", 9223372000000000ULL },
	};
	static const char *const bad[] = {
		"", "-1", "-1ms", "+1ms", "1min", "5m", "1 ms", "inf", "nan",
		"9223372037s", "1e19", "9223372036855000", "ms",
	};
	uint64_t v;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		if (arbt_parse_time(ok[i].s, &v))
			fail_msg("time \"%s\" refused", ok[i].s);
		if (v != ok[i].ns)
			fail_msg("time \"%s\": %llu ns, expected %llu", ok[i].s,
				 (unsigned long long)v,
				 (unsigned long long)ok[i].ns);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		if (!arbt_parse_time(bad[i], &v))
			fail_msg("time \"%s\" taken as %llu", bad[i],
				 (unsigned long long)v);
}

static void test_u32(void **state)
{
	/* rc 0: parsed as v; -1: refused */
	static const struct {
		const char *s;
		int base, rc;
		uint32_t v;
	} c[] = {
		{ "10", 16, 0, 16 }, { "ffff", 16, 0, 0xffff },
		{ "4294967295", 10, 0, UINT32_MAX }, { "4294967296", 10, -1, 0 },
		{ "-1", 10, -1, 0 }, { "+1", 10, -1, 0 }, { " 1", 10, -1, 0 },
		{ "1x", 10, -1, 0 }, { "", 10, -1, 0 }, { "1f", 10, -1, 0 },
	};
	uint32_t v;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(c); i++) {
		if (arbt_parse_u32(c[i].s, c[i].base, &v) != c[i].rc)
			fail_msg("u32 \"%s\" base %d: not rc %d", c[i].s,
				 c[i].base, c[i].rc);
		if (!c[i].rc && v != c[i].v)
			fail_msg("u32 \"%s\" base %d: %u, expected %u",
				 c[i].s, c[i].base, v, c[i].v);
	}
}

/* A list and what a walk of it (walk() or fill()) gives */
struct list_case {
	const char *list, *want;
};

static void check_lists(const char *(*fn)(const char *),
			const struct list_case *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const char *got = fn(c[i].list);

		if (strcmp(got, c[i].want))
			fail_msg("\"%s\": \"%s\", expected \"%s\"", c[i].list,
				 got, c[i].want);
	}
}

/* Walks @list; returns the entries as "slot:minor:weight ..." or the
 * error as "ERR text".
 */
static const char *walk(const char *list)
{
	static char out[1024];
	struct arbt_table_iter it;
	struct arbt_table_entry e;
	size_t n = 0;
	int rc;

	out[0] = '\0';
	arbt_table_iter_init(&it, list);
	while ((rc = arbt_table_next(&it, &e)) > 0)
		n += snprintf(out + n, sizeof(out) - n, "%s%u:%x:%u",
			      n ? " " : "", e.slot, e.minor, e.weight);
	if (rc < 0)
		snprintf(out, sizeof(out), "ERR %s", it.err);
	return out;
}

static void test_table_list(void **state)
{
	static const struct list_case c[] = {
		{ "none", "" },
		{ "10:5", "0:10:5" },
		{ "10:127,11:63,-,12:5", "0:10:127 1:11:63 3:12:5" },
		{ "10:20,-,11:30@5,12:1", "0:10:20 5:11:30 6:12:1" },
		{ "a:1@63,b:2", "63:a:1 64:b:2" },
		{ "-,-,ffff:0", "2:ffff:0" },
		/* the walk leaves duplicates and ranges to arbt_table_parse() */
		{ "10:5@3,11:6@3", "3:10:5 3:11:6" },
		{ "10:300@70", "70:10:300" },
		{ "-", "" },

		{ "", "ERR bad entry \"\": expected MINOR:WEIGHT[@SLOT] or -" },
		{ "10:5,", "ERR bad entry \"\": expected MINOR:WEIGHT[@SLOT] or -" },
		{ "10=5", "ERR bad entry \"10=5\": expected MINOR:WEIGHT[@SLOT] or -" },
		{ "g:5", "ERR bad class minor \"g\" (hex, e.g. 10 for class 1:10)" },
		{ "10:0x5", "ERR bad weight \"0x5\" (decimal, 64-byte units)" },
		{ "10:5@-1", "ERR bad slot \"-1\" (decimal)" },
		{ "10:5@", "ERR bad slot \"\" (decimal)" },
		{ "10:5@4294967295,11:1", "ERR slot position past 2^32" },
		{ "NONE", "ERR bad entry \"NONE\": expected MINOR:WEIGHT[@SLOT] or -" },
	};

	(void)state;
	check_lists(walk, c, ARRAY_SIZE(c));
	assert_true(!strncmp(walk("10:55555555555555555555555555555555555555555555555555555555555555555"),
			     "ERR entry \"", 11));
}

/* Parses @list into slots; "slot:minor:weight ..." of the slots with an
 * entry and "n=NSLOTS", or "ERR<rc> text".
 */
static const char *fill(const char *list)
{
	static char out[1024];
	struct arbt_table t;
	char err[200];
	unsigned int i;
	size_t n = 0;
	int rc;

	rc = arbt_table_parse(list, "high", &t, err, sizeof(err));
	if (rc) {
		snprintf(out, sizeof(out), "ERR%d %s", rc, err);
		return out;
	}
	for (i = 0; i < t.nslots; i++)
		if (t.minor[i] || t.weight[i])
			n += snprintf(out + n, sizeof(out) - n, "%u:%x:%u ",
				      i, t.minor[i], t.weight[i]);
	snprintf(out + n, sizeof(out) - n, "n=%u", t.nslots);
	return out;
}

/* The lists in slot order, as the kernel takes them (one nest per slot),
 * and what the kernel would refuse of a slot, refused in the front ends'
 * words
 */
static void test_table_parse(void **state)
{
	static const struct list_case c[] = {
		{ "none", "n=0" },
		{ "10:127,11:63,-,12:5", "0:10:127 1:11:63 3:12:5 n=4" },
		{ "-,-", "n=0" },
		{ "a:1@63", "63:a:1 n=64" },
		{ "ffff:255", "0:ffff:255 n=1" },
		/* out of order: the slots say where */
		{ "10:1@5,11:2@0", "0:11:2 5:10:1 n=6" },
		/* weight 0 is a null slot whatever its class: not named */
		{ "-,-,ffff:0", "n=0" },
		{ "10000:0,0:0,11:5", "2:11:5 n=3" },
		/* a slot given twice cannot be sent */
		{ "10:5@3,11:6@3", "ERR-2 high table: slot 3 given twice" },
		{ "10:5,11:6@0", "ERR-2 high table: slot 0 given twice" },
		{ "10:0@3,11:6@3", "ERR-2 high table: slot 3 given twice" },
		/* the ranges of a slot nest and the 64 nests */
		{ "10:5@64", "ERR-2 high table: slot index 64 out of range 0..63" },
		{ "a:1@63,b:2", "ERR-2 high table: slot index 64 out of range 0..63" },
		{ "10:256", "ERR-2 high table: slot 0 weight 256 out of range 0..255" },
		{ "-,10000:1",
		  "ERR-2 high table: slot 1 class minor 0x10000 out of range 1..0xffff" },
		{ "0:1", "ERR-2 high table: slot 0 class minor 0 out of range 1..0xffff" },
		{ "10=5",
		  "ERR-1 \"high\" list: bad entry \"10=5\": expected MINOR:WEIGHT[@SLOT] or -" },
	};

	(void)state;
	check_lists(fill, c, ARRAY_SIZE(c));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_as_tc),
		cmocka_unit_test(test_rate_refused),
		cmocka_unit_test(test_size_as_tc),
		cmocka_unit_test(test_size_refused),
		cmocka_unit_test(test_time),
		cmocka_unit_test(test_u32),
		cmocka_unit_test(test_table_list),
		cmocka_unit_test(test_table_parse),
	};

	return cmocka_run_group_tests_name("parse", tests, NULL, NULL);
}
