/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arbt_print.h - the output and class-id helpers arbtablectl and arbsim
 * share: tc's way of writing rates and slot lists, class ids parsed and
 * printed as tc does, JSON through json-c, and iproute2's PRINT_ANY idea
 * (one call writes the text form or the JSON member, by the mode).
 *
 * Every helper that allocates exits on a failed allocation with
 * "PROG: out of memory" and status 1, PROG being the program's arbt_prog.
 */
#ifndef ARBT_PRINT_H
#define ARBT_PRINT_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/* the program's name in messages; each program defines it */
extern const char *const arbt_prog;

/* ---- values as text ---- */

/* @bytes/s as tc prints a measured rate: "71.95Mbit", "10Gbit" */
const char *arbt_fmt_rate(uint64_t bytes, char *buf, size_t size);
/* the slots of @mask: "0,8,16,24", "-" when none */
const char *arbt_fmt_slots(uint64_t mask, char *buf, size_t size);
/* "MAJ:MIN" in hex, as tc prints a class id */
const char *arbt_fmt_classid(uint32_t maj, uint32_t min, char *buf,
			     size_t size);

/*
 * A class id as tc takes one: "MAJ:MIN", ":MIN" or "MIN", hex. 0 with
 * *maj (0 when not given) and *min; otherwise what is wrong with it.
 */
enum {
	ARBT_CLASSID_SYNTAX = 1,	/* the major's text is too long */
	ARBT_CLASSID_MAJOR,		/* a major that is not 1..ffff */
	ARBT_CLASSID_MINOR,		/* a minor that is not 1..ffff */
};
int arbt_parse_classid(const char *s, uint32_t *maj, uint32_t *min);

/* ---- JSON objects (json-c) ---- */

struct json_object *arbt_jobj(void);
struct json_object *arbt_jarr(void);
void arbt_jput(struct json_object *o, const char *key, struct json_object *v);
void arbt_jput_null(struct json_object *o, const char *key);
void arbt_jput_u64(struct json_object *o, const char *key, uint64_t v);
void arbt_jput_int(struct json_object *o, const char *key, int64_t v);
void arbt_jput_str(struct json_object *o, const char *key, const char *v);
void arbt_jput_bool(struct json_object *o, const char *key, int v);
/* a fraction written with six decimals */
void arbt_jput_frac(struct json_object *o, const char *key, double v);
void arbt_jadd(struct json_object *a, struct json_object *v);
/* the slots of @mask as an array of numbers */
struct json_object *arbt_jslots(uint64_t mask);
/* @o on one line of standard output, then freed */
void arbt_jprint(struct json_object *o);

/* ---- one code path for text and JSON (iproute2's print_*()) ---- */

/* what a print call writes: the text, the JSON member, or either by mode */
enum arbt_out {
	ARBT_TEXT = 1,
	ARBT_JSON = 2,
	ARBT_ANY = ARBT_TEXT | ARBT_JSON,
};

/* Start an output: JSON (@json, into an object printed by arbt_print_end())
 * or text.
 */
void arbt_print_start(int json);
void arbt_print_end(void);
int arbt_print_json(void);
/* a member object @key of the current object, current until closed */
void arbt_open_object(const char *key);
void arbt_close_object(void);

/* In JSON mode (@out has ARBT_JSON) the member @key = @v; in text mode
 * (@out has ARBT_TEXT) printf(@fmt, @v).
 */
void arbt_print_u64(enum arbt_out out, const char *key, const char *fmt,
		    uint64_t v);
void arbt_print_uint(enum arbt_out out, const char *key, const char *fmt,
		     unsigned int v);
void arbt_print_str(enum arbt_out out, const char *key, const char *fmt,
		    const char *v);
void arbt_print_bool(enum arbt_out out, const char *key, const char *fmt,
		     int v);
/* text only: a literal piece of the text form */
void arbt_print_text(const char *s);

#endif /* ARBT_PRINT_H */
