// SPDX-License-Identifier: GPL-2.0
/*
 * state.c - what ADD admitted, one small JSON file per container and
 * interface, so that DEL finds the class and filters again (the class
 * minor is derived from the container id but probed past collisions, so
 * it cannot be recomputed), and the per-device lock.
 *
 * ADD records its intent (phase "adding": device, class, tenant, mark,
 * host veth) durably before it changes anything in the kernel, and the
 * outcome (phase "added") when it is done: a plugin killed in between
 * leaves a record that DEL or GC undoes, never a class nobody knows.
 * "Durably" is: write a temporary file, fsync it, rename it over the
 * record, fsync the directory; removing a record fsyncs the directory.
 *
 * Runtimes may run plugins for different containers at once, of one
 * network or of several sharing a NIC: every ADD, DEL, CHECK and GC
 * holds an exclusive flock on /run/arbtable-cni/<device>.lock while it
 * reads the device's table and changes it, so two ADDs never pick the
 * same class or mark whatever their stateDir.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "arbtable_parse.h"
#include "cni.h"

int acni_lock(const char *device, struct acni_err *e)
{
	char path[64];
	int fd;

	if (!*device || strchr(device, '/') || *device == '.')
		return acni_error(e, ACNI_E_CONFIG,
				  "device \"%s\" is not an interface name",
				  device);
	if (mkdir(ACNI_LOCK_DIR, 0700) < 0 && errno != EEXIST)
		return acni_error(e, ACNI_E_IO, "cannot create %s: %s",
				  ACNI_LOCK_DIR, strerror(errno));
	snprintf(path, sizeof(path), "%s/%s.lock", ACNI_LOCK_DIR, device);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return acni_error(e, ACNI_E_IO, "cannot open %s: %s", path,
				  strerror(errno));
	while (flock(fd, LOCK_EX) < 0) {
		if (errno != EINTR) {
			acni_error(e, ACNI_E_IO, "cannot lock %s: %s", path,
				   strerror(errno));
			close(fd);
			return -1;
		}
	}
	return fd;
}

int acni_state_mkdir(const char *dir, struct acni_err *e)
{
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return acni_error(e, ACNI_E_IO, "cannot create %s: %s", dir,
				  strerror(errno));
	return 0;
}

void acni_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* The spec allows letters, digits, '_', '.' and '-' in a container id; a
 * name made of them cannot leave the state directory.
 */
int acni_safe_name(const char *s)
{
	if (!*s || *s == '.')
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '.' ||
		      *s == '-'))
			return 0;
	return 1;
}

int acni_state_path(char *buf, size_t size, const char *dir,
		    const struct acni_env *env, struct acni_err *e)
{
	if (!acni_safe_name(env->containerid))
		return acni_error(e, ACNI_E_ENV,
				  "CNI_CONTAINERID \"%s\": want letters, digits, '_', '.', '-'",
				  env->containerid);
	if (!acni_safe_name(env->ifname))
		return acni_error(e, ACNI_E_ENV,
				  "CNI_IFNAME \"%s\" is not an interface name",
				  env->ifname);
	if ((size_t)snprintf(buf, size, "%s/%s-%s.json", dir,
			     env->containerid, env->ifname) >= size)
		return acni_error(e, ACNI_E_ENV,
				  "CNI_CONTAINERID too long for a state file name");
	return 0;
}

/*
 * The record's keys.  The class is kept as arbtablectl --json prints a
 * class (arbtablectl(8), JSON OUTPUT), reduced to what the plugin needs:
 *   "class": {"handle": "1:101", "rate": .., "latency": .., "distance": ..,
 *             "share": .., "ceil": ..,		(the options asked for)
 *             "stats": {"allocated_distance": .., "reserved_rate": ..,
 *                       "guaranteed_rate": .., "guaranteed_bound": ..}}
 * and the root as "parent": "1:", in the same units (bytes/s, ns).  The
 * plugin's own keys (phase, device, tenant, mark, markMask, prio,
 * hostIfname, hostIfindex, createdClsact, bestEffort) stay as they were.
 * Records of earlier versions, which a node upgraded with pods running
 * still holds, named the class otherwise; read_old() reads them:
 *   classid (a number)	-> class.handle
 *   parent (a number)	-> parent
 *   request.{set, rate, latencyNs, distance, share, ceil}
 *			-> class.{rate, latency, distance, share, ceil}
 *			   (present = set)
 *   distance, guaranteedRate, guaranteedBoundNs
 *			-> class.stats.{allocated_distance,
 *			   guaranteed_rate, guaranteed_bound}
 */
