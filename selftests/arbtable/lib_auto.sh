#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Helpers for the auto-mode VM selftests (test_auto_*.sh): a quiet dummy
# device, class and layout views parsed from `tc -s class show`, many
# paced pktgen producers per thread, and stats sums that count the
# internal unclassified queue.  Source after lib.sh.

# auto_dev DEV [TXQLEN]: dummy without IPv6 (no stray unclassified
# packets); child fifos of TXQLEN packets (default 1000; a short queue
# makes the drain after traffic short)
auto_dev() {
	ip link del "$1" 2>/dev/null
	ip link add "$1" type dummy || return 1
	sysctl -qw "net.ipv6.conf.$1.disable_ipv6=1" 2>/dev/null
	ip link set "$1" txqueuelen "${2:-1000}" up
}
# tc time ("104us", "1.2ms", "1e+03us", "0ns", "1.5s") to ns
_awk_t2ns='function t2ns(s,  n, u) { n = s + 0; u = s; sub(/^[0-9.eE+-]+/, "", u)
	if (u == "s") return n * 1e9; if (u == "ms") return n * 1e6; if (u == "us") return n * 1e3; return n }'
# auto_cls [DEV]: one line per class, columns
#  1 id  2 hcount  3 hlist  4 hweight  5 lcount  6 llist  7 lweight
#  8 distance  9 gbound_ns  10 cbound_ns  11 max_hol_ns  12 sent_bytes
#  13 backlog_pkts
auto_cls() { tc -s class show dev "${1:-$DEV}" | awk "$_awk_auto_cls"; }
# its parser; qdisc lines before the first class are ignored (auto_layout
# feeds it a dump of both)
# shellcheck disable=SC2016 # awk's $1
_awk_auto_cls=$_awk_t2ns'
	$1 == "class" && $2 == "arbtable" { c = $3; ids[++n] = c; d[c] = 0; gb[c] = 0; cb[c] = 0; hol[c] = 0
		hc[c] = 0; hl[c] = "-"; hw[c] = 0; lc[c] = 0; ll[c] = "-"; lw[c] = 0; next }
	$1 == "Sent" { sb[c] = $2 }
	$1 == "backlog" { bp[c] = $3 + 0 }
	$1 == "slots:" { hc[c] = $3; hl[c] = $4; hw[c] = $6; lc[c] = $8; ll[c] = $9; lw[c] = $11
		gsub(/[][]/, "", hl[c]); gsub(/[][]/, "", ll[c]) }
	$1 == "distance" { d[c] = $2 }
	$1 == "bound:" { for (i = 2; i < NF; i++) { if ($i == "guaranteed") gb[c] = t2ns($(i + 1))
		if ($i == "current") cb[c] = t2ns($(i + 1)); if ($i == "max_hol_wait") hol[c] = t2ns($(i + 1)) } }
	END { for (i = 1; i <= n; i++) { c = ids[i]
		printf "%s %d %s %d %d %s %d %d %.0f %.0f %.0f %s %d\n", c, hc[c], hl[c], hw[c], lc[c], ll[c], lw[c], d[c], gb[c], cb[c], hol[c], sb[c], bp[c] } }'
