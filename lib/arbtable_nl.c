// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * arbtable_nl.c - one rtnetlink request on libnl-3 with the kernel's
 * errno and extended-ack text kept (see arbtable_nl.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <netlink/netlink.h>
#include <netlink/msg.h>
#include <netlink/attr.h>
#include <netlink/handlers.h>
#include <netlink/socket.h>
#include <netlink/errno.h>

#include "arbtable_nl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

struct nl_sock *arb_nl_socket(void)
{
	struct nl_sock *sk = nl_socket_alloc();
	int one = 1, e;

	if (!sk) {
		errno = ENOMEM;
		return NULL;
	}
	errno = 0;
	if (nl_connect(sk, NETLINK_ROUTE) < 0) {
		/* libnl leaves the socket call's errno in place */
		e = errno ? errno : EIO;
		nl_socket_free(sk);
		errno = e;
		return NULL;
	}
	/* Best effort: kernels without them still answer, just say less. */
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK,
		   &one, sizeof(one));
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_CAP_ACK,
		   &one, sizeof(one));
	return sk;
}

struct nl_msg *arb_nl_tcmsg(int type, int flags, int ifindex,
			    uint32_t parent, uint32_t handle, uint32_t info)
{
	struct tcmsg tcm = {
		.tcm_family = AF_UNSPEC,
		.tcm_ifindex = ifindex,
		.tcm_parent = parent,
		.tcm_handle = handle,
		.tcm_info = info,
	};
	struct nl_msg *msg = nlmsg_alloc_simple(type, flags);

	if (!msg)
		return NULL;
	if (nlmsg_append(msg, &tcm, sizeof(tcm), NLMSG_ALIGNTO) < 0) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

struct arb_nl_req {
	struct arb_nl_err *e;
	uint32_t	seq;
	int		done;
	int		err;		/* -errno from the kernel */
	int		bad_answer;	/* @parse refused an answer */
	const char	*what;
	nl_recvmsg_msg_cb_t parse;
	void		*arg;
};

/* The kernel's error: its extack text, else "what: strerror" */
static int arb_nl_kernel_err(struct arb_nl_req *r, int err, const char *ext)
{
	r->err = err;
	r->done = 1;
	r->e->from_kernel = 1;
	if (ext)
		snprintf(r->e->msg, r->e->size, "%s", ext);
	else
		snprintf(r->e->msg, r->e->size, "%s: %s", r->what,
			 strerror(-err));
	return NL_STOP;
}

/* Skip anything that is not the answer to this request (leftovers). */
static int arb_nl_seq_cb(struct nl_msg *msg, void *arg)
{
	struct arb_nl_req *r = arg;

	return nlmsg_hdr(msg)->nlmsg_seq == r->seq ? NL_OK : NL_SKIP;
}

static int arb_nl_valid_cb(struct nl_msg *msg, void *arg)
{
	struct arb_nl_req *r = arg;

	/* a parser returns < 0 for an answer it cannot read: the request
	 * fails loudly instead of leaving that part zeroed
	 */
	if (r->parse && r->parse(msg, r->arg) < 0)
		r->bad_answer = 1;
	return NL_OK;
}

static int arb_nl_ack_cb(struct nl_msg *msg, void *arg)
{
	struct arb_nl_req *r = arg;

	(void)msg;
	r->done = 1;
	return NL_STOP;
}

/* NLMSGERR_ATTR_MSG among the attributes at @attrs, if it is a string */
static const char *arb_nl_extack(struct nlattr *attrs, int len)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	const char *s;

	if (len <= 0 || nla_parse(tb, NLMSGERR_ATTR_MAX, attrs, len, NULL) < 0)
		return NULL;
	if (!tb[NLMSGERR_ATTR_MSG] || nla_len(tb[NLMSGERR_ATTR_MSG]) < 2)
		return NULL;
	s = nla_data(tb[NLMSGERR_ATTR_MSG]);
	return s[nla_len(tb[NLMSGERR_ATTR_MSG]) - 1] == '\0' ? s : NULL;
}

