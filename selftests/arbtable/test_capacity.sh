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

pick() { local a=("$@"); echo "${a[RANDOM % ${#a[@]}]}"; }
# jf KEY JSON: a scalar member of arbtablectl's one-line JSON, without
# forking (a python per value cost ~1 s under TCG)
jf() { [[ $2 =~ \"$1\":\"?([a-z0-9]+) ]] && echo "${BASH_REMATCH[1]}"; }
# jfree TABLE JSON: "free_slots classes_free" of a capacity report
# devless_args CAPACITY-JSON: the qdisc's sizing parameters as the
# device-less request takes them
devless_args() {
	local a sc scb
	[[ $1 =~ \"rate_bps\":([0-9]+) ]] && a="link ${BASH_REMATCH[1]}bit"
	a+=" mtu $(jf mtu "$1") maxweight $(jf maxweight "$1") highlimit $(jf highlimit "$1")"
	sc=$(jf strict_ceil_bps "$1")
	scb=$(jf strict_cburst "$1")
	[ "${sc:-0}" != 0 ] && a+=" strictceil ${sc}bit"
	[ "${scb:-0}" != 0 ] && a+=" strictcburst $scb"
	echo "$a"
}
# cost JSON: what both request forms print alike
cost() {
	if [[ $1 =~ (\"valid\":true,.*\"bound_ns\":[0-9]+) ]]; then
		echo "${BASH_REMATCH[1]}"
	elif [[ $1 =~ (\"why\":\"[^\"]*\") ]]; then
		echo "invalid ${BASH_REMATCH[1]}"
	fi
}
jfree() {
	[[ $2 =~ \"$1\":\{\"free_slots\":([0-9]+) ]] || return 1
	local f=${BASH_REMATCH[1]}
	[[ $2 =~ \"classes_free\":([0-9]+) ]] && echo "$f ${BASH_REMATCH[1]}"
}

total=0 agree=0 admitted=0 refused=0 seq=0 dsame=0
for seed in $SEEDS; do
	seq=$((seq + 1))
	RANDOM=$seed
	rate=$(pick 10 100 1000)
	hl=$(pick 0 1 16 255)
	mw=$(pick 255 64 16)
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
			[ $((RANDOM % 2)) = 0 ] && req+=" distance $(pick 1 2 4 8 16 32 64)"
		else
			# 0.5 .. 50 % of the qdisc rate
			req="rate $((rate * $(pick 5 10 20 50 100 200 300 500)))kbit"
			case $((RANDOM % 3)) in
			0) req+=" latency $((10000 * $(pick 1 2 5 10 20 50 100 200) / rate))us" ;;
			1) req+=" distance $(pick 1 2 4 8 16 32 64)" ;;
			esac
		fi
		m=$(printf '%x' $next)
		next=$((next + 1))
		r=$("$CTL" --json request $DEV $req 2>&1)
		cap=$("$CTL" --json capacity $DEV 2>&1)
		# shellcheck disable=SC2046,SC2086
		d=$("$CTL" --json request $req $(devless_args "$cap") 2>&1)
		if [ -n "$(cost "$r")" ] && [ "$(cost "$r")" = "$(cost "$d")" ] &&
		   [ "$(jf high_capacity_bps "$cap")" = "$(jf high_capacity_bps "$d")" ]; then
			dsame=$((dsame + 1))
		else
			dbad=$((dbad + 1))
			diag "seed $seed step $i: $req: device form $r; device-less ($(devless_args "$cap")) $d"
		fi
		valid=$(jf valid "$r")
		fits=$(jf fits "$r")
		# the scheduler's own arithmetic: slots of the request against
		# the free slots of its table in the capacity report
		if [ "$valid" = true ]; then
			t=$(jf table "$r")
			free=$(jfree "$t" "$cap")
			slots=$(jf slots "$r")
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
tap_check "-n $ns capacity capv0 (link speed, the device only in $ns): rate_bps 10000000000 ($(jf rate_bps "$c")$(cat "$err"))" \
	test "$(jf rate_bps "$c")" = 10000000000
ip netns del $ns
tap_end
