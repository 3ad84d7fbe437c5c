#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# arbtable-cni (issue 17, part 1) driven exactly as a runtime drives a
# chained plugin: CNI_COMMAND, CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME,
# CNI_PATH in the environment, the network config (with prevResult, as
# libcni builds it) on stdin, the result or error as JSON on stdout.
# The "main plugin" is played by the test: a veth pair into a netns per
# container (lib_net.sh net_tenant), described in prevResult as ptp
# would.  The egress device is the virtio NIC (vm.sh -n); the plugin
# creates its arbtable root from the config's qdisc options.
#
# Checks: VERSION; bad configs (missing device, bad rate, unknown keys,
# not JSON, unsupported version, missing CNI_CONTAINERID), each a CNI
# error with a code and nothing changed; a refused request carries the
# kernel's reason in msg and details, leaves nothing (not even the root
# it created); ADD returns prevResult; class, fw filter and mark filter
# as the plugin documents them, the minor derived from the container id;
# CHECK passes, and fails once a filter is gone; a failure at ADD's last
# kernel step undoes the class and the fw filter; two concurrent ADDs
# whose ids hash to the same tenant number; ADD twice; DEL twice; DEL
# after the netns is gone; DEL returns tc's and arbtablectl's view of the
# table to the state before the ADDs; the last DEL leaves no class,
# filter or state.  CNI 1.1: STATUS on good and bad devices, healthy
# (exit 0, the reason on stderr) on a root someone replaced, a full table
# and a manual-mode root; containers on ipvlan, macvlan and netkit
# interfaces: ADD, CHECK, DEL pass for one that asks for nothing, a
# request is refused naming the kind; ADD, CHECK,
# DEL at 1.1.0 with cniVersions and at 0.3.1 (the result's ips in each
# version's form); an ADD killed (test hook) after its filters undone by
# DEL, one killed after its admission undone by GC; GC releasing an
# attachment not in valid-attachments while keeping the valid one; CHECK
# and DEL on a record as an earlier version wrote it (a node upgraded
# with pods running); DEL on a 0-byte record with a config without
# device; --ensure-root (the node agent's root, qdisc.mtu pinned, the
# system class); qdisc.rootMode: auto lockless on a 4-queue veth and
# locked on a 1-queue dummy, locked and lockless as asked, bad values
# refused.  The clsact of a killed ADD: removed by DEL when its
# intent said ADD was about to make it (killed after the mark filter, and
# right after the clsact), kept when it was there before the ADD or holds
# someone else's filter.  Traffic under a real engine: test_podman.sh.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_net.sh"
. "$(dirname "$0")/lib_cni.sh"
tap_begin "arbtable-cni: CNI 1.0/1.1 conformance (env + stdin), admission, atomic ADD, idempotent DEL, CHECK, STATUS, GC, killed ADDs"
tmp=$(mktemp -d)
TENANTS="ca cb cc cd xipvlan xmacvlan xnetkit"
cleanup() {
	net_teardown $TENANTS
	ip link del arbt-dum0 2>/dev/null
	ip link del arbt-mq0 2>/dev/null
	ip link del arbt-nkh 2>/dev/null
	ip link del arbt-par0 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
cni_begin cni

# conf [JSON-MEMBERS]: a network config as libcni hands it to the second
# plugin of a conflist (name and cniVersion copied in); extra members
# (runtimeConfig, prevResult, ...) appended
conf() {
	printf '{"cniVersion":"1.0.0","name":"tenants","type":"arbtable-cni","device":"%s","stateDir":"%s","qdisc":{"rate":"10mbit","burst":"30k","highlimit":1}%s}' \
		"$NET" "$SD" "${1:+,$1}"
}
# prev NAME N: the prevResult ptp would return for tenant NAME
prev() {
	printf '"prevResult":{"cniVersion":"1.0.0","interfaces":[{"name":"vh-%s","mac":"%s"},{"name":"eth0","mac":"%s","sandbox":"/run/netns/arbt-%s"}],"ips":[{"address":"10.88.%s.2/24","gateway":"10.88.%s.1","interface":1}],"routes":[{"dst":"0.0.0.0/0"}],"dns":{}}' \
		"$1" "$(cat /sys/class/net/vh-$1/address 2>/dev/null)" \
		"$(ip -n "arbt-$1" -o link show eth0 2>/dev/null | sed -E 's/.*link\/ether ([0-9a-f:]+).*/\1/')" "$1" "$2" "$2"
}
# jget FILTER: a jq filter's raw output on the JSON in OUT, empty where
# it fails or is null (jq, not a python per field: a lighter process to
# start in a slow guest)
jget() { printf '%s' "$OUT" | jq -r "($1) // empty" 2>/dev/null; }
# cni_err CODE: OUT is a CNI error with that code and a message
cni_err() {
	local code
	code=$(jget 'if (.code | type) == "number" and (.msg // "") != "" and (.cniVersion // "") != "" then .code else "" end')
	[ "$RC" != 0 ] && [ "$code" = "$1" ] && return 0
	diag "want a CNI error with code $1, exit non-zero; got exit $RC: $OUT"
	return 1
}
# tenant T: the tenant number the plugin derives for container ID (FNV-1a
# of id, 0xff, ifname; modulo 127 + 1 with the default markMask 0x7f), before
# any probing past a taken number
TENANT_PY='import sys
def t(cid):
    h = 2166136261
    for b in cid.encode() + b"\xff" + b"eth0":
        h = ((h ^ b) * 16777619) & 0xffffffff
    return h % 127 + 1
'
tenant_of() { python3 -c "$TENANT_PY"'
print(t(sys.argv[1]))' "$1"; }
# same_tenant ID PREFIX: the first PREFIXn whose tenant number is ID's
same_tenant() { python3 -c "$TENANT_PY"'
w = t(sys.argv[1])
print(next(sys.argv[2] + str(i) for i in range(100000) if t(sys.argv[2] + str(i)) == w))' "$1" "$2"; }
# table_state: the table as tc and arbtablectl show it, and the filters
table_state() {
	tc -d qdisc show dev "$NET" | grep -v '^qdisc \(pfifo\|mq\|fq_codel\) '
	tc -d class show dev "$NET"
	tc filter show dev "$NET" parent 1:
	"$CTL" show "$NET" 2>&1
}
# no_trace NAME: nothing of tenant NAME left on its veth (no filter, no
# clsact: vh-NAME has none but the plugin's) or in the state directory
# (the lock file aside)
no_trace() {
	local f q
	f=$(tc filter show dev "vh-$1" ingress 2>/dev/null)
	q=$(tc qdisc show dev "vh-$1" 2>/dev/null | grep -E '^qdisc (clsact|ingress) ')
	[ -z "$f" ] && [ -z "$q" ] && [ -z "$(ls "$SD"/*"$1"* 2>/dev/null)" ] && return 0
	diag "vh-$1 ingress filters: $f; its hook: $q; state: $(ls "$SD" 2>/dev/null)"
	return 1
}
no_root() {
	! tc qdisc show dev "$NET" | grep -q '^qdisc arbtable' ||
		{ diag "$(tc qdisc show dev "$NET")"; return 1; }
}
clean_of() { no_root && no_trace "$1"; }
# refusal_ok: OUT is code 100, its details an allocator's refusal (the
# kernel's extack, as tc would print it after "Error: "), its msg what
# was refused (not the reason again: libcni prints msg and details joined)
refusal_ok() {
	local det msg
	cni_err 100 || return 1
	det=$(jget '.details // ""')
	msg=$(jget .msg)
	grep -qE "^${ARB_REFUSAL_RE#^Error: }" <<<"$det" &&
		grep -qE "^container ca \(rate 20mbit, from [^)]+\) refused on $NET$" <<<"$msg" && return 0
	diag "details: $det; msg: $msg"
	return 1
}
# rate_msg_ok: OUT is code 7 and msg names the bad rate
bad_rate_ok() { cni_err 7 && grep -q 'bad rate "fast"' <<<"$(jget .msg)"; }

for t in ca:1 cb:2 cc:3 cd:4; do
	net_tenant "${t%:*}" "${t#*:}" || { tap_fail "cni: tenant namespace ${t%:*}"; tap_end; exit; }
done

# ---- VERSION
OUT=$(echo '{"cniVersion":"1.0.0"}' | env -i CNI_COMMAND=VERSION "$CNI")
RC=$?
tap_check "VERSION: exit 0, supportedVersions 0.3.0 to 1.1.0 ($OUT)" \
	test "$RC:$(jget '(.supportedVersions | join(",")) + ":" + .cniVersion')" = "0:0.3.0,0.3.1,0.4.0,1.0.0,1.1.0:1.0.0"

# ---- bad configs: a CNI error, nothing created
P=$(prev ca 1)
cni ADD ca /run/netns/arbt-ca '{"cniVersion":"1.0.0","name":"tenants","type":"arbtable-cni","stateDir":"'"$SD"'",'"$P"'}'
tap_check "bad config: no device -> code 7 ($(jget .msg))" cni_err 7
cni ADD ca /run/netns/arbt-ca "$(conf '"runtimeConfig":{"arbtable":{"rate":"fast"}},'"$P")"
tap_check "bad config: rate \"fast\" -> code 7 naming the rate ($(jget .msg))" bad_rate_ok
cni ADD ca /run/netns/arbt-ca "$(conf '"devcie":"x",'"$P")"
tap_check "bad config: unknown key devcie -> code 2 ($(jget .msg))" cni_err 2
cni ADD ca /run/netns/arbt-ca "$(conf '"runtimeConfig":{"io.kubernetes.cri.pod-annotations":{"arbtable.io/latncy":"1ms","team":"x"}},'"$P")"
tap_check "bad config: unknown annotation arbtable.io/latncy -> code 7 ($(jget .msg))" cni_err 7
cni ADD ca /run/netns/arbt-ca "$(conf "$P")" "K8S_POD_NAME=x;ARBTABLE_RATE=3mbit;ARBTABLE_SHARE=4"
tap_check "bad request: rate and share together (CNI_ARGS) -> code 7 ($(jget .msg))" cni_err 7
cni ADD ca /run/netns/arbt-ca '{"cniVersion":"1.0.0",'
tap_check "bad config: not JSON -> code 6" cni_err 6
cni ADD ca /run/netns/arbt-ca "$(conf "$P" | sed 's/"1.0.0"/"0.2.0"/')"
tap_check "bad config: cniVersion 0.2.0 -> code 1" cni_err 1
OUT=$(conf | env -i CNI_COMMAND=ADD CNI_IFNAME=eth0 CNI_NETNS=/run/netns/arbt-ca "$CNI" 2>/dev/null); RC=$?
tap_check "bad env: no CNI_CONTAINERID -> code 4" cni_err 4
cni ADD ../ca /run/netns/arbt-ca "$(conf "$P")"
tap_check "bad env: CNI_CONTAINERID ../ca -> code 4" cni_err 4
tap_check "bad configs left no arbtable root, filter or state" clean_of ca

# ---- refused: the kernel's reason, and nothing left (the root ADD made)
cni ADD ca /run/netns/arbt-ca "$(conf '"runtimeConfig":{"io.kubernetes.cri.pod-annotations":{"arbtable.io/rate":"20mbit"}},'"$P")"
diag "refusal: $OUT"
tap_check "refused (rate 20mbit of 10mbit): code 100, details the kernel's reason, msg what was refused" refusal_ok
tap_check "refused: the root the ADD created is gone again, no filter, no state" clean_of ca

# ---- ADD: prevResult through, class + filters as documented
ta=$(tenant_of ca)
cni ADD ca /run/netns/arbt-ca "$(conf '"runtimeConfig":{"io.kubernetes.cri.pod-annotations":{"arbtable.io/rate":"3mbit","arbtable.io/latency":"30ms","team":"a"}},'"$P")"
want=$(printf '{%s}' "$P" | jq -S -c '.prevResult | .cniVersion = "1.0.0"')
got=$(printf '%s' "$OUT" | jq -S -c . 2>/dev/null)
tap_check "ADD ca (rate 3mbit latency 30ms, pod annotations): exit 0, stdout is prevResult" test "$RC:$got" = "0:$want"
[ "$RC" = 0 ] || diag "ADD ca: $OUT $(cat "$tmp/stderr")"
ma=$(printf '%x' $((0x100 + ta)))
tap_check "ca: class 1:$ma (minorBase 0x100 + tenant $ta from the container id) rate 3Mbit latency 30ms" \
	bash -c 'tc class show dev "$1" classid "1:$2" | grep -qE "rate 3Mbit .*latency 30(\.0)?ms"' _ "$NET" "$ma"
tap_check "ca: fw filter handle 0x$(printf '%x' "$ta")/0x7f (the default markMask) -> 1:$ma on $NET" \
	bash -c 'tc filter show dev "$1" parent 1: | grep -qE "handle 0x$2/0x7f classid 1:$3"' _ "$NET" "$(printf '%x' "$ta")" "$ma"
tap_check "ca: matchall on vh-ca ingress sets mark 0x$(printf '%x' "$ta")/0x7f" \
	bash -c 'tc -d filter show dev vh-ca ingress | grep -qE "mark ($2|0x0*$1)/(0x0*7f|127)( |$)"' _ "$(printf '%x' "$ta")" "$ta"
cni CHECK ca /run/netns/arbt-ca "$(conf "$P")"
tap_check "CHECK ca: exit 0, no output" test "$RC:$OUT" = "0:"
[ "$RC" = 0 ] || diag "CHECK ca: $OUT"
cni ADD ca /run/netns/arbt-ca "$(conf "$P")"
tap_check "ADD ca again (no DEL between): code 104" cni_err 104

before=$(table_state)

# ---- concurrent ADDs whose ids start at the same tenant number: the lock
# makes the second move on (without it both would take the same class)
tb=$(tenant_of cb)
cid_c=$(same_tenant cb cc)
diag "tenant numbers: ca $ta, cb $tb, $cid_c $(tenant_of "$cid_c")"
Pb=$(prev cb 2) Pc=$(prev cc 3)
( cni ADD cb /run/netns/arbt-cb "$(conf '"runtimeConfig":{"arbtable":{"rate":"500kbit","distance":8}},'"$Pb")"; echo "$RC $OUT" >"$tmp/add.cb" ) &
p1=$!
( cni ADD "$cid_c" /run/netns/arbt-cc "$(conf "$Pc")" "IgnoreUnknown=1;ARBTABLE_SHARE=5"; echo "$RC $OUT" >"$tmp/add.cc" ) &
p2=$!
wait $p1 $p2
rb=$(cut -d' ' -f1 "$tmp/add.cb") rc=$(cut -d' ' -f1 "$tmp/add.cc")
ncls=$(tc class show dev "$NET" | grep -c '^class arbtable 1:1')
tap_check "two concurrent ADDs (same starting tenant $tb): both exit 0, 3 tenant classes" test "$rb:$rc:$ncls" = "0:0:3"
[ "$rb:$rc" = 0:0 ] || diag "cb: $(cat "$tmp/add.cb"); $cid_c: $(cat "$tmp/add.cc")"
tap_check "CNI_ARGS share 5 -> class with share 5; runtimeConfig rate 500kbit distance 8 -> that class" bash -c \
	'tc class show dev "$1" | grep -qE "share 5( |$)" && tc class show dev "$1" | grep -qE "rate 500Kbit .*distance 8( |$)"' _ "$NET"

# ---- a failure at ADD's last step (the mark filter) undoes the rest
# matchall takes one filter per prio: any at the plugin's prio blocks it
tc qdisc add dev vh-cd clsact && tc filter add dev vh-cd ingress prio 100 handle 1 matchall action pass
mid=$(table_state)
cni ADD cd /run/netns/arbt-cd "$(conf '"runtimeConfig":{"arbtable":{"rate":"1mbit"}},'"$(prev cd 4)")"
tap_check "ADD cd with its mark filter's slot taken: non-zero exit, code 102" cni_err 102
tap_check "failed ADD cd: class and fw filter undone (table as before)" test "$(table_state)" = "$mid"
tc qdisc del dev vh-cd clsact

# ---- CHECK finds a missing filter; DEL cleans up anyway
tcb=$(jq -r .tenant "$SD/cb-eth0.json")
tc filter del dev "$NET" parent 1: protocol all prio 100 handle "$(printf '0x%x' "$tcb")" fw
cni CHECK cb /run/netns/arbt-cb "$(conf "$Pb")"
tap_check "CHECK cb after its fw filter was deleted: code 103 ($(jget .msg))" cni_err 103
cni DEL cb /run/netns/arbt-cb "$(conf "$Pb")"
r1=$RC
cni DEL cb /run/netns/arbt-cb "$(conf "$Pb")"
tap_check "DEL cb twice: both exit 0 (${r1}, ${RC})" test "$r1:$RC:$OUT" = "0:0:"
ip netns del arbt-cc
cni DEL "$cid_c" - "$(conf "$Pc")"
tap_check "DEL $cid_c after its netns is gone, without CNI_NETNS: exit 0" test "$RC" = 0
after=$(table_state)
tap_check "after DEL of cb and $cid_c the table, classes, filters and arbtablectl show are as before their ADDs" \
	test "$after" = "$before"
[ "$after" = "$before" ] || diff <(echo "$before") <(echo "$after") | head -n 20 | sed 's/^/# /'
cni CHECK cb /run/netns/arbt-cb "$(conf "$Pb")"
tap_check "CHECK cb after DEL: code 3" cni_err 3
tap_check "DEL left nothing of cb on its veth or in the state directory" no_trace cb

# ---- CNI 1.1: cniVersions, results per version, STATUS, killed ADDs, GC
# conf11: conf at cniVersion 1.1.0 with a cniVersions list naming one the
# plugin does not know (the runtime picked 1.1.0)
conf11() { conf "$@" | sed 's/"cniVersion":"1.0.0"/"cniVersion":"1.1.0","cniVersions":["0.4.0","1.0.0","1.1.0","2.0.0"]/'; }
base11=$(table_state)
# status_note RE: STATUS exited 0 with no output (healthy) and said RE
# on stderr (the runtime's log): the table's state is not the plugin's
# health (DESIGN.md 6: containerd 2.x makes a node NotReady on a failed
# STATUS)
status_note() {
	[ "$RC:$OUT" = "0:" ] && grep -qE "$1" "$tmp/stderr" && return 0
	diag "STATUS: exit $RC: $OUT; stderr: $(cat "$tmp/stderr")"
	return 1
}
# gone_ok NAME: the last command exited 0, nothing of NAME is left and
# the table is as at the start of this part
gone_ok() {
	[ "$RC" = 0 ] && no_trace "$1" && [ "$(table_state)" = "$base11" ] && return 0
	diag "exit $RC: $OUT $(cat "$tmp/stderr")"
	[ "$(table_state)" = "$base11" ] || diff <(echo "$base11") <(table_state) | head -n 20 | sed 's/^/# /'
	return 1
}
phase() { jq -r .phase "$SD/$1-eth0.json" 2>/dev/null; }
# killed_with MARK-RE: ADD cd died of SIGKILL, its record says "adding",
# its class (rate 1Mbit) is there, and a mark filter matching MARK-RE on
# vh-cd if MARK-RE is not empty
killed_with() {
	local f
	f=$(tc -d filter show dev vh-cd ingress)
	[ "$RC" = 137 ] && [ "$(phase cd)" = adding ] &&
		tc class show dev "$NET" | grep -q '^class arbtable 1:1.* rate 1Mbit' &&
		{ [ -z "$1" ] || grep -qE "$1" <<<"$f"; } && return 0
	diag "exit $RC, phase $(phase cd), classes: $(tc class show dev "$NET" | tr '\n' ' '), vh-cd: $f"
	return 1
}
cni STATUS - - "$(conf11)"
tap_check "STATUS (1.1.0) with an auto-mode root on $NET: exit 0, no output" test "$RC:$OUT" = "0:"
ip link add arbt-dum0 type dummy
cni STATUS - - "$(conf11 | sed "s/\"device\":\"$NET\"/\"device\":\"arbt-dum0\"/")"
tap_check "STATUS on a device with the default root (ADD can make it): exit 0" test "$RC:$OUT" = "0:"
# --ensure-root (the node agent's): the root ADD makes, made before any
# ADD: auto mode, the config's qdisc options (mtu pinned to the frame),
# the system class 1:ff as its default; a second call changes nothing
dumconf() { conf11 | sed "s/\"device\":\"$NET\"/\"device\":\"arbt-dum0\"/; s/\"highlimit\":1/\"highlimit\":1,\"mtu\":\"1514\"/"; }
root_cmd() { OUT=$(dumconf | env -i PATH="$PATH" "$CNI" --ensure-root 2>"$tmp/stderr"); RC=$?; }
root_cmd
root_ok() {
	local q
	q=$(tc qdisc show dev arbt-dum0)
	[ "$RC:$OUT" = "0:" ] && grep -qE '^qdisc arbtable 1: root .*default ff .*mtu 1514 ' <<<"$q" &&
		tc class show dev arbt-dum0 | grep -q '^class arbtable 1:ff ' &&
		[ "$(tc class show dev arbt-dum0 | grep -c '^class arbtable')" = 1 ] && return 0
	diag "exit $RC: $OUT $(cat "$tmp/stderr"); $q; $(tc class show dev arbt-dum0)"
	return 1
}
tap_check "arbtable-cni --ensure-root on a device with the default root: exit 0, auto root 1: with mtu 1514 pinned (qdisc.mtu), default ff, the system class 1:ff alone" root_ok
before_root=$(tc -d qdisc show dev arbt-dum0; tc class show dev arbt-dum0)
root_cmd
tap_check "--ensure-root again: exit 0, nothing changed" \
	test "$RC:$OUT:$(tc -d qdisc show dev arbt-dum0; tc class show dev arbt-dum0)" = "0::$before_root"
tc qdisc del dev arbt-dum0 root
# qdisc.rootMode: auto (absent) is lockless on a device with more than
# one transmit queue, locked on one; locked and lockless as asked; a bad
# value refused before anything is made
ip link add arbt-mq0 numtxqueues 4 type veth peer name arbt-mq0p
# mode_root DEV MEMBERS: --ensure-root on DEV, MEMBERS added to qdisc
mode_root() {
	OUT=$(dumconf | sed "s/\"device\":\"arbt-dum0\"/\"device\":\"$1\"/; s/\"highlimit\":1/\"highlimit\":1$2/" |
		env -i PATH="$PATH" "$CNI" --ensure-root 2>"$tmp/stderr")
	RC=$?
}
# mode_ok DEV WORD: exit 0, and tc -d shows DEV's root WORD, not the other
mode_ok() {
	local q other=locked
	[ "$2" = locked ] && other=lockless
	q=$(tc -d qdisc show dev "$1" root)
	[ "$RC:$OUT" = "0:" ] && grep -q '^qdisc arbtable 1: root' <<<"$q" &&
		grep -qw "$2" <<<"$q" && ! grep -qw "$other" <<<"$q" && return 0
	diag "exit $RC: $OUT $(cat "$tmp/stderr"); $q"
	return 1
}
mode_root arbt-mq0 ""
tap_check "--ensure-root, rootMode absent (auto), on a 4-queue veth: tc -d qdisc show says lockless" mode_ok arbt-mq0 lockless
tc qdisc del dev arbt-mq0 root
mode_root arbt-mq0 ',"rootMode":"auto"'
tap_check "rootMode auto on the 4-queue veth: lockless" mode_ok arbt-mq0 lockless
tc qdisc del dev arbt-mq0 root
mode_root arbt-dum0 ""
tap_check "rootMode absent (auto) on the 1-queue dummy: locked" mode_ok arbt-dum0 locked
tc qdisc del dev arbt-dum0 root
mode_root arbt-mq0 ',"rootMode":"locked"'
tap_check "rootMode locked on the 4-queue veth: locked" mode_ok arbt-mq0 locked
tc qdisc del dev arbt-mq0 root
mode_root arbt-dum0 ',"rootMode":"lockless"'
tap_check "rootMode lockless on the 1-queue dummy: lockless" mode_ok arbt-dum0 lockless
tc qdisc del dev arbt-dum0 root
# bad_mode_ok VALUE: code 7 whose msg names VALUE, and no root on arbt-mq0
bad_mode_ok() {
	cni_err 7 && grep -qF "bad rootMode $1" <<<"$(jget .msg)" &&
		! tc qdisc show dev arbt-mq0 | grep -q '^qdisc arbtable' && return 0
	diag "msg: $(jget .msg); $(tc qdisc show dev arbt-mq0)"
	return 1
}
mode_root arbt-mq0 ',"rootMode":"nolock"'
tap_check "rootMode \"nolock\": code 7 naming it, no root made ($(jget .msg))" bad_mode_ok '"nolock"'
mode_root arbt-mq0 ',"rootMode":1'
tap_check "rootMode 1 (not a string): code 7, no root made" bad_mode_ok 1
ip link del arbt-mq0
tc qdisc add dev arbt-dum0 root handle 7: htb
root_cmd
root_htb() { cni_err 101 && tc qdisc show dev arbt-dum0 | grep -q '^qdisc htb 7: root'; }
tap_check "--ensure-root on a device whose root is htb 7:: code 101, the htb left alone" root_htb
cni STATUS - - "$(conf11 | sed "s/\"device\":\"$NET\"/\"device\":\"arbt-dum0\"/")"
tap_check "STATUS on a device whose root someone replaced (htb 7:): exit 0, no output, stderr names htb 7: ($(head -c 200 "$tmp/stderr"))" \
	status_note 'STATUS \(healthy\) on arbt-dum0: the root qdisc is htb 7: \(not arbtable\)'
# a full table: an auto-mode root with all 64 classes taken (64 share-1
# classes fill the LOW table)
tc qdisc del dev arbt-dum0 root
tc qdisc add dev arbt-dum0 root handle 1: arbtable auto rate 10mbit
for i in $(seq 1 64); do printf 'class add dev arbt-dum0 parent 1: classid 1:%x arbtable share 1\n' "$i"; done |
	tc -batch - 2>&1 | head -n 3 | sed 's/^/# /'
nfull=$(tc class show dev arbt-dum0 | grep -c '^class arbtable')
cni STATUS - - "$(conf11 | sed "s/\"device\":\"$NET\"/\"device\":\"arbt-dum0\"/")"
tap_check "STATUS on an auto-mode root with all $nfull classes taken: exit 0, no output, stderr says the table is full" \
	status_note 'STATUS \(healthy\) on arbt-dum0: the arbtable root has all 64 classes taken'