/* A dump that failed half-way says so in its NLMSG_DONE payload: the
 * error, then (NLM_F_ACK_TLVS) the extack attributes.
 */
static int arb_nl_finish_cb(struct nl_msg *msg, void *arg)
{
	struct arb_nl_req *r = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	size_t off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(int));
	const char *ext = NULL;
	int e;

	r->done = 1;
	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(int)))
		return NL_STOP;
	e = *(int *)nlmsg_data(nlh);
	if (e >= 0 || r->err)
		return NL_STOP;
	if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) && nlh->nlmsg_len > off)
		ext = arb_nl_extack((struct nlattr *)((char *)nlh + off),
				    nlh->nlmsg_len - off);
	return arb_nl_kernel_err(r, e, ext);
}

/*
 * The NLMSG_ERROR payload is struct nlmsgerr, i.e. the error and the
 * request's header; without NLM_F_CAPPED the whole request follows. With
 * NLM_F_ACK_TLVS, NLMSGERR_ATTR_* attributes come after that.
 */
static const char *arb_nl_err_extack(struct nlmsgerr *e)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	size_t len, off;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) ||
	    nlh->nlmsg_len < NLMSG_HDRLEN)
		return NULL;
	len = nlh->nlmsg_len - NLMSG_HDRLEN;
	if (nlh->nlmsg_flags & NLM_F_CAPPED)
		off = sizeof(*e);
	else
		off = sizeof(e->error) + NLMSG_ALIGN(e->msg.nlmsg_len);
	if (off >= len)
		return NULL;
	return arb_nl_extack((struct nlattr *)((char *)e + off), len - off);
}

static int arb_nl_err_cb(struct sockaddr_nl *nla, struct nlmsgerr *e,
			 void *arg)
{
	struct arb_nl_req *r = arg;

	(void)nla;
	if (e->msg.nlmsg_seq != r->seq)
		return NL_SKIP;
	return arb_nl_kernel_err(r, e->error < 0 ? e->error : -EIO,
				 arb_nl_err_extack(e));
}

static int arb_nl_fail(struct arb_nl_err *e, int err, const char *what,
		       const char *why)
{
	e->from_kernel = 0;
	snprintf(e->msg, e->size, "%s: %s", what, why);
	return err;
}

int arb_nl_talk(struct nl_sock *sk, struct nl_msg *msg, const char *what,
		nl_recvmsg_msg_cb_t parse, void *arg, struct arb_nl_err *e)
{
	struct arb_nl_req r = {
		.e = e, .what = what, .parse = parse, .arg = arg,
	};
	char why[160];
	struct nl_cb *cb;
	int err;

	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb)
		return arb_nl_fail(e, -ENOMEM, what, "out of memory");
	nl_cb_set(cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, arb_nl_seq_cb, &r);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, arb_nl_valid_cb, &r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, arb_nl_ack_cb, &r);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, arb_nl_finish_cb, &r);
	nl_cb_err(cb, NL_CB_CUSTOM, arb_nl_err_cb, &r);

	err = nl_send_auto(sk, msg);
	if (err < 0) {
		nl_cb_put(cb);
		snprintf(why, sizeof(why), "netlink send: %s", nl_geterror(err));
		return arb_nl_fail(e, -EIO, what, why);
	}
	r.seq = nlmsg_hdr(msg)->nlmsg_seq;

	while (!r.done) {
		err = nl_recvmsgs(sk, cb);
		if (r.done)
			break;
		if (err < 0) {
			nl_cb_put(cb);
			snprintf(why, sizeof(why), "netlink receive: %s",
				 nl_geterror(err));
			return arb_nl_fail(e, -EIO, what, why);
		}
	}
	nl_cb_put(cb);
	if (!r.err && r.bad_answer)
		return arb_nl_fail(e, -EPROTO, what,
				   "the kernel's answer could not be read");
	return r.err;
}
