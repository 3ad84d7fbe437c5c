// SPDX-License-Identifier: GPL-2.0
/*
 * conf.c - the network configuration and the tenant's request.
 *
 * Values take tc's units through the project's one parser
 * (lib/arbtable_parse.c), so "2mbit" means here what it means to tc,
 * arbtablectl and arbsim.  A key the plugin does not know is refused
 * (a misspelt "latncy" would otherwise silently admit a tenant without
 * its bound), except by DEL and GC: they work from what ADD recorded and
 * must clean up whatever the config became since (they report what they
 * ignored on stderr).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arbtable_parse.h"
#include "arbtable_request.h"
#include "cni.h"

/* the qdisc's mtu as the module accepts it (kernel/arbtable_core.h
 * ARB_MTU_MIN, ARB_MTU_MAX)
 */
#define ACNI_MTU_MIN	64u
#define ACNI_MTU_MAX	(1024u * 1024)

/* A string, or a number given as JSON number ("rate": 10000000): both
 * go through the same parser as text.
 */
int acni_value_text(json_object *v, char *buf, size_t size)
{
	switch (json_object_get_type(v)) {
	case json_type_string:
		snprintf(buf, size, "%s", json_object_get_string(v));
		return 0;
	case json_type_int:
		if (json_object_get_int64(v) < 0)
			return -1;
		snprintf(buf, size, "%" PRId64, json_object_get_int64(v));
		return 0;
	default:
		return -1;
	}
}

/* ------------------------------------------------------------ request */

enum { K_RATE, K_LATENCY, K_DISTANCE, K_SHARE, K_CEIL, K_N };

static const char *const req_keys[K_N] = {
	"rate", "latency", "distance", "share", "ceil",
};
static const char *const req_args[K_N] = {
	"ARBTABLE_RATE", "ARBTABLE_LATENCY", "ARBTABLE_DISTANCE",
	"ARBTABLE_SHARE", "ARBTABLE_CEIL",
};

struct req_in {
	char	val[K_N][64];
	int	have[K_N];
	int	any;
};

static int req_set(struct req_in *in, int k, const char *where,
		   json_object *v, struct acni_err *e)
{
	if (acni_value_text(v, in->val[k], sizeof(in->val[k])) < 0 ||
	    !in->val[k][0])
		return acni_error(e, ACNI_E_CONFIG,
				  "%s: %s must be a string or a non-negative integer",
				  where, req_keys[k]);
	in->have[k] = 1;
	in->any = 1;
	return 0;
}

static int req_key(const char *key)
{
	int k;

	for (k = 0; k < K_N; k++)
		if (!strcmp(key, req_keys[k]))
			return k;
	return -1;
}

/* An object whose keys are the request's names, possibly behind @prefix
 * (pod annotations); with a prefix, other keys belong to others.
 */
static int req_from_object(struct req_in *in, json_object *o,
			   const char *prefix, const char *where,
			   struct acni_err *e)
{
	size_t pl = prefix ? strlen(prefix) : 0;

	if (!json_object_is_type(o, json_type_object))
		return acni_error(e, ACNI_E_CONFIG, "%s must be an object",
				  where);
	json_object_object_foreach(o, key, v) {
		const char *name = key;
		int k;

		if (prefix) {
			if (strncmp(key, prefix, pl))
				continue;
			name = key + pl;
		}
		k = req_key(name);
		if (k < 0)
			return acni_error(e, ACNI_E_CONFIG,
					  "%s: unknown key \"%s\" (known: %s%s, %s%s, %s%s, %s%s, %s%s)",
					  where, key, prefix ? prefix : "",
					  req_keys[0], prefix ? prefix : "",
					  req_keys[1], prefix ? prefix : "",
					  req_keys[2], prefix ? prefix : "",
					  req_keys[3], prefix ? prefix : "",
					  req_keys[4]);
		if (req_set(in, k, where, v, e) < 0)
			return -1;
	}
	return 0;
}

/* CNI_ARGS: "K=V;K=V".  Keys not ours belong to other plugins (the
 * runtime passes one CNI_ARGS to the whole chain), but an ARBTABLE_ key
 * we do not know is a typo.
 */
