#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# In-tree check: drops sch_arbtable into net/sched of Debian's
# linux-source-<V> the way a patch for upstream would (sources in
# net/sched/, the uapi header in include/uapi/linux/, the Kconfig entry
# inside "if NET_SCHED", kernel/Makefile.intree in net/sched/Makefile),
# configures x86_64_defconfig + NET_SCH_ARBTABLE=m and builds only the
# module: `make net/sched/sch_arbtable.ko` (W=1, -Werror, objtool and
# modpost included) plus the exported uapi header.  No vmlinux is built.
#
#   scripts/intree-check.sh [V...]     default: 6.12 7.2
#
# For each kernel version V: linux-source-6.12 (bookworm-backports) and
# linux-source-7.2 (trixie-backports; scripts/setup.sh installs both into
# /usr/src).  It also builds the module for i386 (i386_defconfig in
# $OUT-i386): the 32-bit compile check.
# Each source tree is unpacked once into $CACHE/linux-source-<V> (reused;
# only our files are added to it, Kconfig/Makefile restored from saved
# originals each run, by scripts/intree-dropin.sh); objects go to
# $CACHE/linux-<V>-intree (O=) and $CACHE/linux-<V>-intree-i386.
# LINUX_SOURCE_TARBALL overrides the tarball when one V is given.
# Measured 2026-11-25 on 2 shared cores with other jobs beside it (load
# average 2.7-4.5), both versions: cold (no cache) 138 s (6.12 66 s,
# 7.2 72 s: 17 s unpack each, then config, prepare and the module for
# x86_64 and i386); warm (cache kept) 63 s (6.12 29 s, 7.2 34 s; 91 s in
# a more loaded run): the configs and prepare are re-checked each run.
# Each version's own time is printed after its checks.
# Ends with one "N passed, N failed" line for all versions.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${CACHE:-/var/cache/arbtable}
JOBS=${JOBS:-$(nproc)}
VERSIONS=("$@")
[ ${#VERSIONS[@]} -gt 0 ] || VERSIONS=(6.12 7.2)
if [ -n "${LINUX_SOURCE_TARBALL:-}" ] && [ ${#VERSIONS[@]} -ne 1 ]; then
	echo "intree-check: LINUX_SOURCE_TARBALL needs exactly one version argument" >&2
	exit 2
fi
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $V: $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $V: $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; fi; }
summary() { echo "intree-check: $pass passed, $fail failed ($((SECONDS))s; kernels ${VERSIONS[*]})"; [ "$fail" = 0 ]; }
log=$(mktemp /tmp/arbtable-intree.XXXXXX)
trap 'rm -f "$log"' EXIT
# step DESC CMD...: run quietly, show the log tail on failure
step() {
	local d=$1 t0=$SECONDS; shift
	if "$@" >"$log" 2>&1; then
		ok "$d ($((SECONDS - t0)) s)"
	else
		tail -n 40 "$log" | sed 's/^/    /'
		bad "$d"
		return 1
	fi
}

# intree V: every check against linux-source-V; returns early (the
# failure counted) when a later step cannot run
intree() {
	V=$1
	local t_start=$SECONDS
	local TARBALL SRC OUT K K32 ko ko32 vm top stamp
	TARBALL=${LINUX_SOURCE_TARBALL:-$(ls /usr/src/linux-source-"$V".tar.* 2>/dev/null | head -n1)}
	SRC=$CACHE/linux-source-$V
	OUT=$CACHE/linux-$V-intree

	# ------------------------------------------------------------ source
	# the stamp records the tarball it came from (name, size, mtime): a
	# new linux-source-V upload is unpacked afresh, with fresh objects
	if [ -z "$TARBALL" ]; then
		bad "linux-source-$V tarball in /usr/src (scripts/setup.sh installs it)"
		return 1
	fi
	stamp=$(stat -L -c '%n %s %Y' "$TARBALL")
	if [ "$(cat "$SRC/.arbtable-unpacked" 2>/dev/null)" != "$stamp" ]; then
		mkdir -p "$CACHE" && rm -rf "$SRC.tmp" "$SRC" "$OUT" "$OUT-i386" && mkdir "$SRC.tmp" ||
			{ bad "create $SRC"; return 1; }
		step "unpack $(basename "$TARBALL") into $SRC" tar -xf "$TARBALL" -C "$SRC.tmp" || return 1
		# the tarball's one top directory (linux-source-V)
		top=$(find "$SRC.tmp" -mindepth 1 -maxdepth 1 -type d)
		if [ "$(printf '%s\n' "$top" | wc -l)" != 1 ] || [ ! -f "$top/Makefile" ]; then
			bad "$(basename "$TARBALL") has one top directory with a kernel Makefile"
			return 1
		fi
		mv "$top" "$SRC" && rmdir "$SRC.tmp" && echo "$stamp" >"$SRC/.arbtable-unpacked"
	else
		ok "$(basename "$TARBALL") already unpacked in $SRC"
	fi

	# ----------------------------------------------------------- drop in
	# the same drop-in the sanitizer kernel uses (scripts/intree-dropin.sh)
	step "drop sources, uapi header, Kconfig entry and Makefile lines into net/sched" \
		bash "$ROOT/scripts/intree-dropin.sh" "$SRC" || return 1

	# ------------------------------------------------------------ config
	K=(make -C "$SRC" O="$OUT" -j"$JOBS")
	configure() {
		mkdir -p "$OUT" &&
		"${K[@]}" x86_64_defconfig &&
		"$SRC/scripts/config" --file "$OUT/.config" -e NET_SCHED -m NET_SCH_ARBTABLE &&
		"${K[@]}" olddefconfig
	}
	step "x86_64_defconfig + NET_SCH_ARBTABLE=m, make olddefconfig" configure || return 1
	check "Kconfig accepts NET_SCH_ARBTABLE=m (.config has CONFIG_NET_SCH_ARBTABLE=m)" \
		grep -qx 'CONFIG_NET_SCH_ARBTABLE=m' "$OUT/.config"
	# depends on NET_SCHED: a config without it must drop the entry
	nosched() {
		sed 's/^CONFIG_NET_SCHED=y/# CONFIG_NET_SCHED is not set/' "$OUT/.config" >"$OUT/.config.nosched" &&
		"${K[@]}" -s KCONFIG_CONFIG=.config.nosched olddefconfig &&
		! grep -q '^CONFIG_NET_SCH_ARBTABLE=' "$OUT/.config.nosched"
	}
	step "NET_SCH_ARBTABLE depends on NET_SCHED (gone from a config without it)" nosched

	# ------------------------------------------------------------- build
	# prepare = generated headers, scripts, objtool: the cost of a cold run.
	step "make prepare (cached in $OUT after the first run)" "${K[@]}" prepare || return 1
	rm -f "$OUT"/net/sched/arbtable_*.o "$OUT"/net/sched/sch_arbtable.*
	# Without vmlinux, modpost cannot resolve kernel symbols: warnings only.
	step "make W=1 KCFLAGS=-Werror net/sched/sch_arbtable.ko (in-tree build)" \
		"${K[@]}" W=1 KCFLAGS=-Werror KBUILD_MODPOST_WARN=1 net/sched/sch_arbtable.ko
	grep -E 'warning:|error:' "$log" | grep -v 'modpost: .*undefined\|vmlinux' | sed 's/^/    /'
	# (sch_arbtable.c, arbtable_*.[ch], the uapi and trace headers)
	check "build log has no compiler warnings for arbtable sources" \
		bash -c "! grep -E '[a-z_]*arbtable[a-z_]*\.[ch]:[0-9]+:[0-9]+: (warning|error)' '$log'"
	ko=$OUT/net/sched/sch_arbtable.ko
	check "net/sched/sch_arbtable.ko built" [ -f "$ko" ]
	if [ -f "$ko" ]; then
		vm=$(modinfo -F vermagic "$ko" 2>/dev/null)
		check "modinfo: name sch_arbtable, license GPL, vermagic $V ($vm)" \
			bash -c "[ \"\$(modinfo -F name '$ko')\" = sch_arbtable ] && [ \"\$(modinfo -F license '$ko')\" = GPL ] && [[ '$vm' == $V.* ]]"
		check "module registers the arbtable qdisc (register_qdisc referenced)" \
			bash -c "nm '$ko' | grep -q ' U register_qdisc'"
		# The composite object's files call each other through global
		# symbols (arbtable_qdisc.o -> arbtable_core.o): built in, those
		# are vmlinux's too, so none may be a name the tree uses elsewhere
		check "no global symbol of the module is a name used elsewhere in the tree" \
			no_clash "$ko"
	fi

	# -------------------------------------------------------------- i386
	# A 32-bit build: a 64-bit division without div64_u64() leaves a call to
	# libgcc's __udivdi3 (which the kernel does not have: checked below), and
	# code that assumes a 64-bit
	# long meets a 32-bit one. It does not catch a u64 passed to an unsigned
	# long helper (ffz() truncates silently): review does, as for the class
	# index, which uses __ffs64(~mask). Its own objects in
	# $OUT-i386; prepare is cached there too.
	K32=(make -C "$SRC" O="$OUT-i386" ARCH=i386 -j"$JOBS")
	configure32() {
		mkdir -p "$OUT-i386" &&
		"${K32[@]}" i386_defconfig &&
		"$SRC/scripts/config" --file "$OUT-i386/.config" -e NET_SCHED -m NET_SCH_ARBTABLE &&
		"${K32[@]}" olddefconfig &&
		grep -qx 'CONFIG_NET_SCH_ARBTABLE=m' "$OUT-i386/.config" &&
		! grep -q '^CONFIG_64BIT=y' "$OUT-i386/.config"
	}
	if step "i386_defconfig + NET_SCH_ARBTABLE=m (32-bit)" configure32 &&
		step "i386: make prepare" "${K32[@]}" prepare; then
		ko32=$OUT-i386/net/sched/sch_arbtable.ko
		rm -f "$OUT-i386"/net/sched/arbtable_*.o "$OUT-i386"/net/sched/sch_arbtable.*
		step "i386: make W=1 KCFLAGS=-Werror net/sched/sch_arbtable.ko" \
			"${K32[@]}" W=1 KCFLAGS=-Werror KBUILD_MODPOST_WARN=1 net/sched/sch_arbtable.ko
		check "i386: sch_arbtable.ko is a 32-bit module" \
			bash -c "file '$ko32' | grep -q 'ELF 32-bit'"
		# (a module that was not built is not a pass here)
		[ -f "$ko32" ] &&
			check "i386: no libgcc 64-bit division or modulo (__udivdi3, __umoddi3, ...) called" \
				bash -c "! nm '$ko32' | grep -E ' U __u?(div|mod)di3'"
	fi

	# -------------------------------------------------------------- uapi
	hdr() {
		"${K[@]}" headers >/dev/null &&
		[ -f "$OUT/usr/include/linux/pkt_sched_arbtable.h" ] &&
		echo '#include <linux/pkt_sched_arbtable.h>
int main(void) { struct tc_arbtable_xstats x = { 0 }; return (int)sizeof(x) * 0; }' |
			gcc -Wall -Werror -std=c99 -pedantic -isystem "$OUT/usr/include" -x c -o /dev/null -
	}
	step "make headers exports linux/pkt_sched_arbtable.h, which compiles alone in userspace (c99 -pedantic)" hdr
	echo "     $V: $((SECONDS - t_start)) s"
}

# The in-tree and out-of-tree object lists must agree (once: no kernel).
V=all
# no_clash KO: the module's own global functions and data, named
# nowhere in the kernel tree but in its own sources
no_clash() {
	local re hits
	re=$(nm "$1" | awk '$2 ~ /^[TDBR]$/ && $3 !~ /^(__|init_module$|cleanup_module$)/ { print $3 }' | paste -sd'|')
	[ -n "$re" ] || { echo "no global symbols read from $1"; return 1; }
	hits=$(grep -rlwE "$re" --include='*.[ch]' --include='*.S' "$SRC" 2>/dev/null |
		grep -vE '/net/sched/(arbtable_|sch_arbtable)|pkt_sched_arbtable\.h$|trace/events/arbtable\.h$')
	[ -z "$hits" ] || { echo "also named in: $hits"; return 1; }
}
objs() { grep -E "^(obj-|sch_arbtable-)" "$1" | sed "s/.*[:+]=//" | tr -s " \t" "\n" | grep . | sort; }
same_objs() {
	local a b
	a=$(objs "$ROOT/kernel/Makefile.intree") b=$(objs "$ROOT/kernel/Kbuild")
	[ -n "$a" ] || { echo "no objects in kernel/Makefile.intree"; return 1; }
	[ "$a" = "$b" ] || { diff <(echo "$a") <(echo "$b"); return 1; }
}
check "kernel/Makefile.intree and kernel/Kbuild list the same objects" same_objs

for v in "${VERSIONS[@]}"; do
	intree "$v"
done
summary
