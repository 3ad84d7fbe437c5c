#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Fault injection (issue 15, on the sanitizer kernel): every allocation
# that sch_arbtable's configuration paths make, failed in turn, as
# syzkaller does with fail-nth.  The fault attributes are armed at
# probability 0 with a stack-trace filter spanning the module's text, so
# that only allocations reached through the module's own code (and what
# it calls: child qdisc creation, the rate estimator)
# count; /proc/self/fail-nth = N then fails the N-th of them in the tc
# process that runs the operation.  N runs 1, 2, ... until an operation
# runs with no fault injected: every failure point of that operation was
# reached.  Each of the fourteen operations has a result with its count;
# one that reaches no point fails, unless declared (NOALLOC) with the
# reason.  Operations outside ARBT_FAULT_MATCH (make test's time) run
# once without injection and say they were not swept.  A kernel without
# failslab, fail_page_alloc, their stack filter or fail-nth fails.
#
# Every operation runs first without injection (its reference result:
# it succeeds, changes the dump, and the dump shows what was asked);
# asserted for every N: a failed command printed an error message and
# left the dump exactly as before; a command that succeeded left the
# dump its reference left.  Then the same under traffic: TCP through a
# GSO split into an fq child, the N-th allocation of the sending task's
# enqueues failed (the segmentation's, fq's flows), every packet
# accounted and the qdisc drained after each.  After all of it: no
# splat, and kmemleak finds no unreferenced object.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_debug.sh"
. "$(dirname "$0")/lib_net.sh"
tap_begin "failslab / fail_page_alloc in the module's configuration paths"
trap 'fi_disarm 2>/dev/null; dev_del $DEV; veth_peer_del fv0 fv-peer' EXIT

DBG=/sys/kernel/debug
[ -d $DBG/failslab ] || mount -t debugfs none $DBG 2>/dev/null
if ! have_arbtable; then
	tap_fail "faults: sch_arbtable module and tc plugin present"
	tap_end; exit
fi
# FI_OK: fault injection usable here.  Without it every operation still
# runs once (its result checked) and fails as not swept: the sanitizer
# kernel has all of it, so a kernel without it is the wrong kernel.
FI_OK=1
FI_WHY=
if [ ! -d $DBG/failslab ] || [ ! -f $DBG/failslab/require-start ] ||
	[ ! -d $DBG/fail_page_alloc ] || [ ! -e /proc/self/fail-nth ]; then
	FI_OK=0
	FI_WHY="this kernel has no failslab/fail_page_alloc with a stack-trace filter or no /proc/self/fail-nth (CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC, CONFIG_FAULT_INJECTION_STACKTRACE_FILTER, CONFIG_FAULT_INJECTION_DEBUG_FS): the sanitizer kernel has them"
fi
tap_check "faults: failslab, fail_page_alloc, their stack-trace filter and fail-nth present" test $FI_OK = 1
[ $FI_OK = 1 ] || diag "$FI_WHY"

# The module's text: its lowest and highest text symbols, plus the last
# function's length at most (4 KiB is more than any function here).
addrs=$(awk '$4 == "[sch_arbtable]" && $2 ~ /^[tT]$/ { print $1 }' /proc/kallsyms | sort)
mod_lo=$(head -n1 <<<"$addrs")
mod_hi=$(tail -n1 <<<"$addrs")
if [ -z "$mod_lo" ] || [ "$mod_lo" = 0000000000000000 ]; then
	tap_fail "faults: the module's text symbols in /proc/kallsyms"
	[ $FI_OK = 0 ] || FI_WHY="the module's text range is unknown (no [sch_arbtable] text symbols in /proc/kallsyms)"
	FI_OK=0
else
	mod_lo=0x$mod_lo
	mod_hi=$(printf '%#x' $((0x$mod_hi + 4096)))
	diag "module text $mod_lo-$mod_hi"
fi

