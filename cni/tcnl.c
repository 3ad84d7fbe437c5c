// SPDX-License-Identifier: GPL-2.0
/*
 * tcnl.c - the links, qdisc and filters arbtable-cni needs (see tcnl.h),
 * on libnl-route-3.
 *
 * Requests are libnl objects (rtnl_link, rtnl_qdisc, rtnl_cls) turned
 * into messages by libnl's rtnl_*_build_*_request(), but for the mark
 * filter (see put_mark_options()), and sent through lib/arbtable_nl.c, as
 * libarbtable sends its own: libnl's rtnl_*_add() would report NLE_
 * codes, which merge the errnos the "already gone" decisions below read,
 * and drop the kernel's extended ack, which the runtime must see.
 *
 * Answers: links through libnl's parser (rtnl_link); tc dumps with
 * libnl's attribute parser and policies, because libnl 3.7's fw object
 * has no getters for its class id and mask, its skbedit parser drops
 * TCA_SKBEDIT_MASK, and its tc objects parse every kind's options, so a
 * qdisc libnl misreads would fail a dump that needs only handles and
 * kinds.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <linux/if_ether.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/pkt_sched.h>
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_skbedit.h>

#include <netlink/netlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/object.h>
#include <netlink/socket.h>
#include <netlink/route/link.h>
#include <netlink/route/tc.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/classifier.h>
#include <netlink/route/cls/fw.h>

#include "arbtable_nl.h"
#include "tcnl.h"

__attribute__((format(printf, 3, 4)))
static int acni_fail(struct acni_nl *n, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(n->msg, sizeof(n->msg), fmt, ap);
	va_end(ap);
	n->kernel = 0;
	return err;
}

int acni_nl_open(struct acni_nl *n, const char *netns_path)
{
	int self = -1, target = -1, err = 0;

	memset(n, 0, sizeof(*n));
	if (netns_path) {
		self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		target = open(netns_path, O_RDONLY | O_CLOEXEC);
		if (self < 0 || target < 0) {
			err = -errno;
			acni_fail(n, err, "netns %s: %s", netns_path,
				  strerror(errno));
			goto out;
		}
		if (setns(target, CLONE_NEWNET) < 0) {
			err = -errno;
			acni_fail(n, err, "cannot enter netns %s: %s",
				  netns_path, strerror(errno));
			goto out;
		}
	}
	/* the socket keeps the namespace it is made in */
	n->sk = arb_nl_socket();
	if (!n->sk)
		err = acni_fail(n, -errno, "netlink socket: %s",
				strerror(errno));
	/* back before anything else happens in the container's namespace */
	if (netns_path && setns(self, CLONE_NEWNET) < 0) {
		err = acni_fail(n, -errno, "cannot return from netns %s: %s",
				netns_path, strerror(errno));
		acni_nl_close(n);
	}
out:
	if (self >= 0)
		close(self);
	if (target >= 0)
		close(target);
	return err;
}

void acni_nl_close(struct acni_nl *n)
{
	if (n->sk)
		nl_socket_free(n->sk);
	n->sk = NULL;
}

/* ------------------------------------------------------------ talking */

/* A request libnl could not build (a libnl error code) */
static int acni_unbuilt(struct acni_nl *n, const char *what, int nlerr)
{
	return acni_fail(n, nlerr == -NLE_NOMEM ? -ENOMEM : -EINVAL,
			 "%s: %s", what, nl_geterror(nlerr));
}

/* Sends @msg (and frees it): 0, or the kernel's -errno with its extack
 * text in n->msg (n->kernel set), or our own failure.
 */
static int acni_talk(struct acni_nl *n, struct nl_msg *msg, const char *what,
		     nl_recvmsg_msg_cb_t parse, void *arg)
{
	struct arb_nl_err e = { .msg = n->msg, .size = sizeof(n->msg) };
	int err;

	n->kernel = 0;
	n->msg[0] = '\0';
	err = arb_nl_talk(n->sk, msg, what, parse, arg, &e);
	nlmsg_free(msg);
	if (err)
		n->kernel = e.from_kernel;
	return err;
}

