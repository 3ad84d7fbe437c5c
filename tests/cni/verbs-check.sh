#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# arbtable-cni on the host, CNI 1.1 without the module: version
# negotiation (every supported cniVersion, cniVersions, the verbs each
# version has), STATUS's code 50, DEL's leniency (unknown keys, no
# device, bad values) and its handling of damaged state, GC of records
# that are not valid (damaged, unfinished, temporary, of a device gone)
# and its refusal of a malformed valid-attachments list.  Needs root
# (the device lock is /run/arbtable-cni/<device>.lock).  The VM test
# (selftests/arbtable/test_cni.sh) covers what needs the module.
# Ends with "N passed, N failed".
# The clsact checks make veths: the whole run is in a network namespace
# of its own (unshare -n), which goes with it.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${ARBT_VERBS_NETNS:-}" ] && [ "$(id -u)" = 0 ]; then
	ARBT_VERBS_NETNS=1 exec unshare -n bash "$0" "$@"
fi
CNI=${1:-$ROOT/build/cni/arbtable-cni}
SD=$(mktemp -d)
ERR=$SD.err
trap 'rm -rf "$SD" "$ERR"' EXIT
# run, expect (plugin-run.sh): every run with CNI_PATH, its stderr in $ERR
RUN_ENV=(CNI_PATH=/opt/cni/bin)
. "$ROOT/tests/cni/plugin-run.sh"
[ "$(id -u)" = 0 ] || { echo "FAIL needs root (the device lock in /run/arbtable-cni)"; echo "0 passed, 1 failed"; exit 1; }

# success DESC CMD CONFIG [ENV...]: exit 0, nothing on stdout
success() {
	local d=$1
	shift
	run "$@"
	if [ "$RC" = 0 ] && [ -z "$OUT" ]; then ok "$d"; else bad "$d: exit $RC: $OUT $(cat "$ERR")"; fi
}
# cf VERSION [MEMBERS]: a config of the network, no device unless given
cf() { printf '{"cniVersion":"%s","name":"n","type":"arbtable-cni","stateDir":"%s"%s}' "$1" "$SD" "${2:+,$2}"; }
# record NAME PHASE DEVICE: a state record as ADD writes it
record() {
	printf '{"phase":"%s","device":"%s","hostIfname":"vh-x","classid":65793,"tenant":1,"mark":65536,"markMask":16711680,"prio":100,"parent":65536,"hostIfindex":2147483000}\n' \
		"$2" "$3" >"$SD/$1.json"
}
NODEV=arbtnodev0	# no such device here
# files: the names in $SD, sorted, each followed by a space
files() { (cd "$SD" && for f in *; do [ -e "$f" ] && printf '%s ' "$f"; done); }

# ---- VERSION
for v in 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0; do
	run VERSION "{\"cniVersion\":\"$v\"}"
	got=$(printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["cniVersion"], *d["supportedVersions"])' 2>/dev/null)
	if [ "$RC" = 0 ] && [ "$got" = "$v 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0" ]; then
		ok "VERSION $v: echoed, supported 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0"
	else
		bad "VERSION $v: exit $RC: $OUT"
	fi
done

# ---- every supported version reaches the command (DEL of nothing: 0);
# ADD at 0.3.x gets past the version to the environment's check
for v in 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0; do
	success "DEL at cniVersion $v: accepted, exit 0" DEL "$(cf "$v")"
done
expect "ADD at 0.3.1 is past the version check (fails on CNI_NETNS: code 4)" 4 'CNI_NETNS' ADD \
	"$(cf 0.3.1 '"device":"'$NODEV'","prevResult":{"cniVersion":"0.3.1"}')" CNI_NETNS=
expect "cniVersion 0.2.0: code 1 naming the supported ones" 1 'supported: 0\.3\.0, 0\.3\.1, 0\.4\.0, 1\.0\.0, 1\.1\.0' DEL "$(cf 0.2.0)"
expect "cniVersion 2.0.0: code 1" 1 'cniVersion 2\.0\.0 not supported' DEL "$(cf 2.0.0)"
expect "CHECK at 0.3.1: code 1 (CHECK is 0.4.0's)" 1 'CHECK needs cniVersion 0\.4\.0' CHECK \
	"$(cf 0.3.1 '"device":"'$NODEV'","prevResult":{}')"
