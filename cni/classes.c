// SPDX-License-Identifier: GPL-2.0
/*
 * classes.c - the two classes arbtable-cni shares rather than gives to
 * one container.
 *
 * The system class.  The node's own traffic (kubelet, the API server,
 * SSH, image pulls) carries no tenant mark: without a default class the
 * root sends it to the qdisc's internal best-effort queue, which is
 * served only when no class is eligible, so tenants that fill the link
 * starve it.  A root the plugin creates therefore gets a system class
 * as its `default`, with a floor: a reserved rate in the HIGH table (by
 * default 1% of the qdisc's rate at distance 64, one slot) or a LOW
 * share.  Its minor lies outside the tenant minors, so what the node
 * advertises to a scheduler (the free slots and units plus what tenant
 * classes hold) never includes it.
 *
 * The shared best-effort class.  A container that asks for nothing
 * (no rate, share, ceil or distance anywhere) joins one class per
 * device instead of taking one of the qdisc's 64: it is marked like a
 * tenant (its own mark filter on its veth, the shared class's mark), so
 * its traffic stays apart from the host's.  The class is described by
 * <stateDir>/.besteffort-<device>.json, written before the class is made;
 * its members are the containers' state files that say "bestEffort".
 * Membership is thus read from the state files under the plugin's lock,
 * never counted: a plugin killed anywhere leaves either a member file
 * (the class is needed) or none (the next DEL or GC removes the class).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arbtable_parse.h"
#include "arbtable_request.h"
#include "cni.h"
#include "tcnl.h"

#define ACNI_SYS_MINOR_DEF	0xffu
#define ACNI_SYS_PERMILLE_DEF	10u	/* 1% */

/* A failed request: what was refused in msg, and the kernel's reason in
 * details when it came from the kernel (libcni prints the two joined),
 * else in msg after a colon (cmd.c's refusal(), the same rule).
 */
__attribute__((format(printf, 5, 6)))
static int fail(struct acni_err *e, int code, int from_kernel,
		const char *why, const char *fmt, ...)
{
	char what[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (from_kernel) {
		acni_error(e, code, "%s", what);
		acni_details(e, why);
	} else {
		acni_error(e, code, "%s: %s", what, why);
	}
	return -1;
}

/* ------------------------------------------------------------ config */

/* "2.5%" -> 25 (per mille); -1 when @s is not a percentage in 0.1..100 */
static int parse_permille(const char *s, uint32_t *out)
{
	uint32_t whole = 0, tenth = 0, digits = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		whole = whole * 10 + (*p - '0');
		if (whole > 100)
			return -1;
	}
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -1;
		tenth = *p++ - '0';
		digits++;
	}
	if (!digits || strcmp(p, "%"))
		return -1;
	*out = whole * 10 + tenth;
	return *out && *out <= 1000 ? 0 : -1;
}