tc qdisc del dev arbt-dum0 root
tc qdisc add dev arbt-dum0 root handle 1: arbtable manual rate 10mbit
cni STATUS - - "$(conf11 | sed "s/\"device\":\"$NET\"/\"device\":\"arbt-dum0\"/")"
tap_check "STATUS on a manual-mode arbtable root: exit 0, stderr says ADD refuses until it is auto" \
	status_note 'the arbtable root is not in auto mode: ADD refuses'
cni STATUS - - "$(conf11 | sed "s/\"device\":\"$NET\"/\"device\":\"arbt-none0\"/")"
tap_check "STATUS on a missing device: code 50" cni_err 50
ip link del arbt-dum0

# ---- containers whose interface is not a veth (ipvlan, macvlan, netkit:
# no host side to mark them on).  One that asks for nothing passes ADD,
# CHECK and DEL unclassified: nothing made, nothing stored, its traffic
# takes the root's default class.  One that asks for a rate is refused,
# code 105, the interface's kind named.  netkit needs 6.7+ and an ip
# that knows it (bookworm-backports' iproute2, unpacked by setup): on
# an older kernel it is a skip naming the version, elsewhere a failure.
IP615=/var/lib/arbtable/iproute2-bpo/root/bin/ip
ip link add arbt-par0 type dummy && ip link set arbt-par0 up
# nonveth KIND: netns arbt-xKIND holding an interface eth0 of that kind
nonveth() {
	ip netns add "arbt-x$1" || return 1
	case $1 in
	ipvlan) ip link add link arbt-par0 name arbt-xif type ipvlan mode l2 ;;
	macvlan) ip link add link arbt-par0 name arbt-xif type macvlan mode bridge ;;
	netkit)
		[ -x "$IP615" ] || { echo "$IP615 missing (setup unpacks bookworm-backports' iproute2 there)" >&2; false; } &&
			"$IP615" link add arbt-nkh type netkit peer name arbt-xif ;;
	esac || return 1
	ip link set arbt-xif netns "arbt-x$1" && ip -n "arbt-x$1" link set arbt-xif name eth0 &&
		ip -n "arbt-x$1" link set eth0 up
}
# nv_same: the last command exited 0 and changed nothing: the table and
# its filters as before, no state of the container, no clsact on the parent
nv_same() {
	[ "$RC" = 0 ] && [ "$(table_state)" = "$nv_before" ] && [ -z "$(ls "$SD"/x* 2>/dev/null)" ] &&
		! tc qdisc show dev arbt-par0 | grep -q clsact && return 0
	diag "exit $RC: $OUT $(cat "$tmp/stderr"); state: $(ls "$SD")"
	[ "$(table_state)" = "$nv_before" ] || diff <(echo "$nv_before") <(table_state) | head -n 10 | sed 's/^/# /'
	return 1
}
nv_added() { nv_same && [ "$(jget '.cniVersion + ":" + .interfaces[0].name + ":" + .ips[0].address')" = "1.0.0:eth0:10.99.1.2/24" ]; }
# nv_refused KIND: code 105, the message naming the kind and what was
# asked, and nothing changed
nv_refused() {
	local m
	m=$(jget .msg)
	cni_err 105 && grep -q "container x$1 asked for rate 1mbit, but eth0 in /run/netns/arbt-x$1 is an\{0,1\} $1, not a veth: .*cannot classify $1 interfaces" <<<"$m" &&
		RC=0 nv_same && return 0
	diag "msg: $m"
	return 1
}
for k in ipvlan macvlan netkit; do
	if ! nonveth $k 2>"$tmp/nv.err"; then
		if [ $k = netkit ] && ! kver_ge 6 7; then
			tap_skip "netkit: a no-request ADD passes, a request is refused" "Linux $(uname -r) has no netkit (6.7+)"
		else
			tap_fail "$k: an $k interface eth0 in arbt-x$k: $(head -c 200 "$tmp/nv.err")"
		fi
		ip netns del "arbt-x$k" 2>/dev/null
		continue
	fi
	Px='"prevResult":{"cniVersion":"1.0.0","interfaces":[{"name":"eth0","sandbox":"/run/netns/arbt-x'$k'"}],"ips":[{"address":"10.99.1.2/24","interface":0}],"dns":{}}'
	nv_before=$(table_state)
	cni ADD "x$k" "/run/netns/arbt-x$k" "$(conf "$Px")"
	tap_check "$k interface, a container that asks for nothing: ADD exit 0, result its prevResult, nothing made or stored" nv_added
	cni CHECK "x$k" "/run/netns/arbt-x$k" "$(conf "$Px")"
	tap_check "$k: CHECK exit 0, no output" test "$RC:$OUT" = "0:"
	[ "$RC" = 0 ] || diag "CHECK: $OUT"
	cni DEL "x$k" "/run/netns/arbt-x$k" "$(conf "$Px")"
	tap_check "$k: DEL exit 0, nothing changed" nv_same
	cni ADD "x$k" "/run/netns/arbt-x$k" "$(conf '"runtimeConfig":{"arbtable":{"rate":"1mbit"}},'"$Px")"
	tap_check "$k interface, a container that asks for rate 1mbit: code 105 naming $k ($(jget .msg | head -c 160))" nv_refused $k
	ip netns del "arbt-x$k"
	ip link del arbt-nkh 2>/dev/null
