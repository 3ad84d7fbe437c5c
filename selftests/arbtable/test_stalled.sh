#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Shaped children: a child that holds packets but gives none (netem
# delay, tbf) costs O(1) per dequeue and does not take the others' turns.
# Manual mode at 10 Mbit/s: 1:10 and 1:11 with pfifo children kept
# backlogged by pktgen (HIGH weights 40:20), beside 16 classes with a
# netem delay 20ms child and 16 with a tbf 24kbit child, each fed 20
# datagrams/s through SO_PRIORITY.  Checked: the pfifo classes' byte
# shares (2:1), every shaped class delivering, and the futile child
# dequeues: tbf counts each dequeue it refuses as an overlimit, and their
# sum stays below one per packet the qdisc sends (re-polling every
# stalled child on every dequeue cost several).
. "$(dirname "$0")/lib.sh"
spid=
# shellcheck disable=SC2016 # spid at exit
pg_test_begin stalled "stalled (shaped) children" '[ -n "$spid" ] && kill $spid 2>/dev/null'

NETEM=$(printf '%x ' $(seq $((0x20)) $((0x2f))))
TBF=$(printf '%x ' $(seq $((0x30)) $((0x3f))))
setup() {
	local m high="10:40,11:20" b=$tmp/batch
	arb_base manual rate "$(kbit 10)" || return 1
	modprobe sch_netem 2>/dev/null; modprobe sch_tbf 2>/dev/null
	: >"$b"
	for m in 10 11 $NETEM $TBF; do
		echo "class add dev $DEV parent 1: classid 1:$m arbtable" >>"$b"
	done
	for m in $NETEM; do
		echo "qdisc add dev $DEV parent 1:$m handle $m: netem delay 20ms limit 1000" >>"$b"
		high="$high,$m:10"
	done
	for m in $TBF; do
		echo "qdisc add dev $DEV parent 1:$m handle $m: tbf rate 24kbit burst 1600 latency 2s" >>"$b"
		high="$high,$m:10"
	done
	run tc -batch "$b" || { diag "tc -batch: $RUN_ERR"; return 1; }
	arb_change high "$high" || return 1
	ip addr add 192.0.2.1/24 dev $DEV || return 1
	arb_traffic "10:1500:20 11:1500:20"
}
if ! setup; then tap_fail "stalled: setup"; tap_end; exit; fi
tap_ok "stalled: 2 pfifo, 16 netem and 16 tbf classes, one HIGH table"

# 20 datagrams/s of 200 bytes into each shaped class, by SO_PRIORITY
python3 - $NETEM $TBF >"$tmp/sender.log" 2>&1 <<'EOF' &
import socket, sys, time
socks = []
for m in sys.argv[1:]:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_PRIORITY, 0x10000 | int(m, 16))
    socks.append(s)
payload = b"x" * 172
t = time.monotonic()
while True:
    for s in socks:
        try:
            s.sendto(payload, ("192.0.2.2", 9))
        except OSError:
            pass
    t += 0.05
    d = t - time.monotonic()
    if d > 0:
        time.sleep(d)
EOF
spid=$!
pg_start

# tbf_over: the tbf children's overlimits summed
tbf_over() { tc -s qdisc show dev $DEV | awk '$1 == "qdisc" { on = ($2 == "tbf") } on && /overlimits/ { for (i = 1; i < NF; i++) if ($i == "overlimits") s += $(i + 1) } END { print s + 0 }'; }
sleep "$(win 4)"
o1=$(tbf_over); read -r s1 p1 _ <<<"$(qd_stats $DEV 1:)"
measure $DEV arbtable 0 "$(win 10)" "$tmp/m"
o2=$(tbf_over); read -r s2 p2 _ <<<"$(qd_stats $DEV 1:)"
spec="1:10=40 1:11=20"
diag "$(m_table "$tmp/m" "$spec")"
tap_measure "stalled: 1:10 and 1:11 backlogged at both reads" m_backlogged "$tmp/m" 1:10 1:11
tap_measure "stalled: pfifo byte shares = weight shares +-2% beside 32 shaped children" m_shares_ok "$tmp/m" "$spec" 0.02
pk=$((p2 - p1)) ov=$((o2 - o1))
diag "window: $pk packets sent by the qdisc, $ov dequeues refused by the tbf children; qdisc stalls $(tc -s qdisc show dev $DEV | tr ' ' '\n' | awk 'p { print; exit } $1 == "stalls" { p = 1 }')"
tap_check "stalled: refused child dequeues per packet sent below 1 ($ov / $pk)" \
	eval '[ "$pk" -gt 0 ] && fcmp "$ov < $pk"'
kill $spid 2>/dev/null; spid=
pg_stop
delivered() { # every shaped class sent bytes
	local m n=0 c
	for m in $NETEM $TBF; do
		c=$(cls_stats $DEV arbtable | awk -v c="1:$m" '$1 == c { print $2 }')
		[ "${c:-0}" -gt 0 ] || { diag "class 1:$m sent nothing"; n=$((n + 1)); }
	done
	[ "$n" = 0 ]
}
tap_check "stalled: every netem and tbf class delivered its datagrams" delivered
arb_after_stop stalled
tap_end
