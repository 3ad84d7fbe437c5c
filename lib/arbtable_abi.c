// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Extensible structs across libarbtable's ABI: the caller says how big its
 * struct is, and the library copies what both sides know. The rules are
 * the kernel's for openat2()/clone3() (copy_struct_from_user()) for what
 * comes in; what goes out is filled up to the caller's size.
 */
#include <errno.h>
#include <string.h>

#include "arbtable_abi.h"

static int arb_all_zero(const unsigned char *p, size_t n)
{
	while (n--)
		if (*p++)
			return 0;
	return 1;
}

int arb_opts_in(void *kopts, size_t ksize, const void *uopts, size_t usize,
		size_t ver0)
{
	if (usize < ver0)
		return -EINVAL;
	/* a newer caller's fields we cannot honour: refuse, do not drop */
	if (usize > ksize &&
	    !arb_all_zero((const unsigned char *)uopts + ksize, usize - ksize))
		return -E2BIG;
	memset(kopts, 0, ksize);
	memcpy(kopts, uopts, usize < ksize ? usize : ksize);
	return 0;
}

int arb_rec_out(void *urec, size_t usize, const void *krec, size_t ksize,
		size_t ver0)
{
	size_t n = usize < ksize ? usize : ksize;

	if (usize < ver0)
		return -EINVAL;
	memcpy(urec, krec, n);
	/* a newer caller's fields this library does not fill read as zero;
	 * the return value tells it where the filled part ends
	 */
	if (usize > ksize)
		memset((unsigned char *)urec + ksize, 0, usize - ksize);
	return (int)n;
}
