// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libarbtable: sch_arbtable configuration over rtnetlink.
 *
 * libnl 3.7 keeps struct rtnl_tc_ops private, so the "arbtable" kind
 * cannot be registered with libnl-route. Instead:
 *   - links (name -> ifindex) come from libnl-route-3 (rtnl_link_*),
 *   - tc requests are built with libnl-3's message API: a struct tcmsg,
 *     TCA_KIND and a TCA_OPTIONS nest with the attributes of
 *     include/uapi/linux/pkt_sched_arbtable.h,
 *   - requests go through arbtable_nl.c, which reads the replies with
 *     nl_cb callbacks and keeps the kernel's errno and extended-ack text
 *     (libnl 3.7 has no extended-ack API); dumps are parsed with
 *     nla_parse_nested and policies.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/pkt_sched.h>
#include <linux/gen_stats.h>

#include <netlink/netlink.h>
#include <netlink/msg.h>
#include <netlink/attr.h>
#include <netlink/handlers.h>
#include <netlink/socket.h>
#include <netlink/errno.h>
#include <netlink/route/link.h>

#include <linux/pkt_sched_arbtable.h>

#include "arbtable/arbtable.h"
#include "arbtable_abi.h"
#include "arbtable_nl.h"
#include "arbtable_state.h"

#define ARB_KIND		"arbtable"
/* from the top-level VERSION file (mk/lib.mk) */
#define ARB_VERSION		ARBTABLE_VERSION
#define ARB_EXPORT		__attribute__((visibility("default")))

/* The public header restates uapi values; keep them in step. */
_Static_assert(ARBTABLE_SLOTS == TC_ARBTABLE_SLOTS, "slots");
_Static_assert(ARBTABLE_PRIO_BANDS == TC_ARBTABLE_PRIO_BANDS, "bands");
_Static_assert((int)ARBTABLE_HIGH == (int)TC_ARBTABLE_HIGH, "high");
_Static_assert((int)ARBTABLE_LOW == (int)TC_ARBTABLE_LOW, "low");
_Static_assert((int)ARBTABLE_MODE_AUTO == (int)TC_ARBTABLE_MODE_AUTO, "auto");
_Static_assert((int)ARBTABLE_MODE_MANUAL == (int)TC_ARBTABLE_MODE_MANUAL,
	       "manual");
_Static_assert((int)ARBTABLE_ACCT_IBA == (int)TC_ARBTABLE_ACCT_IBA, "iba");
_Static_assert((int)ARBTABLE_ACCT_DEFICIT == (int)TC_ARBTABLE_ACCT_DEFICIT,
	       "deficit");

struct arbtable {
	struct nl_sock	*sk;		/* tc requests and dumps */
	struct nl_sock	*link_sk;	/* libnl-route link lookups */
	int		from_kernel;
	char		msg[1024];
};

/* ------------------------------------------------------------ errors */

static void arb_clear(struct arbtable *h)
{
	h->from_kernel = 0;
	h->msg[0] = '\0';
}

__attribute__((format(printf, 3, 4)))
static int arb_fail(struct arbtable *h, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(h->msg, sizeof(h->msg), fmt, ap);
	va_end(ap);
	h->from_kernel = 0;
	return err;
}

/*
 * The caller's options (@usize bytes) into @k, this library's struct, by
 * the rules of arbtable_abi.h; NULL options (defaults) are not looked at.
 * Returns 0 or the error reported through arb_fail().
 */
static int arb_take_opts(struct arbtable *h, const char *what, void *k,
			 size_t ksize, const void *u, size_t usize,
			 size_t ver0)
{
	int err;

	if (!u)
		return 0;
	err = arb_opts_in(k, ksize, u, usize, ver0);
	if (err == -EINVAL)
		return arb_fail(h, err,
				"%s: options of %zu bytes, fewer than the %zu of the first release (sizeof a pointer?)",
				what, usize, ver0);
	if (err)
		return arb_fail(h, err,
				"%s: options of %zu bytes set fields past the %zu this libarbtable %s knows (built against a newer header?)",
				what, usize, ksize, ARB_VERSION);
	return 0;
}

ARB_EXPORT const char *arbtable_errmsg(const struct arbtable *h)
{
	return h ? h->msg : "no handle";
}

ARB_EXPORT int arbtable_err_from_kernel(const struct arbtable *h)
{
	return h ? h->from_kernel : 0;
}

ARB_EXPORT const char *arbtable_version(void)
{
	return ARB_VERSION;
}

/* ------------------------------------------------------------ handle */

ARB_EXPORT struct arbtable *arbtable_open(void)
{
	struct arbtable *h = calloc(1, sizeof(*h));

	if (!h) {
		errno = ENOMEM;
		return NULL;
	}
	h->sk = arb_nl_socket();
	h->link_sk = h->sk ? arb_nl_socket() : NULL;
	if (!h->sk || !h->link_sk) {
		int e = errno;

		if (h->sk)
			nl_socket_free(h->sk);
		free(h);
		errno = e;
		return NULL;
	}
	return h;
}

ARB_EXPORT void arbtable_close(struct arbtable *h)
{
	if (!h)
		return;
	nl_socket_free(h->sk);
	nl_socket_free(h->link_sk);
	free(h);
}

/* ------------------------------------------------------------ talking */

/* Send @msg and read until its ACK, error or end of dump (arbtable_nl.c):
 * the kernel's errno and extack text into @h.
 */
