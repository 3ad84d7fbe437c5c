#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# deploy/kubernetes on the host, without Kubernetes:
#   - the scripts parse and pass shellcheck;
#   - the manifests parse as YAML and hold what the others rely on (names,
#     RBAC verbs, hostPath volumes and their mounts, the downward-API node
#     name, scripts the image ships);
#   - the node translation (arbtable-resources.sh) on fixtures: the root
#     as arbtable-cni makes it (its system class alone), the same with
#     pods (the shared best-effort class among them), a full table, a
#     fragmented one without a default class (tests/kubernetes/fixtures:
#     the JSON in the shape arbtablectl prints, written by hand with
#     consistent counts; slot positions illustrative, the translation
#     reads counts), the tenant minor range, the merge patches;
#   - the pod translation: the table in
#     Documentation/networking/arbtable-kubernetes.rst and example-pod.yaml
#     agree with `arbtablectl request` (device-less);
#   - the installer (a stub plugin answering VERSION and STATUS) chains
#     after a .conflist and a .conf keeping their versions, installs
#     idempotently, does not chain without the module, for a version the
#     plugin does not speak or a STATUS code 50, unchains when the primary
#     goes; the real plugin accepts the entry it writes;
#   - the agent against stub-apiserver.py (agent-check.sh): token, own
#     node, bodies, lock, bad ConfigMap values, SIGTERM as PID 1, probes.
# Ends with "N passed, N failed".
# ok never fails, so "CHECK && ok ... || bad ..." is an if/else here:
# shellcheck disable=SC2015
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
K=$ROOT/deploy/kubernetes
FX=$ROOT/tests/kubernetes/fixtures
CTL=$ROOT/build/tools/arbtablectl
CNI=$ROOT/build/cni/arbtable-cni
DOC=$ROOT/Documentation/networking/arbtable-kubernetes.rst
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
# t DESC CMD...: passes when CMD exits 0
t() {
	local d=$1 out
	shift
	if out=$("$@" 2>&1); then ok "$d"; else bad "$d: $out"; fi
}
for f in "$CTL" "$CNI"; do
	[ -x "$f" ] || { echo "FAIL $f not built (make lib cni)"; echo "0 passed, 1 failed"; exit 1; }
done
command -v jq >/dev/null || { echo "FAIL jq missing (scripts/setup.sh)"; echo "0 passed, 1 failed"; exit 1; }
# shellcheck source-path=SCRIPTDIR source=../../deploy/kubernetes/arbtable-resources.sh
. "$K/arbtable-resources.sh"

# ------------------------------------------------------------ scripts
for f in "$K"/*.sh; do
	t "${f##*/}: bash -n" bash -n "$f"
