#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The sanitizer kernel (issue 15; 7.2 since issue 27, the newest kernel
# Debian carries, so that its API and the sanitizers are tested together;
# ARBT_SAN_KSRC=6.12 builds the earlier one): Debian's linux-source-7.2 with
# sch_arbtable dropped into net/sched (scripts/intree-dropin.sh), configured
# as `make allnoconfig` + scripts/sanitizer-kernel.config (KASAN, lockdep,
# atomic-sleep checks, kmemleak, UBSAN, debug objects, failslab and
# fail_page_alloc, and only the drivers, filesystems, qdiscs and
# classifiers the suite uses), built once and cached outside the clone
# under $ARBT_SANITIZER_CACHE/<key> (default /var/lib/arbtable/sanitizer),
# the key hashing the config fragment and the source package version.
# Not under /var/cache, /var/tmp, /tmp or /run: virtme-init mounts a
# tmpfs on each, and the guest must see the tree's modules (.virtme_mods)
# and selftests (refused below, before an hour's build).
#
# Every run drops the current sources in again and rebuilds
# net/sched/sch_arbtable.ko in the tree (seconds; files whose content is
# unchanged keep their timestamps), and installs selftests/arbtable as
# tools/testing/selftests/arbtable, so a kernel developer's
#   vng --run <tree> -- make -C tools/testing/selftests TARGETS=arbtable run_tests
# runs the suite.  Prints the tree's path on the last line.
#
# ARBT_SAN_VARIANT=kcsan (issue 27) builds the KCSAN kernel instead: the
# base of sanitizer-kernel.config (everything before its "# --- the
# checkers" line) followed by scripts/kcsan-kernel.config, cached under
# $ARBT_SANITIZER_CACHE/kcsan-<key> (the key hashing that composed
# fragment).  Without the variant, the fragment, key and tree are the
# KASAN kernel's as before.  ARBT_SAN_VARIANT=lockstat (issue 46) does the
# same with scripts/lockstat-kernel.config: lockdep with CONFIG_LOCK_STAT,
# for the mq bench's lock table (tests/bench/vm/run.sh).
#
#   scripts/sanitizer-kernel.sh [--check | --kernel-only]
#     --check        only say whether the kernel is built (exit 0/1)
#     --kernel-only  build the kernel if it is not cached, nothing else
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${ARBT_SANITIZER_CACHE:-/var/lib/arbtable/sanitizer}
FRAG=$ROOT/scripts/sanitizer-kernel.config
VARIANT=${ARBT_SAN_VARIANT:-}
case $VARIANT in
'' | kcsan | lockstat) ;;
*) echo "[sanitizer-kernel] unknown ARBT_SAN_VARIANT=$VARIANT (kcsan, lockstat or empty)" >&2; exit 1 ;;
esac
# the fragment configured: the file itself, or for a variant the base part
# of it followed by the variant's checkers
frag_text() {
	if [ -z "$VARIANT" ]; then
		cat "$FRAG"
	else
		sed '/^# --- the checkers/,$d' "$FRAG"
		cat "$ROOT/scripts/$VARIANT-kernel.config"
	fi
}
KSRC=${ARBT_SAN_KSRC:-7.2}
TARBALL=$(ls /usr/src/linux-source-"$KSRC"*.tar.xz 2>/dev/null | sort -V | tail -n1 || true)
# one job more than cores: a compile waiting on I/O leaves a core idle
JOBS=${JOBS:-$(($(nproc) + 1))}
say() { echo "[sanitizer-kernel] $*" >&2; }