done
ip link del arbt-par0

# results in the version asked: 1.1.0 drops ips' version, 0.3.1 has it
P11=$(prev cb 2 | sed 's/"address":/"version":"4","address":/')
cni ADD cb /run/netns/arbt-cb "$(conf11 '"runtimeConfig":{"arbtable":{"rate":"1mbit"}},'"$P11")"
tap_check "ADD cb at 1.1.0 (cniVersions listing 2.0.0): exit 0, result 1.1.0 without ips' version" \
	test "$RC:$(jget '.cniVersion + ":" + (.ips[0] | has("version") | tostring) + ":" + .ips[0].address')" = "0:1.1.0:false:10.88.2.2/24"
[ "$RC" = 0 ] || diag "ADD cb 1.1.0: $OUT $(cat "$tmp/stderr")"
cni CHECK cb /run/netns/arbt-cb "$(conf11 "$P11")"
tap_check "CHECK cb at 1.1.0: exit 0" test "$RC:$OUT" = "0:"
cni DEL cb /run/netns/arbt-cb "$(conf11 "$P11")"
tap_check "DEL cb at 1.1.0: exit 0, nothing of cb left" gone_ok cb
Pb031=$(prev cb 2 | sed 's/"cniVersion":"1.0.0"/"cniVersion":"0.3.1"/')
cni ADD cb /run/netns/arbt-cb "$(conf "$Pb031" | sed 's/"cniVersion":"1.0.0"/"cniVersion":"0.3.1"/')"
tap_check "ADD cb at 0.3.1: exit 0, result 0.3.1 with ips' version \"4\"" \
	test "$RC:$(jget '.cniVersion + ":" + (.ips[0].version // "none")')" = "0:0.3.1:4"
