/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arbtablectl.h - what arbtablectl.c shares with the files of its
 * objects (arbtablectl_OBJECT.c, one a command or a few on one object):
 * the commands of its command table, exit codes, usage and error output,
 * the device's qdisc as read.
 */
#ifndef ARBTABLECTL_H
#define ARBTABLECTL_H

#include <stddef.h>
#include <stdint.h>

#include <arbtable/arbtable.h>

#include "arbt_print.h"

struct arbtable;

/* One class of a read, as arbtablectl keeps it. */
struct ctl_class {
	struct arbtable_class_info	i;
	struct arbtable_class_opts	opts;
};

/* One read of the device's qdisc (arbtablectl_snap.c). */
struct ctl_snap {
	struct arbtable_qdisc_info	q;
	struct arbtable_qdisc_opts	opts;
	unsigned int			nclasses;
	struct ctl_class		classes[ARBTABLE_MAX_CLASSES];
};

#define EX_OK		0
#define EX_FAIL		1
#define EX_NODEV	2
#define EX_NOTARB	3
#define EX_KERNEL	4
#define EX_USAGE	64

/* --json (-j): the commands write JSON */
extern int ctl_json;

/* one line saying what is wrong, a pointer to help, exit EX_USAGE */
__attribute__((format(printf, 1, 2), noreturn))
void ctl_usage(const char *fmt, ...);
/*
 * An option word of a command and where its value goes in the command's
 * options struct (struct arbtable_class_opts, arbtable_qdisc_opts: a u32
 * of ARBTABLE_*_ bits first, "set").
 */
enum ctl_opt_kind {
	CTL_OPT_WORD,		/* no value: the u32 field = word */
	CTL_OPT_RATE,		/* tc rate, u64 bytes/s */
	CTL_OPT_TIME,		/* tc time, u64 ns */
	CTL_OPT_SIZE,		/* tc size, u32 bytes */
	CTL_OPT_DEC,		/* u32, decimal */
	CTL_OPT_HEX,		/* u32, hex (class minors) */
};

struct ctl_opt {
	const char		*name;
	enum ctl_opt_kind	kind;
	size_t			off;	/* of the field */
	uint32_t		flag;	/* its bit in set */
	uint32_t		word;	/* CTL_OPT_WORD: the value it stores */
	/* a bad value: "CMD: bad WHAT \"VALUE\"HINT"; WHAT NULL: the name */
	const char		*what;
	const char		*hint;
	/* the value's range (bytes/s, ns, bytes, the number), checked
	 * before sending; hi 0: none. zero: 0 is taken too (none, default)
	 */
	uint64_t		lo, hi;
	int			zero;
};

/* the entry of @opts (ended by a NULL name) for @k, NULL if none */
const struct ctl_opt *ctl_find_opt(const struct ctl_opt *opts, const char *k);
/*
 * The option words of @cmd into @o by @opts; a word with a value that
 * @opts does not have goes to @other (NULL: none), which returns 0 when
 * it took it. A bad, unknown or repeated word (the pair of a CTL_OPT_WORD,
 * strict and nostrict, counts as one) and a value out of its range are
 * usage errors.
 */
void ctl_parse_opts(const char *cmd, int argc, char **argv,
		    const struct ctl_opt *opts, void *o,
		    int (*other)(const char *cmd, const char *k,
				 const char *v, void *ctx), void *ctx);

/* the library's or the kernel's reason on stderr; the exit code for it */
int ctl_failed(struct arbtable *h, int err, const char *what);

/* read @dev into @snap: 0 or the library's -errno (arbtable_errmsg()) */
int ctl_snap_read(struct arbtable *h, const char *dev, struct ctl_snap *snap);
/* the class @classid (full id) of @snap, NULL if none */
const struct ctl_class *ctl_find_class(const struct ctl_snap *snap,
				       uint32_t classid);

/* "1:10" of a full class id */
static inline const char *ctl_fmt_classid(uint32_t id, char *buf, size_t size)
{
	return arbt_fmt_classid(ARBTABLE_MAJOR(id), ARBTABLE_MINOR(id), buf,
				size);
}

/* arbtablectl_show.c, for watch too */
const char *ctl_fmt_time(uint64_t ns, char *buf, size_t size);
const char *ctl_fmt_size(uint64_t b, char *buf, size_t size);
/* "high", "low", "both", "strict" or "-": where @c's slots are */
const char *ctl_class_table(const struct ctl_class *c);
/* "kind", "handle", "dev", "root"/"parent" of tc's qdisc object */
void ctl_json_qdisc_id(struct json_object *q, const struct ctl_snap *st);

/* arbtablectl_qdisc.c: change DEV QDISC-OPTION... goes there */
int ctl_is_qdisc_option(const char *k);
int ctl_qdisc_change(struct arbtable *h, int argc, char **argv);

/* The commands: ARGS after the command's name; an exit code. */
int ctl_admit(struct arbtable *h, int argc, char **argv);
int ctl_change(struct arbtable *h, int argc, char **argv);
int ctl_release(struct arbtable *h, int argc, char **argv);
int ctl_show(struct arbtable *h, int argc, char **argv);
int ctl_watch(struct arbtable *h, int argc, char **argv);
int ctl_create(struct arbtable *h, int argc, char **argv);
int ctl_delete(struct arbtable *h, int argc, char **argv);
int ctl_table(struct arbtable *h, int argc, char **argv);
int ctl_priomap(struct arbtable *h, int argc, char **argv);
int ctl_capacity(struct arbtable *h, int argc, char **argv);
/* @h is NULL for the device-less form (ctl_request_devless()) */
int ctl_request(struct arbtable *h, int argc, char **argv);
/* 1 when request's arguments start with an option, not a DEV */
int ctl_request_devless(int argc, char **argv);

#endif /* ARBTABLECTL_H */