expect "GC at 1.0.0: code 1 (GC is 1.1.0's)" 1 'GC needs cniVersion 1\.1\.0' GC \
	"$(cf 1.0.0 '"cni.dev/valid-attachments":[]')"
expect "STATUS at 1.0.0: code 1" 1 'STATUS needs cniVersion 1\.1\.0' STATUS "$(cf 1.0.0 '"device":"lo"')"

# ---- cniVersions: whatever it lists, the chosen cniVersion decides
success "cniVersion 1.1.0 with cniVersions [0.4.0, 1.1.0, 2.0.0]: accepted" DEL \
	"$(cf 1.1.0 '"cniVersions":["0.4.0","1.1.0","2.0.0"]')"
success "cniVersion 1.0.0 with cniVersions [\"9.9.9\"]: accepted" DEL "$(cf 1.0.0 '"cniVersions":["9.9.9"]')"
OUT=$(printf '{"cniVersions":["0.4.0","1.1.0","7.0.0"],"name":"n","stateDir":"%s","cni.dev/valid-attachments":[]}' "$SD" |
	env -i CNI_COMMAND=GC CNI_PATH=/opt/cni/bin "$CNI" 2>"$ERR")
RC=$?
if [ "$RC" = 0 ] && [ -z "$OUT" ]; then
	ok "no cniVersion, cniVersions [0.4.0, 1.1.0, 7.0.0]: 1.1.0 taken (GC runs)"
else
	bad "cniVersions only: exit $RC: $OUT"
fi
expect "no cniVersion, cniVersions [\"7.0.0\"]: code 1" 1 'none supported' DEL \
	"{\"cniVersions\":[\"7.0.0\"],\"name\":\"n\",\"stateDir\":\"$SD\"}"
expect "cniVersions not a list: code 7" 7 'cniVersions must be a list' DEL "$(cf 1.1.0 '"cniVersions":"1.1.0"')"
expect "error objects carry the config's version (0.3.1)" 1 '"cniVersion":"0\.3\.1"' CHECK \
	"$(cf 0.3.1 '"device":"'$NODEV'","prevResult":{}')"

# ---- STATUS: code 50 with the reason; a config ADD would refuse is refused
expect "STATUS, device missing: code 50" 50 "device $NODEV does not exist" STATUS "$(cf 1.1.0 '"device":"'$NODEV'"')"
if [ ! -e /sys/module/sch_arbtable ]; then
	expect "STATUS, sch_arbtable not loaded: code 50" 50 'sch_arbtable is not loaded' STATUS "$(cf 1.1.0 '"device":"lo"')"
fi
expect "STATUS, unknown key: code 2 (ADD would refuse it)" 2 'unknown key \\"devcie\\"' STATUS \
	"$(cf 1.1.0 '"device":"lo","devcie":"x"')"
expect "STATUS without device: code 7" 7 'device missing' STATUS "$(cf 1.1.0)"
run STATUS "$(cf 1.1.0 '"device":"lo"')" CNI_CONTAINERID= CNI_IFNAME= CNI_NETNS=
if [ "$(code)" != 4 ]; then ok "STATUS needs no CNI_CONTAINERID/CNI_IFNAME"; else bad "STATUS wants container variables: $OUT"; fi

# ---- DEL: lenient config, damaged state
success "DEL with an unknown key: exit 0" DEL "$(cf 1.1.0 '"devcie":"x"')"
if grep -q 'ignored: unknown key "devcie"' "$ERR"; then ok "DEL reports the ignored key on stderr"; else bad "DEL stderr: $(cat "$ERR")"; fi
success "DEL without device, bad markMask and qdisc: exit 0" DEL "$(cf 1.1.0 '"markMask":"0x3","qdisc":{"rat":1}')"
: >"$SD/c1-eth0.json"
success "DEL on a 0-byte state file: exit 0" DEL "$(cf 1.1.0)"
if [ ! -e "$SD/c1-eth0.json" ] && grep -q 'damaged (empty)' "$ERR"; then
	ok "DEL removed the 0-byte file and said so"
else
	bad "0-byte state: $(files) $(cat "$ERR")"
