// SPDX-License-Identifier: GPL-2.0
/*
 * state-check.c - cni/state.c's records on their own.
 *
 * A record is written under arbtablectl --json's keys (the class's
 * options, what was allocated under "stats", tc handle strings) and read
 * back whole; records as earlier versions wrote them (numbers for class
 * ids, a "request" object with a "set" mask, camelCase allocation keys,
 * with and without "phase") are still read, field by field, so a node
 * upgraded with pods running still DELs and CHECKs them.  Damaged records
 * of either form are told apart from good ones.  Given arbtablectl(8)'s
 * source, every key the class is written under must be one its JSON
 * section names.
 *
 * usage: state-check [Documentation/arbtablectl.8]
 * Ends with "N passed, N failed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cni.h"

static char dir[] = "/tmp/acni-state-XXXXXX";

static const char *put(const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

static const char *slurp(const char *path)
{
	static char buf[4096];
	size_t n;
	FILE *f = fopen(path, "r");

	n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	buf[n] = '\0';
	if (f)
		fclose(f);
	return buf;
}

/* A tenant as ADD records it: rate + latency, admitted */
static void tenant(struct acni_state *s)
{
	memset(s, 0, sizeof(*s));
	s->complete = 1;
	snprintf(s->device, sizeof(s->device), "eth0");
	snprintf(s->host_ifname, sizeof(s->host_ifname), "veth1234");
	s->host_ifindex = 17;
	s->created_clsact = 1;
	s->classid = 0x10101;
	s->tenant = 1;
	s->mark = 0x10000;
	s->mark_mask = 0xff0000;
	s->prio = 100;
	s->parent = 0x10000;
	s->req.set = ARBTABLE_C_RATE | ARBTABLE_C_LATENCY | ARBTABLE_C_CEIL;
	s->req.rate = 250000;
	s->req.latency_ns = 20000000;
	s->req.ceil = 1250000;
	s->distance = 8;
	s->reserved_rate = 250000;
	s->guaranteed_rate = 262144;
	s->guaranteed_bound_ns = 19500000;
}

static int same(const struct acni_state *a, const struct acni_state *b)
{
	return a->complete == b->complete && !strcmp(a->device, b->device) &&
	       !strcmp(a->host_ifname, b->host_ifname) &&
	       a->host_ifindex == b->host_ifindex &&
	       a->created_clsact == b->created_clsact &&
	       a->best_effort == b->best_effort &&
	       a->classid == b->classid && a->tenant == b->tenant &&
	       a->mark == b->mark && a->mark_mask == b->mark_mask &&
	       a->prio == b->prio && a->parent == b->parent &&
	       a->req.set == b->req.set && a->req.rate == b->req.rate &&
	       a->req.latency_ns == b->req.latency_ns &&
	       a->req.distance == b->req.distance &&
	       a->req.share == b->req.share && a->req.ceil == b->req.ceil &&
	       a->distance == b->distance &&
	       a->reserved_rate == b->reserved_rate &&
	       a->guaranteed_rate == b->guaranteed_rate &&
	       a->guaranteed_bound_ns == b->guaranteed_bound_ns;
}

/* @key as a bold word (".B key", ".BR key ,", "(.BR key") in [@from, @to) */
static int bold_word(const char *from, const char *to, const char *key)
{
	static const char *const macros[] = { ".B ", ".BR " };
	char word[64];
	const char *hit;
	size_t i, l;

	for (i = 0; i < 2; i++) {
		l = snprintf(word, sizeof(word), "%s%s", macros[i], key);
		for (hit = from; (hit = strstr(hit, word)) && hit < to; hit++)
			if (hit[l] == ' ' || hit[l] == '\n')
				return 1;
	}
	return 0;
}

/* Every key of the class object and its stats is one arbtablectl(8)'s
 * JSON section names
 */
static void keys_documented(const char *man, const char *path)
{
	json_object *o = json_object_from_file(path), *c = NULL, *st = NULL;
	const char *json = man ? strstr(man, "\n.SH JSON\n") : NULL;
	const char *end = json ? strstr(json + 1, "\n.SH ") : NULL;
	char what[128];
	int i;

	if (!man)
		return;
	if (!end || !o || !json_object_object_get_ex(o, "class", &c) ||
	    !json_object_object_get_ex(c, "stats", &st)) {
		check(0, "arbtablectl(8) has a JSON section, the record a class", NULL);
		return;
	}
	for (i = 0; i < 2; i++) {
		json_object_object_foreach(i ? st : c, key, v) {
			(void)v;
			if (!strcmp(key, "stats"))
				continue;
			snprintf(what, sizeof(what), "key %s%s is arbtablectl's (arbtablectl.8, JSON)",
				 i ? "stats." : "class.", key);
			check(bold_word(json, end, key), what, NULL);
		}
	}
	json_object_put(o);
}

