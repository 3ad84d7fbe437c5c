// SPDX-License-Identifier: GPL-2.0
/*
 * tcnl.c - plain rtnetlink for the filters and links arbtable-cni needs
 * (see tcnl.h).  One request at a time, each acknowledged; the kernel's
 * extended ack text is kept so that the runtime sees the kernel's reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/pkt_sched.h>
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_skbedit.h>

#include "tcnl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define ACNI_BUF	8192
#define ACNI_RXBUF	65536

struct acni_msg {
	struct nlmsghdr	*h;
	int		overflow;	/* a bug: every request is small */
	char		buf[ACNI_BUF] __attribute__((aligned(NLMSG_ALIGNTO)));
};

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
	int one = 1, self = -1, target = -1, err = 0;

	memset(n, 0, sizeof(*n));
	n->fd = -1;
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
	n->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (n->fd < 0)
		err = acni_fail(n, -errno, "netlink socket: %s",
				strerror(errno));
	/* back before anything else happens in the container's namespace */
	if (netns_path && setns(self, CLONE_NEWNET) < 0) {
		err = acni_fail(n, -errno, "cannot return from netns %s: %s",
				netns_path, strerror(errno));
		if (n->fd >= 0)
			close(n->fd);
		n->fd = -1;
	}
	if (n->fd >= 0) {
		setsockopt(n->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one,
			   sizeof(one));
		setsockopt(n->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one,
			   sizeof(one));
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
	if (n->fd >= 0)
		close(n->fd);
	n->fd = -1;
}

/* ------------------------------------------------------------ building */

static void msg_init(struct acni_msg *m, int type, int flags)
{
	memset(m->buf, 0, sizeof(m->buf));
	m->overflow = 0;
	m->h = (struct nlmsghdr *)m->buf;
	m->h->nlmsg_len = NLMSG_LENGTH(0);
	m->h->nlmsg_type = type;
	m->h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
}

static void *msg_tail(struct acni_msg *m)
{
	return m->buf + NLMSG_ALIGN(m->h->nlmsg_len);
}

/* Room for @len more bytes.  Requests here are a few hundred bytes, so
 * running out is a bug: it is flagged, the request is not sent (talk()),
 * and the builders write into scratch meanwhile instead of checking
 * every call.
 */
static void *msg_reserve(struct acni_msg *m, size_t len)
{
	static char scratch[ACNI_BUF] __attribute__((aligned(NLMSG_ALIGNTO)));
	void *p = msg_tail(m);

	if (m->overflow || len > sizeof(scratch) ||
	    NLMSG_ALIGN(m->h->nlmsg_len) + NLMSG_ALIGN(len) > sizeof(m->buf)) {
		m->overflow = 1;
		return scratch;
	}
	m->h->nlmsg_len = NLMSG_ALIGN(m->h->nlmsg_len) + len;
	return p;
}

static struct rtattr *attr_put(struct acni_msg *m, int type,
			       const void *data, size_t len)
{
	struct rtattr *a = msg_reserve(m, RTA_LENGTH(len));

	a->rta_type = type;
	a->rta_len = RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(a), data, len);
	return a;
}

static void attr_u32(struct acni_msg *m, int type, uint32_t v)
{
	attr_put(m, type, &v, sizeof(v));
}

static void attr_str(struct acni_msg *m, int type, const char *s)
{
	attr_put(m, type, s, strlen(s) + 1);
}

static struct rtattr *nest_start(struct acni_msg *m, int type)
{
	return attr_put(m, type | NLA_F_NESTED, NULL, 0);
}

static void nest_end(struct acni_msg *m, struct rtattr *a)
{
	if (!m->overflow)
		a->rta_len = (char *)msg_tail(m) - (char *)a;
}

static struct tcmsg *tc_init(struct acni_msg *m, int type, int flags,
			     int ifindex, uint32_t parent, uint32_t handle,
			     uint32_t info)
{
	struct tcmsg *t;

	msg_init(m, type, flags);
	t = msg_reserve(m, sizeof(*t));
	t->tcm_family = AF_UNSPEC;
	t->tcm_ifindex = ifindex;
	t->tcm_parent = parent;
	t->tcm_handle = handle;
	t->tcm_info = info;
	return t;
}

static uint32_t filter_info(uint32_t prio)
{
	return TC_H_MAKE(prio << 16, htons(ETH_P_ALL));
}

/* ------------------------------------------------------------ talking */