static int req_from_cni_args(struct req_in *in, const char *args,
			     struct acni_err *e)
{
	char buf[1024], *save = NULL, *kv;

	if (strlen(args) >= sizeof(buf))
		return acni_error(e, ACNI_E_ENV, "CNI_ARGS longer than %zu bytes",
				  sizeof(buf) - 1);
	strcpy(buf, args);
	for (kv = strtok_r(buf, ";", &save); kv; kv = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(kv, '=');
		int k;

		if (!eq)
			return acni_error(e, ACNI_E_ENV,
					  "CNI_ARGS: \"%s\" is not KEY=VALUE", kv);
		*eq = '\0';
		if (strncmp(kv, "ARBTABLE_", 9))
			continue;
		for (k = 0; k < K_N && strcmp(kv, req_args[k]); k++)
			;
		if (k == K_N)
			return acni_error(e, ACNI_E_ENV,
					  "CNI_ARGS: unknown key %s (known: ARBTABLE_RATE, ARBTABLE_LATENCY, ARBTABLE_DISTANCE, ARBTABLE_SHARE, ARBTABLE_CEIL)",
					  kv);
		if (!eq[1])
			return acni_error(e, ACNI_E_ENV, "CNI_ARGS: %s is empty",
					  kv);
		snprintf(in->val[k], sizeof(in->val[k]), "%s", eq + 1);
		in->have[k] = 1;
		in->any = 1;
	}
	return 0;
}

/* Into the shared check's terms (lib/arbtable_request.h) */
static void opts_request(const struct arbtable_class_opts *o,
			 struct arbt_request *rq)
{
	memset(rq, 0, sizeof(*rq));
	rq->given = (o->set & ARBTABLE_C_RATE ? ARBT_RQ_RATE : 0) |
		    (o->set & ARBTABLE_C_LATENCY ? ARBT_RQ_LATENCY : 0) |
		    (o->set & ARBTABLE_C_DISTANCE ? ARBT_RQ_DISTANCE : 0) |
		    (o->set & ARBTABLE_C_SHARE ? ARBT_RQ_SHARE : 0);
	rq->rate = o->rate;
	rq->latency_ns = o->latency_ns;
	rq->distance = o->distance;
	rq->share = o->share;
}

const char *acni_request_check(const struct arbtable_class_opts *o,
			       unsigned int flags)
{
	struct arbt_request rq;

	opts_request(o, &rq);
	return arbt_request_check_new(&rq, 0, flags);
}

/* Each value as tc would read it; what they ask for together is checked
 * after (acni_request_check())
 */
static int req_values(struct arbtable_class_opts *o, const struct req_in *in,
		      const char *src, struct acni_err *e)
{
	memset(o, 0, sizeof(*o));
	if (in->have[K_RATE] && arbt_parse_rate(in->val[K_RATE], &o->rate) < 0)
		return acni_error(e, ACNI_E_CONFIG,
				  "%s: bad rate \"%s\" (a tc rate such as 2mbit or 1gbit)",
				  src, in->val[K_RATE]);
	if (in->have[K_CEIL] &&
	    (arbt_parse_rate(in->val[K_CEIL], &o->ceil) < 0 || !o->ceil))
		return acni_error(e, ACNI_E_CONFIG,
				  "%s: bad ceil \"%s\" (a tc rate such as 5mbit, above 0)",
				  src, in->val[K_CEIL]);
	if (in->have[K_LATENCY] &&
	    arbt_parse_time(in->val[K_LATENCY], &o->latency_ns) < 0)
		return acni_error(e, ACNI_E_CONFIG,
				  "%s: bad latency \"%s\" (a tc time such as 50us or 2ms)",
				  src, in->val[K_LATENCY]);
	if (in->have[K_DISTANCE] &&
	    arbt_parse_u32(in->val[K_DISTANCE], 10, &o->distance) < 0)
		return acni_error(e, ACNI_E_CONFIG,
				  "%s: bad distance \"%s\" (a power of two 1..64)",
				  src, in->val[K_DISTANCE]);
	if (in->have[K_SHARE] &&
	    arbt_parse_u32(in->val[K_SHARE], 10, &o->share) < 0)
		return acni_error(e, ACNI_E_CONFIG,
				  "%s: bad share \"%s\" (1..255)", src,
				  in->val[K_SHARE]);
	if (in->have[K_RATE])
		o->set |= ARBTABLE_C_RATE;
	if (in->have[K_LATENCY])
		o->set |= ARBTABLE_C_LATENCY;
	if (in->have[K_DISTANCE])
		o->set |= ARBTABLE_C_DISTANCE;
	if (in->have[K_SHARE])
		o->set |= ARBTABLE_C_SHARE;
	if (in->have[K_CEIL])
		o->set |= ARBTABLE_C_CEIL;
	return 0;
}