done
if command -v shellcheck >/dev/null; then
	t "shellcheck deploy/kubernetes/*.sh" shellcheck -x "$K"/*.sh
else
	bad "shellcheck missing (scripts/setup.sh installs it)"
fi

# ------------------------------------------------------------ manifests
yaml_check() {
	python3 - "$K" <<'EOF'
import os, sys, yaml
k = sys.argv[1]
docs = {}
for f in sorted(os.listdir(k)):
    if f.endswith(".yaml"):
        for d in yaml.safe_load_all(open(os.path.join(k, f))):
            docs[(d["kind"], d["metadata"]["name"])] = d
fails = []
def need(c, what):
    print(("ok   " if c else "FAIL ") + what)
need(len(docs) == 8, "manifests: ServiceAccount, ClusterRole, ClusterRoleBinding, ValidatingAdmissionPolicy and its binding, ConfigMap, DaemonSet, Pod (%d documents)" % len(docs))
sa = docs.get(("ServiceAccount", "arbtable-node"), {})
need(sa.get("metadata", {}).get("namespace") == "kube-system", "ServiceAccount arbtable-node in kube-system")
cr = docs.get(("ClusterRole", "arbtable-node"), {})
rules = {r: set(x["verbs"]) for x in cr.get("rules", []) for r in x["resources"] if x["apiGroups"] == [""]}
need(rules.get("nodes") == {"get", "patch"} and rules.get("nodes/status") == {"patch"},
     "ClusterRole: nodes get/patch, nodes/status patch, nothing else (%s)" % rules)
crb = docs.get(("ClusterRoleBinding", "arbtable-node"), {})
need(crb.get("roleRef", {}).get("name") == "arbtable-node" and
     {"kind": "ServiceAccount", "name": "arbtable-node", "namespace": "kube-system"} in crb.get("subjects", []),
     "ClusterRoleBinding binds the role to the ServiceAccount")
cm = docs.get(("ConfigMap", "arbtable-node"), {}).get("data", {})
keys = {"ARBTABLE_DEVICE", "ARBTABLE_QDISC", "ARBTABLE_SYSTEM_CLASS", "ARBTABLE_DEFAULT_SHARE", "ARBTABLE_MARK_MASK", "ARBTABLE_MINOR_BASE", "ARBTABLE_INTERVAL"}
need(set(cm) == keys and all(isinstance(v, str) for v in cm.values()),
     "ConfigMap: the seven ARBTABLE_* keys, string values")
need(cm.get("ARBTABLE_SYSTEM_CLASS") == "",
     "ConfigMap: the plugin's default system class (rate 1% at distance 64)")
need("rate" not in cm.get("ARBTABLE_QDISC", "").split(),
     "ConfigMap: no rate by default (each root sized to its NIC's link speed)")
vap = docs.get(("ValidatingAdmissionPolicy", "arbtable-node-own-node"), {}).get("spec", {})
vapb = docs.get(("ValidatingAdmissionPolicyBinding", "arbtable-node-own-node"), {}).get("spec", {})
rr = vap.get("matchConstraints", {}).get("resourceRules", [{}])
exprs = " ".join(v.get("expression", "") for v in vap.get("validations", []) + vap.get("variables", []))
need(vap.get("failurePolicy") == "Fail" and
     set(rr[0].get("resources", [])) == {"nodes", "nodes/status"} and "UPDATE" in rr[0].get("operations", []) and
     any("'system:serviceaccount:kube-system:arbtable-node'" in m.get("expression", "") for m in vap.get("matchConditions", [])) and
     "request.userInfo.extra['authentication.kubernetes.io/node-name'][0]" in exprs and
     "object.metadata.name == variables.nodeName" in exprs,
     "ValidatingAdmissionPolicy: the agent's updates of nodes and nodes/status only on the Node of its node-name claim")
need(vapb.get("policyName") == "arbtable-node-own-node" and vapb.get("validationActions") == ["Deny"],
     "ValidatingAdmissionPolicyBinding: the policy, Deny")
ds = docs.get(("DaemonSet", "arbtable-node"), {})
spec = ds.get("spec", {})
pod = spec.get("template", {}).get("spec", {})
need(ds.get("apiVersion") == "apps/v1" and ds["metadata"].get("namespace") == "kube-system", "DaemonSet apps/v1 in kube-system")
need(spec.get("selector", {}).get("matchLabels", {}).items() <= spec["template"]["metadata"]["labels"].items(),
     "DaemonSet selector matches its template's labels")
need(pod.get("hostNetwork") is True, "DaemonSet: hostNetwork (the NIC's qdisc is in the host's namespace)")
need(pod.get("serviceAccountName") == "arbtable-node", "DaemonSet runs as the ServiceAccount")
need({"operator": "Exists"} in pod.get("tolerations", []), "DaemonSet tolerates every taint")
vols = {v["name"]: v["hostPath"]["path"] for v in pod.get("volumes", []) if "hostPath" in v}
need({"/opt/cni/bin", "/etc/cni/net.d", "/opt/arbtable", "/var/lib/arbtable-cni", "/run/arbtable-cni"} <= set(vols.values()),
     "DaemonSet hostPath volumes: /opt/cni/bin, /etc/cni/net.d, /opt/arbtable, /var/lib/arbtable-cni, /run/arbtable-cni")
need(pod.get("nodeSelector") == {"kubernetes.io/os": "linux"}, "DaemonSet: Linux nodes (the module decides the rest)")
ctrs = pod.get("initContainers", []) + pod.get("containers", [])
for c in ctrs:
    mounts = {m["name"]: m["mountPath"] for m in c.get("volumeMounts", [])}
    # the locks at the host's own path: where the plugin the agent runs
    # (--ensure-root) looks for them
    need(all(n in vols and p == ("" if vols[n] == "/run/arbtable-cni" else "/host") + vols[n]
             for n, p in mounts.items()),
         "%s: every mount is a volume, at /host + its host path (the plugin's locks at /run/arbtable-cni)" % c["name"])
    need({"configMapRef": {"name": "arbtable-node"}} in c.get("envFrom", []),
         "%s: environment from the ConfigMap" % c["name"])
    cmd = c.get("command", [""])[0]
    need(cmd.startswith("/usr/local/sbin/") and os.path.exists(os.path.join(k, os.path.basename(cmd))) and
         os.path.basename(cmd) in open(os.path.join(k, "Containerfile")).read(),
         "%s: runs %s, shipped by the Containerfile" % (c["name"], cmd))
agent = [c for c in pod.get("containers", []) if c["name"] == "agent"]
env = {e["name"]: e for e in (agent[0].get("env", []) if agent else [])}
need(env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName",
     "agent: NODE_NAME from the downward API")
need("NET_ADMIN" in (agent[0].get("securityContext", {}).get("capabilities", {}).get("add", []) if agent else []),
     "agent: CAP_NET_ADMIN (it may create the root qdisc)")
am = {m["name"]: m["mountPath"] for m in (agent[0].get("volumeMounts", []) if agent else [])}
need(vols.get([n for n, p in am.items() if p == "/run/arbtable-cni"][0] if "/run/arbtable-cni" in am.values() else "") == "/run/arbtable-cni",
     "agent: the host's /run/arbtable-cni mounted at /run/arbtable-cni (the default ARBTABLE_LOCK_DIR, and where the plugin it runs locks)")
need("ARBTABLE_LOCK_DIR" not in env, "agent: ARBTABLE_LOCK_DIR left to its default")
for pr, arg in (("livenessProbe", "live"), ("readinessProbe", "ready")):
    need((agent[0].get(pr, {}).get("exec", {}).get("command") if agent else None) ==
         ["/usr/local/sbin/arbtable-node-agent.sh", "--probe", arg],
         "agent: %s runs arbtable-node-agent.sh --probe %s" % (pr, arg))
p = docs.get(("Pod", "tenant-a"), {})
ann = p.get("metadata", {}).get("annotations", {})
need(ann and all(a in ("arbtable.io/" + x for x in ("rate", "latency", "distance", "share", "ceil")) for a in ann),
     "example pod: only the annotations arbtable-cni reads")
EOF
}
while read -r line; do
	case $line in
	ok\ *) ok "${line#ok   }" ;;
	*) bad "${line#FAIL }" ;;
	esac
done < <(yaml_check 2>&1)

# ------------------------------------------------------------ node side
read -r lo hi < <(arbt_pod_minors 0x00ff0000 0x100)
[ "$lo $hi" = "257 511" ] && ok "tenant minors by default: 0x101..0x1ff" ||
	bad "tenant minors by default: $lo $hi"
[ "$(arbt_pod_minors 0xffff0000 0xff00)" = "65281 65535" ] &&
	ok "tenant minors cut at 0xffff" || bad "tenant minors 0xffff0000 0xff00: $(arbt_pod_minors 0xffff0000 0xff00)"
for fx in empty node full fragmented; do
	if diff -u <(grep -v '^#' "$FX/$fx.expected") \
		<(arbt_node_values "$FX/$fx.capacity.json" "$FX/$fx.show.json" "$lo" "$hi") >"$T/d"; then
		ok "node values, $fx table"
	else
		bad "node values, $fx table: $(cat "$T/d")"
	fi
done
# the hand arithmetic behind the expected files
v() { grep "^resource arbtable.io/$2 " "$FX/$1.expected" | cut -d' ' -f3; }
w() { grep "^annotation arbtable.io/warning " "$FX/$1.expected" | cut -d' ' -f3-; }
[ "$(v empty high-slots) $(v empty low-slots) $(v empty guaranteed-mbit) $(v empty classes)" = "63 63 9674 62" ] &&
	ok "the root arbtable-cni makes: 63 HIGH slots (64 - the system class's), 63 LOW (64 - the shared best-effort class's), 16320 - 167 system units = 9674 Mbit/s, 62 classes (64 - system - shared)" ||
	bad "empty: expected file changed"
[ "$(grep ^resource "$FX/node.expected")" = "$(grep ^resource "$FX/empty.expected")" ] &&
	[ "$(v node high-slots) $(v node low-slots) $(v node classes)" = "63 63 62" ] &&
	ok "with pods: the same totals (47 free + 16 of the rate pod HIGH; 59 free + 1 shared + 4 of the share pod - 1 LOW; 60 free + 3 pod classes - 1): pods coming and going move nothing" ||
	bad "node: expected file changed"
[ "$(v full high-slots) $(v full low-slots) $(v full guaranteed-mbit) $(v full classes)" = "48 31 7330 61" ] &&
	ok "full: 0 free + 3 x 16 pod HIGH slots, 0 + 32 - 1 LOW, (2220 + 3 x 3340) units = 7330 Mbit/s, 58 + 4 - 1 classes; 1:10 and 1:11 (administrator's) not counted" ||
	bad "full: expected file changed"
[ "$(v fragmented high-slots) $(v fragmented low-slots) $(v fragmented classes)" = "30 63 61" ] &&
	ok "fragmented: 19 free + 8 + 1 + 2 pod HIGH slots (1:200 is outside the tenant minors), 58 + 6 - 1 LOW, 56 + 6 - 1 classes" ||
	bad "fragmented: expected file changed"
[ "$(w empty)$(w node)$(w full)" = nonenonenone ] && grep -q "no default class: the node's own traffic" <<<"$(w fragmented)" &&
	! grep -qi 'max-pods\|maxpods' "$FX"/*.expected &&
	ok "warnings: none with a default class; a root without one is warned of (host traffic starves); maxPods never warned of (pods asking for nothing take no class)" ||
	bad "warnings: $(grep -h warning "$FX"/*.expected)"
echo '{"high":{}}' >"$T/broken.json"
if arbt_node_values "$T/broken.json" "$FX/empty.show.json" "$lo" "$hi" >/dev/null 2>&1; then
	bad "a capacity report without its keys is refused"
else
	ok "a capacity report without its keys is refused"
fi
grep -v '^#' "$FX/full.expected" >"$T/values"
s=$(arbt_patch status "$T/values")
m=$(arbt_patch meta "$T/values")
if [ "$(jq -c '.status.capacity' <<<"$s")" = '{"arbtable.io/high-slots":"48","arbtable.io/low-slots":"31","arbtable.io/guaranteed-mbit":"7330","arbtable.io/classes":"61"}' ] &&
   [ "$(jq -r '.metadata.labels | length' <<<"$m")" = 6 ] &&
   [ "$(jq -r '.metadata.annotations."arbtable.io/free"' <<<"$m")" = "high-slots=0,low-slots=0,units=2220,classes=58" ] &&
   [ "$(jq -c '.metadata.annotations | to_entries | map(select(.value == null) | .key)' <<<"$m")" = '["arbtable.io/pod-classes"]' ]; then
	ok "merge patches: status.capacity's 4 quantities as strings, 6 labels, annotations, the retired pod-classes set to null"
else
	bad "merge patches: $s $m"
fi
# a node that still has the retired annotation is not current; one
# without it is
printf '%s\n' "$m" >"$T/meta.json"
jq '{metadata: {labels: .metadata.labels, annotations: (.metadata.annotations | with_entries(select(.value != null)))}}' \
	"$T/meta.json" >"$T/node-new.json"
jq '.metadata.annotations."arbtable.io/pod-classes" = "62"' "$T/node-new.json" >"$T/node-old.json"
arbt_current "$T/meta.json" "$T/node-new.json" && ! arbt_current "$T/meta.json" "$T/node-old.json" &&
	ok "a node with the retired arbtable.io/pod-classes annotation gets the patch that removes it; without it, none" ||
	bad "arbt_current and the retired annotation"

# ------------------------------------------------------------ pod side
# pod_limits REQUEST-WORDS: "name value,..." from arbtablectl + the function
pod_limits() {
	# shellcheck disable=SC2086
	"$CTL" --json request $1 >"$T/req.json"
	arbt_pod_resources "$T/req.json" | sed 's/^arbtable.io\///' | paste -sd, | sed 's/,/, /g'
}
# the doc's table: rows "| ``annotations`` | ``link`` | limits |" between
# the two markers
rows=$(sed -n '/^\.\. pod-requests-begin/,/^\.\. pod-requests-end/p' "$DOC" 2>/dev/null |
       grep -E '^ *\| *``' | sed -E 's/^ *\| *//; s/ *\| *$//')
