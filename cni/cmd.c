// SPDX-License-Identifier: GPL-2.0
/*
 * cmd.c - ADD, DEL and CHECK.
 *
 * A tenant is three things in the kernel:
 *   1. class ROOT:MINOR of the arbtable root on the egress NIC, admitted
 *      from its rate + latency/distance (HIGH table) or share (LOW);
 *   2. a matchall filter on the ingress of the host side of its veth that
 *      sets its mark (skbedit, under markMask): the mark is set in the
 *      host namespace, after the veth crossing scrubbed the container's
 *      own, and neither forwarding nor masquerade touch it, where
 *      skb->priority (reset by ip_forward) and the source address
 *      (rewritten by NAT) would not survive;
 *   3. an fw filter on the root that sends that mark to the class.
 * Tenant number t (1..span) gives both the minor (minorBase + t) and the
 * mark (t << the mask's shift); it starts at a hash of the container id
 * and interface and moves past numbers in use, so it is stored.
 *
 * ADD creates 1, 3, 2 in that order and undoes what it made on any
 * failure, the root qdisc included when ADD created it.  DEL removes
 * 2, 3, 1 (filters must go before the class they point at) and treats
 * "already gone" as done.
 *
 * A container that asks for nothing shares 1 and 3 with the others on
 * its device (the best-effort class) and has only 2 of its own; a root
 * ADD creates comes with a system class as its default (classes.c).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/pkt_sched.h>

#include "cni.h"
#include "tcnl.h"

/* ------------------------------------------------------------ helpers */