/* Written, read back, and the keys where arbtablectl has them */
static void new_format(const char *man)
{
	static const char *const keys[] = {
		"\"class\"", "\"handle\":\"1:101\"", "\"parent\":\"1:\"",
		"\"rate\":250000", "\"latency\":20000000", "\"ceil\":1250000",
		"\"stats\"", "\"allocated_distance\":8",
		"\"reserved_rate\":250000", "\"guaranteed_rate\":262144",
		"\"guaranteed_bound\":19500000",
	};
	static const char *const gone[] = {
		"\"classid\"", "\"request\"", "\"set\"", "\"latencyNs\"",
		"\"guaranteedRate\"", "\"guaranteedBoundNs\"", "\"share\"",
		"\"distance\"",
	};
	struct acni_state s, r;
	struct acni_err e = { 0 };
	char path[256], what[128];
	const char *text;
	size_t i;

	tenant(&s);
	snprintf(path, sizeof(path), "%s/c1-eth0.json", dir);
	check(acni_state_write(path, &s, &e) == 0, "a record written", e.msg);
	check(acni_state_read(path, &r, &e) == 1 && same(&s, &r),
	      "read back whole (options, allocation, handles)", e.msg);
	keys_documented(man, path);
	text = slurp(path);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		snprintf(what, sizeof(what), "written: %s", keys[i]);
		check(strstr(text, keys[i]) != NULL, what, text);
	}
	/* options not asked for are left out, as arbtablectl leaves them */
	for (i = 0; i < sizeof(gone) / sizeof(gone[0]); i++) {
		snprintf(what, sizeof(what), "not written: %s", gone[i]);
		check(strstr(text, gone[i]) == NULL, what, text);
	}

	/* a share class with a distance, a member of the shared class */
	memset(&s.req, 0, sizeof(s.req));
	s.req.set = ARBTABLE_C_SHARE | ARBTABLE_C_DISTANCE;
	s.req.share = 3;
	s.req.distance = 16;
	s.best_effort = 1;
	s.complete = 0;
	check(acni_state_write(path, &s, &e) == 0 &&
	      acni_state_read(path, &r, &e) == 1 && same(&s, &r),
	      "share 3 distance 16, bestEffort, phase adding: read back whole",
	      e.msg);
	text = slurp(path);
	check(strstr(text, "\"share\":3") && strstr(text, "\"distance\":16") &&
	      !strstr(text, "\"rate\":") && strstr(text, "\"phase\":\"adding\""),
	      "written: share and distance, no rate, phase adding", text);
}

/* What the release before this one wrote, key for key */
static const char old_added[] =
	"{\n"
	"  \"phase\": \"added\",\n"
	"  \"device\": \"eth0\",\n"
	"  \"hostIfname\": \"veth1234\",\n"
	"  \"classid\": 65793,\n"
	"  \"tenant\": 1,\n"
	"  \"mark\": 65536,\n"
	"  \"markMask\": 16711680,\n"
	"  \"prio\": 100,\n"
	"  \"parent\": 65536,\n"
	"  \"hostIfindex\": 17,\n"
	"  \"createdClsact\": 1,\n"
	"  \"distance\": 8,\n"
	"  \"guaranteedRate\": 262144,\n"
	"  \"guaranteedBoundNs\": 19500000,\n"
	"  \"request\": {\n"
	"    \"set\": %u,\n"
	"    \"rate\": 250000,\n"
	"    \"latencyNs\": 20000000,\n"
	"    \"distance\": 0,\n"
	"    \"share\": 0,\n"
	"    \"ceil\": 1250000\n"
	"  }\n"
	"}\n";

