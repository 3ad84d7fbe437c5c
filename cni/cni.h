/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cni.h - arbtable-cni: a CNI 1.1 chained plugin that admits containers
 * as sch_arbtable classes on the node's egress NIC (those asking for
 * nothing share one, classes.c).  See
 * Documentation/arbtable-cni.8 for the configuration and the behaviour.
 */
#ifndef ACNI_CNI_H
#define ACNI_CNI_H

#include <stdint.h>
#include <json-c/json.h>
#include <arbtable/arbtable.h>

#define ACNI_VERSION_CUR	"1.1.0"
/* markMask unless configured: outside the documented mark layouts (conf.c) */
#define ACNI_MARK_MASK_DEFAULT	0x0000007fu
#define ACNI_STATE_DIR		"/var/lib/arbtable-cni"
/* <dir>/<device>.lock: one lock per egress device, whatever network or
 * stateDir uses it; the node agent takes the same lock to read a
 * consistent snapshot (arbtable-cni(8), FILES)
 */
#define ACNI_LOCK_DIR		"/run/arbtable-cni"
/* GC's list of the attachments still in use (CNI 1.1) */
#define ACNI_VALID_KEY		"cni.dev/valid-attachments"
#define ACNI_ANNOT_PREFIX	"arbtable.io/"
#define ACNI_ANNOT_CAP		"io.kubernetes.cri.pod-annotations"

/* CNI error codes (spec, "Error" section) and ours (100 and up) */
/* qdisc.rootMode: auto is lockless on a device with more than one
 * transmit queue, locked on one (the plugin grafts no child qdisc, so a
 * lockless root loses it nothing but fq_codel's flow isolation in a class)
 */
enum acni_root_mode {
	ACNI_ROOT_AUTO = 0,
	ACNI_ROOT_LOCKED,
	ACNI_ROOT_LOCKLESS,
};

enum acni_code {
	ACNI_E_VERSION = 1,	/* incompatible CNI version */
	ACNI_E_FIELD = 2,	/* unsupported field in network config */
	ACNI_E_UNKNOWN = 3,	/* container unknown or does not exist */
	ACNI_E_ENV = 4,		/* invalid necessary environment variables */
	ACNI_E_IO = 5,		/* I/O failure */
	ACNI_E_DECODE = 6,	/* failed to decode content */
	ACNI_E_CONFIG = 7,	/* invalid network config */
	ACNI_E_AGAIN = 11,	/* try again later */
	ACNI_E_UNAVAILABLE = 50, /* STATUS: cannot service ADD requests */
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
	/* DEL and GC: a config ADD would refuse (unknown key, bad value,
	 * no device) is reported on stderr, not an error: they work from
	 * the state ADD recorded
	 */
	int		lenient;
	char		name[128];
	char		device[16];
	/* qdisc options for creating the root when there is none */
	struct arbtable_qdisc_opts qopts;
	enum acni_root_mode root_mode;	/* qdisc.rootMode, that root's */
	uint32_t	handle;		/* root handle to create, major << 16 */
	uint32_t	default_share;
	uint32_t	mark_mask;
	unsigned int	mark_shift;	/* lowest set bit of mark_mask */
	unsigned int	mark_allow;	/* allowMarkOverlap: 1 << mark owner */
	uint32_t	minor_base;
	uint32_t	span;		/* tenant numbers 1..span */
	uint32_t	prio;		/* of both filters */
	char		state_dir[256];
	struct acni_req	req;
	struct acni_system system;
	json_object	*root;		/* the whole config, owned */
	json_object	*prev_result;	/* in root, NULL if none */
	json_object	*valid;		/* GC: cni.dev/valid-attachments */
};

struct acni_env {
	const char	*command;
	const char	*containerid;
	const char	*netns;
	const char	*ifname;
	const char	*args;
	const char	*path;
};

/* version.c: the spec versions the plugin speaks */
int acni_version_supported(const char *v);
/* "0.3.0, 0.3.1, ..." for messages */
void acni_versions_text(char *buf, size_t size);
/* a new array of them, for VERSION */
json_object *acni_versions_json(void);
/* @v is a version at least @min ("x.y.z" both) */
int acni_version_ge(const char *v, const char *min);
/* The highest supported version a cniVersions list names, or NULL */
const char *acni_version_pick(json_object *list);
/* A new result in version @ver: a copy of @prev (may be NULL) with the
 * fields of @ver only
 */
json_object *acni_result(json_object *prev, const char *ver);