static uint32_t fnv1a(const char *a, const char *b)
{
	uint32_t h = 2166136261u;
	const char *s;

	for (s = a; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	h = (h ^ 0xff) * 16777619u;	/* "ab"+"c" differs from "a"+"bc" */
	for (s = b; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* A kernel refusal: msg says what was refused, details the kernel's
 * extack verbatim.  Runtimes built on libcni print msg and details
 * joined (podman: "msg: details"), so the reason must not be in both.
 * The plugin's own failures have no details: the reason is in msg.
 */
static void refusal(struct acni_err *e, int code, const char *what,
		    int from_kernel, const char *why)
{
	if (from_kernel) {
		acni_error(e, code, "%s", what);
		acni_details(e, why);
	} else {
		acni_error(e, code, "%s: %s", what, why);
	}
}

static int nl_error(struct acni_err *e, const struct acni_nl *n,
		    const char *what)
{
	refusal(e, ACNI_E_NETLINK, what, n->kernel, n->msg);
	return -1;
}

static int lib_error(struct acni_err *e, int code, struct arbtable *h,
		     const char *what)
{
	refusal(e, code, what, arbtable_err_from_kernel(h), arbtable_errmsg(h));
	return -1;
}

/* The host side of the container's veth: CNI_IFNAME in CNI_NETNS names
 * its peer by ifindex (IFLA_LINK); that ifindex must be a veth here that
 * points back.  1 when CNI_IFNAME is not a veth (ipvlan, macvlan,
 * netkit, ...): its kind in @kind ("" for none), @hl not filled.  Such
 * an interface has no host side the plugin can mark the tenant on: a
 * container on it that asked for nothing passes unclassified (ADD, CHECK),
 * one that asked for a class is refused with the kind named.
 */
static int host_veth(const struct acni_env *env, struct acni_nl *host,
		     struct acni_link *hl, char kind[16], struct acni_err *e)
{
	struct acni_link cl;
	struct acni_nl ns;
	int err;

	if (!env->netns || !*env->netns)
		return acni_error(e, ACNI_E_ENV,
				  "CNI_NETNS missing: ADD needs the container's network namespace");
	if (acni_nl_open(&ns, env->netns) < 0)
		return acni_error(e, ACNI_E_ENV, "CNI_NETNS: %s", ns.msg);
	err = acni_link_get(&ns, env->ifname, 0, &cl);
	acni_nl_close(&ns);
	if (err == -ENODEV)
		return acni_error(e, ACNI_E_VETH,
				  "no interface %s in %s: arbtable-cni chains after the plugin that creates it (bridge, ptp)",
				  env->ifname, env->netns);
	if (err < 0)
		return nl_error(e, &ns, "container interface");
	if (strcmp(cl.kind, "veth")) {
		memcpy(kind, cl.kind, sizeof(cl.kind));
		return 1;
	}
	err = cl.link ? acni_link_get(host, NULL, cl.link, hl) : -ENODEV;
	if (err == -ENODEV || (!err && (strcmp(hl->kind, "veth") ||
					hl->link != cl.ifindex)))
		return acni_error(e, ACNI_E_VETH,
				  "the peer of %s in %s (ifindex %d) is not in this network namespace",
				  env->ifname, env->netns, cl.link);
	if (err < 0)
		return nl_error(e, host, "host veth");
	return 0;
}

/* "a macvlan", "a device without a kind" */
static const char *kind_text(const char *kind, char *buf, size_t size)
{
	if (!kind[0])
		return "a device without a kind";
	snprintf(buf, size, "a%s %s", strchr("aeiou", kind[0]) ? "n" : "",
		 kind);
	return buf;
}

/* A free tenant number: no class with its minor, no fw filter with its
 * mark at our prio, no state file holding it.  The search starts at a
 * hash of @key1 and @key2 (container id and interface).
 */
int acni_pick_tenant(const struct acni_conf *c, const char *key1,
		     const char *key2, const struct arbtable_state *st,
		     const struct arbtable_qdisc_info *qi, struct acni_nl *n,
		     uint32_t *tenant, struct acni_err *e)
{
	static uint8_t used[65536 / 8];
	uint32_t h = fnv1a(key1, key2), i;

	memset(used, 0, sizeof(used));
	if (acni_filter_handles(n, qi->ifindex, qi->handle, c->prio,
				c->mark_shift, used, c->span + 1) < 0)
		return nl_error(e, n, "reading the fw filters");
	for (i = 0; i < c->span; i++) {
		uint32_t t = (h + i) % c->span + 1;

		if (used[t / 8] & (1u << (t % 8)))
			continue;
		if (arbtable_state_find_class(st, c->minor_base + t) >= 0)
			continue;
		if (acni_state_tenant_used(c->state_dir, c->device, t))
			continue;
		*tenant = t;
		return 0;
	}
	return acni_error(e, ACNI_E_DEVICE,
			  "no free tenant number on %s: all %u of minorBase 0x%x + 1..%u are taken",
			  c->device, c->span, c->minor_base, c->span);
}

/* Whether the clsact on the host veth of @s is the plugin's to remove
 * (our mark filter already gone).  A finished record says it: ADD made
 * it (1) or found one (0).  An unfinished one that says ADD was about
 * to make it (it found no clsact or ingress qdisc there) cannot say
 * whether the killed ADD got that far, nor whether someone else made
 * one since: a clsact that holds no filter is taken for the one ADD
 * made (no one else makes an empty one and leaves it so), one that
 * holds any is someone else's, or in use by someone else, and stays.
 */
static int clsact_ours(struct acni_nl *n, const struct acni_state *s)
{
	int q, nf;

	if (s->created_clsact != ACNI_CLSACT_INTENT)
		return s->created_clsact;
	if (acni_ingress_hook(n, s->host_ifindex, &q, &nf) < 0) {
		fprintf(stderr, "arbtable-cni: %s: keeping its clsact qdisc, if any (reading its hook: %s)\n",
			s->host_ifname, n->msg);
		return 0;
	}
	if (q == ACNI_HOOK_CLSACT && nf)
		fprintf(stderr, "arbtable-cni: %s: keeping its clsact qdisc: a killed ADD was about to make one, and the one there holds someone else's filters\n",
			s->host_ifname);
	return q == ACNI_HOOK_CLSACT && !nf;
}

/* The tenant's objects as a record names them, each "already gone"
 * taken as done (decided from the errno): DEL, GC and a new ADD over an
 * unfinished record use it.
 */
static int teardown(const struct acni_state *s, struct acni_err *e)
{
	struct arbtable *h = NULL;
	struct acni_link l;
	struct acni_nl n;
	int err, ret = -1;

	if (acni_nl_open(&n, NULL) < 0)
		return acni_error(e, ACNI_E_IO, "%s", n.msg);
	h = arbtable_open();
	if (!h) {
		acni_error(e, ACNI_E_IO, "libarbtable: %s", strerror(errno));
		goto out;
	}
	/* the host veth goes with the container's namespace; while it is
	 * still there (DEL runs before the main plugin's), remove our mark,
	 * but only from the device ADD marked, not from one that reused
	 * its ifindex
	 */
	err = s->host_ifindex > 0 ?
		acni_link_get(&n, NULL, s->host_ifindex, &l) : -ENODEV;
	if (!err && !strcmp(l.name, s->host_ifname)) {
		if (acni_filter_del(&n, s->host_ifindex, ACNI_INGRESS_PARENT,
				    s->prio, s->tenant, "matchall") < 0) {
			nl_error(e, &n, "removing the mark filter");
			goto out;
		}
		if (clsact_ours(&n, s) &&
		    acni_clsact_del(&n, s->host_ifindex) < 0) {
			nl_error(e, &n, "removing the clsact qdisc");
			goto out;
		}
	} else if (err && err != -ENODEV) {
		nl_error(e, &n, "host veth");
		goto out;
	}
	/* a member of the shared class has no class or fw filter of its
	 * own: acni_release collects the class once no record names it
	 */
	err = s->best_effort ? -ENODEV : acni_link_get(&n, s->device, 0, &l);
	if (!err) {
		if (acni_filter_del(&n, l.ifindex, s->parent, s->prio, s->mark,
				    "fw") < 0) {
			nl_error(e, &n, "removing the fw filter");
			goto out;
		}
		err = arbtable_release(h, s->device, s->classid);
		/* gone already: with its class, its root, or its device */
		if (err < 0 && err != -ENOENT && err != -EMEDIUMTYPE &&
		    err != -ENODEV) {
			lib_error(e, ACNI_E_NETLINK, h, "releasing the class");
			goto out;
		}
	} else if (err != -ENODEV) {
		nl_error(e, &n, "egress device");
		goto out;
	}
	ret = 0;
out:
	if (h)
		arbtable_close(h);
	acni_nl_close(&n);
	return ret;
}

/* The shared class of @device once no record in @path's directory names
 * it (the stateDir is where the record was)
 */
static int be_collect_at(const char *path, const char *device,
			 struct acni_err *e)
{
	char dir[512];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return 0;
	*slash = '\0';
	return acni_be_collect(dir, device, e) < 0 ? -1 : 0;
}

int acni_release(const char *path, struct acni_err *e)
{
	struct acni_state s;
	int err, lock;

	err = acni_state_read(path, &s, e);
	if (err == 1) {
		lock = acni_lock(s.device, e);
		if (lock < 0)
			return -1;
		/* again under the lock: another DEL or GC may be done */
		err = acni_state_read(path, &s, e);
		if (err == 1) {
			err = teardown(&s, e);
			if (!err)
				err = acni_state_remove(path, e);
			if (!err && s.best_effort)
				err = be_collect_at(path, s.device, e);
		}
		acni_unlock(lock);
	}
	/* no record: a write killed before its rename may have left the
	 * temporary file
	 */
	if (err == 0)
		return acni_state_remove(path, e) < 0 ? -1 : 0;
	if (err != ACNI_STATE_DAMAGED)
		return err < 0 ? -1 : 0;
	/* it does not say what to undo; a record is written durably, so
	 * only something outside the plugin damages one
	 */
	fprintf(stderr, "arbtable-cni: %s: removing it\n", e->msg);
	e->code = 0;
	e->msg[0] = '\0';
	return acni_state_remove(path, e);
}

struct undo {
	struct arbtable	*h;
	struct acni_nl	*n;
	const char	*dev;
	const char	*path;		/* the intent record, once written */
	const char	*state_dir;
	int		root;		/* ADD created the arbtable root */
	int		cls;
	int		fw;
	int		clsact;
	int		mark;
	int		be;		/* joined the shared class */
	struct acni_state *s;
	int		nic_ifindex;
};

/* "; step: why" onto @buf */
static void note(char *buf, size_t size, const char *step, const char *why)
{
	size_t n = strlen(buf);

	snprintf(buf + n, size - n, "%s%s: %s", n ? "; " : "", step, why);
}

/* Newest first, every step tried.  What fails is added to the error's
 * details (after the reason ADD failed) and keeps the intent record,
 * so that DEL or GC finish the job.
 */
static void undo(struct undo *u, struct acni_err *e)
{
	struct acni_state *s = u->s;
	struct acni_err re = { 0 };
	char why[700] = "";
	size_t n;
	int err;

	if (u->mark && acni_filter_del(u->n, s->host_ifindex,
				       ACNI_INGRESS_PARENT, s->prio,
				       s->tenant, "matchall") < 0)
		note(why, sizeof(why), "mark filter", u->n->msg);
	if (u->clsact && acni_clsact_del(u->n, s->host_ifindex) < 0)
		note(why, sizeof(why), "clsact qdisc", u->n->msg);
	if (u->fw && acni_filter_del(u->n, u->nic_ifindex, s->parent, s->prio,
				     s->mark, "fw") < 0)
		note(why, sizeof(why), "fw filter", u->n->msg);
	if (u->cls) {
		err = arbtable_release(u->h, u->dev, s->classid);
		if (err < 0 && err != -ENOENT && err != -ENODEV)
			note(why, sizeof(why), "class",
			     arbtable_errmsg(u->h));
	}
	/* a member's record goes before the shared class is collected:
	 * the class stays while a record names it
	 */
	if (!why[0] && u->path && acni_state_remove(u->path, &re) < 0)
		note(why, sizeof(why), "state", re.msg);
	if (u->be && !why[0] && acni_be_collect(u->state_dir, u->dev, &re) < 0)
		note(why, sizeof(why), "best-effort class", re.msg);
	if (u->root) {
		err = arbtable_qdisc_delete(u->h, u->dev);
		if (err < 0 && err != -EMEDIUMTYPE && err != -ENODEV)
			note(why, sizeof(why), "root qdisc",
			     arbtable_errmsg(u->h));
	}
	if (!why[0])
		return;
	n = strlen(e->details);
	snprintf(e->details + n, sizeof(e->details) - n,
		 "%sundoing the ADD failed (%s)%s%s%s", n ? "; " : "", why,
		 u->path ? ": " : "", u->path ? u->path : "",
		 u->path ? " stays for DEL or GC" : "");
}

/* Test hook (arbtable-cni(8), ENVIRONMENT): ARBTABLE_CNI_TEST_KILL=@step
 * makes the plugin SIGKILL itself there, as a runtime's timeout would.
 */
static void test_kill(const char *step)
{
	const char *v = getenv("ARBTABLE_CNI_TEST_KILL");

	if (v && !strcmp(v, step))
		raise(SIGKILL);
}

static void print_result(const struct acni_conf *c)
{
	/* a chained plugin returns what it was given, in the config's
	 * version
	 */
	json_object *r = acni_result(c->prev_result, c->cni_version);

	printf("%s\n", json_object_to_json_string_ext(r,
						       JSON_C_TO_STRING_PLAIN |
						       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(r);
}

/* ------------------------------------------------------------ root */

/* The real transmit queues of @dev: its sysfs queues/tx-N entries. */
static int tx_queues(const char *dev)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", dev);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((d = readdir(dir)))
		n += !strncmp(d->d_name, "tx-", 3);
	closedir(dir);
	return n ? n : -ENOENT;
}

/* qdisc.rootMode into @o, the new root's options: auto is lockless where
 * the device has more than one transmit queue; locked, the kernel's
 * default, is not sent (a module without the mode still takes it).
 */
static int root_lockless(const struct acni_conf *c,
			 struct arbtable_qdisc_opts *o, struct acni_err *e)
{
	int n;

	if (c->root_mode == ACNI_ROOT_LOCKED)
		return 0;
	if (c->root_mode == ACNI_ROOT_AUTO) {
		n = tx_queues(c->device);
		if (n < 0)
			return acni_error(e, ACNI_E_DEVICE,
					  "cannot count the transmit queues of %s (%s) for qdisc.rootMode auto: set it to locked or lockless",
					  c->device, strerror(-n));
		if (n < 2)
			return 0;
	}
	o->set |= ARBTABLE_Q_LOCKLESS;
	o->lockless = 1;
	return 0;
}

/* The device's arbtable root into @st and @qi, made first (with its
 * system class, classes.c) when the device has the kernel's default
 * root: *@made then says so, for the caller to delete it on a later
 * failure.  It must be a root in auto mode.
 */
static int root_read(const struct acni_conf *c, struct arbtable *h,
		     struct arbtable_state *st,
		     struct arbtable_qdisc_info *qi, int *made,
		     struct acni_err *e)
{
	struct arbtable_qdisc_opts qo;
	char what[128];
	int err;

	*made = 0;
	err = arbtable_read(h, c->device, st);
	if (err == -EMEDIUMTYPE) {
		struct arbtable_qdisc_opts co = c->qopts;

		if (root_lockless(c, &co, e) < 0)
			return -1;
		err = arbtable_qdisc_create(h, c->device, c->handle,
					    &co, sizeof(co));
		if (err < 0) {
			snprintf(what, sizeof(what),
				 "no arbtable root on %s and creating one failed",
				 c->device);
			return lib_error(e, ACNI_E_DEVICE, h, what);
		}
		*made = 1;
		if (acni_system_create(c, h, e) < 0)
			return -1;
		err = arbtable_read(h, c->device, st);
	}
	if (err == -ENODEV)
		return acni_error(e, ACNI_E_DEVICE, "device %s: %s", c->device,
				  arbtable_errmsg(h));
	if (err < 0)
		return lib_error(e, ACNI_E_NETLINK, h,
				 "reading the arbtable root");
	/* records of this build's size: the library fills what it knows */
	if (arbtable_state_qdisc(st, qi, sizeof(*qi)) < 0 ||
	    arbtable_state_qdisc_opts(st, &qo, sizeof(qo)) < 0)
		return acni_error(e, ACNI_E_NETLINK,
				  "libarbtable: cannot copy the qdisc's state");
	if (qi->parent != TC_H_ROOT || !(qo.set & ARBTABLE_Q_MODE) ||
	    qo.mode != ARBTABLE_MODE_AUTO)
		return acni_error(e, ACNI_E_DEVICE,
				  "the arbtable qdisc on %s is not a root in auto mode: arbtable-cni admits tenants through the allocator only",
				  c->device);
	return 0;
}

int acni_cmd_root(struct acni_conf *c, const struct acni_env *env,
		  struct acni_err *e)
{
	struct arbtable_state *st = NULL;
	struct arbtable_qdisc_info qi;
	struct arbtable *h;
	int err, lock, made = 0, ret = -1;

	(void)env;
	lock = acni_lock(c->device, e);
	if (lock < 0)
		return -1;
	h = arbtable_open();
	st = arbtable_state_new();
	if (!h || !st) {
		acni_error(e, ACNI_E_IO, "libarbtable: %s", strerror(errno));
		goto out;
	}
	ret = root_read(c, h, st, &qi, &made, e);
	if (ret < 0 && made) {
		err = arbtable_qdisc_delete(h, c->device);
		if (err < 0 && err != -EMEDIUMTYPE && err != -ENODEV) {
			size_t n = strlen(e->details);

			snprintf(e->details + n, sizeof(e->details) - n,
				 "%sremoving the root it made failed: %s",
				 n ? "; " : "", arbtable_errmsg(h));
		}
	}
out:
	arbtable_state_free(st);
	if (h)
		arbtable_close(h);
	acni_unlock(lock);
	return ret;
}

/* ------------------------------------------------------------ ADD */

int acni_cmd_add(struct acni_conf *c, const struct acni_env *env,
		 struct acni_err *e)
{
	struct arbtable_state *st = NULL;
	struct arbtable_qdisc_info qi;
	struct arbtable_class_info cl;
	struct acni_state s = { 0 }, old;
	struct undo u = { .s = &s, .dev = c->device,
			  .state_dir = c->state_dir };
	struct arbtable *h = NULL;
	struct acni_link hl;
	struct acni_nl n = { 0 };
	char path[512], what[512], kind[16];
	int err, hook, lock, ret = -1;

	if (acni_state_path(path, sizeof(path), c->state_dir, env, e) < 0 ||
	    acni_state_mkdir(c->state_dir, e) < 0)
		return -1;
	/* an ADD killed before it finished left its intent: undo it (a
	 * damaged record is only removed)
	 */
	err = acni_state_read(path, &old, e);
	if ((err == 1 && !old.complete) || err == ACNI_STATE_DAMAGED) {
		fprintf(stderr, "arbtable-cni: %s: %s\n", path,
			err == 1 ? "undoing what an unfinished ADD left" :
			"removing a damaged record");
		if (acni_release(path, e) < 0)
			return -1;
	}
	lock = acni_lock(c->device, e);
	if (lock < 0)
		return -1;
	err = acni_state_read(path, &old, e);
	if (err < 0)
		goto out_unlock;
	if (err > 0) {
		acni_error(e, ACNI_E_EXISTS,
			   "container %s interface %s has class %x:%x on %s already (DEL it first)",
			   env->containerid, env->ifname,
			   ARBTABLE_MAJOR(old.classid),
			   ARBTABLE_MINOR(old.classid), old.device);
		goto out_unlock;
	}
	if (acni_nl_open(&n, NULL) < 0) {
		acni_error(e, ACNI_E_IO, "%s", n.msg);
		goto out_unlock;
	}
	u.n = &n;
	err = host_veth(env, &n, &hl, kind, e);
	if (err < 0)
		goto out;
	if (err > 0) {
		char kt[40];

		if (!c->req.best_effort) {
			acni_error(e, ACNI_E_VETH,
				   "container %s asked for %s, but %s in %s is %s, not a veth: arbtable-cni marks a tenant on the host side of its veth and cannot classify %s%s (a container that asks for nothing passes there, unclassified)",
				   env->containerid, c->req.text, env->ifname,
				   env->netns, kind_text(kind, kt, sizeof(kt)),
				   kind[0] ? kind : "a device without a kind",
				   kind[0] ? " interfaces" : "");
			goto out;
		}
		/* nothing to make and nothing to record: its traffic
		 * takes the root's default class; CHECK and DEL know it
		 * by the interface and the missing record
		 */
		fprintf(stderr, "arbtable-cni: container %s: %s in %s is %s, not a veth: passed unclassified (it asked for nothing)\n",
			env->containerid, env->ifname, env->netns,
			kind_text(kind, kt, sizeof(kt)));
		print_result(c);
		ret = 0;
		goto out;
	}
	h = arbtable_open();
	if (!h) {
		acni_error(e, ACNI_E_IO, "libarbtable: %s", strerror(errno));
		goto out;
	}
	u.h = h;
	st = arbtable_state_new();
	if (!st) {
		acni_error(e, ACNI_E_IO, "libarbtable: %s", strerror(errno));
		goto out;
	}

	if (root_read(c, h, st, &qi, &u.root, e) < 0)
		goto out;
	u.nic_ifindex = qi.ifindex;

	snprintf(s.device, sizeof(s.device), "%s", c->device);
	snprintf(s.host_ifname, sizeof(s.host_ifname), "%s", hl.name);
	s.host_ifindex = hl.ifindex;
	/* a veth without an ingress hook gets a clsact from us: the intent
	 * record says so before it exists, so that DEL or GC after a kill
	 * removes it (clsact_ours)
	 */
	if (acni_ingress_hook(&n, s.host_ifindex, &hook, NULL) < 0) {
		nl_error(e, &n, "the host veth's ingress hook");
		goto out;
	}
	if (hook == ACNI_HOOK_NONE)
		s.created_clsact = ACNI_CLSACT_INTENT;
	if (c->req.best_effort) {
		/* the shared class: made with its first member, its mark
		 * set on this container's veth like any tenant's
		 */
		u.be = 1;
		if (acni_be_join(c, h, &n, st, &qi, &s, e) < 0)
			goto out;
		/* the member's intent, before its mark */
		if (acni_state_write(path, &s, e) < 0)
			goto out;
		u.path = path;
		goto mark;
	}
	if (acni_pick_tenant(c, env->containerid, env->ifname, st, &qi, &n,
			     &s.tenant, e) < 0)
		goto out;
	s.classid = qi.handle | (c->minor_base + s.tenant);
	s.mark = s.tenant << c->mark_shift;
	s.mark_mask = c->mark_mask;
	s.prio = c->prio;
	s.parent = qi.handle;
	s.req = c->req.opts;
	/* the intent, before the kernel has any of it */
	if (acni_state_write(path, &s, e) < 0)
		goto out;
	u.path = path;

	if (arbtable_admit(h, c->device, s.classid, &c->req.opts,
			   sizeof(c->req.opts)) < 0) {
		snprintf(what, sizeof(what),
			 "container %s (%s, from %s) refused on %s",
			 env->containerid, c->req.text, c->req.source,
			 c->device);
		lib_error(e, arbtable_err_from_kernel(h) ? ACNI_E_REFUSED :
			  ACNI_E_NETLINK, h, what);
		goto out;
	}
	u.cls = 1;
	test_kill("admit");
	/* what the kernel admitted, for CHECK to compare with later */
	if (arbtable_read(h, c->device, st) < 0) {
		lib_error(e, ACNI_E_NETLINK, h, "reading the admitted class");
		goto out;
	}
	err = arbtable_state_find_class(st, s.classid);
	if (err < 0 || arbtable_state_class(st, err, &cl, sizeof(cl)) < 0) {
		acni_error(e, ACNI_E_NETLINK,
			   "class %x:%x vanished right after its admission",
			   ARBTABLE_MAJOR(s.classid), ARBTABLE_MINOR(s.classid));
		goto out;
	}
	s.distance = cl.distance;
	s.reserved_rate = cl.reserved_rate;
	s.guaranteed_rate = cl.guaranteed_rate;
	s.guaranteed_bound_ns = cl.guaranteed_bound_ns;

	if (acni_fw_add(&n, qi.ifindex, qi.handle, s.prio, s.mark,
			s.mark_mask, s.classid) < 0) {
		nl_error(e, &n, "fw filter on the egress device");
		goto out;
	}
	u.fw = 1;
mark:
	if (acni_clsact_add(&n, s.host_ifindex, &u.clsact) < 0) {
		nl_error(e, &n, "clsact qdisc on the host veth");
		goto out;
	}
	/* for the record that says "added"; until then the intent holds */
	s.created_clsact = u.clsact;
	test_kill("clsact");
	if (acni_mark_add(&n, s.host_ifindex, s.prio, s.tenant, s.mark,
			  s.mark_mask) < 0) {
		nl_error(e, &n, "mark filter on the host veth");
		goto out;
	}
	u.mark = 1;
	test_kill("mark");
	s.complete = 1;
	if (acni_state_write(path, &s, e) < 0)
		goto out;
	print_result(c);
	ret = 0;
out:
	if (ret < 0)
		undo(&u, e);
	if (h)
		arbtable_close(h);
	arbtable_state_free(st);
	acni_nl_close(&n);
out_unlock:
	acni_unlock(lock);
	return ret;
}

/* ------------------------------------------------------------ DEL */

int acni_cmd_del(struct acni_conf *c, const struct acni_env *env,
		 struct acni_err *e)
{
	char path[512];

	if (acni_state_path(path, sizeof(path), c->state_dir, env, e) < 0)
		return -1;
	if (acni_release(path, e) < 0)
		return -1;
	/* a shared class an earlier DEL could not remove goes now */
	if (c->device[0] && acni_safe_name(c->device)) {
		struct acni_err ignored = { 0 };
		int lock = acni_lock(c->device, &ignored);

		if (lock >= 0) {
			acni_be_collect(c->state_dir, c->device, &ignored);
			acni_unlock(lock);
		}
	}
	return 0;
}

/* ------------------------------------------------------------ CHECK */

static int check_class(const struct acni_state *s,
		       const struct arbtable_class_info *cl,
		       const struct arbtable_class_opts *k,
		       const struct acni_env *env, struct acni_err *e)
{
	const struct arbtable_class_opts *r = &s->req;
	const char *bad = NULL;

	if ((r->set & ARBTABLE_C_RATE) &&
	    (!(k->set & ARBTABLE_C_RATE) || k->rate != r->rate))
		bad = "its rate changed";
	else if ((r->set & ARBTABLE_C_LATENCY) &&
		 (!(k->set & ARBTABLE_C_LATENCY) ||
		  k->latency_ns != r->latency_ns))
		bad = "its latency changed";
	else if ((r->set & ARBTABLE_C_SHARE) &&
		 (!(k->set & ARBTABLE_C_SHARE) || k->share != r->share))
		bad = "its share changed";
	else if ((r->set & ARBTABLE_C_CEIL) &&
		 (!(k->set & ARBTABLE_C_CEIL) || k->ceil != r->ceil))
		bad = "its ceil changed";
	else if (cl->distance != s->distance)
		bad = "its slot distance changed";
	else if ((r->set & ARBTABLE_C_RATE) && cl->guaranteed_rate < r->rate)
		bad = "its guaranteed rate is below the rate admitted";
	else if ((r->set & ARBTABLE_C_LATENCY) &&
		 cl->guaranteed_bound_ns > r->latency_ns)
		bad = "its guaranteed bound is above the latency admitted";
	if (!bad)
		return 0;
	return acni_error(e, ACNI_E_CHECK,
			  "container %s: class %x:%x on %s is not as admitted: %s",
			  env->containerid, ARBTABLE_MAJOR(s->classid),
			  ARBTABLE_MINOR(s->classid), s->device, bad);
}

/* No record: right for a container ADD passed unclassified, whose
 * interface is still not a veth (host_veth)
 */
static int check_unclassified(const struct acni_env *env,
			      struct acni_err *e)
{
	struct acni_link hl;
	struct acni_nl n;
	char kind[16];
	int err;

	if (env->netns && *env->netns) {
		if (acni_nl_open(&n, NULL) < 0)
			return acni_error(e, ACNI_E_IO, "%s", n.msg);
		err = host_veth(env, &n, &hl, kind, e);
		acni_nl_close(&n);
		if (err > 0)
			return 0;
		if (err < 0 && e->code != ACNI_E_VETH)
			return -1;
		e->code = 0;
		e->msg[0] = '\0';
		e->details[0] = '\0';
	}
	return acni_error(e, ACNI_E_UNKNOWN,
			  "container %s interface %s has no arbtable tenant (no ADD, or DEL ran)",
			  env->containerid, env->ifname);
}

int acni_cmd_check(struct acni_conf *c, const struct acni_env *env,
		   struct acni_err *e)
{
	struct arbtable_state *st = NULL;
	struct arbtable_qdisc_info qi;
	struct arbtable_class_info cl;
	struct arbtable_class_opts ko;
	struct acni_filter f;
	struct acni_state s;
	struct acni_link hl;
	struct acni_nl n;
	struct arbtable *h;
	char path[512];
	int err, lock, ret = -1;

	if (!c->prev_result)
		return acni_error(e, ACNI_E_CONFIG,
				  "CHECK without prevResult: a chained plugin checks what the chain returned");
	if (acni_state_path(path, sizeof(path), c->state_dir, env, e) < 0)
		return -1;
	err = acni_state_read(path, &s, e);
	if (err < 0)
		return -1;
	if (!err)
		return check_unclassified(env, e);
	if (!s.complete)
		return acni_error(e, ACNI_E_CHECK,
				  "container %s interface %s: its ADD did not finish (DEL or GC undoes it)",
				  env->containerid, env->ifname);
	/* a consistent view of the table while reading it */
	lock = acni_lock(s.device, e);
	if (lock < 0)
		return -1;
	if (acni_nl_open(&n, NULL) < 0) {
		acni_unlock(lock);
		return acni_error(e, ACNI_E_IO, "%s", n.msg);
	}
	h = arbtable_open();
	if (!h) {
		acni_nl_close(&n);
		acni_unlock(lock);
		return acni_error(e, ACNI_E_IO, "libarbtable: %s",
				  strerror(errno));
	}
	st = arbtable_state_new();
	if (!st) {
		acni_error(e, ACNI_E_IO, "libarbtable: %s", strerror(errno));
		goto out;
	}
	if (arbtable_read(h, s.device, st) < 0) {
		lib_error(e, ACNI_E_CHECK, h, "the arbtable root");
		goto out;
	}
	/* records of this build's size: the library fills what it knows */
	err = arbtable_state_find_class(st, s.classid);
	if (err < 0 || arbtable_state_qdisc(st, &qi, sizeof(qi)) < 0 ||
	    arbtable_state_class(st, err, &cl, sizeof(cl)) < 0 ||
	    arbtable_state_class_opts(st, err, &ko, sizeof(ko)) < 0 ||
	    qi.handle != s.parent) {
		acni_error(e, ACNI_E_CHECK,
			   "container %s: class %x:%x is gone from %s",
			   env->containerid, ARBTABLE_MAJOR(s.classid),
			   ARBTABLE_MINOR(s.classid), s.device);
		goto out;
	}
	if (check_class(&s, &cl, &ko, env, e) < 0)
		goto out;
	err = acni_filter_get(&n, qi.ifindex, s.parent, s.prio, s.mark, &f);
	if (err < 0) {
		nl_error(e, &n, "reading the fw filters");
		goto out;
	}
	if (!err || strcmp(f.kind, "fw") || f.classid != s.classid ||
	    f.mask != s.mark_mask) {
		acni_error(e, ACNI_E_CHECK,
			   "container %s: the fw filter prio %u handle 0x%x/0x%x -> %x:%x is %s on %s",
			   env->containerid, s.prio, s.mark, s.mark_mask,
			   ARBTABLE_MAJOR(s.classid), ARBTABLE_MINOR(s.classid),
			   err ? "changed" : "gone", s.device);
		goto out;
	}
	/* the container's veth must still be the one we mark */
	if (env->netns && *env->netns) {
		char kind[16], kt[40];

		err = host_veth(env, &n, &hl, kind, e);
		if (err < 0)
			goto out;
		if (err > 0) {
			acni_error(e, ACNI_E_CHECK,
				   "container %s: %s is now %s, not the veth ADD marked (%s)",
				   env->containerid, env->ifname,
				   kind_text(kind, kt, sizeof(kt)),
				   s.host_ifname);
			goto out;
		}
		if (hl.ifindex != s.host_ifindex) {
			acni_error(e, ACNI_E_CHECK,
				   "container %s: %s's peer is now %s, not %s which ADD marked",
				   env->containerid, env->ifname, hl.name,
				   s.host_ifname);
			goto out;
		}
	}
	err = acni_filter_get(&n, s.host_ifindex, ACNI_INGRESS_PARENT, s.prio,
			      s.tenant, &f);
	if (err < 0) {
		nl_error(e, &n, "reading the host veth's filters");
		goto out;
	}
	if (!err || strcmp(f.kind, "matchall") || !f.has_mark ||
	    f.mark != s.mark || f.mark_mask != s.mark_mask) {
		acni_error(e, ACNI_E_CHECK,
			   "container %s: the mark filter (mark 0x%x/0x%x) on %s is %s",
			   env->containerid, s.mark, s.mark_mask,
			   s.host_ifname, err ? "changed" : "gone");
		goto out;
	}
	ret = 0;
out:
	arbtable_close(h);
	arbtable_state_free(st);
	acni_nl_close(&n);
	acni_unlock(lock);
	return ret;
}
