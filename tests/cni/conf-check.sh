#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# arbtable-cni on the host, without touching a device: VERSION, and every
# config or environment it must refuse before any kernel request, each
# answered by a CNI error object (cniVersion, code, msg) on stdout and a
# non-zero exit; DEL of a container it never saw succeeds.  The VM test
# (selftests/arbtable/test_cni.sh) covers what needs the module.
# Ends with "N passed, N failed".
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CNI=${1:-$ROOT/build/cni/arbtable-cni}
SD=$(mktemp -d)
trap 'rm -rf "$SD"' EXIT
ERR=/dev/null RUN_ENV=()
. "$ROOT/tests/cni/plugin-run.sh"

base='"cniVersion":"1.0.0","name":"n","type":"arbtable-cni","stateDir":"'$SD'"'
c() { printf '{%s,"device":"eth9"%s}' "$base" "${1:+,$1}"; }

run VERSION '{"cniVersion":"1.0.0"}'
if [ "$RC" = 0 ] && [ "$(printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["cniVersion"], *d["supportedVersions"])')" = "1.0.0 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0" ]; then
	ok "VERSION: 1.0.0, supported 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0"
else
	bad "VERSION: $OUT (exit $RC)"
fi
expect "no device" 7 'device missing' ADD "{$base}"
expect "unknown top-level key" 2 'unknown key \\"devcie\\"' ADD "$(c '"devcie":"x"')"
expect "unknown qdisc key" 2 'qdisc: unknown key \\"rat\\"' ADD "$(c '"qdisc":{"rat":"1mbit"}')"
expect "bad qdisc rate" 7 'qdisc: bad rate' ADD "$(c '"qdisc":{"rate":"fast"}')"
# qdisc.mtu: the root's largest dequeued unit (tc-arbtable(8), mtu): 0
# follows the device, else 64..1048576 bytes, as the module takes it
expect "qdisc mtu 63" 7 'qdisc: bad mtu \\"63\\" \(0 or absent: follow the device; or 64\.\.1048576 bytes' ADD "$(c '"qdisc":{"mtu":"63"}')"
expect "qdisc mtu 1048577" 7 'qdisc: bad mtu \\"1048577\\"' ADD "$(c '"qdisc":{"mtu":1048577}')"
expect "qdisc mtu 2mb (above 1048576)" 7 'qdisc: bad mtu \\"2mb\\"' ADD "$(c '"qdisc":{"mtu":"2mb"}')"
expect "qdisc mtu fast" 7 'qdisc: bad mtu \\"fast\\"' ADD "$(c '"qdisc":{"mtu":"fast"}')"
expect "qdisc mtu -1" 7 'qdisc: bad mtu' ADD "$(c '"qdisc":{"mtu":-1}')"
for m in 0 64 1514 '"1514"' '"9k"' 1048576 '"1mb"'; do
	expect "qdisc mtu $m accepted (ADD goes on to CNI_NETNS)" 4 'CNI_NETNS' ADD "$(c '"qdisc":{"rate":"10gbit","mtu":'"$m"'}')"
done
expect "bad rate in runtimeConfig" 7 'bad rate \\"fast\\"' ADD "$(c '"runtimeConfig":{"arbtable":{"rate":"fast"}}')"
expect "unknown runtimeConfig.arbtable key" 7 'unknown key \\"latncy\\"' ADD "$(c '"runtimeConfig":{"arbtable":{"latncy":"1ms"}}')"
expect "unknown arbtable.io/ annotation" 7 'arbtable.io/rat' ADD \
	"$(c '"runtimeConfig":{"io.kubernetes.cri.pod-annotations":{"arbtable.io/rat":"1mbit","app":"x"}}')"
expect "rate and share together" 7 'CNI_ARGS: give either rate \(HIGH table\) or share \(LOW table\), not both' ADD "$(c)" CNI_ARGS="K8S_POD_NAME=p;ARBTABLE_RATE=1mbit;ARBTABLE_SHARE=3"
expect "latency and distance together" 7 'args.cni.arbtable: give either latency or distance, not both' ADD "$(c '"args":{"cni":{"arbtable":{"rate":"1mbit","latency":"1ms","distance":4}}}')"
expect "share 0" 7 'runtimeConfig.arbtable: share out of range 1..255' ADD "$(c '"runtimeConfig":{"arbtable":{"share":0}}')"
expect "unknown ARBTABLE_ key in CNI_ARGS" 4 'ARBTABLE_RAT' ADD "$(c)" CNI_ARGS="ARBTABLE_RAT=1mbit"
expect "markMask not contiguous" 7 'contiguous' ADD "$(c '"markMask":"0x00f0f000"')"
expect "markMask too small" 7 'fewer than' ADD "$(c '"markMask":"0x3f"')"
# markMask against the packet-mark bits others document (cni/conf.c,
# arbtable-cni(8)): each refused with the owner named, unless
# allowMarkOverlap names it; the default 0x7f and 0xff accepted
# (accepted: ADD goes on to the missing CNI_NETNS, code 4)
expect "default markMask accepted" 4 'CNI_NETNS' ADD "$(c)"
expect "markMask 0x7f (the default, given) accepted" 4 'CNI_NETNS' ADD "$(c '"markMask":"0x0000007f"')"
expect "markMask 0xff accepted" 4 'CNI_NETNS' ADD "$(c '"markMask":"0xff"')"
expect "markMask 0x00ff0000 (the old default): Cilium and Calico named" 7 \
	'markMask 0x00ff0000 overlaps packet-mark bits others own: Cilium.s identity and magic mark bits 0xffffff00 \(\\"cilium\\", 0x00ff0000 in common\); Calico.s iptablesMarkMask default .*0xffff0000 \(\\"calico\\", 0x00ff0000 in common\)\. Choose bits outside them' \
	ADD "$(c '"markMask":"0x00ff0000"')"
