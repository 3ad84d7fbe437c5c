/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fixed-width types and bit helpers for the kernel-independent core
 * (arbiter + allocator). In the kernel they come from linux/; in userspace
 * (unit tests, arbsim, libarbtable) from this shim, so both build the same
 * .c files unchanged.
 */
#ifndef _ARBTABLE_TYPES_H
#define _ARBTABLE_TYPES_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/bitops.h>
#include <linux/bug.h>
#include <linux/string.h>
#else
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;

/* Index of the lowest set bit; undefined for 0 as in the kernel. */
static inline unsigned long __ffs64(u64 word)
{
	return (unsigned long)__builtin_ctzll(word);
}

static inline unsigned int hweight64(u64 w)
{
	return (unsigned int)__builtin_popcountll(w);
}

#ifndef BIT_ULL
#define BIT_ULL(nr)	(1ULL << (nr))
#endif
/* an invariant broken: the tests and fuzzers stop on it */
#define WARN_ON_ONCE(cond)	({ bool __w = !!(cond); if (__w) abort(); __w; })
#ifndef min_t
#define min_t(type, a, b)	((type)(a) < (type)(b) ? (type)(a) : (type)(b))
#define max_t(type, a, b)	((type)(a) > (type)(b) ? (type)(a) : (type)(b))
#endif
#endif /* __KERNEL__ */

#endif /* _ARBTABLE_TYPES_H */
