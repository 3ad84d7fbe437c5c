#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Shared helpers for the arbtable VM selftests: TAP output, tc wrappers,
# pktgen traffic and text parsing of `tc -s` statistics (iproute2 6.1 has
# no JSON for class stats).
#
# A test file sources this, calls tap_begin, reports with tap_ok/tap_fail/
# tap_check, and ends with tap_end.  Run alone it prints its own TAP
# header and plan; under run_all.sh (ARBT_RUNNER=1) the runner numbers the
# results of every file into one TAP stream.
#
# Under TCG a process start costs 55-100 ms (a line of `tc -batch`
# 2.5 ms): helpers read files and parse output with bash builtins, and
# many tc commands go through one `tc -batch`, which names the failed line.

ARBT_DIR=${ARBT_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
ARBT_ROOT=${ARBT_ROOT:-$(cd "$ARBT_DIR/../.." && pwd)}
DEV=${DEV:-d0}
_tap_n=0
_tap_failed=0

# ---------------------------------------------------------------- TAP
tap_begin() {
	[ -n "${ARBT_RUNNER:-}" ] || echo "TAP version 13"
	diag "$(basename "$0"): $*"
	# Run alone (the kselftest runner runs each file on its own): leave
	# nothing of an earlier file in the way, as run_all.sh does between
	# files: pktgen devices and the dummy d0.
	if [ -z "${ARBT_RUNNER:-}" ]; then
		local th
		for th in /proc/net/pktgen/kpktgend_*; do [ -e "$th" ] && echo rem_device_all >"$th" 2>/dev/null; done
		ip link del d0 2>/dev/null
		# this file's window of the kernel log, read at tap_end
		# (run_all.sh reads each file's window itself)
		_tap_kseq=$(klog_next)
	fi
}
diag() { local l; while IFS= read -r l; do echo "# $l"; done <<<"$*"; }
tap_ok() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $*"; }
tap_fail() { _tap_n=$((_tap_n + 1)); _tap_failed=$((_tap_failed + 1)); echo "not ok $_tap_n - $*"; }
tap_skip() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $1 # SKIP ${2:-}"; }
# tap_check DESC CMD...: ok if CMD succeeds
tap_check() { local d=$1; shift; if "$@"; then tap_ok "$d"; else tap_fail "$d"; fi; }
# tap_measure DESC CMD...: a check that needs the guest to keep up with
# the traffic (shares, rates, backlog).  It is asserted on every kernel:
# on a slow one (ARBT_SLOW_KERNEL=1, the sanitizer kernel under TCG) the
# rate tests run slower instead (ARBT_RATE_DIV, below).  Only a check
# whose premise failed, measured independently of the qdisc, may skip,
# and it says the cause (rate_check: the producers' own counters).
tap_measure() {
	local d=$1; shift
	if "$@"; then tap_ok "$d"; else tap_fail "$d"; fi
}
# Rate scaling for a slow kernel: KASAN and lockdep under TCG cannot keep
# a 64-byte producer's class backlogged at 10 Mbit/s, so there the rate
# tests divide every qdisc, class and producer rate by ARBT_RATE_DIV
# (default 4) and stretch their measurement windows by ARBT_WIN_MUL
# (default 2): the same number of arbitration rounds per window at a
# packet rate the guest sustains.  Both are 1 elsewhere.
if [ "${ARBT_SLOW_KERNEL:-0}" = 1 ]; then
	ARBT_RATE_DIV=${ARBT_RATE_DIV:-4}
	ARBT_WIN_MUL=${ARBT_WIN_MUL:-2}
else
	ARBT_RATE_DIV=${ARBT_RATE_DIV:-1}
	ARBT_WIN_MUL=${ARBT_WIN_MUL:-1}
fi
# kbit MBIT: the tc rate for MBIT Mbit/s after scaling ("2500kbit")
kbit() { echo "$(($1 * 1000 / ARBT_RATE_DIV))kbit"; }
# bps MBIT: the same in bit/s, for the checks
bps() { echo $(($1 * 1000000 / ARBT_RATE_DIV)); }
# win SECONDS: a measurement window after scaling
win() { echo $(($1 * ARBT_WIN_MUL)); }
tap_end() {
	if [ -z "${ARBT_RUNNER:-}" ] && [ -n "${_tap_kseq:-}" ]; then
		tap_check "$(basename "$0"): kernel log clean while it ran" klog_clean "$_tap_kseq"
	fi
	[ -z "$_run_dir" ] || rm -rf "$_run_dir"
	diag "$(basename "$0"): done in ${SECONDS} s"
	[ -n "${ARBT_RUNNER:-}" ] || echo "1..$_tap_n"
	[ "$_tap_failed" -eq 0 ]
}

# ---------------------------------------------------------------- helpers
now() { date +%s.%N; }
# nap SECONDS: sleep without a process (a poll's sleep was one start per
# round): a read that times out on a pipe nothing writes to
_nap_fd=
nap() {
	[ -n "$_nap_fd" ] || exec {_nap_fd}<> <(:)
	read -r -t "$1" -u "$_nap_fd" _
	return 0
}
# fcmp EXPR: awk boolean on floats, e.g. fcmp "1.2 < 3"
fcmp() { awk "BEGIN { exit !($*) }"; }
fcalc() { awk "BEGIN { printf \"%.6f\", $* }"; }

# extack_fmt: the kernel gives each request room for a formatted message
# (NL_SET_ERR_MSG_FMT, 6.2+); on 6.1 the module's refusals that carry
# numbers are its constant texts instead (kernel/arbtable_compat.h)
extack_fmt() { kver_ge 6 2; }
# kver_ge MAJOR MINOR: the running kernel is MAJOR.MINOR or newer
kver_ge() {
	local maj min
	# the release as uname -r prints it, without its process
	IFS=. read -r maj min _ </proc/sys/kernel/osrelease
	[ "$maj" -gt "$1" ] || { [ "$maj" = "$1" ] && [ "${min%%[!0-9]*}" -ge "$2" ]; }
}
# ext FORMATTED CONSTANT: what to expect in an extack message on this kernel
ext() {
	if extack_fmt; then printf '%s' "$1"; else printf '%s' "$2"; fi
}
# an allocator's refusal ("needs 16 slots at distance 4, 10 free; ...",
# "rate 20Mbit above the guaranteed high-table rate 9.08Mbit", ...; on 6.1
# the same without numbers), as tc prints it
ARB_REFUSAL_RE='^Error: (needs |rate ([^ ]+ )?above the guaranteed high-table rate|latency ([^ ]+ )?below the best possible bound|share ([0-9]+ )?cannot be spread)'

# run CMD...: run, capture stdout/stderr/rc into RUN_OUT RUN_ERR RUN_RC.
# stderr goes through one file per shell in a directory made once (tap_end
# removes it) and is read back with a builtin: mktemp, cat and rm per call
# were three process starts (55-100 ms each under TCG) around every tc.
_run_dir=
run() {
	local e
	[ -n "$_run_dir" ] || _run_dir=$(mktemp -d) || return
	e=$_run_dir/err.$BASHPID
	RUN_OUT=$("$@" 2>"$e")
	RUN_RC=$?
	RUN_ERR=
	IFS= read -r -d '' RUN_ERR <"$e"
	# as $(cat) did: no trailing newlines
	while [[ $RUN_ERR == *$'\n' ]]; do RUN_ERR=${RUN_ERR%$'\n'}; done
	return $RUN_RC
}
# lines_match [-p PREFIX] ERE TEXT: a line of TEXT (starting with PREFIX)
# matches ERE, case-insensitively (grep -qiE without a process)
lines_match() {
	local pfx='' l nc=0 rc=1
	[ "$1" = -p ] && { pfx=$2; shift 2; }
	shopt -q nocasematch && nc=1
	shopt -s nocasematch
	while IFS= read -r l; do
		[[ $l == "$pfx"* && $l =~ $1 ]] && { rc=0; break; }
	done <<<"$2"
	[ $nc = 1 ] || shopt -u nocasematch
	return $rc
}

# need_arbtable: module loaded and tc plugin found; diag why not.
have_arbtable() {
	if ! grep -q '^sch_arbtable ' /proc/modules; then
		diag "sch_arbtable module not loaded"
		return 1
	fi
	if [ ! -f "${TC_LIB_DIR:-/nonexistent}/q_arbtable.so" ]; then
		diag "tc plugin q_arbtable.so not found in TC_LIB_DIR=${TC_LIB_DIR:-}"
		return 1
	fi
	return 0
}

# pg_test_begin NAME TITLE [CLEANUP]: tap_begin TITLE for a test of DEV
# under pktgen traffic: tmp, its directory; at exit CLEANUP (shell code),
# then the producers stopped, DEV deleted and tmp removed; without the
# module and plugin the test ends there (a failed check named NAME)
pg_test_begin() {
	tap_begin "$2"
	tmp=$(mktemp -d)
	# shellcheck disable=SC2064 # CLEANUP now; DEV and tmp at exit
	trap "${3:+$3; }pg_stop; dev_del \$DEV; rm -rf \$tmp" EXIT
	have_arbtable || { tap_fail "$1: module and plugin present"; tap_end; exit; }
}

# arb_module_file: the module to load: $ARBT_KO, else the out-of-tree
# build for this kernel, else (a kernel tree with sch_arbtable in
# net/sched) what modprobe finds; empty when there is none
arb_module_file() {
	local ko=${ARBT_KO:-$ARBT_ROOT/build/$(uname -r)/sch_arbtable.ko}
	if [ -f "$ko" ]; then
		echo "$ko"
	else
		# modprobe, not modinfo: under vm.sh -K modprobe is a wrapper
		# naming the tree's module directory
		modprobe --show-depends sch_arbtable 2>/dev/null | awk '$1 == "insmod" { f = $2 } END { print f }'
	fi
}
# arb_load_module: load sch_arbtable (and what it depends on) if it is not
arb_load_module() {
	local ko dep
	grep -q '^sch_arbtable ' /proc/modules && return 0
	ko=$(arb_module_file)
	[ -n "$ko" ] || { diag "no sch_arbtable module file for $(uname -r)"; return 1; }
	if [ -z "${ARBT_KO:-}" ] && [ "$ko" != "$ARBT_ROOT/build/$(uname -r)/sch_arbtable.ko" ]; then
		modprobe sch_arbtable
		return
	fi
	for dep in $(modinfo -F depends "$ko" 2>/dev/null | tr ',' ' '); do
		modprobe "$dep"
	done
	insmod "$ko"
}

dummy_up() { # dev
	ip link del "$1" 2>/dev/null
	ip link add "$1" type dummy || return 1
	# no IPv6 autoconf/MLD chatter: it would land in the unclassified queue
	sysctl -qw "net.ipv6.conf.$1.disable_ipv6=1" 2>/dev/null
	ip link set "$1" txqueuelen 1000 up
}
dev_del() { ip link del "$1" 2>/dev/null; true; }

# veth_mac_keep / veth_mac_restore: udev's default .link file
# (MACAddressPolicy=persistent) rewrites a new veth's MAC after its
# creator has read it, so the bridge plugin's CHECK finds the MAC it
# returned gone ("Interface vethX Mac doesn't match", upstream
# containernetworking/plugins issue 805).  A .link file for veths in the
# guest's /run (a tmpfs) leaves their MACs alone while a test runs.
VETH_LINK=/run/systemd/network/00-arbtable-veth.link
veth_mac_keep() {
	mkdir -p "${VETH_LINK%/*}" &&
		printf '[Match]\nDriver=veth\n\n[Link]\nMACAddressPolicy=none\n' >"$VETH_LINK"
	udevadm control --reload 2>/dev/null
	true
}
veth_mac_restore() {
	[ -f "$VETH_LINK" ] || return 0
	rm -f "$VETH_LINK"
	udevadm control --reload 2>/dev/null
	true
}

# ---------------------------------------------------------------- pktgen
PG=/proc/net/pktgen
_pg_pid=
pg_cmd() { # file cmd: pktgen wants one command per write
	echo "$2" >"$1" || { diag "pktgen: '$2' > $1 failed"; return 1; }
	if [ -r "$1" ] && [ "${1#"$PG"/kpktgend}" = "$1" ] && [ "$1" != "$PG/pgctrl" ]; then
		# its "Result:" line, read without a grep (a process per command)
		local l res=
		while IFS= read -r l; do
			[[ $l == "Result: OK"* ]] && return 0
			[[ $l == Result* ]] && res+="${res:+$'\n'}$l"
		done <"$1"
		diag "pktgen: '$2' > $1: $res"
		return 1
	fi
}
pg_reset() {
	modprobe pktgen || return 1
	local t
	for t in "$PG"/kpktgend_*; do pg_cmd "$t" rem_device_all; done
}
# pg_device DEV THREAD TAG PKT_SIZE SKB_PRIORITY DST MAC: a producer
# DEV@TAG on kpktgend_THREAD, endless, unpaced (until its caller paces
# it), through the qdisc (queue_xmit), to 198.51.100.DST and MAC
pg_device() {
	local dev=$1 th=$2 tag=$3 size=$4 prio=$5 f
	pg_cmd "$PG/kpktgend_$th" "add_device $dev@$tag" || return 1
	f=$PG/$dev@$tag
	pg_cmd "$f" "count 0" && pg_cmd "$f" "clone_skb 0" &&
	pg_cmd "$f" "pkt_size $size" && pg_cmd "$f" "delay 0" &&
	pg_cmd "$f" "xmit_mode queue_xmit" &&
	pg_cmd "$f" "dst 198.51.100.$6" &&
	pg_cmd "$f" "dst_mac $7" &&
	pg_cmd "$f" "skb_priority $((prio))"
}
# pg_add DEV THREAD PKT_SIZE SKB_PRIORITY [MBIT]: one pktgen thread per
# class.  MBIT paces the producer (pktgen `rate`): under TCG on few host
# cores, unpaced producers starve the dequeue path.  Pace each producer
# well above what its class can get so the class stays backlogged; pacing
# below ~100 us per packet makes pktgen spin, so small packets want a low
# weight.
pg_add() {
	local dev=$1 th=$2 size=$3 prio=$4 mbit=${5:-0} f
	[ -e "$PG/kpktgend_$th" ] || { diag "no pktgen thread $th (need more vCPUs)"; return 1; }
	pg_device "$dev" "$th" "$th" "$size" "$prio" $((th + 1)) "02:00:00:00:00:0$th" || return 1
	f=$PG/$dev@$th
	# producers slow down with the qdisc on a slow kernel (rounded up:
	# they must still keep their class backlogged)
	[ "$mbit" != 0 ] && mbit=$(((mbit + ARBT_RATE_DIV - 1) / ARBT_RATE_DIV))
	if [ "$mbit" != 0 ]; then pg_cmd "$f" "rate $mbit" || return 1; fi
}
# pg_prio DEV THREAD SKB_PRIORITY: retarget a running producer
pg_prio() { pg_cmd "$PG/$1@$2" "skb_priority $(($3))"; }
pg_start() {
	(echo start >"$PG/pgctrl") &
	_pg_pid=$!
	sleep 0.5
}
pg_stop() {
	echo stop >"$PG/pgctrl" 2>/dev/null
	[ -n "$_pg_pid" ] && wait "$_pg_pid" 2>/dev/null
	_pg_pid=
	local t
	for t in "$PG"/kpktgend_*; do echo rem_device_all >"$t" 2>/dev/null; done
	true
}

# ---------------------------------------------------------------- stats
# _size_to_bytes: tc prints backlog as 123b, 14Kb, 2Mb
_awk_size='function sz(s,  n) { n = s + 0; if (s ~ /Kb$/) n *= 1024; else if (s ~ /Mb$/) n *= 1048576; else if (s ~ /Gb$/) n *= 1073741824; return n }'

# cls_stats DEV KIND: "ID sent_bytes sent_pkts dropped backlog_bytes backlog_pkts"
# for every `class KIND ID` in `tc -s class show dev DEV`.
cls_stats() {
	tc -s class show dev "$1" | awk -v kind="$2" "$_awk_size"'
	$1 == "class" { cur = ($2 == kind) ? $3 : ""; next }
	cur != "" && $1 == "Sent" { sb[cur] = $2; sp[cur] = $4; d = $7; sub(/,/, "", d); dr[cur] = d; order[++n] = cur }
	cur != "" && $1 == "backlog" { bb[cur] = sz($2); bp[cur] = $3 + 0 }
	END { for (i = 1; i <= n; i++) { c = order[i]; printf "%s %s %s %s %d %d\n", c, sb[c], sp[c], dr[c], bb[c], bp[c] } }'
}
# qd_stats DEV HANDLE: "sent_bytes sent_pkts dropped backlog_bytes qlen" of
# qdisc HANDLE, parsed in bash: drained polls it, and an awk per poll was
# a process start (a size tc prints other than "123b", "14Kb", "2Mb",
# "1Gb" still goes through _awk_size)
qd_stats() {
	local a cur=0 sb='' sp='' dr='' bb=0 bp=0
	while read -r -a a; do
		case ${a[0]-} in
		qdisc) [ "${a[2]-}" = "$2" ] && cur=1 || cur=0 ;;
		Sent) [ $cur = 0 ] || { sb=${a[1]-} sp=${a[3]-} dr=${a[6]-}; dr=${dr/,/}; } ;;
		backlog)
			[ $cur = 0 ] && continue
			_bsize "${a[1]-}" bb
			[[ ${a[2]-} =~ ^[0-9]+ ]] && bp=$((10#${BASH_REMATCH[0]})) || bp=0 ;;
		esac
	done < <(tc -s qdisc show dev "$1")
	printf '%s %s %s %d %d\n' "$sb" "$sp" "$dr" "$bb" "$bp"
}

# dev_tx DEV: the device's transmitted bytes into REPLY, read with a shell
# builtin (no fork): its timestamp is good to microseconds under TCG.
dev_tx() { read -r REPLY <"/sys/class/net/$1/statistics/tx_bytes" 2>/dev/null || REPLY=; }

# pg_offered DEV: "P CLASSID BYTES" per pktgen producer on DEV: the bytes
# it has tried to send (sent + refused by the qdisc, pktgen's own
# counters: the load it offered, upstream of the qdisc) and the class its
# skb_priority names
pg_offered() {
	local f fs=()
	for f in "$PG/$1"@*; do
		[ -r "$f" ] && fs+=("$f")
	done
	[ ${#fs[@]} -gt 0 ] || return 0
	# one awk for all producers: a line per file
	awk 'function out() { printf "P %x:%x %.0f\n", int(p / 65536), p % 65536, n * size; size = p = n = 0 }
	FNR == 1 && NR > 1 { out() }
	$1 == "Params:" { size = $5 } $1 == "skb_priority:" { p = $2 }
	$1 == "pkts-sofar:" { n = $2 + $4 }
	END { out() }' "${fs[@]}"
}

# snap DEV KIND FILE: class snapshot with the device's byte counter and
# the time read just before and just after the dump, and what the pktgen
# producers on DEV have offered.  Under TCG one `tc` run takes 0.1-2 s
# and the kernel answers at an unknown point inside it, so the dump's
# own time is not known; the device counter is (see measure).
snap() {
	local ta tb ba bb s p
	p=$(pg_offered "$1")
	dev_tx "$1"; ba=$REPLY; ta=$EPOCHREALTIME
	s=$(cls_stats "$1" "$2")
	tb=$EPOCHREALTIME; dev_tx "$1"; bb=$REPLY
	{ echo "T ${ta/,/.} ${tb/,/.} ${ba:-x} ${bb:-x}"; echo "$s"; [ -n "$p" ] && echo "$p"; } >"$3"
}

# measure DEV KIND WARMUP WINDOW OUT: after WARMUP s take two snapshots
# WINDOW s apart; OUT gets "ID delta_bytes rate_bps bl1 bl2" per class, a
# line "T elapsed", a line "W wall device_rate_bps" and "O ID bps" per
# class a pktgen producer feeds: the load its producers offered (m_offered).
#
# elapsed is the time between the two dumps as the kernel saw them.  All
# traffic goes through the classes to one dummy device, so the classes'
# byte delta between the dumps is what the device sent between them; the
# device's rate, timed exactly by snap's builtin reads, turns those bytes
# into time: elapsed = class bytes / device rate.  Class rates are then
# exact shares of the device's rate, whatever tc's latency.  Without a
# usable device counter, elapsed falls back to the midpoints of the dumps.
# wall is the time between the device reads (the window as slept).
measure() {
	local dev=$1 kind=$2 warm=$3 win=$4 out=$5
	sleep "$warm"
	in_trace_start "$dev"
	snap "$dev" "$kind" "$out.1"
	sleep "$win"
	snap "$dev" "$kind" "$out.2"
	in_trace_stop "$out.in"
	awk '
	FNR == 1 { if (FILENAME ~ /\.1$/) { ta = $2; tb = $3; ba = $4 } else { tc = $2; td = $3; bc = $4 }; next }
	$1 == "P" { if (FILENAME ~ /\.1$/) o1[$2] += $3; else o2[$2] += $3; next }
	FILENAME ~ /\.1$/ { b1[$1] = $2; bl1[$1] = $6; next }
	{ b2[$1] = $2; bl2[$1] = $6; ids[++n] = $1 }
	END {
		wall = tc - ta
		for (c in o2) printf "O %s %.0f\n", c, (wall > 0 ? (o2[c] - o1[c]) * 8 / wall : 0)
		for (i = 1; i <= n; i++) { c = ids[i]; D += b2[c] - b1[c] }
		if (ba != "x" && bc != "x" && bc > ba && wall > 0 && D > 0) {
			rate = (bc - ba) * 8 / wall; el = D * 8 / rate
		} else {
			rate = 0; el = (tc + td) / 2 - (ta + tb) / 2
		}
		print "T", el
		printf "W %.6f %.0f\n", wall, rate
		for (i = 1; i <= n; i++) { c = ids[i]; d = b2[c] - b1[c]
			printf "%s %d %.0f %d %d\n", c, d, (el > 0 ? d * 8 / el : 0), bl1[c], bl2[c] }
	}' "$out.1" "$out.2" >"$out"
	[ -s "$out.in" ] && in_busy "$out.in" "$(fcalc "0.024 * $ARBT_RATE_DIV")" >>"$out"
}
# in_trace_start DEV / in_trace_stop FILE: the core's net_dev_queue
# events for DEV (every skb handed to the device, before its qdisc)
# between two markers, into FILE (empty where tracefs is not there)
IN_TR=/sys/kernel/tracing/instances/arbt_in
in_trace_start() {
	# not on 6.1: there a later test's function_graph tracer (test_dump_lock)
	# missed most of its callbacks after this instance had come and gone
	# (make test of 2026-11-28; alone it passed); 6.12 and 7.2 are not
	# affected.  Without the trace, busy is 1 and no stall is excused.
	kver_ge 6 2 || return 0
	[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
	[ -d $IN_TR ] || mkdir $IN_TR 2>/dev/null || return 0
	echo 0 >$IN_TR/tracing_on; echo mono >$IN_TR/trace_clock; echo 8192 >$IN_TR/buffer_size_kb; : >$IN_TR/trace
	echo "name == \"$1\"" >$IN_TR/events/net/net_dev_queue/filter &&
		echo 1 >$IN_TR/events/net/net_dev_queue/enable && echo 1 >$IN_TR/tracing_on &&
		echo WSTART >$IN_TR/trace_marker
}
in_trace_stop() {
	: >"$1"
	[ -d $IN_TR ] || return 0
	echo WEND >$IN_TR/trace_marker 2>/dev/null
	echo 0 >$IN_TR/tracing_on
	echo 0 >$IN_TR/events/net/net_dev_queue/enable
	grep -q WSTART $IN_TR/trace && cat $IN_TR/trace >"$1"
	: >$IN_TR/trace
	rmdir $IN_TR 2>/dev/null
	true
}
# in_busy FILE GAP: "G busy idle" from in_trace_stop's FILE: idle, the
# seconds between the markers in which no skb reached the device for
# longer than GAP (less GAP each: what a bucket of GAP s makes up); busy,
# the rest's fraction.  A trace that lost events counts as busy 1.
in_busy() {
	# the header's check in the same awk (it was a grep before)
	awk -v b="$2" '
	function ts(  i) { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) return $i + 0 }
	/entries-in-buffer\/entries-written: / { s = $0; sub(/.*entries-in-buffer\/entries-written: /, "", s)
		if (match(s, /^[0-9]*\/[0-9]* /)) { split(substr(s, 1, RLENGTH - 1), e, "/"); if (e[1] "" == e[2] "") whole = 1 } }
	/tracing_mark_write: WSTART/ { t0 = last = ts(); on = 1; next }
	/tracing_mark_write: WEND/ { t = ts(); if (t - last > b) idle += t - last - b; span = t - t0; exit }
	on && /net_dev_queue:/ { t = ts(); if (t - last > b) idle += t - last - b; last = t }
	END { if (!whole) { print "G 1 0"; exit } printf "G %.4f %.3f\n", (span > 0 ? 1 - idle / span : 1), idle }' "$1"
}
# the accessors read measure's small file with builtins (an awk each was
# a process start per value)
m_busy() { local b; b=$(m_field "$1" G 2); b=${b##*$'\n'}; echo "${b:-1}"; }
m_elapsed() { m_field "$1" T 2; }
m_wall() { m_field "$1" W 2; }
m_field() { # file id col: col of every line whose first word is id
	local a
	while read -r -a a; do
		[ "${a[0]-}" = "$2" ] && echo "${a[$3 - 1]-}"
	done <"$1"
}
# m_offered FILE [ID]: bit/s the pktgen producers feeding class ID (all of
# them without ID) offered in the window, by their own counters; empty
# when no producer was recorded
m_offered() {
	awk -v c="${2:-}" '$1 == "O" && (c == "" || $2 == c) { s += $3; n++ } END { if (n) printf "%.0f\n", s }' "$1"
}
m_bytes() { m_field "$1" "$2" 2; }
m_rate() { m_field "$1" "$2" 3; }

# m_table FILE "ID=WEIGHT ..." : diag table of configured vs measured shares
m_table() {
	local f=$1 spec=$2
	awk -v spec="$spec" '
	$1 == "T" { el = $2; next } $1 == "W" { wall = $2; dr = $3; next } $1 == "O" { off = off sprintf(" %s %.0f", $2, $3); next }
	$1 !~ /:/ { next } { d[$1] = $2; r[$1] = $3; b1[$1] = $4; b2[$1] = $5 }
	END {
		n = split(spec, e, " "); for (i = 1; i <= n; i++) { split(e[i], kv, "="); id[i] = kv[1]; w[i] = kv[2]; W += kv[2]; D += d[kv[1]] }
		printf "%-8s %6s %9s %9s %8s %11s %10s\n", "class", "weight", "cfg%", "meas%", "relerr%", "rate_bps", "backlog"
		for (i = 1; i <= n; i++) { c = id[i]; cs = w[i] / W; ms = D ? d[c] / D : 0
			printf "%-8s %6s %9.3f %9.3f %8.3f %11.0f %4dp/%dp\n", c, w[i], 100 * cs, 100 * ms, cs ? 100 * (ms - cs) / cs : 0, r[c], b1[c], b2[c] }
		printf "window %.3f s, %d bytes; %.3f s between the device reads, device %.0f bit/s\n", el, D, wall, dr
		if (off != "") printf "offered by the pktgen producers (their counters), bit/s:%s\n", off
	}' "$f"
}
# m_shares_ok FILE "ID=WEIGHT ..." TOL: every class's byte share of the
# listed classes within TOL (relative) of its weight share.
m_shares_ok() {
	awk -v spec="$2" -v tol="$3" '
	$1 !~ /:/ { next } { d[$1] = $2 }
	END {
		n = split(spec, e, " "); for (i = 1; i <= n; i++) { split(e[i], kv, "="); id[i] = kv[1]; w[i] = kv[2]; W += kv[2]; D += d[kv[1]] }
		if (D <= 0) { print "# no bytes sent in window"; exit 1 }
		bad = 0
		for (i = 1; i <= n; i++) { cs = w[i] / W; ms = d[id[i]] / D; err = (ms - cs) / cs
			if (err > tol || -err > tol) { printf "# %s: share %.4f, want %.4f (rel err %.2f%% > %.2f%%)\n", id[i], ms, cs, 100 * err, 100 * tol; bad = 1 } }
		exit bad
	}' "$1"
}
# shares_check DESC FILE "ID=WEIGHT ..." TOL: m_shares_ok as a TAP
# result.  Off by more than TOL, a skip only where a class's pktgen
# producers, by their own counters (upstream of the qdisc: sent plus
# refused), offered less than the class's weight share of what the
# device sent in the window (W's rate): such a class cannot have stayed
# backlogged, and a work-conserving table gives its turns to the others.
# A qdisc that had every class's load and shared it wrongly fails.
shares_check() {
	local desc=$1 f=$2 spec=$3 tol=$4 short
	if m_shares_ok "$f" "$spec" "$tol"; then
		tap_ok "$desc"
		return
	fi
	short=$(m_short "$f" "$spec")
	if [ -n "$short" ]; then
		tap_skip "$desc" "the guest could not make the load (pktgen's counters): $short"
	else
		tap_fail "$desc"
	fi
}
# m_short FILE "ID=WEIGHT ...": the classes whose pktgen producers, by
# their own counters (O lines), offered less than the class's weight
# share of what the device sent in the window (W), each with both rates;
# empty when every class had its load
m_short() {
	awk -v spec="$2" '
	$1 == "W" { dr = $3; next } $1 == "O" { off[$2] += $3; has[$2] = 1 }
	END {
		n = split(spec, e, " "); for (i = 1; i <= n; i++) { split(e[i], kv, "="); id[i] = kv[1]; w[i] = kv[2]; W += kv[2] }
		for (i = 1; i <= n; i++) { c = id[i]; want = dr * w[i] / W
			if (has[c] && off[c] < want) printf "%s%s offered %.0f bit/s of its %.0f", (k++ ? "; " : ""), c, off[c], want }
	}' "$1"
}
# m_backlogged FILE ID...: every class had backlog at both snapshots
m_backlogged() {
	local f=$1 c bad=0; shift
	for c in "$@"; do
		local b1 b2
		b1=$(m_field "$f" "$c" 4); b2=$(m_field "$f" "$c" 5)
		if [ "${b1:-0}" -le 0 ] || [ "${b2:-0}" -le 0 ]; then
			diag "class $c not backlogged (backlog ${b1:-?}p then ${b2:-?}p)"
			bad=1
		fi
	done
	return $bad
}
# rate_within RATE_BPS WANT_BPS TOL
rate_within() {
	if fcmp "($1 - $2) / $2 <= $3 && ($2 - $1) / $2 <= $3"; then return 0; fi
	diag "rate $1 bit/s, want $2 bit/s +-$(fcalc "$3 * 100")%"
	return 1
}

# rate_check DESC RATE WANT TOL FILE ASKED [ID]: RATE (of class ID, or
# of the whole qdisc) within WANT +-TOL, WANT taken over the part of the
# window in which skbs reached the device (m_busy: the guest was
# scheduled; a bucket cannot make up the rest).  A low rate is a skip only when
# the pktgen producers feeding it offered less than WANT x (1 - TOL) in
# the window by their own counters (the guest could not make the load);
# a qdisc that had the load and sent less fails, and so does a rate above
# WANT + TOL.  Without ID, the class is the one whose measured rate RATE
# is (the callers pass m_rate's value), else the whole qdisc.
rate_check() {
	local desc=$1 rate=$2 want=$3 tol=$4 f=$5 asked=$6 id=${7-} off busy
	if [ $# -lt 7 ]; then
		id=$(awk -v r="$rate" '$1 ~ /:/ && $3 == r { print $1; n++ } END { if (n != 1) print "" }' "$f" | tail -n1)
	fi
	# the time no producer ran (net_dev_queue gaps: the guest was not
	# scheduled) cannot be sent in: WANT counts for the rest
	busy=$(m_busy "$f")
	if rate_within "$rate" "$want" "$tol" ||
		fcmp "$rate <= $want * (1 + $tol) && $rate >= $want * $busy * (1 - $tol)"; then
		tap_ok "$desc"
		[ "$busy" = 1 ] || diag "${id:-qdisc}: $rate bit/s; no skb reached the device for $(awk '$1 == "G" { print $3 }' "$f") s of the window (busy $busy)"
		return
	fi
	off=$(m_offered "$f" "$id")
	diag "${id:-qdisc}: $rate bit/s in a ${asked} s window that took $(m_wall "$f") s, busy $busy; its producers offered ${off:-?} bit/s"
	if [ -n "$off" ] && fcmp "$rate <= $want && $off < $want * (1 - $tol)"; then
		tap_skip "$desc" "the pktgen producers of ${id:-the qdisc} offered only $off bit/s (their own counters), less than $want: the guest could not make the load"
	else
		tap_fail "$desc"
	fi
}

# drained DEV HANDLE KIND TIMEOUT: wait until qdisc backlog and qlen are 0
drained() {
	local s end=$((SECONDS + $4 + 1))
	# a deadline in seconds, not a count of tries: a tc run takes up to
	# 0.4 s under TCG, and 10 tries a second made a 60 s wait last 600 s
	while :; do
		s=$(qd_stats "$1" "$2")
		read -r _ _ _ bb bp <<<"$s"
		if [ "$bb" = 0 ] && [ "$bp" = 0 ]; then return 0; fi
		[ $SECONDS -lt $end ] || break
		nap 0.1
	done
	diag "qdisc $2 not drained after $4 s: $s"
	return 1
}
# _bsize SIZE VAR: tc's backlog size ("123b", "14Kb", "2Mb", "1Gb") in
# bytes, into the variable VAR, with builtins (another form still goes
# through _awk_size); qd_stats and qc_stats parse with it
_bsize() {
	local m=1
	if [[ $1 =~ ^([0-9]+)(b|Kb|Mb|Gb)$ ]]; then
		case ${BASH_REMATCH[2]} in
		Kb) m=1024 ;; Mb) m=1048576 ;; Gb) m=1073741824 ;;
		esac
		printf -v "$2" '%d' $((10#${BASH_REMATCH[1]} * m))
	else
		printf -v "$2" '%d' "$(awk "$_awk_size"' BEGIN { printf "%d", sz(ARGV[1]) }' "$1")"
	fi
}
# qc_stats DEV HANDLE KIND: qdisc HANDLE's counters and the sum of its
# KIND classes', from one tc process (a batch of both dumps) parsed with
# builtins: QS and CS, each "sent_bytes sent_pkts backlog_bytes
# backlog_pkts" (QS's first two empty when there is no such qdisc).
# sums_match and settled poll it: under KASAN in TCG a process start
# costs a third of a second or more, and they were four per poll.
qc_stats() {
	local a cur='' sz qb='' qp='' qbb=0 qbp=0 cb=0 cp=0 cbb=0 cbp=0
	while read -r -a a; do
		case ${a[0]-} in
		qdisc) [ "${a[2]-}" = "$2" ] && cur=q || cur='' ;;
		class) [ "${a[1]-}" = "$3" ] && cur=c || cur='' ;;
		Sent)
			case $cur in
			q) qb=${a[1]-} qp=${a[3]-} ;;
			c) cb=$((cb + ${a[1]:-0})) cp=$((cp + ${a[3]:-0})) ;;
			esac ;;
		backlog)
			[ -n "$cur" ] || continue
			_bsize "${a[1]-}" sz
			[[ ${a[2]-} =~ ^[0-9]+ ]] || BASH_REMATCH[0]=0
			case $cur in
			q) qbb=$sz qbp=$((10#${BASH_REMATCH[0]})) ;;
			c) cbb=$((cbb + sz)) cbp=$((cbp + 10#${BASH_REMATCH[0]})) ;;
			esac ;;
		esac
	done < <(tc -s -batch - <<<"qdisc show dev $1"$'\n'"class show dev $1")
	QS="$qb $qp $qbb $qbp" CS="$cb $cp $cbb $cbp"
}
_sums_diag() {
	local q c
	read -r -a q <<<"$QS"
	read -r -a c <<<"$CS"
	diag "qdisc $1: sent ${q[0]-}B ${q[1]-}p backlog ${q[2]-}B ${q[3]-}p; classes sum: sent ${c[0]}B ${c[1]}p backlog ${c[2]}B ${c[3]}p"
}
# sums_match DEV HANDLE KIND: per-class Sent bytes/pkts and backlog sum to the qdisc's
sums_match() {
	qc_stats "$1" "$2" "$3"
	[ "$QS" = "$CS" ] && return 0
	_sums_diag "$2"
	return 1
}
# settled DEV HANDLE KIND SECONDS: drained (qdisc HANDLE's backlog 0 bytes
# and 0 packets, polled for up to SECONDS) and then sums_match, from one
# tc process per poll: 1 when it did not drain, 2 when the classes'
# counters do not sum to the qdisc's
settled() {
	local end=$((SECONDS + $4 + 1))
	while :; do
		qc_stats "$1" "$2" "$3"
		[[ $QS == *" 0 0" && ${QS%% *} != "" ]] && break
		if [ $SECONDS -ge "$end" ]; then
			diag "qdisc $2 not drained after $4 s (sent B, p, backlog B, p): $QS"
			return 1
		fi
		nap 0.1
	done
	[ "$QS" = "$CS" ] && return 0
	_sums_diag "$2"
	return 2
}

# ---------------------------------------------------------------- arbtable
# arb_base [QDISC OPTIONS...]: dummy d0 (txqueuelen 1000: child pfifo
# limits come from it), root arbtable 1: manual with the given options.
arb_base() {
	dummy_up $DEV || return 1
	run tc qdisc add dev $DEV root handle 1: arbtable "$@" ||
		{ diag "tc qdisc add dev $DEV root handle 1: arbtable $*: rc $RUN_RC: $RUN_ERR"; return 1; }
}
# arb_class MINOR [CLASS OPTIONS...]
arb_class() {
	local m=$1; shift
	run tc class add dev $DEV parent 1: classid 1:$m arbtable "$@" ||
		{ diag "tc class add dev $DEV parent 1: classid 1:$m arbtable $*: rc $RUN_RC: $RUN_ERR"; return 1; }
}
# arb_change QDISC OPTIONS...: tc qdisc change on the root
arb_change() {
	run tc qdisc change dev $DEV root handle 1: arbtable "$@" ||
		{ diag "tc qdisc change dev $DEV root handle 1: arbtable $*: rc $RUN_RC: $RUN_ERR"; return 1; }
}
# arb_traffic "MINOR:SIZE:MBIT ...": one paced pktgen thread per class,
# thread i feeds the i-th class through skb->priority = 1:MINOR.
arb_traffic() {
	local th=0 e m s r
	pg_reset || return 1
	for e in $1; do
		IFS=: read -r m s r <<<"$e"
		pg_add $DEV $th "$s" "0x1$(printf '%04x' $((0x$m)))" "$r" || return 1
		th=$((th + 1))
	done
}
# arb_deep MINOR...: a 500 KB bfifo under each class instead of the
# default pfifo's 1000 packets.  1000 packets of 64 bytes last 0.26-0.45 s
# at the small-packet class's share in test_deficit, test_strict,
# test_ceil and test_iba, and its one pktgen producer, on one vCPU of
# four that TCG runs in one host thread, was stalled longer than that:
# make test at 0ca2351 failed test_strict's shares with 1:10 at 1 packet
# queued at the window's start and 788 at its end, its producer
# offering 3.0 of its 1.4 Mbit/s over the window.  500 KB is 2-3 s of
# it (test_arbsim's classes the same way).
arb_deep() {
	local m
	for m in "$@"; do
		run tc qdisc replace dev $DEV parent "1:$m" bfifo limit 500000 ||
			{ diag "bfifo under 1:$m: $RUN_ERR"; return 1; }
	done
}
# qdisc/class configuration as tc prints it (for "unchanged" checks)
arb_state() {
	printf 'qdisc show dev %s\nclass show dev %s\n' $DEV $DEV | tc -d -force -batch -
}
# arb_qdisc_line: the root arbtable's options as one line, without the
# "qdisc arbtable 1: root refcnt N" prefix
arb_qdisc_opts() {
	_arb_opts "$(tc qdisc show dev $DEV)" qdisc 'arbtable 1:' \
		'^qdisc arbtable 1: root (refcnt [0-9]+ )?'
}
# arb_class_opts MINOR: the class's options without "class arbtable 1:M root|parent X leaf H:"
arb_class_opts() {
	_arb_opts "$(tc class show dev $DEV classid 1:$1)" class 'arbtable' \
		'^class arbtable [0-9a-f]+:[0-9a-f]+ (root |parent [0-9a-f]*:[0-9a-f]* )?(leaf [0-9a-f]+: )?'
}
# _arb_opts TEXT KIND WORDS PREFIX: TEXT's lines from each "KIND WORDS"
# line to the next KIND line, joined, PREFIX (an ERE) removed, blanks
# squeezed (in bash: an awk and a sed per call were two process starts)
_arb_opts() {
	local l on=0 s='' w
	while IFS= read -r l; do
		if [[ $l == "$2 "* || $l == "$2" ]]; then
			[[ $l == "$2 $3 "* || $l == "$2 $3" ]] && on=1 || on=0
		fi
		[ $on = 0 ] || s+="$l "
	done <<<"$1"
	[[ $s =~ $4 ]] && s=${s:${#BASH_REMATCH[0]}}
	read -r -a w <<<"$s"
	echo "${w[*]}"
}
# traffic_checks_after_stop: drained, class sums equal the qdisc's
arb_after_stop() { # desc-prefix
	tap_check "$1: qdisc drains to backlog 0, qlen 0 after traffic stops" drained $DEV 1: arbtable 20
	tap_check "$1: per-class Sent bytes/pkts and backlog sum to the qdisc's" sums_match $DEV 1: arbtable
}

# bad DESC REGEX CMD...: CMD fails; with a REGEX, stderr carries an extack
# ("Error: ...") matching it (case-insensitive); with "tc:REGEX", tc itself
# refused (its own words matching, no extack: nothing reached the kernel);
# the configuration as `tc -d qdisc/class show` prints it is unchanged.
bad() {
	local desc=$1 re=$2 before after why=
	shift 2
	before=$(arb_state)
	run "$@"
	after=$(arb_state)
	if [ "$RUN_RC" = 0 ]; then
		why="command succeeded"
	elif [ "$re" = "-" ]; then
		:
	elif [ "$re" = "EEXIST" ]; then
		lines_match 'Error: |File exists' "$RUN_ERR" || why="no extack/EEXIST message"
	elif [ "${re#tc:}" != "$re" ]; then
		if [[ $'\n'$RUN_ERR == *$'\nError: '* ]]; then
			why="reached the kernel (want tc's own refusal matching /${re#tc:}/)"
		elif ! lines_match "${re#tc:}" "$RUN_ERR"; then
			why="tc's refusal does not match /${re#tc:}/"
		fi
	elif [[ $'\n'$RUN_ERR != *$'\nError: '* ]]; then
		why="no extack message (want 'Error: ...' matching /$re/)"
	elif ! lines_match -p 'Error: ' "$re" "$RUN_ERR"; then
		why="extack does not match /$re/"
	fi
	if [ "$before" != "$after" ]; then
		why="${why:+$why; }configuration changed"
		diag "before:"; diag "$before"; diag "after:"; diag "$after"
	fi
	if [ -z "$why" ]; then
		tap_ok "bad input: $desc (rejected: ${RUN_ERR%%$'\n'*})"
	else
		diag "command: $*"
		diag "exit $RUN_RC, stderr: ${RUN_ERR:-<empty>}"
		tap_fail "bad input: $desc: $why"
	fi
}

# the kernel log's windows (klog_read, klog_splats), for tap_begin/tap_end
# shellcheck source=lib_debug.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_debug.sh"