static int req_build(struct acni_conf *c, const struct req_in *in,
		     struct acni_err *e)
{
	struct arbtable_class_opts *o = &c->req.opts;
	const char *src = c->req.source, *why;
	size_t n = 0;
	int k;

	if (req_values(o, in, src, e) < 0)
		return -1;
	/* a tenant that asks for nothing joins the shared best-effort
	 * class (classes.c); one that asks only for a distance or a ceil
	 * takes a class of its own, with the default share, as those are
	 * its own
	 */
	c->req.best_effort = !in->any;
	if (!(o->set & (ARBTABLE_C_RATE | ARBTABLE_C_SHARE))) {
		o->share = c->default_share;
		o->set |= ARBTABLE_C_SHARE;
	}
	/* with the default share in: a latency alone is refused here, in
	 * the module's words, not by the kernel at admission
	 */
	why = acni_request_check(o, 0);
	if (why)
		return acni_error(e, ACNI_E_CONFIG, "%s: %s", src, why);
	c->req.text[0] = '\0';
	for (k = 0; k < K_N; k++) {
		if (!in->have[k])
			continue;
		n += snprintf(c->req.text + n, sizeof(c->req.text) - n,
			      "%s%s %s", n ? " " : "", req_keys[k], in->val[k]);
		if (n >= sizeof(c->req.text))
			break;
	}
	if (c->req.best_effort)
		snprintf(c->req.text, sizeof(c->req.text),
			 "best effort, the shared class (share %u, defaultShare)",
			 c->default_share);
	else if (!in->have[K_RATE] && !in->have[K_SHARE] &&
		 n < sizeof(c->req.text))
		snprintf(c->req.text + n, sizeof(c->req.text) - n,
			 "%sshare %u (defaultShare)", n ? " " : "",
			 c->default_share);
	return 0;
}

/* The first source that says anything wins, whole: a request is never
 * assembled from two places.
 */
static int req_parse(struct acni_conf *c, const struct acni_env *env,
		     struct acni_err *e)
{
	json_object *rc = NULL, *o, *cni;
	struct req_in in;

	memset(&in, 0, sizeof(in));
	if (json_object_object_get_ex(c->root, "runtimeConfig", &rc)) {
		if (!json_object_is_type(rc, json_type_object))
			return acni_error(e, ACNI_E_CONFIG,
					  "runtimeConfig must be an object");
		if (json_object_object_get_ex(rc, "arbtable", &o)) {
			snprintf(c->req.source, sizeof(c->req.source),
				 "runtimeConfig.arbtable");
			if (req_from_object(&in, o, NULL, c->req.source, e))
				return -1;
		}
		if (!in.any &&
		    json_object_object_get_ex(rc, ACNI_ANNOT_CAP, &o)) {
			snprintf(c->req.source, sizeof(c->req.source),
				 "pod annotations");
			if (req_from_object(&in, o, ACNI_ANNOT_PREFIX,
					    c->req.source, e))
				return -1;
		}
	}
	if (!in.any && json_object_object_get_ex(c->root, "args", &o) &&
	    json_object_is_type(o, json_type_object) &&
	    json_object_object_get_ex(o, "cni", &cni) &&
	    json_object_is_type(cni, json_type_object) &&
	    json_object_object_get_ex(cni, "arbtable", &o)) {
		snprintf(c->req.source, sizeof(c->req.source),
			 "args.cni.arbtable");
		if (req_from_object(&in, o, NULL, c->req.source, e))
			return -1;
	}
	if (!in.any && env->args && *env->args) {
		snprintf(c->req.source, sizeof(c->req.source), "CNI_ARGS");
		if (req_from_cni_args(&in, env->args, e))
			return -1;
	}
	if (!in.any)
		snprintf(c->req.source, sizeof(c->req.source), "default");
	return req_build(c, &in, e);
}

