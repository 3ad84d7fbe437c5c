/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * arbtable_nl.h - one rtnetlink request on libnl-3, answered with the
 * kernel's own errno and extended-ack text.
 *
 * libnl 3.7 has no extended-ack API, and its own request helpers
 * (nl_send_sync, rtnl_*_add) turn the kernel's errno into an NLE_ code,
 * which merges errnos a caller must tell apart (ENOENT and ESRCH both
 * become NLE_OBJ_NOTFOUND).  So requests built with libnl (objects or
 * messages) are sent here: NETLINK_EXT_ACK is turned on with setsockopt
 * and the answers are read with custom callbacks that keep the errno and
 * NLMSGERR_ATTR_MSG.  libarbtable and arbtable-cni both talk through it.
 *
 * Internal to the project (compiled into libarbtable and arbtable-cni,
 * hidden in the library): no ABI promise.
 */
#ifndef ARBTABLE_NL_H
#define ARBTABLE_NL_H

#include <stddef.h>
#include <stdint.h>

#include <netlink/netlink.h>
#include <netlink/handlers.h>

/* Where a failed request leaves its reason. */
struct arb_nl_err {
	char	*msg;		/* the kernel's extack text, or "what: why" */
	size_t	size;
	int	from_kernel;	/* the kernel answered with this error */
};

/* A connected NETLINK_ROUTE socket that asks for extended acks: NULL with
 * errno set (ENOMEM, or what socket() or bind() said).  The socket belongs
 * to the network namespace the thread is in when this is called.
 */
struct nl_sock *arb_nl_socket(void);

/* A tc request (RTM_*QDISC, RTM_*TCLASS, RTM_*TFILTER): struct tcmsg and
 * no attributes yet.  NULL when out of memory.
 */
struct nl_msg *arb_nl_tcmsg(int type, int flags, int ifindex,
			    uint32_t parent, uint32_t handle, uint32_t info);

/*
 * Sends @msg (not freed) and reads until its ACK, its error or the end of
 * its dump, calling @parse (may be NULL) on every answer.  0 on success,
 * with @e untouched.  Otherwise a negative errno and @e filled:
 *   - the kernel's error: @e->from_kernel = 1, @e->msg its extack text,
 *     or "@what: strerror" when it sent none;
 *   - -EIO (socket), -ENOMEM: @e->from_kernel = 0, @e->msg "@what: why";
 *   - -EPROTO when @parse returned < 0 for an answer (the answer was
 *     read to its end first): @e->from_kernel = 0.
 */
int arb_nl_talk(struct nl_sock *sk, struct nl_msg *msg, const char *what,
		nl_recvmsg_msg_cb_t parse, void *arg, struct arb_nl_err *e);

#endif /* ARBTABLE_NL_H */
