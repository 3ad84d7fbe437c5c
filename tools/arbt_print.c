// SPDX-License-Identifier: GPL-2.0
/*
 * arbt_print.c - output and class-id helpers of arbtablectl and arbsim
 * (arbt_print.h): one copy of each, so that the two programs write a
 * rate, a slot list, a class id and their JSON the same way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "arbtable_parse.h"
#include "arbt_print.h"

#define SLOTS	64

/* ------------------------------------------------------------ text */

const char *arbt_fmt_rate(uint64_t bytes, char *buf, size_t size)
{
	double bits = (double)bytes * 8;

	if (bits >= 1e9)
		snprintf(buf, size, "%.4gGbit", bits / 1e9);
	else if (bits >= 1e6)
		snprintf(buf, size, "%.4gMbit", bits / 1e6);
	else if (bits >= 1e3)
		snprintf(buf, size, "%.4gKbit", bits / 1e3);
	else
		snprintf(buf, size, "%.4gbit", bits);
	return buf;
}

const char *arbt_fmt_slots(uint64_t mask, char *buf, size_t size)
{
	size_t n = 0;
	int s;

	buf[0] = '\0';
	for (s = 0; s < SLOTS && n + 4 < size; s++)
		if (mask & (1ull << s))
			n += snprintf(buf + n, size - n, n ? ",%d" : "%d", s);
	if (!n)
		snprintf(buf, size, "-");
	return buf;
}

const char *arbt_fmt_classid(uint32_t maj, uint32_t min, char *buf,
			     size_t size)
{
	snprintf(buf, size, "%x:%x", maj, min);
	return buf;
}

int arbt_parse_classid(const char *s, uint32_t *maj, uint32_t *min)
{
	const char *colon = strchr(s, ':');
	char buf[16];

	*maj = 0;
	if (colon) {
		size_t n = colon - s;

		if (n >= sizeof(buf))
			return ARBT_CLASSID_SYNTAX;
		memcpy(buf, s, n);
		buf[n] = '\0';
		if (n && (arbt_parse_u32(buf, 16, maj) || !*maj || *maj > 0xffff))
			return ARBT_CLASSID_MAJOR;
		s = colon + 1;
	}
	if (arbt_parse_u32(s, 16, min) || !*min || *min > 0xffff)
		return ARBT_CLASSID_MINOR;
	return 0;
}

/* ------------------------------------------------------------ JSON */

static void __attribute__((noreturn)) out_of_memory(void)
{
	fprintf(stderr, "%s: out of memory\n", arbt_prog);
	exit(1);
}

struct json_object *arbt_jobj(void)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		out_of_memory();
	return o;
}

struct json_object *arbt_jarr(void)
{
	struct json_object *a = json_object_new_array();

	if (!a)
		out_of_memory();
	return a;
}

/* @v NULL: json-c could not make it */
void arbt_jput(struct json_object *o, const char *key, struct json_object *v)
{
	if (!v || json_object_object_add(o, key, v))
		out_of_memory();
}

void arbt_jput_null(struct json_object *o, const char *key)
{
	if (json_object_object_add(o, key, NULL))
		out_of_memory();
}

void arbt_jput_u64(struct json_object *o, const char *key, uint64_t v)
{
	arbt_jput(o, key, json_object_new_uint64(v));
}

void arbt_jput_int(struct json_object *o, const char *key, int64_t v)
{
	arbt_jput(o, key, json_object_new_int64(v));
}

void arbt_jput_str(struct json_object *o, const char *key, const char *v)
{
	arbt_jput(o, key, json_object_new_string(v));
}

void arbt_jput_bool(struct json_object *o, const char *key, int v)
{
	arbt_jput(o, key, json_object_new_boolean(v));
}

void arbt_jput_frac(struct json_object *o, const char *key, double v)
{
	char b[32];

	snprintf(b, sizeof(b), "%.6f", v);
	arbt_jput(o, key, json_object_new_double_s(v, b));
}

void arbt_jadd(struct json_object *a, struct json_object *v)
{
	if (!v || json_object_array_add(a, v))
		out_of_memory();
}

struct json_object *arbt_jslots(uint64_t mask)
{
	struct json_object *a = arbt_jarr();
	int s;

	for (s = 0; s < SLOTS; s++)
		if (mask & (1ull << s))
			arbt_jadd(a, json_object_new_int(s));
	return a;
}

void arbt_jprint(struct json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

/* ------------------------------------------------------------ PRINT_ANY */

/* the open objects of a JSON output, the root first; depth 0: text */
static struct json_object *open_obj[8];
static int depth;

void arbt_print_start(int json)
{
	depth = 0;
	if (json)
		open_obj[depth++] = arbt_jobj();
}

void arbt_print_end(void)
{
	if (depth)
		arbt_jprint(open_obj[0]);
	depth = 0;
}

int arbt_print_json(void)
{
	return depth > 0;
}

void arbt_open_object(const char *key)
{
	struct json_object *o;

	if (!depth)
		return;
	if (depth == (int)(sizeof(open_obj) / sizeof(open_obj[0])))
		abort();
	o = arbt_jobj();
	arbt_jput(open_obj[depth - 1], key, o);
	open_obj[depth++] = o;
}

void arbt_close_object(void)
{
	if (depth > 1)
		depth--;
}

/* the object a JSON member goes into, NULL when @out writes nothing */
static struct json_object *member_of(enum arbt_out out)
{
	return depth && (out & ARBT_JSON) ? open_obj[depth - 1] : NULL;
}

static int text_of(enum arbt_out out)
{
	return !depth && (out & ARBT_TEXT);
}

/* arbt_print_NAME(): the member @key = JVALUE, or printf(@fmt, TVALUE) */
#define PRINT_FUNC(name, type, jvalue, tvalue)				\
void arbt_print_##name(enum arbt_out out, const char *key,		\
		       const char *fmt, type v)				\
{									\
	struct json_object *o = member_of(out);				\
									\
	if (o)								\
		arbt_jput(o, key, jvalue);				\
	else if (text_of(out))						\
		printf(fmt, tvalue);					\
}

PRINT_FUNC(u64, uint64_t, json_object_new_uint64(v), v)
PRINT_FUNC(uint, unsigned int, json_object_new_int(v), v)
PRINT_FUNC(str, const char *, json_object_new_string(v), v)
PRINT_FUNC(bool, int, json_object_new_boolean(v), v ? "true" : "false")

void arbt_print_text(const char *s)
{
	if (!depth)
		fputs(s, stdout);
}