n=0
while IFS='|' read -r req link lim; do
	[ -n "$req" ] || continue
	req=$(sed -E 's/``//g; s/arbtable.io\///g; s/: / /g; s/,//g; s/^ *//; s/ *$//' <<<"$req")
	link=$(sed -E 's/``//g; s/^ *//; s/ *$//' <<<"$link")
	lim=$(sed -E 's/``//g; s/^ *//; s/ *$//' <<<"$lim")
	got=$(pod_limits "$req link $link mtu 1514")
	[ -n "$got" ] || got="(none)"
	n=$((n + 1))
	if [ "$got" = "$lim" ]; then
		ok "doc: $req on a $link link: $lim"
	else
		bad "doc: $req on a $link link: the doc says \"$lim\", arbtablectl request gives \"$got\""
	fi
done <<<"$rows"
[ "$n" -ge 5 ] && ok "doc: $n pod requests checked" || bad "doc: only $n pod request rows found in $DOC"
# the example pod: its limits are its annotations' cost on the nodes it selects
ex=$(python3 - "$K/example-pod.yaml" <<'EOF'
import sys, yaml
p = yaml.safe_load(open(sys.argv[1]))
a = p["metadata"]["annotations"]
ns = p["spec"]["nodeSelector"]
req = " ".join("%s %s" % (k.split("/")[1], v) for k, v in a.items())
req += " link %sbit mtu %s maxweight %s highlimit %s" % (ns["arbtable.io/link"], ns["arbtable.io/mtu"], ns["arbtable.io/maxweight"], ns["arbtable.io/highlimit"])
if ns["arbtable.io/strictceil"] != "0":
    req += " strictceil %sbit" % ns["arbtable.io/strictceil"]
lim = {}
for c in p["spec"]["containers"]:
    for k, v in c.get("resources", {}).get("limits", {}).items():
        if k.startswith("arbtable.io/"):
            lim[k] = lim.get(k, 0) + int(v)
print(req + "|" + ", ".join("%s %d" % (k.split("/")[1], v) for k, v in lim.items()))
EOF
)
want=$(pod_limits "${ex%|*}")
[ "$want" = "${ex#*|}" ] && ok "example pod: limits ${ex#*|} = the cost of ${ex%|*}" ||
	bad "example pod: limits ${ex#*|}, arbtablectl request ${ex%|*} gives $want"

