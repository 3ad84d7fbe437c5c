/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Userspace <linux/time64.h>: NSEC_PER_SEC, which the core uses. */
#ifndef _ARBT_SHIM_LINUX_TIME64_H
#define _ARBT_SHIM_LINUX_TIME64_H

#define NSEC_PER_SEC	1000000000L

#endif
