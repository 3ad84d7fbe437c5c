#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Tenants stay in their class (issue 45 item 4). A root set up as
# arbtable-dra sets it up: auto mode, system class 1:1 the default, two
# tenant classes 1:10 and 1:20 picked by fw filters on marks 0x80 and
# 0x100 under 0x1f80; pod A reached through a veth whose host side marks
# its packets 0x80 (matchall skbedit on ingress); pod M on a macvlan of
# the NIC, with CAP_NET_ADMIN (root in its netns). M sends UDP with
# SO_PRIORITY 1:20 and with SO_MARK 0x100:
#   - both options open (the default): M lands in 1:20 (the hole is real);
#   - noprioclassid noclassifyforeign: M lands in 1:1; A, even with its own
#     SO_PRIORITY/SO_MARK, in 1:10; a host socket's SO_MARK still in 1:20
#     (foreign means not routed in the NIC's netns, not "every mark");
#   - the dump round-trips (text replayed, JSON booleans), reopening works;
#   - tc refuses a keyword with its opposite, the kernel values other than
#     0/1 (raw netlink, extack text), the refused change leaves both as set.
# Counts are exact: bytes per class from tc -s class show.
. "$(dirname "$0")/lib.sh"
tap_begin "tenant escape: macvlan SO_PRIORITY/SO_MARK vs noprioclassid, noclassifyforeign"
NIC=arbt-tnic
RX=arbt-trx
PA=arbt-tpa
PM=arbt-tpm
fwd_old=$(cat /proc/sys/net/ipv4/ip_forward 2>/dev/null || echo 0)
tmp=$(mktemp -d)
cleanup() {
	ip netns del $PA 2>/dev/null
	ip netns del $PM 2>/dev/null
	ip netns del $RX 2>/dev/null
	ip link del $NIC 2>/dev/null
	ip link del vh-tpa 2>/dev/null
	echo "$fwd_old" >/proc/sys/net/ipv4/ip_forward 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
have_arbtable || { tap_fail "tenant escape: module and plugin present"; tap_end; exit; }

PY=$(command -v /usr/bin/python3 || command -v python3)
CTL=$ARBT_ROOT/build/tools/arbtablectl
N=50
SIZE=100
WIRE=$((SIZE + 8 + 20 + 14))	# qdisc_pkt_len of one UDP packet on the veth
MARK_A=0x80 MARK_B=0x100 MASK=0x1f80
PRIO_B=$((0x10020))		# 1:20 as an skb->priority

mac_of() { ip ${2:+-n "$2"} -o link show "$1" | sed -E 's/.*link\/ether ([0-9a-f:]+).*/\1/'; }
setup() {
	ip netns add $RX && ip netns add $PA && ip netns add $PM || return 1
	ip link add $NIC type veth peer name rx0 netns $RX || return 1
	sysctl -qw net.ipv6.conf.$NIC.disable_ipv6=1
	ip netns exec $RX sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip netns exec $PA sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip netns exec $PM sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip addr add 10.77.9.1/24 dev $NIC && ip link set $NIC up || return 1
	ip -n $RX addr add 10.77.9.2/24 dev rx0 && ip -n $RX link set rx0 up || return 1
	ip neigh replace 10.77.9.2 lladdr "$(mac_of rx0 $RX)" dev $NIC nud permanent || return 1
	# the receiver's port unreachable needs none either: an ARP reply
	# would be counted in the system class
	ip -n $RX neigh replace 10.77.9.1 lladdr "$(mac_of $NIC)" dev rx0 nud permanent || return 1
	# pod A: routed by the host, marked on the host side as the driver does
	ip link add vh-tpa type veth peer name eth0 netns $PA || return 1
	sysctl -qw net.ipv6.conf.vh-tpa.disable_ipv6=1
	ip addr add 10.88.9.1/24 dev vh-tpa && ip link set vh-tpa up || return 1
	ip -n $PA addr add 10.88.9.2/24 dev eth0 && ip -n $PA link set eth0 up &&
		ip -n $PA route add default via 10.88.9.1 || return 1
	ip -n $PA neigh replace 10.88.9.1 lladdr "$(mac_of vh-tpa)" dev eth0 nud permanent || return 1
	sysctl -qw net.ipv4.ip_forward=1
	tc qdisc add dev vh-tpa clsact &&
		tc filter add dev vh-tpa ingress prio 1 protocol all matchall \
			action skbedit mark $MARK_A/$MASK pipe || return 1
	# pod M: a macvlan of the NIC in its own netns (Multus's secondary network)
	ip link add link $NIC name arbt-tmv type macvlan mode bridge &&
		ip link set arbt-tmv netns $PM || return 1
	ip -n $PM addr add 10.77.9.50/24 dev arbt-tmv && ip -n $PM link set arbt-tmv up || return 1
	ip -n $PM neigh replace 10.77.9.2 lladdr "$(mac_of rx0 $RX)" dev arbt-tmv nud permanent &&
		ip -n $RX neigh replace 10.77.9.50 lladdr "$(mac_of arbt-tmv $PM)" dev rx0 nud permanent || return 1
	# the root, as dra/pkg/kernel/linux.go makes it, but with both paths open
	tc qdisc add dev $NIC root handle 1: arbtable auto rate 100mbit default 1 &&
		tc class add dev $NIC parent 1: classid 1:1 arbtable share 1 &&
		tc class add dev $NIC parent 1: classid 1:10 arbtable rate 5mbit distance 16 &&
		tc class add dev $NIC parent 1: classid 1:20 arbtable rate 5mbit distance 16 &&
		tc filter add dev $NIC parent 1: prio 10 protocol all handle $MARK_A/$MASK fw classid 1:10 &&
		tc filter add dev $NIC parent 1: prio 10 protocol all handle $MARK_B/$MASK fw classid 1:20
}
if ! setup 2>"$tmp/setup.err"; then
	tap_fail "setup: NIC, receiver, veth pod, macvlan pod, root, classes, fw filters"
	diag "$(cat "$tmp/setup.err")"
	tap_end; exit
fi

# send NETNS KEY=VAL...: N UDP packets of SIZE bytes to the receiver
# (keys: prio=, mark=); prints "sent K"
send_py='
import socket, sys
a = dict(x.split("=", 1) for x in sys.argv[1:])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
if "prio" in a:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_PRIORITY, int(a["prio"], 0))
if "mark" in a:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_MARK, int(a["mark"], 0))
n = 0
for _ in range(int(a["count"])):
    s.sendto(b"x" * int(a["size"]), ("10.77.9.2", 9))
    n += 1
