#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Host side: put upstream's tc-testing (tdc.py and its plugins) from Debian's
# linux-source-6.12 into $ARBT_TDC_CACHE/tc-testing-6.12, where
# selftests/arbtable/test_tdc.sh finds it inside the VM.  The guest sees
# the host filesystem read-only, except that virtme-ng mounts an empty
# tmpfs over /var/cache: so this cache lives in /var/lib/arbtable, not in
# /var/cache/arbtable.  Reuses an unpacked $CACHE/linux-source-6.12
# (scripts/intree-check.sh), else extracts only tc-testing from the
# tarball (~20 s: xz has to be read through).  Idempotent.
set -eu
CACHE=${CACHE:-/var/cache/arbtable}
ARBT_TDC_CACHE=${ARBT_TDC_CACHE:-/var/lib/arbtable}
DST=$ARBT_TDC_CACHE/tc-testing-6.12
SUB=tools/testing/selftests/tc-testing
[ -f "$DST/.arbtable-ready" ] && { echo "tdc-prepare: $DST ready"; exit 0; }
mkdir -p "$ARBT_TDC_CACHE"
rm -rf "$DST.tmp"
if [ -f "$CACHE/linux-source-6.12/.arbtable-unpacked" ]; then
	cp -a "$CACHE/linux-source-6.12/$SUB" "$DST.tmp"
else
	tarball=$(ls /usr/src/linux-source-6.12.tar.* 2>/dev/null | head -n1)
	[ -n "$tarball" ] || { echo "tdc-prepare: no /usr/src/linux-source-6.12.tar.* (apt-get install -t bookworm-backports linux-source-6.12)" >&2; exit 1; }
	mkdir "$DST.tmp"
	tar -xf "$tarball" -C "$DST.tmp" --strip-components=5 "linux-source-6.12/$SUB"
fi
[ -f "$DST.tmp/tdc.py" ] || { echo "tdc-prepare: tdc.py missing after extraction" >&2; exit 1; }
rm -rf "$DST"
mv "$DST.tmp" "$DST"
touch "$DST/.arbtable-ready"
echo "tdc-prepare: $DST ready"
