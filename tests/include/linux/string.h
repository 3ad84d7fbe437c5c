/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Userspace <linux/string.h>: memset, memcpy. */
#ifndef _ARBT_SHIM_LINUX_STRING_H
#define _ARBT_SHIM_LINUX_STRING_H

#include <string.h>

#endif