cni DEL cb - "$(conf | sed 's/"cniVersion":"1.0.0"/"cniVersion":"0.3.1"/')"
tap_check "DEL cb at 0.3.1 without CNI_NETNS: exit 0, table as before" gone_ok cb

# a runtime's timeout kills ADD after the class, both filters: DEL undoes
Pd=$(prev cd 4)
TEST_KILL=mark cni ADD cd /run/netns/arbt-cd "$(conf11 '"runtimeConfig":{"arbtable":{"rate":"1mbit"}},'"$Pd")"
tap_check "ADD cd killed after its mark filter (test hook): SIGKILL, record phase \"adding\", class and mark filter there" \
	killed_with 'mark (0x)?[0-9a-f]+/(0x0*7f|127)( |$)'
cni DEL cd /run/netns/arbt-cd "$(conf11 "$Pd")"
tap_check "DEL after the killed ADD: exit 0, class and both filters gone, table as before" gone_ok cd

# the clsact a killed ADD made: its intent record said ADD was about to
# make it (vh-cd had no ingress hook), so DEL removes it, also when the
# kill came before the mark filter was on it
TEST_KILL=clsact cni ADD cd /run/netns/arbt-cd "$(conf11 '"runtimeConfig":{"arbtable":{"rate":"1mbit"}},'"$Pd")"
cd_intent() { killed_with "" && tc qdisc show dev vh-cd | grep -q '^qdisc clsact' &&
	[ "$(jq -r .createdClsact "$SD/cd-eth0.json")" = 2 ]; }