FI_TIMES=1000000
fi_set() { echo "$2" >"$DBG/$1" 2>/dev/null || { diag "cannot write $2 to $DBG/$1"; return 1; }; }
# fi_arm PERCENT: both failure points, filtered to tasks with make-it-fail
# and to stacks that pass through the module
fi_arm() {
	local d
	for d in failslab fail_page_alloc; do
		fi_set $d/probability 0 &&
		fi_set $d/task-filter Y &&
		fi_set $d/interval 1 &&
		fi_set $d/space 0 &&
		fi_set $d/verbose 0 &&
		fi_set $d/stacktrace-depth 32 &&
		fi_set $d/require-start "$mod_lo" &&
		fi_set $d/require-end "$mod_hi" &&
		fi_set $d/ignore-gfp-wait N &&
		fi_set $d/times $FI_TIMES || return 1
	done
	fi_set fail_page_alloc/ignore-gfp-highmem N &&
	fi_set fail_page_alloc/min-order 0 &&
	fi_set failslab/probability "$1" &&
	fi_set fail_page_alloc/probability "$1"
}
# fi_disarm: off; FI_INJ: how many faults were injected since fi_arm
# (a variable, not output: under KASAN in TCG every fork costs)
FI_INJ=0
fi_disarm() {
	local d t
	FI_INJ=0
	for d in failslab fail_page_alloc; do
		echo 0 >"$DBG/$d/probability"
		read -r t <"$DBG/$d/times"
		FI_INJ=$((FI_INJ + FI_TIMES - t))
	done
}
# dump: DUMP, the configuration as tc shows it (no statistics); the
# handles the kernel picks (8000: and up) differ between runs and read
# "auto:".  One tc process and no other (under KASAN in TCG each process
# start costs seconds: 3-9 s measured beside other guests): the handles
# are rewritten by bash, and the result is a variable, not a command
# substitution's output.
DUMP_RE='(^|[^0-9A-Za-z_])([89a-f][0-9a-f]{3}):'
SHOWS="qdisc show dev $DEV
class show dev $DEV
filter show dev $DEV"
dump_of() { # the text of tc's shows, into DUMP
	local s=$1 out=
	while [[ $s =~ $DUMP_RE ]]; do
		out+="${s%%"${BASH_REMATCH[0]}"*}${BASH_REMATCH[1]}auto:"
		s=${s#*"${BASH_REMATCH[0]}"}
	done
	DUMP=$out$s
}
dump() { dump_of "$(tc -d -batch - <<<"$SHOWS")"; }

# The starting states, as tc batch lines in ST; build_dump builds one
# from no root and dumps it
q_auto="qdisc add dev $DEV root handle 1: arbtable rate 100mbit"
q_man="qdisc add dev $DEV root handle 1: arbtable manual rate 100mbit"
st_none() { ST=; }
st_auto0() { ST=$q_auto; }
st_auto() {
	ST="$q_auto
class add dev $DEV parent 1: classid 1:10 arbtable rate 10mbit latency 5ms
class add dev $DEV parent 1: classid 1:11 arbtable rate 2mbit distance 8
class add dev $DEV parent 1: classid 1:12 arbtable share 4
class add dev $DEV parent 1: classid 1:13 arbtable rate 1mbit latency 20ms
filter add dev $DEV parent 1: protocol ip prio 1 u32 match ip dst 10.0.0.1/32 flowid 1:12"
}
st_man() {
	ST="$q_man
class add dev $DEV parent 1: classid 1:10 arbtable
class add dev $DEV parent 1: classid 1:11 arbtable ceil 5mbit
class add dev $DEV parent 1: classid 1:12 arbtable
qdisc change dev $DEV root handle 1: arbtable high 10:20,11:30 low 12:4,10:1 priomap 10 11 12 12 10 11 12 12 10 11 12 12 10 11 12 12"
}
st_graft() { st_man; ST+="
qdisc add dev $DEV parent 1:10 handle 10: fq_codel"; }
# build_dump STATE: the state built on $DEV and dumped into DUMP by one
# tc process (it was three: delete, build, dump): the root deleted
# (-force goes on when there is none), STATE's lines, the shows.  Fails,
# with tc's messages in BUILD_ERR, when a line after the delete failed
# (tc names each failed line of a batch: "Command failed -:N").
FERR=$(mktemp)
build_dump() {
	local s
	$1
	s=$(tc -force -d -batch - 2>"$FERR" <<<"qdisc del dev $DEV root${ST:+
$ST}
$SHOWS")
	dump_of "$s"
	BUILD_ERR=
	IFS= read -r -d '' BUILD_ERR <"$FERR"
	! [[ $BUILD_ERR =~ Command\ failed\ -:([2-9]|[1-9][0-9]) ]]
}

MAX_NTH=${ARBT_FAULT_MAX_NTH:-200}
nskipped_ops=0
survived=0
points_all=
# expect PATTERN: the dump in DUMP shows what the operation should have
# made: PATTERN (grep -E) matches it, or with a leading ! does not
expect() {
	if [ "${1:0:1}" = '!' ]; then
		! grep -qE -- "${1:1}" <<<"$DUMP"
	else
		grep -qE -- "$1" <<<"$DUMP"
	fi
}
# op DESC STATE EXPECT CMD...: the operation CMD (tc arguments) from
# state STATE, first without injection (it must succeed, change the dump
# and leave EXPECT true of it), then its N-th allocation through the
# module failed, for N = 1, 2, ...  An operation that cannot reach an
# allocation through the module is declared with NOALLOC="why" before
# op; any other fails when it reached none.
op() {
	local desc=$1 state=$2 want=$3 before ref after out rc n inj bad=0 nfail=0 nok=0 points=0 rebuild t0=$SECONDS
	shift 3
	build_dump $state || { tap_fail "faults: $desc: set up the starting state"; diag "$BUILD_ERR"; return; }
	before=$DUMP
	if ! out=$(tc "$@" 2>&1); then
		tap_fail "faults: $desc: runs without injection"
		diag "tc $*: $out"
		return
	fi
	dump
	ref=$DUMP
	if [ "$ref" = "$before" ] || ! expect "$want"; then
		tap_fail "faults: $desc: without injection, changes the configuration as asked ($want)"
		diag "before:"$'\n'"$before"$'\n'"after:"$'\n'"$ref"
		return
	fi
	if [ $FI_OK = 0 ]; then
		tap_fail "faults: $desc: ran without injection as asked; not swept: no fault injection here (above)"
		return
	fi
	# ARBT_FAULT_MATCH (an extended regular expression on DESC) sweeps
	# some of the operations (make test's time); the others have run
	# once above, without injection
	if ! grep -qE "${ARBT_FAULT_MATCH:-.}" <<<"$desc"; then
		nskipped_ops=$((nskipped_ops + 1))
		tap_ok "faults: $desc: without injection, changes the configuration as asked ($want); not swept in this run (ARBT_FAULT_MATCH)"
		return
	fi
	# the starting state is built again only when the last run changed
	# it (a failure that left the dump as it was needs none): under
	# KASAN in TCG every tc process costs seconds
	rebuild=1
	for ((n = 1; n <= MAX_NTH; n++)); do
		if [ "$rebuild" = 1 ]; then
			build_dump $state || { bad=1; diag "fail-nth $n: starting state not built: $BUILD_ERR"; break; }
			after=$DUMP
			[ "$after" = "$before" ] || { bad=1; diag "fail-nth $n: starting state differs from the first build"; break; }
		fi
		rebuild=1
		fi_arm 0 || { bad=1; break; }
		# the subshell (this bash, forked) arms its own fail-nth and
		# becomes tc: no other process start
		out=$( { echo "$n" >/proc/self/fail-nth && exec tc "$@"; } 2>&1)
		rc=$?
		fi_disarm
		inj=$FI_INJ
		dump
		after=$DUMP
		if [ "$inj" = 0 ]; then
			# past the last allocation: the operation ran whole
			if [ "$rc" != 0 ] || [ "$after" != "$ref" ]; then
				bad=1; diag "fail-nth $n: nothing injected, yet rc $rc or a result unlike the reference: $out"
			fi
			break
		fi
		points=$((points + 1))
		if [ "$rc" != 0 ]; then
			nfail=$((nfail + 1))
			if [ -z "$out" ]; then
				bad=1; diag "fail-nth $n: failed (rc $rc) without a message"
			fi
			if [ "$after" != "$before" ]; then
				bad=1
				diag "fail-nth $n: failed ($out) but changed the configuration:"
				diag "$(diff <(echo "$before") <(echo "$after") | head -n 12)"
			else
				rebuild=0
			fi
		else
			nok=$((nok + 1))
			if [ "$after" != "$ref" ]; then
				bad=1
				diag "fail-nth $n: succeeded past the failed allocation but the result differs from its reference:"
				diag "$(diff <(echo "$ref") <(echo "$after") | head -n 12)"
			fi
		fi
	done
	[ "$n" -le "$MAX_NTH" ] || { bad=1; diag "more than $MAX_NTH allocation points: not all reached"; }
	survived=$((survived + points))
	points_all="$points_all, $desc $points"
	diag "$desc: $points allocation points, each failed in turn: $nfail failed cleanly, $nok succeeded past it ($((SECONDS - t0)) s)"
	if [ -n "${NOALLOC:-}" ]; then
		# declared unreachable: a point reached means the declaration
		# (and the reason given for it) no longer holds
		[ "$points" = 0 ] || { bad=1; diag "$desc: declared without allocation through the module ($NOALLOC), yet $points reached"; }
		tap_check "faults: $desc: no allocation through the module, as declared ($NOALLOC); ran whole at fail-nth 1" \
			test "$bad" = 0
		return
	fi
	[ "$points" -gt 0 ] || { bad=1; diag "$desc: no allocation point reached (fail-nth 1 injected nothing): the sweep tested nothing"; }
	tap_check "faults: $desc: each of its $points allocation points failed in turn; each failure has a message and leaves the dump as it was, each success matches the reference" \
		test "$bad" = 0
}

dummy_up $DEV
klog_mark
# The fourteen configuration operations, each with what its reference
# dump must show.  A class change of ceil and grafting a child the core
# created are not here: they allocate nothing through the module
# (measured with the earlier probabilistic injection); test_config and
# test_stress cover them.
op "auto: qdisc add" st_none 'qdisc arbtable 1: root .*rate 100Mbit' \
	qdisc add dev $DEV root handle 1: arbtable rate 100mbit
op "auto: class add with rate and latency (admission)" st_auto 'class arbtable 1:20 .*rate 5Mbit' \
	class add dev $DEV parent 1: classid 1:20 arbtable rate 5mbit latency 2ms
op "auto: class add with a share" st_auto 'class arbtable 1:21 .*share 2' \
	class add dev $DEV parent 1: classid 1:21 arbtable share 2
op "auto: class add with an estimator" st_auto 'class arbtable 1:22 .*rate 1Mbit' \
	class add dev $DEV parent 1: classid 1:22 est 1sec 8sec arbtable rate 1mbit
op "auto: class change rate (reallocation)" st_auto 'class arbtable 1:11 .*rate 20Mbit' \
	class change dev $DEV classid 1:11 arbtable rate 20mbit latency 5ms
op "auto: class change to a share" st_auto 'class arbtable 1:10 .*share 3' \
	class change dev $DEV classid 1:10 arbtable share 3
op "auto: class delete (release and defragment)" st_auto '!class arbtable 1:10 ' \
	class del dev $DEV classid 1:10
op "auto: qdisc change rate (no reservations yet)" st_auto0 'qdisc arbtable 1: root .*rate 200Mbit' \
	qdisc change dev $DEV root handle 1: arbtable rate 200mbit
op "auto: qdisc replace by a new manual arbtable" st_auto 'qdisc arbtable 2: root .*rate 50Mbit' \
	qdisc replace dev $DEV root handle 2: arbtable manual rate 50mbit
op "manual: qdisc add" st_none 'qdisc arbtable 1: root .*highlimit 5' \
	qdisc add dev $DEV root handle 1: arbtable manual rate 100mbit highlimit 5
op "manual: class add" st_man 'class arbtable 1:13 .*ceil 1Mbit' \
	class add dev $DEV parent 1: classid 1:13 arbtable strict ceil 1mbit
op "manual: program tables and priomap" st_man 'priomap 12 12 10 10 ' \
	qdisc change dev $DEV root handle 1: arbtable high 12:50,10:10@4 low 11:3 priomap 12 12 10 10 12 12 10 10 12 12 10 10 12 12 10 10
op "manual: delete a grafted child" st_graft '!qdisc fq_codel 10: ' \
	qdisc del dev $DEV parent 1:10 handle 10:
op "manual: qdisc delete" st_graft '!arbtable' \
	qdisc del dev $DEV root
tc qdisc del dev $DEV root 2>/dev/null
rm -f "$FERR"

# ------------------------------------------------ under traffic
# TCP from this namespace over a TSO veth, below 1gbit (the qdisc splits
# every TSO skb) into an fq child (which allocates its flows at enqueue):
# the sending task's N-th allocation through the module fails while it
# sends ARBT_FAULT_TRAFFIC_BYTES (16 KB; each segment of a split is an
# allocation point); the
# connection completes (TCP resends what was dropped),
# the qdisc drains, the classes' counters sum to the qdisc's.
tr_ok=0
if veth_peer fv0 fv1 fv-peer 10.96.0 &&
	tc qdisc add dev fv0 root handle 1: arbtable manual rate 100mbit &&
	tc class add dev fv0 parent 1: classid 1:10 arbtable &&
	tc qdisc add dev fv0 parent 1:10 handle 10: fq &&
	tc filter add dev fv0 parent 1: protocol ip prio 1 matchall classid 1:10 &&
	tc qdisc change dev fv0 root handle 1: arbtable high 10:16; then
	ip netns exec fv-peer python3 -c '
import socket, threading
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.96.0.2", 7000))
s.listen(64)
def sink(c):
    while c.recv(65536):
        pass
    c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=sink, args=(c,), daemon=True).start()' >/dev/null 2>&1 &
	# the listener up before the first connection (python's start in a
	# KASAN guest under TCG can take longer than a fixed sleep)
	for _ in $(seq 120); do
		ip netns exec fv-peer ss -ltn 2>/dev/null | grep -q '10.96.0.2:7000 ' && { tr_ok=1; break; }
		sleep 0.5
	done
	[ "$tr_ok" = 1 ] || diag "traffic: the listener in fv-peer did not come up in 60 s"
fi
tap_check "faults: traffic: TCP over veth fv0 into arbtable 1:10 with an fq child" test $tr_ok = 1
tr_points=0
tr_bad=0
t0=$SECONDS
TR_MAX=${ARBT_FAULT_TRAFFIC_MAX:-100}
[ $FI_OK = 1 ] || diag "traffic: not swept: no fault injection here"
# one sender for the whole sweep, not a python3 per point (its start
# costs seconds on the sanitizer kernel under TCG): for each N on its
# stdin it connects (before fail-nth is armed: the connection is not
# what is tested; 90 s for it, since a KASAN guest beside two other TCG
# guests once took over 30 s, make test at 07c2c8c, 2026-11-27), arms
# its thread's fail-nth with N, sends, and answers "ok LEFT" with what
# fail-nth had left (0 when the N-th allocation was failed), or "err
# WHY"; it disarms in either case
if [ "$tr_ok" = 1 ] && [ $FI_OK = 1 ]; then
	coproc TRS { python3 -u -c '
import socket, sys
size = int(sys.argv[1])
def nth(v=None):
    with open("/proc/thread-self/fail-nth", "r" if v is None else "w") as f:
        return f.read().strip() if v is None else f.write(v)
for line in sys.stdin:
    try:
        c = socket.create_connection(("10.96.0.2", 7000), timeout=90)
        nth(line.strip())
        try:
            c.sendall(b"\0" * size)
            left = nth()
        finally:
            nth("0")
        c.close()
        print("ok", left)
    except Exception as e:
        print("err", repr(e))' "${ARBT_FAULT_TRAFFIC_BYTES:-16384}" 2>&1; }
fi
for ((n = 1; tr_ok && FI_OK && n <= TR_MAX; n++)); do
	fi_arm 0 || { tr_bad=1; break; }
	echo "$n" >&"${TRS[1]}"
	rc=0
	IFS= read -r -t 150 left <&"${TRS[0]}" || { rc=$?; left="no answer from the sender in 150 s"; }
	[ "$rc" = 0 ] && [ "${left%% *}" != ok ] && rc=1
	left=${left#ok }
	fi_disarm
	inj=$FI_INJ
	if [ "$rc" != 0 ]; then
		tr_bad=1; diag "traffic, fail-nth $n: the sender failed (rc $rc): $left"
		# what held the connection: the qdisc, its class and child,
		# the listener, the veth's counters, a ping through it all
		diag "$(tc -s -d qdisc show dev fv0; tc -s -d class show dev fv0)"
		diag "listener: $(ip netns exec fv-peer ss -ltn 2>&1 | tr '\n' ' '); fv0: $(ip -s -s link show dev fv0 | tr -s ' \n' ' ')"
		diag "ping: $(ping -c 3 -i 0.5 -W 2 10.96.0.2 2>&1 | tail -n 2 | tr '\n' ' ')"
		break
	fi
	# drained and the counters summed from one tc process per poll
	settled fv0 1: arbtable 10
	case $? in
	1) tr_bad=1; diag "traffic, fail-nth $n: not drained"; break ;;
	2) tr_bad=1; diag "traffic, fail-nth $n: class counters do not sum to the qdisc's"; break ;;
	esac
	[ "$inj" = 0 ] && break
	tr_points=$((tr_points + 1))
done
read -r _ _ tr_drops _ < <(qd_stats fv0 1:)
diag "traffic: $tr_points allocation points of the sender's enqueues failed in turn (qdisc drops $tr_drops, $(tc -s qdisc show dev fv0 | sed -nE 's/.* gso: split ([0-9]+).*/gso_split \1/p' | head -n1); $((SECONDS - t0)) s)"
tap_check "faults: traffic: each of the sending task's $tr_points allocation points through the module failed in turn; the transfer completed, the qdisc drained, counters add up" \
	eval '[ "$tr_bad" = 0 ] && [ "$tr_points" -gt 0 ] && [ "$n" -le "$TR_MAX" ]'
# the sender ends at its stdin's end (or is killed, if it hung)
if [ -n "${TRS_PID:-}" ]; then
	p=$TRS_PID
	[ -n "${TRS[1]:-}" ] && eval "exec ${TRS[1]}>&-"
	kill "$p" 2>/dev/null; wait "$p" 2>/dev/null
fi
veth_peer_del fv0 fv-peer
survived=$((survived + tr_points))
points_all="$points_all, traffic $tr_points"

diag "allocation points failed in turn and survived: $survived (${points_all#, })${ARBT_FAULT_MATCH:+; $nskipped_ops operations not matching ARBT_FAULT_MATCH=$ARBT_FAULT_MATCH run once without injection}"
tap_check "faults: every configuration allocation point failed in turn ($survived survived)" test "$survived" -gt 0
phase_checks "faults"
tap_end
