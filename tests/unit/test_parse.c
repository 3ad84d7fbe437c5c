// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the one parser the tc plugin, arbtablectl and arbsim share
 * (lib/arbtable_parse.c): rates and sizes give what tc gives (compared
 * with iproute2's own get_rate64()/get_size(), built from the source tc
 * was built from), times what tc's get_time64() documents, overflow,
 * signs, "inf" and unknown units are refused; table lists; and the
 * kernel's per-entry checks (arb_entry_check) with messages that fit a
 * netlink extack.
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
		{ "0", 0 }, { "1", 1 }, { "999", 999 }, { "1ns", 1 },
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
		"9223372037s", "1e19", "ms",
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
	uint32_t v;

	(void)state;
	assert_int_equal(arbt_parse_u32("10", 16, &v), 0);
	assert_int_equal(v, 16);
	assert_int_equal(arbt_parse_u32("ffff", 16, &v), 0);
	assert_int_equal(v, 0xffff);
	assert_int_equal(arbt_parse_u32("4294967295", 10, &v), 0);
	assert_int_equal(v, UINT32_MAX);
	assert_int_equal(arbt_parse_u32("4294967296", 10, &v), -1);
	assert_int_equal(arbt_parse_u32("-1", 10, &v), -1);
	assert_int_equal(arbt_parse_u32("+1", 10, &v), -1);
	assert_int_equal(arbt_parse_u32(" 1", 10, &v), -1);
	assert_int_equal(arbt_parse_u32("1x", 10, &v), -1);
	assert_int_equal(arbt_parse_u32("", 10, &v), -1);
	assert_int_equal(arbt_parse_u32("1f", 10, &v), -1);
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
	(void)state;
	assert_string_equal(walk("none"), "");
	assert_string_equal(walk("10:5"), "0:10:5");
	assert_string_equal(walk("10:127,11:63,-,12:5"),
			    "0:10:127 1:11:63 3:12:5");
	assert_string_equal(walk("10:20,-,11:30@5,12:1"),
			    "0:10:20 5:11:30 6:12:1");
	assert_string_equal(walk("a:1@63,b:2"), "63:a:1 64:b:2");
	assert_string_equal(walk("-,-,ffff:0"), "2:ffff:0");
	/* duplicates and ranges are the kernel's (arb_entry_check) */
	assert_string_equal(walk("10:5@3,11:6@3"), "3:10:5 3:11:6");
	assert_string_equal(walk("10:300@70"), "70:10:300");
	assert_string_equal(walk("-"), "");

	assert_string_equal(walk(""),
			    "ERR bad entry \"\": expected MINOR:WEIGHT[@SLOT] or -");
	assert_string_equal(walk("10:5,"),
			    "ERR bad entry \"\": expected MINOR:WEIGHT[@SLOT] or -");
	assert_string_equal(walk("10=5"),
			    "ERR bad entry \"10=5\": expected MINOR:WEIGHT[@SLOT] or -");
	assert_string_equal(walk("g:5"),
			    "ERR bad class minor \"g\" (hex, e.g. 10 for class 1:10)");
	assert_string_equal(walk("10:0x5"),
			    "ERR bad weight \"0x5\" (decimal, 64-byte units)");
	assert_string_equal(walk("10:5@-1"), "ERR bad slot \"-1\" (decimal)");
	assert_string_equal(walk("10:5@"), "ERR bad slot \"\" (decimal)");
	assert_string_equal(walk("10:5@4294967295,11:1"),
			    "ERR slot position past 2^32");
	assert_string_equal(walk("NONE"),
			    "ERR bad entry \"NONE\": expected MINOR:WEIGHT[@SLOT] or -");
	assert_true(!strncmp(walk("10:55555555555555555555555555555555555555555555555555555555555555555"),
			     "ERR entry \"", 11));
}

static void test_entry_check(void **state)
{
	char buf[256];
	u64 seen = 0;

	(void)state;
	assert_int_equal(arb_entry_check(&seen, 0, 5, 0x10), ARB_ENTRY_OK);
	assert_int_equal(arb_entry_check(&seen, 63, 0, 0), ARB_ENTRY_OK);
	assert_int_equal(arb_entry_check(&seen, 1, 255, 0xffff), ARB_ENTRY_OK);
	assert_int_equal(arb_entry_check(&seen, 64, 1, 1), ARB_ENTRY_SLOT);
	assert_int_equal(arb_entry_check(&seen, 0, 1, 1), ARB_ENTRY_TWICE);
	assert_int_equal(arb_entry_check(&seen, 63, 1, 1), ARB_ENTRY_TWICE);
	assert_int_equal(arb_entry_check(&seen, 2, 256, 1), ARB_ENTRY_WEIGHT);
	/* a slot given twice is found before its weight is looked at */
	assert_int_equal(arb_entry_check(&seen, 2, 1, 1), ARB_ENTRY_TWICE);
	assert_int_equal(arb_entry_check(&seen, 3, 1, 0), ARB_ENTRY_MINOR);
	assert_int_equal(arb_entry_check(&seen, 4, 1, 0x10000), ARB_ENTRY_MINOR);
	assert_int_equal(arb_entry_check(&seen, 5, 0, 0x10000), ARB_ENTRY_OK);

	/* the longest of each, as a netlink extack must hold them (< 80) */
	assert_true(snprintf(buf, sizeof(buf), ARB_ENTRY_MSG_SLOT, "high",
			     UINT32_MAX) < 80);
	assert_true(snprintf(buf, sizeof(buf), ARB_ENTRY_MSG_TWICE, "high",
			     63U) < 80);
	assert_true(snprintf(buf, sizeof(buf), ARB_ENTRY_MSG_WEIGHT, "high",
			     63U, UINT32_MAX) < 80);
	assert_true(snprintf(buf, sizeof(buf), ARB_ENTRY_MSG_MINOR, "high",
			     63U, UINT32_MAX) < 80);
	assert_true(snprintf(buf, sizeof(buf), ARB_ENTRY_MSG_STRICT, "high",
			     63U, 0xffffU, 0xffffU) < 80);
	assert_true(strlen(ARB_ENTRY_MSG_TOO_MANY) < 80);
	snprintf(buf, sizeof(buf), ARB_ENTRY_MSG_MINOR, "low", 7U, 0x10000U);
	assert_string_equal(buf,
			    "low table: slot 7 class minor 0x10000 out of range 1..0xffff");
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
		cmocka_unit_test(test_entry_check),
	};

	return cmocka_run_group_tests_name("parse", tests, NULL, NULL);
}