# ------------------------------------------------------------ installer
# A stub plugin in the bundle: it speaks the versions in plugin.versions
# and answers STATUS from plugin.status (absent: ready); the real one is
# checked on the entry below.
H=$T/host NETD=$T/host/etc/cni/net.d
mkdir -p "$NETD" "$T/bundle/bin" "$T/bundle/lib" "$T/sys/module/sch_arbtable"
echo lib >"$T/bundle/lib/libdemo.so.0"
# --ensure-root (the agent's root) notes whether the agent held the
# plugin's lock of eth0 (the real one would wait for it forever) and
# makes the stub arbtablectl see a root
cat >"$T/bundle/bin/arbtable-cni" <<EOF
#!/bin/bash
in=\$(cat)
echo "\${CNI_COMMAND:-\$1} \$in" >>"$T/plugin.log"
if [ "\${1:-}" = --ensure-root ]; then
	if flock -n -x "$T/agent/run/eth0.lock" true 2>/dev/null; then l=UNLOCKED; else l=locked; fi
	echo "\$l ensure-root \$(jq -c '[.cniVersion, .device, (.systemClass // {}), (.qdisc // {})]' <<<"\$in")" >>"$T/agent/ctl.log"
	touch "$T/agent/created"
	exit 0
fi
case \$CNI_COMMAND in
VERSION) echo "{\"cniVersion\":\"1.0.0\",\"supportedVersions\":\$(cat "$T/plugin.versions")}" ;;
STATUS) [ -e "$T/plugin.status" ] || exit 0; cat "$T/plugin.status"; exit 1 ;;
*) exit 1 ;;
esac
EOF
chmod +x "$T/bundle/bin/arbtable-cni"
echo '["0.3.0","0.3.1","0.4.0","1.0.0","1.1.0"]' >"$T/plugin.versions"
cat >"$NETD/10-flannel.conflist" <<'EOF'
{"name":"cbr0","cniVersion":"0.3.1","plugins":[{"type":"flannel","delegate":{"isDefaultGateway":true}},{"type":"portmap","capabilities":{"portMappings":true}}]}
EOF
cat >"$NETD/20-other.conf" <<'EOF'
{"cniVersion":"1.0.0","name":"other","type":"bridge","bridge":"br9"}
EOF
# inst [ARGS]: the installer on $T/host, ARBTABLE_QDISC from $Q,
# ARBTABLE_SYSTEM_CLASS from $S
Q='' S=''
inst() {
	env HOST_PREFIX="$H" ARBTABLE_BUNDLE="$T/bundle" ARBTABLE_SYSFS="$T/sys" \
		ARBTABLE_DEVICE=eth0 ARBTABLE_QDISC="$Q" ARBTABLE_SYSTEM_CLASS="$S" \
		bash "$K/arbtable-install-cni.sh" "$@"
}
c=$NETD/00-arbtable.conflist
w=$T/host/opt/cni/bin/arbtable-cni
inst 2>"$T/log1"
if jq -e '.name == "cbr0" and .cniVersion == "0.3.1" and
	  ([.plugins[].type] == ["flannel", "portmap", "arbtable-cni"]) and
	  .plugins[2].capabilities."io.kubernetes.cri.pod-annotations" == true and
	  (.plugins[2] | has("qdisc") or has("systemClass") | not) and .plugins[2].device == "eth0" and
	  .plugins[2].defaultShare == 1 and .plugins[2].markMask == "0x00ff0000"' "$c" >/dev/null 2>&1; then
	ok "installer: 00-arbtable.conflist = the first config (10-flannel) + arbtable-cni, name and cniVersion 0.3.1 kept, no qdisc (link speed), no systemClass (the plugin's default)"
