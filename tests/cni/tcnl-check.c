// SPDX-License-Identifier: GPL-2.0
/*
 * cni/tcnl.c on the host, without sch_arbtable, in a network namespace
 * the test makes for itself (root), on lo.
 *
 * What each call sends is caught on its way out (libnl's NL_CB_MSG_OUT
 * on the socket) and compared byte for byte with the request as the
 * kernel's uapi lays it out (built here with libnl's plain attribute
 * calls; sequence number and port aside): so the requests libnl builds
 * from objects, and the mark filter built attribute by attribute, are
 * the ones tcnl.c sent when it framed them by hand.  A link request is
 * checked field by field (libnl adds IFLA_EXT_MASK).
 *
 * What the kernel answers: links by name and ifindex, an absent one
 * (-ENODEV); the ingress hook (none, an empty clsact, a clsact with
 * someone's filter, an ingress qdisc); clsact made, made again (EEXIST:
 * not ours), deleted, deleted
 * again (gone: 0); the root qdisc; filters read and deleted where there
 * are none (0: "already gone", through EINVAL and ENOENT); a socket
 * opened in another namespace (CNI_NETNS) sees that namespace.  The fw
 * and matchall filters either work (then are read back: class id, mask,
 * mark) or fail with the kernel's extended ack in n.msg saying the
 * classifier (or skbedit) is missing, and nothing else (this host's
 * kernel has neither cls_fw nor cls_matchall: "TC classifier not found").
 *
 * usage: tcnl-check (as root).  Ends with "N passed, N failed".
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <arpa/inet.h>

#include <linux/if_ether.h>
#include <linux/rtnetlink.h>
#include <linux/pkt_sched.h>
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_skbedit.h>

#include <netlink/netlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/handlers.h>
#include <netlink/socket.h>

#include "check.h"
#include "tcnl.h"

/* ------------------------------------------------------------ sent */

#define CAP_MAX		4
#define CAP_SIZE	1024

static struct {
	int		n;
	unsigned char	buf[CAP_MAX][CAP_SIZE];
} cap;

static int capture(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *h = nlmsg_hdr(msg);

	(void)arg;
	if (cap.n < CAP_MAX && h->nlmsg_len <= CAP_SIZE)
		memcpy(cap.buf[cap.n], h, h->nlmsg_len);
	cap.n++;
	return NL_OK;
}

static struct nlmsghdr *sent(int i)
{
	return i < cap.n && i < CAP_MAX ? (struct nlmsghdr *)cap.buf[i] : NULL;
}

/* A tc request as the uapi lays it out, flags as libnl sends them */
static struct nl_msg *tc_ref(int type, int flags, int ifindex,
			     uint32_t parent, uint32_t handle, uint32_t info)
{
	struct tcmsg t = {
		.tcm_family = AF_UNSPEC, .tcm_ifindex = ifindex,
		.tcm_parent = parent, .tcm_handle = handle, .tcm_info = info,
	};
	struct nl_msg *m = nlmsg_alloc_simple(type, flags | NLM_F_REQUEST |
					      NLM_F_ACK);

	nlmsg_append(m, &t, sizeof(t), NLMSG_ALIGNTO);
	return m;
}

static uint32_t filter_info(uint32_t prio)
{
	return TC_H_MAKE(prio << 16, htons(ETH_P_ALL));
}

/* Request @i of the last call is @ref, byte for byte; frees @ref */
static void sent_is(int i, struct nl_msg *ref, const char *what)
{
	struct nlmsghdr *r = nlmsg_hdr(ref), *s = sent(i);
	char why[128];

	if (!s)
		snprintf(why, sizeof(why), "%d requests sent", cap.n);
	else
		snprintf(why, sizeof(why),
			 "type %u flags 0x%x, %u bytes; want type %u flags 0x%x, %u bytes",
			 s->nlmsg_type, s->nlmsg_flags, s->nlmsg_len,
			 r->nlmsg_type, r->nlmsg_flags, r->nlmsg_len);
	check(s && s->nlmsg_len == r->nlmsg_len &&
	      s->nlmsg_type == r->nlmsg_type &&
	      s->nlmsg_flags == r->nlmsg_flags &&
	      !memcmp(nlmsg_data(s), nlmsg_data(r),
		      r->nlmsg_len - NLMSG_HDRLEN), what, why);
	nlmsg_free(ref);
}

