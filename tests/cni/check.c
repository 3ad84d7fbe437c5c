// SPDX-License-Identifier: GPL-2.0
/*
 * check.c - the results of the CNI host checks, counted (check.h).
 */
#include <stdio.h>

#include "check.h"

static int passed, failed;

void check(int ok, const char *what, const char *got)
{
	if (ok) {
		passed++;
		printf("ok   %s\n", what);
	} else {
		failed++;
		printf("FAIL %s%s%s\n", what, got ? ": " : "", got ? got : "");
	}
}

int check_done(void)
{
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