else
	bad "installer: $(cat "$c" 2>&1) $(cat "$T/log1")"
fi
jq -e -R 'select(startswith("STATUS ")) | ltrimstr("STATUS ") | fromjson |
	  .cniVersion == "1.1.0" and .name == "cbr0" and .type == "arbtable-cni"' \
	"$T/plugin.log" >/dev/null 2>&1 &&
	ok "installer: asked the plugin's STATUS at 1.1.0 with the entry before chaining" ||
	bad "installer: no STATUS call: $(cat "$T/plugin.log" 2>&1)"
[ -x "$w" ] && grep -q 'LD_LIBRARY_PATH=/opt/arbtable/lib exec /opt/arbtable/bin/arbtable-cni' "$w" &&
	cmp -s "$T/bundle/bin/arbtable-cni" "$T/host/opt/arbtable/bin/arbtable-cni" &&
	[ -f "$T/host/opt/arbtable/lib/libdemo.so.0" ] &&
	ok "installer: the plugin and its libraries in /opt/arbtable, the wrapper in /opt/cni/bin" ||
	bad "installer: plugin files: $(ls -R "$T/host/opt")"
inst 2>"$T/log2"
[ ! -s "$T/log2" ] && ok "installer: a second run changes nothing" || bad "installer: second run: $(cat "$T/log2")"
Q="rate 1gbit" inst 2>"$T/log3"
[ "$(jq -c '[.plugins[].type], .plugins[2].qdisc' "$c" | paste -sd' ')" = '["flannel","portmap","arbtable-cni"] {"rate":"1gbit"}' ] &&
	ok "installer: a rate in the ConfigMap goes into the entry's qdisc" ||
	bad "installer: rerun with rate 1gbit: $(cat "$c")"