/* ------------------------------------------------------------ links */

static void link_obj(struct nl_object *obj, void *arg)
{
	struct rtnl_link *link = (struct rtnl_link *)obj;
	struct acni_link *l = arg;
	const char *s;

	l->ifindex = rtnl_link_get_ifindex(link);
	l->link = rtnl_link_get_link(link);	/* IFLA_LINK */
	s = rtnl_link_get_name(link);
	if (s)
		snprintf(l->name, sizeof(l->name), "%s", s);
	s = rtnl_link_get_type(link);		/* IFLA_INFO_KIND */
	if (s)
		snprintf(l->kind, sizeof(l->kind), "%s", s);
}

static int link_cb(struct nl_msg *msg, void *arg)
{
	if (nlmsg_hdr(msg)->nlmsg_type != RTM_NEWLINK)
		return 0;
	return nl_msg_parse(msg, link_obj, arg) < 0 ? -1 : 0;
}

int acni_link_get(struct acni_nl *n, const char *name, int ifindex,
		  struct acni_link *l)
{
	struct nl_msg *msg;
	char what[64];
	int err;

	memset(l, 0, sizeof(*l));
	if (name)
		snprintf(what, sizeof(what), "link %s", name);
	else
		snprintf(what, sizeof(what), "link #%d", ifindex);
	/* libnl asserts on a request naming no link */
	if (!name && ifindex <= 0)
		return acni_fail(n, -ENODEV, "%s: no such device", what);
	err = rtnl_link_build_get_request(name ? 0 : ifindex, name, &msg);
	if (err < 0)
		return acni_unbuilt(n, what, err);
	err = acni_talk(n, msg, what, link_cb, l);
	if (err == -ENODEV || (!err && !l->ifindex))
		return acni_fail(n, -ENODEV, "%s: no such device", what);
	return err;
}

/* ------------------------------------------------------------ qdisc */

/* clsact: libnl has no object type for it, so its qdisc carries only
 * the kind, which the kernel needs and libnl sends as given.
 */
static struct rtnl_qdisc *clsact_qdisc(int ifindex)
{
	struct rtnl_qdisc *q = rtnl_qdisc_alloc();

	if (!q)
		return NULL;
	rtnl_tc_set_ifindex(TC_CAST(q), ifindex);
	rtnl_tc_set_parent(TC_CAST(q), TC_H_CLSACT);
	rtnl_tc_set_handle(TC_CAST(q), TC_H_MAKE(TC_H_CLSACT, 0));
	return q;
}

int acni_clsact_add(struct acni_nl *n, int ifindex, int *created)
{
	static const char what[] = "add clsact qdisc";
	struct rtnl_qdisc *q = clsact_qdisc(ifindex);
	struct nl_msg *msg = NULL;
	int err;

	*created = 0;
	if (!q)
		return acni_unbuilt(n, what, -NLE_NOMEM);
	err = rtnl_tc_set_kind(TC_CAST(q), "clsact");
	if (!err)
		err = rtnl_qdisc_build_add_request(q, NLM_F_CREATE | NLM_F_EXCL,
						   &msg);
	rtnl_qdisc_put(q);
	if (err < 0)
		return acni_unbuilt(n, what, err);
	err = acni_talk(n, msg, what, NULL, NULL);
	/* a clsact or ingress qdisc is there already: its ingress hook
	 * takes our filter as well
	 */
	if (err == -EEXIST)
		return 0;
	if (!err)
		*created = 1;
	return err;
}

int acni_clsact_del(struct acni_nl *n, int ifindex)
{
	static const char what[] = "delete clsact qdisc";
	struct rtnl_qdisc *q = clsact_qdisc(ifindex);
	struct nl_msg *msg = NULL;
	int err;

	if (!q)
		return acni_unbuilt(n, what, -NLE_NOMEM);
	/* no kind: the hook's qdisc goes, clsact or not (ADD made it) */
	err = rtnl_qdisc_build_delete_request(q, &msg);
	rtnl_qdisc_put(q);
	if (err < 0)
		return acni_unbuilt(n, what, err);
	err = acni_talk(n, msg, what, NULL, NULL);
	return (err == -ENOENT || err == -EINVAL || err == -ENODEV) ? 0 : err;
}

