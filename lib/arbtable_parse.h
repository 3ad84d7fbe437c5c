/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * arbtable_parse.h - the one parser of values and table lists shared by
 * the tc plugin (tc/q_arbtable.c), arbtablectl and arbsim, so that the
 * three front ends accept the same words and mean the same numbers.
 *
 * Units follow tc(8) (iproute2's get_rate64, get_size, get_time; the
 * time words of get_time64, but a bare time is microseconds as tc(8)
 * says, not get_time64's nanoseconds):
 * a number, optionally followed by a unit matched without regard to
 * case, converted and truncated toward zero.  Unlike tc, a value that
 * does not fit the result, a sign, "inf" or "nan" is an error instead of
 * an undefined conversion.
 *
 * Internal to the project (compiled into each tool, not exported by
 * libarbtable): no ABI promise.
 */
#ifndef ARBTABLE_PARSE_H
#define ARBTABLE_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* RATE in bits/s ("10mbit", "1gbit", "125kBps", a bare number is bit/s)
 * into bytes/s.  tc's percent rates ("5%") need the device and are
 * left to the caller: they are refused here.
 */
int arbt_parse_rate(const char *s, uint64_t *bytes_per_sec);

/* SIZE in bytes ("1514", "30k", "1mb", "64kbit"; k, m and g are powers
 * of 1024, as in tc) into a u32.
 */
int arbt_parse_size(const char *s, uint32_t *bytes);

/* TIME ("50us", "2ms", "1s", "500ns"; a bare number is microseconds,
 * as tc(8) says) into ns, at most INT64_MAX as in tc.
 */
int arbt_parse_time(const char *s, uint64_t *ns);

/* An unsigned 32-bit integer in @base (10, or 16 for class minors), no
 * sign, no trailing characters.
 */
int arbt_parse_u32(const char *s, int base, uint32_t *v);

/*
 * Table lists: "none" or ENTRY[,ENTRY...], ENTRY := MINOR:WEIGHT[@SLOT] | -
 * MINOR is hexadecimal (10 = class 1:10), WEIGHT and SLOT decimal; an
 * entry without @SLOT takes the slot after the previous entry (the first
 * slot 0) and "-" skips one.  The iterator checks syntax only;
 * arbt_table_parse() puts the entries in slot order, as the kernel takes
 * them (one nest per slot), and refuses what the kernel would refuse of
 * a slot (its position, weight and class out of range) and a slot given
 * twice, which that form cannot carry, in the same words for every front
 * end.
 */
struct arbt_table_entry {
	uint32_t minor;
	uint32_t weight;
	uint32_t slot;
};

struct arbt_table_iter {
	const char *next;	/* the rest of the list; NULL at its end */
	uint64_t pos;		/* slot of the next entry without @SLOT */
	char err[160];		/* why arbt_table_next() returned -1 */
};

/* Starts a walk of @list; "" is refused by the first arbt_table_next(). */
void arbt_table_iter_init(struct arbt_table_iter *it, const char *list);

/* 1: @e is the next entry; 0: the end of the list ("none" has no entry);
 * -1: a syntax error described in it->err (the table's name is the
 * caller's to add).
 */
int arbt_table_next(struct arbt_table_iter *it, struct arbt_table_entry *e);

#define ARBT_TABLE_SLOTS	64

/* A table list by slot: minor 0 and weight 0 where no entry is. */
struct arbt_table {
	uint32_t minor[ARBT_TABLE_SLOTS];
	uint32_t weight[ARBT_TABLE_SLOTS];
	unsigned int nslots;	/* slots 0..nslots-1 named */
};

/* 0 with @t filled, or the reason in @err: -1 a syntax error of the
 * list, "\"NAME\" list: ..."; -2 a slot the kernel would refuse or one
 * given twice, "NAME table: slot N ...". A weight of 0 makes a null slot
 * whatever its class.
 */
int arbt_table_parse(const char *list, const char *name, struct arbt_table *t,
		     char *err, size_t errsize);

#endif /* ARBTABLE_PARSE_H */
