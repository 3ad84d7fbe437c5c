/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Userspace <linux/math64.h>: the 64-bit helpers the core uses. */
#ifndef _ARBT_SHIM_LINUX_MATH64_H
#define _ARBT_SHIM_LINUX_MATH64_H

#include <linux/types.h>

static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}

#define DIV64_U64_ROUND_UP(ll, d)	div64_u64((ll) + (d) - 1, (d))

/* the high 64 bits of a * b when shift is 64 */
static inline u64 mul_u64_u64_shr(u64 a, u64 b, unsigned int shift)
{
	return (u64)(((unsigned __int128)a * b) >> shift);
}

/* a * b / c; like x86's divq the quotient must fit in 64 bits */
static inline u64 mul_u64_u64_div_u64(u64 a, u64 b, u64 c)
{
	return (u64)(((unsigned __int128)a * b) / c);
}

#endif