static const struct {
	const char	*key;
	uint32_t	bit;
} class_opts[] = {
	{ "rate", ARBTABLE_C_RATE },
	{ "latency", ARBTABLE_C_LATENCY },
	{ "distance", ARBTABLE_C_DISTANCE },
	{ "share", ARBTABLE_C_SHARE },
	{ "ceil", ARBTABLE_C_CEIL },
};

/* The option of @o behind one of class_opts[]' bits */
static uint64_t opt_get(const struct arbtable_class_opts *o, uint32_t bit)
{
	switch (bit) {
	case ARBTABLE_C_RATE:
		return o->rate;
	case ARBTABLE_C_LATENCY:
		return o->latency_ns;
	case ARBTABLE_C_DISTANCE:
		return o->distance;
	case ARBTABLE_C_SHARE:
		return o->share;
	default:
		return o->ceil;
	}
}

static void opt_set(struct arbtable_class_opts *o, uint32_t bit, uint64_t v)
{
	switch (bit) {
	case ARBTABLE_C_RATE:
		o->rate = v;
		break;
	case ARBTABLE_C_LATENCY:
		o->latency_ns = v;
		break;
	case ARBTABLE_C_DISTANCE:
		o->distance = v;
		break;
	case ARBTABLE_C_SHARE:
		o->share = v;
		break;
	default:
		o->ceil = v;
	}
	o->set |= bit;
}

static int get_u64(json_object *o, const char *k, uint64_t *out)
{
	json_object *v;

	if (!o || !json_object_object_get_ex(o, k, &v) ||
	    !json_object_is_type(v, json_type_int))
		return 0;
	*out = (uint64_t)json_object_get_int64(v);
	return 1;
}

static uint64_t u64_of(json_object *o, const char *k)
{
	uint64_t v = 0;

	get_u64(o, k, &v);
	return v;
}

static void get_str(json_object *o, const char *k, char *buf, size_t size)
{
	json_object *v;

	buf[0] = '\0';
	if (json_object_object_get_ex(o, k, &v) &&
	    json_object_is_type(v, json_type_string))
		snprintf(buf, size, "%s", json_object_get_string(v));
}

/* A tc handle as arbtablectl writes it, "1:101" or "1:"; 0 if not one */
static uint32_t get_handle(json_object *o, const char *k)
{
	uint32_t maj, min = 0;
	char buf[16], *colon;

	get_str(o, k, buf, sizeof(buf));
	colon = strchr(buf, ':');
	if (!colon)
		return 0;
	*colon = '\0';
	if (arbt_parse_u32(buf, 16, &maj) < 0 || maj > 0xffff ||
	    (colon[1] && (arbt_parse_u32(colon + 1, 16, &min) < 0 ||
			  min > 0xffff)))
		return 0;
	return maj << 16 | min;
}

static void read_class(json_object *c, struct acni_state *s)
{
	json_object *st = NULL;
	uint64_t v;
	size_t i;

	s->classid = get_handle(c, "handle");
	for (i = 0; i < sizeof(class_opts) / sizeof(class_opts[0]); i++) {
		if (get_u64(c, class_opts[i].key, &v))
			opt_set(&s->req, class_opts[i].bit, v);
	}
	json_object_object_get_ex(c, "stats", &st);
	s->distance = u64_of(st, "allocated_distance");
	s->reserved_rate = u64_of(st, "reserved_rate");
	s->guaranteed_rate = u64_of(st, "guaranteed_rate");
	s->guaranteed_bound_ns = u64_of(st, "guaranteed_bound");
}