/* ------------------------------------------------------------ filters */

/* A filter of @kind at @parent, @prio (any protocol), @handle */
static struct rtnl_cls *filter(int ifindex, uint32_t parent, uint32_t prio,
			       uint32_t handle, const char *kind)
{
	struct rtnl_cls *cls = rtnl_cls_alloc();

	if (!cls)
		return NULL;
	rtnl_tc_set_ifindex(TC_CAST(cls), ifindex);
	rtnl_tc_set_parent(TC_CAST(cls), parent);
	rtnl_tc_set_handle(TC_CAST(cls), handle);
	rtnl_cls_set_prio(cls, prio);
	rtnl_cls_set_protocol(cls, ETH_P_ALL);
	if (rtnl_tc_set_kind(TC_CAST(cls), kind) < 0) {
		rtnl_cls_put(cls);
		return NULL;
	}
	return cls;
}

/*
 * The mark filter is the one request built attribute by attribute (with
 * libnl's message calls) instead of from libnl objects, which cannot
 * carry it cleanly: libnl 3.7 has no setter for TCA_SKBEDIT_MASK
 * (act/skbedit.c writes PARMS, MARK, PRIORITY and QUEUE_MAPPING) and no
 * hook into an action's options, and its matchall object marks the class
 * id and flags as given whenever it carries an action (MALL_ATTR_ACTION
 * is 0x03, the CLASSID and FLAGS bits), so it would also send
 * TCA_MATCHALL_CLASSID 0 and TCA_MATCHALL_FLAGS 0.
 */
static int put_mark_options(struct nl_msg *msg, uint32_t mark, uint32_t mask)
{
	/* control "continue": the filters after it still run */
	struct tc_skbedit parms = { .action = TC_ACT_UNSPEC };
	struct nlattr *opt, *acts, *act, *aopt;

	if (nla_put_string(msg, TCA_KIND, "matchall") < 0)
		return -NLE_NOMEM;
	opt = nla_nest_start(msg, TCA_OPTIONS);
	acts = opt ? nla_nest_start(msg, TCA_MATCHALL_ACT) : NULL;
	act = acts ? nla_nest_start(msg, 1) : NULL;	/* the first action */
	if (!act || nla_put_string(msg, TCA_ACT_KIND, "skbedit") < 0)
		return -NLE_NOMEM;
	aopt = nla_nest_start(msg, TCA_ACT_OPTIONS);
	if (!aopt ||
	    nla_put(msg, TCA_SKBEDIT_PARMS, sizeof(parms), &parms) < 0 ||
	    nla_put_u32(msg, TCA_SKBEDIT_MARK, mark) < 0 ||
	    nla_put_u32(msg, TCA_SKBEDIT_MASK, mask) < 0)
		return -NLE_NOMEM;
	nla_nest_end(msg, aopt);
	nla_nest_end(msg, act);
	nla_nest_end(msg, acts);
	nla_nest_end(msg, opt);
	return 0;
}

int acni_mark_add(struct acni_nl *n, int ifindex, uint32_t prio,
		  uint32_t handle, uint32_t mark, uint32_t mask)
{
	static const char what[] = "add matchall skbedit mark filter";
	struct nl_msg *msg;

	msg = arb_nl_tcmsg(RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL, ifindex,
			   ACNI_INGRESS_PARENT, handle,
			   TC_H_MAKE(prio << 16, htons(ETH_P_ALL)));
	if (!msg || put_mark_options(msg, mark, mask) < 0) {
		nlmsg_free(msg);
		return acni_unbuilt(n, what, -NLE_NOMEM);
	}
	return acni_talk(n, msg, what, NULL, NULL);
}