static struct nl_msg *mark_ref(int ifindex, uint32_t prio, uint32_t handle,
			       uint32_t mark, uint32_t mask)
{
	struct tc_skbedit parms = { .action = TC_ACT_UNSPEC };
	struct nl_msg *m = tc_ref(RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL,
				  ifindex, ACNI_INGRESS_PARENT, handle,
				  filter_info(prio));
	struct nlattr *opt, *acts, *act, *aopt;

	nla_put_string(m, TCA_KIND, "matchall");
	opt = nla_nest_start(m, TCA_OPTIONS);
	acts = nla_nest_start(m, TCA_MATCHALL_ACT);
	act = nla_nest_start(m, 1);
	nla_put_string(m, TCA_ACT_KIND, "skbedit");
	aopt = nla_nest_start(m, TCA_ACT_OPTIONS);
	nla_put(m, TCA_SKBEDIT_PARMS, sizeof(parms), &parms);
	nla_put_u32(m, TCA_SKBEDIT_MARK, mark);
	nla_put_u32(m, TCA_SKBEDIT_MASK, mask);
	nla_nest_end(m, aopt);
	nla_nest_end(m, act);
	nla_nest_end(m, acts);
	nla_nest_end(m, opt);
	return m;
}

static struct nl_msg *fw_ref(int ifindex, uint32_t parent, uint32_t prio,
			     uint32_t mark, uint32_t mask, uint32_t classid)
{
	struct nl_msg *m = tc_ref(RTM_NEWTFILTER, NLM_F_CREATE | NLM_F_EXCL,
				  ifindex, parent, mark, filter_info(prio));
	struct nlattr *opt;

	nla_put_string(m, TCA_KIND, "fw");
	opt = nla_nest_start(m, TCA_OPTIONS);
	nla_put_u32(m, TCA_FW_CLASSID, classid);
	nla_put_u32(m, TCA_FW_MASK, mask);
	nla_nest_end(m, opt);
	return m;
}

static struct nl_msg *del_ref(int ifindex, uint32_t parent, uint32_t prio,
			      uint32_t handle, const char *kind)
{
	struct nl_msg *m = tc_ref(RTM_DELTFILTER, 0, ifindex, parent, handle,
				  filter_info(prio));

	nla_put_string(m, TCA_KIND, kind);
	return m;
}

static struct nl_msg *clsact_ref(int type, int flags)
{
	struct nl_msg *m = tc_ref(type, flags, 1, TC_H_CLSACT,
				  TC_H_MAKE(TC_H_CLSACT, 0), 0);

	if (type == RTM_NEWQDISC)
		nla_put_string(m, TCA_KIND, "clsact");
	return m;
}

static struct nl_msg *dump_ref(int type, uint32_t parent)
{
	return tc_ref(type, NLM_F_DUMP, 1, parent, 0, 0);
}

/* A link request: RTM_GETLINK for @ifindex, or @name in IFLA_IFNAME */
static void sent_link(const char *name, int ifindex, const char *what)
{
	struct nlmsghdr *s = sent(0);
	struct nlattr *tb[IFLA_MAX + 1];
	struct ifinfomsg *ifi;
	int ok;

	ok = s && s->nlmsg_type == RTM_GETLINK && cap.n == 1 &&
	     nlmsg_parse(s, sizeof(*ifi), tb, IFLA_MAX, NULL) == 0;
	if (ok) {
		ifi = nlmsg_data(s);
		ok = ifi->ifi_index == (name ? 0 : ifindex) &&
		     (name ? tb[IFLA_IFNAME] &&
		      !strcmp(nla_get_string(tb[IFLA_IFNAME]), name) :
		      !tb[IFLA_IFNAME]);
	}
	check(ok, what, NULL);
}

/* ------------------------------------------------------------ kernel */

