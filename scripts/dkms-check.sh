#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# DKMS check: the source package that `make dkms-src` installs (kernel/,
# include/uapi/, dkms.conf) is added to DKMS and built and installed for
# every kernel whose headers are installed, through dkms.conf's MAKE line
# exactly as `dkms install` on a user's machine does.
#
#   scripts/dkms-check.sh [KVER...]     (default: every /usr/src/linux-headers-*-amd64)
#
# DKMS runs on private trees in a temp dir (--sourcetree, --dkmstree,
# --installtree, --no-depmod): /usr/src, /var/lib/dkms and /lib/modules are
# not touched, so a real installed sch-arbtable is never disturbed and two
# checks can run at once.  (dkms itself creates /var/lib/dkms/mok.key on
# its first build, as on any machine that uses it.)  Needs root for the
# dkms command's checks, and the dkms package.  Ends with "N passed, N failed".
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; fi; }
summary() { echo "dkms-check: $pass passed, $fail failed"; [ "$fail" = 0 ]; }

if ! command -v dkms >/dev/null; then
	bad "dkms installed (apt-get install dkms)"
	summary; exit
fi
kvers=("$@")
if [ ${#kvers[@]} -eq 0 ]; then
	for d in /usr/src/linux-headers-*-amd64; do
		[ -e "$d/Makefile" ] && kvers+=("${d#/usr/src/linux-headers-}")
	done
fi
[ ${#kvers[@]} -gt 0 ] || { bad "kernel headers installed"; summary; exit; }

name=$(sed -n 's/^PACKAGE_NAME="\(.*\)"/\1/p' "$ROOT/dkms.conf")
ver=$(cat "$ROOT/VERSION")
arch=$(uname -m)
tmp=$(mktemp -d /tmp/arbtable-dkms.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
src=$tmp/src
mkdir -p "$src" "$tmp/dkms" "$tmp/modules"
D=(dkms --sourcetree="$src" --dkmstree="$tmp/dkms" --installtree="$tmp/modules")
echo "dkms-check: $(dkms --version), $name $ver, kernels: ${kvers[*]}, private trees in $tmp"

check "dkms.conf names package sch-arbtable with the VERSION placeholder" \
	[ "$name" = sch-arbtable ] && [ -n "$ver" ] && grep -q '^PACKAGE_VERSION="@VERSION@"$' "$ROOT/dkms.conf"

# the source package, as `make dkms-src` lays it out
if ! make -s -C "$ROOT" --no-print-directory dkms-src DKMS_SRC_DIR="$src/$name-$ver" \
	ARBTABLE_VERSION="$ver" KVERS= >"$tmp/src.log" 2>&1; then
	sed 's/^/    /' "$tmp/src.log"
	bad "make dkms-src lays out $name-$ver"
	summary; exit
fi
ok "make dkms-src lays out $name-$ver ($(cd "$src/$name-$ver" && find . -type f | wc -l) files)"

if "${D[@]}" add -m "$name" -v "$ver" >"$tmp/add.log" 2>&1; then
	ok "dkms add $name/$ver"
else
	sed 's/^/    /' "$tmp/add.log"
	bad "dkms add $name/$ver"
	summary; exit
fi

for k in "${kvers[@]}"; do
	t0=$SECONDS
	if "${D[@]}" build -m "$name" -v "$ver" -k "$k" >"$tmp/build.log" 2>&1; then
		ok "$k: dkms build ($((SECONDS - t0)) s)"
	else
		sed 's/^/    /' "$tmp/build.log"
		log=$tmp/dkms/$name/$ver/build/make.log
		[ -f "$log" ] && tail -n 30 "$log" | sed 's/^/    make.log: /'
		bad "$k: dkms build"
		continue
	fi
	ko=$(ls "$tmp/dkms/$name/$ver/$k/$arch/module/"sch_arbtable.ko* 2>/dev/null | head -n1)
	check "$k: built module sch_arbtable.ko* in the DKMS tree" [ -n "$ko" ]
	[ -n "$ko" ] || continue
	vm=$(modinfo -F vermagic "$ko" 2>/dev/null)
	check "$k: vermagic '$vm' is for $k" [ "${vm%% *}" = "$k" ]
	check "$k: modinfo: name sch_arbtable, license GPL" \
		[ "$(modinfo -F name "$ko")" = sch_arbtable ] && [ "$(modinfo -F license "$ko")" = GPL ]
	mkdir -p "$tmp/modules/$k"
	if "${D[@]}" install --no-depmod -m "$name" -v "$ver" -k "$k" >"$tmp/install.log" 2>&1; then
		inst=$(ls "$tmp/modules/$k/updates/"{dkms/,}sch_arbtable.ko* 2>/dev/null | head -n1)
		check "$k: dkms install puts it in <installtree>/$k/updates/ (${inst#"$tmp/modules/$k/"})" [ -n "$inst" ]
	else
		sed 's/^/    /' "$tmp/install.log"
		bad "$k: dkms install"
	fi
	st=$("${D[@]}" status -m "$name" -v "$ver" -k "$k" 2>/dev/null)
	check "$k: dkms status says installed ($st)" grep -q 'installed' <<<"$st"
done

if "${D[@]}" remove -m "$name" -v "$ver" --all --no-depmod >"$tmp/remove.log" 2>&1 &&
	[ -z "$(ls "$tmp/modules"/*/updates/dkms/sch_arbtable.ko* 2>/dev/null)" ]; then
	ok "dkms remove --all leaves no module behind"
else
	sed 's/^/    /' "$tmp/remove.log"
	bad "dkms remove --all leaves no module behind"
fi
summary