tap_check "ADD cd killed right after making vh-cd's clsact (test hook): SIGKILL, record \"adding\" with createdClsact 2 (about to make it), the clsact there" cd_intent
cni DEL cd /run/netns/arbt-cd "$(conf11 "$Pd")"
tap_check "DEL after it: exit 0, the clsact (empty: ADD's) removed with class and record, table as before" gone_ok cd
# someone else's: a clsact on vh-cd before the ADD is kept by the DEL
# after a kill (the record says ADD found it); one made after the kill
# that holds a filter is kept too (it cannot be ADD's unused one)
tc qdisc add dev vh-cd clsact
TEST_KILL=mark cni ADD cd /run/netns/arbt-cd "$(conf11 '"runtimeConfig":{"arbtable":{"rate":"1mbit"}},'"$Pd")"
cni DEL cd /run/netns/arbt-cd "$(conf11 "$Pd")"
theirs_kept() {
	[ "$RC" = 0 ] && tc qdisc show dev vh-cd | grep -q '^qdisc clsact' &&
		[ -z "$(tc filter show dev vh-cd ingress)" ] && [ ! -e "$SD/cd-eth0.json" ] &&
		[ "$(table_state)" = "$base11" ] && return 0
	diag "exit $RC: $OUT; vh-cd: $(tc qdisc show dev vh-cd | tr '\n' ' ') $(tc filter show dev vh-cd ingress | tr '\n' ' ')"
	return 1
}
tap_check "a clsact on vh-cd before an ADD killed after its mark filter: DEL removes the mark filter, keeps the clsact" theirs_kept
tc qdisc del dev vh-cd clsact
TEST_KILL=admit cni ADD cd /run/netns/arbt-cd "$(conf11 '"runtimeConfig":{"arbtable":{"rate":"1mbit"}},'"$Pd")"
tc qdisc add dev vh-cd clsact && tc filter add dev vh-cd ingress prio 7 matchall action pass
cni DEL cd /run/netns/arbt-cd "$(conf11 "$Pd")"
used_kept() {
	[ "$RC" = 0 ] && tc qdisc show dev vh-cd | grep -q '^qdisc clsact' &&
		tc filter show dev vh-cd ingress | grep -q 'pref 7 matchall' &&
		grep -q "keeping its clsact qdisc" "$tmp/stderr" && [ ! -e "$SD/cd-eth0.json" ] &&
		[ "$(table_state)" = "$base11" ] && return 0
	diag "exit $RC: $OUT $(cat "$tmp/stderr"); vh-cd: $(tc qdisc show dev vh-cd | tr '\n' ' ')"
	return 1
}
tap_check "ADD killed after its admission (about to make the clsact), then someone's clsact with a filter on vh-cd: DEL keeps it, says so" used_kept
tc qdisc del dev vh-cd clsact

