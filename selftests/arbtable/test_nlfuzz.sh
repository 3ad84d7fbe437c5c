#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Netlink fuzzing under traffic (issue 4): build/nlfuzz/arbt_nlfuzz sends
# ARBT_NLFUZZ_MSGS (default 100000) mutated arbtable qdisc/class messages
# at a dummy device while paced pktgen producers feed classes 1:1..1:4
# (and, when those are gone, the unclassified queue).  The fuzzer asserts
# that every rejection carries an extack (outside the rtnetlink core's own
# ENOENT/EEXIST) and that the dump parses and is self-consistent after
# every batch.  Then traffic stops and whatever qdisc survived must drain;
# the runner checks the kernel log for splats after the suite.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_auto.sh"
tap_begin "netlink fuzzing under traffic"
trap 'pg_stop; dev_del $DEV' EXIT
have_arbtable || { tap_fail "nlfuzz: module and plugin present"; tap_end; exit; }
FUZZ=$ARBT_ROOT/build/nlfuzz/arbt_nlfuzz
[ -x "$FUZZ" ] || { tap_fail "nlfuzz: $FUZZ built (make all)"; tap_end; exit; }
MSGS=${ARBT_NLFUZZ_MSGS:-100000}
SEED=${ARBT_NLFUZZ_SEED:-1}

auto_dev $DEV 200 || { tap_fail "nlfuzz: dummy device"; tap_end; exit; }
run tc qdisc add dev $DEV root handle 1: arbtable rate 10mbit || diag "initial qdisc: $RUN_ERR"
auto_traffic "1:1500:300 2:800:300 3:300:300 4:64:300" || { tap_fail "nlfuzz: traffic"; tap_end; exit; }
pg_start
t0=$SECONDS
out=$("$FUZZ" -d $DEV -n "$MSGS" -s "$SEED" 2>/dev/null)
rc=$?
while IFS= read -r l; do
	case $l in
	"ok "*|"not ok "*) if [ "${l%% *}" = ok ]; then tap_ok "${l#ok - }"; else tap_fail "${l#not ok - }"; fi ;;
	*) diag "${l#\# }" ;;
	esac
done <<<"$out"
diag "fuzzer: $MSGS messages (seed $SEED) in $((SECONDS - t0)) s, exit $rc"
tap_check "nlfuzz: fuzzer ran all $MSGS messages (exit 0)" test "$rc" = 0
pg_stop
# A fuzzed configuration may shape a full queue to a few bit/s (seed 1 at
# 30,000 messages leaves a class under ceil 120bit holding 116 KB: two
# hours).  The drain check is about the arbiter, so lift what shapes
# first: class ceils (a new ceil releases a throttled class at once,
# test_ceil), else the class goes; a qdisc rate below 1 Mbit/s is raised.
lift_shaping() {
	local id r
	for id in $(tc class show dev $DEV | awk '$2 == "arbtable" && / ceil / { print $3 }'); do
		if run tc class change dev $DEV classid "$id" arbtable ceil 0; then
			diag "lifted the ceil of class $id"
		elif run tc class del dev $DEV classid "$id"; then
			diag "class $id keeps its ceil, deleted ($RUN_ERR)"
		else
			diag "class $id keeps its ceil: $RUN_ERR"
		fi
	done
	r=$(tc -j qdisc show dev $DEV root | jq -r '.[0].options.rate // 0')
	if [ "${r:-0}" -gt 0 ] && [ "$r" -lt 125000 ]; then
		run tc qdisc change dev $DEV root handle 1: arbtable rate 10mbit
		diag "qdisc rate $r bytes/s raised to 10mbit: rc $RUN_RC $RUN_ERR"
	fi
}
if tc qdisc show dev $DEV | grep -q '^qdisc arbtable 1:'; then
	lift_shaping
	tap_check "nlfuzz: the surviving arbtable drains to backlog 0, qlen 0" drained $DEV 1: arbtable 30
	diag "survivor: $(tc -d qdisc show dev $DEV | head -n 3)"
	# what held packets, when some did (its classes, their slots, the
	# arbiter's state)
	tc -s qdisc show dev $DEV root | grep -q "backlog 0b 0p" ||
		diag "$(tc -s -d class show dev $DEV; "$ARBT_ROOT/build/tools/arbtablectl" show $DEV 2>&1)"
else
	diag "the last message left no arbtable root"
	tap_ok "nlfuzz: nothing to drain (no arbtable root survived)"
fi
tap_check "nlfuzz: a fresh arbtable still attaches after the fuzzing" \
	bash -c "tc qdisc del dev $DEV root 2>/dev/null; tc qdisc add dev $DEV root handle 1: arbtable rate 10mbit && tc class add dev $DEV parent 1: classid 1:10 arbtable rate 1mbit latency 100ms"
tap_end