/* ------------------------------------------------------------ config */

static int get_hex32(json_object *v, const char *name, uint32_t *out,
		     struct acni_err *e)
{
	char buf[64];

	if (json_object_is_type(v, json_type_int)) {
		int64_t x = json_object_get_int64(v);

		if (x < 0 || x > UINT32_MAX)
			goto bad;
		*out = x;
		return 0;
	}
	if (acni_value_text(v, buf, sizeof(buf)) < 0)
		goto bad;
	if (!strncmp(buf, "0x", 2) || !strncmp(buf, "0X", 2)) {
		if (arbt_parse_u32(buf + 2, 16, out) == 0)
			return 0;
	} else if (arbt_parse_u32(buf, 10, out) == 0) {
		return 0;
	}
bad:
	return acni_error(e, ACNI_E_CONFIG,
			  "%s: want a 32-bit number (\"0x00ff0000\" or 16711680)",
			  name);
}

static int parse_qdisc(struct acni_conf *c, json_object *q,
		       struct acni_err *e)
{
	struct arbtable_qdisc_opts *o = &c->qopts;
	char buf[64];

	if (!json_object_is_type(q, json_type_object))
		return acni_error(e, ACNI_E_CONFIG, "qdisc must be an object");
	json_object_object_foreach(q, key, v) {
		uint32_t u;

		if (!strcmp(key, "handle")) {
			if (acni_value_text(v, buf, sizeof(buf)) < 0)
				goto bad;
			buf[strcspn(buf, ":")] = '\0';
			if (arbt_parse_u32(buf, 16, &u) < 0 || !u ||
			    u > 0xfffe)
				goto bad;
			c->handle = u << 16;
			continue;
		}
		if (!strcmp(key, "rootMode")) {
			const char *m = json_object_is_type(v, json_type_string) ?
					json_object_get_string(v) : "";

			if (!strcmp(m, "auto"))
				c->root_mode = ACNI_ROOT_AUTO;
			else if (!strcmp(m, "locked"))
				c->root_mode = ACNI_ROOT_LOCKED;
			else if (!strcmp(m, "lockless"))
				c->root_mode = ACNI_ROOT_LOCKLESS;
			else
				return acni_error(e, ACNI_E_CONFIG,
						  "qdisc: bad rootMode %s (\"auto\": lockless on a device with more than one transmit queue, locked on one; \"locked\"; \"lockless\")",
						  json_object_to_json_string(v));
			continue;
		}
		if (acni_value_text(v, buf, sizeof(buf)) < 0)
			goto bad;
		if (!strcmp(key, "rate")) {
			if (arbt_parse_rate(buf, &o->rate) < 0 || !o->rate)
				goto bad;
			o->set |= ARBTABLE_Q_RATE;
		} else if (!strcmp(key, "burst")) {
			if (arbt_parse_size(buf, &o->burst) < 0)
				goto bad;
			o->set |= ARBTABLE_Q_BURST;
		} else if (!strcmp(key, "mtu")) {
			/* as the module takes it (tc-arbtable(8), mtu): 0
			 * follows the device, which from 1gbit up keeps GSO
			 * packets whole (74406 on Ethernet: bounds ~500x
			 * coarser); a frame size (1514) splits them
			 */
			if (arbt_parse_size(buf, &o->mtu) < 0 ||
			    (o->mtu && (o->mtu < ACNI_MTU_MIN ||
					o->mtu > ACNI_MTU_MAX)))
				return acni_error(e, ACNI_E_CONFIG,
						  "qdisc: bad mtu \"%s\" (0 or absent: follow the device; or %u..%u bytes, link-layer header included: 1514 splits every GSO packet on Ethernet)",
						  buf, ACNI_MTU_MIN, ACNI_MTU_MAX);
			o->set |= ARBTABLE_Q_MTU;
		} else if (!strcmp(key, "highlimit")) {
			if (arbt_parse_u32(buf, 10, &o->highlimit) < 0)
				goto bad;
			o->set |= ARBTABLE_Q_HIGHLIMIT;
		} else if (!strcmp(key, "maxweight")) {
			if (arbt_parse_u32(buf, 10, &o->maxweight) < 0)
				goto bad;
			o->set |= ARBTABLE_Q_MAXWEIGHT;
		} else {
			return acni_error(e, ACNI_E_FIELD,
					  "qdisc: unknown key \"%s\" (known: handle, rate, burst, mtu, highlimit, maxweight, rootMode)",
					  key);
		}
		continue;
bad:
		return acni_error(e, ACNI_E_CONFIG,
				  "qdisc: bad %s (as tc-arbtable(8) takes it: rate 10gbit, burst 30k, mtu 1514, highlimit 16, maxweight 255, handle 1:)",
				  key);
	}
	o->set |= ARBTABLE_Q_MODE;
	o->mode = ARBTABLE_MODE_AUTO;
	return 0;
}

