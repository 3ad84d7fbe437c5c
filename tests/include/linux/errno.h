/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Userspace <linux/errno.h>: the uapi E* values the kernel uses too. */
#ifndef _ARBT_SHIM_LINUX_ERRNO_H
#define _ARBT_SHIM_LINUX_ERRNO_H

#include_next <linux/errno.h>

#endif
