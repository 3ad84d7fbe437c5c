#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# arbtablectl capacity / request against the module (issue 17 item 3):
# for random admission sequences, "the request fits the capacity" (its
# slots <= the free slots of its table, a class left, the request valid)
# must equal "the kernel admits it", at every step.  A scheduler that
# counts slots as node resources then never places a tenant admission
# would refuse.
#
# Each sequence: a dummy d0 with a random root (rate, highlimit,
# maxweight; one with a strict class under a ceil), then ARBT_CAP_OPS
# random steps: a release of a random class (1 in 4) or a request (rate
# with latency, distance or neither; or share with or without distance)
# sized by `arbtablectl --json request` and `capacity`, then `tc class
# add`.  Seeded: the seed is printed; ARBT_CAP_SEED repeats a run.
# Every request is also sized without the device (`arbtablectl request
# rate ... link ... mtu ...`, the qdisc's parameters from the capacity
# report): its cost must be the device form's.
. "$(dirname "$0")/lib.sh"
tap_begin "arbtablectl capacity/request: 'fits' equals the kernel's admission over random sequences"
CTL=$ARBT_ROOT/build/tools/arbtablectl
OPS=${ARBT_CAP_OPS:-30}
SEEDS=${ARBT_CAP_SEED:-"$((SRANDOM % 100000)) $((SRANDOM % 100000)) $((SRANDOM % 100000))"}
have_arbtable || { tap_fail "capacity: module and plugin present"; tap_end; exit; }
[ -x "$CTL" ] || { tap_fail "capacity: $CTL built"; tap_end; exit; }
err=$(mktemp)
trap 'dev_del $DEV; rm -f "$err"' EXIT

