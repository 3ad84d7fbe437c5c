#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The newest kernel users run, as they run it: Debian's own 7.2 image
# (trixie-backports; setup.sh installs it, it installs on Debian 12) and a
# tree to build sch_arbtable for it as DKMS would on a trixie host.  Its
# headers package does not install here (linux-kbuild-7.2 needs glibc
# 2.38), so the tree is linux-source-7.2 (the same 7.2.12 upload)
# configured with the image's own /boot/config, prepared for external
# modules under the image's release string, with the Module.symvers of the
# headers package (dpkg -x of the downloaded .deb, never installed): the
# module built against it carries the image's vermagic and symbol CRCs
# and loads on the distro image.
#
# Cached under $ARBT_DISTRO_CACHE (default /var/lib/arbtable/distro-7.2),
# keyed by the image's and the source's versions; a second run checks.
#
#   scripts/distro-kernel.sh [--check]   prints the prepared tree's path
set -euo pipefail
KREL=${ARBT_DISTRO_KREL:-7.2.12+deb13-amd64}
CACHE=${ARBT_DISTRO_CACHE:-/var/lib/arbtable/distro-7.2}
JOBS=${JOBS:-$(($(nproc) + 1))}
say() { echo "[distro-kernel] $*" >&2; }

img=$(dpkg-query -W -f '${Version}' "linux-image-$KREL" 2>/dev/null || true)
srcver=$(dpkg-query -W -f '${Version}' linux-source-7.2 2>/dev/null || true)
[ -n "$img" ] && [ -r "/boot/config-$KREL" ] ||
	{ say "linux-image-$KREL is not installed (scripts/setup.sh installs it)"; exit 1; }
[ -n "$srcver" ] || { say "linux-source-7.2 is not installed (scripts/setup.sh installs it)"; exit 1; }
key="$KREL $img $srcver"
SRC=$CACHE/src
if [ -f "$CACHE/.ready" ] && [ "$(cat "$CACHE/.ready")" = "$key" ]; then
	echo "$SRC"
	exit 0
fi
[ "${1:-}" = --check ] && { say "not prepared (would be $SRC)"; exit 1; }
[ "$img" = "$srcver" ] || say "note: image $img, source $srcver (the module is built from the source's headers)"

t0=$(date +%s)
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9
rm -rf "$CACHE/src" "$CACHE/tmp" "$CACHE/hdr"
mkdir -p "$CACHE/tmp"
chmod 777 "$CACHE/tmp"	# apt-get download as _apt
say "extracting linux-source-7.2 ($srcver)"
tar -C "$CACHE/tmp" -xf /usr/src/linux-source-7.2.tar.xz
mv "$CACHE"/tmp/linux-source-7.2* "$SRC"
say "fetching linux-headers-$KREL (its Module.symvers; unpacked, not installed)"
(cd "$CACHE/tmp" && apt-get download -qq "linux-headers-$KREL=$img" >/dev/null) ||
	{ say "apt-get download linux-headers-$KREL=$img failed"; exit 1; }
dpkg-deb -x "$CACHE"/tmp/linux-headers-*.deb "$CACHE/hdr"
symvers=$CACHE/hdr/usr/src/linux-headers-$KREL/Module.symvers
[ -s "$symvers" ] || { say "no Module.symvers in linux-headers-$KREL"; exit 1; }
rm -rf "$CACHE/tmp"

say "configuring with /boot/config-$KREL, preparing for modules as $KREL"
cp "/boot/config-$KREL" "$SRC/.config"
# the image's signing key and trusted keys are not here: out-of-tree
# modules are unsigned (the kernel taints, as for any DKMS module)
"$SRC/scripts/config" --file "$SRC/.config" --set-str MODULE_SIG_KEY "" \
	--set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS "" \
	--disable MODULE_SIG_ALL
make -s -C "$SRC" KERNELRELEASE="$KREL" olddefconfig >"$CACHE/prepare.log" 2>&1 ||
	{ tail -n 20 "$CACHE/prepare.log" >&2; exit 1; }
make -C "$SRC" -j"$JOBS" KERNELRELEASE="$KREL" modules_prepare >>"$CACHE/prepare.log" 2>&1 ||
	{ tail -n 30 "$CACHE/prepare.log" >&2; exit 1; }
cp "$symvers" "$SRC/Module.symvers"
rel=$(cat "$SRC/include/config/kernel.release")
[ "$rel" = "$KREL" ] || { say "prepared release $rel, not $KREL"; exit 1; }
echo "$key" >"$CACHE/.ready"
say "prepared in $(($(date +%s) - t0)) s: $SRC ($rel)"
echo "$SRC"