int acni_system_parse(struct acni_conf *c, json_object *jv, struct acni_err *e)
{
	struct acni_system *y = &c->system;
	struct arbtable_class_opts *o = &y->opts, v;
	const char *why;
	char buf[64];

	if (!json_object_is_type(jv, json_type_object))
		return acni_error(e, ACNI_E_CONFIG,
				  "systemClass must be an object (\"systemClass\": {\"rate\": \"1%%\"})");
	memset(o, 0, sizeof(*o));
	y->rate_permille = 0;
	json_object_object_foreach(jv, key, val) {
		if (acni_value_text(val, buf, sizeof(buf)) < 0 || !buf[0])
			return acni_error(e, ACNI_E_CONFIG,
					  "systemClass: %s must be a string or a non-negative integer",
					  key);
		if (!strcmp(key, "rate")) {
			if (parse_permille(buf, &y->rate_permille) < 0 &&
			    arbt_parse_rate(buf, &o->rate) < 0)
				return acni_error(e, ACNI_E_CONFIG,
						  "systemClass: bad rate \"%s\" (a tc rate such as 100mbit, or a percentage of the qdisc's rate, 0.1%%..100%%)",
						  buf);
			o->set |= ARBTABLE_C_RATE;
		} else if (!strcmp(key, "latency")) {
			if (arbt_parse_time(buf, &o->latency_ns) < 0)
				return acni_error(e, ACNI_E_CONFIG,
						  "systemClass: bad latency \"%s\" (a tc time such as 2ms)",
						  buf);
			o->set |= ARBTABLE_C_LATENCY;
		} else if (!strcmp(key, "distance")) {
			if (arbt_parse_u32(buf, 10, &o->distance) < 0)
				return acni_error(e, ACNI_E_CONFIG,
						  "systemClass: bad distance \"%s\" (a power of two 1..64)",
						  buf);
			o->set |= ARBTABLE_C_DISTANCE;
		} else if (!strcmp(key, "share")) {
			if (arbt_parse_u32(buf, 10, &o->share) < 0)
				return acni_error(e, ACNI_E_CONFIG,
						  "systemClass: bad share \"%s\" (1..255)",
						  buf);
			o->set |= ARBTABLE_C_SHARE;
		} else if (!strcmp(key, "ceil")) {
			if (arbt_parse_rate(buf, &o->ceil) < 0 || !o->ceil)
				return acni_error(e, ACNI_E_CONFIG,
						  "systemClass: bad ceil \"%s\" (a tc rate such as 1gbit, above 0)",
						  buf);
			o->set |= ARBTABLE_C_CEIL;
		} else if (!strcmp(key, "minor")) {
			if (((!strncmp(buf, "0x", 2) || !strncmp(buf, "0X", 2)) ?
			     arbt_parse_u32(buf + 2, 16, &y->minor) :
			     arbt_parse_u32(buf, 10, &y->minor)) < 0 ||
			    !y->minor || y->minor > 0xffff)
				return acni_error(e, ACNI_E_CONFIG,
						  "systemClass: bad minor \"%s\" (1..0xffff, e.g. \"0xff\")",
						  buf);
			y->minor_set = 1;
		} else {
			return acni_error(e, ACNI_E_FIELD,
					  "systemClass: unknown key \"%s\" (known: rate, latency, distance, share, ceil, minor)",
					  key);
		}
	}
	/* a percentage becomes a rate (at least 1 byte/s) once the root's
	 * rate is known (acni_system_create())
	 */
	v = *o;
	if (y->rate_permille)
		v.rate = 1;
	/* the host's traffic needs a floor: a rate or a share */
	why = acni_request_check(&v, ARBT_RQ_NEED_RESV);
	if (why)
		return acni_error(e, ACNI_E_CONFIG, "systemClass: %s", why);
	return 0;
}

static void system_text(struct acni_system *y)
{
	const struct arbtable_class_opts *o = &y->opts;
	size_t n;

	if (o->set & ARBTABLE_C_SHARE)
		n = snprintf(y->text, sizeof(y->text), "share %u", o->share);
	else if (y->rate_permille)
		n = snprintf(y->text, sizeof(y->text), "rate %u.%u%%",
			     y->rate_permille / 10, y->rate_permille % 10);
	else
		n = snprintf(y->text, sizeof(y->text), "rate %" PRIu64 "bps",
			     o->rate);
	if (n < sizeof(y->text) && (o->set & ARBTABLE_C_LATENCY))
		n += snprintf(y->text + n, sizeof(y->text) - n,
			      " latency %" PRIu64 "ns", o->latency_ns);
	if (n < sizeof(y->text) && (o->set & ARBTABLE_C_DISTANCE))
		snprintf(y->text + n, sizeof(y->text) - n, " distance %u",
			 o->distance);
}

/* After the whole config is read: the default, a minor apart from the
 * tenants', and the root's `default` pointing at it.
 */