# killed right after the admission: GC undoes it
valid='"cni.dev/valid-attachments":[{"containerID":"ca","ifname":"eth0"},{"containerID":"zz","ifname":"eth0"}]'
TEST_KILL=admit cni ADD cd /run/netns/arbt-cd "$(conf11 '"runtimeConfig":{"arbtable":{"rate":"1mbit"}},'"$Pd")"
tap_check "ADD cd killed after the admission: SIGKILL, record phase \"adding\", class there" killed_with ""
cni GC - - "$(conf11 "$valid")"
tap_check "GC (ca valid) after the killed ADD: exit 0, cd's class and record gone, table as before" gone_ok cd

# a leaked attachment (the runtime lost it, no DEL): GC releases it
cni ADD cd /run/netns/arbt-cd "$(conf11 '"runtimeConfig":{"arbtable":{"rate":"1mbit"}},'"$Pd")"
tap_check "ADD cd at 1.1.0: exit 0, record phase \"added\"" test "$RC:$(phase cd)" = "0:added"
cni GC - - "$(conf11 "$valid")"
tap_check "GC (ca valid): exit 0, cd's class, fw and mark filters and record gone, table as before" gone_ok cd
cni CHECK ca /run/netns/arbt-ca "$(conf11 "$P")"
tap_check "CHECK ca after the GCs: exit 0 (the valid attachment kept)" test "$RC:$OUT" = "0:"

