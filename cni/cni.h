/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cni.h - arbtable-cni: a CNI 1.0 chained plugin that admits each
 * container as an sch_arbtable class on the node's egress NIC.  See
 * Documentation/arbtable-cni.8 for the configuration and the behaviour.
 */
#ifndef ACNI_CNI_H
#define ACNI_CNI_H

#include <stdint.h>
#include <json-c/json.h>
#include <arbtable/arbtable.h>

#define ACNI_VERSION_CUR	"1.0.0"
#define ACNI_STATE_DIR		"/var/lib/arbtable-cni"
#define ACNI_ANNOT_PREFIX	"arbtable.io/"
#define ACNI_ANNOT_CAP		"io.kubernetes.cri.pod-annotations"

/* CNI error codes (spec, "Error" section) and ours (100 and up) */
enum acni_code {
	ACNI_E_VERSION = 1,	/* incompatible CNI version */
	ACNI_E_FIELD = 2,	/* unsupported field in network config */
	ACNI_E_UNKNOWN = 3,	/* container unknown or does not exist */
	ACNI_E_ENV = 4,		/* invalid necessary environment variables */
	ACNI_E_IO = 5,		/* I/O failure */
	ACNI_E_DECODE = 6,	/* failed to decode content */
	ACNI_E_CONFIG = 7,	/* invalid network config */
	ACNI_E_AGAIN = 11,	/* try again later */
	ACNI_E_REFUSED = 100,	/* the kernel refused the admission */
	ACNI_E_DEVICE = 101,	/* egress device missing or not usable */
	ACNI_E_NETLINK = 102,	/* another kernel request failed */
	ACNI_E_CHECK = 103,	/* CHECK found the tenant not as admitted */
	ACNI_E_EXISTS = 104,	/* ADD for a container already added */
	ACNI_E_VETH = 105,	/* no host side of the container's veth */
};

struct acni_err {
	int	code;
	char	msg[512];
	char	details[1024];
};

__attribute__((format(printf, 3, 4)))
int acni_error(struct acni_err *e, int code, const char *fmt, ...);
/* Sets details (the kernel's own text, verbatim) */
void acni_details(struct acni_err *e, const char *text);

/* A JSON string, or a non-negative JSON integer, as text (conf.c) */
int acni_value_text(json_object *v, char *buf, size_t size);

/* What one tenant asks for: class options plus where they came from. */
struct acni_req {
	struct arbtable_class_opts opts;
	char	source[64];	/* "runtimeConfig.arbtable", "CNI_ARGS", ... */
	char	text[192];	/* "rate 2mbit latency 20ms", for messages */
	int	best_effort;	/* asked for nothing: joins the shared class */
};

/* The system class of a root the plugin creates: the qdisc's default,
 * so the node's own (unmarked) traffic keeps a floor (classes.c).
 */
struct acni_system {
	struct arbtable_class_opts opts;
	uint32_t	rate_permille;	/* rate as 1/1000 of the qdisc's, 0 = opts.rate */
	uint32_t	minor;
	int		minor_set;	/* given in the config */
	char		text[96];	/* for messages */
};

struct acni_conf {
	char		cni_version[16];
	char		name[128];
	char		device[16];
	/* qdisc options for creating the root when there is none */
	struct arbtable_qdisc_opts qopts;
	uint32_t	handle;		/* root handle to create, major << 16 */
	uint32_t	default_share;
	uint32_t	mark_mask;
	unsigned int	mark_shift;	/* lowest set bit of mark_mask */
	uint32_t	minor_base;
	uint32_t	span;		/* tenant numbers 1..span */
	uint32_t	prio;		/* of both filters */
	char		state_dir[256];
	struct acni_req	req;
	struct acni_system system;
	json_object	*root;		/* the whole config, owned */
	json_object	*prev_result;	/* in root, NULL if none */
};

struct acni_env {
	const char	*command;
	const char	*containerid;
	const char	*netns;
	const char	*ifname;
	const char	*args;
	const char	*path;
};