int acni_system_check(struct acni_conf *c, struct acni_err *e)
{
	struct acni_system *y = &c->system;
	uint32_t lo = c->minor_base + 1, hi = c->minor_base + c->span;

	if (!y->opts.set) {
		y->rate_permille = ACNI_SYS_PERMILLE_DEF;
		y->opts.set = ARBTABLE_C_RATE;
	}
	/* a rate without a latency: one slot, the fewest the table gives */
	if ((y->opts.set & ARBTABLE_C_RATE) &&
	    !(y->opts.set & (ARBTABLE_C_LATENCY | ARBTABLE_C_DISTANCE))) {
		y->opts.distance = ARBTABLE_SLOTS;
		y->opts.set |= ARBTABLE_C_DISTANCE;
	}
	if (!y->minor_set) {
		y->minor = ACNI_SYS_MINOR_DEF;
		/* minorBase itself is never a tenant's */
		if (y->minor >= lo && y->minor <= hi)
			y->minor = c->minor_base;
	}
	if (y->minor >= lo && y->minor <= hi)
		return acni_error(e, ACNI_E_CONFIG,
				  "systemClass: minor 0x%x is among the tenant minors 0x%x..0x%x (minorBase + 1 .. minorBase + the values markMask holds)",
				  y->minor, lo, hi);
	c->qopts.default_minor = y->minor;
	c->qopts.set |= ARBTABLE_Q_DEFAULT;
	system_text(y);
	return 0;
}

/* ------------------------------------------------------------ system */

/* The rate the qdisc divides: its own, or the capacity it reports (the
 * link speed it read when it was made), as arbtablectl capacity takes it
 */
static int qdisc_rate(const char *dev, struct arbtable *h, uint64_t *rate)
{
	struct arbtable_state *st = arbtable_state_new();
	struct arbtable_qdisc_opts qo;
	struct arbtable_qdisc_info qi;
	int err;

	if (!st)
		return -ENOMEM;
	err = arbtable_read(h, dev, st);
	if (!err && (arbtable_state_qdisc_opts(st, &qo, sizeof(qo)) < 0 ||
		     arbtable_state_qdisc(st, &qi, sizeof(qi)) < 0))
		err = -EINVAL;
	arbtable_state_free(st);
	if (err)
		return err;
	*rate = qo.rate;
	if (!*rate && (qi.xstats_fields & ARBTABLE_QX_CAPACITY))
		*rate = qi.capacity;
	return *rate ? 0 : -ENODATA;
}

int acni_system_create(const struct acni_conf *c, struct arbtable *h,
		       struct acni_err *e)
{
	const struct acni_system *y = &c->system;
	struct arbtable_class_opts o = y->opts;
	uint32_t classid = c->handle | y->minor;
	uint64_t rate;
	int err;

	if (y->rate_permille) {
		err = qdisc_rate(c->device, h, &rate);
		if (err == -ENODATA)
			return acni_error(e, ACNI_E_DEVICE,
					  "system class (%s) on %s: the link speed is unknown: give the qdisc a rate, or the system class a rate in bit/s",
					  y->text, c->device);
		if (err)
			return fail(e, ACNI_E_NETLINK,
				    arbtable_err_from_kernel(h),
				    arbtable_errmsg(h),
				    "system class (%s) on %s: reading the qdisc's rate",
				    y->text, c->device);
		o.rate = rate * y->rate_permille / 1000;
		if (!o.rate)
			o.rate = 1;
	}
	if (arbtable_admit(h, c->device, classid, &o, sizeof(o)) < 0)
		return fail(e, arbtable_err_from_kernel(h) ? ACNI_E_REFUSED :
			    ACNI_E_NETLINK, arbtable_err_from_kernel(h),
			    arbtable_errmsg(h),
			    "system class %x:%x (%s, systemClass) refused on %s",
			    ARBTABLE_MAJOR(classid), ARBTABLE_MINOR(classid),
			    y->text, c->device);
	return 0;
}

/* ------------------------------------------------------------ best effort */

