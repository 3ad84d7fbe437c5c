/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tcnl.h - the rtnetlink requests arbtable-cni makes beside libarbtable:
 * the veth peer of the container's interface, a clsact qdisc and a
 * matchall+skbedit filter that marks the tenant's packets on the host side
 * of its veth, and the fw filter that maps the mark to the tenant's class
 * on the egress NIC.  libarbtable speaks only arbtable; these are not
 * arbtable's, so they live here, on libnl-route-3 (tcnl.c).
 *
 * Every name carries the acni_ prefix: the program links libnl, and a
 * global nl_* symbol here would interpose libnl's.
 */
#ifndef ACNI_TCNL_H
#define ACNI_TCNL_H

#include <stdint.h>

struct nl_sock;

/* Zero-initialised, it is closed (acni_nl_close() does nothing). */
struct acni_nl {
	struct nl_sock	*sk;
	int		kernel;		/* the last failure was the kernel's */
	char		msg[512];	/* its extack text or our explanation */
};

/* A socket in the current network namespace, or (path != NULL) in the
 * namespace at @path (CNI_NETNS): sockets keep the namespace they were
 * created in, so the process enters it only to open the socket.
 */
int acni_nl_open(struct acni_nl *n, const char *netns_path);
void acni_nl_close(struct acni_nl *n);

struct acni_link {
	int	ifindex;
	int	link;		/* IFLA_LINK: a veth's peer ifindex */
	char	name[16];
	char	kind[16];	/* IFLA_INFO_KIND, "" when none */
};

/* By name (ifindex 0) or by ifindex. -ENODEV when there is none. */
int acni_link_get(struct acni_nl *n, const char *name, int ifindex,
		  struct acni_link *l);

/* What a filter dump found at one (parent, prio, handle). */
struct acni_filter {
	char		kind[16];
	uint32_t	classid;	/* fw */
	uint32_t	mask;		/* fw */
	int		has_mark;	/* matchall with an skbedit mark */
	uint32_t	mark;
	uint32_t	mark_mask;
};

/* The ingress hook of the host veth: clsact, created when the device
 * has neither clsact nor ingress (*created then says so).
 */
int acni_clsact_add(struct acni_nl *n, int ifindex, int *created);
int acni_clsact_del(struct acni_nl *n, int ifindex);

/* matchall at @prio/@handle on the ingress hook: skbedit mark/mask,
 * control "continue", so filters after it still run.
 */
int acni_mark_add(struct acni_nl *n, int ifindex, uint32_t prio,
		  uint32_t handle, uint32_t mark, uint32_t mask);
/* fw on @parent (the arbtable root) at @prio: mark/mask -> @classid. */
int acni_fw_add(struct acni_nl *n, int ifindex, uint32_t parent,
		uint32_t prio, uint32_t mark, uint32_t mask, uint32_t classid);
/* Deletes one filter; 0 when it was not there (DEL is idempotent). */
int acni_filter_del(struct acni_nl *n, int ifindex, uint32_t parent,
		    uint32_t prio, uint32_t handle, const char *kind);
/* 1 and *f when the filter exists, 0 when not, negative on failure. */
int acni_filter_get(struct acni_nl *n, int ifindex, uint32_t parent,
		    uint32_t prio, uint32_t handle, struct acni_filter *f);
/* Handles of every filter of @kind at @parent/@prio into @used (a bitmap
 * indexed by handle >> @shift, @nbits bits): the marks already taken.
 */
int acni_filter_handles(struct acni_nl *n, int ifindex, uint32_t parent,
			uint32_t prio, unsigned int shift, uint8_t *used,
			unsigned int nbits);

/* The root qdisc of a device: handle 0 is the kernel's default (mq,
 * pfifo_fast, ...), which a new root replaces without NLM_F_REPLACE.
 */
struct acni_qdisc {
	int		found;
	uint32_t	handle;
	char		kind[16];
};
int acni_root_qdisc(struct acni_nl *n, int ifindex, struct acni_qdisc *q);

/* The ingress hook of a device as it is now: *@qdisc one of these (a
 * clsact or an ingress qdisc takes the mark filter); *@filters (may be
 * NULL) whether a clsact holds filters on its ingress or egress hook: 0
 * when none, else the entries the kernel listed (filters and the head
 * of each prio).
 */
#define ACNI_HOOK_NONE		0
#define ACNI_HOOK_CLSACT	1
#define ACNI_HOOK_INGRESS	2
int acni_ingress_hook(struct acni_nl *n, int ifindex, int *qdisc,
		      int *filters);

#define ACNI_INGRESS_PARENT	0xfffffff2u	/* TC_H_CLSACT:TC_H_MIN_INGRESS */

#endif /* ACNI_TCNL_H */