/* Keys the runtime, the conflist or the spec put into every plugin's
 * config, none of them ours.
 */
static int passed_key(const char *key)
{
	static const char *const passed[] = {
		"cniVersion", "cniVersions", "name", "type", "capabilities",
		"runtimeConfig", "args", "prevResult", "dns",
	};
	size_t i;

	for (i = 0; i < sizeof(passed) / sizeof(passed[0]); i++)
		if (!strcmp(key, passed[i]))
			return 1;
	/* reserved to the protocol; GC's list is read in acni_conf_parse */
	return !strncmp(key, "cni.dev/", 8);
}

/*
 * The packet-mark bits other networking software documents as its own.
 * A markMask that overlaps them would have arbtable-cni's skbedit
 * overwrite their bits on a tenant's packets, and its fw filters take
 * their marks for tenants.  Where each layout is documented:
 *
 * - Cilium: pkg/datapath/linux/linux_defaults/mark.go (the comment that
 *   draws the mark) and MARK_MAGIC_* in bpf/lib/common.h: the low 16
 *   bits of the security identity in bits 16-31, the magic mark (proxy,
 *   host, identity, encrypt/decrypt, overlay, SNAT done) in 0x0f00, the
 *   "Kubernetes" nibble 0xf000 (kube-proxy's 0x4000/0x8000 and
 *   Cilium's own 0x1000 for WireGuard; IPsec keeps its key there).
 *   Its bits 0-7 carry the identity's bits 16-23 (the cluster id in a
 *   ClusterMesh), only on packets whose magic nibble says so: not
 *   refused, said in arbtable-cni(8).
 * - Calico (Felix, iptables and nftables dataplanes): iptablesMarkMask,
 *   default 0xffff0000 (FelixConfiguration reference,
 *   docs.tigera.io/calico/latest/reference/resources/felixconfig).
 *   Its eBPF dataplane uses 0x1ff00000, which Felix requires
 *   iptablesMarkMask to include (felix/bpf-gpl/bpf.h): inside the
 *   default mask.
 * - kube-proxy: --iptables-masquerade-bit 14 (0x4000) and the kubelet's
 *   --iptables-drop-bit 15 (0x8000) (kube-proxy and kubelet reference).
 * - the CNI portmap plugin (markMasqBit, default 13: 0x2000; its
 *   README), which podman's CNI configs chain, and netavark, podman's
 *   network backend, which marks hostport traffic for masquerade with
 *   the same 0x2000.
 * Flannel documents no packet mark of its own; Weave Net's network
 * policy controller uses 0x40000 (npc/constants.go): inside Calico's
 * and Cilium's ranges, refused with them.
 *
 * The default, 0x0000007f, is outside all of the above, and outside
 * the AWS VPC CNI's connmark 0x80 (AWS_VPC_K8S_CNI_CONNMARK); it holds
 * 127 tenants, more than the 64 classes of a qdisc.  The previous
 * default 0x00ff0000 overlapped Cilium's identity and Calico's mask.
 */