static int arb_talk(struct arbtable *h, struct nl_msg *msg, const char *what,
		    nl_recvmsg_msg_cb_t parse, void *arg)
{
	struct arb_nl_err e = { .msg = h->msg, .size = sizeof(h->msg) };
	int err;

	err = arb_nl_talk(h->sk, msg, what, parse, arg, &e);
	if (!err)
		return 0;
	h->from_kernel = e.from_kernel;
	/* our parsers refuse an attribute of unexpected size */
	if (err == -EPROTO && !e.from_kernel)
		return arb_fail(h, -EPROTO,
				"%s: the kernel's answer has an arbtable attribute of unexpected size (module and libarbtable %s from different releases?)",
				what, ARB_VERSION);
	return err;
}

/*
 * arb_talk() with @msg, then @msg freed: the request named in errors by
 * @fmt (e.g. "create arbtable qdisc 1: on eth0"). 0 or the error in @h.
 */
__attribute__((format(printf, 5, 6)))
static int arb_request(struct arbtable *h, struct nl_msg *msg,
		       nl_recvmsg_msg_cb_t parse, void *arg,
		       const char *fmt, ...)
{
	char what[96];
	va_list ap;
	int err;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	err = arb_talk(h, msg, what, parse, arg);
	nlmsg_free(msg);
	return err;
}

/* A request not built for want of memory: @msg (or NULL) freed */
static int arb_nomem(struct arbtable *h, struct nl_msg *msg)
{
	nlmsg_free(msg);
	return arb_fail(h, -ENOMEM, "out of memory");
}

/* ------------------------------------------------------------ links */

static int arb_ifindex(struct arbtable *h, const char *ifname)
{
	struct rtnl_link *link = NULL;
	int err, idx;

	if (!ifname || !*ifname)
		return arb_fail(h, -EINVAL, "no device name given");
	if (strlen(ifname) >= 16)
		return arb_fail(h, -ENODEV, "no such device: %s (name too long)",
				ifname);
	err = rtnl_link_get_kernel(h->link_sk, 0, ifname, &link);
	if (err < 0) {
		if (err == -NLE_NODEV || err == -NLE_OBJ_NOTFOUND)
			return arb_fail(h, -ENODEV, "no such device: %s",
					ifname);
		return arb_fail(h, -EIO, "cannot look up device %s: %s",
				ifname, nl_geterror(err));
	}
	idx = rtnl_link_get_ifindex(link);
	rtnl_link_put(link);
	if (idx <= 0)
		return arb_fail(h, -ENODEV, "no such device: %s", ifname);
	return idx;
}

/* ------------------------------------------------------------ dumps */

static struct nla_policy arb_tca_policy[TCA_MAX + 1] = {
	[TCA_KIND]	= { .type = NLA_STRING },
	[TCA_OPTIONS]	= { .type = NLA_NESTED },
	[TCA_STATS2]	= { .type = NLA_NESTED },
};

static struct nla_policy arb_qopt_policy[TCA_ARBTABLE_MAX + 1] = {
	[TCA_ARBTABLE_MODE]		= { .type = NLA_U32 },
	[TCA_ARBTABLE_RATE]		= { .type = NLA_U64 },
	[TCA_ARBTABLE_HIGHLIMIT]	= { .type = NLA_U32 },
	[TCA_ARBTABLE_ACCOUNTING]	= { .type = NLA_U32 },
	[TCA_ARBTABLE_DEFAULT]		= { .type = NLA_U32 },
	[TCA_ARBTABLE_PRIOMAP]		= { .type = NLA_NESTED },
	[TCA_ARBTABLE_MTU]		= { .type = NLA_U32 },
	[TCA_ARBTABLE_MAXWEIGHT]	= { .type = NLA_U32 },
	[TCA_ARBTABLE_HIGH]		= { .type = NLA_NESTED },
	[TCA_ARBTABLE_LOW]		= { .type = NLA_NESTED },
	[TCA_ARBTABLE_BURST]		= { .type = NLA_U32 },
	[TCA_ARBTABLE_MTU_FOLLOW]	= { .type = NLA_FLAG },
	[TCA_ARBTABLE_PRIO_CLASSID]	= { .type = NLA_U32 },
	[TCA_ARBTABLE_CLASSIFY_FOREIGN]	= { .type = NLA_U32 },
	[TCA_ARBTABLE_LOCKLESS]		= { .type = NLA_U32 },
};

static struct nla_policy arb_copt_policy[TCA_ARBTABLE_C_MAX + 1] = {
	[TCA_ARBTABLE_C_STRICT]		= { .type = NLA_U32 },
	[TCA_ARBTABLE_C_CEIL]		= { .type = NLA_U64 },
	[TCA_ARBTABLE_C_CBURST]		= { .type = NLA_U32 },
	[TCA_ARBTABLE_C_RATE]		= { .type = NLA_U64 },
	[TCA_ARBTABLE_C_LATENCY]	= { .type = NLA_U64 },
	[TCA_ARBTABLE_C_DISTANCE]	= { .type = NLA_U32 },
	[TCA_ARBTABLE_C_SHARE]		= { .type = NLA_U32 },
};

static struct nla_policy arb_stats_policy[TCA_STATS_MAX + 1] = {
	[TCA_STATS_BASIC]	= { .minlen = sizeof(struct gnet_stats_basic) - 4 },
	[TCA_STATS_QUEUE]	= { .minlen = sizeof(struct gnet_stats_queue) },
	[TCA_STATS_RATE_EST]	= { .minlen = sizeof(struct gnet_stats_rate_est) },
	[TCA_STATS_RATE_EST64]	= { .minlen = sizeof(struct gnet_stats_rate_est64) },
	[TCA_STATS_PKT64]	= { .type = NLA_U64 },
};

/* TCA_STATS2 into @s; returns the TCA_STATS_APP attribute or NULL. */
static struct nlattr *arb_parse_stats(struct nlattr *nest,
				      struct arbtable_stats *s)
{
	struct nlattr *tb[TCA_STATS_MAX + 1];