expect "markMask 0x1ff00000 (Calico eBPF's bits): Cilium and Calico named" 7 \
	'Cilium.s identity .*0x1ff00000 in common.*Calico.s iptablesMarkMask default \(its eBPF dataplane.s 0x1ff00000 within\)' \
	ADD "$(c '"markMask":"0x1ff00000"')"
expect "markMask 0x00000ff0 (Cilium's magic mark within): Cilium alone named" 7 \
	'overlaps packet-mark bits others own: Cilium.s identity and magic mark bits 0xffffff00 \(\\"cilium\\", 0x00000f00 in common\)\. Choose' \
	ADD "$(c '"markMask":"0x00000ff0"')"
expect "markMask 0x0000ff00: Cilium, kube-proxy and portmap named" 7 \
	'Cilium.s .*0x0000ff00 in common\); kube-proxy.s masquerade and drop bits 0x0000c000 \(\\"kube-proxy\\", 0x0000c000 in common\); the masquerade bit of the CNI portmap plugin and podman.s netavark 0x00002000' \
	ADD "$(c '"markMask":"0x0000ff00"')"
expect "markMask 0x00003fc0 (portmap's 0x2000, Cilium's 0x0f00 and 0x1000)" 7 \
	'Cilium.s .*0x00003f00 in common\); the masquerade bit of the CNI portmap plugin and podman.s netavark 0x00002000 \(\\"portmap\\", 0x00002000 in common\)' \
	ADD "$(c '"markMask":"0x00003fc0"')"
expect "markMask 0x00ff0000 with allowMarkOverlap [cilium]: Calico still named, Cilium not" 7 \
	'others own: Calico.s iptablesMarkMask' \
	ADD "$(c '"markMask":"0x00ff0000","allowMarkOverlap":["cilium"]')"
expect "markMask 0x00ff0000 with allowMarkOverlap [cilium, calico]: accepted" 4 'CNI_NETNS' \
	ADD "$(c '"markMask":"0x00ff0000","allowMarkOverlap":["cilium","calico"]')"
expect "allowMarkOverlap with an unknown name" 7 'allowMarkOverlap\[1\] \\"flannel\\": want one of cilium, calico, kube-proxy, portmap' \
	ADD "$(c '"allowMarkOverlap":["calico","flannel"]')"
expect "allowMarkOverlap not a list" 7 'allowMarkOverlap must be a list of names' ADD "$(c '"allowMarkOverlap":"cilium"')"
expect "STATUS refuses an overlapping markMask too (config not sane)" 7 'overlaps packet-mark bits others own: Cilium' \
	STATUS "$(c '"markMask":"0x00ff0000"' | sed 's/"cniVersion":"1.0.0"/"cniVersion":"1.1.0"/')"
run DEL "$(c '"markMask":"0x00ff0000"')"
if [ "$RC:$OUT" = "0:" ]; then ok "DEL with an overlapping markMask: exit 0 (DEL is lenient)"; else bad "DEL with an overlapping markMask: exit $RC: $OUT"; fi
# systemClass: the root's default class (cni/classes.c)
expect "systemClass not an object" 7 'systemClass must be an object' ADD "$(c '"systemClass":"1%"')"
expect "systemClass unknown key" 2 'systemClass: unknown key \\"rte\\"' ADD "$(c '"systemClass":{"rte":"1%"}')"
expect "systemClass latency without rate or share" 7 'systemClass: latency/distance need a rate' ADD "$(c '"systemClass":{"latency":"1ms"}')"
expect "systemClass without rate or share" 7 'systemClass: give a rate \(HIGH table\) or a share \(LOW table\)' ADD "$(c '"systemClass":{"minor":"0x20"}')"
expect "systemClass rate and share" 7 'systemClass: give either rate \(HIGH table\) or share' ADD "$(c '"systemClass":{"rate":"1%","share":2}')"
expect "systemClass latency and distance" 7 'systemClass: give either latency or distance, not both' ADD "$(c '"systemClass":{"rate":"1mbit","latency":"1ms","distance":8}')"
expect "systemClass rate 150%" 7 'systemClass: bad rate \\"150%\\"' ADD "$(c '"systemClass":{"rate":"150%"}')"
expect "systemClass rate 0%" 7 'systemClass: bad rate' ADD "$(c '"systemClass":{"rate":"0%"}')"
expect "systemClass rate 1.25%" 7 'systemClass: bad rate' ADD "$(c '"systemClass":{"rate":"1.25%"}')"
expect "systemClass rate fast" 7 'systemClass: bad rate \\"fast\\"' ADD "$(c '"systemClass":{"rate":"fast"}')"
expect "systemClass share 256" 7 'systemClass: share out of range 1..255' ADD "$(c '"systemClass":{"share":256}')"
expect "systemClass minor 0" 7 'systemClass: bad minor' ADD "$(c '"systemClass":{"rate":"1%","minor":0}')"
# the default markMask 0x7f holds 127 tenants: minors 0x101..0x17f
expect "systemClass minor among the tenants'" 7 'minor 0x150 is among the tenant minors 0x101..0x17f' ADD \
	"$(c '"systemClass":{"rate":"1%","minor":"0x150"}')"