static const struct {
	const char	*name;		/* in allowMarkOverlap */
	const char	*who;		/* in the refusal */
	uint32_t	bits;
} mark_owners[] = {
	{ "cilium", "Cilium's identity and magic mark bits", 0xffffff00 },
	{ "calico", "Calico's iptablesMarkMask default (its eBPF dataplane's 0x1ff00000 within)", 0xffff0000 },
	{ "kube-proxy", "kube-proxy's masquerade and drop bits", 0x0000c000 },
	{ "portmap", "the masquerade bit of the CNI portmap plugin and podman's netavark", 0x00002000 },
};
#define N_MARK_OWNERS	(sizeof(mark_owners) / sizeof(mark_owners[0]))

/* allowMarkOverlap: ["cilium", ...], the owners the node does not run */
static int parse_mark_allow(struct acni_conf *c, json_object *v,
			    struct acni_err *e)
{
	size_t i, n, k;

	if (!json_object_is_type(v, json_type_array))
		return acni_error(e, ACNI_E_CONFIG,
				  "allowMarkOverlap must be a list of names (cilium, calico, kube-proxy, portmap)");
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(v, i);

		for (k = 0; k < N_MARK_OWNERS; k++)
			if (json_object_is_type(s, json_type_string) &&
			    !strcmp(json_object_get_string(s),
				    mark_owners[k].name))
				break;
		if (k == N_MARK_OWNERS)
			return acni_error(e, ACNI_E_CONFIG,
					  "allowMarkOverlap[%zu] %.64s: want one of cilium, calico, kube-proxy, portmap",
					  i, json_object_to_json_string_ext(s,
						JSON_C_TO_STRING_PLAIN));
		c->mark_allow |= 1u << k;
	}
	return 0;
}

static int parse_key(struct acni_conf *c, const char *key, json_object *v,
		     struct acni_err *e)
{
	char buf[256];

	if (!strcmp(key, "device")) {
		if (!json_object_is_type(v, json_type_string) ||
		    !json_object_get_string_len(v) ||
		    json_object_get_string_len(v) >= (int)sizeof(c->device) ||
		    strchr(json_object_get_string(v), '/') ||
		    json_object_get_string(v)[0] == '.')
			return acni_error(e, ACNI_E_CONFIG,
					  "device must be an interface name (1..15 characters)");
		strcpy(c->device, json_object_get_string(v));
	} else if (!strcmp(key, "qdisc")) {
		if (parse_qdisc(c, v, e))
			return -1;
	} else if (!strcmp(key, "defaultShare")) {
		if (acni_value_text(v, buf, sizeof(buf)) < 0 ||
		    arbt_parse_u32(buf, 10, &c->default_share) < 0 ||
		    !c->default_share ||
		    c->default_share > ARBTABLE_WEIGHT_MAX)
			return acni_error(e, ACNI_E_CONFIG,
					  "defaultShare must be 1..255");
	} else if (!strcmp(key, "markMask")) {
		if (get_hex32(v, key, &c->mark_mask, e))
			return -1;
	} else if (!strcmp(key, "allowMarkOverlap")) {
		if (parse_mark_allow(c, v, e))
			return -1;
	} else if (!strcmp(key, "minorBase")) {
		if (get_hex32(v, key, &c->minor_base, e))
			return -1;
	} else if (!strcmp(key, "filterPrio")) {
		if (get_hex32(v, key, &c->prio, e))
			return -1;
		if (!c->prio || c->prio > 0xffff)
			return acni_error(e, ACNI_E_CONFIG,
					  "filterPrio must be 1..65535");
	} else if (!strcmp(key, "systemClass")) {
		if (acni_system_parse(c, v, e))
			return -1;
	} else {
		return acni_error(e, ACNI_E_FIELD,
				  "unknown key \"%s\" (value %.64s) in the network config (known: device, qdisc, systemClass, defaultShare, markMask, allowMarkOverlap, minorBase, filterPrio, stateDir)",
				  key, json_object_to_json_string_ext(v,
					JSON_C_TO_STRING_PLAIN |
					JSON_C_TO_STRING_NOSLASHESCAPE));
	}
	return 0;
}

/* Reported, not fatal, when the command is lenient */
static int conf_problem(const struct acni_conf *c, struct acni_err *e)
{
	if (!c->lenient)
		return -1;
	fprintf(stderr, "arbtable-cni: ignored: %s\n", e->msg);
	e->code = 0;
	e->msg[0] = '\0';
	return 0;
}