int acni_be_path(char *buf, size_t size, const char *dir, const char *device,
		 struct acni_err *e)
{
	if (!acni_safe_name(device))
		return acni_error(e, ACNI_E_CONFIG,
				  "device \"%s\": the shared best-effort class needs a device name of letters, digits, '_', '.', '-'",
				  device);
	if ((size_t)snprintf(buf, size, "%s/.besteffort-%s.json", dir,
			     device) >= size)
		return acni_error(e, ACNI_E_CONFIG, "stateDir too long");
	return 0;
}

struct be_key {
	const char	*device;
	uint32_t	classid;
};

static int be_member(const struct acni_state *s, const void *arg)
{
	const struct be_key *k = arg;

	return s->best_effort && s->classid == k->classid &&
	       !strcmp(s->device, k->device);
}

int acni_be_members(const char *dir, const char *device, uint32_t classid)
{
	struct be_key k = { .device = device, .classid = classid };

	/* the dot files are descriptions, not members */
	return acni_state_find(dir, 0, be_member, &k);
}

/* The class of @b as the kernel has it now, into @b's distance and
 * guarantees.
 */
static int be_class_info(struct arbtable *h, struct arbtable_state *st,
			 struct acni_state *b, struct acni_err *e)
{
	struct arbtable_class_info cl;
	int i;

	if (arbtable_read(h, b->device, st) < 0)
		return fail(e, ACNI_E_NETLINK, arbtable_err_from_kernel(h),
			    arbtable_errmsg(h), "reading the best-effort class");
	i = arbtable_state_find_class(st, b->classid);
	if (i < 0 || arbtable_state_class(st, i, &cl, sizeof(cl)) < 0)
		return acni_error(e, ACNI_E_NETLINK,
				  "the best-effort class %x:%x vanished right after its admission",
				  ARBTABLE_MAJOR(b->classid),
				  ARBTABLE_MINOR(b->classid));
	b->distance = cl.distance;
	b->reserved_rate = cl.reserved_rate;
	b->guaranteed_rate = cl.guaranteed_rate;
	b->guaranteed_bound_ns = cl.guaranteed_bound_ns;
	return 0;
}

int acni_be_join(const struct acni_conf *c, struct arbtable *h,
		 struct acni_nl *n, struct arbtable_state *st,
		 const struct arbtable_qdisc_info *qi, struct acni_state *s,
		 struct acni_err *e)
{
	struct acni_filter f;
	struct acni_state b;
	char path[512];
	int err;

