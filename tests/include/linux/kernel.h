/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Userspace <linux/kernel.h>: ARRAY_SIZE, U64_MAX, likely/unlikely,
 * noinline, __always_inline, swap and scnprintf.
 */
#ifndef _ARBT_SHIM_LINUX_KERNEL_H
#define _ARBT_SHIM_LINUX_KERNEL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
/* <linux/limits.h>, which the kernel's kernel.h includes */
#define U64_MAX		((unsigned long long)~0ULL)
/* <linux/compiler.h>, which it includes too */
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define noinline	__attribute__((__noinline__))
#ifndef __always_inline		/* glibc's <sys/cdefs.h> has one */
#define __always_inline	inline __attribute__((__always_inline__))
#endif

/* <linux/minmax.h>, which it includes too */
#define swap(a, b) \
	do { __typeof__(a) __tmp = (a); (a) = (b); (b) = __tmp; } while (0)

/* the kernel's scnprintf: what was written, without the NUL */
static inline __attribute__((format(printf, 3, 4)))
int scnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list args;
	int n;

	if (!size)
		return 0;
	va_start(args, fmt);
	n = vsnprintf(buf, size, fmt, args);
	va_end(args);
	if (n < 0)
		return 0;
	return (size_t)n < size ? n : (int)(size - 1);
}

#endif