static void links(struct acni_nl *n)
{
	struct acni_link l;
	int err;

	cap.n = 0;
	err = acni_link_get(n, "lo", 0, &l);
	check(!err && l.ifindex == 1 && !strcmp(l.name, "lo"),
	      "link lo by name: ifindex 1", n->msg);
	sent_link("lo", 0, "sent: RTM_GETLINK, IFLA_IFNAME lo");
	cap.n = 0;
	err = acni_link_get(n, NULL, 1, &l);
	check(!err && !strcmp(l.name, "lo") && !l.kind[0] && !l.link,
	      "link #1 by ifindex: lo, no kind, no IFLA_LINK", n->msg);
	sent_link(NULL, 1, "sent: RTM_GETLINK, ifindex 1");
	err = acni_link_get(n, "nosuchdev0", 0, &l);
	check(err == -ENODEV && strstr(n->msg, "no such device"),
	      "link nosuchdev0: -ENODEV, \"no such device\"", n->msg);
	cap.n = 0;
	err = acni_link_get(n, NULL, 0, &l);
	check(err == -ENODEV && !cap.n, "link #0: -ENODEV without asking",
	      n->msg);
}

/* The veth's hook before ADD's intent and in DEL's decision: none, a
 * clsact with no filter, one with a filter (on its egress hook here),
 * an ingress qdisc
 */
static void hook(struct acni_nl *n)
{
	int err, q = -1, nf = -1, created;

	err = acni_ingress_hook(n, 1, &q, &nf);
	check(!err && q == ACNI_HOOK_NONE && nf == 0, "hook of lo: none", n->msg);
	if (acni_clsact_add(n, 1, &created) < 0) {
		check(0, "clsact for the hook", n->msg);
		return;
	}
	cap.n = 0;
	err = acni_ingress_hook(n, 1, &q, &nf);
	check(!err && q == ACNI_HOOK_CLSACT && nf == 0,
	      "hook of lo: an empty clsact", n->msg);
	sent_is(0, dump_ref(RTM_GETQDISC, 0), "sent: RTM_GETQDISC dump of lo");
	sent_is(1, dump_ref(RTM_GETTFILTER, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS)),
		"sent: RTM_GETTFILTER dump of lo parent ffff:fff2");
	sent_is(2, dump_ref(RTM_GETTFILTER, TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS)),
		"sent: RTM_GETTFILTER dump of lo parent ffff:fff3");
	if (system("tc filter add dev lo egress prio 7 u32 match u32 0 0 2>/dev/null") == 0) {
		err = acni_ingress_hook(n, 1, &q, &nf);
		check(!err && q == ACNI_HOOK_CLSACT && nf > 0,
		      "hook of lo: a clsact with someone's filter (egress)", n->msg);
	} else {
		printf("     (no u32 here: the clsact with a filter not tried)\n");
	}
	err = acni_ingress_hook(n, 1, &q, NULL);
	check(!err && q == ACNI_HOOK_CLSACT, "hook of lo: clsact, filters not asked for",
	      n->msg);
	acni_clsact_del(n, 1);
	if (system("tc qdisc add dev lo ingress") != 0) {
		check(0, "tc qdisc add dev lo ingress", NULL);
		return;
	}
	err = acni_ingress_hook(n, 1, &q, &nf);
	check(!err && q == ACNI_HOOK_INGRESS && nf == 0,
	      "hook of lo: an ingress qdisc (its filters not counted)", n->msg);
	err = acni_clsact_add(n, 1, &created);
	check(!err && !created, "clsact where an ingress qdisc is: not made, not ours",
	      n->msg);
	if (system("tc qdisc del dev lo ingress") != 0)
		check(0, "tc qdisc del dev lo ingress", NULL);
}