	if (!nest || nla_parse_nested(tb, TCA_STATS_MAX, nest,
				      arb_stats_policy) < 0)
		return NULL;
	if (tb[TCA_STATS_BASIC]) {
		struct gnet_stats_basic b = {};

		memcpy(&b, nla_data(tb[TCA_STATS_BASIC]),
		       nla_len(tb[TCA_STATS_BASIC]) < (int)sizeof(b) ?
		       (size_t)nla_len(tb[TCA_STATS_BASIC]) : sizeof(b));
		s->bytes = b.bytes;
		s->packets = b.packets;
	}
	if (tb[TCA_STATS_PKT64])
		s->packets = nla_get_u64(tb[TCA_STATS_PKT64]);
	if (tb[TCA_STATS_QUEUE]) {
		struct gnet_stats_queue q;

		memcpy(&q, nla_data(tb[TCA_STATS_QUEUE]), sizeof(q));
		s->qlen = q.qlen;
		s->backlog = q.backlog;
		s->drops = q.drops;
		s->requeues = q.requeues;
		s->overlimits = q.overlimits;
	}
	if (tb[TCA_STATS_RATE_EST64]) {
		struct gnet_stats_rate_est64 r;

		memcpy(&r, nla_data(tb[TCA_STATS_RATE_EST64]), sizeof(r));
		s->has_rate_est = 1;
		s->est_bps = r.bps;
		s->est_pps = r.pps;
	} else if (tb[TCA_STATS_RATE_EST]) {
		struct gnet_stats_rate_est r;

		memcpy(&r, nla_data(tb[TCA_STATS_RATE_EST]), sizeof(r));
		s->has_rate_est = 1;
		s->est_bps = r.bps;
		s->est_pps = r.pps;
	}
	return tb[TCA_STATS_APP];
}

static struct nla_policy arb_slot_policy[TCA_ARBTABLE_SLOT_MAX + 1] = {
	[TCA_ARBTABLE_SLOT_CLASS]	= { .type = NLA_U32 },
	[TCA_ARBTABLE_SLOT_WEIGHT]	= { .type = NLA_U32 },
};

/* One TCA_ARBTABLE_TBL_SLOT nest per slot from slot 0, an empty one for a
 * null slot; < 0 for a slot attribute of unexpected size.
 */
static int arb_parse_table(struct nlattr *nest, struct arbtable_slot *t)
{
	struct nlattr *tb[TCA_ARBTABLE_SLOT_MAX + 1];
	struct nlattr *a;
	int rem, i = 0;

	memset(t, 0, sizeof(*t) * ARBTABLE_SLOTS);
	if (!nest)
		return 0;
	nla_for_each_nested(a, nest, rem) {
		if (i >= ARBTABLE_SLOTS)
			break;
		if (nla_type(a) == TCA_ARBTABLE_TBL_SLOT) {
			if (nla_parse_nested(tb, TCA_ARBTABLE_SLOT_MAX, a,
					     arb_slot_policy) < 0)
				return -EPROTO;
			if (tb[TCA_ARBTABLE_SLOT_CLASS] &&
			    tb[TCA_ARBTABLE_SLOT_WEIGHT]) {
				t[i].minor = nla_get_u32(tb[TCA_ARBTABLE_SLOT_CLASS]);
				t[i].weight = nla_get_u32(tb[TCA_ARBTABLE_SLOT_WEIGHT]);
			}
		}
		i++;
	}
	return 0;
}

/* < 0: an attribute of unexpected size (libnl's policy check) */
static int arb_parse_qopts(struct nlattr *nest, struct arbtable_state *st)
{
	struct nlattr *tb[TCA_ARBTABLE_MAX + 1];
	struct arbtable_qdisc_opts *o = &st->qopts;

	if (!nest)
		return 0;
	if (nla_parse_nested(tb, TCA_ARBTABLE_MAX, nest, arb_qopt_policy) < 0)
		return -EPROTO;
	if (tb[TCA_ARBTABLE_MODE]) {
		o->mode = nla_get_u32(tb[TCA_ARBTABLE_MODE]);
		o->set |= ARBTABLE_Q_MODE;
	}
	/* a rate that is the link's, or an mtu that follows the device,
	 * was not set: left out of .set, the options sent back as a change
	 * keep them as they are instead of reading the link anew or pinning
	 * the mtu
	 */
	if (tb[TCA_ARBTABLE_RATE]) {
		o->rate = nla_get_u64(tb[TCA_ARBTABLE_RATE]);
		if (!tb[TCA_ARBTABLE_RATE_LINK])
			o->set |= ARBTABLE_Q_RATE;
	}
	if (tb[TCA_ARBTABLE_HIGHLIMIT]) {
		o->highlimit = nla_get_u32(tb[TCA_ARBTABLE_HIGHLIMIT]);
		o->set |= ARBTABLE_Q_HIGHLIMIT;
	}
	if (tb[TCA_ARBTABLE_ACCOUNTING]) {
		o->accounting = nla_get_u32(tb[TCA_ARBTABLE_ACCOUNTING]);
		o->set |= ARBTABLE_Q_ACCOUNTING;
	}
	if (tb[TCA_ARBTABLE_DEFAULT]) {
		o->default_minor = nla_get_u32(tb[TCA_ARBTABLE_DEFAULT]);
		o->set |= ARBTABLE_Q_DEFAULT;
	}
	if (tb[TCA_ARBTABLE_MTU]) {
		o->mtu = nla_get_u32(tb[TCA_ARBTABLE_MTU]);
		if (!tb[TCA_ARBTABLE_MTU_FOLLOW])
			o->set |= ARBTABLE_Q_MTU;
	}
	/* absent from older kernels, whose mtu never followed the device */
	st->q.mtu_follows_device = !!tb[TCA_ARBTABLE_MTU_FOLLOW];
	if (tb[TCA_ARBTABLE_MAXWEIGHT]) {
		o->maxweight = nla_get_u32(tb[TCA_ARBTABLE_MAXWEIGHT]);
		o->set |= ARBTABLE_Q_MAXWEIGHT;
	}
	if (tb[TCA_ARBTABLE_BURST]) {
		o->burst = nla_get_u32(tb[TCA_ARBTABLE_BURST]);
		o->set |= ARBTABLE_Q_BURST;
	}
	/* absent from older kernels, which had both paths open */
	o->prio_classid = 1;
	o->classify_foreign = 1;
	if (tb[TCA_ARBTABLE_PRIO_CLASSID]) {
		o->prio_classid = nla_get_u32(tb[TCA_ARBTABLE_PRIO_CLASSID]);
		o->set |= ARBTABLE_Q_PRIO_CLASSID;
	}
	if (tb[TCA_ARBTABLE_CLASSIFY_FOREIGN]) {
		o->classify_foreign =
			nla_get_u32(tb[TCA_ARBTABLE_CLASSIFY_FOREIGN]);
		o->set |= ARBTABLE_Q_CLASSIFY_FOREIGN;
	}
	/* absent from older kernels, which had the locked mode only */
	o->lockless = 0;
	if (tb[TCA_ARBTABLE_LOCKLESS]) {
		o->lockless = nla_get_u32(tb[TCA_ARBTABLE_LOCKLESS]);
		o->set |= ARBTABLE_Q_LOCKLESS;
	}
	if (tb[TCA_ARBTABLE_PRIOMAP]) {
		struct nlattr *a;
		int rem, i = 0;

		nla_for_each_nested(a, tb[TCA_ARBTABLE_PRIOMAP], rem) {
			if (i >= ARBTABLE_PRIO_BANDS)
				break;
			if (nla_type(a) != TCA_ARBTABLE_PRIOMAP_BAND)
				continue;
			if (nla_len(a) != 4)
				return -EPROTO;
			st->q.priomap[i++] = nla_get_u32(a);
		}
	}
	if (arb_parse_table(tb[TCA_ARBTABLE_HIGH], st->q.table[ARBTABLE_HIGH]) ||
	    arb_parse_table(tb[TCA_ARBTABLE_LOW], st->q.table[ARBTABLE_LOW]))
		return -EPROTO;
	return 0;
}

