// SPDX-License-Identifier: GPL-2.0
/*
 * result-check.c - cni/version.c on its own: the versions the plugin
 * accepts, cniVersions picking, and the result (prevResult passed
 * through) written for each version: ips' "version" for 0.3.x/0.4.0 and
 * none for 1.x, the 1.1 interface and route fields only from 1.1.0, the
 * input left as it was.  Ends with "N passed, N failed".
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cni.h"

static const char *text(json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					      JSON_C_TO_STRING_NOSLASHESCAPE);
}

static const char prev[] =
	"{\"cniVersion\":\"1.1.0\","
	"\"interfaces\":[{\"name\":\"vh\",\"mac\":\"02:00:00:00:00:01\",\"mtu\":1500,\"socketPath\":\"/s\",\"pciID\":\"0000:00:01.0\"},"
	"{\"name\":\"eth0\",\"sandbox\":\"/run/netns/x\"}],"
	"\"ips\":[{\"address\":\"10.88.0.2/24\",\"gateway\":\"10.88.0.1\",\"interface\":1},"
	"{\"version\":\"6\",\"address\":\"fd00::2/64\",\"interface\":1}],"
	"\"routes\":[{\"dst\":\"0.0.0.0/0\",\"mtu\":1400,\"advmss\":1360,\"priority\":5,\"table\":100,\"scope\":0}],"
	"\"dns\":{\"nameservers\":[\"10.88.0.1\"]}}";

static const char *want[][2] = {
	{ "0.3.0", "{\"cniVersion\":\"0.3.0\",\"interfaces\":[{\"name\":\"vh\",\"mac\":\"02:00:00:00:00:01\"},{\"name\":\"eth0\",\"sandbox\":\"/run/netns/x\"}],\"ips\":[{\"address\":\"10.88.0.2/24\",\"gateway\":\"10.88.0.1\",\"interface\":1,\"version\":\"4\"},{\"version\":\"6\",\"address\":\"fd00::2/64\",\"interface\":1}],\"routes\":[{\"dst\":\"0.0.0.0/0\"}],\"dns\":{\"nameservers\":[\"10.88.0.1\"]}}" },
	{ "0.3.1", "{\"cniVersion\":\"0.3.1\",\"interfaces\":[{\"name\":\"vh\",\"mac\":\"02:00:00:00:00:01\"},{\"name\":\"eth0\",\"sandbox\":\"/run/netns/x\"}],\"ips\":[{\"address\":\"10.88.0.2/24\",\"gateway\":\"10.88.0.1\",\"interface\":1,\"version\":\"4\"},{\"version\":\"6\",\"address\":\"fd00::2/64\",\"interface\":1}],\"routes\":[{\"dst\":\"0.0.0.0/0\"}],\"dns\":{\"nameservers\":[\"10.88.0.1\"]}}" },
	{ "0.4.0", "{\"cniVersion\":\"0.4.0\",\"interfaces\":[{\"name\":\"vh\",\"mac\":\"02:00:00:00:00:01\"},{\"name\":\"eth0\",\"sandbox\":\"/run/netns/x\"}],\"ips\":[{\"address\":\"10.88.0.2/24\",\"gateway\":\"10.88.0.1\",\"interface\":1,\"version\":\"4\"},{\"version\":\"6\",\"address\":\"fd00::2/64\",\"interface\":1}],\"routes\":[{\"dst\":\"0.0.0.0/0\"}],\"dns\":{\"nameservers\":[\"10.88.0.1\"]}}" },
	{ "1.0.0", "{\"cniVersion\":\"1.0.0\",\"interfaces\":[{\"name\":\"vh\",\"mac\":\"02:00:00:00:00:01\"},{\"name\":\"eth0\",\"sandbox\":\"/run/netns/x\"}],\"ips\":[{\"address\":\"10.88.0.2/24\",\"gateway\":\"10.88.0.1\",\"interface\":1},{\"address\":\"fd00::2/64\",\"interface\":1}],\"routes\":[{\"dst\":\"0.0.0.0/0\"}],\"dns\":{\"nameservers\":[\"10.88.0.1\"]}}" },
	{ "1.1.0", "{\"cniVersion\":\"1.1.0\",\"interfaces\":[{\"name\":\"vh\",\"mac\":\"02:00:00:00:00:01\",\"mtu\":1500,\"socketPath\":\"/s\",\"pciID\":\"0000:00:01.0\"},{\"name\":\"eth0\",\"sandbox\":\"/run/netns/x\"}],\"ips\":[{\"address\":\"10.88.0.2/24\",\"gateway\":\"10.88.0.1\",\"interface\":1},{\"address\":\"fd00::2/64\",\"interface\":1}],\"routes\":[{\"dst\":\"0.0.0.0/0\",\"mtu\":1400,\"advmss\":1360,\"priority\":5,\"table\":100,\"scope\":0}],\"dns\":{\"nameservers\":[\"10.88.0.1\"]}}" },
};

int main(void)
{
	json_object *in = json_tokener_parse(prev), *r, *l;
	char before[2048], what[128];
	const char *p;
	size_t i;

	snprintf(before, sizeof(before), "%s", text(in));
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		json_object *w = json_tokener_parse(want[i][1]);

		r = acni_result(in, want[i][0]);
		snprintf(what, sizeof(what), "result at %s", want[i][0]);
		check(json_object_equal(r, w), what, text(r));
		json_object_put(r);
		json_object_put(w);
	}
	check(!strcmp(before, text(in)), "prevResult itself unchanged", text(in));

	r = acni_result(NULL, "0.4.0");
	check(!strcmp(text(r), "{\"cniVersion\":\"0.4.0\"}"),
	      "no prevResult: {cniVersion} only", text(r));
	json_object_put(r);

	check(acni_version_supported("0.3.0") && acni_version_supported("1.1.0") &&
	      !acni_version_supported("0.2.0") && !acni_version_supported("1.1") &&
	      !acni_version_supported("2.0.0"),
	      "supported: 0.3.0 .. 1.1.0, not 0.2.0, 1.1, 2.0.0", NULL);
	check(acni_version_ge("1.1.0", "1.1.0") && acni_version_ge("1.10.0", "1.9.0") &&
	      !acni_version_ge("0.4.0", "1.1.0") && !acni_version_ge("x", "0.3.0"),
	      "version order numeric (1.10.0 > 1.9.0), garbage never >=", NULL);

	l = json_tokener_parse("[\"0.4.0\", 7, \"1.1.0\", \"2.0.0\", \"1.0.0\"]");
	p = acni_version_pick(l);
	check(p && !strcmp(p, "1.1.0"), "cniVersions [0.4.0, 7, 1.1.0, 2.0.0, 1.0.0] -> 1.1.0", p);
	json_object_put(l);
	l = json_tokener_parse("[\"2.0.0\", \"0.1.0\"]");
	check(!acni_version_pick(l), "cniVersions [2.0.0, 0.1.0] -> none", NULL);
	json_object_put(l);

	json_object_put(in);
	return check_done();
}
