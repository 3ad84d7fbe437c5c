/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Userspace <linux/types.h> for the core: the uapi __u8.. plus u8.. */
#ifndef _ARBT_SHIM_LINUX_TYPES_H
#define _ARBT_SHIM_LINUX_TYPES_H

#include_next <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* as in the kernel: u64 is unsigned long long on every architecture */
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;

#endif
