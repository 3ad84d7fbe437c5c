// SPDX-License-Identifier: GPL-2.0
/*
 * error.c - the error a CNI verb returns (the spec's code, msg and
 * details), filled where the failure is found.  A file of its own so that
 * a host check of one part of the plugin (tests/cni) links it alone.
 */
#include <stdarg.h>
#include <stdio.h>

#include "cni.h"

int acni_error(struct acni_err *e, int code, const char *fmt, ...)
{
	va_list ap;

	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

void acni_details(struct acni_err *e, const char *text)
{
	snprintf(e->details, sizeof(e->details), "%s", text);
}
