// SPDX-License-Identifier: GPL-2.0
/*
 * status.c - STATUS (CNI 1.1): can the plugin serve an ADD now?
 *
 * Yes when the device's root is an auto-mode arbtable qdisc with a class
 * free, or when ADD can make one: sch_arbtable is loaded and the root is
 * the kernel's default qdisc (handle 0), which ADD replaces.  Otherwise
 * code 50 ("the plugin is not available") with the reason.  STATUS only
 * reads: it changes nothing on the node and takes no lock.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <linux/pkt_sched.h>

#include "cni.h"
#include "tcnl.h"

#define ACNI_MODULE_DIR	"/sys/module/sch_arbtable"

static int check_root(const struct acni_conf *c, struct arbtable_state *st,
		      struct acni_err *e)
{
	struct arbtable_qdisc_opts qo;
	struct arbtable_qdisc_info qi;

	if (arbtable_state_qdisc(st, &qi, sizeof(qi)) < 0 ||
	    arbtable_state_qdisc_opts(st, &qo, sizeof(qo)) < 0)
		return acni_error(e, ACNI_E_UNAVAILABLE,
				  "libarbtable: cannot copy the qdisc's state of %s",
				  c->device);
	if (qi.parent != TC_H_ROOT)
		return acni_error(e, ACNI_E_UNAVAILABLE,
				  "the arbtable qdisc on %s is not the root qdisc",
				  c->device);
	if (!(qo.set & ARBTABLE_Q_MODE) || qo.mode != ARBTABLE_MODE_AUTO)
		return acni_error(e, ACNI_E_UNAVAILABLE,
				  "the arbtable root on %s is not in auto mode: arbtable-cni admits tenants through the allocator only",
				  c->device);
	if (qi.nclasses >= ARBTABLE_MAX_CLASSES)
		return acni_error(e, ACNI_E_UNAVAILABLE,
				  "the arbtable root on %s has all %u classes taken",
				  c->device, ARBTABLE_MAX_CLASSES);
	return 0;
}

/* No arbtable root: ADD creates one if it may */
static int check_creatable(const struct acni_conf *c, struct acni_err *e)
{
	struct acni_qdisc q;
	struct acni_link l;
	struct acni_nl n;
	int err;

	if (access(ACNI_MODULE_DIR, F_OK) < 0)
		return acni_error(e, ACNI_E_UNAVAILABLE,
				  "sch_arbtable is not loaded (modprobe sch_arbtable) and %s has no arbtable root",
				  c->device);
	if (acni_nl_open(&n, NULL) < 0)
		return acni_error(e, ACNI_E_UNAVAILABLE, "%s", n.msg);
	err = acni_link_get(&n, c->device, 0, &l);
	if (!err)
		err = acni_root_qdisc(&n, l.ifindex, &q);
	if (err < 0) {
		acni_error(e, ACNI_E_UNAVAILABLE, "device %s: %s", c->device,
			   err == -ENODEV ? "no such device" : n.msg);
		acni_nl_close(&n);
		return -1;
	}
	acni_nl_close(&n);
	if (q.found && q.handle)
		return acni_error(e, ACNI_E_UNAVAILABLE,
				  "the root qdisc of %s is %s %x: (not arbtable): ADD replaces only the kernel's default root",
				  c->device, q.kind, q.handle >> 16);
	return 0;
}

int acni_cmd_status(struct acni_conf *c, const struct acni_env *env,
		    struct acni_err *e)
{
	struct arbtable_state *st;
	struct arbtable *h;
	int err;

	(void)env;
	h = arbtable_open();
	st = arbtable_state_new();
	if (!h || !st) {
		err = acni_error(e, ACNI_E_UNAVAILABLE, "libarbtable: %s",
				 strerror(errno));
		goto out;
	}
	err = arbtable_read(h, c->device, st);
	if (!err)
		err = check_root(c, st, e);
	else if (err == -EMEDIUMTYPE)
		err = check_creatable(c, e);
	else if (err == -ENODEV)
		err = acni_error(e, ACNI_E_UNAVAILABLE,
				 "device %s does not exist", c->device);
	else
		err = acni_error(e, ACNI_E_UNAVAILABLE,
				 "reading the arbtable root of %s: %s",
				 c->device, arbtable_errmsg(h));
out:
	if (h)
		arbtable_close(h);
	arbtable_state_free(st);
	return err < 0 ? -1 : 0;
}