case $(realpath -m "$CACHE")/ in
/tmp/* | /var/tmp/* | /var/cache/* | /run/*)
	say "ARBT_SANITIZER_CACHE=$CACHE: the guest sees a tmpfs there (virtme-init mounts one on /tmp, /var/tmp, /var/cache and /run); use a path elsewhere, such as the default /var/lib/arbtable/sanitizer"
	exit 1 ;;
esac

[ -n "$TARBALL" ] || { say "no /usr/src/linux-source-$KSRC*.tar.xz (scripts/setup.sh installs it)"; exit 1; }
ver=$(dpkg-query -W -f '${Version}' "linux-source-$KSRC" 2>/dev/null || stat -c %Y "$TARBALL")
key=$( { frag_text; echo "$ver"; } | sha256sum | cut -c1-16)
DIR=$CACHE/${VARIANT:+$VARIANT-}$key
SRC=$DIR/src
if [ "${1:-}" = --check ]; then
	[ -f "$DIR/.built" ] && { echo "$SRC"; exit 0; }
	say "not built (would be $DIR)"
	exit 1
fi
for t in flex bison bc cpio; do
	command -v $t >/dev/null || { say "missing $t (scripts/setup.sh installs the kernel build tools)"; exit 1; }
done

# Every option of the fragment must have taken: a missing dependency makes
# allnoconfig drop one without a word.
verify_config() {
	local l o v miss=
	while IFS= read -r l; do
		case $l in '#'* | '') continue ;; esac
		o=${l%%=*} v=${l#*=}
		if [ "$v" = n ]; then
			grep -q "^$o=" "$SRC/.config" && miss+=" $o(not off)"
		else
			grep -qx "$l" "$SRC/.config" || miss+=" $o"
		fi
	done <"$FRAG"
	[ -z "$miss" ] || { say "options not as asked after configuration:$miss"; return 1; }
}

# one build or module rebuild in a tree at a time (make test may have
# started the kernel's build in the background)
mkdir -p "$DIR"
if [ -n "$VARIANT" ]; then
	# the composed fragment, for allnoconfig and verify_config
	frag_text >"$DIR/fragment.config.tmp"
	cmp -s "$DIR/fragment.config.tmp" "$DIR/fragment.config" 2>/dev/null ||
		mv "$DIR/fragment.config.tmp" "$DIR/fragment.config"
	rm -f "$DIR/fragment.config.tmp"
	FRAG=$DIR/fragment.config
fi
exec 9>"$DIR/.lock"
flock 9
if [ ! -f "$DIR/.built" ]; then
	t0=$(date +%s)
	if [ ! -f "$DIR/.extracted" ]; then
		say "extracting $TARBALL into $DIR"
		rm -rf "$SRC" "$DIR/tmp"
		mkdir -p "$DIR/tmp"
		tar -C "$DIR/tmp" -xf "$TARBALL"
		mv "$DIR"/tmp/linux-source-"$KSRC"* "$SRC"
		rmdir "$DIR/tmp"
		touch "$DIR/.extracted"
	fi
	bash "$ROOT/scripts/intree-dropin.sh" "$SRC"
	say "configuring: allnoconfig + $(basename "$FRAG")"
	make -s -C "$SRC" allnoconfig KCONFIG_ALLCONFIG="$FRAG" >"$DIR/config.log" 2>&1 ||
		{ tail -n 20 "$DIR/config.log" >&2; exit 1; }
	verify_config
	say "building in $SRC ($JOBS jobs; cold on 2 cores: see Documentation/dev/testing.rst)"
	# progress: one line per ~500 objects, so a long cold build shows it moves
	make -C "$SRC" -j"$JOBS" 2>&1 | tee "$DIR/build.log" |
		awk '/^  CC/ { n++; if (n % 500 == 0) { printf "[sanitizer-kernel] %d objects compiled\n", n > "/dev/stderr" } }'
	[ "${PIPESTATUS[0]}" = 0 ] || { tail -n 40 "$DIR/build.log" >&2; exit 1; }
	# the single-target module build below rewrites these two for its one
	# module; vng's module directory (.virtme_mods) needs the whole list
	cp "$SRC/modules.order" "$DIR/modules.order"
	cp "$SRC/Module.symvers" "$DIR/Module.symvers"
	echo "$(($(date +%s) - t0))" >"$DIR/build-seconds"
	touch "$DIR/.built"
	say "built in $(cat "$DIR/build-seconds") s: $(make -s -C "$SRC" kernelrelease)"
fi

[ "${1:-}" = --kernel-only ] && { echo "$SRC"; exit 0; }

# The module from the current sources, in the tree, W=1 and -Werror.
t0=$(date +%s)
bash "$ROOT/scripts/intree-dropin.sh" "$SRC"
make -s -C "$SRC" olddefconfig >/dev/null
verify_config
if ! make -C "$SRC" -j"$JOBS" W=1 KCFLAGS=-Werror net/sched/sch_arbtable.ko >"$DIR/module.log" 2>&1; then
	tail -n 40 "$DIR/module.log" >&2
	say "in-tree build of net/sched/sch_arbtable.ko failed"
	exit 1
fi
cp "$DIR/modules.order" "$SRC/modules.order"
cp "$DIR/Module.symvers" "$SRC/Module.symvers"
say "net/sched/sch_arbtable.ko rebuilt in the tree ($(($(date +%s) - t0)) s)"

# The selftests where a kernel developer runs them.
sel=$SRC/tools/testing/selftests
rm -rf "$sel/arbtable"
cp -r "$ROOT/selftests/arbtable" "$sel/arbtable"
rm -rf "$sel/arbtable/bpf/"*.o 2>/dev/null || true
grep -q '^TARGETS += arbtable$' "$sel/Makefile" ||
	sed -i '0,/^TARGETS += /s//TARGETS += arbtable\n&/' "$sel/Makefile"
echo "$SRC"