/* A record of an earlier version (see the key map above) */
static void read_old(json_object *o, struct acni_state *s)
{
	json_object *r;

	s->classid = u64_of(o, "classid");
	s->parent = u64_of(o, "parent");
	s->distance = u64_of(o, "distance");
	s->guaranteed_rate = u64_of(o, "guaranteedRate");
	s->guaranteed_bound_ns = u64_of(o, "guaranteedBoundNs");
	if (json_object_object_get_ex(o, "request", &r)) {
		s->req.set = u64_of(r, "set");
		s->req.rate = u64_of(r, "rate");
		s->req.latency_ns = u64_of(r, "latencyNs");
		s->req.distance = u64_of(r, "distance");
		s->req.share = u64_of(r, "share");
		s->req.ceil = u64_of(r, "ceil");
	}
}

int acni_state_read(const char *path, struct acni_state *s,
		    struct acni_err *e)
{
	json_object *o, *c;
	char phase[16];
	struct stat sb;

	memset(s, 0, sizeof(*s));
	if (stat(path, &sb) < 0) {
		if (errno == ENOENT)
			return 0;
		return acni_error(e, ACNI_E_IO, "%s: %s", path,
				  strerror(errno));
	}
	o = json_object_from_file(path);
	if (!o || !json_object_is_type(o, json_type_object)) {
		if (o)
			json_object_put(o);
		acni_error(e, ACNI_E_IO,
			   "state file %s is damaged (%s)", path,
			   sb.st_size ? "not a JSON object" : "empty");
		return ACNI_STATE_DAMAGED;
	}
	get_str(o, "device", s->device, sizeof(s->device));
	get_str(o, "hostIfname", s->host_ifname, sizeof(s->host_ifname));
	get_str(o, "phase", phase, sizeof(phase));
	/* files of earlier versions were written when ADD was done */
	s->complete = !phase[0] || !strcmp(phase, "added");
	s->tenant = u64_of(o, "tenant");
	s->mark = u64_of(o, "mark");
	s->mark_mask = u64_of(o, "markMask");
	s->prio = u64_of(o, "prio");
	s->host_ifindex = u64_of(o, "hostIfindex");
	s->created_clsact = u64_of(o, "createdClsact");
	s->best_effort = u64_of(o, "bestEffort");
	if (json_object_object_get_ex(o, "class", &c) &&
	    json_object_is_type(c, json_type_object)) {
		read_class(c, s);
		s->parent = get_handle(o, "parent");
	} else {
		read_old(o, s);
	}
	json_object_put(o);
	if (!s->device[0] || !s->classid || !s->prio || !s->parent ||
	    (phase[0] && strcmp(phase, "added") && strcmp(phase, "adding"))) {
		acni_error(e, ACNI_E_IO,
			   "state file %s is damaged (device, class handle, prio, parent or phase missing or wrong)",
			   path);
		return ACNI_STATE_DAMAGED;
	}
	return 1;
}

static void put_u64(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_int64((int64_t)v));
}

static void put_handle(json_object *o, const char *k, uint32_t h)
{
	char buf[16];

	if (ARBTABLE_MINOR(h))
		snprintf(buf, sizeof(buf), "%x:%x", ARBTABLE_MAJOR(h),
			 ARBTABLE_MINOR(h));
	else
		snprintf(buf, sizeof(buf), "%x:", ARBTABLE_MAJOR(h));
	json_object_object_add(o, k, json_object_new_string(buf));
}

/* The class as arbtablectl --json prints one (see the key map above) */
static json_object *class_json(const struct acni_state *s)
{
	json_object *c = json_object_new_object();
	json_object *st = json_object_new_object();
	size_t i;

	put_handle(c, "handle", s->classid);
	for (i = 0; i < sizeof(class_opts) / sizeof(class_opts[0]); i++)
		if (s->req.set & class_opts[i].bit)
			put_u64(c, class_opts[i].key,
				opt_get(&s->req, class_opts[i].bit));
	put_u64(st, "allocated_distance", s->distance);
	put_u64(st, "reserved_rate", s->reserved_rate);
	put_u64(st, "guaranteed_rate", s->guaranteed_rate);
	put_u64(st, "guaranteed_bound", s->guaranteed_bound_ns);
	json_object_object_add(c, "stats", st);
	return c;
}