expect "default system minor 0xff among the tenants' and given" 7 'minor 0xff is among the tenant minors 0x81..0xff' ADD \
	"$(c '"minorBase":"0x80","systemClass":{"rate":"1%","minor":"0xff"}')"
# accepted: the config passes, ADD stops at the missing netns (code 4)
for sc in '{"rate":"0.5%","latency":"2ms"}' '{"rate":"100mbit"}' '{"share":4,"distance":16}' \
	'{"rate":"100%","minor":"0x20","ceil":"1gbit"}'; do
	expect "systemClass $sc accepted" 4 'CNI_NETNS' ADD "$(c '"systemClass":'"$sc")"
done
expect "minorBase 0x80 (0xff a tenant minor): the system class moves to minorBase" 4 'CNI_NETNS' ADD "$(c '"minorBase":"0x80"')"
expect "not JSON" 6 'not JSON' ADD '{"cniVersion":'
expect "unsupported cniVersion" 1 '0.2.0' ADD "$(c | sed 's/1\.0\.0/0.2.0/')"
expect "no CNI_CONTAINERID" 4 'CNI_CONTAINERID' ADD "$(c)" CNI_CONTAINERID=
expect "CNI_CONTAINERID with a slash" 4 'CNI_CONTAINERID' ADD "$(c)" CNI_CONTAINERID=../x
expect "unknown CNI_COMMAND" 4 'CNI_COMMAND FOO' FOO "$(c)"
expect "CHECK without prevResult" 7 'prevResult' CHECK "$(c)"
expect "ADD without CNI_NETNS" 4 'CNI_NETNS missing' ADD \
	"$(c '"prevResult":{"cniVersion":"1.0.0"}')" CNI_NETNS=
run DEL "$(c)"
if [ "$RC" = 0 ] && [ -z "$OUT" ]; then ok "DEL of a container never added: exit 0, no output"; else bad "DEL unknown: exit $RC: $OUT"; fi
run DEL "$(c '"runtimeConfig":{"arbtable":{"rate":"fast"}}')"
if [ "$RC" = 0 ]; then ok "DEL ignores a request ADD would refuse"; else bad "DEL with a bad request: exit $RC: $OUT"; fi
# the shared best-effort class's description (cni/classes.c), on a
# device that does not exist: damaged, DEL still succeeds and leaves it
# for the next member's ADD to rewrite; intact with no member left, any
# DEL removes it (the device is gone, so is the class); with a member
# left it stays
printf '{"device":' >"$SD/.besteffort-eth9.json"
run DEL "$(c)"
if [ "$RC" = 0 ] && [ -z "$OUT" ]; then ok "DEL beside a damaged best-effort description: exit 0"; else bad "DEL, damaged description: exit $RC: $OUT"; fi
be='{"device":"eth9","classid":65837,"tenant":45,"mark":2949120,"markMask":16711680,"prio":100,"parent":65536,"request":{"set":8,"share":1}}'
printf '%s' "$be" >"$SD/.besteffort-eth9.json"
printf '%s' "${be%\}},\"bestEffort\":1,\"hostIfname\":\"vh-m\",\"hostIfindex\":999999}" >"$SD/m1-eth0.json"
run DEL "$(c)"
if [ "$RC" = 0 ] && [ -f "$SD/.besteffort-eth9.json" ]; then ok "DEL of another container: the shared class with a member left stays"; else bad "DEL with a member left: exit $RC: $OUT; $(ls -A "$SD")"; fi
run DEL "$(c)" CNI_CONTAINERID=m1
if [ "$RC" = 0 ] && [ ! -e "$SD/m1-eth0.json" ] && [ ! -e "$SD/.besteffort-eth9.json" ]; then
	ok "DEL of its last member (device gone): the member's state and the description are removed"
else
	bad "DEL of the last member: exit $RC: $OUT; $(ls -A "$SD")"
fi
printf '%s' "$be" >"$SD/.besteffort-eth9.json"
run DEL "$(c)"
if [ "$RC" = 0 ] && [ ! -e "$SD/.besteffort-eth9.json" ]; then ok "DEL of another container removes a memberless description"; else bad "memberless description: exit $RC: $OUT; $(ls -A "$SD")"; fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
