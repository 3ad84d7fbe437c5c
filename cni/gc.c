// SPDX-License-Identifier: GPL-2.0
/*
 * gc.c - GC (CNI 1.1): the runtime names the attachments of this network
 * still in use (cni.dev/valid-attachments); every record of stateDir that
 * is none of them is released as DEL releases it, under its device's
 * lock: the mark filter (while the host veth is there), the fw filter,
 * the class, then the record.  Records an ADD left unfinished (the
 * plugin was killed) are released the same way; a damaged record and a
 * temporary file a killed write left are removed.
 *
 * What the plugin has no record of is not touched: on a NIC shared by
 * several networks, a class without a record here may be another
 * network's.  A failure does not stop the collection: the rest is still
 * released and the error names the first failure and how many failed.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cni.h"

/* @name (a file of stateDir) belongs to an attachment still valid */
static int is_valid(const struct acni_conf *c, const char *name)
{
	size_t i, n = json_object_array_length(c->valid);

	for (i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(c->valid, i), *v;
		const char *id, *ifname;
		size_t l;

		json_object_object_get_ex(o, "containerID", &v);
		id = json_object_get_string(v);
		json_object_object_get_ex(o, "ifname", &v);
		ifname = json_object_get_string(v);
		l = strlen(id);
		/* <id>-<ifname>.json, or its temporary .json.tmp */
		if (!strncmp(name, id, l) && name[l] == '-' &&
		    !strncmp(name + l + 1, ifname, strlen(ifname)) &&
		    (!strcmp(name + l + 1 + strlen(ifname), ".json") ||
		     !strcmp(name + l + 1 + strlen(ifname), ".json.tmp")))
			return 1;
	}
	return 0;
}

static int ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a > b && !strcmp(s + a - b, tail);
}

int acni_cmd_gc(struct acni_conf *c, const struct acni_env *env,
		struct acni_err *e)
{
	struct acni_err first = { 0 };
	unsigned int stale = 0, failed = 0;
	struct dirent *d;
	DIR *dp;

	(void)env;
	if (!c->valid)
		return acni_error(e, ACNI_E_CONFIG,
				  "GC without %s: the runtime names the attachments still in use",
				  ACNI_VALID_KEY);
	dp = opendir(c->state_dir);
	if (!dp) {
		if (errno == ENOENT)
			return 0;	/* no ADD ever ran with this stateDir */
		return acni_error(e, ACNI_E_IO, "cannot read %s: %s",
				  c->state_dir, strerror(errno));
	}
	/* unlinking the entry readdir returned last is safe on Linux */
	while ((d = readdir(dp))) {
		struct acni_err fe = { 0 };
		char path[600];

		if (d->d_name[0] == '.' ||
		    !(ends_with(d->d_name, ".json") ||
		      ends_with(d->d_name, ".json.tmp")) ||
		    is_valid(c, d->d_name))
			continue;
		stale++;
		snprintf(path, sizeof(path), "%s/%s", c->state_dir, d->d_name);
		if (ends_with(d->d_name, ".tmp")) {
			/* a write killed half-way: the record it was to
			 * replace, if any, is its .json
			 */
			if (unlink(path) < 0 && errno != ENOENT)
				acni_error(&fe, ACNI_E_IO,
					   "cannot remove %s: %s", path,
					   strerror(errno));
		} else {
			acni_release(path, &fe);
		}
		if (!fe.code)
			continue;
		fprintf(stderr, "arbtable-cni: GC: %s%s%s\n", fe.msg,
			fe.details[0] ? ": " : "", fe.details);
		if (!failed++)
			first = fe;
	}
	closedir(dp);
	if (!failed)
		return 0;
	acni_error(e, first.code,
		   "GC: %u of %u stale attachments not released, the first: %s",
		   failed, stale, first.msg);
	acni_details(e, first.details);
	return -1;
}