static void old_format(void)
{
	struct acni_state want, r;
	struct acni_err e = { 0 };
	char text[1024];
	const char *path;

	tenant(&want);
	want.reserved_rate = 0;		/* not recorded then */
	snprintf(text, sizeof(text), old_added, want.req.set);
	path = put("old-eth0.json", text);
	check(acni_state_read(path, &r, &e) == 1 && same(&want, &r),
	      "an earlier version's record (phase added): every field read",
	      e.msg);

	/* before phases: written when ADD was done */
	path = put("older-eth0.json",
		   "{\"device\":\"eth0\",\"hostIfname\":\"vh-x\",\"classid\":65793,"
		   "\"tenant\":1,\"mark\":65536,\"markMask\":16711680,\"prio\":100,"
		   "\"parent\":65536,\"hostIfindex\":5}");
	check(acni_state_read(path, &r, &e) == 1 && r.complete &&
	      r.classid == 0x10101 && r.parent == 0x10000 && r.prio == 100 &&
	      r.host_ifindex == 5 && !r.req.set,
	      "a record without phase or request: complete, class 1:101 under 1:",
	      e.msg);

	/* the shared class's description as conf-check.sh writes it */
	path = put(".besteffort-eth9.json",
		   "{\"device\":\"eth9\",\"classid\":65837,\"tenant\":45,"
		   "\"mark\":2949120,\"markMask\":16711680,\"prio\":100,"
		   "\"parent\":65536,\"request\":{\"set\":8,\"share\":1}}");
	check(acni_state_read(path, &r, &e) == 1 && r.classid == 0x1012d &&
	      r.req.set == ARBTABLE_C_SHARE && r.req.share == 1,
	      "an earlier best-effort description: class 1:12d, share 1", e.msg);

	/* an intent an earlier version recorded before its admission */
	path = put("oldintent-eth0.json",
		   "{\"phase\":\"adding\",\"device\":\"eth0\",\"hostIfname\":\"vh-x\","
		   "\"classid\":65793,\"tenant\":1,\"mark\":65536,\"markMask\":16711680,"
		   "\"prio\":100,\"parent\":65536,\"hostIfindex\":5,\"createdClsact\":0,"
		   "\"distance\":0,\"guaranteedRate\":0,\"guaranteedBoundNs\":0,"
		   "\"request\":{\"set\":8,\"rate\":0,\"latencyNs\":0,\"distance\":0,"
		   "\"share\":2,\"ceil\":0}}");
	check(acni_state_read(path, &r, &e) == 1 && !r.complete &&
	      r.classid == 0x10101 && r.req.set == ARBTABLE_C_SHARE &&
	      r.req.share == 2,
	      "an earlier version's intent (phase adding): not complete, share 2",
	      e.msg);
}

static void damaged(void)
{
	static const char *const bad[][2] = {
		{ "new format, handle not a class id",
		  "{\"device\":\"eth0\",\"prio\":100,\"parent\":\"1:\",\"class\":{\"handle\":\"x:1\"}}" },
		{ "new format, no parent",
		  "{\"device\":\"eth0\",\"prio\":100,\"class\":{\"handle\":\"1:101\"}}" },
		{ "new format, handle a number",
		  "{\"device\":\"eth0\",\"prio\":100,\"parent\":\"1:\",\"class\":{\"handle\":65793}}" },
		{ "old format, no classid",
		  "{\"device\":\"eth0\",\"prio\":100,\"parent\":65536}" },
		{ "unknown phase",
		  "{\"phase\":\"gone\",\"device\":\"eth0\",\"prio\":100,\"parent\":\"1:\",\"class\":{\"handle\":\"1:101\"}}" },
		{ "empty", "" },
	};
	struct acni_err e = { 0 };
	struct acni_state r;
	char what[128];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(what, sizeof(what), "damaged: %s", bad[i][0]);
		check(acni_state_read(put("bad-eth0.json", bad[i][1]), &r,
				      &e) == ACNI_STATE_DAMAGED, what, e.msg);
	}
}

int main(int argc, char **argv)
{
	char cmd[64];
	char *man = NULL;
	FILE *f = argc > 1 ? fopen(argv[1], "r") : NULL;

	if (f) {
		man = calloc(1, 1 << 20);
		if (!man || fread(man, 1, (1 << 20) - 1, f) == 0)
			return 1;
		fclose(f);
	} else if (argc > 1) {
		perror(argv[1]);
		return 1;
	}

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	new_format(man);
	old_format();
	damaged();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	free(man);
	return check_done();
}