	if (acni_be_path(path, sizeof(path), c->state_dir, c->device, e) < 0)
		return -1;
	err = acni_state_read(path, &b, e);
	/* a file from another root (deleted and made again) or another
	 * config, or a damaged one, describes no class of this root: a new
	 * one is made (a class the damaged file named keeps its minor
	 * until its root goes)
	 */
	if (err != 1 || b.parent != qi->handle || b.prio != c->prio ||
	    b.mark_mask != c->mark_mask || strcmp(b.device, c->device)) {
		memset(&b, 0, sizeof(b));
		if (acni_pick_tenant(c, ".besteffort", c->device, st, qi, n,
				     &b.tenant, e) < 0)
			return -1;
		snprintf(b.device, sizeof(b.device), "%s", c->device);
		b.classid = qi->handle | (c->minor_base + b.tenant);
		b.mark = b.tenant << c->mark_shift;
		b.mark_mask = c->mark_mask;
		b.prio = c->prio;
		b.parent = qi->handle;
		b.req.set = ARBTABLE_C_SHARE;
		b.req.share = c->default_share;
		/* before the kernel has it: a crash leaves a file that the
		 * next member reuses or the next DEL or GC removes
		 */
		if (acni_state_write(path, &b, e) < 0)
			return -1;
	}
	if (arbtable_state_find_class(st, b.classid) < 0 &&
	    arbtable_admit(h, c->device, b.classid, &b.req,
			   sizeof(b.req)) < 0)
		return fail(e, arbtable_err_from_kernel(h) ? ACNI_E_REFUSED :
			    ACNI_E_NETLINK, arbtable_err_from_kernel(h),
			    arbtable_errmsg(h),
			    "the shared best-effort class %x:%x (share %u) refused on %s",
			    ARBTABLE_MAJOR(b.classid),
			    ARBTABLE_MINOR(b.classid), b.req.share, c->device);
	err = acni_filter_get(n, qi->ifindex, b.parent, b.prio, b.mark, &f);
	if (err < 0)
		return fail(e, ACNI_E_NETLINK, n->kernel, n->msg,
			    "reading the fw filters");
	if (err && (strcmp(f.kind, "fw") || f.classid != b.classid ||
		    f.mask != b.mark_mask))
		return acni_error(e, ACNI_E_DEVICE,
				  "the filter prio %u handle 0x%x on %s is not the best-effort class's fw filter (-> %x:%x): someone else's filter holds its mark",
				  b.prio, b.mark, c->device,
				  ARBTABLE_MAJOR(b.classid),
				  ARBTABLE_MINOR(b.classid));
	if (!err && acni_fw_add(n, qi->ifindex, b.parent, b.prio, b.mark,
				b.mark_mask, b.classid) < 0)
		return fail(e, ACNI_E_NETLINK, n->kernel, n->msg,
			    "fw filter of the best-effort class on the egress device");
	if (be_class_info(h, st, &b, e) < 0)
		return -1;
	s->classid = b.classid;
	s->tenant = b.tenant;
	s->mark = b.mark;
	s->mark_mask = b.mark_mask;
	s->prio = b.prio;
	s->parent = b.parent;
	s->req = b.req;
	s->distance = b.distance;
	s->reserved_rate = b.reserved_rate;
	s->guaranteed_rate = b.guaranteed_rate;
	s->guaranteed_bound_ns = b.guaranteed_bound_ns;
	s->best_effort = 1;
	return 0;
}

int acni_be_collect(const char *dir, const char *device, struct acni_err *e)
{
	struct arbtable *h = NULL;
	struct acni_state b;
	struct acni_link l;
	struct acni_nl n;
	char path[512];
	int err, ret = -1;

	if (acni_be_path(path, sizeof(path), dir, device, e) < 0)
		return -1;
	/* a damaged description names no class: DEL must not fail on it,
	 * and the next member's ADD writes a new one
	 */
	if (acni_state_read(path, &b, e) <= 0)
		return 0;
	if (acni_be_members(dir, device, b.classid))
		return 0;
	if (acni_nl_open(&n, NULL) < 0)
		return acni_error(e, ACNI_E_IO, "%s", n.msg);
	err = acni_link_get(&n, device, 0, &l);
	if (err == -ENODEV)
		goto gone;
	if (err < 0) {
		fail(e, ACNI_E_NETLINK, n.kernel, n.msg, "egress device %s",
		     device);
		goto out;
	}
	if (acni_filter_del(&n, l.ifindex, b.parent, b.prio, b.mark,
			    "fw") < 0) {
		fail(e, ACNI_E_NETLINK, n.kernel, n.msg,
		     "removing the best-effort class's fw filter");
		goto out;
	}
	h = arbtable_open();
	if (!h) {
		acni_error(e, ACNI_E_IO, "libarbtable: %s", strerror(errno));
		goto out;
	}
	err = arbtable_release(h, device, b.classid);
	/* gone already: with its class, its root, or its device */
	if (err < 0 && err != -ENOENT && err != -EMEDIUMTYPE &&
	    err != -ENODEV) {
		fail(e, ACNI_E_NETLINK, arbtable_err_from_kernel(h),
		     arbtable_errmsg(h), "releasing the best-effort class %x:%x",
		     ARBTABLE_MAJOR(b.classid), ARBTABLE_MINOR(b.classid));
		goto out;
	}
gone:
	if (unlink(path) < 0 && errno != ENOENT) {
		acni_error(e, ACNI_E_IO, "cannot remove %s: %s", path,
			   strerror(errno));
		goto out;
	}
	ret = 1;
out:
	if (h)
		arbtable_close(h);
	acni_nl_close(&n);
	return ret;
}