# a node upgraded with pods running: their records are an earlier
# version's (the class id a number, "request" with a set mask, the
# allocation under camelCase keys); CHECK and DEL read them as before
old_record() {
	python3 - "$SD/$1-eth0.json" <<-'EOF'
	import json, sys
	p = sys.argv[1]
	d = json.load(open(p))
	c = d.pop("class")
	st = c.pop("stats")
	def h(s):
	    a, b = s.split(":")
	    return int(a, 16) << 16 | (int(b, 16) if b else 0)
	bits = {"rate": 1, "latency": 2, "distance": 4, "share": 8, "ceil": 16}
	d["classid"] = h(c.pop("handle"))
	d["parent"] = h(d["parent"])
	d["distance"] = st["allocated_distance"]
	d["guaranteedRate"] = st["guaranteed_rate"]
	d["guaranteedBoundNs"] = st["guaranteed_bound"]
	d["request"] = {"set": sum(bits[k] for k in c), "rate": c.get("rate", 0),
	                "latencyNs": c.get("latency", 0), "distance": c.get("distance", 0),
	                "share": c.get("share", 0), "ceil": c.get("ceil", 0)}
	json.dump(d, open(p, "w"), indent=2)
	EOF
}
old_keys() { jq -r '"\(has("class")) \(.request.set) \(.classid > 0)"' "$SD/$1-eth0.json" 2>&1; }
# (beside ca's 32 HIGH slots at distance 2, a 200ms bound fits at distance
# 4; 50ms would need distance 2, which has 31 slots left)
cni ADD cd /run/netns/arbt-cd "$(conf11 '"runtimeConfig":{"arbtable":{"rate":"1mbit","latency":"200ms","ceil":"5mbit"}},'"$Pd")"
rc_add=$RC
[ "$RC" = 0 ] || diag "ADD cd: $OUT $(cat "$tmp/stderr")"
old_record cd
tap_check "ADD cd (rate 1mbit latency 200ms ceil 5mbit), its record rewritten as an earlier version wrote it ($(old_keys cd))" \
	test "$rc_add:$(old_keys cd)" = "0:false 19 true"