/* The extack message after struct nlmsgerr, if the kernel sent one. */
static void take_extack(struct acni_nl *n, const struct nlmsghdr *h)
{
	const struct nlmsgerr *e = NLMSG_DATA(h);
	size_t off, len = h->nlmsg_len - NLMSG_HDRLEN;
	const struct rtattr *a;

	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	off = (h->nlmsg_flags & NLM_F_CAPPED) ? sizeof(*e) :
		sizeof(e->error) + NLMSG_ALIGN(e->msg.nlmsg_len);
	if (off >= len)
		return;
	a = (const struct rtattr *)((const char *)e + off);
	len -= off;
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == NLMSGERR_ATTR_MSG &&
		    RTA_PAYLOAD(a) > 1) {
			snprintf(n->msg, sizeof(n->msg), "%.*s",
				 (int)RTA_PAYLOAD(a) - 1,
				 (const char *)RTA_DATA(a));
			return;
		}
	}
}

typedef int (*acni_cb)(const struct nlmsghdr *h, void *arg);

/* Send and read to the ACK (or NLMSG_DONE of a dump), calling @cb on
 * every data message.  @what names the request in our own messages.
 */
static int talk(struct acni_nl *n, struct acni_msg *m, const char *what,
		acni_cb cb, void *arg)
{
	static char rx[ACNI_RXBUF];
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	ssize_t len;
	int err;

	n->kernel = 0;
	n->msg[0] = '\0';
	if (m->overflow)
		return acni_fail(n, -EMSGSIZE, "%s: request too long", what);
	m->h->nlmsg_seq = ++n->seq;
	if (sendto(n->fd, m->buf, m->h->nlmsg_len, 0, (struct sockaddr *)&sa,
		   sizeof(sa)) < 0)
		return acni_fail(n, -errno, "%s: netlink send: %s", what,
				 strerror(errno));
	for (;;) {
		struct nlmsghdr *h;

		len = recv(n->fd, rx, sizeof(rx), 0);
		if (len < 0) {
			if (errno == EINTR)
				continue;
			return acni_fail(n, -errno, "%s: netlink receive: %s",
					 what, strerror(errno));
		}
		for (h = (struct nlmsghdr *)rx; NLMSG_OK(h, (size_t)len);
		     h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_seq != n->seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				if (!e->error)
					return 0;
				err = e->error;
				n->kernel = 1;
				take_extack(n, h);
				if (!n->msg[0])
					snprintf(n->msg, sizeof(n->msg),
						 "%s: %s", what,
						 strerror(-err));
				return err;
			}
			if (cb) {
				err = cb(h, arg);
				if (err < 0)
					return acni_fail(n, err,
							 "%s: unexpected answer",
							 what);
			}
		}
	}
}

/* ------------------------------------------------------------ links */

static void parse_attrs(struct rtattr **tb, int max, struct rtattr *a,
			int len)
{
	memset(tb, 0, sizeof(*tb) * (max + 1));
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		int t = a->rta_type & ~NLA_F_NESTED;

		if (t <= max && !tb[t])
			tb[t] = a;
	}
}

static void copy_str(char *dst, size_t size, const struct rtattr *a)
{
	size_t l = RTA_PAYLOAD(a);

	if (l >= size)
		l = size - 1;
	memcpy(dst, RTA_DATA(a), l);
	dst[l] = '\0';
}

static int link_cb(const struct nlmsghdr *h, void *arg)
{
	struct acni_link *l = arg;
	struct ifinfomsg *ifi = NLMSG_DATA(h);
	struct rtattr *tb[IFLA_MAX + 1], *li[IFLA_INFO_MAX + 1];

	if (h->nlmsg_type != RTM_NEWLINK)
		return 0;
	parse_attrs(tb, IFLA_MAX, IFLA_RTA(ifi), IFLA_PAYLOAD(h));
	l->ifindex = ifi->ifi_index;
	if (tb[IFLA_IFNAME])
		copy_str(l->name, sizeof(l->name), tb[IFLA_IFNAME]);
	if (tb[IFLA_LINK] && RTA_PAYLOAD(tb[IFLA_LINK]) == 4)
		l->link = *(uint32_t *)RTA_DATA(tb[IFLA_LINK]);
	if (tb[IFLA_LINKINFO]) {
		parse_attrs(li, IFLA_INFO_MAX, RTA_DATA(tb[IFLA_LINKINFO]),
			    RTA_PAYLOAD(tb[IFLA_LINKINFO]));
		if (li[IFLA_INFO_KIND])
			copy_str(l->kind, sizeof(l->kind),
				 li[IFLA_INFO_KIND]);
	}
	return 0;
}

int acni_link_get(struct acni_nl *n, const char *name, int ifindex,
		  struct acni_link *l)
{
	static struct acni_msg m;
	struct ifinfomsg *ifi;
	char what[64];
	int err;

