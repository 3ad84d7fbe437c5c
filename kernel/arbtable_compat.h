/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels sch_arbtable builds for (6.1 and 6.12).
 * Everything version-dependent lives here so the qdisc reads as one file.
 */
#ifndef _ARBTABLE_COMPAT_H
#define _ARBTABLE_COMPAT_H

#include <linux/version.h>
#include <net/pkt_sched.h>

/* 6.11 added per-kind module aliases so `tc qdisc add ... arbtable`
 * autoloads the module; older kernels use the generic alias.
 */
#ifndef MODULE_ALIAS_NET_SCH
#define MODULE_ALIAS_NET_SCH(id)	MODULE_ALIAS("sch_" id)
#endif

/* 6.4 moved skb_gso_segment() and friends to <net/gso.h>; Kbuild says
 * when the headers built against predate it
 */
#ifndef ARBTABLE_NO_NET_GSO_H
#include <net/gso.h>
#endif

#endif /* _ARBTABLE_COMPAT_H */