int acni_fw_add(struct acni_nl *n, int ifindex, uint32_t parent,
		uint32_t prio, uint32_t mark, uint32_t mask, uint32_t classid)
{
	static const char what[] = "add fw filter";
	struct rtnl_cls *cls = filter(ifindex, parent, prio, mark, "fw");
	struct nl_msg *msg = NULL;
	int err = -NLE_NOMEM;

	if (cls) {
		err = rtnl_fw_set_classid(cls, classid);
		if (!err)
			err = rtnl_fw_set_mask(cls, mask);
		if (!err)
			err = rtnl_cls_build_add_request(cls, NLM_F_CREATE |
							 NLM_F_EXCL, &msg);
		rtnl_cls_put(cls);
	}
	if (err < 0)
		return acni_unbuilt(n, what, err);
	return acni_talk(n, msg, what, NULL, NULL);
}

int acni_filter_del(struct acni_nl *n, int ifindex, uint32_t parent,
		    uint32_t prio, uint32_t handle, const char *kind)
{
	static const char what[] = "delete filter";
	struct rtnl_cls *cls = filter(ifindex, parent, prio, handle, kind);
	struct nl_msg *msg = NULL;
	int err = -NLE_NOMEM;

	/* the kind alone: libnl drops the empty options nest */
	if (cls) {
		err = rtnl_cls_build_delete_request(cls, 0, &msg);
		rtnl_cls_put(cls);
	}
	if (err < 0)
		return acni_unbuilt(n, what, err);
	err = acni_talk(n, msg, what, NULL, NULL);
	/* gone already, or its qdisc or device with it */
	if (err == -ENOENT || err == -ENODEV)
		return 0;
	/* EINVAL is also what a parent that is gone (no such qdisc, or
	 * one without filters) gives: ask the kernel whether the filter is
	 * still there rather than reading its message
	 */
	if (err == -EINVAL) {
		struct acni_filter f;
		char msg_text[sizeof(n->msg)];
		int kernel = n->kernel, found;

		memcpy(msg_text, n->msg, sizeof(msg_text));
		found = acni_filter_get(n, ifindex, parent, prio, handle, &f);
		if (!found)
			return 0;
		memcpy(n->msg, msg_text, sizeof(msg_text));
		n->kernel = kernel;
	}
	return err;
}

struct filter_dump {
	uint32_t	prio;
	uint32_t	handle;		/* filter_get */
	struct acni_filter *f;
	int		found;
	unsigned int	shift;		/* filter_handles */
	uint8_t		*used;
	unsigned int	nbits;
};

static struct nla_policy tca_policy[TCA_MAX + 1] = {
	[TCA_KIND]	= { .type = NLA_STRING },
	[TCA_OPTIONS]	= { .type = NLA_NESTED },
};

static struct nla_policy fw_policy[TCA_FW_MAX + 1] = {
	[TCA_FW_CLASSID] = { .type = NLA_U32 },
	[TCA_FW_MASK]	= { .type = NLA_U32 },
};

static struct nla_policy mall_policy[TCA_MATCHALL_MAX + 1] = {
	[TCA_MATCHALL_ACT] = { .type = NLA_NESTED },
};

static struct nla_policy act_policy[TCA_ACT_MAX + 1] = {
	[TCA_ACT_KIND]	= { .type = NLA_STRING },
	[TCA_ACT_OPTIONS] = { .type = NLA_NESTED },
};

static struct nla_policy skbedit_policy[TCA_SKBEDIT_MAX + 1] = {
	[TCA_SKBEDIT_MARK] = { .type = NLA_U32 },
	[TCA_SKBEDIT_MASK] = { .type = NLA_U32 },
};