static int arb_parse_copts(struct nlattr *nest, struct arbtable_class_opts *o)
{
	struct nlattr *tb[TCA_ARBTABLE_C_MAX + 1];

	if (!nest)
		return 0;
	if (nla_parse_nested(tb, TCA_ARBTABLE_C_MAX, nest, arb_copt_policy) < 0)
		return -EPROTO;
	if (tb[TCA_ARBTABLE_C_STRICT]) {
		o->strict = nla_get_u32(tb[TCA_ARBTABLE_C_STRICT]);
		o->set |= ARBTABLE_C_STRICT;
	}
	if (tb[TCA_ARBTABLE_C_CEIL]) {
		o->ceil = nla_get_u64(tb[TCA_ARBTABLE_C_CEIL]);
		o->set |= ARBTABLE_C_CEIL;
	}
	if (tb[TCA_ARBTABLE_C_CBURST]) {
		o->cburst = nla_get_u32(tb[TCA_ARBTABLE_C_CBURST]);
		o->set |= ARBTABLE_C_CBURST;
	}
	if (tb[TCA_ARBTABLE_C_RATE]) {
		o->rate = nla_get_u64(tb[TCA_ARBTABLE_C_RATE]);
		o->set |= ARBTABLE_C_RATE;
	}
	if (tb[TCA_ARBTABLE_C_LATENCY]) {
		o->latency_ns = nla_get_u64(tb[TCA_ARBTABLE_C_LATENCY]);
		o->set |= ARBTABLE_C_LATENCY;
	}
	if (tb[TCA_ARBTABLE_C_DISTANCE]) {
		o->distance = nla_get_u32(tb[TCA_ARBTABLE_C_DISTANCE]);
		o->set |= ARBTABLE_C_DISTANCE;
	}
	if (tb[TCA_ARBTABLE_C_SHARE]) {
		o->share = nla_get_u32(tb[TCA_ARBTABLE_C_SHARE]);
		o->set |= ARBTABLE_C_SHARE;
	}
	return 0;
}

/* One qdisc of the device, as the qdisc dump found it. */
struct arb_qinfo {
	uint32_t	handle;
	uint32_t	parent;
	char		kind[32];
};

struct arb_qdump {
	int		ifindex;
	uint32_t	want;		/* handle wanted, 0 = any arbtable */
	struct arb_qinfo found;		/* the best match */
	int		have;		/* 0 none, 1 other kind, 2 arbtable */
	int		nqdiscs;
	char		root_kind[32];	/* kind of the root qdisc */
	struct arbtable_state *st;	/* fill when not NULL */
};