print("sent", n)
'
send() {
	local ns=$1; shift
	if [ "$ns" = host ]; then
		"$PY" -S -c "$send_py" count=$N size=$SIZE "$@"
	else
		ip netns exec "$ns" "$PY" -S -c "$send_py" count=$N size=$SIZE "$@"
	fi
}
# bytes: "1:1 B 1:10 B 1:20 B" from tc -s class show (tc 6.1 prints
# classes as text even with -j: test_json.sh)
bytes() {
	cls_stats $NIC arbtable | awk '{ b[$1] = $2 }
		END { printf "1:1 %d 1:10 %d 1:20 %d\n", b["1:1"], b["1:10"], b["1:20"] }'
}
# lands DESC CLASS NETNS KEY=VAL...: the packets sent land, every byte, in
# CLASS and in no other of the three
lands() {
	local desc=$1 want=$2 ns=$3 before after out
	shift 3
	before=$(bytes)
	out=$(send "$ns" "$@" 2>&1)
	after=$(bytes)
	if [ "$out" != "sent $N" ]; then
		tap_fail "$desc: the sender sent $N ($out)"
		return
	fi
	# shellcheck disable=SC2086 # pairs "handle bytes"
	if "$PY" -c '
import sys
w, n = sys.argv[1], int(sys.argv[2])
b = sys.argv[3].split(); a = sys.argv[4].split()
d = {b[i]: int(a[i + 1]) - int(b[i + 1]) for i in range(0, len(b), 2)}
ok = all(d[h] == (n if h == w else 0) for h in d)
print(" ".join("%s +%d" % (h, d[h]) for h in d))
sys.exit(0 if ok else 1)' "$want" $((N * WIRE)) "$before" "$after" >"$tmp/d"; then
		tap_ok "$desc: $N packets in $want ($(cat "$tmp/d"))"
	else
		# the same words as the pass, so that a mutant's kill is matched
		tap_fail "$desc: $N packets in $want ($(cat "$tmp/d"))"
		diag "wanted all $((N * WIRE)) bytes in $want and none in the others"
	fi
}
qjson() { # KEY: the qdisc's option KEY as tc -j prints it
	tc -j qdisc show dev $NIC root | "$PY" -c '
import json, sys
print(json.dumps(json.load(sys.stdin)[0]["options"].get(sys.argv[1])))' "$1"
}
# both KEYS' JSON values are WANT (true/false)
q_is() { [ "$(qjson prioclassid) $(qjson classifyforeign)" = "$1 $2" ]; }

# ------------------------------------------------------------ the hole
tap_check "default root dumps prioclassid and classifyforeign true (JSON)" q_is true true
lands "open root: macvlan pod's SO_PRIORITY 1:20 selects 1:20 (the hole)" 1:20 $PM prio=$PRIO_B
lands "open root: macvlan pod's SO_MARK 0x100 selects 1:20 (the hole)" 1:20 $PM mark=$MARK_B
lands "open root: veth pod in its class by the host-side mark" 1:10 $PA

# ------------------------------------------------------------ closed
run tc qdisc change dev $NIC root handle 1: arbtable noprioclassid noclassifyforeign
tap_check "tc qdisc change ... noprioclassid noclassifyforeign accepted${RUN_ERR:+ ($RUN_ERR)}" [ "$RUN_RC" = 0 ]
tap_check "dump: prioclassid false, classifyforeign false (JSON)" q_is false false
line=$(tc qdisc show dev $NIC root)
tap_check "dump: the line says noprioclassid noclassifyforeign ($line)" \
	eval 'grep -qw noprioclassid <<<"$line" && grep -qw noclassifyforeign <<<"$line"'