/* conf.c: parse the network config from @text; the tenant's request from
 * runtimeConfig, args or CNI_ARGS (@env->args).
 */
int acni_conf_parse(struct acni_conf *c, const char *text,
		    const struct acni_env *env, int lenient,
		    struct acni_err *e);
void acni_conf_free(struct acni_conf *c);
/* What @o asks for together (rate xor share, latency xor distance, ...):
 * NULL, or the reason in the words every front end uses
 * (lib/arbtable_request.h; @flags ARBT_RQ_NEED_RESV: a rate or a share
 * is required)
 */
const char *acni_request_check(const struct arbtable_class_opts *o,
			       unsigned int flags);

/* What ADD admitted, kept on disk for DEL and CHECK (state.c): the class
 * under the keys of arbtablectl --json (its options, and what the kernel
 * allocated under "stats"); records of earlier versions are still read.
 */
struct acni_state {
	int		complete;	/* 0: ADD's intent ("adding") */
	char		device[16];
	uint32_t	classid;
	uint32_t	tenant;		/* 1..span: minor and mark derive from it */
	uint32_t	mark;
	uint32_t	mark_mask;
	uint32_t	prio;
	uint32_t	parent;		/* the arbtable root's handle */
	char		host_ifname[16];
	int		host_ifindex;
	int		created_clsact;	/* ADD made the veth's clsact: 1, or
					 * ACNI_CLSACT_INTENT: was about to
					 * (unfinished records only)
					 */
	int		best_effort;	/* a member of the shared class */
	struct arbtable_class_opts req;
	/* as the kernel reported right after admitting */
	uint32_t	distance;
	uint64_t	reserved_rate;
	uint64_t	guaranteed_rate;
	uint64_t	guaranteed_bound_ns;
};

#define ACNI_CLSACT_INTENT	2

/* The lock of one egress device (flock on ACNI_LOCK_DIR/<device>.lock),
 * shared by every network and stateDir using it: the fd to pass to
 * acni_unlock(), or -1 and @e.
 */
int acni_lock(const char *device, struct acni_err *e);
void acni_unlock(int fd);
/* Letters, digits, '_', '.', '-', not starting with '.' */
int acni_safe_name(const char *s);
/* stateDir itself (0700) */
int acni_state_mkdir(const char *dir, struct acni_err *e);
/* <dir>/<containerid>-<ifname>.json */
int acni_state_path(char *buf, size_t size, const char *dir,
		    const struct acni_env *env, struct acni_err *e);
#define ACNI_STATE_DAMAGED	(-2)
/* 1 read, 0 no such file, -1 @e set, ACNI_STATE_DAMAGED (@e set) when
 * the file is there but not a record (empty, truncated, fields missing)
 */
int acni_state_read(const char *path, struct acni_state *s,
		    struct acni_err *e);
/* Durable: temporary file, fsync, rename, fsync of the directory */
int acni_state_write(const char *path, const struct acni_state *s,
		     struct acni_err *e);
/* Unlink it and the temporary file of an interrupted write, and fsync
 * the directory; 0 when neither was there
 */
int acni_state_remove(const char *path, struct acni_err *e);
/* 1 if a record in @dir (a *.json file; with @dot_files 0, not one whose
 * name starts with '.') is one @match returns non-zero for, else 0
 */
int acni_state_find(const char *dir, int dot_files,
		    int (*match)(const struct acni_state *s, const void *arg),
		    const void *arg);
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
/* Undo what the record at @path names, under its device's lock, and
 * remove it (DEL, GC, and ADD over an unfinished record): 0 when nothing
 * is left, also when there was nothing or the record was damaged; -1
 * and @e when a step failed (the record stays for the next try).
 */
int acni_release(const char *path, struct acni_err *e);
/* arbtable-cni --ensure-root (no CNI verb: the node agent's): the root
 * ADD would make when the device has none, with its system class, made
 * now under the device's lock; 0 when the device has an auto-mode root
 */
int acni_cmd_root(struct acni_conf *c, const struct acni_env *env,
		  struct acni_err *e);
/* gc.c: remove what stateDir records of attachments not in
 * cni.dev/valid-attachments
 */
int acni_cmd_gc(struct acni_conf *c, const struct acni_env *env,
		struct acni_err *e);
/* status.c: 0 when ADD can be served, else code 50 and the reason */
int acni_cmd_status(struct acni_conf *c, const struct acni_env *env,
		    struct acni_err *e);

#endif /* ACNI_CNI_H */