fi
printf '{"device":"eth0","classid":' >"$SD/c1-eth0.json"
success "DEL on a truncated state file: exit 0" DEL "$(cf 1.1.0)"
if [ ! -e "$SD/c1-eth0.json" ]; then ok "truncated state removed"; else bad "truncated state kept"; fi
record c1-eth0 added "$NODEV"
success "DEL of a record whose device is gone: exit 0" DEL "$(cf 1.1.0)"
if [ ! -e "$SD/c1-eth0.json" ]; then ok "its record removed"; else bad "record of a gone device kept"; fi
success "DEL again: exit 0" DEL "$(cf 1.1.0)"
# an ADD killed before the rename of its first record (strace's sweep
# found it): only the temporary file is there
printf '{"device":' >"$SD/c1-eth0.json.tmp"
success "DEL with only a killed write's temporary file: exit 0" DEL "$(cf 1.1.0)"
if [ ! -e "$SD/c1-eth0.json.tmp" ]; then ok "the temporary file removed"; else bad "temporary file kept: $(files)"; fi
# killed before the rename of its final record: both
record c1-eth0 adding "$NODEV"
printf '{"device":' >"$SD/c1-eth0.json.tmp"
success "DEL of an unfinished record beside its temporary file: exit 0" DEL "$(cf 1.1.0)"
if [ ! -e "$SD/c1-eth0.json" ] && [ ! -e "$SD/c1-eth0.json.tmp" ]; then ok "record and temporary file removed"; else bad "left: $(files)"; fi
record un-eth0 adding "$NODEV"
expect "CHECK of an unfinished ADD: code 103" 103 'did not finish' CHECK \
	"$(cf 1.1.0 '"device":"'$NODEV'","prevResult":{}')" CNI_CONTAINERID=un
rm -f "$SD/un-eth0.json"

# ---- GC
gcconf() { cf 1.1.0 "\"cni.dev/valid-attachments\":$1"; }
record keep-eth0 added "$NODEV"
record keep-eth1 adding "$NODEV"
record dead-eth0 added "$NODEV"
record unfinished-eth0 adding "$NODEV"
: >"$SD/zero-eth0.json"
echo '{"phase":"added"' >"$SD/keep-eth0.json.tmp"
echo '{"phase":"ad' >"$SD/killed-eth0.json.tmp"
echo x >"$SD/notes.txt"
before=$(files)
expect "GC with valid-attachments not a list: code 7" 7 'must be an array' GC "$(gcconf '{"containerID":"keep"}')"
expect "GC with an entry without ifname: code 7" 7 'valid-attachments\[1\]' GC \
	"$(gcconf '[{"containerID":"keep","ifname":"eth0"},{"containerID":"dead"}]')"
expect "GC without valid-attachments: code 7" 7 'GC without cni.dev/valid-attachments' GC "$(cf 1.1.0)"
if [ "$(files)" = "$before" ]; then ok "refused GCs removed nothing"; else bad "refused GC changed $SD: $(files)"; fi
success "GC keeping keep/eth0 and keep/eth1: exit 0" GC \
	"$(gcconf '[{"containerID":"keep","ifname":"eth0"},{"containerID":"keep","ifname":"eth1"}]')" \
	CNI_CONTAINERID= CNI_IFNAME= CNI_NETNS=
left=$(files)
if [ "$left" = "keep-eth0.json keep-eth0.json.tmp keep-eth1.json notes.txt " ]; then
	ok "GC left the valid records (and a valid one's temporary file), removed dead, unfinished, 0-byte, killed .tmp"
else
	bad "GC left: $left"
fi
success "GC with an empty list: exit 0" GC "$(gcconf '[]')"
left=$(files)
if [ "$left" = "notes.txt " ]; then ok "GC with an empty list released every record"; else bad "GC []: left $left"; fi
success "GC of a stateDir that does not exist: exit 0" GC \
	"$(printf '{"cniVersion":"1.1.0","name":"n","stateDir":"%s/none","cni.dev/valid-attachments":[]}' "$SD")"