# acl_field ID COLUMN: one column of auto_cls for class ID
acl_field() {
	local a
	while read -r -a a; do
		[ "${a[0]}" = "$1" ] && echo "${a[$2 - 1]}"
	done < <(auto_cls)
}
# occupancy "U V" (HIGH, LOW slots in use) from the qdisc xstats (parsed
# with bash's regex: a sed per call was a process start)
auto_occ() {
	local o
	o=$(tc -s qdisc show dev "${1:-$DEV}")
	[[ $o =~ occupancy:\ high\ ([0-9]+)/64\ low\ ([0-9]+)/64 ]] &&
		echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
}
auto_swaps() {
	local o
	o=$(tc -s qdisc show dev "${1:-$DEV}")
	[[ $o =~ \ swaps\ ([0-9]+) ]] && echo "${BASH_REMATCH[1]}"
}
# auto_layout [DEV]: every class's slots are 64/d slots exactly d apart
# (cyclically) for its effective distance d, a power of two; no slot has
# two owners; the occupancy in the qdisc xstats equals the slots the
# classes hold.  Prints what is wrong; sets FREE_HIGH to the free HIGH
# slots (comma list, "-" when none).
auto_layout() {
	local d=${1:-$DEV} dump occ='' out rc l
	# one tc for the qdisc's occupancy and the classes (auto_occ, auto_cls)
	dump=$(printf 'qdisc show dev %s\nclass show dev %s\n' "$d" "$d" | tc -s -batch -)
	[[ $dump =~ occupancy:\ high\ ([0-9]+)/64\ low\ ([0-9]+)/64 ]] &&
		occ="${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
	out=$(awk "$_awk_auto_cls" <<<"$dump" | awk -v occ="$occ" '
	function chk(c, tbl, cnt, list, d,   k, s, i, gap) {
		if (cnt == 0) return
		if (d != 1 && d != 2 && d != 4 && d != 8 && d != 16 && d != 32 && d != 64) { printf "# %s: distance %d not a power of two 1..64\n", c, d; bad = 1; return }
		k = split(list, s, ",")
		if (k != cnt || k * d != 64) { printf "# %s: %s table holds %d slots (%s), want 64/%d\n", c, tbl, k, list, d; bad = 1 }
		for (i = 1; i <= k; i++) {
			gap = (i < k ? s[i + 1] : s[1] + 64) - s[i]
			if (k > 1 && gap != d) { printf "# %s: %s slots %s not %d apart\n", c, tbl, list, d; bad = 1; break }
			if ((tbl, s[i]) in own) { printf "# %s slot %d owned by %s and %s\n", tbl, s[i], own[tbl, s[i]], c; bad = 1 }
			own[tbl, s[i]] = c
		}
	}
	{ chk($1, "high", $2, $3, $8); chk($1, "low", $5, $6, $8); H += $2; L += $5 }
	END { if (occ != H " " L) { printf "# occupancy %s, classes hold %d %d\n", occ, H, L; bad = 1 }
		f = ""; for (i = 0; i < 64; i++) if (!(("high", i) in own)) f = f (f == "" ? "" : ",") i
		print "FREE " (f == "" ? "-" : f); exit bad }')
	rc=$?
	FREE_HIGH=
	while IFS= read -r l; do
		if [[ $l == FREE\ * ]]; then FREE_HIGH=${l#FREE }; else printf '%s\n' "$l"; fi
	done <<<"$out"
	return $rc
}
# pg_add_on DEV THREAD TAG SIZE PRIO PPS: like lib.sh's pg_add, but any
# number of producers per pktgen thread (device DEV@TAG on kpktgend_THREAD),
# paced in packets/s (pktgen ratep)
pg_add_on() {
	local dev=$1 th=$2 tag=$3 size=$4 prio=$5 pps=$6
	pg_device "$dev" "$th" "$tag" "$size" "$prio" $((tag % 250 + 1)) 02:00:00:00:00:01 &&
		pg_cmd "$PG/$dev@$tag" "ratep $pps"
}
# auto_traffic "MINOR:SIZE:PPS ...": producers spread over the pktgen threads
auto_traffic() {
	local nth i=0 e m s r
	pg_reset || return 1
	nth=$(ls -d "$PG"/kpktgend_* | wc -l)
	for e in $1; do
		IFS=: read -r m s r <<<"$e"
		pg_add_on $DEV $((i % nth)) $((i + 1)) "$s" "0x1$(printf '%04x' $((0x$m)))" "$r" || return 1
		i=$((i + 1))
	done
}
# sums_ok: per-class Sent pkts + unclassified pkts = the qdisc's Sent
# pkts; bytes equal when nothing was unclassified (the unclassified
# queue's bytes are not exported); backlogs equal.  lib.sh's sums_match
# ignores the unclassified queue.
sums_ok() {
	local qb qp qbb qbp cb cp cbb cbp u
	read -r qb qp _ qbb qbp <<<"$(qd_stats $DEV 1:)"
	read -r cb cp cbb cbp <<<"$(cls_stats $DEV arbtable | awk '{ b += $2; p += $3; bb += $5; bp += $6 } END { printf "%d %d %d %d", b, p, bb, bp }')"
	u=$(tc -s qdisc show dev $DEV | sed -nE 's/.*unclassified: pkts ([0-9]+).*/\1/p')
	diag "qdisc sent ${qb}B ${qp}p backlog ${qbb}B ${qbp}p; classes sent ${cb}B ${cp}p backlog ${cbb}B ${cbp}p; unclassified ${u}p"
	[ "$qp" = $((cp + u)) ] && [ "$qbb" = "$cbb" ] && [ "$qbp" = "$cbp" ] &&
		{ [ "$u" = 0 ] && [ "$qb" = "$cb" ] || { [ "$u" != 0 ] && [ "$qb" -ge "$cb" ]; }; }
}