	memset(l, 0, sizeof(*l));
	msg_init(&m, RTM_GETLINK, 0);
	ifi = msg_reserve(&m, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = name ? 0 : ifindex;
	if (name) {
		attr_str(&m, IFLA_IFNAME, name);
		snprintf(what, sizeof(what), "link %s", name);
	} else {
		snprintf(what, sizeof(what), "link #%d", ifindex);
	}
	err = talk(n, &m, what, link_cb, l);
	if (err == -ENODEV || (!err && !l->ifindex))
		return acni_fail(n, -ENODEV, "%s: no such device", what);
	return err;
}

/* ------------------------------------------------------------ qdisc */

int acni_clsact_add(struct acni_nl *n, int ifindex, int *created)
{
	static struct acni_msg m;
	int err;

	*created = 0;
	tc_init(&m, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_EXCL, ifindex,
		TC_H_CLSACT, TC_H_MAKE(TC_H_CLSACT, 0), 0);
	attr_str(&m, TCA_KIND, "clsact");
	err = talk(n, &m, "add clsact qdisc", NULL, NULL);
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
	static struct acni_msg m;
	int err;

	tc_init(&m, RTM_DELQDISC, 0, ifindex, TC_H_CLSACT,
		TC_H_MAKE(TC_H_CLSACT, 0), 0);
	err = talk(n, &m, "delete clsact qdisc", NULL, NULL);
	return (err == -ENOENT || err == -EINVAL || err == -ENODEV) ? 0 : err;
}

/* ------------------------------------------------------------ filters */

int acni_mark_add(struct acni_nl *n, int ifindex, uint32_t prio,
		  uint32_t handle, uint32_t mark, uint32_t mask)
{
	static struct acni_msg m;
	struct tc_skbedit parms = { .action = TC_ACT_UNSPEC };
	struct rtattr *opt, *acts, *act, *aopt;

	tc_init(&m, RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL, ifindex,
		ACNI_INGRESS_PARENT, handle, filter_info(prio));
	attr_str(&m, TCA_KIND, "matchall");
	opt = nest_start(&m, TCA_OPTIONS);
	acts = nest_start(&m, TCA_MATCHALL_ACT);
	act = nest_start(&m, 1);	/* the first action of the list */
	attr_str(&m, TCA_ACT_KIND, "skbedit");
	aopt = nest_start(&m, TCA_ACT_OPTIONS);
	attr_put(&m, TCA_SKBEDIT_PARMS, &parms, sizeof(parms));
	attr_u32(&m, TCA_SKBEDIT_MARK, mark);
	attr_u32(&m, TCA_SKBEDIT_MASK, mask);
	nest_end(&m, aopt);
	nest_end(&m, act);
	nest_end(&m, acts);
	nest_end(&m, opt);
	return talk(n, &m, "add matchall skbedit mark filter", NULL, NULL);
}

int acni_fw_add(struct acni_nl *n, int ifindex, uint32_t parent,
		uint32_t prio, uint32_t mark, uint32_t mask, uint32_t classid)
{
	static struct acni_msg m;
	struct rtattr *opt;

	tc_init(&m, RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL, ifindex,
		parent, mark, filter_info(prio));
	attr_str(&m, TCA_KIND, "fw");
	opt = nest_start(&m, TCA_OPTIONS);
	attr_u32(&m, TCA_FW_CLASSID, classid);
	attr_u32(&m, TCA_FW_MASK, mask);
	nest_end(&m, opt);
	return talk(n, &m, "add fw filter", NULL, NULL);
}

int acni_filter_del(struct acni_nl *n, int ifindex, uint32_t parent,
		    uint32_t prio, uint32_t handle, const char *kind)
{
	static struct acni_msg m;
	int err;

	tc_init(&m, RTM_DELTFILTER, 0, ifindex, parent, handle,
		filter_info(prio));
	attr_str(&m, TCA_KIND, kind);
	err = talk(n, &m, "delete filter", NULL, NULL);
	/* gone already, or its qdisc or device with it */
	if (err == -ENOENT || err == -ENODEV)
		return 0;
	/* EINVAL is also what a parent that is gone (no such qdisc, or
	 * one without filters) gives: ask the kernel whether the filter is
	 * still there rather than reading its message
	 */
	if (err == -EINVAL) {
		struct acni_filter f;
		char msg[sizeof(n->msg)];
		int kernel = n->kernel, found;

		memcpy(msg, n->msg, sizeof(msg));
		found = acni_filter_get(n, ifindex, parent, prio, handle, &f);
		if (!found)
			return 0;
		memcpy(n->msg, msg, sizeof(msg));
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

static void parse_skbedit(struct rtattr *acts, struct acni_filter *f)
{
	struct rtattr *tb[TCA_ACT_MAX + 1], *so[TCA_SKBEDIT_MAX + 1];
	struct rtattr *a = RTA_DATA(acts);
	int len = RTA_PAYLOAD(acts);

	for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		char kind[16] = "";

		parse_attrs(tb, TCA_ACT_MAX, RTA_DATA(a), RTA_PAYLOAD(a));
		if (!tb[TCA_ACT_KIND] || !tb[TCA_ACT_OPTIONS])
			continue;
		copy_str(kind, sizeof(kind), tb[TCA_ACT_KIND]);
		if (strcmp(kind, "skbedit"))
			continue;
		parse_attrs(so, TCA_SKBEDIT_MAX, RTA_DATA(tb[TCA_ACT_OPTIONS]),
			    RTA_PAYLOAD(tb[TCA_ACT_OPTIONS]));
		if (!so[TCA_SKBEDIT_MARK])
			continue;
		f->has_mark = 1;
		f->mark = *(uint32_t *)RTA_DATA(so[TCA_SKBEDIT_MARK]);
		f->mark_mask = so[TCA_SKBEDIT_MASK] ?
			*(uint32_t *)RTA_DATA(so[TCA_SKBEDIT_MASK]) :
			0xffffffffu;
	}
}

static int filter_cb(const struct nlmsghdr *h, void *arg)
{
	struct filter_dump *d = arg;
	struct tcmsg *t = NLMSG_DATA(h);
	struct rtattr *tb[TCA_MAX + 1], *o[TCA_FW_MAX + TCA_MATCHALL_MAX + 2];
	struct acni_filter *f = d->f;

	if (h->nlmsg_type != RTM_NEWTFILTER)
		return 0;
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
	parse_attrs(tb, TCA_MAX, TCA_RTA(t), h->nlmsg_len -
		    NLMSG_LENGTH(sizeof(*t)));
	if (tb[TCA_KIND])
		copy_str(f->kind, sizeof(f->kind), tb[TCA_KIND]);
	if (!tb[TCA_OPTIONS])
		return 0;
	if (!strcmp(f->kind, "fw")) {
		parse_attrs(o, TCA_FW_MAX, RTA_DATA(tb[TCA_OPTIONS]),
			    RTA_PAYLOAD(tb[TCA_OPTIONS]));
		if (o[TCA_FW_CLASSID])
			f->classid = *(uint32_t *)RTA_DATA(o[TCA_FW_CLASSID]);
		f->mask = o[TCA_FW_MASK] ?
			*(uint32_t *)RTA_DATA(o[TCA_FW_MASK]) : 0xffffffffu;
	} else if (!strcmp(f->kind, "matchall")) {
		parse_attrs(o, TCA_MATCHALL_MAX, RTA_DATA(tb[TCA_OPTIONS]),
			    RTA_PAYLOAD(tb[TCA_OPTIONS]));
		if (o[TCA_MATCHALL_ACT])
			parse_skbedit(o[TCA_MATCHALL_ACT], f);
	}
	return 0;
}

static int filter_dump(struct acni_nl *n, int ifindex, uint32_t parent,
		       struct filter_dump *d)
{
	static struct acni_msg m;
	int err;

	tc_init(&m, RTM_GETTFILTER, NLM_F_DUMP, ifindex, parent, 0, 0);
	err = talk(n, &m, "dump filters", filter_cb, d);
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

struct root_dump {
	int		ifindex;
	struct acni_qdisc *q;
};

static int root_cb(const struct nlmsghdr *h, void *arg)
{
	struct root_dump *d = arg;
	struct tcmsg *t = NLMSG_DATA(h);
	struct rtattr *tb[TCA_MAX + 1];

	if (h->nlmsg_type != RTM_NEWQDISC || t->tcm_ifindex != d->ifindex ||
	    t->tcm_parent != TC_H_ROOT || d->q->found)
		return 0;
	d->q->found = 1;
	d->q->handle = t->tcm_handle;
	parse_attrs(tb, TCA_MAX, TCA_RTA(t), h->nlmsg_len -
		    NLMSG_LENGTH(sizeof(*t)));
	if (tb[TCA_KIND])
		copy_str(d->q->kind, sizeof(d->q->kind), tb[TCA_KIND]);
	return 0;
}

int acni_root_qdisc(struct acni_nl *n, int ifindex, struct acni_qdisc *q)
{
	static struct acni_msg m;
	struct root_dump d = { .ifindex = ifindex, .q = q };

	memset(q, 0, sizeof(*q));
	/* older kernels dump every device's qdiscs: root_cb picks ours */
	tc_init(&m, RTM_GETQDISC, NLM_F_DUMP, ifindex, 0, 0, 0);
	return talk(n, &m, "dump qdiscs", root_cb, &d);
}