static int arb_qdisc_cb(struct nl_msg *msg, void *arg)
{
	struct arb_qdump *d = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct nlattr *tb[TCA_MAX + 1];
	struct tcmsg *tcm;
	const char *kind;
	int is_arb, better;

	if (nlh->nlmsg_type != RTM_NEWQDISC ||
	    nlmsg_parse(nlh, sizeof(*tcm), tb, TCA_MAX, arb_tca_policy) < 0)
		return NL_OK;
	tcm = nlmsg_data(nlh);
	if (tcm->tcm_ifindex != d->ifindex || !tb[TCA_KIND])
		return NL_OK;
	kind = nla_get_string(tb[TCA_KIND]);
	d->nqdiscs++;
	if (tcm->tcm_parent == TC_H_ROOT)
		snprintf(d->root_kind, sizeof(d->root_kind), "%s", kind);
	is_arb = strcmp(kind, ARB_KIND) == 0;

	if (d->want) {
		if (tcm->tcm_handle != d->want)
			return NL_OK;
		better = 1;
	} else {
		/* any arbtable qdisc; the root one wins */
		better = is_arb && (d->have < 2 || tcm->tcm_parent == TC_H_ROOT);
	}
	if (!better)
		return NL_OK;
	d->have = is_arb ? 2 : 1;
	d->found.handle = tcm->tcm_handle;
	d->found.parent = tcm->tcm_parent;
	snprintf(d->found.kind, sizeof(d->found.kind), "%s", kind);

	if (is_arb && d->st) {
		struct arbtable_state *st = d->st;
		struct nlattr *app;
		int bad;

		memset(&st->qopts, 0, sizeof(st->qopts));
		memset(st->q.priomap, 0, sizeof(st->q.priomap));
		memset(&st->q.stats, 0, sizeof(st->q.stats));
		st->q.handle = tcm->tcm_handle;
		st->q.parent = tcm->tcm_parent;
		st->q.mtu_follows_device = 0;
		bad = arb_parse_qopts(tb[TCA_OPTIONS], st);
		app = arb_parse_stats(tb[TCA_STATS2], &st->q.stats);
		arb_qdisc_xstats_in(&st->q, app ? nla_data(app) : NULL,
				    app ? (size_t)nla_len(app) : 0);
		if (bad)
			return bad;
	}
	return NL_OK;
}

static int arb_dump_qdiscs(struct arbtable *h, const char *ifname,
			   struct arb_qdump *d)
{
	struct nl_msg *msg;

	msg = arb_nl_tcmsg(RTM_GETQDISC, NLM_F_DUMP, d->ifindex, 0, 0, 0);
	if (!msg)
		return arb_nomem(h, msg);
	return arb_request(h, msg, arb_qdisc_cb, d, "list the qdiscs of %s",
			   ifname);
}

static void arb_fmt_handle(char *buf, size_t size, uint32_t handle)
{
	snprintf(buf, size, "%x:", ARBTABLE_MAJOR(handle));
}

/*
 * Resolve @ifname and find its arbtable qdisc: the one with handle
 * @want (major only) when @want is not 0, else the root one (or any).
 * Fills @qi; returns the ifindex or -errno.
 */
static int arb_find_qdisc(struct arbtable *h, const char *ifname,
			  uint32_t want, struct arb_qinfo *qi,
			  struct arbtable_state *st)
{
	struct arb_qdump d = { .want = want, .st = st };
	char hb[16];
	int err;

	d.ifindex = arb_ifindex(h, ifname);
	if (d.ifindex < 0)
		return d.ifindex;
	err = arb_dump_qdiscs(h, ifname, &d);
	if (err)
		return err;
	if (d.have == 2) {
		if (qi)
			*qi = d.found;
		return d.ifindex;
	}
	if (want) {
		arb_fmt_handle(hb, sizeof(hb), want);
		if (d.have == 1)
			return arb_fail(h, -EMEDIUMTYPE,
					"%s: qdisc %s is %s, not an arbtable qdisc",
					ifname, hb, d.found.kind);
		return arb_fail(h, -EMEDIUMTYPE,
				"%s: no qdisc with handle %s (not an arbtable qdisc)",
				ifname, hb);
	}
	if (d.root_kind[0])
		return arb_fail(h, -EMEDIUMTYPE,
				"%s: not an arbtable qdisc (the root qdisc is %s)",
				ifname, d.root_kind);
	return arb_fail(h, -EMEDIUMTYPE, "%s: has no arbtable qdisc", ifname);
}

/* ------------------------------------------------------------ qdisc */

/* The TCA_OPTIONS of a qdisc (its TCA_KIND already put) */
static int arb_put_qopts(struct nl_msg *msg,
			 const struct arbtable_qdisc_opts *o)
{
	struct nlattr *nest;

	nest = nla_nest_start(msg, TCA_OPTIONS);
	if (!nest)
		return -1;
	if (o && (o->set & ARBTABLE_Q_MODE) &&
	    nla_put_u32(msg, TCA_ARBTABLE_MODE, o->mode) < 0)
		return -1;
	if (o && (o->set & ARBTABLE_Q_RATE) &&
	    nla_put_u64(msg, TCA_ARBTABLE_RATE, o->rate) < 0)
		return -1;
	if (o && (o->set & ARBTABLE_Q_HIGHLIMIT) &&
	    nla_put_u32(msg, TCA_ARBTABLE_HIGHLIMIT, o->highlimit) < 0)
		return -1;
	if (o && (o->set & ARBTABLE_Q_ACCOUNTING) &&
	    nla_put_u32(msg, TCA_ARBTABLE_ACCOUNTING, o->accounting) < 0)
		return -1;
	if (o && (o->set & ARBTABLE_Q_DEFAULT) &&
	    nla_put_u32(msg, TCA_ARBTABLE_DEFAULT, o->default_minor) < 0)
		return -1;
	if (o && (o->set & ARBTABLE_Q_MTU) &&
	    nla_put_u32(msg, TCA_ARBTABLE_MTU, o->mtu) < 0)
		return -1;
	if (o && (o->set & ARBTABLE_Q_MAXWEIGHT) &&
	    nla_put_u32(msg, TCA_ARBTABLE_MAXWEIGHT, o->maxweight) < 0)
		return -1;
	if (o && (o->set & ARBTABLE_Q_BURST) &&
	    nla_put_u32(msg, TCA_ARBTABLE_BURST, o->burst) < 0)
		return -1;
	if (o && (o->set & ARBTABLE_Q_PRIO_CLASSID) &&
	    nla_put_u32(msg, TCA_ARBTABLE_PRIO_CLASSID, o->prio_classid) < 0)
		return -1;
	if (o && (o->set & ARBTABLE_Q_CLASSIFY_FOREIGN) &&
	    nla_put_u32(msg, TCA_ARBTABLE_CLASSIFY_FOREIGN,
			o->classify_foreign) < 0)
		return -1;
	if (o && (o->set & ARBTABLE_Q_LOCKLESS) &&
	    nla_put_u32(msg, TCA_ARBTABLE_LOCKLESS, o->lockless) < 0)
		return -1;
	nla_nest_end(msg, nest);
	return 0;
}