Q="rate 50% mtu 9000" inst 2>/dev/null
[ "$(jq -c '.plugins[2].qdisc' "$c")" = '{"rate":"50%","mtu":"9000"}' ] &&
	ok "installer: rate 50% (of the link speed) mtu 9000 accepted" ||
	bad "installer: rate 50%: $(cat "$c")"
Q="mtu 1514" S="share 8 minor 0xfe" inst 2>/dev/null
[ "$(jq -c '[.plugins[2].qdisc, .plugins[2].systemClass]' "$c")" = '[{"mtu":"1514"},{"share":"8","minor":"0xfe"}]' ] &&
	ok "installer: mtu 1514 (every GSO packet split) and a system class (share 8, minor 0xfe) go into the entry" ||
	bad "installer: mtu and systemClass: $(cat "$c")"
S="share 8 minor 0x1ff" inst 2>"$T/log8"
[ $? = 2 ] && grep -q 'ARBTABLE_SYSTEM_CLASS: minor 0x1ff: want 1..0xffff outside the tenant minors 0x101..0x1ff' "$T/log8" &&
	ok "installer: a system class minor among the tenants' refused (exit 2)" ||
	bad "installer: system minor 0x1ff: $(cat "$T/log8")"
S='' Q='' inst 2>/dev/null
# a 1.1.0 list with cniVersions: kept; a plugin that does not speak it:
# the chain goes
jq '.cniVersion = "1.1.0" | .cniVersions = ["0.4.0", "1.0.0", "1.1.0"]' \
	"$NETD/10-flannel.conflist" >"$T/p" && mv "$T/p" "$NETD/10-flannel.conflist"
