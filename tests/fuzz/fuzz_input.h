/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Byte reader for the libFuzzer targets: the input is consumed as a stream
 * of small integers; past the end every read yields 0, so any input is a
 * valid (if short) program.
 */
#ifndef _ARB_FUZZ_INPUT_H
#define _ARB_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct fin {
	const uint8_t *p;
	size_t n;
};

static inline int fin_more(const struct fin *f)
{
	return f->n > 0;
}

static inline uint8_t fin_u8(struct fin *f)
{
	if (!f->n)
		return 0;
	f->n--;
	return *f->p++;
}

static inline uint16_t fin_u16(struct fin *f)
{
	uint16_t v = fin_u8(f);

	return (uint16_t)(v | fin_u8(f) << 8);
}

static inline uint32_t fin_u32(struct fin *f)
{
	uint32_t v = fin_u16(f);

	return v | (uint32_t)fin_u16(f) << 16;
}

/* A failed invariant: say which, then abort so libFuzzer keeps the input. */
#define FUZZ_CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "invariant failed: %s: ", #cond); \
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
			abort();					\
		}							\
	} while (0)

#endif /* _ARB_FUZZ_INPUT_H */