cni CHECK cd /run/netns/arbt-cd "$(conf11 "$Pd")"
tap_check "CHECK cd on the earlier version's record: exit 0 (request and allocation read from its keys)" test "$RC:$OUT" = "0:"
[ "$RC" = 0 ] || diag "CHECK cd: $OUT $(cat "$tmp/stderr")"
cni DEL cd /run/netns/arbt-cd "$(conf11 "$Pd")"
tap_check "DEL cd on the earlier version's record: exit 0, class, fw and mark filters and record gone, table as before" gone_ok cd

# DEL on damaged state, with a config that lost its device
: >"$SD/cd-eth0.json"
cni DEL cd - "$(conf11 | sed 's/"device":"[^"]*",//')"
tap_check "DEL on a 0-byte record, config without device: exit 0, record gone" \
	test "$RC:$(ls "$SD")" = "0:ca-eth0.json"

# ---- the last DEL (traffic through a real engine, bridge and masquerade
# is test_podman's)
cni DEL ca /run/netns/arbt-ca "$(conf "$P")"
tap_check "DEL ca: exit 0, no tenant class or fw filter left" \
	bash -c '[ "$1" = 0 ] && ! tc class show dev "$2" | grep -q "^class arbtable 1:1" && [ -z "$(tc filter show dev "$2" parent 1:)" ]' _ "$RC" "$NET"
tap_check "state directory empty after the last DEL" test -z "$(ls "$SD" | grep -v '^lock$')"
tap_end