inst 2>/dev/null
jq -e '.cniVersion == "1.1.0" and .cniVersions == ["0.4.0", "1.0.0", "1.1.0"]' "$c" >/dev/null 2>&1 &&
	ok "installer: cniVersion 1.1.0 and cniVersions kept as the primary has them" ||
	bad "installer: 1.1.0 list: $(cat "$c" 2>&1)"
echo '["0.4.0","1.0.0"]' >"$T/plugin.versions"
inst 2>"$T/log4"
[ ! -e "$c" ] && grep -q 'not chained after 10-flannel.conflist: cniVersion 1.1.0, which arbtable-cni does not speak' "$T/log4" &&
	ok "installer: a primary at a version the plugin does not speak: chain removed, said why" ||
	bad "installer: unspoken 1.1.0: $(ls "$NETD") $(cat "$T/log4")"
echo '["0.3.0","0.3.1","0.4.0","1.0.0","1.1.0"]' >"$T/plugin.versions"
echo '{"cniVersion":"1.1.0","code":50,"msg":"eth0: root 1: is an htb qdisc"}' >"$T/plugin.status"
inst 2>"$T/log5"
[ ! -e "$c" ] && grep -q 'STATUS code 50: eth0: root 1: is an htb qdisc' "$T/log5" &&
	ok "installer: STATUS code 50: not chained, the plugin's reason logged" ||
	bad "installer: STATUS 50: $(ls "$NETD") $(cat "$T/log5")"
rm -f "$T/plugin.status"
inst 2>/dev/null && [ -e "$c" ] || bad "installer: not chained again after STATUS 0"
rmdir "$T/sys/module/sch_arbtable"
inst 2>"$T/log6"
[ ! -e "$c" ] && [ -x "$w" ] && grep -q 'sch_arbtable is not loaded on this node: not chained' "$T/log6" &&
	ok "installer: sch_arbtable not loaded: the chain removed (the plugin kept for DELs), said why" ||
	bad "installer: module gone: $(ls "$NETD") $(cat "$T/log6")"