/* fsync the directory holding @path: a rename or unlink in it is on disk */
static int sync_dir(const char *path)
{
	char dir[320];
	char *slash;
	int fd, err;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return 0;
	*(slash == dir ? slash + 1 : slash) = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	err = fsync(fd);
	close(fd);
	return err;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= n;
	}
	return 0;
}

/* Written to a temporary name, synced and renamed, the directory synced:
 * after a crash the record is the old one or the new one, whole.
 */
int acni_state_write(const char *path, const struct acni_state *s,
		     struct acni_err *e)
{
	json_object *o = json_object_new_object();
	const char *text;
	char tmp[320];
	int fd, err = 0;

	json_object_object_add(o, "phase", json_object_new_string(
				       s->complete ? "added" : "adding"));
	json_object_object_add(o, "device", json_object_new_string(s->device));
	json_object_object_add(o, "hostIfname",
			       json_object_new_string(s->host_ifname));
	put_u64(o, "tenant", s->tenant);
	put_u64(o, "mark", s->mark);
	put_u64(o, "markMask", s->mark_mask);
	put_u64(o, "prio", s->prio);
	put_handle(o, "parent", s->parent);
	put_u64(o, "hostIfindex", s->host_ifindex);
	put_u64(o, "createdClsact", s->created_clsact);
	if (s->best_effort)
		put_u64(o, "bestEffort", 1);
	json_object_object_add(o, "class", class_json(s));
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY);

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write_all(fd, text, strlen(text)) < 0 ||
	    write_all(fd, "\n", 1) < 0 || fsync(fd) < 0) {
		err = acni_error(e, ACNI_E_IO, "cannot write state file %s: %s",
				 tmp, strerror(errno));
	}
	if (fd >= 0 && close(fd) < 0 && !err)
		err = acni_error(e, ACNI_E_IO, "cannot write state file %s: %s",
				 tmp, strerror(errno));
	if (!err && rename(tmp, path) < 0)
		err = acni_error(e, ACNI_E_IO, "cannot rename %s to %s: %s",
				 tmp, path, strerror(errno));
	if (!err && sync_dir(path) < 0)
		err = acni_error(e, ACNI_E_IO, "cannot sync the directory of %s: %s",
				 path, strerror(errno));
	if (err)
		unlink(tmp);
	json_object_put(o);
	return err;
}

int acni_state_remove(const char *path, struct acni_err *e)
{
	char tmp[320];
	int tmp_gone;

	/* and the temporary file of a write a kill interrupted */
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	tmp_gone = !unlink(tmp);
	if (unlink(path) < 0) {
		if (errno == ENOENT && !tmp_gone)
			return 0;
		if (errno != ENOENT)
			return acni_error(e, ACNI_E_IO, "cannot remove %s: %s",
					  path, strerror(errno));
	}
	if (sync_dir(path) < 0)
		return acni_error(e, ACNI_E_IO,
				  "cannot sync the directory of %s: %s", path,
				  strerror(errno));
	return 0;
}

int acni_state_find(const char *dir, int dot_files,
		    int (*match)(const struct acni_state *s, const void *arg),
		    const void *arg)
{
	struct dirent *d;
	DIR *dp = opendir(dir);
	int found = 0;

	if (!dp)
		return 0;
	while (!found && (d = readdir(dp))) {
		struct acni_state s;
		struct acni_err e;
		char path[600];
		size_t l = strlen(d->d_name);

		if ((!dot_files && d->d_name[0] == '.') || l < 6 ||
		    strcmp(d->d_name + l - 5, ".json"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (acni_state_read(path, &s, &e) == 1 && match(&s, arg))
			found = 1;
	}
	closedir(dp);
	return found;
}

struct tenant_key {
	const char	*device;
	uint32_t	tenant;
};

static int holds_tenant(const struct acni_state *s, const void *arg)
{
	const struct tenant_key *k = arg;

	return !strcmp(s->device, k->device) && s->tenant == k->tenant;
}

int acni_state_tenant_used(const char *dir, const char *device, uint32_t t)
{
	struct tenant_key k = { .device = device, .tenant = t };

	return acni_state_find(dir, 1, holds_tenant, &k);
}