static int parse_keys(struct acni_conf *c, struct acni_err *e)
{
	json_object *v;

	/* first: even a lenient command must know where its state is */
	if (json_object_object_get_ex(c->root, "stateDir", &v)) {
		if (!json_object_is_type(v, json_type_string) ||
		    json_object_get_string(v)[0] != '/' ||
		    json_object_get_string_len(v) >= 200)
			return acni_error(e, ACNI_E_CONFIG,
					  "stateDir must be an absolute path");
		strcpy(c->state_dir, json_object_get_string(v));
	}
	json_object_object_foreach(c->root, key, val) {
		if (passed_key(key) || !strcmp(key, "stateDir"))
			continue;
		if (parse_key(c, key, val, e) < 0 && conf_problem(c, e) < 0)
			return -1;
	}
	return 0;
}

/* cni.dev/valid-attachments: [{"containerID": ..., "ifname": ...}, ...].
 * A malformed list is refused whatever the command: GC must not take it
 * for "nothing is valid".
 */
static int parse_valid(struct acni_conf *c, struct acni_err *e)
{
	json_object *a;
	size_t i, n;

	if (!json_object_object_get_ex(c->root, ACNI_VALID_KEY, &a))
		return 0;
	if (!json_object_is_type(a, json_type_array))
		return acni_error(e, ACNI_E_CONFIG, "%s must be an array",
				  ACNI_VALID_KEY);
	n = json_object_array_length(a);
	for (i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(a, i), *id, *ifn;

		if (!json_object_is_type(o, json_type_object) ||
		    !json_object_object_get_ex(o, "containerID", &id) ||
		    !json_object_object_get_ex(o, "ifname", &ifn) ||
		    !json_object_is_type(id, json_type_string) ||
		    !json_object_is_type(ifn, json_type_string))
			return acni_error(e, ACNI_E_CONFIG,
					  "%s[%zu]: want {\"containerID\": string, \"ifname\": string}",
					  ACNI_VALID_KEY, i);
	}
	c->valid = a;
	return 0;
}

/* A markMask that overlaps an owner's bits, unless allowMarkOverlap
 * names it
 */
static int mark_owned(const struct acni_conf *c, struct acni_err *e)
{
	char buf[sizeof(e->msg)];
	size_t k, n = 0;
	int found = 0;

	for (k = 0; k < N_MARK_OWNERS; k++) {
		uint32_t common = c->mark_mask & mark_owners[k].bits;

		if (!common || (c->mark_allow & (1u << k)))
			continue;
		n += snprintf(buf + n, sizeof(buf) - n,
			      "%s%s 0x%08x (\"%s\", 0x%08x in common)",
			      found++ ? "; " : "", mark_owners[k].who,
			      mark_owners[k].bits, mark_owners[k].name, common);
		if (n >= sizeof(buf))
			break;
	}
	if (!found)
		return 0;
	return acni_error(e, ACNI_E_CONFIG,
			  "markMask 0x%08x overlaps packet-mark bits others own: %s. Choose bits outside them (the default 0x0000007f is), or name in allowMarkOverlap those the node does not run",
			  c->mark_mask, buf);
}

/* The mark field: a contiguous run of bits; tenant t is marked t << shift */
static int mark_field(struct acni_conf *c, struct acni_err *e)
{
	uint32_t m = c->mark_mask, field;

	if (!m)
		return acni_error(e, ACNI_E_CONFIG, "markMask must not be 0");
	c->mark_shift = __builtin_ctz(m);
	field = m >> c->mark_shift;
	if (field & (field + 1))
		return acni_error(e, ACNI_E_CONFIG,
				  "markMask 0x%08x: the bits must be contiguous",
				  m);
	if (field < ARBTABLE_MAX_CLASSES)
		return acni_error(e, ACNI_E_CONFIG,
				  "markMask 0x%08x holds %u tenants, fewer than the %u classes a qdisc can have",
				  m, field, ARBTABLE_MAX_CLASSES);
	if (!c->minor_base || c->minor_base >= 0xffff - ARBTABLE_MAX_CLASSES)
		return acni_error(e, ACNI_E_CONFIG,
				  "minorBase 0x%x: want 1..0x%x", c->minor_base,
				  0xffff - ARBTABLE_MAX_CLASSES - 1);
	c->span = field;
	if (c->span > 0xffff - c->minor_base)
		c->span = 0xffff - c->minor_base;
	return mark_owned(c, e);
}