/*
 * The device's arbtable qdisc (as arb_find_qdisc() finds it, into @qi):
 * the message of @type to it, with its kind, in *@msg. 0, or the error
 * reported through arb_fail().
 */
static int arb_qdisc_msg(struct arbtable *h, const char *ifname, int type,
			 struct arb_qinfo *qi, struct nl_msg **msg)
{
	int ifindex;

	ifindex = arb_find_qdisc(h, ifname, 0, qi, NULL);
	if (ifindex < 0)
		return ifindex;
	*msg = arb_nl_tcmsg(type, 0, ifindex, qi->parent, qi->handle, 0);
	if (!*msg || nla_put_string(*msg, TCA_KIND, ARB_KIND) < 0)
		return arb_nomem(h, *msg);
	return 0;
}

/*
 * Create (the root qdisc @handle) or change the device's arbtable qdisc
 * with the caller's options.
 */
static int arb_qdisc_op(struct arbtable *h, bool create, const char *ifname,
			uint32_t handle,
			const struct arbtable_qdisc_opts *uopts,
			size_t opts_size)
{
	struct arb_qinfo qi = { .handle = handle, .parent = TC_H_ROOT };
	struct arbtable_qdisc_opts kopts;
	struct nl_msg *msg;
	int ifindex, err;

	if (!h)
		return -EINVAL;
	arb_clear(h);
	err = arb_take_opts(h, create ? "create arbtable qdisc" :
				       "change arbtable qdisc",
			    &kopts, sizeof(kopts), uopts, opts_size,
			    ARBTABLE_QDISC_OPTS_SIZE_VER0);
	if (err)
		return err;
	if (create) {
		if (ARBTABLE_MINOR(handle) || !handle)
			return arb_fail(h, -EINVAL,
					"qdisc handle %x:%x: give a major only (e.g. 1:)",
					ARBTABLE_MAJOR(handle), ARBTABLE_MINOR(handle));
		ifindex = arb_ifindex(h, ifname);
		if (ifindex < 0)
			return ifindex;
		msg = arb_nl_tcmsg(RTM_NEWQDISC, NLM_F_CREATE | NLM_F_EXCL,
				   ifindex, TC_H_ROOT, handle, 0);
		if (!msg || nla_put_string(msg, TCA_KIND, ARB_KIND) < 0)
			return arb_nomem(h, msg);
	} else {
		err = arb_qdisc_msg(h, ifname, RTM_NEWQDISC, &qi, &msg);
		if (err)
			return err;
	}
	if (arb_put_qopts(msg, uopts ? &kopts : NULL) < 0)
		return arb_nomem(h, msg);
	return arb_request(h, msg, NULL, NULL, "%s arbtable qdisc %x: on %s",
			   create ? "create" : "change",
			   ARBTABLE_MAJOR(qi.handle), ifname);
}

ARB_EXPORT int arbtable_qdisc_create(struct arbtable *h, const char *ifname,
				     uint32_t handle,
				     const struct arbtable_qdisc_opts *uopts,
				     size_t opts_size)
{
	return arb_qdisc_op(h, true, ifname, handle, uopts, opts_size);
}

ARB_EXPORT int arbtable_qdisc_change(struct arbtable *h, const char *ifname,
				     const struct arbtable_qdisc_opts *uopts,
				     size_t opts_size)
{
	return arb_qdisc_op(h, false, ifname, 0, uopts, opts_size);
}

ARB_EXPORT int arbtable_qdisc_delete(struct arbtable *h, const char *ifname)
{
	struct arb_qinfo qi;
	struct nl_msg *msg;
	int err;

	if (!h)
		return -EINVAL;
	arb_clear(h);
	err = arb_qdisc_msg(h, ifname, RTM_DELQDISC, &qi, &msg);
	if (err)
		return err;
	return arb_request(h, msg, NULL, NULL, "delete arbtable qdisc %x: on %s",
			   ARBTABLE_MAJOR(qi.handle), ifname);
}

/*
 * A change of the device's arbtable qdisc: the RTM_NEWQDISC message with
 * its kind and an open TCA_OPTIONS nest in *@opts. Returns 0, or the
 * error already reported through arb_fail().
 */
static int arb_qdisc_change_msg(struct arbtable *h, const char *ifname,
				struct nl_msg **msg, struct nlattr **opts)
{
	struct arb_qinfo qi;
	int err;

	err = arb_qdisc_msg(h, ifname, RTM_NEWQDISC, &qi, msg);
	if (err)
		return err;
	*opts = nla_nest_start(*msg, TCA_OPTIONS);
	if (!*opts)
		return arb_nomem(h, *msg);
	return 0;
}

ARB_EXPORT int arbtable_set_priomap(struct arbtable *h, const char *ifname,
				    const uint32_t priomap[ARBTABLE_PRIO_BANDS])
{
	struct nlattr *opts, *nest;
	struct nl_msg *msg = NULL;
	int err, i;

	if (!h)
		return -EINVAL;
	arb_clear(h);
	if (!priomap)
		return arb_fail(h, -EINVAL, "set_priomap: no priomap");
	err = arb_qdisc_change_msg(h, ifname, &msg, &opts);
	if (err)
		return err;
	nest = nla_nest_start(msg, TCA_ARBTABLE_PRIOMAP);
	if (!nest)
		return arb_nomem(h, msg);
	for (i = 0; i < ARBTABLE_PRIO_BANDS; i++)
		if (nla_put_u32(msg, TCA_ARBTABLE_PRIOMAP_BAND, priomap[i]) < 0)
			return arb_nomem(h, msg);
	nla_nest_end(msg, nest);
	nla_nest_end(msg, opts);
	return arb_request(h, msg, NULL, NULL, "set the priomap of %s", ifname);
}