mkdir "$T/sys/module/sch_arbtable"
inst 2>/dev/null && [ -e "$c" ] || bad "installer: not chained again with the module"
mv "$NETD/10-flannel.conflist" "$T/flannel.saved"
mv "$NETD/20-other.conf" "$T/other.saved"
inst 2>"$T/log7"
[ ! -e "$c" ] && grep -q "removed .*00-arbtable.conflist: no primary network config" "$T/log7" &&
	ok "installer: the primary config gone: no stale 00-arbtable.conflist" ||
	bad "installer: primary gone: $(ls "$NETD") $(cat "$T/log7")"
mv "$T/flannel.saved" "$NETD/10-flannel.conflist"
mv "$T/other.saved" "$NETD/20-other.conf"
# ConfigMap values refused before anything is written
rm -rf "$T/host/opt"
out=$(ARBTABLE_MARK_MASK=0 inst 2>&1)
rc=$?
[ $rc = 2 ] && [ ! -e "$c" ] && [ ! -e "$w" ] && grep -q 'ARBTABLE_MARK_MASK 0: must not be 0' <<<"$out" &&
	ok "installer: ARBTABLE_MARK_MASK=0 refused (exit 2), nothing written" ||
	bad "installer: mask 0: exit $rc, $out"
inst 2>/dev/null
# the single-plugin .conf and the real plugin on the entry
env HOST_PREFIX="$T/h2" ARBTABLE_DEVICE=eth1 ARBTABLE_QDISC= bash "$K/arbtable-install-cni.sh" \
	--print "$NETD/20-other.conf" >"$T/other.json"
jq -e '.name == "other" and .cniVersion == "1.0.0" and .plugins[0] == {"type": "bridge", "bridge": "br9"} and
       .plugins[1].device == "eth1" and (.plugins[1] | has("qdisc") | not)' "$T/other.json" >/dev/null &&
	ok "installer: a single-plugin .conf becomes a two-plugin list" || bad "installer: .conf: $(cat "$T/other.json")"
# the entry as the runtime hands it to the plugin: name and cniVersion
# added, the pod's annotations in runtimeConfig; the plugin must get past
# every config check (error codes 1, 2, 6, 7) to the interface check
jq -c '.plugins[1] + {cniVersion, name, stateDir: "'"$T/sd"'",
	qdisc: {rate: "1gbit", mtu: "1514"}, systemClass: {share: "8", minor: "0xfe"},
	runtimeConfig: {"io.kubernetes.cri.pod-annotations":
		{"arbtable.io/rate": "2gbit", "arbtable.io/latency": "50us", "app": "x"}}}' "$T/other.json" >"$T/entry.json"
out=$(env -i CNI_COMMAND=ADD CNI_CONTAINERID=k8s1 CNI_IFNAME=arbt-nosuch0 CNI_NETNS=/proc/self/ns/net \
	"$CNI" <"$T/entry.json" 2>/dev/null)
code=$(jq -r .code <<<"$out" 2>/dev/null)
[ "$code" = 105 ] && ok "the plugin accepts the installed entry and the pod's annotations (stops at the missing veth, code 105)" ||
	bad "the plugin on the installed entry: $out"
inst --unchain 2>/dev/null
[ ! -e "$c" ] && [ -x "$w" ] && ok "installer --unchain: the chain gone, the plugin kept" ||
	bad "installer --unchain"
inst --uninstall 2>/dev/null
[ ! -e "$c" ] && [ ! -e "$w" ] && [ ! -e "$T/host/opt/arbtable" ] &&
	[ -f "$NETD/10-flannel.conflist" ] &&
	ok "installer --uninstall: our files gone, the node's own config kept" || bad "installer --uninstall"

# ------------------------------------------------------------ agent
# The agent against stub-apiserver.py over TLS, with arbtablectl and ip
# stubbed: the stub server checks every request (token, own node, merge
# patches) and scans /proc for the token all along.
. "$ROOT/tests/kubernetes/agent-check.sh"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
