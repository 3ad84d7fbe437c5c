#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The one reservation request check (lib/arbtable_request.c) through the
# front ends that decide without the kernel, on the host: every bad
# combination and value given to
#   arbtable-cni  ADD, the request in runtimeConfig.arbtable (code 7,
#                 msg "runtimeConfig.arbtable: REASON") or its systemClass
#                 ("systemClass: REASON"),
#   arbtablectl   request (exit 64, "request: REASON") and admit on a
#                 device that does not exist (exit 64, "admit: REASON":
#                 refused before the device is looked up),
#   arbsim        a class line of an auto-mode scenario (its decision
#                 "rejected", text REASON),
# each of them saying the same REASON, the module's own extack text.
# Where a front end gives a request a meaning of its own it is said
# here: arbtable-cni adds defaultShare to a tenant that asks for neither
# a rate nor a share (so a latency alone is a share class's latency, a
# distance alone is accepted), and only arbtablectl admit and arbsim
# take "strict".  Ends with "N passed, N failed".
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-$ROOT/build}
CNI=$B/cni/arbtable-cni
CTL=$B/tools/arbtablectl
SIM=$B/tools/arbsim
SD=$(mktemp -d)
trap 'rm -rf "$SD"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
for f in "$CNI" "$CTL" "$SIM"; do
	[ -x "$f" ] || { echo "FAIL $f not built (make cni lib arbsim)"; echo "0 passed, 1 failed"; exit 1; }
done

BOTH_RS='give either rate (HIGH table) or share (LOW table), not both'
BOTH_LD='give either latency or distance, not both'
RATE0='rate must be greater than 0 bytes/s'
RATEMAX='rate above the largest rate, 2^48 bytes/s'
SHARE='share out of range 1..255 (LOW table weight, units of 64 bytes)'
LAT0='latency must be greater than 0'
DIST='distance out of range 1..64 slots'
LATSHARE='latency bounds are for rate classes in the HIGH table; give a share class a distance instead'
NEEDRS='latency/distance need a rate (HIGH table) or a share (LOW table)'
STRICT='the strict class is served before the tables and takes no rate or share'
NEED='give a rate (HIGH table) or a share (LOW table)'

