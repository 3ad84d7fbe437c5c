// SPDX-License-Identifier: GPL-2.0
/*
 * arbtable-cni: a CNI 1.1 chained plugin that admits a container as a
 * class of the sch_arbtable root on the node's egress NIC (guaranteed
 * rate and latency bound, or a share), or one that asks for nothing into
 * the device's shared best-effort class, and releases it on DEL.  The runtime calls it as the CNI specification says: the command
 * and the container in CNI_* variables, the network config on stdin, the
 * result or an error as JSON on stdout (exit 1 on an error).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cni.h"

static char *read_stdin(void)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	size_t got;

	if (!buf)
		return NULL;
	while ((got = fread(buf + len, 1, cap - len - 1, stdin)) > 0) {
		len += got;
		if (cap - len - 1 == 0) {
			char *nb;

			/* a network config is a few kB: a runaway stdin is
			 * not one
			 */
			if (cap >= (1u << 24)) {
				free(buf);
				return NULL;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
	}
	buf[len] = '\0';
	return buf;
}

static int print_error(const char *version, const struct acni_err *e)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "cniVersion", json_object_new_string(
				       version && acni_version_supported(version) ?
				       version : ACNI_VERSION_CUR));
	json_object_object_add(o, "code", json_object_new_int(e->code));
	json_object_object_add(o, "msg", json_object_new_string(e->msg));
	if (e->details[0])
		json_object_object_add(o, "details",
				       json_object_new_string(e->details));
	printf("%s\n", json_object_to_json_string_ext(o,
			JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	/* for a human running it by hand; runtimes read stdout */
	fprintf(stderr, "arbtable-cni: %s%s%s\n", e->msg,
		e->details[0] ? ": " : "", e->details);
	return 1;
}

static int cmd_version(const char *text)
{
	json_object *in = text ? json_tokener_parse(text) : NULL, *v, *o;
	const char *ver = ACNI_VERSION_CUR;

	if (in && json_object_object_get_ex(in, "cniVersion", &v) &&
	    json_object_is_type(v, json_type_string) &&
	    acni_version_supported(json_object_get_string(v)))
		ver = json_object_get_string(v);
	o = json_object_new_object();
	json_object_object_add(o, "cniVersion", json_object_new_string(ver));
	json_object_object_add(o, "supportedVersions", acni_versions_json());
	printf("%s\n", json_object_to_json_string_ext(o,
			JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	if (in)
		json_object_put(in);
	return 0;
}

static const struct verb {
	const char	*name;
	int		(*run)(struct acni_conf *c, const struct acni_env *env,
			       struct acni_err *e);
	const char	*since;		/* the first spec version with it */
	int		container;	/* needs CNI_CONTAINERID, CNI_IFNAME */
	int		lenient;	/* see struct acni_conf */
} verbs[] = {
	{ "ADD",	acni_cmd_add,		"0.3.0", 1, 0 },
	{ "DEL",	acni_cmd_del,		"0.3.0", 1, 1 },
	{ "CHECK",	acni_cmd_check,		"0.4.0", 1, 0 },
	{ "GC",		acni_cmd_gc,		"1.1.0", 0, 1 },
	{ "STATUS",	acni_cmd_status,	"1.1.0", 0, 0 },
};

/* Not a CNI verb: `arbtable-cni --ensure-root < config` makes the root
 * the first ADD would make (the node agent's, so that the node
 * advertises its room, the system class left out, before a pod comes)
 */
static const struct verb root_verb = {
	"--ensure-root", acni_cmd_root, "0.3.0", 0, 0,
};

static const char *env_get(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

int main(int argc, char **argv)
{
	struct acni_env env = {
		.command = env_get("CNI_COMMAND"),
		.containerid = env_get("CNI_CONTAINERID"),
		.netns = env_get("CNI_NETNS"),
		.ifname = env_get("CNI_IFNAME"),
		.args = env_get("CNI_ARGS"),
		.path = env_get("CNI_PATH"),
	};
	const struct verb *vb = NULL;
	struct acni_err e = { 0 };
	struct acni_conf c;
	char vers[128];
	char *text;
	size_t i;
	int err;

	if (argc > 1) {
		if (argc > 2 || strcmp(argv[1], root_verb.name)) {
			acni_error(&e, ACNI_E_ENV,
				   "arbtable-cni takes no arguments but --ensure-root (see arbtable-cni(8)); a runtime sets CNI_COMMAND");
			return print_error(NULL, &e);
		}
		vb = &root_verb;
		env.command = root_verb.name;
	}
	if (!env.command) {
		acni_error(&e, ACNI_E_ENV,
			   "CNI_COMMAND not set: arbtable-cni is run by a container runtime (see arbtable-cni(8))");
		return print_error(NULL, &e);
	}
	text = read_stdin();
	if (!strcmp(env.command, "VERSION")) {
		err = cmd_version(text);
		free(text);
		return err;
	}
	if (!text) {
		acni_error(&e, ACNI_E_IO, "cannot read the network config from stdin");
		return print_error(NULL, &e);
	}
	for (i = 0; !vb && i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strcmp(env.command, verbs[i].name))
			vb = &verbs[i];
	if (!vb) {
		acni_error(&e, ACNI_E_ENV,
			   "CNI_COMMAND %s: arbtable-cni knows ADD, DEL, CHECK, GC, STATUS and VERSION",
			   env.command);
		free(text);
		return print_error(NULL, &e);
	}
	if (vb->container && (!env.containerid || !env.ifname)) {
		acni_error(&e, ACNI_E_ENV, "%s missing",
			   !env.containerid ? "CNI_CONTAINERID" : "CNI_IFNAME");
		free(text);
		return print_error(NULL, &e);
	}
	err = acni_conf_parse(&c, text, &env, vb->lenient, &e);
	free(text);
	acni_versions_text(vers, sizeof(vers));
	if (!err && !acni_version_supported(c.cni_version))
		err = acni_error(&e, ACNI_E_VERSION,
				 "cniVersion %s not supported (supported: %s)",
				 c.cni_version, vers);
	if (!err && !acni_version_ge(c.cni_version, vb->since))
		err = acni_error(&e, ACNI_E_VERSION,
				 "%s needs cniVersion %s or later, the config has %s",
				 vb->name, vb->since, c.cni_version);
	if (!err)
		err = vb->run(&c, &env, &e);
	if (err)
		print_error(c.cni_version[0] ? c.cni_version : NULL, &e);
	acni_conf_free(&c);
	return err ? 1 : 0;
}
