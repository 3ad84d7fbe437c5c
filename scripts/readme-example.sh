#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The README's first example and the output it quotes, from the real
# module: run in a VM, where eth0 is a dummy device,
#
#   scripts/vm.sh -k 7.2.12+deb13-amd64 -n -- bash scripts/readme-example.sh
#
# (Debian 12's 6.1: -k 6.1.0-56-amd64, the module built for it.)
# It runs the tc lines of README.md's first code block that adds an
# arbtable root (as tests/packages/check.sh takes them: keep that
# block to tc lines that succeed on a dummy device), sends 1000 UDP
# datagrams to port 5001 and 300 to port 9, then prints each command the
# README shows after it and its output, between "@@" lines.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
show() { echo "@@ $*"; "$@" 2>&1; echo "@@ rc $?"; }

example=$(awk '/^```/ { if (inb) { if (hit) exit; inb = 0; buf = "" } else inb = 1; next }
	inb { buf = buf $0 "\n"; if ($0 ~ /^tc qdisc add .* arbtable/) hit = 1 }
	END { if (hit) printf "%s", buf }' "$ROOT/README.md" | grep '^tc ')
[ -n "$example" ] || { echo "no tc example in README.md"; exit 1; }

ip link add eth0 type dummy || exit 1
ip link set eth0 up
ip addr add 192.0.2.1/24 dev eth0
ip neigh add 192.0.2.2 lladdr 02:00:00:00:00:02 dev eth0

while read -r line; do
	# shellcheck disable=SC2086
	show $line
done <<<"$example"
python3 - <<'PY'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(1000):
    s.sendto(b"x" * 1000, ("192.0.2.2", 5001))
for i in range(300):
    s.sendto(b"y" * 500, ("192.0.2.2", 9))
PY
show tc -s class show dev eth0
show tc -s qdisc show dev eth0
show tc -d qdisc show dev eth0
# a tenant the link cannot guarantee, then one that fits
show tc class add dev eth0 parent 1: classid 1:11 arbtable rate 900mbit latency 100us
show tc class add dev eth0 parent 1: classid 1:11 arbtable rate 300mbit latency 2ms
show tc class show dev eth0 classid 1:11
show tc class del dev eth0 classid 1:11
show tc qdisc del dev eth0 root
ip link del eth0