static void clsact(struct acni_nl *n)
{
	int err, created = -1;

	cap.n = 0;
	err = acni_clsact_add(n, 1, &created);
	check(!err && created == 1, "clsact on lo: made", n->msg);
	sent_is(0, clsact_ref(RTM_NEWQDISC, NLM_F_CREATE | NLM_F_EXCL),
		"sent: RTM_NEWQDISC clsact ffff: parent ffff:fff1, create, exclusive");
	err = acni_clsact_add(n, 1, &created);
	check(!err && created == 0,
	      "clsact again: there already (EEXIST), not ours", n->msg);
	cap.n = 0;
	err = acni_clsact_del(n, 1);
	check(!err, "clsact deleted", n->msg);
	sent_is(0, clsact_ref(RTM_DELQDISC, 0),
		"sent: RTM_DELQDISC ffff: parent ffff:fff1, no kind");
	err = acni_clsact_del(n, 1);
	check(!err, "clsact deleted again: gone already counts as done",
	      n->msg);
}

/* fw under htb 1: on lo: read back when the kernel has cls_fw, else its
 * refusal in its own words
 */
static void fw(struct acni_nl *n)
{
	uint8_t used[32] = { 0 };
	struct acni_filter f;
	char why[700];
	int err;

	cap.n = 0;
	err = acni_fw_add(n, 1, 0x10000, 100, 0x10000, 0xff0000, 0x10101);
	sent_is(0, fw_ref(1, 0x10000, 100, 0x10000, 0xff0000, 0x10101),
		"sent: RTM_NEWTFILTER fw prio 100 handle 0x10000, classid 1:101, mask 0xff0000");
	if (err) {
		snprintf(why, sizeof(why), "err %d kernel %d: %s", err,
			 n->kernel, n->msg);
		/* only a kernel without the classifier may refuse it */
		check(n->kernel && strstr(n->msg, "classifier not found"),
		      "fw refused only for want of cls_fw: the kernel's extended ack kept",
		      why);
		printf("     (the kernel said: %s)\n", n->msg);
		return;
	}
	err = acni_filter_get(n, 1, 0x10000, 100, 0x10000, &f);
	check(err == 1 && !strcmp(f.kind, "fw") && f.classid == 0x10101 &&
	      f.mask == 0xff0000,
	      "fw filter read back: handle 0x10000/0xff0000 -> 1:101", n->msg);
	err = acni_filter_handles(n, 1, 0x10000, 100, 16, used, 256);
	check(!err && used[0] == 2, "fw handle 1 in use", n->msg);
	err = acni_filter_del(n, 1, 0x10000, 100, 0x10000, "fw");
	check(!err, "fw filter deleted", n->msg);
	err = acni_filter_get(n, 1, 0x10000, 100, 0x10000, &f);
	check(err == 0, "fw filter gone", n->msg);
}

static void mark(struct acni_nl *n)
{
	struct acni_filter f;
	char why[700];
	int err, created;

	if (acni_clsact_add(n, 1, &created)) {
		check(0, "clsact for the mark filter", n->msg);
		return;
	}
	cap.n = 0;
	err = acni_mark_add(n, 1, 100, 3, 0x30000, 0xff0000);
	sent_is(0, mark_ref(1, 100, 3, 0x30000, 0xff0000),
		"sent: RTM_NEWTFILTER matchall prio 100 handle 3, skbedit mark 0x30000/0xff0000 continue");
	if (err) {
		snprintf(why, sizeof(why), "err %d kernel %d: %s", err,
			 n->kernel, n->msg);
		/* only a kernel without the classifier or action may */
		check(n->kernel && (strstr(n->msg, "classifier not found") ||
				    strstr(n->msg, "action module")),
		      "matchall refused only for want of cls_matchall or act_skbedit: the kernel's extended ack kept",
		      why);
		printf("     (the kernel said: %s)\n", n->msg);
	} else {
		err = acni_filter_get(n, 1, ACNI_INGRESS_PARENT, 100, 3, &f);
		check(err == 1 && !strcmp(f.kind, "matchall") && f.has_mark &&
		      f.mark == 0x30000 && f.mark_mask == 0xff0000,
		      "mark filter read back: skbedit mark 0x30000/0xff0000",
		      n->msg);
		err = acni_filter_del(n, 1, ACNI_INGRESS_PARENT, 100, 3,
				      "matchall");
		check(!err, "mark filter deleted", n->msg);
	}
	cap.n = 0;
	err = acni_filter_del(n, 1, ACNI_INGRESS_PARENT, 100, 3, "matchall");
	check(!err, "mark filter deleted again: 0", n->msg);
	sent_is(0, del_ref(1, ACNI_INGRESS_PARENT, 100, 3, "matchall"),
		"sent: RTM_DELTFILTER matchall prio 100 handle 3, the kind only");
	acni_clsact_del(n, 1);
}