# pick WORD...: one of them into REPLY, from this shell's RANDOM (in a
# $(...) each pick drew from the subshell's, so a seed did not repeat
# a run)
pick() { local a=("$@"); REPLY=${a[RANDOM % ${#a[@]}]}; }
# The helpers below answer in REPLY, not on stdout: each $(...) was a
# fork of this shell, about 20 per step (1,912 processes for the test's
# 90 steps in a 7.2 guest, 2026-11-30).
# jf KEY JSON: a scalar member of arbtablectl's one-line JSON (a python
# per value cost ~1 s under TCG)
jf() { REPLY=; [[ $2 =~ \"$1\":\"?([a-z0-9]+) ]] && REPLY=${BASH_REMATCH[1]}; }
# devless_args CAPACITY-JSON: the qdisc's sizing parameters as the
# device-less request takes them
devless_args() {
	local a sc
	[[ $1 =~ \"rate_bps\":([0-9]+) ]] && a="link ${BASH_REMATCH[1]}bit"
	jf mtu "$1"; a+=" mtu $REPLY"
	jf maxweight "$1"; a+=" maxweight $REPLY"
	jf highlimit "$1"; a+=" highlimit $REPLY"
	jf strict_ceil_bps "$1"; sc=$REPLY
	jf strict_cburst "$1"
	[ "${sc:-0}" != 0 ] && a+=" strictceil ${sc}bit"
	[ "${REPLY:-0}" != 0 ] && a+=" strictcburst $REPLY"
	REPLY=$a
}
# cost JSON: what both request forms print alike
cost() {
	REPLY=
	if [[ $1 =~ (\"valid\":true,.*\"bound_ns\":[0-9]+) ]]; then
		REPLY=${BASH_REMATCH[1]}
	elif [[ $1 =~ (\"why\":\"[^\"]*\") ]]; then
		REPLY="invalid ${BASH_REMATCH[1]}"
	fi
}
# jfree TABLE JSON: "free_slots classes_free" of a capacity report
jfree() {
	REPLY=
	[[ $2 =~ \"$1\":\{\"free_slots\":([0-9]+) ]] || return 1
	local f=${BASH_REMATCH[1]}
	[[ $2 =~ \"classes_free\":([0-9]+) ]] && REPLY="$f ${BASH_REMATCH[1]}"
}

total=0 agree=0 admitted=0 refused=0 seq=0 dsame=0
for seed in $SEEDS; do
	seq=$((seq + 1))
	RANDOM=$seed
	pick 10 100 1000; rate=$REPLY
	pick 0 1 16 255; hl=$REPLY
	pick 255 64 16; mw=$REPLY
	strict=$((seq == 2))
	dummy_up $DEV || { tap_fail "capacity: dummy $DEV"; continue; }
	if ! run tc qdisc add dev $DEV root handle 1: arbtable rate "${rate}mbit" highlimit "$hl" maxweight "$mw"; then
		tap_fail "seed $seed: root rate ${rate}mbit highlimit $hl maxweight $mw: $RUN_ERR"
		continue
	fi
	[ $strict = 1 ] && tc class add dev $DEV parent 1: classid 1:1 arbtable strict ceil "$((rate * 50))kbit"
	diag "seed $seed: rate ${rate}mbit highlimit $hl maxweight $mw$([ $strict = 1 ] && echo ", strict class ceil $((rate * 50))kbit")"
	minors=()
	next=16
	bad=0 n=0 dbad=0
	for ((i = 0; i < OPS; i++)); do
		if [ ${#minors[@]} -gt 0 ] && [ $((RANDOM % 4)) = 0 ]; then
			k=$((RANDOM % ${#minors[@]}))
			tc class del dev $DEV classid "1:${minors[k]}" ||
				{ diag "release 1:${minors[k]} failed"; bad=$((bad + 1)); }
			minors=("${minors[@]:0:k}" "${minors[@]:k+1}")
			continue
		fi
		if [ $((RANDOM % 3)) = 0 ]; then
			req="share $((RANDOM % 255 + 1))"
			[ $((RANDOM % 2)) = 0 ] && pick 1 2 4 8 16 32 64 && req+=" distance $REPLY"
		else
			# 0.5 .. 50 % of the qdisc rate
			pick 5 10 20 50 100 200 300 500
			req="rate $((rate * REPLY))kbit"
			case $((RANDOM % 3)) in
			0) pick 1 2 5 10 20 50 100 200; req+=" latency $((10000 * REPLY / rate))us" ;;
			1) pick 1 2 4 8 16 32 64; req+=" distance $REPLY" ;;
			esac
		fi
		m=$(printf '%x' $next)
		next=$((next + 1))
		r=$("$CTL" --json request $DEV $req 2>&1)
		cap=$("$CTL" --json capacity $DEV 2>&1)
		devless_args "$cap"; da=$REPLY
		# shellcheck disable=SC2086
		d=$("$CTL" --json request $req $da 2>&1)
		cost "$r"; cr=$REPLY
		cost "$d"; cdl=$REPLY
		jf high_capacity_bps "$cap"; hr=$REPLY
		jf high_capacity_bps "$d"
		if [ -n "$cr" ] && [ "$cr" = "$cdl" ] && [ "$hr" = "$REPLY" ]; then
			dsame=$((dsame + 1))
		else
			dbad=$((dbad + 1))
			diag "seed $seed step $i: $req: device form $r; device-less ($da) $d"
		fi
		jf valid "$r"; valid=$REPLY
		jf fits "$r"; fits=$REPLY
		# the scheduler's own arithmetic: slots of the request against
		# the free slots of its table in the capacity report
		if [ "$valid" = true ]; then
			jf table "$r"; t=$REPLY
			jfree "$t" "$cap"; free=$REPLY
			jf slots "$r"; slots=$REPLY
			[ -n "$free" ] && [ "${free% *}" -ge "$slots" ] && [ "${free#* }" -gt 0 ] && cfits=true || cfits=false
		else
			cfits=false
		fi
		if tc class add dev $DEV parent 1: classid "1:$m" arbtable $req 2>"$err"; then
			kern=true
			minors+=("$m")
			admitted=$((admitted + 1))
		else
			kern=false
			refused=$((refused + 1))
		fi
		n=$((n + 1))
		if [ "$fits" = "$kern" ] && [ "$cfits" = "$kern" ]; then
			agree=$((agree + 1))
		else
			bad=$((bad + 1))
			diag "seed $seed step $i: $req: request says fits=$fits, capacity says $cfits, kernel admitted=$kern ($(cat "$err")); request: $r; capacity: $cap"
		fi
	done
	total=$((total + n))
	tap_check "seed $seed: $n requests, 'fits' (request and capacity) equals the kernel's answer in all" test "$bad" = 0
	tap_check "seed $seed: the device-less request costs what the device form does, in all $n" test "$dbad" = 0
	dev_del $DEV
done
diag "$total requests over $seq sequences: $admitted admitted, $refused refused, $agree agreed; device-less cost equal in $dsame"
tap_check "both admissions and refusals were exercised ($admitted admitted, $refused refused)" \
	test "$admitted" -gt 0 -a "$refused" -gt 0

# -n NS: a qdisc at link speed on a device that exists only in another
# namespace (a veth: 10000 Mb/s), sized from the kernel's own capacity,
# not from sysfs (mounted for the root namespace, where no such device is)
ns=arbt-capns
ip netns del $ns 2>/dev/null
trap 'dev_del $DEV; ip netns del $ns 2>/dev/null; rm -f "$err"' EXIT
ip netns add $ns && ip -n $ns link add capv0 type veth peer name capv1 &&
	ip -n $ns link set capv0 up && ip -n $ns link set capv1 up &&
	ip netns exec $ns tc qdisc add dev capv0 root handle 1: arbtable mtu 1514
c=$("$CTL" -n $ns --json capacity capv0 2>"$err")
jf rate_bps "$c"
tap_check "-n $ns capacity capv0 (link speed, the device only in $ns): rate_bps 10000000000 ($REPLY$(cat "$err"))" \
	test "$REPLY" = 10000000000
ip netns del $ns
tap_end