# json_req "rate 1mbit share 3": {"rate":"1mbit","share":"3"}
json_req() {
	local out= k v
	set -- $1
	while [ $# -ge 2 ]; do
		k=$1 v=$2
		shift 2
		out="$out${out:+,}\"$k\":\"$v\""
	done
	printf '{%s}' "$out"
}
# cni_msg REQUEST-JSON-MEMBER: msg of the ADD's error (code 7), or "code N: ..."
cni_msg() {
	local out
	out=$(printf '{"cniVersion":"1.1.0","name":"n","type":"arbtable-cni","stateDir":"%s","device":"eth9",%s}' "$SD" "$1" |
		env -i CNI_COMMAND=ADD CNI_CONTAINERID=c1 CNI_IFNAME=eth0 CNI_NETNS=/nonexistent "$CNI" 2>/dev/null)
	printf '%s' "$out" | python3 -c 'import json,sys
d = json.load(sys.stdin)
print(d["msg"] if d.get("code") == 7 else "code %s: %s" % (d.get("code"), d.get("msg")))' 2>/dev/null
}
# ctl_msg CMD ARGS...: stderr's "arbtablectl: " line when exit 64
ctl_msg() {
	local err rc
	err=$("$CTL" "$@" 2>&1 >/dev/null)
	rc=$?
	[ "$rc" = 64 ] || { echo "exit $rc: $err"; return; }
	sed -n 's/^arbtablectl: //p' <<<"$err" | head -n1
}
# sim_msg OPTIONS: arbsim's reason for refusing class 1:10 OPTIONS (its
# decision's text), or "accepted"
sim_msg() {
	printf 'qdisc auto rate 10mbit\nclass 1:10 %s\n' "$1" | "$SIM" -n 1 -o 0 -j - 2>/dev/null |
		python3 -c 'import json,sys
d = [x for x in json.load(sys.stdin)["decisions"] if x.get("class") == "1:10"][0]
print(d["text"] if d["result"] == "rejected" else "accepted" if d["result"] == "ok" else d["result"])' 2>/dev/null
}
# same WHAT GOT WANT
same() {
	if [ "$2" = "$3" ]; then ok "$1: $3"; else bad "$1: got \"$2\", want \"$3\""; fi
}

# each: OPTIONS REASON [CNI-REASON]: the four front ends on OPTIONS;
# arbtable-cni's reason when its defaultShare makes it another ("-":
# accepted, the ADD stops at the missing CNI_NETNS, code 4)
each() {
	local opts=$1 why=$2 cwhy=${3:-$2} got
	same "arbtablectl request $opts" "$(ctl_msg request $opts)" "request: $why"
	same "arbtablectl admit nosuchdev0 1:10 $opts" "$(ctl_msg admit nosuchdev0 1:10 $opts)" "admit: $why"
	same "arbsim class 1:10 $opts" "$(sim_msg "$opts")" "$why"
	got=$(cni_msg "\"runtimeConfig\":{\"arbtable\":$(json_req "$opts")}")
	if [ "$cwhy" = - ]; then
		same "arbtable-cni runtimeConfig.arbtable $opts (defaultShare added)" "${got%%:*}" "code 4"
	else
		same "arbtable-cni runtimeConfig.arbtable $opts" "$got" "runtimeConfig.arbtable: $cwhy"
	fi
}

each "rate 1mbit share 3" "$BOTH_RS"
each "rate 1mbit latency 1ms share 3" "$BOTH_RS"
each "rate 1mbit latency 1ms distance 8" "$BOTH_LD"
each "share 3 latency 1ms distance 8" "$BOTH_LD"
each "rate 0" "$RATE0"
each "rate 3000tbit" "$RATEMAX"
each "share 0" "$SHARE"
each "share 256" "$SHARE"
each "rate 1mbit latency 0" "$LAT0"
each "rate 1mbit distance 0" "$DIST"
each "rate 1mbit distance 65" "$DIST"
each "share 3 latency 1ms" "$LATSHARE"
each "latency 1ms" "$NEEDRS" "$LATSHARE"
each "distance 8" "$NEEDRS" -
# the first reason the module gives wins
each "rate 0 share 3" "$RATE0"
each "share 0 latency 1ms distance 8" "$SHARE"

# a tenant must hold something: arbtablectl request and arbtable-cni's
# system class (a tenant's request gets defaultShare; admit and arbsim
# make classes without a reservation)
same "arbtablectl request link 1gbit" "$(ctl_msg request link 1gbit)" "request: $NEED"
same "arbtable-cni systemClass {\"minor\":\"0x20\"}" "$(cni_msg '"systemClass":{"minor":"0x20"}')" "systemClass: $NEED"
same "arbtable-cni systemClass rate 1% share 2" "$(cni_msg '"systemClass":{"rate":"1%","share":"2"}')" "systemClass: $BOTH_RS"
same "arbtable-cni systemClass rate 1mbit latency 1ms distance 8" \
	"$(cni_msg '"systemClass":{"rate":"1mbit","latency":"1ms","distance":"8"}')" "systemClass: $BOTH_LD"
same "arbtable-cni systemClass share 2 latency 1ms" "$(cni_msg '"systemClass":{"share":"2","latency":"1ms"}')" "systemClass: $LATSHARE"

# the strict class: arbtablectl admit and arbsim
same "arbtablectl admit nosuchdev0 1:10 strict ceil 1mbit rate 1mbit" \
	"$(ctl_msg admit nosuchdev0 1:10 strict ceil 1mbit rate 1mbit)" "admit: $STRICT"
same "arbsim class 1:10 strict ceil 1mbit rate 1mbit" "$(sim_msg "strict ceil 1mbit rate 1mbit")" "$STRICT"

# a change: its options on their own (the kernel merges them into the
# class's reservation, which only it knows)
same "arbtablectl change nosuchdev0 1:10 rate 1mbit share 3" \
	"$(ctl_msg change nosuchdev0 1:10 rate 1mbit share 3)" "change: $BOTH_RS"
got=$(ctl_msg change nosuchdev0 1:10 latency 1ms)
same "arbtablectl change nosuchdev0 1:10 latency 1ms: left to the kernel (the device is looked up)" \
	"${got%%:*}" "exit 2"

# good requests pass every front end
for opts in "rate 1mbit latency 50ms" "rate 1mbit distance 8" "share 3 distance 16" "share 255"; do
	same "arbsim class 1:10 $opts" "$(sim_msg "$opts")" accepted
	got=$("$CTL" request $opts >/dev/null 2>&1; echo $?)
	same "arbtablectl request $opts: exit" "$got" 0
	got=$(ctl_msg admit nosuchdev0 1:10 $opts)
	same "arbtablectl admit nosuchdev0 1:10 $opts: to the device lookup" "${got%%:*}" "exit 2"
	got=$(cni_msg "\"runtimeConfig\":{\"arbtable\":$(json_req "$opts")}")
	same "arbtable-cni runtimeConfig.arbtable $opts: to CNI_NETNS" "${got%%:*}" "code 4"
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
