#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Drop sch_arbtable into a kernel source tree's net/sched the way a patch
# for upstream would: sources in net/sched/, the uapi header in
# include/uapi/linux/, the tracepoints in include/trace/events/, the Kconfig entry inside "if NET_SCHED" (before
# "menuconfig NET_SCH_DEFAULT", after the last qdisc) and
# kernel/Makefile.intree appended to net/sched/Makefile.  Kconfig and
# Makefile are restored from saved originals first, so it can run again
# on the same tree.  Files whose content did not change keep their
# timestamps, so make rebuilds only what changed.
#
#   scripts/intree-dropin.sh SRC_TREE
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SRC=$1
sched=$SRC/net/sched
[ -f "$sched/Kconfig" ] || { echo "intree-dropin: $sched/Kconfig not found" >&2; exit 1; }
# copy only when different (cp -u compares dates, not content)
put() { cmp -s "$1" "$2" || cp "$1" "$2"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in Kconfig Makefile; do
	[ -f "$sched/$f.arbtable-orig" ] || cp "$sched/$f" "$sched/$f.arbtable-orig"
done
# sources no longer in kernel/ (sch_arbtable.c became the composite
# object's arbtable_qdisc.c)
for f in "$sched"/arbtable_* "$sched"/sch_arbtable.c; do
	[ -e "$f" ] || continue
	[ -e "$ROOT/kernel/$(basename "$f")" ] || rm -f "$f"
done
for f in "$ROOT"/kernel/*.c "$ROOT"/kernel/*.h; do
	put "$f" "$sched/$(basename "$f")"
done
put "$ROOT/include/uapi/linux/pkt_sched_arbtable.h" "$SRC/include/uapi/linux/pkt_sched_arbtable.h"
put "$ROOT/include/trace/events/arbtable.h" "$SRC/include/trace/events/arbtable.h"
awk -v entry="$ROOT/Kconfig" '
	/^menuconfig NET_SCH_DEFAULT/ && !done {
		on = 0
		while ((getline l < entry) > 0) { if (l ~ /^config /) on = 1; if (on) print l }
		print ""; done = 1
	}
	{ print }
	END { if (!done) exit 1 }' "$sched/Kconfig.arbtable-orig" >"$tmp/Kconfig"
put "$tmp/Kconfig" "$sched/Kconfig"
{ cat "$sched/Makefile.arbtable-orig"; echo; grep -v '^#' "$ROOT/kernel/Makefile.intree"; } >"$tmp/Makefile"
put "$tmp/Makefile" "$sched/Makefile"