/* conf.c: parse the network config from @text; the tenant's request from
 * runtimeConfig, args or CNI_ARGS (@env->args).
 */
int acni_conf_parse(struct acni_conf *c, const char *text,
		    const struct acni_env *env, struct acni_err *e);
void acni_conf_free(struct acni_conf *c);

/* What ADD admitted, kept on disk for DEL and CHECK (state.c). */
struct acni_state {
	char		device[16];
	uint32_t	classid;
	uint32_t	tenant;		/* 1..span: minor and mark derive from it */
	uint32_t	mark;
	uint32_t	mark_mask;
	uint32_t	prio;
	uint32_t	parent;		/* the arbtable root's handle */
	char		host_ifname[16];
	int		host_ifindex;
	int		created_clsact;
	int		best_effort;	/* a member of the shared class */
	struct arbtable_class_opts req;
	/* as the kernel reported right after admitting */
	uint32_t	distance;
	uint64_t	guaranteed_rate;
	uint64_t	guaranteed_bound_ns;
};

/* The lock serializing every plugin run on this node (flock on
 * <dir>/lock): -1 and @e on failure.
 */
int acni_lock(const char *dir, struct acni_err *e);
/* Letters, digits, '_', '.', '-', not starting with '.' */
int acni_safe_name(const char *s);
/* <dir>/<containerid>-<ifname> */
int acni_state_path(char *buf, size_t size, const char *dir,
		    const struct acni_env *env, struct acni_err *e);
/* 1 read, 0 no such file, -1 @e set */
int acni_state_read(const char *path, struct acni_state *s,
		    struct acni_err *e);
int acni_state_write(const char *path, const struct acni_state *s,
		     struct acni_err *e);
/* 1 if any state file of @dir holds tenant @t on @device */
int acni_state_tenant_used(const char *dir, const char *device, uint32_t t);

/* classes.c: the system class and the shared best-effort class */
int acni_system_parse(struct acni_conf *c, json_object *v,
		      struct acni_err *e);
int acni_system_check(struct acni_conf *c, struct acni_err *e);
/* Admit the system class on the root just created and make it the
 * qdisc's default.
 */
int acni_system_create(const struct acni_conf *c, struct arbtable *h,
		       struct acni_err *e);
/* The shared best-effort class on @c->device: its file in the state
 * directory says where it is; created (file first) when there is none,
 * repaired when the kernel lost it.  Fills @s's classid, tenant, mark.
 */
struct acni_nl;
struct arbtable_state;
int acni_be_join(const struct acni_conf *c, struct arbtable *h,
		 struct acni_nl *n, struct arbtable_state *st,
		 const struct arbtable_qdisc_info *qi, struct acni_state *s,
		 struct acni_err *e);
/* Removes the shared class of @device (fw filter, class, file) when no
 * state file names a member any more: 1 removed; 0 members remain, or
 * there is no description (or a damaged one) naming a class; -1 @e set.
 */
int acni_be_collect(const char *dir, const char *device,
		    struct acni_err *e);
/* <dir>/.besteffort-<device>.json: never a container's (no container id
 * starts with a dot)
 */
int acni_be_path(char *buf, size_t size, const char *dir,
		 const char *device, struct acni_err *e);
/* 1 if a state file of @dir names a member of the shared class
 * @classid on @device, else 0
 */
int acni_be_members(const char *dir, const char *device, uint32_t classid);

/* cmd.c */
int acni_pick_tenant(const struct acni_conf *c, const char *key1,
		     const char *key2, const struct arbtable_state *st,
		     const struct arbtable_qdisc_info *qi, struct acni_nl *n,
		     uint32_t *tenant, struct acni_err *e);
int acni_cmd_add(struct acni_conf *c, const struct acni_env *env,
		 struct acni_err *e);
int acni_cmd_del(struct acni_conf *c, const struct acni_env *env,
		 struct acni_err *e);
int acni_cmd_check(struct acni_conf *c, const struct acni_env *env,
		   struct acni_err *e);

#endif /* ACNI_CNI_H */
