/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Userspace <linux/bitops.h>: the bit helpers the core uses. */
#ifndef _ARBT_SHIM_LINUX_BITOPS_H
#define _ARBT_SHIM_LINUX_BITOPS_H

#include <linux/types.h>

#define BIT(nr)		(1UL << (nr))
#define BIT_ULL(nr)	(1ULL << (nr))

/* index of the lowest set bit; undefined for 0, as in the kernel */
static inline unsigned long __ffs64(u64 word)
{
	return (unsigned long)__builtin_ctzll(word);
}

/* rotate right; shift 0..63 */
static inline u64 ror64(u64 word, unsigned int shift)
{
	return (word >> (shift & 63)) | (word << ((-shift) & 63));
}

static inline unsigned int hweight64(u64 w)
{
	return (unsigned int)__builtin_popcountll(w);
}

#endif
