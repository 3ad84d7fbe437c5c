// SPDX-License-Identifier: GPL-2.0
/*
 * version.c - the CNI specification versions the plugin speaks, and the
 * result it passes through (prevResult) written in the version asked.
 *
 * Results differ between versions in a few fields only:
 *   - 0.3.0, 0.3.1 and 0.4.0 carry "version" ("4" or "6") in every entry
 *     of "ips"; 1.0.0 dropped it;
 *   - 1.1.0 added "mtu", "socketPath" and "pciID" to interfaces and "mtu",
 *     "advmss", "priority", "table" and "scope" to routes.
 * The runtime hands the plugin the previous result in the version of the
 * config, but a result built by hand (or by an older plugin earlier in
 * the chain) may not follow it: the plugin writes what the version asked
 * for, so the runtime's parser of that version gets what it expects.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cni.h"

static const char *const versions[] = {
	"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0",
};

#define N_VERSIONS	(sizeof(versions) / sizeof(versions[0]))

int acni_version_supported(const char *v)
{
	size_t i;

	for (i = 0; i < N_VERSIONS; i++)
		if (!strcmp(v, versions[i]))
			return 1;
	return 0;
}

void acni_versions_text(char *buf, size_t size)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < N_VERSIONS && n < size; i++)
		n += snprintf(buf + n, size - n, "%s%s", i ? ", " : "",
			      versions[i]);
}

json_object *acni_versions_json(void)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < N_VERSIONS; i++)
		json_object_array_add(a, json_object_new_string(versions[i]));
	return a;
}

/* "x.y.z" as a number for comparing; -1 if it is not one */
static long version_num(const char *v)
{
	unsigned int x, y, z;
	int end = 0;

	if (sscanf(v, "%u.%u.%u%n", &x, &y, &z, &end) != 3 || v[end] ||
	    x > 999 || y > 999 || z > 999)
		return -1;
	return (long)x * 1000000 + y * 1000 + z;
}

int acni_version_ge(const char *v, const char *min)
{
	long a = version_num(v), b = version_num(min);

	return a >= 0 && b >= 0 && a >= b;
}

const char *acni_version_pick(json_object *list)
{
	const char *best = NULL;
	size_t i, n;

	if (!json_object_is_type(list, json_type_array))
		return NULL;
	n = json_object_array_length(list);
	for (i = 0; i < n; i++) {
		json_object *v = json_object_array_get_idx(list, i);
		const char *s;

		if (!json_object_is_type(v, json_type_string))
			continue;
		s = json_object_get_string(v);
		if (acni_version_supported(s) &&
		    (!best || version_num(s) > version_num(best)))
			best = s;
	}
	return best;
}

static void del_keys(json_object *o, const char *const *keys)
{
	for (; *keys; keys++)
		json_object_object_del(o, *keys);
}

/* each object of the array @key of @r */
static void each_entry(json_object *r, const char *key,
		       void (*fn)(json_object *o, const char *ver),
		       const char *ver)
{
	json_object *a;
	size_t i, n;

	if (!json_object_object_get_ex(r, key, &a) ||
	    !json_object_is_type(a, json_type_array))
		return;
	n = json_object_array_length(a);
	for (i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(a, i);

		if (json_object_is_type(o, json_type_object))
			fn(o, ver);
	}
}

static void ip_entry(json_object *ip, const char *ver)
{
	json_object *addr;

	if (acni_version_ge(ver, "1.0.0")) {
		json_object_object_del(ip, "version");
		return;
	}
	if (json_object_object_get_ex(ip, "version", NULL) ||
	    !json_object_object_get_ex(ip, "address", &addr) ||
	    !json_object_is_type(addr, json_type_string))
		return;
	json_object_object_add(ip, "version", json_object_new_string(
				       strchr(json_object_get_string(addr), ':') ?
				       "6" : "4"));
}

static void interface_entry(json_object *o, const char *ver)
{
	static const char *const keys[] = {
		"mtu", "socketPath", "pciID", NULL,
	};

	if (!acni_version_ge(ver, "1.1.0"))
		del_keys(o, keys);
}

static void route_entry(json_object *o, const char *ver)
{
	static const char *const keys[] = {
		"mtu", "advmss", "priority", "table", "scope", NULL,
	};

	if (!acni_version_ge(ver, "1.1.0"))
		del_keys(o, keys);
}

json_object *acni_result(json_object *prev, const char *ver)
{
	json_object *r = NULL;

	/* a deep copy: the config that holds @prev stays as it came */
	if (!prev || json_object_deep_copy(prev, &r, NULL) < 0 ||
	    !json_object_is_type(r, json_type_object)) {
		if (r)
			json_object_put(r);
		r = json_object_new_object();
	}
	json_object_object_add(r, "cniVersion", json_object_new_string(ver));
	each_entry(r, "ips", ip_entry, ver);
	each_entry(r, "interfaces", interface_entry, ver);
	each_entry(r, "routes", route_entry, ver);
	return r;
}
