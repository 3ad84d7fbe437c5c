#!/usr/bin/env bash
# Build, once, the debug kernel `make check-debug` boots: Debian's
# linux-source-6.12 configured with virtme-ng's defconfig plus
# scripts/debug-kernel.config (KASAN, lockdep, atomic-sleep checks,
# kmemleak, UBSAN), cached outside the tree under
# $ARBT_DEBUG_KERNEL_CACHE/<key> (default /var/lib/arbtable/debug-kernel),
# where the key hashes the fragment and the source package version.  Not
# under /var/cache: virtme-init mounts a tmpfs there, and the guest must
# see the tree's modules (.virtme_mods) to load dummy, pktgen, sch_*.  Prints the tree's path on the last line.
#
#   scripts/debug-kernel.sh [--check]   --check: only say whether it is cached
#                                       (exit 0 and print the path, or exit 1)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DKCACHE=${ARBT_DEBUG_KERNEL_CACHE:-/var/lib/arbtable/debug-kernel}
FRAG=$ROOT/scripts/debug-kernel.config
TARBALL=$(ls /usr/src/linux-source-6.12*.tar.xz 2>/dev/null | sort -V | tail -n1 || true)
say() { echo "[debug-kernel] $*" >&2; }

[ -n "$TARBALL" ] || { say "no /usr/src/linux-source-6.12*.tar.xz (scripts/setup.sh installs it)"; exit 1; }
ver=$(dpkg-query -W -f '${Version}' linux-source-6.12 2>/dev/null || stat -c %Y "$TARBALL")
key=$( { cat "$FRAG"; echo "$ver"; } | sha256sum | cut -c1-16)
DIR=$DKCACHE/$key
if [ -f "$DIR/.built" ]; then
	echo "$DIR/src"
	exit 0
fi
[ "${1:-}" = --check ] && { say "not built (would be $DIR)"; exit 1; }

for t in flex bison bc pahole cpio; do
	command -v $t >/dev/null || { say "missing $t (scripts/setup.sh installs the debug-kernel build tools)"; exit 1; }
done
t0=$(date +%s)
mkdir -p "$DIR"
if [ ! -f "$DIR/.extracted" ]; then
	say "extracting $TARBALL"
	rm -rf "$DIR/src" "$DIR/tmp"
	mkdir -p "$DIR/tmp"
	tar -C "$DIR/tmp" -xf "$TARBALL"
	mv "$DIR"/tmp/linux-source-6.12* "$DIR/src"
	rmdir "$DIR/tmp"
	touch "$DIR/.extracted"
fi
cd "$DIR/src"
say "configuring (virtme-ng defconfig + $(basename "$FRAG"))"
vng --kconfig --config "$FRAG" >"$DIR/config.log" 2>&1 || { tail -n 20 "$DIR/config.log"; exit 1; }
# The fragment only counts if it took: a dependency can silently drop an
# option in olddefconfig.
miss=
for o in KASAN PROVE_LOCKING DEBUG_ATOMIC_SLEEP DEBUG_KMEMLEAK UBSAN NET_SCHED FTRACE MODULE_UNLOAD; do
	grep -q "^CONFIG_$o=y" .config || miss+=" $o"
done
for o in NET_SCH_ETS NET_SCH_NETEM NET_SCH_FQ_CODEL DUMMY VETH NET_PKTGEN; do
	grep -qE "^CONFIG_$o=(y|m)" .config || miss+=" $o"
done
[ -z "$miss" ] || { say "options not set after configuration:$miss"; exit 1; }
say "building in $DIR/src ($(nproc) jobs; ~25-40 min cold on 2 cores)"
nice -n 5 make -j"$(nproc)" >"$DIR/build.log" 2>&1 || { tail -n 40 "$DIR/build.log"; exit 1; }
t1=$(date +%s)
echo "$((t1 - t0))" >"$DIR/build-seconds"
touch "$DIR/.built"
say "built in $((t1 - t0)) s: $(make -s kernelrelease)"
echo "$DIR/src"
