#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Auto mode, what a class really takes and keeps (DESIGN §4):
# - the reserved weight and its rate are exported beside the rate asked,
#   and equal arbsim's for the same statements (a 1 Mbit/s class asking
#   50 us on 10 Gbit/s reserves 384 units: a slot must cover an MTU);
# - a class moving between tables drops the distance/latency of the old
#   one (share + distance -> rate, rate + distance -> share);
# - the default mtu works on every device: loopback's 64 KiB frames.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_auto.sh"
tap_begin "arbtable auto mode: reserved weight and rate, table moves, default mtu"
DEV=ar0
ARBSIM=$ARBT_ROOT/build/tools/arbsim
trap 'dev_del $DEV; tc qdisc del dev lo root 2>/dev/null' EXIT

if ! have_arbtable; then
	tap_fail "reserve: sch_arbtable module and tc plugin present"
	tap_end; exit
fi

auto_dev $DEV
# the frame pinned: from 1gbit up a 64 KiB GSO skb is kept whole otherwise
run tc qdisc add dev $DEV root handle 1: arbtable rate 10gbit mtu 1514
tap_check "reserve: auto qdisc at 10gbit, mtu 1514, on $DEV (${RUN_ERR:-ok})" test "$RUN_RC" = 0
run tc class add dev $DEV parent 1: classid 1:10 arbtable rate 1mbit latency 50us
tap_check "reserve: 1mbit latency 50us admitted (${RUN_ERR:-ok})" test "$RUN_RC" = 0
run tc class add dev $DEV parent 1: classid 1:11 arbtable rate 1mbit
tap_check "reserve: 1mbit without a latency admitted (${RUN_ERR:-ok})" test "$RUN_RC" = 0

# "rate 1Mbit guaranteed 230Mbit (384 units)" from the class xstats
reserved() { # classid -> "RATE UNITS"
	tc -s class show dev $DEV | awk -v c="$1" '
	$1 == "class" { cur = ($3 == c); next }
	cur { for (i = 1; i < NF; i++) if ($i == "guaranteed") { r = $(i + 1); u = $(i + 2); sub(/^\(/, "", u); print r, u; exit } }'
}
read -r r10 u10 <<<"$(reserved 1:10)"
read -r r11 u11 <<<"$(reserved 1:11)"
diag "1:10 guaranteed $r10 ($u10 units); 1:11 guaranteed $r11 ($u11 units)"
# tc rates (230Mbit, 229981Kbit) to bit/s
bits() { awk -v r="$1" 'BEGIN { n = r + 0; if (r ~ /Gbit$/) n *= 1e9; else if (r ~ /Mbit$/) n *= 1e6; else if (r ~ /Kbit$/) n *= 1e3; print n }'; }
tap_check "reserve: the latency raised 1:10's weight to 384 units, shown with its rate ($r10 = 230 Mbit/s)" \
	eval '[ "$u10" = 384 ] && fcmp "$(bits "$r10") >= 229.9e6 && $(bits "$r10") <= 230.1e6"'
tap_check "reserve: without a latency 1:11 reserves its rate's 2 units" test "$u11" = 2
out=$(printf '%s\n' 'qdisc auto rate 10gbit mtu 1514' 'class 1:10 rate 1mbit latency 50us' \
	'class 1:11 rate 1mbit' | "$ARBSIM" -n 10 - 2>&1)
sim10=$(awk '$1 == "1:10" && $3 == "high" { for (i = 4; i <= NF; i++) if ($i ~ /bit$/) { print $(i - 1), $i; exit } }' <<<"$out")
diag "arbsim: 1:10 weight/reserved: $sim10"
read -r su sr <<<"$sim10"
tap_check "reserve: arbsim reserves the same for 1:10 ($su units, $sr vs the module's $u10, $r10)" \
	eval '[ "$su" = "$u10" ] && fcmp "$(bits "$sr") >= 0.999 * $(bits "$r10") && $(bits "$sr") <= 1.001 * $(bits "$r10")"'

# ---------------------------------------------- moves between tables
opts() { tc class show dev $DEV | awk -v c="$1" '$3 == c { sub(/.* leaf [0-9a-f]+: */, ""); print }'; }
run tc class add dev $DEV parent 1: classid 1:30 arbtable share 10 distance 8
tap_check "move: share 10 distance 8 admitted ($(opts 1:30))" eval '[ "$RUN_RC" = 0 ] && opts 1:30 | grep -q "distance 8"'
run tc class change dev $DEV parent 1: classid 1:30 arbtable rate 2mbit
o=$(opts 1:30)
tap_check "move: share -> rate drops the LOW distance (now: $o)" \
	eval '[ "$RUN_RC" = 0 ] && ! grep -q distance <<<"$o" && grep -q "rate 2Mbit" <<<"$o"'
tap_check "move: its effective distance is the rate's own (64)" test "$(acl_field 1:30 8)" = 64
run tc class change dev $DEV parent 1: classid 1:30 arbtable distance 4
run tc class change dev $DEV parent 1: classid 1:30 arbtable share 5
o=$(opts 1:30)
tap_check "move: rate distance 4 -> share drops the HIGH distance (now: $o)" \
	eval '[ "$RUN_RC" = 0 ] && ! grep -q distance <<<"$o" && grep -q "share 5" <<<"$o"'
run tc class change dev $DEV parent 1: classid 1:10 arbtable share 3 distance 2
o=$(opts 1:10)
tap_check "move: a distance given with the move applies (now: $o)" \
	eval '[ "$RUN_RC" = 0 ] && grep -q "distance 2" <<<"$o" && ! grep -q latency <<<"$o"'
tap_check "move: layout consistent after the moves" auto_layout
dev_del $DEV

# ---------------------------------------------- default mtu on loopback
run tc qdisc add dev lo root handle 1: arbtable rate 1gbit
tap_check "lo: 'tc qdisc add dev lo root arbtable rate 1gbit' works (${RUN_ERR:-ok})" test "$RUN_RC" = 0
m=$(tc -d qdisc show dev lo | sed -nE 's/.* mtu ([0-9]+) .*/\1/p')
gl=$(ip -d link show dev lo | sed -nE 's/.* gso_max_size ([0-9]+).*/\1/p')
gl4=$(ip -d link show dev lo | sed -nE 's/.* gso_ipv4_max_size ([0-9]+).*/\1/p')
[ "${gl4:-0}" -gt "${gl:-65536}" ] && gl=$gl4
gl=${gl:-65536}
# a whole GSO skb: gso_max_size, the link header, 72 bytes of headers per
# 536 bytes of payload (74406 for 64 KiB)
wl=$((gl + 14 + (gl + 535) / 536 * 72))
tap_check "lo: default mtu at 1gbit is a whole GSO skb of $gl bytes, $gl + 14 + $(((gl + 535) / 536)) * 72 = $wl ($m)" test "$m" = "$wl"
run tc class add dev lo parent 1: classid 1:10 arbtable rate 100mbit
tap_check "lo: a class is admitted there (${RUN_ERR:-ok})" test "$RUN_RC" = 0
tc qdisc del dev lo root 2>/dev/null
run tc qdisc add dev lo root handle 1: arbtable rate 1gbit mtu 2000000
tap_check "lo: an mtu above 1 MiB is rejected with its range (${RUN_ERR:-accepted})" \
	eval '[ "$RUN_RC" != 0 ] && grep -q "1048576" <<<"$RUN_ERR"'
tc qdisc del dev lo root 2>/dev/null
tap_end