ARB_EXPORT int arbtable_set_table(struct arbtable *h, const char *ifname,
				  enum arbtable_table table,
				  const struct arbtable_slot slots[ARBTABLE_SLOTS])
{
	struct nlattr *opts, *nest, *slot;
	struct nl_msg *msg = NULL;
	int err, i, last;

	if (!h)
		return -EINVAL;
	arb_clear(h);
	if (!slots || (table != ARBTABLE_HIGH && table != ARBTABLE_LOW))
		return arb_fail(h, -EINVAL, "set_table: bad table or no slots");
	err = arb_qdisc_change_msg(h, ifname, &msg, &opts);
	if (err)
		return err;
	nest = nla_nest_start(msg, table == ARBTABLE_HIGH ?
			      TCA_ARBTABLE_HIGH : TCA_ARBTABLE_LOW);
	if (!nest)
		return arb_nomem(h, msg);
	/* slots 0 to the last non-null one, a null one as an empty nest */
	for (last = ARBTABLE_SLOTS; last > 0; last--)
		if (slots[last - 1].minor && slots[last - 1].weight)
			break;
	for (i = 0; i < last; i++) {
		slot = nla_nest_start(msg, TCA_ARBTABLE_TBL_SLOT);
		if (!slot)
			return arb_nomem(h, msg);
		if (slots[i].minor && slots[i].weight &&
		    (nla_put_u32(msg, TCA_ARBTABLE_SLOT_CLASS,
				 slots[i].minor) < 0 ||
		     nla_put_u32(msg, TCA_ARBTABLE_SLOT_WEIGHT,
				 slots[i].weight) < 0))
			return arb_nomem(h, msg);
		/* libnl's nla_nest_end() drops an empty nest: a null slot
		 * must stay, or the slots after it would move up
		 */
		if (nla_nest_end_keep_empty(msg, slot) < 0)
			return arb_nomem(h, msg);
	}
	/* and an empty table is the request to clear it */
	if (nla_nest_end_keep_empty(msg, nest) < 0)
		return arb_nomem(h, msg);
	nla_nest_end(msg, opts);
	return arb_request(h, msg, NULL, NULL, "set the %s table of %s",
			   table == ARBTABLE_HIGH ? "high" : "low", ifname);
}

/* ------------------------------------------------------------ classes */

static int arb_put_copts(struct nl_msg *msg,
			 const struct arbtable_class_opts *o)
{
	struct nlattr *nest;

	if (nla_put_string(msg, TCA_KIND, ARB_KIND) < 0)
		return -1;
	nest = nla_nest_start(msg, TCA_OPTIONS);
	if (!nest)
		return -1;
	if (o && (o->set & ARBTABLE_C_STRICT) &&
	    nla_put_u32(msg, TCA_ARBTABLE_C_STRICT, o->strict ? 1 : 0) < 0)
		return -1;
	if (o && (o->set & ARBTABLE_C_CBURST) &&
	    nla_put_u32(msg, TCA_ARBTABLE_C_CBURST, o->cburst) < 0)
		return -1;
	if (o && (o->set & ARBTABLE_C_CEIL) &&
	    nla_put_u64(msg, TCA_ARBTABLE_C_CEIL, o->ceil) < 0)
		return -1;
	if (o && (o->set & ARBTABLE_C_RATE) &&
	    nla_put_u64(msg, TCA_ARBTABLE_C_RATE, o->rate) < 0)
		return -1;
	if (o && (o->set & ARBTABLE_C_LATENCY) &&
	    nla_put_u64(msg, TCA_ARBTABLE_C_LATENCY, o->latency_ns) < 0)
		return -1;
	if (o && (o->set & ARBTABLE_C_DISTANCE) &&
	    nla_put_u32(msg, TCA_ARBTABLE_C_DISTANCE, o->distance) < 0)
		return -1;
	if (o && (o->set & ARBTABLE_C_SHARE) &&
	    nla_put_u32(msg, TCA_ARBTABLE_C_SHARE, o->share) < 0)
		return -1;
	nla_nest_end(msg, nest);
	return 0;
}

enum arb_cop { ARB_ADMIT, ARB_CHANGE, ARB_RELEASE };

