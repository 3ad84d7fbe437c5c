// SPDX-License-Identifier: GPL-2.0
/*
 * status.c - STATUS (CNI 1.1): is the plugin itself able to work?
 *
 * STATUS answers for the plugin's own health only: its config parsed
 * (before we get here), libarbtable and rtnetlink usable, the egress
 * device there, and the qdisc reachable: an arbtable root on the device
 * that reads back, or sch_arbtable loaded so that ADD can make one.
 * Code 50 ("the plugin is not available") with the reason otherwise.
 *
 * The state of the table is not the plugin's health and never fails
 * STATUS: containerd 2.x calls STATUS on every plugin of the chain for
 * the node's network readiness, and a failed one makes the node NotReady
 * (and a Kubernetes node tainted), for what is a normal state of a busy
 * node: all classes taken, or a root someone replaced.  Those refuse
 * only the ADDs that need them, each with its reason; STATUS says them
 * on stderr (the runtime's log) and exits 0.  STATUS only reads: it
 * changes nothing on the node and takes no lock.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <linux/pkt_sched.h>

#include "cni.h"
#include "tcnl.h"

#define ACNI_MODULE_DIR	"/sys/module/sch_arbtable"

/* Not a failure: what ADD will refuse, on stderr */
__attribute__((format(printf, 2, 3)))
static void note(const struct acni_conf *c, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "arbtable-cni: STATUS (healthy) on %s: ", c->device);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

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
		note(c, "the arbtable qdisc is not the root qdisc: ADD refuses until it is");
	else if (!(qo.set & ARBTABLE_Q_MODE) || qo.mode != ARBTABLE_MODE_AUTO)
		note(c, "the arbtable root is not in auto mode: ADD refuses until it is (arbtable-cni admits tenants through the allocator only)");
	else if (qi.nclasses >= ARBTABLE_MAX_CLASSES)
		note(c, "the arbtable root has all %u classes taken: an ADD that needs a class of its own is refused until one is released",
		     ARBTABLE_MAX_CLASSES);
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
		note(c, "the root qdisc is %s %x: (not arbtable): ADD refuses until it is the kernel's default root (which ADD replaces) or an arbtable root in auto mode",
		     q.kind, q.handle >> 16);
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
