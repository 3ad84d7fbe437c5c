#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The sample output in tc-arbtable(8) and arbtablectl(8), taken from the
# real module: run in a VM (it adds a dummy device and sends to it),
#
#   scripts/vm.sh -k 7.2.12+deb13-amd64 -- bash scripts/man-samples.sh
#
# and prints each command, then its output, between "@@ CMD" lines; the
# man pages' EXAMPLES quote them (trimmed where said).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CTL=$ROOT/build/tools/arbtablectl
BPO=${ARBT_IPROUTE2_BPO:-/var/lib/arbtable/iproute2-bpo}
mm=$(sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p' "$BPO/version" 2>/dev/null)
tc15() { TC_LIB_DIR=$ROOT/build/tc-$mm "$BPO/root/sbin/tc" "$@"; }
show() { echo "@@ $*"; "$@" 2>&1; echo "@@ rc $?"; }

ip link add eth0 type dummy 2>/dev/null || ip link add d0 type dummy
DEV=$(ip -o link show type dummy | awk -F': ' 'NR == 1 { print $2 }')
ip link set "$DEV" up
ip addr add 192.0.2.1/24 dev "$DEV"
ip neigh add 192.0.2.2 lladdr 02:00:00:00:00:02 dev "$DEV"

# auto: the second example of tc-arbtable(8)
tc qdisc add dev "$DEV" root handle 1: arbtable auto rate 10gbit \
	highlimit 8 mtu 1514 maxweight 64
tc class add dev "$DEV" parent 1: classid 1:1 arbtable strict ceil 100mbit
tc class add dev "$DEV" parent 1: classid 1:10 arbtable rate 2gbit latency 150us
tc class add dev "$DEV" parent 1: classid 1:11 arbtable rate 1gbit distance 16
tc class add dev "$DEV" parent 1: classid 1:20 arbtable share 4
tc qdisc change dev "$DEV" root handle 1: arbtable default 20
tc filter add dev "$DEV" parent 1: protocol ip prio 1 u32 \
	match ip dport 5001 0xffff classid 1:10
python3 - <<'PY'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(1000):
    s.sendto(b"x" * 1000, ("192.0.2.2", 5001))
for i in range(300):
    s.sendto(b"y" * 500, ("192.0.2.2", 9))
PY
show tc -s qdisc show dev "$DEV"
show tc -s class show dev "$DEV" classid 1:10
show tc -d qdisc show dev "$DEV"
show tc -j -p qdisc show dev "$DEV"
show tc15 -j -p class show dev "$DEV" classid 1:10
show "$CTL" show "$DEV"
show "$CTL" request "$DEV" rate 500mbit latency 200us
show "$CTL" request "$DEV" share 8
show "$CTL" request rate 2gbit latency 50us
show "$CTL" admit "$DEV" 1:40 rate 20gbit
tc qdisc del dev "$DEV" root

# manual: the first example
tc qdisc add dev "$DEV" root handle 1: arbtable manual rate 10gbit highlimit 4 mtu 1514
for c in 10 11 12 30; do
	tc class add dev "$DEV" parent 1: classid 1:$c arbtable
done
tc qdisc change dev "$DEV" root handle 1: arbtable high 10:127,11:63,-,12:5 \
	low 30:2 default 30
show tc -d qdisc show dev "$DEV"
# tc's conventions: a repeated option, a range, a bare time
show tc qdisc change dev "$DEV" root handle 1: arbtable rate 1gbit rate 2gbit
show tc qdisc change dev "$DEV" root handle 1: arbtable mtu 63
show "$CTL" change "$DEV" rate 1gbit rate 2gbit
tc qdisc del dev "$DEV" root
ip link del "$DEV"