static int arb_class_op(struct arbtable *h, enum arb_cop op,
			const char *ifname, uint32_t classid,
			const struct arbtable_class_opts *uopts,
			size_t opts_size)
{
	static const char *const verb[] = {
		[ARB_ADMIT] = "admit", [ARB_CHANGE] = "change",
		[ARB_RELEASE] = "release",
	};
	const struct arbtable_class_opts *opts;
	struct arbtable_class_opts kopts;
	struct arb_qinfo qi;
	struct nl_msg *msg;
	char what[96];
	int ifindex, err, type, flags;

	if (!h)
		return -EINVAL;
	arb_clear(h);
	err = arb_take_opts(h, verb[op], &kopts, sizeof(kopts), uopts,
			    opts_size, ARBTABLE_CLASS_OPTS_SIZE_VER0);
	if (err)
		return err;
	opts = uopts ? &kopts : NULL;
	/* the one field that is not an option yet: keep it free for one */
	if (opts && opts->reserved)
		return arb_fail(h, -EINVAL, "%s: class options: reserved is not 0",
				verb[op]);
	if (!ARBTABLE_MINOR(classid))
		return arb_fail(h, -EINVAL,
				"class id %x:%x: the minor must be 1..ffff",
				ARBTABLE_MAJOR(classid), ARBTABLE_MINOR(classid));
	ifindex = arb_find_qdisc(h, ifname, classid & 0xffff0000u, &qi, NULL);
	if (ifindex < 0)
		return ifindex;
	classid = qi.handle | ARBTABLE_MINOR(classid);

	switch (op) {
	case ARB_ADMIT:
		type = RTM_NEWTCLASS;
		flags = NLM_F_CREATE | NLM_F_EXCL;
		break;
	case ARB_CHANGE:
		type = RTM_NEWTCLASS;
		flags = 0;
		break;
	default:
		type = RTM_DELTCLASS;
		flags = 0;
		break;
	}
	msg = arb_nl_tcmsg(type, flags, ifindex,
			   op == ARB_ADMIT ? qi.handle : 0, classid, 0);
	if (!msg ||
	    (op == ARB_RELEASE ? nla_put_string(msg, TCA_KIND, ARB_KIND) < 0 :
	     arb_put_copts(msg, opts) < 0))
		return arb_nomem(h, msg);
	snprintf(what, sizeof(what), "%s class %x:%x on %s", verb[op],
		 ARBTABLE_MAJOR(classid), ARBTABLE_MINOR(classid), ifname);
	err = arb_request(h, msg, NULL, NULL, "%s", what);

	/* The kernel says nothing more than the errno for these. */
	if (err == -ENOENT && op != ARB_ADMIT && h->from_kernel &&
	    strstr(h->msg, what) == h->msg)
		snprintf(h->msg, sizeof(h->msg), "%s: no such class", what);
	else if (err == -EEXIST && op == ARB_ADMIT && h->from_kernel &&
		 strstr(h->msg, what) == h->msg)
		snprintf(h->msg, sizeof(h->msg),
			 "%s: the class exists already (use change)", what);
	return err;
}

ARB_EXPORT int arbtable_admit(struct arbtable *h, const char *ifname,
			      uint32_t classid,
			      const struct arbtable_class_opts *opts,
			      size_t opts_size)
{
	return arb_class_op(h, ARB_ADMIT, ifname, classid, opts, opts_size);
}

ARB_EXPORT int arbtable_change(struct arbtable *h, const char *ifname,
			       uint32_t classid,
			       const struct arbtable_class_opts *opts,
			       size_t opts_size)
{
	return arb_class_op(h, ARB_CHANGE, ifname, classid, opts, opts_size);
}

ARB_EXPORT int arbtable_release(struct arbtable *h, const char *ifname,
				uint32_t classid)
{
	return arb_class_op(h, ARB_RELEASE, ifname, classid, NULL, 0);
}

/* ------------------------------------------------------------ read */

static int arb_class_cb(struct nl_msg *msg, void *arg)
{
	struct arbtable_state *st = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct nlattr *tb[TCA_MAX + 1], *app;
	struct arb_class *k;
	struct arbtable_class_info *c;
	struct tcmsg *tcm;
	int bad;

	if (nlh->nlmsg_type != RTM_NEWTCLASS ||
	    nlmsg_parse(nlh, sizeof(*tcm), tb, TCA_MAX, arb_tca_policy) < 0)
		return NL_OK;
	tcm = nlmsg_data(nlh);
	if (tcm->tcm_ifindex != st->q.ifindex || !tb[TCA_KIND] ||
	    strcmp(nla_get_string(tb[TCA_KIND]), ARB_KIND) ||
	    (tcm->tcm_handle & 0xffff0000u) != st->q.handle ||
	    !ARBTABLE_MINOR(tcm->tcm_handle) ||
	    st->q.nclasses >= ARBTABLE_MAX_CLASSES)
		return NL_OK;

	k = &st->classes[st->q.nclasses++];
	memset(k, 0, sizeof(*k));
	c = &k->info;
	c->classid = tcm->tcm_handle;
	c->leaf = tcm->tcm_info;
	bad = arb_parse_copts(tb[TCA_OPTIONS], &k->opts);
	app = arb_parse_stats(tb[TCA_STATS2], &c->stats);
	arb_class_xstats_in(c, app ? nla_data(app) : NULL,
			    app ? (size_t)nla_len(app) : 0);
	return bad ? bad : NL_OK;
}

static int arb_cmp_class(const void *a, const void *b)
{
	const struct arb_class *x = a, *y = b;

	return x->info.classid < y->info.classid ? -1 :
	       x->info.classid > y->info.classid;
}

ARB_EXPORT int arbtable_read(struct arbtable *h, const char *ifname,
			     struct arbtable_state *st)
{
	struct timespec ts;
	struct nl_msg *msg;
	int ifindex, err;

	if (!h)
		return -EINVAL;
	arb_clear(h);
	if (!st)
		return arb_fail(h, -EINVAL, "read: no state buffer");
	memset(st, 0, sizeof(*st));
	ifindex = arb_find_qdisc(h, ifname, 0, NULL, st);
	if (ifindex < 0)
		return ifindex;
	st->q.ifindex = ifindex;
	snprintf(st->q.ifname, sizeof(st->q.ifname), "%s", ifname);

	msg = arb_nl_tcmsg(RTM_GETTCLASS, NLM_F_DUMP, ifindex, 0, 0, 0);
	if (!msg)
		return arb_nomem(h, msg);
	err = arb_request(h, msg, arb_class_cb, st, "list the classes of %s",
			  ifname);
	if (err)
		return err;
	qsort(st->classes, st->q.nclasses, sizeof(st->classes[0]),
	      arb_cmp_class);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	st->q.timestamp_ns = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	return 0;
}