/* cniVersion, or when a config has only cniVersions (the runtime picks
 * and sets cniVersion; this is for one that did not) the highest of them
 * the plugin speaks
 */
static int parse_version(struct acni_conf *c, struct acni_err *e)
{
	json_object *v, *list;
	const char *pick;

	if (json_object_object_get_ex(c->root, "cniVersions", &list) &&
	    !json_object_is_type(list, json_type_array))
		return acni_error(e, ACNI_E_CONFIG,
				  "cniVersions must be a list of versions");
	if (json_object_object_get_ex(c->root, "cniVersion", &v)) {
		if (!json_object_is_type(v, json_type_string) ||
		    json_object_get_string_len(v) >= (int)sizeof(c->cni_version))
			return acni_error(e, ACNI_E_CONFIG,
					  "cniVersion must be a version string (\"1.1.0\")");
		strcpy(c->cni_version, json_object_get_string(v));
		return 0;
	}
	if (!list)
		return acni_error(e, ACNI_E_CONFIG,
				  "cniVersion missing from the network config");
	pick = acni_version_pick(list);
	if (!pick) {
		char vers[128];

		acni_versions_text(vers, sizeof(vers));
		return acni_error(e, ACNI_E_VERSION,
				  "cniVersions %s: none supported (supported: %s)",
				  json_object_to_json_string_ext(list,
					JSON_C_TO_STRING_PLAIN), vers);
	}
	snprintf(c->cni_version, sizeof(c->cni_version), "%s", pick);
	return 0;
}

int acni_conf_parse(struct acni_conf *c, const char *text,
		    const struct acni_env *env, int lenient,
		    struct acni_err *e)
{
	enum json_tokener_error jerr;
	json_object *v;

	memset(c, 0, sizeof(*c));
	c->lenient = lenient;
	c->default_share = 1;
	c->mark_mask = ACNI_MARK_MASK_DEFAULT;
	c->minor_base = 0x100;
	c->prio = 100;
	c->handle = 1u << 16;
	snprintf(c->state_dir, sizeof(c->state_dir), "%s", ACNI_STATE_DIR);

	c->root = json_tokener_parse_verbose(text, &jerr);
	if (!c->root)
		return acni_error(e, ACNI_E_DECODE,
				  "the network config on stdin is not JSON: %s",
				  jerr == json_tokener_continue ?
				  "it ends in the middle of a value" :
				  json_tokener_error_desc(jerr));
	if (!json_object_is_type(c->root, json_type_object))
		return acni_error(e, ACNI_E_DECODE,
				  "the network config must be a JSON object");
	if (parse_version(c, e))
		return -1;
	if (json_object_object_get_ex(c->root, "name", &v) &&
	    json_object_is_type(v, json_type_string))
		snprintf(c->name, sizeof(c->name), "%s",
			 json_object_get_string(v));
	if (json_object_object_get_ex(c->root, "prevResult", &v) &&
	    !json_object_is_type(v, json_type_null))
		c->prev_result = v;
	if (parse_valid(c, e) || parse_keys(c, e))
		return -1;
	if (mark_field(c, e) && conf_problem(c, e))
		return -1;
	if (acni_system_check(c, e) && conf_problem(c, e))
		return -1;
	if (!c->device[0] && !c->lenient)
		return acni_error(e, ACNI_E_CONFIG,
				  "device missing: name the egress NIC whose arbtable root admits the tenants (\"device\": \"eth0\")");
	/* DEL and CHECK work from what ADD stored: a request ADD refused
	 * (a typo in an annotation) must not keep DEL from cleaning up
	 */
	if (!env->command || strcmp(env->command, "ADD"))
		return 0;
	return req_parse(c, env, e);
}

void acni_conf_free(struct acni_conf *c)
{
	if (c->root)
		json_object_put(c->root);
	c->root = NULL;
}