/* The mark of the skbedit action among @acts (TCA_MATCHALL_ACT) */
static int parse_skbedit(struct nlattr *acts, struct acni_filter *f)
{
	struct nlattr *tb[TCA_ACT_MAX + 1], *so[TCA_SKBEDIT_MAX + 1];
	struct nlattr *a;
	int rem;

	nla_for_each_nested(a, acts, rem) {
		if (nla_parse_nested(tb, TCA_ACT_MAX, a, act_policy) < 0)
			return -1;
		if (!tb[TCA_ACT_KIND] || !tb[TCA_ACT_OPTIONS] ||
		    strcmp(nla_get_string(tb[TCA_ACT_KIND]), "skbedit"))
			continue;
		if (nla_parse_nested(so, TCA_SKBEDIT_MAX, tb[TCA_ACT_OPTIONS],
				     skbedit_policy) < 0)
			return -1;
		if (!so[TCA_SKBEDIT_MARK])
			continue;
		f->has_mark = 1;
		f->mark = nla_get_u32(so[TCA_SKBEDIT_MARK]);
		f->mark_mask = so[TCA_SKBEDIT_MASK] ?
			nla_get_u32(so[TCA_SKBEDIT_MASK]) : 0xffffffffu;
	}
	return 0;
}

/* Kind and options of the filter @h describes into @f */
static int parse_filter(struct nlmsghdr *h, struct acni_filter *f)
{
	struct nlattr *tb[TCA_MAX + 1], *o[TCA_FW_MAX + TCA_MATCHALL_MAX + 2];

	if (nlmsg_parse(h, sizeof(struct tcmsg), tb, TCA_MAX, tca_policy) < 0)
		return -1;
	if (tb[TCA_KIND])
		snprintf(f->kind, sizeof(f->kind), "%s",
			 nla_get_string(tb[TCA_KIND]));
	if (!tb[TCA_OPTIONS])
		return 0;
	if (!strcmp(f->kind, "fw")) {
		if (nla_parse_nested(o, TCA_FW_MAX, tb[TCA_OPTIONS],
				     fw_policy) < 0)
			return -1;
		if (o[TCA_FW_CLASSID])
			f->classid = nla_get_u32(o[TCA_FW_CLASSID]);
		f->mask = o[TCA_FW_MASK] ? nla_get_u32(o[TCA_FW_MASK]) :
			0xffffffffu;
	} else if (!strcmp(f->kind, "matchall")) {
		if (nla_parse_nested(o, TCA_MATCHALL_MAX, tb[TCA_OPTIONS],
				     mall_policy) < 0)
			return -1;
		if (o[TCA_MATCHALL_ACT])
			return parse_skbedit(o[TCA_MATCHALL_ACT], f);
	}
	return 0;
}

static int filter_cb(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *h = nlmsg_hdr(msg);
	struct filter_dump *d = arg;
	struct tcmsg *t;

	if (h->nlmsg_type != RTM_NEWTFILTER)
		return 0;
	if (!nlmsg_valid_hdr(h, sizeof(*t)))
		return -1;
	t = nlmsg_data(h);
	/* the head of a prio's list (handle 0) is no filter */
	if (TC_H_MAJ(t->tcm_info) >> 16 != d->prio || !t->tcm_handle)
		return 0;
	if (d->used) {
		uint32_t i = t->tcm_handle >> d->shift;

		if (i < d->nbits)
			d->used[i / 8] |= 1u << (i % 8);
		return 0;
	}
	if (t->tcm_handle != d->handle || d->found)
		return 0;
	d->found = 1;
	return parse_filter(h, d->f);
}

static int filter_dump(struct acni_nl *n, int ifindex, uint32_t parent,
		       struct filter_dump *d)
{
	static const char what[] = "dump filters";
	struct nl_msg *msg;
	int err;

	msg = arb_nl_tcmsg(RTM_GETTFILTER, NLM_F_DUMP, ifindex, parent, 0, 0);
	if (!msg)
		return acni_unbuilt(n, what, -NLE_NOMEM);
	err = acni_talk(n, msg, what, filter_cb, d);
	/* no qdisc at @parent: no filters either */
	if (err == -EINVAL || err == -ENOENT)
		return 0;
	return err;
}

int acni_filter_get(struct acni_nl *n, int ifindex, uint32_t parent,
		    uint32_t prio, uint32_t handle, struct acni_filter *f)
{
	struct filter_dump d = { .prio = prio, .handle = handle, .f = f };
	int err;

	memset(f, 0, sizeof(*f));
	err = filter_dump(n, ifindex, parent, &d);
	return err < 0 ? err : d.found;
}

