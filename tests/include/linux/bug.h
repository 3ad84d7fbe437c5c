/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Userspace <linux/bug.h>: a broken invariant stops the test or fuzzer. */
#ifndef _ARBT_SHIM_LINUX_BUG_H
#define _ARBT_SHIM_LINUX_BUG_H

#include <stdbool.h>
#include <stdlib.h>

#define WARN_ON_ONCE(cond)	({ bool __w = !!(cond); if (__w) abort(); __w; })
#define WARN_ON(cond)		WARN_ON_ONCE(cond)

#endif
