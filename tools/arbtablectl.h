/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arbtablectl.h - what arbtablectl.c shares with the files of its other
 * commands (arbtablectl_capacity.c): exit codes, usage and error output.
 */
#ifndef ARBTABLECTL_H
#define ARBTABLECTL_H

struct arbtable;

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

int ctl_capacity(struct arbtable *h, int json, int argc, char **argv);
int ctl_request(struct arbtable *h, int json, int argc, char **argv);

#endif /* ARBTABLECTL_H */
