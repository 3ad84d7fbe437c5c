/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arbtablectl.h - what arbtablectl.c shares with the files of its other
 * commands (arbtablectl_capacity.c, arbtablectl_request.c): exit codes,
 * usage and error output.
 */
#ifndef ARBTABLECTL_H
#define ARBTABLECTL_H

#include <arbtable/arbtable.h>

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

extern const char *const ctl_prog;

/* one line saying what is wrong, a pointer to help, exit EX_USAGE */
__attribute__((format(printf, 1, 2), noreturn))
void ctl_usage(const char *fmt, ...);
/* the library's or the kernel's reason on stderr; the exit code for it */
int ctl_failed(struct arbtable *h, int err, const char *what);

/* read @dev into @snap: 0 or the library's -errno (arbtable_errmsg()) */
int ctl_snap_read(struct arbtable *h, const char *dev, struct ctl_snap *snap);
/* the class @classid (full id) of @snap, NULL if none */
const struct ctl_class *ctl_find_class(const struct ctl_snap *snap,
				       uint32_t classid);

int ctl_capacity(struct arbtable *h, int json, int argc, char **argv);
/* @h is NULL for the device-less form (ctl_request_devless()) */
int ctl_request(struct arbtable *h, int json, int argc, char **argv);
/* 1 when request's arguments start with an option, not a DEV */
int ctl_request_devless(int argc, char **argv);

#endif /* ARBTABLECTL_H */
