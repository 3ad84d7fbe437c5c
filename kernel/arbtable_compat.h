/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels sch_arbtable builds for (6.1, 6.12, 7.2).
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

/* 6.5 moved skb_gso_segment() and friends to <net/gso.h> */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
#include <net/gso.h>
#endif

/*
 * A segment of a GSO skb the qdisc split: its length, and since 7.0 its
 * segment count (qdisc_pkt_segs()), as tbf and cake reset them after
 * their own split. A stale count of the whole skb makes a cake child
 * segment the segment again (and drop it) and every parent's packet
 * counters count it as that many.
 */
static inline void arbtable_seg_cb_init(struct sk_buff *seg)
{
	qdisc_skb_cb(seg)->pkt_len = seg->len;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
	qdisc_skb_cb(seg)->pkt_segs = 1;
#endif
}

/* The largest GSO skb the device takes: IPv6's, or IPv4's where 6.3+
 * keeps a separate limit (both raised for BIG TCP)
 */
static inline u32 arbtable_gso_max_size(const struct net_device *dev)
{
	u32 gso = READ_ONCE(dev->gso_max_size);
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	gso = max(gso, READ_ONCE(dev->gso_ipv4_max_size));
#endif
	return gso;
}

/*
 * The root's qlen and backlog, which 7.x dumps read without the qdisc
 * lock: written with the kernel's WRITE_ONCE helpers (7.0), with the same
 * stores before.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
#define arbtable_qlen_inc(sch)		qdisc_qlen_inc(sch)
#define arbtable_qlen_dec(sch)		qdisc_qlen_dec(sch)
#define arbtable_backlog_add(sch, len)	qstats_backlog_add(sch, len)
#define arbtable_backlog_sub(sch, len)	qstats_backlog_sub(sch, len)
#else
static inline void arbtable_qlen_inc(struct Qdisc *sch)
{
	WRITE_ONCE(sch->q.qlen, sch->q.qlen + 1);
}

static inline void arbtable_qlen_dec(struct Qdisc *sch)
{
	WRITE_ONCE(sch->q.qlen, sch->q.qlen - 1);
}

static inline void arbtable_backlog_add(struct Qdisc *sch, u32 len)
{
	WRITE_ONCE(sch->qstats.backlog, sch->qstats.backlog + len);
}

static inline void arbtable_backlog_sub(struct Qdisc *sch, u32 len)
{
	WRITE_ONCE(sch->qstats.backlog, sch->qstats.backlog - len);
}
#endif

/*
 * A drop for a full queue, with the qdisc's own reason where the kernel
 * has them (enum qdisc_drop_reason, named by the qdisc:qdisc_drop
 * tracepoint): 7.2 has them, 6.12 and 6.1 do not (7.0 and 7.1 not
 * checked); there, the generic drop.
 */
static inline int arbtable_drop_overlimit(struct sk_buff *skb,
					  struct Qdisc *sch,
					  struct sk_buff **to_free)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 2, 0)
	return qdisc_drop_reason(skb, sch, to_free, QDISC_DROP_OVERLIMIT);
#else
	return qdisc_drop(skb, sch, to_free);
#endif
}

/*
 * The link speed, under RTNL. Since 6.15 tc and netdevice notifiers also
 * hold the instance lock of a device whose ops take it, and
 * __ethtool_get_link_ksettings() takes it again: there the caller's lock
 * is used, as taprio and cbs do.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 15, 0)
#define arbtable_get_link_ksettings(dev, ks)	netif_get_link_ksettings(dev, ks)
#else
#define arbtable_get_link_ksettings(dev, ks)	__ethtool_get_link_ksettings(dev, ks)
#endif

/*
 * Refusals with numbers in them. 6.2 gave every request 80 bytes to format
 * a message into (NL_SET_ERR_MSG_FMT); 6.1 has none the module could own,
 * since netlink_ack copies the text after RTNL is dropped, so there only a
 * constant text is given. @attr (may be NULL) is the offending attribute.
 *
 * arbtable_refuse(): written once, @what alone on 6.1 and followed by the
 * formatted @detail on later kernels. arbtable_err(): a message the core
 * formats, with @fixed, its constant form, on 6.1.
 */
#ifdef NL_SET_ERR_MSG_FMT
#define arbtable_refuse(extack, attr, what, detail, ...) do {		\
	struct netlink_ext_ack *__ext = (extack);			\
									\
	NL_SET_ERR_MSG_FMT(__ext, what detail, ##__VA_ARGS__);		\
	NL_SET_BAD_ATTR(__ext, attr);					\
} while (0)
#define arbtable_err(extack, attr, fixed, fmt, ...) do {		\
	(void)sizeof(fixed);						\
	arbtable_refuse(extack, attr, "", fmt, ##__VA_ARGS__);		\
} while (0)
#else
#define arbtable_refuse(extack, attr, what, detail, ...) do {		\
	no_printk(detail, ##__VA_ARGS__);				\
	NL_SET_ERR_MSG_ATTR(extack, attr, what);			\
} while (0)
#define arbtable_err(extack, attr, fixed, fmt, ...) do {		\
	struct netlink_ext_ack *__ext = (extack);			\
	const char *__fixed = (fixed);					\
									\
	do_trace_netlink_extack(__fixed);				\
	if (__ext) {							\
		__ext->_msg = __fixed;					\
		__ext->bad_attr = (attr);				\
	}								\
	no_printk(fmt, ##__VA_ARGS__);					\
} while (0)
#endif

/*
 * Filters bound to a class: the kernel's count in Qdisc_class_common, with
 * its overflow-checked helpers, since 7.0 (6.12's stable releases have
 * them too; nothing outside a qdisc reads them, so the class's own count,
 * in struct arbtable_class, serves there as on 6.1).
 */
#define ARBTABLE_CLASS_REFS	(LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0))
#if ARBTABLE_CLASS_REFS
#define arbtable_class_get(cl)		qdisc_class_get(&(cl)->common)
#define arbtable_class_put(cl)		qdisc_class_put(&(cl)->common)
#define arbtable_class_in_use(cl)	qdisc_class_in_use(&(cl)->common)
#define arbtable_class_refs(cl)		((cl)->common.filter_cnt)
#else
static inline void arbtable_refs_get(u32 *cnt)
{
	if (!WARN_ON_ONCE(*cnt == U32_MAX))
		(*cnt)++;
}

static inline void arbtable_refs_put(u32 *cnt)
{
	if (!WARN_ON_ONCE(!*cnt))
		(*cnt)--;
}

#define arbtable_class_get(cl)		arbtable_refs_get(&(cl)->filter_cnt)
#define arbtable_class_put(cl)		arbtable_refs_put(&(cl)->filter_cnt)
#define arbtable_class_in_use(cl)	((cl)->filter_cnt > 0)
#define arbtable_class_refs(cl)		((cl)->filter_cnt)
#endif

#endif /* _ARBTABLE_COMPAT_H */