lands "closed: macvlan pod's SO_PRIORITY 1:20 lands in system class 1:1" 1:1 $PM prio=$PRIO_B
lands "closed: macvlan pod's SO_MARK 0x100 lands in system class 1:1" 1:1 $PM mark=$MARK_B
lands "closed: macvlan pod's SO_MARK and SO_PRIORITY together land in 1:1" 1:1 $PM mark=$MARK_B prio=$PRIO_B
lands "closed: veth pod in its class 1:10 by the host-side mark" 1:10 $PA
lands "closed: veth pod's own SO_MARK 0x100 and SO_PRIORITY 1:20 still 1:10" 1:10 $PA mark=$MARK_B prio=$PRIO_B
lands "closed: a host socket's SO_MARK 0x100 (routed here) still selects 1:20" 1:20 host mark=$MARK_B
lands "closed: a host socket's SO_PRIORITY 1:20 no longer selects it (1:1)" 1:1 host prio=$PRIO_B

# ------------------------------------------------------------ round trip
opts=$(sed -E 's/^qdisc arbtable 1: root refcnt [0-9]+ //' <<<"$line")
run tc qdisc change dev $NIC root handle 1: arbtable prioclassid classifyforeign
tap_check "reopened: prioclassid classifyforeign accepted, JSON true true${RUN_ERR:+ ($RUN_ERR)}" \
	eval '[ "$RUN_RC" = 0 ] && q_is true true'
lands "reopened: macvlan pod's SO_PRIORITY selects 1:20 again" 1:20 $PM prio=$PRIO_B
# shellcheck disable=SC2086 # the dumped options, word by word
run tc qdisc change dev $NIC root handle 1: arbtable $opts
tap_check "the closed root's dump sent back ($opts) closes it again${RUN_ERR:+ ($RUN_ERR)}" \
	eval '[ "$RUN_RC" = 0 ] && q_is false false && [ "$(tc qdisc show dev $NIC root)" = "$line" ]'

# arbtablectl's words send the same attributes (a change reads the qdisc
# first, which needs the module: tests/parse/front-ends.sh has create)
run "$CTL" change $NIC prioclassid classifyforeign
tap_check "arbtablectl change prioclassid classifyforeign opens both${RUN_ERR:+ ($RUN_ERR)}" \
	eval '[ "$RUN_RC" = 0 ] && q_is true true'
run "$CTL" change $NIC noprioclassid noclassifyforeign
tap_check "arbtablectl change noprioclassid noclassifyforeign closes both, the rest kept${RUN_ERR:+ ($RUN_ERR)}" \
	eval '[ "$RUN_RC" = 0 ] && q_is false false && [ "$(tc qdisc show dev $NIC root)" = "$line" ]'

# ------------------------------------------------------------ refusals
run tc qdisc change dev $NIC root handle 1: arbtable noprioclassid prioclassid
tap_check "tc refuses noprioclassid with prioclassid ($RUN_ERR)" \
	eval '[ "$RUN_RC" != 0 ] && grep -q "given twice or with" <<<"$RUN_ERR"'
run tc qdisc change dev $NIC root handle 1: arbtable classifyforeign classifyforeign
tap_check "tc refuses classifyforeign twice ($RUN_ERR)" \
	eval '[ "$RUN_RC" != 0 ] && grep -q "given twice" <<<"$RUN_ERR"'
# attribute numbers of include/uapi/linux/pkt_sched_arbtable.h
nl_py='
import socket, struct, sys
attr, val = int(sys.argv[2]), int(sys.argv[3])
idx = socket.if_nametoindex(sys.argv[1])
def rta(t, p):
    l = 4 + len(p)
    return struct.pack("HH", l, t) + p + b"\0" * ((-l) % 4)
opts = rta(attr, struct.pack("I", val))
body = struct.pack("BxxxiIII", 0, idx, 0x10000, 0xffffffff, 0)
body += rta(1, b"arbtable\0") + rta(2 | 0x8000, opts)
msg = struct.pack("IHHII", 16 + len(body), 36, 0x5, 1, 0) + body
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
s.setsockopt(270, 11, 1)	# SOL_NETLINK, NETLINK_EXT_ACK
s.send(msg)
r = s.recv(65536)
err = struct.unpack_from("i", r, 16)[0]
off = 20 + struct.unpack_from("I", r, 20)[0]
text = ""
while off + 4 <= len(r):
    l, t = struct.unpack_from("HH", r, off)
    if l < 4:
        break
    if t == 1:
        text = r[off + 4:off + l].rstrip(b"\0").decode()
    off += (l + 3) & ~3
print(err, text)
'
for a in "15 prioclassid" "16 classifyforeign"; do
	read -r nr kw <<<"$a"
	out=$("$PY" -c "$nl_py" $NIC "$nr" 2 2>&1)
	# the policy's range (0 or 1, as for lockless, mode and highlimit)
	want="-34 integer out of range"
	tap_check "kernel refuses $kw 2 by its policy's range ($out), both options kept" \
		eval '[ "$out" = "$want" ] && q_is false false'
done

tap_end
