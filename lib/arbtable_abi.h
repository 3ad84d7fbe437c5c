/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The size rules of libarbtable's extensible structs (arbtable.h,
 * "Extensible structs"), in one place so that every call applies them
 * the same way and the unit tests can check them without a kernel.
 */
#ifndef ARBTABLE_ABI_H
#define ARBTABLE_ABI_H

#include <stddef.h>

/*
 * Options in: @usize bytes at @uopts, the caller's struct, into @kopts,
 * this library's struct of @ksize bytes (zeroed first, so fields an older
 * caller does not have read as zero). -EINVAL below @ver0, -E2BIG when
 * the bytes past @ksize are not all zero, else 0.
 */
int arb_opts_in(void *kopts, size_t ksize, const void *uopts, size_t usize,
		size_t ver0);

/*
 * A record out: @ksize bytes at @krec into the caller's @urec of @usize
 * bytes: the common prefix, and zeroes past @ksize in a larger one;
 * nothing is written past @usize. -EINVAL below @ver0, else the bytes
 * filled (the smaller size).
 */
int arb_rec_out(void *urec, size_t usize, const void *krec, size_t ksize,
		size_t ver0);

#endif /* ARBTABLE_ABI_H */