static void filters(struct acni_nl *n)
{
	uint8_t used[32] = { 0 };
	struct acni_filter f;
	struct acni_qdisc q;
	int err;

	cap.n = 0;
	err = acni_filter_get(n, 1, 0x10000, 100, 0x10000, &f);
	check(err == 0, "fw filter of a qdisc that is not there: none (0)",
	      n->msg);
	sent_is(0, dump_ref(RTM_GETTFILTER, 0x10000),
		"sent: RTM_GETTFILTER dump of lo parent 1:");
	/* the kernel says EINVAL: tcnl asks whether it is there */
	cap.n = 0;
	err = acni_filter_del(n, 1, 0x10000, 100, 0x10000, "fw");
	check(err == 0 && cap.n == 2,
	      "delete a fw filter of a qdisc that is not there: 0 (EINVAL, then a dump finds none)",
	      n->msg);
	sent_is(0, del_ref(1, 0x10000, 100, 0x10000, "fw"),
		"sent: RTM_DELTFILTER fw prio 100 handle 0x10000, the kind only");
	sent_is(1, dump_ref(RTM_GETTFILTER, 0x10000),
		"sent: then RTM_GETTFILTER dump of lo parent 1:");
	if (system("tc qdisc add dev lo root handle 1: htb") != 0) {
		check(0, "tc qdisc add dev lo root handle 1: htb", NULL);
		return;
	}
	cap.n = 0;
	err = acni_root_qdisc(n, 1, &q);
	check(!err && q.found && q.handle == 0x10000 && !strcmp(q.kind, "htb"),
	      "root qdisc of lo: htb 1:", n->msg);
	sent_is(0, dump_ref(RTM_GETQDISC, 0), "sent: RTM_GETQDISC dump of lo");
	err = acni_filter_handles(n, 1, 0x10000, 100, 16, used, 256);
	check(!err && !used[0] && !used[1], "no fw handles in use under 1:",
	      n->msg);
	err = acni_filter_del(n, 1, 0x10000, 100, 0x10000, "fw");
	check(err == 0, "delete a fw filter that is not there: 0", n->msg);
	fw(n);
	mark(n);
}

/* A socket opened in another namespace sees that one: there lo has no
 * qdisc of ours, here it has htb 1:
 */
static void netns(void)
{
	struct acni_qdisc q;
	struct acni_nl o;
	char path[64], c;
	int p[2], err;
	pid_t pid;

	if (pipe(p) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (unshare(CLONE_NEWNET) < 0 || write(p[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1) {
		check(0, "a second network namespace", NULL);
		close(p[0]);
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	err = acni_nl_open(&o, path);
	check(!err, "socket opened in another namespace", o.msg);
	if (!err) {
		err = acni_root_qdisc(&o, 1, &q);
		check(!err && (!q.found || strcmp(q.kind, "htb")),
		      "there lo has not this namespace's htb 1:", o.msg);
		acni_nl_close(&o);
	}
	err = acni_nl_open(&o, "/nonexistent/netns");
	check(err < 0 && strstr(o.msg, "/nonexistent/netns"),
	      "a namespace path that does not exist: refused, named", o.msg);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	close(p[0]);
}

int main(void)
{
	struct acni_nl n = { 0 };

	/* never the caller's namespace: the test changes lo's qdiscs */
	if (getuid() != 0 || unshare(CLONE_NEWNET) < 0) {
		check(0, "needs root (a network namespace of its own)",
		      strerror(errno));
	} else if (acni_nl_open(&n, NULL) < 0) {
		check(0, "netlink socket", n.msg);
	} else {
		nl_socket_modify_cb(n.sk, NL_CB_MSG_OUT, NL_CB_CUSTOM,
				    capture, NULL);
		links(&n);
		hook(&n);
		clsact(&n);
		filters(&n);
		netns();
		acni_nl_close(&n);
	}
	return check_done();
}
