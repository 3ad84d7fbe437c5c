/* SPDX-License-Identifier: GPL-2.0 */
/*
 * check.h - the results of the CNI host checks (result-check.c,
 * state-check.c, tcnl-check.c): one "ok   what" or "FAIL what: got" line
 * a check, then the "N passed, N failed" line scripts/test.sh counts.
 */
#ifndef _ACNI_CHECK_H
#define _ACNI_CHECK_H

/* got: what was seen instead, printed after a failure (may be NULL) */
void check(int ok, const char *what, const char *got);
/* prints the counts; the exit status: 1 when a check failed */
int check_done(void);

#endif