# ---- the clsact a killed ADD may have made on the host veth: its intent
# record says "createdClsact": 2 when the veth had no ingress hook and
# ADD was about to make one; DEL and GC remove a clsact there that holds
# no filter (ADD's), keep one that holds any (someone else's), and keep
# one the record says ADD found (0).  The egress device is gone, so only
# the veth side runs (the host has no matchall: the "someone else's"
# filter is a u32).
# krecord NAME PHASE CREATED: a record of a tenant on vh-k1
krecord() {
	printf '{"phase":"%s","device":"%s","hostIfname":"vh-k1","classid":65793,"tenant":1,"mark":65536,"markMask":16711680,"prio":100,"parent":65536,"hostIfindex":%s,"createdClsact":%s}\n' \
		"$2" "$NODEV" "$KIDX" "$3" >"$SD/$1.json"
}
hook() { tc qdisc show dev vh-k1 | awk '$2 == "clsact" || $2 == "ingress" { print $2 }'; }
if [ "${ARBT_VERBS_NETNS:-}" = 1 ] && ip link add vh-k1 type veth peer name vh-k1p 2>"$ERR"; then
	KIDX=$(ip -o link show vh-k1 | cut -d: -f1)
	tc qdisc add dev vh-k1 clsact
	krecord k1-eth0 adding 2
	success "DEL of a killed ADD that was about to make vh-k1's clsact: exit 0" DEL "$(cf 1.1.0)" CNI_CONTAINERID=k1
	[ -z "$(hook)" ] && [ ! -e "$SD/k1-eth0.json" ] &&
		ok "the empty clsact (ADD's) removed with the record" ||
		bad "clsact of the intent: $(tc qdisc show dev vh-k1) $(files) $(cat "$ERR")"
	tc qdisc add dev vh-k1 clsact
	tc filter add dev vh-k1 ingress prio 5 u32 match u32 0 0 classid 1:1
	krecord k1-eth0 adding 2
	success "DEL, the same intent, the clsact holding someone's u32 filter: exit 0" DEL "$(cf 1.1.0)" CNI_CONTAINERID=k1
	[ "$(hook)" = clsact ] && [ -n "$(tc filter show dev vh-k1 ingress)" ] && [ ! -e "$SD/k1-eth0.json" ] &&
		grep -q 'vh-k1: keeping its clsact qdisc: a killed ADD was about to make one, and the one there holds someone else.s filters' "$ERR" &&
		ok "a clsact in use kept (with its filter), said on stderr, the record removed" ||
		bad "clsact in use: $(tc qdisc show dev vh-k1) $(tc filter show dev vh-k1 ingress) $(files) $(cat "$ERR")"
	tc qdisc del dev vh-k1 clsact
	tc qdisc add dev vh-k1 clsact
	krecord k1-eth0 adding 0
	success "DEL of a killed ADD that found vh-k1's clsact there: exit 0" DEL "$(cf 1.1.0)" CNI_CONTAINERID=k1
	[ "$(hook)" = clsact ] && ok "a clsact the record says ADD found (0) kept, empty as it is" ||
		bad "found clsact: $(tc qdisc show dev vh-k1)"
	krecord k1-eth0 adding 2
	success "GC of the intent (empty list): exit 0" GC "$(cf 1.1.0 '"cni.dev/valid-attachments":[]')" \
		CNI_CONTAINERID= CNI_IFNAME= CNI_NETNS=
	[ -z "$(hook)" ] && [ ! -e "$SD/k1-eth0.json" ] && ok "GC removed the empty clsact of the intent and the record" ||
		bad "GC, clsact of the intent: $(tc qdisc show dev vh-k1) $(files)"
	tc qdisc add dev vh-k1 ingress
	krecord k1-eth0 adding 2
	success "DEL of the intent beside an ingress qdisc: exit 0" DEL "$(cf 1.1.0)" CNI_CONTAINERID=k1
	[ "$(hook)" = ingress ] && ok "an ingress qdisc (never ADD's: it makes clsacts) kept" ||
		bad "ingress: $(tc qdisc show dev vh-k1)"
	tc qdisc del dev vh-k1 ingress
	krecord k1-eth0 added 1
	tc qdisc add dev vh-k1 clsact
	success "DEL of a finished ADD that made the clsact: exit 0" DEL "$(cf 1.1.0)" CNI_CONTAINERID=k1
	[ -z "$(hook)" ] && ok "the clsact a finished record says ADD made removed" ||
		bad "finished record's clsact: $(tc qdisc show dev vh-k1)"
	ip link del vh-k1
else
	bad "clsact checks: no veth in a network namespace of our own (unshare -n, ip link add): $(cat "$ERR" 2>/dev/null)"
fi

# ---- the lock
if [ -e "/run/arbtable-cni/$NODEV.lock" ] && [ "$(stat -c %a /run/arbtable-cni)" = 700 ]; then
	ok "the lock is /run/arbtable-cni/<device>.lock, its directory 0700"
else
	bad "lock: $(ls -la /run/arbtable-cni 2>&1)"
fi
rm -f "/run/arbtable-cni/$NODEV.lock"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