int acni_filter_handles(struct acni_nl *n, int ifindex, uint32_t parent,
			uint32_t prio, unsigned int shift, uint8_t *used,
			unsigned int nbits)
{
	struct filter_dump d = {
		.prio = prio, .shift = shift, .used = used, .nbits = nbits,
	};

	return filter_dump(n, ifindex, parent, &d);
}

/* ------------------------------------------------------------ qdiscs */

struct qdisc_dump {
	int		ifindex;
	uint32_t	parent;
	struct acni_qdisc *q;
};

static int qdisc_cb(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *h = nlmsg_hdr(msg);
	struct nlattr *tb[TCA_MAX + 1];
	struct qdisc_dump *d = arg;
	struct tcmsg *t;

	if (h->nlmsg_type != RTM_NEWQDISC)
		return 0;
	if (!nlmsg_valid_hdr(h, sizeof(*t)))
		return -1;
	t = nlmsg_data(h);
	if (t->tcm_ifindex != d->ifindex || t->tcm_parent != d->parent ||
	    d->q->found)
		return 0;
	if (nlmsg_parse(h, sizeof(*t), tb, TCA_MAX, tca_policy) < 0)
		return -1;
	d->q->found = 1;
	d->q->handle = t->tcm_handle;
	if (tb[TCA_KIND])
		snprintf(d->q->kind, sizeof(d->q->kind), "%s",
			 nla_get_string(tb[TCA_KIND]));
	return 0;
}

/* The qdisc of @ifindex at @parent, if any */
static int qdisc_at(struct acni_nl *n, int ifindex, uint32_t parent,
		    struct acni_qdisc *q)
{
	static const char what[] = "dump qdiscs";
	struct qdisc_dump d = { .ifindex = ifindex, .parent = parent, .q = q };
	struct nl_msg *msg;

	memset(q, 0, sizeof(*q));
	/* older kernels dump every device's qdiscs: qdisc_cb picks ours */
	msg = arb_nl_tcmsg(RTM_GETQDISC, NLM_F_DUMP, ifindex, 0, 0, 0);
	if (!msg)
		return acni_unbuilt(n, what, -NLE_NOMEM);
	return acni_talk(n, msg, what, qdisc_cb, &d);
}

int acni_root_qdisc(struct acni_nl *n, int ifindex, struct acni_qdisc *q)
{
	return qdisc_at(n, ifindex, TC_H_ROOT, q);
}

static int count_cb(struct nl_msg *msg, void *arg)
{
	if (nlmsg_hdr(msg)->nlmsg_type == RTM_NEWTFILTER)
		(*(int *)arg)++;
	return 0;
}

int acni_ingress_hook(struct acni_nl *n, int ifindex, int *qdisc,
		      int *filters)
{
	static const uint32_t hooks[] = {
		TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS),
		TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS),
	};
	struct acni_qdisc q;
	struct nl_msg *msg;
	size_t i;
	int err;

	*qdisc = ACNI_HOOK_NONE;
	if (filters)
		*filters = 0;
	/* clsact and ingress both sit at ffff:fff1 (TC_H_CLSACT is
	 * TC_H_INGRESS)
	 */
	err = qdisc_at(n, ifindex, TC_H_INGRESS, &q);
	if (err < 0 || !q.found)
		return err;
	*qdisc = strcmp(q.kind, "clsact") ? ACNI_HOOK_INGRESS :
		 ACNI_HOOK_CLSACT;
	for (i = 0; filters && *qdisc == ACNI_HOOK_CLSACT && i < 2; i++) {
		/* each of a hook's filters, and the head of each prio */
		msg = arb_nl_tcmsg(RTM_GETTFILTER, NLM_F_DUMP, ifindex,
				   hooks[i], 0, 0);
		if (!msg)
			return acni_unbuilt(n, "dump filters", -NLE_NOMEM);
		err = acni_talk(n, msg, "dump filters", count_cb, filters);
		if (err < 0)
			return err;
	}
	return 0;
}
